//! `smart-periodic`: a periodic real-time task for scx_smart tests, using libsmart (SMART ch. 3).
//! Every `--period` it releases a request of `--work` CPU time with a deadline `--deadline` after the
//! release, sets a time constraint (notify as soon as a miss is foreseen), and counts deadlines met and
//! missed. Without a scheduler to register with (`--no-smart`) it runs the same loop unconstrained, to
//! measure the default scheduler. Prints one JSON line: the counts, and where the time of the missed
//! jobs went (`scx_smart::jobs`: a late timer, waiting for the CPU before starting or while working,
//! CPU charged beyond the work, an overrun of the previous job), with the median and maximum of each
//! loss over all jobs.
//! `--jobs FILE` also writes one JSON line per job (`scx_smart::jobs::JobTimes`); then
//! `smart-periodic --explain FILE STALLS` puts each missed job down to a cause, given the machine's
//! stalls that `scx_smart --stall-log STALLS` wrote (see `scx_smart::jobs::explain`).

use scx_smart::jobs::{explain, Cause, JobTimes, Loss, Schedstat, Stalls};
use std::io::Write;
use std::time::Duration;

const HELP: &str =
    "usage: smart-periodic [--work MS] [--period MS] [--deadline MS] [--count N] [--no-smart] [--jobs FILE]
       smart-periodic --explain JOBS STALLS

A periodic task with libsmart time constraints (defaults: 10 ms of work every 40 ms, deadline 15 ms, 250
jobs). Prints one JSON line: deadlines met and missed, the missed ones by their largest loss, and the
median and largest of each loss in microseconds.
  --no-smart        do not register with scx_smart (measures the default scheduler)
  --jobs FILE       also write one JSON line per job
  --explain J S     read a --jobs file and a scx_smart --stall-log file and print, as one JSON line, what
                    each missed job is put down to: machine_stopped (it would have met its deadline
                    without the machine's stalls inside its window), else its largest loss";

fn explain_files(jobs: &str, stalls: &str) -> Result<String, String> {
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    let st = Stalls::parse(&read(stalls)?).map_err(|e| format!("{stalls}: {e}"))?;
    let mut causes: Vec<(Cause, u64)> = Vec::new();
    let (mut n, mut missed, mut stalled_in_jobs) = (0u64, 0u64, 0u64);
    for (k, line) in read(jobs)?.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let j: JobTimes = serde_json::from_str(line).map_err(|e| format!("{jobs}: line {}: {e}", k + 1))?;
        n += 1;
        stalled_in_jobs += st.within(j.release, j.finish);
        if let Some(c) = explain(&j, &st) {
            missed += 1;
            match causes.iter_mut().find(|(x, _)| *x == c) {
                Some(e) => e.1 += 1,
                None => causes.push((c, 1)),
            }
        }
    }
    let all = std::iter::once(Cause::Stopped).chain(Loss::ALL.map(Cause::Loss));
    let counts: Vec<String> = all
        .map(|c| format!("\"{}\":{}", c.name(), causes.iter().find(|x| x.0 == c).map_or(0, |x| x.1)))
        .collect();
    Ok(format!(
        "{{\"jobs\":{n},\"missed\":{missed},\"missed_because\":{{{}}},\"stalls\":{},\"stalled_ms\":{:.1},\"stalled_ms_in_jobs\":{:.1}}}",
        counts.join(","),
        st.spans().len(),
        st.total() as f64 / 1e6,
        stalled_in_jobs as f64 / 1e6
    ))
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime into a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn ms_arg(args: &[String], k: &str, default: f64) -> u64 {
    let v = args
        .iter()
        .position(|a| a == k)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |s| s.parse::<f64>().unwrap_or_else(|_| panic!("{k} takes milliseconds")));
    (v * 1e6) as u64
}

/// Median and maximum, ns.
fn med_max(mut v: Vec<u64>) -> (u64, u64) {
    v.sort_unstable();
    (v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0), v.last().copied().unwrap_or(0))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{HELP}");
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--explain") {
        let (Some(j), Some(s)) = (args.get(i + 1), args.get(i + 2)) else {
            eprintln!("smart-periodic: --explain needs a jobs file and a stall file\n\n{HELP}");
            std::process::exit(2);
        };
        match explain_files(j, s) {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("smart-periodic: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let work = ms_arg(&args, "--work", 10.0);
    let period = ms_arg(&args, "--period", 40.0);
    let deadline = ms_arg(&args, "--deadline", 15.0);
    let count: u64 = args
        .iter()
        .position(|a| a == "--count")
        .and_then(|i| args.get(i + 1))
        .map_or(250, |s| s.parse().expect("--count takes a whole number"));
    let no_smart = args.iter().any(|a| a == "--no-smart");
    let mut per_job = args.iter().position(|a| a == "--jobs").map(|i| {
        let path = args.get(i + 1).expect("--jobs takes a file name");
        std::io::BufWriter::new(std::fs::File::create(path).unwrap_or_else(|e| panic!("{path}: {e}")))
    });
    let smart = if no_smart {
        None
    } else {
        match libsmart::Smart::register() {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("smart-periodic: libsmart registration failed: {e}");
                std::process::exit(1);
            }
        }
    };
    let stat = Schedstat::open().expect("/proc/thread-self/schedstat (a kernel with CONFIG_SCHED_INFO)");
    let delay = || stat.read().map_or(0, |s| s.1);
    let (mut met, mut missed, mut notified_seen) = (0u64, 0u64, 0u64);
    let mut jobs: Vec<JobTimes> = Vec::with_capacity(count as usize);
    let t0 = libsmart::now() + period;
    // The constraint of each request is set before sleeping until its release, so the scheduler knows it
    // at the wake-up that starts the request (it reads constraints when a task becomes runnable).
    for k in 0..count {
        let release = t0 + k * period;
        let due = release + deadline;
        if let Some(s) = smart {
            // The estimate carries the 10 % margin of SMART's video player (§3.5).
            let _ = s.set_time_constraint(due, Some(work + work / 10), Some(0));
        }
        let d0 = delay();
        let now = libsmart::now();
        let slept = now < release;
        if slept {
            std::thread::sleep(Duration::from_nanos(release - now));
        }
        let resumed = libsmart::now();
        let d1 = delay();
        let c0 = thread_cpu_ns();
        while thread_cpu_ns() - c0 < work {
            std::hint::black_box(0u64);
        }
        let finish = libsmart::now();
        let cpu = thread_cpu_ns() - c0;
        let d2 = delay();
        if let Some(s) = smart {
            notified_seen += s.take_notification().ok().flatten().map_or(0, |_| 1);
        }
        let j = JobTimes {
            release,
            due,
            resumed,
            finish,
            slept,
            work,
            cpu,
            wait_to_start: d1.saturating_sub(d0),
            wait_in_work: d2.saturating_sub(d1),
        };
        if j.met() {
            met += 1
        } else {
            missed += 1
        }
        if let Some(f) = per_job.as_mut() {
            writeln!(f, "{}", serde_json::to_string(&j).expect("a job serialises")).expect("writing --jobs");
        }
        jobs.push(j);
    }
    if let Some(s) = smart {
        let _ = s.clear_time_constraint();
    }
    if let Some(mut f) = per_job {
        f.flush().expect("writing --jobs");
    }
    let causes: Vec<String> = Loss::ALL
        .iter()
        .map(|&l| {
            format!("\"{}\":{}", l.name(), jobs.iter().filter(|j| !j.met() && j.main_loss() == l).count())
        })
        .collect();
    let losses: Vec<String> = Loss::ALL
        .iter()
        .map(|&l| {
            let (m, x) = med_max(jobs.iter().map(|j| j.lost(l)).collect());
            format!("\"{}\":[{},{}]", l.name(), m / 1000, x / 1000)
        })
        .collect();
    println!(
        "{{\"scheduler\":\"{}\",\"met\":{met},\"missed\":{missed},\"notifications\":{notified_seen},\"met_pct\":{:.2},\
         \"misses_by_cause\":{{{}}},\"loss_us_median_max\":{{{}}}}}",
        if no_smart { "default" } else { "scx_smart" },
        100.0 * met as f64 / count.max(1) as f64,
        causes.join(","),
        losses.join(",")
    );
}
