//! `klogger`: command-line front end over the klogger library (see `klogger --help`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use tracing::warn;

use klogger::analysis::{Group, Trace};
use klogger::format::Log;
use klogger::record::{record, RecordOptions, StopReason, Target};
use klogger::{bench, export, html, parse_duration, parse_size, report};

#[derive(Parser)]
#[command(
    name = "klogger",
    version,
    about = "Scheduling events from the running kernel via BPF, and the clock analyses of Etsion et al. 2003",
    long_about = "Records every context switch, wake-up, fork/exec/exit, timer expiry, interrupt and \
scheduler tick of the running kernel with BPF tracepoints (no kernel change), then tells per task: \
CPU time, effective quanta (scheduled to descheduled, preempted vs blocked), wake-up latency, CPU share \
(Etsion et al. SIGMETRICS 2003, tables 4-5, fig. 6), and how tick-sampled billing at any HZ would have \
charged each task (table 3, fig. 4).\n\nTypical use:\n  sudo klogger record -o run.klog -- ffmpeg ...\n  \
klogger report run.klog\n  klogger billing run.klog --hz 100,250,1000\n  klogger export --perfetto run.klog -o run.json\n  \
klogger html run.klog -o run.html"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    // Progress and warnings are shown by default; -v adds debugging detail, -vv more; -q hides
    // progress, -qq warnings too.
    #[command(flatten)]
    verbose: diag::Verbosity,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Format {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Cmd {
    /// Record scheduling events (needs root or CAP_BPF + CAP_PERFMON).
    ///
    /// System-wide by default; `--pid P` follows processes P (repeatable) and every task they
    /// create; `-- CMD ARGS` starts CMD once recording runs, follows it and stops when it exits.
    /// Stops on Ctrl-C, after --duration, when the command exits, or at --max-size. Progress
    /// every 2 s on stderr unless -q.
    Record {
        /// Output file.
        #[arg(short, long, default_value = "klogger.klog")]
        output: PathBuf,
        /// Stop after this long (e.g. 10s, 1.5m, 500ms). Every run is bounded: default 10m.
        #[arg(short, long, default_value = "10m", value_parser = parse_duration)]
        duration: std::time::Duration,
        /// Follow this process and its descendants (repeatable).
        #[arg(short, long, conflicts_with = "command")]
        pid: Vec<u32>,
        /// Size of each per-CPU ring buffer, a power of two: 256KiB, 4MiB, 16MiB... (a bare
        /// number is bytes; KB = 1000 bytes, KiB = 1024).
        #[arg(long, default_value = "4MiB", value_parser = parse_size)]
        buffer: u64,
        /// Stop when the file reaches this size (e.g. 192MiB, 100MB; a bare number is bytes). With
        /// one drain of every CPU's ring buffer (--buffer × CPUs) it must stay within the 256 MiB a
        /// recording is read with (its analyses keep it within 1 GiB of memory).
        #[arg(long, default_value = "192MiB", value_parser = parse_size)]
        max_size: u64,
        /// The command to start and follow.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Per-task CPU time, quanta, quantum distributions, wake-up latency, CPU share table.
    Report {
        /// Log file written by `klogger record`.
        file: PathBuf,
        /// text or json.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// One row per thread or per process.
        /// One row per thread or per process: thread, process.
        #[arg(long, default_value = "thread")]
        group: Group,
        /// Show only tasks whose name contains one of these (comma-separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Rows in text tables and named rows in the share table.
        #[arg(long, default_value_t = 20)]
        rows: usize,
    },
    /// Replays the trace against tick samplers: billing ratio and never-billed quanta per HZ.
    Billing {
        /// Log file written by `klogger record`.
        file: PathBuf,
        /// Sampler rates (Hz), comma-separated (at most 16, each 1 to 1000000).
        #[arg(long, value_delimiter = ',', default_value = "100,250,1000")]
        hz: Vec<u32>,
        /// Phase of the sampler's ticks on the trace clock (ns modulo the period). Linux aligns its
        /// tick to 0; `klogger report` prints the phase observed.
        #[arg(long, default_value_t = 0)]
        phase_ns: u64,
        /// text or json.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// One row per thread or per process.
        /// One row per thread or per process: thread, process.
        #[arg(long, default_value = "thread")]
        group: Group,
        /// Show only tasks whose name contains one of these (comma-separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Rows in the text table.
        #[arg(long, default_value_t = 20)]
        rows: usize,
        /// Hide tasks with fewer complete quanta in the text table.
        #[arg(long, default_value_t = 0)]
        min_quanta: u64,
    },
    /// Converts a recording: the project's trace file (`--trace`, read by `smartsim trace report|billing|
    /// perfetto`) or Chrome trace-event JSON for Perfetto / chrome://tracing (`--perfetto`). Without
    /// either, the output's extension chooses (.trace or .smtrace a trace file, .json Perfetto JSON).
    Export {
        /// Write Chrome trace-event JSON (opens in ui.perfetto.dev).
        #[arg(long, conflicts_with = "trace")]
        perfetto: bool,
        /// Write the trace file (crates/trace's format: quanta with their end reasons, wake-ups, ticks).
        #[arg(long)]
        trace: bool,
        /// Log file written by `klogger record`.
        file: PathBuf,
        /// Output file (default klogger-trace.json, or klogger.smtrace with --trace); not the recording.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// HTML report with SVG plots: effective-quantum CDFs (fig. 6) and billing scatter (fig. 4).
    Html {
        /// Log file written by `klogger record`.
        file: PathBuf,
        /// Output file.
        #[arg(short, long, default_value = "klogger-report.html")]
        output: PathBuf,
        /// Sampler rates (Hz) for the billing scatter, comma-separated (at most 16).
        #[arg(long, value_delimiter = ',', default_value = "100,1000")]
        hz: Vec<u32>,
        /// One curve per thread or per process.
        /// One curve per thread or per process: thread, process.
        #[arg(long, default_value = "process")]
        group: Group,
        /// Show only tasks whose name contains one of these (comma-separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Tasks plotted (largest CPU time first).
        #[arg(long, default_value_t = 6)]
        tasks: usize,
    },
    /// Overhead: pipe ping-pong throughput with and without recording, side by side.
    Bench {
        /// Length of each measurement.
        #[arg(long, default_value = "2s", value_parser = parse_duration)]
        each: std::time::Duration,
        /// Pairs of (without, with) measurements.
        #[arg(long, default_value_t = 5)]
        pairs: usize,
        /// Pin both ping-pong threads to CPU 0 (every round trip is two context switches).
        #[arg(long)]
        pin: bool,
        /// Busy work per round trip in microseconds (lowers the event rate).
        #[arg(long, default_value_t = 0)]
        work_us: u64,
        /// Instead of --work-us: the recorded events per second wanted (e.g. 100000). The work
        /// per round trip that gives it is found first by a few half-second recorded runs.
        #[arg(long, conflicts_with = "work_us", value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
        events_per_s: Option<u64>,
        /// Also time the BPF programs (BPF_ENABLE_STATS) to split the cost per event; the timing
        /// adds its own overhead to the "with" runs.
        #[arg(long)]
        bpf_stats: bool,
        /// text or json.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
}

fn main() {
    let cli = Cli::parse();
    diag::init("klogger", cli.verbose.tracing_level_filter());
    if let Err(e) = run(cli) {
        // An error may quote a name or a line of an input: shown as a terminal may show it.
        eprintln!("klogger: error: {}", diag::visible_lines(&format!("{e:#}")));
        std::process::exit(2);
    }
}

/// Checks the plan of a command's files (exit status 2 on a refusal, before any work) and gives its
/// one output.
fn plan_one(
    input: Option<&Path>,
    label: &str,
    output: &Path,
    kind: outputs::Kind,
    flag: Option<(&str, outputs::Format)>,
) -> Result<outputs::Output> {
    let mut p = outputs::Plan::new();
    if let Some(i) = input {
        p.input("the recording", i);
    }
    let slot = p.output_as(label, Some(output), kind, flag);
    Ok(p.check()?.get(slot).expect("planned").clone())
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Record { output, duration, pid, buffer, max_size, command } => {
            // The file passes --max-size by at most one drain of the ring buffers; what it may reach
            // must be readable.
            // Ring buffers are made for every possible CPU, not only those this process may run on.
            let cpus = libbpf_rs::num_possible_cpus().map_or(1, |n| n.max(1)) as u64;
            let readable = trace::klog::MAX_RECORDS * trace::klog::RECORD_SIZE as u64;
            if max_size.saturating_add(buffer.saturating_mul(cpus)) > readable {
                bail!(
                    "--max-size {max_size} with a --buffer of {buffer} bytes on each of {cpus} CPUs could pass \
                     the {} MiB a recording is read with: take a smaller --max-size or --buffer",
                    readable.div_ceil(1 << 20)
                );
            }
            plan_one(None, "--output", &output, outputs::Kind::KLOG, None)?;
            let target = if !command.is_empty() {
                Target::Command(command)
            } else if !pid.is_empty() {
                Target::Pids(pid)
            } else {
                Target::System
            };
            if buffer > u32::MAX as u64 / 2 {
                bail!("--buffer {buffer} is too large");
            }
            let stop = Arc::new(AtomicBool::new(false));
            let s2 = stop.clone();
            ctrlc::set_handler(move || s2.store(true, Ordering::SeqCst))
                .context("installing the Ctrl-C handler")?;
            let opts = RecordOptions {
                output: output.clone(),
                target,
                duration: Some(duration),
                buffer_bytes: buffer as u32,
                max_bytes: max_size,
                stop,
                ready: None,
                progress: true,
                bpf_stats: false,
            };
            let st = record(&opts)?;
            outputs::wrote(
                &output,
                &format!(
                    "{} events, {} lost, {:.1} MiB in {:.2} s; stopped: {}",
                    st.events,
                    st.lost,
                    st.bytes as f64 / (1 << 20) as f64,
                    st.duration_ns as f64 / 1e9,
                    match st.stop {
                        StopReason::Duration => "duration reached".to_string(),
                        StopReason::Interrupted => "interrupted".to_string(),
                        StopReason::CommandExited(c) => format!("command exited with {c}"),
                        StopReason::SizeLimit => "size limit reached".to_string(),
                    }
                ),
            );
            if st.lost > 0 {
                warn!("{} events were lost (ring buffers full); use a larger --buffer", st.lost);
            }
            if let StopReason::CommandExited(c) = st.stop {
                if c != 0 {
                    std::process::exit(c.min(255));
                }
            }
        }
        Cmd::Report { file, format, group, rows, only } => {
            let (trace, name) = load(&file)?;
            let r = report::report(&trace, &name, group, rows, &only);
            match format {
                Format::Json => diag::outln!("{}", serde_json::to_string_pretty(&r)?),
                Format::Text => diag::out!("{}", report::report_text(&r, rows)),
            }
        }
        Cmd::Billing { file, hz, phase_ns, format, group, rows, min_quanta, only } => {
            trace::billing::check_rates(&hz).map_err(anyhow::Error::msg)?;
            let (trace, name) = load(&file)?;
            let b = report::billing(&trace, &name, &hz, phase_ns, group, &only);
            match format {
                Format::Json => diag::outln!("{}", serde_json::to_string_pretty(&b)?),
                Format::Text => diag::out!("{}", report::billing_text(&b, rows, min_quanta)),
            }
        }
        Cmd::Export { perfetto, trace, file, output } => {
            use outputs::Format as F;
            // --trace or --perfetto chooses the format, or else the output's name (Perfetto JSON by
            // default).
            let flag = match (trace, perfetto) {
                (true, _) => Some(("--trace", F::Trace)),
                (_, true) => Some(("--perfetto", F::Json)),
                _ => None,
            };
            let default = if trace { "klogger.smtrace" } else { "klogger-trace.json" };
            let output = output.unwrap_or_else(|| default.into());
            const KIND: outputs::Kind = outputs::Kind::new(&[F::Json, F::Trace], false);
            let out = plan_one(Some(&file), "--output", &output, KIND, flag)?;
            let log = read_log(&file)?;
            let f = std::io::BufWriter::new(out.create()?);
            if out.format() == F::Trace {
                let (n, left_out) = export::trace_to(&log, f).map_err(|e| out.write_error(e))?;
                warn_left_out(&file, &left_out);
                out.wrote(&format!("{n} records"));
            } else {
                let (t, left_out) = export::perfetto(&log);
                warn_left_out(&file, &left_out);
                t.write(f).map_err(|e| out.write_error(e))?;
                out.wrote("");
            }
        }
        Cmd::Html { file, output, hz, group, tasks, only } => {
            let out = plan_one(Some(&file), "--output", &output, outputs::Kind::HTML, None)?;
            trace::billing::check_rates(&hz).map_err(anyhow::Error::msg)?;
            let (trace, name) = load(&file)?;
            let page = html::html_report(&trace, &name, &hz, group, tasks, &only);
            out.write(page.as_bytes())?;
            out.wrote("");
        }
        Cmd::Bench { each, pairs, pin, work_us, events_per_s, bpf_stats, format } => {
            let r = bench::run(&bench::BenchOptions {
                each,
                pairs,
                pin,
                work_us,
                events_per_s: events_per_s.map(|n| n as f64),
                bpf_stats,
                progress: format == Format::Text,
            })?;
            match format {
                Format::Json => diag::outln!("{}", serde_json::to_string_pretty(&r)?),
                Format::Text => diag::out!("{}", bench::text(&r)),
            }
        }
    }
    Ok(())
}

fn load(file: &Path) -> Result<(Trace, String)> {
    let log = read_log(file)?;
    let trace = Trace::from_log(&log);
    if trace.lost > 0 {
        warn!("{} events were lost while recording; quanta around them are dropped", trace.lost);
    }
    warn_left_out(file, &trace.left_out);
    Ok((trace, file.display().to_string()))
}

/// Says what reading `file` left out to keep its trace consistent, if anything.
fn warn_left_out(file: &Path, left_out: &klogger::analysis::LeftOut) {
    if left_out.any() {
        warn!("{}: {}", file.display(), left_out.describe());
    }
}

fn read_log(file: &Path) -> Result<Log> {
    let log = Log::read(file)?;
    use klogger::format::Kind;
    if !log.events.iter().any(|e| !matches!(e.kind, Kind::Lost | Kind::End | Kind::Missed)) {
        anyhow::bail!("no records in {}: nothing was recorded", file.display());
    }
    if log.trailing_bytes > 0 || !log.complete {
        warn!(
            "{} was cut short (no end record{}); reading up to its last complete record",
            file.display(),
            if log.trailing_bytes > 0 {
                format!(", {} trailing bytes", log.trailing_bytes)
            } else {
                String::new()
            }
        );
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        // clap checks its definition (no option twice, e.g. -q of --quiet and of the verbosity)
        // only in debug builds, and only when parsing: check it here in every build.
        Cli::command().debug_assert();
    }

    #[test]
    fn quiet_and_verbose_apply_to_every_subcommand() {
        use diag::LevelFilter;
        let level = |args: &[&str]| Cli::try_parse_from(args).unwrap().verbose.tracing_level_filter();
        assert_eq!(level(&["klogger", "report", "x.klog"]), LevelFilter::INFO);
        assert_eq!(level(&["klogger", "record", "-q"]), LevelFilter::WARN, "-q hides progress");
        assert_eq!(level(&["klogger", "-qq", "billing", "x.klog"]), LevelFilter::ERROR);
        assert_eq!(level(&["klogger", "bench", "-v"]), LevelFilter::DEBUG);
        assert_eq!(level(&["klogger", "html", "x.klog", "--verbose", "-v"]), LevelFilter::TRACE);
    }
}
