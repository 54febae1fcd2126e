//! What klogger's recording tests share: a pipe to ping-pong a byte through, the clock the
//! recordings use, and the calls on the test threads themselves (through nix; the one `unsafe`
//! block of the tests is [`fifo_on_cpu0`]'s sched_setscheduler, which nix does not wrap).
#![allow(dead_code)] // each test file uses its own part

use std::os::fd::{BorrowedFd, OwnedFd};

use nix::fcntl::OFlag;
use nix::sched::CpuSet;
use nix::time::ClockId;
use nix::unistd::Pid;

/// A pipe (read end, write end), closed on exec.
pub fn pipe() -> (OwnedFd, OwnedFd) {
    nix::unistd::pipe2(OFlag::O_CLOEXEC).expect("pipe2")
}

/// Reads one byte from `fd`, blocking until there is one.
pub fn rd(fd: BorrowedFd<'_>) {
    assert_eq!(nix::unistd::read(fd, &mut [0u8]), Ok(1));
}

/// Writes one byte to `fd`.
pub fn wr(fd: BorrowedFd<'_>) {
    assert_eq!(nix::unistd::write(fd, &[1u8]), Ok(1));
}

/// CLOCK_MONOTONIC in ns, the clock of klogger's records.
pub fn monotonic_ns() -> u64 {
    let ts = nix::time::clock_gettime(ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC");
    ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64
}

/// Whether the tests run as root (recording needs it).
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The calling thread's id.
pub fn gettid() -> u32 {
    nix::unistd::gettid().as_raw() as u32
}

/// Pins the calling thread to CPU 0 and switches it to SCHED_FIFO 1. Returns false if not allowed.
pub fn fifo_on_cpu0() -> bool {
    let mut set = CpuSet::new();
    if set.set(0).is_err() || nix::sched::sched_setaffinity(Pid::from_raw(0), &set).is_err() {
        return false;
    }
    let p = libc::sched_param { sched_priority: 1 };
    // SAFETY: `p` is a valid sched_param that outlives the call; pid 0 is the calling thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}
