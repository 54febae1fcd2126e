//! klogger's raw recording reader (crates/trace, klog) on any bytes, then its conversion to the
//! common trace: a corrupt CPU number, HZ or header is an error, never a panic or an allocation
//! sized by the file (the reader once sized a 102 GB table from one record).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(log) = trace::klog::Log::from_reader(data, Path::new("fuzz.klog")) else { return };
    let _ = trace::klog::convert(&log.header, &log.events);
});
