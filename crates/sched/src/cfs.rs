//! Linux's fair class as of 6.1, the last long-term release before EEVDF: CFS, the Completely Fair
//! Scheduler (Molnar, 2007), global on N CPUs.
//!
//! **Specification.** `kernel/sched/fair.c`, `features.h`, `core.c` and `sched.h` of Linux 6.1
//! (Debian's `linux-source-6.1`; read to learn the rules, nothing is copied), with its default
//! features: `GENTLE_FAIR_SLEEPERS`, `START_DEBIT`, `WAKEUP_PREEMPTION`, `ALT_PERIOD`, `BASE_SLICE`
//! on, `HRTICK` and `NEXT_BUDDY` off, and the default `SCHED_TUNABLESCALING_LOG`: every tunable is
//! its normalized value × (1 + log₂ min(CPUs, 8)) (`get_update_sysctl_factor`, `update_sysctl`).
//!
//! **Weights.** As [`crate::eevdf`]: a task's nice level is its `nice` when given, else the level of
//! its share ([`share_level`]: share `nice0_share` is nice 0, each factor 1.25 one level), and its
//! weight is `sched_prio_to_weight` ([`WEIGHTS`], nice 0 = 1024). A task with share 0, or with a
//! priority below the highest one admitted so far, is `SCHED_IDLE` (weight 3, [`IDLE_WEIGHT`]),
//! whatever its `nice`.
//!
//! **State.** Per task its virtual runtime `v` (for a running task, at its dispatch) and the CPU
//! time it has been billed since it was picked (`sum_exec_runtime − prev_sum_exec_runtime`). The
//! queue: its tasks ordered by `v` (the kernel's red-black tree), their number and total weight,
//! and `min_vruntime`.
//!
//! **Rules.**
//! * A billed task's `v` advances by `charged · 1024 / w` (`calc_delta_fair`, rounded down).
//! * `min_vruntime` is the smallest `v` of the running tasks and the queue's leftmost, but never
//!   decreases (`update_min_vruntime`); it is updated at every wake-up, stop and pick.
//! * A CPU runs the queued task with the smallest `v` (`pick_next_entity`), except the skip buddy
//!   below; the next and last buddies (`NEXT_BUDDY` is off; `LAST_BUDDY` only acts with 8 or more
//!   tasks) are left out.
//! * The period is `__sched_period(n)`: `latency` (6 ms × factor) for `n ≤ sched_nr_latency`
//!   (`⌈latency / min_granularity⌉` = 8), else `n × min_granularity` (0.75 ms × factor). A task's
//!   ideal slice is `sched_slice`: period × `w / Σw`, where `n` and `Σw` count the queue and the
//!   running tasks (and the task itself when it is not among them); at least `min_granularity`
//!   (`BASE_SLICE`; 0.75 ms, unscaled, for a `SCHED_IDLE` task among others).
//! * Tick preemption (`check_preempt_tick`, called by `entity_tick` when the queue has more than one
//!   task): the running task is preempted when it has run more than its ideal slice since it was
//!   picked, or, once it has run `min_granularity`, when its `v` exceeds the leftmost's by more than
//!   its ideal slice (the kernel compares that virtual difference with the real slice, and so does
//!   this policy). Without `HRTICK` that check happens only at the tick: a dispatch's slice runs to
//!   the first multiple of `tick` at which the check would hold with the queue as it is; when the
//!   slice ends the check is made again with the queue as it is then, and if it does not hold the
//!   task is picked again on its CPU, its time since it was picked running on. A task alone gets a
//!   slice to the first tick at which it has run `min_granularity` and then one tick at a time, so
//!   that a task that joins later is seen at the next tick, as by the kernel.
//! * Wake-up preemption (`check_preempt_wakeup`): a woken task preempts a `SCHED_IDLE` one (unless it
//!   is one too); a `SCHED_IDLE` task never preempts; otherwise it preempts when the running task's
//!   current `v` exceeds its own by more than `wakeup_gran`, the wake-up granularity (1 ms × factor)
//!   as virtual time of the woken task's weight (`wakeup_preempt_entity`, `wakeup_gran`). CPUs are
//!   tried from the woken task's previous CPU, then in number order.
//! * Placement (`place_entity`): a new task joins at `min_vruntime + sched_vslice` (`START_DEBIT`;
//!   its ideal slice with itself counted, as virtual time of its weight); a woken task at
//!   `max(v, min_vruntime − latency/2)` (`GENTLE_FAIR_SLEEPERS`; `min_granularity/2` for a
//!   `SCHED_IDLE` task). Its `v` is kept across the sleep otherwise (only a sleep over 2^63/1024 ns,
//!   104 days, resets it: left out).
//! * A yielding task (`yield_task_fair`, unless it is alone) becomes the skip buddy: a CPU that
//!   would pick it takes the next task in `v` order instead, if that one's `v` exceeds the skip
//!   buddy's by no more than `wakeup_gran` of the skip buddy (`pick_next_entity` with
//!   `wakeup_preempt_entity(second, left) < 1`). The buddy is cleared when it is picked or leaves.
//! * A new weight (`reweight_entity`) keeps `v`; a running task takes it when it stops.
//!
//! **Tie-break.** Equal `v` go in the order the tasks joined the queue (`entity_before` is strict,
//! so the tree puts an equal key to the right).
//!
//! **N CPUs.** One global queue, as [`crate::eevdf`] (the per-CPU run queues with wake-up
//! placement and load balancing are not built). The period and slice are the kernel's for a CPU
//! whose run queue holds its part of the machine's load: `n` is `⌈n_all / CPUs⌉` and `Σw` is
//! `Σw_all / CPUs`, so that slice = period(⌈n_all/CPUs⌉) × `w · CPUs / Σw_all`, at most the period
//! (exactly the kernel's on one CPU). The tunables are scaled by the CPUs the policy is built for.
//! With affinity, a CPU picks the leftmost task allowed on it; the tick check compares with the
//! leftmost of the whole queue.
//!
//! **Options.** `latency` (6 ms), `min_granularity` (0.75 ms), `wakeup_granularity` (1 ms), each
//! before scaling by the factor above; `tick` (1 ms: set it to 1/`hz` of the machine); `nice0_share`
//! (1).
//!
//! **Left out.** Per-CPU run queues, `select_task_rq_fair`, load balancing and NUMA; control groups;
//! `SCHED_BATCH`; bandwidth control; `HRTICK`; the next and last buddies; `child_runs_first`;
//! PELT load averages; the inverse-weight fixed-point arithmetic of `__calc_delta` (this policy
//! divides exactly, rounding down); `min_vruntime`'s wrap-around (virtual times are `i64` from 0).
//! A running task's progress, for decisions taken while it runs, is the time since its dispatch;
//! what counts once it stops is what the driver billed.

use std::collections::BTreeSet;

use crate::eevdf::{IDLE_WEIGHT, NICE_0, WEIGHTS};
use crate::linux::{self, share_level, FairLevel, FairMeaning};
use crate::registry::{opt, Entry, OptionDoc, Pace, Slice};
use crate::{
    clamp_nanos, slot, Availability, CpuId, Dispatch, Nanos, OptReader, Policy, PolicyError, Running, Stop,
    TaskId, TaskParams, View, MS,
};

/// `normalized_sysctl_sched_latency`.
pub const LATENCY: Nanos = 6 * MS;
/// `normalized_sysctl_sched_min_granularity`.
pub const MIN_GRANULARITY: Nanos = 750_000;
/// `normalized_sysctl_sched_wakeup_granularity`.
pub const WAKEUP_GRANULARITY: Nanos = MS;
/// `sysctl_sched_idle_min_granularity` (not scaled).
pub const IDLE_MIN_GRANULARITY: Nanos = 750_000;

/// `get_update_sysctl_factor` with `SCHED_TUNABLESCALING_LOG`: 1 + log₂ min(cpus, 8).
pub fn factor(cpus: usize) -> u64 {
    u64::from(1 + (cpus.clamp(1, 8) as u32).ilog2())
}

/// Configuration of [`Cfs`] (the tunables already scaled).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CfsConfig {
    /// `sysctl_sched_latency`.
    pub latency: Nanos,
    /// `sysctl_sched_min_granularity`.
    pub min_granularity: Nanos,
    /// `sysctl_sched_wakeup_granularity`.
    pub wakeup_granularity: Nanos,
    /// The clock tick (`TICK_NSEC`): preemption is checked on its grid.
    pub tick: Nanos,
    /// The share of a nice-0 task.
    pub nice0_share: u32,
}

impl CfsConfig {
    /// The kernel's defaults on `cpus` CPUs with a 1 ms tick.
    pub fn linux(cpus: usize) -> Self {
        let f = factor(cpus);
        CfsConfig {
            latency: LATENCY * f,
            min_granularity: MIN_GRANULARITY * f,
            wakeup_granularity: WAKEUP_GRANULARITY * f,
            tick: MS,
            nice0_share: 1,
        }
    }

    /// From scenario options: `latency`, `min_granularity`, `wakeup_granularity` (each before
    /// scaling), `tick`, `nice0_share`.
    pub fn from_options(o: &mut OptReader<'_>, cpus: usize) -> Result<Self, PolicyError> {
        let f = factor(cpus);
        let scaled = |t: Nanos| clamp_nanos(u128::from(t) * u128::from(f));
        Ok(CfsConfig {
            latency: scaled(o.slice("latency", LATENCY)?),
            min_granularity: scaled(o.slice("min_granularity", MIN_GRANULARITY)?),
            wakeup_granularity: scaled(o.time("wakeup_granularity", WAKEUP_GRANULARITY)?),
            tick: o.slice("tick", MS)?,
            nice0_share: linux::nice0(o, "nice0_share")?,
        })
    }

    /// `sched_nr_latency`: ⌈latency / min_granularity⌉.
    pub fn nr_latency(&self) -> u64 {
        self.latency.div_ceil(self.min_granularity.max(1))
    }

    /// `__sched_period(nr)`.
    pub fn period(&self, nr: u64) -> Nanos {
        if nr > self.nr_latency() {
            clamp_nanos(u128::from(nr) * u128::from(self.min_granularity))
        } else {
            self.latency
        }
    }
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
enum State {
    /// Not runnable (or not admitted, or gone).
    #[default]
    Asleep,
    /// In the queue.
    Queued,
    /// On a CPU.
    Running,
}

#[derive(Clone, Debug, Default)]
struct Ent {
    live: bool,
    w: u64,
    idle: bool,
    /// Virtual runtime; for a running task, at its dispatch.
    v: i64,
    /// CPU time billed since it was picked (not resumed).
    ran: Nanos,
    state: State,
    /// Position among equal `v` in the queue.
    seq: u64,
    /// Admitted and never woken: the next wake places it as a new task.
    fresh: bool,
    /// A new weight given while it ran.
    pending: Option<(u64, bool)>,
}

/// The CFS policy.
#[derive(Debug)]
pub struct Cfs {
    cfg: CfsConfig,
    cpus: u64,
    ents: Vec<Ent>,
    /// Queued tasks by (`v`, join order).
    queue: BTreeSet<(i64, u64, TaskId)>,
    /// `Σ w` of the queued tasks.
    queued_w: u64,
    min_vruntime: i64,
    seq: u64,
    /// The highest priority admitted so far (tasks below it are `SCHED_IDLE`).
    top: Option<i32>,
    /// Per CPU: the task whose slice ended there without the tick check holding (it runs on).
    resume: Vec<Option<TaskId>>,
    /// The skip buddy (`cfs_rq->skip`).
    skip: Option<TaskId>,
    tick_preemptions: u64,
}

/// `calc_delta_fair`: real time `delta` as virtual time of a task of weight `w`.
fn vdelta(delta: Nanos, w: u64) -> i64 {
    (u128::from(delta) * u128::from(NICE_0) / u128::from(w.max(1))).min(i64::MAX as u128) as i64
}

/// Real time for a task of weight `w` to advance `vd` in virtual time (rounded up).
fn real_of(vd: i64, w: u64) -> Nanos {
    if vd <= 0 {
        return 0;
    }
    clamp_nanos((u128::from(vd as u64) * u128::from(w)).div_ceil(u128::from(NICE_0)))
}

impl Cfs {
    /// A CFS scheduler for `cpus` CPUs (one queue for all).
    pub fn new(cfg: CfsConfig, cpus: usize) -> Self {
        Cfs {
            cfg,
            cpus: cpus.max(1) as u64,
            ents: Vec::new(),
            queue: BTreeSet::new(),
            queued_w: 0,
            min_vruntime: 0,
            seq: 0,
            top: None,
            resume: vec![None; cpus.max(1)],
            skip: None,
            tick_preemptions: 0,
        }
    }

    /// The weight and idleness a task's parameters give it: `SCHED_IDLE` for share 0 or below the
    /// highest priority ([`share_level`]), else its `nice` if given, else the level of its share.
    fn weight_of(&self, p: &TaskParams) -> (u64, bool) {
        let below_top = self.top.is_some_and(|top| p.priority < top);
        match (share_level(p.share, self.cfg.nice0_share, below_top), p.nice) {
            (FairLevel::Idle, _) => (IDLE_WEIGHT, true),
            (_, Some(n)) => (WEIGHTS[(i32::from(n).clamp(-20, 19) + 20) as usize], false),
            (level, None) => (level.weight(), false),
        }
    }

    /// A task's current `v`: for one running on `cpu`, its `v` at dispatch plus the time since.
    fn v_now(&self, t: TaskId, cpu: CpuId, v: &View) -> i64 {
        let e = &self.ents[t.idx()];
        e.v.saturating_add(vdelta(v.now().saturating_sub(v.dispatched_at(cpu)), e.w))
    }

    /// The number of tasks and their total weight, queued and running.
    fn load(&self, v: &View) -> (u64, u64) {
        let mut n = self.queue.len() as u64;
        let mut w = self.queued_w;
        for (_, t) in v.running_tasks() {
            n += 1;
            w = w.saturating_add(self.ents[t.idx()].w);
        }
        (n, w)
    }

    /// `sched_slice` of a task of weight `w` (idle or not) when the load is `n` tasks of total
    /// weight `sum_w` (the task counted), on this policy's share of the CPUs (see the doc).
    fn sched_slice(&self, w: u64, idle: bool, n: u64, sum_w: u64, all_idle: bool) -> Nanos {
        let nr = n.div_ceil(self.cpus).max(1);
        let period = self.cfg.period(nr);
        let share = u128::from(period) * u128::from(w) * u128::from(self.cpus) / u128::from(sum_w.max(1));
        let slice = clamp_nanos(share).min(period);
        let min_gran = if idle && !all_idle { IDLE_MIN_GRANULARITY } else { self.cfg.min_granularity };
        slice.max(min_gran)
    }

    /// Whether every task queued or running is `SCHED_IDLE` (`sched_idle_cfs_rq`).
    fn all_idle(&self, v: &View) -> bool {
        self.queue.iter().all(|&(_, _, t)| self.ents[t.idx()].idle)
            && v.running_tasks().all(|(_, t)| self.ents[t.idx()].idle)
    }

    /// The ideal slice of task `t`, which is queued, running, or about to be counted (`extra`).
    fn ideal(&self, t: TaskId, v: &View, extra: bool) -> Nanos {
        let (mut n, mut w) = self.load(v);
        let e = &self.ents[t.idx()];
        if extra {
            n += 1;
            w = w.saturating_add(e.w);
        }
        let all_idle = e.idle && self.all_idle(v);
        self.sched_slice(e.w, e.idle, n, w, all_idle)
    }

    /// `update_min_vruntime`, with `also` (a task just off its CPU, still the kernel's `curr`) counted.
    fn update_min_vruntime(&mut self, v: &View, also: Option<i64>) {
        let mut m = self.queue.first().map(|&(x, _, _)| x);
        for (cpu, t) in v.running_tasks() {
            let x = self.v_now(t, cpu, v);
            m = Some(m.map_or(x, |y| y.min(x)));
        }
        if let Some(x) = also {
            m = Some(m.map_or(x, |y| y.min(x)));
        }
        if let Some(x) = m {
            self.min_vruntime = self.min_vruntime.max(x);
        }
    }

    fn insert(&mut self, t: TaskId) {
        self.seq += 1;
        let e = &mut self.ents[t.idx()];
        e.seq = self.seq;
        e.state = State::Queued;
        self.queue.insert((e.v, e.seq, t));
        self.queued_w = self.queued_w.saturating_add(e.w);
    }

    fn remove(&mut self, t: TaskId) {
        let e = &self.ents[t.idx()];
        if self.queue.remove(&(e.v, e.seq, t)) {
            self.queued_w -= e.w;
        }
    }

    /// `wakeup_gran`: the wake-up granularity as virtual time of a task of weight `w`.
    fn wakeup_gran(&self, w: u64) -> i64 {
        vdelta(self.cfg.wakeup_granularity, w)
    }

    /// `place_entity`: where an asleep task joins (`initial`: a new one), without joining.
    fn placed(&self, t: TaskId, v: &View) -> i64 {
        let e = &self.ents[t.idx()];
        if e.fresh {
            let vslice = vdelta(self.ideal(t, v, true), e.w);
            return self.min_vruntime.saturating_add(vslice);
        }
        let thresh = if e.idle { self.cfg.min_granularity } else { self.cfg.latency } / 2;
        let floor = self.min_vruntime.saturating_sub(i64::try_from(thresh).unwrap_or(i64::MAX));
        e.v.max(floor)
    }

    /// The time from `now` to the first tick at which `check_preempt_tick` would hold for task `t`
    /// picked with `ran` billed since its pick, at virtual runtime `vt`, with the queue as it is.
    fn slice_for(&self, t: TaskId, v: &View) -> Nanos {
        let now = v.now();
        let e = &self.ents[t.idx()];
        let ideal = self.ideal(t, v, true);
        let gran = self.cfg.min_granularity;
        let need = match self.queue.first() {
            // Alone: nothing to check against; look again at every tick once it has run min_granularity.
            None => gran.saturating_sub(e.ran),
            Some(&(vl, _, _)) => {
                // (a) more than its ideal slice since it was picked.
                let a = ideal.saturating_sub(e.ran).saturating_add(1);
                // (b) after min_granularity, v − leftmost > ideal.
                let x = i64::try_from(ideal).unwrap_or(i64::MAX).saturating_add(vl).saturating_sub(e.v);
                let b = real_of(x.saturating_add(1), e.w).max(gran.saturating_sub(e.ran));
                a.min(b)
            }
        };
        let tick = self.cfg.tick;
        let end = now.saturating_add(need.max(1));
        end.div_ceil(tick).saturating_mul(tick).saturating_sub(now).max(1)
    }

    /// `check_preempt_tick` for `t`, just off its CPU at virtual runtime `vt`, with `ran` billed.
    fn tick_preempts(&self, t: TaskId, v: &View) -> bool {
        let Some(&(vl, _, _)) = self.queue.first() else {
            return false; // entity_tick checks only when the queue holds more than one task
        };
        let e = &self.ents[t.idx()];
        let ideal = self.ideal(t, v, true);
        if e.ran > ideal {
            return true;
        }
        if e.ran < self.cfg.min_granularity {
            return false;
        }
        e.v.saturating_sub(vl) > i64::try_from(ideal).unwrap_or(i64::MAX)
    }

    /// Give a task a new weight (`reweight_entity`: `v` is kept). A running task takes it when it stops.
    fn reweight(&mut self, t: TaskId, to: (u64, bool)) {
        let e = &self.ents[t.idx()];
        if (e.w, e.idle) == to || !e.live {
            return;
        }
        match e.state {
            State::Running => self.ents[t.idx()].pending = Some(to),
            State::Asleep => (self.ents[t.idx()].w, self.ents[t.idx()].idle) = to,
            State::Queued => {
                self.queued_w -= e.w;
                self.queued_w = self.queued_w.saturating_add(to.0);
                (self.ents[t.idx()].w, self.ents[t.idx()].idle) = to;
            }
        }
    }

    /// A task of a higher priority than any before makes every task below it `SCHED_IDLE`; task
    /// `t` is taken with parameters `p` (those it is being given).
    fn raise_top(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        if self.top.is_some_and(|top| top >= p.priority) {
            return;
        }
        self.top = Some(p.priority);
        for i in 0..self.ents.len() {
            if self.ents[i].live {
                let x = TaskId(i as u32);
                let to = self.weight_of(if x == t { p } else { v.params(x) });
                self.reweight(x, to);
            }
        }
    }

    /// `pick_next_entity` on `cpu`: the leftmost task allowed there, or the next one if the leftmost
    /// is the skip buddy and the next is not too far right of it.
    fn leftmost_for(&self, cpu: CpuId, v: &View) -> Option<TaskId> {
        let mut allowed = self.queue.iter().map(|&(x, _, t)| (x, t)).filter(|&(_, t)| v.allows(t, cpu));
        let (lv, left) = allowed.next()?;
        if self.skip == Some(left) {
            if let Some((sv, second)) = allowed.next() {
                // wakeup_preempt_entity(second, left) < 1
                if sv.saturating_sub(lv) <= self.wakeup_gran(self.ents[left.idx()].w) {
                    return Some(second);
                }
            }
        }
        Some(left)
    }
}

impl Policy for Cfs {
    fn admit(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        slot(&mut self.ents, t);
        self.raise_top(t, p, v);
        let (w, idle) = self.weight_of(p);
        self.ents[t.idx()] = Ent { live: true, w, idle, fresh: true, ..Ent::default() };
    }

    fn exit(&mut self, t: TaskId, _v: &View) {
        self.remove(t);
        for r in self.resume.iter_mut().filter(|r| **r == Some(t)) {
            *r = None;
        }
        if self.skip == Some(t) {
            self.skip = None;
        }
        let e = &mut self.ents[t.idx()];
        e.live = false;
        e.state = State::Asleep;
    }

    fn wake(&mut self, t: TaskId, v: &View) {
        if self.ents[t.idx()].state != State::Asleep {
            return;
        }
        self.update_min_vruntime(v, None);
        let at = self.placed(t, v);
        let e = &mut self.ents[t.idx()];
        e.fresh = false;
        e.v = at;
        e.ran = 0;
        self.insert(t);
    }

    fn stop(&mut self, t: TaskId, cpu: CpuId, charged: Nanos, why: Stop, view: &View) {
        let e = &mut self.ents[t.idx()];
        e.v = e.v.saturating_add(vdelta(charged, e.w));
        e.ran = e.ran.saturating_add(charged);
        let vt = e.v;
        self.update_min_vruntime(view, Some(vt));
        if let Some(r) = self.resume.get_mut(cpu as usize) {
            *r = None;
        }
        match why {
            Stop::Blocked => {
                self.ents[t.idx()].state = State::Asleep;
                if self.skip == Some(t) {
                    self.skip = None;
                }
                self.update_min_vruntime(view, None);
            }
            Stop::SliceEnd => {
                let preempt = self.tick_preempts(t, view);
                self.insert(t);
                if preempt {
                    self.tick_preemptions += 1;
                } else if let Some(r) = self.resume.get_mut(cpu as usize) {
                    *r = Some(t);
                }
            }
            Stop::Preempted => self.insert(t),
            Stop::Yielded => {
                if !self.queue.is_empty() || view.running_tasks().next().is_some() {
                    self.skip = Some(t);
                }
                self.insert(t);
            }
        }
        if let Some(to) = self.ents[t.idx()].pending.take() {
            self.reweight(t, to);
        }
    }

    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, v: &View) -> Option<CpuId> {
        let we = &self.ents[woken.idx()];
        let wv = if we.state == State::Asleep { self.placed(woken, v) } else { we.v };
        let gran = self.wakeup_gran(we.w);
        let order = running
            .iter()
            .filter(|(c, _)| Some(*c) == prev)
            .chain(running.iter().filter(|(c, _)| Some(*c) != prev));
        for &(cpu, cur) in order {
            let ce = &self.ents[cur.idx()];
            if ce.idle && !we.idle {
                return Some(cpu);
            }
            if we.idle || ce.idle {
                continue;
            }
            if self.v_now(cur, cpu, v).saturating_sub(wv) > gran {
                return Some(cpu);
            }
        }
        None
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        self.update_min_vruntime(v, None);
        let kept = self.resume.get_mut(cpu as usize).and_then(Option::take);
        let resumed = kept.filter(|&t| self.ents[t.idx()].state == State::Queued && v.allows(t, cpu));
        let t = match resumed {
            Some(t) => t,
            None => {
                let t = self.leftmost_for(cpu, v)?;
                self.ents[t.idx()].ran = 0; // set_next_entity: prev_sum_exec_runtime = sum_exec_runtime
                t
            }
        };
        self.remove(t);
        if self.skip == Some(t) {
            self.skip = None;
        }
        self.ents[t.idx()].state = State::Running;
        let slice = self.slice_for(t, v);
        Some(Dispatch { task: t, slice: Some(slice) })
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        self.raise_top(t, p, v);
        let to = self.weight_of(p);
        self.reweight(t, to);
    }

    fn availability(&self, t: TaskId, v: &View) -> Availability {
        // Entitled: its weight's part of the runnable weight, on at most one CPU.
        let me = &self.ents[t.idx()];
        let runnable: u64 = self
            .ents
            .iter()
            .enumerate()
            .filter(|(i, e)| e.live && (matches!(e.state, State::Queued | State::Running) || *i == t.idx()))
            .map(|(_, e)| e.w)
            .sum();
        let alloc = (v.cpus() as f64 * me.w as f64 / runnable.max(1) as f64).min(1.0);
        Availability { consumption_rate: 100.0 * v.usage(t), allocation_rate: 100.0 * alloc }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("tick_preemptions", self.tick_preemptions)]
    }
}

/// The options of `cfs`, for the registry.
const OPTIONS: &[OptionDoc] = &[
    opt("latency", "6ms", "sysctl_sched_latency before scaling by 1 + log2 min(CPUs, 8): the period"),
    opt("min_granularity", "0.75ms", "sysctl_sched_min_granularity before scaling: the shortest slice"),
    opt("wakeup_granularity", "1ms", "sysctl_sched_wakeup_granularity before scaling"),
    opt("tick", "1ms", "the clock tick (TICK_NSEC): preemption is checked on it (set it to 1/hz)"),
    opt("nice0_share", "1", "the share of a nice-0 task"),
];

/// The registry's entry of `cfs`.
pub const ENTRY: Entry =
    Entry::new("cfs", "cfs.rs", |o, cpus| Ok(Box::new(Cfs::new(CfsConfig::from_options(o, cpus)?, cpus))))
        .about("Linux 6.1's fair class (CFS): smallest vruntime first, slices of the latency period by weight, nice from the share")
        .options(OPTIONS)
        .kernel_weights(&[("nice0_share", 100)])
        .fair(FairMeaning::Nice { nice0_option: "nice0_share" })
        .pace(|o, cpus| {
            let c = CfsConfig::from_options(o, cpus)?;
            // Preemption is checked at the tick: a task alone is looked at every tick.
            Ok(Pace { slice: Some(Slice::of(o, "tick", c.tick)), timer: None, walks_tasks: false })
        });
