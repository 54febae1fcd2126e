//! From events to quanta: replays the switches of each CPU to find every effective quantum
//! (Etsion et al. §4, §6: the time from being scheduled to being descheduled), how it ended
//! (preempted while runnable, or blocked), the wake-up-to-run latencies, and the ticks that fell
//! inside each quantum.
//!
//! A quantum already running when recording began, or still running when it ended, is *partial*:
//! its CPU time counts, but it is left out of quantum counts and distributions. When the switches
//! of a CPU do not chain (events were lost, or only a process tree was recorded), the quantum whose
//! start is unknown is dropped rather than guessed.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::format::{comm_str, Event, Header, Kind, Log, FLAG_PREEMPT};

/// The kernel's TASK_DEAD bit in `prev_state`.
const TASK_DEAD: u64 = 0x80;

/// How a quantum ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndKind {
    /// Descheduled while still runnable (preempted, or yielded).
    Preempted,
    /// Descheduled because it blocked (sleep, I/O, lock...).
    Blocked,
    /// Descheduled for the last time: the task exited.
    Exited,
    /// Still running when recording stopped.
    TraceEnd,
}

/// One effective quantum: a task on a CPU from its switch-in to its switch-out.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantum {
    /// Thread id (0 = the idle task of that CPU).
    pub tid: u32,
    /// CPU.
    pub cpu: u32,
    /// Start (ns).
    pub start: u64,
    /// End (ns), > start.
    pub end: u64,
    /// How it ended.
    pub end_kind: EndKind,
    /// False if it was cut by the start or the end of the recording.
    pub complete: bool,
    /// Ticks recorded by the real kernel inside [start, end).
    pub observed_ticks: u32,
}

impl Quantum {
    /// Length in ns.
    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    /// True for an empty quantum (never built by [`Trace::from_events`]).
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// What is known about a thread.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskMeta {
    /// Process id.
    pub tgid: u32,
    /// Last command name seen.
    pub name: String,
    /// Wake-ups (sched_wakeup + sched_wakeup_new) of this thread.
    pub wakeups: u64,
    /// Wake-up to switch-in latencies (ns).
    pub latencies: Vec<u64>,
}

/// A recording turned into quanta.
#[derive(Clone, Debug)]
pub struct Trace {
    /// The file's header.
    pub header: Header,
    /// First event time (ns).
    pub start: u64,
    /// Last event time (ns).
    pub end: u64,
    /// Every quantum, in CPU order then time order.
    pub quanta: Vec<Quantum>,
    /// Threads by thread id.
    pub tasks: HashMap<u32, TaskMeta>,
    /// Recorded tick times per CPU, sorted.
    pub ticks: Vec<Vec<u64>>,
    /// Event records (not counting the recorder's lost/end records).
    pub events: u64,
    /// Events lost in the kernel.
    pub lost: u64,
    /// Switches whose `prev` was not the task the CPU was last switched to (lost events, or tasks
    /// outside a followed tree).
    pub broken_chains: u64,
    /// For a process-tree recording, the followed process ids (None = system-wide).
    pub followed: Option<HashSet<u32>>,
}

impl Trace {
    /// Builds quanta from a log.
    pub fn from_log(log: &Log) -> Trace {
        let mut t = Trace::from_events(log.header.clone(), &log.events);
        t.lost = log.lost();
        t
    }

    /// Builds quanta from events in any order (they are sorted by time here).
    pub fn from_events(header: Header, events: &[Event]) -> Trace {
        let mut ev: Vec<&Event> =
            events.iter().filter(|e| !matches!(e.kind, Kind::Lost | Kind::End)).collect();
        ev.sort_by_key(|e| e.ts);
        let start = ev.first().map(|e| e.ts).unwrap_or(header.start_ns);
        let end = ev.last().map(|e| e.ts).unwrap_or(start);
        let ncpu = ev.iter().map(|e| e.cpu as usize + 1).max().unwrap_or(0).max(header.cpus as usize);
        let mut tasks: HashMap<u32, TaskMeta> = HashMap::new();
        let mut note = |tid: u32, tgid: u32, comm: &[u8; 16]| {
            let m = tasks.entry(tid).or_default();
            m.tgid = tgid;
            m.name = if tid == 0 { "idle".to_string() } else { comm_str(comm) };
        };
        let mut cur: Vec<Option<(u32, u64)>> = vec![None; ncpu];
        let mut pending_wake: HashMap<u32, u64> = HashMap::new();
        let mut latencies: Vec<(u32, u64)> = Vec::new();
        let mut wakeups: HashMap<u32, u64> = HashMap::new();
        let mut quanta = Vec::new();
        let mut ticks = vec![Vec::new(); ncpu];
        let mut broken = 0;
        let mut followed: Option<HashSet<u32>> =
            if header.target == "system" { None } else { Some(header.pids.iter().copied().collect()) };
        for e in &ev {
            let c = e.cpu as usize;
            match e.kind {
                Kind::Switch => {
                    note(e.pid, e.tgid, &e.comm);
                    note(e.pid2, e.tgid2, &e.comm2);
                    let end_kind = if e.flags & FLAG_PREEMPT != 0 || e.arg == 0 {
                        EndKind::Preempted
                    } else if e.arg & TASK_DEAD != 0 {
                        EndKind::Exited
                    } else {
                        EndKind::Blocked
                    };
                    match cur[c] {
                        Some((tid, s)) if tid == e.pid => {
                            if e.ts > s {
                                quanta.push(Quantum {
                                    tid,
                                    cpu: e.cpu,
                                    start: s,
                                    end: e.ts,
                                    end_kind,
                                    complete: true,
                                    observed_ticks: 0,
                                });
                            }
                        }
                        Some(_) => broken += 1,
                        None => {
                            if e.ts > start {
                                quanta.push(Quantum {
                                    tid: e.pid,
                                    cpu: e.cpu,
                                    start,
                                    end: e.ts,
                                    end_kind,
                                    complete: false,
                                    observed_ticks: 0,
                                });
                            }
                        }
                    }
                    cur[c] = Some((e.pid2, e.ts));
                    if let Some(w) = pending_wake.remove(&e.pid2) {
                        latencies.push((e.pid2, e.ts - w));
                    }
                }
                Kind::Wakeup | Kind::WakeupNew => {
                    note(e.pid, e.tgid, &e.comm);
                    *wakeups.entry(e.pid).or_default() += 1;
                    pending_wake.entry(e.pid).or_insert(e.ts);
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
                Kind::Tick => ticks[c].push(e.ts),
                _ => {}
            }
        }
        for (c, st) in cur.iter().enumerate() {
            if let Some((tid, s)) = *st {
                if end > s {
                    quanta.push(Quantum {
                        tid,
                        cpu: c as u32,
                        start: s,
                        end,
                        end_kind: EndKind::TraceEnd,
                        complete: false,
                        observed_ticks: 0,
                    });
                }
            }
        }
        for tk in ticks.iter_mut() {
            tk.sort_unstable();
        }
        quanta.sort_by_key(|q| (q.cpu, q.start));
        for q in quanta.iter_mut() {
            let tk = &ticks[q.cpu as usize];
            let a = tk.partition_point(|&t| t < q.start);
            let b = tk.partition_point(|&t| t < q.end);
            q.observed_ticks = (b - a) as u32;
        }
        for (tid, n) in wakeups {
            tasks.entry(tid).or_default().wakeups = n;
        }
        for (tid, l) in latencies {
            tasks.entry(tid).or_default().latencies.push(l);
        }
        Trace {
            header,
            start,
            end,
            quanta,
            tasks,
            ticks,
            events: ev.len() as u64,
            lost: 0,
            broken_chains: broken,
            followed,
        }
    }

    /// Length of the recording window (ns).
    pub fn duration(&self) -> u64 {
        self.end - self.start
    }

    /// Whether a thread belongs to what was recorded (always true system-wide).
    pub fn is_followed(&self, tid: u32) -> bool {
        match &self.followed {
            None => true,
            Some(f) => self.tasks.get(&tid).map(|m| f.contains(&m.tgid)).unwrap_or(false),
        }
    }

    /// Key of a thread under a grouping: the thread id, or its process id.
    pub fn key(&self, tid: u32, group: Group) -> u32 {
        match group {
            Group::Thread => tid,
            Group::Process => self.tasks.get(&tid).map(|m| m.tgid).unwrap_or(tid),
        }
    }

    /// Display name of a key under a grouping.
    pub fn name_of(&self, key: u32, group: Group) -> String {
        if key == 0 {
            return "idle".into();
        }
        match group {
            Group::Thread => self.tasks.get(&key).map(|m| m.name.clone()),
            Group::Process => self
                .tasks
                .get(&key)
                .filter(|m| m.tgid == key)
                .map(|m| m.name.clone())
                .or_else(|| self.tasks.values().find(|m| m.tgid == key).map(|m| m.name.clone())),
        }
        .unwrap_or_else(|| format!("pid{key}"))
    }

    /// Per-task statistics, sorted by CPU time, largest first.
    pub fn task_stats(&self, group: Group) -> Vec<TaskStats> {
        let mut by: BTreeMap<u32, TaskStats> = BTreeMap::new();
        let dur = self.duration().max(1) as f64;
        let cap = dur * self.ticks.len().max(1) as f64;
        for q in &self.quanta {
            if !self.is_followed(q.tid) {
                continue;
            }
            let k = self.key(q.tid, group);
            let s = by.entry(k).or_insert_with(|| TaskStats::new(k));
            s.cpu_ns += q.len();
            if q.complete || q.end_kind == EndKind::TraceEnd {
                s.switches_in += 1;
            }
            if q.complete {
                s.quanta += 1;
                match q.end_kind {
                    EndKind::Preempted => s.preempted.push(q.len()),
                    EndKind::Blocked | EndKind::Exited => s.blocked.push(q.len()),
                    EndKind::TraceEnd => {}
                }
            }
        }
        for (&tid, m) in &self.tasks {
            if !self.is_followed(tid) {
                continue;
            }
            let k = self.key(tid, group);
            if m.wakeups == 0 && m.latencies.is_empty() && !by.contains_key(&k) {
                continue;
            }
            let s = by.entry(k).or_insert_with(|| TaskStats::new(k));
            s.wakeups += m.wakeups;
            s.latencies.extend_from_slice(&m.latencies);
        }
        let mut v: Vec<TaskStats> = by
            .into_values()
            .map(|mut s| {
                s.name = self.name_of(s.key, group);
                s.tgid = match group {
                    Group::Thread => self.tasks.get(&s.key).map(|m| m.tgid).unwrap_or(0),
                    Group::Process => s.key,
                };
                s.cpu_share = s.cpu_ns as f64 / cap;
                s.quanta_per_s = s.quanta as f64 / (dur / 1e9);
                s.preempted.sort_unstable();
                s.blocked.sort_unstable();
                s.latencies.sort_unstable();
                s
            })
            .collect();
        v.sort_by(|a, b| b.cpu_ns.cmp(&a.cpu_ns).then(a.key.cmp(&b.key)));
        v
    }

    /// Median phase of the recorded ticks modulo the tick period (ns), if ticks were recorded.
    pub fn observed_tick_phase(&self, hz: u32) -> Option<u64> {
        let p = 1_000_000_000 / hz as u64;
        let mut ph: Vec<u64> = self.ticks.iter().flatten().map(|t| t % p).collect();
        if ph.is_empty() {
            return None;
        }
        ph.sort_unstable();
        Some(ph[ph.len() / 2])
    }
}

/// How tasks are grouped in reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// One row per thread (Linux task).
    Thread,
    /// One row per process (all its threads together, like Etsion's "applications").
    Process,
}

/// Statistics of one task (thread or process).
#[derive(Clone, Debug, Default)]
pub struct TaskStats {
    /// Thread id or process id, as grouped.
    pub key: u32,
    /// Process id.
    pub tgid: u32,
    /// Command name.
    pub name: String,
    /// CPU time (ns), partial quanta included.
    pub cpu_ns: u64,
    /// Share of the machine's capacity (window × CPUs).
    pub cpu_share: f64,
    /// Complete quanta.
    pub quanta: u64,
    /// Complete quanta per second of the window.
    pub quanta_per_s: f64,
    /// Times switched in during the window.
    pub switches_in: u64,
    /// Wake-ups.
    pub wakeups: u64,
    /// Lengths of complete quanta that ended in preemption, sorted.
    pub preempted: Vec<u64>,
    /// Lengths of complete quanta that ended in blocking (or exit), sorted.
    pub blocked: Vec<u64>,
    /// Wake-up to run latencies, sorted.
    pub latencies: Vec<u64>,
}

impl TaskStats {
    fn new(key: u32) -> Self {
        TaskStats { key, ..Default::default() }
    }
}

/// Percentiles of a sorted sample.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Percentiles {
    /// Sample size.
    pub count: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Maximum.
    pub max: u64,
    /// Mean.
    pub mean: f64,
}

/// Nearest-rank percentiles of a sorted sample (all zero for an empty one).
pub fn percentiles(sorted: &[u64]) -> Percentiles {
    if sorted.is_empty() {
        return Percentiles::default();
    }
    let at = |p: f64| {
        let r = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[r - 1]
    };
    Percentiles {
        count: sorted.len() as u64,
        p50: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        max: *sorted.last().unwrap(),
        mean: sorted.iter().map(|&x| x as f64).sum::<f64>() / sorted.len() as f64,
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
        assert_eq!(t.start, 100);
        assert_eq!(t.end, 500);
        let s = t.task_stats(Group::Thread);
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
        assert!(t.quanta.iter().all(|q| q.tid != 6));
    }

    #[test]
    fn percentiles_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        let p = percentiles(&v);
        assert_eq!((p.p50, p.p90, p.p99, p.max, p.count), (50, 90, 99, 100, 100));
        assert_eq!(percentiles(&[]).count, 0);
    }
}
