//! The "ideal" of the dissertation's figures, computed rather than typed in: a fluid machine that
//! shares the CPU among the tasks present by priority, then in proportion to share, never giving a
//! task more than it asks for (water-filling), and passes what a task does not use to the others.
//!
//! **Demand.** A conventional `cpu` task asks for the whole CPU until its `work` is done. An
//! interactive task asks for its mean burst over its mean cycle. A periodic task's demand is what its
//! requests asked for: given the run's draws ([`Draw`], from the run's job records), each request
//! asks for its drawn execution spread evenly from its release to its deadline, so the ideal serves
//! the very demand the scheduler faced and the gap between "ideal" and "ours" is the scheduler's
//! alone. Without draws (a scenario not yet run), each request asks for the largest execution time
//! the scenario allows, which is how §6.2 derives its ideal numbers (e.g. R2 of §6.2.2.2:
//! 40000 × 2/6 + (1500 − 1000) × 20 ms = 23333 ms). What a request is not given by its deadline is
//! lost, as a dropped request is. Every curve ends at the scenario's duration.
//!
//! **Deadlines met.** The ideal policy spends a periodic task's fluid CPU on whole requests, in
//! release order, taking a request when what it has taken so far plus the request's execution fits
//! in the fluid CPU the task has received by the request's deadline (and by the end of the run). A
//! taken request counts as met at its earliest possible finish, release + execution, when no
//! schedule could have finished it sooner. Where the load allows every request (the fluid gives each
//! task its whole demand), the ideal takes them all, and its curve is then a bound: no schedule meets
//! more deadlines by any time. In overload it is the share's ideal (the dissertation's 1000, 666, 333
//! of §6.2.2.2), not a bound: a scheduler may favour one task beyond its share.

use sched::Nanos;
use workload::{Model, Scenario};

/// One request as the run drew it, in nanoseconds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Draw {
    /// When it was released.
    pub release: Nanos,
    /// Its absolute deadline.
    pub deadline: Nanos,
    /// The execution time it asked for.
    pub exec: Nanos,
}

/// The draws of every periodic task of `scn` (by task, in release order), from a run's job records.
pub fn draws(scn: &Scenario, jobs: &[crate::engine::JobRecord]) -> Vec<Vec<Draw>> {
    let by_name: std::collections::HashMap<&str, usize> =
        scn.tasks.iter().enumerate().map(|(i, t)| (t.name.as_str(), i)).collect();
    let mut d = vec![Vec::new(); scn.tasks.len()];
    for j in jobs {
        if let Some(&i) = by_name.get(j.task.as_str()) {
            d[i].push(Draw { release: j.release_ns, deadline: j.deadline_ns, exec: j.exec_ns });
        }
    }
    for v in &mut d {
        v.sort_by_key(|x| (x.release, x.deadline));
    }
    d
}

/// Piecewise-linear ideal cumulative CPU of each task: breakpoints `(seconds, ms)`; and for periodic
/// tasks, the ideal count of deadlines met as a step curve `(seconds, count)`.
#[derive(Clone, Debug)]
pub struct Ideal {
    /// One polyline per task, in scenario order.
    pub cpu: Vec<Vec<(f64, f64)>>,
    /// Deadlines met, one step curve per task (empty for tasks without requests).
    pub met: Vec<Vec<(f64, f64)>>,
    /// Per task: whether the ideal takes every request, so its met curve bounds any schedule's.
    pub all_met: Vec<bool>,
}

impl Ideal {
    /// Ideal cumulative CPU of task `i` at `t` seconds, in ms.
    pub fn cpu_at(&self, i: usize, t: f64) -> f64 {
        at(&self.cpu[i], t)
    }

    /// Ideal deadlines met by task `i` by `t` seconds.
    pub fn met_at(&self, i: usize, t: f64) -> f64 {
        let pts = &self.met[i];
        pts.iter().take_while(|p| p.0 <= t + 1e-12).last().map_or(0.0, |p| p.1)
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

/// A piecewise-linear curve at `t`.
fn at(pts: &[(f64, f64)], t: f64) -> f64 {
    match pts.iter().position(|p| p.0 >= t) {
        None => pts.last().map_or(0.0, |p| p.1),
        Some(0) => pts[0].1,
        Some(k) => {
            let (a, b) = (pts[k - 1], pts[k]);
            a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0)
        }
    }
}

/// A task in the fluid machine: its demand rate changes at the times in `changes`.
struct Fluid {
    prio: i32,
    share: f64,
    work: f64,
    /// (time s, change of the demand rate), in time order.
    changes: Vec<(f64, f64)>,
    next: usize,
    rate: f64,
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

/// The ideal of a scenario, up to its duration, with each periodic task's requests as the scenario
/// bounds them (the largest execution time).
pub fn ideal(scn: &Scenario) -> Ideal {
    ideal_with(scn, None)
}

/// The ideal of a run of `scn` whose periodic tasks drew `draws` (see [`draws`]).
pub fn ideal_of_run(scn: &Scenario, draws: &[Vec<Draw>]) -> Ideal {
    ideal_with(scn, Some(draws))
}

fn ideal_with(scn: &Scenario, draws: Option<&[Vec<Draw>]>) -> Ideal {
    let s = |n: Nanos| n as f64 / 1e9;
    let end = s(scn.machine.duration);
    let nominal = |i: usize| -> Vec<Draw> {
        let t = &scn.tasks[i];
        let Model::Periodic(p) = &t.model else { return Vec::new() };
        let exec = p.exec.max().unwrap_or(p.exec.mean());
        let stop = t.stop.unwrap_or(scn.machine.duration).min(scn.machine.duration);
        (0..p.count.unwrap_or(u64::MAX))
            .map(|k| t.start.saturating_add(k.saturating_mul(p.period)))
            .take_while(|&r| r < stop)
            .map(|r| Draw { release: r, deadline: r.saturating_add(p.period), exec })
            .collect()
    };
    let jobs: Vec<Vec<Draw>> = (0..scn.tasks.len())
        .map(|i| match draws {
            Some(d) => d.get(i).cloned().unwrap_or_default(),
            None => nominal(i),
        })
        .collect();
    let mut tasks: Vec<Fluid> = scn
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let from = s(t.start);
            let stop = t.stop.map_or(end, s).min(end);
            let (mut changes, work) = match &t.model {
                Model::Cpu { work } => (vec![(from, 1.0), (stop, -1.0)], work.map_or(f64::INFINITY, s)),
                Model::Periodic(_) => {
                    let mut c = Vec::with_capacity(2 * jobs[i].len());
                    for j in &jobs[i] {
                        let (r, d) = (s(j.release), s(j.deadline));
                        if d > r {
                            let rate = s(j.exec) / (d - r);
                            c.push((r, rate));
                            c.push((d, -rate));
                        }
                    }
                    (c, f64::INFINITY)
                }
                Model::Interactive { think, burst, .. } => {
                    let (b, th) = (burst.mean() as f64, think.mean() as f64);
                    (vec![(from, b / (b + th)), (stop, -b / (b + th))], f64::INFINITY)
                }
            };
            changes.sort_by(|a, b| a.0.total_cmp(&b.0));
            Fluid { prio: t.priority, share: t.share as f64, work, changes, next: 0, rate: 0.0 }
        })
        .collect();
    let n = tasks.len();
    let mut cpu: Vec<Vec<(f64, f64)>> = vec![vec![(0.0, 0.0)]; n];
    let mut done = vec![0.0f64; n];
    let mut t = 0.0;
    let mut prios: Vec<i32> = tasks.iter().map(|x| x.prio).collect();
    prios.sort_unstable_by(|a, b| b.cmp(a));
    prios.dedup();
    let mut give = vec![0.0; n];
    let mut given = vec![0.0; n];
    while t < end - 1e-12 {
        for x in tasks.iter_mut() {
            while x.next < x.changes.len() && x.changes[x.next].0 <= t + 1e-12 {
                x.rate += x.changes[x.next].1;
                x.next += 1;
            }
            if x.rate < 1e-12 {
                x.rate = 0.0; // rounding of the sums of + and − the same rate
            }
        }
        let active = |x: &Fluid| x.rate > 0.0 && x.work > 1e-12;
        give.iter_mut().for_each(|g| *g = 0.0);
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
        // Next breakpoint: a change of demand, a finished piece of work, the end.
        let mut next = end;
        for (i, x) in tasks.iter().enumerate() {
            if let Some(c) = x.changes.get(x.next) {
                next = next.min(c.0);
            }
            if give[i] > 0.0 && x.work.is_finite() {
                next = next.min(t + x.work / give[i]);
            }
        }
        let next = next.max(t + 1e-12).min(end);
        let dt = next - t;
        for i in 0..n {
            // A breakpoint where the rate changes (the curve is linear between them).
            if give[i] != given[i] && cpu[i].last().is_some_and(|p| p.0 < t) {
                cpu[i].push((t, done[i] * 1e3));
            }
            given[i] = give[i];
            if give[i] > 0.0 {
                let w = give[i] * dt;
                tasks[i].work -= w;
                done[i] += w;
            }
        }
        t = next;
    }
    for i in 0..n {
        cpu[i].push((end, done[i] * 1e3));
    }
    let mut met = Vec::with_capacity(n);
    let mut all_met = Vec::with_capacity(n);
    for (i, js) in jobs.iter().enumerate() {
        let (curve, all) = met_curve(&cpu[i], js, end);
        met.push(curve);
        all_met.push(all);
    }
    Ideal { cpu, met, all_met }
}

/// The ideal policy's deadlines met for one task (see the module doc): a step curve, and whether it
/// took every request whose deadline falls within the run.
fn met_curve(cpu: &[(f64, f64)], jobs: &[Draw], end: f64) -> (Vec<(f64, f64)>, bool) {
    if jobs.is_empty() {
        return (Vec::new(), true);
    }
    let s = |n: Nanos| n as f64 / 1e9;
    // A relative slack for the float sums of the fluid (a request is taken when it fits to 1 ns per ms).
    const SLACK: f64 = 1e-6;
    let (mut used, mut all) = (0.0f64, true);
    let mut finishes = Vec::new();
    for j in jobs {
        let ms = j.exec as f64 / 1e6;
        let by = s(j.deadline).min(end);
        let fits = s(j.release) + s(j.exec) <= by + 1e-12 && used + ms <= at(cpu, by) * (1.0 + SLACK) + SLACK;
        if fits {
            used += ms;
            finishes.push(s(j.release) + s(j.exec));
        } else if s(j.deadline) <= end {
            all = false;
        }
    }
    finishes.sort_by(f64::total_cmp);
    let mut curve = vec![(0.0, 0.0)];
    for (k, f) in finishes.iter().enumerate() {
        curve.push((*f, k as f64));
        curve.push((*f, (k + 1) as f64));
    }
    curve.push((end, finishes.len() as f64));
    (curve, all)
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
