//! What a run measures as it goes: per task (CPU time, billing, requests met and missed, latency and
//! response samples), per CPU and for the whole system, and the timeline sampled at regular times;
//! turned into the output contract's [`SimResult`] when the run ends.

use sched::Nanos;
use trace::summary::Requests;
use workload::{Model, Scenario, TaskSpec};

use crate::engine::{Dropped, Job, Outcome};
use crate::result::{
    Bands, Billing, CpuStats, Deadlines, Frames, Iterations, MeanSd, Partial, Percentiles, SimResult,
    SystemStats, TaskResult, Timeline,
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
    /// A player's frames.
    pub frames: FrameAcc,
    /// Requests released and not done when the run ended.
    pub open_at_end: u64,
    /// A player's window (its frames are wanted this long before their deadlines).
    pub frame_window: Option<Nanos>,
}

/// A running mean and variance (Welford).
#[derive(Clone, Copy, Debug, Default)]
pub struct Welford {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Welford {
    /// The mean and standard deviation (population) of `xs`; both 0 without any.
    pub fn of(xs: impl IntoIterator<Item = f64>) -> MeanSd {
        let mut w = Welford::default();
        xs.into_iter().for_each(|x| w.add(x));
        w.get()
    }
    /// Adds a sample.
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }
    /// The mean and the standard deviation (population).
    pub fn get(&self) -> MeanSd {
        if self.n == 0 {
            return MeanSd::default();
        }
        MeanSd { mean: self.mean, sd: (self.m2 / self.n as f64).max(0.0).sqrt() }
    }
}

/// What a player's frames came to, as they are shown or dropped.
#[derive(Clone, Debug, Default)]
pub struct FrameAcc {
    on_time: u64,
    early: u64,
    late: u64,
    dropped: u64,
    error: Welford,
    delay: Welford,
    inter: Welford,
    last: Option<Nanos>,
    errors: Vec<i64>,
    wanted: Vec<Nanos>,
    delays: Vec<Nanos>,
    dropped_wanted: Vec<Nanos>,
}

impl TaskMetrics {
    /// The output contract's view of task `spec` over a run of `duration`.
    pub fn result(&self, spec: &TaskSpec, duration: Nanos) -> TaskResult {
        let periodic = matches!(spec.model, Model::Periodic(_));
        let forkwait = matches!(spec.model, Model::ForkWait { .. });
        let player = matches!(spec.model, Model::Player(_));
        let f = &self.frames;
        let frames = player.then(|| Frames {
            frames: f.on_time + f.early + f.late + f.dropped,
            on_time: f.on_time,
            early: f.early,
            late: f.late,
            dropped: f.dropped,
            window_ns: self.frame_window.unwrap_or(0),
            error_ns: f.error.get(),
            delay_ns: f.delay.get(),
            interdisplay_ns: f.inter.get(),
            errors: f.errors.clone(),
            wanted_ns: f.wanted.clone(),
            delays_ns: f.delays.clone(),
            dropped_wanted_ns: f.dropped_wanted.clone(),
        });
        // The response times' mean and sd: a task's latency bands, a fork-and-wait job's iterations.
        let response = || Welford::of(self.response.iter().map(|&r| r as f64));
        let bands = (!spec.bands.is_empty()).then(|| {
            let mut counts = vec![0u64; spec.bands.len() + 1];
            for &r in &self.response {
                counts[spec.bands.partition_point(|&b| b <= r)] += 1;
            }
            Bands {
                bounds_ns: spec.bands.clone(),
                counts,
                not_done: self.open_at_end,
                latency_ns: response(),
                latencies: self.response.clone(),
            }
        });
        TaskResult {
            name: spec.name.clone(),
            cpu_ns: self.cpu,
            cpu_share: if duration > 0 { self.cpu as f64 / duration as f64 } else { 0.0 },
            finish_ns: self.finish,
            deadlines: (periodic || player).then_some(Deadlines::of(&self.requests, self.notifications)),
            latency_ns: percentiles(&self.latency),
            response_ns: if periodic || forkwait || !spec.bands.is_empty() {
                percentiles(&self.response)
            } else {
                None
            },
            billing: Billing {
                charged_ns: self.charged,
                quanta: self.quanta,
                unbilled_quanta: self.unbilled,
                migrations: self.migrations,
            },
            app: spec.app.clone(),
            frames,
            bands,
            iterations: forkwait.then(|| Iterations {
                count: self.response.len() as u64,
                time_ns: response(),
                times: self.response.clone(),
            }),
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
            tasks: scn
                .tasks
                .iter()
                .map(|t| TaskMetrics {
                    frame_window: match &t.model {
                        Model::Player(p) => Some(p.window),
                        _ => None,
                    },
                    ..Default::default()
                })
                .collect(),
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
        } else {
            t.frames.dropped += 1;
            if let Some(w) = t.frame_window {
                t.frames.dropped_wanted.push(job.planned.deadline - w);
            }
        }
        outcome
    }

    /// Frame `job` of player `i` (its window `window`) is shown at `now`.
    pub(crate) fn frame_shown(&mut self, i: usize, job: &Job, window: Nanos, now: Nanos) {
        let f = &mut self.tasks[i].frames;
        let wanted = job.planned.deadline - window;
        let error = now as i64 - wanted as i64;
        if error < -(window as i64) {
            f.early += 1;
        } else if error > window as i64 {
            f.late += 1;
        } else {
            f.on_time += 1;
        }
        f.error.add(error as f64);
        f.delay.add((now - job.planned.nominal) as f64);
        if let Some(l) = f.last {
            f.inter.add((now - l) as f64);
        }
        f.last = Some(now);
        f.errors.push(error);
        f.wanted.push(wanted);
        f.delays.push(now - job.planned.nominal);
    }

    /// The result of the run (the output contract).
    pub(crate) fn result(
        self,
        scn: &Scenario,
        policy: &str,
        counters: Vec<(&'static str, u64)>,
        cpus: Vec<CpuStats>,
        partial: Option<Partial>,
    ) -> SimResult {
        // A run stopped early is measured over the time it simulated.
        let duration = partial.as_ref().map_or(scn.machine.duration, |p| p.simulated_ns);
        let tasks = scn.tasks.iter().zip(&self.tasks).map(|(spec, m)| m.result(spec, duration)).collect();
        let mut system = self.sys;
        system.cpus = cpus;
        SimResult {
            scenario: scn.name.clone(),
            policy: policy.to_string(),
            duration_ns: duration,
            partial,
            seed: scn.machine.seed,
            cpus: scn.machine.cpus,
            tasks,
            system,
            counters: counters.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            timeline: self.timeline,
        }
    }
}
