//! The machine model: tick billing, timer resolution, overheads (ARCHITECTURE.md; Etsion 2003 §3–4).

use smartsim::engine::timer_fires;
use smartsim::run_scenario;
use workload::TimerKind;

fn scn(src: &str) -> workload::Scenario {
    workload::parse_str(src, "test.toml").expect("valid scenario")
}

#[test]
fn timer_resolution_rounds_up_to_the_next_tick_or_rtc_period() {
    assert_eq!(timer_fires(1_500_000, TimerKind::Hr, 100), 1_500_000);
    assert_eq!(timer_fires(1_500_000, TimerKind::Tick, 100), 10_000_000);
    assert_eq!(timer_fires(10_000_000, TimerKind::Tick, 100), 10_000_000);
    assert_eq!(timer_fires(1_500_000, TimerKind::Tick, 1000), 2_000_000);
    // 1024 Hz: periods of 976562.5 ns; the second interrupt is at 1953125 ns.
    assert_eq!(timer_fires(1_000_000, TimerKind::Rtc(1024), 1000), 1_953_125);
}

/// A task that runs 0.4 ms right after each tick and sleeps before the next one is never billed under
/// tick billing (the running task at a tick pays the whole tick), though it runs 40 % of the time.
#[test]
fn tick_billing_misses_quanta_between_ticks() {
    let src = |billing: &str| {
        format!(
            r#"
[machine]
duration = "1s"
hz = 1000
billing = "{billing}"
timer = "tick"
[scheduler]
policy = "fifo"
[[task]]
name = "short"
model = "periodic"
exec = "400us"
period = "1ms"
start = "100us"
notify = "never"
on_miss = "finish"
estimate = "exact"
"#
        )
    };
    let tick = run_scenario(&scn(&src("tick")), None).unwrap();
    let t = &tick.tasks[0];
    assert!(t.cpu_ns > 390_000_000, "it ran {} ns", t.cpu_ns);
    assert_eq!(t.billing.charged_ns, 0, "never running at a tick, never billed");
    assert_eq!(t.billing.unbilled_quanta, t.billing.quanta);
    let exact = run_scenario(&scn(&src("exact")), None).unwrap();
    assert_eq!(exact.tasks[0].billing.charged_ns, exact.tasks[0].cpu_ns);
    assert_eq!(exact.tasks[0].billing.unbilled_quanta, 0);
}

/// A release asked for every 1.5 ms with a 100 Hz tick timer waits for the next tick: its latency from
/// the nominal release grows to up to 10 ms; with the exact timer it is zero.
#[test]
fn tick_timers_delay_releases() {
    let src = |timer: &str| {
        format!(
            r#"
[machine]
duration = "1s"
hz = 100
timer = "{timer}"
[[task]]
name = "p"
model = "periodic"
exec = "100us"
period = "1500us"
deadline = "20ms"
notify = "never"
on_miss = "finish"
"#
        )
    };
    let hr = run_scenario(&scn(&src("hr")), None).unwrap();
    assert_eq!(hr.tasks[0].latency_ns.as_ref().unwrap().max, 0);
    let tick = run_scenario(&scn(&src("tick")), None).unwrap();
    let l = tick.tasks[0].latency_ns.as_ref().unwrap();
    assert!(l.max > 8_000_000 && l.max <= 10_000_000, "max latency {} ns", l.max);
}

/// Overheads are time the CPU spends before the incoming task progresses, inside the task's slice: with
/// a 1 ms context switch, two CPU-bound tasks alternating every 10 ms progress 9 ms per slice, so their
/// work takes 10/9 as long.
#[test]
fn switch_overhead_slows_progress() {
    let src = |switch: &str| {
        format!(
            r#"
[machine]
duration = "10s"
[machine.overhead]
switch = "{switch}"
[scheduler]
policy = "rr"
slice = "10ms"
[[task]]
name = "a"
model = "cpu"
work = "1s"
[[task]]
name = "b"
model = "cpu"
work = "1s"
"#
        )
    };
    let free = run_scenario(&scn(&src("0ns")), None).unwrap();
    let costly = run_scenario(&scn(&src("1ms")), None).unwrap();
    let (f, c) = (free.tasks[1].finish_ns.unwrap() as f64, costly.tasks[1].finish_ns.unwrap() as f64);
    assert!((f - 2e9).abs() < 1e6, "without overhead both finish at 2 s, got {f}");
    assert!((c / f - 10.0 / 9.0).abs() < 0.005, "with 1 ms per 10 ms slice: {c} vs {f}");
    assert!(costly.system.overhead_ns > 190_000_000);
}

/// A run covers its requested duration, not just up to its last event: one task of 1 ms every 10 ms
/// for 95 ms runs 10 jobs (releases 0, 10, ..., 90 ms; the last ends at 91 ms) and gets 10 ms of
/// 95 ms, 10.53 %; the CPU is idle the other 85 ms. The response time of a 1 ms job is 1 ms exactly.
#[test]
fn a_run_covers_its_whole_duration() {
    let s = scn(r#"
[machine]
duration = "95ms"
[scheduler]
policy = "edf"
[[task]]
name = "p"
model = "periodic"
period = "10ms"
exec = "1ms"
"#);
    let r = run_scenario(&s, None).unwrap();
    assert_eq!(r.duration_ns, 95_000_000);
    assert_eq!(r.tasks[0].cpu_ns, 10_000_000);
    assert_eq!(r.tasks[0].cpu_share, 10.0 / 95.0);
    assert_eq!(r.tasks[0].finish_ns, Some(91_000_000));
    assert_eq!(r.system.idle_ns, 85_000_000);
    assert_eq!(*r.timeline.at.last().unwrap(), 95_000_000, "the timeline reaches the end");
    let resp = r.tasks[0].response_ns.as_ref().unwrap();
    assert_eq!((resp.count, resp.p50, resp.max, resp.mean), (10, 1_000_000, 1_000_000, 1e6));
    assert_eq!(resp.method, trace::summary::Method::Exact);
}

/// A request whose work ends exactly at the end of the run is done (met), not cut off unfinished,
/// and the end of the run does not count as a preemption.
#[test]
fn work_ending_exactly_at_the_end_of_the_run_is_done() {
    let s = scn(r#"
[machine]
duration = "3ms"
[scheduler]
policy = "edf"
[[task]]
name = "p"
model = "periodic"
period = "10ms"
exec = "3ms"
"#);
    let mut sim = smartsim::simulator(&s, None).unwrap();
    sim.record_jobs();
    sim.run_until(u64::MAX);
    let (r, jobs) = sim.finish_all();
    assert_eq!(r.tasks[0].deadlines.as_ref().unwrap().met, 1);
    assert_eq!(jobs.len(), 1);
    assert_eq!((jobs[0].finish_ns, jobs[0].preemptions), (Some(3_000_000), 0));
    assert_eq!(jobs[0].outcome, trace::Outcome::Met);
}

/// Every tick rate a scenario may give, a trace of its run may hold: the trace readers' bound is the
/// scenario's.
#[test]
fn a_trace_reader_takes_every_tick_rate_a_scenario_does() {
    assert_eq!(trace::MAX_HZ, workload::MAX_HZ);
}

/// A task released every 10 ms from 5 ms by a 100 Hz tick (5 ms late), 1 ms each, due `deadline` after
/// its nominal release, dropped at its deadline.
fn released_on_a_tick(deadline: &str) -> workload::Scenario {
    scn(&format!(
        "[machine]\nduration = \"1s\"\nhz = 100\ntimer = \"tick\"\n[scheduler]\npolicy = \"edf\"\n[[task]]\nname = \"p\"\n\
         model = \"periodic\"\nperiod = \"10ms\"\ndeadline = \"{deadline}\"\nexec = \"1ms\"\nstart = \"5ms\"\non_miss = \"abort\"\n"
    ))
}

/// Issue 36: a request that a tick-granular timer releases at or after its deadline, under `on_miss =
/// "abort"`, is dropped at its release without running (a frame woken too late to be shown); one
/// released in time runs.
#[test]
fn a_request_released_after_its_deadline_is_aborted_without_running() {
    // Woken at 10, 20, ..., 990 ms (the wake-up at 1 s is the run's end), past a 3 ms deadline.
    let r = smartsim::run_scenario(&released_on_a_tick("3ms"), None).unwrap();
    let t = &r.tasks[0];
    let d = t.deadlines.as_ref().unwrap();
    assert_eq!((d.met, d.aborted), (0, 99));
    assert_eq!(t.cpu_ns, 0, "no request ran");
    // With a deadline past the tick, every request runs and is met.
    let r = smartsim::run_scenario(&released_on_a_tick("7ms"), None).unwrap();
    assert_eq!(r.tasks[0].deadlines.as_ref().unwrap().met, 99);
}

/// Issue 36, Linux 2.4's short real-time `usleep` (Regehr §5.5): a task 4 ms every 10 ms from 5 ms,
/// woken by a 100 Hz tick. Asleep, a request is woken at the next tick (5 ms late); with `busy_wait =
/// "2ms"`, one that ends 1 ms before its next request spins through that millisecond on the CPU and
/// the next request starts at its exact time, the one after that sleeps again: every other request
/// is on time, and the spins are CPU the task used.
#[test]
fn a_short_wait_is_spun_through_and_the_request_starts_on_time() {
    let run = |busy: &str| {
        let s = scn(&format!(
            "[machine]\nduration = \"1s\"\nhz = 100\n[scheduler]\npolicy = \"fifo\"\n[[task]]\nname = \"v\"\n\
             model = \"periodic\"\nperiod = \"10ms\"\nexec = \"4ms\"\nstart = \"5ms\"\ntimer = \"tick\"\n\
             on_miss = \"finish\"\n{busy}"
        ));
        let mut sim = smartsim::simulator(&s, None).unwrap();
        sim.record_jobs();
        sim.run_until(u64::MAX);
        sim.finish_all()
    };
    let (asleep, jobs) = run("");
    assert!(jobs.iter().all(|j| j.release_ns % 10_000_000 == 0), "every request woken on a tick");
    assert_eq!(asleep.tasks[0].cpu_ns, 99 * 4_000_000);
    let (spun, jobs) = run("busy_wait = \"2ms\"\n");
    for j in &jobs {
        // Requests 0, 2, 4, ... are woken by the tick at 10, 30, ... ms; 1, 3, ... start at 15, 35, ...
        let want = if j.job % 2 == 0 {
            10_000_000 + 20_000_000 * (j.job / 2)
        } else {
            15_000_000 + 20_000_000 * (j.job / 2)
        };
        assert_eq!(j.release_ns, want, "request {}", j.job);
        assert_eq!(j.start_ns, Some(want), "request {} starts at its release", j.job);
    }
    let n = jobs.len() as u64;
    let spins = jobs.iter().filter(|j| j.job % 2 == 1).count() as u64;
    assert_eq!(spun.tasks[0].cpu_ns, n * 4_000_000 + spins * 1_000_000, "each spin is 1 ms of CPU");
    assert!(spun.tasks[0].deadlines.as_ref().unwrap().met == n);
}

/// Linux 2.4's `nanosleep` (timer `linux-2.4`): a sleep of d begun at t ends on tick ⌊t·HZ⌋ + ⌈d·HZ⌉ + 1,
/// never early and up to two ticks late; a passed time is no sleep.
#[test]
fn a_linux_2_4_sleep_ends_one_tick_after_the_sleep_rounded_up_from_the_jiffies() {
    use smartsim::engine::sleep_ends;
    use workload::TimerKind::Linux24;
    let ms = 1_000_000;
    // From 15 ms (jiffies 1) for 30 ms (3 ticks): tick 5, 50 ms, 5 ms late.
    assert_eq!(sleep_ends(15 * ms, 45 * ms, Linux24, 100), 50 * ms);
    // From a tick for a whole tick: still one more, 10 ms late.
    assert_eq!(sleep_ends(10 * ms, 20 * ms, Linux24, 100), 30 * ms);
    // From 19.9 ms for 0.2 ms: ⌈0.02⌉ = 1 tick from jiffies 1, plus one: 30 ms, almost two ticks late.
    assert_eq!(sleep_ends(19_900_000, 20_100_000, Linux24, 100), 30 * ms);
    assert_eq!(sleep_ends(20 * ms, 20 * ms, Linux24, 100), 20 * ms, "nothing to sleep");
    // At 300 Hz a tick falls between nanoseconds (tick 1 at 3,333,333 ns): from exactly on it, the
    // jiffies are 1, and 1 ms is one tick more: tick 3, 10 ms.
    assert_eq!(sleep_ends(3_333_333, 4_333_333, Linux24, 300), 10 * ms);
    // Any other timer: as it fires for the target.
    assert_eq!(sleep_ends(15 * ms, 45 * ms, workload::TimerKind::Tick, 100), 50 * ms);
    assert_eq!(sleep_ends(15 * ms, 41 * ms, workload::TimerKind::Tick, 100), 50 * ms);
    assert_eq!(sleep_ends(15 * ms, 41 * ms, workload::TimerKind::Hr, 100), 41 * ms);
}

/// A spinning task (`busy_wait`) loses no request and never panics, whatever preempts its spin (a
/// higher-priority task released just before its request), whichever timer wakes it, whatever it does
/// with a late request, and when it stops mid-spin: every request released has an outcome.
#[test]
fn a_spinning_task_accounts_for_every_request_it_releases() {
    for timer in ["hr", "tick", "linux-2.4"] {
        for on_miss in ["finish", "abort"] {
            for (hi_period, hi_exec) in [("8ms", "3ms"), ("7ms", "1ms"), ("11ms", "4ms"), ("33ms", "9ms")] {
                for stop in ["", "stop = \"517ms\"\n"] {
                    let s = scn(&format!(
                        "[machine]\nduration = \"1s\"\nhz = 100\n[scheduler]\npolicy = \"fifo\"\n\
                         [[task]]\nname = \"hi\"\nmodel = \"periodic\"\nexec = \"{hi_exec}\"\nperiod = \"{hi_period}\"\n\
                         priority = 2\non_miss = \"finish\"\n\
                         [[task]]\nname = \"spin\"\nmodel = \"periodic\"\nexec = \"5ms..9ms\"\nperiod = \"10ms\"\n\
                         priority = 1\ntimer = \"{timer}\"\nbusy_wait = \"2ms\"\non_miss = \"{on_miss}\"\n{stop}"
                    ));
                    let r = smartsim::run_scenario(&s, None).unwrap();
                    let requests: u64 =
                        r.tasks.iter().filter_map(|t| t.deadlines.as_ref()).map(|d| d.requests).sum();
                    assert_eq!(
                        requests, r.system.jobs,
                        "{timer}, {on_miss}, hi {hi_exec}/{hi_period}, {stop:?}: released {} requests, {requests} accounted",
                        r.system.jobs
                    );
                }
            }
        }
    }
}
