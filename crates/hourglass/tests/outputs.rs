//! Where `hourglass` writes: `--trace` and `--perfetto` (and `analyze render --output`) planned
//! together before the run, not onto each other nor onto the scenario or the trace read; one
//! `wrote` line per file; and a quiet end when the reader of standard output goes away. Real runs
//! here last 100 ms.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_hourglass");

const SCENARIO: &str =
    "[machine]\nduration = \"100ms\"\n[scheduler]\npolicy = \"fair\"\n[[task]]\nname = \"A\"\n\
                        model = \"cpu\"\n";

/// An empty scratch directory of its own for the test `name`, with the scenario `s.toml`.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hourglass-outputs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("s.toml"), SCENARIO).unwrap();
    d
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Runs `hourglass args`: exit status, stdout, stderr.
fn hourglass(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(BIN).args(args).output().expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Expects a refusal (status 2, nothing run or printed) naming each of `named`; the scenario is
/// intact and no file appeared.
fn refused(dir: &Path, args: &[&str], named: &[&str]) {
    let before = std::fs::read_dir(dir).unwrap().count();
    let (code, out, err) = hourglass(args);
    assert_eq!(code, Some(2), "{args:?}: {err}");
    assert!(out.is_empty() && !err.contains("running"), "{args:?}: it ran: {err}");
    for n in named {
        assert!(err.contains(n), "{args:?}: the message does not name {n:?}: {err}");
    }
    assert_eq!(std::fs::read_to_string(dir.join("s.toml")).unwrap(), SCENARIO);
    assert_eq!(std::fs::read_dir(dir).unwrap().count(), before, "{args:?} left a file");
}

#[test]
fn outputs_onto_each_other_or_the_inputs_are_refused_before_the_run() {
    let dir = scratch("collide");
    let x = dir.join("x");
    refused(
        &dir,
        &["-n", "1", "-d", "100ms", "--trace", p(&x), "--perfetto", p(&x)],
        &["--trace", "--perfetto"],
    );
    let s = dir.join("s.toml");
    let dotted = format!("{}/./s.toml", dir.display());
    refused(&dir, &["--scenario", p(&s), "--trace", &dotted], &["--trace", &dotted, "the scenario"]);
    std::os::unix::fs::symlink(&s, dir.join("s.json")).unwrap();
    refused(&dir, &["--scenario", p(&s), "--perfetto", p(&dir.join("s.json"))], &["--perfetto", "s.json"]);
    refused(&dir, &["-n", "1", "--trace", p(&dir.join("t.json"))], &["--trace", "t.json", "JSON"]);
    refused(&dir, &["-n", "1", "--trace", p(&dir.join("no/t.trace"))], &["--trace", "no/t.trace"]);
    refused(&dir, &["-n", "1", "--perfetto", p(&dir)], &["--perfetto", "Is a directory"]);
}

#[test]
fn a_run_writes_each_file_and_says_so_in_one_line() {
    let dir = scratch("write");
    let (t, j) = (dir.join("t.trace"), dir.join("p.json"));
    let (code, out, err) = hourglass(&["-n", "1", "-d", "100ms", "--trace", p(&t), "--perfetto", p(&j)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.is_empty());
    assert!(err.contains(&format!("\nwrote {} (", t.display())), "{err}");
    assert!(err.contains(&format!("\nwrote {} (", j.display())), "{err}");
    assert!(std::fs::read(&t).unwrap().len() > 16 && std::fs::read(&j).unwrap().starts_with(b"{"));
    // analyze render onto the trace it reads is refused; to a PNG it writes a PNG.
    let (code, _, err) = hourglass(&["analyze", "render", p(&t), "-o", p(&t)]);
    assert!(code == Some(2) && err.contains("--output") && err.contains("is the trace"), "{err}");
    let png = dir.join("map.png");
    let (code, _, err) = hourglass(&["analyze", "render", p(&t), "-o", p(&png)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    assert!(err.lines().any(|l| l == format!("wrote {}", png.display())), "{err}");
}

/// Runs `hourglass args` with its standard output a pipe whose reader has already gone, so that
/// its first write fails as `| head` makes a later one fail.
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
    let dir = scratch("closed");
    let t = dir.join("t.trace");
    for args in [
        vec!["--help"],
        vec!["--version"],
        vec!["-n", "1", "-d", "100ms", "--trace", p(&t)],
        vec!["-n", "1", "-d", "100ms", "--format", "json"],
        vec!["analyze", "render", p(&t)],
        vec!["analyze", "ctx", p(&t)],
        vec!["analyze", "--help"],
    ] {
        let (status, err) = with_closed_stdout(&args);
        assert!(status.success() || status.signal() == Some(13), "{args:?}: {status:?}: {err}");
        for bad in ["panicked", "Broken pipe", "os error 32"] {
            assert!(!err.contains(bad), "{args:?}: {err}");
        }
    }
    // The trace was written before the results were printed.
    assert!(std::fs::metadata(&t).unwrap().len() > 16);
}
