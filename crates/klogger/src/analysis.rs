//! A recording as the project's trace (`crates/trace`): [`trace::klog::convert`] finds every effective
//! quantum and how it ended; every analysis then reads the trace ([`trace::timeline`],
//! [`trace::billing`]), the same for a recording and a simulated run. [`Trace`] keeps beside the
//! timeline what only a recording has (events lost in the kernel, broken chains of switches, what
//! was left out to keep the trace consistent).

use std::collections::BTreeMap;

pub use trace::klog::{convert, BreakReason, Converted, LeftOut};
use trace::timeline::Timeline;

use crate::format::{Event, Header, Log};

pub use trace::summary::Percentiles;
pub use trace::timeline::{Group, Stretch, TaskStats};

/// A recording turned into the trace's timeline, with what only a recording has.
#[derive(Clone, Debug)]
pub struct Trace {
    /// The log file's header.
    pub header: Header,
    /// Stretches, tasks, ticks.
    pub timeline: Timeline,
    /// Event records (not counting the recorder's lost/end records).
    pub events: u64,
    /// Events lost in the kernel.
    pub lost: u64,
    /// See [`Converted::broken_chains`].
    pub broken_chains: u64,
    /// See [`Converted::broken_chains_by_reason`].
    pub broken_chains_by_reason: BTreeMap<BreakReason, u64>,
    /// What was left out or cut to keep the trace consistent ([`Converted::left_out`]).
    pub left_out: LeftOut,
}

impl Trace {
    /// Builds the timeline of a log.
    pub fn from_log(log: &Log) -> Trace {
        let mut t = Trace::from_events(log.header.clone(), &log.events);
        t.lost = log.lost();
        t
    }

    /// Builds the timeline of events in any order.
    pub fn from_events(header: Header, events: &[Event]) -> Trace {
        let c = convert(&header, events);
        let records = c.records.into_iter().map(Ok::<_, std::convert::Infallible>);
        let timeline = match Timeline::from_records(&c.header, records) {
            Ok(t) => t,
            Err(never) => match never {},
        };
        Trace {
            header,
            timeline,
            events: c.events,
            lost: 0,
            broken_chains: c.broken_chains,
            broken_chains_by_reason: c.broken_chains_by_reason,
            left_out: c.left_out,
        }
    }

    /// Length of the recording window (ns).
    pub fn duration(&self) -> u64 {
        self.timeline.duration()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::format::{comm_bytes, Kind};

    pub fn header(cpus: u32) -> Header {
        Header::new("synthetic", cpus, Some(100))
    }

    /// A switch on `cpu` at `ts` from `prev` (blocked if `blocked`) to `next`.
    pub fn sw(ts: u64, cpu: u32, prev: u32, next: u32, blocked: bool) -> Event {
        Event::switch(ts, cpu, (prev, &format!("t{prev}")), (next, &format!("t{next}")), u64::from(blocked))
    }

    pub fn wake(ts: u64, cpu: u32, tid: u32) -> Event {
        let mut e = Event::new(ts, cpu, Kind::Wakeup);
        e.pid = tid;
        e.tgid = tid;
        e.comm = comm_bytes(&format!("t{tid}"));
        e
    }

    #[test]
    fn quanta_and_latency() {
        // CPU 0: idle until 100, task 5 runs 100..250 (blocks), idle, woken at 300, runs 320..400
        // (preempted by 6), 6 runs 400..500 then the trace ends.
        let ev = vec![
            sw(100, 0, 0, 5, false),
            sw(250, 0, 5, 0, true),
            wake(300, 1, 5),
            sw(320, 0, 0, 5, false),
            sw(400, 0, 5, 6, false),
            wake(500, 0, 7),
        ];
        let t = Trace::from_events(header(1), &ev);
        assert_eq!(t.timeline.start, 100);
        assert_eq!(t.timeline.end, 500);
        let s = t.timeline.task_stats(Group::Thread);
        let t5 = s.iter().find(|x| x.key == 5).unwrap();
        assert_eq!(t5.cpu_ns, 150 + 80);
        assert_eq!(t5.quanta, 2);
        assert_eq!(t5.blocked, vec![150]);
        assert_eq!(t5.preempted, vec![80]);
        assert_eq!(t5.wakeups, 1);
        assert_eq!(t5.latencies, vec![20]);
        assert_eq!(t5.switches_in, 2);
        let t6 = s.iter().find(|x| x.key == 6).unwrap();
        assert_eq!(t6.cpu_ns, 100);
        assert_eq!(t6.quanta, 0, "a quantum cut by the trace end is not counted");
        assert_eq!(t6.switches_in, 1);
        let idle = s.iter().find(|x| x.key == 0).unwrap();
        assert_eq!(idle.cpu_ns, 70);
        assert_eq!(idle.name, "idle");
        // Total CPU time is the window on one CPU, minus the time before the first switch.
        let total: u64 = s.iter().map(|x| x.cpu_ns).sum();
        assert_eq!(total, 400);
    }

    #[test]
    fn what_was_left_out_is_in_every_report() {
        // Task 5 on both CPUs at once from 100 to 300 (200 % of one CPU, as once reported), and a
        // switch after the End record of the clean stop at 400.
        let ev = vec![
            sw(100, 0, 0, 5, false),
            sw(100, 1, 0, 5, false),
            sw(300, 0, 5, 0, true),
            sw(300, 1, 5, 0, true),
            sw(900, 1, 0, 7, false),
            Event::new(400, 0, Kind::End),
        ];
        let t = Trace::from_events(header(2), &ev);
        assert_eq!(t.left_out, LeftOut { outside_span: 1, overlapping: 1 });
        let r = crate::report::report(&t, "x.klog", Group::Thread, 5, &[]);
        let t5 = r.tasks.iter().find(|x| x.pid == 5).unwrap();
        assert_eq!((t5.cpu_ns, r.duration_ns), (200, 200), "one CPU's worth of the span, not two");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(
            (json["events_outside_span"].as_u64(), json["overlapping_stretches"].as_u64()),
            (Some(1), Some(1))
        );
        let text = crate::report::report_text(&r, 5);
        let note =
            "note: 1 event outside the recording's span left out; 1 stretch of a task overlapping its \
                    stretch on another CPU cut or left out\n";
        assert!(text.contains(note), "{text}");
        let page = crate::html::html_report(&t, "x.klog", &[100], Group::Thread, 4, &[]);
        assert!(page.contains("To keep the trace consistent: 1 event outside"), "no note in the page");
    }

    #[test]
    fn broken_chain_drops_unknown_quantum() {
        // The switch 5->6 at 200 was lost (the buffer was full, as the lost record at 200 says):
        // 6's switch-out at 300 has no known start.
        let lost = Event { arg: 1, ..Event::new(200, 0, Kind::Lost) };
        let ev = vec![sw(100, 0, 0, 5, false), lost, sw(300, 0, 6, 0, true)];
        let t = Trace::from_events(header(1), &ev);
        assert_eq!(t.broken_chains, 1);
        assert_eq!(t.broken_chains_by_reason, BTreeMap::from([(BreakReason::RingBufferFull, 1)]));
        assert!(t.timeline.runs.iter().all(|q| q.task != 6));
        // The report names it, in JSON and text.
        let r = crate::report::report(&t, "x.klog", Group::Thread, 5, &[]);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["broken_chains_by_reason"], serde_json::json!({ "ring_buffer_full": 1 }));
        let text = crate::report::report_text(&r, 5);
        assert!(text.contains("1 switches did not chain (1 ring_buffer_full)"), "{text}");
        // Nothing left out: the counts are 0 and no note is printed.
        assert_eq!(
            (json["events_outside_span"].as_u64(), json["overlapping_stretches"].as_u64()),
            (Some(0), Some(0))
        );
        assert!(!text.contains("outside the recording") && !text.contains("overlapping"), "{text}");
        // Without the lost record, 5 is a task never reported switching out.
        let t = Trace::from_events(header(1), &[ev[0].clone(), ev[2].clone()]);
        assert_eq!(t.broken_chains_by_reason, BTreeMap::from([(BreakReason::SwitchOutNotReported, 1)]));
    }
}
