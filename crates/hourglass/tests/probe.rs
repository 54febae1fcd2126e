//! Short real runs (each ≤ 2 s) that check the probe's behaviour, never absolute timings.
//! They run one at a time (a lock) so that they do not disturb each other's CPU.

use hourglass::cli::{parse, Command};
use hourglass::config::{Format, RunConfig};
use hourglass::output::{render, to_json, to_perfetto};
use hourglass::run::run;
use std::sync::Mutex;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn cfg(args: &str) -> RunConfig {
    let v: Vec<String> = args.split_whitespace().map(String::from).collect();
    match parse(&v).expect("valid command line") {
        Command::Run(c) => *c,
        other => panic!("{other:?}"),
    }
}

fn root() -> bool {
    hourglass::sys::can_use_rt()
}

#[test]
fn equal_priority_cpu_threads_get_roughly_equal_time() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let r = run(&cfg("-n 2 -d 1s -a -p NORMAL -w CPU")).unwrap();
    let (a, b) = (r.threads[0].cpu_ns as f64, r.threads[1].cpu_ns as f64);
    assert!(a > 0.0 && b > 0.0);
    let share = a / (a + b);
    assert!((0.35..=0.65).contains(&share), "thread 0 got {share:.2} of the pair's CPU");
    // Both threads appear in the trace, and switches between them were seen.
    assert!(r.intervals.iter().any(|i| i.thread == 0));
    assert!(r.intervals.iter().any(|i| i.thread == 1));
    assert!(!hourglass::output::switch_gaps(&r).is_empty());
    // Gap-measured CPU time agrees with the kernel's accounting of the thread.
    for t in &r.threads {
        let ratio = t.cpu_ns as f64 / t.kernel_cpu_ns.max(1) as f64;
        assert!((0.8..=1.05).contains(&ratio), "gap cpu / kernel cpu = {ratio:.3}");
    }
}

#[test]
fn periodic_4ms_5ms_at_rthigh_counts_every_period_and_takes_at_most_its_demand() {
    if !root() {
        eprintln!("skipped: needs root or RLIMIT_RTPRIO");
        return;
    }
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // What hourglass does with a periodic thread, not how punctually this machine runs it: how often
    // the kernel meets the thread's deadlines is a benchmark figure (`hourglass bench punctuality`,
    // README), because on a shared VM the host stops the vCPU for longer than the 1 ms slack now and
    // then (397, 399, 394, 400, 400, 377, 385, 389 of 400 in runs on the project's machines).
    let r = run(&cfg("-n 1 -d 2s -t 0 -p RTHIGH -w PERIODIC 4ms 5ms -i HR")).unwrap();
    let t = &r.threads[0];
    let total = t.hits + t.misses;
    eprintln!("hit {} of {total} periods (not asserted: see hourglass bench punctuality)", t.hits);
    // Every 5 ms period of the 2 s run is judged once, a hit or a miss.
    assert!((399..=401).contains(&total), "{total} periods judged in 2 s of 5 ms periods");
    assert_eq!(t.responses_ns.len() as u64, t.hits, "one response time per period met");
    assert_eq!(t.miss_at_ns.len() as u64, t.misses, "one time per period missed");
    // A hit is a period whose 4 ms of work finished by its deadline: its response time lies between
    // the work and the deadline, up to one pass of the polling loop (shorter than the gap threshold)
    // and the TSC's calibration against CLOCK_MONOTONIC (well under 1 %).
    for &resp in &t.responses_ns {
        assert!(
            (3_960_000..=5_000_000 + t.gap_ns + 50_000).contains(&resp),
            "a met period's response time is {resp} ns (gap threshold {} ns)",
            t.gap_ns
        );
    }
    // Misses are reported at their deadlines, which are whole periods from the start.
    for &at in &t.miss_at_ns {
        assert_eq!(at % 5_000_000, 0, "a miss reported at {at} ns, not at a deadline");
    }
    // The thread sleeps between jobs: at most once per period met, plus once before the first.
    assert!(t.latencies_ns.len() as u64 <= t.hits + 1, "{} sleeps, {} hits", t.latencies_ns.len(), t.hits);
    // Its CPU time (the gaps' complement) is at least the work of the periods it met and at most the
    // work of every period: a periodic thread never takes more than its demand, 4/5 of the CPU.
    let share = t.cpu_ns as f64 / 2e9;
    let (lo, hi) = (t.hits as f64 * 4e6 / 2e9, total as f64 * 4e6 / 2e9 * 1.01);
    assert!((lo..=hi).contains(&share), "share {share:.3} outside [{lo:.3}, {hi:.3}] for {} hits", t.hits);
    // The work was measurable at all: a machine that lets an RTHIGH thread alone meet fewer than half
    // of its periods is broken, not noisy.
    assert!(t.hits * 2 >= total, "met only {} of {total} periods", t.hits);
    let out = render(&r, Format::Text);
    assert!(out.contains(&format!("thread 0: missed {} deadlines, hit {}", t.misses, t.hits)));
}

#[test]
fn hard_reservation_receives_about_its_budget() {
    if !root() {
        eprintln!("skipped: needs root");
        return;
    }
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let r = run(&cfg("-n 1 -d 1s -t 0 -w CPU -rh 2ms 10ms")).unwrap();
    // 2 ms every 10 ms for 1 s = 200 ms; interrupts charged to the budget may take a little.
    let ratio = r.threads[0].cpu_ns as f64 / 200e6;
    assert!((0.85..=1.03).contains(&ratio), "received {ratio:.3} of the budget");
}

#[test]
fn latency_thread_prints_latlate_lines() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let r = run(&cfg("-n 1 -d 300ms -t 0 -w LAT 2ms -i HR")).unwrap();
    let t = &r.threads[0];
    // Resynchronised to each wake-up: the next timer is set 2 ms after the thread woke, so two
    // wake-ups are exactly 2 ms plus the second one's lateness apart, and 300 ms hold at most 150.
    let n = t.latencies_ns.len();
    assert!((1..=150).contains(&n), "{n} wake-ups");
    assert_eq!(t.wake_at_ns.len(), n);
    for k in 1..n {
        assert_eq!(t.wake_at_ns[k] - t.wake_at_ns[k - 1], 2_000_000 + t.latencies_ns[k], "wake-up {k}");
    }
    assert!(t.wake_at_ns[n - 1] <= 300_000_000 + t.latencies_ns[n - 1]);
    let out = render(&r, Format::Paper);
    assert_eq!(out.lines().filter(|l| l.starts_with("latlate: ")).count(), t.latencies_ns.len());
    assert!(r.intervals.is_empty(), "LAT threads record no execution trace");
}

#[test]
fn json_and_perfetto_outputs_parse_and_agree() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = cfg(
        "-n 3 -d 500ms -t 0 -w CPU_PERIODIC 3ms 4ms -t 1 -w CPU -t 2 -w LAT 5ms -i HR --hist --intervals",
    );
    c.format = Format::Json;
    let r = run(&c).unwrap();
    let text = render(&r, Format::Json);
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON output parses");
    assert_eq!(v["tool"], "hourglass");
    assert_eq!(v["duration_ns"], 500_000_000u64);
    let tasks = v["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 3);
    assert!(tasks[2]["latency_ns"]["p50"].is_u64(), "a LAT thread has wake-up latencies");
    for t in &tasks[..2] {
        assert!(t["name"].is_string());
        assert!(t["cpu_ns"].as_u64().unwrap() > 0);
        assert!(t["cpu_share"].as_f64().unwrap() > 0.0);
    }
    let d = &tasks[0]["deadlines"];
    assert_eq!(
        d["met"].as_u64().unwrap() + d["missed"].as_u64().unwrap(),
        r.threads[0].hits + r.threads[0].misses
    );
    assert!(tasks[1]["deadlines"].is_null(), "a CPU thread has no deadlines");
    assert_eq!(v["trace"].as_array().unwrap().len(), r.intervals.len());

    let mut json = Vec::new();
    to_perfetto(&r).write(&mut json).unwrap();
    let p: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let ev = p["traceEvents"].as_array().unwrap();
    let complete: Vec<_> = ev.iter().filter(|e| e["ph"] == "X").collect();
    // Each interval on its thread's track and on its CPU's.
    assert_eq!(complete.len(), 2 * r.intervals.len());
    assert!(complete.iter().all(|e| e["dur"].as_f64().unwrap() >= 0.0 && e["ts"].is_number()));
    let counters = ev.iter().filter(|e| e["ph"] == "C").count();
    assert!(counters > 0);
    assert_eq!(counters, r.threads.iter().map(|t| t.latencies_ns.len()).sum::<usize>());
    let misses = ev.iter().filter(|e| e["ph"] == "i").count() as u64;
    assert_eq!(misses, r.threads.iter().map(|t| t.misses).sum::<u64>());
    assert_eq!(to_json(&r)["tasks"][0]["name"], "thread 0");
}

#[test]
fn watchdog_ends_a_run_that_starves_normal_tasks() {
    if !root() || hourglass::sys::allowed_cpus().len() < 2 {
        eprintln!("skipped: needs root and 2 CPUs");
        return;
    }
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // A never-blocking RTHIGH thread on one CPU; RT throttling leaves normal tasks 5 %, in bursts
    // far apart compared with a 100 ms starvation limit, so the watchdog must end the run.
    let r = run(&cfg("-n 1 -d 2s -t 0 -p RTHIGH -w CPU --starve-limit 100ms")).unwrap();
    let w = r.watchdog.as_deref().expect("the watchdog fired");
    assert!(w.contains("did not run"), "{w}");
    assert!(r.threads[0].cpu_ns < 1_900_000_000, "the run was ended early");
}

#[test]
fn bad_options_give_a_usage_error_naming_the_option() {
    let bin = env!("CARGO_BIN_EXE_hourglass");
    for (args, opt) in [
        (vec!["-n", "1", "-t", "0", "-p", "BOGUS"], "-p"),
        (vec!["-n", "1", "-d", "10"], "-d"),
        (vec!["-d", "1s"], "-n"),
        (vec!["-n", "1", "-t", "0", "-w", "PERIODIC", "9ms", "5ms"], "-w"),
        // --trace takes the trace file to write (the JSON's intervals are --intervals).
        (vec!["-n", "1", "--trace", "--format", "json"], "--trace"),
        (vec!["-n", "1", "--trace"], "--trace"),
    ] {
        let out = std::process::Command::new(bin).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("hourglass: {opt}:")), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
    let out = std::process::Command::new(bin).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("-rh <amount> <period>"));
}

#[test]
fn paper_trace_lines_have_five_columns_and_the_gap_is_start_minus_previous_end() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let r = run(&cfg("-n 2 -d 200ms -a -w CPU -c")).unwrap();
    let out = render(&r, Format::Paper);
    let rows: Vec<Vec<f64>> = out
        .lines()
        .filter(|l| !l.starts_with('#') && !l.contains(':'))
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), r.intervals.len());
    assert!(rows.iter().all(|c| c.len() == 5));
    for w in rows.windows(2) {
        // duration = end - start; gap = start - previous end, or 0 when the two overlap (ms, 6
        // decimals). Intervals of the two threads overlapped once in a workspace run (cause not
        // established); the output says 0 then, as the code intends.
        assert!((w[1][3] - (w[1][2] - w[1][1])).abs() < 2e-6);
        assert!((w[1][4] - (w[1][1] - w[0][2]).max(0.0)).abs() < 2e-6, "{:?} then {:?}", w[0], w[1]);
    }
    // -c adds one raw line per record, in cycles.
    assert_eq!(out.lines().filter(|l| l.starts_with("cycles: ")).count(), r.records.len());
}

#[test]
fn a_scenario_runs_as_real_threads_and_prints_the_contract_json() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let src = r#"
[machine]
duration = "400ms"
timer = "hr"
[scheduler]
policy = "cfs"
[[task]]
name = "R1"
model = "periodic"
exec = "1ms"
period = "10ms"
count = 20
[[task]]
name = "batch"
model = "cpu"
work = "20ms"
"#;
    let mut c = hourglass::scenario::load_str(src, "t.toml", RunConfig::new(0), false).unwrap();
    c.format = Format::Json;
    let r = run(&c).unwrap();
    let v: serde_json::Value = serde_json::from_str(&render(&r, Format::Json)).unwrap();
    assert_eq!(v["scenario"], "t");
    assert_eq!(v["source"], "t.toml");
    assert_eq!(v["policy"], "linux-fair");
    let t = &v["tasks"][0];
    assert_eq!(t["name"], "R1");
    // count = 20 jobs: exactly 20 are judged, then the task ends.
    assert_eq!(t["deadlines"]["met"].as_u64().unwrap() + t["deadlines"]["missed"].as_u64().unwrap(), 20);
    assert!(t["finish_ns"].as_u64().is_some());
    // A finite cpu task with 20 ms of work on a CPU it mostly has finishes, at >= 20 ms.
    let b = &v["tasks"][1];
    let f = b["finish_ns"].as_u64().expect("batch finished its 20 ms of work");
    assert!(f >= 20_000_000);
    assert!((b["cpu_ns"].as_u64().unwrap() as i64 - 20_000_000).abs() < 1_000_000);
}

#[test]
fn yielding_threads_show_voluntary_switches_in_the_ctx_analysis() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = cfg("-n 2 -d 300ms -a -w CPU_YIELD 1ms --intervals");
    c.format = Format::Json;
    let r = run(&c).unwrap();
    let t = hourglass::analyze::parse_trace(&render(&r, Format::Json), "run.json").unwrap();
    assert!(t.reasons_known);
    let (vol, _inv, unk, _same) = hourglass::analyze::ctx_gaps(&t);
    assert!(unk.is_empty());
    // Every voluntary switch follows a yield, so there are no more of them than yields.
    let yields: u64 = r.threads.iter().map(|t| t.yields).sum();
    assert!(yields > 0);
    assert!(!vol.is_empty() && vol.len() as u64 <= yields, "{} voluntary, {yields} yields", vol.len());
}
