//! Hostile names through every output of `smartsim` that writes names: the figures and Gantt
//! charts of a run (`--svg`, `--gantt`) of a scenario whose names the validator lets through, and
//! the reports of a trace and of a klogger recording whose names hold anything (`trace report`,
//! `diff`, `billing`, `html`, `gantt`, `perfetto`). Each SVG and HTML output is well-formed XML
//! (read by `roxmltree`) in which each name's visible form (`report::escape::visible`) is found;
//! no terminal output holds a control character raw; JSON and CSV keep the names exactly.
//! (`reproduce`'s page names only the dissertation's own tasks: no name from outside reaches it.)

mod common;

use std::path::Path;

use common::{scratch, smartsim};
use report::escape::{is_hidden, visible};
use trace::klog::{comm_str, Event, Header as KlogHeader, Kind, LogWriter};
use trace::{EndReason, Header, Outcome, Record, Source};

const MS: u64 = 1_000_000;

/// Names a trace may hold: every control character, markup, the end of a CDATA section, an entity,
/// quotes, code points XML forbids, a right-to-left override, only spaces, a very long name.
fn trace_names() -> Vec<String> {
    let controls: String = (1u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32).collect();
    vec![
        format!("all{controls}controls"),
        "evil\u{1b}[2J\u{1b}]0;title\u{7}".into(),
        "<script>alert(1)</script>".into(),
        "]]>".into(),
        "&amp; &lt;".into(),
        "\"double\" 'single'".into(),
        "nul\u{0}\u{8}\u{b}\u{c}\u{fffe}\u{ffff}".into(),
        "abc\u{202e}gpj.exe".into(),
        "au\u{200b}dio \u{feff}\u{ad}\u{34f}\u{e0001}\u{180e}\u{115f}\u{3164}\u{1d173}\u{e000}".into(),
        "   ".into(),
        "y".repeat(trace::MAX_TEXT),
        "audio ✓".into(),
    ]
}

/// Writes a trace of 2 CPUs in which each task of `names` runs, is released and misses every other
/// deadline.
fn write_trace(path: &Path, names: &[String]) {
    let h =
        Header::new(Source::Hourglass { kernel: "6.1\u{1b}[31m".into() }, 2, "CLOCK_MONOTONIC", 0, Some(100));
    let mut r = Vec::new();
    for (k, n) in names.iter().enumerate() {
        r.push(Record::Task { task: k as u32, process: 1, name: n.clone() });
    }
    // Job j of task k runs 0.4 ms from j × 10 ms + k × 0.5 ms on CPU k mod 2: each CPU runs one
    // task at a time, its runs written in time order (the reader refuses anything else).
    for j in 0..4u64 {
        for k in 0..names.len() {
            let t = k as u32;
            let at = j * 10 * MS + k as u64 * MS / 2;
            let cpu = (k % 2) as u32;
            r.push(Record::Release { task: t, job: j as u32, at, deadline: Some(at + 8 * MS) });
            r.push(Record::Wake { task: t, cpu: Some(cpu), at });
            let why = if j % 2 == 0 { EndReason::Preempted } else { EndReason::Blocked };
            r.push(Record::Run { task: t, cpu, start: at, end: at + 2 * MS / 5, why, complete: true });
            let outcome = if j % 2 == 0 { Outcome::Met } else { Outcome::Late };
            r.push(Record::JobEnd { task: t, job: j as u32, at: at + 9 * MS, outcome });
        }
    }
    r.push(Record::End { at: 50 * MS });
    trace::write_to(std::fs::File::create(path).unwrap(), &h, &r).unwrap();
}

/// Every text node (plotters' line breaks around its text trimmed) and attribute value of the
/// XML `xml`, which must be well-formed.
fn texts(what: &str, xml: &str) -> Vec<String> {
    let doc =
        roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("{what} is not well-formed XML: {e}"));
    let mut out = Vec::new();
    for n in doc.descendants() {
        if let Some(t) = n.text().filter(|_| n.is_text()) {
            out.push(t.trim_matches('\n').to_string());
        }
        out.extend(n.attributes().map(|a| a.value().to_string()));
    }
    out
}

/// The HTML page as XML (doctype dropped, void elements closed).
fn html_texts(what: &str, html: &str) -> Vec<String> {
    let xml = html
        .trim_start_matches("<!DOCTYPE html>\n")
        .replace("<br>", "<br/>")
        .replace("<meta charset=\"utf-8\">", "<meta charset=\"utf-8\"/>")
        .replace(
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>",
        );
    texts(what, &xml)
}

fn no_raw_controls(what: &str, text: &str) {
    if let Some((i, c)) = text.char_indices().find(|&(_, c)| c != '\n' && is_hidden(c)) {
        panic!("{what}: U+{:04X} raw at byte {i}", c as u32);
    }
}

/// `name`'s visible form is one of `texts` (or is in one of them, with `holds`).
fn shown(what: &str, texts: &[String], name: &str, holds: bool) {
    let v = visible(name);
    let found = texts.iter().any(|t| if holds { t.contains(v.as_ref()) } else { *t == v });
    assert!(found, "{what} does not show {v:?}");
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = smartsim(args);
    assert_eq!(code, 0, "smartsim {args:?}: {err}");
    no_raw_controls(&format!("stderr of {args:?}"), &err);
    out
}

#[test]
fn a_trace_of_hostile_names_reads_visibly_on_a_terminal_and_exactly_in_json() {
    let d = scratch("hostile-names-report");
    let t = d.join("t.trace");
    let names = trace_names();
    write_trace(&t, &names);
    let t = t.to_str().unwrap();
    for args in [
        vec!["trace", "report", t],
        vec!["trace", "report", t, "--window", "10ms"],
        vec!["trace", "diff", t, t],
        vec!["trace", "billing", t],
    ] {
        let out = ok(&args);
        no_raw_controls(&format!("{args:?}"), &out);
        for n in names.iter().filter(|n| !n.trim().is_empty() && n.len() < 100) {
            assert!(out.contains(visible(n).as_ref()), "{args:?} lacks {:?}:\n{out}", visible(n));
        }
    }
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["trace", "report", t, "--format", "json"])).unwrap();
    let back: Vec<&str> =
        json["tasks"].as_array().unwrap().iter().map(|x| x["name"].as_str().unwrap()).collect();
    for n in &names {
        assert!(back.contains(&n.as_str()), "JSON lacks {n:?}");
    }
    let p = d.join("p.json");
    ok(&["trace", "perfetto", t, p.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&read(&p)).expect("Perfetto JSON parses");
    for n in &names {
        let named = v["traceEvents"].as_array().unwrap().iter().any(|e| e["args"]["name"] == n.as_str());
        assert!(named, "Perfetto lacks {n:?}");
    }
}

#[test]
fn a_trace_of_hostile_names_draws_well_formed_html_and_svg() {
    let d = scratch("hostile-names-draw");
    let t = d.join("t.trace");
    let names = trace_names();
    write_trace(&t, &names);
    let (html, gantt) = (d.join("t.html"), d.join("g.svg"));
    ok(&["trace", "html", t.to_str().unwrap(), html.to_str().unwrap(), "--tasks", "20"]);
    ok(&["trace", "gantt", t.to_str().unwrap(), gantt.to_str().unwrap()]);
    let html = read(&html);
    no_raw_controls("trace html", &html);
    let page = html_texts("trace html", &html);
    let svg = read(&gantt);
    no_raw_controls("trace gantt", &svg);
    let chart = texts("trace gantt", &svg);
    for n in &names {
        shown("trace html", &page, n, false);
        shown("trace html", &page, &format!("{n} ("), true);
        shown("trace gantt", &chart, n, false);
    }
}

#[test]
fn a_recording_of_hostile_commands_draws_well_formed_html_and_svg() {
    let d = scratch("hostile-names-klog");
    // Command names as the kernel gives them: 15 bytes at most, any byte but NUL.
    let comms: Vec<&[u8]> = vec![
        b"\x1b[2J\x1b[31mred",
        b"<script>x&amp;",
        b"]]>\"'",
        b"\xe2\x80\xaegpj.exe",
        b"   ",
        b"\x01\x02\x07\x08\x0b\x0c\x7f",
        b"\xc2\x9b2J",
        b"\xff\xfe bytes",
    ];
    let mut w = LogWriter::new(Vec::new(), &KlogHeader::new("6.1\u{1b}[2J", 1, Some(100))).unwrap();
    let mut shown_names = Vec::new();
    for k in 0..40u64 {
        let (a, b) = (k as usize % comms.len(), (k as usize + 1) % comms.len());
        let mut e = Event::switch(k * MS, 0, (100 + a as u32, "x"), (100 + b as u32, "x"), k % 2);
        e.comm[..comms[a].len()].copy_from_slice(comms[a]);
        e.comm2[..comms[b].len()].copy_from_slice(comms[b]);
        shown_names.push(comm_str(&e.comm));
        w.write(&e).unwrap();
    }
    w.write(&Event::new(41 * MS, 0, Kind::End)).unwrap();
    let k = d.join("k.klog");
    std::fs::write(&k, w.into_inner()).unwrap();
    let (html, gantt) = (d.join("k.html"), d.join("g.svg"));
    ok(&["trace", "html", k.to_str().unwrap(), html.to_str().unwrap()]);
    ok(&["trace", "gantt", k.to_str().unwrap(), gantt.to_str().unwrap()]);
    let report = ok(&["trace", "report", k.to_str().unwrap()]);
    no_raw_controls("trace report of a recording", &report);
    let html = read(&html);
    no_raw_controls("trace html of a recording", &html);
    let page = html_texts("trace html of a recording", &html);
    let svg = read(&gantt);
    no_raw_controls("trace gantt of a recording", &svg);
    let chart = texts("trace gantt of a recording", &svg);
    for n in &shown_names {
        shown("trace html of a recording", &page, n, false);
        shown("trace gantt of a recording", &chart, n, false);
    }
}

#[test]
fn a_run_of_names_the_validator_lets_through_draws_well_formed_svg_and_exact_csv() {
    let d = scratch("hostile-names-run");
    // The validator refuses control characters and names of spaces, nothing else.
    let names = [
        "<script>alert(1)</script>".to_string(),
        "]]>".into(),
        "&amp;".into(),
        "\"q\" 'q'".into(),
        "abc\u{202e}gpj.exe".into(),
        "au\u{200b}dio \u{feff}\u{ad}\u{34f}\u{e0001}\u{180e}\u{115f}\u{3164}\u{1d173}\u{e000}".into(),
        "non\u{fffe}char".into(),
        "=1+1,\"a\"".into(),
        "z".repeat(255),
    ];
    let mut scn = String::from("[machine]\nduration = \"100ms\"\nhz = 0\n[scheduler]\npolicy = \"edf\"\n");
    for n in &names {
        let toml_name = serde_json::to_string(n).unwrap(); // a TOML basic string is a JSON string here
        scn += &format!(
            "[[task]]\nname = {toml_name}\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\n"
        );
    }
    let s = d.join("s.toml");
    std::fs::write(&s, scn).unwrap();
    let (fig, gantt, jobs, timeline) = (d.join("f.svg"), d.join("g.svg"), d.join("j.csv"), d.join("tl.csv"));
    let table = ok(&[
        "run",
        s.to_str().unwrap(),
        "--svg",
        fig.to_str().unwrap(),
        "--gantt",
        gantt.to_str().unwrap(),
        "--jobs",
        jobs.to_str().unwrap(),
        "--timeline",
        timeline.to_str().unwrap(),
    ]);
    no_raw_controls("run", &table);
    let fig = texts("--svg", &read(&fig));
    let chart = texts("--gantt", &read(&gantt));
    for n in &names {
        shown("--svg", &fig, n, false);
        shown("--gantt", &chart, n, false);
        assert!(table.contains(visible(n).as_ref()), "the run's table lacks {n:?}");
    }
    // CSV: the exact names, read back by a CSV reader.
    let mut r = csv::Reader::from_path(&jobs).unwrap();
    let tasks: std::collections::BTreeSet<String> = r.records().map(|x| x.unwrap()[0].to_string()).collect();
    assert_eq!(tasks, names.iter().cloned().collect());
    let mut r = csv::Reader::from_path(&timeline).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let want: Vec<String> =
        std::iter::once("time_s".to_string()).chain(names.iter().map(|n| format!("{n}_cpu_ms"))).collect();
    assert_eq!(head, want);
    assert!(r.records().all(|x| x.is_ok_and(|x| x.len() == want.len())));
}
