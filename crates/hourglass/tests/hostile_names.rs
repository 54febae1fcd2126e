//! Names from a trace or from hourglass JSON through `hourglass analyze render`, the one hourglass
//! output that writes names: the execution map is well-formed XML (read by `roxmltree`) whose row
//! labels show each name as `report::escape::visible` does, on stdout and in an `.svg` file alike;
//! and an error quoting a line of hostile input reaches the terminal without a control character.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use report::escape::{is_hidden, visible};
use trace::{EndReason, Header, Record, Source};

const BIN: &str = env!("CARGO_BIN_EXE_hourglass");
const MS: u64 = 1_000_000;

fn names() -> Vec<String> {
    let controls: String = (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32).collect();
    vec![
        format!("all{controls}controls"),
        "<script>alert(1)</script>".into(),
        "]]>&amp;\"'".into(),
        "nul\u{0}\u{fffe}\u{ffff}".into(),
        "abc\u{202e}gpj.exe".into(),
        "au\u{200b}dio \u{feff}\u{ad}\u{34f}\u{e0001}\u{180e}\u{115f}\u{3164}\u{1d173}\u{e000}".into(),
        "   ".into(),
        "w".repeat(trace::MAX_TEXT),
    ]
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hourglass-hostile-names-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn hourglass(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("runs")
}

fn no_raw_controls(what: &str, text: &str) {
    if let Some((i, c)) = text.char_indices().find(|&(_, c)| c != '\n' && is_hidden(c)) {
        panic!("{what}: U+{:04X} raw at byte {i}", c as u32);
    }
}

/// Checks that `svg` is well-formed and that a row label shows each of `labels`' visible form.
fn check_map(what: &str, svg: &str, labels: &[String]) {
    no_raw_controls(what, svg);
    let doc =
        roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{what} is not well-formed XML: {e}"));
    let texts: Vec<&str> =
        doc.descendants().filter(|n| n.has_tag_name("text")).filter_map(|n| n.text()).collect();
    for l in labels {
        let v = visible(l);
        assert!(texts.iter().any(|t| t.starts_with(v.as_ref())), "{what} lacks {v:?}");
    }
}

fn write_trace(path: &Path, names: &[String]) {
    let h = Header::new(Source::Hourglass { kernel: "k".into() }, 1, "CLOCK_MONOTONIC", 0, None);
    let mut r: Vec<Record> = names
        .iter()
        .enumerate()
        .map(|(k, n)| Record::Task { task: k as u32, process: 1, name: n.clone() })
        .collect();
    for k in 0..names.len() as u64 {
        let start = k * 5 * MS;
        r.push(Record::Run {
            task: k as u32,
            cpu: 0,
            start,
            end: start + 4 * MS,
            why: EndReason::Blocked,
            complete: true,
        });
    }
    trace::write_to(std::fs::File::create(path).unwrap(), &h, &r).unwrap();
}

#[test]
fn the_execution_map_of_a_trace_of_hostile_names_is_well_formed() {
    let d = scratch("trace");
    let t = d.join("t.trace");
    let names = names();
    write_trace(&t, &names);
    let out = hourglass(&["analyze", "render", t.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    check_map("render to stdout", &String::from_utf8(out.stdout).unwrap(), &names);
    let svg = d.join("map.svg");
    let out = hourglass(&["analyze", "render", t.to_str().unwrap(), "-o", svg.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    check_map("render -o map.svg", &std::fs::read_to_string(&svg).unwrap(), &names);
}

#[test]
fn the_execution_map_of_hourglass_json_with_hostile_names_is_well_formed() {
    let d = scratch("json");
    let names = names();
    let tasks: Vec<serde_json::Value> = names
        .iter()
        .enumerate()
        .map(|(k, n)| serde_json::json!({"id": k, "name": n, "sched": "fifo\u{1b}", "workload": "<w>", "miss_at_ns": [k as u64 * MS]}))
        .collect();
    let trace: Vec<serde_json::Value> = (0..names.len() as u64)
        .map(|k| serde_json::json!({"thread": k, "start_ns": k * 5 * MS, "end_ns": k * 5 * MS + 4 * MS}))
        .collect();
    let j = d.join("run.json");
    std::fs::write(&j, serde_json::json!({"tasks": tasks, "trace": trace}).to_string()).unwrap();
    let out = hourglass(&["analyze", "render", j.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let labels: Vec<String> = names.iter().map(|n| format!("{n} (fifo\u{1b}, <w>)")).collect();
    check_map("render of JSON", &String::from_utf8(out.stdout).unwrap(), &labels);
}

#[test]
fn an_error_quoting_a_hostile_line_reaches_the_terminal_visibly() {
    let d = scratch("error");
    let p = d.join("paper.txt");
    std::fs::write(&p, "0 1.0 2.0 1.0 0.0\n\u{1b}[2J\u{1b}]0;pwned\u{7} x y\n").unwrap();
    let out = hourglass(&["analyze", "render", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    no_raw_controls("stderr", &err);
    assert!(err.contains("paper.txt:2") && err.contains("\\x1b[2J\\x1b]0;pwned\\x07"), "{err}");
}
