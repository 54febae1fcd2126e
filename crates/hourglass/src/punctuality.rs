//! `hourglass bench punctuality`: how punctually this machine runs a real-time thread, as a benchmark
//! figure over several runs instead of a test's pass/fail.
//!
//! The probe is the one of Regehr's §5.3: a thread at `RTHIGH` (SCHED_FIFO, the highest priority) alone
//! on one CPU, released every 5 ms with 4 ms of work (`-w PERIODIC 4ms 5ms -i HR`), so 1 ms of slack a
//! period. Nothing in the machine should take a CPU from it for a millisecond, so every miss says
//! something about the machine: each run prints hits of the periods, and over the runs the minimum,
//! median and maximum hit rate.
//!
//! Each missed period is put down to one cause, from the probe's own timestamps:
//!
//! * **late wake-up**: the thread woke more than half the slack after the release (the timer fired
//!   late, or the CPU was not the guest's to run on at that moment);
//! * **stopped while runnable**: it woke in time but lost more than the slack to gaps in its own
//!   execution inside the period (interrupts, the kernel, or on a virtual machine the hypervisor
//!   running something else on the vCPU's physical CPU: the guest cannot tell these apart);
//! * **both**, when both hold; **other** when neither does (the two smaller losses added up).
//!
//! Beside them the bench prints the host's *steal* time on the probe's CPU during each run
//! (`/proc/stat`, kept by a paravirtualised guest kernel; 10 ms resolution), which is time the
//! hypervisor took that the guest could not use. Weak: steal is the only cause the guest can name;
//! a gap inside a period may be an interrupt on any machine.

use crate::output::percentile;
use crate::run::{Interval, RunResult};

/// The cause a missed period is put down to (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissCause {
    /// Woke more than half the slack after its release.
    LateWakeup,
    /// Lost more than the slack to gaps after waking.
    Stopped,
    /// Both of the above.
    Both,
    /// Neither alone: smaller losses that added up.
    Other,
}

/// What one missed period looked like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Miss {
    /// Its deadline, ns from the start of the run.
    pub deadline_ns: u64,
    /// How late the thread woke for its release (0 if it did not sleep for it), ns.
    pub late_wakeup_ns: u64,
    /// Time it was not running inside the period after waking, ns.
    pub stopped_ns: u64,
    /// The cause.
    pub cause: MissCause,
}

/// Classifies the missed periods of thread `thread` of a periodic run whose deadline equals its
/// period. `intervals` are the run's execution intervals (any threads, sorted by start), `wake_at_ns`
/// and `latencies_ns` its wake-ups and their lateness, `miss_at_ns` the deadlines it missed.
pub fn classify_misses(
    thread: u32,
    intervals: &[Interval],
    wake_at_ns: &[u64],
    latencies_ns: &[u64],
    miss_at_ns: &[u64],
    period_ns: u64,
    slack_ns: u64,
) -> Vec<Miss> {
    let mine: Vec<&Interval> = intervals.iter().filter(|i| i.thread == thread).collect();
    miss_at_ns
        .iter()
        .map(|&dl| {
            let release = dl.saturating_sub(period_ns);
            // The wake-up for this release, if the thread slept for it (wake-up − lateness = release).
            let late_wakeup_ns = wake_at_ns
                .iter()
                .zip(latencies_ns)
                .find(|(&at, &lat)| at.saturating_sub(lat) == release)
                .map_or(0, |(_, &lat)| lat);
            let from = release + late_wakeup_ns;
            let ran: u64 = mine.iter().map(|i| i.end_ns.min(dl).saturating_sub(i.start_ns.max(from))).sum();
            let stopped_ns = dl.saturating_sub(from).saturating_sub(ran);
            let late = late_wakeup_ns > slack_ns / 2;
            let stopped = stopped_ns > slack_ns;
            let cause = match (late, stopped) {
                (true, true) => MissCause::Both,
                (true, false) => MissCause::LateWakeup,
                (false, true) => MissCause::Stopped,
                (false, false) => MissCause::Other,
            };
            Miss { deadline_ns: dl, late_wakeup_ns, stopped_ns, cause }
        })
        .collect()
}

/// One run of the probe, summarised.
#[derive(Debug, Clone)]
pub struct ProbeRun {
    /// Periods met.
    pub hits: u64,
    /// Periods in the run.
    pub periods: u64,
    /// The missed periods.
    pub misses: Vec<Miss>,
    /// Wake-up lateness of every release the thread slept for, ns.
    pub latencies_ns: Vec<u64>,
    /// Host steal time on the probe's CPU during the run, ns (10 ms resolution), if the kernel keeps it.
    pub steal_ns: Option<u64>,
}

impl ProbeRun {
    /// Summarises a finished run of a one-thread periodic probe.
    pub fn of(r: &RunResult, period_ns: u64, slack_ns: u64, steal_ns: Option<u64>) -> ProbeRun {
        let t = &r.threads[0];
        ProbeRun {
            hits: t.hits,
            periods: t.hits + t.misses,
            misses: classify_misses(
                0,
                &r.intervals,
                &t.wake_at_ns,
                &t.latencies_ns,
                &t.miss_at_ns,
                period_ns,
                slack_ns,
            ),
            latencies_ns: t.latencies_ns.clone(),
            steal_ns,
        }
    }

    /// Hit rate, percent.
    pub fn hit_pct(&self) -> f64 {
        100.0 * self.hits as f64 / self.periods.max(1) as f64
    }

    /// Misses put down to `cause`.
    pub fn count(&self, cause: MissCause) -> usize {
        self.misses.iter().filter(|m| m.cause == cause).count()
    }
}

/// Minimum, median and maximum of `v` (the lower median for an even count).
pub fn min_med_max(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => (f64::NAN, f64::NAN, f64::NAN),
        n => (s[0], s[(n - 1) / 2], s[n - 1]),
    }
}

/// Steal time of `cpu` so far (`/proc/stat`, USER_HZ = 100 ticks a second), ns.
pub fn steal_ns(cpu: usize) -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.split_whitespace().next() == Some(&format!("cpu{cpu}")))?;
    // cpuN user nice system idle iowait irq softirq steal ...
    let ticks: u64 = line.split_whitespace().nth(8)?.parse().ok()?;
    Some(ticks * 10_000_000)
}

/// The latency percentiles over all runs, ns: (p50, p99, max).
pub fn latency_summary(runs: &[ProbeRun]) -> (u64, u64, u64) {
    let mut all: Vec<u64> = runs.iter().flat_map(|r| r.latencies_ns.iter().copied()).collect();
    all.sort_unstable();
    (percentile(&all, 50.0), percentile(&all, 99.0), all.last().copied().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::EndReason;

    const MS: u64 = 1_000_000;

    fn iv(start: u64, end: u64, reason: EndReason) -> Interval {
        Interval { thread: 0, start_ns: start, end_ns: end, reason, cpu: 0 }
    }

    #[test]
    fn misses_are_put_down_to_a_late_wakeup_or_a_stop_inside_the_period() {
        // Periods of 5 ms, slack 1 ms. Period [5, 10): woke 2 ms late, then ran to the deadline.
        // Period [15, 20): woke on time, ran 1 ms, lost 2 ms, ran 2 ms. Period [25, 30): woke 0.4 ms
        // late and lost 0.7 ms: neither alone. Period [35, 40): woke 1 ms late and lost 1.5 ms.
        let intervals = vec![
            iv(7 * MS, 10 * MS, EndReason::Gap),
            iv(15 * MS, 16 * MS, EndReason::Gap),
            iv(18 * MS, 20 * MS, EndReason::Gap),
            iv(25 * MS + 400_000, 27 * MS, EndReason::Gap),
            iv(27 * MS + 700_000, 30 * MS, EndReason::Gap),
            iv(36 * MS, 37 * MS, EndReason::Gap),
            iv(38 * MS + 500_000, 40 * MS, EndReason::Gap),
        ];
        let wake_at = [7 * MS, 15 * MS, 25 * MS + 400_000, 36 * MS];
        let lat = [2 * MS, 0, 400_000, MS];
        let misses = [10 * MS, 20 * MS, 30 * MS, 40 * MS];
        let m = classify_misses(0, &intervals, &wake_at, &lat, &misses, 5 * MS, MS);
        let got: Vec<(MissCause, u64, u64)> =
            m.iter().map(|m| (m.cause, m.late_wakeup_ns, m.stopped_ns)).collect();
        assert_eq!(
            got,
            vec![
                (MissCause::LateWakeup, 2 * MS, 0),
                (MissCause::Stopped, 0, 2 * MS),
                (MissCause::Other, 400_000, 700_000),
                (MissCause::Both, MS, 3 * MS / 2),
            ]
        );
    }

    #[test]
    fn spread_over_runs() {
        assert_eq!(min_med_max(&[99.0, 97.5, 100.0, 98.0]), (97.5, 98.0, 100.0));
        assert!(min_med_max(&[]).0.is_nan());
    }
}
