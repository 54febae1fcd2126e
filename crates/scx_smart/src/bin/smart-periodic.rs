//! `smart-periodic`: a periodic real-time task for scx_smart tests, using libsmart (SMART ch. 3).
//! Every `--period` it releases a request of `--work` CPU time with a deadline `--deadline` after the
//! release, sets a time constraint (notify as soon as a miss is foreseen), and counts deadlines met and
//! missed. Without a scheduler to register with (`--no-smart`) it runs the same loop unconstrained, to
//! measure the default scheduler. Prints one JSON line.

use std::time::Duration;

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime into a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn ms_arg(args: &[String], k: &str, default: f64) -> u64 {
    let v = args
        .iter()
        .position(|a| a == k)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |s| s.parse::<f64>().unwrap_or_else(|_| panic!("{k} takes milliseconds")));
    (v * 1e6) as u64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let work = ms_arg(&args, "--work", 10.0);
    let period = ms_arg(&args, "--period", 40.0);
    let deadline = ms_arg(&args, "--deadline", 15.0);
    let count: u64 = args
        .iter()
        .position(|a| a == "--count")
        .and_then(|i| args.get(i + 1))
        .map_or(250, |s| s.parse().expect("--count takes a whole number"));
    let no_smart = args.iter().any(|a| a == "--no-smart");
    let smart = if no_smart {
        None
    } else {
        match libsmart::Smart::register() {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("smart-periodic: libsmart registration failed: {e}");
                std::process::exit(1);
            }
        }
    };
    let (mut met, mut missed, mut notified_seen) = (0u64, 0u64, 0u64);
    let t0 = libsmart::now() + period;
    // The constraint of each request is set before sleeping until its release, so the scheduler knows it
    // at the wake-up that starts the request (it reads constraints when a task becomes runnable).
    for k in 0..count {
        let release = t0 + k * period;
        let due = release + deadline;
        if let Some(s) = smart {
            // The estimate carries the 10 % margin of SMART's video player (§3.5).
            let _ = s.set_time_constraint(due, Some(work + work / 10), Some(0));
        }
        let now = libsmart::now();
        if now < release {
            std::thread::sleep(Duration::from_nanos(release - now));
        }
        let c0 = thread_cpu_ns();
        while thread_cpu_ns() - c0 < work {
            std::hint::black_box(0u64);
        }
        if let Some(s) = smart {
            notified_seen += s.take_notification().ok().flatten().map_or(0, |_| 1);
        }
        if libsmart::now() <= due {
            met += 1
        } else {
            missed += 1
        }
    }
    if let Some(s) = smart {
        let _ = s.clear_time_constraint();
    }
    println!(
        "{{\"scheduler\":\"{}\",\"met\":{met},\"missed\":{missed},\"notifications\":{notified_seen},\"met_pct\":{:.2}}}",
        if no_smart { "default" } else { "scx_smart" },
        100.0 * met as f64 / count.max(1) as f64
    );
}
