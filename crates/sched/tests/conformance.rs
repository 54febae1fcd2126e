//! The conformance suite: every entry of the registry, global and partitioned, on 1 to 8 CPUs, driven
//! through the [`Core`] by the random world of [`sched::testing`], with the protocol checked on every
//! call (the core's own assertions: one CPU per task, one task per CPU, a dispatch only of a runnable
//! task where its affinity allows, a stop only of a running task, answers of `select_cpu` and
//! `preempt_for` among the CPUs offered) and, here, after every instant:
//!
//! * every stop is charged exactly once: what the driver billed, what the core recorded and what the
//!   policy was told agree, task by task;
//! * no CPU is idle while a runnable task that may run there waits, for entries that declare
//!   themselves work-conserving;
//! * only entries that declare notifications notify;
//! * the world and the core agree on what runs where;
//! * the same events give the same decisions (each run twice).
//!
//! A new entry of the registry is covered without being named here.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use sched::partition::Partitioned;
use sched::testing::{Happening, Shape, World};
use sched::{
    Availability, Core, CpuId, Dispatch, Entry, Nanos, Notification, OptReader, Options, Policy, Running,
    Stop, TaskId, TaskParams, TimeConstraint, View, REGISTRY,
};

/// What the policy was told, as it was told.
#[derive(Default)]
struct Told {
    /// Per task: the sum of the charges of its stops, and their number.
    stops: HashMap<TaskId, (Nanos, u64)>,
    notifications: usize,
}

/// A policy that records what it hears in a [`Told`] and passes it on.
struct Spy {
    inner: Box<dyn Policy>,
    told: Rc<RefCell<Told>>,
}

impl Policy for Spy {
    fn admit(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        self.inner.admit(t, p, v)
    }
    fn exit(&mut self, t: TaskId, v: &View) {
        self.inner.exit(t, v)
    }
    fn wake(&mut self, t: TaskId, v: &View) {
        self.inner.wake(t, v)
    }
    fn stop(&mut self, t: TaskId, cpu: CpuId, charged: Nanos, why: Stop, v: &View) {
        {
            let mut told = self.told.borrow_mut();
            let e = told.stops.entry(t).or_default();
            e.0 += charged;
            e.1 += 1;
        }
        self.inner.stop(t, cpu, charged, why, v)
    }
    fn tick(&mut self, cpu: CpuId, v: &View) -> bool {
        self.inner.tick(cpu, v)
    }
    fn uses_tick(&self) -> bool {
        self.inner.uses_tick()
    }
    fn shares_one_queue(&self) -> bool {
        self.inner.shares_one_queue()
    }
    fn might_find_work(&self, cpu: CpuId, v: &View) -> bool {
        self.inner.might_find_work(cpu, v)
    }
    fn select_cpu(&self, t: TaskId, prev: Option<CpuId>, idle: &[CpuId], v: &View) -> CpuId {
        self.inner.select_cpu(t, prev, idle, v)
    }
    fn preempt_for(&self, w: TaskId, prev: Option<CpuId>, running: &Running, v: &View) -> Option<CpuId> {
        self.inner.preempt_for(w, prev, running, v)
    }
    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        self.inner.pick_next(cpu, v)
    }
    fn set_time_constraint(&mut self, t: TaskId, c: Option<TimeConstraint>, v: &View) {
        self.inner.set_time_constraint(t, c, v)
    }
    fn set_params(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        self.inner.set_params(t, p, v)
    }
    fn interact(&mut self, t: TaskId, v: &View) {
        self.inner.interact(t, v)
    }
    fn availability(&self, t: TaskId, v: &View) -> Availability {
        self.inner.availability(t, v)
    }
    fn take_notifications(&mut self, out: &mut Vec<Notification>) {
        let before = out.len();
        self.inner.take_notifications(out);
        self.told.borrow_mut().notifications += out.len() - before;
    }
    fn next_timer(&self) -> Option<Nanos> {
        self.inner.next_timer()
    }
    fn timer(&mut self, v: &View) -> bool {
        self.inner.timer(v)
    }
    fn kick(&mut self, v: &View) -> Option<CpuId> {
        self.inner.kick(v)
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.inner.counters()
    }
}

/// Entry `e` with options `opts` on `cpus` CPUs (partitioned: one copy per CPU) behind a spy, in its
/// core.
fn core_of(e: &Entry, opts: &Options, partitioned: bool, cpus: usize, told: &Rc<RefCell<Told>>) -> Core {
    let build = |n| (e.build)(&mut OptReader::new(e.name, opts), n).expect("the options build");
    let inner: Box<dyn Policy> = if partitioned {
        Box::new(Partitioned::new((0..cpus).map(|_| build(1)).collect()))
    } else {
        build(cpus)
    };
    let spy: Box<dyn Policy> = Box::new(Spy { inner, told: Rc::clone(told) });
    Core::new(e.name, spy, cpus, e.notifies)
}

/// Drives entry `e` for `steps` happenings from `seed`; checks everything the module documentation
/// lists; returns the decisions made, in order, and the number of notifications.
fn drive(e: &Entry, partitioned: bool, cpus: usize, seed: u64, steps: usize) -> (Vec<String>, usize) {
    drive_with(e, &Options::new(), e.work_conserving, partitioned, cpus, seed, steps)
}

/// [`drive`] with options `opts`; work conservation is checked if `conserving`.
fn drive_with(
    e: &Entry,
    opts: &Options,
    conserving: bool,
    partitioned: bool,
    cpus: usize,
    seed: u64,
    steps: usize,
) -> (Vec<String>, usize) {
    let told = Rc::new(RefCell::new(Told::default()));
    let mut core = core_of(e, opts, partitioned, cpus, &told);
    let shape = Shape { cpus, max_tasks: 2 + cpus * 2, bound: partitioned, constraints: true };
    let mut world = World::new(seed, shape);
    let mut billed: HashMap<TaskId, (Nanos, u64)> = HashMap::new();
    let mut log = Vec::new();
    let mut notes = Vec::new();
    let what = |step: usize| {
        format!("{} (partitioned: {partitioned}) on {cpus} CPUs, seed {seed}, step {step}", e.name)
    };
    for step in 0..steps {
        let h = world.step();
        let now = world.now();
        let mut bill = |t: TaskId, ran: Nanos| {
            let b = billed.entry(t).or_default();
            b.0 += ran;
            b.1 += 1;
        };
        if let Happening::Stop { task, ran, .. } = h {
            bill(task, ran);
        }
        h.apply(&mut core, now);
        if core.next_timer().is_some_and(|t| t <= now) {
            core.timer(now);
        }
        while let Some(c) = core.next_decision() {
            if core.view().running(c).is_some() {
                let (t, ran) = world.preempted(c);
                core.stop(t, ran, Stop::Preempted, now);
                bill(t, ran);
            }
            if let Some(d) = core.pick(c, now) {
                world.dispatched(c, d.task, d.slice);
                log.push(format!("{now} cpu {c} task {} slice {:?}", d.task, d.slice));
            }
        }
        core.take_notifications(&mut notes);
        if conserving {
            assert_eq!(
                core.stranded(),
                None,
                "{}: a CPU idles while a task that may run there waits",
                what(step)
            );
        }
        for c in 0..cpus as CpuId {
            assert_eq!(core.view().running(c), world.running(c), "{}: CPU {c}", what(step));
        }
    }
    let told = told.borrow();
    assert!(e.notifies || told.notifications == 0, "{}: notified", what(steps));
    assert_eq!(notes.len(), told.notifications, "{}: notifications lost on the way", what(steps));
    for (t, b) in &billed {
        assert_eq!(core.view().billed(*t), *b, "{}: task {t} as the core billed it", what(steps));
        assert_eq!(told.stops.get(t), Some(b), "{}: task {t} as the policy was told", what(steps));
    }
    assert_eq!(
        told.stops.len(),
        billed.len(),
        "{}: the policy was told of stops that did not happen",
        what(steps)
    );
    (log, notes.len())
}

#[test]
fn every_policy_keeps_the_protocol_global_and_partitioned_on_1_to_8_cpus() {
    for e in REGISTRY {
        let mut notified = 0;
        for partitioned in [false, true] {
            for cpus in [1, 2, 3, 4, 8] {
                for seed in 1..=4 {
                    let (a, n) = drive(e, partitioned, cpus, seed, 10_000);
                    assert!(a.len() > 1_000, "{}: only {} dispatches in 10,000 happenings", e.name, a.len());
                    notified += n;
                    if seed == 1 {
                        let b = drive(e, partitioned, cpus, seed, 10_000);
                        assert_eq!(
                            (a, n),
                            b,
                            "{} on {cpus} CPUs: the same events gave other decisions",
                            e.name
                        );
                    }
                }
            }
        }
        // The world's constraints are varied enough that a policy that notifies does.
        assert_eq!(notified > 0, e.notifies, "{}: {notified} notifications", e.name);
    }
}

#[test]
fn ties_task_keeps_the_protocol_global_and_partitioned_on_1_to_8_cpus() {
    // `ties = "task"` replays SimSo's dispatcher and realises its placement by kicks: the protocol
    // holds whatever happens (affinities, yields, slices, new parameters, exits, constraints at any
    // time), no CPU idles while a task that may run there waits, and the same events give the
    // same decisions.
    let opts = Options::from([("ties".to_string(), sched::OptValue::Str("task".into()))]);
    for name in ["edf", "fifo", "rr"] {
        let e = sched::entry(name).expect("registered");
        for partitioned in [false, true] {
            for cpus in [1, 2, 3, 4, 8] {
                for seed in 1..=4 {
                    let (a, _) = drive_with(e, &opts, true, partitioned, cpus, seed, 10_000);
                    assert!(a.len() > 1_000, "{name}: only {} dispatches in 10,000 happenings", a.len());
                    if seed == 1 {
                        let (b, _) = drive_with(e, &opts, true, partitioned, cpus, seed, 10_000);
                        assert_eq!(a, b, "{name} on {cpus} CPUs: the same events gave other decisions");
                    }
                }
            }
        }
    }
}
