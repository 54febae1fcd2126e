//! `smartsim sweep` as a library: a grid's rows are the rows of each run made alone, in order
//! (combination, seed, task), and a value the scenario refuses stops the sweep before any run.

use smartsim::sweep::{self, parse_axis};

const SRC: &str = r#"
[machine]
duration = "2s"
hz = 100
[scheduler]
policy = "smart"
[[task]]
name = "R1"
model = "periodic"
exec = "10ms..30ms"
period = "40ms"
[[task]]
name = "C1"
model = "cpu"
"#;

#[test]
fn a_grid_is_every_combination_run_alone() {
    let axes =
        [parse_axis("scheduler.policy=smart,edf").unwrap(), parse_axis("task.R1.period=40ms,50ms").unwrap()];
    let combos = sweep::combinations(&axes);
    let scns = sweep::scenarios(SRC, "s.toml", &axes, &combos).unwrap();
    let params: Vec<Vec<(String, String)>> = combos
        .iter()
        .map(|c| axes.iter().zip(c).map(|(a, v)| (a.key.clone(), v.clone())).collect())
        .collect();
    let rows = sweep::run(&scns, &params, &[1, 2], &|| {}).unwrap();
    assert_eq!(rows.len(), 4 * 2 * 2, "4 combinations x 2 seeds x 2 tasks");
    // Each run, made alone from the file with its keys written in, gives the same rows.
    let mut k = 0;
    for (c, combo) in combos.iter().enumerate() {
        let text = SRC
            .replace("policy = \"smart\"", &format!("policy = \"{}\"", combo[0]))
            .replace("period = \"40ms\"", &format!("period = \"{}\"", combo[1]));
        for seed in [1, 2] {
            let mut scn = workload::parse_str(&text, "s.toml").unwrap();
            scn.machine.seed = seed;
            let r = smartsim::run_scenario(&scn, None).unwrap();
            let alone = sweep::rows(&params[c], seed, &r);
            assert_eq!(&rows[k..k + 2], alone.as_slice(), "{combo:?} seed {seed}");
            k += 2;
        }
    }
    // The seeds change the draws: R1's CPU differs between seeds 1 and 2.
    assert_ne!(rows[0].cpu_share, rows[2].cpu_share);
}

#[test]
fn a_value_the_scenario_refuses_stops_the_sweep_before_it_runs() {
    let axes = [parse_axis("machine.hz=100,2000000").unwrap()];
    let combos = sweep::combinations(&axes);
    let e = sweep::scenarios(SRC, "s.toml", &axes, &combos).unwrap_err().to_string();
    assert!(e.contains("machine.hz=2000000") && e.contains("machine.hz"), "{e}");
}
