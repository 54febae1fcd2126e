//! What the core knows about the tasks and the CPUs, and what a policy may read of it: the
//! [`View`] handed to every [`crate::Policy`] call, as Linux hands `struct rq` to a scheduling
//! class.
//!
//! Kept once, here, for every policy: each task's state (absent, blocked, runnable, running on
//! which CPU), its parameters, the CPU it last ran on, its recent usage and what it was billed;
//! which task runs on each CPU and since when; the current time. A policy keeps only its own
//! state (queues, virtual times, levels) and reads the rest here.
//!
//! The view changes only through the core (and [`crate::partition`], which keeps one per CPU),
//! and every change checks the protocol of [`crate::Policy`]: a task on at most one CPU, a stop
//! only of a running task, a wake-up only of a blocked one, a dispatch only of a runnable task on
//! a CPU its affinity allows and that runs nothing. A broken rule panics with the task, the CPU
//! and what was expected: the driver or the policy has a bug, and going on would make every
//! later number wrong.

use crate::usage::Usage;
use crate::{Availability, CpuId, Nanos, TaskId, TaskParams};

/// Where a task is, as the core knows it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum State {
    /// Not admitted, or exited.
    #[default]
    Absent,
    /// Admitted and not runnable: asleep, blocked, or not started.
    Blocked,
    /// Runnable and not on a CPU: the policy holds it in its queues.
    Runnable,
    /// Dispatched on this CPU and not stopped since.
    Running(CpuId),
}

/// The core's record of one task.
#[derive(Clone, Debug, Default)]
struct Slot {
    state: State,
    params: TaskParams,
    last_cpu: Option<CpuId>,
    usage: Usage,
    /// CPU time billed so far, and the number of stops (each billed once).
    charged: Nanos,
    stops: u64,
}

/// The tasks and CPUs as the core knows them: what a policy may read (see the module
/// documentation).
#[derive(Clone, Debug)]
pub struct View {
    now: Nanos,
    tasks: Vec<Slot>,
    /// Per CPU: the task dispatched there and not stopped, and when it was dispatched.
    running: Vec<Option<TaskId>>,
    since: Vec<Nanos>,
    /// Per CPU: it runs a task this view does not show (a higher class's, under a class stack); and
    /// how many do.
    taken: Vec<bool>,
    taken_count: usize,
    /// Tasks admitted and not exited, and of them those runnable (not running).
    live: usize,
    runnable: usize,
    /// Tasks admitted and not exited that have a CPU affinity.
    affine: usize,
    /// Recent usage is kept (for availability).
    track_usage: bool,
}

impl View {
    /// A view of `cpus` CPUs with no task.
    pub fn new(cpus: usize) -> View {
        View {
            now: 0,
            tasks: Vec::new(),
            running: vec![None; cpus],
            since: vec![0; cpus],
            taken: vec![false; cpus],
            taken_count: 0,
            live: 0,
            runnable: 0,
            affine: 0,
            track_usage: true,
        }
    }

    /// The current time: the time of the event being handled.
    #[inline]
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// The number of CPUs.
    #[inline]
    pub fn cpus(&self) -> usize {
        self.running.len()
    }

    /// The state of task `t` ([`State::Absent`] for an id never admitted).
    #[inline]
    pub fn state(&self, t: TaskId) -> State {
        self.tasks.get(t.idx()).map_or(State::Absent, |s| s.state)
    }

    /// Whether `t` was ever admitted (it may have exited since).
    #[inline]
    pub fn known(&self, t: TaskId) -> bool {
        t.idx() < self.tasks.len()
    }

    /// The parameters of an admitted task (the last ones it was given, for one that exited).
    #[inline]
    pub fn params(&self, t: TaskId) -> &TaskParams {
        &self.tasks[t.idx()].params
    }

    /// Whether task `t` may run on `cpu`.
    #[inline]
    pub fn allows(&self, t: TaskId, cpu: CpuId) -> bool {
        self.tasks[t.idx()].params.allows(cpu)
    }

    /// The task running on `cpu`, if any.
    #[inline]
    pub fn running(&self, cpu: CpuId) -> Option<TaskId> {
        self.running[cpu as usize]
    }

    /// Whether `cpu` runs a task this view does not show: under a class stack ([`crate::stack`]), a
    /// task of another class; never in the core's own view.
    #[inline]
    pub fn taken(&self, cpu: CpuId) -> bool {
        self.taken[cpu as usize]
    }

    /// Whether any CPU runs a task this view does not show ([`View::taken`]).
    #[inline]
    pub fn any_taken(&self) -> bool {
        self.taken_count > 0
    }

    /// When the task running on `cpu` was dispatched there.
    #[inline]
    pub fn dispatched_at(&self, cpu: CpuId) -> Nanos {
        self.since[cpu as usize]
    }

    /// Every CPU that runs a task, with the task, in CPU order.
    pub fn running_tasks(&self) -> impl Iterator<Item = (CpuId, TaskId)> + '_ {
        self.running.iter().enumerate().filter_map(|(c, t)| t.map(|t| (c as CpuId, t)))
    }

    /// The tasks admitted and not exited, in id order.
    pub fn live(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.tasks.iter().enumerate().filter(|(_, s)| s.state != State::Absent).map(|(i, _)| TaskId(i as u32))
    }

    /// How many tasks are admitted and not exited.
    #[inline]
    pub fn live_count(&self) -> usize {
        self.live
    }

    /// How many tasks are runnable and wait for a CPU.
    #[inline]
    pub fn runnable_count(&self) -> usize {
        self.runnable
    }

    /// Whether a live task (admitted, not exited) has a CPU affinity: until one has, every task may
    /// run on every CPU, and a policy need not ask [`View::allows`].
    #[inline]
    pub fn any_affine(&self) -> bool {
        self.affine > 0
    }

    /// The CPU `t` last ran on, if it ran.
    #[inline]
    pub fn last_cpu(&self, t: TaskId) -> Option<CpuId> {
        self.tasks.get(t.idx()).and_then(|s| s.last_cpu)
    }

    /// The part of one CPU (0 to 1) task `t` has recently been billed ([`Usage`]); 0 when the driver
    /// keeps no usage ([`crate::Core::keep_usage`]).
    #[inline]
    pub fn usage(&self, t: TaskId) -> f64 {
        self.tasks[t.idx()].usage.rate(self.now)
    }

    /// CPU time billed to `t` so far, and how many times it stopped.
    #[inline]
    pub fn billed(&self, t: TaskId) -> (Nanos, u64) {
        let s = &self.tasks[t.idx()];
        (s.charged, s.stops)
    }

    /// Availability (SMART §3.4.3) for a policy that serves tasks by rank: consumption is the
    /// task's recent use; allocation is what its share entitles it to of what the live tasks of a
    /// higher rank (`rank`, larger = served first) have recently left, `share` out of the
    /// `rank_shares` of its rank.
    pub fn availability_by_rank<K: PartialOrd>(
        &self,
        t: TaskId,
        rank: impl Fn(TaskId) -> K,
        share: u64,
        rank_shares: u64,
    ) -> Availability {
        let mine = rank(t);
        let above: f64 = self.live().filter(|&o| rank(o) > mine).map(|o| self.usage(o)).sum();
        let alloc = (1.0 - above).max(0.0) * share as f64 / rank_shares.max(1) as f64;
        Availability { consumption_rate: 100.0 * self.usage(t), allocation_rate: 100.0 * alloc }
    }

    // ----- changes, by the core (and the partitioned policy's per-CPU views) -----

    pub(crate) fn keep_usage(&mut self, keep: bool) {
        self.track_usage = keep;
    }

    #[inline]
    pub(crate) fn set_now(&mut self, now: Nanos) {
        self.now = now;
    }

    #[inline]
    fn slot_mut(&mut self, t: TaskId) -> &mut Slot {
        crate::slot(&mut self.tasks, t)
    }

    /// `t` exists, blocked, with parameters `p`.
    pub(crate) fn admit(&mut self, t: TaskId, p: &TaskParams) {
        let now = self.now;
        let s = self.slot_mut(t);
        check!(s.state == State::Absent, "task {t} admitted twice");
        let mut usage = Usage::default();
        usage.start(now);
        *s = Slot { state: State::Blocked, params: p.clone(), last_cpu: None, usage, charged: 0, stops: 0 };
        self.live += 1;
        self.affine += usize::from(p.cpus.is_some());
    }

    /// `t` is gone: it must not be running.
    #[inline]
    pub(crate) fn exit(&mut self, t: TaskId) {
        let s = &mut self.tasks[t.idx()];
        check!(
            matches!(s.state, State::Blocked | State::Runnable),
            "task {t} exited while {:?} (a running task stops first)",
            s.state
        );
        self.runnable -= (s.state == State::Runnable) as usize;
        s.state = State::Absent;
        self.live -= 1;
        self.affine -= usize::from(s.params.cpus.is_some());
    }

    /// `t`, blocked, became runnable.
    #[inline]
    pub(crate) fn wake(&mut self, t: TaskId) {
        let s = &mut self.tasks[t.idx()];
        check!(s.state == State::Blocked, "task {t} woke while not blocked");
        s.state = State::Runnable;
        self.runnable += 1;
    }

    /// `t` left its CPU billed `charged`; `runnable` unless it blocked. Returns the CPU.
    #[inline]
    pub(crate) fn stop(&mut self, t: TaskId, charged: Nanos, runnable: bool) -> CpuId {
        let now = self.now;
        let s = &mut self.tasks[t.idx()];
        let State::Running(cpu) = s.state else {
            crate::broken(format_args!("task {t} stopped while {:?}, not running", s.state))
        };
        s.state = if runnable { State::Runnable } else { State::Blocked };
        self.runnable += runnable as usize;
        s.last_cpu = Some(cpu);
        s.charged += charged;
        s.stops += 1;
        if self.track_usage {
            s.usage.add(charged, now);
        }
        self.running[cpu as usize] = None;
        cpu
    }

    /// `t` was dispatched on `cpu` at the current time.
    #[inline]
    pub(crate) fn dispatch(&mut self, t: TaskId, cpu: CpuId) {
        let c = cpu as usize;
        // The core checked the CPU (it exists and runs nothing) before it asked the policy.
        debug_assert!(self.running[c].is_none(), "task {t} dispatched on CPU {cpu}, which runs a task");
        let s = &mut self.tasks[t.idx()];
        check!(s.state == State::Runnable, "task {t} dispatched while not runnable");
        check!(
            s.params.allows(cpu),
            "task {t} dispatched on CPU {cpu}, outside its affinity {:?}",
            s.params.cpus
        );
        s.state = State::Running(cpu);
        self.runnable -= 1;
        self.running[c] = Some(t);
        self.since[c] = self.now;
    }

    /// `cpu` runs (`true`) or no longer runs a task this view does not show ([`View::taken`]).
    pub(crate) fn set_taken(&mut self, cpu: CpuId, taken: bool) {
        let was = std::mem::replace(&mut self.taken[cpu as usize], taken);
        self.taken_count = self.taken_count + usize::from(taken) - usize::from(was);
    }

    /// New parameters for `t`.
    pub(crate) fn set_params(&mut self, t: TaskId, p: &TaskParams) {
        let s = &mut self.tasks[t.idx()];
        check!(s.state != State::Absent, "parameters for task {t}, which is not admitted");
        self.affine -= usize::from(s.params.cpus.is_some());
        self.affine += usize::from(p.cpus.is_some());
        s.params = p.clone();
    }
}
