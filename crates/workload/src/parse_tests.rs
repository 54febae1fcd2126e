//! Tests of the scenario parser: whole scenarios, defaults, and every class of error with its
//! exact position and field.

use std::collections::BTreeMap;

use crate::{
    load, parse_str, Billing, Estimate, Exec, Machine, Model, Notify, OnMiss, Overheads, Periodic, Scenario,
    SchedulerCfg, TaskSpec, TimerKind,
};

const MS: u64 = 1_000_000;
const US: u64 = 1_000;
const S: u64 = 1_000_000_000;

/// The report for `src`, one line per diagnostic.
fn errors(src: &str) -> Vec<String> {
    match parse_str(src, "t.toml") {
        Ok(s) => panic!("expected errors, got {s:#?}"),
        Err(e) => e.to_string().lines().map(str::to_string).collect(),
    }
}

/// The single error of `src`.
fn error(src: &str) -> String {
    let e = errors(src);
    assert_eq!(e.len(), 1, "expected one error, got {e:#?}");
    e.into_iter().next().unwrap()
}

/// A valid scenario with `extra` inserted into its only task (a cpu task unless `extra` sets the
/// model) and `machine` into `[machine]`.
fn with(machine: &str, task: &str) -> String {
    let model = if task.contains("model") { "" } else { "model = \"cpu\"\n" };
    format!("[machine]\nduration = \"10s\"\n{machine}\n\n[[task]]\nname = \"T\"\n{model}{task}\n")
}

fn ok(src: &str) -> Scenario {
    parse_str(src, "t.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn default_task(name: &str, line: usize, model: Model) -> TaskSpec {
    TaskSpec { line, ..TaskSpec::new(name, model) }
}

fn default_periodic(exec: Exec, period: u64) -> Periodic {
    Periodic::new(exec, period)
}

#[test]
fn mix_example_parses_to_the_expected_structure() {
    let s = load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mix.toml"))).unwrap();
    assert_eq!(s.name, "mix");
    assert!(s.path.ends_with("examples/mix.toml"));
    let r2 = Periodic {
        on_miss: OnMiss::Finish,
        on_miss_line: Some(29),
        ..default_periodic(Exec::Uniform(10 * MS, 14 * MS), 50 * MS)
    };
    let r1 =
        Periodic { on_miss_line: Some(21), ..default_periodic(Exec::Uniform(28 * MS, 30 * MS), 40 * MS) };
    let expected = Scenario {
        path: s.path.clone(),
        name: "mix".into(),
        description: None,
        machine: Machine {
            cpus: 1,
            hz: 1000,
            billing: Billing::Exact,
            timer: TimerKind::Hr,
            duration: 60 * S,
            seed: 1,
            overhead: Overheads::default(),
            sample: None,
            key_lines: s.machine.key_lines.clone(),
        },
        scheduler: SchedulerCfg {
            policy: "smart".into(),
            options: BTreeMap::new(),
            key_lines: BTreeMap::from([("policy".to_string(), 13)]),
            line: 12,
        },
        tasks: vec![
            default_task("R1", 15, Model::Periodic(r1)),
            TaskSpec { priority: 1, ..default_task("R2", 23, Model::Periodic(r2)) },
            default_task("batch", 31, Model::Cpu { work: None }),
        ],
        warnings: vec![],
    };
    assert_eq!(s, expected);
}

#[test]
fn every_key_example_sets_every_field() {
    let s = ok(include_str!("../examples/every-key.toml"));
    assert_eq!(s.description.as_deref(), Some("two periodic tasks against a batch job"));
    assert_eq!(
        s.machine,
        Machine {
            cpus: 2,
            hz: 1000,
            billing: Billing::Exact,
            timer: TimerKind::Hr,
            duration: 10 * S,
            seed: 1,
            overhead: Overheads {
                tick: 2 * US,
                switch: 3 * US,
                decision: US,
                cache_bytes: 512 * 1024,
                bandwidth: 1_000_000_000,
                migration: 5 * US,
                tick_cache: 8 * 1024,
            },
            sample: Some(10 * MS),
            key_lines: s.machine.key_lines.clone(),
        }
    );
    // Each key's line, for the tools' messages about it.
    let lines: Vec<(&str, usize)> = s.machine.key_lines.iter().map(|(k, &l)| (k.as_str(), l)).collect();
    assert_eq!(
        lines,
        [
            ("billing", 7),
            ("cpus", 10),
            ("duration", 5),
            ("hz", 6),
            ("overhead", 13),
            ("sample", 11),
            ("seed", 9),
            ("timer", 8)
        ]
    );
    assert_eq!(s.scheduler.policy, "smart");
    assert_eq!(s.scheduler.options.get("partition"), Some(&toml::Value::String("global".into())));
    assert_eq!(s.tasks.len(), 7);
    assert_eq!(s.tasks[3].model, Model::Server);
    let typing = &s.tasks[4];
    assert_eq!(
        (typing.app.as_deref(), typing.bands.as_slice()),
        (Some("Editor"), [50 * MS, 150 * MS].as_slice())
    );
    assert_eq!(typing.send.as_ref().map(|c| (c.to_index, c.wait)), Some((3, false)));
    let Model::Periodic(p) = &typing.model else { panic!() };
    assert_eq!(p.interarrival, Some(Exec::Exponential { mean: 228 * MS }));
    assert_eq!(p.input_delay, Some(Exec::Normal { mean: 23 * MS, sd: 4 * MS }));
    assert_eq!(
        s.tasks[6].model,
        Model::Player(crate::Player {
            exec: Exec::Ar1 { mean: 28_350_000, sd: 2_190_000, rho_ppm: 800_000 },
            period: 66_700_000,
            interarrival: None,
            count: Some(4000),
            window: 20 * MS,
            delay: 100 * MS,
            pace: true,
            discard: crate::Discard::Notified,
            ring: Some(3),
            adapt: crate::Adapt::Availability,
            estimate: Estimate::Ewma { alpha: 0.5, factor: 1.1, initial: Some(30 * MS) },
        })
    );
    assert_eq!(
        s.tasks[5].model,
        Model::ForkWait {
            fork: Exec::Fixed(20 * MS),
            child: Exec::Normal { mean: 129 * MS, sd: 6 * MS },
            children: 1,
            count: Some(1000),
        }
    );
    assert_eq!(
        s.tasks[0],
        TaskSpec {
            priority: 1,
            timer: Some(TimerKind::Tick),
            jitter: Some(500 * US),
            cpus: Some(vec![0, 1]),
            ..default_task(
                "audio",
                s.tasks[0].line,
                Model::Periodic(Periodic {
                    exec: Exec::Uniform(2 * MS, 3 * MS),
                    period: 10 * MS,
                    interarrival: None,
                    input_delay: None,
                    deadline: 8 * MS,
                    count: Some(500),
                    on_miss: OnMiss::Discard,
                    on_miss_line: Some(34),
                    estimate: Estimate::Ewma { alpha: 0.5, factor: 1.1, initial: None },
                    notify: Notify::Asap,
                    time_constraint: true,
                    busy_wait: 2_000_000,
                })
            )
        }
    );
    assert_eq!(
        s.tasks[1],
        TaskSpec {
            start: S,
            stop: Some(9 * S),
            working_set: 256 * 1024,
            nice: Some(5),
            reservation: Some(sched::Reservation { runtime: 2 * MS, deadline: 8 * MS, period: 10 * MS }),
            ..default_task("batch", s.tasks[1].line, Model::Cpu { work: Some(4 * S) })
        }
    );
    assert_eq!(
        s.tasks[2],
        TaskSpec {
            latency_tolerance: Some(50 * MS),
            class: Some("smart".into()),
            ..default_task(
                "editor",
                s.tasks[2].line,
                Model::Interactive {
                    think: Exec::Exponential { mean: 500 * MS },
                    burst: Exec::Uniform(MS, 5 * MS),
                    count: None
                }
            )
        }
    );
    // The task's line is its [[task]] header.
    let src = include_str!("../examples/every-key.toml");
    for t in &s.tasks {
        assert_eq!(src.lines().nth(t.line - 1), Some("[[task]]"), "{}", t.name);
    }
}

#[test]
fn defaults_fill_a_minimal_scenario() {
    let s = ok("[machine]\nduration = \"1s\"\n[[task]]\nname = \"a\"\nmodel = \"cpu\"\n");
    assert_eq!(s.machine.hz, 1000);
    assert_eq!(s.machine.billing, Billing::Exact);
    assert_eq!(s.machine.timer, TimerKind::Hr);
    assert_eq!(s.machine.seed, 1);
    assert_eq!(s.machine.cpus, 1);
    assert_eq!(s.machine.sample, None);
    assert_eq!(s.machine.overhead, Overheads::default());
    assert_eq!(s.scheduler.policy, "smart");
    assert_eq!(s.scheduler.line, 1);
    assert!(s.scheduler.options.is_empty());
    assert_eq!(s.tasks, vec![default_task("a", 3, Model::Cpu { work: None })]);
    assert_eq!(s.name, "t");
}

#[test]
fn alternative_spellings_of_values() {
    let s = ok(&with(
        "hz = 0\ntimer = \"rtc:8192\"\nseed = 0xff\n[machine.overhead]\ncache = 4096\nbandwidth = 1000000",
        "model = \"periodic\"\nexec = \"5ms\"\nperiod = \"20ms\"\nestimate = \"exact\"\nnotify = \"deadline\"\nworking_set = 100",
    ));
    assert_eq!(s.machine.hz, 0);
    assert_eq!(s.machine.timer, TimerKind::Rtc(8192));
    assert_eq!(s.machine.seed, 255);
    assert_eq!(s.machine.overhead.cache_bytes, 4096);
    assert_eq!(s.machine.overhead.bandwidth, 1_000_000);
    assert_eq!(s.tasks[0].working_set, 100);
    let Model::Periodic(p) = &s.tasks[0].model else { panic!() };
    assert_eq!(p.exec, Exec::Fixed(5 * MS));
    assert_eq!(p.estimate, Estimate::Exact);
    assert_eq!(p.notify, Notify::AtDeadline);

    let s = ok(&with(
        "",
        "model = \"periodic\"\nexec = \"normal(5ms, 1ms)\"\nperiod = \"20ms\"\nestimate = \"6ms\"\nnotify = \"15ms\"\ncount = 3\non_miss = \"finish\"",
    ));
    let Model::Periodic(p) = &s.tasks[0].model else { panic!() };
    assert_eq!(
        (p.estimate, p.notify, p.count, p.on_miss),
        (Estimate::Fixed(6 * MS), Notify::After(15 * MS), Some(3), OnMiss::Finish)
    );

    let s = ok(&with(
        "",
        "model = \"periodic\"\nexec = \"5ms\"\nperiod = \"20ms\"\nestimate_alpha = 1\nestimate_factor = 1.25\nestimate_initial = \"7ms\"\nnotify = \"never\"",
    ));
    let Model::Periodic(p) = &s.tasks[0].model else { panic!() };
    assert_eq!(p.estimate, Estimate::Ewma { alpha: 1.0, factor: 1.25, initial: Some(7 * MS) });
    assert_eq!(p.notify, Notify::Never);

    // share 0 beside a task with a share (a legacy zero-share task) and negative priorities are
    // allowed; every share 0 is not (nobody could be given time).
    let s = ok(&format!("{}[[task]]\nname = \"U\"\nmodel = \"cpu\"\n", with("", "share = 0\npriority = -5")));
    assert_eq!((s.tasks[0].share, s.tasks[0].priority), (0, -5));
    let e = error(&with("", "share = 0"));
    assert!(e.starts_with("t.toml:8:9: task[0].share: every task has share = 0"), "{e}");

    // Inline tables and dotted keys are the same TOML.
    let s = ok("machine = { duration = \"1s\", overhead.switch = \"5us\" }\ntask = [{ name = \"a\", model = \"cpu\" }]\n");
    assert_eq!(s.machine.overhead.switch, 5 * US);
}

#[test]
fn scheduler_options_pass_through_with_their_lines() {
    let s = ok("[machine]\nduration = \"1s\"\n\n[scheduler]\npolicy = \"cbs\"\nbudget = \"2ms\"\nlevels = [1, 2]\n\n[[task]]\nname = \"a\"\nmodel = \"cpu\"\n");
    assert_eq!(s.scheduler.policy, "cbs");
    assert_eq!(s.scheduler.line, 4);
    assert_eq!(
        s.scheduler.options,
        BTreeMap::from([
            ("budget".to_string(), toml::Value::String("2ms".into())),
            (
                "levels".to_string(),
                toml::Value::Array(vec![toml::Value::Integer(1), toml::Value::Integer(2)])
            ),
        ])
    );
    assert_eq!(
        s.scheduler.key_lines,
        BTreeMap::from([("policy".to_string(), 5), ("budget".to_string(), 6), ("levels".to_string(), 7)])
    );
}

#[test]
fn invalid_example_reports_every_problem_at_once() {
    let e = parse_str(include_str!("../examples/invalid.toml"), "examples/invalid.toml").unwrap_err();
    let expected = "\
examples/invalid.toml:6:11: machine.billing: unknown value \"ticks\": expected one of \"tick\", \"exact\"; did you mean \"tick\"?
examples/invalid.toml:7:12: machine.duration: \"30\" has no unit: write e.g. \"30ms\" (units: ns, us, ms, s, m = minutes, h)
examples/invalid.toml:8:8: machine.cpus: 0 is out of range: expected an integer in 1..=1024
examples/invalid.toml:16:8: task[0].exec (task \"R1\"): empty range \"30ms..28ms\": the lower bound 30ms is above the upper bound 28ms
examples/invalid.toml:18:1: task[0].deadlin (task \"R1\"): unknown key `deadlin`; did you mean `deadline`?
examples/invalid.toml:21:8: task[1].name (task \"R1\"): duplicate task name \"R1\" (first used at line 14)
examples/invalid.toml:23:1: task[1].period (task \"R1\"): `period` is a key of model \"periodic\" or \"player\" (this task's model is \"cpu\", whose own keys are: work)
examples/invalid.toml:27:9: task[2].model (task \"ui\"): unknown value \"interactiv\": expected one of \"cpu\", \"periodic\", \"interactive\", \"server\", \"player\", \"forkwait\"; did you mean \"interactive\"?
examples/invalid.toml:30:1: task[3].name: missing: every task needs a unique name
examples/invalid.toml:30:1: task[3].think: missing: required by this model, e.g. think = \"exp(500ms)\"
examples/invalid.toml:34:8: task[3].stop: stop 1s must be after start 5s";
    assert_eq!(e.to_string(), expected);
    assert_eq!(e.diagnostics.len(), 11);
    let d = &e.diagnostics[3];
    assert_eq!(
        (d.file.as_str(), d.line, d.col, d.field.as_str()),
        ("examples/invalid.toml", 16, 8, "task[0].exec (task \"R1\")")
    );
}

#[test]
fn missing_machine_and_tasks() {
    assert_eq!(
        errors(""),
        [
            "t.toml:1:1: machine.duration: missing: how long to simulate, e.g. duration = \"60s\"",
            "t.toml:1:1: task: no tasks: add at least one [[task]] with a name and a model",
        ]
    );
    // A missing key points at its table's header.
    assert_eq!(
        error("# c\n[machine]\nhz = 100\n[[task]]\nname = \"a\"\nmodel = \"cpu\"\n"),
        "t.toml:2:1: machine.duration: missing: how long to simulate, e.g. duration = \"60s\""
    );
}

#[test]
fn times_need_units_and_must_be_positive_where_it_matters() {
    assert_eq!(
        error(&with("", "").replace("\"10s\"", "10")),
        "t.toml:2:12: machine.duration: 10 has no unit: times are strings with a unit, e.g. duration = \"10ms\" (units: ns, us, ms, s, m = minutes, h)"
    );
    assert_eq!(
        error(&with("", "").replace("\"10s\"", "1.5")),
        "t.toml:2:12: machine.duration: 1.5 has no unit: times are strings with a unit, e.g. duration = \"1.5ms\" (units: ns, us, ms, s, m = minutes, h)"
    );
    assert_eq!(
        error(&with("", "").replace("\"10s\"", "\"0s\"")),
        "t.toml:2:12: machine.duration: must be > 0"
    );
    assert_eq!(
        error(&with("", "").replace("\"10s\"", "\"10 seconds\"")),
        "t.toml:2:12: machine.duration: unknown time unit \"seconds\" in \"10 seconds\" (units: ns, us, ms, s, m = minutes, h)"
    );
    assert_eq!(
        error(&with("", "").replace("\"10s\"", "true")),
        "t.toml:2:12: machine.duration: expected a time such as \"40ms\", found boolean"
    );
    assert_eq!(error(&with("sample = \"0ms\"", "")), "t.toml:3:10: machine.sample: must be > 0");
}

#[test]
fn periodic_task_errors_name_the_field() {
    let p = "model = \"periodic\"\nexec = \"5ms\"\nperiod = \"20ms\"\n";
    // line 6 = name, 7 = model, 8 = exec, 9 = period, 10 = the extra key
    assert_eq!(
        error(&with("", &format!("{p}deadline = \"0ms\""))),
        "t.toml:10:12: task[0].deadline (task \"T\"): must be > 0"
    );
    assert_eq!(
        error(&with("", &p.replace("\"20ms\"", "\"0s\""))),
        "t.toml:9:10: task[0].period (task \"T\"): must be > 0"
    );
    assert_eq!(
        error(&with("", "model = \"periodic\"\nperiod = \"20ms\"")),
        "t.toml:5:1: task[0].exec (task \"T\"): missing: required by this model, e.g. exec = \"28ms..30ms\""
    );
    assert_eq!(
        error(&with("", &p.replace("\"5ms\"", "5"))),
        "t.toml:8:8: task[0].exec (task \"T\"): 5 has no unit: times are strings with a unit, e.g. exec = \"5ms\" (units: ns, us, ms, s, m = minutes, h)"
    );
    assert_eq!(
        error(&with("", &p.replace("\"5ms\"", "\"0ms\""))),
        "t.toml:8:8: task[0].exec (task \"T\"): must be > 0"
    );
    assert_eq!(
        error(&with("", &format!("{p}count = 0"))),
        "t.toml:10:9: task[0].count (task \"T\"): 0 is out of range: expected an integer >= 1"
    );
    assert_eq!(
        error(&with("", &format!("{p}on_miss = \"drop\""))),
        "t.toml:10:11: task[0].on_miss (task \"T\"): unknown value \"drop\": expected one of \"discard\", \"finish\", \"abort\""
    );
    assert_eq!(
        error(&with("", &format!("{p}jitter = \"20ms\""))),
        "t.toml:10:10: task[0].jitter (task \"T\"): jitter 20ms must be shorter than the period 20ms"
    );
    assert_eq!(
        error(&with("", &format!("{p}notify = \"25ms\""))),
        "t.toml:10:10: task[0].notify (task \"T\"): notify 25ms is after the deadline 20ms: the notice would come too late to act on"
    );
    assert_eq!(
        error(&with("", &format!("{p}notify = \"soon\""))),
        "t.toml:10:10: task[0].notify (task \"T\"): expected \"asap\", \"deadline\", \"never\" or a time after the release: \"soon\" is not a time: write a non-negative decimal number and a unit, e.g. \"1.5s\" or \"87us\""
    );
    assert_eq!(
        error(&with("", &format!("{p}estimate = \"guess\""))),
        "t.toml:10:12: task[0].estimate (task \"T\"): expected \"ewma\", \"exact\" or a time: \"guess\" is not a time: write a non-negative decimal number and a unit, e.g. \"1.5s\" or \"87us\""
    );
    assert_eq!(
        errors(&with(
            "",
            &format!("{p}estimate_alpha = 0\nestimate_factor = -1.0")
        )),
        [
            "t.toml:10:18: task[0].estimate_alpha (task \"T\"): 0 is out of range: the weight of the newest request is in (0, 1]",
            "t.toml:11:19: task[0].estimate_factor (task \"T\"): -1 is out of range: must be > 0 (1.1 = 10% margin)",
        ]
    );
    assert_eq!(
        error(&with("", &format!("{p}estimate = \"exact\"\nestimate_alpha = 0.3"))),
        "t.toml:11:18: task[0].estimate_alpha (task \"T\"): only applies with estimate = \"ewma\""
    );
}

#[test]
fn interactive_task_errors() {
    assert_eq!(
        errors(&with("", "model = \"interactive\"\nexec = \"2ms\"")),
        [
            "t.toml:5:1: task[0].think (task \"T\"): missing: required by this model, e.g. think = \"exp(500ms)\"",
            "t.toml:5:1: task[0].burst (task \"T\"): missing: required by this model, e.g. burst = \"1ms..5ms\"",
            "t.toml:8:1: task[0].exec (task \"T\"): `exec` is a key of model \"periodic\" or \"player\" (this task's model is \"interactive\", whose own keys are: think, burst, count, bands, server, server_exec, wait)",
        ]
    );
    // think may be 0 (a task that is woken again at once), burst may not.
    assert_eq!(
        error(&with("", "model = \"interactive\"\nthink = \"0s\"\nburst = \"0s..0s\"")),
        "t.toml:9:9: task[0].burst (task \"T\"): must be > 0"
    );
}

#[test]
fn common_task_key_errors() {
    assert_eq!(
        error(&with("", "start = \"2s\"\nstop = \"2s\"")),
        "t.toml:9:8: task[0].stop (task \"T\"): stop 2s must be after start 2s"
    );
    assert_eq!(
        error(&with("", "start = \"10s\"")),
        "t.toml:8:9: task[0].start (task \"T\"): start 10s is not before machine.duration 10s: the task would never run"
    );
    assert_eq!(
        error(&with("", "share = -1")),
        "t.toml:8:9: task[0].share (task \"T\"): -1 is out of range: expected an integer >= 0"
    );
    assert_eq!(
        error(&with("", "priority = \"high\"")),
        "t.toml:8:12: task[0].priority (task \"T\"): expected an integer, found string"
    );
    assert_eq!(
        error(&with("", "priority = 3000000000")),
        "t.toml:8:12: task[0].priority (task \"T\"): 3000000000 is out of range: expected an integer in -2147483648..=2147483647"
    );
    assert_eq!(
        error(&with("", "working_set = \"1 kb\"")),
        "t.toml:8:15: task[0].working_set (task \"T\"): unknown size unit \"kb\" in \"1 kb\": write a number and a unit: B, kB, KiB, MB, MiB, GB, GiB, TB, TiB (e.g. \"512KiB\")"
    );
    assert_eq!(
        error(&with("", "timer = \"rtc:1000\"")),
        "t.toml:8:9: task[0].timer (task \"T\"): \"rtc:1000\": the rtc rate must be a power of two from 2 to 8192 Hz, e.g. \"rtc:1024\""
    );
    assert_eq!(
        error(&with("hz = 0", "timer = \"tick\"")),
        "t.toml:8:9: task[0].timer (task \"T\"): timer = \"tick\" needs clock ticks, but machine.hz = 0 (tickless)"
    );
}

#[test]
fn names_must_be_present_unique_and_non_empty() {
    let src = "[machine]\nduration = \"1s\"\n[[task]]\nname = \"\"\nmodel = \"cpu\"\n[[task]]\nname = \"b\"\nmodel = \"cpu\"\n[[task]]\nname = \"b\"\nmodel = \"cpu\"\n[[task]]\nmodel = \"cpu\"\n";
    assert_eq!(
        errors(src),
        [
            "t.toml:4:8: task[0].name: must not be empty",
            "t.toml:10:8: task[2].name (task \"b\"): duplicate task name \"b\" (first used at line 7)",
            "t.toml:12:1: task[3].name: missing: every task needs a unique name",
        ]
    );
}

#[test]
fn model_must_be_known() {
    assert_eq!(
        error("[machine]\nduration = \"1s\"\n[[task]]\nname = \"a\"\n"),
        "t.toml:3:1: task[0].model (task \"a\"): missing: one of \"cpu\", \"periodic\", \"interactive\", \"server\", \"player\", \"forkwait\""
    );
    assert_eq!(
        error("[machine]\nduration = \"1s\"\n[[task]]\nname = \"a\"\nmodel = \"cpu-scan\"\n"),
        "t.toml:5:9: task[0].model (task \"a\"): unknown value \"cpu-scan\": expected one of \"cpu\", \"periodic\", \"interactive\", \"server\", \"player\", \"forkwait\""
    );
}

#[test]
fn unknown_keys_suggest_the_closest_valid_one() {
    assert_eq!(
        error(&with("durration = \"5s\"", "")),
        "t.toml:3:1: machine.durration: unknown key `durration`; did you mean `duration`?"
    );
    assert_eq!(
        error(&with("[machine.overhead]\nswtich = \"1us\"", "")),
        "t.toml:4:1: machine.overhead.swtich: unknown key `swtich`; did you mean `switch`?"
    );
    assert_eq!(
        error(&with("", "priorty = 2")),
        "t.toml:8:1: task[0].priorty (task \"T\"): unknown key `priorty`; did you mean `priority`?"
    );
    assert_eq!(
        error(&with("", "latency = \"5ms\"")),
        "t.toml:8:1: task[0].latency (task \"T\"): unknown key `latency`; did you mean `latency_tolerance`?"
    );
    assert_eq!(
        error(&with("", "colour = \"red\"")),
        "t.toml:8:1: task[0].colour (task \"T\"): unknown key `colour`; valid keys here: name, model, share, priority, latency_tolerance, start, stop, jitter, timer, working_set, cpus, nice, class, runtime, dl_deadline, dl_period, app, work"
    );
    assert_eq!(
        errors(&with("", "").replace("[machine]", "[machin]")),
        [
            "t.toml:1:1: machine.duration: missing: how long to simulate, e.g. duration = \"60s\"",
            "t.toml:1:2: machin: unknown key `machin`; did you mean `machine`?"
        ]
    );
    assert_eq!(
        error("[machine]\nduration = \"1s\"\n[[tasks]]\nname = \"a\"\n"),
        "t.toml:3:3: tasks: unknown key `tasks`; tasks are written [[task]]"
    );
    assert_eq!(
        error("[machine]\nduration = \"1s\"\n[task]\nname = \"a\"\nmodel = \"cpu\"\n"),
        "t.toml:3:1: task: tasks are an array of tables: write [[task]], not [task]"
    );
}

#[test]
fn machine_errors() {
    assert_eq!(
        error(&with("hz = 0\nbilling = \"tick\"", "")),
        "t.toml:4:11: machine.billing: billing = \"tick\" needs clock ticks, but hz = 0 (tickless)"
    );
    assert_eq!(
        error(&with("hz = 0\ntimer = \"tick\"", "")),
        "t.toml:4:9: machine.timer: timer = \"tick\" needs clock ticks, but hz = 0 (tickless)"
    );
    assert_eq!(
        error(&with("timer = \"rtc:4\"\nhz = 2000000", "")),
        "t.toml:4:6: machine.hz: 2000000 is out of range: expected an integer in 0..=1000000"
    );
    assert_eq!(
        error(&with("timer = \"hpet\"", "")),
        "t.toml:3:9: machine.timer: unknown timer \"hpet\": expected \"tick\", \"hr\", \"linux-2.4\" or \"rtc:<Hz>\""
    );
    assert_eq!(
        error(&with("hz = 1000\n[machine.overhead]\ntick = \"1ms\"", "")),
        "t.toml:5:8: machine.overhead.tick: the clock-interrupt handler (1ms) would take the whole tick period (1ms) at hz = 1000"
    );
    assert_eq!(
        error(&with("hz = 0\n[machine.overhead]\ntick = \"1us\"", "")),
        "t.toml:5:8: machine.overhead.tick: a clock-interrupt cost, but hz = 0 (tickless): there are no clock interrupts"
    );
    assert_eq!(
        error(&with("[machine.overhead]\ncache = \"1MiB\"", "")),
        "t.toml:4:9: machine.overhead.bandwidth: missing: a cache refill cost needs a memory bandwidth, e.g. bandwidth = \"1GB/s\""
    );
    assert_eq!(
        error(&with("[machine.overhead]\nbandwidth = \"1GB\"", "")),
        "t.toml:4:13: machine.overhead.bandwidth: \"1GB\" is not a bandwidth: write a size per second, e.g. \"1GB/s\" or \"800MiB/s\""
    );
    assert_eq!(
        error(&with("overhead = 3", "")),
        "t.toml:3:12: machine.overhead: expected a table [overhead], found integer"
    );
    assert_eq!(
        error(&with("seed = -1", "")),
        "t.toml:3:8: machine.seed: -1 is out of range: expected an integer >= 0"
    );
    assert_eq!(
        error(&with("", "").replace("[machine]", "[scheduler]\npolicy = \"\"\n[machine]")),
        "t.toml:2:10: scheduler.policy: must not be empty"
    );
}

#[test]
fn syntax_errors_have_a_line() {
    let e = errors("[machine]\nduration = \"1s\n[[task]]\n");
    assert!(!e.is_empty());
    assert!(e[0].starts_with("t.toml:2:"), "{e:?}");
    assert!(e[0].contains("TOML syntax"), "{e:?}");
    let e = errors("[machine]\nduration = \"1s\"\nduration = \"2s\"\n");
    assert!(e[0].starts_with("t.toml:3:"), "{e:?}");
}

#[test]
fn columns_count_characters_and_lines_are_one_based() {
    // "é" is two bytes but one column.
    let e = errors(
        "description = \"é\"\n[machine]\nduration = \"1s\"\n[[task]]\nname = \"é\" ; model = \"cpu\"\n",
    );
    assert!(e[0].starts_with("t.toml:5:12: TOML syntax"), "{e:?}");
    let e =
        error("[machine]\nduration = \"1s\"\n[[task]]\nname = \"é\"\nmodel = \"cpu\"\nwork = \"0s\" # é\n");
    assert_eq!(e, "t.toml:6:8: task[0].work (task \"é\"): must be > 0");
    let e = error("[machine]\nduration = \"1s\"\n[[task]]\nname = \"é\"\nmodel = \"cpu\"\n\"ü\" = 1\n");
    assert!(e.starts_with("t.toml:6:1: task[0].ü (task \"é\"): unknown key"), "{e}");
    let e = error("[machine]\nduration = \"1s\"\n[[task]]\nname = \"é\"\nmodel = \"cpu\"\n  é = \"x\"\n");
    assert!(e.starts_with("t.toml:6:3: "), "{e}");
}

#[test]
fn load_reports_an_unreadable_file() {
    let e = load(std::path::Path::new("/nonexistent/x.toml")).unwrap_err();
    assert_eq!(e.diagnostics.len(), 1);
    let s = e.to_string();
    assert!(s.starts_with("/nonexistent/x.toml: cannot read the scenario: "), "{s}");
}

#[test]
fn scenario_serializes_to_json_friendly_values() {
    // The simulator echoes the scenario in reports; Exec and timers read as in the file.
    let s = ok(include_str!("../examples/every-key.toml"));
    let v = toml::Value::try_from(&s.tasks[0]).unwrap();
    let t = v.as_table().unwrap();
    let model = t["model"].as_table().unwrap();
    assert_eq!(model["exec"].as_str(), Some("2ms..3ms"));
    assert_eq!(t["timer"].as_str(), Some("tick"));
}

#[test]
fn helpers_for_the_simulator() {
    let s = ok(include_str!("../examples/every-key.toml"));
    assert_eq!(s.task("batch").map(|t| t.line), Some(s.tasks[1].line));
    assert!(s.task("nobody").is_none());
    assert_eq!(s.tasks[0].effective_timer(&s.machine), TimerKind::Tick);
    assert_eq!(s.tasks[1].effective_timer(&s.machine), TimerKind::Hr);
    let Model::Periodic(p) = &s.tasks[0].model else { panic!() };
    assert!((p.utilization() - 0.25).abs() < 1e-12);
    let e = s.error(s.scheduler.key_lines["policy"], "scheduler.policy", "unknown policy \"smrt\"");
    assert_eq!(
        e.to_string(),
        format!("t.toml:{}:1: scheduler.policy: unknown policy \"smrt\"", s.scheduler.key_lines["policy"])
    );
}

#[test]
fn damaged_files_give_diagnostics_not_panics() {
    // Every prefix of a full scenario, and the scenario without each of its lines, is either
    // valid or rejected with positioned diagnostics.
    let src = include_str!("../examples/every-key.toml");
    let lines: Vec<&str> = src.lines().collect();
    let check = |text: &str| {
        if let Err(e) = parse_str(text, "t.toml") {
            assert!(!e.diagnostics.is_empty());
            for d in &e.diagnostics {
                assert!(d.line >= 1 && d.line <= lines.len() + 1, "{d}");
                assert!(d.col >= 1, "{d}");
            }
        }
    };
    let mut rejected = 0;
    for (i, _) in src.char_indices() {
        check(&src[..i]);
        rejected += usize::from(parse_str(&src[..i], "t.toml").is_err());
    }
    for skip in 0..lines.len() {
        let text: Vec<&str> = (0..lines.len()).filter(|&j| j != skip).map(|j| lines[j]).collect();
        check(&text.join("\n"));
    }
    assert!(rejected > src.len() / 2, "most prefixes are not valid scenarios: {rejected} of {}", src.len());
}

#[test]
fn names_are_short_and_printable() {
    for (name, why) in [
        ("red\u{1b}[31m", "control character (U+001B) at byte 3"),
        ("two\nlines", "control character (U+000A)"),
        ("nul\u{0}", "control character (U+0000)"),
        ("del\u{7f}", "control character (U+007F)"),
    ] {
        let src =
            format!("[machine]\nduration = \"1s\"\n[[task]]\nname = {}\nmodel = \"cpu\"\n", toml_str(name));
        let e = error(&src);
        assert!(e.starts_with("t.toml:4:8: task[0].name: holds a"), "{e}");
        assert!(e.contains(why), "{e}");
    }
    let long = "n".repeat(1 << 20);
    let src = format!("[machine]\nduration = \"1s\"\n[[task]]\nname = \"{long}\"\nmodel = \"cpu\"\n");
    let e = error(&src);
    assert_eq!(e, "t.toml:4:8: task[0].name: a name of 1048576 bytes: at most 255 bytes");
    // Two of them are one error each, not a duplicate-name error that would print the name.
    let e = errors(&format!("{src}[[task]]\nname = \"{long}\"\nmodel = \"cpu\"\n"));
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(e.iter().all(|x| x.len() < 200));
    let ok255 =
        format!("[machine]\nduration = \"1s\"\n[[task]]\nname = \"{}\"\nmodel = \"cpu\"\n", "é".repeat(127));
    assert_eq!(ok(&ok255).tasks[0].name.len(), 254);
    // Unicode that prints is a name like any other.
    assert_eq!(ok(&with("", "")).tasks[0].name, "T");
    let s = ok("[machine]\nduration = \"1s\"\n[[task]]\nname = \"décodeur vidéo 🎬\"\nmodel = \"cpu\"\n");
    assert_eq!(s.tasks[0].name, "décodeur vidéo 🎬");
}

fn toml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[test]
fn an_always_overloaded_task_is_a_warning_and_still_runs() {
    let s = ok(&with("", "model = \"periodic\"\nexec = \"20ms\"\nperiod = \"10ms\""));
    assert_eq!(s.warnings.len(), 1);
    let w = s.warnings[0].to_string();
    assert!(
        w.starts_with(
            "t.toml:8:8: task[0].exec (task \"T\"): exec of at least 20ms is above the period 10ms"
        ),
        "{w}"
    );
    let s = ok(&with("", "model = \"periodic\"\nexec = \"5ms..6ms\"\nperiod = \"10ms\"\ndeadline = \"4ms\""));
    assert!(
        s.warnings[0].to_string().contains("above the deadline 4ms: every request misses"),
        "{:?}",
        s.warnings
    );
    // Only when every request overruns: a range or distribution that can fit is no warning.
    for exec in ["5ms..20ms", "exp(20ms)", "10ms"] {
        let s = ok(&with("", &format!("model = \"periodic\"\nexec = \"{exec}\"\nperiod = \"10ms\"")));
        assert!(s.warnings.is_empty(), "{exec}: {:?}", s.warnings);
    }
}

#[test]
fn an_overhead_as_long_as_what_pays_it_is_refused() {
    let e = errors(&with(
        "[machine.overhead]\nswitch = \"1s\"",
        "model = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"",
    ));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].starts_with("t.toml:4:10: machine.overhead.switch: a switch cost of 1s is not smaller than the period of task \"T\" (10ms)"), "{e:?}");
    let src = "[machine]\nduration = \"1s\"\n[machine.overhead]\ndecision = \"10ms\"\n[scheduler]\npolicy = \"wfq\"\nquantum = \"10ms\"\n[[task]]\nname = \"a\"\nmodel = \"cpu\"\n";
    let e = error(src);
    assert!(e.starts_with("t.toml:4:12: machine.overhead.decision: a decision cost of 10ms is not smaller than scheduler.quantum 10ms"), "{e}");
    // Smaller is fine.
    ok(&with(
        "[machine.overhead]\nswitch = \"9ms\"",
        "model = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"",
    ));
}

/// Just past `MAX_TIME` (1000000h), as a scenario writes it.
const PAST: &str = "3600000000000000001ns";

/// A scenario of one task (a cpu task unless `task` sets the model) with `machine` as the whole of
/// `[machine]` but its duration (10 s unless `machine` gives one).
fn scenario(machine: &str, task: &str) -> String {
    let duration = if machine.contains("duration") { "" } else { "duration = \"10s\"\n" };
    let model = if task.contains("model") { "" } else { "model = \"cpu\"\n" };
    format!("[machine]\n{duration}{machine}\n\n[[task]]\nname = \"T\"\n{model}{task}\n")
}

#[test]
fn every_time_key_refuses_a_time_past_max_time_with_its_line_and_key() {
    let periodic = "model = \"periodic\"\nexec = \"1ms\"\nperiod = \"10ms\"\n";
    let interactive = "model = \"interactive\"\nthink = \"1ms\"\nburst = \"1ms\"\n";
    // (the [machine] lines, the task's lines, the key refused, whether the bound itself is taken)
    let cases: Vec<(String, String, &str, bool)> = vec![
        ("duration = \"{}\"".into(), String::new(), "machine.duration", true),
        ("sample = \"{}\"".into(), String::new(), "machine.sample", true),
        ("[machine.overhead]\ntick = \"{}\"".into(), String::new(), "machine.overhead.tick", false),
        ("[machine.overhead]\nswitch = \"{}\"".into(), String::new(), "machine.overhead.switch", true),
        ("[machine.overhead]\ndecision = \"{}\"".into(), String::new(), "machine.overhead.decision", true),
        ("[machine.overhead]\nmigration = \"{}\"".into(), String::new(), "machine.overhead.migration", true),
        (String::new(), "start = \"{}\"".into(), "task[0].start", false),
        (String::new(), "stop = \"{}\"".into(), "task[0].stop", true),
        (String::new(), "jitter = \"{}\"".into(), "task[0].jitter", true),
        (String::new(), "latency_tolerance = \"{}\"".into(), "task[0].latency_tolerance", true),
        (String::new(), "work = \"{}\"".into(), "task[0].work", true),
        (
            String::new(),
            "model = \"periodic\"\nexec = \"1ms\"\nperiod = \"{}\"".into(),
            "task[0].period",
            true,
        ),
        (
            String::new(),
            "model = \"periodic\"\nperiod = \"10ms\"\nexec = \"{}\"".into(),
            "task[0].exec",
            true,
        ),
        (
            String::new(),
            "model = \"periodic\"\nperiod = \"10ms\"\nexec = \"1ms..{}\"".into(),
            "task[0].exec",
            true,
        ),
        (
            String::new(),
            "model = \"periodic\"\nperiod = \"10ms\"\nexec = \"exp({})\"".into(),
            "task[0].exec",
            true,
        ),
        (
            String::new(),
            "model = \"periodic\"\nperiod = \"10ms\"\nexec = \"normal(1ms, {})\"".into(),
            "task[0].exec",
            true,
        ),
        (String::new(), format!("{periodic}deadline = \"{{}}\""), "task[0].deadline", true),
        (String::new(), format!("{periodic}estimate = \"{{}}\""), "task[0].estimate", true),
        (String::new(), format!("{periodic}estimate_initial = \"{{}}\""), "task[0].estimate_initial", true),
        (String::new(), format!("{periodic}notify = \"{{}}\""), "task[0].notify", false),
        (
            String::new(),
            "model = \"interactive\"\nburst = \"1ms\"\nthink = \"exp({})\"".into(),
            "task[0].think",
            true,
        ),
        (
            String::new(),
            "model = \"interactive\"\nthink = \"1ms\"\nburst = \"{}\"".into(),
            "task[0].burst",
            true,
        ),
        (String::new(), format!("{interactive}jitter = \"{{}}\""), "task[0].jitter", true),
    ];
    for (machine, task, key, bound_taken) in cases {
        let src = scenario(&machine.replace("{}", PAST), &task.replace("{}", PAST));
        let e = errors(&src);
        let hit =
            e.iter().find(|l| l.contains(&format!(": {key}"))).unwrap_or_else(|| panic!("{key}: {e:#?}"));
        let line = src.lines().position(|l| l.contains(PAST)).unwrap() + 1;
        assert!(hit.starts_with(&format!("t.toml:{line}:")), "{key}: {hit} (line {line})");
        assert!(hit.contains("longer than 1000000h (about 114 years)"), "{key}: {hit}");
        // The bound itself is taken, where no other rule refuses it (a tick cost longer than the
        // tick, a start after the end, a notification after a deadline of 10 ms).
        let src = scenario(&machine.replace("{}", "1000000h"), &task.replace("{}", "1000000h"));
        assert_eq!(parse_str(&src, "t.toml").is_ok(), bound_taken, "{key} = 1000000h: {src}");
    }
}

#[test]
fn a_run_accounts_at_most_max_time_of_cpu_time() {
    // 1000000h on one CPU is the limit; on two, 500000h.
    ok(&scenario("duration = \"1000000h\"", ""));
    ok(&scenario("duration = \"500000h\"\ncpus = 2", ""));
    let e = error(&scenario("duration = \"500001h\"\ncpus = 2", ""));
    assert_eq!(
        e,
        "t.toml:2:12: machine.duration: 500001h on 2 CPUs is more CPU time than a run accounts: duration × \
         cpus is at most 1000000h (about 114 years), so that its totals fit in 64 bits (here duration <= 500000h)"
    );
    let e = error(&scenario("duration = \"1000h\"\ncpus = 1024", ""));
    assert!(e.starts_with("t.toml:2:12: machine.duration: 1000h on 1024 CPUs"), "{e}");
}

#[test]
fn a_cache_refill_longer_than_max_time_is_refused() {
    let m = |cache: &str, bw: &str| format!("[machine.overhead]\ncache = \"{cache}\"\nbandwidth = \"{bw}\"");
    ok(&scenario(&m("512KiB", "1GB/s"), "working_set = \"256KiB\""));
    // 3.6e9 bytes at 1 B/s is exactly 1000000h.
    ok(&scenario(&m("3600000000B", "1B/s"), "working_set = \"1TiB\""));
    let e = error(&scenario(&m("3600000001B", "1B/s"), "working_set = \"1TiB\""));
    assert!(e.starts_with("t.toml:4:9: machine.overhead.cache: refilling this cache"), "{e}");
    let e = error(&scenario(&m("16TiB", "1B/s"), ""));
    assert!(e.contains("longer than 1000000h"), "{e}");
}

#[test]
fn no_release_or_deadline_an_accepted_scenario_allows_passes_the_horizon() {
    // The largest of everything: releases before 1000000h, a jitter just under the period, the
    // longest deadline. The last release and its deadline stay below 2 × MAX_TIME < 2^63.
    let s = ok(&scenario(
        "duration = \"1000000h\"\nhz = 0",
        "model = \"periodic\"\nexec = \"1000000h\"\nperiod = \"999999h\"\ndeadline = \"1000000h\"\n\
         jitter = \"999998.999999999h\"\nstart = \"999999.999999999h\"\nestimate = \"1000000h\"",
    ));
    let mut st = crate::Stream::new(&s.tasks[0], 1);
    let mut n = 0;
    while let Ok(r) = st.next_request(s.machine.duration) {
        assert!(r.at < sched::HORIZON && r.deadline < sched::HORIZON, "{r:?}");
        assert!(r.nominal < s.machine.duration);
        n += 1;
    }
    assert_eq!(n, 1);
}

#[test]
fn nice_class_and_reservation_keys() {
    let s = ok(&with("", "nice = -20\nclass = \"fifo\"\nruntime = \"3ms\"\ndl_period = \"10ms\""));
    let t = &s.tasks[0];
    assert_eq!((t.nice, t.class.as_deref()), (Some(-20), Some("fifo")));
    assert_eq!(
        t.reservation,
        Some(sched::Reservation { runtime: 3 * MS, deadline: 10 * MS, period: 10 * MS })
    );
    assert_eq!(
        error(&with("", "nice = 20")),
        "t.toml:8:8: task[0].nice (task \"T\"): 20 is out of range: expected an integer in -20..=19"
    );
    for (keys, want) in [
        (
            "runtime = \"3ms\"",
            "task[0].dl_period (task \"T\"): missing: a reservation (runtime) needs its dl_period",
        ),
        (
            "dl_period = \"3ms\"",
            "task[0].runtime (task \"T\"): missing: a reservation (dl_period) needs its runtime",
        ),
        (
            "dl_deadline = \"3ms\"",
            "task[0].dl_deadline (task \"T\"): a reservation needs runtime and dl_period too",
        ),
        (
            "runtime = \"3ms\"\ndl_period = \"2ms\"",
            "task[0].runtime (task \"T\"): runtime 3ms is longer than dl_period 2ms",
        ),
        (
            "runtime = \"1ms\"\ndl_deadline = \"3ms\"\ndl_period = \"2ms\"",
            "task[0].dl_deadline (task \"T\"): dl_deadline 3ms is longer than dl_period 2ms",
        ),
        (
            "runtime = \"500ns\"\ndl_period = \"2ms\"",
            "task[0].runtime (task \"T\"): 500ns: a runtime is at least 1us",
        ),
        ("class = \" \"", "task[0].class (task \"T\"): must not be empty"),
    ] {
        let e = error(&with("", keys));
        assert!(e.contains(want), "{keys}: {e}");
    }
}

/// A scenario of a server `X` and whatever tasks `tasks` (TOML) add.
fn with_server(tasks: &str) -> String {
    format!("[machine]\nduration = \"10s\"\n\n[[task]]\nname = \"X\"\nmodel = \"server\"\n\n{tasks}")
}

#[test]
fn servers_clients_and_players_parse_with_their_defaults() {
    let s = ok(&with_server(
        "[[task]]\nname = \"typing\"\nmodel = \"periodic\"\ninterarrival = \"exp(228ms)\"\nexec = \"2ms\"\n\
         deadline = \"150ms\"\nbands = [\"50ms\", \"150ms\"]\nserver = \"X\"\nserver_exec = \"1ms..2ms\"\napp = \"Editor\"\n\n\
         [[task]]\nname = \"video\"\nmodel = \"player\"\nperiod = \"66.7ms\"\nexec = \"ar1(28.35ms, 2.19ms, 0.8)\"\n\
         discard = \"notified\"\nserver = \"X\"\nserver_exec = \"3ms\"\nwait = true\n",
    ));
    assert_eq!(s.tasks[0].model, Model::Server);
    let t = &s.tasks[1];
    let Model::Periodic(p) = &t.model else { panic!("{t:?}") };
    assert_eq!((p.period, p.interarrival), (228 * MS, Some(Exec::Exponential { mean: 228 * MS })));
    assert_eq!(t.bands, [50 * MS, 150 * MS]);
    assert_eq!(t.app.as_deref(), Some("Editor"));
    let call = t.send.as_ref().unwrap();
    assert_eq!(
        (call.to.as_str(), call.to_index, call.exec, call.wait),
        ("X", 0, Exec::Uniform(MS, 2 * MS), false)
    );
    let Model::Player(v) = &s.tasks[2].model else { panic!() };
    assert_eq!(v.exec, Exec::Ar1 { mean: 28_350_000, sd: 2_190_000, rho_ppm: 800_000 });
    assert_eq!((v.period, v.window, v.delay, v.pace), (66_700_000, 20 * MS, 66_700_000, true));
    assert_eq!(v.discard, crate::Discard::Notified);
    assert_eq!(v.estimate, Estimate::Ewma { alpha: 0.5, factor: 1.1, initial: None }, "10 % over, as §3.5");
    assert!(s.tasks[2].send.as_ref().unwrap().wait);
    let plain = ok(&with("", "model = \"player\"\nperiod = \"40ms\"\nexec = \"30ms\""));
    let Model::Player(p) = &plain.tasks[0].model else { panic!() };
    assert_eq!(
        (p.discard, p.estimate),
        (crate::Discard::Estimate, Estimate::Ewma { alpha: 0.5, factor: 1.0, initial: None })
    );
}

#[test]
fn clients_name_a_server_that_exists() {
    let client = |to: &str| {
        format!("[[task]]\nname = \"c\"\nmodel = \"interactive\"\nthink = \"1s\"\nburst = \"1ms\"\nserver = \"{to}\"\nserver_exec = \"1ms\"\n")
    };
    assert!(error(&with_server(&client("Y"))).contains("task \"c\".server: no task is named \"Y\""));
    let s = with_server(&(client("d") + "\n[[task]]\nname = \"d\"\nmodel = \"cpu\"\n"));
    assert!(error(&s).contains("\"d\" is not of model \"server\""));
    let own = "[[task]]\nname = \"Y\"\nmodel = \"server\"\n";
    let e = errors(&format!("[machine]\nduration = \"1s\"\n{own}server = \"Y\"\nserver_exec = \"1ms\"\n"));
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e[0].contains("`server` is a key of model") && e[0].contains("it has no keys of its own"),
        "{e:?}"
    );
    let e =
        error(&with("", "model = \"interactive\"\nthink = \"1s\"\nburst = \"1ms\"\nserver_exec = \"1ms\""));
    assert!(e.contains("server_exec") && e.contains("only applies with `server`"), "{e}");
    let e = error(&with_server(&client("X").replace("server_exec = \"1ms\"\n", "")));
    assert!(e.contains("server_exec") && e.contains("missing"), "{e}");
}

#[test]
fn sporadic_arrivals_bands_and_series_are_checked() {
    let periodic = |extra: &str| with("", &format!("model = \"periodic\"\nexec = \"1ms\"\n{extra}"));
    let e = error(&periodic("period = \"10ms\"\ninterarrival = \"exp(10ms)\""));
    assert!(e.contains("task[0].interarrival") && e.contains("not both"), "{e}");
    let e = error(&periodic("interarrival = \"exp(10ms)\""));
    assert!(e.contains("task[0].deadline") && e.contains("missing"), "{e}");
    let e = error(&periodic("period = \"10ms\"\nbands = [\"150ms\", \"50ms\"]"));
    assert!(e.contains("bands") && e.contains("ascending"), "{e}");
    let e = error(&periodic("period = \"10ms\"\nbands = []"));
    assert!(e.contains("give 1 to 8 times"), "{e}");
    for (series, why) in [
        ("ar1(28ms, 2ms)", "a mean, a standard deviation and a lag-1 correlation"),
        ("ar1(28ms, 2ms, 1)", "in (-1, 1)"),
        ("ar1(0ms, 2ms, 0.5)", "must be > 0"),
        ("ar1(28ms, 2ms, x)", "a number in (-1, 1)"),
        ("file()", "the path is empty"),
        ("file(no-such-file.txt)", "cannot read the times file"),
    ] {
        let src =
            periodic(&format!("period = \"10ms\"\nexec = \"{series}\"")).replace("exec = \"1ms\"\n", "");
        let e = error(&src);
        assert!(e.contains(why), "{series}: {e}");
    }
}

#[test]
fn a_times_file_is_read_relative_to_the_scenario_and_its_errors_name_its_line() {
    let dir = std::env::temp_dir().join(format!("workload-times-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("frames.txt"), "# frame times\n28ms\n\n30.5ms # a long one\n29ms\n").unwrap();
    std::fs::write(dir.join("bad.txt"), "28ms\n30\n").unwrap();
    let scn = |file: &str| {
        format!("[machine]\nduration = \"1s\"\n[[task]]\nname = \"v\"\nmodel = \"periodic\"\nperiod = \"40ms\"\nexec = \"file({file})\"\n")
    };
    let path = dir.join("s.toml");
    std::fs::write(&path, scn("frames.txt")).unwrap();
    let s = load(&path).unwrap();
    let Model::Periodic(p) = &s.tasks[0].model else { panic!() };
    assert_eq!(p.exec, Exec::Trace { id: 0, mean: 29_166_666, min: 28 * MS, max: 30_500_000 });
    assert_eq!(&*s.tasks[0].traces[0].times, &[28 * MS, 30_500_000, 29 * MS]);
    std::fs::write(&path, scn("bad.txt")).unwrap();
    let e = load(&path).unwrap_err().to_string();
    assert!(e.contains("bad.txt:2:1") && e.contains("\"30\"") && e.contains("no unit"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn included_tasks_come_with_their_files_lines_and_take_what_the_include_sets() {
    let dir = std::env::temp_dir().join(format!("workload-include-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("apps")).unwrap();
    std::fs::write(
        dir.join("apps/news.toml"),
        "description = \"News\"\n[[task]]\nname = \"audio\"\nmodel = \"periodic\"\nexec = \"1.5ms\"\nperiod = \"64ms\"\n\
         [[task]]\nname = \"video\"\nmodel = \"player\"\nexec = \"28ms\"\nperiod = \"66.7ms\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("apps/bad.toml"),
        "[machine]\nduration = \"1s\"\n[[task]]\nname = \"b\"\nmodel = \"cpu\"\npriority = \"high\"\n",
    )
    .unwrap();
    let path = dir.join("mix.toml");
    let mix = |inc: &str, extra: &str| {
        format!("include = [{inc}]\n[machine]\nduration = \"10s\"\n[scheduler]\nclasses = \"svr4\"\n{extra}")
    };
    std::fs::write(
        &path,
        mix(
            "{ file = \"apps/news.toml\", class = \"svr4-rt\", priority = 5 }",
            "[[task]]\nname = \"hog\"\nmodel = \"cpu\"\n",
        ),
    )
    .unwrap();
    let s = load(&path).unwrap();
    let names: Vec<&str> = s.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["audio", "video", "hog"]);
    assert_eq!((s.tasks[0].class.as_deref(), s.tasks[0].priority), (Some("svr4-rt"), 5));
    assert_eq!((s.tasks[2].class.as_deref(), s.tasks[2].priority), (None, 0));
    assert!(s.tasks[0].file.ends_with("apps/news.toml") && s.tasks[0].line == 2);
    // Problems of an included file name it and its lines.
    std::fs::write(&path, mix("\"apps/bad.toml\"", "")).unwrap();
    let e = load(&path).unwrap_err().to_string();
    assert!(e.contains("bad.toml:1:") && e.contains("an included file holds only"), "{e}");
    assert!(e.contains("bad.toml:6:12") && e.contains("priority"), "{e}");
    // A name twice across files.
    std::fs::write(&path, mix("\"apps/news.toml\"", "[[task]]\nname = \"audio\"\nmodel = \"cpu\"\n"))
        .unwrap();
    let e = load(&path).unwrap_err().to_string();
    assert!(e.contains("duplicate task name \"audio\"") && e.contains("news.toml:2"), "{e}");
    std::fs::write(&path, mix("\"apps/none.toml\"", "")).unwrap();
    let e = load(&path).unwrap_err().to_string();
    assert!(e.contains("include[0]") && e.contains("cannot read the included file"), "{e}");
    std::fs::write(&path, mix("{ file = \"apps/news.toml\", colour = 1 }", "")).unwrap();
    assert!(load(&path).unwrap_err().to_string().contains("include[0].colour"));
    std::fs::remove_dir_all(&dir).ok();
}
