//! The shared-memory layout both sides agree on: a [`Header`] followed by `nslots` [`Slot`]s.
//!
//! Every field is an atomic (the reserved words too), because two processes touch the region
//! concurrently and neither may trust the other. `include/smart.h` describes the same layout for C
//! (`struct smart_header`, `struct smart_slot`); a Rust test and a C test (compiled with `cc`) check
//! sizes and offsets.
//!
//! ## Who writes what
//!
//! * Slot bytes 0..64 (one cache line) belong to the **application**: only the thread that claimed the
//!   slot writes them, under the slot's seqlock `seq` (odd while a write is in progress). To claim a
//!   slot a thread swaps `tid` from 0 (or from a dead thread's id) to its own id with [`TID_CLAIMING`]
//!   set, then in one seqlock write stores its plain id, a new `generation`, and cleared fields; it
//!   frees the slot by clearing `flags` (seqlock write) and then storing `tid = 0`. `taken` is private
//!   to the application (how many notifications it has consumed).
//! * Slot bytes 64..128 belong to the **scheduler**: notification counter, last notified deadline,
//!   availability, and the last sequence number it read. Each is a single atomic word (the two rates
//!   share one 64-bit word), so they need no seqlock.
//! * The header is written by the application at creation, except `claims` (bumped by the application
//!   whenever a slot changes owner, so the scheduler rescans only then) and `privileged` (written by the
//!   scheduler after it checked the peer's capabilities; informative only: the scheduler keeps its own
//!   copy and never reads this one back).

use std::sync::atomic::{fence, AtomicI32, AtomicU32, AtomicU64, Ordering};

/// `header.magic`: the bytes `SMARTSHM` read as a little-endian `u64`.
pub const MAGIC: u64 = u64::from_le_bytes(*b"SMARTSHM");
/// `header.version`: bump on any incompatible layout change.
pub const VERSION: u32 = 1;
/// Size of [`Header`] in bytes.
pub const HEADER_SIZE: usize = 128;
/// Size of one [`Slot`] in bytes.
pub const SLOT_SIZE: usize = 128;
/// Thread slots in a region unless the application asks otherwise.
pub const DEFAULT_SLOTS: u32 = 256;
/// Most slots a region may have (the scheduler refuses larger regions).
pub const MAX_SLOTS: u32 = 16384;
/// `notify_time` meaning "never notify" (SMART §3.4.2 default).
pub const NEVER: u64 = u64::MAX;
/// `availability` before the scheduler ever wrote it (two NaN halves).
pub const NO_AVAILABILITY: u64 = u64::MAX;

/// High bit of `tid` while a thread is claiming the slot (between winning it and publishing its
/// fields): the scheduler treats such a slot as free, so a new owner is never seen with the previous
/// owner's fields. Linux thread ids are below 2^22.
pub const TID_CLAIMING: u32 = 1 << 31;

/// `flags` bit: a time constraint is set (`deadline`, `cpu_estimate`, `notify_time`, `period` are valid).
pub const FLAG_CONSTRAINT: u32 = 1;
/// `flags` bit: the thread asked for the priority in `priority`.
pub const FLAG_PRIORITY: u32 = 2;
/// `flags` bit: the thread asked for the share in `share`.
pub const FLAG_SHARE: u32 = 4;

/// Bytes of a region with `nslots` slots.
pub const fn region_size(nslots: u32) -> usize {
    HEADER_SIZE + nslots as usize * SLOT_SIZE
}

/// The start of a region (128 bytes).
#[repr(C, align(64))]
pub struct Header {
    /// [`MAGIC`].
    pub magic: AtomicU64,
    /// [`VERSION`].
    pub version: AtomicU32,
    /// [`HEADER_SIZE`].
    pub header_size: AtomicU32,
    /// [`SLOT_SIZE`].
    pub slot_size: AtomicU32,
    /// Number of slots after the header.
    pub nslots: AtomicU32,
    /// The signal the scheduler sends notifications with (0 = none: poll the counter).
    pub signal: AtomicU32,
    /// The application's pid as it sees it (informative; the scheduler trusts only `SO_PEERCRED`).
    pub pid: AtomicU32,
    /// Bumped (release) by the application each time a slot changes owner.
    pub claims: AtomicU32,
    /// Written by the scheduler: 1 if the process may raise priority/share above the defaults.
    pub privileged: AtomicU32,
    _reserved: [AtomicU32; 22],
}

/// One thread's slot (128 bytes, two cache lines: application's, scheduler's).
#[repr(C, align(64))]
#[cfg_attr(test, derive(Default))]
pub struct Slot {
    /// Seqlock sequence: odd while the owning thread writes the fields below.
    pub seq: AtomicU32,
    /// Owner thread id (`gettid()`), 0 = free, with [`TID_CLAIMING`] set while being claimed.
    pub tid: AtomicU32,
    /// Bumped each time the slot gets a new owner.
    pub generation: AtomicU32,
    /// [`FLAG_CONSTRAINT`] | [`FLAG_PRIORITY`] | [`FLAG_SHARE`].
    pub flags: AtomicU32,
    /// Absolute deadline, `CLOCK_MONOTONIC` nanoseconds.
    pub deadline: AtomicU64,
    /// Estimated CPU time of the block in nanoseconds; 0 = no estimate.
    pub cpu_estimate: AtomicU64,
    /// Absolute notify time (`CLOCK_MONOTONIC` ns); [`NEVER`] = do not notify.
    pub notify_time: AtomicU64,
    /// Period in nanoseconds for periodic work; 0 = aperiodic.
    pub period: AtomicU64,
    /// Requested priority (larger = more important; 0 = default).
    pub priority: AtomicI32,
    /// Requested share (1 = default, 0 = legacy/background).
    pub share: AtomicU32,
    /// Application-private: notifications consumed by `take_notification`.
    pub taken: AtomicU64,
    /// Scheduler: notifications sent to this thread so far.
    pub notifications: AtomicU64,
    /// Scheduler: deadline of the last notification.
    pub last_notified_deadline: AtomicU64,
    /// Scheduler: availability; low 32 bits consumption rate, high 32 bits allocation rate, each an
    /// IEEE `f32` in percent of one CPU. [`NO_AVAILABILITY`] until first written.
    pub availability: AtomicU64,
    /// Scheduler: the `seq` value it last read a consistent snapshot at.
    pub seen_seq: AtomicU32,
    /// Scheduler: 1 if the last notification was sent after the deadline passed, 0 if predicted.
    pub last_passed: AtomicU32,
    _reserved: [AtomicU64; 4],
}

const _: () = assert!(std::mem::size_of::<Header>() == HEADER_SIZE);
const _: () = assert!(std::mem::size_of::<Slot>() == SLOT_SIZE);

/// A consistent copy of the application-written part of a slot.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SlotValues {
    /// The sequence number the copy was taken at (even).
    pub seq: u32,
    /// Owner thread id, 0 = free.
    pub tid: u32,
    /// Owner generation.
    pub generation: u32,
    /// Flags.
    pub flags: u32,
    /// Absolute deadline (ns).
    pub deadline: u64,
    /// CPU estimate (ns, 0 = none).
    pub cpu_estimate: u64,
    /// Notify time (ns, [`NEVER`] = never).
    pub notify_time: u64,
    /// Period (ns, 0 = aperiodic).
    pub period: u64,
    /// Requested priority.
    pub priority: i32,
    /// Requested share.
    pub share: u32,
}

impl SlotValues {
    /// The time constraint in this copy, if one is set.
    pub fn constraint(&self) -> Option<sched::TimeConstraint> {
        if self.flags & FLAG_CONSTRAINT == 0 {
            return None;
        }
        Some(sched::TimeConstraint {
            deadline: self.deadline,
            cpu_estimate: (self.cpu_estimate != 0).then_some(self.cpu_estimate),
            notify_time: (self.notify_time != NEVER).then_some(self.notify_time),
            period: (self.period != 0).then_some(self.period),
            release: None,
        })
    }
}

impl Slot {
    /// Write the application fields as one seqlock transaction. Only the owning thread may call this
    /// (one writer per slot); `f` does relaxed stores.
    pub fn write(&self, f: impl FnOnce(&Slot)) {
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s.wrapping_add(1) | 1, Ordering::Relaxed);
        // Orders the odd `seq` before the field stores (a reader seeing a new field sees odd seq).
        fence(Ordering::Release);
        f(self);
        // Even again: publishes the fields.
        self.seq.store((s | 1).wrapping_add(1), Ordering::Release);
    }

    /// A consistent copy of the application fields, or `None` after `tries` attempts found the slot
    /// being written (or being rewritten under our feet) every time. A hostile writer can only make
    /// its own slot unreadable; readers never wait for it longer than `tries` loops.
    pub fn snapshot(&self, tries: u32) -> Option<SlotValues> {
        self.snapshot_counted(tries).0
    }

    /// [`Slot::snapshot`], also returning how many attempts found a write in progress (for tests
    /// and statistics: it shows that reader and writer actually overlapped).
    pub fn snapshot_counted(&self, tries: u32) -> (Option<SlotValues>, u32) {
        for k in 0..tries.max(1) {
            let s1 = self.seq.load(Ordering::Acquire);
            if s1 & 1 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let v = SlotValues {
                seq: s1,
                tid: self.tid.load(Ordering::Relaxed),
                generation: self.generation.load(Ordering::Relaxed),
                flags: self.flags.load(Ordering::Relaxed),
                deadline: self.deadline.load(Ordering::Relaxed),
                cpu_estimate: self.cpu_estimate.load(Ordering::Relaxed),
                notify_time: self.notify_time.load(Ordering::Relaxed),
                period: self.period.load(Ordering::Relaxed),
                priority: self.priority.load(Ordering::Relaxed),
                share: self.share.load(Ordering::Relaxed),
            };
            // Orders the field loads before the second `seq` load.
            fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) == s1 {
                return (Some(v), k);
            }
        }
        (None, tries.max(1))
    }

    /// Availability as the scheduler last wrote it: (consumption rate, allocation rate), percent.
    pub fn availability(&self) -> Option<(f32, f32)> {
        let w = self.availability.load(Ordering::Acquire);
        (w != NO_AVAILABILITY).then(|| unpack_rates(w))
    }
}

/// Pack two rates into the `availability` word.
pub fn pack_rates(consumption: f32, allocation: f32) -> u64 {
    let w = consumption.to_bits() as u64 | ((allocation.to_bits() as u64) << 32);
    if w == NO_AVAILABILITY {
        0 // both NaN with all bits set: store as zeros rather than "never written"
    } else {
        w
    }
}

/// Unpack the `availability` word.
pub fn unpack_rates(w: u64) -> (f32, f32) {
    (f32::from_bits(w as u32), f32::from_bits((w >> 32) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    #[test]
    fn layout_matches_the_c_header() {
        // These numbers are the ones `include/smart.h` static-asserts; change both together.
        assert_eq!(std::mem::size_of::<Header>(), 128);
        assert_eq!(std::mem::align_of::<Header>(), 64);
        assert_eq!(offset_of!(Header, magic), 0);
        assert_eq!(offset_of!(Header, version), 8);
        assert_eq!(offset_of!(Header, header_size), 12);
        assert_eq!(offset_of!(Header, slot_size), 16);
        assert_eq!(offset_of!(Header, nslots), 20);
        assert_eq!(offset_of!(Header, signal), 24);
        assert_eq!(offset_of!(Header, pid), 28);
        assert_eq!(offset_of!(Header, claims), 32);
        assert_eq!(offset_of!(Header, privileged), 36);
        assert_eq!(std::mem::size_of::<Slot>(), 128);
        assert_eq!(offset_of!(Slot, seq), 0);
        assert_eq!(offset_of!(Slot, tid), 4);
        assert_eq!(offset_of!(Slot, generation), 8);
        assert_eq!(offset_of!(Slot, flags), 12);
        assert_eq!(offset_of!(Slot, deadline), 16);
        assert_eq!(offset_of!(Slot, cpu_estimate), 24);
        assert_eq!(offset_of!(Slot, notify_time), 32);
        assert_eq!(offset_of!(Slot, period), 40);
        assert_eq!(offset_of!(Slot, priority), 48);
        assert_eq!(offset_of!(Slot, share), 52);
        assert_eq!(offset_of!(Slot, taken), 56);
        assert_eq!(offset_of!(Slot, notifications), 64);
        assert_eq!(offset_of!(Slot, last_notified_deadline), 72);
        assert_eq!(offset_of!(Slot, availability), 80);
        assert_eq!(offset_of!(Slot, seen_seq), 88);
        assert_eq!(offset_of!(Slot, last_passed), 92);
        assert_eq!(MAGIC, 0x4d48_5354_5241_4d53);
    }

    fn zeroed_slot() -> Box<Slot> {
        Box::default()
    }

    /// A writer keeps storing tuples (d, d+1, d+2, d+3, ...) while a reader checks that every snapshot
    /// it gets is one whole tuple: the seqlock never lets a torn mix through.
    #[test]
    fn seqlock_snapshots_are_never_torn() {
        let slot: Arc<Slot> = Arc::from(zeroed_slot());
        slot.cpu_estimate.store(1, Ordering::Relaxed); // the tuple for d = 0
        slot.notify_time.store(2, Ordering::Relaxed);
        slot.period.store(3, Ordering::Relaxed);
        slot.share.store(5, Ordering::Relaxed);
        let stop = Arc::new(AtomicBool::new(false));
        let w = {
            let (slot, stop) = (slot.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut d = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    d += 10;
                    slot.write(|s| {
                        s.deadline.store(d, Ordering::Relaxed);
                        // Widen the window in which a broken reader would tear.
                        for _ in 0..20 {
                            std::hint::spin_loop();
                        }
                        s.cpu_estimate.store(d + 1, Ordering::Relaxed);
                        s.notify_time.store(d + 2, Ordering::Relaxed);
                        s.period.store(d + 3, Ordering::Relaxed);
                        s.priority.store(d as i32, Ordering::Relaxed);
                        s.share.store(d as u32 + 5, Ordering::Relaxed);
                    });
                    for _ in 0..40 {
                        std::hint::spin_loop();
                    }
                }
                d
            })
        };
        let t0 = std::time::Instant::now();
        let (mut good, mut distinct, mut last) = (0u64, 0u64, u64::MAX);
        // One second of reading: the threads share a loaded 2-CPU machine and overlap only part of
        // the time. (With the seqlock's second check removed, this test failed 5 runs out of 5.)
        while t0.elapsed() < std::time::Duration::from_millis(1000) {
            if let Some(v) = slot.snapshot(1000) {
                let d = v.deadline;
                assert_eq!(v.seq & 1, 0);
                assert_eq!((v.cpu_estimate, v.notify_time, v.period), (d + 1, d + 2, d + 3), "torn: {v:?}");
                assert_eq!((v.priority, v.share), (d as i32, d as u32 + 5), "torn: {v:?}");
                good += 1;
                if d != last {
                    distinct += 1;
                    last = d;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        let writes = w.join().unwrap() / 10;
        // Not vacuous: the reader saw the writer make progress, not one value over and over.
        assert!(distinct >= 20, "snapshots {good}, distinct {distinct}, writes {writes}");
        assert_eq!(slot.seq.load(Ordering::Relaxed) & 1, 0);
    }

    #[test]
    fn a_slot_held_odd_is_unreadable_not_a_hang() {
        let slot = zeroed_slot();
        slot.seq.store(7, Ordering::Relaxed);
        assert_eq!(slot.snapshot(100), None);
    }

    #[test]
    fn rates_round_trip_and_constraint_conversion() {
        let w = pack_rates(25.0, 50.5);
        assert_eq!(unpack_rates(w), (25.0, 50.5));
        assert_ne!(pack_rates(f32::from_bits(u32::MAX), f32::from_bits(u32::MAX)), NO_AVAILABILITY);
        let mut v = SlotValues {
            seq: 2,
            tid: 1,
            generation: 1,
            flags: 0,
            deadline: 100,
            cpu_estimate: 0,
            notify_time: NEVER,
            period: 0,
            priority: 0,
            share: 1,
        };
        assert_eq!(v.constraint(), None);
        v.flags = FLAG_CONSTRAINT;
        let c = v.constraint().unwrap();
        assert_eq!((c.deadline, c.cpu_estimate, c.notify_time, c.period), (100, None, None, None));
        v.cpu_estimate = 5;
        v.notify_time = 0;
        v.period = 40;
        let c = v.constraint().unwrap();
        assert_eq!((c.cpu_estimate, c.notify_time, c.period), (Some(5), Some(0), Some(40)));
    }
}
