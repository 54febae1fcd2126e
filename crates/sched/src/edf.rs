//! Earliest deadline first (Liu & Layland 1973), the real-time baseline.
//!
//! **State.** Tasks with a time constraint, ordered by absolute deadline (ties: first come first
//! served); tasks without one, in a round-robin queue below them.
//!
//! **Decision.** The earliest deadline runs until it blocks or an earlier deadline wakes; if no task has
//! a constraint, round robin with `slice` (default 10 ms).
//!
//! **Where it is weak.** Optimal in underload; in overload it has no notion of importance, so a task
//! past its deadline keeps the earliest deadline and late work cascades (the domino effect). It sends no
//! notifications: a task only learns of a miss by itself.

use std::collections::{BTreeSet, VecDeque};

use crate::usage::Accounts;
use crate::{slot, Availability, Dispatch, Nanos, Policy, Stop, TaskId, TaskParams, TimeConstraint};

#[derive(Clone, Debug, Default)]
struct EdfTask {
    deadline: Option<Nanos>,
    runnable: bool,
    seq: u64,
}

/// The EDF policy.
#[derive(Debug, Default)]
pub struct Edf {
    slice: Nanos,
    tasks: Vec<EdfTask>,
    rt: BTreeSet<(Nanos, u64, u32)>,
    rr: VecDeque<TaskId>,
    seq: u64,
    acct: Accounts,
    decisions: u64,
}

impl Edf {
    /// An EDF scheduler; `slice` is the round-robin slice of tasks without a constraint.
    pub fn new(slice: Nanos) -> Self {
        Edf { slice: slice.max(1), ..Default::default() }
    }

    fn enqueue(&mut self, t: TaskId, front: bool) {
        self.seq += 1;
        let st = &mut self.tasks[t.idx()];
        st.runnable = true;
        st.seq = self.seq;
        match st.deadline {
            Some(d) => {
                self.rt.insert((d, st.seq, t.0));
            }
            None if front => self.rr.push_front(t),
            None => self.rr.push_back(t),
        }
    }

    fn dequeue(&mut self, t: TaskId) {
        let st = &mut self.tasks[t.idx()];
        if !st.runnable {
            return;
        }
        st.runnable = false;
        match st.deadline {
            Some(d) => {
                self.rt.remove(&(d, st.seq, t.0));
            }
            None => self.rr.retain(|x| *x != t),
        }
    }
}

impl Policy for Edf {
    fn name(&self) -> &'static str {
        "edf"
    }

    fn admit(&mut self, t: TaskId, p: &TaskParams, now: Nanos) {
        *slot(&mut self.tasks, t) = EdfTask::default();
        self.acct.admit(t, 0, p.share.max(1), now);
    }

    fn exit(&mut self, t: TaskId, _now: Nanos) {
        self.dequeue(t);
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
        match (self.tasks[woken.idx()].deadline, self.tasks[running.idx()].deadline) {
            (Some(w), Some(r)) => w < r,
            (Some(_), None) => true,
            _ => false,
        }
    }

    fn pick_next(&mut self, _now: Nanos) -> Option<Dispatch> {
        self.decisions += 1;
        if let Some(&(_, _, id)) = self.rt.first() {
            let t = TaskId(id);
            self.dequeue(t);
            return Some(Dispatch { task: t, slice: None });
        }
        let t = *self.rr.front()?;
        self.dequeue(t);
        Some(Dispatch { task: t, slice: Some(self.slice) })
    }

    fn set_time_constraint(&mut self, t: TaskId, c: Option<TimeConstraint>, _now: Nanos) {
        let runnable = self.tasks[t.idx()].runnable;
        self.dequeue(t);
        self.tasks[t.idx()].deadline = c.map(|c| c.deadline);
        if runnable {
            self.enqueue(t, false);
        }
    }

    fn set_params(&mut self, _t: TaskId, _p: &TaskParams, _now: Nanos) {}

    fn availability(&self, t: TaskId, now: Nanos) -> Availability {
        let n = self.tasks.len() as u64;
        self.acct.availability(t, now, n)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("decisions", self.decisions)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_deadline_first_then_round_robin() {
        let mut e = Edf::new(10);
        for i in 0..3 {
            e.admit(TaskId(i), &TaskParams::default(), 0);
        }
        let c = |d| Some(TimeConstraint { deadline: d, cpu_estimate: None, notify_time: None, period: None });
        e.set_time_constraint(TaskId(1), c(50), 0);
        e.set_time_constraint(TaskId(2), c(30), 0);
        for i in 0..3 {
            e.wake(TaskId(i), 0);
        }
        assert_eq!(e.pick_next(0).unwrap().task, TaskId(2));
        assert!(e.wakeup_preempts(TaskId(0), TaskId(1), 0));
        e.stop(TaskId(2), 5, Stop::Blocked, 5);
        assert_eq!(e.pick_next(5).unwrap().task, TaskId(1));
        e.stop(TaskId(1), 5, Stop::Blocked, 10);
        assert_eq!(e.pick_next(10).unwrap(), Dispatch { task: TaskId(0), slice: Some(10) });
    }
}
