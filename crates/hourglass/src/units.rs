//! Self-describing times and sizes, as in Hourglass's appendix A: `3m`, `1.5s`, `1020ms`, `87.0us`;
//! `64` (KiB), `64KiB`, `1MB`. Both are read by `workload`'s parsers, the workspace's only ones.

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
    /// A size the workspace's one size parser refused, or larger than hourglass accepts (the
    /// message says why).
    #[error("{0}")]
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

/// The scale of a size written without a unit: KiB. Appendix A's `CPU_SCAN <size>` scans "an
/// array that is size KB long"; hourglass has always read that bare number as kilobytes of 1024
/// bytes, and keeps doing so. A size written with a unit is the workspace's ([`workload::parse_size`]:
/// `64KB` is 64,000 bytes, `64KiB` 65,536).
pub const BARE_SIZE: u64 = 1 << 10;

/// The largest size accepted: 1 TiB (a working set is an array in memory).
const MAX_SIZE: u64 = 1 << 40;

/// Parses a size in bytes, exactly, with the workspace's one size parser
/// ([`workload::parse_size_bare`]): a bare number is KiB ([`BARE_SIZE`]); units are `B`, `kB`/`KB`
/// (1000), `KiB` (1024), `MB`, `MiB`, `GB`, `GiB`, `TB`, `TiB`, case as written. At most 1 TiB.
/// ```
/// assert_eq!(hourglass::units::parse_size("64").unwrap(), 65_536);
/// assert_eq!(hourglass::units::parse_size("64KB").unwrap(), 64_000);
/// ```
pub fn parse_size(text: &str) -> Result<usize, UnitError> {
    let b = workload::parse_size_bare(text, BARE_SIZE).map_err(UnitError::BadSize)?;
    if b > MAX_SIZE {
        return Err(UnitError::BadSize(format!("\"{}\" is larger than 1TiB", text.trim())));
    }
    usize::try_from(b).map_err(|_| UnitError::BadSize(format!("\"{}\" is too large", text.trim())))
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
        assert_eq!(parse_size("64"), Ok(65536), "a bare number is KiB, as hourglass has always read it");
        assert_eq!(parse_size("64KiB"), Ok(65536));
        assert_eq!(parse_size("64KB"), Ok(64_000), "KB is the workspace's: 1000 bytes");
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("512B"), Ok(512));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_size("1.5"), Ok(1536));
        let e = parse_size("64kib").unwrap_err().to_string();
        assert!(e.contains("unknown size unit \"kib\"") && e.contains("KiB"), "units as written: {e}");
        assert!(parse_size("12 parsecs").unwrap_err().to_string().contains("parsecs"));
        assert!(parse_size("0.1B").unwrap_err().to_string().contains("whole number of bytes"));
        assert!(parse_size("1TiB").is_ok());
        let e = parse_size("2000000MB").unwrap_err().to_string();
        assert!(e.contains("2000000MB") && e.contains("1TiB"), "{e}");
    }
}
