//! # sched: the Policy trait, the one driver core, and the scheduling policies of SMART
//!
//! This crate is the scheduling engine of the project. It holds one trait, [`Policy`], modelled on
//! Linux's `struct sched_class`, sched_ext's operations and SimSo's scheduler interface: a policy is
//! told what happened (a task was admitted, woke up, stopped after using some CPU, exited) and asked
//! what runs next on a CPU and for how long. It holds one [`Core`], which every driver (the simulator
//! `smartsim`, `scx_smart` on a real kernel, the conformance suite) feeds its events to: the core keeps
//! what every policy needs (each task's state, parameters, usage and charges; what runs on which CPU;
//! the decisions to make and their order) and checks the protocol on every call. And it holds the
//! [`REGISTRY`], one [`Entry`] per policy: its name, what it is, its options, how to build it, how it
//! maps onto Linux, whether it notifies and whether it is work-conserving. The policies, one file
//! each, are listed by `smartsim policies` (and in docs/scenario.md, checked against the registry by a test).
//!
//! ## Design decisions
//!
//! * **One protocol, one core.** The rules of the trait (a task runs on at most one CPU, only where
//!   its affinity allows, only after the policy chose it there; every dispatch ends with exactly one
//!   stop naming its CPU and why; where a woken task goes and whom it preempts) are kept once, in
//!   [`core`], and asserted there. The simulator and `scx_smart` are adapters that turn their events
//!   (an event queue; records from the kernel) into the core's calls, so a policy tested in
//!   simulation is driven the same way in the kernel.
//! * **A policy is a page.** Bookkeeping every policy needs lives in the core and is read through the
//!   [`View`] each call gets (parameters, affinity, what runs where and since when, recent usage, the
//!   time); a policy file reads top to bottom as its state, its events, its decision.
//! * **Pure logic.** Time is [`Nanos`] (u64 nanoseconds) handed in by the driver; there is no I/O, no
//!   global state, no clock and no thread here. The same code therefore runs in the simulator and
//!   inside the user-space half of a sched_ext scheduler, and a policy cannot tell which one drives it.
//! * **The driver bills.** [`Policy::stop`] carries `charged`, the CPU time the task is billed for. The
//!   driver decides it (exact nanoseconds, or whole ticks when billing is tick-sampled, Etsion 2003
//!   §4); a policy must not look at anything else.
//! * **Dense task ids.** [`TaskId`] is a small index chosen by the driver (the simulator's task number,
//!   or a slot `scx_smart` maps a pid to), so the core and the policies keep per-task state in vectors.
//! * **Classes are a policy made of policies.** Real kernels stack their schedulers in classes (Linux's
//!   deadline, real-time and fair classes; SVR4's real-time, system and time-sharing classes); here the
//!   [`stack`] is one more [`Policy`] whose classes are policies of the registry, each given a view of its
//!   own tasks only, so no other policy, the core or a driver knows of classes. A task names its class
//!   in [`TaskParams::class`]; a policy alone may read it to tell its own kinds apart (`rt`: SCHED_FIFO or
//!   SCHED_RR), and its registry entry lists the names it serves ([`Entry::classes`]). What keeps Linux
//!   alive under a real-time hog (real-time throttling, the fair server) is the stack's, per CPU.
//! * **No allocation per decision** where it can be avoided: the core and the policies keep their
//!   scratch buffers.
//!
//! ## Tie-breaks
//!
//! Every policy orders equal keys the same way every run, and says how in its doc (each has a test
//! with equal keys):
//!
//! | policy | key | among equals |
//! |---|---|---|
//! | `edf` | absolute deadline | first come, first served by release ([`TimeConstraint::release`]), kept when preempted, as SimSo; then task number |
//! | `fifo`, `rr` | priority | queue order: woken at the back, preempted at the front (POSIX), `rr` at the back when its slice ends |
//! | `ts` | level (`umdpri`) | queue order: woken, expired, lifted or yielding at the back, preempted at the front (Solaris) |
//! | `eevdf` | virtual deadline, among eligible tasks | the order they joined the queue, every stop joining behind its equals (Linux's tree puts an equal key to the right) |
//! | `wfq`, `smart` (conventional) | priority, then (biased) virtual finishing time | queue position: preempted in front of its equals, woken, yielded or at quantum's end behind them; then task number |
//! | `smart` (working schedule) | deadline | value order (the more valuable request first) |
//! | `edf`, `fifo`, `rr` with `ties = "task"` | as above | as SimSo 0.8.5's global `EDF` (task number) and `RM` (its ready list: a woken or preempted job at the back), each job placed where SimSo's dispatcher places it (`simso.rs`): every job agrees with SimSo's on 1 to 8 CPUs (`scripts/simso-check --periods ms`, 2026-11-27), except under `RM` with jobs aborted at their deadlines (SimSo's own issue) |
//! | `rt` | priority | queue order, as `fifo` and `rr` (SCHED_FIFO and SCHED_RR tasks share one queue per priority) |
//! | `svr4-ts` | level | queue order, as `ts` |
//! | `svr4-rt`, `sys` | priority | queue order: woken or expired at the back, preempted at the front |
//! | `linux-2.4` | goodness | the first in the run queue, where a woken task goes to the head: the most recently woken |
//! | `cfs` | virtual runtime | the order they joined the queue |
//! | `cbs` | scheduling deadline | arrival order, a preempted task keeping its place; tasks without a reservation first come, first served below |
//! | `stack` | the class, higher first | the class's own |
//! | partitioned | the inner policy's, per CPU | the inner policy's |
//!
//! ## N CPUs
//!
//! A policy is built for a fixed number of CPUs (1 to [`MAX_CPUS`]) and its calls are sched_ext's
//! operations, one to one (see [`Policy`]). What a policy sees: each task's parameters with its
//! affinity ([`TaskParams::cpus`]); wake-ups; for a woken task, the idle CPUs it may use
//! ([`Policy::select_cpu`]) or else the CPUs it may use that run something, with what they run
//! ([`Policy::preempt_for`]); a request for work from one CPU ([`Policy::pick_next`]); every stop with
//! its CPU. A policy that plans the placement of an instant as a whole rather than per woken task
//! (`edf`, `fifo` and `rr` with `ties = "task"`, which replay SimSo's dispatcher) realises it by
//! kicking the CPUs that must decide again ([`Policy::kick`], sched_ext's `scx_bpf_kick_cpu`),
//! which the core asks for once every other decision of the instant is made; a policy that does
//! not kick (the default) is driven exactly as before there were kicks. What the
//! core guarantees and checks is in [`core`]. What a policy guarantees:
//! `pick_next(cpu)` returns a runnable task the affinity allows there, and not one it returned for
//! another CPU without a stop in between.
//!
//! Global policies keep one queue for all CPUs; Linux's fair classes (`eevdf`, `cfs`) keep one per CPU
//! as the kernel does, balanced by [`percpu::PerCpu`] (a policy that can move tasks between its copies
//! implements [`percpu::RunQueue`]); [`partition::Partitioned`] runs one uniprocessor copy
//! per CPU for tasks bound to one CPU each (`partition = "affinity"`, or `"ffd"`: first fit by
//! decreasing utilisation, as SimSo's P_EDF). Proportional share on N CPUs readjusts weights that
//! exceed what one CPU can give ([`fair`], Chandra et al. 2000), and SMART checks its working schedule
//! by an EDF list schedule on the N CPUs ([`smart`]).
//!
//! ## Time that cannot wrap
//!
//! Time is a bare `u64` of nanoseconds ([`Nanos`]), here and in `workload`, `smartsim` and `trace`,
//! and one discipline keeps every sum and product of user values from wrapping:
//!
//! 1. **Bounded where it enters.** No time a user gives exceeds [`MAX_TIME`] (1,000,000 h, 3.6 ×
//!    10^18 ns, about 114 years): every scenario key (`workload`'s validator, which also keeps a run's
//!    CPU time, `duration × cpus`, and a cache refill within it), every policy option (read only
//!    through [`OptReader::time`], which refuses a longer one naming its key) and every time on
//!    smartsim's command line. A random draw (an `exec`, a `think` time) and an estimate are clamped
//!    to it.
//! 2. **Instants stay below the [`HORIZON`]** (2 × `MAX_TIME`, under 2^63). A run reaches no instant
//!    past its duration (at most `MAX_TIME`); what it records is such an instant plus one bounded
//!    time: a release is `start + k·period` before the end plus a jitter shorter than the period, a
//!    deadline a nominal release plus a relative deadline. So a release whose time would pass 2^63
//!    cannot be written, and any sum of up to five bounded values (an instant and the times added
//!    to it: a wake-up is now + think + jitter, beyond the end at worst) fits in 64 bits: the hot
//!    path adds with a bare `+`.
//! 3. **Everything else is checked or saturating**: a product (`k·period`, ticks × their length) is
//!    `checked_mul` or computed in `u128` and narrowed by [`clamp_nanos`]; a sum of unboundedly many
//!    terms (charges over a run, overheads piling up at one instant, the totals of a trace read
//!    from a file, whose times the reader cannot bound) saturates.
//!
//! A newtype (`Instant`, `Duration` without a bare `+`) would say the same in types, but it changes
//! the [`Policy`] trait and every policy, `scx_smart`'s driver and hourglass in one step, and puts a
//! check on every addition of the simulator's hot path; with the bound at the edge those checks
//! could never fire. The edge is guarded instead: a test (`crates/sim/tests/time_discipline.rs`)
//! reads the sources and fails when a user time could enter without its bound (a parser call
//! outside the bounded readers, a policy reading an option without [`OptReader`]), and property
//! tests run scenarios whose times are drawn at the edges (0, 1, `MAX_TIME`, 2^62..2^64 − 1,
//! products that overflow) to check that each is refused with its file, line and key or runs with
//! every release, deadline and stretch in order and before the horizon.
//!
//! ## Where it is weak
//!
//! * Load balancing is Linux's fair class's alone ([`percpu`], one scheduling domain, loads without
//!   PELT); the other policies keep one global queue or, partitioned, never move a task, and nothing
//!   models caches shared between CPUs (a migration has one fixed cost, set by the driver).
//! * Virtual time is kept in `f64` nanoseconds-per-share. It is exact enough for runs of days (53 bits),
//!   and deterministic, but not bit-identical to an integer implementation.
//! * No policy uses [`Policy::tick`] yet: SVR4's time sharing counts its quantum in billed time and
//!   EEVDF's request ends fall on a tick grid of its own (its `tick` option).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

/// A broken rule of the protocol: the driver or the policy has a bug, and going on would make every
/// later number wrong. Out of line and cold, so that the checks on every call cost a compare each.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn broken(what: fmt::Arguments<'_>) -> ! {
    panic!("{what}")
}

/// Checks a rule of the protocol ([`broken`] if it does not hold); defined before the modules that
/// use it.
macro_rules! check {
    ($cond:expr, $($arg:tt)+) => {
        if !$cond {
            $crate::broken(format_args!($($arg)+))
        }
    };
}

mod augtree;
pub mod cbs;
pub mod cfs;
pub mod core;
pub mod cpuset;
pub mod edf;
pub mod eevdf;
pub mod fair;
pub mod fixed;
pub mod linux;
pub mod linux24;
pub mod lottery;
pub mod partition;
mod parts;
pub mod percpu;
pub mod registry;
mod simso;
pub mod smart;
pub mod stack;
pub mod svr4_rt;
pub mod svr4_ts;
pub mod testing;
pub mod ts;
pub mod view;
pub mod wfq;

mod usage;

use std::collections::BTreeMap;
use std::fmt;

pub use crate::core::Core;
pub use registry::{
    build, entry, names, pace, Entry, LinuxClass, OptReader, OptionDoc, Pace, Partition, PolicyError, Slice,
    Walks, MIN_SLICE, REGISTRY,
};
pub use usage::Usage;
pub use view::{State, View};

/// Time and durations, in nanoseconds.
pub type Nanos = u64;

/// One millisecond in [`Nanos`].
pub const MS: Nanos = 1_000_000;

/// The longest time a user may give: 1,000,000 hours (3.6 × 10^18 ns, about 114 years). A scenario's
/// times, a policy's options and smartsim's command-line times are refused beyond it (see "Time that
/// cannot wrap" above); five of them add up to less than 2^64.
pub const MAX_TIME: Nanos = 3_600_000_000_000_000_000;

/// No release or deadline of a run reaches it: 2 × [`MAX_TIME`] (7.2 × 10^18 ns, below 2^63); see
/// "Time that cannot wrap" above.
pub const HORIZON: Nanos = 2 * MAX_TIME;

// What the discipline counts on: the horizon is below 2^63, and five bounded times add up in 64 bits.
const _: () = assert!(HORIZON < 1 << 63 && MAX_TIME.checked_mul(5).is_some());

/// A product or quotient computed in `u128` as nanoseconds, saturating at `Nanos::MAX` instead of
/// dropping its high bits (what `as u64` would do).
///
/// ```
/// assert_eq!(sched::clamp_nanos(5), 5);
/// assert_eq!(sched::clamp_nanos(u128::from(u64::MAX) * 3), u64::MAX);
/// ```
#[inline]
pub fn clamp_nanos(x: u128) -> Nanos {
    Nanos::try_from(x).unwrap_or(Nanos::MAX)
}

/// A CPU, numbered from 0 by the driver.
pub type CpuId = u32;

/// The busy CPUs a waking task may preempt, each with the task it runs, in ascending CPU order
/// ([`Policy::preempt_for`]).
pub type Running = [(CpuId, TaskId)];

/// The most CPUs a policy can be built for.
pub const MAX_CPUS: usize = 1024;

/// A task as the driver names it: a small dense index (the policy keeps per-task state in a vector).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(pub u32);

impl TaskId {
    /// The index as `usize`.
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// What the user says about a task: its importance and its share (SMART ch. 3.2).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskParams {
    /// Larger is more important, as in Solaris and SMART. Fixed-priority policies use it as the
    /// POSIX real-time priority.
    pub priority: i32,
    /// Proportional share among tasks of the same priority. Zero marks a legacy task: it runs only
    /// when no task with a share at its priority wants the CPU (SMART §5.3).
    pub share: u32,
    /// How much extra delay a conventional task tolerates (SMART's bound on its bias, §4.3/§6.2.3.2).
    /// `None` = the bias table's own maximum.
    pub latency_tolerance: Option<Nanos>,
    /// The CPUs the task may run on, ascending (its affinity); `None` = any.
    pub cpus: Option<Vec<CpuId>>,
    /// Its nice level, −20..=19 (scenario key `nice`), for the policies that have one (`svr4-ts`,
    /// `linux-2.4`, `cfs`, `eevdf`); `None` = the policy's own default (`eevdf`: the level of its
    /// share, [`linux::share_level`]; the others: 0).
    pub nice: Option<i8>,
    /// The class of a class stack it runs in (scenario key `class`, [`stack`]): the name of one of
    /// the stack's policies or of a class that policy serves (`fifo` and `rr` in Linux's `rt`);
    /// `None` = the stack's lowest class. A policy built alone may read it to tell its own kinds
    /// of task apart (`rt`: SCHED_FIFO or SCHED_RR).
    pub class: Option<String>,
    /// A SCHED_DEADLINE reservation (scenario keys `runtime`, `dl_deadline`, `dl_period`), for `cbs`.
    pub reservation: Option<Reservation>,
}

impl Default for TaskParams {
    fn default() -> Self {
        TaskParams {
            priority: 0,
            share: 1,
            latency_tolerance: None,
            cpus: None,
            nice: None,
            class: None,
            reservation: None,
        }
    }
}

/// A CPU reservation as SCHED_DEADLINE takes it (`sched_attr`'s `sched_runtime`, `sched_deadline`,
/// `sched_period`): `runtime` of CPU in every `period`, within `deadline` of the period's start.
/// Valid ones have `0 < runtime ≤ deadline ≤ period`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// The CPU time granted per period.
    pub runtime: Nanos,
    /// The relative deadline by which it is granted.
    pub deadline: Nanos,
    /// The period.
    pub period: Nanos,
}

impl TaskParams {
    /// Whether the task may run on `cpu`.
    #[inline]
    pub fn allows(&self, cpu: CpuId) -> bool {
        self.cpus.as_ref().is_none_or(|c| c.binary_search(&cpu).is_ok())
    }
}

/// Why a task stopped running.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// It blocked (sleep, I/O, end of a request); it is not runnable until [`Policy::wake`].
    Blocked,
    /// Something else was chosen before its slice ended; it is still runnable.
    Preempted,
    /// It gave up the CPU voluntarily but is still runnable.
    Yielded,
    /// The slice the policy gave it in [`Dispatch::slice`] is used up; it is still runnable.
    SliceEnd,
}

impl Stop {
    /// Where a stopped task goes back in its queue, as the Solaris dispatcher and POSIX have it: `None` if
    /// it blocked (it is not runnable), `Some(true)` in front of its equals if it was preempted, `Some(false)`
    /// behind them if it yielded or used up its slice.
    #[inline]
    pub fn requeue_front(self) -> Option<bool> {
        match self {
            Stop::Blocked => None,
            Stop::Preempted => Some(true),
            Stop::Yielded | Stop::SliceEnd => Some(false),
        }
    }
}

/// The policy's answer to "what runs next".
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// The task to run.
    pub task: TaskId,
    /// For how long at most; `None` = until it blocks or is preempted.
    pub slice: Option<Nanos>,
}

/// A time constraint (SMART §3.4.1), with notification request (§3.4.2). All times are absolute.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TimeConstraint {
    /// The time by which the block of code should be complete.
    pub deadline: Nanos,
    /// Estimated processing time of the block. `None`: the scheduler conservatively assumes the task
    /// needs all the time there is until the deadline (§3.4.1 default).
    pub cpu_estimate: Option<Nanos>,
    /// After this time the scheduler notifies the task if its deadline is unlikely to be met.
    /// `Some(0)` (or any past time): as soon as the scheduler sees the miss coming;
    /// `Some(deadline)`: only once the deadline has passed unmet; `None`: never (§3.4.2 default).
    pub notify_time: Option<Nanos>,
    /// For a periodic task, its period: the scheduler then counts its future demand
    /// (estimate / period) in the feasibility test (SMART eq. 8). `None` for aperiodic work.
    pub period: Option<Nanos>,
    /// When the request was released (arrived), if the caller knows: a periodic job's release, which
    /// precedes the call when the job waited behind its late predecessor. Policies that serve equal
    /// deadlines first come, first served (EDF) order by it. `None`: the time of the call.
    pub release: Option<Nanos>,
}

impl TimeConstraint {
    /// A deadline alone: no estimate (the scheduler assumes the request needs all the time there is),
    /// no notification, no period, released now.
    pub fn deadline(deadline: Nanos) -> Self {
        TimeConstraint { deadline, cpu_estimate: None, notify_time: None, period: None, release: None }
    }
}

/// A notification (SMART §3.4.2): the scheduler tells a task that its deadline will not be met.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    /// The task notified.
    pub task: TaskId,
    /// The deadline of the constraint it concerns.
    pub deadline: Nanos,
    /// When the scheduler decided.
    pub at: Nanos,
    /// Whether the deadline already passed (`true`) or is only predicted to be missed.
    pub passed: bool,
}

/// Resource availability of a task (SMART §3.4.3), in percent of one CPU.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Availability {
    /// The share of the CPU the task has recently been consuming.
    pub consumption_rate: f64,
    /// The share of the CPU the task is entitled to by its priority and share.
    pub allocation_rate: f64,
}

/// A value of a policy option (`[scheduler]` keys other than `policy` in a scenario).
#[derive(Clone, Debug, PartialEq)]
pub enum OptValue {
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A duration.
    Time(Nanos),
    /// Anything else.
    Str(String),
    /// A list of strings (`classes = ["rt", "sys", "ts"]`).
    List(Vec<String>),
    /// A table of options for a part of the policy (`[scheduler.eevdf]` under a class stack).
    Table(Options),
}

/// Options for a policy, by key.
pub type Options = BTreeMap<String, OptValue>;

/// The scheduling policy interface: what a policy is told and what it answers. See the crate
/// documentation for the model, and [`Core`] for the protocol every driver follows.
///
/// Every call gets the [`View`]: what the core knows of every task (state, parameters, usage) and
/// every CPU (what runs there, since when), and the current time ([`View::now`]). A policy keeps
/// only its own state. The calls, with their sched_ext counterparts:
/// * [`admit`](Policy::admit) once per task before anything else about it; the task is not runnable yet.
/// * [`wake`](Policy::wake) when it becomes runnable (`enqueue` of a waking task). The core then asks
///   [`select_cpu`](Policy::select_cpu) if a CPU the task may use is idle (`select_cpu`), else
///   [`preempt_for`](Policy::preempt_for) which CPU, if any, to take back for it (`kick_cpu` with
///   `SCX_KICK_PREEMPT`).
/// * [`pick_next`](Policy::pick_next) whenever a CPU is free (`dispatch(cpu)`); the task returned runs
///   there (`running`). [`stop`](Policy::stop) each time a task leaves its CPU (`stopping`), with that
///   CPU and the CPU time it is billed for; a task that did not block is queued again by the policy
///   (`enqueue`). [`exit`](Policy::exit) after its last stop.
/// * [`tick`](Policy::tick) per CPU, for policies that ask for ticks.
/// * [`take_notifications`](Policy::take_notifications) after every call that may produce some.
/// * [`next_timer`](Policy::next_timer) is the earliest time at which the policy wants
///   [`timer`](Policy::timer) to be called (sleep-credit expiry, notify-time); the driver honours it.
///
/// What the view shows during a call: in `admit`, the task admitted with its parameters; in `wake`,
/// the task runnable; in `stop`, the task off its CPU (runnable unless it blocked); in `pick_next`,
/// the CPU free; in `set_params`, the old parameters (the new ones are the argument); in `exit`, the
/// task still admitted.
pub trait Policy {
    /// A task exists, with these parameters; it is not runnable until [`Policy::wake`].
    fn admit(&mut self, t: TaskId, p: &TaskParams, v: &View);
    /// The task is gone (it is not running; it may be runnable).
    fn exit(&mut self, t: TaskId, v: &View);
    /// The task became runnable.
    fn wake(&mut self, t: TaskId, v: &View);
    /// Task `t` left CPU `cpu` after being billed `charged` since it was dispatched there. Unless it
    /// blocked, it is runnable again.
    fn stop(&mut self, t: TaskId, cpu: CpuId, charged: Nanos, why: Stop, v: &View);
    /// A clock tick on `cpu`; `true` asks the driver to reschedule `cpu`.
    fn tick(&mut self, _cpu: CpuId, _v: &View) -> bool {
        false
    }
    /// Whether the policy needs [`Policy::tick`] at all (the simulator skips ticks otherwise).
    fn uses_tick(&self) -> bool {
        false
    }
    /// Whether every CPU picks from the same tasks (one queue for all), so that an idle CPU that finds
    /// nothing to run speaks for every idle CPU a task may use. `false` for a policy that keeps a queue
    /// per CPU ([`partition::Partitioned`], [`percpu::PerCpu`]): each idle CPU is asked in turn.
    fn shares_one_queue(&self) -> bool {
        true
    }
    /// Whether idle CPU `cpu`, asked for work now ([`Policy::pick_next`]), might get some: `false` only
    /// when it certainly would not, and the core then does not ask. For a policy with a queue per CPU
    /// whose idle CPUs would otherwise each be asked after every wake-up anywhere (the default: `true`).
    fn might_find_work(&self, _cpu: CpuId, _v: &View) -> bool {
        true
    }
    /// `t` just woke and the CPUs in `idle` (ascending, all allowed to it, at least one) have nothing
    /// to run: the one to offer it. The default, as Linux's `select_cpu_dfl`: the CPU it last ran on
    /// (`prev`) if idle, else the lowest-numbered idle CPU.
    fn select_cpu(&self, _t: TaskId, prev: Option<CpuId>, idle: &[CpuId], _v: &View) -> CpuId {
        prev.filter(|p| idle.contains(p)).unwrap_or(idle[0])
    }
    /// `woken` just woke and every CPU it may use is busy; `running` lists them with their tasks
    /// (ascending CPU). The CPU to preempt so that the policy decides again there, or `None`. Ties
    /// between equally good victims go to `woken`'s previous CPU (`prev`), then the lowest number.
    /// A driver that must act before it can ask (the kernel) may also ask it of a blocked task, as
    /// a forecast of its wake-up ([`Core::forecast_wake`]): the answer must not depend on the
    /// task being in the policy's queues.
    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, v: &View) -> Option<CpuId>;
    /// The task to run next on `cpu` and for how long, or `None` to idle. It is runnable, not running
    /// on another CPU, and allowed on `cpu`.
    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch>;
    /// Set (`Some`) or clear (`None`) the task's time constraint. Baselines without time constraints
    /// remember nothing.
    fn set_time_constraint(&mut self, _t: TaskId, _c: Option<TimeConstraint>, _v: &View) {}
    /// New priority, share or affinity for a task (SMART §4.3, "Reassigned user parameters").
    fn set_params(&mut self, t: TaskId, p: &TaskParams, v: &View);
    /// The user interacted with the task (a key press reached it): SMART resets its bias.
    fn interact(&mut self, _t: TaskId, _v: &View) {}
    /// Availability of the task (SMART §3.4.3).
    fn availability(&self, t: TaskId, v: &View) -> Availability;
    /// Move the notifications produced so far into `out` (no allocation when there are none). Only
    /// a policy whose registry entry says it notifies ([`Entry::notifies`]) may produce any.
    fn take_notifications(&mut self, _out: &mut Vec<Notification>) {}
    /// The earliest time at which [`Policy::timer`] should be called, if any.
    fn next_timer(&self) -> Option<Nanos> {
        None
    }
    /// Called at (or after) [`Policy::next_timer`]; `true` asks the driver to reschedule every CPU.
    fn timer(&mut self, _v: &View) -> bool {
        false
    }
    /// A CPU that must decide again now, as sched_ext's `scx_bpf_kick_cpu` (with `SCX_KICK_PREEMPT`
    /// when it runs a task): asked by the core once every other decision of the instant is made, and
    /// again after each decision it causes, until `None` (the default: a policy that places each
    /// woken task through [`select_cpu`](Policy::select_cpu) and
    /// [`preempt_for`](Policy::preempt_for) never kicks). For a policy that plans the placement of an
    /// instant as a whole; it must kick only a CPU where a decision changes something, or the core
    /// reports that it did not settle.
    fn kick(&mut self, _v: &View) -> Option<CpuId> {
        None
    }
    /// The policy's own counters (the core counts decisions), for statistics.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// The work of a policy whose decisions walk its tasks ([`Pace::walks`]) so far: the
    /// tasks (or working-schedule entries) its loops have visited since it was built, each a few
    /// nanoseconds. A driver that bounds a run's time reads it between decisions (the simulator
    /// stops a run past its limit, marked partial); 0 for a policy whose decisions take constant or
    /// logarithmic time (the default). Wrappers add up their parts'.
    fn walked(&self) -> u64 {
        0
    }
}

/// The CPU among `running` whose task is the least important by `rank` (larger = less important),
/// with `woken`'s tie rule: among equals its previous CPU `prev`, then the lowest number. Returns the CPU
/// and the rank of its task. Policies use it for [`Policy::preempt_for`].
pub fn least_important<K: Ord>(
    running: &[(CpuId, TaskId)],
    prev: Option<CpuId>,
    rank: impl Fn(TaskId) -> K,
) -> Option<(CpuId, K)> {
    let mut best: Option<(CpuId, K)> = None;
    for &(cpu, t) in running {
        let k = rank(t);
        let better = match &best {
            None => true,
            Some((bc, bk)) => k > *bk || (k == *bk && prev == Some(cpu) && prev != Some(*bc)),
        };
        if better {
            best = Some((cpu, k));
        }
    }
    best
}

/// [`Policy::preempt_for`] of a policy that ranks tasks by one number (`rank`, larger = more
/// important): the CPU running the least important task, by [`least_important`]'s tie rule, if
/// `woken` outranks it.
pub fn preempt_lower_rank<K: Ord>(
    woken: TaskId,
    prev: Option<CpuId>,
    running: &[(CpuId, TaskId)],
    rank: impl Fn(TaskId) -> K,
) -> Option<CpuId> {
    let (cpu, lowest) = least_important(running, prev, |r| std::cmp::Reverse(rank(r)))?;
    (rank(woken) > lowest.0).then_some(cpu)
}

/// For a policy with a FIFO queue per rank: takes out the first task allowed on `cpu` from the
/// most important non-empty queue (`queues` run from the least to the most important).
pub fn take_first_allowed<'q>(
    queues: impl DoubleEndedIterator<Item = &'q mut std::collections::VecDeque<TaskId>>,
    v: &View,
    cpu: CpuId,
) -> Option<TaskId> {
    queues.rev().find_map(|q| {
        let i = q.iter().position(|&t| v.allows(t, cpu))?;
        q.remove(i)
    })
}

/// A total order on `f64` for use in ordered sets (virtual times are never NaN).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub(crate) struct Ord64(pub f64);
impl Eq for Ord64 {}
impl PartialOrd for Ord64 {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ord64 {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// A core around a policy of a known type, for the policies' unit tests (notifications allowed).
#[cfg(test)]
pub(crate) fn test_core<P: Policy>(p: P, cpus: usize) -> Core<P> {
    Core::new("test", Box::new(p), cpus, true)
}

/// Makes the decisions of an instant at `now` as a driver does, for unit tests: each CPU the core
/// names stops what it runs (`Preempted`, billed 0) and picks. Returns the CPUs in the order they
/// decided.
#[cfg(test)]
pub(crate) fn settle<P: ?Sized + Policy>(core: &mut Core<P>, now: Nanos) -> Vec<CpuId> {
    let mut decided = Vec::new();
    while let Some(c) = core.next_decision() {
        core.clear_request(c);
        if let Some(t) = core.view().running(c) {
            core.stop(t, 0, Stop::Preempted, now);
        }
        core.pick(c, now);
        decided.push(c);
    }
    decided
}

/// Grow a per-task vector so that index `t` exists.
#[inline]
pub(crate) fn slot<T: Default>(v: &mut Vec<T>, t: TaskId) -> &mut T {
    if v.len() <= t.idx() {
        v.resize_with(t.idx() + 1, T::default);
    }
    &mut v[t.idx()]
}
