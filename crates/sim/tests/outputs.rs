//! Where `smartsim` writes: every output planned together before the run (not onto the scenario,
//! not onto another output, in the format its name says), one `wrote` line per file, and a quiet
//! end when the reader of standard output goes away.

mod common;
use common::{scratch, smartsim};

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SCENARIO: &str =
    "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"edf\"\n[[task]]\nname = \"A\"\n\
                        model = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\n";

/// A scratch directory with the scenario `s.toml`.
fn with_scenario(name: &str) -> (PathBuf, PathBuf) {
    let dir = scratch(name);
    let s = dir.join("s.toml");
    std::fs::write(&s, SCENARIO).unwrap();
    (dir, s)
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Runs `smartsim args`, expects a refusal (status 2) before the run that names each of `named`,
/// and checks that the scenario is intact and no other file appeared in `dir`.
fn refused(dir: &Path, args: &[&str], named: &[&str]) -> String {
    let before: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    let (code, out, err) = smartsim(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(out.is_empty(), "{args:?}: the run was made: {out}");
    for n in named {
        assert!(err.contains(n), "{args:?}: the message does not name {n:?}: {err}");
    }
    assert!(!err.contains("wrote"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("s.toml")).unwrap(), SCENARIO, "{args:?}");
    let after: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(before, after, "{args:?} left files behind");
    err
}

#[test]
fn outputs_onto_each_other_or_the_scenario_are_refused_before_the_run() {
    let (dir, s) = with_scenario("collide");
    let x = dir.join("x");
    let err =
        refused(&dir, &["run", p(&s), "--trace", p(&x), "--jobs", p(&x)], &["--trace", "--jobs", p(&x)]);
    assert!(err.contains("are the same file"), "{err}");
    let dotted = format!("{}/./s.toml", dir.display());
    let err = refused(&dir, &["run", p(&s), "--jobs", &dotted], &["--jobs", &dotted, "the scenario"]);
    assert!(err.contains("an output may not overwrite an input"), "{err}");
    let svg = dir.join("x.svg");
    refused(&dir, &["run", p(&s), "--svg", p(&svg), "--gantt", p(&svg)], &["--svg", "--gantt", "x.svg"]);
    // Through a symbolic link and a hard link.
    std::os::unix::fs::symlink(&s, dir.join("link.toml")).unwrap();
    std::fs::hard_link(&s, dir.join("hard.csv")).unwrap();
    let link = dir.join("link.toml");
    refused(&dir, &["run", p(&link), "--timeline", p(&dir.join("hard.csv"))], &["--timeline", "hard.csv"]);
    refused(&dir, &["run", p(&s), "--perfetto", p(&link)], &["--perfetto", "link.toml", "the scenario"]);
}

#[test]
fn trace_commands_do_not_write_onto_their_trace() {
    let (dir, s) = with_scenario("trace-collide");
    let t = dir.join("t.trace");
    let (code, _, err) = smartsim(&["run", p(&s), "--trace", p(&t)]);
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&t).unwrap();
    for cmd in ["gantt", "html", "perfetto"] {
        let (code, _, err) = smartsim(&["trace", cmd, p(&t), p(&t)]);
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(err.contains("OUT") && err.contains("t.trace"), "{cmd}: {err}");
    }
    std::os::unix::fs::symlink(&t, dir.join("t.svg")).unwrap();
    let (code, _, err) = smartsim(&["trace", "gantt", p(&t), p(&dir.join("t.svg"))]);
    assert!(code == 2 && err.contains("is the trace"), "{err}");
    assert_eq!(std::fs::read(&t).unwrap(), bytes, "the trace was changed");
}

#[test]
fn the_extension_chooses_the_format_of_svg_gantt_and_jobs_alike() {
    let (dir, s) = with_scenario("formats");
    let (g, f, j) = (dir.join("g.png"), dir.join("f.pdf"), dir.join("j.jsonl"));
    let (code, _, err) = smartsim(&["run", p(&s), "--gantt", p(&g), "--svg", p(&f), "--jobs", p(&j)]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read(&g).unwrap().starts_with(b"\x89PNG"), "--gantt g.png is not a PNG");
    assert!(std::fs::read(&f).unwrap().starts_with(b"%PDF"), "--svg f.pdf is not a PDF");
    let first = std::fs::read_to_string(&j).unwrap().lines().next().unwrap().to_string();
    let row: serde_json::Value = serde_json::from_str(&first).expect("--jobs j.jsonl holds JSON Lines");
    assert_eq!(row["task"], "A");
    // One line per file, in one shape.
    for (path, details) in [(&g, " stretches"), (&f, ""), (&j, "100 requests")] {
        let line = err.lines().find(|l| l.starts_with(&format!("wrote {}", path.display())));
        assert!(line.is_some_and(|l| l.contains(details)), "{err}");
    }
    // A name that says another format, and a --jobs-format that disagrees with the name, are refused.
    refused(
        &dir,
        &["run", p(&s), "--gantt", p(&dir.join("g.gif"))],
        &["--gantt", "g.gif", "unknown image format"],
    );
    refused(&dir, &["run", p(&s), "--jobs", p(&dir.join("j.png"))], &["--jobs", "j.png", "PNG"]);
    refused(
        &dir,
        &["run", p(&s), "--jobs", p(&dir.join("j.csv")), "--jobs-format", "jsonl"],
        &["--jobs-format jsonl", "--jobs", "j.csv", "disagree"],
    );
    refused(&dir, &["run", p(&s), "--trace", p(&dir.join("t.json"))], &["--trace", "t.json"]);
    // A format option decides for a name that says none.
    let plain = dir.join("jobs");
    let (code, _, err) = smartsim(&["run", p(&s), "--jobs", p(&plain), "--jobs-format", "jsonl"]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&plain).unwrap().starts_with('{'));
}

#[test]
fn a_missing_directory_is_refused_naming_the_option_and_the_file() {
    let (dir, s) = with_scenario("missing-dir");
    let bad = dir.join("no").join("such").join("t.trace");
    let err =
        refused(&dir, &["run", p(&s), "--trace", p(&bad)], &["--trace", "no/such/t.trace", "does not exist"]);
    assert!(err.starts_with("smartsim: "), "{err}");
    refused(&dir, &["reproduce", "smart-6.2.2.2", "--out", p(&s)], &["--out", "s.toml", "Not a directory"]);
}

/// Runs `smartsim args` from the repository's root with its standard output a pipe whose reader
/// has already gone, so that its first write fails as `| head` makes a later one fail.
fn with_closed_stdout(args: &[&str]) -> (std::process::ExitStatus, String) {
    let (reader, writer) = nix::unistd::pipe().expect("a pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_smartsim"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A quiet end: status 0 (or killed by SIGPIPE, as a C tool is), nothing about the pipe on stderr.
fn assert_quiet(args: &[&str], status: std::process::ExitStatus, err: &str) {
    assert!(status.success() || status.signal() == Some(13), "{args:?}: {status:?}: {err}");
    for bad in ["panicked", "Broken pipe", "os error 32"] {
        assert!(!err.contains(bad), "{args:?}: {err}");
    }
}

#[test]
fn a_closed_standard_output_ends_every_command_quietly() {
    let (dir, s) = with_scenario("closed");
    let t = dir.join("t.trace");
    assert_eq!(smartsim(&["run", p(&s), "--trace", p(&t)]).0, 0);
    let svg = dir.join("f.svg");
    let rtapp = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rtapp/periodic.json");
    for args in [
        vec!["policies"],
        vec!["run", p(&s)],
        vec!["run", p(&s), "--format", "json"],
        vec!["compare", p(&s), "--policies", "edf,smart"],
        vec!["trace", "report", p(&t)],
        vec!["trace", "billing", p(&t)],
        vec!["trace", "diff", p(&t), p(&t)],
        vec!["reproduce", "--list"],
        vec!["run", p(&s), "--svg", p(&svg)],
        vec!["import", "rt-app", rtapp],
    ] {
        let (status, err) = with_closed_stdout(&args);
        assert_quiet(&args, status, &err);
    }
    // The files are written before the results are printed: a closed pipe costs none.
    assert!(std::fs::read_to_string(&svg).unwrap().contains("</svg>"));
}

#[test]
fn a_reader_that_stops_after_the_first_bytes_ends_the_run_quietly() {
    let (_dir, s) = with_scenario("head");
    // 30,000 windows of 10 ms, a line each: far more than a pipe holds, so the run is still writing
    // when the reader goes.
    let long = s.with_file_name("long.toml");
    std::fs::write(&long, SCENARIO.replace("\"1s\"", "\"300s\"")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_smartsim"))
        .args(["run", p(&long), "--window", "10ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let mut stdout = child.stdout.take().unwrap();
    let mut head = [0u8; 64];
    stdout.read_exact(&mut head).expect("the first bytes");
    assert!(head.starts_with(b"scenario"), "{}", String::from_utf8_lossy(&head));
    drop(stdout);
    let out = child.wait_with_output().expect("ends");
    assert_quiet(&["run", "--window"], out.status, &String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_full_disk_under_standard_output_is_said_in_one_line_not_a_panic() {
    let out = Command::new(env!("CARGO_BIN_EXE_smartsim"))
        .arg("policies")
        .stdout(std::fs::File::create("/dev/full").expect("/dev/full"))
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err, "smartsim: writing standard output: No space left on device (os error 28)\n");
}

/// Runs `smartsim args` with its standard output `stdout`; its status and stderr.
fn with_stdout(args: &[&str], stdout: Stdio) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_smartsim"))
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn an_output_that_is_standard_output_is_refused_where_the_run_prints_its_results() {
    let (dir, s) = with_scenario("stdout");
    // A pipe, as `| xxd`: the trace and the table would interleave; the jobs and the JSON too.
    for (args, option) in [
        (vec!["run", p(&s), "--trace", "/dev/stdout"], "--trace /dev/stdout"),
        (vec!["run", p(&s), "--jobs", "/dev/stdout", "--format", "json"], "--jobs /dev/stdout"),
        (vec!["run", p(&s), "--perfetto", "/proc/self/fd/1"], "--perfetto /proc/self/fd/1"),
    ] {
        let (code, err) = with_stdout(&args, Stdio::piped());
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(&format!("{option} is standard output, where the run's")), "{err}");
    }
    // A file, as `> tr.out`, named by the option as it is or through /dev/stdout.
    let out = dir.join("tr.out");
    for via in [p(&out), "/dev/stdout"] {
        let f = std::fs::File::create(&out).unwrap();
        let (code, err) = with_stdout(&["run", p(&s), "--trace", via], Stdio::from(f));
        assert_eq!(code, 2, "{via}: {err}");
        assert!(err.contains("is standard output, where the run's table goes"), "{err}");
        assert_eq!(std::fs::read(&out).unwrap(), b"", "nothing is written");
    }
    // Where the command writes nothing else on standard output, it may go there; and /dev/null
    // (a character device) takes anything.
    let t = dir.join("t.trace");
    assert_eq!(smartsim(&["run", p(&s), "--trace", p(&t)]).0, 0);
    let (code, err) = with_stdout(&["trace", "gantt", p(&t), "/dev/stdout"], Stdio::piped());
    assert_eq!(code, 0, "{err}");
    let (code, err) = with_stdout(&["run", p(&s), "--trace", "/dev/null"], Stdio::null());
    assert_eq!(code, 0, "{err}");
}

#[test]
fn an_output_that_is_standard_error_is_refused_in_every_command() {
    // Every command writes its messages on standard error (`wrote`, warnings): `2> f` with an output
    // f would put them in the output's first bytes.
    let (dir, s) = with_scenario("stderr");
    let t = dir.join("t.trace");
    assert_eq!(smartsim(&["run", p(&s), "--trace", p(&t)]).0, 0);
    let err_file = dir.join("err.out");
    for (args, option) in [
        (vec!["run", p(&s), "--trace", p(&err_file)], "--trace"),
        (vec!["run", p(&s), "--gantt", "/dev/stderr"], "--gantt /dev/stderr"),
        (vec!["trace", "perfetto", p(&t), p(&err_file)], "err.out"),
        (
            vec![
                "import",
                "rt-app",
                concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rtapp/periodic.json"),
                "--out",
                p(&err_file),
            ],
            "--out",
        ),
    ] {
        let f = std::fs::File::create(&err_file).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_smartsim"))
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::from(f))
            .output()
            .expect("runs");
        let err = std::fs::read_to_string(&err_file).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(option) && err.contains("is standard error, where this tool's messages go"),
            "{err}"
        );
    }
}

#[test]
fn an_output_whose_reader_has_gone_ends_the_command_quietly() {
    let (dir, s) = with_scenario("closed-output");
    let t = dir.join("t.trace");
    assert_eq!(smartsim(&["run", p(&s), "--trace", p(&t)]).0, 0);
    for args in [
        vec!["trace", "perfetto", p(&t), "/dev/stdout"],
        vec!["trace", "gantt", p(&t), "/dev/stdout"],
        vec!["trace", "html", p(&t), "/dev/stdout"],
    ] {
        let (status, err) = with_closed_stdout(&args);
        assert_quiet(&args, status, &err);
    }
}
