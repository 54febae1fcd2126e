//! Every `unsafe` block of `scx_smart`'s own code, each with its reason (the generated skeletons,
//! `bpf_skel` and `wake_skel`, and scx_rustland_core's `bpf.rs` template keep theirs). What a safe
//! wrapper (nix) covers is not here.

use std::sync::atomic::{AtomicU64, Ordering};

/// Reads a counter the BPF program updates atomically in its mapped `.bss`.
pub fn load_shared(x: &u64) -> u64 {
    // SAFETY: `x` is a naturally aligned u64 of the program's mapped .bss, which lives as long as the
    // skeleton that lends it; the program only updates it atomically, and this side only reads it
    // atomically, so no access races a non-atomic one.
    unsafe { AtomicU64::from_ptr(x as *const u64 as *mut u64) }.load(Ordering::Acquire)
}

/// Takes (swaps with 0) a value the BPF program sets atomically in its mapped `.bss`.
pub fn take_shared(x: &mut u64) -> u64 {
    // SAFETY: as in `load_shared`; the exclusive borrow of the skeleton's memory keeps this side's
    // other accesses out while the swap runs.
    unsafe { AtomicU64::from_ptr(x) }.swap(0, Ordering::AcqRel)
}

/// Puts `thread` in the real-time class (`SCHED_FIFO` 1); the error is the system's.
pub fn set_fifo(thread: &std::thread::JoinHandle<()>) -> std::io::Result<()> {
    use std::os::unix::thread::JoinHandleExt;
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: the pthread_t is that of a live thread (the caller holds its handle, so it has not
    // been joined or detached); `param` is a valid struct that outlives the call.
    let rc = unsafe { libc::pthread_setschedparam(thread.as_pthread_t(), libc::SCHED_FIFO, &param) };
    match rc {
        0 => Ok(()),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}
