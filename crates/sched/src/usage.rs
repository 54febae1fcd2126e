//! Recent CPU consumption of a task, for availability (SMART §3.4.3).

use crate::Nanos;

/// Time constant of the consumption average: one second, long enough to smooth a 40 ms period and
/// short enough to follow a change of load within a few seconds.
pub const USAGE_TAU: Nanos = 1_000_000_000;

/// An exponentially decaying sum of the CPU a task was billed, giving its recent consumption rate.
/// Bias-corrected at the start, so a task that has run 100 % for 10 ms reads 100 %, not 1 %.
#[derive(Clone, Debug, Default)]
pub struct Usage {
    acc: f64,
    at: Nanos,
    since: Option<Nanos>,
}

impl Usage {
    /// Start measuring at `now` (a task's admission).
    pub fn start(&mut self, now: Nanos) {
        *self = Usage { acc: 0.0, at: now, since: Some(now) };
    }

    /// The task was billed `charged` ending at `now`.
    pub fn add(&mut self, charged: Nanos, now: Nanos) {
        if self.since.is_none() {
            self.start(now.saturating_sub(charged));
        }
        self.acc = self.decayed(now) + charged as f64;
        self.at = now.max(self.at);
    }

    fn decayed(&self, now: Nanos) -> f64 {
        let dt = now.saturating_sub(self.at) as f64;
        self.acc * (-dt / USAGE_TAU as f64).exp()
    }

    /// Fraction of one CPU (0..=1) consumed recently.
    pub fn rate(&self, now: Nanos) -> f64 {
        let Some(since) = self.since else { return 0.0 };
        let age = now.saturating_sub(since) as f64;
        if age <= 0.0 {
            return 0.0;
        }
        let tau = USAGE_TAU as f64;
        let norm = tau * (1.0 - (-age / tau).exp());
        (self.decayed(now) / norm).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MS;

    #[test]
    fn steady_quarter_reads_quarter() {
        let mut u = Usage::default();
        u.start(0);
        let mut t = 0;
        for _ in 0..500 {
            t += 40 * MS;
            u.add(10 * MS, t);
        }
        let r = u.rate(t);
        assert!((r - 0.25).abs() < 0.01, "{r}");
    }

    #[test]
    fn fresh_full_use_reads_full() {
        let mut u = Usage::default();
        u.start(0);
        u.add(10 * MS, 10 * MS);
        assert!((u.rate(10 * MS) - 1.0).abs() < 1e-6);
    }
}

/// Usage and importance of every task, for availability in proportional-share policies.
#[derive(Clone, Debug, Default)]
pub(crate) struct Accounts {
    tasks: Vec<Account>,
}

#[derive(Clone, Debug, Default)]
struct Account {
    prio: i32,
    share: u32,
    live: bool,
    usage: Usage,
}

impl Accounts {
    pub(crate) fn admit(&mut self, t: crate::TaskId, prio: i32, share: u32, now: Nanos) {
        let a = crate::slot(&mut self.tasks, t);
        *a = Account { prio, share, live: true, usage: Usage::default() };
        a.usage.start(now);
    }
    pub(crate) fn set(&mut self, t: crate::TaskId, prio: i32, share: u32) {
        let a = &mut self.tasks[t.idx()];
        a.prio = prio;
        a.share = share;
    }
    pub(crate) fn exit(&mut self, t: crate::TaskId) {
        self.tasks[t.idx()].live = false;
    }
    pub(crate) fn add(&mut self, t: crate::TaskId, charged: Nanos, now: Nanos) {
        self.tasks[t.idx()].usage.add(charged, now);
    }
    /// Consumption: recent use. Allocation: what its priority and share entitle it to, i.e. its share
    /// of its priority queue (`queue_shares`) of what the more important priorities leave.
    pub(crate) fn availability(
        &self,
        t: crate::TaskId,
        now: Nanos,
        queue_shares: u64,
    ) -> crate::Availability {
        let me = &self.tasks[t.idx()];
        let above: f64 =
            self.tasks.iter().filter(|o| o.live && o.prio > me.prio).map(|o| o.usage.rate(now)).sum();
        let alloc = (1.0 - above).max(0.0) * me.share as f64 / queue_shares.max(1) as f64;
        crate::Availability { consumption_rate: 100.0 * me.usage.rate(now), allocation_rate: 100.0 * alloc }
    }
}
