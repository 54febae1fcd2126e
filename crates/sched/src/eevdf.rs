//! Linux's fair class as of 6.12, and with `version` the rule changes of later releases up to 6.18:
//! EEVDF, Earliest Eligible Virtual Deadline First (Stoica and Abdel-Wahab, "Earliest Eligible
//! Virtual Deadline First: A Flexible and Accurate Mechanism for Proportional Share Resource
//! Allocation", 1995; in Linux since 6.6), with a run queue per CPU on N CPUs.
//!
//! **Specification.** `kernel/sched/fair.c` and `features.h` of Linux 6.12 (Debian's linux-source
//! 6.12, 6.12.117, the kernel our guest runs; read to learn the rules, nothing is copied), with its
//! default features: `PLACE_LAG`, `PLACE_DEADLINE_INITIAL`, `RUN_TO_PARITY`, `DELAY_DEQUEUE`,
//! `DELAY_ZERO`, `WAKEUP_PREEMPTION` on, `HRTICK` and `NEXT_BUDDY` off. That stable kernel carries
//! fixes back-ported from later releases, which are therefore 6.12's rules here: the 0.7 ms base
//! slice of 6.15 ("sched: Reduce the default slice to avoid tasks getting an extra tick"; 6.12.0
//! had 0.75 ms), 6.15's "sched: Cancel the slice protection of the idle entity", and `zero_vruntime`
//! ("sched/eevdf: Fix min_vruntime vs avg_vruntime", also in 6.18.y).
//!
//! **Weights.** A task's nice level is its `nice` when the scenario gives one; else it comes from its share as hourglass maps it onto the real kernel
//! ([`share_level`], the one rule of both: share 1 is nice 0, each factor 1.25 one level;
//! `nice0_share` moves nice 0, and `scx_smart`, whose shares are kernel weights with nice 0 at 100,
//! sets it to 100), and its weight from the kernel's `sched_prio_to_weight` ([`WEIGHTS`], nice 0 =
//! 1024). A task with share 0, or with a priority below the highest one admitted so far, is
//! `SCHED_IDLE` (weight 3), as hourglass runs it (which refuses a task that would start weighed by
//! its share before the highest priority starts, [`crate::linux`]).
//!
//! **State per task.** Virtual runtime `v`, advanced by `charged · 1024 / w` when the task is billed
//! (`calc_delta_fair`); a virtual deadline `d`; a saved virtual lag `vlag` while it sleeps. The queue
//! keeps the sums `Σ w·v` and `Σ w` of its members (queued, and asleep-but-delayed, below), so that
//! `V`, the weighted average of `v` over the members and the running tasks (`avg_vruntime`, rounded
//! down), and eligibility are exact integer arithmetic: a task is eligible when `Σ w·v ≥ v_i · Σ w`
//! (`vruntime_eligible`).
//!
//! **Rules.**
//! * A CPU runs the eligible task with the earliest virtual deadline (`pick_eevdf`).
//! * A dispatched task runs until its virtual runtime reaches its deadline: its request of one base
//!   slice is used up (`update_deadline`). It then gets a new deadline `v + slice·1024/w` and the CPU
//!   decides again. The base slice is 0.7 ms × (1 + log₂ min(CPUs, 8)), as the kernel scales
//!   `sysctl_sched_base_slice` by default. Without `HRTICK` the kernel notices the end of a request
//!   at the next clock tick: the slice given to the driver runs to the first multiple of `tick`
//!   at or after the request's end (`hrtick = true`: exactly to it). A slice run to its end counts
//!   as the request used up even when tick billing charged less, so the run never spins.
//! * A task joins with `v = V − vlag·(W + w)/W` (`place_entity`: the lag it left with, inflated so
//!   that it keeps that lag once it counts in `V`; `W` the weight already there) and `d = v +
//!   slice·1024/w`; a new task with lag 0 and half a slice (`PLACE_DEADLINE_INITIAL`).
//! * A task that blocks leaves with `vlag = V − v`, clamped to `±max(2·slice, tick)·1024/w`
//!   (`entity_lag`), unless it is not eligible: then it stays a member, "delayed", competing with
//!   its negative lag until a CPU picks it, when it leaves with lag 0 (`DELAY_DEQUEUE`,
//!   `DELAY_ZERO`). Woken while delayed it stays where it is, or, if it has become eligible, is
//!   placed again with lag 0 (`requeue_delayed_entity`).
//! * A woken task preempts a CPU whose task is `SCHED_IDLE` (unless it is one too); a `SCHED_IDLE`
//!   task never preempts. Otherwise it preempts when the running task has used up its request, or
//!   when it is now what that CPU would pick (`check_preempt_wakeup_fair`): the running task is
//!   kept if it is still eligible and has not used its request since it was picked
//!   (`RUN_TO_PARITY`), or if its deadline is earlier. CPUs are tried from the woken task's
//!   previous CPU, then in number order.
//! * A yielding task that is eligible gives up the rest of its request: `v = d`, and a new one
//!   (`yield_task_fair`).
//! * A new share or priority reweights the task (`reweight_entity`/`reweight_eevdf`): queued, its
//!   lag and the rest of its request are scaled by `w_old / w_new` around `V`; asleep, its saved lag.
//!   A running task is reweighted when it stops.
//! * When nothing is queued or running, `V` stays where it last was (`zero_vruntime`).
//!
//! **Versions.** `version` names the release whose rules apply (`"6.12"` by default; for a release
//! not listed, give the latest listed one before it: 6.13 is `"6.12"`, 6.15 and 6.16 `"6.14"`). Only 6.12's source was read whole; the later
//! rules come from the scheduler merge requests of 6.13 to 6.18 and the commits and patches they
//! list, as sent to the kernel's mailing lists. The changes that reach what is modelled:
//! * `"6.14"`: "sched/fair: Fix EEVDF entity placement bug causing scheduling lag" (6d71a9c61604),
//!   with 6.16's "sched/fair: Adhere to place_entity() constraints". A queued task given a new
//!   weight no longer has `v` and `d` scaled around `V` (`reweight_eevdf`, gone): its lag, clamped,
//!   and the rest of its request `d − v` are scaled by `w_old / w_new`, and it is placed again as a
//!   task joining with that lag (`place_entity`: inflated by `(W + w)/W` over the others' weight
//!   `W`, lag 0 when alone) with `d = v + rest`. The two agree unless the lag was clamped.
//! * `"6.17"`: "sched/fair: Fix NO_RUN_TO_PARITY case", "sched/fair: Limit run to parity to the
//!   min slice of enqueued entities" and "sched/fair: Always trigger resched at the end of a
//!   protected period" (with "sched/fair: Use protect_slice() instead of direct comparison",
//!   "sched/fair: Remove spurious shorter slice preemption" and "sched/fair: Fix entity's lag with
//!   run to parity", which only change anything for tasks of different slices). 6.12's protection
//!   (the deadline at the pick, stashed in `vlag`: the request) becomes `vprot`, set when a task is
//!   picked (`set_protect_slice`) to `min(d, v + q·1024/w)`, `q` being the smallest slice of the
//!   queue with `RUN_TO_PARITY`, else `min(0.7 ms, its slice)` (`normalized_sysctl_sched_base_slice`),
//!   and `d` itself when `q` is its own slice. A wake-up does not preempt an eligible task short of
//!   its `vprot`, with or without `RUN_TO_PARITY`, and the tick that finds it past `vprot`
//!   reschedules it. Every task has the base slice here, so with `RUN_TO_PARITY` the protection is
//!   the whole request, as in 6.12; without it a task is now protected for `min(0.7 ms,
//!   base_slice)` and its CPU decides again then (on the tick without `hrtick`), where 6.12
//!   protected nothing and ran it to its deadline. A slice cut there does not use up the request.
//! * `"6.18"`: nothing that reaches these rules (its scheduler merge reworks control-group
//!   bandwidth throttling and topology): 6.17's rules.
//!
//! Looked at and unchanged here: 6.13's `PLACE_LAG` shortcut for zero lag, removal of `DOUBLE_TICK`
//! (off) and lazy preemption (not used by a `PREEMPT_NONE` kernel such as this machine's);
//! `PLACE_REL_DEADLINE`, already in 6.12, which keeps a relative deadline across a migration (one
//! queue never migrates); `PREEMPT_SHORT` and 6.15's min-slice propagation (custom slices only);
//! the delayed-dequeue fixes of 6.13 to 6.16 (PELT, util_est, `wake_up_sync`, `wait_task_inactive`,
//! not migrating a delayed task: none changes a pick here). No `sched_feat` default changes in the
//! merges read. "sched/fair: Increase max lag clamping" (lag bounded by the largest slice of the
//! queue plus a tick) was not merged in 6.17; as "sched/fair: Fix lag clamp" it went into 7.0
//! (February 2026) marked for stable kernels, so a 6.18.y kernel may have it: not modelled.
//!
//! **Tie-break.** Equal virtual deadlines go in the order the tasks joined the queue (the kernel's
//! red-black tree puts an equal key to the right): a task that stops joins behind its equals, so
//! the kernel's rule that the running task is kept only when strictly earlier holds.
//!
//! **Search.** The queue is the kernel's augmented tree, or an equivalent of it
//! (`augtree.rs`): its members ordered by (deadline, join order), as the kernel's red-black
//! tree is by deadline since 6.8 ("sched/eevdf: Sort the rbtree by virtual deadline"), and every
//! subtree knowing the smallest virtual runtime in it (the kernel's `min_vruntime` of a node).
//! Eligibility falls as `v` grows (`Σ w·v ≥ v · Σ w`), so a subtree whose smallest `v` is not
//! eligible holds no eligible task: the search descends one path, into the left subtree when it
//! holds an eligible task, else to the node if it is eligible, else to the right (`pick_eevdf`),
//! and finds the eligible task with the earliest deadline in O(log n), as does joining and
//! leaving. Eligibility is tested as `v ≤ ⌊S/W⌋` (`limit`), the same test as `v·W ≤ S` in integers, so
//! a search divides once and then compares plain integers. Kept per member: its key `(d, seq)`
//! (packed in a `u128` that orders as the pair) and `v` as it joined; the invariant is that a
//! member's `v` and `d` do not change while it is queued (a task given a new weight, or placed
//! again, leaves and joins; checked in debug builds). The tree is a treap, balanced in
//! expectation: O(log n) expected, not worst case as the kernel's red-black tree. Where a task's
//! affinity keeps the found task off the deciding CPU (one queue for several CPUs), the queue is
//! walked in deadline order instead, O(n), as it was for every search before the tree; the tests
//! keep that walk and check on random worlds that both pick the same task for the same slice at
//! every decision.
//!
//! **Options.** `base_slice` (default as above), `tick` (the `TICK_NSEC` of the lag bound and of
//! slice ends, default 1 ms: set it to 1/`hz` of the machine), `hrtick` (false),
//! `run_to_parity` (true), `place_lag` (true), `delay_dequeue` (true), `nice0_share` (1), `version`
//! (`"6.12"`; `"6.14"`, `"6.17"`, `"6.18"`); on N CPUs `runqueues` (`"per-cpu"`), `migration_cost`
//! (0.5 ms) and `seed` (1).
//!
//! **N CPUs.** As the kernel, a run queue per CPU, each a copy of this policy with its own `V`,
//! balanced by [`crate::percpu`] (wake-up placement, periodic and new-idle balancing; a task moving
//! takes its lag and the rest of its request along, `PLACE_REL_DEADLINE`): `runqueues = "per-cpu"`,
//! the default, with the options `migration_cost` and `seed` of the balancer. `runqueues =
//! "global"` keeps one queue for all CPUs instead, `V` averaging over every queued and running task
//! (what this policy did before per-CPU queues). `partition = "affinity"` gives one queue per CPU,
//! never balanced, each built for one CPU (its default base slice is then 0.7 ms, where the kernel
//! scales it by the machine's CPUs).
//!
//! **Left out.** NUMA and the rest of what [`crate::percpu`] leaves out; control groups and their
//! hierarchical weights, custom slices (`sched_attr.sched_runtime`, and with them
//! `PREEMPT_SHORT`), buddies, `SCHED_BATCH`, bandwidth control, and the inverse-weight
//! fixed-point arithmetic of `__calc_delta` (this policy divides exactly, rounding down). A
//! running task's progress, for the decisions taken while it runs, is the time since its dispatch;
//! what counts once it stops is what the driver billed. With affinity, a CPU whose allowed tasks
//! are all ineligible runs the one with the earliest deadline rather than idle. Every pick protects the picked task anew; the kernel does
//! not when a CPU picks again the task it was running (its request renewed, nothing better
//! queued: `pick_next_task_fair` skips `set_next_entity`), so there the renewed request is not
//! protected (6.12: the stashed deadline no longer matches; 6.17: `vprot` is behind it).

use crate::augtree::MinTree;
use crate::linux::{self, share_level, FairLevel, FairMeaning};
use crate::percpu::{self, Carry, RunQueue};
use crate::registry::{opt, Entry, OptionDoc, Pace, Slice, Walks};
use crate::{
    slot, Availability, CpuId, Dispatch, Nanos, OptReader, Policy, PolicyError, Running, Stop, TaskId,
    TaskParams, View, MS,
};

/// `sched_prio_to_weight`: the weight of nice −20 to 19 (nice 0 = 1024, each level about 1.25×).
pub const WEIGHTS: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121,
    2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29,
    23, 18, 15,
];
/// The weight of a `SCHED_IDLE` task (`WEIGHT_IDLEPRIO`).
pub const IDLE_WEIGHT: u64 = 3;
/// The weight of nice 0 (`NICE_0_LOAD`, scaled down).
pub const NICE_0: u64 = 1024;
/// `sysctl_sched_base_slice` before scaling by the number of CPUs (`normalized_sysctl_sched_base_slice`).
pub const BASE_SLICE: Nanos = 700_000;

/// The nice level of a share, as hourglass runs a fair-class scenario on Linux: share `nice0` (1 in a
/// scenario) is nice 0, each factor 1.25 one level (the kernel's weight step), clamped to −20..=19.
/// Share 0 has no nice level (it runs as `SCHED_IDLE`); it is given 19 here.
pub fn nice_of_share(share: u32, nice0: u32) -> i8 {
    match share_level(share, nice0, false) {
        FairLevel::Nice(n) => n,
        FairLevel::Idle => 19,
    }
}

/// The default base slice on `cpus` CPUs: 0.7 ms × (1 + log₂ min(cpus, 8)) (`get_update_sysctl_factor`
/// with `SCHED_TUNABLESCALING_LOG`).
pub fn default_base_slice(cpus: usize) -> Nanos {
    let n = cpus.clamp(1, 8) as u32;
    BASE_SLICE * Nanos::from(1 + n.ilog2())
}

/// The kernel release whose rules the policy follows (option `version`; see "Versions" above).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    /// 6.12 (6.13 decides the same way here).
    V6_12,
    /// 6.14: a queued task given a new weight is placed again (6.15 and 6.16 decide the same way).
    V6_14,
    /// 6.17: without `RUN_TO_PARITY`, a picked task is still protected for a minimum quantum; 6.18
    /// decides the same way here.
    V6_17,
}

/// The values `version` takes: each release whose rules differ here, and 6.18 (this machine's
/// kernel, the rules of 6.17).
pub const VERSIONS: &[&str] = &["6.12", "6.14", "6.17", "6.18"];

impl Version {
    /// The rules of release `name` (one of [`VERSIONS`]).
    pub fn of(name: &str) -> Option<Version> {
        match name {
            "6.12" => Some(Version::V6_12),
            "6.14" => Some(Version::V6_14),
            "6.17" | "6.18" => Some(Version::V6_17),
            _ => None,
        }
    }
}

/// Configuration of [`Eevdf`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EevdfConfig {
    /// The request of every task (`sysctl_sched_base_slice`).
    pub base_slice: Nanos,
    /// The clock tick (`TICK_NSEC`): the lower bound of the lag clamp, and the grid slice ends fall
    /// on without `hrtick`.
    pub tick: Nanos,
    /// End slices exactly (`HRTICK`) rather than at the next tick.
    pub hrtick: bool,
    /// `RUN_TO_PARITY`.
    pub run_to_parity: bool,
    /// `PLACE_LAG`: keep the lag across sleeps.
    pub place_lag: bool,
    /// `DELAY_DEQUEUE` (with `DELAY_ZERO`).
    pub delay_dequeue: bool,
    /// The share of a nice-0 task.
    pub nice0_share: u32,
    /// The kernel release whose rules apply.
    pub version: Version,
}

impl EevdfConfig {
    /// The kernel's defaults on `cpus` CPUs with a 1 ms tick.
    pub fn linux(cpus: usize) -> Self {
        EevdfConfig {
            base_slice: default_base_slice(cpus),
            tick: MS,
            hrtick: false,
            run_to_parity: true,
            place_lag: true,
            delay_dequeue: true,
            nice0_share: 1,
            version: Version::V6_12,
        }
    }

    /// From scenario options: `base_slice`, `tick`, `hrtick`, `run_to_parity`, `place_lag`,
    /// `delay_dequeue`, `nice0_share`, `version`.
    pub fn from_options(o: &mut OptReader<'_>, cpus: usize) -> Result<Self, PolicyError> {
        let d = EevdfConfig::linux(cpus);
        Ok(EevdfConfig {
            base_slice: o.slice("base_slice", d.base_slice)?,
            tick: o.slice("tick", d.tick)?,
            hrtick: o.bool("hrtick", d.hrtick)?,
            run_to_parity: o.bool("run_to_parity", d.run_to_parity)?,
            place_lag: o.bool("place_lag", d.place_lag)?,
            delay_dequeue: o.bool("delay_dequeue", d.delay_dequeue)?,
            nice0_share: linux::nice0(o, "nice0_share")?,
            version: Version::of(o.choice("version", "6.12", VERSIONS)?).unwrap_or(d.version),
        })
    }
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
enum State {
    /// Not runnable (or not admitted, or gone); `vlag` is its saved lag.
    #[default]
    Asleep,
    /// In the queue, runnable.
    Queued,
    /// In the queue although it blocked (`DELAY_DEQUEUE`): it leaves when picked.
    Delayed,
    /// On a CPU.
    Running,
}

#[derive(Clone, Debug, Default)]
struct Ent {
    live: bool,
    w: u64,
    idle: bool,
    /// Virtual runtime; for a running task, at its dispatch.
    v: i64,
    deadline: i64,
    vlag: i64,
    state: State,
    /// Position among equal deadlines in the queue.
    seq: u64,
    /// Admitted and never woken: the next wake places it as a new task.
    fresh: bool,
    /// A new weight given while it ran.
    pending: Option<(u64, bool)>,
    /// While it runs: the virtual runtime up to which a wake-up does not preempt it, if it is
    /// protected at all (`vprot`, or 6.12's deadline stashed in `vlag`).
    vprot: Option<i64>,
    /// While it runs: its slice ends where its protection does, before its request ends.
    cut: bool,
}

/// The EEVDF policy.
#[derive(Debug)]
pub struct Eevdf {
    cfg: EevdfConfig,
    ents: Vec<Ent>,
    /// Members by (deadline, join order), each with its virtual runtime, the tree keeping the
    /// smallest of every subtree (see "Search" in the module documentation).
    queue: MinTree<u128>,
    /// Today's search, for the tests: members in a sorted set, walked in deadline order.
    #[cfg(test)]
    linear: Option<std::collections::BTreeSet<(i64, u64, TaskId)>>,
    /// `Σ w·v` and `Σ w` over the queue's members.
    sum_wv: i128,
    sum_w: i128,
    /// `V` when it was last computed (what `V` is while nothing counts).
    vbase: i64,
    seq: u64,
    /// The highest priority admitted so far (tasks below it are `SCHED_IDLE`).
    top: Option<i32>,
    delayed: u64,
}

/// `calc_delta_fair`: real time `delta` as virtual time of a task of weight `w`.
fn vdelta(delta: Nanos, w: u64) -> i64 {
    if w == NICE_0 {
        return delta.min(i64::MAX as u64) as i64;
    }
    (u128::from(delta) * u128::from(NICE_0) / u128::from(w)).min(i64::MAX as u128) as i64
}

/// A member's place in the queue, (deadline, join order), packed in one integer that orders as the
/// pair (the deadline's sign bit flipped), so that comparing two is one comparison without branches.
fn key(deadline: i64, seq: u64) -> u128 {
    let d = (deadline as u64) ^ (1 << 63);
    (u128::from(d) << 64) | u128::from(seq)
}

/// `⌊S/W⌋` for `W > 0`: a weighted average of `i64` values, so within `i64`; in `i64` arithmetic when
/// the sums fit (they do until `Σ w·v` passes 9.2·10¹⁸), as `i128` division is a library call.
fn floor_avg((s, w): (i128, i128)) -> i64 {
    match (i64::try_from(s), i64::try_from(w)) {
        (Ok(s), Ok(w)) => s.div_euclid(w),
        _ => s.div_euclid(w) as i64,
    }
}

/// Real time for a task of weight `w` to advance `vd` in virtual time (rounded up).
fn real_of(vd: i64, w: u64) -> Nanos {
    if vd <= 0 {
        return 0;
    }
    (u128::from(vd as u64) * u128::from(w)).div_ceil(u128::from(NICE_0)).min(u128::from(Nanos::MAX)) as Nanos
}

impl Eevdf {
    /// An EEVDF scheduler: one queue, for the CPUs its view has (one per-CPU copy under [`crate::percpu`]).
    pub fn new(cfg: EevdfConfig) -> Self {
        Eevdf {
            cfg,
            ents: Vec::new(),
            queue: MinTree::new(),
            #[cfg(test)]
            linear: None,
            sum_wv: 0,
            sum_w: 0,
            vbase: 0,
            seq: 0,
            top: None,
            delayed: 0,
        }
    }

    /// The weight and idleness a task's parameters give it: Linux's rule, which hourglass runs the
    /// task by: `SCHED_IDLE` for share 0 or below the highest priority ([`share_level`]), else its
    /// `nice` if given, else the level of its share.
    fn weight_of(&self, p: &TaskParams) -> (u64, bool) {
        linux::fair_weight(p, self.cfg.nice0_share, self.top)
    }

    fn vslice(&self, w: u64) -> i64 {
        vdelta(self.cfg.base_slice, w)
    }

    /// The virtual runtime at the view's time of task `t`, running on `cpu` (its progress is the
    /// time since its dispatch).
    fn v_now(&self, t: TaskId, cpu: CpuId, v: &View) -> i64 {
        let e = &self.ents[t.idx()];
        e.v.saturating_add(vdelta(v.now().saturating_sub(v.dispatched_at(cpu)), e.w))
    }

    /// `Σ w·v` and `Σ w` over the members and the running tasks.
    fn totals(&self, v: &View) -> (i128, i128) {
        let (mut s, mut w) = (self.sum_wv, self.sum_w);
        for (cpu, t) in v.running_tasks() {
            let e = &self.ents[t.idx()];
            s += i128::from(e.w) * i128::from(self.v_now(t, cpu, v));
            w += i128::from(e.w);
        }
        (s, w)
    }

    /// `V` from totals: the weighted average, rounded down.
    fn avg(&self, tot: (i128, i128)) -> i64 {
        if tot.1 == 0 {
            self.vbase
        } else {
            floor_avg(tot)
        }
    }

    fn eligible((s, w): (i128, i128), v: i64) -> bool {
        w == 0 || s >= i128::from(v) * w
    }

    /// The largest virtual runtime eligible under `tot`: `v` is eligible exactly when `v ≤` this
    /// (`v·W ≤ S` ⇔ `v ≤ ⌊S/W⌋` for `W > 0`), so a search compares plain integers.
    fn limit(tot: (i128, i128)) -> i64 {
        if tot.1 == 0 {
            i64::MAX
        } else {
            floor_avg(tot)
        }
    }

    /// `entity_lag`: `V − v`, clamped to the bound of a task of weight `w`.
    fn lag(&self, avg: i64, v: i64, w: u64) -> i64 {
        let limit = vdelta((2 * self.cfg.base_slice).max(self.cfg.tick), w);
        avg.saturating_sub(v).clamp(-limit, limit)
    }

    fn insert(&mut self, t: TaskId) {
        self.seq += 1;
        let e = &mut self.ents[t.idx()];
        e.seq = self.seq;
        self.queue.insert(t.idx(), key(e.deadline, e.seq), e.v);
        #[cfg(test)]
        if let Some(q) = &mut self.linear {
            q.insert((e.deadline, e.seq, t));
        }
        self.sum_wv += i128::from(e.w) * i128::from(e.v);
        self.sum_w += i128::from(e.w);
    }

    fn remove(&mut self, t: TaskId) {
        let e = &self.ents[t.idx()];
        #[cfg(test)]
        if let Some(q) = &mut self.linear {
            q.remove(&(e.deadline, e.seq, t));
        }
        debug_assert!(
            self.queue.get(t.idx()).is_none_or(|k| k == (key(e.deadline, e.seq), e.v)),
            "task {t} changed its deadline or virtual runtime while queued"
        );
        if self.queue.remove(t.idx()) {
            self.sum_wv -= i128::from(e.w) * i128::from(e.v);
            self.sum_w -= i128::from(e.w);
        }
    }

    /// `place_entity` for a task not in the queue: its virtual runtime and deadline as it joins.
    fn place(&mut self, t: TaskId, v: &View, initial: bool) {
        let tot = self.totals(v);
        let avg = self.avg(tot);
        self.vbase = avg;
        let members = self.queue.len() + v.running_tasks().count();
        let e = &self.ents[t.idx()];
        let mut lag = 0i64;
        if self.cfg.place_lag && members > 0 && tot.1 > 0 {
            let grown = tot.1 + i128::from(e.w);
            // In `i64` when it fits (both divisions truncate toward zero).
            let scaled = i64::try_from(grown).ok().and_then(|g| e.vlag.checked_mul(g));
            lag = match (scaled, i64::try_from(tot.1)) {
                (Some(p), Ok(w)) => p / w,
                _ => (i128::from(e.vlag) * grown / tot.1).clamp(i128::from(i64::MIN), i128::from(i64::MAX))
                    as i64,
            };
        }
        let mut vslice = self.vslice(e.w);
        if initial {
            vslice /= 2;
        }
        let v = avg.saturating_sub(lag);
        let e = &mut self.ents[t.idx()];
        e.v = v;
        e.deadline = v.saturating_add(vslice);
    }

    /// Give a task a new weight (`reweight_entity`). A running task takes it when it stops.
    fn reweight(&mut self, t: TaskId, to: (u64, bool), view: &View) {
        let e = &self.ents[t.idx()];
        if (e.w, e.idle) == to || !e.live {
            return;
        }
        let old = e.w;
        let scale = |x: i64| {
            (i128::from(x) * i128::from(old) / i128::from(to.0))
                .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
        };
        match e.state {
            State::Running => self.ents[t.idx()].pending = Some(to),
            State::Asleep => {
                let e = &mut self.ents[t.idx()];
                e.vlag = scale(e.vlag);
                (e.w, e.idle) = to;
            }
            State::Queued | State::Delayed if self.cfg.version >= Version::V6_14 => {
                // 6.14: its lag (clamped) and the rest of its request are scaled, and it is placed
                // again as a task joining with that lag; the request keeps its length from `v`.
                let avg = self.avg(self.totals(view));
                let (v, d) = (e.v, e.deadline);
                let (lag, rest) = (scale(self.lag(avg, v, old)), scale(d.saturating_sub(v)));
                self.remove(t);
                let e = &mut self.ents[t.idx()];
                e.vlag = lag;
                (e.w, e.idle) = to;
                self.place(t, view, false);
                let e = &mut self.ents[t.idx()];
                e.deadline = e.v.saturating_add(rest);
                self.insert(t);
            }
            State::Queued | State::Delayed => {
                let avg = self.avg(self.totals(view));
                self.remove(t);
                let (v, d) = (self.ents[t.idx()].v, self.ents[t.idx()].deadline);
                let new_v = if avg != v { avg.saturating_sub(scale(self.lag(avg, v, old))) } else { v };
                let e = &mut self.ents[t.idx()];
                e.v = new_v;
                e.deadline = avg.saturating_add(scale(d.saturating_sub(avg)));
                (e.w, e.idle) = to;
                self.insert(t);
            }
        }
    }

    /// A task of a higher priority than any before makes every task below it `SCHED_IDLE`; task
    /// `t` is taken with parameters `p` (those it is being given).
    fn raise_top(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        self.lift(p.priority, Some((t, p)), v);
    }

    /// The highest priority is now `top`: every task reweighted, `given` with the parameters it is
    /// being given, the others with the view's.
    fn lift(&mut self, top: i32, given: Option<(TaskId, &TaskParams)>, v: &View) {
        if self.top.is_some_and(|old| old >= top) {
            return;
        }
        self.top = Some(top);
        for i in 0..self.ents.len() {
            if self.ents[i].live {
                let x = TaskId(i as u32);
                let p = given.filter(|g| g.0 == x).map_or_else(|| v.params(x), |g| g.1);
                let to = self.weight_of(p);
                self.reweight(x, to, v);
            }
        }
    }

    /// The member allowed on `cpu` with the earliest deadline among those eligible under `tot`
    /// (`pick_eevdf`): the tree's descent to the first member in deadline order whose subtree holds
    /// a virtual runtime eligible under `tot`. If affinity keeps that one off `cpu`, the members are
    /// walked in deadline order instead.
    fn eligible_for(&self, cpu: CpuId, tot: (i128, i128), v: &View) -> Option<TaskId> {
        #[cfg(test)]
        if let Some(q) = &self.linear {
            // The walk keeps eligibility's definition, for the tests to check `limit` against.
            let ok = |t: TaskId| v.allows(t, cpu) && Self::eligible(tot, self.ents[t.idx()].v);
            return q.iter().map(|&(_, _, t)| t).find(|&t| ok(t));
        }
        let lim = Self::limit(tot);
        let ok = |t: TaskId| v.allows(t, cpu) && self.ents[t.idx()].v <= lim;
        let t = TaskId(self.queue.first_where(|vr| vr <= lim)? as u32);
        if v.allows(t, cpu) {
            return Some(t);
        }
        self.queue.iter().map(|i| TaskId(i as u32)).find(|&t| ok(t))
    }

    /// The member allowed on `cpu` with the earliest deadline, eligible or not.
    fn first_for(&self, cpu: CpuId, v: &View) -> Option<TaskId> {
        #[cfg(test)]
        if let Some(q) = &self.linear {
            return q.iter().map(|&(_, _, t)| t).find(|&t| v.allows(t, cpu));
        }
        let t = TaskId(self.queue.first()? as u32);
        if v.allows(t, cpu) {
            return Some(t);
        }
        self.queue.iter().map(|i| TaskId(i as u32)).find(|&t| v.allows(t, cpu))
    }

    /// The slice for a task picked at `now`: until its request ends, on the tick grid without
    /// `hrtick`; from 6.17, until its protection ends if that comes first (the tick that finds it
    /// unprotected reschedules it). Marks the task `cut` when its protection ends it.
    fn slice_for(&mut self, t: TaskId, now: Nanos) -> Nanos {
        let e = &self.ents[t.idx()];
        let request = self.until(now, real_of(e.deadline.saturating_sub(e.v), e.w).max(1));
        let quantum = match e.vprot {
            Some(p) if p < e.deadline => self.until(now, real_of(p.saturating_sub(e.v), e.w).max(1)),
            _ => request,
        };
        self.ents[t.idx()].cut = quantum < request;
        quantum.min(request)
    }

    /// How long a task picked at `now` runs to reach `real` more of its time: exactly with
    /// `hrtick`, else to the first tick at or after it.
    fn until(&self, now: Nanos, real: Nanos) -> Nanos {
        if self.cfg.hrtick {
            return real;
        }
        let end = now.saturating_add(real);
        let tick = self.cfg.tick;
        end.div_ceil(tick).saturating_mul(tick).saturating_sub(now).max(1)
    }

    /// `set_protect_slice` for task `t` as it is picked: 6.12 protects it until its request ends
    /// with `RUN_TO_PARITY`, not at all without; 6.17 until its request ends or, without
    /// `RUN_TO_PARITY`, for a quantum of `min(0.7 ms, base_slice)` if that is shorter (the
    /// shortest slice of the queue, the other bound, is every task's here).
    fn protect(&mut self, t: TaskId) {
        let (parity, base) = (self.cfg.run_to_parity, self.cfg.base_slice);
        let e = &mut self.ents[t.idx()];
        e.vprot = match self.cfg.version {
            Version::V6_12 | Version::V6_14 => parity.then_some(e.deadline),
            Version::V6_17 => {
                let quantum = if parity { base } else { BASE_SLICE.min(base) };
                if quantum == base {
                    Some(e.deadline)
                } else {
                    Some(e.deadline.min(e.v.saturating_add(vdelta(quantum, e.w))))
                }
            }
        };
    }
}

impl Policy for Eevdf {
    fn admit(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        slot(&mut self.ents, t);
        self.raise_top(t, p, v);
        let (w, idle) = self.weight_of(p);
        self.ents[t.idx()] = Ent { live: true, w, idle, fresh: true, ..Ent::default() };
    }

    fn exit(&mut self, t: TaskId, _v: &View) {
        self.remove(t);
        let e = &mut self.ents[t.idx()];
        e.live = false;
        e.state = State::Asleep;
    }

    fn wake(&mut self, t: TaskId, v: &View) {
        match self.ents[t.idx()].state {
            State::Delayed => {
                // requeue_delayed_entity with DELAY_ZERO: placed again with lag 0 once eligible.
                let avg = self.avg(self.totals(v));
                let e = &self.ents[t.idx()];
                if self.lag(avg, e.v, e.w) > 0 {
                    self.remove(t);
                    self.ents[t.idx()].vlag = 0;
                    self.place(t, v, false);
                    self.insert(t);
                }
                self.ents[t.idx()].state = State::Queued;
            }
            State::Asleep => {
                let fresh = std::mem::take(&mut self.ents[t.idx()].fresh);
                if fresh {
                    self.ents[t.idx()].vlag = 0;
                }
                self.place(t, v, fresh);
                self.ents[t.idx()].state = State::Queued;
                self.insert(t);
            }
            State::Queued | State::Running => {}
        }
    }

    fn stop(&mut self, t: TaskId, _cpu: CpuId, charged: Nanos, why: Stop, view: &View) {
        let vs = self.vslice(self.ents[t.idx()].w);
        let e = &mut self.ents[t.idx()];
        e.v = e.v.saturating_add(vdelta(charged, e.w));
        if why == Stop::SliceEnd && e.v < e.deadline && !e.cut {
            // The slice ran to its end: its request is used up, whatever tick billing charged
            // (unless the slice was its protection, which ends before the request).
            e.v = e.deadline;
        }
        (e.vprot, e.cut) = (None, false);
        if e.v >= e.deadline {
            e.deadline = e.v.saturating_add(vs); // update_deadline
        }
        let (w, v) = (e.w, e.v);
        // The task still counts in V as it stops (it is the kernel's `curr`).
        let (s, tw) = self.totals(view);
        let tot = (s + i128::from(w) * i128::from(v), tw + i128::from(w));
        match why {
            Stop::Blocked => {
                if self.cfg.delay_dequeue && !Self::eligible(tot, v) {
                    self.ents[t.idx()].state = State::Delayed;
                    self.delayed += 1;
                    self.insert(t);
                } else {
                    let avg = self.avg(tot);
                    self.vbase = avg;
                    let lag = self.lag(avg, v, w);
                    let e = &mut self.ents[t.idx()];
                    e.vlag = lag;
                    e.state = State::Asleep;
                }
            }
            Stop::Yielded | Stop::Preempted | Stop::SliceEnd => {
                let e = &mut self.ents[t.idx()];
                if why == Stop::Yielded && Self::eligible(tot, v) {
                    e.v = e.deadline;
                    e.deadline = e.v.saturating_add(vs);
                }
                e.state = State::Queued;
                self.insert(t);
            }
        }
        if let Some(to) = self.ents[t.idx()].pending.take() {
            self.reweight(t, to, view);
        }
    }

    fn preempt_for(&self, woken: TaskId, prev: Option<CpuId>, running: &Running, v: &View) -> Option<CpuId> {
        let we = &self.ents[woken.idx()];
        let tot = self.totals(v);
        let order = running
            .iter()
            .filter(|(c, _)| Some(*c) == prev)
            .chain(running.iter().filter(|(c, _)| Some(*c) != prev));
        for &(cpu, cur) in order {
            let ce = &self.ents[cur.idx()];
            if ce.idle && !we.idle {
                return Some(cpu);
            }
            if ce.idle != we.idle || we.idle {
                continue;
            }
            let vt = self.v_now(cur, cpu, v);
            if vt >= ce.deadline {
                return Some(cpu); // update_curr at the wake-up renews its request and reschedules
            }
            let curr_eligible = Self::eligible(tot, vt);
            // RUN_TO_PARITY: a running task's request is renewed only when it stops, so it is
            // protected for as long as it runs (its protection is its deadline); from 6.17 also
            // without it, for its quantum.
            if curr_eligible && ce.vprot.is_some_and(|p| vt < p) {
                continue;
            }
            // Kept if it is eligible with the earlier deadline, or if the woken task is not the
            // eligible one with the earliest deadline (the cheap tests first: the search only
            // finds an eligible task).
            if curr_eligible && ce.deadline < we.deadline {
                continue;
            }
            if !Self::eligible(tot, we.v) || self.eligible_for(cpu, tot, v) != Some(woken) {
                continue;
            }
            return Some(cpu);
        }
        None
    }

    fn pick_next(&mut self, cpu: CpuId, v: &View) -> Option<Dispatch> {
        let now = v.now();
        let mut tot = self.totals(v);
        loop {
            let t = match self.eligible_for(cpu, tot, v) {
                Some(t) => t,
                None => self.first_for(cpu, v)?,
            };
            if self.ents[t.idx()].state == State::Delayed {
                // Picked while delayed: it leaves now, with lag 0 (DELAY_ZERO) or what it still owes.
                let avg = self.avg(tot);
                self.vbase = avg;
                let e = &self.ents[t.idx()];
                let lag = self.lag(avg, e.v, e.w).min(0);
                // The totals without it, as `totals` would give them again.
                tot = (tot.0 - i128::from(e.w) * i128::from(e.v), tot.1 - i128::from(e.w));
                self.remove(t);
                debug_assert_eq!(tot, self.totals(v));
                let e = &mut self.ents[t.idx()];
                e.vlag = lag;
                e.state = State::Asleep;
                continue;
            }
            self.remove(t);
            self.ents[t.idx()].state = State::Running;
            self.protect(t);
            return Some(Dispatch { task: t, slice: Some(self.slice_for(t, now)) });
        }
    }

    fn set_params(&mut self, t: TaskId, p: &TaskParams, v: &View) {
        self.raise_top(t, p, v);
        let to = self.weight_of(p);
        self.reweight(t, to, v);
    }

    fn availability(&self, t: TaskId, v: &View) -> Availability {
        // Entitled: its weight's part of the runnable weight, on at most one CPU.
        let me = &self.ents[t.idx()];
        let runnable: u64 = self
            .ents
            .iter()
            .enumerate()
            .filter(|(i, e)| e.live && (matches!(e.state, State::Queued | State::Running) || *i == t.idx()))
            .map(|(_, e)| e.w)
            .sum();
        let alloc = (v.cpus() as f64 * me.w as f64 / runnable.max(1) as f64).min(1.0);
        Availability { consumption_rate: 100.0 * v.usage(t), allocation_rate: 100.0 * alloc }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("delayed_dequeues", self.delayed)]
    }
}

impl RunQueue for Eevdf {
    /// `dequeue_entity` of a migrating task: a queued one leaves with its lag (`update_entity_lag`) and
    /// the rest of its request (`PLACE_REL_DEADLINE`); an asleep one with the lag it saved; a delayed
    /// one (moved by a new affinity) leaves as if picked while delayed.
    fn detach(&mut self, t: TaskId, v: &View) -> Carry {
        let e = &self.ents[t.idx()];
        let carry = match e.state {
            State::Queued | State::Delayed => {
                let avg = self.avg(self.totals(v));
                self.vbase = avg;
                let lag = self.lag(avg, e.v, e.w);
                let queued = e.state == State::Queued;
                let rest = e.deadline.saturating_sub(e.v);
                self.remove(t);
                if queued {
                    Carry { fresh: false, rel: lag, rest: Some(rest) }
                } else {
                    Carry { fresh: false, rel: lag.min(0), rest: None }
                }
            }
            State::Asleep => Carry { fresh: e.fresh, rel: e.vlag, rest: None },
            State::Running => crate::broken(format_args!("task {t} detached while it runs")),
        };
        let e = &mut self.ents[t.idx()];
        e.live = false;
        e.state = State::Asleep;
        carry
    }

    /// `enqueue_entity` of a migrated task: placed with its lag (`place_entity`), its request's rest
    /// kept; an asleep one keeps its lag for its wake-up.
    fn attach(&mut self, t: TaskId, p: &TaskParams, c: Carry, v: &View) {
        slot(&mut self.ents, t);
        self.raise_top(t, p, v);
        let (w, idle) = self.weight_of(p);
        self.ents[t.idx()] = Ent { live: true, w, idle, fresh: c.fresh, vlag: c.rel, ..Ent::default() };
        if v.state(t) == crate::State::Runnable {
            self.place(t, v, c.fresh);
            let e = &mut self.ents[t.idx()];
            if let Some(rest) = c.rest {
                e.deadline = e.v.saturating_add(rest);
            }
            e.fresh = false;
            e.state = State::Queued;
            self.insert(t);
        }
    }

    fn load(&self, t: TaskId) -> (u64, bool) {
        let e = &self.ents[t.idx()];
        (e.w, e.idle)
    }

    fn holds(&self, t: TaskId) -> bool {
        self.ents.get(t.idx()).is_some_and(|e| e.state == State::Delayed)
    }

    fn raise_top(&mut self, top: i32, v: &View) {
        self.lift(top, None, v);
    }
}

/// The options of `eevdf`, for the registry.
const OPTIONS: &[OptionDoc] = &[
    opt("base_slice", "0.7ms × (1 + log2 min(CPUs, 8))", "each task's request (sysctl_sched_base_slice)"),
    opt("tick", "1ms", "the clock tick (TICK_NSEC): the lag bound; without hrtick, slices end on it"),
    opt("hrtick", "false", "end slices exactly (HRTICK) instead of at the next tick"),
    opt("run_to_parity", "true", "RUN_TO_PARITY"),
    opt("place_lag", "true", "PLACE_LAG: keep the lag across sleeps"),
    opt("delay_dequeue", "true", "DELAY_DEQUEUE (with DELAY_ZERO)"),
    opt("nice0_share", "1", "the share of a nice-0 task"),
    opt("version", "\"6.12\"", "the kernel release whose rules apply: 6.12, 6.14, 6.17 or 6.18"),
    opt(
        "runqueues",
        "\"per-cpu\"",
        "a run queue per CPU with load balancing (per-cpu), or one for all (global)",
    ),
    opt("migration_cost", "0.5ms", "sysctl_sched_migration_cost: a task that ran this recently is cache hot"),
    opt("seed", "1", "seeds the coin that settles races between CPUs' balancing and switching at one tick"),
];

/// The registry's entry of `eevdf`.
pub const ENTRY: Entry =
    Entry::new("eevdf", "eevdf.rs", |o, cpus| {
        let cfg = EevdfConfig::from_options(o, cpus)?;
        percpu::build(o, cpus, cfg.tick, |_| Eevdf::new(cfg.clone()))
    })
        .about("Linux's fair class, 6.12 to 6.18 (`version`): earliest eligible virtual deadline first, nice from the share")
        .options(OPTIONS)
        .kernel_weights(&[("nice0_share", 100)])
        .classes(&["fair", "other"])
        .fair(FairMeaning::Nice { nice0_option: "nice0_share" })
        .pace(|o, cpus| {
            let c = EevdfConfig::from_options(o, cpus)?;
            // Without HRTICK a request ends at the next tick: slices are at least a tick apart.
            let base = Slice::of(o, "base_slice", c.base_slice);
            let slice = if c.hrtick || c.base_slice >= c.tick { base } else { Slice::of(o, "tick", c.tick) };
            Ok(Pace { slice: Some(slice), timer: None, walks: Walks::Nothing })
        });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{test_core, Core};

    fn eevdf(shares: &[u32], cfg: EevdfConfig) -> Core<Eevdf> {
        let mut p = test_core(Eevdf::new(cfg), 1);
        for (i, &share) in shares.iter().enumerate() {
            p.admit(TaskId(i as u32), &TaskParams { share, ..Default::default() }, 0);
        }
        p
    }

    fn hr() -> EevdfConfig {
        EevdfConfig { hrtick: true, ..EevdfConfig::linux(1) }
    }

    /// Runs what `cpu` picks until its slice ends; returns the task and its slice.
    fn run_slice(p: &mut Core<Eevdf>, now: &mut Nanos) -> (TaskId, Nanos) {
        let d = p.pick(0, *now).unwrap();
        let s = d.slice.unwrap();
        *now += s;
        p.stop(d.task, s, Stop::SliceEnd, *now);
        (d.task, s)
    }

    /// One policy of the registry's entry built from `opts` on `cpus` CPUs, each queue searching the
    /// tree, or (`linear`) walking its members in deadline order as the policy did before the tree.
    fn built(opts: &crate::Options, cpus: usize, linear: bool) -> Core {
        let mut o = OptReader::new("eevdf", opts);
        let cfg = EevdfConfig::from_options(&mut o, cpus).expect("the options build");
        let policy = percpu::build(&mut o, cpus, cfg.tick, |_| {
            let mut e = Eevdf::new(cfg.clone());
            e.linear = linear.then(std::collections::BTreeSet::new);
            e
        })
        .expect("the options build");
        Core::new("eevdf", policy, cpus, false)
    }

    /// Random options of the policy: slice, tick, features, version, run queues.
    fn options() -> impl proptest::strategy::Strategy<Value = crate::Options> {
        use crate::OptValue::{Bool, Str, Time};
        use proptest::prelude::*;
        (
            (1u64..=40).prop_map(|n| n * 100_000),
            prop_oneof![Just(MS), Just(4 * MS), Just(10 * MS)],
            any::<[bool; 5]>(),
            prop::sample::select(VERSIONS),
        )
            .prop_map(|(slice, tick, [hrtick, parity, lag, delay, global], version)| {
                let mut o = crate::Options::new();
                o.insert("base_slice".into(), Time(slice));
                o.insert("tick".into(), Time(tick));
                o.insert("hrtick".into(), Bool(hrtick));
                o.insert("run_to_parity".into(), Bool(parity));
                o.insert("place_lag".into(), Bool(lag));
                o.insert("delay_dequeue".into(), Bool(delay));
                o.insert("version".into(), Str(version.into()));
                o.insert("runqueues".into(), Str(if global { "global" } else { "per-cpu" }.into()));
                o
            })
    }

    proptest::proptest! {
        /// The packed key orders as the pair (deadline, join order), negative deadlines included.
        #[test]
        fn the_key_orders_as_the_pair(
            a in (proptest::prelude::any::<i64>(), proptest::prelude::any::<u64>()),
            b in (proptest::prelude::any::<i64>(), proptest::prelude::any::<u64>()),
            near in -2i64..=2,
        ) {
            let c = (a.0.saturating_add(near), b.1);
            for (x, y) in [(a, b), (a, c), (c, a)] {
                proptest::prop_assert_eq!(key(x.0, x.1).cmp(&key(y.0, y.1)), x.cmp(&y), "{:?} {:?}", x, y);
            }
        }

        /// `v ≤ limit` is eligibility (`v·W ≤ S`) for any members: weights of nice −20 to 19 and of
        /// `SCHED_IDLE`, virtual runtimes anywhere in `i64` (sums past `i64` take the `i128` path) or
        /// near 0 of either sign (the `i64` path, where rounding down is not truncation).
        #[test]
        fn the_limit_is_eligibility(
            members in proptest::collection::vec((0usize..41, proptest::prop_oneof![
                proptest::prelude::any::<i64>(),
                -1_000_000_000i64..1_000_000_000,
            ]), 0..6),
            near in proptest::collection::vec(-3i64..=3, 0..6),
            v in proptest::prelude::any::<i64>(),
        ) {
            let w = |i: usize| WEIGHTS.get(i).copied().unwrap_or(IDLE_WEIGHT);
            let tot = members.iter().fold((0i128, 0i128), |(s, tw), &(i, v)| {
                (s + i128::from(w(i)) * i128::from(v), tw + i128::from(w(i)))
            });
            // Random runtimes, and those next to the average where rounding decides.
            let avg = if tot.1 == 0 { 0 } else { floor_avg(tot) };
            for v in near.iter().map(|d| avg.saturating_add(*d)).chain([v, avg]) {
                let (by_limit, by_product) = (v <= Eevdf::limit(tot), Eevdf::eligible(tot, v));
                proptest::prop_assert_eq!(by_limit, by_product, "v {} at {:?}", v, tot);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// The tree's search decides as the walk in deadline order it replaced: random worlds (tasks
        /// joining, sleeping, waking, yielding, exiting, given new shares, priorities and nice
        /// levels, some with affinities; ticks; 1 to 4 CPUs, one queue or one per CPU; random
        /// slices and features) run through both in lockstep, and every CPU that decides picks the
        /// same task for the same slice.
        #[test]
        fn the_tree_picks_as_the_walk_in_deadline_order(
            seed in proptest::prelude::any::<u64>(),
            cpus in 1usize..=4,
            max_tasks in 2usize..=48,
            opts in options(),
        ) {
            use crate::testing::{Happening, Rng, Shape, World};
            let mut tree = built(&opts, cpus, false);
            let mut walk = built(&opts, cpus, true);
            let mut world = World::new(seed, Shape { cpus, max_tasks, bound: false, constraints: false });
            let mut nice = Rng::new(seed ^ 0x5eed);
            let (mut dispatches, mut longest) = (0, 0);
            for step in 0..3_000 {
                let mut h = world.step();
                let now = world.now();
                if let Happening::Admit(_, p) | Happening::Params(_, p) = &mut h {
                    // The world gives shares 0 to 4; half the tasks also get a nice level.
                    p.nice = nice.chance(50).then(|| nice.below(40) as i8 - 20);
                }
                h.apply(&mut tree, now);
                h.apply(&mut walk, now);
                let (_, n, most) = world
                    .decide_both(&mut tree, &mut walk, step)
                    .map_err(proptest::test_runner::TestCaseError::fail)?;
                dispatches += n;
                longest = longest.max(most);
            }
            proptest::prop_assert_eq!(tree.counters(), walk.counters());
            proptest::prop_assert!(dispatches > 300, "{} dispatches", dispatches);
            proptest::prop_assert!(max_tasks < 8 * cpus || longest > 3, "at most {} waiting", longest);
        }
    }

    #[test]
    fn a_migrating_task_keeps_its_lag_and_the_rest_of_its_request() {
        // Two tasks on one queue: task 0 runs 1 ms, so task 1 (queued) is owed lag. Moved to another
        // queue (where task 2 runs alone), task 1 leaves with V − v and d − v and joins at V' − lag·(W +
        // w)/W with the same rest of its request (PLACE_REL_DEADLINE).
        let mut a = eevdf(&[1, 1], hr());
        a.wake(TaskId(0), 0);
        a.wake(TaskId(1), 0);
        let d = a.pick(0, 0).unwrap();
        assert_eq!(d.task, TaskId(0));
        a.stop(TaskId(0), MS, Stop::Preempted, MS);
        let (v1, d1) = (a.policy().ents[1].v, a.policy().ents[1].deadline);
        let avg = a.policy().avg(a.policy().totals(a.view()));
        let carry = {
            let v = a.view().clone();
            a.policy_mut().detach(TaskId(1), &v)
        };
        assert_eq!(carry, Carry { fresh: false, rel: avg - v1, rest: Some(d1 - v1) });
        assert!(carry.rel > 0, "task 1 is owed time");
        let mut b = eevdf(&[1, 1, 1], hr());
        b.wake(TaskId(2), 0);
        b.pick(0, 0).unwrap();
        b.stop(TaskId(2), 3 * MS, Stop::Preempted, 3 * MS);
        b.pick(0, 3 * MS).unwrap();
        b.wake(TaskId(1), 3 * MS); // the view shows it runnable, as the balancer's attach has it
        {
            let v = b.view().clone();
            b.policy_mut().exit(TaskId(1), &v)
        };
        let vb = b.policy().avg(b.policy().totals(b.view()));
        {
            let v = b.view().clone();
            b.policy_mut().attach(TaskId(1), &TaskParams::default(), carry, &v)
        };
        let e = &b.policy().ents[1];
        // W = 1024 (task 2, running), w = 1024: the lag doubles as it joins.
        assert_eq!(e.v, vb - 2 * carry.rel);
        assert_eq!(e.deadline - e.v, d1 - v1);
        assert_eq!(e.state, State::Queued);
    }

    #[test]
    fn a_tasks_nice_gives_its_weight_over_its_share_but_not_over_idleness() {
        let e = Eevdf::new(
            EevdfConfig::from_options(&mut crate::OptReader::new("eevdf", &Default::default()), 1).unwrap(),
        );
        let p = |share, nice| TaskParams { share, nice, ..Default::default() };
        assert_eq!(e.weight_of(&p(1, Some(5))), (335, false));
        assert_eq!(e.weight_of(&p(3, Some(-5))), (3121, false));
        assert_eq!(e.weight_of(&p(3, None)), (3121, false), "share 3 is nice -5");
        assert_eq!(
            e.weight_of(&p(0, Some(-20))),
            (IDLE_WEIGHT, true),
            "share 0 is SCHED_IDLE whatever its nice"
        );
    }

    #[test]
    fn weights_and_slices_are_the_kernels() {
        assert_eq!(WEIGHTS[20], 1024);
        assert_eq!((WEIGHTS[0], WEIGHTS[39]), (88761, 15));
        assert_eq!(nice_of_share(1, 1), 0);
        assert_eq!(nice_of_share(3, 1), -5, "1.25^5 = 3.05");
        assert_eq!(nice_of_share(u32::MAX, 1), -20);
        // scx_smart's shares: the kernel's weight, 100 at nice 0 (nice -5: 3121·100/1024 = 304).
        assert_eq!((nice_of_share(100, 100), nice_of_share(304, 100), nice_of_share(1, 100)), (0, -5, 19));
        let slices: Vec<Nanos> = [1, 2, 3, 4, 8, 64].iter().map(|&n| default_base_slice(n)).collect();
        assert_eq!(slices, [700_000, 1_400_000, 1_400_000, 2_100_000, 2_800_000, 2_800_000]);
    }

    #[test]
    fn equal_tasks_alternate_a_request_each_and_weights_divide_the_cpu() {
        let mut p = eevdf(&[1, 1], hr());
        for t in [0, 1] {
            p.wake(TaskId(t), 0);
        }
        let mut now = 0;
        let mut got = [0u64; 2];
        let mut order = Vec::new();
        while now < 1_000 * MS {
            let (t, s) = run_slice(&mut p, &mut now);
            got[t.idx()] += s;
            order.push(t.0);
        }
        // Task 0 joined first with the same (half-slice) deadline: it goes first, then they alternate.
        assert_eq!(&order[..6], &[0, 1, 0, 1, 0, 1]);
        assert!(got[0].abs_diff(got[1]) <= BASE_SLICE, "{got:?}");

        // Share 3 is nice −5, weight 3121 against 1024: 3.05 : 1.
        let mut p = eevdf(&[3, 1], hr());
        for t in [0, 1] {
            p.wake(TaskId(t), 0);
        }
        let (mut now, mut got) = (0, [0u64; 2]);
        while now < 2_000 * MS {
            let (t, s) = run_slice(&mut p, &mut now);
            got[t.idx()] += s;
        }
        let ratio = got[0] as f64 / got[1] as f64;
        assert!((ratio - 3121.0 / 1024.0).abs() < 0.01, "{ratio} {got:?}");
    }

    #[test]
    fn equal_deadlines_go_in_the_order_tasks_joined() {
        let mut p = eevdf(&[1, 1, 1], hr());
        for t in [2, 0, 1] {
            p.wake(TaskId(t), 0);
        }
        // All joined at V = 0 with half a slice: equal deadlines, served in the order they woke.
        let mut now = 0;
        let order: Vec<u32> = (0..3).map(|_| run_slice(&mut p, &mut now).0 .0).collect();
        assert_eq!(order, [2, 0, 1]);
    }

    #[test]
    fn slices_end_on_the_tick_without_hrtick() {
        let mut p = eevdf(&[1, 1], EevdfConfig::linux(1));
        for t in [0, 1] {
            p.wake(TaskId(t), 0);
        }
        // The first request is half a slice (0.35 ms): it ends at the first tick, 1 ms.
        let d = p.pick(0, 0).unwrap();
        assert_eq!(d.slice, Some(MS));
        p.stop(d.task, MS, Stop::SliceEnd, MS);
        // Picked at 1.2 ms, a 0.7 ms request ends at 1.9 ms: the tick at 2 ms.
        let d = p.pick(0, 1_200_000).unwrap();
        assert_eq!(d.slice, Some(800_000));
    }

    #[test]
    fn a_sleeper_keeps_its_lag_inflated_by_the_weight_it_joins() {
        // a and b run their first (half) requests while c waits; c then runs 0.1 ms and sleeps.
        let mut p = eevdf(&[1, 1, 1], hr());
        let (a, b, c) = (TaskId(0), TaskId(1), TaskId(2));
        for t in [a, b, c] {
            p.wake(t, 0);
        }
        let mut now = 0;
        assert_eq!(run_slice(&mut p, &mut now).0, a);
        assert_eq!(run_slice(&mut p, &mut now).0, b);
        let d = p.pick(0, now).unwrap();
        assert_eq!(d.task, c);
        now += 100_000;
        p.stop(c, 100_000, Stop::Blocked, now);
        // v: a and b 0.35 ms, c 0.1 ms; V = 0.8/3 ms, so c leaves owed V − v = 0.1667 ms.
        let e = &p.policy().ents[c.idx()];
        assert_eq!(e.state, State::Asleep, "eligible: it leaves at once");
        assert_eq!(e.vlag, 800_000 / 3 - 100_000);
        let lag = e.vlag;
        // Rejoining a and b (W = 2048, V = 0.35 ms): v = V − lag·(2048 + 1024)/2048 ...
        p.wake(c, now);
        assert_eq!(p.policy().ents[c.idx()].v, 350_000 - lag * 3 / 2);
        // ... so that, once it counts in V, its lag is the one it left with.
        let back = p.policy().avg(p.policy().totals(p.view())) - p.policy().ents[c.idx()].v;
        assert!((back - lag).abs() <= 1, "{back} vs {lag}");
    }

    #[test]
    fn a_task_that_blocks_owing_time_stays_queued_until_it_is_picked() {
        let mut p = eevdf(&[1, 1], hr());
        let (a, b) = (TaskId(0), TaskId(1));
        p.wake(a, 0);
        p.wake(b, 0);
        // a runs a whole first request and a second, then blocks well ahead of V.
        let d = p.pick(0, 0).unwrap();
        assert_eq!(d.task, a);
        p.stop(a, 2 * MS, Stop::Blocked, 2 * MS);
        assert_eq!(p.policy().ents[a.idx()].state, State::Delayed, "not eligible: delayed");
        assert_eq!(p.counters()[1], ("delayed_dequeues", 1));
        // b runs; once V passes a, a CPU picking a drops it (lag 0) and runs b on.
        let mut now = 2 * MS;
        let d = p.pick(0, now).unwrap();
        assert_eq!(d.task, b);
        now += 4 * MS;
        p.stop(b, 4 * MS, Stop::Preempted, now);
        let d = p.pick(0, now).unwrap();
        assert_eq!(d.task, b, "a was picked, dropped with lag 0, and b taken");
        assert_eq!((p.policy().ents[a.idx()].state, p.policy().ents[a.idx()].vlag), (State::Asleep, 0));

        // Without DELAY_DEQUEUE it leaves at once, with its negative lag.
        let mut p = eevdf(&[1, 1], EevdfConfig { delay_dequeue: false, ..hr() });
        p.wake(a, 0);
        p.wake(b, 0);
        p.pick(0, 0).unwrap();
        p.stop(a, 2 * MS, Stop::Blocked, 2 * MS);
        assert_eq!(p.policy().ents[a.idx()].state, State::Asleep);
        assert!(p.policy().ents[a.idx()].vlag < 0);
        // Clamped to max(2·slice, tick) = 1.4 ms.
        assert!(p.policy().ents[a.idx()].vlag >= -1_400_000);
    }

    #[test]
    fn run_to_parity_keeps_the_running_task_until_its_request_is_used() {
        for parity in [true, false] {
            let mut p = eevdf(&[1, 1, 1], EevdfConfig { run_to_parity: parity, ..hr() });
            let (a, b, c) = (TaskId(0), TaskId(1), TaskId(2));
            p.wake(a, 0);
            p.wake(b, 0);
            let mut now = 0;
            for _ in 0..4 {
                run_slice(&mut p, &mut now);
            }
            // a starts a request at V, and c wakes at once with an earlier deadline (half a
            // request at V). a is eligible (v = V).
            let d = p.pick(0, now).unwrap();
            assert_eq!(d.task, a);
            p.wake(c, now);
            let victim = p.policy().preempt_for(c, Some(0), &[(0, a)], p.view());
            if parity {
                assert_eq!(victim, None, "a is eligible and protected");
            } else {
                assert_eq!(victim, Some(0), "c is now what the CPU would pick");
            }
            // Once a has used its request, any wake-up preempts it.
            p.advance_to(now + d.slice.unwrap());
            assert_eq!(p.policy().preempt_for(c, Some(0), &[(0, a)], p.view()), Some(0));
        }
    }

    #[test]
    fn idle_tasks_give_way_and_never_preempt() {
        // Share 0 is SCHED_IDLE; so is a task of a priority below another's.
        let mut p = test_core(Eevdf::new(hr()), 1);
        let (idle, low, hi) = (TaskId(0), TaskId(1), TaskId(2));
        p.admit(idle, &TaskParams { share: 0, ..Default::default() }, 0);
        p.admit(low, &TaskParams { priority: 0, ..Default::default() }, 0);
        assert_eq!(p.policy().ents[low.idx()].w, 1024);
        p.admit(hi, &TaskParams { priority: 5, ..Default::default() }, 0);
        assert_eq!((p.policy().ents[low.idx()].w, p.policy().ents[low.idx()].idle), (IDLE_WEIGHT, true));
        assert!(p.policy().ents[idle.idx()].idle && !p.policy().ents[hi.idx()].idle);
        p.wake(idle, 0);
        let d = p.pick(0, 0).unwrap();
        assert_eq!(d.task, idle);
        p.wake(hi, 0);
        assert_eq!(p.policy().preempt_for(hi, Some(0), &[(0, idle)], p.view()), Some(0));
        p.stop(idle, 1, Stop::Preempted, 1);
        assert_eq!(p.pick(0, 1).unwrap().task, hi);
        p.wake(low, 1);
        assert_eq!(p.policy().preempt_for(low, Some(0), &[(0, hi)], p.view()), None);
    }

    #[test]
    fn a_new_share_scales_lag_and_request_around_v() {
        let mut p = eevdf(&[1, 1], hr());
        let (a, b) = (TaskId(0), TaskId(1));
        p.wake(a, 0);
        p.wake(b, 0);
        let mut now = 0;
        run_slice(&mut p, &mut now); // a runs its half request
        let avg = p.policy().avg(p.policy().totals(p.view()));
        let (v, d) = (p.policy().ents[a.idx()].v, p.policy().ents[a.idx()].deadline);
        p.set_params(a, &TaskParams { share: 3, ..Default::default() }, now);
        let e = &p.policy().ents[a.idx()];
        assert_eq!(e.w, 3121);
        assert_eq!(e.v, avg - (avg - v) * 1024 / 3121);
        assert_eq!(e.deadline, avg + (d - avg) * 1024 / 3121);
    }

    #[test]
    fn from_6_14_a_new_weight_places_a_queued_task_again() {
        for version in [Version::V6_12, Version::V6_14] {
            let mut p = eevdf(&[1, 1], EevdfConfig { version, ..hr() });
            let (a, b) = (TaskId(0), TaskId(1));
            p.wake(a, 0);
            p.wake(b, 0);
            // a runs 10 ms in one go: v_a = 10 ms, d_a = 10.7 ms; b waits at v 0, d 0.35 ms (half a
            // request). V = 5 ms: b is owed 5 ms, clamped to max(2 · 0.7 ms, 1 ms) = 1.4 ms.
            assert_eq!(p.pick(0, 0).unwrap().task, a);
            p.stop(a, 10 * MS, Stop::Preempted, 10 * MS);
            p.set_params(b, &TaskParams { share: 3, ..Default::default() }, 10 * MS);
            let e = p.policy().ents[b.idx()].clone();
            let lag = 1_400_000 * 1024 / 3121; // 459_339, the clamped lag at the new weight
            let d = p.pick(0, 10 * MS).unwrap();
            assert_eq!(d.task, b, "b is eligible with the earlier deadline");
            if version == Version::V6_12 {
                // reweight_eevdf: v and d scaled around V = 5 ms, so d falls before v (the clamp
                // moved v and not d): the request is already used, a 1 ns slice.
                assert_eq!((e.v, e.deadline), (5_000_000 - lag, 5_000_000 - 4_650_000 * 1024 / 3121));
                assert_eq!((e.v, e.deadline), (4_540_661, 3_474_336));
                assert_eq!(d.slice, Some(1));
            } else {
                // place_entity beside a alone (V = 10 ms, W = 1024): v = V − lag · (1024 + 3121) /
                // 1024, and d = v + the rest of the request scaled, 0.35 ms · 1024 / 3121.
                let rest = 350_000 * 1024 / 3121; // 114_834
                assert_eq!(
                    (e.v, e.deadline),
                    (10_000_000 - lag * 4145 / 1024, 10_000_000 - lag * 4145 / 1024 + rest)
                );
                assert_eq!((e.v, e.deadline), (8_140_664, 8_255_498));
                // The rest of the request in real time at weight 3121: ⌈114_834 · 3121 / 1024⌉.
                assert_eq!(d.slice, Some(349_997));
            }
        }
    }

    #[test]
    fn from_6_17_no_run_to_parity_still_protects_a_quantum() {
        let (a, b, c) = (TaskId(0), TaskId(1), TaskId(2));
        for version in [Version::V6_12, Version::V6_17] {
            // A base slice of 1.4 ms (two CPUs' default) on one CPU: 6.17's quantum is 0.7 ms.
            let cfg = EevdfConfig { run_to_parity: false, base_slice: 1_400_000, version, ..hr() };
            let mut p = eevdf(&[1, 1, 1], cfg);
            p.wake(a, 0);
            p.wake(b, 0);
            let mut now = 0;
            // Half requests first (0.7 ms: no shorter quantum), a then b; both end at v 0.7 ms, d 2.1 ms.
            assert_eq!(run_slice(&mut p, &mut now), (a, 700_000));
            assert_eq!(run_slice(&mut p, &mut now), (b, 700_000));
            let d = p.pick(0, now).unwrap();
            assert_eq!(d.task, a);
            // c wakes at V = 0.7 ms with half a request: d 1.4 ms, earlier than a's 2.1 ms.
            p.wake(c, now);
            let victim = p.policy().preempt_for(c, Some(0), &[(0, a)], p.view());
            if version == Version::V6_12 {
                // No protection: a runs to its deadline unless preempted, and c preempts at once.
                assert_eq!(d.slice, Some(1_400_000));
                assert_eq!(victim, Some(0));
                continue;
            }
            // 6.17: vprot = min(d, v + 0.7 ms) = 1.4 ms: a is protected for 0.7 ms, and the CPU
            // decides again then.
            assert_eq!(p.policy().ents[a.idx()].vprot, Some(1_400_000));
            assert_eq!(d.slice, Some(700_000));
            assert_eq!(victim, None, "a is eligible and within its quantum");
            now += 700_000;
            p.advance_to(now);
            assert_eq!(p.policy().preempt_for(c, Some(0), &[(0, a)], p.view()), Some(0));
            // The quantum was not its request: a keeps its deadline, and c (earliest) runs next.
            p.stop(a, 700_000, Stop::SliceEnd, now);
            let e = &p.policy().ents[a.idx()];
            assert_eq!((e.v, e.deadline), (1_400_000, 2_100_000));
            assert_eq!(p.pick(0, now).unwrap().task, c);
        }
        // With RUN_TO_PARITY, 6.17 protects to the shortest slice of the queue, which is every
        // task's here: the whole request, as 6.12 does.
        let cfg = EevdfConfig { base_slice: 1_400_000, version: Version::V6_17, ..hr() };
        let mut p = eevdf(&[1, 1, 1], cfg);
        p.wake(a, 0);
        p.wake(b, 0);
        let mut now = 0;
        run_slice(&mut p, &mut now);
        run_slice(&mut p, &mut now);
        let d = p.pick(0, now).unwrap();
        assert_eq!((d.task, d.slice), (a, Some(1_400_000)));
        p.wake(c, now);
        assert_eq!(p.policy().preempt_for(c, Some(0), &[(0, a)], p.view()), None);
    }

    #[test]
    fn the_version_option_names_a_release() {
        let cfg = |v: &str| {
            let mut opts = crate::Options::new();
            opts.insert("version".into(), crate::OptValue::Str(v.into()));
            EevdfConfig::from_options(&mut OptReader::new("eevdf", &opts), 1).map(|c| c.version)
        };
        assert_eq!(EevdfConfig::linux(4).version, Version::V6_12);
        assert_eq!(cfg("6.12"), Ok(Version::V6_12));
        assert_eq!(cfg("6.14"), Ok(Version::V6_14));
        assert_eq!(cfg("6.17"), Ok(Version::V6_17));
        assert_eq!(cfg("6.18"), Ok(Version::V6_17), "6.18 decides as 6.17 here");
        assert!(cfg("6.13")
            .unwrap_err()
            .to_string()
            .contains("\"6.13\": expected \"6.12\", \"6.14\", \"6.17\" or \"6.18\""));
        assert!(VERSIONS.iter().all(|v| Version::of(v).is_some()));
    }

    #[test]
    fn options_are_checked() {
        let mut opts = crate::Options::new();
        opts.insert("base_slice".into(), crate::OptValue::Time(3 * MS));
        opts.insert("hrtick".into(), crate::OptValue::Bool(true));
        assert!(crate::build("eevdf", &opts, 2).is_ok());
        opts.insert("base_slice".into(), crate::OptValue::Time(10));
        assert!(crate::build("eevdf", &opts, 2).is_err());
        opts.remove("base_slice");
        opts.insert("quantum".into(), crate::OptValue::Time(MS));
        assert!(crate::build("eevdf", &opts, 2).is_err());
    }
}
