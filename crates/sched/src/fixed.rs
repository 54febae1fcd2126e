//! Fixed priorities: POSIX SCHED_FIFO and SCHED_RR (and the SVR4 RT class, which behaves like them).
//!
//! **State.** One FIFO queue per priority.
//!
//! **Decision.** The head of the most important non-empty queue runs until it blocks, a more important
//! task wakes, or (RR only) its slice ends and it goes to the back of its queue. A preempted task goes
//! back to the front of its queue, as POSIX requires.
//!
//! **Where it is weak.** Importance and urgency are one number: a runaway high-priority task starves
//! everything below it (Nieh ch. 2), and no deadline information is used.

use std::collections::{BTreeMap, VecDeque};

use crate::usage::Accounts;
use crate::{slot, Availability, Dispatch, Nanos, Policy, Stop, TaskId, TaskParams};

/// Fixed-priority FIFO or round robin.
#[derive(Debug, Default)]
pub struct FixedPriority {
    rr_slice: Option<Nanos>,
    prio: Vec<i32>,
    queues: BTreeMap<i32, VecDeque<TaskId>>,
    acct: Accounts,
    decisions: u64,
}

impl FixedPriority {
    /// SCHED_FIFO.
    pub fn fifo() -> Self {
        FixedPriority::default()
    }

    /// SCHED_RR with this slice.
    pub fn rr(slice: Nanos) -> Self {
        FixedPriority { rr_slice: Some(slice.max(1)), ..Default::default() }
    }

    fn enqueue(&mut self, t: TaskId, front: bool) {
        let q = self.queues.entry(self.prio[t.idx()]).or_default();
        if front {
            q.push_front(t)
        } else {
            q.push_back(t)
        }
    }

    fn remove(&mut self, t: TaskId) {
        if let Some(q) = self.queues.get_mut(&self.prio[t.idx()]) {
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

    fn admit(&mut self, t: TaskId, p: &TaskParams, now: Nanos) {
        *slot(&mut self.prio, t) = p.priority;
        self.acct.admit(t, p.priority, 1, now);
    }

    fn exit(&mut self, t: TaskId, _now: Nanos) {
        self.remove(t);
        self.acct.exit(t);
    }

    fn wake(&mut self, t: TaskId, _now: Nanos) {
        self.enqueue(t, false);
    }

    fn stop(&mut self, t: TaskId, charged: Nanos, why: Stop, now: Nanos) {
        self.acct.add(t, charged, now);
        if let Some(front) = why.requeue_front() {
            self.enqueue(t, front);
        }
    }

    fn wakeup_preempts(&self, running: TaskId, woken: TaskId, _now: Nanos) -> bool {
        self.prio[woken.idx()] > self.prio[running.idx()]
    }

    fn pick_next(&mut self, _now: Nanos) -> Option<Dispatch> {
        self.decisions += 1;
        let t = self.queues.values_mut().rev().find_map(|q| q.pop_front())?;
        Some(Dispatch { task: t, slice: self.rr_slice })
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, _now: Nanos) {
        let queued = self.queues.get(&self.prio[t.idx()]).is_some_and(|q| q.contains(&t));
        self.remove(t);
        self.prio[t.idx()] = p.priority;
        self.acct.set(t, p.priority, 1);
        if queued {
            self.enqueue(t, false);
        }
    }

    fn availability(&self, t: TaskId, now: Nanos) -> Availability {
        let same = self.prio.iter().filter(|p| **p == self.prio[t.idx()]).count() as u64;
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
        let mut f = FixedPriority::fifo();
        for (i, p) in [(0, 1), (1, 5), (2, 5)] {
            f.admit(TaskId(i), &TaskParams { priority: p, ..Default::default() }, 0);
            f.wake(TaskId(i), 0);
        }
        assert_eq!(f.pick_next(0).unwrap(), Dispatch { task: TaskId(1), slice: None });
        f.stop(TaskId(1), 1, Stop::Preempted, 1);
        assert_eq!(f.pick_next(1).unwrap().task, TaskId(1), "preempted goes back to the front");
        f.stop(TaskId(1), 1, Stop::Blocked, 2);
        assert_eq!(f.pick_next(2).unwrap().task, TaskId(2));
        assert!(!f.wakeup_preempts(TaskId(2), TaskId(0), 2));
    }

    #[test]
    fn round_robin_rotates() {
        let mut f = FixedPriority::rr(5);
        for i in 0..2 {
            f.admit(TaskId(i), &TaskParams::default(), 0);
            f.wake(TaskId(i), 0);
        }
        let d = f.pick_next(0).unwrap();
        assert_eq!(d, Dispatch { task: TaskId(0), slice: Some(5) });
        f.stop(TaskId(0), 5, Stop::SliceEnd, 5);
        assert_eq!(f.pick_next(5).unwrap().task, TaskId(1));
    }
}
