//! # smartsim: a deterministic discrete-event simulator for the `sched` policies
//!
//! One CPU, a machine model (clock ticks, tick or exact billing, timer resolution, overheads), a
//! scenario's tasks ([`workload`]) and a policy ([`sched::Policy`]). The engine ([`engine::Sim`]) owns time
//! and every piece of bookkeeping; the policy only answers "what next, for how long". The same seed and
//! scenario give byte-identical results: there is no other source of randomness, and nothing depends on
//! hash order or the wall clock.
//!
//! Modules: [`engine`] (the simulator), [`result`] (metrics and the JSON output contract), [`ideal`]
//! (the fluid "ideal" of the papers' figures), [`papers`] (the dissertation's experiments), [`bench`]
//! (synthetic task sets for benchmarks).
//!
//! Where it is weak: one CPU only; the timeline is sampled (default 1000 samples a run), so a figure
//! shows no detail finer than a sample.

#![deny(missing_docs)]

pub mod bench;
pub mod engine;
pub mod ideal;
pub mod papers;
pub mod result;

pub use engine::Sim;
pub use result::SimResult;

use sched::Options;
use workload::Scenario;

/// Run a scenario with its own policy, or with `policy` instead.
pub fn run_scenario(scn: &Scenario, policy: Option<&str>) -> anyhow::Result<SimResult> {
    Ok(Sim::new(scn, make_policy(scn, policy)?).run())
}

/// Build the scenario's policy (or `policy` instead), with errors that point into the scenario.
pub fn make_policy(scn: &Scenario, policy: Option<&str>) -> anyhow::Result<Box<dyn sched::Policy>> {
    let name = policy.unwrap_or(&scn.scheduler.policy);
    // Options written for the scenario's own policy do not apply to another one.
    let opts = if name == scn.scheduler.policy { scn.scheduler.policy_options() } else { Options::new() };
    let p = sched::by_name(name, &opts).map_err(|e| {
        // Point at the line of the scenario that caused it, when it came from the scenario.
        let (line, field) = match &e {
            sched::PolicyError::BadOption { key, .. } => {
                (scn.scheduler.key_lines.get(key).copied(), format!("scheduler.{key}"))
            }
            sched::PolicyError::Unknown(_) => (
                scn.scheduler.key_lines.get("policy").copied().filter(|_| policy.is_none()),
                "scheduler.policy".to_string(),
            ),
        };
        match line {
            Some(l) => anyhow::anyhow!("{}", scn.error(l, &field, e.to_string())),
            None => anyhow::anyhow!("{e}"),
        }
    })?;
    Ok(p)
}
