//! Self-describing times and sizes, as in Hourglass's appendix A: `3m`, `1.5s`, `1020ms`, `87.0us`.

use thiserror::Error;

/// Nanoseconds.
pub type Nanos = u64;

/// A time or size that could not be parsed.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum UnitError {
    /// A time the workspace's one time parser refused (it says why: no unit, an unknown unit, a
    /// malformed or negative number, below a nanosecond, too large).
    #[error("{0}")]
    Time(#[from] workload::TimeError),
    /// A size has an unknown suffix, or is not a whole number of bytes.
    #[error("'{0}': unknown size (use a number of KB, or 64KB, 1MB, 512B)")]
    BadSize(String),
}

/// Parses a self-describing time into nanoseconds, exactly (decimal, no floating point): the
/// workspace's [`workload::parse_time`].
///
/// Units: `h`, `m` (minutes, as in the paper's `3m`), `s`, `ms`, `us` (or `µs`), `ns`.
/// ```
/// assert_eq!(hourglass::units::parse_time("87.0us").unwrap(), 87_000);
/// assert_eq!(hourglass::units::parse_time("3m").unwrap(), 180_000_000_000);
/// ```
pub fn parse_time(text: &str) -> Result<Nanos, UnitError> {
    Ok(workload::parse_time(text)?)
}

/// A time for people: `87.0us`, `1.5s`, `3m`, rounded to what people read (crates/report's text
/// formatter; [`parse_time`] reads it back). [`workload::format_time`] is the exact one, for files.
pub use report::format_time;

/// Size suffixes (all binary multiples), upper case: a suffix is matched whatever its case.
const SIZE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("K", 1 << 10),
    ("KB", 1 << 10),
    ("KIB", 1 << 10),
    ("M", 1 << 20),
    ("MB", 1 << 20),
    ("MIB", 1 << 20),
];

/// The largest size accepted: 1 TiB (a working set is an array in memory).
const MAX_SIZE: u64 = 1 << 40;

/// Parses a size in bytes, exactly. A bare number is KB (appendix A: "an array that is size KB
/// long"); suffixes `B`, `KB`/`K`/`KiB`, `MB`/`M`/`MiB` are accepted (all binary multiples).
pub fn parse_size(text: &str) -> Result<usize, UnitError> {
    let bad = || UnitError::BadSize(text.to_string());
    let b =
        workload::parse_units(&text.to_ascii_uppercase(), SIZE_UNITS, Some(1 << 10)).map_err(|_| bad())?;
    if b > MAX_SIZE {
        return Err(bad());
    }
    usize::try_from(b).map_err(|_| bad())
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
        use workload::TimeError;
        assert!(matches!(parse_time("10"), Err(UnitError::Time(TimeError::MissingUnit(_)))));
        assert!(matches!(parse_time("10parsecs"), Err(UnitError::Time(TimeError::UnknownUnit { .. }))));
        assert!(matches!(parse_time("ms"), Err(UnitError::Time(TimeError::BadNumber(_)))));
        assert!(matches!(parse_time("-1s"), Err(UnitError::Time(TimeError::BadNumber(_)))));
        assert!(matches!(parse_time(""), Err(UnitError::Time(TimeError::Empty))));
        assert!(matches!(parse_time("0.5ns"), Err(UnitError::Time(TimeError::SubNanosecond(_)))));
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
        assert_eq!(parse_size("1.5KB"), Ok(1536));
        assert_eq!((parse_size("64kib"), parse_size("2Mb")), (Ok(65536), Ok(2 << 20)), "any case");
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("0.1B").is_err(), "not a whole number of bytes");
        assert!(parse_size("2MiB").is_ok() && parse_size("2000000MB").is_err());
    }
}
