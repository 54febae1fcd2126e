//! Synthetic task sets for benchmarks: `n` periodic tasks with random periods and utilisation `u`.

use workload::rand::{Rng, SeedableRng};
use workload::rand_pcg::Pcg64;
use workload::{
    Billing, Estimate, Exec, Machine, Model, Notify, OnMiss, Overheads, Periodic, Scenario, SchedulerCfg,
    TaskSpec, TimerKind,
};

/// A scenario of `n` periodic tasks (periods 10–100 ms, total utilisation `u`, exact estimates,
/// deadlines = periods) for `duration_ns`, on `policy`.
pub fn periodic_set(n: usize, u: f64, duration_ns: u64, policy: &str, seed: u64) -> Scenario {
    let mut rng = Pcg64::seed_from_u64(seed);
    let tasks = (0..n)
        .map(|i| {
            let period = rng.random_range(10u64..=100) * 1_000_000;
            let exec = ((u / n as f64) * period as f64) as u64;
            TaskSpec {
                name: format!("T{i}"),
                line: 0,
                model: Model::Periodic(Periodic {
                    exec: Exec::Fixed(exec.max(1)),
                    period,
                    deadline: period,
                    count: None,
                    on_miss: OnMiss::Finish,
                    estimate: Estimate::Exact,
                    notify: Notify::Never,
                }),
                share: 1,
                priority: 0,
                latency_tolerance: None,
                start: 0,
                stop: None,
                jitter: None,
                timer: None,
                working_set: 0,
            }
        })
        .collect();
    Scenario {
        path: format!("<bench {n} tasks>"),
        name: format!("bench-{n}"),
        description: None,
        machine: Machine {
            cpus: 1,
            hz: 1000,
            billing: Billing::Exact,
            timer: TimerKind::Hr,
            duration: duration_ns,
            seed,
            overhead: Overheads::default(),
            sample: Some(duration_ns),
        },
        scheduler: SchedulerCfg {
            policy: policy.to_string(),
            options: Default::default(),
            key_lines: Default::default(),
            line: 1,
        },
        tasks,
    }
}
