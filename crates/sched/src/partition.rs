//! Partitioned scheduling: each task is bound to one CPU and each CPU runs its own uniprocessor copy
//! of a policy (partitioned EDF, partitioned fixed priority, ... as SimSo's `PartitionedScheduler`).
//!
//! **State.** One inner policy per CPU, built for one CPU, each with its own tasks (`parts.rs`);
//! each task's home CPU is the first CPU of its affinity.
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

use crate::parts::Parts;
use crate::{
    Availability, CpuId, Dispatch, Nanos, Notification, Policy, Running, Stop, TaskId, TaskParams,
    TimeConstraint, View,
};

/// A partitioned policy: one uniprocessor policy per CPU (`parts.rs`), each task held by the
/// CPU of its affinity for good.
pub struct Partitioned {
    parts: Parts<dyn Policy>,
}

impl Partitioned {
    /// Partitioned scheduling over `inner.len()` CPUs, `inner[k]` being CPU `k`'s policy (built for one
    /// CPU).
    pub fn new(inner: Vec<Box<dyn Policy>>) -> Self {
        Partitioned { parts: Parts::new(inner) }
    }

    /// The home CPU of `t`, if it was admitted.
    pub fn cpu_of(&self, t: TaskId) -> Option<CpuId> {
        self.parts.cpu_of(t)
    }
}

impl Policy for Partitioned {
    fn admit(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        self.parts.sync(v);
        let last = self.parts.len() as CpuId - 1;
        let cpu = p.cpus.as_ref().and_then(|c| c.first().copied()).unwrap_or(0).min(last);
        let local = self.parts.place(cpu, t, p);
        let part = self.parts.cpu_mut(cpu);
        part.policy.admit(local, &Parts::<dyn Policy>::local_params(p), &part.view);
    }

    fn exit(&mut self, t: TaskId, v: &View) {
        let (part, local) = self.parts.of(t, v);
        part.policy.exit(local, &part.view);
        self.parts.unplace(t);
    }

    fn wake(&mut self, t: TaskId, v: &View) {
        let (part, local) = self.parts.of(t, v);
        part.view.wake(local);
        part.policy.wake(local, &part.view);
    }

    fn stop(&mut self, t: TaskId, cpu: CpuId, charged: Nanos, why: Stop, v: &View) {
        debug_assert_eq!(Some(cpu), self.parts.cpu_of(t), "a partitioned task ran away from its CPU");
        let (part, local) = self.parts.of(t, v);
        part.view.stop(local, charged, why != Stop::Blocked);
        part.policy.stop(local, 0, charged, why, &part.view);
    }

    fn tick(&mut self, cpu: CpuId, v: &View) -> bool {
        self.parts.sync(v);
        let part = self.parts.cpu_mut(cpu);
        part.policy.tick(0, &part.view)
    }

    fn uses_tick(&self) -> bool {
        self.parts.cpu(0).policy.uses_tick()
    }

    fn shares_one_queue(&self) -> bool {
        false
    }

    fn select_cpu(&self, t: TaskId, _prev: Option<CpuId>, idle: &[CpuId], _v: &View) -> CpuId {
        let home = self.parts.home(t).cpu;
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
        running: &Running,
        _v: &View,
    ) -> Option<CpuId> {
        let h = self.parts.home(woken);
        let &(cpu, r) = running.iter().find(|(c, _)| *c == h.cpu)?;
        let part = self.parts.cpu(cpu);
        part.policy.preempt_for(h.local, Some(0), &[(0, self.parts.home(r).local)], &part.view).map(|_| cpu)
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        self.parts.sync(v);
        let part = self.parts.cpu_mut(cpu);
        let d = part.policy.pick_next(0, &part.view)?;
        part.view.dispatch(d.task, 0);
        Some(Dispatch { task: self.parts.global(cpu, d.task), ..d })
    }

    fn set_time_constraint(&mut self, t: TaskId, c: Option<TimeConstraint>, v: &View) {
        let (part, local) = self.parts.of(t, v);
        part.policy.set_time_constraint(local, c, &part.view);
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        // A new affinity does not move a partitioned task: it is bound at admission.
        let lp = Parts::<dyn Policy>::local_params(p);
        let (part, local) = self.parts.of(t, v);
        part.policy.set_params(local, &lp, &part.view);
        part.view.set_params(local, &lp);
    }

    fn interact(&mut self, t: TaskId, v: &View) {
        let (part, local) = self.parts.of(t, v);
        part.policy.interact(local, &part.view);
    }

    fn availability(&self, t: TaskId, v: &View) -> Availability {
        self.parts.availability(t, v)
    }

    fn take_notifications(&mut self, out: &mut Vec<Notification>) {
        self.parts.take_notifications(out);
    }

    fn next_timer(&self) -> Option<Nanos> {
        self.parts.next_timer()
    }

    fn timer(&mut self, v: &View) -> bool {
        self.parts.timer(v)
    }

    fn kick(&mut self, v: &View) -> Option<CpuId> {
        self.parts.kick(v)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.parts.counters()
    }

    fn walked(&self) -> u64 {
        self.parts.walked()
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
    use crate::{build, OptValue, Options};

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
        let mut p = build("edf", &o, 2).unwrap();
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
        assert_eq!(p.pick(1, 0).map(|d| d.task), Some(TaskId(2)));
        assert_eq!(p.pick(0, 0).map(|d| d.task), Some(TaskId(0)));
        // Task 1 (deadline 50) cannot preempt task 2 (deadline 20) on its CPU, and never CPU 0.
        let running = [(0, TaskId(0)), (1, TaskId(2))];
        assert_eq!(p.policy().preempt_for(TaskId(1), None, &running, p.view()), None);
        p.stop(TaskId(0), 1, Stop::Blocked, 1);
        assert_eq!(p.pick(0, 1), None, "task 1 lives on CPU 1");
        p.stop(TaskId(2), 5, Stop::Blocked, 5);
        assert_eq!(p.pick(1, 5).map(|d| d.task), Some(TaskId(1)));
        p.exit(TaskId(0), 6);
        p.admit(TaskId(3), &TaskParams { cpus: Some(vec![0]), ..TaskParams::default() }, 6);
        p.wake(TaskId(3), 6);
        assert_eq!(p.pick(0, 6).map(|d| d.task), Some(TaskId(3)), "local id reused");
    }
}
