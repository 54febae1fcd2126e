//! Earliest deadline first (Liu & Layland 1973), the real-time baseline; global on N CPUs.
//!
//! **State.** Tasks with a time constraint, ordered by absolute deadline; tasks without one, in a
//! round-robin queue below them.
//!
//! **Tie-break** (option `ties`). `"release"` (the default): equal deadlines are served first come,
//! first served by release, as SimSo's `EDF_mono` ready list (kept in activation order) serves them:
//! the key is the request's release
//! ([`TimeConstraint::release`], or when the constraint was set if the caller gave none, or when the
//! task woke), kept when the request is preempted, so a preempted job goes back ahead of later jobs
//! with its deadline; a job that waited behind its late predecessor keeps its own release, not the
//! time its turn came. Equal releases: lower task number first. A task that yields goes behind
//! the requests that arrived meanwhile (its key becomes the time of the yield). Tasks without a
//! constraint round-robin below. `"task"`: as SimSo's global `EDF` (simso 0.8.5,
//! `simso/schedulers/EDF.py`), job by job on any number of CPUs: equal deadlines go by task number
//! (its `schedule` takes `min(ready_jobs, key=absolute_deadline)` over its task list, the first of
//! the earliest deadlines in task order), a running job is replaced only for a strictly earlier
//! deadline, and where each job goes is decided as SimSo's dispatcher decides it, one event at a
//! time on the event's CPU in the order SimSo's processes take their turns (the model of SimSo's
//! dispatcher in `simso.rs`, which this policy then follows: it places jobs by [`Policy::kick`],
//! never by [`Policy::preempt_for`]); tasks without a constraint come last and take turns. With
//! `"release"`, one queue for all CPUs. The deadline queue is a binary heap
//! whose entries are dropped lazily: a task taken out of it (dispatched elsewhere, new constraint)
//! leaves its entry behind, recognised as stale by its sequence number when it reaches the top.
//!
//! **Decision.** On a free CPU, the earliest deadline allowed there runs until it blocks or is
//! preempted; if no task has a constraint, round robin with `slice` (default 10 ms). A waking task with
//! a deadline preempts the CPU running the latest deadline (or no deadline) if its own is earlier: on N
//! CPUs the N earliest deadlines run (global EDF, as SimSo's `EDF`; partitioned EDF is this policy on
//! each CPU, [`crate::partition`]).
//!
//! **Where it is weak.** Optimal on one CPU in underload; in overload it has no notion of importance,
//! so a task past its deadline keeps the earliest deadline and late work cascades (the domino effect).
//! On N CPUs it is not optimal: a set of utilisation barely above 1 can miss (Dhall's effect), and it
//! is safe only below N − (N − 1)·u_max (Goossens, Funk, Baruah 2003). It sends no notifications: a
//! task only learns of a miss by itself.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::fixed::{Ties, TIES_OPT};
use crate::registry::{opt, Entry, LinuxClass, Pace, Slice, Walks};
use crate::simso::{Rule, Shadow};
use crate::MS;
use crate::{
    least_important, slot, Availability, CpuId, Dispatch, Nanos, Policy, Running, Stop, TaskId, TaskParams,
    TimeConstraint, View,
};

#[derive(Clone, Debug, Default)]
struct EdfTask {
    deadline: Option<Nanos>,
    runnable: bool,
    /// When its current request became ready (the first-come-first-served tie).
    ready_at: Nanos,
    /// The sequence number of its live entry in the deadline queue (entries with another are stale).
    seq: u64,
}

/// An entry of the deadline queue: (deadline, ready_at, task, sequence number), earliest first.
type HeapEntry = Reverse<(Nanos, Nanos, u32, u64)>;

/// The EDF policy.
#[derive(Debug, Default)]
pub struct Edf {
    slice: Nanos,
    /// `ties = "task"`: SimSo's dispatcher decides, the queues below are not used.
    simso: Option<Box<Shadow>>,
    tasks: Vec<EdfTask>,
    rt: BinaryHeap<HeapEntry>,
    /// Live entries in `rt`, and a sequence number for the next entry.
    live: usize,
    seq: u64,
    /// Scratch: live entries set aside while looking for one allowed on a CPU.
    skipped: Vec<HeapEntry>,
    rr: VecDeque<TaskId>,
}

impl Edf {
    /// An EDF scheduler for `cpus` CPUs (one queue for all, whatever their number); `slice` is the
    /// round-robin slice of tasks without a constraint.
    pub fn new(slice: Nanos, _cpus: usize) -> Self {
        Edf { slice: slice.max(1), ..Default::default() }
    }

    /// The same with ties broken by `ties`.
    pub fn with_ties(self, ties: Ties) -> Self {
        Edf { simso: (ties == Ties::Task).then(|| Box::new(Shadow::new(Rule::Edf))), ..self }
    }

    fn enqueue(&mut self, t: TaskId, front: bool) {
        let st = &mut self.tasks[t.idx()];
        st.runnable = true;
        match st.deadline {
            Some(d) => {
                self.seq += 1;
                st.seq = self.seq;
                self.rt.push(Reverse((d, st.ready_at, t.0, self.seq)));
                self.live += 1;
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
            Some(_) => {
                // Its entry goes stale; drop the stale ones once they outnumber the live.
                self.live -= 1;
                if self.rt.len() > 2 * self.live + 64 {
                    let tasks = &self.tasks;
                    self.rt.retain(|Reverse((_, _, id, seq))| Self::is_live(tasks, *id, *seq));
                }
            }
            None => self.rr.retain(|x| *x != t),
        }
    }

    fn is_live(tasks: &[EdfTask], id: u32, seq: u64) -> bool {
        let st = &tasks[id as usize];
        st.runnable && st.seq == seq && st.deadline.is_some()
    }

    /// Takes the earliest deadline allowed on `cpu` out of the queue.
    fn pop_earliest(&mut self, cpu: CpuId, v: &View) -> Option<TaskId> {
        let mut found = None;
        while let Some(&Reverse((_, _, id, seq))) = self.rt.peek() {
            let e = self.rt.pop().expect("peeked");
            if !Self::is_live(&self.tasks, id, seq) {
                continue;
            }
            if v.allows(TaskId(id), cpu) {
                found = Some(TaskId(id));
                break;
            }
            // Not here (affinity): set aside, put back below.
            self.skipped.push(e);
        }
        if !self.skipped.is_empty() {
            self.rt.extend(self.skipped.drain(..));
        }
        let t = found?;
        self.tasks[t.idx()].runnable = false;
        self.live -= 1;
        Some(t)
    }
}

impl Policy for Edf {
    fn admit(&mut self, t: TaskId, _p: &TaskParams, v: &View) {
        *slot(&mut self.tasks, t) = EdfTask::default();
        if let Some(s) = &mut self.simso {
            s.admit(t, v);
        }
    }

    fn exit(&mut self, t: TaskId, v: &View) {
        if let Some(s) = &mut self.simso {
            return s.exit(t, v);
        }
        self.dequeue(t);
    }

    fn wake(&mut self, t: TaskId, v: &View) {
        if let Some(s) = &mut self.simso {
            return s.wake(t, v);
        }
        self.tasks[t.idx()].ready_at = v.now();
        self.enqueue(t, false);
    }

    fn stop(&mut self, t: TaskId, cpu: CpuId, _charged: Nanos, why: Stop, v: &View) {
        if let Some(s) = &mut self.simso {
            return s.stop(t, cpu, why, v);
        }
        if let Some(front) = why.requeue_front() {
            if !front {
                // Yielded or its slice ended: behind the requests that arrived meanwhile.
                self.tasks[t.idx()].ready_at = v.now();
            }
            self.enqueue(t, front);
        }
    }

    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, _v: &View) -> Option<CpuId> {
        if self.simso.is_some() {
            // SimSo's dispatcher places the instant's jobs as a whole, by kicks.
            return None;
        }
        let w = self.tasks[woken.idx()].deadline?;
        let (cpu, latest) =
            least_important(running, prev, |r| self.tasks[r.idx()].deadline.unwrap_or(Nanos::MAX))?;
        (w < latest).then_some(cpu)
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        if let Some(s) = &mut self.simso {
            let t = s.pick(cpu, v)?;
            let slice = self.tasks[t.idx()].deadline.is_none().then_some(self.slice);
            return Some(Dispatch { task: t, slice });
        }
        if let Some(t) = self.pop_earliest(cpu, v) {
            return Some(Dispatch { task: t, slice: None });
        }
        let t = *self.rr.iter().find(|&&t| v.allows(t, cpu))?;
        self.dequeue(t);
        Some(Dispatch { task: t, slice: Some(self.slice) })
    }

    fn kick(&mut self, v: &View) -> Option<CpuId> {
        self.simso.as_mut()?.kick(v)
    }

    fn set_time_constraint(&mut self, t: TaskId, c: Option<TimeConstraint>, v: &View) {
        if let Some(s) = &mut self.simso {
            self.tasks[t.idx()].deadline = c.map(|c| c.deadline);
            return s.set_time_constraint(t, c, v);
        }
        let now = v.now();
        let runnable = self.tasks[t.idx()].runnable;
        self.dequeue(t);
        self.tasks[t.idx()].deadline = c.map(|c| c.deadline);
        // A job that waited behind its late predecessor came when it was released, not when its turn came.
        self.tasks[t.idx()].ready_at = c.and_then(|c| c.release).map_or(now, |r| r.min(now));
        if runnable {
            self.enqueue(t, false);
        }
    }

    fn set_params(&mut self, _t: TaskId, _p: &TaskParams, _v: &View) {}

    fn availability(&self, t: TaskId, v: &View) -> Availability {
        // Every task has the same rank: its share of the whole machine.
        let share = u64::from(v.params(t).share.max(1));
        v.availability_by_rank(t, |_| 0, share, v.live_count() as u64)
    }
}

/// The registry's entry of `edf`.
pub const ENTRY: Entry = Entry::new("edf", "edf.rs", |o, cpus| {
    let slice = o.slice("slice", SLICE)?;
    Ok(Box::new(Edf::new(slice, cpus).with_ties(Ties::read(o)?)))
})
.about("earliest deadline first; tasks without a time constraint round-robin below")
.options(&[
    opt("slice", "10ms", "the round-robin slice of tasks without a time constraint"),
    opt("ties", "\"release\"", TIES_OPT),
])
.linux(LinuxClass::Deadline)
.pace(|o, _| {
    let s = o.slice("slice", SLICE)?;
    Ok(Pace { slice: Some(Slice::of(o, "slice", s)), timer: None, walks: Walks::Nothing })
});

/// The round-robin slice unless the scenario gives one.
const SLICE: Nanos = 10 * MS;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_core;

    #[test]
    fn earliest_deadline_first_then_round_robin() {
        let mut e = test_core(Edf::new(10, 1), 1);
        for i in 0..3 {
            e.admit(TaskId(i), &TaskParams::default(), 0);
        }
        let c = |d| Some(TimeConstraint::deadline(d));
        e.set_time_constraint(TaskId(1), c(50), 0);
        e.set_time_constraint(TaskId(2), c(30), 0);
        for i in 0..3 {
            e.wake(TaskId(i), 0);
        }
        assert_eq!(e.pick(0, 0).unwrap().task, TaskId(2));
        assert_eq!(e.policy().preempt_for(TaskId(1), None, &[(0, TaskId(0))], e.view()), Some(0));
        e.stop(TaskId(2), 5, Stop::Blocked, 5);
        assert_eq!(e.pick(0, 5).unwrap().task, TaskId(1));
        e.stop(TaskId(1), 5, Stop::Blocked, 10);
        assert_eq!(e.pick(0, 10).unwrap(), Dispatch { task: TaskId(0), slice: Some(10) });
    }

    #[test]
    fn a_preempted_request_keeps_its_place_among_equal_deadlines() {
        // a (deadline 50) runs; b (deadline 50) arrives; c (deadline 10) preempts a: a, which came
        // first, runs before b once c is done.
        let mut e = test_core(Edf::new(10, 1), 1);
        let c = |d| Some(TimeConstraint::deadline(d));
        for i in 0..3 {
            e.admit(TaskId(i), &TaskParams::default(), 0);
        }
        e.set_time_constraint(TaskId(0), c(50), 0);
        e.wake(TaskId(0), 0);
        assert_eq!(e.pick(0, 0).unwrap().task, TaskId(0));
        e.set_time_constraint(TaskId(1), c(50), 1);
        e.wake(TaskId(1), 1);
        e.set_time_constraint(TaskId(2), c(10), 2);
        e.wake(TaskId(2), 2);
        assert_eq!(e.policy().preempt_for(TaskId(2), None, &[(0, TaskId(0))], e.view()), Some(0));
        e.stop(TaskId(0), 2, Stop::Preempted, 2);
        assert_eq!(e.pick(0, 2).unwrap().task, TaskId(2));
        e.stop(TaskId(2), 3, Stop::Blocked, 5);
        assert_eq!(e.pick(0, 5).unwrap().task, TaskId(0));
    }

    #[test]
    fn on_two_cpus_the_two_earliest_deadlines_run_and_the_latest_is_preempted() {
        let mut e = test_core(Edf::new(10, 2), 2);
        let c = |d| Some(TimeConstraint::deadline(d));
        for (i, d) in [(0, 30), (1, 20), (2, 10)] {
            e.admit(TaskId(i), &TaskParams::default(), 0);
            e.set_time_constraint(TaskId(i), c(d), 0);
        }
        e.wake(TaskId(0), 0);
        e.wake(TaskId(1), 0);
        assert_eq!(e.pick(0, 0).unwrap().task, TaskId(1));
        assert_eq!(e.pick(1, 0).unwrap().task, TaskId(0));
        e.wake(TaskId(2), 1);
        let running = [(0, TaskId(1)), (1, TaskId(0))];
        assert_eq!(
            e.policy().preempt_for(TaskId(2), None, &running, e.view()),
            Some(1),
            "the latest deadline (30) goes"
        );
        // An affinity is respected: a task allowed only on CPU 0 is not picked on CPU 1.
        e.admit(TaskId(3), &TaskParams { cpus: Some(vec![0]), ..TaskParams::default() }, 1);
        e.set_time_constraint(TaskId(3), c(5), 1);
        e.wake(TaskId(3), 1);
        e.stop(TaskId(0), 1, Stop::Preempted, 1);
        assert_eq!(e.pick(1, 1).unwrap().task, TaskId(2));
    }

    #[test]
    fn a_job_that_waited_behind_its_late_predecessor_keeps_its_release() {
        // Task 0's second job is released at 10 (deadline 40) while its first, late, still runs;
        // task 1's job is released at 12 with the same deadline. Task 0's first job ends at 15 and
        // its second is handed over then: released first, it runs first (SimSo's order), although
        // task 1 was queued before the handover.
        let mut e = test_core(Edf::new(10, 1), 1);
        let c = |d, r| Some(TimeConstraint { release: r, ..TimeConstraint::deadline(d) });
        for i in 0..2 {
            e.admit(TaskId(i), &TaskParams::default(), 0);
        }
        e.set_time_constraint(TaskId(0), c(8, Some(0)), 0);
        e.wake(TaskId(0), 0);
        assert_eq!(e.pick(0, 0).unwrap().task, TaskId(0));
        e.set_time_constraint(TaskId(1), c(40, Some(12)), 12);
        e.wake(TaskId(1), 12);
        assert_eq!(
            e.policy().preempt_for(TaskId(1), None, &[(0, TaskId(0))], e.view()),
            None,
            "8 is earlier than 40"
        );
        e.set_time_constraint(TaskId(0), c(40, Some(10)), 15);
        // Task 0 now has deadline 40 too; a CPU free now picks by release: task 0 (10) before task 1 (12).
        e.stop(TaskId(0), 15, Stop::Preempted, 15);
        assert_eq!(e.pick(0, 15).unwrap().task, TaskId(0));
    }

    #[test]
    fn equal_deadlines_and_releases_go_by_task_number() {
        let mut e = test_core(Edf::new(10, 1), 1);
        let c = |d| Some(TimeConstraint { release: Some(0), ..TimeConstraint::deadline(d) });
        for i in [2, 0, 1] {
            e.admit(TaskId(i), &TaskParams::default(), 0);
            e.set_time_constraint(TaskId(i), c(50), 0);
            e.wake(TaskId(i), 0);
        }
        let order: Vec<u32> = (0..3)
            .map(|_| {
                let t = e.pick(0, 0).unwrap().task;
                e.stop(t, 1, Stop::Blocked, 0);
                t.0
            })
            .collect();
        assert_eq!(order, [0, 1, 2]);
    }

    /// 1 CPU: task 2 (deadline 10) runs; task 1 (deadline 50) is released at 1, task 0 (deadline 50)
    /// at 2; task 2 blocks at 3: the order in which 1 and 0 then run.
    fn equal_deadlines_released_apart(ties: Ties) -> [TaskId; 2] {
        let mut e = test_core(Edf::new(10, 1).with_ties(ties), 1);
        let c = |d, r| Some(TimeConstraint { release: Some(r), ..TimeConstraint::deadline(d) });
        for i in 0..3 {
            e.admit(TaskId(i), &TaskParams::default(), 0);
        }
        e.set_time_constraint(TaskId(2), c(10, 0), 0);
        e.wake(TaskId(2), 0);
        assert_eq!(e.pick(0, 0).unwrap().task, TaskId(2));
        for (t, at) in [(1, 1), (0, 2)] {
            e.set_time_constraint(TaskId(t), c(50, at), at);
            e.wake(TaskId(t), at);
            assert_eq!(e.policy().preempt_for(TaskId(t), None, &[(0, TaskId(2))], e.view()), None);
        }
        e.stop(TaskId(2), 3, Stop::Blocked, 3);
        let first = e.pick(0, 3).unwrap().task;
        e.stop(first, 1, Stop::Blocked, 4);
        [first, e.pick(0, 4).unwrap().task]
    }

    #[test]
    fn ties_release_serves_equal_deadlines_by_release_ties_task_by_task_number() {
        assert_eq!(equal_deadlines_released_apart(Ties::Release), [TaskId(1), TaskId(0)]);
        // SimSo's EDF: min over its task list in task order.
        assert_eq!(equal_deadlines_released_apart(Ties::Task), [TaskId(0), TaskId(1)]);
    }

    #[test]
    fn ties_task_a_preempted_request_gives_way_to_an_equal_deadline_of_a_lower_task() {
        // Task 1 (deadline 50) runs; task 0 (deadline 50) arrives and does not preempt it (not
        // earlier); task 2 (deadline 10) preempts it. Once 2 blocks: under "release", 1 (came
        // first) resumes; under "task", 0 (lower number) runs.
        for (ties, next) in [(Ties::Release, 1), (Ties::Task, 0)] {
            let mut e = test_core(Edf::new(10, 1).with_ties(ties), 1);
            let c = |d| Some(TimeConstraint::deadline(d));
            for i in 0..3 {
                e.admit(TaskId(i), &TaskParams::default(), 0);
            }
            e.set_time_constraint(TaskId(1), c(50), 0);
            e.wake(TaskId(1), 0);
            assert_eq!(e.pick(0, 0).unwrap().task, TaskId(1));
            e.set_time_constraint(TaskId(0), c(50), 1);
            e.wake(TaskId(0), 1);
            assert_eq!(
                e.policy().preempt_for(TaskId(0), None, &[(0, TaskId(1))], e.view()),
                None,
                "{ties:?}"
            );
            e.set_time_constraint(TaskId(2), c(10), 2);
            e.wake(TaskId(2), 2);
            e.stop(TaskId(1), 2, Stop::Preempted, 2);
            assert_eq!(e.pick(0, 2).unwrap().task, TaskId(2));
            e.stop(TaskId(2), 1, Stop::Blocked, 3);
            assert_eq!(e.pick(0, 3).unwrap().task, TaskId(next), "{ties:?}");
        }
    }

    #[test]
    fn ties_task_a_cpu_decided_again_keeps_its_task_against_an_equal_deadline_of_a_lower_task() {
        // Task 1 (deadline 50) runs; task 0 (deadline 50) waits. The CPU decides again (stop as
        // `Preempted`, then pick) with nothing earlier waiting: task 1 keeps it, as SimSo replaces a
        // running job only for a strictly earlier deadline. A handed-over request (task 1's next,
        // deadline 50, given while it ran) decides afresh: task 0, the lower, runs.
        let mut e = test_core(Edf::new(10, 1).with_ties(Ties::Task), 1);
        let c = |d| Some(TimeConstraint::deadline(d));
        for i in 0..2 {
            e.admit(TaskId(i), &TaskParams::default(), 0);
        }
        e.set_time_constraint(TaskId(1), c(50), 0);
        e.wake(TaskId(1), 0);
        assert_eq!(e.pick(0, 0).unwrap().task, TaskId(1));
        e.set_time_constraint(TaskId(0), c(50), 1);
        e.wake(TaskId(0), 1);
        e.stop(TaskId(1), 2, Stop::Preempted, 2);
        assert_eq!(e.pick(0, 2).unwrap().task, TaskId(1), "kept");
        e.set_time_constraint(TaskId(1), c(50), 3);
        e.stop(TaskId(1), 1, Stop::Preempted, 3);
        assert_eq!(e.pick(0, 3).unwrap().task, TaskId(0), "handover: decided afresh");
    }
}
