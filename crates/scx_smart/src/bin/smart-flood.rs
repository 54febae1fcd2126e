//! `smart-flood`: a hostile libsmart client for scx_smart tests. For `--seconds` it connects to the
//! scheduler's socket (`$SMART_SOCKET`, default /run/smart/scx_smart.sock) as fast as it can: half of
//! the connections send a registration with a wrong magic number, the others say nothing and are kept
//! open (up to 512 at once, the oldest closed first), so that the scheduler's side has connections to
//! accept, garbage to refuse and silent ones to time out, all the time. Prints one JSON line with what
//! it did. It asks for nothing a process may not ask for, so any local user can do the same.
//! `-v` logs on stderr the connections made and refused each second (`diag`).
#![forbid(unsafe_code)]

use scx_smart::cli::Every;
use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

const HELP: &str = "usage: smart-flood [--seconds S] [-v] [-q]

A hostile libsmart client (default 5 s): connects to the scheduler's socket ($SMART_SOCKET, default
/run/smart/scx_smart.sock) as fast as it can; every other connection sends a registration with a wrong magic
number, the others stay open and silent (up to 512, the oldest closed first). Prints one JSON line: the
connections made (connected), refused (failed) and those that sent their garbage (garbage).
  -v, --verbose     log on stderr the setup and, each second, the connections made and refused per second, with
                    the last error; -vv also each time connecting starts or stops failing (-q, --quiet: less;
                    the JSON line does not change)";

/// Counts since the start, to log the differences each second.
#[derive(Clone, Copy, Default)]
struct Counts {
    connected: u64,
    failed: u64,
    garbage: u64,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        diag::outln!("{HELP}");
        return;
    }
    diag::init("smart-flood", diag::level(scx_smart::cli::verbosity(&args, &["--seconds"])));
    let get = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let secs: f64 = get("--seconds").map_or(5.0, |s| s.parse().expect("--seconds takes a number"));
    let path = libsmart::socket_path();
    tracing::debug!(
        "pid {}: connecting to {} for {secs} s; every other connection sends a bad magic number, the others \
         stay open and silent (up to 512)",
        std::process::id(),
        path.display()
    );
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let bad = libsmart::proto::Hello { magic: 0, version: libsmart::layout::VERSION, flags: 0 };
    let mut open: VecDeque<UnixStream> = VecDeque::new();
    let (mut connected, mut failed, mut garbage) = (0u64, 0u64, 0u64);
    let mut i = 0u64;
    // Whether to log each second: read once, so that the loop is the same without -v.
    let report = tracing::enabled!(tracing::Level::DEBUG);
    let mut every = Every::new(Instant::now(), Duration::from_secs(1));
    let t0 = Instant::now();
    let mut logged = Counts::default();
    let mut last_error: Option<std::io::Error> = None;
    let mut failing = false;
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        if report {
            if let Some(d) = every.due(now) {
                let per_s = |n: u64| n as f64 / d.as_secs_f64();
                tracing::debug!(
                    "{:.1} s: {:.0} connections/s ({:.0} sent garbage, {} silent ones open), {:.0} refused/s{}",
                    now.duration_since(t0).as_secs_f64(),
                    per_s(connected - logged.connected),
                    per_s(garbage - logged.garbage),
                    open.len(),
                    per_s(failed - logged.failed),
                    last_error.take().map_or(String::new(), |e| format!(" (the last: {e})"))
                );
                logged = Counts { connected, failed, garbage };
            }
        }
        i += 1;
        match UnixStream::connect(&path) {
            Ok(c) => {
                if failing {
                    failing = false;
                    tracing::trace!("connecting again after {failed} refusals in all");
                }
                connected += 1;
                if i % 2 == 0 {
                    if libsmart::proto::send(c.as_raw_fd(), &bad, None).is_ok() {
                        garbage += 1;
                    }
                } else {
                    open.push_back(c);
                    if open.len() > 512 {
                        open.pop_front();
                    }
                }
            }
            Err(e) => {
                if !failing {
                    failing = true;
                    tracing::trace!("connecting fails, after {connected} connections in all: {e}");
                }
                if report {
                    last_error = Some(e);
                }
                failed += 1;
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }
    diag::outln!("{{\"connected\":{connected},\"failed\":{failed},\"garbage\":{garbage}}}");
}
