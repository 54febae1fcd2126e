//! Where a periodic thread's time went, job by job, from what the thread itself can read: its
//! timestamps (CLOCK_MONOTONIC) and its kernel scheduling statistics (`/proc/thread-self/schedstat`:
//! CPU time, and *run delay*, the time it spent runnable on a run queue without running).
//!
//! A job is released at `release`, must finish by `due`, and needs `work` of CPU time (counted on the
//! thread's own CPU clock, so a job is never "slower than calibrated": whatever the emulated or
//! virtual CPU does, the job is done when the kernel has given it `work` of CPU time). Between the
//! release and the finish, the time not spent on the work is one of:
//!
//! * **timer**: from the release to the thread's wake-up (the timer fired late, or the machine did not
//!   run at all: a virtual CPU stopped by its host);
//! * **wait to start**: runnable after its wake-up, waiting for the CPU (the scheduler's decision and
//!   the preemption of whatever ran);
//! * **wait in work**: runnable but not running after it started (the scheduler gave the CPU to someone
//!   else before the job was done);
//! * **overshoot**: CPU time charged to the job beyond its work. The thread notices that its work is
//!   done only when it next reads its CPU clock; if the machine stalled just then, the kernel charged
//!   the stall to the running thread, and the job's CPU time overshoots (by a whole stall, under a
//!   hypervisor). This is the one way the work itself can take longer than asked;
//! * **unaccounted**: neither running nor runnable, which should be none (the thread does not block
//!   in its work);
//! * **overrun**: the previous job ended after this one's release, so this one started late by that.
//!
//! A missed job is put down to its largest loss. Each is measured, not inferred, except the timer's,
//! which is the rest of release → first instruction once the run delay is taken away.
//!
//! None of these tells whether the machine itself ran: on a virtual machine the host may stop the
//! virtual CPU, and the guest's clock runs on meanwhile, so a stop shows up as a late timer or as run
//! delay of whatever was runnable. [`Stalls`] are the stretches during which the machine ran nothing
//! (`scx_smart --stall-log`: timer expiries handled more than a millisecond late). [`explain`] puts a
//! missed job down to the machine ([`Cause::Stopped`]) when it would have met its deadline without
//! the stalls that kept it waiting ([`stalled_while_waiting`]), and to its largest loss otherwise.

use serde::{Deserialize, Serialize};

/// What a periodic thread recorded of one job (ns; CLOCK_MONOTONIC for times).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobTimes {
    /// The job's release.
    pub release: u64,
    /// Its deadline.
    pub due: u64,
    /// When the thread ran its first instruction for the job (after its sleep, or after the previous
    /// job when it did not sleep).
    pub resumed: u64,
    /// When its work was done.
    pub finish: u64,
    /// Whether it slept until the release (false: the previous job ended after it).
    pub slept: bool,
    /// CPU time the job needed (its work).
    pub work: u64,
    /// CPU time charged to it (thread CPU clock, resumed → finish): the work and any overshoot.
    pub cpu: u64,
    /// Run delay between going to sleep and `resumed`: waiting for the CPU after the wake-up.
    pub wait_to_start: u64,
    /// Run delay between `resumed` and `finish`.
    pub wait_in_work: u64,
}

/// What a job lost its time to (see the module documentation).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Loss {
    /// The wake-up came late.
    Timer,
    /// Runnable after the wake-up, not yet running.
    WaitToStart,
    /// Runnable but not running after starting.
    WaitInWork,
    /// CPU time charged beyond the work.
    Overshoot,
    /// Neither running nor runnable.
    Unaccounted,
    /// The previous job ran past this one's release.
    Overrun,
}

impl Loss {
    /// Every loss, in the order printed.
    pub const ALL: [Loss; 6] =
        [Loss::Timer, Loss::WaitToStart, Loss::WaitInWork, Loss::Overshoot, Loss::Unaccounted, Loss::Overrun];

    /// A short name for output.
    pub fn name(self) -> &'static str {
        match self {
            Loss::Timer => "timer",
            Loss::WaitToStart => "wait_to_start",
            Loss::WaitInWork => "wait_in_work",
            Loss::Overshoot => "overshoot",
            Loss::Unaccounted => "unaccounted",
            Loss::Overrun => "overrun",
        }
    }
}

impl JobTimes {
    /// Whether the job finished by its deadline.
    pub fn met(&self) -> bool {
        self.finish <= self.due
    }

    /// Time lost to `loss`, ns.
    pub fn lost(&self, loss: Loss) -> u64 {
        let late_start = self.resumed.saturating_sub(self.release);
        match loss {
            Loss::Timer if self.slept => late_start.saturating_sub(self.wait_to_start),
            Loss::WaitToStart if self.slept => self.wait_to_start.min(late_start),
            Loss::Overrun if !self.slept => late_start,
            Loss::Timer | Loss::WaitToStart | Loss::Overrun => 0,
            Loss::WaitInWork => self.wait_in_work,
            Loss::Overshoot => self.cpu.saturating_sub(self.work),
            Loss::Unaccounted => self
                .finish
                .saturating_sub(self.resumed)
                .saturating_sub(self.cpu)
                .saturating_sub(self.wait_in_work),
        }
    }

    /// The largest loss (the first of equals in [`Loss::ALL`]'s order).
    pub fn main_loss(&self) -> Loss {
        let mut best = Loss::Timer;
        for l in Loss::ALL {
            if self.lost(l) > self.lost(best) {
                best = l;
            }
        }
        best
    }
}

/// The calling thread's `/proc/thread-self/schedstat`, opened once and read again with `pread` (one
/// system call per reading).
pub struct Schedstat(std::fs::File);

impl Schedstat {
    /// Opens the calling thread's file (the handle keeps naming that thread).
    pub fn open() -> std::io::Result<Schedstat> {
        std::fs::File::open("/proc/thread-self/schedstat").map(Schedstat)
    }

    /// (CPU time ns, run delay ns, timeslices) now.
    pub fn read(&self) -> Option<(u64, u64, u64)> {
        use std::os::unix::fs::FileExt;
        let mut buf = [0u8; 128];
        let n = self.0.read_at(&mut buf, 0).ok()?;
        let text = std::str::from_utf8(&buf[..n]).ok()?;
        let mut it = text.split_whitespace().map(|x| x.parse::<u64>().ok());
        Some((it.next()??, it.next()??, it.next()??))
    }
}

/// Stretches of time during which the machine ran nothing, as (start, end) ns, sorted and disjoint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stalls {
    spans: Vec<(u64, u64)>,
}

impl Stalls {
    /// At most this many stretches are kept (each new one past it is dropped and counted).
    pub const MAX: usize = 1 << 20;

    /// Adds a timer expiry handled at `end`, `late` ns after it was due: the machine did not run from
    /// `end − late` to `end`. Stretches that overlap (several timers handled in one interrupt) are
    /// merged, in whatever order they come. Returns false if it was dropped.
    pub fn add(&mut self, end: u64, late: u64) -> bool {
        let (mut start, mut end) = (end.saturating_sub(late), end);
        // The first stretch that ends at or after `start`, and every following one that begins by `end`.
        let first = self.spans.partition_point(|s| s.1 < start);
        let mut last = first;
        while last < self.spans.len() && self.spans[last].0 <= end {
            start = start.min(self.spans[last].0);
            end = end.max(self.spans[last].1);
            last += 1;
        }
        if first == last && self.spans.len() >= Self::MAX {
            return false;
        }
        self.spans.splice(first..last, [(start, end)]);
        true
    }

    /// The stretches.
    pub fn spans(&self) -> &[(u64, u64)] {
        &self.spans
    }

    /// Total time of the stretches, ns.
    pub fn total(&self) -> u64 {
        self.spans.iter().map(|s| s.1 - s.0).sum()
    }

    /// Time the machine did not run between `from` and `to`, ns.
    pub fn within(&self, from: u64, to: u64) -> u64 {
        let first = self.spans.partition_point(|s| s.1 <= from);
        self.spans[first..]
            .iter()
            .take_while(|s| s.0 < to)
            .map(|s| s.1.min(to).saturating_sub(s.0.max(from)))
            .sum()
    }

    /// Reads the lines `START END` (ns) that `scx_smart --stall-log` writes.
    pub fn parse(text: &str) -> Result<Stalls, String> {
        let mut st = Stalls::default();
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let mut it = line.split_whitespace().map(str::parse::<u64>);
            match (it.next(), it.next(), it.next()) {
                (Some(Ok(a)), Some(Ok(b)), None) if a <= b => {
                    st.add(b, b - a);
                }
                _ => return Err(format!("line {}: expected `START END` in ns, got `{line}`", n + 1)),
            }
        }
        Ok(st)
    }
}

/// What a missed job is put down to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// The machine ran nothing for long enough that, without those stalls, the job would have met its
    /// deadline.
    Stopped,
    /// Its largest loss, on a machine that ran.
    Loss(Loss),
}

impl Cause {
    /// A short name for output.
    pub fn name(self) -> &'static str {
        match self {
            Cause::Stopped => "machine_stopped",
            Cause::Loss(l) => l.name(),
        }
    }
}

/// Why `job` missed its deadline, or `None` if it met it (see the module documentation).
pub fn explain(job: &JobTimes, stalls: &Stalls) -> Option<Cause> {
    if job.met() {
        return None;
    }
    Some(if job.finish.saturating_sub(stalled_while_waiting(job, stalls)) <= job.due {
        Cause::Stopped
    } else {
        Cause::Loss(job.main_loss())
    })
}

/// The part of the machine's stalls inside `job` that delayed it: all of those before it started, and
/// those after, up to the time it lost then (waiting, or overshooting its work). A stall in the middle
/// of the work does not delay it: the guest's clock ran on and the kernel counted the stall as the
/// job's CPU time, so the job needed that much less real work.
pub fn stalled_while_waiting(job: &JobTimes, stalls: &Stalls) -> u64 {
    let before = stalls.within(job.release, job.resumed.max(job.release));
    let not_running = job.lost(Loss::WaitInWork) + job.lost(Loss::Overshoot) + job.lost(Loss::Unaccounted);
    before + stalls.within(job.resumed.max(job.release), job.finish).min(not_running)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn job(resumed: u64, wait_to_start: u64, wait_in_work: u64, finish: u64) -> JobTimes {
        JobTimes {
            release: 0,
            due: 15 * MS,
            resumed,
            finish,
            slept: true,
            work: 10 * MS,
            cpu: 10 * MS,
            wait_to_start,
            wait_in_work,
        }
    }

    #[test]
    fn the_time_between_release_and_finish_is_split_into_its_losses() {
        // Woke 1 ms late, waited 4 ms for the CPU, ran 10 ms with 2 ms of waiting in between.
        let j = job(5 * MS, 4 * MS, 2 * MS, 17 * MS);
        assert!(!j.met());
        assert_eq!(
            Loss::ALL.map(|l| j.lost(l)),
            [MS, 4 * MS, 2 * MS, 0, 0, 0],
            "timer, wait to start, wait in work, overshoot, unaccounted, overrun"
        );
        assert_eq!(j.main_loss(), Loss::WaitToStart);
        // The losses and the work add up to release → finish.
        assert_eq!(Loss::ALL.iter().map(|&l| j.lost(l)).sum::<u64>() + j.work, j.finish - j.release);
    }

    #[test]
    fn stalls_merge_per_interrupt_and_are_counted_inside_a_window() {
        let mut st = Stalls::default();
        // One interrupt handled at 10 ms two timers, due at 6 and 7 ms; another at 20 ms, 2 ms late.
        assert!(st.add(10 * MS, 4 * MS));
        assert!(st.add(10 * MS, 3 * MS));
        assert!(st.add(20 * MS, 2 * MS));
        assert_eq!(st.spans(), &[(6 * MS, 10 * MS), (18 * MS, 20 * MS)]);
        // Out of order and overlapping: still sorted and disjoint.
        let mut again = st.clone();
        assert!(again.add(10 * MS, 4 * MS) && again.add(3 * MS, MS));
        assert_eq!(again.spans(), &[(2 * MS, 3 * MS), (6 * MS, 10 * MS), (18 * MS, 20 * MS)]);
        assert!(again.add(19 * MS, 12 * MS));
        assert_eq!(again.spans(), &[(2 * MS, 3 * MS), (6 * MS, 20 * MS)]);
        assert_eq!(st.total(), 6 * MS);
        assert_eq!(st.within(0, 30 * MS), 6 * MS);
        assert_eq!(st.within(8 * MS, 19 * MS), 3 * MS);
        assert_eq!(st.within(10 * MS, 18 * MS), 0);
        assert_eq!(Stalls::parse("6000000 10000000\n\n18000000 20000000\n").unwrap(), st);
        assert!(Stalls::parse("5 4").unwrap_err().contains("line 1"));
    }

    #[test]
    fn a_miss_is_the_machines_when_it_would_have_met_its_deadline_without_the_stalls() {
        // Woke 4 ms late (the machine stopped from 0 to 4 ms), then ran: 2 ms late, but 4 ms of stall.
        let j = job(4 * MS, 0, 0, 17 * MS);
        let mut st = Stalls::default();
        st.add(4 * MS, 4 * MS);
        assert_eq!(explain(&j, &st), Some(Cause::Stopped));
        // Without the stall the late wake-up is the timer's.
        assert_eq!(explain(&j, &Stalls::default()), Some(Cause::Loss(Loss::Timer)));
        // A stall of 1 ms does not explain 2 ms of lateness: the largest loss is named.
        let mut small = Stalls::default();
        small.add(4 * MS, MS);
        assert_eq!(explain(&j, &small), Some(Cause::Loss(Loss::Timer)));
        assert_eq!(explain(&job(0, 0, 0, 12 * MS), &st), None);
    }

    #[test]
    fn a_stall_while_the_job_runs_does_not_excuse_it() {
        // Waited 3 ms to start, then 3 ms inside its 10 ms of work (the scheduler ran someone else):
        // 1 ms late. The machine stalled from 6 to 10 ms, while the job ran or waited: only the 3 ms it
        // waited can have been the stall's, which is enough.
        let j = job(3 * MS, 3 * MS, 3 * MS, 16 * MS);
        let mut st = Stalls::default();
        st.add(10 * MS, 4 * MS);
        assert_eq!(stalled_while_waiting(&j, &st), 3 * MS);
        assert_eq!(explain(&j, &st), Some(Cause::Stopped));
        // It waited 1 ms in its work: 1 ms of the stall counts, still enough.
        let mostly_ran = job(5 * MS, 5 * MS, MS, 16 * MS);
        assert_eq!(stalled_while_waiting(&mostly_ran, &st), MS);
        assert_eq!(explain(&mostly_ran, &st), Some(Cause::Stopped));
        // 2 ms late with the same stall: not enough, and the wait to start is named.
        let later = job(6 * MS, 6 * MS, MS, 17 * MS);
        assert_eq!(explain(&later, &st), Some(Cause::Loss(Loss::WaitToStart)));
    }

    #[test]
    fn a_stall_at_the_end_of_the_work_overshoots_it() {
        // The thread read 9.9 ms of CPU, the machine stalled 4 ms, and its next reading said 13.9 ms:
        // the stall was charged to it and the job ended 3.9 ms after its work did.
        let j = JobTimes { cpu: 13_900_000, ..job(300_000, 300_000, 0, 14_200_000 + 1_900_000) };
        assert_eq!(j.lost(Loss::Overshoot), 3_900_000);
        assert_eq!(j.main_loss(), Loss::Overshoot);
        assert_eq!(Loss::ALL.iter().map(|&l| j.lost(l)).sum::<u64>() + j.work, j.finish - j.release);
        let mut st = Stalls::default();
        st.add(14_200_000, 4_000_000);
        assert_eq!(explain(&j, &st), Some(Cause::Stopped));
    }

    #[test]
    fn a_late_timer_and_an_overrun_are_told_apart() {
        let late_timer = job(6 * MS, 0, 0, 16 * MS);
        assert_eq!(late_timer.main_loss(), Loss::Timer);
        let overrun = JobTimes { slept: false, ..late_timer };
        assert_eq!(overrun.main_loss(), Loss::Overrun);
        assert_eq!(overrun.lost(Loss::Timer), 0);
        // Time neither running nor waiting (the thread blocked in its work) is unaccounted.
        let blocked = job(0, 0, 0, 13 * MS);
        assert_eq!((blocked.lost(Loss::Unaccounted), blocked.main_loss()), (3 * MS, Loss::Unaccounted));
        assert!(blocked.met());
    }
}
