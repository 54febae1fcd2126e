//! hourglass's hand-written command-line parser on any arguments (the input's lines), and its reader
//! of `--format paper` text and `--format json --intervals` output (the first byte chooses): errors
//! name the option or the line, nothing panics. Nothing runs: parsing only.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    if mode & 1 == 0 {
        let argv: Vec<String> = text.lines().map(str::to_string).collect();
        if let Err(e) = hourglass::cli::parse(&argv) {
            assert!(!e.option.is_empty(), "{e}");
        }
    } else if let Ok(t) = hourglass::analyze::parse_trace(text, "fuzz.txt") {
        let _ = hourglass::analyze::ctx_gaps(&t);
    }
});
