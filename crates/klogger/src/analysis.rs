//! From events to the project's trace (`crates/trace`): replays the switches of each CPU to find every
//! effective quantum (Etsion et al. §4, §6: the time from being scheduled to being descheduled) and
//! how it ended (preempted while runnable, blocked, exited), and writes it as Run records beside the
//! wake-ups, ticks and task names. Every analysis then reads the trace ([`trace::timeline`],
//! [`trace::billing`]), the same for a recording and a simulated run.
//!
//! A quantum already running when recording began, or still running when it ended, is *partial*:
//! its CPU time counts, but it is left out of quantum counts and distributions. When the switches
//! of a CPU do not chain (events were lost, or only a process tree was recorded), the quantum whose
//! start is unknown is dropped rather than guessed.

use std::collections::{BTreeMap, HashSet};

use trace::timeline::Timeline;
use trace::{EndReason, Record, Source};

use crate::format::{comm_str, Event, Header, Kind, Log, FLAG_PREEMPT};

pub use trace::summary::Percentiles;
pub use trace::timeline::{Group, Stretch, TaskStats};

/// The kernel's TASK_DEAD bit in `prev_state`.
const TASK_DEAD: u64 = 0x80;

/// A recording as a trace: its header and records, in time order (a Run at its start), task names
/// first.
#[derive(Clone, Debug)]
pub struct Converted {
    /// The trace's header (source klogger, the recorded kernel, the processes followed).
    pub header: trace::Header,
    /// The records.
    pub records: Vec<Record>,
    /// Event records read (not counting the recorder's lost/end records).
    pub events: u64,
    /// Switches whose `prev` was not the task the CPU was last switched to (lost events, or tasks
    /// outside a followed tree).
    pub broken_chains: u64,
}

/// Converts a recording's events (in any order: they are sorted by time here).
pub fn convert(header: &Header, events: &[Event]) -> Converted {
    let mut ev: Vec<&Event> = events.iter().filter(|e| !matches!(e.kind, Kind::Lost | Kind::End)).collect();
    ev.sort_by_key(|e| e.ts);
    let start = ev.first().map(|e| e.ts).unwrap_or(header.start_ns);
    let end = ev.last().map(|e| e.ts).unwrap_or(start);
    let ncpu = ev.iter().map(|e| e.cpu as usize + 1).max().unwrap_or(0).max(header.cpus as usize);
    let mut names: BTreeMap<u32, (u32, String)> = BTreeMap::new();
    let mut note = |tid: u32, tgid: u32, comm: &[u8; 16]| {
        let name = if tid == 0 { "idle".to_string() } else { comm_str(comm) };
        names.insert(tid, (tgid, name));
    };
    let mut cur: Vec<Option<(u32, u64)>> = vec![None; ncpu];
    let mut timed: Vec<(u64, Record)> = Vec::new();
    let mut broken = 0;
    let mut followed: Option<HashSet<u32>> =
        if header.target == "system" { None } else { Some(header.pids.iter().copied().collect()) };
    for e in &ev {
        let c = e.cpu as usize;
        match e.kind {
            Kind::Switch => {
                note(e.pid, e.tgid, &e.comm);
                note(e.pid2, e.tgid2, &e.comm2);
                let why = if e.flags & FLAG_PREEMPT != 0 || e.arg == 0 {
                    EndReason::Preempted
                } else if e.arg & TASK_DEAD != 0 {
                    EndReason::Exit
                } else {
                    EndReason::Blocked
                };
                let run =
                    |task, start, complete| Record::Run { task, cpu: e.cpu, start, end: e.ts, why, complete };
                match cur[c] {
                    Some((tid, s)) if tid == e.pid => {
                        if e.ts > s {
                            timed.push((s, run(tid, s, true)));
                        }
                    }
                    Some(_) => broken += 1,
                    None => {
                        if e.ts > start {
                            timed.push((start, run(e.pid, start, false)));
                        }
                    }
                }
                cur[c] = Some((e.pid2, e.ts));
            }
            Kind::Wakeup | Kind::WakeupNew => {
                note(e.pid, e.tgid, &e.comm);
                timed.push((e.ts, Record::Wake { task: e.pid, cpu: Some(e.cpu), at: e.ts }));
            }
            Kind::Fork => {
                note(e.pid, e.tgid, &e.comm);
                note(e.pid2, e.tgid2, &e.comm2);
                if let Some(f) = followed.as_mut() {
                    if f.contains(&e.tgid) {
                        f.insert(e.tgid2);
                    }
                }
            }
            Kind::Exec | Kind::Exit => note(e.pid, e.tgid, &e.comm),
            // The tick hook records the task it interrupted.
            Kind::Tick => timed.push((e.ts, Record::Tick { cpu: e.cpu, task: Some(e.pid), at: e.ts })),
            _ => {}
        }
    }
    for (c, st) in cur.iter().enumerate() {
        if let Some((task, s)) = *st {
            if end > s {
                let why = EndReason::TraceEnd;
                timed.push((s, Record::Run { task, cpu: c as u32, start: s, end, why, complete: false }));
            }
        }
    }
    timed.sort_by_key(|(t, _)| *t);
    let source = Source::Klogger { kernel: header.kernel.clone(), target: header.target.clone() };
    let mut th = trace::Header::new(source, ncpu as u32, &header.clock, start, header.hz);
    th.followed = followed
        .map(|f| {
            let mut v: Vec<u32> = f.into_iter().collect();
            v.sort_unstable();
            v
        })
        .unwrap_or_default();
    let mut records: Vec<Record> =
        names.into_iter().map(|(task, (process, name))| Record::Task { task, process, name }).collect();
    records.extend(timed.into_iter().map(|(_, r)| r));
    records.push(Record::End { at: end });
    Converted { header: th, records, events: ev.len() as u64, broken_chains: broken }
}

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
        Trace { header, timeline, events: c.events, lost: 0, broken_chains: c.broken_chains }
    }

    /// Length of the recording window (ns).
    pub fn duration(&self) -> u64 {
        self.timeline.duration()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::format::{comm_bytes, FORMAT_VERSION, RECORD_SIZE};

    pub fn header(cpus: u32) -> Header {
        Header {
            tool: "klogger".into(),
            format_version: FORMAT_VERSION,
            record_size: RECORD_SIZE as u32,
            kernel: "synthetic".into(),
            hz: Some(100),
            cpus,
            clock: "CLOCK_MONOTONIC".into(),
            start_ns: 0,
            start_unix_s: 0.0,
            target: "system".into(),
            pids: vec![],
            command: vec![],
            tick_hook: None,
            buffer_bytes: 0,
        }
    }

    /// A switch on `cpu` at `ts` from `prev` (blocked if `blocked`) to `next`.
    pub fn sw(ts: u64, cpu: u32, prev: u32, next: u32, blocked: bool) -> Event {
        let mut e = Event::new(ts, cpu, Kind::Switch);
        e.pid = prev;
        e.tgid = prev;
        e.pid2 = next;
        e.tgid2 = next;
        e.arg = if blocked { 1 } else { 0 };
        e.comm = comm_bytes(&format!("t{prev}"));
        e.comm2 = comm_bytes(&format!("t{next}"));
        e
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
    fn broken_chain_drops_unknown_quantum() {
        // The switch 5->6 at 200 was lost: 6's switch-out at 300 has no known start.
        let ev = vec![sw(100, 0, 0, 5, false), sw(300, 0, 6, 0, true)];
        let t = Trace::from_events(header(1), &ev);
        assert_eq!(t.broken_chains, 1);
        assert!(t.timeline.runs.iter().all(|q| q.task != 6));
    }
}
