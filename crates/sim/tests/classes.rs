//! Classes stacked by priority (`[scheduler] classes`, `crates/sched/src/stack.rs`), run as scenarios: Linux's
//! "SCHED_FIFO hog beside a fair task" and SVR4's "video in the real-time class above time sharing" (Nieh
//! ch. 2), each with the outcome its mechanism dictates.

use smartsim::run_scenario;

const MS: u64 = 1_000_000;

fn load(name: &str) -> workload::Scenario {
    let path = format!("{}/../../scenarios/classes/{name}", env!("CARGO_MANIFEST_DIR"));
    workload::load(std::path::Path::new(&path)).unwrap_or_else(|e| panic!("{e}"))
}

fn with_options(mut scn: workload::Scenario, opts: &[(&str, bool)]) -> workload::Scenario {
    for (k, v) in opts {
        scn.scheduler.options.insert(k.to_string(), toml::Value::Boolean(*v));
    }
    scn
}

#[test]
fn a_fifo_hog_leaves_a_fair_task_50ms_in_every_second_and_nothing_without_throttling_and_the_server() {
    let scn = load("linux-fifo-hog.toml");
    let secs = scn.machine.duration / (1000 * MS);
    // Both on (Linux 6.12's defaults): the rt class is throttled after 950 ms, and the fair server is owed
    // the same 50 ms at the end of each second; either one alone gives it too.
    for opts in [vec![], vec![("fair_server", false)], vec![("rt_throttling", false)]] {
        let r = run_scenario(&with_options(scn.clone(), &opts), None).unwrap();
        let fair = r.task("fair").unwrap().cpu_ns;
        assert_eq!(fair, secs * 50 * MS, "{opts:?}");
        assert_eq!(r.task("fifo-hog").unwrap().cpu_ns, secs * 950 * MS, "{opts:?}");
    }
    let r =
        run_scenario(&with_options(scn, &[("fair_server", false), ("rt_throttling", false)]), None).unwrap();
    assert_eq!(r.task("fair").unwrap().cpu_ns, 0, "nothing keeps the fair class alive");
}

#[test]
fn svr4_video_in_the_real_time_class_meets_its_frames_and_starves_typing() {
    let scn = load("svr4-video-rt.toml");
    let rt = run_scenario(&scn, None).unwrap();
    let video = rt.task("video").unwrap().deadlines.clone().unwrap();
    assert_eq!(video.missed, 0, "the real-time video meets every frame");
    let typing = rt.task("typing").unwrap().latency_ns.clone().unwrap();
    // Typing waits behind whole frames (28 ms) and behind the batch job the time-sharing table favours.
    assert!(typing.p99 > 1000 * MS, "typing p99 {} ms", typing.p99 / MS);

    // All in time sharing: the video player competes with the batch job and misses most of its frames.
    let mut all_ts = scn.clone();
    all_ts.tasks[0].class = None;
    let ts = run_scenario(&all_ts, None).unwrap();
    let video = ts.task("video").unwrap().deadlines.clone().unwrap();
    assert!(video.missed * 2 > video.requests, "{video:?}");
}
