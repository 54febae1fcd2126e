//! The adapter from what sched_ext (through scx_rustland_core and our own BPF program) tells user
//! space to the one driver core of `crates/sched` ([`Core`]): the same core, and so the same protocol,
//! the simulator drives. Nothing here touches BPF, so it is unit-tested, and the conformance suite's
//! event generator drives it with the event sequences the kernel produces.
//!
//! What the kernel tells us, and what we make of it (sched_ext's operations in brackets):
//!
//! * **A task was queued to user space** (`enqueue`, a `QueuedTask`): its pid (a thread id), the
//!   enqueue flags, the CPU it last ran on, the start and stop timestamps of its last stretch on a CPU,
//!   its weight (from its nice value), how many CPUs it may use.
//!   - A pid we have not seen: [`Core::admit`] then [`Core::wake`].
//!   - One we dispatched and have not seen stop: it left its CPU (`stopping`). Why, sched_ext says:
//!     with `SCX_ENQ_WAKEUP` set it blocked, and woke before we read that it blocked (`stopping` with
//!     `runnable` false): `Blocked`, then [`Core::wake`]. Without it, its slice is 0: it ran out
//!     (`SliceEnd`), or its CPU was kicked with `SCX_KICK_PREEMPT` (`Preempted`), which our BPF
//!     program counts per CPU ([`Driver::set_kicks`]: a kick since the dispatch is a preemption). A task
//!     preempted by a higher class keeps its slice and the head of its CPU's queue: it is not queued to
//!     us, and its stretches are billed at its next stop. A `sched_yield` also ends the slice: it reads
//!     as `SliceEnd` (scx_rustland_core implements no `yield`).
//!   - One that blocked (below): it woke, [`Core::wake`].
//!   - The CPU time billed is `stop_ts − start_ts` of its last stretch (every stretch since the last
//!     record, when the kernel ran it several times in between), counted once.
//! * **A task blocked** (`stopping` with `runnable` false; our BPF program's record at the switch):
//!   [`Core::stop`] with `Blocked` and the stretch it ran. scx_rustland_core reports nothing until the
//!   task wakes, so without this its CPU would look busy until then. The two rings are read one after
//!   the other, so a task that blocks and wakes at once may show its queued wake-up first: its block
//!   record then describes a stretch that began before the end of the last one known, and is stale
//!   (taken for a new block, it lost a runnable thread for good, and sched_ext ejected the scheduler).
//!   What libsmart shows the thread asking for is applied right after the stop: a thread that
//!   announced its next request and went to sleep until its release has that request's constraint
//!   from the block on, as the dissertation's scheduler would from the system call (SMART's sleep
//!   credit depends on it: with the old request's short relative deadline, a periodic thread would
//!   leave its queue during every sleep and fall behind the hogs in virtual time, job after job).
//! * **Which CPU decides** ([`Driver::decide`]): the core's order ([`Core::next_decision`]), as in
//!   the simulator: a woken task is offered the free CPUs it may use (`select_cpu`), else the policy
//!   names a busy CPU to preempt (`preempt_for`); a free CPU asks the policy (`dispatch(cpu)`). A busy
//!   CPU cannot be stopped from user space at once: the caller kicks it
//!   (`scx_bpf_kick_cpu(SCX_KICK_PREEMPT)` from a BPF syscall program), its task comes back queued, and
//!   the CPU decides then. A dispatch names its CPU (scx_rustland_core puts it on that CPU's queue).
//! * **What the kernel side does before we can** ([`Driver::forecast`]): a thread with a time
//!   constraint that wakes cannot wait for a CPU to enter dispatch and run this process. For each
//!   such thread asleep, the driver asks the core which CPU would decide first if it woke now
//!   ([`Core::forecast_wake`]: the free CPU the policy selects, or the busy CPU the policy would
//!   preempt, or none), and the BPF program kicks that CPU at the wake-up: the policy's answer,
//!   carried out early. The dispatch that follows a preemption is marked
//!   ([`Action::Dispatch::preemption`]), and until that task starts the BPF program keeps other tasks
//!   off its CPU. Dispatches go to the kernel's queues in the order the policy made them.
//! * **Exits are not reported.** A task that exits simply never comes back; [`Driver::reap`] asks the
//!   caller whether each known pid still exists (once a second) and calls [`Core::exit`] for the gone.
//! * **Time constraints and user parameters** come from libsmart's shared memory, read whenever a task is
//!   queued (a seqlock read, no system call), so a constraint set just before blocking is seen at the
//!   wake-up that starts the request.
//! * **A thread that has announced its next request** through libsmart (set a constraint, then slept:
//!   it is blocked and holds a constraint whose latest start is ahead) is an [`Upcoming`] request, and no
//!   other task's slice is allowed to run past that request's latest start (deadline − estimate) less a
//!   margin for the round trip through this process.
//! * **Notifications about finished requests.** The policy learns a new constraint only when the task is
//!   next queued, so the deadline timer of a request the application has already finished and replaced
//!   would report it missed; [`still_wanted`] drops such notifications.

use std::collections::HashMap;

use sched::{
    Availability, Core, CpuId, Nanos, Notification, State, Stop, TaskId, TaskParams, TimeConstraint,
};

/// The longest slice given to a task working on a time constraint.
pub const RT_SLICE_MAX: Nanos = 100_000_000;

/// How long after its slice should have ended a dispatched task that neither came back nor blocked is
/// taken to be lost, while other tasks wait ([`Driver::overdue`]): far beyond a slice's end seen late
/// (an emulated machine stalls for up to tens of milliseconds), far below sched_ext's watchdog (5 s
/// and more).
pub const OVERDUE_GRACE: Nanos = 100_000_000;

/// The shortest slice a task is cut to so that an [`Upcoming`] request can start in time.
pub const MIN_SLICE: Nanos = 250_000;

/// A request a thread has announced through libsmart (it set a time constraint, then slept) that the
/// policy has not seen yet: it learns of it when the thread wakes up and is queued.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Upcoming {
    /// Thread id.
    pub pid: i32,
    /// The request's deadline.
    pub deadline: Nanos,
    /// The latest time it can start and still meet the deadline: deadline − cpu-estimate.
    pub latest_start: Nanos,
}

/// Whether a notification about the request with `deadline` still concerns the application, given the
/// constraint libsmart shows now: not if it has since cleared it or set another one (it finished that
/// request; a late "missed" about it would only interrupt the next one).
pub fn still_wanted(deadline: Nanos, current: Option<TimeConstraint>) -> bool {
    current.is_some_and(|c| c.deadline == deadline)
}

/// One `QueuedTask` as far as the policy is concerned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Queued {
    /// Thread id.
    pub pid: i32,
    /// `SCX_ENQ_WAKEUP` was set: the task blocked and woke up.
    pub wakeup: bool,
    /// Start of its last stretch on a CPU (CLOCK_MONOTONIC ns).
    pub start_ts: u64,
    /// End of its last stretch on a CPU.
    pub stop_ts: u64,
    /// CPU time of its stretches since it last woke up (the kernel side adds every stretch, resets at
    /// wake-up).
    pub exec_runtime: u64,
    /// Weight from its nice value, 100 = nice 0.
    pub weight: u64,
}

/// What libsmart says a thread asks for (see `libsmart::server::Request`).
#[derive(Clone, Debug, PartialEq)]
pub struct Asked {
    /// Changes whenever the thread changed anything.
    pub seq: u32,
    /// Its time constraint.
    pub constraint: Option<TimeConstraint>,
    /// Priority asked for.
    pub priority: Option<i32>,
    /// Share asked for (libsmart units: 1 = default).
    pub share: Option<u32>,
}

/// What the caller does for a decision ([`Driver::decide`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Preempt this CPU (`SCX_KICK_PREEMPT`): its task is to stop, and the CPU decides when it has.
    Kick(CpuId),
    /// Run thread `pid` on `cpu` for at most `slice`.
    Dispatch {
        /// Thread id.
        pid: i32,
        /// The CPU.
        cpu: CpuId,
        /// Its slice.
        slice: Nanos,
        /// The policy's choice for a CPU it preempted: until `pid` starts, nothing else should.
        preemption: bool,
    },
}

/// The kernel's side of a task the core knows.
#[derive(Clone, Debug)]
struct Slot {
    pid: i32,
    last_stop: u64,
    last_exec: u64,
    /// When it was first queued to us (a stretch reported later began after it).
    admitted: u64,
    /// The slice of its last dispatch.
    slice: Nanos,
    seen_seq: Option<u32>,
    /// Deadline of its libsmart time constraint, if it has one.
    deadline: Option<Nanos>,
    /// Its weight at its last record (from its nice value).
    weight: u64,
    /// When it entered its state (became runnable, was dispatched, blocked): for [`Driver::describe`].
    since: Nanos,
}

/// Counters for statistics.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Tasks admitted.
    pub admitted: u64,
    /// Tasks found gone.
    pub exited: u64,
    /// Queued events.
    pub queued: u64,
    /// Blocked records used (a task blocked on the CPU we gave it).
    pub blocked: u64,
    /// Decisions that dispatched a task.
    pub dispatched: u64,
    /// Preemptions (kicks) the core asked of the kernel.
    pub preemptions: u64,
    /// Stops read as preemptions: the CPU was kicked since the dispatch (by us, or by the BPF program
    /// carrying out a forecast).
    pub preempted_stops: u64,
    /// Notifications produced.
    pub notifications: u64,
    /// Stretches a task ran while we held it as waiting for a decision (the kernel ran it on its own,
    /// e.g. a dispatch made before it was queued again): they cannot be billed to the policy.
    pub unbilled: u64,
    /// CPU time of those stretches (ns).
    pub unbilled_ns: u64,
    /// Records that covered several stretches on a CPU (see [`Driver::queued`]).
    pub split: u64,
    /// Bills cut to the time between a task's two records (a timestamp was wrong).
    pub clamped: u64,
    /// Block records about a stretch the driver already knew had ended (read after the queued
    /// wake-up that followed the block): ignored.
    pub stale_blocks: u64,
    /// Dispatched tasks taken back by [`Driver::overdue`].
    pub taken_back: u64,
}

/// The state between the kernel's events and the core.
pub struct Driver {
    core: Core,
    ids: HashMap<i32, TaskId>,
    slots: Vec<Option<Slot>>,
    free: Vec<TaskId>,
    notes: Vec<Notification>,
    /// Notifications taken from the core, by pid, not yet handed out.
    pending: Vec<(i32, u64, bool)>,
    /// Per CPU: the kicks the BPF program counted, as last read; as they were at its last dispatch;
    /// whether its next dispatch carries out a preemption.
    kicks: Vec<u64>,
    kicks_at_dispatch: Vec<u64>,
    preempted: Vec<bool>,
    /// Time kept between the end of a slice cut for an [`Upcoming`] request and the request's latest start.
    wakeup_margin: Nanos,
    /// Counters.
    pub counters: Counters,
}

impl From<libsmart::server::Request> for Asked {
    fn from(r: libsmart::server::Request) -> Self {
        Asked { seq: r.seq, constraint: r.constraint, priority: r.priority, share: r.share }
    }
}

/// Policy share of a task: its kernel weight (100 at nice 0), or libsmart's share × 100, so that nice
/// values and SMART shares compose.
pub fn share_of(weight: u64, asked: Option<u32>) -> u32 {
    match asked {
        Some(s) => s.saturating_mul(100),
        None => weight.clamp(1, 10_000) as u32,
    }
}

/// The options a policy is built with when its shares are kernel weights (100 at nice 0): those its
/// registry entry names ([`sched::Entry::kernel_weights`]).
pub fn kernel_weight_options(entry: &sched::Entry) -> sched::Options {
    entry.kernel_weights.iter().map(|(k, v)| (k.to_string(), sched::OptValue::Int(*v))).collect()
}

impl Driver {
    /// A driver for the policy in `core` (built for the machine's CPUs).
    pub fn new(core: Core) -> Self {
        let n = core.cpus();
        Driver {
            core,
            ids: HashMap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            notes: Vec::new(),
            pending: Vec::new(),
            kicks: vec![0; n],
            kicks_at_dispatch: vec![0; n],
            preempted: vec![false; n],
            wakeup_margin: 1_000_000,
            counters: Counters::default(),
        }
    }

    /// The core (what runs where, as the policy sees it).
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// Sets the margin kept before an [`Upcoming`] request's latest start (default 1 ms): the time a
    /// wake-up takes to reach this process and the task it dispatches to start.
    pub fn set_wakeup_margin(&mut self, margin: Nanos) {
        self.wakeup_margin = margin;
    }

    /// The preemptions the kernel side counted on each CPU so far (`SCX_KICK_PREEMPT` kicks, ours and
    /// the BPF program's): a task dispatched on a CPU that has been kicked since was preempted.
    pub fn set_kicks(&mut self, kicks: &[u64]) {
        let n = self.kicks.len().min(kicks.len());
        self.kicks[..n].copy_from_slice(&kicks[..n]);
    }

    fn task(&self, pid: i32) -> Option<TaskId> {
        self.ids.get(&pid).copied()
    }

    fn slot(&mut self, t: TaskId) -> &mut Slot {
        self.slots[t.idx()].as_mut().expect("a task the core knows has a slot")
    }

    /// The request `asked` announces for `pid`, if it is one that has not started: the constraint of a
    /// blocked thread whose latest start is still ahead. `None` for unknown tasks, for tasks waiting for
    /// a decision (the policy decides about those itself) and for tasks on a CPU.
    pub fn upcoming(&self, pid: i32, asked: &Asked, now: Nanos) -> Option<Upcoming> {
        let t = self.task(pid)?;
        let c = asked.constraint?;
        if self.core.view().state(t) != State::Blocked {
            return None;
        }
        let latest_start = c.deadline.saturating_sub(c.cpu_estimate.unwrap_or(0));
        (latest_start > now).then_some(Upcoming { pid, deadline: c.deadline, latest_start })
    }

    /// The CPU the kernel side should kick if `pid`, asleep, wakes now: the one that would decide
    /// first for it ([`Core::forecast_wake`]). `None` for unknown or runnable threads, and when the
    /// policy would take no CPU for it.
    pub fn forecast(&self, pid: i32) -> Option<CpuId> {
        self.core.forecast_wake(self.task(pid)?)
    }

    /// The thread running on `cpu`, as the driver believes.
    pub fn running_pid(&self, cpu: CpuId) -> Option<i32> {
        let t = self.core.view().running(cpu)?;
        self.slots[t.idx()].as_ref().map(|s| s.pid)
    }

    /// What the core knows of thread `pid`, if it knows it.
    pub fn state(&self, pid: i32) -> Option<State> {
        self.task(pid).map(|t| self.core.view().state(t))
    }

    /// Tasks waiting for a decision.
    pub fn runnable(&self) -> usize {
        self.core.view().runnable_count()
    }

    /// Tasks known.
    pub fn known(&self) -> usize {
        self.ids.len()
    }

    /// CPU `cpu` is offline: never free.
    pub fn set_offline(&mut self, cpu: CpuId) {
        if (cpu as usize) < self.core.cpus() {
            self.core.set_offline(cpu);
        }
    }

    fn apply_asked(&mut self, t: TaskId, asked: Option<Asked>, weight: u64, now: Nanos) {
        let (seq, constraint, priority, share) = match asked {
            Some(a) => (Some(a.seq), a.constraint, a.priority, a.share),
            None => (None, None, None, None),
        };
        let old = self.core.view().params(t);
        let params = TaskParams {
            priority: priority.unwrap_or(0),
            share: share_of(weight, share),
            latency_tolerance: None,
            cpus: old.cpus.clone(),
            ..TaskParams::default()
        };
        if params != *old {
            self.core.set_params(t, &params, now);
        }
        let slot = self.slot(t);
        if seq != slot.seen_seq {
            slot.seen_seq = seq;
            slot.deadline = constraint.map(|c| c.deadline);
            self.core.set_time_constraint(t, constraint, now);
        }
    }

    /// Takes `t` off its CPU, billing `ran`.
    fn stopped(&mut self, t: TaskId, ran: Nanos, why: Stop, now: Nanos) {
        self.slot(t).since = now;
        self.core.stop(t, ran, why, now);
    }

    fn wake(&mut self, t: TaskId, now: Nanos) {
        self.slot(t).since = now;
        self.core.wake(t, now);
    }

    /// A task was queued to user space. `asked` is what libsmart says its thread asks for; `cpus` its
    /// affinity when it may not use every CPU (read by the caller at its first record).
    pub fn queued(&mut self, q: &Queued, asked: Option<Asked>, cpus: Option<Vec<CpuId>>, now: Nanos) {
        self.counters.queued += 1;
        let Some(t) = self.task(q.pid) else {
            self.admit(q, asked, cpus, now);
            return;
        };
        self.slot(t).weight = q.weight;
        match self.core.view().state(t) {
            State::Runnable => {
                // Queued again before we dispatched it (the kernel moved it, or ran it while we
                // had taken it back: see `overdue`).
                let slot = self.slot(t);
                if q.stop_ts != slot.last_stop {
                    slot.last_stop = q.stop_ts;
                    self.counters.unbilled += 1;
                    self.counters.unbilled_ns += q.stop_ts.saturating_sub(q.start_ts);
                }
                self.slot(t).last_exec = q.exec_runtime;
                self.apply_asked(t, asked, q.weight, now);
            }
            State::Blocked => {
                // It woke after a block we read (and billed) at the switch.
                let slot = self.slot(t);
                slot.last_stop = q.stop_ts;
                slot.last_exec = q.exec_runtime;
                self.apply_asked(t, asked, q.weight, now);
                self.wake(t, now);
            }
            State::Running(cpu) => {
                let ran = self.bill(t, q);
                let slot = self.slot(t);
                slot.last_stop = q.stop_ts;
                slot.last_exec = q.exec_runtime;
                let why = if q.wakeup {
                    Stop::Blocked
                } else if self.kicks[cpu as usize] != self.kicks_at_dispatch[cpu as usize] {
                    self.counters.preempted_stops += 1;
                    self.preempted[cpu as usize] = true;
                    Stop::Preempted
                } else {
                    Stop::SliceEnd
                };
                self.stopped(t, ran, why, now);
                self.apply_asked(t, asked, q.weight, now);
                if why == Stop::Blocked {
                    self.wake(t, now);
                }
            }
            State::Absent => unreachable!("a known pid is admitted"),
        }
    }

    fn admit(&mut self, q: &Queued, asked: Option<Asked>, cpus: Option<Vec<CpuId>>, now: Nanos) {
        let t = self.free.pop().unwrap_or(TaskId(self.slots.len() as u32));
        if t.idx() == self.slots.len() {
            self.slots.push(None);
        }
        self.slots[t.idx()] = Some(Slot {
            pid: q.pid,
            last_stop: q.stop_ts,
            last_exec: q.exec_runtime,
            admitted: now,
            slice: 0,
            seen_seq: None,
            deadline: None,
            weight: q.weight,
            since: now,
        });
        self.ids.insert(q.pid, t);
        self.counters.admitted += 1;
        let params = TaskParams { share: share_of(q.weight, None), cpus, ..TaskParams::default() };
        self.core.admit(t, &params, now);
        self.apply_asked(t, asked, q.weight, now);
        self.wake(t, now);
    }

    /// The CPU time of a dispatched task's stretches since its last record.
    fn bill(&mut self, t: TaskId, q: &Queued) -> Nanos {
        let slot = self.slots[t.idx()].as_ref().expect("known task");
        let last = if q.stop_ts != slot.last_stop { q.stop_ts.saturating_sub(q.start_ts) } else { 0 };
        // A task can run several stretches between two records (a higher scheduling class preempted it
        // and it went back to the head of the CPU's queue without being queued to us): the run-time sum
        // since the last record counts them all. At a wake-up the sum was reset, and only the last
        // stretch is known.
        let ran = if !q.wakeup && q.exec_runtime >= slot.last_exec {
            let sum = q.exec_runtime - slot.last_exec;
            if sum > last + 50_000 {
                self.counters.split += 1;
            }
            sum.max(last)
        } else {
            last
        };
        // Whatever it ran since the last record, it ran after that record's stop (or after we first heard
        // of it): a bill larger than that time comes from a bad timestamp (a stretch whose start the
        // kernel side never saw starts at 0) and would push the task's virtual time far ahead, starving
        // it. The kernel's clock and ours (for `admitted`) may differ by a little, hence the millisecond
        // of tolerance.
        let bound = q.stop_ts.saturating_sub(slot.last_stop.max(slot.admitted));
        if ran > bound + 1_000_000 {
            self.counters.clamped += 1;
            bound
        } else {
            ran
        }
    }

    /// Task `pid` blocked on `cpu` after running from `start` to `stop` (our BPF program's record at the
    /// switch); `asked` is what libsmart shows its thread asking for now, if known. Records of tasks we
    /// did not dispatch are ignored, and so are stale ones: a stretch that started before the end of
    /// the last stretch we know of is one we already know ended. That happens whenever the queued
    /// wake-up that followed the block is read first (the two come through different rings): the
    /// wake-up record's stop is sched_ext's `stopping`, a few microseconds before the switch, so the
    /// stale record's stop is later than it, but its start (the switch to the task) is earlier.
    pub fn blocked(
        &mut self,
        pid: i32,
        _cpu: CpuId,
        start: u64,
        stop: u64,
        asked: Option<Asked>,
        now: Nanos,
    ) {
        let Some(t) = self.task(pid) else { return };
        let state = self.core.view().state(t);
        let slot = self.slots[t.idx()].as_mut().expect("known task");
        // A task we hold as waiting for a decision is in the kernel's custody: it cannot have run
        // since its record, so a block record about it is stale too. (Taking it for asleep would lose
        // it for good: nothing would dispatch it, and nothing would report it again.)
        let stale = start < slot.last_stop || stop <= slot.last_stop || state == State::Runnable;
        if stale || state == State::Blocked {
            if state != State::Blocked {
                self.counters.stale_blocks += 1;
            }
            return;
        }
        let bound = stop.saturating_sub(slot.last_stop.max(slot.admitted));
        let ran = stop.saturating_sub(start).min(bound + 1_000_000);
        slot.last_stop = stop;
        slot.last_exec = 0;
        let weight = slot.weight;
        self.counters.blocked += 1;
        self.stopped(t, ran, Stop::Blocked, now);
        // The stretch was the old request's; a constraint set before sleeping holds from here on.
        if asked.is_some() {
            self.apply_asked(t, asked, weight, now);
        }
    }

    /// Every decision to make now, in the core's order ([`Core::next_decision`]): CPUs to kick, and
    /// dispatches. A task working on a time constraint gets the slice the policy chose (up to
    /// [`RT_SLICE_MAX`]); others at most `max_slice`, because a wake-up cannot preempt them from user
    /// space at once: `max_slice` bounds how long an urgent wake-up waits. Neither runs past the
    /// latest start of an `upcoming` request with an earlier deadline than its own, less the wake-up
    /// margin (but at least [`MIN_SLICE`]).
    pub fn decide(&mut self, now: Nanos, max_slice: Nanos, upcoming: &[Upcoming]) -> Vec<Action> {
        self.core.advance_to(now);
        let mut out = Vec::new();
        while let Some(cpu) = self.core.next_decision() {
            let c = cpu as usize;
            if self.core.view().running(cpu).is_some() {
                self.counters.preemptions += 1;
                self.preempted[c] = true;
                out.push(Action::Kick(cpu));
                continue;
            }
            let Some(d) = self.core.pick(cpu, now) else { continue };
            let margin = self.wakeup_margin;
            let slot = self.slots[d.task.idx()].as_mut().expect("the policy picked a known task");
            slot.since = now;
            let own_deadline = slot.deadline.filter(|&dl| dl > now);
            let mut cap = if own_deadline.is_some() { RT_SLICE_MAX } else { max_slice };
            for u in upcoming {
                if u.pid != slot.pid && own_deadline.is_none_or(|dl| dl > u.deadline) {
                    let room = u.latest_start.saturating_sub(margin).saturating_sub(now);
                    cap = cap.min(room.max(MIN_SLICE));
                }
            }
            let slice = d.slice.unwrap_or(cap).clamp(1, cap);
            slot.slice = slice;
            self.kicks_at_dispatch[c] = self.kicks[c];
            self.counters.dispatched += 1;
            let preemption = std::mem::take(&mut self.preempted[c]);
            out.push(Action::Dispatch { pid: slot.pid, cpu, slice, preemption });
        }
        out
    }

    /// The driver's own watchdog. While tasks wait for a decision, a dispatched task comes back when
    /// its slice ends (the kernel runs this process first and queues the task to it) or blocks, so
    /// one that has done neither `grace` after its slice should have ended was lost on the way: its
    /// dispatch dropped in the kernel, or a record about it misread. Such a task is taken back as if
    /// its slice had ended, billed the slice it held (so that a task that keeps being lost does not
    /// keep its place ahead of the others; it is dispatched again when picked), and its CPU is free
    /// again; the caller kicks the CPUs returned, in case the task does run there. Without
    /// this a single lost record leaves a CPU unused for good and its waiting tasks starve until
    /// sched_ext's watchdog ejects the scheduler. Counted in [`Counters::taken_back`].
    pub fn overdue(&mut self, now: Nanos, grace: Nanos) -> Vec<CpuId> {
        if self.runnable() == 0 {
            return Vec::new();
        }
        let late: Vec<(CpuId, TaskId)> = self
            .core
            .view()
            .running_tasks()
            .filter(|&(_, t)| {
                let s = self.slots[t.idx()].as_ref().expect("a dispatched task is known");
                now > s.since.saturating_add(s.slice).saturating_add(grace)
            })
            .collect();
        for &(_, t) in &late {
            self.counters.taken_back += 1;
            let slice = self.slots[t.idx()].as_ref().expect("known").slice;
            self.stopped(t, slice, Stop::SliceEnd, now);
        }
        late.into_iter().map(|(c, _)| c).collect()
    }

    /// Policy timers due by `now` (sleep-credit expiry, notify-times, `ts`'s once-a-second update).
    /// When the policy asks every CPU to decide again, the busy ones come out of the next
    /// [`Driver::decide`] as kicks.
    pub fn timers(&mut self, now: Nanos) {
        if self.core.next_timer().is_some_and(|t| t <= now) {
            self.core.timer(now);
        }
    }

    fn take_notes(&mut self) {
        self.core.take_notifications(&mut self.notes);
        self.counters.notifications += self.notes.len() as u64;
        for n in self.notes.drain(..) {
            if let Some(s) = self.slots.get(n.task.idx()).and_then(|s| s.as_ref()) {
                self.pending.push((s.pid, n.deadline, n.passed));
            }
        }
    }

    /// Notifications produced since the last call, as (pid, deadline, passed).
    pub fn notifications(&mut self) -> Vec<(i32, u64, bool)> {
        self.take_notes();
        std::mem::take(&mut self.pending)
    }

    /// What the driver believes at `now`, for a person reading why the kernel ejected the scheduler (a
    /// runnable task it never ran): each CPU's task and since when, the tasks waiting for a decision,
    /// longest first, and how many are blocked. `name` gives a pid's command name.
    pub fn describe(&self, now: Nanos, name: impl Fn(i32) -> String) -> String {
        let ago = |t: Nanos| format!("{:.1} ms", now.saturating_sub(t) as f64 / 1e6);
        let v = self.core.view();
        let mut out = String::new();
        for c in 0..self.core.cpus() as CpuId {
            let what = match v.running(c).and_then(|t| self.slots[t.idx()].as_ref()) {
                Some(s) => format!(
                    "{} ({}) dispatched {} ago, slice {:.1} ms",
                    s.pid,
                    name(s.pid),
                    ago(s.since),
                    s.slice as f64 / 1e6
                ),
                None if self.core.preempting(c) => "preempting".to_string(),
                None => "free or offline".to_string(),
            };
            out += &format!("CPU {c}: {what}\n");
        }
        let in_state = |st: State| {
            self.slots
                .iter()
                .enumerate()
                .filter(move |(i, s)| s.is_some() && v.state(TaskId(*i as u32)) == st)
        };
        let mut waiting: Vec<&Slot> = in_state(State::Runnable).filter_map(|(_, s)| s.as_ref()).collect();
        waiting.sort_by_key(|s| s.since);
        let list: Vec<String> =
            waiting.iter().map(|s| format!("{} ({}) for {}", s.pid, name(s.pid), ago(s.since))).collect();
        out += &format!("waiting for a decision ({}): {}\n", waiting.len(), list.join(", "));
        let blocked = in_state(State::Blocked).count();
        out += &format!("blocked: {blocked}; counters: {:?}", self.counters);
        out
    }

    /// The `n` known tasks billed the most CPU: (pid, CPU billed, stretches), most first.
    pub fn top_billed(&self, n: usize) -> Vec<(i32, Nanos, u64)> {
        let v = self.core.view();
        let mut out: Vec<(i32, Nanos, u64)> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (s.pid, v.billed(TaskId(i as u32)))))
            .map(|(pid, (ns, stops))| (pid, ns, stops))
            .collect();
        out.sort_by_key(|x| std::cmp::Reverse(x.1));
        out.truncate(n);
        out
    }

    /// Availability of a thread, if known.
    pub fn availability(&mut self, pid: i32, now: Nanos) -> Option<Availability> {
        let t = self.task(pid)?;
        Some(self.core.availability(t, now))
    }

    /// Forget the tasks for which `alive(pid)` is false (exits are not reported by the kernel).
    pub fn reap(&mut self, now: Nanos, alive: impl Fn(i32) -> bool) {
        let gone: Vec<(i32, TaskId)> =
            self.ids.iter().filter(|(p, _)| !alive(**p)).map(|(p, t)| (*p, *t)).collect();
        if gone.is_empty() {
            return;
        }
        // Notifications about them are taken first, while their ids still name them.
        self.take_notes();
        for (pid, t) in gone {
            if let State::Running(_) = self.core.view().state(t) {
                // Its last stretch was never reported: bill nothing more, it is gone.
                self.stopped(t, 0, Stop::Blocked, now);
            }
            self.core.exit(t, now);
            self.slots[t.idx()] = None;
            self.ids.remove(&pid);
            self.free.push(t);
            self.counters.exited += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn driver_for(policy: &str, cpus: usize) -> Driver {
        Driver::new(sched::build(policy, &Default::default(), cpus).unwrap())
    }

    fn driver() -> Driver {
        driver_for("smart", 1)
    }

    fn q(pid: i32, wakeup: bool, start: u64, stop: u64) -> Queued {
        Queued { pid, wakeup, start_ts: start, stop_ts: stop, exec_runtime: 0, weight: 100 }
    }

    /// The dispatches of one round of decisions, as (pid, cpu, slice).
    fn dispatches(d: &mut Driver, now: Nanos, max: Nanos, up: &[Upcoming]) -> Vec<(i32, CpuId, Nanos)> {
        d.decide(now, max, up)
            .into_iter()
            .filter_map(|a| match a {
                Action::Dispatch { pid, cpu, slice, .. } => Some((pid, cpu, slice)),
                Action::Kick(_) => None,
            })
            .collect()
    }

    /// The one dispatch of a round on one CPU: (pid, slice).
    fn pick(d: &mut Driver, now: Nanos, max: Nanos, up: &[Upcoming]) -> Option<(i32, Nanos)> {
        let v = dispatches(d, now, max, up);
        assert!(v.len() <= 1, "{v:?}");
        v.first().map(|&(pid, _, slice)| (pid, slice))
    }

    #[test]
    fn new_tasks_are_admitted_and_picked() {
        let mut d = driver();
        d.queued(&q(10, true, 0, 0), None, None, 0);
        d.queued(&q(11, true, 0, 0), None, None, 0);
        assert_eq!(d.runnable(), 2);
        let (pid, slice) = pick(&mut d, 0, 20 * MS, &[]).unwrap();
        assert!(pid == 10 || pid == 11);
        assert!(slice > 0 && slice <= 20 * MS);
        assert_eq!(d.runnable(), 1);
    }

    #[test]
    fn hogs_with_shares_alternate_in_proportion() {
        // Two threads with libsmart shares 3 and 1, always runnable: over many decisions the policy
        // gives them CPU 3:1, as measured from the stretches the driver bills, once SMART's bias (a
        // bounded offset, at most 250 ms of CPU per task) has been reached in the first 500 decisions.
        let mut d = driver();
        let asked = |s| Some(Asked { seq: 1, constraint: None, priority: None, share: Some(s) });
        d.queued(&q(1, true, 0, 0), asked(3), None, 0);
        d.queued(&q(2, true, 0, 0), asked(1), None, 0);
        let mut now = 0;
        let mut cpu = [0u64; 3];
        for k in 0..2500 {
            let (pid, slice) = pick(&mut d, now, 20 * MS, &[]).unwrap();
            let start = now;
            now += slice;
            if k >= 500 {
                cpu[pid as usize] += slice;
            }
            d.queued(&q(pid, false, start, now), asked(if pid == 1 { 3 } else { 1 }), None, now);
        }
        let ratio = cpu[1] as f64 / cpu[2] as f64;
        assert!((ratio - 3.0).abs() < 0.05, "{ratio}");
    }

    #[test]
    fn a_stop_reads_as_a_preemption_only_when_its_cpu_was_kicked() {
        // Round robin, one CPU: the first stop comes with no kick (its slice ran out), the second after
        // one (the kernel side counted a preemption on CPU 0 since the dispatch).
        let mut d = driver_for("rr", 1);
        d.queued(&q(1, true, 0, 0), None, None, 0);
        d.queued(&q(2, true, 0, 0), None, None, 0);
        let (a, _) = pick(&mut d, 0, 5 * MS, &[]).unwrap();
        d.queued(&q(a, false, 0, 5 * MS), None, None, 5 * MS);
        assert_eq!(d.counters.preempted_stops, 0);
        let actions = d.decide(5 * MS, 5 * MS, &[]);
        assert!(matches!(actions[..], [Action::Dispatch { preemption: false, .. }]), "{actions:?}");
        let (b, _) = match actions[0] {
            Action::Dispatch { pid, slice, .. } => (pid, slice),
            _ => unreachable!(),
        };
        d.set_kicks(&[1]);
        d.queued(&q(b, false, 5 * MS, 6 * MS), None, None, 6 * MS);
        assert_eq!(d.counters.preempted_stops, 1);
        // The next dispatch there carries the preemption out.
        let actions = d.decide(6 * MS, 5 * MS, &[]);
        assert!(matches!(actions[..], [Action::Dispatch { preemption: true, .. }]), "{actions:?}");
    }

    #[test]
    fn a_woken_thread_goes_to_the_free_cpu_the_policy_selects() {
        // Two CPUs. Thread 1 ran on CPU 1 and blocked; thread 2 runs on CPU 0. When thread 1 wakes,
        // the policy's select_cpu (Linux's default: the previous CPU if idle) puts it back on CPU 1.
        let mut d = driver_for("fifo", 2);
        d.queued(&q(1, true, 0, 0), None, None, 0);
        d.queued(&q(2, true, 0, 0), None, None, 0);
        let first = dispatches(&mut d, 0, 5 * MS, &[]);
        let on1 = first.iter().find(|x| x.1 == 1).expect("both CPUs take a thread").0;
        let other = if on1 == 1 { 2 } else { 1 };
        d.blocked(on1, 1, 0, MS, None, MS);
        assert!(dispatches(&mut d, MS, 5 * MS, &[]).is_empty());
        d.queued(&q(on1, true, 0, MS), None, None, 2 * MS);
        assert_eq!(dispatches(&mut d, 2 * MS, 5 * MS, &[]), vec![(on1, 1, 5 * MS)]);
        assert_eq!(d.core().view().running(0).map(|_| ()), Some(()), "{other} still runs on CPU 0");
    }

    #[test]
    fn the_kernel_side_kicks_the_cpu_the_policy_would_take_for_a_waking_thread() {
        // SMART, two CPUs, two hogs running: a thread asleep with a time constraint would preempt the
        // CPU of least value when it wakes; with a CPU free, it would take that one. (Its priority
        // makes it run first.)
        let mut d = driver_for("smart", 2);
        let important = |seq, deadline| rt(seq, deadline).map(|a| Asked { priority: Some(1), ..a });
        d.queued(&q(1, true, 0, 0), None, None, 0);
        d.queued(&q(2, true, 0, 0), None, None, 0);
        d.queued(&q(3, true, 0, 0), important(1, 20 * MS), None, 0);
        let ran = dispatches(&mut d, 0, 5 * MS, &[]);
        assert_eq!(ran.len(), 2);
        let rt_cpu = ran
            .iter()
            .find(|x| x.0 == 3)
            .unwrap_or_else(|| panic!("the real-time thread runs first: {ran:?}"))
            .1;
        d.blocked(3, rt_cpu, 0, MS, important(2, 60 * MS), MS);
        assert_eq!(d.forecast(3), Some(rt_cpu), "the CPU it left is free");
        let ran = dispatches(&mut d, MS, 5 * MS, &[]);
        assert_eq!(ran.len(), 1);
        let busy: Vec<CpuId> = d.core().view().running_tasks().map(|(c, _)| c).collect();
        assert_eq!(busy.len(), 2);
        let forecast = d.forecast(3).expect("a real-time wake-up preempts");
        assert!(busy.contains(&forecast));
        assert_eq!(d.forecast(1), None, "a runnable thread has no forecast");
    }

    #[test]
    fn a_constraint_from_libsmart_reaches_the_policy_and_misses_come_back() {
        let mut d = driver();
        d.queued(&q(5, true, 0, 0), None, None, 0);
        // The thread asks for 30 ms of CPU within 20 ms: the policy cannot make it and notifies.
        let c = TimeConstraint {
            deadline: 20 * MS,
            cpu_estimate: Some(30 * MS),
            notify_time: Some(0),
            period: None,
            release: None,
        };
        d.queued(
            &q(6, true, 0, 0),
            Some(Asked { seq: 7, constraint: Some(c), priority: None, share: None }),
            None,
            0,
        );
        pick(&mut d, 0, 20 * MS, &[]).unwrap();
        let n = d.notifications();
        assert!(n.is_empty() || n == vec![(6, 20 * MS, false)], "{n:?}");
        let mut now = 0;
        let mut got = n;
        for _ in 0..4 {
            if !got.is_empty() {
                break;
            }
            now += 5 * MS;
            d.timers(now);
            got = d.notifications();
        }
        assert_eq!(got.first().map(|x| x.0), Some(6));
    }

    fn rt(seq: u32, deadline: Nanos) -> Option<Asked> {
        let c = TimeConstraint {
            deadline,
            cpu_estimate: Some(11 * MS),
            notify_time: Some(0),
            period: None,
            release: None,
        };
        Some(Asked { seq, constraint: Some(c), priority: None, share: None })
    }

    #[test]
    fn a_slice_ends_before_an_announced_request_must_start() {
        // A periodic thread ran, then announced its next request (deadline 55 ms, estimate 11 ms: latest
        // start 44 ms) and slept. A hog dispatched at 40 ms gets 3 ms (44 − 1 ms margin − 40), not 5 ms;
        // at 43.9 ms it still gets MIN_SLICE; the periodic thread itself is not cut for its own request.
        let mut d = driver();
        d.queued(&q(7, true, 0, 0), rt(1, 15 * MS), None, 0);
        assert_eq!(pick(&mut d, 0, 5 * MS, &[]).map(|x| x.0), Some(7));
        d.queued(&q(8, true, 0, 0), None, None, MS);
        let next = rt(2, 55 * MS).unwrap();
        // On its CPU its next request has not been announced to anyone waiting.
        assert_eq!(d.upcoming(7, &next, 5 * MS), None);
        d.blocked(7, 0, 0, 10 * MS, Some(next.clone()), 10 * MS);
        let up: Vec<Upcoming> = d.upcoming(7, &next, 40 * MS).into_iter().collect();
        assert_eq!(up, vec![Upcoming { pid: 7, deadline: 55 * MS, latest_start: 44 * MS }]);
        assert_eq!(pick(&mut d, 40 * MS, 5 * MS, &up), Some((8, 3 * MS)));
        d.queued(&q(8, false, 40 * MS, 43 * MS + 900_000), None, None, 43 * MS + 900_000);
        assert_eq!(pick(&mut d, 43 * MS + 900_000, 5 * MS, &up), Some((8, MIN_SLICE)));
        // Once the periodic thread is queued it is the policy's to decide about, no longer upcoming.
        d.queued(&q(7, true, 0, 10 * MS), Some(next.clone()), None, 44 * MS);
        assert_eq!(d.upcoming(7, &next, 44 * MS), None);
    }

    #[test]
    fn a_periodic_thread_that_announces_its_next_request_keeps_its_place() {
        // 10 ms of work every 40 ms, deadline 15 ms after the release, estimate 11 ms, beside two hogs
        // given 3 ms slices, one CPU. The thread sets its next request's constraint and then sleeps, and
        // the block is read with that constraint: SMART keeps the thread on its queue through the sleep
        // (its new relative deadline is 44 ms), so it lags the hogs in virtual time as its 25 % of the CPU
        // against a share of a third says, and it runs first at every release. Read with the old
        // request's constraint (15 ms of stay, then it leaves its queue keeping Δ = v − V), it ran ahead
        // by 1.7 ms of virtual time per job and fell behind the hogs at job 110 (guest test 22
        // missed 10-52 of 250 deadlines that way).
        let mut d = driver();
        d.queued(&q(1, true, 0, 0), None, None, 0);
        d.queued(&q(2, true, 0, 0), None, None, 0);
        let mut now = 0;
        for k in 1..=200u32 {
            let release = 40 * MS * k as u64;
            while now < release {
                let (pid, slice) = pick(&mut d, now, 3 * MS, &[]).unwrap();
                assert_ne!(pid, 3, "the periodic thread runs only when released");
                let end = (now + slice).min(release);
                d.queued(&q(pid, false, now, end), None, None, end);
                now = end;
            }
            d.queued(&q(3, true, now, now), rt(k, release + 15 * MS), None, now);
            assert_eq!(pick(&mut d, now, 3 * MS, &[]).map(|x| x.0), Some(3), "job {k}");
            now += 10 * MS;
            d.blocked(3, 0, now - 10 * MS, now, rt(k + 1, release + 55 * MS), now);
        }
    }

    #[test]
    fn every_stretch_between_two_records_is_billed() {
        // A hog ran 3 ms, was preempted by a higher class (no record), ran 2 ms more: the record's
        // last stretch is 2 ms but its run-time sum grew by 5 ms, and 5 ms is billed.
        let mut d = driver();
        let rec = |start, stop, exec| Queued {
            pid: 1,
            wakeup: false,
            start_ts: start,
            stop_ts: stop,
            exec_runtime: exec,
            weight: 100,
        };
        d.queued(&Queued { wakeup: true, ..rec(0, 0, 0) }, None, None, 0);
        pick(&mut d, 0, 20 * MS, &[]).unwrap();
        d.queued(&rec(4 * MS, 6 * MS, 5 * MS), None, None, 6 * MS);
        assert_eq!(d.top_billed(1), vec![(1, 5 * MS, 1)]);
        assert_eq!(d.counters.split, 1);
        // After a wake-up the sum starts again from zero: the last stretch is what is known.
        pick(&mut d, 6 * MS, 20 * MS, &[]).unwrap();
        d.queued(&Queued { wakeup: true, ..rec(6 * MS, 7 * MS, 0) }, None, None, 9 * MS);
        assert_eq!(d.top_billed(1), vec![(1, 6 * MS, 2)]);
    }

    #[test]
    fn a_bill_never_exceeds_the_time_between_two_records() {
        // A stretch whose start the kernel side never saw reports start 0: billing stop − 0 (seconds of
        // uptime) would starve the task. The bill is cut to the time since its previous record's stop.
        let mut d = driver();
        d.queued(&q(1, true, 0, 5 * MS), None, None, 5 * MS);
        pick(&mut d, 5 * MS, 20 * MS, &[]).unwrap();
        d.queued(&q(1, false, 0, 9 * MS), None, None, 9 * MS);
        assert_eq!(d.top_billed(1), vec![(1, 4 * MS, 1)]);
        // A task first heard of at 20 ms whose record then claims a stretch from 0 to 30 ms: 10 ms.
        let mut d = driver();
        d.queued(&q(2, true, 0, 0), None, None, 20 * MS);
        assert_eq!(pick(&mut d, 20 * MS, 20 * MS, &[]).map(|x| x.0), Some(2));
        d.queued(&q(2, false, 0, 30 * MS), None, None, 30 * MS);
        assert_eq!(d.top_billed(1), vec![(2, 10 * MS, 1)]);
        assert_eq!(d.counters.clamped, 1);
    }

    #[test]
    fn a_block_record_read_after_the_wake_up_it_led_to_changes_nothing() {
        // The kernel reports a block twice: the queued wake-up record (stop_ts taken at sched_ext's
        // `stopping`) and our program's record at the switch, a few microseconds later. The two come
        // through different rings, and the wake-up can be read first (this process was preempted
        // between reading the two, or the task ran on another CPU). The block record then describes a
        // stretch already closed: the thread is runnable in the kernel's custody and must not be taken
        // for asleep (it would never be dispatched again: sched_ext's watchdog ejected the scheduler).
        // Round robin, so that the two threads take turns (SMART's bias may run one 250 ms first).
        let mut d = driver_for("rr", 1);
        d.queued(&q(10, true, 0, 0), None, None, 0);
        d.queued(&q(11, true, 0, 0), None, None, 0);
        let (a, _) = pick(&mut d, 0, 5 * MS, &[]).unwrap();
        // It ran from 1.000 ms, `stopping` at 2.000 ms, the switch at 2.003 ms; it woke at 2.5 ms.
        d.queued(&q(a, true, MS, 2 * MS), None, None, 3 * MS);
        d.blocked(a, 0, MS + 2_000, 2 * MS + 3_000, None, 3 * MS);
        assert_eq!(d.runnable(), 2, "the woken thread still waits for a decision");
        let mut dispatched = Vec::new();
        let mut now = 4 * MS;
        for _ in 0..4 {
            let (pid, slice) = pick(&mut d, now, 5 * MS, &[]).unwrap();
            dispatched.push(pid);
            d.queued(&q(pid, false, now, now + slice), None, None, now + slice);
            now += slice;
        }
        assert!(dispatched.contains(&a), "thread {a} was never dispatched again: {dispatched:?}");
        assert_eq!(d.counters.stale_blocks, 1);

        // The same record read after the thread was dispatched again: it still runs there.
        let mut d = driver();
        d.queued(&q(10, true, 0, 0), None, None, 0);
        let (a, _) = pick(&mut d, 0, 5 * MS, &[]).unwrap();
        d.queued(&q(a, true, MS, 2 * MS), None, None, 3 * MS);
        assert_eq!(pick(&mut d, 3 * MS, 5 * MS, &[]).map(|p| p.0), Some(a));
        d.blocked(a, 0, MS + 2_000, 2 * MS + 3_000, None, 3 * MS);
        assert!(d.core().view().running(0).is_some(), "the stale record freed the CPU the thread runs on");
        // Its real block, later, frees it.
        d.blocked(a, 0, 3 * MS + 5_000, 4 * MS, None, 4 * MS);
        assert!(d.core().view().running(0).is_none());
    }

    #[test]
    fn a_policy_timer_that_asks_for_decisions_preempts_the_busy_cpus() {
        // SVR4 time sharing's once-a-second update asks every CPU to decide again (a running task due
        // at the update returns at its sleep-return level when its CPU stops it).
        let mut d = driver_for("ts", 2);
        d.queued(&q(10, true, 0, 0), None, None, 0);
        let (_, cpu, _) = dispatches(&mut d, 0, 5 * MS, &[])[0];
        d.timers(999 * MS);
        assert_eq!(d.decide(999 * MS, 5 * MS, &[]), vec![], "no update before 1 s");
        d.timers(1_000 * MS);
        assert_eq!(d.decide(1_000 * MS, 5 * MS, &[]), vec![Action::Kick(cpu)], "the busy CPU only");
        assert_eq!(d.counters.preemptions, 1);
        d.timers(1_000 * MS);
        assert_eq!(d.decide(1_000 * MS, 5 * MS, &[]), vec![], "done for this second");
    }

    #[test]
    fn a_dispatch_lost_on_the_way_is_taken_back() {
        // Two threads, one CPU: the first is dispatched, and nothing is ever heard of it again (its
        // dispatch was dropped in the kernel). The second must not wait for good.
        let mut d = driver_for("rr", 1);
        d.queued(&q(10, true, 0, 0), None, None, 0);
        d.queued(&q(11, true, 0, 0), None, None, 0);
        let (a, slice) = pick(&mut d, 0, 5 * MS, &[]).unwrap();
        assert!(d.overdue(slice + OVERDUE_GRACE, OVERDUE_GRACE).is_empty(), "not before the grace");
        assert_eq!(d.overdue(slice + OVERDUE_GRACE + 1, OVERDUE_GRACE), vec![0]);
        assert_eq!(d.counters.taken_back, 1);
        let now = slice + OVERDUE_GRACE + 1;
        let (b, _) = pick(&mut d, now, 5 * MS, &[]).unwrap();
        assert_ne!(a, b);
        // A dispatched task with nothing waiting is left alone however long it runs.
        let mut d = driver();
        d.queued(&q(10, true, 0, 0), None, None, 0);
        pick(&mut d, 0, 5 * MS, &[]).unwrap();
        assert!(d.overdue(10_000 * MS, OVERDUE_GRACE).is_empty());
        // The taken-back task comes back queued after all (it did run): it is simply runnable again.
        let mut d = driver_for("rr", 1);
        d.queued(&q(10, true, 0, 0), None, None, 0);
        d.queued(&q(11, true, 0, 0), None, None, 0);
        let (a, slice) = pick(&mut d, 0, 5 * MS, &[]).unwrap();
        let late = slice + OVERDUE_GRACE + 1;
        d.overdue(late, OVERDUE_GRACE);
        d.queued(&q(a, false, MS, MS + slice), None, None, late);
        assert_eq!(d.runnable(), 2);
        assert!(d.core().view().running(0).is_none());
    }

    #[test]
    fn notifications_about_replaced_requests_are_dropped() {
        let c = |deadline| TimeConstraint {
            deadline,
            cpu_estimate: None,
            notify_time: Some(0),
            period: None,
            release: None,
        };
        assert!(still_wanted(15 * MS, Some(c(15 * MS))));
        assert!(!still_wanted(15 * MS, Some(c(55 * MS))));
        assert!(!still_wanted(15 * MS, None));
    }

    #[test]
    fn gone_tasks_are_reaped() {
        let mut d = driver();
        d.queued(&q(1, true, 0, 0), None, None, 0);
        d.queued(&q(2, true, 0, 0), None, None, 0);
        let (pid, _) = pick(&mut d, 0, 20 * MS, &[]).unwrap();
        d.reap(MS, |p| p != pid);
        assert_eq!(d.known(), 1);
        assert_eq!(d.counters.exited, 1);
        let (other, _) = pick(&mut d, MS, 20 * MS, &[]).unwrap();
        assert_ne!(other, pid);
    }

    #[test]
    fn nice_weight_and_libsmart_share_compose() {
        assert_eq!(share_of(100, None), 100);
        assert_eq!(share_of(300, None), 300);
        assert_eq!(share_of(100, Some(3)), 300);
        // eevdf, whose shares become nice levels, is told that 100 is nice 0.
        let o = kernel_weight_options(sched::entry("eevdf").unwrap());
        assert_eq!(o.get("nice0_share"), Some(&sched::OptValue::Int(100)));
        assert!(kernel_weight_options(sched::entry("smart").unwrap()).is_empty());
    }

    #[test]
    fn a_blocked_thread_frees_its_cpu_and_a_waking_one_preempts_the_least_valuable() {
        // Two CPUs, three threads: two run; the third waits. One blocks: its CPU is free at once.
        let mut d = driver_for("smart", 2);
        for pid in 1..=3 {
            d.queued(&q(pid, true, 0, 0), None, None, 0);
        }
        let ran = dispatches(&mut d, 0, 5 * MS, &[]);
        assert_eq!(ran.len(), 2);
        let (a, a_cpu, _) = ran[0];
        let b = ran[1].0;
        d.blocked(a, a_cpu, 0, 2 * MS, None, 2 * MS);
        assert_eq!(d.counters.blocked, 1);
        let ran = dispatches(&mut d, 2 * MS, 5 * MS, &[]);
        assert_eq!(ran.len(), 1);
        let c = ran[0].0;
        assert!(c != a && c != b && ran[0].1 == a_cpu);
        // The blocked thread wakes with a time constraint while both CPUs are busy: SMART asks for the
        // CPU of least value to decide again.
        let rt = Asked {
            seq: 1,
            constraint: Some(TimeConstraint {
                deadline: 20 * MS,
                cpu_estimate: Some(MS),
                notify_time: None,
                period: None,
                release: None,
            }),
            priority: None,
            share: None,
        };
        d.queued(&q(a, true, 0, 2 * MS), Some(rt), None, 3 * MS);
        let actions = d.decide(3 * MS, 5 * MS, &[]);
        assert!(matches!(actions[..], [Action::Kick(_)]), "{actions:?}");
        assert_eq!(d.counters.preemptions, 1);
        // A stale blocked record (older than what we know) is ignored.
        d.blocked(b, 1, 0, 0, None, 3 * MS);
        assert_eq!(d.core().view().running_tasks().count(), 2);
    }

    /// The conformance suite's world (`sched::testing`) told to the driver as the kernel tells it:
    /// wake-ups and stops as queued records (a stop read as a preemption when the CPU was kicked, as
    /// a slice run out otherwise), blocks as our program's records, a block that woke at once as the
    /// queued wake-up first and the block record later (stale), exits found by `reap`, constraints
    /// and parameters through what libsmart shows at the next record. Checked after every instant,
    /// for every policy of the registry on 1 to 4 CPUs: the driver and the world agree on every
    /// thread's state and on what runs where (no thread lost, none on two CPUs, no CPU with two),
    /// no CPU is free while a thread that may run there waits (work-conserving policies), and what
    /// the driver billed each thread is what it ran.
    mod world {
        use super::*;
        use sched::testing::{Happening, Shape, Where, World};

        struct Kernel {
            d: Driver,
            w: World,
            kicks: Vec<u64>,
            /// Per pid: what libsmart shows, the CPU time since its last wake-up, what it ran in all.
            asked: HashMap<i32, Asked>,
            exec: HashMap<i32, u64>,
            ran: HashMap<i32, u64>,
            late: Vec<(i32, CpuId, u64, u64)>,
            seq: u32,
        }

        fn pid(t: TaskId) -> i32 {
            100 + t.0 as i32
        }

        impl Kernel {
            fn record(&mut self, t: TaskId, wakeup: bool, start: u64, stop: u64) {
                let p = pid(t);
                let exec = self.exec.entry(p).or_default();
                *exec = if wakeup { 0 } else { *exec + (stop - start) };
                let q = Queued {
                    pid: p,
                    wakeup,
                    start_ts: start,
                    stop_ts: stop,
                    exec_runtime: *exec,
                    weight: 100,
                };
                let asked = self.asked.get(&p).cloned();
                let now = self.w.now();
                self.d.queued(&q, asked, None, now);
            }

            fn happen(&mut self, h: Happening) {
                let now = self.w.now();
                match h {
                    Happening::Admit(t, params) => {
                        self.seq += 1;
                        let a = Asked {
                            seq: self.seq,
                            constraint: None,
                            priority: Some(params.priority),
                            share: Some(params.share),
                        };
                        self.asked.insert(pid(t), a.clone());
                        let q = q(pid(t), true, now, now);
                        self.d.queued(&q, Some(a), params.cpus.clone(), now);
                    }
                    Happening::Wake(t) => self.record(t, true, now, now),
                    Happening::Stop { task, cpu, ran, why, woke_at_once } => {
                        *self.ran.entry(pid(task)).or_default() += ran;
                        let start = now - ran;
                        match why {
                            Stop::Blocked if woke_at_once => {
                                self.record(task, true, start, now);
                                if ran >= 10_000 {
                                    self.late.push((pid(task), cpu, start + 2_000, now + 3_000));
                                }
                            }
                            Stop::Blocked => {
                                let asked = self.asked.get(&pid(task)).cloned();
                                self.exec.insert(pid(task), 0);
                                self.d.blocked(pid(task), cpu, start, now, asked, now);
                            }
                            _ => self.record(task, false, start, now),
                        }
                    }
                    Happening::Exit(t) => self.d.reap(now, |p| p != pid(t)),
                    Happening::Constraint(t, c) => {
                        self.seq += 1;
                        let a = self.asked.get_mut(&pid(t)).expect("admitted");
                        (a.seq, a.constraint) = (self.seq, c);
                    }
                    Happening::Params(t, params) => {
                        self.seq += 1;
                        let a = self.asked.get_mut(&pid(t)).expect("admitted");
                        (a.seq, a.priority, a.share) = (self.seq, Some(params.priority), Some(params.share));
                    }
                    Happening::Interact(_) | Happening::Tick(_) => {}
                    Happening::Advance(_) => {
                        for (p, cpu, start, stop) in std::mem::take(&mut self.late) {
                            self.d.blocked(p, cpu, start, stop, None, now);
                        }
                    }
                }
            }

            /// Decisions until none is left; kicks are carried out at once (the kicked task's stop
            /// comes back queued, its CPU counted as kicked).
            fn decide(&mut self) {
                let now = self.w.now();
                loop {
                    let actions = self.d.decide(now, 5 * MS, &[]);
                    if actions.is_empty() {
                        return;
                    }
                    for a in actions {
                        match a {
                            Action::Kick(cpu) => {
                                self.kicks[cpu as usize] += 1;
                                self.d.set_kicks(&self.kicks);
                                let (t, ran) = self.w.preempted(cpu);
                                *self.ran.entry(pid(t)).or_default() += ran;
                                self.record(t, false, now - ran, now);
                            }
                            Action::Dispatch { pid: p, cpu, slice, .. } => {
                                self.w.dispatched(cpu, TaskId((p - 100) as u32), Some(slice));
                            }
                        }
                    }
                }
            }

            fn check(&self, what: &str) {
                for t in self.w.tasks() {
                    let want = match self.w.place(t) {
                        Where::Gone => None,
                        Where::Asleep => Some(State::Blocked),
                        Where::Waiting => Some(State::Runnable),
                        Where::On { cpu, .. } => Some(State::Running(*cpu)),
                    };
                    assert_eq!(self.d.state(pid(t)), want, "{what}: thread {}", pid(t));
                }
                for c in 0..self.kicks.len() as CpuId {
                    assert_eq!(self.d.running_pid(c), self.w.running(c).map(pid), "{what}: CPU {c}");
                }
            }
        }

        fn run(policy: &str, cpus: usize, seed: u64, steps: usize) {
            let shape = Shape { cpus, max_tasks: 2 + 2 * cpus, bound: false, constraints: true };
            let mut k = Kernel {
                d: driver_for(policy, cpus),
                w: World::new(seed, shape),
                kicks: vec![0; cpus],
                asked: HashMap::new(),
                exec: HashMap::new(),
                ran: HashMap::new(),
                late: Vec::new(),
                seq: 0,
            };
            let conserving = sched::entry(policy).unwrap().work_conserving;
            for step in 0..steps {
                let h = k.w.step();
                k.happen(h);
                k.d.timers(k.w.now());
                k.decide();
                let what = format!("{policy} on {cpus} CPUs, seed {seed}, step {step}");
                k.check(&what);
                if conserving {
                    assert_eq!(k.d.core().stranded(), None, "{what}: a CPU is free while a thread waits");
                }
            }
            for (p, ran) in &k.ran {
                if let Some(t) = k.d.task(*p) {
                    assert_eq!(k.d.core().view().billed(t).0, *ran, "{policy}: thread {p} billed");
                }
            }
            assert_eq!((k.d.counters.clamped, k.d.counters.unbilled), (0, 0));
        }

        #[test]
        fn the_driver_keeps_the_kernel_and_the_policy_in_step() {
            for policy in sched::names() {
                for cpus in 1..=4 {
                    for seed in 1..=3 {
                        run(policy, cpus, seed, 4_000);
                    }
                }
            }
        }
    }
}
