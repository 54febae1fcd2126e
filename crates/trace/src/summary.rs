//! What a trace says task by task, read in one pass: CPU time and share, stretches on CPUs by how
//! they ended, wake-up latency (from a Wake record to the task's next stretch), and requests by
//! outcome. The same for a simulated run and a recorded one.
//!
//! **The vocabulary** every command and output uses ([`GLOSSARY`] holds the definitions the outputs
//! print, and docs/glossary.md the same words):
//!
//! - A request's **outcome** is one of five, disjoint ([`crate::Outcome`], counted by [`Requests`]):
//!   **met** (finished by its deadline), **late** (not finished by its deadline and not dropped:
//!   finished after it, or still open at the end of the run with its deadline passed), **discarded**
//!   (dropped by its task when the scheduler told it the request would miss, `on_miss =
//!   "discard"`), **aborted** (dropped at its deadline, `on_miss = "abort"`), **unfinished** (still
//!   open at the end, its deadline not passed: its outcome is unknown).
//! - **Missed** is late + discarded + aborted: every request whose deadline passed without it
//!   finishing in time. Unfinished requests are not missed (nor met).
//! - **Wake-up latency** is the time from a task becoming runnable to its running. Measured two
//!   ways, named apart: `smartsim run` (its `latency_ns`, column `wake→dispatch`) counts it at the
//!   dispatch, and from a periodic request's nominal release; a trace's analyses (here:
//!   [`TaskSummary::wake_latency`], column `wake→run`) count it from the Wake record to the start
//!   of the task's next stretch on a CPU. They differ twice: the Wake record of a periodic request
//!   is at its release as it happened (later than the nominal one by its jitter and its timer's
//!   resolution); and a trace holds no stretch of no length, so a task dispatched that blocks again
//!   at once (it discards its request when it hears of the notification) has its wait run on to
//!   its next real stretch, from the first wake-up: on such a task `wake→run` is the longer.
//! - **Response time** is the time from a request's release to its finish (`smartsim run`'s
//!   `response_ns`), met or late; a request dropped or unfinished has none.
//! - A stretch on a CPU ends **preempted** (taken off while still runnable, for another task or by
//!   the scheduler's decision before its slice was used up), at its **slice end** (its slice or
//!   quantum was used up), **blocked**, **yielded**, at its **exit**, or at the **trace end**
//!   ([`crate::EndReason`]).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::{Header, Outcome, Record};

/// The terms of the vocabulary (see the module documentation), each with its definition, in the
/// order docs/glossary.md gives them: the HTML reports' glossary and the tables' footers print
/// these, and a test checks that docs/glossary.md holds each definition word for word.
pub const GLOSSARY: &[(&str, &str)] = &[
    ("met", "a request that finished by its deadline."),
    (
        "late",
        "a request not finished by its deadline and not dropped: it finished after its deadline, or was \
         still open at the end of the run (or recording) with its deadline passed, and then has no finish.",
    ),
    (
        "discarded",
        "a request its task dropped when the scheduler told it the request would miss its deadline \
         (on_miss = \"discard\").",
    ),
    ("aborted", "a request dropped at its deadline, unfinished (on_miss = \"abort\")."),
    (
        "unfinished",
        "a request still open at the end of the run (or recording) with its deadline not passed: its \
         outcome is unknown, neither met nor missed.",
    ),
    (
        "missed",
        "late + discarded + aborted: the requests whose deadline passed without their finishing by it.",
    ),
    ("requests", "met + missed + unfinished: every request released."),
    (
        "wake-up latency",
        "the time from a task becoming runnable to its running, measured two ways, wake→dispatch and \
         wake→run.",
    ),
    (
        "wake→dispatch",
        "wake-up latency as smartsim run measures it (JSON latency_ns): from the task becoming runnable \
         (for a periodic task, from its request's nominal release) to its dispatch on a CPU, even a \
         dispatch it leaves at once.",
    ),
    (
        "wake→run",
        "wake-up latency as a trace's analyses measure it (JSON wake_latency; klogger report's \
         latency_ns): from a Wake record, the first since the task last ran, to the start of its next stretch on a CPU. A trace holds no \
         stretch of no length, so when a task is dispatched and blocks again at once (it discards its \
         request on hearing of the notification) the wait runs on to its next stretch: on such a task \
         wake→run is longer than wake→dispatch.",
    ),
    (
        "response time",
        "from a request's nominal release to its finish, met or late (JSON response_ns); a request \
         dropped or unfinished has none.",
    ),
    (
        "preempted",
        "a stretch on a CPU that ended with its task still runnable and its slice not used up: another \
         task took the CPU, or the scheduler decided again. A kernel recording (klogger) cannot tell a \
         slice end from a preemption and calls both preempted.",
    ),
    (
        "slice end",
        "a stretch on a CPU that ended because its slice (quantum) was used up, its task still runnable \
         (JSON slice_end).",
    ),
    ("blocked", "a stretch on a CPU that ended because its task slept (for its next request, a timer, I/O)."),
    (
        "on time",
        "a frame of a media player shown within its window (20 ms by default) of the time it was wanted on \
         screen (Nieh §6.4.1).",
    ),
    ("early", "a frame shown more than its window before the time it was wanted."),
    ("late frame", "a frame shown more than its window after the time it was wanted."),
    ("dropped", "a frame the player did not show: it expected it to be late, was told so before it began it, or its device overwrote it before the player took it (`ring`)."),
    ("display error", "when a frame was shown minus when it was wanted (mean and standard deviation)."),
    ("interdisplay", "the time between two frames shown in turn (Nieh §6.3's time delta)."),
    (
        "latency band",
        "the requests of a task with `bands`, counted by the band their latency falls in: from the release \
         (or the user's event) to the request done, its server's work included; not done: released and not \
         done by the end of the run.",
    ),
    (
        "iteration",
        "one turn of a fork-and-wait job's loop (`model = \"forkwait\"`): its forks and its children, from \
         the first fork to the last child's exit (Nieh table 2-1's \"time to execute one loop iteration\").",
    ),
];

/// The footer of a table that uses the terms `terms`: each with its definition, then where the
/// glossary is (docs/glossary.md).
pub fn footer(terms: &[&str]) -> String {
    let mut out = String::new();
    for t in terms {
        if let Some((term, def)) = GLOSSARY.iter().find(|(k, _)| k == t) {
            out.push_str(&format!("{term}: {def}\n"));
        }
    }
    out.push_str("(every term: docs/glossary.md)\n");
    out
}

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

/// A task's requests by outcome (see the module documentation): the one count of outcomes every
/// output uses, with the derived totals. Serialized with `requests` (all) and `missed` beside the
/// five outcomes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Requests {
    /// Finished by their deadline.
    pub met: u64,
    /// Not finished by their deadline and not dropped.
    pub late: u64,
    /// Dropped by the task when told they would miss.
    pub discarded: u64,
    /// Dropped at their deadline.
    pub aborted: u64,
    /// Still open at the end, their deadline not passed.
    pub unfinished: u64,
}

impl Requests {
    /// Counts one request that ended with `o`.
    pub fn add(&mut self, o: Outcome) {
        let n = match o {
            Outcome::Met => &mut self.met,
            Outcome::Late => &mut self.late,
            Outcome::Discarded => &mut self.discarded,
            Outcome::Aborted => &mut self.aborted,
            Outcome::Unfinished => &mut self.unfinished,
        };
        *n = n.saturating_add(1);
    }

    /// Requests that ended with `o`.
    pub fn count(&self, o: Outcome) -> u64 {
        match o {
            Outcome::Met => self.met,
            Outcome::Late => self.late,
            Outcome::Discarded => self.discarded,
            Outcome::Aborted => self.aborted,
            Outcome::Unfinished => self.unfinished,
        }
    }

    /// Missed: late + discarded + aborted (unfinished ones are not).
    pub fn missed(&self) -> u64 {
        self.late.saturating_add(self.discarded).saturating_add(self.aborted)
    }

    /// Every request: met + missed + unfinished.
    pub fn total(&self) -> u64 {
        self.met.saturating_add(self.missed()).saturating_add(self.unfinished)
    }

    /// The columns of requests every table shows, in this order (terms of [`GLOSSARY`]).
    pub const COLUMNS: [&'static str; 7] =
        ["requests", "met", "missed", "late", "discarded", "aborted", "unfinished"];

    /// The counts under [`Requests::COLUMNS`], in its order.
    pub fn cells(&self) -> [u64; 7] {
        [self.total(), self.met, self.missed(), self.late, self.discarded, self.aborted, self.unfinished]
    }
}

impl Serialize for Requests {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut o = s.serialize_struct("Requests", 7)?;
        o.serialize_field("requests", &self.total())?;
        o.serialize_field("met", &self.met)?;
        o.serialize_field("missed", &self.missed())?;
        o.serialize_field("late", &self.late)?;
        o.serialize_field("discarded", &self.discarded)?;
        o.serialize_field("aborted", &self.aborted)?;
        o.serialize_field("unfinished", &self.unfinished)?;
        o.end()
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
    /// Wake-up latency, `wake→run`: from a Wake record (the first since the task last ran) to the
    /// start of its next stretch on a CPU (see the module documentation).
    pub wake_latency: Percentiles,
    /// Requests by outcome.
    pub requests: Requests,
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
    /// Requests released and not ended yet: job → deadline. What is left at the end is counted as
    /// the simulator counts it: late if its deadline has come, else unfinished.
    open: BTreeMap<u32, Option<u64>>,
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
            Record::JobEnd { task, job, outcome, at } => {
                end = end.max(at);
                let a = entry(&mut tasks, task);
                a.open.remove(&job);
                a.s.requests.add(outcome);
            }
            Record::Release { task, job, at, deadline } => {
                end = end.max(at);
                entry(&mut tasks, task).open.insert(job, deadline);
            }
            Record::Notify { task, at, .. } => {
                end = end.max(at);
                entry(&mut tasks, task).s.notified += 1;
            }
            Record::Tick { at, .. } | Record::Mark { at, .. } => end = end.max(at),
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
            // A request the trace leaves open ends with it.
            for d in a.open.values() {
                a.s.requests.add(if d.is_some_and(|d| d <= end) {
                    Outcome::Late
                } else {
                    Outcome::Unfinished
                });
            }
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
        Outcome::Late => "late",
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
    fn a_request_left_open_by_the_trace_ends_with_it() {
        // Released, never ended: late if its deadline came by the end, else unfinished; a task
        // known only by its request is still a row.
        let h = Header::new(Source::Hourglass { kernel: "k".into() }, 1, "c", 0, None);
        let recs = [
            Record::Release { task: 0, job: 0, at: 0, deadline: Some(20) },
            Record::Release { task: 0, job: 1, at: 10, deadline: Some(40) },
            Record::Release { task: 7, job: 0, at: 10, deadline: None },
            Record::Release { task: 0, job: 2, at: 20, deadline: Some(100) },
            Record::JobEnd { task: 0, job: 2, at: 30, outcome: Outcome::Met },
            Record::End { at: 40 },
        ];
        let s = summarize(&h, recs.into_iter().map(Ok::<_, ()>)).unwrap();
        let r = &s.tasks[0].requests;
        assert_eq!((r.met, r.late, r.unfinished, r.total()), (1, 2, 0, 3));
        assert_eq!(s.tasks[1].task, 7);
        assert_eq!((s.tasks[1].requests.unfinished, s.tasks[1].requests.total()), (1, 1));
    }

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
        assert_eq!(a.requests, Requests { met: 1, ..Default::default() });
        let b = &s.tasks[1];
        assert_eq!((b.name.as_str(), b.cpu_ns, b.quantum.count), ("task 2", 14, 0));
    }

    #[test]
    fn requests_count_five_disjoint_outcomes_and_missed_is_late_discarded_aborted() {
        let mut r = Requests::default();
        let outcomes = [
            (Outcome::Met, 5),
            (Outcome::Late, 4),
            (Outcome::Discarded, 3),
            (Outcome::Aborted, 2),
            (Outcome::Unfinished, 1),
        ];
        for (o, n) in outcomes {
            for _ in 0..n {
                r.add(o);
            }
        }
        for (o, n) in outcomes {
            assert_eq!(r.count(o), n, "{o:?}");
        }
        assert_eq!((r.missed(), r.total()), (4 + 3 + 2, 15));
        let v = serde_json::to_value(r).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"requests": 15, "met": 5, "missed": 9, "late": 4, "discarded": 3,
                               "aborted": 2, "unfinished": 1})
        );
        // Written `late`; `missed`, as files of before wrote it, is read as late.
        assert_eq!(serde_json::to_value(Outcome::Late).unwrap(), "late");
        assert_eq!(serde_json::from_str::<Outcome>("\"missed\"").unwrap(), Outcome::Late);
        assert_eq!(outcome_name(Outcome::Late), "late");
        // Every term a footer may name is in the glossary, once.
        for (k, (term, def)) in GLOSSARY.iter().enumerate() {
            assert!(!def.is_empty() && GLOSSARY[k + 1..].iter().all(|(t, _)| t != term), "{term}");
        }
        assert!(footer(&["missed"]).starts_with("missed: late + discarded + aborted"));
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
