//! Writes a sample of every artefact the `report` crate makes into a directory:
//! `demo.svg` (a figure like the SMART dissertation's fig. 6-1), `demo.html` (a report page
//! holding a table and that figure) and `demo.trace.json` (open it in <https://ui.perfetto.dev>).
//!
//! The data are synthetic (three CPU-bound tasks sharing a CPU 3:2:1 with some noise), made up
//! to show the output, not measured.
//!
//! Run: `cargo run -p report --example demo -- /tmp/report-demo`

use std::path::PathBuf;

use report::{Figure, HtmlReport, Series, Table, Trace};

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    std::fs::create_dir_all(&dir)?;

    // Three tasks with shares 3:2:1 needing 150 s, 150 s and 100 s of CPU:
    // round-robin slices of 10 ms weighted by share until each finishes.
    let shares = [("C1", 3u64), ("C2", 2), ("C3", 1)];
    let work_ns = [150_000_000_000u64, 150_000_000_000, 100_000_000_000];
    let slice = 10_000_000u64;
    let mut done = [0u64; 3];
    let mut points: Vec<Vec<(f64, f64)>> = vec![vec![(0.0, 0.0)]; 3];
    let mut trace = Trace::new("demo: 3 tasks, shares 3:2:1");
    for (i, (name, _)) in shares.iter().enumerate() {
        trace.task(i as u32 + 1, name);
    }
    let mut now = 0u64;
    let mut round = 0u64;
    while done.iter().zip(&work_ns).any(|(d, w)| d < w) {
        for (i, &(_, share)) in shares.iter().enumerate() {
            for _ in 0..share {
                if done[i] >= work_ns[i] {
                    continue;
                }
                // A little deterministic jitter so the lines are not perfectly straight.
                // C1 is favoured by 10% to show how a measured line departs from the ideal.
                let bias = if i == 0 { slice / 10 } else { 0 };
                let run = (slice + bias + (round * 7919 + i as u64 * 104_729) % 3_000_000)
                    .min(work_ns[i] - done[i]);
                if round < 300 {
                    trace.interval(i as u32 + 1, now, now + run, "run");
                }
                now += run;
                done[i] += run;
                if round % 25 == 0 || done[i] == work_ns[i] {
                    points[i].push((now as f64 / 1e9, done[i] as f64 / 1e9));
                }
            }
        }
        if round == 150 {
            trace.instant(3, now, "deadline miss");
        }
        round += 1;
    }

    let mut fig = Figure::new(
        "Execution times of conventional applications, SMART shares 3:2:1",
        "wall time (s)",
        "cumulative execution time (s)",
    );
    // Ideal: generalized processor sharing of the work, computed by hand for these numbers.
    // All run until C1 is done at 300 s, then C2 and C3 share 2:1 until 375 s, then C3 alone.
    let ideal = [
        vec![(0.0, 0.0), (300.0, 150.0)],
        vec![(0.0, 0.0), (300.0, 100.0), (375.0, 150.0)],
        vec![(0.0, 0.0), (300.0, 50.0), (375.0, 75.0), (400.0, 100.0)],
    ];
    for (i, (name, _)) in shares.iter().enumerate() {
        fig.measured.push(Series::new(*name, points[i].clone()));
        fig.ideal.push(Series::new(*name, ideal[i].clone()));
    }
    fig.write_svg(&dir.join("demo.svg"))?;

    let mut table = Table::new(&["task", "share", "cpu s", "finish s"]);
    for (i, (name, share)) in shares.iter().enumerate() {
        let finish = points[i].last().map_or(0.0, |p| p.0);
        table.row(vec![
            name.to_string(),
            share.to_string(),
            format!("{:.1}", work_ns[i] as f64 / 1e9),
            format!("{finish:.1}"),
        ]);
    }
    print!("{}", table.render());

    let mut page = HtmlReport::new("report crate demo");
    page.section(
        "Proportional sharing 3:2:1",
        "Synthetic data, for showing the output format only.\n\nMeasured lines are solid, ideal lines dashed.",
        Some(&table),
        &[&fig],
    );
    let rt = periodic_figure();
    rt.write_svg(&dir.join("demo-rt.svg"))?;
    page.section(
        "A periodic real-time task",
        "R1 needs 28 ms every 40 ms for 300 s (15 000 points, downsampled for drawing); \
         the ideal line is its reservation of 70%; R2 has no measured line.",
        None,
        &[&rt],
    );
    page.write(&dir.join("demo.html"))?;
    trace.write(std::fs::File::create(dir.join("demo.trace.json"))?)?;
    eprintln!(
        "wrote {0}/demo.svg, {0}/demo.html, {0}/demo.trace.json ({1} events)",
        dir.display(),
        trace.event_count()
    );
    Ok(())
}

/// A staircase: a periodic task that runs 28 ms at the start of every 40 ms period, with every
/// 50th job skipped, plotted in milliseconds against its 70% ideal.
fn periodic_figure() -> Figure {
    let mut fig = Figure::new(
        "Periodic task R1 (28 ms every 40 ms) under overload",
        "wall time (s)",
        "cumulative execution time (ms)",
    );
    let mut pts = vec![(0.0, 0.0)];
    let mut cpu_ms = 0.0;
    for k in 0..7_500u32 {
        let t0 = f64::from(k) * 0.040;
        if k % 50 != 49 {
            pts.push((t0, cpu_ms));
            cpu_ms += 28.0;
            pts.push((t0 + 0.028, cpu_ms));
        }
    }
    fig.measured.push(Series::new("R1", pts));
    fig.ideal.push(Series::new("R1", vec![(0.0, 0.0), (300.0, 300_000.0 * 0.7)]));
    fig.ideal.push(Series::new("R2", vec![(0.0, 0.0), (300.0, 300_000.0 * 0.25)]));
    fig
}
