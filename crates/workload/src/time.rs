//! Self-describing times (`"1.5s"`, `"87us"`) and sizes (`"512KiB"`, `"1GB/s"`): the workspace's
//! only parsers of either (hourglass and klogger call them). `KB` is 1000 bytes, `KiB` 1024.
//!
//! Every time in a scenario carries its unit, as in Hourglass: a bare number is an error, because
//! `period = 40` is ambiguous (40 ms? 40 ticks?) and the wrong guess silently changes an experiment.
//! Parsing is exact decimal arithmetic (no floating point): `"0.1s"` is exactly 100,000,000 ns.

use std::fmt;

/// A time or a duration in nanoseconds; the only time type of the project (`sched::Nanos`).
pub type Nanos = u64;

/// The longest time a scenario or smartsim's command line may give, 1,000,000 h (about 114 years):
/// `sched::MAX_TIME`, the bound that keeps a run's sums of times from wrapping (see `sched`'s
/// "Time that cannot wrap").
pub use sched::MAX_TIME;

/// Units of time, longest first: (suffix, nanoseconds). `m` is minutes, as in Hourglass.
pub const TIME_UNITS: &[(&str, u64)] = &[
    ("h", 3_600_000_000_000),
    ("min", 60_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ns", 1),
];

/// Why a time (or size) string was rejected. The message says what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    /// The string is empty.
    #[error("empty time: write a number and a unit, e.g. \"40ms\"")]
    Empty,
    /// A number without a unit, e.g. `"40"`.
    #[error("\"{0}\" has no unit: write e.g. \"{0}ms\" (units: ns, us, ms, s, m = minutes, h)")]
    MissingUnit(String),
    /// A unit that is not one of ns, us, µs, ms, s, m, min, h.
    #[error("unknown time unit \"{unit}\" in \"{input}\" (units: ns, us, ms, s, m = minutes, h)")]
    UnknownUnit {
        /// The whole input.
        input: String,
        /// The unit as written.
        unit: String,
    },
    /// The number part is not a plain non-negative decimal number.
    #[error(
        "\"{0}\" is not a time: write a non-negative decimal number and a unit, e.g. \"1.5s\" or \"87us\""
    )]
    BadNumber(String),
    /// The value has digits below one nanosecond (e.g. `"0.5ns"`).
    #[error("\"{0}\" is not a whole number of nanoseconds")]
    SubNanosecond(String),
    /// The value does not fit in 64 bits of nanoseconds (about 584 years).
    #[error("\"{0}\" is too large (the limit is about 584 years)")]
    Overflow(String),
    /// Longer than [`MAX_TIME`] ([`parse_bounded_time`]).
    #[error(
        "\"{0}\" is longer than 1000000h (about 114 years), the longest time a run takes: \
         a longer one could not be added to another without passing 2^64 ns"
    )]
    TooLong(String),
}

/// Splits `"1.5 ms"` into the number `"1.5"` and the unit `"ms"` (whitespace between is allowed).
fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .map_or(s.len(), |(i, _)| i);
    (&s[..end], s[end..].trim_start())
}

/// Exact decimal: `"1.25"` × `scale` as an integer, or why not.
fn scaled_decimal(num: &str, scale: u64, whole: &str) -> Result<u64, TimeError> {
    let bad = || TimeError::BadNumber(whole.to_string());
    let num = num.replace('_', "");
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num.as_str(), ""),
    };
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return Err(bad());
    }
    let mut value: u128 = 0;
    for c in int.chars() {
        value = value * 10 + u128::from(c.to_digit(10).ok_or_else(bad)?);
        if value > u128::from(u64::MAX) {
            return Err(TimeError::Overflow(whole.to_string()));
        }
    }
    value *= u128::from(scale);
    // Fraction: each digit is worth scale / 10^k; it must come out whole.
    let mut denom: u128 = 1;
    let mut frac_value: u128 = 0;
    for c in frac.chars() {
        let d = u128::from(c.to_digit(10).ok_or_else(bad)?);
        if denom >= 100_000_000_000_000_000_000 {
            // Past 20 fractional digits (finer than 1e-20 of an hour), only zeros are accepted;
            // this also keeps the arithmetic inside u128.
            if d != 0 {
                return Err(TimeError::SubNanosecond(whole.to_string()));
            }
            continue;
        }
        denom *= 10;
        frac_value = frac_value * 10 + d;
    }
    // frac_value / denom in lowest terms: the fraction is a whole number of units exactly when its
    // denominator divides the scale, and then it is below the scale (no product can overflow).
    let g = gcd(frac_value, denom);
    let (num, den) = (frac_value / g, denom / g);
    if u128::from(scale) % den != 0 {
        return Err(TimeError::SubNanosecond(whole.to_string()));
    }
    let total = value + num * (u128::from(scale) / den);
    u64::try_from(total).map_err(|_| TimeError::Overflow(whole.to_string()))
}

/// Greatest common divisor (`gcd(0, b) = b`).
fn gcd(mut a: u128, mut b: u128) -> u128 {
    while a != 0 {
        (a, b) = (b % a, a);
    }
    b
}

/// Parses a self-describing time such as `"3m"`, `"1.5s"`, `"1020ms"`, `"87.0us"`, `"500ns"`, `"2h"`.
///
/// Units: `ns`, `us` (or `µs`), `ms`, `s`, `m` (= minutes, as in Hourglass; `min` also works), `h`.
/// The number is a non-negative decimal (underscores allowed as separators); the result must be a
/// whole number of nanoseconds. A bare number such as `"40"` is rejected, since its unit would be a
/// guess.
///
/// ```
/// use workload::parse_time;
/// assert_eq!(parse_time("1.5s").unwrap(), 1_500_000_000);
/// assert_eq!(parse_time("3m").unwrap(), 180_000_000_000);
/// assert!(parse_time("40").unwrap_err().to_string().contains("no unit"));
/// ```
pub fn parse_time(s: &str) -> Result<Nanos, TimeError> {
    parse_units(s, TIME_UNITS, None)
}

/// Parses a time as [`parse_time`] does, refusing one longer than [`MAX_TIME`] (1,000,000 h): what
/// every time of a scenario and every time on smartsim's command line is read by, so that no sum of
/// them can wrap (`sched`'s "Time that cannot wrap").
///
/// ```
/// use workload::{parse_bounded_time, MAX_TIME};
/// assert_eq!(parse_bounded_time("1000000h"), Ok(MAX_TIME));
/// assert!(parse_bounded_time("1000000.000000001h").unwrap_err().to_string().contains("longer than 1000000h"));
/// assert!(parse_bounded_time("40").is_err());
/// ```
pub fn parse_bounded_time(s: &str) -> Result<Nanos, TimeError> {
    match parse_time(s)? {
        t if t <= MAX_TIME => Ok(t),
        _ => Err(TimeError::TooLong(s.trim().to_string())),
    }
}

/// Parses a decimal number and a unit from `units` (suffix, scale) exactly, as [`parse_time`]
/// does, for a tool whose units differ: `bare` is the scale of a number written without a unit
/// (`None` refuses it). Suffixes match exactly (case-sensitive); the result must be a whole number.
///
/// Sizes have their own [`parse_size`] and [`parse_size_bare`], whose messages speak of bytes.
///
/// ```
/// // A duration whose bare number is seconds, as klogger's `--duration 2`.
/// use workload::{parse_units, TIME_UNITS};
/// assert_eq!(parse_units("2", TIME_UNITS, Some(1_000_000_000)).unwrap(), 2_000_000_000);
/// assert_eq!(parse_units("1.5ms", TIME_UNITS, None).unwrap(), 1_500_000);
/// // A unit of a tool's own.
/// let units = [("frames", 1), ("kframes", 1000)];
/// assert_eq!(parse_units("1.5kframes", &units, None).unwrap(), 1500);
/// assert!(parse_units("0.3frames", &units, None).is_err());
/// ```
pub fn parse_units(s: &str, units: &[(&str, u64)], bare: Option<u64>) -> Result<u64, TimeError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(TimeError::Empty);
    }
    let (num, unit) = split_number(t);
    if !num.chars().any(|c| c.is_ascii_digit()) {
        return Err(TimeError::BadNumber(t.to_string()));
    }
    let scale = if unit.is_empty() {
        bare.ok_or_else(|| TimeError::MissingUnit(t.to_string()))?
    } else {
        units
            .iter()
            .find(|(u, _)| *u == unit)
            .map(|&(_, scale)| scale)
            .ok_or_else(|| TimeError::UnknownUnit { input: t.to_string(), unit: unit.to_string() })?
    };
    scaled_decimal(num, scale, t)
}

/// Formats nanoseconds for humans, exactly: `parse_time(&format_time(x)) == Ok(x)` for every `x`.
///
/// Uses the largest of `s`, `ms`, `us`, `ns` that is not larger than the value, with as many
/// decimals as needed (`"1.5s"`, `"40ms"`, `"87us"`, `"1.000000001s"`); whole minutes and hours of
/// at least one minute are written `"3m"` and `"2h"`. Zero is `"0s"`.
///
/// ```
/// use workload::format_time;
/// assert_eq!(format_time(1_500_000_000), "1.5s");
/// assert_eq!(format_time(40_000_000), "40ms");
/// assert_eq!(format_time(87_000), "87us");
/// assert_eq!(format_time(90_000_000_000), "90s");
/// assert_eq!(format_time(180_000_000_000), "3m");
/// ```
pub fn format_time(ns: Nanos) -> String {
    const H: u64 = 3_600_000_000_000;
    const M: u64 = 60_000_000_000;
    if ns == 0 {
        return "0s".to_string();
    }
    if ns % H == 0 {
        return format!("{}h", ns / H);
    }
    if ns % M == 0 {
        return format!("{}m", ns / M);
    }
    let (unit, scale, digits) = match ns {
        1_000_000_000.. => ("s", 1_000_000_000, 9),
        1_000_000.. => ("ms", 1_000_000, 6),
        1_000.. => ("us", 1_000, 3),
        _ => ("ns", 1, 0),
    };
    format!("{}{unit}", decimal(ns, scale, digits))
}

/// `value / scale` written in decimal with trailing zeros dropped.
fn decimal(value: u64, scale: u64, digits: usize) -> String {
    let int = value / scale;
    let frac = value % scale;
    if frac == 0 {
        return int.to_string();
    }
    let f = format!("{frac:0digits$}");
    format!("{int}.{}", f.trim_end_matches('0'))
}

/// A [`Nanos`] value that displays with [`format_time`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub Nanos);

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_time(self.0))
    }
}

/// Units of size, as (suffix, bytes): the workspace's only table of them. Decimal units are
/// powers of 1000 (`kB` and `KB` are both 1000 bytes, `MB` 10^6, as in SI), binary units powers of
/// 1024 (`KiB` = 1024, `MiB` = 2^20, as in IEC 80000-13). Suffixes match exactly, case and all: a
/// size that means 1024 bytes says `KiB`.
pub const SIZE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("kB", 1_000),
    ("KB", 1_000),
    ("KiB", 1 << 10),
    ("MB", 1_000_000),
    ("MiB", 1 << 20),
    ("GB", 1_000_000_000),
    ("GiB", 1 << 30),
    ("TB", 1_000_000_000_000),
    ("TiB", 1 << 40),
];

/// Parses a size in bytes: `"512KiB"`, `"8MB"`, `"1.5GiB"`, `"4096B"`.
///
/// The units are [`SIZE_UNITS`]: decimal (kB/KB = 1000, MB, GB, TB) and binary (KiB = 1024, MiB,
/// GiB, TiB). A bare number is refused, as a bare time is ([`parse_size_bare`] is for a tool
/// whose interface fixes its unit). The result must be a whole number of bytes. The error message
/// says what was expected.
///
/// ```
/// assert_eq!(workload::parse_size("512KiB").unwrap(), 512 * 1024);
/// assert_eq!(workload::parse_size("64KB").unwrap(), 64_000);
/// assert_eq!(workload::parse_size("1.5kB").unwrap(), 1500);
/// assert!(workload::parse_size("512").is_err());
/// ```
pub fn parse_size(s: &str) -> Result<u64, String> {
    size(s, None)
}

/// Parses a size as [`parse_size`] does, except that a number without a unit counts `bare` bytes
/// per unit: for a tool whose documented interface fixes what a bare number means (hourglass's
/// `CPU_SCAN <size>` is a number of KiB, after Regehr 2002 appendix A; klogger's `--buffer 4096`
/// is bytes). A unit written out means what it means everywhere in the workspace (`64KB` is
/// 64,000 bytes whatever `bare` is).
///
/// ```
/// assert_eq!(workload::parse_size_bare("64", 1024).unwrap(), 65_536);
/// assert_eq!(workload::parse_size_bare("64KB", 1024).unwrap(), 64_000);
/// assert_eq!(workload::parse_size_bare("4096", 1).unwrap(), 4096);
/// ```
pub fn parse_size_bare(s: &str, bare: u64) -> Result<u64, String> {
    size(s, Some(bare))
}

/// [`parse_size`] and [`parse_size_bare`]: `bare` is the scale of a number without a unit
/// (`None` refuses it).
fn size(s: &str, bare: Option<u64>) -> Result<u64, String> {
    let t = s.trim();
    let (num, unit) = split_number(t);
    let help = match bare {
        None => "write a number and a unit: B, kB, KiB, MB, MiB, GB, GiB, TB, TiB (e.g. \"512KiB\")",
        Some(_) => {
            "write a number, or a number and a unit: B, kB, KiB, MB, MiB, GB, GiB, TB, TiB (e.g. \"512KiB\")"
        }
    };
    if num.is_empty() || (unit.is_empty() && bare.is_none()) {
        return Err(format!("\"{t}\" is not a size: {help}"));
    }
    let scale = match bare {
        Some(b) if unit.is_empty() => b,
        _ => SIZE_UNITS
            .iter()
            .find(|(u, _)| *u == unit)
            .map(|&(_, b)| b)
            .ok_or_else(|| format!("unknown size unit \"{unit}\" in \"{t}\": {help}"))?,
    };
    scaled_decimal(num, scale, t).map_err(|e| match e {
        TimeError::SubNanosecond(_) => format!("\"{t}\" is not a whole number of bytes"),
        TimeError::Overflow(_) => format!("\"{t}\" is too large"),
        _ => format!("\"{t}\" is not a size: {help}"),
    })
}

/// Parses a bandwidth in bytes per second: a size followed by `/s`, e.g. `"1GB/s"`, `"800MiB/s"`.
///
/// ```
/// assert_eq!(workload::parse_bandwidth("1GB/s").unwrap(), 1_000_000_000);
/// ```
pub fn parse_bandwidth(s: &str) -> Result<u64, String> {
    let t = s.trim();
    match t.strip_suffix("/s") {
        Some(size) => parse_size(size).map_err(|e| format!("{e} per second, e.g. \"1GB/s\"")),
        None => Err(format!(
            "\"{t}\" is not a bandwidth: write a size per second, e.g. \"1GB/s\" or \"800MiB/s\""
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fraction_of_the_largest_scale_neither_overflows_nor_loses_exactness() {
        // Found by fuzzing (target units): 20 fractional digits times a scale near 2^64 overflowed u128.
        assert!(parse_size_bare(".99999999999099999999", u64::MAX).unwrap_err().contains("whole number"));
        // u64::MAX = 3 * 5 * 17 * 257 * 641 * 65537 * 6700417: a third of it is whole, and so is 2/5.
        assert_eq!(parse_size_bare(".3333333333333333333333", u64::MAX).ok(), None);
        assert_eq!(parse_size_bare("0.4", u64::MAX), Ok(u64::MAX / 5 * 2));
        assert_eq!(parse_size_bare("1.5", 1 << 40), Ok(3 << 39));
    }

    #[test]
    fn parses_every_unit() {
        assert_eq!(parse_time("500ns"), Ok(500));
        assert_eq!(parse_time("87.0us"), Ok(87_000));
        assert_eq!(parse_time("87µs"), Ok(87_000));
        assert_eq!(parse_time("1020ms"), Ok(1_020_000_000));
        assert_eq!(parse_time("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_time("3m"), Ok(180_000_000_000));
        assert_eq!(parse_time("3min"), Ok(180_000_000_000));
        assert_eq!(parse_time("2h"), Ok(7_200_000_000_000));
        assert_eq!(parse_time(" 40 ms "), Ok(40_000_000));
        assert_eq!(parse_time("1_000ms"), Ok(1_000_000_000));
        assert_eq!(parse_time(".5s"), Ok(500_000_000));
        assert_eq!(parse_time("0s"), Ok(0));
        assert_eq!(parse_time("0.000000001s"), Ok(1));
        assert_eq!(parse_time("0.1s"), Ok(100_000_000));
        assert_eq!(parse_time("0.25m"), Ok(15_000_000_000));
    }

    #[test]
    fn rejects_bad_times_with_helpful_messages() {
        assert_eq!(parse_time(""), Err(TimeError::Empty));
        let e = parse_time("40").unwrap_err();
        assert_eq!(e, TimeError::MissingUnit("40".into()));
        assert!(e.to_string().contains("\"40ms\""), "{e}");
        assert!(matches!(
            parse_time("40 sec"),
            Err(TimeError::UnknownUnit { unit, .. }) if unit == "sec"
        ));
        assert!(matches!(parse_time("-1s"), Err(TimeError::BadNumber(_))));
        assert!(matches!(parse_time("1.2.3s"), Err(TimeError::BadNumber(_))));
        assert!(matches!(parse_time("ms"), Err(TimeError::BadNumber(_))));
        assert!(matches!(parse_time("."), Err(TimeError::BadNumber(_))));
        assert!(matches!(parse_time("1e3ms"), Err(TimeError::UnknownUnit { .. })));
        assert!(matches!(parse_time("0.5ns"), Err(TimeError::SubNanosecond(_))));
        assert!(matches!(parse_time("1.0000000001s"), Err(TimeError::SubNanosecond(_))));
        assert!(matches!(parse_time("600y"), Err(TimeError::UnknownUnit { .. })));
        assert!(matches!(parse_time("6000000h"), Err(TimeError::Overflow(_))));
        assert!(matches!(parse_time("99999999999999999999999ns"), Err(TimeError::Overflow(_))));
    }

    #[test]
    fn a_bounded_time_stops_at_max_time() {
        assert_eq!(MAX_TIME, 1_000_000 * 3_600_000_000_000);
        assert_eq!(format_time(MAX_TIME), "1000000h");
        assert_eq!(parse_bounded_time("0s"), Ok(0));
        assert_eq!(parse_bounded_time("3600000000000000000ns"), Ok(MAX_TIME));
        for s in ["3600000000000000001ns", "1000001h", "18446744073709551615ns", "4611686018427387904ns"] {
            assert_eq!(parse_bounded_time(s), Err(TimeError::TooLong(s.into())), "{s}");
        }
        // Past 64 bits it is still "too large", as parse_time says.
        assert!(matches!(parse_bounded_time("18446744073709551616ns"), Err(TimeError::Overflow(_))));
        // Five bounded times add up without wrapping (the discipline counts on it).
        assert!(MAX_TIME.checked_mul(5).is_some());
    }

    #[test]
    fn formats_readably() {
        assert_eq!(format_time(0), "0s");
        assert_eq!(format_time(1), "1ns");
        assert_eq!(format_time(999), "999ns");
        assert_eq!(format_time(1_000), "1us");
        assert_eq!(format_time(87_000), "87us");
        assert_eq!(format_time(87_500), "87.5us");
        assert_eq!(format_time(40_000_000), "40ms");
        assert_eq!(format_time(1_500_000_000), "1.5s");
        assert_eq!(format_time(1_000_000_001), "1.000000001s");
        assert_eq!(format_time(90_000_000_000), "90s");
        assert_eq!(format_time(180_000_000_000), "3m");
        assert_eq!(format_time(7_200_000_000_000), "2h");
        assert_eq!(Time(40_000_000).to_string(), "40ms");
    }

    #[test]
    fn format_then_parse_round_trips() {
        let mut x: u64 = 1;
        let mut samples = vec![0, u64::MAX, u64::MAX - 1, 59_999_999_999, 3_600_000_000_001];
        // A deterministic spread over all magnitudes.
        for _ in 0..2000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            samples.push(x >> (x % 64));
        }
        for ns in samples {
            let s = format_time(ns);
            assert_eq!(parse_time(&s), Ok(ns), "{ns} -> {s}");
        }
        for s in ["1.5s", "40ms", "87us", "500ns", "3m", "2h", "1.000000001s"] {
            assert_eq!(format_time(parse_time(s).unwrap()), s);
        }
    }

    #[test]
    fn sizes_and_bandwidths() {
        assert_eq!(parse_size("512KiB"), Ok(524_288));
        assert_eq!(parse_size("8MB"), Ok(8_000_000));
        assert_eq!(parse_size("1.5GiB"), Ok(1_610_612_736));
        assert_eq!(parse_size("64 B"), Ok(64));
        assert!(parse_size("512").unwrap_err().contains("KiB"));
        assert!(parse_size("512kib").unwrap_err().contains("unknown size unit"));
        assert!(parse_size("0.5B").unwrap_err().contains("whole number of bytes"));
        assert_eq!(parse_size("64KB"), Ok(64_000), "KB is 1000 bytes");
        assert_eq!(parse_size("64kB"), Ok(64_000));
        assert_eq!(parse_bandwidth("1GB/s"), Ok(1_000_000_000));
        assert_eq!(parse_bandwidth("800MiB/s"), Ok(800 << 20));
        assert!(parse_bandwidth("1GB").unwrap_err().contains("per second"));
    }

    #[test]
    fn sizes_with_a_bare_unit() {
        assert_eq!(parse_size_bare("64", 1024), Ok(65_536));
        assert_eq!(parse_size_bare("1.5", 1024), Ok(1536));
        assert_eq!(parse_size_bare(" 4096 ", 1), Ok(4096));
        // A unit written out wins over the bare one, with the workspace's meaning.
        assert_eq!(parse_size_bare("64KB", 1024), Ok(64_000));
        assert_eq!(parse_size_bare("64KiB", 1), Ok(65_536));
        assert!(parse_size_bare("0.5", 1).unwrap_err().contains("whole number of bytes"));
        assert!(parse_size_bare("4M", 1).unwrap_err().contains("unknown size unit \"M\""));
        assert!(parse_size_bare("", 1).unwrap_err().contains("not a size"));
        assert!(parse_size_bare(".", 1).unwrap_err().contains("not a size"));
        assert!(parse_size_bare("-1", 1).unwrap_err().contains("not a size"));
        assert!(parse_size_bare("99999999999999999999", 1).unwrap_err().contains("too large"));
        assert!(parse_size_bare("18446744073709551615", 2).unwrap_err().contains("too large"));
    }
}
