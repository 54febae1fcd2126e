//! The two things the suite does that `std` and `nix` leave unsafe, and the only unsafe code of this
//! crate: setting limits in the child between `fork` and `exec` (`CommandExt::pre_exec` is unsafe
//! whatever the closure does), and `wait4(2)`, which neither `std` nor `nix` wraps, for the child's
//! peak resident set. Killing the group and asking for the effective uid go through `nix` in
//! `main.rs`.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus};

use nix::sys::resource::{setrlimit, Resource};

/// Makes `cmd`'s child lead a session (and process group) of its own, so that the group can be
/// killed whole, with an address space of at most `address_limit` bytes and no core dumps. Failures
/// are ignored, as before: a limit that cannot be set leaves the case to run without it.
pub fn limit_and_detach(cmd: &mut Command, address_limit: u64) {
    // SAFETY: the closure runs in the forked child before `exec`, where only async-signal-safe work
    // is allowed. It makes three system calls (`setrlimit` twice, `setsid`) through nix's thin
    // wrappers, whose arguments are integers and a `struct rlimit` on the stack; it does not
    // allocate, take a lock or touch memory shared with other threads of the parent.
    unsafe {
        cmd.pre_exec(move || {
            let _ = setrlimit(Resource::RLIMIT_AS, address_limit, address_limit);
            let _ = setrlimit(Resource::RLIMIT_CORE, 0, 0);
            let _ = nix::unistd::setsid();
            Ok(())
        });
    }
}

/// How a child ended, with its peak resident set.
pub struct Reaped {
    /// Exit code or terminating signal.
    pub status: ExitStatus,
    /// Maximum resident set size, bytes (`ru_maxrss` is in KiB).
    pub max_rss: u64,
}

/// `wait4(pid, WNOHANG)`: the child's end if it has ended (reaping it), `Ok(None)` while it runs.
pub fn try_wait_with_usage(pid: u32) -> io::Result<Option<Reaped>> {
    let pid = pid as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: `struct rusage` is integers and `struct timeval`s only, so all-zero is a valid value;
    // `wait4` writes one `int` and one `struct rusage` through pointers to these two live locals
    // of exactly those types, and retains neither pointer.
    let (r, ru) = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        let r = libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru);
        (r, ru)
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    if r != pid {
        return Ok(None);
    }
    Ok(Some(Reaped { status: ExitStatus::from_raw(status), max_rss: ru.ru_maxrss as u64 * 1024 }))
}
