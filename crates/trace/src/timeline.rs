//! A trace gathered for the analyses that need every stretch at once (effective quanta and their
//! distributions, tick billing, figures): the stretches of each CPU in time order, each task's name,
//! process, wake-ups and wake-up latencies, and the ticks of each CPU. Built from the records of any
//! source, so klogger's analyses (Etsion et al. §4, §6) run on a simulated trace as on a recording.
//!
//! Stretches cut by the start or the end of the recording count as CPU time but not as quanta. A
//! CPU's idle time is a task of its own where the source records it (klogger's task 0, "idle").
//! Memory: every stretch is kept (40 bytes each); [`crate::summary`] is the
//! streaming alternative for per-task totals.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::{EndReason, Header, Record};

/// One stretch of a task on a CPU (an effective quantum when complete).
#[derive(Clone, Debug, PartialEq)]
pub struct Stretch {
    /// Task id (0 = the idle task of that CPU).
    pub task: u32,
    /// CPU.
    pub cpu: u32,
    /// Start (ns).
    pub start: u64,
    /// End (ns), > start.
    pub end: u64,
    /// Why it ended.
    pub why: EndReason,
    /// False if it was cut by the start or the end of the recording.
    pub complete: bool,
    /// Ticks of the trace (the real kernel's, or the simulated machine's) inside [start, end).
    pub observed_ticks: u32,
}

impl Stretch {
    /// Length in ns.
    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    /// True for an empty stretch (never built from a trace: empty Run records are dropped).
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// What is known about a task.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskMeta {
    /// Process id (the task's own id when the source has no processes).
    pub process: u32,
    /// Last name seen.
    pub name: String,
    /// Wake-ups.
    pub wakeups: u64,
    /// From a wake-up to the task's next stretch (ns).
    pub latencies: Vec<u64>,
}

/// A trace's stretches, tasks and ticks.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// CPUs.
    pub cpus: u32,
    /// The traced system's tick rate, if known.
    pub hz: Option<u32>,
    /// Start of the recording (ns).
    pub start: u64,
    /// End: the End record, or the last time seen.
    pub end: u64,
    /// Every stretch, in CPU order then time order.
    pub runs: Vec<Stretch>,
    /// Tasks by id.
    pub tasks: HashMap<u32, TaskMeta>,
    /// Tick times per CPU, sorted.
    pub ticks: Vec<Vec<u64>>,
    /// For a recording of some processes, those followed (None = everything).
    pub followed: Option<HashSet<u32>>,
}

impl Timeline {
    /// Gathers the records of a trace with `header`.
    pub fn from_records<E>(
        header: &Header,
        records: impl IntoIterator<Item = Result<Record, E>>,
    ) -> Result<Timeline, E> {
        let mut tasks: HashMap<u32, TaskMeta> = HashMap::new();
        let mut runs = Vec::new();
        let mut ticks: Vec<Vec<(u64, Option<u32>)>> = vec![Vec::new(); header.cpus as usize];
        let mut wakes: Vec<(u32, u64)> = Vec::new();
        let (mut end, mut ended) = (header.start_ns, None);
        for r in records {
            match r? {
                Record::Task { task, process, name } => {
                    let m = tasks.entry(task).or_default();
                    m.process = process;
                    m.name = name;
                }
                Record::Run { task, cpu, start, end: e, why, complete } => {
                    end = end.max(e);
                    if e > start {
                        runs.push(Stretch { task, cpu, start, end: e, why, complete, observed_ticks: 0 });
                    }
                }
                Record::Wake { task, at, .. } => {
                    end = end.max(at);
                    tasks.entry(task).or_default().wakeups += 1;
                    wakes.push((task, at));
                }
                Record::Tick { cpu, task, at } => {
                    end = end.max(at);
                    if ticks.len() <= cpu as usize {
                        ticks.resize(cpu as usize + 1, Vec::new());
                    }
                    ticks[cpu as usize].push((at, task));
                }
                Record::Release { at, .. }
                | Record::JobEnd { at, .. }
                | Record::Notify { at, .. }
                | Record::Mark { at, .. } => end = end.max(at),
                Record::End { at } => ended = Some(at),
            }
        }
        for tk in ticks.iter_mut() {
            tk.sort_unstable();
        }
        runs.sort_by_key(|q: &Stretch| (q.cpu, q.start));
        // A tick belongs to the stretch it falls in, [start, end). At a switch exactly on a tick, the
        // tick's own record decides when it names the task it found running: a simulator switching
        // at the tick bills it to the task the tick stopped, as Linux's tick handler does.
        // A stretch followed at once by one of the same task on its CPU (a slice renewed on a tick)
        // leaves the tick at their boundary to the second, which holds it: counted once.
        let continued: Vec<bool> = (0..runs.len())
            .map(|i| {
                runs.get(i + 1)
                    .is_some_and(|n| n.cpu == runs[i].cpu && n.start == runs[i].end && n.task == runs[i].task)
            })
            .collect();
        for (q, continued) in runs.iter_mut().zip(continued) {
            if let Some(tk) = ticks.get(q.cpu as usize) {
                let a = tk.partition_point(|t| t.0 < q.start);
                let b = tk.partition_point(|t| t.0 < q.end);
                let other = |t: &&(u64, Option<u32>)| t.1.is_some_and(|x| x != q.task);
                let lost = tk[a..b].iter().take_while(|t| t.0 == q.start).filter(other).count();
                let gained = if continued {
                    0
                } else {
                    tk[b..].iter().take_while(|t| t.0 == q.end && t.1 == Some(q.task)).count()
                };
                q.observed_ticks = (b - a - lost + gained) as u32;
            }
        }
        let ticks: Vec<Vec<u64>> =
            ticks.into_iter().map(|tk| tk.into_iter().map(|t| t.0).collect()).collect();
        // Wake-up latency: from the first wake-up since the task's last start to its next start (a
        // wake-up at the very time of a start comes before it), whatever order the source wrote
        // the records in.
        wakes.sort_unstable();
        let mut starts: Vec<(u32, u64)> = runs.iter().map(|q| (q.task, q.start)).collect();
        starts.sort_unstable();
        let mut w = wakes.iter().peekable();
        for &(task, start) in &starts {
            let mut pending: Option<(u32, u64)> = None;
            while let Some(&&(wt, at)) = w.peek() {
                if (wt, at) > (task, start) {
                    break;
                }
                w.next();
                if wt == task && pending.is_none() {
                    pending = Some((wt, at));
                }
            }
            if let Some((_, at)) = pending.take() {
                tasks.entry(task).or_default().latencies.push(start - at);
            }
        }
        let followed = (!header.followed.is_empty()).then(|| header.followed.iter().copied().collect());
        Ok(Timeline {
            cpus: header.cpus,
            hz: header.hz,
            start: header.start_ns,
            end: ended.unwrap_or(end),
            runs,
            tasks,
            ticks,
            followed,
        })
    }

    /// Length of the recording (ns).
    pub fn duration(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    /// Whether a task belongs to what was recorded (always true for a whole system or a simulation).
    pub fn is_followed(&self, task: u32) -> bool {
        match &self.followed {
            None => true,
            Some(f) => self.tasks.get(&task).is_some_and(|m| f.contains(&m.process)),
        }
    }

    /// Key of a task under a grouping: its id, or its process's.
    pub fn key(&self, task: u32, group: Group) -> u32 {
        match group {
            Group::Thread => task,
            Group::Process => self.tasks.get(&task).map_or(task, |m| m.process),
        }
    }

    /// Display name of a key under a grouping: a thread's name; a process's is its leader's (the
    /// task whose id is the process's), else that of its task of smallest id; `pid{key}` when
    /// unknown. For every key at once, [`Timeline::names`] (one pass, not one per key).
    pub fn name_of(&self, key: u32, group: Group) -> String {
        match group {
            Group::Thread => self.tasks.get(&key).map(|m| m.name.clone()),
            Group::Process => {
                self.tasks.get(&key).filter(|m| m.process == key).map(|m| m.name.clone()).or_else(|| {
                    let members = self.tasks.iter().filter(|(_, m)| m.process == key);
                    members.min_by_key(|(id, _)| **id).map(|(_, m)| m.name.clone())
                })
            }
        }
        .unwrap_or_else(|| format!("pid{key}"))
    }

    /// The display name of every key under a grouping, as [`Timeline::name_of`] gives it, in one
    /// pass over the tasks (a key missing here is `pid{key}`).
    pub fn names(&self, group: Group) -> HashMap<u32, &str> {
        match group {
            Group::Thread => self.tasks.iter().map(|(&id, m)| (id, m.name.as_str())).collect(),
            Group::Process => {
                // Per process: its leader if it has one, else its task of smallest id.
                let mut best: HashMap<u32, (bool, u32, &str)> = HashMap::new();
                for (&id, m) in &self.tasks {
                    let cand = (id == m.process, id, m.name.as_str());
                    let b = best.entry(m.process).or_insert(cand);
                    if (cand.0, std::cmp::Reverse(cand.1)) > (b.0, std::cmp::Reverse(b.1)) {
                        *b = cand;
                    }
                }
                best.into_iter().map(|(k, (_, _, n))| (k, n)).collect()
            }
        }
    }

    /// Per-task statistics (followed tasks only), largest CPU time first.
    pub fn task_stats(&self, group: Group) -> Vec<TaskStats> {
        let mut by: BTreeMap<u32, TaskStats> = BTreeMap::new();
        let dur = self.duration().max(1) as f64;
        let cap = dur * self.cpus.max(1) as f64;
        for q in &self.runs {
            if !self.is_followed(q.task) {
                continue;
            }
            let k = self.key(q.task, group);
            let s = by.entry(k).or_insert_with(|| TaskStats::new(k));
            s.cpu_ns = s.cpu_ns.saturating_add(q.len()); // a hostile trace may overlap runs
            if q.complete || q.why == EndReason::TraceEnd {
                s.switches_in += 1;
            }
            if q.complete {
                s.quanta += 1;
                if q.why.runnable() {
                    s.preempted.push(q.len());
                } else if q.why != EndReason::TraceEnd {
                    s.blocked.push(q.len());
                }
            }
        }
        for (&id, m) in &self.tasks {
            if !self.is_followed(id) {
                continue;
            }
            let k = self.key(id, group);
            if m.wakeups == 0 && m.latencies.is_empty() && !by.contains_key(&k) {
                continue;
            }
            let s = by.entry(k).or_insert_with(|| TaskStats::new(k));
            s.wakeups += m.wakeups;
            s.latencies.extend_from_slice(&m.latencies);
        }
        let names = self.names(group);
        let mut v: Vec<TaskStats> = by
            .into_values()
            .map(|mut s| {
                s.name = names.get(&s.key).map_or_else(|| format!("pid{}", s.key), |n| n.to_string());
                s.process = match group {
                    Group::Thread => self.tasks.get(&s.key).map_or(0, |m| m.process),
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

    /// Median phase of the trace's ticks modulo the tick period (ns), if it has ticks.
    pub fn observed_tick_phase(&self, hz: u32) -> Option<u64> {
        let p = crate::tick_period_ns(hz);
        let mut ph: Vec<u64> = self.ticks.iter().flatten().map(|t| t % p).collect();
        if ph.is_empty() {
            return None;
        }
        ph.sort_unstable();
        Some(ph[ph.len() / 2])
    }
}

/// How tasks are grouped in reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// One row per thread (Linux task; a simulated task).
    Thread,
    /// One row per process (all its threads together, like Etsion's "applications").
    Process,
}

impl std::str::FromStr for Group {
    type Err = String;

    fn from_str(s: &str) -> Result<Group, String> {
        match s {
            "thread" => Ok(Group::Thread),
            "process" => Ok(Group::Process),
            _ => Err(format!("unknown grouping {s:?}: use thread or process")),
        }
    }
}

/// Statistics of one task (thread or process).
#[derive(Clone, Debug, Default)]
pub struct TaskStats {
    /// Task id or process id, as grouped.
    pub key: u32,
    /// Process id.
    pub process: u32,
    /// Name.
    pub name: String,
    /// CPU time (ns), stretches cut by the recording included.
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
    /// Lengths of complete quanta that ended while runnable (preempted, yielded, slice end), sorted.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Source;

    fn run(task: u32, start: u64, end: u64, why: EndReason) -> Result<Record, ()> {
        Ok(Record::Run { task, cpu: 0, start, end, why, complete: true })
    }

    #[test]
    fn a_tick_on_a_switch_goes_where_its_record_says() {
        // Task 1 runs 0..10, task 2 10..20; ticks at 10 (naming task 1, as a simulator switching on
        // the tick writes it) and at 20 (naming nobody: the half-open rule gives it to whoever
        // starts there, here nobody).
        let h = Header::new(Source::Hourglass { kernel: "k".into() }, 1, "CLOCK_MONOTONIC", 0, Some(100));
        let recs = vec![
            run(1, 0, 10, EndReason::SliceEnd),
            run(2, 10, 20, EndReason::SliceEnd),
            Ok(Record::Tick { cpu: 0, task: Some(1), at: 10 }),
            Ok(Record::Tick { cpu: 0, task: None, at: 5 }),
        ];
        let t = Timeline::from_records(&h, recs).unwrap();
        assert_eq!(t.runs.iter().map(|q| q.observed_ticks).collect::<Vec<_>>(), vec![2, 0]);
    }

    #[test]
    fn a_tick_between_two_stretches_of_one_task_counts_once() {
        // Task 5 runs 0..4 and 4..8 (its slice renewed on the tick at 4, which names it), then task 6
        // 8..12 (the tick at 8 stopped 5 and names it; the tick at 12 ends the trace).
        let h = Header::new(
            Source::Simulator { scenario: "s".into(), seed: 1, policy: "p".into() },
            1,
            "simulated",
            0,
            Some(250),
        );
        let recs = vec![
            run(5, 0, 4, EndReason::SliceEnd),
            run(5, 4, 8, EndReason::Preempted),
            run(6, 8, 12, EndReason::SliceEnd),
            Ok(Record::Tick { cpu: 0, task: Some(5), at: 4 }),
            Ok(Record::Tick { cpu: 0, task: Some(5), at: 8 }),
            Ok(Record::End { at: 12 }),
        ];
        let t = Timeline::from_records(&h, recs).unwrap();
        assert_eq!(t.runs.iter().map(|q| q.observed_ticks).collect::<Vec<_>>(), vec![0, 2, 0]);
    }

    #[test]
    fn quanta_latencies_and_ticks_as_computed_by_hand() {
        // Task 5 runs 100..250 (blocks), is woken at 300, runs 320..400 (preempted by 6); 6 runs
        // 400..500 when the recording ends. Ticks at 200 and 450.
        let mut h =
            Header::new(Source::Hourglass { kernel: "k".into() }, 1, "CLOCK_MONOTONIC", 100, Some(100));
        h.followed = vec![];
        let recs = vec![
            Ok(Record::Task { task: 5, process: 5, name: "five".into() }),
            run(5, 100, 250, EndReason::Blocked),
            Ok(Record::Wake { task: 5, cpu: None, at: 300 }),
            run(5, 320, 400, EndReason::Preempted),
            Ok(Record::Run {
                task: 6,
                cpu: 0,
                start: 400,
                end: 500,
                why: EndReason::TraceEnd,
                complete: false,
            }),
            Ok(Record::Tick { cpu: 0, task: None, at: 200 }),
            Ok(Record::Tick { cpu: 0, task: None, at: 450 }),
            Ok(Record::End { at: 500 }),
        ];
        let t = Timeline::from_records(&h, recs).unwrap();
        assert_eq!((t.start, t.end, t.runs.len()), (100, 500, 3));
        assert_eq!(t.runs.iter().map(|q| q.observed_ticks).collect::<Vec<_>>(), vec![1, 0, 1]);
        let s = t.task_stats(Group::Thread);
        let t5 = s.iter().find(|x| x.key == 5).unwrap();
        assert_eq!((t5.name.as_str(), t5.cpu_ns, t5.quanta), ("five", 230, 2));
        assert_eq!((t5.blocked.clone(), t5.preempted.clone()), (vec![150], vec![80]));
        assert_eq!((t5.wakeups, t5.latencies.clone(), t5.switches_in), (1, vec![20], 2));
        let t6 = s.iter().find(|x| x.key == 6).unwrap();
        assert_eq!((t6.cpu_ns, t6.quanta, t6.switches_in), (100, 0, 1));
        assert!((t6.cpu_share - 0.25).abs() < 1e-12);
        assert_eq!(t.observed_tick_phase(100), Some(450), "the median of 200 and 450, modulo 10 ms");
    }

    #[test]
    fn overlapping_runs_of_a_hostile_trace_saturate_in_stats_and_billing() {
        let h = Header::new(Source::Hourglass { kernel: "k".into() }, 1, "CLOCK_MONOTONIC", 0, Some(100));
        let half = 1u64 << 63;
        let recs = vec![run(1, 0, half, EndReason::Exit), run(1, 0, half, EndReason::Exit)];
        let t = Timeline::from_records(&h, recs).unwrap();
        assert_eq!(t.task_stats(Group::Thread)[0].cpu_ns, u64::MAX);
        let b = crate::billing::billing_table(&t, &[1000], 0, Group::Thread);
        assert_eq!(b[0].cpu_ns, u64::MAX);
        assert_eq!(b[0].billing[0].billed_ns, u64::MAX);
    }
}
