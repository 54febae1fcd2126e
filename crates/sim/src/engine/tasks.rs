//! The scenario's tasks as the simulator runs them. What each does is its [`workload::Stream`],
//! the one definition hourglass's real threads run too: when it starts, when its requests are
//! released and what they need, its interactions, what it tells the scheduler. Here those become
//! events in time, requests queue behind a late one, and each request's outcome is counted.
//!
//! Real-time tasks follow SMART's applications (§6.2.2): at each request they set a time constraint
//! (deadline, cpu-estimate, notify-time, period); a notification is handled when the task next runs,
//! as a signal would be, and a task that discards drops the request then. A task with `on_miss =
//! "abort"` loses an unfinished request at its deadline, whatever the policy does.
//!
//! Tasks that work together (the dissertation's applications, `scenarios/apps/`):
//! * A **server** (`model = "server"`, the X server) does the work its clients hand it, one request at
//!   a time in the order they came, and sleeps when it has none. A client (a task with `server`)
//!   hands over each request once its own work is done; the request is done, and counted (its
//!   deadline, its latency), when the server has done it. A client with `wait = true` sleeps until
//!   then; one without goes on with its next request (X requests are asynchronous).
//! * A **player** (`model = "player"`, the IMS player of §3.5 and §6.4) takes its frames in order:
//!   it drops a frame its estimate says it would show late (`discard = "estimate"`), sleeps rather than
//!   show one early (`pace`), or gives each frame a time constraint and drops one it is notified of
//!   before it began (`discard = "notified"`); a frame is shown when its work (and its server's, if it
//!   has one) is done, and classed on time, early or late against its window.

use std::collections::VecDeque;

use sched::{CpuId, Nanos, State, Stop, TaskId};
use workload::{Adapt, Discard, Ended, LateRule, Model, Planned, Stream};

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
    /// A player's sleep before its next frame ends.
    Resume,
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
    /// The work it hands its server when its own is done (0: the task has no server).
    pub(super) server_exec: Nanos,
}

/// Work a client handed a server: the client, its request (none for an interactive task's burst),
/// when the request began (its latency counts from there), the server's CPU.
pub(super) struct ServerReq {
    client: usize,
    job: Option<Job>,
    from: Nanos,
    exec: Nanos,
}

impl ServerReq {
    /// Its client and request, as a request open at the end of the run.
    pub(super) fn into_open(self) -> (usize, Option<Job>) {
        (self.client, self.job)
    }
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
    /// A server's requests waiting, and the one it serves.
    queue: VecDeque<ServerReq>,
    serving: Option<ServerReq>,
    /// A client that waits for its server (`wait = true`) while its request is there.
    awaiting: bool,
    /// When an interactive task's user event came (its latency through a server counts from there);
    /// when a `forkwait` task's iteration began.
    event_at: Nanos,
    /// A player sleeps before its current frame (`pace`, or a frame not captured yet).
    sleeping: bool,
    /// A `forkwait` task's current piece is a child's (else its parent's fork), and ends an iteration
    /// (whose time counts from `event_at`).
    piece_child: bool,
    piece_last: bool,
    /// An adapting player (`adapt`): it shows one frame of every `rate`, the next at or after
    /// `skip_to`; of the frames it took since it last decided, how many, and how many were late.
    rate: u64,
    skip_to: u64,
    taken: u32,
    late_taken: u32,
    /// A periodic task spins on the CPU until its next request (`busy_wait`), and release events of
    /// its timer still pending for requests the spin released itself (to be ignored).
    spinning: bool,
    stale_releases: u32,
    /// The release event of its next request is in the queue (under `linux-2.4` it is put there only
    /// when the task goes to sleep: the sleep counts from then).
    armed: bool,
    /// Its `busy_wait` (0: none), and whether its timer is `linux-2.4`: read on every request, kept
    /// here rather than looked up in the scenario each time.
    busy_wait: Nanos,
    linux24: bool,
}

/// Frames an adapting player takes between two decisions on its rate.
const ADAPT_WINDOW: u32 = 10;
/// The fewest frames an adapting player shows: one in this many.
const ADAPT_MAX_RATE: u64 = 64;

impl<'s> TaskRt<'s> {
    pub(super) fn new(stream: Stream<'s>, notifies: bool, machine_timer: workload::TimerKind) -> Self {
        let busy_wait = match &stream.spec().model {
            Model::Periodic(p) => p.busy_wait,
            _ => 0,
        };
        let linux24 = stream.spec().timer.unwrap_or(machine_timer) == workload::TimerKind::Linux24;
        let late = match &stream.spec().model {
            // The simulated application learns of a miss only from the policy.
            Model::Periodic(_) => stream.late_rule(notifies, false),
            Model::Player(p) if p.discard == Discard::Notified && notifies => LateRule::DropWhenNotified,
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
            queue: VecDeque::new(),
            serving: None,
            awaiting: false,
            event_at: 0,
            sleeping: false,
            piece_child: false,
            piece_last: false,
            rate: 1,
            skip_to: 0,
            taken: 0,
            late_taken: 0,
            spinning: false,
            stale_releases: 0,
            armed: false,
            busy_wait,
            linux24,
        }
    }

    /// Requests released and not ended (the current one and those waiting behind it).
    pub(super) fn open_jobs(&mut self) -> impl Iterator<Item = Job> + '_ {
        self.job.take().into_iter().chain(self.pending.drain(..))
    }

    /// A server's requests not done (the one it serves and those waiting).
    pub(super) fn open_requests(&mut self) -> impl Iterator<Item = ServerReq> + '_ {
        self.serving.take().into_iter().chain(self.queue.drain(..))
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
                    Model::ForkWait { .. } => self.forkwait_next(i),
                    // A server sleeps until a client hands it work.
                    Model::Server => {}
                    Model::Player(_) => self.player_next(i),
                }
            }
            Ev::Release if self.tasks[i].stale_releases > 0 => self.tasks[i].stale_releases -= 1,
            Ev::Release if self.tasks[i].spinning => {
                self.tasks[i].armed = false;
                self.end_spin(i);
            }
            Ev::Release => {
                self.tasks[i].armed = false;
                self.release(i);
            }
            Ev::Wake => {
                if self.state(i) == State::Blocked && self.tasks[i].life == Life::Live {
                    self.tasks[i].event_at = now;
                    self.core.interact(id, now);
                    self.make_runnable(id);
                }
            }
            Ev::Resume => {
                if self.tasks[i].sleeping && self.tasks[i].life == Life::Live {
                    self.player_begin(i);
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
        let server_exec = t.stream.server_exec();
        t.released += 1;
        self.metrics.sys.jobs += 1;
        let job = Job {
            planned,
            released: now,
            exec,
            start: Nanos::MAX,
            cpu: CpuId::MAX,
            preemptions: 0,
            server_exec,
        };
        // Released at or after its deadline (a tick-granular timer fired late): under `on_miss =
        // "abort"` it is dropped at once, without running (a frame woken too late to be shown).
        let too_late = t.late == LateRule::DropAtDeadline && now >= planned.deadline;
        if t.late == LateRule::DropAtDeadline && !too_late {
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
        if too_late {
            self.complete_job(i, &job, Dropped::Aborted);
            self.schedule_release(i);
            return;
        }
        self.tasks[i].pending.push_back(job);
        self.schedule_release(i);
        if self.state(i) == State::Blocked && !self.tasks[i].awaiting {
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

    /// A spin ended before the release event of its request, if one is queued: that event is to be
    /// ignored when it comes.
    fn end_spin_early(&mut self, i: usize) {
        if std::mem::take(&mut self.tasks[i].armed) {
            self.tasks[i].stale_releases += 1;
        }
        self.end_spin(i);
    }

    /// A periodic task's spin ends, by its own CPU (it spun until its request) or by its timer's
    /// release event (it was preempted while spinning): the request is released now and taken.
    fn end_spin(&mut self, i: usize) {
        self.tasks[i].spinning = false;
        if self.tasks[i].life != Life::Live {
            return;
        }
        if let Some(c) = self.tasks[i].on_cpu {
            self.sync(c as usize);
        }
        self.release(i);
        match self.state(i) {
            State::Running(_) => self.after_job(i),
            // Preempted while spinning: it takes the request when it runs again (a blocked task was
            // given it by `release`).
            State::Runnable if self.tasks[i].job.is_none() => {
                self.next_job(i);
            }
            _ => {}
        }
    }

    /// Whether periodic task `i`, running and done with its requests, spins until its next one rather
    /// than sleeping (`busy_wait`), and if so starts (or, dispatched again after a preemption, goes on
    /// with) the spin; a spin whose request's time passed while it was preempted ends at once.
    fn spin_until_next(&mut self, i: usize) -> bool {
        let spinning = std::mem::take(&mut self.tasks[i].spinning);
        let busy_wait = self.tasks[i].busy_wait;
        let Some(next) = self.tasks[i].next.as_ref() else { return false };
        if busy_wait == 0 || self.tasks[i].life != Life::Live {
            return false;
        }
        let wait = next.at.saturating_sub(self.now);
        if wait == 0 && spinning {
            // Its request's time came while it waited for the CPU: released now.
            self.end_spin_early(i);
            return true;
        }
        if wait == 0 || wait > busy_wait {
            return false;
        }
        self.tasks[i].spinning = true;
        self.tasks[i].remaining = wait;
        let c = self.tasks[i].on_cpu.expect("running on a CPU") as usize;
        self.arm(c);
        true
    }

    /// A periodic task under `linux-2.4` goes to sleep until its next request: the sleep's end counts
    /// from now.
    fn arm_sleep(&mut self, i: usize) {
        if self.tasks[i].armed || !self.tasks[i].linux24 {
            return;
        }
        let Some(at) = self.tasks[i].next.as_ref().map(|p| p.at) else { return };
        let fires = self.sleep_ends(at, i);
        self.tasks[i].armed = true;
        self.push(fires, Ev::Release, i as u32);
    }

    /// Plans the next release of a periodic task, if it has one.
    fn schedule_release(&mut self, i: usize) {
        if !matches!(self.scn.tasks[i].model, Model::Periodic(_)) {
            return;
        }
        match self.tasks[i].stream.next_request(self.end) {
            Ok(p) => {
                let at = p.at;
                self.tasks[i].next = Some(p);
                // Linux 2.4's sleep counts from when the task goes to sleep (`arm_sleep`), unless
                // it is asleep already.
                let busy = self.tasks[i].job.is_some() || !self.tasks[i].pending.is_empty();
                if !self.tasks[i].linux24 || !busy {
                    let fires = self.sleep_ends(at, i);
                    self.tasks[i].armed = true;
                    self.push(fires, Ev::Release, i as u32);
                }
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
            if self.tasks[i].life == Life::Live {
                self.terminate(i);
            }
            return;
        };
        let at = self.sleep_ends(self.now.saturating_add(next.wait), i);
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
        // A conventional application (`time_constraint = false`) tells the scheduler nothing.
        let told = matches!(&self.scn.tasks[i].model, Model::Periodic(p) if p.time_constraint);
        let c = told.then(|| self.tasks[i].stream.constraint(&job.planned, job.exec, job.released));
        self.core.set_time_constraint(id, c, self.now);
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
        let spec = &self.scn.tasks[i];
        let waits = spec.send.as_ref().is_some_and(|c| c.wait);
        match &spec.model {
            Model::Cpu { .. } => {
                self.metrics.tasks[i].finish = Some(self.now);
                self.stop_running(i, Stop::Blocked);
                self.exit(i);
            }
            Model::Periodic(_) if self.tasks[i].spinning => {
                // Spun until its request's time: released now.
                self.end_spin_early(i);
            }
            Model::Periodic(_) => {
                let job = self.tasks[i].job.take().expect("a running periodic task has a request");
                self.tasks[i].stream.observe(job.exec);
                if spec.send.is_none() {
                    self.complete_job(i, &job, Dropped::No);
                    self.after_job(i);
                    return;
                }
                let from = job.planned.nominal;
                if waits {
                    self.core.set_time_constraint(r, None, self.now);
                    self.stop_running(i, Stop::Blocked);
                    self.tasks[i].awaiting = true;
                    self.hand_over(i, Some(job), from);
                } else {
                    self.hand_over(i, Some(job), from);
                    self.after_job(i);
                }
            }
            Model::Interactive { .. } => {
                self.stop_running(i, Stop::Blocked);
                if spec.send.is_some() {
                    let from = self.tasks[i].event_at;
                    self.tasks[i].awaiting = waits;
                    self.hand_over(i, None, from);
                }
                if !self.tasks[i].awaiting {
                    self.start_burst(i);
                }
            }
            Model::ForkWait { .. } if !self.tasks[i].piece_child => {
                // The parent has forked and sleeps in wait(): its child, a new process, joins the
                // queue behind those waiting (a task giving way at user level, not one woken from a
                // sleep).
                let c = self.tasks[i].on_cpu.expect("running on a CPU");
                self.stop_running(i, Stop::Yielded);
                let piece = self.tasks[i].stream.next_piece().expect("a fork is followed by its child");
                let t = &mut self.tasks[i];
                (t.piece_child, t.piece_last, t.remaining) = (piece.child, piece.last, piece.cpu);
                t.ready_since = Some(self.now);
                self.core.request(c);
            }
            Model::ForkWait { .. } => {
                // The child exits and wakes its parent from its sleep in wait().
                self.stop_running(i, Stop::Blocked);
                if self.tasks[i].piece_last {
                    let took = self.now - self.tasks[i].event_at;
                    self.metrics.tasks[i].response.push(took);
                }
                self.forkwait_next(i);
            }
            Model::Server => {
                let req = self.tasks[i].serving.take().expect("a running server serves a request");
                self.request_done(req);
                self.serve_next(i);
            }
            Model::Player(_) => {
                let job = self.tasks[i].job.take().expect("a running player has a frame");
                if spec.send.is_none() {
                    self.show_frame(i, &job);
                    self.player_next(i);
                    return;
                }
                let from = job.planned.nominal;
                if waits {
                    self.stop_running(i, Stop::Blocked);
                    self.tasks[i].awaiting = true;
                    self.hand_over(i, Some(job), from);
                } else {
                    self.hand_over(i, Some(job), from);
                    self.player_next(i);
                }
            }
        }
    }

    // ----- servers and their clients -----

    /// Client `i` hands its server the work of request `job` (none for an interactive burst), which
    /// began at `from`.
    fn hand_over(&mut self, i: usize, job: Option<Job>, from: Nanos) {
        let call = self.scn.tasks[i].send.as_ref().expect("a client has a server");
        let exec = match &job {
            Some(j) => j.server_exec,
            None => self.tasks[i].stream.server_exec(),
        };
        let s = call.to_index;
        if self.tasks[s].life != Life::Live {
            // The server has not started or has gone: the work is lost with it, as the client's
            // request (counted when the run ends, or dropped now).
            if let Some(j) = job {
                self.complete_job(i, &j, Dropped::Discarded);
            }
            self.client_free(i);
            return;
        }
        self.tasks[s].queue.push_back(ServerReq { client: i, job, from, exec: exec.max(1) });
        if self.tasks[s].serving.is_none() {
            self.serve_next(s);
        }
    }

    /// Server `s` takes its next request, or sleeps.
    fn serve_next(&mut self, s: usize) {
        let Some(req) = self.tasks[s].queue.pop_front() else {
            self.tasks[s].serving = None;
            if matches!(self.state(s), State::Running(_)) {
                self.stop_running(s, Stop::Blocked);
            }
            return;
        };
        self.tasks[s].remaining = req.exec;
        self.tasks[s].serving = Some(req);
        match self.state(s) {
            State::Blocked => self.make_runnable(TaskId(s as u32)),
            State::Running(_) => {
                let c = self.tasks[s].on_cpu.expect("running on a CPU") as usize;
                self.arm(c);
            }
            _ => {}
        }
    }

    /// A server has done `req`: the client's request is done now.
    fn request_done(&mut self, req: ServerReq) {
        let c = req.client;
        match req.job {
            Some(job) if matches!(self.scn.tasks[c].model, Model::Player(_)) => self.show_frame(c, &job),
            Some(job) => self.complete_job(c, &job, Dropped::No),
            None => self.metrics.tasks[c].response.push(self.now - req.from),
        }
        self.client_free(c);
    }

    /// Client `c`'s request left it (done, or lost with its server): a client waiting for it goes on.
    fn client_free(&mut self, c: usize) {
        if !std::mem::take(&mut self.tasks[c].awaiting) || self.tasks[c].life != Life::Live {
            return;
        }
        match &self.scn.tasks[c].model {
            Model::Periodic(_) => {
                if !self.next_job(c) {
                    self.arm_sleep(c);
                    let t = &mut self.tasks[c];
                    if !t.stream.more_after(t.released, self.end) {
                        self.exit(c);
                    }
                }
            }
            Model::Interactive { .. } => self.start_burst(c),
            Model::Player(_) => self.player_next(c),
            Model::Cpu { .. } | Model::Server | Model::ForkWait { .. } => {}
        }
    }

    /// A `forkwait` task's next piece of work (a fork, or a child), runnable at once; or, after its
    /// last iteration, it leaves.
    fn forkwait_next(&mut self, i: usize) {
        let Some(piece) = self.tasks[i].stream.next_piece() else {
            self.terminate(i);
            return;
        };
        let t = &mut self.tasks[i];
        if piece.first {
            t.event_at = self.now;
        }
        (t.piece_child, t.piece_last, t.remaining) = (piece.child, piece.last, piece.cpu);
        self.make_runnable(TaskId(i as u32));
    }

    // ----- players -----

    /// Player `i` is free for its next frame: it drops those it expects to show late (`discard =
    /// "estimate"`), then sleeps until its next frame is due (`pace`), or begins it, or, with no frame
    /// left, leaves.
    pub(super) fn player_next(&mut self, i: usize) {
        let Model::Player(p) = &self.scn.tasks[i].model else { unreachable!("a player") };
        let now = self.now;
        self.player_adapt(i);
        loop {
            let t = &mut self.tasks[i];
            let (mut planned, exec, server_exec) = match t.stream.next_frame(self.end) {
                Ok(f) => f,
                Err(_) => {
                    if matches!(self.state(i), State::Running(_)) {
                        self.stop_running(i, Stop::Blocked);
                    }
                    self.exit(i);
                    return;
                }
            };
            t.released += 1;
            self.metrics.sys.jobs += 1;
            // Adapting: one frame in `rate`, wanted `rate` periods after its timestamp.
            let skipped = p.adapt != Adapt::None && planned.index < t.skip_to;
            if p.adapt != Adapt::None {
                planned.at = planned.nominal.saturating_add(t.rate.saturating_mul(p.period));
                planned.deadline = planned.at.saturating_add(p.window);
            }
            let estimate = t.stream.frame_estimate();
            let wanted = planned.deadline - p.window;
            let job = Job {
                planned,
                released: now,
                exec,
                start: Nanos::MAX,
                cpu: CpuId::MAX,
                preemptions: 0,
                server_exec,
            };
            if self.trace.is_some() {
                self.emit(trace::Record::Release {
                    task: i as u32,
                    job: planned.index as u32,
                    at: now,
                    deadline: Some(planned.deadline),
                });
            }
            // From a device's ring: a frame that `ring` newer ones have overwritten is lost; with no
            // slot, one captured before the player asked.
            let lost = match p.ring {
                None => false,
                Some(0) => planned.nominal < now,
                Some(n) => planned.nominal.saturating_add(n.saturating_mul(p.period)) <= now,
            };
            if skipped {
                self.complete_job(i, &job, Dropped::Discarded);
                continue;
            }
            if lost || (p.discard == Discard::Estimate && now.saturating_add(estimate) > planned.deadline) {
                self.complete_job(i, &job, Dropped::Discarded);
                self.player_took(i, true);
                continue;
            }
            let t = &mut self.tasks[i];
            t.skip_to = planned.index.saturating_add(t.rate);
            t.job = Some(job);
            let paced = p.pace && now.saturating_add(estimate) < wanted.saturating_sub(p.window);
            // Not captured yet: the device's interrupt wakes the player when it is (no timer).
            let capture = (p.ring.is_some() && planned.nominal > now).then_some(planned.nominal);
            if paced || capture.is_some() {
                let pace_at = if paced { self.sleep_ends(wanted - estimate, i) } else { now };
                let at = pace_at.max(capture.unwrap_or(now));
                self.tasks[i].sleeping = true;
                self.push(at, Ev::Resume, i as u32);
                if matches!(self.state(i), State::Running(_)) {
                    self.core.set_time_constraint(TaskId(i as u32), None, now);
                    self.stop_running(i, Stop::Blocked);
                }
                return;
            }
            self.player_begin(i);
            return;
        }
    }

    /// An adapting player took a frame: shown, or dropped as late (`late`).
    fn player_took(&mut self, i: usize, late: bool) {
        let t = &mut self.tasks[i];
        t.taken += 1;
        t.late_taken += u32::from(late);
    }

    /// An adapting player decides its rate again once it has taken [`ADAPT_WINDOW`] frames since it
    /// last did (see [`Adapt`]).
    fn player_adapt(&mut self, i: usize) {
        let Model::Player(p) = &self.scn.tasks[i].model else { unreachable!("a player") };
        if p.adapt == Adapt::None || self.tasks[i].taken < ADAPT_WINDOW {
            return;
        }
        let (n, late) = (self.tasks[i].rate, self.tasks[i].late_taken);
        let rate = match p.adapt {
            Adapt::None => n,
            Adapt::Late if late >= ADAPT_WINDOW / 2 => n + 1,
            Adapt::Late if late == 0 => n - 1,
            Adapt::Late => n,
            Adapt::Availability => {
                let a = self.core.availability(TaskId(i as u32), self.now);
                let need = |k: u64| {
                    100.0 * self.tasks[i].stream.frame_cpu_estimate() as f64 / (k as f64 * p.period as f64)
                };
                if late > 0 && need(n) > a.allocation_rate {
                    n + 1
                } else if n > 1 && a.consumption_rate < a.allocation_rate && need(n - 1) <= a.allocation_rate
                {
                    n - 1
                } else {
                    n
                }
            }
        };
        let t = &mut self.tasks[i];
        t.rate = rate.clamp(1, ADAPT_MAX_RATE);
        (t.taken, t.late_taken) = (0, 0);
    }

    /// Player `i` begins its current frame now: its time constraint (`discard = "notified"`), its work.
    fn player_begin(&mut self, i: usize) {
        let Model::Player(p) = &self.scn.tasks[i].model else { unreachable!("a player") };
        let id = TaskId(i as u32);
        let now = self.now;
        let t = &mut self.tasks[i];
        t.sleeping = false;
        let job = t.job.as_mut().expect("a player begins a frame it took");
        job.released = now;
        let (exec, planned) = (job.exec, job.planned);
        t.remaining = exec;
        if p.discard == Discard::Notified {
            let c = t.stream.frame_constraint(&planned, now);
            self.core.set_time_constraint(id, Some(c), now);
        }
        match self.state(i) {
            State::Blocked => self.make_runnable(id),
            State::Running(_) => {
                // A new constraint: the policy decides again, as for a periodic request.
                let c = self.tasks[i].on_cpu.expect("running on a CPU") as usize;
                self.arm(c);
                if p.discard == Discard::Notified {
                    self.core.request(c as CpuId);
                }
            }
            _ => {}
        }
    }

    /// Player `i`'s frame `job` is on screen now: counted on time, early or late, and the player's
    /// estimates learn what it took (the wall-clock time from its start, and its CPU).
    fn show_frame(&mut self, i: usize, job: &Job) {
        let Model::Player(p) = &self.scn.tasks[i].model else { unreachable!("a player") };
        let now = self.now;
        self.tasks[i].stream.observe_frame(now - job.released, job.exec);
        self.metrics.frame_shown(i, job, p.window, now);
        let late = now > job.planned.deadline;
        self.player_took(i, late);
        self.complete_job(i, job, Dropped::No);
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
        if self.tasks[i].busy_wait > 0 && self.spin_until_next(i) {
            return;
        }
        self.stop_running(i, Stop::Blocked);
        self.arm_sleep(i);
        let t = &mut self.tasks[i];
        if !t.stream.more_after(t.released, self.end) {
            self.exit(i);
        }
    }

    pub(super) fn exit(&mut self, i: usize) {
        if self.tasks[i].life == Life::Done {
            return;
        }
        self.tasks[i].spinning = false;
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
        if matches!(self.scn.tasks[i].model, Model::Player(_)) {
            // A player drops a frame it was notified of before it began it (before the frame had
            // any CPU); once begun, the frame is shown, late (Nieh §3.5.1).
            let Some(d) = self.tasks[i].notified.take() else { return };
            let t = &self.tasks[i];
            let fresh = t.job.as_ref().is_some_and(|j| j.planned.deadline == d && t.remaining == j.exec);
            if fresh {
                let job = self.tasks[i].job.take().expect("checked");
                self.complete_job(i, &job, Dropped::Discarded);
                self.player_took(i, true);
                self.player_next(i);
            }
            return;
        }
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
