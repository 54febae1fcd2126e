//! One execution trace for the whole project: what ran on which CPU, from when to when, and why it
//! stopped; wake-ups; ticks; requests with their release, deadline and outcome; notifications and
//! marks. The simulator (`smartsim run --trace`) and hourglass (`hourglass --trace`) write it, and
//! klogger's recordings ([`klog`], its raw format) are converted when read ([`Reader::open`], or
//! once for good with `klogger export --trace`), so that an analysis written once reads a simulated
//! run, real threads and a kernel recording alike. The analyses live here too:
//! [`summary`] (per task, streaming), [`timeline`] (effective quanta, wake-up latencies, ticks),
//! [`billing`] (tick sampling at any HZ, Etsion §4) and [`diff`] (two traces task by task); their
//! tables, figures, HTML and Perfetto are `crates/report`'s.
//!
//! **The file** (all integers little-endian) streams: a writer keeps nothing but its buffer, so a run
//! of millions of intervals is written as it goes, and a reader yields one record at a time.
//!
//! ```text
//! offset 0   8 bytes  magic "SMTRACE\0"
//! offset 8   u32      format version (FORMAT_VERSION)
//! offset 12  u32      header length H (at most MAX_HEADER bytes)
//! offset 16  H bytes  header, UTF-8 JSON (see [`Header`]): format version, source, CPUs, clock
//! then records, each a tag byte and a fixed payload (Task and Mark add a u16 length and text):
//!   1 Run      task u32, cpu u32, start u64, end u64, end u8 (EndReason), complete u8   = 27 bytes
//!   2 Wake     task u32, cpu u32 (u32::MAX: unknown), at u64                            = 17
//!   3 Tick     cpu u32, task u32 (u32::MAX: unknown), at u64                           = 17
//!   4 Release  task u32, job u32, at u64, deadline u64 (u64::MAX: none)                = 25
//!   5 JobEnd   task u32, job u32, at u64, outcome u8 (Outcome)                          = 18
//!   6 Task     task u32, process u32, name length u16, name (UTF-8, ≤ MAX_TEXT)
//!   7 Mark     task u32 (u32::MAX: none), at u64, text length u16, text (≤ MAX_TEXT)
//!   8 Notify   task u32, at u64, deadline u64                                           = 21
//!   9 End      at u64 (when the recording stopped)                                      = 9
//! ```
//!
//! A task is named by a Task record before its first other record (a source that learns names late,
//! such as klogger, may repeat a Task record; the last name wins). A file cut short stays readable up
//! to its last complete record. A reader never allocates more than a record's text (at most
//! [`MAX_TEXT`] bytes) or the header ([`MAX_HEADER`]) at a time, and names the file and byte offset of
//! anything it cannot read.
//!
//! Times are nanoseconds on the clock the header names (`"simulated"` for the simulator,
//! `"CLOCK_MONOTONIC"` for real runs).
//!
//! **A trace agrees with itself.** Every time a record holds (a Run's start and end, the `at` of the
//! others) lies in the trace's span: from the header's `start_ns` to its End record (or the last
//! time seen, in a file cut short). A CPU runs one task at a time and a task runs on one
//! CPU at a time: the Run records of one CPU, and those of one task, follow each other in time
//! without overlapping (a Run may begin where the last one ended); the exception is Linux's idle
//! task, one task per CPU, which the data names: task 0 of a klogger trace whose Task record calls
//! it [`IDLE_NAME`] (and which keeps that name). Every CPU a record names is one the header has. A
//! trace has at most one End record. A task's requests are released once each, in the order of
//! their numbers; a request that ends was released, ends once, and not before its release. A Run
//! of no time (start = end) is no stretch of CPU time: the reader checks it, counts it
//! ([`Reader::empty_runs`]) and skips it, so that every analysis counts the same stretches. (A
//! request may be due before its release: a timer coarser than its deadline releases it late, as
//! the simulator's `timer = "tick"` does.) The header's tick rate, if any, is 1 to [`MAX_HZ`] Hz.
//! [`Consistency`] states these rules and checks them; the
//! reader applies it to every record it yields, so that every analysis reads checked input and none
//! can give an impossible figure: a share above 100 % of a CPU, a negative duration, more CPU time
//! than the span × the CPUs.
//!
//! Two formats, two answers to a record that breaks them, each given once, by its reader:
//!
//! - **This format is refused** at the first such record, with the file and its byte offset. The
//!   project's own tools write it, and keep the rules as they write (the simulator by construction;
//!   hourglass cuts the intervals its gap threshold lets overlap and ends the trace after its last
//!   record; `klogger export` writes the repaired recording below), so a broken rule is a bug or
//!   damage, and a figure computed past it would be wrong without a word. (Traces hourglass wrote
//!   before it kept them, with records after their End record, are refused too.)
//! - **klogger's recordings are repaired and the repairs counted** ([`klog::convert`],
//!   [`klog::LeftOut`], [`Reader::left_out`]): a recording is of a live kernel, cannot be made
//!   again, and loses events by design when a ring buffer is full, so refusing it for one bad
//!   stretch would throw away all the rest. An event outside the recording's span and a stretch of
//!   a task overlapping its stretch on another CPU are left out (the stretch cut, when part of it
//!   is not), and every report says how many (`klogger report`, `klogger html`, a warning of every
//!   klogger command, a note from `smartsim trace`). A CPU number beyond the header's is still
//!   refused (it is damage, not loss, and per-CPU tables are sized by it).

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub mod billing;
pub mod diff;
pub mod klog;
pub mod summary;
pub mod timeline;
pub mod windows;

/// First 8 bytes of every trace file.
pub const MAGIC: &[u8; 8] = b"SMTRACE\0";
/// Version of the layout in the crate documentation.
pub const FORMAT_VERSION: u32 = 1;
/// Largest header accepted, in bytes.
pub const MAX_HEADER: u32 = 1 << 20;
/// Longest task name or mark text, in bytes.
pub const MAX_TEXT: usize = 4096;
/// "None" for a 32-bit field (a CPU or task not known).
pub const NONE32: u32 = u32::MAX;
/// Highest tick rate a header may give (Hz): the bound of a scenario's `machine.hz`
/// (`workload::MAX_HZ`, which a test of `crates/sim` holds equal), so that every analysis's tick
/// period is a whole number of at least 1000 ns.
pub const MAX_HZ: u32 = 1_000_000;
/// The name a trace gives the idle task (task 0 of a klogger trace, one task per CPU).
pub const IDLE_NAME: &str = "idle";

/// Whether task `task` named `name` in a trace from `source` is the idle task of every CPU: task 0
/// of a klogger trace, named [`IDLE_NAME`] (as the data says, not the header alone).
pub fn is_idle(source: &Source, task: u32, name: &str) -> bool {
    task == 0 && name == IDLE_NAME && matches!(source, Source::Klogger { .. })
}

/// The tick period of a rate of `hz` (ns): 10^9 / `hz`, and never zero, whatever `hz` (a reader
/// refuses a rate outside 1..=[`MAX_HZ`], this keeps the arithmetic of any other caller defined).
pub fn tick_period_ns(hz: u32) -> u64 {
    (1_000_000_000 / u64::from(hz.max(1))).max(1)
}

/// Checks a header's tick rate: `None` (unknown, or tickless), or 1 to [`MAX_HZ`]; says what is
/// wrong otherwise.
pub fn check_hz(hz: Option<u32>) -> Result<(), String> {
    match hz {
        Some(h) if h == 0 || h > MAX_HZ => Err(format!(
            "hz: {h} is out of range: expected an integer in 1..={MAX_HZ}, or null when the tick rate is \
             unknown"
        )),
        _ => Ok(()),
    }
}

/// Where a trace came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "tool")]
pub enum Source {
    /// `smartsim run`: a simulated run.
    #[serde(rename = "smartsim")]
    Simulator {
        /// The scenario file, as given.
        scenario: String,
        /// Its seed.
        seed: u64,
        /// The policy.
        policy: String,
    },
    /// `hourglass`: real threads on the host.
    #[serde(rename = "hourglass")]
    Hourglass {
        /// The kernel (`uname -r`).
        kernel: String,
    },
    /// `klogger record`: the kernel's scheduling events.
    #[serde(rename = "klogger")]
    Klogger {
        /// The kernel (`uname -r`).
        kernel: String,
        /// "system", "pid" or "command".
        target: String,
    },
}

impl Source {
    /// The tool's name.
    pub fn tool(&self) -> &'static str {
        match self {
            Source::Simulator { .. } => "smartsim",
            Source::Hourglass { .. } => "hourglass",
            Source::Klogger { .. } => "klogger",
        }
    }
}

/// The JSON header. New fields may be added; readers ignore unknown ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The same as the binary format version.
    pub format_version: u32,
    /// Where the trace came from.
    pub source: Source,
    /// CPUs (ids in records are below this).
    pub cpus: u32,
    /// Clock of the times: "simulated" or "CLOCK_MONOTONIC".
    pub clock: String,
    /// Start of the recording (ns).
    pub start_ns: u64,
    /// The tick rate of the traced system (CONFIG_HZ, or the simulated machine's `hz`), if known and
    /// not tickless.
    pub hz: Option<u32>,
    /// Processes followed, for a recording of some processes only (empty: everything).
    #[serde(default)]
    pub followed: Vec<u32>,
}

impl Header {
    /// A header of this format version.
    pub fn new(source: Source, cpus: u32, clock: &str, start_ns: u64, hz: Option<u32>) -> Header {
        Header {
            format_version: FORMAT_VERSION,
            source,
            cpus,
            clock: clock.into(),
            start_ns,
            hz,
            followed: Vec::new(),
        }
    }
}

/// Why a stretch on a CPU ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// It blocked (slept, waited for I/O or a lock).
    Blocked,
    /// Descheduled while runnable: a more important task, or the scheduler's decision.
    Preempted,
    /// It gave the CPU up while runnable.
    Yielded,
    /// Its slice (quantum) was used up.
    SliceEnd,
    /// It exited.
    Exit,
    /// Still running when the recording stopped.
    TraceEnd,
}

impl EndReason {
    /// Its name, as in the JSON (`blocked`, `preempted`, `yielded`, `slice_end`, `exit`, `trace_end`).
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Blocked => "blocked",
            EndReason::Preempted => "preempted",
            EndReason::Yielded => "yielded",
            EndReason::SliceEnd => "slice_end",
            EndReason::Exit => "exit",
            EndReason::TraceEnd => "trace_end",
        }
    }

    fn code(self) -> u8 {
        match self {
            EndReason::Blocked => 1,
            EndReason::Preempted => 2,
            EndReason::Yielded => 3,
            EndReason::SliceEnd => 4,
            EndReason::Exit => 5,
            EndReason::TraceEnd => 6,
        }
    }

    fn from_code(c: u8) -> Option<EndReason> {
        Some(match c {
            1 => EndReason::Blocked,
            2 => EndReason::Preempted,
            3 => EndReason::Yielded,
            4 => EndReason::SliceEnd,
            5 => EndReason::Exit,
            6 => EndReason::TraceEnd,
            _ => return None,
        })
    }

    /// Ended while the task was still runnable (preempted, yielded, slice end).
    pub fn runnable(self) -> bool {
        matches!(self, EndReason::Preempted | EndReason::Yielded | EndReason::SliceEnd)
    }
}

/// How a request ended: five disjoint outcomes ([`summary::Requests`] counts them, and defines
/// *missed*; docs/glossary.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Finished by its deadline.
    Met,
    /// Not finished by its deadline and not dropped: finished after it, or still open when the
    /// recording stopped with its deadline passed. Written `late`; files and JSON of before call it
    /// `missed`, and both are read.
    #[serde(alias = "missed")]
    Late,
    /// Dropped by the application when told it would miss (`on_miss = "discard"`).
    Discarded,
    /// Dropped at its deadline (`on_miss = "abort"`).
    Aborted,
    /// Still open when the recording stopped, its deadline not passed: its outcome is unknown.
    Unfinished,
}

impl Outcome {
    fn code(self) -> u8 {
        match self {
            Outcome::Met => 1,
            Outcome::Late => 2,
            Outcome::Discarded => 3,
            Outcome::Aborted => 4,
            Outcome::Unfinished => 5,
        }
    }

    fn from_code(c: u8) -> Option<Outcome> {
        Some(match c {
            1 => Outcome::Met,
            2 => Outcome::Late,
            3 => Outcome::Discarded,
            4 => Outcome::Aborted,
            5 => Outcome::Unfinished,
            _ => return None,
        })
    }
}

/// One record of a trace.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// A task's name and process.
    Task { task: u32, process: u32, name: String },
    /// `task` ran on `cpu` from `start` to `end`. `complete` is false when the recording cut it (it
    /// began before the recording or was still running at its end).
    Run { task: u32, cpu: u32, start: u64, end: u64, why: EndReason, complete: bool },
    /// `task` became runnable (on `cpu`, if known).
    Wake { task: u32, cpu: Option<u32>, at: u64 },
    /// A clock interrupt on `cpu` (while `task` ran there, if known).
    Tick { cpu: u32, task: Option<u32>, at: u64 },
    /// Request `job` of `task` was released, due at `deadline` (if it has one).
    Release { task: u32, job: u32, at: u64, deadline: Option<u64> },
    /// Request `job` of `task` ended at `at`.
    JobEnd { task: u32, job: u32, at: u64, outcome: Outcome },
    /// The scheduler told `task` its request due at `deadline` would be missed.
    Notify { task: u32, at: u64, deadline: u64 },
    /// Anything else worth seeing on the timeline.
    Mark { task: Option<u32>, at: u64, text: String },
    /// The recording stopped.
    End { at: u64 },
}

/// Errors when reading a trace (or klogger's raw log, which reports a bad header or record as a
/// `Record` at its offset): each names the file, and the byte offset where there is one.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The file is not a trace of a version this reader knows, or its header is bad.
    #[error("{path}: {what}")]
    Header {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// A record that cannot be read.
    #[error("{path}: byte {offset}: {what}")]
    Record {
        /// The file.
        path: PathBuf,
        /// Where the record starts.
        offset: u64,
        /// What is wrong.
        what: String,
    },
}

/// Writes a trace as it goes.
pub struct Writer<W: Write> {
    out: W,
    records: u64,
}

impl Writer<BufWriter<File>> {
    /// Creates `path` and writes the header.
    pub fn create(path: &Path, header: &Header) -> std::io::Result<Self> {
        let f = File::create(path)?;
        Writer::new(BufWriter::with_capacity(1 << 16, f), header)
    }
}

impl<W: Write> Writer<W> {
    /// Writes the magic, the version and `header` to `out`.
    pub fn new(mut out: W, header: &Header) -> std::io::Result<Self> {
        let json = serde_json::to_vec(header).map_err(std::io::Error::other)?;
        out.write_all(MAGIC)?;
        out.write_all(&FORMAT_VERSION.to_le_bytes())?;
        out.write_all(&(json.len() as u32).to_le_bytes())?;
        out.write_all(&json)?;
        Ok(Writer { out, records: 0 })
    }

    /// Appends one record. Text longer than [`MAX_TEXT`] bytes is cut at a character boundary.
    pub fn write(&mut self, r: &Record) -> std::io::Result<()> {
        let mut b = [0u8; 32];
        let n = match r {
            Record::Task { task, process, name } => {
                b[0] = 6;
                put32(&mut b, 1, *task);
                put32(&mut b, 5, *process);
                self.out.write_all(&b[..9])?;
                return self.text(name);
            }
            Record::Run { task, cpu, start, end, why, complete } => {
                b[0] = 1;
                put32(&mut b, 1, *task);
                put32(&mut b, 5, *cpu);
                put64(&mut b, 9, *start);
                put64(&mut b, 17, *end);
                b[25] = why.code();
                b[26] = *complete as u8;
                27
            }
            Record::Wake { task, cpu, at } => {
                b[0] = 2;
                put32(&mut b, 1, *task);
                put32(&mut b, 5, cpu.unwrap_or(NONE32));
                put64(&mut b, 9, *at);
                17
            }
            Record::Tick { cpu, task, at } => {
                b[0] = 3;
                put32(&mut b, 1, *cpu);
                put32(&mut b, 5, task.unwrap_or(NONE32));
                put64(&mut b, 9, *at);
                17
            }
            Record::Release { task, job, at, deadline } => {
                b[0] = 4;
                put32(&mut b, 1, *task);
                put32(&mut b, 5, *job);
                put64(&mut b, 9, *at);
                put64(&mut b, 17, deadline.unwrap_or(u64::MAX));
                25
            }
            Record::JobEnd { task, job, at, outcome } => {
                b[0] = 5;
                put32(&mut b, 1, *task);
                put32(&mut b, 5, *job);
                put64(&mut b, 9, *at);
                b[17] = outcome.code();
                18
            }
            Record::Mark { task, at, text } => {
                b[0] = 7;
                put32(&mut b, 1, task.unwrap_or(NONE32));
                put64(&mut b, 5, *at);
                self.out.write_all(&b[..13])?;
                return self.text(text);
            }
            Record::Notify { task, at, deadline } => {
                b[0] = 8;
                put32(&mut b, 1, *task);
                put64(&mut b, 5, *at);
                put64(&mut b, 13, *deadline);
                21
            }
            Record::End { at } => {
                b[0] = 9;
                put64(&mut b, 1, *at);
                9
            }
        };
        self.records += 1;
        self.out.write_all(&b[..n])
    }

    fn text(&mut self, s: &str) -> std::io::Result<()> {
        let mut end = s.len().min(MAX_TEXT);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.out.write_all(&(end as u16).to_le_bytes())?;
        self.out.write_all(&s.as_bytes()[..end])?;
        self.records += 1;
        Ok(())
    }

    /// Records written.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Whether `path` is a file [`Reader::open`] reads: a trace, or a klogger recording. Reads 8 bytes.
pub fn is_trace_file(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok()
        && (&magic == MAGIC || &magic == klog::MAGIC)
}

/// Writes a whole trace to `path` (a source that has all its records at once, e.g. a recording
/// converted after the fact); returns the number of records.
pub fn write_file(path: &Path, header: &Header, records: &[Record]) -> std::io::Result<u64> {
    write_to(BufWriter::new(File::create(path)?), header, records)
}

/// Writes a whole trace to `out` (a file opened before a long run, say); returns the number of
/// records.
pub fn write_to<W: Write>(out: W, header: &Header, records: &[Record]) -> std::io::Result<u64> {
    let mut w = Writer::new(out, header)?;
    for r in records {
        w.write(r)?;
    }
    let n = w.records();
    w.finish()?;
    Ok(n)
}

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn get64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn opt32(v: u32) -> Option<u32> {
    (v != NONE32).then_some(v)
}

/// The rules a trace's records keep with its header and with each other (the crate documentation,
/// "A trace agrees with itself"), checked one record at a time. It keeps one entry per CPU and per
/// task, whatever the length of the trace. The reader applies it to every record of a trace file;
/// a source that writes records may apply it to what it writes.
#[derive(Clone, Debug)]
pub struct Consistency {
    start: u64,
    cpus: u32,
    /// A klogger trace, whose task 0 may be the idle task of every CPU.
    klogger: bool,
    /// Task 0 is named [`IDLE_NAME`] by its last Task record (so, in a klogger trace, it is the idle
    /// task, and its runs on different CPUs may overlap).
    zero_is_idle: bool,
    /// The offset of a run of task 0 that overlapped another of its runs: it ran as the idle task,
    /// and may not be renamed since.
    ran_as_idle: Option<u64>,
    /// Per task: its requests.
    requests: HashMap<u32, Requests>,
    /// Per CPU: the end of its last run, and that record's offset.
    cpu_free: Vec<Option<(u64, u64)>>,
    /// Per task: the CPU and end of its last run, and that record's offset.
    task_free: HashMap<u32, (u32, u64, u64)>,
    /// The latest time seen: the time, what held it, and the record's offset.
    latest: Option<(u64, &'static str, u64)>,
    /// The End record's time and offset.
    end: Option<(u64, u64)>,
}

impl Consistency {
    /// Nothing seen yet, in a trace with `header`.
    pub fn new(header: &Header) -> Consistency {
        Consistency {
            start: header.start_ns,
            cpus: header.cpus,
            klogger: matches!(header.source, Source::Klogger { .. }),
            zero_is_idle: false,
            ran_as_idle: None,
            requests: HashMap::new(),
            cpu_free: Vec::new(),
            task_free: HashMap::new(),
            latest: None,
            end: None,
        }
    }

    /// Checks record `r`, found at byte `offset` of its file, against the header and the records
    /// checked before it; says what is wrong otherwise, with the offset of the record at fault (an
    /// earlier one when an End record comes before its end). After an error the state is of no
    /// further use: a reader stops there.
    pub fn check(&mut self, r: &Record, offset: u64) -> Result<(), (u64, String)> {
        let here = |what: String| Err((offset, what));
        // What the record is, named by its first time and by its last.
        let ((what_first, first), (what, last)) = match *r {
            Record::Task { task: 0, ref name, .. } => {
                self.zero_is_idle = name == IDLE_NAME;
                if let Some(at) = self.ran_as_idle.filter(|_| !self.zero_is_idle) {
                    return here(format!(
                        "task 0 renamed {name:?} after it ran as the idle task of several CPUs at once \
                         (byte {at}): only the idle task does"
                    ));
                }
                return Ok(());
            }
            Record::Task { .. } => return Ok(()),
            Record::Run { start, end, .. } => (("run starting", start), ("run ending", end)),
            Record::Wake { at, .. } => (("wake-up", at), ("wake-up", at)),
            Record::Tick { at, .. } => (("tick", at), ("tick", at)),
            Record::Release { at, .. } => (("release", at), ("release", at)),
            Record::JobEnd { at, .. } => (("request end", at), ("request end", at)),
            Record::Notify { at, .. } => (("notification", at), ("notification", at)),
            Record::Mark { at, .. } => (("mark", at), ("mark", at)),
            Record::End { at } => (("End record", at), ("End record", at)),
        };
        if first < self.start {
            return here(format!(
                "{what_first} at {first} ns lies before the trace's start ({} ns, the header's start_ns)",
                self.start
            ));
        }
        if let Some((e, e_at)) = self.end {
            if matches!(r, Record::End { .. }) {
                return here(format!("a second End record (the first is at byte {e_at})"));
            }
            if last > e {
                return here(format!(
                    "{what} at {last} ns lies after the trace's end ({e} ns, the End record at byte {e_at})"
                ));
            }
        }
        match *r {
            Record::End { at } => {
                if let Some((t, w, t_at)) = self.latest.filter(|l| l.0 > at) {
                    return Err((
                        t_at,
                        format!(
                            "{w} at {t} ns lies after the trace's end ({at} ns, the End record at byte \
                             {offset})"
                        ),
                    ));
                }
                self.end = Some((at, offset));
            }
            Record::Wake { cpu: Some(cpu), .. } if cpu >= self.cpus => {
                return here(format!("wake-up on CPU {cpu} of a {}-CPU trace", self.cpus));
            }
            Record::Run { task, cpu, start, end, .. } => {
                if end < start {
                    return here(format!("a run ends ({end}) before it starts ({start})"));
                }
                if cpu >= self.cpus {
                    return here(format!("CPU {cpu} of a {}-CPU trace", self.cpus));
                }
                let c = cpu as usize;
                if self.cpu_free.len() <= c {
                    self.cpu_free.resize(c + 1, None);
                }
                if let Some((free, f_at)) = self.cpu_free[c].filter(|f| start < f.0) {
                    return here(format!(
                        "task {task} runs on CPU {cpu} from {start} ns, before the run at byte {f_at} \
                         ends there ({free} ns): a CPU runs one task at a time, and its runs are written \
                         in time order"
                    ));
                }
                self.cpu_free[c] = Some((end, offset));
                if let Some(&(other, free, f_at)) = self.task_free.get(&task).filter(|f| start < f.1) {
                    if !(task == 0 && self.klogger && self.zero_is_idle) {
                        return here(format!(
                            "task {task} runs on CPU {cpu} from {start} ns, before its run on CPU {other} \
                             (byte {f_at}) ends ({free} ns): a task runs on one CPU at a time (only a \
                             klogger trace's task 0 named \"{IDLE_NAME}\", the idle task, runs on several)"
                        ));
                    }
                    self.ran_as_idle.get_or_insert(offset);
                }
                let f = self.task_free.entry(task).or_insert((cpu, end, offset));
                if end >= f.1 {
                    *f = (cpu, end, offset);
                }
            }
            Record::Release { task, job, at, .. } => {
                let q = self.requests.entry(task).or_default();
                if let Some((last, l_at)) = q.last.filter(|l| job <= l.0) {
                    return here(format!(
                        "request {job} of task {task} released after its request {last} (byte {l_at}): a \
                         task's requests are released once each, in the order of their numbers"
                    ));
                }
                q.last = Some((job, offset));
                q.pending.insert(job, (at, offset));
            }
            Record::JobEnd { task, job, at, .. } => {
                let q = self.requests.entry(task).or_default();
                let Some((released, r_at)) = q.pending.remove(&job) else {
                    let why = if q.last.is_some_and(|l| job <= l.0) {
                        "it has ended already, or was never released"
                    } else {
                        "it was never released"
                    };
                    return here(format!(
                        "request {job} of task {task} ends at {at} ns, but {why}: a request ends at most \
                         once, after its release"
                    ));
                };
                if at < released {
                    return here(format!(
                        "request {job} of task {task} ends at {at} ns, before its release ({released} ns, \
                         byte {r_at})"
                    ));
                }
            }
            Record::Tick { cpu, .. } if cpu >= self.cpus => {
                return here(format!("CPU {cpu} of a {}-CPU trace", self.cpus));
            }
            _ => {}
        }
        if self.latest.is_none_or(|l| last > l.0) {
            self.latest = Some((last, what, offset));
        }
        Ok(())
    }
}

/// A task's requests, as [`Consistency`] follows them: the last released, and those released and
/// not ended (a request is released once, ends at most once, and not before its release).
#[derive(Clone, Debug, Default)]
struct Requests {
    /// The number and offset of the last Release record.
    last: Option<(u32, u64)>,
    /// Released and not ended: release time and offset, by number.
    pending: std::collections::BTreeMap<u32, (u64, u64)>,
}

/// Reads a trace record by record.
pub struct Reader<R: Read> {
    input: R,
    path: PathBuf,
    offset: u64,
    header: Header,
    /// Bytes left over at the end that do not make a whole record.
    trailing: u64,
    done: bool,
    /// The records of a klogger recording, converted when it was opened.
    converted: Option<std::vec::IntoIter<Record>>,
    /// What a klogger recording's conversion left out (see [`Reader::left_out`]).
    left_out: Option<klog::LeftOut>,
    /// The rules every record of a trace file is checked against.
    consistency: Consistency,
    /// Runs of no time read and skipped (see [`Reader::empty_runs`]).
    empty_runs: u64,
}

impl Reader<BufReader<File>> {
    /// Opens `path` and reads its header. A klogger recording ([`klog`]) is read whole and
    /// converted here, so that whatever reads a trace reads a recording as it is.
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        let io = |e| ReadError::Io { path: path.into(), source: e };
        let f = File::open(path).map_err(io)?;
        let mut input = BufReader::with_capacity(1 << 16, f);
        let head = std::io::BufRead::fill_buf(&mut input).map_err(io)?;
        if head.starts_with(klog::MAGIC) {
            let log = klog::Log::read(path)?;
            let c = klog::convert(&log.header, &log.events);
            return Ok(Reader {
                input,
                path: path.into(),
                offset: 0,
                consistency: Consistency::new(&c.header),
                header: c.header,
                trailing: log.trailing_bytes as u64,
                done: false,
                converted: Some(c.records.into_iter()),
                left_out: Some(c.left_out),
                empty_runs: 0,
            });
        }
        Reader::new(input, path)
    }
}

impl<R: Read> Reader<R> {
    /// Reads the header from `input`; `path` names it in errors.
    pub fn new(mut input: R, path: &Path) -> Result<Self, ReadError> {
        let bad = |what: String| ReadError::Header { path: path.into(), what };
        let mut head = [0u8; 16];
        let got =
            read_full(&mut input, &mut head).map_err(|e| ReadError::Io { path: path.into(), source: e })?;
        if got < 16 || &head[..8] != MAGIC {
            return Err(bad("not a trace file (no SMTRACE magic at its start)".into()));
        }
        let version = get32(&head, 8);
        if version != FORMAT_VERSION {
            return Err(bad(format!("format version {version}, this reader reads {FORMAT_VERSION}")));
        }
        let len = get32(&head, 12);
        if len > MAX_HEADER {
            return Err(bad(format!("header of {len} bytes (at most {MAX_HEADER})")));
        }
        let mut json = vec![0u8; len as usize];
        let got =
            read_full(&mut input, &mut json).map_err(|e| ReadError::Io { path: path.into(), source: e })?;
        if got < json.len() {
            return Err(bad(format!("header cut short: {got} of {len} bytes")));
        }
        let header: Header =
            serde_json::from_slice(&json).map_err(|e| bad(format!("header (byte 16): {e}")))?;
        if header.format_version != FORMAT_VERSION {
            return Err(bad(format!("header says format version {}", header.format_version)));
        }
        if header.cpus == 0 || header.cpus > klog::MAX_CPUS {
            return Err(bad(format!("header says {} CPUs", header.cpus)));
        }
        check_hz(header.hz).map_err(|e| bad(format!("header (byte 16): {e}")))?;
        let offset = 16 + len as u64;
        Ok(Reader {
            input,
            path: path.into(),
            offset,
            consistency: Consistency::new(&header),
            header,
            trailing: 0,
            done: false,
            converted: None,
            left_out: None,
            empty_runs: 0,
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Bytes at the end of the file that did not make a whole record (a file cut short), once the
    /// records have been read.
    pub fn trailing(&self) -> u64 {
        self.trailing
    }

    /// For a klogger recording, what its conversion left out and counted (the crate documentation,
    /// "A trace agrees with itself"); `None` for a trace file, which is refused instead.
    pub fn left_out(&self) -> Option<&klog::LeftOut> {
        self.left_out.as_ref()
    }

    /// Runs of no time (start = end) read so far, which [`Reader::next_record`] skips: a stretch of
    /// no CPU time is no quantum, so that every analysis counts the same stretches (a source that
    /// samples, such as hourglass, records an interval of a single reading as one).
    pub fn empty_runs(&self) -> u64 {
        self.empty_runs
    }

    /// The next record, checked against the header and the records before it ([`Consistency`]);
    /// `None` at the end of the file. A run of no time is checked, counted ([`Reader::empty_runs`])
    /// and skipped.
    pub fn next_record(&mut self) -> Result<Option<Record>, ReadError> {
        loop {
            match self.next_checked()? {
                Some(Record::Run { start, end, .. }) if start == end => self.empty_runs += 1,
                r => return Ok(r),
            }
        }
    }

    fn next_checked(&mut self) -> Result<Option<Record>, ReadError> {
        if self.done {
            return Ok(None);
        }
        if let Some(c) = self.converted.as_mut() {
            // Consistent by construction: the conversion leaves out and counts what is not.
            return Ok(c.next());
        }
        let at = self.offset;
        let mut b = [0u8; 32];
        let got = self.fill(&mut b[..1])?;
        if got == 0 {
            self.done = true;
            return Ok(None);
        }
        let len = match b[0] {
            1 => 27,
            2 | 3 => 17,
            4 => 25,
            5 => 18,
            6 => 11,
            7 => 15,
            8 => 21,
            9 => 9,
            t => return Err(self.bad(at, format!("unknown record type {t}"))),
        };
        if !self.rest(&mut b[1..len], at)? {
            return Ok(None);
        }
        let r = match b[0] {
            1 => Record::Run {
                task: get32(&b, 1),
                cpu: get32(&b, 5),
                start: get64(&b, 9),
                end: get64(&b, 17),
                why: EndReason::from_code(b[25])
                    .ok_or_else(|| self.bad(at, format!("end reason {}", b[25])))?,
                complete: b[26] != 0,
            },
            2 => Record::Wake { task: get32(&b, 1), cpu: opt32(get32(&b, 5)), at: get64(&b, 9) },
            3 => Record::Tick { cpu: get32(&b, 1), task: opt32(get32(&b, 5)), at: get64(&b, 9) },
            4 => Record::Release {
                task: get32(&b, 1),
                job: get32(&b, 5),
                at: get64(&b, 9),
                deadline: Some(get64(&b, 17)).filter(|&d| d != u64::MAX),
            },
            5 => Record::JobEnd {
                task: get32(&b, 1),
                job: get32(&b, 5),
                at: get64(&b, 9),
                outcome: Outcome::from_code(b[17])
                    .ok_or_else(|| self.bad(at, format!("outcome {}", b[17])))?,
            },
            6 => {
                let Some(name) = self.text(u16::from_le_bytes([b[9], b[10]]), at)? else { return Ok(None) };
                Record::Task { task: get32(&b, 1), process: get32(&b, 5), name }
            }
            7 => {
                let Some(text) = self.text(u16::from_le_bytes([b[13], b[14]]), at)? else { return Ok(None) };
                Record::Mark { task: opt32(get32(&b, 1)), at: get64(&b, 5), text }
            }
            8 => Record::Notify { task: get32(&b, 1), at: get64(&b, 5), deadline: get64(&b, 13) },
            _ => Record::End { at: get64(&b, 1) },
        };
        if let Err((offset, what)) = self.consistency.check(&r, at) {
            return Err(self.bad(offset, what));
        }
        Ok(Some(r))
    }

    fn bad(&self, offset: u64, what: String) -> ReadError {
        ReadError::Record { path: self.path.clone(), offset, what }
    }

    /// Reads into `buf`; returns the bytes read (fewer only at the end of the file).
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, ReadError> {
        let n = read_full(&mut self.input, buf)
            .map_err(|e| ReadError::Io { path: self.path.clone(), source: e })?;
        self.offset += n as u64;
        Ok(n)
    }

    /// The rest of a record begun at `at`; false (and the trailing bytes counted) if the file ends
    /// inside it.
    fn rest(&mut self, buf: &mut [u8], at: u64) -> Result<bool, ReadError> {
        if self.fill(buf)? < buf.len() {
            self.trailing = self.offset - at;
            self.done = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn text(&mut self, len: u16, at: u64) -> Result<Option<String>, ReadError> {
        if len as usize > MAX_TEXT {
            return Err(self.bad(at, format!("text of {len} bytes (at most {MAX_TEXT})")));
        }
        let mut v = vec![0u8; len as usize];
        if !self.rest(&mut v, at)? {
            return Ok(None);
        }
        String::from_utf8(v).map(Some).map_err(|_| self.bad(at, "text is not UTF-8".into()))
    }
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_record() {
            Ok(r) => r.map(Ok),
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header::new(
            Source::Simulator { scenario: "s.toml".into(), seed: 1, policy: "smart".into() },
            2,
            "simulated",
            0,
            Some(1000),
        )
    }

    fn every_kind() -> Vec<Record> {
        vec![
            Record::Task { task: 0, process: 0, name: "audio ✓".into() },
            Record::Release { task: 0, job: 0, at: 0, deadline: Some(8_000_000) },
            Record::Release { task: 0, job: 1, at: 10, deadline: None },
            Record::Wake { task: 0, cpu: None, at: 0 },
            Record::Wake { task: 0, cpu: Some(1), at: 5 },
            Record::Run {
                task: 0,
                cpu: 1,
                start: 0,
                end: 3_000_000,
                why: EndReason::Blocked,
                complete: true,
            },
            Record::Tick { cpu: 1, task: Some(0), at: 1_000_000 },
            Record::Tick { cpu: 0, task: None, at: 1_000_000 },
            Record::JobEnd { task: 0, job: 0, at: 3_000_000, outcome: Outcome::Met },
            Record::Notify { task: 0, at: 4, deadline: 8_000_000 },
            Record::Mark { task: None, at: 7, text: "x".into() },
            Record::Mark { task: Some(0), at: 7, text: String::new() },
            Record::End { at: 10_000_000 },
        ]
    }

    fn write(records: &[Record]) -> Vec<u8> {
        let mut w = Writer::new(Vec::new(), &header()).unwrap();
        for r in records {
            w.write(r).unwrap();
        }
        w.finish().unwrap()
    }

    fn read(bytes: &[u8]) -> (Header, Vec<Record>, u64) {
        let mut r = Reader::new(bytes, Path::new("t.trace")).unwrap();
        let v: Vec<Record> = r.by_ref().map(|x| x.unwrap()).collect();
        (r.header().clone(), v, r.trailing())
    }

    #[test]
    fn every_record_reads_back_as_written() {
        let recs = every_kind();
        let (h, back, trailing) = read(&write(&recs));
        assert_eq!(h, header());
        assert_eq!(back, recs);
        assert_eq!(trailing, 0);
    }

    #[test]
    fn a_file_cut_anywhere_reads_up_to_its_last_whole_record() {
        let recs = every_kind();
        let bytes = write(&recs);
        let body = 16 + get32(&bytes, 12) as usize;
        for cut in body..bytes.len() {
            let (_, back, trailing) = read(&bytes[..cut]);
            assert_eq!(back[..], recs[..back.len()], "cut at {cut}");
            let whole = write(&recs[..back.len()]).len();
            assert_eq!(trailing as usize, cut - whole, "cut at {cut}");
        }
    }

    #[test]
    fn bad_records_are_named_by_file_and_offset() {
        let mut bytes = write(&[Record::End { at: 1 }]);
        let body = 16 + get32(&bytes, 12) as usize;
        bytes[body] = 77;
        let err = Reader::new(&bytes[..], Path::new("t.trace")).unwrap().next().unwrap().unwrap_err();
        assert_eq!(err.to_string(), format!("t.trace: byte {body}: unknown record type 77"));
        // A CPU beyond the header's, a run that ends before it starts, an unknown reason.
        let run = Record::Run { task: 0, cpu: 1, start: 5, end: 9, why: EndReason::Exit, complete: true };
        let good = write(&[run]);
        let mut b = good.clone();
        put32(&mut b, body + 5, 7);
        let err = Reader::new(&b[..], Path::new("t.trace")).unwrap().next().unwrap().unwrap_err();
        assert!(err.to_string().contains("CPU 7 of a 2-CPU trace"), "{err}");
        let mut b = good.clone();
        put64(&mut b, body + 17, 1);
        let err = Reader::new(&b[..], Path::new("t.trace")).unwrap().next().unwrap().unwrap_err();
        assert!(err.to_string().contains("ends (1) before it starts (5)"), "{err}");
        let mut b = good;
        b[body + 25] = 0;
        let err = Reader::new(&b[..], Path::new("t.trace")).unwrap().next().unwrap().unwrap_err();
        assert!(err.to_string().contains("end reason 0"), "{err}");
    }

    /// The error reading `records` of a trace with `h` as `t.trace`, and the byte offset of each
    /// record.
    fn refusal(h: &Header, records: &[Record]) -> (String, Vec<usize>) {
        let mut w = Writer::new(Vec::new(), h).unwrap();
        let mut offsets = Vec::new();
        let head = Writer::new(Vec::new(), h).unwrap().finish().unwrap().len();
        let mut at = head;
        for r in records {
            offsets.push(at);
            let mut one = Writer::new(Vec::new(), h).unwrap();
            one.write(r).unwrap();
            at += one.finish().unwrap().len() - head;
            w.write(r).unwrap();
        }
        let bytes = w.finish().unwrap();
        let r = Reader::new(&bytes[..], Path::new("t.trace")).unwrap();
        let err = r.collect::<Result<Vec<_>, _>>().expect_err("refused");
        (err.to_string(), offsets)
    }

    fn run(task: u32, cpu: u32, start: u64, end: u64) -> Record {
        Record::Run { task, cpu, start, end, why: EndReason::Preempted, complete: true }
    }

    #[test]
    fn a_record_outside_the_span_is_refused_with_its_offset() {
        let h = Header { start_ns: 1000, ..header() };
        // A run that begins before the start (the 1000 % share of a 1 µs span).
        let (e, at) = refusal(&h, &[run(0, 0, 0, 10_000), Record::End { at: 2000 }]);
        assert_eq!(
            e,
            format!(
                "t.trace: byte {}: run starting at 0 ns lies before the trace's start (1000 ns, the \
                 header's start_ns)",
                at[0]
            )
        );
        // Any record's time: a wake-up, an End record.
        let (e, at) = refusal(&h, &[Record::Wake { task: 0, cpu: None, at: 999 }]);
        assert!(e.starts_with(&format!("t.trace: byte {}: wake-up at 999 ns lies before", at[0])), "{e}");
        let (e, _) = refusal(&h, &[Record::End { at: 5 }]);
        assert!(e.contains("End record at 5 ns lies before the trace's start"), "{e}");
        // A run that ends after the End record: named at its own offset, with the End record's.
        let (e, at) = refusal(
            &h,
            &[
                run(0, 0, 1000, 10_000),
                Record::Mark { task: None, at: 1500, text: "m".into() },
                Record::End { at: 2000 },
            ],
        );
        assert_eq!(
            e,
            format!(
                "t.trace: byte {}: run ending at 10000 ns lies after the trace's end (2000 ns, the End \
                 record at byte {})",
                at[0], at[2]
            )
        );
        // A record after the End record, later than it; one as late is inside the span.
        let end = Record::End { at: 2000 };
        let late = Record::Tick { cpu: 1, task: None, at: 2001 };
        let (e, at) = refusal(&h, &[end.clone(), Record::Tick { cpu: 1, task: None, at: 2000 }, late]);
        assert!(
            e.starts_with(&format!("t.trace: byte {}: tick at 2001 ns lies after the trace's end", at[2])),
            "{e}"
        );
        // A second End record.
        let (e, at) = refusal(&h, &[end.clone(), end]);
        assert_eq!(
            e,
            format!("t.trace: byte {}: a second End record (the first is at byte {})", at[1], at[0])
        );
    }

    #[test]
    fn overlapping_stretches_are_refused_with_their_offsets() {
        let h = header();
        // Two tasks on CPU 1 at once.
        let (e, at) = refusal(&h, &[run(0, 1, 0, 100), run(1, 1, 50, 150)]);
        assert_eq!(
            e,
            format!(
                "t.trace: byte {}: task 1 runs on CPU 1 from 50 ns, before the run at byte {} ends there \
                 (100 ns): a CPU runs one task at a time, and its runs are written in time order",
                at[1], at[0]
            )
        );
        // A CPU's runs out of time order.
        let (e, _) = refusal(&h, &[run(0, 1, 100, 200), run(1, 1, 0, 50)]);
        assert!(e.contains("task 1 runs on CPU 1 from 0 ns, before the run at byte"), "{e}");
        // One task on two CPUs at once.
        let (e, at) = refusal(&h, &[run(3, 0, 0, 100), run(3, 1, 99, 150)]);
        assert_eq!(
            e,
            format!(
                "t.trace: byte {}: task 3 runs on CPU 1 from 99 ns, before its run on CPU 0 (byte {}) ends \
                 (100 ns): a task runs on one CPU at a time (only a klogger trace's task 0 named \"idle\", \
                 the idle task, runs on several)",
                at[1], at[0]
            )
        );
        // Runs that touch are fine; so is klogger's idle task 0 on every CPU at once, and only it.
        let fine = [run(0, 0, 0, 100), run(1, 0, 100, 200), run(0, 1, 100, 200), Record::End { at: 200 }];
        let (_, back, _) = read(&write(&fine));
        assert_eq!(back, fine);
        let kh =
            Header { source: Source::Klogger { kernel: "k".into(), target: "system".into() }, ..header() };
        let named = |name: &str| Record::Task { task: 0, process: 0, name: name.into() };
        let idle = [named("idle"), run(0, 0, 0, 100), run(0, 1, 0, 100), Record::End { at: 100 }];
        let mut w = Writer::new(Vec::new(), &kh).unwrap();
        idle.iter().for_each(|r| w.write(r).unwrap());
        let bytes = w.finish().unwrap();
        let back: Vec<Record> =
            Reader::new(&bytes[..], Path::new("k.trace")).unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(back, idle);
        let (e, _) = refusal(&kh, &[run(5, 0, 0, 100), run(5, 1, 0, 100)]);
        assert!(e.contains("task 5 runs on CPU 1 from 0 ns, before its run on CPU 0"), "{e}");
        // The idle task is the one the data names so, not whatever task 0 a header's "klogger" covers:
        // unnamed, named otherwise, renamed after it ran as the idle task, or in another tool's trace.
        for (h, first) in [(&kh, None), (&kh, Some(named("audio"))), (&header(), Some(named("idle")))] {
            let recs: Vec<Record> = first.into_iter().chain([run(0, 0, 0, 100), run(0, 1, 0, 100)]).collect();
            let (e, at) = refusal(h, &recs);
            assert!(
                e.starts_with(&format!(
                    "t.trace: byte {}: task 0 runs on CPU 1 from 0 ns",
                    at[recs.len() - 1]
                )),
                "{e}"
            );
        }
        let (e, at) = refusal(&kh, &[named("idle"), run(0, 0, 0, 100), run(0, 1, 0, 100), named("audio")]);
        assert_eq!(
            e,
            format!(
                "t.trace: byte {}: task 0 renamed \"audio\" after it ran as the idle task of several CPUs at \
                 once (byte {}): only the idle task does",
                at[3], at[2]
            )
        );
    }

    #[test]
    fn a_run_of_no_time_is_skipped_and_counted() {
        let recs = [
            run(0, 0, 0, 10),
            run(0, 0, 10, 10),
            run(1, 0, 10, 10),
            run(0, 0, 10, 20),
            Record::End { at: 20 },
        ];
        let bytes = write(&recs);
        let mut r = Reader::new(&bytes[..], Path::new("t.trace")).unwrap();
        let back: Vec<Record> = r.by_ref().map(|x| x.unwrap()).collect();
        assert_eq!(back, [run(0, 0, 0, 10), run(0, 0, 10, 20), Record::End { at: 20 }]);
        assert_eq!(r.empty_runs(), 2);
        // Skipped after it is checked: one outside the span is refused all the same.
        let (e, at) = refusal(&Header { start_ns: 100, ..header() }, &[run(0, 0, 50, 50)]);
        assert!(e.starts_with(&format!("t.trace: byte {}: run starting at 50 ns lies before", at[0])), "{e}");
    }

    #[test]
    fn requests_that_contradict_each_other_are_refused_with_their_offsets() {
        let rel = |job, at, deadline| Record::Release { task: 0, job, at, deadline };
        let end = |job, at| Record::JobEnd { task: 0, job, at, outcome: Outcome::Met };
        let cases: Vec<(Vec<Record>, String)> = vec![
            (vec![rel(0, 500, Some(600)), end(0, 200)], "request 0 of task 0 ends at 200 ns, before its release (500 ns, byte {0})".into()),
            (vec![rel(0, 500, Some(600)), end(0, 600), end(0, 700)], "request 0 of task 0 ends at 700 ns, but it has ended already, or was never released: a request ends at most once, after its release".into()),
            (vec![rel(0, 500, Some(600)), end(7, 800)], "request 7 of task 0 ends at 800 ns, but it was never released: a request ends at most once, after its release".into()),
            (vec![end(0, 800)], "request 0 of task 0 ends at 800 ns, but it was never released: a request ends at most once, after its release".into()),
            (vec![rel(1, 900, None), rel(1, 950, Some(960))], "request 1 of task 0 released after its request 1 (byte {0}): a task's requests are released once each, in the order of their numbers".into()),
            (vec![rel(2, 900, None), rel(1, 950, None)], "request 1 of task 0 released after its request 2 (byte {0})".into()),
        ];
        for (recs, want) in cases {
            let (e, at) = refusal(&header(), &recs);
            let want =
                format!("t.trace: byte {}: {}", at[recs.len() - 1], want.replace("{0}", &at[0].to_string()));
            assert!(e.starts_with(&want), "{e}\nwanted {want}");
        }
        // Requests of different tasks are apart; a request ending at its release is kept, and so is
        // one due before its release (a coarse timer released it late).
        let fine = [
            rel(0, 10, Some(5)),
            Record::Release { task: 1, job: 0, at: 10, deadline: None },
            end(0, 10),
            Record::JobEnd { task: 1, job: 0, at: 20, outcome: Outcome::Unfinished },
            rel(3, 30, None),
        ];
        let (_, back, _) = read(&write(&fine));
        assert_eq!(back, fine);
    }

    #[test]
    fn a_tick_rate_out_of_range_is_refused_and_no_tick_period_is_zero() {
        for hz in [0, MAX_HZ + 1, 2_000_000_000, u32::MAX] {
            let bytes =
                Writer::new(Vec::new(), &Header { hz: Some(hz), ..header() }).unwrap().finish().unwrap();
            let e = Reader::new(&bytes[..], Path::new("h.trace")).err().expect("refused").to_string();
            assert!(e.starts_with(&format!("h.trace: header (byte 16): hz: {hz} is out of range")), "{e}");
        }
        for hz in [1, 1000, MAX_HZ] {
            let bytes =
                Writer::new(Vec::new(), &Header { hz: Some(hz), ..header() }).unwrap().finish().unwrap();
            assert!(Reader::new(&bytes[..], Path::new("h.trace")).is_ok());
        }
        for hz in [0, 1, MAX_HZ, u32::MAX] {
            assert!(tick_period_ns(hz) >= 1);
        }
        assert_eq!(tick_period_ns(1000), 1_000_000);
    }

    #[test]
    fn a_cpu_the_header_lacks_is_refused_in_every_record_that_names_one() {
        let h = header();
        for (r, what) in [
            (run(0, 2, 0, 1), "CPU 2 of a 2-CPU trace"),
            (Record::Tick { cpu: 9, task: None, at: 0 }, "CPU 9 of a 2-CPU trace"),
            (Record::Wake { task: 0, cpu: Some(2), at: 0 }, "wake-up on CPU 2 of a 2-CPU trace"),
        ] {
            let (e, at) = refusal(&h, &[Record::End { at: 5 }, r]);
            assert_eq!(e, format!("t.trace: byte {}: {what}", at[1]));
        }
    }

    #[test]
    fn bad_headers_are_refused() {
        let good = write(&[]);
        let open = |b: &[u8]| Reader::new(b, Path::new("h.trace")).err().map(|e| e.to_string());
        assert!(open(b"KLOGGER\0xxxxxxxx").unwrap().contains("not a trace file"));
        assert!(open(&good[..10]).unwrap().contains("not a trace file"));
        let mut b = good.clone();
        put32(&mut b, 8, 2);
        assert!(open(&b).unwrap().contains("format version 2"));
        let mut b = good.clone();
        put32(&mut b, 12, u32::MAX);
        assert!(open(&b).unwrap().contains("at most"));
        let mut b = good.clone();
        b.truncate(20);
        assert!(open(&b).unwrap().contains("cut short"));
        let zero = String::from_utf8(good[16..].to_vec()).unwrap().replace("\"cpus\":2", "\"cpus\":0");
        let mut b = good[..16].to_vec();
        b.extend_from_slice(zero.as_bytes());
        assert!(open(&b).unwrap().contains("0 CPUs"));
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary() {
        let name = "é".repeat(MAX_TEXT);
        let (_, back, _) = read(&write(&[Record::Task { task: 1, process: 1, name }]));
        let Record::Task { name, .. } = &back[0] else { panic!() };
        assert!(name.len() <= MAX_TEXT && name.len() >= MAX_TEXT - 1 && name.chars().all(|c| c == 'é'));
    }
}
