//! Per-CPU run queues, wake-up placement and periodic load balancing, as Linux keeps its fair class on
//! N CPUs: what `eevdf` and `cfs` run on by default (`runqueues = "per-cpu"`).
//!
//! **Specification.** `kernel/sched/fair.c` and `topology.c` of Linux 6.12 (Debian's linux-source 6.12;
//! read to learn the rules, nothing is copied): `select_task_rq_fair` and `select_idle_sibling` (where a
//! waking task goes), `sched_balance_domains`, `sched_balance_rq` (`load_balance`),
//! `sched_balance_find_src_group` and `calculate_imbalance` (whether and how much to pull),
//! `detach_tasks` and `can_migrate_task` (which tasks), `sched_balance_newidle` (a CPU about to idle
//! pulls), and `sd_init`'s domain parameters. 6.1's balancer decides the same way in everything modelled
//! here (it differs in NUMA and asymmetric-capacity rules).
//!
//! **State.** Each CPU has its own copy of the policy ([`RunQueue`], built with the machine's tunables
//! for one CPU: its own virtual time, its own queue, `parts.rs`) and, for the balancer, its
//! runnable tasks (the one running there counted) with their load, the last balance time, the
//! balance interval and the count of failed balances (`nr_balance_failed`). Per task: the time it last
//! left a CPU (`exec_start`, for cache hotness), its place in its CPU's list from the most recently
//! queued or picked to the least (`cfs_tasks`), and the CPU it was woken on before (`recent_used_cpu`).
//!
//! **Rules.** The machine is one scheduling domain of `n` CPUs sharing a last-level cache (this
//! project's hosts and guests: one socket, no SMT), each CPU a group of its own. Its parameters are
//! the kernel's for such a domain: `imbalance_pct` 117, `cache_nice_tries` 1, `busy_factor` 16,
//! `balance_interval` from `min_interval` = `n` ms to `max_interval` = 2`n` ms,
//! `sysctl_sched_migration_cost` 0.5 ms (option `migration_cost`), at most 32 tasks looked at per pull.
//! * **Waking** (`select_idle_sibling` with the task's CPU as the target, as for a wake-up by a timer
//!   on the CPU it slept on): its CPU if idle; else the CPU it was woken on before if idle; else the
//!   first idle CPU after its own in number order, wrapping; else its own. A CPU is idle when its queue
//!   holds no runnable task, or only `SCHED_IDLE` ones (`sched_idle_cpu`). A new task (never woken) goes
//!   to the idlest CPU (`sched_balance_find_dst_cpu`): the first idle one, else the one with the fewest
//!   runnable tasks and then the least load. A task still in its queue although it blocked (EEVDF's
//!   delayed dequeue) wakes where it is. Placement respects affinity.
//! * **Periodic balancing** (from each CPU's clock tick, `sched_balance_domains`): when `interval` has
//!   passed since the CPU last balanced, where `interval` = `balance_interval` ms × 16 if the CPU is
//!   busy (runs a task that is not `SCHED_IDLE`), in jiffies (rounded up), less one jiffy if busy, at
//!   least 1 and at most HZ × `n` / 10 (`get_sd_balance_interval`). The CPU pulls from the busiest
//!   other CPU:
//!   - each CPU is classed by its runnable tasks: none *has spare*, one *fully busy*, more
//!     *overloaded* (the kernel classes by PELT utilisation too; here the count decides); its load is
//!     the sum of their weights;
//!   - the busiest is the CPU of the highest class, then the highest load (an overloaded one: the
//!     first of equals from this CPU on; a fully busy one: the last), among those with a task;
//!   - nothing is pulled (balanced) if this CPU's class is higher than the busiest's; if both are
//!     overloaded and this CPU's load is at least the busiest's or the average, or within 117 % of
//!     the busiest's; if the busiest is not overloaded and this CPU is busy, or the busiest has one
//!     task;
//!   - an idle CPU (has spare) pulls half the difference in task counts (`sibling_imbalance` >> 1);
//!     a fully busy or overloaded one pulls load, `min(busiest − average, average − its own)`, none
//!     if its load is not below both the busiest's and the average (`calculate_imbalance`);
//!   - tasks are taken from the least recently queued or picked (`detach_tasks`): not the running
//!     one, not one its affinity keeps off this CPU, not one that left a CPU less than
//!     `migration_cost` ago (cache hot; `SCHED_IDLE` tasks never are) unless balancing failed more
//!     than once in a row, and, pulling load, not one whose weight halved once per failure
//!     (`shr_bound`) exceeds what is left to pull; each task looked at and left is moved to the front;
//!   - a balance that pulls nothing counts a failure; one that pulls resets the count and the
//!     interval to `min_interval`; a balanced one resets the count and doubles the interval up to
//!     `max_interval`. A CPU whose busiest candidates hold only tasks it may not run tries the others
//!     (`LBF_ALL_PINNED`).
//!   - a task pulled joins its new queue as the policy says ([`RunQueue::attach`]: EEVDF keeps its lag
//!     and the rest of its request, CFS its virtual runtime relative to `min_vruntime`) and may preempt
//!     what runs there (`attach_task`, `wakeup_preempt`).
//! * **New-idle balancing** (`sched_balance_newidle`): a CPU whose queue has nothing to run pulls one
//!   task before it idles, by the rules above as an idle CPU, trying every CPU with tasks waiting from
//!   the busiest on.
//!
//! **Races.** Every CPU takes the clock tick at the same instant, and on a real machine a CPU's
//! balance (in the softirq after its tick) and another CPU's switch at that tick (on the way out of
//! its interrupt) race: the balance may see the other CPU's task still running, or the next one
//! already picked and the last one just stopped (cache hot). Which comes first decides which task
//! moves, and a model that always took one order would rotate the same tasks forever (three hogs on
//! two CPUs: one of them never moves and keeps 38 % of the machine, where the kernel gives each
//! 33 ± 1). So when a busy CPU's balance is due at a tick at which the running task of the CPU it
//! would pull from ends its slice, a coin (seeded by the option `seed`) decides: heads, it balances
//! at the tick, before the switch; tails, once every decision of the instant is made (the core's
//! [`Policy::kick`]), the task just switched out then cache hot. A task pulled then may preempt what
//! runs on its new CPU, as at the tick.
//!
//! **Simplified.** One domain level (no SMT siblings, clusters, packages or NUMA nodes); loads are the
//! weights of the runnable tasks, not their PELT averages (the same for tasks that never sleep; a task
//! that often sleeps weighs more here than in the kernel), and a CPU's class is counted, not measured;
//! a new-idle pull ignores cache hotness (the kernel's periodic and nohz idle balance would move the
//! task a tick or so later), which keeps the model work-conserving; it is not rationed as the
//! kernel rations it (`avg_idle` against the cost of past pulls, and the backported `NI_RANDOM`,
//! which runs it with the probability it has succeeded with), and it tries every CPU with a task
//! waiting where the kernel looks at the busiest; no active balance (pushing a running task off its
//! CPU: the kernel does it after four failed balances that found no waiting task to move) and no
//! misfit, asymmetric-capacity or energy-aware placement; `wake_affine` is not modelled (the target
//! of a wake-up is the task's own CPU); the idle CPU search is not limited by `SIS_UTIL`. A task the
//! EEVDF class still holds although it blocked (delayed dequeue) is not counted in its CPU's tasks.
//! A task's recent usage, which availability reads, starts again on its new CPU. Under a class
//! stack, a CPU running a task of a higher class counts as busy for placement and as holding one more
//! task for balancing, with a capacity of 1 of 1024 while that task runs (the kernel subtracts the
//! higher classes' average use of the CPU, a smoother reduction); the fair class's tick, and so its
//! periodic balancing, comes only on CPUs running a fair task. Balancing needs clock ticks (`hz` >
//! 0): on a tickless machine, and in `scx_smart` (which sends no ticks), only new-idle pulls move
//! tasks. A pulled task that does not preempt waits for its new CPU's next decision (for EEVDF, the
//! running task's slice end).

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::parts::Parts;
use crate::registry::OptReader;
use crate::{
    Availability, CpuId, Dispatch, Nanos, Notification, Policy, PolicyError, Running, State, Stop, TaskId,
    TaskParams, TimeConstraint, View, MS,
};

/// What a task takes from one CPU's queue to another's, in its policy's own terms.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Carry {
    /// It never woke: it joins its new queue as a new task.
    pub fresh: bool,
    /// Where it stood in its old queue: EEVDF's lag (`V − v`), CFS's `v − min_vruntime`.
    pub rel: i64,
    /// EEVDF: the rest of its request (`d − v`), when it moved while runnable (`PLACE_REL_DEADLINE`).
    pub rest: Option<i64>,
}

/// A policy that can keep one of several per-CPU run queues: tasks move between its copies. It has no
/// timer of its own and never kicks a CPU ([`Policy::next_timer`], [`Policy::kick`]): [`PerCpu`] does not
/// ask its copies, which would cost a question per CPU on every event.
pub trait RunQueue: Policy {
    /// Takes task `t` (admitted here, not running, not delayed) out of this queue for another's:
    /// afterwards this copy has forgotten it, as after [`Policy::exit`].
    fn detach(&mut self, t: TaskId, v: &View) -> Carry;
    /// Takes task `t` in from another queue with parameters `p` and what it carried; it is queued if
    /// the view shows it runnable, else asleep (its next [`Policy::wake`] places it).
    fn attach(&mut self, t: TaskId, p: &TaskParams, c: Carry, v: &View);
    /// Its weight, and whether it is `SCHED_IDLE`.
    fn load(&self, t: TaskId) -> (u64, bool);
    /// Whether `t`, which blocked, is still a member of this queue (EEVDF's delayed dequeue): it then
    /// wakes on this CPU.
    fn holds(&self, _t: TaskId) -> bool {
        false
    }
    /// The highest priority admitted on the whole machine is at least `top` (the fair class runs
    /// lower priorities as `SCHED_IDLE`, [`crate::linux::fair_weight`]).
    fn raise_top(&mut self, top: i32, v: &View);
}

/// `sysctl_sched_migration_cost`.
pub const MIGRATION_COST: Nanos = 500_000;
/// `imbalance_pct` of a domain sharing a last-level cache.
const IMBALANCE_PCT: u64 = 117;
/// `cache_nice_tries` of such a domain.
const CACHE_NICE_TRIES: u32 = 1;
/// `busy_factor`.
const BUSY_FACTOR: u64 = 16;
/// `sysctl_sched_nr_migrate`: the most tasks one pull looks at.
const NR_MIGRATE: usize = 32;
/// `MAX_PINNED_INTERVAL` (ms).
const MAX_PINNED_INTERVAL: u64 = 512;

/// The balancer's settings.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Balance {
    /// The clock tick (`TICK_NSEC`, a jiffy): balance intervals are counted in it.
    pub jiffy: Nanos,
    /// A task that left a CPU less than this ago is cache hot (`sysctl_sched_migration_cost`).
    pub migration_cost: Nanos,
    /// Seeds the coin that settles races between CPUs at one tick (see "Races").
    pub seed: u64,
}

/// How a fair policy keeps its tasks on N CPUs (option `runqueues`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RunQueues {
    /// A run queue per CPU, balanced ([`PerCpu`]), as the kernel.
    PerCpu,
    /// One queue for all CPUs.
    Global,
}

/// The values of `runqueues`.
pub const RUNQUEUES: &[&str] = &["per-cpu", "global"];

/// Builds a fair policy on `cpus` CPUs from its options: one copy for all CPUs when the scenario
/// asks for `runqueues = "global"` or there is one CPU, else a copy per CPU balanced by [`PerCpu`].
/// `make(n)` builds a copy that serves `n` CPUs (`cpus`, or 1); `jiffy` is the policy's tick. Reads
/// `runqueues` and `migration_cost`.
pub fn build<Q: RunQueue + 'static>(
    o: &mut OptReader<'_>,
    cpus: usize,
    jiffy: Nanos,
    make: impl Fn(usize) -> Q,
) -> Result<Box<dyn Policy>, PolicyError> {
    let rq = match o.choice("runqueues", "per-cpu", RUNQUEUES)? {
        "global" => RunQueues::Global,
        _ => RunQueues::PerCpu,
    };
    let migration_cost = o.time("migration_cost", MIGRATION_COST)?;
    let seed = o.int("seed", 1, 0, i64::MAX)? as u64;
    if rq == RunQueues::Global || cpus <= 1 {
        return Ok(Box::new(make(cpus)));
    }
    let inner = (0..cpus).map(|_| Box::new(make(1)) as Box<dyn RunQueue>).collect();
    Ok(Box::new(PerCpu::new(inner, Balance { jiffy, migration_cost, seed })))
}

/// A CPU's load as the balancer sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Stats {
    /// Runnable tasks of every class (the running one counted; `sum_nr_running`).
    nr: usize,
    /// Those of this policy (`sum_h_nr_running`).
    h_nr: usize,
    /// Their weights.
    load: u64,
    /// The capacity left to this policy: [`SCALE`], or 1 while another class runs there.
    cap: u64,
}

/// `SCHED_CAPACITY_SCALE`: a whole CPU's capacity.
const SCALE: u64 = 1024;

impl Stats {
    /// The group type: 0 has spare, 1 fully busy, 2 overloaded.
    fn class(self) -> u8 {
        self.nr.min(2) as u8
    }

    /// `avg_load`: the load per unit of capacity.
    fn avg(self) -> u64 {
        crate::clamp_nanos(u128::from(self.load) * u128::from(SCALE) / u128::from(self.cap.max(1)))
    }
}

/// Why a CPU balances (`enum cpu_idle_type`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// From its tick while it runs a task.
    Busy,
    /// From its tick while idle.
    Idle,
    /// About to idle.
    NewlyIdle,
}

/// What a pull moves (`enum migration_type`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Migrate {
    Load,
    Task,
}

/// One CPU's run queue as the balancer keeps it.
#[derive(Clone, Debug, Default)]
struct Rq {
    /// Runnable tasks held here, the running one among them (global ids, in no order).
    members: Vec<TaskId>,
    load: u64,
    /// Members that are not `SCHED_IDLE`.
    busy: usize,
    last_balance: Nanos,
    /// `balance_interval`, ms.
    interval: u64,
    /// `nr_balance_failed`.
    failed: u32,
    /// When the slice of the task running here ends, as the policy gave it.
    slice_end: Option<Nanos>,
}

/// What the balancer knows of a task.
#[derive(Clone, Debug, Default)]
struct Tk {
    runnable: bool,
    running: bool,
    /// Index in its CPU's `members` while runnable.
    pos: usize,
    load: u64,
    idle: bool,
    /// Larger = more recently queued or picked (front of `cfs_tasks`).
    stamp: u64,
    /// When it last left a CPU (`exec_start`); `None`: never ran.
    ran: Option<Nanos>,
    /// `recent_used_cpu`.
    recent: Option<CpuId>,
    /// Admitted and never woken.
    fresh: bool,
}

/// A fair policy with a run queue per CPU (see the module documentation).
pub struct PerCpu {
    parts: Parts<dyn RunQueue>,
    cfg: Balance,
    rqs: Vec<Rq>,
    tasks: Vec<Tk>,
    stamp: u64,
    top: Option<i32>,
    pulls: u64,
    newidle_pulls: u64,
    failed_balances: u64,
    races_after: u64,
    scratch: Vec<TaskId>,
    sources: Vec<(CpuId, Stats)>,
    /// Races: the coin, and the busy balances put after this instant's switches (their CPU and time).
    coin: Pcg64,
    deferred: Vec<(CpuId, Nanos)>,
    /// CPUs whose queue holds two runnable tasks or more (`rd->overloaded`): only these can give a CPU
    /// about to idle a waiting task, and with none it does not look.
    crowded: std::collections::BTreeSet<CpuId>,
    /// CPUs whose queue holds one runnable task (under a class stack, it may wait behind another class).
    single: std::collections::BTreeSet<CpuId>,
    /// CPUs that must decide again once the instant's decisions are made (a task moved there by a new
    /// affinity), handed to the core by [`Policy::kick`].
    kicks: Vec<CpuId>,
}

impl PerCpu {
    /// A run queue per CPU, `inner[k]` being CPU `k`'s (each built for one CPU with the machine's
    /// tunables).
    pub fn new(inner: Vec<Box<dyn RunQueue>>, cfg: Balance) -> Self {
        let n = inner.len();
        let rqs = vec![Rq { interval: n as u64, ..Rq::default() }; n];
        PerCpu {
            parts: Parts::new(inner),
            cfg,
            rqs,
            tasks: Vec::new(),
            stamp: 0,
            top: None,
            pulls: 0,
            newidle_pulls: 0,
            failed_balances: 0,
            races_after: 0,
            scratch: Vec::new(),
            sources: Vec::new(),
            coin: Pcg64::seed_from_u64(cfg.seed),
            deferred: Vec::new(),
            crowded: std::collections::BTreeSet::new(),
            single: std::collections::BTreeSet::new(),
            kicks: Vec::new(),
        }
    }

    fn n(&self) -> usize {
        self.rqs.len()
    }

    /// The CPU whose queue holds `t`.
    fn cpu_of(&self, t: TaskId) -> CpuId {
        self.parts.home(t).cpu
    }

    fn stats(&self, cpu: CpuId, v: &View) -> Stats {
        let rq = &self.rqs[cpu as usize];
        let taken = v.taken(cpu);
        let h_nr = rq.members.len();
        Stats { nr: h_nr + usize::from(taken), h_nr, load: rq.load, cap: if taken { 1 } else { SCALE } }
    }

    /// Whether `cpu` counts as idle for a waking task: nothing runnable, or only `SCHED_IDLE` tasks,
    /// and no other class's task running.
    fn idle_rq(&self, cpu: CpuId, v: &View) -> bool {
        self.rqs[cpu as usize].busy == 0 && !v.taken(cpu)
    }

    fn next_stamp(&mut self) -> u64 {
        self.stamp += 1;
        self.stamp
    }

    /// `t` joins its CPU's runnable tasks, at the front of its list.
    fn enqueue(&mut self, t: TaskId) {
        let cpu = self.cpu_of(t) as usize;
        let stamp = self.next_stamp();
        let k = &mut self.tasks[t.idx()];
        debug_assert!(!k.runnable);
        k.runnable = true;
        k.stamp = stamp;
        k.pos = self.rqs[cpu].members.len();
        let rq = &mut self.rqs[cpu];
        rq.members.push(t);
        rq.load += k.load;
        rq.busy += usize::from(!k.idle);
        self.note_size(cpu as CpuId);
    }

    /// Keeps [`PerCpu::crowded`] and [`PerCpu::single`] in step with CPU `cpu`'s queue.
    fn note_size(&mut self, cpu: CpuId) {
        let n = self.rqs[cpu as usize].members.len();
        if n >= 2 {
            self.crowded.insert(cpu);
        } else {
            self.crowded.remove(&cpu);
        }
        if n == 1 {
            self.single.insert(cpu);
        } else {
            self.single.remove(&cpu);
        }
    }

    /// `t` leaves its CPU's runnable tasks.
    fn dequeue(&mut self, t: TaskId) {
        let cpu = self.cpu_of(t) as usize;
        let k = &mut self.tasks[t.idx()];
        debug_assert!(k.runnable);
        k.runnable = false;
        let (pos, load, idle) = (k.pos, k.load, k.idle);
        let rq = &mut self.rqs[cpu];
        rq.members.swap_remove(pos);
        if let Some(&moved) = rq.members.get(pos) {
            self.tasks[moved.idx()].pos = pos;
        }
        rq.load -= load;
        rq.busy -= usize::from(!idle);
        self.note_size(cpu as CpuId);
    }

    /// Reads `t`'s weight from its queue's policy again (after anything that may reweight it).
    fn reload(&mut self, t: TaskId) {
        let h = self.parts.home(t);
        let (w, idle) = self.parts.cpu(h.cpu).policy.load(h.local);
        let k = &self.tasks[t.idx()];
        if (k.load, k.idle) == (w, idle) {
            return;
        }
        let runnable = k.runnable;
        if runnable {
            self.dequeue(t);
        }
        let k = &mut self.tasks[t.idx()];
        (k.load, k.idle) = (w, idle);
        if runnable {
            let stamp = k.stamp;
            self.enqueue(t);
            self.tasks[t.idx()].stamp = stamp; // a reweight does not move it in its list
        }
    }

    /// A task of priority `p` raises the machine's highest priority: every queue is told, and every
    /// task's load read again.
    fn raise_top(&mut self, p: i32, v: &View) {
        if self.top.is_some_and(|top| top >= p) {
            return;
        }
        self.top = Some(p);
        self.parts.sync(v);
        for c in 0..self.n() as CpuId {
            let part = self.parts.cpu_mut(c);
            part.policy.raise_top(p, &part.view);
        }
        for i in 0..self.tasks.len() {
            let t = TaskId(i as u32);
            if self.parts.cpu_of(t).is_some() {
                self.reload(t);
            }
        }
    }

    /// Moves `t` (not running) to `to`'s queue with parameters `p`, as the policy carries it.
    fn migrate(&mut self, t: TaskId, to: CpuId, p: &TaskParams, v: &View) {
        let runnable = self.tasks[t.idx()].runnable;
        if runnable {
            self.dequeue(t);
        }
        let (part, local) = self.parts.of(t, v);
        let carry = part.policy.detach(local, &part.view);
        self.parts.unplace(t);
        let local = self.parts.place(to, t, p);
        let part = self.parts.cpu_mut(to);
        if runnable {
            part.view.wake(local);
        }
        part.policy.attach(local, &Parts::<dyn RunQueue>::local_params(p), carry, &part.view);
        let (w, idle) = part.policy.load(local);
        let k = &mut self.tasks[t.idx()];
        (k.load, k.idle) = (w, idle);
        // `migrate_task_rq_fair` clears `exec_start`: a task just moved is not cache hot.
        k.ran = None;
        if runnable {
            self.enqueue(t);
        }
    }

    /// Where waking task `t` goes (see "Waking" in the module documentation).
    fn wake_cpu(&mut self, t: TaskId, v: &View) -> CpuId {
        let n = self.n() as CpuId;
        let allowed = |c: CpuId| v.allows(t, c);
        if self.tasks[t.idx()].fresh {
            // sched_balance_find_dst_cpu: the idlest CPU.
            let first_idle = (0..n).find(|&c| allowed(c) && self.idle_rq(c, v));
            return first_idle.unwrap_or_else(|| {
                (0..n)
                    .filter(|&c| allowed(c))
                    .min_by_key(|&c| {
                        let s = self.stats(c, v);
                        (s.nr, s.avg(), c)
                    })
                    .unwrap_or(0)
            });
        }
        let prev = self.cpu_of(t);
        if allowed(prev) && self.idle_rq(prev, v) {
            return prev;
        }
        let recent = self.tasks[t.idx()].recent.replace(prev);
        if let Some(r) = recent.filter(|&r| r != prev && allowed(r) && self.idle_rq(r, v)) {
            return r;
        }
        if let Some(c) = (1..n).map(|k| (prev + k) % n).find(|&c| allowed(c) && self.idle_rq(c, v)) {
            return c;
        }
        if allowed(prev) {
            prev
        } else {
            // Its affinity changed while it slept (select_fallback_rq): the least loaded CPU it may use.
            (0..n).filter(|&c| allowed(c)).min_by_key(|&c| (self.stats(c, v).nr, c)).unwrap_or(prev)
        }
    }

    /// `get_sd_balance_interval`, in time.
    fn interval(&self, cpu: CpuId, busy: bool) -> Nanos {
        let jiffy = self.cfg.jiffy.max(1);
        let mut ms = self.rqs[cpu as usize].interval;
        if busy {
            ms *= BUSY_FACTOR;
        }
        let mut j = (ms * MS).div_ceil(jiffy);
        if busy {
            j = j.saturating_sub(1);
        }
        let hz = (1_000_000_000 / jiffy).max(1);
        let max = (hz * self.n() as u64 / 10).max(1);
        j.clamp(1, max) * jiffy
    }

    /// The CPUs `dst` may pull from, the busiest first as `update_sd_pick_busiest` ranks them (the
    /// highest class, then the highest load per capacity; among equals, scanning from the CPU after
    /// `dst`, an overloaded one found first and a fully busy one found last), into `out`; returns the
    /// machine's average load per capacity (`sds.avg_load`).
    fn sources(&self, dst: CpuId, kind: Kind, v: &View, out: &mut Vec<(CpuId, Stats)>) -> u64 {
        out.clear();
        let n = self.n() as CpuId;
        if kind == Kind::NewlyIdle {
            // Only a CPU with a task waiting can give one (`rd->overloaded`): those holding two or more,
            // or one behind another class's task. The average load does not enter a new-idle pull.
            let behind = self.single.iter().filter(|&&c| v.any_taken() && v.taken(c));
            for &c in self.crowded.iter().chain(behind) {
                if c != dst {
                    out.push((c, self.stats(c, v)));
                }
            }
        }
        let (mut total, mut cap) = (0u128, 0u128);
        for c in (0..n).filter(|_| kind != Kind::NewlyIdle) {
            let s = self.stats(c, v);
            total += u128::from(s.load);
            cap += u128::from(s.cap);
            if c != dst && s.h_nr > 0 {
                out.push((c, s));
            }
        }
        let pos = |c: CpuId| (c + n - dst - 1) % n;
        out.sort_unstable_by(|(ca, a), (cb, b)| {
            let ties = if a.class() == 2 { pos(*ca).cmp(&pos(*cb)) } else { pos(*cb).cmp(&pos(*ca)) };
            b.class().cmp(&a.class()).then_with(|| b.avg().cmp(&a.avg())).then(ties)
        });
        crate::clamp_nanos(total * u128::from(SCALE) / cap.max(1))
    }

    /// `sched_balance_find_src_group` and `calculate_imbalance`: what `local` should pull from
    /// `busiest`, the machine's average load being `avg`, or `None` when they are balanced.
    fn imbalance(local: Stats, busiest: Stats, avg: u64, kind: Kind) -> Option<(Migrate, u64)> {
        if local.class() > busiest.class() {
            return None;
        }
        let (la, ba) = (local.avg(), busiest.avg());
        if local.class() == 2
            && (la >= ba || la >= avg || u128::from(ba) * 100 <= u128::from(la) * u128::from(IMBALANCE_PCT))
        {
            return None;
        }
        if busiest.class() != 2 && (kind == Kind::Busy || busiest.h_nr == 1) {
            return None;
        }
        let (how, amount) = if local.class() == 0 {
            let diff = if kind == Kind::Busy { 0 } else { busiest.nr.saturating_sub(local.nr) };
            (Migrate::Task, (diff >> 1) as u64)
        } else if la >= ba || la >= avg {
            (Migrate::Load, 0)
        } else {
            // The busiest CPU may be below the machine's average (their loads are scaled by
            // different capacities): then this wraps, as the kernel's unsigned arithmetic and this
            // code's release builds always did, and `to` is the smaller.
            let from = u128::from(ba.wrapping_sub(avg)) * u128::from(busiest.cap);
            let to = u128::from(avg - la) * u128::from(local.cap);
            (Migrate::Load, crate::clamp_nanos(from.min(to) / u128::from(SCALE)))
        };
        (amount > 0).then_some((how, amount))
    }

    /// `detach_tasks` from `src` to `dst`: the tasks moved (their global ids in `self.scratch`), and
    /// whether every task looked at was kept off `dst` by its affinity.
    fn pull(
        &mut self,
        src: CpuId,
        dst: CpuId,
        how: Migrate,
        mut imbalance: u64,
        kind: Kind,
        v: &View,
    ) -> bool {
        self.scratch.clear();
        let now = v.now();
        let failed = self.rqs[dst as usize].failed;
        let mut order = self.rqs[src as usize].members.clone();
        order.sort_unstable_by_key(|t| self.tasks[t.idx()].stamp);
        let loop_max = order.len().min(NR_MIGRATE);
        let mut all_pinned = true;
        for &t in order.iter().take(loop_max) {
            if kind != Kind::Busy && self.stats(src, v).nr <= 1 {
                break;
            }
            let k = &self.tasks[t.idx()];
            let allowed = v.allows(t, dst);
            let hot = kind != Kind::NewlyIdle
                && !k.idle
                && k.ran.is_some_and(|r| now.saturating_sub(r) < self.cfg.migration_cost);
            let movable = allowed && !k.running && (!hot || failed > CACHE_NICE_TRIES);
            let load = k.load.max(1);
            all_pinned &= !allowed;
            let fits = match how {
                Migrate::Load => (load >> failed.min(63)) <= imbalance,
                Migrate::Task => true,
            };
            if !movable || !fits {
                let stamp = self.next_stamp();
                self.tasks[t.idx()].stamp = stamp; // list_move to the front
                continue;
            }
            imbalance = match how {
                Migrate::Load => imbalance.saturating_sub(load),
                Migrate::Task => imbalance - 1,
            };
            let p = v.params(t).clone();
            self.migrate(t, dst, &p, v);
            self.scratch.push(t);
            if kind == Kind::NewlyIdle || imbalance == 0 {
                break;
            }
        }
        all_pinned
    }

    /// `sched_balance_rq` on `dst`: pulls what the rules say; the tasks pulled are in `self.scratch`.
    fn balance(&mut self, dst: CpuId, kind: Kind, v: &View) {
        let mut sources = std::mem::take(&mut self.sources);
        let avg = self.sources(dst, kind, v, &mut sources);
        let local = self.stats(dst, v);
        let d = dst as usize;
        let mut pinned = false;
        let mut moved = None;
        for &(src, busiest) in &sources {
            let Some((how, amount)) = Self::imbalance(local, busiest, avg, kind) else {
                if kind == Kind::NewlyIdle {
                    continue; // a CPU about to idle tries every CPU with tasks waiting
                }
                break;
            };
            let all_pinned = self.pull(src, dst, how, amount, kind, v);
            if self.scratch.is_empty() && (all_pinned || kind == Kind::NewlyIdle) {
                pinned |= all_pinned;
                continue;
            }
            moved = Some(self.scratch.len() as u64);
            break;
        }
        self.sources = sources;
        let n = self.n() as u64;
        let rq = &mut self.rqs[d];
        match moved {
            Some(0) => {
                if kind != Kind::NewlyIdle {
                    rq.failed += 1;
                    self.failed_balances += 1;
                }
                rq.interval = n;
            }
            Some(k) => {
                rq.failed = 0;
                rq.interval = n;
                match kind {
                    Kind::NewlyIdle => self.newidle_pulls += k,
                    _ => self.pulls += k,
                }
            }
            None => {
                // Balanced, or every task pinned.
                self.scratch.clear();
                rq.failed = 0;
                if kind != Kind::NewlyIdle
                    && ((pinned && rq.interval < MAX_PINNED_INTERVAL) || rq.interval < 2 * n)
                {
                    rq.interval *= 2;
                }
            }
        }
    }

    /// Whether a balance of busy `dst` now races with a switch on the CPU it would pull from: that
    /// CPU's running task's slice ends at this very instant (both CPUs take the same tick).
    fn races(&self, dst: CpuId, v: &View) -> bool {
        let now = v.now();
        let mut sources = Vec::new();
        self.sources(dst, Kind::Busy, v, &mut sources);
        sources.first().is_some_and(|&(src, _)| self.rqs[src as usize].slice_end == Some(now))
    }

    /// Whether a task just pulled to `cpu` preempts what runs there (`wakeup_preempt`), or `cpu` was
    /// idle.
    fn pulled_preempts(&self, cpu: CpuId, v: &View) -> bool {
        let Some(r) = v.running(cpu) else { return !self.scratch.is_empty() };
        if self.parts.cpu_of(r) != Some(cpu) {
            return false;
        }
        let part = self.parts.cpu(cpu);
        let running = [(0, self.parts.home(r).local)];
        self.scratch.iter().any(|&t| {
            let local = self.parts.home(t).local;
            part.policy.preempt_for(local, Some(0), &running, &part.view).is_some()
        })
    }
}

impl Policy for PerCpu {
    fn admit(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        self.parts.sync(v);
        self.raise_top(p.priority, v);
        let n = self.n() as CpuId;
        let cpu = (0..n).find(|&c| p.allows(c)).unwrap_or(0);
        let local = self.parts.place(cpu, t, p);
        let part = self.parts.cpu_mut(cpu);
        part.policy.admit(local, &Parts::<dyn RunQueue>::local_params(p), &part.view);
        let (load, idle) = part.policy.load(local);
        *crate::slot(&mut self.tasks, t) = Tk { load, idle, fresh: true, ..Tk::default() };
    }

    fn exit(&mut self, t: TaskId, v: &View) {
        if self.tasks[t.idx()].runnable {
            self.dequeue(t);
        }
        let (part, local) = self.parts.of(t, v);
        part.policy.exit(local, &part.view);
        self.parts.unplace(t);
        self.tasks[t.idx()] = Tk::default();
    }

    fn wake(&mut self, t: TaskId, v: &View) {
        self.parts.sync(v);
        let h = self.parts.home(t);
        // A task still in its queue (delayed) wakes there, unless a new affinity forbids that CPU.
        if !self.parts.cpu(h.cpu).policy.holds(h.local) || !v.allows(t, h.cpu) {
            let to = self.wake_cpu(t, v);
            if to != h.cpu {
                let p = v.params(t).clone();
                self.migrate(t, to, &p, v);
            }
        }
        self.tasks[t.idx()].fresh = false;
        let (part, local) = self.parts.of(t, v);
        part.view.wake(local);
        part.policy.wake(local, &part.view);
        self.enqueue(t);
    }

    fn stop(&mut self, t: TaskId, cpu: CpuId, charged: Nanos, why: Stop, v: &View) {
        debug_assert_eq!(self.cpu_of(t), cpu, "a task ran on a CPU other than its queue's");
        let (part, local) = self.parts.of(t, v);
        part.view.stop(local, charged, why != Stop::Blocked);
        part.policy.stop(local, 0, charged, why, &part.view);
        self.rqs[cpu as usize].slice_end = None;
        let k = &mut self.tasks[t.idx()];
        k.running = false;
        k.ran = Some(v.now());
        if why == Stop::Blocked {
            self.dequeue(t);
        }
        self.reload(t);
        if why != Stop::Blocked && !v.allows(t, cpu) {
            // Its affinity changed while it ran: it moves now (set_cpus_allowed_ptr).
            let to = self.wake_cpu(t, v);
            let p = v.params(t).clone();
            self.migrate(t, to, &p, v);
        }
    }

    fn tick(&mut self, cpu: CpuId, v: &View) -> bool {
        self.parts.sync(v);
        let mine = v.running(cpu).is_some_and(|r| self.parts.cpu_of(r) == Some(cpu));
        let part = self.parts.cpu_mut(cpu);
        let mut resched = mine && part.policy.tick(0, &part.view);
        let idle = v.running(cpu).is_none();
        let busy = !idle && !self.idle_rq(cpu, v);
        let rq = &self.rqs[cpu as usize];
        let now = v.now();
        if now >= rq.last_balance.saturating_add(self.interval(cpu, busy)) {
            self.rqs[cpu as usize].last_balance = now;
            if !idle && self.races(cpu, v) && self.coin.random::<bool>() {
                // The source's switch at this tick wins the race: balance once the instant's switches
                // are made (`kick`).
                self.deferred.push((cpu, now));
                return resched;
            }
            self.balance(cpu, if idle { Kind::Idle } else { Kind::Busy }, v);
            resched |= self.pulled_preempts(cpu, v);
        }
        resched
    }

    fn uses_tick(&self) -> bool {
        true
    }

    fn shares_one_queue(&self) -> bool {
        false
    }

    /// An idle CPU finds work in its own queue, or pulls it from a CPU with a task waiting.
    fn might_find_work(&self, cpu: CpuId, v: &View) -> bool {
        self.parts.cpu(cpu).view.runnable_count() > 0
            || !self.crowded.is_empty()
            || v.any_taken() && self.single.iter().any(|&c| v.taken(c))
    }

    fn select_cpu(&self, t: TaskId, _prev: Option<CpuId>, idle: &[CpuId], _v: &View) -> CpuId {
        let home = self.cpu_of(t);
        if idle.contains(&home) {
            home
        } else {
            idle[0]
        }
    }

    fn preempt_for(
        &self,
        woken: TaskId,
        _prev: Option<CpuId>,
        running: &Running,
        _v: &View,
    ) -> Option<CpuId> {
        let h = self.parts.home(woken);
        let &(cpu, r) = running.iter().find(|(c, _)| *c == h.cpu)?;
        let part = self.parts.cpu(cpu);
        part.policy.preempt_for(h.local, Some(0), &[(0, self.parts.home(r).local)], &part.view).map(|_| cpu)
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        self.parts.sync(v);
        if self.parts.cpu(cpu).view.runnable_count() == 0 {
            self.balance(cpu, Kind::NewlyIdle, v);
        }
        let part = self.parts.cpu_mut(cpu);
        let picked = part.policy.pick_next(0, &part.view);
        if let Some(d) = picked {
            part.view.dispatch(d.task, 0);
        }
        let d = picked.map(|d| Dispatch { task: self.parts.global(cpu, d.task), ..d });
        if let Some(d) = d {
            let stamp = self.next_stamp();
            let k = &mut self.tasks[d.task.idx()];
            k.running = true;
            k.stamp = stamp;
            self.rqs[cpu as usize].slice_end = d.slice.map(|s| v.now().saturating_add(s));
        }
        d
    }

    fn set_time_constraint(&mut self, t: TaskId, c: Option<TimeConstraint>, v: &View) {
        let (part, local) = self.parts.of(t, v);
        part.policy.set_time_constraint(local, c, &part.view);
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        // The task's own queue first, with its new parameters (a new top priority reweights it once);
        // then every queue learns the top.
        let lp = Parts::<dyn RunQueue>::local_params(p);
        let (part, local) = self.parts.of(t, v);
        let running = matches!(part.view.state(local), State::Running(_));
        part.policy.set_params(local, &lp, &part.view);
        part.view.set_params(local, &lp);
        self.raise_top(p.priority, v);
        self.reload(t);
        let cpu = self.cpu_of(t);
        if !running && !p.allows(cpu) {
            // set_cpus_allowed_ptr moves a task off a CPU it may no longer use.
            let to = (0..self.n() as CpuId)
                .filter(|&c| p.allows(c))
                .min_by_key(|&c| (self.stats(c, v).nr, c))
                .unwrap_or(cpu);
            self.migrate(t, to, p, v);
            self.scratch.clear();
            self.scratch.push(t);
            if self.tasks[t.idx()].runnable && self.pulled_preempts(to, v) {
                self.kicks.push(to);
            }
        }
    }

    fn interact(&mut self, t: TaskId, v: &View) {
        let (part, local) = self.parts.of(t, v);
        part.policy.interact(local, &part.view);
    }

    fn availability(&self, t: TaskId, v: &View) -> Availability {
        self.parts.availability(t, v)
    }

    fn take_notifications(&mut self, out: &mut Vec<Notification>) {
        self.parts.take_notifications(out);
    }

    // A run queue has no timer of its own ([`RunQueue`]): none to ask, on every event, of every CPU.

    /// Once the instant's decisions are made: the balances put after the switches (a CPU whose pull preempts what runs there decides again), then CPUs a new affinity
    /// moved a task to.
    fn kick(&mut self, v: &View) -> Option<CpuId> {
        let now = v.now();
        while let Some((dst, at)) = self.deferred.pop() {
            if at != now || v.running(dst).is_none() {
                continue; // an idle CPU pulls for itself when it next looks for work
            }
            self.balance(dst, Kind::Busy, v);
            self.races_after += 1;
            if self.pulled_preempts(dst, v) {
                return Some(dst);
            }
        }
        self.kicks.pop()
    }

    fn walked(&self) -> u64 {
        self.parts.walked()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = self.parts.counters();
        c.push(("balance_pulls", self.pulls));
        c.push(("newidle_pulls", self.newidle_pulls));
        c.push(("balance_failures", self.failed_balances));
        c.push(("balances_after_a_switch", self.races_after));
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eevdf::{Eevdf, EevdfConfig};
    use crate::{test_core, Core};

    /// EEVDF with a run queue per CPU on `cpus` CPUs, a 1 ms tick (slices end on it), and `seed`.
    fn percpu(cpus: usize, seed: u64) -> Core<PerCpu> {
        percpu_of(EevdfConfig::linux(cpus), cpus, seed)
    }

    /// The same with slices that end between ticks (`hrtick`): no CPU's balance races a switch.
    fn percpu_hr(cpus: usize) -> Core<PerCpu> {
        percpu_of(EevdfConfig { hrtick: true, ..EevdfConfig::linux(cpus) }, cpus, 1)
    }

    fn percpu_of(cfg: EevdfConfig, cpus: usize, seed: u64) -> Core<PerCpu> {
        let inner = (0..cpus).map(|_| Box::new(Eevdf::new(cfg.clone())) as Box<dyn RunQueue>).collect();
        test_core(PerCpu::new(inner, Balance { jiffy: MS, migration_cost: MIGRATION_COST, seed }), cpus)
    }

    fn hog() -> TaskParams {
        TaskParams::default()
    }

    fn queue_of(c: &Core<PerCpu>, t: u32) -> CpuId {
        c.policy().cpu_of(TaskId(t))
    }

    fn counter(c: &Core<PerCpu>, name: &str) -> u64 {
        c.counters().into_iter().find(|(k, _)| *k == name).map_or(0, |(_, v)| v)
    }

    /// Admits and wakes tasks `0..n` at 0, then lets every CPU pick.
    fn start(c: &mut Core<PerCpu>, n: u32) {
        for t in 0..n {
            c.admit(TaskId(t), &hog(), 0);
        }
        for t in 0..n {
            c.wake(TaskId(t), 0);
        }
        while let Some(cpu) = c.next_decision() {
            c.pick(cpu, 0);
        }
    }

    #[test]
    fn new_tasks_go_to_the_idlest_cpu() {
        let mut c = percpu(2, 1);
        start(&mut c, 3);
        // The first two find an idle CPU each; the third the less loaded, ties to the lower number.
        assert_eq!((queue_of(&c, 0), queue_of(&c, 1), queue_of(&c, 2)), (0, 1, 0));
        assert_eq!(c.view().running(0), Some(TaskId(0)));
        assert_eq!(c.view().running(1), Some(TaskId(1)));
    }

    #[test]
    fn a_woken_task_goes_back_to_its_cpu_if_idle_else_to_an_idle_one_else_stays() {
        let mut c = percpu(3, 1);
        start(&mut c, 2); // task 0 on CPU 0, task 1 on CPU 1, CPU 2 idle
        c.stop(TaskId(1), MS, Stop::Blocked, MS);
        c.wake(TaskId(1), 2 * MS);
        assert_eq!(queue_of(&c, 1), 1, "its own CPU, idle");
        assert_eq!(c.pick(1, 2 * MS).unwrap().task, TaskId(1));
        c.stop(TaskId(0), MS, Stop::Blocked, 3 * MS);
        c.admit(TaskId(2), &hog(), 3 * MS);
        c.wake(TaskId(2), 3 * MS); // takes idle CPU 0
        assert_eq!(c.pick(0, 3 * MS).unwrap().task, TaskId(2));
        c.wake(TaskId(0), 4 * MS);
        assert_eq!(queue_of(&c, 0), 2, "CPU 0 is busy: the first idle CPU after it");
        assert_eq!(c.pick(2, 4 * MS).unwrap().task, TaskId(0));
        c.stop(TaskId(0), MS, Stop::Blocked, 5 * MS);
        c.admit(TaskId(3), &hog(), 5 * MS);
        c.wake(TaskId(3), 5 * MS);
        assert_eq!(c.pick(2, 5 * MS).unwrap().task, TaskId(3));
        c.wake(TaskId(0), 6 * MS);
        assert_eq!(queue_of(&c, 0), 2, "no CPU idle: it stays on its own");
    }

    /// Runs hogs from `from` to `to` as the simulator does: at each 1 ms tick, every CPU's tick, then the
    /// slices that end, then the decisions the core asks for.
    fn run_ticks(c: &mut Core<PerCpu>, from: Nanos, to: Nanos) {
        let cpus = c.cpus();
        let mut ends: Vec<Option<Nanos>> =
            (0..cpus as CpuId).map(|cpu| c.view().running(cpu).map(|_| from + MS)).collect();
        let mut now = from;
        while now < to {
            now += MS;
            for cpu in 0..cpus as CpuId {
                c.tick(cpu, now);
            }
            let stop = |c: &mut Core<PerCpu>, cpu: CpuId, why: Stop| {
                if let Some(t) = c.view().running(cpu) {
                    let ran = now - c.view().dispatched_at(cpu);
                    c.stop(t, ran, why, now);
                }
            };
            for cpu in 0..cpus as CpuId {
                if ends[cpu as usize].is_some_and(|e| e <= now) {
                    stop(c, cpu, Stop::SliceEnd);
                    ends[cpu as usize] = c.pick(cpu, now).and_then(|d| d.slice).map(|s| now + s);
                }
            }
            while let Some(cpu) = c.next_decision() {
                stop(c, cpu, Stop::Preempted);
                ends[cpu as usize] = c.pick(cpu, now).and_then(|d| d.slice).map(|s| now + s);
            }
        }
    }

    #[test]
    fn the_busy_cpu_beside_two_hogs_pulls_one_at_its_second_balance() {
        // Three hogs on two CPUs: CPU 1 (one hog) balances every 2 ms × 16 − 1 jiffy = 31 ms. Its
        // first balance finds load 1024 to move against an imbalance of 512 (the average 1536 less its
        // own 1024) and fails; the second halves the load once per failure (512 ≤ 512) and pulls the
        // queued hog, the least recently run one on CPU 0 (it is not cache hot: it ran a while ago).
        let mut c = percpu_hr(2);
        start(&mut c, 3);
        assert_eq!(c.policy().interval(1, true), 31 * MS);
        run_ticks(&mut c, 0, 31 * MS);
        assert_eq!((counter(&c, "balance_failures"), counter(&c, "balance_pulls")), (1, 0));
        assert_eq!((queue_of(&c, 0), queue_of(&c, 1), queue_of(&c, 2)), (0, 1, 0));
        run_ticks(&mut c, 31 * MS, 62 * MS);
        assert_eq!(counter(&c, "balance_pulls"), 1);
        let on1 = (0..3).filter(|&t| queue_of(&c, t) == 1).count();
        assert_eq!(on1, 2, "one hog moved to CPU 1");
    }

    #[test]
    fn intervals_are_counted_in_jiffies_and_bounded() {
        let mut c = percpu(2, 1);
        c.policy_mut().cfg.jiffy = 4 * MS; // HZ 250
                                           // busy: 32 ms = 8 jiffies, less one: 28 ms; idle: 2 ms rounds up to one jiffy.
        assert_eq!((c.policy().interval(0, true), c.policy().interval(0, false)), (28 * MS, 4 * MS));
        c.policy_mut().rqs[0].interval = 512;
        // At most HZ × CPUs / 10 jiffies: 50 jiffies, 200 ms.
        assert_eq!(c.policy().interval(0, true), 200 * MS);
    }

    #[test]
    fn a_cpu_about_to_idle_pulls_a_waiting_task_but_never_a_running_one() {
        let mut c = percpu(2, 1);
        start(&mut c, 3); // tasks 0 and 2 on CPU 0 (0 runs), task 1 on CPU 1
        c.stop(TaskId(1), MS, Stop::Blocked, MS);
        let d = c.pick(1, MS).expect("CPU 1 pulls");
        assert_eq!(d.task, TaskId(2), "the waiting task, not the running one");
        assert_eq!(queue_of(&c, 2), 1);
        assert_eq!(counter(&c, "newidle_pulls"), 1);
        // Nothing waits any more: CPU 0 keeps its task and CPU 1 has its own.
        c.stop(TaskId(2), MS, Stop::Blocked, 2 * MS);
        assert_eq!(c.pick(1, 2 * MS), None);
    }

    #[test]
    fn a_task_is_never_pulled_where_its_affinity_forbids() {
        let mut c = percpu(2, 1);
        let (free, pinned) = (hog(), TaskParams { cpus: Some(vec![0]), ..hog() });
        for t in 0..3 {
            c.admit(TaskId(t), if t == 1 { &free } else { &pinned }, 0);
            c.wake(TaskId(t), 0);
        }
        while let Some(cpu) = c.next_decision() {
            c.pick(cpu, 0);
        }
        assert_eq!((queue_of(&c, 0), queue_of(&c, 1), queue_of(&c, 2)), (0, 1, 0));
        c.stop(TaskId(1), MS, Stop::Blocked, MS);
        assert_eq!(c.pick(1, MS), None, "task 2 waits on CPU 0, pinned there");
        run_ticks(&mut c, MS, 100 * MS);
        assert_eq!(queue_of(&c, 2), 0);
        assert_eq!(counter(&c, "balance_pulls") + counter(&c, "newidle_pulls"), 0);
    }

    #[test]
    fn a_cache_hot_task_stays_until_two_balances_have_failed() {
        let mut c = percpu(2, 1);
        start(&mut c, 3);
        // Task 2, queued on CPU 0, ran a moment ago: hot for 0.5 ms.
        c.policy_mut().tasks[2].ran = Some(31 * MS);
        c.policy_mut().rqs[1].failed = 1;
        c.advance_to(31 * MS);
        let v = c.view().clone();
        c.policy_mut().balance(1, Kind::Busy, &v);
        assert!(c.policy().scratch.is_empty(), "hot, and one failure is not enough");
        assert_eq!(c.policy().rqs[1].failed, 2);
        c.policy_mut().balance(1, Kind::Busy, &v);
        assert_eq!(c.policy().scratch, [TaskId(2)], "after two failures a hot task moves");
        // The control: the same task cold moves after one failure.
        let mut c = percpu(2, 1);
        start(&mut c, 3);
        c.policy_mut().tasks[2].ran = None;
        c.policy_mut().rqs[1].failed = 1;
        c.advance_to(31 * MS);
        let v = c.view().clone();
        c.policy_mut().balance(1, Kind::Busy, &v);
        assert_eq!(c.policy().scratch, [TaskId(2)], "cold, it moves once the load halves");
    }

    #[test]
    fn a_balance_put_after_the_switches_runs_once_they_are_made_and_sees_the_task_just_switched_out() {
        // CPU 0 runs task 0 with task 2 waiting; CPU 1 runs task 1. At 30 ms CPU 1's balance is due
        // while CPU 0's slice ends: put after the switch, it runs from `kick` and finds task 0 just
        // switched out (cache hot) and task 2 running: nothing to move, one more failure.
        let mut c = percpu(2, 1);
        start(&mut c, 3);
        c.policy_mut().rqs[1].failed = 1;
        let now = 30 * MS;
        c.advance_to(now);
        c.policy_mut().deferred.push((1, now));
        c.stop(TaskId(0), now, Stop::SliceEnd, now);
        assert_eq!(c.pick(0, now).map(|d| d.task), Some(TaskId(2)));
        assert_eq!(c.next_decision(), None, "the balance moved nothing: no CPU decides again");
        assert_eq!(counter(&c, "balances_after_a_switch"), 1);
        assert_eq!(counter(&c, "balance_pulls"), 0);
        assert_eq!(c.policy().rqs[1].failed, 2);
        // At the tick, before the switch, the same balance moves the waiting task 2 (cold).
        let mut c = percpu(2, 1);
        start(&mut c, 3);
        c.policy_mut().rqs[1].failed = 1;
        c.advance_to(now);
        let v = c.view().clone();
        c.policy_mut().balance(1, Kind::Busy, &v);
        assert_eq!(c.policy().scratch, [TaskId(2)]);
    }

    #[test]
    fn every_task_on_one_cpu_decides_as_the_policy_alone_on_one_cpu() {
        // Two CPUs, every task pinned to CPU 0: the same events give the same dispatches as EEVDF
        // built alone for one CPU, a new top priority included (it reweights a queued task once).
        let cfg = EevdfConfig::linux(2);
        let mut alone = test_core(Eevdf::new(cfg.clone()), 1);
        let inner = (0..2).map(|_| Box::new(Eevdf::new(cfg.clone())) as Box<dyn RunQueue>).collect();
        let mut pc =
            test_core(PerCpu::new(inner, Balance { jiffy: MS, migration_cost: MIGRATION_COST, seed: 1 }), 2);
        let pinned = |priority| TaskParams { cpus: Some(vec![0]), priority, ..TaskParams::default() };
        for t in 0..3 {
            alone.admit(TaskId(t), &TaskParams { cpus: None, ..pinned(0) }, 0);
            pc.admit(TaskId(t), &pinned(0), 0);
            alone.wake(TaskId(t), 0);
            pc.wake(TaskId(t), 0);
        }
        let mut now = 0;
        let trail = |a: &mut Core<Eevdf>, p: &mut Core<PerCpu>, now: &mut Nanos| {
            let (x, y) = (a.pick(0, *now).unwrap(), p.pick(0, *now).unwrap());
            assert_eq!(x, y, "at {now}");
            *now += x.slice.unwrap();
            a.stop(x.task, x.slice.unwrap(), Stop::SliceEnd, *now);
            p.stop(y.task, y.slice.unwrap(), Stop::SliceEnd, *now);
        };
        for _ in 0..5 {
            trail(&mut alone, &mut pc, &mut now);
        }
        alone.set_params(TaskId(1), &TaskParams { cpus: None, ..pinned(5) }, now);
        pc.set_params(TaskId(1), &pinned(5), now);
        for _ in 0..10 {
            trail(&mut alone, &mut pc, &mut now);
        }
        assert_eq!(pc.pick(1, now), None, "CPU 1 may run none of them");
    }

    #[test]
    fn the_race_at_a_shared_tick_depends_on_the_seed_and_the_same_seed_repeats() {
        let shares = |seed| {
            let mut c = percpu(2, seed);
            start(&mut c, 3);
            run_ticks(&mut c, 0, 2000 * MS);
            (0..3).map(|t| c.view().billed(TaskId(t)).0).collect::<Vec<_>>()
        };
        assert_eq!(shares(1), shares(1), "the same seed, the same run");
        assert_ne!(shares(1), shares(2), "another seed settles the races otherwise");
    }

    #[test]
    fn on_one_cpu_and_with_global_run_queues_the_policy_is_built_alone() {
        let mut opts = crate::Options::new();
        let one = crate::build("eevdf", &opts, 1).unwrap();
        let two = crate::build("eevdf", &opts, 2).unwrap();
        opts.insert("runqueues".into(), crate::OptValue::Str("global".into()));
        let global = crate::build("eevdf", &opts, 2).unwrap();
        assert!(one.policy().shares_one_queue() && global.policy().shares_one_queue());
        assert!(!two.policy().shares_one_queue() && two.uses_tick());
    }
}
