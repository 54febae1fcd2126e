//! Thin, explained wrappers over the Linux calls Hourglass needs: scheduling classes and nice
//! levels, `SCHED_DEADLINE` reservations (`sched_setattr`), CPU affinity, `mlockall`, and the RT
//! throttling settings. Every error says what the kernel refused and what to do about it.

use std::io;

/// `SCHED_DEADLINE` (not exported by every libc version).
pub const SCHED_DEADLINE: u32 = 6;
/// `SCHED_FLAG_RECLAIM`: let a deadline task reclaim unused bandwidth (GRUB): a soft reservation.
pub const SCHED_FLAG_RECLAIM: u64 = 0x02;

/// Priorities of appendix A, mapped to today's Linux.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Priority {
    /// `SCHED_IDLE`.
    Idle,
    /// `SCHED_OTHER`, nice +10.
    Low,
    /// `SCHED_OTHER`, nice 0 (the default).
    Normal,
    /// `SCHED_OTHER`, nice -10.
    High,
    /// `SCHED_OTHER`, nice -20.
    Highest,
    /// `SCHED_FIFO` 20.
    RtLow,
    /// `SCHED_FIFO` 50.
    RtMed,
    /// `SCHED_FIFO` 80 (the priority cyclictest comparisons use).
    RtHigh,
    /// `SCHED_FIFO` at this priority, 1..=98 (scenario mode: fixed-priority policies).
    Fifo(u8),
    /// `SCHED_OTHER` at this nice level, -20..=19 (scenario mode: shares under fair policies).
    Nice(i8),
    /// `SCHED_RR` at this priority, 1..=98 (scenario mode: policy `rr`).
    Rr(u8),
}

/// The `SCHED_FIFO` priority of the watchdog: above every workload priority.
pub const WATCHDOG_FIFO: i32 = 99;

impl Priority {
    /// Parses an appendix-A priority name (case-insensitive).
    pub fn parse(s: &str) -> Option<Priority> {
        Some(match s.to_ascii_uppercase().as_str() {
            "IDLE" => Priority::Idle,
            "LOW" => Priority::Low,
            "NORMAL" => Priority::Normal,
            "HIGH" => Priority::High,
            "HIGHEST" => Priority::Highest,
            "RTLOW" => Priority::RtLow,
            "RTMED" => Priority::RtMed,
            "RTHIGH" => Priority::RtHigh,
            _ => return None,
        })
    }

    /// The appendix-A name (`FIFO n` / `NICE n` for scenario-mode levels).
    pub fn name(self) -> String {
        match self {
            Priority::Fifo(n) => format!("FIFO {n}"),
            Priority::Nice(n) => format!("NICE {n}"),
            Priority::Rr(n) => format!("RR {n}"),
            p => p.base_name().to_string(),
        }
    }

    fn base_name(self) -> &'static str {
        match self {
            Priority::Fifo(_) | Priority::Nice(_) | Priority::Rr(_) => "",
            Priority::Idle => "IDLE",
            Priority::Low => "LOW",
            Priority::Normal => "NORMAL",
            Priority::High => "HIGH",
            Priority::Highest => "HIGHEST",
            Priority::RtLow => "RTLOW",
            Priority::RtMed => "RTMED",
            Priority::RtHigh => "RTHIGH",
        }
    }

    /// True for the `SCHED_FIFO` and `SCHED_RR` levels.
    pub fn is_rt(self) -> bool {
        matches!(
            self,
            Priority::RtLow | Priority::RtMed | Priority::RtHigh | Priority::Fifo(_) | Priority::Rr(_)
        )
    }

    /// The Linux policy this maps to, as text (`SCHED_FIFO 80`, `SCHED_OTHER nice -10`).
    pub fn describe(self) -> String {
        match self {
            Priority::Idle => "SCHED_IDLE".into(),
            Priority::Rr(_) => format!("SCHED_RR {}", self.fifo()),
            p if p.is_rt() => format!("SCHED_FIFO {}", p.fifo()),
            p => format!("SCHED_OTHER nice {}", p.nice()),
        }
    }

    fn fifo(self) -> i32 {
        match self {
            Priority::RtLow => 20,
            Priority::RtMed => 50,
            Priority::RtHigh => 80,
            Priority::Fifo(n) | Priority::Rr(n) => n.clamp(1, 98) as i32,
            _ => 0,
        }
    }

    fn nice(self) -> i32 {
        match self {
            Priority::Low => 10,
            Priority::High => -10,
            Priority::Highest => -20,
            Priority::Nice(n) => n.clamp(-20, 19) as i32,
            _ => 0,
        }
    }

    /// Applies this priority to the calling thread.
    pub fn apply(self) -> Result<(), String> {
        let tid = gettid();
        match self {
            Priority::Idle => set_scheduler(libc::SCHED_IDLE, 0),
            Priority::Rr(_) => set_scheduler(libc::SCHED_RR, self.fifo()),
            p if p.is_rt() => set_scheduler(libc::SCHED_FIFO, p.fifo()),
            p => {
                set_scheduler(libc::SCHED_OTHER, 0)?;
                // SAFETY: plain syscall wrapper; per-thread on Linux when given a tid.
                let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, p.nice()) };
                if r != 0 {
                    let e = io::Error::last_os_error();
                    return Err(format!(
                        "setpriority(nice {}) refused: {e}; negative nice needs root or CAP_SYS_NICE \
                         (or raise RLIMIT_NICE)",
                        p.nice()
                    ));
                }
                Ok(())
            }
        }
    }
}

/// The calling thread's kernel id.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

fn set_scheduler(policy: libc::c_int, prio: i32) -> Result<(), String> {
    let param = libc::sched_param { sched_priority: prio };
    // SAFETY: valid param pointer; 0 = calling thread.
    let r = unsafe { libc::sched_setscheduler(0, policy, &param) };
    if r != 0 {
        let e = io::Error::last_os_error();
        let hint = if e.raw_os_error() == Some(libc::EPERM) {
            "; real-time priorities need root or CAP_SYS_NICE (or an RLIMIT_RTPRIO >= the priority)"
        } else {
            ""
        };
        return Err(format!("sched_setscheduler({}) refused: {e}{hint}", policy_name(policy, prio)));
    }
    Ok(())
}

fn policy_name(policy: libc::c_int, prio: i32) -> String {
    match policy {
        libc::SCHED_FIFO => format!("SCHED_FIFO {prio}"),
        libc::SCHED_RR => format!("SCHED_RR {prio}"),
        libc::SCHED_IDLE => "SCHED_IDLE".into(),
        _ => "SCHED_OTHER".into(),
    }
}

/// Demotes thread `tid` to `SCHED_OTHER` nice 0 (used by the watchdog). Errors are ignored: the
/// thread may already have exited.
pub fn demote(tid: i32) {
    let mut attr = SchedAttr { size: std::mem::size_of::<SchedAttr>() as u32, ..Default::default() };
    attr.sched_policy = libc::SCHED_OTHER as u32;
    // SAFETY: attr is a valid sched_attr of the size we state.
    unsafe { libc::syscall(libc::SYS_sched_setattr, tid, &attr as *const SchedAttr, 0) };
}

/// Linux `struct sched_attr`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
}

/// Makes the calling thread a `SCHED_DEADLINE` task with `runtime` every `period` (deadline =
/// period); `soft` adds `SCHED_FLAG_RECLAIM`. This is how `-rh` / `-rs` are provided today.
pub fn set_deadline(runtime_ns: u64, period_ns: u64, soft: bool) -> Result<(), String> {
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_policy: SCHED_DEADLINE,
        sched_flags: if soft { SCHED_FLAG_RECLAIM } else { 0 },
        sched_runtime: runtime_ns,
        sched_deadline: period_ns,
        sched_period: period_ns,
        ..Default::default()
    };
    // SAFETY: attr is a valid sched_attr of the size we state; 0 = calling thread.
    let r = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    let why = match e.raw_os_error() {
        Some(libc::EBUSY) => {
            "admission control: the SCHED_DEADLINE bandwidth already admitted plus this one would \
             exceed the limit (sched_rt_runtime_us / sched_rt_period_us of each CPU of the root \
             domain); reserve less, or end other deadline tasks"
                .to_string()
        }
        Some(libc::EPERM) => "SCHED_DEADLINE needs root or CAP_SYS_NICE, and a task whose CPU \
                              affinity spans its whole root domain (pinned threads are refused; \
                              use an exclusive cpuset to reserve on one CPU)"
            .to_string(),
        Some(libc::EINVAL) => "the kernel needs 1024ns <= runtime <= period, and a period within \
                               /proc/sys/kernel/sched_deadline_period_{min,max}_us"
            .to_string(),
        _ => String::new(),
    };
    Err(format!(
        "sched_setattr(SCHED_DEADLINE runtime {runtime_ns}ns period {period_ns}ns{}) refused: {e}; {why}",
        if soft { " RECLAIM" } else { "" }
    ))
}

/// Pins the calling thread to `cpu`.
pub fn pin_to(cpu: usize) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data; CPU_SET bounds-checks against its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(format!(
                "cannot pin to CPU {cpu}: {}; see the CPUs allowed with `taskset -p $$`",
                io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// The CPUs the process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![0];
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> usize {
    // SAFETY: no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    c.max(0) as usize
}

/// Locks all current and future pages into memory (§3.1: no page faults during the run).
///
/// Only when the lock cannot run out: as root, or with an unlimited `RLIMIT_MEMLOCK`. A limited
/// lock with `MCL_FUTURE` would make later allocations fail; then pages are touched instead (the
/// paper's fallback: the trace buffer is written when it is created) and an error says so.
pub fn lock_memory() -> Result<(), String> {
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: valid pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut rl) };
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 && rl.rlim_cur != libc::RLIM_INFINITY {
        return Err(format!(
            "memory not locked: RLIMIT_MEMLOCK is {} KiB (run as root or `ulimit -l unlimited`); \
             the trace buffer's pages were touched instead, the paper's fallback",
            rl.rlim_cur / 1024
        ));
    }
    // SAFETY: no pointers involved.
    let r = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if r != 0 {
        return Err(format!(
            "mlockall failed: {}; run as root or raise RLIMIT_MEMLOCK (ulimit -l); pages were \
             touched instead, which is the paper's fallback",
            io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Undoes [`lock_memory`].
pub fn unlock_memory() {
    // SAFETY: no preconditions.
    unsafe { libc::munlockall() };
}

/// The RT throttling setting: `Some((runtime_us, period_us))`, runtime -1 meaning disabled.
pub fn rt_throttling() -> Option<(i64, i64)> {
    let r = std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").ok()?;
    let p = std::fs::read_to_string("/proc/sys/kernel/sched_rt_period_us").ok()?;
    Some((r.trim().parse().ok()?, p.trim().parse().ok()?))
}

/// True when the process may use real-time policies (root, or a nonzero RLIMIT_RTPRIO).
pub fn can_use_rt() -> bool {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: valid pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_RTPRIO, &mut rl) };
    rl.rlim_cur > 0
}

/// Process CPU time of the calling thread in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The calling thread's dispatch count: the third field of `/proc/thread-self/schedstat` (times
/// the kernel switched to the thread, `CONFIG_SCHED_INFO`); `None` where the file is absent.
pub fn thread_dispatches() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().nth(2)?.parse().ok()
}

/// A PM QoS CPU latency request (`/dev/cpu_dma_latency`), in force while this value lives.
#[derive(Debug)]
pub struct PmQos {
    _file: std::fs::File,
}

impl PmQos {
    /// Requests that no CPU enter an idle state whose exit latency exceeds `us` microseconds.
    pub fn hold(us: i32) -> Result<PmQos, String> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().write(true).open("/dev/cpu_dma_latency").map_err(|e| {
            format!(
                "--pm-qos: cannot open /dev/cpu_dma_latency: {e} (it needs root, and a kernel with PM QoS)"
            )
        })?;
        f.write_all(&us.to_ne_bytes()).map_err(|e| format!("--pm-qos: writing /dev/cpu_dma_latency: {e}"))?;
        Ok(PmQos { _file: f })
    }
}
