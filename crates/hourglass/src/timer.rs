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
use std::io;

/// Which timer a thread sleeps on.
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
    Timerfd(i32),
    /// `/dev/rtc` opened with periodic interrupts at `hz`.
    Rtc {
        /// File descriptor of the RTC device.
        fd: i32,
        /// Interrupt rate.
        hz: u32,
    },
}

const RTC_PIE_ON: libc::c_ulong = 0x7005;
const RTC_PIE_OFF: libc::c_ulong = 0x7006;
const RTC_IRQP_SET: libc::c_ulong = 0x4008_700c;

/// The first RTC device present, if any.
pub fn rtc_device() -> Option<&'static str> {
    ["/dev/rtc", "/dev/rtc0"].into_iter().find(|p| std::path::Path::new(p).exists())
}

impl Timer {
    /// Opens a timer of `kind`; `period_ns` picks the RTC rate (the smallest power of two giving at
    /// least two interrupts per period, between 64 and 8192 Hz).
    pub fn open(kind: TimerKind, period_ns: u64) -> Result<Timer, String> {
        match kind {
            TimerKind::Native => Ok(Timer::Native),
            TimerKind::Hr => Ok(Timer::Hr),
            TimerKind::Timerfd => {
                // SAFETY: plain syscall.
                let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
                if fd < 0 {
                    return Err(format!("timerfd_create: {}", io::Error::last_os_error()));
                }
                Ok(Timer::Timerfd(fd))
            }
            TimerKind::Rtc => {
                let dev = rtc_device().ok_or_else(|| {
                    "timer RTC: no /dev/rtc or /dev/rtc0 on this machine (common on VMs); use -i HR \
                     or -i TIMERFD"
                        .to_string()
                })?;
                let path = std::ffi::CString::new(dev).expect("no NUL");
                // SAFETY: valid C string.
                let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
                if fd < 0 {
                    return Err(format!(
                        "timer RTC: cannot open {dev}: {} (only one process may own the RTC; is \
                         another thread or program using it?)",
                        io::Error::last_os_error()
                    ));
                }
                let want = (2e9 / period_ns.max(1) as f64).max(64.0);
                let hz = (want.log2().ceil().exp2() as u32).clamp(64, 8192);
                // SAFETY: ioctls on our own fd with integer arguments.
                unsafe {
                    if libc::ioctl(fd, RTC_IRQP_SET, hz as libc::c_ulong) != 0 {
                        let e = io::Error::last_os_error();
                        libc::close(fd);
                        return Err(format!(
                            "timer RTC: cannot set {hz} Hz on {dev}: {e} (rates above \
                             /sys/class/rtc/rtc0/max_user_freq need root)"
                        ));
                    }
                    if libc::ioctl(fd, RTC_PIE_ON, 0) != 0 {
                        let e = io::Error::last_os_error();
                        libc::close(fd);
                        return Err(format!("timer RTC: cannot enable periodic interrupts: {e}"));
                    }
                }
                Ok(Timer::Rtc { fd, hz })
            }
        }
    }

    /// Sleeps until `CLOCK_MONOTONIC` reaches `target` (or, for the RTC, until the first interrupt
    /// at or after it). Returns at once if `target` has passed.
    pub fn sleep_until(&mut self, target: u64) {
        match self {
            Timer::Native => {
                let now = mono_ns();
                if target > now {
                    let d = target - now;
                    let mut ts = libc::timespec {
                        tv_sec: (d / 1_000_000_000) as libc::time_t,
                        tv_nsec: (d % 1_000_000_000) as libc::c_long,
                    };
                    // Relative sleep, restarted with the remainder on a signal.
                    loop {
                        let mut rem = libc::timespec { tv_sec: 0, tv_nsec: 0 };
                        // SAFETY: valid pointers.
                        let r = unsafe { libc::nanosleep(&ts, &mut rem) };
                        if r == 0 {
                            break;
                        }
                        ts = rem;
                    }
                }
            }
            Timer::Hr => {
                let ts = libc::timespec {
                    tv_sec: (target / 1_000_000_000) as libc::time_t,
                    tv_nsec: (target % 1_000_000_000) as libc::c_long,
                };
                // SAFETY: valid pointer; absolute sleeps restart safely on EINTR.
                while unsafe {
                    libc::clock_nanosleep(
                        libc::CLOCK_MONOTONIC,
                        libc::TIMER_ABSTIME,
                        &ts,
                        std::ptr::null_mut(),
                    )
                } == libc::EINTR
                {}
            }
            Timer::Timerfd(fd) => {
                if target <= mono_ns() {
                    return;
                }
                let spec = libc::itimerspec {
                    it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
                    it_value: libc::timespec {
                        tv_sec: (target / 1_000_000_000) as libc::time_t,
                        tv_nsec: (target % 1_000_000_000) as libc::c_long,
                    },
                };
                let mut buf = [0u8; 8];
                // SAFETY: our own fd, valid pointers.
                unsafe {
                    libc::timerfd_settime(*fd, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut());
                    while libc::read(*fd, buf.as_mut_ptr().cast(), 8) < 0
                        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
                    {
                    }
                }
            }
            Timer::Rtc { fd, .. } => {
                let mut buf = [0u8; std::mem::size_of::<libc::c_ulong>()];
                while mono_ns() < target {
                    // SAFETY: our own fd, valid buffer.
                    let r = unsafe { libc::read(*fd, buf.as_mut_ptr().cast(), buf.len()) };
                    if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                        break;
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
        match self {
            // SAFETY: closing our own fds.
            Timer::Timerfd(fd) => unsafe {
                libc::close(*fd);
            },
            Timer::Rtc { fd, .. } => unsafe {
                libc::ioctl(*fd, RTC_PIE_OFF, 0);
                libc::close(*fd);
            },
            _ => {}
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
