//! The application side: registration, per-thread slots, and the calls of SMART's API.

use std::cell::Cell;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use nix::time::{clock_gettime, ClockId};

use crate::layout::{self, Slot, FLAG_CONSTRAINT, FLAG_PRIORITY, FLAG_SHARE, NEVER};
use crate::proto::{self, Hello, Reply, HELLO_MAGIC};
use crate::region::Region;
use crate::{sys, Error, DEFAULT_PRIORITY, DEFAULT_SHARE};

/// The socket path: `$SMART_SOCKET` if set, else [`crate::DEFAULT_SOCKET`].
pub fn socket_path() -> PathBuf {
    std::env::var_os("SMART_SOCKET").map(PathBuf::from).unwrap_or_else(|| crate::DEFAULT_SOCKET.into())
}

/// The default notification signal, `SIGRTMIN+4` (as the C library numbers it).
pub fn default_signal() -> i32 {
    libc::SIGRTMIN() + 4
}

/// How to register.
#[derive(Clone, Debug)]
pub struct Options {
    /// The scheduler's socket; `None` = [`socket_path()`].
    pub socket: Option<PathBuf>,
    /// Thread slots in the region (threads that use the API at the same time).
    pub slots: u32,
    /// Notification signal: a real-time signal (`SIGRTMIN..=SIGRTMAX`), or 0 for none (poll
    /// [`Smart::take_notification`] instead). Registration installs libsmart's handler for it, so the
    /// signal never kills the process; it fails with `EBUSY` if the process already handles it.
    pub signal: i32,
    /// How long to wait for the scheduler's answer.
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            socket: None,
            slots: layout::DEFAULT_SLOTS,
            signal: default_signal(),
            timeout: Duration::from_secs(2),
        }
    }
}

/// A notification taken by [`Smart::take_notification`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Notified {
    /// Deadline of the (last) constraint the scheduler notified about.
    pub deadline: u64,
    /// How many notifications arrived since the last take (usually 1).
    pub count: u64,
    /// Whether the deadline had already passed when the scheduler decided (else: predicted miss).
    pub passed: bool,
}

/// Availability (SMART §3.4.3), percent of one CPU.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Availability {
    /// What the thread has recently been consuming.
    pub consumption_rate: f32,
    /// What its priority and share entitle it to.
    pub allocation_rate: f32,
}

/// This process's registration with the SMART scheduler. There is one per process
/// ([`Smart::register`]); every call acts on the **calling thread**, which gets a slot on its first call
/// and gives it back when it exits.
pub struct Smart {
    region: Region,
    _sock: UnixStream,
    privileged: bool,
    signal: i32,
    free_hint: AtomicUsize,
}

static SMART: OnceLock<Smart> = OnceLock::new();
static REGISTERING: Mutex<()> = Mutex::new(());

// Written by the signal handler (async-signal-safe: atomics only).
static SIGNALS: AtomicU64 = AtomicU64::new(0);
static SIGNAL_DEADLINE: AtomicU64 = AtomicU64::new(0);
static USER_HANDLER: sys::HandlerCell = sys::HandlerCell::new();
// Set in a child after fork(): the region and the thread's slot index are the parent's.
static FORKED: AtomicBool = AtomicBool::new(false);

extern "C" fn after_fork_in_child() {
    FORKED.store(true, Ordering::Relaxed);
}

/// A notification handler: called in signal context with the deadline, so it must be
/// async-signal-safe (store into an atomic, write to a pipe; no locks, no allocation).
pub type NotifyHandler = extern "C" fn(deadline: u64);

/// What the notification signal's handler (in [`sys`]) does with the deadline the scheduler sent:
/// count it, keep it, and call the application's handler. Async-signal-safe: atomics only.
pub(crate) fn notified(deadline: u64) {
    SIGNAL_DEADLINE.store(deadline, Ordering::Relaxed);
    SIGNALS.fetch_add(1, Ordering::Release);
    if let Some(f) = USER_HANDLER.load() {
        f(deadline);
    }
}

fn install_handler(sig: i32) -> Result<(), Error> {
    sys::install_notify_handler(sig).map_err(|e| match e {
        sys::InstallError::Busy => Error::SignalBusy(sig),
        sys::InstallError::Io(e) => Error::Io(e),
    })
}

fn gettid() -> u32 {
    nix::unistd::gettid().as_raw() as u32
}

/// The calling thread's slot index; released (slot cleared and freed) when the thread exits.
struct ThreadSlot(Cell<Option<u32>>);

impl Drop for ThreadSlot {
    fn drop(&mut self) {
        if FORKED.load(Ordering::Relaxed) {
            return;
        }
        if let (Some(i), Some(s)) = (self.0.get(), SMART.get()) {
            s.release(i);
        }
    }
}

thread_local! {
    static MY_SLOT: ThreadSlot = const { ThreadSlot(Cell::new(None)) };
}

/// `CLOCK_MONOTONIC` now, in nanoseconds: the clock of every absolute time in this API.
pub fn now() -> u64 {
    // CLOCK_MONOTONIC always exists; were the call to fail, the time would read 0, as it always has.
    clock_gettime(ClockId::CLOCK_MONOTONIC)
        .map_or(0, |ts| ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64)
}

impl Smart {
    /// Register this process with the scheduler at `$SMART_SOCKET` (or [`crate::DEFAULT_SOCKET`]) with
    /// default options; a second call returns the same registration.
    pub fn register() -> Result<&'static Smart, Error> {
        Smart::register_with(Options::default())
    }

    /// Register with explicit options (ignored if the process is already registered).
    pub fn register_with(opts: Options) -> Result<&'static Smart, Error> {
        if let Some(s) = SMART.get() {
            return Ok(s);
        }
        let _g = REGISTERING.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = SMART.get() {
            return Ok(s);
        }
        if FORKED.load(Ordering::Relaxed) {
            return Err(Error::NotRegistered);
        }
        let s = Smart::connect(&opts)?;
        // The fork handler only stores into an atomic (async-signal-safe).
        sys::at_fork_in_child(after_fork_in_child);
        Ok(SMART.get_or_init(|| s))
    }

    /// The registration, if [`Smart::register`] succeeded earlier.
    pub fn get() -> Option<&'static Smart> {
        SMART.get()
    }

    fn connect(opts: &Options) -> Result<Smart, Error> {
        let sig = opts.signal;
        if sig != 0 && !(libc::SIGRTMIN()..=libc::SIGRTMAX()).contains(&sig) {
            return Err(Error::Invalid("signal must be 0 or a real-time signal (SIGRTMIN..=SIGRTMAX)"));
        }
        let path = opts.socket.clone().unwrap_or_else(socket_path);
        let region = Region::create(opts.slots, sig as u32).map_err(Error::Io)?;
        let sock = UnixStream::connect(&path).map_err(|e| Error::Connect(path.clone(), e))?;
        sock.set_read_timeout(Some(opts.timeout)).map_err(Error::Io)?;
        let hello = Hello { magic: HELLO_MAGIC, version: layout::VERSION, flags: 0 };
        proto::send(sock.as_raw_fd(), &hello, Some(region.fd().as_raw_fd())).map_err(Error::Io)?;
        let reply: Reply = match proto::recv_from::<Reply>(&sock, 0) {
            Ok(Some((r, _))) => r,
            Ok(None) => {
                return Err(Error::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "scheduler hung up")))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                return Err(Error::Io(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no answer from the scheduler",
                )))
            }
            Err(e) => return Err(Error::Io(e)),
        };
        if reply.status != 0 {
            return Err(Error::Refused(reply.status));
        }
        if sig != 0 {
            install_handler(sig)?;
        }
        Ok(Smart {
            region,
            _sock: sock,
            privileged: reply.privileged != 0,
            signal: sig,
            free_hint: AtomicUsize::new(0),
        })
    }

    /// The notification signal (0 = none).
    pub fn signal(&self) -> i32 {
        self.signal
    }

    /// Whether the scheduler lets this process raise priority or share above the defaults.
    pub fn privileged(&self) -> bool {
        self.privileged
    }

    /// The shared region (for tools and tests; applications use the calls below).
    pub fn region(&self) -> &Region {
        &self.region
    }

    fn claim(&self) -> Result<u32, Error> {
        let tid = gettid();
        let n = self.region.nslots();
        let start = self.free_hint.load(Ordering::Relaxed) as u32 % n;
        for pass in 0..2 {
            for k in 0..n {
                let i = (start + k) % n;
                let s = self.region.slot(i);
                let cur = s.tid.load(Ordering::Relaxed);
                let expect = if cur == 0 {
                    0
                } else if pass == 1
                    && cur & layout::TID_CLAIMING == 0
                    && !Path::new(&format!("/proc/self/task/{cur}")).exists()
                {
                    // Second pass: take over slots of threads that died without running destructors.
                    cur
                } else {
                    continue;
                };
                let claiming = tid | layout::TID_CLAIMING;
                if s.tid.compare_exchange(expect, claiming, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                    // While `tid` has the CLAIMING bit the scheduler treats the slot as free; the
                    // plain id is published together with the cleared fields and the new generation.
                    s.write(|s| {
                        s.tid.store(tid, Ordering::Relaxed);
                        s.generation.fetch_add(1, Ordering::Relaxed);
                        s.flags.store(0, Ordering::Relaxed);
                        s.notify_time.store(NEVER, Ordering::Relaxed);
                        s.priority.store(DEFAULT_PRIORITY, Ordering::Relaxed);
                        s.share.store(DEFAULT_SHARE, Ordering::Relaxed);
                    });
                    // The scheduler's counters are monotonic: start this owner's view at the current count.
                    s.taken.store(s.notifications.load(Ordering::Acquire), Ordering::Relaxed);
                    self.free_hint.store(i as usize + 1, Ordering::Relaxed);
                    self.region.header().claims.fetch_add(1, Ordering::Release);
                    return Ok(i);
                }
            }
        }
        Err(Error::NoSlot)
    }

    fn release(&self, i: u32) {
        let s = self.region.slot(i);
        // Clear before freeing: a snapshot of a free slot never shows the old owner's constraint.
        s.write(|s| s.flags.store(0, Ordering::Relaxed));
        s.tid.store(0, Ordering::Release);
        self.region.header().claims.fetch_add(1, Ordering::Release);
    }

    /// The calling thread's slot, claimed on first use. In a child process after `fork()` there is
    /// none: the region is the parent's, and writing it would change the parent's threads.
    fn my_slot(&self) -> Result<&Slot, Error> {
        if FORKED.load(Ordering::Relaxed) {
            return Err(Error::NotRegistered);
        }
        MY_SLOT.with(|m| {
            let i = match m.0.get() {
                Some(i) => i,
                None => {
                    let i = self.claim()?;
                    m.0.set(Some(i));
                    i
                }
            };
            Ok(self.region.slot(i))
        })
    }

    /// Give up the calling thread's slot now (it is also given back when the thread exits).
    pub fn release_thread(&self) {
        if FORKED.load(Ordering::Relaxed) {
            return;
        }
        MY_SLOT.with(|m| {
            if let Some(i) = m.0.take() {
                self.release(i);
            }
        });
    }

    /// Set the calling thread's time constraint (SMART §3.4.1): `deadline` (absolute,
    /// `CLOCK_MONOTONIC` ns), `cpu_estimate` (ns; `None` = everything until the deadline), and
    /// `notify_time` (absolute ns after which a predicted miss is notified; `None` = never). A few
    /// stores to shared memory; no system call after the thread's first call.
    pub fn set_time_constraint(
        &self,
        deadline: u64,
        cpu_estimate: Option<u64>,
        notify_time: Option<u64>,
    ) -> Result<(), Error> {
        self.set_constraint(&sched::TimeConstraint {
            deadline,
            cpu_estimate,
            notify_time,
            period: None,
            release: None,
        })
    }

    /// Set the whole constraint, including the period of periodic work (SMART eq. 8).
    pub fn set_constraint(&self, c: &sched::TimeConstraint) -> Result<(), Error> {
        if c.cpu_estimate == Some(0) {
            return Err(Error::Invalid("cpu_estimate must be > 0 (use None for no estimate)"));
        }
        if c.period == Some(0) {
            return Err(Error::Invalid("period must be > 0 (use None for aperiodic work)"));
        }
        if c.notify_time == Some(NEVER) {
            return Err(Error::Invalid("notify_time u64::MAX is reserved for 'never' (use None)"));
        }
        let s = self.my_slot()?;
        s.write(|s| {
            s.deadline.store(c.deadline, Ordering::Relaxed);
            s.cpu_estimate.store(c.cpu_estimate.unwrap_or(0), Ordering::Relaxed);
            s.notify_time.store(c.notify_time.unwrap_or(NEVER), Ordering::Relaxed);
            s.period.store(c.period.unwrap_or(0), Ordering::Relaxed);
            s.flags.fetch_or(FLAG_CONSTRAINT, Ordering::Relaxed);
        });
        Ok(())
    }

    /// Clear the calling thread's time constraint (it runs by priority and share alone).
    pub fn clear_time_constraint(&self) -> Result<(), Error> {
        let s = self.my_slot()?;
        s.write(|s| {
            s.flags.fetch_and(!FLAG_CONSTRAINT, Ordering::Relaxed);
        });
        Ok(())
    }

    /// Ask for priority `p` for the calling thread (larger = more important; 0 = default). Above the
    /// default needs `CAP_SYS_NICE` (`EPERM` otherwise); lowering is always allowed.
    pub fn set_priority(&self, p: i32) -> Result<(), Error> {
        if p > DEFAULT_PRIORITY && !self.privileged {
            return Err(Error::PermissionDenied("raising priority above the default needs CAP_SYS_NICE"));
        }
        let s = self.my_slot()?;
        s.write(|s| {
            s.priority.store(p, Ordering::Relaxed);
            s.flags.fetch_or(FLAG_PRIORITY, Ordering::Relaxed);
        });
        Ok(())
    }

    /// Ask for share `n` for the calling thread (1 = default; 0 = run only when nothing with a share
    /// wants the CPU). Above the default needs `CAP_SYS_NICE` (`EPERM` otherwise).
    pub fn set_share(&self, n: u32) -> Result<(), Error> {
        if n > DEFAULT_SHARE && !self.privileged {
            return Err(Error::PermissionDenied("raising share above the default needs CAP_SYS_NICE"));
        }
        let s = self.my_slot()?;
        s.write(|s| {
            s.share.store(n, Ordering::Relaxed);
            s.flags.fetch_or(FLAG_SHARE, Ordering::Relaxed);
        });
        Ok(())
    }

    /// Availability of the calling thread (SMART §3.4.3), or `None` until the scheduler first wrote it.
    pub fn availability(&self) -> Result<Option<Availability>, Error> {
        let s = self.my_slot()?;
        Ok(s.availability().map(|(c, a)| Availability { consumption_rate: c, allocation_rate: a }))
    }

    /// Take the calling thread's pending notification, if any: works with or without a signal
    /// handler (the scheduler counts notifications in the slot before it signals).
    pub fn take_notification(&self) -> Result<Option<Notified>, Error> {
        let s = self.my_slot()?;
        let n = s.notifications.load(Ordering::Acquire);
        let taken = s.taken.load(Ordering::Relaxed);
        if n == taken {
            return Ok(None);
        }
        s.taken.store(n, Ordering::Relaxed);
        Ok(Some(Notified {
            deadline: s.last_notified_deadline.load(Ordering::Acquire),
            count: n.wrapping_sub(taken),
            passed: s.last_passed.load(Ordering::Relaxed) != 0,
        }))
    }

    /// Claim the calling thread's slot now (so the scheduler knows it before its first constraint)
    /// and return its thread id.
    pub fn attach_thread(&self) -> Result<u32, Error> {
        self.my_slot().map(|s| s.tid.load(Ordering::Relaxed))
    }
}

/// Call `handler` (in signal context) on each notification signal, in addition to counting it.
/// `None` removes the handler. Works only when registered with a signal.
pub fn on_notify(handler: Option<NotifyHandler>) -> Result<(), Error> {
    let s = Smart::get().ok_or(Error::NotRegistered)?;
    if s.signal == 0 {
        return Err(Error::Invalid("registered without a notification signal"));
    }
    USER_HANDLER.store(handler);
    Ok(())
}

/// Notification signals this process received so far, and the deadline the last one carried.
pub fn signals_received() -> (u64, u64) {
    let n = SIGNALS.load(Ordering::Acquire);
    (n, SIGNAL_DEADLINE.load(Ordering::Relaxed))
}

/// The registration, or [`Error::NotRegistered`].
pub fn smart() -> Result<&'static Smart, Error> {
    Smart::get().ok_or(Error::NotRegistered)
}

/// [`Smart::take_notification`] on the registration.
pub fn take_notification() -> Result<Option<Notified>, Error> {
    smart()?.take_notification()
}
