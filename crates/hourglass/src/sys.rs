//! Every call into the kernel that Rust's type system cannot check is here, and only here: each
//! `unsafe` block of hourglass says why it is sound (`// SAFETY:`), and the rest of the crate calls
//! the safe functions of this module. Where `nix` or `std` wraps a call soundly, this module (or its
//! caller) uses that; what neither covers is a raw `libc` call here.
//!
//! What is here: scheduling classes and nice levels (`sched_setscheduler`, `setpriority`: not in
//! nix), `SCHED_DEADLINE` reservations (`sched_setattr`: no wrapper anywhere), CPU affinity,
//! `mlockall`, the RT throttling settings, the clocks the probe polls (`clock_gettime` inlined,
//! `rdtsc`, `cpuid`), the RTC's ioctls,
//! the probe's lock-free trace buffer ([`SlotBuffer`]), and what the microbenchmarks need: a raw
//! `getpid`, `futex`, memory shared with a forked child ([`SharedMem`], [`fork_pair`]), a
//! memory-mapped file read page by page, an empty signal handler and `setitimer`.
//!
//! One `unsafe` block lives elsewhere, in `bench.rs`: the call of [`fork_pair`], whose soundness
//! depends on what the forked child does (only async-signal-safe work), which only the bench that
//! writes the child can vouch for.
//!
//! Every error says what the kernel refused and what to do about it.

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
                // SAFETY: setpriority takes only integers; given a tid, Linux applies it to that one
                // thread. (nix has no setpriority.)
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

/// An error of a `nix` call as `std`'s error, which prints as `Operation not permitted (os error 1)`
/// like the raw calls' `last_os_error` did.
fn os(e: nix::errno::Errno) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

/// The calling thread's kernel id.
pub fn gettid() -> i32 {
    nix::unistd::gettid().as_raw()
}

fn set_scheduler(policy: libc::c_int, prio: i32) -> Result<(), String> {
    let param = libc::sched_param { sched_priority: prio };
    // SAFETY: param is a valid sched_param that outlives the call; pid 0 = the calling thread.
    // (nix has no sched_setscheduler.)
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

/// Makes the calling thread `SCHED_FIFO` at `prio` (the watchdog, `bench clockirq`).
pub fn set_fifo(prio: i32) -> Result<(), String> {
    set_scheduler(libc::SCHED_FIFO, prio)
}

/// Returns the calling thread to `SCHED_OTHER` (its nice level is left as it is).
pub fn set_other() -> Result<(), String> {
    set_scheduler(libc::SCHED_OTHER, 0)
}

/// Whether the calling thread is real-time (`SCHED_FIFO` or `SCHED_RR`): Linux 2.4's `nanosleep`
/// busy-waited short sleeps of such threads ([`crate::timer`]'s `LINUX24`).
pub fn is_rt_thread() -> bool {
    // SAFETY: sched_getscheduler(0) only reads the calling thread's policy.
    let p = unsafe { libc::sched_getscheduler(0) } & !libc::SCHED_RESET_ON_FORK;
    p == libc::SCHED_FIFO || p == libc::SCHED_RR
}

/// Gives up the CPU (`sched_yield`): the CPU_YIELD models' voluntary switch.
pub fn sched_yield() {
    let _ = nix::sched::sched_yield();
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
    let _ = sched_setattr(tid, &attr);
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

/// `sched_setattr(tid, attr, 0)`: neither libc nor nix wraps it.
fn sched_setattr(tid: i32, attr: &SchedAttr) -> io::Result<()> {
    // SAFETY: attr points to a live, initialised sched_attr whose `size` field is its own size, as
    // the kernel requires; the kernel only reads it. tid 0 = the calling thread.
    let r = unsafe { libc::syscall(libc::SYS_sched_setattr, tid, attr as *const SchedAttr, 0) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Makes the calling thread a `SCHED_DEADLINE` task with `runtime` every `period`, due `deadline`
/// after each period begins (`runtime <= deadline <= period`); `soft` adds `SCHED_FLAG_RECLAIM`.
/// This is how `-rh` / `-rs` (deadline = period) and a scenario's deadline tasks are provided.
pub fn set_deadline(runtime_ns: u64, deadline_ns: u64, period_ns: u64, soft: bool) -> Result<(), String> {
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_policy: SCHED_DEADLINE,
        sched_flags: if soft { SCHED_FLAG_RECLAIM } else { 0 },
        sched_runtime: runtime_ns,
        sched_deadline: deadline_ns,
        sched_period: period_ns,
        ..Default::default()
    };
    let Err(e) = sched_setattr(0, &attr) else {
        return Ok(());
    };
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
        Some(libc::EINVAL) => "the kernel needs 1024ns <= runtime <= deadline <= period, and a period \
                               within /proc/sys/kernel/sched_deadline_period_{min,max}_us"
            .to_string(),
        _ => String::new(),
    };
    Err(format!(
        "sched_setattr(SCHED_DEADLINE runtime {runtime_ns}ns deadline {deadline_ns}ns period {period_ns}ns{}) \
         refused: {e}; {why}",
        if soft { " RECLAIM" } else { "" }
    ))
}

/// The periods `SCHED_DEADLINE` accepts here, ns
/// (`/proc/sys/kernel/sched_deadline_period_{min,max}_us`; the kernel's defaults, 100 µs and
/// 4.194304 s, where they cannot be read).
pub fn deadline_periods() -> (u64, u64) {
    let read = |f: &str, default: u64| {
        std::fs::read_to_string(format!("/proc/sys/kernel/sched_deadline_period_{f}_us"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(default)
            .saturating_mul(1000)
    };
    (read("min", 100), read("max", 1 << 22))
}

/// Pins the calling thread to `cpu`.
pub fn pin_to(cpu: usize) -> Result<(), String> {
    use nix::sched::{sched_setaffinity, CpuSet};
    let mut set = CpuSet::new();
    // A CPU beyond the set's size stays out of it, and the empty set is refused below (EINVAL).
    let _ = set.set(cpu);
    sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
        .map_err(|e| format!("cannot pin to CPU {cpu}: {}; see the CPUs allowed with `taskset -p $$`", os(e)))
}

/// The CPUs the process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    use nix::sched::{sched_getaffinity, CpuSet};
    match sched_getaffinity(nix::unistd::Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false)).collect(),
        Err(_) => vec![0],
    }
}

/// The CPU the calling thread runs on now (0 if unknown).
///
/// The probe asks at every gap it records, inside the time it counts, so this is called raw and
/// inlined like [`monotonic_ns`]: nix's `sched_getcpu` (a call returning a `Result` through
/// memory) took the monotonic gap loop from 20.2 to 21.5 ns per iteration in the same
/// measurement.
#[inline(always)]
pub fn current_cpu() -> usize {
    // SAFETY: sched_getcpu takes no arguments and touches no memory of ours.
    let c = unsafe { libc::sched_getcpu() };
    c.max(0) as usize
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The soft limit of `resource` (0 when it cannot be read).
fn soft_limit(resource: nix::sys::resource::Resource) -> libc::rlim_t {
    nix::sys::resource::getrlimit(resource).map_or(0, |(soft, _)| soft)
}

/// Locks all current and future pages into memory (§3.1: no page faults during the run).
///
/// Only when the lock cannot run out: as root, or with an unlimited `RLIMIT_MEMLOCK`. A limited
/// lock with `MCL_FUTURE` would make later allocations fail; then pages are touched instead (the
/// paper's fallback: the trace buffer is written when it is created) and an error says so.
pub fn lock_memory() -> Result<(), String> {
    use nix::sys::mman::{mlockall, MlockAllFlags};
    let memlock = soft_limit(nix::sys::resource::Resource::RLIMIT_MEMLOCK);
    if !is_root() && memlock != libc::RLIM_INFINITY {
        return Err(format!(
            "memory not locked: RLIMIT_MEMLOCK is {} KiB (run as root or `ulimit -l unlimited`); \
             the trace buffer's pages were touched instead, the paper's fallback",
            memlock / 1024
        ));
    }
    mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE).map_err(|e| {
        format!(
            "mlockall failed: {}; run as root or raise RLIMIT_MEMLOCK (ulimit -l); pages were \
             touched instead, which is the paper's fallback",
            os(e)
        )
    })
}

/// Undoes [`lock_memory`].
pub fn unlock_memory() {
    let _ = nix::sys::mman::munlockall();
}

/// The RT throttling setting: `Some((runtime_us, period_us))`, runtime -1 meaning disabled.
pub fn rt_throttling() -> Option<(i64, i64)> {
    let r = std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").ok()?;
    let p = std::fs::read_to_string("/proc/sys/kernel/sched_rt_period_us").ok()?;
    Some((r.trim().parse().ok()?, p.trim().parse().ok()?))
}

/// True when the process may use real-time policies (root, or a nonzero RLIMIT_RTPRIO).
pub fn can_use_rt() -> bool {
    is_root() || soft_limit(nix::sys::resource::Resource::RLIMIT_RTPRIO) > 0
}

/// Process CPU time of the calling thread in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_ns() -> u64 {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map_or(0, |ts| ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64)
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

// ---- The clocks the probe polls ----

/// `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds (0 if it fails, which it cannot on Linux).
///
/// This is the monotonic gap loop's clock, read once per iteration, so it is called raw and
/// inlined: nix's `clock_gettime` makes the same call, but is not inlined into the loop and
/// returns its `Result` through memory, which took the loop from 21 to 27-28 ns per iteration
/// (`hourglass bench gaploop`, 5 alternating runs each on the project VM).
#[inline(always)]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid, writable timespec that outlives the call.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Reads the time-stamp counter (`rdtsc`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn rdtsc() -> u64 {
    // SAFETY: rdtsc exists on every x86_64 CPU, reads no memory and has no preconditions.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// `cpuid` of `leaf`, as (eax, ebx, ecx, edx).
#[cfg(target_arch = "x86_64")]
pub fn cpuid(leaf: u32) -> (u32, u32, u32, u32) {
    // SAFETY: cpuid exists on every x86_64 CPU and reads no memory. (Newer Rust declares
    // __cpuid safe; the block is for the older toolchains the workspace supports.)
    #[allow(unused_unsafe)]
    let r = unsafe { core::arch::x86_64::__cpuid(leaf) };
    (r.eax, r.ebx, r.ecx, r.edx)
}

// ---- The RTC ----

// `RTC_PIE_ON` and `RTC_PIE_OFF` (`_IO('p', 5)`, `_IO('p', 6)`).
mod rtc_ioctl {
    nix::ioctl_none!(pie_on, b'p', 0x05);
    nix::ioctl_none!(pie_off, b'p', 0x06);
}

/// `RTC_IRQP_SET`, `_IOW('p', 0x0c, unsigned long)`: nix's `ioctl_write_int!` would encode an
/// `int` argument (a different request number), so this one is called raw.
const RTC_IRQP_SET: libc::c_ulong = 0x4008_700c;

/// Sets the periodic interrupt rate of the RTC open as `fd`.
pub fn rtc_set_rate(fd: std::os::fd::BorrowedFd, hz: u32) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: an ioctl on a descriptor that `fd` keeps open, with an integer argument: the kernel
    // reads no memory of ours.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), RTC_IRQP_SET, hz as libc::c_ulong) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Turns the periodic interrupts of the RTC open as `fd` on or off.
pub fn rtc_periodic(fd: std::os::fd::BorrowedFd, on: bool) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: argument-less ioctls on a descriptor that `fd` keeps open.
    let r = unsafe {
        if on {
            rtc_ioctl::pie_on(fd.as_raw_fd())
        } else {
            rtc_ioctl::pie_off(fd.as_raw_fd())
        }
    };
    r.map(drop).map_err(os)
}

// ---- The probe's trace buffer ----

/// A preallocated buffer that many threads fill at once without a lock: a push claims the next
/// slot with one atomic add and writes it; a push past the end is counted, not stored. It is read
/// only by taking it whole ([`SlotBuffer::into_vec`]), when no writer can be left.
pub struct SlotBuffer<T> {
    slots: Box<[std::cell::UnsafeCell<T>]>,
    next: std::sync::atomic::AtomicUsize,
    dropped: std::sync::atomic::AtomicU64,
}

// SAFETY: a slot is written only by the one push that claimed its index (fetch_add hands out each
// index once), and slots are read only by into_vec, which owns the buffer: no two threads ever
// touch the same slot. T: Send, since a value pushed on one thread is read on another.
unsafe impl<T: Send> Sync for SlotBuffer<T> {}

impl<T: Copy> SlotBuffer<T> {
    /// A buffer of `n` slots, each holding `empty` until written.
    pub fn new(n: usize, empty: T) -> SlotBuffer<T> {
        SlotBuffer {
            slots: (0..n).map(|_| std::cell::UnsafeCell::new(empty)).collect(),
            next: std::sync::atomic::AtomicUsize::new(0),
            dropped: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Stores `v` in the next free slot, or counts it as dropped when the buffer is full.
    #[inline]
    pub fn push(&self, v: T) {
        use std::sync::atomic::Ordering::Relaxed;
        let i = self.next.fetch_add(1, Relaxed);
        if i < self.slots.len() {
            // SAFETY: index i was handed to this push alone (see the Sync impl); nothing reads the
            // slot before into_vec.
            unsafe { *self.slots[i].get() = v };
        } else {
            self.dropped.fetch_add(1, Relaxed);
        }
    }

    /// The values pushed, in slot order, and how many did not fit.
    pub fn into_vec(self) -> (Vec<T>, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        let n = self.next.load(Relaxed).min(self.slots.len());
        let v = self.slots.into_vec().into_iter().take(n).map(|c| c.into_inner()).collect();
        (v, self.dropped.load(Relaxed))
    }
}

// ---- What the microbenchmarks need ----

/// `getpid` as a raw system call (no libc caching): Etsion's "trap".
#[inline(always)]
pub fn getpid_syscall() {
    // SAFETY: getpid takes no arguments and touches no memory of ours.
    unsafe { libc::syscall(libc::SYS_getpid) };
}

/// Sleeps while `a` holds `expected` (`FUTEX_WAIT`, shared between processes), or returns at once.
pub fn futex_wait(a: &std::sync::atomic::AtomicU32, expected: u32) {
    // SAFETY: the address is that of an AtomicU32 borrowed for the whole call; the kernel only
    // reads it; no timeout pointer.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            a.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    };
}

/// Wakes one waiter of [`futex_wait`] on `a`.
pub fn futex_wake(a: &std::sync::atomic::AtomicU32) {
    // SAFETY: as in futex_wait; FUTEX_WAKE does not access the word at all.
    unsafe { libc::syscall(libc::SYS_futex, a.as_ptr(), libc::FUTEX_WAKE, 1) };
}

/// A `T` in memory that stays shared with a child forked by [`fork_pair`] (an anonymous
/// `MAP_SHARED` mapping), unmapped when dropped.
pub struct SharedMem<T> {
    ptr: std::ptr::NonNull<T>,
}

impl<T: Default> SharedMem<T> {
    /// Maps a page-aligned region for one `T` and puts `T::default()` in it.
    pub fn new() -> Result<SharedMem<T>, String> {
        use nix::sys::mman::{mmap_anonymous, MapFlags, ProtFlags};
        assert!(std::mem::align_of::<T>() <= 4096, "mappings are page-aligned");
        let len = std::num::NonZeroUsize::new(std::mem::size_of::<T>().max(1)).expect("not zero");
        // SAFETY: a new anonymous mapping at an address of the kernel's choosing overlaps no memory
        // that Rust knows of.
        let p = unsafe {
            mmap_anonymous(None, len, ProtFlags::PROT_READ | ProtFlags::PROT_WRITE, MapFlags::MAP_SHARED)
        }
        .map_err(|e| format!("mmap: {}", os(e)))?;
        let ptr = p.cast::<T>();
        // SAFETY: the mapping is page-aligned, large enough for a T and ours alone: writing a valid
        // T initialises it.
        unsafe { ptr.as_ptr().write(T::default()) };
        Ok(SharedMem { ptr })
    }
}

impl<T> std::ops::Deref for SharedMem<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: initialised in new and mapped until drop; the borrow of self bounds the reference.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T> std::ops::DerefMut for SharedMem<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in deref; &mut self makes the reference the only one in this process (another
        // process sees the memory only through fork_pair, whose contract orders the two).
        unsafe { self.ptr.as_mut() }
    }
}

impl<T> Drop for SharedMem<T> {
    fn drop(&mut self) {
        let len = std::mem::size_of::<T>().max(1);
        // SAFETY: the T written in new is dropped once, then the mapping made in new is unmapped;
        // no reference to it outlives self.
        unsafe {
            std::ptr::drop_in_place(self.ptr.as_ptr());
            let _ = nix::sys::mman::munmap(self.ptr.cast(), len);
        }
    }
}

/// Forks. The child runs `child` on `shared` and ends at once with `_exit` (no destructors, no
/// exit handlers, no flushing of the parent's buffers); the parent runs `parent` on `shared`, then
/// reaps the child, and returns what `parent` returned.
///
/// # Safety
///
/// The child of a multithreaded process (a test harness, the probe) may do only what is
/// async-signal-safe: `child` must not allocate, take a lock or print; system calls on descriptors
/// and memory prepared before the fork are fine. When `shared` is a [`SharedMem`], both processes
/// see it: `child` and `parent` must order their accesses (atomics, futexes, descriptors) so that
/// neither reads what the other is writing.
pub unsafe fn fork_pair<S, R>(
    shared: &mut S,
    child: impl FnOnce(&mut S),
    parent: impl FnOnce(&mut S) -> R,
) -> Result<R, String> {
    use nix::unistd::ForkResult;
    // SAFETY: the caller guarantees that the child does only async-signal-safe work.
    match unsafe { nix::unistd::fork() }.map_err(|e| format!("fork: {}", os(e)))? {
        ForkResult::Child => {
            child(shared);
            // SAFETY: _exit ends the child without running anything of the parent's (destructors,
            // atexit handlers, stdio flushes), which is what a forked child must do.
            unsafe { libc::_exit(0) }
        }
        ForkResult::Parent { child } => {
            let r = parent(shared);
            let _ = nix::sys::wait::waitpid(child, None);
            Ok(r)
        }
    }
}

/// Maps the first `len` bytes of `file` read-only, advised sequential, reads one byte of each
/// 4 KiB page (taking the page faults a memory-mapped read takes) and returns their sum.
pub fn read_mapped_pages(file: &std::fs::File, len: usize) -> Result<u64, String> {
    use nix::sys::mman::{madvise, mmap, munmap, MapFlags, MmapAdvise, ProtFlags};
    let Some(n) = std::num::NonZeroUsize::new(len) else { return Ok(0) };
    // SAFETY: a new private read-only mapping at an address of the kernel's choosing overlaps no
    // memory that Rust knows of.
    let p = unsafe { mmap(None, n, ProtFlags::PROT_READ, MapFlags::MAP_PRIVATE, file, 0) }
        .map_err(|e| format!("mmap: {}", os(e)))?;
    // SAFETY: advice on our own mapping; it changes no memory.
    let _ = unsafe { madvise(p, len, MmapAdvise::MADV_SEQUENTIAL) };
    let base = p.as_ptr() as *const u8;
    let mut sum = 0u64;
    for off in (0..len).step_by(4096) {
        // SAFETY: off < len, inside the mapping; volatile reads through a raw pointer, so no
        // reference is made to memory the file's other users could change.
        sum = sum.wrapping_add(unsafe { std::ptr::read_volatile(base.add(off)) } as u64);
    }
    // SAFETY: the mapping made above; no pointer into it is used after this.
    let _ = unsafe { munmap(p, len) };
    Ok(sum)
}

extern "C" fn empty_handler(_: libc::c_int) {}

/// Catches `signal` with a handler that does nothing (`SA_RESTART`): its delivery costs what a
/// signal costs, and interrupted system calls resume.
pub fn catch_with_empty_handler(signal: nix::sys::signal::Signal) -> Result<(), String> {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet};
    let sa = SigAction::new(SigHandler::Handler(empty_handler), SaFlags::SA_RESTART, SigSet::empty());
    // SAFETY: the handler does nothing at all, which is async-signal-safe.
    unsafe { sigaction(signal, &sa) }.map(drop).map_err(|e| format!("sigaction: {}", os(e)))
}

/// Arms `ITIMER_REAL` to deliver `SIGALRM` every `period_us` microseconds (below one second), or
/// disarms it with 0. (nix has no setitimer.)
pub fn set_real_timer(period_us: i64) {
    let tv = libc::timeval { tv_sec: 0, tv_usec: period_us as libc::suseconds_t };
    let it = libc::itimerval { it_interval: tv, it_value: tv };
    // SAFETY: it is a valid itimerval that outlives the call; the old value is not asked for.
    unsafe { libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_buffer_keeps_every_push_that_fits_and_counts_the_rest() {
        const EMPTY: (u32, u32) = (u32::MAX, u32::MAX);
        let b = std::sync::Arc::new(SlotBuffer::new(1000, EMPTY));
        let threads: Vec<_> = (0..4u32)
            .map(|t| {
                let b = b.clone();
                std::thread::spawn(move || (0..300u32).for_each(|i| b.push((t, i))))
            })
            .collect();
        threads.into_iter().for_each(|h| h.join().unwrap());
        let (v, dropped) = std::sync::Arc::try_unwrap(b).ok().unwrap().into_vec();
        assert_eq!((v.len(), dropped), (1000, 200));
        assert!(!v.contains(&EMPTY), "every slot handed out was written");
        // Each thread pushes in order, so what it got in is a prefix of its pushes, each once.
        for t in 0..4 {
            let mut mine: Vec<u32> = v.iter().filter(|p| p.0 == t).map(|p| p.1).collect();
            mine.sort_unstable();
            assert!(mine.iter().enumerate().all(|(k, &i)| i == k as u32), "thread {t}: {mine:?}");
        }
    }

    #[test]
    fn shared_memory_is_seen_by_the_forked_child() {
        let mut shm = SharedMem::<[u64; 4]>::new().unwrap();
        assert_eq!(*shm, [0; 4], "starts as T::default()");
        // SAFETY: the child only stores one word into the mapping (async-signal-safe); the parent's
        // closure touches nothing, and the parent reads the mapping after fork_pair reaped the child.
        let r = unsafe { fork_pair(&mut shm, |s| s[2] = 42, |_| ()) };
        assert!(r.is_ok());
        assert_eq!(*shm, [0, 0, 42, 0]);
    }

    #[test]
    fn a_mapped_file_is_read_one_byte_per_page() {
        let path = std::env::temp_dir().join(format!("hourglass-sys-{}.dat", std::process::id()));
        let mut bytes = vec![0u8; 3 * 4096 + 10];
        for (k, off) in (0..bytes.len()).step_by(4096).enumerate() {
            bytes[off] = 10 + k as u8;
        }
        bytes[1] = 99; // not at a page start: not read
        std::fs::write(&path, &bytes).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        assert_eq!(read_mapped_pages(&f, bytes.len()), Ok(10 + 11 + 12 + 13));
        assert_eq!(read_mapped_pages(&f, 0), Ok(0));
        std::fs::remove_file(&path).ok();
    }
}
