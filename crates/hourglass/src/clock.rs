//! The clock that gap detection polls: the x86 time-stamp counter when it is invariant, else
//! `clock_gettime(CLOCK_MONOTONIC)`.
//!
//! Hourglass (§3.1) polls `rdtsc` because it is the cheapest clock there is. On a modern CPU the TSC
//! is usable only when it is *invariant* (CPUID 0x8000_0007 EDX bit 8: constant rate across P- and
//! C-states); we check that bit and calibrate the rate against `CLOCK_MONOTONIC` (the paper used
//! `gettimeofday`). Anywhere else we fall back to the vDSO `clock_gettime`, which is slower (the gap
//! threshold then grows with it) and say so.

use std::time::Duration;

/// Which counter is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockKind {
    /// `rdtsc`, invariant TSC.
    Tsc,
    /// `clock_gettime(CLOCK_MONOTONIC)`, ticks are nanoseconds.
    Monotonic,
}

/// A calibrated clock: raw ticks, and their rate.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    kind: ClockKind,
    /// Ticks per nanosecond (1.0 for the monotonic clock).
    ticks_per_ns: f64,
}

/// Reads `CLOCK_MONOTONIC` in nanoseconds.
#[inline(always)]
pub fn mono_ns() -> u64 {
    crate::sys::monotonic_ns()
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rdtsc() -> u64 {
    crate::sys::rdtsc()
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn rdtsc() -> u64 {
    mono_ns()
}

/// True when the CPU reports an invariant TSC (CPUID leaf 0x8000_0007, EDX bit 8).
pub fn tsc_is_invariant() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::sys::cpuid;
        let (max_ext, ..) = cpuid(0x8000_0000);
        if max_ext < 0x8000_0007 {
            return false;
        }
        let (.., edx) = cpuid(0x8000_0007);
        edx & (1 << 8) != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

impl Clock {
    /// The best clock on this machine: an invariant TSC calibrated over `calibration`, else the
    /// monotonic clock. The second value is a warning to show the user, if any.
    pub fn best(calibration: Duration) -> (Clock, Option<String>) {
        if tsc_is_invariant() {
            (Clock::tsc(calibration), None)
        } else {
            (
                Clock::monotonic(),
                Some(
                    "the TSC is not invariant (CPUID 0x80000007 EDX[8] clear): falling back to \
                     clock_gettime(CLOCK_MONOTONIC); gap detection is coarser"
                        .to_string(),
                ),
            )
        }
    }

    /// The monotonic clock (ticks are nanoseconds).
    pub fn monotonic() -> Clock {
        Clock { kind: ClockKind::Monotonic, ticks_per_ns: 1.0 }
    }

    /// The TSC, calibrated against `CLOCK_MONOTONIC` over `calibration` (100 ms gives ~1 ppm).
    pub fn tsc(calibration: Duration) -> Clock {
        let (t0, m0) = paired_read();
        std::thread::sleep(calibration);
        let (t1, m1) = paired_read();
        let ticks_per_ns = (t1 - t0) as f64 / (m1 - m0).max(1) as f64;
        Clock { kind: ClockKind::Tsc, ticks_per_ns }
    }

    /// Which counter this clock reads.
    pub fn kind(&self) -> ClockKind {
        self.kind
    }

    /// Counter frequency in Hz.
    pub fn hz(&self) -> f64 {
        self.ticks_per_ns * 1e9
    }

    /// Reads the counter.
    #[inline(always)]
    pub fn now(&self) -> u64 {
        match self.kind {
            ClockKind::Tsc => rdtsc(),
            ClockKind::Monotonic => mono_ns(),
        }
    }

    /// Converts a tick count to nanoseconds.
    #[inline]
    pub fn to_ns(&self, ticks: u64) -> u64 {
        (ticks as f64 / self.ticks_per_ns) as u64
    }

    /// Converts nanoseconds to ticks.
    #[inline]
    pub fn to_ticks(&self, ns: u64) -> u64 {
        (ns as f64 * self.ticks_per_ns) as u64
    }

    /// The counter value at monotonic time `mono`, anchored on a fresh paired reading (so the error
    /// is the calibration error times `mono - now`, not times the whole run).
    pub fn ticks_at(&self, mono: u64) -> u64 {
        let (t, m) = match self.kind {
            ClockKind::Tsc => paired_read(),
            ClockKind::Monotonic => {
                let m = mono_ns();
                (m, m)
            }
        };
        if mono >= m {
            t + self.to_ticks(mono - m)
        } else {
            t.saturating_sub(self.to_ticks(m - mono))
        }
    }
}

/// A (tsc, monotonic) pair read as close together as possible: the tightest of a few brackets.
fn paired_read() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..16 {
        let a = rdtsc();
        let m = mono_ns();
        let b = rdtsc();
        if b - a < best.0 {
            best = (b - a, a + (b - a) / 2, m);
        }
    }
    (best.1, best.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibrated_clock_agrees_with_monotonic() {
        let (c, _) = Clock::best(Duration::from_millis(50));
        // Paired readings (the tightest of several brackets), so that a stall of the thread between
        // reading one clock and the other is not counted as disagreement.
        let pair = || if c.kind() == ClockKind::Tsc { paired_read() } else { (mono_ns(), mono_ns()) };
        let (t0, m0) = pair();
        std::thread::sleep(Duration::from_millis(50));
        let (t1, m1) = pair();
        let dt = c.to_ns(t1 - t0) as f64;
        let dm = (m1 - m0) as f64;
        // Both readings are of the same 50 ms; they agree to well under 1 %.
        assert!((dt - dm).abs() / dm < 0.01, "tsc {dt} ns vs mono {dm} ns");
    }
}
