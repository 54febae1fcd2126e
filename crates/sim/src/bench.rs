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
