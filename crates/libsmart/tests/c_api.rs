//! The C ABI: `include/smart.h` compiled by `cc` (with its static layout asserts) into a small C
//! program linked against the static library, which registers with a test scheduler, sets a
//! constraint, receives a notification, lowers its share and clears the constraint.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::{Server, HANG};

const CRATE: &str = env!("CARGO_MANIFEST_DIR");

/// Where Cargo put `liblibsmart.a` and `liblibsmart.so` for this test run: `target/<profile>/deps/`
/// beside the test binary (`cargo test` builds every crate type of the library there), or
/// `target/<profile>/` after a `cargo build`.
fn artifact_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    if deps.join("liblibsmart.a").exists() {
        deps
    } else {
        deps.parent().unwrap().to_path_buf()
    }
}

fn define(header: &str, name: &str) -> String {
    let line = header
        .lines()
        .find(|l| l.starts_with(&format!("#define {name} ")))
        .unwrap_or_else(|| panic!("smart.h has no #define {name}"));
    line.split_whitespace().nth(2).unwrap().to_string()
}

#[test]
fn the_header_constants_match_the_rust_layout() {
    let h = std::fs::read_to_string(format!("{CRATE}/include/smart.h")).unwrap();
    let magic = define(&h, "SMART_MAGIC");
    let magic = u64::from_str_radix(magic.trim_start_matches("0x").trim_end_matches("ULL"), 16).unwrap();
    assert_eq!(magic, libsmart::layout::MAGIC);
    assert_eq!(define(&h, "SMART_LAYOUT_VERSION"), format!("{}u", libsmart::layout::VERSION));
    assert_eq!(define(&h, "SMART_TID_CLAIMING"), format!("{:#x}u", libsmart::layout::TID_CLAIMING));
    assert_eq!(define(&h, "SMART_FLAG_CONSTRAINT"), format!("{}u", libsmart::layout::FLAG_CONSTRAINT));
    assert_eq!(define(&h, "SMART_FLAG_PRIORITY"), format!("{}u", libsmart::layout::FLAG_PRIORITY));
    assert_eq!(define(&h, "SMART_FLAG_SHARE"), format!("{}u", libsmart::layout::FLAG_SHARE));
    // Every function the header declares is exported by the shared library.
    let so =
        std::fs::read(artifact_dir().join("liblibsmart.so")).expect("liblibsmart.so built with the tests");
    let decls: Vec<&str> = h
        .lines()
        .filter(|l| (l.starts_with("int smart_") || l.starts_with("uint64_t smart_")) && l.contains('('))
        .collect();
    assert_eq!(decls.len(), 11, "{decls:?}");
    for l in decls {
        let name = l.split('(').next().unwrap().rsplit(' ').next().unwrap();
        let found =
            so.windows(name.len() + 1).any(|w| &w[..name.len()] == name.as_bytes() && w[name.len()] == 0);
        assert!(found, "{name} is declared in smart.h but not exported by liblibsmart.so");
    }
}

#[test]
fn a_c_program_registers_sets_a_constraint_and_is_notified() {
    let lib = artifact_dir().join("liblibsmart.a");
    assert!(lib.exists(), "{} missing (Cargo builds it with the crate)", lib.display());
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("smart_test");
    let out = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg(format!("-I{CRATE}/include"))
        .arg(format!("{CRATE}/tests/c/smart_test.c"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lgcc_s", "-o"])
        .arg(&exe)
        .output()
        .expect("run cc (scripts/ci/setup-libsmart.sh installs it)");
    assert!(out.status.success(), "cc failed:\n{}", String::from_utf8_lossy(&out.stderr));

    let server = Server::start();
    let deadline = libsmart::now() + 3_000_000_000;
    let mut child = Command::new(&exe)
        .arg(deadline.to_string())
        .env("SMART_SOCKET", &server.path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let mut kv = |key: &str| -> i64 {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let (k, v) =
            line.trim().split_once(' ').unwrap_or_else(|| panic!("C program said {line:?}, expected {key}"));
        assert_eq!(k, key, "C program said {line:?}");
        v.parse().unwrap()
    };
    assert_eq!(kv("register"), 0);
    assert_eq!(kv("on_notify"), 0);
    assert_eq!(kv("constraint"), 0);
    let tid = kv("tid") as u32;
    assert!(server.wait_until(HANG, move |r| r.is_registered(tid)));
    let c = server.with(move |r| r.constraint(tid)).expect("the C program's constraint");
    assert_eq!(
        (c.deadline, c.cpu_estimate, c.notify_time, c.period),
        (deadline, Some(5_000_000), Some(0), None)
    );

    assert!(server.with(move |r| r.notify(tid, deadline, true).unwrap()));
    writeln!(stdin, "go").unwrap();
    assert_eq!(kv("take"), 1);
    assert_eq!(kv("deadline_match"), 1);
    assert_eq!(kv("handled"), 1, "the C handler did not run with the deadline");
    assert_eq!(kv("take_again"), 0);
    assert_eq!(kv("share"), 0);
    assert_eq!(kv("clear"), 0);
    let q = server.with(move |r| r.lookup(tid)).unwrap();
    assert_eq!((q.constraint, q.share), (None, Some(0)));
    writeln!(stdin, "bye").unwrap();
    assert!(child.wait().unwrap().success());
}
