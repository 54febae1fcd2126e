//! Per-priority fair queues ordered by biased virtual finishing time (SMART §4.3, eqs. 1–7).
//!
//! Shared by [`crate::smart`] (which adds bias, deadlines and the working schedule on top) and
//! [`crate::wfq`] (which picks the head of the highest non-empty queue). The bookkeeping follows the
//! dissertation literally:
//!
//! * a task's **virtual time** advances by `charged / S` when it is billed (eq. 1);
//! * its queue's **queue virtual time** `V_P` advances by `charged / ΣS` over the tasks that are members of
//!   the queue, running, runnable or sleeping with credit (eq. 2);
//! * its **BVFT** is `β = v + (Q − E)/S + B/S` for quantum `Q`, `E` of it used, total bias `B`: this is the
//!   virtual time at which the current quantum would end, so it does not move while the quantum is used
//!   and grows by `Q/S + b/S` when a new quantum starts (eqs. 3, 4, 6);
//! * a task that blocks stays a member for a **credit duration**; then it leaves, keeping
//!   `Δ = v − V_P` (eq. 5), and on rejoining gets `β = V_P + Δ + Q/S` with its bias reset (eq. 7);
//! * a new priority re-joins as a new task (eq. 3); a new share leaves and re-joins (eqs. 6–7);
//! * a zero share gives `β = ∞`: such legacy tasks queue behind every task with a share, in insertion
//!   order (SMART §5.3).
//!
//! Ties in β are broken by insertion order, with "front" and "back" insertion as in the Solaris
//! dispatcher SMART replaced (§5.3): a preempted task goes in front of its equals, others behind.
//!
//! Approximation, stated: `V_P` is advanced when a task is billed (at its stop), with the `ΣS` of that
//! moment. If membership changes while a task runs (another task's credit expires), the part of the run
//! before the change is divided by the new `ΣS`. The error is at most one quantum's worth per change.
//!
//! **N CPUs.** A task runs on one CPU at a time, so on `p` CPUs a share above `ΣS/p` cannot be given:
//! the task would be owed more than a whole CPU, its virtual time would lag and, once others block, it
//! would be repaid by starving them. As Surplus Fair Scheduling does (Chandra, Adler, Goyal, Shenoy,
//! OSDI 2000, "weight readjustment"), the members of each priority queue are sorted by share, and each
//! of the first `p − 1` whose share exceeds what the rest leave it, `S_i > Σ_{j>i} S_j / (p − i)`
//! (counting CPUs from the largest share down), is given `S_i' = Σ_{j>i} S_j / (p − i)`: exactly one
//! CPU. Virtual times then advance with these effective shares; with no more members than CPUs each
//! gets one CPU and all effective shares are equal. On one CPU nothing changes (every share is
//! feasible), and the arithmetic is the same as before, operation for operation.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use crate::{slot, Availability, Nanos, Ord64, TaskId, View};

/// The fair-queueing state of one task.
#[derive(Clone, Debug, Default)]
pub struct FairTask {
    /// Priority (larger = more important).
    pub prio: i32,
    /// Share; zero = legacy task (β = ∞).
    pub share: u32,
    /// Effective share: `share`, unless it is readjusted on N CPUs (see the module documentation).
    pub eff: f64,
    /// Virtual time `v` (eq. 1), in nanoseconds per share.
    pub v: f64,
    /// Current quantum `Q`.
    pub q: Nanos,
    /// Execution `E` received toward the current quantum.
    pub e: Nanos,
    /// Total bias `B` (nanoseconds of CPU).
    pub bias: Nanos,
    /// Member of its priority queue (counts in `ΣS`).
    pub in_queue: bool,
    /// Runnable and not running (in the ordered set).
    pub queued: bool,
    /// `Δ` saved when it left the queue (eq. 5).
    pub delta: f64,
    /// Tie-break sequence number of its current position.
    seq: i64,
    /// When its sleep credit ends, while it sleeps as a member.
    credit_until: Option<Nanos>,
    /// It was admitted and not removed.
    live: bool,
    /// Its key in the ordered set, while `queued`: taken out by it without working out β again.
    key: Key,
}

impl FairTask {
    /// Biased virtual finishing time β = v + (Q − E)/S + B/S.
    pub fn bvft(&self) -> f64 {
        if self.share == 0 {
            return f64::INFINITY;
        }
        let s = self.eff;
        self.v + (self.q.saturating_sub(self.e)) as f64 / s + self.bias as f64 / s
    }

    /// Quantum left: Q − E.
    pub fn left(&self) -> Nanos {
        self.q.saturating_sub(self.e)
    }
}

/// Per-priority queue state.
#[derive(Clone, Debug, Default)]
struct PrioQueue {
    vtime: f64,
    /// Total share of the members.
    shares: u64,
    /// Total effective share of the members (`shares` on one CPU).
    eff: f64,
    /// Members by share, largest first (kept on N CPUs only, for readjustment).
    members: BTreeSet<(Reverse<u32>, u32)>,
}

type Key = (Reverse<i32>, Ord64, i64, u32);

/// A task's place in value order (smaller = more valuable): priority, then BVFT, then queue position.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ValueKey(Key);

/// The set of priority queues.
#[derive(Clone, Debug)]
pub struct FairQueues {
    cpus: usize,
    tasks: Vec<FairTask>,
    queues: BTreeMap<i32, PrioQueue>,
    runnable: BTreeSet<Key>,
    seq_back: i64,
    seq_front: i64,
    /// Pending credit expiries `(when, task)`, earliest first. An entry is current while its task's
    /// `credit_until` is its time; one that is not is dropped when it comes to the top, and the top is
    /// always current (so [`FairQueues::next_expiry`] is a look at it).
    expiries: BinaryHeap<Reverse<(Nanos, u32)>>,
}

impl Default for FairQueues {
    fn default() -> Self {
        FairQueues::new(1)
    }
}

impl FairQueues {
    /// Fair queues for `cpus` CPUs.
    pub fn new(cpus: usize) -> Self {
        FairQueues {
            cpus: cpus.max(1),
            tasks: Vec::new(),
            queues: BTreeMap::new(),
            runnable: BTreeSet::new(),
            seq_back: 0,
            seq_front: 0,
            expiries: BinaryHeap::new(),
        }
    }

    /// A task's place in value order, running or not.
    pub fn value_key(&self, t: TaskId) -> ValueKey {
        ValueKey(self.key(t))
    }

    /// Gives the members of priority queue `prio` their effective shares (see the module
    /// documentation); on one CPU there is nothing to do.
    fn readjust(&mut self, prio: i32) {
        if self.cpus <= 1 {
            return;
        }
        let Some(pq) = self.queues.get(&prio) else { return };
        let members: Vec<(u32, u32)> =
            pq.members.iter().filter(|m| m.0 .0 > 0).map(|m| (m.0 .0, m.1)).collect();
        let p = self.cpus;
        let mut eff: Vec<f64> = members.iter().map(|m| m.0 as f64).collect();
        if members.len() <= p {
            eff.iter_mut().for_each(|e| *e = 1.0);
        } else {
            let mut rest: f64 = eff.iter().sum();
            for (i, e) in eff.iter_mut().enumerate().take(p - 1) {
                // `rest` is the sum of this share and every smaller one; p − i CPUs are left for them.
                if *e * (p - i) as f64 <= rest {
                    break;
                }
                rest -= *e;
                *e = rest / (p - i - 1) as f64;
            }
        }
        for (&(_, id), e) in members.iter().zip(eff) {
            if self.tasks[id as usize].eff != e {
                self.update(TaskId(id), |f| f.eff = e);
            }
        }
        let total = members.iter().map(|m| self.tasks[m.1 as usize].eff).sum();
        self.queues.get_mut(&prio).expect("the queue").eff = total;
    }

    /// The state of a task.
    pub fn task(&self, t: TaskId) -> &FairTask {
        &self.tasks[t.idx()]
    }

    /// Queue virtual time of a priority.
    pub fn queue_vtime(&self, prio: i32) -> f64 {
        self.queues.get(&prio).map_or(0.0, |q| q.vtime)
    }

    /// Total share of the members of a priority queue.
    pub fn queue_shares(&self, prio: i32) -> u64 {
        self.queues.get(&prio).map_or(0, |q| q.shares)
    }

    /// Availability (SMART §3.4.3): the task's share of its priority queue's shares of what the more
    /// important priorities have recently left.
    pub fn availability(&self, t: TaskId, v: &View) -> Availability {
        let f = &self.tasks[t.idx()];
        v.availability_by_rank(t, |x| self.tasks[x.idx()].prio, u64::from(f.share), self.queue_shares(f.prio))
    }

    /// Priorities with members, most important first, with their total shares.
    pub fn priorities(&self) -> impl Iterator<Item = (i32, u64)> + '_ {
        self.queues.iter().rev().filter(|(_, q)| q.shares > 0).map(|(p, q)| (*p, q.shares))
    }

    fn key(&self, t: TaskId) -> Key {
        let f = &self.tasks[t.idx()];
        (Reverse(f.prio), Ord64(f.bvft()), f.seq, t.0)
    }

    /// A task is created with quantum `q` (eq. 3): it joins its queue at the queue virtual time.
    pub fn admit(&mut self, t: TaskId, prio: i32, share: u32, q: Nanos) {
        let ft = slot(&mut self.tasks, t);
        *ft = FairTask { prio, share, eff: share as f64, q, live: true, ..FairTask::default() };
        self.join(t, 0.0);
    }

    fn join(&mut self, t: TaskId, delta: f64) {
        let (prio, share) = (self.tasks[t.idx()].prio, self.tasks[t.idx()].share);
        let multi = self.cpus > 1;
        let pq = self.queues.entry(prio).or_default();
        pq.shares += share as u64;
        pq.eff += share as f64;
        if multi {
            pq.members.insert((Reverse(share), t.0));
        }
        let vt = pq.vtime;
        let ft = &mut self.tasks[t.idx()];
        ft.v = vt + delta;
        ft.e = 0;
        ft.bias = 0;
        ft.in_queue = true;
        ft.delta = 0.0;
        ft.eff = share as f64;
        self.readjust(prio);
    }

    fn leave(&mut self, t: TaskId) {
        let ft = &mut self.tasks[t.idx()];
        if !ft.in_queue {
            return;
        }
        let pq = self.queues.get_mut(&ft.prio).expect("member of a queue that does not exist");
        ft.delta = ft.v - pq.vtime;
        pq.shares -= ft.share as u64;
        pq.eff -= ft.eff;
        pq.members.remove(&(Reverse(ft.share), t.0));
        ft.in_queue = false;
        let prio = ft.prio;
        if ft.credit_until.take().is_some() {
            self.drop_stale();
        }
        self.readjust(prio);
    }

    /// The task is gone.
    pub fn remove(&mut self, t: TaskId) {
        self.dequeue(t);
        self.leave(t);
        self.tasks[t.idx()].live = false;
    }

    /// Change a task's state, keeping the ordered set consistent.
    pub fn update<R>(&mut self, t: TaskId, f: impl FnOnce(&mut FairTask) -> R) -> R {
        let queued = self.tasks[t.idx()].queued;
        if queued {
            self.runnable.remove(&self.tasks[t.idx()].key);
        }
        let r = f(&mut self.tasks[t.idx()]);
        if queued {
            let k = self.key(t);
            self.tasks[t.idx()].key = k;
            self.runnable.insert(k);
        }
        r
    }

    /// Bill `charged` to a task (eqs. 1 and 2): its virtual time, its quantum, its queue's virtual time.
    pub fn charge(&mut self, t: TaskId, charged: Nanos) {
        let ft = &mut self.tasks[t.idx()];
        ft.e += charged;
        if ft.share > 0 {
            ft.v += charged as f64 / ft.eff;
        }
        if ft.in_queue {
            if let Some(pq) = self.queues.get_mut(&ft.prio) {
                if pq.shares > 0 {
                    pq.vtime += charged as f64 / pq.eff;
                }
            }
        }
    }

    /// Put a runnable task into the ordered set: in front of its equals (`front`) or behind them.
    pub fn enqueue(&mut self, t: TaskId, front: bool) {
        let seq = if front {
            self.seq_front -= 1;
            self.seq_front
        } else {
            self.seq_back += 1;
            self.seq_back
        };
        let ft = &mut self.tasks[t.idx()];
        debug_assert!(ft.live && !ft.queued);
        ft.seq = seq;
        ft.queued = true;
        let k = self.key(t);
        self.tasks[t.idx()].key = k;
        self.runnable.insert(k);
    }

    /// Take a task out of the ordered set (it was picked to run, or it goes away).
    pub fn dequeue(&mut self, t: TaskId) {
        let ft = &mut self.tasks[t.idx()];
        if ft.queued {
            ft.queued = false;
            self.runnable.remove(&ft.key);
        }
    }

    /// How many tasks are runnable (in the ordered set).
    pub fn runnable_count(&self) -> usize {
        self.runnable.len()
    }

    /// Runnable tasks in value-tuple order: higher priority first, then earlier BVFT.
    pub fn in_value_order(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.runnable.iter().map(|k| TaskId(k.3))
    }

    /// Is `a` of higher value than `b` (priority, then BVFT, then queue position)?
    pub fn higher_value(&self, a: TaskId, b: TaskId) -> bool {
        let ka = self.key(a);
        let kb = self.key(b);
        ka < kb
    }

    /// The running task blocked: it keeps its membership (and so its credit) for `credit`, then leaves.
    pub fn block(&mut self, t: TaskId, now: Nanos, credit: Nanos) {
        let ft = &self.tasks[t.idx()];
        if credit > 0 && !ft.queued && ft.in_queue && ft.credit_until == Some(now.saturating_add(credit)) {
            // Already so (SMART blocks a sleeping task again when its constraint is set, most often
            // to the same end): its entry in `expiries` stands.
            return;
        }
        self.dequeue(t);
        let had = self.tasks[t.idx()].credit_until.take().is_some();
        if credit == 0 {
            self.leave(t);
        } else if self.tasks[t.idx()].in_queue {
            let until = now.saturating_add(credit);
            self.tasks[t.idx()].credit_until = Some(until);
            self.expiries.push(Reverse((until, t.0)));
        }
        if had {
            self.drop_stale();
        }
    }

    /// A blocked task woke up. A member just loses its pending expiry; a task that left rejoins (eq. 7)
    /// with a fresh quantum `q` and no bias; with `forfeit_credit` its `Δ` is not allowed below zero
    /// (plain WFQ: no credit for having slept).
    pub fn wake(&mut self, t: TaskId, q: Nanos, forfeit_credit: bool) {
        if self.tasks[t.idx()].credit_until.take().is_some() {
            self.drop_stale();
        }
        let ft = &mut self.tasks[t.idx()];
        if !ft.in_queue {
            let delta = if forfeit_credit { ft.delta.max(0.0) } else { ft.delta };
            ft.q = q;
            self.join(t, delta);
        }
        self.enqueue(t, false);
    }

    /// The earliest pending credit expiry.
    pub fn next_expiry(&self) -> Option<Nanos> {
        self.expiries.peek().map(|e| e.0 .0)
    }

    /// Drops the entries at the top of `expiries` that are no longer current.
    fn drop_stale(&mut self) {
        while let Some(&Reverse((at, id))) = self.expiries.peek() {
            if self.tasks[id as usize].credit_until == Some(at) {
                break;
            }
            self.expiries.pop();
        }
    }

    /// Sleeping tasks whose credit ended by `now` leave their queues (eq. 5).
    pub fn expire(&mut self, now: Nanos) {
        while let Some(&Reverse((at, id))) = self.expiries.peek() {
            if at > now {
                break;
            }
            self.expiries.pop();
            let t = TaskId(id);
            self.tasks[t.idx()].credit_until = None;
            self.leave(t);
            self.drop_stale();
        }
    }

    /// New priority and/or share (§4.3 "Reassigned user parameters"). A new priority joins the new queue
    /// as a new task would (eq. 3); a new share leaves and rejoins keeping `Δ` (eqs. 6, 7).
    pub fn set_params(&mut self, t: TaskId, prio: i32, share: u32) {
        let queued = self.tasks[t.idx()].queued;
        self.dequeue(t);
        let old = self.tasks[t.idx()].clone();
        if old.prio != prio || old.share != share {
            let was_member = old.in_queue;
            self.leave(t);
            let delta = if old.prio != prio { 0.0 } else { self.tasks[t.idx()].delta };
            let ft = &mut self.tasks[t.idx()];
            ft.prio = prio;
            ft.share = share;
            if was_member || queued {
                self.join(t, delta);
            } else {
                // Asleep and already out of its queue: it keeps Δ for its rejoin.
                let ft = &mut self.tasks[t.idx()];
                ft.delta = delta;
            }
        }
        if queued {
            self.enqueue(t, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MS;

    #[test]
    fn creation_and_quantum_follow_eqs_3_and_4() {
        let mut f = FairQueues::default();
        f.admit(TaskId(0), 0, 2, 10 * MS);
        // β(τ0) = V_P(τ0) + Q/S = 0 + 10ms/2
        assert_eq!(f.task(TaskId(0)).bvft(), 5e6);
        f.charge(TaskId(0), 4 * MS);
        // β does not move while the quantum is used
        assert_eq!(f.task(TaskId(0)).bvft(), 5e6);
        f.charge(TaskId(0), 6 * MS);
        f.update(TaskId(0), |t| {
            t.e -= t.q;
            t.q = 10 * MS;
            t.bias += 4 * MS;
        });
        // β = β(τ) + Q/S + b/S = 5ms + 5ms + 2ms
        assert_eq!(f.task(TaskId(0)).bvft(), 12e6);
        // V_P advanced by 10ms / ΣS = 5ms
        assert_eq!(f.queue_vtime(0), 5e6);
    }

    #[test]
    fn sleep_credit_is_limited_and_restored_eqs_5_to_7() {
        let mut f = FairQueues::default();
        let (a, b) = (TaskId(0), TaskId(1));
        f.admit(a, 0, 1, 10 * MS);
        f.admit(b, 0, 1, 10 * MS);
        f.wake(a, 10 * MS, false);
        // b blocks with 20ms of credit while a runs 100ms
        f.block(b, 0, 20 * MS);
        f.dequeue(a);
        f.charge(a, 10 * MS); // V_P += 10ms/2
        f.expire(10 * MS);
        assert!(f.task(b).in_queue);
        f.expire(20 * MS);
        assert!(!f.task(b).in_queue);
        // Δ = v − V_P = 0 − 5ms
        assert_eq!(f.task(b).delta, -5e6);
        f.charge(a, 90 * MS); // alone now: V_P += 90ms
        f.wake(b, 10 * MS, false);
        // β = V_P + Δ + Q/S = 95ms − 5ms + 10ms
        assert_eq!(f.task(b).bvft(), 100e6);
    }

    #[test]
    fn zero_share_queues_behind_in_fifo_order() {
        let mut f = FairQueues::default();
        for i in 0..3 {
            f.admit(TaskId(i), 0, if i == 2 { 1 } else { 0 }, 10 * MS);
        }
        f.wake(TaskId(0), 10 * MS, false);
        f.wake(TaskId(1), 10 * MS, false);
        f.wake(TaskId(2), 10 * MS, false);
        let order: Vec<u32> = f.in_value_order().map(|t| t.0).collect();
        assert_eq!(order, vec![2, 0, 1]);
        // a preempted legacy task goes in front of its equals
        f.dequeue(TaskId(1));
        f.enqueue(TaskId(1), true);
        let order: Vec<u32> = f.in_value_order().map(|t| t.0).collect();
        assert_eq!(order, vec![2, 1, 0]);
    }

    #[test]
    fn new_share_keeps_delta_new_priority_starts_fresh() {
        let mut f = FairQueues::default();
        let (a, b) = (TaskId(0), TaskId(1));
        f.admit(a, 0, 1, 10 * MS);
        f.admit(b, 0, 1, 10 * MS);
        f.charge(a, 30 * MS); // v_a = 30ms, V = 15ms
        f.set_params(a, 0, 3); // Δ = 15ms kept, rejoin at V + Δ
        assert_eq!(f.task(a).v, 30e6);
        assert_eq!(f.queue_shares(0), 4);
        f.set_params(a, 5, 3);
        assert_eq!(f.task(a).v, 0.0);
        assert_eq!(f.queue_shares(0), 1);
        assert_eq!(f.queue_shares(5), 3);
    }
}
