//! Fixed priorities: POSIX SCHED_FIFO and SCHED_RR (and the SVR4 RT class, which behaves like them);
//! global on N CPUs.
//!
//! **State.** One FIFO queue per priority, shared by all CPUs.
//!
//! **Decision.** On a free CPU, the head of the most important non-empty queue (the first task there
//! allowed on that CPU) runs until it blocks, a more important task wakes, or (RR only) its slice ends
//! and it goes to the back of its queue. A preempted task goes back to the front of its queue, as
//! POSIX requires. A waking task preempts the CPU running the least important task if it is more
//! important than that task (as Linux's RT class pushes to the lowest-priority CPU). Rate monotonic is
//! this policy with priorities by period.
//!
//! **Tie-break.** Within a priority, queue order: a woken task at the back, a preempted one at the
//! front, a `rr` task whose slice ended at the back. A task that finishes a job late with its next
//! job already released does not block, so it keeps its CPU and runs that job at once: among periodic
//! tasks of one priority (rate monotonic with equal periods), a late task runs its backlog ahead of
//! its equals, which wait in wake-up order, exactly as a SCHED_FIFO thread that never blocks would.
//!
//! **Where it is weak.** Importance and urgency are one number: a runaway high-priority task starves
//! everything below it (Nieh ch. 2), and no deadline information is used.

use std::collections::{BTreeMap, VecDeque};

use crate::usage::Accounts;
use crate::{
    preempt_lower_rank, slot, take_first_allowed, Availability, CpuId, Dispatch, Nanos, Policy, Stop, TaskId,
    TaskParams,
};

/// Fixed-priority FIFO or round robin.
#[derive(Debug, Default)]
pub struct FixedPriority {
    rr_slice: Option<Nanos>,
    cpus: usize,
    params: Vec<TaskParams>,
    queues: BTreeMap<i32, VecDeque<TaskId>>,
    acct: Accounts,
    decisions: u64,
}

impl FixedPriority {
    /// SCHED_FIFO on `cpus` CPUs.
    pub fn fifo(cpus: usize) -> Self {
        FixedPriority { cpus, ..Default::default() }
    }

    /// SCHED_RR with this slice on `cpus` CPUs.
    pub fn rr(slice: Nanos, cpus: usize) -> Self {
        FixedPriority { rr_slice: Some(slice.max(1)), cpus, ..Default::default() }
    }

    fn prio(&self, t: TaskId) -> i32 {
        self.params[t.idx()].priority
    }

    fn enqueue(&mut self, t: TaskId, front: bool) {
        let q = self.queues.entry(self.prio(t)).or_default();
        if front {
            q.push_front(t)
        } else {
            q.push_back(t)
        }
    }

    fn remove(&mut self, t: TaskId) {
        if let Some(q) = self.queues.get_mut(&self.params[t.idx()].priority) {
            q.retain(|x| *x != t);
        }
    }
}

impl Policy for FixedPriority {
    fn name(&self) -> &'static str {
        if self.rr_slice.is_some() {
            "rr"
        } else {
            "fifo"
        }
    }

    fn cpus(&self) -> usize {
        self.cpus
    }

    fn admit(&mut self, t: TaskId, p: &TaskParams, now: Nanos) {
        *slot(&mut self.params, t) = p.clone();
        self.acct.admit(t, p.priority, 1, now);
    }

    fn exit(&mut self, t: TaskId, _now: Nanos) {
        self.remove(t);
        self.acct.exit(t);
    }

    fn wake(&mut self, t: TaskId, _now: Nanos) {
        self.enqueue(t, false);
    }

    fn stop(&mut self, t: TaskId, _cpu: CpuId, charged: Nanos, why: Stop, now: Nanos) {
        self.acct.add(t, charged, now);
        if let Some(front) = why.requeue_front() {
            self.enqueue(t, front);
        }
    }

    fn preempt_for(
        &self,
        woken: TaskId,
        prev: Option<CpuId>,
        running: &[(CpuId, TaskId)],
        _now: Nanos,
    ) -> Option<CpuId> {
        preempt_lower_rank(woken, prev, running, |r| self.prio(r))
    }

    fn pick_next(&mut self, cpu: CpuId, _now: Nanos) -> Option<Dispatch> {
        self.decisions += 1;
        let t = take_first_allowed(self.queues.values_mut(), &self.params, cpu)?;
        Some(Dispatch { task: t, slice: self.rr_slice })
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, _now: Nanos) {
        let queued = self.queues.get(&self.prio(t)).is_some_and(|q| q.contains(&t));
        self.remove(t);
        self.params[t.idx()] = p.clone();
        self.acct.set(t, p.priority, 1);
        if queued {
            self.enqueue(t, false);
        }
    }

    fn availability(&self, t: TaskId, now: Nanos) -> Availability {
        let same = self.params.iter().filter(|p| p.priority == self.prio(t)).count() as u64;
        self.acct.availability(t, now, same)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("decisions", self.decisions)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn higher_priority_first_fifo_within() {
        let mut f = FixedPriority::fifo(1);
        for (i, p) in [(0, 1), (1, 5), (2, 5)] {
            f.admit(TaskId(i), &TaskParams { priority: p, ..Default::default() }, 0);
            f.wake(TaskId(i), 0);
        }
        assert_eq!(f.pick_next(0, 0).unwrap(), Dispatch { task: TaskId(1), slice: None });
        f.stop(TaskId(1), 0, 1, Stop::Preempted, 1);
        assert_eq!(f.pick_next(0, 1).unwrap().task, TaskId(1), "preempted goes back to the front");
        f.stop(TaskId(1), 0, 1, Stop::Blocked, 2);
        assert_eq!(f.pick_next(0, 2).unwrap().task, TaskId(2));
        assert_eq!(f.preempt_for(TaskId(0), None, &[(0, TaskId(2))], 2), None);
    }

    #[test]
    fn round_robin_rotates() {
        let mut f = FixedPriority::rr(5, 1);
        for i in 0..2 {
            f.admit(TaskId(i), &TaskParams::default(), 0);
            f.wake(TaskId(i), 0);
        }
        let d = f.pick_next(0, 0).unwrap();
        assert_eq!(d, Dispatch { task: TaskId(0), slice: Some(5) });
        f.stop(TaskId(0), 0, 5, Stop::SliceEnd, 5);
        assert_eq!(f.pick_next(0, 5).unwrap().task, TaskId(1));
    }

    #[test]
    fn on_two_cpus_a_waking_task_preempts_the_least_important() {
        let mut f = FixedPriority::fifo(2);
        for (i, p) in [(0, 3), (1, 1), (2, 2)] {
            f.admit(TaskId(i), &TaskParams { priority: p, ..Default::default() }, 0);
        }
        f.wake(TaskId(0), 0);
        f.wake(TaskId(1), 0);
        assert_eq!(f.pick_next(0, 0).unwrap().task, TaskId(0));
        assert_eq!(f.pick_next(1, 0).unwrap().task, TaskId(1));
        f.wake(TaskId(2), 1);
        assert_eq!(f.preempt_for(TaskId(2), None, &[(0, TaskId(0)), (1, TaskId(1))], 1), Some(1));
    }
}
