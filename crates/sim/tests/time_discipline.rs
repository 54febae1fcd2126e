//! The time discipline's edge, checked in the sources (`sched`'s "Time that cannot wrap"): times are
//! bare `u64` nanoseconds, safe to add because every time a user gives is bounded where it enters.
//! This test fails when a change lets a time in without its bound, or brings back an arithmetic the
//! discipline rules out, in `sched`, `workload`, `smartsim` and `trace` (code outside their tests):
//!
//! 1. a time is parsed only by `workload::parse_bounded_time` (and by `parse_time` where its result
//!    is bounded later, listed below with the reason);
//! 2. a policy reads a time option only through `sched::OptReader` (which bounds it);
//! 3. a `u128` product or quotient comes back to 64 bits only saturating (`clamp_nanos`, `.min`,
//!    `clamp`), never by `as u64`, which drops the high bits;
//! 4. no `wrapping_` arithmetic, except in the hash and generator of `workload::task_rng`.

use std::path::{Path, PathBuf};

/// The crates under the discipline, and the files of theirs that are tests.
const CRATES: &[&str] = &["sched", "workload", "sim", "trace"];
const TEST_FILES: &[&str] = &["testing.rs", "parse_tests.rs"];

/// (file, what may appear there, how many times, why).
const ALLOWED: &[(&str, &str, usize, &str)] = &[
    ("workload/src/time.rs", "parse_time(", 2, "the parser and parse_bounded_time"),
    ("workload/src/time.rs", "parse_units(", 2, "the parser and parse_time"),
    ("workload/src/lib.rs", "parse_time(", 2, "[scheduler] options, bounded by OptReader::time when built"),
    ("sched/src/registry.rs", "OptValue::Time", 2, "OptReader::time, which bounds it"),
    ("workload/src/lib.rs", "OptValue::Time", 1, "policy options, handed to OptReader"),
    ("workload/src/exec.rs", "wrapping_", 4, "task_rng: FNV-1a and SplitMix64"),
    ("sched/src/percpu.rs", "wrapping_", 1, "a load difference that wraps as the kernel's unsigned one does"),
    ("sim/src/cli/taskset.rs", "wrapping_", 1, "a set's seed: --seed plus its index, a seed and not a time"),
    (
        "sim/src/schedulability.rs",
        "wrapping_",
        1,
        "a set's seed: the study's seed plus its index, not a time",
    ),
];

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file outside its tests and comments: each line with its number.
fn code(text: &str) -> Vec<(usize, &str)> {
    let end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    text[..end]
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split("//").next().unwrap_or("")))
        .filter(|(_, l)| !l.trim().is_empty())
        .collect()
}

#[test]
fn no_time_enters_without_its_bound_and_no_arithmetic_drops_bits() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut found: Vec<(String, &str, usize)> = Vec::new();
    let mut problems = Vec::new();
    let mut files = 0;
    for c in CRATES {
        let mut paths = Vec::new();
        sources(&root.join(c).join("src"), &mut paths);
        for p in paths {
            if TEST_FILES.iter().any(|t| p.ends_with(t)) {
                continue;
            }
            files += 1;
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let text = std::fs::read_to_string(&p).unwrap();
            for (n, line) in code(&text) {
                for pat in ["parse_time(", "parse_units(", "OptValue::Time", "wrapping_"] {
                    if line.contains(pat) {
                        found.push((rel.clone(), pat, n));
                    }
                }
                let narrowed = line.contains(" as u64") || line.contains(" as Nanos");
                if line.contains("u128") && narrowed && !(line.contains(".min(") || line.contains("clamp")) {
                    problems.push(format!(
                        "{rel}:{n}: a u128 narrowed by `as`, which drops high bits: {}",
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(files >= 35, "only {files} files read from {}", root.display());
    for (rel, pat, n) in &found {
        if !ALLOWED.iter().any(|(f, p, _, _)| f == rel && p == pat) {
            problems.push(format!("{rel}:{n}: `{pat}` outside the bounded readers (see this test's doc)"));
        }
    }
    for (f, p, count, why) in ALLOWED {
        let n = found.iter().filter(|(rel, pat, _)| rel == f && pat == p).count();
        if n != *count {
            problems.push(format!("{f}: `{p}` {n} times, {count} expected ({why}): is a new use bounded?"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
