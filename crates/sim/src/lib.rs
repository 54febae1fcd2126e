//! # smartsim: a deterministic discrete-event simulator for the `sched` policies
//!
//! N CPUs, a machine model (clock ticks, tick or exact billing, timer resolution, overheads), a
//! scenario's tasks ([`workload`]) and a policy ([`sched::Policy`], driven through its [`sched::Core`]). The engine ([`engine::Sim`]) owns time
//! and every piece of bookkeeping; the policy only answers "what next, for how long". The same seed and
//! scenario give byte-identical results: there is no other source of randomness, and nothing depends on
//! hash order or the wall clock.
//!
//! Modules: [`engine`] (the simulator), [`result`] (metrics and the JSON output contract), [`ideal`]
//! (the fluid "ideal" of the papers' figures), [`papers`] (the dissertation's experiments), [`studies`]
//! (its application experiments: several scenarios over seeds, with intervals and verdicts), [`bench`]
//! (synthetic task sets for benchmarks), [`taskset`] (random task sets for schedulability studies) and
//! [`schedulability`] (acceptance ratio against utilisation).
//!
//! **The output contract's words** (issue 33, "One vocabulary"; this supersedes DESIGN.md's
//! `--jobs` outcome list `met | missed | discarded | aborted`): a request ends met, late, discarded,
//! aborted or unfinished, counted once by `trace::summary::Requests`; `missed` is late, discarded
//! and aborted together wherever it is printed (the run JSON's `deadlines.missed` keeps its meaning and gains
//! `requests`, `late` and `unfinished`); `--jobs` writes `late` where it wrote `missed`, and readers
//! take both. The two latencies are named apart: `wake→dispatch` (a run's, from the nominal
//! release) and `wake→run` (a trace's, from its Wake record). docs/glossary.md defines each word.
//!
//! **Runs are bounded** ([`budget`]): before a run, by an estimate of its events, memory, output and
//! (for a policy whose decisions walk its tasks) the tasks walked at worst; while it runs, by the
//! tasks its policy reports walked ([`sched::Policy::walked`], [`Sim::limit_walked`]): past the
//! limit it stops, its results marked partial with the reason `over_budget` in the JSON contract
//! (beside Ctrl-C's `interrupted`). The worst case of a walking policy is far above what it walks
//! (SMART's fast decision seldom walks), so the up-front estimate refuses only what would take
//! days and the run itself holds the rest to minutes; `--force` lifts both.
//!
//! Where it is weak: identical CPUs only (no speeds, caches shared or not, no topology); the timeline
//! is sampled (default 1000 samples a run), so a figure
//! shows no detail finer than a sample.

#![deny(missing_docs)]

pub mod bench;
pub mod budget;
pub mod engine;
pub mod ideal;
pub mod metrics;
pub mod papers;
pub mod result;
pub mod rta;
pub mod rtapp;
pub mod schedulability;
pub mod studies;
pub mod sweep;
pub mod taskset;

pub use engine::Sim;
pub use result::SimResult;

use sched::Options;
use workload::Scenario;

/// Run a scenario with its own policy, or with `policy` instead, to its end: an error if the run
/// stopped partway, its policy past the walk limit ([`Sim::limit_walked`]), as a result of part of
/// the run would pass for the whole. (A caller that wants a partial result, or no limit, builds the
/// [`Sim`] with [`simulator`].)
pub fn run_scenario(scn: &Scenario, policy: Option<&str>) -> anyhow::Result<SimResult> {
    whole(simulator(scn, policy)?.run())
}

/// `r`, or an error naming why it stopped if it is partial.
pub fn whole(r: SimResult) -> anyhow::Result<SimResult> {
    match &r.partial {
        None => Ok(r),
        Some(p) => {
            anyhow::bail!("{} under {} stopped {}: {}", r.scenario, r.policy, p.describe(), p.reason.cause())
        }
    }
}

/// The policy registry as `smartsim policies --format json` prints it (and the Python package's
/// `policies()` returns it): one object per policy with its name, about, options (each with its
/// default and about), the Linux class it maps to, whether it notifies, whether it is
/// work-conserving, and its source file.
pub fn policies_json() -> serde_json::Value {
    sched::REGISTRY
        .iter()
        .map(|e| {
            let options: serde_json::Map<String, serde_json::Value> = e
                .options
                .iter()
                .map(|o| (o.key.to_string(), serde_json::json!({ "default": o.default, "about": o.about })))
                .collect();
            serde_json::json!({
                "name": e.name, "about": e.about, "options": options, "linux": e.linux.name(),
                "notifies": e.notifies, "work_conserving": e.work_conserving,
                "source": format!("crates/sched/src/{}", e.source),
            })
        })
        .collect()
}

/// A simulator for the scenario with its own policy (or `policy` instead), ready to run: the policy
/// built for the machine's CPUs, tasks placed on CPUs first fit by decreasing utilisation if the
/// scenario asks for `partition = "ffd"`, and the scenario checked against what the policy can do.
pub fn simulator<'s>(scn: &'s Scenario, policy: Option<&str>) -> anyhow::Result<Sim<'s>> {
    simulator_with(scn, policy, Others::Nothing)
}

/// As [`simulator`], but a policy other than the scenario's own keeps the scenario's `partition`
/// (`smartsim compare --policies all`): how tasks meet CPUs is the scenario's, whatever the policy.
pub fn simulator_keeping_partition<'s>(scn: &'s Scenario, policy: &str) -> anyhow::Result<Sim<'s>> {
    simulator_with(scn, Some(policy), Others::Partition)
}

/// What a policy other than the scenario's own takes of the scenario's `[scheduler]` options.
#[derive(Copy, Clone)]
enum Others {
    Nothing,
    Partition,
}

fn simulator_with<'s>(scn: &'s Scenario, policy: Option<&str>, others: Others) -> anyhow::Result<Sim<'s>> {
    let (name, opts) = options(scn, policy, others);
    let p = build_policy(scn, policy, &name, &opts)?;
    check_classes(scn, &name, &opts)?;
    let placement = placement(scn, &opts)?;
    check_late_rules(scn, &p)?;
    Ok(Sim::with_placement(scn, p, placement.as_deref()))
}

/// The options that apply to `name`: the scenario's, if it is the scenario's own policy; for
/// another, none, or only `partition` if `others` says so.
fn options(scn: &Scenario, policy: Option<&str>, others: Others) -> (String, Options) {
    let name = policy.unwrap_or(&scn.scheduler.policy).to_string();
    // Options written for the scenario's own policy do not apply to another one.
    let opts = if name == scn.scheduler.policy {
        scn.scheduler.policy_options()
    } else {
        match others {
            Others::Nothing => Options::new(),
            Others::Partition => {
                scn.scheduler.policy_options().into_iter().filter(|(k, _)| k == "partition").collect()
            }
        }
    };
    (name, opts)
}

/// Build the scenario's policy (or `policy` instead) for its CPUs, in its core, with errors that
/// point into the scenario.
pub fn make_policy(scn: &Scenario, policy: Option<&str>) -> anyhow::Result<sched::Core> {
    let (name, opts) = options(scn, policy, Others::Nothing);
    build_policy(scn, policy, &name, &opts)
}

fn build_policy(
    scn: &Scenario,
    policy: Option<&str>,
    name: &str,
    opts: &Options,
) -> anyhow::Result<sched::Core> {
    let p = sched::build(name, opts, scn.machine.cpus as usize).map_err(|e| {
        // Point at the line of the scenario that caused it, when it came from the scenario.
        let (line, field) = match &e {
            sched::PolicyError::BadOption { key, .. } => {
                // A class's option (`eevdf.base_slice`) points at its table's line.
                let lines = &scn.scheduler.key_lines;
                let line = lines.get(key).or_else(|| key.split('.').next().and_then(|k| lines.get(k)));
                (line.copied(), format!("scheduler.{key}"))
            }
            sched::PolicyError::Unknown(_) => (
                scn.scheduler.key_lines.get("policy").copied().filter(|_| policy.is_none()),
                "scheduler.policy".to_string(),
            ),
        };
        match line {
            Some(l) => anyhow::Error::new(scn.error(l, &field, e.to_string())),
            None => anyhow::anyhow!("{e}"),
        }
    })?;
    Ok(p)
}

/// Every task's `class` names a class of the policy (or of its class stack), or the run is refused
/// naming the task.
pub fn check_classes(scn: &Scenario, name: &str, opts: &Options) -> anyhow::Result<()> {
    let known = sched::registry::classes(name, opts).map_err(|e| anyhow::anyhow!("{e}"))?;
    for t in &scn.tasks {
        if let Some(c) = t.class.as_deref().filter(|c| !known.contains(c)) {
            return Err(anyhow::Error::new(scn.error(
                t.line,
                &format!("task \"{}\".class", t.name),
                format!(
                    "`{c}` is not a class of policy `{name}` (its classes: {}); a scenario stacks classes \
                         with [scheduler] classes = \"linux\", \"svr4\", \"solaris\" or a list of policies",
                    known.join(", ")
                ),
            )));
        }
    }
    Ok(())
}

/// With `partition = "ffd"`, each task's CPU: first fit by decreasing utilisation (mean exec over
/// period for a periodic task; a cpu or interactive task counts as a whole CPU... of its own: 1.0).
fn placement(scn: &Scenario, opts: &Options) -> anyhow::Result<Option<Vec<sched::CpuId>>> {
    if sched::Partition::of(opts).ok() != Some(sched::Partition::Ffd) {
        return Ok(None);
    }
    let demand: Vec<(f64, f64)> = scn
        .tasks
        .iter()
        .map(|t| match &t.model {
            workload::Model::Periodic(p) => (p.exec.mean() as f64, p.period as f64),
            _ => (1.0, 1.0),
        })
        .collect();
    sched::partition::first_fit_decreasing(&demand, scn.machine.cpus as usize).map(Some).map_err(|i| {
        let t = &scn.tasks[i];
        anyhow::Error::new(scn.error(
            t.line,
            &format!("task \"{}\"", t.name),
            format!(
                "partition = \"ffd\": the task (utilisation {:.3}) fits on none of the {} CPUs once the \
                     larger ones are placed",
                demand[i].0 / demand[i].1,
                scn.machine.cpus
            ),
        ))
    })
}

/// `on_miss = "discard"`, written out, needs a policy that notifies: under one that never does, the
/// request would silently be finished late.
fn check_late_rules(scn: &Scenario, p: &sched::Core) -> anyhow::Result<()> {
    if p.notifies() {
        return Ok(());
    }
    for t in &scn.tasks {
        if let workload::Model::Periodic(per) = &t.model {
            if let (workload::OnMiss::Discard, Some(line)) = (per.on_miss, per.on_miss_line) {
                return Err(anyhow::Error::new(scn.error(
                    line,
                    &format!("task \"{}\".on_miss", t.name),
                    format!(
                        "\"discard\" drops a request when the policy notifies, and `{}` never notifies: \
                             use \"abort\" (dropped at its deadline) or \"finish\" (completed late)",
                        p.name()
                    ),
                )));
            }
        }
    }
    Ok(())
}
