//! What a run measures as it goes: per task (CPU time, billing, requests met and missed, latency and
//! response samples), per CPU and for the whole system, and the timeline sampled at regular times;
//! turned into the output contract's [`SimResult`] when the run ends.

use sched::Nanos;
use trace::summary::Requests;
use workload::{Model, Scenario, TaskSpec};

use crate::engine::{Dropped, Job, Outcome};
use crate::result::{
    Billing, CpuStats, Deadlines, Percentiles, SimResult, SystemStats, TaskResult, Timeline,
};

/// What the engine measured of one task.
#[derive(Clone, Debug, Default)]
pub struct TaskMetrics {
    /// CPU time it ran (wall time on a CPU, overheads included).
    pub cpu: Nanos,
    /// CPU time the policy billed it.
    pub charged: Nanos,
    /// Times it was dispatched.
    pub quanta: u64,
    /// Dispatches billed nothing.
    pub unbilled: u64,
    /// Dispatches on another CPU than the one it last ran on.
    pub migrations: u64,
    /// Requests by outcome (met, late, discarded, aborted, unfinished), counted as every output
    /// counts them (`trace::summary::Requests`).
    pub requests: Requests,
    /// Notifications received.
    pub notifications: u64,
    /// When it finished.
    pub finish: Option<Nanos>,
    /// Wake-up latencies (`wake→dispatch`: from becoming runnable, or a periodic request's nominal
    /// release, to the dispatch) and response times (release to finish) of requests, ns: kept as
    /// values (8 bytes a sample, nothing for a task with none), summarised when the run ends; a
    /// histogram per task cost 30-80 KB before any sample.
    pub latency: Vec<u64>,
    /// Response times of requests: from the nominal release to the finish, met or late.
    pub response: Vec<u64>,
}

impl TaskMetrics {
    /// The output contract's view of task `spec` over a run of `duration`.
    pub fn result(&self, spec: &TaskSpec, duration: Nanos) -> TaskResult {
        let periodic = matches!(spec.model, Model::Periodic(_));
        TaskResult {
            name: spec.name.clone(),
            cpu_ns: self.cpu,
            cpu_share: if duration > 0 { self.cpu as f64 / duration as f64 } else { 0.0 },
            finish_ns: self.finish,
            deadlines: periodic.then_some(Deadlines::of(&self.requests, self.notifications)),
            latency_ns: percentiles(&self.latency),
            response_ns: if periodic { percentiles(&self.response) } else { None },
            billing: Billing {
                charged_ns: self.charged,
                quanta: self.quanta,
                unbilled_quanta: self.unbilled,
                migrations: self.migrations,
            },
        }
    }
}

/// The percentiles of `values`, if there is any.
fn percentiles(values: &[u64]) -> Option<Percentiles> {
    (!values.is_empty()).then(|| Percentiles::of_values(values))
}

/// Cells (samples × tasks) of the timeline a scenario without `sample` gets at most: 64 MB.
pub const DEFAULT_TIMELINE_CELLS: u64 = 4_000_000;

/// The timeline's sampling period when the scenario gives none: 1000 samples over the run, at most
/// one a millisecond, and no more than [`DEFAULT_TIMELINE_CELLS`] cells (100,000 tasks get 40
/// samples).
pub fn default_sample(duration: Nanos, tasks: usize) -> Nanos {
    let by_cells = duration.saturating_mul(tasks as u64) / DEFAULT_TIMELINE_CELLS;
    (duration / 1000).max(1_000_000).max(by_cells)
}

/// Everything a run measures (see the module documentation).
pub(crate) struct Metrics {
    pub(crate) tasks: Vec<TaskMetrics>,
    pub(crate) sys: SystemStats,
    timeline: Timeline,
    sample_every: Nanos,
    next_sample: Nanos,
}

impl Metrics {
    pub(crate) fn new(scn: &Scenario) -> Metrics {
        let m = &scn.machine;
        Metrics {
            tasks: vec![TaskMetrics::default(); scn.tasks.len()],
            sys: SystemStats::default(),
            timeline: Timeline::default(),
            sample_every: m.sample.unwrap_or_else(|| default_sample(m.duration, scn.tasks.len())),
            next_sample: 0,
        }
    }

    /// Whether a sample is due at `t`.
    #[inline]
    pub(crate) fn sample_due(&self, t: Nanos) -> bool {
        self.next_sample <= t
    }

    /// The next sample's time.
    pub(crate) fn next_sample(&self) -> Nanos {
        self.next_sample
    }

    /// Takes every sample due by `t` (the CPUs brought up to date by the caller).
    pub(crate) fn take_samples(&mut self, t: Nanos) {
        while self.next_sample <= t {
            let cpu: Vec<Nanos> = self.tasks.iter().map(|x| x.cpu).collect();
            let met: Vec<u64> = self.tasks.iter().map(|x| x.requests.met).collect();
            self.timeline.push(self.next_sample, cpu, met);
            self.next_sample += self.sample_every;
        }
    }

    /// Request `job` of task `i` ended at `now`, done or `dropped`: its outcome, counted.
    pub(crate) fn job_ended(&mut self, i: usize, job: &Job, dropped: Dropped, now: Nanos) -> Outcome {
        let t = &mut self.tasks[i];
        let outcome = match dropped {
            Dropped::Discarded => Outcome::Discarded,
            Dropped::Aborted => Outcome::Aborted,
            Dropped::No if now <= job.planned.deadline => Outcome::Met,
            Dropped::No => Outcome::Late,
        };
        t.requests.add(outcome);
        if dropped == Dropped::No {
            t.response.push(now - job.planned.nominal);
        }
        outcome
    }

    /// The result of the run (the output contract).
    pub(crate) fn result(
        self,
        scn: &Scenario,
        policy: &str,
        counters: Vec<(&'static str, u64)>,
        cpus: Vec<CpuStats>,
    ) -> SimResult {
        let duration = scn.machine.duration;
        let tasks = scn.tasks.iter().zip(&self.tasks).map(|(spec, m)| m.result(spec, duration)).collect();
        let mut system = self.sys;
        system.cpus = cpus;
        SimResult {
            scenario: scn.name.clone(),
            policy: policy.to_string(),
            duration_ns: duration,
            seed: scn.machine.seed,
            cpus: scn.machine.cpus,
            tasks,
            system,
            counters: counters.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            timeline: self.timeline,
        }
    }
}
