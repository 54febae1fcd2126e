//! Command names as any process may set them (`prctl(PR_SET_NAME)`: up to 15 bytes, anything but
//! NUL) through every output of klogger that writes names: `report` and `billing` show them as a
//! terminal should (`report::escape::visible`: no control character raw), `report --format json`
//! keeps them exactly, and `html` is well-formed XML (read by `roxmltree`) showing each one.
//! No test here needs root: nothing is recorded.

use std::path::{Path, PathBuf};
use std::process::Command;

use klogger::format::{comm_str, Event, Header, Kind, LogWriter};
use report_crate::escape::{is_hidden, visible};

const BIN: &str = env!("CARGO_BIN_EXE_klogger");
const MS: u64 = 1_000_000;

/// The command names: escape sequences, markup, quotes, a right-to-left override, only spaces,
/// control characters, a C1 control (the 8-bit CSI), bytes that are not UTF-8, and `a`, `b`.
const COMMS: [&[u8]; 12] = [
    b"\x1b[2J\x1b[31mred",
    b"<script>x&amp;",
    b"]]>\"'",
    b"\xe2\x80\xaegpj.exe",
    b"au\xe2\x80\x8bdio\xef\xbb\xbf\xc2\xad",
    b"\xcd\x8f\xf3\xa0\x80\x81\xe3\x85\xa4\xee\x80\x80",
    b"   ",
    b"\x01\x02\x07\x08\x0b\x0c\x7f",
    b"\xc2\x9b2J",
    b"\xff\xfe bytes",
    b"a",
    b"b",
];

/// A recording in which the tasks of [`COMMS`] take turns on one CPU at 100 Hz, in 2 ms quanta;
/// returns it and the names as klogger reads them.
fn recording(d: &Path) -> (PathBuf, Vec<String>) {
    let mut w = LogWriter::new(Vec::new(), &Header::new("6.1\u{1b}[2J<b>", 1, Some(100))).unwrap();
    let mut names = Vec::new();
    for k in 0..200u64 {
        let (a, b) = (k as usize % COMMS.len(), (k as usize + 1) % COMMS.len());
        let mut e = Event::switch(k * 2 * MS, 0, (100 + a as u32, "x"), (100 + b as u32, "x"), k % 2);
        e.comm[..COMMS[a].len()].copy_from_slice(COMMS[a]);
        e.comm2[..COMMS[b].len()].copy_from_slice(COMMS[b]);
        if k < COMMS.len() as u64 {
            names.push(comm_str(&e.comm));
        }
        w.write(&e).unwrap();
    }
    w.write(&Event::new(401 * MS, 0, Kind::End)).unwrap();
    let k = d.join("k.klog");
    std::fs::write(&k, w.into_inner()).unwrap();
    (k, names)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("klogger-hostile-names-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `klogger args`, which must succeed: its stdout; nothing hidden on stderr.
fn ok(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "klogger {args:?}: {err}");
    no_raw_controls(&format!("stderr of {args:?}"), &err);
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn no_raw_controls(what: &str, text: &str) {
    if let Some((i, c)) = text.char_indices().find(|&(_, c)| c != '\n' && is_hidden(c)) {
        panic!("{what}: U+{:04X} raw at byte {i}", c as u32);
    }
}

#[test]
fn report_and_billing_show_command_names_visibly_and_json_exactly() {
    let d = scratch("text");
    let (k, names) = recording(&d);
    let k = k.to_str().unwrap();
    for args in
        [vec!["report", k, "--group", "thread"], vec!["report", k], vec!["billing", k, "--group", "thread"]]
    {
        let out = ok(&args);
        no_raw_controls(&format!("{args:?}"), &out);
        for n in names.iter().filter(|n| !n.trim().is_empty()) {
            // The task column is `name (pid)` cut to 28 characters.
            let v: String = visible(n).chars().take(20).collect();
            assert!(out.contains(&v), "{args:?} lacks {v:?}:\n{out}");
        }
    }
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["report", k, "--group", "thread", "--format", "json"])).unwrap();
    let back: Vec<&str> =
        v["tasks"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    for n in &names {
        assert!(back.contains(&n.as_str()), "JSON lacks {n:?}: {back:?}");
    }
    assert_eq!(v["kernel"], "6.1\u{1b}[2J<b>", "the header's kernel, exactly");
}

#[test]
fn the_html_report_is_well_formed_and_shows_every_command_name() {
    let d = scratch("html");
    let (k, names) = recording(&d);
    let out = d.join("k.html");
    ok(&["html", k.to_str().unwrap(), "-o", out.to_str().unwrap(), "--group", "thread", "--tasks", "20"]);
    let html = std::fs::read_to_string(&out).unwrap();
    no_raw_controls("html", &html);
    let xml = html
        .trim_start_matches("<!DOCTYPE html>\n")
        .replace("<br>", "<br/>")
        .replace("<meta charset=\"utf-8\">", "<meta charset=\"utf-8\"/>")
        .replace(
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>",
        );
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("not well-formed XML: {e}"));
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .map(|t| t.trim_matches('\n').into())
        .collect();
    for n in &names {
        let v = visible(n);
        assert!(texts.iter().any(|t| *t == v), "the task table lacks {v:?}");
        let label = format!("{v} (");
        assert!(texts.iter().any(|t| t.starts_with(&label)), "no figure or map names {label:?}");
    }
    assert!(texts.iter().any(|t| t.contains("Kernel 6.1\\x1b[2J<b>")), "the kernel, visible");
}
