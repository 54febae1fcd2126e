//! The run's memory bound holds for what a thread can record: for any period, count, jitter, window
//! and think time, the wake-ups and requests a thread's model can produce in its window, run as fast
//! as the model allows (every sleep ends on time, every burst takes its draw), are at most what
//! `budget::samples` reserves for it and the run's estimate counts.

use hourglass::budget::samples;
use hourglass::config::{ThreadSpec, Workload};
use proptest::prelude::*;
use workload::{Exec, Model, Periodic, Stream, TaskSpec};

/// A time in ns: often short, sometimes long.
fn time() -> impl Strategy<Value = u64> {
    prop_oneof![2 => 1..=1_000u64, 2 => 1..=10_000_000u64, 1 => 1..=2_000_000_000u64]
}

/// The requests a periodic task's stream releases inside its thread's window of a run of `d`.
fn periodic_requests(th: &ThreadSpec, d: u64, seed: u64) -> u64 {
    let t = th.workload.task().unwrap();
    let finish = th.finish.unwrap_or(d).min(d);
    let mut s = Stream::new(t, seed);
    let mut n = 0;
    while let Ok(r) = s.next_request(finish) {
        if r.at >= finish {
            break;
        }
        n += 1;
    }
    n
}

/// The wake-ups of an interactive task inside its window, each burst taking its draw.
fn interactive_wakes(th: &ThreadSpec, d: u64, seed: u64) -> u64 {
    let t = th.workload.task().unwrap();
    let finish = th.finish.unwrap_or(d).min(d);
    let mut s = Stream::new(t, seed);
    let (mut from, mut n) = (th.start, 0);
    while let Some(i) = s.next_interaction() {
        let wake = from.saturating_add(i.wait);
        if wake >= finish {
            break;
        }
        n += 1;
        from = wake.saturating_add(i.burst);
    }
    n
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn a_periodic_task_releases_no_more_requests_than_are_reserved(
        period in time(), d in time(), start in time(), stop in proptest::option::of(time()),
        count in proptest::option::of(1..=1000u64), jitter in proptest::option::of(time()), seed in any::<u64>(),
    ) {
        let mut p = Periodic::new(Exec::Fixed(1), period.max(1));
        p.count = count;
        let mut t = TaskSpec::new("p", Model::Periodic(p));
        t.jitter = jitter.map(|j| j % period.max(1));
        t.start = start % d;
        t.stop = stop.map(|s| t.start + s);
        let th = ThreadSpec::for_task(0, &t);
        let n = periodic_requests(&th, d, seed);
        prop_assert!(n <= samples(&th, d), "{} requests, {} reserved", n, samples(&th, d));
    }

    #[test]
    fn an_interactive_task_wakes_no_more_than_is_reserved(
        think in time(), burst in time(), d in 1..=100_000_000u64, seed in any::<u64>(),
        count in proptest::option::of(1..=1000u64), exp in any::<bool>(),
    ) {
        let think = if exp { Exec::Exponential { mean: think } } else { Exec::Uniform(think / 2, think) };
        let t = TaskSpec::new("i", Model::Interactive { think, burst: Exec::Fixed(burst), count });
        let th = ThreadSpec::for_task(0, &t);
        let n = interactive_wakes(&th, d, seed);
        prop_assert!(n <= samples(&th, d), "{} wake-ups, {} reserved", n, samples(&th, d));
    }

    #[test]
    fn a_lat_thread_wakes_no_more_than_is_reserved(period in time(), d in time(), start in time()) {
        let mut th = ThreadSpec::new(0);
        th.workload = Workload::Lat { period };
        th.start = start % d;
        // LAT sleeps a period from each wake-up: at best it wakes at start + k·period.
        let n = (d - th.start) / period;
        prop_assert!(n <= samples(&th, d));
    }
}
