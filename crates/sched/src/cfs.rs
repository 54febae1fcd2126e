//! Linux's fair class as of 6.1, the last long-term release before EEVDF: CFS, the Completely Fair
//! Scheduler (Molnar, 2007), with a run queue per CPU on N CPUs.
//!
//! **Specification.** `kernel/sched/fair.c`, `features.h`, `core.c` and `sched.h` of Linux 6.1
//! (Debian's `linux-source-6.1`; read to learn the rules, nothing is copied), with its default
//! features: `GENTLE_FAIR_SLEEPERS`, `START_DEBIT`, `WAKEUP_PREEMPTION`, `ALT_PERIOD`, `BASE_SLICE`
//! on, `HRTICK` and `NEXT_BUDDY` off, and the default `SCHED_TUNABLESCALING_LOG`: every tunable is
//! its normalized value × (1 + log₂ min(CPUs, 8)) (`get_update_sysctl_factor`, `update_sysctl`).
//!
//! **Weights.** As [`crate::eevdf`]: a task's nice level is its `nice` when given, else the level of
//! its share ([`crate::linux::share_level`]: share `nice0_share` is nice 0, each factor 1.25 one level), and its
//! weight is `sched_prio_to_weight` ([`crate::eevdf::WEIGHTS`], nice 0 = 1024). A task with share 0, or with a
//! priority below the highest one admitted so far, is `SCHED_IDLE` (weight 3, [`crate::eevdf::IDLE_WEIGHT`]),
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
//! **N CPUs.** As the kernel, a run queue per CPU, each a copy of this policy built for one CPU with
//! the machine's tunables, balanced by [`crate::percpu`] (wake-up placement, periodic and new-idle
//! balancing; a task moving keeps its `v` relative to `min_vruntime`, as `dequeue_entity` and
//! `enqueue_entity` renormalise it): `runqueues = "per-cpu"`, the default. `runqueues = "global"`
//! keeps one queue for all CPUs instead, with the kernel's period and slice for a CPU whose run
//! queue holds its part of the machine's load: `n` is `⌈n_all / CPUs⌉` and `Σw` is `Σw_all / CPUs`,
//! so that slice = period(⌈n_all/CPUs⌉) × `w · CPUs / Σw_all`, at most the period. The tunables
//! are scaled by the machine's CPUs either way. With affinity and one queue, a CPU picks the
//! leftmost task allowed on it; the tick check compares with the leftmost of the whole queue.
//!
//! **Options.** `latency` (6 ms), `min_granularity` (0.75 ms), `wakeup_granularity` (1 ms), each
//! before scaling by the factor above; `tick` (1 ms: set it to 1/`hz` of the machine); `nice0_share`
//! (1); on N CPUs `runqueues` (`"per-cpu"`), `migration_cost` (0.5 ms) and `seed` (1).
//!
//! **Left out.** NUMA and the rest of what [`crate::percpu`] leaves out; control groups;
//! `SCHED_BATCH`; bandwidth control; `HRTICK`; the next and last buddies; `child_runs_first`;
//! PELT load averages; the inverse-weight fixed-point arithmetic of `__calc_delta` (this policy
//! divides exactly, rounding down); `min_vruntime`'s wrap-around (virtual times are `i64` from 0).
//! A running task's progress, for decisions taken while it runs, is the time since its dispatch;
//! what counts once it stops is what the driver billed.

use std::collections::BTreeSet;

use crate::eevdf::NICE_0;
use crate::linux::{self, FairMeaning};
use crate::percpu::{self, Carry, RunQueue};
use crate::registry::{opt, Entry, OptionDoc, Pace, Slice, Walks};
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
    i64::try_from(u128::from(delta) * u128::from(NICE_0) / u128::from(w.max(1))).unwrap_or(i64::MAX)
}

/// Real time for a task of weight `w` to advance `vd` in virtual time (rounded up).
fn real_of(vd: i64, w: u64) -> Nanos {
    if vd <= 0 {
        return 0;
    }
    clamp_nanos((u128::from(vd as u64) * u128::from(w)).div_ceil(u128::from(NICE_0)))
}

impl Cfs {
    /// A CFS scheduler with one queue for `cpus` CPUs (1 for a per-CPU copy under [`crate::percpu`]).
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
        linux::fair_weight(p, self.cfg.nice0_share, self.top)
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

    /// `min_vruntime` as `update_min_vruntime` would leave it now, with `also` (a task just off its
    /// CPU, still the kernel's `curr`) counted: the smallest `v` of the running tasks and the
    /// leftmost, but never less than before.
    fn min_v_now(&self, v: &View, also: Option<i64>) -> i64 {
        let mut m = self.queue.first().map(|&(x, _, _)| x);
        for (cpu, t) in v.running_tasks() {
            let x = self.v_now(t, cpu, v);
            m = Some(m.map_or(x, |y| y.min(x)));
        }
        if let Some(x) = also {
            m = Some(m.map_or(x, |y| y.min(x)));
        }
        m.map_or(self.min_vruntime, |x| self.min_vruntime.max(x))
    }

    /// `update_min_vruntime`.
    fn update_min_vruntime(&mut self, v: &View, also: Option<i64>) {
        self.min_vruntime = self.min_v_now(v, also);
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

    /// `place_entity`: where an asleep task would join now (a new one with `START_DEBIT`, a woken
    /// one by `GENTLE_FAIR_SLEEPERS`), without joining.
    fn placed(&self, t: TaskId, v: &View) -> i64 {
        let e = &self.ents[t.idx()];
        let min_v = self.min_v_now(v, None);
        if e.fresh {
            let vslice = vdelta(self.ideal(t, v, true), e.w);
            return min_v.saturating_add(vslice);
        }
        let thresh = if e.idle { self.cfg.min_granularity } else { self.cfg.latency } / 2;
        let floor = min_v.saturating_sub(i64::try_from(thresh).unwrap_or(i64::MAX));
        e.v.max(floor)
    }

    /// The slice of task `t`, being dispatched now: to the first tick at which `check_preempt_tick`
    /// would hold with the queue as it is (alone: to the first tick after `min_granularity`, then
    /// tick by tick).
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

    /// `check_preempt_tick` for `t`, just off its CPU at the tick (not yet queued again).
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
        self.lift(p.priority, Some((t, p)), v);
    }

    /// The highest priority is now `top`: every task reweighted, `given` with the parameters it is
    /// being given, the others with the view's.
    fn lift(&mut self, top: i32, given: Option<(TaskId, &TaskParams)>, v: &View) {
        if self.top.is_some_and(|old| old >= top) {
            return;
        }
        self.top = Some(top);
        for i in 0..self.ents.len() {
            if self.ents[i].live {
                let x = TaskId(i as u32);
                let p = given.filter(|g| g.0 == x).map_or_else(|| v.params(x), |g| g.1);
                let to = self.weight_of(p);
                self.reweight(x, to);
            }
        }
    }

    /// Forgets `t` as [`Policy::exit`] does: out of the queue, the buddies and the CPUs' resumes.
    fn forget(&mut self, t: TaskId) {
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
        self.forget(t);
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

impl RunQueue for Cfs {
    /// A migrating task leaves with its `v` relative to this queue's `min_vruntime`: a queued one as
    /// `dequeue_entity` without `DEQUEUE_SLEEP` takes it (after `update_curr`), an asleep one as
    /// `migrate_task_rq_fair` does at its wake-up (the last `min_vruntime`).
    fn detach(&mut self, t: TaskId, v: &View) -> Carry {
        let e = &self.ents[t.idx()];
        check!(e.state != State::Running, "task {t} detached while it runs");
        let (queued, fresh) = (e.state == State::Queued, e.fresh);
        if queued {
            self.update_min_vruntime(v, None);
        }
        let rel = self.ents[t.idx()].v.saturating_sub(self.min_vruntime);
        self.forget(t);
        if queued {
            self.update_min_vruntime(v, None);
        }
        Carry { fresh, rel, rest: None }
    }

    /// A migrated task joins at its relative `v` plus this queue's `min_vruntime` (`enqueue_entity`'s
    /// renormalisation); an asleep one is placed when it wakes.
    fn attach(&mut self, t: TaskId, p: &TaskParams, c: Carry, v: &View) {
        slot(&mut self.ents, t);
        self.raise_top(t, p, v);
        let (w, idle) = self.weight_of(p);
        self.update_min_vruntime(v, None);
        let at = self.min_vruntime.saturating_add(c.rel);
        self.ents[t.idx()] = Ent { live: true, w, idle, fresh: c.fresh, v: at, ..Ent::default() };
        if v.state(t) == crate::State::Runnable {
            self.ents[t.idx()].fresh = false;
            self.insert(t);
        }
    }

    fn load(&self, t: TaskId) -> (u64, bool) {
        let e = &self.ents[t.idx()];
        (e.w, e.idle)
    }

    fn raise_top(&mut self, top: i32, v: &View) {
        self.lift(top, None, v);
    }
}

/// The options of `cfs`, for the registry.
const OPTIONS: &[OptionDoc] = &[
    opt("latency", "6ms", "sysctl_sched_latency before scaling by 1 + log2 min(CPUs, 8): the period"),
    opt("min_granularity", "0.75ms", "sysctl_sched_min_granularity before scaling: the shortest slice"),
    opt("wakeup_granularity", "1ms", "sysctl_sched_wakeup_granularity before scaling"),
    opt("tick", "1ms", "the clock tick (TICK_NSEC): preemption is checked on it (set it to 1/hz)"),
    opt("nice0_share", "1", "the share of a nice-0 task"),
    opt(
        "runqueues",
        "\"per-cpu\"",
        "a run queue per CPU with load balancing (per-cpu), or one for all (global)",
    ),
    opt("migration_cost", "0.5ms", "sysctl_sched_migration_cost: a task that ran this recently is cache hot"),
    opt("seed", "1", "seeds the coin that settles races between CPUs' balancing and switching at one tick"),
];

/// The registry's entry of `cfs`.
pub const ENTRY: Entry =
    Entry::new("cfs", "cfs.rs", |o, cpus| {
        let cfg = CfsConfig::from_options(o, cpus)?;
        percpu::build(o, cpus, cfg.tick, |serves| Cfs::new(cfg.clone(), serves))
    })
        .about("Linux 6.1's fair class (CFS): smallest vruntime first, slices of the latency period by weight, nice from the task's nice or its share")
        .options(OPTIONS)
        .kernel_weights(&[("nice0_share", 100)])
        .fair(FairMeaning::Nice { nice0_option: "nice0_share" })
        .classes(&["fair", "other"])
        .pace(|o, cpus| {
            let c = CfsConfig::from_options(o, cpus)?;
            // Preemption is checked at the tick: a task alone is looked at every tick.
            Ok(Pace { slice: Some(Slice::of(o, "tick", c.tick)), timer: None, walks: Walks::Nothing })
        });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eevdf::IDLE_WEIGHT;
    use crate::{test_core, Core};

    fn cfs_of(params: &[TaskParams]) -> Core<Cfs> {
        let mut p = test_core(Cfs::new(CfsConfig::linux(1), 1), 1);
        for (i, tp) in params.iter().enumerate() {
            p.admit(TaskId(i as u32), tp, 0);
        }
        p
    }

    fn nice(n: i8) -> TaskParams {
        TaskParams { nice: Some(n), ..Default::default() }
    }

    /// Runs what CPU 0 picks until its slice ends, billed exactly; returns the task and its slice.
    fn run_slice(p: &mut Core<Cfs>, now: &mut Nanos) -> (TaskId, Nanos) {
        let d = p.pick(0, *now).unwrap();
        let s = d.slice.unwrap();
        *now += s;
        p.stop(d.task, s, Stop::SliceEnd, *now);
        (d.task, s)
    }

    fn v_of(p: &Core<Cfs>, t: u32) -> i64 {
        p.policy().ents[t as usize].v
    }

    #[test]
    fn a_migrating_task_keeps_its_vruntime_relative_to_min_vruntime() {
        let mut a = cfs_of(&[nice(0), nice(0)]);
        let mut now = 0;
        a.wake(TaskId(0), 0);
        a.wake(TaskId(1), 0);
        for _ in 0..4 {
            run_slice(&mut a, &mut now);
        }
        let queued = (0..2).find(|&t| a.policy().ents[t].state == State::Queued).unwrap() as u32;
        let rel = v_of(&a, queued) - a.policy().min_vruntime;
        let carry = {
            let v = a.view().clone();
            a.policy_mut().detach(TaskId(queued), &v)
        };
        assert_eq!(carry, Carry { fresh: false, rel, rest: None });
        let mut b = cfs_of(&[nice(0), nice(0), nice(0)]);
        let mut later = 0;
        b.wake(TaskId(2), 0);
        for _ in 0..3 {
            run_slice(&mut b, &mut later);
        }
        b.wake(TaskId(queued), later);
        {
            let v = b.view().clone();
            b.policy_mut().exit(TaskId(queued), &v)
        };
        {
            let v = b.view().clone();
            b.policy_mut().attach(TaskId(queued), &nice(0), carry, &v)
        };
        assert_eq!(v_of(&b, queued), b.policy().min_vruntime + rel);
        assert_eq!(b.policy().ents[queued as usize].state, State::Queued);
    }

    #[test]
    fn tunables_scale_with_the_log_of_the_cpus_and_the_period_stretches_past_8_tasks() {
        let f: Vec<u64> = [1, 2, 3, 4, 8, 64].iter().map(|&n| factor(n)).collect();
        assert_eq!(f, [1, 2, 2, 3, 4, 4]);
        let c = CfsConfig::linux(4);
        assert_eq!((c.latency, c.min_granularity, c.wakeup_granularity), (18 * MS, 2_250_000, 3 * MS));
        let c = CfsConfig::linux(1);
        assert_eq!(c.nr_latency(), 8, "6 ms / 0.75 ms");
        // __sched_period: the latency up to 8 tasks, then 0.75 ms each.
        assert_eq!(
            [c.period(1), c.period(8), c.period(9), c.period(12)],
            [6 * MS, 6 * MS, 6_750_000, 9 * MS]
        );
    }

    #[test]
    fn the_slice_is_the_period_times_the_tasks_part_of_the_weight() {
        let p = Cfs::new(CfsConfig::linux(1), 1);
        // Nice 0 and nice 5 (1024 and 335, Σ 1359) share the 6 ms period.
        assert_eq!(p.sched_slice(1024, false, 2, 1359, false), 4_520_971);
        assert_eq!(p.sched_slice(335, false, 2, 1359, false), 1_479_028);
        // One nice -5 (3121) among 8 tasks (7 of nice 0): period 6 ms, Σw 10289.
        assert_eq!(p.sched_slice(3121, false, 8, 3121 + 7 * 1024, false), 1_820_001);
        // A ninth stretches the period to 9 × 0.75 ms = 6.75 ms, Σw 11313.
        assert_eq!(p.sched_slice(3121, false, 9, 3121 + 8 * 1024, false), 1_862_171);
        // ... and a nice-0 task's part (610978 ns) is raised to min_granularity (BASE_SLICE).
        assert_eq!(p.sched_slice(1024, false, 9, 3121 + 8 * 1024, false), 750_000);
        // A SCHED_IDLE task among 15 of nice 0 on 4 CPUs: 18 ms × 3·4 / 15363 = 14 µs, raised to
        // 0.75 ms unscaled (sysctl_sched_idle_min_granularity), not to min_granularity (2.25 ms).
        let p4 = Cfs::new(CfsConfig::linux(4), 4);
        assert_eq!(p4.sched_slice(3, true, 16, 3 + 15 * 1024, false), 750_000);
        // A nice-0 one there: 18 ms × 1024·4 / 15363.
        assert_eq!(p4.sched_slice(1024, false, 16, 3 + 15 * 1024, false), 4_799_062);
        // On 2 CPUs (latency 12 ms), 4 tasks of nice 0 are 2 per CPU: 12 ms × 1024 / 2048.
        let p2 = Cfs::new(CfsConfig::linux(2), 2);
        assert_eq!(p2.sched_slice(1024, false, 4, 4096, false), 6 * MS);
        // Alone, a task gets the whole period, not more.
        assert_eq!(p2.sched_slice(1024, false, 1, 1024, false), 12 * MS);
    }

    #[test]
    fn new_tasks_start_one_vslice_right_of_min_vruntime() {
        let mut p = cfs_of(&[nice(0), nice(5)]);
        p.wake(TaskId(0), 0);
        // Alone (n = 1 counting itself): the whole 6 ms period, in its virtual time.
        assert_eq!(v_of(&p, 0), 6 * MS as i64);
        p.wake(TaskId(1), 0);
        // min_vruntime moved up to the leftmost (6 ms); nice 5's slice with both counted is 1479028 ns,
        // 1479028 · 1024 / 335 = 4520969 ns of virtual time.
        assert_eq!(p.policy().min_vruntime, 6 * MS as i64);
        assert_eq!(v_of(&p, 1), 6_000_000 + 4_520_969);
    }

    #[test]
    fn two_hogs_of_nice_0_and_5_divide_the_cpu_1024_to_335() {
        let mut p = cfs_of(&[nice(0), nice(5)]);
        p.wake(TaskId(0), 0);
        p.wake(TaskId(1), 0);
        let mut now = 0;
        let first: Vec<(u32, Nanos)> =
            (0..4).map(|_| run_slice(&mut p, &mut now)).map(|(t, s)| (t.0, s)).collect();
        // 0 (leftmost) runs past its ideal 4.52 ms: the tick at 5 ms. 1 (v 10.52 ms, 0 now at 11 ms)
        // may run 0.75 ms before 1 − 0 > 1.479 ms is checked: the tick at 6 ms, when it holds
        // (13.58 − 11 ms). 0 again to the tick after 4.52 ms; then 1, further behind (16 − 13.58 ms),
        // until its lead exceeds its slice: 1.276 ms, the tick at 13 ms.
        assert_eq!(first, [(0, 5 * MS), (1, MS), (0, 5 * MS), (1, 2 * MS)]);
        assert_eq!(p.counters()[1], ("tick_preemptions", 4));
        let mut got = [0u64; 2];
        for (t, s) in &first {
            got[*t as usize] += s;
        }
        while now < 3_000 * MS {
            let (t, s) = run_slice(&mut p, &mut now);
            got[t.idx()] += s;
        }
        // The leftmost always runs and no run is longer than 5 ms, so the virtual runtimes stay
        // within a run (5 ms of 0's, 3 ms of 1's = 9.2 ms of virtual time) plus a slice of each
        // other; over 3 s that is under 1 % of the light task's 0.74 s.
        let (v0, v1) = (v_of(&p, 0), v_of(&p, 1));
        assert!(v0.abs_diff(v1) < 15 * MS, "{v0} {v1}");
        let ratio = got[0] as f64 / got[1] as f64;
        assert!((ratio / (1024.0 / 335.0) - 1.0).abs() < 0.01, "{ratio} {got:?}");
    }

    /// a and b (nice 0) woken at 0 (v 6 and 9 ms); a runs 4 ms, b 0.5 ms and blocks (v 9.5 ms);
    /// a is picked again at 4.5 ms with v 10 ms. Returns the core at 4.5 ms.
    fn b_asleep() -> Core<Cfs> {
        let mut p = cfs_of(&[nice(0), nice(0)]);
        let (a, b) = (TaskId(0), TaskId(1));
        p.wake(a, 0);
        p.wake(b, 0);
        assert_eq!((v_of(&p, 0), v_of(&p, 1)), (6 * MS as i64, 9 * MS as i64));
        assert_eq!(p.pick(0, 0).unwrap().task, a);
        p.stop(a, 4 * MS, Stop::Preempted, 4 * MS);
        assert_eq!(p.pick(0, 4 * MS).unwrap().task, b);
        p.stop(b, MS / 2, Stop::Blocked, 4_500_000);
        assert_eq!(p.pick(0, 4_500_000).unwrap().task, a);
        assert_eq!(
            (v_of(&p, 0), v_of(&p, 1), p.policy().min_vruntime),
            (10 * MS as i64, 9_500_000, 10 * MS as i64)
        );
        p
    }

    #[test]
    fn a_sleeper_comes_back_at_most_half_a_latency_behind_min_vruntime() {
        // A short sleep: min_vruntime − 3 ms = 7 ms is below its own 9.5 ms, which it keeps.
        let mut p = b_asleep();
        p.wake(TaskId(1), 4_500_000);
        assert_eq!(v_of(&p, 1), 9_500_000);
        // A long one: a runs 100 ms (v 110 ms); b comes back at 110 − 3 = 107 ms, not at 9.5 ms.
        let mut p = b_asleep();
        p.stop(TaskId(0), 100 * MS, Stop::Preempted, 104_500_000);
        assert_eq!(p.pick(0, 104_500_000).unwrap().task, TaskId(0));
        p.wake(TaskId(1), 104_500_000);
        assert_eq!(v_of(&p, 1), 107 * MS as i64);
        // A SCHED_IDLE sleeper only min_granularity / 2 = 0.375 ms behind.
        let mut p = b_asleep();
        p.set_params(TaskId(1), &TaskParams { share: 0, ..Default::default() }, 4_500_000);
        assert_eq!(p.policy().ents[1].w, IDLE_WEIGHT);
        p.stop(TaskId(0), 100 * MS, Stop::Preempted, 104_500_000);
        p.pick(0, 104_500_000).unwrap();
        p.wake(TaskId(1), 104_500_000);
        assert_eq!(v_of(&p, 1), 110 * MS as i64 - 375_000);
    }

    #[test]
    fn min_vruntime_never_decreases() {
        let mut p = b_asleep();
        p.stop(TaskId(0), 100 * MS, Stop::Preempted, 104_500_000);
        p.pick(0, 104_500_000).unwrap();
        p.wake(TaskId(1), 104_500_000);
        // b (107 ms) is left of a (110 ms) and of min_vruntime, which stays at 110 ms ...
        let m = 110 * MS as i64;
        assert_eq!(p.policy().min_vruntime, m);
        p.stop(TaskId(0), 0, Stop::Preempted, 104_500_000);
        assert_eq!(p.pick(0, 104_500_000).unwrap().task, TaskId(1));
        assert_eq!(p.policy().min_vruntime, m);
        // ... while b runs 2 ms (v 109 ms): the smallest v is 109 ms, min_vruntime is kept.
        p.stop(TaskId(1), 2 * MS, Stop::Preempted, 106_500_000);
        assert_eq!(v_of(&p, 1), 109 * MS as i64);
        assert_eq!(p.policy().min_vruntime, m);
        // Once both are past it, it follows the smallest.
        assert_eq!(p.pick(0, 106_500_000).unwrap().task, TaskId(1));
        p.stop(TaskId(1), 3 * MS, Stop::Preempted, 109_500_000);
        assert_eq!(p.policy().min_vruntime, 110 * MS as i64, "a at 110 ms is now the smallest");
    }

    #[test]
    fn a_woken_task_preempts_only_beyond_the_wakeup_granularity() {
        // b asleep at 9.5 ms; a runs from 4.5 ms at v 10 ms. Woken at T ≤ 7 ms, b keeps 9.5 ms and
        // a is at 10 ms + (T − 4.5 ms): 1 ms ahead (the granularity, nice 0) at T = 5 ms.
        let mut p = b_asleep();
        let (a, b) = (TaskId(0), TaskId(1));
        p.advance_to(5 * MS);
        assert_eq!(p.policy().preempt_for(b, Some(0), &[(0, a)], p.view()), None);
        p.advance_to(5 * MS + 1);
        assert_eq!(p.policy().preempt_for(b, Some(0), &[(0, a)], p.view()), Some(0));
        // A nice-5 sleeper's granularity is 1 ms · 1024 / 335 = 3056716 ns of its virtual time, more
        // than the 3 ms (latency / 2) it can be placed behind a, which is min_vruntime: it never
        // preempts a, however long a runs; a nice-0 one does.
        let mut p = b_asleep();
        p.set_params(b, &nice(5), 4_500_000);
        p.advance_to(100 * MS);
        assert_eq!(p.policy().preempt_for(b, Some(0), &[(0, a)], p.view()), None);
        p.set_params(b, &nice(0), 100 * MS);
        assert_eq!(p.policy().preempt_for(b, Some(0), &[(0, a)], p.view()), Some(0));
    }

    #[test]
    fn a_task_alone_is_looked_at_every_tick_and_runs_on() {
        let mut p = cfs_of(&[nice(0), nice(0)]);
        let (a, b) = (TaskId(0), TaskId(1));
        p.wake(a, 0);
        // Alone: to the first tick after min_granularity (0.75 ms), then tick by tick.
        let d = p.pick(0, 0).unwrap();
        assert_eq!(d, Dispatch { task: a, slice: Some(MS) });
        p.stop(a, MS, Stop::SliceEnd, MS);
        assert_eq!(p.pick(0, MS).unwrap(), Dispatch { task: a, slice: Some(MS) });
        // b joins at 1.5 ms (v_a now 7.5 ms: min_vruntime; b at 7.5 + 3 ms): no wake-up preemption.
        p.wake(b, 1_500_000);
        assert_eq!(v_of(&p, 1), 10_500_000);
        assert_eq!(p.policy().preempt_for(b, Some(0), &[(0, a)], p.view()), None);
        // At the 2 ms tick a has run 2 ms since it was picked, under its 3 ms slice, and is 2.5 ms
        // left of b: it runs on, its time since its pick counted on, to the tick after 3 ms.
        p.stop(a, MS, Stop::SliceEnd, 2 * MS);
        assert_eq!(p.policy().ents[0].ran, 2 * MS);
        assert_eq!(p.pick(0, 2 * MS).unwrap(), Dispatch { task: a, slice: Some(2 * MS) });
        // At 4 ms it has run 4 ms > 3 ms: preempted. Still the leftmost (10 ms against 10.5 ms), it
        // is picked again, its time counted from this pick: to the tick after its 3 ms slice.
        p.stop(a, 2 * MS, Stop::SliceEnd, 4 * MS);
        assert_eq!(p.counters()[1], ("tick_preemptions", 1));
        assert_eq!(p.pick(0, 4 * MS).unwrap(), Dispatch { task: a, slice: Some(4 * MS) });
        assert_eq!(p.policy().ents[0].ran, 0);
    }

    #[test]
    fn a_yielding_task_is_skipped_for_one_within_the_granularity() {
        let mut p = cfs_of(&[nice(0), nice(0)]);
        let (a, b) = (TaskId(0), TaskId(1));
        p.wake(a, 0);
        p.wake(b, 0);
        assert_eq!(p.pick(0, 0).unwrap().task, a);
        // a (6.1 ms) yields; b (9 ms) is 2.9 ms right of it, beyond 1 ms: a runs again.
        p.stop(a, 100_000, Stop::Yielded, 100_000);
        assert_eq!(p.pick(0, 100_000).unwrap().task, a);
        // a (8.5 ms) yields; b is 0.5 ms right of it: b runs.
        p.stop(a, 2_400_000, Stop::Yielded, 2_500_000);
        assert_eq!(p.pick(0, 2_500_000).unwrap().task, b);
        assert_eq!(p.policy().skip, Some(a));
        p.stop(b, 0, Stop::Preempted, 2_500_000);
        assert_eq!(p.pick(0, 2_500_000).unwrap().task, b, "a is still the skip buddy, b within 1 ms");
    }

    #[test]
    fn equal_vruntimes_go_in_the_order_they_joined_the_queue() {
        let mut p = cfs_of(&[nice(0), nice(0), nice(0)]);
        let (a, b, c) = (TaskId(0), TaskId(1), TaskId(2));
        // START_DEBIT: a at 6 ms (alone), b at 6 + 3 ms (two), c at 6 + 2 ms (three).
        for t in [a, b, c] {
            p.wake(t, 0);
        }
        assert_eq!([v_of(&p, 0), v_of(&p, 1), v_of(&p, 2)], [6_000_000, 9_000_000, 8_000_000]);
        assert_eq!(p.pick(0, 0).unwrap().task, a);
        p.stop(a, 3 * MS, Stop::Preempted, 3 * MS); // a at 9 ms, behind b
        assert_eq!(p.pick(0, 3 * MS).unwrap().task, c);
        p.stop(c, MS, Stop::Preempted, 4 * MS); // c at 9 ms, behind a
        let mut order = Vec::new();
        for _ in 0..4 {
            let d = p.pick(0, 4 * MS).unwrap();
            order.push(d.task.0);
            p.stop(d.task, 0, Stop::Preempted, 4 * MS); // joins behind its equals
        }
        assert_eq!(order, [1, 0, 2, 1]);
    }

    #[test]
    fn weights_come_from_nice_or_the_share_and_idle_tasks_give_way() {
        let mut p = test_core(Cfs::new(CfsConfig::linux(1), 1), 1);
        let ts = [
            TaskParams { share: 3, ..Default::default() },
            TaskParams { share: 3, nice: Some(5), ..Default::default() },
            TaskParams { share: 0, nice: Some(-5), ..Default::default() },
            TaskParams::default(),
        ];
        for (i, tp) in ts.iter().enumerate() {
            p.admit(TaskId(i as u32), tp, 0);
        }
        let w: Vec<u64> = p.policy().ents.iter().map(|e| e.w).collect();
        assert_eq!(w, [3121, 335, IDLE_WEIGHT, 1024]);
        // A higher priority makes every task below it SCHED_IDLE.
        p.admit(TaskId(4), &TaskParams { priority: 1, ..Default::default() }, 0);
        assert!(p.policy().ents[..4].iter().all(|e| e.w == IDLE_WEIGHT && e.idle));
        // An idle task runs; a woken normal one preempts it, an idle one never preempts.
        let (idle, hi) = (TaskId(0), TaskId(4));
        p.wake(idle, 0);
        assert_eq!(p.pick(0, 0).unwrap().task, idle);
        p.wake(hi, 0);
        assert_eq!(p.policy().preempt_for(hi, Some(0), &[(0, idle)], p.view()), Some(0));
        // The new task starts a vslice right of min_vruntime, the idle task's v (START_DEBIT), so the
        // idle task is still the leftmost: picked again, it is preempted at the first tick after
        // its 0.75 ms, when its v (1 ms · 1024 / 3 further) is far right of the new task's.
        p.stop(idle, 1, Stop::Preempted, 1);
        assert_eq!(p.pick(0, 1).unwrap(), Dispatch { task: idle, slice: Some(MS - 1) });
        p.stop(idle, MS - 1, Stop::SliceEnd, MS);
        assert_eq!(p.pick(0, MS).unwrap().task, hi);
        p.wake(TaskId(1), MS);
        assert_eq!(p.policy().preempt_for(TaskId(1), Some(0), &[(0, hi)], p.view()), None);
    }

    #[test]
    fn options_are_checked_and_scaled() {
        let mut opts = crate::Options::new();
        opts.insert("latency".into(), crate::OptValue::Time(4 * MS));
        opts.insert("min_granularity".into(), crate::OptValue::Time(MS));
        let mut o = OptReader::new("cfs", &opts);
        let c = CfsConfig::from_options(&mut o, 2).unwrap();
        assert_eq!(
            (c.latency, c.min_granularity, c.wakeup_granularity, c.nr_latency()),
            (8 * MS, 2 * MS, 2 * MS, 4)
        );
        assert!(crate::build("cfs", &opts, 2).is_ok());
        opts.insert("min_granularity".into(), crate::OptValue::Time(10));
        assert!(crate::build("cfs", &opts, 2).is_err());
        opts.remove("min_granularity");
        opts.insert("base_slice".into(), crate::OptValue::Time(MS));
        assert!(crate::build("cfs", &opts, 2).is_err());
    }
}
