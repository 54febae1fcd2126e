//! Properties of the engine and the policies over random scenarios (proptest).

use proptest::prelude::*;
use smartsim::run_scenario;
use workload::{Estimate, Exec, Model, Periodic, Scenario, TaskSpec};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn task(name: String, model: Model, share: u32, priority: i32) -> TaskSpec {
    TaskSpec { share, priority, ..TaskSpec::new(&name, model) }
}

fn scenario(tasks: Vec<TaskSpec>, duration: u64, policy: &str, seed: u64) -> Scenario {
    Scenario::new("proptest", duration, seed, policy, tasks)
}

fn periodic(exec: u64, period: u64) -> Model {
    Model::Periodic(Periodic { estimate: Estimate::Exact, ..Periodic::new(Exec::Fixed(exec), period) })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// CPU-bound tasks with arbitrary shares get the CPU in proportion to their shares, within one
    /// percentage point over a minute, under SMART and under WFQ.
    #[test]
    fn cpu_bound_tasks_share_in_proportion(shares in prop::collection::vec(1u32..10, 2..6)) {
        let total: u32 = shares.iter().sum();
        let tasks: Vec<TaskSpec> = shares.iter().enumerate()
            .map(|(i, s)| task(format!("C{i}"), Model::Cpu { work: None }, *s, 0)).collect();
        for policy in ["smart", "wfq"] {
            let scn = scenario(tasks.clone(), 60 * S, policy, 1);
            let r = run_scenario(&scn, None).unwrap();
            for (i, s) in shares.iter().enumerate() {
                let want = *s as f64 / total as f64;
                let got = r.tasks[i].cpu_share;
                prop_assert!((got - want).abs() < 0.01, "{policy}: task {i} share {s}/{total}: got {got:.4}, want {want:.4}");
            }
        }
    }

    /// In underload (utilisation ≤ 0.95, exact estimates, deadline = period), SMART and EDF miss no
    /// deadline.
    #[test]
    fn underloaded_periodic_sets_miss_nothing(
        periods in prop::collection::vec(5u64..=100, 2..8),
        weights in prop::collection::vec(1u64..=10, 8),
        util in 0.3f64..=0.95,
    ) {
        let n = periods.len();
        let wsum: u64 = weights[..n].iter().sum();
        let tasks: Vec<TaskSpec> = (0..n).map(|i| {
            let period = periods[i] * MS;
            let u_i = util * weights[i] as f64 / wsum as f64;
            let exec = ((u_i * period as f64) as u64).max(1);
            task(format!("T{i}"), periodic(exec, period), 1, 0)
        }).collect();
        for policy in ["smart", "edf"] {
            let scn = scenario(tasks.clone(), 10 * S, policy, 1);
            let r = run_scenario(&scn, None).unwrap();
            for t in &r.tasks {
                let d = t.deadlines.as_ref().unwrap();
                prop_assert_eq!(d.missed, 0, "{}: {} missed {} of {} (utilisation {:.3})", policy, t.name, d.missed, d.met + d.missed, util);
            }
        }
    }

    /// A higher-priority conventional task is never delayed by lower-priority ones: it runs the moment
    /// it wakes, whatever runs below it.
    #[test]
    fn higher_priority_is_never_delayed_by_lower(
        low in prop::collection::vec((1u32..5, 0u8..3), 1..6),
        think in 1u64..50,
        burst in 1u64..20,
    ) {
        let mut tasks = vec![task("H".into(), Model::Interactive {
            think: Exec::Fixed(think * MS), burst: Exec::Fixed(burst * MS), count: None }, 1, 1)];
        for (i, (share, kind)) in low.iter().enumerate() {
            let model = match kind {
                0 => Model::Cpu { work: None },
                1 => periodic(5 * MS, 20 * MS),
                _ => Model::Interactive { think: Exec::Fixed(3 * MS), burst: Exec::Fixed(2 * MS), count: None },
            };
            tasks.push(task(format!("L{i}"), model, *share, 0));
        }
        let scn = scenario(tasks, 5 * S, "smart", 1);
        let r = run_scenario(&scn, None).unwrap();
        let lat = r.tasks[0].latency_ns.as_ref().unwrap();
        prop_assert_eq!(lat.max, 0, "H waited {} ns", lat.max);
    }

    /// The same scenario and seed give byte-identical JSON.
    #[test]
    fn same_seed_same_bytes(seed in any::<u64>(), n in 1usize..6) {
        let tasks: Vec<TaskSpec> = (0..n).map(|i| {
            let model = Model::Periodic(Periodic::new(Exec::Uniform(2 * MS, 9 * MS), (10 + 7 * i as u64) * MS));
            let mut t = task(format!("T{i}"), model, 1 + i as u32, 0);
            t.jitter = Some(MS);
            t
        }).chain(std::iter::once(task("C".into(), Model::Cpu { work: None }, 1, 0))).collect();
        let scn = scenario(tasks, 3 * S, "smart", seed);
        let a = serde_json::to_string(&run_scenario(&scn, None).unwrap().to_json()).unwrap();
        let b = serde_json::to_string(&run_scenario(&scn, None).unwrap().to_json()).unwrap();
        prop_assert_eq!(a, b);
    }
}
