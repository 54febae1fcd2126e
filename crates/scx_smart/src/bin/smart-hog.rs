//! `smart-hog`: a CPU hog for scx_smart tests. With `--share N` it asks for SMART share N through
//! libsmart (raising above 1 needs CAP_SYS_NICE). Spins for `--seconds`, then prints one JSON line with
//! the CPU time it got (from /proc/thread-self/schedstat), in all and after the first `--warmup` seconds
//! (`steady_cpu_ns`: a SMART bias is a bounded offset that only shifts the start, §4.3).
//! With `--go FILE` it registers, creates `FILE.<name>.ready`, then waits (asleep) until FILE exists
//! and counts its seconds from FILE's modification time, so that hogs started one after the other
//! measure the same stretch of time, however late each first gets the CPU after FILE appears.
//! With `--nice N` it runs at nice level N (setpriority(2); below 0 needs CAP_SYS_NICE).

use std::time::{Duration, Instant};

fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let share: Option<u32> = get("--share").map(|s| s.parse().expect("--share takes a whole number"));
    let secs: f64 = get("--seconds").map_or(5.0, |s| s.parse().expect("--seconds takes a number"));
    let name = get("--name").unwrap_or_else(|| "hog".into());
    let warmup: f64 = get("--warmup").map_or(0.0, |s| s.parse().expect("--warmup takes a number"));
    if let Some(n) = get("--nice") {
        let n: i32 = n.parse().expect("--nice takes a whole number");
        // SAFETY: setpriority has no memory arguments; 0 names the calling thread (Linux).
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, n) } != 0 {
            eprintln!("smart-hog: setpriority(nice {n}): {}", std::io::Error::last_os_error());
            std::process::exit(1);
        }
    }
    if let Some(s) = share {
        match libsmart::Smart::register() {
            Ok(smart) => {
                if let Err(e) = smart.set_share(s) {
                    eprintln!("smart-hog: set_share({s}): {e}");
                    std::process::exit(1);
                }
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
        let limit = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(t) = std::fs::metadata(&go).and_then(|m| m.modified()) {
                origin = t;
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
    let mut x = 0u64;
    let mut c_warm = None;
    while elapsed() < Duration::from_secs_f64(secs) {
        if c_warm.is_none() && elapsed() >= Duration::from_secs_f64(warmup) {
            c_warm = Some(cpu_ns());
        }
        for i in 0..10_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x);
    }
    let c1 = cpu_ns();
    println!(
        "{{\"name\":\"{name}\",\"share\":{},\"cpu_ns\":{},\"steady_cpu_ns\":{},\"wall_ns\":{}}}",
        share.unwrap_or(1),
        c1 - c0,
        c1 - c_warm.unwrap_or(c0),
        elapsed().as_nanos()
    );
}
