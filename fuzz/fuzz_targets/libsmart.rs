//! What the scheduler reads from an application it does not trust: a registration message of any
//! bytes on a socket, and a region slot of any bytes decoded into a request and handed to the SMART
//! policy. Nothing may panic (arithmetic overflow included) whatever the application wrote.
#![no_main]

use libfuzzer_sys::fuzz_target;
use libsmart::{layout, proto, server};
use sched::{TaskId, TaskParams};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

fn region() -> &'static libsmart::region::Region {
    static R: OnceLock<libsmart::region::Region> = OnceLock::new();
    R.get_or_init(|| libsmart::region::Region::create(1, 0).expect("memfd region"))
}

fuzz_target!(|data: &[u8]| {
    // The registration message, as the registry receives it.
    let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    let _ = a.write_all(&data[..data.len().min(64)]);
    drop(a);
    let _ = proto::recv::<proto::Hello>(b.as_raw_fd(), libc_dontwait());

    // A slot holding these bytes (128 of them, zero-padded), read as the registry reads it.
    let slot = region().slot(0);
    let words = slot as *const layout::Slot as *const AtomicU64;
    for k in 0..layout::SLOT_SIZE / 8 {
        let mut w = [0u8; 8];
        for (j, x) in w.iter_mut().enumerate() {
            *x = data.get(k * 8 + j).copied().unwrap_or(0);
        }
        // SAFETY: the slot is SLOT_SIZE bytes of atomics, 8-byte aligned.
        unsafe { &*words.add(k) }.store(u64::from_le_bytes(w), Ordering::Relaxed);
    }
    let Some(v) = slot.snapshot(server::SCAN_TRIES) else { return };
    let (prio, share) = server::clamp_params(v.priority, v.share, data.first().is_some_and(|b| b & 1 == 1));
    let now = u64::from_le_bytes(data.get(120..128).and_then(|b| b.try_into().ok()).unwrap_or([0; 8]));
    let mut policy = sched::build("smart", &Default::default(), 1).unwrap();
    let t = TaskId(0);
    let params = TaskParams { priority: prio, share, ..TaskParams::default() };
    policy.admit(t, &params, now);
    policy.admit(TaskId(1), &TaskParams::default(), now);
    policy.set_time_constraint(t, v.constraint(), now);
    policy.wake(t, now);
    policy.wake(TaskId(1), now);
    let mut at = now;
    for _ in 0..4 {
        let Some(d) = policy.pick(0, at) else { break };
        let ran = d.slice.unwrap_or(1_000_000).min(10_000_000);
        at = at.saturating_add(ran);
        policy.stop(d.task, ran, sched::Stop::Preempted, at);
    }
    let _ = policy.availability(t, at);
    let mut notes = Vec::new();
    policy.take_notifications(&mut notes);
});

fn libc_dontwait() -> i32 {
    0x40 // MSG_DONTWAIT
}
