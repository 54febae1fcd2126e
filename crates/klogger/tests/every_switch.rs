//! Host test: klogger sees every switch the kernel counts.
//!
//! A system-wide recording runs while a known workload does: two threads ping-pong one byte
//! through two pipes (they block, wake each other and migrate between CPUs freely), a thread
//! sleeps 100 µs many times, and a thread spins (the tick preempts it when others want the CPU).
//! Each workload thread waits on a pipe before it starts and after it is done, so the test reads
//! its `nr_switches` (/proc/self/task/TID/sched: voluntary + involuntary switch-outs, counted by
//! the kernel in `__schedule` next to the sched_switch tracepoint) while it is blocked, before and
//! after its work. The switches klogger recorded with that thread as `prev` between the two reads
//! must equal the kernel's count exactly; only events the recorder reports lost (ring buffer full,
//! placed by its lost records) could excuse a difference. Every broken chain of the whole system
//! must have a named reason (none `unexplained`).
//!
//! Needs root and BPF: without them the test says so and returns. Bounded: about a second of
//! work and a 60 s recording limit.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

mod common;
use common::{gettid, is_root, monotonic_ns, pipe, rd, wr};
use klogger::analysis::{BreakReason, Trace};
use klogger::format::{Kind, Log};
use klogger::record::{preflight, record, RecordOptions, Target};

/// The kernel's count of times thread `tid` of this process was switched out.
fn nr_switches(tid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/self/task/{tid}/sched")).unwrap();
    let line = s.lines().find(|l| l.starts_with("nr_switches")).expect("nr_switches in sched");
    line.rsplit(':').next().unwrap().trim().parse().unwrap()
}

/// The state letter of thread `tid` (/proc/self/task/TID/stat, after the command name).
fn state(tid: u32) -> char {
    let s = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
    s.rsplit_once(')').unwrap().1.trim_start().chars().next().unwrap()
}

/// Waits until thread `tid` sleeps and its switch count no longer moves (its switch-out is
/// done, not just its state set), and returns that count.
fn settled_switches(tid: u32) -> u64 {
    let t0 = Instant::now();
    loop {
        assert!(t0.elapsed() < Duration::from_secs(20), "thread {tid} never settled asleep");
        if state(tid) == 'S' {
            let n = nr_switches(tid);
            std::thread::sleep(Duration::from_millis(20));
            if state(tid) == 'S' && nr_switches(tid) == n {
                return n;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A workload thread: tells its tid, waits for `go`, runs `work`, waits for `exit`.
fn worker(
    go: Arc<OwnedFd>,
    exit: Arc<OwnedFd>,
    tids: mpsc::Sender<(&'static str, u32)>,
    name: &'static str,
    work: impl FnOnce() + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        tids.send((name, gettid())).unwrap();
        rd(go.as_fd());
        work();
        rd(exit.as_fd());
    })
}

#[test]
fn klogger_records_every_switch_the_kernel_counts() {
    if !is_root() {
        eprintln!("SKIPPED: recording needs root (BPF); run the tests as root");
        return;
    }
    if let Err(e) = preflight() {
        eprintln!("SKIPPED: BPF recording is not available here: {e:#}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("every.klog");
    let stop = Arc::new(AtomicBool::new(false));
    let ready = Arc::new(AtomicBool::new(false));
    let opts = RecordOptions {
        output: file.clone(),
        target: Target::System,
        duration: Some(Duration::from_secs(60)),
        buffer_bytes: 16 << 20,
        max_bytes: 1 << 30,
        stop: stop.clone(),
        ready: Some(ready.clone()),
        progress: false,
        bpf_stats: false,
    };
    let rec = std::thread::spawn(move || record(&opts));
    let t0 = Instant::now();
    while !ready.load(Ordering::SeqCst) {
        assert!(!rec.is_finished(), "recorder failed: {:?}", rec.join());
        assert!(t0.elapsed() < Duration::from_secs(30), "recorder not ready");
        std::thread::sleep(Duration::from_millis(5));
    }

    // Four workers: each reads one byte from `go` to start and one from `exit` to end.
    let (go_r, go_w) = pipe();
    let (exit_r, exit_w) = pipe();
    let (go_r, exit_r) = (Arc::new(go_r), Arc::new(exit_r));
    let (tx, rx) = mpsc::channel();
    let (p1r, p1w) = pipe();
    let (p2r, p2w) = pipe();
    const ROUNDS: u32 = 3000;
    let workers = vec![
        worker(go_r.clone(), exit_r.clone(), tx.clone(), "ping", move || {
            for _ in 0..ROUNDS {
                wr(p1w.as_fd());
                rd(p2r.as_fd());
            }
        }),
        worker(go_r.clone(), exit_r.clone(), tx.clone(), "pong", move || {
            for _ in 0..ROUNDS {
                rd(p1r.as_fd());
                wr(p2w.as_fd());
            }
        }),
        worker(go_r.clone(), exit_r.clone(), tx.clone(), "sleeper", || {
            for _ in 0..500 {
                std::thread::sleep(Duration::from_micros(100));
            }
        }),
        worker(go_r.clone(), exit_r.clone(), tx.clone(), "spinner", || {
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(300) {
                std::hint::spin_loop();
            }
        }),
    ];
    drop(tx);
    let tids: Vec<(&str, u32)> = (0..workers.len()).map(|_| rx.recv().unwrap()).collect();
    let before: Vec<u64> = tids.iter().map(|&(_, t)| settled_switches(t)).collect();
    let from = monotonic_ns();
    for _ in &tids {
        wr(go_w.as_fd());
    }
    let after: Vec<u64> = tids.iter().map(|&(_, t)| settled_switches(t)).collect();
    let to = monotonic_ns();
    for _ in &tids {
        wr(exit_w.as_fd());
    }
    for w in workers {
        w.join().unwrap();
    }
    std::thread::sleep(Duration::from_millis(50));
    stop.store(true, Ordering::SeqCst);
    let st = rec.join().unwrap().expect("recording failed");

    let log = Log::read(&file).unwrap();
    assert!(log.complete && log.trailing_bytes == 0);
    let lost_in_window: u64 =
        log.events.iter().filter(|e| e.kind == Kind::Lost && e.ts >= from && e.ts <= to).map(|e| e.arg).sum();
    assert_eq!(log.lost(), st.lost, "the log's lost records add up to the kernel's counters");
    let mut total = 0;
    for (i, &(name, tid)) in tids.iter().enumerate() {
        let kernel = after[i] - before[i];
        let seen = log
            .events
            .iter()
            .filter(|e| e.kind == Kind::Switch && e.pid == tid && e.ts > from && e.ts < to)
            .count() as u64;
        eprintln!("{name} ({tid}): kernel counted {kernel} switch-outs, klogger recorded {seen}");
        assert!(kernel > 0, "{name}: the workload switched");
        if lost_in_window == 0 {
            assert_eq!(seen, kernel, "{name} ({tid}): recorded switches vs the kernel's nr_switches");
        } else {
            assert!(
                seen <= kernel && kernel - seen <= lost_in_window,
                "{name} ({tid}): {seen} recorded, {kernel} counted, only {lost_in_window} lost"
            );
        }
        total += kernel;
    }
    assert!(total > 2 * ROUNDS as u64, "ping and pong block about once per round each");

    let trace = Trace::from_log(&log);
    eprintln!(
        "whole system: {} events, {} lost, {} broken chains {:?}",
        trace.events, trace.lost, trace.broken_chains, trace.broken_chains_by_reason
    );
    assert_eq!(trace.broken_chains, trace.broken_chains_by_reason.values().sum::<u64>());
    assert!(
        !trace.broken_chains_by_reason.contains_key(&BreakReason::Unexplained),
        "every broken chain has a named reason: {:?}",
        trace.broken_chains_by_reason
    );
}
