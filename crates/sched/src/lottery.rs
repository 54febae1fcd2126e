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
//! "each allocation is determined by holding a lottery"): the holders are counted in the order they
//! joined, and the ticket goes to the first whose tickets, added to those of the holders before it,
//! pass the ticket drawn. Tasks with share 0 hold no ticket: they run only when no task with tickets
//! is runnable, first come first served. A waking task preempts only a CPU that runs a less
//! important priority; within a priority the lottery waits for the quantum.
//!
//! **Tickets are whole numbers.** A task holds `share × compensation` tickets counted in units of
//! 1/65,536 of a ticket ([`TICKET_UNIT`]; compensation up to 1000×, so a task's count fits in 64
//! bits and a sum of them in 128), and the draw is a whole number below their sum. Sums are then
//! exact, and the winner does not depend on the order they were added in.
//!
//! **Search.** Each priority keeps its runnable tasks in join order with a Fenwick tree of their
//! tickets (partial sums over power-of-two ranges): the winner is found by descending it, O(log n),
//! and a task joins (at the end) or leaves (anywhere) or changes its share in O(log n); the slots
//! of tasks that left are dropped when they outnumber the members. A task that changes priority
//! while it waits moves to its new priority's tree at its place by join order, O(n). The top
//! priority is found among the priorities in use, and at most [`KEPT_PRIORITIES`] empty ones. This
//! is the "tree of partial ticket sums" the paper proposes, in its section on the implementation,
//! for large numbers of clients in place of its list. Once a task has a CPU affinity, a CPU may not
//! take every task of the top priority, and the decision walks the queue in join order instead,
//! O(n), as the list did. The tests check on random worlds that the tree, the walk and the paper's
//! list (written again in the tests) draw the same winners.
//!
//! **Tie-break.** None is needed: the draw decides, and the same seed and events give the same draws.
//!
//! **Where it is weak.** Proportional only in expectation: over `n` lotteries a task's wins vary by
//! about `√(n·p(1−p))` (§3.2), so short windows are unfair, which deterministic fair queueing (`wfq`,
//! `smart`) avoids. No currencies (§4.3), no ticket transfers (§4.1).

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

/// Priorities whose entries are kept when they empty: a decision passes over at most this many
/// empty ones.
const KEPT_PRIORITIES: usize = 8;

/// Tickets are counted in units of `1 / TICKET_UNIT` of a ticket.
pub const TICKET_UNIT: u64 = 1 << 16;

/// The compensation of a task that used fraction `f` of its quantum (`1/f`, at most
/// [`MAX_COMPENSATION`]), in units of `1 / TICKET_UNIT`.
fn compensation(f: f64) -> u64 {
    // Rounded to nearest by adding a half, exact below 2^52 (it is at most 1000 × 2^16).
    ((1.0 / f).min(MAX_COMPENSATION) * TICKET_UNIT as f64 + 0.5) as u64
}

/// A ticket drawn uniformly below `total` (above 0): from a 64-bit draw while the sum fits in 64 bits
/// (every run but those of huge shares), which costs a fraction of a 128-bit one.
fn ticket_below(rng: &mut Pcg64, total: u128) -> u128 {
    match u64::try_from(total) {
        Ok(t) => u128::from(rng.random_range(0..t)),
        Err(_) => rng.random_range(0..total),
    }
}

/// The lowest set bit of `i` (above 0): node `i` of a Fenwick tree covers that many slots.
fn lowbit(i: usize) -> usize {
    1 << i.trailing_zeros()
}

/// One priority's runnable tasks in join order, with a Fenwick tree over their tickets.
#[derive(Debug)]
struct Draw {
    /// In join order: the task's join number, the task and its tickets; `None` once it left.
    slots: Vec<Option<(u64, TaskId, u64)>>,
    /// `fen[i]` (from 1) sums the tickets of slots `i − lowbit(i)` to `i − 1`; `fen[0]` is unused.
    fen: Vec<u128>,
    /// The sum of every member's tickets.
    total: u128,
    /// Members (slots not left).
    live: usize,
    /// No member in the slots before this one.
    head: usize,
    /// The join number of the last slot (its member may have left): every member's is at most this.
    last: u64,
}

impl Draw {
    fn new() -> Self {
        Draw { slots: Vec::new(), fen: vec![0], total: 0, live: 0, head: 0, last: 0 }
    }

    /// The tickets of slots `0..i`.
    #[cfg(test)]
    fn prefix(&self, mut i: usize) -> u128 {
        let mut s = 0;
        while i > 0 {
            s += self.fen[i];
            i &= i - 1;
        }
        s
    }

    /// Adds a member at the end (its join number the largest); returns its slot.
    fn push(&mut self, seq: u64, t: TaskId, held: u64) -> usize {
        // Node `i` sums slots `i − lowbit(i)` to `i − 1`: the new one and the nodes below it that
        // cover the rest of that range.
        let i = self.slots.len() + 1;
        let start = i - lowbit(i);
        let (mut node, mut j) = (u128::from(held), i - 1);
        while j > start {
            node += self.fen[j];
            j &= j - 1;
        }
        self.fen.push(node);
        self.slots.push(Some((seq, t, held)));
        self.total += u128::from(held);
        self.live += 1;
        self.last = seq;
        i - 1
    }

    /// Removes the member in `slot`; returns it.
    fn take(&mut self, slot: usize) -> (u64, TaskId, u64) {
        let m = self.slots[slot].expect("a member's slot");
        self.set(slot, 0);
        self.slots[slot] = None;
        self.live -= 1;
        if self.live == 0 {
            // Empty: its slots start again (keeping their memory).
            self.slots.clear();
            self.fen.truncate(1);
            self.head = 0;
        }
        m
    }

    /// The member in `slot` holds `held` tickets now: the tree's nodes above it change by the
    /// difference.
    fn set(&mut self, slot: usize, held: u64) {
        let m = self.slots[slot].as_mut().expect("a member's slot");
        let old = std::mem::replace(&mut m.2, held);
        let mut i = slot + 1;
        while i < self.fen.len() {
            self.fen[i] = self.fen[i] - u128::from(old) + u128::from(held);
            i += lowbit(i);
        }
        self.total = self.total - u128::from(old) + u128::from(held);
    }

    /// The members in join order, with their slots.
    fn members(&self) -> impl Iterator<Item = (usize, (u64, TaskId, u64))> + '_ {
        self.slots[self.head.min(self.slots.len())..]
            .iter()
            .enumerate()
            .filter_map(|(k, m)| m.map(|m| (self.head + k, m)))
    }

    /// The first member in join order.
    fn first(&mut self) -> Option<(usize, TaskId)> {
        while self.head < self.slots.len() && self.slots[self.head].is_none() {
            self.head += 1;
        }
        self.slots.get(self.head).and_then(|m| m.map(|(_, t, _)| (self.head, t)))
    }

    /// The slot of the member holding ticket `ticket` (below `total`): the first whose tickets and
    /// those before it pass `ticket`. Also returns the levels descended.
    fn find(&self, ticket: u128) -> (usize, u64) {
        debug_assert!(ticket < self.total);
        let n = self.fen.len() - 1;
        let (mut pos, mut rest, mut levels) = (0, ticket, 0);
        let mut step = if n == 0 { 0 } else { 1 << n.ilog2() };
        while step > 0 {
            levels += 1;
            if pos + step <= n && self.fen[pos + step] <= rest {
                pos += step;
                rest -= self.fen[pos];
            }
            step >>= 1;
        }
        (pos, levels)
    }

    /// Rebuilt from `members` (in join order), in O(n): member `k` in slot `k`.
    fn rebuilt(members: &[(u64, TaskId, u64)]) -> Draw {
        let mut d = Draw::new();
        d.slots = members.iter().map(|&m| Some(m)).collect();
        d.refill();
        d
    }

    /// Drops the slots of the tasks that left, in place, in O(slots): member `k` in join order is
    /// in slot `k` after it.
    fn compact(&mut self) {
        self.slots.retain(Option::is_some);
        self.refill();
    }

    /// The tree, the sums and the marks made again from the slots, which hold members only.
    fn refill(&mut self) {
        self.fen.clear();
        self.fen.push(0);
        self.fen.extend(self.slots.iter().map(|m| u128::from(m.expect("a member").2)));
        let n = self.slots.len();
        for i in 1..=n {
            let j = i + lowbit(i);
            if j <= n {
                self.fen[j] += self.fen[i];
            }
        }
        self.total = self.slots.iter().map(|m| u128::from(m.expect("a member").2)).sum();
        self.live = n;
        self.head = 0;
        self.last = self.slots.last().map_or(0, |m| m.expect("a member").0);
    }
}

/// The runnable tasks of priority `prio` among `draws` (sorted by priority; an empty entry is made
/// for it if there is none).
fn draw_of(draws: &mut Vec<(i32, Draw)>, prio: i32) -> &mut Draw {
    let k = match draws.binary_search_by_key(&prio, |(p, _)| *p) {
        Ok(k) => k,
        Err(k) => {
            draws.insert(k, (prio, Draw::new()));
            k
        }
    };
    &mut draws[k].1
}

/// The lottery policy.
#[derive(Debug)]
pub struct Lottery {
    quantum: Nanos,
    rng: Pcg64,
    /// The runnable tasks, by priority, in increasing order (an emptied priority keeps its entry
    /// while there are at most [`KEPT_PRIORITIES`]).
    draws: Vec<(i32, Draw)>,
    /// Per task: where it is queued (its priority and slot), if it is.
    at: Vec<Option<(i32, usize)>>,
    /// Join numbers given so far.
    joined: u64,
    /// Per task: its compensation factor in units of `1 / TICKET_UNIT` (`TICKET_UNIT`: none).
    compensation: Vec<u64>,
    lotteries: u64,
    /// Tasks the draws have visited ([`Policy::walked`]): the levels of a tree descent, or the tasks
    /// of a walk.
    walked: u64,
}

impl Lottery {
    /// Lottery scheduling with this quantum, its draws from `seed`.
    pub fn new(quantum: Nanos, seed: u64) -> Self {
        Lottery {
            quantum: quantum.max(1),
            rng: Pcg64::seed_from_u64(seed),
            draws: Vec::new(),
            at: Vec::new(),
            joined: 0,
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

    /// Task `t`'s tickets with share `share`, in units of `1 / TICKET_UNIT`.
    fn tickets(&self, t: TaskId, share: u32) -> u64 {
        u64::from(share) * self.compensation[t.idx()]
    }

    /// Queues `t` last.
    fn join(&mut self, t: TaskId, v: &View) {
        self.joined += 1;
        self.place(t, self.joined, v.params(t));
    }

    /// Queues `t`, with parameters `p`, at its place by join number `seq` among the tasks of its
    /// priority.
    fn place(&mut self, t: TaskId, seq: u64, p: &TaskParams) {
        let (prio, held) = (p.priority, self.tickets(t, p.share));
        let d = draw_of(&mut self.draws, prio);
        if d.live == 0 || d.last < seq {
            let s = d.push(seq, t, held);
            *slot(&mut self.at, t) = Some((prio, s));
            return;
        }
        // Behind a member that joined later (it changed priority while queued): rebuilt in join
        // order, in O(n).
        let mut ms: Vec<_> = d.members().map(|(_, m)| m).collect();
        let k = ms.partition_point(|m| m.0 < seq);
        ms.insert(k, (seq, t, held));
        *d = Draw::rebuilt(&ms);
        for (k, m) in ms.iter().enumerate() {
            *slot(&mut self.at, m.1) = Some((prio, k));
        }
    }

    /// Takes `t` off the queue if it is queued; returns its join number.
    fn remove(&mut self, t: TaskId) -> Option<u64> {
        let (prio, s) = self.at.get_mut(t.idx())?.take()?;
        let d = draw_of(&mut self.draws, prio);
        let (seq, _, _) = d.take(s);
        if d.live == 0 {
            // An emptied priority keeps its entry, to be joined again without allocating, while
            // there are few: a decision passes over them.
            if self.draws.len() > KEPT_PRIORITIES {
                let k = self.draws.binary_search_by_key(&prio, |(p, _)| *p).expect("its entry");
                self.draws.remove(k);
            }
        } else if d.slots.len() > 2 * d.live + 32 {
            // The slots of tasks that left outnumber the members: dropped.
            d.compact();
            for (k, m) in d.slots.iter().enumerate() {
                self.at[m.expect("a member").1.idx()] = Some((prio, k));
            }
        }
        Some(seq)
    }

    /// The draw among the tasks of the top priority, when every task may run on every CPU.
    fn draw(&mut self) -> Option<TaskId> {
        let d = self.draws.iter_mut().rev().map(|(_, d)| d).find(|d| d.live > 0)?;
        if d.total == 0 {
            self.walked += 1;
            return d.first().map(|(_, t)| t);
        }
        self.lotteries += 1;
        let ticket = ticket_below(&mut self.rng, d.total);
        let (s, levels) = d.find(ticket);
        self.walked += levels;
        Some(d.slots[s].expect("the holder of a ticket is a member").1)
    }

    /// The draw among the tasks allowed on `cpu` of the top priority among them, walking the queue
    /// in join order (as the paper's list).
    fn walk(&mut self, cpu: CpuId, v: &View) -> Option<TaskId> {
        for (_, d) in self.draws.iter().rev() {
            let allowed: Vec<(TaskId, u64)> =
                d.members().map(|(_, (_, t, held))| (t, held)).filter(|&(t, _)| v.allows(t, cpu)).collect();
            self.walked += d.live as u64;
            let Some(&(first, _)) = allowed.first() else { continue };
            let total: u128 = allowed.iter().map(|&(_, h)| u128::from(h)).sum();
            self.walked += 2 * allowed.len() as u64;
            if total == 0 {
                return Some(first);
            }
            self.lotteries += 1;
            let mut ticket = ticket_below(&mut self.rng, total);
            for &(t, held) in &allowed {
                if ticket < u128::from(held) {
                    return Some(t);
                }
                ticket -= u128::from(held);
            }
            unreachable!("the ticket drawn is below the sum of the tickets");
        }
        None
    }
}

impl Policy for Lottery {
    fn admit(&mut self, t: TaskId, _p: &TaskParams, _v: &View) {
        *slot(&mut self.compensation, t) = TICKET_UNIT;
        slot(&mut self.at, t);
    }

    fn exit(&mut self, t: TaskId, _v: &View) {
        self.remove(t);
    }

    fn wake(&mut self, t: TaskId, v: &View) {
        self.join(t, v);
    }

    fn stop(&mut self, t: TaskId, _cpu: CpuId, charged: Nanos, why: Stop, v: &View) {
        if matches!(why, Stop::Blocked | Stop::Yielded) && charged < self.quantum {
            let f = charged as f64 / self.quantum as f64;
            self.compensation[t.idx()] = compensation(f);
        }
        if why != Stop::Blocked {
            self.join(t, v);
        }
    }

    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, v: &View) -> Option<CpuId> {
        preempt_lower_rank(woken, prev, running, |r| v.params(r).priority)
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        let winner = if v.any_affine() { self.walk(cpu, v) } else { self.draw() }?;
        self.remove(winner);
        self.compensation[winner.idx()] = TICKET_UNIT;
        Some(Dispatch { task: winner, slice: Some(self.quantum) })
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, _v: &View) {
        // A queued task keeps its place in join order, under its new priority and share: its
        // tickets changed where it is, or moved to its new priority's queue.
        match self.at.get(t.idx()).copied().flatten() {
            Some((prio, s)) if prio == p.priority => {
                let held = self.tickets(t, p.share);
                draw_of(&mut self.draws, prio).set(s, held);
            }
            Some(_) => {
                let seq = self.remove(t).expect("queued");
                self.place(t, seq, p);
            }
            None => {}
        }
    }

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
        Ok(Pace { slice: Some(Slice::of(o, "quantum", q)), timer: None, walks: Walks::Nothing })
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
        assert_eq!(c.policy().compensation[d.task.idx()], 4 * TICKET_UNIT);
        c.wake(d.task, 5 * MS);
        // Its chance is now 4 in 5; yielding after a quarter of each quantum it wins, it keeps that
        // chance: over many lotteries it wins about 80 %.
        let (mut won, mut now) = (0, 5 * MS);
        for _ in 0..2_000 {
            let w = c.pick(0, now).unwrap();
            if w.task == d.task {
                won += 1;
                assert_eq!(c.policy().compensation[d.task.idx()], TICKET_UNIT, "winning resets it");
                now += 10 * MS / 4;
                c.stop(w.task, 10 * MS / 4, Stop::Yielded, now);
                assert_eq!(c.policy().compensation[d.task.idx()], 4 * TICKET_UNIT);
            } else {
                now += 10 * MS;
                c.stop(w.task, 10 * MS, Stop::SliceEnd, now);
            }
        }
        assert!((won as i64 - 1_600).abs() < 100, "{won} of 2000");
    }

    /// The paper's list, written again for the tests: the runnable tasks in the order they joined,
    /// and a draw that counts their tickets one by one (what the tree and the walk must match).
    struct List {
        queue: Vec<TaskId>,
        params: Vec<TaskParams>,
        compensation: Vec<u64>,
        rng: Pcg64,
    }

    impl List {
        fn tickets(&self, t: TaskId) -> u128 {
            u128::from(self.params[t.idx()].share) * u128::from(self.compensation[t.idx()])
        }

        fn pick(&mut self, cpu: CpuId) -> Option<TaskId> {
            let allowed: Vec<TaskId> =
                self.queue.iter().copied().filter(|t| self.params[t.idx()].allows(cpu)).collect();
            let top = allowed.iter().map(|t| self.params[t.idx()].priority).max()?;
            let ours: Vec<TaskId> =
                allowed.into_iter().filter(|t| self.params[t.idx()].priority == top).collect();
            let total: u128 = ours.iter().map(|&t| self.tickets(t)).sum();
            let winner = if total == 0 {
                ours[0]
            } else {
                let mut ticket = ticket_below(&mut self.rng, total);
                *ours
                    .iter()
                    .find(|&&t| {
                        let held = self.tickets(t);
                        let won = ticket < held;
                        ticket = ticket.saturating_sub(held);
                        won
                    })
                    .unwrap()
            };
            self.queue.retain(|&t| t != winner);
            self.compensation[winner.idx()] = TICKET_UNIT;
            Some(winner)
        }
    }

    /// Runs the tree's draw, the walk of the queue (as with an affinity) and [`List`] side by side
    /// on random worlds of `cpus` CPUs (tasks waking, stopping for every reason, changing priority
    /// and share while queued, leaving), and checks that all three pick the same task at every
    /// decision.
    /// With `affine`, a third of the tasks may run on one CPU only (so the tree is not used); tasks
    /// take `priorities` priorities.
    fn tree_walk_and_list_draw_alike(seed: u64, cpus: usize, affine: bool, priorities: i32) {
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut cores =
            [test_core(Lottery::new(10 * MS, seed), cpus), test_core(Lottery::new(10 * MS, seed), cpus)];
        let n = 60u32;
        // The second core walks: it has a task with an affinity (to every CPU), which never wakes.
        let everywhere = TaskParams { cpus: Some((0..cpus as CpuId).collect()), ..Default::default() };
        cores[1].admit(TaskId(n), &everywhere, 0);
        let params = |rng: &mut Pcg64| TaskParams {
            priority: rng.random_range(0..priorities),
            share: rng.random_range(0..6),
            cpus: (affine && rng.random_range(0..3) == 0).then(|| vec![rng.random_range(0..cpus) as CpuId]),
            ..Default::default()
        };
        let mut list = List {
            queue: Vec::new(),
            params: (0..n).map(|_| params(&mut rng)).collect(),
            compensation: vec![TICKET_UNIT; n as usize],
            rng: Pcg64::seed_from_u64(seed),
        };
        let (mut running, mut gone) = (vec![None; cpus], vec![false; n as usize]);
        for t in 0..n {
            for c in &mut cores {
                c.admit(TaskId(t), &list.params[t as usize], 0);
            }
        }
        let (mut now, mut picks, mut moved) = (0, 0, 0);
        for _ in 0..20_000 {
            now += rng.random_range(1..2 * MS);
            let t = TaskId(rng.random_range(0..n));
            let busy = running.contains(&Some(t));
            let queued = list.queue.contains(&t);
            match rng.random_range(0..10) {
                0..=3 if !busy && !queued && !gone[t.idx()] => {
                    list.queue.push(t);
                    for c in &mut cores {
                        c.wake(t, now);
                    }
                }
                4 if !busy && !gone[t.idx()] => {
                    let p = params(&mut rng);
                    moved += (queued && p.priority != list.params[t.idx()].priority) as u32;
                    for c in &mut cores {
                        c.set_params(t, &p, now);
                    }
                    list.params[t.idx()] = p;
                }
                5 if !busy && !gone[t.idx()] && rng.random_range(0..20) == 0 => {
                    gone[t.idx()] = true;
                    list.queue.retain(|&x| x != t);
                    for c in &mut cores {
                        c.exit(t, now);
                    }
                }
                _ => {
                    let cpu = rng.random_range(0..cpus);
                    if let Some(r) = running[cpu].take() {
                        let why = [Stop::SliceEnd, Stop::Preempted, Stop::Yielded, Stop::Blocked]
                            [rng.random_range(0..4)];
                        let charged = rng.random_range(1..=10 * MS);
                        if matches!(why, Stop::Blocked | Stop::Yielded) && charged < 10 * MS {
                            list.compensation[r.idx()] = compensation(charged as f64 / (10 * MS) as f64);
                        }
                        if why != Stop::Blocked {
                            list.queue.push(r);
                        }
                        for c in &mut cores {
                            c.stop(r, charged, why, now);
                        }
                    } else {
                        let [a, b] = &mut cores;
                        let (x, y) = (a.pick(cpu as CpuId, now), b.pick(cpu as CpuId, now));
                        let z = list.pick(cpu as CpuId);
                        assert_eq!(x, y, "seed {seed}, decision {picks}: tree and walk");
                        assert_eq!(x.map(|d| d.task), z, "seed {seed}, decision {picks}: tree and list");
                        picks += 1;
                        running[cpu] = x.map(|d| d.task);
                    }
                }
            }
        }
        assert!(picks > 1000 && moved > 100, "{picks} decisions, {moved} moved while queued");
        let (tree, walk) = (cores[0].policy(), cores[1].policy());
        assert!(tree.lotteries > 500 && tree.lotteries == walk.lotteries);
        assert!(affine || tree.walked < walk.walked / 2, "the tree walks less");
        let empty = tree.draws.iter().filter(|(_, d)| d.live == 0).count();
        assert!(empty <= KEPT_PRIORITIES, "{empty} empty priorities kept");
    }

    #[test]
    fn a_ticket_goes_to_the_first_holder_whose_tickets_and_those_before_pass_it() {
        let held = [0u64, 3, 0, 2, 5, 0, 1];
        let mut d = Draw::new();
        for (k, &h) in held.iter().enumerate() {
            d.push(k as u64, TaskId(k as u32), h);
        }
        assert_eq!(d.total, 11);
        // Every node sums its range: each prefix of the tree is the slots' sum, as the rebuilt
        // tree's (built another way) is.
        let sums = |d: &Draw| (0..=d.slots.len()).map(|i| d.prefix(i)).collect::<Vec<_>>();
        let held_sums = |d: &Draw| {
            (0..=d.slots.len())
                .map(|i| d.slots[..i].iter().map(|m| m.map_or(0, |m| u128::from(m.2))).sum())
                .collect::<Vec<u128>>()
        };
        assert_eq!(sums(&d), held_sums(&d));
        let expected = [1, 1, 1, 3, 3, 4, 4, 4, 4, 4, 6];
        for (ticket, &slot) in expected.iter().enumerate() {
            assert_eq!(d.find(ticket as u128).0, slot, "ticket {ticket}");
        }
        d.take(3);
        let after = [1, 1, 1, 4, 4, 4, 4, 4, 6];
        for (ticket, &slot) in after.iter().enumerate() {
            assert_eq!(d.find(ticket as u128).0, slot, "ticket {ticket} after slot 3 left");
        }
        assert_eq!(sums(&d), held_sums(&d));
        let rebuilt = Draw::rebuilt(&d.members().map(|(_, m)| m).collect::<Vec<_>>());
        assert_eq!(rebuilt.total, 9);
        assert_eq!(sums(&rebuilt), held_sums(&rebuilt));
        let slots: Vec<usize> = (0..9).map(|k| rebuilt.find(k).0).collect();
        assert_eq!(slots, [1, 1, 1, 3, 3, 3, 3, 3, 5], "the same holders, in their new slots");
    }

    #[test]
    fn the_tree_the_walk_and_the_list_draw_the_same_winners() {
        for seed in 0..8 {
            tree_walk_and_list_draw_alike(seed, 1, false, 3);
            tree_walk_and_list_draw_alike(100 + seed, 2, false, 3);
            // More priorities than are kept when they empty.
            tree_walk_and_list_draw_alike(200 + seed, 1, false, 3 * KEPT_PRIORITIES as i32);
            // Affinities: the walk against the list.
            tree_walk_and_list_draw_alike(300 + seed, 2, true, 3);
        }
    }

    #[test]
    fn the_tree_drops_the_slots_of_tasks_that_left() {
        let mut c = lottery(&[1; 40], 3);
        for k in 0..10_000 {
            let d = c.pick(0, k * MS).unwrap();
            c.stop(d.task, MS, Stop::SliceEnd, (k + 1) * MS);
        }
        let d = &c.policy().draws[0].1;
        assert_eq!(d.live, 40);
        assert!(d.slots.len() <= 2 * 40 + 33, "{} slots for 40 members", d.slots.len());
        assert_eq!(d.total, 40 * u128::from(TICKET_UNIT));
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
