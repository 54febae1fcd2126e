//! The discrete-event engine: one CPU, a policy, the tasks of a scenario, and the machine model.
//!
//! The engine owns time. Between two events the CPU runs one task (or idles); the next event is the
//! earliest of: a task's timer (a periodic release, the end of an interactive task's think time, a
//! start or stop time), the running task finishing its current piece of work, the end of its slice,
//! a clock tick (only when something needs ticks: tick billing, a tick overhead, a tick-driven
//! policy), the policy's own timer, a timeline sample, the end of the run.
//!
//! Machine model (DESIGN.md): `hz`; billing `exact` (the policy is billed the wall time a task ran)
//! or `tick` (whoever runs at a tick is billed the whole tick; a quantum between two ticks is billed
//! nothing, Etsion 2003 §4); timer resolution `hr` (exact), `tick` (fires on the next tick) or
//! `rtc:<Hz>`, per machine with a per-task override for the task's own wake-ups; overheads: the tick
//! handler, the context switch, each scheduling decision and the cache refill after a switch
//! (`min(working_set, cache) / bandwidth`, Regehr 2002 §5.2) are time the CPU spends before the
//! incoming task makes progress, billed to it as the kernel would.
//!
//! Real-time tasks follow SMART's applications (§6.2.2): at each request they set a time
//! constraint (deadline, cpu-estimate, notify-time, period); a notification is handled when the task
//! next runs, as a signal would be, and a task that discards drops the request then.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use hdrhistogram::Histogram;
use sched::{Dispatch, Nanos, Notification, Policy, Stop, TaskId, TaskParams, TimeConstraint};
use workload::rand_pcg::Pcg64;
use workload::{Billing, Estimate, Exec, Model, Notify, OnMiss, Scenario, TimerKind};

use crate::result::{SimResult, SystemStats, TaskResult, Timeline};

/// Bound on decisions at one instant (a policy and its notifications could otherwise ping-pong).
const MAX_DECISIONS_PER_INSTANT: usize = 10_000;

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Start,
    Release,
    Wake,
    StopTime,
}

#[derive(Clone, Debug)]
struct Job {
    release: Nanos,
    deadline: Nanos,
    exec: Nanos,
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
    rng: Pcg64,
    // metrics
    cpu: Nanos,
    charged: Nanos,
    quanta: u64,
    unbilled: u64,
    met: u64,
    missed: u64,
    discarded: u64,
    notifications: u64,
    finish: Option<Nanos>,
    latency: Histogram<u64>,
    response: Histogram<u64>,
}

/// The simulator. Build it with [`Sim::new`], run it with [`Sim::run`].
pub struct Sim<'s> {
    scn: &'s Scenario,
    policy: Box<dyn Policy>,
    tasks: Vec<TaskRt>,
    now: Nanos,
    end: Nanos,
    heap: BinaryHeap<Reverse<(Nanos, u64, Ev, u32)>>,
    seq: u64,
    running: Option<TaskId>,
    last_ran: Option<TaskId>,
    /// Wall time the running task has been on the CPU since dispatch, and ticks billed to it.
    run_wall: Nanos,
    run_ticks: Nanos,
    slice_end: Option<Nanos>,
    /// Overhead the running task must get through before progressing.
    stall: Nanos,
    next_tick: u64,
    ticks_on: bool,
    tick_len_hint: Nanos,
    need_resched: bool,
    done: usize,
    notes: Vec<Notification>,
    sample_every: Nanos,
    next_sample: Nanos,
    timeline: Timeline,
    sys: SystemStats,
    /// Execution intervals and marks, when asked for (Perfetto export).
    trace: Option<TraceLog>,
    dispatched_at: Nanos,
    /// `SMARTSIM_DEBUG` set: print every dispatch to stderr.
    debug: bool,
}

/// What a run did, interval by interval, for a Perfetto/Chrome trace.
#[derive(Clone, Debug, Default)]
pub struct TraceLog {
    /// (task, start, end) of every stretch on the CPU.
    pub intervals: Vec<(u32, Nanos, Nanos)>,
    /// (task, time, what): releases, deadline misses, notifications.
    pub marks: Vec<(u32, Nanos, &'static str)>,
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

/// When a timer asked for `t` fires, given its resolution.
pub fn timer_fires(t: Nanos, kind: TimerKind, hz: u32) -> Nanos {
    match kind {
        TimerKind::Hr => t,
        TimerKind::Tick if hz == 0 => t,
        TimerKind::Tick => tick_time(tick_at_or_after(t, hz), hz),
        TimerKind::Rtc(f) => tick_time(tick_at_or_after(t, f), f),
    }
}

fn hist() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant figures is valid")
}

impl<'s> Sim<'s> {
    /// A simulator for `scn` driving `policy`.
    pub fn new(scn: &'s Scenario, policy: Box<dyn Policy>) -> Self {
        let m = &scn.machine;
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
                // One stream per task: adding a task does not change the draws of the others.
                rng: workload::task_rng(seed, &spec.name),
                cpu: 0,
                charged: 0,
                quanta: 0,
                unbilled: 0,
                met: 0,
                missed: 0,
                discarded: 0,
                notifications: 0,
                finish: None,
                latency: hist(),
                response: hist(),
            })
            .collect();
        let ticks_on = m.hz > 0 && (m.billing == Billing::Tick || m.overhead.tick > 0 || policy.uses_tick());
        let sample_every = m.sample.unwrap_or_else(|| (m.duration / 1000).max(1_000_000));
        let mut sim = Sim {
            scn,
            policy,
            tasks,
            now: 0,
            end: m.duration,
            heap: BinaryHeap::new(),
            seq: 0,
            running: None,
            last_ran: None,
            run_wall: 0,
            run_ticks: 0,
            slice_end: None,
            stall: 0,
            next_tick: 1,
            ticks_on,
            tick_len_hint: if m.hz > 0 { 1_000_000_000 / m.hz as u64 } else { 0 },
            need_resched: false,
            done: 0,
            notes: Vec::new(),
            sample_every,
            next_sample: 0,
            timeline: Timeline::new(scn.tasks.len()),
            sys: SystemStats::default(),
            trace: None,
            dispatched_at: 0,
            debug: std::env::var_os("SMARTSIM_DEBUG").is_some(),
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

    /// Record every execution interval and mark for a trace (see [`Sim::finish_with_trace`]).
    pub fn record_trace(&mut self) {
        self.trace = Some(TraceLog::default());
    }

    fn mark(&mut self, i: usize, what: &'static str) {
        if let Some(t) = &mut self.trace {
            t.marks.push((i as u32, self.now, what));
        }
    }

    /// The policy (for queries such as availability during or after a run).
    pub fn policy(&self) -> &dyn Policy {
        self.policy.as_ref()
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
                self.end = self.now;
                self.sample_to(self.now);
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
            if self.need_resched || self.running.is_none() {
                self.reschedule(Stop::Preempted);
            }
        }
    }

    fn next_event_time(&self) -> Nanos {
        let mut t = self.end;
        if let Some(Reverse((at, ..))) = self.heap.peek() {
            t = t.min(*at);
        }
        if let Some(r) = self.running {
            let rem = self.tasks[r.idx()].remaining;
            if rem != Nanos::MAX {
                t = t.min(self.now.saturating_add(self.stall).saturating_add(rem));
            }
            if let Some(s) = self.slice_end {
                t = t.min(s);
            }
        }
        if self.ticks_on {
            t = t.min(tick_time(self.next_tick, self.scn.machine.hz));
        }
        if let Some(p) = self.policy.next_timer() {
            t = t.min(timer_fires(p.max(self.now), self.scn.machine.timer, self.scn.machine.hz));
        }
        t.min(self.next_sample.max(self.now))
    }

    /// Let time pass to `t`: the running task progresses (after paying any pending overhead).
    fn advance(&mut self, t: Nanos) {
        debug_assert!(t >= self.now);
        let dt = t - self.now;
        if let Some(r) = self.running {
            let paid = dt.min(self.stall);
            self.stall -= paid;
            self.sys.overhead_ns += paid;
            let progress = dt - paid;
            let tr = &mut self.tasks[r.idx()];
            if tr.remaining != Nanos::MAX {
                tr.remaining -= progress.min(tr.remaining);
            }
            tr.cpu += dt;
            self.run_wall += dt;
        } else {
            self.sys.idle_ns += dt;
        }
        self.now = t;
        self.sample_to(t);
    }

    fn sample_to(&mut self, t: Nanos) {
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
        // Clock tick: bill the running task (tick billing), pay the handler, ask tick-driven policies.
        if self.ticks_on && tick_time(self.next_tick, self.scn.machine.hz) <= now {
            self.next_tick += 1;
            self.sys.ticks += 1;
            if self.running.is_some() {
                self.run_ticks += self.tick_len_hint;
                self.stall += self.scn.machine.overhead.tick;
            } else {
                self.sys.overhead_ns += self.scn.machine.overhead.tick;
            }
            if self.policy.tick(self.running, now) {
                self.need_resched = true;
            }
        }
        // The running task's work is done, or its slice is.
        if let Some(r) = self.running {
            if self.tasks[r.idx()].remaining == 0 {
                self.work_done(r);
            } else if self.slice_end.is_some_and(|s| s <= now) {
                self.need_resched = true;
                self.reschedule(Stop::SliceEnd);
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
        // The policy's timer.
        if let Some(p) = self.policy.next_timer() {
            if timer_fires(p, self.scn.machine.timer, self.scn.machine.hz) <= now && self.policy.timer(now) {
                self.need_resched = true;
            }
        }
        self.collect_notifications();
    }

    fn task_event(&mut self, ev: Ev, i: usize) {
        let now = self.now;
        let id = TaskId(i as u32);
        let spec = &self.scn.tasks[i];
        match ev {
            Ev::Start => {
                let p = TaskParams {
                    priority: spec.priority,
                    share: spec.share,
                    latency_tolerance: spec.latency_tolerance,
                };
                self.policy.admit(id, &p, now);
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
                let job = Job { release, deadline: release + p.deadline, exec };
                self.tasks[i].pending.push_back(job);
                self.schedule_release(i);
                if self.tasks[i].state == State::Sleeping {
                    self.next_job(i);
                }
            }
            Ev::Wake => {
                if self.tasks[i].state == State::Sleeping {
                    self.policy.interact(id, now);
                    self.make_runnable(id);
                }
            }
            Ev::StopTime => self.terminate(i),
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
            self.policy.set_time_constraint(id, None, self.now);
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
        };
        self.policy.set_time_constraint(id, Some(c), self.now);
        self.tasks[i].remaining = job.exec;
        self.tasks[i].job = Some(job);
        if self.tasks[i].state == State::Sleeping {
            self.make_runnable(id);
        }
        true
    }

    fn make_runnable(&mut self, id: TaskId) {
        let i = id.idx();
        self.tasks[i].state = State::Runnable;
        // Latency counts from the nominal release for a periodic request, else from the wake-up.
        let from = self.tasks[i].job.as_ref().map_or(self.now, |j| j.release.min(self.now));
        self.tasks[i].ready_since = Some(from);
        self.policy.wake(id, self.now);
        if let Some(r) = self.running {
            if self.policy.wakeup_preempts(r, id, self.now) {
                self.need_resched = true;
            }
        } else {
            self.need_resched = true;
        }
    }

    /// The running task finished its current piece of work.
    fn work_done(&mut self, r: TaskId) {
        let i = r.idx();
        let now = self.now;
        match &self.scn.tasks[i].model {
            Model::Cpu { .. } => {
                self.tasks[i].finish = Some(now);
                self.stop_running(Stop::Blocked);
                self.exit(i);
            }
            Model::Periodic(p) => {
                let job = self.tasks[i].job.take().expect("a running periodic task has a request");
                self.complete_job(i, &job, false);
                if let Estimate::Ewma { alpha, .. } = p.estimate {
                    let a = self.tasks[i].est_avg.unwrap_or(job.exec as f64);
                    self.tasks[i].est_avg = Some(a + alpha * (job.exec as f64 - a));
                }
                self.after_job(i);
            }
            Model::Interactive { .. } => {
                self.stop_running(Stop::Blocked);
                self.tasks[i].state = State::Sleeping;
                self.start_burst(i);
            }
        }
    }

    fn complete_job(&mut self, i: usize, job: &Job, discarded: bool) {
        let now = self.now;
        let t = &mut self.tasks[i];
        let what = if discarded {
            t.discarded += 1;
            t.missed += 1;
            Some("discarded")
        } else if now <= job.deadline {
            t.met += 1;
            None
        } else {
            t.missed += 1;
            Some("finished late")
        };
        if !discarded {
            let _ = t.response.record(now - job.release);
        }
        if t.notified == Some(job.deadline) {
            t.notified = None;
        }
        if let Some(w) = what {
            self.mark(i, w);
        }
    }

    /// After a request of the running periodic task ended: the next one, or sleep, or exit.
    fn after_job(&mut self, i: usize) {
        let id = TaskId(i as u32);
        if self.next_job(i) {
            // A new constraint: the policy decides again.
            self.need_resched = true;
            return;
        }
        self.stop_running(Stop::Blocked);
        self.tasks[i].state = State::Sleeping;
        let Model::Periodic(p) = &self.scn.tasks[i].model else { unreachable!() };
        let spec = &self.scn.tasks[i];
        let k = self.tasks[i].releases;
        let more = p.count.is_none_or(|c| k < c)
            && spec.stop.is_none_or(|s| spec.start + k * p.period < s)
            && spec.start + k * p.period < self.end;
        if !more {
            self.exit(id.idx());
        }
    }

    fn exit(&mut self, i: usize) {
        if self.tasks[i].state == State::Done {
            return;
        }
        self.policy.exit(TaskId(i as u32), self.now);
        self.tasks[i].state = State::Done;
        self.done += 1;
        if self.tasks[i].finish.is_none() {
            self.tasks[i].finish = Some(self.now);
        }
        self.need_resched = true;
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
                self.stop_running(Stop::Blocked);
                self.exit(i);
            }
            _ => self.exit(i),
        }
    }

    /// Take the running task off the CPU, telling the policy what it is billed.
    fn stop_running(&mut self, why: Stop) {
        let Some(r) = self.running.take() else { return };
        if let Some(tr) = &mut self.trace {
            if self.now > self.dispatched_at {
                tr.intervals.push((r.0, self.dispatched_at, self.now));
            }
        }
        let charged = match self.scn.machine.billing {
            Billing::Exact => self.run_wall,
            Billing::Tick => self.run_ticks,
        };
        let t = &mut self.tasks[r.idx()];
        t.charged += charged;
        t.quanta += 1;
        if charged == 0 {
            t.unbilled += 1;
        }
        t.state = if why == Stop::Blocked { State::Sleeping } else { State::Runnable };
        self.policy.stop(r, charged, why, self.now);
        self.slice_end = None;
        self.run_wall = 0;
        self.run_ticks = 0;
    }

    fn collect_notifications(&mut self) {
        self.policy.take_notifications(&mut self.notes);
        for n in std::mem::take(&mut self.notes) {
            self.mark(n.task.idx(), "notified");
            let t = &mut self.tasks[n.task.idx()];
            t.notifications += 1;
            self.sys.notifications += 1;
            let discard = matches!(&self.scn.tasks[n.task.idx()].model,
                Model::Periodic(p) if p.on_miss == OnMiss::Discard);
            if discard && t.job.as_ref().is_some_and(|j| j.deadline == n.deadline) {
                t.notified = Some(n.deadline);
                if self.running == Some(n.task) {
                    self.need_resched = true;
                }
            }
        }
    }

    /// The running task handles a pending notification: it drops the request. Returns whether it
    /// still has work (another request) after that.
    fn handle_notification(&mut self, r: TaskId) -> bool {
        let i = r.idx();
        let Some(d) = self.tasks[i].notified else { return true };
        let Some(job) = self.tasks[i].job.take_if(|j| j.deadline == d) else {
            self.tasks[i].notified = None;
            return true;
        };
        self.complete_job(i, &job, true);
        self.tasks[i].notified = None;
        self.after_job(i);
        self.running.is_some()
    }

    /// Stop the running task (if any) for `why` and let the policy choose, until a choice sticks.
    fn reschedule(&mut self, why: Stop) {
        self.need_resched = false;
        if self.running.is_some() {
            self.stop_running(why);
        }
        for _ in 0..MAX_DECISIONS_PER_INSTANT {
            self.sys.decisions += 1;
            let d = self.policy.pick_next(self.now);
            self.collect_notifications();
            let Some(Dispatch { task, slice }) = d else { return };
            self.dispatch(task, slice);
            if self.tasks[task.idx()].notified.is_some() {
                // The signal is handled first thing: the request is dropped; maybe the task sleeps.
                self.handle_notification(task);
            }
            if self.running.is_some() && !self.need_resched {
                return;
            }
            self.need_resched = false;
            if self.running.is_some() {
                self.stop_running(Stop::Preempted);
            }
        }
        panic!(
            "policy `{}` made {MAX_DECISIONS_PER_INSTANT} decisions at t={} ns without settling",
            self.policy.name(),
            self.now
        );
    }

    fn dispatch(&mut self, t: TaskId, slice: Option<Nanos>) {
        if self.debug {
            eprintln!(
                "{:>12} dispatch {} slice {:?} job {:?} notified {:?}",
                self.now,
                self.scn.tasks[t.idx()].name,
                slice,
                self.tasks[t.idx()].job,
                self.tasks[t.idx()].notified
            );
        }
        let m = &self.scn.machine;
        let tr = &mut self.tasks[t.idx()];
        debug_assert_eq!(tr.state, State::Runnable, "policy picked a task that is not runnable");
        tr.state = State::Running;
        if let Some(since) = tr.ready_since.take() {
            let _ = tr.latency.record(self.now - since);
        }
        self.stall += m.overhead.decision;
        if self.last_ran != Some(t) {
            self.sys.switches += 1;
            self.stall += m.overhead.switch;
            let ws = self.scn.tasks[t.idx()].working_set;
            if m.overhead.cache_bytes > 0 && m.overhead.bandwidth > 0 && ws > 0 {
                let bytes = ws.min(m.overhead.cache_bytes) as u128;
                self.stall += (bytes * 1_000_000_000 / m.overhead.bandwidth as u128) as Nanos;
            }
        }
        self.last_ran = Some(t);
        self.running = Some(t);
        self.dispatched_at = self.now;
        self.slice_end = slice.map(|s| timer_fires(self.now.saturating_add(s), m.timer, m.hz));
    }

    /// Build the result and the trace recorded (empty unless [`Sim::record_trace`] was called).
    pub fn finish_with_trace(mut self) -> (SimResult, TraceLog) {
        if self.running.is_some() {
            self.stop_running(Stop::Preempted);
        }
        let trace = self.trace.take().unwrap_or_default();
        (self.finish(), trace)
    }

    /// Build the result (call after the run).
    pub fn finish(mut self) -> SimResult {
        if self.running.is_some() {
            self.stop_running(Stop::Preempted);
        }
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
                        met: t.met,
                        missed: t.missed,
                        discarded: t.discarded,
                        notifications: t.notifications,
                        finish: t.finish,
                        latency: &t.latency,
                        response: &t.response,
                    },
                )
            })
            .collect();
        let counters = self.policy.counters().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        SimResult {
            scenario: self.scn.name.clone(),
            policy: self.policy.name().to_string(),
            duration_ns: duration,
            seed: self.scn.machine.seed,
            tasks,
            system: self.sys,
            counters,
            timeline: self.timeline,
        }
    }
}

/// What the engine measured of one task (input to [`TaskResult::new`]).
pub struct TaskMetrics<'a> {
    /// CPU time it ran (wall time on the CPU, overheads included).
    pub cpu: Nanos,
    /// CPU time the policy billed it.
    pub charged: Nanos,
    /// Times it was dispatched.
    pub quanta: u64,
    /// Dispatches billed nothing.
    pub unbilled: u64,
    /// Requests completed by their deadline.
    pub met: u64,
    /// Requests late or dropped.
    pub missed: u64,
    /// Requests dropped after a notification.
    pub discarded: u64,
    /// Notifications received.
    pub notifications: u64,
    /// When it finished.
    pub finish: Option<Nanos>,
    /// Ready-to-running latencies.
    pub latency: &'a Histogram<u64>,
    /// Release-to-completion times of requests.
    pub response: &'a Histogram<u64>,
}

/// Whether an exec distribution has a spread (used by reports).
pub fn is_variable(e: &Exec) -> bool {
    !matches!(e, Exec::Fixed(_))
}
