//! Reports for people (aligned text tables) and programs (`--format json`, following the
//! project's output contract: per task `name`, `pid`, `cpu_ns`, `quanta`, `switches_in`,
//! `wakeups`, and per HZ `billing_ratio`, `unbilled_quanta`).

use std::fmt::Write as _;

use report_crate::escape::visible;
use serde::Serialize;

use crate::analysis::{Group, Percentiles, TaskStats, Trace};
use trace::billing::{billing_table, BillingRow};

/// Effective-quantum distributions of a task.
#[derive(Clone, Debug, Serialize)]
pub struct QuantumDist {
    /// All complete quanta.
    pub all: Percentiles,
    /// Quanta that ended in preemption.
    pub preempted: Percentiles,
    /// Quanta that ended in blocking or exit.
    pub blocked: Percentiles,
}

/// One task of `klogger report --format json`.
#[derive(Clone, Debug, Serialize)]
pub struct TaskReport {
    /// Command name.
    pub name: String,
    /// Thread id (or process id with `--group process`).
    pub pid: u32,
    /// Process id.
    pub tgid: u32,
    /// CPU time (ns).
    pub cpu_ns: u64,
    /// Share of the machine (window × CPUs), 0..1.
    pub cpu_share: f64,
    /// Complete quanta.
    pub quanta: u64,
    /// Complete quanta per second.
    pub quanta_per_s: f64,
    /// Switch-ins.
    pub switches_in: u64,
    /// Wake-ups.
    pub wakeups: u64,
    /// Effective quanta (ns).
    pub quantum_ns: QuantumDist,
    /// Wake-up to run latency (ns).
    pub latency_ns: Percentiles,
}

/// A row of the CPU share table (Etsion table 5).
#[derive(Clone, Debug, Serialize)]
pub struct ShareRow {
    /// Task name, "idle loop" or "other".
    pub name: String,
    /// Share of the machine, 0..1.
    pub share: f64,
}

/// `klogger report --format json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// "klogger".
    pub tool: String,
    /// The log file.
    pub file: String,
    /// Recorded kernel.
    pub kernel: String,
    /// Its CONFIG_HZ.
    pub hz: Option<u32>,
    /// CPUs.
    pub cpus: u32,
    /// Recording window (ns).
    pub duration_ns: u64,
    /// Event records.
    pub events: u64,
    /// Events lost in the kernel.
    pub lost: u64,
    /// Switches that did not chain (see analysis): at least one switch between them was not
    /// recorded.
    pub broken_chains: u64,
    /// `broken_chains` by reason (`ring_buffer_full`, `not_followed`, `switch_out_not_reported`,
    /// `program_skipped`, `unexplained`; see [`trace::klog::BreakReason`]); reasons with none are
    /// left out.
    pub broken_chains_by_reason: std::collections::BTreeMap<String, u64>,
    /// Events outside the recording's span (before the header's start, after the End record of a
    /// clean stop), left out (see [`trace::klog::LeftOut`]).
    pub events_outside_span: u64,
    /// Stretches of a task that began before its stretch on another CPU had ended (a thread runs
    /// on one CPU at a time), cut or left out.
    pub overlapping_stretches: u64,
    /// Ticks recorded.
    pub ticks: u64,
    /// Median phase of the recorded ticks modulo the kernel's tick period (ns).
    pub tick_phase_ns: Option<u64>,
    /// How tasks are grouped.
    pub group: Group,
    /// Tasks, largest CPU time first.
    pub tasks: Vec<TaskReport>,
    /// CPU share table.
    pub cpu_share: Vec<ShareRow>,
}

/// Whether a task name passes an `--only` filter (empty filter: every name; else a name holding
/// any of the substrings).
pub fn matches(name: &str, only: &[String]) -> bool {
    only.is_empty() || only.iter().any(|o| name.contains(o.as_str()))
}

/// Builds the report of a trace. `top` bounds the share table's named rows; `only` filters the
/// task list (not the share table) by name.
pub fn report(trace: &Trace, file: &str, group: Group, top: usize, only: &[String]) -> Report {
    let stats = trace.timeline.task_stats(group);
    let tasks: Vec<TaskReport> = stats.iter().filter(|s| matches(&s.name, only)).map(task_report).collect();
    let mut share = Vec::new();
    let mut other = 0.0;
    let mut named = 0;
    for s in &stats {
        if s.key == 0 {
            continue;
        }
        if named < top {
            share.push(ShareRow { name: format!("{} ({})", s.name, s.key), share: s.cpu_share });
            named += 1;
        } else {
            other += s.cpu_share;
        }
    }
    if trace.timeline.followed.is_none() {
        let idle = stats.iter().find(|s| s.key == 0).map(|s| s.cpu_share).unwrap_or(0.0);
        share.push(ShareRow { name: "idle loop".into(), share: idle });
    }
    share.push(ShareRow { name: "other".into(), share: other });
    Report {
        tool: "klogger".into(),
        file: file.into(),
        kernel: trace.header.kernel.clone(),
        hz: trace.header.hz,
        cpus: trace.header.cpus,
        duration_ns: trace.duration(),
        events: trace.events,
        lost: trace.lost,
        broken_chains: trace.broken_chains,
        broken_chains_by_reason: trace
            .broken_chains_by_reason
            .iter()
            .map(|(r, n)| (r.name().to_string(), *n))
            .collect(),
        events_outside_span: trace.left_out.outside_span,
        overlapping_stretches: trace.left_out.overlapping,
        ticks: trace.timeline.ticks.iter().map(|t| t.len() as u64).sum(),
        tick_phase_ns: trace.header.hz.and_then(|h| trace.timeline.observed_tick_phase(h)),
        group,
        tasks,
        cpu_share: share,
    }
}

fn task_report(s: &TaskStats) -> TaskReport {
    let mut all: Vec<u64> = s.preempted.iter().chain(&s.blocked).copied().collect();
    all.sort_unstable();
    TaskReport {
        name: s.name.clone(),
        pid: s.key,
        tgid: s.process,
        cpu_ns: s.cpu_ns,
        cpu_share: s.cpu_share,
        quanta: s.quanta,
        quanta_per_s: s.quanta_per_s,
        switches_in: s.switches_in,
        wakeups: s.wakeups,
        quantum_ns: QuantumDist {
            all: Percentiles::of_values(&all),
            preempted: Percentiles::of_values(&s.preempted),
            blocked: Percentiles::of_values(&s.blocked),
        },
        latency_ns: Percentiles::of_values(&s.latencies),
    }
}

/// Human-readable time: "1.23ms", "87.0us", "500ns", "2.50s".
pub fn fmt_ns(ns: u64) -> String {
    let f = ns as f64;
    if ns >= 1_000_000_000 {
        format!("{:.2}s", f / 1e9)
    } else if ns >= 1_000_000 {
        format!("{:.2}ms", f / 1e6)
    } else if ns >= 1_000 {
        format!("{:.1}us", f / 1e3)
    } else {
        format!("{ns}ns")
    }
}

/// A task's column: `name (pid)` as a terminal should show it (`report::escape::visible`), cut to
/// the 28 characters of its column.
fn label(name: &str, pid: u32) -> String {
    format!("{} ({pid})", visible(name)).chars().take(28).collect()
}

/// The report as text tables. `rows` bounds the task tables.
pub fn report_text(r: &Report, rows: usize) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}: kernel {}, HZ {}, {} CPUs, {} recorded, {} events, {} lost, {} ticks{}",
        visible(&r.file),
        visible(&r.kernel),
        r.hz.map(|h| h.to_string()).unwrap_or_else(|| "?".into()),
        r.cpus,
        fmt_ns(r.duration_ns),
        r.events,
        r.lost,
        r.ticks,
        r.tick_phase_ns.map(|p| format!(" (phase {})", fmt_ns(p))).unwrap_or_default()
    );
    if r.broken_chains > 0 {
        let why: Vec<String> = r.broken_chains_by_reason.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = writeln!(
            o,
            "note: {} switches did not chain ({}); their quanta are left out",
            r.broken_chains,
            why.join(", ")
        );
    }
    let left_out =
        trace::klog::LeftOut { outside_span: r.events_outside_span, overlapping: r.overlapping_stretches };
    if left_out.any() {
        let _ = writeln!(o, "note: {}", left_out.describe());
    }
    let _ = writeln!(o, "\nTasks (effective quantum = scheduled to descheduled):");
    let _ = writeln!(
        o,
        "{:<28} {:>10} {:>7} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>12} {:>12}",
        "task (pid)",
        "cpu",
        "share",
        "quanta",
        "q/s",
        "wakeups",
        "q p50",
        "q p90",
        "preempt",
        "block",
        "wake→run p50",
        "wake→run p99"
    );
    for t in r.tasks.iter().take(rows) {
        let _ = writeln!(
            o,
            "{:<28} {:>10} {:>6.2}% {:>8} {:>8.1} {:>8} {:>9} {:>9} {:>9} {:>9} {:>12} {:>12}",
            label(&t.name, t.pid),
            fmt_ns(t.cpu_ns),
            t.cpu_share * 100.0,
            t.quanta,
            t.quanta_per_s,
            t.wakeups,
            fmt_ns(t.quantum_ns.all.p50),
            fmt_ns(t.quantum_ns.all.p90),
            t.quantum_ns.preempted.count,
            t.quantum_ns.blocked.count,
            fmt_ns(t.latency_ns.p50),
            fmt_ns(t.latency_ns.p99),
        );
    }
    if r.tasks.len() > rows {
        let _ = writeln!(o, "... {} more tasks (--rows)", r.tasks.len() - rows);
    }
    // The terms of the columns (preempt and block count the quanta that ended so).
    let _ = write!(o, "{}", trace::summary::footer(&["wake→run", "preempted", "blocked"]));
    let _ = writeln!(o, "\nCPU usage distribution (Etsion table 5):");
    for s in &r.cpu_share {
        let _ = writeln!(o, "  {:<32} {:>7.2}%", visible(&s.name), s.share * 100.0);
    }
    o
}

/// `klogger billing --format json`.
#[derive(Clone, Debug, Serialize)]
pub struct BillingReport {
    /// "klogger".
    pub tool: String,
    /// The log file.
    pub file: String,
    /// Recorded kernel's CONFIG_HZ (the rate of the `observed` billing).
    pub kernel_hz: Option<u32>,
    /// Sampler rates.
    pub hz: Vec<u32>,
    /// Sampler phase (ns).
    pub phase_ns: u64,
    /// Recording window (ns).
    pub duration_ns: u64,
    /// How tasks are grouped.
    pub group: Group,
    /// Rows, largest CPU time first.
    pub tasks: Vec<BillingRow>,
}

/// Builds the billing report (`only` filters tasks by name).
pub fn billing(
    trace: &Trace,
    file: &str,
    hzs: &[u32],
    phase: u64,
    group: Group,
    only: &[String],
) -> BillingReport {
    BillingReport {
        tool: "klogger".into(),
        file: file.into(),
        kernel_hz: trace.header.hz,
        hz: hzs.to_vec(),
        phase_ns: phase,
        duration_ns: trace.duration(),
        group,
        tasks: billing_table(&trace.timeline, hzs, phase, group)
            .into_iter()
            .filter(|r| matches(&r.name, only))
            .collect(),
    }
}

/// The billing report as a text table (Etsion table 3 layout: ratio and missed quanta per HZ).
pub fn billing_text(b: &BillingReport, rows: usize, min_quanta: u64) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}: tick-sampled billing replayed on {} of trace (phase {}); billing ratio = billed / used, \
         missed = quanta with no tick inside",
        visible(&b.file),
        fmt_ns(b.duration_ns),
        fmt_ns(b.phase_ns)
    );
    let mut head = format!("{:<28} {:>10} {:>8}", "task (pid)", "cpu", "quanta");
    for h in &b.hz {
        head += &format!(" {:>9} {:>8}", format!("ratio@{h}"), format!("miss@{h}"));
    }
    let obs = b.tasks.iter().any(|t| t.observed.is_some());
    if obs {
        let k = b.kernel_hz.unwrap_or(0);
        head += &format!(" {:>11} {:>10}", format!("kernel@{k}"), "kmiss");
    }
    let _ = writeln!(o, "{head}");
    let pct = |x: Option<f64>| x.map(|v| format!("{:.2}%", v * 100.0)).unwrap_or_else(|| "-".into());
    let ratio = |x: Option<f64>| x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into());
    let mut shown = 0;
    for t in &b.tasks {
        if t.quanta < min_quanta {
            continue;
        }
        if shown == rows {
            let _ = writeln!(o, "... more tasks (--rows)");
            break;
        }
        shown += 1;
        let mut line = format!("{:<28} {:>10} {:>8}", label(&t.name, t.pid), fmt_ns(t.cpu_ns), t.quanta);
        for bi in &t.billing {
            line += &format!(" {:>9} {:>8}", ratio(bi.billing_ratio), pct(bi.unbilled_share));
        }
        if let Some(ob) = &t.observed {
            line += &format!(" {:>11} {:>10}", ratio(ob.billing_ratio), pct(ob.unbilled_share));
        }
        let _ = writeln!(o, "{line}");
    }
    o
}
