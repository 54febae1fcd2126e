//! The time and size parsers on any text (workload's, and hourglass's wrappers over them): nothing
//! panics, and what parses as a time prints back (exactly, by workload's formatter) as the same
//! number of nanoseconds.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    if let Ok(ns) = workload::parse_time(s) {
        assert_eq!(workload::parse_time(&workload::format_time(ns)), Ok(ns), "{s:?}");
        // hourglass reads the same times the same way.
        assert_eq!(hourglass::units::parse_time(s).ok(), Some(ns), "{s:?}");
    }
    let _ = workload::parse_size(s);
    for bare in [1, 1 << 10, u64::MAX] {
        let _ = workload::parse_size_bare(s, bare);
    }
    let _ = workload::parse_bandwidth(s);
    let _ = workload::parse_units(s, workload::TIME_UNITS, Some(1_000_000_000));
    let _ = hourglass::units::parse_size(s);
    let _ = hourglass::units::parse_time(s);
});
