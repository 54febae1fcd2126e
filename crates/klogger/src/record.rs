//! Recording: loads the BPF programs, drains the per-CPU ring buffers into a log file, stops
//! cleanly on a stop flag (Ctrl-C), a duration, the end of the followed command or a size limit.
//!
//! Per-CPU ring buffers are an `BPF_MAP_TYPE_ARRAY_OF_MAPS` indexed by CPU id whose inner maps are
//! `BPF_MAP_TYPE_RINGBUF`s created here, so CPUs never contend for one buffer's lock and one busy
//! CPU cannot crowd out the others' events. One consumer thread (the caller's) polls them all.

use std::cell::{Cell, RefCell};
use std::ffi::CString;
use std::fs::File;
use std::io::{BufRead, BufWriter, Read};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{
    Link, MapCore, MapFlags, MapHandle, MapType, OpenObject, ProgramMut, RingBuffer, RingBufferBuilder,
};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use tracing::{debug, info};

use crate::format::{Event, Header, Kind, LogWriter, RECORD_SIZE};
use crate::sys;
use crate::sys::skel::{KloggerSkel, KloggerSkelBuilder};

/// What to record.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// Every task on every CPU.
    System,
    /// These processes, all their threads and every task they create from now on.
    Pids(Vec<u32>),
    /// Start this command (argv) once recording runs, follow its process tree, stop when it exits.
    Command(Vec<String>),
}

/// Options of [`record`].
#[derive(Clone, Debug)]
pub struct RecordOptions {
    /// Output file.
    pub output: PathBuf,
    /// What to record.
    pub target: Target,
    /// Stop after this long (None: only on the stop flag, the command's exit or the size limit).
    pub duration: Option<Duration>,
    /// Bytes of each per-CPU ring buffer (power of two, at least one page).
    pub buffer_bytes: u32,
    /// Stop when the file reaches this many bytes.
    pub max_bytes: u64,
    /// Set by anyone (a Ctrl-C handler, another thread) to stop recording.
    pub stop: Arc<AtomicBool>,
    /// Set by [`record`] once the programs are attached (and before a command is started).
    pub ready: Option<Arc<AtomicBool>>,
    /// Report progress every 2 s, as `info` events of `tracing` (the `klogger` binary prints
    /// them on stderr unless `-q`).
    pub progress: bool,
    /// Have the kernel time every BPF program run while recording (BPF_ENABLE_STATS, undone
    /// when recording stops) and report it in [`RecordStats::bpf_run_ns`].
    pub bpf_stats: bool,
}

/// Why recording stopped.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The duration limit was reached.
    Duration,
    /// The stop flag was set (Ctrl-C).
    Interrupted,
    /// The followed command exited with this wait status code (or signal as 128+n).
    CommandExited(i32),
    /// The size limit was reached.
    SizeLimit,
}

/// Summary of one recording.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RecordStats {
    /// Event records written (excluding the lost and end records).
    pub events: u64,
    /// Events lost in the kernel because a ring buffer was full.
    pub lost: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Times the sched_switch program ran (system-wide this equals the switch records written
    /// unless some were lost: a check that no switch was dropped between tracepoint and file).
    pub switch_calls: u64,
    /// Total time spent in the BPF programs and their number of runs, if `bpf_stats` was set.
    pub bpf_run_ns: Option<(u64, u64)>,
    /// CPU time of the consumer (the thread that drains the ring buffers and writes the file).
    pub consumer_cpu_ns: u64,
    /// Wall time spent recording (ns).
    pub duration_ns: u64,
    /// Why it stopped.
    pub stop: StopReason,
    /// Process id of the started command, if any.
    pub child_pid: Option<u32>,
}

/// Checks what recording needs before touching BPF, with an error that says what to do.
pub fn preflight() -> Result<()> {
    if !sys::is_root() {
        let caps = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("CapEff:"))
                    .and_then(|l| u64::from_str_radix(l[7..].trim(), 16).ok())
            })
            .unwrap_or(0);
        const CAP_SYS_ADMIN: u64 = 21;
        const CAP_PERFMON: u64 = 38;
        const CAP_BPF: u64 = 39;
        let has = |c: u64| caps & (1 << c) != 0;
        if !(has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON))) {
            bail!(
                "klogger record needs root, or CAP_BPF and CAP_PERFMON, to load BPF programs \
                 (run it with sudo, or `setcap cap_bpf,cap_perfmon+ep $(which klogger)`)"
            );
        }
    }
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        bail!(
            "this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): klogger needs a kernel \
             built with CONFIG_DEBUG_INFO_BTF=y"
        );
    }
    Ok(())
}

/// Reads CONFIG_HZ of the running kernel from /boot/config-$(uname -r) or /proc/config.gz.
pub fn kernel_hz() -> Option<u32> {
    let parse = |text: &str| {
        text.lines().find_map(|l| l.strip_prefix("CONFIG_HZ=")).and_then(|v| v.trim().parse().ok())
    };
    let release = kernel_release();
    if let Ok(t) = std::fs::read_to_string(format!("/boot/config-{release}")) {
        if let Some(h) = parse(&t) {
            return Some(h);
        }
    }
    let f = File::open("/proc/config.gz").ok()?;
    let mut s = String::new();
    flate2::read::GzDecoder::new(f).read_to_string(&mut s).ok()?;
    parse(&s)
}

/// `uname -r`.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Finds the tick hrtimer's callback in /proc/kallsyms: (address, name).
/// `tick_nohz_handler` on Linux >= 6.9, `tick_sched_timer` before.
pub fn tick_function() -> Option<(u64, String)> {
    let f = File::open("/proc/kallsyms").ok()?;
    let mut found = None;
    for line in std::io::BufReader::new(f).lines().map_while(|l| l.ok()) {
        let mut it = line.split_whitespace();
        let (Some(addr), Some(_t), Some(name)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if it.next().is_some() {
            continue; // a module symbol
        }
        if name == "tick_nohz_handler" || name == "tick_sched_timer" {
            let a = u64::from_str_radix(addr, 16).ok()?;
            if a != 0 {
                found = Some((a, name.to_string()));
                if name == "tick_nohz_handler" {
                    break;
                }
            }
        }
    }
    found
}

/// Thread ids of process `pid` (from /proc/PID/task).
fn threads_of(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default()
}

/// `pid`, its threads and all its descendants' threads, from /proc.
fn process_tree(pid: u32) -> Vec<u32> {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    if let Ok(d) = std::fs::read_dir("/proc") {
        for e in d.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) {
                // Fields after the command name, which is in parentheses and may hold spaces.
                if let Some(rest) = stat.rsplit_once(')').map(|x| x.1) {
                    if let Some(pp) = rest.split_whitespace().nth(1).and_then(|x| x.parse().ok()) {
                        parent_of.push((p, pp));
                    }
                }
            }
        }
    }
    let mut procs = vec![pid];
    let mut i = 0;
    while i < procs.len() {
        let cur = procs[i];
        for &(p, pp) in &parent_of {
            if pp == cur && !procs.contains(&p) {
                procs.push(p);
            }
        }
        i += 1;
    }
    let mut tids: Vec<u32> = procs.iter().flat_map(|&p| threads_of(p)).collect();
    if tids.is_empty() {
        tids.push(pid);
    }
    tids
}

/// A child forked and held before exec until [`Child::release`].
struct Child {
    pid: Pid,
    /// The pipe's write end the child waits on; `None` once released.
    go: Option<OwnedFd>,
}

impl Child {
    fn spawn(argv: &[String]) -> Result<Child> {
        if argv.is_empty() {
            bail!("no command given after --");
        }
        let cargs: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_str()).context("command argument contains a NUL byte"))
            .collect::<Result<_>>()?;
        let (pid, go) = sys::spawn_held(&cargs).context("starting the command (pipe2, fork)")?;
        debug!(pid = pid.as_raw(), "command forked, held before exec");
        Ok(Child { pid, go: Some(go) })
    }

    fn release(&mut self) {
        if let Some(go) = self.go.take() {
            let _ = nix::unistd::write(&go, &[1u8]);
        }
    }

    /// Exit code if it has exited (128+signal if killed); reaps it.
    fn try_wait(&mut self) -> Option<i32> {
        sys::wait_child(self.pid, false)
    }

    /// SIGTERM, then SIGKILL after 2 s; reaps the child.
    fn terminate(&mut self) -> i32 {
        if let Some(c) = self.try_wait() {
            return c;
        }
        self.go = None;
        let _ = kill(self.pid, Signal::SIGTERM);
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(2) {
            if let Some(c) = self.try_wait() {
                return c;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = kill(self.pid, Signal::SIGKILL);
        sys::wait_child(self.pid, true);
        128 + Signal::SIGKILL as i32
    }
}

/// One CPU's `struct cpu_state` of the BPF side (src/bpf/klogger.bpf.c): its counters and the
/// records still in its batch (a batch goes into the ring buffer only once it is full).
struct CpuState {
    pending: u64,
    first_ts: u64,
    lost: u64,
    switch_calls: u64,
    /// The records of the batch not yet in the ring buffer, RECORD_SIZE bytes each.
    staged: Vec<u8>,
}

impl CpuState {
    /// Bytes before the batch: four u64 counters, then `n` and `busy` (u32 each).
    const BATCH_OFFSET: usize = 40;

    fn from_bytes(v: &[u8]) -> CpuState {
        let w = |i: usize| v.get(i * 8..i * 8 + 8).map_or(0, |b| u64::from_ne_bytes(b.try_into().unwrap()));
        let n = v.get(32..36).map_or(0, |b| u32::from_ne_bytes(b.try_into().unwrap()) as usize);
        // The batch's length follows from the value's size, so it is not written twice; `n` is
        // always below it, but is bounded here all the same.
        let slots = v.len().saturating_sub(Self::BATCH_OFFSET) / RECORD_SIZE;
        let batch = &v[Self::BATCH_OFFSET.min(v.len())..];
        CpuState {
            pending: w(0),
            first_ts: w(1),
            lost: w(2),
            switch_calls: w(3),
            staged: batch[..n.min(slots) * RECORD_SIZE].to_vec(),
        }
    }
}

/// Records until a stop condition holds; see the module documentation.
pub fn record(opts: &RecordOptions) -> Result<RecordStats> {
    preflight()?;
    let bb = opts.buffer_bytes;
    if !bb.is_power_of_two() || bb < 4096 {
        bail!("--buffer must be a power of two of at least 4 KiB, got {bb} bytes");
    }
    let ncpu = libbpf_rs::num_possible_cpus().context("reading the number of possible CPUs")?;
    let tick = tick_function();
    match &tick {
        Some((addr, name)) => debug!("tick hrtimer callback {name} at {addr:#x}"),
        None => debug!("no tick hrtimer callback in /proc/kallsyms: no tick records"),
    }

    // Start the command first (held before exec) so its pid can be tracked from its first event.
    let mut child = match &opts.target {
        Target::Command(argv) => Some(Child::spawn(argv)?),
        _ => None,
    };
    let result = record_inner(opts, ncpu, tick, child.as_mut());
    if result.is_err() {
        if let Some(c) = child.as_mut() {
            c.terminate();
        }
    }
    result
}

fn record_inner(
    opts: &RecordOptions,
    ncpu: usize,
    tick: Option<(u64, String)>,
    mut child: Option<&mut Child>,
) -> Result<RecordStats> {
    let mut obj = MaybeUninit::uninit();
    let (skel, rings) = load(&mut obj, opts, ncpu, tick.as_ref())?;
    let pids = follow(&skel, &opts.target, child.as_deref())?;
    let stats_fd = match opts.bpf_stats {
        true => Some(sys::enable_bpf_stats().context("enabling BPF run-time statistics")?),
        false => None,
    };
    // The start is taken before the programs are attached, so that every event lies after it (the
    // trace reader leaves out, and counts, an event before a recording's start).
    let header = header(opts, ncpu, tick.as_ref(), &pids);
    let links = attach(&skel)?;
    let sink = Sink::create(&opts.output, &header)?;
    let rb = sink.ring_buffer(&rings)?;

    if let Some(r) = &opts.ready {
        r.store(true, Ordering::SeqCst);
    }
    if let Some(c) = child.as_deref_mut() {
        c.release();
    }
    let started = Instant::now();
    let cpu0 = sys::thread_cpu_ns();
    let stop = poll_until_stop(opts, &rb, &sink, child.as_deref_mut(), started)?;
    // Detach first so no new events arrive, then drain what is left.
    drop(links);
    let _ = rb.consume();
    let consumer_cpu_ns = sys::thread_cpu_ns() - cpu0;
    debug!(?stop, "programs detached, ring buffers drained");
    let prog_stats: Vec<(Kind, (u64, u64, u64))> =
        programs(&skel).iter().filter_map(|(_, p, k)| Some((*k, sys::prog_run_stats(p.as_fd())?))).collect();
    let bpf_run_ns = stats_fd.map(|_fd| prog_stats.iter().fold((0, 0), |a, (_, b)| (a.0 + b.0, a.1 + b.1)));
    let stop = match (stop, child) {
        (StopReason::CommandExited(c), _) => StopReason::CommandExited(c),
        (s, Some(c)) => {
            c.terminate();
            s
        }
        (s, None) => s,
    };
    let states = cpu_states(&skel)?;
    let events = sink.write_trailer(&states, &prog_stats, &opts.output)?;
    Ok(RecordStats {
        events,
        lost: states.iter().map(|s| s.lost).sum(),
        switch_calls: states.iter().map(|s| s.switch_calls).sum(),
        bpf_run_ns,
        consumer_cpu_ns,
        bytes: sink.bytes(),
        duration_ns: started.elapsed().as_nanos() as u64,
        stop,
        child_pid: pids.first().copied().filter(|_| matches!(opts.target, Target::Command(_))),
    })
}

/// Opens the BPF object, configures it (tick callback, filter, wake-up threshold), creates one
/// ring buffer of `opts.buffer_bytes` per CPU, loads the programs and installs the ring buffers.
/// The ring buffers are returned with the skeleton: they must stay open while they are polled.
fn load<'obj>(
    obj: &'obj mut MaybeUninit<OpenObject>,
    opts: &RecordOptions,
    ncpu: usize,
    tick: Option<&(u64, String)>,
) -> Result<(KloggerSkel<'obj>, Vec<MapHandle>)> {
    let bb = opts.buffer_bytes;
    let mut open = KloggerSkelBuilder::default().open(obj).context("opening the BPF object")?;
    {
        let ro = open.maps.rodata_data.as_deref_mut().ok_or_else(|| anyhow!("BPF object has no .rodata"))?;
        ro.tick_fn = tick.map_or(0, |t| t.0);
        ro.filter_on = !matches!(opts.target, Target::System);
        ro.wakeup_bytes = bb as u64 / 2;
    }
    let create_opts = libbpf_rs::libbpf_sys::bpf_map_create_opts {
        sz: std::mem::size_of::<libbpf_rs::libbpf_sys::bpf_map_create_opts>() as _,
        ..Default::default()
    };
    let rings = (0..ncpu)
        .map(|_| {
            MapHandle::create(MapType::RingBuf, Some("klogger_rb"), 0, 0, bb, &create_opts)
                .with_context(|| format!("creating a {bb}-byte ring buffer"))
        })
        .collect::<Result<Vec<_>>>()?;
    open.maps.rbs.set_max_entries(ncpu as u32).context("sizing the ring buffer array")?;
    open.maps.rbs.set_inner_map_fd(rings[0].as_fd()).context("setting the inner ring buffer")?;
    let skel = open.load().context(
        "loading the BPF programs failed (see libbpf's messages above): the kernel may lack BTF, \
         one of the tracepoints sched_switch, sched_wakeup, sched_wakeup_new, \
         sched_process_fork/exec/exit, hrtimer_expire_entry, irq_handler_entry/exit, \
         softirq_entry/exit, or support for BPF ring buffers",
    )?;
    for (cpu, ring) in rings.iter().enumerate() {
        let fd = ring.as_fd().as_raw_fd() as u32;
        skel.maps
            .rbs
            .update(&(cpu as u32).to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)
            .with_context(|| format!("installing the ring buffer of CPU {cpu}"))?;
    }
    debug!("BPF programs loaded; {ncpu} ring buffers of {bb} bytes");
    Ok((skel, rings))
}

/// Fills the followed-task map with every thread of the processes followed (`--pid`, each of
/// which must exist, or the started command) and of their descendants; returns those processes.
fn follow(skel: &KloggerSkel<'_>, target: &Target, child: Option<&Child>) -> Result<Vec<u32>> {
    let pids = match target {
        Target::System => vec![],
        Target::Pids(ps) => {
            if let Some(p) = ps.iter().find(|p| !Path::new(&format!("/proc/{p}")).exists()) {
                bail!("--pid {p}: no such process");
            }
            ps.clone()
        }
        Target::Command(_) => vec![child.map_or(0, |c| c.pid.as_raw() as u32)],
    };
    let tids: Vec<u32> = pids.iter().flat_map(|&p| process_tree(p)).collect();
    for t in &tids {
        skel.maps
            .tracked
            .update(&t.to_ne_bytes(), &[1u8], MapFlags::ANY)
            .context("filling the followed-task map")?;
    }
    debug!("following processes {pids:?}: {} threads", tids.len());
    Ok(pids)
}

/// Each program with the tracepoint it is attached to and the record type it writes (a hrtimer
/// program writes ticks too).
fn programs<'a, 'obj>(skel: &'a KloggerSkel<'obj>) -> [(&'static str, &'a ProgramMut<'obj>, Kind); 11] {
    let p = &skel.progs;
    [
        ("sched:sched_switch", &p.on_switch, Kind::Switch),
        ("sched:sched_wakeup", &p.on_wakeup, Kind::Wakeup),
        ("sched:sched_wakeup_new", &p.on_wakeup_new, Kind::WakeupNew),
        ("sched:sched_process_fork", &p.on_fork, Kind::Fork),
        ("sched:sched_process_exec", &p.on_exec, Kind::Exec),
        ("sched:sched_process_exit", &p.on_exit, Kind::Exit),
        ("timer:hrtimer_expire_entry", &p.on_hrtimer, Kind::Hrtimer),
        ("irq:irq_handler_entry", &p.on_irq_entry, Kind::IrqEntry),
        ("irq:irq_handler_exit", &p.on_irq_exit, Kind::IrqExit),
        ("irq:softirq_entry", &p.on_softirq_entry, Kind::SoftirqEntry),
        ("irq:softirq_exit", &p.on_softirq_exit, Kind::SoftirqExit),
    ]
}

/// Attaches every program; they stay attached until the links are dropped.
fn attach(skel: &KloggerSkel<'_>) -> Result<Vec<Link>> {
    let links = programs(skel)
        .iter()
        .map(|(tp, p, _)| {
            p.attach().with_context(|| format!("attaching to tracepoint {tp}: does this kernel have it?"))
        })
        .collect::<Result<Vec<_>>>()?;
    debug!("{} programs attached", links.len());
    Ok(links)
}

/// The log's header for this recording, its start time taken now.
fn header(opts: &RecordOptions, ncpu: usize, tick: Option<&(u64, String)>, pids: &[u32]) -> Header {
    Header {
        start_ns: sys::monotonic_ns(),
        start_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0),
        target: match opts.target {
            Target::System => "system",
            Target::Pids(_) => "pid",
            Target::Command(_) => "command",
        }
        .into(),
        pids: pids.to_vec(),
        command: match &opts.target {
            Target::Command(a) => a.clone(),
            _ => vec![],
        },
        tick_hook: tick.map(|t| format!("timer:hrtimer_expire_entry function={}", t.1)),
        buffer_bytes: opts.buffer_bytes as u64,
        ..Header::new(&kernel_release(), ncpu as u32, kernel_hz())
    }
}

/// Drains the ring buffers every 100 ms into the file until a stop condition holds; reports
/// progress every 2 s if asked.
fn poll_until_stop(
    opts: &RecordOptions,
    rb: &RingBuffer<'_>,
    sink: &Sink,
    mut child: Option<&mut Child>,
    started: Instant,
) -> Result<StopReason> {
    let mut last_progress = Instant::now();
    loop {
        // Records are submitted without wake-ups (see the BPF side): poll times out, then drain.
        let mut r = rb.poll(Duration::from_millis(100));
        if r.is_ok() {
            r = rb.consume();
        }
        if let Some(e) = sink.io_error.borrow_mut().take() {
            return Err(e).with_context(|| format!("writing {}", opts.output.display()));
        }
        if let Err(e) = r {
            if e.kind() != libbpf_rs::ErrorKind::Interrupted {
                return Err(e).context("polling the ring buffers");
            }
        }
        sink.writer.borrow_mut().flush()?;
        let bytes = sink.bytes();
        if let Some(stop) = stop_reason(opts, child.as_deref_mut(), started, bytes) {
            return Ok(stop);
        }
        if opts.progress && last_progress.elapsed() >= Duration::from_secs(2) {
            last_progress = Instant::now();
            let s = started.elapsed().as_secs_f64();
            let n = sink.writer.borrow().records();
            info!("{s:.1} s, {n} events ({:.0}/s), {:.1} MiB", n as f64 / s, bytes as f64 / (1 << 20) as f64);
        }
    }
}

/// The first stop condition that holds, in this order: the stop flag, the command's exit, the
/// duration, the size limit (the file has `bytes`).
fn stop_reason(
    opts: &RecordOptions,
    child: Option<&mut Child>,
    started: Instant,
    bytes: u64,
) -> Option<StopReason> {
    if opts.stop.load(Ordering::SeqCst) {
        return Some(StopReason::Interrupted);
    }
    if let Some(code) = child.and_then(|c| c.try_wait()) {
        return Some(StopReason::CommandExited(code));
    }
    if opts.duration.is_some_and(|d| started.elapsed() >= d) {
        return Some(StopReason::Duration);
    }
    (bytes >= opts.max_bytes).then_some(StopReason::SizeLimit)
}

/// Every CPU's counters of the BPF side.
fn cpu_states(skel: &KloggerSkel<'_>) -> Result<Vec<CpuState>> {
    Ok(skel
        .maps
        .state
        .lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY)
        .context("reading the per-CPU counters")?
        .unwrap_or_default()
        .iter()
        .map(|v| CpuState::from_bytes(v))
        .collect())
}

/// The log file being written, shared with the ring buffers' callbacks (which run on this
/// thread, inside `poll` and `consume`).
struct Sink {
    writer: Rc<RefCell<LogWriter<BufWriter<File>>>>,
    /// The first write error of a callback (which can only return a code to libbpf).
    io_error: Rc<RefCell<Option<std::io::Error>>>,
    /// Lost records the BPF side wrote itself (when a full ring buffer had room again).
    lost_records: Rc<Cell<u64>>,
    /// Bytes of the file's header.
    header_bytes: u64,
}

impl Sink {
    fn create(output: &Path, header: &Header) -> Result<Sink> {
        let file = File::create(output).with_context(|| format!("creating {}", output.display()))?;
        let writer = LogWriter::new(BufWriter::with_capacity(1 << 20, file), header)
            .with_context(|| format!("writing the header of {}", output.display()))?;
        Ok(Sink {
            writer: Rc::new(RefCell::new(writer)),
            io_error: Default::default(),
            lost_records: Default::default(),
            header_bytes: 16 + serde_json::to_vec(header)?.len() as u64,
        })
    }

    /// Bytes in the file so far.
    fn bytes(&self) -> u64 {
        self.header_bytes + self.writer.borrow().records() * RECORD_SIZE as u64
    }

    /// The consumer of every CPU's ring buffer: each record is appended to the file as it is (a
    /// ring buffer's entry is one record or a batch of them).
    fn ring_buffer(&self, rings: &[MapHandle]) -> Result<RingBuffer<'static>> {
        let lost_type = Kind::Lost.to_u16();
        let mut rbb = RingBufferBuilder::new();
        for ring in rings {
            let w = self.writer.clone();
            let err = self.io_error.clone();
            let lost = self.lost_records.clone();
            rbb.add(ring, move |data: &[u8]| {
                // One record, or a whole batch of them (see the BPF side).
                let mut w = w.borrow_mut();
                for rec in data.chunks_exact(RECORD_SIZE) {
                    if u16::from_le_bytes([rec[12], rec[13]]) == lost_type {
                        lost.set(lost.get() + 1);
                    }
                    if let Err(e) = w.write_raw(rec) {
                        *err.borrow_mut() = Some(e);
                        return -1;
                    }
                }
                0
            })?;
        }
        rbb.build().context("setting up ring buffer polling")
    }

    /// Ends the file: the records left in each CPU's batch, a lost record for each CPU whose
    /// losses no later event reported, a missed record for each program the kernel skipped runs
    /// of, and the end record. Returns the events recorded (records less the lost records the BPF
    /// side wrote).
    fn write_trailer(
        &self,
        states: &[CpuState],
        prog_stats: &[(Kind, (u64, u64, u64))],
        output: &Path,
    ) -> Result<u64> {
        let end_ts = sys::monotonic_ns();
        let mut w = self.writer.borrow_mut();
        // What each CPU's last batch held when the programs were detached.
        for st in states {
            for rec in st.staged.chunks_exact(RECORD_SIZE) {
                w.write_raw(rec)?;
            }
        }
        // Lost records the BPF side wrote itself (room came back) are records too: count events only.
        let events = w.records() - self.lost_records.get();
        // Losses no event came after to report them: written here the same way.
        for (cpu, st) in states.iter().enumerate().filter(|(_, s)| s.pending > 0) {
            let mut e = Event::new(st.first_ts, cpu as u32, Kind::Lost);
            e.arg = st.pending;
            w.write(&e)?;
        }
        for (kind, (_, _, misses)) in prog_stats.iter().filter(|(_, s)| s.2 > 0) {
            let mut e = Event::new(end_ts, 0, Kind::Missed);
            e.flags = kind.to_u16();
            e.arg = *misses;
            w.write(&e)?;
        }
        let mut e = Event::new(end_ts, 0, Kind::End);
        e.arg = events;
        w.write(&e)?;
        w.flush().with_context(|| format!("writing {}", output.display()))?;
        Ok(events)
    }
}
