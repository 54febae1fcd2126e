//! `smartsim taskset` (random periodic task sets written as scenarios) and `smartsim schedulability`
//! (acceptance ratio against utilisation per policy, beside response-time analysis): the command
//! lines and outputs over [`smartsim::taskset`] and [`smartsim::schedulability`].

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use report::{Figure, HtmlReport, Series, Table};
use smartsim::schedulability::{Study, StudySpec};
use smartsim::taskset::{fixed_priority, Generator, Periods, TasksetSpec, HORIZON_CAP};
use workload::{format_time, Nanos};

use super::Format;

/// The most sets `smartsim taskset` writes in one call.
pub const MAX_COUNT: usize = 100_000;
/// The most tasks `smartsim taskset` draws in one call (`--count` × `--tasks`): they are all drawn
/// before the first file is written, so that a failure leaves no half-written folder.
pub const MAX_TOTAL_TASKS: usize = 1_000_000;

/// Whether the sets carry priorities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Priorities {
    /// Rate monotonic: the shorter the period, the larger the `priority` (distinct: equal periods
    /// by task order).
    RateMonotonic,
    /// No `priority` key (every task 0).
    None,
}

/// The options that say what a set is, shared by both commands.
#[derive(clap::Args, Clone)]
pub struct SetArgs {
    /// Tasks per set (1 to 10000; RandFixedSum at most 1000).
    #[arg(long, default_value_t = 10, allow_negative_numbers = true)]
    tasks: usize,
    /// Processors of the machine (1 to 1024); the total utilisation may reach this many.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    cpus: u32,
    /// How the utilisations are drawn: uunifast (one CPU, U ≤ 1), uunifast-discard (U up to the
    /// number of tasks; a set with a task above 1 drawn again, up to 100000 times), randfixedsum
    /// (the same distribution drawn directly, at most 1000 tasks).
    #[arg(long, value_enum, default_value = "uunifast-discard")]
    generator: Generator,
    /// How the periods are drawn in [--period-min, --period-max]: uniform, log-uniform, or harmonic
    /// (base·2^k, base the least period allowed).
    #[arg(long, value_enum, default_value = "log-uniform")]
    periods: Periods,
    /// Least period, a time with its unit (e.g. 10ms).
    #[arg(long, default_value = "10ms", value_parser = bounded_time)]
    period_min: Nanos,
    /// Greatest period, a time with its unit (e.g. 100ms).
    #[arg(long, default_value = "100ms", value_parser = bounded_time)]
    period_max: Nanos,
    /// Periods are multiples of this (e.g. 1ms: whole milliseconds, shorter hyperperiods); 1ns: any.
    #[arg(long, default_value = "1ns", value_parser = bounded_time)]
    granularity: Nanos,
    /// How long each set is simulated (a time with its unit). Default: the set's hyperperiod (the
    /// least common multiple of its periods), or 1 s — or its longest period, if longer — when the
    /// hyperperiod is longer. Every task is released at 0, so a hyperperiod without a miss means none
    /// ever on one CPU, and the longest period holds each task's worst case under fixed priorities.
    #[arg(long, value_parser = bounded_time)]
    duration: Option<Nanos>,
    /// Seed of the first set (set k of --count, or of a study, draws from the seed + k − 1).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    seed: u64,
}

impl SetArgs {
    fn spec(&self, utilisation: f64) -> TasksetSpec {
        TasksetSpec {
            tasks: self.tasks,
            utilisation,
            cpus: self.cpus,
            generator: self.generator,
            periods: self.periods,
            period_min: self.period_min,
            period_max: self.period_max,
            granularity: self.granularity,
        }
    }

    /// The options as given, for a file's comment (enough to draw the same set again).
    fn describe(&self) -> String {
        let mut s = format!(
            "--tasks {} --cpus {} --generator {} --periods {} --period-min {} --period-max {}",
            self.tasks,
            self.cpus,
            self.generator.name(),
            self.periods.name(),
            format_time(self.period_min),
            format_time(self.period_max)
        );
        if self.granularity > 1 {
            s.push_str(&format!(" --granularity {}", format_time(self.granularity)));
        }
        if let Some(d) = self.duration {
            s.push_str(&format!(" --duration {}", format_time(d)));
        }
        s
    }

    /// What the horizon is, in words.
    fn horizon(&self) -> String {
        match self.duration {
            Some(d) => format_time(d),
            None => {
                format!("each set's hyperperiod, at most {}", format_time(HORIZON_CAP.max(self.period_max)))
            }
        }
    }
}

/// `smartsim taskset`'s options.
#[derive(clap::Args)]
pub struct TasksetArgs {
    /// Total utilisation of each set: above 0, at most --cpus and at most --tasks.
    #[arg(long, allow_negative_numbers = true)]
    utilisation: f64,
    #[command(flatten)]
    set: SetArgs,
    /// Sets to draw (1 to 100000; --count × --tasks at most 1000000); more than one needs --out.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    count: usize,
    /// The scenarios' policy (see `smartsim policies`).
    #[arg(long, default_value = "edf")]
    policy: String,
    /// Priorities written: rate-monotonic or none. Default: rate-monotonic under a fixed-priority
    /// policy (fifo, rr, rt, sys, svr4-rt), none otherwise (SMART, for one, puts priority before
    /// deadlines).
    #[arg(long, value_enum)]
    priorities: Option<Priorities>,
    /// Folder to write the sets in, as set-0001.toml, set-0002.toml, … (created if missing, files of
    /// those names replaced). Without it the one set is printed.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// `smartsim schedulability`'s options.
#[derive(clap::Args)]
pub struct StudyArgs {
    #[command(flatten)]
    set: SetArgs,
    /// Least utilisation swept, per CPU (the total is this × --cpus).
    #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
    from: f64,
    /// Greatest utilisation swept, per CPU (at most 1).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    to: f64,
    /// Step between utilisations, per CPU.
    #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
    step: f64,
    /// Sets drawn at each utilisation (points × sets at most 100000).
    #[arg(long, default_value_t = 20, allow_negative_numbers = true)]
    sets: usize,
    /// Policies simulated, comma-separated; a fixed-priority one (fifo, rr, …) with rate-monotonic
    /// priorities. On one CPU the response-time analysis of rate-monotonic priorities (`rta`) is
    /// drawn beside them.
    #[arg(long, default_value = "edf,fifo,smart", value_delimiter = ',')]
    policies: Vec<String>,
    /// Output format: a table of acceptance ratios, or one JSON object (the parameters and a curve
    /// per policy: sets accepted and ratio per utilisation, and the seed of the first set rejected).
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Also write an HTML report here (index.html, with the acceptance plot also as acceptance.svg).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The most tasks a set's run may walk at its policy's decisions (see run's --walk-limit): a run
    /// past it stops the study with an error naming its set, as one past the default does. An
    /// integer, or in e-notation (2e6); 1 to 1e18. Default: 5e10 (minutes).
    #[arg(long, value_parser = smartsim::budget::parse_walk_limit, value_name = "N")]
    walk_limit: Option<u64>,
}

/// `1 CPU`, `4 CPUs`.
fn cpus(n: u32) -> String {
    if n == 1 {
        "1 CPU".into()
    } else {
        format!("{n} CPUs")
    }
}

/// A time with its unit, at most `workload::MAX_TIME`.
fn bounded_time(s: &str) -> std::result::Result<Nanos, String> {
    workload::parse_bounded_time(s).map_err(|e| e.to_string())
}

/// `smartsim taskset`.
pub(crate) fn taskset(a: TasksetArgs) -> Result<()> {
    let spec = a.set.spec(a.utilisation);
    spec.check()?;
    if sched::registry::entry(&a.policy).is_none() {
        let known: Vec<&str> = sched::registry::names().collect();
        bail!("--policy: unknown policy `{}` (known: {})", diag::visible(&a.policy), known.join(", "));
    }
    if a.count == 0 || a.count > MAX_COUNT {
        bail!("--count {}: draw 1 to {MAX_COUNT} sets", a.count);
    }
    if a.count.saturating_mul(a.set.tasks) > MAX_TOTAL_TASKS {
        bail!(
            "--count {} × --tasks {} is {} tasks: at most {MAX_TOTAL_TASKS} in one call (all are drawn before \
             any file is written)",
            a.count,
            a.set.tasks,
            a.count.saturating_mul(a.set.tasks)
        );
    }
    if a.set.duration == Some(0) {
        bail!("--duration 0s: give a horizon above 0");
    }
    if a.count > 1 && a.out.is_none() {
        bail!("--count {}: several sets are written as files: give --out DIR", a.count);
    }
    let rm = match a.priorities {
        Some(p) => p == Priorities::RateMonotonic,
        None => fixed_priority(&a.policy),
    };
    // The most demanding set this call can draw is within `smartsim run`'s budget.
    let study = StudySpec {
        set: spec.clone(),
        utilisations: vec![a.utilisation],
        sets: 1,
        policies: vec![a.policy.clone()],
        duration: a.set.duration,
        seed: a.set.seed,
        walk_limit: None,
    };
    study.check()?;
    let mut p = outputs::Plan::new();
    match &a.out {
        Some(dir) => p.directory("--out", dir),
        None => p.stdout("the scenario"),
    };
    p.check()?;
    // Every set drawn before any is written.
    use rayon::prelude::*;
    let sets: Vec<_> = (0..a.count)
        .into_par_iter()
        .map(|k| spec.generate(a.set.seed.wrapping_add(k as u64)))
        .collect::<std::result::Result<_, _>>()?;
    let prio = match a.priorities {
        Some(Priorities::RateMonotonic) => " --priorities rate-monotonic",
        Some(Priorities::None) => " --priorities none",
        None => "",
    };
    let text = |k: usize, set: &smartsim::taskset::Taskset| {
        let about = format!(
            "Task set {} of {} drawn by smartsim taskset ({}, U = {} on {}; {} periods in [{}, {}]).\n\
             Again: smartsim taskset --utilisation {} {} --seed {} --policy {}{prio}",
            k + 1,
            a.count,
            a.set.generator.name(),
            a.utilisation,
            cpus(a.set.cpus),
            a.set.periods.name(),
            format_time(a.set.period_min),
            format_time(a.set.period_max),
            a.utilisation,
            a.set.describe(),
            set.seed,
            a.policy
        );
        set.to_toml(&a.policy, a.set.duration, rm, &about)
    };
    match &a.out {
        None => diag::out!("{}", text(0, &sets[0])),
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            let width = a.count.to_string().len().max(4);
            for (k, set) in sets.iter().enumerate() {
                let path = dir.join(format!("set-{:0width$}.toml", k + 1));
                std::fs::write(&path, text(k, set)).with_context(|| format!("writing {}", path.display()))?;
            }
            let last = format!("set-{:0width$}.toml", a.count);
            outputs::wrote(
                dir,
                &format!(
                    "{} scenario{}: set-{:0width$}.toml{}",
                    a.count,
                    if a.count == 1 { "" } else { "s" },
                    1,
                    if a.count == 1 { String::new() } else { format!(" … {last}") }
                ),
            );
        }
    }
    Ok(())
}

/// The utilisations per CPU of `--from --to --step`: from, from + step, … up to to (within a
/// millionth of a step).
fn sweep_points(from: f64, to: f64, step: f64) -> Result<Vec<f64>> {
    if !from.is_finite() || from <= 0.0 {
        bail!("--from {from}: the least utilisation per CPU must be above 0");
    }
    if !to.is_finite() || to > 1.0 {
        bail!("--to {to}: the utilisation per CPU is at most 1 (no policy meets every deadline above it)");
    }
    if to < from {
        bail!("--to {to}: below --from {from}");
    }
    if !step.is_finite() || step <= 0.0 {
        bail!("--step {step}: give a step above 0");
    }
    let n = ((to - from) / step + 1e-6).floor();
    if n + 1.0 > smartsim::schedulability::MAX_POINTS as f64 {
        bail!(
            "--from {from} --to {to} --step {step}: {} points, at most {}",
            n + 1.0,
            smartsim::schedulability::MAX_POINTS
        );
    }
    // Rounded to 12 digits so that 0.05 × 3 reads 0.15, not 0.15000000000000002.
    Ok((0..=n as usize).map(|i| ((from + i as f64 * step) * 1e12).round() / 1e12).collect())
}

/// `smartsim schedulability`.
pub(crate) fn schedulability(a: StudyArgs) -> Result<()> {
    let per_cpu = sweep_points(a.from, a.to, a.step)?;
    let cpus = f64::from(a.set.cpus);
    let spec = StudySpec {
        set: a.set.spec(per_cpu[0] * cpus),
        utilisations: per_cpu.iter().map(|u| u * cpus).collect(),
        sets: a.sets,
        policies: a.policies.iter().map(|p| p.trim().to_string()).collect(),
        duration: a.set.duration,
        seed: a.set.seed,
        walk_limit: a.walk_limit,
    };
    spec.check()?;
    if let Some(dir) = &a.out {
        let mut p = outputs::Plan::new();
        p.directory("--out", dir);
        p.check()?;
    }
    let total = spec.utilisations.len() * spec.sets;
    let bar = crate::progress::counter(total as u64, "sets");
    let study = spec.run(&|| bar.inc())?;
    drop(bar);
    if let Some(dir) = &a.out {
        write_report(&study, &a.set, dir)?;
    }
    match a.format {
        Format::Json => diag::outln!("{}", serde_json::to_string(&json(&study))?),
        Format::Table => {
            diag::outln!("{}", about(&study, &a.set));
            diag::out!("{}", table(&study).render());
            diag::outln!(
                "acceptance ratio: the share of sets with no request late in the horizon; (RM): rate-monotonic \
                 priorities; {}",
                if a.set.cpus == 1 {
                    "rta: response-time analysis of the same sets under them, analytical"
                } else {
                    "no rta: the analysis is for one CPU"
                }
            );
        }
    }
    Ok(())
}

/// The study's parameters in one line.
fn about(study: &Study, set: &SetArgs) -> String {
    let s = &study.spec;
    format!(
        "{} sets of {} tasks per utilisation on {}, {}, {} periods in [{}, {}]{}, simulated for {}; seeds {}..{}",
        s.sets,
        s.set.tasks,
        cpus(s.set.cpus),
        s.set.generator.name(),
        s.set.periods.name(),
        format_time(s.set.period_min),
        format_time(s.set.period_max),
        if s.set.granularity > 1 { format!(" (multiples of {})", format_time(s.set.granularity)) } else { String::new() },
        set.horizon(),
        s.seed,
        s.seed_of(s.utilisations.len() - 1, s.sets - 1)
    )
}

/// A curve's name in a table or legend: a fixed-priority policy says its priorities.
fn label(c: &smartsim::schedulability::Curve) -> String {
    match (c.kind, c.priorities) {
        ("analysis", _) => format!("{} (analysis)", c.name),
        (_, "rate-monotonic") => format!("{} (RM)", c.name),
        _ => c.name.clone(),
    }
}

fn table(study: &Study) -> Table {
    let mut heads = vec!["U".to_string()];
    if study.spec.set.cpus > 1 {
        heads.push("U/CPU".into());
    }
    heads.extend(study.curves.iter().map(label));
    let heads: Vec<&str> = heads.iter().map(String::as_str).collect();
    let mut t = Table::new(&heads);
    let cpus = f64::from(study.spec.set.cpus);
    for (i, u) in study.spec.utilisations.iter().enumerate() {
        let mut row = vec![format!("{u:.3}")];
        if study.spec.set.cpus > 1 {
            row.push(format!("{:.3}", u / cpus));
        }
        row.extend(study.curves.iter().map(|c| format!("{:.2}", c.ratio[i])));
        t.row(row);
    }
    t
}

fn json(study: &Study) -> serde_json::Value {
    let s = &study.spec;
    serde_json::json!({
        "tasks": s.set.tasks,
        "cpus": s.set.cpus,
        "generator": s.set.generator,
        "periods": s.set.periods,
        "period_min_ns": s.set.period_min,
        "period_max_ns": s.set.period_max,
        "granularity_ns": s.set.granularity,
        "duration_ns": s.duration,
        "sets": s.sets,
        "seed": s.seed,
        "utilisations": s.utilisations,
        "curves": study.curves,
    })
}

/// The acceptance plot: a solid line per simulated policy, the analysis dashed.
fn figure(study: &Study) -> Figure {
    let s = &study.spec;
    let x = if s.set.cpus > 1 {
        format!("total utilisation ({} CPUs)", s.set.cpus)
    } else {
        "utilisation".into()
    };
    let mut f = Figure::new(
        &format!(
            "Acceptance ratio, {} tasks on {}, {} sets per point ({})",
            s.set.tasks,
            cpus(s.set.cpus),
            s.sets,
            s.set.generator.name()
        ),
        &x,
        "acceptance ratio",
    );
    for c in &study.curves {
        let points: Vec<(f64, f64)> = s.utilisations.iter().copied().zip(c.ratio.iter().copied()).collect();
        let series = Series::new(label(c), points);
        if c.kind == "analysis" {
            f.ideal.push(series);
        } else {
            f.measured.push(series);
        }
    }
    f
}

fn write_report(study: &Study, set: &SetArgs, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let fig = figure(study);
    let svg = fig.to_svg();
    let svg_path = dir.join("acceptance.svg");
    std::fs::write(&svg_path, &svg).with_context(|| format!("writing {}", svg_path.display()))?;
    let s = &study.spec;
    let mut html = HtmlReport::new("Schedulability: acceptance ratio against utilisation");
    html.intro(&format!(
        "{}.\n\n\
         At each total utilisation U, random periodic task sets with implicit deadlines (deadline = period) are \
         drawn (utilisations by {}, then periods, then execution times ⌊u·T⌋ ns) and simulated from a \
         synchronous release under each policy, with no overheads, exact billing and high-resolution timers; a \
         set is accepted when none of its requests is late by the end of the horizon. A fixed-priority policy \
         gets rate-monotonic priorities. {}\n\n\
         Set j (from 0) of point i (from 0) is drawn from seed {} + i × {} + j; the command smartsim taskset \
         --utilisation U {} --seed S writes it as a scenario. Made by smartsim schedulability.",
        about(study, set),
        s.set.generator.name(),
        if s.set.cpus == 1 {
            "The dashed line is response-time analysis (Audsley et al. 1993) of the same sets under \
             rate-monotonic priorities: the exact test for fixed priorities on one CPU, which the simulation \
             of a fixed-priority policy meets."
        } else {
            "Response-time analysis is for one CPU and is not drawn: on several CPUs global scheduling has no \
             critical instant, and a set accepted over the horizon may still miss later."
        },
        s.seed,
        s.sets,
        set.describe(),
    ));
    html.section_captioned(
        "Acceptance ratio",
        "",
        None,
        &[(&fig, "The share of sets accepted at each utilisation: a solid line per simulated policy, the analysis \
              dashed (on one CPU it runs along the line of the fixed-priority policy, whose simulation it \
              predicts exactly).")],
    );
    html.section("The numbers", "Acceptance ratio per utilisation.", Some(&table(study)), &[]);
    let index = dir.join("index.html");
    html.write(&index).with_context(|| format!("writing {}", index.display()))?;
    outputs::wrote(&index, "");
    outputs::wrote(&svg_path, "");
    Ok(())
}
