//! The common trace reader (crates/trace) on any bytes: the header and every record are checked
//! before use, so a damaged file is an error naming its offset, never a panic or an allocation sized
//! by the file; what reads is summarised as `smartsim trace report` does, and billed at 100 and
//! 1000 Hz as `smartsim trace billing` does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(mut r) = trace::Reader::new(std::io::Cursor::new(data), Path::new("fuzz.trace")) else { return };
    let mut records = Vec::new();
    while let Ok(Some(rec)) = r.next_record() {
        records.push(rec);
        if records.len() > 100_000 {
            break;
        }
    }
    let header = r.header().clone();
    let _ =
        trace::summary::summarize(&header, records.iter().cloned().map(Ok::<_, std::convert::Infallible>));
    // klogger's analyses, as `smartsim trace billing` runs them on any trace.
    let Ok(t) = trace::timeline::Timeline::from_records(
        &header,
        records.into_iter().map(Ok::<_, std::convert::Infallible>),
    );
    let _ = t.task_stats(trace::timeline::Group::Thread);
    let _ = trace::billing::billing_table(&t, &[100, 1000], 0, trace::timeline::Group::Process);
});
