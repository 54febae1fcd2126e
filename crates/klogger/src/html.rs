//! HTML report with inline SVG plots (plotters): the cumulative distribution of effective quanta
//! per task (Etsion fig. 6) and, per sampler HZ, effective quantum vs billed time (fig. 4), next
//! to the text tables of `report` and `billing`.

use anyhow::{anyhow, Result};
use plotters::prelude::*;

use crate::analysis::{Group, Trace};
use crate::report;
use trace::billing::ticks_in;

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Complete quanta lengths (ns) of the `n` tasks with most CPU time (idle excluded).
fn top_tasks(trace: &Trace, group: Group, n: usize, only: &[String]) -> Vec<(u32, String, Vec<u64>)> {
    let stats = trace.timeline.task_stats(group);
    stats
        .into_iter()
        .filter(|s| s.key != 0 && s.quanta > 0 && report::matches(&s.name, only))
        .take(n)
        .map(|s| {
            let mut all: Vec<u64> = s.preempted.iter().chain(&s.blocked).copied().collect();
            all.sort_unstable();
            (s.key, format!("{} ({})", s.name, s.key), all)
        })
        .collect()
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("drawing SVG: {e}")
}

/// SVG of the effective-quantum CDFs (log x axis, µs).
pub fn quantum_cdf_svg(trace: &Trace, group: Group, n: usize, only: &[String]) -> Result<String> {
    let tasks = top_tasks(trace, group, n, only);
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (760, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let max_us =
            tasks.iter().filter_map(|t| t.2.last()).max().map(|&m| m as f64 / 1e3).unwrap_or(1e3).max(10.0);
        let mut ch = ChartBuilder::on(&root)
            .caption("Effective quantum CDF (cf. Etsion fig. 6)", ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d((0.1f64..max_us * 1.5).log_scale(), 0f64..1f64)
            .map_err(err)?;
        ch.configure_mesh()
            .x_desc("effective quantum (us)")
            .y_desc("fraction of quanta")
            .draw()
            .map_err(err)?;
        for (i, (_, name, q)) in tasks.iter().enumerate() {
            let c = COLORS[i % COLORS.len()];
            let n = q.len() as f64;
            let step = (q.len() / 2000).max(1);
            let pts: Vec<(f64, f64)> = q
                .iter()
                .enumerate()
                .filter(|(k, _)| k % step == 0 || *k + 1 == q.len())
                .map(|(k, &v)| ((v as f64 / 1e3).max(0.1), (k + 1) as f64 / n))
                .collect();
            ch.draw_series(LineSeries::new(pts, c.stroke_width(2)))
                .map_err(err)?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c));
        }
        ch.configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(s)
}

/// SVG of effective quantum vs billed time at `hz` (ms, both axes) for the top tasks.
pub fn billing_scatter_svg(
    trace: &Trace,
    group: Group,
    n: usize,
    hz: u32,
    only: &[String],
) -> Result<String> {
    let period = 1_000_000_000 / hz as u64;
    let keys: Vec<(u32, String)> =
        top_tasks(trace, group, n, only).into_iter().map(|(k, name, _)| (k, name)).collect();
    let mut pts: Vec<Vec<(f64, f64)>> = vec![Vec::new(); keys.len()];
    for q in trace.timeline.runs.iter().filter(|q| q.complete) {
        let k = trace.timeline.key(q.task, group);
        if let Some(i) = keys.iter().position(|x| x.0 == k) {
            let billed = ticks_in(q.start, q.end, period, 0) * period;
            pts[i].push((q.len() as f64 / 1e6, billed as f64 / 1e6));
        }
    }
    let max_x = pts.iter().flatten().map(|p| p.0).fold(period as f64 / 1e6 * 2.0, f64::max);
    let max_y = pts.iter().flatten().map(|p| p.1).fold(period as f64 / 1e6 * 2.0, f64::max);
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (760, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut ch = ChartBuilder::on(&root)
            .caption(
                format!("Effective quantum vs billed time at {hz} Hz (cf. Etsion fig. 4)"),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..max_x * 1.05, 0f64..max_y * 1.05)
            .map_err(err)?;
        ch.configure_mesh().x_desc("effective quantum (ms)").y_desc("billed (ms)").draw().map_err(err)?;
        let diag = max_x.min(max_y);
        ch.draw_series(LineSeries::new(vec![(0.0, 0.0), (diag, diag)], BLACK.mix(0.3))).map_err(err)?;
        for (i, (_, name)) in keys.iter().enumerate() {
            let c = COLORS[i % COLORS.len()];
            let step = (pts[i].len() / 3000).max(1);
            ch.draw_series(pts[i].iter().step_by(step).map(|&p| Circle::new(p, 2, c.mix(0.5).filled())))
                .map_err(err)?
                .label(name.clone())
                .legend(move |(x, y)| Circle::new((x + 8, y), 4, c.filled()));
        }
        ch.configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(s)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The whole HTML page (`only` filters the tasks shown by name).
pub fn html_report(
    trace: &Trace,
    file: &str,
    hzs: &[u32],
    group: Group,
    n: usize,
    only: &[String],
) -> Result<String> {
    let r = report::report(trace, file, group, 20, only);
    let b = report::billing(trace, file, hzs, 0, group, only);
    let mut page = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>klogger: {f}</title>\
         <style>body{{font-family:sans-serif;max-width:1100px;margin:auto}}pre{{font-size:12px;overflow-x:auto}}</style>\
         </head><body><h1>klogger report: {f}</h1>\
         <h2>Tasks</h2><pre>{t}</pre><h2>Billing (Etsion table 3)</h2><pre>{bt}</pre>\
         <h2>Effective quanta (Etsion fig. 6)</h2>{cdf}",
        f = escape(file),
        t = escape(&report::report_text(&r, 30)),
        bt = escape(&report::billing_text(&b, 30, 0)),
        cdf = quantum_cdf_svg(trace, group, n, only)?,
    );
    page += "<h2>Billing scatter (Etsion fig. 4)</h2>";
    for &hz in hzs {
        page += &billing_scatter_svg(trace, group, n, hz, only)?;
    }
    page += "</body></html>\n";
    Ok(page)
}
