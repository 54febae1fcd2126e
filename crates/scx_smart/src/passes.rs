//! How the scheduler's loop spends its time, pass by pass: the longest pass and the phase that took most
//! of it, the longest pause between two passes, and when the last pass ended.
//!
//! In full mode every task but a few kernel threads waits for this loop, so a loop that stops for
//! seconds gets the scheduler ejected by sched_ext's watchdog ("runnable task stall", "watchdog failed
//! to check in"). The kernel's dump then shows the tasks waiting, not why the loop stopped: whether a
//! pass was stuck in one of its phases (a lock, a system call), or the process was not run between
//! passes (the BPF side did not give it a CPU). These figures, printed when the scheduler unloads,
//! tell the two apart. Times are nanoseconds on one monotonic clock, given by the caller.

/// The loop's timings.
#[derive(Clone, Debug, Default)]
pub struct Passes {
    passes: u64,
    /// The pass in progress: its start, the last mark, and its longest phase so far.
    start: Option<u64>,
    mark: u64,
    phase: (&'static str, u64),
    /// The longest pass: its length, its longest phase and that phase's length, and its start.
    longest: (u64, &'static str, u64, u64),
    /// The longest pause between the end of a pass and the start of the next, and when it ended.
    pause: (u64, u64),
    last_end: Option<u64>,
}

impl Passes {
    /// A pass starts at `now`.
    pub fn begin(&mut self, now: u64) {
        if let Some(e) = self.last_end {
            let p = now.saturating_sub(e);
            if p > self.pause.0 {
                self.pause = (p, now);
            }
        }
        self.start = Some(now);
        self.mark = now;
        self.phase = ("", 0);
    }

    /// The phase `name` of the pass in progress ended at `now`.
    pub fn phase(&mut self, name: &'static str, now: u64) {
        let d = now.saturating_sub(self.mark);
        if d > self.phase.1 {
            self.phase = (name, d);
        }
        self.mark = now;
    }

    /// The pass in progress ended at `now`.
    pub fn end(&mut self, now: u64) {
        let Some(s) = self.start.take() else { return };
        self.passes += 1;
        let len = now.saturating_sub(s);
        if len > self.longest.0 {
            self.longest = (len, self.phase.0, self.phase.1, s);
        }
        self.last_end = Some(now);
    }

    /// One line for the exit report; times in ms, "ago" counted back from `now`.
    pub fn summary(&self, now: u64) -> String {
        let ms = |ns: u64| ns as f64 / 1e6;
        let ago = |t: u64| ms(now.saturating_sub(t));
        let (len, name, plen, at) = self.longest;
        let mut s = format!("{} passes", self.passes);
        if self.passes > 0 {
            s += &format!(
                ", the longest {:.1} ms ({:.0} ms ago; most in {} {:.1} ms), the longest pause between two {:.1} ms \
                 (ended {:.0} ms ago), the last ended {:.0} ms ago",
                ms(len),
                ago(at),
                if name.is_empty() { "-" } else { name },
                ms(plen),
                ms(self.pause.0),
                ago(self.pause.1),
                self.last_end.map_or(0.0, ago),
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_longest_pass_its_phase_and_the_longest_pause_are_kept() {
        let mut p = Passes::default();
        p.begin(0);
        p.phase("read", MS);
        p.phase("decide", 3 * MS);
        p.end(3 * MS);
        // A pause of 4 s: the loop was not run between two passes.
        p.begin(4003 * MS);
        p.phase("read", 4004 * MS);
        p.end(4004 * MS);
        // A short pass whose longest phase is another one does not replace the longest.
        p.begin(4005 * MS);
        p.phase("read", 4005 * MS);
        p.phase("decide", 4006 * MS);
        p.end(4006 * MS);
        let s = p.summary(5006 * MS);
        assert!(s.starts_with("3 passes, the longest 3.0 ms (5006 ms ago; most in decide 2.0 ms)"), "{s}");
        assert!(s.contains("the longest pause between two 4000.0 ms (ended 1003 ms ago)"), "{s}");
        assert!(s.ends_with("the last ended 1000 ms ago"), "{s}");
    }

    #[test]
    fn nothing_measured_says_so() {
        assert_eq!(Passes::default().summary(0), "0 passes");
    }
}
