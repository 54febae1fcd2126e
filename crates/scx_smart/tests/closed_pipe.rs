//! `scx_smart` and the test programs end quietly when the reader of their standard output has gone
//! (`smart-pingpong | head`). Nothing here needs sched_ext or root: the programs run without a
//! scheduler to register with, and `scx_smart` only prints its help.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// Runs `bin args` with its standard output a pipe whose reader has already gone, so that its first
/// write fails as `| head` makes a later one fail; checks a quiet end: status 0 (or killed by
/// SIGPIPE, as a C program is), nothing about the pipe on stderr.
fn ends_quietly(bin: &str, args: &[&str]) {
    let (reader, writer) = nix::unistd::pipe().expect("a pipe");
    drop(reader);
    let out = Command::new(bin)
        .args(args)
        .env("SMART_SOCKET", "/nonexistent/smart.sock")
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() || out.status.signal() == Some(13),
        "{bin} {args:?}: {:?}: {err}",
        out.status
    );
    for bad in ["panicked", "Broken pipe", "os error 32"] {
        assert!(!err.contains(bad), "{bin} {args:?}: {err}");
    }
}

#[test]
fn scx_smart_and_the_test_programs_end_quietly_on_a_closed_pipe() {
    ends_quietly(env!("CARGO_BIN_EXE_scx_smart"), &["--help"]);
    ends_quietly(env!("CARGO_BIN_EXE_scx_smart"), &["--version"]);
    ends_quietly(env!("CARGO_BIN_EXE_smart-pingpong"), &["--rounds", "100"]);
    ends_quietly(env!("CARGO_BIN_EXE_smart-pingpong"), &["--help"]);
    ends_quietly(env!("CARGO_BIN_EXE_smart-hog"), &["--seconds", "0.1"]);
    ends_quietly(env!("CARGO_BIN_EXE_smart-hog"), &["--help"]);
    ends_quietly(
        env!("CARGO_BIN_EXE_smart-periodic"),
        &["--no-smart", "--count", "3", "--work", "1", "--period", "5", "--deadline", "5"],
    );
    ends_quietly(env!("CARGO_BIN_EXE_smart-periodic"), &["--help"]);
    ends_quietly(env!("CARGO_BIN_EXE_smart-flood"), &["--seconds", "0.2"]);
    ends_quietly(env!("CARGO_BIN_EXE_smart-flood"), &["--help"]);
}
