//! Linux's `SCHED_DEADLINE` as of 6.12: EDF over Constant Bandwidth Servers (Abeni and Buttazzo,
//! "Integrating Multimedia Applications in Hard Real-Time Systems", RTSS 1998), with the revised
//! wake-up rule of constrained deadlines (Abeni, Lipari and Lelli, "Constant Bandwidth Server
//! Revisited", 2015) and GRUB reclaiming as an option (Lelli, Scordino, Abeni and Faggioli,
//! "Deadline scheduling in the Linux kernel", SP&E 2016, §4), global on N CPUs.
//!
//! **Specification.** `kernel/sched/deadline.c` of Linux 6.12 (Debian's linux-source 6.12, read to
//! learn the rules, nothing is copied) and `Documentation/scheduler/sched-deadline.rst`. The
//! functions named below are that file's.
//!
//! **Parameters.** A task's reservation is [`TaskParams::reservation`]: `dl_runtime`, `dl_deadline`,
//! `dl_period` (`sched_attr`'s `sched_runtime`, `sched_deadline`, `sched_period`). Its bandwidth is
//! `u = dl_runtime/dl_period` in the kernel's fixed point, `⌊dl_runtime·2^20/dl_period⌋`
//! (`to_ratio`, `BW_SHIFT` = 20).
//!
//! **Admission** (`sched_dl_overflow`, `__dl_overflow`). A task is given its reservation if
//! `Σ u + u_new ≤ bound·cpus`, with `bound` = `⌊bound%·2^20/100⌋` (the kernel's `dl_b->bw`,
//! `to_ratio(rt_period, rt_runtime)` = 95 % by default) and `Σ u` over the tasks holding one. Where the
//! kernel's `sched_setattr` fails with `-EBUSY` and the task stays in its old class, here a refused
//! task runs as a task without a reservation (below, in the background queue) and is counted in
//! `refused`; so is a reservation that is not `0 < runtime ≤ deadline ≤ period` (the kernel's
//! `__checkparam_dl` fails with `-EINVAL`). New parameters ([`Policy::set_params`]) are admitted
//! against `Σ u − u_old + u_new`; refused, the task keeps what it had (as `sched_setattr` failing
//! changes nothing); taken, the task starts a new period at once (`replenish_dl_new_period`). A
//! task's bandwidth is given back when it exits (the kernel waits for its 0-lag time).
//!
//! **State per reserved task.** Its scheduling deadline `d` (absolute) and remaining runtime `q`
//! (signed: a stop may bill more than was left); whether it is throttled, and its replenishment
//! time; with `reclaim`, whether it is active (contending, in GRUB's sense) and its inactive timer.
//!
//! **Rules.**
//! * *EDF, global.* The reserved tasks that are runnable and not throttled are served earliest `d`
//!   first; on N CPUs the N earliest run (`pick_next_dl_entity`, with `push_dl_task`/`pull_dl_task`
//!   keeping the N earliest on the N CPUs). A woken task preempts the CPU whose task has the latest
//!   deadline, a task without a reservation counting as later than any (`find_later_rq`,
//!   `wakeup_preempt_dl`), if its own deadline is earlier.
//! * *Accounting* (`update_curr_dl`, `update_curr_dl_se`). Every stop takes what the driver billed
//!   off `q`. A reserved task is dispatched for a slice of its remaining runtime, so that its
//!   exhaustion is a stop: a stop at the end of that slice exhausts `q` (the kernel measures the
//!   time run, which is the slice, even when tick billing charged less).
//! * *Throttling* (`dl_runtime_exceeded`, `start_dl_timer`). When `q ≤ 0` the task is throttled
//!   until `d − dl_deadline + dl_period` (`dl_next_period`: the start of the current period plus a
//!   period), the replenishment timer ([`Policy::next_timer`]); if that instant has passed it is
//!   replenished at once. A task that yields gives up its runtime the same way (`yield_task_dl`).
//! * *Replenishment* (`replenish_dl_entity`, `dl_task_timer`). `d += dl_period, q += dl_runtime`
//!   until `q > 0` (closed form: `k = ⌊−q/dl_runtime⌋ + 1` periods at once); if `d` is still in the
//!   past, a new period: `d = now + dl_deadline, q = dl_runtime`. The task is unthrottled; runnable, it
//!   joins the queue and every busy CPU decides again (the kernel's `wakeup_preempt_dl` and
//!   `__push_dl_task`); asleep, it keeps its new `d` and `q` for its wake-up.
//! * *Wake-up, the CBS rule* (`update_dl_entity`, `dl_entity_overflow`). A task that was never run
//!   starts a period: `d = now + dl_deadline, q = dl_runtime`. Otherwise, if `d < now` or
//!   `q/(d − now) > dl_runtime/dl_deadline` (exact, in 128-bit integers, where the kernel drops 10
//!   bits of each factor, `DL_SCALE`), it gets `d = now + dl_deadline, q = dl_runtime`; else it
//!   keeps `d` and `q`. A throttled task that wakes stays throttled until its
//!   timer (`enqueue_dl_entity`).
//! * *Constrained deadlines* (`dl_deadline < dl_period`). Woken after `d` but before its next period
//!   it is throttled until `d − dl_deadline + dl_period` with `q = min(q, 0)`
//!   (`dl_check_constrained_dl`). Woken before `d` with `q/(d − now)` too large, it keeps `d` and gets
//!   `q = dl_runtime·(d − now)/dl_deadline` (`update_dl_revised_wakeup`; exact, rounded down, where
//!   the kernel multiplies by its 2^20 fixed-point density and may give up to a nanosecond less).
//! * *GRUB* (`reclaim = true`: `SCHED_FLAG_RECLAIM` on every reserved task; `grub_reclaim`). Runtime
//!   is depleted at `dq = −max{u, Umax − Uinact − Uextra}/Umax · dt` instead of `dq = −dt`, where
//!   `Umax` is the bound, `Uinact` the bandwidth of the reserved tasks that are inactive and
//!   `Uextra = Umax − Σu/N` what admission left unreserved. A reserved task is active from its
//!   wake-up until it blocks and its 0-lag time `d − q·dl_period/dl_runtime` has come
//!   (`task_non_contending`, the inactive timer), or at once if that time has passed; throttled, it
//!   stays active. *Simplified:* the kernel keeps `Uinact` and `Uextra` per CPU (each run queue's
//!   own tasks); this global model spreads them evenly over the N CPUs, so that `Umax − Uinact −
//!   Uextra = Uact/N` with `Uact` the bandwidth of the active tasks, and `dq = −max{u, Uact/N}/Umax ·
//!   dt` (on one CPU exactly the kernel's). The rate is taken when the task is dispatched and
//!   applied to that whole stint (the kernel recomputes it at every `update_curr_dl`: each tick and
//!   each change on its run queue), and divided exactly by `Umax` (the kernel multiplies by its
//!   8-bit `bw_ratio`); the slice is rounded up and what a stint uses rounded down, so that a
//!   stint of exactly the slice uses exactly the runtime left. A lone 2 ms / 10 ms task thus runs
//!   2 ms · 0.95/0.2 ≈ 9.5 ms of each period (9,500,008 ns with the fixed-point `u`).
//! * *Tasks without a reservation* (none, or refused) run below every reserved task in one
//!   background queue, first come first served: woken or yielding at the back, preempted at the
//!   front, each running until it blocks or a reserved task takes its CPU. So `cbs` alone serves
//!   them work-conservingly, but it is not work-conserving: a throttled task never runs, even on
//!   an idle CPU. In a class stack they live in the classes below and this queue stays empty.
//!
//! **Tie-break.** Equal deadlines go in the order the tasks joined the queue (the kernel's
//! red-black tree, ordered by `dl_time_before`, puts an equal key to the right); a preempted task
//! keeps its place among them (the kernel leaves the running task in its tree, and a woken task
//! preempts only with a strictly earlier deadline, `dl_entity_preempt`). Among victims of a
//! preemption with equally late deadlines, the woken task's previous CPU, then the lowest number
//! ([`least_important`]).
//!
//! **Idle CPUs at a replenishment.** A CPU left idle while every task was throttled looks again at the
//! replenishment: the core asks idle CPUs too when a timer asks for a reschedule and tasks wait
//! ([`crate::Core::timer`]), as the kernel's `resched_curr` at `dl_task_timer`.
//!
//! **Left out.** Priority inheritance (deadline boosting), `SCHED_FLAG_DL_OVERRUN` signals,
//! deferred servers (the fair server of 6.12: in a class stack, that is the stack's business),
//! the refusal of a reservation with a reduced affinity (`-EPERM`), frequency and capacity scaling
//! (`dl_scaled_delta_exec` without GRUB), root domains (one for all CPUs, or one per CPU when
//! partitioned: each CPU's copy admits against its own `bound`), the minimum runtime and deadline of
//! `__checkparam_dl`, and the 0-lag wait before an exiting task's bandwidth is released. A running
//! task given a reservation by new parameters keeps the slice it was dispatched with (none, as a
//! background task) until it stops; its runtime is charged from then on.
//!
//! **Class.** A task's `class` may name it `cbs` or `deadline` (Linux's `dl_sched_class`); alone,
//! `cbs` tells its tasks apart by their reservation only.
//!
//! **Options.** `bound` (the admission bound in percent of each CPU, default 95:
//! `sched_rt_runtime_us`/`sched_rt_period_us`), `reclaim` (GRUB, default false).
//!
//! **Counters.** `throttled` (a task exhausted its runtime, yielded it, or woke between its
//! constrained deadline and its next period), `replenished`, `refused`
//! (reservations refused at admission or at a change).

use std::collections::{BTreeSet, VecDeque};

use crate::registry::{opt, Entry, LinuxClass};
use crate::{
    least_important, slot, Availability, CpuId, Dispatch, Nanos, Policy, Reservation, Running, State, Stop,
    TaskId, TaskParams, View,
};

/// The kernel's fixed point of bandwidths: 2^20 is a whole CPU (`BW_SHIFT`).
const BW_SHIFT: u32 = 20;

/// `runtime/period` in the kernel's fixed point (`to_ratio`), rounded down.
fn to_ratio(period: Nanos, runtime: Nanos) -> u64 {
    if period == 0 {
        return 0;
    }
    u64::try_from((u128::from(runtime) << BW_SHIFT) / u128::from(period)).unwrap_or(u64::MAX)
}

/// A timer of the policy: a replenishment, or (GRUB) the 0-lag time of a blocked task.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Replenish,
    Inactive,
}

#[derive(Clone, Debug, Default)]
struct CbsTask {
    /// Its reservation, if admitted; `None`: a background task.
    res: Option<Reservation>,
    /// Its bandwidth (2^20 = one CPU), if admitted.
    bw: u64,
    /// Scheduling deadline and remaining runtime.
    deadline: Nanos,
    runtime: i128,
    /// Never run since its reservation was given: its first wake-up starts a period.
    fresh: bool,
    throttled: bool,
    /// When its replenishment timer fires, and its inactive timer (GRUB).
    repl_at: Option<Nanos>,
    inactive_at: Option<Nanos>,
    /// Active in GRUB's sense (its bandwidth counts in `active_bw`).
    active: bool,
    runnable: bool,
    /// Its key in the deadline queue while it is there, and its arrival number (kept while it
    /// runs).
    queued: Option<(Nanos, u64)>,
    seq: u64,
    /// The depletion rate of its current stint (GRUB): runtime = billed · num / den.
    rate: (u128, u128),
}

/// The `cbs` policy (Linux's `SCHED_DEADLINE`).
#[derive(Debug)]
pub struct Cbs {
    cpus: usize,
    /// The admission bound per CPU (2^20 = a whole CPU), and whether GRUB reclaims.
    bound: u64,
    reclaim: bool,
    tasks: Vec<CbsTask>,
    /// Reserved tasks ready to run: (deadline, arrival number, task).
    ready: BTreeSet<(Nanos, u64, u32)>,
    seq: u64,
    /// Tasks without a reservation, first come first served.
    background: VecDeque<TaskId>,
    /// Timers: (when, task, what).
    timers: BTreeSet<(Nanos, u32, Kind)>,
    /// Σ u of the reserved tasks, and of the active ones (GRUB).
    total_bw: u64,
    active_bw: u64,
    throttled: u64,
    replenished: u64,
    refused: u64,
}

/// What a wake-up does to a reserved task (the CBS rule), computed without changing it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Woken {
    deadline: Nanos,
    runtime: i128,
    /// Throttled until this time (a constrained deadline woken between its deadline and its next
    /// period), or still throttled.
    throttled: bool,
}

impl Cbs {
    /// A `SCHED_DEADLINE` scheduler for `cpus` CPUs admitting up to `bound_percent` % of each, with
    /// GRUB reclaiming if `reclaim`.
    pub fn new(cpus: usize, bound_percent: u64, reclaim: bool) -> Self {
        Cbs {
            cpus: cpus.max(1),
            bound: to_ratio(100, bound_percent),
            reclaim,
            tasks: Vec::new(),
            ready: BTreeSet::new(),
            seq: 0,
            background: VecDeque::new(),
            timers: BTreeSet::new(),
            total_bw: 0,
            active_bw: 0,
            throttled: 0,
            replenished: 0,
            refused: 0,
        }
    }

    /// The most bandwidth admission gives out: `bound · cpus`.
    fn capacity(&self) -> u64 {
        self.bound.saturating_mul(self.cpus as u64)
    }

    fn valid(r: &Reservation) -> bool {
        0 < r.runtime && r.runtime <= r.deadline && r.deadline <= r.period
    }

    /// Admission (`__dl_overflow`): whether `r` fits with `old` bandwidth given back.
    fn fits(&self, r: &Reservation, old: u64) -> bool {
        let new = to_ratio(r.period, r.runtime);
        Self::valid(r) && self.total_bw - old + new <= self.capacity()
    }

    // ----- the two queues -----

    fn enqueue(&mut self, t: TaskId, front: bool) {
        let st = &mut self.tasks[t.idx()];
        st.runnable = true;
        if st.res.is_none() {
            if front {
                self.background.push_front(t);
            } else {
                self.background.push_back(t);
            }
        } else if !st.throttled && st.queued.is_none() {
            // A preempted task keeps its arrival number: the kernel leaves a running task in its
            // tree, where it stays ahead of the equal deadlines that came after it.
            if !front {
                self.seq += 1;
                st.seq = self.seq;
            }
            st.queued = Some((st.deadline, st.seq));
            self.ready.insert((st.deadline, st.seq, t.0));
        }
    }

    /// Out of whichever queue it is in (still runnable, unless the caller says otherwise).
    fn dequeue(&mut self, t: TaskId) {
        let st = &mut self.tasks[t.idx()];
        if let Some((d, s)) = st.queued.take() {
            self.ready.remove(&(d, s, t.0));
        } else if st.res.is_none() {
            self.background.retain(|&x| x != t);
        }
    }

    // ----- timers -----

    fn arm(&mut self, t: TaskId, kind: Kind, at: Nanos) {
        self.disarm(t, kind);
        let st = &mut self.tasks[t.idx()];
        match kind {
            Kind::Replenish => st.repl_at = Some(at),
            Kind::Inactive => st.inactive_at = Some(at),
        }
        self.timers.insert((at, t.0, kind));
    }

    fn disarm(&mut self, t: TaskId, kind: Kind) {
        let st = &mut self.tasks[t.idx()];
        let at = match kind {
            Kind::Replenish => st.repl_at.take(),
            Kind::Inactive => st.inactive_at.take(),
        };
        if let Some(at) = at {
            self.timers.remove(&(at, t.0, kind));
        }
    }

    // ----- the reservation's rules -----

    /// The CBS rule at a wake-up at `now` (`enqueue_dl_entity`: `dl_check_constrained_dl`, then
    /// `update_dl_entity`), for a reserved task.
    fn on_wake(&self, t: TaskId, now: Nanos) -> Woken {
        let st = &self.tasks[t.idx()];
        let r = st.res.expect("a reserved task");
        let (d, q) = (st.deadline, st.runtime);
        if st.throttled {
            return Woken { deadline: d, runtime: q, throttled: true };
        }
        if st.fresh {
            return Woken { deadline: now + r.deadline, runtime: i128::from(r.runtime), throttled: false };
        }
        let implicit = r.deadline == r.period;
        if !implicit && d < now && now < Self::next_period(d, &r) {
            // dl_check_constrained_dl: woken after its deadline, before its next period.
            return Woken { deadline: d, runtime: q.min(0), throttled: true };
        }
        // dl_entity_overflow: q/(d − now) > dl_runtime/dl_deadline, in whole numbers.
        let overflow = d >= now && {
            let left = u128::try_from(q.max(0)).unwrap_or(0) * u128::from(r.deadline);
            let right = u128::from(d - now) * u128::from(r.runtime);
            right < left
        };
        if d < now || overflow {
            if !implicit && d >= now {
                // update_dl_revised_wakeup: keep d, cut q to the density times the laxity.
                let q = u128::from(r.runtime) * u128::from(d - now) / u128::from(r.deadline);
                return Woken { deadline: d, runtime: i128::try_from(q).unwrap_or(0), throttled: false };
            }
            return Woken { deadline: now + r.deadline, runtime: i128::from(r.runtime), throttled: false };
        }
        Woken { deadline: d, runtime: q, throttled: false }
    }

    /// `dl_next_period`: the start of the current period plus a period.
    fn next_period(d: Nanos, r: &Reservation) -> Nanos {
        d.saturating_add(r.period).saturating_sub(r.deadline)
    }

    /// Its runtime is used up (or given up): throttled until its next period (`start_dl_timer`),
    /// or replenished at once if that has passed.
    fn throttle(&mut self, t: TaskId, now: Nanos) {
        self.throttled += 1;
        let st = &mut self.tasks[t.idx()];
        let r = st.res.expect("a reserved task");
        st.throttled = true;
        let at = Self::next_period(st.deadline, &r);
        if at > now {
            self.arm(t, Kind::Replenish, at);
        } else {
            self.replenish(t, now);
        }
    }

    /// `replenish_dl_entity`: as many periods as it takes for the runtime to be positive; a new
    /// period if the deadline is still in the past. The task is unthrottled (not queued: the
    /// caller does that if it is runnable).
    fn replenish(&mut self, t: TaskId, now: Nanos) {
        self.replenished += 1;
        self.disarm(t, Kind::Replenish);
        let st = &mut self.tasks[t.idx()];
        let r = st.res.expect("a reserved task");
        if st.runtime <= 0 {
            let k = (-st.runtime) / i128::from(r.runtime) + 1;
            st.runtime += k * i128::from(r.runtime);
            let by = u128::try_from(k).unwrap_or(0) * u128::from(r.period);
            st.deadline = crate::clamp_nanos(u128::from(st.deadline) + by);
        }
        if st.deadline < now {
            st.deadline = now + r.deadline;
            st.runtime = i128::from(r.runtime);
        }
        st.throttled = false;
    }

    /// The task's bandwidth starts counting as active (GRUB's `task_contending`).
    fn contend(&mut self, t: TaskId) {
        if !self.reclaim {
            return;
        }
        self.disarm(t, Kind::Inactive);
        let st = &mut self.tasks[t.idx()];
        if !st.active {
            st.active = true;
            self.active_bw += st.bw;
        }
    }

    /// The task blocked: inactive at its 0-lag time, or now if that has passed
    /// (`task_non_contending`).
    fn non_contend(&mut self, t: TaskId, now: Nanos) {
        if !self.reclaim {
            return;
        }
        let st = &self.tasks[t.idx()];
        let r = st.res.expect("a reserved task");
        // 0-lag time: d − q·dl_period/dl_runtime.
        let lag = st.runtime * i128::from(r.period) / i128::from(r.runtime);
        let zerolag = i128::from(st.deadline) - lag;
        if zerolag <= i128::from(now) {
            self.deactivate(t);
        } else {
            let at = Nanos::try_from(zerolag).unwrap_or(Nanos::MAX);
            self.arm(t, Kind::Inactive, at);
        }
    }

    fn deactivate(&mut self, t: TaskId) {
        self.disarm(t, Kind::Inactive);
        let st = &mut self.tasks[t.idx()];
        if st.active {
            st.active = false;
            self.active_bw -= st.bw;
        }
    }

    /// GRUB's depletion rate for `t` now, as num/den: `max{u, Uact/N}/Umax`; 1 without `reclaim`.
    fn rate(&self, t: TaskId) -> (u128, u128) {
        if !self.reclaim {
            return (1, 1);
        }
        let n = self.cpus as u128;
        let u = u128::from(self.tasks[t.idx()].bw) * n;
        let num = u.max(u128::from(self.active_bw)).max(1);
        (num, u128::from(self.bound.max(1)) * n)
    }

    /// Gives `t` the reservation `r` (admitted), starting fresh.
    fn reserve(&mut self, t: TaskId, r: Reservation) {
        let bw = to_ratio(r.period, r.runtime);
        self.total_bw += bw;
        let st = &mut self.tasks[t.idx()];
        st.res = Some(r);
        st.bw = bw;
        st.fresh = true;
        st.throttled = false;
        st.runtime = 0;
        st.deadline = 0;
    }

    /// Takes `t`'s reservation back (exit, or new parameters).
    fn unreserve(&mut self, t: TaskId) {
        self.deactivate(t);
        self.disarm(t, Kind::Replenish);
        let st = &mut self.tasks[t.idx()];
        if st.res.take().is_some() {
            self.total_bw -= st.bw;
        }
        st.bw = 0;
        st.throttled = false;
    }

    /// The rank of a running task as a victim: larger is later (a background task is the latest).
    fn lateness(&self, t: TaskId) -> (bool, Nanos) {
        let st = &self.tasks[t.idx()];
        match st.res {
            Some(_) => (false, st.deadline),
            None => (true, 0),
        }
    }
}

impl Policy for Cbs {
    fn admit(&mut self, t: TaskId, p: &TaskParams, _v: &View) {
        *slot(&mut self.tasks, t) = CbsTask::default();
        if let Some(r) = p.reservation {
            if self.fits(&r, 0) {
                self.reserve(t, r);
            } else {
                self.refused += 1;
            }
        }
    }

    fn exit(&mut self, t: TaskId, _v: &View) {
        self.dequeue(t);
        self.unreserve(t);
        self.tasks[t.idx()] = CbsTask::default();
    }

    fn wake(&mut self, t: TaskId, v: &View) {
        let now = v.now();
        if self.tasks[t.idx()].res.is_some() {
            self.contend(t);
            let w = self.on_wake(t, now);
            let st = &mut self.tasks[t.idx()];
            st.fresh = false;
            st.deadline = w.deadline;
            st.runtime = w.runtime;
            if w.throttled && !st.throttled {
                // dl_check_constrained_dl: throttled until the next period.
                self.throttle(t, now);
            }
        }
        self.enqueue(t, false);
    }

    fn stop(&mut self, t: TaskId, _cpu: CpuId, charged: Nanos, why: Stop, v: &View) {
        let now = v.now();
        if self.tasks[t.idx()].res.is_none() {
            if let Some(front) = why.requeue_front() {
                self.enqueue(t, front);
            } else {
                self.tasks[t.idx()].runnable = false;
            }
            return;
        }
        // update_curr_dl: the billed time (scaled by GRUB's rate) comes off the runtime.
        let st = &mut self.tasks[t.idx()];
        let (num, den) = st.rate;
        // Rounded down: a stint of exactly the slice (rounded up) uses exactly the runtime left.
        let used = u128::from(charged) * num / den;
        st.runtime -= i128::try_from(used).unwrap_or(i128::MAX / 2);
        if matches!(why, Stop::SliceEnd | Stop::Yielded) {
            // The slice was its runtime: it is used up (a yield gives it up, yield_task_dl).
            st.runtime = st.runtime.min(0);
        }
        if st.runtime <= 0 {
            self.throttle(t, now);
        }
        if why == Stop::Blocked {
            self.tasks[t.idx()].runnable = false;
            self.non_contend(t, now);
        } else {
            // Preempted: back in its place among its equals.
            self.enqueue(t, why == Stop::Preempted);
        }
    }

    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, v: &View) -> Option<CpuId> {
        let st = &self.tasks[woken.idx()];
        st.res?;
        // A blocked task (a forecast of its wake-up) is judged by what its wake-up would make it.
        let d = if v.state(woken) == State::Blocked {
            let w = self.on_wake(woken, v.now());
            if w.throttled {
                return None;
            }
            w.deadline
        } else {
            if st.throttled {
                return None;
            }
            st.deadline
        };
        let (cpu, latest) = least_important(running, prev, |r| self.lateness(r))?;
        ((false, d) < latest).then_some(cpu)
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        let reserved = self.ready.iter().find(|&&(_, _, id)| v.allows(TaskId(id), cpu)).copied();
        if let Some((_, _, id)) = reserved {
            let t = TaskId(id);
            self.dequeue(t);
            let rate = self.rate(t);
            let st = &mut self.tasks[t.idx()];
            st.rate = rate;
            // The slice is the remaining runtime, in wall time at the rate it is depleted.
            let q = u128::try_from(st.runtime.max(1)).unwrap_or(1);
            let slice = crate::clamp_nanos((q * rate.1).div_ceil(rate.0)).max(1);
            return Some(Dispatch { task: t, slice: Some(slice) });
        }
        let i = self.background.iter().position(|&t| v.allows(t, cpu))?;
        let t = self.background.remove(i)?;
        Some(Dispatch { task: t, slice: None })
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        let now = v.now();
        let st = &self.tasks[t.idx()];
        if p.reservation == st.res || (st.res.is_none() && p.reservation == v.params(t).reservation) {
            // Unchanged (a task refused before stays refused until its reservation changes).
            return;
        }
        let old = st.bw;
        match p.reservation {
            Some(r) if !self.fits(&r, old) => {
                // sched_setattr fails: nothing changes.
                self.refused += 1;
            }
            new => {
                let runnable = self.tasks[t.idx()].runnable;
                let running = matches!(v.state(t), State::Running(_));
                self.dequeue(t);
                self.unreserve(t);
                if let Some(r) = new {
                    self.reserve(t, r);
                    // A new period from now (replenish_dl_new_period).
                    let st = &mut self.tasks[t.idx()];
                    st.fresh = false;
                    st.deadline = now + r.deadline;
                    st.runtime = i128::from(r.runtime);
                    if runnable || running {
                        self.contend(t);
                    }
                }
                let st = &mut self.tasks[t.idx()];
                st.rate = (1, 1);
                if runnable && !running {
                    self.enqueue(t, false);
                }
            }
        }
    }

    fn availability(&self, t: TaskId, v: &View) -> Availability {
        let st = &self.tasks[t.idx()];
        match st.res {
            Some(r) => {
                // Entitled to its bandwidth.
                let alloc = 100.0 * r.runtime as f64 / r.period as f64;
                Availability { consumption_rate: 100.0 * v.usage(t), allocation_rate: alloc }
            }
            None => {
                // Equal shares of what the reserved tasks leave.
                let reserved = |o: TaskId| self.tasks.get(o.idx()).is_some_and(|s| s.res.is_some());
                let below = v.live().filter(|&o| !reserved(o)).count() as u64;
                v.availability_by_rank(t, reserved, 1, below)
            }
        }
    }

    fn next_timer(&self) -> Option<Nanos> {
        self.timers.first().map(|&(at, _, _)| at)
    }

    fn timer(&mut self, v: &View) -> bool {
        let now = v.now();
        let mut resched = false;
        while let Some(&(at, id, kind)) = self.timers.first() {
            if at > now {
                break;
            }
            let t = TaskId(id);
            match kind {
                Kind::Replenish => {
                    // dl_task_timer.
                    self.replenish(t, now);
                    if self.tasks[t.idx()].runnable {
                        self.enqueue(t, false);
                        resched = true;
                    }
                }
                Kind::Inactive => self.deactivate(t),
            }
        }
        resched
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("throttled", self.throttled), ("replenished", self.replenished), ("refused", self.refused)]
    }
}

/// The registry's entry of `cbs`.
pub const ENTRY: Entry = Entry::new("cbs", "cbs.rs", |o, cpus| {
    let bound = o.int("bound", 95, 1, 100)?;
    let reclaim = o.bool("reclaim", false)?;
    Ok(Box::new(Cbs::new(cpus, u64::try_from(bound).unwrap_or(95), reclaim)))
})
.about("Linux's SCHED_DEADLINE: global EDF over constant bandwidth servers (CBS), admission, GRUB; tasks without a reservation FIFO below")
.options(&[
    opt("bound", "95", "the admission bound, in percent of each CPU (sched_rt_runtime_us / sched_rt_period_us)"),
    opt("reclaim", "false", "GRUB reclaiming (SCHED_FLAG_RECLAIM) for every reserved task"),
])
.linux(LinuxClass::Deadline)
.classes(&["deadline"])
.not_work_conserving();

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{test_core, MS};

    const T0: TaskId = TaskId(0);
    const T1: TaskId = TaskId(1);
    const T2: TaskId = TaskId(2);
    const T3: TaskId = TaskId(3);

    /// A task with a reservation of `runtime` every `period` within `deadline` (nanoseconds).
    fn res(runtime: Nanos, deadline: Nanos, period: Nanos) -> TaskParams {
        TaskParams { reservation: Some(Reservation { runtime, deadline, period }), ..TaskParams::default() }
    }

    fn d(task: TaskId, slice: Option<Nanos>) -> Option<Dispatch> {
        Some(Dispatch { task, slice })
    }

    fn counter(c: &crate::Core<Cbs>, name: &str) -> u64 {
        c.policy().counters().into_iter().find(|(n, _)| *n == name).unwrap().1
    }

    #[test]
    fn a_2ms_in_10ms_task_beside_a_hog_gets_exactly_2ms_a_period_and_is_throttled_until_the_next() {
        let mut e = test_core(Cbs::new(1, 95, false), 1);
        e.admit(T0, &res(2 * MS, 10 * MS, 10 * MS), 0);
        e.admit(T1, &TaskParams::default(), 0);
        e.wake(T1, 0);
        e.wake(T0, 0);
        for k in 0..3 {
            let p = k * 10 * MS;
            // The reserved task runs first, for its runtime: a slice of 2 ms, its deadline p + 10 ms.
            assert_eq!(e.pick(0, p), d(T0, Some(2 * MS)), "period {k}");
            assert_eq!(e.policy().tasks[0].deadline, p + 10 * MS);
            e.stop(T0, 2 * MS, Stop::SliceEnd, p + 2 * MS);
            // Exhausted: throttled until the period's start + period.
            assert!(e.policy().tasks[0].throttled);
            assert_eq!(e.next_timer(), Some(p + 10 * MS));
            assert_eq!(e.policy().preempt_for(T0, None, &[(0, T1)], e.view()), None);
            // The hog has the rest of the period, with no slice: it runs until something preempts it.
            assert_eq!(e.pick(0, p + 2 * MS), d(T1, None));
            // Replenished at p + 10 ms: every busy CPU decides again, and the reserved task wins.
            assert!(e.timer(p + 10 * MS));
            assert!(!e.policy().tasks[0].throttled);
            assert_eq!(e.policy().tasks[0].deadline, p + 20 * MS);
            e.stop(T1, 8 * MS, Stop::Preempted, p + 10 * MS);
        }
        assert_eq!(counter(&e, "throttled"), 3);
        assert_eq!(counter(&e, "replenished"), 3);
        assert_eq!(counter(&e, "refused"), 0);
    }

    #[test]
    fn earliest_deadline_first_equal_deadlines_in_arrival_order_and_an_earlier_one_preempts() {
        let mut e = test_core(Cbs::new(1, 95, false), 1);
        // Deadlines 30, 20, 10 ms, and two of 15 ms woken task 4 first.
        for (i, dl) in [(0, 30), (1, 20), (2, 10), (3, 15), (4, 15)] {
            e.admit(TaskId(i), &res(MS, dl * MS, dl * MS), 0);
        }
        for i in [0, 1, 2, 4, 3] {
            e.wake(TaskId(i), 0);
        }
        let mut order = Vec::new();
        for k in 0..5 {
            let got = e.pick(0, k).unwrap();
            assert_eq!(got.slice, Some(MS));
            order.push(got.task.0);
            e.stop(got.task, 0, Stop::Blocked, k + 1);
        }
        assert_eq!(order, [2, 4, 3, 1, 0], "10, 15 (woken first), 15, 20, 30 ms");
        // Each has 1 ms left. Task 0 wakes at 5 ms: 1 ms in 25 ms is more than 1/30, so a new
        // deadline, 35 ms. Task 2 wakes at 6 ms: 1/4 > 1/10, deadline 16 ms, earlier: it preempts.
        e.wake(T0, 5 * MS);
        assert_eq!(e.policy().tasks[0].deadline, 35 * MS);
        assert_eq!(e.pick(0, 5 * MS), d(T0, Some(MS)));
        e.wake(T2, 6 * MS);
        assert_eq!(e.policy().tasks[2].deadline, 16 * MS);
        assert_eq!(e.policy().preempt_for(T2, None, &[(0, T0)], e.view()), Some(0));
        e.stop(T0, MS / 2, Stop::Preempted, 6 * MS);
        assert_eq!(e.pick(0, 6 * MS), d(T2, Some(MS)));
        // Task 1 wakes at 7 ms: 1/13 > 1/20, deadline 27 ms, later than 16 ms: no preemption.
        e.wake(T1, 7 * MS);
        assert_eq!(e.policy().tasks[1].deadline, 27 * MS);
        assert_eq!(e.policy().preempt_for(T1, None, &[(0, T2)], e.view()), None);
        // Task 0, preempted with 0.5 ms left, goes on with it (35 ms) after task 1 (27 ms).
        e.stop(T2, MS / 2, Stop::Blocked, 7 * MS + MS / 2);
        assert_eq!(e.pick(0, 7 * MS + MS / 2), d(T1, Some(MS)));
        e.stop(T1, MS / 2, Stop::Blocked, 8 * MS);
        assert_eq!(e.pick(0, 8 * MS), d(T0, Some(MS / 2)));
    }

    #[test]
    fn a_preempted_task_keeps_its_place_among_equal_deadlines() {
        // Task 0 (deadline 50 ms) runs; task 1 (50 ms) arrives; task 2 (10 ms) preempts task 0:
        // once task 2 is done, task 0, in the tree first, runs before task 1.
        let mut e = test_core(Cbs::new(1, 95, false), 1);
        e.admit(T0, &res(MS, 50 * MS, 50 * MS), 0);
        e.admit(T1, &res(MS, 50 * MS, 50 * MS), 0);
        e.admit(T2, &res(MS, 10 * MS, 10 * MS), 0);
        e.wake(T0, 0);
        e.wake(T1, 0);
        assert_eq!(e.pick(0, 0).unwrap().task, T0);
        assert_eq!(e.policy().preempt_for(T1, None, &[(0, T0)], e.view()), None, "equal: no preemption");
        e.wake(T2, 0);
        assert_eq!(e.policy().preempt_for(T2, None, &[(0, T0)], e.view()), Some(0));
        e.stop(T0, 0, Stop::Preempted, 0);
        assert_eq!(e.pick(0, 0).unwrap().task, T2);
        e.stop(T2, 0, Stop::Blocked, 0);
        assert_eq!(e.pick(0, 0).unwrap().task, T0);
    }

    #[test]
    fn admission_refuses_the_task_past_95_percent_and_runs_it_in_the_background() {
        // 5/10 = 524288 and 45/100 = 471859 in 2^20 units: 996147, exactly the bound ⌊0.95·2^20⌋.
        let mut e = test_core(Cbs::new(1, 95, false), 1);
        e.admit(T0, &res(5 * MS, 10 * MS, 10 * MS), 0);
        e.admit(T1, &res(45 * MS, 100 * MS, 100 * MS), 0);
        assert_eq!(e.policy().total_bw, 996_147);
        // 1/100 more does not fit: refused, a task without a reservation.
        e.admit(T2, &res(MS, 100 * MS, 100 * MS), 0);
        assert_eq!(counter(&e, "refused"), 1);
        assert!(e.policy().tasks[2].res.is_none());
        // So is an invalid one (runtime beyond the deadline).
        e.admit(T3, &res(2 * MS, MS, 10 * MS), 0);
        assert_eq!(counter(&e, "refused"), 2);
        // The refused task runs below every reserved task, without a slice.
        e.wake(T2, 0);
        e.wake(T1, 0);
        e.wake(T0, 0);
        assert_eq!(e.pick(0, 0), d(T0, Some(5 * MS)));
        e.stop(T0, MS, Stop::Blocked, MS);
        assert_eq!(e.pick(0, MS), d(T1, Some(45 * MS)));
        e.stop(T1, MS, Stop::Blocked, 2 * MS);
        assert_eq!(e.pick(0, 2 * MS), d(T2, None));
        // A task that exits gives its bandwidth back: 1/100 fits now.
        e.exit(T0, 3 * MS);
        e.admit(TaskId(4), &res(MS, 100 * MS, 100 * MS), 3 * MS);
        assert!(e.policy().tasks[4].res.is_some());
        // With bound = 100 the 1/100 of the first try fits; on two CPUs at 95 % too.
        for (cpus, bound) in [(1, 100), (2, 95)] {
            let mut e = test_core(Cbs::new(cpus, bound, false), cpus);
            e.admit(T0, &res(5 * MS, 10 * MS, 10 * MS), 0);
            e.admit(T1, &res(45 * MS, 100 * MS, 100 * MS), 0);
            e.admit(T2, &res(MS, 100 * MS, 100 * MS), 0);
            assert_eq!(counter(&e, "refused"), 0, "{cpus} CPUs, bound {bound}");
        }
    }

    #[test]
    fn the_cbs_wake_up_rule_keeps_the_deadline_when_the_runtime_left_fits_and_renews_it_otherwise() {
        let mut e = test_core(Cbs::new(1, 95, false), 1);
        e.admit(T0, &res(2 * MS, 10 * MS, 10 * MS), 0);
        e.wake(T0, 0);
        assert_eq!(e.pick(0, 0), d(T0, Some(2 * MS)));
        e.stop(T0, MS, Stop::Blocked, MS);
        // At 4 ms: 1 ms left until 10 ms, 1/6 ≤ 2/10: kept.
        e.wake(T0, 4 * MS);
        assert_eq!(e.policy().tasks[0].deadline, 10 * MS);
        assert_eq!(e.pick(0, 4 * MS), d(T0, Some(MS)));
        e.stop(T0, MS / 2, Stop::Blocked, 4 * MS + MS / 2);
        // At 7.5 ms: 0.5 ms left in 2.5 ms, exactly 2/10: kept (only a larger ratio renews).
        e.wake(T0, 7 * MS + MS / 2);
        assert_eq!(e.pick(0, 7 * MS + MS / 2), d(T0, Some(MS / 2)));
        assert_eq!(e.policy().tasks[0].deadline, 10 * MS);
        e.stop(T0, 0, Stop::Blocked, 7 * MS + MS / 2);
        // At 8 ms: 0.5 ms in 2 ms is 1/4 > 2/10: a new deadline 8 + 10 ms and a full runtime.
        e.wake(T0, 8 * MS);
        assert_eq!(e.policy().tasks[0].deadline, 18 * MS);
        assert_eq!(e.pick(0, 8 * MS), d(T0, Some(2 * MS)));
        e.stop(T0, MS / 10, Stop::Blocked, 8 * MS + MS / 10);
        // At 19 ms the deadline (18 ms) has passed: renewed, 29 ms and 2 ms.
        e.wake(T0, 19 * MS);
        assert_eq!(e.policy().tasks[0].deadline, 29 * MS);
        assert_eq!(e.pick(0, 19 * MS), d(T0, Some(2 * MS)));
        assert_eq!(counter(&e, "throttled"), 0);
    }

    #[test]
    fn a_constrained_deadline_gets_the_revised_wake_up_rule_and_waits_for_its_next_period() {
        // 2 ms within 5 ms, every 10 ms.
        let mut e = test_core(Cbs::new(1, 95, false), 1);
        e.admit(T0, &res(2 * MS, 5 * MS, 10 * MS), 0);
        e.wake(T0, 0);
        assert_eq!(e.pick(0, 0), d(T0, Some(2 * MS)));
        e.stop(T0, MS, Stop::Blocked, MS);
        // At 3 ms: 1 ms left in 2 ms is 1/2 > 2/5. Not renewed (that would give it 2 ms in every
        // 5): it keeps its deadline, with runtime 2/5 · (5 − 3) ms = 0.8 ms.
        e.wake(T0, 3 * MS);
        assert_eq!(e.policy().tasks[0].deadline, 5 * MS);
        assert_eq!(e.pick(0, 3 * MS), d(T0, Some(800_000)));
        e.stop(T0, 300_000, Stop::Blocked, 3 * MS + 300_000);
        // At 6 ms, past its deadline and before its next period (5 − 5 + 10 = 10 ms): throttled.
        e.wake(T0, 6 * MS);
        assert!(e.policy().tasks[0].throttled);
        assert_eq!(e.pick(0, 6 * MS), None);
        assert_eq!(e.next_timer(), Some(10 * MS));
        // At 10 ms: replenished from runtime 0: 2 ms, deadline 5 + 10 = 15 ms.
        assert!(e.timer(10 * MS));
        assert_eq!(e.policy().tasks[0].deadline, 15 * MS);
        assert_eq!(e.pick(0, 10 * MS), d(T0, Some(2 * MS)));
        assert_eq!((counter(&e, "throttled"), counter(&e, "replenished")), (1, 1));
    }

    #[test]
    fn grub_lets_a_lone_reserved_task_use_idle_time_and_without_it_the_task_is_throttled() {
        // u = ⌊2/10 · 2^20⌋ = 209715, Umax = ⌊0.95 · 2^20⌋ = 996147. Alone, GRUB depletes the
        // runtime at u/Umax: 2 ms last ⌈2 ms · 996147/209715⌉ = 9,500,008 ns (9.5 ms but for the
        // fixed point), then throttled until 10 ms.
        for (reclaim, ran) in [(true, 9_500_008), (false, 2 * MS)] {
            let mut e = test_core(Cbs::new(1, 95, reclaim), 1);
            e.admit(T0, &res(2 * MS, 10 * MS, 10 * MS), 0);
            e.wake(T0, 0);
            for k in 0..2 {
                let p = k * 10 * MS;
                assert_eq!(e.pick(0, p), d(T0, Some(ran)), "reclaim {reclaim}, period {k}");
                e.stop(T0, ran, Stop::SliceEnd, p + ran);
                assert!(e.policy().tasks[0].throttled);
                assert_eq!(e.pick(0, p + ran), None, "throttled, the CPU idles");
                assert_eq!(e.next_timer(), Some(p + 10 * MS));
                assert!(e.timer(p + 10 * MS));
                // The idle CPU is asked again at once.
                assert!(e.requested(0));
                e.clear_request(0);
            }
        }
    }

    #[test]
    fn grub_depletes_at_the_active_bandwidth_until_a_blocked_task_reaches_its_zero_lag_time() {
        // Two 2/10 tasks on one CPU: Uact = 2 · 209715 = 419430, so a 2 ms runtime lasts
        // ⌈2 ms · 996147/419430⌉ = 4,750,004 ns.
        let mut e = test_core(Cbs::new(1, 95, true), 1);
        e.admit(T0, &res(2 * MS, 10 * MS, 10 * MS), 0);
        e.admit(T1, &res(2 * MS, 10 * MS, 10 * MS), 0);
        e.wake(T0, 0);
        e.wake(T1, 0);
        assert_eq!(e.pick(0, 0), d(T0, Some(4_750_004)));
        // 1 ms billed costs ⌊1 ms · 419430/996147⌋ = 421,052 ns: 1,578,948 left. Blocking, task 0
        // stays active until its 0-lag time 10 ms − 1,578,948 · 10/2 = 2,105,260 ns.
        e.stop(T0, MS, Stop::Blocked, MS);
        assert_eq!(e.policy().tasks[0].runtime, 1_578_948);
        assert_eq!(e.next_timer(), Some(2_105_260));
        assert_eq!(e.pick(0, MS), d(T1, Some(4_750_004)));
        assert!(!e.timer(2_105_260));
        assert_eq!(e.policy().active_bw, 209_715, "task 0 is inactive");
        // Task 1's stint keeps the rate it was dispatched with: 2 ms cost ⌊2 ms · 419430/996147⌋ =
        // 842,104 ns; 1,157,896 left, which alone last ⌈1,157,896 · 996147/209715⌉ = 5,500,011 ns.
        e.stop(T1, 2 * MS, Stop::Preempted, 3 * MS);
        assert_eq!(e.pick(0, 3 * MS), d(T1, Some(5_500_011)));
        // Task 0 wakes at 4 ms: active again; 1,578,948 ns in the 6 ms to its deadline is more than
        // 2/10, so a new period: deadline 14 ms.
        e.wake(T0, 4 * MS);
        assert_eq!(e.policy().active_bw, 419_430);
        assert_eq!(e.policy().tasks[0].deadline, 14 * MS);
    }

    #[test]
    fn on_two_cpus_the_two_earliest_deadlines_run_and_a_woken_task_preempts_the_latest() {
        let mut e = test_core(Cbs::new(2, 95, false), 2);
        for (i, dl) in [(0, 30), (1, 20), (2, 10)] {
            e.admit(TaskId(i), &res(MS, dl * MS, dl * MS), 0);
        }
        e.admit(T3, &TaskParams::default(), 0);
        e.wake(T3, 0);
        e.wake(T0, 0);
        e.wake(T1, 0);
        assert_eq!(e.pick(0, 0).unwrap().task, T1);
        assert_eq!(e.pick(1, 0).unwrap().task, T0);
        let running = [(0, T1), (1, T0)];
        // Task 2 (deadline 1 + 10 ms) preempts the CPU with the latest deadline (30 ms).
        e.wake(T2, 1);
        assert_eq!(e.policy().preempt_for(T2, None, &running, e.view()), Some(1));
        // A task without a reservation never preempts, and is the first victim.
        assert_eq!(e.policy().preempt_for(T3, None, &running, e.view()), None);
        e.stop(T0, 1, Stop::Preempted, 1);
        assert_eq!(e.pick(1, 1).unwrap().task, T2);
        e.stop(T1, 1, Stop::Blocked, 1);
        // CPU 0: task 0 (30 ms) before the background task.
        assert_eq!(e.pick(0, 1).unwrap().task, T0);
        e.stop(T0, 1, Stop::Blocked, 2);
        assert_eq!(e.pick(0, 2), d(T3, None));
        e.wake(T1, 3);
        assert_eq!(e.policy().preempt_for(T1, Some(1), &[(0, T3), (1, T2)], e.view()), Some(0));
        // Affinity: a reserved task allowed only on CPU 1 is not picked on CPU 0.
        e.admit(TaskId(5), &TaskParams { cpus: Some(vec![1]), ..res(MS, 5 * MS, 5 * MS) }, 3);
        e.wake(TaskId(5), 3);
        e.stop(T3, 3, Stop::Preempted, 3);
        assert_eq!(e.pick(0, 3).unwrap().task, T1);
    }

    #[test]
    fn an_overrun_is_paid_back_period_by_period() {
        // A 2/10 task billed 5 ms in one stint (tick billing can bill past the slice): runtime
        // −3 ms. Throttled until 10 ms, then replenished until positive: twice, runtime −3 + 2 + 2
        // = 1 ms and deadline 10 + 2 · 10 = 30 ms.
        let mut e = test_core(Cbs::new(1, 95, false), 1);
        e.admit(T0, &res(2 * MS, 10 * MS, 10 * MS), 0);
        e.wake(T0, 0);
        assert_eq!(e.pick(0, 0), d(T0, Some(2 * MS)));
        e.stop(T0, 5 * MS, Stop::Preempted, 5 * MS);
        assert_eq!(e.next_timer(), Some(10 * MS));
        assert!(e.timer(10 * MS));
        assert_eq!(e.policy().tasks[0].deadline, 30 * MS);
        assert_eq!(e.pick(0, 10 * MS), d(T0, Some(MS)));
        assert_eq!((counter(&e, "throttled"), counter(&e, "replenished")), (1, 1));
    }

    #[test]
    fn new_parameters_are_admitted_against_the_others_and_refused_ones_change_nothing() {
        // 50 % and 40 % on one CPU; task 1 asks for 50 %: 50 + 50 > 95, refused, it keeps 40 %.
        let mut e = test_core(Cbs::new(1, 95, false), 1);
        e.admit(T0, &res(5 * MS, 10 * MS, 10 * MS), 0);
        e.admit(T1, &res(4 * MS, 10 * MS, 10 * MS), 0);
        e.set_params(T1, &res(5 * MS, 10 * MS, 10 * MS), 0);
        assert_eq!(counter(&e, "refused"), 1);
        assert_eq!(
            e.policy().tasks[1].res,
            Some(Reservation { runtime: 4 * MS, deadline: 10 * MS, period: 10 * MS })
        );
        // 45 % fits (its own 40 % given back first): 50 + 45 = 95.
        e.set_params(T1, &res(45 * MS, 100 * MS, 100 * MS), 0);
        assert_eq!(counter(&e, "refused"), 1);
        assert_eq!(e.policy().total_bw, 524_288 + 471_859);
        // A task that gives up its reservation runs in the background from then on.
        e.set_params(T0, &TaskParams::default(), 0);
        e.wake(T0, 0);
        e.wake(T1, 0);
        assert_eq!(e.pick(0, 0), d(T1, Some(45 * MS)));
        e.stop(T1, MS, Stop::Blocked, MS);
        assert_eq!(e.pick(0, MS), d(T0, None));
    }

    /// Runs a lone CPU hog with a 2/10 reservation for one second through the core as a driver
    /// would (slice ends, the policy's timer, a tick each millisecond, which it does not use): the
    /// CPU time it gets.
    fn lone_hog_for_a_second(reclaim: bool) -> Nanos {
        let mut e = test_core(Cbs::new(1, 95, reclaim), 1);
        e.admit(T0, &res(2 * MS, 10 * MS, 10 * MS), 0);
        e.wake(T0, 0);
        let (mut now, mut ran) = (0, 0);
        let mut on: Option<(Nanos, Nanos)> = None; // (since, slice)
        let end = 1_000 * MS;
        while now < end {
            while let Some(c) = e.next_decision() {
                if let Some((since, _)) = on.take() {
                    e.stop(T0, now - since, Stop::Preempted, now);
                    ran += now - since;
                }
                if let Some(got) = e.pick(c, now) {
                    on = Some((now, got.slice.unwrap()));
                }
            }
            let tick = (now / MS + 1) * MS;
            let slice_end = on.map_or(Nanos::MAX, |(since, slice)| since + slice);
            now = tick.min(slice_end).min(e.next_timer().unwrap_or(Nanos::MAX)).min(end);
            if let Some((since, _)) = on.filter(|_| slice_end <= now) {
                e.stop(T0, now - since, Stop::SliceEnd, now);
                ran += now - since;
                on = None;
            }
            if e.next_timer().is_some_and(|t| t <= now) {
                e.timer(now);
            }
            if now % MS == 0 {
                e.tick(0, now);
            }
        }
        ran + on.map_or(0, |(since, _)| now - since)
    }

    #[test]
    fn over_a_second_a_lone_hog_gets_its_bandwidth_or_with_grub_95_percent() {
        // Each period: 2 ms; with GRUB 9,500,008 ns (2 ms · 996147/209715, rounded up), replenished
        // at each 10 ms and picked up at once. 100 periods.
        assert_eq!(lone_hog_for_a_second(false), 100 * 2 * MS);
        assert_eq!(lone_hog_for_a_second(true), 100 * 9_500_008);
    }

    #[test]
    fn partitioned_each_cpu_throttles_and_replenishes_its_own_tasks() {
        // partition = "affinity": a 2/10 task bound to CPU 1 of two, alone there.
        let mut o = crate::Options::new();
        o.insert("partition".into(), crate::OptValue::Str("affinity".into()));
        let mut e = crate::build("cbs", &o, 2).unwrap();
        // Every decision the core asks for at `now` (no CPU runs anything when it asks here).
        let settle = |e: &mut crate::Core, now| {
            let mut got = Vec::new();
            while let Some(c) = e.next_decision() {
                got.push((c, e.pick(c, now)));
            }
            got
        };
        e.admit(T0, &TaskParams { cpus: Some(vec![1]), ..res(2 * MS, 10 * MS, 10 * MS) }, 0);
        e.wake(T0, 0);
        assert!(settle(&mut e, 0).contains(&(1, d(T0, Some(2 * MS)))));
        e.stop(T0, 2 * MS, Stop::SliceEnd, 2 * MS);
        assert!(settle(&mut e, 2 * MS).iter().all(|(_, p)| p.is_none()), "throttled");
        assert_eq!(e.next_timer(), Some(10 * MS));
        e.timer(10 * MS);
        // The replenished task waits: the idle CPUs look again, CPU 0 finds nothing, CPU 1 its task.
        assert_eq!(settle(&mut e, 10 * MS), [(0, None), (1, d(T0, Some(2 * MS)))]);
    }

    /// A reservation for some of the random world's tasks (by id and a draw), to drive `cbs`'s own
    /// rules through the core, which checks the protocol on every call (the conformance suite's
    /// world gives no task a reservation).
    fn reserved(p: TaskParams, t: TaskId, draw: u64) -> TaskParams {
        if (t.0 + draw as u32) % 3 == 0 {
            return p;
        }
        let period = (5 + (draw * 7 + u64::from(t.0)) % 20) * MS;
        let runtime = (1 + draw % 4) * MS;
        let deadline = if draw % 2 == 0 { period } else { (period / 2).max(runtime) };
        TaskParams { reservation: Some(Reservation { runtime, deadline, period }), ..p }
    }

    #[test]
    fn random_worlds_with_reservations_keep_the_protocol_and_never_run_a_throttled_task() {
        use crate::testing::{Happening, Shape, World};
        let mut refused = 0;
        for (cpus, reclaim, seed) in [(1, false, 1), (1, true, 2), (2, false, 3), (3, true, 4), (4, true, 5)]
        {
            let mut e = test_core(Cbs::new(cpus, 95, reclaim), cpus);
            let shape = Shape { cpus, max_tasks: 2 + 2 * cpus, bound: false, constraints: false };
            let mut world = World::new(seed, shape);
            let (mut dispatches, mut draws) = (0, 0u64);
            for _ in 0..20_000 {
                let h = world.step();
                let now = world.now();
                draws += 1;
                match h {
                    Happening::Admit(t, p) => {
                        e.admit(t, &reserved(p, t, draws), now);
                        e.wake(t, now);
                    }
                    Happening::Wake(t) => e.wake(t, now),
                    Happening::Stop { task, ran, why, woke_at_once, .. } => {
                        e.stop(task, ran, why, now);
                        if woke_at_once {
                            e.wake(task, now);
                        }
                    }
                    Happening::Exit(t) => e.exit(t, now),
                    Happening::Constraint(..) | Happening::Interact(_) => {}
                    Happening::Params(t, p) => e.set_params(t, &reserved(p, t, draws), now),
                    Happening::Tick(c) => e.tick(c, now),
                    Happening::Advance(_) => e.advance_to(now),
                }
                if e.next_timer().is_some_and(|t| t <= now) {
                    e.timer(now);
                }
                while let Some(c) = e.next_decision() {
                    if e.view().running(c).is_some() {
                        let (t, ran) = world.preempted(c);
                        e.stop(t, ran, Stop::Preempted, now);
                    }
                    if let Some(got) = e.pick(c, now) {
                        let st = &e.policy().tasks[got.task.idx()];
                        assert!(!st.throttled, "seed {seed}: a throttled task was dispatched");
                        assert_eq!(st.res.is_some(), got.slice.is_some(), "seed {seed}: slice {got:?}");
                        world.dispatched(c, got.task, got.slice);
                        dispatches += 1;
                    }
                }
                let p = e.policy();
                assert!(p.total_bw <= p.capacity() && p.active_bw <= p.total_bw, "seed {seed}");
            }
            assert!(dispatches > 1_000, "seed {seed}: {dispatches} dispatches");
            for c in ["throttled", "replenished"] {
                assert!(counter(&e, c) > 0, "seed {seed}: no {c}");
            }
            refused += counter(&e, "refused");
        }
        assert!(refused > 0, "admission never refused a reservation");
    }
}
