//! The tables and figures of a trace's analyses (crate `trace`), the same for every tool's HTML
//! report: the tasks (CPU, quanta, wake-up latency), tick billing (Etsion et al. 2003 table 3), the
//! cumulative distribution of effective quanta (their fig. 6) and effective quantum against billed
//! time (their fig. 4).

use std::collections::{HashMap, HashSet};

use trace::billing::{ticks_in, BillingRow};
use trace::summary::Percentiles;
use trace::timeline::{Group, TaskStats, Timeline};

use crate::escape::markup;
use crate::{format_time, Figure, HtmlReport, Series, Table};

/// One row of an [`execution_map`]: a task's label, the stretches it ran, and marks (e.g. missed
/// deadlines) on its row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MapRow {
    /// Shown at the row's left.
    pub label: String,
    /// Execution stretches (start, end), ns.
    pub blocks: Vec<(u64, u64)>,
    /// Instants drawn as red ticks, ns.
    pub marks: Vec<u64>,
}

/// An execution map (Regehr's Hourglass, figures 3 and 6) as SVG: one row per task, a grey block
/// per stretch inside `[from, from + span)`, red ticks at the marks, a time axis in ten steps. The
/// gaps between blocks are the time the task did not get.
pub fn execution_map(rows: &[MapRow], from: u64, span: u64, width: u32) -> String {
    let span = span.max(1);
    let (left, row, top) = (30.0, 34.0, 20.0);
    let width = width.max(200);
    let w = width as f64 - 2.0 * left;
    let h = top + row * rows.len() as f64 + 30.0;
    let x = |ns: u64| left + (ns.saturating_sub(from).min(span) as f64 / span as f64) * w;
    let mut o = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{h:.0}\" \
         viewBox=\"0 0 {width} {h:.0}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    for (k, r) in rows.iter().enumerate() {
        let y = top + row * k as f64;
        o.push_str(&format!(
            "<text x=\"{left}\" y=\"{:.1}\">{}</text>\n<line x1=\"{left}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ccc\"/>\n",
            y + 10.0,
            markup(&r.label),
            left + w,
            y + row - 4.0,
            y + row - 4.0
        ));
        for &(s, e) in r.blocks.iter().filter(|&&(s, e)| e >= from && s < from + span) {
            let (x0, x1) = (x(s), x(e));
            o.push_str(&format!(
                "<rect x=\"{x0:.2}\" y=\"{:.1}\" width=\"{:.2}\" height=\"14\" fill=\"#888\"/>\n",
                y + 14.0,
                (x1 - x0).max(0.3)
            ));
        }
        for &m in r.marks.iter().filter(|&&m| m >= from && m < from + span) {
            let xm = x(m);
            o.push_str(&format!(
                "<line x1=\"{xm:.2}\" x2=\"{xm:.2}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"red\" stroke-width=\"1.5\"/>\n",
                y + 11.0,
                y + 30.0
            ));
        }
    }
    let ya = top + row * rows.len() as f64 + 4.0;
    o.push_str(&format!(
        "<line x1=\"{left}\" x2=\"{:.1}\" y1=\"{ya:.1}\" y2=\"{ya:.1}\" stroke=\"black\"/>\n",
        left + w
    ));
    for k in 0..=10u64 {
        let t = from + span * k / 10;
        let xt = x(t);
        o.push_str(&format!(
            "<line x1=\"{xt:.1}\" x2=\"{xt:.1}\" y1=\"{ya:.1}\" y2=\"{:.1}\" stroke=\"black\"/>\n\
             <text x=\"{xt:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            ya + 4.0,
            ya + 16.0,
            format_time(t)
        ));
    }
    o.push_str("</svg>\n");
    o
}

/// The rows of an execution map of a trace: the tasks of `tasks`, each with its stretches (on any
/// CPU), times from the trace's start.
pub fn map_rows(tl: &Timeline, group: Group, tasks: &[TaskStats]) -> Vec<MapRow> {
    let mut rows: Vec<MapRow> = tasks
        .iter()
        .map(|s| MapRow { label: format!("{} ({})", s.name, s.key), ..Default::default() })
        .collect();
    let row_of = index_by_key(tasks);
    for q in &tl.runs {
        let k = tl.key(q.task, group);
        if let Some(&i) = row_of.get(&k) {
            rows[i].blocks.push((q.start.saturating_sub(tl.start), q.end.saturating_sub(tl.start)));
        }
    }
    rows
}

/// Each task's place in `tasks` by its key (the first, if a key occurs twice): a lookup per
/// stretch, not a scan of the tasks.
fn index_by_key(tasks: &[TaskStats]) -> HashMap<u32, usize> {
    let mut m = HashMap::with_capacity(tasks.len());
    for (i, s) in tasks.iter().enumerate() {
        m.entry(s.key).or_insert(i);
    }
    m
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// Whether `s` is a CPU's idle task (klogger's task 0, "idle"), left out of the figures.
fn is_idle(s: &TaskStats) -> bool {
    s.key == 0 && s.name == "idle"
}

/// The first `n` of `stats` (largest CPU time first) that had complete quanta, idle left out: the
/// tasks the figures draw.
pub fn top_tasks(stats: &[TaskStats], n: usize) -> Vec<TaskStats> {
    stats.iter().filter(|s| !is_idle(s) && s.quanta > 0).take(n).cloned().collect()
}

/// Per task: CPU time and share, quanta (per second; lengths by how they ended), wake-ups and their
/// latency. At most `rows` rows, largest CPU time first.
pub fn task_table(stats: &[TaskStats], rows: usize) -> Table {
    let mut t = Table::new(&[
        "task",
        "id",
        "cpu ms",
        "share %",
        "quanta",
        "quanta/s",
        "preempted p50 ms",
        "blocked p50 ms",
        "wake-ups",
        "wake→run p50 ms",
        "wake→run p99 ms",
    ]);
    for s in stats.iter().take(rows) {
        let (pre, blk, lat) = (
            Percentiles::of_values(&s.preempted),
            Percentiles::of_values(&s.blocked),
            Percentiles::of_values(&s.latencies),
        );
        t.row(vec![
            s.name.clone(),
            s.key.to_string(),
            ms(s.cpu_ns),
            format!("{:.2}", 100.0 * s.cpu_share),
            s.quanta.to_string(),
            format!("{:.1}", s.quanta_per_s),
            ms(pre.p50),
            ms(blk.p50),
            s.wakeups.to_string(),
            ms(lat.p50),
            ms(lat.p99),
        ]);
    }
    t
}

/// The billing table: per task and sampler rate, billed by whole ticks over used (ratio) and the
/// share of complete quanta no tick fell in; with the trace's own ticks, the billing the traced
/// system did ("traced").
pub fn billing_table(rows: &[BillingRow], hz: &[u32]) -> Table {
    let mut head = vec!["task".to_string(), "cpu ms".into(), "quanta".into()];
    for h in hz {
        head.push(format!("{h} Hz ratio"));
        head.push(format!("{h} Hz never billed %"));
    }
    let has_observed = rows.iter().any(|r| r.observed.is_some());
    if has_observed {
        head.push("traced ratio".into());
        head.push("traced never billed %".into());
    }
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut t = Table::new(&head);
    let ratio = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.3}"));
    let pct = |x: Option<f64>| x.map_or("-".into(), |v| format!("{:.1}", 100.0 * v));
    for r in rows {
        let mut row = vec![r.name.clone(), ms(r.cpu_ns), r.quanta.to_string()];
        for b in &r.billing {
            row.push(ratio(b.billing_ratio));
            row.push(pct(b.unbilled_share));
        }
        if has_observed {
            let o = r.observed.as_ref();
            row.push(ratio(o.and_then(|b| b.billing_ratio)));
            row.push(pct(o.and_then(|b| b.unbilled_share)));
        }
        t.row(row);
    }
    t
}

/// The cumulative distribution of the effective quanta of `tasks` (log x axis, µs; cf. Etsion fig. 6).
pub fn quantum_cdf(tasks: &[TaskStats]) -> Figure {
    let mut f = Figure::new(
        "Effective quantum CDF (cf. Etsion fig. 6)",
        "effective quantum (us)",
        "fraction of quanta",
    );
    f.log_x = true;
    for s in tasks {
        let mut all: Vec<u64> = s.preempted.iter().chain(&s.blocked).copied().collect();
        all.sort_unstable();
        let n = all.len() as f64;
        let pts =
            all.iter().enumerate().map(|(k, &v)| ((v as f64 / 1e3).max(0.1), (k + 1) as f64 / n)).collect();
        f.measured.push(Series::new(format!("{} ({})", s.name, s.key), pts));
    }
    f
}

/// Each complete quantum of `tasks` against the time a sampler at `hz` (phase 0) bills it (ms;
/// cf. Etsion fig. 4), with the line billed = used.
pub fn billing_scatter(tl: &Timeline, group: Group, tasks: &[TaskStats], hz: u32) -> Figure {
    let period = trace::tick_period_ns(hz);
    let mut f = Figure::new(
        &format!("Effective quantum vs billed time at {hz} Hz (cf. Etsion fig. 4)"),
        "effective quantum (ms)",
        "billed (ms)",
    );
    let mut pts: Vec<Vec<(f64, f64)>> = vec![Vec::new(); tasks.len()];
    let row_of = index_by_key(tasks);
    for q in tl.runs.iter().filter(|q| q.complete) {
        let k = tl.key(q.task, group);
        if let Some(&i) = row_of.get(&k) {
            let billed = ticks_in(q.start, q.end, period, 0) * period;
            pts[i].push((q.len() as f64 / 1e6, billed as f64 / 1e6));
        }
    }
    let top = pts.iter().flatten().map(|p| p.0.max(p.1)).fold(2.0 * period as f64 / 1e6, f64::max);
    for (s, p) in tasks.iter().zip(pts) {
        f.scatter.push(Series::new(format!("{} ({})", s.name, s.key), p));
    }
    f.ideal.push(Series::new("billed = used", vec![(0.0, 0.0), (top, top)]));
    f
}

/// The sections every trace's HTML report has: tasks, tick billing at each of `hz`, the quantum
/// CDFs and a billing scatter per rate, for the `n` largest tasks `keep` keeps.
pub fn trace_sections(
    page: &mut HtmlReport,
    tl: &Timeline,
    group: Group,
    hz: &[u32],
    n: usize,
    keep: impl Fn(&TaskStats) -> bool,
) {
    let stats: Vec<TaskStats> = tl.task_stats(group).into_iter().filter(|s| keep(s)).collect();
    page.section(
        "Tasks",
        "CPU time and share of the recording's capacity; complete quanta (stretches on a CPU the \
         recording did not cut) with the median length of those that ended preempted and blocked; \
         wake-ups and their wake-up latency (wake→run: from a wake-up to the start of the next stretch; \
         docs/glossary.md).",
        Some(&task_table(&stats, 40)),
        &[],
    );
    let kept: HashSet<u32> = stats.iter().map(|s| s.key).collect();
    let rows: Vec<BillingRow> = trace::billing::billing_table(tl, hz, 0, group)
        .into_iter()
        .filter(|r| kept.contains(&r.pid))
        .collect();
    page.section(
        "Tick billing (cf. Etsion table 3)",
        "Each quantum replayed against a tick sampler (ticks at multiples of the period): billing ratio = \
         time billed by whole ticks over time used; never billed = share of complete quanta no tick fell in.",
        Some(&billing_table(&rows, hz)),
        &[],
    );
    let top = top_tasks(&stats, n);
    let cdf = quantum_cdf(&top);
    page.section("Effective quanta (cf. Etsion fig. 6)", "", None, &[&cdf]);
    let scatters: Vec<Figure> = hz.iter().map(|&h| billing_scatter(tl, group, &top, h)).collect();
    let refs: Vec<&Figure> = scatters.iter().collect();
    page.section("Billing scatter (cf. Etsion fig. 4)", "", None, &refs);
    let span = tl.duration().min(100_000_000);
    page.section_svg(
        "Execution map (cf. Regehr's Hourglass, fig. 3)",
        &format!("The first {} of the trace: a grey block per stretch on a CPU; gaps are time the task did not get.", format_time(span)),
        &execution_map(&map_rows(tl, group, &top), 0, span, 960),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::{EndReason, Header, Record, Source};

    #[test]
    fn a_small_trace_gives_its_tables_and_figures() {
        const MS: u64 = 1_000_000;
        let h = Header::new(Source::Hourglass { kernel: "k".into() }, 1, "CLOCK_MONOTONIC", 0, Some(100));
        let mut recs = vec![
            Record::Task { task: 0, process: 0, name: "a".into() },
            Record::Task { task: 1, process: 1, name: "b".into() },
        ];
        for k in 0..10u64 {
            let why = if k % 2 == 0 { EndReason::Preempted } else { EndReason::Blocked };
            recs.push(Record::Run {
                task: (k % 2) as u32,
                cpu: 0,
                start: k * 3 * MS,
                end: (k + 1) * 3 * MS,
                why,
                complete: true,
            });
        }
        let tl = Timeline::from_records::<()>(&h, recs.into_iter().map(Ok)).unwrap();
        let top = top_tasks(&tl.task_stats(Group::Thread), 8);
        assert_eq!(top.len(), 2, "the simulator's task 0 is no idle task");
        let cdf = quantum_cdf(&top);
        assert!(cdf.log_x);
        assert_eq!(cdf.measured.len(), 2);
        assert_eq!(cdf.measured[0].points.last().unwrap().1, 1.0);
        let sc = billing_scatter(&tl, Group::Thread, &top, 100);
        assert_eq!(sc.scatter.iter().map(|s| s.points.len()).sum::<usize>(), 10);
        // A 3 ms quantum holds one 10 ms tick or none.
        assert!(sc.scatter.iter().flat_map(|s| &s.points).all(|p| p.1 == 0.0 || p.1 == 10.0));
        let mut page = HtmlReport::new("t");
        trace_sections(&mut page, &tl, Group::Thread, &[100, 1000], 8, |_| true);
        let html = page.render();
        assert_eq!(html.matches("<svg").count(), 4);
        // A stretch before the recording's start (a file made by hand, or damaged) draws from 0.
        let h = Header::new(Source::Hourglass { kernel: "k".into() }, 1, "CLOCK_MONOTONIC", 100, None);
        let early = vec![Record::Run {
            task: 0,
            cpu: 0,
            start: 0,
            end: 150,
            why: EndReason::Blocked,
            complete: true,
        }];
        let tl = Timeline::from_records::<()>(&h, early.into_iter().map(Ok)).unwrap();
        assert_eq!(map_rows(&tl, Group::Thread, &tl.task_stats(Group::Thread))[0].blocks, vec![(0, 50)]);
        // The execution map: a block per stretch of the two tasks inside its 30 ms.
        assert_eq!(html.matches("fill=\"#888\"").count(), 10);
        assert!(html.contains("1000 Hz never billed %"));
    }
}
