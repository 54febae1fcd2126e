//! Two traces of the same workload side by side, task by task (matched by name): CPU time (as a
//! percentage of one CPU over each recording's length, so that a one-CPU simulation and a run on a
//! larger machine compare), CPU share, effective
//! quanta, wake-up latency (`wake→run`), requests by outcome (met, missed and its late, discarded and
//! aborted, unfinished; as [`Requests`] counts them), notifications; with the differences B − A. The
//! use: `smartsim run W.toml --trace sim.trace` against a real run of W (hourglass, klogger), or two
//! policies, or two kernels.

use std::collections::{HashMap, VecDeque};

use serde::Serialize;

use crate::summary::{Percentiles, Requests, Summary, TaskSummary};

/// One side's figures for a task.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Side {
    /// CPU time over the recording's length, in % of one CPU.
    pub cpu_pct: f64,
    /// CPU share of the recording's capacity (length × CPUs; 0..1).
    pub share: f64,
    /// CPU time (ns).
    pub cpu_ns: u64,
    /// Effective quanta (complete stretches).
    pub quantum: Percentiles,
    /// Wake-up latency (`wake→run`).
    pub wake_latency: Percentiles,
    /// Requests met by their deadline.
    pub met: u64,
    /// Requests missed: late + discarded + aborted (unfinished ones are not).
    pub missed: u64,
    /// Requests by outcome.
    pub requests: Requests,
    /// Notifications.
    pub notified: u64,
}

impl Side {
    fn of(t: &TaskSummary, len: u64) -> Side {
        Side {
            cpu_pct: 100.0 * t.cpu_ns as f64 / len.max(1) as f64,
            share: t.share,
            cpu_ns: t.cpu_ns,
            quantum: t.quantum.clone(),
            wake_latency: t.wake_latency.clone(),
            met: t.requests.met,
            missed: t.requests.missed(),
            requests: t.requests,
            notified: t.notified,
        }
    }
}

/// The differences B − A of a task in both traces.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Delta {
    /// CPU time, in percentage points of one CPU.
    pub cpu_pp: f64,
    /// Median effective quantum (ns).
    pub quantum_p50_ns: i64,
    /// Median and 99th-percentile wake-up latency (ns).
    pub wake_p50_ns: i64,
    /// See `wake_p50_ns`.
    pub wake_p99_ns: i64,
    /// Requests met.
    pub met: i64,
    /// Requests missed.
    pub missed: i64,
}

/// A task found in both traces.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskDiff {
    /// Its name.
    pub name: String,
    /// In trace A.
    pub a: Side,
    /// In trace B.
    pub b: Side,
    /// B − A.
    pub delta: Delta,
}

/// Two traces compared.
#[derive(Clone, Debug, Serialize)]
pub struct Diff {
    /// Trace A's source tool, CPUs and length (ns).
    pub a: (String, u32, u64),
    /// Trace B's.
    pub b: (String, u32, u64),
    /// Tasks in both, in A's order.
    pub tasks: Vec<TaskDiff>,
    /// Names only in A, and only in B.
    pub only_in_a: Vec<String>,
    /// See `only_in_a`.
    pub only_in_b: Vec<String>,
}

/// Compares `a` and `b` task by task. Tasks are matched by name; where a name occurs several times
/// in one trace (threads of one name), the k-th of A is matched with the k-th of B, and the rest
/// count as unmatched. Linear in the tasks of both (B's tasks are looked up by name in a map).
pub fn diff(a: &Summary, b: &Summary) -> Diff {
    // Exact, then held to i64: a file's times and counts go up to 2^64 − 1.
    let d = |x: u64, y: u64| {
        (i128::from(y) - i128::from(x)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    };
    // B's tasks of each name, in B's order, the next to match first.
    let mut by_name: HashMap<&str, VecDeque<usize>> = HashMap::new();
    for (i, tb) in b.tasks.iter().enumerate() {
        by_name.entry(tb.name.as_str()).or_default().push_back(i);
    }
    let mut used = vec![false; b.tasks.len()];
    let mut tasks = Vec::new();
    let mut only_in_a = Vec::new();
    for ta in &a.tasks {
        let Some(i) = by_name.get_mut(ta.name.as_str()).and_then(VecDeque::pop_front) else {
            only_in_a.push(ta.name.clone());
            continue;
        };
        let tb = &b.tasks[i];
        used[i] = true;
        let (sa, sb) = (Side::of(ta, a.length()), Side::of(tb, b.length()));
        let delta = Delta {
            cpu_pp: sb.cpu_pct - sa.cpu_pct,
            quantum_p50_ns: d(sa.quantum.p50, sb.quantum.p50),
            wake_p50_ns: d(sa.wake_latency.p50, sb.wake_latency.p50),
            wake_p99_ns: d(sa.wake_latency.p99, sb.wake_latency.p99),
            met: d(sa.met, sb.met),
            missed: d(sa.missed, sb.missed),
        };
        tasks.push(TaskDiff { name: ta.name.clone(), a: sa, b: sb, delta });
    }
    let only_in_b = b.tasks.iter().zip(&used).filter(|(_, u)| !**u).map(|(t, _)| t.name.clone()).collect();
    let side = |s: &Summary| (s.header.source.tool().to_string(), s.header.cpus, s.length());
    Diff { a: side(a), b: side(b), tasks, only_in_a, only_in_b }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::summarize;
    use crate::{EndReason, Header, Outcome, Record, Source};

    fn trace(cpu_of_x: u64, with_z: bool) -> Summary {
        let h = Header::new(Source::Hourglass { kernel: "k".into() }, 1, "CLOCK_MONOTONIC", 0, None);
        let mut recs = vec![
            Record::Task { task: 1, process: 1, name: "x".into() },
            Record::Task { task: 2, process: 2, name: "y".into() },
            Record::Run { task: 1, cpu: 0, start: 0, end: cpu_of_x, why: EndReason::Blocked, complete: true },
            Record::Run {
                task: 2,
                cpu: 0,
                start: cpu_of_x,
                end: 100,
                why: EndReason::Preempted,
                complete: true,
            },
            Record::JobEnd { task: 1, job: 0, at: cpu_of_x, outcome: Outcome::Met },
        ];
        if with_z {
            recs.push(Record::Task { task: 3, process: 3, name: "z".into() });
        }
        recs.push(Record::End { at: 100 });
        summarize::<()>(&h, recs.into_iter().map(Ok)).unwrap()
    }

    #[test]
    fn tasks_are_matched_by_name_and_differences_are_b_minus_a() {
        let d = diff(&trace(40, true), &trace(60, false));
        assert_eq!(d.only_in_a, vec!["z".to_string()]);
        assert!(d.only_in_b.is_empty());
        let x = d.tasks.iter().find(|t| t.name == "x").unwrap();
        assert!((x.delta.cpu_pp - 20.0).abs() < 1e-9);
        assert_eq!((x.a.cpu_ns, x.b.cpu_ns, x.delta.met, x.delta.missed), (40, 60, 0, 0));
        let y = d.tasks.iter().find(|t| t.name == "y").unwrap();
        assert!((y.delta.cpu_pp + 20.0).abs() < 1e-9);
        assert_eq!(y.delta.quantum_p50_ns, -20);
    }

    #[test]
    fn times_near_2_to_the_64_give_clamped_differences_not_wrapped_ones() {
        // Trace A: a quantum of 2^64 − 2 ns and an End record before the header's start (a damaged
        // file); trace B: a quantum of 1 ns. Before, the length underflowed and the difference of
        // the medians wrapped to a positive number.
        let h = Header::new(Source::Hourglass { kernel: "k".into() }, 1, "CLOCK_MONOTONIC", 10, None);
        let run =
            |end| Record::Run { task: 1, cpu: 0, start: 1, end, why: EndReason::Blocked, complete: true };
        let name = Record::Task { task: 1, process: 1, name: "x".into() };
        let a =
            summarize::<()>(&h, [name.clone(), run(u64::MAX - 1), Record::End { at: 5 }].into_iter().map(Ok))
                .unwrap();
        let b = summarize::<()>(&h, [name, run(2), Record::End { at: 20 }].into_iter().map(Ok)).unwrap();
        assert_eq!((a.length(), b.length()), (0, 10));
        let d = diff(&a, &b);
        assert_eq!((d.a.2, d.b.2), (0, 10));
        let x = &d.tasks[0];
        assert_eq!((x.a.quantum.p50, x.b.quantum.p50), (u64::MAX - 2, 1));
        assert_eq!(x.delta.quantum_p50_ns, i64::MIN, "1 − (2^64 − 3), held to i64");
        assert_eq!(diff(&b, &a).tasks[0].delta.quantum_p50_ns, i64::MAX);
        assert!(x.delta.cpu_pp.is_finite());
    }
}
