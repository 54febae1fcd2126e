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
//! `-v` logs on stderr its registration and a summary of the jobs, `-vv` each job (`diag`).
#![forbid(unsafe_code)]

use scx_smart::jobs::{explain, Cause, JobTimes, Loss, Schedstat, Stalls};
use std::io::Write;
use std::time::Duration;

const HELP: &str =
    "usage: smart-periodic [--work MS] [--period MS] [--deadline MS] [--count N] [--no-smart] [--jobs FILE] [-v] [-q]
       smart-periodic --explain JOBS STALLS [-v] [-q]

A periodic task with libsmart time constraints (defaults: 10 ms of work every 40 ms, deadline 15 ms, 250
jobs). Prints one JSON line: deadlines met and missed, the missed ones by their largest loss, and the
median and largest of each loss in microseconds.
  --no-smart        do not register with scx_smart (measures the default scheduler)
  --jobs FILE       also write one JSON line per job
  --explain J S     read a --jobs file and a scx_smart --stall-log file and print, as one JSON line, what
                    each missed job is put down to: machine_stopped (it would have met its deadline
                    without the machine's stalls inside its window), else its largest loss
  -v, --verbose     log on stderr the settings, the registration and a summary of the jobs (which missed, by
                    how much); -vv also each job: its release, start, finish, deadline met or missed and why,
                    notification (-q, --quiet: less; the JSON line does not change)";

/// Options followed by a value.
const TAKES_VALUE: [&str; 6] = ["--work", "--period", "--deadline", "--count", "--jobs", "--explain"];

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
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map_or(0, |ts| ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64)
}

fn ms_arg(args: &[String], k: &str, default: f64) -> u64 {
    let v = args
        .iter()
        .position(|a| a == k)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |s| s.parse::<f64>().unwrap_or_else(|_| panic!("{k} takes milliseconds")));
    (v * 1e6) as u64
}

/// ns as ms, for the log.
fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// One job, for -vv: its release from the first one's, the rest from its release, in ms.
fn job_line(k: u64, t0: u64, j: &JobTimes, notified: Option<&libsmart::Notified>) -> String {
    let from = |t: u64| ms(t.saturating_sub(j.release));
    let start = if j.slept { "" } else { " (the previous job overran)" };
    let verdict = if j.met() {
        format!("met, {:.3} ms to spare", ms(j.due - j.finish))
    } else {
        let l = j.main_loss();
        format!("MISSED by {:.3} ms, mostly {} ({:.3} ms)", ms(j.finish - j.due), l.name(), ms(j.lost(l)))
    };
    let note = match notified {
        Some(n) if n.passed => ", notified (deadline passed)",
        Some(_) => ", notified (miss predicted)",
        None => "",
    };
    format!(
        "job {k}: released at {:.3} ms; from the release, ms: started +{:.3}{start}, finished +{:.3} (CPU {:.3}, \
         waited {:.3} to start and {:.3} in its work), due +{:.3}: {verdict}{note}",
        ms(j.release.saturating_sub(t0)),
        from(j.resumed),
        from(j.finish),
        ms(j.cpu),
        ms(j.wait_to_start),
        ms(j.wait_in_work),
        from(j.due)
    )
}

/// For -v: how many jobs met their deadline, which missed and by how much at most.
fn summary(jobs: &[JobTimes], notified: u64, constraint_errors: u64) -> String {
    let missed: Vec<usize> = jobs.iter().enumerate().filter(|(_, j)| !j.met()).map(|(k, _)| k).collect();
    let mut line = format!("{} jobs: {} met, {} missed", jobs.len(), jobs.len() - missed.len(), missed.len());
    if !missed.is_empty() {
        let first: Vec<String> = missed.iter().take(10).map(|k| k.to_string()).collect();
        let more = if missed.len() > 10 { format!(" and {} more", missed.len() - 10) } else { String::new() };
        let worst = jobs.iter().map(|j| j.finish.saturating_sub(j.due)).max().unwrap_or(0);
        line += &format!(" (jobs {}{more}; the latest by {:.3} ms)", first.join(", "), ms(worst));
    }
    line += &format!(", {notified} notifications");
    if constraint_errors > 0 {
        line += &format!(", {constraint_errors} set_time_constraint errors");
    }
    line
}

/// Median and maximum, ns.
fn med_max(mut v: Vec<u64>) -> (u64, u64) {
    v.sort_unstable();
    (v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0), v.last().copied().unwrap_or(0))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        diag::outln!("{HELP}");
        return;
    }
    diag::init("smart-periodic", diag::level(scx_smart::cli::verbosity(&args, &TAKES_VALUE)));
    if let Some(i) = args.iter().position(|a| a == "--explain") {
        let (Some(j), Some(s)) = (args.get(i + 1), args.get(i + 2)) else {
            eprintln!("smart-periodic: --explain needs a jobs file and a stall file\n\n{HELP}");
            std::process::exit(2);
        };
        tracing::debug!("explaining the missed jobs of {j} with the stalls of {s}");
        match explain_files(j, s) {
            Ok(line) => diag::outln!("{line}"),
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
    tracing::debug!(
        "{count} jobs of {} ms of CPU time every {} ms, each due {} ms after its release{}",
        ms(work),
        ms(period),
        ms(deadline),
        if per_job.is_some() { ", one line per job in the --jobs file" } else { "" }
    );
    let smart = if no_smart {
        tracing::debug!("not registering (--no-smart): the jobs run without time constraints");
        None
    } else {
        match libsmart::Smart::register() {
            Ok(s) => {
                tracing::debug!(
                    "registered with {} (privileged: {})",
                    libsmart::socket_path().display(),
                    s.privileged()
                );
                Some(s)
            }
            Err(e) => {
                eprintln!("smart-periodic: libsmart registration failed: {e}");
                std::process::exit(1);
            }
        }
    };
    let stat = Schedstat::open().expect("/proc/thread-self/schedstat (a kernel with CONFIG_SCHED_INFO)");
    let delay = || stat.read().map_or(0, |s| s.1);
    let (mut met, mut missed, mut notified_seen) = (0u64, 0u64, 0u64);
    let mut constraint_errors = 0u64;
    let mut jobs: Vec<JobTimes> = Vec::with_capacity(count as usize);
    let t0 = libsmart::now() + period;
    // The constraint of each request is set before sleeping until its release, so the scheduler knows it
    // at the wake-up that starts the request (it reads constraints when a task becomes runnable).
    for k in 0..count {
        let release = t0 + k * period;
        let due = release + deadline;
        if let Some(s) = smart {
            // The estimate carries the 10 % margin of SMART's video player (§3.5).
            if let Err(e) = s.set_time_constraint(due, Some(work + work / 10), Some(0)) {
                constraint_errors += 1;
                if constraint_errors == 1 {
                    tracing::debug!("job {k}: set_time_constraint: {e} (the summary counts the others)");
                }
            }
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
        let mut notified = None;
        if let Some(s) = smart {
            notified = s.take_notification().ok().flatten();
            notified_seen += notified.as_ref().map_or(0, |_| 1);
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
        tracing::trace!("{}", job_line(k, t0, &j, notified.as_ref()));
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
    tracing::debug!("{}", summary(&jobs, notified_seen, constraint_errors));
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
    diag::outln!(
        "{{\"scheduler\":\"{}\",\"met\":{met},\"missed\":{missed},\"notifications\":{notified_seen},\"met_pct\":{:.2},\
         \"misses_by_cause\":{{{}}},\"loss_us_median_max\":{{{}}}}}",
        if no_smart { "default" } else { "scx_smart" },
        100.0 * met as f64 / count.max(1) as f64,
        causes.join(","),
        losses.join(",")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// A job released at `release` ms, due 15 ms later, that started `start` ms and finished `finish`
    /// ms after its release, with 10 ms of work.
    fn job(release: u64, start: u64, finish: u64) -> JobTimes {
        JobTimes {
            release: release * MS,
            due: (release + 15) * MS,
            resumed: (release + start) * MS,
            finish: (release + finish) * MS,
            slept: true,
            work: 10 * MS,
            cpu: 10 * MS,
            wait_to_start: 0,
            wait_in_work: (finish - start - 10) * MS,
        }
    }

    #[test]
    fn a_job_line_says_when_it_ran_and_whether_it_met_its_deadline() {
        assert_eq!(
            job_line(1, 100 * MS, &job(140, 1, 11), None),
            "job 1: released at 40.000 ms; from the release, ms: started +1.000, finished +11.000 (CPU 10.000, \
             waited 0.000 to start and 0.000 in its work), due +15.000: met, 4.000 ms to spare"
        );
        let n = libsmart::Notified { deadline: 0, count: 1, passed: false };
        assert_eq!(
            job_line(2, 100 * MS, &job(180, 2, 19), Some(&n)),
            "job 2: released at 80.000 ms; from the release, ms: started +2.000, finished +19.000 (CPU 10.000, \
             waited 0.000 to start and 7.000 in its work), due +15.000: MISSED by 4.000 ms, mostly wait_in_work \
             (7.000 ms), notified (miss predicted)"
        );
    }

    #[test]
    fn the_summary_names_the_first_ten_missed_jobs_and_the_latest_finish() {
        assert_eq!(
            summary(&[job(0, 1, 11), job(40, 1, 11)], 0, 0),
            "2 jobs: 2 met, 0 missed, 0 notifications"
        );
        let mut jobs: Vec<JobTimes> = (0..13).map(|k| job(40 * k, 1, 17)).collect();
        jobs[5] = job(200, 1, 20);
        jobs.push(job(40 * 13, 1, 11));
        assert_eq!(
            summary(&jobs, 3, 2),
            "14 jobs: 1 met, 13 missed (jobs 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 3 more; the latest by 5.000 ms), 3 \
             notifications, 2 set_time_constraint errors"
        );
    }
}
