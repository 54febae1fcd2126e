//! The timers of appendix A's `-i` option, for today's Linux.
//!
//! | name | call | notes |
//! |---|---|---|
//! | `NATIVE` | relative `nanosleep` | what `usleep` is today; SCHED_OTHER threads get the default 50 µs timer slack |
//! | `HR` | `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` | high-resolution timers are in every kernel since 2.6.21 |
//! | `TIMERFD` | `timerfd_settime(TFD_TIMER_ABSTIME)` + `read` | new; the event-loop way |
//! | `RTC` | `/dev/rtc` periodic interrupts, power-of-two rates | absent on many VMs: a clear error then |
//!
//! `MM` (Win32 multimedia timers) has no Linux meaning and is refused.

use crate::clock::mono_ns;
use crate::sys;
use nix::errno::Errno;
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId as TfdClock, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use nix::time::{clock_nanosleep, ClockId, ClockNanosleepFlags};
use std::io::{self, Read};
use std::os::fd::AsFd;

/// Which timer a thread sleeps on: a Linux mechanism, whose firing this kernel decides. (A
/// scenario's `timer` is something else, a model of when a simulated timer fires; hourglass maps it
/// to the nearest of these, see `scenario::timer_of`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum TimerKind {
    /// Relative `nanosleep`.
    Native,
    /// Absolute `clock_nanosleep`.
    Hr,
    /// `timerfd` with an absolute expiry.
    Timerfd,
    /// `/dev/rtc` periodic interrupts.
    Rtc,
}

impl TimerKind {
    /// Parses an `-i` argument.
    pub fn parse(s: &str) -> Result<TimerKind, String> {
        match s.to_ascii_uppercase().as_str() {
            "NATIVE" => Ok(TimerKind::Native),
            "HR" => Ok(TimerKind::Hr),
            "TIMERFD" => Ok(TimerKind::Timerfd),
            "RTC" => Ok(TimerKind::Rtc),
            "MM" => Err("MM (Win32 multimedia timers) does not exist on Linux; use HR or TIMERFD".into()),
            _ => Err(format!("unknown timer '{s}' (NATIVE, HR, TIMERFD, RTC)")),
        }
    }

    /// The appendix-A name.
    pub fn name(self) -> &'static str {
        match self {
            TimerKind::Native => "NATIVE",
            TimerKind::Hr => "HR",
            TimerKind::Timerfd => "TIMERFD",
            TimerKind::Rtc => "RTC",
        }
    }
}

/// An opened timer, owned by one thread.
#[derive(Debug)]
pub enum Timer {
    /// Relative `nanosleep`.
    Native,
    /// Absolute `clock_nanosleep`.
    Hr,
    /// A timerfd.
    Timerfd(TimerFd),
    /// `/dev/rtc` opened with periodic interrupts at `hz`.
    Rtc {
        /// The RTC device, open.
        file: std::fs::File,
        /// Interrupt rate.
        hz: u32,
    },
}

/// The first RTC device present, if any.
pub fn rtc_device() -> Option<&'static str> {
    ["/dev/rtc", "/dev/rtc0"].into_iter().find(|p| std::path::Path::new(p).exists())
}

/// An absolute `CLOCK_MONOTONIC` time in ns as a `timespec`.
fn timespec(ns: u64) -> TimeSpec {
    TimeSpec::new((ns / 1_000_000_000) as libc::time_t, (ns % 1_000_000_000) as libc::c_long)
}

impl Timer {
    /// Opens a timer of `kind`; `period_ns` picks the RTC rate (the smallest power of two giving at
    /// least two interrupts per period, between 64 and 8192 Hz).
    pub fn open(kind: TimerKind, period_ns: u64) -> Result<Timer, String> {
        match kind {
            TimerKind::Native => Ok(Timer::Native),
            TimerKind::Hr => Ok(Timer::Hr),
            TimerKind::Timerfd => TimerFd::new(TfdClock::CLOCK_MONOTONIC, TimerFlags::TFD_CLOEXEC)
                .map(Timer::Timerfd)
                .map_err(|e| format!("timerfd_create: {}", io::Error::from_raw_os_error(e as i32))),
            TimerKind::Rtc => Timer::open_rtc(period_ns),
        }
    }

    fn open_rtc(period_ns: u64) -> Result<Timer, String> {
        let dev = rtc_device().ok_or_else(|| {
            "timer RTC: no /dev/rtc or /dev/rtc0 on this machine (common on VMs); use -i HR \
             or -i TIMERFD"
                .to_string()
        })?;
        let file = std::fs::File::open(dev).map_err(|e| {
            format!(
                "timer RTC: cannot open {dev}: {e} (only one process may own the RTC; is \
                 another thread or program using it?)"
            )
        })?;
        let want = (2e9 / period_ns.max(1) as f64).max(64.0);
        let hz = (want.log2().ceil().exp2() as u32).clamp(64, 8192);
        sys::rtc_set_rate(file.as_fd(), hz).map_err(|e| {
            format!(
                "timer RTC: cannot set {hz} Hz on {dev}: {e} (rates above \
                 /sys/class/rtc/rtc0/max_user_freq need root)"
            )
        })?;
        sys::rtc_periodic(file.as_fd(), true)
            .map_err(|e| format!("timer RTC: cannot enable periodic interrupts: {e}"))?;
        Ok(Timer::Rtc { file, hz })
    }

    /// Sleeps until `CLOCK_MONOTONIC` reaches `target` (or, for the RTC, until the first interrupt
    /// at or after it). Returns at once if `target` has passed.
    pub fn sleep_until(&mut self, target: u64) {
        match self {
            Timer::Native => {
                let now = mono_ns();
                if target > now {
                    // A relative nanosleep, restarted with the remainder on a signal.
                    std::thread::sleep(std::time::Duration::from_nanos(target - now));
                }
            }
            Timer::Hr => {
                // Absolute sleeps restart safely on EINTR.
                let ts = timespec(target);
                while clock_nanosleep(ClockId::CLOCK_MONOTONIC, ClockNanosleepFlags::TIMER_ABSTIME, &ts)
                    == Err(Errno::EINTR)
                {}
            }
            Timer::Timerfd(fd) => {
                if target <= mono_ns() {
                    return;
                }
                let _ = fd.set(Expiration::OneShot(timespec(target)), TimerSetTimeFlags::TFD_TIMER_ABSTIME);
                // Waits for the expiry, restarting on EINTR.
                let _ = fd.wait();
            }
            Timer::Rtc { file, .. } => {
                let mut buf = [0u8; std::mem::size_of::<libc::c_ulong>()];
                while mono_ns() < target {
                    if let Err(e) = file.read(&mut buf) {
                        if e.kind() != io::ErrorKind::Interrupted {
                            break;
                        }
                    }
                }
            }
        }
    }

    /// The RTC interrupt rate, if this is an RTC timer.
    pub fn rtc_hz(&self) -> Option<u32> {
        match self {
            Timer::Rtc { hz, .. } => Some(*hz),
            _ => None,
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        // Descriptors close with their owners; the RTC's periodic interrupts are turned off first.
        if let Timer::Rtc { file, .. } = self {
            let _ = sys::rtc_periodic(file.as_fd(), false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_linux_timer_sleeps_at_least_until_the_target() {
        for kind in [TimerKind::Native, TimerKind::Hr, TimerKind::Timerfd] {
            let mut t = Timer::open(kind, 1_000_000).unwrap();
            let target = mono_ns() + 2_000_000;
            t.sleep_until(target);
            assert!(mono_ns() >= target, "{kind:?} woke early");
        }
    }

    #[test]
    fn rtc_is_a_clear_error_when_absent_and_mm_is_refused() {
        if rtc_device().is_none() {
            let e = Timer::open(TimerKind::Rtc, 5_300_000).unwrap_err();
            assert!(e.contains("no /dev/rtc"), "{e}");
        }
        assert!(TimerKind::parse("MM").unwrap_err().contains("Linux"));
        assert_eq!(TimerKind::parse("hr"), Ok(TimerKind::Hr));
    }
}
