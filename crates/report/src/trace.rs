//! Chrome trace event JSON, the format Perfetto's UI (<https://ui.perfetto.dev>) and
//! `chrome://tracing` open.

use std::collections::HashMap;
use std::io::Write;

use serde::Serialize;

/// The process of the task tracks, and of the CPU tracks (written only if a CPU track is used).
const PID: u32 = 1;
const CPU_PID: u32 = 2;

/// Perfetto / Chrome trace event JSON (`"traceEvents"`): complete events (`"ph":"X"`) for
/// execution intervals, instant events (`"ph":"i"`) for marks (deadline misses,
/// notifications), one track (tid) per task with `thread_name` metadata; optionally a second process
/// "CPUs" with one track per CPU ([`Trace::cpu_interval`]), where each interval is named by the task
/// that ran.
///
/// Times are given in nanoseconds and written in microseconds with a fractional part
/// (`"ts": 1234.567`), as the format requires; `displayTimeUnit` is `"ns"`. All tasks belong to
/// one process named by [`Trace::new`]. A task need not be declared with [`Trace::task`] before
/// its events are added (its track is then unnamed); tracks are sorted by task id.
///
/// Events are written in the order they were added. Event names are interned, so a long
/// simulation with millions of intervals stays compact in memory.
///
/// ```
/// let mut t = report::Trace::new("smartsim: smart");
/// t.task(1, "R1");
/// t.interval(1, 0, 28_500_000, "run");
/// t.instant(1, 40_000_000, "deadline miss");
/// let mut json = Vec::new();
/// t.write(&mut json).unwrap();
/// let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
/// assert_eq!(v["traceEvents"].as_array().unwrap().len(), 5); // 3 metadata + 2 events
/// ```
#[derive(Debug, Clone, Default)]
pub struct Trace {
    process_name: String,
    /// Task id → name, in declaration order (a redeclared id keeps its place, takes the new name).
    tasks: Vec<(u32, String)>,
    /// CPU tracks used.
    cpus: std::collections::BTreeSet<u32>,
    names: Vec<String>,
    name_ids: HashMap<String, u32>,
    events: Vec<Event>,
}

#[derive(Debug, Clone, Copy)]
struct Event {
    pid: u32,
    task: u32,
    name: u32,
    start_ns: u64,
    /// `Some(duration)` for a complete event, `None` for an instant or a counter.
    dur_ns: Option<u64>,
    /// The value of a counter sample (`"ph":"C"`), named by `name`.
    value: Option<f64>,
}

/// One JSON trace event as written.
#[derive(Serialize)]
struct JsonEvent<'a> {
    name: &'a str,
    ph: &'static str,
    pid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    tid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    /// Scope of an instant event: `"t"` (the thread's track).
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Args<'a>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Args<'a> {
    Name { name: &'a str },
    SortIndex { sort_index: u32 },
    Value { value: f64 },
}

/// Nanoseconds to the format's microseconds; exact to the nanosecond below 2^53 ns (104 days).
fn micros(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

impl Trace {
    /// Creates an empty trace whose single process is named `process_name` (e.g.
    /// `"smartsim: smart, scenario fig6-1"`).
    pub fn new(process_name: &str) -> Self {
        Trace { process_name: process_name.to_string(), ..Trace::default() }
    }

    /// Declares task `id` with a display name; its events go on track (tid) `id`. Declaring an
    /// id again renames it.
    pub fn task(&mut self, id: u32, name: &str) {
        match self.tasks.iter_mut().find(|(t, _)| *t == id) {
            Some(entry) => entry.1 = name.to_string(),
            None => self.tasks.push((id, name.to_string())),
        }
    }

    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.name_ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_string());
        self.name_ids.insert(name.to_string(), id);
        id
    }

    /// Adds a complete event: `task` ran (or was in the state called `name`) from `start_ns`
    /// to `end_ns`.
    ///
    /// # Panics
    /// If `end_ns < start_ns`.
    pub fn interval(&mut self, task: u32, start_ns: u64, end_ns: u64, name: &str) {
        assert!(
            end_ns >= start_ns,
            "report::Trace::interval: task {task} {name:?} ends at {end_ns} ns, before it starts at {start_ns} ns"
        );
        let name = self.intern(name);
        self.events.push(Event {
            pid: PID,
            task,
            name,
            start_ns,
            dur_ns: Some(end_ns - start_ns),
            value: None,
        });
    }

    /// Adds a complete event on CPU `cpu`'s track (process "CPUs"): `name` (the task) ran there from
    /// `start_ns` to `end_ns`.
    ///
    /// # Panics
    /// If `end_ns < start_ns`.
    pub fn cpu_interval(&mut self, cpu: u32, start_ns: u64, end_ns: u64, name: &str) {
        assert!(end_ns >= start_ns, "report::Trace::cpu_interval: CPU {cpu} ends before it starts");
        self.cpus.insert(cpu);
        let name = self.intern(name);
        self.events.push(Event {
            pid: CPU_PID,
            task: cpu,
            name,
            start_ns,
            dur_ns: Some(end_ns - start_ns),
            value: None,
        });
    }

    /// Adds an instant event on CPU `cpu`'s track (process "CPUs"), e.g. `"tick"`.
    pub fn cpu_instant(&mut self, cpu: u32, at_ns: u64, name: &str) {
        self.cpus.insert(cpu);
        let name = self.intern(name);
        self.events.push(Event { pid: CPU_PID, task: cpu, name, start_ns: at_ns, dur_ns: None, value: None });
    }

    /// Adds an instant event (a mark on the task's track), e.g. `"deadline miss"`.
    pub fn instant(&mut self, task: u32, at_ns: u64, name: &str) {
        let name = self.intern(name);
        self.events.push(Event { pid: PID, task, name, start_ns: at_ns, dur_ns: None, value: None });
    }

    /// Adds a sample of counter `name` (a track of its own, e.g. `"R1 wake-up latency (us)"`): its
    /// value from `at_ns` on.
    pub fn counter(&mut self, name: &str, at_ns: u64, value: f64) {
        let name = self.intern(name);
        self.events.push(Event {
            pid: PID,
            task: 0,
            name,
            start_ns: at_ns,
            dur_ns: None,
            value: Some(value),
        });
    }

    /// Number of interval, instant and counter events added (metadata not counted).
    pub fn event_count(&self) -> usize {
        self.events.len()
    }

    /// Writes the trace as JSON: `{"displayTimeUnit":"ns","traceEvents":[...]}` with one event
    /// per line; first the metadata (process name, then per declared task its thread name and
    /// sort index), then the events in the order added. Buffers internally.
    pub fn write(&self, w: impl Write) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(w);
        let cpu_names: Vec<(u32, String)> = self.cpus.iter().map(|&c| (c, format!("CPU {c}"))).collect();
        w.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        let mut first = true;
        let mut emit = |w: &mut std::io::BufWriter<_>, e: &JsonEvent| -> std::io::Result<()> {
            if !first {
                w.write_all(b",\n")?;
            }
            first = false;
            serde_json::to_writer(&mut *w, e)?;
            Ok(())
        };
        let meta = |name, pid, tid, args| JsonEvent {
            name,
            ph: "M",
            pid,
            tid,
            ts: None,
            dur: None,
            s: None,
            args: Some(args),
        };
        emit(&mut w, &meta("process_name", PID, None, Args::Name { name: &self.process_name }))?;
        for (id, name) in &self.tasks {
            emit(&mut w, &meta("thread_name", PID, Some(*id), Args::Name { name }))?;
            emit(&mut w, &meta("thread_sort_index", PID, Some(*id), Args::SortIndex { sort_index: *id }))?;
        }
        if !self.cpus.is_empty() {
            emit(&mut w, &meta("process_name", CPU_PID, None, Args::Name { name: "CPUs" }))?;
            for (c, name) in &cpu_names {
                emit(&mut w, &meta("thread_name", CPU_PID, Some(*c), Args::Name { name }))?;
                emit(
                    &mut w,
                    &meta("thread_sort_index", CPU_PID, Some(*c), Args::SortIndex { sort_index: *c }),
                )?;
            }
        }
        for e in &self.events {
            let name = &self.names[e.name as usize];
            let (ph, dur, s) = match (e.dur_ns, e.value) {
                (Some(d), _) => ("X", Some(micros(d)), None),
                (None, Some(_)) => ("C", None, None),
                (None, None) => ("i", None, Some("t")),
            };
            let counter = e.value.map(|value| Args::Value { value });
            emit(
                &mut w,
                &JsonEvent {
                    name,
                    ph,
                    pid: e.pid,
                    tid: (counter.is_none()).then_some(e.task),
                    ts: Some(micros(e.start_ns)),
                    dur,
                    s,
                    args: counter,
                },
            )?;
        }
        w.write_all(b"\n]}\n")?;
        w.flush()
    }
}

impl Trace {
    /// The Perfetto view of an execution trace (crate `trace`): a track per task with its stretches
    /// on CPUs ("run on CPU k"), a track per CPU named by the task that ran, and instants for requests
    /// that ended otherwise than met ("finished late", "discarded", "aborted", "unfinished"), the
    /// scheduler's notifications ("notified") and marks, and ticks on the CPU tracks. The one place
    /// any tool's trace becomes Perfetto JSON.
    pub fn from_records(process_name: &str, records: impl IntoIterator<Item = trace::Record>) -> Self {
        use trace::{Outcome, Record};
        let mut t = Trace::new(process_name);
        let mut names: HashMap<u32, String> = HashMap::new();
        for r in records {
            match r {
                Record::Task { task, name, .. } => {
                    t.task(task, &name);
                    names.insert(task, name);
                }
                Record::Run { task, cpu, start, end, .. } => {
                    t.interval(task, start, end, &format!("run on CPU {cpu}"));
                    let name = names.get(&task).cloned().unwrap_or_else(|| format!("task {task}"));
                    t.cpu_interval(cpu, start, end, &name);
                }
                Record::JobEnd { task, at, outcome, .. } => {
                    let what = match outcome {
                        Outcome::Met => continue,
                        Outcome::Late => "late",
                        Outcome::Discarded => "discarded",
                        Outcome::Aborted => "aborted",
                        Outcome::Unfinished => continue,
                    };
                    t.instant(task, at, what);
                }
                Record::Notify { task, at, .. } => t.instant(task, at, "notified"),
                Record::Mark { task, at, text } => t.instant(task.unwrap_or(0), at, &text),
                Record::Tick { cpu, at, .. } => t.cpu_instant(cpu, at, "tick"),
                Record::Wake { .. } | Record::Release { .. } | Record::End { .. } => {}
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn parse(t: &Trace) -> Vec<Value> {
        let mut buf = Vec::new();
        t.write(&mut buf).unwrap();
        let v: Value = serde_json::from_slice(&buf).expect("valid JSON");
        assert_eq!(v["displayTimeUnit"], "ns");
        v["traceEvents"].as_array().unwrap().clone()
    }

    #[test]
    fn counters_are_samples_of_a_named_track_with_their_value() {
        let mut t = Trace::new("p");
        t.task(1, "R1");
        t.counter("R1 wake-up latency (us)", 2_500, 12.5);
        let ev = parse(&t);
        let c: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "C").collect();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0]["name"], "R1 wake-up latency (us)");
        assert_eq!(c[0]["ts"], 2.5);
        assert_eq!(c[0]["args"]["value"], 12.5);
        assert!(c[0].get("tid").is_none(), "a counter track belongs to the process");
    }

    #[test]
    fn events_have_right_counts_phases_and_units() {
        let mut t = Trace::new("sim \"smart\"");
        t.task(1, "R1");
        t.task(2, "C <conv>");
        t.interval(1, 1_500, 2_000_750, "run");
        t.interval(2, 2_000_750, 3_000_000_001, "run");
        t.interval(1, 3_000_000_001, 3_000_000_001, "run"); // zero-length is allowed
        t.instant(1, 40_000_000, "deadline miss");
        t.instant(2, 123, "notify");
        assert_eq!(t.event_count(), 5);
        let ev = parse(&t);
        let count = |ph: &str| ev.iter().filter(|e| e["ph"] == ph).count();
        assert_eq!(count("M"), 1 + 2 * 2);
        assert_eq!(count("X"), 3);
        assert_eq!(count("i"), 2);
        assert_eq!(ev.len(), 10);

        assert_eq!(ev[0]["name"], "process_name");
        assert_eq!(ev[0]["args"]["name"], "sim \"smart\"");
        let names: Vec<(u64, &str)> = ev
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| (e["tid"].as_u64().unwrap(), e["args"]["name"].as_str().unwrap()))
            .collect();
        assert_eq!(names, vec![(1, "R1"), (2, "C <conv>")]);

        let x: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "X").collect();
        // 1 500 ns = 1.5 µs; 2 000 750 ns - 1 500 ns = 1 999 250 ns = 1999.25 µs.
        assert_eq!(x[0]["ts"].as_f64(), Some(1.5));
        assert_eq!(x[0]["dur"].as_f64(), Some(1999.25));
        assert_eq!(x[0]["tid"], 1);
        assert_eq!(x[0]["pid"], 1);
        // Nanosecond precision survives at 3 s.
        assert_eq!(x[1]["ts"].as_f64(), Some(2000.75));
        assert_eq!(x[1]["dur"].as_f64(), Some(2_997_999.251));
        assert_eq!(x[2]["dur"].as_f64(), Some(0.0));

        let i: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "i").collect();
        assert_eq!(i[0]["ts"].as_f64(), Some(40_000.0));
        assert_eq!(i[0]["s"], "t");
        assert_eq!(i[0]["name"], "deadline miss");
        assert!(i[0].get("dur").is_none());
        assert_eq!(i[1]["ts"].as_f64(), Some(0.123));
        assert_eq!(i[1]["tid"], 2);
    }

    #[test]
    fn timestamps_are_written_exactly() {
        let mut t = Trace::new("p");
        t.instant(7, 299_999_999_999, "end");
        let mut buf = Vec::new();
        t.write(&mut buf).unwrap();
        let s = String::from_utf8(buf).unwrap();
        assert!(s.contains("\"ts\":299999999.999"), "{s}");
    }

    #[test]
    fn undeclared_tasks_and_renames() {
        let mut t = Trace::new("p");
        t.task(3, "old");
        t.task(3, "new");
        t.interval(9, 0, 10, "run");
        let ev = parse(&t);
        let names: Vec<&Value> = ev.iter().filter(|e| e["name"] == "thread_name").collect();
        assert_eq!(names.len(), 1);
        assert_eq!(names[0]["args"]["name"], "new");
        assert_eq!(ev.iter().filter(|e| e["tid"] == 9).count(), 1);
    }

    #[test]
    fn cpu_tracks_are_a_second_process() {
        let mut t = Trace::new("p");
        t.task(0, "A");
        t.interval(0, 0, 10, "run");
        t.cpu_interval(1, 0, 10, "A");
        let ev = parse(&t);
        let procs: Vec<&Value> = ev.iter().filter(|e| e["name"] == "process_name").collect();
        assert_eq!(procs.len(), 2);
        assert_eq!(procs[1]["args"]["name"], "CPUs");
        assert!(ev
            .iter()
            .any(|e| e["name"] == "thread_name" && e["pid"] == 2 && e["args"]["name"] == "CPU 1"));
        let x: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(
            (x[1]["pid"].as_u64(), x[1]["tid"].as_u64(), x[1]["name"].as_str()),
            (Some(2), Some(1), Some("A"))
        );
    }

    #[test]
    fn empty_trace_is_valid() {
        let ev = parse(&Trace::new("nothing"));
        assert_eq!(ev.len(), 1);
    }

    #[test]
    #[should_panic(expected = "ends at 5 ns, before it starts at 10 ns")]
    fn backwards_interval_panics() {
        Trace::new("p").interval(1, 10, 5, "run");
    }
}
