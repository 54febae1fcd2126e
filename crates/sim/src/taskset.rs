//! Periodic task sets for schedulability studies (`smartsim taskset`, `smartsim schedulability`).
//!
//! A set is `n` periodic tasks with implicit deadlines (deadline = period) and fixed execution times,
//! drawn from a [`TasksetSpec`] and a seed: the same spec and seed always give the same set (the draws
//! use the workload crate's `rand` and `rand_pcg`, nothing else). How it is drawn:
//!
//! 1. **Utilisations** `u_1 … u_n` summing to the total `U`, by one of three [`Generator`]s:
//!    - [`uunifast`], Bini and Buttazzo, "Measuring the performance of schedulability tests"
//!      (Real-Time Systems 30, 2005): uniform over the simplex `Σu = U`, `u ≥ 0`; for one CPU
//!      (`U ≤ 1`), where no task can exceed 1.
//!    - [`uunifast_discard`], Davis and Burns, "Priority assignment for global fixed priority
//!      pre-emptive scheduling in multiprocessor real-time systems" (RTSS 2009): UUniFast for `U` up
//!      to the number of tasks, a set with a task above 1 drawn again. Uniform over the slice of the
//!      simplex inside the unit cube, but the share of sets thrown away grows quickly as `U`
//!      nears `n` (Emberson et al. call it impractical above `n/2`): after [`MAX_DISCARD_DRAWS`]
//!      draws it gives up and says to use RandFixedSum.
//!    - [`randfixedsum`], Stafford's algorithm as used by Emberson, Stafford and Davis, "Techniques for
//!      the synthesis of multiprocessor tasksets" (WATERS 2010): the same distribution (uniform over
//!      `Σu = U` inside the cube `[a, b]^n`, here `[0, 1]^n`), drawn directly, with no redraw.
//! 2. **Periods**, by [`Periods`]: uniform or log-uniform (Emberson et al.'s choice: as many periods
//!    in 10–100 ms as in 100–1000 ms) in `[period_min, period_max]`, or harmonic (`base·2^k`, `base`
//!    the least period allowed, so that every period divides the longer ones); rounded to a multiple
//!    of `granularity` (1 ns: not rounded) within the bounds.
//! 3. **Execution times** `C_i = ⌊u_i·T_i⌋` ns, at least 1 ns: the set's utilisation as written
//!    ([`Taskset::utilisation`]) is at most `U`, short of it by less than `n` ns over the shortest
//!    period (the 1 ns floor aside).
//!
//! A set becomes a scenario ([`Taskset::to_toml`], [`Taskset::scenario`]) on a machine with no clock
//! tick, exact billing, high-resolution timers and no overheads; each task `on_miss = "finish"`
//! (a late request completes late and counts as missed), `estimate = "exact"` and `notify =
//! "never"`. Under a fixed-priority policy ([`fixed_priority`]) the tasks get rate-monotonic
//! priorities, distinct (equal periods ordered by task), so that `smartsim rta` is exact on them.
//!
//! Where it is weak: periods are drawn independently of the utilisations (as in the papers), so a
//! set's hyperperiod is usually huge unless periods are harmonic or coarsely rounded; the default
//! horizon ([`Taskset::default_duration`]) is then cut at one second (or the longest period).
//! RandFixedSum keeps an `n²/2` table of transition probabilities, so it is limited to
//! [`MAX_RANDFIXEDSUM_TASKS`] tasks.

use std::fmt;
use std::fmt::Write as _;

use serde::Serialize;
use workload::rand::seq::SliceRandom;
use workload::rand::{Rng, SeedableRng};
use workload::rand_pcg::Pcg64;
use workload::{format_time, Nanos, Scenario, ScenarioError};

/// The most tasks a set may have.
pub const MAX_TASKS: usize = 10_000;
/// The most tasks RandFixedSum draws for (its table holds about `n²/2` numbers: 4 MB at 1000).
pub const MAX_RANDFIXEDSUM_TASKS: usize = 1_000;
/// Draws UUniFast-discard makes before it gives up on a set.
pub const MAX_DISCARD_DRAWS: u32 = 100_000;
/// The default horizon's cap: a set is simulated for its hyperperiod, or this long (or its longest
/// period, if longer) when the hyperperiod is longer.
pub const HORIZON_CAP: Nanos = 1_000_000_000;

/// How the tasks' utilisations are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Generator {
    /// UUniFast (Bini and Buttazzo 2005): uniform over the simplex; one CPU, U at most 1.
    Uunifast,
    /// UUniFast-discard (Davis and Burns 2009): UUniFast, a set with a task above utilisation 1 drawn
    /// again; U up to the number of tasks, slow as U nears it.
    UunifastDiscard,
    /// RandFixedSum (Stafford; Emberson, Stafford and Davis 2010): the same distribution as
    /// UUniFast-discard, drawn directly; U up to the number of tasks, at most 1000 tasks.
    Randfixedsum,
}

impl Generator {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Generator::Uunifast => "uunifast",
            Generator::UunifastDiscard => "uunifast-discard",
            Generator::Randfixedsum => "randfixedsum",
        }
    }
}

/// How the tasks' periods are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Periods {
    /// Uniform in [min, max] (on the multiples of the granularity).
    Uniform,
    /// Log-uniform in [min, max]: as many periods in 10-100 ms as in 100-1000 ms.
    LogUniform,
    /// Harmonic: base·2^k within [min, max], base the least multiple of the granularity at or above
    /// min, k uniform; every period divides the longer ones.
    Harmonic,
}

impl Periods {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Periods::Uniform => "uniform",
            Periods::LogUniform => "log-uniform",
            Periods::Harmonic => "harmonic",
        }
    }
}

/// What a task set is drawn from. [`TasksetSpec::check`] states the rules.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TasksetSpec {
    /// Tasks in the set (1 to [`MAX_TASKS`]).
    pub tasks: usize,
    /// Total utilisation U: above 0, at most `cpus`, and at most `tasks`.
    pub utilisation: f64,
    /// CPUs of the machine (1 to `workload::MAX_CPUS`).
    pub cpus: u32,
    /// How the utilisations are drawn.
    pub generator: Generator,
    /// How the periods are drawn.
    pub periods: Periods,
    /// Least period, ns (above 0).
    pub period_min: Nanos,
    /// Greatest period, ns (at least `period_min`, at most `workload::MAX_TIME`).
    pub period_max: Nanos,
    /// Periods are multiples of this, ns (1: any); some multiple must lie in `[period_min, period_max]`.
    pub granularity: Nanos,
}

impl Default for TasksetSpec {
    /// Ten tasks at U = 0.5 on one CPU, UUniFast-discard, periods log-uniform in 10-100 ms.
    fn default() -> Self {
        TasksetSpec {
            tasks: 10,
            utilisation: 0.5,
            cpus: 1,
            generator: Generator::UunifastDiscard,
            periods: Periods::LogUniform,
            period_min: 10_000_000,
            period_max: 100_000_000,
            granularity: 1,
        }
    }
}

/// A spec that breaks a rule: the field (as [`TasksetSpec`] names it), its value, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The field, e.g. `"utilisation"` (the command line's `--utilisation`).
    pub field: &'static str,
    /// Its value, as written in messages.
    pub value: String,
    /// What is wrong, and what would do.
    pub message: String,
}

impl SpecError {
    fn new(field: &'static str, value: impl fmt::Display, message: impl Into<String>) -> SpecError {
        SpecError { field, value: value.to_string(), message: message.into() }
    }

    /// The command-line option of the field: `period_min` → `--period-min`.
    pub fn option(&self) -> String {
        format!("--{}", self.field.replace('_', "-"))
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.option(), self.value, self.message)
    }
}

impl std::error::Error for SpecError {}

impl TasksetSpec {
    /// Checks every rule, the first broken one is the error: `tasks` 1 to [`MAX_TASKS`] (to
    /// [`MAX_RANDFIXEDSUM_TASKS`] under RandFixedSum); `cpus` 1 to `workload::MAX_CPUS`;
    /// `utilisation` finite, above 0, at most `cpus` and at most `tasks` (no task above 1), at most 1
    /// under plain UUniFast; `period_min` above 0, `period_max` at least it and at most
    /// `workload::MAX_TIME`; `granularity` above 0 with a multiple in the bounds.
    pub fn check(&self) -> Result<(), SpecError> {
        let n = self.tasks;
        if n == 0 || n > MAX_TASKS {
            return Err(SpecError::new("tasks", n, format!("a set has 1 to {MAX_TASKS} tasks")));
        }
        if self.generator == Generator::Randfixedsum && n > MAX_RANDFIXEDSUM_TASKS {
            return Err(SpecError::new(
                "tasks",
                n,
                format!(
                    "RandFixedSum draws at most {MAX_RANDFIXEDSUM_TASKS} tasks (its table grows with the square \
                     of the tasks); use uunifast-discard"
                ),
            ));
        }
        if self.cpus == 0 || self.cpus > workload::MAX_CPUS {
            return Err(SpecError::new(
                "cpus",
                self.cpus,
                format!("a machine has 1 to {} CPUs", workload::MAX_CPUS),
            ));
        }
        let u = self.utilisation;
        if !u.is_finite() || u <= 0.0 {
            return Err(SpecError::new("utilisation", u, "the total utilisation must be a number above 0"));
        }
        if u > f64::from(self.cpus) {
            return Err(SpecError::new(
                "utilisation",
                u,
                format!(
                    "more work than {} can do: no policy can meet every deadline; at most {} (give --cpus for more)",
                    if self.cpus == 1 { "1 CPU".to_string() } else { format!("{} CPUs", self.cpus) },
                    self.cpus
                ),
            ));
        }
        if u > n as f64 {
            return Err(SpecError::new(
                "utilisation",
                u,
                format!("above the {n} tasks: some task would need more than a whole CPU; at most {n}"),
            ));
        }
        if self.generator == Generator::Uunifast && u > 1.0 {
            return Err(SpecError::new(
                "utilisation",
                u,
                "UUniFast draws for one CPU (U at most 1): above 1 a task could need more than a CPU; use \
                 uunifast-discard or randfixedsum",
            ));
        }
        let t = format_time;
        if self.period_min == 0 {
            return Err(SpecError::new("period_min", "0s", "a period must be above 0"));
        }
        if self.period_max > workload::MAX_TIME {
            return Err(SpecError::new(
                "period_max",
                t(self.period_max),
                format!("longer than the longest time a scenario takes ({})", t(workload::MAX_TIME)),
            ));
        }
        if self.period_max < self.period_min {
            return Err(SpecError::new(
                "period_max",
                t(self.period_max),
                format!("shorter than --period-min {}: give min ≤ max", t(self.period_min)),
            ));
        }
        if self.granularity == 0 {
            return Err(SpecError::new(
                "granularity",
                "0s",
                "periods are multiples of it: give at least 1ns",
            ));
        }
        if self.grid().is_none() {
            return Err(SpecError::new(
                "granularity",
                t(self.granularity),
                format!("no multiple of it lies in [{}, {}]", t(self.period_min), t(self.period_max)),
            ));
        }
        Ok(())
    }

    /// The least and greatest multiples of `granularity` in `[period_min, period_max]`, as multiples.
    fn grid(&self) -> Option<(u64, u64)> {
        let g = self.granularity.max(1);
        let (lo, hi) = (self.period_min.div_ceil(g), self.period_max / g);
        (lo >= 1 && lo <= hi).then_some((lo, hi))
    }

    /// The set of `seed` (checked first). Fails only on a spec that breaks a rule, or when
    /// UUniFast-discard finds no set in [`MAX_DISCARD_DRAWS`] draws.
    pub fn generate(&self, seed: u64) -> Result<Taskset, SpecError> {
        self.check()?;
        let mut rng = Pcg64::seed_from_u64(seed);
        let (n, total) = (self.tasks, self.utilisation);
        let us = match self.generator {
            Generator::Uunifast => uunifast(&mut rng, n, total),
            Generator::UunifastDiscard => uunifast_discard(&mut rng, n, total, MAX_DISCARD_DRAWS).ok_or_else(|| {
                SpecError::new(
                    "utilisation",
                    total,
                    format!(
                        "UUniFast-discard drew {MAX_DISCARD_DRAWS} sets of {n} tasks and each had a task above \
                         utilisation 1 (U is too close to the number of tasks): use --generator randfixedsum"
                    ),
                )
            })?,
            Generator::Randfixedsum => randfixedsum(&mut rng, n, total, 0.0, 1.0),
        };
        let (lo, hi) = self.grid().expect("checked");
        let g = self.granularity;
        let tasks = us
            .iter()
            .enumerate()
            .map(|(i, &u)| {
                let period = g * self.draw_period(&mut rng, lo, hi);
                let exec = ((u * period as f64).floor() as Nanos).clamp(1, period);
                TaskDraw { name: format!("T{}", i + 1), utilisation: u, period, exec, priority: 0 }
            })
            .collect();
        let mut set = Taskset { seed, cpus: self.cpus, tasks };
        set.rate_monotonic();
        Ok(set)
    }

    /// A period in multiples of the granularity, in `lo..=hi`.
    fn draw_period(&self, rng: &mut Pcg64, lo: u64, hi: u64) -> u64 {
        match self.periods {
            Periods::Uniform => rng.random_range(lo..=hi),
            Periods::LogUniform => {
                let (a, b) = ((lo as f64).ln(), (hi as f64).ln());
                let x = (a + rng.random::<f64>() * (b - a)).exp();
                (x.round() as u64).clamp(lo, hi)
            }
            Periods::Harmonic => {
                // base·2^k ≤ hi: the largest k.
                let mut top = 0u32;
                while lo.checked_shl(top + 1).is_some_and(|p| p >> (top + 1) == lo && p <= hi) {
                    top += 1;
                }
                lo << rng.random_range(0..=top)
            }
        }
    }
}

/// One task of a drawn set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskDraw {
    /// `T1`, `T2`, … in the order drawn.
    pub name: String,
    /// The utilisation drawn for it (its `exec / period` is this, rounded down to a whole ns of exec).
    pub utilisation: f64,
    /// Period = relative deadline, ns.
    pub period: Nanos,
    /// Execution time of every request, ns (at least 1).
    pub exec: Nanos,
    /// Its rate-monotonic priority: `n` for the shortest period down to 1 (larger is more urgent;
    /// equal periods ordered by task).
    pub priority: i32,
}

/// A drawn task set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Taskset {
    /// The seed it was drawn from.
    pub seed: u64,
    /// The CPUs it was drawn for.
    pub cpus: u32,
    /// Its tasks.
    pub tasks: Vec<TaskDraw>,
}

impl Taskset {
    /// Rate-monotonic priorities: shorter period first, equal periods by task order.
    fn rate_monotonic(&mut self) {
        let mut order: Vec<usize> = (0..self.tasks.len()).collect();
        order.sort_by_key(|&i| (self.tasks[i].period, i));
        let n = self.tasks.len() as i32;
        for (rank, &i) in order.iter().enumerate() {
            self.tasks[i].priority = n - rank as i32;
        }
    }

    /// Its utilisation as written: `Σ exec/period`.
    pub fn utilisation(&self) -> f64 {
        self.tasks.iter().map(|t| t.exec as f64 / t.period as f64).sum()
    }

    /// The least common multiple of the periods, if at most `limit`.
    pub fn hyperperiod(&self, limit: Nanos) -> Option<Nanos> {
        let mut h: u128 = 1;
        for t in &self.tasks {
            let p = u128::from(t.period);
            h = h / gcd(h, p) * p;
            if h > u128::from(limit) {
                return None;
            }
        }
        Nanos::try_from(h).ok()
    }

    /// The longest period.
    pub fn longest_period(&self) -> Nanos {
        self.tasks.iter().map(|t| t.period).max().unwrap_or(0)
    }

    /// The horizon a set is simulated for by default: its hyperperiod, or `cap` = max([`HORIZON_CAP`],
    /// the longest period) when the hyperperiod is longer. With synchronous release (every task's
    /// first request at 0) a schedule repeats every hyperperiod, so a hyperperiod without a miss under
    /// EDF or fixed priorities means none ever (on one CPU); and the longest period covers every task's
    /// first request, where fixed priorities meet their worst case (the critical instant, Liu and
    /// Layland 1973), so the simulation of a fixed-priority policy on one CPU accepts exactly the sets
    /// response-time analysis accepts even when cut at the cap. Under EDF above U = 1 a cut horizon can
    /// miss the first miss.
    pub fn default_duration(&self) -> Nanos {
        let cap = HORIZON_CAP.max(self.longest_period());
        self.hyperperiod(cap).unwrap_or(cap)
    }

    /// The scenario as TOML text, in the format of docs/scenario.md: `policy` for `duration` (None:
    /// [`Taskset::default_duration`]); rate-monotonic `priority` keys when `priorities` says so.
    /// `about` is written as comment lines at the top (what drew it, how to draw it again).
    pub fn to_toml(&self, policy: &str, duration: Option<Nanos>, priorities: bool, about: &str) -> String {
        let mut s = String::new();
        for line in about.lines() {
            let _ = writeln!(s, "# {line}");
        }
        let _ = writeln!(
            s,
            "# {} tasks, utilisation {:.6} as written (exec rounded down to whole ns), deadlines = periods.",
            self.tasks.len(),
            self.utilisation()
        );
        let duration = duration.unwrap_or_else(|| self.default_duration());
        let _ = write!(
            s,
            "\n[machine]\ncpus = {}\nhz = 0\nbilling = \"exact\"\ntimer = \"hr\"\nduration = \"{}\"\nseed = {}\n\n\
             [scheduler]\npolicy = {}\n",
            self.cpus,
            format_time(duration),
            self.seed,
            toml_string(policy)
        );
        for t in &self.tasks {
            let _ = write!(
                s,
                "\n[[task]]\nname = \"{}\"\nmodel = \"periodic\"\nexec = \"{}\"\nperiod = \"{}\"\n\
                 on_miss = \"finish\"\nestimate = \"exact\"\nnotify = \"never\"\n",
                t.name,
                format_time(t.exec),
                format_time(t.period)
            );
            if priorities {
                let _ = writeln!(s, "priority = {}", t.priority);
            }
        }
        s
    }

    /// The scenario of [`Taskset::to_toml`] (with no comment), parsed as a file named `name` would be:
    /// what `smartsim run` would run from the written file.
    pub fn scenario(
        &self,
        name: &str,
        policy: &str,
        duration: Option<Nanos>,
        priorities: bool,
    ) -> Result<Scenario, ScenarioError> {
        workload::parse_str(&self.to_toml(policy, duration, priorities, ""), name)
    }
}

/// Whether `policy` is one of fixed priorities: the registry runs it in Linux's `SCHED_FIFO` or
/// `SCHED_RR` (`fifo`, `rr`, `rt`, `sys`, `svr4-rt`). Such a policy's sets get rate-monotonic
/// priorities; the others' (EDF, SMART, …) none, since SMART, for one, puts priority before deadlines.
pub fn fixed_priority(policy: &str) -> bool {
    sched::registry::entry(policy).is_some_and(|e| {
        matches!(e.linux, sched::registry::LinuxClass::Fifo | sched::registry::LinuxClass::Rr)
    })
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// UUniFast (Bini and Buttazzo 2005): `n` utilisations summing to `total`, uniform over the simplex
/// `Σu = total, u ≥ 0`. The sum left for tasks `i..n` is drawn as the previous one times `r^{1/(n−i)}`
/// (the largest of `n − i` uniform draws, scaled), and task `i − 1` takes the difference.
pub fn uunifast(rng: &mut impl Rng, n: usize, total: f64) -> Vec<f64> {
    let mut us = Vec::with_capacity(n);
    let mut rest = total;
    for i in 1..n {
        let next = rest * rng.random::<f64>().powf(1.0 / (n - i) as f64);
        us.push(rest - next);
        rest = next;
    }
    us.push(rest);
    us
}

/// UUniFast-discard (Davis and Burns 2009): [`uunifast`] drawn again while a task is above 1, at most
/// `draws` times; `None` if every draw had one.
pub fn uunifast_discard(rng: &mut impl Rng, n: usize, total: f64, draws: u32) -> Option<Vec<f64>> {
    (0..draws).map(|_| uunifast(rng, n, total)).find(|us| us.iter().all(|&u| u <= 1.0))
}

/// RandFixedSum (Roger Stafford's algorithm, as Emberson, Stafford and Davis 2010 use it): `n` values
/// in `[lo, hi]` summing to `total`, uniformly distributed over that slice of the cube. Needs `n ≥ 1`,
/// `lo ≤ hi` and `n·lo ≤ total ≤ n·hi` (panics otherwise: the caller checks).
///
/// The method: scaled to the unit cube the values sum to `s = (total − n·lo)/(hi − lo)`. Cut by the
/// hyperplane `Σx = s` the cube's standard triangulation (the `n!` simplices `x_σ(1) ≥ … ≥ x_σ(n)`, each
/// cut again at the integer levels the partial sums cross) leaves a union of `n − 1`-dimensional
/// simplices. A point is drawn by walking down the dimensions: at dimension `d` the walk either keeps
/// the remaining sum `σ` or takes 1 from it (a coordinate "at the top"), with the probability that
/// the volume of each choice gives; those volumes follow the recursion of the Irwin–Hall density,
/// `f_d(σ) = (σ·f_{d−1}(σ) + (d − σ)·f_{d−1}(σ − 1)) / (d − 1)`, tabulated for the `σ` the walk can
/// reach (`s − j`, `j` whole), scaled by `f64::MAX` so that it underflows as late as possible. Inside the
/// chosen simplex the point is uniform: barycentric weights from `r^{1/d}` (a Beta(d, 1) draw). The
/// coordinates are then put in a random order (the triangulation orders them) and scaled back.
pub fn randfixedsum(rng: &mut impl Rng, n: usize, total: f64, lo: f64, hi: f64) -> Vec<f64> {
    assert!(n >= 1 && lo <= hi, "randfixedsum: n ≥ 1 and lo ≤ hi");
    let nf = n as f64;
    assert!(
        total >= nf * lo - 1e-9 * nf.max(1.0) && total <= nf * hi + 1e-9 * nf.max(1.0),
        "randfixedsum: the sum is outside [n·lo, n·hi]"
    );
    if n == 1 || hi == lo {
        return vec![if n == 1 { total } else { lo }; n];
    }
    let width = hi - lo;
    let s0 = (total - nf * lo) / width;
    // The walk starts in the unit interval [k, k + 1] that holds s.
    let k = (s0.floor().max(0.0) as usize).min(n - 1);
    let s = s0.clamp(k as f64, k as f64 + 1.0);
    // vol[c] at dimension d: f_d(σ_c) (times f64::MAX and a factor that depends on d only), for the
    // remaining sums σ_c = (s − k) + c − 1 the walk can reach; column 0 is σ < 0, always empty.
    // take[d − 2][c − 1]: at dimension d and column c, the probability that the walk takes 1.
    let frac = s - k as f64;
    let mut take: Vec<Vec<f64>> = Vec::with_capacity(n - 1);
    let mut vol = vec![0.0; n + 1];
    vol[1] = f64::MAX; // f_1 = 1 on [0, 1]
    let tiny = f64::from_bits(1); // the least positive f64: 0/0 reads as "keep" low, "take" high.
    for d in 2..=n {
        let df = d as f64;
        let mut next = vec![0.0; n + 1];
        let mut row = Vec::with_capacity(d);
        for c in 1..=d {
            let sigma = frac + (c - 1) as f64;
            let keep = vol[c] * sigma / df;
            let took = vol[c - 1] * (df - sigma) / df;
            next[c] = keep + took;
            let all = next[c] + tiny;
            // The ratio from the smaller side, where it is accurate.
            row.push(if df - sigma > sigma { took / all } else { 1.0 - keep / all });
        }
        take.push(row);
        vol = next;
    }
    // The walk. Draws are in (0, 1], so a probability of exactly 0 or 1 is never crossed.
    let mut unit = || 1.0 - rng.random::<f64>();
    let mut x = vec![0.0; n];
    let (mut sigma, mut col) = (s, k);
    let (mut sum, mut prod) = (0.0, 1.0);
    for i in (1..n).rev() {
        let took = unit() <= take[i - 1][col];
        let shrink = unit().powf(1.0 / i as f64);
        sum += (1.0 - shrink) * prod * sigma / (i + 1) as f64;
        prod *= shrink;
        x[n - 1 - i] = sum + if took { prod } else { 0.0 };
        if took {
            sigma -= 1.0;
            col -= 1;
        }
    }
    x[n - 1] = sum + prod * sigma;
    x.shuffle(rng);
    for v in &mut x {
        *v = lo + width * *v;
    }
    x
}
