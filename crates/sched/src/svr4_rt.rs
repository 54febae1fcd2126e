//! The two fixed-priority classes of UNIX SVR4: the real-time class (`RT`, global priorities
//! 100..159, above every other class) and the system class (`SYS`, 60..99, between RT and TS),
//! global on N CPUs. Nieh 1999 §2.4.2 measured RT on Solaris 2.2: "the RT scheduler uses a strict
//! priority policy, and no processes from other scheduling classes are permitted to run while there
//! are ready processes in the RT class", which starved the window system and the streams
//! processing that SYS serves.
//!
//! **Specification.** The SVR4 kernel sources as USL's System V/386 Release 4 carries them (read to
//! learn the values and rules; nothing is copied): RT's table `rt_dptbl` in
//! `uts/i386/master.d/rt/space.c` (`@(#)master:rt/space.c 1.3.2.2`) and its rules in `rt.c`
//! (`rt_tick`, `rt_preempt`, `rt_wakeup`, `rt_parmsset`); the same default table as the
//! `rt_dptbl(4)` page and Solaris's `rt_dptbl.c`. SYS: `MAXCLSYSPRI` 99 in `master.d/mtune` and the
//! class's rules as Solaris's `sys.c` keeps them (no `tick`, `preempt` to the front). The 386 master
//! file starts RT at global 105 (`RTGPPRIO0`, room for a VC class), Solaris's and Nieh's (ch. 5) at 100;
//! only the order matters here.
//!
//! **`svr4-rt`.** 60 fixed priorities, the task's [`TaskParams::priority`] clamped to 0..=59 (where
//! `rt_parmsin` refuses values beyond). Each has its own quantum ([`RT_QUANTA`], `rt_dptbl`, ticks
//! of `HZ` = 100 written in ms): priorities 0-9 1000 ms, 10-19 800, 20-29 600, 30-39 400, 40-49
//! 200, 50-59 100. State per task: its priority and the quantum left. Rules: a task runs for at
//! most what is left of its quantum; used up (`rt_tick`), it goes to the back of its priority with
//! a fresh quantum (`rt_preempt` with `RTBACKQ`). Preempted before that, it goes to the front and
//! keeps what is left (`rt_preempt`). A woken task gets a fresh quantum and goes to the back
//! (`rt_wakeup`). A yielding task goes to the back and keeps what is left. A new priority
//! (`rt_parmsset` with the default quantum, `RT_TQDEF`): the quantum of the new priority, a
//! queued task at the back of it, a running one keeps its slice and goes to the back with a fresh
//! quantum when it next stops.
//!
//! **`sys`.** 40 fixed priorities, [`TaskParams::priority`] clamped to 0..=39 (global 60..99), no
//! time slicing: a task runs until it blocks or a higher one preempts it (`sys_tick` does nothing);
//! preempted, it goes to the front of its priority; woken or yielding, to the back.
//!
//! **Tie-break.** Within a priority, queue order: woken, expired and yielding tasks at the back, a
//! preempted one at the front. A woken task preempts the CPU running the lowest priority if it is
//! higher (`rt_wakeup` sets `runrun` when it outranks the running process; on N CPUs, the lowest
//! of them).
//!
//! **Left out.** SVR4 runs on one CPU; here one queue serves all CPUs. RT's per-task quanta other
//! than the table's (`priocntl -t`, `RT_TQINF`), the swapper and kernel preemption points
//! (`kprunrun`: the simulated kernel preempts at once) are left out. SYS's tasks are the kernel's
//! own (pageout, streams service, the window system's I/O in §2.4.2); here any task given the class.

use std::collections::VecDeque;

use crate::registry::{Entry, LinuxClass, Pace, Slice, Walks};
use crate::{
    preempt_lower_rank, slot, take_first_allowed, Availability, CpuId, Dispatch, Nanos, Policy, Running,
    State, Stop, TaskId, TaskParams, View, MS,
};

/// RT's priorities (`rt_maxpri + 1`).
pub const RT_LEVELS: usize = 60;
/// SYS's priorities (global 60..=`MAXCLSYSPRI` 99).
pub const SYS_LEVELS: usize = 40;

/// RT's quantum per priority in ms (`rt_dptbl`, ticks × 10 at 100 Hz), priority 0 first.
pub const RT_QUANTA: [u32; RT_LEVELS] = {
    let mut q = [0; RT_LEVELS];
    let mut i = 0;
    while i < RT_LEVELS {
        q[i] = match i / 10 {
            0 => 1000,
            1 => 800,
            2 => 600,
            3 => 400,
            4 => 200,
            _ => 100,
        };
        i += 1;
    }
    q
};

#[derive(Clone, Debug, Default)]
struct Task {
    pri: u8,
    timeleft: Nanos,
    queued: bool,
    backq: bool,
}

/// A fixed-priority SVR4 class: RT (a quantum per priority) or SYS (none).
#[derive(Debug)]
pub struct Svr4Fixed {
    /// The quantum of each priority in ms; empty for no time slicing.
    quanta: &'static [u32],
    levels: usize,
    tasks: Vec<Task>,
    queues: Vec<VecDeque<TaskId>>,
}

impl Svr4Fixed {
    /// SVR4's real-time class with the default `rt_dptbl`.
    pub fn rt() -> Self {
        Svr4Fixed {
            quanta: &RT_QUANTA,
            levels: RT_LEVELS,
            tasks: Vec::new(),
            queues: vec![VecDeque::new(); RT_LEVELS],
        }
    }

    /// SVR4's system class.
    pub fn sys() -> Self {
        Svr4Fixed {
            quanta: &[],
            levels: SYS_LEVELS,
            tasks: Vec::new(),
            queues: vec![VecDeque::new(); SYS_LEVELS],
        }
    }

    /// The class priority of `t`.
    pub fn priority(&self, t: TaskId) -> u8 {
        self.tasks[t.idx()].pri
    }

    fn class_priority(&self, p: &TaskParams) -> u8 {
        p.priority.clamp(0, self.levels as i32 - 1) as u8
    }

    /// The quantum of priority `pri`, if the class slices.
    fn quantum(&self, pri: u8) -> Option<Nanos> {
        self.quanta.get(pri as usize).map(|&ms| Nanos::from(ms) * MS)
    }

    fn fresh(&mut self, t: TaskId) {
        let q = self.quantum(self.tasks[t.idx()].pri).unwrap_or(0);
        self.tasks[t.idx()].timeleft = q;
    }

    fn enqueue(&mut self, t: TaskId, front: bool) {
        let s = &mut self.tasks[t.idx()];
        s.queued = true;
        let q = &mut self.queues[s.pri as usize];
        if front {
            q.push_front(t)
        } else {
            q.push_back(t)
        }
    }

    fn dequeue(&mut self, t: TaskId) -> bool {
        let s = &mut self.tasks[t.idx()];
        if !std::mem::take(&mut s.queued) {
            return false;
        }
        let q = &mut self.queues[s.pri as usize];
        if let Some(i) = q.iter().position(|x| *x == t) {
            q.remove(i);
        }
        true
    }
}

impl Policy for Svr4Fixed {
    fn admit(&mut self, t: TaskId, p: &TaskParams, _v: &View) {
        *slot(&mut self.tasks, t) = Task { pri: self.class_priority(p), ..Default::default() };
        self.fresh(t);
    }

    fn exit(&mut self, t: TaskId, _v: &View) {
        self.dequeue(t);
    }

    fn wake(&mut self, t: TaskId, _v: &View) {
        self.tasks[t.idx()].backq = false;
        self.fresh(t);
        self.enqueue(t, false);
    }

    fn stop(&mut self, t: TaskId, _cpu: CpuId, charged: Nanos, why: Stop, _v: &View) {
        let sliced = !self.quanta.is_empty();
        let s = &mut self.tasks[t.idx()];
        s.timeleft = if why == Stop::SliceEnd { 0 } else { s.timeleft.saturating_sub(charged) };
        let back_fresh = std::mem::take(&mut s.backq) || (sliced && s.timeleft == 0);
        match why {
            Stop::Blocked => {}
            _ if back_fresh => {
                self.fresh(t);
                self.enqueue(t, false);
            }
            Stop::Preempted => self.enqueue(t, true),
            Stop::Yielded | Stop::SliceEnd => self.enqueue(t, false),
        }
    }

    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, _v: &View) -> Option<CpuId> {
        preempt_lower_rank(woken, prev, running, |r| self.priority(r))
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        let t = take_first_allowed(self.queues.iter_mut(), v, cpu)?;
        let s = &mut self.tasks[t.idx()];
        s.queued = false;
        let slice = (!self.quanta.is_empty()).then_some(s.timeleft.max(1));
        Some(Dispatch { task: t, slice })
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        let queued = self.dequeue(t);
        self.tasks[t.idx()].pri = self.class_priority(p);
        self.fresh(t);
        if queued {
            self.enqueue(t, false);
        } else if matches!(v.state(t), State::Running(_)) {
            self.tasks[t.idx()].backq = true;
        }
    }

    fn availability(&self, t: TaskId, v: &View) -> Availability {
        let pri = self.priority(t);
        let same = v.live().filter(|&x| self.priority(x) == pri).count() as u64;
        v.availability_by_rank(t, |x| self.priority(x), 1, same)
    }
}

/// The registry's entry of `svr4-rt`.
pub const RT: Entry = Entry::new("svr4-rt", "svr4_rt.rs", |_, _| Ok(Box::new(Svr4Fixed::rt())))
    .about(
        "UNIX SVR4 real-time class: fixed priorities 0..59, round robin with rt_dptbl's quantum per priority",
    )
    .linux(LinuxClass::Rr)
    .classes(&["rt"])
    .pace(|_, _| {
        // Its shortest quantum is the table's (100 ms at priorities 50-59).
        let q = RT_QUANTA.iter().map(|&ms| Nanos::from(ms) * MS).min().unwrap_or(MS);
        Ok(Pace { slice: Some(Slice { nanos: q, key: None }), timer: None, walks: Walks::Nothing })
    });

/// The registry's entry of `sys`.
pub const SYS: Entry = Entry::new("sys", "svr4_rt.rs", |_, _| Ok(Box::new(Svr4Fixed::sys())))
    .about("UNIX SVR4 system class: fixed priorities 0..39, no time slicing")
    .linux(LinuxClass::Fifo);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{test_core, Core};

    fn class(p: Svr4Fixed, prios: &[i32], cpus: usize) -> Core<Svr4Fixed> {
        let mut c = test_core(p, cpus);
        for (i, &priority) in prios.iter().enumerate() {
            c.admit(TaskId(i as u32), &TaskParams { priority, ..Default::default() }, 0);
        }
        c
    }

    #[test]
    fn rt_quanta_are_rt_dptbls() {
        // 100, 80, 60, 40, 20, 10 ticks per ten priorities, at 100 Hz.
        for (i, &q) in RT_QUANTA.iter().enumerate() {
            let want = [1000, 800, 600, 400, 200, 100][i / 10];
            assert_eq!(q, want, "priority {i}");
        }
    }

    #[test]
    fn rt_priority_is_clamped_and_sets_the_quantum() {
        let mut c = class(Svr4Fixed::rt(), &[100, -5, 25], 1);
        for i in 0..3 {
            c.wake(TaskId(i), 0);
        }
        let got: Vec<(u32, Option<Nanos>)> = (0..3)
            .map(|_| {
                let d = c.pick(0, 0).unwrap();
                c.stop(d.task, 0, Stop::Blocked, 0);
                (d.task.0, d.slice)
            })
            .collect();
        assert_eq!(got, vec![(0, Some(100 * MS)), (2, Some(600 * MS)), (1, Some(1000 * MS))]);
        assert_eq!((c.policy().priority(TaskId(0)), c.policy().priority(TaskId(1))), (59, 0));
    }

    #[test]
    fn rt_round_robin_at_quantum_expiry() {
        let mut c = class(Svr4Fixed::rt(), &[45, 45], 1);
        c.wake(TaskId(0), 0);
        c.wake(TaskId(1), 0);
        assert_eq!(c.pick(0, 0).unwrap(), Dispatch { task: TaskId(0), slice: Some(200 * MS) });
        c.stop(TaskId(0), 200 * MS, Stop::SliceEnd, 200 * MS);
        assert_eq!(c.pick(0, 200 * MS).unwrap(), Dispatch { task: TaskId(1), slice: Some(200 * MS) });
        // Tick-sampled billing short of the slice: still a used-up quantum, a fresh one at the back.
        c.stop(TaskId(1), 190 * MS, Stop::SliceEnd, 400 * MS);
        assert_eq!(c.pick(0, 400 * MS).unwrap(), Dispatch { task: TaskId(0), slice: Some(200 * MS) });
    }

    #[test]
    fn rt_preempted_keeps_the_front_and_what_is_left_a_woken_task_a_fresh_quantum() {
        let mut c = class(Svr4Fixed::rt(), &[5, 5, 30], 1);
        c.wake(TaskId(0), 0);
        c.wake(TaskId(1), 0);
        assert_eq!(c.pick(0, 0).unwrap(), Dispatch { task: TaskId(0), slice: Some(1000 * MS) });
        c.wake(TaskId(2), 300 * MS);
        assert_eq!(c.policy().preempt_for(TaskId(2), None, &[(0, TaskId(0))], c.view()), Some(0));
        c.stop(TaskId(0), 300 * MS, Stop::Preempted, 300 * MS);
        assert_eq!(c.pick(0, 300 * MS).unwrap(), Dispatch { task: TaskId(2), slice: Some(400 * MS) });
        c.stop(TaskId(2), 50 * MS, Stop::Blocked, 350 * MS);
        assert_eq!(c.pick(0, 350 * MS).unwrap(), Dispatch { task: TaskId(0), slice: Some(700 * MS) });
        c.stop(TaskId(0), 100 * MS, Stop::Blocked, 450 * MS);
        c.wake(TaskId(0), 500 * MS);
        assert_eq!(c.pick(0, 500 * MS).unwrap().task, TaskId(1), "woken: behind task 1");
        c.stop(TaskId(1), 0, Stop::Blocked, 500 * MS);
        assert_eq!(c.pick(0, 500 * MS).unwrap(), Dispatch { task: TaskId(0), slice: Some(1000 * MS) });
    }

    #[test]
    fn rt_a_new_priority_moves_a_queued_task_to_the_back_with_its_quantum() {
        let mut c = class(Svr4Fixed::rt(), &[10, 50, 10], 2);
        for i in 0..3 {
            c.wake(TaskId(i), 0);
        }
        assert_eq!(c.pick(0, 0).unwrap().task, TaskId(1));
        c.set_params(TaskId(2), &TaskParams { priority: 50, ..Default::default() }, 0);
        assert_eq!(c.pick(1, 0).unwrap(), Dispatch { task: TaskId(2), slice: Some(100 * MS) });
        // A running task keeps its slice; at its next stop it goes behind with a fresh quantum.
        c.set_params(TaskId(1), &TaskParams { priority: 10, ..Default::default() }, 0);
        c.stop(TaskId(1), 30 * MS, Stop::Preempted, 30 * MS);
        assert_eq!(c.pick(0, 30 * MS).unwrap(), Dispatch { task: TaskId(0), slice: Some(800 * MS) });
        c.stop(TaskId(0), 0, Stop::Blocked, 30 * MS);
        assert_eq!(c.pick(0, 30 * MS).unwrap(), Dispatch { task: TaskId(1), slice: Some(800 * MS) });
    }

    #[test]
    fn sys_has_no_slices_and_keeps_the_front_when_preempted() {
        let mut c = class(Svr4Fixed::sys(), &[100, 3, 3], 1);
        assert_eq!(c.policy().priority(TaskId(0)), 39, "clamped to 0..39");
        c.wake(TaskId(1), 0);
        c.wake(TaskId(2), 0);
        assert_eq!(c.pick(0, 0).unwrap(), Dispatch { task: TaskId(1), slice: None });
        c.wake(TaskId(0), 5 * MS);
        assert_eq!(c.policy().preempt_for(TaskId(0), None, &[(0, TaskId(1))], c.view()), Some(0));
        c.stop(TaskId(1), 5 * MS, Stop::Preempted, 5 * MS);
        assert_eq!(c.pick(0, 5 * MS).unwrap(), Dispatch { task: TaskId(0), slice: None });
        c.stop(TaskId(0), 5 * MS, Stop::Blocked, 10 * MS);
        assert_eq!(c.pick(0, 10 * MS).unwrap().task, TaskId(1), "front of priority 3");
        c.stop(TaskId(1), 5 * MS, Stop::Yielded, 15 * MS);
        assert_eq!(c.pick(0, 15 * MS).unwrap().task, TaskId(2), "a yielding task goes behind");
    }

    #[test]
    fn on_two_cpus_a_woken_task_preempts_the_lowest_priority() {
        let mut c = class(Svr4Fixed::rt(), &[20, 10, 15, 5], 2);
        c.wake(TaskId(0), 0);
        c.wake(TaskId(1), 0);
        assert_eq!(c.pick(0, 0).unwrap().task, TaskId(0));
        assert_eq!(c.pick(1, 0).unwrap().task, TaskId(1));
        c.wake(TaskId(2), 1);
        let running = [(0, TaskId(0)), (1, TaskId(1))];
        assert_eq!(c.policy().preempt_for(TaskId(2), None, &running, c.view()), Some(1));
        c.wake(TaskId(3), 1);
        assert_eq!(c.policy().preempt_for(TaskId(3), None, &running, c.view()), None, "not higher");
    }
}
