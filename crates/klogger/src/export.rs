//! Exports of a recording: the project's trace file (`crates/trace`, which `smartsim trace` reads like
//! any other) and Perfetto JSON, written by `crates/report` from the same records as every tool's.

use std::path::Path;

use crate::analysis::{convert, LeftOut};
use crate::format::Log;

/// Writes `log` as a trace file at `path`; returns the number of records, and what the conversion
/// left out to keep the trace consistent.
pub fn trace_file(log: &Log, path: &Path) -> std::io::Result<(u64, LeftOut)> {
    trace_to(log, std::io::BufWriter::new(std::fs::File::create(path)?))
}

/// Writes `log` as a trace file to `out` (a file the caller opened); returns the number of
/// records, and what the conversion left out to keep the trace consistent.
pub fn trace_to<W: std::io::Write>(log: &Log, out: W) -> std::io::Result<(u64, LeftOut)> {
    let c = convert(&log.header, &log.events);
    Ok((trace::write_to(out, &c.header, &c.records)?, c.left_out))
}

/// The Perfetto view of `log` (`report::Trace::from_records`): a track per thread and per CPU, ticks
/// on the CPU tracks; the idle task's stretches are left out. With it, what the conversion left out
/// to keep the trace consistent.
pub fn perfetto(log: &Log) -> (report_crate::Trace, LeftOut) {
    let c = convert(&log.header, &log.events);
    let records = c.records.into_iter().filter(|r| !matches!(r, trace::Record::Run { task: 0, .. }));
    (report_crate::Trace::from_records(&format!("klogger: {}", log.header.kernel), records), c.left_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tests::{header, sw};

    #[test]
    fn a_recording_becomes_a_trace_file_and_perfetto_json_with_the_same_quanta() {
        let events = vec![
            sw(100, 0, 0, 5, false),
            sw(250, 0, 5, 0, true),
            sw(300, 0, 0, 5, false),
            sw(400, 0, 5, 6, false),
        ];
        let log = Log { header: header(1), events, trailing_bytes: 0, complete: true };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.smtrace");
        trace_file(&log, &path).unwrap();
        let mut r = trace::Reader::open(&path).unwrap();
        assert_eq!(r.header().source.tool(), "klogger");
        let recs: Vec<trace::Record> = r.by_ref().collect::<Result<_, _>>().unwrap();
        let runs: Vec<(u32, u64, u64)> = recs
            .iter()
            .filter_map(|x| match x {
                trace::Record::Run { task, start, end, complete: true, .. } => Some((*task, *start, *end)),
                _ => None,
            })
            .collect();
        assert_eq!(runs, vec![(5, 100, 250), (0, 250, 300), (5, 300, 400)]);
        let mut json = Vec::new();
        perfetto(&log).0.write(&mut json).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let x = v["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X").count();
        assert_eq!(x, 2 * 2, "task 5's two quanta on its track and on the CPU's; idle left out");
    }
}
