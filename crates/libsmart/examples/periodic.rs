//! A periodic worker using SMART's API: every frame it sets a time constraint (deadline, CPU
//! estimate, notify as soon as a miss is seen, period), does its work, and if notified in the middle
//! of a frame it discards the rest of that frame (`on_miss = "discard"`), as the dissertation's video
//! player does (§3.5). It counts frames met, missed and notified.
//!
//! ```text
//! # under scx_smart (it listens at /run/smart/scx_smart.sock or $SMART_SOCKET):
//! cargo run --release -p libsmart --example periodic -- --frames 250
//! # without a SMART scheduler: a demo scheduler side in this process that only watches deadlines
//! # (it notifies once a deadline has passed with the frame unfinished; it schedules nothing):
//! cargo run --release -p libsmart --example periodic -- --demo-server --hogs 2
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use libsmart::server::Registry;
use libsmart::{Options, Smart};

const MS: u64 = 1_000_000;

struct Args {
    period: u64,
    work: u64,
    deadline: u64,
    frames: u32,
    demo_server: bool,
    hogs: u32,
    json: bool,
}

const HELP: &str = "usage: periodic [--period MS] [--work MS] [--deadline MS] [--frames N] [--demo-server] [--hogs N] [--json]

A periodic worker: every PERIOD it declares a time constraint (deadline DEADLINE after the release,
estimate WORK, notify as soon as a miss is seen), burns WORK of CPU, and discards the rest of a frame
when notified. Defaults: --period 40 --work 10 --deadline 15 --frames 100 (the issue's test task).
  --demo-server  run a scheduler side in this process (deadline watcher only: notifies after a
                 deadline passed unmet; it does not schedule) instead of connecting to scx_smart
  --hogs N       start N CPU-bound threads beside the worker for the run (bounded by the run)
  --json         one JSON object instead of text";

fn parse() -> Result<Args, String> {
    let mut a = Args {
        period: 40 * MS,
        work: 10 * MS,
        deadline: 15 * MS,
        frames: 100,
        demo_server: false,
        hogs: 0,
        json: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut num = |name: &str| -> Result<u64, String> {
            let v = it.next().ok_or(format!("{name} needs a value"))?;
            v.parse::<u64>().map_err(|_| format!("{name}: `{v}` is not a whole number"))
        };
        match k.as_str() {
            "--period" => a.period = num("--period")? * MS,
            "--work" => a.work = num("--work")? * MS,
            "--deadline" => a.deadline = num("--deadline")? * MS,
            "--frames" => a.frames = num("--frames")? as u32,
            "--hogs" => a.hogs = num("--hogs")?.min(8) as u32,
            "--demo-server" => a.demo_server = true,
            "--json" => a.json = true,
            "-h" | "--help" => {
                println!("{HELP}");
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument `{k}`\n\n{HELP}")),
        }
    }
    if a.period == 0 || a.work == 0 || a.work > a.period || a.deadline == 0 || a.frames == 0 {
        return Err("need 0 < work <= period, deadline > 0, frames > 0".into());
    }
    if a.period * a.frames as u64 > 120_000 * MS {
        return Err("a run is limited to 120 s (period x frames)".into());
    }
    Ok(a)
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime into a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn sleep_until(t: u64) {
    let ts = libc::timespec { tv_sec: (t / 1_000_000_000) as _, tv_nsec: (t % 1_000_000_000) as _ };
    // SAFETY: absolute sleep on CLOCK_MONOTONIC with a valid timespec; EINTR (a notification) just
    // ends the sleep early, and the caller loops.
    while libsmart::now() < t {
        unsafe {
            libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut())
        };
    }
}

/// The demo scheduler side: serves registrations and notifies a thread whose deadline passed while
/// its constraint is still set (the frame is unfinished). Not SMART: it decides nothing about who runs.
fn demo_server(path: std::path::PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let mut reg = Registry::bind(&path).expect("bind the demo socket");
    std::thread::spawn(move || {
        let mut notified = std::collections::HashMap::<u32, u64>::new();
        while !stop.load(Ordering::Relaxed) {
            reg.poll();
            let now = libsmart::now();
            for p in reg.processes() {
                for tid in p.threads {
                    let Some(c) = reg.constraint(tid) else { continue };
                    let late = now > c.deadline && c.notify_time.is_some_and(|n| now >= n);
                    if late && notified.get(&tid) != Some(&c.deadline) {
                        let _ = reg.notify(tid, c.deadline, true);
                        notified.insert(tid, c.deadline);
                    }
                }
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    })
}

fn main() {
    let a = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("periodic: {e}");
            std::process::exit(2);
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    let _dir;
    let mut opts = Options::default();
    let server = if a.demo_server {
        _dir = tempfile::tempdir().expect("temp dir");
        let path = _dir.path().join("smart.sock");
        opts.socket = Some(path.clone());
        Some(demo_server(path, stop.clone()))
    } else {
        None
    };
    let smart = match Smart::register_with(opts) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("periodic: {e}\n(try --demo-server to run without scx_smart)");
            std::process::exit(1);
        }
    };
    let hogs: Vec<_> = (0..a.hogs)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();

    let (mut met, mut missed, mut discarded, mut notified) = (0u32, 0u32, 0u32, 0u64);
    let start = libsmart::now() + 10 * MS;
    for k in 0..a.frames as u64 {
        let release = start + k * a.period;
        sleep_until(release);
        let deadline = release + a.deadline;
        let c = sched::TimeConstraint {
            deadline,
            cpu_estimate: Some(a.work),
            notify_time: Some(0),
            period: Some(a.period),
            release: None,
        };
        smart.set_constraint(&c).expect("set the constraint");
        let cpu0 = thread_cpu_ns();
        let mut dropped = false;
        while thread_cpu_ns() - cpu0 < a.work {
            for _ in 0..1000 {
                std::hint::spin_loop();
            }
            if let Some(n) = smart.take_notification().expect("take") {
                notified += n.count;
                dropped = true; // discard the rest of this frame
                break;
            }
        }
        smart.clear_time_constraint().expect("clear");
        if let Some(n) = smart.take_notification().expect("take") {
            notified += n.count;
        }
        if dropped {
            discarded += 1;
            missed += 1;
        } else if libsmart::now() <= deadline {
            met += 1;
        } else {
            missed += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for h in hogs {
        h.join().unwrap();
    }
    if let Some(s) = server {
        s.join().unwrap();
    }
    let (signals, _) = libsmart::signals_received();
    let avail = smart.availability().ok().flatten();
    if a.json {
        println!(
            "{{\"tool\":\"libsmart-periodic\",\"frames\":{},\"deadlines\":{{\"met\":{met},\"missed\":{missed}}},\
             \"discarded\":{discarded},\"notifications\":{notified},\"signals\":{signals},\"availability\":{}}}",
            a.frames,
            avail.map_or("null".to_string(), |v| format!(
                "{{\"consumption_rate\":{},\"allocation_rate\":{}}}",
                v.consumption_rate, v.allocation_rate
            ))
        );
    } else {
        println!(
            "{} frames of {} ms every {} ms, deadline {} ms after release, {} hog(s){}",
            a.frames,
            a.work / MS,
            a.period / MS,
            a.deadline / MS,
            a.hogs,
            if a.demo_server {
                ", demo scheduler side (deadline watcher, the kernel's own scheduler runs the threads)"
            } else {
                ""
            }
        );
        println!("  deadlines met {met}, missed {missed} ({discarded} frames discarded on notification)");
        println!("  notifications {notified} (slot counter), signals received {signals}");
        if let Some(v) = avail {
            println!(
                "  availability: consumption {:.1} %, allocation {:.1} %",
                v.consumption_rate, v.allocation_rate
            );
        }
    }
}
