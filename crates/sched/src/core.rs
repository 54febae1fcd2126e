//! The one driver core: the protocol of [`Policy`] kept once, for the simulator and for the kernel.
//!
//! A driver (the simulator's event loop, `scx_smart`'s reader of kernel events, a test) owns a
//! [`Core`] and feeds it what happened: a task was admitted, woke, stopped on its CPU with what it
//! is billed, exited, got a time constraint or new parameters; a clock tick; the policy's timer.
//! The core keeps the [`View`] (each task's state, parameters, usage and charges; what runs where),
//! calls the policy, checks the policy's answers, and says which CPU must decide next
//! ([`Core::next_decision`]); the driver then stops what runs there (if anything) and asks
//! [`Core::pick`] what to dispatch. Everything a policy needs from a driver, and every rule of the
//! protocol, is here, so a policy tested in simulation is driven the same way in the kernel.
//!
//! **Deciding.** When tasks wake, each is offered the idle CPUs it may use
//! ([`Policy::select_cpu`]); the CPU it is given decides first. A woken task still waiting then
//! asks [`Policy::preempt_for`] which busy CPU, among those that have not decided since it woke,
//! should decide again. Last, each idle CPU decides if a task was queued since it last found
//! nothing (on a machine where every CPU sees the same tasks, one idle CPU that found nothing
//! speaks for all). A CPU also decides when the driver asks ([`Core::request`]: a slice ended, a
//! task's request changed), when the policy's tick or timer asks, and wherever a task runs when
//! another exits. The order is first come, first served, so the victim of the most urgent
//! preemption decides first. When every such decision is made, the policy may still kick a CPU
//! ([`Policy::kick`], sched_ext's `scx_bpf_kick_cpu`): it decides too, and the policy is asked again
//! until it kicks none (a policy that places an instant's tasks as a whole, rather than each woken
//! task on its own, realises its placement so).
//!
//! **Checked on every call** (a broken rule panics, naming the task and the CPU): a task runs on
//! at most one CPU, only where its affinity allows, only after [`Core::pick`] returned it there,
//! and every dispatch ends with exactly one [`Core::stop`] naming why; a blocked task never wakes
//! twice and is never picked; a task exits only when it does not run; `select_cpu` answers one of
//! the idle CPUs it was offered, `preempt_for` one of the busy CPUs it was shown; a policy that
//! does not declare notifications ([`crate::Entry::notifies`]) produces none, and a notification
//! names an admitted task; time never goes back.
//!
//! **Where it is weak.** A driver that cannot stop a task at once (the kernel: a CPU is kicked and
//! its task comes back later) keeps the CPU busy until the stop arrives; the core remembers that a
//! preemption is pending there ([`Core::next_decision`] returns a busy CPU once) and asks no
//! other preemption of it meanwhile.

use std::fmt;

use crate::cpuset::{CpuSet, Resched};
use crate::{
    Availability, CpuId, Dispatch, Nanos, Notification, Policy, Stop, TaskId, TaskParams, TimeConstraint,
    View,
};

/// Bound on the steps of one instant's decisions: a policy whose answers never settle (each
/// decision asking for another) is a bug, reported rather than looped on.
pub const MAX_STEPS_PER_INSTANT: usize = 10_000;

/// The driver core of one policy (see the module documentation). `P` is the policy's type, or
/// `dyn Policy` for one built by name ([`crate::build`]).
pub struct Core<P: ?Sized + Policy = dyn Policy> {
    name: String,
    notifies: bool,
    /// One queue for all CPUs ([`Policy::shares_one_queue`]): with no affinities, every CPU sees the
    /// same tasks.
    global: bool,
    v: View,
    /// CPUs that run nothing and are not about to decide; CPUs never used.
    idle: CpuSet,
    offline: CpuSet,
    /// CPUs to decide, in the order they were asked for; busy CPUs handed to the driver to stop,
    /// until their task stops.
    resched: Resched,
    preempting: CpuSet,
    /// Bumped whenever a task joins the policy's queues (a wake-up, a stop that did not block): an
    /// idle CPU that found nothing at an older epoch asks again. Epochs start at 1: 0 is never.
    epoch: u64,
    /// Tasks woken since the last decisions (with the epoch of their wake-up), and those still to
    /// be offered a preemption.
    woken: Vec<(TaskId, u64)>,
    to_preempt: Vec<(TaskId, u64)>,
    /// Per CPU: the epoch at which it last decided, and at which it last found nothing (0: never).
    picked_epoch: Vec<u64>,
    empty_epoch: Vec<u64>,
    /// Whether the driver expects tasks with an affinity (then every idle CPU is asked, as when the
    /// view has some); the epoch at which one idle CPU found nothing for all; the idle CPU asked last.
    expect_affine: bool,
    none_epoch: u64,
    probe: Option<(CpuId, u64)>,
    steps: usize,
    scratch_cpus: Vec<CpuId>,
    scratch_running: Vec<(CpuId, TaskId)>,
    decisions: u64,
    policy: Box<P>,
}

impl<P: ?Sized + Policy> fmt::Debug for Core<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Core").field("name", &self.name).field("cpus", &self.v.cpus()).finish_non_exhaustive()
    }
}

impl<P: ?Sized + Policy> Core<P> {
    /// A core for `policy`, built for `cpus` CPUs, named `name` in outputs. `notifies` says whether
    /// the policy may notify (the registry's [`crate::Entry::notifies`]).
    pub fn new(name: impl Into<String>, policy: Box<P>, cpus: usize, notifies: bool) -> Self {
        check!((1..=crate::MAX_CPUS).contains(&cpus), "{cpus} CPUs: a core drives 1 to {}", crate::MAX_CPUS);
        Core {
            name: name.into(),
            notifies,
            global: policy.shares_one_queue(),
            v: View::new(cpus),
            idle: CpuSet::full(cpus),
            offline: CpuSet::default(),
            resched: Resched::default(),
            preempting: CpuSet::default(),
            epoch: 1,
            woken: Vec::new(),
            to_preempt: Vec::new(),
            picked_epoch: vec![0; cpus],
            empty_epoch: vec![0; cpus],
            expect_affine: false,
            none_epoch: 0,
            probe: None,
            steps: 0,
            scratch_cpus: Vec::new(),
            scratch_running: Vec::new(),
            decisions: 0,
            policy,
        }
    }

    /// The policy's name in outputs (`smart`, `edf (partitioned)`, ...).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of CPUs.
    pub fn cpus(&self) -> usize {
        self.v.cpus()
    }

    /// What the core knows (the view every policy call gets).
    pub fn view(&self) -> &View {
        &self.v
    }

    /// The policy.
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// The policy, to change it (tests set up states a driver would take long to reach).
    #[cfg(test)]
    pub(crate) fn policy_mut(&mut self) -> &mut P {
        &mut self.policy
    }

    /// Whether the policy may notify.
    pub fn notifies(&self) -> bool {
        self.notifies
    }

    /// Whether the policy wants [`Core::tick`].
    pub fn uses_tick(&self) -> bool {
        self.policy.uses_tick()
    }

    /// Whether recent usage is kept (default yes): it costs an exponential per stop, and only
    /// availability ([`Core::availability`], SMART §3.4.3) reads it. A driver that never asks for
    /// availability (the simulator, unless a task adapts to it) turns it off before admitting tasks.
    pub fn keep_usage(&mut self, keep: bool) {
        self.v.keep_usage(keep);
    }

    /// The driver will admit tasks with an affinity: every idle CPU is asked for work, never one
    /// for all (without this, the core assumes so once the first such task is admitted).
    pub fn expect_affinities(&mut self) {
        self.expect_affine = true;
    }

    /// CPU `cpu` does not exist for scheduling (offline): it is never idle and never decides.
    pub fn set_offline(&mut self, cpu: CpuId) {
        check!(self.v.running(cpu).is_none(), "CPU {cpu} taken offline while it runs a task");
        self.offline.insert(cpu);
        self.idle.remove(cpu);
        self.resched.remove(cpu);
    }

    /// Time has passed to `now` (for the queries that read it: the view, the policy's answers).
    pub fn advance_to(&mut self, now: Nanos) {
        self.at(now);
    }

    fn at(&mut self, now: Nanos) {
        check!(now >= self.v.now(), "time went back from {} to {now} ns", self.v.now());
        self.v.set_now(now);
    }

    fn uniform(&self) -> bool {
        self.global && !self.v.any_affine() && !self.expect_affine
    }

    // ----- events -----

    /// Task `t` exists with parameters `p`; it is blocked until [`Core::wake`].
    pub fn admit(&mut self, t: TaskId, p: &TaskParams, now: Nanos) {
        self.at(now);
        self.v.admit(t, p);
        self.policy.admit(t, p, &self.v);
    }

    /// Task `t`, not running, is gone. A task gone can change what the policy prefers: every CPU
    /// that runs a task decides again.
    pub fn exit(&mut self, t: TaskId, now: Nanos) {
        self.at(now);
        self.policy.exit(t, &self.v);
        self.v.exit(t);
        self.request_busy();
    }

    /// Task `t`, blocked, is runnable.
    pub fn wake(&mut self, t: TaskId, now: Nanos) {
        self.at(now);
        self.v.wake(t);
        self.policy.wake(t, &self.v);
        self.epoch += 1;
        self.woken.push((t, self.epoch));
    }

    /// Task `t` left its CPU, billed `charged` for the time since it was dispatched there, for
    /// `why`. Returns the CPU, which is idle now.
    pub fn stop(&mut self, t: TaskId, charged: Nanos, why: Stop, now: Nanos) -> CpuId {
        self.at(now);
        let cpu = self.v.stop(t, charged, why != Stop::Blocked);
        self.preempting.remove(cpu);
        self.policy.stop(t, cpu, charged, why, &self.v);
        if why != Stop::Blocked {
            self.epoch += 1;
        }
        if !self.offline.contains(cpu) {
            self.idle.insert(cpu);
        }
        cpu
    }

    /// Sets (`Some`) or clears the time constraint of task `t`.
    pub fn set_time_constraint(&mut self, t: TaskId, c: Option<TimeConstraint>, now: Nanos) {
        self.at(now);
        self.live(t);
        self.policy.set_time_constraint(t, c, &self.v);
    }

    /// New parameters for task `t` (the policy sees the old ones in the view during the call).
    pub fn set_params(&mut self, t: TaskId, p: &TaskParams, now: Nanos) {
        self.at(now);
        self.live(t);
        self.policy.set_params(t, p, &self.v);
        self.v.set_params(t, p);
    }

    /// The user interacted with task `t`.
    pub fn interact(&mut self, t: TaskId, now: Nanos) {
        self.at(now);
        self.live(t);
        self.policy.interact(t, &self.v);
    }

    /// A clock tick on `cpu`: the CPU decides again if the policy asks.
    pub fn tick(&mut self, cpu: CpuId, now: Nanos) {
        self.at(now);
        if self.policy.tick(cpu, &self.v) {
            self.request(cpu);
        }
    }

    /// The earliest time at which the policy wants [`Core::timer`].
    pub fn next_timer(&self) -> Option<Nanos> {
        self.policy.next_timer()
    }

    /// The policy's timer is due: every busy CPU decides again if it asks (returns whether it did),
    /// and every idle one too while tasks wait (a policy that is not work-conserving, such as `cbs` or
    /// the class stack, may have kept them waiting until its timer: a replenishment, a new period).
    pub fn timer(&mut self, now: Nanos) -> bool {
        self.at(now);
        let again = self.policy.timer(&self.v);
        if again {
            self.request_busy();
            if self.v.runnable_count() > 0 {
                for c in 0..self.v.cpus() as CpuId {
                    if self.v.running(c).is_none() && !self.resched.contains(c) {
                        self.request(c);
                    }
                }
            }
        }
        again
    }

    /// Moves the policy's notifications into `out`.
    pub fn take_notifications(&mut self, out: &mut Vec<Notification>) {
        let before = out.len();
        self.policy.take_notifications(out);
        if out.len() == before {
            return;
        }
        check!(self.notifies, "policy `{}` notified but does not declare notifications", self.name);
        for n in &out[before..] {
            check!(self.v.known(n.task), "policy `{}` notified task {}, never admitted", self.name, n.task);
        }
    }

    /// Availability of task `t` (SMART §3.4.3) at `now`.
    pub fn availability(&mut self, t: TaskId, now: Nanos) -> Availability {
        self.at(now);
        self.live(t);
        self.policy.availability(t, &self.v)
    }

    fn live(&self, t: TaskId) {
        check!(self.v.state(t) != crate::State::Absent, "task {t} is not admitted");
    }

    // ----- deciding -----

    /// CPU `cpu` must decide again (a slice ended, its task's request changed, ...): it is handed
    /// out by [`Core::next_decision`] in its turn.
    pub fn request(&mut self, cpu: CpuId) {
        if self.offline.contains(cpu) {
            return;
        }
        self.idle.remove(cpu);
        self.resched.push(cpu);
    }

    fn request_busy(&mut self) {
        for c in 0..self.v.cpus() as CpuId {
            if self.v.running(c).is_some() {
                self.request(c);
            }
        }
    }

    /// Whether a preemption of `cpu` was handed to the driver and its task has not stopped yet.
    pub fn preempting(&self, cpu: CpuId) -> bool {
        self.preempting.contains(cpu)
    }

    /// Whether `cpu` waits to decide again.
    pub fn requested(&self, cpu: CpuId) -> bool {
        self.resched.contains(cpu)
    }

    /// `cpu` no longer waits to decide (the driver is deciding there now).
    pub fn clear_request(&mut self, cpu: CpuId) {
        self.resched.remove(cpu);
    }

    /// The next CPU that must decide at this instant, or `None` when every decision is made. If a
    /// task runs there, the driver stops it (`Stop::Preempted`) before it asks [`Core::pick`]; a
    /// driver that cannot stop it at once (the kernel) asks for the stop and picks when it comes.
    /// Panics after [`MAX_STEPS_PER_INSTANT`] steps without settling.
    #[inline]
    pub fn next_decision(&mut self) -> Option<CpuId> {
        // The common instant, kept short: nothing woke, no idle CPU probed (or the one probed found
        // work, which tells nothing), and either a CPU asked to decide or none is idle.
        if let Some((c, _)) = self.probe {
            if self.v.running(c).is_some() {
                self.probe = None;
            }
        }
        if self.probe.is_none() && self.woken.is_empty() && self.to_preempt.is_empty() {
            if let Some(c) = self.resched.pop() {
                self.steps += 1;
                if self.steps <= MAX_STEPS_PER_INSTANT {
                    if self.v.running(c).is_some() {
                        self.preempting.insert(c);
                    }
                    return Some(c);
                }
                self.resched.push(c);
            } else if self.idle.is_empty() {
                return self.kicked();
            }
        }
        self.next_decision_slow()
    }

    /// Every other decision of the instant is made: the CPU the policy kicks, if any (see
    /// [`Policy::kick`]), else `None` and the instant is settled.
    fn kicked(&mut self) -> Option<CpuId> {
        let Some(c) = self.policy.kick(&self.v) else {
            self.steps = 0;
            return None;
        };
        check!(
            (c as usize) < self.v.cpus() && !self.offline.contains(c),
            "policy `{}` kicked CPU {c}, which does not exist or is offline",
            self.name
        );
        self.steps += 1;
        check!(
            self.steps <= MAX_STEPS_PER_INSTANT,
            "policy `{}` did not settle at t={} ns (it kept kicking CPU {c})",
            self.name,
            self.v.now()
        );
        self.idle.remove(c);
        if self.v.running(c).is_some() {
            self.preempting.insert(c);
        }
        Some(c)
    }

    fn next_decision_slow(&mut self) -> Option<CpuId> {
        if let Some((c, epoch)) = self.probe.take() {
            // An idle CPU that found nothing speaks for every CPU when all see the same tasks.
            if self.v.running(c).is_none() && self.uniform() {
                self.none_epoch = epoch;
            }
        }
        loop {
            self.steps += 1;
            check!(
                self.steps <= MAX_STEPS_PER_INSTANT,
                "policy `{}` did not settle at t={} ns",
                self.name,
                self.v.now()
            );
            if !self.woken.is_empty() {
                self.offer_idle_cpus();
            }
            if let Some(c) = self.resched.pop() {
                if self.v.running(c).is_some() {
                    self.preempting.insert(c);
                }
                return Some(c);
            }
            if !self.to_preempt.is_empty() {
                self.ask_preemptions();
                if !self.resched.is_empty() {
                    continue;
                }
            }
            let epoch = self.epoch;
            if self.idle.is_empty() || self.uniform() && self.none_epoch == epoch {
                return self.kicked();
            }
            // The first idle CPU not asked since tasks last joined the queues, and that the policy says
            // might find work (one it says cannot is counted as asked).
            let mut found = None;
            for c in self.idle.iter() {
                if self.empty_epoch[c as usize] == epoch {
                    continue;
                }
                if !self.policy.might_find_work(c, &self.v) {
                    self.empty_epoch[c as usize] = epoch;
                    continue;
                }
                found = Some(c);
                break;
            }
            let Some(c) = found else {
                return self.kicked();
            };
            self.probe = Some((c, epoch));
            return Some(c);
        }
    }

    /// Each task that woke (and still waits) is offered the idle CPUs it may use; the one the
    /// policy selects decides. Every such task may still have to preempt a CPU afterwards.
    fn offer_idle_cpus(&mut self) {
        if self.idle.is_empty() {
            // No CPU to offer: each may only preempt (the common case on a busy machine).
            self.to_preempt.append(&mut self.woken);
            return;
        }
        for k in 0..self.woken.len() {
            let (t, e) = self.woken[k];
            if self.v.state(t) != crate::State::Runnable {
                continue;
            }
            if !self.idle.is_empty() {
                self.scratch_cpus.clear();
                let v = &self.v;
                self.scratch_cpus.extend(self.idle.iter().filter(|&c| v.allows(t, c)));
                if !self.scratch_cpus.is_empty() {
                    let c = self.policy.select_cpu(t, self.v.last_cpu(t), &self.scratch_cpus, &self.v);
                    check!(
                        self.scratch_cpus.contains(&c),
                        "policy `{}` selected CPU {c} for task {t}, not one of the idle CPUs {:?}",
                        self.name,
                        self.scratch_cpus
                    );
                    self.request(c);
                }
            }
            // If the CPU it was offered takes another task, it may still preempt elsewhere.
            self.to_preempt.push((t, e));
        }
        self.woken.clear();
    }

    /// Each woken task still waiting asks the policy which CPU to preempt, among those it may use
    /// that run something, have not decided since it woke and are not being preempted already.
    fn ask_preemptions(&mut self) {
        for k in 0..self.to_preempt.len() {
            let (t, e) = self.to_preempt[k];
            if self.v.state(t) != crate::State::Runnable {
                continue;
            }
            self.scratch_running.clear();
            for (c, r) in self.v.running_tasks() {
                if self.picked_epoch[c as usize] < e
                    && !self.resched.contains(c)
                    && !self.preempting.contains(c)
                    && self.v.allows(t, c)
                {
                    self.scratch_running.push((c, r));
                }
            }
            if self.scratch_running.is_empty() {
                continue;
            }
            if let Some(c) = self.policy.preempt_for(t, self.v.last_cpu(t), &self.scratch_running, &self.v) {
                check!(
                    self.scratch_running.iter().any(|r| r.0 == c),
                    "policy `{}` would preempt CPU {c} for task {t}, not one of {:?}",
                    self.name,
                    self.scratch_running
                );
                self.request(c);
            }
        }
        self.to_preempt.clear();
    }

    /// CPU `cpu` runs nothing: the policy's choice for it, now running there; `None` to idle.
    pub fn pick(&mut self, cpu: CpuId, now: Nanos) -> Option<Dispatch> {
        self.at(now);
        check!(!self.offline.contains(cpu), "CPU {cpu} is offline");
        check!(
            self.v.running(cpu).is_none(),
            "CPU {cpu} asked to pick while it runs {:?}",
            self.v.running(cpu)
        );
        self.decisions += 1;
        self.picked_epoch[cpu as usize] = self.epoch;
        let Some(d) = self.policy.pick_next(cpu, &self.v) else {
            self.empty_epoch[cpu as usize] = self.epoch;
            self.idle.insert(cpu);
            return None;
        };
        check!(d.slice != Some(0), "policy `{}` gave task {} a slice of 0 ns", self.name, d.task);
        self.v.dispatch(d.task, cpu);
        self.idle.remove(cpu);
        Some(d)
    }

    /// A forecast for a driver that must act before it can ask (the kernel, at a wake-up): the CPU
    /// that would decide first if blocked task `t` woke now, as [`Core::next_decision`] would name it:
    /// the idle CPU the policy selects for it if one it may use is idle ([`Policy::select_cpu`]),
    /// else the busy CPU the policy would preempt for it ([`Policy::preempt_for`]), else none. The
    /// policy answers from what it knows of `t` while it sleeps (its parameters, the time constraint
    /// it announced before sleeping).
    pub fn forecast_wake(&self, t: TaskId) -> Option<CpuId> {
        if self.v.state(t) != crate::State::Blocked {
            return None;
        }
        let prev = self.v.last_cpu(t);
        let idle: Vec<CpuId> = self.idle.iter().filter(|&c| self.v.allows(t, c)).collect();
        if !idle.is_empty() {
            return Some(self.policy.select_cpu(t, prev, &idle, &self.v)).filter(|c| idle.contains(c));
        }
        let running: Vec<(CpuId, TaskId)> = self
            .v
            .running_tasks()
            .filter(|&(c, _)| {
                self.v.allows(t, c) && !self.preempting.contains(c) && !self.resched.contains(c)
            })
            .collect();
        if running.is_empty() {
            return None;
        }
        self.policy.preempt_for(t, prev, &running, &self.v).filter(|c| running.iter().any(|r| r.0 == *c))
    }

    /// A CPU that runs nothing while a runnable task it may run waits, if there is one (what a
    /// work-conserving policy never leaves once every decision is made). O(CPUs × tasks): for tests.
    pub fn stranded(&self) -> Option<(CpuId, TaskId)> {
        let waiting: Vec<TaskId> =
            self.v.live().filter(|&t| self.v.state(t) == crate::State::Runnable).collect();
        (0..self.v.cpus() as CpuId)
            .filter(|&c| self.v.running(c).is_none() && !self.offline.contains(c))
            .find_map(|c| waiting.iter().find(|&&t| self.v.allows(t, c)).map(|&t| (c, t)))
    }

    /// Counters: decisions, then the policy's own.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut out = vec![("decisions", self.decisions)];
        out.extend(self.policy.counters());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{settle, Running, TaskId};

    /// A policy that plans which task each CPU runs (`want`) and realises it by kicks alone;
    /// `restless`: it kicks CPU 0 whatever runs there.
    #[derive(Default)]
    struct Planner {
        want: Vec<Option<TaskId>>,
        queued: Vec<TaskId>,
        restless: bool,
    }

    impl Policy for Planner {
        fn admit(&mut self, _t: TaskId, _p: &TaskParams, _v: &View) {}
        fn exit(&mut self, _t: TaskId, _v: &View) {}
        fn wake(&mut self, t: TaskId, _v: &View) {
            self.queued.push(t);
        }
        fn stop(&mut self, t: TaskId, _cpu: CpuId, _charged: Nanos, why: Stop, _v: &View) {
            if why != Stop::Blocked {
                self.queued.push(t);
            }
        }
        fn preempt_for(&self, _w: TaskId, _p: Option<CpuId>, _r: &Running, _v: &View) -> Option<CpuId> {
            None
        }
        fn pick_next(&mut self, cpu: CpuId, _v: &View) -> Option<Dispatch> {
            let t = self.want[cpu as usize]?;
            let i = self.queued.iter().position(|&q| q == t)?;
            self.queued.remove(i);
            Some(Dispatch { task: t, slice: None })
        }
        fn set_params(&mut self, _t: TaskId, _p: &TaskParams, _v: &View) {}
        fn availability(&self, _t: TaskId, _v: &View) -> Availability {
            Availability { consumption_rate: 0.0, allocation_rate: 0.0 }
        }
        fn kick(&mut self, v: &View) -> Option<CpuId> {
            if self.restless {
                return Some(0);
            }
            (0..v.cpus() as CpuId).find(|&c| {
                let w = self.want[c as usize];
                v.running(c) != w && w.is_none_or(|t| self.queued.contains(&t))
            })
        }
    }

    #[test]
    fn a_cpu_the_policy_kicks_decides_once_every_other_decision_is_made() {
        let planner = Planner { want: vec![Some(TaskId(0)), None], ..Planner::default() };
        let mut core = Core::new("planner", Box::new(planner), 2, false);
        for i in 0..2 {
            core.admit(TaskId(i), &TaskParams::default(), 0);
        }
        core.wake(TaskId(0), 0);
        settle(&mut core, 0);
        assert_eq!(core.view().running(0), Some(TaskId(0)));
        // Task 1 wakes and the policy wants it on CPU 0, task 0 on CPU 1. Idle CPU 1 is offered to
        // task 1 and finds nothing it may take (task 0 still runs on 0); then the policy kicks CPU 0
        // (task 1 there), and CPU 1, where task 0 may go now.
        core.policy_mut().want = vec![Some(TaskId(1)), Some(TaskId(0))];
        core.wake(TaskId(1), 5);
        assert_eq!(settle(&mut core, 5), [1, 0, 1]);
        assert_eq!((core.view().running(0), core.view().running(1)), (Some(TaskId(1)), Some(TaskId(0))));
        // Nothing to change: no CPU decides.
        assert_eq!(settle(&mut core, 6), []);
    }

    #[test]
    #[should_panic(expected = "did not settle at t=0 ns (it kept kicking CPU 0)")]
    fn a_policy_that_keeps_kicking_is_reported() {
        let planner = Planner { want: vec![None], restless: true, ..Planner::default() };
        let mut core = Core::new("restless", Box::new(planner), 1, false);
        settle(&mut core, 0);
    }
}
