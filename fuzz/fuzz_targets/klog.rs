//! klogger's raw recording reader (crates/trace, klog) on any bytes, then its conversion to the
//! common trace: a corrupt CPU number, HZ or header is an error, never a panic or an allocation
//! sized by the file (the reader once sized a 102 GB table from one record). Whatever the events
//! say (tasks on two CPUs at once, times outside the recording), the converted trace keeps every
//! rule of a trace (`trace::Consistency`: what breaks one is left out and counted), so no task
//! reads above 100 % of one CPU (the idle task, one per CPU, above 100 % of every CPU).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(log) = trace::klog::Log::from_reader(data, Path::new("fuzz.klog")) else { return };
    let c = trace::klog::convert(&log.header, &log.events);
    let mut check = trace::Consistency::new(&c.header);
    for (i, r) in c.records.iter().enumerate() {
        if let Err((_, what)) = check.check(r, i as u64) {
            panic!("record {i} of the converted trace, {r:?}: {what}");
        }
    }
    let Ok(t) = trace::timeline::Timeline::from_records(
        &c.header,
        c.records.iter().cloned().map(Ok::<_, std::convert::Infallible>),
    );
    let (span, cpus) = (t.duration(), c.header.cpus as u64);
    for s in t.task_stats(trace::timeline::Group::Thread) {
        let most = if s.key == 0 { span.saturating_mul(cpus) } else { span };
        assert!(s.cpu_ns <= most, "task {}: {} ns of CPU in {span} ns", s.key, s.cpu_ns);
    }
});
