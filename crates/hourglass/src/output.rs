//! Printing a run: the one-screen summary, the paper's formats (trace lines in ms, `latlate:` lines
//! in µs, `thread N: missed X deadlines, hit Y`), the project's JSON output contract (ARCHITECTURE.md), a
//! Chrome trace for Perfetto, and text histograms.

use crate::config::{CpuChoice, Format, Workload};
use crate::run::{EndReason, RunResult, ThreadResult};
use crate::units::format_time;
use serde_json::{json, Value};
use std::fmt::Write;

/// The `p`-th percentile of samples: the workspace's one computation (an HDR histogram, exact to
/// 0.1 %; crates/trace).
pub use trace::summary::percentile;

/// count/p50/p90/p99/max/mean of samples, as the JSON contract's `latency_ns` object (the
/// workspace's one percentile type, crates/trace).
pub fn summary(samples: &[u64]) -> Option<Value> {
    (!samples.is_empty()).then(|| json!(trace::summary::Percentiles::of_values(samples)))
}

/// Log2 histogram buckets from 1 µs: `(lo_ns, hi_ns, count)`; the first bucket is [0, 1 µs).
pub fn log2_hist(samples: &[u64]) -> Vec<(u64, u64, u64)> {
    let mut b: Vec<(u64, u64, u64)> = Vec::new();
    let max = samples.iter().copied().max().unwrap_or(0);
    let mut lo = 0u64;
    let mut hi = 1000u64;
    loop {
        let c = samples.iter().filter(|&&x| x >= lo && x < hi).count() as u64;
        b.push((lo, hi, c));
        if hi > max {
            break;
        }
        lo = hi;
        hi *= 2;
    }
    b
}

fn render_hist(title: &str, samples: &[u64], out: &mut String) {
    let h = log2_hist(samples);
    let peak = h.iter().map(|x| x.2).max().unwrap_or(1).max(1);
    let _ = writeln!(out, "{title} ({} samples):", samples.len());
    for (lo, hi, c) in h {
        let bar = "#".repeat(((c as f64 / peak as f64) * 50.0).ceil() as usize);
        let _ = writeln!(out, "  {:>9} .. {:>9}  {:>8}  {bar}", format_time(lo), format_time(hi), c);
    }
}

/// The intervals ordered by CPU, then start: consecutive entries on one CPU are what ran one
/// after the other there.
pub fn by_cpu(iv: &[crate::run::Interval]) -> Vec<crate::run::Interval> {
    let mut v = iv.to_vec();
    v.sort_by_key(|i| (i.cpu, i.start_ns));
    v
}

/// Gaps between consecutive intervals of the whole trace where the thread changed: the context
/// switches §5.1 measures, ns, with whether the previous interval ended voluntarily.
pub fn switch_gaps(r: &RunResult) -> Vec<(u64, bool)> {
    by_cpu(&r.intervals)
        .windows(2)
        .filter(|w| w[0].cpu == w[1].cpu)
        .filter(|w| w[0].thread != w[1].thread && w[1].start_ns >= w[0].end_ns)
        .map(|w| (w[1].start_ns - w[0].end_ns, matches!(w[0].reason, EndReason::Yield | EndReason::Block)))
        .collect()
}

fn uname_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn intervals_of(r: &RunResult, id: usize) -> usize {
    r.intervals.iter().filter(|i| i.thread as usize == id).count()
}

fn is_periodic(t: &ThreadResult) -> bool {
    t.spec.workload.has_deadlines()
}

/// Renders the run in `fmt` (text, paper or JSON).
pub fn render(r: &RunResult, fmt: Format) -> String {
    match fmt {
        Format::Json => serde_json::to_string_pretty(&to_json(r)).expect("json") + "\n",
        Format::Paper => paper(r),
        Format::Text => text(r),
    }
}

fn header(r: &RunResult) -> String {
    let cpu = match r.config.cpu {
        CpuChoice::One(c) => format!("CPU {c}"),
        CpuChoice::All => "all CPUs".into(),
    };
    format!(
        "hourglass: {} thread{} for {} on {cpu}; clock {:?} {:.3} GHz; Linux {}",
        r.threads.len(),
        if r.threads.len() == 1 { "" } else { "s" },
        format_time(r.duration_ns),
        r.clock,
        r.clock_hz / 1e9,
        report::escape::visible(&uname_release())
    )
}

fn miss_lines(r: &RunResult, out: &mut String) {
    for t in r.threads.iter().filter(|t| is_periodic(t)) {
        let _ = writeln!(out, "thread {}: missed {} deadlines, hit {}", t.id, t.misses, t.hits);
    }
}

fn text(r: &RunResult) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}", header(r));
    let _ = writeln!(
        o,
        "{:>3}  {:<18} {:<24} {:<8} {:>10} {:>7} {:>9} {:>8} {:>8}",
        "id", "sched", "workload", "timer", "cpu", "share", "intervals", "gap>", "loop"
    );
    for t in &r.threads {
        let blocking = t.spec.workload.timer_period().is_some();
        let _ = writeln!(
            o,
            "{:>3}  {:<18} {:<24} {:<8} {:>10} {:>6.1}% {:>9} {:>8} {:>8}",
            t.id,
            t.spec.sched_describe(),
            t.spec.workload.describe(),
            if blocking { t.spec.timer.name() } else { "-".into() },
            format_time(t.cpu_ns),
            100.0 * t.cpu_ns as f64 / r.duration_ns.max(1) as f64,
            intervals_of(r, t.id),
            format_time(t.gap_ns),
            format!("{:.1}ns", t.loop_ns),
        );
    }
    miss_lines(r, &mut o);
    for t in &r.threads {
        if matches!(t.spec.workload, Workload::Lat { .. }) || !t.latencies_ns.is_empty() {
            if let Some(s) = summary(&t.latencies_ns) {
                let f = |k: &str| format_time(s[k].as_u64().unwrap_or(0));
                let _ = writeln!(
                    o,
                    "thread {}: wake-up latency n={} p50 {} p90 {} p99 {} max {}",
                    t.id,
                    s["count"],
                    f("p50"),
                    f("p90"),
                    f("p99"),
                    f("max")
                );
            }
        }
        if t.spec.workload.scan_bytes().is_some() {
            let _ = writeln!(o, "thread {}: {} passes over its array", t.id, t.work);
        }
    }
    let sw = switch_gaps(r);
    if !sw.is_empty() {
        let mut g: Vec<u64> = sw.iter().map(|x| x.0).collect();
        g.sort_unstable();
        let _ = writeln!(
            o,
            "switches between threads: {} ({:.1}/s), gap min {} median {} p90 {} max {}",
            g.len(),
            g.len() as f64 / (r.duration_ns as f64 / 1e9),
            format_time(g[0]),
            format_time(percentile(&g, 50.0)),
            format_time(percentile(&g, 90.0)),
            format_time(*g.last().unwrap())
        );
    }
    let mut same: Vec<u64> = by_cpu(&r.intervals)
        .windows(2)
        .filter(|w| w[0].cpu == w[1].cpu && w[0].thread == w[1].thread && w[1].start_ns >= w[0].end_ns)
        .map(|w| w[1].start_ns - w[0].end_ns)
        .collect();
    if !same.is_empty() {
        same.sort_unstable();
        let secs = r.duration_ns as f64 / 1e9;
        let over = |t: u64| same.iter().filter(|&&x| x > t).count();
        let _ = writeln!(
            o,
            "gaps where the same thread resumed (interrupts, kernel, hypervisor): {} ({:.0}/s), \
             median {}, > 1us: {:.0}/s, > 10us: {:.0}/s, max {}",
            same.len(),
            same.len() as f64 / secs,
            format_time(percentile(&same, 50.0)),
            over(1_000) as f64 / secs,
            over(10_000) as f64 / secs,
            format_time(*same.last().unwrap())
        );
    }
    if r.dropped > 0 {
        let _ = writeln!(o, "trace buffer full: {} records dropped (raise -e)", r.dropped);
    }
    if r.config.hist {
        hists(r, &mut o);
    }
    if r.config.raw_cycles {
        cycles(r, &mut o);
    }
    if let Some(w) = &r.watchdog {
        let _ = writeln!(o, "{w}");
    }
    o
}

fn hists(r: &RunResult, o: &mut String) {
    for t in &r.threads {
        if !t.latencies_ns.is_empty() {
            render_hist(&format!("thread {} wake-up latency", t.id), &t.latencies_ns, o);
        }
    }
    let sw: Vec<u64> = switch_gaps(r).into_iter().map(|x| x.0).collect();
    if !sw.is_empty() {
        render_hist("gaps at switches between threads", &sw, o);
    }
}

fn cycles(r: &RunResult, o: &mut String) {
    for rec in &r.records {
        let _ = writeln!(o, "cycles: {} {} {}", rec.thread, rec.start, rec.end);
    }
}

fn paper(r: &RunResult) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# {}", header(r));
    let _ = writeln!(o, "# {}", r.config.source);
    for t in &r.threads {
        let _ = writeln!(
            o,
            "# thread {}: {} {} -i {} gap threshold {} loop {:.1}ns cpu {}",
            t.id,
            t.spec.sched_describe(),
            t.spec.workload.describe(),
            t.spec.timer.name(),
            format_time(t.gap_ns),
            t.loop_ns,
            format_time(t.cpu_ns)
        );
    }
    let mut prev_end: Option<u64> = None;
    for i in &r.intervals {
        let gap = prev_end.map_or(0, |e| i.start_ns.saturating_sub(e));
        let _ = writeln!(
            o,
            "{} {:.6} {:.6} {:.6} {:.6}",
            i.thread,
            i.start_ns as f64 / 1e6,
            i.end_ns as f64 / 1e6,
            (i.end_ns - i.start_ns) as f64 / 1e6,
            gap as f64 / 1e6
        );
        prev_end = Some(i.end_ns);
    }
    if r.config.raw_cycles {
        cycles(r, &mut o);
    }
    for t in &r.threads {
        if matches!(t.spec.workload, Workload::Lat { .. }) {
            for l in &t.latencies_ns {
                let _ = writeln!(o, "latlate: {:.6}", *l as f64 / 1e3);
            }
        }
    }
    miss_lines(r, &mut o);
    if r.config.hist {
        hists(r, &mut o);
    }
    if let Some(w) = &r.watchdog {
        let _ = writeln!(o, "# {w}");
    }
    o
}

/// The JSON output contract of ARCHITECTURE.md, with hourglass's own fields added.
pub fn to_json(r: &RunResult) -> Value {
    let tasks: Vec<Value> = r
        .threads
        .iter()
        .map(|t| {
            let mut v = json!({
                "name": t.spec.name,
                "cpu_ns": t.cpu_ns,
                "cpu_share": t.cpu_ns as f64 / r.duration_ns.max(1) as f64,
                "finish_ns": t.finish_ns,
                "deadlines": if is_periodic(t) { json!({"met": t.hits, "missed": t.misses}) } else { Value::Null },
                "latency_ns": summary(&t.latencies_ns),
                // What the kernel billed: its own CPU accounting and dispatch count (whether a
                // dispatch was billed nothing is not visible from user space).
                "billing": {"charged_ns": t.kernel_cpu_ns, "quanta": t.dispatches, "unbilled_quanta": null},
                "id": t.id,
                "tid": t.tid,
                "model": t.spec.workload.scenario_name(),
                "workload_params": t.spec.workload,
                "workload": t.spec.workload.describe(),
                "sched": t.spec.sched_describe(),
                "sched_linux": match t.spec.reservation {
                    Some(rv) => format!("SCHED_DEADLINE{}", if rv.soft { " RECLAIM" } else { "" }),
                    None => t.spec.priority.describe(),
                },
                "timer": t.spec.timer.name(),
                "kernel_cpu_ns": t.kernel_cpu_ns,
                "intervals": intervals_of(r, t.id),
                "work": t.work,
                "yields": t.yields,
                "gap_threshold_ns": t.gap_ns,
                "loop_ns": t.loop_ns,
                "response_ns": summary(&t.responses_ns),
                "rtc_hz": t.rtc_hz,
            });
            let o = v.as_object_mut().unwrap();
            if r.config.hist && !t.latencies_ns.is_empty() {
                o.insert(
                    "latency_hist".into(),
                    log2_hist(&t.latencies_ns)
                        .into_iter()
                        .map(|(lo, hi, c)| json!({"lo_ns": lo, "hi_ns": hi, "count": c}))
                        .collect(),
                );
            }
            if r.config.trace {
                o.insert("latency_samples_ns".into(), json!(t.latencies_ns));
                o.insert("miss_at_ns".into(), json!(t.miss_at_ns));
            }
            v
        })
        .collect();
    let mut out = json!({
        "tool": "hourglass",
        "scenario": r.config.scenario_name.as_ref().unwrap_or(&r.config.source),
        "source": r.config.source,
        "policy": r.config.policy,
        "scenario_policy": r.config.scenario_policy,
        "mapping": r.config.scenario_mapping,
        "duration_ns": r.duration_ns,
        "seed": r.config.seed,
        "t0_monotonic_ns": r.t0_monotonic_ns,
        "kernel": uname_release(),
        "clock": { "source": r.clock, "hz": r.clock_hz },
        "cpu": match r.config.cpu { CpuChoice::One(c) => json!(c), CpuChoice::All => json!("all") },
        "trace_records": r.intervals.len(),
        "trace_dropped": r.dropped,
        "watchdog": r.watchdog,
        "warnings": r.warnings,
        "tasks": tasks,
    });
    if r.config.trace {
        out.as_object_mut().unwrap().insert("trace".into(), json!(r.intervals));
    }
    out
}

/// The run as the project's execution trace (crates/trace), on CLOCK_MONOTONIC: each thread a task of
/// this process; each interval a Run record, ended `Preempted` by a gap (something else ran: a task,
/// an interrupt, the kernel; hourglass cannot tell which), `Yielded`, `Blocked` on its timer, or
/// `Exit` when its run ended; each timer wake-up a Wake record at the time the timer was due (the
/// wake-up minus its measured lateness), so that the trace's wake-up latency is hourglass's
/// lateness up to the gap threshold; each request of a scenario's periodic task a Release (with
/// its deadline) and a JobEnd (met, late, aborted at its deadline, or unfinished); each missed
/// deadline of the appendix-A periodic models, which keep no per-request record, a Mark.
///
/// The trace keeps the rules every trace keeps (`trace::Consistency`), which its reader checks:
/// its End record is at the end of the run or at the last time it holds, whichever is later (a
/// thread finishes its last interval or request after the run's nominal end); and a CPU runs one
/// thread at a time, which hourglass's intervals do not say when a gap threshold (`--gap`) longer
/// than a context switch hides another thread's turn inside a thread's interval: the interval is
/// then cut where the other thread's begins (ended `Preempted`), and what remains of it resumes where
/// the other's ends ([`one_at_a_time`]).
pub fn to_trace(r: &RunResult) -> (trace::Header, Vec<trace::Record>) {
    use trace::{EndReason as Why, Record};
    let t0 = r.t0_monotonic_ns;
    let cpus = r.intervals.iter().map(|i| i.cpu + 1).max().unwrap_or(1);
    let source = trace::Source::Hourglass { kernel: uname_release() };
    let header = trace::Header::new(source, cpus, "CLOCK_MONOTONIC", t0, None);
    let pid = std::process::id();
    let mut timed: Vec<(u64, Record)> = Vec::new();
    let runs = r.intervals.iter().map(|i| {
        let why = match i.reason {
            EndReason::Gap => Why::Preempted,
            EndReason::Yield => Why::Yielded,
            EndReason::Block => Why::Blocked,
            EndReason::Finish => Why::Exit,
        };
        Piece { cpu: i.cpu, start: t0 + i.start_ns, end: t0 + i.end_ns, thread: i.thread, why }
    });
    for p in one_at_a_time(runs.collect()) {
        let (task, cpu, start, end, why) = (p.thread, p.cpu, p.start, p.end, p.why);
        timed.push((start, Record::Run { task, cpu, start, end, why, complete: true }));
    }
    for t in &r.threads {
        let task = t.id as u32;
        for (&at, &late) in t.wake_at_ns.iter().zip(&t.latencies_ns) {
            let due = t0 + at.saturating_sub(late);
            timed.push((due, Record::Wake { task, cpu: None, at: due }));
        }
        for (k, j) in t.jobs.iter().enumerate() {
            let (job, at, deadline) = (k as u32, t0 + j.release_ns, Some(t0 + j.deadline_ns));
            timed.push((at, Record::Release { task, job, at, deadline }));
            // A request dropped at a deadline already past when it was released (a jitter beyond
            // its deadline) ended at its release: a request ends after it is released.
            let end = t0 + j.end_ns.max(j.release_ns);
            timed.push((end, Record::JobEnd { task, job, at: end, outcome: j.outcome }));
        }
        if t.jobs.is_empty() {
            for &m in &t.miss_at_ns {
                timed.push((
                    t0 + m,
                    Record::Mark { task: Some(task), at: t0 + m, text: "deadline miss".into() },
                ));
            }
        }
    }
    timed.sort_by_key(|(t, _)| *t);
    let mut records: Vec<Record> = r
        .threads
        .iter()
        .map(|t| Record::Task { task: t.id as u32, process: pid, name: t.spec.name.clone() })
        .collect();
    let last = timed.iter().map(|(t, rec)| if let Record::Run { end, .. } = rec { *end } else { *t }).max();
    let end = last.unwrap_or(0).max(t0 + r.duration_ns);
    records.extend(timed.into_iter().map(|(_, rec)| rec));
    records.push(Record::End { at: end });
    (header, records)
}

/// A stretch of a thread on a CPU, as [`one_at_a_time`] cuts them.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Piece {
    cpu: u32,
    start: u64,
    end: u64,
    thread: u32,
    why: trace::EndReason,
}

/// The order [`one_at_a_time`] takes pieces in: [`Piece::key`].
type Key = (u32, u64, u64, u32);

impl Piece {
    /// By CPU and start; of two with one start, the longer first (the shorter lies inside it).
    fn key(&self) -> Key {
        (self.cpu, self.start, u64::MAX - self.end, self.thread)
    }
}

/// The stretches of each CPU one at a time: where one begins inside another, the other is cut
/// there (ended `Preempted`) and its rest resumes where the one inside ends, if it lasts beyond it;
/// stretches of one thread never overlap (a thread's intervals follow each other), so only those of
/// different threads are cut. In order of CPU and start; unchanged when nothing overlaps.
fn one_at_a_time(mut runs: Vec<Piece>) -> Vec<Piece> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    runs.sort_unstable_by_key(Piece::key);
    if runs.windows(2).all(|w| w[0].cpu != w[1].cpu || w[0].end <= w[1].start) {
        return runs;
    }
    // By key, then by index into `runs` (which the rests of cut stretches join).
    let mut heap: BinaryHeap<Reverse<(Key, usize)>> =
        runs.iter().enumerate().map(|(i, p)| Reverse((p.key(), i))).collect();
    let mut out: Vec<Piece> = Vec::new();
    while let Some(Reverse((_, i))) = heap.pop() {
        let p = runs[i];
        if let Some(l) = out.last_mut().filter(|l| l.cpu == p.cpu && p.start < l.end) {
            if l.end > p.end {
                let rest = Piece { start: p.end, ..*l };
                heap.push(Reverse((rest.key(), runs.len())));
                runs.push(rest);
            }
            (l.end, l.why) = (p.start, trace::EndReason::Preempted);
            if l.end == l.start {
                out.pop();
            }
        }
        out.push(p);
    }
    out
}

/// Writes [`to_trace`] to `out` (opened before the run); returns the number of records.
pub fn write_trace<W: std::io::Write>(r: &RunResult, out: W) -> std::io::Result<u64> {
    let (header, records) = to_trace(r);
    trace::write_to(std::io::BufWriter::new(out), &header, &records)
}

/// The Perfetto view of the run, by the workspace's one writer (`report::Trace::from_records` of
/// [`to_trace`]): a track per thread and per CPU with every execution interval, an instant per
/// missed deadline, and a counter track per sleeping thread with the lateness of each wake-up (µs),
/// which LAT threads measure without recording intervals.
pub fn to_perfetto(r: &RunResult) -> report::Trace {
    let (_, records) = to_trace(r);
    let mut t = report::Trace::from_records(&format!("hourglass: {}", r.config.source), records);
    for th in &r.threads {
        let name = format!("{} wake-up latency (us)", th.spec.name);
        for (&at, &l) in th.wake_at_ns.iter().zip(&th.latencies_ns) {
            t.counter(&name, r.t0_monotonic_ns + at, l as f64 / 1e3);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_counts_every_sample() {
        let s = [0, 500, 1500, 3000, 70_000];
        let h = log2_hist(&s);
        assert_eq!(h.iter().map(|x| x.2).sum::<u64>(), 5);
        assert_eq!(h[0], (0, 1000, 2));
    }

    fn piece(cpu: u32, start: u64, end: u64, thread: u32) -> Piece {
        Piece { cpu, start, end, thread, why: trace::EndReason::Blocked }
    }

    #[test]
    fn overlapping_intervals_of_a_cpu_are_cut_one_at_a_time() {
        use trace::EndReason::{Blocked, Preempted};
        // CPU 0: thread 1's turn hidden inside thread 0's interval (a long --gap), then thread 2's
        // beginning before thread 0's ends; CPU 1: two intervals of one start. CPU 2 untouched.
        let input = vec![
            piece(0, 0, 100, 0),
            piece(0, 30, 50, 1),
            piece(0, 90, 120, 2),
            piece(1, 200, 300, 3),
            piece(1, 200, 250, 4),
            piece(2, 0, 10, 5),
        ];
        let got: Vec<(u32, u64, u64, u32, trace::EndReason)> =
            one_at_a_time(input).into_iter().map(|p| (p.cpu, p.start, p.end, p.thread, p.why)).collect();
        assert_eq!(
            got,
            [
                (0, 0, 30, 0, Preempted),
                (0, 30, 50, 1, Blocked),
                (0, 50, 90, 0, Preempted),
                (0, 90, 120, 2, Blocked),
                (1, 200, 250, 4, Blocked),
                (1, 250, 300, 3, Blocked),
                (2, 0, 10, 5, Blocked),
            ]
        );
        // Without overlaps, nothing changes.
        let fine = vec![piece(0, 0, 10, 0), piece(0, 10, 20, 1), piece(1, 5, 15, 2)];
        assert_eq!(one_at_a_time(fine.clone()), fine);
    }

    #[test]
    fn intervals_cut_one_at_a_time_cover_the_same_time_without_overlapping() {
        // Random intervals (each thread's own in sequence, as hourglass measures them): the cut ones
        // never overlap on a CPU, cover the same instants of each CPU, and each lies inside an
        // interval of its thread.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..300 {
            let mut input = Vec::new();
            for thread in 0..1 + next(5) as u32 {
                let mut t = next(50);
                for _ in 0..next(6) {
                    let len = next(40);
                    input.push(piece(next(2) as u32, t, t + len, thread));
                    t += len + next(30);
                }
            }
            let out = one_at_a_time(input.clone());
            for w in out.windows(2).filter(|w| w[0].cpu == w[1].cpu) {
                assert!(w[0].end <= w[1].start, "{w:?} of {input:?}");
            }
            for (i, p) in out.iter().enumerate() {
                let mine = out[i + 1..].iter().filter(|q| q.thread == p.thread);
                assert!(mine.clone().all(|q| q.end <= p.start || p.end <= q.start), "{p:?} twice");
                assert!(input
                    .iter()
                    .any(|q| q.thread == p.thread && q.cpu == p.cpu && q.start <= p.start && p.end <= q.end));
            }
            let covered =
                |v: &[Piece], cpu: u32, t: u64| v.iter().any(|p| p.cpu == cpu && p.start <= t && t < p.end);
            for cpu in 0..2 {
                for t in 0..400 {
                    assert_eq!(covered(&input, cpu, t), covered(&out, cpu, t), "CPU {cpu} at {t}: {input:?}");
                }
            }
        }
    }
}
