//! Response-time analysis for fixed priorities on one CPU (`smartsim rta`): the exact worst-case
//! response time of each periodic task, with release jitter and blocking, after Audsley, Burns,
//! Richardson, Tindell and Wellings, "Applying new scheduling theory to static priority pre-emptive
//! scheduling" (Software Engineering Journal, 1993) and Tindell, Burns and Wellings, "An extendible
//! approach for analysing fixed priority hard real-time tasks" (Real-Time Systems 6, 1994), with
//! Lehoczky's busy period for deadlines beyond the period (RTSS 1990).
//!
//! Task `i` has worst-case execution `C_i`, period (least time between releases) `T_i`, relative
//! deadline `D_i`, release jitter `J_i` (its request may be released up to `J_i` after its nominal
//! release) and blocking `B_i` (the longest a lower-priority task can hold it up). The tasks that
//! interfere with it, `hp(i)`, are those of a higher priority *or the same* (equal priorities are
//! served first come, first served, so any of them may go first). Its `q`-th request of a level-i busy
//! period completes by the least fixed point of
//!
//! ```text
//! w(q) = (q + 1)·C_i + B_i + Σ_{j ∈ hp(i)} ⌈(w(q) + J_j) / T_j⌉ · C_j
//! ```
//!
//! and responds in `R(q) = w(q) − q·T_i + J_i`; the busy period ends with the first `q` for which
//! `w(q) ≤ (q + 1)·T_i`, and the worst-case response time is the largest `R(q)` up to it. With
//! `D_i ≤ T_i` only `q = 0` is needed: `R_i = J_i + w_i` (Tindell's form). When the utilisation of
//! `hp(i)` and `i` reaches 1 the busy period never ends: the recurrence diverges and there is no bound.
//!
//! From a scenario: every `periodic` task, `C` the largest `exec` can draw, `T` its `period` (or the
//! least `interarrival` it can draw), `D` its `deadline`, `J` its `jitter` plus what its timer adds (a
//! tick-granular timer releases a request up to one tick late, an `rtc:<Hz>` one up to one of its
//! periods: release jitter, Regehr §5.5), priorities from `priority` (larger is more urgent); blocking
//! is given per task on the command line. The analysis is exact for preemptive fixed priorities on one
//! CPU with zero-cost context switches and high-resolution timers (the simulator's `fifo` policy), and
//! an upper bound with tick-granular ones (a property test checks both against the simulator).

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use workload::{Model, Nanos, Scenario, TimerKind};

/// One task as the analysis sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtaTask {
    /// Its name.
    pub name: String,
    /// Its priority (larger is more urgent).
    pub priority: i32,
    /// Worst-case execution time `C`.
    pub exec: Nanos,
    /// Least time between releases `T`.
    pub period: Nanos,
    /// Relative deadline `D`.
    pub deadline: Nanos,
    /// Release jitter `J`.
    pub jitter: Nanos,
    /// Blocking `B`.
    pub blocking: Nanos,
    /// CPU it may spin before each request (`busy_wait`, at most its period less its execution): the
    /// tasks below it see it as execution.
    pub spin: Nanos,
}

/// What the analysis found for one task.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Response {
    /// The task.
    pub name: String,
    /// Its worst-case response time, ns; `None` when the recurrence diverges.
    pub wcrt_ns: Option<Nanos>,
    /// Whether `wcrt_ns` is at most its deadline.
    pub schedulable: bool,
}

/// Responses longer than this are taken as divergence (a busy period of over a year).
const BOUND: u128 = 365 * 24 * 3600 * 1_000_000_000;

/// The worst-case response time of every task of `tasks` (see the module documentation).
pub fn analyse(tasks: &[RtaTask]) -> Vec<Response> {
    tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let hp: Vec<&RtaTask> = tasks
                .iter()
                .enumerate()
                .filter(|&(j, u)| j != i && u.priority >= t.priority)
                .map(|(_, u)| u)
                .collect();
            let wcrt = wcrt(t, &hp);
            Response {
                name: t.name.clone(),
                wcrt_ns: wcrt,
                schedulable: wcrt.is_some_and(|r| r <= t.deadline),
            }
        })
        .collect()
}

/// Task `t`'s worst-case response time against the tasks `hp` that may run before it.
fn wcrt(t: &RtaTask, hp: &[&RtaTask]) -> Option<Nanos> {
    // Utilisation of the level-i busy period: at 1 or more it may never end.
    let u: f64 = hp.iter().map(|j| (j.exec + j.spin) as f64 / j.period as f64).sum::<f64>()
        + t.exec as f64 / t.period as f64;
    if u >= 1.0 {
        return None;
    }
    let (c, period) = (u128::from(t.exec), u128::from(t.period));
    let mut worst: u128 = 0;
    let mut w: u128 = c + u128::from(t.blocking);
    for q in 0u128.. {
        // The least fixed point of w(q), from the one of q − 1 (w only grows with q).
        w = w.max((q + 1) * c + u128::from(t.blocking));
        loop {
            let interference: u128 = hp
                .iter()
                .map(|j| {
                    (w + u128::from(j.jitter)).div_ceil(u128::from(j.period)) * u128::from(j.exec + j.spin)
                })
                .sum();
            let next = (q + 1) * c + u128::from(t.blocking) + interference;
            if next > BOUND {
                return None;
            }
            if next == w {
                break;
            }
            w = next;
        }
        let r = w - q * period + u128::from(t.jitter);
        worst = worst.max(r);
        if w <= (q + 1) * period {
            break;
        }
    }
    Nanos::try_from(worst).ok()
}

/// The periodic tasks of `scn` as the analysis sees them, with `blocking` by task name; the tasks left
/// out (not periodic) are named in the second value. Refuses what the analysis cannot bound: more than
/// one CPU, an execution time with no largest value, a sporadic task with no least gap, a task left out
/// that could run before a periodic one, a blocking for a task that is not there.
pub fn from_scenario(
    scn: &Scenario,
    blocking: &BTreeMap<String, Nanos>,
) -> Result<(Vec<RtaTask>, Vec<String>)> {
    if scn.machine.cpus != 1 {
        bail!(
            "{}: machine.cpus = {}: the analysis is for one CPU (uniprocessor fixed priorities)",
            scn.path,
            scn.machine.cpus
        );
    }
    let mut tasks = Vec::new();
    let mut others = Vec::new();
    for t in &scn.tasks {
        let Model::Periodic(p) = &t.model else {
            others.push(t);
            continue;
        };
        let at = format!("{}:{}: task \"{}\"", t.source(&scn.path), t.line, t.name);
        let exec = p.exec.max().with_context(|| {
            format!("{at}: its exec has no largest value (exp, normal, ar1): give a fixed time or a range")
        })?;
        let period = match &p.interarrival {
            None => p.period,
            Some(gap) => match gap.min() {
                0 => bail!("{at}: its interarrival has no least gap above 0: give a fixed time or a range"),
                g => g,
            },
        };
        // A timer that fires on a tick, or on a periodic clock, releases the request up to a period of it late;
        // Linux 2.4's sleep, up to two ticks.
        let lateness = match t.effective_timer(&scn.machine) {
            TimerKind::Hr => 0,
            TimerKind::Tick | TimerKind::Linux24 if scn.machine.hz == 0 => 0,
            TimerKind::Tick => 1_000_000_000u64.div_ceil(u64::from(scn.machine.hz)),
            TimerKind::Linux24 => 2 * 1_000_000_000u64.div_ceil(u64::from(scn.machine.hz)),
            TimerKind::Rtc(f) => 1_000_000_000u64.div_ceil(u64::from(f)),
        };
        tasks.push(RtaTask {
            name: t.name.clone(),
            priority: t.priority,
            exec,
            period,
            deadline: p.deadline,
            jitter: t.jitter.unwrap_or(0).saturating_add(lateness),
            blocking: blocking.get(&t.name).copied().unwrap_or(0),
            spin: p.busy_wait.min(period.saturating_sub(exec)),
        });
    }
    if tasks.is_empty() {
        bail!("{}: no periodic task to analyse", scn.path);
    }
    let lowest = tasks.iter().map(|t| t.priority).min().expect("a task");
    if let Some(t) = others.iter().find(|t| t.priority >= lowest) {
        bail!(
            "{}:{}: task \"{}\" ({}) is not periodic and its priority {} is not below every periodic task's: it \
             could run before them, and the analysis cannot bound it",
            t.source(&scn.path),
            t.line,
            t.name,
            t.model.name(),
            t.priority
        );
    }
    for name in blocking.keys() {
        if !tasks.iter().any(|t| &t.name == name) {
            bail!("--blocking {name}=...: the scenario has no periodic task \"{name}\"");
        }
    }
    Ok((tasks, others.iter().map(|t| t.name.clone()).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn task(name: &str, priority: i32, exec: Nanos, period: Nanos) -> RtaTask {
        RtaTask {
            name: name.into(),
            priority,
            exec,
            period,
            deadline: period,
            jitter: 0,
            blocking: 0,
            spin: 0,
        }
    }

    #[test]
    fn regehrs_set_responds_in_3_and_29_ms() {
        // Regehr §5.5: 3 ms every 8 ms above 17 ms every 33 ms (rate monotonic).
        let r = analyse(&[task("t0", 2, 3 * MS, 8 * MS), task("t1", 1, 17 * MS, 33 * MS)]);
        assert_eq!(r[0].wcrt_ns, Some(3 * MS));
        assert_eq!(r[1].wcrt_ns, Some(29 * MS));
        assert!(r[0].schedulable && r[1].schedulable);
        // Task 1 with 19 ms of execution and 8 ms of release jitter: w = 19 + 4·3 = 31, R = 8 + 31 = 39.
        let t1 = RtaTask { exec: 19 * MS, jitter: 8 * MS, ..task("t1", 1, 0, 33 * MS) };
        let r = analyse(&[task("t0", 2, 3 * MS, 8 * MS), t1]);
        assert_eq!(r[1].wcrt_ns, Some(39 * MS));
        assert!(!r[1].schedulable, "39 ms is past its 33 ms deadline");
    }

    #[test]
    fn a_higher_task_s_spin_counts_below_it_and_not_for_itself() {
        // Task 0 may spin 2 ms before each request (busy_wait): task 1 below sees 5 ms every 8 ms.
        let t0 = RtaTask { spin: 2 * MS, ..task("t0", 2, 3 * MS, 8 * MS) };
        let r = analyse(&[t0.clone(), task("t1", 1, 10 * MS, 33 * MS)]);
        assert_eq!(r[0].wcrt_ns, Some(3 * MS), "its own response counts from its release, after the spin");
        // w = 10 + ceil(w/8)·5: 10 + 10 = 20, 10 + 15 = 25, 10 + 20 = 30, 10 + 20 = 30; without the
        // spin 10 + ceil(w/8)·3 = 16.
        assert_eq!(r[1].wcrt_ns, Some(30 * MS));
        let r = analyse(&[RtaTask { spin: 0, ..t0 }, task("t1", 1, 10 * MS, 33 * MS)]);
        assert_eq!(r[1].wcrt_ns, Some(16 * MS));
    }

    #[test]
    fn blocking_and_equal_priorities_add_to_the_response() {
        // Blocking adds once; a task of the same priority interferes as a higher one does.
        let a = RtaTask { blocking: 2 * MS, ..task("a", 1, 3 * MS, 10 * MS) };
        let r = analyse(&[a, task("b", 1, 4 * MS, 10 * MS)]);
        assert_eq!(r[0].wcrt_ns, Some(9 * MS));
        assert_eq!(r[1].wcrt_ns, Some(7 * MS));
    }

    #[test]
    fn a_full_cpu_diverges_and_a_long_deadline_takes_the_busy_period() {
        let r = analyse(&[task("a", 2, 5 * MS, 10 * MS), task("b", 1, 5 * MS, 10 * MS)]);
        assert_eq!(r[1].wcrt_ns, None, "utilisation 1: no bound");
        assert!(!r[1].schedulable);
        // Lehoczky's kind of example: C = 26, T = 70 under C = 52, T = 100, no deadline. Its busy period
        // holds three of its requests, and the worst is the second: w(0) = 26 + 52 = 78 (R 78, past 70);
        // w(1) = 52 + 2·52 = 156 (R 156 − 70 = 86, past 140); w(2) = 78 + 2·52 = 182 (R 42, within 210).
        let lo = RtaTask { deadline: Nanos::MAX, ..task("lo", 1, 26 * MS, 70 * MS) };
        let r = analyse(&[task("hi", 2, 52 * MS, 100 * MS), lo]);
        assert_eq!(r[1].wcrt_ns, Some(86 * MS));
    }
}
