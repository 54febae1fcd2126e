//! What the API costs, measured side by side in one run (the machine is shared and noisy, so compare
//! the ratios, not the nanoseconds):
//!
//! * `getpid` — one raw system call, the yardstick;
//! * `set_time_constraint`, `clear_time_constraint` — the application's cost per frame;
//! * `Registry::constraint` — the scheduler's cost per decision (hash lookup + seqlock read);
//! * visibility — from the store of a constraint in one thread until a scheduler thread spinning on
//!   `Registry::constraint` sees it (median and 99th percentile over samples).
//!
//! `cargo run --release -p libsmart --example bench [-- --json]`

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use libsmart::server::Registry;
use libsmart::{Options, Smart};

const N: u32 = 1_000_000;

/// Pin the calling thread to `cpu` (best effort: the visibility measurement wants the writer and
/// the reader on different CPUs at the same time).
fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t filled with CPU_SET, passed with its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn per_op(mut f: impl FnMut(), n: u32) -> f64 {
    for _ in 0..n / 10 {
        f();
    }
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        best = best.min(t.elapsed().as_nanos() as f64 / n as f64);
    }
    best
}

fn main() {
    let json = std::env::args().any(|a| a == "--json");
    if std::env::args().any(|a| a == "--help" || a == "-h") {
        println!("usage: bench [--json]\nMeasures libsmart's costs against a getpid() system call (see the source's doc).");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("smart.sock");
    let mut reg = Registry::bind(&path).expect("bind");

    // The application: one thread that registers, then writes constraints on request.
    let (tid_tx, tid_rx) = mpsc::channel();
    let (cmd_tx, cmd_rx) = mpsc::channel::<&'static str>();
    let (done_tx, done_rx) = mpsc::channel::<(f64, f64)>();
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let app = std::thread::spawn(move || {
        let smart = Smart::register_with(Options { socket: Some(path), signal: 0, ..Options::default() })
            .expect("register");
        tid_tx.send(smart.attach_thread().unwrap()).unwrap();
        while let Ok(cmd) = cmd_rx.recv() {
            match cmd {
                "costs" => {
                    let mut d = libsmart::now();
                    let set = per_op(
                        || {
                            d += 1;
                            smart.set_time_constraint(d, Some(10_000_000), Some(0)).unwrap();
                        },
                        N,
                    );
                    let clear = per_op(|| smart.clear_time_constraint().unwrap(), N);
                    done_tx.send((set, clear)).unwrap();
                }
                "stream" => {
                    pin(1);
                    // Publish "now" as the deadline every ~20 µs until told to stop.
                    while !stop2.load(Ordering::Relaxed) {
                        smart.set_time_constraint(libsmart::now(), None, None).unwrap();
                        let t = Instant::now();
                        while t.elapsed().as_nanos() < 20_000 {
                            std::hint::spin_loop();
                        }
                    }
                    done_tx.send((0.0, 0.0)).unwrap();
                }
                _ => break,
            }
        }
    });
    // Serve the registration while waiting for it (bounded).
    let (mut tid, t0) = (None, Instant::now());
    let tid = loop {
        reg.poll();
        tid = tid.or_else(|| tid_rx.try_recv().ok());
        if let Some(t) = tid.filter(|&t| reg.is_registered(t)) {
            break t;
        }
        assert!(t0.elapsed().as_secs() < 5, "the application thread did not register");
        std::thread::sleep(std::time::Duration::from_micros(100));
    };

    let getpid = per_op(
        || unsafe {
            libc::syscall(libc::SYS_getpid);
        },
        N,
    );
    cmd_tx.send("costs").unwrap();
    let (set, clear) = done_rx.recv().unwrap();
    let lookup = per_op(
        || {
            std::hint::black_box(reg.constraint(std::hint::black_box(tid)));
        },
        N,
    );
    let miss = per_op(
        || {
            std::hint::black_box(reg.constraint(std::hint::black_box(1)));
        },
        N,
    );

    // Visibility: the scheduler spins on the slot; each new deadline is the writer's clock at the store.
    pin(0);
    cmd_tx.send("stream").unwrap();
    let mut lat = Vec::with_capacity(20_000);
    let (mut last, t0) = (0u64, Instant::now());
    while lat.len() < 20_000 && t0.elapsed().as_secs() < 3 {
        if let Some(c) = reg.constraint(tid) {
            if c.deadline != last {
                let now = libsmart::now();
                if last != 0 {
                    lat.push(now.saturating_sub(c.deadline));
                }
                last = c.deadline;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    done_rx.recv().unwrap();
    cmd_tx.send("quit").unwrap();
    app.join().unwrap();
    lat.sort_unstable();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1))).copied().unwrap_or(0)
    };
    let (p50, p99) = (pct(0.5), pct(0.99));
    let frac = |ns: u64| lat.iter().filter(|&&l| l <= ns).count() as f64 / lat.len().max(1) as f64;
    let (under_1us, under_10us) = (frac(1_000), frac(10_000));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load1: f64 = load.split_whitespace().next().and_then(|l| l.parse().ok()).unwrap_or(f64::NAN);
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };

    if json {
        println!(
            "{{\"tool\":\"libsmart-bench\",\"getpid_ns\":{getpid:.1},\"set_time_constraint_ns\":{set:.1},\
             \"clear_time_constraint_ns\":{clear:.1},\"registry_constraint_ns\":{lookup:.1},\
             \"registry_miss_ns\":{miss:.1},\"set_over_getpid\":{:.3},\"visibility_samples\":{},\
             \"visibility_p50_ns\":{p50},\"visibility_p99_ns\":{p99},\"visibility_le_1us\":{under_1us:.3},\
             \"visibility_le_10us\":{under_10us:.3},\"loadavg_1m\":{load1},\"cpus\":{cpus}}}",
            set / getpid,
            lat.len()
        );
    } else {
        println!("libsmart costs (best of 5 runs of {N} calls; compare ratios, the machine is shared)");
        println!("  getpid() system call          {getpid:8.1} ns   1.00");
        println!("  set_time_constraint           {set:8.1} ns   {:.3} x getpid", set / getpid);
        println!("  clear_time_constraint         {clear:8.1} ns   {:.3} x getpid", clear / getpid);
        println!("  Registry::constraint (hit)    {lookup:8.1} ns   {:.3} x getpid", lookup / getpid);
        println!("  Registry::constraint (miss)   {miss:8.1} ns   {:.3} x getpid", miss / getpid);
        println!(
            "  store -> scheduler sees it    p50 {p50} ns, p99 {p99} ns ({} samples, writer and reader on different threads)",
            lat.len()
        );
        println!(
            "                                {:.1} % within 1 us, {:.1} % within 10 us (load average {load1} on {cpus} CPUs:\n\
             \x20                               the tail is the reader or writer waiting for a CPU, not memory)",
            under_1us * 100.0,
            under_10us * 100.0
        );
    }
}
