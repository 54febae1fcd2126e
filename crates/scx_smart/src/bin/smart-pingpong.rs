//! `smart-pingpong`: a context-switch-heavy load for scheduler benchmarks. Two threads pass a byte back and
//! forth through two pipes `--rounds` times (each round is two wake-ups and two context switches when they
//! share a CPU); prints one JSON line with the round trips per second.
//! `-v` logs on stderr the setup and the round trips per second each second (`diag`).
#![forbid(unsafe_code)]

use scx_smart::cli::Every;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

const HELP: &str = "usage: smart-pingpong [--rounds N] [-v] [-q]

Two threads pass a byte back and forth through a socket pair N times (default 20000). Prints one JSON line:
the rounds, the seconds they took and the round trips per second.
  -v, --verbose     log on stderr the setup (pid, CPUs allowed, the CPU each thread starts on) and, each
                    second, the round trips per second and the CPU of the main thread (-q, --quiet: less; the
                    JSON line does not change)";

/// The CPU the calling thread runs on, for the log.
fn cpu() -> i32 {
    nix::sched::sched_getcpu().map_or(-1, |c| c as i32)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        diag::outln!("{HELP}");
        return;
    }
    diag::init("smart-pingpong", diag::level(scx_smart::cli::verbosity(&args, &["--rounds"])));
    let rounds: u64 = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .map_or(20_000, |s| s.parse().expect("--rounds takes a whole number"));
    tracing::debug!(
        "pid {}: {rounds} round trips through a socket pair, CPUs allowed: {}, main thread on CPU {}",
        std::process::id(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu()
    );
    let (mut a, mut b) = UnixStream::pair().expect("socket pair");
    let echo = std::thread::spawn(move || {
        tracing::debug!("echo thread starts on CPU {}", cpu());
        let mut buf = [0u8; 1];
        for _ in 0..rounds {
            b.read_exact(&mut buf).expect("read");
            b.write_all(&buf).expect("write");
        }
    });
    // Whether to log each second: read once, so that the loop is the same without -v.
    let report = tracing::enabled!(tracing::Level::DEBUG);
    let t0 = Instant::now();
    let mut every = Every::new(t0, Duration::from_secs(1));
    let mut counted = 0u64;
    let mut buf = [1u8; 1];
    for k in 1..=rounds {
        a.write_all(&buf).expect("write");
        a.read_exact(&mut buf).expect("read");
        if report {
            if let Some(d) = every.due(Instant::now()) {
                tracing::debug!(
                    "{:.1} s: {:.0} round trips/s, main thread on CPU {}",
                    t0.elapsed().as_secs_f64(),
                    (k - counted) as f64 / d.as_secs_f64(),
                    cpu()
                );
                counted = k;
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    echo.join().expect("echo thread");
    diag::outln!(
        "{{\"rounds\":{rounds},\"seconds\":{secs:.6},\"rounds_per_s\":{:.0}}}",
        rounds as f64 / secs
    );
}
