//! What the test programs of `src/bin/` (`smart-hog`, `smart-periodic`, `smart-pingpong`,
//! `smart-flood`) share of their hand-made command lines: the `-v`/`-q` count that every binary of the
//! workspace takes (`diag`), and a once-a-second clock for their `-v` progress lines.

use std::time::{Duration, Instant};

/// The number of `-v` less the number of `-q` in `args` (as `std::env::args` gives them, the program's
/// name first), for [`diag::level`]: `-v`, `-vv`... and `--verbose` add, `-q`, `-qq`... and `--quiet`
/// take away. The argument after one of `takes_value` is that option's value, not a flag (`--name -v`
/// names a hog "-v").
pub fn verbosity(args: &[String], takes_value: &[&str]) -> i8 {
    let mut v: i8 = 0;
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        if takes_value.contains(&a.as_str()) {
            it.next();
            continue;
        }
        let repeated = |c: char| {
            a.strip_prefix('-').filter(|r| !r.is_empty() && r.chars().all(|x| x == c)).map_or(0, |r| r.len())
        };
        let n = |k: usize| i8::try_from(k).unwrap_or(i8::MAX);
        match a.as_str() {
            "--verbose" => v = v.saturating_add(1),
            "--quiet" => v = v.saturating_sub(1),
            _ => v = v.saturating_add(n(repeated('v'))).saturating_sub(n(repeated('q'))),
        }
    }
    v
}

/// Tells when a progress line is due: once every `every` (a second, for the programs' `-v`).
#[derive(Debug, Clone, Copy)]
pub struct Every {
    last: Instant,
    every: Duration,
}

impl Every {
    /// Counting from `start`.
    pub fn new(start: Instant, every: Duration) -> Every {
        Every { last: start, every }
    }

    /// If at least `every` has passed since the last time it was due (or since the start) at `now`,
    /// the time since then (to divide the counts of the stretch by: it may be longer than `every` when
    /// the caller was late), and the next stretch starts at `now`; else `None`.
    pub fn due(&mut self, now: Instant) -> Option<Duration> {
        let d = now.saturating_duration_since(self.last);
        if d < self.every {
            return None;
        }
        self.last = now;
        Some(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(line: &str) -> i8 {
        let args: Vec<String> =
            std::iter::once("prog").chain(line.split_whitespace()).map(String::from).collect();
        verbosity(&args, &["--name", "--nice"])
    }

    #[test]
    fn each_v_adds_one_and_each_q_takes_one_away() {
        assert_eq!(v(""), 0);
        assert_eq!(v("-v"), 1);
        assert_eq!(v("-vv"), 2);
        assert_eq!(v("-v -v --verbose"), 3);
        assert_eq!(v("-q"), -1);
        assert_eq!(v("-qqq"), -3);
        assert_eq!(v("--quiet -vv"), 1);
        assert_eq!(v("--seconds 3 -v --share 2"), 1);
    }

    #[test]
    fn the_program_name_values_and_other_flags_do_not_count() {
        assert_eq!(verbosity(&["-v".to_string()], &[]), 0);
        assert_eq!(v("--name -v"), 0);
        assert_eq!(v("--nice -5 -v"), 1);
        assert_eq!(v("- -- -vq -x --v --verbose=2 -V"), 0);
        assert_eq!(v("--name"), 0);
    }

    #[test]
    fn it_saturates() {
        let many = format!("-{}", "v".repeat(300));
        assert_eq!(v(&format!("{many} {many}")), i8::MAX);
        assert_eq!(v(&format!("-{}", "q".repeat(300))), i8::MIN + 1);
    }

    #[test]
    fn a_progress_line_is_due_once_a_stretch_has_passed() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut e = Every::new(t0, s);
        assert_eq!(e.due(t0), None);
        assert_eq!(e.due(t0 + Duration::from_millis(999)), None);
        assert_eq!(e.due(t0 + s), Some(s));
        assert_eq!(e.due(t0 + s + Duration::from_millis(500)), None);
        // Late: the stretch is as long as it was.
        assert_eq!(e.due(t0 + 3 * s + Duration::from_millis(500)), Some(Duration::from_millis(2500)));
        // A clock read before the last stretch ended (another thread's Instant) is not due.
        assert_eq!(e.due(t0), None);
    }
}
