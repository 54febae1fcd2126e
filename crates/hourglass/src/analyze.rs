//! The analyses of §5, over a finished trace or by running the experiment:
//!
//! * `ctx` (§5.1): the direct cost of a context switch is the gap between the end of one thread's
//!   interval and the start of the next thread's. A switch after an interval that ended in
//!   `sched_yield` or a block is voluntary; one between threads that never yield or block is an
//!   involuntary preemption, which on a ticking kernel coincides with a clock interrupt (§4).
//!   Gaps where the same thread resumes are interrupts and other kernel work.
//! * `indirect` (§5.2): the cost of lost cache state per switch, C = ((W1 − W10)/W1)(T/N10), from a
//!   one-thread and a ten-thread run of CPU_SCAN threads with the same working set.
//! * `latency` (§5.3): dispatch-latency percentiles and the "samples later than 1/5/10/50 ms"
//!   counts of table 1, from `latlate:` lines or JSON.
//! * `render` (figures 3 and 6): an SVG execution map of a window of the trace, the picture the
//!   paper's `render_trace` script drew.
//!
//! Weak: from the paper's text format the end reason of an interval is not known, so switches are
//! classified only when the header says no thread yields or blocks; JSON with `--intervals` carries it.

use crate::config::MAX_THREADS;
use crate::config::{CpuChoice, Format, ReportFormat, RunConfig, ThreadSpec, Workload};
use crate::output::{log2_hist, percentile};
use crate::run::{run, EndReason, Interval};
use crate::sys::Priority;
use crate::units::{format_time, parse_size, parse_time};
use clap::{Parser, Subcommand};
use serde_json::json;
use std::collections::BTreeMap;
use std::process::ExitCode;
use tracing::{debug, info};

/// `hourglass analyze`.
#[derive(Debug, Parser)]
#[command(name = "hourglass analyze", about = "Analyses of Regehr 2002 §5 over hourglass output")]
pub struct AnalyzeArgs {
    #[command(subcommand)]
    cmd: Cmd,
    #[command(flatten)]
    verbose: diag::Verbosity,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// §5.1 context-switch cost histogram, from `hourglass --format paper` output,
    /// `--format json --intervals` output ('-' = stdin), or any trace file (`--trace`). Run e.g.
    /// `hourglass -d 10s -n 10 -a -w CPU_YIELD 0.9ms --format json --intervals > t.json`.
    Ctx {
        /// Trace file.
        file: String,
        /// Histogram bin width (at least 1ns).
        #[arg(long, default_value = "2us", value_parser = positive_time)]
        bin: u64,
        /// Histogram range; larger gaps go to the last bin (on a shared machine another
        /// process often runs between two hourglass threads: those gaps are not switch costs).
        #[arg(long, default_value = "50us", value_parser = positive_time)]
        max: u64,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: ReportFormat,
    },
    /// §5.2 indirect cost per context switch: runs 1 and N CPU_SCAN threads of each working-set
    /// size and computes C = ((W1 - WN)/W1)(T/N_N).
    Indirect {
        /// Working-set sizes, comma-separated: a bare number is KiB, or with a unit 64KiB, 1MB
        /// (KB = 1000 bytes, KiB = 1024).
        #[arg(long, default_value = "4,32,128,512,2048")]
        sizes: String,
        /// Threads in the contended run (the paper's ten; 2 to 1024).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(2..=MAX_THREADS as i64))]
        threads: u16,
        /// Length of each run (the paper used 45 s); all runs together (2 per size and trial) are
        /// held to hourglass's 10m cap.
        #[arg(short = 'd', long, default_value = "3s", value_parser = positive_time)]
        duration: u64,
        /// Trials per size (at least 1).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
        trials: u16,
        /// CPU to pin to (default: the last allowed one).
        #[arg(long)]
        cpu: Option<usize>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: ReportFormat,
    },
    /// §5.3 dispatch-latency percentiles and table-1 counts, from `latlate:` lines or JSON with
    /// `--intervals` ('-' = stdin).
    Latency {
        /// File with `latlate:` lines, or hourglass JSON.
        file: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: ReportFormat,
    },
    /// An SVG execution map like the paper's figures 3 and 6: one row per thread, a gray block
    /// per interval of CPU time, red ticks at missed deadlines. From `--format json --intervals`
    /// output, paper text (without misses), or any trace file (`hourglass --trace`, `smartsim run
    /// --trace`, a klogger recording); writes SVG to stdout, or with --output to a file in the
    /// format its extension names (.svg, .png, .pdf).
    Render {
        /// Trace file ('-' = stdin).
        file: String,
        /// Start of the window.
        #[arg(long, default_value = "0s", value_parser = parse_time)]
        from: u64,
        /// Length of the window (the paper shows 500 ms, 100 ms and 25 ms segments).
        #[arg(long, default_value = "100ms", value_parser = positive_time)]
        span: u64,
        /// Width of the drawing in pixels (200 to 100000).
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(200..=100_000))]
        width: u32,
        /// Write the drawing here instead of to stdout: .svg, .png (twice the size) or .pdf, as
        /// the extension says (PNG and PDF draw text with the system's fonts, fonts-dejavu-core).
        #[arg(short, long, value_name = "FILE")]
        output: Option<std::path::PathBuf>,
    },
}

/// A time that must be positive (a bin, a window, a run length).
fn positive_time(s: &str) -> Result<u64, String> {
    match parse_time(s) {
        Ok(0) => Err("must be positive".into()),
        Ok(t) => Ok(t),
        Err(e) => Err(e.to_string()),
    }
}

/// The largest text or JSON input read (a 10-minute `--format paper` run at 50,000 gaps a second
/// is about 1.2 GB: record such runs with `--trace`, whose reader streams).
pub const MAX_TEXT_INPUT: u64 = 256 << 20;

fn read(file: &str) -> Result<String, String> {
    let text = if file == "-" {
        workload::read_capped_from(std::io::stdin(), MAX_TEXT_INPUT)
            .map_err(|e| format!("standard input: {e}"))?
    } else {
        workload::read_capped(std::path::Path::new(file), MAX_TEXT_INPUT)
            .map_err(|e| format!("{file}: {e}"))?
    };
    if text.trim().is_empty() {
        return Err(format!("no records in {file} (it is empty)"));
    }
    Ok(text)
}

/// A trace file's intervals, task names by id, and missed deadlines (task, ns from the start).
pub type TraceFile = (Trace, std::collections::BTreeMap<u32, String>, Vec<(u32, u64)>);

/// A file in the project's trace format (crates/trace: `hourglass --trace`, `smartsim run --trace`,
/// a klogger recording), read as intervals with their task names and the missed deadlines
/// (Mark records "deadline miss"); `None` if the file is not one. Times are from the trace's start;
/// a stretch that ended blocked, yielded or at the end keeps that reason, any other was a gap.
pub fn read_trace_file(file: &str) -> Result<Option<TraceFile>, String> {
    if file == "-" || !trace::is_trace_file(std::path::Path::new(file)) {
        return Ok(None);
    }
    let r = trace::Reader::open(std::path::Path::new(file)).map_err(|e| e.to_string())?;
    let t0 = r.header().start_ns;
    let (mut intervals, mut names, mut misses, mut end) =
        (Vec::new(), std::collections::BTreeMap::new(), Vec::new(), t0);
    for rec in r {
        match rec.map_err(|e| e.to_string())? {
            trace::Record::Task { task, name, .. } => {
                names.insert(task, name);
            }
            trace::Record::Run { task, cpu, start, end: e, why, .. } => {
                end = end.max(e);
                let reason = match why {
                    trace::EndReason::Blocked => EndReason::Block,
                    trace::EndReason::Yielded => EndReason::Yield,
                    trace::EndReason::Exit | trace::EndReason::TraceEnd => EndReason::Finish,
                    trace::EndReason::Preempted | trace::EndReason::SliceEnd => EndReason::Gap,
                };
                intervals.push(Interval {
                    thread: task,
                    start_ns: start.saturating_sub(t0),
                    end_ns: e.saturating_sub(t0),
                    reason,
                    cpu,
                });
            }
            trace::Record::Mark { task: Some(task), at, text } if text == "deadline miss" => {
                misses.push((task, at.saturating_sub(t0)))
            }
            // Missed: late, discarded or aborted; an unfinished request (its deadline beyond the
            // trace's end) is not (docs/glossary.md).
            trace::Record::JobEnd { task, at, outcome, .. }
                if !matches!(outcome, trace::Outcome::Met | trace::Outcome::Unfinished) =>
            {
                misses.push((task, at.saturating_sub(t0)))
            }
            trace::Record::End { at } => end = end.max(at),
            _ => {}
        }
    }
    intervals.sort_by_key(|i| (i.start_ns, i.thread));
    let t = Trace { intervals, reasons_known: true, duration_ns: Some(end - t0) };
    Ok(Some((t, names, misses)))
}

/// Intervals read back from hourglass output, with whether their end reasons are known.
#[derive(Debug, Default)]
pub struct Trace {
    /// Intervals in time order.
    pub intervals: Vec<Interval>,
    /// True when the end reason of each interval is known (JSON), or implied (no thread yields or
    /// blocks, per the header).
    pub reasons_known: bool,
    /// Run length, ns, when known.
    pub duration_ns: Option<u64>,
}

/// Parses `--format paper` text (lines `id start end duration gap` in ms) or `--format json
/// --intervals` output. Errors name the line.
pub fn parse_trace(text: &str, name: &str) -> Result<Trace, String> {
    let t = text.trim_start();
    if t.starts_with('{') {
        let v: serde_json::Value =
            serde_json::from_str(t).map_err(|e| format!("{name}: not valid JSON: {e}"))?;
        let arr = v["trace"].as_array().ok_or_else(|| {
            format!("{name}: JSON has no \"trace\" array; produce it with --format json --intervals")
        })?;
        let mut out = Vec::with_capacity(arr.len());
        for (i, e) in arr.iter().enumerate() {
            let g = |k: &str| {
                e[k].as_u64().ok_or_else(|| format!("{name}: trace[{i}].{k} missing or not an integer"))
            };
            let reason = match e["reason"].as_str() {
                Some("yield") => EndReason::Yield,
                Some("block") => EndReason::Block,
                Some("finish") => EndReason::Finish,
                _ => EndReason::Gap,
            };
            out.push(Interval {
                thread: g("thread")? as u32,
                start_ns: g("start_ns")?,
                end_ns: g("end_ns")?,
                reason,
                cpu: e["cpu"].as_u64().unwrap_or(0) as u32,
            });
        }
        out.sort_by_key(|i| i.start_ns);
        return Ok(Trace { intervals: out, reasons_known: true, duration_ns: v["duration_ns"].as_u64() });
    }
    let mut out = Vec::new();
    let mut all_never_block = true;
    let mut saw_header = false;
    for (ln, line) in text.lines().enumerate() {
        let l = line.trim();
        if let Some(h) = l.strip_prefix("# thread ") {
            saw_header = true;
            if h.contains("YIELD") || h.contains("PERIODIC") || h.contains("LAT") {
                all_never_block = false;
            }
            continue;
        }
        if l.is_empty() || l.starts_with('#') || l.contains(':') {
            continue;
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() != 5 {
            return Err(format!("{name}:{}: expected 'id start end duration gap', got '{l}'", ln + 1));
        }
        let ms = |s: &str, what: &str| -> Result<u64, String> {
            s.parse::<f64>()
                .map(|x| (x * 1e6).round() as u64)
                .map_err(|_| format!("{name}:{}: {what} '{s}' is not a number", ln + 1))
        };
        out.push(Interval {
            thread: f[0]
                .parse()
                .map_err(|_| format!("{name}:{}: thread id '{}' is not a number", ln + 1, f[0]))?,
            start_ns: ms(f[1], "start")?,
            end_ns: ms(f[2], "end")?,
            reason: EndReason::Gap,
            cpu: 0,
        });
    }
    out.sort_by_key(|i| i.start_ns);
    Ok(Trace { intervals: out, reasons_known: saw_header && all_never_block, duration_ns: None })
}

/// §5.1 statistics of a list of gaps.
fn stats(g: &mut [u64]) -> serde_json::Value {
    if g.is_empty() {
        return json!({"count": 0});
    }
    g.sort_unstable();
    json!({
        "count": g.len(),
        "min_ns": g[0],
        "median_ns": percentile(g, 50.0),
        "mean_ns": g.iter().sum::<u64>() as f64 / g.len() as f64,
        "p90_ns": percentile(g, 90.0),
        "max_ns": g[g.len() - 1],
    })
}

/// The §5.1 analysis: (voluntary, involuntary, unclassified) switch gaps and same-thread gaps.
pub fn ctx_gaps(t: &Trace) -> (Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>) {
    let (mut vol, mut inv, mut unk, mut same) = (vec![], vec![], vec![], vec![]);
    for w in crate::output::by_cpu(&t.intervals).windows(2) {
        if w[0].cpu != w[1].cpu || w[1].start_ns < w[0].end_ns {
            continue;
        }
        let g = w[1].start_ns - w[0].end_ns;
        if w[0].thread == w[1].thread {
            same.push(g);
        } else if !t.reasons_known {
            unk.push(g);
        } else if matches!(w[0].reason, EndReason::Yield | EndReason::Block) {
            vol.push(g);
        } else {
            inv.push(g);
        }
    }
    (vol, inv, unk, same)
}

fn linear_hist(g: &[u64], bin: u64, max: u64, out: &mut String) {
    if g.is_empty() {
        return;
    }
    let s = g;
    let nb = (max.div_ceil(bin.max(1))).clamp(1, 500) as usize;
    let mut c = vec![0u64; nb + 1];
    for &x in s.iter() {
        c[((x / bin) as usize).min(nb)] += 1;
    }
    let peak = *c.iter().max().unwrap_or(&1).max(&1);
    for (i, n) in c.iter().enumerate() {
        let label = if i == nb {
            format!(">= {}", format_time(nb as u64 * bin))
        } else {
            format_time(i as u64 * bin)
        };
        let bar = "#".repeat(((*n as f64 / peak as f64) * 50.0).ceil() as usize);
        out.push_str(&format!("  {label:>10} {n:>8} {bar}\n"));
    }
}

/// Entry point of `hourglass analyze`.
pub fn main(argv: &[String]) -> ExitCode {
    let args = match AnalyzeArgs::try_parse_from(
        std::iter::once("hourglass analyze".to_string()).chain(argv.iter().cloned()),
    ) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    diag::init("hourglass analyze", args.verbose.tracing_level_filter());
    match execute(args.cmd) {
        Ok(s) => {
            diag::out!("{s}");
            ExitCode::SUCCESS
        }
        Err(Failure { code, message }) => {
            // A message may quote a line or a name of the input: shown as a terminal may show it.
            eprintln!("hourglass analyze: {}", diag::visible_lines(&message));
            ExitCode::from(code)
        }
    }
}

/// Why an analysis failed, and its exit status: 2 for bad input or options (the default), 1 for a
/// measuring run that failed.
struct Failure {
    code: u8,
    message: String,
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure { code: 2, message }
    }
}

/// Refuses an input that holds no execution interval (exit status 2).
fn no_intervals<T>(file: &str) -> Result<T, Failure> {
    refuse(format!("no records in {file}: it holds no execution intervals"))
}

/// Refuses the input or options (exit status 2).
fn refuse<T>(message: String) -> Result<T, Failure> {
    Err(message.into())
}

fn execute(cmd: Cmd) -> Result<String, Failure> {
    match cmd {
        Cmd::Ctx { file, bin, max, format } => ctx(&file, bin, max, format),
        Cmd::Render { file, from, span, width, output: Some(out) } => {
            render_to_file(&file, from, span, width, &out)
        }
        Cmd::Render { file, from, span, width, output: None } => render(&file, from, span, width),
        Cmd::Latency { file, format } => latency(&file, format),
        Cmd::Indirect { sizes, threads, duration, trials, cpu, format } => {
            let sizes: Vec<usize> = sizes
                .split(',')
                .map(|s| parse_size(s).map_err(|e| format!("--sizes: {e}")))
                .collect::<Result<_, _>>()?;
            indirect(&sizes, usize::from(threads), duration, trials, cpu, format)
        }
    }
}

/// Reads any input `analyze` takes: a trace file, or hourglass's paper text or JSON.
fn read_any_trace(file: &str) -> Result<Trace, Failure> {
    Ok(match read_trace_file(file)? {
        Some((t, _, _)) => {
            debug!("{file}: a trace file, {} intervals", t.intervals.len());
            t
        }
        None => parse_trace(&read(file)?, file)?,
    })
}

/// `analyze ctx`: §5.1's switch gaps, as statistics, clusters and histograms.
fn ctx(file: &str, bin: u64, max: u64, format: ReportFormat) -> Result<String, Failure> {
    let t = read_any_trace(file)?;
    if t.intervals.is_empty() {
        return no_intervals(file);
    }
    if max < bin {
        return refuse(format!("--max {} is below --bin {}", format_time(max), format_time(bin)));
    }
    let (mut vol, mut inv, mut unk, mut same) = ctx_gaps(&t);
    let span = t.duration_ns.or_else(|| t.intervals.last().map(|i| i.end_ns)).unwrap_or(1).max(1);
    let switches = vol.len() + inv.len() + unk.len();
    let clusters = json!({"voluntary": near_minimum(&vol), "involuntary": near_minimum(&inv),
                          "unclassified": near_minimum(&unk)});
    let v = json!({
        "analysis": "context-switch cost (Regehr 2002 §5.1)",
        "near_minimum": clusters,
        "intervals": t.intervals.len(),
        "switches_per_s": switches as f64 / (span as f64 / 1e9),
        "voluntary": stats(&mut vol),
        "involuntary": stats(&mut inv),
        "unclassified": stats(&mut unk),
        "same_thread_gaps": stats(&mut same),
    });
    if format == ReportFormat::Json {
        return Ok(serde_json::to_string_pretty(&v).unwrap() + "\n");
    }
    let mut o = format!(
        "context switches: {switches} in {} ({:.1}/s); {} intervals\n",
        format_time(span),
        v["switches_per_s"].as_f64().unwrap(),
        t.intervals.len()
    );
    if !t.reasons_known {
        o.push_str(
            "(end reasons unknown in this input: switches are unclassified; use --format json --intervals)\n",
        );
    }
    for (name, g) in [
        ("voluntary (after yield/block)", &vol),
        ("involuntary (preemption)", &inv),
        ("unclassified", &unk),
        ("same-thread gaps (interrupts, kernel work)", &same),
    ] {
        ctx_class_text(name, g, bin, max, &mut o);
    }
    Ok(o)
}

/// The gaps of `g` not much longer than the shortest (≤ 3 × min): their count and median.
fn near_minimum(g: &[u64]) -> serde_json::Value {
    let mut s = g.to_vec();
    s.sort_unstable();
    match s.first() {
        Some(&m) => {
            let c: Vec<u64> = s.iter().copied().filter(|&x| x <= 3 * m).collect();
            json!({"count": c.len(), "median_ns": percentile(&c, 50.0)})
        }
        None => serde_json::Value::Null,
    }
}

/// One class of gaps (`g` sorted) as text: statistics, the cluster near the minimum, and (for
/// switches) a histogram.
fn ctx_class_text(name: &str, g: &[u64], bin: u64, max: u64, o: &mut String) {
    if g.is_empty() {
        return;
    }
    o.push_str(&format!(
        "{name}: n={} min {} median {} mean {} p90 {} max {}\n",
        g.len(),
        format_time(g[0]),
        format_time(percentile(g, 50.0)),
        format_time((g.iter().sum::<u64>() as f64 / g.len() as f64) as u64),
        format_time(percentile(g, 90.0)),
        format_time(g[g.len() - 1]),
    ));
    // §4: the shortest gap is the fastest path; the gaps not much longer than it are the
    // representative switches, longer ones are contaminated by other activity.
    let low: Vec<u64> = g.iter().copied().filter(|&x| x <= 3 * g[0]).collect();
    o.push_str(&format!(
        "  cluster near the minimum (<= 3 x min): n={} median {}\n",
        low.len(),
        format_time(percentile(&low, 50.0))
    ));
    if !name.starts_with("same") {
        linear_hist(g, bin, max, o);
    }
}

/// `analyze render --output FILE`: the drawing in the format the extension names (SVG without
/// one), the file planned before the trace is read (not the trace, writable).
fn render_to_file(
    file: &str,
    from: u64,
    span: u64,
    width: u32,
    out: &std::path::Path,
) -> Result<String, Failure> {
    let mut plan = outputs::Plan::new();
    plan.input("the trace", std::path::Path::new(file));
    let slot = plan.output("--output", Some(out), outputs::Kind::IMAGE);
    let planned = plan.check().map_err(|e| e.to_string())?;
    let out = planned.get(slot).expect("planned");
    let format = match out.format() {
        outputs::Format::Png => report::export::ImageFormat::Png,
        outputs::Format::Pdf => report::export::ImageFormat::Pdf,
        _ => report::export::ImageFormat::Svg,
    };
    let svg = render(file, from, span, width)?;
    report::export::write_as(&svg, out.path(), format).map_err(|e| e.to_string())?;
    out.wrote("");
    Ok(String::new())
}

/// `analyze render`: the execution map as SVG.
fn render(file: &str, from: u64, span: u64, width: u32) -> Result<String, Failure> {
    if let Some((t, names, misses)) = read_trace_file(file)? {
        if t.intervals.is_empty() {
            return no_intervals(file);
        }
        return Ok(render_svg(&t.intervals, &names, &misses, from, span, width));
    }
    let text = read(file)?;
    let t = parse_trace(&text, file)?;
    if t.intervals.is_empty() {
        return no_intervals(file);
    }
    let (names, misses) = if text.trim_start().starts_with('{') {
        json_labels_and_misses(&text)
    } else {
        (BTreeMap::new(), Vec::new())
    };
    Ok(render_svg(&t.intervals, &names, &misses, from, span, width))
}

/// From hourglass JSON: each task's label (`name (sched, workload)`) and its missed deadlines;
/// nothing from JSON that does not parse.
fn json_labels_and_misses(text: &str) -> (BTreeMap<u32, String>, Vec<(u32, u64)>) {
    let mut names = BTreeMap::new();
    let mut misses: Vec<(u32, u64)> = Vec::new();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        for task in v["tasks"].as_array().into_iter().flatten() {
            let id = task["id"].as_u64().unwrap_or(0) as u32;
            let label = format!(
                "{} ({}, {})",
                task["name"].as_str().unwrap_or("?"),
                task["sched"].as_str().unwrap_or(""),
                task["workload"].as_str().unwrap_or("")
            );
            names.insert(id, label);
            for m in task["miss_at_ns"].as_array().into_iter().flatten() {
                misses.push((id, m.as_u64().unwrap_or(0)));
            }
        }
    }
    (names, misses)
}

/// `analyze latency`: §5.3's percentiles and table 1's counts.
fn latency(file: &str, format: ReportFormat) -> Result<String, Failure> {
    let mut s = latency_samples(file)?;
    if s.is_empty() {
        return refuse(format!(
            "{file}: no latency samples (need 'latlate:' lines, or JSON from --format json --intervals)"
        ));
    }
    s.sort_unstable();
    let later = |ms: u64| s.iter().filter(|&&x| x > ms * 1_000_000).count();
    let v = json!({
        "analysis": "dispatch latency (Regehr 2002 §5.3)",
        "samples": s.len(),
        "latency_ns": {"min": s[0], "p50": percentile(&s, 50.0), "p90": percentile(&s, 90.0),
            "p99": percentile(&s, 99.0), "p99.9": percentile(&s, 99.9), "max": s[s.len()-1],
            "mean": s.iter().sum::<u64>() as f64 / s.len() as f64},
        "later_than": {"1ms": later(1), "5ms": later(5), "10ms": later(10), "50ms": later(50)},
    });
    if format == ReportFormat::Json {
        return Ok(serde_json::to_string_pretty(&v).unwrap() + "\n");
    }
    let l = &v["latency_ns"];
    let f = |k: &str| format_time(l[k].as_f64().unwrap_or(0.0) as u64);
    let mut o = format!(
        "dispatch latency: {} samples; min {} p50 {} p90 {} p99 {} p99.9 {} max {} mean {}\n",
        s.len(),
        f("min"),
        f("p50"),
        f("p90"),
        f("p99"),
        f("p99.9"),
        f("max"),
        f("mean")
    );
    o.push_str(&format!(
        "samples later than (table 1): 1 ms {}  5 ms {}  10 ms {}  50 ms {}\n",
        later(1),
        later(5),
        later(10),
        later(50)
    ));
    for (lo, hi, c) in log2_hist(&s) {
        o.push_str(&format!("  {:>9} .. {:>9} {c:>8}\n", format_time(lo), format_time(hi)));
    }
    Ok(o)
}

/// The wake-up latencies in `file`, ns: its `latlate:` lines (µs), or its JSON's samples.
fn latency_samples(file: &str) -> Result<Vec<u64>, Failure> {
    let text = read(file)?;
    let mut s: Vec<u64> = Vec::new();
    if text.trim_start().starts_with('{') {
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{file}: not valid JSON: {e}"))?;
        for t in v["tasks"].as_array().into_iter().flatten() {
            if let Some(a) = t["latency_samples_ns"].as_array() {
                s.extend(a.iter().filter_map(|x| x.as_u64()));
            }
        }
    } else {
        for (ln, l) in text.lines().enumerate() {
            if let Some(x) = l.trim().strip_prefix("latlate:") {
                let us: f64 = x.trim().parse().map_err(|_| {
                    format!("{file}:{}: latlate value '{}' is not a number", ln + 1, x.trim())
                })?;
                s.push((us * 1e3).round() as u64);
            }
        }
    }
    Ok(s)
}

/// Refuses §5.2 runs that cannot be done: working sets below 64 bytes, more than hourglass's cap
/// in all, a CPU the process may not use.
fn check_indirect(sizes: &[usize], duration: u64, trials: u16, cpu: Option<usize>) -> Result<(), Failure> {
    for &b in sizes {
        if b < 64 {
            return refuse(format!("--sizes: {b} bytes is below the smallest working set, 64 bytes"));
        }
    }
    let runs = 2 * sizes.len() as u64 * u64::from(trials);
    if duration.saturating_mul(runs) > crate::config::MAX_DURATION {
        return refuse(format!(
            "--sizes, --trials, -d: {runs} runs of {} take longer than hourglass's {} cap",
            format_time(duration),
            format_time(crate::config::MAX_DURATION)
        ));
    }
    if let Some(c) = cpu {
        let allowed = crate::sys::allowed_cpus();
        if !allowed.contains(&c) {
            return refuse(format!("--cpu: CPU {c} is not allowed here (allowed: {allowed:?})"));
        }
    }
    Ok(())
}

/// `analyze indirect`: §5.2's pairs of runs, one row per working-set size and trial.
fn indirect(
    sizes: &[usize],
    threads: usize,
    duration: u64,
    trials: u16,
    cpu: Option<usize>,
    format: ReportFormat,
) -> Result<String, Failure> {
    check_indirect(sizes, duration, trials, cpu)?;
    let mut rows = Vec::new();
    let mut o = format!(
        "indirect cost of a context switch (Regehr 2002 §5.2): C = ((W1 - W{threads})/W1)(T/N{threads}), runs of {};\nW = passes per CPU-second, T = CPU time of the {threads}-thread run (see `Indirect`)\n{:>9} {:>5} {:>12} {:>9} {:>12} {:>9} {:>9} {:>8} {:>13}\n",
        format_time(duration), "size", "trial", "W1 passes", "cpu1", format!("W{threads} passes"), format!("cpu{threads}"), "lost %", format!("N{threads}"), "C per switch"
    );
    for &bytes in sizes {
        for trial in 0..trials {
            info!("indirect: {} KiB, trial {}/{trials}...", bytes / 1024, trial + 1);
            let r = indirect_once(bytes, threads, duration, cpu)
                .map_err(|message| Failure { code: 1, message })?;
            o.push_str(&indirect_row(bytes, trial + 1, &r));
            rows.push(json!({"size_bytes": bytes, "trial": trial + 1, "w1": r.w1, "wn": r.wn,
                "cpu1_ns": r.cpu1_ns, "cpun_ns": r.cpun_ns, "threads": threads,
                "duration_ns": duration, "switches": r.switches,
                "lost_fraction": r.lost_fraction(), "cost_per_switch_ns": r.cost_ns()}));
        }
    }
    o.push_str(
        "(a negative C means the contended run did more work per CPU-second: noise exceeds the effect)\n",
    );
    if format == ReportFormat::Json {
        return Ok(serde_json::to_string_pretty(&json!({
            "analysis": "indirect context-switch cost (Regehr 2002 §5.2)", "rows": rows}))
        .unwrap()
            + "\n");
    }
    Ok(o)
}

/// One line of `analyze indirect`'s table.
fn indirect_row(bytes: usize, trial: u16, r: &Indirect) -> String {
    let c = match r.cost_ns() {
        Some(c) if c >= 0.0 => format_time(c as u64),
        Some(c) => format!("-{}", format_time((-c) as u64)),
        None => "-".into(),
    };
    format!(
        "{:>6}KiB {:>5} {:>12} {:>9} {:>12} {:>9} {:>8.2}% {:>8} {:>13}\n",
        bytes / 1024,
        trial,
        r.w1,
        format_time(r.cpu1_ns),
        r.wn,
        format_time(r.cpun_ns),
        100.0 * r.lost_fraction(),
        r.switches,
        c
    )
}

/// Draws an execution map (figures 3 and 6 of the paper) as SVG (`report::analyses::execution_map`):
/// one row per thread, a block per interval inside `[from, from + span)`, red ticks at missed
/// deadlines, a time axis.
pub fn render_svg(
    iv: &[Interval],
    names: &std::collections::BTreeMap<u32, String>,
    misses: &[(u32, u64)],
    from: u64,
    span: u64,
    width: u32,
) -> String {
    let mut threads: Vec<u32> = iv.iter().map(|i| i.thread).chain(names.keys().copied()).collect();
    threads.sort_unstable();
    threads.dedup();
    let rows: Vec<report::analyses::MapRow> = threads
        .iter()
        .map(|th| report::analyses::MapRow {
            label: names.get(th).cloned().unwrap_or_else(|| format!("thread {th}")),
            blocks: iv.iter().filter(|i| i.thread == *th).map(|i| (i.start_ns, i.end_ns)).collect(),
            marks: misses.iter().filter(|(t, _)| t == th).map(|&(_, m)| m).collect(),
        })
        .collect();
    report::analyses::execution_map(&rows, from, span, width)
}

/// One §5.2 measurement.
///
/// The paper ran on an otherwise idle machine, where both runs get the whole CPU for T. On a
/// shared machine a one-thread run gets a smaller share of the CPU than a ten-thread run (the
/// fair class shares by thread), so work is normalised by the CPU time each run received:
/// W = passes per CPU-second, T = CPU time of the contended run. On an idle CPU this is the
/// paper's formula exactly.
#[derive(Debug, Clone, Copy)]
pub struct Indirect {
    /// Passes over the working set by one thread alone.
    pub w1: u64,
    /// Passes by all threads of the contended run together.
    pub wn: u64,
    /// CPU time the single thread received, ns.
    pub cpu1_ns: u64,
    /// CPU time all threads of the contended run received together, ns.
    pub cpun_ns: u64,
    /// Context switches between hourglass threads seen in the contended run.
    pub switches: u64,
}

impl Indirect {
    /// (W1 − WN)/W1 with W in passes per CPU-second.
    pub fn lost_fraction(&self) -> f64 {
        let r1 = self.w1 as f64 / self.cpu1_ns.max(1) as f64;
        let rn = self.wn as f64 / self.cpun_ns.max(1) as f64;
        (r1 - rn) / r1.max(f64::MIN_POSITIVE)
    }
    /// C = ((W1 − WN)/W1)(T/NN), ns per switch (negative when noise exceeds the effect).
    pub fn cost_ns(&self) -> Option<f64> {
        (self.switches > 0).then(|| self.lost_fraction() * self.cpun_ns as f64 / self.switches as f64)
    }
}

/// Runs one §5.2 pair: one CPU_SCAN thread, then `threads` of them, pinned to one CPU.
pub fn indirect_once(
    bytes: usize,
    threads: usize,
    duration: u64,
    cpu: Option<usize>,
) -> Result<Indirect, String> {
    let mk = |n: usize| {
        let mut c = RunConfig::new(n);
        c.duration = duration;
        if let Some(x) = cpu {
            c.cpu = CpuChoice::One(x);
        }
        c.format = Format::Json;
        c.threads = (0..n)
            .map(|i| ThreadSpec {
                workload: Workload::CpuScan { bytes },
                priority: Priority::Normal,
                ..ThreadSpec::new(i)
            })
            .collect();
        c
    };
    let r1 = run(&mk(1)).map_err(|e| e.0)?;
    let rn = run(&mk(threads)).map_err(|e| e.0)?;
    let switches = crate::output::by_cpu(&rn.intervals)
        .windows(2)
        .filter(|w| w[0].cpu == w[1].cpu && w[0].thread != w[1].thread)
        .count() as u64;
    Ok(Indirect {
        w1: r1.threads[0].work,
        wn: rn.threads.iter().map(|t| t.work).sum(),
        cpu1_ns: r1.threads[0].cpu_ns,
        cpun_ns: rn.threads.iter().map(|t| t.cpu_ns).sum(),
        switches,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn any_trace_file_reads_as_intervals_with_names_and_misses() {
        let dir = std::env::temp_dir().join(format!("hourglass-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.trace");
        let source = trace::Source::Simulator { scenario: "s".into(), seed: 1, policy: "smart".into() };
        let mut w =
            trace::Writer::create(&path, &trace::Header::new(source, 1, "simulated", 100, None)).unwrap();
        let run =
            |task, start, end, why| trace::Record::Run { task, cpu: 0, start, end, why, complete: true };
        for r in [
            trace::Record::Task { task: 0, process: 0, name: "video".into() },
            // A request that ends was released (the trace reader's rule).
            trace::Record::Release { task: 0, job: 0, at: 100, deadline: Some(900) },
            run(0, 100, 400, trace::EndReason::Blocked),
            run(1, 400, 900, trace::EndReason::SliceEnd),
            trace::Record::JobEnd { task: 0, job: 0, at: 950, outcome: trace::Outcome::Late },
            // Open at the end, its deadline beyond it: not missed, not drawn.
            trace::Record::Release { task: 0, job: 1, at: 1000, deadline: Some(1200) },
            trace::Record::JobEnd { task: 0, job: 1, at: 1100, outcome: trace::Outcome::Unfinished },
            trace::Record::End { at: 1100 },
        ] {
            w.write(&r).unwrap();
        }
        w.finish().unwrap();
        let (t, names, misses) = read_trace_file(path.to_str().unwrap()).unwrap().expect("a trace file");
        assert_eq!(t.duration_ns, Some(1000));
        assert_eq!(t.intervals.len(), 2);
        assert_eq!(
            (t.intervals[0].start_ns, t.intervals[0].end_ns, t.intervals[0].reason),
            (0, 300, EndReason::Block)
        );
        assert_eq!(t.intervals[1].reason, EndReason::Gap);
        assert_eq!(names.get(&0).map(String::as_str), Some("video"));
        assert_eq!(misses, vec![(0, 850)]);
        // The switch at 400 ns follows a block: voluntary, and free in a simulation.
        let (vol, inv, _, _) = ctx_gaps(&t);
        assert_eq!((vol, inv.len()), (vec![0], 0));
        // A stretch before the header's start (a hand-made or damaged file) is refused, with the file
        // and the record's offset, as the trace reader refuses every record outside its trace's span.
        let early = dir.join("early.trace");
        let h = trace::Header::new(
            trace::Source::Hourglass { kernel: "k".into() },
            1,
            "CLOCK_MONOTONIC",
            100,
            None,
        );
        trace::write_file(&early, &h, &[run(0, 50, 150, trace::EndReason::Blocked)]).unwrap();
        let e = read_trace_file(early.to_str().unwrap()).unwrap_err();
        assert!(e.contains("early.trace: byte ") && e.contains("before the trace's start"), "{e}");
        std::fs::write(dir.join("x.txt"), "0 0.0 1.0 1.0 0.0\n").unwrap();
        assert!(read_trace_file(dir.join("x.txt").to_str().unwrap()).unwrap().is_none());
        std::fs::remove_dir_all(&dir).ok();
    }

    use super::*;

    const PAPER: &str = "# thread 0: NORMAL CPU -i NATIVE\n# thread 1: NORMAL CPU -i NATIVE\n\
        0 442.323192 443.222287 0.899095 0.002184\n\
        1 443.224485 444.123644 0.899159 0.002198\n\
        1 444.125827 445.024925 0.899098 0.002183\n\
        0 445.027000 446.000000 0.973000 0.002075\n";

    #[test]
    fn paper_trace_switches_are_the_gaps_between_threads() {
        let t = parse_trace(PAPER, "x").unwrap();
        assert!(t.reasons_known, "CPU threads never yield: every switch is involuntary");
        let (vol, inv, unk, same) = ctx_gaps(&t);
        assert!(vol.is_empty() && unk.is_empty());
        assert_eq!(inv, vec![2198, 2075]);
        assert_eq!(same, vec![2183]);
    }

    #[test]
    fn render_draws_one_block_per_interval_in_the_window() {
        let t = parse_trace(PAPER, "x").unwrap();
        let names = std::collections::BTreeMap::new();
        let svg = render_svg(&t.intervals, &names, &[(0, 444_000_000)], 442_000_000, 3_000_000, 600);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        // Three intervals start inside [442 ms, 445 ms), the fourth (445.027) does not.
        assert_eq!(svg.matches("fill=\"#888\"").count(), 3);
        assert_eq!(svg.matches("stroke=\"red\"").count(), 1);
    }

    #[test]
    fn bad_trace_lines_are_named() {
        let e = parse_trace("0 1.0 2.0 1.0\n", "t.txt").unwrap_err();
        assert!(e.starts_with("t.txt:1:"), "{e}");
        let e = parse_trace("0 1.0 x 1.0 0\n", "t.txt").unwrap_err();
        assert!(e.contains("end 'x'"), "{e}");
    }

    #[test]
    fn indirect_formula_matches_the_paper() {
        // C = ((W1 - W10)/W1)(T/N10): 1 % of 45 s lost over 900 switches = 500 us each.
        let r = Indirect {
            w1: 10_000,
            wn: 9_900,
            cpu1_ns: 45_000_000_000,
            cpun_ns: 45_000_000_000,
            switches: 900,
        };
        assert!((r.cost_ns().unwrap() - 500_000.0).abs() < 1e-6);
    }
}
