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
    #[inline]
    pub fn start(&mut self, now: Nanos) {
        *self = Usage { acc: 0.0, at: now, since: Some(now) };
    }

    /// The task was billed `charged` ending at `now`.
    #[inline]
    pub fn add(&mut self, charged: Nanos, now: Nanos) {
        if self.since.is_none() {
            self.start(now.saturating_sub(charged));
        }
        self.acc = self.decayed(now) + charged as f64;
        self.at = now.max(self.at);
    }

    #[inline]
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
