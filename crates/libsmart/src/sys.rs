//! All of libsmart's unsafe code but the C ABI's: each block says which invariant makes it sound.
//! (The C ABI, [`crate::capi`], takes raw pointers from C and keeps its unsafe at that boundary.)
//! Everything else reaches the system through `nix`, `rustix`, `memmap2` and `std`, safely.
//!
//! What is here, and why it cannot be safe elsewhere:
//!
//! * [`SharedMap`]: a shared region seen as a [`Header`] and [`Slot`]s. Mapping and unmapping are
//!   memmap2's ([`MmapRaw`]), but turning bytes another process writes into Rust references is ours.
//!   It maps only files sealed against shrinking and at least as long as the mapping, and hands out
//!   references inside the mapping only.
//! * [`with_borrowed_fd`]: `proto`'s public functions take a `RawFd` (callers pass `as_raw_fd()` of a
//!   socket they hold); rustix wants it borrowed.
//! * [`PollSet`]: `poll(2)` over `RawFd`s (`server::wait_readable` takes the `RawFd`s of
//!   `Registry::event_fds`); nix and rustix poll only borrowed descriptors.
//! * The notification signal: installing its handler (`sigaction`: nix's `Signal` has no real-time
//!   signals and rustix has no safe `sigaction`), reading the `siginfo` the kernel passes it, and the
//!   application's handler kept in an atomic ([`HandlerCell`]).
//! * [`queue_signal_to_thread`]: `rt_tgsigqueueinfo(2)`, which neither nix nor rustix wraps.
//! * [`at_fork_in_child`]: `pthread_atfork(3)`, which neither wraps.

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};

use memmap2::{MmapOptions, MmapRaw};
use nix::fcntl::{fcntl, FcntlArg, SealFlag};

use crate::layout::{Header, Slot, HEADER_SIZE, SLOT_SIZE};

// ---------------------------------------------------------------------------------------------
// The shared region.

/// The size of `fd`'s file if it is sealed against shrinking; `Ok(None)` if it is not (a file that
/// cannot be sealed at all, not a memfd, fails `F_GET_SEALS` and is not either).
pub(crate) fn sealed_size(fd: &OwnedFd) -> io::Result<Option<u64>> {
    match fcntl(fd, FcntlArg::F_GET_SEALS) {
        Ok(seals) if SealFlag::from_bits_retain(seals).contains(SealFlag::F_SEAL_SHRINK) => {}
        _ => return Ok(None),
    }
    Ok(Some(nix::sys::stat::fstat(fd)?.st_size as u64))
}

// What `header` and `slot` rely on besides the mapping: the types' alignment divides the page size
// (mappings start on a page) and the offsets of the slots.
const _: () = assert!(std::mem::align_of::<Header>() <= 4096 && std::mem::size_of::<Header>() == HEADER_SIZE);
const _: () = assert!(std::mem::align_of::<Slot>() <= 4096 && std::mem::size_of::<Slot>() == SLOT_SIZE);
const _: () = assert!(HEADER_SIZE % std::mem::align_of::<Slot>() == 0);
const _: () = assert!(SLOT_SIZE % std::mem::align_of::<Slot>() == 0);

/// The first `len` bytes of a region's file, mapped shared and read-write, seen as a [`Header`] and
/// the [`Slot`]s that fit after it. Unmapped when dropped.
pub(crate) struct SharedMap {
    map: MmapRaw,
}

impl SharedMap {
    /// Maps the first `len` bytes of `fd`. Refuses with `EPERM` a file that is not sealed against
    /// shrinking, and with `EINVAL` one shorter than `len` or a `len` shorter than the header. The
    /// callers have checked both already (with their own errors); they are checked again here so
    /// that this type alone guarantees what [`SharedMap::header`] and [`SharedMap::slot`] need: the
    /// file can never become shorter than the mapping, so no access to it can fault.
    pub(crate) fn new(fd: &OwnedFd, len: usize) -> io::Result<SharedMap> {
        let size = sealed_size(fd)?.ok_or_else(|| io::Error::from_raw_os_error(libc::EPERM))?;
        if len < HEADER_SIZE || size < len as u64 {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let map = MmapOptions::new().len(len).map_raw(fd)?;
        Ok(SharedMap { map })
    }

    /// The header at the start of the mapping.
    pub(crate) fn header(&self) -> &Header {
        // SAFETY: the mapping is at least HEADER_SIZE bytes (checked in `new`) and starts on a page,
        // which satisfies Header's alignment (asserted above). The file is sealed against shrinking
        // and was at least that long, so the bytes stay backed while `self` lives, and the borrow
        // does not outlive `self`, which unmaps only on drop. Every byte of a Header is inside an
        // atomic (its reserved words too), so any bit pattern is a valid value and writes by the
        // other process through its own mapping are concurrent atomic accesses, which the types
        // allow; nothing here creates a `&mut` to the mapping.
        unsafe { &*self.map.as_ptr().cast::<Header>() }
    }

    /// Slot `i`; panics unless the whole slot lies inside the mapping.
    pub(crate) fn slot(&self, i: usize) -> &Slot {
        let start = i.checked_mul(SLOT_SIZE).and_then(|o| o.checked_add(HEADER_SIZE));
        let start = start.filter(|s| s.checked_add(SLOT_SIZE).is_some_and(|end| end <= self.map.len()));
        let start =
            start.unwrap_or_else(|| panic!("slot {i} is outside a mapping of {} bytes", self.map.len()));
        // SAFETY: as for `header`: the slot's bytes lie inside the mapping (checked just above), it
        // starts at HEADER_SIZE + i * SLOT_SIZE from a page boundary, a multiple of Slot's alignment
        // (asserted above), the sealed file keeps them backed while `self` lives, and a Slot is
        // atomics only (reserved words included), written by the other process only atomically.
        unsafe { &*self.map.as_ptr().add(start).cast::<Slot>() }
    }
}

// ---------------------------------------------------------------------------------------------
// Descriptors given as numbers.

/// Calls `f` with `fd` borrowed, for the public functions of [`crate::proto`], which take the
/// `RawFd` of a socket the caller holds open during the call. A negative number fails with `EBADF`,
/// as the system call would.
pub(crate) fn with_borrowed_fd<R>(
    fd: RawFd,
    f: impl FnOnce(BorrowedFd<'_>) -> io::Result<R>,
) -> io::Result<R> {
    if fd < 0 {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    // SAFETY: `fd` is not -1 (checked). The borrow lives only while `f` runs, which makes one system
    // call on it and keeps no copy; the caller owns the descriptor and keeps it open for the call
    // (proto documents this). If a caller broke that, the system call would fail with EBADF or act
    // on whatever file has that number, exactly as the raw libc call this replaced did: no memory
    // of this process is at stake, and no descriptor is closed through the borrow.
    f(unsafe { BorrowedFd::borrow_raw(fd) })
}

/// Descriptors to wait on with `poll(2)`, kept between calls so that a loop does not allocate.
#[derive(Default)]
pub(crate) struct PollSet {
    fds: Vec<libc::pollfd>,
}

impl PollSet {
    /// Forgets every descriptor (keeps the memory).
    pub(crate) fn clear(&mut self) {
        self.fds.clear();
    }

    /// Waits for `fd` to be readable (or hung up).
    pub(crate) fn push(&mut self, fd: RawFd) {
        self.fds.push(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
    }

    /// No descriptor to wait on.
    pub(crate) fn is_empty(&self) -> bool {
        self.fds.is_empty()
    }

    /// Whether descriptor `i` (in the order pushed) had an event in the last [`PollSet::poll`].
    pub(crate) fn ready(&self, i: usize) -> bool {
        self.fds[i].revents != 0
    }

    /// `poll(2)` for at most `timeout_ms` (0: do not wait): how many descriptors had an event.
    pub(crate) fn poll(&mut self, timeout_ms: libc::c_int) -> io::Result<usize> {
        // SAFETY: the pointer and count describe this Vec's initialised `pollfd`s, which poll only
        // reads and writes (`revents`) until it returns, and the Vec is borrowed mutably meanwhile.
        // Descriptors are plain numbers to poll: one that is not open is reported (POLLNVAL), not
        // used, so no descriptor needs to be borrowed.
        let n = unsafe { libc::poll(self.fds.as_mut_ptr(), self.fds.len() as libc::nfds_t, timeout_ms) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The notification signal.

/// The application's notification handler (`extern "C" fn(deadline)`), or none, in an atomic word,
/// so that the signal handler reads it with one load while another thread replaces it.
pub(crate) struct HandlerCell(AtomicUsize);

impl HandlerCell {
    /// No handler.
    pub(crate) const fn new() -> HandlerCell {
        HandlerCell(AtomicUsize::new(0))
    }

    /// Replaces the handler.
    pub(crate) fn store(&self, h: Option<extern "C" fn(u64)>) {
        self.0.store(h.map_or(0, |h| h as usize), Ordering::Release);
    }

    /// The handler (async-signal-safe: one atomic load).
    pub(crate) fn load(&self) -> Option<extern "C" fn(u64)> {
        let w = self.0.load(Ordering::Acquire);
        // SAFETY: the word is private and only `store` writes it: either 0 or the address of an
        // `extern "C" fn(u64)` (function pointers are never null, so 0 means none). Functions live
        // for the whole program, and a function pointer cast to usize and back is the same pointer.
        (w != 0).then(|| unsafe { std::mem::transmute::<usize, extern "C" fn(u64)>(w) })
    }
}

/// The handler `install_notify_handler` installs: hands the deadline the scheduler put in
/// `si_value` to [`crate::client::notified`], which only touches atomics (async-signal-safe).
extern "C" fn on_signal(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: installed with SA_SIGINFO, so the kernel passes a valid `siginfo_t` that lives while
    // the handler runs; it is only read. `si_value` is the union of the sigqueue family, read as the
    // pointer-sized member the scheduler filled (a 64-bit deadline on the 64-bit targets supported).
    let deadline = unsafe { (*info).si_value().sival_ptr as u64 };
    crate::client::notified(deadline);
}

/// Why the notification handler could not be installed.
pub(crate) enum InstallError {
    /// The signal already has another handler in this process.
    Busy,
    /// `sigaction` failed (an invalid signal number).
    Io(io::Error),
}

/// Installs libsmart's handler for `sig` (`SA_SIGINFO | SA_RESTART`, empty mask), unless the signal
/// already has a handler other than the default or ours.
pub(crate) fn install_notify_handler(sig: i32) -> Result<(), InstallError> {
    let ours = on_signal as *const () as libc::sighandler_t;
    // SAFETY: `struct sigaction` is plain data (integers, a mask, a handler address), so all-zero
    // is a valid value; with a null new action, sigaction only writes the current one into `old`, a
    // live local of that type.
    let old = unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, std::ptr::null(), &mut old) < 0 {
            return Err(InstallError::Io(io::Error::last_os_error()));
        }
        old
    };
    if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != ours {
        return Err(InstallError::Busy);
    }
    // SAFETY: as above, `sa` starts zeroed and `sigemptyset` writes only its mask. The handler is
    // `on_signal`, an `extern "C" fn(c_int, *mut siginfo_t, *mut c_void)`, the signature SA_SIGINFO
    // calls; it lives for the program's life and is async-signal-safe (atomics, then the
    // application's handler, which `on_notify` requires to be async-signal-safe too).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = ours;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        if libc::sigaction(sig, &sa, std::ptr::null_mut()) < 0 {
            return Err(InstallError::Io(io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// The siginfo the kernel copies to the target for `rt_tgsigqueueinfo` (x86-64/aarch64 layout:
/// 128 bytes; `si_pid`, `si_uid`, `si_value` of the `_rt` member).
#[repr(C)]
struct RtSigInfo {
    signo: i32,
    errno: i32,
    code: i32,
    _pad: i32,
    pid: i32,
    uid: u32,
    value: u64,
    _rest: [u64; 12],
}
const _: () = assert!(std::mem::size_of::<RtSigInfo>() == 128);

/// Sends `sig` to thread `tid` of process `pid` with `value` in `si_value`, `si_code = SI_QUEUE`
/// and this process's pid and uid as the sender (`rt_tgsigqueueinfo(2)`, what `sigqueue(3)` does for
/// a whole process).
pub(crate) fn queue_signal_to_thread(pid: u32, tid: u32, sig: i32, value: u64) -> io::Result<()> {
    let info = RtSigInfo {
        signo: sig,
        errno: 0,
        code: libc::SI_QUEUE,
        _pad: 0,
        pid: nix::unistd::getpid().as_raw(),
        uid: nix::unistd::getuid().as_raw(),
        value,
        _rest: [0; 12],
    };
    // SAFETY: the system call reads exactly 128 bytes of siginfo from the pointer, which points to
    // `info`, a fully initialised 128-byte repr(C) struct (asserted above) that outlives the call;
    // the other arguments are integers. It keeps no pointer.
    let r = unsafe {
        libc::syscall(libc::SYS_rt_tgsigqueueinfo, pid as libc::pid_t, tid as libc::pid_t, sig, &info)
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Has `child` run in the child process after each `fork()` of this process (`pthread_atfork(3)`).
/// It runs in a copy of a possibly multi-threaded process, so it must be async-signal-safe.
pub(crate) fn at_fork_in_child(child: extern "C" fn()) {
    // SAFETY: registers a function pointer, which is valid for the program's life, with no prepare
    // or parent handler; the C library keeps the pointer and nothing else.
    unsafe { libc::pthread_atfork(None, None, Some(child)) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::memfd::{memfd_create, MFdFlags};
    use nix::unistd::ftruncate;

    #[test]
    fn only_sealed_files_long_enough_are_mapped() {
        let fd = memfd_create(c"t", MFdFlags::MFD_ALLOW_SEALING).unwrap();
        ftruncate(&fd, 4096).unwrap();
        let err = |r: io::Result<SharedMap>| r.err().and_then(|e| e.raw_os_error());
        assert_eq!(err(SharedMap::new(&fd, 4096)), Some(libc::EPERM), "not sealed");
        fcntl(&fd, FcntlArg::F_ADD_SEALS(SealFlag::F_SEAL_SHRINK)).unwrap();
        assert_eq!(sealed_size(&fd).unwrap(), Some(4096));
        assert_eq!(err(SharedMap::new(&fd, 8192)), Some(libc::EINVAL), "longer than the file");
        assert_eq!(err(SharedMap::new(&fd, HEADER_SIZE - 1)), Some(libc::EINVAL), "shorter than a header");
        let m = SharedMap::new(&fd, HEADER_SIZE + 2 * SLOT_SIZE).unwrap();
        m.slot(1).deadline.store(5, Ordering::Relaxed);
        let all = SharedMap::new(&fd, 4096).unwrap();
        assert_eq!(all.slot(1).deadline.load(Ordering::Relaxed), 5, "both map the same file");
        assert!(std::panic::catch_unwind(|| m.slot(2).seq.load(Ordering::Relaxed)).is_err());
    }

    #[test]
    fn the_handler_cell_gives_back_what_was_stored() {
        extern "C" fn h(_: u64) {}
        let c = HandlerCell::new();
        assert!(c.load().is_none());
        c.store(Some(h));
        assert_eq!(c.load().map(|f| f as usize), Some(h as extern "C" fn(u64) as usize));
        c.store(None);
        assert!(c.load().is_none());
    }
}
