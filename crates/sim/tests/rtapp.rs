//! `smartsim import rt-app`: rt-app files written for these tests after the kinds rt-app ships
//! (tests/rtapp/*.json) are converted, the scenarios run, and the tasks, periods, execs, classes and
//! priorities checked; the files of tests/rtapp/refused/ are refused naming the JSON path.

use std::path::PathBuf;

use smartsim::rtapp::{convert, convert_file, Options, Where, MAX_TASKS};
use workload::{Exec, Model, OnMiss, Scenario};

const MS: u64 = 1_000_000;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/rtapp")
}

fn import_with(name: &str, opts: &Options) -> Scenario {
    let toml = convert_file(&dir().join(name), opts).unwrap_or_else(|e| panic!("{e}"));
    workload::parse_str(&toml, name).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

fn import(name: &str) -> Scenario {
    import_with(name, &Options::default())
}

fn periodic(scn: &Scenario, name: &str) -> workload::Periodic {
    match &scn.task(name).unwrap_or_else(|| panic!("no task {name}")).model {
        Model::Periodic(p) => p.clone(),
        m => panic!("{name}: {m:?}"),
    }
}

fn cpu(r: &smartsim::SimResult, name: &str) -> u64 {
    r.task(name).unwrap_or_else(|| panic!("no task {name} in the result")).cpu_ns
}

fn requests(r: &smartsim::SimResult, name: &str) -> (u64, u64) {
    let d = r.task(name).unwrap().deadlines.as_ref().unwrap();
    (d.requests, d.met)
}

#[test]
fn run_and_timer_is_a_periodic_task_and_global_duration_the_machines() {
    let scn = import("periodic.json");
    assert_eq!(scn.machine.duration, 2000 * MS);
    assert_eq!(scn.machine.cpus, 1);
    assert_eq!(scn.scheduler.policy, "stack");
    assert_eq!(scn.tasks.len(), 1);
    let p = periodic(&scn, "ticker");
    assert_eq!(p.exec, Exec::Fixed(10 * MS));
    assert_eq!(p.period, 100 * MS);
    assert_eq!(p.count, None);
    assert_eq!(p.on_miss, OnMiss::Finish);
    let t = scn.task("ticker").unwrap();
    assert_eq!((t.class.as_deref(), t.nice, t.start), (Some("fair"), Some(0), 0));
    // The host-only keys are named in the scenario, not simulated.
    let toml = convert_file(&dir().join("periodic.json"), &Options::default()).unwrap();
    assert!(toml.contains(
        "# Not simulated (they concern rt-app's host): global calibration, logdir, log_basename, gnuplot."
    ));

    let r = smartsim::run_scenario(&scn, None).unwrap();
    assert_eq!(requests(&r, "ticker"), (20, 20));
    assert_eq!(cpu(&r, "ticker"), 200 * MS);
}

#[test]
fn run_and_sleep_is_an_interactive_task() {
    let scn = import("run-sleep.json");
    assert_eq!(scn.machine.duration, 1000 * MS);
    match &scn.task("burst").unwrap().model {
        Model::Interactive { think, burst, count } => {
            assert_eq!((*think, *burst, *count), (Exec::Fixed(80 * MS), Exec::Fixed(20 * MS), None));
        }
        m => panic!("{m:?}"),
    }
    // sleep0 + sleep1 are one think, runtime a burst, loop 10 the count.
    match &scn.task("reader").unwrap().model {
        Model::Interactive { think, burst, count } => {
            assert_eq!((*think, *burst, *count), (Exec::Fixed(50 * MS), Exec::Fixed(5 * MS), Some(10)));
        }
        m => panic!("{m:?}"),
    }
    let r = smartsim::run_scenario(&scn, None).unwrap();
    // Ten bursts of 5 ms, all within the first 600 ms.
    assert_eq!(cpu(&r, "reader"), 50 * MS);
    // Ten cycles of 80 ms asleep and 20 ms running fit in 1 s; the reader's bursts may delay the last.
    let b = cpu(&r, "burst");
    assert!((180 * MS..=200 * MS).contains(&b), "burst ran {b} ns");
}

#[test]
fn instances_are_tasks_name_0_to_n_and_delay_and_a_leading_timer_are_the_start() {
    let scn = import("instances.json");
    let names: Vec<&str> = scn.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["worker-0", "worker-1", "worker-2", "housekeeper"]);
    for w in &names[..3] {
        let p = periodic(&scn, w);
        assert_eq!((p.exec, p.period), (Exec::Fixed(2 * MS), 20 * MS));
    }
    let h = periodic(&scn, "housekeeper");
    assert_eq!((h.exec, h.period), (Exec::Fixed(MS), 50 * MS));
    // delay 100 ms, then the timer's first period before the first run.
    assert_eq!(scn.task("housekeeper").unwrap().start, 150 * MS);

    let r = smartsim::run_scenario(&scn, None).unwrap();
    for w in &names[..3] {
        assert_eq!(requests(&r, w).0, 50);
        assert_eq!(cpu(&r, w), 100 * MS);
    }
    // Releases at 150, 200, ..., 950 ms.
    assert_eq!(requests(&r, "housekeeper").0, 17);
    assert_eq!(cpu(&r, "housekeeper"), 17 * MS);
}

#[test]
fn sched_deadline_is_the_deadline_class_with_its_reservation() {
    let scn = import("deadline.json");
    let t = scn.task("control").unwrap();
    assert_eq!(t.class.as_deref(), Some("deadline"));
    let res = t.reservation.unwrap();
    assert_eq!((res.runtime, res.deadline, res.period), (3 * MS, 8 * MS, 10 * MS));
    let p = periodic(&scn, "control");
    assert_eq!((p.exec, p.period), (Exec::Fixed(2 * MS), 10 * MS));
    // A run alone, looping forever, is a CPU hog.
    assert_eq!(scn.task("hog").unwrap().model, Model::Cpu { work: None });

    let r = smartsim::run_scenario(&scn, None).unwrap();
    assert_eq!(requests(&r, "control"), (100, 100));
    assert_eq!(cpu(&r, "control"), 200 * MS);
    assert_eq!(cpu(&r, "hog"), 800 * MS);
}

#[test]
fn fifo_and_rr_priorities_and_affinity() {
    let opts = Options { cpus: 2, duration_ns: None };
    let scn = import_with("fifo.json", &opts);
    assert_eq!(scn.machine.cpus, 2);
    let class = |n: &str| {
        let t = scn.task(n).unwrap();
        (t.class.clone().unwrap(), t.priority, t.cpus.clone())
    };
    assert_eq!(class("high"), ("fifo".to_string(), 80, Some(vec![1])));
    assert_eq!(class("low"), ("fifo".to_string(), 20, None));
    // global.default_policy SCHED_RR, rt-app's default real-time priority 10.
    assert_eq!(class("round"), ("rr".to_string(), 10, None));

    let r = smartsim::run_scenario(&scn, None).unwrap();
    assert_eq!(cpu(&r, "high"), 200 * MS);
    assert_eq!(cpu(&r, "low"), 400 * MS);
    // Releases at 0, 30, ..., 990 ms: 34 runs of 3 ms.
    assert_eq!(cpu(&r, "round"), 102 * MS);
    assert_eq!(requests(&r, "high"), (200, 200));
}

#[test]
fn a_sched_other_priority_is_the_nice_level() {
    let scn = import("nice.json");
    assert_eq!(scn.task("favoured").unwrap().nice, Some(-5));
    assert_eq!(scn.task("meek").unwrap().nice, Some(5));
    // loop 5 × run 10 ms: a job of 50 ms.
    assert_eq!(scn.task("short").unwrap().model, Model::Cpu { work: Some(50 * MS) });

    let r = smartsim::run_scenario(&scn, None).unwrap();
    assert_eq!(cpu(&r, "short"), 50 * MS);
    let (f, m) = (cpu(&r, "favoured") as f64, cpu(&r, "meek") as f64);
    assert_eq!(f as u64 + m as u64 + 50 * MS, 2000 * MS);
    // Linux's weights: nice -5 = 3121, nice 5 = 335.
    let ratio = f / m;
    assert!((ratio / (3121.0 / 335.0) - 1.0).abs() < 0.05, "favoured / meek = {ratio}");
}

#[test]
fn phases_on_one_timer_are_a_task_per_phase_and_loop() {
    let scn = import("phases.json");
    let got: Vec<(&str, u64, Exec, u64, Option<u64>)> = scn
        .tasks
        .iter()
        .map(|t| match &t.model {
            Model::Periodic(p) => (t.name.as_str(), t.start, p.exec, p.period, p.count),
            m => panic!("{m:?}"),
        })
        .collect();
    let light = Exec::Fixed(MS);
    let heavy = Exec::Fixed(4 * MS);
    assert_eq!(
        got,
        [
            ("player.light.0", 0, light, 30 * MS, Some(10)),
            ("player.heavy.0", 300 * MS, heavy, 30 * MS, Some(10)),
            ("player.light.1", 600 * MS, light, 30 * MS, Some(10)),
            ("player.heavy.1", 900 * MS, heavy, 30 * MS, Some(10)),
        ]
    );
    let r = smartsim::run_scenario(&scn, None).unwrap();
    for (name, c) in
        [("player.light.0", 10), ("player.heavy.0", 40), ("player.light.1", 10), ("player.heavy.1", 40)]
    {
        assert_eq!(requests(&r, name), (10, 10), "{name}");
        assert_eq!(cpu(&r, name), c * MS, "{name}");
    }
}

#[test]
fn what_does_not_map_is_refused_naming_its_json_path() {
    let cases: &[(&str, &str, &str)] = &[
        ("lock.json", "tasks.thread0.phases.p1.lock", "rt-app's \"lock\" event has no smartsim equivalent"),
        ("suspend.json", "tasks.waiter.suspend", "rt-app's \"suspend\" event has no smartsim equivalent"),
        ("barrier.json", "tasks.t0.barrier1", "rt-app's \"barrier\" event"),
        ("fork.json", "tasks.parent.fork", "rt-app's \"fork\" event"),
        ("mem.json", "tasks.t.phases.p.mem", "no memory or I/O"),
        ("batch.json", "tasks.batchjob.policy", "SCHED_BATCH has no smartsim class"),
        ("custom-slice.json", "tasks.thread0.dl-runtime", "custom slice"),
        ("shared-timer.json", "tasks.pair.timer", "shared by several threads"),
        ("phase-priority.json", "tasks.t.phases.p1.priority", "between phases"),
        ("two-bursts.json", "tasks.t", "the events run, sleep, run, sleep have no smartsim model"),
        ("sleep-phase.json", "tasks.t.phases.idle", "no run, only sleep: nothing here would be simulated"),
        ("util.json", "tasks.t.util_min", "clamping"),
        ("no-duration.json", "global.duration", "--duration"),
    ];
    for (file, path, msg) in cases {
        let e = convert_file(&dir().join("refused").join(file), &Options::default())
            .expect_err(&format!("{file} converted"));
        assert_eq!(e.at, Where::Path(path.to_string()), "{file}: {e}");
        assert!(e.message.contains(msg), "{file}: {e}");
        assert!(e
            .to_string()
            .starts_with(&format!("{}: {path}: ", dir().join("refused").join(file).display())));
    }
}

#[test]
fn an_event_given_twice_runs_in_its_place_and_another_key_twice_is_refused() {
    let scn = import("workgen.json");
    let p = periodic(&scn, "decoder");
    assert_eq!((p.exec, p.period), (Exec::Fixed(3 * MS), 10 * MS));
    let r = smartsim::run_scenario(&scn, None).unwrap();
    assert_eq!(cpu(&r, "decoder"), 300 * MS);

    let e = convert_file(&dir().join("refused/duplicate.json"), &Options::default()).unwrap_err();
    assert_eq!(e.at, Where::Path("tasks.t.instance".into()), "{e}");
    assert!(e.message.contains("given twice"), "{e}");
    let two = r#"{"tasks": {"a": {"run": 1}, "a": {"run": 2}}, "global": {"duration": 1}}"#;
    let e = convert(two, "x.json", &Options::default()).unwrap_err();
    assert_eq!(e.at, Where::Path("tasks.a".into()), "{e}");
}

#[test]
fn bad_json_names_the_line_and_column() {
    let e = convert(
        "{\n \"tasks\": {\n  \"t\": { \"run\": 10 \"sleep\": 5 }\n }\n}",
        "x.json",
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.at, Where::Position { line: 3, column: 20 }, "{e}");
    assert!(e.to_string().starts_with("x.json:3:20: JSON: expected"), "{e}");
    let e = convert("{ /* open", "x.json", &Options::default()).unwrap_err();
    assert_eq!(e.at, Where::Position { line: 1, column: 3 });
    // rt-app's workgen fills in a value left out ("suspend",); rt-app itself, and smartsim, do not.
    let e = convert("{\"tasks\": {\"t\": {\"suspend\", \"run\": 1}}}", "x.json", &Options::default())
        .unwrap_err();
    assert_eq!(e.at, Where::Position { line: 1, column: 27 }, "{e}");
    // No path to name: the file itself.
    let e = convert("{}", "x.json", &Options::default()).unwrap_err();
    assert_eq!(e.to_string(), "x.json: no \"tasks\" object: rt-app needs one");
}

#[test]
fn duration_from_the_command_line_and_limits() {
    let d = Options { cpus: 1, duration_ns: Some(500 * MS) };
    let scn = import_with("refused/no-duration.json", &d);
    assert_eq!(scn.machine.duration, 500 * MS);
    let big = format!(
        "{{\"tasks\": {{\"t\": {{\"instance\": {}, \"run\": 1, \"sleep\": 1}}}}, \"global\": {{\"duration\": 1}}}}",
        MAX_TASKS + 1
    );
    let e = convert(&big, "x.json", &Options::default()).unwrap_err();
    assert_eq!(e.at, Where::Path("tasks.t.instance".into()), "{e}");
    let neg = r#"{"tasks": {"t": {"run": -5, "sleep": 1}}, "global": {"duration": 1}}"#;
    let e = convert(neg, "x.json", &Options::default()).unwrap_err();
    assert_eq!(e.at, Where::Path("tasks.t.run".into()), "{e}");
    assert!(e.message.contains("negative"), "{e}");
    let cpu = r#"{"tasks": {"t": {"run": 5, "cpus": [3]}}, "global": {"duration": 1}}"#;
    let e = convert(cpu, "x.json", &Options::default()).unwrap_err();
    assert_eq!(e.at, Where::Path("tasks.t.cpus.0".into()), "{e}");
    assert!(e.message.contains("--cpus 4"), "{e}");
}

#[test]
fn the_command_writes_the_scenario_on_stdout() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_smartsim"))
        .args(["import", "rt-app"])
        .arg(dir().join("periodic.json"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let scn = workload::parse_str(&text, "stdout.toml").unwrap();
    assert_eq!(periodic(&scn, "ticker").period, 100 * MS);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_smartsim"))
        .args(["import", "rt-app"])
        .arg(dir().join("refused/lock.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("tasks.thread0.phases.p1.lock: rt-app's \"lock\" event"));
}

#[test]
fn phases_of_a_thread_looping_forever_repeat_until_the_end_of_the_run() {
    // One loop of the phases lasts 5 × 20 ms + 5 × 40 ms = 300 ms; the run lasts 1 s, the thread
    // starts at 50 ms: phases start at 50, 150, 350, 450, 650, 750 and 950 ms.
    let src = r#"{ "tasks": { "t": { "delay": 50000, "phases": {
        "a": { "loop": 5, "run": 1000, "timer": { "ref": "unique", "period": 20000 } },
        "b": { "loop": 5, "run": 2000, "timer": { "ref": "unique", "period": 40000 } } } } },
        "global": { "duration": 1 } }"#;
    let toml = convert(src, "loop.json", &Options::default()).unwrap();
    let scn = workload::parse_str(&toml, "loop.toml").unwrap();
    let got: Vec<(&str, u64)> = scn.tasks.iter().map(|t| (t.name.as_str(), t.start / MS)).collect();
    assert_eq!(
        got,
        [
            ("t.a.0", 50),
            ("t.b.0", 150),
            ("t.a.1", 350),
            ("t.b.1", 450),
            ("t.a.2", 650),
            ("t.b.2", 750),
            ("t.a.3", 950)
        ]
    );
    let r = smartsim::run_scenario(&scn, None).unwrap();
    // The last phase has time for 3 of its 5 periods (950, 970, 990 ms).
    assert_eq!(requests(&r, "t.a.3"), (3, 3));
    assert_eq!(cpu(&r, "t.b.2"), 10 * MS);
}
