//! Synthetic task sets for benchmarks: `n` periodic tasks with random periods and utilisation `u`.

use workload::rand::{Rng, SeedableRng};
use workload::rand_pcg::Pcg64;
use workload::{Estimate, Exec, Model, Notify, OnMiss, Periodic, Scenario, TaskSpec};

/// A scenario of `n` periodic tasks (periods 10–100 ms, total utilisation `u`, exact estimates,
/// deadlines = periods) for `duration_ns`, on `policy`.
pub fn periodic_set(n: usize, u: f64, duration_ns: u64, policy: &str, seed: u64) -> Scenario {
    let mut rng = Pcg64::seed_from_u64(seed);
    let tasks = (0..n)
        .map(|i| {
            let period = rng.random_range(10u64..=100) * 1_000_000;
            let exec = ((u / n as f64) * period as f64) as u64;
            let model = Model::Periodic(Periodic {
                on_miss: OnMiss::Finish,
                estimate: Estimate::Exact,
                notify: Notify::Never,
                ..Periodic::new(Exec::Fixed(exec.max(1)), period)
            });
            TaskSpec::new(&format!("T{i}"), model)
        })
        .collect();
    let mut scn = Scenario::new(&format!("bench-{n}"), duration_ns, seed, policy, tasks);
    scn.machine.sample = Some(duration_ns);
    scn
}

/// The media mix of `smartsim bench`'s second part, for `duration_ns` on `policy` at HZ 1000: 10
/// periodic tasks at 6 % of the CPU each (periods 10–100 ms, whole ms, exact estimates), 5
/// interactive tasks (think time exponential with mean 500 ms, bursts of 2 ms) and 5 CPU-bound tasks.
pub fn media_mix(duration_ns: u64, policy: &str, seed: u64) -> Scenario {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut tasks: Vec<TaskSpec> = (0..10)
        .map(|i| {
            let period = rng.random_range(10u64..=100) * 1_000_000;
            let model = Model::Periodic(Periodic {
                on_miss: OnMiss::Finish,
                estimate: Estimate::Exact,
                notify: Notify::Never,
                ..Periodic::new(Exec::Fixed(period * 6 / 100), period)
            });
            TaskSpec::new(&format!("P{i}"), model)
        })
        .collect();
    tasks.extend((0..5).map(|i| {
        let model = Model::Interactive {
            think: Exec::Exponential { mean: 500_000_000 },
            burst: Exec::Fixed(2_000_000),
            count: None,
        };
        TaskSpec::new(&format!("I{i}"), model)
    }));
    tasks.extend((0..5).map(|i| TaskSpec::new(&format!("C{i}"), Model::Cpu { work: None })));
    let mut scn = Scenario::new("bench-mix", duration_ns, seed, policy, tasks);
    scn.machine.hz = 1000;
    scn.machine.sample = Some(duration_ns);
    scn
}
