//! Tick-sampled billing replayed on a trace (Etsion et al. §4, table 3): a kernel recording or a
//! simulated run alike.
//!
//! A tick sampler at `hz` fires on every CPU at `phase + k * 10^9/hz` ns of the trace clock and
//! bills one whole tick to the task running there. Replaying the exact quanta of a trace against
//! it gives, per task, the *billing ratio* (billed time / CPU time actually used) and the share of
//! quanta *never billed* (no tick fell inside them). A tick exactly at a quantum's start is
//! billed to it; one exactly at its end is billed to the next task, so a quantum is charged for
//! the ticks in the half-open interval [start, end).
//!
//! The default phase is 0: Linux aligns its tick to multiples of the tick period on
//! CLOCK_MONOTONIC (the trace clock), and `klogger report` prints the phase observed in the
//! recorded ticks so this can be checked (the simulator's ticks are at multiples of its period).
//! Besides the synthetic samplers, the ticks in the trace give the billing the traced system did at
//! its own HZ ("observed"): a tick whose record names the task it found running is billed to that
//! task even at a switch on the tick (a simulator's slice ends exactly there, and the tick belongs
//! to the task it stopped, as Linux's tick handler charges `current`), which the synthetic samplers'
//! half-open rule would give to the next task. On a simulated machine with tick billing the
//! observed column equals the simulator's own charges.
//!
//! Weak: with NO_HZ the real kernel stops the tick on idle CPUs; the synthetic sampler ticks
//! everywhere, which only matters for the idle task's row.

use std::collections::BTreeMap;

use crate::tick_period_ns;
use crate::timeline::{Group, Stretch, Timeline};

/// Sampler rates one command replays at most: each costs a pass over the trace and a column (and
/// in HTML a figure) per task, so the work and the output grow with their number.
pub const MAX_RATES: usize = 16;

/// Checks sampler rates given by a user (`--hz`): from 1 to [`MAX_RATES`] distinct rates, each from
/// 1 to 1,000,000 Hz. The error names the first rate at fault, not the whole list.
pub fn check_rates(hz: &[u32]) -> Result<(), String> {
    if hz.is_empty() {
        return Err("--hz wants at least one rate".into());
    }
    if hz.len() > MAX_RATES {
        return Err(format!("--hz: {} rates given, at most {MAX_RATES}", hz.len()));
    }
    for (k, &h) in hz.iter().enumerate() {
        if h == 0 || h > crate::MAX_HZ {
            return Err(format!("--hz wants rates between 1 and {}, got {h}", crate::MAX_HZ));
        }
        if hz[..k].contains(&h) {
            return Err(format!("--hz: {h} given twice"));
        }
    }
    Ok(())
}

/// Number of ticks `phase + k * period` (k any integer) in [start, end).
pub fn ticks_in(start: u64, end: u64, period: u64, phase: u64) -> u64 {
    if end <= start {
        return 0;
    }
    let p = period.max(1) as i128;
    let f = |t: u64| (t as i128 - phase as i128 - 1).div_euclid(p);
    (f(end) - f(start)) as u64
}

/// Billing of one task by one sampler.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Billing {
    /// Sampler rate; 0 for the ticks the kernel actually recorded.
    pub hz: u32,
    /// Billed time (ns) = ticks × period.
    pub billed_ns: u64,
    /// billed_ns / cpu_ns (null if cpu_ns is 0).
    pub billing_ratio: Option<f64>,
    /// Complete quanta with no tick inside.
    pub unbilled_quanta: u64,
    /// unbilled_quanta / quanta (null if no quanta).
    pub unbilled_share: Option<f64>,
}

/// One task's row of the billing table.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct BillingRow {
    /// Command name.
    pub name: String,
    /// Thread id or process id, as grouped.
    pub pid: u32,
    /// Process id.
    pub tgid: u32,
    /// Actual CPU time (ns).
    pub cpu_ns: u64,
    /// Complete quanta.
    pub quanta: u64,
    /// One entry per requested HZ, in order.
    pub billing: Vec<Billing>,
    /// Billing by the ticks the kernel recorded, at its own HZ (None if no ticks were recorded).
    pub observed: Option<Billing>,
}

#[derive(Default)]
struct Acc {
    cpu_ns: u64,
    quanta: u64,
    ticks: Vec<u64>,
    unbilled: Vec<u64>,
    obs_ticks: u64,
    obs_unbilled: u64,
}

/// Replays `quanta` against tick samplers at each of `hzs` (phase `phase_ns`) and, when
/// `kernel_hz` is given, against the trace's ticks. `key` maps a task to its row.
pub fn replay(
    quanta: &[Stretch],
    hzs: &[u32],
    phase_ns: u64,
    kernel_hz: Option<u32>,
    key: impl Fn(u32) -> u32,
) -> BTreeMap<u32, (u64, u64, Vec<Billing>, Option<Billing>)> {
    let mut acc: BTreeMap<u32, Acc> = BTreeMap::new();
    for q in quanta {
        let a = acc.entry(key(q.task)).or_insert_with(|| Acc {
            ticks: vec![0; hzs.len()],
            unbilled: vec![0; hzs.len()],
            ..Default::default()
        });
        // Sums saturate: a damaged or hostile trace may hold overlapping runs of any length.
        a.cpu_ns = a.cpu_ns.saturating_add(q.len());
        if q.complete {
            a.quanta += 1;
        }
        for (i, &hz) in hzs.iter().enumerate() {
            let n = ticks_in(q.start, q.end, tick_period_ns(hz), phase_ns);
            a.ticks[i] = a.ticks[i].saturating_add(n);
            if q.complete && n == 0 {
                a.unbilled[i] += 1;
            }
        }
        a.obs_ticks = a.obs_ticks.saturating_add(q.observed_ticks as u64);
        if q.complete && q.observed_ticks == 0 {
            a.obs_unbilled += 1;
        }
    }
    let mk = |hz: u32, period: u64, ticks: u64, unbilled: u64, cpu: u64, quanta: u64| {
        let billed = ticks.saturating_mul(period);
        Billing {
            hz,
            billed_ns: billed,
            billing_ratio: (cpu > 0).then(|| billed as f64 / cpu as f64),
            unbilled_quanta: unbilled,
            unbilled_share: (quanta > 0).then(|| unbilled as f64 / quanta as f64),
        }
    };
    acc.into_iter()
        .map(|(k, a)| {
            let b = hzs
                .iter()
                .enumerate()
                .map(|(i, &hz)| mk(hz, tick_period_ns(hz), a.ticks[i], a.unbilled[i], a.cpu_ns, a.quanta))
                .collect();
            let obs = kernel_hz
                .map(|hz| mk(0, tick_period_ns(hz), a.obs_ticks, a.obs_unbilled, a.cpu_ns, a.quanta));
            (k, (a.cpu_ns, a.quanta, b, obs))
        })
        .collect()
}

/// The billing table of a trace: one row per task (followed tasks only), largest CPU time first.
pub fn billing_table(trace: &Timeline, hzs: &[u32], phase_ns: u64, group: Group) -> Vec<BillingRow> {
    let has_ticks = trace.ticks.iter().any(|t| !t.is_empty());
    let khz = trace.hz.filter(|_| has_ticks);
    let quanta: Vec<Stretch> = trace.runs.iter().filter(|q| trace.is_followed(q.task)).cloned().collect();
    let rows = replay(&quanta, hzs, phase_ns, khz, |task| trace.key(task, group));
    let names = trace.names(group);
    let mut v: Vec<BillingRow> = rows
        .into_iter()
        .map(|(k, (cpu_ns, quanta, billing, observed))| BillingRow {
            name: names.get(&k).map_or_else(|| format!("pid{k}"), |n| n.to_string()),
            pid: k,
            tgid: match group {
                Group::Thread => trace.tasks.get(&k).map_or(0, |m| m.process),
                Group::Process => k,
            },
            cpu_ns,
            quanta,
            billing,
            observed,
        })
        .collect();
    v.sort_by(|a, b| b.cpu_ns.cmp(&a.cpu_ns).then(a.pid.cmp(&b.pid)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EndReason, Header, Record, Source};

    const MS: u64 = 1_000_000;

    fn q(task: u32, start: u64, end: u64) -> Stretch {
        Stretch { task, cpu: 0, start, end, why: EndReason::Blocked, complete: true, observed_ticks: 0 }
    }

    #[test]
    fn sampler_rates_are_checked() {
        assert!(check_rates(&[100, 1000]).is_ok());
        assert_eq!(check_rates(&[]), Err("--hz wants at least one rate".into()));
        for (bad, h) in [(&[0][..], 0), (&[100, 2_000_000], 2_000_000)] {
            assert_eq!(check_rates(bad), Err(format!("--hz wants rates between 1 and 1000000, got {h}")));
        }
        assert_eq!(check_rates(&[100, 250, 100]), Err("--hz: 100 given twice".into()));
        let many: Vec<u32> = (1..=MAX_RATES as u32 + 1).collect();
        assert!(check_rates(&many[..MAX_RATES]).is_ok());
        assert_eq!(check_rates(&many), Err(format!("--hz: 17 rates given, at most {MAX_RATES}")));
    }

    #[test]
    fn ticks_in_half_open() {
        // 100 Hz: ticks at 0, 10 ms, 20 ms...
        let p = 10 * MS;
        assert_eq!(ticks_in(MS, 9 * MS, p, 0), 0, "inside one tick interval");
        assert_eq!(ticks_in(9 * MS, 11 * MS, p, 0), 1, "spans one tick");
        assert_eq!(ticks_in(10 * MS, 11 * MS, p, 0), 1, "tick at the start is billed");
        assert_eq!(ticks_in(9 * MS, 10 * MS, p, 0), 0, "tick at the end is not");
        assert_eq!(ticks_in(0, 100 * MS, p, 0), 10);
        assert_eq!(ticks_in(5 * MS, 105 * MS, p, 0), 10);
        // A phase shifts the grid: ticks at 3, 13, 23 ms.
        assert_eq!(ticks_in(0, 3 * MS, p, 3 * MS), 0);
        assert_eq!(ticks_in(0, 3 * MS + 1, p, 3 * MS), 1);
        assert_eq!(ticks_in(4 * MS, 13 * MS, p, 3 * MS), 0);
        assert_eq!(ticks_in(5, 5, p, 0), 0);
    }

    #[test]
    fn short_quantum_never_billed_spanning_one_billed_one_tick() {
        // Task 1: 50 quanta of 1 ms, each inside a tick interval (starting 2 ms after a tick).
        // Task 2: 10 quanta of 2 ms, each spanning a tick (from 9 ms to 11 ms after a tick).
        let mut qs = Vec::new();
        for k in 0..50 {
            qs.push(q(1, k * 10 * MS + 2 * MS, k * 10 * MS + 3 * MS));
        }
        for k in 0..10 {
            qs.push(q(2, 1000 * MS + k * 10 * MS + 9 * MS, 1000 * MS + k * 10 * MS + 11 * MS));
        }
        let r = replay(&qs, &[100], 0, None, |t| t);
        let (cpu1, n1, b1, _) = &r[&1];
        assert_eq!((*cpu1, *n1), (50 * MS, 50));
        assert_eq!(b1[0].billed_ns, 0);
        assert_eq!(b1[0].billing_ratio, Some(0.0));
        assert_eq!(b1[0].unbilled_quanta, 50);
        assert_eq!(b1[0].unbilled_share, Some(1.0));
        let (cpu2, _, b2, _) = &r[&2];
        assert_eq!(*cpu2, 20 * MS);
        assert_eq!(b2[0].billed_ns, 10 * 10 * MS, "each billed one whole 10 ms tick");
        assert_eq!(b2[0].billing_ratio, Some(5.0));
        assert_eq!(b2[0].unbilled_quanta, 0);
    }

    #[test]
    fn uniform_phase_bills_the_right_amount_on_average() {
        // 1000 quanta of 3 ms at every phase step of 10 µs across a 10 ms tick: exactly 30% of
        // them contain a tick, and the total billed equals the CPU time used (ratio 1).
        let qs: Vec<Stretch> = (0..1000u64)
            .map(|k| {
                let s = k * 20 * MS + (k % 1000) * 10_000;
                q(1, s, s + 3 * MS)
            })
            .collect();
        let r = replay(&qs, &[100, 1000], 0, None, |t| t);
        let b = &r[&1].2;
        assert_eq!(b[0].unbilled_quanta, 700);
        assert_eq!(b[0].billing_ratio, Some(1.0));
        // At 1000 Hz every 3 ms quantum holds exactly 3 ticks.
        assert_eq!(b[1].unbilled_quanta, 0);
        assert_eq!(b[1].billing_ratio, Some(1.0));
    }

    #[test]
    fn table_from_a_synthetic_trace_with_observed_ticks() {
        // One CPU at 100 Hz: task 5 runs 8..12 ms (spans the 10 ms tick), idle 12..31 ms,
        // task 5 runs 31..35 ms (no tick). The kernel recorded ticks at 10 ms and 20 ms.
        let h = Header::new(Source::Hourglass { kernel: "k".into() }, 1, "CLOCK_MONOTONIC", 0, Some(100));
        let run = |task, start, end| Record::Run {
            task,
            cpu: 0,
            start,
            end,
            why: EndReason::Blocked,
            complete: true,
        };
        let recs = vec![
            run(0, 0, 8 * MS),
            run(5, 8 * MS, 12 * MS),
            run(0, 12 * MS, 31 * MS),
            run(5, 31 * MS, 35 * MS),
            Record::Tick { cpu: 0, task: Some(5), at: 10 * MS },
            Record::Tick { cpu: 0, task: None, at: 20 * MS },
        ];
        let trace = Timeline::from_records::<()>(&h, recs.into_iter().map(Ok)).unwrap();
        let rows = billing_table(&trace, &[100], 0, Group::Thread);
        let r5 = rows.iter().find(|r| r.pid == 5).unwrap();
        assert_eq!(r5.cpu_ns, 8 * MS);
        assert_eq!(r5.quanta, 2);
        assert_eq!(r5.billing[0].billed_ns, 10 * MS);
        assert_eq!(r5.billing[0].unbilled_quanta, 1);
        let obs = r5.observed.as_ref().unwrap();
        assert_eq!(obs.billed_ns, 10 * MS);
        assert_eq!(obs.unbilled_quanta, 1);
        let idle = rows.iter().find(|r| r.pid == 0).unwrap();
        assert_eq!(idle.billing[0].billed_ns, 30 * MS, "ticks at 0, 20 and 30 ms");
    }
}
