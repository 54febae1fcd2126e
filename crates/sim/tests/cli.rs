//! The `smartsim` binary: output contract, errors, reproduce.

mod common;
use common::{scratch, smartsim};

#[test]
fn run_json_follows_the_output_contract() {
    let (code, out, err) = smartsim(&["run", "scenarios/papers/smart-6.2.2.2.toml", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["tool"], "smartsim");
    assert_eq!(v["policy"], "smart");
    assert_eq!(v["scenario"], "smart-6.2.2.2");
    assert_eq!(v["seed"], 1);
    assert!(v["duration_ns"].as_u64().unwrap() > 0);
    let tasks = v["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 3);
    for t in tasks {
        for k in ["name", "cpu_ns", "cpu_share", "finish_ns", "deadlines", "latency_ns", "billing"] {
            assert!(t.get(k).is_some(), "task lacks `{k}`: {t}");
        }
        for k in ["requests", "met", "missed", "late", "discarded", "aborted", "unfinished"] {
            assert!(t["deadlines"][k].is_u64());
        }
        for k in ["p50", "p90", "p99", "max"] {
            assert!(t["latency_ns"][k].is_u64());
        }
        for k in ["charged_ns", "quanta", "unbilled_quanta"] {
            assert!(t["billing"][k].is_u64());
        }
    }
}

#[test]
fn compare_prints_every_policy() {
    let (code, out, err) =
        smartsim(&["compare", "scenarios/papers/smart-6.2.3.1-fig6-6.toml", "--policies", "smart,wfq,edf"]);
    assert_eq!(code, 0, "{err}");
    for p in ["smart", "wfq", "edf"] {
        assert!(out.contains(&format!("{p} share %")), "{out}");
    }
}

#[test]
fn compare_all_runs_every_policy_that_can_and_names_the_others_with_why() {
    let dir = scratch("compare-all");
    let f = dir.join("s.toml");
    let periodic = "model = \"periodic\"\nexec = \"2ms\"\nperiod = \"10ms\"\n";
    // Options of the scenario's own policy (rr's slice and ties) that no other policy takes: under
    // `all` the others are built without them, so every registered policy runs.
    std::fs::write(
        &f,
        format!(
            "[machine]\ncpus = 2\nduration = \"200ms\"\n[scheduler]\npolicy = \"rr\"\nslice = \"20ms\"\n\
             ties = \"task\"\n[[task]]\nname = \"a\"\n{periodic}[[task]]\nname = \"b\"\n{periodic}"
        ),
    )
    .unwrap();
    let (code, out, err) =
        smartsim(&["compare", f.to_str().unwrap(), "--policies", "all", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("skipped"), "{err}");
    let got: Vec<String> = out
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("a JSON object a line")["policy"].to_string()
        })
        .collect();
    let every: Vec<String> = sched::registry::names().map(|n| format!("\"{n}\"")).collect();
    assert_eq!(got, every);
    let (code, table, err) = smartsim(&["compare", f.to_str().unwrap(), "--policies", "all"]);
    assert_eq!(code, 0, "{err}");
    for p in sched::registry::names() {
        assert!(table.contains(&format!("{p} share %")), "{table}");
    }

    // `on_miss = "discard"` written out needs a policy that notifies: only smart runs, the others are
    // named on one line with why.
    std::fs::write(
        &f,
        format!(
            "[machine]\nduration = \"200ms\"\n[scheduler]\npolicy = \"edf\"\n[[task]]\nname = \"a\"\n{periodic}\
             on_miss = \"discard\"\n"
        ),
    )
    .unwrap();
    let (code, out, err) = smartsim(&["compare", f.to_str().unwrap(), "--policies", "all"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("smart share %") && !out.contains("edf share %"), "{out}");
    let skipped: Vec<&str> = err.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(skipped.len(), 1, "{err}");
    for p in sched::registry::names().filter(|&p| p != "smart") {
        assert!(skipped[0].contains(&format!(" {p} (")), "{p} not named: {err}");
    }
    assert!(skipped[0].contains("never notifies"), "{err}");

    // The scenario's partition applies to every policy: a set that first fit cannot place is refused
    // by all of them.
    std::fs::write(
        &f,
        "[machine]\nduration = \"200ms\"\n[scheduler]\npolicy = \"edf\"\npartition = \"ffd\"\n[[task]]\n\
         name = \"a\"\nmodel = \"periodic\"\nexec = \"6ms\"\nperiod = \"10ms\"\n[[task]]\nname = \"b\"\n\
         model = \"periodic\"\nexec = \"6ms\"\nperiod = \"10ms\"\n",
    )
    .unwrap();
    let (code, _, err) = smartsim(&["compare", f.to_str().unwrap(), "--policies", "all"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("wfq (") && err.contains("fits on none"), "{err}");
    assert!(err.contains("--policies all: no policy can run this scenario"), "{err}");
}

#[test]
fn bad_scenario_names_file_line_and_field() {
    let dir = scratch("cli");
    let f = dir.join("bad.toml");
    std::fs::write(
        &f,
        "[machine]\nduration = \"1s\"\n\n[[task]]\nname = \"A\"\nmodel = \"cpu\"\nshare = -1\n",
    )
    .unwrap();
    let (code, _, err) = smartsim(&["run", f.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.toml:7:"), "{err}");
    assert!(err.contains("share"), "{err}");
    std::fs::write(&f, "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"smrt\"\n[[task]]\nname = \"A\"\nmodel = \"cpu\"\n")
        .unwrap();
    let (code, _, err) = smartsim(&["run", f.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.toml:4:") && err.contains("scheduler.policy") && err.contains("smart"),
        "{err}"
    );
}

#[test]
fn reproduce_prints_paper_and_ours_and_writes_figures() {
    let dir = scratch("repro");
    let (code, out, err) =
        smartsim(&["reproduce", "smart-6.2.2.2", "--format", "json", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(v["id"], "smart-6.2.2.2");
    assert!(v["source"].as_str().unwrap().contains("6.2.2.2"));
    let m = &v["metrics"][0];
    assert!(
        m["name"].is_string() && m["paper"].is_number() && m["ideal"].is_number() && m["ours"].is_number()
    );
    for fig in ["fig6-4.svg", "fig6-5.svg", "index.html"] {
        let text = std::fs::read_to_string(dir.join(fig)).unwrap();
        assert!(text.contains("R1") && text.contains("R3"), "{fig}");
    }
}

#[test]
fn figures_are_also_written_as_png_and_pdf() {
    let dir = scratch("export");
    let (code, out, err) = smartsim(&[
        "reproduce",
        "smart-6.2.2.2",
        "--format",
        "json",
        "--png",
        "--pdf",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let listed: Vec<&str> = v["figures"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    for fig in ["fig6-4", "fig6-5"] {
        for ext in ["svg", "png", "pdf"] {
            let path = dir.join(format!("{fig}.{ext}"));
            assert!(listed.contains(&path.to_str().unwrap()), "{path:?} not in {listed:?}");
        }
        let png = std::fs::read(dir.join(format!("{fig}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        // IHDR: width and height, big-endian, twice the SVG's 960×600.
        let dim = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
        assert_eq!((dim(16), dim(20)), (1920, 1200));
        assert!(std::fs::read(dir.join(format!("{fig}.pdf"))).unwrap().starts_with(b"%PDF-"));
    }
    // `run --svg` writes the format the extension names.
    let png = dir.join("run.png");
    let (code, _, err) =
        smartsim(&["run", "scenarios/papers/smart-6.2.2.2.toml", "--svg", png.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let (code, _, err) = smartsim(&[
        "run",
        "scenarios/papers/smart-6.2.2.2.toml",
        "--svg",
        dir.join("run.bmp").to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("run.bmp: unknown image format"), "{err}");
    assert!(!dir.join("run.bmp").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn jobs_file_has_one_row_per_request_that_agrees_with_the_summary() {
    let dir = scratch("jobs");
    let scn = dir.join("two-cpus.toml");
    // Overloaded on purpose (2.55 CPUs of periodic work on two, under EDF): some requests are aborted
    // at their deadline, some finish late, most are met.
    std::fs::write(
        &scn,
        r#"
[machine]
duration = "2s"
cpus = 2
[scheduler]
policy = "edf"
[[task]]
name = "a,b"
model = "periodic"
exec = "7ms"
period = "10ms"
on_miss = "abort"
[[task]]
name = "c"
model = "periodic"
exec = "11ms"
period = "20ms"
on_miss = "abort"
[[task]]
name = "d"
model = "periodic"
exec = "6ms"
period = "15ms"
[[task]]
name = "e"
model = "periodic"
exec = "9ms"
period = "10ms"
"#,
    )
    .unwrap();
    let csv = dir.join("jobs.csv");
    let jsonl = dir.join("jobs.jsonl");
    let (code, out, err) =
        smartsim(&["run", scn.to_str().unwrap(), "--format", "json", "--jobs", csv.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    let (code, _, err) = smartsim(&[
        "run",
        scn.to_str().unwrap(),
        "--jobs",
        jsonl.to_str().unwrap(),
        "--jobs-format",
        "jsonl",
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("task,job,cpu,release_ns,start_ns,finish_ns,deadline_ns,exec_ns,outcome,preemptions")
    );
    let rows: Vec<&str> = lines.collect();
    let json_rows: Vec<serde_json::Value> =
        std::fs::read_to_string(&jsonl).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // The same rows both ways, one per released request.
    assert_eq!(rows.len(), json_rows.len());
    assert_eq!(rows.len() as u64, v["system"]["jobs"].as_u64().unwrap());
    // Per task, the outcomes add up to the summary's deadlines.
    for t in v["tasks"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let mine: Vec<&serde_json::Value> = json_rows.iter().filter(|r| r["task"] == name).collect();
        let count = |o: &str| mine.iter().filter(|r| r["outcome"] == o).count() as u64;
        let d = &t["deadlines"];
        assert_eq!(count("met"), d["met"].as_u64().unwrap(), "{name}");
        for o in ["late", "discarded", "aborted", "unfinished"] {
            assert_eq!(count(o), d[o].as_u64().unwrap(), "{name} {o}");
        }
        assert_eq!(
            count("late") + count("aborted") + count("discarded"),
            d["missed"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(mine.len() as u64, d["requests"].as_u64().unwrap(), "{name}");
        for r in &mine {
            let (release, deadline) = (r["release_ns"].as_u64().unwrap(), r["deadline_ns"].as_u64().unwrap());
            if let Some(start) = r["start_ns"].as_u64() {
                assert!(release <= start && r["cpu"].as_u64().unwrap() < 2, "{r}");
            }
            match r["outcome"].as_str().unwrap() {
                "met" => assert!(r["finish_ns"].as_u64().unwrap() <= deadline, "{r}"),
                // Finished late, or still open at the end with its deadline passed (no finish).
                "late" => match r["finish_ns"].as_u64() {
                    Some(f) => assert!(f > deadline, "{r}"),
                    None => assert!(deadline <= v["duration_ns"].as_u64().unwrap(), "{r}"),
                },
                "aborted" => assert_eq!(r["finish_ns"].as_u64(), Some(deadline), "{r}"),
                "unfinished" => {
                    assert!(r["finish_ns"].is_null(), "{r}");
                    assert!(deadline > v["duration_ns"].as_u64().unwrap(), "{r}");
                }
                o => panic!("unexpected outcome {o}"),
            }
        }
    }
    // The overload shows: both rules act.
    let outcomes: Vec<&str> = json_rows.iter().map(|r| r["outcome"].as_str().unwrap()).collect();
    for o in ["met", "aborted", "late"] {
        assert!(outcomes.contains(&o), "no {o} among {outcomes:?}");
    }
    // A task name with a comma is quoted in the CSV.
    assert!(rows.iter().any(|r| r.starts_with("\"a,b\",")));

    // The run's trace, read back by `smartsim trace report`, gives every task the CPU time of the
    // summary and the outcomes of the job records; `trace perfetto` converts it.
    let tr = dir.join("run.trace");
    let (code, out2, err) =
        smartsim(&["run", scn.to_str().unwrap(), "--format", "json", "--trace", tr.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out2, out, "writing a trace changes nothing in the run");
    let (code, rep, err) = smartsim(&["trace", "report", tr.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let rep: serde_json::Value = serde_json::from_str(&rep).unwrap();
    assert_eq!(rep["header"]["source"]["tool"], "smartsim");
    assert_eq!(rep["header"]["cpus"], 2);
    assert_eq!(rep["end_ns"], v["duration_ns"]);
    for (t, r) in v["tasks"].as_array().unwrap().iter().zip(rep["tasks"].as_array().unwrap()) {
        let name = t["name"].as_str().unwrap();
        assert_eq!(r["name"], t["name"]);
        assert_eq!(r["cpu_ns"], t["cpu_ns"], "{name}");
        for o in ["met", "late", "discarded", "aborted", "unfinished"] {
            let rows = json_rows.iter().filter(|j| j["task"] == name && j["outcome"] == o).count() as u64;
            assert_eq!(r["requests"][o].as_u64().unwrap(), rows, "{name} {o}");
        }
    }
    // Shares per window, from the run and from its trace: the same computation, the same numbers.
    let (code, run_w, err) =
        smartsim(&["run", scn.to_str().unwrap(), "--format", "json", "--window", "500ms"]);
    assert_eq!(code, 0, "{err}");
    let (code, rep_w, err) =
        smartsim(&["trace", "report", tr.to_str().unwrap(), "--format", "json", "--window", "500ms"]);
    assert_eq!(code, 0, "{err}");
    let run_w: serde_json::Value = serde_json::from_str(&run_w).unwrap();
    let rep_w: serde_json::Value = serde_json::from_str(&rep_w).unwrap();
    assert_eq!(run_w["windows"].as_array().unwrap().len(), 4, "2 s in windows of 500 ms");
    assert_eq!(run_w["windows"], rep_w["windows"]["windows"]);
    let names: Vec<&serde_json::Value> = v["tasks"].as_array().unwrap().iter().map(|t| &t["name"]).collect();
    assert_eq!(rep_w["windows"]["tasks"].as_array().unwrap().iter().collect::<Vec<_>>(), names);
    for w in run_w["windows"].as_array().unwrap() {
        let sum: f64 = w["shares"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).sum();
        assert!(sum <= 2.0 + 1e-9, "two CPUs give at most 2 CPUs of time: {w}");
    }
    // A window that would cut the run into too many pieces is refused, not computed.
    for args in [
        vec!["run", scn.to_str().unwrap(), "--window", "0s"],
        vec!["run", scn.to_str().unwrap(), "--window", "1us"],
        vec!["trace", "report", tr.to_str().unwrap(), "--window", "1us"],
    ] {
        let (code, _, err) = smartsim(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains("--window"), "{args:?}: {err}");
    }
    let pf = dir.join("run.json");
    let (code, _, err) = smartsim(&["trace", "perfetto", tr.to_str().unwrap(), pf.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let p: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&pf).unwrap()).unwrap();
    assert!(p["traceEvents"].as_array().unwrap().len() > rows.len());
    // A damaged record is named by file and byte offset.
    let mut bytes = std::fs::read(&tr).unwrap();
    let body = 16 + u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    bytes[body] = 200;
    std::fs::write(&tr, &bytes).unwrap();
    let (code, _, err) = smartsim(&["trace", "report", tr.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("run.trace: byte {body}: unknown record type 200")), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A fresh directory `smartsim-NAME-PID` holding the trace of 1 s on one CPU kept busy by three
/// CPU-bound tasks a, b, c of shares 3, 2, 1.
fn busy_trace(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = scratch(name);
    let scn = dir.join("busy.toml");
    std::fs::write(
        &scn,
        "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"smart\"\n\
         [[task]]\nname = \"a\"\nmodel = \"cpu\"\nwork = \"10s\"\nshare = 3\n\
         [[task]]\nname = \"b\"\nmodel = \"cpu\"\nwork = \"10s\"\nshare = 2\n\
         [[task]]\nname = \"c\"\nmodel = \"cpu\"\nwork = \"10s\"\n",
    )
    .unwrap();
    let tr = dir.join("busy.trace");
    let (code, _, err) = smartsim(&["run", scn.to_str().unwrap(), "--trace", tr.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    (dir, tr)
}

#[test]
fn trace_billing_replays_a_simulated_run_at_100_and_1000_hz() {
    // One CPU kept busy for exactly 1 s by three CPU-bound tasks: every tick of a sampler whose period
    // divides 1 s falls in exactly one stretch, so the whole run is billed exactly (ratio 1 in all),
    // while each task is billed by whole ticks; the 100 Hz ticks are among the 1000 Hz ones, so no
    // quantum the 100 Hz sampler bills goes unbilled at 1000 Hz.
    let (dir, tr) = busy_trace("billing");
    let (code, out, err) =
        smartsim(&["trace", "billing", tr.to_str().unwrap(), "--hz", "100,1000", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["duration_ns"], 1_000_000_000u64);
    let tasks = v["tasks"].as_array().unwrap();
    let mut names: Vec<&str> = tasks.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, ["a", "b", "c"], "the simulator's task 0 is a task like any other");
    let sum = |f: &dyn Fn(&serde_json::Value) -> u64| tasks.iter().map(f).sum::<u64>();
    assert_eq!(sum(&|t| t["cpu_ns"].as_u64().unwrap()), 1_000_000_000);
    for (i, period) in [(0, 10_000_000u64), (1, 1_000_000)] {
        assert_eq!(sum(&|t| t["billing"][i]["billed_ns"].as_u64().unwrap()), 1_000_000_000, "{period}");
        for t in tasks {
            assert_eq!(t["billing"][i]["billed_ns"].as_u64().unwrap() % period, 0);
        }
    }
    for t in tasks {
        let never = |i: usize| t["billing"][i]["unbilled_quanta"].as_u64().unwrap();
        assert!(never(1) <= never(0), "{t}");
        assert!(t["quanta"].as_u64().unwrap() > 0);
    }
    // The table names the samplers.
    let (code, out, err) = smartsim(&["trace", "billing", tr.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("100 Hz ratio") && out.contains("1000 Hz never billed %"), "{out}");
    let (code, _, err) = smartsim(&["trace", "billing", tr.to_str().unwrap(), "--hz", "0"]);
    assert_eq!(code, 2, "{err}");
    // The HTML page of the same trace: tables, the quantum CDFs, a scatter per rate, the map, the
    // Gantt chart.
    let page = dir.join("busy.html");
    let (code, _, err) = smartsim(&["trace", "html", tr.to_str().unwrap(), page.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg").count(), 1 + 2 + 1 + 1, "CDF, two scatters, execution map, Gantt");
    assert!(html.contains("1000 Hz never billed %") && html.contains("Execution map"));
    assert!(html.contains("Gantt chart") && html.contains("class=\"run\""));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn trace_diff_finds_the_known_differences_between_a_simulated_and_a_hand_made_trace() {
    // A: a simulated 1 s on one CPU of three CPU-bound tasks. B: made by hand as a recording of the
    // same workload might read: `a` and `b` each ran half of the second in 10 ms quanta, `c` never
    // shows, and a task `d` the simulation does not have woke once and waited 2 ms.
    let (dir, a) = busy_trace("diff");
    let b = dir.join("hand.trace");
    let source = trace::Source::Hourglass { kernel: "hand-made".into() };
    let mut w =
        trace::Writer::create(&b, &trace::Header::new(source, 1, "CLOCK_MONOTONIC", 0, None)).unwrap();
    for (task, name) in [(7, "a"), (8, "b"), (9, "d")] {
        w.write(&trace::Record::Task { task, process: task, name: name.into() }).unwrap();
    }
    const MS: u64 = 1_000_000;
    for k in 0..100u64 {
        let task = if k % 2 == 0 { 7 } else { 8 };
        let why = trace::EndReason::SliceEnd;
        w.write(&trace::Record::Run {
            task,
            cpu: 0,
            start: k * 10 * MS,
            end: (k + 1) * 10 * MS,
            why,
            complete: true,
        })
        .unwrap();
    }
    w.write(&trace::Record::Wake { task: 9, cpu: None, at: 500 * MS }).unwrap();
    w.write(&trace::Record::End { at: 1000 * MS }).unwrap();
    w.finish().unwrap();

    let (code, rep, err) = smartsim(&["trace", "report", a.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let rep: serde_json::Value = serde_json::from_str(&rep).unwrap();
    let sim_share = |name: &str| {
        rep["tasks"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap()["share"]
            .as_f64()
            .unwrap()
    };
    let (code, out, err) =
        smartsim(&["trace", "diff", a.to_str().unwrap(), b.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let d: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(d["a"][0], "smartsim");
    assert_eq!(d["b"][0], "hourglass");
    assert_eq!(d["only_in_a"], serde_json::json!(["c"]));
    assert_eq!(d["only_in_b"], serde_json::json!(["d"]));
    let tasks = d["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2);
    for t in tasks {
        let name = t["name"].as_str().unwrap();
        // One CPU on both sides: % of one CPU is the share.
        let want = 100.0 * (0.5 - sim_share(name));
        assert!((t["delta"]["cpu_pp"].as_f64().unwrap() - want).abs() < 1e-9, "{name}: {t}");
        assert_eq!(t["b"]["cpu_ns"], 500 * MS);
        assert_eq!(t["b"]["quantum"]["count"], 50);
        assert_eq!(t["b"]["quantum"]["p50"].as_u64().unwrap() / MS, 10, "{t}");
    }
    // The table for people says the same.
    let (code, out, err) = smartsim(&["trace", "diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("only in A: c") && out.contains("only in B: d"), "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_klogger_recording_opens_with_the_same_trace_commands_as_a_simulated_run() {
    // A klogger log as the recorder writes it (its raw format, not converted): on one CPU at 100 Hz,
    // `a` and `b` alternate in 10 ms quanta for 1 s, each tick recorded with the task it interrupted.
    // `smartsim trace report|billing|diff` read it as they read a simulated trace.
    use trace::klog::{Event, Header, Kind, LogWriter};
    const MS: u64 = 1_000_000;
    let (dir, sim) = busy_trace("klog");
    let header = Header::new("hand-made", 1, Some(100));
    let mut w = LogWriter::new(Vec::new(), &header).unwrap();
    let task = |k: u64| if k % 2 == 0 { (7, "a") } else { (8, "b") };
    for k in 0..=100u64 {
        let (prev, next) = (task(k + 1), task(k));
        // prev_state 0: preempted.
        w.write(&Event::switch(k * 10 * MS, 0, prev, next, 0)).unwrap();
        if k < 100 {
            let mut t = Event::new(k * 10 * MS + 5 * MS, 0, Kind::Tick);
            t.pid = next.0;
            w.write(&t).unwrap();
        }
    }
    w.write(&Event::new(1000 * MS, 0, Kind::End)).unwrap();
    let log = dir.join("run.klog");
    std::fs::write(&log, w.into_inner()).unwrap();

    let (code, out, err) = smartsim(&["trace", "report", log.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["header"]["source"]["tool"], "klogger", "{v}");
    for name in ["a", "b"] {
        let t = v["tasks"].as_array().unwrap().iter().find(|t| t["name"] == name).expect(name);
        assert_eq!(t["cpu_ns"], 500 * MS, "{t}");
    }
    let (code, out, err) =
        smartsim(&["trace", "billing", log.to_str().unwrap(), "--hz", "100", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["duration_ns"], 1000 * MS, "{v}");
    let (code, out, err) =
        smartsim(&["trace", "diff", sim.to_str().unwrap(), log.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let d: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((&d["a"][0], &d["b"][0]), (&"smartsim".into(), &"klogger".into()), "{d}");
    assert_eq!(d["only_in_a"], serde_json::json!(["c"]));
    assert_eq!(d["tasks"].as_array().unwrap().len(), 2);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_simulated_machine_billing_by_tick_is_what_its_trace_says_it_billed() {
    // billing = "tick": each tick charges the task it finds running. The trace carries the ticks with
    // that task; `trace billing`'s "traced" column replayed from them gives every task exactly the
    // charge the simulator reports, though slices end on ticks (the tick at a switch is the
    // stopped task's).
    let dir = scratch("tickbill");
    let scn = dir.join("tick.toml");
    std::fs::write(
        &scn,
        "[machine]\nduration = \"2s\"\nhz = 100\nbilling = \"tick\"\n[scheduler]\npolicy = \"smart\"\n\
         [[task]]\nname = \"a\"\nmodel = \"cpu\"\nwork = \"10s\"\n\
         [[task]]\nname = \"p\"\nmodel = \"periodic\"\nexec = \"3ms\"\nperiod = \"17ms\"\n\
         [[task]]\nname = \"i\"\nmodel = \"interactive\"\nthink = \"exp(7ms)\"\nburst = \"exp(2ms)\"\n",
    )
    .unwrap();
    let tr = dir.join("tick.trace");
    let (code, out, err) =
        smartsim(&["run", scn.to_str().unwrap(), "--format", "json", "--trace", tr.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let run: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (code, out, err) =
        smartsim(&["trace", "billing", tr.to_str().unwrap(), "--hz", "100", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let bill: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(bill["kernel_hz"], 100);
    for t in run["tasks"].as_array().unwrap() {
        let b = bill["tasks"].as_array().unwrap().iter().find(|b| b["name"] == t["name"]).unwrap();
        assert_eq!(b["observed"]["billed_ns"], t["billing"]["charged_ns"], "{}", t["name"]);
        // The simulator counts the dispatch the run's end cut; the trace counts complete quanta.
        let (q, sq) = (b["quanta"].as_u64().unwrap(), t["billing"]["quanta"].as_u64().unwrap());
        assert!(q == sq || q + 1 == sq, "{}: {q} quanta, simulator {sq}", t["name"]);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `smartsim reproduce` names the papers by author and year, never by a file number, and its HTML
/// report gives each figure the paper's caption and what to see.
#[test]
fn reproduce_names_papers_by_author_and_captions_every_figure() {
    let dir = scratch("captions");
    let (code, out, err) = smartsim(&["reproduce", "smart-6.2.3.3", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("(Nieh 1999, §6.2.3.3, figs. 6-8, 6-9)"), "{out}");
    assert!(!out.contains("004"), "{out}");
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains("Jason Nieh, The Design, Implementation, and Evaluation of SMART"));
    assert_eq!(html.matches("<figcaption>").count(), 2);
    assert!(html.contains("Figure 6-9 of the dissertation: Deadlines met by real-time applications"));
    assert!(html.contains("What to see: R1 and R2 meet the same deadlines"));
    // Its glossary defines "missed" as every other output does.
    let missed = trace::summary::GLOSSARY.iter().find(|(t, _)| *t == "missed").unwrap().1;
    assert!(html.contains(">Glossary</h2>") && html.contains(missed), "no glossary");
    assert!(!html.contains("004"));
}

#[test]
fn outputs_are_checked_before_the_run_and_none_is_emptied_by_a_later_mistake() {
    let dir = scratch("outputs");
    let svg = dir.join("keep.svg");
    std::fs::write(&svg, "precious").unwrap();
    let s = svg.to_str().unwrap();
    // A bad Gantt window, found after --svg's file: the existing file is left as it was.
    let (code, _, err) = smartsim(&[
        "run",
        "scenarios/papers/smart-6.2.3.1-fig6-6.toml",
        "--svg",
        s,
        "--gantt",
        dir.join("g.svg").to_str().unwrap(),
        "--gantt-window",
        "0s..999s",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--gantt-window"), "{err}");
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), "precious");
    assert!(!dir.join("g.svg").exists());
    // A --jobs file that cannot be created is refused before the run, naming the file, and the
    // other outputs are neither written nor created.
    let bad = dir.join("no-such-dir").join("jobs.csv");
    let (code, out, err) = smartsim(&[
        "run",
        "scenarios/papers/smart-6.2.3.1-fig6-6.toml",
        "--svg",
        s,
        "--trace",
        dir.join("t.trace").to_str().unwrap(),
        "--jobs",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("jobs.csv"), "{err}");
    assert!(out.is_empty(), "the run was not made: {out}");
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), "precious");
    assert!(!dir.join("t.trace").exists());
}

/// The scenarios `scripts/kernel-check` runs on the real kernel, simulated: Linux's weights divide the
/// CPU (nice 0 against nice −5 is 1024 : 3121), and a job beside a hog waits at most one tick (4 ms).
#[test]
fn kernel_scenarios_give_the_fair_class_s_weights_and_a_tick_of_wait() {
    let (code, out, err) = smartsim(&["run", "scenarios/kernel/eevdf-nice.toml", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cpu: Vec<f64> =
        v["tasks"].as_array().unwrap().iter().map(|t| t["cpu_ns"].as_f64().unwrap()).collect();
    let part = cpu[0] / (cpu[0] + cpu[1]);
    assert!((part - 1024.0 / 4145.0).abs() < 0.001, "nice 0 got {part}");

    let (code, out, err) = smartsim(&["run", "scenarios/kernel/eevdf-periodic.toml", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let job = &v["tasks"][1];
    assert_eq!(job["name"], "job");
    assert_eq!((job["deadlines"]["met"].as_u64(), job["deadlines"]["missed"].as_u64()), (Some(500), Some(0)));
    assert_eq!(job["latency_ns"]["max"].as_u64(), Some(4_000_000));
}

#[test]
fn bench_refuses_numbers_that_would_wrap_or_run_for_ever_before_running() {
    // --seconds × 10^9 passed 2^64 and wrapped to a short run; now each bound says what it is.
    for (args, says) in [
        (&["--seconds", "18446744074"][..], "--seconds 18446744074: at most 3600000000"),
        (&["--seconds", "3600000001"], "--seconds 3600000001: at most 3600000000"),
        (&["--seconds", "0"], "--seconds 0"),
        (&["--seconds", "100000", "--tasks", "1000", "--cpus", "1"], "over the limit of 2000000000"),
        (&["--repeat", "1001"], "--repeat 1001: at most 1000"),
        (&["--tasks", "100001"], "--tasks 100001"),
        (&["--cpus", "1025"], "--cpus 1025"),
    ] {
        let (code, out, err) = smartsim(&[&["bench"][..], args].concat());
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: nothing runs: {out}");
    }
}

#[test]
fn bench_prints_each_policys_ratio_to_edf_measured_in_the_run() {
    let (code, out, err) = smartsim(&[
        "bench",
        "--cpus",
        "1",
        "--tasks",
        "10",
        "--seconds",
        "1",
        "--repeat",
        "1",
        "--mix-seconds",
        "0",
        "--policies",
        "smart,edf,eevdf",
    ]);
    assert_eq!(code, 0, "{err}");
    // Each ratio is the table's jobs per second of EDF over the policy's.
    let rate = |p: &str| -> f64 {
        let row = out.lines().find(|l| l.split_whitespace().next() == Some(p)).expect("a row per policy");
        row.split_whitespace().nth(6).unwrap().parse().unwrap()
    };
    for p in ["smart", "eevdf"] {
        let line = format!("1 CPU(s), 10 tasks: edf/{p} jobs-per-second ratio ");
        let printed: f64 = out.lines().find_map(|l| l.strip_prefix(&line)).expect(&line).parse().unwrap();
        assert!((printed - rate("edf") / rate(p)).abs() < 0.006, "{p}: {printed} in {out}");
    }
    assert!(!out.contains("edf/edf"), "{out}");
}

#[test]
fn times_on_the_command_line_stop_at_max_time() {
    let (code, _, err) = smartsim(&["run", "crates/workload/examples/mix.toml", "--window", "1000001h"]);
    assert_eq!(code, 2);
    assert!(err.contains("--window") && err.contains("longer than 1000000h"), "{err}");
    let (code, _, err) = smartsim(&[
        "run",
        "crates/workload/examples/mix.toml",
        "--gantt",
        "/dev/null",
        "--gantt-window",
        "0s..1000001h",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--gantt-window") && err.contains("longer than 1000000h"), "{err}");
}
