//! Every analysis of a trace is near-linear in its input: each runs on a trace of N tasks and on one
//! of 10·N, and the time of the larger over the time of the smaller must stay well below the
//! 100 a quadratic analysis takes (an n log n one takes about 12). Each time is the CPU time of the
//! test's thread (work of other processes on a shared machine does not count), the least of a few
//! repetitions; the sizes are those a debug build runs in about a second.

use std::time::{Duration, Instant};

use nix::time::{clock_gettime, ClockId};

use trace::diff::diff;
use trace::klog::{self, Event, Kind};
use trace::summary::summarize;
use trace::timeline::{Group, Timeline};
use trace::windows::Windows;
use trace::{EndReason, Header, Outcome, Record, Source};

/// Tasks of the smaller input; the larger has ten times as many.
const N: u32 = 10_000;
/// Most the larger input may take over the smaller: 10× the input, well below the 100× (or more:
/// its data outgrow the caches too) of a quadratic analysis. Near-linear analyses measure 14–29×
/// in a release build on a loaded 2-core machine (a 10⁵-task input outgrows the caches a 10⁴ one
/// fits in; 11–16× in a debug build), so the bound sits between them and 100×, not at either.
const MOST: f64 = 55.0;

/// The CPU time of this thread.
fn cpu_time() -> Duration {
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).expect("the thread's CPU clock").into()
}

/// The least CPU time `f` takes over a few runs.
fn least(f: &mut dyn FnMut()) -> Duration {
    (0..3)
        .map(|_| {
            let t = cpu_time();
            f();
            cpu_time().saturating_sub(t)
        })
        .min()
        .unwrap()
}

/// Runs `work` on the inputs of `n` and `10 n` tasks (made by `make`, not timed) and checks the ratio.
fn near_linear<I>(what: &str, make: impl Fn(u32) -> I, work: impl Fn(&I)) {
    let (small, big) = (make(N), make(10 * N));
    work(&small); // warm up: the allocator, the caches
    let (a, b) = (least(&mut || work(&small)), least(&mut || work(&big)));
    let ratio = b.as_secs_f64() / a.as_secs_f64().max(1e-9);
    eprintln!("{what}: {N} tasks {a:?}, {} tasks {b:?}, ratio {ratio:.1}", 10 * N);
    assert!(ratio < MOST, "{what}: 10× the tasks took {ratio:.1}× the time ({a:?} → {b:?})");
}

const MS: u64 = 1_000_000;

fn header(cpus: u32) -> Header {
    Header::new(Source::Hourglass { kernel: "k".into() }, cpus, "CLOCK_MONOTONIC", 0, Some(1000))
}

/// A trace of `n` tasks on 4 CPUs: each named, woken, released, run twice and ended; tasks in
/// processes of two threads whose leader is not in the trace (a process's name is then looked for
/// among its threads), the names given from the last task to the first.
fn trace(n: u32) -> (Header, Vec<Record>) {
    let mut recs: Vec<Record> = (0..n)
        .rev()
        .map(|k| Record::Task { task: k + 1, process: 1_000_000 + k / 2, name: format!("t{k}") })
        .collect();
    for k in 0..n {
        let (task, cpu, at) = (k + 1, k % 4, u64::from(k / 4) * MS);
        recs.push(Record::Wake { task, cpu: Some(cpu), at });
        recs.push(Record::Release { task, job: 0, at, deadline: Some(at + MS) });
        let run = |start, end, why, complete| Record::Run { task, cpu, start, end, why, complete };
        recs.push(run(at, at + MS / 4, EndReason::Preempted, true));
        recs.push(Record::Tick { cpu, task: Some(task), at: at + MS / 2 });
        recs.push(run(at + MS / 2, at + MS, EndReason::Blocked, true));
        recs.push(Record::JobEnd { task, job: 0, at: at + MS, outcome: Outcome::Met });
    }
    recs.push(Record::End { at: u64::from(n / 4 + 1) * MS });
    (header(4), recs)
}

fn timeline(n: u32) -> Timeline {
    let (h, recs) = trace(n);
    Timeline::from_records::<()>(&h, recs.into_iter().map(Ok)).unwrap()
}

#[test]
fn summarize_is_near_linear() {
    near_linear("summarize", trace, |(h, recs)| {
        summarize::<()>(h, recs.iter().cloned().map(Ok)).unwrap();
    });
}

#[test]
fn diff_is_near_linear() {
    // Two traces of the same tasks, their names in opposite orders (the old diff scanned B for each
    // task of A).
    let make = |n: u32| {
        let (h, recs) = trace(n);
        let a = summarize::<()>(&h, recs.iter().cloned().map(Ok)).unwrap();
        let mut b = a.clone();
        b.tasks.reverse();
        (a, b)
    };
    near_linear("trace diff", make, |(a, b)| {
        let d = diff(a, b);
        assert_eq!(d.tasks.len(), a.tasks.len());
    });
}

#[test]
fn timeline_is_near_linear() {
    near_linear("timeline", trace, |(h, recs)| {
        Timeline::from_records::<()>(h, recs.iter().cloned().map(Ok)).unwrap();
    });
}

#[test]
fn task_stats_are_near_linear_by_thread_and_by_process() {
    for group in [Group::Thread, Group::Process] {
        near_linear(&format!("task stats by {group:?}"), timeline, |tl| {
            let s = tl.task_stats(group);
            assert!(!s.is_empty());
        });
    }
}

#[test]
fn billing_is_near_linear_by_thread_and_by_process() {
    for group in [Group::Thread, Group::Process] {
        near_linear(&format!("billing by {group:?}"), timeline, |tl| {
            let rows = trace::billing::billing_table(tl, &[100, 1000], 0, group);
            assert!(!rows.is_empty());
        });
    }
}

#[test]
fn windows_are_near_linear() {
    // A hundred windows: their output is windows × tasks, linear in the tasks.
    near_linear("windows", trace, |(h, recs)| {
        let len = recs.iter().map(|r| if let Record::End { at } = r { *at } else { 0 }).max().unwrap();
        let mut w = Windows::new(h.start_ns, len / 100);
        recs.iter().for_each(|r| w.add(r));
        assert!(!w.finish().is_empty());
    });
}

#[test]
fn a_stretch_of_2_to_the_62_ns_costs_what_a_short_one_does() {
    // The window count is checked against the trace's end (its End record, 1 s), but a record may
    // run past it: the windows walked are those that can be emitted, not the stretch's.
    let run =
        |task, end| Record::Run { task, cpu: 0, start: 0, end, why: EndReason::Blocked, complete: true };
    let mut w = Windows::new(0, MS);
    let t = Instant::now();
    for task in 0..1000 {
        w.add(&run(task, 1 << 62));
    }
    w.add(&Record::End { at: 1000 * MS });
    let ws = w.finish();
    assert!(t.elapsed() < Duration::from_secs(20), "took {:?}", t.elapsed());
    assert_eq!(ws.len(), 1000);
    assert!(ws.iter().all(|x| x.shares.iter().all(|&s| s == 1.0)), "every task ran through every window");
}

#[test]
fn klogger_conversion_is_near_linear() {
    // A recording of n tasks switching on 4 CPUs, each waking first.
    let make = |n: u32| {
        let mut h = klog::Header::new("test", 4, Some(1000));
        h.start_ns = 0;
        let mut ev = Vec::new();
        for k in 0..n {
            let (cpu, at) = (k % 4, 1 + u64::from(k / 4) * MS);
            let prev = if k < 4 { 0 } else { k - 3 };
            ev.push(Event { pid: k + 1, tgid: k + 1, ..Event::new(at, cpu, Kind::Wakeup) });
            ev.push(Event::switch(at, cpu, (prev, "p"), (k + 1, &format!("t{k}")), 1));
        }
        (h, ev)
    };
    near_linear("klogger conversion", make, |(h, ev)| {
        let c = klog::convert(h, ev);
        assert!(!c.records.is_empty());
    });
}
