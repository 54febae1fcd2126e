//! The "ideal" of the dissertation's figures, computed rather than typed in: a fluid machine that
//! shares its CPUs among the tasks present by priority, then in proportion to share, never giving a
//! task more than it asks for nor more than one CPU (water-filling), and passes what a task does not
//! use to the others. With several CPUs it is the fluid bound of a global scheduler: it ignores
//! pinning and the cost of migrating.
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
        pts[..pts.partition_point(|p| p.0 <= t + 1e-12)].last().map_or(0.0, |p| p.1)
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

/// A piecewise-linear curve at `t` (flat before its first and after its last point).
fn at(pts: &[(f64, f64)], t: f64) -> f64 {
    match pts.partition_point(|p| p.0 < t) {
        k if k == pts.len() => pts.last().map_or(0.0, |p| p.1),
        0 => pts[0].1,
        k => {
            let (a, b) = (pts[k - 1], pts[k]);
            a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0)
        }
    }
}

/// What the fluid machine knows of a task: priority, share, work, and when its demand changes.
#[derive(Clone, Debug)]
struct Demand {
    prio: i32,
    share: f64,
    /// Seconds of CPU it needs in all (infinite when only its demand rate bounds it).
    work: f64,
    /// (time s, change of the demand rate in CPUs), in time order.
    changes: Vec<(f64, f64)>,
}

/// Water-filling: `cap` CPUs among tasks asking `demand[i]` with weights `share[i]`; what a sated
/// task does not take goes to the others in proportion to their shares.
fn fill(cap: f64, demand: &[f64], share: &[f64]) -> Vec<f64> {
    let w = |i: usize| share[i].max(1e-12);
    let mut order: Vec<usize> = (0..demand.len()).filter(|&i| demand[i] > 0.0).collect();
    // Sated first: the smaller a task's demand per unit of share, the sooner the level reaches it.
    order.sort_by(|&a, &b| (demand[a] / w(a)).total_cmp(&(demand[b] / w(b))));
    let mut give = vec![0.0; demand.len()];
    let (mut cap, mut total) = (cap.max(0.0), order.iter().map(|&i| w(i)).sum::<f64>());
    for (k, &i) in order.iter().enumerate() {
        if demand[i] <= cap * w(i) / total {
            give[i] = demand[i];
            cap -= demand[i];
            total -= w(i);
        } else {
            for &j in &order[k..] {
                give[j] = cap * w(j) / total;
            }
            break;
        }
    }
    give
}

/// The tasks of one priority, as the fluid machine last served them.
struct Level {
    members: Vec<usize>,
    /// The CPUs left to this level by the levels above, at the last fill.
    cap: f64,
    /// What the level takes in all.
    used: f64,
    /// Whether every member got its whole demand at the last fill.
    sated: bool,
    /// Members whose demand may have changed since the last fill.
    changed: Vec<usize>,
    /// The members' demands summed (kept as they change; summed afresh at each full fill).
    sum: f64,
}

/// Serve `tasks` on a fluid machine of `cpus` CPUs until `end` seconds: by priority, then by
/// water-filling within a priority, never more than one CPU to a task. Returns each task's
/// cumulative CPU in ms as a polyline, with a point wherever its rate changes.
///
/// Only what changes is recomputed: at a breakpoint the levels whose members' demand changed are
/// refilled, and the ones below them only if what is left to them no longer covers them. A level
/// in which every member is sated takes a changed demand as it is, and one in which the changed
/// members stay above the water level is not touched at all, so a run of many tasks in underload
/// costs a few operations per request.
fn serve(tasks: &[Demand], cpus: f64, end: f64) -> Vec<Vec<(f64, f64)>> {
    const EPS: f64 = 1e-12;
    let n = tasks.len();
    let mut events: Vec<(f64, usize, f64)> =
        tasks.iter().enumerate().flat_map(|(i, x)| x.changes.iter().map(move |&(t, d)| (t, i, d))).collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let finite: Vec<usize> = (0..n).filter(|&i| tasks[i].work.is_finite()).collect();
    let mut prios: Vec<i32> = tasks.iter().map(|x| x.prio).collect();
    prios.sort_unstable_by(|a, b| b.cmp(a));
    prios.dedup();
    let mut levels: Vec<Level> = prios
        .iter()
        .map(|p| Level {
            members: (0..n).filter(|&i| tasks[i].prio == *p).collect(),
            cap: f64::NAN,
            used: 0.0,
            sated: true,
            changed: Vec::new(),
            sum: 0.0,
        })
        .collect();
    let level_of: Vec<usize> =
        tasks.iter().map(|x| prios.iter().position(|p| *p == x.prio).unwrap_or(0)).collect();
    let share: Vec<f64> = tasks.iter().map(|x| x.share).collect();
    let mut rate = vec![0.0f64; n];
    let mut demand = vec![0.0f64; n];
    let mut acct: Vec<Account> = tasks.iter().map(|x| Account::new(x.work)).collect();
    let (mut t, mut e) = (0.0f64, 0usize);
    while t < end - EPS {
        while e < events.len() && events[e].0 <= t + EPS {
            let (_, i, d) = events[e];
            rate[i] += d;
            if rate[i] < EPS {
                rate[i] = 0.0; // rounding of the sums of + and − the same rate
            }
            levels[level_of[i]].changed.push(i);
            e += 1;
        }
        for &i in &finite {
            if acct[i].give > 0.0 && acct[i].left(t) <= EPS {
                levels[level_of[i]].changed.push(i);
            }
        }
        let mut cap = cpus;
        for l in levels.iter_mut() {
            let moved = l.cap.is_nan() || (l.cap - cap).abs() > EPS;
            if l.changed.is_empty() && !moved {
                cap = (cap - l.used).max(0.0);
                continue;
            }
            // The members' demands now; and whether the changed ones can be left as they are.
            let mut quiet = true;
            for &i in &l.changed {
                let d = if acct[i].left(t) > EPS { rate[i].min(1.0) } else { 0.0 };
                if d != demand[i] {
                    // Above the water level before and after: its give does not change.
                    quiet &= !l.sated && acct[i].give < demand[i] - EPS && d >= acct[i].give;
                    l.sum += d - demand[i];
                    demand[i] = d;
                }
            }
            if l.sated && l.sum <= cap + EPS {
                for &i in &l.changed {
                    acct[i].set(t, demand[i]);
                }
                l.used = l.sum;
            } else if moved || !quiet {
                let d: Vec<f64> = l.members.iter().map(|&i| demand[i]).collect();
                let s: Vec<f64> = l.members.iter().map(|&i| share[i]).collect();
                let g = fill(cap, &d, &s);
                l.used = g.iter().sum();
                l.sum = d.iter().sum();
                l.sated = l.members.iter().zip(&g).all(|(&i, g)| *g >= demand[i] - EPS);
                for (&i, g) in l.members.iter().zip(g) {
                    acct[i].set(t, g);
                }
            }
            l.cap = cap;
            l.changed.clear();
            cap = (cap - l.used).max(0.0);
        }
        // Next breakpoint: a change of demand, a finished piece of work, the end; always forward.
        let mut next = events.get(e).map_or(end, |x| x.0);
        for &i in &finite {
            if acct[i].give > 0.0 {
                next = next.min(acct[i].since + acct[i].work / acct[i].give);
            }
        }
        t = next.min(end).max(t + EPS.max(t * 4.0 * f64::EPSILON));
    }
    acct.into_iter()
        .map(|mut a| {
            a.set(end, 0.0);
            a.cpu.push((end, a.done * 1e3));
            a.cpu
        })
        .collect()
}

/// One task's account on the fluid machine: what it gets now, and what it got up to `since`.
struct Account {
    give: f64,
    since: f64,
    done: f64,
    work: f64,
    /// Cumulative CPU in ms, a point wherever `give` changed.
    cpu: Vec<(f64, f64)>,
}

impl Account {
    fn new(work: f64) -> Self {
        Account { give: 0.0, since: 0.0, done: 0.0, work, cpu: vec![(0.0, 0.0)] }
    }

    /// The work left at `t`.
    fn left(&self, t: f64) -> f64 {
        self.work - self.give * (t - self.since)
    }

    /// Bring the account up to `t`, then give `g` from there.
    fn set(&mut self, t: f64, g: f64) {
        let w = self.give * (t - self.since);
        self.done += w;
        self.work -= w;
        self.since = t;
        if g != self.give {
            if self.cpu.last().is_some_and(|p| p.0 < t) {
                self.cpu.push((t, self.done * 1e3));
            }
            self.give = g;
        }
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
    let end = secs(scn.machine.duration);
    let nominal: Vec<Vec<Draw>>;
    let jobs: &[Vec<Draw>] = match draws {
        Some(d) => d,
        None => {
            nominal = (0..scn.tasks.len()).map(|i| self::nominal(scn, i)).collect();
            &nominal
        }
    };
    let none = Vec::new();
    let job = |i: usize| jobs.get(i).unwrap_or(&none);
    let tasks = demands(scn, job);
    let cpu = serve(&tasks, f64::from(scn.machine.cpus.max(1)), end);
    drop(tasks);
    let n = scn.tasks.len();
    let (mut met, mut all_met) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for (i, c) in cpu.iter().enumerate() {
        let (curve, all) = met_curve(c, job(i), end);
        met.push(curve);
        all_met.push(all);
    }
    Ideal { cpu, met, all_met }
}

fn secs(n: Nanos) -> f64 {
    n as f64 / 1e9
}

/// Task `i`'s requests as the scenario bounds them: every release, each asking for the largest
/// execution time, due at the end of its period.
fn nominal(scn: &Scenario, i: usize) -> Vec<Draw> {
    let t = &scn.tasks[i];
    let Model::Periodic(p) = &t.model else { return Vec::new() };
    let exec = p.exec.max().unwrap_or(p.exec.mean());
    let stop = t.stop.unwrap_or(scn.machine.duration).min(scn.machine.duration);
    (0..p.count.unwrap_or(u64::MAX))
        .map(|k| t.start.saturating_add(k.saturating_mul(p.period)))
        .take_while(|&r| r < stop)
        .map(|r| Draw { release: r, deadline: r.saturating_add(p.period), exec })
        .collect()
}

/// Each task's demand on the fluid machine (see the module doc), its periodic requests being `jobs`.
fn demands<'a>(scn: &Scenario, jobs: impl Fn(usize) -> &'a Vec<Draw>) -> Vec<Demand> {
    let end = secs(scn.machine.duration);
    scn.tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let from = secs(t.start);
            let stop = t.stop.map_or(end, secs).min(end);
            let (mut changes, work) = match &t.model {
                Model::Cpu { work } => (vec![(from, 1.0), (stop, -1.0)], work.map_or(f64::INFINITY, secs)),
                // Always runnable but for the instants between its pieces: a CPU-bound task.
                Model::ForkWait { .. } => (vec![(from, 1.0), (stop, -1.0)], f64::INFINITY),
                Model::Periodic(_) => {
                    let mut c = Vec::with_capacity(2 * jobs(i).len());
                    for j in jobs(i) {
                        if j.deadline > j.release {
                            // In whole nanoseconds, so that equal requests ask for the same rate.
                            let rate = j.exec as f64 / (j.deadline - j.release) as f64;
                            c.push((secs(j.release), rate));
                            c.push((secs(j.deadline), -rate));
                        }
                    }
                    (c, f64::INFINITY)
                }
                Model::Interactive { think, burst, .. } => {
                    let (b, th) = (burst.mean() as f64, think.mean() as f64);
                    (vec![(from, b / (b + th)), (stop, -b / (b + th))], f64::INFINITY)
                }
                // A player asks for its frames' mean CPU every period; a server for nothing of its own
                // (its clients' work is theirs).
                Model::Player(p) => {
                    let rate = (p.exec.mean() as f64 / p.period.max(1) as f64).min(1.0);
                    (vec![(from, rate), (stop, -rate)], f64::INFINITY)
                }
                Model::Server => (Vec::new(), 0.0),
            };
            changes.sort_by(|a, b| a.0.total_cmp(&b.0));
            Demand { prio: t.priority, share: t.share as f64, work, changes }
        })
        .collect()
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
    use proptest::prelude::*;

    /// The fluid machine the plain way: at every breakpoint, every task's demand and every level's
    /// fill computed afresh (the cost `serve` avoids), the water level found by the definition.
    fn reference(tasks: &[Demand], cpus: f64, end: f64) -> Vec<Vec<(f64, f64)>> {
        let n = tasks.len();
        let mut prios: Vec<i32> = tasks.iter().map(|x| x.prio).collect();
        prios.sort_unstable_by(|a, b| b.cmp(a));
        prios.dedup();
        let (mut rate, mut work, mut done) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        work.iter_mut().zip(tasks).for_each(|(w, x)| *w = x.work);
        let mut next_change = vec![0usize; n];
        let mut cpu = vec![vec![(0.0, 0.0)]; n];
        let mut t = 0.0;
        while t < end - 1e-12 {
            for i in 0..n {
                while let Some(&(at, d)) = tasks[i].changes.get(next_change[i]).filter(|c| c.0 <= t + 1e-12) {
                    let _ = at;
                    rate[i] += d;
                    next_change[i] += 1;
                }
            }
            let mut give = vec![0.0; n];
            let mut cap = cpus;
            for p in &prios {
                let idx: Vec<usize> = (0..n).filter(|&i| tasks[i].prio == *p).collect();
                // Water level by bisection on the definition: sum of min(demand, share * level) = cap.
                let dem =
                    |i: usize| if work[i] > 1e-12 && rate[i] > 1e-12 { f64::min(rate[i], 1.0) } else { 0.0 };
                let took =
                    |lv: f64| idx.iter().map(|&i| dem(i).min(tasks[i].share.max(1e-12) * lv)).sum::<f64>();
                let level = if took(1e9) <= cap {
                    1e9
                } else {
                    let (mut lo, mut hi) = (0.0, 1e9);
                    for _ in 0..200 {
                        let mid = (lo + hi) / 2.0;
                        if took(mid) <= cap {
                            lo = mid
                        } else {
                            hi = mid
                        }
                    }
                    lo
                };
                for &i in &idx {
                    give[i] = dem(i).min(tasks[i].share.max(1e-12) * level);
                    cap -= give[i];
                }
                cap = cap.max(0.0);
            }
            let mut next = end;
            for i in 0..n {
                if let Some(c) = tasks[i].changes.get(next_change[i]) {
                    next = next.min(c.0);
                }
                if give[i] > 0.0 && work[i].is_finite() {
                    next = next.min(t + work[i] / give[i]);
                }
            }
            let next = next.max(t + 1e-12).min(end);
            for i in 0..n {
                work[i] -= give[i] * (next - t);
                done[i] += give[i] * (next - t);
                cpu[i].push((next, done[i] * 1e3));
            }
            t = next;
        }
        cpu
    }

    fn demand() -> impl Strategy<Value = Demand> {
        let piece = (0u32..100, 1u32..60, 1u32..120);
        (0i32..2, 1u32..4, prop::option::of(1u32..60), prop::collection::vec(piece, 0..6)).prop_map(
            |(prio, share, work, pieces)| {
                let mut changes = Vec::new();
                for (from, len, rate) in pieces {
                    let (a, b, r) =
                        (f64::from(from) / 10.0, f64::from(from + len) / 10.0, f64::from(rate) / 100.0);
                    changes.push((a, r));
                    changes.push((b, -r));
                }
                changes.sort_by(|a, b| a.0.total_cmp(&b.0));
                Demand {
                    prio,
                    share: f64::from(share),
                    work: work.map_or(f64::INFINITY, |w| f64::from(w) / 10.0),
                    changes,
                }
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Recomputing only what changed serves exactly what recomputing everything serves.
        #[test]
        fn serve_matches_the_plain_fluid_machine(tasks in prop::collection::vec(demand(), 1..8), cpus in 1u32..4) {
            let (cpus, end) = (f64::from(cpus), 12.0);
            let ours = serve(&tasks, cpus, end);
            let plain = reference(&tasks, cpus, end);
            for i in 0..tasks.len() {
                for k in 0..=240 {
                    let t = f64::from(k) * end / 240.0;
                    let (a, b) = (at(&ours[i], t), at(&plain[i], t));
                    prop_assert!((a - b).abs() < 1e-6, "task {i} at {t}: {a} vs {b}");
                }
                prop_assert!(ours[i].windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1 + 1e-9));
            }
        }
    }

    /// A million requests of 10 to 20 µs every 100 µs (100 s of a fast periodic task): each
    /// request is placed on the ideal curve by a binary search, not a scan from its start.
    #[test]
    fn a_million_requests() {
        let scn = scenario(
            "[machine]\nduration = \"100s\"\n[scheduler]\npolicy = \"edf\"\n\
             [[task]]\nname = \"F\"\nmodel = \"periodic\"\nexec = \"10us..20us\"\nperiod = \"100us\"\n",
        );
        let draws: Vec<Draw> = (0..1_000_000u64)
            .map(|k| Draw {
                release: k * 100_000,
                deadline: (k + 1) * 100_000,
                exec: 10_000 + (k * 7919) % 10_001,
            })
            .collect();
        let drawn: u64 = draws.iter().map(|d| d.exec).sum();
        let id = ideal_of_run(&scn, &[draws]);
        assert!(id.all_met[0]);
        assert_eq!(id.met_at(0, 100.0), 1e6);
        // Request 499,999, released at 49.9999 s, is not done 5 µs later; all before it are.
        assert_eq!(id.met_at(0, 49.999_905), 499_999.0);
        assert!((id.total(0) - drawn as f64 / 1e6).abs() < 1e-3, "{} vs {drawn} ns", id.total(0));
    }

    fn scenario(toml: &str) -> Scenario {
        workload::parse_str(toml, "test.toml").unwrap()
    }

    /// Two tasks of 8 ms every 10 ms on two CPUs: each gets its own CPU's 80 %, not half of one.
    #[test]
    fn each_task_up_to_one_cpu_of_several() {
        let scn = scenario(
            r#"
[machine]
cpus = 2
duration = "2s"
[scheduler]
policy = "edf"
[[task]]
name = "A"
model = "periodic"
exec = "8ms"
period = "10ms"
[[task]]
name = "B"
model = "periodic"
exec = "8ms"
period = "10ms"
[[task]]
name = "C"
model = "cpu"
priority = -1
"#,
        );
        let id = ideal(&scn);
        assert!((id.total(0) - 1600.0).abs() < 1e-6, "{}", id.total(0));
        assert!((id.total(1) - 1600.0).abs() < 1e-6, "{}", id.total(1));
        // C, a CPU-bound task of a lower priority, takes what A and B leave of the two CPUs.
        assert!((id.total(2) - 800.0).abs() < 1e-6, "{}", id.total(2));
        assert!(id.all_met[0] && id.all_met[1]);
        assert_eq!(id.met_at(0, 2.0), 200.0);
    }

    /// 1000 tasks for 100 s: a quarter of a million requests (the run of such a scenario takes
    /// seconds), served with a fill per level and a handful of steps per request, not a pass over
    /// every task at every request.
    #[test]
    fn many_tasks_and_requests() {
        let mut toml = String::from("[machine]\nduration = \"100s\"\n[scheduler]\npolicy = \"smart\"\n");
        for k in 0..1000 {
            toml += &format!(
                "[[task]]\nname = \"T{k}\"\nmodel = \"periodic\"\nexec = \"{}us\"\nperiod = \"{}ms\"\n",
                100 + k % 7,
                400 + k % 13
            );
        }
        let scn = scenario(&toml);
        let id = ideal(&scn);
        // Underload (a quarter of a CPU): every task gets its whole demand and meets every deadline.
        for i in 0..1000 {
            assert!(id.all_met[i], "T{i}");
            assert!(id.cpu[i].len() <= 4, "T{i}: {} points for a constant rate", id.cpu[i].len());
        }
        assert!((id.total(0) - 25.0).abs() < 1e-6, "{}", id.total(0)); // 250 requests of 0.1 ms
    }

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
