//! `smartsim run --jobs` and `--gantt` against an EDF schedule worked out by hand, and the Gantt
//! options' refusals.
//!
//! The task set (one CPU, tickless, exact timers, no overheads, implicit deadlines):
//!
//! | task | C    | T     | U     |
//! |------|------|-------|-------|
//! | T1   | 1 ms | 4 ms  | 0.250 |
//! | T2   | 2 ms | 6 ms  | 0.333 |
//! | T3   | 3 ms | 12 ms | 0.250 |
//!
//! U = 0.833, hyperperiod 12 ms; every job is done by 10 ms, so [12, 24) repeats [0, 12) shifted.
//! EDF by hand over the first hyperperiod (times in ms; "d" = absolute deadline):
//!
//! | t  | event                                       | runs                       |
//! |----|---------------------------------------------|----------------------------|
//! | 0  | T1.0 (d4), T2.0 (d6), T3.0 (d12) released   | T1.0 (earliest, d4) 0–1    |
//! | 1  | T1.0 done                                   | T2.0 (d6) 1–3              |
//! | 3  | T2.0 done                                   | T3.0 (d12) 3–4             |
//! | 4  | T1.1 (d8) released: d8 < d12, preempts T3.0 | T1.1 4–5                   |
//! | 5  | T1.1 done; T3.0 has 2 ms left               | T3.0 5–7                   |
//! | 6  | T2.1 (d12) released: ties T3.0's d12        | T3.0 goes on (no preemption on a tie) |
//! | 7  | T3.0 done (preempted once)                  | T2.1 (d12) 7–9             |
//! | 8  | T1.2 (d12) released: ties T2.1's d12        | T2.1 goes on               |
//! | 9  | T2.1 done                                   | T1.2 9–10                  |
//! | 10 | T1.2 done                                   | idle 10–12                 |
//!
//! The two equal-deadline ties (at 6 and 8 ms) are between the running job and one released later:
//! a newcomer preempts only with a strictly earlier deadline, and first come first served by
//! release (the rule for ties among waiting jobs, preempted ones included) would pick the running,
//! earlier-released job too, so the schedule does not depend on how ties among waiting jobs break.
//!
//! The overloaded variant makes T3 need 6 ms (U = 1.083) and aborts requests at their deadline; run
//! for 25 ms:
//!
//! | t  | runs / event                                                                 |
//! |----|------------------------------------------------------------------------------|
//! | 0–5 | as above: T1.0 0–1, T2.0 1–3, T3.0 3–4, T1.1 4–5                            |
//! | 5  | T3.0 (d12, 5 ms left) 5–10; T2.1 (d12, at 6) and T1.2 (d12, at 8) tie, wait |
//! | 10 | T3.0 done (met); T2.1 and T1.2 both d12: T2.1 released first, runs 10–12 (met) |
//! | 12 | T1.2 aborted at its deadline, never run: a miss                              |
//! | 12–24 | the same again: T1.3 12–13, T2.2 13–15, T3.1 15–16 and 17–22 (T1.4 16–17), T2.3 22–24 (met at 24), T1.5 aborted at 24: a miss |
//! | 24 | T1.6 runs 24–25, cut by the end of the run                                   |
//!
//! Here the tie at 10 ms is between two waiting jobs, T2.1 (released at 6) and T1.2 (at 8); both
//! "first come first served by when it became ready" and "by release" pick T2.1.

use std::collections::BTreeMap;
use std::path::PathBuf;
mod common;
use common::smartsim;

const MS: u64 = 1_000_000;

fn dir(name: &str) -> PathBuf {
    common::scratch(&format!("gantt-{name}"))
}

/// The task set of the module's table; `t3` is T3's execution time, `extra` more keys for every task.
fn scenario(duration: &str, t3: &str, extra: &str) -> String {
    format!(
        "[machine]\nduration = \"{duration}\"\nhz = 0\n[scheduler]\npolicy = \"edf\"\n\
         [[task]]\nname = \"T1\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"4ms\"\n{extra}\n\
         [[task]]\nname = \"T2\"\nmodel = \"periodic\"\nexec = \"2ms\"\nperiod = \"6ms\"\n{extra}\n\
         [[task]]\nname = \"T3\"\nmodel = \"periodic\"\nexec = \"{t3}\"\nperiod = \"12ms\"\n{extra}\n"
    )
}

/// The SVG's elements of `class`, each as its data attributes.
fn marks(svg: &str, class: &str) -> Vec<BTreeMap<String, String>> {
    let doc = roxmltree::Document::parse(svg).expect("the chart is well-formed XML");
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .map(|n| {
            n.attributes()
                .filter(|a| a.name().starts_with("data-"))
                .map(|a| (a.name().to_string(), a.value().to_string()))
                .collect()
        })
        .collect()
}

/// (task, start, end) of the chart's task-row bars, sorted.
fn bars(svg: &str) -> Vec<(String, u64, u64)> {
    let mut v: Vec<(String, u64, u64)> = marks(svg, "run")
        .iter()
        .map(|b| {
            (b["data-task"].clone(), b["data-start-ns"].parse().unwrap(), b["data-end-ns"].parse().unwrap())
        })
        .collect();
    v.sort();
    v
}

/// (task, job, at) of the chart's marks of `class`, sorted.
fn instants(svg: &str, class: &str) -> Vec<(String, u32, u64)> {
    let mut v: Vec<(String, u32, u64)> = marks(svg, class)
        .iter()
        .map(|m| (m["data-task"].clone(), m["data-job"].parse().unwrap(), m["data-at-ns"].parse().unwrap()))
        .collect();
    v.sort();
    v
}

/// A request of the hand schedule: task, job, release, start, finish, deadline, exec (ms), preemptions.
type Job = (&'static str, u64, u64, u64, u64, u64, u64, u32);

fn ms_bars(list: &[(&str, u64, u64)]) -> Vec<(String, u64, u64)> {
    let mut v: Vec<(String, u64, u64)> =
        list.iter().map(|&(t, s, e)| (t.to_string(), s * MS, e * MS)).collect();
    v.sort();
    v
}

/// (task, job, at) of the releases (or, with `deadline`, of the implicit deadlines, a period after
/// them) of periodic tasks (name, period in ms) at or before `until` ms, sorted.
fn periodic(tasks: &[(&str, u64)], until: u64, deadline: bool) -> Vec<(String, u32, u64)> {
    let mut v = Vec::new();
    for &(t, period) in tasks {
        for k in 0u64.. {
            let at = if deadline { (k + 1) * period } else { k * period };
            if at > until {
                break;
            }
            v.push((t.to_string(), k as u32, at * MS));
        }
    }
    v.sort();
    v
}

#[test]
fn jobs_and_gantt_hold_the_hand_computed_edf_schedule() {
    let d = dir("edf");
    let scn = d.join("edf3.toml");
    std::fs::write(&scn, scenario("24ms", "3ms", "")).unwrap();
    let (csv, svg) = (d.join("jobs.csv"), d.join("gantt.svg"));
    let (code, _, err) = smartsim(&[
        "run",
        scn.to_str().unwrap(),
        "--jobs",
        csv.to_str().unwrap(),
        "--gantt",
        svg.to_str().unwrap(),
        "--gantt-window",
        "0s..24ms",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("gantt.svg (14 stretches, 0 missed deadlines drawn)"), "{err}");

    // (a) The per-request rows: task, job, cpu, release, start, finish, deadline, exec, outcome,
    // preemptions (ms), from the tables above; the second hyperperiod is the first shifted by 12 ms.
    let first: [Job; 6] = [
        // task, job, release, start, finish, deadline, exec, preemptions
        ("T1", 0, 0, 0, 1, 4, 1, 0),
        ("T1", 1, 4, 4, 5, 8, 1, 0),
        ("T1", 2, 8, 9, 10, 12, 1, 0),
        ("T2", 0, 0, 1, 3, 6, 2, 0),
        ("T2", 1, 6, 7, 9, 12, 2, 0),
        ("T3", 0, 0, 3, 7, 12, 3, 1),
    ];
    let mut hand: Vec<String> = Vec::new();
    for shift in [0u64, 12] {
        for &(t, job, rel, start, fin, dl, exec, pre) in &first {
            let jobs_per_hyperperiod = 12 / dl.saturating_sub(rel);
            let job = job + if shift > 0 { jobs_per_hyperperiod } else { 0 };
            let ns = |v: u64| ((v + shift) * MS).to_string();
            hand.push(format!(
                "{t},{job},0,{},{},{},{},{},met,{pre}",
                ns(rel),
                ns(start),
                ns(fin),
                ns(dl),
                exec * MS
            ));
        }
    }
    hand.sort();
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("task,job,cpu,release_ns,start_ns,finish_ns,deadline_ns,exec_ns,outcome,preemptions")
    );
    let mut rows: Vec<String> = lines.map(String::from).collect();
    rows.sort();
    assert_eq!(rows, hand);

    // (b) The chart: exactly the hand schedule's bars, every release and deadline, no miss.
    let svg = std::fs::read_to_string(&svg).unwrap();
    let hand_bars =
        [("T1", 0, 1), ("T2", 1, 3), ("T3", 3, 4), ("T1", 4, 5), ("T3", 5, 7), ("T2", 7, 9), ("T1", 9, 10)];
    let both: Vec<(&str, u64, u64)> = hand_bars
        .iter()
        .chain(hand_bars.iter())
        .enumerate()
        .map(|(k, &(t, s, e))| {
            let shift = if k >= hand_bars.len() { 12 } else { 0 };
            (t, s + shift, e + shift)
        })
        .collect();
    assert_eq!(bars(&svg), ms_bars(&both));
    let tasks = [("T1", 4), ("T2", 6), ("T3", 12)];
    // Releases at 0..=20 ms (the run makes none at its end, 24 ms); deadlines at 4..=24 ms.
    assert_eq!(instants(&svg, "release"), periodic(&tasks, 23, false));
    assert_eq!(instants(&svg, "deadline"), periodic(&tasks, 24, true));
    assert!(marks(&svg, "miss").is_empty());
    // One CPU: no CPU rows; the rows are the three tasks, named at the left.
    assert!(marks(&svg, "cpu-run").is_empty());
    for t in ["T1", "T2", "T3"] {
        assert!(svg.contains(&format!(">{t}<title>{t}</title></text>")), "{t}");
    }

    // A window inside the run clips the bars at its edges: 4.5..8.5 ms cuts T1.1 (4-5) and T2.1 (7-9).
    let (code, _, err) = smartsim(&[
        "run",
        scn.to_str().unwrap(),
        "--gantt",
        d.join("w.svg").to_str().unwrap(),
        "--gantt-window",
        "4.5ms..8.5ms",
    ]);
    assert_eq!(code, 0, "{err}");
    let w = std::fs::read_to_string(d.join("w.svg")).unwrap();
    let us = |t: &str, s: u64, e: u64| (t.to_string(), s * 1000, e * 1000);
    assert_eq!(bars(&w), vec![us("T1", 4500, 5000), us("T2", 7000, 8500), us("T3", 5000, 7000)]);
    assert_eq!(
        instants(&w, "release").iter().map(|r| (r.0.as_str(), r.2 / 1000)).collect::<Vec<_>>(),
        [("T1", 8000), ("T2", 6000)]
    );
    assert_eq!(
        instants(&w, "deadline").iter().map(|r| (r.0.as_str(), r.2 / 1000)).collect::<Vec<_>>(),
        [("T1", 8000), ("T2", 6000)]
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn an_overloaded_edf_run_has_its_misses_crossed_out() {
    let d = dir("over");
    let scn = d.join("over.toml");
    std::fs::write(&scn, scenario("25ms", "6ms", "on_miss = \"abort\"")).unwrap();
    let (csv, svg, tr) = (d.join("jobs.csv"), d.join("gantt.svg"), d.join("run.trace"));
    let (code, _, err) = smartsim(&[
        "run",
        scn.to_str().unwrap(),
        "--jobs",
        csv.to_str().unwrap(),
        "--trace",
        tr.to_str().unwrap(),
        "--gantt",
        svg.to_str().unwrap(),
        "--gantt-window",
        "0s..24ms",
    ]);
    assert_eq!(code, 0, "{err}");
    // The requests of the hand schedule: task, job, release, start, finish, deadline, outcome,
    // preemptions (ms; "-" none). T3's requests are preempted once each, at 4 and 16 ms, by T1's
    // earlier deadlines; T1's last request runs 24-25 ms and ends with the run: done, met.
    let hand = [
        ("T1", 0, "0", "0", "1", "4", "met", 0),
        ("T1", 1, "4", "4", "5", "8", "met", 0),
        ("T1", 2, "8", "-", "12", "12", "aborted", 0),
        ("T1", 3, "12", "12", "13", "16", "met", 0),
        ("T1", 4, "16", "16", "17", "20", "met", 0),
        ("T1", 5, "20", "-", "24", "24", "aborted", 0),
        ("T1", 6, "24", "24", "25", "28", "met", 0),
        ("T2", 0, "0", "1", "3", "6", "met", 0),
        ("T2", 1, "6", "10", "12", "12", "met", 0),
        ("T2", 2, "12", "13", "15", "18", "met", 0),
        ("T2", 3, "18", "22", "24", "24", "met", 0),
        ("T2", 4, "24", "-", "-", "30", "unfinished", 0),
        ("T3", 0, "0", "3", "10", "12", "met", 1),
        ("T3", 1, "12", "15", "22", "24", "met", 1),
        ("T3", 2, "24", "-", "-", "36", "unfinished", 0),
    ];
    let ns = |v: &str| if v == "-" { String::new() } else { (v.parse::<u64>().unwrap() * MS).to_string() };
    let mut want: Vec<String> = hand
        .iter()
        .map(|&(t, j, r, s, f, dl, o, p)| format!("{t},{j},{},{},{},{},{o},{p}", ns(r), ns(s), ns(f), ns(dl)))
        .collect();
    want.sort();
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut got: Vec<String> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            // task, job, release, start, finish, deadline, outcome, preemptions
            [f[0], f[1], f[3], f[4], f[5], f[6], f[8], f[9]].join(",")
        })
        .collect();
    got.sort();
    assert_eq!(got, want);

    let chart = std::fs::read_to_string(&svg).unwrap();
    let hand_bars = [
        ("T1", 0, 1),
        ("T2", 1, 3),
        ("T3", 3, 4),
        ("T1", 4, 5),
        ("T3", 5, 10),
        ("T2", 10, 12),
        ("T1", 12, 13),
        ("T2", 13, 15),
        ("T3", 15, 16),
        ("T1", 16, 17),
        ("T3", 17, 22),
        ("T2", 22, 24),
    ];
    assert_eq!(bars(&chart), ms_bars(&hand_bars));
    // The two aborted requests of T1, crossed out at their deadlines (12 ms, and 24 ms on the
    // window's right edge); the met ones are not.
    assert_eq!(
        instants(&chart, "miss"),
        vec![("T1".to_string(), 2, 12 * MS), ("T1".to_string(), 5, 24 * MS)]
    );
    assert!(err.contains("gantt.svg (12 stretches, 2 missed deadlines drawn)"), "{err}");

    // `trace gantt` draws the same chart from the run's trace.
    let again = d.join("again.svg");
    let (code, _, err) =
        smartsim(&["trace", "gantt", tr.to_str().unwrap(), again.to_str().unwrap(), "--window", "0s..24ms"]);
    assert_eq!(code, 0, "{err}");
    let again = std::fs::read_to_string(&again).unwrap();
    assert_eq!(bars(&again), bars(&chart));
    for class in ["release", "deadline", "miss"] {
        assert_eq!(instants(&again, class), instants(&chart, class), "{class}");
    }
    // Its default window is the whole trace when it is shorter than 200 ms: up to 25 ms, where T1.6
    // is cut by the end of the run.
    let whole = d.join("whole.svg");
    let (code, _, err) = smartsim(&["trace", "gantt", tr.to_str().unwrap(), whole.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let whole = std::fs::read_to_string(&whole).unwrap();
    assert!(whole.contains("data-from-ns=\"0\" data-to-ns=\"25000000\""), "{}", &whole[..300]);
    let mut all = hand_bars.to_vec();
    all.push(("T1", 24, 25));
    assert_eq!(bars(&whole), ms_bars(&all));
    // And `trace html` holds a Gantt chart of the trace.
    let html = d.join("t.html");
    let (code, _, err) = smartsim(&["trace", "html", tr.to_str().unwrap(), html.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Gantt chart") && page.contains("class=\"miss\""), "the page has the chart");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn bad_gantt_windows_are_refused_before_the_run() {
    let d = dir("refuse");
    let scn = d.join("s.toml");
    std::fs::write(&scn, scenario("24ms", "3ms", "")).unwrap();
    let out = d.join("g.svg");
    for (window, says) in [
        ("5ms..5ms", "must end after it starts"),
        ("10ms..5ms", "must end after it starts"),
        ("0..5ms", "unit"),
        ("0s-5ms", "FROM..TO"),
        ("1s..2s", "the run lasts 24ms"),
        ("0s..25ms", "the run lasts 24ms"),
        ("0s..abc", "abc"),
    ] {
        let (code, _, err) = smartsim(&[
            "run",
            scn.to_str().unwrap(),
            "--gantt",
            out.to_str().unwrap(),
            "--gantt-window",
            window,
        ]);
        assert_eq!(code, 2, "{window}: {err}");
        assert!(err.contains(says), "{window}: {err}");
        assert!(!out.exists(), "{window}: nothing written");
    }
    // A window without a chart, and a chart into a missing directory.
    let (code, _, err) = smartsim(&["run", scn.to_str().unwrap(), "--gantt-window", "0s..1ms"]);
    assert_eq!(code, 2);
    assert!(err.contains("--gantt"), "{err}");
    let (code, _, err) =
        smartsim(&["run", scn.to_str().unwrap(), "--gantt", d.join("no/such/g.svg").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("no/such/g.svg"), "{err}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn reproduce_shows_the_first_200ms_of_each_run_as_run_gantt_draws_it() {
    let d = dir("repro");
    let out = d.join("out");
    let (code, _, err) = smartsim(&["reproduce", "smart-6.2.3.1-fig6-6", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    let start = page.find("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1000\"").expect("a Gantt chart");
    let end = start + page[start..].find("</svg>").unwrap() + "</svg>".len();
    let in_page = &page[start..end];
    assert!(in_page.contains("data-from-ns=\"0\" data-to-ns=\"200000000\""));
    // The chart of the page (the run simulated again up to 200 ms) has the bars of the whole run's
    // chart over its default window, the first 200 ms.
    let svg = d.join("run.svg");
    let (code, _, err) =
        smartsim(&["run", "scenarios/papers/smart-6.2.3.1-fig6-6.toml", "--gantt", svg.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let whole = std::fs::read_to_string(&svg).unwrap();
    assert!(whole.contains("data-from-ns=\"0\" data-to-ns=\"200000000\""));
    let b = bars(in_page);
    assert!(b.iter().any(|x| x.0 == "R1") && b.iter().any(|x| x.0 == "C1"), "{b:?}");
    assert_eq!(b, bars(&whole));
    for class in ["release", "deadline", "miss"] {
        assert_eq!(instants(in_page, class), instants(&whole, class), "{class}");
    }
    std::fs::remove_dir_all(&d).ok();
}
