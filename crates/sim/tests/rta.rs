//! `smartsim rta` against the simulator: a task set the response-time analysis accepts never misses a
//! deadline when simulated under fixed priorities (`fifo`) on one CPU, and no simulated response is
//! longer than the analysis's bound (proptest over random task sets with release jitter, timers
//! high-resolution or on a 100 Hz tick, deadlines short and long, equal priorities); and Regehr §5.5's
//! set meets its bound exactly.

use proptest::prelude::*;
use smartsim::rta::{analyse, RtaTask};
use workload::{Exec, Model, OnMiss, Periodic, Scenario, TaskSpec, TimerKind};

const MS: u64 = 1_000_000;

/// Periods whose hyperperiod is at most 200 ms.
const PERIODS: [u64; 6] = [5, 10, 20, 25, 40, 50];

#[derive(Clone, Debug)]
struct Gen {
    period: u64,
    /// Execution, in tenths of a ms.
    exec: u64,
    /// Deadline, as a percentage of the period (50 to 200).
    deadline_pct: u64,
    /// Release jitter, in tenths of a ms.
    jitter: u64,
    priority: i32,
    /// Released by a tick-granular timer (at 100 Hz) instead of a high-resolution one.
    tick: bool,
}

fn task_gen() -> impl Strategy<Value = Gen> {
    (0usize..PERIODS.len(), 1u64..60, 50u64..=200, 0u64..30, 0i32..4, prop::bool::weighted(0.3)).prop_map(
        |(p, exec, deadline_pct, jitter, priority, tick)| Gen {
            period: PERIODS[p] * MS,
            exec,
            deadline_pct,
            jitter,
            priority,
            tick,
        },
    )
}

fn scenario(set: &[Gen]) -> (Scenario, Vec<RtaTask>) {
    let mut tasks = Vec::new();
    let mut analysed = Vec::new();
    for (i, g) in set.iter().enumerate() {
        let exec = (g.exec * MS / 10).min(g.period);
        let deadline = (g.period * g.deadline_pct / 100).max(exec);
        let jitter = g.jitter * MS / 10;
        let name = format!("t{i}");
        let p = Periodic { deadline, on_miss: OnMiss::Finish, ..Periodic::new(Exec::Fixed(exec), g.period) };
        let mut t = TaskSpec::new(&name, Model::Periodic(p));
        t.priority = g.priority;
        t.jitter = (jitter > 0).then_some(jitter);
        t.timer = Some(if g.tick { TimerKind::Tick } else { TimerKind::Hr });
        tasks.push(t);
        // A tick at 100 Hz releases the request up to 10 ms late.
        let jitter = jitter + if g.tick { 10 * MS } else { 0 };
        analysed.push(RtaTask {
            name,
            priority: g.priority,
            exec,
            period: g.period,
            deadline,
            jitter,
            blocking: 0,
            spin: 0,
        });
    }
    // Two hyperperiods (200 ms each at most) and the longest jitter: the worst case of release phasing
    // (all released together at 0) is in the first, and each later request is drawn late at random.
    let mut scn = Scenario::new("rta", 400 * MS, 1, "fifo", tasks);
    scn.machine.hz = 100;
    // The analysis reads the same from the scenario.
    let (read, _) = smartsim::rta::from_scenario(&scn, &Default::default()).expect("analysable");
    assert_eq!(read, analysed);
    (scn, analysed)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn a_set_the_analysis_accepts_misses_no_deadline(set in prop::collection::vec(task_gen(), 1..6), seed in 1u64..1000) {
        let (mut scn, analysed) = scenario(&set);
        scn.machine.seed = seed;
        let bounds = analyse(&analysed);
        let r = smartsim::run_scenario(&scn, None).expect("runs");
        for (t, b) in r.tasks.iter().zip(&bounds) {
            let worst = t.response_ns.as_ref().map_or(0, |p| p.max);
            if let Some(w) = b.wcrt_ns {
                // Within one ns per request of rounding: the simulator is exact, the bound too.
                prop_assert!(worst <= w, "{}: simulated {worst} > bound {w}", t.name);
            }
            if b.schedulable {
                let missed = t.deadlines.as_ref().map_or(0, |d| d.missed);
                prop_assert_eq!(missed, 0, "{} is schedulable by the analysis", t.name);
            }
        }
    }
}

#[test]
fn the_critical_instant_is_reached_and_the_bound_is_tight() {
    // Regehr §5.5's set, released together at 0 with no jitter: the simulated worst response of the
    // lower task is exactly the analysis's 29 ms.
    let set = [
        Gen { period: 8 * MS, exec: 30, deadline_pct: 100, jitter: 0, priority: 2, tick: false },
        Gen { period: 33 * MS, exec: 170, deadline_pct: 100, jitter: 0, priority: 1, tick: false },
    ];
    let (scn, analysed) = scenario(&set);
    let bounds = analyse(&analysed);
    let r = smartsim::run_scenario(&scn, None).expect("runs");
    assert_eq!(bounds[1].wcrt_ns, Some(29 * MS));
    assert_eq!(r.tasks[1].response_ns.as_ref().unwrap().max, 29 * MS);
}
