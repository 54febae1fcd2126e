//! klogger's raw recording, read as a trace ("converted on read"). The klogger log file: a versioned header followed by fixed-size event records.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! offset 0   8 bytes  magic "KLOGGER\0"
//! offset 8   u32      format version (FORMAT_VERSION)
//! offset 12  u32      header length H in bytes
//! offset 16  H bytes  header, UTF-8 JSON (see [`Header`]): kernel, HZ, CPUs, clock, target...
//! then       records of RECORD_SIZE (72) bytes each:
//!   0 u64 ts (ns, the header's clock)   8 u32 cpu    12 u16 type   14 u16 flags
//!  16 u32 pid   20 u32 tgid   24 u32 pid2   28 u32 tgid2   32 u64 arg
//!  40 [u8;16] comm (NUL padded)   56 [u8;16] comm2
//! ```
//!
//! The record is the BPF program's `struct kl_event` (src/bpf/klogger.h) byte for byte. Events
//! dropped because a CPU's ring buffer was full are written as [`Kind::Lost`] records (`arg` = how
//! many); the two format versions differ only in where and when:
//!
//! - version 2 (written since the recorder could say *where* a gap is): the BPF program writes a
//!   lost record into the CPU's buffer as soon as it has room again, before the next event, with
//!   `ts` = the time of the first event lost; the gap on that CPU runs from that time to the next
//!   record of the CPU. Losses still pending when recording stops are written by the recorder the
//!   same way. The recorder also writes one [`Kind::Missed`] record per BPF program the kernel
//!   skipped (`flags` = the [`Kind`] that program writes, `arg` = runs skipped).
//! - version 1: the recorder appended one lost record per CPU at the end (`ts` = stop time, `arg`
//!   = events lost on that CPU during the whole recording): the gap's place is unknown. Such logs
//!   are read as before.
//!
//! The recorder ends a clean stop with one [`Kind::End`] record. A file cut short (the
//! recorder was killed, the disk filled) stays readable up to its last complete record: the reader
//! reports the trailing partial bytes and the missing end record instead of failing.
//!
//! [`convert`] replays the switches of each CPU to find every effective quantum (Etsion et al. §4,
//! §6: the time from being scheduled to being descheduled) and how it ended (preempted while
//! runnable, blocked, exited), and writes it as Run records beside the wake-ups, ticks and task
//! names. [`crate::Reader::open`] does this for a klogger file, so that every command that reads a
//! trace reads a recording as it is. A quantum already running when recording began, or still
//! running when it ended, is *partial*: its CPU time counts, but it is left out of quantum counts
//! and distributions. When the switches of a CPU do not chain (events were lost, or only a process
//! tree was recorded), the quantum whose start is unknown is dropped rather than guessed, and the
//! break is counted with its reason ([`BreakReason`], [`Converted::broken_chains_by_reason`]).
//!
//! The trace [`convert`] gives keeps the rules of every trace ([`crate::Consistency`]) however
//! the recording reads: what would break them is left out and counted ([`LeftOut`]), never
//! refused, since a recording of a live kernel cannot be made again (the crate documentation says
//! why). An event before the header's `start_ns` or after the End record of a clean stop lies
//! outside the recording (the recorder takes its start before attaching its programs, and writes
//! the End record after detaching them and draining the buffers; recorders before that change took
//! the start a few milliseconds after attaching): it is left out. A stretch of a task that begins
//! before the task's stretch on another CPU has ended (a thread runs on one CPU at a time; only
//! damage or an unlucky mix of lost events can say otherwise) is cut to begin where the other
//! ended, and left out if nothing remains; the idle task (0) is one task per CPU and exempt.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{EndReason, ReadError, Record, Source};

/// First 8 bytes of every klogger file.
pub const MAGIC: &[u8; 8] = b"KLOGGER\0";
/// Version of the layout described in the module documentation, written by this recorder.
pub const FORMAT_VERSION: u32 = 2;
/// Oldest version this reader reads (version 1: lost records only at the end, per CPU).
pub const OLDEST_FORMAT_VERSION: u32 = 1;
/// Size in bytes of one event record.
pub const RECORD_SIZE: usize = 72;
/// Most CPUs a recording may say it has (the trace's own limit).
pub const MAX_CPUS: u32 = 1 << 16;
/// The most records a recording may hold to be read: its analyses keep up to about 3.6 bytes per
/// byte of records (a recording of 320 MiB of switches among 50,000 tasks: `trace html` 1.09 GB,
/// `klogger export --perfetto` 1.16 GB; a report 2.4), so 256 MiB of records stays within 1 GiB of
/// memory. `klogger record --max-size` stops a recording within it.
pub const MAX_RECORDS: u64 = (256 << 20) / RECORD_SIZE as u64;

/// Why a recording past [`MAX_RECORDS`] is refused.
fn too_long() -> String {
    format!(
        "a recording of more than {MAX_RECORDS} records ({} MiB) is not read: its analyses would pass 1 GiB \
         of memory (record with a smaller --max-size, or a shorter --duration)",
        (MAX_RECORDS * RECORD_SIZE as u64).div_ceil(1 << 20)
    )
}

/// What an event record reports. Numeric values are those of `enum kl_type` in klogger.h.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// sched:sched_switch. pid = prev, pid2 = next, arg = prev_state, flags bit 0 = preempt.
    Switch,
    /// sched:sched_wakeup. pid = woken task, pid2 = waker, arg = target CPU.
    Wakeup,
    /// sched:sched_wakeup_new, as `Wakeup` for a newly created task.
    WakeupNew,
    /// sched:sched_process_fork. pid = parent, pid2 = child.
    Fork,
    /// sched:sched_process_exec. pid = task, arg = old pid, comm = new command name.
    Exec,
    /// sched:sched_process_exit. pid = exiting task.
    Exit,
    /// timer:hrtimer_expire_entry of a timer other than the tick. arg = callback address.
    Hrtimer,
    /// The scheduler tick (hrtimer_expire_entry of the tick_sched timer). pid = running task.
    Tick,
    /// irq:irq_handler_entry. arg = IRQ number.
    IrqEntry,
    /// irq:irq_handler_exit. arg = IRQ number.
    IrqExit,
    /// irq:softirq_entry. arg = vector.
    SoftirqEntry,
    /// irq:softirq_exit. arg = vector.
    SoftirqExit,
    /// Events lost on `cpu` because its ring buffer was full: arg = how many. Version 2: ts = the
    /// first one lost, the gap ends at the CPU's next record; version 1: ts = stop time, one per
    /// CPU for the whole recording.
    Lost,
    /// Written by the recorder when it stops cleanly: ts = stop time, arg = records written.
    End,
    /// Written by the recorder (version 2): the kernel skipped a BPF program `arg` times (its
    /// `recursion_misses`: the program was already running on that CPU); `flags` = the type of
    /// record that program writes.
    Missed,
    /// A type this version does not know (kept so that newer files stay readable).
    Unknown(u16),
}

impl Kind {
    /// Decodes the `type` field.
    pub fn from_u16(v: u16) -> Kind {
        match v {
            1 => Kind::Switch,
            2 => Kind::Wakeup,
            3 => Kind::WakeupNew,
            4 => Kind::Fork,
            5 => Kind::Exec,
            6 => Kind::Exit,
            7 => Kind::Hrtimer,
            8 => Kind::Tick,
            9 => Kind::IrqEntry,
            10 => Kind::IrqExit,
            11 => Kind::SoftirqEntry,
            12 => Kind::SoftirqExit,
            100 => Kind::Lost,
            101 => Kind::End,
            102 => Kind::Missed,
            x => Kind::Unknown(x),
        }
    }

    /// Encodes the `type` field.
    pub fn to_u16(self) -> u16 {
        match self {
            Kind::Switch => 1,
            Kind::Wakeup => 2,
            Kind::WakeupNew => 3,
            Kind::Fork => 4,
            Kind::Exec => 5,
            Kind::Exit => 6,
            Kind::Hrtimer => 7,
            Kind::Tick => 8,
            Kind::IrqEntry => 9,
            Kind::IrqExit => 10,
            Kind::SoftirqEntry => 11,
            Kind::SoftirqExit => 12,
            Kind::Lost => 100,
            Kind::End => 101,
            Kind::Missed => 102,
            Kind::Unknown(x) => x,
        }
    }
}

/// `flags` bit of a switch record: the kernel passed `preempt = true`.
pub const FLAG_PREEMPT: u16 = 1;

/// One decoded event record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Timestamp in ns of the header's clock (CLOCK_MONOTONIC).
    pub ts: u64,
    /// CPU the event happened on.
    pub cpu: u32,
    /// Event type.
    pub kind: Kind,
    /// Type-specific flags ([`FLAG_PREEMPT`] for switches).
    pub flags: u16,
    /// First task's thread id (see [`Kind`]).
    pub pid: u32,
    /// First task's process id.
    pub tgid: u32,
    /// Second task's thread id.
    pub pid2: u32,
    /// Second task's process id.
    pub tgid2: u32,
    /// Type-specific argument.
    pub arg: u64,
    /// First task's command name.
    pub comm: [u8; 16],
    /// Second task's command name.
    pub comm2: [u8; 16],
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

/// A command name as text (up to the first NUL).
pub fn comm_str(c: &[u8; 16]) -> String {
    let n = c.iter().position(|&b| b == 0).unwrap_or(16);
    String::from_utf8_lossy(&c[..n]).into_owned()
}

/// A command name as the 16 NUL-padded bytes of a record (truncated to 15 bytes like the kernel).
pub fn comm_bytes(s: &str) -> [u8; 16] {
    let mut c = [0u8; 16];
    let b = s.as_bytes();
    let n = b.len().min(15);
    c[..n].copy_from_slice(&b[..n]);
    c
}

impl Event {
    /// A record with every field zero but these.
    pub fn new(ts: u64, cpu: u32, kind: Kind) -> Event {
        Event {
            ts,
            cpu,
            kind,
            flags: 0,
            pid: 0,
            tgid: 0,
            pid2: 0,
            tgid2: 0,
            arg: 0,
            comm: [0; 16],
            comm2: [0; 16],
        }
    }

    /// A switch on `cpu` at `ts` from `prev` to `next` (each a thread id, its own process, and its
    /// command name), `prev` left in `prev_state` (0: runnable, preempted; else blocked): for tests
    /// and tools that write a recording by hand.
    pub fn switch(ts: u64, cpu: u32, prev: (u32, &str), next: (u32, &str), prev_state: u64) -> Event {
        Event {
            pid: prev.0,
            tgid: prev.0,
            pid2: next.0,
            tgid2: next.0,
            arg: prev_state,
            comm: comm_bytes(prev.1),
            comm2: comm_bytes(next.1),
            ..Event::new(ts, cpu, Kind::Switch)
        }
    }

    /// Decodes one record. `b` must hold at least [`RECORD_SIZE`] bytes.
    pub fn from_bytes(b: &[u8]) -> Event {
        assert!(b.len() >= RECORD_SIZE, "short record");
        Event {
            ts: u64_at(b, 0),
            cpu: u32_at(b, 8),
            kind: Kind::from_u16(u16::from_le_bytes([b[12], b[13]])),
            flags: u16::from_le_bytes([b[14], b[15]]),
            pid: u32_at(b, 16),
            tgid: u32_at(b, 20),
            pid2: u32_at(b, 24),
            tgid2: u32_at(b, 28),
            arg: u64_at(b, 32),
            comm: b[40..56].try_into().unwrap(),
            comm2: b[56..72].try_into().unwrap(),
        }
    }

    /// Encodes this record.
    pub fn to_bytes(&self) -> [u8; RECORD_SIZE] {
        let mut b = [0u8; RECORD_SIZE];
        b[0..8].copy_from_slice(&self.ts.to_le_bytes());
        b[8..12].copy_from_slice(&self.cpu.to_le_bytes());
        b[12..14].copy_from_slice(&self.kind.to_u16().to_le_bytes());
        b[14..16].copy_from_slice(&self.flags.to_le_bytes());
        b[16..20].copy_from_slice(&self.pid.to_le_bytes());
        b[20..24].copy_from_slice(&self.tgid.to_le_bytes());
        b[24..28].copy_from_slice(&self.pid2.to_le_bytes());
        b[28..32].copy_from_slice(&self.tgid2.to_le_bytes());
        b[32..40].copy_from_slice(&self.arg.to_le_bytes());
        b[40..56].copy_from_slice(&self.comm);
        b[56..72].copy_from_slice(&self.comm2);
        b
    }
}

/// The JSON header of a log file. New fields may be added; readers ignore unknown ones.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Header {
    /// Always "klogger".
    pub tool: String,
    /// Same as the binary format version.
    pub format_version: u32,
    /// Size of one record in bytes.
    pub record_size: u32,
    /// `uname -r` of the recorded kernel.
    pub kernel: String,
    /// CONFIG_HZ of the recorded kernel, if it could be read (/proc/config.gz, /boot/config-*).
    pub hz: Option<u32>,
    /// Number of possible CPUs (ids in records are below this).
    pub cpus: u32,
    /// Clock of the `ts` fields: "CLOCK_MONOTONIC" (bpf_ktime_get_ns).
    pub clock: String,
    /// Clock value when recording started (ns).
    pub start_ns: u64,
    /// Wall-clock time when recording started (seconds since the Unix epoch).
    pub start_unix_s: f64,
    /// "system", "pid" or "command".
    pub target: String,
    /// Followed process ids (empty for system-wide recording).
    pub pids: Vec<u32>,
    /// The command started and followed, for target "command".
    pub command: Vec<String>,
    /// How the tick was identified, e.g. "timer:hrtimer_expire_entry function=tick_nohz_handler".
    pub tick_hook: Option<String>,
    /// Bytes of each per-CPU ring buffer.
    pub buffer_bytes: u64,
}

/// A whole log file in memory.
#[derive(Clone, Debug)]
pub struct Log {
    /// The header.
    pub header: Header,
    /// Every complete record in file order (not sorted by time: CPUs' buffers interleave).
    pub events: Vec<Event>,
    /// Bytes after the last complete record (non-zero if the file was cut short).
    pub trailing_bytes: usize,
    /// Whether the file ends with an [`Kind::End`] record (clean stop).
    pub complete: bool,
}

impl Header {
    /// The header of a system-wide recording of this format on the `CLOCK_MONOTONIC` clock, from 0,
    /// of a kernel with `cpus` CPUs ticking at `hz`; the recorder sets the rest from the machine,
    /// tests with struct update syntax.
    pub fn new(kernel: &str, cpus: u32, hz: Option<u32>) -> Header {
        Header {
            tool: "klogger".into(),
            format_version: FORMAT_VERSION,
            record_size: RECORD_SIZE as u32,
            kernel: kernel.into(),
            hz,
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
}

impl Log {
    /// Events lost in the kernel (sum of [`Kind::Lost`] records).
    pub fn lost(&self) -> u64 {
        self.events.iter().filter(|e| e.kind == Kind::Lost).fold(0u64, |a, e| a.saturating_add(e.arg))
    }

    /// Reads a whole file. Fails on a bad magic, version or header; a cut-short tail is reported
    /// in `trailing_bytes` / `complete`, not an error.
    pub fn read(path: &Path) -> Result<Log, ReadError> {
        let io = |source| ReadError::Io { path: path.to_path_buf(), source };
        let fmt = |offset: u64, what: String| ReadError::Record { path: path.to_path_buf(), offset, what };
        let meta = std::fs::metadata(path).map_err(io)?;
        if !meta.is_file() {
            return Err(fmt(0, "not a regular file (a device, directory or pipe is not read)".into()));
        }
        // Refused before reading (the reader refuses it too, at the record past the limit).
        if meta.len() > MAX_RECORDS * RECORD_SIZE as u64 + (2 << 20) {
            return Err(fmt(0, too_long()));
        }
        Log::from_reader(BufReader::new(File::open(path).map_err(io)?), path)
    }

    /// [`Log::read`] from any reader (`path` names it in errors).
    pub fn from_reader(mut r: impl Read, path: &Path) -> Result<Log, ReadError> {
        let io = |source| ReadError::Io { path: path.to_path_buf(), source };
        let fmt = |offset: u64, what: String| ReadError::Record { path: path.to_path_buf(), offset, what };
        let mut pre = [0u8; 16];
        let got = crate::read_full(&mut r, &mut pre).map_err(io)?;
        if got < 8 || &pre[0..8] != MAGIC {
            return Err(fmt(0, "not a klogger file (bad magic)".into()));
        }
        if got < 16 {
            return Err(fmt(0, "file too short for a klogger header".into()));
        }
        let version = u32_at(&pre, 8);
        if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(fmt(
                8,
                format!(
                    "format version {version}, this klogger reads versions \
                     {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION}"
                ),
            ));
        }
        let hlen = u32_at(&pre, 12) as usize;
        if hlen > 1 << 20 {
            return Err(fmt(12, format!("header length {hlen} is implausible")));
        }
        let mut hbuf = vec![0u8; hlen];
        r.read_exact(&mut hbuf).map_err(|_| fmt(16, "file ends inside the header".into()))?;
        let header: Header = serde_json::from_slice(&hbuf)
            .map_err(|e| fmt(16 + e.column() as u64, format!("bad JSON header: {e}")))?;
        if header.record_size as usize != RECORD_SIZE {
            return Err(fmt(
                16,
                format!("record_size {} in header, expected {RECORD_SIZE}", header.record_size),
            ));
        }
        if header.format_version != version {
            return Err(fmt(
                16,
                format!("header says format version {}, the file {version}", header.format_version),
            ));
        }
        if header.cpus == 0 || header.cpus > MAX_CPUS {
            return Err(fmt(16, format!("header says {} CPUs (1 to {MAX_CPUS})", header.cpus)));
        }
        crate::check_hz(header.hz).map_err(|e| fmt(16, format!("header: {e}")))?;
        // Records decoded as they are read: the body is never held as bytes besides its events.
        let first = 16 + hlen as u64;
        let mut events = Vec::new();
        let mut rec = [0u8; RECORD_SIZE];
        let trailing_bytes = loop {
            let got = crate::read_full(&mut r, &mut rec).map_err(io)?;
            if got < RECORD_SIZE {
                break got;
            }
            let at = first + (events.len() * RECORD_SIZE) as u64;
            if events.len() as u64 >= MAX_RECORDS {
                return Err(fmt(at, too_long()));
            }
            let e = Event::from_bytes(&rec);
            if e.cpu >= header.cpus {
                return Err(fmt(at, format!("CPU {} in a recording of {} CPUs", e.cpu, header.cpus)));
            }
            events.push(e);
        };
        let complete = events.last().map(|e| e.kind == Kind::End).unwrap_or(false);
        Ok(Log { header, events, trailing_bytes, complete })
    }
}

/// Writes a log file: header first, then records.
pub struct LogWriter<W: Write> {
    out: W,
    records: u64,
}

impl<W: Write> LogWriter<W> {
    /// Writes the magic, the header's format version and the header.
    pub fn new(mut out: W, header: &Header) -> std::io::Result<Self> {
        let h = serde_json::to_vec(header).map_err(std::io::Error::other)?;
        out.write_all(MAGIC)?;
        out.write_all(&header.format_version.to_le_bytes())?;
        out.write_all(&(h.len() as u32).to_le_bytes())?;
        out.write_all(&h)?;
        Ok(LogWriter { out, records: 0 })
    }

    /// Appends a raw record as produced by the BPF program (must be RECORD_SIZE bytes).
    pub fn write_raw(&mut self, rec: &[u8]) -> std::io::Result<()> {
        debug_assert_eq!(rec.len(), RECORD_SIZE);
        self.out.write_all(&rec[..RECORD_SIZE])?;
        self.records += 1;
        Ok(())
    }

    /// Appends a record.
    pub fn write(&mut self, e: &Event) -> std::io::Result<()> {
        self.write_raw(&e.to_bytes())
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    /// Returns the underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The kernel's TASK_DEAD bit in `prev_state`.
const TASK_DEAD: u64 = 0x80;

/// Why the switches of a CPU stopped chaining: a switch's `prev` was not the task the CPU was last
/// switched to, so at least one switch in between was not recorded. Checked in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakReason {
    /// The CPU's ring buffer was full: a lost record of that CPU lies in the gap (in a version 1
    /// log, which does not say when, events were lost on that CPU at some time).
    RingBufferFull,
    /// A process-tree recording: a switch between two tasks outside the tree is not recorded, and
    /// one of the two tasks around the gap is outside it.
    NotFollowed,
    /// The kernel never reported the task the CPU was last switched to being switched out: no
    /// sched_switch in the whole recording has it as `prev`, though its switch-ins are there. The
    /// kernel skips the tracepoint for that task (perf's sched_switch misses it too); on the
    /// development VM this is the sandbox's init process (pid 1), whose threads are switched in
    /// visibly and out invisibly.
    SwitchOutNotReported,
    /// The kernel skipped the sched_switch BPF program (a [`Kind::Missed`] record counts it).
    ProgramSkipped,
    /// None of the above holds. Not seen so far; counted rather than hidden.
    Unexplained,
}

impl BreakReason {
    /// The reason's name, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            BreakReason::RingBufferFull => "ring_buffer_full",
            BreakReason::NotFollowed => "not_followed",
            BreakReason::SwitchOutNotReported => "switch_out_not_reported",
            BreakReason::ProgramSkipped => "program_skipped",
            BreakReason::Unexplained => "unexplained",
        }
    }
}

/// What [`convert`] left out of a recording so that its trace keeps the rules of every trace (see
/// the module documentation), counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    /// Events whose time lies outside the recording: before the header's `start_ns`, or after the
    /// End record of a clean stop.
    pub outside_span: u64,
    /// Stretches of a task that began before its stretch on another CPU had ended: cut to begin
    /// where that one ended, or left out when nothing remained.
    pub overlapping: u64,
}

impl LeftOut {
    /// Whether anything was left out.
    pub fn any(&self) -> bool {
        self.outside_span > 0 || self.overlapping > 0
    }

    /// A sentence for a person ("2 events outside the recording's span left out; 1 stretch of a task
    /// overlapping its stretch on another CPU cut or left out"); empty if nothing was.
    pub fn describe(&self) -> String {
        let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut parts = Vec::new();
        if self.outside_span > 0 {
            parts.push(
                plural(self.outside_span, "event", "events") + " outside the recording's span left out",
            );
        }
        if self.overlapping > 0 {
            parts.push(
                plural(self.overlapping, "stretch", "stretches")
                    + " of a task overlapping its stretch on another CPU cut or left out",
            );
        }
        parts.join("; ")
    }
}

/// A recording as a trace: its header and records, in time order (a Run at its start), task names
/// first.
#[derive(Clone, Debug)]
pub struct Converted {
    /// The trace's header (source klogger, the recorded kernel, the processes followed).
    pub header: crate::Header,
    /// The records.
    pub records: Vec<Record>,
    /// Event records read (not counting the recorder's lost/end/missed records).
    pub events: u64,
    /// Switches whose `prev` was not the task the CPU was last switched to, plus CPUs whose last
    /// switched-to task was seen replaced before the end without a switch (see [`BreakReason`]).
    pub broken_chains: u64,
    /// [`Converted::broken_chains`] by reason (reasons with none left out).
    pub broken_chains_by_reason: BTreeMap<BreakReason, u64>,
    /// What was left out or cut to keep the trace consistent.
    pub left_out: LeftOut,
}

/// Classifies the breaks of a recording's chains of switches (see [`BreakReason`]).
struct Breaks<'a> {
    header: &'a Header,
    /// Version 2: per CPU, the times lost records say a gap began (sorted).
    lost_at: Vec<Vec<u64>>,
    /// Version 1: per CPU, events lost at unknown times.
    lost_somewhere: Vec<u64>,
    /// Tasks some switch has as `prev`.
    switched_out: HashSet<u32>,
    /// sched_switch program runs the kernel skipped, not yet given to a break.
    skipped: u64,
    by_reason: BTreeMap<BreakReason, u64>,
}

impl Breaks<'_> {
    /// A break on `cpu` between `from` (switched in at `t_in`) and `to` (running at `t`).
    fn count(&mut self, cpu: usize, from: u32, t_in: u64, to: u32, t: u64, followed: &dyn Fn(u32) -> bool) {
        let lost_in_gap = if self.header.format_version >= 2 {
            let lost = &self.lost_at[cpu];
            lost.get(lost.partition_point(|&l| l < t_in)).is_some_and(|&l| l <= t)
        } else {
            self.lost_somewhere[cpu] > 0
        };
        let why = if lost_in_gap {
            BreakReason::RingBufferFull
        } else if self.header.target != "system" && !(followed(from) && followed(to)) {
            BreakReason::NotFollowed
        } else if !self.switched_out.contains(&from) {
            BreakReason::SwitchOutNotReported
        } else if self.skipped > 0 {
            self.skipped -= 1;
            BreakReason::ProgramSkipped
        } else {
            BreakReason::Unexplained
        };
        *self.by_reason.entry(why).or_default() += 1;
    }
}

/// Converts a recording's events (in any order: they are sorted by time here). Events outside the
/// recording's span are left out and counted, as are overlapping stretches of a task (the module
/// documentation).
pub fn convert(header: &Header, events: &[Event]) -> Converted {
    let recorder = |k: Kind| matches!(k, Kind::Lost | Kind::End | Kind::Missed);
    // The recording's span: from the header's start to the End record of a clean stop, if any.
    let stop = events.last().filter(|e| e.kind == Kind::End).map(|e| e.ts);
    let inside = |e: &Event| e.ts >= header.start_ns && stop.is_none_or(|s| e.ts <= s);
    let mut ev: Vec<&Event> = events.iter().filter(|e| !recorder(e.kind)).collect();
    let read = ev.len();
    ev.retain(|e| inside(e));
    let outside_span = (read - ev.len()) as u64;
    ev.sort_by_key(|e| e.ts);
    let start = ev.first().map(|e| e.ts).unwrap_or(header.start_ns);
    let end = ev.last().map(|e| e.ts).unwrap_or(start);
    let ncpu = ev.iter().map(|e| e.cpu as usize + 1).max().unwrap_or(0).max(header.cpus as usize);
    let mut names: BTreeMap<u32, (u32, String)> = BTreeMap::new();
    let note = |names: &mut BTreeMap<u32, (u32, String)>, tid: u32, tgid: u32, comm: &[u8; 16]| {
        let name = if tid == 0 { "idle".to_string() } else { comm_str(comm) };
        names.insert(tid, (tgid, name));
    };
    let mut breaks = Breaks {
        header,
        lost_at: vec![Vec::new(); ncpu],
        lost_somewhere: vec![0; ncpu],
        switched_out: ev.iter().filter(|e| e.kind == Kind::Switch).map(|e| e.pid).collect(),
        skipped: 0,
        by_reason: BTreeMap::new(),
    };
    for e in events {
        let c = e.cpu as usize;
        if c >= ncpu {
            continue; // a recorder record of a CPU no event has, in a header without CPUs
        }
        match e.kind {
            Kind::Lost if e.arg > 0 && header.format_version >= 2 => breaks.lost_at[c].push(e.ts),
            Kind::Lost => breaks.lost_somewhere[c] = breaks.lost_somewhere[c].saturating_add(e.arg),
            Kind::Missed if e.flags == Kind::Switch.to_u16() => {
                breaks.skipped = breaks.skipped.saturating_add(e.arg)
            }
            _ => {}
        }
    }
    breaks.lost_at.iter_mut().for_each(|l| l.sort_unstable());
    let mut cur: Vec<Option<(u32, u64)>> = vec![None; ncpu];
    // The task each CPU's last non-switch event found running (tick, timer, interrupt), and when.
    let mut running: Vec<Option<(u32, u64)>> = vec![None; ncpu];
    let mut timed: Vec<(u64, Record)> = Vec::new();
    let mut followed: Option<HashSet<u32>> =
        if header.target == "system" { None } else { Some(header.pids.iter().copied().collect()) };
    for e in &ev {
        let c = e.cpu as usize;
        match e.kind {
            Kind::Switch => {
                note(&mut names, e.pid, e.tgid, &e.comm);
                note(&mut names, e.pid2, e.tgid2, &e.comm2);
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
                    Some((tid, s)) => {
                        let tgid = |t: u32| names.get(&t).map(|n| n.0).unwrap_or(t);
                        let f = |t: u32| followed.as_ref().is_none_or(|f| f.contains(&tgid(t)));
                        breaks.count(c, tid, s, e.pid, e.ts, &f);
                    }
                    None => {
                        if e.ts > start {
                            timed.push((start, run(e.pid, start, false)));
                        }
                    }
                }
                cur[c] = Some((e.pid2, e.ts));
            }
            Kind::Wakeup | Kind::WakeupNew => {
                note(&mut names, e.pid, e.tgid, &e.comm);
                timed.push((e.ts, Record::Wake { task: e.pid, cpu: Some(e.cpu), at: e.ts }));
            }
            Kind::Fork => {
                note(&mut names, e.pid, e.tgid, &e.comm);
                note(&mut names, e.pid2, e.tgid2, &e.comm2);
                if let Some(f) = followed.as_mut() {
                    if f.contains(&e.tgid) {
                        f.insert(e.tgid2);
                    }
                }
            }
            Kind::Exec | Kind::Exit => note(&mut names, e.pid, e.tgid, &e.comm),
            // The tick hook records the task it interrupted.
            Kind::Tick => {
                running[c] = Some((e.pid, e.ts));
                timed.push((e.ts, Record::Tick { cpu: e.cpu, task: Some(e.pid), at: e.ts }))
            }
            Kind::Hrtimer | Kind::IrqEntry | Kind::IrqExit | Kind::SoftirqEntry | Kind::SoftirqExit => {
                running[c] = Some((e.pid, e.ts))
            }
            _ => {}
        }
    }
    for (c, st) in cur.iter().enumerate() {
        if let Some((task, s)) = *st {
            // The task last switched to was replaced without a switch the kernel reported: its
            // quantum's end is unknown.
            if let Some((other, t)) = running[c].filter(|&(p, t)| p != task && t > s) {
                if !breaks.switched_out.contains(&task) {
                    let tgid = |t: u32| names.get(&t).map(|n| n.0).unwrap_or(t);
                    let f = |t: u32| followed.as_ref().is_none_or(|f| f.contains(&tgid(t)));
                    breaks.count(c, task, s, other, t, &f);
                    continue;
                }
            }
            if end > s {
                let why = EndReason::TraceEnd;
                timed.push((s, Record::Run { task, cpu: c as u32, start: s, end, why, complete: false }));
            }
        }
    }
    timed.sort_by_key(|(t, _)| *t);
    let overlapping = cut_overlaps(&mut timed);
    let source = Source::Klogger { kernel: header.kernel.clone(), target: header.target.clone() };
    let mut th = crate::Header::new(source, ncpu as u32, &header.clock, start, header.hz);
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
    let broken_chains = breaks.by_reason.values().sum();
    Converted {
        header: th,
        records,
        events: ev.len() as u64 + outside_span,
        broken_chains,
        broken_chains_by_reason: breaks.by_reason,
        left_out: LeftOut { outside_span, overlapping },
    }
}

/// Cuts every stretch of a task that begins before the task's last stretch (on another CPU) has
/// ended, to begin where that one ended; leaves it out if nothing remains. The idle task (0) is one
/// task per CPU and keeps its stretches. `timed` is in time order (a Run at its start) and stays so.
/// Returns how many stretches were cut or left out.
fn cut_overlaps(timed: &mut Vec<(u64, Record)>) -> u64 {
    let mut free: HashMap<u32, u64> = HashMap::new();
    let (mut n, mut moved) = (0, false);
    timed.retain_mut(|(key, r)| {
        let Record::Run { task, start, end, complete, .. } = r else { return true };
        if *task == 0 {
            return true;
        }
        let f = free.entry(*task).or_insert(0);
        if *start < *f {
            n += 1;
            if *end <= *f {
                return false;
            }
            (*start, *key, *complete) = (*f, *f, false);
            moved = true;
        }
        *f = *end;
        true
    });
    if moved {
        timed.sort_by_key(|(t, _)| *t);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header { start_ns: 5, buffer_bytes: 4096, ..Header::new("test", 2, Some(250)) }
    }

    #[test]
    fn roundtrip_and_truncation() {
        let dir = std::env::temp_dir().join(format!("klogger-fmt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.klog");
        let mut w = LogWriter::new(Vec::new(), &header()).unwrap();
        let mut e = Event::new(10, 1, Kind::Switch);
        e.pid = 7;
        e.pid2 = 8;
        e.comm = comm_bytes("a-very-long-command-name");
        w.write(&e).unwrap();
        w.write(&Event::new(20, 0, Kind::End)).unwrap();
        let mut bytes = w.into_inner();
        std::fs::write(&p, &bytes).unwrap();
        let log = Log::read(&p).unwrap();
        assert_eq!(log.header, header());
        assert_eq!(log.events.len(), 2);
        assert_eq!(log.events[0], e);
        assert_eq!(comm_str(&log.events[0].comm), "a-very-long-com");
        assert!(log.complete);
        // Cut inside the last record: the first stays readable, the end is reported missing.
        bytes.truncate(bytes.len() - 10);
        std::fs::write(&p, &bytes).unwrap();
        let log = Log::read(&p).unwrap();
        assert_eq!(log.events.len(), 1);
        assert_eq!(log.trailing_bytes, RECORD_SIZE - 10);
        assert!(!log.complete);
        // A foreign file is refused with the file name and offset.
        std::fs::write(&p, b"hello world, not a log").unwrap();
        let err = Log::read(&p).unwrap_err().to_string();
        assert!(err.contains("t.klog: byte 0: not a klogger file"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A switch from `prev`, which blocked, to `next`.
    fn switch(ts: u64, cpu: u32, prev: u32, next: u32) -> Event {
        Event::switch(ts, cpu, (prev, &format!("t{prev}")), (next, &format!("t{next}")), 1)
    }

    fn file(dir: &Path, name: &str, h: &Header, events: &[Event]) -> std::path::PathBuf {
        let mut w = LogWriter::new(Vec::new(), h).unwrap();
        for e in events {
            w.write(e).unwrap();
        }
        let p = dir.join(name);
        std::fs::write(&p, w.into_inner()).unwrap();
        p
    }

    #[test]
    fn a_recording_opens_as_a_trace_converted_on_read() {
        let dir = tempfile::tempdir().unwrap();
        let events = [switch(100, 0, 0, 5), switch(250, 0, 5, 0), switch(300, 1, 0, 5), switch(420, 1, 5, 0)];
        let p = file(dir.path(), "r.klog", &header(), &events);
        let mut r = crate::Reader::open(&p).unwrap();
        assert_eq!(r.header().source.tool(), "klogger");
        assert_eq!((r.header().cpus, r.header().hz), (2, Some(250)));
        let got: Vec<Record> = r.by_ref().collect::<Result<_, _>>().unwrap();
        assert_eq!(got, convert(&header(), &events).records);
        let runs: Vec<(u32, u32, u64, u64)> = got
            .iter()
            .filter_map(|x| match *x {
                Record::Run { task: 5, cpu, start, end, .. } => Some((5, cpu, start, end)),
                _ => None,
            })
            .collect();
        assert_eq!(runs, [(5, 0, 100, 250), (5, 1, 300, 420)]);
    }

    fn lost(ts: u64, cpu: u32, n: u64) -> Event {
        Event { arg: n, ..Event::new(ts, cpu, Kind::Lost) }
    }

    fn tick(ts: u64, cpu: u32, running: u32) -> Event {
        Event { pid: running, tgid: running, ..Event::new(ts, cpu, Kind::Tick) }
    }

    #[test]
    fn a_version_1_log_stays_readable_and_its_losses_are_placed_on_their_cpu() {
        // Version 1 as the old recorder wrote it: lost records only at the end, one per CPU, with
        // the stop time. The gap's place is unknown, so a break on a CPU that lost events is put
        // down to the full buffer, and one on a CPU that lost none is not.
        let dir = tempfile::tempdir().unwrap();
        let h1 = Header { format_version: 1, ..header() };
        let events = [
            switch(100, 0, 0, 5),
            switch(300, 0, 6, 0), // 5 -> 6 lost on CPU 0
            switch(100, 1, 0, 7),
            switch(200, 1, 7, 0),
            switch(250, 1, 0, 8),
            switch(400, 1, 9, 0), // 8 -> 9 not recorded, CPU 1 lost nothing
            switch(410, 1, 0, 9),
            switch(420, 1, 9, 0), // 9 and 8 are seen switching out
            switch(430, 1, 0, 8),
            switch(440, 1, 8, 0),
            lost(500, 0, 3),
            lost(500, 1, 0),
            Event::new(500, 0, Kind::End),
        ];
        let p = file(dir.path(), "v1.klog", &h1, &events);
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(u32_at(&bytes, 8), 1, "written as version 1");
        let log = Log::read(&p).unwrap();
        assert_eq!((log.header.format_version, log.lost(), log.complete), (1, 3, true));
        let c = convert(&log.header, &log.events);
        assert_eq!(c.broken_chains, 2);
        let want = BTreeMap::from([(BreakReason::RingBufferFull, 1), (BreakReason::Unexplained, 1)]);
        assert_eq!(c.broken_chains_by_reason, want);
        // A version this reader does not know is refused, with the versions it reads.
        let p = file(dir.path(), "v3.klog", &Header { format_version: 3, ..header() }, &[]);
        let e = Log::read(&p).unwrap_err().to_string();
        assert!(e.contains("format version 3, this klogger reads versions 1 to 2"), "{e}");
    }

    #[test]
    fn a_recording_past_what_its_analyses_hold_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = file(dir.path(), "big.klog", &header(), &[Event::new(20, 0, Kind::End)]);
        // Sparse: one record past the limit costs no disk and, refused by its size, no memory.
        let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        f.set_len(f.metadata().unwrap().len() + (MAX_RECORDS + (2 << 20)) * RECORD_SIZE as u64).unwrap();
        let e = Log::read(&p).unwrap_err().to_string();
        assert!(e.contains("big.klog: byte 0: a recording of more than"), "{e}");
        assert!(e.contains("--max-size"), "{e}");
    }

    #[test]
    fn every_break_is_given_its_reason() {
        let by = |h: &Header, ev: &[Event]| convert(h, ev).broken_chains_by_reason;
        // Version 2: a lost record inside the gap (its time is the first event lost) names the
        // full buffer; one on the other CPU, or before the gap, does not.
        let ev = [
            switch(100, 0, 0, 5),
            lost(150, 0, 2),
            switch(300, 0, 6, 0),
            switch(310, 0, 0, 6),
            switch(320, 0, 6, 0),
            switch(330, 0, 0, 5),
            switch(340, 0, 5, 0),
        ];
        assert_eq!(by(&header(), &ev), BTreeMap::from([(BreakReason::RingBufferFull, 1)]));
        let mut elsewhere = ev.to_vec();
        elsewhere[1] = lost(150, 1, 2);
        assert_eq!(by(&header(), &elsewhere), BTreeMap::from([(BreakReason::Unexplained, 1)]));
        let mut before = ev.to_vec();
        before[1] = lost(50, 0, 2);
        assert_eq!(by(&header(), &before), BTreeMap::from([(BreakReason::Unexplained, 1)]));
        // A skipped BPF program run (recursion) explains as many breaks as it counts.
        let missed = Event { flags: Kind::Switch.to_u16(), arg: 1, ..Event::new(400, 0, Kind::Missed) };
        let mut skipped = elsewhere.clone();
        skipped.push(missed);
        let got = by(&header(), &skipped);
        assert_eq!(got, BTreeMap::from([(BreakReason::ProgramSkipped, 1)]), "{got:?}");
        // A process-tree recording does not see switches between tasks outside the tree.
        let tree = Header { target: "pid".into(), pids: vec![5], ..header() };
        let ev = [switch(100, 0, 0, 5), switch(200, 0, 5, 0), switch(300, 0, 7, 5), switch(400, 0, 5, 7)];
        assert_eq!(by(&tree, &ev), BTreeMap::from([(BreakReason::NotFollowed, 1)]));
        // A task whose switch-ins are reported but never a switch-out (the kernel skips the
        // tracepoint for it): at a later switch, and at the end of the recording when a tick finds
        // another task running on its CPU. Its quanta are left out, not run to the end.
        let ev = [
            switch(100, 0, 0, 1),
            switch(200, 0, 5, 0), // 1 -> 5 unreported
            switch(300, 1, 0, 1),
            tick(350, 1, 0), // 1 -> 0 unreported; CPU 1 has no switch after
            switch(400, 0, 0, 5),
            switch(500, 0, 5, 0),
        ];
        let c = convert(&header(), &ev);
        assert_eq!(c.broken_chains_by_reason, BTreeMap::from([(BreakReason::SwitchOutNotReported, 2)]));
        assert_eq!(c.broken_chains, 2);
        let runs_of_1 = c.records.iter().filter(|r| matches!(r, Record::Run { task: 1, .. })).count();
        assert_eq!(runs_of_1, 0, "{:?}", c.records);
        // A task still running at the end, as ticks show, is a partial quantum, not a break.
        let ev = [switch(100, 0, 0, 5), tick(200, 0, 5), switch(100, 1, 0, 6), tick(300, 1, 6)];
        let c = convert(&header(), &ev);
        assert_eq!((c.broken_chains, c.broken_chains_by_reason.len()), (0, 0));
        // Only recorder records, under a header that says no CPUs (the reader refuses such a file;
        // a caller of convert may still pass it): nothing to convert, no panic.
        let c = convert(&Header { cpus: 0, ..header() }, &[lost(10, 3, 1), Event::new(20, 0, Kind::End)]);
        assert_eq!((c.events, c.broken_chains), (0, 0));
    }

    /// Many gaps and lost records, the lost records in no particular order: each gap is matched
    /// to the lost records inside it by a binary search on the sorted times.
    #[test]
    fn many_lost_records_in_any_order_are_placed_in_their_gaps() {
        let n = 20_000u64;
        let mut ev = Vec::new();
        for k in 0..n {
            // Task 5 switched in, then task 6 switched out: a break; a lost record inside every
            // third gap, and one just after every fifth.
            ev.push(switch(1000 * k, 0, 0, 5));
            ev.push(switch(1000 * k + 100, 0, 6, 0));
        }
        ev.extend([switch(1000 * n, 0, 0, 5), switch(1000 * n + 10, 0, 5, 0)]); // 5 is seen switching out
        let mut lost_recs: Vec<Event> =
            (0..n).filter(|k| k % 3 == 0).map(|k| lost(1000 * k + 50, 0, 1)).collect();
        lost_recs.extend((0..n).filter(|k| k % 5 == 0).map(|k| lost(1000 * k + 101, 0, 1)));
        lost_recs.reverse();
        ev.extend(lost_recs);
        let c = convert(&Header { start_ns: 0, ..header() }, &ev);
        let full = n.div_ceil(3);
        let want =
            BTreeMap::from([(BreakReason::RingBufferFull, full), (BreakReason::Unexplained, n - full)]);
        assert_eq!(c.broken_chains_by_reason, want);
    }

    #[test]
    fn events_outside_the_recording_are_left_out_and_counted() {
        // The header starts at 5 and a clean stop ends at 500: an event at 2 (before the start)
        // and one at 10^12 (after the End record; it once made a 1000 s recording of this one)
        // are left out, and counted; the read figures stay those of the span.
        let ev = [
            switch(2, 1, 0, 7),
            switch(100, 0, 0, 5),
            switch(300, 0, 5, 0),
            switch(1_000_000_000_000, 1, 0, 6),
            Event::new(500, 0, Kind::End),
        ];
        let c = convert(&header(), &ev);
        assert_eq!(c.left_out, LeftOut { outside_span: 2, overlapping: 0 });
        assert_eq!(c.events, 4, "every event read is counted, those left out too");
        assert_eq!((c.header.start_ns, c.records.last()), (100, Some(&Record::End { at: 300 })));
        assert!(c.records.iter().all(|r| !matches!(r, Record::Run { task: 6 | 7, .. })));
        assert_eq!(c.left_out.describe(), "2 events outside the recording's span left out");
        // Without the End record (a recording cut short), the end is the last event's.
        let c = convert(&header(), &ev[..4]);
        assert_eq!(c.left_out.outside_span, 1);
        // Nothing left out: nothing said.
        let c = convert(&header(), &ev[1..3]);
        assert_eq!((c.left_out.any(), c.left_out.describe()), (false, String::new()));
    }

    #[test]
    fn a_task_on_two_cpus_at_once_is_cut_to_one_and_counted() {
        // Task 5 switched in on CPU 0 at 100 and on CPU 1 at 150 (damage, or an unlucky mix of lost
        // events), switched out of both at 300: it once read as 200 % of one CPU. Its stretch on
        // CPU 1 is cut to begin where CPU 0's ends, which leaves nothing: left out. A stretch that
        // lasts beyond the other keeps its rest, partial. The idle task (0) runs on both at once.
        let ev = [
            switch(100, 0, 0, 5),
            switch(150, 1, 0, 5),
            switch(300, 0, 5, 0),
            switch(300, 1, 5, 0),
            switch(310, 0, 0, 6),
            switch(320, 1, 0, 6),
            switch(400, 0, 6, 0),
            switch(450, 1, 6, 0),
        ];
        let c = convert(&header(), &ev);
        assert_eq!(c.left_out, LeftOut { outside_span: 0, overlapping: 2 });
        let runs: Vec<(u32, u32, u64, u64, bool)> = c
            .records
            .iter()
            .filter_map(|r| match *r {
                Record::Run { task, cpu, start, end, complete, .. } if task != 0 => {
                    Some((task, cpu, start, end, complete))
                }
                _ => None,
            })
            .collect();
        assert_eq!(runs, [(5, 0, 100, 300, true), (6, 0, 310, 400, true), (6, 1, 400, 450, false)]);
        let idle = c.records.iter().filter(|r| matches!(r, Record::Run { task: 0, .. })).count();
        assert_eq!(idle, 4);
        assert_eq!(
            c.left_out.describe(),
            "2 stretches of a task overlapping its stretch on another CPU cut or left out"
        );
        // The one reader says so, and reads the same records.
        let dir = tempfile::tempdir().unwrap();
        let p = file(dir.path(), "two.klog", &header(), &ev);
        let r = crate::Reader::open(&p).unwrap();
        assert_eq!(r.left_out(), Some(&c.left_out));
        assert_eq!(r.collect::<Result<Vec<_>, _>>().unwrap(), c.records);
    }

    #[test]
    fn a_damaged_recording_is_refused_with_the_file_offset_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let err = |name: &str, h: &Header, ev: &[Event]| {
            let p = file(dir.path(), name, h, ev);
            let e = Log::read(&p).unwrap_err().to_string();
            assert!(e.contains(name), "{e}");
            // The one reader says the same.
            assert_eq!(crate::Reader::open(&p).err().map(|x| x.to_string()), Some(e.clone()));
            e
        };
        // A corrupt CPU number used to size a per-CPU table (102 GB, then an abort).
        let mut bad = switch(200, 0, 5, 0);
        bad.cpu = 0x7fff_ffff;
        let h = header();
        let hlen = serde_json::to_vec(&h).unwrap().len() as u64;
        let e = err("cpu.klog", &h, &[switch(100, 0, 0, 5), bad]);
        let at = 16 + hlen + RECORD_SIZE as u64;
        assert!(e.contains(&format!("byte {at}: CPU 2147483647 in a recording of 2 CPUs")), "{e}");
        let e = err("cpus.klog", &Header { cpus: 0, ..header() }, &[]);
        assert!(e.contains("header says 0 CPUs"), "{e}");
        for hz in [0, crate::MAX_HZ + 1, u32::MAX] {
            let e = err("hz.klog", &Header { hz: Some(hz), ..header() }, &[]);
            assert!(e.contains(&format!("byte 16: header: hz: {hz} is out of range")), "{e}");
        }
        // The file's version and the header's disagree.
        let p = file(dir.path(), "ver.klog", &Header { format_version: 7, ..header() }, &[]);
        let mut bytes = std::fs::read(&p).unwrap();
        bytes[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        std::fs::write(&p, bytes).unwrap();
        let e = Log::read(&p).unwrap_err().to_string();
        assert!(e.contains("ver.klog") && e.contains("header says format version 7, the file 2"), "{e}");
    }
}
