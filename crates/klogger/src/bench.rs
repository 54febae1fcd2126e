//! Recording overhead, measured side by side: a context-switch-heavy load (two threads
//! ping-ponging one byte through two pipes) runs for a fixed time without recording and with a
//! system-wide recording, `pairs` times, the order swapped every other pair (without first, then
//! with first) so that a steady drift of a shared machine does not always favour one side. Each
//! pair gives a throughput ratio (with / without); the result is their median with the minimum and
//! maximum as its spread. The recorder's own consumer thread runs on the same machine, so its cost
//! is included. With `events_per_s` the busy work per round trip is first calibrated (a few
//! half-second recorded runs, [`next_work`]) so that the recorded ping-pong makes that many events
//! per second: the cost is then measured at the rate asked, on any machine.

use std::os::fd::AsFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;
use tracing::{info, warn};

use crate::record::{record, RecordOptions, RecordStats, Target};
use crate::sys::{self, read_byte, thread_cpu_ns, write_byte};

/// Options of [`run`].
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Length of each measurement.
    pub each: Duration,
    /// Number of (without, with) pairs.
    pub pairs: usize,
    /// Pin both threads to CPU 0.
    pub pin: bool,
    /// Busy work (µs) the echo thread does per round trip, to bring the event rate down to a
    /// chosen level while staying context-switch heavy (ignored with `events_per_s`).
    pub work_us: u64,
    /// Instead of `work_us`: the recorded event rate wanted; the work per round trip that gives
    /// it is found first by short recorded runs (see [`next_work`]).
    pub events_per_s: Option<f64>,
    /// Time the BPF programs (BPF_ENABLE_STATS) to split the cost; this timing itself adds
    /// overhead, so it is off for a clean throughput ratio.
    pub bpf_stats: bool,
    /// Report progress (each calibration run, each pair) as `info` events of `tracing`.
    pub progress: bool,
}

/// One pair of measurements.
#[derive(Clone, Debug, Serialize)]
pub struct Pair {
    /// Round trips per second without recording.
    pub off_rt_per_s: f64,
    /// Round trips per second while recording.
    pub on_rt_per_s: f64,
    /// on / off.
    pub ratio: f64,
    /// CPU time of the ping-pong threads per round trip without recording (ns).
    pub off_cpu_ns_per_rt: f64,
    /// The same while recording, plus the consumer thread's CPU time per round trip (ns).
    pub on_cpu_ns_per_rt: f64,
    /// off_cpu_ns_per_rt / on_cpu_ns_per_rt: the throughput ratio a machine running nothing else
    /// would show, from CPU times, which other programs on a shared machine barely disturb (see
    /// [`PingPong::cpu_ns_per_rt`] for what it leaves out).
    pub cpu_ratio: f64,
    /// Events recorded per second of the recorded ping-pong (all events recorded over the time
    /// the ping-pong ran).
    pub events_per_s: f64,
    /// Events lost in the recorded run.
    pub lost: u64,
    /// Extra time per recorded event: (1/on - 1/off) per round trip divided by events per
    /// round trip (ns). Wall-clock based: as noisy as the machine.
    pub ns_per_event: f64,
    /// Time in the BPF programs per run, as timed by the kernel (ns).
    pub bpf_ns_per_event: f64,
    /// CPU time of the user-space consumer per event (ns).
    pub consumer_ns_per_event: f64,
}

/// Result of [`run`].
#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    /// "klogger".
    pub tool: String,
    /// "overhead".
    pub bench: String,
    /// Whether the threads were pinned to CPU 0.
    pub pinned: bool,
    /// Busy work per round trip (ns), as given or as calibrated.
    pub work_ns: u64,
    /// The event rate asked for with `--events-per-s`, if it was.
    pub target_events_per_s: Option<f64>,
    /// Seconds per measurement.
    pub each_s: f64,
    /// The pairs, in order.
    pub pairs: Vec<Pair>,
    /// Median of the pairs' ratios.
    pub median_ratio: f64,
    /// Smallest of the pairs' ratios (the spread, with `max_ratio`).
    pub min_ratio: f64,
    /// Largest of the pairs' ratios.
    pub max_ratio: f64,
    /// Minimum, median and maximum of the pairs' [`Pair::cpu_ratio`].
    pub cpu_ratio: [f64; 3],
    /// 1 - median_ratio, in percent: throughput lost to recording.
    pub overhead_pct: f64,
    /// Median events per second while recording.
    pub median_events_per_s: f64,
    /// Median extra time per recorded event from the throughput loss (ns).
    pub median_ns_per_event: f64,
    /// Median in-kernel (BPF program) plus consumer CPU time per event (ns), with `bpf_stats`:
    /// the CPU cost of recording measured directly (NaN without `bpf_stats`).
    pub median_cpu_ns_per_event: f64,
    /// That CPU cost at 100k events/s, as a share of one CPU (%): a projection from the
    /// measured cost per event, not a measurement at that rate.
    pub projected_pct_at_100k: f64,
}

/// Pins the calling thread to one CPU.
pub use crate::sys::pin_to_cpu;

/// What one ping-pong run measured.
#[derive(Clone, Copy, Debug)]
pub struct PingPong {
    /// Round trips per second (wall clock).
    pub rt_per_s: f64,
    /// CPU time of the two threads per round trip (ns): the BPF programs run in the context of
    /// the task that hits the tracepoint, so it holds their cost for every switch between the
    /// two threads, every wake-up they make and every interrupt they take, but not for a switch
    /// made by the idle task (unpinned, a CPU goes idle and back each round trip).
    pub cpu_ns_per_rt: f64,
    /// How long it ran (s, wall clock).
    pub elapsed_s: f64,
}

/// Runs the ping-pong for `dur` (the echo thread busy for `work` of its own CPU time per round
/// trip, so that time taken by other programs does not shorten the work).
pub fn pingpong(dur: Duration, pin: bool, work: Duration) -> Result<PingPong> {
    let (a_r, a_w) = sys::pipe().context("pipe2")?;
    let (b_r, b_w) = sys::pipe().context("pipe2")?;
    // Echo thread: reads a byte from pipe A and writes it to pipe B, until pipe A closes.
    let work_ns = work.as_nanos() as u64;
    let echo = std::thread::spawn(move || {
        if pin {
            pin_to_cpu(0);
        }
        let c0 = thread_cpu_ns();
        while read_byte(a_r.as_fd()) {
            if work_ns > 0 {
                let t = thread_cpu_ns();
                while thread_cpu_ns() - t < work_ns {
                    std::hint::spin_loop();
                }
            }
            if !write_byte(b_w.as_fd()) {
                break;
            }
        }
        thread_cpu_ns() - c0
    });
    if pin {
        pin_to_cpu(0);
    }
    let c0 = thread_cpu_ns();
    let t0 = Instant::now();
    let mut n = 0u64;
    while t0.elapsed() < dur {
        for _ in 0..64 {
            if !write_byte(a_w.as_fd()) || !read_byte(b_r.as_fd()) {
                break;
            }
            n += 1;
        }
    }
    let el = t0.elapsed().as_secs_f64();
    let cpu = thread_cpu_ns() - c0;
    drop(a_w); // echo thread sees EOF and exits
    let echo_cpu = echo.join().unwrap_or(0);
    if pin {
        // Undo the pinning of the calling thread.
        sys::unpin();
    }
    let rts = n.max(1) as f64;
    Ok(PingPong { rt_per_s: n as f64 / el, cpu_ns_per_rt: (cpu + echo_cpu) as f64 / rts, elapsed_s: el })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One recorded ping-pong: a system-wide recording into `file` is started, the ping-pong runs
/// for `dur` once the recorder is ready, then the recording stops.
fn recorded(o: &BenchOptions, file: &Path, dur: Duration, work: Duration) -> Result<(PingPong, RecordStats)> {
    let stop = Arc::new(AtomicBool::new(false));
    let ready = Arc::new(AtomicBool::new(false));
    let opts = RecordOptions {
        output: file.to_path_buf(),
        target: Target::System,
        duration: Some(dur * 4 + Duration::from_secs(30)),
        buffer_bytes: 16 << 20,
        max_bytes: 4 << 30,
        stop: stop.clone(),
        ready: Some(ready.clone()),
        progress: false,
        bpf_stats: o.bpf_stats,
    };
    let rec = std::thread::spawn(move || record(&opts));
    let t0 = Instant::now();
    while !ready.load(Ordering::SeqCst) && !rec.is_finished() {
        if t0.elapsed() > Duration::from_secs(30) {
            stop.store(true, Ordering::SeqCst);
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let on = if ready.load(Ordering::SeqCst) { Some(pingpong(dur, o.pin, work)) } else { None };
    stop.store(true, Ordering::SeqCst);
    let st = rec.join().map_err(|_| anyhow::anyhow!("recorder thread panicked"))??;
    Ok((on.context("the recorder did not become ready")??, st))
}

/// Events per second of the ping-pong `pp` recorded in `st`: all the events recorded over the
/// time the ping-pong ran (the recording starts a little before and ends a little after it, but
/// an idle machine adds few events then; dividing by the recording's whole length would count
/// that time as if it ran at the ping-pong's rate).
fn events_per_s(st: &RecordStats, pp: &PingPong) -> f64 {
    st.events as f64 / pp.elapsed_s
}

/// The next guess of the work per round trip that brings a recorded ping-pong to `target`
/// events/s, from a recorded run with `work` that gave `rate` events/s at `rt_per_s` round trips
/// per second. The events per round trip do not depend on the work (the same switches and
/// wake-ups happen, only further apart), so the round trip wanted is `events_per_rt / target`
/// and the work changes by the difference to the round trip measured. `None` when no work at
/// all would be needed, i.e. the ping-pong cannot be made as fast as `target` by removing work.
pub fn next_work(work: Duration, rate: f64, rt_per_s: f64, target: f64) -> Option<Duration> {
    let events_per_rt = rate / rt_per_s;
    let wanted_rt_s = events_per_rt / target;
    let next = work.as_secs_f64() + wanted_rt_s - 1.0 / rt_per_s;
    (next.is_finite() && next >= 0.0).then(|| Duration::from_secs_f64(next))
}

/// Work per round trip that brings the recorded ping-pong to `target` events/s, by recorded
/// runs of half a second (at most six): the first without work, each next one with the work
/// [`next_work`] computes from the last, until the rate is within 1 % of the target. The work
/// returned is always one that was measured; if none came within 1 %, the last one, with a
/// warning.
fn calibrate(o: &BenchOptions, file: &Path, target: f64) -> Result<Duration> {
    const RUNS: usize = 6;
    let dur = Duration::from_millis(500);
    let mut work = Duration::ZERO;
    for step in 0..RUNS {
        let (pp, st) = recorded(o, file, dur, work)?;
        if st.events == 0 || pp.rt_per_s <= 0.0 {
            anyhow::bail!(
                "calibration run {}: {} events recorded in {:.0} round trips: the recorder or the \
                 ping-pong is not working",
                step + 1,
                st.events,
                pp.rt_per_s * pp.elapsed_s
            );
        }
        let rate = events_per_s(&st, &pp);
        if o.progress {
            info!(
                "calibration {}: {:.2} us of work per round trip, {:.0} events/s recorded",
                step + 1,
                work.as_secs_f64() * 1e6,
                rate
            );
        }
        if (rate - target).abs() <= target * 0.01 {
            return Ok(work);
        }
        if step + 1 == RUNS {
            warn!(
                "after {RUNS} calibration runs the rate is {rate:.0} events/s, not within 1 % of \
                 {target:.0}; measuring with {:.2} us of work",
                work.as_secs_f64() * 1e6
            );
            break;
        }
        work = match next_work(work, rate, pp.rt_per_s, target) {
            Some(w) => w,
            None if work.is_zero() => anyhow::bail!(
                "--events-per-s {target:.0}: this ping-pong{} makes only {rate:.0} events/s while \
                 recorded, with no work at all between its switches; ask for fewer{}",
                if o.pin { " (both threads on CPU 0)" } else { "" },
                if o.pin { "" } else { " or try --pin" }
            ),
            None => Duration::ZERO,
        };
    }
    Ok(work)
}

/// Runs the benchmark (needs the privileges of [`record`]).
pub fn run(o: &BenchOptions) -> Result<BenchResult> {
    crate::record::preflight()?;
    let dir = std::env::temp_dir();
    let file = dir.join(format!("klogger-bench-{}.klog", std::process::id()));
    let work = match o.events_per_s {
        Some(target) => calibrate(o, &file, target)?,
        None => Duration::from_micros(o.work_us),
    };
    let mut pairs = Vec::new();
    for i in 0..o.pairs {
        let off_first = i % 2 == 0;
        let off_before = if off_first { Some(pingpong(o.each, o.pin, work)?) } else { None };
        let (on, st) = recorded(o, &file, o.each, work)?;
        let off = match off_before {
            Some(off) => off,
            None => pingpong(o.each, o.pin, work)?,
        };
        let events_per_s = events_per_s(&st, &on);
        let on_elapsed_s = on.elapsed_s;
        let (off, on, off_cpu, on_cpu) = (off.rt_per_s, on.rt_per_s, off.cpu_ns_per_rt, on.cpu_ns_per_rt);
        let consumer_per_rt = st.consumer_cpu_ns as f64 / (on * on_elapsed_s).max(1.0);
        let p = Pair {
            off_rt_per_s: off,
            on_rt_per_s: on,
            ratio: on / off,
            off_cpu_ns_per_rt: off_cpu,
            on_cpu_ns_per_rt: on_cpu + consumer_per_rt,
            cpu_ratio: off_cpu / (on_cpu + consumer_per_rt),
            events_per_s,
            lost: st.lost,
            ns_per_event: (1e9 / on - 1e9 / off) / (events_per_s / on),
            bpf_ns_per_event: st.bpf_run_ns.map(|(ns, n)| ns as f64 / n.max(1) as f64).unwrap_or(f64::NAN),
            consumer_ns_per_event: st.consumer_cpu_ns as f64 / st.events.max(1) as f64,
        };
        if o.progress {
            info!(
                "pair {}/{}: without {:.0} rt/s, with {:.0} rt/s, ratio {:.4}, {:.0} events/s",
                i + 1,
                o.pairs,
                p.off_rt_per_s,
                p.on_rt_per_s,
                p.ratio,
                p.events_per_s
            );
        }
        pairs.push(p);
    }
    let _ = std::fs::remove_file(&file);
    let mut r: Vec<f64> = pairs.iter().map(|p| p.ratio).collect();
    let mut e: Vec<f64> = pairs.iter().map(|p| p.events_per_s).collect();
    let mr = median(&mut r);
    let mut cr: Vec<f64> = pairs.iter().map(|p| p.cpu_ratio).collect();
    let mcr = median(&mut cr);
    let cpu_ratio = [cr.first().copied().unwrap_or(f64::NAN), mcr, cr.last().copied().unwrap_or(f64::NAN)];
    let mut c: Vec<f64> = pairs.iter().map(|p| p.ns_per_event).collect();
    let mc = median(&mut c);
    let mut k: Vec<f64> = pairs.iter().map(|p| p.bpf_ns_per_event + p.consumer_ns_per_event).collect();
    let mk = median(&mut k);
    Ok(BenchResult {
        tool: "klogger".into(),
        bench: "overhead".into(),
        pinned: o.pin,
        work_ns: work.as_nanos() as u64,
        target_events_per_s: o.events_per_s,
        each_s: o.each.as_secs_f64(),
        pairs,
        median_ratio: mr,
        min_ratio: r.first().copied().unwrap_or(f64::NAN),
        max_ratio: r.last().copied().unwrap_or(f64::NAN),
        cpu_ratio,
        overhead_pct: (1.0 - mr) * 100.0,
        median_events_per_s: median(&mut e),
        median_ns_per_event: mc,
        median_cpu_ns_per_event: mk,
        projected_pct_at_100k: mk * 1e5 / 1e9 * 100.0,
    })
}

/// The result as text.
pub fn text(r: &BenchResult) -> String {
    let ncpu = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut o = format!(
        "klogger overhead: pipe ping-pong{}{}, {} pairs of {:.1} s, side by side\n\
         {:>6} {:>14} {:>14} {:>8} {:>9} {:>12} {:>6} {:>10} {:>10} {:>10}\n",
        if r.pinned { " (both threads on CPU 0)" } else { "" },
        match (r.work_ns, r.target_events_per_s) {
            (w, Some(t)) => format!(
                " with {:.2} us of work per round trip (calibrated for {t:.0} events/s)",
                w as f64 / 1e3
            ),
            (0, None) => String::new(),
            (w, None) => format!(" with {:.2} us of work per round trip", w as f64 / 1e3),
        },
        r.pairs.len(),
        r.each_s,
        "pair",
        "without rt/s",
        "with rt/s",
        "ratio",
        "cpu ratio",
        "events/s",
        "lost",
        "ns/event",
        "bpf ns/ev",
        "user ns/ev"
    );
    for (i, p) in r.pairs.iter().enumerate() {
        o += &format!(
            "{:>6} {:>14.0} {:>14.0} {:>8.4} {:>9.4} {:>12.0} {:>6} {:>10.0} {:>10.0} {:>10.0}\n",
            i + 1,
            p.off_rt_per_s,
            p.on_rt_per_s,
            p.ratio,
            p.cpu_ratio,
            p.events_per_s,
            p.lost,
            p.ns_per_event,
            p.bpf_ns_per_event,
            p.consumer_ns_per_event
        );
    }
    o += &format!(
        "ratio with/without recording: min {:.4}, median {:.4}, max {:.4} over {} pairs (the spread \
         is this machine's noise)\n",
        r.min_ratio,
        r.median_ratio,
        r.max_ratio,
        r.pairs.len()
    );
    o += &format!(
        "CPU-time ratio (threads' CPU per round trip without / with, consumer included): min {:.4}, \
         median {:.4}, max {:.4}: {:.2}% more CPU per round trip\n",
        r.cpu_ratio[0],
        r.cpu_ratio[1],
        r.cpu_ratio[2],
        (1.0 / r.cpu_ratio[1] - 1.0) * 100.0
    );
    o += &format!(
        "median ratio {:.4}: {:.2}% throughput lost at {:.0} events/s (goal < 1% at 100k events/s; \
         klogger 2003: 0.63-1.18%)\n\
         throughput-derived cost {:.0} ns per recorded event (as noisy as the machine)\n",
        r.median_ratio, r.overhead_pct, r.median_events_per_s, r.median_ns_per_event,
    );
    if r.median_cpu_ns_per_event.is_finite() {
        o += &format!(
            "measured CPU cost {:.0} ns per event (BPF programs as timed by the kernel, with that \
             timing's own cost, + consumer thread); projected at 100k events/s: {:.2}% of one CPU \
             ({:.2}% of this {}-CPU machine)\n",
            r.median_cpu_ns_per_event,
            r.projected_pct_at_100k,
            r.projected_pct_at_100k / ncpu as f64,
            ncpu
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_for_a_rate_follows_from_the_events_per_round_trip() {
        // 4 events per round trip at 200,000 round trips/s (5 us each) with no work: 800,000
        // events/s. 100,000 events/s wants 25,000 round trips/s, 40 us each: 35 us of work.
        let near = |w: Duration, ns: i128| (w.as_nanos() as i128 - ns).abs() <= 1;
        let w = next_work(Duration::ZERO, 800_000.0, 200_000.0, 100_000.0).unwrap();
        assert!(near(w, 35_000), "{w:?}");
        // From 35 us of work at 80,000 events/s (20,000 round trips/s, 50 us each: the work costs
        // more than it was asked, say under recording): 10 us less.
        let w = next_work(Duration::from_micros(35), 80_000.0, 20_000.0, 100_000.0).unwrap();
        assert!(near(w, 25_000), "{w:?}");
        // A rate above what no work at all gives cannot be reached by removing work.
        assert_eq!(next_work(Duration::ZERO, 800_000.0, 200_000.0, 1_000_000.0), None);
        // Nothing measured (no round trip) gives no guess rather than a huge or NaN one.
        assert_eq!(next_work(Duration::ZERO, 0.0, 0.0, 100_000.0), None);
    }
}
