//! `smartsim run --jobs` with `ties = "task"` against schedules SimSo 0.8.5 computed (global `EDF`
//! and `RM` on 2 CPUs, `bench/simso/check.py`'s set-up: no overheads, exact timers and billing,
//! implicit deadlines), through the whole simulator: which job ends when.

use std::collections::BTreeMap;
mod common;
use common::smartsim;

const MS: u64 = 1_000_000;

/// Periodic tasks (period, exec, priority) in ms on 2 CPUs under `policy` with `ties = "task"` for
/// `duration` ms: per task, each job that finished, in order: when (ms) and on which CPU.
fn jobs(policy: &str, tasks: &[(u64, u64, i32)], duration: u64) -> BTreeMap<String, Vec<(u64, u32)>> {
    let d = common::scratch(&format!("simso-{policy}-{duration}"));
    let mut scn = format!(
        "[machine]\ncpus = 2\nduration = \"{duration}ms\"\nhz = 0\nbilling = \"exact\"\ntimer = \"hr\"\n\
         [scheduler]\npolicy = \"{policy}\"\nties = \"task\"\n"
    );
    for (i, (period, exec, priority)) in tasks.iter().enumerate() {
        scn += &format!(
            "[[task]]\nname = \"T{i}\"\nmodel = \"periodic\"\nexec = \"{exec}ms\"\nperiod = \"{period}ms\"\n\
             priority = {priority}\nestimate = \"exact\"\n"
        );
    }
    let (f, jobs) = (d.join("s.toml"), d.join("jobs.csv"));
    std::fs::write(&f, scn).unwrap();
    let (code, _, err) = smartsim(&["run", f.to_str().unwrap(), "--jobs", jobs.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let csv = std::fs::read_to_string(jobs).unwrap();
    let head: Vec<&str> = csv.lines().next().expect("a header").split(',').collect();
    let col = |name: &str| head.iter().position(|&c| c == name).expect("a column");
    let (finish, cpu) = (col("finish_ns"), col("cpu"));
    let mut out: BTreeMap<String, Vec<(u64, u32)>> = BTreeMap::new();
    for line in csv.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        if let Ok(ns) = cols[finish].parse::<u64>() {
            out.entry(cols[0].to_string()).or_default().push((ns / MS, cols[cpu].parse().expect("a CPU")));
        }
    }
    for v in out.values_mut() {
        v.sort_unstable();
    }
    out
}

/// When each job finished, per task (ms), over 40 ms.
fn finishes(policy: &str, tasks: &[(u64, u64, i32)]) -> BTreeMap<String, Vec<u64>> {
    jobs(policy, tasks, 40).into_iter().map(|(t, j)| (t, j.into_iter().map(|x| x.0).collect())).collect()
}

fn expect(list: &[(&str, &[u64])]) -> BTreeMap<String, Vec<u64>> {
    list.iter().map(|(t, f)| (t.to_string(), f.to_vec())).collect()
}

#[test]
fn global_edf_places_each_job_where_simso_does() {
    // At 10 ms T1's job (deadline 20) is released on CPU 1, where T1 last ran, and T0's (deadline
    // 15) on CPU 0; both CPUs run jobs with deadline 20. SimSo's CPU 1 decides first and takes the
    // best waiting job, T0's, preempting its own T3 (a tie between the two 20s goes to the deciding
    // CPU): T2's first job ends at 14, T0's fourth at 16, T3's first at 20 (before, `ties = "task"`
    // preempted T2: 17, 18, 17).
    let got = finishes("edf", &[(5, 1, 0), (10, 2, 0), (20, 12, 0), (20, 15, 0)]);
    let simso = expect(&[
        ("T0", &[1, 6, 11, 16, 21, 26, 31, 36]),
        ("T1", &[2, 13, 22, 33]),
        ("T2", &[14, 34]),
        ("T3", &[20, 40]),
    ]);
    assert_eq!(got, simso);
}

#[test]
fn global_rate_monotonic_places_each_job_where_simso_does() {
    // T2 (period 4) is the most important, T0 and T1 (period 15) equal. At 16 and 20 ms T2's jobs
    // are released on CPU 0 and preempt T1 there, not T0 on CPU 1 (the tie goes to the deciding
    // CPU); T1 resumes on CPU 1 when T0 ends at 21 and ends at 28 (before: T0 at 26, T1 at 25).
    let got = finishes("fifo", &[(15, 6, 1), (15, 10, 1), (4, 2, 2)]);
    let simso = expect(&[
        ("T0", &[6, 21, 40]),
        ("T1", &[14, 28, 40]),
        ("T2", &[2, 6, 10, 14, 18, 22, 26, 30, 34, 38]),
    ]);
    assert_eq!(got, simso);
}

#[test]
fn a_task_that_ends_its_last_job_of_the_run_leaves_its_cpu_as_in_simso() {
    // T0 (3, 2), T1 (15, 6), T2 (10, 7), 45 ms. At 41 ms T0's job ends on CPU 0 and T1's on CPU 1,
    // and T1 has no job left in the run (its next would come at 45), so smartsim's T1 exits; SimSo's
    // tasks never do. SimSo handles T0's end first (its notice is older): CPU 0 takes T2's waiting
    // job (released at 40), and T0's next job, released at 42, goes to idle CPU 1 and ends there at
    // 44. The exit changes none of it.
    let got = jobs("edf", &[(3, 2, 0), (15, 6, 0), (10, 7, 0)], 45);
    assert_eq!(got["T1"].last(), Some(&(41, 1)));
    assert_eq!(got["T0"][got["T0"].len() - 2..], [(41, 0), (44, 1)]);
}
