//! `smartsim reproduce`: the dissertation's experiments, each with the paper's numbers beside ours,
//! its statements checked (a verdict), its figures, in the terminal (or JSON) and an HTML report
//! whose first screen is the table of verdicts.

use std::cell::RefCell;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use report::export::ImageFormat;
use report::{BarChart, Figure, HtmlReport, Series, Table};
use smartsim::papers::{self, Fig, Metric, Plot, Run};
use smartsim::studies::{self, Distribution, Estimate, Judged, StudyRun, Verdict};

use super::{cpu_figure, glossary_table, Format};

fn figure(fig: &Fig, run: &Run) -> (String, Figure) {
    let names: Vec<String> = run.scenario.tasks.iter().map(|t| t.name.clone()).collect();
    let (id, title) = (fig.id, fig.title);
    match fig.plot {
        Plot::Cpu => (id.to_string(), cpu_figure(title, &run.result, &names, &run.ideal)),
        Plot::Met => {
            let mut f = Figure::new(title, "wall time (s)", "deadlines met");
            for (i, n) in names.iter().enumerate() {
                let workload::Model::Periodic(_) = &run.scenario.tasks[i].model else { continue };
                f.measured.push(Series::new(n.clone(), run.result.timeline.met_series(i)));
                // Ideal: the task's fluid CPU spent on whole requests of the run's draws.
                f.ideal.push(Series::new(n.clone(), run.ideal.met[i].clone()));
            }
            (id.to_string(), f)
        }
    }
}

fn fmt_num(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x.is_nan() => "n/a".into(),
        Some(x) if x.fract() == 0.0 && x.abs() < 1e9 => format!("{x:.0}"),
        Some(x) if x.abs() < 10.0 => format!("{x:.2}"),
        Some(x) => format!("{x:.1}"),
    }
}

fn metric_table(ms: &[Metric]) -> Table {
    let mut t = Table::new(&["metric", "paper", "ideal", "ideal of our draws", "ours"]);
    for m in ms {
        let ours = match m.ours_half {
            Some(h) if m.seeds > 1 => format!("{} ±{}", fmt_num(Some(m.ours)), fmt_num(Some(h))),
            _ => fmt_num(Some(m.ours)),
        };
        t.row(vec![m.name.clone(), fmt_num(m.paper), fmt_num(m.ideal), fmt_num(m.drawn), ours]);
    }
    t
}

/// A Gantt chart of the first [`report::DEFAULT_WINDOW_NS`] of `scn` under its own policy (the run
/// simulated again up to the window's end: the same scenario and seed make the same schedule).
fn first_window_gantt(scn: &workload::Scenario, scenario_path: &str) -> Result<report::Gantt> {
    let to = scn.machine.duration.clamp(1, report::DEFAULT_WINDOW_NS);
    let chart: RefCell<Option<report::Gantt>> = RefCell::default();
    let mut sim = smartsim::simulator(scn, None)?;
    let mut g = report::Gantt::new(&sim.trace_header(scenario_path), 0, to);
    g.set_title(&format!("{} under {}", scn.name, sim.core().name()));
    *chart.borrow_mut() = Some(g);
    let c = &chart;
    sim.trace_to(move |rec| {
        if let Some(g) = c.borrow_mut().as_mut() {
            g.add(&rec);
        }
    });
    // A nanosecond past the window, so that what happens at its right edge (a release, say) is in.
    sim.run_until(to.saturating_add(1));
    smartsim::whole(sim.finish())?;
    Ok(chart.into_inner().expect("set above"))
}

/// A verdict's row in the table that opens the report.
struct VerdictRow {
    id: String,
    source: String,
    verdict: Verdict,
    held: usize,
    of: usize,
    why: String,
}

impl VerdictRow {
    /// The row of experiment `id` (at `source`) whose statements came out `judged`.
    fn of(id: &str, source: &str, judged: &[Judged]) -> VerdictRow {
        VerdictRow {
            id: id.to_string(),
            source: source.to_string(),
            verdict: Verdict::of(judged),
            held: judged.iter().filter(|j| **j == Judged::Holds).count(),
            of: judged.len(),
            why: reasons(judged),
        }
    }
}

fn verdict_table(rows: &[VerdictRow]) -> Table {
    let mut t = Table::new(&["experiment", "where", "verdict", "statements that hold", "those that do not"]);
    for r in rows {
        t.row(vec![
            r.id.clone(),
            r.source.clone(),
            r.verdict.word().to_string(),
            format!("{} of {}", r.held, r.of),
            r.why.clone(),
        ]);
    }
    t
}

/// The statements of an experiment as a table: what the paper says, how it came out, why not.
fn statements_table<'a>(items: impl Iterator<Item = (&'a str, Judged, &'a str)>) -> Table {
    let mut t = Table::new(&["#", "the paper says", "ours", "why ours differs"]);
    for (k, (text, j, why)) in items.enumerate() {
        t.row(vec![
            (k + 1).to_string(),
            text.to_string(),
            j.word().to_string(),
            if j == Judged::Holds { String::new() } else { why.to_string() },
        ]);
    }
    t
}

/// The statements that do not hold, by number, for the table of verdicts.
fn reasons(judged: &[Judged]) -> String {
    let v: Vec<String> = judged
        .iter()
        .enumerate()
        .filter(|(_, j)| **j != Judged::Holds)
        .map(|(k, _)| (k + 1).to_string())
        .collect();
    if v.is_empty() {
        String::new()
    } else {
        format!(
            "statement{} {} (the reasons are in its section)",
            if v.len() > 1 { "s" } else { "" },
            v.join(", ")
        )
    }
}

fn writer<'a>(out: &'a Path, also: &[ImageFormat]) -> impl Fn(&str, &str) -> Result<Vec<PathBuf>> + 'a {
    let also = also.to_vec();
    move |id: &str, svg: &str| {
        let mut files = Vec::new();
        for &fmt in std::iter::once(&ImageFormat::Svg).chain(&also) {
            let path = out.join(format!("{id}.{}", fmt.extension()));
            report::export::write_as(svg, &path, fmt)?;
            files.push(path);
        }
        Ok(files)
    }
}

fn figures_line(files: &[PathBuf]) -> String {
    if files.is_empty() {
        return String::new();
    }
    format!("figures: {}\n", files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))
}

/// Runs the experiments and studies `name` selects, writes each figure as SVG and in the formats
/// `also` (next to it, same name), and the HTML report `out/index.html`; studies run `seeds` seeds.
pub(crate) fn reproduce(
    name: &str,
    out: &Path,
    format: Format,
    also: &[ImageFormat],
    seeds: usize,
) -> Result<()> {
    let exps = papers::select(name);
    let sts = studies::select(name);
    if exps.is_empty() && sts.is_empty() {
        bail!("no experiment `{name}` (see `smartsim reproduce --list`)");
    }
    if !(1..=studies::MAX_SEEDS).contains(&seeds) {
        bail!("--seeds {seeds}: give 1 to {}", studies::MAX_SEEDS);
    }
    if !also.is_empty() {
        report::export::check_fonts()?;
    }
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let runs: usize = sts.iter().map(|s| s.variants.len() * seeds).sum::<usize>();
    let seeds_word = if seeds == 1 { "1 seed".to_string() } else { format!("{seeds} seeds") };
    let bar = crate::progress::counter((exps.len() + runs) as u64, "runs");
    let mut html = HtmlReport::new("SMART (Nieh 1999) and the clock's papers reproduced by smartsim");
    html.intro(&format!(
        "The experiments of chapters 2 and 6 of {}, and the timing experiments of Etsion, Tsafrir and \
         Feitelson (2003, §§3-5, 7), Regehr's Hourglass (2002, §§5.5-5.6) and Dannenberg et al. (1993, \
         §§5-6), run in the simulator with the scenarios of \
         scenarios/papers/ (the applications of §6.4 are scenarios/apps/). The first section is the \
         table of verdicts: an experiment is reproduced when every statement the paper makes of it \
         holds in ours, differs when some do not (the reason is given) and at least half do, not \
         reproduced otherwise. Each experiment then gives the paper's statements and how they came \
         out, the paper's numbers beside ours, and each figure with the paper's caption and what to \
         see in ours.\n\n\
         Every experiment runs every scenario under {seeds_word} (every random draw changes: execution \
         times, frame times, arrivals, typing); its numbers are the mean with its 95 % confidence \
         interval (Student's t). An ordering the paper states holds only when the intervals do not \
         overlap (within noise when only the means are ordered); a statement of §6.2's, checked on each \
         run, holds when it holds under every seed (within noise under at least half); §6.2's figures \
         are the run of seed 1.",
        papers::DISSERTATION
    ));
    let write = writer(out, also);
    let mut verdicts = Vec::new();
    let mut text = String::new();
    for e in &exps {
        bar.set_label(e.id);
        let t0 = Instant::now();
        let papers::Seeded { first: run, metrics, judged } = papers::run_seeds(e, seeds)?;
        let wall = t0.elapsed();
        let verdict = Verdict::of(&judged);
        let statements = statements_table(e.checks.iter().zip(&judged).map(|(c, j)| (c.text, *j, c.reason)));
        verdicts.push(VerdictRow::of(e.id, e.source, &judged));
        let mut figs = Vec::new();
        let mut files = Vec::new();
        for fig in e.figures {
            let (id, f) = figure(fig, &run);
            files.extend(write(&id, &f.to_svg())?);
            figs.push(f);
        }
        let table = metric_table(&metrics);
        match format {
            Format::Json => {
                let checks: Vec<_> = e
                    .checks
                    .iter()
                    .zip(&judged)
                    .map(|(c, j)| serde_json::json!({ "text": c.text, "judged": j, "reason": c.reason }))
                    .collect();
                let v = serde_json::json!({ "id": e.id, "source": e.source, "scenario": format!("scenarios/papers/{}", e.file),
                    "verdict": verdict, "checks": checks,
                    "metrics": metrics, "figures": files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>() });
                bar.suspend(|| diag::outln!("{}", serde_json::to_string(&v).expect("serializes")));
            }
            Format::Table => {
                let block = format!(
                    "== {}  ({})  scenarios/papers/{} x {}  [{:.2} s]\nverdict: {}\n{}\n{}{}\n",
                    e.id,
                    e.source,
                    e.file,
                    seeds_word,
                    wall.as_secs_f64(),
                    verdict.word(),
                    statements.render(),
                    table.render(),
                    figures_line(&files)
                );
                bar.suspend(|| diag::out!("{block}"));
                text.push_str(&block);
            }
        }
        let desc = run.scenario.description.clone().unwrap_or_default();
        let drawings: Vec<(String, String)> = e
            .figures
            .iter()
            .zip(&figs)
            .map(|(f, fig)| {
                let n = f.id.trim_start_matches("fig");
                (
                    fig.to_svg(),
                    format!("Figure {n} of the dissertation: {}\n\nWhat to see: {}", f.caption, f.see),
                )
            })
            .collect();
        let drawings: Vec<(String, &str)> = drawings.iter().map(|(s, c)| (s.clone(), c.as_str())).collect();
        html.section_drawings(
            &format!("{} — {}: {}", e.source, e.id, verdict.word()),
            &format!("{desc}\n\nVerdict: {}.", verdict.word()),
            &[&statements, &table],
            &drawings,
        );
        let chart = first_window_gantt(&run.scenario, &format!("scenarios/papers/{}", e.file))?;
        html.section_svg(
            &format!("{} — the schedule's first {}", e.source, report::format_time_exact(chart.window().1)),
            "A row per task: what ran when (bars), releases (up-arrows) and deadlines (down-arrows) of \
             periodic requests, missed deadlines crossed out in red (the same run, simulated again up to \
             the window's end).",
            &chart.to_svg(),
        );
        bar.inc();
    }
    for s in &sts {
        bar.set_label(s.id);
        let t0 = Instant::now();
        let progress = || bar.inc();
        let run = studies::run(s, seeds, &progress)?;
        let wall = t0.elapsed();
        let judged = run.judge();
        let verdict = Verdict::of(&judged);
        let statements = statements_table(s.claims.iter().zip(&judged).map(|(c, j)| (c.text, *j, c.reason)));
        verdicts.push(VerdictRow::of(s.id, s.source, &judged));
        let tables: Vec<(&str, Table)> =
            s.tables.iter().map(|(title, vs)| (*title, study_table(&run, vs))).collect();
        let mut drawings = Vec::new();
        let mut files = Vec::new();
        for f in s.figures {
            let svg = study_figure(&run, f);
            files.extend(write(f.id, &svg)?);
            let n = f.id.trim_start_matches("fig");
            // A figure of our own says so in its caption.
            let caption = if f.caption.starts_with("Not a figure") {
                f.caption.to_string()
            } else {
                format!("Figure {n} of the dissertation: {}", f.caption)
            };
            drawings.push((svg, format!("{caption}\n\nWhat to see: {}", f.see)));
        }
        match format {
            Format::Json => {
                let v = study_json(&run, &judged, verdict, &files);
                bar.suspend(|| diag::outln!("{}", serde_json::to_string(&v).expect("serializes")));
            }
            Format::Table => {
                let searched = run.tuned.as_ref().map_or(String::new(), |t| format!("search: {t}\n"));
                let mut block = format!(
                    "== {}  ({})  {} scenarios x {}  [{:.2} s]\n{searched}verdict: {}\n{}\n",
                    s.id,
                    s.source,
                    s.variants.len(),
                    seeds_word,
                    wall.as_secs_f64(),
                    verdict.word(),
                    statements.render()
                );
                for (title, t) in &tables {
                    block.push_str(&format!("{title} (mean ± 95 % interval over {seeds_word}; the paper's number in parentheses)\n{}\n", t.render()));
                }
                block.push_str(&figures_line(&files));
                block.push('\n');
                bar.suspend(|| diag::out!("{block}"));
                text.push_str(&block);
            }
        }
        let drawings: Vec<(String, &str)> =
            drawings.iter().map(|(svg, c)| (svg.clone(), c.as_str())).collect();
        let mut refs: Vec<&Table> = vec![&statements];
        refs.extend(tables.iter().map(|(_, t)| t));
        let titles: Vec<String> = tables.iter().map(|(t, _)| format!("• {t}")).collect();
        html.section_drawings(
            &format!("{} — {}: {}", s.source, s.id, verdict.word()),
            &format!(
                "{}{}\n\nVerdict: {}.\n\nThe tables: the paper's statements and how they came out; then {} \
                 (each number the mean over {seeds_word} ± its 95 % interval, the paper's number in \
                 parentheses where it printed one; a dash where the scenario has no such task). Frames: \
                 on time within 20 ms of the wanted time, early or late beyond it, dropped by the player; \
                 a character's latency runs from its arrival to its display by the X server.",
                s.about,
                run.tuned.as_ref().map_or(String::new(), |t| format!("\n\nSearch: {t}.")),
                verdict.word(),
                titles.join(", ")
            ),
            &refs,
            &drawings,
        );
    }
    drop(bar);
    if format == Format::Table && verdicts.len() > 1 {
        diag::out!("== verdicts\n{}\n", verdict_table(&verdicts).render());
    }
    html.section(
        "Verdicts",
        "Each experiment of this page, with its verdict and the reason it differs where it does.",
        Some(&verdict_table(&verdicts)),
        &[],
    );
    html.lead_with_last();
    html.section(
        "Glossary",
        "The terms of this page and of every smartsim output (docs/glossary.md): a deadline missed is a \
         request late, discarded or aborted.",
        Some(&glossary_table()),
        &[],
    );
    let index = out.join("index.html");
    html.write(&index).with_context(|| format!("writing {}", index.display()))?;
    if format == Format::Table {
        diag::outln!("report: {}", index.display());
    }
    Ok(())
}

/// A number over seeds as a cell: mean ± interval, the paper's in parentheses.
fn cell(e: Estimate, paper: Option<f64>) -> String {
    if e.mean.is_nan() {
        return "-".into();
    }
    let digits = if e.mean.abs() >= 100.0 { 0 } else { 1 };
    let mut s = format!("{:.*} ±{:.*}", digits, e.mean, digits, e.half);
    if let Some(p) = paper {
        s.push_str(&format!(" ({})", fmt_num(Some(p))));
    }
    s
}

/// The study's numbers for variants `labels`: a row per quantity (those the variants have), a
/// column per variant.
fn study_table(run: &StudyRun, labels: &[&str]) -> Table {
    let mut heads = vec!["quantity"];
    heads.extend(labels);
    let mut t = Table::new(&heads);
    for q in run.study.quantities {
        let es: Vec<Estimate> = labels.iter().map(|l| run.estimate(l, q.key)).collect();
        if es.iter().all(|e| e.mean.is_nan()) {
            continue;
        }
        let mut row = vec![q.name.to_string()];
        row.extend(labels.iter().zip(&es).map(|(l, e)| cell(*e, run.study.paper_value(l, q.key))));
        t.row(row);
    }
    t
}

fn study_json(run: &StudyRun, judged: &[Judged], verdict: Verdict, files: &[PathBuf]) -> serde_json::Value {
    let s = run.study;
    let claims: Vec<_> = s
        .claims
        .iter()
        .zip(judged)
        .map(|(c, j)| serde_json::json!({ "text": c.text, "judged": j, "reason": c.reason }))
        .collect();
    let variants: Vec<_> = s
        .variants
        .iter()
        .map(|v| {
            let mut qs = serde_json::Map::new();
            for q in s.quantities {
                let e = run.estimate(v.label, q.key);
                if e.mean.is_nan() {
                    continue;
                }
                qs.insert(
                    q.key.to_string(),
                    serde_json::json!({ "name": q.name, "mean": e.mean, "half": e.half, "n": e.n,
                        "values": run.values(v.label, q.key), "paper": s.paper_value(v.label, q.key) }),
                );
            }
            serde_json::json!({ "label": v.label, "scenario": format!("scenarios/papers/{}", v.file), "quantities": qs })
        })
        .collect();
    serde_json::json!({ "id": s.id, "source": s.source, "seeds": run.seeds, "search": run.tuned, "verdict": verdict, "claims": claims,
        "variants": variants, "figures": files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>() })
}

/// Frame errors below and above these, ms, are left out of the distributions' plots (a few
/// seconds-late frames of UNIX TS would squeeze the rest into a line).
const ERROR_PLOT_MS: (f64, f64) = (-200.0, 400.0);

/// A study's figure, as SVG.
fn study_figure(run: &StudyRun, f: &studies::Figure) -> String {
    let s = run.study;
    match &f.plot {
        studies::Plot::Bars(b) => {
            let mut c = BarChart {
                title: f.title.into(),
                y_label: b.y_label.into(),
                groups: b.variants.iter().map(|v| v.to_string()).collect(),
                series: b.bars.iter().map(|(_, n)| n.to_string()).collect(),
                ..Default::default()
            };
            for v in b.variants {
                let es: Vec<Estimate> = b.bars.iter().map(|(k, _)| run.estimate(v, k)).collect();
                c.values.push(es.iter().map(|e| e.mean).collect());
                c.errors.push(es.iter().map(|e| e.half).collect());
                c.marks.push(b.bars.iter().map(|(k, _)| s.paper_value(v, k)).collect());
            }
            c.to_svg()
        }
        studies::Plot::Grid { key, groups, series, y_label } => {
            let mut c = BarChart {
                title: f.title.into(),
                y_label: y_label.to_string(),
                groups: groups.iter().map(|g| g.0.to_string()).collect(),
                series: series.iter().map(|x| x.to_string()).collect(),
                ..Default::default()
            };
            for (_, g) in *groups {
                let labels: Vec<String> = series.iter().map(|x| format!("{g} {x}")).collect();
                let es: Vec<Estimate> = labels.iter().map(|l| run.estimate(l, key)).collect();
                c.values.push(es.iter().map(|e| e.mean).collect());
                c.errors.push(es.iter().map(|e| e.half).collect());
                c.marks.push(labels.iter().map(|l| s.paper_value(l, key)).collect());
            }
            c.to_svg()
        }
        studies::Plot::Cdf { of, variants, x_label } => {
            let mut fig = Figure::new(f.title, x_label, "fraction at or below");
            for v in *variants {
                let rs = &run.results[s.variant(v)];
                let mut xs: Vec<f64> = match of {
                    Distribution::FrameErrors(task) => rs
                        .iter()
                        .filter_map(|r| r.task(task).and_then(|t| t.frames.as_ref()))
                        .flat_map(|fr| fr.errors.iter().map(|&e| e as f64 / 1e6))
                        .collect(),
                    Distribution::Latencies(task) => rs
                        .iter()
                        .filter_map(|r| r.task(task).and_then(|t| t.bands.as_ref()))
                        .flat_map(|b| b.latencies.iter().map(|&l| l as f64 / 1e6))
                        .collect(),
                };
                xs.sort_by(f64::total_cmp);
                let n = xs.len() as f64;
                let keep = |x: f64| match of {
                    Distribution::FrameErrors(_) => (ERROR_PLOT_MS.0..=ERROR_PLOT_MS.1).contains(&x),
                    Distribution::Latencies(_) => x > 0.0,
                };
                let pts = xs
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| keep(**x))
                    .map(|(i, x)| (*x, (i + 1) as f64 / n))
                    .collect();
                fig.measured.push(Series::new(v.to_string(), pts));
            }
            fig.log_x = matches!(of, Distribution::Latencies(_));
            fig.to_svg()
        }
        studies::Plot::Against { key, series, x_label, y_label } => {
            let mut fig = Figure::new(f.title, x_label, y_label);
            for (legend, prefix) in *series {
                let mut pts: Vec<(f64, f64)> = s
                    .variants
                    .iter()
                    .filter_map(|v| {
                        let x = studies::number_after(v.label, prefix)?;
                        Some((x, run.estimate(v.label, key).mean))
                    })
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                fig.measured.push(Series::new(legend.to_string(), pts));
            }
            fig.to_svg()
        }
        studies::Plot::Quanta { billed, series } => {
            let mut fig = if *billed {
                Figure::new(f.title, "effective quantum (ms)", "billed (ms)")
            } else {
                Figure::new(f.title, "effective quantum (ms)", "fraction at or below")
            };
            for (legend, v, task) in *series {
                let mut q = quanta_of(run, v, task);
                if *billed {
                    fig.scatter.push(Series::new(legend.to_string(), q));
                } else {
                    q.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let n = q.len() as f64;
                    let pts = q.iter().enumerate().map(|(i, p)| (p.0, (i + 1) as f64 / n)).collect();
                    fig.measured.push(Series::new(legend.to_string(), pts));
                }
            }
            fig.log_x = !*billed;
            fig.to_svg()
        }
        studies::Plot::CumulativeCpu { task, variants } => {
            let mut fig = Figure::new(f.title, "wall time (s)", "cumulative execution time (s)");
            let mut end = 0.0f64;
            for v in *variants {
                let r = &run.results[s.variant(v)][0];
                let Some(i) = r.tasks.iter().position(|t| t.name == *task) else { continue };
                let pts: Vec<(f64, f64)> =
                    r.timeline.cpu_series(i).into_iter().map(|(t, c)| (t, c / 1e3)).collect();
                end = end.max(pts.last().map_or(0.0, |p| p.0));
                fig.measured.push(Series::new(v.to_string(), pts));
            }
            fig.ideal.push(Series::new("a third of the CPU", vec![(0.0, 0.0), (end, end / 3.0)]));
            fig.to_svg()
        }
    }
}

/// The effective quanta of `task` in variant `v`'s run under the first seed, from the run's trace: each
/// stretch on a CPU as (its length, what the ticks in it billed), ms.
fn quanta_of(run: &StudyRun, v: &str, task: &str) -> Vec<(f64, f64)> {
    let k = run.study.variant(v);
    let mut scn = run.scenarios[k].clone();
    scn.machine.seed = run.seeds.first().copied().unwrap_or(1);
    let Ok(mut sim) = smartsim::simulator(&scn, run.study.variants[k].policy) else { return Vec::new() };
    let header = sim.trace_header(run.study.variants[k].file);
    let records = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let sink = std::rc::Rc::clone(&records);
    sim.trace_to(move |r| sink.borrow_mut().push(r));
    sim.run_until(u64::MAX);
    if let Some(p) = sim.finish().partial {
        // No figure of part of a run (the study's own runs of this seed went to their end).
        tracing::warn!(
            "study {}: the run of {v} stopped {}: its quanta are left out",
            run.study.id,
            p.describe()
        );
        return Vec::new();
    }
    let records = std::mem::take(&mut *records.borrow_mut());
    let Ok(tl) = trace::timeline::Timeline::from_records(&header, records.into_iter().map(Ok::<_, ()>))
    else {
        return Vec::new();
    };
    let Some(id) = scn.tasks.iter().position(|t| t.name == task) else { return Vec::new() };
    let tick_ms = tl.hz.map_or(0.0, |hz| 1e3 / f64::from(hz));
    tl.runs
        .iter()
        .filter(|q| q.task == id as u32 && q.complete)
        .map(|q| ((q.end - q.start) as f64 / 1e6, f64::from(q.observed_ticks) * tick_ms))
        .collect()
}
