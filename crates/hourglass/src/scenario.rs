//! Scenario mode: the tasks of a simulator scenario run as real Hourglass threads, so one workload
//! can be simulated (`smartsim run FILE`) and measured (`hourglass --scenario FILE`) and the two
//! JSON outputs compared.
//!
//! The design decision: **one reader for both tools.** The file is read and validated by the
//! project's `workload` crate, the simulator's own, so a scenario means the same in both: same keys,
//! same defaults, same errors (`file:line:col: field: message`, every problem at once), and the
//! policy name and `[scheduler]` options are checked by the `sched` registry as `smartsim` checks
//! them. **And one task model for both:** a task's thread runs the task itself, its
//! [`workload::Stream`] (its start and jitter, its requests with their jitter then `exec` draws in
//! the simulator's order, deadlines, what a late request becomes, interactions; see
//! [`crate::config::Workload::Task`]), so a task's releases and execution times are the
//! simulator's, request by request. This module maps only what a real kernel must be told.
//!
//! What a real kernel cannot be told is mapped, and the run says how (the `mapping` lines, on
//! stderr before the run and in the JSON output):
//!
//! Each policy of the simulator's registry names the Linux class it runs in ([`sched::Entry::linux`],
//! listed by `smartsim policies`; Linux's own, `eevdf`, `cfs`, `rt` and `cbs`, among them):
//!
//! | class | Linux |
//! |---|---|
//! | `Fifo` | `SCHED_FIFO`, priority + 1 (1..=98; ranked when the priorities do not fit) |
//! | `Rr` | `SCHED_RR`, the same levels (the kernel's slice, `sched_rr_timeslice_ms`) |
//! | `Deadline` | periodic tasks `SCHED_DEADLINE` (runtime = the largest `exec` (its 99th percentile for `exp`/`normal`) + 5 % + 100 µs for the kernel's own charges, within the deadline; deadline = `deadline`; period = `period`), the others `SCHED_OTHER`; a task the kernel would refuse (a `deadline` beyond its `period` or under 1024 ns, a `period` outside `sched_deadline_period_{min,max}_us`) is refused at its key |
//! | `Fair` | fair class (EEVDF): each task's nice level or `SCHED_IDLE` by what its share and priority mean to the policy ([`sched::linux`]) |
//!
//! **A task's own class.** A task's keys may choose its class where the policy's would not (the class
//! stack, `policy = "stack"` with `[scheduler] classes`, runs each task by them; [`Own`]):
//!
//! | task keys | Linux |
//! |---|---|
//! | `class = "fifo"` (or `"rt"`) / `"rr"`; no class under `rt` (Linux's real-time class itself, whose default is `fifo`) | `SCHED_FIFO` / `SCHED_RR` at the task's `priority` as it is; outside 1..=98 refused at `priority` (99 is the watchdog's, which must stay above every task) |
//! | `class = "deadline"` (or `"cbs"`), or a reservation (`runtime`, `dl_deadline`, `dl_period`) | `SCHED_DEADLINE` with exactly that runtime, deadline and period (not the periodic estimate); what the kernel refuses (runtime under 1024 ns or beyond the deadline, a deadline beyond the period, a period outside `sched_deadline_period_{min,max}_us`) refused at its key; `class = "deadline"` without a reservation refused at `class`; under `cbs` (Linux's deadline class itself) a task without a reservation runs in the fair class |
//! | `class = "fair"` (or `"other"`, `"eevdf"`, `"cfs"`), or none (under a fair policy or the stack) | the fair class |
//! | `nice` | that nice level in the fair class, in place of the share rule below (which then weighs the other fair tasks only) |
//!
//! **What the host must not run.** A real-time task that never blocks (model `cpu` in `SCHED_FIFO` or
//! `SCHED_RR`, by the policy or its `class`) holds its CPU for the whole run but for what RT throttling
//! leaves the others (950 ms of every second); such a scenario is refused at the task's key without
//! `--force` ([`rt_hogs`]): it is meant for a guest kernel (`scenarios/kernel/guest/`, run by
//! `scripts/vm/run-hourglass`), never a shared host. The run's own safety checks and the `SCHED_FIFO` 99
//! watchdog ([`crate::run`]) stay as they are.
//!
//! **One meaning.** In the fair class a task's `share` and `priority` mean on Linux what they mean to
//! the simulated policy, or the scenario is refused (`file:line:col: task[i].key (task "name")`),
//! never run with a difference: the levels come from [`sched::linux::FairRule::levels`], the rule the
//! simulated `eevdf` takes its own weights from. `eevdf`: nice = −log₁.₂₅(share / `nice0_share`),
//! share 0 and priorities below the highest `SCHED_IDLE`, exactly the simulated weights (a task below
//! the highest priority that starts before it, beside tasks it would share the CPU with otherwise,
//! is refused: the simulator weighs it by its share until then). `ts`: the priority is a Solaris user
//! priority, nice = −priority/3 (a priority that is no −3n for a nice level n is refused). `smart`,
//! `wfq`, `wfq-credit`, `lottery`: the highest priority's shares at the nearest nice levels (shifted
//! together when they would pass −20), the next group in the simulator's order `SCHED_IDLE`, and a
//! scenario whose order needs more than those two is refused. `cfs`: as `eevdf`.
//!
//! `eevdf`, `cfs`, `rt` and `cbs` are Linux's own classes, simulated (`sched::eevdf` and `sched::cfs` with
//! the same nice levels and `SCHED_IDLE` rule; `rt` with Linux's priorities as they are; `cbs`,
//! SCHED_DEADLINE: only the tasks' own reservations), and `stack` runs each task in its class.
//!
//! **CPUs.** `machine.cpus = 1`, the simulator's uniprocessor, runs every thread pinned to one CPU
//! (the last the process may use, or `--cpu N`'s); `machine.cpus` equal to the CPUs hourglass may use
//! runs them unpinned, placed by the kernel, whose scheduling across CPUs is global as the simulator's
//! default `partition` is. Any other count, a partitioned policy (`partition = "affinity" | "ffd"`) or
//! a task's `cpus` naming part of several CPUs is refused at its key; `--cpu` replaces
//! `machine.cpus`, with a warning when the two differ.
//!
//! **Memory.** A `cpu` task's `working_set` is scanned as an array of that size, at most 256 MiB
//! ([`crate::budget::SCAN_CAP`], more than any cache: every line is refilled after a switch, which is
//! what the simulator's refill of `min(working_set, cache)` models), and the mapping line says so when
//! it is capped; the run's memory as a whole is bounded before it starts ([`crate::budget`]) and
//! refused at the key of its largest part (a `working_set`, a `period`, a `think`).
//!
//! Models: every model and key the stream knows (`cpu` with `work`, and a `working_set` the thread
//! scans; `periodic` with `exec` of any distribution, `deadline` also beyond the period, `count`,
//! `on_miss`, `jitter`; `interactive`). Timers: `hr` → HR, `tick` → TICK at the machine's `hz`
//! (an emulated tick: the first multiple of 1/hz of `CLOCK_MONOTONIC` at or after the target),
//! `linux-2.4` → LINUX24 at the machine's `hz` (2.4's `usleep` emulated; a real-time task on it must
//! say `busy_wait = "2ms"`, as LINUX24 spins such sleeps, and `busy_wait` is refused elsewhere),
//! `rtc:<Hz>` → RTC (`timer_of` says why the two kinds of timer differ).
//!
//! Weak: Linux sends no notification of a coming miss, so a request of a `discard` task is dropped
//! at its deadline (as with `notify = "deadline"`), while the simulator drops it when the policy
//! notifies (SMART) and, under policies that never notify, finishes it late; `notify = "never"`
//! finishes late in both. `estimate*`, `notify` times, `latency_tolerance` and the machine's `hz`,
//! `billing` and overheads describe the simulated scheduler and machine and have no kernel
//! counterpart (the mapping says so for periodic tasks; the run warns about `latency_tolerance`
//! and machine keys that differ from their defaults); `sample`, the simulator's timeline, does
//! not apply. An RTC timer runs at the rate hourglass picks from the period, not the scenario's.

use crate::config::{late_rule, CpuChoice, Reservation, RunConfig, ThreadSpec, MAX_DURATION, MAX_THREADS};
use crate::sys::Priority;
use crate::timer::TimerKind;

use sched::linux::{FairLevel, FairRule, FairTask, Unreproducible};
use std::path::Path;
use workload::{
    format_time, Diagnostic, Exec, LateRule, Model, Overheads, Scenario, ScenarioError, TaskSpec,
};

/// The Linux scheduling class a scenario's policy runs under: the registry's
/// ([`sched::Entry::linux`]) for the simulator's policies.
pub use sched::LinuxClass as Class;

/// The class policy `name` runs under, if hourglass knows it.
pub fn class_of(name: &str) -> Option<Class> {
    sched::entry(name).map(|e| e.linux)
}

/// Reads a scenario file and maps it onto threads. `base` carries the command line's run options;
/// `duration_given` makes its duration override the scenario's. Errors list every problem, each
/// as `file:line:col: field: message`.
pub fn load(path: &Path, base: RunConfig, duration_given: bool) -> Result<RunConfig, ScenarioError> {
    let s = workload::load(path)?;
    for w in &s.warnings {
        tracing::warn!("{w}");
    }
    from_scenario(&s, base, duration_given)
}

/// [`load`] from a string (`file` names it in errors).
pub fn load_str(
    src: &str,
    file: &str,
    base: RunConfig,
    duration_given: bool,
) -> Result<RunConfig, ScenarioError> {
    from_scenario(&workload::parse_str(src, file)?, base, duration_given)
}

/// Checks the policy and its options as the simulator does; returns its Linux class and what its
/// tasks' shares and priorities mean in the fair class ([`sched::linux`]).
fn policy_class(scn: &Scenario) -> Result<(Class, FairRule), ScenarioError> {
    let name = scn.scheduler.policy.as_str();
    let line = |key: &str| scn.scheduler.key_lines.get(key).copied().unwrap_or(scn.scheduler.line);
    let Some(entry) = sched::entry(name) else {
        let names: Vec<&str> = sched::names().collect();
        return Err(scn.error(
            line("policy"),
            "scheduler.policy",
            format!("unknown policy \"{name}\" (hourglass runs: {})", names.join(", ")),
        ));
    };
    let bad = |e: sched::PolicyError| match &e {
        sched::PolicyError::BadOption { key, .. } => {
            scn.error(line(key), &format!("scheduler.{key}"), e.to_string())
        }
        sched::PolicyError::Unknown(_) => scn.error(line("policy"), "scheduler.policy", e.to_string()),
    };
    let opts = scn.scheduler.policy_options();
    sched::build(name, &opts, scn.machine.cpus as usize).map_err(bad)?;
    Ok((entry.linux, FairRule::of(entry, &opts).map_err(bad)?))
}

/// `SCHED_FIFO`/`SCHED_RR` levels for the scenario's priorities: priority + 1 when every priority
/// is in 0..=97, else the rank of the priority among the distinct ones (order kept, at most 98).
fn rt_levels(priorities: &[i32]) -> (Vec<u8>, bool) {
    if priorities.iter().all(|p| (0..=97).contains(p)) {
        return (priorities.iter().map(|&p| (p + 1) as u8).collect(), false);
    }
    let mut distinct = priorities.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let rank = |p: i32| (distinct.binary_search(&p).unwrap_or(0) + 1).min(98) as u8;
    (priorities.iter().map(|&p| rank(p)).collect(), true)
}

/// The largest CPU a request needs, as far as a reservation can plan for it: the largest `exec`;
/// for unbounded distributions their 99th percentile (exp: mean · ln 100; normal: mean + 2.33 sd).
fn exec_bound(exec: &Exec) -> u64 {
    match *exec {
        Exec::Fixed(t) | Exec::Uniform(_, t) => t,
        Exec::Exponential { mean } => (mean as f64 * 100f64.ln()).round() as u64,
        Exec::Normal { mean, sd } | Exec::Ar1 { mean, sd, .. } => mean + (sd as f64 * 2.33).round() as u64,
        Exec::Trace { max, .. } => max,
    }
}

/// The runtime of a `SCHED_DEADLINE` reservation for a request of at most `bound`: the bound plus
/// 5 % and 100 µs for what the kernel charges the thread beyond its own work (its wake-up, the
/// interrupts it is billed for; with the bound alone, a request that needs all of it is throttled
/// and misses), at most the deadline, at least 1024 ns (the kernel's minimum).
fn reservation_budget(bound: u64, deadline: u64) -> u64 {
    (bound + bound / 20 + 100_000).min(deadline).max(1024)
}

/// The Linux timer a task's wake-ups use, for the scenario's timer.
///
/// The two differ in kind: the scenario's [`workload::TimerKind`] is a model of *when* a simulated
/// timer fires (`tick`: at the next clock tick; `hr`: exactly; `rtc:<Hz>`: at the next edge of a
/// periodic source of that rate), while hourglass's [`TimerKind`] is *which Linux mechanism* a
/// thread sleeps on (appendix A's `-i`: `nanosleep`, `clock_nanosleep`, a timerfd, `/dev/rtc`),
/// whose firing this kernel decides. So `hr` → HR (an absolute high-resolution sleep);
/// `tick` → TICK at the machine's `hz` (Linux has no tick-aligned user timers: an absolute sleep to
/// the first tick at or after the target, ticks at the multiples of 1/hz of `CLOCK_MONOTONIC`, as the
/// simulator's tick fires); `rtc:<Hz>` → RTC at the rate hourglass picks
/// from the period; `linux-2.4` → LINUX24 at the machine's `hz` (2.4's `usleep` emulated, its
/// real-time short sleeps busy-waiting: the simulator's `busy_wait = "2ms"`, see [`linux24_sleeps`]).
fn timer_of(t: workload::TimerKind, hz: u32) -> TimerKind {
    match t {
        workload::TimerKind::Hr => TimerKind::Hr,
        // The workload crate refuses `tick` and `linux-2.4` when tickless (`hz = 0`).
        workload::TimerKind::Tick => TimerKind::Tick(hz.clamp(1, 100_000)),
        workload::TimerKind::Linux24 => TimerKind::Linux24(hz.clamp(1, 100_000)),
        workload::TimerKind::Rtc(_) => TimerKind::Rtc,
    }
}

/// What a task's `busy_wait` asks of a thread: hourglass has it only as Linux 2.4's rule, with timer
/// `linux-2.4` (LINUX24), which spins a real-time thread's sleep of at most 2 ms. A task whose
/// simulated sleeps and real ones would differ is refused at its key: a real-time periodic task on
/// LINUX24 without `busy_wait = "2ms"` (or whose period leaves no sleep above 2 ms), a real-time
/// interactive one that may think 2 ms or less, and `busy_wait` anywhere else. A task that never
/// sleeps (`cpu`) is as it is.
fn linux24_sleeps(scn: &Scenario, sched: &Sched) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let spin = crate::timer::LINUX24_SPIN_NS;
    let spin_text = workload::format_time(spin);
    for (i, t) in scn.tasks.iter().enumerate() {
        let linux24 = t.effective_timer(&scn.machine) == workload::TimerKind::Linux24;
        let rt = sched.is_rt(i);
        let refusal = match &t.model {
            Model::Periodic(p) if linux24 && rt && p.period <= spin => Some((
                "period",
                format!(
                    "on LINUX24 a real-time thread spins every sleep of {spin_text} or less, and a period of {} \
                     leaves none longer: the simulator cannot spin them all (busy_wait must be shorter than the \
                     period); give the task timer = \"tick\" or \"hr\"",
                    workload::format_time(p.period)
                ),
            )),
            Model::Periodic(p) if linux24 && rt && p.busy_wait != spin => Some((
                "timer",
                format!(
                    "timer \"linux-2.4\" runs on LINUX24, which busy-waits a real-time thread's sleep of at most \
                     {spin_text}, as Linux 2.4 did: give the task busy_wait = \"{spin_text}\" so that the \
                     simulator does too"
                ),
            )),
            Model::Periodic(p) if p.busy_wait > 0 && !(linux24 && rt) => Some((
                "busy_wait",
                if linux24 {
                    "LINUX24 busy-waits only a real-time thread's sleeps; this task is not in a real-time class"
                        .to_string()
                } else {
                    format!(
                        "a thread busy-waits only as Linux 2.4 did: timer \"linux-2.4\" in a real-time class, \
                         with busy_wait = \"{spin_text}\""
                    )
                },
            )),
            Model::Interactive { think, .. } if linux24 && rt && think.min() <= spin => Some((
                "timer",
                format!(
                    "on LINUX24 a real-time thread spins a sleep of {spin_text} or less, and this task may think \
                     that short, which the simulator sleeps through; give it timer = \"tick\" or \"hr\", or a \
                     think time above {spin_text}"
                ),
            )),
            _ => None,
        };
        if let Some((key, message)) = refusal {
            out.push(Diagnostic {
                file: t.source(&scn.path).to_string(),
                line: t.line,
                col: 1,
                field: format!("task[{i}].{key} (task \"{}\")", t.name),
                message,
            });
        }
    }
    out
}

/// What the mapping of timer `t` changes, for the task's mapping line.
fn timer_note(t: workload::TimerKind) -> Option<&'static str> {
    match t {
        workload::TimerKind::Tick => {
            Some("for timer \"tick\": an emulated tick at the machine's hz (Linux has no tick-aligned user timers)")
        }
        workload::TimerKind::Rtc(_) => Some("RTC at the rate hourglass picks from the period"),
        workload::TimerKind::Linux24 => {
            Some("for timer \"linux-2.4\": Linux 2.4's usleep emulated at the machine's hz (up to two ticks late)")
        }
        workload::TimerKind::Hr => None,
    }
}

/// How one task is told to the kernel when its own keys choose its class (`class`, or a `reservation`),
/// rather than the policy's: the names `class` takes in a class stack ([`sched::TaskParams::class`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Own {
    /// No `class` key, no reservation: the policy's class.
    Policy,
    /// `class = "fifo"` (or `"rt"`, Linux's rt class, whose default policy is `SCHED_FIFO`): at the
    /// task's `priority` as it is, 1..=98.
    Fifo(u8),
    /// `class = "rr"`: `SCHED_RR` at the task's `priority`, 1..=98.
    Rr(u8),
    /// `class = "deadline"` (or `"cbs"`) with a reservation (`runtime`, `dl_deadline`, `dl_period`), or a
    /// reservation alone: `SCHED_DEADLINE` with exactly the reservation.
    Deadline,
    /// `class = "fair"` (or `"other"`, `"eevdf"`, `"cfs"`): the fair class, under a policy of another class.
    Fair,
}

/// The highest real-time priority a task may have: 99 is hourglass's watchdog's, which must stay above
/// every task ([`crate::sys::WATCHDOG_FIFO`]).
const TOP_RT: i32 = crate::sys::WATCHDOG_FIFO - 1;

/// The registry's policy whose class `name` is: the policy of that name, or the first that serves it
/// ([`sched::Entry::classes`]).
fn served_by(name: &str) -> Option<&'static sched::Entry> {
    sched::entry(name).or_else(|| sched::registry::REGISTRY.iter().find(|e| e.classes.contains(&name)))
}

/// Whether the scenario's policy is Linux's real-time class itself (`rt`: it runs in `SCHED_FIFO` and
/// serves classes `fifo` and `rr`): its tasks' priorities are Linux's, as they are, whether or not a
/// task names its class.
fn linux_rt(scn: &Scenario) -> bool {
    sched::entry(&scn.scheduler.policy)
        .is_some_and(|e| matches!(e.linux, Class::Fifo | Class::Rr) && e.classes.contains(&"fifo"))
}

/// Task `i`'s own class ([`Own`]), or why the kernel cannot be told it, at its key. Under Linux's
/// real-time class itself ([`linux_rt`]) a task without a class is `class = "fifo"`, the class's default.
fn own_class(scn: &Scenario, i: usize, t: &TaskSpec) -> Result<Own, Diagnostic> {
    let refuse = |key: &str, message: String| Diagnostic {
        file: scn.path.clone(),
        line: t.line,
        col: 1,
        field: format!("task[{i}].{key} (task \"{}\")", t.name),
        message,
    };
    let rt = |make: fn(u8) -> Own, name: &str| {
        if (1..=TOP_RT).contains(&t.priority) {
            Ok(make(t.priority as u8))
        } else {
            Err(refuse(
                "priority",
                format!(
                    "class \"{name}\" runs at the task's priority as Linux's real-time priority, 1..={TOP_RT} \
                     ({} is outside it{})",
                    t.priority,
                    if t.priority == crate::sys::WATCHDOG_FIFO {
                        ": 99 is hourglass's watchdog, which must stay above every task"
                    } else {
                        ""
                    }
                ),
            ))
        }
    };
    let own = match t.class.as_deref() {
        None if linux_rt(scn) => rt(Own::Fifo, "fifo")?,
        None => Own::Policy,
        Some(c @ ("fifo" | "rt")) => rt(Own::Fifo, c)?,
        Some("rr") => rt(Own::Rr, "rr")?,
        Some("deadline" | "cbs") => Own::Deadline,
        Some("fair" | "other" | "eevdf" | "cfs") => Own::Fair,
        // Another policy's class (`ts` of `svr4-ts`, ...): the Linux class of the policy that serves it.
        Some(other) => match served_by(other).map(|e| e.linux) {
            Some(Class::Fair) => Own::Fair,
            Some(Class::Deadline) => Own::Deadline,
            _ => {
                return Err(refuse(
                    "class",
                    format!(
                        "class \"{other}\": hourglass runs a task's own real-time class only as Linux's, \
                         class \"fifo\" (or \"rt\") or \"rr\" at its priority; and \"deadline\" (or \"cbs\"), \
                         \"fair\" (or \"eevdf\", \"cfs\"), or the class of a fair or deadline policy"
                    ),
                ))
            }
        },
    };
    match (own, t.reservation.is_some()) {
        (Own::Policy | Own::Deadline, true) => Ok(Own::Deadline),
        (_, true) => Err(refuse(
            "runtime",
            format!(
                "a reservation (runtime, dl_deadline, dl_period) is SCHED_DEADLINE, and class \"{}\" is not",
                t.class.as_deref().unwrap_or_default()
            ),
        )),
        (Own::Deadline, false) => Err(refuse(
            "class",
            "class \"deadline\" without a reservation: SCHED_DEADLINE needs one; give runtime and dl_period"
                .into(),
        )),
        _ => Ok(own),
    }
}

/// What a kernel needs to know of the scheduler: the policy's class, each task's own class
/// ([`Own`]), the real-time levels of the tasks in the policy's class (ranked when the priorities do
/// not fit), and for the tasks in the fair class each one's level: its `nice`, else by the policy's
/// meaning of its share and priority ([`FairRule`]); and the highest priority.
struct Sched {
    class: Class,
    /// The policy is Linux's deadline class itself (it serves class `deadline`: `cbs`): only the tasks'
    /// own reservations are told to the kernel, the others run in the fair class (its background queue).
    reserving: bool,
    own: Vec<Own>,
    levels: Vec<u8>,
    ranked: bool,
    rule: FairRule,
    fair: Vec<FairLevel>,
    top: i32,
}

impl Sched {
    /// The scheduling of `scn`'s tasks, and the tasks whose keys mean to the policy what Linux cannot
    /// be told, each naming its task and key (such a scenario is refused).
    fn of(scn: &Scenario, class: Class, rule: FairRule) -> (Sched, Vec<Diagnostic>) {
        let mut refused = Vec::new();
        let own: Vec<Own> = (scn.tasks.iter().enumerate())
            .map(|(i, t)| {
                own_class(scn, i, t).unwrap_or_else(|d| {
                    refused.push(d);
                    Own::Policy
                })
            })
            .collect();
        // The policy's real-time levels, among the tasks in its class.
        let in_policy: Vec<usize> = (0..scn.tasks.len()).filter(|&i| own[i] == Own::Policy).collect();
        let priorities: Vec<i32> = in_policy.iter().map(|&i| scn.tasks[i].priority).collect();
        let (ranks, ranked) = rt_levels(&priorities);
        let mut levels = vec![1; scn.tasks.len()];
        for (&i, l) in in_policy.iter().zip(ranks) {
            levels[i] = l;
        }
        let top = priorities.into_iter().max().unwrap_or(0);
        // The fair class: a task's nice level when it gives one, else the policy's rule among the
        // others there.
        let mut fair = vec![FairLevel::Nice(0); scn.tasks.len()];
        let in_fair = |i: usize| own[i] == Own::Fair || (own[i] == Own::Policy && class == Class::Fair);
        let by_rule: Vec<usize> =
            (0..scn.tasks.len()).filter(|&i| in_fair(i) && scn.tasks[i].nice.is_none()).collect();
        // A task starts when the simulator admits it: its `start`, late by a jitter draw (cpu).
        let tasks: Vec<FairTask> = (by_rule.iter())
            .map(|&i| {
                let t = &scn.tasks[i];
                FairTask {
                    priority: t.priority,
                    share: t.share,
                    start: workload::Stream::new(t, scn.machine.seed).start(),
                }
            })
            .collect();
        match rule.levels(&tasks) {
            Ok(l) => by_rule.iter().zip(l).for_each(|(&i, l)| fair[i] = l),
            Err(no) => refused.extend(no.into_iter().map(|u| {
                let u = Unreproducible { task: by_rule[u.task], ..u };
                unreproducible(scn, &u)
            })),
        }
        for (i, t) in scn.tasks.iter().enumerate() {
            if let Some(n) = t.nice {
                fair[i] = FairLevel::Nice(n);
            }
        }
        let reserving = sched::entry(&scn.scheduler.policy).is_some_and(|e| e.classes.contains(&"deadline"));
        (Sched { class, reserving, own, levels, ranked, rule, fair, top }, refused)
    }

    /// The policy's mapping line.
    fn describe(&self, policy: &str) -> String {
        let top = self.top;
        format!(
            "policy \"{policy}\"{} runs as {}",
            if sched::entry(policy).is_some() { " (simulated)" } else { "" },
            match self.class {
                Class::Fifo => "SCHED_FIFO, level = priority + 1".to_string(),
                Class::Rr =>
                    "SCHED_RR, level = priority + 1 (slice: the kernel's sched_rr_timeslice_ms)".to_string(),
                Class::Deadline if self.reserving => {
                    "SCHED_DEADLINE for the tasks with a reservation (exactly runtime, dl_deadline, dl_period), SCHED_OTHER for the others (its background queue)"
                        .to_string()
                }
                Class::Deadline => {
                    "SCHED_DEADLINE for periodic tasks (runtime = largest exec + 5 % + 100us, deadline = deadline, period = period), SCHED_OTHER for the others"
                        .to_string()
                }
                Class::Fair => self.rule.describe(top),
            }
        )
    }

    /// The mapping line of the tasks' own keys, when a task has one.
    fn describe_own(&self, scn: &Scenario) -> Option<String> {
        let class = self.own.iter().any(|o| *o != Own::Policy);
        let nice = scn.tasks.iter().any(|t| t.nice.is_some());
        (class || nice).then(|| {
            "a task's own keys: class \"fifo\" | \"rr\" → SCHED_FIFO | SCHED_RR at its priority (1..=98); \
             class \"deadline\" or a reservation → SCHED_DEADLINE with exactly its runtime, dl_deadline and \
             dl_period; class \"fair\" → the fair class; nice → that nice level in the fair class (in \
             place of the share rule)"
                .to_string()
        })
    }

    /// Schedules task number `i`, `t`, on `spec`: its real-time level, its reservation (its own, or a
    /// periodic task's under a deadline class), or its nice level or `SCHED_IDLE`. Returns a note when
    /// its reservation cannot cover every execution draw.
    fn apply(&self, i: usize, t: &TaskSpec, spec: &mut ThreadSpec) -> Option<&'static str> {
        let class = match self.own[i] {
            Own::Policy => self.class,
            Own::Fifo(p) => {
                spec.priority = Priority::Fifo(p);
                return None;
            }
            Own::Rr(p) => {
                spec.priority = Priority::Rr(p);
                return None;
            }
            Own::Deadline => Class::Deadline,
            Own::Fair => Class::Fair,
        };
        match class {
            Class::Fifo => spec.priority = Priority::Fifo(self.levels[i]),
            Class::Rr => spec.priority = Priority::Rr(self.levels[i]),
            Class::Deadline => {
                if let Some(r) = t.reservation {
                    // Exactly as given: the kernel takes 1024ns <= runtime <= deadline <= period
                    // (deadline_refusals).
                    spec.reservation = Some(Reservation {
                        amount: r.runtime,
                        deadline: r.deadline,
                        period: r.period,
                        soft: false,
                    });
                    let Model::Periodic(p) = &t.model else { return None };
                    return p
                        .exec
                        .max()
                        .is_none_or(|x| x > r.runtime)
                        .then_some("its runtime does not cover every exec draw");
                }
                if let (Model::Periodic(p), false) = (&t.model, self.reserving) {
                    // Beyond the period, the deadline is refused (deadline_refusals); kept within it here.
                    let deadline = p.deadline.min(p.period);
                    let amount = reservation_budget(exec_bound(&p.exec), deadline);
                    spec.reservation = Some(Reservation { amount, deadline, period: p.period, soft: false });
                    if p.exec.max().is_none_or(|x| x > amount) {
                        return Some("its budget does not cover every exec draw");
                    }
                } else if let Some(n) = t.nice {
                    spec.priority = Priority::Nice(n);
                }
            }
            Class::Fair => {
                spec.priority = match self.fair[i] {
                    FairLevel::Nice(n) => Priority::Nice(n),
                    FairLevel::Idle => Priority::Idle,
                };
            }
        }
        None
    }

    /// Whether task `i`, `t`, runs in the deadline class: by its own keys, or the policy's (a periodic
    /// task's estimate, or its reservation under Linux's deadline class itself).
    fn in_deadline(&self, i: usize, t: &TaskSpec) -> bool {
        match self.own[i] {
            Own::Deadline => true,
            Own::Policy => self.class == Class::Deadline && (!self.reserving || t.reservation.is_some()),
            _ => false,
        }
    }

    /// Whether task `i` runs in a real-time class (`SCHED_FIFO`, `SCHED_RR`).
    fn is_rt(&self, i: usize) -> bool {
        match self.own[i] {
            Own::Fifo(_) | Own::Rr(_) => true,
            Own::Policy => matches!(self.class, Class::Fifo | Class::Rr),
            Own::Deadline | Own::Fair => false,
        }
    }
}

/// The tasks in the deadline class (`reserved`: the policy's periodic tasks under a deadline class, and
/// the tasks with their own reservation or `class = "deadline"`) whose reservation the kernel would
/// refuse, each at its key: the kernel needs 1024 ns <= runtime <= deadline <= period, and a period
/// within `periods` (the kernel's, [`crate::sys::deadline_periods`]). A periodic task's runtime is
/// derived from `exec` within its `deadline`, so its `deadline` and `period` are checked; an own
/// reservation is checked as given (`runtime`, `dl_deadline`, `dl_period`).
fn deadline_refusals(
    scn: &Scenario,
    reserved: &dyn Fn(usize) -> bool,
    periods: (u64, u64),
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, t) in scn.tasks.iter().enumerate() {
        if !reserved(i) {
            continue;
        }
        let (runtime, deadline, period, keys) = match (&t.model, t.reservation) {
            (_, Some(r)) => (Some(r.runtime), r.deadline, r.period, ["runtime", "dl_deadline", "dl_period"]),
            (Model::Periodic(p), None) => (None, p.deadline, p.period, ["exec", "deadline", "period"]),
            _ => continue,
        };
        let mut refuse = |key: &str, message: String| {
            let by = match t.reservation {
                Some(_) => "its reservation".to_string(),
                None => format!("policy \"{}\"", scn.scheduler.policy),
            };
            out.push(Diagnostic {
                file: scn.path.clone(),
                line: t.line,
                col: 1,
                field: format!("task[{i}].{key} (task \"{}\")", t.name),
                message: format!("under {by} (SCHED_DEADLINE), {message}"),
            })
        };
        if let Some(r) = runtime {
            if r < 1024 {
                refuse(
                    keys[0],
                    format!("the runtime {} is below the kernel's least, 1024ns", format_time(r)),
                );
            } else if r > deadline {
                refuse(
                    keys[0],
                    format!(
                        "the runtime {} is beyond the deadline {}: the kernel takes runtime <= deadline",
                        format_time(r),
                        format_time(deadline)
                    ),
                );
            }
        }
        if deadline > period {
            refuse(
                keys[1],
                format!(
                    "the deadline {} is beyond the period {}: the kernel takes deadline <= period",
                    format_time(deadline),
                    format_time(period)
                ),
            );
        } else if deadline < 1024 {
            refuse(
                keys[1],
                format!(
                    "the deadline {} is below the kernel's least runtime, 1024ns (runtime <= deadline)",
                    format_time(deadline)
                ),
            );
        }
        if period < periods.0 || period > periods.1 {
            refuse(
                keys[2],
                format!(
                    "the period {} is outside what this kernel takes, {}..{} \
                     (/proc/sys/kernel/sched_deadline_period_{{min,max}}_us)",
                    format_time(period),
                    format_time(periods.0),
                    format_time(periods.1)
                ),
            );
        }
    }
    out
}

/// Task `i`s that never block (model `cpu`) in a real-time class: each holds its CPU for the whole run
/// but for what RT throttling leaves the others (`sched_rt_runtime_us`, 950 ms of every second; from
/// 6.12, the fair server's 50 ms of every second). Refused on the machine hourglass runs on unless
/// `--force`d: meant for a guest (`scenarios/kernel/guest/`, run by `scripts/vm/run-hourglass`), never
/// for a shared host.
fn rt_hogs(scn: &Scenario, sched: &Sched) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, t) in scn.tasks.iter().enumerate() {
        if !sched.is_rt(i) || !matches!(t.model, Model::Cpu { .. }) {
            continue;
        }
        let key = if t.class.is_some() { "class" } else { "model" };
        out.push(Diagnostic {
            file: scn.path.clone(),
            line: t.line,
            col: 1,
            field: format!("task[{i}].{key} (task \"{}\")", t.name),
            message: "a real-time task that never blocks (model \"cpu\") holds its CPU for the whole run \
                      but for what RT throttling leaves the others (950 ms of every second): run it in a \
                      guest (scenarios/kernel/guest/, scripts/vm/run-hourglass), or add --force"
                .into(),
        });
    }
    out
}

/// The error for a task whose key means to the scenario's policy what Linux cannot be told.
fn unreproducible(scn: &Scenario, u: &Unreproducible) -> Diagnostic {
    let t = &scn.tasks[u.task];
    Diagnostic {
        file: scn.path.clone(),
        line: t.line,
        col: 1,
        field: format!("task[{}].{} (task \"{}\")", u.task, u.key, t.name),
        message: format!("under policy \"{}\", {}", scn.scheduler.policy, u.message),
    }
}

/// The run's label for the class: `linux-fifo`, `linux-rr`, `linux-deadline`, `linux-fair`.
fn class_label(class: Class) -> &'static str {
    match class {
        Class::Fifo => "linux-fifo",
        Class::Rr => "linux-rr",
        Class::Deadline => "linux-deadline",
        Class::Fair => "linux-fair",
    }
}

/// The line of `[machine]`'s `key` (0, the whole file, when it is not given).
fn machine_line(scn: &Scenario, key: &str) -> usize {
    scn.machine.key_lines.get(key).copied().unwrap_or(0)
}

/// The scenario's limits on a real run: at most [`MAX_THREADS`] tasks, and (unless `-d` replaced
/// it, `duration_given`) a duration within the 10-minute cap unless `force`d.
fn limits(scn: &Scenario, duration_given: bool, force: bool) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    if scn.tasks.len() > MAX_THREADS {
        let line = scn.tasks.get(MAX_THREADS).map_or(0, |t| t.line);
        let message = format!(
            "{} tasks: hourglass runs at most {MAX_THREADS} threads, as with -n (this is task {})",
            scn.tasks.len(),
            MAX_THREADS + 1
        );
        errors.extend(scn.error(line, "tasks", message).diagnostics);
    }
    if !duration_given && scn.machine.duration > MAX_DURATION && !force {
        let message = format!(
            "{} is longer than hourglass's 10m cap for real runs: shorten it with -d, or add --force",
            format_time(scn.machine.duration)
        );
        errors.extend(scn.error(machine_line(scn, "duration"), "machine.duration", message).diagnostics);
    }
    errors
}

/// Warnings about what configures the simulated scheduler and machine, which this kernel's own
/// replace: scheduler options (but the one that gives shares their meaning, `nice0_share`, which
/// the mapping follows), and machine keys that differ from their defaults.
fn simulated_only(scn: &Scenario) -> Vec<String> {
    let mut warnings = Vec::new();
    let mapped = sched::entry(&scn.scheduler.policy).and_then(|e| e.fair.option());
    let keys: Vec<&str> =
        scn.scheduler.options.keys().map(String::as_str).filter(|k| Some(*k) != mapped).collect();
    if !keys.is_empty() {
        warnings.push(format!(
            "scheduler options ({}) configure the simulated policy; Linux's class is used as it is",
            keys.join(", ")
        ));
    }
    let m = &scn.machine;
    let mut keys = Vec::new();
    // A task on an emulated tick (tick, linux-2.4) uses machine.hz; otherwise it describes the
    // simulated machine only.
    let ticks = scn
        .tasks
        .iter()
        .any(|t| matches!(t.effective_timer(m), workload::TimerKind::Tick | workload::TimerKind::Linux24));
    if m.hz != 1000 && !ticks {
        keys.push("hz");
    }
    if m.billing != workload::Billing::Exact {
        keys.push("billing");
    }
    if m.overhead != Overheads::default() {
        keys.push("overhead");
    }
    match keys.as_slice() {
        [] => {}
        [k] => {
            warnings.push(format!("machine.{k} describes the simulated machine; this kernel's own is used"))
        }
        ks => warnings.push(format!(
            "machine.{{{}}} describe the simulated machine; this kernel's own are used",
            ks.join(", ")
        )),
    }
    warnings
}

/// Where the threads run, for the simulated machine's `machine.cpus` on this one, which lets
/// hourglass use `allowed` CPUs: one CPU (pinned, `default` or `--cpu`'s) for a uniprocessor, all of
/// them (unpinned: Linux's scheduling is global, as the simulator's default `partition`) for as
/// many; `--cpu` replaces it, with a warning. Returns the placement, its mapping line, and the
/// warning; or the keys that cannot be followed here: `machine.cpus` (neither 1 nor `allowed`),
/// `scheduler.partition` (a partitioned policy on several CPUs), a task's `cpus` (an affinity to
/// part of several CPUs).
fn placement(
    scn: &Scenario,
    base: &RunConfig,
    allowed: usize,
) -> Result<(CpuChoice, String, Option<String>), Vec<Diagnostic>> {
    let n = scn.machine.cpus as usize;
    let on = |c: CpuChoice| match c {
        CpuChoice::One(k) => format!("every thread pinned to CPU {k}"),
        CpuChoice::All => format!("unpinned on the {allowed} CPUs hourglass may use, placed by the kernel"),
    };
    if base.cpu_given {
        let same = match base.cpu {
            CpuChoice::One(_) => n == 1,
            CpuChoice::All => n == allowed,
        };
        let line = format!("machine.cpus = {n} → {} (--cpu)", on(base.cpu));
        let warning = (!same).then(|| {
            format!("--cpu replaces machine.cpus = {n}: {}, where the simulator has {n} CPU(s)", on(base.cpu))
        });
        return Ok((base.cpu, line, warning));
    }
    if n == 1 {
        let line = format!("machine.cpus = 1 → {} (the simulator's uniprocessor)", on(base.cpu));
        return Ok((base.cpu, line, None));
    }
    let mut refused = Vec::new();
    if n != allowed {
        let message = format!(
            "{n} CPUs: hourglass runs a scenario on one CPU (machine.cpus = 1) or on all the {allowed} CPUs it \
             may use here (machine.cpus = {allowed}), as the simulator would; or choose with --cpu"
        );
        refused.extend(scn.error(machine_line(scn, "cpus"), "machine.cpus", message).diagnostics);
    }
    let opts = scn.scheduler.policy_options();
    if sched::Partition::of(&opts).is_ok_and(|p| p != sched::Partition::Global) {
        let line = scn.scheduler.key_lines.get("partition").copied().unwrap_or(scn.scheduler.line);
        let message = format!(
            "a partitioned policy on {n} CPUs: Linux's scheduling across the CPUs is global; run it with \
             machine.cpus = 1, or partition = \"global\""
        );
        refused.extend(scn.error(line, "scheduler.partition", message).diagnostics);
    }
    for (i, t) in scn.tasks.iter().enumerate() {
        if t.cpus.as_ref().is_some_and(|c| c.len() < n) {
            refused.push(Diagnostic {
                file: scn.path.clone(),
                line: t.line,
                col: 1,
                field: format!("task[{i}].cpus (task \"{}\")", t.name),
                message: format!(
                    "an affinity to part of the {n} CPUs, which hourglass does not pin; leave it out, or run \
                     on one CPU (machine.cpus = 1)"
                ),
            });
        }
    }
    if !refused.is_empty() {
        return Err(refused);
    }
    let line = format!("machine.cpus = {n} → {} (the simulator's global scheduling)", on(CpuChoice::All));
    Ok((CpuChoice::All, line, None))
}

/// The keys of task `t` a kernel has no counterpart for (`cpus`, when `--cpu` replaced the machine's).
fn ignored_keys(t: &TaskSpec, cpu_given: bool) -> impl Iterator<Item = &'static str> {
    [
        t.latency_tolerance.is_some().then_some("latency_tolerance"),
        (cpu_given && t.cpus.is_some()).then_some("cpus"),
        (t.working_set > 0 && !matches!(t.model, Model::Cpu { .. }))
            .then_some("working_set (of periodic and interactive tasks)"),
    ]
    .into_iter()
    .flatten()
}

/// Task number `i`, `t`, as a thread: it runs the task's own stream, scheduled as `sched` says,
/// on the Linux timer nearest the task's. Returns the thread and its mapping line.
fn thread_of(i: usize, t: &TaskSpec, sched: &Sched, m: &workload::Machine) -> (ThreadSpec, String) {
    let mut spec = ThreadSpec::for_task(i, t);
    let timer = t.effective_timer(m);
    spec.timer = timer_of(timer, m.hz);
    let mut notes: Vec<&str> = timer_note(timer).into_iter().collect();
    if let Model::Periodic(p) = &t.model {
        if late_rule(p) != LateRule::Finish {
            notes.push("a request not done by its deadline is dropped there");
        }
    }
    if matches!(t.model, Model::Cpu { .. }) && t.working_set > crate::budget::SCAN_CAP {
        notes.push(
            "working_set over 256MiB: it scans 256MiB, more than any cache (every line refilled after a \
             switch, as the simulator's refill of min(working_set, cache))",
        );
    }
    notes.extend(sched.apply(i, t, &mut spec));
    let sched_linux = match spec.reservation {
        Some(r) if r.deadline != r.period => format!(
            "SCHED_DEADLINE {}/{}, deadline {}",
            format_time(r.amount),
            format_time(r.period),
            format_time(r.deadline)
        ),
        Some(r) => format!("SCHED_DEADLINE {}/{}", format_time(r.amount), format_time(r.period)),
        None => spec.priority.describe(),
    };
    let line = format!(
        "task \"{}\": {} → {}, {}, timer {}{}{}",
        t.name,
        t.model.name(),
        spec.workload.describe(),
        sched_linux,
        spec.timer.name(),
        if notes.is_empty() { "" } else { "; " },
        notes.join("; ")
    );
    (spec, line)
}

/// A task that starts after the end of a run of `duration`.
fn starts_too_late(scn: &Scenario, i: usize, t: &TaskSpec, duration: u64) -> Diagnostic {
    Diagnostic {
        file: scn.path.clone(),
        line: t.line,
        col: 1,
        field: format!("task[{i}].start (task \"{}\")", t.name),
        message: format!(
            "starts at {}, after the end of the run ({})",
            format_time(t.start),
            format_time(duration)
        ),
    }
}

/// Maps a validated scenario onto a run: one thread per task, running the task itself (its
/// [`workload::Stream`]), scheduled in the policy's Linux class; the scenario's duration (unless
/// `duration_given`) and seed. Fails on what cannot run here (an unknown policy or option, a
/// duration over the 10 min cap without `--force`, a task starting after a shortened run),
/// pointing into the scenario.
pub fn from_scenario(
    scn: &Scenario,
    base: RunConfig,
    duration_given: bool,
) -> Result<RunConfig, ScenarioError> {
    map_scenario(scn, base, duration_given, unserved_classes(scn))
}

/// The tasks whose `class` names no class of the scenario's policy (or of its class stack), each at
/// its key, as the simulator refuses them (`sched::registry::classes`); none when the policy is
/// unknown (that is refused at `scheduler.policy`).
fn unserved_classes(scn: &Scenario) -> Vec<Diagnostic> {
    let name = scn.scheduler.policy.as_str();
    let Ok(known) = sched::registry::classes(name, &scn.scheduler.policy_options()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, t) in scn.tasks.iter().enumerate() {
        if let Some(c) = t.class.as_deref().filter(|c| !known.contains(c)) {
            out.push(Diagnostic {
                file: scn.path.clone(),
                line: t.line,
                col: 1,
                field: format!("task[{i}].class (task \"{}\")", t.name),
                message: format!(
                    "\"{c}\" is not a class of policy \"{name}\" (its classes: {}); a scenario stacks classes \
                     with [scheduler] classes",
                    known.join(", ")
                ),
            });
        }
    }
    out
}

/// The tasks that work with others (a `server` task, a client handing it work, a media `player`, a
/// `forkwait` job and its children): the simulator runs them; hourglass's threads do not talk to each
/// other or fork, and refuses them, each at its task.
fn simulated_only_models(scn: &Scenario) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, t) in scn.tasks.iter().enumerate() {
        let what = match (&t.model, &t.send) {
            (Model::Server, _) => "a server (model \"server\")",
            (Model::Player(_), _) => "a media player (model \"player\")",
            (Model::ForkWait { .. }, _) => "a fork-and-wait job (model \"forkwait\")",
            (_, Some(_)) => "a client of a server (key `server`)",
            _ => continue,
        };
        out.push(Diagnostic {
            file: t.source(&scn.path).to_string(),
            line: t.line,
            col: 1,
            field: format!("task[{i}] (task \"{}\")", t.name),
            message: format!(
                "{what} is simulated only: hourglass runs cpu, periodic and interactive tasks as real \
                 threads that do not work together; run this scenario with smartsim run"
            ),
        });
    }
    out
}

/// [`from_scenario`] with `errors` found already.
fn map_scenario(
    scn: &Scenario,
    base: RunConfig,
    duration_given: bool,
    mut errors: Vec<Diagnostic>,
) -> Result<RunConfig, ScenarioError> {
    let mut cfg = base;
    let (class, rule) = match policy_class(scn) {
        Ok((c, rule)) => (c, rule),
        Err(e) => {
            errors.extend(e.diagnostics);
            (Class::Fair, FairRule::Kernel)
        }
    };
    errors.extend(limits(scn, duration_given, cfg.force));
    if !duration_given {
        cfg.duration = scn.machine.duration;
    }
    cfg.seed = Some(scn.machine.seed);
    cfg.source = scn.path.clone();
    cfg.scenario_name = Some(scn.name.clone());
    cfg.scenario_policy = Some(scn.scheduler.policy.clone());
    cfg.policy = class_label(class).into();

    let (sched, refused) = Sched::of(scn, class, rule);
    errors.extend(refused);
    errors.extend(deadline_refusals(
        scn,
        &|i| sched.in_deadline(i, &scn.tasks[i]),
        crate::sys::deadline_periods(),
    ));
    errors.extend(linux24_sleeps(scn, &sched));
    if !cfg.force {
        errors.extend(rt_hogs(scn, &sched));
    }
    let mut mapping = vec![sched.describe(&scn.scheduler.policy)];
    mapping.extend(sched.describe_own(scn));
    let mut cpu_warning = None;
    match placement(scn, &cfg, crate::sys::allowed_cpus().len()) {
        Ok((cpu, line, warning)) => {
            cfg.cpu = cpu;
            mapping.push(line);
            cpu_warning = warning;
        }
        Err(refused) => errors.extend(refused),
    }
    if sched.ranked && matches!(class, Class::Fifo | Class::Rr) {
        mapping.push("priorities outside 0..=97: real-time levels are their ranks (order kept)".into());
    }
    errors.extend(simulated_only_models(scn));
    let mut ignored = std::collections::BTreeSet::new();
    let mut threads = Vec::new();
    for (i, t) in scn.tasks.iter().enumerate() {
        let (spec, line) = thread_of(i, t, &sched, &scn.machine);
        if spec.start >= cfg.duration {
            errors.push(starts_too_late(scn, i, t, cfg.duration));
        }
        ignored.extend(ignored_keys(t, cfg.cpu_given));
        mapping.push(line);
        threads.push(spec);
    }
    if scn.tasks.iter().any(|t| matches!(t.model, Model::Periodic(_))) {
        mapping.push(
            "periodic tasks: Linux takes no time constraint (estimate, notify): a task learns of a miss \
             itself, at the deadline; on_miss = \"discard\" drops the request then, \"finish\" (or \
             notify = \"never\") completes it late"
                .into(),
        );
    }
    let mut warnings = simulated_only(scn);
    warnings.extend(cpu_warning);
    if !ignored.is_empty() {
        let keys: Vec<&str> = ignored.into_iter().collect();
        warnings.push(format!("no kernel counterpart, ignored: {}", keys.join(", ")));
    }
    if !errors.is_empty() {
        errors.sort_by_key(|d| (d.line, d.col));
        return Err(ScenarioError { diagnostics: errors });
    }
    cfg.threads = threads;
    cfg.scenario_warnings = warnings;
    cfg.scenario_mapping = mapping;
    crate::budget::check_run(&cfg).map_err(|(part, m)| memory_refused(scn, &part, m))?;
    Ok(cfg)
}

/// The refusal of a run whose memory is over the limit ([`crate::budget`]), at the key of its largest
/// part: a task's `working_set`, `period` or `think`; the run's duration (the trace buffer), `-e`, or
/// the number of tasks (their stacks).
fn memory_refused(scn: &Scenario, part: &crate::budget::Part, message: String) -> ScenarioError {
    let Some(i) = part.thread else {
        let (field, line) = match part.option {
            "-d" => ("machine.duration", machine_line(scn, "duration")),
            "-n" => ("tasks", 0),
            other => (other, 0),
        };
        return scn.error(line, field, message);
    };
    let t = &scn.tasks[i];
    let key = match (&t.model, part.what.contains("array")) {
        (_, true) => "working_set",
        (Model::Interactive { .. }, false) => "think",
        _ => "period",
    };
    let field = format!("task[{i}].{key} (task \"{}\")", t.name);
    scn.error(t.line, &field, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[machine]
duration = "2s"
hz = 1000
timer = "hr"
seed = 7

[scheduler]
policy = "fifo"

[[task]]
name = "audio"
model = "periodic"
exec = "2ms..3ms"
period = "10ms"
deadline = "8ms"
count = 50
on_miss = "finish"
priority = 2
jitter = "1ms"

[[task]]
name = "batch"
model = "cpu"
work = "500ms"
working_set = "256KiB"

[[task]]
name = "editor"
model = "interactive"
think = "exp(50ms)"
burst = "normal(2ms, 500us)"
count = 10
"#;

    /// GOOD's cpu task `batch` never blocks under SCHED_FIFO: forced (meant for a guest, [`rt_hogs`]).
    fn load_good() -> RunConfig {
        let mut base = RunConfig::new(0);
        base.force = true;
        load_str(GOOD, "good.toml", base, false).unwrap()
    }

    #[test]
    fn every_task_runs_as_a_thread_of_its_own_stream() {
        let c = load_good();
        assert_eq!(c.duration, 2_000_000_000);
        assert_eq!(c.seed, Some(7));
        assert_eq!(c.policy, "linux-fifo");
        assert_eq!(c.scenario_name.as_deref(), Some("good"));
        // Each thread runs the scenario's task itself, in the task's window: no translation.
        let scn = workload::parse_str(GOOD, "good.toml").unwrap();
        for (th, t) in c.threads.iter().zip(&scn.tasks) {
            assert_eq!(th.workload.task(), Some(t));
            assert_eq!((&th.name, th.start, th.finish), (&t.name, t.start, t.stop));
        }
        let a = &c.threads[0];
        assert_eq!(a.priority, Priority::Fifo(3));
        assert_eq!(a.workload.describe(), "PERIODIC 2ms..3ms 10.0ms");
        assert_eq!(a.workload.period(), Some(10_000_000));
        assert!(a.workload.has_deadlines() && !a.workload.never_blocks());
        // The cpu task scans its working set, and never blocks.
        let b = &c.threads[1].workload;
        assert_eq!(
            (b.describe(), b.scenario_name(), b.scan_bytes()),
            ("CPU_SCAN 256".into(), "cpu-scan", Some(262144))
        );
        assert!(b.never_blocks() && b.timer_period().is_none());
        assert_eq!(c.threads[1].priority, Priority::Fifo(1));
        let e = &c.threads[2].workload;
        assert_eq!(e.describe(), "INTERACTIVE exp(50ms) normal(2ms, 500us)");
        assert_eq!((e.timer_period(), e.has_deadlines()), (Some(50_000_000), false));
        // The mapping says what each task became.
        assert!(
            c.scenario_mapping[0].contains("policy \"fifo\" (simulated) runs as SCHED_FIFO"),
            "{:?}",
            c.scenario_mapping
        );
        assert!(
            c.scenario_mapping
                .iter()
                .any(|l| l.starts_with("task \"audio\": periodic → PERIODIC 2ms..3ms 10.0ms, SCHED_FIFO 3")),
            "{:?}",
            c.scenario_mapping
        );
    }

    #[test]
    fn a_task_is_written_in_json_as_the_appendix_a_model_it_amounts_to() {
        let c = load_good();
        let params = |i: usize| serde_json::to_value(&c.threads[i].workload).unwrap();
        assert_eq!(
            params(0),
            serde_json::json!({"model": "PERIODIC", "exec": "2ms..3ms", "period": 10_000_000,
                               "deadline": 8_000_000, "finish_late": true})
        );
        assert_eq!(params(1), serde_json::json!({"model": "CPU_SCAN", "bytes": 262144}));
        assert_eq!(
            params(2),
            serde_json::json!({"model": "INTERACTIVE", "think": "exp(50ms)", "burst": "normal(2ms, 500us)"})
        );
        assert_eq!(
            serde_json::to_value(crate::config::Workload::periodic(4_000_000, 5_000_000)).unwrap(),
            serde_json::json!({"model": "PERIODIC", "exec": "4ms", "period": 5_000_000})
        );
        assert_eq!(
            serde_json::to_value(crate::config::Workload::Lat { period: 1_000_000 }).unwrap(),
            serde_json::json!({"model": "LAT", "period": 1_000_000})
        );
    }

    #[test]
    fn defaults_are_the_workload_crates() {
        let s = "[machine]\nduration = \"1s\"\n[[task]]\nname = \"R\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\n";
        let c = load_str(s, "d.toml", RunConfig::new(0), false).unwrap();
        // seed 1, policy smart, deadline = period, on_miss discard (dropped at the deadline), hr
        // timer, no jitter, no count.
        assert_eq!(c.seed, Some(1));
        assert_eq!(c.scenario_policy.as_deref(), Some("smart"));
        assert_eq!(c.policy, "linux-fair");
        let t = &c.threads[0];
        let p = t.workload.periodic_task().unwrap();
        assert_eq!(
            (p.exec, p.period, p.deadline, p.count),
            (Exec::Fixed(1_000_000), 10_000_000, 10_000_000, None)
        );
        assert_eq!(late_rule(p), LateRule::DropAtDeadline);
        assert_eq!(t.timer, TimerKind::Hr);
        assert_eq!((t.workload.task().unwrap().jitter, t.start, t.finish), (None, 0, None));
        assert_eq!(t.priority, Priority::Nice(0));
    }

    #[test]
    fn a_tick_timer_is_an_emulated_tick_at_the_machines_hz() {
        let task = "[[task]]\nname = \"T\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"33ms\"\ntimer = \"tick\"\n";
        for (hz, want) in [(100, TimerKind::Tick(100)), (250, TimerKind::Tick(250))] {
            let s = format!("[machine]\nduration = \"1s\"\nhz = {hz}\n{task}");
            let c = load_str(&s, "t.toml", RunConfig::new(0), false).unwrap();
            assert_eq!(c.threads[0].timer, want, "hz = {hz}");
        }
    }

    #[test]
    fn errors_are_the_workload_crates_with_file_line_and_field() {
        // Validation is the simulator's: every problem at once, file:line:col: field: message.
        let bad = "[machine]\nduration = \"10\"\n\n[[task]]\nname = \"R1\"\nmodel = \"periodic\"\nperoid = \"40ms\"\nexec = \"gamma(2ms)\"\n";
        let e = load_str(bad, "bad.toml", RunConfig::new(0), false).unwrap_err();
        assert_eq!(e, workload::parse_str(bad, "bad.toml").unwrap_err());
        let text = e.to_string();
        assert!(text.lines().any(|l| l.starts_with("bad.toml:2:12: machine.duration:")), "{text}");
        assert!(text.lines().any(|l| l.starts_with("bad.toml:7:1: task[0].peroid (task \"R1\"):")), "{text}");
        assert!(text.lines().any(|l| l.starts_with("bad.toml:8:8: task[0].exec (task \"R1\"):")), "{text}");
        assert!(load_str("[machine\n", "x.toml", RunConfig::new(0), false)
            .unwrap_err()
            .to_string()
            .starts_with("x.toml:1:"));
    }

    #[test]
    fn policy_and_options_are_checked_as_the_simulator_checks_them() {
        let base = "[machine]\nduration = \"1s\"\n[scheduler]\n";
        let task = "[[task]]\nname = \"a\"\nmodel = \"cpu\"\n";
        let e = load_str(&format!("{base}policy = \"cfs9000\"\n{task}"), "p.toml", RunConfig::new(0), false)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("p.toml:4:1: scheduler.policy: unknown policy \"cfs9000\""), "{e}");
        let e = load_str(
            &format!("{base}policy = \"rr\"\nslise = \"10ms\"\n{task}"),
            "p.toml",
            RunConfig::new(0),
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("p.toml:5:1: scheduler.slise:"), "{e}");
        let mut forced = RunConfig::new(0);
        forced.force = true; // a SCHED_RR hog ([`rt_hogs`])
        let c =
            load_str(&format!("{base}policy = \"rr\"\nslice = \"10ms\"\n{task}"), "p.toml", forced, false)
                .unwrap();
        assert_eq!(c.threads[0].priority, Priority::Rr(1));
        assert!(c.scenario_warnings.iter().any(|w| w.contains("scheduler options (slice)")));
        // Linux's own classes are the registry's, simulated.
        assert_eq!(
            load_str(&format!("{base}policy = \"cfs\"\n{task}"), "p.toml", RunConfig::new(0), false)
                .unwrap()
                .policy,
            "linux-fair"
        );
        assert!(load_str(
            &format!("{base}policy = \"cfs\"\nlatency = \"6ms\"\n{task}"),
            "p.toml",
            RunConfig::new(0),
            false
        )
        .is_ok());
    }

    #[test]
    fn fair_policies_use_nice_from_share_and_idle_below_the_top_priority() {
        let s = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"smart\"\n\
                 [[task]]\nname = \"a\"\nmodel = \"cpu\"\nshare = 3\npriority = 1\n\
                 [[task]]\nname = \"b\"\nmodel = \"cpu\"\nshare = 0\npriority = 1\n\
                 [[task]]\nname = \"c\"\nmodel = \"cpu\"\npriority = 1\n";
        let c = load_str(s, "s.toml", RunConfig::new(0), false).unwrap();
        assert_eq!(c.threads[0].priority, Priority::Nice(-5)); // 1.25^5 ~ 3
        assert_eq!(c.threads[1].priority, Priority::Idle);
        assert_eq!(c.threads[2].priority, Priority::Nice(0));
        assert!(c.scenario_mapping[0].contains("fair class"));
        assert!(
            c.scenario_mapping.iter().any(|l| l.starts_with("task \"b\": cpu → CPU, SCHED_IDLE")),
            "{:?}",
            c.scenario_mapping
        );
    }

    #[test]
    fn a_third_group_of_a_share_policy_is_refused_naming_the_task_and_key() {
        // SMART runs b (share 0) only when a does not want the CPU, and c (priority 0) only when
        // neither does; Linux's fair class says two things (a nice level, SCHED_IDLE), not three.
        let s = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"smart\"\n\
                 [[task]]\nname = \"a\"\nmodel = \"cpu\"\nshare = 3\npriority = 1\n\
                 [[task]]\nname = \"b\"\nmodel = \"cpu\"\nshare = 0\npriority = 1\n\
                 [[task]]\nname = \"c\"\nmodel = \"cpu\"\npriority = 0\n";
        let e = load_str(s, "s.toml", RunConfig::new(0), false).unwrap_err().to_string();
        let want =
            "s.toml:15:1: task[2].priority (task \"c\"): under policy \"smart\", priority 0 is a third group";
        assert!(e.starts_with(want), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }

    #[test]
    fn eevdf_shares_are_nice_levels_from_its_own_nice0_share() {
        // nice0_share = 100 (as scx_smart passes kernel weights): share 100 is nice 0, 304 is -5, 50
        // is 3, as the simulated eevdf weighs them; they were nice -20, -20 and -18 (share 1 nice 0).
        let s = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"eevdf\"\nnice0_share = 100\ntick = \"4ms\"\n\
                 [[task]]\nname = \"a\"\nmodel = \"cpu\"\nshare = 100\n\
                 [[task]]\nname = \"b\"\nmodel = \"cpu\"\nshare = 304\n\
                 [[task]]\nname = \"c\"\nmodel = \"cpu\"\nshare = 50\n";
        let c = load_str(s, "e.toml", RunConfig::new(0), false).unwrap();
        let got: Vec<Priority> = c.threads.iter().map(|t| t.priority).collect();
        assert_eq!(got, [Priority::Nice(0), Priority::Nice(-5), Priority::Nice(3)]);
        assert!(c.scenario_mapping[0].contains("nice = -log1.25(share / 100)"), "{:?}", c.scenario_mapping);
        assert!(c
            .scenario_mapping
            .iter()
            .any(|l| l.starts_with("task \"c\": cpu → CPU, SCHED_OTHER nice 3")));
        // nice0_share is followed, not warned about; tick configures the simulated policy only.
        assert_eq!(
            c.scenario_warnings,
            ["scheduler options (tick) configure the simulated policy; Linux's class is used as it is"]
        );
        // The weights are the simulated policy's, task by task.
        let scn = workload::parse_str(s, "e.toml").unwrap();
        let mut core = sched::build("eevdf", &scn.scheduler.policy_options(), 1).unwrap();
        for (i, t) in scn.tasks.iter().enumerate() {
            let p = sched::TaskParams { share: t.share, ..Default::default() };
            core.admit(sched::TaskId(i as u32), &p, 0);
            core.wake(sched::TaskId(i as u32), 0);
        }
        let total: u64 = [1024, 3121, 526].iter().sum();
        for (i, w) in [1024u64, 3121, 526].into_iter().enumerate() {
            let sim = core.availability(sched::TaskId(i as u32), 0).allocation_rate;
            assert!((sim - 100.0 * w as f64 / total as f64).abs() < 1e-9, "task {i}: {sim}");
        }
    }

    #[test]
    fn ts_priorities_are_solaris_nice_levels_and_never_sched_idle() {
        // ts's priority is the user priority, nice n = -3n; its share means nothing. They were
        // SCHED_IDLE below the highest priority, and nice from the share.
        let s = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"ts\"\n\
                 [[task]]\nname = \"a\"\nmodel = \"cpu\"\npriority = 0\nshare = 3\n\
                 [[task]]\nname = \"b\"\nmodel = \"cpu\"\npriority = -3\n\
                 [[task]]\nname = \"c\"\nmodel = \"cpu\"\npriority = 6\nshare = 0\n";
        let c = load_str(s, "t.toml", RunConfig::new(0), false).unwrap();
        let got: Vec<Priority> = c.threads.iter().map(|t| t.priority).collect();
        assert_eq!(got, [Priority::Nice(0), Priority::Nice(1), Priority::Nice(-2)]);
        assert!(c.scenario_mapping[0].contains("nice = -priority / 3"), "{:?}", c.scenario_mapping);
        // A user priority with no nice level is refused, naming the task and its key.
        let bad = s.replace("priority = -3", "priority = -4");
        let e = load_str(&bad, "t.toml", RunConfig::new(0), false).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "t.toml:10:1: task[1].priority (task \"b\"): under policy \"ts\", user priority -4"
            ),
            "{e}"
        );
    }

    #[test]
    fn eevdf_refuses_a_task_weighed_by_its_share_until_a_higher_priority_starts() {
        let s = "[machine]\nduration = \"3s\"\n[scheduler]\npolicy = \"eevdf\"\n\
                 [[task]]\nname = \"a\"\nmodel = \"cpu\"\n\
                 [[task]]\nname = \"b\"\nmodel = \"cpu\"\nshare = 3\n\
                 [[task]]\nname = \"fg\"\nmodel = \"cpu\"\npriority = 1\nstart = \"1s\"\n";
        let e = load_str(s, "s.toml", RunConfig::new(0), false).unwrap_err().to_string();
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(lines.len(), 2, "{e}");
        assert!(
            lines[0].starts_with("s.toml:5:1: task[0].start (task \"a\"): under policy \"eevdf\""),
            "{e}"
        );
        assert!(lines[1].starts_with("s.toml:8:1: task[1].start (task \"b\"):"), "{e}");
        // Started with it, they are SCHED_IDLE in both from the start.
        let c = load_str(&s.replace("start = \"1s\"", "start = \"0s\""), "s.toml", RunConfig::new(0), false);
        let got: Vec<Priority> = c.unwrap().threads.iter().map(|t| t.priority).collect();
        assert_eq!(got, [Priority::Idle, Priority::Idle, Priority::Nice(0)]);
    }

    #[test]
    fn deadline_policies_reserve_the_largest_exec() {
        let s = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"edf\"\n\
                 [[task]]\nname = \"u\"\nmodel = \"periodic\"\nexec = \"1ms..2ms\"\nperiod = \"10ms\"\n\
                 [[task]]\nname = \"e\"\nmodel = \"periodic\"\nexec = \"exp(1ms)\"\nperiod = \"10ms\"\n\
                 [[task]]\nname = \"b\"\nmodel = \"cpu\"\n";
        let c = load_str(s, "s.toml", RunConfig::new(0), false).unwrap();
        assert_eq!(
            c.threads[0].reservation,
            Some(Reservation { amount: 2_200_000, deadline: 10_000_000, period: 10_000_000, soft: false })
        );
        // 2ms + 5 % + 100us; exp(1ms): mean * ln 100 = 4.605170ms, + 5 % + 100us.
        assert_eq!(c.threads[1].reservation.unwrap().amount, 4_605_170 + 230_258 + 100_000);
        assert_eq!(c.threads[2].reservation, None);
        assert_eq!(c.threads[2].priority, Priority::Normal);
    }

    #[test]
    fn a_working_set_beyond_any_cache_is_scanned_capped_and_the_mapping_says_so() {
        let s = "[machine]\nduration = \"200ms\"\n[scheduler]\npolicy = \"wfq\"\n\
                 [[task]]\nname = \"a\"\nmodel = \"cpu\"\nworking_set = \"4GiB\"\n\
                 [[task]]\nname = \"b\"\nmodel = \"cpu\"\nworking_set = \"4GiB\"\n";
        let c = load_str(s, "w.toml", RunConfig::new(0), false).unwrap();
        for t in &c.threads {
            assert_eq!(t.workload.scan_bytes(), Some(crate::budget::SCAN_CAP as usize));
        }
        assert!(
            c.scenario_mapping.iter().any(|l| l.starts_with("task \"a\": cpu → CPU_SCAN 262144")
                && l.contains("working_set over 256MiB: it scans 256MiB")),
            "{:?}",
            c.scenario_mapping
        );
    }

    #[test]
    fn a_run_over_the_memory_limit_is_refused_at_the_key_of_its_largest_part() {
        let ws = |n: usize, size: &str| {
            let mut s = "[machine]\nduration = \"200ms\"\n[scheduler]\npolicy = \"wfq\"\n".to_string();
            for i in 0..n {
                s += &format!("[[task]]\nname = \"t{i}\"\nmodel = \"cpu\"\nworking_set = \"{size}\"\n");
            }
            s
        };
        let e = load_str(&ws(6, "200MiB"), "w.toml", RunConfig::new(0), false).unwrap_err().to_string();
        assert!(
            e.starts_with("w.toml:5:1: task[0].working_set (task \"t0\"): this run would hold about"),
            "{e}"
        );
        assert!(e.contains("over the limit of 1.0 GiB") && e.contains("--force"), "{e}");
        assert!(load_str(&ws(3, "200MiB"), "w.toml", RunConfig::new(0), false).is_ok());
        // A period of a nanosecond: every request a sample, for the whole run.
        let p = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"wfq\"\n\
                 [[task]]\nname = \"p\"\nmodel = \"periodic\"\nexec = \"1ns\"\nperiod = \"1ns\"\n";
        let e = load_str(p, "p.toml", RunConfig::new(0), false).unwrap_err().to_string();
        assert!(e.starts_with("p.toml:5:1: task[0].period (task \"p\"): this run would hold"), "{e}");
    }

    #[test]
    fn a_deadline_before_the_period_is_given_to_the_kernel_and_one_it_would_refuse_is_refused() {
        let task = |exec: &str, period: &str, deadline: &str| {
            format!(
                "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"edf\"\n\
                 [[task]]\nname = \"p\"\nmodel = \"periodic\"\nexec = \"{exec}\"\nperiod = \"{period}\"\ndeadline = \"{deadline}\"\n"
            )
        };
        let c = load_str(&task("200us", "20ms", "1ms"), "d.toml", RunConfig::new(0), false).unwrap();
        let r = c.threads[0].reservation.unwrap();
        assert_eq!((r.amount, r.deadline, r.period), (310_000, 1_000_000, 20_000_000));
        assert!(
            c.scenario_mapping.iter().any(|l| l.contains("SCHED_DEADLINE 310us/20ms, deadline 1ms")),
            "{:?}",
            c.scenario_mapping
        );
        assert!(c.scenario_mapping[0].contains("deadline = deadline"), "{:?}", c.scenario_mapping);
        // The runtime stays within the deadline.
        let c = load_str(&task("2ms", "20ms", "1ms"), "d.toml", RunConfig::new(0), false).unwrap();
        let r = c.threads[0].reservation.unwrap();
        assert_eq!((r.amount, r.deadline), (1_000_000, 1_000_000));
        // Beyond the period, or below the least runtime: refused at the key.
        let e = load_str(&task("1ms", "20ms", "30ms"), "d.toml", RunConfig::new(0), false).unwrap_err();
        assert!(
            e.to_string().starts_with("d.toml:5:1: task[0].deadline (task \"p\"): under policy \"edf\""),
            "{e}"
        );
        assert!(e.to_string().contains("deadline <= period"), "{e}");
        let e = load_str(&task("100ns", "20ms", "500ns"), "d.toml", RunConfig::new(0), false).unwrap_err();
        assert!(e.to_string().contains("task[0].deadline") && e.to_string().contains("1024ns"), "{e}");
        // A period outside the kernel's range.
        let scn = workload::parse_str(&task("10us", "50us", "50us"), "d.toml").unwrap();
        let refused = deadline_refusals(&scn, &|_| true, (100_000, 4_194_304_000));
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].field, "task[0].period (task \"p\")");
        assert!(deadline_refusals(&scn, &|_| false, (100_000, 4_194_304_000)).is_empty());
    }

    #[test]
    fn machine_cpus_is_one_pinned_cpu_or_all_of_them_or_refused_at_the_key() {
        let scn = |cpus: u32, extra: &str, task: &str| {
            let s = format!(
                "[machine]\nduration = \"1s\"\ncpus = {cpus}\n[scheduler]\npolicy = \"wfq\"\n{extra}\
                 [[task]]\nname = \"a\"\nmodel = \"cpu\"\n{task}"
            );
            workload::parse_str(&s, "c.toml").unwrap()
        };
        let base = RunConfig::new(0);
        let (cpu, line, warning) = placement(&scn(1, "", ""), &base, 4).unwrap();
        assert_eq!((cpu, warning), (base.cpu, None));
        assert!(line.starts_with("machine.cpus = 1 → every thread pinned to CPU"), "{line}");
        let (cpu, line, warning) = placement(&scn(4, "", ""), &base, 4).unwrap();
        assert_eq!((cpu, warning), (CpuChoice::All, None));
        assert!(line.contains("unpinned on the 4 CPUs"), "{line}");
        // More or fewer than this machine has: refused, naming the key.
        let e = placement(&scn(2, "", ""), &base, 4).unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].field, "machine.cpus");
        assert!(e[0].to_string().starts_with("c.toml:3:1: machine.cpus: 2 CPUs: hourglass runs"), "{}", e[0]);
        assert_eq!(placement(&scn(8, "", ""), &base, 4).unwrap_err()[0].field, "machine.cpus");
        // A partitioned policy, an affinity to part of the CPUs: refused at their keys.
        let e = placement(&scn(4, "partition = \"ffd\"\n", ""), &base, 4).unwrap_err();
        assert_eq!((e.len(), e[0].field.as_str(), e[0].line), (1, "scheduler.partition", 6));
        let e = placement(&scn(4, "", "cpus = [1, 2]\n"), &base, 4).unwrap_err();
        assert_eq!((e.len(), e[0].field.as_str(), e[0].line), (1, "task[0].cpus (task \"a\")", 6));
        assert!(placement(&scn(1, "partition = \"ffd\"\n", "cpus = [0]\n"), &base, 4).is_ok());
        // --cpu replaces it, with a warning when the two differ.
        let mut given = RunConfig::new(0);
        given.cpu_given = true;
        given.cpu = CpuChoice::All;
        let (cpu, _, warning) = placement(&scn(1, "", ""), &given, 4).unwrap();
        assert_eq!(cpu, CpuChoice::All);
        assert!(warning.unwrap().starts_with("--cpu replaces machine.cpus = 1"));
        assert_eq!(placement(&scn(4, "", ""), &given, 4).unwrap().2, None);
    }

    #[test]
    fn fifo_levels_keep_the_order_of_any_priorities() {
        assert_eq!(rt_levels(&[0, 5, 97]), (vec![1, 6, 98], false));
        assert_eq!(rt_levels(&[-10, 200, 3, 200]), (vec![1, 3, 2, 3], true));
    }

    #[test]
    fn a_task_after_a_shortened_run_is_an_error_naming_its_line() {
        let s = "[machine]\nduration = \"10s\"\n[[task]]\nname = \"late\"\nmodel = \"cpu\"\nstart = \"5s\"\n";
        let mut base = RunConfig::new(0);
        base.duration = 1_000_000_000;
        let e = load_str(s, "l.toml", base, true).unwrap_err().to_string();
        assert!(e.starts_with("l.toml:3:1: task[0].start (task \"late\"): starts at 5s"), "{e}");
    }

    const STACK: &str = "stack";
    const STACK_OPTS: &str = "classes = \"linux\"\n";
    /// The line of the first `[[task]]` of [`stack`].
    const STACK_LINE: usize = 6;

    #[test]
    fn a_class_the_policy_does_not_serve_is_refused_at_its_key() {
        let s = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"eevdf\"\n\
                 [[task]]\nname = \"a\"\nmodel = \"interactive\"\nthink = \"5ms\"\nburst = \"1ms\"\nclass = \"fifo\"\npriority = 5\n";
        let e = load_str(s, "c.toml", RunConfig::new(0), false).unwrap_err();
        assert_eq!(e.diagnostics.len(), 1, "{e}");
        let e = e.to_string();
        assert!(
            e.starts_with(
                "c.toml:5:1: task[0].class (task \"a\"): \"fifo\" is not a class of policy \"eevdf\""
            ),
            "{e}"
        );
    }

    /// A scenario of the class stack "linux" with `tasks` (TOML of [[task]] tables).
    fn stack(tasks: &str) -> String {
        format!("[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"{STACK}\"\n{STACK_OPTS}{tasks}")
    }

    #[test]
    fn a_tasks_nice_is_its_level_in_the_fair_class_in_place_of_the_share_rule() {
        // share 3 alone would be nice -5 (1.25^5 ~ 3); its nice 5 wins. The others keep the rule.
        let s = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"eevdf\"\n\
                 [[task]]\nname = \"a\"\nmodel = \"cpu\"\nshare = 3\nnice = 5\n\
                 [[task]]\nname = \"b\"\nmodel = \"cpu\"\nshare = 3\n\
                 [[task]]\nname = \"c\"\nmodel = \"cpu\"\nnice = -5\n";
        let c = load_str(s, "n.toml", RunConfig::new(0), false).unwrap();
        let got: Vec<Priority> = c.threads.iter().map(|t| t.priority).collect();
        assert_eq!(got, [Priority::Nice(5), Priority::Nice(-5), Priority::Nice(-5)]);
        assert!(
            c.scenario_mapping.iter().any(|l| l.contains("nice → that nice level")),
            "{:?}",
            c.scenario_mapping
        );
    }

    #[test]
    fn class_fifo_and_rr_run_at_the_tasks_priority_and_fair_tasks_beside_them_by_their_nice() {
        let s = stack(
            "[[task]]\nname = \"f\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\nclass = \"fifo\"\npriority = 50\n\
             [[task]]\nname = \"r\"\nmodel = \"interactive\"\nthink = \"5ms\"\nburst = \"1ms\"\nclass = \"rr\"\npriority = 98\n\
             [[task]]\nname = \"o\"\nmodel = \"cpu\"\nnice = 10\n\
             [[task]]\nname = \"p\"\nmodel = \"cpu\"\nclass = \"fair\"\n",
        );
        let c = load_str(&s, "s.toml", RunConfig::new(0), false).unwrap();
        let got: Vec<Priority> = c.threads.iter().map(|t| t.priority).collect();
        // The fair tasks are not SCHED_IDLE for being below the real-time tasks' priorities: the rule
        // weighs only the fair class's tasks.
        assert_eq!(got, [Priority::Fifo(50), Priority::Rr(98), Priority::Nice(10), Priority::Nice(0)]);
        assert!(c.threads.iter().all(|t| t.reservation.is_none()));
    }

    #[test]
    fn a_policys_own_kinds_of_task_pass_the_class_check_and_run_at_their_priority() {
        // linux-2.4 serves fifo, rr and other (its classes): checked as smartsim checks them, then mapped.
        let s = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"linux-2.4\"\n\
                 [[task]]\nname = \"f\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\nclass = \"fifo\"\npriority = 50\n\
                 [[task]]\nname = \"r\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\nclass = \"rr\"\npriority = 7\n\
                 [[task]]\nname = \"o\"\nmodel = \"cpu\"\nclass = \"other\"\n";
        let c = load_str(s, "l.toml", RunConfig::new(0), false).unwrap();
        let got: Vec<Priority> = c.threads.iter().map(|t| t.priority).collect();
        assert_eq!(got, [Priority::Fifo(50), Priority::Rr(7), Priority::Nice(0)]);
    }

    #[test]
    fn under_linuxs_rt_class_every_task_runs_at_its_priority_as_it_is() {
        // rt's tasks without a class are SCHED_FIFO at the same levels as those with class "fifo", not
        // priority + 1 (that is for the simulator's fixed priorities, whose lowest is 0).
        let s = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"rt\"\n\
                 [[task]]\nname = \"a\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\npriority = 5\n\
                 [[task]]\nname = \"b\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\nclass = \"fifo\"\npriority = 5\n\
                 [[task]]\nname = \"c\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\nclass = \"rr\"\npriority = 9\n";
        let c = load_str(s, "r.toml", RunConfig::new(0), false).unwrap();
        let got: Vec<Priority> = c.threads.iter().map(|t| t.priority).collect();
        assert_eq!(got, [Priority::Fifo(5), Priority::Fifo(5), Priority::Rr(9)]);
        // Priority 0 (the scenario's default) is no Linux real-time priority: refused at its key.
        let e = load_str(
            &s.replace("priority = 5\n[[task]]\nname = \"b\"", "priority = 0\n[[task]]\nname = \"b\""),
            "r.toml",
            RunConfig::new(0),
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("r.toml:5:1: task[0].priority (task \"a\"): class \"fifo\" runs at"), "{e}");
        // A fixed-priority policy of the simulator keeps priority + 1.
        let f = load_str(
            &s.replace("\"rt\"", "\"fifo\"")
                .replace("class = \"fifo\"\n", "")
                .replace("class = \"rr\"\n", ""),
            "f.toml",
            RunConfig::new(0),
            false,
        )
        .unwrap();
        let got: Vec<Priority> = f.threads.iter().map(|t| t.priority).collect();
        assert_eq!(got, [Priority::Fifo(6), Priority::Fifo(6), Priority::Fifo(10)]);
    }

    #[test]
    fn a_real_time_priority_outside_1_to_98_is_refused_at_its_key() {
        for (p, why) in
            [(0, "0 is outside it"), (99, "99 is hourglass's watchdog"), (100, "100 is outside it")]
        {
            let s = stack(&format!(
                "[[task]]\nname = \"x\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\nclass = \"fifo\"\npriority = {p}\n"
            ));
            let e = load_str(&s, "p.toml", RunConfig::new(0), false).unwrap_err();
            assert_eq!(e.diagnostics.len(), 1, "{e}");
            let e = e.to_string();
            assert!(
                e.starts_with(&format!(
                    "p.toml:{}:1: task[0].priority (task \"x\"): class \"fifo\"",
                    STACK_LINE
                )),
                "{e}"
            );
            assert!(e.contains("1..=98") && e.contains(why), "{e}");
        }
    }

    #[test]
    fn a_reservation_is_sched_deadline_exactly_as_given() {
        // Not the periodic estimate (2ms + 5 % + 100us = 2.2ms): exactly runtime/dl_deadline/dl_period.
        let s = stack(
            "[[task]]\nname = \"d\"\nmodel = \"periodic\"\nexec = \"2ms\"\nperiod = \"10ms\"\nclass = \"deadline\"\n\
             runtime = \"2ms\"\ndl_deadline = \"5ms\"\ndl_period = \"10ms\"\n\
             [[task]]\nname = \"h\"\nmodel = \"cpu\"\n",
        );
        let c = load_str(&s, "d.toml", RunConfig::new(0), false).unwrap();
        assert_eq!(
            c.threads[0].reservation,
            Some(Reservation { amount: 2_000_000, deadline: 5_000_000, period: 10_000_000, soft: false })
        );
        assert_eq!((c.threads[1].reservation, c.threads[1].priority), (None, Priority::Nice(0)));
        assert!(
            c.scenario_mapping.iter().any(|l| l.starts_with(
                "task \"d\": periodic → PERIODIC 2.0ms 10.0ms, SCHED_DEADLINE 2ms/10ms, deadline 5ms"
            )),
            "{:?}",
            c.scenario_mapping
        );
        // A runtime below the exec draws: run, and said.
        let short = s.replace("runtime = \"2ms\"", "runtime = \"1ms\"");
        let c = load_str(&short, "d.toml", RunConfig::new(0), false).unwrap();
        assert!(c.scenario_mapping.iter().any(|l| l.contains("its runtime does not cover every exec draw")));
        // A runtime the kernel refuses: at its key.
        // (The scenario reader takes 1us and more; the kernel 1024ns and more.)
        let tiny = s.replace("runtime = \"2ms\"", "runtime = \"1000ns\"");
        let e = load_str(&tiny, "d.toml", RunConfig::new(0), false).unwrap_err().to_string();
        assert!(e.contains("task[0].runtime (task \"d\"): under its reservation (SCHED_DEADLINE), the runtime 1us is below"), "{e}");
        // class "deadline" without a reservation: refused, whatever the model.
        let est = stack("[[task]]\nname = \"d\"\nmodel = \"periodic\"\nexec = \"2ms\"\nperiod = \"10ms\"\nclass = \"deadline\"\n");
        let e = load_str(&est, "d.toml", RunConfig::new(0), false).unwrap_err().to_string();
        assert!(e.contains("task[0].class (task \"d\"): class \"deadline\" without a reservation"), "{e}");
        let cpu = stack("[[task]]\nname = \"d\"\nmodel = \"cpu\"\nclass = \"deadline\"\n");
        let e = load_str(&cpu, "d.toml", RunConfig::new(0), false).unwrap_err().to_string();
        assert!(e.contains("task[0].class (task \"d\"): class \"deadline\" without a reservation"), "{e}");
    }

    #[test]
    fn under_cbs_only_the_tasks_own_reservations_are_sched_deadline() {
        // cbs is Linux's deadline class: a task without a reservation is in its background queue, the
        // fair class on Linux; no periodic estimate (that is for edf and the like).
        let s = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"cbs\"\n\
                 [[task]]\nname = \"r\"\nmodel = \"periodic\"\nexec = \"2ms\"\nperiod = \"10ms\"\nruntime = \"3ms\"\ndl_period = \"10ms\"\n\
                 [[task]]\nname = \"p\"\nmodel = \"periodic\"\nexec = \"2ms\"\nperiod = \"10ms\"\nclass = \"deadline\"\nruntime = \"2ms\"\ndl_deadline = \"4ms\"\ndl_period = \"10ms\"\n\
                 [[task]]\nname = \"b\"\nmodel = \"periodic\"\nexec = \"2ms\"\nperiod = \"10ms\"\n";
        let c = load_str(s, "c.toml", RunConfig::new(0), false).unwrap();
        let r = |a, d, p| Some(Reservation { amount: a, deadline: d, period: p, soft: false });
        assert_eq!(c.threads[0].reservation, r(3_000_000, 10_000_000, 10_000_000));
        assert_eq!(c.threads[1].reservation, r(2_000_000, 4_000_000, 10_000_000));
        assert_eq!((c.threads[2].reservation, c.threads[2].priority), (None, Priority::Normal));
        assert!(
            c.scenario_mapping[0].contains("SCHED_DEADLINE for the tasks with a reservation"),
            "{:?}",
            c.scenario_mapping
        );
        // edf keeps the periodic estimate.
        let c = load_str(
            &s.replace("\"cbs\"", "\"edf\"").replace("class = \"deadline\"\n", ""),
            "c.toml",
            RunConfig::new(0),
            false,
        )
        .unwrap();
        assert_eq!(c.threads[2].reservation, r(2_200_000, 10_000_000, 10_000_000));
    }

    #[test]
    fn another_policys_class_runs_in_the_linux_class_of_that_policy() {
        // The SVR4 stack: svr4-ts serves class "ts" and runs in the fair class; sys, a real-time
        // class of its own, is refused.
        let s = stack(
            "[[task]]\nname = \"t\"\nmodel = \"cpu\"\nclass = \"ts\"\n\
             [[task]]\nname = \"s\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\nclass = \"sys\"\n",
        )
        .replace("classes = \"linux\"", "classes = \"svr4\"");
        let e = load_str(&s, "o.toml", RunConfig::new(0), false).unwrap_err();
        assert_eq!(e.diagnostics.len(), 1, "{e}");
        assert!(
            e.to_string().starts_with(&format!(
                "o.toml:{}:1: task[1].class (task \"s\"): class \"sys\":",
                STACK_LINE + 4
            )),
            "{e}"
        );
        let c = load_str(&s.replace("class = \"sys\"\n", ""), "o.toml", RunConfig::new(0), false).unwrap();
        assert_eq!(c.threads[0].priority, Priority::Nice(0));
    }

    #[test]
    fn a_real_time_task_that_never_blocks_is_refused_without_force() {
        let s = stack(
            "[[task]]\nname = \"hog\"\nmodel = \"cpu\"\nclass = \"fifo\"\npriority = 50\n\
             [[task]]\nname = \"fair\"\nmodel = \"cpu\"\n",
        );
        let e = load_str(&s, "g.toml", RunConfig::new(0), false).unwrap_err();
        assert_eq!(e.diagnostics.len(), 1, "{e}");
        let e = e.to_string();
        assert!(
            e.starts_with(&format!(
                "g.toml:{}:1: task[0].class (task \"hog\"): a real-time task that never blocks",
                STACK_LINE
            )),
            "{e}"
        );
        assert!(e.contains("scenarios/kernel/guest/") && e.contains("--force"), "{e}");
        let mut forced = RunConfig::new(0);
        forced.force = true;
        let c = load_str(&s, "g.toml", forced, false).unwrap();
        assert_eq!(c.threads[0].priority, Priority::Fifo(50));
        // Under a fixed-priority policy, at the task's model.
        let f = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"fifo\"\n[[task]]\nname = \"h\"\nmodel = \"cpu\"\n";
        let e = load_str(f, "f.toml", RunConfig::new(0), false).unwrap_err().to_string();
        assert!(
            e.starts_with("f.toml:5:1: task[0].model (task \"h\"): a real-time task that never blocks"),
            "{e}"
        );
    }
}
