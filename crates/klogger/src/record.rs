//! Recording: loads the BPF programs, drains the per-CPU ring buffers into a log file, stops
//! cleanly on a stop flag (Ctrl-C), a duration, the end of the followed command or a size limit.
//!
//! Per-CPU ring buffers are an `BPF_MAP_TYPE_ARRAY_OF_MAPS` indexed by CPU id whose inner maps are
//! `BPF_MAP_TYPE_RINGBUF`s created here, so CPUs never contend for one buffer's lock and one busy
//! CPU cannot crowd out the others' events. One consumer thread (the caller's) polls them all.

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
use libbpf_rs::{MapCore, MapFlags, MapHandle, MapType, RingBufferBuilder};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use tracing::{debug, info};

use crate::format::{Event, Header, Kind, LogWriter, RECORD_SIZE};
use crate::sys;
use crate::sys::skel::KloggerSkelBuilder;

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

/// One CPU's `struct cpu_state` of the BPF side (src/bpf/klogger.bpf.c).
struct CpuState {
    pending: u64,
    first_ts: u64,
    lost: u64,
    switch_calls: u64,
}

impl CpuState {
    fn from_bytes(v: &[u8]) -> CpuState {
        let w = |i: usize| v.get(i * 8..i * 8 + 8).map_or(0, |b| u64::from_ne_bytes(b.try_into().unwrap()));
        CpuState { pending: w(0), first_ts: w(1), lost: w(2), switch_calls: w(3) }
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
    let bb = opts.buffer_bytes;
    let mut obj = MaybeUninit::uninit();
    let mut open = KloggerSkelBuilder::default().open(&mut obj).context("opening the BPF object")?;
    let filter = !matches!(opts.target, Target::System);
    {
        let ro = open.maps.rodata_data.as_deref_mut().ok_or_else(|| anyhow!("BPF object has no .rodata"))?;
        ro.tick_fn = tick.as_ref().map(|t| t.0).unwrap_or(0);
        ro.filter_on = filter;
        ro.wakeup_bytes = bb as u64 / 2;
    }
    let create_opts = libbpf_rs::libbpf_sys::bpf_map_create_opts {
        sz: std::mem::size_of::<libbpf_rs::libbpf_sys::bpf_map_create_opts>() as _,
        ..Default::default()
    };
    let mut rings = Vec::with_capacity(ncpu);
    for _ in 0..ncpu {
        rings.push(
            MapHandle::create(MapType::RingBuf, Some("klogger_rb"), 0, 0, bb, &create_opts)
                .with_context(|| format!("creating a {bb}-byte ring buffer"))?,
        );
    }
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
    let mut pids = Vec::new();
    match &opts.target {
        Target::System => {}
        Target::Pids(ps) => {
            for &p in ps {
                if !Path::new(&format!("/proc/{p}")).exists() {
                    bail!("--pid {p}: no such process");
                }
                pids.push(p);
            }
        }
        Target::Command(_) => pids.push(child.as_ref().map(|c| c.pid.as_raw() as u32).unwrap_or(0)),
    }
    let mut tids: Vec<u32> = Vec::new();
    for &p in &pids {
        tids.extend(process_tree(p));
    }
    for t in &tids {
        skel.maps
            .tracked
            .update(&t.to_ne_bytes(), &[1u8], MapFlags::ANY)
            .context("filling the followed-task map")?;
    }
    let progs = [
        ("sched:sched_switch", &skel.progs.on_switch),
        ("sched:sched_wakeup", &skel.progs.on_wakeup),
        ("sched:sched_wakeup_new", &skel.progs.on_wakeup_new),
        ("sched:sched_process_fork", &skel.progs.on_fork),
        ("sched:sched_process_exec", &skel.progs.on_exec),
        ("sched:sched_process_exit", &skel.progs.on_exit),
        ("timer:hrtimer_expire_entry", &skel.progs.on_hrtimer),
        ("irq:irq_handler_entry", &skel.progs.on_irq_entry),
        ("irq:irq_handler_exit", &skel.progs.on_irq_exit),
        ("irq:softirq_entry", &skel.progs.on_softirq_entry),
        ("irq:softirq_exit", &skel.progs.on_softirq_exit),
    ];
    let stats_fd = match opts.bpf_stats {
        true => Some(sys::enable_bpf_stats().context("enabling BPF run-time statistics")?),
        false => None,
    };
    let mut links = Vec::new();
    for (tp, p) in progs {
        links.push(
            p.attach().with_context(|| format!("attaching to tracepoint {tp}: does this kernel have it?"))?,
        );
    }

    let header = Header {
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
        pids: pids.clone(),
        command: match &opts.target {
            Target::Command(a) => a.clone(),
            _ => vec![],
        },
        tick_hook: tick.as_ref().map(|t| format!("timer:hrtimer_expire_entry function={}", t.1)),
        buffer_bytes: bb as u64,
        ..Header::new(&kernel_release(), ncpu as u32, kernel_hz())
    };
    let file = File::create(&opts.output).with_context(|| format!("creating {}", opts.output.display()))?;
    let writer = LogWriter::new(BufWriter::with_capacity(1 << 20, file), &header)
        .with_context(|| format!("writing the header of {}", opts.output.display()))?;
    let writer = Rc::new(std::cell::RefCell::new(writer));
    let io_error: Rc<std::cell::RefCell<Option<std::io::Error>>> = Default::default();
    let lost_records: Rc<std::cell::Cell<u64>> = Default::default();
    let lost_type = Kind::Lost.to_u16();
    let mut rbb = RingBufferBuilder::new();
    for ring in &rings {
        let w = writer.clone();
        let err = io_error.clone();
        let lost = lost_records.clone();
        rbb.add(ring, move |data: &[u8]| {
            if data.len() < RECORD_SIZE {
                return 0;
            }
            if u16::from_le_bytes([data[12], data[13]]) == lost_type {
                lost.set(lost.get() + 1);
            }
            if let Err(e) = w.borrow_mut().write_raw(&data[..RECORD_SIZE]) {
                *err.borrow_mut() = Some(e);
                return -1;
            }
            0
        })?;
    }
    let rb = rbb.build().context("setting up ring buffer polling")?;

    if let Some(r) = &opts.ready {
        r.store(true, Ordering::SeqCst);
    }
    if let Some(c) = child.as_deref_mut() {
        c.release();
    }
    let started = Instant::now();
    let cpu0 = sys::thread_cpu_ns();
    let mut last_progress = Instant::now();
    let header_bytes = 16 + serde_json::to_vec(&header)?.len() as u64;
    let stop = loop {
        // Records are submitted without wake-ups (see the BPF side): poll times out, then drain.
        let mut r = rb.poll(Duration::from_millis(100));
        if r.is_ok() {
            r = rb.consume();
        }
        if let Some(e) = io_error.borrow_mut().take() {
            return Err(e).with_context(|| format!("writing {}", opts.output.display()));
        }
        if let Err(e) = r {
            if e.kind() != libbpf_rs::ErrorKind::Interrupted {
                return Err(e).context("polling the ring buffers");
            }
        }
        writer.borrow_mut().flush()?;
        if opts.stop.load(Ordering::SeqCst) {
            break StopReason::Interrupted;
        }
        if let Some(c) = child.as_deref_mut() {
            if let Some(code) = c.try_wait() {
                break StopReason::CommandExited(code);
            }
        }
        if let Some(d) = opts.duration {
            if started.elapsed() >= d {
                break StopReason::Duration;
            }
        }
        let bytes = header_bytes + writer.borrow().records() * RECORD_SIZE as u64;
        if bytes >= opts.max_bytes {
            break StopReason::SizeLimit;
        }
        if opts.progress && last_progress.elapsed() >= Duration::from_secs(2) {
            last_progress = Instant::now();
            let s = started.elapsed().as_secs_f64();
            let n = writer.borrow().records();
            info!("{s:.1} s, {n} events ({:.0}/s), {:.1} MiB", n as f64 / s, bytes as f64 / (1 << 20) as f64);
        }
    };
    // Detach first so no new events arrive, then drain what is left.
    drop(links);
    let _ = rb.consume();
    let consumer_cpu_ns = sys::thread_cpu_ns() - cpu0;
    // Each program with the record type it writes (a hrtimer program writes ticks too).
    let all = [
        (&skel.progs.on_switch, Kind::Switch),
        (&skel.progs.on_wakeup, Kind::Wakeup),
        (&skel.progs.on_wakeup_new, Kind::WakeupNew),
        (&skel.progs.on_fork, Kind::Fork),
        (&skel.progs.on_exec, Kind::Exec),
        (&skel.progs.on_exit, Kind::Exit),
        (&skel.progs.on_hrtimer, Kind::Hrtimer),
        (&skel.progs.on_irq_entry, Kind::IrqEntry),
        (&skel.progs.on_irq_exit, Kind::IrqExit),
        (&skel.progs.on_softirq_entry, Kind::SoftirqEntry),
        (&skel.progs.on_softirq_exit, Kind::SoftirqExit),
    ];
    let prog_stats: Vec<(Kind, (u64, u64, u64))> =
        all.iter().filter_map(|(p, k)| Some((*k, sys::prog_run_stats(p.as_fd())?))).collect();
    let bpf_run_ns = stats_fd.map(|_fd| prog_stats.iter().fold((0, 0), |a, (_, b)| (a.0 + b.0, a.1 + b.1)));
    let stop = match (stop, child) {
        (StopReason::CommandExited(c), _) => StopReason::CommandExited(c),
        (s, Some(c)) => {
            c.terminate();
            s
        }
        (s, None) => s,
    };
    let states: Vec<CpuState> = skel
        .maps
        .state
        .lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY)
        .context("reading the per-CPU counters")?
        .unwrap_or_default()
        .iter()
        .map(|v| CpuState::from_bytes(v))
        .collect();
    let switch_calls: u64 = states.iter().map(|s| s.switch_calls).sum();
    let lost_total: u64 = states.iter().map(|s| s.lost).sum();
    let end_ts = sys::monotonic_ns();
    let mut w = writer.borrow_mut();
    // Lost records the BPF side wrote itself (room came back) are records too: count events only.
    let events = w.records() - lost_records.get();
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
    w.flush().with_context(|| format!("writing {}", opts.output.display()))?;
    let bytes = header_bytes + w.records() * RECORD_SIZE as u64;
    Ok(RecordStats {
        events,
        lost: lost_total,
        switch_calls,
        bpf_run_ns,
        consumer_cpu_ns,
        bytes,
        duration_ns: started.elapsed().as_nanos() as u64,
        stop,
        child_pid: pids.first().copied().filter(|_| header.target == "command"),
    })
}
