//! Traces that contradict themselves, generated (proptest): a record shifted before the trace's
//! start or past its end, an End record too early, two tasks on one CPU at once, a task on two CPUs
//! at once, a CPU the header lacks, a second End record, a request released
//! twice, ending twice, before its release or never released. A trace file is refused at the first such
//! record with the file and the record's byte offset; a klogger recording is read with what breaks
//! the rules left out and counted. Whatever is read, no analysis gives an impossible figure: a task
//! above 100 % of one CPU, more CPU time than the span × the CPUs, a window share above 1.

use std::path::Path;

use proptest::prelude::*;
use proptest::sample::Index;
use trace::klog::{self, Event, Kind};
use trace::timeline::{Group, Timeline};
use trace::{Consistency, EndReason, Header, Outcome, ReadError, Record, Source};

/// The figures of every analysis on `records` of a trace with `header`, checked against what a
/// machine of `header.cpus` CPUs can do over the trace's span. A klogger trace's task 0 is the idle
/// task of every CPU, held to the span × the CPUs instead of the span.
fn assert_possible(header: &Header, records: &[Record]) {
    let ok = || records.iter().cloned().map(Ok::<_, std::convert::Infallible>);
    let cpus = header.cpus as u64;
    let idle = |task: u32| task == 0 && header.source.tool() == "klogger";
    let one_task = |task: u32, span: u64| if idle(task) { span.saturating_mul(cpus) } else { span };

    let s = trace::summary::summarize(header, ok()).unwrap();
    assert!(s.end_ns >= s.start_ns, "span {}..{}", s.start_ns, s.end_ns);
    let span = s.end_ns - s.start_ns;
    let mut total = 0u64;
    for t in &s.tasks {
        assert!(t.cpu_ns <= one_task(t.task, span), "task {}: {} ns in {span} ns", t.task, t.cpu_ns);
        assert!(t.share <= 1.0, "task {}: share {}", t.task, t.share);
        total = total.saturating_add(t.cpu_ns);
    }
    assert!(total <= span.saturating_mul(cpus), "{total} ns of CPU in {span} ns × {cpus}");
    let d = trace::diff::diff(&s, &s);
    for t in &d.tasks {
        let most = if t.name == "idle" { 100.0 * cpus as f64 } else { 100.0 };
        assert!(t.a.cpu_pct <= most + 1e-9, "{}: {} % of one CPU", t.name, t.a.cpu_pct);
    }

    let tl = Timeline::from_records(header, ok()).unwrap();
    let span = tl.duration();
    for t in tl.task_stats(Group::Thread) {
        assert!(t.cpu_ns <= one_task(t.key, span), "task {}: {} ns in {span} ns", t.key, t.cpu_ns);
        assert!(t.cpu_share <= 1.0, "task {}: share {}", t.key, t.cpu_share);
    }
    for row in trace::billing::billing_table(&tl, &[100, 1000], 0, Group::Thread) {
        assert!(
            row.cpu_ns <= one_task(row.pid, span),
            "task {}: {} ns billed in {span}",
            row.pid,
            row.cpu_ns
        );
    }

    let mut w = trace::windows::Windows::new(header.start_ns, span / 7 + 1);
    records.iter().for_each(|r| w.add(r));
    let tasks = w.tasks().to_vec();
    for win in w.finish() {
        for (share, &task) in win.shares.iter().zip(&tasks) {
            let most = if idle(task) { cpus as f64 } else { 1.0 };
            assert!(*share <= most + 1e-9, "task {task} has {share} of one CPU in {win:?}");
        }
    }
}

const START: u64 = 1_000_000;

/// A consistent trace: `slots` after each other from [`START`], each `(length, choice)` where
/// `choice` gives each CPU a task (or none; never one task on two CPUs), a wake-up, a release, a
/// tick and a request end; a mark at the end of each slot; the End record `pad` ns after the last.
fn consistent(cpus: u32, tasks: u32, slots: &[(u64, u32)], pad: u64) -> (Header, Vec<Record>) {
    let source = Source::Simulator { scenario: "p.toml".into(), seed: 1, policy: "edf".into() };
    let header = Header::new(source, cpus, "simulated", START, Some(1000));
    let mut recs: Vec<Record> =
        (0..tasks).map(|task| Record::Task { task, process: task, name: format!("t{task}") }).collect();
    let mut t = START;
    for (k, &(len, choice)) in slots.iter().enumerate() {
        let (from, to) = (t, t + len);
        let mut busy = Vec::new();
        let task = |shift: u32| (choice >> shift) % (tasks + 1);
        let someone = task(28) % tasks;
        recs.push(Record::Wake { task: someone, cpu: Some(choice % cpus), at: from });
        recs.push(Record::Release { task: someone, job: k as u32, at: from, deadline: Some(to + len) });
        for cpu in 0..cpus {
            let who = task(cpu * 4);
            if who == tasks || busy.contains(&who) {
                continue;
            }
            busy.push(who);
            let why = [EndReason::Blocked, EndReason::Preempted, EndReason::SliceEnd][(choice % 3) as usize];
            recs.push(Record::Run { task: who, cpu, start: from, end: to, why, complete: true });
        }
        recs.push(Record::Tick { cpu: (choice >> 16) % cpus, task: busy.first().copied(), at: from });
        recs.push(Record::JobEnd { task: someone, job: k as u32, at: to, outcome: Outcome::Met });
        recs.push(Record::Mark { task: None, at: to, text: "slot".into() });
        t = to;
    }
    recs.push(Record::End { at: t + pad });
    (header, recs)
}

/// The latest time of a record, if it has one.
fn last_time(r: &Record) -> Option<u64> {
    match *r {
        Record::Task { .. } => None,
        Record::Run { end, .. } => Some(end),
        Record::Wake { at, .. }
        | Record::Tick { at, .. }
        | Record::Release { at, .. }
        | Record::JobEnd { at, .. }
        | Record::Notify { at, .. }
        | Record::Mark { at, .. }
        | Record::End { at } => Some(at),
    }
}

/// Sets every time of `r` to `to` (a run: its start if `first`, else its end, keeping it no shorter
/// than 0).
fn shift(r: &mut Record, to: u64, first: bool) {
    match r {
        Record::Task { .. } => {}
        Record::Run { start, end, .. } => {
            if first {
                *start = to;
            } else {
                *end = to;
            }
        }
        Record::Wake { at, .. }
        | Record::Tick { at, .. }
        | Record::Release { at, .. }
        | Record::JobEnd { at, .. }
        | Record::Notify { at, .. }
        | Record::Mark { at, .. }
        | Record::End { at } => *at = to,
    }
}

/// One way to break a trace's rules.
#[derive(Clone, Debug)]
enum Break {
    /// A record's first time before the trace's start.
    BeforeStart(Index, u64),
    /// A record's last time after its End record.
    AfterEnd(Index, u64),
    /// The End record before the latest time.
    EndTooEarly(u64),
    /// A run of another task inside a run, on its CPU.
    TwoTasksOnOneCpu(Index, u32),
    /// A run of a task inside its run, on another CPU.
    OneTaskOnTwoCpus(Index, u32),
    /// A CPU the header lacks.
    UnknownCpu(Index, u32),
    /// A second End record.
    SecondEnd,
    /// A request released a second time.
    ReleasedTwice(Index),
    /// A request that ends a second time.
    EndsTwice(Index),
    /// A request that ends before its release.
    EndsBeforeRelease(Index, u64),
    /// A request that ends and was never released.
    EndsUnreleased(u32),
}

fn breaks() -> impl Strategy<Value = Break> {
    prop_oneof![
        (any::<Index>(), 1..START).prop_map(|(i, d)| Break::BeforeStart(i, d)),
        (any::<Index>(), 1u64..1 << 40).prop_map(|(i, d)| Break::AfterEnd(i, d)),
        any::<u64>().prop_map(Break::EndTooEarly),
        (any::<Index>(), any::<u32>()).prop_map(|(i, t)| Break::TwoTasksOnOneCpu(i, t)),
        (any::<Index>(), any::<u32>()).prop_map(|(i, c)| Break::OneTaskOnTwoCpus(i, c)),
        (any::<Index>(), any::<u32>()).prop_map(|(i, c)| Break::UnknownCpu(i, c)),
        Just(Break::SecondEnd),
        any::<Index>().prop_map(Break::ReleasedTwice),
        any::<Index>().prop_map(Break::EndsTwice),
        (any::<Index>(), 1u64..1 << 40).prop_map(|(i, d)| Break::EndsBeforeRelease(i, d)),
        any::<u32>().prop_map(Break::EndsUnreleased),
    ]
}

/// Applies `b` to the records of a trace of `cpus` CPUs and `tasks` tasks; false if the trace has
/// nothing it applies to (then nothing changed).
fn apply(b: &Break, cpus: u32, tasks: u32, recs: &mut Vec<Record>) -> bool {
    let end = recs.iter().rposition(|r| matches!(r, Record::End { .. })).expect("an End record");
    let end_at = last_time(&recs[end]).unwrap();
    let timed: Vec<usize> = (0..recs.len()).filter(|&i| last_time(&recs[i]).is_some()).collect();
    let runs: Vec<usize> = (0..recs.len())
        .filter(|&i| matches!(recs[i], Record::Run { start, end, .. } if end - start >= 2))
        .collect();
    let releases: Vec<usize> =
        (0..recs.len()).filter(|&i| matches!(recs[i], Record::Release { .. })).collect();
    let ends: Vec<usize> = (0..recs.len()).filter(|&i| matches!(recs[i], Record::JobEnd { .. })).collect();
    match *b {
        Break::BeforeStart(i, d) => shift(&mut recs[*i.get(&timed)], START - d, true),
        Break::AfterEnd(i, d) => {
            let k = *i.get(&timed);
            if k == end {
                recs.push(Record::Mark { task: None, at: end_at + d, text: "late".into() });
            } else {
                shift(&mut recs[k], end_at + d, false);
            }
        }
        Break::EndTooEarly(d) => {
            let latest = timed.iter().filter(|&&i| i != end).filter_map(|&i| last_time(&recs[i])).max();
            let latest = latest.expect("a mark at the end of each slot");
            if latest <= START {
                return false; // every time moved before the start by other breaks
            }
            shift(&mut recs[end], latest - 1 - d % (latest - START), true);
        }
        Break::TwoTasksOnOneCpu(i, other) | Break::OneTaskOnTwoCpus(i, other) => {
            if runs.is_empty() {
                return false;
            }
            let k = *i.get(&runs);
            let Record::Run { task, cpu, start, end, why, .. } = recs[k] else { unreachable!() };
            let mid = start + (end - start) / 2;
            let (task, cpu) = match b {
                Break::OneTaskOnTwoCpus(..) if cpus > 1 => (task, (cpu + 1 + other % (cpus - 1)) % cpus),
                _ => (other % tasks, cpu),
            };
            recs.insert(k + 1, Record::Run { task, cpu, start: mid, end: mid + 1, why, complete: true });
        }
        Break::UnknownCpu(i, extra) => {
            let with_cpu: Vec<usize> = (0..recs.len())
                .filter(|&i| {
                    matches!(recs[i], Record::Run { .. } | Record::Tick { .. } | Record::Wake { .. })
                })
                .collect();
            let bad = cpus + extra % (u32::MAX - cpus);
            match &mut recs[*i.get(&with_cpu)] {
                Record::Run { cpu, .. } | Record::Tick { cpu, .. } => *cpu = bad,
                Record::Wake { cpu, .. } => *cpu = Some(bad),
                _ => unreachable!(),
            }
        }
        Break::SecondEnd => recs.push(Record::End { at: end_at }),
        Break::ReleasedTwice(i) | Break::EndsTwice(i) => {
            let of = if matches!(b, Break::ReleasedTwice(_)) { &releases } else { &ends };
            let k = *i.get(of);
            recs.insert(k + 1, recs[k].clone());
        }
        Break::EndsBeforeRelease(i, d) => {
            let Record::Release { task, job, at, .. } = recs[*i.get(&releases)] else { unreachable!() };
            let Some(k) = ends.iter().copied().find(
                |&k| matches!(recs[k], Record::JobEnd { task: t, job: j, .. } if (t, j) == (task, job)),
            ) else {
                return false; // the request's end moved by another break
            };
            shift(&mut recs[k], at.saturating_sub(d), true);
        }
        Break::EndsUnreleased(job) => {
            let job = job.max(1 << 20);
            recs.insert(end, Record::JobEnd { task: 0, job, at: end_at, outcome: Outcome::Aborted });
        }
    }
    true
}

/// The bytes of a trace, and the byte offset of each record.
fn write(header: &Header, recs: &[Record]) -> (Vec<u8>, Vec<u64>) {
    let head = trace::Writer::new(Vec::new(), header).unwrap().finish().unwrap();
    let (mut bytes, mut offsets) = (head.clone(), Vec::new());
    for r in recs {
        offsets.push(bytes.len() as u64);
        let mut w = trace::Writer::new(Vec::new(), header).unwrap();
        w.write(r).unwrap();
        bytes.extend_from_slice(&w.finish().unwrap()[head.len()..]);
    }
    (bytes, offsets)
}

/// Reads `bytes` as `p.trace`: the records read, and the error that stopped the reading, if any.
fn read(bytes: &[u8]) -> (Header, Vec<Record>, Option<ReadError>) {
    let mut r = trace::Reader::new(bytes, Path::new("p.trace")).unwrap();
    let mut got = Vec::new();
    loop {
        match r.next_record() {
            Ok(Some(rec)) => got.push(rec),
            Ok(None) => return (r.header().clone(), got, None),
            Err(e) => return (r.header().clone(), got, Some(e)),
        }
    }
}

fn slots() -> impl Strategy<Value = Vec<(u64, u32)>> {
    prop::collection::vec((2u64..1_000_000, any::<u32>()), 1..40)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    /// A consistent trace reads whole, and its figures are possible.
    #[test]
    fn a_consistent_trace_reads_whole(
        cpus in 1u32..5,
        tasks in 1u32..7,
        slots in slots(),
        pad in 0u64..1000,
    ) {
        let (header, recs) = consistent(cpus, tasks, &slots, pad);
        let (bytes, _) = write(&header, &recs);
        let (h, got, err) = read(&bytes);
        prop_assert!(err.is_none(), "{err:?}");
        prop_assert_eq!(&got, &recs);
        assert_possible(&h, &got);
    }

    /// A trace broken in one to three ways is refused at a record, named by the file and the
    /// record's byte offset; what was read before it gives possible figures.
    #[test]
    fn a_broken_trace_is_refused_with_the_file_and_the_offset(
        cpus in 1u32..5,
        tasks in 1u32..7,
        slots in slots(),
        pad in 0u64..1000,
        how in prop::collection::vec(breaks(), 1..4),
    ) {
        let (header, mut recs) = consistent(cpus, tasks, &slots, pad);
        let mut broken = false;
        for b in &how {
            broken |= apply(b, cpus, tasks, &mut recs);
        }
        let (bytes, offsets) = write(&header, &recs);
        let (h, got, err) = read(&bytes);
        assert_possible(&h, &got);
        if !broken {
            prop_assert!(err.is_none(), "{err:?}");
            return Ok(());
        }
        let Some(ReadError::Record { path, offset, what }) = err else {
            return Err(TestCaseError::fail(format!("{how:?} not refused: {err:?}")));
        };
        prop_assert_eq!(path, Path::new("p.trace"));
        prop_assert!(offsets.contains(&offset), "byte {} is no record's start: {}", offset, what);
        // The record named is one read, or the one the reading stopped at.
        prop_assert!(offsets.iter().position(|&o| o == offset).unwrap() <= got.len(), "{what}");
    }

    /// A klogger recording of switches, wake-ups and ticks at any time on any CPU (a task switched
    /// in on two CPUs at once, events before the start or after the End record) converts to a
    /// trace that keeps every rule, with what was left out counted; its figures are possible.
    #[test]
    fn a_klogger_recording_converts_to_a_consistent_trace(
        cpus in 1u32..5,
        events in prop::collection::vec(
            (0u64..12_000, any::<u32>(), 0u8..3, 0u32..5, 0u32..5, 0u64..3),
            0..200,
        ),
        clean in any::<bool>(),
    ) {
        let header = klog::Header { start_ns: 1000, ..klog::Header::new("p", cpus, Some(250)) };
        let mut ev: Vec<Event> = events.iter().map(|&(ts, cpu, kind, a, b, state)| {
            let cpu = cpu % cpus;
            match kind {
                0 => Event::switch(ts, cpu, (a, "a"), (b, "b"), state),
                1 => Event { pid: a, tgid: a, ..Event::new(ts, cpu, Kind::Wakeup) },
                _ => Event { pid: a, tgid: a, ..Event::new(ts, cpu, Kind::Tick) },
            }
        }).collect();
        let stop = 11_000;
        if clean {
            ev.push(Event::new(stop, 0, Kind::End));
        }
        let c = klog::convert(&header, &ev);
        let outside = events.iter().filter(|e| e.0 < 1000 || (clean && e.0 > stop)).count() as u64;
        prop_assert_eq!(c.left_out.outside_span, outside);
        let mut check = Consistency::new(&c.header);
        for (i, r) in c.records.iter().enumerate() {
            let res = check.check(r, i as u64);
            prop_assert!(res.is_ok(), "record {} ({:?}): {:?}", i, r, res);
        }
        assert_possible(&c.header, &c.records);
    }
}
