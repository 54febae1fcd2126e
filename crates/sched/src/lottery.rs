//! Lottery scheduling (Waldspurger and Weihl, "Lottery Scheduling: Flexible Proportional-Share
//! Resource Management", OSDI 1994), global on N CPUs: a randomised proportional-share baseline.
//!
//! **State.** The runnable tasks in the order they joined, each holding as many tickets as its share
//! (§2), times its compensation (§4.5); a random generator seeded by the `seed` option.
//!
//! **Events.** A task that gives up the CPU having used a fraction `f` of its quantum (it blocked or
//! yielded) holds its tickets inflated by `1/f` until it next wins: a task that sleeps often still
//! gets its share of the CPU when it wants it (compensation tickets, §4.5). Winning resets it.
//!
//! **Decision.** On a free CPU, among the runnable tasks allowed there of the most important priority,
//! a ticket is drawn uniformly from all their tickets, and its holder runs for one `quantum` (§2,
//! "each allocation is determined by holding a lottery"). Tasks with share 0 hold no ticket: they run
//! only when no task with tickets is runnable, first come first served. A waking task preempts only
//! a CPU that runs a less important priority; within a priority the lottery waits for the quantum.
//!
//! **Tie-break.** None is needed: the draw decides, and the same seed and events give the same draws.
//!
//! **Where it is weak.** Proportional only in expectation: over `n` lotteries a task's wins vary by
//! about `√(n·p(1−p))` (§3.2), so short windows are unfair, which deterministic fair queueing (`wfq`,
//! `smart`) avoids. No currencies (§4.3), no ticket transfers (§4.1). A decision sums the tickets of
//! every runnable task: O(n), as the paper's list-based implementation.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::registry::{opt, Entry, Pace, Slice, Walks};
use crate::{
    preempt_lower_rank, slot, Availability, CpuId, Dispatch, Nanos, OptReader, Policy, PolicyError, Running,
    Stop, TaskId, TaskParams, View, MS,
};

/// The largest compensation: a task that used 1/1000 of its quantum or less holds 1000 times its
/// tickets until it next wins.
const MAX_COMPENSATION: f64 = 1000.0;

/// The quantum of a winner unless the scenario gives one.
const DEFAULT_QUANTUM: Nanos = 10 * MS;

/// The lottery policy.
#[derive(Debug)]
pub struct Lottery {
    quantum: Nanos,
    rng: Pcg64,
    /// Runnable tasks, in the order they joined.
    queue: Vec<TaskId>,
    /// Per task: its compensation factor (1 = none).
    compensation: Vec<f64>,
    lotteries: u64,
    /// Tasks the draws have visited ([`Policy::walked`]).
    walked: u64,
}

impl Lottery {
    /// Lottery scheduling with this quantum, its draws from `seed`.
    pub fn new(quantum: Nanos, seed: u64) -> Self {
        Lottery {
            quantum: quantum.max(1),
            rng: Pcg64::seed_from_u64(seed),
            queue: Vec::new(),
            compensation: Vec::new(),
            lotteries: 0,
            walked: 0,
        }
    }

    /// From scenario options: `quantum` (default 10ms), `seed` (default 1).
    pub fn from_options(o: &mut OptReader<'_>) -> Result<Self, PolicyError> {
        let quantum = o.slice("quantum", DEFAULT_QUANTUM)?;
        let seed = o.int("seed", 1, 0, i64::MAX)? as u64;
        Ok(Lottery::new(quantum, seed))
    }

    fn tickets(&self, t: TaskId, v: &View) -> f64 {
        f64::from(v.params(t).share) * self.compensation[t.idx()]
    }

    fn remove(&mut self, t: TaskId) {
        if let Some(i) = self.queue.iter().position(|&x| x == t) {
            self.queue.remove(i);
        }
    }
}

impl Policy for Lottery {
    fn admit(&mut self, t: TaskId, _p: &TaskParams, _v: &View) {
        *slot(&mut self.compensation, t) = 1.0;
    }

    fn exit(&mut self, t: TaskId, _v: &View) {
        self.remove(t);
    }

    fn wake(&mut self, t: TaskId, _v: &View) {
        self.queue.push(t);
    }

    fn stop(&mut self, t: TaskId, _cpu: CpuId, charged: Nanos, why: Stop, _v: &View) {
        if matches!(why, Stop::Blocked | Stop::Yielded) && charged < self.quantum {
            let f = charged as f64 / self.quantum as f64;
            self.compensation[t.idx()] = (1.0 / f).min(MAX_COMPENSATION);
        }
        if why != Stop::Blocked {
            self.queue.push(t);
        }
    }

    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, v: &View) -> Option<CpuId> {
        preempt_lower_rank(woken, prev, running, |r| v.params(r).priority)
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        // The top priority, the tickets, the draw: up to three passes over the queue.
        self.walked += 3 * self.queue.len() as u64;
        let allowed = |t: &TaskId| v.allows(*t, cpu);
        let top = self.queue.iter().filter(|t| allowed(t)).map(|&t| v.params(t).priority).max()?;
        let in_lottery = |t: &TaskId| allowed(t) && v.params(*t).priority == top;
        let total: f64 = self.queue.iter().filter(|t| in_lottery(t)).map(|&t| self.tickets(t, v)).sum();
        let winner = if total > 0.0 {
            self.lotteries += 1;
            let mut ticket = self.rng.random_range(0.0..total);
            let mut won = None;
            for &t in self.queue.iter().filter(|t| in_lottery(t)) {
                let held = self.tickets(t, v);
                if held > 0.0 {
                    won = Some(t);
                    if ticket < held {
                        break;
                    }
                    ticket -= held;
                }
            }
            won.expect("a ticket is held")
        } else {
            // Only tasks without tickets: the first to come.
            *self.queue.iter().find(|t| in_lottery(t)).expect("a task at the top priority")
        };
        self.remove(winner);
        self.compensation[winner.idx()] = 1.0;
        Some(Dispatch { task: winner, slice: Some(self.quantum) })
    }

    fn set_params(&mut self, _t: TaskId, _p: &TaskParams, _v: &View) {}

    fn availability(&self, t: TaskId, v: &View) -> Availability {
        let prio = |x: TaskId| v.params(x).priority;
        let tickets: u64 =
            v.live().filter(|&x| prio(x) == prio(t)).map(|x| u64::from(v.params(x).share)).sum();
        v.availability_by_rank(t, prio, u64::from(v.params(t).share), tickets)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("lotteries", self.lotteries)]
    }

    fn walked(&self) -> u64 {
        self.walked
    }
}

/// The registry's entry of `lottery`.
pub const ENTRY: Entry = Entry::new("lottery", "lottery.rs", |o, _| Ok(Box::new(Lottery::from_options(o)?)))
    .about(
        "lottery scheduling: a ticket drawn per quantum, tickets from the share (Waldspurger & Weihl 1994)",
    )
    .options(&[opt("quantum", "10ms", "how long a winner runs"), opt("seed", "1", "the seed of the draws")])
    .pace(|o, _| {
        let q = o.slice("quantum", DEFAULT_QUANTUM)?;
        Ok(Pace { slice: Some(Slice::of(o, "quantum", q)), timer: None, walks: Walks::Tasks })
    });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{test_core, Core};

    fn lottery(shares: &[u32], seed: u64) -> Core<Lottery> {
        let mut c = test_core(Lottery::new(10 * MS, seed), 1);
        for (i, &share) in shares.iter().enumerate() {
            c.admit(TaskId(i as u32), &TaskParams { share, ..TaskParams::default() }, 0);
            c.wake(TaskId(i as u32), 0);
        }
        c
    }

    /// Runs `n` quanta of hogs; returns the quanta each won.
    fn wins(c: &mut Core<Lottery>, n: usize, tasks: usize) -> Vec<u64> {
        let mut won = vec![0; tasks];
        let mut now = 0;
        for _ in 0..n {
            let d = c.pick(0, now).unwrap();
            won[d.task.idx()] += 1;
            now += 10 * MS;
            c.stop(d.task, 10 * MS, Stop::SliceEnd, now);
        }
        won
    }

    #[test]
    fn tickets_divide_the_cpu_in_proportion_within_the_spread_the_paper_gives() {
        // Shares 3:1, 20,000 lotteries: the first wins with p = 0.75, so 15,000 ± √(20,000·0.75·0.25)
        // ≈ ±61; five standard deviations is 306.
        let mut c = lottery(&[3, 1], 7);
        let won = wins(&mut c, 20_000, 2);
        assert!((won[0] as i64 - 15_000).abs() < 306, "{won:?}");
        assert_eq!(c.counters()[1], ("lotteries", 20_000));
    }

    #[test]
    fn the_same_seed_draws_the_same_winners_and_another_seed_others() {
        let run = |seed| wins(&mut lottery(&[1, 2, 3], seed), 200, 3);
        assert_eq!(run(5), run(5));
        let order = |seed| {
            let mut c = lottery(&[1, 1, 1], seed);
            (0..50)
                .map(|k| {
                    let d = c.pick(0, k * 10 * MS).unwrap();
                    c.stop(d.task, 10 * MS, Stop::SliceEnd, (k + 1) * 10 * MS);
                    d.task.0
                })
                .collect::<Vec<_>>()
        };
        assert_ne!(order(1), order(2));
    }

    #[test]
    fn a_task_that_used_a_quarter_of_its_quantum_holds_four_times_its_tickets_until_it_wins() {
        let mut c = lottery(&[1, 1], 1);
        let d = c.pick(0, 0).unwrap();
        c.stop(d.task, 10 * MS / 4, Stop::Blocked, 10 * MS / 4);
        assert_eq!(c.policy().compensation[d.task.idx()], 4.0);
        c.wake(d.task, 5 * MS);
        // Its chance is now 4 in 5: over many such lotteries it wins about 80 %.
        let (mut won, mut now) = (0, 5 * MS);
        for _ in 0..2_000 {
            c.policy_mut().compensation[d.task.idx()] = 4.0;
            let w = c.pick(0, now).unwrap();
            won += (w.task == d.task) as u32;
            now += MS;
            c.stop(w.task, MS, Stop::Preempted, now);
        }
        assert!((won as i64 - 1_600).abs() < 100, "{won} of 2000");
        assert_eq!(c.policy().compensation[d.task.idx()], 1.0, "winning resets it");
    }

    #[test]
    fn a_more_important_priority_always_wins_and_share_zero_waits_for_the_rest() {
        let mut c = test_core(Lottery::new(10 * MS, 1), 1);
        let p = |priority, share| TaskParams { priority, share, ..TaskParams::default() };
        c.admit(TaskId(0), &p(0, 5), 0);
        c.admit(TaskId(1), &p(1, 1), 0);
        c.admit(TaskId(2), &p(1, 0), 0);
        for t in 0..3 {
            c.wake(TaskId(t), 0);
        }
        for k in 0..20 {
            let d = c.pick(0, k * 10 * MS).unwrap();
            assert_eq!(d.task, TaskId(1), "priority 1 with tickets first");
            c.stop(d.task, 10 * MS, Stop::SliceEnd, (k + 1) * 10 * MS);
        }
        let d = c.pick(0, 200 * MS).unwrap();
        c.stop(d.task, MS, Stop::Blocked, 201 * MS);
        assert_eq!(c.pick(0, 201 * MS).unwrap().task, TaskId(2), "then priority 1 without tickets");
        assert_eq!(c.policy().preempt_for(TaskId(1), None, &[(0, TaskId(2))], c.view()), None);
    }
}
