//! One vocabulary (issue 33, deliverable 9): one run with requests of every outcome (met, late,
//! discarded, aborted, unfinished) read through every output that counts them: `smartsim run` (its
//! JSON and its table), `--jobs` (CSV and JSON Lines), `trace report` (JSON and table), `trace diff`
//! (the trace against itself), and the HTML report of `trace html`. Every count agrees with every
//! other, and missed is late + discarded + aborted everywhere. The terms are defined where they are
//! printed, as docs/glossary.md defines them.

mod common;
use common::{scratch, smartsim};

use std::collections::BTreeMap;
use std::path::Path;

/// One CPU overloaded: a task that discards (SMART notifies it), one that aborts at its deadline,
/// one that finishes late, and a hog. `late` starts 3 ms in with a 30 ms deadline, so its last
/// request is open at the end with its deadline beyond it (unfinished); `aborts` releases its last
/// request at 990 ms, due after the end.
const SCENARIO: &str = r#"
[machine]
duration = "1s"
[scheduler]
policy = "smart"
[[task]]
name = "discards"
model = "periodic"
exec = "5ms..9ms"
period = "20ms"
on_miss = "discard"
[[task]]
name = "aborts"
model = "periodic"
exec = "4ms..8ms"
period = "15ms"
on_miss = "abort"
[[task]]
name = "late"
model = "periodic"
exec = "6ms..12ms"
period = "25ms"
deadline = "30ms"
start = "3ms"
on_miss = "finish"
[[task]]
name = "hog"
model = "cpu"
"#;

/// The five outcomes, then the two totals: every count the outputs share.
const OUTCOMES: [&str; 5] = ["met", "late", "discarded", "aborted", "unfinished"];
const COUNTS: [&str; 7] = ["requests", "met", "missed", "late", "discarded", "aborted", "unfinished"];

type Counts = BTreeMap<String, BTreeMap<&'static str, u64>>;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn run(args: &[&str]) -> String {
    let (code, out, err) = smartsim(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// The counts of a JSON object holding the seven keys, per task of `tasks` that has one at `at`.
fn from_json(tasks: &serde_json::Value, at: impl Fn(&serde_json::Value) -> &serde_json::Value) -> Counts {
    let mut c = Counts::new();
    for t in tasks.as_array().unwrap() {
        let o = at(t);
        if o.is_null() || o["requests"].as_u64() == Some(0) {
            continue;
        }
        let row =
            COUNTS.iter().map(|k| (*k, o[*k].as_u64().unwrap_or_else(|| panic!("{k} in {o}")))).collect();
        c.insert(t["name"].as_str().unwrap().to_string(), row);
    }
    c
}

/// The counts of per-request rows (task, outcome), with the totals derived as the glossary says.
fn from_rows<'a>(rows: impl Iterator<Item = (&'a str, &'a str)>) -> Counts {
    let mut c = Counts::new();
    for (task, outcome) in rows {
        assert!(OUTCOMES.contains(&outcome), "outcome {outcome:?}");
        let row = c.entry(task.to_string()).or_insert_with(|| COUNTS.iter().map(|k| (*k, 0)).collect());
        *row.get_mut(outcome).unwrap() += 1;
        *row.get_mut("requests").unwrap() += 1;
        if matches!(outcome, "late" | "discarded" | "aborted") {
            *row.get_mut("missed").unwrap() += 1;
        }
    }
    c
}

/// The counts of a text table for people: columns found by their header, cells without spaces.
fn from_text(table: &str) -> Counts {
    let mut lines = table.lines().skip_while(|l| !l.starts_with("task "));
    let head: Vec<&str> =
        lines.next().unwrap().split("  ").map(str::trim).filter(|h| !h.is_empty()).collect();
    assert!(lines.next().unwrap().starts_with("----"));
    let mut c = Counts::new();
    for l in lines.take_while(|l| !l.is_empty() && !l.contains(':') && !l.starts_with("idle ")) {
        let cells: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(cells.len(), head.len(), "{l}");
        let col =
            |k: &str| head.iter().position(|h| *h == k).unwrap_or_else(|| panic!("no column {k}: {head:?}"));
        if cells[col("requests")] == "-" || cells[col("requests")] == "0" {
            continue;
        }
        let row = COUNTS.iter().map(|k| (*k, cells[col(k)].parse().unwrap())).collect();
        c.insert(cells[0].to_string(), row);
    }
    c
}

/// The counts of the HTML report's "Requests" table.
fn from_html(page: &str) -> Counts {
    let at = page.find(">Requests<").expect("a Requests section");
    let body = &page[at..];
    let body = &body[body.find("<thead>").unwrap()..body.find("</tbody>").unwrap()];
    let cells = |row: &str, tag: &str| -> Vec<String> {
        row.split(&format!("<{tag}"))
            .skip(1)
            .map(|c| c[c.find('>').unwrap() + 1..c.find(&format!("</{tag}>")).unwrap()].to_string())
            .collect()
    };
    let mut rows = body.split("<tr>").skip(1);
    let head = cells(rows.next().unwrap(), "th");
    let mut c = Counts::new();
    for r in rows {
        let cells = cells(r, "td");
        let col = |k: &str| head.iter().position(|h| h == k).unwrap_or_else(|| panic!("no column {k}"));
        let row = COUNTS.iter().map(|k| (*k, cells[col(k)].parse().unwrap())).collect();
        c.insert(cells[0].clone(), row);
    }
    c
}

#[test]
fn every_output_counts_every_outcome_the_same() {
    let dir = scratch("vocabulary");
    let scn = dir.join("s.toml");
    std::fs::write(&scn, SCENARIO).unwrap();
    let (tr, csv, jsonl, html) =
        (dir.join("t.trace"), dir.join("j.csv"), dir.join("j.jsonl"), dir.join("t.html"));

    // smartsim run: JSON, with the trace and the jobs; the table; the jobs as JSON Lines.
    let out = run(&["run", s(&scn), "--format", "json", "--trace", s(&tr), "--jobs", s(&csv)]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let run_json = from_json(&v["tasks"], |t| &t["deadlines"]);
    let run_table = run(&["run", s(&scn)]);
    run(&["run", s(&scn), "--jobs", s(&jsonl)]);

    // The run has every outcome, and its own counts add up: the five outcomes to the requests,
    // late + discarded + aborted to the missed.
    for o in OUTCOMES {
        assert!(run_json.values().any(|t| t[o] > 0), "no {o} request in the run: {run_json:?}");
    }
    for (name, t) in &run_json {
        assert_eq!(OUTCOMES.iter().map(|o| t[o]).sum::<u64>(), t["requests"], "{name}");
        assert_eq!(t["late"] + t["discarded"] + t["aborted"], t["missed"], "{name}");
    }
    assert_eq!(run_json.len(), 3, "the three periodic tasks: {run_json:?}");
    assert_eq!(run_json.values().map(|t| t["requests"]).sum::<u64>(), v["system"]["jobs"].as_u64().unwrap());

    // --jobs, CSV and JSON Lines.
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let (ti, oi) = (0, head.iter().position(|h| *h == "outcome").unwrap());
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let jobs_csv = from_rows(rows.iter().map(|r| (r[ti], r[oi])));
    let jl: Vec<serde_json::Value> =
        std::fs::read_to_string(&jsonl).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let jobs_jsonl =
        from_rows(jl.iter().map(|r| (r["task"].as_str().unwrap(), r["outcome"].as_str().unwrap())));

    // trace report: JSON and table.
    let rep: serde_json::Value =
        serde_json::from_str(&run(&["trace", "report", s(&tr), "--format", "json"])).unwrap();
    let report_json = from_json(&rep["tasks"], |t| &t["requests"]);
    let report_table = run(&["trace", "report", s(&tr)]);

    // trace diff: the trace against itself, both sides.
    let d: serde_json::Value =
        serde_json::from_str(&run(&["trace", "diff", s(&tr), s(&tr), "--format", "json"])).unwrap();
    let diff_a = from_json(&d["tasks"], |t| &t["a"]["requests"]);
    let diff_b = from_json(&d["tasks"], |t| &t["b"]["requests"]);
    for t in d["tasks"].as_array().unwrap() {
        for side in ["a", "b"] {
            assert_eq!(t[side]["met"], t[side]["requests"]["met"], "{t}");
            assert_eq!(t[side]["missed"], t[side]["requests"]["missed"], "{t}");
        }
        assert_eq!((t["delta"]["met"].as_i64(), t["delta"]["missed"].as_i64()), (Some(0), Some(0)));
    }

    // trace diff against a second policy: EDF, with the discarding task left to on_miss's default
    // (EDF never notifies: its requests finish late). Each side counts as its own run.
    let (scn2, tr2) = (dir.join("edf.toml"), dir.join("edf.trace"));
    std::fs::write(&scn2, SCENARIO.replacen("on_miss = \"discard\"\n", "", 1)).unwrap();
    let v2: serde_json::Value = serde_json::from_str(&run(&[
        "run",
        s(&scn2),
        "--policy",
        "edf",
        "--format",
        "json",
        "--trace",
        s(&tr2),
    ]))
    .unwrap();
    let run2_json = from_json(&v2["tasks"], |t| &t["deadlines"]);
    assert_ne!(run2_json, run_json, "two policies, two schedules");
    let d2: serde_json::Value =
        serde_json::from_str(&run(&["trace", "diff", s(&tr), s(&tr2), "--format", "json"])).unwrap();
    assert_eq!(from_json(&d2["tasks"], |t| &t["a"]["requests"]), run_json, "trace diff A (smart)");
    assert_eq!(from_json(&d2["tasks"], |t| &t["b"]["requests"]), run2_json, "trace diff B (edf)");
    for t in d2["tasks"].as_array().unwrap() {
        let delta = |k: &str| t["b"][k].as_i64().unwrap() - t["a"][k].as_i64().unwrap();
        assert_eq!(
            (t["delta"]["met"].as_i64().unwrap(), t["delta"]["missed"].as_i64().unwrap()),
            (delta("met"), delta("missed")),
            "{t}"
        );
    }

    // The HTML report.
    run(&["trace", "html", s(&tr), s(&html)]);
    let page = std::fs::read_to_string(&html).unwrap();
    let html_counts = from_html(&page);

    for (what, c) in [
        ("run table", from_text(&run_table)),
        ("--jobs CSV", jobs_csv),
        ("--jobs JSON Lines", jobs_jsonl),
        ("trace report JSON", report_json),
        ("trace report table", from_text(&report_table)),
        ("trace diff A", diff_a),
        ("trace diff B", diff_b),
        ("trace html", html_counts),
    ] {
        assert_eq!(c, run_json, "{what} against run --format json");
    }

    // Each term is defined where it is printed: the tables' footers, the report's glossary, and
    // docs/glossary.md, word for word as trace::summary::GLOSSARY has it.
    let glossary =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/glossary.md")).unwrap();
    for (term, def) in trace::summary::GLOSSARY {
        assert!(glossary.contains(def), "docs/glossary.md lacks the definition of {term}");
        assert!(page.contains(&report::escape::markup(def)), "the HTML glossary lacks {term}");
    }
    let def = |t: &str| trace::summary::GLOSSARY.iter().find(|(k, _)| *k == t).unwrap().1;
    for t in ["requests", "met", "missed", "late", "discarded", "aborted", "unfinished", "wake→dispatch"] {
        assert!(run_table.contains(&format!("{t}: {}", def(t))), "run's footer lacks {t}");
    }
    for t in ["blocked", "preempted", "slice end", "wake→run", "missed", "unfinished"] {
        assert!(report_table.contains(&format!("{t}: {}", def(t))), "trace report's footer lacks {t}");
    }
    let diff_table = run(&["trace", "diff", s(&tr), s(&tr)]);
    for t in ["missed", "late", "wake→run"] {
        assert!(diff_table.contains(&format!("{t}: {}", def(t))), "trace diff's footer lacks {t}");
    }
    // The latencies are named apart: the run's table says wake→dispatch, the trace's wake→run.
    assert!(run_table.contains("wake→dispatch p50 ms") && !run_table.contains("wake→run p50"));
    assert!(report_table.contains("wake→run p50 ms") && !report_table.contains("wake→dispatch p50"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_request_never_dispatched_has_no_start_and_one_dropped_at_its_first_dispatch_starts_as_it_ends() {
    // The convention of `start_ns` (docs/glossary.md): the first dispatch, empty if none.
    let dir = scratch("vocabulary-start");
    let scn = dir.join("s.toml");
    std::fs::write(&scn, SCENARIO).unwrap();
    let jsonl = dir.join("j.jsonl");
    run(&["run", s(&scn), "--jobs", s(&jsonl)]);
    let rows: Vec<serde_json::Value> =
        std::fs::read_to_string(&jsonl).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut seen = BTreeMap::<(&str, bool), u64>::new();
    for r in &rows {
        let o = r["outcome"].as_str().unwrap();
        let (start, finish, cpu) = (r["start_ns"].as_u64(), r["finish_ns"].as_u64(), r["cpu"].as_u64());
        // A CPU exactly when a start; a start never after the finish.
        assert_eq!(start.is_some(), cpu.is_some(), "{r}");
        if let (Some(s), Some(f)) = (start, finish) {
            assert!(s <= f, "{r}");
        }
        match o {
            "met" => assert!(start.is_some() && finish.is_some(), "{r}"),
            "unfinished" => assert!(finish.is_none(), "{r}"),
            "discarded" => assert!(finish.is_some() && start.is_some(), "dropped at a dispatch: {r}"),
            _ => {}
        }
        *seen.entry((o, start.is_none())).or_default() += 1;
    }
    // Both kinds occur in this run: aborted requests never dispatched, discarded ones dropped at
    // the dispatch where their task heard of the notification (start = finish).
    assert!(seen.get(&("aborted", true)).is_some_and(|n| *n > 0), "{seen:?}");
    assert!(
        rows.iter().any(|r| r["outcome"] == "discarded" && r["start_ns"] == r["finish_ns"]),
        "no request discarded at its dispatch"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
