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

use crate::registry::{opt, Entry, LinuxClass, Pace, Slice};
use crate::MS;
use crate::{
    preempt_lower_rank, take_first_allowed, Availability, CpuId, Dispatch, Nanos, Policy, Running, Stop,
    TaskId, TaskParams, View,
};

/// Fixed-priority FIFO or round robin.
#[derive(Debug, Default)]
pub struct FixedPriority {
    rr_slice: Option<Nanos>,
    queues: BTreeMap<i32, VecDeque<TaskId>>,
}

impl FixedPriority {
    /// SCHED_FIFO (one queue per priority for all CPUs, whatever their number).
    pub fn fifo() -> Self {
        FixedPriority::default()
    }

    /// SCHED_RR with this slice.
    pub fn rr(slice: Nanos) -> Self {
        FixedPriority { rr_slice: Some(slice.max(1)), ..Default::default() }
    }

    fn enqueue(&mut self, t: TaskId, prio: i32, front: bool) {
        let q = self.queues.entry(prio).or_default();
        if front {
            q.push_front(t)
        } else {
            q.push_back(t)
        }
    }

    /// Takes `t` out of its queue; whether it was there.
    fn remove(&mut self, t: TaskId, prio: i32) -> bool {
        let Some(q) = self.queues.get_mut(&prio) else { return false };
        let Some(i) = q.iter().position(|x| *x == t) else { return false };
        q.remove(i);
        true
    }
}

impl Policy for FixedPriority {
    fn admit(&mut self, _t: TaskId, _p: &TaskParams, _v: &View) {}

    fn exit(&mut self, t: TaskId, v: &View) {
        self.remove(t, v.params(t).priority);
    }

    fn wake(&mut self, t: TaskId, v: &View) {
        self.enqueue(t, v.params(t).priority, false);
    }

    fn stop(&mut self, t: TaskId, _cpu: CpuId, _charged: Nanos, why: Stop, v: &View) {
        if let Some(front) = why.requeue_front() {
            self.enqueue(t, v.params(t).priority, front);
        }
    }

    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, v: &View) -> Option<CpuId> {
        preempt_lower_rank(woken, prev, running, |r| v.params(r).priority)
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        let t = take_first_allowed(self.queues.values_mut(), v, cpu)?;
        Some(Dispatch { task: t, slice: self.rr_slice })
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        // A queued task moves to the back of its new priority.
        if self.remove(t, v.params(t).priority) {
            self.enqueue(t, p.priority, false);
        }
    }

    fn availability(&self, t: TaskId, v: &View) -> Availability {
        let prio = |x: TaskId| v.params(x).priority;
        let same = v.live().filter(|&x| prio(x) == prio(t)).count() as u64;
        v.availability_by_rank(t, prio, 1, same)
    }
}

/// The registry's entry of `fifo`.
pub const FIFO: Entry = Entry::new("fifo", "fixed.rs", |_, _| Ok(Box::new(FixedPriority::fifo())))
    .about("fixed priority, first in first out within a priority (SCHED_FIFO)")
    .linux(LinuxClass::Fifo);

/// The registry's entry of `rr`.
pub const RR: Entry =
    Entry::new("rr", "fixed.rs", |o, _| Ok(Box::new(FixedPriority::rr(o.slice("slice", RR_SLICE)?))))
        .about("fixed priority, round robin within a priority (SCHED_RR)")
        .options(&[opt("slice", "100ms", "the slice after which a task goes to the back of its priority")])
        .linux(LinuxClass::Rr)
        .pace(|o, _| {
            let s = o.slice("slice", RR_SLICE)?;
            Ok(Pace { slice: Some(Slice::of(o, "slice", s)), timer: None, walks_tasks: false })
        });

/// The round-robin slice of `rr` unless the scenario gives one.
const RR_SLICE: Nanos = 100 * MS;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_core;

    #[test]
    fn higher_priority_first_fifo_within() {
        let mut f = test_core(FixedPriority::fifo(), 1);
        for (i, p) in [(0, 1), (1, 5), (2, 5)] {
            f.admit(TaskId(i), &TaskParams { priority: p, ..Default::default() }, 0);
            f.wake(TaskId(i), 0);
        }
        assert_eq!(f.pick(0, 0).unwrap(), Dispatch { task: TaskId(1), slice: None });
        f.stop(TaskId(1), 1, Stop::Preempted, 1);
        assert_eq!(f.pick(0, 1).unwrap().task, TaskId(1), "preempted goes back to the front");
        f.stop(TaskId(1), 1, Stop::Blocked, 2);
        assert_eq!(f.pick(0, 2).unwrap().task, TaskId(2));
        assert_eq!(f.policy().preempt_for(TaskId(0), None, &[(0, TaskId(2))], f.view()), None);
    }

    #[test]
    fn round_robin_rotates() {
        let mut f = test_core(FixedPriority::rr(5), 1);
        for i in 0..2 {
            f.admit(TaskId(i), &TaskParams::default(), 0);
            f.wake(TaskId(i), 0);
        }
        let d = f.pick(0, 0).unwrap();
        assert_eq!(d, Dispatch { task: TaskId(0), slice: Some(5) });
        f.stop(TaskId(0), 5, Stop::SliceEnd, 5);
        assert_eq!(f.pick(0, 5).unwrap().task, TaskId(1));
    }

    #[test]
    fn on_two_cpus_a_waking_task_preempts_the_least_important() {
        let mut f = test_core(FixedPriority::fifo(), 2);
        for (i, p) in [(0, 3), (1, 1), (2, 2)] {
            f.admit(TaskId(i), &TaskParams { priority: p, ..Default::default() }, 0);
        }
        f.wake(TaskId(0), 0);
        f.wake(TaskId(1), 0);
        assert_eq!(f.pick(0, 0).unwrap().task, TaskId(0));
        assert_eq!(f.pick(1, 0).unwrap().task, TaskId(1));
        f.wake(TaskId(2), 1);
        assert_eq!(
            f.policy().preempt_for(TaskId(2), None, &[(0, TaskId(0)), (1, TaskId(1))], f.view()),
            Some(1)
        );
    }
}
