//! The timers of appendix A's `-i` option, for today's Linux.
//!
//! | name | call | notes |
//! |---|---|---|
//! | `NATIVE` | relative `nanosleep` | what `usleep` is today; SCHED_OTHER threads get the default 50 µs timer slack |
//! | `HR` | `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` | high-resolution timers are in every kernel since 2.6.21 |
//! | `TIMERFD` | `timerfd_settime(TFD_TIMER_ABSTIME)` + `read` | new; the event-loop way |
//! | `RTC` | `/dev/rtc` periodic interrupts, power-of-two rates | absent on many VMs: a clear error then |
//! | `TICK[:Hz]` | absolute `clock_nanosleep` to the first tick at or after the target | an emulated tick-granular timer (100 Hz unless given): ticks at the multiples of 1/Hz of `CLOCK_MONOTONIC`; the simulator's `timer = "tick"` |
//! | `LINUX24[:Hz]` | Linux 2.4's `nanosleep`/`usleep`, emulated | a relative sleep of t wakes on the tick ⌈t·Hz⌉ + 1 ticks after the last one (up to two ticks late); a real-time thread's sleep of at most 2 ms busy-waits instead (Regehr 2002 §5.5) |
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
    /// An emulated tick of this rate (Hz): the first tick at or after the target.
    Tick(u32),
    /// Linux 2.4's `nanosleep` on a tick of this rate (Hz), busy-waiting ≤ 2 ms in real-time threads.
    Linux24(u32),
}

/// Linux 2.4's default clock rate, the one the papers' `usleep` ran on.
pub const DEFAULT_TICK_HZ: u32 = 100;

/// Linux 2.4's rule: a real-time thread's `nanosleep` of at most this busy-waits (`udelay`).
pub const LINUX24_SPIN_NS: u64 = 2_000_000;

/// `NAME` or `NAME:Hz` of an emulated tick: the rate, 1 to 100,000 Hz (100 when not given).
fn tick_hz(name: &str, rest: Option<&str>) -> Result<u32, String> {
    let Some(r) = rest else { return Ok(DEFAULT_TICK_HZ) };
    match r.parse::<u32>() {
        Ok(hz) if (1..=100_000).contains(&hz) => Ok(hz),
        _ => Err(format!("timer {name}:{r}: the tick rate must be 1 to 100000 Hz (e.g. {name}:100)")),
    }
}

impl TimerKind {
    /// Parses an `-i` argument.
    pub fn parse(s: &str) -> Result<TimerKind, String> {
        let up = s.to_ascii_uppercase();
        let (head, rest) = match up.split_once(':') {
            Some((h, r)) => (h, Some(r)),
            None => (up.as_str(), None),
        };
        match head {
            "TICK" => return tick_hz(head, rest).map(TimerKind::Tick),
            "LINUX24" => return tick_hz(head, rest).map(TimerKind::Linux24),
            _ if rest.is_some() => {
                return Err(format!("timer '{s}': only TICK and LINUX24 take a rate (:Hz)"))
            }
            _ => {}
        }
        match head {
            "NATIVE" => Ok(TimerKind::Native),
            "HR" => Ok(TimerKind::Hr),
            "TIMERFD" => Ok(TimerKind::Timerfd),
            "RTC" => Ok(TimerKind::Rtc),
            "MM" => Err("MM (Win32 multimedia timers) does not exist on Linux; use HR or TIMERFD".into()),
            _ => Err(format!("unknown timer '{s}' (NATIVE, HR, TIMERFD, RTC, TICK[:Hz], LINUX24[:Hz])")),
        }
    }

    /// The appendix-A name (`TICK:100`, `LINUX24:100` for the emulated ticks).
    pub fn name(self) -> String {
        match self {
            TimerKind::Native => "NATIVE".into(),
            TimerKind::Hr => "HR".into(),
            TimerKind::Timerfd => "TIMERFD".into(),
            TimerKind::Rtc => "RTC".into(),
            TimerKind::Tick(hz) => format!("TICK:{hz}"),
            TimerKind::Linux24(hz) => format!("LINUX24:{hz}"),
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
    /// An emulated tick: ns between ticks.
    Tick(u64),
    /// Linux 2.4's `nanosleep`: ns between ticks, and whether the thread was real-time when the
    /// timer was opened (its class is set before).
    Linux24 {
        /// ns between ticks.
        tick_ns: u64,
        /// `SCHED_FIFO` or `SCHED_RR`: short sleeps busy-wait.
        rt: bool,
    },
}

/// The first tick (a multiple of `tick_ns`) at or after `t`.
pub fn tick_at_or_after(t: u64, tick_ns: u64) -> u64 {
    t.div_ceil(tick_ns) * tick_ns
}

/// When Linux 2.4's `nanosleep` of `target - now` wakes a thread on a tick of `tick_ns`: the
/// sleep is ⌈t / tick⌉ + 1 jiffies counted from the last tick (`timespec_to_jiffies` + 1), so a
/// thread wakes between 0 and two ticks late; `None` when a real-time thread (`rt`) busy-waits
/// instead (at most 2 ms, `udelay`), or when `target` has passed.
pub fn linux24_wake(now: u64, target: u64, tick_ns: u64, rt: bool) -> Option<u64> {
    let t = target.checked_sub(now).filter(|&t| t > 0)?;
    if rt && t <= LINUX24_SPIN_NS {
        return None;
    }
    Some(now / tick_ns * tick_ns + (t.div_ceil(tick_ns) + 1) * tick_ns)
}

/// Sleeps until `CLOCK_MONOTONIC` reaches `target`, absolutely, restarting on EINTR.
fn sleep_abs(target: u64) {
    let ts = timespec(target);
    while clock_nanosleep(ClockId::CLOCK_MONOTONIC, ClockNanosleepFlags::TIMER_ABSTIME, &ts)
        == Err(Errno::EINTR)
    {}
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
            TimerKind::Tick(hz) => Ok(Timer::Tick(1_000_000_000 / u64::from(hz))),
            TimerKind::Linux24(hz) => {
                Ok(Timer::Linux24 { tick_ns: 1_000_000_000 / u64::from(hz), rt: sys::is_rt_thread() })
            }
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
            // Absolute sleeps restart safely on EINTR.
            Timer::Hr => sleep_abs(target),
            Timer::Tick(tick_ns) => sleep_abs(tick_at_or_after(target, *tick_ns)),
            Timer::Linux24 { tick_ns, rt } => {
                let now = mono_ns();
                match linux24_wake(now, target, *tick_ns, *rt) {
                    Some(wake) => sleep_abs(wake),
                    None if target > now => {
                        // udelay: the CPU is held, at the thread's priority, to the whole µs.
                        let until = now + (target - now).div_ceil(1000) * 1000;
                        while mono_ns() < until {
                            std::hint::spin_loop();
                        }
                    }
                    None => {}
                }
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

    #[test]
    fn emulated_ticks_parse_with_a_rate_and_name_it() {
        assert_eq!(TimerKind::parse("tick"), Ok(TimerKind::Tick(100)));
        assert_eq!(TimerKind::parse("TICK:250"), Ok(TimerKind::Tick(250)));
        assert_eq!(TimerKind::parse("linux24"), Ok(TimerKind::Linux24(100)));
        assert_eq!(TimerKind::parse("LINUX24:1000").unwrap().name(), "LINUX24:1000");
        assert!(TimerKind::parse("TICK:0").unwrap_err().contains("1 to 100000"));
        assert!(TimerKind::parse("TICK:x").is_err());
        assert!(TimerKind::parse("HR:100").unwrap_err().contains("only TICK and LINUX24"));
    }

    #[test]
    fn a_tick_timer_wakes_on_the_first_tick_at_or_after_the_target() {
        assert_eq!(tick_at_or_after(20_000_000, 10_000_000), 20_000_000);
        assert_eq!(tick_at_or_after(20_000_001, 10_000_000), 30_000_000);
        let mut t = Timer::open(TimerKind::Tick(100), 1_000_000).unwrap();
        let target = mono_ns() + 1_000_000;
        t.sleep_until(target);
        let woke = mono_ns();
        assert!(woke >= tick_at_or_after(target, 10_000_000), "woke before the tick");
    }

    #[test]
    fn linux24_sleeps_one_tick_more_than_asked_and_busy_waits_short_rt_sleeps() {
        let j = 10_000_000;
        // 3 ms into a jiffy, 10 ms asked: 1 + 1 jiffies from the last tick, 17 ms after the call.
        assert_eq!(linux24_wake(3_000_000, 13_000_000, j, false), Some(20_000_000));
        // 15 ms asked just after a tick: 2 + 1 jiffies, almost 15 ms late.
        assert_eq!(linux24_wake(10_000_001, 25_000_001, j, false), Some(40_000_000));
        // 2 ms or less: a real-time thread spins, a normal one sleeps to the tick after next.
        assert_eq!(linux24_wake(3_000_000, 5_000_000, j, true), None);
        assert_eq!(linux24_wake(3_000_000, 5_000_000, j, false), Some(20_000_000));
        assert_eq!(linux24_wake(3_000_000, 5_000_001, j, true), Some(20_000_000));
        assert_eq!(linux24_wake(5_000_000, 5_000_000, j, false), None);
        // A real-time spin holds the CPU to the target.
        let mut t = Timer::Linux24 { tick_ns: j, rt: true };
        let target = mono_ns() + 500_000;
        t.sleep_until(target);
        assert!(mono_ns() >= target);
    }
}
