//! Execution-time (and think-time) distributions: [`Exec`].

use std::fmt;

use rand::Rng;

use crate::time::{format_time, parse_bounded_time, Nanos, MAX_TIME};

/// How much CPU time one request needs (or, for `think`, how long a user waits).
///
/// Written in a scenario as a fixed time `"30ms"`, a uniform range `"28ms..30ms"`, an exponential
/// distribution `"exp(20ms)"` (by its mean), a normal distribution `"normal(20ms, 2ms)"` (mean,
/// standard deviation), truncated at 0 by redrawing negative values, a correlated series
/// `"ar1(28.35ms, 2.19ms, 0.8)"` (mean, standard deviation, lag-1 correlation: successive JPEG frames
/// cost alike, Nieh §3.5.1), or the times of a file, `"file(frames.txt)"`, in order.
///
/// `ar1` and `file` are series: each draw depends on the ones before it, so a task draws them through
/// its [`crate::Stream`], which keeps their state ([`Series`]); [`Exec::sample`] alone draws an `ar1`
/// from its marginal distribution (a normal of that mean and deviation) and cannot read a file (it
/// gives its mean).
///
/// Sampling uses only the given random generator, so a seeded generator (the project uses
/// `rand_pcg::Pcg64`) gives the same sequence on every run and machine. Every time in it is at most
/// [`MAX_TIME`] when parsed, and so is every draw (an exponential or normal draw beyond it is
/// clamped), so that a draw added to an instant of a run cannot wrap (`sched`'s "Time that cannot
/// wrap").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exec {
    /// Always this time.
    Fixed(Nanos),
    /// Uniform over the integers `[a, b]` (inclusive), `a <= b`.
    Uniform(Nanos, Nanos),
    /// Exponential with this mean (memoryless: Poisson arrivals when used as a think time).
    Exponential {
        /// The mean, > 0.
        mean: Nanos,
    },
    /// Normal with this mean and standard deviation, truncated at 0 (negative draws are redrawn).
    Normal {
        /// The mean of the untruncated distribution, > 0.
        mean: Nanos,
        /// The standard deviation.
        sd: Nanos,
    },
    /// A first-order autoregressive series of normal marginal (mean, standard deviation) whose
    /// successive draws correlate by `rho`: `x₀ = mean + sd·z₀`, `xₖ = mean + rho·(xₖ₋₁ − mean) +
    /// sd·√(1 − rho²)·zₖ`, each `z` standard normal; a negative value counts as 0 (the series goes on
    /// from it unclamped).
    Ar1 {
        /// The mean, > 0.
        mean: Nanos,
        /// The standard deviation of every draw.
        sd: Nanos,
        /// The lag-1 correlation in millionths, -999,999..=999,999 (kept as an integer so that an
        /// `Exec` compares exactly).
        rho_ppm: i32,
    },
    /// The times of a file, one per request in order, from the first again after the last: the
    /// task's trace number `id` ([`crate::TaskSpec::traces`]), with the file's statistics.
    Trace {
        /// Which of the task's traces.
        id: u32,
        /// Their mean, smallest and largest.
        mean: Nanos,
        /// The smallest time.
        min: Nanos,
        /// The largest time.
        max: Nanos,
    },
}

/// The state of a series ([`Exec::Ar1`], [`Exec::Trace`]) a task draws from: the last value of an AR(1)
/// series, the position in a trace. One per role (a task's `exec`, its `think`, ...), kept by its
/// [`crate::Stream`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    prev: Option<f64>,
    next: usize,
}

impl Series {
    /// The next value of `e` for this series, `traces` being the task's traces; a distribution that is
    /// not a series is drawn as by [`Exec::sample`]. At most [`MAX_TIME`].
    pub fn draw<R: Rng + ?Sized>(&mut self, e: &Exec, traces: &[crate::Trace], rng: &mut R) -> Nanos {
        match *e {
            Exec::Ar1 { mean, sd, rho_ppm } => {
                let (m, s, rho) = (mean as f64, sd as f64, f64::from(rho_ppm) / 1e6);
                let z = standard_normal(rng);
                let x = match self.prev {
                    None => m + s * z,
                    Some(p) => m + rho * (p - m) + s * (1.0 - rho * rho).sqrt() * z,
                };
                self.prev = Some(x);
                to_nanos(x.max(0.0)).min(MAX_TIME)
            }
            Exec::Trace { id, mean, .. } => {
                match traces.get(id as usize).map(|t| &t.times).filter(|t| !t.is_empty()) {
                    Some(t) => {
                        let x = t[self.next % t.len()];
                        self.next = (self.next + 1) % t.len();
                        x.min(MAX_TIME)
                    }
                    None => mean,
                }
            }
            _ => e.sample(rng),
        }
    }
}

/// A standard normal draw (Box-Muller, one of the pair).
fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1: f64 = rng.random();
    let u2: f64 = rng.random();
    (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

impl Exec {
    /// Draws one value, at most [`MAX_TIME`]. Deterministic for a given generator state.
    ///
    /// ```
    /// use rand::SeedableRng;
    /// let exec: workload::Exec = "28ms..30ms".parse().unwrap();
    /// let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
    /// let x = exec.sample(&mut rng);
    /// assert!((28_000_000..=30_000_000).contains(&x));
    /// ```
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Nanos {
        self.draw(rng).min(MAX_TIME)
    }

    #[inline]
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Nanos {
        match *self {
            Exec::Fixed(t) => t,
            Exec::Uniform(a, b) => rng.random_range(a..=b),
            Exec::Exponential { mean } => {
                // Inverse transform; 1 - u is in (0, 1], so the logarithm is finite.
                let u: f64 = rng.random();
                to_nanos(-(mean as f64) * (1.0 - u).ln())
            }
            Exec::Trace { mean, .. } => mean,
            Exec::Normal { mean, sd } | Exec::Ar1 { mean, sd, .. } => {
                if sd == 0 {
                    return mean;
                }
                // Box-Muller, redrawing negative values (truncation at 0). The mean is > 0, so
                // each draw is non-negative with probability > 1/2: 64 redraws fail with
                // probability < 2^-64, and then 0 is returned.
                for _ in 0..64 {
                    let u1: f64 = rng.random();
                    let u2: f64 = rng.random();
                    let z = (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                    let x = mean as f64 + sd as f64 * z;
                    if x >= 0.0 {
                        return to_nanos(x);
                    }
                }
                0
            }
        }
    }

    /// The mean of the distribution (for `Normal`, the mean parameter, ignoring the truncation
    /// at 0, which matters only when `sd` is not small against `mean`).
    pub fn mean(&self) -> Nanos {
        match *self {
            Exec::Fixed(t) => t,
            Exec::Uniform(a, b) => a + (b - a) / 2,
            Exec::Exponential { mean } | Exec::Normal { mean, .. } | Exec::Ar1 { mean, .. } => mean,
            Exec::Trace { mean, .. } => mean,
        }
    }

    /// The largest value that can be drawn, if bounded (`Fixed`, `Uniform`); `None` for
    /// unbounded distributions.
    pub fn max(&self) -> Option<Nanos> {
        match *self {
            Exec::Fixed(t) | Exec::Uniform(_, t) | Exec::Trace { max: t, .. } => Some(t),
            Exec::Exponential { .. } | Exec::Normal { .. } | Exec::Ar1 { .. } => None,
        }
    }

    /// The smallest value that can be drawn.
    pub fn min(&self) -> Nanos {
        match *self {
            Exec::Fixed(t) | Exec::Uniform(t, _) | Exec::Trace { min: t, .. } => t,
            Exec::Exponential { .. } | Exec::Normal { .. } | Exec::Ar1 { .. } => 0,
        }
    }
}

/// The random generator for one task's draws: a `Pcg64` derived from the scenario's seed and the
/// task's name.
///
/// Giving each task its own generator, keyed by name, keeps a task's draws the same when other
/// tasks are added, removed or reordered, so two runs that differ in one task compare like with
/// like. The derivation (FNV-1a of the name, SplitMix64 to spread the bits) is fixed here and
/// must not change, or every seeded result changes.
///
/// ```
/// use workload::{task_rng, Exec};
/// let e = Exec::Uniform(0, 1_000_000);
/// let a = e.sample(&mut task_rng(1, "R1"));
/// assert_eq!(a, e.sample(&mut task_rng(1, "R1")));
/// ```
pub fn task_rng(seed: u64, name: &str) -> rand_pcg::Pcg64 {
    // FNV-1a, 64 bits.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut x = seed ^ h.rotate_left(32);
    let mut next = || {
        // SplitMix64.
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let state = (u128::from(next()) << 64) | u128::from(next());
    let stream = (u128::from(next()) << 64) | u128::from(h);
    rand_pcg::Pcg64::new(state, stream)
}

/// Rounds a non-negative float of nanoseconds, saturating at `u64::MAX`.
fn to_nanos(x: f64) -> Nanos {
    // `as` saturates on overflow and maps NaN to 0.
    x.round() as Nanos
}

const EXEC_FORMS: &str =
    "a time \"30ms\", a range \"28ms..30ms\", \"exp(<mean>)\", \"normal(<mean>, <sd>)\", \
     \"ar1(<mean>, <sd>, <correlation>)\" or \"file(<path>)\"";

impl std::str::FromStr for Exec {
    type Err = String;

    /// Parses `"30ms"`, `"28ms..30ms"`, `"exp(20ms)"` or `"normal(20ms, 2ms)"` and checks the
    /// invariants (`a <= b`, means > 0).
    fn from_str(s: &str) -> Result<Exec, String> {
        let t = s.trim();
        let time = |part: &str| parse_bounded_time(part).map_err(|e| e.to_string());
        if let Some(inner) = t.strip_prefix("exp(").and_then(|r| r.strip_suffix(')')) {
            let mean = time(inner)?;
            if mean == 0 {
                return Err("the mean of exp(...) must be > 0".into());
            }
            return Ok(Exec::Exponential { mean });
        }
        if let Some(inner) = t.strip_prefix("normal(").and_then(|r| r.strip_suffix(')')) {
            let Some((m, sd)) = inner.split_once(',') else {
                return Err(format!(
                    "\"{t}\": normal takes a mean and a standard deviation, e.g. \"normal(20ms, 2ms)\""
                ));
            };
            let (mean, sd) = (time(m)?, time(sd)?);
            if mean == 0 {
                return Err("the mean of normal(...) must be > 0".into());
            }
            return Ok(Exec::Normal { mean, sd });
        }
        if let Some(inner) = t.strip_prefix("ar1(").and_then(|r| r.strip_suffix(')')) {
            let parts: Vec<&str> = inner.split(',').collect();
            let [m, sd, rho] = parts[..] else {
                return Err(format!(
                    "\"{t}\": ar1 takes a mean, a standard deviation and a lag-1 correlation, e.g. \
                     \"ar1(28.35ms, 2.19ms, 0.8)\""
                ));
            };
            let (mean, sd) = (time(m)?, time(sd)?);
            if mean == 0 {
                return Err("the mean of ar1(...) must be > 0".into());
            }
            let rho: f64 = rho.trim().parse().map_err(|_| {
                format!("\"{}\": the correlation of ar1(...) is a number in (-1, 1), e.g. 0.8", rho.trim())
            })?;
            if !(rho > -1.0 && rho < 1.0) {
                return Err(format!("the correlation of ar1(...) must be in (-1, 1), not {rho}"));
            }
            return Ok(Exec::Ar1 { mean, sd, rho_ppm: (rho * 1e6).round() as i32 });
        }
        if t.starts_with("file(") {
            return Err(format!(
                "\"{t}\": a file's times are read where the scenario is read (a task's `exec`, `think`, ...), \
                 not from a lone string"
            ));
        }
        if let Some((a, b)) = t.split_once("..") {
            let (a, b) = (time(a)?, time(b)?);
            if a > b {
                return Err(format!(
                    "empty range \"{t}\": the lower bound {} is above the upper bound {}",
                    format_time(a),
                    format_time(b)
                ));
            }
            return Ok(Exec::Uniform(a, b));
        }
        if t.contains('(') {
            return Err(format!("\"{t}\" is not a distribution: write {EXEC_FORMS}"));
        }
        parse_bounded_time(t).map(Exec::Fixed).map_err(|e| format!("{e}; an exec is {EXEC_FORMS}"))
    }
}

impl serde::Serialize for Exec {
    /// Serializes as the scenario syntax, e.g. `"28ms..30ms"`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for Exec {
    /// Writes the scenario syntax back, e.g. `28ms..30ms`; parsing it gives the same value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Exec::Fixed(t) => f.write_str(&format_time(t)),
            Exec::Uniform(a, b) => write!(f, "{}..{}", format_time(a), format_time(b)),
            Exec::Exponential { mean } => write!(f, "exp({})", format_time(mean)),
            Exec::Normal { mean, sd } => {
                write!(f, "normal({}, {})", format_time(mean), format_time(sd))
            }
            Exec::Ar1 { mean, sd, rho_ppm } => {
                write!(f, "ar1({}, {}, {})", format_time(mean), format_time(sd), f64::from(rho_ppm) / 1e6)
            }
            Exec::Trace { id, mean, .. } => write!(f, "file(#{id}, mean {})", format_time(mean)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    const MS: u64 = 1_000_000;

    fn p(s: &str) -> Exec {
        s.parse().unwrap()
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(p("30ms"), Exec::Fixed(30 * MS));
        assert_eq!(p("28ms..30ms"), Exec::Uniform(28 * MS, 30 * MS));
        assert_eq!(p(" 28ms .. 30ms "), Exec::Uniform(28 * MS, 30 * MS));
        assert_eq!(p("30ms..30ms"), Exec::Uniform(30 * MS, 30 * MS));
        assert_eq!(p("exp(20ms)"), Exec::Exponential { mean: 20 * MS });
        assert_eq!(p("normal(20ms, 2ms)"), Exec::Normal { mean: 20 * MS, sd: 2 * MS });
        assert_eq!(p("normal(20ms,2ms)"), Exec::Normal { mean: 20 * MS, sd: 2 * MS });
    }

    #[test]
    fn rejects_bad_forms() {
        let e = "30ms..28ms".parse::<Exec>().unwrap_err();
        assert!(e.contains("lower bound 30ms is above the upper bound 28ms"), "{e}");
        assert!("exp(0s)".parse::<Exec>().unwrap_err().contains("> 0"));
        assert!("normal(20ms)".parse::<Exec>().unwrap_err().contains("standard deviation"));
        assert!("gamma(2ms)".parse::<Exec>().unwrap_err().contains("not a distribution"));
        let e = "30".parse::<Exec>().unwrap_err();
        assert!(e.contains("no unit") && e.contains("a range"), "{e}");
        assert!("28..30ms".parse::<Exec>().unwrap_err().contains("no unit"));
    }

    #[test]
    fn display_round_trips() {
        for s in ["30ms", "28ms..30ms", "exp(20ms)", "normal(20ms, 2ms)", "1.5s..2s"] {
            assert_eq!(p(s).to_string(), s);
            assert_eq!(p(&p(s).to_string()), p(s));
        }
    }

    #[test]
    fn mean_max_min() {
        assert_eq!(p("28ms..30ms").mean(), 29 * MS);
        assert_eq!(p("28ms..30ms").max(), Some(30 * MS));
        assert_eq!(p("28ms..30ms").min(), 28 * MS);
        assert_eq!(p("30ms").max(), Some(30 * MS));
        assert_eq!(p("exp(20ms)").max(), None);
        assert_eq!(p("normal(20ms, 2ms)").mean(), 20 * MS);
    }

    fn draws(e: Exec, seed: u64, n: usize) -> Vec<Nanos> {
        let mut rng = Pcg64::seed_from_u64(seed);
        (0..n).map(|_| e.sample(&mut rng)).collect()
    }

    #[test]
    fn sampling_is_deterministic_for_a_seed() {
        for s in ["28ms..30ms", "exp(20ms)", "normal(20ms, 2ms)"] {
            let e = p(s);
            let a = draws(e, 7, 1000);
            assert_eq!(a, draws(e, 7, 1000), "{s}");
            assert_ne!(a, draws(e, 8, 1000), "{s}: another seed gives other draws");
            let distinct: std::collections::BTreeSet<_> = a.iter().collect();
            assert!(distinct.len() > 900, "{s}: draws vary");
        }
    }

    #[test]
    fn task_rngs_are_per_seed_and_name() {
        let e = p("0ns..1s");
        let run = |seed, name| {
            let mut r = task_rng(seed, name);
            (0..100).map(|_| e.sample(&mut r)).collect::<Vec<_>>()
        };
        assert_eq!(run(1, "R1"), run(1, "R1"));
        assert_ne!(run(1, "R1"), run(2, "R1"));
        assert_ne!(run(1, "R1"), run(1, "R2"));
        assert_ne!(run(0, ""), run(1, ""));
        // Pinned: these values must not change across versions (seeded results depend on them).
        assert_eq!(run(1, "R1")[..3], PINNED);
        let mut r = task_rng(1, "R1");
        let pinned: Vec<Nanos> =
            ["exp(20ms)", "normal(20ms, 2ms)"].iter().map(|s| p(s).sample(&mut r)).collect();
        assert_eq!(pinned, [10_583_334, 17_483_105]);
    }

    const PINNED: [Nanos; 3] = [410_904_345, 665_846_253, 411_678_644];

    #[test]
    fn an_ar1_series_has_its_mean_deviation_and_correlation() {
        // Table 6-2's News video: 28.35 ± 2.19 ms per frame, successive frames alike (rho 0.8).
        let e = p("ar1(28.35ms, 2.19ms, 0.8)");
        assert_eq!(e.to_string(), "ar1(28.35ms, 2.19ms, 0.8)");
        assert_eq!((e.mean(), e.max(), e.min()), (28_350_000, None, 0));
        let mut series = Series::default();
        let mut rng = Pcg64::seed_from_u64(5);
        let x: Vec<f64> = (0..50_000).map(|_| series.draw(&e, &[], &mut rng) as f64).collect();
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let lag1 = x.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum::<f64>() / (n - 1.0) / var;
        // The mean's standard error is sd/sqrt(n) × sqrt((1 + rho)/(1 − rho)) = 2.19 ms × 3 / 224 ≈ 29 µs.
        assert!((mean - 28.35e6).abs() < 150e3, "mean {mean}");
        assert!((var.sqrt() / 2.19e6 - 1.0).abs() < 0.05, "sd {}", var.sqrt());
        assert!((lag1 - 0.8).abs() < 0.02, "lag-1 correlation {lag1}");
        // Alone (no series state), each draw is the marginal normal: uncorrelated.
        let y: Vec<f64> = (0..50_000).map(|_| e.sample(&mut rng) as f64).collect();
        let m = y.iter().sum::<f64>() / n;
        let v = y.iter().map(|a| (a - m).powi(2)).sum::<f64>() / n;
        let l = y.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>() / (n - 1.0) / v;
        assert!(l.abs() < 0.02, "{l}");
    }

    #[test]
    fn a_trace_gives_its_times_in_order_and_starts_again() {
        let traces = [crate::Trace { path: "f".into(), times: vec![3, 1, 2].into() }];
        let e = Exec::Trace { id: 0, mean: 2, min: 1, max: 3 };
        let mut series = Series::default();
        let mut rng = Pcg64::seed_from_u64(1);
        let got: Vec<Nanos> = (0..7).map(|_| series.draw(&e, &traces, &mut rng)).collect();
        assert_eq!(got, [3, 1, 2, 3, 1, 2, 3]);
        assert_eq!((e.mean(), e.max(), e.min()), (2, Some(3), 1));
        // A plain distribution through a series is the same draw as alone.
        let u = p("1ms..2ms");
        let (mut r1, mut r2) = (Pcg64::seed_from_u64(9), Pcg64::seed_from_u64(9));
        assert_eq!(Series::default().draw(&u, &[], &mut r1), u.sample(&mut r2));
    }

    #[test]
    fn times_and_draws_stay_within_max_time() {
        for s in ["1000001h", "exp(1000001h)", "normal(1ms, 1000001h)", "1ms..1000001h", "1000001h..1000002h"]
        {
            let e = s.parse::<Exec>().unwrap_err();
            assert!(e.contains("longer than 1000000h"), "{s}: {e}");
        }
        // Draws of distributions whose parameters are at the bound: the tail is clamped, never
        // u64::MAX (which the simulator would take for endless work).
        let mut rng = Pcg64::seed_from_u64(3);
        for s in ["exp(1000000h)", "normal(1000000h, 1000000h)", "0s..1000000h", "1000000h"] {
            let e = p(s);
            let d: Vec<Nanos> = (0..10_000).map(|_| e.sample(&mut rng)).collect();
            assert!(d.iter().all(|&x| x <= MAX_TIME), "{s}");
            assert!(d.iter().any(|&x| x > MAX_TIME / 4), "{s}: the draws are not all tiny");
        }
        assert!(
            (0..1000).map(|_| p("exp(1000000h)").sample(&mut rng)).any(|x| x == MAX_TIME),
            "the tail clamps"
        );
    }

    #[test]
    fn samples_stay_in_bounds_and_match_the_distribution() {
        let n = 100_000;
        let mean = |v: &[Nanos]| v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;

        assert!(draws(p("30ms"), 1, 100).iter().all(|&x| x == 30 * MS));

        let u = draws(p("28ms..30ms"), 1, n);
        assert!(u.iter().all(|&x| (28 * MS..=30 * MS).contains(&x)));
        assert!(u.iter().any(|&x| x < 28 * MS + MS / 100));
        assert!(u.iter().any(|&x| x > 30 * MS - MS / 100));
        // Standard error of the mean: (2ms/sqrt(12))/sqrt(n) ~ 1.8us; allow 5 of them.
        assert!((mean(&u) - 29e6).abs() < 10e3, "{}", mean(&u));

        let e = draws(p("exp(20ms)"), 1, n);
        // sd = mean, so the standard error is 20ms/sqrt(n) ~ 63us; allow 5 of them.
        assert!((mean(&e) - 20e6).abs() < 320e3, "{}", mean(&e));
        let median = {
            let mut s = e.clone();
            s.sort_unstable();
            s[n / 2] as f64
        };
        // The median of an exponential is mean * ln 2.
        assert!((median / 20e6 - std::f64::consts::LN_2).abs() < 0.02, "{median}");

        let g = draws(p("normal(20ms, 2ms)"), 1, n);
        assert!((mean(&g) - 20e6).abs() < 32e3, "{}", mean(&g));
        let var = g.iter().map(|&x| (x as f64 - 20e6).powi(2)).sum::<f64>() / n as f64;
        assert!((var.sqrt() / 2e6 - 1.0).abs() < 0.02, "sd {}", var.sqrt());

        // Truncation: a normal that is mostly negative still gives only values >= 0 (u64), and
        // is not a point mass at 0.
        let t = draws(p("normal(1ms, 10ms)"), 1, 10_000);
        assert!(t.iter().filter(|&&x| x == 0).count() < 10);
    }
}
