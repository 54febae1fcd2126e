//! Schedulability studies (`smartsim schedulability`): the share of random task sets each policy
//! schedules with no deadline missed, against the sets' utilisation, beside response-time analysis.
//!
//! For every total utilisation `U` of the sweep, `sets` task sets are drawn ([`crate::taskset`]; set
//! `j` of point `i` from the seed `seed + i·sets + j`, so any one can be drawn again with `smartsim
//! taskset --utilisation U --seed S`), and each is simulated under every policy (a fixed-priority one
//! with rate-monotonic priorities, [`crate::taskset::fixed_priority`]). A set is *accepted* by a
//! policy when none of its requests is late by the end of the horizon (the set's hyperperiod, cut at
//! one second or its longest period: [`crate::taskset::Taskset::default_duration`]; or a fixed one).
//! On one CPU the study also applies response-time analysis for fixed priorities with rate-monotonic
//! priorities ([`crate::rta`]) to each set: the analytical curve, which the simulation of `fifo`
//! meets exactly (see `default_duration` for why the horizon is enough). The sets run in parallel
//! across cores (rayon); the result does not depend on how many.
//!
//! Where it is weak: a simulation accepts what it saw, not what could happen: on several CPUs
//! (global scheduling has no critical instant) or under EDF above one CPU's worth of utilisation with a
//! cut horizon, a set accepted in the horizon may still miss later. Acceptance of SMART is measured
//! with exact estimates and no notifications (`estimate = "exact"`, `notify = "never"`).

use serde::Serialize;
use workload::Nanos;

use crate::taskset::{fixed_priority, TasksetSpec, HORIZON_CAP};

/// The most sets a study draws (points × sets).
pub const MAX_SETS: usize = 100_000;
/// The most utilisation points of a study.
pub const MAX_POINTS: usize = 1_000;

/// What a study sweeps.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StudySpec {
    /// The sets' parameters; `utilisation` is each point's in turn.
    pub set: TasksetSpec,
    /// The total utilisations swept, in order.
    pub utilisations: Vec<f64>,
    /// Sets per point.
    pub sets: usize,
    /// Policies, by registry name.
    pub policies: Vec<String>,
    /// The horizon of every run; `None`: each set's [`crate::taskset::Taskset::default_duration`].
    pub duration: Option<Nanos>,
    /// Seed of the first set.
    pub seed: u64,
    /// The most tasks a run's policy may walk at its decisions (`smartsim run --walk-limit`);
    /// `None`: the default, [`crate::budget::MAX_WALKED`]. A run past it stops the study with an
    /// error naming its set, so a study that ends has the same curves whatever its limit.
    pub walk_limit: Option<u64>,
}

/// One curve of a study: a policy's simulated acceptance, or the analysis's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Curve {
    /// The policy (`edf`, `fifo`, …), or `rta`.
    pub name: String,
    /// `"simulation"` or `"analysis"`.
    pub kind: &'static str,
    /// The priorities its sets carry: `"rate-monotonic"` or `"none"`.
    pub priorities: &'static str,
    /// Sets accepted at each point.
    pub accepted: Vec<usize>,
    /// `accepted / sets` at each point.
    pub ratio: Vec<f64>,
    /// At each point, the seed of the first set it rejected (to draw it again), if any.
    pub first_rejected_seed: Vec<Option<u64>>,
}

/// A study's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Study {
    /// What was swept.
    pub spec: StudySpec,
    /// The curves: one per policy in the order given, then `rta` on one CPU.
    pub curves: Vec<Curve>,
}

impl StudySpec {
    /// The seed of set `j` of point `i`.
    pub fn seed_of(&self, i: usize, j: usize) -> u64 {
        self.seed.wrapping_add((i * self.sets + j) as u64)
    }

    /// Checks the study before anything runs: every point's set spec ([`TasksetSpec::check`]), the
    /// counts (1 to [`MAX_POINTS`] points, sets at least 1, at most [`MAX_SETS`] sets in all), the
    /// policies (known, each once, at least one), the duration (above 0), and that the most demanding
    /// set the study can draw (every task at the least period, the longest horizon) is within the run
    /// budget of `smartsim run` under every policy.
    pub fn check(&self) -> anyhow::Result<()> {
        use anyhow::bail;
        let points = self.utilisations.len();
        if points == 0 || points > MAX_POINTS {
            bail!("{points} utilisation points: a study has 1 to {MAX_POINTS}");
        }
        if self.sets == 0 {
            bail!("--sets 0: draw at least one set per point");
        }
        if self.sets.saturating_mul(points) > MAX_SETS {
            bail!(
                "--sets {} over {points} points is {} sets: at most {MAX_SETS} (give fewer sets or a larger --step)",
                self.sets,
                self.sets.saturating_mul(points)
            );
        }
        for &u in &self.utilisations {
            TasksetSpec { utilisation: u, ..self.set.clone() }.check()?;
        }
        if self.policies.is_empty() {
            bail!("--policies: give at least one policy");
        }
        for (k, p) in self.policies.iter().enumerate() {
            if sched::registry::entry(p).is_none() {
                let known: Vec<&str> = sched::registry::names().collect();
                bail!("--policies: unknown policy `{}` (known: {})", diag::visible(p), known.join(", "));
            }
            if self.policies[..k].contains(p) {
                bail!("--policies: {} given twice", diag::visible(p));
            }
        }
        if self.duration == Some(0) {
            bail!("--duration 0s: give a horizon above 0");
        }
        let worst = self.worst_case();
        for p in &self.policies {
            let scn =
                worst.scenario("<the largest set>", p, Some(self.horizon_bound()), fixed_priority(p))?;
            crate::simulator(&scn, None)?;
            let e = crate::budget::estimate(&scn, None, Default::default());
            crate::budget::check(&e, &format!("a set of {} tasks under {p}", self.set.tasks))
                .map_err(anyhow::Error::msg)?;
        }
        Ok(())
    }

    /// The longest horizon a run of the study can have.
    fn horizon_bound(&self) -> Nanos {
        self.duration.unwrap_or_else(|| HORIZON_CAP.max(self.set.period_max))
    }

    /// The set with the most requests the study can draw: every task at the least period allowed,
    /// at the highest utilisation.
    fn worst_case(&self) -> crate::taskset::Taskset {
        let g = self.set.granularity.max(1);
        let period = self.set.period_min.div_ceil(g).max(1) * g;
        let u = self.utilisations.iter().copied().fold(0.0, f64::max) / self.set.tasks as f64;
        let tasks = (0..self.set.tasks)
            .map(|i| crate::taskset::TaskDraw {
                name: format!("T{}", i + 1),
                utilisation: u,
                period,
                exec: ((u * period as f64) as Nanos).clamp(1, period),
                priority: (self.set.tasks - i) as i32,
            })
            .collect();
        crate::taskset::Taskset { seed: self.seed, cpus: self.set.cpus, tasks }
    }

    /// Runs the study ([`StudySpec::check`] first), calling `tick` after each set.
    pub fn run(&self, tick: &(dyn Fn() + Sync)) -> anyhow::Result<Study> {
        use rayon::prelude::*;
        use std::sync::atomic::{AtomicUsize, Ordering};
        self.check()?;
        let jobs: Vec<(usize, usize)> =
            (0..self.utilisations.len()).flat_map(|i| (0..self.sets).map(move |j| (i, j))).collect();
        let rta = self.set.cpus == 1;
        // Per set: accepted under each policy, then by the analysis. Once a set fails, the sets after
        // it in (point, set) order are skipped and those before it still run, so that the error is
        // always the first set's that fails, whatever the threads' timing.
        let first_failed = AtomicUsize::new(usize::MAX);
        let judged: Vec<Option<anyhow::Result<Vec<bool>>>> = jobs
            .par_iter()
            .enumerate()
            .map(|(k, &(i, j))| {
                if k > first_failed.load(Ordering::Relaxed) {
                    return None;
                }
                let v = self.judge(i, j, rta);
                if v.is_err() {
                    first_failed.fetch_min(k, Ordering::Relaxed);
                }
                tick();
                Some(v)
            })
            .collect();
        let mut verdicts = Vec::with_capacity(judged.len());
        for v in judged {
            // A set is skipped only after one before it failed, which returns first.
            verdicts.push(v.expect("a set skipped with no failure before it")?);
        }
        let mut curves: Vec<Curve> = self
            .policies
            .iter()
            .map(|p| Curve::new(p, "simulation", fixed_priority(p), self.utilisations.len()))
            .collect();
        if rta {
            curves.push(Curve::new("rta", "analysis", true, self.utilisations.len()));
        }
        for (&(i, j), v) in jobs.iter().zip(&verdicts) {
            for (c, &ok) in curves.iter_mut().zip(v) {
                if ok {
                    c.accepted[i] += 1;
                } else if c.first_rejected_seed[i].is_none() {
                    c.first_rejected_seed[i] = Some(self.seed_of(i, j));
                }
            }
        }
        for c in &mut curves {
            c.ratio = c.accepted.iter().map(|&a| a as f64 / self.sets as f64).collect();
        }
        Ok(Study { spec: self.clone(), curves })
    }

    /// Set `j` of point `i`: accepted by each policy's simulation, then (if `rta`) by the analysis.
    fn judge(&self, i: usize, j: usize, rta: bool) -> anyhow::Result<Vec<bool>> {
        let spec = TasksetSpec { utilisation: self.utilisations[i], ..self.set.clone() };
        let seed = self.seed_of(i, j);
        let set = spec.generate(seed).map_err(|e| {
            anyhow::anyhow!("the set of seed {seed} at utilisation {}: {e}", self.utilisations[i])
        })?;
        let mut out = Vec::with_capacity(self.policies.len() + 1);
        for p in &self.policies {
            let scn = set.scenario(&format!("<set {seed}>"), p, self.duration, fixed_priority(p))?;
            let mut sim = crate::simulator(&scn, None)?;
            sim.limit_walked_as_asked(self.walk_limit, false);
            let r = sim.run();
            if let Some(partial) = &r.partial {
                // A run stopped partway has not shown that every deadline is met, nor that one is not.
                anyhow::bail!(
                    "the set of seed {seed} at utilisation {} under {p} stopped {}: {}{}; give fewer --tasks or a \
                     shorter --duration",
                    self.utilisations[i],
                    partial.describe(),
                    partial.reason.cause(),
                    crate::budget::lift(partial.reason, self.walk_limit, "; a larger --walk-limit runs it further")
                );
            }
            out.push(r.tasks.iter().all(|t| t.deadlines.as_ref().is_none_or(|d| d.missed == 0)));
        }
        if rta {
            out.push(rta_accepts(&set));
        }
        Ok(out)
    }
}

/// Whether response-time analysis accepts `set` under rate-monotonic priorities on one CPU: every
/// task's worst-case response time at most its period.
pub fn rta_accepts(set: &crate::taskset::Taskset) -> bool {
    let tasks: Vec<crate::rta::RtaTask> = set
        .tasks
        .iter()
        .map(|t| crate::rta::RtaTask {
            name: t.name.clone(),
            priority: t.priority,
            exec: t.exec,
            period: t.period,
            deadline: t.period,
            jitter: 0,
            blocking: 0,
            spin: 0,
        })
        .collect();
    crate::rta::analyse(&tasks).iter().all(|r| r.schedulable)
}

impl Curve {
    fn new(name: &str, kind: &'static str, rm: bool, points: usize) -> Curve {
        Curve {
            name: name.to_string(),
            kind,
            priorities: if rm { "rate-monotonic" } else { "none" },
            accepted: vec![0; points],
            ratio: Vec::new(),
            first_rejected_seed: vec![None; points],
        }
    }
}
