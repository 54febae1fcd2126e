//! The scenario parser on any text, then the run estimate, then (when the estimate is small) the
//! simulator itself: nothing may panic (this build checks arithmetic overflow), and a scenario the
//! parser accepts must run.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Events above which an accepted scenario is not simulated (the fuzzer wants many runs a second).
const MAX_EVENTS: u64 = 20_000;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let scn = match workload::parse_str(text, "fuzz.toml") {
        Ok(s) => s,
        Err(e) => {
            // Every error names the file.
            assert!(e.to_string().contains("fuzz.toml"), "{e}");
            return;
        }
    };
    let est = smartsim::budget::estimate(&scn, None, Default::default());
    if est.events <= MAX_EVENTS && est.memory < 64 << 20 && scn.tasks.len() <= 64 {
        // A policy the simulator cannot build (an unknown name) is an error, not a panic.
        let _ = smartsim::run_scenario(&scn, None);
    }
});
