//! The command line of appendix A ("This is Hourglass 0.5"), option for option, plus long options
//! for what is new. Appendix A's options are positional (`-t 1 -p HIGH` affects thread 1; `-a`
//! makes later options affect all threads until the next `-t`), which derive-style parsers do not
//! express, so this parser is written by hand; every error names the option at fault.

use crate::config::*;
use crate::sys::Priority;
use crate::timer::TimerKind;
use crate::units::{parse_size, parse_time, Nanos};
use std::path::PathBuf;
use thiserror::Error;

/// A bad command line: the option at fault and what is wrong with it.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{option}: {message}")]
pub struct UsageError {
    /// The option (or argument) at fault, as typed.
    pub option: String,
    /// What is wrong, and what would be right.
    pub message: String,
}

fn err(option: &str, message: impl Into<String>) -> UsageError {
    UsageError { option: option.to_string(), message: message.into() }
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    /// Print the usage text.
    Help,
    /// Print the version.
    Version,
    /// Run the threads.
    Run(Box<RunConfig>),
    /// Run a scenario file (the simulator's TOML) as real threads.
    Scenario {
        /// Scenario path.
        path: PathBuf,
        /// Run-wide options given on the command line (format, cpu, duration override...).
        base: Box<RunConfig>,
        /// True when `-d`/`--duration` was given (overrides the scenario's duration).
        duration_given: bool,
    },
}

/// The usage text (appendix A's, extended).
pub const USAGE: &str = "\
hourglass: a synthetic real-time application that maps every gap in its threads' execution
(after Regehr, Inferring Scheduling Behavior with Hourglass, FREENIX 2002), for today's Linux.

usage: hourglass <options>
       hourglass --scenario FILE [run options]
       hourglass analyze <ctx|indirect|latency|render> ...   (hourglass analyze --help)
       hourglass bench [ctxsw|trap|memcpy|ipc|fileread|clockirq|gaploop|all]

global options:
  -n <number of threads to create> -- the only mandatory option
  -d <duration of experiment> (default 10s; up to 10m, longer only with --force)
  -c -- also print the raw execution trace (in cycles, not based at zero):
        lines 'cycles: id start end'
  -t <thread number for subsequent options to affect, 0..n-1>
  -a -- subsequent per-thread options apply to all threads, until the next -t
  -e <number of records in the execution trace> (default 300000, about 7 MB,
        or 50000 per second of run if more: VMs show thousands of short gaps a second;
        at most what half the memory limit holds)

per-thread options:
  -p <priority>  IDLE (SCHED_IDLE), LOW (nice 10), NORMAL (nice 0, default),
                 HIGH (nice -10), HIGHEST (nice -20)            -- timesharing
                 RTLOW, RTMED, RTHIGH (SCHED_FIFO 20, 50, 80)   -- real-time
  -rh <amount> <period> -- hard CPU reservation (SCHED_DEADLINE runtime/period)
  -rs <amount> <period> -- soft CPU reservation (SCHED_DEADLINE + SCHED_FLAG_RECLAIM)
  -w <workload>
       CPU                      -- cpu-bound execution trace (default)
       CPU_SCAN <size>          -- cpu-bound, scans an array <size> KiB long (or 64KiB, 1MB;
                                   KB = 1000 bytes, KiB = 1024)
       CPU_YIELD <amount>       -- yields after getting <amount> of CPU time
       CPU_SCAN_YIELD <size> <amount> -- scanning and yielding
       PERIODIC <amount> <period>     -- periodic task: hits and misses, execution trace
       CPU_PERIODIC <amount> <period> -- cpu-bound periodic: a new period each time it
                                         gets <amount>; a period with no frame is a miss
       LAT <period>             -- dispatch latency test (prints 'latlate:' lines, in us)
  -i <timer>  NATIVE (relative nanosleep, default), HR (absolute clock_nanosleep),
              TIMERFD (timerfd), RTC (/dev/rtc periodic interrupts, if present),
              TICK[:Hz] (emulated tick-granular timer: the first tick at or after the
              target, 100 Hz by default), LINUX24[:Hz] (Linux 2.4's usleep: up to two
              ticks late; real-time sleeps of at most 2 ms busy-wait)
  -s <time> -- start running this thread <time> into the run
  -f <time> -- terminate this thread <time> into the run

Times are self-describing; valid examples are: 3m, 1.5s, 1020ms, 87.0us, 500ns.

new options:
  --duration <time>   same as -d
  --cpu <N|all>       pin every thread to CPU N (default: the last allowed CPU, the
                      paper's uniprocessor), or 'all' to let the kernel place them;
                      with --scenario, replaces its machine.cpus (with a warning).
                      Reserved (-rh/-rs) threads are never pinned: Linux refuses
                      SCHED_DEADLINE for tasks pinned to part of their root domain.
  --format <text|paper|json>  text: one-screen summary (default); paper: every trace
                      line 'id start end duration gap' (ms), every 'latlate:' line (us)
                      and 'thread N: missed X deadlines, hit Y'; json: ARCHITECTURE.md contract
  --intervals         json: include every interval and latency sample
  --trace <file>      write the execution trace (crates/trace's format: every interval
                      with why it ended, timer wake-ups, deadline misses), which
                      smartsim trace report|billing|diff|perfetto read like a simulated
                      run's or a klogger recording's
  --perfetto <file>   write a Chrome trace (open in ui.perfetto.dev): one complete
                      event per execution interval, an instant per missed deadline
  --hist              print latency and gap histograms
  --gap <time>        gap threshold (default: twice the 99th percentile of the
                      thread's own loop iteration time, calibrated at start)
  --clock <auto|monotonic>  auto: invariant TSC if present, else clock_gettime
  --starve-limit <time>  the watchdog ends the run when normal tasks on the workload
                      CPU have not run for this long (default 2s)
  --pm-qos <us>       hold /dev/cpu_dma_latency at <us> during the run (cyclictest
                      writes 0 by default: idle CPUs stay out of deep C-states);
                      default: leave power management as it is
  --force             allow runs that the safety checks refuse (duration over 10m,
                      real-time with RT throttling off, never-blocking RT threads
                      covering every CPU, memory over 1 GiB: up to three quarters
                      of the memory available)

Memory: a run's buffers (the trace, CPU_SCAN arrays, every sample a thread may keep,
stacks) are estimated before it starts and refused over 1 GiB, naming the option.
  --scenario <file>   run the tasks of a simulator scenario (TOML) as real threads:
                      read and checked as smartsim reads it, the same random draws;
                      the policy runs as the nearest Linux class (the run prints how
                      each task was mapped); -d overrides its duration
  -v, --verbose       more diagnostics on stderr: -v debug, -vv trace (warnings and
                      progress are shown by default); -q, --quiet: fewer (-qq errors only)
  -h, --help          this text;  -V, --version

Safety: every run is bounded; a SCHED_FIFO 99 watchdog ends runs that starve the
system; nothing is printed until the run ends (output would disturb the timing).
Examples (from the paper):
  hourglass -n 3 -d 5s -t 0 -p LOW -t 1 -p NORMAL -t 2 -p HIGH
  hourglass -d 60s -n 10 -a -p NORMAL -w CPU_YIELD 0.9ms --format paper
  hourglass -d 20s -n 1 -t 0 -p RTHIGH -w PERIODIC 4ms 5ms -i HR
  hourglass -n 2 -t 0 -p RTMED -w PERIODIC 3ms 8ms -i HR -t 1 -p RTLOW -w PERIODIC 17ms 33ms -i NATIVE
  hourglass -n 2 -t 0 -w PERIODIC 3ms 8ms -rh 3.1ms 8ms -t 1 -w PERIODIC 17ms 33ms -rh 17.1ms 33ms
";

#[derive(Debug, Clone, Copy)]
enum Target {
    None,
    All,
    One(usize),
}

enum Op {
    Priority(Priority),
    Reserve(Reservation),
    Work(Workload),
    Timer(TimerKind),
    Start(Nanos),
    Finish(Nanos),
}

struct Args<'a> {
    v: &'a [String],
    i: usize,
}

impl<'a> Args<'a> {
    fn value(&mut self, opt: &str, what: &str) -> Result<&'a str, UsageError> {
        self.i += 1;
        self.v.get(self.i).map(|s| s.as_str()).ok_or_else(|| err(opt, format!("missing {what}")))
    }
    fn time(&mut self, opt: &str, what: &str) -> Result<Nanos, UsageError> {
        let s = self.value(opt, what)?;
        parse_time(s).map_err(|e| err(opt, format!("{what}: {e}")))
    }
}

/// What the parser has seen so far.
struct Parsing {
    n: Option<usize>,
    base: RunConfig,
    duration_given: bool,
    target: Target,
    ops: Vec<(Target, String, Op)>,
    scenario: Option<PathBuf>,
}

/// Parses the arguments after the program name.
pub fn parse(argv: &[String]) -> Result<Command, UsageError> {
    if argv.is_empty() {
        return Err(err("hourglass", "no options; -n is mandatory (try --help)"));
    }
    let mut a = Args { v: argv, i: 0 };
    let mut p = Parsing {
        n: None,
        base: RunConfig::new(0),
        duration_given: false,
        target: Target::None,
        ops: Vec::new(),
        scenario: None,
    };
    while a.i < argv.len() {
        let opt = argv[a.i].as_str();
        match opt {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            _ => {}
        }
        if let Some(op) = thread_option(&mut a, opt)? {
            p.ops.push((p.target, opt.to_string(), op));
        } else if !global_option(&mut a, opt, &mut p)? && !output_option(&mut a, opt, &mut p.base)? {
            run_option(&mut a, opt, &mut p.base)?;
        }
        a.i += 1;
    }
    finish(argv, p)
}

/// A per-thread option (`-p -rh -rs -w -i -s -f`), or `None` for any other.
fn thread_option(a: &mut Args, o: &str) -> Result<Option<Op>, UsageError> {
    Ok(Some(match o {
        "-p" => {
            let s = a.value(o, "priority")?;
            Op::Priority(Priority::parse(s).ok_or_else(|| {
                err(
                    o,
                    format!(
                        "unknown priority '{s}' (IDLE, LOW, NORMAL, HIGH, HIGHEST, RTLOW, RTMED, RTHIGH)"
                    ),
                )
            })?)
        }
        "-rh" | "-rs" => {
            let amount = a.time(o, "reservation amount")?;
            let period = a.time(o, "reservation period")?;
            if amount == 0 || amount > period {
                return Err(err(o, "need 0 < amount <= period"));
            }
            if amount < 1024 {
                return Err(err(o, "SCHED_DEADLINE needs an amount of at least 1024ns"));
            }
            Op::Reserve(Reservation { amount, deadline: period, period, soft: o == "-rs" })
        }
        "-w" => Op::Work(parse_workload(a)?),
        "-i" => {
            let s = a.value(o, "timer")?;
            Op::Timer(TimerKind::parse(s).map_err(|m| err(o, m))?)
        }
        "-s" => Op::Start(a.time(o, "start time")?),
        "-f" => Op::Finish(a.time(o, "finish time")?),
        _ => return Ok(None),
    }))
}

/// The options that shape the parse itself (`-n -d -t -a --scenario`, `-v`/`-q`); false for any
/// other.
fn global_option(a: &mut Args, o: &str, p: &mut Parsing) -> Result<bool, UsageError> {
    match o {
        "-n" => {
            let s = a.value(o, "number of threads")?;
            let v: usize = s.parse().map_err(|_| err(o, format!("'{s}' is not a number of threads")))?;
            if v == 0 || v > MAX_THREADS {
                return Err(err(o, format!("the number of threads must be 1..{MAX_THREADS}")));
            }
            p.n = Some(v);
        }
        "-d" | "--duration" => {
            p.base.duration = a.time(o, "duration")?;
            if p.base.duration == 0 {
                return Err(err(o, "the duration must be positive"));
            }
            p.duration_given = true;
        }
        "-t" => {
            let s = a.value(o, "thread number")?;
            let t: usize = s.parse().map_err(|_| err(o, format!("'{s}' is not a thread number")))?;
            p.target = Target::One(t);
        }
        "-a" => p.target = Target::All,
        "--scenario" => p.scenario = Some(PathBuf::from(a.value(o, "scenario file")?)),
        "--verbose" => p.base.verbosity = p.base.verbosity.saturating_add(1),
        "--quiet" => p.base.verbosity = p.base.verbosity.saturating_sub(1),
        _ => match repeated_flag(o) {
            Some(('v', k)) => p.base.verbosity = p.base.verbosity.saturating_add(k),
            Some(('q', k)) => p.base.verbosity = p.base.verbosity.saturating_sub(k),
            _ => return Ok(false),
        },
    }
    Ok(true)
}

/// `-v`, `-vv`, `-qqq`...: the letter and how many times it is repeated.
fn repeated_flag(o: &str) -> Option<(char, i8)> {
    let letters = o.strip_prefix('-')?;
    let c = letters.chars().next().filter(|c| matches!(c, 'v' | 'q'))?;
    if !letters.chars().all(|x| x == c) {
        return None;
    }
    Some((c, i8::try_from(letters.len()).unwrap_or(i8::MAX)))
}

/// An option of what is printed and written (`-c --format --intervals --trace --hist
/// --perfetto`); false for any other.
fn output_option(a: &mut Args, o: &str, base: &mut RunConfig) -> Result<bool, UsageError> {
    match o {
        "-c" => base.raw_cycles = true,
        "--format" => {
            let s = a.value(o, "format")?;
            base.format = match s {
                "text" => Format::Text,
                "paper" => Format::Paper,
                "json" => Format::Json,
                _ => return Err(err(o, format!("unknown format '{s}' (text, paper, json)"))),
            };
        }
        "--intervals" => base.trace = true,
        "--trace" => {
            let f = a.value(o, "trace file (the JSON's intervals are --intervals)")?;
            if f.starts_with('-') {
                return Err(err(
                    o,
                    format!("'{f}' is not a file: --trace takes the trace file to write; the JSON's intervals are --intervals"),
                ));
            }
            base.trace_file = Some(PathBuf::from(f));
        }
        "--hist" => base.hist = true,
        "--perfetto" => base.perfetto = Some(PathBuf::from(a.value(o, "output file")?)),
        _ => return Ok(false),
    }
    Ok(true)
}

/// A run-wide option of the measurement (`-e --cpu --gap --clock ...`); anything else is an error.
fn run_option(a: &mut Args, o: &str, base: &mut RunConfig) -> Result<(), UsageError> {
    match o {
        "-e" => {
            let s = a.value(o, "number of records")?;
            base.records = Some(
                s.parse()
                    .ok()
                    .filter(|&r| r > 0 && r <= 100_000_000)
                    .ok_or_else(|| err(o, format!("'{s}': records must be 1..100000000")))?,
            );
        }
        "--cpu" => {
            let s = a.value(o, "CPU number or 'all'")?;
            base.cpu = s.parse().map_err(|m: String| err(o, m))?;
            base.cpu_given = true;
            if let CpuChoice::One(c) = base.cpu {
                let allowed = crate::sys::allowed_cpus();
                if !allowed.contains(&c) {
                    return Err(err(o, format!("CPU {c} is not allowed here (allowed: {allowed:?})")));
                }
            }
        }
        "--force" => base.force = true,
        "--gap" => {
            let g = a.time(o, "gap threshold")?;
            if g == 0 {
                return Err(err(o, "the gap threshold must be positive"));
            }
            base.gap = Some(g);
        }
        "--clock" => {
            let s = a.value(o, "clock")?;
            base.clock = match s {
                "auto" | "tsc" => ClockChoice::Auto,
                "monotonic" => ClockChoice::Monotonic,
                _ => return Err(err(o, format!("unknown clock '{s}' (auto, monotonic)"))),
            };
        }
        "--starve-limit" => base.starve_limit = a.time(o, "starvation limit")?,
        "--pm-qos" => {
            let s = a.value(o, "latency target in microseconds")?;
            base.pm_qos = Some(
                s.parse()
                    .ok()
                    .filter(|&v: &i32| v >= 0)
                    .ok_or_else(|| err(o, format!("'{s}' is not a number of microseconds >= 0")))?,
            );
        }
        "-m" => return Err(err(o, "MM timers and -m do not exist on Linux")),
        "" => return Err(err("''", "an empty argument (see hourglass --help)")),
        _ => {
            return Err(err(
                o,
                if o.starts_with('-') {
                    "unknown option (see hourglass --help)".to_string()
                } else {
                    "unexpected argument (see hourglass --help)".to_string()
                },
            ))
        }
    }
    Ok(())
}

/// Checks what only the whole command line can tell, and builds the command.
fn finish(argv: &[String], p: Parsing) -> Result<Command, UsageError> {
    let Parsing { n, mut base, duration_given, ops, scenario, .. } = p;
    base.source =
        std::iter::once("hourglass".to_string()).chain(argv.iter().cloned()).collect::<Vec<_>>().join(" ");
    if base.duration > MAX_DURATION && !base.force {
        return Err(err(
            "-d",
            format!(
                "{} is longer than the {} cap; add --force to run that long",
                crate::units::format_time(base.duration),
                crate::units::format_time(MAX_DURATION)
            ),
        ));
    }
    if let Some(path) = scenario {
        if n.is_some() || !ops.is_empty() {
            return Err(err(
                "--scenario",
                "a scenario defines its own threads; do not combine it with -n or per-thread options",
            ));
        }
        return Ok(Command::Scenario { path, base: Box::new(base), duration_given });
    }
    let n = n.ok_or_else(|| err("-n", "the number of threads is mandatory, e.g. -n 1"))?;
    let mut cfg = base;
    cfg.threads = (0..n).map(ThreadSpec::new).collect();
    apply(&mut cfg.threads, ops)?;
    for th in &cfg.threads {
        if let Some(f) = th.finish {
            if f <= th.start {
                return Err(err("-f", format!("{}: finish time must be after its start time", th.name)));
            }
        }
        if th.start >= cfg.duration {
            return Err(err("-s", format!("{}: start time is after the end of the run", th.name)));
        }
    }
    // The memory the run will hold, before anything runs: named by the option of its largest part.
    crate::budget::check_run(&cfg).map_err(|(part, m)| err(part.option, m))?;
    Ok(Command::Run(Box::new(cfg)))
}

/// Applies the per-thread options, in command-line order, to the threads they target.
fn apply(threads: &mut [ThreadSpec], ops: Vec<(Target, String, Op)>) -> Result<(), UsageError> {
    let n = threads.len();
    for (t, opt, op) in ops {
        let idx: Vec<usize> = match t {
            Target::None => {
                return Err(err(
                    &opt,
                    "per-thread option before any -t or -a (say which thread: -t 0, or -a for all)",
                ))
            }
            Target::All => (0..n).collect(),
            Target::One(i) if i >= n => {
                return Err(err("-t", format!("thread {i} is out of range 0..{} (-n {n})", n - 1)))
            }
            Target::One(i) => vec![i],
        };
        for i in idx {
            let th = &mut threads[i];
            match &op {
                Op::Priority(p) => th.priority = *p,
                Op::Reserve(r) => th.reservation = Some(*r),
                Op::Work(w) => th.workload = w.clone(),
                Op::Timer(k) => th.timer = *k,
                Op::Start(s) => th.start = *s,
                Op::Finish(f) => th.finish = Some(*f),
            }
        }
    }
    threads.iter_mut().for_each(ThreadSpec::align_task);
    Ok(())
}

fn parse_workload(a: &mut Args) -> Result<Workload, UsageError> {
    let o = "-w";
    let name = a.value(o, "workload")?.to_ascii_uppercase();
    let size = |a: &mut Args| -> Result<usize, UsageError> {
        let s = a.value(o, &format!("{name} size"))?;
        let b = parse_size(s).map_err(|e| err(o, format!("{name} size: {e}")))?;
        if b < 64 {
            return Err(err(o, format!("{name} size must be at least 64 bytes")));
        }
        Ok(b)
    };
    let pos = |a: &mut Args, what: &str| -> Result<Nanos, UsageError> {
        let t = a.time(o, &format!("{name} {what}"))?;
        if t == 0 {
            return Err(err(o, format!("{name} {what} must be positive")));
        }
        Ok(t)
    };
    let amount_period = |a: &mut Args| -> Result<(Nanos, Nanos), UsageError> {
        let amount = pos(a, "amount")?;
        let period = pos(a, "period")?;
        if amount > period {
            return Err(err(o, format!("{name}: the amount must not exceed the period")));
        }
        Ok((amount, period))
    };
    Ok(match name.as_str() {
        "CPU" => Workload::Cpu,
        "CPU_SCAN" => Workload::CpuScan { bytes: size(a)? },
        "CPU_YIELD" => Workload::CpuYield {
            amount: pos(a, "amount")?,
        },
        "CPU_SCAN_YIELD" => {
            let bytes = size(a)?;
            Workload::CpuScanYield {
                bytes,
                amount: pos(a, "amount")?,
            }
        }
        "PERIODIC" => {
            let (amount, period) = amount_period(a)?;
            Workload::periodic(amount, period)
        }
        "CPU_PERIODIC" => {
            let (amount, period) = amount_period(a)?;
            Workload::CpuPeriodic { amount, period }
        }
        "LAT" => Workload::Lat {
            period: pos(a, "period")?,
        },
        other => {
            return Err(err(
                o,
                format!("unknown workload '{other}' (CPU, CPU_SCAN, CPU_YIELD, CPU_SCAN_YIELD, PERIODIC, CPU_PERIODIC, LAT)"),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn run(s: &str) -> RunConfig {
        match parse(&args(s)).unwrap() {
            Command::Run(c) => *c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_paper_command_line_parses() {
        let c = run("-n 3 -d 5s -t 0 -p LOW -t 1 -p NORMAL -t 2 -p HIGH");
        assert_eq!(c.duration, 5_000_000_000);
        assert_eq!(c.threads[0].priority, Priority::Low);
        assert_eq!(c.threads[2].priority, Priority::High);
        let c = run("-d 60s -n 10 -a -p NORMAL -w CPU_YIELD 0.9ms");
        assert!(c.threads.iter().all(|t| t.workload == Workload::CpuYield { amount: 900_000 }));
        run("-d 60s -n 10 -a -p NORMAL -w CPU");
        let c = run("-d 6m -n 1 -t 0 -p RTHIGH -w LAT 5.3ms -i RTC");
        assert_eq!(c.threads[0].timer, TimerKind::Rtc);
        assert_eq!(c.duration, 360_000_000_000);
        run("-d 20s -n 1 -t 0 -p RTHIGH -w PERIODIC 4ms 5ms -i RTC");
        let c =
            run("-n 2 -t 0 -p RTMED -w PERIODIC 3ms 8ms -i HR -t 1 -p RTLOW -w PERIODIC 17ms 33ms -i NATIVE");
        assert_eq!(c.duration, DEFAULT_DURATION);
        assert_eq!(c.threads[1].timer, TimerKind::Native);
        let c = run("-n 2 -t 0 -w PERIODIC 3ms 8ms -rh 3.1ms 8ms -t 1 -w PERIODIC 17ms 33ms -rh 17.1ms 33ms");
        assert_eq!(
            c.threads[0].reservation,
            Some(Reservation { amount: 3_100_000, deadline: 8_000_000, period: 8_000_000, soft: false })
        );
    }

    #[test]
    fn all_then_one_applies_in_order() {
        let c = run("-n 3 -a -p LOW -w CPU_SCAN 64 -t 1 -p HIGH -s 1s -f 2s");
        assert_eq!(c.threads[0].priority, Priority::Low);
        assert_eq!(c.threads[1].priority, Priority::High);
        assert_eq!(c.threads[2].workload, Workload::CpuScan { bytes: 65536 });
        assert_eq!(c.threads[1].start, 1_000_000_000);
        assert_eq!(c.threads[1].finish, Some(2_000_000_000));
    }

    #[test]
    fn periodic_is_a_task_of_the_scenario_format_in_its_threads_window() {
        // -s and -f before or after -w: the task's start and stop are the thread's.
        for line in ["-n 2 -t 1 -s 1s -f 3s -w PERIODIC 4ms 5ms", "-n 2 -t 1 -w PERIODIC 4ms 5ms -s 1s -f 3s"]
        {
            let c = run(line);
            let t = c.threads[1].workload.task().expect("a task");
            assert_eq!((t.name.as_str(), t.start, t.stop), ("thread 1", 1_000_000_000, Some(3_000_000_000)));
            let p = c.threads[1].workload.periodic_task().unwrap();
            assert_eq!(
                (p.exec, p.period, p.deadline, p.count),
                (workload::Exec::Fixed(4_000_000), 5_000_000, 5_000_000, None)
            );
            // No notification on Linux: a late request is dropped at its deadline, as always.
            assert_eq!(late_rule(p), workload::LateRule::DropAtDeadline);
            assert_eq!(c.threads[1].workload.describe(), "PERIODIC 4.0ms 5.0ms");
            assert_eq!(c.threads[0].workload, Workload::Cpu);
        }
        // -a: each thread's task is its own.
        let c = run("-n 2 -a -w PERIODIC 1ms 10ms");
        let names: Vec<&str> = c.threads.iter().map(|t| t.workload.task().unwrap().name.as_str()).collect();
        assert_eq!(names, ["thread 0", "thread 1"]);
    }

    #[test]
    fn each_v_raises_the_verbosity_and_each_q_lowers_it() {
        assert_eq!(run("-n 1").verbosity, 0);
        assert_eq!(run("-n 1 -v").verbosity, 1);
        assert_eq!(run("-v -n 1 --verbose -t 0 -p LOW").verbosity, 2);
        assert_eq!(run("-n 1 -vvv").verbosity, 3);
        assert_eq!(run("-n 1 -q").verbosity, -1);
        assert_eq!(run("-n 1 -qq -v --quiet").verbosity, -2);
        assert_eq!(bad("-n 1 -vq").option, "-vq");
        match parse(&args("--scenario x.toml -vv")).unwrap() {
            Command::Scenario { base, .. } => assert_eq!(base.verbosity, 2),
            other => panic!("{other:?}"),
        }
    }

    fn bad(s: &str) -> UsageError {
        parse(&args(s)).unwrap_err()
    }

    #[test]
    fn bad_options_name_the_option() {
        assert_eq!(bad("-d 5s").option, "-n");
        assert_eq!(bad("-n 1 -t 0 -p SUPERHIGH").option, "-p");
        assert_eq!(bad("-n 1 -t 3 -p LOW").option, "-t");
        assert_eq!(bad("-n 1 -t 0 -w PERIODIC 6ms 5ms").option, "-w");
        assert_eq!(bad("-n 1 -t 0 -w PERIODIC 4ms").option, "-w");
        assert_eq!(bad("-n 1 -t 0 -w BOGUS").option, "-w");
        assert_eq!(bad("-n 1 -d 5").option, "-d");
        assert!(bad("-n 1 -d 5").message.contains("no unit"));
        assert_eq!(bad("-n 1 -t 0 -i MM").option, "-i");
        assert_eq!(bad("-n 1 -t 0 -rh 5ms 4ms").option, "-rh");
        assert_eq!(bad("-n 1 -p LOW").option, "-p");
        assert_eq!(bad("-n 1 --frobnicate").option, "--frobnicate");
        assert_eq!(bad("-n 1 -d 11m").option, "-d");
        assert_eq!(bad("-n x").option, "-n");
        assert!(matches!(parse(&args("-n 1 -d 11m --force")), Ok(Command::Run(_))));
    }

    #[test]
    fn a_run_over_the_memory_limit_is_refused_naming_the_option() {
        let e = bad("-n 1 -d 200ms -t 0 -w CPU_SCAN 1GiB");
        assert_eq!(e.option, "-w");
        assert!(e.message.contains("the array thread 0 scans (-w CPU_SCAN 1048576)"), "{}", e.message);
        assert!(e.message.contains("over the limit of 1.0 GiB"), "{}", e.message);
        // Even forced, never beyond the machine.
        assert_eq!(bad("-n 1 -d 200ms -t 0 -w CPU_SCAN 1TiB --force").option, "-w");
        // A sample a nanosecond for 50 ms.
        let e = bad("-n 1 -d 50ms -t 0 -w LAT 1ns");
        assert_eq!(e.option, "-w");
        assert!(e.message.contains("50000016 wake-ups"), "{}", e.message);
        assert_eq!(bad("-n 1 -d 1s -e 100000000").option, "-e");
        run("-n 1 -d 200ms -t 0 -w CPU_SCAN 64MiB");
        run("-n 1 -d 1s -t 0 -w LAT 1ms");
    }
}
