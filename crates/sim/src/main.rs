//! `smartsim`: run scenarios, compare policies, reproduce the papers' experiments, benchmark.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Instant;
use trace::summary::Requests;

use anyhow::{bail, Result};
use clap::{Parser, Subcommand, ValueEnum};
use report::export::ImageFormat;
use report::{Figure, Series, Table};
use smartsim::papers;

#[path = "cli/progress.rs"]
mod progress;
#[path = "cli/reproduce.rs"]
mod reproduce;
#[path = "cli/taskset.rs"]
mod taskset;
use smartsim::result::PartialReason;
use smartsim::SimResult;

#[derive(Parser)]
#[command(
    name = "smartsim",
    version,
    about = "Deterministic simulator of SMART and baseline CPU schedulers",
    long_about = "Deterministic discrete-event simulator of SMART (Nieh 1999) and baseline CPU schedulers.\n\n\
    A scenario (TOML, see scenarios/ and the `workload` crate) gives the machine (HZ, billing, timers,\n\
    overheads), the policy and the tasks. The same scenario and seed always give the same output.\n\n\
    Examples:\n  smartsim reproduce                      # the dissertation's §6.2 experiments, figures in out/\n  \
    smartsim reproduce --png --pdf          # the same, each figure also as PNG and PDF\n  \
    smartsim run scenarios/papers/smart-6.2.2.2.toml --format json\n  \
    smartsim compare scenarios/papers/smart-6.2.2.2.toml --policies smart,wfq,edf\n  \
    smartsim bench                          # events and jobs per second"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    #[command(flatten)]
    verbose: diag::Verbosity,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum PoliciesFormat {
    Table,
    Json,
    Markdown,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Format {
    Table,
    Json,
}

/// `sweep`'s output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum SweepFormat {
    /// Aligned columns for a person.
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one scenario and print per-task results: CPU time and share, requests by outcome (met,
    /// missed = late + discarded + aborted, unfinished), wake-up latency (wake→dispatch). The table's
    /// footer defines each term; docs/glossary.md has them all.
    ///
    /// A run that takes more than a second draws a progress bar on standard error when it is a terminal
    /// (nothing on a pipe): simulated time done of the scenario's, events per second (steps of the
    /// event loop: simulated instants at which something happens), time left. Ctrl-C stops the run: its
    /// results of the time simulated so far are printed as usual, marked partial (a footer line; the JSON's
    /// "partial": {"reason": "interrupted", "simulated_ns", "scenario_duration_ns"}, its duration_ns the time
    /// simulated), and smartsim exits with status 130. A second Ctrl-C quits at once. A run whose policy
    /// walks its tasks at each decision (smart; lottery and linux-2.4 once a task has a CPU affinity) stops
    /// itself the same way once it has walked 5e10 of them (minutes; see --walk-limit), unless --force:
    /// "reason": "over_budget", status 3.
    Run {
        /// Scenario file (TOML).
        file: PathBuf,
        /// Use this policy instead of the scenario's (see `smartsim policies`).
        #[arg(long)]
        policy: Option<String>,
        /// Output format: a table for people, or the JSON of the output contract.
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// Also write the cumulative-CPU figure here, in the format the file name's extension names:
        /// .svg (or no extension) SVG, .png a PNG at twice the figure's size, .pdf a vector PDF.
        /// PNG and PDF draw the text with the system's fonts (DejaVu Sans: fonts-dejavu-core).
        /// Every output file must be a file of its own, not the scenario nor another output.
        #[arg(long, visible_alias = "figure", value_name = "FILE")]
        svg: Option<PathBuf>,
        /// Also write a Perfetto / Chrome trace (JSON) of every execution interval here
        /// (open it at ui.perfetto.dev).
        #[arg(long)]
        perfetto: Option<PathBuf>,
        /// Also write the run's execution trace here (the project's trace format, written as the run
        /// goes: every stretch on a CPU with why it ended, wake-ups, releases, request outcomes,
        /// notifications), for `smartsim trace` and klogger's analyses.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Also print (and put in the JSON) each task's CPU share per window of this length, e.g. 10s:
        /// its CPU time inside the window as a fraction of one CPU, from the run's trace (exact).
        #[arg(long, value_parser = parse_duration)]
        window: Option<u64>,
        /// Also write the cumulative-CPU timeline as CSV here (time s, then ms per task).
        #[arg(long)]
        timeline: Option<PathBuf>,
        /// Also write one row per request of a periodic task here: task, job, cpu, release_ns,
        /// start_ns (its first dispatch; empty if never dispatched), finish_ns, deadline_ns, exec_ns,
        /// outcome (met, late, discarded, aborted, unfinished: docs/glossary.md), preemptions.
        #[arg(long)]
        jobs: Option<PathBuf>,
        /// Format of --jobs: CSV with a header line, or JSON Lines. Default: the file name's
        /// extension (.csv, .jsonl), CSV without one; given, it must agree with the extension.
        #[arg(long, value_enum)]
        jobs_format: Option<JobsFormat>,
        /// Also write a Gantt chart of a window of the run here: a row per task (and per CPU),
        /// executions as bars, releases and deadlines as arrows, missed deadlines crossed out. SVG,
        /// PNG or PDF as the extension says (SVG without one), as --svg.
        #[arg(long)]
        gantt: Option<PathBuf>,
        /// The window of --gantt, FROM..TO in simulated time with units (e.g. 0s..200ms, 1s..1.5s);
        /// default: the first 200 ms, or the whole run if it is shorter.
        #[arg(long, value_parser = parse_window, requires = "gantt", value_name = "FROM..TO")]
        gantt_window: Option<Window>,
        /// Run even if the estimate made before the run (events, memory, output; docs/scenario.md,
        /// "Limits, and why")
        /// is over a limit: 2e9 events, 2 GiB of memory, 10 GB of output, tasks walked at worst
        /// 5e13; and past the 5e10 tasks a policy may walk as it runs (unless --walk-limit).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        walk: WalkLimit,
    },
    /// Run one scenario under several policies, one after another, and print them side by side.
    ///
    /// A comparison that takes more than a second draws a progress bar on standard error when it is a
    /// terminal: the simulated time of every policy's run added up, done of the total (policies ×
    /// the scenario's duration), events per second, policies done, time left. Ctrl-C stops it: the
    /// policies run are printed, the one running marked partial (a footer line; "partial" in its JSON
    /// object), those not started left out and named on standard error; status 130. A second Ctrl-C
    /// quits at once. A policy's run that walks past its limit (see run) is marked partial too, and
    /// the others still run; status 3.
    Compare {
        /// Scenario file (TOML).
        file: PathBuf,
        /// Comma-separated policies, or `all`: every registered policy that can run the scenario. Under
        /// `all` the scenario's own policy takes its `[scheduler]` options and every other policy only
        /// its `partition` (the other options are meant for the scenario's policy); a policy that
        /// refuses the scenario (its partition, its tasks' rules) or whose run estimate is over a limit
        /// (see --force) is skipped and named, with why, in one line on stderr. `all` stands alone.
        #[arg(long, default_value = "smart,wfq,edf")]
        policies: String,
        /// Output format (json: one object per policy, one per line).
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// Run even if the estimate made before the run is over a limit, and past the tasks a policy
        /// may walk (as `run --force`).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        walk: WalkLimit,
    },
    /// Response-time analysis of a scenario's periodic tasks under fixed priorities on one CPU (Audsley;
    /// Tindell): each task's worst-case response time, with release jitter and blocking, against its
    /// deadline. C is the largest `exec` can draw, T the `period` (or the least `interarrival`), D the
    /// `deadline`, J the `jitter` plus a tick when the task's timer is tick-granular; a larger `priority`
    /// is more urgent, and equal priorities are served first come, first served. Exact for preemptive
    /// fixed priorities with high-resolution timers (the `fifo` policy); the wcrt is "-" (JSON null)
    /// where the busy period never ends.
    Rta {
        /// Scenario file (TOML).
        file: PathBuf,
        /// The longest a lower-priority task can block TASK (a critical section), e.g. `--blocking
        /// t1=2ms`; repeat for several tasks (default 0).
        #[arg(long, value_parser = parse_blocking, value_name = "TASK=TIME")]
        blocking: Vec<(String, u64)>,
        /// Output format (json: `{"tasks": [{"name", "wcrt_ns", "schedulable"}]}`).
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Run one scenario over a grid of parameters and seeds, in parallel across cores, and print one
    /// tidy table: a row per run and task with the run's parameters and seed, the task's CPU share,
    /// deadlines met and missed, wake-up latency (p50, p99) and longest response. Every combination's
    /// scenario is validated before any run.
    ///
    /// A sweep that takes more than a second draws a progress bar on standard error when it is a
    /// terminal: the simulated time of every run added up (runs in parallel add up together), done of
    /// the total (each run's duration, summed), events per second, runs done, time left. Ctrl-C stops
    /// it: the rows of the runs done are printed, those of the runs under way marked partial (a last
    /// column `partial`, only then; "partial" in their JSON lines), the runs not started left out, and
    /// the counts said on standard error; status 130. A second Ctrl-C quits at once. A run that walks
    /// past its limit (see run, --walk-limit) stops itself, its rows marked partial; the others still
    /// run; status 3.
    Sweep {
        /// Scenario file (TOML).
        file: PathBuf,
        /// A key of the scenario by its path and its values, e.g. `--set machine.hz=100,1000,20000`,
        /// `--set scheduler.policy=smart,edf`, `--set task.R1.exec=10ms,20ms`; repeat for a grid. A value
        /// is a number or true/false when it reads as one, a string otherwise.
        #[arg(long = "set", value_parser = smartsim::sweep::parse_axis, value_name = "KEY=V1,V2,...", required = true)]
        set: Vec<smartsim::sweep::Axis>,
        /// Seeds: N (1 to N) or A..B; default the scenario's own.
        #[arg(long, value_parser = smartsim::sweep::parse_seeds, value_name = "N|A..B")]
        seeds: Option<smartsim::sweep::Seeds>,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: SweepFormat,
        #[command(flatten)]
        walk: WalkLimit,
    },
    /// Reproduce the papers' experiments: paper vs ours, with figures.
    Reproduce {
        /// An experiment id (or a prefix of one), or `all`.
        #[arg(default_value = "all")]
        name: String,
        /// Folder for the figures (SVG) and the HTML report (index.html).
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Also write every figure as a PNG (twice the SVG's size) next to its SVG.
        #[arg(long)]
        png: bool,
        /// Also write every figure as a one-page vector PDF next to its SVG.
        #[arg(long)]
        pdf: bool,
        /// Output format (json: one object per experiment, one per line).
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// List the experiments and exit.
        #[arg(long)]
        list: bool,
        /// Seeds each scenario of the application experiments (§6.4) runs under, in parallel across
        /// cores; each number is then the mean with its 95 % interval.
        #[arg(long, default_value_t = smartsim::studies::DEFAULT_SEEDS)]
        seeds: usize,
    },
    /// Draw random periodic task sets (UUniFast, UUniFast-discard or RandFixedSum utilisations;
    /// uniform, log-uniform or harmonic periods; implicit deadlines) and write each as a scenario
    /// that `smartsim run` runs: one on stdout, or --count of them in --out. The same options and
    /// --seed always give the same sets.
    Taskset(taskset::TasksetArgs),
    /// A schedulability study: at each utilisation of a sweep, draw random task sets (as `smartsim
    /// taskset`) and count those each policy schedules with no deadline missed in simulation, beside
    /// response-time analysis on one CPU; prints the acceptance ratios, and with --out an HTML
    /// report with the plot researchers draw (acceptance ratio against utilisation). Sets run in
    /// parallel across cores. Defaults: 20 sets of 10 tasks at each of 20 utilisations on 1 CPU.
    Schedulability(taskset::StudyArgs),
    /// Convert another tool's workload description into a scenario (TOML on standard output, or
    /// --out FILE).
    #[command(subcommand)]
    Import(ImportCmd),
    /// List the policies of the registry: what each is, its options with their defaults (every
    /// policy also takes `partition`), the Linux class `hourglass --scenario` runs it in, whether it
    /// notifies
    Policies {
        /// A table for people, the JSON of every entry, or the Markdown table docs/scenario.md shows.
        #[arg(long, value_enum, default_value = "table")]
        format: PoliciesFormat,
    },
    /// Read an execution trace (from `smartsim run --trace`, or any tool that writes the project's
    /// trace format).
    #[command(subcommand)]
    Trace(TraceCmd),
    /// Benchmark the engine: simulated events and jobs per second per policy (SMART and EDF by
    /// default), and each policy's jobs per second against EDF's, measured in the same run.
    Bench {
        /// Task-set sizes on one CPU.
        #[arg(long, default_value = "10,20,100,1000", value_delimiter = ',')]
        tasks: Vec<usize>,
        /// Machines of several CPUs, with 10 tasks per CPU at the same utilisation per CPU (1: only
        /// the one-CPU sizes of --tasks).
        #[arg(long, default_value = "1,4,16,64", value_delimiter = ',')]
        cpus: Vec<u32>,
        /// Policies.
        #[arg(long, default_value = "smart,edf", value_delimiter = ',')]
        policies: Vec<String>,
        /// Simulated seconds per run: at least 1, at most 3600000000 (1000000h), and no more than
        /// the run budget's events in any configuration.
        #[arg(long, default_value_t = 20)]
        seconds: u64,
        /// Utilisation of the task sets.
        #[arg(long, default_value_t = 0.9)]
        utilisation: f64,
        /// Runs of each configuration (1 to 1000); the median wall time is reported. The runs go in
        /// rounds, each configuration under each policy once per round (the policies of one
        /// configuration one after another), so that a machine that slows down for a while during
        /// the bench does not slow one policy's runs alone; the table or JSON lines come after the
        /// last round.
        #[arg(long, default_value_t = 5)]
        repeat: usize,
        /// Simulated seconds of the media mix run after the task sets (10 periodic tasks at 6 % of
        /// the CPU each, periods 10–100 ms, 5 interactive, 5 CPU-bound; one CPU, HZ 1000), under
        /// each policy: the wall time of a simulated hour of a desktop. 0 skips it; at most
        /// 3600000000, and within the run budget.
        #[arg(long, default_value_t = 3600)]
        mix_seconds: u64,
        /// Output format: a table, or one JSON object per configuration (one per line).
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// Stop bench (status 2, no rate: a rate of part of a run is not that of the whole run) once
        /// a run's policy has walked more than N tasks at its decisions (see run's --walk-limit). An
        /// integer, or in e-notation (2e6); 1 to 1e18. Default: 5e10 (minutes).
        #[arg(long, value_parser = smartsim::budget::parse_walk_limit, value_name = "N")]
        walk_limit: Option<u64>,
    },
}

/// `smartsim import ...`.
#[derive(Subcommand)]
enum ImportCmd {
    /// rt-app's JSON task descriptions (github.com/scheduler-tools/rt-app) as a scenario.
    ///
    /// Run + timer becomes a periodic task, run + sleep an interactive one, run alone a cpu task;
    /// instances, loops, delays, SCHED_OTHER nice, SCHED_FIFO/RR priorities and SCHED_DEADLINE
    /// reservations map onto the linux class stack.
    /// What has no equivalent (locks, signals, barriers, fork, memory and I/O events, SCHED_BATCH,
    /// SCHED_IDLE, ...) is refused naming its JSON path. The table: docs/scenario.md, "Importing
    /// rt-app".
    #[command(name = "rt-app")]
    RtApp {
        /// The rt-app file (JSON; C comments and trailing commas accepted, as rt-app does).
        file: PathBuf,
        /// Write the scenario here instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        /// The simulated machine's CPUs (rt-app's `cpus` affinities must name CPUs below it).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
        cpus: u32,
        /// Simulated time (e.g. 10s), instead of the file's global.duration; needed when that is -1
        /// or absent.
        #[arg(long, value_parser = parse_duration)]
        duration: Option<u64>,
    },
}

/// `smartsim trace ...`.
#[derive(Subcommand)]
enum TraceCmd {
    /// Per task: CPU time and share, stretches on CPUs by how they ended (blocked, preempted, slice
    /// end), their lengths (effective quanta), wake-up latency (wake→run), requests by outcome (met,
    /// missed = late + discarded + aborted, unfinished), notifications. The table's footer defines
    /// each term; docs/glossary.md has them all.
    Report {
        /// The trace file.
        file: PathBuf,
        /// Output format: a table for people, or JSON.
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// Also each task's CPU share per window of this length (e.g. 10s), as a fraction of one CPU.
        #[arg(long, value_parser = parse_duration)]
        window: Option<u64>,
    },
    /// Tick-sampled billing replayed on the trace's exact stretches (Etsion et al. 2003, §4, table 3):
    /// per task and sampler rate, the CPU time billed by whole ticks over the time used (billing
    /// ratio) and the complete quanta no tick fell in (never billed); with the trace's own ticks
    /// (a klogger recording's), also the billing the traced kernel did. Any trace: simulated,
    /// hourglass's, or a klogger recording (read as it is).
    Billing {
        /// The trace file.
        file: PathBuf,
        /// Sampler rates (Hz), comma-separated (at most 16, each 1 to 1000000).
        #[arg(long, value_delimiter = ',', default_value = "100,1000")]
        hz: Vec<u32>,
        /// Sampler phase: ticks at phase + k × 10^9/hz ns of the trace clock.
        #[arg(long, default_value_t = 0)]
        phase_ns: u64,
        /// Output format: a table for people, or JSON.
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Two traces of one workload side by side, task by task (matched by name): CPU time in % of one
    /// CPU over each trace's length (a one-CPU simulation compares with a larger machine), median
    /// effective quantum, wake-up latency (wake→run p50, p99), requests met and missed (late +
    /// discarded + aborted; the JSON has each outcome), with B − A. For example a simulated run
    /// against a recorded one (a klogger recording or hourglass --trace), or two policies. Terms:
    /// docs/glossary.md.
    Diff {
        /// Trace A.
        a: PathBuf,
        /// Trace B.
        b: PathBuf,
        /// Output format: a table for people, or JSON.
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// An HTML page (one file, figures inline): the tasks, their requests by outcome, tick billing,
    /// the effective-quantum CDFs (Etsion fig. 6) and quantum against billed time (fig. 4), as
    /// `klogger html` draws them, and a glossary of the terms.
    Html {
        /// The trace file.
        file: PathBuf,
        /// Where to write the page.
        out: PathBuf,
        /// Sampler rates (Hz) of the billing table and scatters, comma-separated (at most 16).
        #[arg(long, value_delimiter = ',', default_value = "100,1000")]
        hz: Vec<u32>,
        /// Tasks drawn (largest CPU time first).
        #[arg(long, default_value_t = 8)]
        tasks: usize,
    },
    /// A Gantt chart of a window of the trace: a row per task (and per CPU on several), executions
    /// as bars, releases and deadlines as arrows, missed deadlines crossed out. Any trace: simulated,
    /// hourglass's, or a klogger recording.
    Gantt {
        /// The trace file.
        file: PathBuf,
        /// Where to write the chart: SVG, PNG or PDF as the extension says (SVG without one).
        out: PathBuf,
        /// The window, FROM..TO since the trace's start with units (e.g. 0s..200ms); default: the
        /// first 200 ms, or the whole trace if it is shorter.
        #[arg(long, value_parser = parse_window, value_name = "FROM..TO")]
        window: Option<Window>,
    },
    /// Convert to a Perfetto / Chrome trace (JSON; open it at ui.perfetto.dev).
    Perfetto {
        /// The trace file.
        file: PathBuf,
        /// Where to write the JSON.
        out: PathBuf,
    },
}

/// Format of `smartsim run --jobs`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum JobsFormat {
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

impl JobsFormat {
    /// The format of the planner's vocabulary.
    fn format(self) -> outputs::Format {
        match self {
            JobsFormat::Csv => outputs::Format::Csv,
            JobsFormat::Jsonl => outputs::Format::JsonLines,
        }
    }

    /// `--jobs-format NAME`, as given.
    fn option(self) -> &'static str {
        match self {
            JobsFormat::Csv => "--jobs-format csv",
            JobsFormat::Jsonl => "--jobs-format jsonl",
        }
    }
}

/// Writes the per-request rows of `smartsim run --jobs`, in the format the plan chose.
fn write_jobs(out: &outputs::Output, rows: &[smartsim::engine::JobRecord]) -> Result<()> {
    use std::io::Write;
    let format = if out.format() == outputs::Format::JsonLines { JobsFormat::Jsonl } else { JobsFormat::Csv };
    let mut w = std::io::BufWriter::new(out.create()?);
    let opt = |v: Option<u64>| v.map_or(String::new(), |x| x.to_string());
    match format {
        JobsFormat::Csv => {
            writeln!(w, "task,job,cpu,release_ns,start_ns,finish_ns,deadline_ns,exec_ns,outcome,preemptions")
                .map_err(|e| out.write_error(e))?;
            for j in rows {
                let outcome = serde_json::to_value(j.outcome)?;
                writeln!(
                    w,
                    "{},{},{},{},{},{},{},{},{},{}",
                    report::escape::csv_field(&j.task),
                    j.job,
                    opt(j.cpu.map(u64::from)),
                    j.release_ns,
                    opt(j.start_ns),
                    opt(j.finish_ns),
                    j.deadline_ns,
                    j.exec_ns,
                    outcome.as_str().unwrap_or(""),
                    j.preemptions
                )
                .map_err(|e| out.write_error(e))?;
            }
        }
        JobsFormat::Jsonl => {
            for j in rows {
                serde_json::to_writer(&mut w, j).map_err(|e| out.write_error(e.into()))?;
                w.write_all(b"\n").map_err(|e| out.write_error(e))?;
            }
        }
    }
    w.flush().map_err(|e| out.write_error(e))?;
    out.wrote(&format!("{} requests", rows.len()));
    Ok(())
}

/// A window of time `from..to` (ns) of `--gantt-window` and `trace gantt --window`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Window {
    from: u64,
    to: u64,
}

impl Window {
    /// The first [`report::DEFAULT_WINDOW_NS`] of a run of `duration`, or all of it if shorter.
    fn default_for(duration: u64) -> Window {
        Window { from: 0, to: duration.clamp(1, report::DEFAULT_WINDOW_NS) }
    }

    /// Refuses a window that is not inside `[0, end]`.
    fn check_within(self, end: u64, option: &str, lasts: &str) -> Result<()> {
        let fmt = report::format_time_exact;
        if self.from >= end {
            bail!(
                "{option} {}..{}: it starts at or after the end ({lasts} {}); choose a window inside it",
                fmt(self.from),
                fmt(self.to),
                fmt(end)
            );
        }
        if self.to > end {
            bail!(
                "{option} {}..{}: it ends after the end ({lasts} {}); choose a window inside it, e.g. {}..{}",
                fmt(self.from),
                fmt(self.to),
                fmt(end),
                fmt(self.from),
                fmt(end)
            );
        }
        Ok(())
    }
}

/// `smartsim sweep`; how it ended (Ctrl-C, or a run past its walk limit: its rows marked partial).
fn sweep(
    file: &Path,
    axes: &[smartsim::sweep::Axis],
    seeds: Option<smartsim::sweep::Seeds>,
    format: SweepFormat,
    walk: WalkLimit,
) -> Result<Ended> {
    use smartsim::sweep;
    let watch = progress::interruptible()?;
    let path = file.display().to_string();
    let src = workload::read_capped(file, workload::MAX_SCENARIO_BYTES)
        .map_err(|e| anyhow::anyhow!("{path}: cannot read the scenario: {e}"))?;
    // The file as it is first (its own problems reported as any scenario's), then every combination.
    let sweep::Plan { base, scenarios: scns, params, seeds } =
        sweep::plan(&src, &path, axes, seeds.map(|s| s.0))?;
    for w in &base.warnings {
        tracing::warn!("{w}");
    }
    // The bar counts the simulated time of every run (in parallel, they add up), and the runs done.
    let total_ns = scns
        .iter()
        .map(|s| s.machine.duration.saturating_mul(seeds.len() as u64))
        .fold(0, u64::saturating_add);
    let runs = (scns.len() * seeds.len()) as u64;
    let bar = progress::bar(&watch, progress::Plan { total_ns, runs: (runs, "runs") });
    let swept = sweep::run_watched(&scns, &params, &seeds, &watch, walk.walk_limit);
    drop(bar);
    let swept = swept?;
    let rows = &swept.rows;
    // A sweep with runs stopped partway (Ctrl-C, or past their walk limit) says which rows are
    // theirs, in a last column (a whole sweep's columns are as ever).
    let partial_column = swept.partial > 0;
    let opt = |x: Option<u64>| x.map_or(String::new(), |v| v.to_string());
    let keys: Vec<&str> = axes.iter().map(|a| a.key.as_str()).collect();
    let heads: Vec<&str> = keys
        .iter()
        .copied()
        .chain([
            "seed",
            "task",
            "cpu_share",
            "met",
            "missed",
            "latency_p50_ns",
            "latency_p99_ns",
            "response_max_ns",
        ])
        .chain(partial_column.then_some("partial"))
        .collect();
    let cells = |r: &sweep::Row| -> Vec<String> {
        r.params
            .iter()
            .map(|(_, v)| v.clone())
            .chain([
                r.seed.to_string(),
                r.task.clone(),
                format!("{:.6}", r.cpu_share),
                opt(r.met),
                opt(r.missed),
                opt(r.latency_p50_ns),
                opt(r.latency_p99_ns),
                opt(r.response_max_ns),
            ])
            .chain(partial_column.then(|| r.partial.as_ref().map_or(String::new(), |p| p.describe())))
            .collect()
    };
    match format {
        SweepFormat::Table => {
            let mut t = Table::new(&heads);
            for r in rows {
                t.row(cells(r).into_iter().map(|c| if c.is_empty() { "-".into() } else { c }).collect());
            }
            diag::out!("{}", t.render());
            if watch.stopping() {
                diag::outln!("partial (Ctrl-C): {}", sweep_counts(&swept, true));
            } else if swept.partial > 0 {
                diag::outln!(
                    "partial ({}): {}",
                    PartialReason::OverBudget.cause(),
                    sweep_counts(&swept, false)
                );
            }
        }
        SweepFormat::Csv => {
            let line = |cs: Vec<String>| {
                cs.iter().map(|c| report::escape::csv_field(c).into_owned()).collect::<Vec<_>>().join(",")
            };
            diag::outln!("{}", line(heads.iter().map(|h| h.to_string()).collect()));
            for r in rows {
                diag::outln!("{}", line(cells(r)));
            }
        }
        SweepFormat::Jsonl => {
            for r in rows {
                diag::outln!("{}", serde_json::to_string(&r.to_json())?);
            }
        }
    }
    if watch.stopping() {
        eprintln!("smartsim: sweep interrupted: {}", sweep_counts(&swept, true));
        Ok(Ended::Interrupted)
    } else if swept.over_budget > 0 {
        eprintln!(
            "smartsim: sweep: {} ({} in those runs, {}; {})",
            sweep_counts(&swept, false),
            PartialReason::OverBudget.cause(),
            walk.walk_limit.map_or(smartsim::budget::MAX_WALKED.to_string(), |n| format!("--walk-limit {n}")),
            if walk.walk_limit.is_some() {
                "a larger one runs them further"
            } else {
                "give fewer tasks or a shorter machine.duration"
            }
        );
        Ok(Ended::OverBudget)
    } else {
        Ok(Ended::Whole)
    }
}

/// `3 of 10 runs went to their end, 2 stopped partway (their rows marked partial; 1 over budget), 5
/// not started`.
fn sweep_counts(s: &smartsim::sweep::Swept, ctrl_c: bool) -> String {
    // After Ctrl-C, which of the runs stopped partway stopped themselves, over budget.
    let over =
        if ctrl_c && s.over_budget > 0 { format!("; {} over budget", s.over_budget) } else { String::new() };
    format!(
        "{} of {} runs went to their end, {} stopped partway (their rows marked partial{over}), {} not started",
        s.done, s.runs, s.partial, s.not_started
    )
}

/// Parses `TASK=TIME` (a time with its unit) for `rta --blocking`.
fn parse_blocking(s: &str) -> Result<(String, u64), String> {
    let (name, time) = s.split_once('=').ok_or_else(|| format!("'{s}': give TASK=TIME, e.g. t1=2ms"))?;
    if name.trim().is_empty() {
        return Err(format!("'{s}': the task's name is empty"));
    }
    let t = workload::parse_bounded_time(time).map_err(|e| format!("'{s}': {e}"))?;
    Ok((name.to_string(), t))
}

/// Parses `FROM..TO`, two times with units (`workload::parse_time`), FROM before TO.
fn parse_window(s: &str) -> Result<Window, String> {
    let Some((a, b)) = s.split_once("..") else {
        return Err(format!("'{s}' is not a window: write FROM..TO with units, e.g. 0s..200ms"));
    };
    let from = workload::parse_bounded_time(a).map_err(|e| format!("the start of '{s}': {e}"))?;
    let to = workload::parse_bounded_time(b).map_err(|e| format!("the end of '{s}': {e}"))?;
    if from >= to {
        return Err(format!("'{s}': the window must end after it starts"));
    }
    Ok(Window { from, to })
}

/// Writes a Gantt chart (planned before the run or the read) in the format its name chose; says
/// on standard error what it holds, and when its window held too much to draw.
fn write_gantt(out: &outputs::Output, g: &report::Gantt) -> Result<()> {
    use std::io::Write;
    let path = out.path();
    match image_format(out) {
        ImageFormat::Svg => {
            let mut w = std::io::BufWriter::new(out.create()?);
            w.write_all(g.to_svg().as_bytes()).and_then(|()| w.flush()).map_err(|e| out.write_error(e))?;
        }
        f => report::export::write_as(&g.to_svg(), path, f).map_err(|e| image_error(path, e))?,
    }
    if let Some(msg) = g.overflow() {
        tracing::warn!("{}: {msg}; the chart says so instead of drawing them", path.display());
    }
    let left_out = match g.left_out() {
        0 => String::new(),
        n => format!(
            "; {}{n} tasks left out, the chart has at most {} rows",
            if g.left_out_at_least() { "at least " } else { "" },
            report::MAX_ROWS
        ),
    };
    out.wrote(&format!("{} stretches, {} missed deadlines drawn{left_out}", g.stretches(), g.misses()));
    Ok(())
}

/// The image format the plan chose for an output of [`outputs::Kind::IMAGE`].
fn image_format(out: &outputs::Output) -> ImageFormat {
    match out.format() {
        outputs::Format::Png => ImageFormat::Png,
        outputs::Format::Pdf => ImageFormat::Pdf,
        _ => ImageFormat::Svg,
    }
}

/// Refuses an image output too large to draw in its format (`report::export::check_drawing`),
/// naming the scenario, the option and the file.
fn check_image(scn: &workload::Scenario, out: &outputs::Output, d: &report::export::Drawing) -> Result<()> {
    report::export::check_drawing(d, image_format(out))
        .map_err(|why| anyhow::anyhow!("{}: {} {}: {why}", scn.path, out.label(), out.path().display()))
}

/// An image that could not be written, with its file named (a write error names it already).
fn image_error(path: &Path, e: report::export::ExportError) -> anyhow::Error {
    match e {
        report::export::ExportError::Io { .. } => e.into(),
        e => anyhow::anyhow!("{}: {e}", path.display()),
    }
}

/// Checks the plan of a command's files; a refusal is the command's error (exit status 2), before
/// any work.
fn plan(p: outputs::Plan) -> Result<outputs::Outputs> {
    Ok(p.check()?)
}

fn print_policies(format: PoliciesFormat) {
    match format {
        PoliciesFormat::Markdown => diag::out!("{}", sched::registry::table_markdown()),
        PoliciesFormat::Json => {
            diag::outln!("{}", serde_json::to_string_pretty(&smartsim::policies_json()).expect("JSON"));
        }
        PoliciesFormat::Table => {
            for e in sched::REGISTRY {
                diag::outln!("{:12} {}", e.name, e.about);
                for o in e.options {
                    diag::outln!("{:14}{} = {} : {}", "", o.key, o.default, o.about);
                }
            }
            diag::outln!(
                "\nEvery policy also takes `partition` = \"global\" (default) | \"affinity\" | \"ffd\"."
            );
        }
    }
}

fn main() {
    // Output piped into `head` ends quietly, as other command-line tools do: results go to standard
    // output through `diag::out!`, which ends the program on a closed pipe (diag's doc says why not
    // by SIGPIPE).
    match real_main() {
        Ok(Ended::Whole) => {}
        // The results printed are partial: the status says that the command did not finish.
        Ok(Ended::Interrupted) => std::process::exit(progress::INTERRUPTED),
        Ok(Ended::OverBudget) => std::process::exit(OVER_BUDGET),
        Err(e) => {
            // An error may quote a name or a line of an input: shown as a terminal may show it.
            eprintln!("smartsim: {}", diag::visible_lines(&format!("{e:#}")));
            std::process::exit(2);
        }
    }
}

/// How a command ended, once it printed its results.
enum Ended {
    /// Everything it was asked.
    Whole,
    /// Ctrl-C stopped it: what it printed is partial (status [`progress::INTERRUPTED`]).
    Interrupted,
    /// A run's policy walked past the run's limit ([`smartsim::budget::MAX_WALKED`] without
    /// `--force`, or `--walk-limit`): what it printed is partial (status [`OVER_BUDGET`]).
    OverBudget,
}

/// The exit status of a command whose run stopped itself past the tasks its policy may walk, after
/// printing its partial results.
const OVER_BUDGET: i32 = 3;

impl Ended {
    /// How a command that ran `results`, watched by `watch`, ended.
    fn of(watch: &smartsim::engine::Progress, results: &[SimResult], walk: WalkLimit) -> Ended {
        if watch.stopping() {
            Ended::Interrupted
        } else if over_budget(results, walk).is_some() {
            Ended::OverBudget
        } else {
            Ended::Whole
        }
    }
}

/// The runs of `results` that stopped past their walk limit, each `policy reason at … (cause)`, if any.
fn over_budget(results: &[SimResult], walk: WalkLimit) -> Option<String> {
    let over: Vec<String> = results
        .iter()
        .filter_map(|r| r.partial.as_ref().filter(|p| p.reason == PartialReason::OverBudget).map(|p| (r, p)))
        .map(|(r, p)| {
            format!(
                "{} {} ({}{})",
                diag::visible(&r.policy),
                p.describe(),
                p.reason.cause(),
                lift(p.reason, walk, LIFT_BY_FORCE)
            )
        })
        .collect();
    (!over.is_empty()).then(|| over.join("; "))
}

/// What lifts the default walk limit of `run` and `compare`.
const LIFT_BY_FORCE: &str = " without --force; --force runs it whole";

/// The limit that stopped a run under `walk`, and what lifts it ([`smartsim::budget::lift`]).
fn lift(reason: PartialReason, walk: WalkLimit, default: &str) -> String {
    smartsim::budget::lift(reason, walk.walk_limit, default)
}

/// `--walk-limit` of run, compare, sweep and bench.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
struct WalkLimit {
    /// Stop a run, marked partial ("reason": "over_budget", status 3), once its policy has walked more than N
    /// tasks at its decisions (smart walks its own, lottery and linux-2.4 once a task has a CPU affinity; the
    /// others walk none).
    /// An integer, or in e-notation (2e6); 1 to 1e18. Default: 5e10 (minutes), or none under the
    /// --force of run and compare.
    #[arg(long, value_parser = smartsim::budget::parse_walk_limit, value_name = "N")]
    walk_limit: Option<u64>,
}

impl WalkLimit {
    /// `sim` held to `--walk-limit` if given, else free of a limit if `force`, else at the default.
    fn apply(self, mut sim: smartsim::Sim<'_>, force: bool) -> smartsim::Sim<'_> {
        sim.limit_walked_as_asked(self.walk_limit, force);
        sim
    }
}

fn real_main() -> Result<Ended> {
    let cli = Cli::parse();
    diag::init("smartsim", cli.verbose.tracing_level_filter());
    let mut ended = Ended::Whole;
    match cli.cmd {
        Cmd::Run {
            file,
            policy,
            format,
            svg,
            perfetto,
            trace,
            window,
            timeline,
            jobs,
            jobs_format,
            gantt,
            gantt_window,
            force,
            walk,
        } => {
            let watch = progress::interruptible()?;
            // Every output file is planned before anything else: not the scenario, not another
            // output, writable, and of the format its name says.
            let mut p = outputs::Plan::new();
            p.input("the scenario", &file);
            p.stdout(match format {
                Format::Json => "the run's JSON",
                Format::Table => "the run's table",
            });
            let svg = p.output("--svg", svg.as_deref(), outputs::Kind::IMAGE);
            let gantt = p.output("--gantt", gantt.as_deref(), outputs::Kind::IMAGE);
            let jobs = p.output_as(
                "--jobs",
                jobs.as_deref(),
                outputs::Kind::CSV_OR_JSON_LINES,
                jobs_format.map(|f| (f.option(), f.format())),
            );
            let trace = p.output("--trace", trace.as_deref(), outputs::Kind::TRACE);
            let perfetto = p.output("--perfetto", perfetto.as_deref(), outputs::Kind::JSON);
            let timeline = p.output("--timeline", timeline.as_deref(), outputs::Kind::CSV);
            let planned = plan(p)?;
            let [svg, gantt, jobs, trace, perfetto, timeline] =
                [svg, gantt, jobs, trace, perfetto, timeline].map(|s| planned.get(s));
            let scn = load(&file)?;
            let outputs = smartsim::budget::Outputs {
                trace: trace.is_some(),
                perfetto: perfetto.is_some(),
                jobs: jobs.is_some(),
                figure: svg.is_some(),
            };
            within_budget(&scn, policy.as_deref(), outputs, force)?;
            // Images are sized from the scenario and refused before the run.
            let estimate = smartsim::budget::estimate(&scn, policy.as_deref(), outputs);
            if let Some(o) = svg {
                check_image(&scn, o, &smartsim::budget::figure(&scn, &estimate))?;
            }
            if let Some(o) = gantt {
                check_image(&scn, o, &report::Gantt::planned(scn.tasks.len(), scn.machine.cpus))?;
            }
            // Every option is checked before the run: a mistake found late neither wastes the run nor
            // leaves an existing file emptied.
            if svg.iter().chain(&gantt).any(|o| image_format(o) != ImageFormat::Svg) {
                report::export::check_fonts()?;
            }
            if let Some(w) = window {
                trace::windows::check(scn.machine.duration, w, scn.tasks.len())
                    .map_err(anyhow::Error::msg)?;
            }
            let gantt_window = match (&gantt, gantt_window) {
                (None, _) => None,
                (Some(_), w) => Some(w.unwrap_or_else(|| Window::default_for(scn.machine.duration))),
            };
            if let Some(w) = gantt_window {
                w.check_within(scn.machine.duration, "--gantt-window", "the run lasts")?;
            }
            // The trace's records go to the file as the run makes them, and are kept only for Perfetto.
            let kept: RefCell<Vec<trace::Record>> = RefCell::default();
            let shares = RefCell::new(trace::windows::Windows::new(0, window.unwrap_or(1)));
            let chart: RefCell<Option<report::Gantt>> = RefCell::default();
            let mut out = None;
            let bar =
                progress::bar(&watch, progress::Plan { total_ns: scn.machine.duration, runs: (1, "run") });
            let (r, job_rows) = if perfetto.is_some()
                || jobs.is_some()
                || trace.is_some()
                || window.is_some()
                || svg.is_some()
                || gantt.is_some()
            {
                let mut sim = walk.apply(smartsim::simulator(&scn, policy.as_deref())?, force);
                if let Some(w) = gantt_window {
                    let mut g =
                        report::Gantt::new(&sim.trace_header(&file.display().to_string()), w.from, w.to);
                    g.set_title(&format!("{} under {}", scn.name, sim.core().name()));
                    *chart.borrow_mut() = Some(g);
                }
                if let Some(o) = trace {
                    let f = std::io::BufWriter::with_capacity(1 << 16, o.create()?);
                    let w = trace::Writer::new(f, &sim.trace_header(&file.display().to_string()))
                        .map_err(|e| o.write_error(e))?;
                    out = Some(RefCell::new((w, None::<std::io::Error>)));
                }
                if trace.is_some() || perfetto.is_some() || window.is_some() || gantt.is_some() {
                    let (out, kept, keep, shares, windowed, chart) =
                        (&out, &kept, perfetto.is_some(), &shares, window.is_some(), &chart);
                    sim.trace_to(move |rec| {
                        if windowed {
                            shares.borrow_mut().add(&rec);
                        }
                        if let Some(g) = chart.borrow_mut().as_mut() {
                            g.add(&rec);
                        }
                        if let Some(o) = out {
                            let (w, err) = &mut *o.borrow_mut();
                            if err.is_none() {
                                *err = w.write(&rec).err();
                            }
                        }
                        if keep {
                            kept.borrow_mut().push(rec);
                        }
                    });
                }
                if jobs.is_some() || svg.is_some() {
                    sim.record_jobs();
                }
                sim.watch(std::sync::Arc::clone(&watch));
                sim.run_until(u64::MAX);
                sim.finish_all()
            } else {
                let mut sim = walk.apply(smartsim::simulator(&scn, policy.as_deref())?, force);
                sim.watch(std::sync::Arc::clone(&watch));
                (sim.run(), Vec::new())
            };
            drop(bar);
            if let (Some(o), Some(w)) = (trace, out) {
                let (w, err) = w.into_inner();
                let n = w.records();
                err.map_or(Ok(()), Err).and_then(|()| w.finish().map(drop)).map_err(|e| o.write_error(e))?;
                o.wrote(&format!("{n} records"));
            }
            if let Some(o) = jobs {
                write_jobs(o, &job_rows)?;
            }
            if let (Some(o), Some(g)) = (gantt, chart.into_inner()) {
                write_gantt(o, &g)?;
            }
            let windows = if window.is_some() { shares.borrow().finish() } else { Vec::new() };
            if let Some(o) = perfetto {
                let t = report::Trace::from_records(
                    &format!("smartsim {} ({})", scn.name, r.policy),
                    kept.into_inner(),
                );
                t.write(std::io::BufWriter::new(o.create()?)).map_err(|e| o.write_error(e))?;
                o.wrote(&format!("{} events", t.event_count()));
            }
            if let Some(o) = timeline {
                let mut csv = String::from("time_s");
                for task in &scn.tasks {
                    csv.push(',');
                    csv.push_str(&report::escape::csv_field(&format!("{}_cpu_ms", task.name)));
                }
                csv.push('\n');
                for (k, at) in r.timeline.at.iter().enumerate() {
                    csv.push_str(&format!("{:.6}", *at as f64 / 1e9));
                    for c in &r.timeline.cpu[k] {
                        csv.push_str(&format!(",{:.3}", *c as f64 / 1e6));
                    }
                    csv.push('\n');
                }
                o.write(csv.as_bytes())?;
                o.wrote(&format!("{} samples", r.timeline.at.len()));
            }
            if let Some(o) = svg {
                let names: Vec<String> = scn.tasks.iter().map(|t| t.name.clone()).collect();
                let draws = smartsim::ideal::draws(&scn, &job_rows);
                drop(job_rows);
                let ideal = smartsim::ideal::ideal_of_run(&scn, &draws);
                let partial =
                    r.partial.as_ref().map_or(String::new(), |p| format!(" (partial: {})", p.describe()));
                let fig =
                    cpu_figure(&format!("{} under {}{partial}", scn.name, r.policy), &r, &names, &ideal);
                report::export::write_as(&fig.to_svg(), o.path(), image_format(o))
                    .map_err(|e| image_error(o.path(), e))?;
                o.wrote("");
            }
            // The results last, once every file is written: a reader that stops early (`| head`)
            // costs no file.
            match format {
                Format::Json => {
                    let mut v = r.to_json();
                    if window.is_some() {
                        v["windows"] = serde_json::to_value(&windows)?;
                    }
                    diag::outln!("{}", serde_json::to_string_pretty(&v)?)
                }
                Format::Table => {
                    diag::out!("{}", result_table(&r));
                    if window.is_some() {
                        let names: Vec<String> = r.tasks.iter().map(|t| t.name.clone()).collect();
                        diag::out!("{}", window_table(&names, &windows));
                    }
                }
            }
            if let Some(p) = &r.partial {
                eprintln!(
                    "smartsim: run {}: its results are partial ({}{})",
                    p.describe(),
                    p.reason.cause(),
                    lift(p.reason, walk, LIFT_BY_FORCE)
                );
            }
            ended = Ended::of(&watch, std::slice::from_ref(&r), walk);
        }
        Cmd::Compare { file, policies, format, force, walk } => {
            let watch = progress::interruptible()?;
            let scn = load(&file)?;
            let policies: Vec<&str> = policies.split(',').map(str::trim).collect();
            let sims = if policies.contains(&"all") {
                if policies.len() > 1 {
                    anyhow::bail!(
                        "--policies: `all` stands alone (every policy that can run the scenario); give it \
                         or a list of names"
                    );
                }
                all_policies(&scn, force, walk)?
            } else {
                compare_list(&scn, &policies, force, walk)?
            };
            let (results, not_run) = compare_runs(&scn, sims, &watch);
            match format {
                Format::Json => {
                    for r in &results {
                        diag::outln!("{}", serde_json::to_string(&r.to_json())?);
                    }
                }
                Format::Table if results.is_empty() => {}
                Format::Table => diag::out!("{}", compare_table(&results, &not_run)),
            }
            if watch.stopping() {
                let partial: Vec<String> = results
                    .iter()
                    .filter_map(|r| r.partial.as_ref().map(|p| format!("{} {}", r.policy, p.describe())))
                    .collect();
                eprintln!(
                    "smartsim: compare interrupted: {} of {} policies ran to the end{}{}",
                    results.len() - partial.len(),
                    results.len() + not_run.len(),
                    if partial.is_empty() {
                        String::new()
                    } else {
                        format!("; partial: {}", partial.join(", "))
                    },
                    if not_run.is_empty() {
                        String::new()
                    } else {
                        format!("; not run: {}", not_run.join(", "))
                    },
                );
                ended = Ended::Interrupted;
            } else if let Some(over) = over_budget(&results, walk) {
                eprintln!("smartsim: compare: partial: {over}");
                ended = Ended::OverBudget;
            }
        }
        Cmd::Sweep { file, set, seeds, format, walk } => {
            ended = sweep(&file, &set, seeds, format, walk)?;
        }
        Cmd::Rta { file, blocking, format } => {
            let scn = load(&file)?;
            let mut by_task = std::collections::BTreeMap::new();
            for (name, t) in blocking {
                if by_task.insert(name.clone(), t).is_some() {
                    anyhow::bail!("--blocking {name}=...: given twice");
                }
            }
            let (tasks, left_out) = smartsim::rta::from_scenario(&scn, &by_task)?;
            if !left_out.is_empty() {
                tracing::warn!(
                    "left out (not periodic, below every periodic task's priority): {}",
                    left_out.join(", ")
                );
            }
            let responses = smartsim::rta::analyse(&tasks);
            match format {
                Format::Json => {
                    diag::outln!("{}", serde_json::to_string(&serde_json::json!({ "tasks": responses }))?);
                }
                Format::Table => {
                    let mut t = Table::new(&[
                        "task",
                        "priority",
                        "C ms",
                        "T ms",
                        "D ms",
                        "J ms",
                        "B ms",
                        "wcrt ms",
                        "schedulable",
                    ]);
                    let ms = |n: u64| format!("{}", n as f64 / 1e6);
                    for (x, r) in tasks.iter().zip(&responses) {
                        t.row(vec![
                            x.name.clone(),
                            x.priority.to_string(),
                            ms(x.exec),
                            ms(x.period),
                            if x.deadline == u64::MAX { "-".into() } else { ms(x.deadline) },
                            ms(x.jitter),
                            ms(x.blocking),
                            r.wcrt_ns.map_or("-".into(), ms),
                            if r.schedulable { "yes" } else { "no" }.into(),
                        ]);
                    }
                    diag::out!("{}", t.render());
                    diag::outln!(
                        "wcrt: worst-case response time, from a request's nominal release to its end, with release \
                         jitter J and blocking B (Audsley; Tindell); \"-\": the busy period never ends"
                    );
                }
            }
        }
        Cmd::Reproduce { name, out, format, list, png, pdf, seeds } => {
            if list {
                for e in papers::EXPERIMENTS {
                    diag::outln!("{:24} {:28} scenarios/papers/{}", e.id, e.source, e.file);
                }
                for s in smartsim::studies::STUDIES {
                    // Each file once, in the order the variants first use it (a file with keys set is
                    // several variants).
                    let mut files: Vec<String> = Vec::new();
                    for v in s.variants {
                        let f = format!("scenarios/papers/{}", v.file);
                        if !files.contains(&f) {
                            files.push(f);
                        }
                    }
                    diag::outln!("{:24} {:28} {}", s.id, s.source, files.join(" "));
                }
                return Ok(Ended::Whole);
            }
            let mut p = outputs::Plan::new();
            p.directory("--out", &out);
            plan(p)?;
            let mut also = Vec::new();
            also.extend(png.then_some(ImageFormat::Png));
            also.extend(pdf.then_some(ImageFormat::Pdf));
            reproduce::reproduce(&name, &out, format, &also, seeds)?;
        }
        Cmd::Taskset(args) => taskset::taskset(args)?,
        Cmd::Schedulability(args) => taskset::schedulability(args)?,
        Cmd::Trace(cmd) => trace_cmd(cmd)?,
        Cmd::Import(ImportCmd::RtApp { file, out, cpus, duration }) => {
            let mut p = outputs::Plan::new();
            p.input("the rt-app file", &file);
            let slot = p.output("--out", out.as_deref(), outputs::Kind::SCENARIO);
            if out.is_none() {
                p.stdout("the scenario");
            }
            let outs = plan(p)?;
            let opts = smartsim::rtapp::Options { cpus, duration_ns: duration };
            let toml = smartsim::rtapp::convert_file(&file, &opts)?;
            match outs.get(slot) {
                Some(o) => {
                    o.write(toml.as_bytes())?;
                    o.wrote("");
                }
                None => diag::out!("{toml}"),
            }
        }
        Cmd::Policies { format } => print_policies(format),
        Cmd::Bench {
            tasks,
            cpus,
            policies,
            seconds,
            utilisation,
            repeat,
            mix_seconds,
            format,
            walk_limit,
        } => {
            let walk = WalkLimit { walk_limit };
            if seconds == 0 {
                anyhow::bail!("bench: --seconds 0: give at least 1 simulated second");
            }
            if seconds > MAX_BENCH_SECONDS {
                anyhow::bail!(
                    "bench: --seconds {seconds}: at most {MAX_BENCH_SECONDS} simulated seconds (1000000h, the \
                     longest time a run takes)"
                );
            }
            if let Some(n) = tasks.iter().find(|&&n| n == 0 || n > 100_000) {
                anyhow::bail!("bench: --tasks {n}: a task set has 1 to 100000 tasks");
            }
            if let Some(c) = cpus.iter().find(|&&c| c == 0 || c as usize > sched::MAX_CPUS) {
                anyhow::bail!("bench: --cpus {c}: a machine has 1 to {} CPUs", sched::MAX_CPUS);
            }
            if !(utilisation > 0.0 && utilisation <= 1.0) {
                anyhow::bail!(
                    "bench: --utilisation {utilisation}: a utilisation per CPU above 0 and at most 1"
                );
            }
            if mix_seconds > MAX_BENCH_SECONDS {
                anyhow::bail!(
                    "bench: --mix-seconds {mix_seconds}: at most {MAX_BENCH_SECONDS} simulated seconds (1000000h)"
                );
            }
            if repeat == 0 {
                anyhow::bail!("bench: --repeat 0: run each configuration at least once");
            }
            if repeat > MAX_BENCH_REPEAT {
                anyhow::bail!(
                    "bench: --repeat {repeat}: at most {MAX_BENCH_REPEAT} runs of each configuration"
                );
            }
            for p in &policies {
                sched::build(p, &Default::default(), 1)
                    .map_err(|e| anyhow::anyhow!("bench: --policies: {e}"))?;
            }
            let mut configs: Vec<(usize, u32)> = tasks.iter().map(|&n| (n, 1)).collect();
            configs.extend(
                cpus.iter().filter(|&&c| c > 1 || !tasks.contains(&10)).map(|&c| (10 * c as usize, c)),
            );
            // Every configuration within the run budget before the first starts.
            for p in &policies {
                for &(n, c) in &configs {
                    let scn = bench_scenario(n, c, utilisation, seconds, p);
                    let e = smartsim::budget::estimate(&scn, None, Default::default());
                    let over = smartsim::budget::over(&e);
                    if !over.is_empty() {
                        anyhow::bail!(
                            "bench: --seconds {seconds} with {n} tasks on {c} CPU(s) ({p}) would take {}: give \
                             fewer --seconds, --tasks or --cpus",
                            over.join("; and ")
                        );
                    }
                }
                let mix = smartsim::bench::media_mix(mix_seconds * 1_000_000_000, p, 1);
                let over =
                    smartsim::budget::over(&smartsim::budget::estimate(&mix, None, Default::default()));
                if !over.is_empty() {
                    anyhow::bail!(
                        "bench: --mix-seconds {mix_seconds} ({p}) would take {}: give fewer",
                        over.join("; and ")
                    );
                }
            }
            bench(&configs, &policies, seconds, utilisation, (repeat, walk), format)?;
            if mix_seconds > 0 {
                bench_mix(&policies, mix_seconds, (repeat, walk), format)?;
            }
        }
    }
    Ok(ended)
}

/// `compare`'s runs, one policy after another, watched by `watch` with a bar over their simulated
/// time: the results of the policies run (the last one partial if Ctrl-C stopped it), and the
/// policies not run because Ctrl-C came first.
fn compare_runs(
    scn: &workload::Scenario,
    sims: Vec<smartsim::Sim<'_>>,
    watch: &std::sync::Arc<smartsim::engine::Progress>,
) -> (Vec<SimResult>, Vec<String>) {
    let n = sims.len() as u64;
    let bar = progress::bar(
        watch,
        progress::Plan { total_ns: scn.machine.duration.saturating_mul(n), runs: (n, "policies") },
    );
    let mut results = Vec::new();
    let mut not_run = Vec::new();
    for mut sim in sims {
        if watch.stopping() {
            not_run.push(sim.core().name().to_string());
            continue;
        }
        sim.watch(std::sync::Arc::clone(watch));
        let r = sim.run();
        watch.run_done();
        results.push(r);
    }
    drop(bar);
    (results, not_run)
}

/// A time on the command line: with a unit, at most `workload::MAX_TIME`, as in a scenario.
fn parse_duration(s: &str) -> Result<u64, String> {
    workload::parse_bounded_time(s).map_err(|e| e.to_string())
}

fn window_table(names: &[String], ws: &[trace::windows::Window]) -> String {
    let mut h = vec!["window s".to_string()];
    h.extend(names.iter().map(|n| format!("{n} %")));
    let hs: Vec<&str> = h.iter().map(String::as_str).collect();
    let mut t = Table::new(&hs);
    for w in ws {
        let mut row = vec![format!("{:.1}-{:.1}", w.from_ns as f64 / 1e9, w.to_ns as f64 / 1e9)];
        row.extend(w.shares.iter().map(|s| format!("{:.1}", 100.0 * s)));
        t.row(row);
    }
    t.render()
}

/// `compare --policies A,B,...`: every policy built (its name, options and the scenario's rules
/// checked) before any runs; any refusal is an error.
fn compare_list<'s>(
    scn: &'s workload::Scenario,
    policies: &[&str],
    force: bool,
    walk: WalkLimit,
) -> Result<Vec<smartsim::Sim<'s>>> {
    if let Some(k) = (1..policies.len()).find(|&k| policies[..k].contains(&policies[k])) {
        anyhow::bail!("--policies: {} given twice", diag::visible(policies[k]));
    }
    if let Some(p) = policies.iter().find(|p| sched::registry::entry(p).is_none()) {
        let known: Vec<&str> = sched::registry::names().collect();
        anyhow::bail!("--policies: unknown policy `{}` (known: {})", diag::visible(p), known.join(", "));
    }
    for p in policies {
        within_budget(scn, Some(p), Default::default(), force)?;
    }
    // The table holds every policy's result until the end: their memory adds up.
    let held: u64 = policies
        .iter()
        .map(|p| smartsim::budget::estimate(scn, Some(p), Default::default()).memory)
        .fold(0, u64::saturating_add);
    if held > smartsim::budget::MAX_MEMORY && !force {
        anyhow::bail!(
            "{}: comparing {} policies would hold about {:.1} GiB of results, over the limit of {:.1} \
                     GiB; compare fewer policies, shorten the run, or pass --force",
            scn.path,
            policies.len(),
            held as f64 / (1u64 << 30) as f64,
            smartsim::budget::MAX_MEMORY as f64 / (1u64 << 30) as f64
        );
    }
    policies.iter().map(|p| smartsim::simulator(scn, Some(p)).map(|s| walk.apply(s, force))).collect()
}

/// `compare --policies all`: every registered policy that can run the scenario, in registry order;
/// the others are named with why on one line of stderr.
fn all_policies(scn: &workload::Scenario, force: bool, walk: WalkLimit) -> Result<Vec<smartsim::Sim<'_>>> {
    let mut sims = Vec::new();
    let mut skipped = Vec::new();
    let mut held: u64 = 0;
    for name in sched::registry::names() {
        let sim = within_budget(scn, Some(name), Default::default(), force)
            .and_then(|()| smartsim::simulator_keeping_partition(scn, name));
        match sim {
            Ok(s) => {
                let s = walk.apply(s, force);
                held = held
                    .saturating_add(smartsim::budget::estimate(scn, Some(name), Default::default()).memory);
                sims.push(s);
            }
            Err(e) => {
                skipped.push(format!("{name} ({})", diag::visible(&format!("{e:#}")).replace('\n', " ")))
            }
        }
    }
    if !skipped.is_empty() {
        eprintln!("smartsim: compare --policies all: skipped {}", skipped.join("; "));
    }
    if sims.is_empty() {
        anyhow::bail!("{}: --policies all: no policy can run this scenario", scn.path);
    }
    if held > smartsim::budget::MAX_MEMORY && !force {
        anyhow::bail!(
            "{}: comparing all {} policies would hold about {:.1} GiB of results, over the limit of {:.1} GiB; \
             compare fewer policies, shorten the run, or pass --force",
            scn.path,
            sims.len(),
            held as f64 / (1u64 << 30) as f64,
            smartsim::budget::MAX_MEMORY as f64 / (1u64 << 30) as f64
        );
    }
    Ok(sims)
}

/// Refuses a run whose estimate is over a limit, unless forced (then says so).
fn within_budget(
    scn: &workload::Scenario,
    policy: Option<&str>,
    out: smartsim::budget::Outputs,
    force: bool,
) -> Result<()> {
    let e = smartsim::budget::estimate(scn, policy, out);
    tracing::debug!(
        "estimate: {} events, {} tasks walked, {} CPUs looked at, {:.1} MiB held, {} bytes written",
        e.events,
        e.walked,
        e.cpu_visits,
        e.memory as f64 / (1u64 << 20) as f64,
        e.output
    );
    match smartsim::budget::check(&e, &scn.path) {
        Ok(()) => Ok(()),
        Err(msg) if force => {
            tracing::warn!("--force: {msg}");
            Ok(())
        }
        Err(msg) => Err(anyhow::anyhow!(msg)),
    }
}

/// Reads a scenario; its warnings go to stderr (the run goes on).
fn load(path: &Path) -> Result<workload::Scenario> {
    let s = workload::load(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    for w in &s.warnings {
        tracing::warn!("{w}");
    }
    Ok(s)
}

fn ms(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e6)
}

/// The frames of the run's players and the latency bands of its tasks with `bands`, as tables (empty
/// when it has neither).
fn quality_tables(r: &SimResult) -> String {
    let mut out = String::new();
    let players: Vec<_> = r.tasks.iter().filter_map(|x| x.frames.as_ref().map(|f| (x, f))).collect();
    if !players.is_empty() {
        let mut t = Table::new(&[
            "player",
            "app",
            "frames",
            "on time",
            "early",
            "late frame",
            "dropped",
            "display error mean ms",
            "sd ms",
            "interdisplay mean ms",
            "sd ms",
        ]);
        let ms = |x: f64| format!("{:.1}", x / 1e6);
        for (x, f) in players {
            t.row(vec![
                x.name.clone(),
                x.app.clone().unwrap_or_else(|| "-".into()),
                f.frames.to_string(),
                f.on_time.to_string(),
                f.early.to_string(),
                f.late.to_string(),
                f.dropped.to_string(),
                ms(f.error_ns.mean),
                ms(f.error_ns.sd),
                ms(f.interdisplay_ns.mean),
                ms(f.interdisplay_ns.sd),
            ]);
        }
        out.push_str(&t.render());
    }
    for x in &r.tasks {
        let Some(b) = &x.bands else { continue };
        let mut heads = vec!["task".to_string()];
        let bound = |ns: u64| workload::format_time(ns);
        for (k, _) in b.counts.iter().enumerate() {
            heads.push(match (k.checked_sub(1).map(|j| b.bounds_ns[j]), b.bounds_ns.get(k)) {
                (None, Some(&hi)) => format!("< {}", bound(hi)),
                (Some(lo), Some(&hi)) => format!("{}..{}", bound(lo), bound(hi)),
                (Some(lo), None) => format!(">= {}", bound(lo)),
                (None, None) => "all".into(),
            });
        }
        heads.extend(["not done", "latency mean ms", "sd ms"].map(String::from));
        let h: Vec<&str> = heads.iter().map(String::as_str).collect();
        let mut t = Table::new(&h);
        let mut row = vec![x.name.clone()];
        row.extend(b.counts.iter().map(u64::to_string));
        row.push(b.not_done.to_string());
        row.push(format!("{:.1}", b.latency_ns.mean / 1e6));
        row.push(format!("{:.1}", b.latency_ns.sd / 1e6));
        t.row(row);
        out.push_str(&format!("latency bands\n{}", t.render()));
    }
    let jobs: Vec<_> = r.tasks.iter().filter_map(|x| x.iterations.as_ref().map(|it| (x, it))).collect();
    if !jobs.is_empty() {
        let mut t = Table::new(&["fork-and-wait job", "iterations", "iteration mean ms", "sd ms", "cpu s"]);
        for (x, it) in jobs {
            t.row(vec![
                x.name.clone(),
                it.count.to_string(),
                format!("{:.1}", it.time_ns.mean / 1e6),
                format!("{:.1}", it.time_ns.sd / 1e6),
                format!("{:.3}", x.cpu_ns as f64 / 1e9),
            ]);
        }
        out.push_str(&t.render());
    }
    if !out.is_empty() {
        out.push_str(&trace::summary::footer(&[
            "on time",
            "early",
            "late frame",
            "dropped",
            "display error",
            "interdisplay",
            "latency band",
            "iteration",
        ]));
    }
    out
}

fn result_table(r: &SimResult) -> String {
    let mut t = Table::new(
        &["task", "cpu s", "share %", "finish s"]
            .into_iter()
            .chain(Requests::COLUMNS)
            .chain(["notified", "wake→dispatch p50 ms", "wake→dispatch p99 ms", "wake→dispatch max ms"])
            .collect::<Vec<_>>(),
    );
    for x in &r.tasks {
        let d = x.deadlines.as_ref();
        let l = x.latency_ns.as_ref();
        let count = |f: fn(&smartsim::result::Deadlines) -> u64| d.map_or("-".into(), |d| f(d).to_string());
        t.row(vec![
            x.name.clone(),
            format!("{:.3}", x.cpu_ns as f64 / 1e9),
            format!("{:.1}", 100.0 * x.cpu_share),
            x.finish_ns.map_or("-".into(), |f| format!("{:.3}", f as f64 / 1e9)),
            count(|d| d.requests),
            count(|d| d.met),
            count(|d| d.missed),
            count(|d| d.late),
            count(|d| d.discarded),
            count(|d| d.aborted),
            count(|d| d.unfinished),
            count(|d| d.notifications),
            l.map_or("-".into(), |l| ms(l.p50)),
            l.map_or("-".into(), |l| ms(l.p99)),
            l.map_or("-".into(), |l| ms(l.max)),
        ]);
    }
    let s = &r.system;
    format!(
        "scenario {}  policy {}  {:.3} s simulated  seed {}\n{}idle {:.1} %{}  switches {}  decisions {}  notifications {}\n{}",
        report::escape::visible(&r.scenario),
        report::escape::visible(&r.policy),
        r.duration_ns as f64 / 1e9,
        r.seed,
        t.render(),
        // Of the whole machine: every CPU's idle time over the CPU time it had.
        100.0 * s.idle_ns as f64 / (r.duration_ns.max(1) as f64 * f64::from(r.cpus.max(1))),
        if r.cpus > 1 { format!(" of {} CPUs", r.cpus) } else { String::new() },
        s.switches,
        s.decisions,
        s.notifications,
        trace::summary::footer(&[&Requests::COLUMNS[..], &["wake→dispatch"]].concat())
    ) + &quality_tables(r)
        + &partial_line(r)
}

/// The table's line saying a run is partial (empty for a whole run).
fn partial_line(r: &SimResult) -> String {
    r.partial.as_ref().map_or(String::new(), |p| {
        format!(
            "partial: {} ({}); every figure above is of the time simulated\n",
            p.describe(),
            p.reason.cause()
        )
    })
}

/// The policies side by side; a footer line names those Ctrl-C stopped (partial) or kept from
/// running (`not_run`).
fn compare_table(rs: &[SimResult], not_run: &[String]) -> String {
    let mut headers = vec!["task".to_string()];
    for r in rs {
        headers.push(format!("{} share %", r.policy));
        headers.push(format!("{} met/missed", r.policy));
        headers.push(format!("{} wake→dispatch p99 ms", r.policy));
    }
    let h: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut t = Table::new(&h);
    for (i, task) in rs[0].tasks.iter().enumerate() {
        let mut row = vec![task.name.clone()];
        for r in rs {
            let x = &r.tasks[i];
            row.push(format!("{:.1}", 100.0 * x.cpu_share));
            row.push(x.deadlines.as_ref().map_or("-".into(), |d| format!("{}/{}", d.met, d.missed)));
            row.push(x.latency_ns.as_ref().map_or("-".into(), |l| ms(l.p99)));
        }
        t.row(row);
    }
    let mut partial: Vec<String> = rs
        .iter()
        .filter_map(|r| {
            r.partial.as_ref().map(|p| {
                format!("{} {} ({})", report::escape::visible(&r.policy), p.describe(), p.reason.cause())
            })
        })
        .collect();
    if !not_run.is_empty() {
        partial.push(format!("not run: {}", not_run.join(", ")));
    }
    let partial = if partial.is_empty() {
        String::new()
    } else {
        format!("partial: {}; a partial run's figures are of the time it simulated\n", partial.join("; "))
    };
    format!(
        "scenario {}\n{}{}{partial}",
        rs[0].scenario,
        t.render(),
        trace::summary::footer(&["met", "missed", "wake→dispatch"])
    )
}

fn cpu_figure(title: &str, r: &SimResult, names: &[String], ideal: &smartsim::ideal::Ideal) -> Figure {
    let mut f = Figure::new(title, "wall time (s)", "cumulative execution time (s)");
    for (i, n) in names.iter().enumerate() {
        let pts = r.timeline.cpu_series(i).into_iter().map(|(t, c)| (t, c / 1e3)).collect();
        f.measured.push(Series::new(n.clone(), pts));
        let ip = ideal.cpu[i].iter().map(|(t, c)| (*t, c / 1e3)).collect();
        f.ideal.push(Series::new(n.clone(), ip));
    }
    f
}

/// Most simulated seconds of `smartsim bench`: `workload::MAX_TIME` in seconds.
const MAX_BENCH_SECONDS: u64 = workload::MAX_TIME / 1_000_000_000;
/// Most runs of each configuration of `smartsim bench`.
const MAX_BENCH_REPEAT: usize = 1000;

/// The task set `smartsim bench` runs: `n` tasks on `cpus` CPUs at utilisation `u` per CPU, for
/// `seconds` (at most [`MAX_BENCH_SECONDS`]).
fn bench_scenario(n: usize, cpus: u32, u: f64, seconds: u64, policy: &str) -> workload::Scenario {
    let mut scn = smartsim::bench::periodic_set(n, u * cpus as f64, seconds * 1_000_000_000, policy, 1);
    scn.machine.cpus = cpus;
    scn
}

fn bench(
    configs: &[(usize, u32)],
    policies: &[String],
    seconds: u64,
    u: f64,
    (repeat, walk): (usize, WalkLimit),
    format: Format,
) -> Result<()> {
    let mut t = Table::new(&[
        "policy",
        "cpus",
        "tasks",
        "sim s",
        "wall s",
        "jobs",
        "jobs/s",
        "decisions",
        "µs/decision",
        "sim×real",
    ]);
    let mut rates: Vec<(String, usize, u32, f64)> = Vec::new();
    // Timed configuration by configuration, the policies of one next to each other (the pairs the
    // ratios compare): configuration `c` under policy `k` is run `c × policies + k`.
    let scns: Vec<_> = configs
        .iter()
        .flat_map(|&(n, cpus)| policies.iter().map(move |p| bench_scenario(n, cpus, u, seconds, p)))
        .collect();
    let timed = timed_runs(&scns, repeat, walk)?;
    let reported = policies.iter().enumerate().flat_map(|(k, p)| {
        configs.iter().enumerate().map(move |(c, &(n, cpus))| (p, n, cpus, c * policies.len() + k))
    });
    for (p, n, cpus, i) in reported {
        let (ref s, wall, spread) = timed[i];
        let per_decision = wall * 1e6 / s.decisions.max(1) as f64;
        match format {
            Format::Table => t.row(vec![
                p.clone(),
                cpus.to_string(),
                n.to_string(),
                seconds.to_string(),
                format!("{wall:.3}"),
                s.jobs.to_string(),
                format!("{:.0}", s.jobs as f64 / wall),
                s.decisions.to_string(),
                format!("{per_decision:.2}"),
                format!("{:.0}", seconds as f64 / wall),
            ]),
            Format::Json => diag::outln!(
                "{}",
                serde_json::json!({
                    "policy": p, "cpus": cpus, "tasks": n, "sim_s": seconds, "wall_s": wall,
                    "wall_s_min": spread.0, "wall_s_max": spread.1, "jobs": s.jobs,
                    "jobs_per_s": s.jobs as f64 / wall, "decisions": s.decisions,
                    "us_per_decision": per_decision, "repeat": repeat, "utilisation_per_cpu": u,
                })
            ),
        }
        rates.push((p.clone(), n, cpus, s.jobs as f64 / wall));
    }
    if format == Format::Json {
        return Ok(());
    }
    diag::out!("{}", t.render());
    // Ratios measured in this run, side by side: each policy's cost relative to EDF's at each size
    // (SMART's and EEVDF's are goals of their own).
    for &(n, cpus) in configs {
        let get = |p: &str| rates.iter().find(|r| r.0 == p && r.1 == n && r.2 == cpus).map(|r| r.3);
        let Some(e) = get("edf") else { continue };
        for p in policies.iter().filter(|p| *p != "edf") {
            if let Some(s) = get(p) {
                diag::outln!("{cpus} CPU(s), {n} tasks: edf/{p} jobs-per-second ratio {:.2}", e / s);
            }
        }
    }
    diag::outln!(
        "(utilisation {u} per CPU, exact estimates, deadlines = periods; median of {repeat} runs; µs/decision = wall \
         time over pick_next calls)"
    );
    Ok(())
}

/// A scenario's timed runs: its last run's figures, the median wall time in seconds, and the least
/// and greatest.
type Timed = (smartsim::result::SystemStats, f64, (f64, f64));

/// `repeat` (at least 1) rounds of runs of `scns`, held to `walk`, a round running each scenario
/// once in turn (so that a slow spell of the machine during the bench, common on shared machines,
/// does not fall on one scenario's runs alone), timed per scenario.
fn timed_runs(scns: &[workload::Scenario], repeat: usize, walk: WalkLimit) -> Result<Vec<Timed>> {
    let mut walls = vec![Vec::new(); scns.len()];
    let mut last = Vec::new();
    for _ in 0..repeat.max(1) {
        last.clear();
        for (scn, walls) in scns.iter().zip(&mut walls) {
            let t0 = Instant::now();
            let run = walk.apply(smartsim::simulator(scn, None)?, false).run();
            walls.push(t0.elapsed().as_secs_f64());
            if let Some(p) = &run.partial {
                // Only a run's own limit stops it here (bench is not watched): a rate of part of a
                // run would not be the rate of the whole.
                anyhow::bail!(
                    "bench: {} tasks under {}: {} ({}{}); give fewer --seconds or --tasks",
                    scn.tasks.len(),
                    run.policy,
                    p.describe(),
                    p.reason.cause(),
                    lift(p.reason, walk, "; a larger --walk-limit runs it further")
                );
            }
            last.push(run.system);
        }
    }
    Ok(last
        .into_iter()
        .zip(walls)
        .map(|(r, mut walls)| {
            walls.sort_by(f64::total_cmp);
            let spread = (walls[0], walls[walls.len() - 1]);
            (r, walls[walls.len() / 2], spread)
        })
        .collect())
}

/// The second part of `smartsim bench`: a simulated `seconds` of the media mix under each policy,
/// median wall time of `repeat` runs, and SMART's time over EDF's when both ran.
fn bench_mix(
    policies: &[String],
    seconds: u64,
    (repeat, walk): (usize, WalkLimit),
    format: Format,
) -> Result<()> {
    let mut walls = Vec::new();
    let scns: Vec<_> =
        policies.iter().map(|p| smartsim::bench::media_mix(seconds * 1_000_000_000, p, 1)).collect();
    for (p, (s, med, (lo, hi))) in policies.iter().zip(timed_runs(&scns, repeat, walk)?) {
        match format {
            Format::Json => diag::outln!(
                "{}",
                serde_json::json!({
                    "policy": p, "mix": true, "tasks": 20, "hz": 1000, "sim_s": seconds, "wall_s": med,
                    "wall_s_min": lo, "wall_s_max": hi, "jobs": s.jobs, "decisions": s.decisions, "repeat": repeat,
                })
            ),
            Format::Table => diag::outln!(
                "media mix (20 tasks, HZ 1000), {seconds} simulated s under {p}: {med:.3} s wall (min {lo:.3}, max \
                 {hi:.3}), {} decisions",
                s.decisions
            ),
        }
        walls.push((p.as_str(), med));
    }
    let get = |p: &str| walls.iter().find(|w| w.0 == p).map(|w| w.1);
    if let (Format::Table, Some(s), Some(e)) = (format, get("smart"), get("edf")) {
        diag::outln!(
            "media mix: smart/edf wall-time ratio {:.2} (goal: smart under 0.5 s for 3600 s)",
            s / e
        );
    }
    Ok(())
}

fn trace_cmd(cmd: TraceCmd) -> Result<()> {
    match cmd {
        TraceCmd::Report { file, format, window } => {
            let s = summarize_file(&file)?;
            let windows = match window {
                Some(w) => {
                    trace::windows::check(s.length(), w, s.tasks.len()).map_err(anyhow::Error::msg)?;
                    let r = trace::Reader::open(&file)?;
                    let mut acc = trace::windows::Windows::new(r.header().start_ns, w);
                    for rec in r {
                        acc.add(&rec?);
                    }
                    // A lookup per column, not a scan of the tasks.
                    let by_id: std::collections::HashMap<u32, &str> =
                        s.tasks.iter().map(|t| (t.task, t.name.as_str())).collect();
                    let names: Vec<String> = acc
                        .tasks()
                        .iter()
                        .map(|id| by_id.get(id).map_or(format!("task {id}"), |n| n.to_string()))
                        .collect();
                    Some((names, acc.finish()))
                }
                None => None,
            };
            match format {
                Format::Json => {
                    let mut v = serde_json::to_value(&s)?;
                    if let Some((names, ws)) = &windows {
                        v["windows"] = serde_json::json!({"tasks": names, "windows": ws});
                    }
                    diag::outln!("{}", serde_json::to_string_pretty(&v)?)
                }
                Format::Table => {
                    diag::out!("{}", summary_table(&s));
                    if let Some((names, ws)) = &windows {
                        diag::out!("{}", window_table(names, ws));
                    }
                }
            }
        }
        TraceCmd::Billing { file, hz, phase_ns, format } => {
            trace::billing::check_rates(&hz).map_err(anyhow::Error::msg)?;
            let (header, r) = open_trace(&file)?;
            let tl = trace::timeline::Timeline::from_records(&header, r)?;
            let rows = trace::billing::billing_table(&tl, &hz, phase_ns, trace::timeline::Group::Thread);
            match format {
                Format::Json => diag::outln!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({
                        "source": header.source, "hz": hz, "phase_ns": phase_ns,
                        "duration_ns": tl.duration(), "kernel_hz": header.hz, "tasks": rows,
                    }))?
                ),
                Format::Table => diag::out!("{}", billing_table_text(&rows, &hz)),
            }
        }
        TraceCmd::Diff { a, b, format } => {
            let (sa, sb) = (summarize_file(&a)?, summarize_file(&b)?);
            let d = trace::diff::diff(&sa, &sb);
            match format {
                Format::Json => diag::outln!("{}", serde_json::to_string_pretty(&d)?),
                Format::Table => diag::out!("{}{}", diff_table(&d, &a, &b), idle_note(&[&sa, &sb])),
            }
        }
        TraceCmd::Html { file, out, hz, tasks } => {
            let mut p = outputs::Plan::new();
            p.input("the trace", &file);
            let slot = p.output("OUT", Some(&out), outputs::Kind::HTML);
            let planned = plan(p)?;
            let out = planned.get(slot).expect("planned");
            trace::billing::check_rates(&hz).map_err(anyhow::Error::msg)?;
            let (header, r) = open_trace(&file)?;
            let tl = trace::timeline::Timeline::from_records(&header, r)?;
            let mut page =
                report::HtmlReport::new(&format!("{} trace: {}", header.source.tool(), file.display()));
            page.section(
                "Trace",
                &format!(
                    "From {} ({}), {} CPUs, {:.3} s on the {} clock.",
                    header.source.tool(),
                    serde_json::to_string(&header.source)?,
                    header.cpus,
                    tl.duration() as f64 / 1e9,
                    header.clock
                ),
                None,
                &[],
            );
            page.section(
                "Requests",
                "Per task with requests, by outcome: met, missed (= late + discarded + aborted), unfinished; \
                 as `smartsim trace report` counts them (see the glossary).",
                Some(&requests_table(&summarize_file(&file)?)),
                &[],
            );
            report::analyses::trace_sections(
                &mut page,
                &tl,
                trace::timeline::Group::Thread,
                &hz,
                tasks,
                |_| true,
            );
            // A Gantt chart of the first 200 ms (read again: the timeline keeps no releases).
            let r = trace::Reader::open(&file)?;
            let header = r.header().clone();
            let mut g = report::Gantt::new(&header, 0, report::DEFAULT_WINDOW_NS);
            for rec in r {
                g.add(&rec?);
            }
            g.end_window_at(g.last_ns().max(1));
            page.section_svg(
                "Gantt chart",
                "A row per task (and per CPU on several): executions as bars, releases as up-arrows, deadlines \
                 as down-arrows, missed deadlines crossed out in red. `smartsim trace gantt` draws any window.",
                &g.to_svg(),
            );
            page.section(
                "Glossary",
                "The terms of this page (docs/glossary.md).",
                Some(&glossary_table()),
                &[],
            );
            out.write(page.render().as_bytes())?;
            out.wrote("");
        }
        TraceCmd::Gantt { file, out, window } => {
            // The window is checked against the trace's end once it has been read; the files are
            // checked first, so that a bad path is said before a long read.
            let mut p = outputs::Plan::new();
            p.input("the trace", &file);
            let slot = p.output("OUT", Some(&out), outputs::Kind::IMAGE);
            let planned = plan(p)?;
            let out = planned.get(slot).expect("planned");
            if image_format(out) != ImageFormat::Svg {
                report::export::check_fonts()?;
            }
            let (header, r) = open_trace(&file)?;
            let w = window.unwrap_or(Window { from: 0, to: report::DEFAULT_WINDOW_NS });
            let mut g = report::Gantt::new(&header, w.from, w.to);
            g.set_title(&format!("{} trace {}", header.source.tool(), file.display()));
            for rec in r {
                g.add(&rec?);
            }
            let end = g.last_ns();
            match window {
                Some(w) => {
                    w.check_within(end, "--window", "the trace lasts")?;
                }
                None => g.end_window_at(end.max(1)),
            }
            write_gantt(out, &g)?;
        }
        TraceCmd::Perfetto { file, out } => {
            let mut p = outputs::Plan::new();
            p.input("the trace", &file);
            let slot = p.output("OUT", Some(&out), outputs::Kind::JSON);
            let planned = plan(p)?;
            let out = planned.get(slot).expect("planned");
            let (header, r) = open_trace(&file)?;
            let name = format!("{} trace {}", header.source.tool(), file.display());
            let records: Vec<trace::Record> = r.collect::<Result<_, _>>()?;
            let t = report::Trace::from_records(&name, records);
            t.write(std::io::BufWriter::new(out.create()?)).map_err(|e| out.write_error(e))?;
            out.wrote(&format!("{} events", t.event_count()));
        }
    }
    Ok(())
}

/// A trace file's header and records; a file without any record is an error, not a report of
/// zeros. What the reading of a klogger recording left out is said on standard error.
fn open_trace(
    file: &std::path::Path,
) -> Result<(trace::Header, impl Iterator<Item = Result<trace::Record, trace::ReadError>>)> {
    let mut r = trace::Reader::open(file)?;
    note_left_out(file, &r);
    let header = r.header().clone();
    let Some(first) = r.next_record()? else {
        anyhow::bail!("no records in {}", file.display());
    };
    Ok((header, std::iter::once(Ok(first)).chain(r)))
}

/// A note on standard error of what the reading of a klogger recording left out or cut to keep its
/// trace consistent (a trace file is refused instead).
fn note_left_out<R: std::io::Read>(file: &std::path::Path, r: &trace::Reader<R>) {
    if let Some(lo) = r.left_out().filter(|lo| lo.any()) {
        eprintln!("{}: {}", file.display(), lo.describe());
    }
}

/// The summary of a trace file (a note on standard error if it was cut short, or if reading a
/// klogger recording left something out).
fn summarize_file(file: &std::path::Path) -> Result<trace::summary::Summary> {
    let mut r = trace::Reader::open(file)?;
    note_left_out(file, &r);
    let header = r.header().clone();
    let s = trace::summary::summarize(&header, r.by_ref())?;
    if s.records == 0 {
        anyhow::bail!("no records in {}", file.display());
    }
    if r.trailing() > 0 {
        eprintln!("{}: cut short ({} bytes after the last whole record)", file.display(), r.trailing());
    }
    if r.empty_runs() > 0 {
        eprintln!(
            "{}: {} runs of no time skipped (a stretch of no CPU time is no quantum)",
            file.display(),
            r.empty_runs()
        );
    }
    Ok(s)
}

fn diff_table(d: &trace::diff::Diff, a: &std::path::Path, b: &std::path::Path) -> String {
    let ms = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
    let pair = |x: String, y: String| format!("{x} / {y}");
    let mut t = Table::new(&[
        "task",
        "CPU % A / B",
        "Δ pp",
        "quantum p50 ms A / B",
        "wake→run p50 ms A / B",
        "wake→run p99 ms A / B",
        "met A / B",
        "missed A / B",
        "late A / B",
        "discarded A / B",
        "aborted A / B",
        "unfinished A / B",
    ]);
    for k in &d.tasks {
        t.row(vec![
            k.name.clone(),
            pair(format!("{:.2}", k.a.cpu_pct), format!("{:.2}", k.b.cpu_pct)),
            format!("{:+.2}", k.delta.cpu_pp),
            pair(ms(k.a.quantum.p50), ms(k.b.quantum.p50)),
            pair(ms(k.a.wake_latency.p50), ms(k.b.wake_latency.p50)),
            pair(ms(k.a.wake_latency.p99), ms(k.b.wake_latency.p99)),
            pair(k.a.met.to_string(), k.b.met.to_string()),
            pair(k.a.missed.to_string(), k.b.missed.to_string()),
            pair(k.a.requests.late.to_string(), k.b.requests.late.to_string()),
            pair(k.a.requests.discarded.to_string(), k.b.requests.discarded.to_string()),
            pair(k.a.requests.aborted.to_string(), k.b.requests.aborted.to_string()),
            pair(k.a.requests.unfinished.to_string(), k.b.requests.unfinished.to_string()),
        ]);
    }
    let side =
        |(tool, cpus, len): &(String, u32, u64)| format!("{tool}, {cpus} CPUs, {:.3} s", *len as f64 / 1e9);
    let mut out =
        format!("A: {} ({})\nB: {} ({})\n{}", a.display(), side(&d.a), b.display(), side(&d.b), t.render());
    for (which, names) in [("A", &d.only_in_a), ("B", &d.only_in_b)] {
        if !names.is_empty() {
            let names: Vec<_> = names.iter().map(|n| report::escape::visible(n)).collect();
            out += &format!("only in {which}: {}\n", names.join(", "));
        }
    }
    out + &trace::summary::footer(&[
        "met",
        "missed",
        "late",
        "discarded",
        "aborted",
        "unfinished",
        "wake→run",
    ])
}

/// What the idle task's row of `trace diff` means, if a trace has one: its CPU % is of one CPU like
/// every row's, so the idle time of N CPUs goes up to N × 100 % (`trace report` gives it as a share
/// of the whole machine).
fn idle_note(traces: &[&trace::summary::Summary]) -> String {
    let cpus: Vec<u32> = traces
        .iter()
        .filter(|s| s.tasks.iter().any(|t| trace::is_idle(&s.header.source, t.task, &t.name)))
        .map(|s| s.header.cpus)
        .collect();
    let Some(&most) = cpus.iter().max() else { return String::new() };
    format!(
        "{}: the idle time of every CPU together, in % of one CPU like every row (up to {} % on {most} \
         CPUs; trace report's share % is of the whole machine)\n",
        trace::IDLE_NAME,
        100 * u64::from(most)
    )
}

fn billing_table_text(rows: &[trace::billing::BillingRow], hz: &[u32]) -> String {
    format!(
        "tick-sampled billing (ratio = billed by whole ticks / CPU time used; never billed = complete quanta \
         with no tick inside)\n{}",
        report::analyses::billing_table(rows, hz).render()
    )
}

/// Per task with requests: its requests by outcome (the HTML report's "Requests").
fn requests_table(s: &trace::summary::Summary) -> Table {
    let mut t = Table::new(&[&["task"][..], &Requests::COLUMNS].concat());
    for k in s.tasks.iter().filter(|k| k.requests.total() > 0) {
        t.row(std::iter::once(k.name.clone()).chain(k.requests.cells().map(|c| c.to_string())).collect());
    }
    t
}

/// Every term of the vocabulary with its definition (the HTML report's glossary).
fn glossary_table() -> Table {
    let mut t = Table::new(&["term", "meaning"]);
    for (term, def) in trace::summary::GLOSSARY {
        t.row(vec![term.to_string(), def.to_string()]);
    }
    t
}

fn summary_table(s: &trace::summary::Summary) -> String {
    let ms = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
    let mut t = Table::new(
        &[
            "task",
            "cpu ms",
            "share %",
            "stretches",
            "blocked",
            "preempted",
            "slice end",
            "quantum p50 ms",
            "quantum max ms",
            "wake→run p50 ms",
            "wake→run p99 ms",
            "wake→run max ms",
        ]
        .into_iter()
        .chain(Requests::COLUMNS)
        .chain(["notified"])
        .collect::<Vec<_>>(),
    );
    for k in &s.tasks {
        let n = |m: &std::collections::BTreeMap<String, u64>, key: &str| {
            m.get(key).copied().unwrap_or(0).to_string()
        };
        t.row(
            vec![
                k.name.clone(),
                ms(k.cpu_ns),
                format!("{:.2}", 100.0 * k.share),
                k.quantum.count.to_string(),
                n(&k.ended, "blocked"),
                n(&k.ended, "preempted"),
                n(&k.ended, "slice_end"),
                ms(k.quantum.p50),
                ms(k.quantum.max),
                ms(k.wake_latency.p50),
                ms(k.wake_latency.p99),
                ms(k.wake_latency.max),
            ]
            .into_iter()
            .chain(k.requests.cells().map(|c| c.to_string()))
            .chain([k.notified.to_string()])
            .collect(),
        );
    }
    format!(
        "trace from {}  {} CPUs  {:.3} s  {} records\n{}{}",
        s.header.source.tool(),
        s.header.cpus,
        s.length() as f64 / 1e9,
        s.records,
        t.render(),
        trace::summary::footer(
            &[&["blocked", "preempted", "slice end", "wake→run"][..], &Requests::COLUMNS].concat()
        )
    )
}
