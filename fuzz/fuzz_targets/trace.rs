//! The common trace reader (crates/trace) on any bytes: the header and every record are checked
//! before use, so a damaged file is an error naming its offset, never a panic or an allocation sized
//! by the file; what reads is summarised as `smartsim trace report` does, and billed at 100 and
//! 1000 Hz as `smartsim trace billing` does. The reader checks every record against the trace's
//! span, its CPUs and the records before it (`trace::Consistency`), so whatever it yields, however
//! the bytes read, gives no impossible figure: no task above 100 % of one CPU (klogger's idle task,
//! one per CPU, above 100 % of every CPU), no more CPU time than the span × the CPUs.
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
    let cpus = header.cpus as u64;
    let most = |task: u32, span: u64| {
        if task == 0 && header.source.tool() == "klogger" {
            span.saturating_mul(cpus)
        } else {
            span
        }
    };
    let ok = || records.iter().cloned().map(Ok::<_, std::convert::Infallible>);
    let Ok(s) = trace::summary::summarize(&header, ok());
    assert!(s.end_ns >= s.start_ns, "the span ends before it starts");
    let span = s.end_ns - s.start_ns;
    let mut total = 0u64;
    for t in &s.tasks {
        assert!(t.cpu_ns <= most(t.task, span), "task {}: {} ns of CPU in {span} ns", t.task, t.cpu_ns);
        assert!(t.share <= 1.0, "task {}: share {}", t.task, t.share);
        total = total.saturating_add(t.cpu_ns);
    }
    assert!(total <= span.saturating_mul(cpus), "{total} ns of CPU in {span} ns on {cpus} CPUs");
    // klogger's analyses, as `smartsim trace billing` runs them on any trace.
    let Ok(t) = trace::timeline::Timeline::from_records(&header, ok());
    let span = t.duration();
    for s in t.task_stats(trace::timeline::Group::Thread) {
        assert!(s.cpu_ns <= most(s.key, span), "task {}: {} ns of CPU in {span} ns", s.key, s.cpu_ns);
    }
    let _ = trace::billing::billing_table(&t, &[100, 1000], 0, trace::timeline::Group::Process);
});
