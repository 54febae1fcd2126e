//! Fixed priorities: POSIX SCHED_FIFO (`fifo`) and SCHED_RR (`rr`), the SVR4 RT class (which behaves
//! like them), and Linux's real-time class with both kinds of task together (`rt`); global on N CPUs.
//!
//! **State.** One FIFO queue per priority, shared by all CPUs (and, in `rt`, by both kinds of task).
//!
//! **Decision.** On a free CPU, the head of the most important non-empty queue (the first task there
//! allowed on that CPU) runs until it blocks, a more important task wakes, or (RR only) its slice ends
//! and it goes to the back of its queue. A preempted task goes back to the front of its queue, as
//! POSIX requires. A waking task preempts the CPU running the least important task if it is more
//! important than that task (as Linux's RT class pushes to the lowest-priority CPU). Rate monotonic is
//! this policy with priorities by period.
//!
//! **Tie-break** (option `ties`, of `fifo` and `rr`). `"release"` (the default): within a priority,
//! queue order: a woken task at the back, a preempted one at the front, a `rr` task whose slice ended
//! at the back. A task that finishes a job late with its next job already released does not block,
//! so it keeps its CPU and runs that job at once: among periodic tasks of one priority (rate
//! monotonic with equal periods), a late task runs its backlog ahead of its equals, which wait in
//! wake-up order, exactly as a SCHED_FIFO thread that never blocks would. `"task"`: as SimSo's
//! global `RM` (simso 0.8.5, `simso/schedulers/RM.py`), job by job on any number of CPUs: its ready
//! list is a Python list that `on_activate` appends each job to, from which `schedule` takes
//! `min(ready_list, key=period)` (the first of the shortest period in list order) and to which it
//! appends the job it preempts, so within a priority a woken task and a preempted one both go to
//! the back, and a task whose late job ends with its next already released too (SimSo activates
//! that job only then); a running job is replaced only by a strictly more important one; and where
//! each job goes is decided as SimSo's dispatcher decides it, one event at a time on the event's CPU
//! in the order SimSo's processes take their turns (the model of SimSo's dispatcher in `simso.rs`,
//! which this policy then follows: it places jobs by [`Policy::kick`], never by
//! [`Policy::preempt_for`]). A `rr` task whose slice ends goes to the back too (SimSo has no
//! slices).
//!
//! **`rt`: Linux's real-time class** (kernel/sched/rt.c, Linux 6.12). SCHED_FIFO and SCHED_RR tasks
//! share one queue per priority (`struct rt_prio_array`): a task whose `class` is `"rr"` is SCHED_RR,
//! every other task SCHED_FIFO. Priorities rank across both kinds; within a priority the queue order
//! above (`"release"`) serves both. A SCHED_RR task has a time slice (`p->rt.time_slice`,
//! `sched_rr_timeslice_ms`, option `slice`, default 100 ms) that only running uses up: it is kept
//! across preemption and sleep and refilled only when it runs out (`task_tick_rt`), at which point the
//! task goes to the back of its priority and, if an equal is queued, gives it the CPU; a FIFO task at
//! the same priority keeps the CPU until it blocks or yields. Left out: the tick (Linux counts the
//! slice in jiffies; here it is exact), RT throttling (`sched_rt_runtime_us`), priority inheritance,
//! and the push/pull of tasks between per-CPU queues, of which the one global queue is the limit.
//!
//! **Where it is weak.** Importance and urgency are one number: a runaway high-priority task starves
//! everything below it (Nieh ch. 2), and no deadline information is used.

use std::collections::{BTreeMap, VecDeque};

use crate::registry::{opt, Entry, LinuxClass, OptReader, Pace, PolicyError, Slice, Walks};
use crate::simso::{Rule, Shadow};
use crate::MS;
use crate::{
    preempt_lower_rank, slot, take_first_allowed, Availability, CpuId, Dispatch, Nanos, Policy, Running,
    Stop, TaskId, TaskParams, TimeConstraint, View,
};

/// How tasks with equal keys are ordered (option `ties` of `edf`, `fifo` and `rr`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Ties {
    /// First come, first served (`"release"`, the default): see each policy's tie-break.
    #[default]
    Release,
    /// As SimSo's global `EDF` and `RM` order them (`"task"`): see each policy's tie-break.
    Task,
}

impl Ties {
    /// Reads option `ties`.
    pub(crate) fn read(o: &mut OptReader<'_>) -> Result<Ties, PolicyError> {
        Ok(match o.choice("ties", "release", &["release", "task"])? {
            "task" => Ties::Task,
            _ => Ties::Release,
        })
    }
}

/// The documentation of option `ties`.
pub(crate) const TIES_OPT: &str = "how equal keys are ordered: \"release\" first come first served, \
     \"task\" as SimSo's global EDF and RM (see the policy's tie-break)";

/// Which tasks have a slice.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
enum Slices {
    /// None (SCHED_FIFO).
    #[default]
    None,
    /// Every task, a whole slice at each dispatch (SCHED_RR as POSIX has it).
    All(Nanos),
    /// The tasks whose class is `"rr"`, a slice used up only by running (Linux's rt class).
    RrClass(Nanos),
}

/// Fixed-priority FIFO or round robin.
#[derive(Debug, Default)]
pub struct FixedPriority {
    slices: Slices,
    /// `ties = "task"`: SimSo's dispatcher decides, the queues below are not used.
    simso: Option<Box<Shadow>>,
    queues: BTreeMap<i32, VecDeque<TaskId>>,
    /// `rt`: per task, the slice it has left if it is SCHED_RR, `None` if SCHED_FIFO.
    left: Vec<Option<Nanos>>,
}

impl FixedPriority {
    /// SCHED_FIFO (one queue per priority for all CPUs, whatever their number).
    pub fn fifo() -> Self {
        FixedPriority::default()
    }

    /// SCHED_RR with this slice.
    pub fn rr(slice: Nanos) -> Self {
        FixedPriority { slices: Slices::All(slice.max(1)), ..Default::default() }
    }

    /// Linux's rt class: tasks of class `"rr"` SCHED_RR with this slice, the others SCHED_FIFO.
    pub fn rt(slice: Nanos) -> Self {
        FixedPriority { slices: Slices::RrClass(slice.max(1)), ..Default::default() }
    }

    /// The same with ties broken by `ties`.
    pub fn with_ties(self, ties: Ties) -> Self {
        FixedPriority { simso: (ties == Ties::Task).then(|| Box::new(Shadow::new(Rule::Rm))), ..self }
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

    /// `rt`: whether `p` makes a SCHED_RR task.
    fn is_rr(p: &TaskParams) -> bool {
        p.class.as_deref() == Some("rr")
    }
}

impl Policy for FixedPriority {
    fn admit(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        if let Slices::RrClass(s) = self.slices {
            *slot(&mut self.left, t) = Self::is_rr(p).then_some(s);
        }
        if let Some(s) = &mut self.simso {
            s.admit(t, v);
        }
    }

    fn exit(&mut self, t: TaskId, v: &View) {
        if let Some(s) = &mut self.simso {
            return s.exit(t, v);
        }
        self.remove(t, v.params(t).priority);
    }

    fn wake(&mut self, t: TaskId, v: &View) {
        if let Some(s) = &mut self.simso {
            return s.wake(t, v);
        }
        self.enqueue(t, v.params(t).priority, false);
    }

    fn stop(&mut self, t: TaskId, cpu: CpuId, charged: Nanos, why: Stop, v: &View) {
        if let Some(s) = &mut self.simso {
            return s.stop(t, cpu, why, v);
        }
        let mut front = why.requeue_front();
        if let Slices::RrClass(full) = self.slices {
            if let Some(left) = &mut self.left[t.idx()] {
                // Only running uses the slice up; when it runs out it is refilled and the task goes
                // behind its equals (task_tick_rt).
                *left = left.saturating_sub(charged);
                if why == Stop::SliceEnd || *left == 0 {
                    *left = full;
                    front = front.map(|_| false);
                }
            }
        }
        if let Some(front) = front {
            self.enqueue(t, v.params(t).priority, front);
        }
    }

    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, v: &View) -> Option<CpuId> {
        if self.simso.is_some() {
            // SimSo's dispatcher places the instant's jobs as a whole, by kicks.
            return None;
        }
        preempt_lower_rank(woken, prev, running, |r| v.params(r).priority)
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        let t = match &mut self.simso {
            Some(s) => s.pick(cpu, v)?,
            None => take_first_allowed(self.queues.values_mut(), v, cpu)?,
        };
        let slice = match self.slices {
            Slices::None => None,
            Slices::All(s) => Some(s),
            Slices::RrClass(_) => self.left[t.idx()],
        };
        Some(Dispatch { task: t, slice })
    }

    fn kick(&mut self, v: &View) -> Option<CpuId> {
        self.simso.as_mut()?.kick(v)
    }

    fn set_time_constraint(&mut self, t: TaskId, c: Option<TimeConstraint>, v: &View) {
        if let Some(s) = &mut self.simso {
            s.set_time_constraint(t, c, v);
        }
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        if let Some(s) = &mut self.simso {
            return s.changed(v);
        }
        if let Slices::RrClass(s) = self.slices {
            // A new kind of task starts with a whole slice (or none); the same kind keeps what it has.
            let l = &mut self.left[t.idx()];
            if l.is_some() != Self::is_rr(p) {
                *l = Self::is_rr(p).then_some(s);
            }
        }
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
pub const FIFO: Entry =
    Entry::new("fifo", "fixed.rs", |o, _| Ok(Box::new(FixedPriority::fifo().with_ties(Ties::read(o)?))))
        .about("fixed priority, first in first out within a priority (SCHED_FIFO)")
        .options(&[opt("ties", "\"release\"", TIES_OPT)])
        .linux(LinuxClass::Fifo);

/// The registry's entry of `rr`.
pub const RR: Entry = Entry::new("rr", "fixed.rs", |o, _| {
    let slice = o.slice("slice", RR_SLICE)?;
    Ok(Box::new(FixedPriority::rr(slice).with_ties(Ties::read(o)?)))
})
.about("fixed priority, round robin within a priority (SCHED_RR)")
.options(&[
    opt("slice", "100ms", "the slice after which a task goes to the back of its priority"),
    opt("ties", "\"release\"", TIES_OPT),
])
.linux(LinuxClass::Rr)
.pace(|o, _| {
    let s = o.slice("slice", RR_SLICE)?;
    Ok(Pace { slice: Some(Slice::of(o, "slice", s)), timer: None, walks: Walks::Nothing })
});

/// The registry's entry of `rt`.
pub const RT: Entry =
    Entry::new("rt", "fixed.rs", |o, _| Ok(Box::new(FixedPriority::rt(o.slice("slice", RR_SLICE)?))))
        .about("Linux's real-time class: SCHED_FIFO and SCHED_RR (class \"rr\") tasks together by priority")
        .options(&[opt("slice", "100ms", "the slice of class \"rr\" tasks (Linux's sched_rr_timeslice_ms)")])
        .linux(LinuxClass::Fifo)
        .classes(&["fifo", "rr"])
        .pace(|o, _| {
            let s = o.slice("slice", RR_SLICE)?;
            Ok(Pace { slice: Some(Slice::of(o, "slice", s)), timer: None, walks: Walks::Nothing })
        });

/// The round-robin slice of `rr` and `rt` unless the scenario gives one.
const RR_SLICE: Nanos = 100 * MS;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{settle, test_core};

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

    /// 1 CPU: tasks 0 and 1 at priority 5 (0 running, 1 waiting), then task 2 at priority 9 wakes
    /// and preempts 0, runs and blocks: who of 0 and 1 runs next.
    fn after_a_preemption(p: FixedPriority) -> TaskId {
        let mut f = test_core(p, 1);
        for (i, p) in [(0, 5), (1, 5), (2, 9)] {
            f.admit(TaskId(i), &TaskParams { priority: p, ..Default::default() }, 0);
        }
        f.wake(TaskId(0), 0);
        f.wake(TaskId(1), 0);
        assert_eq!(f.pick(0, 0).unwrap().task, TaskId(0));
        f.wake(TaskId(2), 3);
        assert_eq!(settle(&mut f, 3), [0], "task 2 preempts task 0");
        assert_eq!(f.view().running(0), Some(TaskId(2)));
        f.stop(TaskId(2), 2, Stop::Blocked, 5);
        settle(&mut f, 5);
        f.view().running(0).expect("a task runs")
    }

    #[test]
    fn ties_release_puts_a_preempted_task_ahead_of_its_equals_ties_task_behind() {
        assert_eq!(after_a_preemption(FixedPriority::fifo()), TaskId(0), "POSIX: back to the front");
        // SimSo's RM appends the preempted job to its ready list, behind task 1's.
        assert_eq!(after_a_preemption(FixedPriority::fifo().with_ties(Ties::Task)), TaskId(1));
        assert_eq!(after_a_preemption(FixedPriority::rr(100).with_ties(Ties::Release)), TaskId(0));
        assert_eq!(after_a_preemption(FixedPriority::rr(100).with_ties(Ties::Task)), TaskId(1));
    }

    #[test]
    fn ties_task_a_late_task_handing_over_to_its_next_job_goes_behind_its_equals() {
        // The simulator stops a task whose late job ended with the next already released as
        // `Preempted` and asks again: under "release" it keeps the CPU, under "task" (SimSo's RM
        // activates that next job only now, at the back of its list) the waiting equal runs.
        for (ties, next) in [(Ties::Release, 0), (Ties::Task, 1)] {
            let mut f = test_core(FixedPriority::fifo().with_ties(ties), 1);
            for i in 0..2 {
                f.admit(TaskId(i), &TaskParams { priority: 5, ..Default::default() }, 0);
                f.wake(TaskId(i), 0);
            }
            assert_eq!(f.pick(0, 0).unwrap().task, TaskId(0));
            f.set_time_constraint(TaskId(0), Some(TimeConstraint::deadline(30)), 12);
            f.stop(TaskId(0), 12, Stop::Preempted, 12);
            assert_eq!(f.pick(0, 12).unwrap().task, TaskId(next), "{ties:?}");
        }
    }

    #[test]
    fn option_ties_is_release_or_task_and_nothing_else() {
        use crate::{OptValue, Options};
        for name in ["edf", "fifo", "rr"] {
            for ok in ["release", "task"] {
                let o = Options::from([("ties".to_string(), OptValue::Str(ok.into()))]);
                crate::registry::build(name, &o, 2).unwrap_or_else(|e| panic!("{name} {ok}: {e}"));
            }
            let o = Options::from([("ties".to_string(), OptValue::Str("deadline".into()))]);
            let err = crate::registry::build(name, &o, 2).map(|_| ()).expect_err("refused").to_string();
            assert_eq!(
                err,
                format!("policy `{name}`, option `ties`: \"deadline\": expected \"release\" or \"task\"")
            );
            let o = Options::from([("ties".to_string(), OptValue::Int(1))]);
            let err = crate::registry::build(name, &o, 2).map(|_| ()).expect_err("refused").to_string();
            assert_eq!(err, format!("policy `{name}`, option `ties`: expected \"release\" or \"task\""));
        }
        let o = Options::from([("ties".to_string(), OptValue::Str("task".into()))]);
        assert!(crate::registry::build("rt", &o, 1).is_err(), "rt has no ties option");
    }

    fn rt_task(class: Option<&str>, priority: i32) -> TaskParams {
        TaskParams { priority, class: class.map(String::from), ..Default::default() }
    }

    #[test]
    fn rt_an_rr_task_rotates_with_its_rr_equal_while_a_fifo_equal_keeps_the_cpu_until_it_blocks() {
        let mut f = test_core(FixedPriority::rt(10), 1);
        f.admit(TaskId(0), &rt_task(Some("rr"), 5), 0);
        f.admit(TaskId(1), &rt_task(Some("rr"), 5), 0);
        for i in 0..2 {
            f.wake(TaskId(i), 0);
        }
        assert_eq!(f.pick(0, 0).unwrap(), Dispatch { task: TaskId(0), slice: Some(10) });
        f.stop(TaskId(0), 10, Stop::SliceEnd, 10);
        assert_eq!(f.pick(0, 10).unwrap(), Dispatch { task: TaskId(1), slice: Some(10) });
        f.stop(TaskId(1), 10, Stop::SliceEnd, 20);
        assert_eq!(f.pick(0, 20).unwrap(), Dispatch { task: TaskId(0), slice: Some(10) }, "a fresh slice");
        // A FIFO task at the same priority, queued behind 1: once it runs it has no slice, and the
        // RR tasks wait until it blocks.
        f.admit(TaskId(2), &rt_task(None, 5), 20);
        f.wake(TaskId(2), 20);
        f.stop(TaskId(0), 10, Stop::SliceEnd, 30);
        assert_eq!(f.pick(0, 30).unwrap().task, TaskId(1));
        f.stop(TaskId(1), 10, Stop::SliceEnd, 40);
        assert_eq!(f.pick(0, 40).unwrap(), Dispatch { task: TaskId(2), slice: None });
        f.stop(TaskId(2), 500, Stop::Blocked, 540);
        assert_eq!(f.pick(0, 540).unwrap().task, TaskId(0));
    }

    #[test]
    fn rt_priorities_rank_across_kinds_and_a_preempted_rr_task_keeps_what_is_left_of_its_slice() {
        let mut f = test_core(FixedPriority::rt(10), 1);
        f.admit(TaskId(0), &rt_task(Some("rr"), 7), 0);
        f.admit(TaskId(1), &rt_task(Some("fifo"), 3), 0);
        f.admit(TaskId(2), &rt_task(None, 9), 0);
        f.wake(TaskId(1), 0);
        f.wake(TaskId(0), 0);
        assert_eq!(
            f.pick(0, 0).unwrap(),
            Dispatch { task: TaskId(0), slice: Some(10) },
            "RR 7 before FIFO 3"
        );
        // FIFO 9 wakes after 4: it preempts RR 7, which goes back to the front with 6 left.
        f.wake(TaskId(2), 4);
        assert_eq!(f.policy().preempt_for(TaskId(2), None, &[(0, TaskId(0))], f.view()), Some(0));
        f.stop(TaskId(0), 4, Stop::Preempted, 4);
        assert_eq!(f.pick(0, 4).unwrap(), Dispatch { task: TaskId(2), slice: None });
        f.stop(TaskId(2), 1, Stop::Blocked, 5);
        assert_eq!(f.pick(0, 5).unwrap(), Dispatch { task: TaskId(0), slice: Some(6) });
        // It sleeps after 2 more: the 4 left are kept across the sleep (refilled only when used up).
        f.stop(TaskId(0), 2, Stop::Blocked, 7);
        assert_eq!(f.pick(0, 7).unwrap().task, TaskId(1));
        f.wake(TaskId(0), 8);
        assert_eq!(f.policy().preempt_for(TaskId(0), None, &[(0, TaskId(1))], f.view()), Some(0));
        f.stop(TaskId(1), 1, Stop::Preempted, 8);
        assert_eq!(f.pick(0, 8).unwrap(), Dispatch { task: TaskId(0), slice: Some(4) });
        // The FIFO 3 task, once the RR one blocks, is not given a slice.
        f.stop(TaskId(0), 1, Stop::Blocked, 9);
        assert_eq!(f.pick(0, 9).unwrap(), Dispatch { task: TaskId(1), slice: None });
    }

    #[test]
    fn ties_task_a_cpu_decided_again_keeps_its_task_unless_a_more_important_one_waits() {
        // Tasks 0 and 1 at priority 5, 0 running: the CPU decides again with 1 waiting: 0 keeps it
        // (SimSo's RM replaces a running job only for a shorter period). Then task 2 at priority 9
        // waits: 0 goes, behind 1.
        let mut f = test_core(FixedPriority::fifo().with_ties(Ties::Task), 1);
        for (i, p) in [(0, 5), (1, 5), (2, 9)] {
            f.admit(TaskId(i), &TaskParams { priority: p, ..Default::default() }, 0);
        }
        f.wake(TaskId(0), 0);
        f.wake(TaskId(1), 0);
        assert_eq!(f.pick(0, 0).unwrap().task, TaskId(0));
        f.stop(TaskId(0), 1, Stop::Preempted, 1);
        assert_eq!(f.pick(0, 1).unwrap().task, TaskId(0), "kept");
        f.wake(TaskId(2), 2);
        f.stop(TaskId(0), 1, Stop::Preempted, 2);
        assert_eq!(f.pick(0, 2).unwrap().task, TaskId(2));
        f.stop(TaskId(2), 1, Stop::Blocked, 3);
        assert_eq!(f.pick(0, 3).unwrap().task, TaskId(1));
    }
}
