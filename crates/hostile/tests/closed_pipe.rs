//! `hostile` ends quietly when the reader of its standard output has gone (`hostile --list | head`).

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// Runs `hostile args` from the repository's root with its standard output a pipe whose reader has
/// already gone; checks a quiet end.
fn ends_quietly(args: &[&str]) {
    let (reader, writer) = nix::unistd::pipe().expect("a pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_hostile"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() || out.status.signal() == Some(13), "{args:?}: {:?}: {err}", out.status);
    for bad in ["panicked", "Broken pipe", "os error 32"] {
        assert!(!err.contains(bad), "{args:?}: {err}");
    }
}

#[test]
fn hostile_ends_quietly_on_a_closed_pipe() {
    ends_quietly(&["--help"]);
    ends_quietly(&["--list"]);
    // A run of no case still prints its summary line.
    ends_quietly(&["--only", "no case is named like this", "--bin-dir", "/"]);
}
