//! The time-sharing class of UNIX SVR4 as Solaris ships it (`TS`), global on N CPUs. Nieh's
//! chapter 2 measured the class as Solaris 2.2 had it and changed it; "the time-sharing scheduler
//! in Sun's Solaris operating system, version 2.3 and later, is based on the modifications
//! described in this work" (Nieh 1999, ch. 2). The table here is that later one, Solaris's
//! default; the original SVR4 table of ch. 2's measurements is not reproduced.
//!
//! **Specification.** The dispatcher parameter table `ts_dptbl(4)` and the class's rules as the
//! illumos kernel applies them (`usr/src/uts/common/disp/ts.c`, read to learn the rules; nothing
//! is copied). The table is Solaris's default (Solaris System Administration Guide, "Timesharing
//! Parameter Table", `dispadmin -c TS -g`, `RES=1000`): 60 levels, each with a quantum, the level a
//! task drops to when it uses its whole quantum (`ts_tqexp`), the level it returns to after a wait
//! (`ts_slpret`), and the anti-starvation pair (`ts_maxwait` seconds, `ts_lwait` level).
//!
//! **State per task.** `cpupri` (0..=59, starts at 29), the user priority `upri` (the task's
//! [`TaskParams::priority`], clamped to -60..=60, where the kernel refuses values beyond; `nice n`
//! is `upri = -3n`), the level it is queued and chosen at, `umdpri = clamp(cpupri + upri, 0, 59)`,
//! the quantum left `timeleft`, and `dispwait`, the seconds counted since it last started a
//! quantum. Every table lookup is by `cpupri` except `maxwait`, which is by `umdpri` (as `ts.c`).
//!
//! **Rules.**
//! * A task runs for at most `timeleft` (the dispatch's slice); what the driver bills is taken
//!   from it whenever the task stops, and a slice run to its end uses it up. Then (`ts_tick`):
//!   `cpupri = tqexp[cpupri]`, a fresh quantum `quantum[cpupri]`, `dispwait = 0`, and the task goes
//!   to the back of its new level.
//! * Preempted before that, it goes back to the front of its level and keeps what it had left
//!   (`ts_preempt`).
//! * Once a second (`ts_update`, from time 1 s), every task's `dispwait` grows by one; a task whose
//!   `dispwait` then exceeds `maxwait[umdpri]` is lifted to `cpupri = lwait[cpupri]` with
//!   `dispwait = 0`. A runnable one that changes level moves to the back of it with a fresh
//!   quantum (one whose level is clamped keeps its place); a sleeping one changes level only; a
//!   running one is returned at `slpret[cpupri]` with a fresh quantum, as the kernel does at its
//!   next trap (`ts_trapret`, within a tick): the update asks every CPU to decide again, and the
//!   change is made when its CPU stops it. The round starts where the last one first lifted a
//!   task, as the kernel's `ts_update_marker`, so that equal tasks are not always lifted in the
//!   same order.
//! * A task that blocks or wakes with `dispwait > maxwait[umdpri]` gets `cpupri = slpret[cpupri]`,
//!   a fresh quantum and `dispwait = 0` (`ts_sleep`, `ts_wakeup`). With Solaris's table
//!   (`maxwait` 0 below level 59) that is any task that waited through one `ts_update`.
//! * A woken task goes to the back of its level and preempts the CPU running the lowest level if it
//!   is higher (Solaris's `cpu_resched`; the kernel preempts a user-mode thread at its next
//!   interrupt or trap, here at once).
//! * A new user priority (`set_params`, `ts_parmsset`) recomputes the level; a queued task moves to
//!   the back of it with a fresh quantum.
//!
//! **Tie-break.** Within a level, queue order: woken, expired, lifted and yielding tasks at the back,
//! a preempted one at the front.
//!
//! **Left out.** Solaris keeps a dispatch queue per CPU and balances them; this class has one
//! queue for all CPUs. Also left out: the IA (interactive) class's boost for the window system's
//! focus, the kernel-mode sleep priorities a thread holds until it returns to user mode
//! (`ts_kmdpris`), the swapper, and the preemption-control (`schedctl`) extension. The quantum is
//! counted down by what the driver bills (exactly, or in whole ticks when billing is
//! tick-sampled), where the kernel counts ticks. When an update asks the CPUs to decide again,
//! every busy CPU stops its task (most are dispatched again at once), which adds switches, once a
//! second.

use std::collections::VecDeque;

use crate::linux::FairMeaning;
use crate::registry::{Entry, Pace, Slice, Walks};
use crate::{
    preempt_lower_rank, slot, take_first_allowed, Availability, CpuId, Dispatch, Nanos, Policy, Running,
    State, Stop, TaskId, TaskParams, View, MS,
};

/// Levels of the class (`ts_maxumdpri + 1`).
pub const LEVELS: usize = 60;
/// Largest user priority, either way (`TSMAXUPRI`).
pub const MAX_UPRI: i32 = 60;
/// Level a new task starts at (`ts_maxumdpri / 2`).
pub const START_LEVEL: u8 = 29;
/// How often `ts_update` runs.
pub const UPDATE: Nanos = 1_000 * MS;

/// The user priority of a task of priority `priority`: clamped to −60..60 (`TSMAXUPRI`), where the
/// kernel refuses values beyond.
pub fn user_priority(priority: i32) -> i32 {
    priority.clamp(-MAX_UPRI, MAX_UPRI)
}

/// The nice level of user priority `upri`, as Solaris relates them (`ts_donice` sets user priority
/// −3n for nice n, n from −20 to 19): `None` when `upri` is no such −3n (Linux's nice levels are
/// the same −20..19).
pub fn solaris_nice(upri: i32) -> Option<i8> {
    let n = -upri / 3;
    (upri % 3 == 0 && (-20..=19).contains(&n)).then_some(n as i8)
}

/// One level of the dispatcher parameter table (`struct tsdpent`, without the global priority).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Level {
    /// Quantum at this level, in ms.
    pub quantum_ms: u32,
    /// Level after a quantum used up.
    pub tqexp: u8,
    /// Level after a sleep that followed a wait.
    pub slpret: u8,
    /// Seconds a task may wait before it is lifted.
    pub maxwait: u32,
    /// Level it is lifted to.
    pub lwait: u8,
}

const fn lv(quantum_ms: u32, tqexp: u8, slpret: u8, maxwait: u32, lwait: u8) -> Level {
    Level { quantum_ms, tqexp, slpret, maxwait, lwait }
}

/// Solaris's default `ts_dptbl` (`dispadmin -c TS -g`, `RES=1000`), level 0 first.
pub const SOLARIS: [Level; LEVELS] = [
    lv(200, 0, 50, 0, 50),
    lv(200, 0, 50, 0, 50),
    lv(200, 0, 50, 0, 50),
    lv(200, 0, 50, 0, 50),
    lv(200, 0, 50, 0, 50),
    lv(200, 0, 50, 0, 50),
    lv(200, 0, 50, 0, 50),
    lv(200, 0, 50, 0, 50),
    lv(200, 0, 50, 0, 50),
    lv(200, 0, 50, 0, 50),
    lv(160, 0, 51, 0, 51),
    lv(160, 1, 51, 0, 51),
    lv(160, 2, 51, 0, 51),
    lv(160, 3, 51, 0, 51),
    lv(160, 4, 51, 0, 51),
    lv(160, 5, 51, 0, 51),
    lv(160, 6, 51, 0, 51),
    lv(160, 7, 51, 0, 51),
    lv(160, 8, 51, 0, 51),
    lv(160, 9, 51, 0, 51),
    lv(120, 10, 52, 0, 52),
    lv(120, 11, 52, 0, 52),
    lv(120, 12, 52, 0, 52),
    lv(120, 13, 52, 0, 52),
    lv(120, 14, 52, 0, 52),
    lv(120, 15, 52, 0, 52),
    lv(120, 16, 52, 0, 52),
    lv(120, 17, 52, 0, 52),
    lv(120, 18, 52, 0, 52),
    lv(120, 19, 52, 0, 52),
    lv(80, 20, 53, 0, 53),
    lv(80, 21, 53, 0, 53),
    lv(80, 22, 53, 0, 53),
    lv(80, 23, 53, 0, 53),
    lv(80, 24, 53, 0, 53),
    lv(80, 25, 54, 0, 54),
    lv(80, 26, 54, 0, 54),
    lv(80, 27, 54, 0, 54),
    lv(80, 28, 54, 0, 54),
    lv(80, 29, 54, 0, 54),
    lv(40, 30, 55, 0, 55),
    lv(40, 31, 55, 0, 55),
    lv(40, 32, 55, 0, 55),
    lv(40, 33, 55, 0, 55),
    lv(40, 34, 55, 0, 55),
    lv(40, 35, 56, 0, 56),
    lv(40, 36, 57, 0, 57),
    lv(40, 37, 58, 0, 58),
    lv(40, 38, 58, 0, 58),
    lv(40, 39, 58, 0, 59),
    lv(40, 40, 58, 0, 59),
    lv(40, 41, 58, 0, 59),
    lv(40, 42, 58, 0, 59),
    lv(40, 43, 58, 0, 59),
    lv(40, 44, 58, 0, 59),
    lv(40, 45, 58, 0, 59),
    lv(40, 46, 58, 0, 59),
    lv(40, 47, 58, 0, 59),
    lv(40, 48, 58, 0, 59),
    lv(20, 49, 59, 32000, 59),
];

#[derive(Clone, Debug, Default)]
struct Task {
    cpupri: u8,
    upri: i32,
    umdpri: u8,
    timeleft: Nanos,
    dispwait: u32,
    live: bool,
    queued: bool,
    /// Lifted by an update while running: returns at `slpret` when it next stops (`ts_trapret`).
    trapret: bool,
}

/// The SVR4/Solaris time-sharing class.
#[derive(Debug)]
pub struct TimeSharing {
    table: [Level; LEVELS],
    tasks: Vec<Task>,
    queues: Vec<VecDeque<TaskId>>,
    next_update: Nanos,
    /// Where `ts_update` starts its round (moved as the kernel's `ts_update_marker`).
    marker: usize,
    lifted: u64,
}

impl TimeSharing {
    /// The class with Solaris's default table (one dispatch queue for all CPUs).
    pub fn new() -> Self {
        TimeSharing {
            table: SOLARIS,
            tasks: Vec::new(),
            queues: vec![VecDeque::new(); LEVELS],
            next_update: UPDATE,
            marker: 0,
            lifted: 0,
        }
    }

    /// The level a task is queued and chosen at (`ts_umdpri`).
    pub fn level(&self, t: TaskId) -> u8 {
        self.tasks[t.idx()].umdpri
    }

    /// Its class priority (`ts_cpupri`).
    pub fn cpupri(&self, t: TaskId) -> u8 {
        self.tasks[t.idx()].cpupri
    }

    fn quantum(&self, cpupri: u8) -> Nanos {
        self.table[cpupri as usize].quantum_ms as Nanos * MS
    }

    /// The level `t` would have at class priority `cpupri` (TS_NEWUMDPRI).
    fn level_at(&self, t: TaskId, cpupri: u8) -> u8 {
        (cpupri as i32 + self.tasks[t.idx()].upri).clamp(0, LEVELS as i32 - 1) as u8
    }

    /// Sets `cpupri` and recomputes `umdpri`. The caller requeues.
    fn set_cpupri(&mut self, t: TaskId, cpupri: u8) {
        let level = self.level_at(t, cpupri);
        let s = &mut self.tasks[t.idx()];
        s.cpupri = cpupri;
        s.umdpri = level;
    }

    /// Moves to `cpupri` with a fresh quantum and `dispwait` 0 (expiry, sleep return, lift).
    fn renew(&mut self, t: TaskId, cpupri: u8) {
        self.set_cpupri(t, cpupri);
        let q = self.quantum(cpupri);
        let s = &mut self.tasks[t.idx()];
        s.timeleft = q;
        s.dispwait = 0;
    }

    /// `ts_sleep`/`ts_wakeup`: a task that waited through an update returns at `slpret`.
    fn sleep_return(&mut self, t: TaskId) {
        let s = &self.tasks[t.idx()];
        if s.dispwait > self.table[s.umdpri as usize].maxwait {
            let to = self.table[s.cpupri as usize].slpret;
            self.renew(t, to);
        }
    }

    fn enqueue(&mut self, t: TaskId, front: bool) {
        let s = &mut self.tasks[t.idx()];
        s.queued = true;
        let q = &mut self.queues[s.umdpri as usize];
        if front {
            q.push_front(t)
        } else {
            q.push_back(t)
        }
    }

    fn dequeue(&mut self, t: TaskId) {
        let s = &mut self.tasks[t.idx()];
        if s.queued {
            s.queued = false;
            let q = &mut self.queues[s.umdpri as usize];
            if let Some(i) = q.iter().position(|x| *x == t) {
                q.remove(i);
            }
        }
    }

    /// `ts_update`: one second has passed. Returns whether the CPUs must decide again: a lifted
    /// runnable task outranks a running one, or a running task is due its `slpret`.
    fn update(&mut self, v: &View) -> bool {
        let n = self.tasks.len();
        let mut resched = false;
        let mut lifted_to: Option<u8> = None;
        let mut new_marker = None;
        for k in 0..n {
            let i = (self.marker + k) % n;
            let t = TaskId(i as u32);
            let s = &mut self.tasks[i];
            if !s.live {
                continue;
            }
            s.dispwait += 1;
            if s.dispwait <= self.table[s.umdpri as usize].maxwait {
                continue;
            }
            if matches!(v.state(t), State::Running(_)) {
                // ts_update_list posts an AST; the thread's next trap (within a tick) runs
                // ts_trapret, which returns it at slpret: here, when the CPU stops it.
                s.trapret = true;
                resched = true;
                continue;
            }
            let (queued, to) = (s.queued, self.table[s.cpupri as usize].lwait);
            self.lifted += 1;
            if i != self.marker && new_marker.is_none() {
                new_marker = Some(i);
            }
            // Only a queued task that changes level moves (to the back of its new level, with a
            // fresh quantum); one whose level is clamped keeps its place and what it had left
            // (ts_update_list, ts_change_priority).
            let moves = queued && self.level_at(t, to) != self.tasks[i].umdpri;
            if moves {
                self.dequeue(t);
            }
            self.set_cpupri(t, to);
            self.tasks[i].dispwait = 0;
            if moves {
                self.tasks[i].timeleft = self.quantum(to);
                self.enqueue(t, false);
                lifted_to = lifted_to.max(Some(self.tasks[i].umdpri));
            }
        }
        if let Some(m) = new_marker {
            self.marker = m;
        }
        let lowest_running = (0..v.cpus() as CpuId).map(|c| v.running(c).map_or(0, |t| self.level(t))).min();
        resched || matches!((lifted_to, lowest_running), (Some(l), Some(r)) if l > r)
    }
}

impl Default for TimeSharing {
    fn default() -> Self {
        TimeSharing::new()
    }
}

impl Policy for TimeSharing {
    fn admit(&mut self, t: TaskId, p: &TaskParams, _v: &View) {
        *slot(&mut self.tasks, t) =
            Task { upri: user_priority(p.priority), live: true, ..Default::default() };
        self.renew(t, START_LEVEL);
    }

    fn exit(&mut self, t: TaskId, _v: &View) {
        self.dequeue(t);
        self.tasks[t.idx()].live = false;
    }

    fn wake(&mut self, t: TaskId, _v: &View) {
        self.sleep_return(t);
        self.enqueue(t, false);
    }

    fn stop(&mut self, t: TaskId, _cpu: CpuId, charged: Nanos, why: Stop, _v: &View) {
        let s = &mut self.tasks[t.idx()];
        let trapret = std::mem::take(&mut s.trapret);
        // A slice run to its end is a quantum used up, whatever the billing made of it (with
        // tick-sampled billing the ticks charged can fall short of the slice by one).
        s.timeleft = if why == Stop::SliceEnd { 0 } else { s.timeleft.saturating_sub(charged) };
        let expired = s.timeleft == 0;
        if expired {
            // ts_tick: the expiry also clears the wait that would have lifted it.
            let to = self.table[s.cpupri as usize].tqexp;
            self.renew(t, to);
        } else if trapret {
            let to = self.table[s.cpupri as usize].slpret;
            self.renew(t, to);
        }
        match why {
            Stop::Blocked => self.sleep_return(t),
            Stop::Preempted if !expired => self.enqueue(t, true),
            Stop::Preempted | Stop::Yielded | Stop::SliceEnd => self.enqueue(t, false),
        }
    }

    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, _v: &View) -> Option<CpuId> {
        preempt_lower_rank(woken, prev, running, |r| self.level(r))
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        let t = take_first_allowed(self.queues.iter_mut(), v, cpu)?;
        let s = &mut self.tasks[t.idx()];
        s.queued = false;
        Some(Dispatch { task: t, slice: Some(s.timeleft.max(1)) })
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, _v: &View) {
        // ts_parmsset: a new user priority, the level recomputed; a queued task moves to the back
        // of it with a fresh quantum (ts_change_priority). A running one keeps its slice.
        let queued = self.tasks[t.idx()].queued;
        self.dequeue(t);
        self.tasks[t.idx()].upri = user_priority(p.priority);
        let c = self.tasks[t.idx()].cpupri;
        self.set_cpupri(t, c);
        if queued {
            self.tasks[t.idx()].timeleft = self.quantum(c);
            self.tasks[t.idx()].dispwait = 0;
            self.enqueue(t, false);
        }
    }

    fn availability(&self, t: TaskId, v: &View) -> Availability {
        let lvl = self.level(t);
        let same = self.tasks.iter().filter(|s| s.live && s.umdpri == lvl).count() as u64;
        v.availability_by_rank(t, |x| self.level(x), 1, same)
    }

    fn next_timer(&self) -> Option<Nanos> {
        Some(self.next_update)
    }

    fn timer(&mut self, v: &View) -> bool {
        let mut resched = false;
        while self.next_update <= v.now() {
            self.next_update += UPDATE;
            resched |= self.update(v);
        }
        resched
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("lifted", self.lifted)]
    }
}

/// The registry's entry of `ts`.
pub const ENTRY: Entry = Entry::new("ts", "ts.rs", |_, _| Ok(Box::new(TimeSharing::new())))
    .about("UNIX SVR4 time-sharing class with Solaris's default ts_dptbl (Nieh ch. 2's baseline)")
    .fair(FairMeaning::SolarisUser)
    .pace(|_, _| {
        // Its shortest quantum is its table's (20 ms at the top level); `ts_update` runs every second.
        let q = SOLARIS.iter().map(|l| Nanos::from(l.quantum_ms) * MS).min().unwrap_or(MS);
        Ok(Pace { slice: Some(Slice { nanos: q, key: None }), timer: Some(UPDATE), walks: Walks::Nothing })
    });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{test_core, Core};

    fn ts(tasks: &[i32], cpus: usize) -> Core<TimeSharing> {
        let mut p = test_core(TimeSharing::new(), cpus);
        for (i, &upri) in tasks.iter().enumerate() {
            p.admit(TaskId(i as u32), &TaskParams { priority: upri, ..Default::default() }, 0);
        }
        p
    }

    /// Runs what `cpu` picks until its slice ends; returns the task and its slice.
    fn run_slice(p: &mut Core<TimeSharing>, cpu: CpuId, now: &mut Nanos) -> (TaskId, Nanos) {
        let d = p.pick(cpu, *now).unwrap();
        let s = d.slice.unwrap();
        *now += s;
        p.stop(d.task, s, Stop::SliceEnd, *now);
        (d.task, s)
    }

    #[test]
    fn the_table_is_solaris_default() {
        // Every row, from the ranges of `dispadmin -c TS -g` (RES=1000) as the Solaris System
        // Administration Guide prints them.
        for (i, l) in SOLARIS.iter().enumerate() {
            let n = i as u8;
            let want = match i {
                0..=9 => lv(200, 0, 50, 0, 50),
                10..=19 => lv(160, n - 10, 51, 0, 51),
                20..=29 => lv(120, n - 10, 52, 0, 52),
                30..=34 => lv(80, n - 10, 53, 0, 53),
                35..=39 => lv(80, n - 10, 54, 0, 54),
                40..=44 => lv(40, n - 10, 55, 0, 55),
                45 => lv(40, 35, 56, 0, 56),
                46 => lv(40, 36, 57, 0, 57),
                47 | 48 => lv(40, n - 10, 58, 0, 58),
                49..=58 => lv(40, n - 10, 58, 0, 59),
                _ => lv(20, 49, 59, 32000, 59),
            };
            assert_eq!(*l, want, "level {i}");
        }
    }

    #[test]
    fn a_cpu_bound_task_sinks_a_level_band_per_quantum() {
        let mut p = ts(&[0], 1);
        p.wake(TaskId(0), 0);
        let mut now = 0;
        let mut seen = Vec::new();
        for _ in 0..5 {
            let lvl = p.policy().level(TaskId(0));
            let (_, s) = run_slice(&mut p, 0, &mut now);
            seen.push((lvl, s / MS));
        }
        // 29 (120 ms) -> tqexp 19 (160 ms) -> 9 (200 ms) -> 0 (200 ms) -> 0.
        assert_eq!(seen, vec![(29, 120), (19, 160), (9, 200), (0, 200), (0, 200)]);
    }

    #[test]
    fn a_preempted_task_keeps_its_quantum_and_the_front_of_its_level() {
        let mut p = ts(&[0, 0], 1);
        p.wake(TaskId(0), 0);
        p.wake(TaskId(1), 0);
        let d = p.pick(0, 0).unwrap();
        assert_eq!(d, Dispatch { task: TaskId(0), slice: Some(120 * MS) });
        p.stop(TaskId(0), 30 * MS, Stop::Preempted, 30 * MS);
        let d = p.pick(0, 30 * MS).unwrap();
        assert_eq!(d, Dispatch { task: TaskId(0), slice: Some(90 * MS) }, "front, 90 ms left");
        p.stop(TaskId(0), 90 * MS, Stop::SliceEnd, 120 * MS);
        assert_eq!(p.policy().level(TaskId(0)), 19);
        assert_eq!(p.pick(0, 120 * MS).unwrap().task, TaskId(1), "the equal task, now higher");
    }

    #[test]
    fn equal_levels_are_served_in_queue_order() {
        let mut p = ts(&[0, 0, 0], 1);
        for i in [2, 0, 1] {
            p.wake(TaskId(i), 0);
        }
        let order: Vec<u32> = (0..3)
            .map(|_| {
                let d = p.pick(0, 0).unwrap();
                p.stop(d.task, 0, Stop::Blocked, 0);
                d.task.0
            })
            .collect();
        assert_eq!(order, vec![2, 0, 1], "woken order");
    }

    #[test]
    fn a_running_task_that_waited_through_an_update_returns_at_slpret() {
        let mut p = ts(&[0], 1);
        p.wake(TaskId(0), 0);
        let mut now = 0;
        for _ in 0..3 {
            run_slice(&mut p, 0, &mut now); // 29 -> 19 -> 9 -> 0, at 480 ms
        }
        assert_eq!(p.policy().level(TaskId(0)), 0);
        // A sleep before any update changes nothing (no wait counted).
        let d = p.pick(0, now).unwrap();
        p.stop(d.task, 20 * MS, Stop::Blocked, 500 * MS);
        p.wake(TaskId(0), 900 * MS);
        assert_eq!(p.policy().level(TaskId(0)), 0);
        // It runs through the update at 1 s: the update asks its CPU to decide again...
        let d = p.pick(0, 900 * MS).unwrap();
        assert_eq!(d.slice, Some(180 * MS));
        assert!(p.timer(UPDATE), "a running task is due its slpret");
        // ...and when it stops it is at slpret[0] = 50 with quantum[50], at the front.
        p.stop(d.task, 100 * MS, Stop::Preempted, UPDATE);
        assert_eq!(p.policy().level(TaskId(0)), 50);
        assert_eq!(p.pick(0, UPDATE).unwrap(), Dispatch { task: TaskId(0), slice: Some(40 * MS) });
    }

    #[test]
    fn a_slice_run_to_its_end_uses_the_quantum_up_whatever_was_billed() {
        let mut p = ts(&[0], 1);
        p.wake(TaskId(0), 0);
        let d = p.pick(0, 0).unwrap();
        assert_eq!(d.slice, Some(120 * MS));
        // Tick-sampled billing charged 11 ticks of 10 ms for the 120 ms slice.
        p.stop(d.task, 110 * MS, Stop::SliceEnd, 120 * MS);
        assert_eq!(p.policy().level(TaskId(0)), 19);
        assert_eq!(p.pick(0, 120 * MS).unwrap().slice, Some(160 * MS));
    }

    #[test]
    fn a_lifted_task_whose_level_is_clamped_keeps_its_place_and_quantum() {
        // upri -60: level 0 at every cpupri below 60.
        let mut p = ts(&[-60, -60, 0], 2);
        for i in 0..3 {
            p.wake(TaskId(i), 0);
        }
        let d = p.pick(0, 0).unwrap();
        assert_eq!(d.task, TaskId(2));
        let a = p.pick(1, 0).unwrap(); // take task 0 out and put it back preempted, with 30 ms used
        p.stop(a.task, 30 * MS, Stop::Preempted, 0);
        assert_eq!(a.task, TaskId(0));
        p.timer(UPDATE);
        assert_eq!(p.policy().cpupri(TaskId(0)), 52, "lifted to lwait[29]");
        assert_eq!(p.policy().level(TaskId(0)), 0, "clamped");
        assert_eq!(p.counters()[1].1, 2);
        let d = p.pick(1, UPDATE).unwrap();
        assert_eq!(d, Dispatch { task: TaskId(0), slice: Some(90 * MS) }, "same place, same quantum left");
    }

    #[test]
    fn exit_yield_and_new_priorities_keep_the_queues_right() {
        let mut p = ts(&[0, 0, 0], 2);
        for i in 0..3 {
            p.wake(TaskId(i), 0);
        }
        p.exit(TaskId(0), 0);
        let d = p.pick(0, 0).unwrap();
        assert_eq!(d.task, TaskId(1), "an exited task is never picked");
        p.stop(d.task, 5 * MS, Stop::Yielded, 5 * MS);
        assert_eq!(p.pick(0, 5 * MS).unwrap().task, TaskId(2), "a yielding task goes behind");
        p.stop(TaskId(2), 5 * MS, Stop::Blocked, 10 * MS);
        // Task 1 queued at level 29 with 115 ms left; user priority +20 moves it to 49, fresh.
        p.set_params(TaskId(1), &TaskParams { priority: 20, ..Default::default() }, 10 * MS);
        assert_eq!(p.policy().level(TaskId(1)), 49);
        assert_eq!(p.pick(0, 10 * MS).unwrap(), Dispatch { task: TaskId(1), slice: Some(120 * MS) });
        assert_eq!(p.pick(1, 10 * MS), None, "nothing else runnable");
    }

    #[test]
    fn the_update_asks_the_cpus_only_when_something_outranks_or_is_due() {
        let mut p = ts(&[60, 0], 1);
        p.wake(TaskId(0), 0);
        p.wake(TaskId(1), 0);
        let d = p.pick(0, 0).unwrap();
        assert_eq!(d.task, TaskId(0));
        // Task 0 (level 59, maxwait 32000) is not due; task 1 is lifted to 52, below 59.
        assert!(!p.timer(UPDATE));
        assert_eq!(p.policy().level(TaskId(1)), 52);
        // At the next update task 1 reaches 59, no higher than task 0: still no.
        assert!(!p.timer(2 * UPDATE));
        assert_eq!(p.policy().level(TaskId(1)), 59);
    }

    #[test]
    fn a_sleeping_task_is_lifted_by_the_update() {
        let mut p = ts(&[0], 1);
        p.wake(TaskId(0), 0);
        let mut now = 0;
        run_slice(&mut p, 0, &mut now); // 29 -> 19
        let d = p.pick(0, now).unwrap();
        p.stop(d.task, 10 * MS, Stop::Blocked, now + 10 * MS);
        assert_eq!(p.policy().level(TaskId(0)), 19, "no wait counted yet: no sleep return");
        p.timer(UPDATE);
        assert_eq!(p.policy().level(TaskId(0)), 51, "lwait[19]");
    }

    #[test]
    fn a_starved_task_is_lifted_until_it_runs() {
        // Task 0 has user priority +60: always level 59. Task 1 waits at 29.
        let mut p = ts(&[60, 0], 1);
        p.wake(TaskId(0), 0);
        p.wake(TaskId(1), 0);
        let mut now = 0;
        let mut ran_1_at = None;
        while now < 5 * UPDATE && ran_1_at.is_none() {
            let (t, _) = run_slice(&mut p, 0, &mut now);
            if t == TaskId(1) {
                ran_1_at = Some(now);
            }
            if p.next_timer().unwrap() <= now {
                p.timer(now);
            }
        }
        // Lifted to lwait[29] = 52 at the first update (still below task 0), to lwait[52] = 59
        // at the second, behind task 0 in level 59: it runs after task 0's next quantum, within
        // the third second.
        let at = ran_1_at.expect("the waiting task ran");
        assert!(at > 2 * UPDATE && at < 3 * UPDATE, "ran at {at}");
        assert_eq!(p.counters()[1], ("lifted", 2));
    }

    #[test]
    fn user_priority_shifts_the_level_and_is_clamped() {
        let p = ts(&[-10, 10, 100, -100], 1);
        assert_eq!(p.policy().level(TaskId(0)), 19);
        assert_eq!(p.policy().level(TaskId(1)), 39);
        assert_eq!(p.policy().level(TaskId(2)), 59);
        assert_eq!(p.policy().level(TaskId(3)), 0);
    }

    #[test]
    fn on_two_cpus_a_waking_task_preempts_the_lowest_level() {
        let mut p = ts(&[0, -20, 20], 2);
        p.wake(TaskId(0), 0);
        p.wake(TaskId(1), 0);
        assert_eq!(p.pick(0, 0).unwrap().task, TaskId(0));
        assert_eq!(p.pick(1, 0).unwrap().task, TaskId(1));
        p.wake(TaskId(2), 1);
        assert_eq!(
            p.policy().preempt_for(TaskId(2), None, &[(0, TaskId(0)), (1, TaskId(1))], p.view()),
            Some(1)
        );
        p.admit(TaskId(3), &TaskParams { priority: -20, ..Default::default() }, 1);
        p.wake(TaskId(3), 1);
        assert_eq!(
            p.policy().preempt_for(TaskId(3), None, &[(0, TaskId(0)), (1, TaskId(1))], p.view()),
            None,
            "not higher"
        );
        // A stop frees its CPU: the one left running is the lowest now.
        p.stop(TaskId(1), 10 * MS, Stop::Preempted, 10 * MS);
        assert_eq!((p.view().running(0), p.view().running(1)), (Some(TaskId(0)), None));
    }
}
