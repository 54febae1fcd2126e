//! Linux 2.4's scheduler: epochs of per-task tick counters and the `goodness()` walk of one global
//! run queue, with `SCHED_FIFO` and `SCHED_RR` above, global on N CPUs as the kernel was.
//!
//! **Specification.** `kernel/sched.c` of Linux 2.4.17/2.4.18 (`schedule()`, `goodness()`,
//! `preemption_goodness()`, `reschedule_idle()`, `sys_sched_yield()`, `setscheduler()`, the
//! `NICE_TO_TICKS` macro) and `update_process_times()` of `kernel/timer.c`, read in a 2.4.17 tree
//! to learn the rules (nothing is copied). B. Davda's patch against 2.4.19 (posted for 2.4.20)
//! shows the same run queue order, `setscheduler` and tick as 2.4.17, so 2.4.18, between them, has
//! them too; later 2.4 releases took that patch (a woken task at the tail of the queue, no
//! reschedule of `SCHED_FIFO` at the tick). (Early 2.4, as 2.4.0, preempted only when `preemption_goodness > 1`; 2.4.17 when it
//! is above 0.)
//!
//! **Ticks.** `HZ` is the option `hz` (default 100), a tick lasts 1/`hz` s (10 ms at 100 Hz), and
//! a time slice in ticks is `NICE_TO_TICKS(nice) = TICK_SCALE(20 − nice) + 1`, where `TICK_SCALE`
//! shifts by the kernel's `HZ` band so that a slice stays near 50 ms: `x >> 2` below 200 Hz, `x >> 1`
//! below 400, `x` below 800, `x << 1` below 1600, `x << 2` from 1600 ([`nice_to_ticks`]). At 100 Hz
//! that is 6 ticks (60 ms) at nice 0, 11 (110 ms) at nice −20 and 1 (10 ms) at nice 19; at 1000 Hz
//! 41, 81 and 3 ticks (41, 81 and 3 ms). Option `rr_ticks` gives every `SCHED_RR` task a slice of
//! that many ticks instead (a kernel built with its own quantum: Etsion 2003 §7 ran 20,000 Hz with 2).
//!
//! **State per task.** Its policy: `SCHED_FIFO` or `SCHED_RR` when [`TaskParams::class`] is
//! `"fifo"` or `"rr"` (real time, `rt_priority` = [`TaskParams::priority`] clamped to 1..99), else
//! `SCHED_OTHER` with `nice` = [`TaskParams::nice`] (none: 0). Its `counter`, the ticks it has left
//! in this epoch (a new task starts with `NICE_TO_TICKS(nice)`). The `SCHED_YIELD` flag. The run
//! queue is one list of every runnable task, running ones included, as the kernel's `runqueue_head`.
//!
//! **Rules.**
//! * `goodness(p, cpu)`: −1 if `p` yielded (`SCHED_YIELD`, below); `1000 + rt_priority` for a real-time
//!   task; for `SCHED_OTHER`, 0 when its `counter` is 0, else `counter + 20 − nice`, plus
//!   `PROC_CHANGE_PENALTY` (15, i386's) if `cpu` is the CPU it last ran on (an SMP kernel: only on
//!   2 CPUs or more), plus 1 if its address space is the one `cpu` has loaded (below).
//! * A CPU that needs work (`schedule()`) walks the run queue from its head and takes the first
//!   task of the highest goodness among those not running elsewhere that its affinity allows
//!   there; nothing: it idles. If that highest goodness is 0 (every such task has used its
//!   counter and no real-time task is there), the epoch ends: **every** task, sleeping and
//!   running ones too, gets `counter = counter / 2 + NICE_TO_TICKS(nice)`, and the walk is done
//!   again. A task that slept through epochs carries half its counter into each, so it comes back
//!   with up to 2 × `NICE_TO_TICKS` − 1 ticks: that is 2.4's favour to interactive tasks. Tasks
//!   only yielding (goodness −1) do not end an epoch.
//! * The chosen task runs for its `counter` in ticks (at least one tick: a `SCHED_FIFO` task, or a
//!   yielding one chosen for want of another, keeps running with `counter` 0, and the kernel's tick
//!   reschedules it at every tick). The timer tick takes one from the running task's `counter` and
//!   asks for a decision when it reaches 0 (`update_process_times`), for every policy: 2.4.18 also
//!   reschedules a `SCHED_FIFO` task then, so that an equal-priority `SCHED_FIFO` task ahead of it
//!   in the queue takes the CPU (Davda's patch removed this).
//! * A `SCHED_RR` task whose `counter` is 0 when it leaves its CPU gets `NICE_TO_TICKS(nice)` and
//!   goes to the tail of the queue. A `SCHED_FIFO` or `SCHED_RR` task runs whatever the others'
//!   counters; the real-time tasks are chosen by priority, then queue order.
//! * A woken task is put at the head of the queue and offered a CPU (`reschedule_idle`): its
//!   previous CPU if idle; else the idle CPU that switched tasks longest ago; else the busy CPU
//!   where `preemption_goodness = goodness(woken) − goodness(running)`, both computed there with
//!   that CPU's address space, is largest and above 0 (the first such CPU in number order among
//!   equals). On one CPU the kernel is uniprocessor: preempt when `preemption_goodness > 0`. The
//!   running task always has the address-space bonus and the woken one never has it (each task is
//!   its own process), so a woken `SCHED_OTHER` task preempts one of its class only when its
//!   goodness exceeds the running task's by 2 or more (on N CPUs by 17 or more on another CPU than
//!   its last one, as the running task has the CPU bonus there and the woken one has not). The
//!   running task's counter is what it had at dispatch less the ticks run since.
//! * `sched_yield` (a stop [`Stop::Yielded`]): if another runnable task waits for a CPU, the task
//!   moves to the tail of the queue and, for `SCHED_OTHER`, is marked `SCHED_YIELD`: its goodness is
//!   −1 at the next decision of the CPU it yielded (every waiting task goes first, even one with
//!   `counter` 0), after which the mark is gone. Its counter is kept. A real-time task only moves to
//!   the tail of the queue.
//! * New parameters: a change of policy or real-time priority is `sched_setscheduler`, which moves
//!   the task to the head of the queue; a change of nice alone is `setpriority`, which changes only
//!   its `nice` (the counter it has is kept; its next recalculation uses the new level).
//!
//! **Billing.** The kernel counts ticks; the driver bills nanoseconds ([`Policy::stop`]'s
//! `charged`, exact or tick-sampled). Each task keeps the billed time not yet a whole tick
//! (`partial`): a stop takes `(partial + charged) / tick` ticks from the counter (at most the ticks
//! of the slice) and keeps the remainder, so short runs are charged their ticks on average, as the
//! sampling tick charges them in expectation, without a random draw. The slice given is `counter ×
//! tick − partial`: it ends when the billed time reaches the counter. A slice run to its end
//! ([`Stop::SliceEnd`]) takes its whole ticks and clears `partial`, whatever the billing made of it
//! (tick-sampled billing may charge a tick less), so the run never spins with a counter left.
//!
//! **Address spaces.** `goodness()` adds 1 to a task whose address space (`mm`) is the one the CPU
//! has loaded, `prev->active_mm` (the last task it ran: its idle task keeps the last one borrowed).
//! Every task of a scenario is its own process, so that bonus goes to exactly one task per CPU: the
//! task that ran there last. It is kept, since without it every preemption test would be one point
//! off the kernel's; threads sharing an address space and kernel threads (`!p->mm`, always given the
//! bonus) are left out.
//!
//! **Tie-break.** Equal goodness: the first in queue order. Woken tasks and tasks whose policy or
//! real-time priority changed go to the head; yielding tasks and expired `SCHED_RR` tasks to the
//! tail; a preempted task or one at the end of its slice keeps its place (the kernel never takes
//! a running task off the queue). So among equals the most recently woken task runs first.
//!
//! **On Linux.** hourglass runs its tasks in today's fair class ([`crate::LinuxClass::Fair`]) with
//! the default meaning of shares and priorities ([`FairMeaning::Shares`]): none of the meanings of
//! [`crate::linux`] reads a task's `nice` or `class`, which are what this policy schedules by (one
//! that does, nice from `nice` and `SCHED_FIFO`/`SCHED_RR` from `class`, would belong there).
//!
//! **Left out.** `fork()`'s split of the parent's counter with the child (a task here has no parent:
//! it starts with a full `NICE_TO_TICKS`); the i386 hyper-threading sibling test of
//! `reschedule_idle`; synchronous wake-ups (`wake_up_sync`, which skip `reschedule_idle`); the
//! offer a preempted task gets, on SMP, to take another CPU (`__schedule_tail` calls
//! `reschedule_idle` for it: here it is offered only the idle CPUs, by the core); the Linux 2.4
//! `CONFIG_PREEMPT` patch. A task running on another CPU when an epoch ends gets its new counter at
//! once, but the slice it was given still ends where it would have: the CPU then decides again,
//! where the kernel would let it run on.
//!
//! **Search.** The kernel walked its run queue at every decision, O(runnable tasks); this policy
//! finds the same task in O(log n). Between two epochs' ends a waiting task's goodness changes only
//! by a CPU's two bonuses, so the waiting tasks are kept ordered by their goodness without bonuses,
//! then by place in the run queue (places are numbers: a task put at the head takes one below all,
//! at the tail one above all), and each CPU keeps the same order of the waiting `SCHED_OTHER` tasks
//! that last ran there. The walk's choice is one of three candidates, each taken with its full
//! goodness: the first of all (the best without a bonus), the first of the CPU's own (the best
//! with the CPU bonus alone), and the task whose address space the CPU has. A yield mark or a new
//! counter or nice moves a task in that order; an epoch's end renews every counter, as the kernel
//! did, and orders the waiting tasks again. While a live task (waiting, running or blocked) has a
//! CPU affinity, a CPU may not take every waiting task, and the decision weighs every waiting task
//! instead, as the kernel's walk did. The tests check on random worlds that the candidates and that
//! walk choose alike, and, at every decision of every test, that the kernel's walk of its list
//! (kept beside the ordered sets in tests) chooses alike too.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use crate::linux::FairMeaning;
use crate::registry::{opt, Entry, OptionDoc, Pace, Slice, Walks};
use crate::{
    slot, Availability, CpuId, Dispatch, Nanos, OptReader, Policy, PolicyError, Running, State, Stop, TaskId,
    TaskParams, View,
};

/// The goodness bonus of a task on the CPU it last ran on (`PROC_CHANGE_PENALTY`, i386's).
pub const PROC_CHANGE_PENALTY: i32 = 15;
/// The goodness of every real-time task before its priority is added.
pub const RT_GOODNESS: i32 = 1000;
/// The default `HZ`.
pub const DEFAULT_HZ: u32 = 100;

/// `TICK_SCALE(x)` at `hz`: the shift that keeps a nice-0 slice near 50 ms.
pub fn tick_scale(hz: u32, x: u32) -> u32 {
    match hz {
        0..200 => x >> 2,
        200..400 => x >> 1,
        400..800 => x,
        800..1600 => x << 1,
        _ => x << 2,
    }
}

/// `NICE_TO_TICKS(nice)` at `hz`: the ticks of a time slice (`nice` clamped to −20..19).
pub fn nice_to_ticks(nice: i8, hz: u32) -> u32 {
    let n = i32::from(nice).clamp(-20, 19);
    tick_scale(hz, (20 - n) as u32) + 1
}

/// The length of a tick at `hz` (1 to 1,000,000), in nanoseconds.
pub fn tick_of(hz: u32) -> Nanos {
    1_000_000_000 / Nanos::from(hz.max(1))
}

/// A task's scheduling policy.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Class {
    /// `SCHED_OTHER`.
    #[default]
    Other,
    /// `SCHED_FIFO`.
    Fifo,
    /// `SCHED_RR`.
    Rr,
}

impl Class {
    /// The policy of a task with parameters `p`: `class = "fifo"` or `"rr"`, else `SCHED_OTHER`.
    pub fn of(p: &TaskParams) -> Class {
        match p.class.as_deref() {
            Some("fifo") => Class::Fifo,
            Some("rr") => Class::Rr,
            _ => Class::Other,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Task {
    live: bool,
    class: Class,
    rt_priority: i32,
    nice: i8,
    /// Ticks left in this epoch; for a running task, at its dispatch.
    counter: u32,
    /// Billed time not yet a whole tick.
    partial: Nanos,
    /// The ticks of the slice of its current (or last) dispatch.
    granted: u32,
    /// `SCHED_YIELD`, until the next decision of this CPU.
    yielded_on: Option<CpuId>,
    /// Its place in `runqueue_head` (smaller: nearer the head), while it is there: every runnable
    /// task, running ones included.
    pos: Option<i64>,
    /// Its key in [`Linux24::ready`] (and in [`Linux24::near`] of this CPU, if any), while it waits.
    key: Option<(Key, Option<CpuId>)>,
}

/// A waiting task's place in the goodness order: its goodness before the bonuses of a CPU (higher
/// first), then its place in the run queue (nearer the head first).
type Key = (Reverse<i32>, i64, TaskId);

/// Linux 2.4's scheduler (see the module documentation).
#[derive(Debug)]
pub struct Linux24 {
    hz: u32,
    tick: Nanos,
    /// A `SCHED_RR` task's slice in ticks instead of `NICE_TO_TICKS` (option `rr_ticks`; 0: none).
    rr_ticks: u32,
    /// An SMP kernel (2 CPUs or more): the CPU bonus counts.
    smp: bool,
    tasks: Vec<Task>,
    /// The places the next task put at the head of the run queue, and at its tail, takes.
    head: i64,
    tail: i64,
    /// The waiting tasks (runnable, not running) by [`Key`].
    ready: BTreeSet<Key>,
    /// Per CPU (on SMP): the waiting `SCHED_OTHER` tasks that last ran there, with a counter and no
    /// yield mark (those the CPU's bonus raises), by [`Key`].
    near: Vec<BTreeSet<Key>>,
    /// Per CPU: tasks that yielded there (some may have lost their mark since).
    yielded: Vec<Vec<TaskId>>,
    /// Per CPU: the task whose address space it has loaded (the last it ran).
    mm: Vec<Option<TaskId>>,
    /// Per CPU: when it last switched tasks (`last_schedule`).
    last_schedule: Vec<Nanos>,
    recalculations: u64,
    yields: u64,
    /// Tasks the decisions and epochs have visited ([`Policy::walked`]).
    walked: u64,
    /// In tests: the run queue as the kernel's list (and this policy before its ordered sets), kept
    /// beside them; every decision and stop checks that both give the same answers.
    #[cfg(test)]
    list: Vec<TaskId>,
}

impl Linux24 {
    /// The scheduler at `hz` for `cpus` CPUs.
    pub fn new(hz: u32, cpus: usize) -> Self {
        let hz = hz.max(1);
        Linux24 {
            hz,
            tick: tick_of(hz),
            rr_ticks: 0,
            smp: cpus > 1,
            tasks: Vec::new(),
            head: 0,
            tail: 1,
            ready: BTreeSet::new(),
            near: vec![BTreeSet::new(); cpus],
            yielded: vec![Vec::new(); cpus],
            mm: vec![None; cpus],
            last_schedule: vec![0; cpus],
            recalculations: 0,
            walked: 0,
            yields: 0,
            #[cfg(test)]
            list: Vec::new(),
        }
    }

    /// In tests: what the kernel's walk of its list finds on `cpu` (the highest goodness among the
    /// runnable tasks allowed there, the first in list order that has it) is what this policy found,
    /// and the list's order is the places'.
    #[cfg(test)]
    fn check_list(&self, cpu: CpuId, v: &View, found: (i32, Option<TaskId>)) {
        let mm = self.mm[cpu as usize];
        let (mut c, mut next) = (-1000, None);
        for &p in &self.list {
            if v.state(p) != State::Runnable || !v.allows(p, cpu) {
                continue;
            }
            let w = self.goodness(p, cpu, mm, v.last_cpu(p), self.tasks[p.idx()].counter);
            if w > c {
                (c, next) = (w, Some(p));
            }
        }
        assert_eq!(found, (c, next), "at {} on CPU {cpu}: the list's walk", v.now());
        assert_eq!(self.queue(), self.list, "at {}: the run queue", v.now());
    }

    /// With every `SCHED_RR` task's slice `ticks` ticks instead of `NICE_TO_TICKS(nice)` (0: the
    /// macro's), as a kernel built with its own quantum (Etsion 2003 §7: 2 ticks at 20,000 Hz).
    pub fn with_rr_ticks(mut self, ticks: u32) -> Self {
        self.rr_ticks = ticks;
        self
    }

    /// The slice of task `i` in ticks: `NICE_TO_TICKS(nice)`, or `rr_ticks` for a `SCHED_RR` task.
    fn slice_ticks(&self, i: usize) -> u32 {
        let t = &self.tasks[i];
        if t.class == Class::Rr && self.rr_ticks > 0 {
            self.rr_ticks
        } else {
            nice_to_ticks(t.nice, self.hz)
        }
    }

    /// The counter of `t` (for a running task: at its dispatch, or as an epoch's end left it).
    pub fn counter(&self, t: TaskId) -> u32 {
        self.tasks[t.idx()].counter
    }

    /// How many epochs have ended (counter recalculations).
    pub fn recalculations(&self) -> u64 {
        self.recalculations
    }

    /// The run queue, head first (running tasks included).
    pub fn queue(&self) -> Vec<TaskId> {
        let mut q: Vec<(i64, TaskId)> =
            self.tasks.iter().enumerate().filter_map(|(i, s)| Some((s.pos?, TaskId(i as u32)))).collect();
        q.sort_unstable();
        q.into_iter().map(|(_, t)| t).collect()
    }

    /// Ticks run by task `t` on `cpu` since its dispatch, as the timer would have counted them
    /// (at most its counter).
    fn ticks_run(&self, t: TaskId, cpu: CpuId, v: &View) -> u32 {
        let s = &self.tasks[t.idx()];
        let ran = s.partial.saturating_add(v.now().saturating_sub(v.dispatched_at(cpu)));
        u32::try_from(ran / self.tick).unwrap_or(u32::MAX).min(s.counter)
    }

    /// The counter of `t` now: less the ticks run if it runs.
    fn live_counter(&self, t: TaskId, v: &View) -> u32 {
        match v.state(t) {
            State::Running(cpu) => self.tasks[t.idx()].counter - self.ticks_run(t, cpu, v),
            _ => self.tasks[t.idx()].counter,
        }
    }

    /// `goodness(p, cpu, mm)` with `p`'s counter `counter`, `mm` the task whose address space `cpu`
    /// has, and `last` the CPU `p` last ran on (or runs on).
    fn goodness(&self, p: TaskId, cpu: CpuId, mm: Option<TaskId>, last: Option<CpuId>, counter: u32) -> i32 {
        let w = self.base(p, counter);
        if w <= 0 || self.tasks[p.idx()].class != Class::Other {
            return w;
        }
        let mut bonus = 0;
        if self.smp && last == Some(cpu) {
            bonus += PROC_CHANGE_PENALTY;
        }
        if mm == Some(p) {
            bonus += 1;
        }
        w + bonus
    }

    /// `goodness()` before the bonuses of a CPU: −1 with a yield mark, `1000 + rt_priority` for
    /// real time, 0 with `counter` 0, else `counter + 20 − nice`. The bonuses go only to a
    /// `SCHED_OTHER` task whose base is above 0.
    fn base(&self, p: TaskId, counter: u32) -> i32 {
        let s = &self.tasks[p.idx()];
        if s.yielded_on.is_some() {
            return -1;
        }
        if s.class != Class::Other {
            return RT_GOODNESS + s.rt_priority;
        }
        if counter == 0 {
            return 0;
        }
        i32::try_from(counter).unwrap_or(i32::MAX - 100) + 20 - i32::from(s.nice)
    }

    /// Task `t`, waiting, takes its place in [`Linux24::ready`] (and in its last CPU's
    /// [`Linux24::near`] if that CPU's bonus would raise it).
    fn enter(&mut self, t: TaskId, v: &View) {
        let s = &self.tasks[t.idx()];
        debug_assert!(s.key.is_none() && v.state(t) == State::Runnable);
        let base = self.base(t, s.counter);
        let key = (Reverse(base), s.pos.expect("a waiting task is queued"), t);
        self.ready.insert(key);
        let near = v.last_cpu(t).filter(|_| self.smp && base > 0 && s.class == Class::Other);
        if let Some(c) = near {
            self.near[c as usize].insert(key);
        }
        self.tasks[t.idx()].key = Some((key, near));
    }

    /// Task `t` leaves [`Linux24::ready`] and [`Linux24::near`], if it is there.
    fn leave(&mut self, t: TaskId) {
        if let Some((key, near)) = self.tasks[t.idx()].key.take() {
            self.ready.remove(&key);
            if let Some(c) = near {
                self.near[c as usize].remove(&key);
            }
        }
    }

    /// The goodness or the place of task `t` changed: it takes its new place if it waits.
    fn rekey(&mut self, t: TaskId, v: &View) {
        if self.tasks[t.idx()].key.is_some() {
            self.leave(t);
            self.enter(t, v);
        }
    }

    /// The end of an epoch: every task, `counter = counter / 2 + NICE_TO_TICKS(nice)`.
    fn recalculate(&mut self, v: &View) {
        self.recalculations += 1;
        self.walked += self.tasks.len() as u64;
        for i in 0..self.tasks.len() {
            if !self.tasks[i].live {
                continue;
            }
            let t = TaskId(i as u32);
            let now = self.live_counter(t, v);
            let new = (now >> 1) + self.slice_ticks(i);
            // A running task's counter is kept as at its dispatch: shift it by the change.
            let s = &mut self.tasks[i];
            s.counter = s.counter - now + new;
        }
        // Every waiting task's goodness changed: the waiting tasks take their places again.
        let waiting: Vec<TaskId> = self.ready.iter().map(|k| k.2).collect();
        for t in waiting {
            self.rekey(t, v);
        }
    }

    /// The highest goodness on `cpu` among the waiting tasks it may run and the first task in queue
    /// order that has it (goodness −1000 and none if there is none), by weighing every waiting task.
    fn walk(&mut self, cpu: CpuId, v: &View) -> (i32, Option<TaskId>) {
        self.walked += self.ready.len() as u64;
        self.weigh(cpu, v, self.ready.iter().map(|k| k.2).filter(|&p| v.allows(p, cpu)))
    }

    /// What [`Linux24::walk`] finds, when every task may run on every CPU, from three candidates:
    /// the first waiting task by goodness before bonuses, the first of those the CPU's bonus raises,
    /// and the task whose address space the CPU has. The walk's choice is one of them: a task
    /// without a bonus is at best the first, one with the CPU's bonus alone at best the second.
    fn best(&mut self, cpu: CpuId, v: &View) -> (i32, Option<TaskId>) {
        let mine = self.mm[cpu as usize].filter(|&m| self.tasks[m.idx()].key.is_some());
        let near = self.near[cpu as usize].first().map(|k| k.2);
        let candidates = [self.ready.first().map(|k| k.2), near, mine];
        self.walked += candidates.iter().flatten().count() as u64;
        self.weigh(cpu, v, candidates.into_iter().flatten())
    }

    /// The highest goodness on `cpu` among the waiting tasks `among`, and the first of them in
    /// queue order that has it (goodness −1000 and none if there is none).
    fn weigh(&self, cpu: CpuId, v: &View, among: impl Iterator<Item = TaskId>) -> (i32, Option<TaskId>) {
        let mm = self.mm[cpu as usize];
        let mut best: Option<(i32, i64, TaskId)> = None;
        for p in among {
            let s = &self.tasks[p.idx()];
            let w = self.goodness(p, cpu, mm, v.last_cpu(p), s.counter);
            let pos = s.pos.expect("a waiting task is queued");
            if best.is_none_or(|(c, at, _)| w > c || (w == c && pos < at)) {
                best = Some((w, pos, p));
            }
        }
        best.map_or((-1000, None), |(c, _, p)| (c, Some(p)))
    }

    /// Task `t` leaves the run queue (and the goodness order).
    fn remove(&mut self, t: TaskId) {
        self.leave(t);
        self.tasks[t.idx()].pos = None;
        #[cfg(test)]
        self.list.retain(|&x| x != t);
    }

    /// Task `t` goes to the tail of the run queue (it must not wait in the goodness order).
    fn move_last(&mut self, t: TaskId) {
        self.remove(t);
        let pos = self.tail;
        self.tail += 1;
        self.tasks[t.idx()].pos = Some(pos);
        #[cfg(test)]
        self.list.push(t);
    }

    /// Task `t` goes to the head of the run queue (it must not wait in the goodness order).
    fn move_first(&mut self, t: TaskId) {
        self.remove(t);
        let pos = self.head;
        self.head -= 1;
        self.tasks[t.idx()].pos = Some(pos);
        #[cfg(test)]
        self.list.insert(0, t);
    }

    fn set(&mut self, t: TaskId, p: &TaskParams) {
        let s = &mut self.tasks[t.idx()];
        s.class = Class::of(p);
        s.rt_priority = if s.class == Class::Other { 0 } else { p.priority.clamp(1, 99) };
        s.nice = p.nice.unwrap_or(0).clamp(-20, 19);
    }
}

impl Policy for Linux24 {
    fn admit(&mut self, t: TaskId, p: &TaskParams, _v: &View) {
        *slot(&mut self.tasks, t) = Task { live: true, ..Default::default() };
        self.set(t, p);
        self.tasks[t.idx()].counter = self.slice_ticks(t.idx());
    }

    fn exit(&mut self, t: TaskId, _v: &View) {
        self.remove(t);
        self.tasks[t.idx()].yielded_on = None;
        self.tasks[t.idx()].live = false;
        for m in &mut self.mm {
            if *m == Some(t) {
                *m = None;
            }
        }
    }

    fn wake(&mut self, t: TaskId, v: &View) {
        // add_to_runqueue: at the head (2.4.19 and before).
        self.tasks[t.idx()].yielded_on = None;
        self.move_first(t);
        self.enter(t, v);
    }

    fn stop(&mut self, t: TaskId, cpu: CpuId, charged: Nanos, why: Stop, v: &View) {
        let tick = self.tick;
        // Another runnable task waits (every runnable task is queued; `t` counts as one unless it
        // blocked).
        let pending = v.runnable_count() > usize::from(why != Stop::Blocked);
        #[cfg(test)]
        assert_eq!(pending, self.list.iter().any(|&x| x != t && v.state(x) == State::Runnable), "pending");
        self.last_schedule[cpu as usize] = v.now();
        let s = &mut self.tasks[t.idx()];
        let (ticks, partial) = if why == Stop::SliceEnd {
            (s.granted, 0)
        } else {
            let total = s.partial.saturating_add(charged);
            match u32::try_from(total / tick) {
                Ok(k) if k < s.granted => (k, total - Nanos::from(k) * tick),
                _ => (s.granted, 0),
            }
        };
        s.counter = s.counter.saturating_sub(ticks);
        s.partial = partial;
        let class = s.class;
        // schedule(): an exhausted SCHED_RR task gets a new slice and goes last.
        if class == Class::Rr && s.counter == 0 {
            self.tasks[t.idx()].counter = self.slice_ticks(t.idx());
            self.move_last(t);
        }
        match why {
            Stop::Blocked => self.remove(t),
            Stop::Yielded if pending => {
                self.yields += 1;
                if class == Class::Other {
                    self.tasks[t.idx()].yielded_on = Some(cpu);
                    self.yielded[cpu as usize].push(t);
                }
                self.move_last(t);
            }
            Stop::Yielded | Stop::Preempted | Stop::SliceEnd => {}
        }
        if why != Stop::Blocked {
            self.enter(t, v);
        }
    }

    fn select_cpu(&self, _t: TaskId, prev: Option<CpuId>, idle: &[CpuId], _v: &View) -> CpuId {
        // reschedule_idle: the previous CPU if idle, else the one idle longest.
        if let Some(p) = prev.filter(|p| idle.contains(p)) {
            return p;
        }
        let mut best = idle[0];
        for &c in idle {
            if self.last_schedule[c as usize] < self.last_schedule[best as usize] {
                best = c;
            }
        }
        best
    }

    fn preempt_for(&self, woken: TaskId, _prev: Option<CpuId>, running: &Running, v: &View) -> Option<CpuId> {
        let last = v.last_cpu(woken);
        let counter = self.tasks[woken.idx()].counter;
        let mut best = None;
        let mut max = 0;
        for &(cpu, tsk) in running {
            let mm = Some(tsk);
            let p = self.goodness(woken, cpu, mm, last, counter)
                - self.goodness(tsk, cpu, mm, Some(cpu), self.live_counter(tsk, v));
            if p > max {
                max = p;
                best = Some(cpu);
            }
        }
        best
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        let next = loop {
            // With a CPU affinity somewhere, the queue is walked as the kernel walked it; else the
            // best of the three candidates.
            let (c, next) = if v.any_affine() { self.walk(cpu, v) } else { self.best(cpu, v) };
            #[cfg(test)]
            self.check_list(cpu, v, (c, next));
            if c == 0 {
                self.recalculate(v);
                continue;
            }
            break next;
        };
        // __schedule_tail: the yield mark lasts one decision of its CPU.
        let mut marked = std::mem::take(&mut self.yielded[cpu as usize]);
        self.walked += marked.len() as u64;
        for y in marked.drain(..) {
            if self.tasks[y.idx()].yielded_on == Some(cpu) {
                self.tasks[y.idx()].yielded_on = None;
                self.rekey(y, v);
            }
        }
        self.yielded[cpu as usize] = marked; // emptied, its memory kept
        let t = next?;
        self.leave(t);
        self.mm[cpu as usize] = Some(t);
        self.last_schedule[cpu as usize] = v.now();
        let tick = self.tick;
        let s = &mut self.tasks[t.idx()];
        s.yielded_on = None;
        s.granted = s.counter.max(1);
        let slice = (Nanos::from(s.granted).saturating_mul(tick) - s.partial).max(1);
        Some(Dispatch { task: t, slice: Some(slice) })
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        let (class, rt) = (self.tasks[t.idx()].class, self.tasks[t.idx()].rt_priority);
        self.set(t, p);
        let s = &self.tasks[t.idx()];
        let setscheduler = s.class != class || s.rt_priority != rt;
        let waits = s.key.is_some();
        if setscheduler && v.state(t) != State::Blocked {
            self.move_first(t);
        }
        if waits {
            self.leave(t);
            self.enter(t, v);
        }
    }

    fn availability(&self, t: TaskId, v: &View) -> Availability {
        // Real-time tasks by priority; SCHED_OTHER tasks share what is left by their slices.
        let rank = |x: TaskId| {
            let s = &self.tasks[x.idx()];
            if s.class == Class::Other {
                0
            } else {
                RT_GOODNESS + s.rt_priority
            }
        };
        let me = &self.tasks[t.idx()];
        if me.class != Class::Other {
            let same = v.live().filter(|&x| rank(x) == rank(t)).count() as u64;
            return v.availability_by_rank(t, rank, 1, same);
        }
        let slices: u64 = v
            .live()
            .filter(|&x| rank(x) == 0)
            .map(|x| u64::from(nice_to_ticks(self.tasks[x.idx()].nice, self.hz)))
            .sum();
        v.availability_by_rank(t, rank, u64::from(nice_to_ticks(me.nice, self.hz)), slices)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("recalculations", self.recalculations), ("yields", self.yields)]
    }

    fn walked(&self) -> u64 {
        self.walked
    }
}

/// The options of `linux-2.4`.
const OPTIONS: &[OptionDoc] = &[
    opt("hz", "100", "the kernel's HZ: ticks per second; a tick is 1/hz, slices are NICE_TO_TICKS ticks"),
    opt(
        "rr_ticks",
        "0",
        "a SCHED_RR task's slice in ticks instead of NICE_TO_TICKS (0: the macro's); Etsion's 20,000 Hz kernel: 2",
    ),
];

fn read_rr_ticks(o: &mut OptReader<'_>) -> Result<u32, PolicyError> {
    Ok(o.int("rr_ticks", 0, 0, 1_000_000)? as u32)
}

fn read_hz(o: &mut OptReader<'_>) -> Result<u32, PolicyError> {
    Ok(o.int("hz", i64::from(DEFAULT_HZ), 1, 1_000_000)? as u32)
}

/// The registry's entry of `linux-2.4`.
pub const ENTRY: Entry = Entry::new("linux-2.4", "linux24.rs", |o, cpus| {
    Ok(Box::new(Linux24::new(read_hz(o)?, cpus).with_rr_ticks(read_rr_ticks(o)?)))
})
.about("Linux 2.4's epoch scheduler: goodness = counter + 20 − nice, counters renewed when the runnable ones run out; SCHED_FIFO/RR above")
.options(OPTIONS)
.fair(FairMeaning::Shares)
.classes(&["fifo", "rr", "other"])
.pace(|o, _| {
    // It decides at least every tick a task runs on (a nice-19 slice at 100 Hz is one tick). Its
    // decisions weigh three candidates; they weigh every waiting task only while a live task has a
    // CPU affinity, and count what they weigh.
    let hz = read_hz(o)?;
    Ok(Pace { slice: Some(Slice::of(o, "hz", tick_of(hz))), timer: None, walks: Walks::Nothing })
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{test_core, Core, MS};

    fn other(nice: i8) -> TaskParams {
        TaskParams { nice: Some(nice), ..Default::default() }
    }

    fn rt(class: &str, priority: i32) -> TaskParams {
        TaskParams { class: Some(class.into()), priority, ..Default::default() }
    }

    /// 2.4 at 100 Hz on `cpus` CPUs, with tasks 0, 1, ... of these parameters admitted (asleep).
    fn lx(cpus: usize, tasks: &[TaskParams]) -> Core<Linux24> {
        let mut p = test_core(Linux24::new(100, cpus), cpus);
        for (i, t) in tasks.iter().enumerate() {
            p.admit(TaskId(i as u32), t, 0);
        }
        p
    }

    fn wake(p: &mut Core<Linux24>, tasks: &[u32], now: Nanos) {
        for &t in tasks {
            p.wake(TaskId(t), now);
        }
    }

    /// Runs the candidates' choice and the walk of the waiting tasks (as with an affinity) side by
    /// side on random worlds of `cpus` CPUs at `hz` (SCHED_OTHER tasks of every nice, SCHED_FIFO and
    /// SCHED_RR ones, waking, stopping for every reason, yielding, changing policy and nice while
    /// they wait or run, leaving, and admitted again under the same id), and checks that both pick
    /// the same task at every decision; each core also checks every decision against the kernel's
    /// walk of its list (`check_list`). With `affine`, a quarter of the tasks may run on one CPU
    /// only, and both cores walk.
    fn candidates_and_walk_pick_alike(seed: u64, cpus: usize, hz: u32, affine: bool) {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let n = 40u32;
        let mut cores = [test_core(Linux24::new(hz, cpus), cpus), test_core(Linux24::new(hz, cpus), cpus)];
        // The second core walks: it has a task with an affinity (to every CPU), which never wakes.
        let everywhere = TaskParams { cpus: Some((0..cpus as CpuId).collect()), ..Default::default() };
        cores[1].admit(TaskId(n), &everywhere, 0);
        let params = |rng: &mut rand_pcg::Pcg64| {
            let mut p = match rng.random_range(0..8) {
                0 => rt("fifo", rng.random_range(1..4)),
                1 => rt("rr", rng.random_range(1..4)),
                _ => other(rng.random_range(-20..20)),
            };
            p.cpus =
                (affine && rng.random_range(0..4) == 0).then(|| vec![rng.random_range(0..cpus) as CpuId]);
            p
        };
        for t in 0..n {
            let p = params(&mut rng);
            for c in &mut cores {
                c.admit(TaskId(t), &p, 0);
            }
        }
        let tick = tick_of(hz);
        let (mut running, mut queued, mut gone) =
            (vec![None::<(TaskId, Nanos)>; cpus], vec![false; n as usize], vec![false; n as usize]);
        let (mut now, mut picks, mut epochs_seen) = (0, 0, 0);
        for _ in 0..30_000 {
            now += rng.random_range(1..tick);
            let t = TaskId(rng.random_range(0..n));
            let busy = running.iter().flatten().any(|&(x, _)| x == t);
            match rng.random_range(0..12) {
                0..=3 if !busy && !queued[t.idx()] && !gone[t.idx()] => {
                    queued[t.idx()] = true;
                    for c in &mut cores {
                        c.wake(t, now);
                    }
                }
                4 if !gone[t.idx()] => {
                    let p = params(&mut rng);
                    for c in &mut cores {
                        c.set_params(t, &p, now);
                    }
                }
                5 if !busy && !gone[t.idx()] && rng.random_range(0..20) == 0 => {
                    gone[t.idx()] = true;
                    queued[t.idx()] = false;
                    for c in &mut cores {
                        c.exit(t, now);
                    }
                }
                6 if gone[t.idx()] => {
                    gone[t.idx()] = false;
                    let p = params(&mut rng);
                    for c in &mut cores {
                        c.admit(t, &p, now);
                    }
                }
                _ => {
                    let cpu = rng.random_range(0..cpus);
                    if let Some((r, slice)) = running[cpu].take() {
                        let why = [Stop::SliceEnd, Stop::Preempted, Stop::Yielded, Stop::Blocked]
                            [rng.random_range(0..4)];
                        let charged = if why == Stop::SliceEnd { slice } else { rng.random_range(1..=slice) };
                        queued[r.idx()] = why != Stop::Blocked;
                        for c in &mut cores {
                            c.stop(r, charged, why, now);
                        }
                    } else {
                        let [a, b] = &mut cores;
                        let (x, y) = (a.pick(cpu as CpuId, now), b.pick(cpu as CpuId, now));
                        assert_eq!(x, y, "seed {seed}, decision {picks}: candidates and walk");
                        picks += 1;
                        running[cpu] = x.map(|d| (d.task, d.slice.unwrap()));
                        epochs_seen = a.policy().recalculations();
                        assert_eq!(epochs_seen, b.policy().recalculations(), "seed {seed}: epochs");
                        assert_eq!(a.policy().queue(), b.policy().queue()[..], "seed {seed}: run queue");
                        // The goodness order holds exactly the waiting tasks (the walk weighs those).
                        let mut ready: Vec<TaskId> = a.policy().ready.iter().map(|k| k.2).collect();
                        ready.sort_unstable();
                        let waiting: Vec<TaskId> =
                            (0..n).map(TaskId).filter(|&t| a.view().state(t) == State::Runnable).collect();
                        assert_eq!(ready, waiting, "seed {seed}, decision {picks}: waiting tasks");
                    }
                }
            }
        }
        let (best, walk) = (cores[0].policy(), cores[1].policy());
        assert!(
            picks > 2000 && epochs_seen > 20 && best.yields > 100,
            "{picks} decisions, {epochs_seen} epochs"
        );
        // Both walk every task at an epoch's end; between them, the candidates are 3 at most.
        let between = |p: &Linux24| p.walked - p.recalculations * p.tasks.len() as u64;
        assert!(
            affine || between(best) < between(walk) / 2,
            "the candidates walk less: {} {}",
            between(best),
            between(walk)
        );
    }

    #[test]
    fn the_candidates_pick_what_the_walk_of_the_run_queue_picks() {
        for seed in 0..6 {
            candidates_and_walk_pick_alike(
                seed,
                1 + (seed % 3) as usize,
                [100, 1000][(seed % 2) as usize],
                false,
            );
        }
        for seed in 6..9 {
            candidates_and_walk_pick_alike(seed, 2 + (seed % 2) as usize, 100, true);
        }
    }

    #[test]
    fn nice_to_ticks_is_the_macro_in_every_hz_band() {
        // (20 - nice) scaled by the HZ band, plus 1: nice 0, -20, 19.
        let at = |hz| (nice_to_ticks(0, hz), nice_to_ticks(-20, hz), nice_to_ticks(19, hz));
        assert_eq!(at(100), (6, 11, 1), "20>>2+1, 40>>2+1, 1>>2+1");
        assert_eq!(at(250), (11, 21, 1));
        assert_eq!(at(500), (21, 41, 2));
        assert_eq!(at(1000), (41, 81, 3));
        assert_eq!(at(2000), (81, 161, 5));
        assert_eq!((tick_of(100), tick_of(1000)), (10 * MS, MS));
        assert_eq!(nice_to_ticks(-128, 100), 11, "clamped to -20");
    }

    #[test]
    fn a_dispatch_runs_the_counter_in_ticks_at_nice_0_minus_20_and_19() {
        for (nice, ms) in [(0, 60), (-20, 110), (19, 10)] {
            let mut p = lx(1, &[other(nice)]);
            wake(&mut p, &[0], 0);
            assert_eq!(p.pick(0, 0).unwrap().slice, Some(ms * MS), "nice {nice}");
        }
        // At hz = 1000, built by name: 41 ticks of 1 ms.
        let opts: crate::Options = [("hz".to_string(), crate::OptValue::Int(1000))].into();
        let mut c = crate::build("linux-2.4", &opts, 1).unwrap();
        c.admit(TaskId(0), &TaskParams::default(), 0);
        c.wake(TaskId(0), 0);
        assert_eq!(c.pick(0, 0).unwrap().slice, Some(41 * MS));
        let pace = crate::pace("linux-2.4", &opts, 1).unwrap();
        assert_eq!(pace.slice, Some(Slice { nanos: MS, key: Some("hz") }));
    }

    #[test]
    fn the_highest_goodness_runs_counter_plus_20_minus_nice() {
        // nice 0: 6 + 20 = 26; nice 5: (15>>2)+1 = 4, 4 + 15 = 19; nice -5: (25>>2)+1 = 7, 7 + 25 = 32.
        let mut p = lx(1, &[other(0), other(5), other(-5)]);
        wake(&mut p, &[0, 1, 2], 0);
        let order: Vec<u32> = (0..3)
            .map(|_| {
                let d = p.pick(0, 0).unwrap();
                p.stop(d.task, 0, Stop::Blocked, 0);
                d.task.0
            })
            .collect();
        assert_eq!(order, vec![2, 0, 1]);
        // The counter counts as much as nice: task 0 with 1 tick left (1 + 20 = 21) against task 1
        // with its 4 (4 + 15 = 19), and task 2 with 2 left (2 + 25 = 27) above both.
        p.policy_mut().tasks[0].counter = 1;
        p.policy_mut().tasks[2].counter = 2;
        wake(&mut p, &[0, 1, 2], 0);
        let first = p.pick(0, 0).unwrap();
        assert_eq!(first, Dispatch { task: TaskId(2), slice: Some(20 * MS) });
        p.stop(first.task, 0, Stop::Blocked, 0);
        assert_eq!(p.pick(0, 0).unwrap().task, TaskId(0));
    }

    #[test]
    fn equal_goodness_goes_to_the_most_recently_woken() {
        let mut p = lx(1, &[other(0), other(0), other(0)]);
        wake(&mut p, &[0, 1, 2], 0);
        assert_eq!(p.policy().queue(), &[TaskId(2), TaskId(1), TaskId(0)], "woken at the head");
        let order: Vec<u32> = (0..3)
            .map(|_| {
                let d = p.pick(0, 0).unwrap();
                p.stop(d.task, 0, Stop::Blocked, 0);
                d.task.0
            })
            .collect();
        assert_eq!(order, vec![2, 1, 0]);
    }

    #[test]
    fn an_epoch_ends_only_when_every_runnable_counter_is_0() {
        let mut p = lx(1, &[other(0), other(0)]);
        wake(&mut p, &[0, 1], 0);
        let d = p.pick(0, 0).unwrap();
        assert_eq!(d, Dispatch { task: TaskId(1), slice: Some(60 * MS) });
        p.stop(TaskId(1), 60 * MS, Stop::SliceEnd, 60 * MS);
        // Task 1 is out of ticks, task 0 has 6: no recalculation, task 0 runs.
        assert_eq!(p.pick(0, 60 * MS).unwrap().task, TaskId(0));
        assert_eq!((p.policy().counter(TaskId(1)), p.policy().recalculations()), (0, 0));
        p.stop(TaskId(0), 60 * MS, Stop::SliceEnd, 120 * MS);
        // Both at 0: every counter becomes 0/2 + 6; task 0's address space is loaded: 27 against 26.
        let d = p.pick(0, 120 * MS).unwrap();
        assert_eq!(d, Dispatch { task: TaskId(0), slice: Some(60 * MS) });
        assert_eq!(p.policy().recalculations(), 1);
        assert_eq!(p.policy().counter(TaskId(1)), 6);
    }

    #[test]
    fn a_recalculation_renews_tasks_running_elsewhere_and_leaves_their_slice() {
        // Task 0 runs on CPU 0; task 1 on CPU 1 runs out. CPU 1 then sees only counters of 0:
        // the epoch ends though task 0 has ticks left on CPU 0 (2.4's rule, per CPU).
        let mut p = lx(2, &[other(0), other(0)]);
        wake(&mut p, &[0], 0);
        assert_eq!(p.pick(0, 0).unwrap().task, TaskId(0));
        wake(&mut p, &[1], 0);
        assert_eq!(p.pick(1, 0).unwrap().task, TaskId(1));
        p.stop(TaskId(1), 60 * MS, Stop::SliceEnd, 20 * MS);
        assert_eq!(p.pick(1, 20 * MS).unwrap().task, TaskId(1));
        assert_eq!(p.policy().recalculations(), 1);
        // Task 0 had run 2 ticks: 4 left, now 4/2 + 6 = 8; its slice ends at 60 ms, 4 ticks later.
        p.stop(TaskId(0), 60 * MS, Stop::SliceEnd, 60 * MS);
        assert_eq!(p.policy().counter(TaskId(0)), 4);
    }

    #[test]
    fn a_sleeper_carries_half_its_counter_up_to_twice_a_slice_and_preempts_on_waking() {
        // A hog and a sleeper at nice 0. Each epoch the sleeper keeps half: 6 -> 9 -> 10 -> 11 -> 11
        // (c = c/2 + 6 settles at 2 * 6 - 1).
        let mut p = lx(1, &[other(0), other(0)]);
        wake(&mut p, &[0], 0);
        let mut now = 0;
        let mut seen = Vec::new();
        for _ in 0..4 {
            let d = p.pick(0, now).unwrap();
            assert_eq!(d.task, TaskId(0));
            now += d.slice.unwrap();
            p.stop(TaskId(0), d.slice.unwrap(), Stop::SliceEnd, now);
            seen.push(p.policy().counter(TaskId(1)));
        }
        assert_eq!(seen, vec![6, 9, 10, 11]);
        let d = p.pick(0, now).unwrap();
        assert_eq!(p.policy().counter(TaskId(1)), 11);
        assert_eq!(d.slice, Some(60 * MS));
        // The hog (6 + 20 + 1 for its address space = 27) against the sleeper (11 + 20 = 31).
        p.wake(TaskId(1), now);
        assert_eq!(p.policy().preempt_for(TaskId(1), Some(0), &[(0, TaskId(0))], p.view()), Some(0));
        p.stop(TaskId(0), 0, Stop::Preempted, now);
        assert_eq!(p.pick(0, now).unwrap(), Dispatch { task: TaskId(1), slice: Some(110 * MS) });
    }

    #[test]
    fn a_woken_task_preempts_when_its_goodness_exceeds_by_more_than_the_address_space_bonus() {
        // Task 0 runs (nice 0, 6 ticks): 6 + 20 = 26, plus 1 for its address space = 27. Woken
        // nice -1 and -2 have 6 ticks too: 27 and 28. preemption_goodness = 0 and 1: only nice -2,
        // 2 points above the running task's own goodness, preempts.
        let mut p = lx(1, &[other(0), other(-1), other(-2), other(0)]);
        wake(&mut p, &[0], 0);
        assert_eq!(p.pick(0, 0).unwrap().task, TaskId(0));
        let ask =
            |p: &Core<Linux24>, w: u32| p.policy().preempt_for(TaskId(w), None, &[(0, TaskId(0))], p.view());
        assert_eq!((ask(&p, 1), ask(&p, 2)), (None, Some(0)));
        // The running task's counter falls with the ticks it runs: a woken nice-0 task (26) against
        // it after one tick (5 + 20 + 1 = 26): no; after two (25): yes.
        assert_eq!(ask(&p, 3), None, "26 against 27");
        p.advance_to(19 * MS);
        assert_eq!(ask(&p, 3), None, "1 tick run: 26 against 26");
        p.advance_to(20 * MS);
        assert_eq!(ask(&p, 3), Some(0), "2 ticks run: 26 against 25");
    }

    #[test]
    fn on_n_cpus_the_last_cpu_gets_15_and_a_woken_task_needs_17_elsewhere() {
        // Task 0 runs 2 ticks on CPU 1 and is preempted (4 left); task 1 is fresh (6).
        let mut p = lx(2, &[other(0), other(0)]);
        wake(&mut p, &[0], 0);
        assert_eq!(p.pick(1, 0).unwrap().task, TaskId(0));
        p.stop(TaskId(0), 20 * MS, Stop::Preempted, 20 * MS);
        wake(&mut p, &[1], 20 * MS);
        // CPU 1: task 0 is 4 + 15 + 1 + 20 = 40 against 26. CPU 0: 24 against 26.
        assert_eq!(p.pick(1, 20 * MS).unwrap().task, TaskId(0));
        assert_eq!(p.pick(0, 20 * MS).unwrap().task, TaskId(1));
        // On one CPU (no bonus of 15) task 0 would be 4 + 1 + 20 = 25: task 1 first.
        let mut u = lx(1, &[other(0), other(0)]);
        wake(&mut u, &[0], 0);
        u.pick(0, 0);
        u.stop(TaskId(0), 20 * MS, Stop::Preempted, 20 * MS);
        wake(&mut u, &[1], 20 * MS);
        assert_eq!(u.pick(0, 20 * MS).unwrap().task, TaskId(1));

        // Preemption on 2 CPUs: tasks 1 and 2 run fresh on CPUs 0 and 1 (6 + 15 + 1 + 20 = 42);
        // task 0 last ran on CPU 1. At nice -1 it is 6 + 15 + 21 = 42 there: no; at nice -2, 43:
        // CPU 1. On CPU 0 it would need 17 points more than the running task.
        let mut p = lx(2, &[other(-1), other(0), other(0)]);
        wake(&mut p, &[0], 0);
        assert_eq!(p.pick(1, 0).unwrap().task, TaskId(0));
        p.stop(TaskId(0), 0, Stop::Blocked, 0);
        wake(&mut p, &[1, 2], 0);
        let a = p.pick(0, 0).unwrap().task;
        let b = p.pick(1, 0).unwrap().task;
        let running = [(0, a), (1, b)];
        assert_eq!(p.policy().preempt_for(TaskId(0), Some(1), &running, p.view()), None);
        p.set_params(TaskId(0), &other(-2), 0);
        assert_eq!(p.policy().preempt_for(TaskId(0), Some(1), &running, p.view()), Some(1));
        // With 17 nice levels more (nice -17: (37>>2)+1 = 10 ticks, 10 + 37 = 47 against 42 on
        // CPU 0, and 62 against 42 on CPU 1) the larger difference wins: CPU 1.
        p.set_params(TaskId(0), &other(-17), 0);
        assert_eq!(p.policy().preempt_for(TaskId(0), Some(1), &running, p.view()), Some(1));
    }

    #[test]
    fn a_woken_task_takes_its_last_cpu_if_idle_else_the_one_idle_longest() {
        let mut p = lx(3, &[other(0), other(0), other(0)]);
        wake(&mut p, &[0, 1], 0);
        assert_eq!(p.pick(0, 0).unwrap().task, TaskId(1));
        assert_eq!(p.pick(2, 0).unwrap().task, TaskId(0));
        p.stop(TaskId(0), MS, Stop::Blocked, MS); // CPU 2 switched at 1 ms
        p.stop(TaskId(1), 5 * MS, Stop::Blocked, 5 * MS); // CPU 0 at 5 ms
        let v = p.view();
        assert_eq!(p.policy().select_cpu(TaskId(2), None, &[0, 2], v), 2);
        assert_eq!(p.policy().select_cpu(TaskId(2), Some(0), &[0, 2], v), 0);
        assert_eq!(p.policy().select_cpu(TaskId(2), None, &[0, 1, 2], v), 1, "never switched");
    }

    #[test]
    fn rr_ticks_sets_the_rr_slice_and_leaves_the_others_at_nice_to_ticks() {
        // Etsion's 20,000 Hz kernel: SCHED_RR quanta of 2 ticks (100 us); SCHED_OTHER keeps the macro's.
        let mut p = test_core(Linux24::new(20_000, 1).with_rr_ticks(2), 1);
        for (i, t) in [rt("rr", 10), rt("rr", 10), other(0)].iter().enumerate() {
            p.admit(TaskId(i as u32), t, 0);
        }
        assert_eq!(p.policy().counter(TaskId(2)), nice_to_ticks(0, 20_000), "SCHED_OTHER: 81 ticks");
        wake(&mut p, &[0, 1, 2], 0);
        let mut now = 0;
        for want in [1, 0, 1] {
            let d = p.pick(0, now).unwrap();
            assert_eq!(d.task, TaskId(want));
            assert_eq!(d.slice, Some(100_000), "two ticks of 50 us");
            now += 100_000;
            p.stop(d.task, 100_000, Stop::SliceEnd, now);
            assert_eq!(p.policy().counter(d.task), 2, "refilled with rr_ticks");
        }
    }

    #[test]
    fn real_time_runs_above_all_and_rr_goes_last_when_its_counter_expires() {
        // Task 0 nice -20 (51); 1 SCHED_FIFO 1 (1001); 2 and 3 SCHED_RR 10 (1010).
        let mut p = lx(1, &[other(-20), rt("fifo", 1), rt("rr", 10), rt("rr", 10)]);
        wake(&mut p, &[0, 1, 2, 3], 0);
        let mut now = 0;
        let mut order = Vec::new();
        for _ in 0..3 {
            let d = p.pick(0, now).unwrap();
            assert_eq!(d.slice, Some(60 * MS), "an RR slice is NICE_TO_TICKS(0)");
            now += 60 * MS;
            p.stop(d.task, 60 * MS, Stop::SliceEnd, now);
            order.push(d.task.0);
            assert_eq!(p.policy().counter(d.task), 6, "refilled");
        }
        assert_eq!(order, vec![3, 2, 3]);
        assert_eq!(p.policy().queue().last(), Some(&TaskId(3)));
        // Without the RR tasks, SCHED_FIFO; a woken RR task preempts it (1010 - 1001 > 0); a woken
        // SCHED_OTHER task never does.
        for t in [2, 3] {
            let d = p.pick(0, now).unwrap();
            assert_eq!(d.task, TaskId(t));
            p.stop(d.task, MS, Stop::Blocked, now);
        }
        assert_eq!(p.pick(0, now).unwrap().task, TaskId(1));
        p.wake(TaskId(2), now);
        assert_eq!(p.policy().preempt_for(TaskId(2), None, &[(0, TaskId(1))], p.view()), Some(0));
        p.admit(TaskId(4), &other(-20), now);
        assert_eq!(p.policy().preempt_for(TaskId(4), None, &[(0, TaskId(1))], p.view()), None);
    }

    #[test]
    fn a_fifo_task_is_rescheduled_at_counter_0_and_an_equal_one_ahead_takes_the_cpu() {
        // 2.4.18: the tick reschedules SCHED_FIFO at counter 0 too, and the queue's head wins.
        let mut p = lx(1, &[rt("fifo", 5), rt("fifo", 5)]);
        wake(&mut p, &[1], 0);
        assert_eq!(p.pick(0, 0).unwrap(), Dispatch { task: TaskId(1), slice: Some(60 * MS) });
        p.wake(TaskId(0), 10 * MS);
        assert_eq!(p.policy().preempt_for(TaskId(0), None, &[(0, TaskId(1))], p.view()), None, "equal");
        p.stop(TaskId(1), 60 * MS, Stop::SliceEnd, 60 * MS);
        assert_eq!(p.policy().counter(TaskId(1)), 0, "no refill for SCHED_FIFO");
        assert_eq!(p.pick(0, 60 * MS).unwrap().task, TaskId(0), "woken later, ahead in the queue");
        p.stop(TaskId(0), 5 * MS, Stop::Blocked, 65 * MS);
        assert_eq!(
            p.pick(0, 65 * MS).unwrap(),
            Dispatch { task: TaskId(1), slice: Some(10 * MS) },
            "counter 0: rescheduled at every tick"
        );
    }

    #[test]
    fn a_yielding_task_goes_after_every_waiting_one_and_keeps_its_counter() {
        let mut p = lx(1, &[other(0), other(0)]);
        wake(&mut p, &[0, 1], 0);
        let d = p.pick(0, 0).unwrap();
        assert_eq!(d.task, TaskId(1));
        p.stop(TaskId(1), 60 * MS, Stop::SliceEnd, 60 * MS);
        assert_eq!(p.pick(0, 60 * MS).unwrap().task, TaskId(0));
        // Task 0 yields after one tick (5 left). Task 1 has 0 (goodness 0), task 0 is -1: the best
        // is 0, so the epoch ends (0 -> 6; 5 -> 2 + 6 = 8) and task 1 runs, the yield mark holding.
        p.stop(TaskId(0), 10 * MS, Stop::Yielded, 70 * MS);
        assert_eq!(p.policy().queue(), &[TaskId(1), TaskId(0)], "at the tail");
        assert_eq!(p.pick(0, 70 * MS).unwrap().task, TaskId(1));
        assert_eq!((p.policy().counter(TaskId(0)), p.policy().recalculations()), (8, 1));
        // The mark lasted one decision: task 0 (8 + 20 = 28) now beats task 1 (6 ticks, 26 + 1).
        p.stop(TaskId(1), 0, Stop::Preempted, 70 * MS);
        assert_eq!(p.pick(0, 70 * MS).unwrap().task, TaskId(0));
        // Alone, a yield changes nothing: the task runs again with its counter.
        let mut q = lx(1, &[other(0)]);
        wake(&mut q, &[0], 0);
        q.pick(0, 0);
        q.stop(TaskId(0), 10 * MS, Stop::Yielded, 10 * MS);
        assert_eq!(q.pick(0, 10 * MS).unwrap(), Dispatch { task: TaskId(0), slice: Some(50 * MS) });
        assert_eq!(q.counters()[2], ("yields", 0));
    }

    #[test]
    fn billing_takes_whole_ticks_and_keeps_the_remainder() {
        let mut p = lx(1, &[other(0)]);
        wake(&mut p, &[0], 0);
        assert_eq!(p.pick(0, 0).unwrap().slice, Some(60 * MS));
        p.stop(TaskId(0), 3 * MS, Stop::Blocked, 3 * MS);
        assert_eq!(p.policy().counter(TaskId(0)), 6, "3 ms: no whole tick yet");
        p.wake(TaskId(0), 10 * MS);
        assert_eq!(p.pick(0, 10 * MS).unwrap().slice, Some(57 * MS), "ends when the billing reaches 6 ticks");
        p.stop(TaskId(0), 8 * MS, Stop::Blocked, 18 * MS);
        assert_eq!(p.policy().counter(TaskId(0)), 5, "3 + 8 ms: one tick, 1 ms kept");
        p.wake(TaskId(0), 20 * MS);
        assert_eq!(p.pick(0, 20 * MS).unwrap().slice, Some(49 * MS));
        // Tick-sampled billing charged 40 ms for the 49 ms slice: still used up, no spin.
        p.stop(TaskId(0), 40 * MS, Stop::SliceEnd, 69 * MS);
        assert_eq!(p.policy().counter(TaskId(0)), 0);
        assert_eq!(p.pick(0, 69 * MS).unwrap().slice, Some(60 * MS), "a new epoch, no remainder");
    }

    #[test]
    fn setscheduler_moves_to_the_head_and_a_nice_change_keeps_the_counter() {
        let mut p = lx(1, &[rt("rr", 5), rt("rr", 5), other(0)]);
        wake(&mut p, &[0, 1, 2], 0);
        assert_eq!(p.policy().queue(), &[TaskId(2), TaskId(1), TaskId(0)]);
        p.set_params(TaskId(0), &rt("fifo", 5), 0);
        assert_eq!(p.policy().queue(), &[TaskId(0), TaskId(2), TaskId(1)]);
        assert_eq!(p.pick(0, 0).unwrap().task, TaskId(0));
        p.set_params(TaskId(2), &other(19), 0);
        assert_eq!(p.policy().queue(), &[TaskId(0), TaskId(2), TaskId(1)], "setpriority: no move");
        assert_eq!(p.policy().counter(TaskId(2)), 6, "kept until the next epoch");
        // A running task too (the kernel never takes it off the queue): task 1, behind task 2, goes
        // ahead of it when task 0, running, leaves SCHED_FIFO.
        p.set_params(TaskId(1), &rt("fifo", 5), 0);
        p.set_params(TaskId(0), &other(0), 0);
        assert_eq!(p.policy().queue(), &[TaskId(0), TaskId(1), TaskId(2)], "the running task to the head");
        p.stop(TaskId(0), MS, Stop::Preempted, MS);
        assert_eq!(p.pick(0, MS).unwrap().task, TaskId(1));
    }
}
