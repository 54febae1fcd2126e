//! The C ABI (`include/smart.h`). Every function returns 0 (or a count) on success and a negative
//! errno on failure, and also sets `errno` to it; none unwinds into C (a panic becomes `-EIO`).
//! None is async-signal-safe (a thread's first call claims a slot); call them from normal thread
//! context, and react to notifications from a handler registered with [`smart_on_notify`] by setting
//! a flag.
//!
//! This module keeps its own unsafe code (every other unsafe block is in the crate's `sys` module):
//! the functions that take pointers from C are `unsafe extern "C"`, with the caller's obligations
//! under `# Safety`, and each dereference says in a `SAFETY:` comment which of them it relies on.

use std::ffi::{c_char, c_int, c_uint, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Duration;

use crate::{Error, Options, Smart};

fn set_errno(e: c_int) {
    nix::errno::Errno::set_raw(e);
}

fn ret(r: Result<c_int, Error>) -> c_int {
    match r {
        Ok(v) => v,
        Err(e) => {
            let n = e.errno();
            set_errno(n);
            -n
        }
    }
}

fn guard(f: impl FnOnce() -> Result<c_int, Error>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => ret(r),
        Err(_) => {
            set_errno(libc::EIO);
            -libc::EIO
        }
    }
}

fn opt(v: u64) -> Option<u64> {
    (v != 0).then_some(v)
}

/// `int smart_register(void)`: register with default options (socket `$SMART_SOCKET` or
/// `/run/smart/scx_smart.sock`, 256 slots, signal `SIGRTMIN+4`).
#[no_mangle]
pub extern "C" fn smart_register() -> c_int {
    guard(|| Smart::register().map(|_| 0))
}

/// `int smart_register_opts(const char *socket, int signal, unsigned slots)`: `socket` NULL = default;
/// `signal` 0 = none (poll only), -1 = default; `slots` 0 = default.
///
/// # Safety
/// `socket` is NULL or a NUL-terminated string, valid and unchanged during the call.
#[no_mangle]
pub unsafe extern "C" fn smart_register_opts(socket: *const c_char, signal: c_int, slots: c_uint) -> c_int {
    guard(|| {
        let mut o = Options::default();
        if !socket.is_null() {
            // SAFETY: `socket` is not NULL (checked), and the caller passes a NUL-terminated string
            // that stays valid and unchanged during the call (this function's `# Safety`). The
            // borrow ends before the function returns: the path is copied into a PathBuf.
            let s = unsafe { CStr::from_ptr(socket) };
            o.socket =
                Some(PathBuf::from(s.to_str().map_err(|_| Error::Invalid("socket path is not UTF-8"))?));
        }
        if signal >= 0 {
            o.signal = signal;
        }
        if slots > 0 {
            o.slots = slots;
        }
        o.timeout = Duration::from_secs(2);
        Smart::register_with(o).map(|_| 0)
    })
}

/// `int smart_set_time_constraint(uint64_t deadline_ns, uint64_t cpu_estimate_ns, uint64_t notify_time_ns)`:
/// absolute `CLOCK_MONOTONIC` deadline; estimate 0 = none; notify time `SMART_NEVER` = never.
#[no_mangle]
pub extern "C" fn smart_set_time_constraint(deadline: u64, cpu_estimate: u64, notify_time: u64) -> c_int {
    smart_set_periodic_constraint(deadline, cpu_estimate, notify_time, 0)
}

/// `int smart_set_periodic_constraint(deadline, cpu_estimate, notify_time, uint64_t period_ns)`:
/// as [`smart_set_time_constraint`], with the period of periodic work (0 = aperiodic).
#[no_mangle]
pub extern "C" fn smart_set_periodic_constraint(
    deadline: u64,
    cpu_estimate: u64,
    notify_time: u64,
    period: u64,
) -> c_int {
    guard(|| {
        let c = sched::TimeConstraint {
            deadline,
            cpu_estimate: opt(cpu_estimate),
            notify_time: (notify_time != crate::layout::NEVER).then_some(notify_time),
            period: opt(period),
            release: None,
        };
        crate::smart()?.set_constraint(&c).map(|_| 0)
    })
}

/// `int smart_clear_time_constraint(void)`.
#[no_mangle]
pub extern "C" fn smart_clear_time_constraint() -> c_int {
    guard(|| crate::smart()?.clear_time_constraint().map(|_| 0))
}

/// `int smart_get_availability(double *consumption_rate, double *allocation_rate)`: percent of one
/// CPU; `-EAGAIN` until the scheduler has written it.
///
/// # Safety
/// Each pointer is NULL or valid and aligned for writing a `double`.
#[no_mangle]
pub unsafe extern "C" fn smart_get_availability(consumption: *mut f64, allocation: *mut f64) -> c_int {
    guard(|| {
        let a = crate::smart()?
            .availability()?
            .ok_or(Error::Io(std::io::Error::from_raw_os_error(libc::EAGAIN)))?;
        // SAFETY: each pointer is written only if it is not NULL, and then the caller guarantees it
        // is valid and aligned for writing one `double` (this function's `# Safety`).
        unsafe {
            if !consumption.is_null() {
                *consumption = a.consumption_rate as f64;
            }
            if !allocation.is_null() {
                *allocation = a.allocation_rate as f64;
            }
        }
        Ok(0)
    })
}

/// `int smart_set_priority(int priority)`: above 0 needs `CAP_SYS_NICE` (`-EPERM`).
#[no_mangle]
pub extern "C" fn smart_set_priority(priority: c_int) -> c_int {
    guard(|| crate::smart()?.set_priority(priority).map(|_| 0))
}

/// `int smart_set_share(unsigned share)`: above 1 needs `CAP_SYS_NICE` (`-EPERM`).
#[no_mangle]
pub extern "C" fn smart_set_share(share: c_uint) -> c_int {
    guard(|| crate::smart()?.set_share(share).map(|_| 0))
}

/// `int smart_take_notification(uint64_t *deadline)`: 1 and the deadline if a notification is
/// pending for the calling thread, 0 if none.
///
/// # Safety
/// `deadline` is NULL or valid and aligned for writing a `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn smart_take_notification(deadline: *mut u64) -> c_int {
    guard(|| match crate::smart()?.take_notification()? {
        None => Ok(0),
        Some(n) => {
            if !deadline.is_null() {
                // SAFETY: `deadline` is not NULL (checked), so the caller guarantees it is valid and
                // aligned for writing one `uint64_t` (this function's `# Safety`).
                unsafe { *deadline = n.deadline };
            }
            Ok(1)
        }
    })
}

/// `int smart_on_notify(void (*handler)(uint64_t deadline))`: call `handler` in signal context on each
/// notification signal (NULL removes it). The handler must be async-signal-safe.
#[no_mangle]
pub extern "C" fn smart_on_notify(handler: Option<extern "C" fn(u64)>) -> c_int {
    guard(|| crate::on_notify(handler).map(|_| 0))
}

/// `uint64_t smart_now(void)`: `CLOCK_MONOTONIC` in nanoseconds.
#[no_mangle]
pub extern "C" fn smart_now() -> u64 {
    crate::now()
}
