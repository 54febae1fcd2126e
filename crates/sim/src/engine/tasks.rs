//! The scenario's tasks as the simulator runs them. What each does is its [`workload::Stream`],
//! the one definition hourglass's real threads run too: when it starts, when its requests are
//! released and what they need, its interactions, what it tells the scheduler. Here those become
//! events in time, requests queue behind a late one, and each request's outcome is counted.
//!
//! Real-time tasks follow SMART's applications (§6.2.2): at each request they set a time constraint
//! (deadline, cpu-estimate, notify-time, period); a notification is handled when the task next runs,
//! as a signal would be, and a task that discards drops the request then. A task with `on_miss =
//! "abort"` loses an unfinished request at its deadline, whatever the policy does.

use std::collections::VecDeque;

use sched::{CpuId, Nanos, State, Stop, TaskId};
use workload::{Ended, LateRule, Model, Planned, Stream};

use super::Sim;

/// What became of a request (`--jobs`, and the trace's JobEnd records).
pub use trace::Outcome;

/// A task's own timer event.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Ev {
    Start,
    Release,
    Wake,
    StopTime,
    /// The deadline of a request of an `on_miss = "abort"` task.
    Abort,
}

/// Where a task is in its life; while it lives, the core says whether it is blocked, runnable or
/// running.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Life {
    NotStarted,
    Live,
    Done,
}

/// A request of a periodic task, released.
#[derive(Clone, Debug)]
pub(crate) struct Job {
    pub(crate) planned: Planned,
    /// When it was released (with jitter and the timer's resolution).
    pub(super) released: Nanos,
    /// The CPU it needs (its draw).
    pub(super) exec: Nanos,
    /// When it first ran (MAX: not yet), where it last ran (MAX: nowhere yet), and how often it was
    /// taken off a CPU unfinished.
    pub(super) start: Nanos,
    pub(super) cpu: CpuId,
    pub(super) preemptions: u32,
}

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

/// Why a request ended without being finished.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Dropped {
    No,
    /// The task dropped it when notified (`on_miss = "discard"`).
    Discarded,
    /// Its deadline passed (`on_miss = "abort"`).
    Aborted,
}

/// One task as it runs.
pub(super) struct TaskRt<'s> {
    pub(super) stream: Stream<'s>,
    pub(super) life: Life,
    /// What it does with a late request (periodic tasks).
    late: LateRule,
    /// CPU still needed by the current piece of work (request, burst, or all the work); MAX = endless.
    pub(super) remaining: Nanos,
    /// Current request of a periodic task, the ones released while it was busy, the next one planned
    /// (its release event pending), and how many were released.
    pub(super) job: Option<Job>,
    pending: VecDeque<Job>,
    next: Option<Planned>,
    released: u64,
    /// A notification to handle when it next runs (deadline it concerns).
    pub(super) notified: Option<Nanos>,
    /// When it became runnable and has not run since (for latency).
    pub(super) ready_since: Option<Nanos>,
    /// The CPU executing it (from its dispatch until it stops).
    pub(super) on_cpu: Option<CpuId>,
}

impl<'s> TaskRt<'s> {
    pub(super) fn new(stream: Stream<'s>, notifies: bool) -> Self {
        let late = match stream.spec().model {
            // The simulated application learns of a miss only from the policy.
            Model::Periodic(_) => stream.late_rule(notifies, false),
            _ => LateRule::Finish,
        };
        TaskRt {
            stream,
            life: Life::NotStarted,
            late,
            remaining: 0,
            job: None,
            pending: VecDeque::new(),
            next: None,
            released: 0,
            notified: None,
            ready_since: None,
            on_cpu: None,
        }
    }

    /// Requests released and not ended (the current one and those waiting behind it).
    pub(super) fn open_jobs(&mut self) -> impl Iterator<Item = Job> + '_ {
        self.job.take().into_iter().chain(self.pending.drain(..))
    }
}

impl Sim<'_> {
    fn state(&self, i: usize) -> State {
        self.core.view().state(TaskId(i as u32))
    }

    pub(super) fn task_event(&mut self, ev: Ev, i: usize) {
        let now = self.now;
        let id = TaskId(i as u32);
        match ev {
            Ev::Start => {
                self.core.admit(id, &self.params[i], now);
                self.tasks[i].life = Life::Live;
                match &self.scn.tasks[i].model {
                    Model::Cpu { .. } => {
                        self.tasks[i].remaining = self.tasks[i].stream.work().unwrap_or(Nanos::MAX);
                        self.make_runnable(id);
                    }
                    Model::Periodic(_) => self.schedule_release(i),
                    Model::Interactive { .. } => self.start_burst(i),
                }
            }
            Ev::Release => self.release(i),
            Ev::Wake => {
                if self.state(i) == State::Blocked {
                    self.core.interact(id, now);
                    self.make_runnable(id);
                }
            }
            Ev::StopTime => self.terminate(i),
            Ev::Abort => self.abort(i),
        }
    }

    /// A request of periodic task `i` is released: it draws what it needs and waits behind the
    /// requests before it.
    fn release(&mut self, i: usize) {
        let now = self.now;
        let planned = self.tasks[i].next.take().expect("a release event has its request planned");
        if self.tasks[i].life == Life::Done {
            return;
        }
        let t = &mut self.tasks[i];
        let exec = t.stream.exec();
        t.released += 1;
        self.metrics.sys.jobs += 1;
        let job = Job { planned, released: now, exec, start: Nanos::MAX, cpu: CpuId::MAX, preemptions: 0 };
        if t.late == LateRule::DropAtDeadline {
            self.push(planned.deadline, Ev::Abort, i as u32);
        }
        if self.trace.is_some() {
            self.emit(trace::Record::Release {
                task: i as u32,
                job: planned.index as u32,
                at: now,
                deadline: Some(planned.deadline),
            });
        }
        self.tasks[i].pending.push_back(job);
        self.schedule_release(i);
        if self.state(i) == State::Blocked {
            self.next_job(i);
        }
    }

    /// The deadline of a request of an `on_miss = "abort"` task came: if the request is unfinished,
    /// it is dropped (SimSo's `abort_on_miss`).
    fn abort(&mut self, i: usize) {
        let now = self.now;
        if self.tasks[i].life == Life::Done {
            return;
        }
        if let Some(k) = self.tasks[i].pending.iter().position(|j| j.planned.deadline == now) {
            let job = self.tasks[i].pending.remove(k).expect("found");
            self.complete_job(i, &job, Dropped::Aborted);
            return;
        }
        let Some(job) = self.tasks[i].job.take_if(|j| j.planned.deadline == now) else { return };
        self.complete_job(i, &job, Dropped::Aborted);
        match self.state(i) {
            State::Running(_) => {
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

    /// Plans the next release of a periodic task, if it has one.
    fn schedule_release(&mut self, i: usize) {
        if !matches!(self.scn.tasks[i].model, Model::Periodic(_)) {
            return;
        }
        match self.tasks[i].stream.next_request(self.end) {
            Ok(p) => {
                let at = self.timer_fires(p.at, i);
                self.tasks[i].next = Some(p);
                self.push(at, Ev::Release, i as u32);
            }
            Err(Ended::Count) => {
                if self.state(i) == State::Blocked && self.tasks[i].pending.is_empty() {
                    self.terminate(i);
                }
            }
            Err(Ended::Window) => {}
        }
    }

    /// An interactive task thinks, then its user's next event wakes it with a burst of work.
    fn start_burst(&mut self, i: usize) {
        let Some(next) = self.tasks[i].stream.next_interaction() else {
            self.terminate(i);
            return;
        };
        let at = self.timer_fires(self.now.saturating_add(next.wait), i);
        self.tasks[i].remaining = next.burst;
        self.push(at, Ev::Wake, i as u32);
    }

    /// A periodic task takes its next pending request, or goes to sleep. Returns whether it has work.
    pub(super) fn next_job(&mut self, i: usize) -> bool {
        let id = TaskId(i as u32);
        let Some(job) = self.tasks[i].pending.pop_front() else {
            self.tasks[i].job = None;
            self.core.set_time_constraint(id, None, self.now);
            return false;
        };
        let c = self.tasks[i].stream.constraint(&job.planned, job.exec, job.released);
        self.core.set_time_constraint(id, Some(c), self.now);
        self.tasks[i].remaining = job.exec;
        self.tasks[i].job = Some(job);
        match self.state(i) {
            State::Blocked => self.make_runnable(id),
            State::Running(_) => {
                let c = self.tasks[i].on_cpu.expect("running on a CPU") as usize;
                self.arm(c);
            }
            _ => {}
        }
        true
    }

    pub(super) fn make_runnable(&mut self, id: TaskId) {
        let i = id.idx();
        // Latency counts from the nominal release for a periodic request, else from the wake-up.
        let from = self.tasks[i].job.as_ref().map_or(self.now, |j| j.planned.nominal.min(self.now));
        self.tasks[i].ready_since = Some(from);
        // Where it goes is decided at the end of the instant, when every event of it is known.
        self.core.wake(id, self.now);
        if self.trace.is_some() {
            self.emit(trace::Record::Wake { task: i as u32, cpu: None, at: self.now });
        }
    }

    /// The running task finished its current piece of work.
    pub(super) fn work_done(&mut self, r: TaskId) {
        let i = r.idx();
        match &self.scn.tasks[i].model {
            Model::Cpu { .. } => {
                self.metrics.tasks[i].finish = Some(self.now);
                self.stop_running(i, Stop::Blocked);
                self.exit(i);
            }
            Model::Periodic(_) => {
                let job = self.tasks[i].job.take().expect("a running periodic task has a request");
                self.complete_job(i, &job, Dropped::No);
                self.tasks[i].stream.observe(job.exec);
                self.after_job(i);
            }
            Model::Interactive { .. } => {
                self.stop_running(i, Stop::Blocked);
                self.start_burst(i);
            }
        }
    }

    pub(super) fn complete_job(&mut self, i: usize, job: &Job, dropped: Dropped) {
        let outcome = self.metrics.job_ended(i, job, dropped, self.now);
        let t = &mut self.tasks[i];
        if t.notified == Some(job.planned.deadline) {
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

    pub(super) fn record_job(&mut self, i: usize, job: &Job, finish: Option<Nanos>, outcome: Outcome) {
        if self.trace.is_some() {
            let at = finish.unwrap_or(self.now);
            self.emit(trace::Record::JobEnd { task: i as u32, job: job.planned.index as u32, at, outcome });
        }
        if let Some(v) = &mut self.jobs {
            v.push(JobRecord {
                task: self.scn.tasks[i].name.clone(),
                job: job.planned.index,
                cpu: (job.cpu != CpuId::MAX).then_some(job.cpu),
                release_ns: job.released,
                start_ns: (job.start != Nanos::MAX).then_some(job.start),
                finish_ns: finish,
                deadline_ns: job.planned.deadline,
                exec_ns: job.exec,
                outcome,
                preemptions: job.preemptions,
            });
        }
    }

    /// After a request of the running periodic task ended: the next one, or sleep, or exit.
    pub(super) fn after_job(&mut self, i: usize) {
        if self.next_job(i) {
            // A new constraint: the policy decides again.
            let c = self.tasks[i].on_cpu.expect("running on a CPU");
            self.core.request(c);
            return;
        }
        self.stop_running(i, Stop::Blocked);
        let t = &self.tasks[i];
        if !t.stream.more_after(t.released, self.end) {
            self.exit(i);
        }
    }

    pub(super) fn exit(&mut self, i: usize) {
        if self.tasks[i].life == Life::Done {
            return;
        }
        // A task gone can change what the policy prefers: the core has it decide again wherever a
        // task runs.
        self.core.exit(TaskId(i as u32), self.now);
        self.tasks[i].life = Life::Done;
        self.done += 1;
        let m = &mut self.metrics.tasks[i];
        if m.finish.is_none() {
            m.finish = Some(self.now);
        }
    }

    /// The task reached its stop time, or ran out of requests while asleep.
    pub(super) fn terminate(&mut self, i: usize) {
        match (self.tasks[i].life, self.state(i)) {
            (Life::Done, _) => {}
            (Life::NotStarted, _) => {
                self.tasks[i].life = Life::Done;
                self.done += 1;
            }
            (Life::Live, State::Running(_)) => {
                self.stop_running(i, Stop::Blocked);
                self.exit(i);
            }
            (Life::Live, _) => self.exit(i),
        }
    }

    #[inline]
    pub(super) fn collect_notifications(&mut self) {
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
            self.metrics.tasks[n.task.idx()].notifications += 1;
            self.metrics.sys.notifications += 1;
            let t = &mut self.tasks[n.task.idx()];
            if t.late == LateRule::DropWhenNotified
                && t.job.as_ref().is_some_and(|j| j.planned.deadline == n.deadline)
            {
                t.notified = Some(n.deadline);
                if let Some(c) = t.on_cpu {
                    self.core.request(c);
                }
            }
        }
    }

    /// Task `r`, just dispatched, handles what is pending: a notification (it drops the request), or,
    /// if its request was aborted while it waited, the lack of work (it blocks at once).
    pub(super) fn handle_pending(&mut self, r: TaskId) {
        let i = r.idx();
        if let Some(d) = self.tasks[i].notified {
            match self.tasks[i].job.take_if(|j| j.planned.deadline == d) {
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
}
