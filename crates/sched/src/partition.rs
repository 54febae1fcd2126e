//! Partitioned scheduling: each task is bound to one CPU and each CPU runs its own uniprocessor copy
//! of a policy (partitioned EDF, partitioned fixed priority, ... as SimSo's `PartitionedScheduler`).
//!
//! **State.** One inner policy per CPU, built for one CPU; each task's home CPU (the first CPU of its
//! affinity) and its id inside that CPU's policy (dense per CPU, so an inner policy's per-task vectors
//! hold only its own tasks).
//!
//! **Events.** Every call about a task goes to its home CPU's policy; `pick_next(cpu)` asks that CPU's
//! policy; a wake-up can only preempt the task running on its home CPU.
//!
//! **Placement.** The tasks' affinities decide (`partition = "affinity"`), or the driver assigns them
//! before the run with [`first_fit_decreasing`] (`partition = "ffd"`), exactly as SimSo's
//! `decreasing_first_fit` does.
//!
//! **Tie-break.** Each CPU's policy breaks its own ties (see that policy); tasks on different CPUs
//! never compete.
//!
//! **Where it is weak.** No migration ever: a CPU may idle while another has a queue (that is what
//! partitioning means), and a task whose affinity names several CPUs is bound to the first of them.

use crate::{
    Availability, CpuId, Dispatch, Nanos, Notification, Policy, Stop, TaskId, TaskParams, TimeConstraint,
};

/// Where a task lives.
#[derive(Copy, Clone, Debug)]
struct Home {
    cpu: CpuId,
    local: TaskId,
}

/// A partitioned policy: one uniprocessor policy per CPU.
pub struct Partitioned {
    inner: Vec<Box<dyn Policy>>,
    /// Per global task id: its home, while admitted.
    home: Vec<Option<Home>>,
    /// Per CPU: global ids by local id, and local ids free for reuse.
    global: Vec<Vec<TaskId>>,
    free: Vec<Vec<TaskId>>,
    notes: Vec<Notification>,
    name: &'static str,
}

impl Partitioned {
    /// Partitioned scheduling over `inner.len()` CPUs, `inner[k]` being CPU `k`'s policy (built for one
    /// CPU).
    pub fn new(inner: Vec<Box<dyn Policy>>) -> Self {
        assert!(!inner.is_empty() && inner.iter().all(|p| p.cpus() == 1));
        let n = inner.len();
        let name = match inner[0].name() {
            "smart" => "smart (partitioned)",
            "wfq" => "wfq (partitioned)",
            "wfq-credit" => "wfq-credit (partitioned)",
            "edf" => "edf (partitioned)",
            "fifo" => "fifo (partitioned)",
            "rr" => "rr (partitioned)",
            _ => "partitioned",
        };
        Partitioned {
            inner,
            home: Vec::new(),
            global: vec![Vec::new(); n],
            free: vec![Vec::new(); n],
            notes: Vec::new(),
            name,
        }
    }

    fn home(&self, t: TaskId) -> Home {
        self.home[t.idx()].expect("a task admitted to the partitioned policy")
    }

    /// The home CPU of `t`, if it was admitted.
    pub fn cpu_of(&self, t: TaskId) -> Option<CpuId> {
        self.home.get(t.idx()).copied().flatten().map(|h| h.cpu)
    }

    fn global_id(&self, cpu: CpuId, local: TaskId) -> TaskId {
        self.global[cpu as usize][local.idx()]
    }

    fn with_home<R>(&mut self, t: TaskId, f: impl FnOnce(&mut dyn Policy, TaskId) -> R) -> R {
        let h = self.home(t);
        f(self.inner[h.cpu as usize].as_mut(), h.local)
    }

    fn local_params(p: &TaskParams) -> TaskParams {
        TaskParams { cpus: None, ..p.clone() }
    }
}

impl Policy for Partitioned {
    fn name(&self) -> &'static str {
        self.name
    }

    fn cpus(&self) -> usize {
        self.inner.len()
    }

    fn admit(&mut self, t: TaskId, p: &TaskParams, now: Nanos) {
        let cpu =
            p.cpus.as_ref().and_then(|c| c.first().copied()).unwrap_or(0).min(self.inner.len() as u32 - 1);
        let c = cpu as usize;
        let local = self.free[c].pop().unwrap_or(TaskId(self.global[c].len() as u32));
        if local.idx() == self.global[c].len() {
            self.global[c].push(t);
        } else {
            self.global[c][local.idx()] = t;
        }
        *crate::slot(&mut self.home, t) = Some(Home { cpu, local });
        self.inner[c].admit(local, &Self::local_params(p), now);
    }

    fn exit(&mut self, t: TaskId, now: Nanos) {
        let h = self.home(t);
        self.inner[h.cpu as usize].exit(h.local, now);
        // Notifications about it that the inner policy still holds are moved out first (with the
        // right id), then its local id can be reused.
        let mut local_notes = Vec::new();
        self.inner[h.cpu as usize].take_notifications(&mut local_notes);
        for n in local_notes {
            self.notes.push(Notification { task: self.global_id(h.cpu, n.task), ..n });
        }
        self.free[h.cpu as usize].push(h.local);
        self.home[t.idx()] = None;
    }

    fn wake(&mut self, t: TaskId, now: Nanos) {
        self.with_home(t, |p, l| p.wake(l, now));
    }

    fn stop(&mut self, t: TaskId, cpu: CpuId, charged: Nanos, why: Stop, now: Nanos) {
        debug_assert_eq!(cpu, self.home(t).cpu, "a partitioned task ran away from its CPU");
        self.with_home(t, |p, l| p.stop(l, 0, charged, why, now));
    }

    fn tick(&mut self, cpu: CpuId, running: Option<TaskId>, now: Nanos) -> bool {
        let local = running.map(|t| self.home(t).local);
        self.inner[cpu as usize].tick(0, local, now)
    }

    fn uses_tick(&self) -> bool {
        self.inner[0].uses_tick()
    }

    fn select_cpu(&self, t: TaskId, _prev: Option<CpuId>, idle: &[CpuId]) -> CpuId {
        let home = self.home(t).cpu;
        if idle.contains(&home) {
            home
        } else {
            idle[0]
        }
    }

    fn preempt_for(
        &self,
        woken: TaskId,
        _prev: Option<CpuId>,
        running: &[(CpuId, TaskId)],
        now: Nanos,
    ) -> Option<CpuId> {
        let h = self.home(woken);
        let &(cpu, r) = running.iter().find(|(c, _)| *c == h.cpu)?;
        let local_running = self.home(r).local;
        self.inner[cpu as usize].preempt_for(h.local, Some(0), &[(0, local_running)], now).map(|_| cpu)
    }

    fn pick_next(&mut self, cpu: CpuId, now: Nanos) -> Option<Dispatch> {
        let d = self.inner[cpu as usize].pick_next(0, now)?;
        Some(Dispatch { task: self.global_id(cpu, d.task), ..d })
    }

    fn set_time_constraint(&mut self, t: TaskId, c: Option<TimeConstraint>, now: Nanos) {
        self.with_home(t, |p, l| p.set_time_constraint(l, c, now));
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, now: Nanos) {
        // A new affinity does not move a partitioned task: it is bound at admission.
        let lp = Self::local_params(p);
        self.with_home(t, |inner, l| inner.set_params(l, &lp, now));
    }

    fn interact(&mut self, t: TaskId, now: Nanos) {
        self.with_home(t, |p, l| p.interact(l, now));
    }

    fn availability(&self, t: TaskId, now: Nanos) -> Availability {
        let h = self.home(t);
        self.inner[h.cpu as usize].availability(h.local, now)
    }

    fn notifies(&self) -> bool {
        self.inner[0].notifies()
    }

    fn take_notifications(&mut self, out: &mut Vec<Notification>) {
        out.append(&mut self.notes);
        let mut local = Vec::new();
        for cpu in 0..self.inner.len() {
            self.inner[cpu].take_notifications(&mut local);
            for n in local.drain(..) {
                out.push(Notification { task: self.global_id(cpu as CpuId, n.task), ..n });
            }
        }
    }

    fn next_timer(&self) -> Option<Nanos> {
        self.inner.iter().filter_map(|p| p.next_timer()).min()
    }

    fn timer(&mut self, now: Nanos) -> bool {
        let mut resched = false;
        for p in &mut self.inner {
            if p.next_timer().is_some_and(|t| t <= now) {
                resched |= p.timer(now);
            }
        }
        resched
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut sum: Vec<(&'static str, u64)> = Vec::new();
        for p in &self.inner {
            for (k, v) in p.counters() {
                match sum.iter_mut().find(|(x, _)| *x == k) {
                    Some(e) => e.1 += v,
                    None => sum.push((k, v)),
                }
            }
        }
        sum
    }
}

/// First fit by decreasing utilisation, as SimSo's `decreasing_first_fit`: tasks sorted by
/// `exec / period` from the largest (equal ones keep their order), each on the first CPU where it fits
/// (`load × period + exec ≤ period`, SimSo's own test). `tasks` are (exec, period) pairs in any unit;
/// returns the CPU of each task in the input order, or the index of the first task that fits nowhere.
pub fn first_fit_decreasing(tasks: &[(f64, f64)], cpus: usize) -> Result<Vec<CpuId>, usize> {
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by(|&a, &b| (tasks[b].0 / tasks[b].1).total_cmp(&(tasks[a].0 / tasks[a].1)));
    let mut load = vec![0.0f64; cpus];
    let mut out = vec![0 as CpuId; tasks.len()];
    for i in order {
        let (exec, period) = tasks[i];
        let k = (0..cpus).find(|&k| load[k] * period + exec <= period).ok_or(i)?;
        load[k] += exec / period;
        out[i] = k as CpuId;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{by_name, OptValue, Options};

    #[test]
    fn first_fit_decreasing_packs_the_largest_first() {
        // Utilisations 0.3, 0.6, 0.5, 0.4 on two CPUs, taken largest first: 0.6 → 0, 0.5 → 1 (0.6 + 0.5
        // is too much for 0), 0.4 → 0 (exactly full), 0.3 → 1.
        let t = [(3.0, 10.0), (6.0, 10.0), (5.0, 10.0), (4.0, 10.0)];
        assert_eq!(first_fit_decreasing(&t, 2), Ok(vec![1, 0, 1, 0]));
        assert_eq!(first_fit_decreasing(&[(6.0, 10.0), (6.0, 10.0), (6.0, 10.0)], 2), Err(2));
    }

    #[test]
    fn each_cpu_schedules_its_own_tasks() {
        let mut o = Options::new();
        o.insert("partition".into(), OptValue::Str("affinity".into()));
        let mut p = by_name("edf", &o, 2).unwrap();
        assert_eq!(p.name(), "edf (partitioned)");
        for (i, cpu) in [(0, 0), (1, 1), (2, 1)] {
            p.admit(TaskId(i), &TaskParams { cpus: Some(vec![cpu]), ..TaskParams::default() }, 0);
        }
        let c = |d| Some(TimeConstraint::deadline(d));
        p.set_time_constraint(TaskId(1), c(50), 0);
        p.set_time_constraint(TaskId(2), c(20), 0);
        for i in 0..3 {
            p.wake(TaskId(i), 0);
        }
        assert_eq!(p.pick_next(1, 0).map(|d| d.task), Some(TaskId(2)));
        assert_eq!(p.pick_next(0, 0).map(|d| d.task), Some(TaskId(0)));
        assert_eq!(p.pick_next(0, 0), None, "task 1 lives on CPU 1");
        // Task 1 (deadline 50) cannot preempt task 2 (deadline 20) on its CPU, and never CPU 0.
        assert_eq!(p.preempt_for(TaskId(1), None, &[(0, TaskId(0)), (1, TaskId(2))], 0), None);
        p.stop(TaskId(2), 1, 5, Stop::Blocked, 5);
        assert_eq!(p.pick_next(1, 5).map(|d| d.task), Some(TaskId(1)));
        p.exit(TaskId(0), 6);
        p.admit(TaskId(3), &TaskParams { cpus: Some(vec![0]), ..TaskParams::default() }, 6);
        p.wake(TaskId(3), 6);
        assert_eq!(p.pick_next(0, 6).map(|d| d.task), Some(TaskId(3)), "local id reused");
    }
}
