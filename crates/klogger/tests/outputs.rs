//! Where `klogger` writes: `export` and `html` never onto the recording they read (by name, `./`,
//! symbolic or hard link), in the format the name says, `record -o` checked before anything is
//! loaded; one `wrote` line per file; and a quiet end when the reader of standard output goes away.
//! No test here needs root: nothing is recorded.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use klogger::format::{Event, Header, Kind, LogWriter};

const BIN: &str = env!("CARGO_BIN_EXE_klogger");

/// A scratch directory with a recording `k.klog`: on one CPU at 100 Hz, `a` and `b` alternate in
/// 10 ms quanta for a second.
fn with_recording(name: &str) -> (PathBuf, PathBuf) {
    let d = std::env::temp_dir().join(format!("klogger-outputs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    const MS: u64 = 1_000_000;
    let mut w = LogWriter::new(Vec::new(), &Header::new("hand-made", 1, Some(100))).unwrap();
    let task = |k: u64| if k % 2 == 0 { (7, "a") } else { (8, "b") };
    for k in 0..=100u64 {
        w.write(&Event::switch(k * 10 * MS, 0, task(k + 1), task(k), 0)).unwrap();
    }
    w.write(&Event::new(1000 * MS, 0, Kind::End)).unwrap();
    let k = d.join("k.klog");
    std::fs::write(&k, w.into_inner()).unwrap();
    (d, k)
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Runs `klogger args`: exit status, stderr.
fn klogger(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(BIN).args(args).output().expect("runs");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Expects a refusal (status 2) naming each of `named`, the recording unchanged.
fn refused(k: &Path, args: &[&str], named: &[&str]) {
    let before = std::fs::read(k).unwrap();
    let (code, err) = klogger(args);
    assert_eq!(code, Some(2), "{args:?}: {err}");
    for n in named {
        assert!(err.contains(n), "{args:?}: the message does not name {n:?}: {err}");
    }
    assert_eq!(std::fs::read(k).unwrap(), before, "{args:?} changed the recording");
}

#[test]
fn export_and_html_never_write_onto_the_recording() {
    let (d, k) = with_recording("collide");
    let dotted = format!("{}/./k.klog", d.display());
    for out in [p(&k), &dotted] {
        refused(&k, &["export", p(&k), "-o", out], &["--output", out, "the recording"]);
        refused(&k, &["export", "--trace", p(&k), "-o", out], &["--output", "the recording"]);
        refused(&k, &["html", p(&k), "-o", out], &["--output", "the recording"]);
    }
    std::os::unix::fs::symlink(&k, d.join("link.json")).unwrap();
    std::fs::hard_link(&k, d.join("hard.trace")).unwrap();
    refused(&k, &["export", "--perfetto", p(&k), "-o", p(&d.join("link.json"))], &["link.json", "k.klog"]);
    refused(&k, &["export", "--trace", p(&k), "-o", p(&d.join("hard.trace"))], &["hard.trace", "k.klog"]);
    // The recording given through its link, the output by the recording's own name.
    refused(&k, &["html", p(&d.join("link.json")), "-o", &dotted], &["--output", "link.json"]);
}

#[test]
fn the_name_of_the_output_agrees_with_what_is_written() {
    let (d, k) = with_recording("formats");
    refused(
        &k,
        &["export", "--trace", p(&k), "-o", p(&d.join("x.json"))],
        &["--trace", "x.json", "disagree"],
    );
    refused(&k, &["export", "--perfetto", p(&k), "-o", p(&d.join("x.trace"))], &["--perfetto", "x.trace"]);
    refused(&k, &["html", p(&k), "-o", p(&d.join("r.svg"))], &["--output", "r.svg", "HTML"]);
    refused(&k, &["record", "-o", p(&d.join("r.trace"))], &["--output", "r.trace", "klogger recording"]);
    refused(&k, &["record", "-o", p(&d.join("no/r.klog"))], &["--output", "no/r.klog", "does not exist"]);
    // Without --trace or --perfetto the extension chooses; each file is said in one line.
    for (name, magic, details) in [("x.trace", &b"SMTRACE\0"[..], " records)"), ("x.json", b"{", "")] {
        let out = d.join(name);
        let (code, err) = klogger(&["export", p(&k), "-o", p(&out)]);
        assert_eq!(code, Some(0), "{err}");
        let head = std::fs::read(&out).unwrap();
        assert!(head.starts_with(magic), "{name}: {:?}", String::from_utf8_lossy(&head[..8]));
        let line = format!("wrote {}", out.display());
        assert!(err.lines().any(|l| l.starts_with(&line) && l.ends_with(details)), "{err}");
    }
    let html = d.join("r.html");
    let (code, err) = klogger(&["html", p(&k), "-o", p(&html)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.lines().any(|l| l == format!("wrote {}", html.display())), "{err}");
}

/// Runs `klogger args` with its standard output a pipe whose reader has already gone, so that its
/// first write fails as `| head` makes a later one fail.
fn with_closed_stdout(args: &[&str]) -> (ExitStatus, String) {
    let (reader, writer) = nix::unistd::pipe().expect("a pipe");
    drop(reader);
    let out = Command::new(BIN)
        .args(args)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_closed_standard_output_ends_every_command_quietly() {
    let (_d, k) = with_recording("closed");
    for args in [
        vec!["--help"],
        vec!["report", p(&k)],
        vec!["report", p(&k), "--format", "json"],
        vec!["billing", p(&k)],
        vec!["billing", p(&k), "--format", "json"],
    ] {
        let (status, err) = with_closed_stdout(&args);
        assert!(status.success() || status.signal() == Some(13), "{args:?}: {status:?}: {err}");
        for bad in ["panicked", "Broken pipe", "os error 32"] {
            assert!(!err.contains(bad), "{args:?}: {err}");
        }
    }
}
