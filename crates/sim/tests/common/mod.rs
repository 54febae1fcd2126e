//! What the `smartsim` binary's tests share: running it, and a scratch directory per test.
#![allow(dead_code)] // each test file uses its own part

use std::path::PathBuf;
use std::process::Command;

/// Runs `smartsim` from the repository's root: exit code, stdout, stderr.
pub fn smartsim(args: &[&str]) -> (i32, String, String) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out =
        Command::new(env!("CARGO_BIN_EXE_smartsim")).args(args).current_dir(root).output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An empty scratch directory of its own for the test `name` of this process.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("smartsim-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
