//! Random task sets (`smartsim::taskset`, `smartsim taskset`) and schedulability studies
//! (`smartsim schedulability`): the generators' properties (sums, bounds, the distribution of
//! RandFixedSum against values derived by hand, determinism by seed, periods), the scenarios the CLI
//! writes run, and two theorems the simulator must meet on the sets: EDF schedules every set of
//! utilisation at most 1 on one CPU, and the simulation of rate-monotonic fixed priorities accepts
//! exactly the sets response-time analysis accepts.

mod common;

use common::{scratch, smartsim};
use smartsim::schedulability::{rta_accepts, StudySpec};
use smartsim::taskset::{randfixedsum, uunifast, uunifast_discard, Generator, Periods, Taskset, TasksetSpec};
use workload::rand::SeedableRng;
use workload::rand_pcg::Pcg64;

const MS: u64 = 1_000_000;

fn rng(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

/// Mean and standard error of the mean.
fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

#[test]
fn uunifast_sums_to_u_and_is_never_negative() {
    let mut r = rng(1);
    for n in [1, 2, 3, 10, 100] {
        for u in [0.01, 0.5, 0.999, 1.0] {
            for _ in 0..200 {
                let us = uunifast(&mut r, n, u);
                assert_eq!(us.len(), n);
                assert!((us.iter().sum::<f64>() - u).abs() < 1e-9, "n {n} u {u}: {us:?}");
                assert!(us.iter().all(|&x| x >= 0.0), "{us:?}");
            }
        }
    }
}

#[test]
fn uunifast_discard_keeps_every_task_at_most_one() {
    let mut r = rng(2);
    for (n, u) in [(4, 2.0), (8, 3.0), (16, 4.0), (3, 1.5)] {
        for _ in 0..200 {
            let us = uunifast_discard(&mut r, n, u, 100_000).expect("a set within the draws");
            assert!((us.iter().sum::<f64>() - u).abs() < 1e-9);
            assert!(us.iter().all(|&x| (0.0..=1.0).contains(&x)), "{us:?}");
        }
    }
    // Near n almost every draw has a task above 1: it gives up.
    assert_eq!(uunifast_discard(&mut r, 10, 9.9, 1000), None);
}

#[test]
fn randfixedsum_sums_exactly_within_bounds() {
    let mut r = rng(3);
    for n in [1, 2, 3, 5, 10, 37, 100] {
        for frac in [0.0, 1e-9, 0.01, 0.3, 0.5, 0.77, 0.999, 1.0] {
            let u = frac * n as f64;
            for _ in 0..50 {
                let xs = randfixedsum(&mut r, n, u, 0.0, 1.0);
                assert_eq!(xs.len(), n);
                assert!((xs.iter().sum::<f64>() - u).abs() < 1e-9, "n {n} u {u}: {xs:?}");
                assert!(xs.iter().all(|&x| (-1e-12..=1.0 + 1e-12).contains(&x)), "n {n} u {u}: {xs:?}");
            }
        }
    }
    // Other bounds: [0.1, 0.6], sums from 10·0.1 to 10·0.6.
    for u in [1.0, 1.3, 3.5, 5.9, 6.0] {
        for _ in 0..200 {
            let xs = randfixedsum(&mut r, 10, u, 0.1, 0.6);
            assert!((xs.iter().sum::<f64>() - u).abs() < 1e-9, "u {u}: {xs:?}");
            assert!(xs.iter().all(|&x| (0.1 - 1e-12..=0.6 + 1e-12).contains(&x)), "u {u}: {xs:?}");
        }
    }
    // The largest set it draws, at the edges where the table's numbers are smallest.
    for u in [0.5, 1.0, 500.0, 999.0, 999.9] {
        let xs = randfixedsum(&mut r, 1000, u, 0.0, 1.0);
        assert!((xs.iter().sum::<f64>() - u).abs() < 1e-9, "u {u}");
        assert!(xs.iter().all(|&x| (-1e-12..=1.0 + 1e-12).contains(&x)), "u {u}");
    }
}

/// Every coordinate of a draw has the same marginal (the coordinates are put in a random order),
/// with mean U/n; checked on the first and the last within five standard errors of the sample's mean.
/// This checks that the order is random (without it the first coordinate's mean is off), not the
/// shape of the distribution: the next two tests do.
#[test]
fn randfixedsum_marginal_mean_is_u_over_n() {
    let mut r = rng(4);
    for (n, u, lo, hi) in [(5, 2.3, 0.0, 1.0), (8, 6.5, 0.0, 1.0), (4, 1.0, 0.1, 0.4), (12, 0.6, 0.0, 1.0)] {
        let draws: Vec<Vec<f64>> = (0..20_000).map(|_| randfixedsum(&mut r, n, u, lo, hi)).collect();
        for k in [0, n - 1] {
            let xs: Vec<f64> = draws.iter().map(|d| d[k]).collect();
            let (m, se) = mean_se(&xs);
            let want = u / n as f64;
            assert!(
                (m - want).abs() < 5.0 * se,
                "n {n} u {u} coordinate {k}: mean {m}, want {want} ± 5×{se}"
            );
        }
    }
}

/// Uniform over the slice Σx = 1.5 of the unit cube for n = 3 (a hexagon): the marginal density of a
/// coordinate is (0.5 + x)/0.75 on [0, 0.5] and (1.5 − x)/0.75 on [0.5, 1], so P(x < 0.25) = 5/24 and
/// E[x²] = 23/72 (by hand). A draw that favoured the centre or the corners of the hexagon would move
/// both. UUniFast-discard, uniform over the same slice, gives the same.
#[test]
fn randfixedsum_is_uniform_over_the_slice() {
    let m = 40_000;
    let mut r = rng(5);
    let rfs: Vec<f64> = (0..m).map(|_| randfixedsum(&mut r, 3, 1.5, 0.0, 1.0)[1]).collect();
    let ufd: Vec<f64> = (0..m).map(|_| uunifast_discard(&mut r, 3, 1.5, 100_000).unwrap()[1]).collect();
    for (name, xs) in [("randfixedsum", &rfs), ("uunifast-discard", &ufd)] {
        let below: Vec<f64> = xs.iter().map(|&x| f64::from(u8::from(x < 0.25))).collect();
        let (p, se) = mean_se(&below);
        assert!((p - 5.0 / 24.0).abs() < 5.0 * se, "{name}: P(x < 0.25) = {p}, want 5/24 ± 5×{se}");
        let sq: Vec<f64> = xs.iter().map(|x| x * x).collect();
        let (e2, se2) = mean_se(&sq);
        assert!((e2 - 23.0 / 72.0).abs() < 5.0 * se2, "{name}: E[x²] = {e2}, want 23/72 ± 5×{se2}");
    }
}

/// RandFixedSum against UUniFast-discard, which draws the same distribution another way (uniform over
/// the simplex, kept when inside the cube): three statistics of the shape (E[x²] of a coordinate,
/// P(x < 0.2), and E[max x]) agree within five standard errors of their difference, for slices where
/// the walk goes through every branch of its table. Above n/2, where UUniFast-discard would throw
/// most sets away, the cube's symmetry x ↦ 1 − x maps the slice at U onto the one at n − U. (The
/// marginal mean alone cannot tell: any exchangeable draw summing to U has mean U/n.)
#[test]
fn randfixedsum_draws_what_uunifast_discard_draws() {
    let m = 20_000;
    let mut r = rng(6);
    for (n, u) in [(4, 1.3), (5, 2.2), (6, 0.7), (3, 2.4), (8, 5.5), (4, 2.0)] {
        let mirror = u > n as f64 / 2.0;
        let rfs: Vec<Vec<f64>> = (0..m).map(|_| randfixedsum(&mut r, n, u, 0.0, 1.0)).collect();
        let ufd: Vec<Vec<f64>> = (0..m)
            .map(|_| {
                let us = uunifast_discard(&mut r, n, if mirror { n as f64 - u } else { u }, 100_000).unwrap();
                if mirror {
                    us.iter().map(|x| 1.0 - x).collect()
                } else {
                    us
                }
            })
            .collect();
        type Stat = fn(&[f64]) -> f64;
        let stats: [(&str, Stat); 3] = [
            ("E[x²]", |d| d[0] * d[0]),
            ("P(x < 0.2)", |d| f64::from(u8::from(d[0] < 0.2))),
            ("E[max]", |d| d.iter().copied().fold(0.0, f64::max)),
        ];
        for (name, f) in stats {
            let (a, sa) = mean_se(&rfs.iter().map(|d| f(d)).collect::<Vec<_>>());
            let (b, sb) = mean_se(&ufd.iter().map(|d| f(d)).collect::<Vec<_>>());
            let tol = 5.0 * (sa * sa + sb * sb).sqrt();
            assert!(
                (a - b).abs() <= tol,
                "n {n} U {u} {name}: randfixedsum {a}, uunifast-discard {b} (± {tol})"
            );
        }
    }
}

fn spec(generator: Generator, periods: Periods, u: f64) -> TasksetSpec {
    TasksetSpec { tasks: 10, utilisation: u, generator, periods, ..TasksetSpec::default() }
}

#[test]
fn a_seed_gives_the_same_set_and_another_seed_another() {
    for g in [Generator::Uunifast, Generator::UunifastDiscard, Generator::Randfixedsum] {
        for p in [Periods::Uniform, Periods::LogUniform, Periods::Harmonic] {
            let s = spec(g, p, 0.8);
            let a = s.generate(42).unwrap();
            assert_eq!(a, s.generate(42).unwrap(), "{g:?} {p:?}");
            assert_ne!(a.tasks, s.generate(43).unwrap().tasks, "{g:?} {p:?}");
            assert_eq!(
                a.to_toml("edf", None, false, ""),
                s.generate(42).unwrap().to_toml("edf", None, false, "")
            );
        }
    }
}

#[test]
fn periods_lie_in_their_bounds_and_execs_follow_the_utilisations() {
    for p in [Periods::Uniform, Periods::LogUniform, Periods::Harmonic] {
        for g in [1, MS] {
            let s = TasksetSpec {
                period_min: 10 * MS + 300,
                period_max: 1000 * MS,
                granularity: g,
                ..spec(Generator::Randfixedsum, p, 0.9)
            };
            for seed in 0..200 {
                let set = s.generate(seed).unwrap();
                assert!(set.utilisation() <= 0.9 + 1e-12, "{}", set.utilisation());
                for t in &set.tasks {
                    assert!((s.period_min..=s.period_max).contains(&t.period), "{p:?}: {}", t.period);
                    assert_eq!(t.period % g, 0);
                    assert_eq!(t.exec, ((t.utilisation * t.period as f64).floor() as u64).max(1));
                }
            }
        }
    }
}

/// Log-uniform: about as many periods in each decade; uniform: about as many in each half.
#[test]
fn log_uniform_periods_spread_over_decades() {
    let s = TasksetSpec {
        period_min: MS,
        period_max: 100 * MS,
        ..spec(Generator::Uunifast, Periods::LogUniform, 0.5)
    };
    let periods: Vec<u64> =
        (0..500).flat_map(|seed| s.generate(seed).unwrap().tasks).map(|t| t.period).collect();
    let low = periods.iter().filter(|&&p| p < 10 * MS).count() as f64 / periods.len() as f64;
    // Half below 10 ms (the middle of 1..100 ms on a log scale); 5000 draws: se 0.007.
    assert!((low - 0.5).abs() < 0.035, "{low}");
    let u = TasksetSpec { periods: Periods::Uniform, ..s };
    let periods: Vec<u64> =
        (0..500).flat_map(|seed| u.generate(seed).unwrap().tasks).map(|t| t.period).collect();
    let low = periods.iter().filter(|&&p| p < 50 * MS).count() as f64 / periods.len() as f64;
    assert!((low - 0.495).abs() < 0.035, "{low}");
}

#[test]
fn harmonic_periods_divide_each_other() {
    let s = TasksetSpec {
        period_min: 5 * MS,
        period_max: 700 * MS,
        ..spec(Generator::UunifastDiscard, Periods::Harmonic, 0.9)
    };
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..200 {
        let set = s.generate(seed).unwrap();
        for a in &set.tasks {
            seen.insert(a.period);
            for b in &set.tasks {
                let (lo, hi) = (a.period.min(b.period), a.period.max(b.period));
                assert_eq!(hi % lo, 0, "{lo} does not divide {hi}");
            }
        }
        // The hyperperiod is the longest period.
        assert_eq!(set.hyperperiod(u64::MAX), Some(set.longest_period()));
    }
    // 5 ms · 2^k up to 700 ms: 5, 10, ..., 640 ms, all drawn.
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), (0..8).map(|k| (5 * MS) << k).collect::<Vec<_>>());
}

#[test]
fn bad_specs_are_refused_naming_the_option() {
    let ok = TasksetSpec::default();
    assert!(ok.check().is_ok());
    let cases: Vec<(TasksetSpec, &str, &str)> = vec![
        (TasksetSpec { tasks: 0, ..ok.clone() }, "--tasks", "1 to"),
        (TasksetSpec { utilisation: -0.5, ..ok.clone() }, "--utilisation", "above 0"),
        (TasksetSpec { utilisation: f64::NAN, ..ok.clone() }, "--utilisation", "above 0"),
        (TasksetSpec { utilisation: 1.5, ..ok.clone() }, "--utilisation", "CPU"),
        (TasksetSpec { utilisation: 3.0, cpus: 4, tasks: 2, ..ok.clone() }, "--utilisation", "tasks"),
        (
            TasksetSpec { utilisation: 1.5, cpus: 2, generator: Generator::Uunifast, ..ok.clone() },
            "--utilisation",
            "UUniFast",
        ),
        (
            TasksetSpec { tasks: 1001, generator: Generator::Randfixedsum, ..ok.clone() },
            "--tasks",
            "RandFixedSum",
        ),
        (TasksetSpec { period_min: 0, ..ok.clone() }, "--period-min", "above 0"),
        (
            TasksetSpec { period_min: 100 * MS, period_max: 10 * MS, ..ok.clone() },
            "--period-max",
            "min ≤ max",
        ),
        (TasksetSpec { granularity: 0, ..ok.clone() }, "--granularity", "1ns"),
        (
            TasksetSpec { period_min: 11 * MS, period_max: 19 * MS, granularity: 10 * MS, ..ok.clone() },
            "--granularity",
            "no multiple",
        ),
        (TasksetSpec { cpus: 0, ..ok.clone() }, "--cpus", "1 to"),
    ];
    for (s, option, words) in cases {
        let e = s.check().expect_err(option).to_string();
        assert!(e.starts_with(option) && e.contains(words), "{e}");
        assert!(s.generate(1).is_err());
    }
}

/// A set's utilisation as written is at most 1, exactly: Σ C_i·(H/T_i) ≤ H over the hyperperiod H
/// (in u128: periods of whole ms in 10-100 ms give hyperperiods beyond u64's nanoseconds).
fn at_most_one(set: &Taskset) -> bool {
    fn gcd(a: u128, b: u128) -> u128 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let h = set.tasks.iter().fold(1u128, |h, t| h / gcd(h, u128::from(t.period)) * u128::from(t.period));
    set.tasks.iter().map(|t| u128::from(t.exec) * (h / u128::from(t.period))).sum::<u128>() <= h
}

/// EDF is optimal on one CPU: a set of implicit deadlines with utilisation at most 1 misses no
/// deadline (Liu and Layland 1973). Periods in whole ms keep the hyperperiod within u64 for the exact
/// check; the horizon is the hyperperiod or one second, and EDF misses no deadline ever, so any miss
/// in it would be the simulator's.
#[test]
fn edf_accepts_every_set_up_to_utilisation_one() {
    let mut checked = 0;
    for (g, p) in [
        (Generator::UunifastDiscard, Periods::LogUniform),
        (Generator::Randfixedsum, Periods::Harmonic),
        (Generator::Uunifast, Periods::Uniform),
    ] {
        for u in [0.7, 0.95, 0.99, 1.0] {
            let s = TasksetSpec { granularity: MS, ..spec(g, p, u) };
            for seed in 0..40 {
                let set = s.generate(seed).unwrap();
                assert!(at_most_one(&set));
                let scn = set.scenario("<edf>", "edf", None, false).unwrap();
                let r = smartsim::run_scenario(&scn, None).unwrap();
                let missed: u64 = r.tasks.iter().map(|t| t.deadlines.as_ref().unwrap().missed).sum();
                assert_eq!(
                    missed,
                    0,
                    "{g:?} {p:?} U {u} seed {seed}: {}",
                    set.to_toml("edf", None, false, "")
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 480);
}

/// Rate-monotonic fixed priorities (the `fifo` policy with the sets' priorities, all distinct) on one
/// CPU: the simulation accepts every set response-time analysis accepts — and, because the analysis is
/// exact here, only those. Why the horizon suffices: every task's first request is released at 0 (a
/// critical instant, Liu and Layland 1973: no later request of a task can respond more slowly under
/// fixed priorities with deadlines at most the periods), and the default horizon is at least the
/// longest period, so every task's first request has reached its deadline by the end; a request open
/// at the end past its deadline counts as late. So a task the analysis rejects misses its first
/// deadline in the simulation, and one it accepts never misses.
#[test]
fn fixed_priority_simulation_accepts_what_rta_accepts() {
    let (mut rta_yes, mut sim_yes, mut both) = (0, 0, 0);
    for p in [Periods::LogUniform, Periods::Uniform, Periods::Harmonic] {
        for u in [0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0] {
            let s = spec(Generator::UunifastDiscard, p, u);
            for seed in 0..25 {
                let set = s.generate(seed).unwrap();
                let scn = set.scenario("<rm>", "fifo", None, true).unwrap();
                assert!(scn.machine.duration >= set.longest_period());
                let r = smartsim::run_scenario(&scn, None).unwrap();
                let sim = r.tasks.iter().all(|t| t.deadlines.as_ref().unwrap().missed == 0);
                let rta = rta_accepts(&set);
                assert!(sim || !rta, "rta accepts, the simulation misses: {p:?} U {u} seed {seed}");
                assert_eq!(sim, rta, "{p:?} U {u} seed {seed}: {}", set.to_toml("fifo", None, true, ""));
                rta_yes += usize::from(rta);
                sim_yes += usize::from(sim);
                both += usize::from(rta && sim);
            }
        }
    }
    // Both verdicts occur (the sweep crosses RM's bound), so the comparison says something.
    assert!(rta_yes > 50 && rta_yes < 550, "{rta_yes} of 600 accepted");
    assert_eq!((sim_yes, both), (rta_yes, rta_yes));
}

/// Harmonic periods: rate-monotonic priorities schedule every set of utilisation at most 1 (Liu and
/// Layland 1973's bound is 1 when every period divides the longer ones); the analysis and the
/// simulation both say so. The horizon is the hyperperiod, the longest period.
#[test]
fn rate_monotonic_accepts_every_harmonic_set_up_to_one() {
    for g in [Generator::UunifastDiscard, Generator::Randfixedsum] {
        for u in [0.9, 0.99, 1.0] {
            let s = TasksetSpec { period_min: 5 * MS, period_max: 200 * MS, ..spec(g, Periods::Harmonic, u) };
            for seed in 0..30 {
                let set = s.generate(seed).unwrap();
                assert!(at_most_one(&set));
                assert!(rta_accepts(&set), "{g:?} U {u} seed {seed}");
                let scn = set.scenario("<harmonic>", "fifo", None, true).unwrap();
                assert_eq!(scn.machine.duration, set.longest_period());
                let r = smartsim::run_scenario(&scn, None).unwrap();
                assert!(
                    r.tasks.iter().all(|t| t.deadlines.as_ref().unwrap().missed == 0),
                    "{g:?} U {u} seed {seed}"
                );
            }
        }
    }
}

#[test]
fn a_study_counts_each_policy_and_the_analysis() {
    let spec = StudySpec {
        set: TasksetSpec { tasks: 6, ..TasksetSpec::default() },
        utilisations: vec![0.3, 0.9, 1.0],
        sets: 10,
        policies: vec!["edf".into(), "fifo".into()],
        duration: None,
        seed: 7,
        walk_limit: None,
    };
    let study = spec.run(&|| {}).unwrap();
    let names: Vec<&str> = study.curves.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["edf", "fifo", "rta"]);
    // EDF at U ≤ 1: every set; fixed priorities at 0.3 (below Liu and Layland's bound): every set.
    assert_eq!(study.curves[0].accepted, [10, 10, 10]);
    assert_eq!(study.curves[1].accepted[0], 10);
    assert_eq!(study.curves[1].accepted, study.curves[2].accepted);
    assert!(study.curves[2].accepted[2] < 10, "RM at U = 1 accepts only lucky sets");
    // A rejected set's seed draws it again, and it is rejected again.
    let seed = study.curves[2].first_rejected_seed[2].unwrap();
    let set = TasksetSpec { utilisation: 1.0, ..spec.set.clone() }.generate(seed).unwrap();
    assert!(!rta_accepts(&set));
    // The same study twice: the same numbers.
    assert_eq!(spec.run(&|| {}).unwrap(), study);
}

#[test]
fn a_study_past_its_walk_limit_names_the_first_set_that_stops() {
    // Every set's run under SMART walks past 100 tasks: whichever thread stops first, the error
    // names the first set in order, seed 7 at the first point.
    let spec = StudySpec {
        set: TasksetSpec { tasks: 10, ..TasksetSpec::default() },
        utilisations: vec![0.5, 0.9],
        sets: 8,
        policies: vec!["edf".into(), "smart".into()],
        duration: None,
        seed: 7,
        walk_limit: Some(100),
    };
    for _ in 0..5 {
        let e = spec.run(&|| {}).unwrap_err().to_string();
        assert!(e.starts_with("the set of seed 7 at utilisation 0.5 under smart stopped over_budget"), "{e}");
        assert!(
            e.contains(", --walk-limit 100; a larger one runs it further; give fewer --tasks or a shorter"),
            "{e}"
        );
    }
    // Without the limit, the default holds and the same study ends.
    let whole = StudySpec { walk_limit: None, ..spec };
    assert_eq!(whole.run(&|| {}).unwrap().curves.len(), 3);
}

#[test]
fn cli_writes_scenarios_that_run() {
    let dir = scratch("taskset-out");
    let out = dir.join("sets");
    let (code, _, err) = smartsim(&[
        "taskset",
        "--tasks",
        "5",
        "--utilisation",
        "0.85",
        "--count",
        "3",
        "--periods",
        "harmonic",
        "--period-min",
        "10ms",
        "--period-max",
        "80ms",
        "--policy",
        "fifo",
        "--seed",
        "11",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("3 scenarios"), "{err}");
    let spec = TasksetSpec {
        tasks: 5,
        utilisation: 0.85,
        periods: Periods::Harmonic,
        period_max: 80 * MS,
        ..TasksetSpec::default()
    };
    for k in 1..=3 {
        let path = out.join(format!("set-000{k}.toml"));
        let scn = workload::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // The file is the library's set of seed 11 + k − 1, with rate-monotonic priorities.
        let set = spec.generate(10 + k).unwrap();
        assert_eq!(scn.tasks.len(), 5);
        for (t, d) in scn.tasks.iter().zip(&set.tasks) {
            let workload::Model::Periodic(p) = &t.model else { panic!("periodic") };
            assert_eq!((p.period, p.exec.max(), t.priority), (d.period, Some(d.exec), d.priority));
        }
        assert_eq!(scn.scheduler.policy, "fifo");
        assert_eq!(scn.machine.duration, set.default_duration());
        let (code, json, err) = smartsim(&["run", path.to_str().unwrap(), "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let missed: u64 =
            v["tasks"].as_array().unwrap().iter().map(|t| t["deadlines"]["missed"].as_u64().unwrap()).sum();
        assert_eq!(missed == 0, rta_accepts(&set), "set {k}");
    }
    // One set on stdout: the same text each time, and a scenario.
    let args = ["taskset", "--utilisation", "0.5", "--seed", "3", "--generator", "randfixedsum"];
    let (code, a, err) = smartsim(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(smartsim(&args).1, a);
    let scn = workload::parse_str(&a, "stdout.toml").unwrap();
    assert_eq!((scn.tasks.len(), scn.scheduler.policy.as_str()), (10, "edf"));
    assert!(scn.tasks.iter().all(|t| t.priority == 0), "no priorities under EDF");
}

#[test]
fn cli_study_prints_json_and_writes_a_report() {
    let dir = scratch("schedulability-out");
    let (code, json, err) = smartsim(&[
        "schedulability",
        "--tasks",
        "5",
        "--sets",
        "5",
        "--from",
        "0.5",
        "--to",
        "1",
        "--step",
        "0.25",
        "--policies",
        "edf,fifo",
        "--format",
        "json",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["utilisations"], serde_json::json!([0.5, 0.75, 1.0]));
    let curves = v["curves"].as_array().unwrap();
    let names: Vec<&str> = curves.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["edf", "fifo", "rta"]);
    assert_eq!(curves[0]["accepted"], serde_json::json!([5, 5, 5]));
    assert_eq!(curves[1]["accepted"], curves[2]["accepted"]);
    let svg = std::fs::read_to_string(dir.join("acceptance.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let text: String = doc.descendants().filter_map(|n| n.text()).collect();
    for label in ["edf", "fifo (RM)", "rta (analysis)", "acceptance ratio"] {
        assert!(text.contains(label), "the plot has no {label}");
    }
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("fifo (RM)"));
}
