//! Properties of every policy on N CPUs (proptest): a task runs on one CPU at a time, a CPU runs one
//! task at a time, global policies leave no CPU idle while a task waits, partitioned EDF misses nothing
//! when every CPU's share fits, global EDF misses nothing below the Goossens-Funk-Baruah bound, shares
//! hold when every weight is feasible, an infeasible weight gets one whole CPU.

use proptest::prelude::*;
use sched::CpuId;
use smartsim::{simulator, Sim};
use workload::{Estimate, Exec, Model, Notify, OnMiss, Periodic, Scenario, TaskSpec};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn periodic(exec: u64, period: u64) -> Model {
    Model::Periodic(Periodic {
        on_miss: OnMiss::Finish,
        estimate: Estimate::Exact,
        notify: Notify::Never,
        ..Periodic::new(Exec::Fixed(exec), period)
    })
}

fn machine(tasks: Vec<TaskSpec>, cpus: u32, duration: u64, policy: &str) -> Scenario {
    let mut scn = Scenario::new("proptest", duration, 1, policy, tasks);
    scn.machine.cpus = cpus;
    scn
}

/// Stretches on a CPU: (task, cpu, start, end).
type Intervals = Vec<(u32, CpuId, u64, u64)>;

/// Runs with the work-conservation check and a trace; returns (stranded instants, intervals, result).
fn run_checked(scn: &Scenario) -> (u64, Intervals, smartsim::SimResult) {
    let runs = std::cell::RefCell::new(Intervals::new());
    let mut sim: Sim = simulator(scn, None).expect("a valid scenario");
    sim.check_work_conservation();
    sim.trace_to(|rec| {
        if let trace::Record::Run { task, cpu, start, end, .. } = rec {
            runs.borrow_mut().push((task, cpu, start, end));
        }
    });
    sim.run_until(u64::MAX);
    let stranded = sim.stranded();
    let (r, _) = sim.finish_all();
    (stranded, runs.into_inner(), r)
}

/// Periodic tasks with utilisations `us` (each ≤ 1), periods from `periods` (ms).
fn set(us: &[f64], periods: &[u64]) -> Vec<TaskSpec> {
    us.iter()
        .zip(periods)
        .enumerate()
        .map(|(i, (u, p))| {
            let period = p * MS;
            TaskSpec::new(&format!("T{i}"), periodic(((u * period as f64) as u64).max(1), period))
        })
        .collect()
}

fn task_mix(kinds: &[(u8, u32)]) -> Vec<TaskSpec> {
    kinds
        .iter()
        .enumerate()
        .map(|(i, (kind, share))| {
            let model = match kind % 3 {
                0 => Model::Cpu { work: None },
                1 => periodic((3 + i as u64 % 5) * MS, (10 + 3 * i as u64) * MS),
                _ => Model::Interactive {
                    think: Exec::Fixed((2 + i as u64) * MS),
                    burst: Exec::Fixed(MS),
                    count: None,
                },
            };
            TaskSpec { share: *share, ..TaskSpec::new(&format!("X{i}"), model) }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, .. ProptestConfig::default() })]

    /// Whatever the mix, under every policy of the registry on 1 to 8 CPUs: no task is on two CPUs at
    /// once, no CPU runs two tasks at once, and no CPU idles while a task waits.
    #[test]
    fn one_task_per_cpu_one_cpu_per_task_and_no_idle_cpu_while_a_task_waits(
        kinds in prop::collection::vec((0u8..3, 1u32..4), 1..12),
        cpus in 1u32..=8,
    ) {
        for policy in sched::names() {
            let scn = machine(task_mix(&kinds), cpus, S / 2, policy);
            let (stranded, intervals, _) = run_checked(&scn);
            prop_assert_eq!(stranded, 0, "{} on {} CPUs left a CPU idle while a task waited", policy, cpus);
            for key in [0usize, 1] {
                let mut by: std::collections::BTreeMap<u32, Vec<(u64, u64)>> = Default::default();
                for &(t, c, a, b) in &intervals {
                    by.entry(if key == 0 { t } else { c }).or_default().push((a, b));
                }
                for (who, mut v) in by {
                    v.sort_unstable();
                    for w in v.windows(2) {
                        prop_assert!(w[1].0 >= w[0].1, "{}: {} {} overlaps itself: {:?}", policy,
                            if key == 0 { "task" } else { "CPU" }, who, w);
                    }
                }
            }
        }
    }

    /// Partitioned EDF (first fit by decreasing utilisation) misses no deadline when the set fits: each
    /// CPU is a uniprocessor with utilisation at most 1 (Liu & Layland 1973).
    #[test]
    fn partitioned_edf_misses_nothing_when_every_cpu_fits(
        us in prop::collection::vec(0.05f64..0.9, 2..14),
        periods in prop::collection::vec(5u64..=60, 14),
        cpus in 1u32..=4,
    ) {
        let mut scn = machine(set(&us, &periods), cpus, 2 * S, "edf");
        scn.scheduler.options.insert("partition".into(), toml::Value::String("ffd".into()));
        let Ok(sim) = simulator(&scn, None) else { return Ok(()) }; // does not fit: refused
        let r = sim.run();
        for t in &r.tasks {
            let d = t.deadlines.as_ref().unwrap();
            prop_assert_eq!(d.missed, 0, "{} missed {} of {}", t.name, d.missed, d.met + d.missed);
        }
    }

    /// Global EDF misses no deadline when U ≤ N − (N − 1)·u_max (Goossens, Funk, Baruah 2003).
    #[test]
    fn global_edf_misses_nothing_under_the_gfb_bound(
        weights in prop::collection::vec(1u32..=10, 2..16),
        periods in prop::collection::vec(5u64..=60, 16),
        cpus in 1u32..=8,
        fill in 0.3f64..=1.0,
    ) {
        let n = cpus as f64;
        let wsum: u32 = weights.iter().sum();
        let wmax = *weights.iter().max().unwrap() as f64 / wsum as f64;
        // U = fill × bound where u_max = U·wmax: U ≤ N − (N − 1)·U·wmax ⟺ U ≤ N / (1 + (N − 1)·wmax).
        let total = (fill * n / (1.0 + (n - 1.0) * wmax)).min(n);
        let us: Vec<f64> = weights.iter().map(|w| (total * *w as f64 / wsum as f64).min(1.0) * 0.999).collect();
        let scn = machine(set(&us, &periods), cpus, 2 * S, "edf");
        let r = simulator(&scn, None).unwrap().run();
        for t in &r.tasks {
            let d = t.deadlines.as_ref().unwrap();
            prop_assert_eq!(d.missed, 0, "{} missed {} of {} (U = {:.3} on {} CPUs)", t.name, d.missed, d.met + d.missed, total, cpus);
        }
    }

    /// CPU-bound tasks whose shares are all feasible (none above 1/N of the total) get the machine in
    /// proportion, within one point over a minute (SMART's bias, at most 250 ms of CPU per task, is a
    /// bounded offset), under WFQ and SMART.
    #[test]
    fn feasible_shares_hold_on_n_cpus(
        shares in prop::collection::vec(1u32..10, 2..12),
        cpus in 1u32..=4,
    ) {
        let total: u32 = shares.iter().sum();
        prop_assume!(shares.iter().all(|s| (*s * cpus) <= total));
        let tasks: Vec<TaskSpec> = shares.iter().enumerate()
            .map(|(i, s)| TaskSpec { share: *s, ..TaskSpec::new(&format!("C{i}"), Model::Cpu { work: None }) })
            .collect();
        for policy in ["wfq", "smart"] {
            let r = simulator(&machine(tasks.clone(), cpus, 60 * S, policy), None).unwrap().run();
            for (i, s) in shares.iter().enumerate() {
                let want = *s as f64 / total as f64;
                let got = r.tasks[i].cpu_share / cpus as f64;
                prop_assert!((got - want).abs() < 0.01, "{} on {} CPUs: task {} share {}/{}: got {:.4} of the machine, want {:.4}",
                    policy, cpus, i, s, total, got, want);
            }
        }
    }
}

/// A share above 1/N of the total cannot be given: readjusted, the heavy task gets one whole CPU and
/// the others share the rest in proportion (Chandra et al. 2000).
#[test]
fn an_infeasible_share_gets_one_whole_cpu() {
    let shares = [10u32, 1, 1, 1, 1];
    let tasks: Vec<TaskSpec> = shares
        .iter()
        .enumerate()
        .map(|(i, s)| TaskSpec { share: *s, ..TaskSpec::new(&format!("C{i}"), Model::Cpu { work: None }) })
        .collect();
    for policy in ["wfq", "smart"] {
        let r = simulator(&machine(tasks.clone(), 2, 20 * S, policy), None).unwrap().run();
        let heavy = r.tasks[0].cpu_share;
        assert!(heavy > 0.99, "{policy}: the heavy task got {heavy:.3} of a CPU");
        for t in &r.tasks[1..] {
            assert!(
                (t.cpu_share - 0.25).abs() < 0.01,
                "{policy}: {} got {:.3}, want 0.25",
                t.name,
                t.cpu_share
            );
        }
    }
}
