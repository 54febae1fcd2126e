//! Long runs: a watched run publishes its progress and stops when asked, with partial results
//! (`smartsim::engine::Progress`); Ctrl-C (SIGINT) stops `smartsim run`, `compare` and `sweep` with
//! their partial results printed and status 130; the progress bar is drawn on a terminal only.

mod common;
use common::scratch;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use smartsim::engine::Progress;

/// `n` periodic tasks (periods 10 ms to 100 ms in turn, 90 % of the CPU together) for `seconds`.
fn long_scenario(n: usize, seconds: u64) -> String {
    let mut s = format!("[machine]\nduration = \"{seconds}s\"\nseed = 1\n[scheduler]\npolicy = \"edf\"\n");
    for i in 0..n {
        let period_us = 10_000 * (1 + i as u64 % 10);
        let exec_ns = period_us * 1000 * 9 / 10 / n as u64;
        s += &format!(
            "[[task]]\nname = \"t{i}\"\nmodel = \"periodic\"\nexec = \"{exec_ns}ns\"\nperiod = \"{period_us}us\"\n"
        );
    }
    s
}

/// The 1000-task scenario for 1000 s, written to a scratch directory of its own.
fn scenario_file(name: &str, tasks: usize) -> PathBuf {
    let f = scratch(name).join("long.toml");
    std::fs::write(&f, long_scenario(tasks, 1000)).unwrap();
    f
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_smartsim"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("smartsim starts")
}

/// Sends SIGINT to `child` after `after`, and waits (60 s at most) for it: status, stdout, stderr.
fn interrupt(mut child: Child, after: Duration) -> (Option<i32>, String, String) {
    std::thread::sleep(after);
    assert!(child.try_wait().unwrap().is_none(), "it ended before the interrupt: make the scenario longer");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    // Read both pipes while waiting, so that a large output cannot block the child.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let o = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).unwrap();
        s
    });
    let e = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).unwrap();
        s
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("still running 60 s after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status.code(), o.join().unwrap(), e.join().unwrap())
}

fn p(f: &Path) -> &str {
    f.to_str().unwrap()
}

#[test]
fn ctrl_c_stops_a_run_with_its_partial_results_and_status_130() {
    let f = scenario_file("interrupt-run", 1000);
    let (code, out, err) = interrupt(spawn(&["run", p(&f), "--format", "json"]), Duration::from_millis(500));
    assert_eq!(code, Some(130), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("the JSON is printed whole");
    let partial = &v["partial"];
    assert_eq!(partial["reason"], "interrupted", "{out:.400}");
    let simulated = partial["simulated_ns"].as_u64().unwrap();
    assert_eq!(partial["scenario_duration_ns"].as_u64(), Some(1000 * 1_000_000_000));
    assert!(simulated > 0 && simulated < 1000 * 1_000_000_000, "simulated {simulated} ns");
    // The figures are of the time simulated: the duration is it, and the tasks' CPU adds up to no
    // more than it.
    assert_eq!(v["duration_ns"].as_u64(), Some(simulated));
    let cpu: u64 = v["tasks"].as_array().unwrap().iter().map(|t| t["cpu_ns"].as_u64().unwrap()).sum();
    assert!(cpu > 0 && cpu <= simulated, "cpu {cpu} of {simulated}");
    let share: f64 = v["tasks"].as_array().unwrap().iter().map(|t| t["cpu_share"].as_f64().unwrap()).sum();
    assert!((share - cpu as f64 / simulated as f64).abs() < 1e-6, "shares are over the time simulated");
    assert!(v["system"]["jobs"].as_u64().unwrap() > 0);
    assert!(err.contains("interrupted") && err.contains("partial"), "{err}");
}

#[test]
fn an_interrupted_table_says_it_is_partial_and_nothing_is_drawn_on_a_pipe() {
    // Longer than the second after which a terminal gets a bar.
    let f = scenario_file("interrupt-table", 1000);
    let (code, out, err) = interrupt(spawn(&["run", p(&f)]), Duration::from_millis(1500));
    assert_eq!(code, Some(130), "{err}");
    let line =
        out.lines().find(|l| l.starts_with("partial: interrupted at ")).unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("of 1000 s simulated"), "{line}");
    // Standard error is a pipe: the two lines of the interrupt, no bar.
    assert!(
        !err.contains("events/s") && !err.contains('\r') && !err.contains('\x1b'),
        "a bar on a pipe: {err:?}"
    );
    assert_eq!(err.lines().filter(|l| !l.is_empty()).count(), 2, "{err}");
}

#[test]
fn ctrl_c_stops_compare_after_the_policy_running() {
    let f = scenario_file("interrupt-compare", 1000);
    let child = spawn(&["compare", p(&f), "--policies", "edf,fifo,wfq", "--format", "json"]);
    let (code, out, err) = interrupt(child, Duration::from_millis(500));
    assert_eq!(code, Some(130), "{err}");
    // edf was running: it is printed, partial; fifo and wfq were not started.
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1, "{out:.400}");
    assert_eq!(lines[0]["policy"], "edf");
    assert_eq!(lines[0]["partial"]["reason"], "interrupted");
    assert!(err.contains("not run: fifo, wfq"), "{err}");
}

#[test]
fn ctrl_c_stops_a_sweep_marking_the_runs_under_way() {
    let f = scenario_file("interrupt-sweep", 300);
    let child = spawn(&["sweep", p(&f), "--set", "machine.hz=0", "--seeds", "1..40", "--format", "jsonl"]);
    let (code, out, err) = interrupt(child, Duration::from_millis(500));
    assert_eq!(code, Some(130), "{err}");
    let rows: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // Each run under way when the interrupt came is printed, its 300 rows marked partial; the others
    // were not started.
    assert!(!rows.is_empty() && rows.len() % 300 == 0, "{} rows", rows.len());
    assert!(rows.len() < 40 * 300, "every run was made");
    assert!(rows.iter().all(|r| r["partial"]["reason"] == "interrupted"), "{:.400}", out);
    let runs = rows.len() / 300;
    assert!(
        err.contains(&format!("0 of 40 runs went to their end, {runs} stopped partway"))
            && err.contains("not started"),
        "{err}"
    );
}

#[test]
fn ctrl_c_after_a_run_stopped_over_budget_says_which_stopped_how() {
    // SMART's run walks past its limit of 2,000 at once; EDF's walks nothing and runs until Ctrl-C.
    let f = scenario_file("interrupt-sweep-over", 300);
    let child = spawn(&["sweep", p(&f), "--set", "scheduler.policy=smart,edf", "--walk-limit", "2000"]);
    let (code, out, err) = interrupt(child, Duration::from_millis(500));
    assert_eq!(code, Some(130), "{err}");
    let reason = |policy: &str| -> Vec<&str> {
        out.lines()
            .filter(|l| l.split_whitespace().next() == Some(policy))
            .map(|l| {
                if l.contains("over_budget at") {
                    "over_budget"
                } else if l.contains("interrupted at") {
                    "interrupted"
                } else {
                    "whole"
                }
            })
            .collect()
    };
    assert_eq!(reason("smart"), vec!["over_budget"; 300], "{out:.2000}");
    assert_eq!(reason("edf"), vec!["interrupted"; 300], "{out:.2000}");
    let counts =
        "0 of 2 runs went to their end, 2 stopped partway (their rows marked partial; 1 over budget), 0 \
                  not started";
    assert!(
        out.contains(&format!("partial (Ctrl-C): {counts}")),
        "{:.400}",
        &out[out.len().saturating_sub(400)..]
    );
    assert!(err.contains(&format!("sweep interrupted: {counts}")), "{err}");
}

/// A scenario that runs in well under a second of wall time but many checks long.
const SHORT: &str = "[machine]\nduration = \"20s\"\nhz = 1000\n[scheduler]\npolicy = \"edf\"\n\
    [[task]]\nname = \"A\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\n\
    [[task]]\nname = \"B\"\nmodel = \"cpu\"\n";

#[test]
fn a_watched_run_publishes_its_progress_and_gives_the_same_results() {
    let scn = workload::parse_str(SHORT, "short.toml").unwrap();
    let alone = smartsim::run_scenario(&scn, None).unwrap();
    let watch = Arc::new(Progress::new());
    let mut sim = smartsim::simulator(&scn, None).unwrap();
    sim.watch(Arc::clone(&watch));
    let watched = sim.run();
    assert_eq!(watched, alone, "watching changes nothing");
    assert!(watched.partial.is_none());
    assert_eq!(watch.simulated_ns(), scn.machine.duration, "all of it published");
    assert!(watch.steps() > u64::from(smartsim::engine::CHECK_EVERY), "{} steps", watch.steps());
}

#[test]
fn a_run_asked_to_stop_stops_at_its_first_check_with_partial_results() {
    let scn = workload::parse_str(SHORT, "short.toml").unwrap();
    let watch = Arc::new(Progress::new());
    watch.stop();
    let mut sim = smartsim::simulator(&scn, None).unwrap();
    sim.watch(Arc::clone(&watch));
    sim.run_until(u64::MAX);
    assert!(sim.stopped());
    let at = sim.now();
    // It goes no further when asked again.
    sim.run_until(u64::MAX);
    assert_eq!(sim.now(), at);
    let r = sim.finish();
    let p = r.partial.as_ref().expect("marked partial");
    assert_eq!((p.simulated_ns, p.scenario_duration_ns), (at, scn.machine.duration));
    assert_eq!(r.duration_ns, at);
    assert!(at > 0 && at < scn.machine.duration, "stopped at {at}");
    assert_eq!(watch.steps(), u64::from(smartsim::engine::CHECK_EVERY), "one check's steps");
    assert_eq!(watch.simulated_ns(), at);
    // Its figures are of the time simulated: A's requests released by then, B has the rest.
    let a = r.task("A").unwrap();
    let d = a.deadlines.as_ref().unwrap();
    assert_eq!(d.requests, at / 10_000_000 + 1, "A's requests released by {at}");
    let busy: u64 = r.tasks.iter().map(|t| t.cpu_ns).sum::<u64>() + r.system.idle_ns;
    assert!(busy <= at && busy + 2_000_000 >= at, "the CPU's time adds up to {busy} of {at}");
    assert!(r.to_json()["partial"]["reason"] == "interrupted");
}

/// A pseudo-terminal with `script` (util-linux), where it is installed: the bar is drawn on it once
/// the run has lasted a second.
#[test]
fn a_terminal_gets_the_bar() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("no `script` here: the bar on a terminal is not checked");
        return;
    }
    let f = scenario_file("interrupt-tty", 1000);
    // `--foreground`: one SIGINT, to smartsim alone. Without it timeout(1) signals the child and then
    // its whole process group, and the second SIGINT, as a second Ctrl-C would, quits before the
    // results are printed when it comes first (2 runs in 6 failed so).
    let cmd = format!(
        "stty cols 160; timeout --foreground -s INT 2.5 {} run {} --format json",
        env!("CARGO_BIN_EXE_smartsim"),
        p(&f)
    );
    let out = Command::new("script").args(["-qec", &cmd, "/dev/null"]).stdin(Stdio::null()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("events/s") && text.contains("/1000 s simulated"), "no bar: {text:.2000}");
    assert!(text.contains("\"partial\""), "{text:.2000}");
}

/// SMART's every decision walks its candidates: twenty tasks, some of them real-time.
const WALKING: &str = "[machine]\nduration = \"10s\"\nhz = 1000\n[scheduler]\npolicy = \"smart\"\n\
    ${tasks}[[task]]\nname = \"hog\"\nmodel = \"cpu\"\n";

fn walking() -> workload::Scenario {
    let tasks: String = (0..20)
        .map(|k| {
            format!(
                "[[task]]\nname = \"p{k}\"\nmodel = \"periodic\"\nexec = \"1ms\"\nperiod = \"{}ms\"\n",
                40 + k
            )
        })
        .collect();
    workload::parse_str(&WALKING.replace("${tasks}", &tasks), "walking.toml").unwrap()
}

#[test]
fn a_run_past_the_tasks_its_policy_may_walk_stops_itself_with_partial_results() {
    let scn = walking();
    let mut whole = smartsim::simulator(&scn, None).unwrap();
    whole.limit_walked(None);
    whole.run_until(u64::MAX);
    let all = whole.core().policy().walked();
    assert!(all > 20_000, "{all} walked in the whole run");
    let whole = whole.finish();
    assert!(whole.partial.is_none());
    // A limit of 2,000 stops it early, marked partial.
    let mut sim = smartsim::simulator(&scn, None).unwrap();
    sim.limit_walked(Some(2_000));
    sim.run_until(u64::MAX);
    assert!(sim.stopped());
    let at = sim.now();
    assert!(at > 0 && at < scn.machine.duration, "stopped at {at}");
    let walked = sim.core().policy().walked();
    assert!(walked > 2_000, "{walked}");
    let r = sim.finish();
    let p = r.partial.as_ref().expect("marked partial");
    assert_eq!(p.reason, smartsim::result::PartialReason::OverBudget);
    assert_eq!(r.to_json()["partial"]["reason"], "over_budget");
    assert_eq!((p.simulated_ns, r.duration_ns), (at, at));
    // Not far past it: the walk is read more often as it nears the limit.
    assert!(walked < 3_000, "{walked} walked at the stop");
    // A caller that runs to the end (run_scenario, the reproductions, the studies) gets an error,
    // not part of a run passing for the whole.
    let e = smartsim::whole(r).unwrap_err().to_string();
    assert!(e.contains("stopped over_budget at") && e.contains("under smart"), "{e}");
    // By default a run is held to the budget's limit, which this one is far below.
    let r = smartsim::run_scenario(&scn, None).unwrap();
    assert_eq!(r, whole);
    // A policy that walks nothing never stops for it.
    let mut edf = smartsim::simulator(&scn, Some("edf")).unwrap();
    edf.limit_walked(Some(0));
    assert!(edf.run().partial.is_none());
}
