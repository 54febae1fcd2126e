//! `smart-hog`: a CPU hog for scx_smart tests. With `--share N` it asks for SMART share N through
//! libsmart (raising above 1 needs CAP_SYS_NICE). Spins for `--seconds`, then prints one JSON line with
//! the CPU time it got (from /proc/thread-self/schedstat), in all and after the first `--warmup` seconds
//! (`steady_cpu_ns`: a SMART bias is a bounded offset that only shifts the start, §4.3).
//! With `--go FILE` it registers, creates `FILE.<name>.ready`, then waits (asleep) until FILE exists
//! and counts its seconds from FILE's modification time, so that hogs started one after the other
//! measure the same stretch of time, however late each first gets the CPU after FILE appears.
//! With `--nice N` it runs at nice level N (setpriority(2); below 0 needs CAP_SYS_NICE).
//! `-v` logs on stderr what it set up and when it counted (`diag`).
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

const HELP: &str =
    "usage: smart-hog [--seconds S] [--warmup S] [--share N] [--nice N] [--name NAME] [--go FILE] [-v] [-q]

A CPU hog (defaults: 5 s, no warm-up, name hog). Spins, then prints one JSON line: the CPU time it got in all
(cpu_ns) and after the warm-up (steady_cpu_ns), and the wall time it counted.
  --share N         register with scx_smart through libsmart and ask for share N (above 1 needs CAP_SYS_NICE)
  --nice N          run at nice level N (below 0 needs CAP_SYS_NICE)
  --name NAME       the name in the JSON line and in FILE.NAME.ready
  --go FILE         create FILE.NAME.ready, wait (up to 60 s) until FILE exists and count the seconds from its
                    modification time
  --warmup S        steady_cpu_ns counts from S seconds on
  -v, --verbose     log on stderr its settings, its registration, when it starts and stops counting and what
                    it counted (-q, --quiet: less; the JSON line does not change)";

/// Options followed by a value.
const TAKES_VALUE: [&str; 6] = ["--share", "--seconds", "--name", "--warmup", "--nice", "--go"];

fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(0)
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        diag::outln!("{HELP}");
        return;
    }
    diag::init("smart-hog", diag::level(scx_smart::cli::verbosity(&args, &TAKES_VALUE)));
    let get = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let share: Option<u32> = get("--share").map(|s| s.parse().expect("--share takes a whole number"));
    let secs: f64 = get("--seconds").map_or(5.0, |s| s.parse().expect("--seconds takes a number"));
    let name = get("--name").unwrap_or_else(|| "hog".into());
    let warmup: f64 = get("--warmup").map_or(0.0, |s| s.parse().expect("--warmup takes a number"));
    if let Some(n) = get("--nice") {
        let n: i32 = n.parse().expect("--nice takes a whole number");
        // No process named: the calling thread (Linux gives each thread its own nice value).
        if let Err(e) = rustix::process::setpriority_process(None, n) {
            eprintln!("smart-hog: setpriority(nice {n}): {}", std::io::Error::from(e));
            std::process::exit(1);
        }
    }
    if tracing::enabled!(tracing::Level::DEBUG) {
        // (An error reads as nice -1: this is only for the log.)
        let nice = rustix::process::getpriority_process(None).unwrap_or(-1);
        tracing::debug!(
            "{name}: pid {}, nice {nice}, share {}, {secs} s (warm-up {warmup} s)",
            std::process::id(),
            share.map_or("1 (not registering)".to_string(), |s| s.to_string()),
        );
    }
    if let Some(s) = share {
        match libsmart::Smart::register() {
            Ok(smart) => {
                if let Err(e) = smart.set_share(s) {
                    eprintln!("smart-hog: set_share({s}): {e}");
                    std::process::exit(1);
                }
                tracing::debug!(
                    "{name}: registered with {} (privileged: {}), share {s} set",
                    libsmart::socket_path().display(),
                    smart.privileged()
                );
            }
            Err(e) => {
                eprintln!("smart-hog: libsmart registration failed: {e}");
                std::process::exit(1);
            }
        }
    }
    // The clock the run is measured by: from FILE's modification time with --go, else from now.
    let mut origin = std::time::SystemTime::now();
    if let Some(go) = get("--go") {
        let ready = format!("{go}.{name}.ready");
        if let Err(e) = std::fs::write(&ready, b"") {
            eprintln!("smart-hog: cannot create {ready}: {e}");
            std::process::exit(1);
        }
        tracing::debug!("{name}: created {ready}, waiting for {go}");
        let asked = Instant::now();
        let limit = asked + Duration::from_secs(60);
        loop {
            if let Ok(t) = std::fs::metadata(&go).and_then(|m| m.modified()) {
                origin = t;
                tracing::debug!(
                    "{name}: {go} appeared after {:.1} ms, made {:.1} ms ago: counting from then",
                    ms(asked.elapsed().as_nanos() as u64),
                    ms(t.elapsed().unwrap_or_default().as_nanos() as u64)
                );
                break;
            }
            if Instant::now() > limit {
                eprintln!("smart-hog: {go} did not appear within 60 s");
                std::process::exit(1);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let elapsed = || origin.elapsed().unwrap_or_default();
    let c0 = cpu_ns();
    tracing::debug!(
        "{name}: starts counting at {:.3} s, with {:.1} ms of CPU time so far",
        elapsed().as_secs_f64(),
        ms(c0)
    );
    let mut x = 0u64;
    let mut c_warm = None;
    // Rounds of 10,000 multiplications: how much it spun, for the log.
    let mut spins = 0u64;
    while elapsed() < Duration::from_secs_f64(secs) {
        if c_warm.is_none() && elapsed() >= Duration::from_secs_f64(warmup) {
            c_warm = Some(cpu_ns());
            if warmup > 0.0 {
                tracing::debug!(
                    "{name}: warm-up over at {:.3} s, steady count starts",
                    elapsed().as_secs_f64()
                );
            }
        }
        for i in 0..10_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x);
        spins += 1;
    }
    let c1 = cpu_ns();
    let wall = elapsed();
    // Through serde, so that any --name gives valid JSON (fields in this order, as before).
    #[derive(serde::Serialize)]
    struct Line<'a> {
        name: &'a str,
        share: u32,
        cpu_ns: u64,
        steady_cpu_ns: u64,
        wall_ns: u128,
    }
    let line = Line {
        name: &name,
        share: share.unwrap_or(1),
        cpu_ns: c1 - c0,
        steady_cpu_ns: c1 - c_warm.unwrap_or(c0),
        wall_ns: wall.as_nanos(),
    };
    diag::outln!("{}", serde_json::to_string(&line).expect("a JSON line"));
    // After the line, so that it does not count the time the log takes.
    if tracing::enabled!(tracing::Level::DEBUG) {
        let wall = wall.as_secs_f64();
        tracing::debug!(
            "{name}: stops counting at {wall:.3} s after {spins} rounds of 10,000 spins: CPU {:.1} ms ({:.1} % of \
             the wall time), steady {:.1} ms",
            ms(c1 - c0),
            100.0 * (c1 - c0) as f64 / 1e9 / wall.max(1e-9),
            ms(c1 - c_warm.unwrap_or(c0))
        );
    }
}
