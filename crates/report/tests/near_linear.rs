//! The HTML report of a trace (`smartsim trace html`, `klogger html`: the sections of
//! `report::analyses` and a Gantt chart) is near-linear in the trace's tasks: it runs on a trace
//! of N tasks and on one of 10·N, and the time of the larger over the time of the smaller must stay
//! well below the 100 a quadratic report takes. Each time is the CPU time of the test's thread
//! (work of other processes on a shared machine does not count), the least of a few repetitions.

use std::time::Duration;

use nix::time::{clock_gettime, ClockId};
use report::analyses::{map_rows, trace_sections};
use report::{Gantt, HtmlReport, DEFAULT_WINDOW_NS};
use trace::timeline::{Group, Timeline};
use trace::{EndReason, Header, Record, Source};

/// Tasks of the smaller input; the larger has ten times as many.
const N: u32 = 10_000;
/// Most the larger input may take over the smaller: between what near-linear code measures (the
/// report's parts 3–26× in a release build on a loaded 2-core machine, the larger input
/// outgrowing the caches) and the 100× of a quadratic report (as crates/trace/tests/near_linear.rs).
const MOST: f64 = 55.0;
const MS: u64 = 1_000_000;

fn cpu_time() -> Duration {
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).expect("the thread's CPU clock").into()
}

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

fn near_linear<I>(what: &str, make: impl Fn(u32) -> I, work: impl Fn(&I)) {
    let (small, big) = (make(N), make(10 * N));
    work(&small);
    let (a, b) = (least(&mut || work(&small)), least(&mut || work(&big)));
    let ratio = b.as_secs_f64() / a.as_secs_f64().max(1e-9);
    eprintln!("{what}: {N} tasks {a:?}, {} tasks {b:?}, ratio {ratio:.1}", 10 * N);
    assert!(ratio < MOST, "{what}: 10× the tasks took {ratio:.1}× the time ({a:?} → {b:?})");
}

/// A trace of `n` tasks on 4 CPUs, each run twice; in processes of two threads whose leader is not
/// in the trace (as klogger groups them by process).
fn trace(n: u32) -> (Header, Vec<Record>) {
    let h = Header::new(Source::Hourglass { kernel: "k".into() }, 4, "CLOCK_MONOTONIC", 0, Some(1000));
    let mut recs: Vec<Record> = (0..n)
        .rev()
        .map(|k| Record::Task { task: k + 1, process: 1_000_000 + k / 2, name: format!("t{k}") })
        .collect();
    for k in 0..n {
        let (task, cpu, at) = (k + 1, k % 4, u64::from(k / 4) * MS);
        recs.push(Record::Wake { task, cpu: Some(cpu), at });
        let run = |start, end, why| Record::Run { task, cpu, start, end, why, complete: true };
        recs.push(run(at, at + MS / 4, EndReason::Preempted));
        recs.push(run(at + MS / 2, at + MS, EndReason::Blocked));
    }
    recs.push(Record::End { at: u64::from(n / 4 + 1) * MS });
    (h, recs)
}

fn timeline(n: u32) -> Timeline {
    let (h, recs) = trace(n);
    Timeline::from_records::<()>(&h, recs.into_iter().map(Ok)).unwrap()
}

#[test]
fn the_report_sections_are_near_linear_by_thread_and_by_process() {
    for group in [Group::Thread, Group::Process] {
        near_linear(&format!("report sections by {group:?}"), timeline, |tl| {
            let mut page = HtmlReport::new("t");
            trace_sections(&mut page, tl, group, &[100, 1000], 8, |_| true);
            assert!(page.render().contains("Tick billing"));
        });
    }
}

#[test]
fn the_execution_map_rows_are_near_linear() {
    near_linear("execution map rows", timeline, |tl| {
        let stats = tl.task_stats(Group::Thread);
        let rows = map_rows(tl, Group::Thread, &stats);
        assert_eq!(rows.len(), stats.len());
    });
}

#[test]
fn the_gantt_chart_is_near_linear() {
    near_linear("gantt", trace, |(h, recs)| {
        let mut g = Gantt::new(h, 0, DEFAULT_WINDOW_NS);
        recs.iter().for_each(|r| g.add(r));
        g.end_window_at(g.last_ns().max(1));
        assert!(g.to_svg().starts_with("<svg"));
    });
}
