//! The discrete-event engine: N CPUs, a policy in its core, the tasks of a scenario, the machine.
//!
//! The engine owns time. Between two events each CPU runs one task (or idles); the next event is the
//! earliest of: a task's timer (a periodic release, the end of an interactive task's think time, a
//! start or stop time, an aborted request's deadline), a CPU's running task finishing its current piece
//! of work or its slice, a clock tick (only when something needs ticks: tick billing, a tick overhead,
//! a tick-driven policy), the policy's own timer, a timeline sample, the end of the run.
//!
//! It is an adapter over the one driver core of `sched` ([`sched::Core`]), as `scx_smart` is over
//! the kernel's events: it tells the core what happened (admissions, wake-ups, stops with what the
//! machine bills, exits, time constraints, ticks, the policy's timer) and, at the end of every
//! instant, lets each CPU the core names decide ([`sched::Core::next_decision`]), stopping what runs
//! there and dispatching what the policy picks. Every rule of the protocol is the core's.
//!
//! By concern: [`machine`] (the CPUs, the clock, billing and overheads), [`tasks`] (the scenario's
//! tasks as [`workload::Stream`]s turned into events, requests and their outcomes),
//! [`crate::metrics`] (what is measured), and this module (the event loop and the core's adapter).

mod machine;
mod progress;
mod tasks;

use std::cmp::Reverse;
use std::sync::Arc;

use dary_heap::QuaternaryHeap;
use sched::{Core, CpuId, Dispatch, Nanos, Notification, Stop, TaskId, TaskParams};
use workload::{Scenario, Stream};

use crate::metrics::Metrics;
use crate::result::{Partial, PartialReason, SimResult};
use machine::Machine;
pub use machine::{sleep_ends, timer_fires};
pub use progress::{Progress, CHECK_EVERY};
pub(crate) use tasks::{Dropped, Job};
use tasks::{Ev, TaskRt};
pub use tasks::{JobRecord, Outcome};

/// Bound on decisions at one instant on one CPU (a policy and its notifications could otherwise
/// ping-pong).
const MAX_DECISIONS_PER_INSTANT: usize = sched::core::MAX_STEPS_PER_INSTANT;

/// The simulator. Build it with [`Sim::new`], run it with [`Sim::run`].
pub struct Sim<'s> {
    scn: &'s Scenario,
    /// The policy in its core: the protocol, the tasks' states as the policy sees them, what runs
    /// where, which CPU decides next.
    core: Core,
    tasks: Vec<TaskRt<'s>>,
    /// What each task tells the scheduler at its admission (its affinity among it).
    params: Vec<TaskParams>,
    m: Machine,
    metrics: Metrics,
    now: Nanos,
    end: Nanos,
    /// The tasks' timer events: (time, sequence, event, task), earliest first, ties in the order they
    /// were set.
    heap: QuaternaryHeap<Reverse<(Nanos, u64, Ev, u32)>>,
    seq: u64,
    /// Tasks that have ended.
    done: usize,
    notes: Vec<Notification>,
    /// Where the execution trace goes, when asked for ([`Sim::trace_to`]).
    trace: Option<Box<dyn FnMut(trace::Record) + 's>>,
    /// The run is over: a task still on a CPU was cut by the end of the recording.
    ending: bool,
    /// Every request's record, when asked for (`--jobs`).
    jobs: Option<Vec<JobRecord>>,
    /// When checking: instants that ended with a CPU idle while a task that may run there waited.
    stranded: Option<u64>,
    /// Every dispatch goes to the `tracing` log (`smartsim -vv`).
    debug: bool,
    /// The policy ever notifies (else there is nothing to collect).
    notifies: bool,
    /// Steps of the event loop left before the next check ([`Sim::watch`]).
    check_in: u32,
    /// Who watches the run, and the simulated time last published to it.
    watch: Option<(Arc<Progress>, Nanos)>,
    /// Stopped before its end when its watcher asked ([`Progress::stop`]), or past its walk limit.
    stopped: bool,
    /// Why it stopped (with `stopped`).
    stop_reason: PartialReason,
    /// The tasks its policy may walk ([`Sim::limit_walked`]).
    walk_limit: Option<u64>,
    /// Steps of the event loop left before the policy's walk is read again, of `walk_every`; the
    /// walk read last.
    walk_in: u32,
    walk_every: u32,
    walk_seen: u64,
}

impl<'s> Sim<'s> {
    /// A simulator for `scn` driving the policy in `core`, which must be built for `scn.machine.cpus`
    /// CPUs. Tasks bound to CPUs by the scenario (`cpus = [..]`) carry that affinity to the policy.
    /// [`crate::simulator`] builds the policy and the placement a scenario asks for.
    pub fn new(scn: &'s Scenario, core: Core) -> Self {
        Self::with_placement(scn, core, None)
    }

    /// As [`Sim::new`], with each task bound to the CPU `placement` gives it (one entry per task, e.g.
    /// from [`sched::partition::first_fit_decreasing`]) instead of its own affinity.
    pub fn with_placement(scn: &'s Scenario, mut core: Core, placement: Option<&[CpuId]>) -> Self {
        let m = &scn.machine;
        assert_eq!(core.cpus(), m.cpus as usize, "the policy is built for the machine's CPUs");
        let notifies = core.notifies();
        // One stream per task: adding a task does not change the draws of the others.
        let mut streams: Vec<Stream<'s>> = scn.tasks.iter().map(|spec| Stream::new(spec, m.seed)).collect();
        let starts: Vec<Nanos> = streams.iter_mut().map(|s| s.start()).collect();
        let tasks = streams.into_iter().map(|s| TaskRt::new(s, notifies, m.timer)).collect();
        let params: Vec<TaskParams> = scn
            .tasks
            .iter()
            .enumerate()
            .map(|(i, spec)| TaskParams {
                priority: spec.priority,
                share: spec.share,
                latency_tolerance: spec.latency_tolerance,
                cpus: placement.map(|p| vec![p[i]]).or_else(|| spec.cpus.clone()),
                nice: spec.nice,
                class: spec.class.clone(),
                reservation: spec.reservation,
            })
            .collect();
        if params.iter().any(|p| p.cpus.is_some()) {
            core.expect_affinities();
        }
        // No task of a scenario reads its availability (SMART §3.4.3): the usage behind it is not
        // kept, which saves an exponential per stop.
        core.keep_usage(false);
        let machine = Machine::new(scn, core.uses_tick());
        let mut sim = Sim {
            scn,
            core,
            tasks,
            params,
            m: machine,
            metrics: Metrics::new(scn),
            now: 0,
            end: m.duration,
            heap: QuaternaryHeap::new(),
            seq: 0,
            done: 0,
            notes: Vec::new(),
            trace: None,
            ending: false,
            jobs: None,
            stranded: None,
            debug: tracing::enabled!(tracing::Level::TRACE),
            notifies,
            check_in: CHECK_EVERY,
            watch: None,
            stopped: false,
            stop_reason: PartialReason::Interrupted,
            walk_limit: Some(crate::budget::MAX_WALKED),
            walk_in: 1,
            walk_every: 1,
            walk_seen: 0,
        };
        for (i, t) in scn.tasks.iter().enumerate() {
            sim.push(starts[i], Ev::Start, i as u32);
            if let Some(s) = t.stop {
                sim.push(s, Ev::StopTime, i as u32);
            }
        }
        sim
    }

    fn push(&mut self, at: Nanos, ev: Ev, task: u32) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, ev, task)));
    }

    /// When a sleep task `i` begins now until `t` ends (its own timer, else the machine's).
    fn sleep_ends(&self, t: Nanos, i: usize) -> Nanos {
        sleep_ends(self.now, t, self.timer_kind(i), self.scn.machine.hz)
    }

    /// Task `i`'s timer: its own, else the machine's.
    fn timer_kind(&self, i: usize) -> workload::TimerKind {
        self.scn.tasks[i].timer.unwrap_or(self.scn.machine.timer)
    }

    /// Send the run's execution trace to `sink` as it happens (the crate `trace`): first a Task record
    /// per task (its index in the scenario, its name), then every stretch on a CPU with why it ended,
    /// wake-ups, releases with their deadlines, the end of every request with its outcome, the
    /// policy's notifications, the clock ticks when the machine ticks (each naming the task it
    /// found running, which tick billing charges), and an End record when the run is finished.
    pub fn trace_to(&mut self, mut sink: impl FnMut(trace::Record) + 's) {
        for (i, t) in self.scn.tasks.iter().enumerate() {
            sink(trace::Record::Task { task: i as u32, process: i as u32, name: t.name.clone() });
        }
        self.trace = Some(Box::new(sink));
    }

    /// The trace's header for this run of `scenario` (its path, as given) under `policy`.
    pub fn trace_header(&self, scenario: &str) -> trace::Header {
        let m = &self.scn.machine;
        let source = trace::Source::Simulator {
            scenario: scenario.into(),
            seed: m.seed,
            policy: self.core.name().into(),
        };
        trace::Header::new(source, m.cpus, "simulated", 0, (m.hz > 0).then_some(m.hz))
    }

    #[cold]
    fn emit(&mut self, r: trace::Record) {
        if let Some(t) = &mut self.trace {
            t(r);
        }
    }

    /// Check, at the end of every instant, that no CPU idles while a task that may run there waits
    /// (what a work-conserving policy guarantees); [`Sim::stranded`] counts the instants that
    /// failed. Costs O(CPUs × tasks) per instant: for tests.
    pub fn check_work_conservation(&mut self) {
        self.stranded = Some(0);
    }

    /// Instants that ended with an idle CPU while a task that may run there waited (see
    /// [`Sim::check_work_conservation`]).
    pub fn stranded(&self) -> u64 {
        self.stranded.unwrap_or(0)
    }

    /// Record what became of every request of a periodic task (see [`Sim::finish_all`]).
    pub fn record_jobs(&mut self) {
        self.jobs = Some(Vec::new());
    }

    /// The policy's core (for queries such as what runs where during a run).
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// The policy's core, for queries that read the time (availability).
    pub fn core_mut(&mut self) -> &mut Core {
        &mut self.core
    }

    /// Current simulated time.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Publish the run's progress to `p` as it goes (the simulated time and steps it makes, every
    /// [`CHECK_EVERY`] steps and when a call to run it returns), and stop at such a check once `p`
    /// is asked to ([`Progress::stop`]): [`Sim::stopped`] then says so, and the result is marked
    /// partial.
    pub fn watch(&mut self, p: Arc<Progress>) {
        self.watch = Some((p, self.now));
    }

    /// Whether the run stopped before its end because its watcher asked ([`Sim::watch`]) or its
    /// policy walked past its limit ([`Sim::limit_walked`]).
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Stop the run, marked partial (`"over_budget"`), once its policy has walked more than `limit`
    /// tasks ([`sched::Policy::walked`]); `None`: never (`--force`). By default
    /// [`crate::budget::MAX_WALKED`]. The walk is read between steps, once the instant is settled:
    /// the first time after one step, then after as many steps as would walk half of what is left
    /// at the rate of the last ones (at most [`CHECK_EVERY`]: a policy that walks nothing is read
    /// once in that many). A run so stops a step or a few past the limit, unless its steps walk far
    /// more all at once than they did.
    pub fn limit_walked(&mut self, limit: Option<u64>) {
        self.walk_limit = limit;
    }

    /// The walk limit a command or a caller asked for: `limit` if given (`--walk-limit`; it holds
    /// under `--force` too), else none if `force`, else the default.
    pub fn limit_walked_as_asked(&mut self, limit: Option<u64>, force: bool) {
        match limit {
            Some(n) => self.limit_walked(Some(n)),
            None if force => self.limit_walked(None),
            None => {}
        }
    }

    /// Run to the end of the scenario (its duration, or when every task is done), or until its
    /// watcher stops it ([`Sim::watch`]).
    pub fn run(mut self) -> SimResult {
        self.run_until(self.end);
        self.finish()
    }

    /// Run until `limit` (at most the scenario's duration); can be called repeatedly. A run stopped
    /// by its watcher ([`Sim::watch`]) goes no further.
    pub fn run_until(&mut self, limit: Nanos) {
        if !self.stopped {
            self.run_loop(limit);
        }
        self.publish();
    }

    /// Adds the time simulated and the steps made since the last check to the watcher's totals.
    fn publish(&mut self) {
        let steps = u64::from(CHECK_EVERY - self.check_in);
        self.check_in = CHECK_EVERY;
        if let Some((p, published)) = &mut self.watch {
            p.add(self.now - *published, steps);
            *published = self.now;
        }
    }

    /// Every [`CHECK_EVERY`] steps: publishes the progress; whether the watcher asks the run to stop
    /// (before its end).
    #[cold]
    #[inline(never)]
    fn check(&mut self) -> bool {
        self.publish();
        if self.watch.as_ref().is_some_and(|(p, _)| p.stopping()) && self.now < self.end {
            self.stopped = true;
        }
        self.stopped
    }

    /// Whether the policy has walked past the run's limit ([`Sim::limit_walked`]); if not, when to
    /// read it next.
    #[cold]
    #[inline(never)]
    fn over_walk_limit(&mut self) -> bool {
        let Some(limit) = self.walk_limit else {
            self.walk_in = CHECK_EVERY;
            return false;
        };
        let steps = u64::from(self.walk_every);
        let walked = self.core.policy().walked();
        if walked > limit && self.now < self.end {
            self.stopped = true;
            self.stop_reason = PartialReason::OverBudget;
            return true;
        }
        // The steps that would walk half of what is left at the rate of the last ones.
        let per_step = (walked - self.walk_seen.min(walked)).div_ceil(steps).max(1);
        let next = (limit.saturating_sub(walked) / 2 / per_step).clamp(1, u64::from(CHECK_EVERY));
        (self.walk_in, self.walk_every) = (next as u32, next as u32);
        self.walk_seen = walked;
        false
    }

    fn run_loop(&mut self, limit: Nanos) {
        let limit = limit.min(self.end);
        loop {
            if self.done == self.tasks.len() {
                // Every task has ended: the CPUs idle to the limit, so a run covers its requested
                // duration (its shares, idle time and utilisation are over that duration).
                self.advance(limit.max(self.now));
                return;
            }
            let next = self.next_event_time().min(limit);
            self.advance(next);
            if self.now >= limit {
                if self.now >= self.end {
                    self.sample_to(self.now);
                }
                return;
            }
            self.handle_events();
            self.settle();
            if let Some(n) = self.stranded.as_mut() {
                if self.core.stranded().is_some() {
                    *n += 1;
                }
            }
            // The instant is settled: a stop here leaves the state as at the end of a run.
            self.check_in -= 1;
            if self.check_in == 0 && self.check() {
                return;
            }
            self.walk_in -= 1;
            if self.walk_in == 0 && self.over_walk_limit() {
                return;
            }
        }
    }

    fn next_event_time(&mut self) -> Nanos {
        let mut t = self.end;
        if let Some(Reverse((at, ..))) = self.heap.peek() {
            t = t.min(*at);
        }
        if let Some((c, _)) = self.next_cpu_event() {
            t = t.min(c);
        }
        if let Some(k) = self.next_tick_time() {
            t = t.min(k);
        }
        if let Some(p) = self.core.next_timer() {
            t = t.min(timer_fires(p.max(self.now), self.scn.machine.timer, self.scn.machine.hz));
        }
        t.min(self.metrics.next_sample().max(self.now))
    }

    /// Let time pass to `t` (the CPUs catch up lazily, see [`Sim::sync`]).
    fn advance(&mut self, t: Nanos) {
        debug_assert!(t >= self.now);
        self.now = t;
        self.sample_to(t);
    }

    #[inline]
    fn sample_to(&mut self, t: Nanos) {
        if self.metrics.sample_due(t) {
            self.sync_all();
            self.metrics.take_samples(t);
        }
    }

    fn handle_events(&mut self) {
        let now = self.now;
        // Clock tick on every CPU: bill the running task (tick billing), pay the handler, ask
        // tick-driven policies.
        if self.next_tick_time().is_some_and(|k| k <= now) {
            self.tick();
        }
        // Running tasks whose work is done, or whose slice is.
        while let Some((t, c)) = self.next_cpu_event() {
            if t > now {
                break;
            }
            self.pop_cpu_event();
            self.sync(c);
            let Some(r) = self.m.cpus[c].running else { continue };
            if self.tasks[r.idx()].remaining == 0 {
                self.work_done(r);
            } else if self.m.cpus[c].slice_end.is_some_and(|s| s <= now) {
                self.reschedule(c, Stop::SliceEnd);
            } else {
                self.arm(c);
            }
        }
        // Task timers.
        while let Some(&Reverse((at, _, ev, i))) = self.heap.peek() {
            if at > now {
                break;
            }
            self.heap.pop();
            self.metrics.sys.events += 1;
            self.task_event(ev, i as usize);
        }
        // The policy's timer: it may decide differently now, on any CPU.
        if let Some(p) = self.core.next_timer() {
            if timer_fires(p, self.scn.machine.timer, self.scn.machine.hz) <= now {
                self.core.timer(now);
            }
        }
        self.collect_notifications();
    }

    /// End of an instant: each CPU the core names decides, in its turn (see [`sched::core`]), until
    /// nothing changes.
    fn settle(&mut self) {
        while let Some(c) = self.core.next_decision() {
            self.reschedule(c as usize, Stop::Preempted);
        }
    }

    /// Stop the task running on `c` (if any) for `why` and let the policy choose for `c`, until a
    /// choice sticks.
    fn reschedule(&mut self, c: usize, why: Stop) {
        self.core.clear_request(c as CpuId);
        if let Some(r) = self.m.cpus[c].running {
            self.stop_running(r.idx(), why);
        }
        self.sync(c);
        for _ in 0..MAX_DECISIONS_PER_INSTANT {
            self.metrics.sys.decisions += 1;
            let d = self.core.pick(c as CpuId, self.now);
            self.collect_notifications();
            let Some(Dispatch { task, slice }) = d else {
                return;
            };
            self.dispatch(c, task, slice);
            let tr = &self.tasks[task.idx()];
            if tr.notified.is_some() || tr.job.is_none() {
                self.handle_pending(task);
            }
            if self.m.cpus[c].running.is_some() && !self.core.requested(c as CpuId) {
                return;
            }
            self.core.clear_request(c as CpuId);
            if let Some(r) = self.m.cpus[c].running {
                self.stop_running(r.idx(), Stop::Preempted);
            }
        }
        panic!(
            "policy `{}` made {MAX_DECISIONS_PER_INSTANT} decisions at t={} ns without settling",
            self.core.name(),
            self.now
        );
    }

    #[cold]
    fn log_dispatch(&self, c: usize, t: TaskId, slice: Option<Nanos>) {
        let tr = &self.tasks[t.idx()];
        tracing::trace!(
            "{:>12} cpu {c} dispatch {} slice {:?} job {:?} notified {:?}",
            self.now,
            self.scn.tasks[t.idx()].name,
            slice,
            tr.job.as_ref().map(|j| (j.planned.index, j.planned.deadline, j.exec)),
            tr.notified
        );
    }

    /// The core dispatched `t` on CPU `c` for `slice`: the machine starts executing it.
    fn dispatch(&mut self, c: usize, t: TaskId, slice: Option<Nanos>) {
        if self.debug {
            self.log_dispatch(c, t, slice);
        }
        let now = self.now;
        let tr = &mut self.tasks[t.idx()];
        tr.on_cpu = Some(c as CpuId);
        let tm = &mut self.metrics.tasks[t.idx()];
        if let Some(since) = tr.ready_since.take() {
            tm.latency.push(now - since);
        }
        if let Some(j) = &mut tr.job {
            j.start = j.start.min(now);
            j.cpu = c as CpuId;
        }
        let migrated = self.core.view().last_cpu(t).is_some_and(|l| l != c as CpuId);
        if migrated {
            tm.migrations += 1;
        }
        self.start_on(c, t, slice, migrated);
    }

    /// The stretch task `r` just ran on CPU `c`, in the trace.
    #[cold]
    fn log_interval(&mut self, r: TaskId, c: CpuId, why: Stop) {
        let (start, end) = (self.m.cpus[c as usize].dispatched_at, self.now);
        if end > start {
            let why = match why {
                _ if self.ending => trace::EndReason::TraceEnd,
                Stop::Blocked => trace::EndReason::Blocked,
                Stop::Preempted => trace::EndReason::Preempted,
                Stop::Yielded => trace::EndReason::Yielded,
                Stop::SliceEnd => trace::EndReason::SliceEnd,
            };
            let complete = !self.ending;
            self.emit(trace::Record::Run { task: r.0, cpu: c, start, end, why, complete });
        }
    }

    /// Takes running task `i` off its CPU for `why`, telling the core what the machine bills it. Its
    /// CPU is idle afterwards (the caller may reschedule it at once).
    fn stop_running(&mut self, i: usize, why: Stop) {
        let Some(c) = self.tasks[i].on_cpu.take() else { return };
        let cu = c as usize;
        self.sync(cu);
        let r = TaskId(i as u32);
        debug_assert_eq!(self.m.cpus[cu].running, Some(r));
        if self.trace.is_some() {
            self.log_interval(r, c, why);
        }
        let (charged, ran) = self.stop_on(cu);
        let tm = &mut self.metrics.tasks[i];
        tm.charged += charged;
        tm.quanta += 1;
        if charged == 0 {
            tm.unbilled += 1;
        }
        // Taken off unfinished after running; neither the cut at the end of the run nor a dispatch
        // undone at the instant it was made (its predecessor aborted at that instant) is a preemption.
        if why != Stop::Blocked && !self.ending && ran {
            if let Some(j) = &mut self.tasks[i].job {
                j.preemptions += 1;
            }
        }
        self.core.stop(r, charged, why, self.now);
        self.arm(cu);
    }

    /// Build the result and the record of every request (empty unless [`Sim::record_jobs`] was
    /// called), in the order the requests ended (unfinished ones last). The trace, if one was asked
    /// for, ends with an End record.
    pub fn finish_all(mut self) -> (SimResult, Vec<JobRecord>) {
        self.stop_all();
        let jobs = self.jobs.take().unwrap_or_default();
        (self.finish(), jobs)
    }

    fn stop_all(&mut self) {
        if self.ending {
            return;
        }
        self.ending = true;
        // Work that ends exactly at the end of the run is done, not cut off.
        self.sync_all();
        for c in 0..self.m.cpus.len() {
            if let Some(r) = self.m.cpus[c].running {
                if self.tasks[r.idx()].remaining == 0 {
                    self.work_done(r);
                }
            }
        }
        for c in 0..self.m.cpus.len() {
            if let Some(r) = self.m.cpus[c].running {
                self.stop_running(r.idx(), Stop::Preempted);
            }
        }
        self.sync_all();
        // Requests still open: one whose deadline has passed is late (it missed it, and has no
        // finish); one whose deadline lies beyond the end is unfinished, its outcome unknown.
        let record = self.jobs.is_some() || self.trace.is_some();
        for i in 0..self.tasks.len() {
            let mut open: Vec<(usize, Option<Job>)> =
                self.tasks[i].open_jobs().map(|j| (i, Some(j))).collect();
            // Requests at a server are their clients'.
            open.extend(self.tasks[i].open_requests().map(|r| r.into_open()));
            for (c, j) in open {
                self.metrics.tasks[c].open_at_end += 1;
                let Some(j) = j else { continue };
                let outcome =
                    if j.planned.deadline <= self.now { Outcome::Late } else { Outcome::Unfinished };
                self.metrics.tasks[c].requests.add(outcome);
                if record {
                    self.record_job(c, &j, None, outcome);
                }
            }
        }
        if self.trace.is_some() {
            self.emit(trace::Record::End { at: self.now });
        }
    }

    /// Build the result (call after the run). A run stopped by its watcher ([`Sim::stopped`]) gives
    /// the results of the time it simulated, its duration that time, marked partial.
    pub fn finish(mut self) -> SimResult {
        self.stop_all();
        let cpus = self.m.cpus.iter().map(|c| c.stats.clone()).collect();
        let partial = self.stopped.then(|| Partial::new(self.stop_reason, self.now, self.end));
        tracing::debug!("{} tasks walked by the policy", self.core.policy().walked());
        self.metrics.result(self.scn, self.core.name(), self.core.counters(), cpus, partial)
    }
}
