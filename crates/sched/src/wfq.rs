//! Weighted fair queueing for the CPU (Demers et al.; stride scheduling), the proportional-share
//! baseline of SMART's evaluation (Nieh §6.4), with or without SMART's limited sleep credit (§6.4.3).
//!
//! **State.** The same per-priority fair queues as SMART ([`crate::fair`]): virtual time, queue virtual
//! time, virtual finishing time. No bias, no deadlines.
//!
//! **Decision.** On a free CPU, run the runnable task with the earliest virtual finishing time in the
//! most important priority (the first allowed there), for the rest of its quantum. On N CPUs the queues
//! are global and infeasible shares are readjusted ([`crate::fair`]); a waking task preempts the CPU
//! running the task of least value if it has more.
//!
//! **Sleep.** Plain WFQ (`wfq`) gives no credit for sleeping: a task leaves its queue when it blocks and
//! rejoins no earlier than the queue's virtual time. `wfq-credit` keeps a blocked task in its queue for
//! `credit` (default 100 ms, as SMART), so a task that slept recently is served first: the modification
//! Nieh §6.4.3 reports improved typing latency.
//!
//! **Tie-break.** Equal virtual finishing times go by queue position: a preempted task in front of
//! its equals, a woken one or one whose quantum ended behind them; then task number ([`crate::fair`]).
//!
//! **Where it is weak.** It ignores time constraints: in underload it misses deadlines it could meet; in
//! overload every real-time task is proportionally late (Nieh §4.8.2).

use crate::fair::FairQueues;
use crate::registry::{opt, Entry, Pace, Slice, Walks};
use crate::{
    least_important, Availability, CpuId, Dispatch, Nanos, OptReader, Policy, PolicyError, Running, Stop,
    TaskId, TaskParams, View, MS,
};

/// Configuration of WFQ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WfqConfig {
    /// Quantum of every task.
    pub quantum: Nanos,
    /// Sleep credit; 0 = none (plain WFQ).
    pub credit: Nanos,
}

impl WfqConfig {
    /// From scenario options: `quantum` (default 10ms) and, with credit, `credit` (default 100ms).
    pub fn from_options(o: &mut OptReader<'_>, with_credit: bool) -> Result<Self, PolicyError> {
        let quantum = o.slice("quantum", 10 * MS)?;
        let credit = if with_credit { o.time("credit", 100 * MS)? } else { 0 };
        Ok(WfqConfig { quantum, credit })
    }
}

/// The WFQ policy.
#[derive(Debug)]
pub struct Wfq {
    cfg: WfqConfig,
    fq: FairQueues,
}

impl Wfq {
    /// A WFQ scheduler for `cpus` CPUs.
    pub fn new(cfg: WfqConfig, cpus: usize) -> Self {
        Wfq { cfg, fq: FairQueues::new(cpus) }
    }
}

impl Policy for Wfq {
    fn admit(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        let q = if p.share == 0 { Nanos::MAX } else { self.cfg.quantum };
        self.fq.admit(t, p.priority, p.share, q);
        // Created asleep: it earns credit only as a sleeper would.
        self.fq.block(t, v.now(), self.cfg.credit);
    }

    fn exit(&mut self, t: TaskId, _v: &View) {
        self.fq.remove(t);
    }

    fn wake(&mut self, t: TaskId, _v: &View) {
        let q = self.fq.task(t).q;
        self.fq.wake(t, q, self.cfg.credit == 0);
    }

    fn stop(&mut self, t: TaskId, _cpu: CpuId, charged: Nanos, why: Stop, v: &View) {
        self.fq.charge(t, charged);
        let q = self.cfg.quantum;
        self.fq.update(t, |f| {
            while f.share > 0 && f.e >= f.q {
                f.e -= f.q;
                f.q = q;
            }
        });
        match why.requeue_front() {
            None => self.fq.block(t, v.now(), self.cfg.credit),
            Some(front) => self.fq.enqueue(t, front),
        }
    }

    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, _v: &View) -> Option<CpuId> {
        let (cpu, least) = least_important(running, prev, |r| self.fq.value_key(r))?;
        (self.fq.value_key(woken) < least).then_some(cpu)
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        self.fq.expire(v.now());
        let t = self.fq.in_value_order().find(|&t| v.allows(t, cpu))?;
        self.fq.dequeue(t);
        let f = self.fq.task(t);
        Some(Dispatch { task: t, slice: (f.share > 0).then(|| f.left().max(1)) })
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, _v: &View) {
        self.fq.set_params(t, p.priority, p.share);
    }

    fn availability(&self, t: TaskId, v: &View) -> Availability {
        self.fq.availability(t, v)
    }

    fn next_timer(&self) -> Option<Nanos> {
        self.fq.next_expiry()
    }

    fn timer(&mut self, v: &View) -> bool {
        self.fq.expire(v.now());
        false
    }
}

/// The registry's entry of `wfq`.
pub const WFQ: Entry =
    Entry::new("wfq", "wfq.rs", |o, cpus| Ok(Box::new(Wfq::new(WfqConfig::from_options(o, false)?, cpus))))
        .about("weighted fair queueing, no credit for sleeping")
        .options(&[opt("quantum", "10ms", "the quantum of every task")])
        .pace(pace);

/// The registry's entry of `wfq-credit`.
pub const WFQ_CREDIT: Entry = Entry::new("wfq-credit", "wfq.rs", |o, cpus| {
    Ok(Box::new(Wfq::new(WfqConfig::from_options(o, true)?, cpus)))
})
.about("weighted fair queueing with SMART's limited sleep credit (Nieh §6.4.3)")
.options(&[
    opt("quantum", "10ms", "the quantum of every task"),
    opt("credit", "100ms", "how long a blocked task stays in its queue"),
])
.pace(pace);

/// The pace of either: a slice end per quantum.
fn pace(o: &mut OptReader<'_>, _: usize) -> Result<Pace, PolicyError> {
    let c = WfqConfig::from_options(o, false)?;
    Ok(Pace { slice: Some(Slice::of(o, "quantum", c.quantum)), timer: None, walks: Walks::Nothing })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_core;

    fn run(credit: bool) -> Nanos {
        // b is created asleep while a runs 50 ms; then both compete: how long does b run first?
        let mut w = test_core(
            Wfq::new(WfqConfig { quantum: 10 * MS, credit: if credit { 100 * MS } else { 0 } }, 1),
            1,
        );
        let (a, b) = (TaskId(0), TaskId(1));
        for t in [a, b] {
            w.admit(t, &TaskParams::default(), 0);
        }
        w.wake(a, 0);
        let mut now = 0;
        while now < 50 * MS {
            let d = w.pick(0, now).unwrap();
            assert_eq!(d.task, a);
            now += d.slice.unwrap();
            w.stop(d.task, d.slice.unwrap(), Stop::SliceEnd, now);
        }
        w.wake(b, now);
        let mut b_run = 0;
        loop {
            let d = w.pick(0, now).unwrap();
            if d.task != b {
                return b_run;
            }
            now += d.slice.unwrap();
            b_run += d.slice.unwrap();
            w.stop(b, d.slice.unwrap(), Stop::SliceEnd, now);
        }
    }

    #[test]
    fn equal_virtual_finishing_times_go_by_queue_position() {
        // Equal shares woken at once in the order 2, 0, 1: equal VFTs, served in wake order; a task
        // preempted goes back in front of its equals, one whose quantum ended behind them.
        let mut w = test_core(Wfq::new(WfqConfig { quantum: 10 * MS, credit: 0 }, 1), 1);
        for i in 0..3 {
            w.admit(TaskId(i), &TaskParams::default(), 0);
        }
        for i in [2, 0, 1] {
            w.wake(TaskId(i), 0);
        }
        assert_eq!(w.pick(0, 0).unwrap().task, TaskId(2));
        w.stop(TaskId(2), 0, Stop::Preempted, 0);
        assert_eq!(w.pick(0, 0).unwrap().task, TaskId(2), "preempted: in front of its equals");
        w.stop(TaskId(2), 0, Stop::Blocked, 0);
        assert_eq!(w.pick(0, 0).unwrap().task, TaskId(0));
    }

    #[test]
    fn sleep_credit_lets_a_sleeper_catch_up_plain_wfq_does_not() {
        assert!(run(false) <= 10 * MS, "plain WFQ: at most one quantum, then alternate");
        assert!(run(true) >= 40 * MS, "with credit: b catches up for the time it slept");
    }
}
