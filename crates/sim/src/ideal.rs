//! The "ideal" of the dissertation's figures, computed rather than typed in: a fluid machine that
//! shares the CPU among the tasks present by priority, then in proportion to share, never giving a
//! task more than it asks for (water-filling), and passes what a task does not use to the others.
//!
//! A conventional `cpu` task asks for the whole CPU until its `work` is done. A periodic task asks for
//! `max exec / period` from its start until its last request's period ends (`count × period`), and
//! what it is not given in time is lost, as a dropped request is. This is exactly how §6.2 derives its
//! ideal numbers (e.g. R2 of §6.2.2.2: 40000 × 2/6 + (1500 − 1000) × 20 ms = 23333 ms).

use sched::Nanos;
use workload::{Model, Scenario};

/// Piecewise-linear ideal cumulative CPU of each task: breakpoints `(seconds, ms)`.
#[derive(Clone, Debug)]
pub struct Ideal {
    /// One polyline per task, in scenario order.
    pub cpu: Vec<Vec<(f64, f64)>>,
}

impl Ideal {
    /// Ideal cumulative CPU of task `i` at `t` seconds, in ms.
    pub fn cpu_at(&self, i: usize, t: f64) -> f64 {
        let pts = &self.cpu[i];
        match pts.iter().position(|p| p.0 >= t) {
            None => pts.last().map_or(0.0, |p| p.1),
            Some(0) => pts[0].1,
            Some(k) => {
                let (a, b) = (pts[k - 1], pts[k]);
                a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0)
            }
        }
    }

    /// Ideal total CPU of task `i`, in ms.
    pub fn total(&self, i: usize) -> f64 {
        self.cpu[i].last().map_or(0.0, |p| p.1)
    }

    /// When task `i`'s ideal cumulative CPU stops growing, in seconds.
    pub fn finish(&self, i: usize) -> f64 {
        let pts = &self.cpu[i];
        let last = pts.last().map_or(0.0, |p| p.1);
        pts.iter().find(|p| p.1 >= last - 1e-9).map_or(0.0, |p| p.0)
    }
}

struct Fluid {
    prio: i32,
    share: f64,
    from: f64,
    until: f64,
    rate: f64,
    work: f64,
}

/// Water-filling: `cap` of CPU among tasks asking `demand[i]` with weights `share[i]`.
fn fill(cap: f64, demand: &[f64], share: &[f64]) -> Vec<f64> {
    let mut give = vec![0.0; demand.len()];
    let mut left: Vec<usize> = (0..demand.len()).filter(|&i| demand[i] > 0.0).collect();
    let mut cap = cap;
    loop {
        let total: f64 = left.iter().map(|&i| share[i].max(1e-12)).sum();
        if left.is_empty() || cap <= 0.0 {
            return give;
        }
        let sated: Vec<usize> =
            left.iter().copied().filter(|&i| demand[i] <= cap * share[i].max(1e-12) / total).collect();
        if sated.is_empty() {
            for &i in &left {
                give[i] = cap * share[i].max(1e-12) / total;
            }
            return give;
        }
        for &i in &sated {
            give[i] = demand[i];
            cap -= demand[i];
        }
        left.retain(|i| !sated.contains(i));
    }
}

/// The ideal of a scenario, up to its duration.
pub fn ideal(scn: &Scenario) -> Ideal {
    let s = |n: Nanos| n as f64 / 1e9;
    let end = s(scn.machine.duration);
    let mut tasks: Vec<Fluid> = scn
        .tasks
        .iter()
        .map(|t| {
            let from = s(t.start);
            let stop = t.stop.map_or(end, s).min(end);
            let (rate, until, work) = match &t.model {
                Model::Cpu { work } => (1.0, stop, work.map_or(f64::INFINITY, s)),
                Model::Periodic(p) => {
                    let exec = p.exec.max().unwrap_or(p.exec.mean()) as f64;
                    let until = p.count.map_or(stop, |c| (from + c as f64 * s(p.period)).min(stop));
                    (exec / p.period as f64, until, f64::INFINITY)
                }
                Model::Interactive { think, burst, .. } => {
                    let (b, th) = (burst.mean() as f64, think.mean() as f64);
                    (b / (b + th), stop, f64::INFINITY)
                }
            };
            Fluid { prio: t.priority, share: t.share as f64, from, until, rate, work }
        })
        .collect();
    let n = tasks.len();
    let mut cpu: Vec<Vec<(f64, f64)>> = vec![vec![(0.0, 0.0)]; n];
    let mut done = vec![0.0f64; n];
    let mut t = 0.0;
    let mut prios: Vec<i32> = tasks.iter().map(|x| x.prio).collect();
    prios.sort_unstable_by(|a, b| b.cmp(a));
    prios.dedup();
    while t < end - 1e-12 {
        let active = |x: &Fluid| x.from <= t + 1e-12 && t < x.until - 1e-12 && x.work > 1e-12;
        let mut give = vec![0.0; n];
        let mut cap = 1.0;
        for p in &prios {
            let idx: Vec<usize> = (0..n).filter(|&i| tasks[i].prio == *p && active(&tasks[i])).collect();
            let demand: Vec<f64> = idx.iter().map(|&i| tasks[i].rate).collect();
            let share: Vec<f64> = idx.iter().map(|&i| tasks[i].share).collect();
            for (k, g) in fill(cap, &demand, &share).into_iter().enumerate() {
                give[idx[k]] = g;
                cap -= g;
            }
        }
        // Next breakpoint: a start, an end of requests, a finished piece of work.
        let mut next = end;
        for (i, x) in tasks.iter().enumerate() {
            if x.from > t + 1e-12 {
                next = next.min(x.from);
            }
            if active(x) {
                next = next.min(x.until);
                if give[i] > 0.0 && x.work.is_finite() {
                    next = next.min(t + x.work / give[i]);
                }
            }
        }
        let dt = next - t;
        for i in 0..n {
            if give[i] > 0.0 {
                let w = give[i] * dt;
                tasks[i].work -= w;
                done[i] += w;
            }
            cpu[i].push((next, done[i] * 1e3));
        }
        t = next;
    }
    Ideal { cpu }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn water_filling() {
        let g = fill(1.0, &[0.5, 0.5, 0.5], &[3.0, 2.0, 1.0]);
        assert!(
            (g[0] - 0.5).abs() < 1e-12
                && (g[1] - 1.0 / 3.0).abs() < 1e-12
                && (g[2] - 1.0 / 6.0).abs() < 1e-12
        );
        let g = fill(1.0, &[0.25, 0.55], &[1.0, 1.0]);
        assert_eq!(g, vec![0.25, 0.55]);
    }
}
