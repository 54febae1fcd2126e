//! SimSo's global dispatcher, for `ties = "task"` of `edf`, `fifo` and `rr`: where SimSo 0.8.5 puts
//! each job on N CPUs, reproduced so that a schedule can be checked against SimSo job by job.
//!
//! **Why a model of SimSo's dispatcher, not a tie rule.** SimSo's global `EDF` and `RM`
//! (`simso/schedulers/EDF.py`, `RM.py`) make one decision per event, on the CPU of the event, and
//! every decision places at most one job: the best waiting one (EDF: the earliest deadline, the
//! first in task order among equals; RM: the shortest period, the first in its ready list among
//! equals) goes to that CPU if it is idle, else to the lowest-numbered idle CPU, else to the CPU
//! running the worst job (ties: the event's CPU, then the lowest number), if it is strictly better.
//! Which CPU decides when is not a rule of the schedulers but of SimSo's machinery
//! (`simso/core/Processor.py`, `Job.py`, `Task.py` on SimPy 2.3): each CPU is a SimPy process with a
//! queue of events (a job's activation goes to the CPU its task last ran on, CPU 0 before its first
//! run; a job's end or abortion to its CPU; a placement to the CPU placed on); a process handles one
//! event per turn, its decisions wait for a global lock, and the processes of one instant take turns
//! in the order SimPy posted them, which depends on when each job last resumed. On N ≥ 2 CPUs equal
//! deadlines (or periods) on several CPUs make that order decide which job runs where, so this module
//! replays it: the processes of every CPU and every job, SimPy's event order (a monotonic sequence
//! number per posted notice), the lock, the turns. Nothing of it reaches the core: the policy
//! computes what SimSo would run on each CPU after an instant and realises it by its answers
//! ([`Shadow::pick`] for [`Policy::pick_next`](crate::Policy::pick_next), [`Shadow::kick`] for
//! [`Policy::kick`](crate::Policy::kick)).
//!
//! **What it is told.** Only what a policy is told: wake-ups (a job released to an idle task), stops
//! (a job's end when the task blocks), time constraints (the next job handed over when a job ends
//! with its successor already released; the release, deadline, period and estimate of each). Two
//! things SimSo does that a policy does not see are inferred: the releases of a task busy with a
//! late job (periodic, from the period of its constraint: each release posts the next one in
//! SimPy's order, also at an instant at which nothing reaches the policy, caught up with at the
//! next call) and whether a job that ended at its deadline was aborted (it ran less than its
//! estimate).
//!
//! **Where it departs from SimSo, on purpose.** When SimSo aborts a job that waits
//! (`abort_on_miss`), it clears the running job of the CPU that job's task last ran on, whichever
//! job that is: with `RM` that job is never scheduled again until its own deadline (SimSo's own
//! issue, `bench/simso/check.py`: `KNOWN_SIMSO_ISSUES`); here the aborted job just leaves. What
//! SimSo does not have is added so that no CPU idles while a job that may run there waits, and so
//! that without it everything is as in SimSo: a job is only placed where its affinity allows, and a
//! decision places the best job that may go somewhere (without affinities, when the best may not,
//! none may); a task that yields or uses up its slice (`rr`, and tasks without a time constraint
//! under `edf`, which take turns) goes back among the waiting jobs and its CPU decides; a task that
//! exits after its last job has ended changes nothing (SimSo's tasks never exit), one taken off
//! its CPU otherwise leaves it to decide, and a task number given again at the instant its task
//! exited starts a new task once the old one's events are settled; a CPU still idle at the end of
//! an instant while a job that may run there waits decides, once per such job (never the case in
//! SimSo, where every CPU that becomes free has its event).
//!
//! **Where it is weak.** It assumes what SimSo simulates: periodic tasks whose jobs are released
//! every period from their first release, exact execution times, no overheads. The first release
//! of every task is ordered as SimSo orders tasks that start at time 0 (by task number); a task
//! that starts later is ordered as if it had been set up at time 0, as SimSo does. A job that waits
//! past its deadline and is aborted there by the driver (`on_miss = "abort"`) is not told to the
//! policy when no other job of its task is released yet (the simulator hands the next one over
//! only when the task next runs): it is seen then, and in `RM`'s ready list the task keeps the
//! place of the aborted job until then, where SimSo (without its own issue above) appends the next
//! job. Each instant with an event costs a copy of the model (O(tasks + CPUs)), so it is meant for
//! the task sets SimSo handles, not for thousands of tasks.

use std::collections::VecDeque;

use crate::{CpuId, Nanos, State, Stop, TaskId, TimeConstraint, View};

/// Which SimSo scheduler is reproduced.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Global `EDF`: the earliest absolute deadline; among equals, the first in task order.
    Edf,
    /// Global `RM`: the shortest period (here: the largest priority); among equals, the first in
    /// the ready list (jobs join it when activated and when preempted).
    Rm,
}

/// The sequence numbers of the notices SimSo posts while it sets up (each task's first release, in
/// task order) are the task numbers; every later notice is numbered from here, so it comes after.
const FIRST_KEY: u64 = 1 << 32;

/// A job: a task and the job's number within it.
type JobRef = (TaskId, u64);

/// A job released and not ended.
#[derive(Clone, Debug)]
struct Job {
    id: u64,
    release: Nanos,
    deadline: Nanos,
    /// The sequence number of its deadline timer's notice (0 until the timer has run).
    timer: u64,
}

/// Where a job's process resumes when it runs next.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum At {
    /// Not run yet: it will announce its activation to its task's CPU.
    Start,
    /// Waiting to be resumed by its CPU (SimPy's `passivate`).
    Passive,
    /// Executing (SimPy's `hold` for what it has left to do).
    Hold,
}

/// The SimPy process of a task's current job.
#[derive(Clone, Debug)]
struct Process {
    job: u64,
    at: At,
    /// In this instant's run queue.
    queued: bool,
    /// Executing, with the sequence number of the notice of its end.
    holding: Option<u64>,
    /// SimPy's interrupt flag.
    interrupted: bool,
    /// SimSo's `context_ok`: its context is saved, another CPU may resume it.
    ctx: bool,
}

/// A task as SimSo keeps it.
#[derive(Clone, Debug, Default)]
struct Task {
    live: bool,
    /// The CPU it was last placed on (SimSo's `task.cpu`), where its events go.
    cpu: CpuId,
    /// Jobs released and not ended, oldest first: the first is its current job.
    jobs: VecDeque<Job>,
    next_id: u64,
    process: Option<Process>,
    /// The sequence number of the notice of its next release, and when that is (if periodic).
    release_key: u64,
    next_release: Option<Nanos>,
    /// When it last used up its slice or yielded (0: never): `EDF` round-robins the jobs without
    /// a deadline by it.
    requeued: u64,
}

/// An event in a CPU's queue (SimSo's `Processor._evts`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Evt {
    Activate(JobRef),
    Terminate(JobRef),
    Resched,
    Preempt,
}

/// Where a CPU's process resumes when it runs next (the points of `Processor.run` after a yield).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Pc {
    /// The top of its loop.
    Top,
    /// Its job's context is ready: it holds (loads the context).
    Ctx,
    /// It resumes its job, then waits for events.
    Resume,
    /// An event arrived: it interrupts its job (if any) and holds (saves the context).
    Events,
    /// The context is saved: it takes the event.
    Saved,
    /// It holds the lock: it decides.
    Locked,
    /// It decided: it applies the decision and releases the lock.
    Decided,
}

/// A CPU's process.
#[derive(Clone, Debug)]
struct Cpu {
    evts: VecDeque<Evt>,
    pc: Pc,
    /// The job it ran when it last found no event (the loop's `job`).
    job: Option<JobRef>,
    /// The job placed on it (SimSo's `running`).
    running: Option<JobRef>,
    decision: Option<(JobRef, CpuId)>,
}

/// What a process waits for (SimPy's `waituntil`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Cond {
    Ctx(JobRef),
    Events(CpuId),
    Lock,
}

/// Something that runs in SimPy's queue.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Actor {
    Cpu(CpuId),
    Job(TaskId),
    /// A job's deadline timer, started at its release.
    Timer(JobRef),
    /// The notices posted before this instant: a release, a job's end, a running job's abortion,
    /// a waiting job's abortion.
    Release(TaskId),
    End(TaskId),
    Abort(TaskId),
    Drop(TaskId),
    /// A slice ended or the task yielded on that CPU; the task is gone (neither is SimSo's).
    Requeue(TaskId, CpuId),
    Exit(TaskId),
}

/// The model: SimSo's tasks, CPUs and SimPy's queues between two instants (copied per instant).
#[derive(Clone, Debug, Default)]
struct Model {
    tasks: Vec<Task>,
    cpus: Vec<Cpu>,
    /// Processes waiting for a condition, in the order they began to wait.
    waiting: Vec<(CpuId, Cond)>,
    /// `RM`'s ready list.
    ready: Vec<JobRef>,
    seq: u64,
    lock: bool,
    queue: VecDeque<Actor>,
}

/// What the policy was told of a task (kept outside the model: the same for every replay of an
/// instant).
#[derive(Clone, Debug, Default)]
struct Known {
    /// Whether it has a time constraint now, and the last one it was given.
    constrained: bool,
    last: Option<TimeConstraint>,
    /// Time its current job has run, and since when it runs (when dispatched).
    ran: Nanos,
    since: Option<Nanos>,
    /// Blocked (as of the last event); gone.
    asleep: bool,
    exited: bool,
}

/// What happened to a task at the instant.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Event {
    /// Released a job while idle.
    Woke(TaskId),
    /// Its current job is over: it ended or was aborted (`abort`) if it was running, it was
    /// aborted if it waited; `next`: the release of the job handed over, if one was.
    Ended { task: TaskId, abort: bool, next: Option<Nanos> },
    /// It used up its slice or yielded on that CPU.
    Requeued(TaskId, CpuId),
    /// It is gone.
    Exited(TaskId),
}

impl Event {
    fn task(self) -> TaskId {
        match self {
            Event::Woke(t) | Event::Requeued(t, _) | Event::Exited(t) => t,
            Event::Ended { task, .. } => task,
        }
    }
}

/// SimSo's dispatcher beside a policy: told what the policy is told, it answers what the policy
/// picks and kicks.
#[derive(Debug)]
pub(crate) struct Shadow {
    rule: Rule,
    known: Vec<Known>,
    /// The model before the current instant's events, and after them (once computed).
    base: Model,
    plan: Option<Model>,
    /// The current instant and what happened at it; whether an instant began.
    at: Nanos,
    started: bool,
    events: Vec<Event>,
    /// What the core runs where, as dispatched; scratch: what it should run where.
    on_cpu: Vec<Option<TaskId>>,
    want: Vec<Option<TaskId>>,
}

impl Model {
    fn key(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn cpus_for(&mut self, n: usize) {
        while self.cpus.len() < n {
            let c = self.cpus.len() as CpuId;
            self.cpus.push(Cpu {
                evts: VecDeque::new(),
                pc: Pc::Events,
                job: None,
                running: None,
                decision: None,
            });
            // At time 0 every CPU finds no event and waits for one, in CPU order.
            self.waiting.push((c, Cond::Events(c)));
        }
    }

    fn task(&mut self, t: TaskId) -> &mut Task {
        crate::slot(&mut self.tasks, t)
    }

    /// The current job of `t`, if it has one.
    fn current(&self, t: TaskId) -> Option<&Job> {
        self.tasks.get(t.idx()).and_then(|k| k.jobs.front())
    }

    fn current_ref(&self, t: TaskId) -> Option<JobRef> {
        self.current(t).map(|j| (t, j.id))
    }

    /// The process of job `j`, while it is its task's current process.
    fn process(&mut self, j: JobRef) -> Option<&mut Process> {
        self.tasks.get_mut(j.0.idx())?.process.as_mut().filter(|p| p.job == j.1)
    }

    fn unqueue(&mut self, a: Actor) {
        if let Some(i) = self.queue.iter().position(|&x| x == a) {
            self.queue.remove(i);
        }
    }

    /// SimPy's `reactivate`: the process runs again at the end of this instant's queue.
    fn reactivate(&mut self, j: JobRef) {
        let Some(p) = self.process(j) else { return };
        let was_queued = p.queued;
        p.queued = true;
        p.holding = None;
        if was_queued {
            self.unqueue(Actor::Job(j.0));
        }
        self.queue.push_back(Actor::Job(j.0));
    }

    /// SimPy's `interrupt`: an active process (queued or executing, not interrupted) is.
    fn interrupt(&mut self, j: JobRef) {
        let Some(p) = self.process(j) else { return };
        if (p.queued || p.holding.is_some()) && !p.interrupted {
            p.interrupted = true;
            self.reactivate(j);
        }
    }

    /// SimPy's `cancel`: the process's notice is dropped; it runs no more.
    fn cancel(&mut self, t: TaskId) {
        if let Some(p) = self.tasks[t.idx()].process.take() {
            if p.queued {
                self.unqueue(Actor::Job(t));
            }
        }
    }

    /// A new current job (at the front of `t`'s jobs) starts its process.
    fn start_current(&mut self, t: TaskId) {
        let Some(id) = self.current(t).map(|j| j.id) else { return };
        self.tasks[t.idx()].process = Some(Process {
            job: id,
            at: At::Start,
            queued: true,
            holding: None,
            interrupted: false,
            ctx: true,
        });
        self.queue.push_back(Actor::Job(t));
    }

    /// Whether a condition holds now (taking the lock if it is free: SimSo's `get_lock`).
    fn holds(&mut self, c: Cond) -> bool {
        match c {
            Cond::Ctx(j) => self.process(j).is_none_or(|p| p.ctx),
            Cond::Events(cpu) => !self.cpus[cpu as usize].evts.is_empty(),
            Cond::Lock => !std::mem::replace(&mut self.lock, true),
        }
    }

    /// After every step, each waiting process whose condition holds runs again, in the order they
    /// began to wait.
    fn wake_waiting(&mut self) {
        let mut i = 0;
        while i < self.waiting.len() {
            let (cpu, c) = self.waiting[i];
            if self.holds(c) {
                self.waiting.remove(i);
                self.queue.push_back(Actor::Cpu(cpu));
            } else {
                i += 1;
            }
        }
    }

    /// CPU `cpu`'s process waits for `c`: at once if it holds (first in the queue, SimPy's prior
    /// notice), else among the waiting.
    fn wait(&mut self, cpu: CpuId, c: Cond) {
        if self.holds(c) {
            self.queue.push_front(Actor::Cpu(cpu));
        } else {
            self.waiting.push((cpu, c));
        }
    }

    fn preempt(&mut self, cpu: CpuId, job: Option<JobRef>) {
        let c = &mut self.cpus[cpu as usize];
        c.evts.retain(|&e| e != Evt::Preempt);
        c.evts.push_back(Evt::Preempt);
        c.running = job;
    }

    /// The job `t` ended (or was aborted): the next released one becomes current and starts its
    /// process (SimSo's `Task.end_job`). At a handover the driver names the release of the next
    /// job: an older one it dropped meanwhile (aborted while waiting) is dropped here too, one the
    /// model missed is added (unless this instant's release brings it).
    fn end_job(&mut self, t: TaskId, inst: &Instant<'_>) {
        let k = inst.known(t);
        let task = &mut self.tasks[t.idx()];
        task.jobs.pop_front();
        if let Some(r) = inst.next[t.idx()] {
            while task.jobs.front().is_some_and(|j| j.release < r) {
                task.jobs.pop_front();
            }
            let missing = task.jobs.front().is_none_or(|j| j.release != r);
            if missing && (r < inst.now || !inst.releasing[t.idx()]) {
                let id = task.next_id;
                task.next_id += 1;
                task.jobs.push_front(Job { id, release: r, deadline: Nanos::MAX, timer: 0 });
            }
            if let (Some(j), Some(c)) = (task.jobs.front_mut(), k.last) {
                if j.release == r {
                    j.deadline = c.deadline;
                }
            }
        }
        if !self.tasks[t.idx()].jobs.is_empty() {
            self.start_current(t);
        }
    }

    /// SimSo's `Processor.terminate`: the end goes to the task's CPU, which runs nothing now.
    fn terminate(&mut self, j: JobRef) {
        let cpu = self.tasks[j.0.idx()].cpu as usize;
        self.cpus[cpu].evts.push_back(Evt::Terminate(j));
        self.cpus[cpu].running = None;
    }

    /// A release notice: a job is released (SimSo's `Task.create_job`), current at once if the
    /// task had none, with its deadline timer; the next release is posted.
    fn release(&mut self, t: TaskId, k: &Known, now: Nanos) {
        let relative = k.last.and_then(|c| c.release.map(|r| c.deadline.saturating_sub(r)));
        let period = k.last.and_then(|c| c.period);
        let task = &mut self.tasks[t.idx()];
        // A job the driver already handed over (see `end_job`) is this release's.
        if !task.jobs.iter().any(|j| j.release == now) {
            let first = task.jobs.is_empty();
            let deadline = match (first, k.constrained, k.last, relative) {
                // Released to an idle task: the constraint it was just given.
                (true, true, Some(c), _) => c.deadline,
                (true, ..) => Nanos::MAX,
                // Released while it is busy: the constraint's relative deadline from now.
                (false, _, _, Some(r)) => now.saturating_add(r),
                (false, ..) => Nanos::MAX,
            };
            let id = task.next_id;
            task.next_id += 1;
            task.jobs.push_back(Job { id, release: now, deadline, timer: 0 });
            if first {
                self.start_current(t);
            }
            self.queue.push_back(Actor::Timer((t, id)));
        }
        let key = self.key();
        let task = &mut self.tasks[t.idx()];
        task.release_key = key;
        task.next_release = period.map(|p| now.saturating_add(p));
    }

    /// One turn of job `t`'s process.
    fn step_job(&mut self, t: TaskId) {
        let cpu = self.tasks[t.idx()].cpu;
        let Some(p) = self.tasks[t.idx()].process.as_mut() else { return };
        p.queued = false;
        match p.at {
            At::Start => {
                let j = (t, p.job);
                p.at = At::Passive;
                self.cpus[cpu as usize].evts.push_back(Evt::Activate(j));
            }
            At::Passive | At::Hold if p.interrupted => {
                p.interrupted = false;
                p.at = At::Passive;
            }
            At::Passive | At::Hold => {
                p.at = At::Hold;
                self.seq += 1;
                let key = self.seq;
                if let Some(p) = self.tasks[t.idx()].process.as_mut() {
                    p.holding = Some(key);
                }
            }
        }
    }

    fn on_activate(&mut self, rule: Rule, j: JobRef) {
        if rule == Rule::Rm {
            self.ready.push(j);
        }
        let cpu = self.tasks[j.0.idx()].cpu as usize;
        self.cpus[cpu].evts.push_back(Evt::Resched);
    }

    fn on_terminated(&mut self, rule: Rule, j: JobRef) {
        if rule == Rule::Rm {
            if let Some(i) = self.ready.iter().position(|&r| r == j) {
                self.ready.remove(i);
                return;
            }
        }
        let cpu = self.tasks[j.0.idx()].cpu as usize;
        self.cpus[cpu].evts.push_back(Evt::Resched);
    }

    /// How good job `j` is: smaller is better (EDF: its deadline; RM: its priority, negated).
    fn rank(&self, rule: Rule, j: JobRef, v: &View) -> i128 {
        match rule {
            Rule::Edf => self.current(j.0).map_or(i128::from(Nanos::MAX), |c| i128::from(c.deadline)),
            Rule::Rm => -i128::from(v.params(j.0).priority),
        }
    }

    /// Whether `t` may be placed: it lives and is not blocked (as the policy was told).
    fn may_run(&self, t: TaskId, inst: &Instant<'_>) -> bool {
        self.tasks.get(t.idx()).is_some_and(|k| k.live) && inst.awake(t)
    }

    /// SimSo's `schedule(cpu)`: the best waiting job, and where it goes, if anywhere. With
    /// affinities (SimSo has none) the best job that may go somewhere: without them, if the best
    /// job may not, no job may.
    fn schedule(&mut self, rule: Rule, cpu: CpuId, inst: &Instant<'_>, v: &View) -> Option<(JobRef, CpuId)> {
        let mut waiting: Vec<(i128, u64, JobRef)> = Vec::new();
        match rule {
            Rule::Edf => {
                for (i, task) in self.tasks.iter().enumerate() {
                    let t = TaskId(i as u32);
                    let Some(j) = self.current_ref(t) else { continue };
                    if self.may_run(t, inst) && self.cpus[task.cpu as usize].running != Some(j) {
                        let r = self.rank(rule, j, v);
                        // Jobs without a deadline (not SimSo's) take turns.
                        let turn = if r == i128::from(Nanos::MAX) { task.requeued } else { 0 };
                        waiting.push((r, turn, j));
                    }
                }
            }
            Rule::Rm => {
                for &j in &self.ready {
                    if self.may_run(j.0, inst) {
                        waiting.push((self.rank(rule, j, v), 0, j));
                    }
                }
            }
        }
        // Best first; among equals, the first in task order (EDF) or in the ready list (RM).
        waiting.sort_by_key(|w| (w.0, w.1));
        let (job, target) =
            waiting.iter().find_map(|&(r, _, j)| Some((j, self.target(rule, j, r, cpu, v)?)))?;
        if rule == Rule::Rm {
            self.ready.retain(|&x| x != job);
            if let Some(victim) = self.cpus[target as usize].running {
                self.ready.push(victim);
            }
        }
        Some((job, target))
    }

    /// Where job `j` of rank `r` goes when `cpu` decides: `cpu` if it is idle, else the lowest
    /// idle CPU, else the CPU running the worst job (among equals `cpu`, then the lowest) if `j`
    /// is strictly better; only CPUs it may run on.
    fn target(&self, rule: Rule, j: JobRef, r: i128, cpu: CpuId, v: &View) -> Option<CpuId> {
        let allowed = |c: CpuId| v.allows(j.0, c);
        let idle = |c: CpuId| self.cpus[c as usize].running.is_none();
        let n = self.cpus.len() as CpuId;
        if idle(cpu) && allowed(cpu) {
            return Some(cpu);
        }
        if let Some(c) = (0..n).find(|&c| idle(c) && allowed(c)) {
            return Some(c);
        }
        let mut worst: Option<(CpuId, i128)> = None;
        for c in (0..n).filter(|&c| allowed(c)) {
            let Some(rj) = self.cpus[c as usize].running else { continue };
            let k = self.rank(rule, rj, v);
            let better = match worst {
                None => true,
                Some((wc, wk)) => k > wk || (k == wk && c == cpu && wc != cpu),
            };
            if better {
                worst = Some((c, k));
            }
        }
        worst.filter(|&(_, k)| r < k).map(|(c, _)| c)
    }

    /// An idle CPU on which a waiting job may run, if there is one.
    fn stranded(&self, rule: Rule, inst: &Instant<'_>, v: &View) -> Option<CpuId> {
        let n = self.cpus.len() as CpuId;
        let waiting: Vec<TaskId> = match rule {
            Rule::Edf => (0..self.tasks.len())
                .map(|i| TaskId(i as u32))
                .filter(|&t| {
                    self.current_ref(t)
                        .is_some_and(|j| self.cpus[self.tasks[t.idx()].cpu as usize].running != Some(j))
                })
                .collect(),
            Rule::Rm => self.ready.iter().map(|j| j.0).collect(),
        };
        (0..n).find(|&c| {
            self.cpus[c as usize].running.is_none()
                && waiting.iter().any(|&t| self.may_run(t, inst) && v.allows(t, c))
        })
    }

    /// A decision applied (the end of SimSo's `Processor.run` for a `RESCHED`).
    /// With affinities (not SimSo's), a job preempted while a CPU it may run on idles (its
    /// preemptor could not go there) has that CPU decide, as if an event had come there.
    fn apply(&mut self, (job, cpu): (JobRef, CpuId), v: &View) {
        if self.cpus[cpu as usize].running == Some(job) || self.current_ref(job.0) != Some(job) {
            return;
        }
        let from = self.tasks[job.0.idx()].cpu;
        if self.cpus[from as usize].running == Some(job) {
            self.preempt(from, None);
        }
        let victim = self.cpus[cpu as usize].running;
        self.preempt(cpu, Some(job));
        self.tasks[job.0.idx()].cpu = cpu;
        if let Some(x) = victim {
            let n = self.cpus.len() as CpuId;
            if let Some(d) = (0..n).find(|&d| self.cpus[d as usize].running.is_none() && v.allows(x.0, d)) {
                self.cpus[d as usize].evts.push_back(Evt::Resched);
            }
        }
    }

    /// Turns of CPU `cpu`'s process until it yields.
    fn step_cpu(&mut self, rule: Rule, cpu: CpuId, inst: &Instant<'_>, v: &View) {
        let c = cpu as usize;
        loop {
            match self.cpus[c].pc {
                Pc::Top => {
                    if self.cpus[c].evts.is_empty() {
                        let job = self.cpus[c].running;
                        self.cpus[c].job = job;
                        match job {
                            Some(j) => {
                                self.cpus[c].pc = Pc::Ctx;
                                self.wait(cpu, Cond::Ctx(j));
                            }
                            None => {
                                self.cpus[c].pc = Pc::Events;
                                self.wait(cpu, Cond::Events(cpu));
                            }
                        }
                        return;
                    }
                    let e = self.cpus[c].evts.pop_front().expect("an event");
                    match e {
                        Evt::Resched if self.cpus[c].evts.iter().any(|&x| x != Evt::Resched) => {
                            self.cpus[c].evts.push_back(e);
                        }
                        Evt::Activate(j) => {
                            self.on_activate(rule, j);
                            self.queue.push_back(Actor::Cpu(cpu));
                            return;
                        }
                        Evt::Terminate(j) => {
                            self.on_terminated(rule, j);
                            self.queue.push_back(Actor::Cpu(cpu));
                            return;
                        }
                        Evt::Resched => {
                            self.cpus[c].pc = Pc::Locked;
                            self.wait(cpu, Cond::Lock);
                            return;
                        }
                        Evt::Preempt => {}
                    }
                }
                Pc::Ctx => {
                    self.cpus[c].pc = Pc::Resume;
                    self.queue.push_back(Actor::Cpu(cpu));
                    return;
                }
                Pc::Resume => {
                    if let Some(j) = self.cpus[c].job {
                        if let Some(p) = self.process(j) {
                            p.interrupted = false;
                        }
                        self.reactivate(j);
                        if let Some(p) = self.process(j) {
                            p.ctx = false;
                        }
                    }
                    self.cpus[c].pc = Pc::Events;
                    self.wait(cpu, Cond::Events(cpu));
                    return;
                }
                Pc::Events => match self.cpus[c].job {
                    Some(j) => {
                        self.interrupt(j);
                        self.cpus[c].pc = Pc::Saved;
                        self.queue.push_back(Actor::Cpu(cpu));
                        return;
                    }
                    None => self.cpus[c].pc = Pc::Top,
                },
                Pc::Saved => {
                    if let Some(p) = self.cpus[c].job.and_then(|j| self.process(j)) {
                        p.ctx = true;
                    }
                    self.cpus[c].pc = Pc::Top;
                }
                Pc::Locked => {
                    self.cpus[c].decision = self.schedule(rule, cpu, inst, v);
                    self.cpus[c].pc = Pc::Decided;
                    self.queue.push_back(Actor::Cpu(cpu));
                    return;
                }
                Pc::Decided => {
                    if let Some(d) = self.cpus[c].decision.take() {
                        self.apply(d, v);
                    }
                    self.lock = false;
                    self.cpus[c].pc = Pc::Top;
                }
            }
        }
    }

    /// One step of SimPy's loop.
    fn step(&mut self, rule: Rule, a: Actor, inst: &Instant<'_>, v: &View) {
        match a {
            Actor::Cpu(cpu) => self.step_cpu(rule, cpu, inst, v),
            Actor::Job(t) => self.step_job(t),
            Actor::Timer((t, id)) => {
                let key = self.key();
                if let Some(j) = self.tasks[t.idx()].jobs.iter_mut().find(|j| j.id == id) {
                    j.timer = key;
                }
            }
            Actor::Release(t) => self.release(t, inst.known(t), inst.now),
            Actor::End(t) | Actor::Abort(t) => {
                let Some(j) = self.current_ref(t) else { return };
                self.cancel(t);
                self.end_job(t, inst);
                self.terminate(j);
            }
            Actor::Drop(t) => {
                let Some(j) = self.current_ref(t) else { return };
                self.cancel(t);
                self.ready.retain(|&r| r != j);
                self.end_job(t, inst);
            }
            Actor::Exit(t) => {
                // After its job's end, if any: its CPU, if the model still runs it there (the core
                // took it off without a job's end), decides as at one.
                if let Some(c) = self.cpus.iter().position(|c| c.running.is_some_and(|j| j.0 == t)) {
                    self.cpus[c].running = None;
                    self.cpus[c].evts.push_back(Evt::Resched);
                }
                self.cancel(t);
                self.ready.retain(|j| j.0 != t);
                self.tasks[t.idx()].jobs.clear();
            }
            Actor::Requeue(t, cpu) => {
                let c = &mut self.cpus[cpu as usize];
                if let Some(j) = c.running.take_if(|j| j.0 == t) {
                    c.evts.push_back(Evt::Resched);
                    if rule == Rule::Rm {
                        self.ready.push(j);
                    }
                    let key = self.key();
                    self.tasks[t.idx()].requeued = key;
                }
            }
        }
        self.wake_waiting();
    }

    /// SimSo at instant `now`: the notices due (releases, ends, abortions) in the order SimPy
    /// posted them, then every process's turns until none is left.
    fn instant(&mut self, rule: Rule, now: Nanos, events: &[Event], known: &[Known], v: &View) {
        self.cpus_for(v.cpus());
        let n = self.tasks.len();
        let mut inst = Instant { now, known, releasing: vec![false; n], next: vec![None; n] };
        let mut woke = vec![false; n];
        let mut ended: Vec<Option<bool>> = vec![None; n];
        let mut requeued = Vec::new();
        let mut exited = Vec::new();
        for &e in events {
            match e {
                Event::Woke(t) => woke[t.idx()] = true,
                Event::Ended { task, abort, next } => {
                    ended[task.idx()] = Some(abort);
                    inst.next[task.idx()] = next;
                }
                Event::Requeued(t, cpu) => requeued.push(Actor::Requeue(t, cpu)),
                Event::Exited(t) => exited.push(Actor::Exit(t)),
            }
        }
        let mut notices: Vec<(u64, Actor)> = Vec::new();
        for (i, task) in self.tasks.iter().enumerate() {
            let t = TaskId(i as u32);
            if !task.live {
                continue;
            }
            if woke[i] || inst.awake(t) && task.next_release == Some(now) {
                inst.releasing[i] = true;
                notices.push((task.release_key, Actor::Release(t)));
            }
            let Some(head) = task.jobs.front() else { continue };
            let running = self.cpus.get(task.cpu as usize).is_some_and(|c| c.running == Some((t, head.id)));
            match ended[i] {
                // A job ends at the notice its process posted when it last resumed; an abortion
                // comes at its deadline timer's; a job that was not running had waited.
                Some(false) if running => {
                    let key = task.process.as_ref().and_then(|p| p.holding).unwrap_or(0);
                    notices.push((key, Actor::End(t)));
                }
                Some(true) if running => notices.push((head.timer, Actor::Abort(t))),
                Some(_) => notices.push((head.timer, Actor::Drop(t))),
                None => {}
            }
        }
        notices.sort_by_key(|&(k, _)| k);
        self.queue.extend(requeued);
        self.queue.extend(notices.into_iter().map(|(_, a)| a));
        self.queue.extend(exited);
        // A CPU left idle while a job that may run there waits (never in SimSo, whose every freed
        // CPU has its event; here after a yield, a slice's end or with affinities) decides, as if
        // an event had come there; each such decision places a job.
        let mut rounds = self.cpus.len() + self.tasks.len();
        loop {
            while let Some(a) = self.queue.pop_front() {
                self.step(rule, a, &inst, v);
            }
            let Some(c) = self.stranded(rule, &inst, v).filter(|_| rounds > 0) else { break };
            rounds -= 1;
            self.cpus[c as usize].evts.push_back(Evt::Resched);
            self.wake_waiting();
        }
    }
}

/// What is known of the instant being replayed, per task.
struct Instant<'k> {
    now: Nanos,
    known: &'k [Known],
    /// A release of the task is due at this instant.
    releasing: Vec<bool>,
    /// The release of the job the driver handed over when the task's job ended.
    next: Vec<Option<Nanos>>,
}

impl Instant<'_> {
    /// Whether `t` is not blocked (released jobs it has not ended), as the policy was told: at the
    /// end of the instant.
    fn awake(&self, t: TaskId) -> bool {
        self.known.get(t.idx()).is_some_and(|k| !k.asleep && !k.exited)
    }

    fn known(&self, t: TaskId) -> &Known {
        static NONE: Known =
            Known { constrained: false, last: None, ran: 0, since: None, asleep: true, exited: false };
        self.known.get(t.idx()).unwrap_or(&NONE)
    }
}

impl Shadow {
    /// SimSo's dispatcher under `rule`.
    pub(crate) fn new(rule: Rule) -> Self {
        Shadow {
            rule,
            known: Vec::new(),
            base: Model { seq: FIRST_KEY, ..Model::default() },
            plan: None,
            at: 0,
            started: false,
            events: Vec::new(),
            on_cpu: Vec::new(),
            want: Vec::new(),
        }
    }

    /// Time is at `v.now()`: an instant left behind is over (its model becomes the base).
    fn advance(&mut self, v: &View) {
        let now = v.now();
        if self.started && now == self.at {
            return;
        }
        if self.started {
            self.commit(v);
            // Releases due since, of tasks busy with a late job: nothing reached the policy then
            // (a driver need not tell it the time of an instant without calls), but SimSo posted
            // their next releases and deadline timers there.
            while let Some(r) = self.skipped(now) {
                self.at = r;
                self.commit(v);
            }
        }
        self.started = true;
        self.at = now;
    }

    /// The earliest release expected after the instant left behind and before `now` of a task
    /// that is not blocked.
    fn skipped(&self, now: Nanos) -> Option<Nanos> {
        let awake = |i: usize| self.known.get(i).is_some_and(|k| !k.asleep && !k.exited);
        (self.base.tasks.iter().enumerate())
            .filter(|&(i, t)| t.live && awake(i))
            .filter_map(|(_, t)| t.next_release)
            .filter(|&r| r > self.at && r < now)
            .min()
    }

    fn compute(&self, v: &View) -> Model {
        let mut m = self.base.clone();
        m.instant(self.rule, self.at, &self.events, &self.known, v);
        m
    }

    /// The instant is over: its model, brought in line with what the core runs (in case a plan
    /// could not be realised), is the base of the next.
    fn commit(&mut self, v: &View) {
        let mut m = match self.plan.take() {
            Some(m) => m,
            None => self.compute(v),
        };
        m.cpus_for(v.cpus().max(self.on_cpu.len()));
        for c in 0..m.cpus.len() {
            let core = self.on_cpu.get(c).copied().flatten();
            // A job placed here that is over (the core took the task off before it ended) is not.
            let stale = m.cpus[c].running.filter(|&j| m.current_ref(j.0) != Some(j));
            if stale.is_some() {
                m.cpus[c].running = None;
            }
            if m.cpus[c].running.map(|j| j.0) != core {
                m.cpus[c].running = core.and_then(|t| self.adopt(&mut m, t, c as CpuId));
            }
        }
        // Between instants every CPU waits for events, with the job it runs (as in SimSo, where each
        // instant ends so; here also after a plan the core could not follow).
        m.waiting.retain(|w| matches!(w.1, Cond::Events(_)));
        for c in 0..m.cpus.len() {
            let cpu = &mut m.cpus[c];
            cpu.pc = Pc::Events;
            cpu.job = cpu.running;
            cpu.decision = None;
            if !m.waiting.iter().any(|w| w.0 == c as CpuId) {
                m.waiting.push((c as CpuId, Cond::Events(c as CpuId)));
            }
        }
        m.lock = false;
        m.queue.clear();
        for (i, k) in self.known.iter().enumerate() {
            let Some(task) = m.tasks.get_mut(i) else { continue };
            if k.exited {
                task.live = false;
            }
            if k.asleep || !task.live {
                task.jobs.clear();
                task.process = None;
                m.ready.retain(|j| j.0.idx() != i);
            }
        }
        self.base = m;
        self.events.clear();
    }

    /// Task `t` runs on CPU `cpu` although the model does not run it there: the model follows.
    fn adopt(&self, m: &mut Model, t: TaskId, cpu: CpuId) -> Option<JobRef> {
        for c in &mut m.cpus {
            c.running = c.running.filter(|j| j.0 != t);
        }
        if m.current(t).is_none() {
            let deadline = self.known.get(t.idx()).and_then(|k| k.last).map_or(Nanos::MAX, |c| c.deadline);
            let task = m.task(t);
            let id = task.next_id;
            task.next_id += 1;
            task.jobs.push_back(Job { id, release: self.at, deadline, timer: 0 });
        }
        let j = m.current_ref(t)?;
        m.tasks[t.idx()].cpu = cpu;
        let key = m.key();
        let p = m.tasks[t.idx()].process.get_or_insert(Process {
            job: j.1,
            at: At::Hold,
            queued: false,
            holding: None,
            interrupted: false,
            ctx: false,
        });
        if p.job == j.1 && p.holding.is_none() {
            p.at = At::Hold;
            p.holding = Some(key);
        }
        Some(j)
    }

    fn set_on_cpu(&mut self, cpu: CpuId, t: Option<TaskId>) {
        let c = cpu as usize;
        if self.on_cpu.len() <= c {
            self.on_cpu.resize(c + 1, None);
        }
        self.on_cpu[c] = t;
    }

    fn event(&mut self, e: Event) {
        self.events.push(e);
        self.plan = None;
    }

    fn known(&mut self, t: TaskId) -> &mut Known {
        crate::slot(&mut self.known, t)
    }

    /// What the model runs on `cpu` after this instant, if the core may run it there.
    fn wanted(&mut self, cpu: CpuId, v: &View) -> Option<TaskId> {
        if self.plan.is_none() {
            self.plan = Some(self.compute(v));
        }
        let plan = self.plan.as_ref().expect("computed");
        let t = plan.cpus.get(cpu as usize)?.running?.0;
        let here = match v.state(t) {
            State::Runnable => true,
            State::Running(c) => c == cpu,
            _ => false,
        };
        (here && v.allows(t, cpu)).then_some(t)
    }

    /// A task exists; its first release is ordered by its number, as SimSo orders tasks set up at 0.
    pub(crate) fn admit(&mut self, t: TaskId, v: &View) {
        self.advance(v);
        if self.events.iter().any(|e| e.task() == t) {
            // The number of a task gone at this instant, given to a new one: what happened to the
            // old one is settled first, as if at an instant of its own.
            self.commit(v);
        }
        *self.known(t) = Known { asleep: true, ..Known::default() };
        *self.base.task(t) = Task { live: true, release_key: u64::from(t.0), ..Task::default() };
        self.plan = None;
    }

    /// Task `t` is gone (once this instant is over).
    pub(crate) fn exit(&mut self, t: TaskId, v: &View) {
        self.advance(v);
        self.known(t).exited = true;
        self.event(Event::Exited(t));
    }

    /// Task `t` woke: a job released to it while idle.
    pub(crate) fn wake(&mut self, t: TaskId, v: &View) {
        self.advance(v);
        self.known(t).asleep = false;
        self.event(Event::Woke(t));
    }

    /// Whether the current job of `t`, which ran `ran`, ends at its deadline unfinished: aborted.
    fn aborted(k: &Known, ran: Nanos, now: Nanos) -> bool {
        k.last.is_some_and(|c| c.deadline == now && c.cpu_estimate.is_some_and(|e| ran < e))
    }

    /// Task `t` left CPU `cpu`: a job ended if it blocked; it goes back among the waiting if it
    /// used up its slice or yielded; a preemption is one of the plan's.
    pub(crate) fn stop(&mut self, t: TaskId, cpu: CpuId, why: Stop, v: &View) {
        self.advance(v);
        let now = v.now();
        self.set_on_cpu(cpu, None);
        let k = self.known(t);
        if let Some(s) = k.since.take() {
            k.ran += now.saturating_sub(s);
        }
        match why {
            Stop::Blocked => {
                let abort = Self::aborted(k, k.ran, now);
                k.ran = 0;
                k.asleep = true;
                self.event(Event::Ended { task: t, abort, next: None });
            }
            Stop::SliceEnd | Stop::Yielded => self.event(Event::Requeued(t, cpu)),
            Stop::Preempted => {}
        }
    }

    /// A new time constraint for `t`: while it runs or waits, its current job is over (it ended, or
    /// it was aborted) and the next is handed over; while it is blocked, the job it wakes for.
    pub(crate) fn set_time_constraint(&mut self, t: TaskId, c: Option<TimeConstraint>, v: &View) {
        self.advance(v);
        let now = v.now();
        let k = self.known(t);
        let Some(c) = c else {
            k.constrained = false;
            return;
        };
        let next = Some(c.release.unwrap_or(now).min(now));
        let over = matches!(v.state(t), State::Running(_) | State::Runnable);
        let ran = k.ran + k.since.map_or(0, |s| now.saturating_sub(s));
        let abort = Self::aborted(k, ran, now);
        k.last = Some(c);
        k.constrained = true;
        if over {
            // Whether the job over was running or waiting is the model's (at the instant's start).
            k.ran = 0;
            if k.since.is_some() {
                k.since = Some(now);
            }
            self.event(Event::Ended { task: t, abort, next });
        }
    }

    /// The task's parameters changed (its priority ranks it under `RM`).
    pub(crate) fn changed(&mut self, v: &View) {
        self.advance(v);
        self.plan = None;
    }

    /// What CPU `cpu`, free, runs now: what SimSo runs there after this instant.
    pub(crate) fn pick(&mut self, cpu: CpuId, v: &View) -> Option<TaskId> {
        self.advance(v);
        let t = self.wanted(cpu, v).filter(|&t| v.state(t) == State::Runnable)?;
        self.set_on_cpu(cpu, Some(t));
        self.known(t).since = Some(v.now());
        Some(t)
    }

    /// A CPU that must decide again for the core to run what SimSo runs: first one whose decision
    /// completes it (it must idle, or what it must run waits), then one that runs a task another
    /// CPU must run.
    pub(crate) fn kick(&mut self, v: &View) -> Option<CpuId> {
        self.advance(v);
        let n = v.cpus() as CpuId;
        let mut want = std::mem::take(&mut self.want);
        want.clear();
        want.extend((0..n).map(|c| self.wanted(c, v)));
        let differs = |c: CpuId| v.running(c) != want[c as usize];
        let waiting = |t: TaskId| v.state(t) == State::Runnable;
        let kicked = (0..n).find(|&c| differs(c) && want[c as usize].is_none_or(waiting)).or_else(|| {
            (0..n).find(|&c| differs(c) && v.running(c).is_some_and(|x| want.contains(&Some(x))))
        });
        self.want = want;
        kicked
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::{BTreeMap, BinaryHeap};

    use super::*;
    use crate::edf::Edf;
    use crate::fixed::{FixedPriority, Ties};
    use crate::{Core, Policy, TaskParams};

    /// What became of a job: when it ended, and whether it was aborted at its deadline.
    type Ends = Vec<Vec<(Nanos, bool)>>;

    /// A timer of the run: (time, order set, task, abortion of the job released at, else a
    /// release).
    type Timer = (Nanos, u64, usize, Option<Nanos>);

    /// Periodic tasks `(period, exec)` (released at 0, implicit deadlines, exact estimates) on
    /// `cpus` CPUs, driven through the core as `smartsim` drives them, to `end`: at each instant the
    /// jobs that finish (by CPU: a job released meanwhile is handed over, else the task blocks), then
    /// the releases and abortions (`abort`: a job unfinished at its deadline is dropped) in the order
    /// they were set, then the decisions. Priorities are rate monotonic. Returns each task's jobs
    /// that ended before `end`, in order.
    fn run<P: Policy + 'static>(
        p: P,
        tasks: &[(Nanos, Nanos)],
        cpus: usize,
        abort: bool,
        end: Nanos,
    ) -> Ends {
        Run::new(Box::new(p), tasks, cpus, abort).to(end)
    }

    struct Run {
        core: Core,
        tasks: Vec<(Nanos, Nanos)>,
        abort: bool,
        now: Nanos,
        /// Per task: what its current job still needs (as of its dispatch), that job's release, the
        /// releases of the jobs behind it, and what became of each job by release.
        left: Vec<Nanos>,
        current: Vec<Option<Nanos>>,
        pending: Vec<VecDeque<Nanos>>,
        ended: Vec<BTreeMap<Nanos, (Nanos, bool)>>,
        /// Per CPU: when its task was dispatched.
        since: Vec<Nanos>,
        timers: BinaryHeap<Reverse<Timer>>,
        set: u64,
    }

    impl Run {
        fn new(p: Box<dyn Policy>, tasks: &[(Nanos, Nanos)], cpus: usize, abort: bool) -> Run {
            let mut periods: Vec<Nanos> = tasks.iter().map(|t| t.0).collect();
            periods.sort_unstable_by(|a, b| b.cmp(a));
            periods.dedup();
            let mut core = Core::new("simso", p, cpus, false);
            let n = tasks.len();
            let mut r = Run {
                core: Core::new("unused", Box::new(Edf::new(1, 1)), 1, false),
                tasks: tasks.to_vec(),
                abort,
                now: 0,
                left: vec![0; n],
                current: vec![None; n],
                pending: vec![VecDeque::new(); n],
                ended: vec![BTreeMap::new(); n],
                since: vec![0; cpus],
                timers: BinaryHeap::new(),
                set: 0,
            };
            for (i, &(period, _)) in tasks.iter().enumerate() {
                let priority = periods.iter().position(|&p| p == period).expect("listed") as i32 + 1;
                core.admit(TaskId(i as u32), &TaskParams { priority, ..TaskParams::default() }, 0);
                r.timer(0, i, None);
            }
            r.core = core;
            r
        }

        fn timer(&mut self, at: Nanos, i: usize, abort_of: Option<Nanos>) {
            self.set += 1;
            self.timers.push(Reverse((at, self.set, i, abort_of)));
        }

        fn constraint(&self, i: usize, r: Nanos) -> TimeConstraint {
            let (period, exec) = self.tasks[i];
            TimeConstraint {
                deadline: r + period,
                cpu_estimate: Some(exec),
                notify_time: None,
                period: Some(period),
                release: Some(r),
            }
        }

        fn state(&self, i: usize) -> State {
            self.core.view().state(TaskId(i as u32))
        }

        /// Task `i` takes its next pending job (on CPU `on`, where it runs), if it has one.
        fn next_job(&mut self, i: usize, on: Option<usize>) -> bool {
            let t = TaskId(i as u32);
            let Some(r) = self.pending[i].pop_front() else {
                self.current[i] = None;
                self.core.set_time_constraint(t, None, self.now);
                return false;
            };
            self.current[i] = Some(r);
            self.left[i] = self.tasks[i].1;
            self.core.set_time_constraint(t, Some(self.constraint(i, r)), self.now);
            if let Some(c) = on {
                self.since[c] = self.now;
                self.core.request(c as CpuId);
            }
            true
        }

        /// The job of task `i`, running on `c`, is over: the next one, or it blocks.
        fn after_job(&mut self, i: usize, c: usize) {
            if !self.next_job(i, Some(c)) {
                let ran = self.now - self.since[c];
                self.core.stop(TaskId(i as u32), ran, Stop::Blocked, self.now);
            }
        }

        fn release(&mut self, i: usize) {
            let (period, exec) = self.tasks[i];
            if self.abort {
                self.timer(self.now + period, i, Some(self.now));
            }
            self.timer(self.now + period, i, None);
            self.pending[i].push_back(self.now);
            if self.state(i) == State::Blocked {
                self.next_job(i, None);
                self.left[i] = exec;
                self.core.wake(TaskId(i as u32), self.now);
            }
        }

        fn abort(&mut self, i: usize, r: Nanos) {
            if let Some(k) = self.pending[i].iter().position(|&p| p == r) {
                self.pending[i].remove(k);
                self.ended[i].insert(r, (self.now, true));
            } else if self.current[i] == Some(r) {
                self.ended[i].insert(r, (self.now, true));
                self.current[i] = None;
                match self.state(i) {
                    State::Running(c) => self.after_job(i, c as usize),
                    State::Runnable if !self.pending[i].is_empty() => {
                        self.next_job(i, None);
                    }
                    _ => {}
                }
            }
        }

        /// CPU `c` decides, until what it runs sticks (a task dispatched without a job, its job
        /// aborted while it waited, takes its next one or blocks at once).
        fn decide(&mut self, c: usize) {
            loop {
                self.core.clear_request(c as CpuId);
                if let Some(t) = self.core.view().running(c as CpuId) {
                    let ran = self.now - self.since[c];
                    self.left[t.idx()] -= ran;
                    self.core.stop(t, ran, Stop::Preempted, self.now);
                }
                let Some(d) = self.core.pick(c as CpuId, self.now) else { return };
                self.since[c] = self.now;
                if self.current[d.task.idx()].is_none() {
                    self.after_job(d.task.idx(), c);
                }
                if !self.core.requested(c as CpuId) {
                    return;
                }
            }
        }

        fn to(mut self, end: Nanos) -> Ends {
            let cpus = self.since.len();
            while self.now < end {
                for c in 0..cpus {
                    let Some(t) = self.core.view().running(c as CpuId) else { continue };
                    let i = t.idx();
                    if self.since[c] + self.left[i] == self.now {
                        let r = self.current[i].expect("a running task has a job");
                        self.ended[i].insert(r, (self.now, false));
                        self.after_job(i, c);
                    }
                }
                while let Some(&Reverse((at, _, i, what))) = self.timers.peek() {
                    if at > self.now {
                        break;
                    }
                    self.timers.pop();
                    match what {
                        None => self.release(i),
                        Some(r) => self.abort(i, r),
                    }
                }
                while let Some(c) = self.core.next_decision() {
                    self.decide(c as usize);
                }
                let mut next = self.timers.peek().map_or(end, |t| t.0 .0).min(end);
                for c in 0..cpus {
                    if let Some(t) = self.core.view().running(c as CpuId) {
                        next = next.min(self.since[c] + self.left[t.idx()]);
                    }
                }
                self.now = next;
            }
            self.ended.into_iter().map(|m| m.into_values().filter(|e| e.0 < end).collect()).collect()
        }
    }

    fn edf() -> Edf {
        Edf::new(1, 1).with_ties(Ties::Task)
    }

    fn done(ends: &[Nanos]) -> Vec<(Nanos, bool)> {
        ends.iter().map(|&e| (e, false)).collect()
    }

    #[test]
    fn each_event_places_the_best_waiting_job_from_its_own_cpu() {
        // SimSo 0.8.5, global EDF on 2 CPUs. At 10, T1's job (deadline 20) is released on CPU 1 (where
        // T1 last ran) and T0's (deadline 15) on CPU 0; both run jobs with deadline 20. CPU 1 decides
        // first and places the best waiting job, T0's, on itself (a tie between the two deadlines
        // 20 goes to the deciding CPU): T3 is preempted, not T2. CPU 0 then has nothing better
        // than its own. So T2's first job ends at 14, T0's fourth at 16 (released at 15 on CPU 1,
        // placed on idle CPU 0), T3's first at 20.
        let e = run(edf(), &[(5, 1), (10, 2), (20, 12), (20, 15)], 2, false, 40);
        assert_eq!(e[0], done(&[1, 6, 11, 16, 21, 26, 31, 36]));
        assert_eq!(e[1], done(&[2, 13, 22, 33]));
        assert_eq!(e[2], done(&[14, 34]));
        assert_eq!(e[3], done(&[20]));
    }

    #[test]
    fn an_idle_cpu_decides_before_one_that_saves_the_context_of_the_job_it_ran() {
        // SimSo, global EDF on 2 CPUs. At 10, T2's job ends on CPU 1 and T0's and T1's jobs (both
        // deadline 20) are released, T0's on CPU 1 and T1's on CPU 0, both idle then. CPU 1 first
        // takes a turn to save the context of the job that ended, so CPU 0 decides first and places
        // the best waiting job, T0's (first in task order), on itself; CPU 1 then takes T1's. At 12,
        // T2's next job (deadline 16) is released on CPU 1 and preempts T1 there (20 against 20: the
        // deciding CPU). T0's job ends at 13, T1's at 16.
        let e = run(edf(), &[(10, 3), (10, 5), (4, 2)], 2, false, 40);
        assert_eq!(e[0], done(&[3, 13, 23, 33]));
        assert_eq!(e[1], done(&[7, 16, 27, 36]));
        assert_eq!(e[2], done(&[2, 6, 10, 14, 18, 22, 26, 30, 34, 38]));
    }

    #[test]
    fn jobs_that_end_together_end_in_the_order_they_last_resumed() {
        // SimSo, global EDF on 2 CPUs. T1's first job (on CPU 0) and T0's (on CPU 1) both end at 3.
        // At time 0 CPU 1, with only its placement to handle, resumed T0's job before CPU 0, busy
        // with the other events, resumed T1's: so T0's end comes first, and CPU 1 places T2's job
        // (deadline 10) on itself. T2 then runs on CPU 1, and its second job, released there at 10
        // with T0's, ends at 15.
        let e = run(edf(), &[(10, 3), (6, 3), (10, 4)], 2, false, 40);
        assert_eq!(e[0], done(&[3, 13, 23, 33]));
        assert_eq!(e[1], done(&[3, 9, 15, 21, 27, 33, 39]));
        assert_eq!(e[2], done(&[7, 15, 25, 37]));
    }

    #[test]
    fn rate_monotonic_ties_between_running_jobs_go_to_the_deciding_cpu() {
        // SimSo, global RM on 2 CPUs (T2 most important, T0 and T1 equal). At 16 and at 20, T2's
        // jobs are released on CPU 0 (where T2 last ran) while T1 runs there and T0 on CPU 1: the
        // tie between the equal T0 and T1 goes to the deciding CPU, CPU 0, so T1 is preempted both
        // times. When T0's job ends at 21 on CPU 1, T1 (waiting) goes there: T0's second job ends at
        // 21, T1's at 28.
        let e = run(FixedPriority::fifo().with_ties(Ties::Task), &[(15, 6), (15, 10), (4, 2)], 2, false, 40);
        assert_eq!(e[0], done(&[6, 21]));
        assert_eq!(e[1], done(&[14, 28]));
        assert_eq!(e[2], done(&[2, 6, 10, 14, 18, 22, 26, 30, 34, 38]));
    }

    #[test]
    fn an_abortion_comes_at_the_notice_of_the_jobs_deadline_timer() {
        // SimSo, global EDF on 2 CPUs, jobs aborted at their deadlines. T2 needs its whole period
        // and never makes it. At 10 its first job, running on CPU 0, is aborted while T0's second
        // ends on CPU 1. The abortion comes at the notice of T2's deadline timer, posted when the job
        // was released (0), the end at the one T0's job posted when it last resumed (6): CPU 0
        // decides first and takes T1's new job (deadline 20, first in task order), CPU 1 takes T2's
        // (deadline 20). At 12 T0's job (deadline 18) is released on CPU 1 and preempts T2 there (a
        // tie of 20s goes to the deciding CPU): T1's second job ends at 16, T0's fourth at 22.
        let e = run(edf(), &[(6, 4), (10, 6), (10, 10)], 2, true, 40);
        assert_eq!(e[0], done(&[4, 10, 16, 22, 30, 34]));
        assert_eq!(e[1], done(&[6, 16, 26, 36]));
        assert_eq!(e[2], [(10, true), (20, true), (30, true)]);
    }

    #[test]
    fn with_affinities_the_best_job_that_may_go_somewhere_is_placed() {
        // Not SimSo's (it has no affinities): task 2 (deadline 5) runs on CPU 1, CPU 0 idles; task 0
        // (deadline 10, CPU 1 only) and task 1 (deadline 20) wake. Task 0 may neither preempt task 2
        // nor go to CPU 0, so task 1 goes there rather than nobody.
        let mut e = crate::test_core(edf(), 2);
        let only1 = TaskParams { cpus: Some(vec![1]), ..TaskParams::default() };
        for (i, p) in [(0, &only1), (1, &TaskParams::default()), (2, &only1)] {
            e.admit(TaskId(i), p, 0);
        }
        let c = |d| Some(TimeConstraint::deadline(d));
        e.set_time_constraint(TaskId(2), c(5), 0);
        e.wake(TaskId(2), 0);
        crate::settle(&mut e, 0);
        assert_eq!((e.view().running(0), e.view().running(1)), (None, Some(TaskId(2))));
        for (t, d) in [(0, 10), (1, 20)] {
            e.set_time_constraint(TaskId(t), c(d), 1);
            e.wake(TaskId(t), 1);
        }
        crate::settle(&mut e, 1);
        assert_eq!((e.view().running(0), e.view().running(1)), (Some(TaskId(1)), Some(TaskId(2))));
    }

    #[test]
    fn a_task_whose_slice_ends_goes_behind_its_equals() {
        // Not SimSo's (it has no slices): under `rr` two tasks of one priority take turns, and under
        // `edf` two tasks without a time constraint do.
        let policies: [Box<dyn Policy>; 2] =
            [Box::new(FixedPriority::rr(5).with_ties(Ties::Task)), Box::new(edf())];
        for p in policies {
            let mut core: Core = Core::new("turns", p, 1, false);
            for i in 0..2 {
                core.admit(TaskId(i), &TaskParams::default(), 0);
                core.wake(TaskId(i), 0);
            }
            crate::settle(&mut core, 0);
            let mut ran = Vec::new();
            for now in [5, 10, 15] {
                let t = core.view().running(0).expect("a task runs");
                ran.push(t.0);
                core.stop(t, 5, Stop::SliceEnd, now);
                crate::settle(&mut core, now);
            }
            assert_eq!(ran, [0, 1, 0]);
        }
    }

    #[test]
    fn a_release_of_a_busy_task_posts_the_next_even_at_an_instant_nothing_else_happens() {
        // Global EDF on 2 CPUs, driven by hand. A (period 10) runs late on CPU 0 from 0 to 27: its
        // releases at 10 and 20 come while it is busy, when nothing else happens (no call reaches
        // the policy then), but in SimSo each posts the next release. B (period 15) runs on CPU 1.
        // At 30 both release while both CPUs idle: B's notice was posted at 15, A's at 20, so B's
        // activation (on CPU 1) comes first and CPU 1 decides first: it takes the best job, A's
        // (deadline 40), and CPU 0 takes B's. (SimSo, replayed with these execution times.)
        let mut e = crate::test_core(edf(), 2);
        let (a, b) = (TaskId(0), TaskId(1));
        let job = |release, period, estimate| TimeConstraint {
            deadline: release + period,
            cpu_estimate: Some(estimate),
            notify_time: None,
            period: Some(period),
            release: Some(release),
        };
        e.admit(a, &TaskParams::default(), 0);
        e.admit(b, &TaskParams::default(), 0);
        e.set_time_constraint(a, Some(job(0, 10, 14)), 0);
        e.set_time_constraint(b, Some(job(0, 15, 12)), 0);
        e.wake(a, 0);
        e.wake(b, 0);
        crate::settle(&mut e, 0);
        assert_eq!((e.view().running(0), e.view().running(1)), (Some(a), Some(b)));
        e.stop(b, 12, Stop::Blocked, 12);
        crate::settle(&mut e, 12);
        // A's first job ends at 14 and hands over the one released at 10, which ends at 22.
        e.set_time_constraint(a, Some(job(10, 10, 8)), 14);
        e.request(0);
        crate::settle(&mut e, 14);
        e.set_time_constraint(b, Some(job(15, 15, 2)), 15);
        e.wake(b, 15);
        crate::settle(&mut e, 15);
        assert_eq!(e.view().running(1), Some(b));
        e.stop(b, 2, Stop::Blocked, 17);
        crate::settle(&mut e, 17);
        e.set_time_constraint(a, Some(job(20, 10, 5)), 22);
        e.request(0);
        crate::settle(&mut e, 22);
        e.stop(a, 5, Stop::Blocked, 27);
        crate::settle(&mut e, 27);
        e.set_time_constraint(b, Some(job(30, 15, 2)), 30);
        e.wake(b, 30);
        e.set_time_constraint(a, Some(job(30, 10, 5)), 30);
        e.wake(a, 30);
        crate::settle(&mut e, 30);
        assert_eq!((e.view().running(0), e.view().running(1)), (Some(b), Some(a)));
    }
}
