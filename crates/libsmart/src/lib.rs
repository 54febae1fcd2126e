//! # libsmart: SMART's application interface, both ends of it
//!
//! SMART (Nieh 1999, ch. 3 §3.4) gives an application three constructs: a **time constraint** (deadline,
//! cpu-estimate) on a block of code, a **notification** when the scheduler sees that a deadline will
//! not be met (after a notify-time the application chooses), and the **availability** of processor
//! time (consumption rate, allocation rate). Users also set **priority** and **share**. This crate is
//! that interface for Linux, for `scx_smart` (a sched_ext scheduler whose policy runs in user space):
//!
//! * the application side, [`Smart`] (Rust) and a C ABI ([`capi`], header `include/smart.h`, built as
//!   `liblibsmart.so` / `liblibsmart.a`);
//! * the scheduler side, [`server::Registry`], so `scx_smart` only calls it.
//!
//! ```no_run
//! let smart = libsmart::Smart::register()?;            // once per process
//! let frame = libsmart::now() + 40_000_000;             // CLOCK_MONOTONIC ns
//! smart.set_time_constraint(frame, Some(10_000_000), Some(0))?; // notify as soon as a miss is seen
//! // ... the frame's work ...
//! if let Some(n) = smart.take_notification()? { /* degrade: skip a frame */ let _ = n; }
//! smart.clear_time_constraint()?;
//! # Ok::<(), libsmart::Error>(())
//! ```
//!
//! ## The design decision: a shared page per process, a seqlock per thread
//!
//! The issue asks that the scheduler learn a constraint within microseconds, and a frame loop sets one
//! every few milliseconds, so a system call or socket round trip per constraint is the wrong price. The
//! Solaris prototype (ch. 5 §5.4) passed constraints through `priocntl(2)`; here:
//!
//! 1. **Registration, once per process.** The application creates a region with `memfd_create`, sealed
//!    so it can neither shrink nor grow ([`region`]), and sends the descriptor over the scheduler's Unix
//!    socket (`$SMART_SOCKET`, default [`DEFAULT_SOCKET`]) with `SCM_RIGHTS` ([`proto`]). The scheduler
//!    takes the peer's pid and uid from the kernel (`SO_PEERCRED`), reads its capabilities from
//!    `/proc/<pid>/status`, maps the region, and answers with a status (errno) and whether the process
//!    may raise priority or share. The socket stays open: when it closes (the process exited) the
//!    scheduler drops the region.
//! 2. **A slot per thread** ([`layout`]): 128 bytes, the first cache line written by the owning thread
//!    under a seqlock (sequence odd while writing), the second written by the scheduler (notification
//!    counter, last notified deadline, availability). A thread claims a slot on its first call and frees
//!    it when it exits. Setting or clearing a constraint is a handful of stores: no system call
//!    (measured by `cargo run --release -p libsmart --example bench`).
//! 3. **The scheduler reads a slot when it decides** about the thread ([`server::Registry::constraint`]):
//!    a hash lookup from tid to slot and a bounded seqlock read.
//! 4. **Notifications** are counted in the slot and, if the process chose a signal at registration
//!    (default `SIGRTMIN+4`; 0 = none), sent to the very thread with `rt_tgsigqueueinfo`, the deadline in
//!    `si_value`, as ch. 5 sent a signal. The handler libsmart installs only stores into atomics (it is
//!    async-signal-safe); an application may add its own async-signal-safe callback ([`on_notify`]) or
//!    ignore signals and poll [`Smart::take_notification`], which reads the counter. We chose a signal
//!    over a pollable descriptor because it is what the dissertation did, it interrupts a thread that is
//!    computing (a descriptor is only seen when the thread looks), and the counter gives the polling
//!    style anyway.
//!
//! The scheduler-side types are `sched`'s ([`sched::TimeConstraint`], [`sched::Availability`],
//! [`sched::TaskParams`]) so `scx_smart` hands what it reads straight to the policy; `sched` is pure
//! logic without dependencies, so the application side pays nothing for it.
//!
//! ## What a process may do to another's threads
//!
//! * **Set or clear constraints: only its own.** Only a process holding the region's descriptor can
//!   write it (it is not in any file system; a process could pass it on deliberately, like any fd). The
//!   scheduler serves a slot's tid only after checking `/proc/<pid>/task/<tid>` for the pid the kernel
//!   reported at connection: a region naming another process's thread is ignored (counted as
//!   `foreign_tids`). So a process cannot set, clear or observe another's constraints through SMART. (A
//!   process that may `ptrace` another can already write its memory; that is outside this API.)
//! * **Priority and share follow the rules of `nice(2)`:** any process may lower its own threads'
//!   importance (priority ≤ 0, share ≤ 1, the defaults); raising either above the default needs
//!   `CAP_SYS_NICE` when it registers. The application library refuses with `EPERM` at once; the
//!   scheduler clamps independently (it never trusts the region). No process can change another's.
//! * **Notifications** go only to threads with a verified slot, with the signal their own process chose.
//!
//! ## Where it is weak
//!
//! * Tids and pids must be in the scheduler's pid namespace (containers with their own pid namespace
//!   are refused: their tids do not verify).
//! * A thread id checked once can be reused after the thread exits without its slot being freed (the
//!   thread was killed without running destructors); the window is until the process's next slot
//!   change or exit, and the reuse must land in the same process to pass the check.
//! * Priority and share are per thread, as the paper's tasks; there is no per-process default yet.
//! * After `fork()` the child is not registered (every call fails with `ENOTCONN`): the region it
//!   inherited is its parent's, and a process registers once. A child that needs the API must `exec`.
//! * The notification signal is a hint, not proof: any process allowed to signal this one (same uid)
//!   can send the same signal. The slot's counter, which only the scheduler and this process can
//!   write, is what [`Smart::take_notification`] reports. The handler is installed with `SA_RESTART`,
//!   so a notification does not make blocking calls fail with `EINTR`.
//! * The scheduler learns that a process is gone when its socket closes; a child forked without
//!   `exec` keeps the socket open, so the (idle) region stays registered until the child exits too.
//! * x86-64 and aarch64 Linux only (the siginfo layout and 64-bit `si_value` carrying the deadline).
//! * The library's file name is `liblibsmart.*` (Cargo's naming); link with `-llibsmart`.
//!
//! ## Unsafe code
//!
//! The crate denies `unsafe_code` except in two modules. A private `sys` module holds what cannot be
//! safe: viewing the mapped region as [`layout::Header`] and [`layout::Slot`]s (only files sealed
//! against shrinking are mapped), the notification signal's handler and its installation,
//! `rt_tgsigqueueinfo`, `pthread_atfork`, and `poll` or `recvmsg` on descriptors given as numbers.
//! Each block states the invariant it relies on in a `SAFETY:` comment. The C ABI ([`capi`]) keeps
//! its own, where it takes pointers from C. Everything else goes through `nix` (memfd, seals,
//! `sendmsg` with `SCM_RIGHTS`, `SO_PEERCRED`, clocks, ids, errno), `rustix` (`recvmsg`, whose
//! received descriptors arrive owned), `memmap2` (mapping and unmapping) and `std`.

#![deny(missing_docs)]
#![deny(unsafe_code)]

#[allow(unsafe_code)] // raw pointers from C, at the boundary only; see the module's documentation
pub mod capi;
mod client;
pub mod layout;
pub mod proto;
pub mod region;
pub mod server;
#[allow(unsafe_code)] // the crate's one place for it: shared memory, signals, raw descriptors
mod sys;

pub use client::{
    default_signal, now, on_notify, signals_received, smart, socket_path, take_notification, Availability,
    Notified, NotifyHandler, Options, Smart,
};

/// Where the scheduler listens unless `$SMART_SOCKET` says otherwise.
pub const DEFAULT_SOCKET: &str = "/run/smart/scx_smart.sock";
/// The default priority (SMART §3.2: most applications run at the default priority).
pub const DEFAULT_PRIORITY: i32 = 0;
/// The default share.
pub const DEFAULT_SHARE: u32 = 1;

/// What can go wrong on the application side. [`Error::errno`] gives the C ABI's errno.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// [`Smart::register`] was not called (or failed).
    #[error("not registered with the SMART scheduler (call Smart::register first)")]
    NotRegistered,
    /// The scheduler's socket could not be reached.
    #[error(
        "cannot reach the SMART scheduler at {0}: {1} (is scx_smart running? set SMART_SOCKET to override)"
    )]
    Connect(std::path::PathBuf, std::io::Error),
    /// The scheduler refused the registration with this errno.
    #[error("the SMART scheduler refused the registration: {}", std::io::Error::from_raw_os_error(*.0))]
    Refused(i32),
    /// All slots are used by live threads.
    #[error("no free thread slot (register with more slots)")]
    NoSlot,
    /// The process may not do that.
    #[error("permission denied: {0}")]
    PermissionDenied(&'static str),
    /// A bad argument.
    #[error("invalid argument: {0}")]
    Invalid(&'static str),
    /// The notification signal already has a handler in this process.
    #[error("signal {0} already has a handler in this process (choose another with Options::signal)")]
    SignalBusy(i32),
    /// A system call failed.
    #[error("{0}")]
    Io(std::io::Error),
}

impl Error {
    /// The errno the C ABI returns (negated) for this error.
    pub fn errno(&self) -> i32 {
        match self {
            Error::NotRegistered => libc::ENOTCONN,
            Error::Connect(_, e) | Error::Io(e) => e.raw_os_error().unwrap_or(match e.kind() {
                std::io::ErrorKind::TimedOut => libc::ETIMEDOUT,
                _ => libc::EIO,
            }),
            Error::Refused(e) => *e,
            Error::NoSlot => libc::ENOSPC,
            Error::PermissionDenied(_) => libc::EPERM,
            Error::Invalid(_) => libc::EINVAL,
            Error::SignalBusy(_) => libc::EBUSY,
        }
    }
}
