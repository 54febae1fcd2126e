//! Self-describing times and sizes, as in Hourglass's appendix A: `3m`, `1.5s`, `1020ms`, `87.0us`.

use thiserror::Error;

/// Nanoseconds.
pub type Nanos = u64;

/// A time or size that could not be parsed.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum UnitError {
    /// The text is empty.
    #[error("empty time")]
    Empty,
    /// No unit was given: Hourglass times are self-describing.
    #[error("'{0}' has no unit; times are self-describing, e.g. 3m, 1.5s, 1020ms, 87.0us, 500ns")]
    NoUnit(String),
    /// The unit is not one we know.
    #[error("'{0}': unknown unit '{1}' (use h, m, s, ms, us, ns)")]
    BadUnit(String, String),
    /// The number is malformed, negative or too large.
    #[error("'{0}' is not a valid non-negative number")]
    BadNumber(String),
    /// A size has an unknown suffix.
    #[error("'{0}': unknown size (use a number of KB, or 64KB, 1MB, 512B)")]
    BadSize(String),
}

fn split_number(s: &str) -> (&str, &str) {
    let idx = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    (&s[..idx], &s[idx..])
}

/// Parses a self-describing time into nanoseconds.
///
/// Units: `h`, `m` (minutes, as in the paper's `3m`), `s`, `ms`, `us` (or `µs`), `ns`.
/// ```
/// assert_eq!(hourglass::units::parse_time("87.0us").unwrap(), 87_000);
/// assert_eq!(hourglass::units::parse_time("3m").unwrap(), 180_000_000_000);
/// ```
pub fn parse_time(text: &str) -> Result<Nanos, UnitError> {
    let s = text.trim();
    if s.is_empty() {
        return Err(UnitError::Empty);
    }
    let (num, unit) = split_number(s);
    if num.is_empty() {
        return Err(UnitError::BadNumber(text.to_string()));
    }
    let value: f64 = num.parse().map_err(|_| UnitError::BadNumber(text.to_string()))?;
    let scale: f64 = match unit.trim() {
        "" => return Err(UnitError::NoUnit(text.to_string())),
        "h" => 3600e9,
        "m" | "min" => 60e9,
        "s" => 1e9,
        "ms" => 1e6,
        "us" | "µs" | "μs" => 1e3,
        "ns" => 1.0,
        other => return Err(UnitError::BadUnit(text.to_string(), other.to_string())),
    };
    let ns = value * scale;
    if !ns.is_finite() || !(0.0..=1e19).contains(&ns) {
        return Err(UnitError::BadNumber(text.to_string()));
    }
    Ok(ns.round() as Nanos)
}

/// A time for people: `87.0us`, `1.5s`, `3m` (what [`parse_time`] reads back); the workspace's one
/// time formatter for text (crates/report).
pub use report::format_time;

/// Parses a size in bytes. A bare number is KB (appendix A: "an array that is size KB long");
/// suffixes `B`, `KB`/`K`/`KiB`, `MB`/`M`/`MiB` are accepted (all binary multiples).
pub fn parse_size(text: &str) -> Result<usize, UnitError> {
    let s = text.trim();
    let (num, unit) = split_number(s);
    let value: f64 = num.parse().map_err(|_| UnitError::BadSize(text.to_string()))?;
    let scale = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "K" | "KB" | "KIB" => 1024.0,
        "B" => 1.0,
        "M" | "MB" | "MIB" => 1024.0 * 1024.0,
        _ => return Err(UnitError::BadSize(text.to_string())),
    };
    let b = value * scale;
    if !b.is_finite() || !(0.0..=1e12).contains(&b) {
        return Err(UnitError::BadSize(text.to_string()));
    }
    Ok(b.round() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_examples_parse() {
        assert_eq!(parse_time("3m"), Ok(180_000_000_000));
        assert_eq!(parse_time("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_time("1020ms"), Ok(1_020_000_000));
        assert_eq!(parse_time("87.0us"), Ok(87_000));
        assert_eq!(parse_time("0.9ms"), Ok(900_000));
        assert_eq!(parse_time("5.3ms"), Ok(5_300_000));
        assert_eq!(parse_time("500ns"), Ok(500));
    }

    #[test]
    fn bad_times_are_rejected_with_reason() {
        assert!(matches!(parse_time("10"), Err(UnitError::NoUnit(_))));
        assert!(matches!(parse_time("10parsecs"), Err(UnitError::BadUnit(_, _))));
        assert!(matches!(parse_time("ms"), Err(UnitError::BadNumber(_))));
        assert!(matches!(parse_time("-1s"), Err(UnitError::BadNumber(_))));
        assert!(matches!(parse_time(""), Err(UnitError::Empty)));
    }

    #[test]
    fn format_round_trips() {
        for ns in [500, 87_000, 1_020_000_000, 1_500_000_000, 180_000_000_000, 5_300_000] {
            assert_eq!(parse_time(&format_time(ns)).unwrap(), ns, "{}", format_time(ns));
        }
        assert_eq!(format_time(87_000), "87.0us");
        assert_eq!(format_time(1_500_000_000), "1.5s");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64"), Ok(65536));
        assert_eq!(parse_size("64KB"), Ok(65536));
        assert_eq!(parse_size("1MB"), Ok(1 << 20));
        assert_eq!(parse_size("512B"), Ok(512));
        assert!(parse_size("12 parsecs").is_err());
    }
}
