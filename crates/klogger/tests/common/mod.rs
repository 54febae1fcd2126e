//! What klogger's recording tests share: a pipe to ping-pong a byte through, and the clock the
//! recordings use.
#![allow(dead_code)] // each test file uses its own part

use std::os::fd::{FromRawFd, OwnedFd};

/// A pipe (read end, write end), closed on exec.
pub fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// Reads one byte from `fd`, blocking until there is one.
pub fn rd(fd: i32) {
    let mut b = 0u8;
    assert_eq!(unsafe { libc::read(fd, (&mut b as *mut u8).cast(), 1) }, 1);
}

/// Writes one byte to `fd`.
pub fn wr(fd: i32) {
    let b = 1u8;
    assert_eq!(unsafe { libc::write(fd, (&b as *const u8).cast(), 1) }, 1);
}

/// CLOCK_MONOTONIC in ns, the clock of klogger's records.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
