//! The papers' experiments: each runs a scenario of `scenarios/papers/` and compares what it measures
//! with the number the paper printed and the paper's ideal.
//!
//! The scenario files are compiled in, so `smartsim reproduce` works from any directory; the same
//! files can be run by hand with `smartsim run scenarios/papers/<file>`.
//!
//! `paper` values are the dissertation's measurements on its SPARCstation 10; `ideal` values are the
//! ideals the dissertation derives in the text (our fluid model, [`crate::ideal`], reproduces them and
//! draws them as the dotted lines of the figures).

use anyhow::Context;
use serde::Serialize;
use workload::Scenario;

use crate::ideal::{draws, ideal_of_run, Draw, Ideal};
use crate::result::SimResult;
use crate::studies::Judged;

/// The work the experiments reproduce, cited in full (reports name papers by author and title).
pub const DISSERTATION: &str = "Jason Nieh, The Design, Implementation, and Evaluation of SMART: \
A Scheduler for Multimedia Applications. PhD dissertation, Stanford University, 1999";

/// What a figure plots.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Plot {
    /// Cumulative execution time against wall time (figs. 6-1 to 6-4, 6-6 to 6-8).
    Cpu,
    /// Cumulative deadlines met against wall time (figs. 6-5, 6-9).
    Met,
}

/// A figure of an experiment.
#[derive(Copy, Clone, Debug)]
pub struct Fig {
    /// What it plots.
    pub plot: Plot,
    /// File stem and the paper's figure, e.g. `fig6-1`.
    pub id: &'static str,
    /// Title drawn on the figure.
    pub title: &'static str,
    /// The paper's caption, word for word.
    pub caption: &'static str,
    /// One sentence on what to see in ours.
    pub see: &'static str,
}

const fn fig(
    plot: Plot,
    id: &'static str,
    title: &'static str,
    caption: &'static str,
    see: &'static str,
) -> Fig {
    Fig { plot, id, title, caption, see }
}

/// One number of an experiment: the paper's, the ideal, ours.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Metric {
    /// What it is, with its unit.
    pub name: String,
    /// The paper's measurement.
    pub paper: Option<f64>,
    /// The paper's ideal.
    pub ideal: Option<f64>,
    /// The ideal of our run: the fluid machine serving the requests our run drew
    /// ([`crate::ideal::ideal_of_run`]), where it is the same quantity; ours is measured against it.
    pub drawn: Option<f64>,
    /// Ours: over several seeds ([`run_seeds`]), the mean of the seeds.
    pub ours: f64,
    /// Over several seeds: the half-width of the 95 % interval of `ours` (Student's t), and the seeds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ours_half: Option<f64>,
    /// The seeds `ours` is the mean of (1 for one run).
    pub seeds: usize,
}

impl Metric {
    /// With the ideal of the run's own draws.
    fn drawn(mut self, v: f64) -> Self {
        self.drawn = Some(v);
        self
    }
}

/// A run of an experiment's scenario.
pub struct Run {
    /// The scenario.
    pub scenario: Scenario,
    /// What the simulator measured.
    pub result: SimResult,
    /// The fluid ideal of the run: the demand its requests drew ([`crate::ideal`]).
    pub ideal: Ideal,
    /// The requests each periodic task drew (by task, in release order).
    pub draws: Vec<Vec<Draw>>,
}

impl Run {
    fn idx(&self, name: &str) -> usize {
        self.scenario.tasks.iter().position(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}"))
    }
    /// CPU of a task, ms.
    pub fn cpu_ms(&self, name: &str) -> f64 {
        self.result.tasks[self.idx(name)].cpu_ns as f64 / 1e6
    }
    /// Deadlines missed by a task.
    pub fn missed(&self, name: &str) -> f64 {
        self.result.tasks[self.idx(name)].deadlines.as_ref().map_or(0, |d| d.missed) as f64
    }
    /// Deadlines met by a task.
    pub fn met(&self, name: &str) -> f64 {
        self.result.tasks[self.idx(name)].deadlines.as_ref().map_or(0, |d| d.met) as f64
    }
    /// Deadlines met by a task by time `t` seconds.
    pub fn met_by(&self, name: &str, t: f64) -> f64 {
        let i = self.idx(name);
        let tl = &self.result.timeline;
        let k = tl.at.partition_point(|x| (*x as f64) / 1e9 <= t + 1e-9).saturating_sub(1);
        tl.met.get(k).map_or(0.0, |m| m[i] as f64)
    }
    /// Finish time of a task, s.
    pub fn finish_s(&self, name: &str) -> f64 {
        self.result.tasks[self.idx(name)].finish_ns.map_or(f64::NAN, |f| f as f64 / 1e9)
    }
    /// Share of the CPU of a task over the whole run, percent.
    pub fn share_pct(&self, name: &str) -> f64 {
        100.0 * self.result.tasks[self.idx(name)].cpu_share
    }
    /// Ratio of the CPU rates of two tasks over `[from, to)` seconds (the slopes of a figure).
    pub fn slope_ratio(&self, a: &str, b: &str, from: f64, to: f64) -> f64 {
        let s = self
            .result
            .timeline
            .shares((from * 1e9) as u64, (to * 1e9) as u64)
            .expect("the timeline covers the window");
        s[self.idx(a)] / s[self.idx(b)]
    }
    /// Ideal finish of a task, s.
    pub fn ideal_finish_s(&self, name: &str) -> f64 {
        self.ideal.finish(self.idx(name))
    }
    /// Ideal total CPU of a task, ms.
    pub fn ideal_cpu_ms(&self, name: &str) -> f64 {
        self.ideal.total(self.idx(name))
    }
    /// Ideal share of the CPU of a task over the whole run, percent.
    pub fn ideal_share_pct(&self, name: &str) -> f64 {
        100.0 * self.ideal_cpu_ms(name) / (self.scenario.machine.duration as f64 / 1e6)
    }
    /// Ideal deadlines met by a task by `t` seconds (the whole run: `f64::INFINITY`).
    pub fn ideal_met_by(&self, name: &str, t: f64) -> f64 {
        self.ideal.met_at(self.idx(name), t)
    }
}

/// An experiment of a paper.
pub struct Experiment {
    /// Identifier, e.g. `smart-6.2.1`.
    pub id: &'static str,
    /// Where in which paper, e.g. `Nieh 1999, §6.2.1, fig. 6-1`.
    pub source: &'static str,
    /// Scenario file name in `scenarios/papers/`.
    pub file: &'static str,
    /// Its text.
    pub toml: &'static str,
    /// Figures to draw.
    pub figures: &'static [Fig],
    /// The numbers to compare.
    pub metrics: fn(&Run) -> Vec<Metric>,
    /// The paper's statements, checked on our run.
    pub checks: &'static [Check],
}

/// A statement of the paper, checked on an experiment's run.
#[derive(Debug)]
pub struct Check {
    /// The statement, with the paper's numbers.
    pub text: &'static str,
    /// Whether our run bears it out.
    pub holds: fn(&Run) -> bool,
    /// Why ours differs, when it does (empty if it reproduces).
    pub reason: &'static str,
}

impl Experiment {
    /// How each check came out on `run`.
    pub fn judge(&self, run: &Run) -> Vec<Judged> {
        self.checks.iter().map(|c| if (c.holds)(run) { Judged::Holds } else { Judged::Fails }).collect()
    }
}

const fn check(text: &'static str, holds: fn(&Run) -> bool, reason: &'static str) -> Check {
    Check { text, holds, reason }
}

/// `x` within `rel` (a fraction) of `want`.
fn near(x: f64, want: f64, rel: f64) -> bool {
    (x - want).abs() <= rel * want.abs()
}

fn m(name: &str, paper: Option<f64>, ideal: Option<f64>, ours: f64) -> Metric {
    Metric { name: name.to_string(), paper, ideal, drawn: None, ours, ours_half: None, seeds: 1 }
}

macro_rules! scenario {
    ($f:literal) => {
        ($f, include_str!(concat!("../../../scenarios/papers/", $f)))
    };
}

const fn exp(
    id: &'static str,
    source: &'static str,
    file: (&'static str, &'static str),
    figures: &'static [Fig],
    metrics: fn(&Run) -> Vec<Metric>,
    checks: &'static [Check],
) -> Experiment {
    Experiment { id, source, file: file.0, toml: file.1, figures, metrics, checks }
}

/// Why §6.2.3.2 differs.
const TOLERANCE_REASON: &str = "Ours: R1 misses 21 ± 8 deadlines with tolerance 0 and 17 ± 8 with 100 ms (10 \
seeds; seed 1: 32 and 29). R1 \
(10-30 ms per 40 ms) asks for exactly its share on average, so its lead over its share is a random walk, and a \
constant bias on C1 (its latency tolerance) only moves where the walk crosses over. With a demand slightly below \
the share (10-29 ms) the paper's effect appears: 4 misses at tolerance 0, none at 100 ms. The dissertation gives \
neither its bias table nor its quantum, which this experiment depends on.";

/// Every experiment, in the dissertation's order.
pub static EXPERIMENTS: &[Experiment] = &[
    exp(
        "smart-6.2.1",
        "Nieh 1999, §6.2.1, fig. 6-1",
        scenario!("smart-6.2.1.toml"),
        &[fig(
                Plot::Cpu,
                "fig6-1",
                "Fig. 6-1: conventional C1, C2, C3 with SMART shares 3:2:1",
                "Execution times for conventional applications when proportional sharing with SMART shares 3:2:1",
                "The lines rise 3:2:1 while all three run, then 2:1 once C1 is done, and each ends within a second of its dotted ideal.",
            )],
        |r| {
            vec![
                m("C1 finish s", Some(678.0), Some(676.0), r.finish_s("C1")).drawn(r.ideal_finish_s("C1")),
                m("C2 finish s", Some(848.0), Some(846.0), r.finish_s("C2")).drawn(r.ideal_finish_s("C2")),
                m("C3 finish s", Some(1018.0), Some(1014.0), r.finish_s("C3")).drawn(r.ideal_finish_s("C3")),
                m(
                    "C1:C3 slope, all three running",
                    Some(3.00),
                    Some(3.0),
                    r.slope_ratio("C1", "C3", 10.0, 600.0),
                ),
                m("C2:C3 slope, after C1", Some(2.00), Some(2.0), r.slope_ratio("C2", "C3", 700.0, 800.0)),
            ]
        },
        &[
            check(
                "C1, C2, C3 run 3:2:1 while all three run, 2:1 after C1, and finish at 678, 848 and 1018 s",
                |r| {
                    near(r.slope_ratio("C1", "C3", 10.0, 600.0), 3.0, 0.02)
                        && near(r.slope_ratio("C2", "C3", 700.0, 800.0), 2.0, 0.02)
                        && ["C1", "C2", "C3"].iter().zip([678.0, 848.0, 1018.0]).all(|(t, p)| near(r.finish_s(t), p, 0.01))
                },
                "",
            ),
        ],
    ),
    exp(
        "smart-6.2.2.1-fig6-2",
        "Nieh 1999, §6.2.2.1, fig. 6-2",
        scenario!("smart-6.2.2.1-fig6-2.toml"),
        &[fig(
                Plot::Cpu,
                "fig6-2",
                "Fig. 6-2: real-time R1, R2 in underload",
                "Execution times for real-time applications when using SMART in system underload",
                "Both lines follow their ideals (the demand their requests drew) and no deadline is missed: SMART is optimal in underload.",
            )],
        |r| {
            vec![
                m("R1 deadlines missed", Some(0.0), Some(0.0), r.missed("R1")),
                m("R2 deadlines missed", Some(0.0), Some(0.0), r.missed("R2")),
                m("R1 CPU ms", Some(57066.0), Some(60000.0), r.cpu_ms("R1")).drawn(r.ideal_cpu_ms("R1")),
                m("R2 CPU ms", Some(17426.0), Some(17760.0), r.cpu_ms("R2")).drawn(r.ideal_cpu_ms("R2")),
            ]
        },
        &[check("In underload neither R1 nor R2 misses a deadline", |r| r.missed("R1") == 0.0 && r.missed("R2") == 0.0, "")],
    ),
    exp(
        "smart-6.2.2.1-fig6-3",
        "Nieh 1999, §6.2.2.1, fig. 6-3",
        scenario!("smart-6.2.2.1-fig6-3.toml"),
        &[fig(
                Plot::Cpu,
                "fig6-3",
                "Fig. 6-3: real-time R1, R3 on a nearly 100% loaded system",
                "Execution times for real-time applications when using SMART on a nearly 100% loaded system",
                "At nearly full load both tasks still get all their requests drew and miss nothing; the paper's R1 missed 3 of 1999, which a simulator without cache interference does not.",
            )],
        |r| {
            vec![
                m("R1 deadlines missed", Some(3.0), Some(0.0), r.missed("R1")),
                m("R3 deadlines missed", Some(0.0), Some(0.0), r.missed("R3")),
                m("R1 CPU ms", Some(57178.0), Some(60000.0), r.cpu_ms("R1")).drawn(r.ideal_cpu_ms("R1")),
                m("R3 CPU ms", Some(19673.0), Some(20000.0), r.cpu_ms("R3")).drawn(r.ideal_cpu_ms("R3")),
            ]
        },
        &[check(
            "Nearly fully loaded, SMART misses almost no deadline (R1 3 of 1999, R3 none)",
            |r| r.missed("R1") <= 3.0 && r.missed("R3") == 0.0,
            "",
        )],
    ),
    exp(
        "smart-6.2.2.2",
        "Nieh 1999, §6.2.2.2, figs. 6-4, 6-5",
        scenario!("smart-6.2.2.2.toml"),
        &[
            fig(
                Plot::Cpu,
                "fig6-4",
                "Fig. 6-4: real-time R1, R2, R3 with shares 3:2:1, overload then underload",
                "Execution times for real-time applications when proportional sharing with SMART shares 3:2:1 in system overload and underload",
                "In the overloaded first 40 s the slopes follow the shares (R1 needs less than its half); R2 and R3 stay below their fluid ideals because the requests they drop leave the CPU idle about 5 % of that time.",
            ),
            fig(
                Plot::Met,
                "fig6-5",
                "Fig. 6-5: deadlines met by R1, R2, R3 with shares 3:2:1",
                "Deadlines met by real-time applications when proportional sharing with SMART shares 3:2:1 in system overload and underload",
                "R1 meets every deadline, R2 and R3 about two thirds and one third of theirs while overloaded, then all; the ideal spends each task's share on whole requests of the sizes drawn (19 ms on average, not the 20 ms behind the dissertation's 1166 and 1333).",
            ),
        ],
        |r| {
            vec![
                m("R1 deadlines met", Some(999.0), Some(1000.0), r.met("R1")).drawn(r.ideal_met_by("R1", f64::INFINITY)),
                m("R2 deadlines met", Some(1100.0), Some(1166.0), r.met("R2")).drawn(r.ideal_met_by("R2", f64::INFINITY)),
                m("R3 deadlines met", Some(1331.0), Some(1333.0), r.met("R3")).drawn(r.ideal_met_by("R3", f64::INFINITY)),
                m("R1 met in first 40 s", Some(999.0), Some(1000.0), r.met_by("R1", 40.0)).drawn(r.ideal_met_by("R1", 40.0)),
                m("R2 met in first 40 s", Some(604.0), Some(666.0), r.met_by("R2", 40.0)).drawn(r.ideal_met_by("R2", 40.0)),
                m("R3 met in first 40 s", Some(345.0), Some(333.0), r.met_by("R3", 40.0)).drawn(r.ideal_met_by("R3", 40.0)),
                m("R1 CPU ms", Some(19045.0), Some(20000.0), r.cpu_ms("R1")).drawn(r.ideal_cpu_ms("R1")),
                m("R2 CPU ms", Some(23061.0), Some(23333.0), r.cpu_ms("R2")).drawn(r.ideal_cpu_ms("R2")),
                m("R3 CPU ms", Some(25094.0), Some(26667.0), r.cpu_ms("R3")).drawn(r.ideal_cpu_ms("R3")),
                m("R1:R3 slope, 0-40 s", Some(2.80), Some(3.0), r.slope_ratio("R1", "R3", 0.0, 40.0)),
                m("R2:R3 slope, 0-40 s", Some(2.02), Some(2.0), r.slope_ratio("R2", "R3", 0.0, 40.0)),
                m("R2:R3 slope, 42-60 s", Some(1.02), Some(1.0), r.slope_ratio("R2", "R3", 42.0, 60.0)),
            ]
        },
        &[
            check(
                "In overload R1 (share 3, needing less than its share) meets nearly every deadline (999 of 1000)",
                |r| r.met("R1") >= 995.0,
                "",
            ),
            check(
                "In overload R2 and R3 get the CPU 2:1 (2.02), in underload 1:1 (1.02)",
                |r| near(r.slope_ratio("R2", "R3", 0.0, 40.0), 2.0, 0.05) && near(r.slope_ratio("R2", "R3", 42.0, 60.0), 1.0, 0.05),
                "",
            ),
            check(
                "In the first 40 s R2 and R3 meet within 10 % of the deadlines their shares allow (604 of 666, \
                 345 of 333); ours against the ideal of the sizes our requests drew",
                |r| ["R2", "R3"].iter().all(|t| near(r.met_by(t, 40.0), r.ideal_met_by(t, 40.0), 0.10)),
                "",
            ),
        ],
    ),
    exp(
        "smart-6.2.3.1-fig6-6",
        "Nieh 1999, §6.2.3.1, fig. 6-6",
        scenario!("smart-6.2.3.1-fig6-6.toml"),
        &[fig(
                Plot::Cpu,
                "fig6-6",
                "Fig. 6-6: real-time R1 and conventional C1, equal shares",
                "Execution times for real-time and conventional applications when proportional sharing with equal SMART shares",
                "R1 meets every deadline with a little less than its half, since its requests need less than their worst case, and C1 takes the rest.",
            )],
        |r| {
            vec![
                m("R1 deadlines missed", Some(0.0), Some(0.0), r.missed("R1")),
                m("R1 CPU %", Some(48.0), Some(50.0), r.share_pct("R1")).drawn(r.ideal_share_pct("R1")),
                m("C1 CPU %", Some(52.0), Some(50.0), r.share_pct("C1")).drawn(r.ideal_share_pct("C1")),
            ]
        },
        &[check(
            "R1 meets every deadline with about 48 % of the CPU, C1 takes the rest (52 %)",
            |r| r.missed("R1") == 0.0 && near(r.share_pct("R1"), 48.0, 0.05),
            "",
        )],
    ),
    exp(
        "smart-6.2.3.1-fig6-7",
        "Nieh 1999, §6.2.3.1, fig. 6-7",
        scenario!("smart-6.2.3.1-fig6-7.toml"),
        &[fig(
                Plot::Cpu,
                "fig6-7",
                "Fig. 6-7: real-time R2 and conventional C2, shares 3:1",
                "Execution times for real-time and conventional applications when proportional sharing with SMART shares 3:1",
                "R2 (share 3) meets every deadline with about 72 % of the CPU and C2 gets the remaining 28 %, as in the paper.",
            )],
        |r| {
            vec![
                m("R2 deadlines missed", Some(0.0), Some(0.0), r.missed("R2")),
                m("R2 CPU %", Some(72.0), Some(75.0), r.share_pct("R2")).drawn(r.ideal_share_pct("R2")),
                m("C2 CPU %", Some(28.0), Some(25.0), r.share_pct("C2")).drawn(r.ideal_share_pct("C2")),
            ]
        },
        &[check(
            "R2 (share 3) meets every deadline with about 72 % of the CPU, C2 gets 28 %",
            |r| r.missed("R2") == 0.0 && near(r.share_pct("R2"), 72.0, 0.05),
            "",
        )],
    ),
    exp(
        "smart-6.2.3.2-tol0",
        "Nieh 1999, §6.2.3.2 (no figure)",
        scenario!("smart-6.2.3.2-tol0.toml"),
        &[],
        |r| {
            vec![
                m("R1 deadlines missed, C1 tolerance 0", Some(192.0), None, r.missed("R1")),
                m("R1 CPU %", None, Some(50.0), r.share_pct("R1")).drawn(r.ideal_share_pct("R1")),
            ]
        },
        &[check(
            "With C1's latency tolerance 0, R1 misses many deadlines (192 of 1999)",
            |r| r.missed("R1") > 100.0,
            TOLERANCE_REASON,
        )],
    ),
    exp(
        "smart-6.2.3.2-tol100",
        "Nieh 1999, §6.2.3.2 (no figure)",
        scenario!("smart-6.2.3.2-tol100.toml"),
        &[],
        |r| {
            vec![
                m("R1 deadlines missed, C1 tolerance 100 ms", Some(0.0), Some(0.0), r.missed("R1")),
                m("R1 CPU %", None, Some(50.0), r.share_pct("R1")).drawn(r.ideal_share_pct("R1")),
            ]
        },
        &[check(
            "With a latency tolerance of 100 ms, C1's bias lets R1 meet every deadline",
            |r| r.missed("R1") == 0.0,
            TOLERANCE_REASON,
        )],
    ),
    exp(
        "smart-6.2.3.3",
        "Nieh 1999, §6.2.3.3, figs. 6-8, 6-9",
        scenario!("smart-6.2.3.3.toml"),
        &[
            fig(
                Plot::Cpu,
                "fig6-8",
                "Fig. 6-8: real-time R1, R2 and conventional C1, equal shares, overload",
                "Execution times for real-time and conventional applications when proportional sharing with equal SMART shares in system overload",
                "All three get close to a third each; C1 a little more, since it can use any time R1 and R2 cannot turn into a met deadline.",
            ),
            fig(
                Plot::Met,
                "fig6-9",
                "Fig. 6-9: deadlines met by R1 and R2 in overload",
                "Deadlines met by real-time applications when proportional sharing with conventional applications with equal SMART shares in system overload",
                "R1 and R2 meet the same deadlines almost to the request, so their lines coincide (R2 dashed over R1): 1000 each of 2000, below the 1011 and 1012 their third of the CPU could serve at the sizes they drew.",
            ),
        ],
        |r| {
            vec![
                m("R1 deadlines met", Some(985.0), Some(1000.0), r.met("R1")).drawn(r.ideal_met_by("R1", f64::INFINITY)),
                m("R2 deadlines met", Some(998.0), Some(1000.0), r.met("R2")).drawn(r.ideal_met_by("R2", f64::INFINITY)),
                m("C1 finish s", None, Some(120.0), r.finish_s("C1")).drawn(r.ideal_finish_s("C1")),
                m("R1 CPU ms", None, Some(40000.0), r.cpu_ms("R1")).drawn(r.ideal_cpu_ms("R1")),
                m("C1 CPU ms", None, Some(40000.0), r.cpu_ms("C1")).drawn(r.ideal_cpu_ms("C1")),
            ]
        },
        &[check(
            "In overload with equal shares, R1 and R2 meet nearly 1000 deadlines each (985 and 998) and C1 gets its third",
            |r| near(r.met("R1"), 1000.0, 0.02) && near(r.met("R2"), 1000.0, 0.02) && near(r.share_pct("C1"), 100.0 / 3.0, 0.05),
            "",
        )],
    ),
];

/// An experiment by id, or all of them for `all`; ids may be given by prefix (`smart-6.2.2`).
pub fn select(name: &str) -> Vec<&'static Experiment> {
    EXPERIMENTS.iter().filter(|e| name == "all" || e.id == name || e.id.starts_with(name)).collect()
}

/// Parse an experiment's scenario.
pub fn scenario(e: &Experiment) -> anyhow::Result<Scenario> {
    workload::parse_str(e.toml, &format!("scenarios/papers/{}", e.file))
        .map_err(|err| anyhow::anyhow!("{err}"))
}

/// Run an experiment with its scenario's own seed.
pub fn run(e: &Experiment) -> anyhow::Result<(Run, Vec<Metric>)> {
    run_seed(e, None)
}

/// An experiment run under seeds `1..=seeds` (in parallel across cores): the run of seed 1 (its
/// figures), each metric the mean of the seeds with its 95 % interval (the ideal of our draws too: the
/// mean of the seeds'), and each statement judged over the seeds: it holds when it holds under every
/// seed, is within noise when it holds under at least half of them, and fails otherwise.
pub struct Seeded {
    /// The run of seed 1.
    pub first: Run,
    /// The metrics over the seeds.
    pub metrics: Vec<Metric>,
    /// The statements over the seeds.
    pub judged: Vec<Judged>,
}

/// Runs `e` under seeds `1..=seeds` ([`Seeded`]).
pub fn run_seeds(e: &Experiment, seeds: usize) -> anyhow::Result<Seeded> {
    use rayon::prelude::*;
    let runs: Vec<(Run, Vec<Metric>)> = (1..=seeds.max(1) as u64)
        .into_par_iter()
        .map(|s| run_seed(e, Some(s)))
        .collect::<anyhow::Result<_>>()?;
    let n = runs.len();
    let held: Vec<usize> =
        (0..e.checks.len()).map(|k| runs.iter().filter(|(r, _)| (e.checks[k].holds)(r)).count()).collect();
    let judged = held
        .iter()
        .map(|&h| match h {
            h if h == n => Judged::Holds,
            h if 2 * h >= n => Judged::WithinNoise,
            _ => Judged::Fails,
        })
        .collect();
    let mut metrics = runs[0].1.clone();
    for (k, m) in metrics.iter_mut().enumerate() {
        let ours: Vec<f64> = runs.iter().map(|(_, ms)| ms[k].ours).collect();
        let est = crate::studies::Estimate::of(&ours);
        m.ours = est.mean;
        m.ours_half = Some(est.half);
        m.seeds = n;
        if m.drawn.is_some() {
            let drawn: Vec<f64> = runs.iter().filter_map(|(_, ms)| ms[k].drawn).collect();
            m.drawn = Some(crate::studies::Estimate::of(&drawn).mean);
        }
    }
    let first = runs.into_iter().next().expect("one seed at least").0;
    Ok(Seeded { first, metrics, judged })
}

/// Runs `e` with `seed`, or its scenario's own.
fn run_seed(e: &Experiment, seed: Option<u64>) -> anyhow::Result<(Run, Vec<Metric>)> {
    let mut scenario = scenario(e)?;
    if let Some(s) = seed {
        scenario.machine.seed = s;
    }
    let mut sim = crate::simulator(&scenario, None).with_context(|| format!("experiment {}", e.id))?;
    sim.record_jobs();
    sim.run_until(u64::MAX);
    let (result, jobs) = sim.finish_all();
    let result = crate::whole(result).with_context(|| format!("experiment {}", e.id))?;
    let draws = draws(&scenario, &jobs);
    let ideal = ideal_of_run(&scenario, &draws);
    let run = Run { scenario, result, ideal, draws };
    let metrics = (e.metrics)(&run);
    Ok((run, metrics))
}
