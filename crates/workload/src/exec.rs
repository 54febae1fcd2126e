//! Execution-time (and think-time) distributions: [`Exec`].

use std::fmt;

use rand::Rng;

use crate::time::{format_time, parse_bounded_time, Nanos, MAX_TIME};

/// How much CPU time one request needs (or, for `think`, how long a user waits).
///
/// Written in a scenario as a fixed time `"30ms"`, a uniform range `"28ms..30ms"`, an exponential
/// distribution `"exp(20ms)"` (by its mean), or a normal distribution `"normal(20ms, 2ms)"` (mean,
/// standard deviation), truncated at 0 by redrawing negative values.
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
            Exec::Normal { mean, sd } => {
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
            Exec::Exponential { mean } | Exec::Normal { mean, .. } => mean,
        }
    }

    /// The largest value that can be drawn, if bounded (`Fixed`, `Uniform`); `None` for
    /// unbounded distributions.
    pub fn max(&self) -> Option<Nanos> {
        match *self {
            Exec::Fixed(t) | Exec::Uniform(_, t) => Some(t),
            Exec::Exponential { .. } | Exec::Normal { .. } => None,
        }
    }

    /// The smallest value that can be drawn.
    pub fn min(&self) -> Nanos {
        match *self {
            Exec::Fixed(t) | Exec::Uniform(t, _) => t,
            Exec::Exponential { .. } | Exec::Normal { .. } => 0,
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
    "a time \"30ms\", a range \"28ms..30ms\", \"exp(<mean>)\" or \"normal(<mean>, <sd>)\"";

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
