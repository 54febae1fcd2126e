//! The scheduler side: [`Registry`] accepts registrations, maps the regions, and answers "what does
//! thread `tid` ask for" from shared memory; it writes availability and sends notifications.
//!
//! It is driven from the scheduler's own loop and never blocks: call [`Registry::poll`] often (every
//! iteration, or at least every millisecond; it costs one `poll(2)` plus a memory load per registered
//! process when nothing happens), and [`Registry::constraint`] / [`Registry::lookup`] whenever a decision
//! about a task needs them (a hash lookup and a seqlock read: no system call).
//!
//! A scheduler whose loop must not map memory (scx_rustland_core forbids `mmap` after loading) splits
//! it: a thread sleeps in [`wait_readable`] on [`Registry::event_fds`] and calls `poll` when woken
//! (registrations, exits), and the loop calls [`Registry::poll_claims`] (threads' first constraints).
//!
//! ## How `scx_smart` uses it
//!
//! ```no_run
//! # use libsmart::server::Registry;
//! # fn policy_task(_tid: u32) -> sched::TaskId { sched::TaskId(0) }
//! # let mut policy = sched::build("smart", &Default::default(), 1).unwrap();
//! # let now: sched::Nanos = libsmart::now(); // CLOCK_MONOTONIC ns, as bpf_ktime_get_ns()
//! let mut reg = Registry::bind_default()?;   // $SMART_SOCKET or /run/smart/scx_smart.sock
//! # let (tid, mut last_seq) = (0u32, 0u32);
//! loop {
//!     reg.poll();                              // once per loop iteration: registrations, exits
//!     // ... for a task the kernel reports runnable or stopped (its pid in the kernel is the tid):
//!     if let Some(q) = reg.lookup(tid) {
//!         if q.seq != last_seq {               // the thread changed something since last time
//!             last_seq = q.seq;
//!             policy.set_time_constraint(policy_task(tid), q.constraint, now);
//!             policy.set_params(policy_task(tid), &q.params(&sched::TaskParams::default()), now);
//!         }
//!     }
//!     // ... after decisions: notifications and availability go back to the threads.
//!     let mut out = Vec::new();
//!     policy.take_notifications(&mut out);
//!     for n in out {
//!         # let tid_of = |_t: sched::TaskId| 0u32;
//!         let _ = reg.notify(tid_of(n.task), n.deadline, n.passed);
//!     }
//!     reg.set_availability(tid, &policy.availability(policy_task(tid), now));
//!     # break;
//! }
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Times in constraints are `CLOCK_MONOTONIC` nanoseconds, the clock of `bpf_ktime_get_ns()`, so the
//! scheduler can compare them with its own `now` directly.
//!
//! ## Trust
//!
//! The region's contents are written by the application at any moment, so everything read from it is
//! validated each time: snapshots are bounded (a slot held mid-write reads as "no request"), a thread id
//! is served only after the kernel confirmed it belongs to the registering process
//! (`/proc/<pid>/task/<tid>` for the pid `SO_PEERCRED` gave), and priority/share requests above the
//! defaults are clamped unless that process held `CAP_SYS_NICE` when it connected.
//!
//! A hostile process cannot make the scheduler's loop slow either: the slot count is read once, at
//! registration; a poll spends at most [`SCAN_BUDGET`] on indexing claimed slots (at most
//! [`MAX_TID_CHECKS_PER_POLL`] `/proc` checks), the processes taking turns, so a process that rewrites
//! all its slots at every poll only delays its own indexing; a lookup spins at most
//! [`SNAPSHOT_TRIES`] times on a slot held mid-write. Connections are bounded too: at most
//! [`MAX_PENDING`] wait for their registration, each for at most [`HELLO_TIMEOUT`], and one user holds
//! at most [`MAX_PROCESSES_PER_UID`] registrations and [`MAX_SLOTS_PER_UID`] slots; a poll accepts at
//! most [`MAX_PENDING`] connections. A flood of silent connections can still make
//! other processes' registrations fail (they are closed unanswered) until [`HELLO_TIMEOUT`] passes.

use std::cell::Cell;
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::layout;
use crate::proto::{self, Hello, Reply, HELLO_MAGIC};
use crate::region::Region;
use crate::{sys, DEFAULT_PRIORITY, DEFAULT_SHARE};

/// Tries of a seqlock snapshot before a slot is treated as "no request" for this decision.
pub const SNAPSHOT_TRIES: u32 = 64;
/// Largest share a privileged process may ask for (larger requests are clamped to it).
pub const MAX_SHARE: u32 = 10_000;
/// Most processes registered at once; later ones are refused with `EAGAIN`.
pub const MAX_PROCESSES: usize = 4096;
/// Most processes of one user registered at once (a quarter of [`MAX_PROCESSES`], so that one user
/// cannot take every registration); later ones are refused with `EAGAIN`.
pub const MAX_PROCESSES_PER_UID: usize = MAX_PROCESSES / 4;
/// Most thread slots of all registered processes together; a registration that would pass it is
/// refused with `EAGAIN`. The scheduler keeps 12 bytes per slot of a process, and in `scx_smart` they
/// come from a memory arena of fixed size (scx_rustland_core's 64 MiB): 4,096 processes of the
/// default 256 slots fit, 200 of the largest regions (16,384 slots) would have exhausted it, and an
/// allocation that fails aborts the scheduler.
pub const MAX_SLOTS_TOTAL: u64 = 1 << 20;
/// Most thread slots of one user's registered processes (a quarter of [`MAX_SLOTS_TOTAL`]).
pub const MAX_SLOTS_PER_UID: u64 = MAX_SLOTS_TOTAL / 4;
/// Tries of a seqlock snapshot when indexing a slot (a slot held mid-write is retried next poll).
pub const SCAN_TRIES: u32 = 8;
/// Work one [`Registry::poll`] (or [`Registry::poll_claims`]) may spend indexing claimed slots, in
/// units: reading a slot costs [`SLOT_COST`], checking a thread id against `/proc` (a `stat(2)`, a
/// few microseconds) [`TID_CHECK_COST`]. What is left over waits for the next poll, so that a process
/// rewriting thousands of slots at every poll slows its own indexing, not the scheduler's loop.
pub const SCAN_BUDGET: u32 = 8192;
/// Units of [`SCAN_BUDGET`] for reading one slot.
pub const SLOT_COST: u32 = 1;
/// Units of [`SCAN_BUDGET`] for checking one thread id against `/proc`.
pub const TID_CHECK_COST: u32 = 64;
/// Most thread ids checked against `/proc` in one poll.
pub const MAX_TID_CHECKS_PER_POLL: u32 = SCAN_BUDGET / TID_CHECK_COST;
/// Most connections waiting to send their registration; more are closed at once.
pub const MAX_PENDING: usize = 256;
/// How long a connection may take to send its registration before it is dropped.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(1);
/// `CAP_SYS_NICE`, the capability to raise scheduling importance (capability.h).
pub const CAP_SYS_NICE: u32 = 23;

/// Whether a process with effective capability set `cap_eff` may raise priority or share above the
/// defaults: exactly when it holds `CAP_SYS_NICE`, as for `nice(2)` or `sched_setscheduler(2)`. Root
/// without that capability (dropped) may not.
pub fn may_raise(cap_eff: u64) -> bool {
    cap_eff & (1u64 << CAP_SYS_NICE) != 0
}

/// The `CapEff:` field of a `/proc/<pid>/status` text.
pub fn parse_cap_eff(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
    u64::from_str_radix(line["CapEff:".len()..].trim(), 16).ok()
}

/// Clamp a request to what the process may have: unprivileged processes may only lower their
/// importance (priority ≤ default, share ≤ default); nobody gets more than [`MAX_SHARE`].
pub fn clamp_params(priority: i32, share: u32, privileged: bool) -> (i32, u32) {
    if privileged {
        (priority, share.min(MAX_SHARE))
    } else {
        (priority.min(DEFAULT_PRIORITY), share.min(DEFAULT_SHARE))
    }
}

/// What a thread asks for, as read from its slot (already clamped to what its process may have).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The process (its pid as `SO_PEERCRED` gave it).
    pub pid: u32,
    /// Seqlock sequence of the snapshot: changes whenever the thread changed anything.
    pub seq: u32,
    /// The time constraint, if one is set.
    pub constraint: Option<sched::TimeConstraint>,
    /// The priority it asked for (clamped), if it asked.
    pub priority: Option<i32>,
    /// The share it asked for (clamped), if it asked.
    pub share: Option<u32>,
}

impl Request {
    /// `base` with this request's priority and share applied.
    pub fn params(&self, base: &sched::TaskParams) -> sched::TaskParams {
        let mut p = base.clone();
        if let Some(pr) = self.priority {
            p.priority = pr;
        }
        if let Some(s) = self.share {
            p.share = s;
        }
        p
    }
}

/// A registered process, as [`Registry::processes`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Pid (`SO_PEERCRED`).
    pub pid: u32,
    /// Uid (`SO_PEERCRED`).
    pub uid: u32,
    /// Whether it may raise priority/share.
    pub privileged: bool,
    /// Notification signal (0 = none).
    pub signal: i32,
    /// Threads with a verified slot.
    pub threads: Vec<u32>,
}

/// Counters, for the scheduler's statistics.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Registrations accepted.
    pub registered: u64,
    /// Registrations refused (bad message, bad region, bad signal, too many).
    pub refused: u64,
    /// Processes dropped because their socket closed (they exited or unregistered).
    pub exited: u64,
    /// Slots naming a thread that is not the registering process's (never served).
    pub foreign_tids: u64,
    /// Lookups that found a slot being rewritten for all [`SNAPSHOT_TRIES`] tries.
    pub torn_reads: u64,
    /// Requests above the defaults clamped because the process lacks `CAP_SYS_NICE`.
    pub clamped: u64,
    /// Notifications counted in a slot.
    pub notifications: u64,
    /// Notification signals that failed to send (the thread exited meanwhile).
    pub signal_errors: u64,
    /// Thread ids checked against `/proc` (at most [`MAX_TID_CHECKS_PER_POLL`] a poll).
    pub tid_checks: u64,
    /// Indexing passes cut short by [`SCAN_BUDGET`] (they go on in the next poll).
    pub scans_deferred: u64,
}

struct Pending {
    stream: UnixStream,
    cred: libc::ucred,
    since: Instant,
}

struct Proc {
    pid: u32,
    uid: u32,
    privileged: bool,
    signal: i32,
    region: Region,
    stream: UnixStream,
    claims_seen: u32,
    /// An indexing pass under way (it may take several polls: see [`SCAN_BUDGET`]).
    scan: Option<Scan>,
    /// Per slot: the (tid, generation) last examined, and whether it was verified and indexed.
    known: Vec<(u32, u32, bool)>,
}

/// An indexing pass over a process's slots.
#[derive(Copy, Clone)]
struct Scan {
    /// The header's `claims` when the pass began: seen once the pass completes.
    claims: u32,
    /// The next slot to read.
    next: u32,
    /// A slot was held mid-write: pass again.
    again: bool,
}

#[derive(Copy, Clone)]
struct Entry {
    proc: usize,
    slot: u32,
    generation: u32,
}

/// The scheduler's end: a listening socket and the regions of the registered processes.
pub struct Registry {
    path: PathBuf,
    listener: UnixListener,
    pending: Vec<Pending>,
    procs: Vec<Option<Proc>>,
    index: HashMap<u32, Entry>,
    stats: Stats,
    torn: Cell<u64>,
    clamped: Cell<u64>,
    pollfds: sys::PollSet,
    /// What is left of [`SCAN_BUDGET`] in this poll.
    budget: u32,
    /// The process whose pass goes first in the next poll (turns rotate).
    first: usize,
}

/// Waits until one of `fds` is readable (or hung up), for at most `timeout`. Returns whether one is;
/// an interrupted wait returns `Ok(false)`.
pub fn wait_readable(fds: &[RawFd], timeout: Duration) -> io::Result<bool> {
    let mut set = sys::PollSet::default();
    for &fd in fds {
        set.push(fd);
    }
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    match set.poll(ms) {
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(false),
        r => r.map(|n| n > 0),
    }
}

fn tid_belongs_to(tid: u32, pid: u32) -> bool {
    tid != 0 && Path::new(&format!("/proc/{pid}/task/{tid}")).exists()
}

fn process_may_raise(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| parse_cap_eff(&s))
        .is_some_and(may_raise)
}

impl Registry {
    /// Listen at `$SMART_SOCKET`, or [`crate::DEFAULT_SOCKET`].
    pub fn bind_default() -> io::Result<Registry> {
        Registry::bind(crate::client::socket_path())
    }

    /// Listen at `path`: create its directory (mode 0755) if needed, replace a stale socket (refuse
    /// with `AddrInUse` if another scheduler still answers on it), and make the socket mode 0666 so
    /// every user's processes can register.
    pub fn bind(path: impl AsRef<Path>) -> io::Result<Registry> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.exists() {
                std::fs::create_dir_all(dir)?;
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))?;
            }
        }
        if let Ok(md) = std::fs::symlink_metadata(&path) {
            if !md.file_type().is_socket() {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} exists and is not a socket", path.display()),
                ));
            }
            if UnixStream::connect(&path).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("another scheduler listens on {}", path.display()),
                ));
            }
            std::fs::remove_file(&path)?;
        }
        let listener = UnixListener::bind(&path)?;
        listener.set_nonblocking(true)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666))?;
        Ok(Registry {
            path,
            listener,
            pending: Vec::new(),
            procs: Vec::new(),
            index: HashMap::new(),
            stats: Stats::default(),
            torn: Cell::new(0),
            clamped: Cell::new(0),
            pollfds: sys::PollSet::default(),
            budget: SCAN_BUDGET,
            first: 0,
        })
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Do the pending work, without blocking: accept connections, answer registrations, drop
    /// processes whose socket closed, and index threads that claimed or released slots. Returns how
    /// many registrations, exits and slot changes it handled.
    pub fn poll(&mut self) -> usize {
        self.budget = SCAN_BUDGET;
        let mut events = 0;
        // New connections: at most MAX_PENDING a poll, so that a flood of connections cannot keep one
        // poll (and the lock on the registry) busy; the rest wait in the listen backlog.
        for _ in 0..MAX_PENDING {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    let cred = match proto::peer_cred(&stream) {
                        Ok(c) => c,
                        Err(_) => continue,
                    };
                    if self.pending.len() >= MAX_PENDING {
                        self.stats.refused += 1;
                        continue;
                    }
                    if stream.set_nonblocking(true).is_ok() {
                        self.pending.push(Pending { stream, cred, since: Instant::now() });
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break, // WouldBlock, or a transient error (EMFILE): try again next poll
            }
        }
        // Registrations.
        let mut i = 0;
        while i < self.pending.len() {
            match proto::recv_from::<Hello>(&self.pending[i].stream, libc::MSG_DONTWAIT) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.pending[i].since.elapsed() > HELLO_TIMEOUT {
                        self.pending.swap_remove(i);
                        self.stats.refused += 1;
                    } else {
                        i += 1;
                    }
                }
                Ok(Some((hello, region_fd))) => {
                    let p = self.pending.swap_remove(i);
                    self.register(p, hello, region_fd);
                    events += 1;
                }
                Ok(None) | Err(_) => {
                    self.pending.swap_remove(i);
                    self.stats.refused += 1;
                }
            }
        }
        events += self.reap();
        events + self.index_claims()
    }

    /// Only the part of [`Registry::poll`] that needs no file descriptor: index the threads that claimed
    /// or released slots (a memory load per registered process when nothing changed). A scheduler
    /// that runs registrations in another thread (see [`Registry::event_fds`]) calls this in its own
    /// loop, so that a thread's first constraint is seen at once.
    pub fn poll_claims(&mut self) -> usize {
        self.budget = SCAN_BUDGET;
        self.index_claims()
    }

    /// Index what changed, within what is left of this poll's budget, the processes taking turns
    /// to go first.
    fn index_claims(&mut self) -> usize {
        let n = self.procs.len();
        let mut events = 0;
        for k in 0..n {
            let p = (self.first + k) % n;
            let Some(pr) = &mut self.procs[p] else { continue };
            if pr.scan.is_none() {
                let claims = pr.region.header().claims.load(Ordering::Acquire);
                if claims == pr.claims_seen {
                    continue;
                }
                pr.scan = Some(Scan { claims, next: 0, again: false });
            }
            if self.budget < SLOT_COST + TID_CHECK_COST {
                break;
            }
            events += self.rescan(p);
        }
        self.first = if n == 0 { 0 } else { (self.first + 1) % n };
        events
    }

    /// The descriptors whose readiness means [`Registry::poll`] has work: the listening socket, the
    /// connections waiting for their registration, and the registered processes' sockets (hang-up =
    /// exit). A thread can sleep in [`wait_readable`] on them (without holding the registry) and call
    /// `poll` when it returns, instead of polling on a timer. They stay valid until the next `poll`.
    pub fn event_fds(&self) -> Vec<RawFd> {
        let mut fds = vec![self.listener.as_raw_fd()];
        fds.extend(self.pending.iter().map(|p| p.stream.as_raw_fd()));
        fds.extend(self.procs.iter().flatten().map(|p| p.stream.as_raw_fd()));
        fds
    }

    fn register(&mut self, p: Pending, hello: Hello, fd: Option<OwnedFd>) {
        let (pid, uid) = (p.cred.pid as u32, p.cred.uid);
        let result = (|| {
            if hello.magic != HELLO_MAGIC || hello.version != layout::VERSION {
                return Err(libc::EPROTO);
            }
            if self.procs.iter().flatten().count() >= MAX_PROCESSES
                || self.procs.iter().flatten().filter(|p| p.uid == uid).count() >= MAX_PROCESSES_PER_UID
            {
                return Err(libc::EAGAIN);
            }
            let region = Region::from_fd(fd.ok_or(libc::EBADF)?).map_err(|e| e.errno())?;
            let slots = |of_uid: bool| -> u64 {
                let procs = self.procs.iter().flatten().filter(|p| !of_uid || p.uid == uid);
                procs.map(|p| u64::from(p.region.nslots())).sum()
            };
            let n = u64::from(region.nslots());
            if slots(false) + n > MAX_SLOTS_TOTAL || slots(true) + n > MAX_SLOTS_PER_UID {
                return Err(libc::EAGAIN);
            }
            let signal = region.header().signal.load(Ordering::Relaxed) as i32;
            if signal != 0 && !(libc::SIGRTMIN()..=libc::SIGRTMAX()).contains(&signal) {
                return Err(libc::EINVAL);
            }
            Ok((region, signal))
        })();
        match result {
            Err(errno) => {
                self.stats.refused += 1;
                let _ = proto::send(p.stream.as_raw_fd(), &Reply { status: errno, privileged: 0 }, None);
            }
            Ok((region, signal)) => {
                let privileged = process_may_raise(pid);
                region.header().privileged.store(privileged as u32, Ordering::Relaxed);
                let reply = Reply { status: 0, privileged: privileged as u32 };
                if proto::send(p.stream.as_raw_fd(), &reply, None).is_err() {
                    self.stats.refused += 1;
                    return;
                }
                let known = vec![(0, 0, false); region.nslots() as usize];
                let claims = region.header().claims.load(Ordering::Acquire);
                let pr = Proc {
                    pid,
                    uid,
                    privileged,
                    signal,
                    region,
                    stream: p.stream,
                    claims_seen: claims,
                    scan: Some(Scan { claims, next: 0, again: false }),
                    known,
                };
                let idx = match self.procs.iter().position(Option::is_none) {
                    Some(i) => i,
                    None => {
                        self.procs.push(None);
                        self.procs.len() - 1
                    }
                };
                self.procs[idx] = Some(pr);
                self.stats.registered += 1;
                self.rescan(idx);
            }
        }
    }

    /// Drop processes whose socket reports hang-up or sends anything (the protocol has nothing after
    /// the registration). One `poll(2)` over all of them.
    fn reap(&mut self) -> usize {
        self.pollfds.clear();
        let mut which = Vec::new();
        for (i, p) in self.procs.iter().enumerate() {
            if let Some(p) = p {
                self.pollfds.push(p.stream.as_raw_fd());
                which.push(i);
            }
        }
        if self.pollfds.is_empty() {
            return 0;
        }
        if !self.pollfds.poll(0).is_ok_and(|n| n > 0) {
            return 0;
        }
        let gone: Vec<usize> =
            which.iter().enumerate().filter(|&(k, _)| self.pollfds.ready(k)).map(|(_, &i)| i).collect();
        for &i in &gone {
            self.drop_proc(i);
            self.stats.exited += 1;
        }
        gone.len()
    }

    fn drop_proc(&mut self, i: usize) {
        if let Some(p) = self.procs[i].take() {
            for &(tid, _, indexed) in &p.known {
                if indexed && self.index.get(&tid).is_some_and(|e| e.proc == i) {
                    self.index.remove(&tid);
                }
            }
        }
    }

    /// Goes on with process `p`'s indexing pass, within the budget: reads each slot, drops what its
    /// old owner had indexed, and indexes the new owner once `/proc` confirms the thread is the
    /// process's. Returns how many slots changed.
    fn rescan(&mut self, p: usize) -> usize {
        let mut changes = 0;
        let Some(mut pr) = self.procs[p].take() else { return 0 };
        let Some(mut scan) = pr.scan.take() else {
            self.procs[p] = Some(pr);
            return 0;
        };
        while scan.next < pr.region.nslots() && self.budget >= SLOT_COST + TID_CHECK_COST {
            let i = scan.next;
            scan.next += 1;
            self.budget -= SLOT_COST;
            let Some(mut v) = pr.region.slot(i).snapshot(SCAN_TRIES) else {
                scan.again = true; // held mid-write: read it on the next pass
                continue;
            };
            if v.tid & layout::TID_CLAIMING != 0 {
                v.tid = 0; // being claimed: free until its owner publishes it
            }
            let (old_tid, old_gen, old_indexed) = pr.known[i as usize];
            if (v.tid, v.generation) == (old_tid, old_gen) {
                continue;
            }
            changes += 1;
            if old_indexed && self.index.get(&old_tid).is_some_and(|e| e.proc == p && e.slot == i) {
                self.index.remove(&old_tid);
            }
            let mut indexed = false;
            if v.tid != 0 {
                self.budget -= TID_CHECK_COST;
                self.stats.tid_checks += 1;
                let ok = tid_belongs_to(v.tid, pr.pid);
                let taken = match self.index.get(&v.tid) {
                    None => false,
                    // Another slot claims it too: the one that is still the kernel's truth wins; a
                    // stale entry of a process whose thread exited and whose tid was reused loses.
                    Some(e) if e.proc == p => true,
                    Some(e) => self.procs[e.proc].as_ref().is_some_and(|o| tid_belongs_to(v.tid, o.pid)),
                };
                if ok && !taken {
                    self.index.insert(v.tid, Entry { proc: p, slot: i, generation: v.generation });
                    indexed = true;
                } else {
                    self.stats.foreign_tids += 1;
                }
            }
            pr.known[i as usize] = (v.tid, v.generation, indexed);
        }
        if scan.next < pr.region.nslots() {
            pr.scan = Some(scan); // the budget ran out: go on in the next poll
            self.stats.scans_deferred += 1;
        } else if scan.again {
            pr.scan = Some(Scan { claims: scan.claims, next: 0, again: false });
        } else {
            pr.claims_seen = scan.claims;
        }
        self.procs[p] = Some(pr);
        changes
    }

    fn slot_of(&self, tid: u32) -> Option<(&Proc, &layout::Slot, u32)> {
        let e = self.index.get(&tid)?;
        let p = self.procs[e.proc].as_ref()?;
        Some((p, p.region.slot(e.slot), e.generation))
    }

    /// Everything thread `tid` asks for, or `None` if it is not registered (or its slot changed owner
    /// since the last [`Registry::poll`], or was being rewritten for every try).
    pub fn lookup(&self, tid: u32) -> Option<Request> {
        let (p, s, generation) = self.slot_of(tid)?;
        let Some(v) = s.snapshot(SNAPSHOT_TRIES) else {
            self.torn.set(self.torn.get() + 1);
            return None;
        };
        if v.tid != tid || v.generation != generation {
            return None;
        }
        s.seen_seq.store(v.seq, Ordering::Release);
        let (prio, share) = clamp_params(v.priority, v.share, p.privileged);
        let want_p = v.flags & layout::FLAG_PRIORITY != 0;
        let want_s = v.flags & layout::FLAG_SHARE != 0;
        if (want_p && prio != v.priority) || (want_s && share != v.share) {
            self.clamped.set(self.clamped.get() + 1);
        }
        Some(Request {
            pid: p.pid,
            seq: v.seq,
            constraint: v.constraint(),
            priority: want_p.then_some(prio),
            share: want_s.then_some(share),
        })
    }

    /// The time constraint thread `tid` has set, if any. Call it on every decision about the task.
    pub fn constraint(&self, tid: u32) -> Option<sched::TimeConstraint> {
        self.lookup(tid)?.constraint
    }

    /// The threads with a verified slot (for writing every registered thread's availability).
    pub fn registered_tids(&self) -> impl Iterator<Item = u32> + '_ {
        self.index.keys().copied()
    }

    /// Whether `tid` has a verified slot.
    pub fn is_registered(&self, tid: u32) -> bool {
        self.index.contains_key(&tid)
    }

    /// Publish thread `tid`'s availability (percent of one CPU). `false` if it has no slot.
    pub fn set_availability(&self, tid: u32, a: &sched::Availability) -> bool {
        let Some((_, s, _)) = self.slot_of(tid) else { return false };
        s.availability.store(
            layout::pack_rates(a.consumption_rate as f32, a.allocation_rate as f32),
            Ordering::Release,
        );
        true
    }

    /// Notify thread `tid` that the constraint with `deadline` will be (`passed == false`) or was
    /// (`passed == true`) missed: count it in the slot, then send the process's signal to that thread
    /// with the deadline as `si_value` (`rt_tgsigqueueinfo`, `si_code = SI_QUEUE`). `Ok(false)` if the
    /// thread has no slot; an error if the signal could not be sent (the count stays).
    pub fn notify(&mut self, tid: u32, deadline: u64, passed: bool) -> io::Result<bool> {
        let Some((p, s, _)) = self.slot_of(tid) else { return Ok(false) };
        s.last_notified_deadline.store(deadline, Ordering::Relaxed);
        s.last_passed.store(passed as u32, Ordering::Relaxed);
        s.notifications.fetch_add(1, Ordering::Release);
        let (pid, sig) = (p.pid, p.signal);
        self.stats.notifications += 1;
        if sig == 0 {
            return Ok(true);
        }
        if let Err(e) = sys::queue_signal_to_thread(pid, tid, sig, deadline) {
            self.stats.signal_errors += 1;
            return Err(e);
        }
        Ok(true)
    }

    /// The registered processes.
    pub fn processes(&self) -> Vec<ProcessInfo> {
        self.procs
            .iter()
            .flatten()
            .map(|p| ProcessInfo {
                pid: p.pid,
                uid: p.uid,
                privileged: p.privileged,
                signal: p.signal,
                threads: p.known.iter().filter(|k| k.2).map(|k| k.0).collect(),
            })
            .collect()
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        Stats { torn_reads: self.torn.get(), clamped: self.clamped.get(), ..self.stats }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capability_parsing_and_the_raise_rule() {
        let status = "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\nCapBnd:\t0\n";
        let eff = parse_cap_eff(status).unwrap();
        assert!(may_raise(eff));
        assert!(!may_raise(eff & !(1 << CAP_SYS_NICE)));
        assert_eq!(parse_cap_eff("Name:\tx\n"), None);
        // Unprivileged: lowering passes, raising is clamped to the default.
        assert_eq!(clamp_params(-3, 0, false), (-3, 0));
        assert_eq!(clamp_params(5, 7, false), (DEFAULT_PRIORITY, DEFAULT_SHARE));
        // Privileged: anything, share bounded.
        assert_eq!(clamp_params(5, 7, true), (5, 7));
        assert_eq!(clamp_params(5, u32::MAX, true), (5, MAX_SHARE));
    }

    #[test]
    fn the_running_test_process_has_the_capability_it_reports() {
        // This host runs tests as root with full capabilities; the check must agree with /proc.
        let s = std::fs::read_to_string("/proc/self/status").unwrap();
        let pid = std::process::id();
        assert_eq!(process_may_raise(pid), may_raise(parse_cap_eff(&s).unwrap()));
        assert!(tid_belongs_to(pid, pid));
        assert!(!tid_belongs_to(1, pid) || pid == 1);
    }
}
