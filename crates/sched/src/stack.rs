//! Scheduling classes stacked by priority, as kernels stack them: a policy made of policies.
//!
//! **Specification.** Linux's list of scheduling classes (`kernel/sched/sched.h` of Linux 6.12: stop,
//! deadline, real time, fair, ext, idle; `pick_next_task` asks each in turn and the first that has a task
//! wins, and `wakeup_preempt` lets a task of a higher class preempt any task of a lower one), and UNIX
//! SVR4's global priorities (Nieh 1999, ch. 2 and §6.4: real time 100..159 above system 60..99 above
//! time sharing 0..59; the dispatcher runs the highest global priority).
//!
//! **The stack.** `[scheduler] classes` names its classes from the highest to the lowest, each a policy of
//! the registry: a list (`classes = ["svr4-rt", "sys", "svr4-ts"]`) or a preset ([`PRESETS`]: `svr4`,
//! `solaris`, `linux` (6.12), `linux-6.1`). Each class is that policy, built for the machine's CPUs with
//! its own options (`[scheduler.eevdf] base_slice = "3ms"`), and keeps a view of its own tasks only
//! (its queues, sums and searches see no task of another class). A task's `class` names its class: the
//! policy's name, or a kind of task the policy serves ([`crate::Entry::classes`]: `fifo` and `rr` for
//! `rt`, `deadline` for `cbs`, `fair` for `eevdf` and `cfs`, `rt`, `sys` and `ts` for the SVR4 classes),
//! the first class that serves it from the top; a task without one is in the lowest class, as a new
//! Linux thread is `SCHED_OTHER`, unless it has a reservation (`runtime`, `dl_period`) and the stack
//! has `cbs`: it is then a `SCHED_DEADLINE` task. This file is the only code that knows of classes: every other policy
//! is asked about its own tasks only.
//!
//! **Rules.**
//! * A CPU asks each class in turn, from the highest, for a task (`pick_next_task`); the first answer
//!   runs.
//! * A woken task preempts the CPU running the task of the lowest class below its own, if there is one
//!   (ties: its previous CPU, then the lowest number, as [`crate::least_important`]); otherwise its own
//!   class decides among the CPUs running tasks of that class (`wakeup_preempt`: a lower class never
//!   preempts a higher one). An idle CPU is offered to it by its own class's `select_cpu`.
//! * **Real-time throttling** (Linux, `sched_rt_runtime_us`/`sched_rt_period_us`, default 950 ms per 1 s;
//!   `kernel/sched/rt.c`, `sched_rt_runtime_exceeded`, with `RT_RUNTIME_SHARE` off as 6.12 has it): on each
//!   CPU, the `rt` class's tasks are billed against `rt_runtime` in every `rt_period`; once it is used, the
//!   class is skipped on that CPU until the next period, whether or not anything else wants the CPU (the
//!   CPU idles). A dispatch of the class is cut at what is left, and a task so cut is put back as a
//!   preempted one (the kernel dequeues the whole throttled run queue, the tasks keep their places).
//!   On by default when the stack has Linux's `rt` class (`rt_throttling`).
//! * **The fair server** (Linux 6.12, `fair_server_init`, `dl_server`, deferred: `dl_defer`): a deadline
//!   server per CPU that guarantees the fair class `fair_server_runtime` (50 ms) in every
//!   `fair_server_period` (1 s). The fair class's time on a CPU counts against it; when fair tasks wait on
//!   a CPU whose fair class has got less than its runtime in this period, and the time left in the period
//!   is down to what it still owes (zero laxity, which is what the deferred server waits for), the fair
//!   class runs there ahead of every class but `cbs` (the server is a deadline entity) until the runtime is
//!   given. On by default when the stack has `eevdf` (Linux 6.12 and later; 6.1's `cfs` had none).
//!
//! **Simplified.** Periods are aligned to time 0 on every CPU (the kernel's throttling period is one
//! timer for the whole system, started when a real-time task is queued while it is idle, so a real run
//! starts at any phase of it: a run of d periods holds d − 1 whole throttled windows and two partial
//! ones, where the model holds d whole ones); throttled time does not carry over into the next period
//! (the kernel subtracts the overrun); the fair server is tried after `cbs` rather than by EDF among
//! the deadline tasks; a class's policy is asked `tick` only on a CPU running one of its tasks (as
//! `task_tick` of the current task's class). Stop, ext and idle classes are not modelled (`SCHED_IDLE` is part of the fair class).
//! A task's class changes (`set_params` with another `class`) at once if it is not running, at its
//! next stop if it is. A policy that notifies (`smart`) cannot be a class yet: the stack passes no
//! notifications on.
//!
//! **Tie-break.** Between classes, the higher first; within a class, that class's own.

use std::cell::RefCell;

use crate::registry::{entry, opt, Entry, OptReader, Pace, PolicyError};
use crate::{
    least_important, Availability, CpuId, Dispatch, Nanos, OptValue, Options, Policy, Running, State, Stop,
    TaskId, TaskParams, TimeConstraint, View, MS,
};

/// The preset stacks (`classes = "<name>"`), each from the highest class to the lowest.
pub const PRESETS: &[(&str, &[&str])] = &[
    ("svr4", &["svr4-rt", "sys", "svr4-ts"]),
    ("solaris", &["svr4-rt", "sys", "ts"]),
    ("linux", &["cbs", "rt", "eevdf"]),
    ("linux-6.1", &["cbs", "rt", "cfs"]),
];

/// The stack `classes` of a scenario is when it gives none.
pub const DEFAULT_PRESET: &str = "linux";

/// Linux's default real-time throttling: 950 ms in every 1 s (`sched_rt_runtime_us`, `sched_rt_period_us`).
pub const RT_RUNTIME: Nanos = 950 * MS;
/// See [`RT_RUNTIME`].
pub const RT_PERIOD: Nanos = 1000 * MS;
/// Linux 6.12's fair server: 50 ms in every 1 s (`fair_server_init`, `dl_server` defaults).
pub const FAIR_SERVER_RUNTIME: Nanos = 50 * MS;
/// See [`FAIR_SERVER_RUNTIME`].
pub const FAIR_SERVER_PERIOD: Nanos = 1000 * MS;

/// The class policy real-time throttling applies to (Linux's real-time class).
const THROTTLED: &str = "rt";
/// The classes the fair server serves, and those where it is on by default (Linux 6.12 on).
const SERVED: &[&str] = &["eevdf", "cfs"];
const SERVED_BY_DEFAULT: &[&str] = &["eevdf"];
/// The class the fair server does not go ahead of (it is a deadline entity among its tasks).
const DEADLINE: &str = "cbs";

/// No layer (a task not admitted).
const NONE: u8 = u8::MAX;

/// One class: its policy and its view of its own tasks.
struct Layer {
    name: &'static str,
    policy: Box<dyn Policy>,
    view: View,
    /// Its tasks that are runnable and not running.
    queued: usize,
}

/// A CPU-time budget per CPU in aligned periods: real-time throttling, or the fair server.
#[derive(Clone, Debug)]
struct Budget {
    layer: usize,
    runtime: Nanos,
    period: Nanos,
    /// The period (`now / period`) the counts are of.
    window: u64,
    /// Per CPU: the layer's time billed there in this period.
    used: Vec<Nanos>,
    /// Per CPU: the fair server's boost timer fired in this period.
    fired: Vec<bool>,
}

impl Budget {
    fn new(layer: usize, runtime: Nanos, period: Nanos, cpus: usize) -> Budget {
        Budget { layer, runtime, period, window: 0, used: vec![0; cpus], fired: vec![false; cpus] }
    }
    /// Brings the counts to the period of `now`; whether a new period began with a CPU's budget used
    /// up in the last one (that CPU must decide again).
    fn roll(&mut self, now: Nanos) -> bool {
        let w = now / self.period;
        if w == self.window {
            return false;
        }
        self.window = w;
        let exhausted = self.used.iter().any(|&u| u >= self.runtime);
        self.used.iter_mut().for_each(|u| *u = 0);
        self.fired.iter_mut().for_each(|f| *f = false);
        exhausted
    }
    /// Bills `charged` on `cpu` at `now`: the part that falls in this period.
    fn charge(&mut self, cpu: CpuId, charged: Nanos, now: Nanos) {
        let since = now.saturating_sub(self.window.saturating_mul(self.period));
        let u = &mut self.used[cpu as usize];
        *u = u.saturating_add(charged.min(since));
    }
    fn left(&self, cpu: CpuId) -> Nanos {
        self.runtime.saturating_sub(self.used[cpu as usize])
    }
    fn end(&self) -> Nanos {
        (self.window + 1).saturating_mul(self.period)
    }
}

/// What runs on a CPU, as the stack dispatched it.
#[derive(Copy, Clone, Debug, Default)]
struct OnCpu {
    layer: u8,
    /// The stack cut the class's slice (a budget): a slice end is then a preemption to the class.
    cut: bool,
    /// It runs because the fair server is owed time there.
    boosted: bool,
}

/// Classes stacked by priority (see the module documentation).
pub struct Stack {
    layers: Vec<Layer>,
    /// Per task: its layer ([`NONE`] when not admitted), and a layer to move to at its next stop.
    of: Vec<u8>,
    moving: Vec<u8>,
    on_cpu: Vec<Option<OnCpu>>,
    rt: Option<Budget>,
    fair: Option<Budget>,
    now: Nanos,
    /// A throttled class's new period began: every CPU decides again at the next timer.
    unthrottled: bool,
    scratch: RefCell<Vec<(CpuId, TaskId)>>,
    throttled: u64,
    boosts: u64,
}

/// How a stack is configured, read from its options.
struct Config {
    classes: Vec<&'static crate::Entry>,
    rt: Option<(usize, Nanos, Nanos)>,
    fair: Option<(usize, Nanos, Nanos)>,
}

/// The classes a stack's options name, from the highest: `classes` as a list of policies or a preset.
fn class_entries(o: &mut OptReader<'_>) -> Result<Vec<&'static crate::Entry>, PolicyError> {
    let names: Vec<String> = match o.raw("classes") {
        None => vec![DEFAULT_PRESET.to_string()],
        Some(OptValue::Str(s)) => vec![s.clone()],
        Some(OptValue::List(l)) => l.clone(),
        Some(_) => {
            return Err(o.error(
                "classes",
                "expected a preset (\"linux\") or a list of policies ([\"rt\", \"eevdf\"])",
            ))
        }
    };
    let names: Vec<String> = match names.as_slice() {
        [one] => match PRESETS.iter().find(|(p, _)| p == one) {
            Some((_, list)) => list.iter().map(|s| s.to_string()).collect(),
            None => names,
        },
        _ => names,
    };
    let presets: Vec<&str> = PRESETS.iter().map(|(p, _)| *p).collect();
    if names.is_empty() {
        return Err(o.error(
            "classes",
            &format!("empty: give a preset ({}) or a list of policies", presets.join(", ")),
        ));
    }
    if names.len() > usize::from(NONE) {
        return Err(o.error("classes", &format!("{} classes: a stack has at most {}", names.len(), NONE)));
    }
    let mut out: Vec<&'static crate::Entry> = Vec::with_capacity(names.len());
    for n in &names {
        let e = entry(n).filter(|e| e.class_names.is_none()).ok_or_else(|| {
            o.error(
                "classes",
                &format!(
                    "`{n}` is neither a preset ({}) nor a policy that can be a class (see `smartsim policies`)",
                    presets.join(", ")
                ),
            )
        })?;
        if e.notifies {
            return Err(o.error(
                "classes",
                &format!("`{n}` notifies its tasks, and a class stack does not pass notifications on (yet)"),
            ));
        }
        if out.iter().any(|x| x.name == e.name) {
            return Err(o.error("classes", &format!("`{n}` is given twice: a class is one policy")));
        }
        out.push(e);
    }
    Ok(out)
}

/// A budget option pair: whether it is on (`on_key`, default `on`), and its runtime and period.
fn budget(
    o: &mut OptReader<'_>,
    layer: Option<usize>,
    on: bool,
    keys: (&'static str, &'static str, &'static str),
    defaults: (Nanos, Nanos),
    what: &str,
) -> Result<Option<(usize, Nanos, Nanos)>, PolicyError> {
    let (on_key, runtime_key, period_key) = keys;
    let given = o.has(on_key);
    let enabled = o.bool(on_key, on && layer.is_some())?;
    let runtime = o.time(runtime_key, defaults.0)?;
    let period = o.time(period_key, defaults.1)?;
    if period == 0 {
        return Err(o.error(period_key, "must be longer than 0"));
    }
    if runtime > period {
        return Err(o.error(
            runtime_key,
            &format!("longer than {period_key}: {what} gives at most the whole period"),
        ));
    }
    match (enabled, layer) {
        (false, _) => Ok(None),
        (true, Some(l)) => Ok(Some((l, runtime, period))),
        (true, None) => Err(o.error(
            on_key,
            &format!(
                "{what} needs its class in the stack{}",
                if given { "" } else { " (it is on by default)" }
            ),
        )),
    }
}

fn config(o: &mut OptReader<'_>) -> Result<Config, PolicyError> {
    let classes = class_entries(o)?;
    let find = |names: &[&str]| classes.iter().position(|e| names.contains(&e.name));
    let rt_layer = find(&[THROTTLED]);
    let fair_layer = find(SERVED);
    let fair_default = find(SERVED_BY_DEFAULT).is_some();
    let rt = budget(
        o,
        rt_layer,
        true,
        ("rt_throttling", "rt_runtime", "rt_period"),
        (RT_RUNTIME, RT_PERIOD),
        "real-time throttling",
    )?;
    let fair = budget(
        o,
        fair_layer,
        fair_default,
        ("fair_server", "fair_server_runtime", "fair_server_period"),
        (FAIR_SERVER_RUNTIME, FAIR_SERVER_PERIOD),
        "the fair server",
    )?;
    Ok(Config { classes, rt, fair })
}

/// The options of class `e` (`[scheduler.<name>]`), or none.
fn class_options(o: &mut OptReader<'_>, e: &'static crate::Entry) -> Result<Options, PolicyError> {
    Ok(o.sub_table(e.name)?.cloned().unwrap_or_default())
}

/// Builds class `e` for `cpus` CPUs from its own options, naming them `<class>.<key>` in errors.
fn build_class(
    e: &'static crate::Entry,
    opts: &Options,
    cpus: usize,
) -> Result<Box<dyn Policy>, PolicyError> {
    let scoped = |err: PolicyError| match err {
        PolicyError::BadOption { key, msg, .. } => {
            PolicyError::BadOption { policy: "stack".into(), key: format!("{}.{key}", e.name), msg }
        }
        other => other,
    };
    let mut r = OptReader::new(e.name, opts);
    let p = (e.build)(&mut r, cpus).map_err(scoped)?;
    r.finish().map_err(scoped)?;
    Ok(p)
}

fn build(o: &mut OptReader<'_>, cpus: usize) -> Result<Box<dyn Policy>, PolicyError> {
    let cfg = config(o)?;
    let mut layers = Vec::with_capacity(cfg.classes.len());
    for e in &cfg.classes {
        let opts = class_options(o, e)?;
        layers.push(Layer {
            name: e.name,
            policy: build_class(e, &opts, cpus)?,
            view: View::new(cpus),
            queued: 0,
        });
    }
    Ok(Box::new(Stack {
        layers,
        of: Vec::new(),
        moving: Vec::new(),
        on_cpu: vec![None; cpus],
        rt: cfg.rt.map(|(l, r, p)| Budget::new(l, r, p, cpus)),
        fair: cfg.fair.map(|(l, r, p)| Budget::new(l, r, p, cpus)),
        now: 0,
        unthrottled: false,
        scratch: RefCell::new(Vec::new()),
        throttled: 0,
        boosts: 0,
    }))
}

/// The pace of a stack: its classes' shortest slice and timer, walking tasks if one of them does.
fn pace(o: &mut OptReader<'_>, cpus: usize) -> Result<Pace, PolicyError> {
    let cfg = config(o)?;
    let mut out = Pace::default();
    for e in &cfg.classes {
        let opts = class_options(o, e)?;
        let p = (e.pace)(&mut OptReader::new(e.name, &opts), cpus)?;
        out.slice = match (out.slice, p.slice) {
            (Some(a), Some(b)) => Some(if b.nanos < a.nanos { b } else { a }),
            (a, b) => a.or(b),
        };
        out.timer = match (out.timer, p.timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        out.walks = out.walks.max(p.walks);
    }
    Ok(out)
}

/// The class names a stack's tasks may give: each class's policy name and the kinds it serves.
fn names(o: &mut OptReader<'_>) -> Result<Vec<&'static str>, PolicyError> {
    let cfg = config(o)?;
    let mut out = Vec::new();
    for e in cfg.classes {
        for n in std::iter::once(e.name).chain(e.classes.iter().copied()) {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    Ok(out)
}

impl Stack {
    /// The layer of a class name: the policy of that name, else the first from the top that serves it;
    /// no name (or one the tool did not check) is the lowest class.
    fn resolve(&self, p: &TaskParams) -> usize {
        let last = self.layers.len() - 1;
        let Some(c) = p.class.as_deref() else {
            // A reservation without a class is SCHED_DEADLINE's, as `sched_setattr` makes it.
            let dl = p.reservation.and_then(|_| self.layers.iter().position(|l| l.name == DEADLINE));
            return dl.unwrap_or(last);
        };
        self.layers
            .iter()
            .position(|l| l.name == c)
            .or_else(|| {
                self.layers.iter().position(|l| entry(l.name).is_some_and(|e| e.classes.contains(&c)))
            })
            .unwrap_or(last)
    }

    fn layer(&self, t: TaskId) -> usize {
        let l = self.of[t.idx()];
        check!(l != NONE, "task {t} is not admitted to the class stack");
        usize::from(l)
    }

    /// Brings the classes' views and the budgets to the time of `v`.
    fn sync(&mut self, v: &View) {
        let now = v.now();
        if now != self.now {
            self.now = now;
            for l in &mut self.layers {
                l.view.set_now(now);
            }
        }
        if let Some(b) = &mut self.rt {
            self.unthrottled |= b.roll(now);
        }
        if let Some(b) = &mut self.fair {
            b.roll(now);
        }
    }

    /// Whether real-time throttling keeps layer `l` off `cpu` now.
    fn throttled(&self, l: usize, cpu: CpuId) -> bool {
        self.rt.as_ref().is_some_and(|b| b.layer == l && b.left(cpu) == 0)
    }

    /// Whether the fair server is owed time on `cpu` now and its tasks wait: the time left in the
    /// period is down to what it still owes.
    fn owed(&self, cpu: CpuId) -> bool {
        self.fair.as_ref().is_some_and(|b| {
            let left = b.left(cpu);
            left > 0 && self.layers[b.layer].queued > 0 && b.end().saturating_sub(self.now) <= left
        })
    }

    /// The order in which `cpu` asks the classes now: the fair server's class first (after `cbs`)
    /// when it is owed time.
    fn order(&self, cpu: CpuId) -> (Option<usize>, usize) {
        let boosted = self.fair.as_ref().filter(|_| self.owed(cpu)).map(|b| b.layer);
        (boosted, self.layers.len())
    }

    fn ask(&mut self, l: usize, cpu: CpuId, boosted: bool) -> Option<Dispatch> {
        let layer = &mut self.layers[l];
        let d = layer.policy.pick_next(cpu, &layer.view)?;
        layer.view.dispatch(d.task, cpu);
        layer.queued -= 1;
        let mut cap: Option<Nanos> = None;
        if let Some(b) = self.rt.as_ref().filter(|b| b.layer == l) {
            cap = Some(b.left(cpu));
        }
        if boosted {
            if let Some(b) = &self.fair {
                cap = Some(b.left(cpu));
            }
        }
        let slice = match (d.slice, cap) {
            (Some(s), Some(c)) => Some(s.min(c)),
            (s, c) => s.or(c),
        };
        let cut = cap.is_some_and(|c| d.slice.is_none_or(|s| c < s));
        self.on_cpu[cpu as usize] = Some(OnCpu { layer: l as u8, cut, boosted });
        for (k, other) in self.layers.iter_mut().enumerate() {
            if k != l {
                other.view.set_taken(cpu, true);
            }
        }
        if boosted {
            self.boosts += 1;
        }
        Some(Dispatch { task: d.task, slice: slice.map(|s| s.max(1)) })
    }

    /// Moves `t` (not running) from class `from` to class `to`.
    fn move_task(&mut self, t: TaskId, from: usize, to: usize, p: &TaskParams) {
        let runnable = self.layers[from].view.state(t) == State::Runnable;
        let l = &mut self.layers[from];
        l.policy.exit(t, &l.view);
        l.view.exit(t);
        l.queued -= usize::from(runnable);
        let l = &mut self.layers[to];
        l.view.admit(t, p);
        l.policy.admit(t, p, &l.view);
        if runnable {
            l.view.wake(t);
            l.policy.wake(t, &l.view);
            l.queued += 1;
        }
        self.of[t.idx()] = to as u8;
    }
}

impl Policy for Stack {
    fn admit(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        self.sync(v);
        let l = self.resolve(p);
        *crate::slot(&mut self.of, t) = l as u8;
        *crate::slot(&mut self.moving, t) = NONE;
        let layer = &mut self.layers[l];
        layer.view.admit(t, p);
        layer.policy.admit(t, p, &layer.view);
    }

    fn exit(&mut self, t: TaskId, v: &View) {
        self.sync(v);
        let l = self.layer(t);
        let layer = &mut self.layers[l];
        layer.policy.exit(t, &layer.view);
        layer.queued -= usize::from(layer.view.state(t) == State::Runnable);
        layer.view.exit(t);
        self.of[t.idx()] = NONE;
        self.moving[t.idx()] = NONE;
    }

    fn wake(&mut self, t: TaskId, v: &View) {
        self.sync(v);
        let l = self.layer(t);
        let layer = &mut self.layers[l];
        layer.view.wake(t);
        layer.policy.wake(t, &layer.view);
        layer.queued += 1;
    }

    fn stop(&mut self, t: TaskId, cpu: CpuId, charged: Nanos, why: Stop, v: &View) {
        self.sync(v);
        let l = self.layer(t);
        let on = self.on_cpu[cpu as usize].take().unwrap_or_default();
        for (k, other) in self.layers.iter_mut().enumerate() {
            if k != l {
                other.view.set_taken(cpu, false);
            }
        }
        // What was billed counts in this period, up to the time since it began (a run across the
        // period's start counts in the old one only for the rest).
        let now = self.now;
        if let Some(b) = self.rt.as_mut().filter(|b| b.layer == l) {
            let before = b.left(cpu);
            b.charge(cpu, charged, now);
            if before > 0 && b.left(cpu) == 0 {
                self.throttled += 1;
            }
        }
        if let Some(b) = self.fair.as_mut().filter(|b| b.layer == l) {
            b.charge(cpu, charged, now);
        }
        let why = if on.cut && why == Stop::SliceEnd { Stop::Preempted } else { why };
        let layer = &mut self.layers[l];
        layer.view.stop(t, charged, why != Stop::Blocked);
        layer.policy.stop(t, cpu, charged, why, &layer.view);
        layer.queued += usize::from(why != Stop::Blocked);
        let to = self.moving[t.idx()];
        if to != NONE {
            self.moving[t.idx()] = NONE;
            let p = v.params(t).clone();
            self.move_task(t, l, usize::from(to), &p);
        }
    }

    fn tick(&mut self, cpu: CpuId, v: &View) -> bool {
        self.sync(v);
        let Some(on) = self.on_cpu[cpu as usize] else { return false };
        let layer = &mut self.layers[usize::from(on.layer)];
        layer.policy.tick(cpu, &layer.view)
    }

    fn uses_tick(&self) -> bool {
        self.layers.iter().any(|l| l.policy.uses_tick())
    }

    fn shares_one_queue(&self) -> bool {
        self.layers.iter().all(|l| l.policy.shares_one_queue())
    }

    fn might_find_work(&self, cpu: CpuId, _v: &View) -> bool {
        self.layers.iter().any(|l| l.policy.might_find_work(cpu, &l.view))
    }

    fn select_cpu(&self, t: TaskId, prev: Option<CpuId>, idle: &[CpuId], _v: &View) -> CpuId {
        let layer = &self.layers[self.layer(t)];
        layer.policy.select_cpu(t, prev, idle, &layer.view)
    }

    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, _v: &View) -> Option<CpuId> {
        let lw = self.layer(woken);
        let mut open = self.scratch.borrow_mut();
        // The CPUs where its class may run now: not throttled there, and not serving the fair server's
        // owed time (unless it is above it).
        open.clear();
        open.extend(running.iter().copied().filter(|&(cpu, _)| {
            let boosted = self.on_cpu[cpu as usize].is_some_and(|o| o.boosted);
            let served_first = boosted && self.layers[lw].name != DEADLINE;
            !self.throttled(lw, cpu) && !served_first
        }));
        if let Some((cpu, lowest)) = least_important(&open, prev, |t| self.of[t.idx()]) {
            if usize::from(lowest) > lw {
                return Some(cpu);
            }
        }
        open.retain(|&(_, t)| usize::from(self.of[t.idx()]) == lw);
        if open.is_empty() {
            return None;
        }
        let layer = &self.layers[lw];
        layer.policy.preempt_for(woken, prev, &open, &layer.view)
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        self.sync(v);
        let (boosted, n) = self.order(cpu);
        if let Some(f) = boosted {
            // Above every class but the deadline class.
            let dl = self.layers.iter().position(|l| l.name == DEADLINE).filter(|&d| d < f);
            if let Some(d) = dl.and_then(|d| self.ask(d, cpu, false)) {
                return Some(d);
            }
            if let Some(d) = self.ask(f, cpu, true) {
                return Some(d);
            }
        }
        for l in 0..n {
            if self.throttled(l, cpu) || Some(l) == boosted {
                continue;
            }
            if let Some(d) = self.ask(l, cpu, false) {
                return Some(d);
            }
        }
        None
    }

    fn set_time_constraint(&mut self, t: TaskId, c: Option<TimeConstraint>, v: &View) {
        self.sync(v);
        let l = self.layer(t);
        let layer = &mut self.layers[l];
        layer.policy.set_time_constraint(t, c, &layer.view);
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        self.sync(v);
        let from = self.layer(t);
        let to = self.resolve(p);
        if to == from {
            let layer = &mut self.layers[from];
            layer.policy.set_params(t, p, &layer.view);
            layer.view.set_params(t, p);
        } else if matches!(v.state(t), State::Running(_)) {
            self.moving[t.idx()] = to as u8;
            let layer = &mut self.layers[from];
            let mut same = p.clone();
            same.class.clone_from(&v.params(t).class);
            layer.policy.set_params(t, &same, &layer.view);
            layer.view.set_params(t, &same);
        } else {
            self.move_task(t, from, to, p);
        }
    }

    fn interact(&mut self, t: TaskId, v: &View) {
        self.sync(v);
        let l = self.layer(t);
        let layer = &mut self.layers[l];
        layer.policy.interact(t, &layer.view);
    }

    fn availability(&self, t: TaskId, _v: &View) -> Availability {
        let layer = &self.layers[self.layer(t)];
        layer.policy.availability(t, &layer.view)
    }

    fn next_timer(&self) -> Option<Nanos> {
        let mut next = self.layers.iter().filter_map(|l| l.policy.next_timer()).min();
        let mut at = |t: Nanos| next = Some(next.map_or(t, |n| n.min(t)));
        if self.unthrottled {
            at(self.now);
        }
        if let Some(b) = &self.rt {
            if b.used.iter().any(|&u| u >= b.runtime) {
                at(b.end());
            }
        }
        if let Some(b) = &self.fair {
            if self.layers[b.layer].queued > 0 {
                for cpu in 0..b.used.len() {
                    let left = b.left(cpu as CpuId);
                    let on = self.on_cpu[cpu];
                    if left > 0 && !b.fired[cpu] && on.is_none_or(|o| usize::from(o.layer) < b.layer) {
                        at(b.end().saturating_sub(left).max(self.now));
                    }
                }
            }
        }
        next
    }

    fn timer(&mut self, v: &View) -> bool {
        self.sync(v);
        let now = self.now;
        let mut again = false;
        for l in &mut self.layers {
            if l.policy.next_timer().is_some_and(|t| t <= now) {
                again |= l.policy.timer(&l.view);
            }
        }
        // A new period unthrottles: the CPUs decide again (the roll in `sync` reset the counts).
        if std::mem::take(&mut self.unthrottled) {
            again = true;
        }
        if let Some(b) = &mut self.fair {
            if self.layers[b.layer].queued > 0 {
                for cpu in 0..b.used.len() {
                    let left = b.runtime.saturating_sub(b.used[cpu]);
                    let on = self.on_cpu[cpu];
                    if left > 0
                        && !b.fired[cpu]
                        && on.is_none_or(|o| usize::from(o.layer) < b.layer)
                        && b.end().saturating_sub(left) <= now
                    {
                        b.fired[cpu] = true;
                        again = true;
                    }
                }
            }
        }
        again
    }

    fn kick(&mut self, v: &View) -> Option<CpuId> {
        self.sync(v);
        // A class kicks a CPU that is idle or runs one of its own tasks or a lower class's: a higher
        // class's task is none of its business.
        for l in 0..self.layers.len() {
            let layer = &mut self.layers[l];
            if let Some(c) = layer.policy.kick(&layer.view) {
                if v.running(c).is_none_or(|t| usize::from(self.of[t.idx()]) >= l) {
                    return Some(c);
                }
            }
        }
        None
    }

    fn walked(&self) -> u64 {
        self.layers.iter().map(|l| l.policy.walked()).sum()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut out: Vec<(&'static str, u64)> =
            self.layers.iter().flat_map(|l| l.policy.counters()).collect();
        if self.rt.is_some() {
            out.push(("rt_throttled", self.throttled));
        }
        if self.fair.is_some() {
            out.push(("fair_server_boosts", self.boosts));
        }
        out
    }
}

/// The registry's entry of `stack`.
pub const ENTRY: Entry = Entry::new("stack", "stack.rs", build)
    .about(
        "classes stacked by priority as kernels stack them: each task in its `class`, a higher class always \
         first on a CPU (`classes`: a preset or a list of policies; their options in `[scheduler.<policy>]`)",
    )
    .options(&[
        opt(
            "classes",
            "\"linux\"",
            "the classes from the highest: a preset (svr4, solaris, linux, linux-6.1) or a list of policies",
        ),
        opt("rt_throttling", "true with `rt`", "Linux's real-time throttling of the `rt` class on each CPU"),
        opt("rt_runtime", "950ms", "the real-time class's time in every rt_period (sched_rt_runtime_us)"),
        opt("rt_period", "1s", "the throttling period (sched_rt_period_us)"),
        opt(
            "fair_server",
            "true with `eevdf`",
            "Linux 6.12's fair server, guaranteeing the fair class time on each CPU",
        ),
        opt("fair_server_runtime", "50ms", "the fair class's guaranteed time in every fair_server_period"),
        opt("fair_server_period", "1s", "the fair server's period"),
    ])
    .not_work_conserving()
    .pace(pace)
    .class_names(names);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{registry, Core};

    fn stack(classes: &[&str], extra: &[(&str, OptValue)], cpus: usize) -> Result<Core, PolicyError> {
        let mut o = Options::new();
        o.insert("classes".into(), OptValue::List(classes.iter().map(|s| s.to_string()).collect()));
        for (k, v) in extra {
            o.insert(k.to_string(), v.clone());
        }
        registry::build("stack", &o, cpus)
    }

    fn task(class: Option<&str>, priority: i32) -> TaskParams {
        TaskParams { class: class.map(str::to_string), priority, ..Default::default() }
    }

    const OFF: (&str, OptValue) = ("fair_server", OptValue::Bool(false));

    #[test]
    fn a_higher_class_always_runs_first_and_preempts_a_lower_one() {
        let mut c = stack(&["fifo", "eevdf"], &[OFF], 1).unwrap();
        c.admit(TaskId(0), &task(None, 0), 0);
        c.admit(TaskId(1), &task(Some("fifo"), 5), 0);
        c.wake(TaskId(0), 0);
        assert_eq!(c.pick(0, 0).unwrap().task, TaskId(0));
        c.wake(TaskId(1), MS);
        // The fair task is preempted for the real-time one; the other way round, never.
        assert_eq!(c.policy().preempt_for(TaskId(1), None, &[(0, TaskId(0))], c.view()), Some(0));
        c.stop(TaskId(0), MS, Stop::Preempted, MS);
        assert_eq!(c.pick(0, MS).unwrap(), Dispatch { task: TaskId(1), slice: None });
        assert_eq!(c.policy().preempt_for(TaskId(0), None, &[(0, TaskId(1))], c.view()), None);
        c.stop(TaskId(1), 5 * MS, Stop::Blocked, 6 * MS);
        assert_eq!(c.pick(0, 6 * MS).unwrap().task, TaskId(0));
    }

    #[test]
    fn on_two_cpus_a_woken_task_takes_the_cpu_of_the_lowest_class() {
        let mut c = stack(&["fifo", "rr", "eevdf"], &[OFF], 2).unwrap();
        c.admit(TaskId(0), &task(Some("rr"), 1), 0);
        c.admit(TaskId(1), &task(None, 0), 0);
        c.admit(TaskId(2), &task(Some("fifo"), 1), 0);
        c.wake(TaskId(0), 0);
        c.wake(TaskId(1), 0);
        let a = c.pick(0, 0).unwrap().task;
        let b = c.pick(1, 0).unwrap().task;
        assert_eq!((a, b), (TaskId(0), TaskId(1)));
        c.wake(TaskId(2), MS);
        let running = [(0, TaskId(0)), (1, TaskId(1))];
        assert_eq!(c.policy().preempt_for(TaskId(2), Some(0), &running, c.view()), Some(1));
    }

    #[test]
    fn within_a_class_the_class_decides_and_sees_only_its_own_tasks() {
        // Two fair tasks beside a real-time one on two CPUs: EEVDF's sums hold its two tasks only (the
        // real-time task running on the other CPU is not a member of its queue). One fair queue for both
        // CPUs, so that the two fair tasks meet on CPU 1.
        let mut fair = Options::new();
        fair.insert("runqueues".into(), OptValue::Str("global".into()));
        let mut c = stack(&["fifo", "eevdf"], &[OFF, ("eevdf", OptValue::Table(fair))], 2).unwrap();
        c.admit(TaskId(0), &task(Some("fifo"), 3), 0);
        c.admit(TaskId(1), &task(None, 0), 0);
        c.admit(TaskId(2), &task(None, 0), 0);
        for t in 0..3 {
            c.wake(TaskId(t), 0);
        }
        assert_eq!(c.pick(0, 0).unwrap().task, TaskId(0));
        let d = c.pick(1, 0).unwrap();
        assert_eq!(d.task, TaskId(1));
        c.stop(TaskId(1), d.slice.unwrap(), Stop::SliceEnd, d.slice.unwrap());
        assert_eq!(c.pick(1, d.slice.unwrap()).unwrap().task, TaskId(2), "the fair tasks take turns");
        let p = c.policy();
        // A woken fair task cannot take the real-time task's CPU.
        assert_eq!(p.preempt_for(TaskId(1), Some(0), &[(0, TaskId(0))], c.view()), None);
    }

    #[test]
    fn a_fair_task_queued_behind_a_real_time_task_is_pulled_by_the_idle_cpu() {
        // Per-CPU fair run queues under a stack: the fair task, placed on CPU 0 before anything runs, waits
        // there behind the real-time task; CPU 1, about to idle, pulls it (the real-time task counts in
        // CPU 0's runnable tasks, as `sum_nr_running` counts every class). Woken again while the real-time
        // task runs on CPU 0, the fair task is not placed there.
        let mut c = stack(&["fifo", "eevdf"], &[OFF], 2).unwrap();
        c.admit(TaskId(0), &task(Some("fifo"), 3), 0);
        c.admit(TaskId(1), &task(None, 0), 0);
        c.wake(TaskId(0), 0);
        c.wake(TaskId(1), 0);
        assert_eq!(c.pick(0, 0).unwrap().task, TaskId(0));
        assert_eq!(c.pick(1, 0).unwrap().task, TaskId(1), "pulled from CPU 0");
        c.stop(TaskId(1), MS, Stop::Blocked, MS);
        c.wake(TaskId(1), 2 * MS);
        assert_eq!(c.pick(1, 2 * MS).unwrap().task, TaskId(1));
        assert!(c.counters().contains(&("newidle_pulls", 1)), "{:?}", c.counters());
    }

    #[test]
    fn a_fair_task_waking_beside_a_real_time_task_is_placed_on_the_other_cpu() {
        // The fair task last ran on CPU 0, which the real-time task now holds: placement counts CPU 0
        // busy and wakes the fair task on idle CPU 1, with no pull.
        let mut c = stack(&["fifo", "eevdf"], &[OFF], 2).unwrap();
        c.admit(TaskId(0), &task(None, 0), 0);
        c.admit(TaskId(1), &task(Some("fifo"), 3), 0);
        c.wake(TaskId(0), 0);
        assert_eq!(c.pick(0, 0).unwrap().task, TaskId(0));
        c.stop(TaskId(0), MS, Stop::Blocked, MS);
        c.wake(TaskId(1), MS);
        assert_eq!(c.pick(0, MS).unwrap().task, TaskId(1));
        c.wake(TaskId(0), 2 * MS);
        assert_eq!(c.pick(1, 2 * MS).unwrap().task, TaskId(0));
        assert!(c.counters().contains(&("newidle_pulls", 0)), "{:?}", c.counters());
    }

    #[test]
    fn the_fair_server_gives_the_fair_class_its_runtime_at_the_end_of_each_period() {
        let mut c = stack(&["fifo", "eevdf"], &[], 1).unwrap();
        c.admit(TaskId(0), &task(Some("fifo"), 50), 0);
        c.admit(TaskId(1), &task(None, 0), 0);
        c.wake(TaskId(0), 0);
        c.wake(TaskId(1), 0);
        assert_eq!(c.pick(0, 0).unwrap(), Dispatch { task: TaskId(0), slice: None });
        // Zero laxity: 50 ms before the period's end the server's timer makes the CPU decide again.
        assert_eq!(c.next_timer(), Some(950 * MS));
        assert!(c.timer(950 * MS));
        c.stop(TaskId(0), 950 * MS, Stop::Preempted, 950 * MS);
        // The fair class runs its owed 50 ms in its own slices (EEVDF's, 1 ms on the tick).
        let mut now = 950 * MS;
        while now < 1000 * MS {
            let d = c.pick(0, now).unwrap();
            assert_eq!(d, Dispatch { task: TaskId(1), slice: Some(MS) }, "at {now}");
            now += MS;
            c.stop(TaskId(1), MS, Stop::SliceEnd, now);
        }
        // The new period: the real-time hog again, and the fair task owed its 50 ms at 1.95 s.
        assert_eq!(c.pick(0, 1000 * MS).unwrap().task, TaskId(0));
        assert_eq!(c.next_timer(), Some(1950 * MS));
        assert!(c.counters().contains(&("fair_server_boosts", 50)));
    }

    #[test]
    fn the_fair_server_owes_nothing_when_the_fair_class_had_its_time() {
        let mut c = stack(&["fifo", "eevdf"], &[], 1).unwrap();
        c.admit(TaskId(0), &task(Some("fifo"), 50), 0);
        c.admit(TaskId(1), &task(None, 0), 0);
        c.wake(TaskId(1), 0);
        let d = c.pick(0, 0).unwrap();
        assert_eq!(d.task, TaskId(1));
        c.stop(TaskId(1), 60 * MS, Stop::Preempted, 60 * MS);
        c.wake(TaskId(0), 60 * MS);
        assert_eq!(c.pick(0, 60 * MS).unwrap().task, TaskId(0));
        assert_eq!(c.next_timer(), None, "60 ms of fair time in this period: nothing owed");
    }

    #[test]
    fn real_time_throttling_stops_the_rt_class_after_950ms_of_each_second_even_on_an_idle_cpu() {
        let mut c = stack(&["rt", "eevdf"], &[OFF], 1).unwrap();
        c.admit(TaskId(0), &task(Some("fifo"), 50), 0);
        c.wake(TaskId(0), 0);
        // The dispatch is cut at the budget left; the cut is a preemption to the class.
        assert_eq!(c.pick(0, 0).unwrap(), Dispatch { task: TaskId(0), slice: Some(950 * MS) });
        c.stop(TaskId(0), 950 * MS, Stop::SliceEnd, 950 * MS);
        assert_eq!(c.pick(0, 950 * MS), None, "throttled: the CPU idles though the hog is runnable");
        assert_eq!(c.next_timer(), Some(1000 * MS));
        // The new period: the idle CPU is asked again, and the hog runs.
        assert!(c.timer(1000 * MS));
        assert!(c.requested(0));
        c.clear_request(0);
        assert_eq!(c.pick(0, 1000 * MS).unwrap(), Dispatch { task: TaskId(0), slice: Some(950 * MS) });
        assert!(c.counters().contains(&("rt_throttled", 1)));
        // A fair task gets the throttled time.
        c.admit(TaskId(1), &task(None, 0), 1000 * MS);
        c.wake(TaskId(1), 1000 * MS);
        c.stop(TaskId(0), 950 * MS, Stop::SliceEnd, 1950 * MS);
        assert_eq!(c.pick(0, 1950 * MS).unwrap().task, TaskId(1));
    }

    #[test]
    fn classes_are_named_by_policy_or_by_the_kinds_a_policy_serves() {
        let Ok(c) = stack(&["fifo", "eevdf"], &[OFF], 1) else { panic!() };
        drop(c);
        let mut o = Options::new();
        o.insert("classes".into(), OptValue::List(vec!["fifo".into(), "eevdf".into()]));
        assert_eq!(registry::classes("stack", &o).unwrap(), ["fifo", "eevdf", "fair", "other"]);
        for (classes, want) in [
            (OptValue::List(vec![]), "empty"),
            (OptValue::List(vec!["fifo".into(), "fifo".into()]), "`fifo` is given twice"),
            (OptValue::List(vec!["nope".into()]), "`nope` is neither a preset"),
            (OptValue::List(vec!["stack".into()]), "`stack` is neither a preset"),
            (OptValue::Str("bsd".into()), "`bsd` is neither a preset (svr4, solaris, linux, linux-6.1)"),
            (OptValue::Int(3), "expected a preset"),
            (OptValue::List(vec!["smart".into(), "eevdf".into()]), "`smart` notifies its tasks"),
        ] {
            let mut o = Options::new();
            o.insert("classes".into(), classes);
            let e = registry::build("stack", &o, 1).err().unwrap().to_string();
            assert!(e.contains("option `classes`") && e.contains(want), "{e}");
        }
    }

    #[test]
    fn each_class_takes_its_own_options_and_refuses_others() {
        let mut sub = Options::new();
        sub.insert("base_slice".into(), OptValue::Time(3 * MS));
        assert!(stack(&["fifo", "eevdf"], &[OFF, ("eevdf", OptValue::Table(sub.clone()))], 1).is_ok());
        sub.insert("quantum".into(), OptValue::Time(3 * MS));
        let e = stack(&["fifo", "eevdf"], &[OFF, ("eevdf", OptValue::Table(sub))], 1).err().unwrap();
        assert_eq!(e.to_string(), "policy `stack`, option `eevdf.quantum`: not an option of this policy");
        // Options of a class not in the stack, and budgets without their class.
        let e = stack(&["fifo", "eevdf"], &[OFF, ("ts", OptValue::Table(Options::new()))], 1).err().unwrap();
        assert_eq!(e.to_string(), "policy `stack`, option `ts`: not an option of this policy");
        let e = stack(&["fifo", "ts"], &[("fair_server", OptValue::Bool(true))], 1).err().unwrap();
        assert!(e.to_string().contains("the fair server needs its class in the stack"), "{e}");
        let e =
            stack(&["fifo", "ts"], &[("fair_server_runtime", OptValue::Time(2000 * MS))], 1).err().unwrap();
        assert!(
            e.to_string().contains("option `fair_server_runtime`: longer than fair_server_period"),
            "{e}"
        );
    }
}
