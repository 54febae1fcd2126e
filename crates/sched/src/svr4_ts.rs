//! The time-sharing class of UNIX System V Release 4 as AT&T/USL shipped it (`TS`), with its
//! original dispatcher parameter table: the class Nieh's chapter 2 measured on Solaris 2.2 (which
//! "is based on UNIX SVR4") and found pathological (§2.4.1: a batch job that forks and waits for
//! its children is boosted on every sleep to the top level and keeps it; a window server working
//! through a backlog sinks and "it can often take tens of seconds for the priority of a penalized
//! process to recover"). Its successor, Solaris 2.3's table from Nieh's TS-M, is [`crate::ts`].
//!
//! **Specification.** The SVR4 kernel sources as USL's System V/386 Release 4 carries them (read to
//! learn the values and rules; nothing is copied): the table `ts_dptbl` and the kernel-mode
//! priorities `ts_kmdpris` in `uts/i386/master.d/ts/space.c` (`@(#)master:ts/space.c 1.3.2.1`),
//! the rules in the class's `ts.c` (`@(#)kern-dsp:ts.c 1.3.1.2`), and the tunable `TSMAXUPRI` (20) in
//! `master.d/mtune`; Nieh 1999 ch. 2 gives no table. The table ([`SVR4`]), quanta in ticks of
//! `HZ` = 100 written here in ms: levels 0-9 1000 ms, 10-19 800, 20-29 600, 30-39 400, 40-49 200,
//! 50-59 100; `ts_tqexp` = `⌊level/2⌋` below 20 and `level − 10` from 20; `ts_slpret` =
//! `ts_lwait` = `level + 10` below 40, then `50 + ⌊(level − 40)/2⌋` (40, 41 → 50; … 58, 59 → 59);
//! `ts_maxwait` 5 s at every level. Sun's own SPARC master file of Solaris 2.2, the one Nieh ran, was
//! not found: this is USL's, which Solaris 2.2 is assumed to share (its `ts_dptbl(4)` page was not found
//! either). The 386 file puts the user levels at global priorities 3..62 (`TSGPUP0` 3); only their
//! order matters here.
//!
//! **State per task.** `cpupri` (0..=59, starts at `ts_maxumdpri >> 1` = 29), the user priority
//! `upri` (−20..=20, `TSMAXUPRI`), the level `umdpri = clamp(cpupri + upri, 0, 59)`, the quantum
//! left `timeleft`, `dispwait` (seconds counted since it last started a quantum), whether it is at
//! a kernel-mode priority (`TSKPRI`: it slept and has not returned to user mode since), and whether
//! it is due the back of its queue with a fresh quantum when it next stops (`TSBACKQ`). The user
//! priority is `−n` for [`TaskParams::nice`] `n` (`ts_donice`: `upri = −(nice·TSMAXUPRI)/NZERO`
//! with `NZERO` = `TSMAXUPRI` = 20), else [`TaskParams::priority`] clamped to −20..=20 (where
//! `ts_parmsin` refuses values beyond). Table lookups are by `cpupri` for `tqexp`, `slpret` and
//! `lwait`, by `umdpri` for `quantum` and `maxwait` (as SVR4's `ts.c` has them).
//!
//! **Rules.**
//! * A task runs for at most `timeleft` (the dispatch's slice); what the driver bills is taken from
//!   it whenever the task stops, and a slice run to its end uses it up. Then (`ts_tick`):
//!   `cpupri = tqexp[cpupri]`, `dispwait = 0`, and it goes to the back of its new level with a fresh
//!   quantum `quantum[umdpri]` (`ts_preempt` with `TSBACKQ`).
//! * Preempted before that, it goes back to the front of its level and keeps what it had left
//!   (`ts_preempt`), unless an update lifted it while it ran (`TSBACKQ`): then the back, with a
//!   fresh quantum and `dispwait = 0`. A yielding task goes to the back and keeps what it had left.
//! * A task that blocks sleeps at a kernel-mode priority (`ts_sleep`) and wakes at it to the back
//!   of its queue (`ts_wakeup`); every kernel-mode priority is above every user level
//!   (`ts_kmdpris`: global 65..104 in this master file, above the user levels' 3..62). When it
//!   next returns to user mode (`ts_trapret`) it gets `cpupri = slpret[cpupri]`, a fresh quantum and
//!   `dispwait = 0`, **after every sleep**, however short: this is the boost §2.4.1 blames. Modelled
//!   as one kernel-mode level above the 60 user levels: a woken task is queued there (in wake-up
//!   order) and ranks there for preemption, and the `ts_trapret` change is made when it is
//!   dispatched, so it runs its whole dispatch at its new user level with that level's quantum.
//! * A task's first wake-up after admission is `ts_setrun`, not a sleep's end: the back of its
//!   level at user priority with a fresh quantum.
//! * A woken task preempts the CPU running the lowest level if it ranks higher (a task at the
//!   kernel-mode level ranks above every running one, which are all at user levels).
//! * Once a second (`ts_update`, from time 1 s), every runnable or running task at a user-mode
//!   priority (not one at the kernel-mode level, not a sleeping one) has `dispwait` grown by one; a
//!   task whose `dispwait` then exceeds `maxwait[umdpri]` gets `cpupri = lwait[cpupri]` and
//!   `dispwait = 0`: a queued one goes to the back of its (new) level with a fresh quantum, a
//!   running one changes level at once and is due `TSBACKQ`. The round visits tasks newest first
//!   (SVR4 links a new task at the head of its list). The kernel then sets `runrun` to make its CPU
//!   decide again; here the update asks every CPU to decide again when a lifted queued task now
//!   outranks a running one or a running task is due `TSBACKQ` (otherwise the decision would
//!   change nothing).
//! * A new user priority (`set_params`, `ts_parmsset`) recomputes the level; a task at the
//!   kernel-mode level changes nothing else; a queued one moves to the back of its new level with a
//!   fresh quantum and `dispwait = 0`; a running one keeps its slice and is due `TSBACKQ`.
//!
//! **Tie-break.** Within a level, queue order: woken, expired, lifted and yielding tasks at the
//! back, a preempted one at the front.
//!
//! **How it differs from [`crate::ts`]** (Solaris 2.3+'s class, from Nieh's TS-M). (1) The table:
//! quanta 1000..100 ms (Solaris: 200..20 ms); `slpret`/`lwait` lift a task 10 levels (Solaris: to
//! 50..59 at once); `maxwait` 5 s everywhere (Solaris: 0 below level 59, so any wait of one update
//! lifts). (2) The sleep return: SVR4 gives `slpret` after every sleep, Solaris only to a task that
//! waited through an update (`dispwait > maxwait`). (3) Kernel-mode priorities after a sleep (left
//! out of `ts`). (4) `ts_update` counts only runnable and running tasks (Solaris also sleeping
//! ones), requeues every lifted queued task with a fresh quantum (Solaris only one whose level
//! changes), changes a running task's level at once (Solaris at its next trap, at `slpret`), and
//! has no rotating start marker. (5) Quanta by `umdpri` (Solaris by `cpupri`). (6) User priorities
//! −20..20 with `nice n` = −n (Solaris −60..60, −3n). The two share [`crate::ts::Level`] and nothing
//! else: each rule above differs, so a shared engine would be `ts` with six switches.
//!
//! **Left out.** SVR4 runs on one CPU; on N CPUs this class has one queue for all CPUs and a woken
//! task preempts the CPU running the lowest level. The kernel-mode priority a task sleeps at
//! depends on what it slept on (`ts_kmdpris[ts_maxkmdpri − disp]`); here one level for all, and
//! no time is spent at it. Non-preemptive wake-ups (`npwakecnt`), `fork`'s child-runs-first
//! (`ts_forkret`), the upri limit `ts_uprilim`, the swapper and `SPROCIO` are left out. In a class
//! stack the kernel-mode level stays inside this class: below SVR4's system class, whose range
//! (60..99) the real `ts_kmdpris` share. The quantum is counted down by what the driver bills
//! (exactly, or in whole ticks when billing is tick-sampled), where the kernel counts ticks.

use std::collections::VecDeque;

use crate::registry::{Entry, Pace, Slice, Walks};
use crate::ts::Level;
use crate::{
    preempt_lower_rank, slot, take_first_allowed, Availability, CpuId, Dispatch, Nanos, Policy, Running,
    State, Stop, TaskId, TaskParams, View, MS,
};

/// User-mode levels of the class (`ts_maxumdpri + 1`).
pub const LEVELS: usize = 60;
/// The one kernel-mode level, above every user-mode level (queue index).
pub const KERNEL_LEVEL: u8 = LEVELS as u8;
/// Largest user priority, either way (`TSMAXUPRI` in SVR4's `mtune`).
pub const MAX_UPRI: i32 = 20;
/// Level a new task starts at (`ts_maxumdpri >> 1`).
pub const START_LEVEL: u8 = 29;
/// How often `ts_update` runs (`timeout(ts_update, 0, HZ)`).
pub const UPDATE: Nanos = 1_000 * MS;

/// The user priority of a task: `−nice` when it has a nice level (`ts_donice`), else its priority
/// clamped to −20..=20.
pub fn user_priority(p: &TaskParams) -> i32 {
    match p.nice {
        Some(n) => -(n as i32).clamp(-MAX_UPRI, MAX_UPRI),
        None => p.priority.clamp(-MAX_UPRI, MAX_UPRI),
    }
}

const fn lv(quantum_ms: u32, tqexp: u8, slpret: u8, maxwait: u32, lwait: u8) -> Level {
    Level { quantum_ms, tqexp, slpret, maxwait, lwait }
}

/// SVR4's `ts_dptbl` (`master.d/ts/space.c`), level 0 first; quanta in ms (ticks × 10 at 100 Hz).
pub const SVR4: [Level; LEVELS] = [
    lv(1000, 0, 10, 5, 10),
    lv(1000, 0, 11, 5, 11),
    lv(1000, 1, 12, 5, 12),
    lv(1000, 1, 13, 5, 13),
    lv(1000, 2, 14, 5, 14),
    lv(1000, 2, 15, 5, 15),
    lv(1000, 3, 16, 5, 16),
    lv(1000, 3, 17, 5, 17),
    lv(1000, 4, 18, 5, 18),
    lv(1000, 4, 19, 5, 19),
    lv(800, 5, 20, 5, 20),
    lv(800, 5, 21, 5, 21),
    lv(800, 6, 22, 5, 22),
    lv(800, 6, 23, 5, 23),
    lv(800, 7, 24, 5, 24),
    lv(800, 7, 25, 5, 25),
    lv(800, 8, 26, 5, 26),
    lv(800, 8, 27, 5, 27),
    lv(800, 9, 28, 5, 28),
    lv(800, 9, 29, 5, 29),
    lv(600, 10, 30, 5, 30),
    lv(600, 11, 31, 5, 31),
    lv(600, 12, 32, 5, 32),
    lv(600, 13, 33, 5, 33),
    lv(600, 14, 34, 5, 34),
    lv(600, 15, 35, 5, 35),
    lv(600, 16, 36, 5, 36),
    lv(600, 17, 37, 5, 37),
    lv(600, 18, 38, 5, 38),
    lv(600, 19, 39, 5, 39),
    lv(400, 20, 40, 5, 40),
    lv(400, 21, 41, 5, 41),
    lv(400, 22, 42, 5, 42),
    lv(400, 23, 43, 5, 43),
    lv(400, 24, 44, 5, 44),
    lv(400, 25, 45, 5, 45),
    lv(400, 26, 46, 5, 46),
    lv(400, 27, 47, 5, 47),
    lv(400, 28, 48, 5, 48),
    lv(400, 29, 49, 5, 49),
    lv(200, 30, 50, 5, 50),
    lv(200, 31, 50, 5, 50),
    lv(200, 32, 51, 5, 51),
    lv(200, 33, 51, 5, 51),
    lv(200, 34, 52, 5, 52),
    lv(200, 35, 52, 5, 52),
    lv(200, 36, 53, 5, 53),
    lv(200, 37, 53, 5, 53),
    lv(200, 38, 54, 5, 54),
    lv(200, 39, 54, 5, 54),
    lv(100, 40, 55, 5, 55),
    lv(100, 41, 55, 5, 55),
    lv(100, 42, 56, 5, 56),
    lv(100, 43, 56, 5, 56),
    lv(100, 44, 57, 5, 57),
    lv(100, 45, 57, 5, 57),
    lv(100, 46, 58, 5, 58),
    lv(100, 47, 58, 5, 58),
    lv(100, 48, 59, 5, 59),
    lv(100, 49, 59, 5, 59),
];

#[derive(Clone, Debug, Default)]
struct Task {
    cpupri: u8,
    upri: i32,
    umdpri: u8,
    timeleft: Nanos,
    dispwait: u32,
    live: bool,
    /// The queue it is in, if queued.
    queued_at: Option<u8>,
    /// At a kernel-mode priority (`TSKPRI`): it slept and has not returned to user mode.
    kpri: bool,
    /// Due the back of its level with a fresh quantum when it next stops (`TSBACKQ`).
    backq: bool,
    /// It has blocked since it was admitted: its next wake-up ends a sleep.
    slept: bool,
}

/// The SVR4 time-sharing class with its original table.
#[derive(Debug)]
pub struct Svr4TimeSharing {
    table: [Level; LEVELS],
    tasks: Vec<Task>,
    /// The 60 user-mode levels, then the kernel-mode one.
    queues: Vec<VecDeque<TaskId>>,
    /// Tasks in admission order (`ts_update` walks it newest first).
    order: Vec<TaskId>,
    next_update: Nanos,
    lifted: u64,
}

impl Svr4TimeSharing {
    /// The class with SVR4's table (one dispatch queue for all CPUs).
    pub fn new() -> Self {
        Svr4TimeSharing {
            table: SVR4,
            tasks: Vec::new(),
            queues: vec![VecDeque::new(); LEVELS + 1],
            order: Vec::new(),
            next_update: UPDATE,
            lifted: 0,
        }
    }

    /// The level a task ranks at: [`KERNEL_LEVEL`] at a kernel-mode priority, else `ts_umdpri`.
    pub fn level(&self, t: TaskId) -> u8 {
        let s = &self.tasks[t.idx()];
        if s.kpri {
            KERNEL_LEVEL
        } else {
            s.umdpri
        }
    }

    /// Its user-mode level (`ts_umdpri`), whatever mode it is in.
    pub fn umdpri(&self, t: TaskId) -> u8 {
        self.tasks[t.idx()].umdpri
    }

    /// Its class priority (`ts_cpupri`).
    pub fn cpupri(&self, t: TaskId) -> u8 {
        self.tasks[t.idx()].cpupri
    }

    fn quantum(&self, umdpri: u8) -> Nanos {
        self.table[umdpri as usize].quantum_ms as Nanos * MS
    }

    /// Sets `cpupri` and recomputes `umdpri` (TS_NEWUMDPRI). The caller requeues.
    fn set_cpupri(&mut self, t: TaskId, cpupri: u8) {
        let s = &mut self.tasks[t.idx()];
        s.cpupri = cpupri;
        s.umdpri = (cpupri as i32 + s.upri).clamp(0, LEVELS as i32 - 1) as u8;
    }

    /// A fresh quantum at its level and `dispwait` 0.
    fn fresh(&mut self, t: TaskId) {
        let q = self.quantum(self.tasks[t.idx()].umdpri);
        let s = &mut self.tasks[t.idx()];
        s.timeleft = q;
        s.dispwait = 0;
    }

    fn enqueue(&mut self, t: TaskId, front: bool) {
        let at = self.level(t);
        self.tasks[t.idx()].queued_at = Some(at);
        let q = &mut self.queues[at as usize];
        if front {
            q.push_front(t)
        } else {
            q.push_back(t)
        }
    }

    fn dequeue(&mut self, t: TaskId) -> bool {
        let Some(at) = self.tasks[t.idx()].queued_at.take() else { return false };
        let q = &mut self.queues[at as usize];
        if let Some(i) = q.iter().position(|x| *x == t) {
            q.remove(i);
        }
        true
    }

    /// `ts_update`: one second has passed. Returns whether the CPUs must decide again.
    fn update(&mut self, v: &View) -> bool {
        let mut backq = false;
        let mut lifted_to: Option<u8> = None;
        for k in (0..self.order.len()).rev() {
            let t = self.order[k];
            let s = &mut self.tasks[t.idx()];
            if !s.live || s.kpri {
                continue;
            }
            let running = match v.state(t) {
                State::Running(_) => true,
                State::Runnable => false,
                State::Blocked | State::Absent => continue,
            };
            s.dispwait += 1;
            if s.dispwait <= self.table[s.umdpri as usize].maxwait {
                continue;
            }
            let to = self.table[s.cpupri as usize].lwait;
            self.lifted += 1;
            self.set_cpupri(t, to);
            self.tasks[t.idx()].dispwait = 0;
            if running {
                self.tasks[t.idx()].backq = true;
                backq = true;
            } else if self.dequeue(t) {
                self.fresh(t);
                self.enqueue(t, false);
                lifted_to = lifted_to.max(Some(self.tasks[t.idx()].umdpri));
            }
        }
        let lowest_running = v.running_tasks().map(|(_, t)| self.level(t)).min();
        backq || matches!((lifted_to, lowest_running), (Some(l), Some(r)) if l > r)
    }
}

impl Default for Svr4TimeSharing {
    fn default() -> Self {
        Svr4TimeSharing::new()
    }
}

impl Policy for Svr4TimeSharing {
    fn admit(&mut self, t: TaskId, p: &TaskParams, _v: &View) {
        *slot(&mut self.tasks, t) = Task { upri: user_priority(p), live: true, ..Default::default() };
        self.order.push(t);
        self.set_cpupri(t, START_LEVEL);
        self.fresh(t);
    }

    fn exit(&mut self, t: TaskId, _v: &View) {
        self.dequeue(t);
        self.tasks[t.idx()].live = false;
        self.order.retain(|x| *x != t);
    }

    fn wake(&mut self, t: TaskId, _v: &View) {
        let s = &mut self.tasks[t.idx()];
        s.backq = false;
        if s.slept {
            // ts_sleep left it at a kernel-mode priority; ts_wakeup queues it there.
            s.kpri = true;
        } else {
            // ts_setrun: user mode, a fresh quantum.
            self.fresh(t);
        }
        self.enqueue(t, false);
    }

    fn stop(&mut self, t: TaskId, _cpu: CpuId, charged: Nanos, why: Stop, _v: &View) {
        let s = &mut self.tasks[t.idx()];
        // A slice run to its end is a quantum used up, whatever the billing made of it.
        s.timeleft = if why == Stop::SliceEnd { 0 } else { s.timeleft.saturating_sub(charged) };
        let expired = s.timeleft == 0;
        if why == Stop::Blocked {
            s.slept = true;
        }
        if expired {
            // ts_tick: the level after expiry; the fresh quantum comes with TSBACKQ.
            let to = self.table[s.cpupri as usize].tqexp;
            self.set_cpupri(t, to);
            self.tasks[t.idx()].dispwait = 0;
            self.tasks[t.idx()].backq = true;
        }
        let backq = std::mem::take(&mut self.tasks[t.idx()].backq);
        match why {
            Stop::Blocked => {}
            Stop::Preempted | Stop::Yielded | Stop::SliceEnd if backq => {
                self.fresh(t);
                self.enqueue(t, false);
            }
            Stop::Preempted => self.enqueue(t, true),
            Stop::Yielded | Stop::SliceEnd => self.enqueue(t, false),
        }
    }

    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, _v: &View) -> Option<CpuId> {
        preempt_lower_rank(woken, prev, running, |r| self.level(r))
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        let t = take_first_allowed(self.queues.iter_mut(), v, cpu)?;
        self.tasks[t.idx()].queued_at = None;
        if self.tasks[t.idx()].kpri {
            // ts_trapret on its way back to user mode: slpret, a fresh quantum.
            let to = self.table[self.tasks[t.idx()].cpupri as usize].slpret;
            self.set_cpupri(t, to);
            self.fresh(t);
            self.tasks[t.idx()].kpri = false;
        }
        Some(Dispatch { task: t, slice: Some(self.tasks[t.idx()].timeleft.max(1)) })
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        self.tasks[t.idx()].upri = user_priority(p);
        let c = self.tasks[t.idx()].cpupri;
        self.set_cpupri(t, c);
        if self.tasks[t.idx()].kpri {
            return;
        }
        self.tasks[t.idx()].dispwait = 0;
        if self.dequeue(t) {
            self.fresh(t);
            self.enqueue(t, false);
        } else if matches!(v.state(t), State::Running(_)) {
            self.tasks[t.idx()].backq = true;
        }
    }

    fn availability(&self, t: TaskId, v: &View) -> Availability {
        let lvl = self.level(t);
        let same = v.live().filter(|&x| self.level(x) == lvl).count() as u64;
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

/// The registry's entry of `svr4-ts`.
pub const ENTRY: Entry = Entry::new("svr4-ts", "svr4_ts.rs", |_, _| Ok(Box::new(Svr4TimeSharing::new())))
    .about("UNIX SVR4 time-sharing class with its original ts_dptbl (the class Nieh ch. 2 measured)")
    .classes(&["ts"])
    .pace(|_, _| {
        // Its shortest quantum is its table's (100 ms at levels 50-59); `ts_update` runs every second.
        let q = SVR4.iter().map(|l| Nanos::from(l.quantum_ms) * MS).min().unwrap_or(MS);
        Ok(Pace { slice: Some(Slice { nanos: q, key: None }), timer: Some(UPDATE), walks: Walks::Nothing })
    });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{test_core, Core};

    fn params(upri: i32) -> TaskParams {
        TaskParams { priority: upri, ..Default::default() }
    }

    fn ts(tasks: &[i32], cpus: usize) -> Core<Svr4TimeSharing> {
        let mut p = test_core(Svr4TimeSharing::new(), cpus);
        for (i, &upri) in tasks.iter().enumerate() {
            p.admit(TaskId(i as u32), &params(upri), 0);
        }
        p
    }

    /// Runs what `cpu` picks until its slice ends; returns the task and its slice.
    fn run_slice(p: &mut Core<Svr4TimeSharing>, cpu: CpuId, now: &mut Nanos) -> (TaskId, Nanos) {
        let d = p.pick(cpu, *now).unwrap();
        let s = d.slice.unwrap();
        *now += s;
        p.stop(d.task, s, Stop::SliceEnd, *now);
        (d.task, s)
    }

    #[test]
    fn the_table_is_svr4s() {
        // Every row of master.d/ts/space.c, by its pattern: quanta 100, 80, 60, 40, 20, 10 ticks
        // per ten levels; tqexp level/2 below 20, level-10 above; slpret = lwait = level+10 below
        // 40, then 50 + (level-40)/2; maxwait 5.
        for (i, l) in SVR4.iter().enumerate() {
            let n = i as u8;
            let quantum = [1000, 800, 600, 400, 200, 100][i / 10];
            let tqexp = if n < 20 { n / 2 } else { n - 10 };
            let slpret = if n < 40 { n + 10 } else { 50 + (n - 40) / 2 };
            assert_eq!(*l, lv(quantum, tqexp, slpret, 5, slpret), "level {i}");
        }
    }

    #[test]
    fn a_cpu_bound_task_sinks_to_level_0_and_its_longest_quantum() {
        let mut p = ts(&[0], 1);
        p.wake(TaskId(0), 0);
        let mut now = 0;
        let mut seen = Vec::new();
        for _ in 0..7 {
            let lvl = p.policy().level(TaskId(0));
            let (_, s) = run_slice(&mut p, 0, &mut now);
            seen.push((lvl, s / MS));
        }
        // 29 (600 ms) -> tqexp 19 (800) -> 9 (1000) -> 4 -> 2 -> 1 -> 0.
        assert_eq!(seen, vec![(29, 600), (19, 800), (9, 1000), (4, 1000), (2, 1000), (1, 1000), (0, 1000)]);
    }

    #[test]
    fn every_sleep_returns_at_slpret_after_a_kernel_mode_dispatch() {
        let mut p = ts(&[0], 1);
        p.wake(TaskId(0), 0);
        assert_eq!(p.policy().level(TaskId(0)), 29, "the first wake-up is ts_setrun: user mode");
        let mut now = 0;
        let mut seen = Vec::new();
        for _ in 0..7 {
            let d = p.pick(0, now).unwrap();
            seen.push((p.policy().level(TaskId(0)), d.slice.unwrap() / MS));
            now += MS;
            p.stop(TaskId(0), MS, Stop::Blocked, now);
            p.wake(TaskId(0), now);
            assert_eq!(p.policy().level(TaskId(0)), KERNEL_LEVEL, "woken at a kernel-mode priority");
        }
        // Sleeping 1 ms each time: 29 -> 39 -> 49 -> 54 -> 57 -> 58 -> 59 -> 59, a fresh quantum
        // of the new level each time.
        assert_eq!(seen, vec![(29, 600), (39, 400), (49, 200), (54, 100), (57, 100), (58, 100), (59, 100)]);
    }

    #[test]
    fn a_woken_task_outranks_every_user_level() {
        // Task 0 at user priority +20 (level 49); task 1 at -20 (level 9); task 2 at 0.
        let mut p = ts(&[20, -20, 0], 2);
        p.wake(TaskId(0), 0);
        p.wake(TaskId(1), 0);
        assert_eq!(p.pick(0, 0).unwrap().task, TaskId(0));
        assert_eq!(p.pick(1, 0).unwrap().task, TaskId(1));
        p.stop(TaskId(1), 5 * MS, Stop::Blocked, 5 * MS);
        p.wake(TaskId(2), 5 * MS);
        assert_eq!(p.pick(1, 5 * MS).unwrap().task, TaskId(2));
        p.wake(TaskId(1), 6 * MS);
        // Kernel-mode level 60 > 49 and 29: it takes the CPU of the lower one (task 2, level 29).
        assert_eq!(
            p.policy().preempt_for(TaskId(1), None, &[(0, TaskId(0)), (1, TaskId(2))], p.view()),
            Some(1)
        );
        p.stop(TaskId(2), MS, Stop::Preempted, 6 * MS);
        // Picked ahead of task 2 (level 29, front); dispatched at slpret[29] = 39, + upri -20 = 19.
        assert_eq!(p.pick(1, 6 * MS).unwrap(), Dispatch { task: TaskId(1), slice: Some(800 * MS) });
        assert_eq!((p.policy().cpupri(TaskId(1)), p.policy().level(TaskId(1))), (39, 19));
    }

    #[test]
    fn a_preempted_task_keeps_its_quantum_and_the_front_of_its_level() {
        let mut p = ts(&[0, 0], 1);
        p.wake(TaskId(0), 0);
        p.wake(TaskId(1), 0);
        assert_eq!(p.pick(0, 0).unwrap(), Dispatch { task: TaskId(0), slice: Some(600 * MS) });
        p.stop(TaskId(0), 250 * MS, Stop::Preempted, 250 * MS);
        assert_eq!(p.pick(0, 250 * MS).unwrap(), Dispatch { task: TaskId(0), slice: Some(350 * MS) });
        p.stop(TaskId(0), 350 * MS, Stop::SliceEnd, 600 * MS);
        assert_eq!(p.policy().level(TaskId(0)), 19);
        assert_eq!(p.pick(0, 600 * MS).unwrap().task, TaskId(1), "the equal task, now higher");
    }

    #[test]
    fn a_slice_run_to_its_end_uses_the_quantum_up_whatever_was_billed() {
        let mut p = ts(&[0], 1);
        p.wake(TaskId(0), 0);
        let d = p.pick(0, 0).unwrap();
        assert_eq!(d.slice, Some(600 * MS));
        // Tick-sampled billing charged 59 ticks of 10 ms for the 600 ms slice.
        p.stop(d.task, 590 * MS, Stop::SliceEnd, 600 * MS);
        assert_eq!(p.policy().level(TaskId(0)), 19);
        assert_eq!(p.pick(0, 600 * MS).unwrap().slice, Some(800 * MS));
    }

    #[test]
    fn the_update_lifts_runnable_and_running_tasks_after_five_seconds_newest_first() {
        let mut p = ts(&[0, 0, 0, 0], 2);
        for i in 0..4 {
            p.wake(TaskId(i), 0);
        }
        assert_eq!(p.pick(0, 0).unwrap().task, TaskId(0));
        assert_eq!(p.pick(1, 0).unwrap().task, TaskId(1));
        p.stop(TaskId(1), 10 * MS, Stop::Blocked, 10 * MS);
        // Task 0 runs on; tasks 2 and 3 wait at 29; task 1 sleeps. dispwait > maxwait 5 first
        // at the sixth update.
        for k in 1..=5 {
            assert!(!p.timer(k * UPDATE), "update {k}");
            assert_eq!(p.counters()[1], ("lifted", 0));
        }
        assert!(p.timer(6 * UPDATE), "the running task is due TSBACKQ");
        assert_eq!(p.counters()[1], ("lifted", 3));
        for t in [0, 2, 3] {
            assert_eq!(p.policy().level(TaskId(t)), 39, "lwait[29], task {t}");
        }
        assert_eq!(p.policy().level(TaskId(1)), 29, "a sleeping task is not counted");
        // Lifted newest first: 3 then 2; the running task joins behind them with a fresh quantum.
        p.stop(TaskId(0), 100 * MS, Stop::Preempted, 6 * UPDATE);
        let order: Vec<(u32, Option<Nanos>)> = (0..3)
            .map(|_| {
                let d = p.pick(0, 6 * UPDATE).unwrap();
                p.stop(d.task, 0, Stop::Blocked, 6 * UPDATE);
                (d.task.0, d.slice)
            })
            .collect();
        let q = Some(400 * MS);
        assert_eq!(order, vec![(3, q), (2, q), (0, q)]);
    }

    #[test]
    fn nice_and_priority_give_the_user_priority() {
        let nice = |n: i8, prio: i32| TaskParams { nice: Some(n), priority: prio, ..Default::default() };
        assert_eq!(user_priority(&nice(19, 0)), -19);
        assert_eq!(user_priority(&nice(-20, 0)), 20);
        assert_eq!(user_priority(&nice(5, 20)), -5, "nice wins over priority");
        assert_eq!(user_priority(&params(30)), 20, "clamped to TSMAXUPRI");
        assert_eq!(user_priority(&params(-30)), -20);
        let mut p = ts(&[], 1);
        p.admit(TaskId(0), &nice(19, 0), 0);
        p.admit(TaskId(1), &nice(-20, 0), 0);
        p.admit(TaskId(2), &params(-10), 0);
        let levels: Vec<u8> = (0..3).map(|i| p.policy().level(TaskId(i))).collect();
        assert_eq!(levels, vec![10, 49, 19]);
    }

    #[test]
    fn a_new_user_priority_moves_a_queued_task_to_the_back_with_a_fresh_quantum() {
        let mut p = ts(&[0, 0, 10], 1);
        for i in 0..3 {
            p.wake(TaskId(i), 0);
        }
        // Task 2 at 39 runs first; tasks 0 and 1 wait at 29.
        assert_eq!(p.pick(0, 0).unwrap().task, TaskId(2));
        p.stop(TaskId(2), 100 * MS, Stop::Preempted, 100 * MS);
        // Task 0 to +10: level 39, behind task 2 (front of 39).
        p.set_params(TaskId(0), &params(10), 100 * MS);
        assert_eq!(p.policy().level(TaskId(0)), 39);
        assert_eq!(p.pick(0, 100 * MS).unwrap(), Dispatch { task: TaskId(2), slice: Some(300 * MS) });
        p.stop(TaskId(2), 0, Stop::Blocked, 100 * MS);
        assert_eq!(p.pick(0, 100 * MS).unwrap(), Dispatch { task: TaskId(0), slice: Some(400 * MS) });
        p.stop(TaskId(0), 0, Stop::Blocked, 100 * MS);
        // A task at the kernel-mode level stays there; its user level is recomputed.
        p.wake(TaskId(2), 100 * MS);
        p.set_params(TaskId(2), &params(-20), 100 * MS);
        assert_eq!((p.policy().level(TaskId(2)), p.policy().umdpri(TaskId(2))), (KERNEL_LEVEL, 9));
        assert_eq!(p.pick(0, 100 * MS).unwrap().task, TaskId(2), "ahead of task 1 at 29");
        assert_eq!(p.policy().level(TaskId(2)), 19, "slpret[29] = 39, + upri -20");
    }

    #[test]
    fn exit_and_yield_keep_the_queues_right() {
        let mut p = ts(&[0, 0, 0], 2);
        for i in 0..3 {
            p.wake(TaskId(i), 0);
        }
        p.exit(TaskId(0), 0);
        let d = p.pick(0, 0).unwrap();
        assert_eq!(d.task, TaskId(1), "an exited task is never picked");
        p.stop(d.task, 5 * MS, Stop::Yielded, 5 * MS);
        assert_eq!(p.pick(0, 5 * MS).unwrap().task, TaskId(2), "a yielding task goes behind");
        assert_eq!(p.pick(1, 5 * MS).unwrap(), Dispatch { task: TaskId(1), slice: Some(595 * MS) });
    }
}
