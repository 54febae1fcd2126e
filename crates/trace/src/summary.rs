//! What a trace says task by task, read in one pass: CPU time and share, stretches on CPUs by how
//! they ended, wake-up latency (from a Wake record to the task's next stretch), and requests by
//! outcome. The same for a simulated run and a recorded one.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::{Header, Outcome, Record};

/// Samples up to this many values are summed up exactly: nearest-rank percentiles on the sorted
/// values and an exact mean ([`Method::Exact`]). A larger sample goes through an HDR histogram of 3
/// significant figures, exact to 0.1 % ([`Method::Histogram`]). The bound is per sample, that is
/// per task and quantity: one sample holds at most 800 kB however long a recording is, and a whole
/// summary at most 8 bytes per value it has read, and 800 kB per task and quantity.
pub const EXACT_UP_TO: usize = 100_000;

/// How a [`Percentiles`] was computed; the JSON carries it as `method`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Nearest rank on the stored values (the value at rank ⌈q·n⌉ of the sorted sample): every
    /// percentile is one of the measured values.
    #[default]
    Exact,
    /// From an HDR histogram with 3 significant figures: within 0.1 % of the value (a 1 ms
    /// latency may print as 1.000447 ms, the histogram's bucket), used above [`EXACT_UP_TO`] values.
    Histogram,
}

/// Percentiles of a sample (ns): exact up to [`EXACT_UP_TO`] values, from a histogram beyond
/// ([`Method`]). The one percentile type of the workspace: every tool's latencies and quanta are
/// summed up by it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Percentiles {
    /// Sample size.
    pub count: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// How they were computed.
    pub method: Method,
}

impl Percentiles {
    /// Of histogram `h` ([`Method::Histogram`]).
    pub fn of(h: &Histogram<u64>) -> Percentiles {
        if h.is_empty() {
            return Percentiles::default();
        }
        Percentiles {
            count: h.len(),
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            p99: h.value_at_quantile(0.99),
            max: h.max(),
            mean: h.mean(),
            method: Method::Histogram,
        }
    }

    /// Of the sample `values` (any order): exact up to [`EXACT_UP_TO`] values.
    pub fn of_values(values: &[u64]) -> Percentiles {
        if values.len() > EXACT_UP_TO {
            return Percentiles::of(&hist_of(values));
        }
        let mut v = values.to_vec();
        v.sort_unstable();
        Percentiles::of_sorted(&v)
    }

    /// Of a sorted sample, exactly.
    fn of_sorted(v: &[u64]) -> Percentiles {
        let Some(&max) = v.last() else { return Percentiles::default() };
        let sum: u128 = v.iter().map(|&x| u128::from(x)).sum();
        Percentiles {
            count: v.len() as u64,
            p50: nearest_rank(v, 500_000),
            p90: nearest_rank(v, 900_000),
            p99: nearest_rank(v, 990_000),
            max,
            mean: sum as f64 / v.len() as f64,
            method: Method::Exact,
        }
    }
}

/// The value at rank ⌈q·n⌉ (from 1) of the sorted, non-empty sample `v`, q in millionths. The rank
/// is computed in integers: in floating point 99.9 % of 1000 values is 0.999… × 1000 = 999.000…1,
/// whose ceiling would be rank 1000.
fn nearest_rank(v: &[u64], millionths: u64) -> u64 {
    let rank = (u128::from(millionths) * v.len() as u128).div_ceil(1_000_000);
    v[(rank as usize).clamp(1, v.len()) - 1]
}

/// The `p`-th percentile (0-100, to a ten-thousandth of a percent) of `values` (any order), as
/// [`Percentiles`] computes it (nearest rank up to [`EXACT_UP_TO`] values, the histogram beyond); 0
/// for an empty sample.
pub fn percentile(values: &[u64], p: f64) -> u64 {
    let q = (p / 100.0).clamp(0.0, 1.0);
    if values.is_empty() {
        return 0;
    }
    if values.len() > EXACT_UP_TO {
        return hist_of(values).value_at_quantile(q);
    }
    let mut v = values.to_vec();
    v.sort_unstable();
    nearest_rank(&v, (q * 1e6).round() as u64)
}

/// A sample being collected: its values while there are at most [`EXACT_UP_TO`], then a histogram.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    values: Vec<u64>,
    hist: Option<Histogram<u64>>,
}

impl Sample {
    /// Adds a value.
    pub fn record(&mut self, v: u64) {
        if let Some(h) = &mut self.hist {
            let _ = h.record(v);
        } else if self.values.len() < EXACT_UP_TO {
            self.values.push(v);
        } else {
            let mut h = hist_of(&self.values);
            let _ = h.record(v);
            self.values = Vec::new();
            self.hist = Some(h);
        }
    }

    /// Its percentiles.
    pub fn percentiles(&self) -> Percentiles {
        match &self.hist {
            Some(h) => Percentiles::of(h),
            None => Percentiles::of_values(&self.values),
        }
    }
}

/// One task's figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TaskSummary {
    /// Its id in the trace.
    pub task: u32,
    /// Its name (the last Task record), or `task N`.
    pub name: String,
    /// CPU time (ns), stretches cut by the recording included.
    pub cpu_ns: u64,
    /// CPU time over the recording's length × CPUs.
    pub share: f64,
    /// Stretches on a CPU, by how they ended (complete stretches only).
    pub ended: BTreeMap<String, u64>,
    /// Lengths of complete stretches (the effective quanta of Etsion et al.).
    pub quantum: Percentiles,
    /// From a wake-up to its next stretch.
    pub wake_latency: Percentiles,
    /// Requests by outcome.
    pub requests: BTreeMap<String, u64>,
    /// Notifications from the scheduler.
    pub notified: u64,
}

/// A whole trace's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The header.
    pub header: Header,
    /// First and last time seen (ns): the recording's start and its End record, or the last record.
    pub start_ns: u64,
    /// See `start_ns`.
    pub end_ns: u64,
    /// Records read.
    pub records: u64,
    /// Per task, by id.
    pub tasks: Vec<TaskSummary>,
}

impl Summary {
    /// The trace's length, `end_ns − start_ns` (0 for a trace whose End record lies before its start).
    pub fn length(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

#[derive(Default)]
struct Acc {
    s: TaskSummary,
    quantum: Sample,
    latency: Sample,
    woke: Option<u64>,
}

fn hist() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant figures is valid")
}

fn hist_of(values: &[u64]) -> Histogram<u64> {
    let mut h = hist();
    for &v in values {
        let _ = h.record(v);
    }
    h
}

/// Builds a summary from `records` of a trace with `header`, streaming (it keeps one entry per task).
pub fn summarize<E>(
    header: &Header,
    records: impl IntoIterator<Item = Result<Record, E>>,
) -> Result<Summary, E> {
    let mut tasks: BTreeMap<u32, Acc> = BTreeMap::new();
    let (mut end, mut n) = (header.start_ns, 0u64);
    let mut ended = None;
    for r in records {
        let r = r?;
        n += 1;
        match r {
            Record::Task { task, name, .. } => entry(&mut tasks, task).s.name = name,
            Record::Run { task, start, end: e, why, complete, .. } => {
                end = end.max(e);
                let a = entry(&mut tasks, task);
                a.s.cpu_ns = a.s.cpu_ns.saturating_add(e.saturating_sub(start));
                if let Some(w) = a.woke.take() {
                    a.latency.record(start.saturating_sub(w));
                }
                if complete {
                    *a.s.ended.entry(why.name().into()).or_default() += 1;
                    a.quantum.record(e.saturating_sub(start));
                }
            }
            Record::Wake { task, at, .. } => {
                end = end.max(at);
                let a = entry(&mut tasks, task);
                a.woke.get_or_insert(at);
            }
            Record::JobEnd { task, outcome, at, .. } => {
                end = end.max(at);
                *entry(&mut tasks, task).s.requests.entry(outcome_name(outcome).into()).or_default() += 1;
            }
            Record::Notify { task, at, .. } => {
                end = end.max(at);
                entry(&mut tasks, task).s.notified += 1;
            }
            Record::Release { at, .. } | Record::Tick { at, .. } | Record::Mark { at, .. } => {
                end = end.max(at)
            }
            Record::End { at } => ended = Some(at),
        }
    }
    let end = ended.unwrap_or(end);
    let capacity = (end.saturating_sub(header.start_ns) as f64 * header.cpus as f64).max(1.0);
    let tasks = tasks
        .into_values()
        .map(|mut a| {
            if a.s.name.is_empty() {
                a.s.name = format!("task {}", a.s.task);
            }
            a.s.share = a.s.cpu_ns as f64 / capacity;
            a.s.quantum = a.quantum.percentiles();
            a.s.wake_latency = a.latency.percentiles();
            a.s
        })
        .collect();
    Ok(Summary { header: header.clone(), start_ns: header.start_ns, end_ns: end, records: n, tasks })
}

fn entry(t: &mut BTreeMap<u32, Acc>, id: u32) -> &mut Acc {
    t.entry(id)
        .or_insert_with(|| Acc { s: TaskSummary { task: id, ..Default::default() }, ..Default::default() })
}

/// The name of an outcome, as in the JSON.
pub fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Met => "met",
        Outcome::Missed => "missed",
        Outcome::Discarded => "discarded",
        Outcome::Aborted => "aborted",
        Outcome::Unfinished => "unfinished",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EndReason, Source};

    #[test]
    fn nearest_rank_is_counted_in_integers() {
        let v: Vec<u64> = (1..=1000).rev().collect();
        assert_eq!(percentile(&v, 99.9), 999); // ⌈0.999 × 1000⌉, not the float's 1000
        assert_eq!(percentile(&v, 50.0), 500);
        assert_eq!(percentile(&v, 99.0), 990);
        assert_eq!(percentile(&v, 100.0), 1000);
        assert_eq!(percentile(&v, 0.0), 1); // rank 0 is the smallest value
        assert_eq!(percentile(&v, 0.01), 1);
        assert_eq!(percentile(&v, 99.99), 1000);
        let p = Percentiles::of_values(&v);
        assert_eq!((p.p50, p.p90, p.p99, p.max), (500, 900, 990, 1000));
        // 0.1 × 10 and 0.9 × 10 are not whole in binary either.
        let ten: Vec<u64> = (1..=10).collect();
        assert_eq!((percentile(&ten, 10.0), percentile(&ten, 90.0), percentile(&ten, 70.0)), (1, 9, 7));
    }

    #[test]
    fn percentiles_are_nearest_rank_up_to_the_limit_and_from_the_histogram_beyond() {
        let s: Vec<u64> = (1..=100).rev().collect();
        assert_eq!((percentile(&s, 50.0), percentile(&s, 99.0), percentile(&s, 100.0)), (50, 99, 100));
        assert_eq!(percentile(&[7], 90.0), 7);
        assert_eq!(percentile(&[], 50.0), 0);
        let p = Percentiles::of_values(&s);
        assert_eq!((p.count, p.p50, p.p90, p.p99, p.max, p.method), (100, 50, 90, 99, 100, Method::Exact));
        assert!((p.mean - 50.5).abs() < 1e-9);
        // Nearest rank: of 1..=10, the median is the 5th value and p90 the 9th, p99 the 10th.
        let ten: Vec<u64> = (1..=10).collect();
        let p = Percentiles::of_values(&ten);
        assert_eq!((p.p50, p.p90, p.p99), (5, 9, 10));
        // A job of exactly 1 ms is 1 ms, not the histogram's bucket (1,000,447 ns).
        let p = Percentiles::of_values(&[1_000_000; 10]);
        assert_eq!((p.p50, p.max, p.mean), (1_000_000, 1_000_000, 1e6));
        let big = 1_234_567_891u64;
        assert_eq!(percentile(&[big], 50.0), big);
        // Beyond the limit, the histogram: within 0.1 %, and it says so.
        let many: Vec<u64> = (0..=EXACT_UP_TO as u64).map(|i| 1_000_000 + i).collect();
        let p = Percentiles::of_values(&many);
        assert_eq!(p.method, Method::Histogram);
        let exact = 1_000_000 + EXACT_UP_TO as u64 / 2;
        assert!(p.p50.abs_diff(exact) <= exact / 1000, "{}", p.p50);
        // A streamed sample switches at the same count, and agrees with the slice.
        let mut smp = Sample::default();
        for &v in &many[..EXACT_UP_TO] {
            smp.record(v);
        }
        assert_eq!(smp.percentiles(), Percentiles::of_values(&many[..EXACT_UP_TO]));
        smp.record(many[EXACT_UP_TO]);
        assert_eq!(smp.percentiles(), p);
    }

    #[test]
    fn a_hand_made_trace_sums_up_as_computed_by_hand() {
        let h = Header::new(Source::Hourglass { kernel: "k".into() }, 2, "CLOCK_MONOTONIC", 0, None);
        let recs = vec![
            Record::Task { task: 1, process: 1, name: "a".into() },
            Record::Wake { task: 1, cpu: None, at: 0 },
            Record::Release { task: 1, job: 0, at: 0, deadline: Some(10) },
            Record::Run { task: 1, cpu: 0, start: 2, end: 6, why: EndReason::Preempted, complete: true },
            Record::Run { task: 1, cpu: 1, start: 7, end: 9, why: EndReason::Blocked, complete: true },
            Record::JobEnd { task: 1, job: 0, at: 9, outcome: Outcome::Met },
            Record::Wake { task: 1, cpu: None, at: 12 },
            Record::Run { task: 2, cpu: 0, start: 6, end: 20, why: EndReason::TraceEnd, complete: false },
            Record::Run { task: 1, cpu: 1, start: 15, end: 20, why: EndReason::TraceEnd, complete: false },
            Record::Notify { task: 1, at: 16, deadline: 18 },
            Record::End { at: 20 },
        ];
        let s = summarize::<()>(&h, recs.into_iter().map(Ok)).unwrap();
        assert_eq!((s.end_ns, s.records, s.tasks.len()), (20, 11, 2));
        let a = &s.tasks[0];
        assert_eq!((a.name.as_str(), a.cpu_ns, a.notified), ("a", 11, 1));
        assert!((a.share - 11.0 / 40.0).abs() < 1e-12);
        assert_eq!(a.ended, BTreeMap::from([("blocked".into(), 1), ("preempted".into(), 1)]));
        assert_eq!((a.quantum.count, a.quantum.max), (2, 4));
        // Woken at 0, ran at 2; woken at 12, ran at 15.
        assert_eq!((a.wake_latency.count, a.wake_latency.p50, a.wake_latency.max), (2, 2, 3));
        assert_eq!(a.requests, BTreeMap::from([("met".into(), 1)]));
        let b = &s.tasks[1];
        assert_eq!((b.name.as_str(), b.cpu_ns, b.quantum.count), ("task 2", 14, 0));
    }

    #[test]
    fn overlapping_runs_of_a_hostile_trace_saturate_instead_of_wrapping() {
        // Two runs of 2^63 ns each (the reader accepts them: each ends after it starts): the sum is
        // held at u64::MAX (found by the trace fuzz target, where it overflowed).
        let h = Header::new(Source::Hourglass { kernel: "k".into() }, 2, "CLOCK_MONOTONIC", 0, None);
        let half = 1u64 << 63;
        let run =
            |cpu| Record::Run { task: 1, cpu, start: 0, end: half, why: EndReason::Exit, complete: true };
        let s = summarize::<()>(&h, [run(0), run(1)].into_iter().map(Ok)).unwrap();
        assert_eq!(s.tasks[0].cpu_ns, u64::MAX);
    }

    #[test]
    fn records_that_contradict_their_order_give_zero_not_a_wrapped_length() {
        // Records not from the reader (which refuses a run that ends before it starts): a run
        // backwards and an End before the header's start count nothing rather than wrapping.
        let h = Header::new(Source::Hourglass { kernel: "k".into() }, 1, "CLOCK_MONOTONIC", 100, None);
        let back =
            Record::Run { task: 1, cpu: 0, start: 150, end: 120, why: EndReason::Exit, complete: true };
        let s = summarize::<()>(&h, [back, Record::End { at: 50 }].into_iter().map(Ok)).unwrap();
        assert_eq!((s.length(), s.tasks[0].cpu_ns, s.tasks[0].quantum.max), (0, 0, 0));
    }
}
