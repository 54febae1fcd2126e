//! What a run will cost, estimated from its scenario before it starts, so that a run that would
//! exhaust memory or disk, or take hours, is refused up front with the figure and the key to change
//! (`smartsim run --force` goes past). The estimate is an upper bound of the engine's own counts:
//!
//! - **events**: clock ticks (`hz` × duration × CPUs, when the run simulates ticks), three per
//!   request of a periodic or interactive task (release, dispatch, completion), one slice end per
//!   shortest slice per CPU, and one decision per CPU each time the policy's own timer fires: the
//!   policy tells its shortest slice and its timer from the scenario's options through the registry
//!   ([`sched::pace`]: eevdf's `base_slice` or `tick`, ts's table, the others' `quantum` or `slice`);
//! - **tasks walked**: events × tasks for a policy whose every decision walks the runnable tasks
//!   (smart's working schedule: [`sched::Pace::walks`]), as if every task were runnable at once
//!   (tasks released together are), and × tasks again for SMART when its periodic tasks ask for
//!   more than the CPUs (each decision then inserts its candidates one by one). This
//!   worst case is far above what most runs walk (SMART's fast decision seldom walks), so it refuses
//!   up front only a run whose worst case is days ([`MAX_WALKED_AT_WORST`]); the others start, and
//!   the run stops itself, marked partial, once the policy has walked [`MAX_WALKED`]
//!   ([`crate::Sim::limit_walked`]: a few minutes);
//! - **CPUs looked at**: events × CPUs on several CPUs (a woken task is offered the idle CPUs, and
//!   the running ones may be asked about), held to a bound of its own ([`MAX_CPU_VISITS`]);
//! - **memory**: 2 KB per task, 16 bytes per request (its latency and response samples), 128 more
//!   per request handed to a server (all may wait in its queue at once), the
//!   timeline (samples × tasks × 16 bytes), and every trace record when Perfetto is written (it is
//!   written at the end, from memory);
//! - **output**: the trace file (27 bytes a stretch, 17 a tick, 70 a request), Perfetto (about 150
//!   bytes a record) and the per-job table (about 100 bytes a row).

use sched::Nanos;
use workload::{Model, Scenario};

/// Memory a run may take without `--force`, bytes.
pub const MAX_MEMORY: u64 = 2 << 30;
/// Output a run may write without `--force`, bytes.
pub const MAX_OUTPUT: u64 = 10_000_000_000;
/// Events a run may simulate without `--force` (the engine does some millions a second).
pub const MAX_EVENTS: u64 = 2_000_000_000;
/// Tasks a run's policy may walk without `--force` ([`sched::Policy::walked`], counted as it goes:
/// the run stops, marked partial, past it): SMART walks about 2.5·10⁸ a second on this project's
/// 2-core machine (80,000 tasks released together: 1.9·10¹⁰ in 75 s), so this is the few minutes
/// [`MAX_EVENTS`] allows a policy that decides in constant or logarithmic time.
pub const MAX_WALKED: u64 = 50_000_000_000;
/// The largest walk limit a caller may give (`--walk-limit`, Python's `walk_limit`): beyond any
/// run's reach, and exact in a double.
pub const MAX_WALK_LIMIT: u64 = 1_000_000_000_000_000_000;

/// A walk limit given by a person (`--walk-limit`): a whole number of tasks from 1 to
/// [`MAX_WALK_LIMIT`], in digits (`2000000`) or as digits, `e` and an exponent (`2e6`); no sign,
/// fraction or separator. The error says what to give.
pub fn parse_walk_limit(s: &str) -> Result<u64, String> {
    let bad = || {
        "give a whole number of tasks from 1 to 1e18, in digits or as digits e exponent: 2000000, 2e6"
            .to_string()
    };
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
    let t = s.trim();
    let n = match t.split_once(['e', 'E']) {
        None if digits(t) => t.parse::<u64>().ok(),
        Some((m, e)) if digits(m) && digits(e) => m
            .parse::<u64>()
            .ok()
            .zip(e.parse::<u32>().ok())
            .and_then(|(m, e)| 10u64.checked_pow(e).and_then(|p| m.checked_mul(p))),
        _ => None,
    };
    check_walk_limit(n.ok_or_else(bad)?).map_err(|_| bad())
}

/// `n` if it is a walk limit a caller may give (1 to [`MAX_WALK_LIMIT`]).
pub fn check_walk_limit(n: u64) -> Result<u64, String> {
    if (1..=MAX_WALK_LIMIT).contains(&n) {
        Ok(n)
    } else {
        Err(format!("walk limit {n}: give a whole number of tasks from 1 to 1e18"))
    }
}

/// Tasks walked at worst ([`Estimate::walked`]) over which a run is refused before it starts, without
/// `--force`: a thousand times [`MAX_WALKED`], days of walking, which no run of it would be stopped
/// short of by much.
pub const MAX_WALKED_AT_WORST: u64 = 1000 * MAX_WALKED;
/// CPUs looked at (events × CPUs on several CPUs) without `--force`: wfq on 256 CPUs looks at about
/// 3·10⁷ a second on this project's 2-core machine (3.2·10⁸ in 11 s; 6·10⁷ a second on 64 CPUs), so
/// this too is a few minutes.
pub const MAX_CPU_VISITS: u64 = 5_000_000_000;

/// Memory of a request waiting at a server (its record and its place in the queue), bytes.
pub const HANDED_BYTES: u64 = 128;

/// Which outputs a run writes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Outputs {
    /// `--trace`.
    pub trace: bool,
    /// `--perfetto` (held in memory until the end).
    pub perfetto: bool,
    /// `--jobs`.
    pub jobs: bool,
    /// `--svg` (holds every request's draw for the ideal curves).
    pub figure: bool,
}

/// The estimate of one run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Clock ticks simulated.
    pub ticks: u64,
    /// Requests of periodic and interactive tasks.
    pub requests: u64,
    /// Slice ends (quanta expiring on busy CPUs) and decisions on the policy's own timer.
    pub slices: u64,
    /// The policy's shortest slice, and the `[scheduler]` key that set it (`None`: its default).
    pub slice: (Nanos, Option<&'static str>),
    /// Timeline samples.
    pub samples: u64,
    /// Events in all.
    pub events: u64,
    /// Tasks walked by the policy's decisions at worst: events × tasks when each decision walks every
    /// runnable task (every task may be runnable at once), × tasks again when it inserts them one by
    /// one in overload ([`sched::Walks`]), else 0.
    pub walked: u64,
    /// Tasks of the scenario.
    pub tasks: u64,
    /// Each decision inserts its candidates one by one ([`sched::Walks::TasksSquaredInOverload`]
    /// with the periodic tasks asking for more than the CPUs): `walked` counts tasks twice.
    pub walks_pairs: bool,
    /// CPUs looked at: events × CPUs on several CPUs (the core offers a woken task the idle CPUs
    /// and may ask about every running one), else 0; held to [`MAX_CPU_VISITS`].
    pub cpu_visits: u64,
    /// Bytes held.
    pub memory: u64,
    /// Bytes written.
    pub output: u64,
}

/// The estimate for `scn` (under `policy` if it replaces the scenario's) writing `out`.
pub fn estimate(scn: &Scenario, policy: Option<&str>, out: Outputs) -> Estimate {
    let m = &scn.machine;
    let d = m.duration;
    let cpus = u64::from(m.cpus);
    let n = scn.tasks.len() as u64;
    let per_s = |count: u64| -> u64 { sched::clamp_nanos((count as u128 * d as u128) / 1_000_000_000) };
    let ticks = if m.hz > 0 { per_s(u64::from(m.hz)).saturating_mul(cpus) } else { 0 };
    let requests_of = |t: &workload::TaskSpec| -> u64 {
        let live = d.saturating_sub(t.start);
        match &t.model {
            Model::Periodic(p) => {
                let k = live / p.period.max(1) + 1;
                p.count.map_or(k, |c| c.min(k))
            }
            Model::Player(p) => {
                let k = live / p.period.max(1) + 1;
                p.count.map_or(k, |c| c.min(k))
            }
            Model::Server => 0,
            Model::Interactive { think, burst, count, .. } => {
                let k = live / think.mean().saturating_add(burst.mean()).max(1) + 1;
                count.map_or(k, |c| c.min(k))
            }
            // Two pieces per child, each a block and a wake.
            Model::ForkWait { fork, child, children, count } => {
                let per = fork.mean().saturating_add(child.mean()).max(1);
                let k = live / per + 1;
                count.map_or(k, |c| c.saturating_mul(*children).min(k)).saturating_mul(2)
            }
            Model::Cpu { .. } => 0,
        }
    };
    // A request handed to a server is served there too: its events count twice.
    let requests: u64 = scn
        .tasks
        .iter()
        .map(|t| requests_of(t).saturating_mul(if t.send.is_some() { 2 } else { 1 }))
        .fold(0u64, u64::saturating_add);
    // And it may wait in the server's queue, all of them at once behind a server that cannot keep up.
    let handed: u64 =
        scn.tasks.iter().filter(|t| t.send.is_some()).map(requests_of).fold(0u64, u64::saturating_add);
    let (slice, timer, walks) = pace(scn, policy);
    let slices = (d / slice.0.max(1)).saturating_add(timer.map_or(0, |t| d / t.max(1))).saturating_mul(cpus);
    let sample = m.sample.unwrap_or_else(|| crate::metrics::default_sample(d, scn.tasks.len()));
    let samples = d / sample.max(1) + 1;
    let events = ticks.saturating_add(requests.saturating_mul(3)).saturating_add(slices);
    let walks_pairs = walks == sched::Walks::TasksSquaredInOverload && overloaded(scn);
    let walked = match walks {
        sched::Walks::Nothing => 0,
        _ if walks_pairs => events.saturating_mul(n).saturating_mul(n),
        _ => events.saturating_mul(n),
    };
    let cpu_visits = if cpus > 1 { events.saturating_mul(cpus) } else { 0 };
    // Records of the trace: a stretch per slice or request end, a tick each, a release and an end
    // per request.
    let records = slices.saturating_add(requests.saturating_mul(3)).saturating_add(ticks);
    let mut memory = n
        .saturating_mul(2048)
        .saturating_add(requests.saturating_mul(16))
        .saturating_add(handed.saturating_mul(HANDED_BYTES))
        .saturating_add(samples.saturating_mul(n).saturating_mul(16));
    let mut output = 0u64;
    if out.trace {
        output = output.saturating_add(
            slices.saturating_mul(27).saturating_add(ticks * 17).saturating_add(requests.saturating_mul(70)),
        );
    }
    if out.perfetto {
        memory = memory.saturating_add(records.saturating_mul(64));
        output = output.saturating_add(records.saturating_mul(150));
    }
    if out.jobs {
        memory = memory.saturating_add(requests.saturating_mul(80));
        output = output.saturating_add(requests.saturating_mul(100));
    }
    if out.figure {
        // A job record each until the run ends; then the draw, the fluid machine's two changes of
        // demand and up to two points of the ideal curve.
        let record = if out.jobs { 0 } else { 80 };
        memory = memory.saturating_add(requests.saturating_mul(record + 24 + 48 + 32));
    }
    Estimate {
        ticks,
        requests,
        slices,
        slice,
        samples,
        events,
        walked,
        tasks: n,
        walks_pairs,
        cpu_visits,
        memory,
        output,
    }
}

/// Whether the periodic tasks of `scn` ask for more than its CPUs (their exec over their period).
fn overloaded(scn: &Scenario) -> bool {
    let u: f64 = scn
        .tasks
        .iter()
        .map(|t| match &t.model {
            Model::Periodic(p) => p.utilization(),
            _ => 0.0,
        })
        .sum();
    u > f64::from(scn.machine.cpus)
}

/// The shortest slice (with the key that set it), the timer period and how its decisions walk
/// the tasks, of the policy that runs `scn`
/// (`policy` if it replaces the scenario's, with its defaults: the scenario's options are its own
/// policy's). A policy or option the registry refuses is refused when the run builds it; until then
/// it counts as slices of [`FALLBACK_SLICE`].
fn pace(
    scn: &Scenario,
    policy: Option<&str>,
) -> ((Nanos, Option<&'static str>), Option<Nanos>, sched::Walks) {
    let opts = match policy {
        Some(p) if p != scn.scheduler.policy => sched::Options::new(),
        _ => scn.scheduler.policy_options(),
    };
    let name = policy.unwrap_or(&scn.scheduler.policy);
    let cpus = scn.machine.cpus as usize;
    match sched::pace(name, &opts, cpus) {
        Ok(p) => (p.slice.map_or((FALLBACK_SLICE, None), |s| (s.nanos, s.key)), p.timer, p.walks),
        Err(_) => ((FALLBACK_SLICE, None), None, sched::Walks::Nothing),
    }
}

/// The slice counted for a policy without one (it runs a task until it blocks; a run that keeps a
/// CPU busy still sees other events) or whose options are refused: 1 ms.
const FALLBACK_SLICE: Nanos = 1_000_000;

/// The drawing of the run's figure (`--svg`), known before the run: per task, its measured curve
/// (a point per timeline sample) and its dashed ideal curve; for `report::export::check_drawing`.
pub fn figure(scn: &Scenario, e: &Estimate) -> report::export::Drawing {
    let n = scn.tasks.len();
    report::Figure::planned(
        std::iter::repeat_n(e.samples, n),
        n as u64,
        format!("{n} tasks, each a curve of {} timeline samples and a dashed ideal curve", e.samples),
    )
}

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

/// The limit that stopped a run (its `--walk-limit`, else the default [`MAX_WALKED`]) and what lifts
/// it, to follow the cause in an error: `default` is what follows the default limit (what a command
/// offers instead); nothing to say of Ctrl-C.
pub fn lift(reason: crate::result::PartialReason, walk_limit: Option<u64>, default: &str) -> String {
    use crate::result::PartialReason;
    match (reason, walk_limit) {
        (PartialReason::Interrupted, _) => String::new(),
        (PartialReason::OverBudget, Some(n)) => format!(", --walk-limit {n}; a larger one runs it further"),
        (PartialReason::OverBudget, None) => format!(", {MAX_WALKED}{default}"),
    }
}

/// Refuses an estimate over a limit, with the figure and what to change.
pub fn check(e: &Estimate, file: &str) -> Result<(), String> {
    let over = over(e);
    if over.is_empty() {
        Ok(())
    } else {
        Err(format!("{file}: this run would take {}; shorten it, or pass --force", over.join("; and ")))
    }
}

/// What of an estimate is over its limit, each with its figure and the keys that make it.
pub fn over(e: &Estimate) -> Vec<String> {
    let mut over = Vec::new();
    if e.events > MAX_EVENTS {
        let mut parts = Vec::new();
        if e.ticks > 0 {
            parts.push(format!("{} clock ticks (machine.hz × machine.duration × machine.cpus)", e.ticks));
        }
        if e.requests > 0 {
            parts.push(format!("{} requests (the tasks' period or count, machine.duration)", e.requests));
        }
        if e.slices > 0 {
            let what = match e.slice.1 {
                Some(key) => format!("scheduler.{key} {}", workload::format_time(e.slice.0)),
                None => format!("the policy's shortest slice {}", workload::format_time(e.slice.0)),
            };
            parts.push(format!("{} slice ends ({what}, machine.duration × machine.cpus)", e.slices));
        }
        over.push(format!("about {} events, over the limit of {MAX_EVENTS}: {}", e.events, parts.join(", ")));
    }
    if e.walked > MAX_WALKED_AT_WORST {
        let n = e.tasks;
        let (n, how) = if e.walks_pairs {
            (
                format!("{n} tasks × {n} tasks"),
                "its periodic tasks ask for more than the CPUs, and each decision of this policy then \
                 inserts every runnable task one by one, checking the schedule at each",
            )
        } else {
            (format!("{n} tasks"), "each decision of this policy may walk every runnable task")
        };
        over.push(format!(
            "up to {} tasks walked, over the limit of {MAX_WALKED_AT_WORST}: {how} (about {} events × {n}; \
             fewer [[task]] tables, a shorter machine.duration, or another scheduler.policy)",
            e.walked, e.events,
        ));
    }
    if e.cpu_visits > MAX_CPU_VISITS {
        over.push(format!(
            "about {} CPUs looked at, over the limit of {MAX_CPU_VISITS}: on several CPUs an event may look at \
             every CPU (about {} events × {} CPUs; fewer machine.cpus, a shorter machine.duration, or a \
             longer slice)",
            e.cpu_visits,
            e.events,
            e.cpu_visits / e.events.max(1)
        ));
    }
    if e.memory > MAX_MEMORY {
        over.push(format!(
            "about {} of memory, over the limit of {} ({} requests, {} timeline samples: machine.duration, \
             machine.sample, the tasks' periods; --perfetto, --jobs and --svg hold their records)",
            gib(e.memory),
            gib(MAX_MEMORY),
            e.requests,
            e.samples
        ));
    }
    if e.output > MAX_OUTPUT {
        over.push(format!(
            "about {:.1} GB of output, over the limit of {:.0} GB (--trace, --perfetto, --jobs)",
            e.output as f64 / 1e9,
            MAX_OUTPUT as f64 / 1e9
        ));
    }
    over
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scn(src: &str) -> Scenario {
        workload::parse_str(src, "t.toml").unwrap()
    }

    #[test]
    fn counts_ticks_requests_and_quanta() {
        let s = scn("[machine]\nduration = \"10s\"\nhz = 1000\ncpus = 2\nbilling = \"tick\"\n[scheduler]\npolicy = \"rr\"\nslice = \"10ms\"\n[[task]]\nname = \"a\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\n[[task]]\nname = \"b\"\nmodel = \"cpu\"\n");
        let e = estimate(&s, None, Outputs::default());
        assert_eq!(e.ticks, 20_000);
        assert_eq!(e.requests, 1001);
        assert_eq!(e.slices, 2000);
        assert_eq!(e.slice, (10_000_000, Some("slice")));
        assert_eq!(e.events, 20_000 + 3 * 1001 + 2000);
        assert!(check(&e, "t.toml").is_ok());
    }

    #[test]
    fn a_year_of_ticks_is_refused_with_the_keys_to_change() {
        let s = scn("[machine]\nduration = \"8760h\"\nhz = 1000\nbilling = \"tick\"\n[scheduler]\npolicy = \"rr\"\n[[task]]\nname = \"a\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"2ms\"\n");
        let e = estimate(&s, None, Outputs { trace: true, ..Outputs::default() });
        let msg = check(&e, "t.toml").unwrap_err();
        assert!(msg.starts_with("t.toml: this run would take about "), "{msg}");
        assert!(msg.contains("machine.hz") && msg.contains("--force"), "{msg}");
        assert!(msg.contains("of memory") && msg.contains("GB of output"), "{msg}");
    }

    #[test]
    fn the_figure_is_sized_from_the_tasks_and_the_timeline_samples() {
        let task = "[[task]]\nname = \"tN\"\nmodel = \"periodic\"\nexec = \"1us\"\nperiod = \"50ms\"\n";
        let of = |n: usize| {
            let tasks: String = (0..n).map(|k| task.replace('N', &k.to_string())).collect();
            scn(&format!("[machine]\nduration = \"100ms\"\n[scheduler]\npolicy = \"edf\"\n{tasks}"))
        };
        let png = report::export::ImageFormat::Png;
        let (small, big) = (of(300), of(10_000));
        let d = figure(&small, &estimate(&small, None, Outputs::default()));
        assert!(report::export::check_drawing(&d, png).is_ok(), "{d:?}");
        let e = estimate(&big, None, Outputs::default());
        let d = figure(&big, &e);
        assert!(d.points >= 10_000 * e.samples.min(report::MAX_PLOT_POINTS as u64), "{d:?}");
        let msg = report::export::check_drawing(&d, png).unwrap_err();
        assert!(msg.contains("10000 tasks") && msg.contains(".svg"), "{msg}");
    }

    const EEVDF_1US: &str = "[machine]\nduration = \"DUR\"\ncpus = 2\n[scheduler]\npolicy = \"eevdf\"\nbase_slice = \"1us\"\nhrtick = true\n[[task]]\nname = \"a\"\nmodel = \"cpu\"\n";

    #[test]
    fn a_policy_that_walks_every_task_is_refused_up_front_only_when_its_worst_case_is_days() {
        let task = "[[task]]\nname = \"tN\"\nmodel = \"periodic\"\nexec = \"EXEC\"\nperiod = \"100ms\"\n";
        let of = |n: usize, exec: &str| {
            let task = task.replace("EXEC", exec);
            let tasks: String = (0..n).map(|k| task.replace('N', &k.to_string())).collect();
            scn(&format!("[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"smart\"\n{tasks}"))
        };
        // 100,000 tasks asking for ten CPUs: SMART inserts them one by one at every decision
        // (about 3.3·10¹⁶ task visits, years); EDF walks none.
        let over = of(100_000, "10us");
        let e = estimate(&over, None, Outputs::default());
        assert_eq!(e.walked, e.events * 100_000 * 100_000);
        let msg = check(&e, "t.toml").unwrap_err();
        assert!(msg.contains("tasks walked") && msg.contains("100000 tasks"), "{msg}");
        assert_eq!(estimate(&over, Some("edf"), Outputs::default()).walked, 0);
        assert!(check(&estimate(&over, Some("edf"), Outputs::default()), "t.toml").is_ok());
        // The same tasks asking for half the CPU: at worst each decision walks them all (6.6·10¹¹,
        // more than MAX_WALKED), but the run starts, held to MAX_WALKED as it goes.
        let under = of(100_000, "500ns");
        let e = estimate(&under, None, Outputs::default());
        assert_eq!(e.walked, e.events * 100_000);
        assert!(e.walked > MAX_WALKED, "{e:?}");
        assert!(check(&e, "t.toml").is_ok());
        // Lottery's draw descends a tree of partial ticket sums, and linux-2.4 keeps its waiting
        // tasks in goodness order: neither walks its tasks.
        for policy in ["lottery", "linux-2.4"] {
            assert_eq!(estimate(&over, Some(policy), Outputs::default()).walked, 0, "{policy}");
        }
    }

    #[test]
    fn on_many_cpus_the_cpus_looked_at_are_held_too() {
        let task = "[[task]]\nname = \"tN\"\nmodel = \"periodic\"\nexec = \"50us\"\nperiod = \"1ms\"\n";
        let of = |cpus: u32| {
            let tasks: String = (0..4 * cpus).map(|k| task.replace('N', &k.to_string())).collect();
            scn(&format!(
                "[machine]\nduration = \"1s\"\ncpus = {cpus}\n[scheduler]\npolicy = \"wfq\"\n{tasks}"
            ))
        };
        // 4 tasks a CPU, a request a millisecond each: on 1,024 CPUs, 1.2·10¹⁰ CPUs looked at
        // (minutes); on 64, 5·10⁷ (a second); on one, none.
        let e = estimate(&of(1024), None, Outputs::default());
        assert_eq!(e.cpu_visits, e.events * 1024);
        let msg = check(&e, "t.toml").unwrap_err();
        assert!(
            msg.contains("CPUs looked at") && msg.contains("1024 CPUs") && msg.contains("machine.cpus"),
            "{msg}"
        );
        assert!(check(&estimate(&of(64), None, Outputs::default()), "t.toml").is_ok());
        assert_eq!(estimate(&of(1), None, Outputs::default()).cpu_visits, 0);
    }

    #[test]
    fn the_policy_tells_its_slice_eevdf_base_slice_as_a_quantum() {
        // A 1 µs base slice makes as many slice ends as a 1 µs quantum: refused over an hour,
        // named by its key; a second is taken.
        let long = scn(&EEVDF_1US.replace("DUR", "1h"));
        let e = estimate(&long, None, Outputs::default());
        assert_eq!(e.slice, (1_000, Some("base_slice")));
        assert_eq!(e.slices, 2 * 3_600_000_000);
        let msg = check(&e, "t.toml").unwrap_err();
        assert!(msg.contains("scheduler.base_slice 1us"), "{msg}");
        let short = scn(&EEVDF_1US.replace("DUR", "1s"));
        assert!(check(&estimate(&short, None, Outputs::default()), "t.toml").is_ok());
        // Run under another policy, the scenario's options are not that policy's: its defaults.
        let e = estimate(&long, Some("wfq"), Outputs::default());
        assert_eq!(e.slice, (10_000_000, None));
        // ts: its table's shortest quantum and a ts_update each second on each CPU.
        let e = estimate(&long, Some("ts"), Outputs::default());
        assert_eq!(e.slices, 2 * (3600 * 50 + 3600));
    }

    #[test]
    fn a_walk_limit_is_a_whole_number_from_1_to_1e18_in_digits_or_e_notation() {
        for (s, n) in [
            ("2000", 2000),
            ("2e3", 2000),
            ("2E3", 2000),
            (" 2000 ", 2000),
            ("01", 1),
            ("1e0", 1),
            ("1", 1),
            ("1e18", MAX_WALK_LIMIT),
            ("1000000000000000000", MAX_WALK_LIMIT),
        ] {
            assert_eq!(parse_walk_limit(s), Ok(n), "{s:?}");
        }
        for s in [
            "0",
            "0e5",
            "+5",
            "1e+3",
            "-1",
            "1e-3",
            "1.5e3",
            "1e",
            "e3",
            "1_000",
            "",
            "x",
            "1e19",
            "2e18",
            "1000000000000000001",
            "18446744073709551616",
            "1e4294967296",
            "5 e3",
        ] {
            let e = parse_walk_limit(s).unwrap_err();
            assert!(e.starts_with("give a whole number of tasks from 1 to 1e18"), "{s:?}: {e}");
        }
        assert!(check_walk_limit(0).is_err() && check_walk_limit(MAX_WALK_LIMIT + 1).is_err());
    }
}
