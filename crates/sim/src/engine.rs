//! The discrete-event engine: N CPUs, a policy, the tasks of a scenario, and the machine model.
//!
//! The engine owns time. Between two events each CPU runs one task (or idles); the next event is the
//! earliest of: a task's timer (a periodic release, the end of an interactive task's think time, a
//! start or stop time, an aborted request's deadline), a CPU's running task finishing its current piece
//! of work or its slice, a clock tick (only when something needs ticks: tick billing, a tick overhead,
//! a tick-driven policy), the policy's own timer, a timeline sample, the end of the run.
//!
//! Machine model (ARCHITECTURE.md): `cpus`; `hz`, one tick per CPU, all at the same instants; billing
//! `exact` (the policy is billed the wall time a task ran) or `tick` (whoever runs at a tick is billed
//! the whole tick; a quantum between two ticks is billed nothing, Etsion 2003 §4); timer resolution
//! `hr` (exact), `tick` (fires on the next tick) or `rtc:<Hz>`, per machine with a per-task override
//! for the task's own wake-ups; overheads: the tick handler, the context switch, each scheduling
//! decision, the cache refill after a switch (`min(working_set, cache) / bandwidth`, Regehr 2002
//! §5.2) and a migration (a task dispatched on another CPU than it last ran on) are time the CPU
//! spends before the incoming task makes progress, billed to it as the kernel would.
//!
//! The protocol with the policy is `sched`'s (see its crate documentation): when a task wakes, an idle
//! CPU it may use is offered to the policy ([`sched::Policy::select_cpu`], then `pick_next` there),
//! or, with none idle, the policy names a CPU to preempt ([`sched::Policy::preempt_for`]); a CPU that
//! frees asks `pick_next`; at the end of every instant, each idle CPU is asked again if a task became
//! runnable since it last found nothing. A task runs on one CPU at a time, and every stop names its CPU.
//!
//! Real-time tasks follow SMART's applications (§6.2.2): at each request they set a time
//! constraint (deadline, cpu-estimate, notify-time, period); a notification is handled when the task
//! next runs, as a signal would be, and a task that discards drops the request then. A task with
//! `on_miss = "abort"` loses an unfinished request at its deadline, whatever the policy does.
//!
//! Progress is accounted lazily per CPU (a CPU is brought up to date when something about it is
//! needed), so an event costs O(log N) in the number of CPUs, except ticks, which touch every CPU.

use std::cmp::Reverse;
use std::collections::VecDeque;

use dary_heap::QuaternaryHeap as BinaryHeap;

use sched::{Core, CpuId, Dispatch, Nanos, Notification, Stop, TaskId, TaskParams, TimeConstraint};
use workload::rand_pcg::Pcg64;
use workload::{Billing, Estimate, Exec, Model, Notify, OnMiss, Scenario, TimerKind};

use crate::result::{CpuStats, SimResult, SystemStats, TaskResult, Timeline};

/// Up to this many CPUs, the next CPU event is found by looking at each CPU rather than kept in a heap.
const FEW_CPUS: usize = 8;

/// Bound on decisions at one instant on one CPU (a policy and its notifications could otherwise
/// ping-pong).
const MAX_DECISIONS_PER_INSTANT: usize = sched::core::MAX_STEPS_PER_INSTANT;

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Start,
    Release,
    Wake,
    StopTime,
    /// The deadline of a request of an `on_miss = "abort"` task.
    Abort,
}

#[derive(Clone, Debug)]
struct Job {
    /// Its number among the task's requests, from 0.
    index: u64,
    /// Nominal release (offset + k periods).
    release: Nanos,
    /// When it was released (with jitter and the timer's resolution).
    released: Nanos,
    deadline: Nanos,
    exec: Nanos,
    /// When it first ran (MAX: not yet), where it last ran (MAX: nowhere yet), and how often it was
    /// taken off a CPU unfinished.
    start: Nanos,
    cpu: CpuId,
    preemptions: u32,
}

/// What became of a request (`--jobs`, and the trace's JobEnd records).
pub use trace::Outcome;

/// One request of a periodic task, as the run treated it (`smartsim run --jobs`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct JobRecord {
    /// The task's name.
    pub task: String,
    /// The request's number, from 0.
    pub job: u64,
    /// The CPU it last ran on, if it ran.
    pub cpu: Option<CpuId>,
    /// When it was released (offset + k periods, plus jitter and the timer's resolution).
    pub release_ns: Nanos,
    /// When it first ran.
    pub start_ns: Option<Nanos>,
    /// When it finished (or was dropped).
    pub finish_ns: Option<Nanos>,
    /// Its absolute deadline (nominal release + relative deadline).
    pub deadline_ns: Nanos,
    /// The CPU time it needed (its draw).
    pub exec_ns: Nanos,
    /// What became of it.
    pub outcome: Outcome,
    /// Times it was taken off a CPU unfinished (preempted or its slice ended).
    pub preemptions: u32,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    NotStarted,
    Sleeping,
    Runnable,
    Running,
    Done,
}

struct TaskRt {
    state: State,
    /// CPU still needed by the current piece of work (request, burst, or all the work); MAX = endless.
    remaining: Nanos,
    /// Current request of a periodic task, and the ones released while it was busy.
    job: Option<Job>,
    pending: VecDeque<Job>,
    releases: u64,
    bursts: u64,
    est_avg: Option<f64>,
    /// A notification to handle when it next runs (deadline it concerns).
    notified: Option<Nanos>,
    /// When it became runnable and has not run since (for latency).
    ready_since: Option<Nanos>,
    /// The CPU it runs on, and the one it last ran on.
    on_cpu: Option<CpuId>,
    last_cpu: Option<CpuId>,
    rng: Pcg64,
    // metrics
    cpu: Nanos,
    charged: Nanos,
    quanta: u64,
    unbilled: u64,
    migrations: u64,
    met: u64,
    missed: u64,
    discarded: u64,
    aborted: u64,
    notifications: u64,
    finish: Option<Nanos>,
    /// Latency and response samples, ns: kept as values (8 bytes a sample, nothing for a task with
    /// none), summarised when the run ends; a histogram per task cost 30-80 KB before any sample.
    latency: Vec<u64>,
    response: Vec<u64>,
}

/// One simulated CPU. Its progress is accounted up to `synced`.
#[derive(Clone, Debug, Default)]
struct Cpu {
    running: Option<TaskId>,
    synced: Nanos,
    /// Wall time the running task has been on the CPU since dispatch, and ticks billed to it.
    run_wall: Nanos,
    run_ticks: Nanos,
    slice_end: Option<Nanos>,
    /// Overhead the running task must get through before progressing.
    stall: Nanos,
    dispatched_at: Nanos,
    last_ran: Option<TaskId>,
    /// When its running task's work or slice ends (MAX: never, or nothing runs), as of the last
    /// [`Sim::arm`]; and the generation of its entry in the CPU event heap (older entries are stale).
    next_event: Nanos,
    gen: u64,
    stats: CpuStats,
}

/// The simulator. Build it with [`Sim::new`], run it with [`Sim::run`].
pub struct Sim<'s> {
    scn: &'s Scenario,
    /// The policy in its core: the protocol, the tasks' states as the policy sees them, what runs
    /// where, which CPU decides next.
    core: Core,
    tasks: Vec<TaskRt>,
    /// What each task tells the scheduler at its admission (its affinity among it).
    params: Vec<TaskParams>,
    cpus: Vec<Cpu>,
    /// Next own event of each CPU (its task's work done, or its slice's end): (time, gen, cpu).
    cpu_events: BinaryHeap<Reverse<(Nanos, CpuId, u64)>>,
    /// Few CPUs: their next events are found by looking at each (no heap), whenever one changes; the
    /// earliest (time, CPU).
    few_cpus: bool,
    next_cpu: (Nanos, usize),
    now: Nanos,
    end: Nanos,
    heap: BinaryHeap<Reverse<(Nanos, u64, Ev, u32)>>,
    seq: u64,
    gen: u64,
    next_tick: u64,
    ticks_on: bool,
    tick_len_hint: Nanos,
    done: usize,
    notes: Vec<Notification>,
    sample_every: Nanos,
    next_sample: Nanos,
    timeline: Timeline,
    sys: SystemStats,
    /// Where the execution trace goes, when asked for ([`Sim::trace_to`]).
    trace: Option<Box<dyn FnMut(trace::Record) + 's>>,
    /// The run is over: a task still on a CPU was cut by the end of the recording.
    ending: bool,
    /// Every request's record, when asked for (`--jobs`).
    jobs: Option<Vec<JobRecord>>,
    /// When checking: instants that ended with a CPU idle while a task that may run there waited.
    stranded: Option<u64>,
    /// `SMARTSIM_DEBUG` set: print every dispatch to stderr.
    debug: bool,
    /// The policy ever notifies (else there is nothing to collect).
    notifies: bool,
    /// What switching to each task costs its CPU: the switch itself and refilling the cache with the
    /// task's working set.
    switch_cost: Vec<Nanos>,
}

/// Time of clock tick `k` at `hz` (exact integer arithmetic for any rate).
fn tick_time(k: u64, hz: u32) -> Nanos {
    ((k as u128 * 1_000_000_000u128) / hz as u128) as Nanos
}

/// Index of the first tick at or after `t`.
fn tick_at_or_after(t: Nanos, hz: u32) -> u64 {
    let mut k = ((t as u128 * hz as u128) / 1_000_000_000u128) as u64;
    while tick_time(k, hz) < t {
        k += 1;
    }
    k
}

/// Cells (samples × tasks) of the timeline a scenario without `sample` gets at most: 64 MB.
pub const DEFAULT_TIMELINE_CELLS: u64 = 4_000_000;

/// The timeline's sampling period when the scenario gives none: 1000 samples over the run, at most
/// one a millisecond, and no more than [`DEFAULT_TIMELINE_CELLS`] cells (100,000 tasks get 40
/// samples).
pub fn default_sample(duration: Nanos, tasks: usize) -> Nanos {
    let by_cells = duration.saturating_mul(tasks as u64) / DEFAULT_TIMELINE_CELLS;
    (duration / 1000).max(1_000_000).max(by_cells)
}

/// When a timer asked for `t` fires, given its resolution.
pub fn timer_fires(t: Nanos, kind: TimerKind, hz: u32) -> Nanos {
    match kind {
        TimerKind::Hr => t,
        TimerKind::Tick if hz == 0 => t,
        TimerKind::Tick => tick_time(tick_at_or_after(t, hz), hz),
        TimerKind::Rtc(f) => tick_time(tick_at_or_after(t, f), f),
    }
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
        let seed = m.seed;
        let tasks = scn
            .tasks
            .iter()
            .map(|spec| TaskRt {
                state: State::NotStarted,
                remaining: 0,
                job: None,
                pending: VecDeque::new(),
                releases: 0,
                bursts: 0,
                est_avg: None,
                notified: None,
                ready_since: None,
                on_cpu: None,
                last_cpu: None,
                // One stream per task: adding a task does not change the draws of the others.
                rng: workload::task_rng(seed, &spec.name),
                cpu: 0,
                charged: 0,
                quanta: 0,
                unbilled: 0,
                migrations: 0,
                met: 0,
                missed: 0,
                discarded: 0,
                aborted: 0,
                notifications: 0,
                finish: None,
                latency: Vec::new(),
                response: Vec::new(),
            })
            .collect();
        let params: Vec<TaskParams> = scn
            .tasks
            .iter()
            .enumerate()
            .map(|(i, spec)| TaskParams {
                priority: spec.priority,
                share: spec.share,
                latency_tolerance: spec.latency_tolerance,
                cpus: placement.map(|p| vec![p[i]]).or_else(|| spec.cpus.clone()),
            })
            .collect();
        if params.iter().any(|p| p.cpus.is_some()) || placement.is_some() {
            core.expect_affinities();
        }
        let ticks_on = m.hz > 0 && (m.billing == Billing::Tick || m.overhead.tick > 0 || core.uses_tick());
        let sample_every = m.sample.unwrap_or_else(|| default_sample(m.duration, scn.tasks.len()));
        let ncpus = m.cpus as usize;
        let notifies = core.notifies();
        let mut sim = Sim {
            scn,
            core,
            tasks,
            params,
            cpus: vec![Cpu { next_event: Nanos::MAX, ..Cpu::default() }; ncpus],
            cpu_events: BinaryHeap::new(),
            few_cpus: ncpus <= FEW_CPUS,
            next_cpu: (Nanos::MAX, 0),
            now: 0,
            end: m.duration,
            heap: BinaryHeap::new(),
            seq: 0,
            gen: 0,
            next_tick: 1,
            ticks_on,
            tick_len_hint: if m.hz > 0 { 1_000_000_000 / m.hz as u64 } else { 0 },
            done: 0,
            notes: Vec::new(),
            sample_every,
            next_sample: 0,
            timeline: Timeline::new(scn.tasks.len()),
            sys: SystemStats::default(),
            trace: None,
            ending: false,
            jobs: None,
            stranded: None,
            debug: std::env::var_os("SMARTSIM_DEBUG").is_some(),
            notifies,
            switch_cost: scn
                .tasks
                .iter()
                .map(|spec| {
                    let o = &m.overhead;
                    let refill = if o.cache_bytes > 0 && o.bandwidth > 0 && spec.working_set > 0 {
                        let bytes = spec.working_set.min(o.cache_bytes) as u128;
                        (bytes * 1_000_000_000 / o.bandwidth as u128) as Nanos
                    } else {
                        0
                    };
                    o.switch + refill
                })
                .collect(),
        };
        for (i, t) in scn.tasks.iter().enumerate() {
            let start = t.start + if matches!(t.model, Model::Cpu { .. }) { sim.jitter(i) } else { 0 };
            sim.push(start, Ev::Start, i as u32);
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

    fn timer_of(&self, i: usize) -> TimerKind {
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
    /// (what a global, work-conserving policy guarantees); [`Sim::stranded`] counts the instants that
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

    fn record_job(&mut self, i: usize, job: &Job, finish: Option<Nanos>, outcome: Outcome) {
        if self.trace.is_some() {
            let at = finish.unwrap_or(self.now);
            self.emit(trace::Record::JobEnd { task: i as u32, job: job.index as u32, at, outcome });
        }
        if let Some(v) = &mut self.jobs {
            v.push(JobRecord {
                task: self.scn.tasks[i].name.clone(),
                job: job.index,
                cpu: (job.cpu != CpuId::MAX).then_some(job.cpu),
                release_ns: job.released,
                start_ns: (job.start != Nanos::MAX).then_some(job.start),
                finish_ns: finish,
                deadline_ns: job.deadline,
                exec_ns: job.exec,
                outcome,
                preemptions: job.preemptions,
            });
        }
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

    /// Run to the end of the scenario (its duration, or when every task is done).
    pub fn run(mut self) -> SimResult {
        self.run_until(self.end);
        self.finish()
    }

    /// Run until `limit` (at most the scenario's duration); can be called repeatedly.
    pub fn run_until(&mut self, limit: Nanos) {
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
        }
    }

    /// The next event of CPU `c`'s running task: its work done or its slice's end. Called whenever
    /// what it depends on changes other than by time passing (a dispatch, a stop, new work, overhead).
    #[inline]
    fn arm(&mut self, c: usize) {
        // One CPU: its next event is computed when asked for (see `next_cpu_event`).
        if self.cpus.len() > 1 {
            self.arm_cpu(c);
        }
    }

    fn arm_cpu(&mut self, c: usize) {
        let t = self.cpu_event(c);
        self.cpus[c].next_event = t;
        if self.few_cpus {
            // The earliest of a few: look at each (ties: the lowest CPU).
            let mut best = (Nanos::MAX, 0);
            for k in 0..self.cpus.len() {
                if self.cpus[k].next_event < best.0 {
                    best = (self.cpus[k].next_event, k);
                }
            }
            self.next_cpu = best;
            return;
        }
        self.gen += 1;
        self.cpus[c].gen = self.gen;
        if t != Nanos::MAX {
            self.cpu_events.push(Reverse((t, c as CpuId, self.gen)));
        }
    }

    /// When CPU `c`'s running task finishes its work or its slice (MAX: neither). Time passing leaves it
    /// unchanged ([`Sim::sync`] moves `synced` forward by what it takes off the overhead and the work).
    #[inline]
    fn cpu_event(&self, c: usize) -> Nanos {
        let cpu = &self.cpus[c];
        let Some(r) = cpu.running else { return Nanos::MAX };
        let rem = self.tasks[r.idx()].remaining;
        let mut t = Nanos::MAX;
        if rem != Nanos::MAX {
            t = cpu.synced.saturating_add(cpu.stall).saturating_add(rem);
        }
        if let Some(s) = cpu.slice_end {
            t = t.min(s);
        }
        t
    }

    /// The earliest pending CPU event and its CPU (ties: the lowest CPU), dropping stale ones.
    fn next_cpu_event(&mut self) -> Option<(Nanos, usize)> {
        if self.cpus.len() == 1 {
            let t = self.cpu_event(0);
            return (t != Nanos::MAX).then_some((t, 0));
        }
        if self.few_cpus {
            return (self.next_cpu.0 != Nanos::MAX).then_some(self.next_cpu);
        }
        while let Some(&Reverse((t, c, gen))) = self.cpu_events.peek() {
            if self.cpus[c as usize].gen == gen {
                return Some((t, c as usize));
            }
            self.cpu_events.pop();
        }
        None
    }

    fn next_event_time(&mut self) -> Nanos {
        let mut t = self.end;
        if let Some(Reverse((at, ..))) = self.heap.peek() {
            t = t.min(*at);
        }
        if let Some((c, _)) = self.next_cpu_event() {
            t = t.min(c);
        }
        if self.ticks_on {
            t = t.min(tick_time(self.next_tick, self.scn.machine.hz));
        }
        if let Some(p) = self.core.next_timer() {
            t = t.min(timer_fires(p.max(self.now), self.scn.machine.timer, self.scn.machine.hz));
        }
        t.min(self.next_sample.max(self.now))
    }

    /// Let time pass to `t` (the CPUs catch up lazily, see [`Sim::sync`]).
    fn advance(&mut self, t: Nanos) {
        debug_assert!(t >= self.now);
        self.now = t;
        self.sample_to(t);
    }

    /// Bring CPU `c` up to now: its running task progresses (after paying any pending overhead).
    #[inline]
    fn sync(&mut self, c: usize) {
        let now = self.now;
        let cpu = &mut self.cpus[c];
        let dt = now - cpu.synced;
        cpu.synced = now;
        if dt == 0 {
            return;
        }
        if let Some(r) = cpu.running {
            let paid = dt.min(cpu.stall);
            cpu.stall -= paid;
            cpu.stats.overhead_ns += paid;
            cpu.stats.busy_ns += dt;
            cpu.run_wall += dt;
            self.sys.overhead_ns += paid;
            let progress = dt - paid;
            let tr = &mut self.tasks[r.idx()];
            if tr.remaining != Nanos::MAX {
                tr.remaining -= progress.min(tr.remaining);
            }
            tr.cpu += dt;
        } else {
            cpu.stats.idle_ns += dt;
            self.sys.idle_ns += dt;
        }
    }

    fn sync_all(&mut self) {
        for c in 0..self.cpus.len() {
            self.sync(c);
        }
    }

    #[inline]
    fn sample_to(&mut self, t: Nanos) {
        if self.next_sample <= t {
            self.take_samples(t);
        }
    }

    fn take_samples(&mut self, t: Nanos) {
        self.sync_all();
        while self.next_sample <= t {
            let at = self.next_sample;
            let cpu: Vec<Nanos> = self.tasks.iter().map(|x| x.cpu).collect();
            let met: Vec<u64> = self.tasks.iter().map(|x| x.met).collect();
            self.timeline.push(at, cpu, met);
            self.next_sample += self.sample_every;
        }
    }

    fn handle_events(&mut self) {
        let now = self.now;
        // Clock tick on every CPU: bill the running task (tick billing), pay the handler, ask
        // tick-driven policies.
        if self.ticks_on && tick_time(self.next_tick, self.scn.machine.hz) <= now {
            self.next_tick += 1;
            for c in 0..self.cpus.len() {
                self.sys.ticks += 1;
                self.sync(c);
                let running = self.cpus[c].running;
                if self.trace.is_some() {
                    self.emit(trace::Record::Tick { cpu: c as u32, task: running.map(|r| r.0), at: now });
                }
                if running.is_some() {
                    self.cpus[c].run_ticks += self.tick_len_hint;
                    self.cpus[c].stall += self.scn.machine.overhead.tick;
                    self.arm(c);
                } else {
                    self.sys.overhead_ns += self.scn.machine.overhead.tick;
                    self.cpus[c].stats.overhead_ns += self.scn.machine.overhead.tick;
                }
                self.core.tick(c as CpuId, now);
            }
        }
        // Running tasks whose work is done, or whose slice is.
        while let Some((t, c)) = self.next_cpu_event() {
            if t > now {
                break;
            }
            if !self.few_cpus {
                self.cpu_events.pop();
            }
            self.sync(c);
            let Some(r) = self.cpus[c].running else { continue };
            if self.tasks[r.idx()].remaining == 0 {
                self.work_done(r);
            } else if self.cpus[c].slice_end.is_some_and(|s| s <= now) {
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
            self.sys.events += 1;
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

    fn task_event(&mut self, ev: Ev, i: usize) {
        let now = self.now;
        let id = TaskId(i as u32);
        let spec = &self.scn.tasks[i];
        match ev {
            Ev::Start => {
                self.core.admit(id, &self.params[i], now);
                self.tasks[i].state = State::Sleeping;
                match &spec.model {
                    Model::Cpu { work } => {
                        self.tasks[i].remaining = work.unwrap_or(Nanos::MAX);
                        self.make_runnable(id);
                    }
                    Model::Periodic(_) => self.schedule_release(i),
                    Model::Interactive { .. } => self.start_burst(i),
                }
            }
            Ev::Release => {
                let Model::Periodic(p) = &spec.model else { unreachable!() };
                if self.tasks[i].state == State::Done {
                    return;
                }
                let k = self.tasks[i].releases;
                let release = spec.start + k * p.period;
                let exec = p.exec.sample(&mut self.tasks[i].rng).max(1);
                self.tasks[i].releases += 1;
                self.sys.jobs += 1;
                let job = Job {
                    index: k,
                    release,
                    released: now,
                    deadline: release + p.deadline,
                    exec,
                    start: Nanos::MAX,
                    cpu: CpuId::MAX,
                    preemptions: 0,
                };
                if p.on_miss == OnMiss::Abort {
                    self.push(job.deadline, Ev::Abort, i as u32);
                }
                if self.trace.is_some() {
                    self.emit(trace::Record::Release {
                        task: i as u32,
                        job: k as u32,
                        at: now,
                        deadline: Some(job.deadline),
                    });
                }
                self.tasks[i].pending.push_back(job);
                self.schedule_release(i);
                if self.tasks[i].state == State::Sleeping {
                    self.next_job(i);
                }
            }
            Ev::Wake => {
                if self.tasks[i].state == State::Sleeping {
                    self.core.interact(id, now);
                    self.make_runnable(id);
                }
            }
            Ev::StopTime => self.terminate(i),
            Ev::Abort => self.abort(i),
        }
    }

    /// The deadline of a request of an `on_miss = "abort"` task came: if the request is unfinished,
    /// it is dropped (SimSo's `abort_on_miss`).
    fn abort(&mut self, i: usize) {
        let now = self.now;
        if self.tasks[i].state == State::Done {
            return;
        }
        if let Some(k) = self.tasks[i].pending.iter().position(|j| j.deadline == now) {
            let job = self.tasks[i].pending.remove(k).expect("found");
            self.complete_job(i, &job, Dropped::Aborted);
            return;
        }
        let Some(job) = self.tasks[i].job.take_if(|j| j.deadline == now) else { return };
        self.complete_job(i, &job, Dropped::Aborted);
        match self.tasks[i].state {
            State::Running => {
                let c = self.tasks[i].on_cpu.expect("running on a CPU") as usize;
                self.sync(c);
                self.after_job(i);
            }
            // Queued to the policy: it takes its next request, or, when dispatched without one, it
            // blocks at once (see `reschedule`).
            State::Runnable if self.tasks[i].pending.front().is_some() => {
                self.next_job(i);
            }
            _ => {}
        }
    }

    /// Queue the next release of a periodic task, if it has one.
    fn schedule_release(&mut self, i: usize) {
        let spec = &self.scn.tasks[i];
        let Model::Periodic(p) = &spec.model else { return };
        let k = self.tasks[i].releases;
        if p.count.is_some_and(|c| k >= c) {
            if self.tasks[i].state == State::Sleeping && self.tasks[i].pending.is_empty() {
                self.terminate(i);
            }
            return;
        }
        let nominal = spec.start + k * p.period;
        if spec.stop.is_some_and(|s| nominal >= s) || nominal >= self.end {
            return;
        }
        let jitter = self.jitter(i);
        let at = timer_fires(nominal + jitter, self.timer_of(i), self.scn.machine.hz);
        self.push(at, Ev::Release, i as u32);
    }

    /// A release or wake-up is late by a uniform draw in `[0, jitter]` (workload's meaning).
    fn jitter(&mut self, i: usize) -> Nanos {
        use workload::rand::Rng;
        self.scn.tasks[i].jitter.map_or(0, |j| self.tasks[i].rng.random_range(0..=j))
    }

    fn start_burst(&mut self, i: usize) {
        let spec = &self.scn.tasks[i];
        let Model::Interactive { think, count, .. } = &spec.model else { return };
        if count.is_some_and(|c| self.tasks[i].bursts >= c) {
            self.terminate(i);
            return;
        }
        let th = think.sample(&mut self.tasks[i].rng) + self.jitter(i);
        let at = timer_fires(self.now + th, self.timer_of(i), self.scn.machine.hz);
        if let Model::Interactive { burst, .. } = &spec.model {
            self.tasks[i].remaining = burst.sample(&mut self.tasks[i].rng).max(1);
        }
        self.tasks[i].bursts += 1;
        self.push(at, Ev::Wake, i as u32);
    }

    fn estimate(&self, i: usize, job: &Job, p: &workload::Periodic) -> Nanos {
        match p.estimate {
            Estimate::Exact => job.exec,
            Estimate::Fixed(e) => e,
            Estimate::Ewma { factor, initial, .. } => {
                let avg = self.tasks[i].est_avg.unwrap_or_else(|| initial.unwrap_or(p.exec.mean()) as f64);
                (avg * factor).round().max(1.0) as Nanos
            }
        }
    }

    /// A periodic task takes its next pending request, or goes to sleep. Returns whether it has work.
    fn next_job(&mut self, i: usize) -> bool {
        let id = TaskId(i as u32);
        let Model::Periodic(p) = &self.scn.tasks[i].model else { unreachable!() };
        let Some(job) = self.tasks[i].pending.pop_front() else {
            self.tasks[i].job = None;
            self.core.set_time_constraint(id, None, self.now);
            return false;
        };
        let est = self.estimate(i, &job, p);
        let notify_time = match p.notify {
            Notify::Never => None,
            Notify::Asap => Some(0),
            Notify::AtDeadline => Some(job.deadline),
            Notify::After(d) => Some((job.release + d).min(job.deadline)),
        };
        let c = TimeConstraint {
            deadline: job.deadline,
            cpu_estimate: Some(est),
            notify_time,
            period: Some(p.period),
            release: Some(job.released),
        };
        self.core.set_time_constraint(id, Some(c), self.now);
        self.tasks[i].remaining = job.exec;
        self.tasks[i].job = Some(job);
        match self.tasks[i].state {
            State::Sleeping => self.make_runnable(id),
            State::Running => {
                let c = self.tasks[i].on_cpu.expect("running on a CPU") as usize;
                self.arm(c);
            }
            _ => {}
        }
        true
    }

    fn make_runnable(&mut self, id: TaskId) {
        let i = id.idx();
        self.tasks[i].state = State::Runnable;
        // Latency counts from the nominal release for a periodic request, else from the wake-up.
        let from = self.tasks[i].job.as_ref().map_or(self.now, |j| j.release.min(self.now));
        self.tasks[i].ready_since = Some(from);
        // Where it goes is decided at the end of the instant, when every event of it is known.
        self.core.wake(id, self.now);
        if self.trace.is_some() {
            self.emit(trace::Record::Wake { task: i as u32, cpu: None, at: self.now });
        }
    }

    /// The running task finished its current piece of work.
    fn work_done(&mut self, r: TaskId) {
        let i = r.idx();
        let now = self.now;
        match &self.scn.tasks[i].model {
            Model::Cpu { .. } => {
                self.tasks[i].finish = Some(now);
                self.stop_running(i, Stop::Blocked);
                self.exit(i);
            }
            Model::Periodic(p) => {
                let job = self.tasks[i].job.take().expect("a running periodic task has a request");
                self.complete_job(i, &job, Dropped::No);
                if let Estimate::Ewma { alpha, .. } = p.estimate {
                    let a = self.tasks[i].est_avg.unwrap_or(job.exec as f64);
                    self.tasks[i].est_avg = Some(a + alpha * (job.exec as f64 - a));
                }
                self.after_job(i);
            }
            Model::Interactive { .. } => {
                self.stop_running(i, Stop::Blocked);
                self.tasks[i].state = State::Sleeping;
                self.start_burst(i);
            }
        }
    }

    fn complete_job(&mut self, i: usize, job: &Job, dropped: Dropped) {
        let now = self.now;
        let t = &mut self.tasks[i];
        let outcome = match dropped {
            Dropped::Discarded => {
                t.discarded += 1;
                t.missed += 1;
                Outcome::Discarded
            }
            Dropped::Aborted => {
                t.aborted += 1;
                t.missed += 1;
                Outcome::Aborted
            }
            Dropped::No if now <= job.deadline => {
                t.met += 1;
                Outcome::Met
            }
            Dropped::No => {
                t.missed += 1;
                Outcome::Missed
            }
        };
        if dropped == Dropped::No {
            t.response.push(now - job.release);
        }
        if t.notified == Some(job.deadline) {
            t.notified = None;
        }
        if self.trace.is_some() || self.jobs.is_some() {
            self.log_job(i, job, outcome);
        }
    }

    /// A request's end in the trace and the job records (when recorded).
    #[cold]
    fn log_job(&mut self, i: usize, job: &Job, outcome: Outcome) {
        self.record_job(i, job, Some(self.now), outcome);
    }

    /// After a request of the running periodic task ended: the next one, or sleep, or exit.
    fn after_job(&mut self, i: usize) {
        if self.next_job(i) {
            // A new constraint: the policy decides again.
            let c = self.tasks[i].on_cpu.expect("running on a CPU");
            self.core.request(c);
            return;
        }
        self.stop_running(i, Stop::Blocked);
        self.tasks[i].state = State::Sleeping;
        let Model::Periodic(p) = &self.scn.tasks[i].model else { unreachable!() };
        let spec = &self.scn.tasks[i];
        let k = self.tasks[i].releases;
        let more = p.count.is_none_or(|c| k < c)
            && spec.stop.is_none_or(|s| spec.start + k * p.period < s)
            && spec.start + k * p.period < self.end;
        if !more {
            self.exit(i);
        }
    }

    fn exit(&mut self, i: usize) {
        if self.tasks[i].state == State::Done {
            return;
        }
        // A task gone can change what the policy prefers: the core has it decide again wherever a
        // task runs.
        self.core.exit(TaskId(i as u32), self.now);
        self.tasks[i].state = State::Done;
        self.done += 1;
        if self.tasks[i].finish.is_none() {
            self.tasks[i].finish = Some(self.now);
        }
    }

    /// The task reached its stop time, or ran out of requests while asleep.
    fn terminate(&mut self, i: usize) {
        match self.tasks[i].state {
            State::Done => {}
            State::NotStarted => {
                self.tasks[i].state = State::Done;
                self.done += 1;
            }
            State::Running => {
                self.stop_running(i, Stop::Blocked);
                self.exit(i);
            }
            _ => self.exit(i),
        }
    }

    /// Take running task `i` off its CPU, telling the policy what it is billed. Its CPU is idle
    /// afterwards (the caller may reschedule it at once).
    /// The stretch task `r` just ran on CPU `c`, in the trace.
    #[cold]
    fn log_interval(&mut self, r: TaskId, c: CpuId, why: Stop) {
        let (start, end) = (self.cpus[c as usize].dispatched_at, self.now);
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

    fn stop_running(&mut self, i: usize, why: Stop) {
        let Some(c) = self.tasks[i].on_cpu.take() else { return };
        let cu = c as usize;
        self.sync(cu);
        let r = TaskId(i as u32);
        debug_assert_eq!(self.cpus[cu].running, Some(r));
        let now = self.now;
        if self.trace.is_some() {
            self.log_interval(r, c, why);
        }
        let charged = match self.scn.machine.billing {
            Billing::Exact => self.cpus[cu].run_wall,
            Billing::Tick => self.cpus[cu].run_ticks,
        };
        let t = &mut self.tasks[i];
        t.charged += charged;
        t.quanta += 1;
        t.last_cpu = Some(c);
        // Taken off unfinished after running; neither the cut at the end of the run nor a dispatch
        // undone at the instant it was made (its predecessor aborted at that instant) is a preemption.
        let ran = now > self.cpus[cu].dispatched_at;
        let t = &mut self.tasks[i];
        if why != Stop::Blocked && !self.ending && ran {
            if let Some(j) = &mut t.job {
                j.preemptions += 1;
            }
        }
        if charged == 0 {
            t.unbilled += 1;
        }
        t.state = if why == Stop::Blocked { State::Sleeping } else { State::Runnable };
        let cpu = &mut self.cpus[cu];
        cpu.running = None;
        cpu.slice_end = None;
        cpu.run_wall = 0;
        cpu.run_ticks = 0;
        // Overhead not paid yet (a task stopped at the instant it was dispatched) is paid by the next.
        self.core.stop(r, charged, why, now);
        self.arm(cu);
    }

    #[inline]
    fn collect_notifications(&mut self) {
        if self.notifies {
            self.take_notifications();
        }
    }

    fn take_notifications(&mut self) {
        self.core.take_notifications(&mut self.notes);
        for n in std::mem::take(&mut self.notes) {
            if self.trace.is_some() {
                self.emit(trace::Record::Notify { task: n.task.0, at: n.at, deadline: n.deadline });
            }
            let t = &mut self.tasks[n.task.idx()];
            t.notifications += 1;
            self.sys.notifications += 1;
            let discard = matches!(&self.scn.tasks[n.task.idx()].model,
                Model::Periodic(p) if p.on_miss == OnMiss::Discard);
            if discard && t.job.as_ref().is_some_and(|j| j.deadline == n.deadline) {
                t.notified = Some(n.deadline);
                if let Some(c) = t.on_cpu {
                    self.core.request(c);
                }
            }
        }
    }

    /// Task `r`, just dispatched, handles what is pending: a notification (it drops the request), or,
    /// if its request was aborted while it waited, the lack of work (it blocks at once).
    fn handle_pending(&mut self, r: TaskId) {
        let i = r.idx();
        if let Some(d) = self.tasks[i].notified {
            match self.tasks[i].job.take_if(|j| j.deadline == d) {
                Some(job) => {
                    self.complete_job(i, &job, Dropped::Discarded);
                    self.tasks[i].notified = None;
                    self.after_job(i);
                }
                None => self.tasks[i].notified = None,
            }
        } else if self.tasks[i].job.is_none() && matches!(self.scn.tasks[i].model, Model::Periodic(_)) {
            self.after_job(i);
        }
    }

    /// Stop the task running on `c` (if any) for `why` and let the policy choose for `c`, until a
    /// choice sticks.
    fn reschedule(&mut self, c: usize, why: Stop) {
        self.core.clear_request(c as CpuId);
        if let Some(r) = self.cpus[c].running {
            self.stop_running(r.idx(), why);
        }
        self.sync(c);
        for _ in 0..MAX_DECISIONS_PER_INSTANT {
            self.sys.decisions += 1;
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
            if self.cpus[c].running.is_some() && !self.core.requested(c as CpuId) {
                return;
            }
            self.core.clear_request(c as CpuId);
            if let Some(r) = self.cpus[c].running {
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
    fn print_dispatch(&self, c: usize, t: TaskId, slice: Option<Nanos>) {
        eprintln!(
            "{:>12} cpu {c} dispatch {} slice {:?} job {:?} notified {:?}",
            self.now,
            self.scn.tasks[t.idx()].name,
            slice,
            self.tasks[t.idx()].job,
            self.tasks[t.idx()].notified
        );
    }

    fn dispatch(&mut self, c: usize, t: TaskId, slice: Option<Nanos>) {
        if self.debug {
            self.print_dispatch(c, t, slice);
        }
        let m = &self.scn.machine;
        let tr = &mut self.tasks[t.idx()];
        debug_assert_eq!(tr.state, State::Runnable, "the core dispatched a task that is not runnable");
        tr.state = State::Running;
        tr.on_cpu = Some(c as CpuId);
        if let Some(since) = tr.ready_since.take() {
            tr.latency.push(self.now - since);
        }
        if let Some(j) = &mut tr.job {
            j.start = j.start.min(self.now);
            j.cpu = c as CpuId;
        }
        let migrated = tr.last_cpu.is_some_and(|l| l != c as CpuId);
        if migrated {
            tr.migrations += 1;
        }
        let cpu = &mut self.cpus[c];
        cpu.stall += m.overhead.decision;
        if cpu.last_ran != Some(t) {
            self.sys.switches += 1;
            cpu.stats.switches += 1;
            cpu.stall += self.switch_cost[t.idx()];
        }
        if migrated {
            self.sys.migrations += 1;
            cpu.stall += m.overhead.migration;
        }
        cpu.last_ran = Some(t);
        cpu.running = Some(t);
        cpu.dispatched_at = self.now;
        cpu.slice_end = slice.map(|s| timer_fires(self.now.saturating_add(s), m.timer, m.hz));
        self.arm(c);
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
        for c in 0..self.cpus.len() {
            if let Some(r) = self.cpus[c].running {
                if self.tasks[r.idx()].remaining == 0 {
                    self.work_done(r);
                }
            }
        }
        for c in 0..self.cpus.len() {
            if let Some(r) = self.cpus[c].running {
                self.stop_running(r.idx(), Stop::Preempted);
            }
        }
        self.sync_all();
        // Requests still open: one whose deadline has passed missed it (it is counted so, with no
        // finish); one whose deadline lies beyond the end is unfinished, its outcome unknown.
        let record = self.jobs.is_some() || self.trace.is_some();
        for i in 0..self.tasks.len() {
            let open: Vec<Job> =
                self.tasks[i].job.take().into_iter().chain(self.tasks[i].pending.drain(..)).collect();
            for j in open {
                let outcome = if j.deadline <= self.now {
                    self.tasks[i].missed += 1;
                    Outcome::Missed
                } else {
                    Outcome::Unfinished
                };
                if record {
                    self.record_job(i, &j, None, outcome);
                }
            }
        }
        if self.trace.is_some() {
            self.emit(trace::Record::End { at: self.now });
        }
    }

    /// Build the result (call after the run).
    pub fn finish(mut self) -> SimResult {
        self.stop_all();
        let duration = self.end;
        let tasks = self
            .scn
            .tasks
            .iter()
            .zip(self.tasks.iter())
            .map(|(spec, t)| {
                TaskResult::new(
                    spec,
                    duration,
                    TaskMetrics {
                        cpu: t.cpu,
                        charged: t.charged,
                        quanta: t.quanta,
                        unbilled: t.unbilled,
                        migrations: t.migrations,
                        met: t.met,
                        missed: t.missed,
                        discarded: t.discarded,
                        aborted: t.aborted,
                        notifications: t.notifications,
                        finish: t.finish,
                        latency: &t.latency,
                        response: &t.response,
                    },
                )
            })
            .collect();
        let counters = self.core.counters().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let mut system = self.sys;
        system.cpus = self.cpus.iter().map(|c| c.stats.clone()).collect();
        SimResult {
            scenario: self.scn.name.clone(),
            policy: self.core.name().to_string(),
            duration_ns: duration,
            seed: self.scn.machine.seed,
            cpus: self.scn.machine.cpus,
            tasks,
            system,
            counters,
            timeline: self.timeline,
        }
    }
}

/// Why a request ended without being finished.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Dropped {
    No,
    /// The task dropped it when notified (`on_miss = "discard"`).
    Discarded,
    /// Its deadline passed (`on_miss = "abort"`).
    Aborted,
}

/// What the engine measured of one task (input to [`TaskResult::new`]).
pub struct TaskMetrics<'a> {
    /// CPU time it ran (wall time on a CPU, overheads included).
    pub cpu: Nanos,
    /// CPU time the policy billed it.
    pub charged: Nanos,
    /// Times it was dispatched.
    pub quanta: u64,
    /// Dispatches billed nothing.
    pub unbilled: u64,
    /// Dispatches on another CPU than the one it last ran on.
    pub migrations: u64,
    /// Requests completed by their deadline.
    pub met: u64,
    /// Requests late or dropped.
    pub missed: u64,
    /// Requests dropped after a notification.
    pub discarded: u64,
    /// Requests dropped at their deadline (`on_miss = "abort"`).
    pub aborted: u64,
    /// Notifications received.
    pub notifications: u64,
    /// When it finished.
    pub finish: Option<Nanos>,
    /// Ready-to-running latencies.
    pub latency: &'a [u64],
    /// Release-to-completion times of requests.
    pub response: &'a [u64],
}

/// Whether an exec distribution has a spread (used by reports).
pub fn is_variable(e: &Exec) -> bool {
    !matches!(e, Exec::Fixed(_))
}
