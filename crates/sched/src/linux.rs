//! What Linux's fair class must be told so that a task means there what it means to the simulated
//! policy: the nice level (or `SCHED_IDLE`) of each task of a scenario, or why its meaning cannot
//! be reproduced. `hourglass --scenario` maps a scenario's tasks with [`FairRule::levels`], and the
//! simulated `eevdf` takes its weights from the same [`share_level`], so the two cannot drift.
//!
//! A policy's entry says what its tasks' keys mean ([`crate::Entry::fair`], a [`FairMeaning`]); with
//! the scenario's options that is a [`FairRule`]:
//!
//! | meaning | policies | Linux |
//! |---|---|---|
//! | [`FairMeaning::Shares`] | `smart`, `wfq`, `wfq-credit`, `lottery` | the first group in the simulator's order (the tasks of the highest priority that have a share, or else its one task of share 0) at nice levels from their shares, the second group `SCHED_IDLE`; a third group is refused |
//! | [`FairMeaning::Nice`] | `eevdf` | nice = −log₁.₂₅(share / `nice0_share`), clamped to −20..19; share 0 and priorities below the highest `SCHED_IDLE`: the simulated policy's own weights |
//! | [`FairMeaning::SolarisUser`] | `ts` | the priority is a Solaris user priority: nice = −priority / 3 (`nice n` is user priority −3n) |
//!
//! **The simulator's order, and what Linux can say of it.** Under `Shares` the simulator runs a
//! priority only when no task of a higher one wants the CPU; within a priority, the tasks with a
//! share divide the CPU by share, and the tasks of share 0 run only when none of those wants it, first
//! come, first served (SMART §5.3; [`crate::fair`], [`crate::lottery`]). Linux's fair class says two
//! things: a weight (a nice level) and "only when nothing else wants the CPU" (`SCHED_IDLE`, one weight
//! for all such tasks). So the first group gets nice levels, the second `SCHED_IDLE`, and a scenario
//! whose simulator order needs more is refused, naming the task and its key: a third priority, unequal
//! shares in the second group (Linux would divide it equally), two tasks of share 0 at one priority
//! (Linux would divide the CPU between them, the simulator runs one at a time), shares further apart
//! than the kernel's weights go (1 : 5917, nice 19 to −20).
//!
//! **Where it is weak.** The kernel has 40 weights, 1.25× apart: under `Shares` a ratio of shares is
//! given to the nearest level, so each task's weight is within a factor 1.25^½ (and the table's own
//! rounding, under 1 %) of its share; `eevdf` is simulated with those same levels, so its ratios are
//! exact. `SCHED_IDLE` is not strict: each such task has weight 3 against at least 1024 for the first
//! group under `Shares` (0.3 % each). Under `ts` the nice level is Solaris's, not a share: Solaris's
//! time-sharing table and Linux's fair class divide the CPU their own ways, which is what comparing them
//! measures.

use std::collections::{BTreeSet, HashMap};

use crate::eevdf::{IDLE_WEIGHT, WEIGHTS};
use crate::registry::{Entry, OptReader};
use crate::{Nanos, Options, PolicyError};

/// What a task's `share` and `priority` mean to a policy, for Linux's fair class ([`Entry::fair`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FairMeaning {
    /// Proportional shares within a priority, priorities strictly ordered, share 0 behind every share,
    /// first come first served (SMART §5.3): only the ratio of shares matters.
    Shares,
    /// Shares are nice levels through the option `nice0_option` (the share of nice 0, default 1), and
    /// share 0 or a priority below the highest admitted so far is `SCHED_IDLE`: Linux's own rule, as
    /// the simulated `eevdf` has it.
    Nice {
        /// The option that holds the share of nice 0.
        nice0_option: &'static str,
    },
    /// The priority is a Solaris time-sharing user priority (−60..60, `nice n` = −3n); the share means
    /// nothing.
    SolarisUser,
}

impl FairMeaning {
    /// The option it reads, if any: one that gives a key its meaning on Linux, rather than only
    /// configuring the simulated policy.
    pub fn option(self) -> Option<&'static str> {
        match self {
            FairMeaning::Nice { nice0_option } => Some(nice0_option),
            FairMeaning::Shares | FairMeaning::SolarisUser => None,
        }
    }
}

/// A [`FairMeaning`] with the scenario's options read: what [`FairRule::levels`] maps by.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FairRule {
    /// [`FairMeaning::Shares`].
    Shares,
    /// [`FairMeaning::Nice`], with the share of nice 0.
    Nice {
        /// The share of a nice-0 task.
        nice0: u32,
    },
    /// [`FairMeaning::SolarisUser`].
    SolarisUser,
    /// Linux's own fair class, which nothing simulates (`hourglass`'s `cfs`): share 1 is nice 0, share
    /// 0 and priorities below the highest `SCHED_IDLE`. Nothing to reproduce, nothing refused.
    Kernel,
}

/// A task as the mapping sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FairTask {
    /// Its `priority`.
    pub priority: i32,
    /// Its `share`.
    pub share: u32,
    /// When it starts (is admitted): the simulated `eevdf` counts a priority from then on.
    pub start: Nanos,
}

/// How Linux's fair class runs one task.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FairLevel {
    /// `SCHED_OTHER` at this nice level (−20..=19).
    Nice(i8),
    /// `SCHED_IDLE`.
    Idle,
}

impl FairLevel {
    /// The kernel's weight of the level (`sched_prio_to_weight`, `WEIGHT_IDLEPRIO`).
    pub fn weight(self) -> u64 {
        match self {
            FairLevel::Nice(n) => WEIGHTS[(i32::from(n).clamp(-20, 19) + 20) as usize],
            FairLevel::Idle => IDLE_WEIGHT,
        }
    }
}

/// A task whose key means something Linux's fair class cannot be told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreproducible {
    /// The task's index.
    pub task: usize,
    /// The key: `share`, `priority` or `start`.
    pub key: &'static str,
    /// Why, in a sentence (other tasks named `task[j]`).
    pub message: String,
}

/// Reads the share of nice 0 from option `key` (default 1, 1 to 2^32 − 1): `eevdf`'s
/// `nice0_share`, read here for both the policy and [`FairRule::of`].
pub(crate) fn nice0(o: &mut OptReader<'_>, key: &'static str) -> Result<u32, PolicyError> {
    Ok(o.int(key, 1, 1, i64::from(u32::MAX))? as u32)
}

/// The nice level, not rounded, of a share `ratio` times that of nice 0: −log₁.₂₅(ratio), each
/// factor 1.25 (the kernel's weight step) one level.
pub fn nice_of_ratio(ratio: f64) -> f64 {
    -(ratio.ln() / 1.25f64.ln())
}

/// A task's weight in Linux's fair class and whether it is `SCHED_IDLE`, as the simulated `eevdf` and
/// `cfs` weigh it and hourglass runs it: `SCHED_IDLE` for share 0 or a priority below `top`, the highest
/// admitted ([`share_level`]), else its `nice` if given, else the level of its share (`nice0` = the share
/// of nice 0).
pub fn fair_weight(p: &crate::TaskParams, nice0: u32, top: Option<i32>) -> (u64, bool) {
    let below_top = top.is_some_and(|top| p.priority < top);
    match (share_level(p.share, nice0, below_top), p.nice) {
        (FairLevel::Idle, _) => (IDLE_WEIGHT, true),
        (_, Some(n)) => (WEIGHTS[(i32::from(n).clamp(-20, 19) + 20) as usize], false),
        (level, None) => (level.weight(), false),
    }
}

/// The level of a task of share `share` when share `nice0` is nice 0, `below_top` when a task of a
/// higher priority is there: `SCHED_IDLE` for share 0 or below the top, else the nearest nice level,
/// clamped to −20..=19. The simulated `eevdf`'s weights and hourglass's levels for it both come from
/// here.
pub fn share_level(share: u32, nice0: u32, below_top: bool) -> FairLevel {
    if share == 0 || below_top {
        return FairLevel::Idle;
    }
    let ratio = f64::from(share) / f64::from(nice0.max(1));
    FairLevel::Nice(nice_of_ratio(ratio).round().clamp(-20.0, 19.0) as i8)
}

impl FairRule {
    /// The rule of policy `entry` with options `opts` (checked as [`crate::build`] checks them).
    pub fn of(entry: &Entry, opts: &Options) -> Result<FairRule, PolicyError> {
        Ok(match entry.fair {
            FairMeaning::Shares => FairRule::Shares,
            FairMeaning::Nice { nice0_option } => {
                FairRule::Nice { nice0: nice0(&mut OptReader::new(entry.name, opts), nice0_option)? }
            }
            FairMeaning::SolarisUser => FairRule::SolarisUser,
        })
    }

    /// The level of each of `tasks` on Linux, or every task whose key means what Linux cannot be
    /// told (in task order).
    pub fn levels(self, tasks: &[FairTask]) -> Result<Vec<FairLevel>, Vec<Unreproducible>> {
        let top = tasks.iter().map(|t| t.priority).max().unwrap_or(0);
        match self {
            FairRule::Shares => shares(tasks),
            FairRule::Nice { nice0 } => {
                let refused = started_before_top(tasks, nice0, top);
                if !refused.is_empty() {
                    return Err(refused);
                }
                Ok(tasks.iter().map(|t| share_level(t.share, nice0, t.priority < top)).collect())
            }
            FairRule::Kernel => Ok(tasks.iter().map(|t| share_level(t.share, 1, t.priority < top)).collect()),
            FairRule::SolarisUser => solaris(tasks),
        }
    }

    /// What the rule does, for a mapping line (`top`: the scenario's highest priority).
    pub fn describe(self, top: i32) -> String {
        match self {
            FairRule::Shares => format!(
                "Linux's fair class: the tasks of priority {top} with a share (or else its one task of \
                 share 0) at nice = -log1.25(share), to the nearest level (shifted as a whole to reach no \
                 further than -20); the tasks the simulator runs only when those do not want the CPU as \
                 SCHED_IDLE"
            ),
            FairRule::Nice { nice0 } => format!(
                "Linux's fair class, as the simulated eevdf: nice = -log1.25(share / {nice0}) \
                 (nice0_share), clamped to -20..19; share 0 and priorities below {top} run as SCHED_IDLE"
            ),
            FairRule::SolarisUser => "Linux's fair class: nice = -priority / 3 (Solaris's nice of the ts \
                                      user priority); ts does not use the share"
                .to_string(),
            // hourglass's mapping of every fair policy before it followed their meanings, word for word.
            FairRule::Kernel => format!(
                "Linux's fair class: nice = -log1.25(share); share 0 and priorities below {top} run as \
                 SCHED_IDLE"
            ),
        }
    }
}

/// [`FairRule::Nice`]: the simulated `eevdf` makes a task `SCHED_IDLE` once a task of a higher
/// priority has been admitted, where Linux's is `SCHED_IDLE` from its start. So until the first task
/// of the highest priority starts, a task of a lower one with a share has its share's weight in the
/// simulator; that changes the split of the CPU when the tasks there by then do not have, in the
/// simulator, weights in the same ratio as on Linux. Those tasks are refused, naming `start`.
/// O(n log n): a task stops counting as its share at most once.
fn started_before_top(tasks: &[FairTask], nice0: u32, top: i32) -> Vec<Unreproducible> {
    let linux = |i: usize| share_level(tasks[i].share, nice0, tasks[i].priority < top).weight();
    let own = |i: usize| share_level(tasks[i].share, nice0, false).weight();
    // The ratio of a task's simulated weight to Linux's, in lowest terms, and how many live tasks have it.
    let ratio = |a: u64, b: u64| {
        let g = gcd(a, b);
        (a / g, b / g)
    };
    let mut ratios: HashMap<(u64, u64), usize> = HashMap::new();
    let mut count = |r: (u64, u64), add: bool| {
        let n = ratios.entry(r).or_insert(0);
        if add {
            *n += 1;
        } else {
            *n -= 1;
            if *n == 0 {
                ratios.remove(&r);
            }
        }
        ratios.len()
    };
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_unstable_by_key(|&i| (tasks[i].start, i));
    let first = order.iter().copied().find(|&i| tasks[i].priority == top).unwrap_or(0);
    // Live tasks the simulator weighs by their share (by priority), and those of them not yet refused
    // whose weight is not Linux's (below the highest priority).
    let (mut weighed, mut unlike) = (BTreeSet::new(), BTreeSet::new());
    let mut refused = vec![false; tasks.len()];
    let mut top_by_then = i32::MIN;
    let mut kinds = 0;
    for group in order.chunk_by(|&a, &b| tasks[a].start == tasks[b].start) {
        top_by_then = group.iter().map(|&i| tasks[i].priority).fold(top_by_then, i32::max);
        // Tasks below the new highest priority become SCHED_IDLE in the simulator too.
        while let Some(&(p, i)) = weighed.first() {
            if p >= top_by_then {
                break;
            }
            weighed.remove(&(p, i));
            unlike.remove(&(p, i));
            count(ratio(own(i), linux(i)), false);
            kinds = count(ratio(IDLE_WEIGHT, linux(i)), true);
        }
        for &i in group {
            let t = &tasks[i];
            let by_share = t.share > 0 && t.priority >= top_by_then;
            kinds = count(ratio(if by_share { own(i) } else { IDLE_WEIGHT }, linux(i)), true);
            if by_share {
                weighed.insert((t.priority, i));
                if t.priority < top {
                    unlike.insert((t.priority, i));
                }
            }
        }
        if kinds > 1 {
            for (_, i) in std::mem::take(&mut unlike) {
                refused[i] = true;
            }
        }
    }
    (0..tasks.len())
        .filter(|&i| refused[i])
        .map(|i| Unreproducible {
            task: i,
            key: "start",
            message: format!(
                "priority {} starts before any task of a higher priority (the first of priority {top} is \
                 task[{first}]): until one starts, the simulated eevdf gives it its share's weight among the \
                 tasks there, Linux's SCHED_IDLE from its start; start it no earlier than task[{first}], or \
                 give it priority {top}",
                tasks[i].priority
            ),
        })
        .collect()
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// [`FairRule::SolarisUser`]: nice = −(user priority)/3 where `ts` clamps the priority to −60..60;
/// a user priority that is not −3n for a nice level n of −20..=19 is refused.
fn solaris(tasks: &[FairTask]) -> Result<Vec<FairLevel>, Vec<Unreproducible>> {
    let mut levels = Vec::with_capacity(tasks.len());
    let mut refused = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        let upri = crate::ts::user_priority(t.priority);
        match crate::ts::solaris_nice(upri) {
            Some(n) => levels.push(FairLevel::Nice(n)),
            None => refused.push(Unreproducible {
                task: i,
                key: "priority",
                message: format!(
                    "user priority {upri} has no Linux nice level: Solaris's nice n is user \
                     priority -3n, n from -20 to 19 (a multiple of 3 from -57 to 60)"
                ),
            }),
        }
    }
    if refused.is_empty() {
        Ok(levels)
    } else {
        Err(refused)
    }
}

/// The kernel's largest weight ratio, nice −20 to nice 19.
fn widest() -> f64 {
    WEIGHTS[0] as f64 / WEIGHTS[39] as f64
}

/// [`FairRule::Shares`]: the groups in the simulator's order (by priority, highest first; within a
/// priority the tasks with a share, then each task of share 0); the first at nice levels, the second
/// `SCHED_IDLE`, anything more refused.
fn shares(tasks: &[FairTask]) -> Result<Vec<FairLevel>, Vec<Unreproducible>> {
    let mut refused = Vec::new();
    let groups = groups(tasks, &mut refused);
    let mut levels = vec![FairLevel::Idle; tasks.len()];
    if let Some(first) = groups.first() {
        nice_levels(tasks, first, &mut levels, &mut refused);
    }
    if let Some(second) = groups.get(1) {
        let head = second[0];
        let (p1, p2, s2) = (tasks[groups[0][0]].priority, tasks[head].priority, tasks[head].share);
        for &i in &second[1..] {
            if tasks[i].share != s2 {
                refused.push(Unreproducible {
                    task: i,
                    key: "share",
                    message: format!(
                        "share {} beside task[{head}]'s {s2} at priority {p2}, after the first group: Linux \
                         runs these as SCHED_IDLE, one weight for all, where the simulator divides by share; \
                         give them equal shares",
                        tasks[i].share
                    ),
                });
            }
        }
        for &i in groups[2..].iter().flatten() {
            let t = &tasks[i];
            let (key, what) = if t.priority != p2 {
                ("priority", format!("priority {}", t.priority))
            } else {
                ("share", format!("share 0 at priority {p2}, behind task[{head}]'s share,"))
            };
            refused.push(Unreproducible {
                task: i,
                key,
                message: format!(
                    "{what} is a third group in the simulator's order: it runs only when neither the \
                     first group (priority {p1}) nor the second (that of task[{head}]) wants the CPU, \
                     where Linux's fair class has two: nice levels, then SCHED_IDLE for all the rest"
                ),
            });
        }
    }
    if refused.is_empty() {
        Ok(levels)
    } else {
        refused.sort_by_key(|u| u.task);
        Err(refused)
    }
}

/// The groups of [`FairRule::Shares`] in the simulator's order; a second task of share 0 at one
/// priority is refused (the simulator runs them one at a time). O(n log n).
fn groups(tasks: &[FairTask], refused: &mut Vec<Unreproducible>) -> Vec<Vec<usize>> {
    // By priority (highest first), the tasks with a share before those of share 0, then task order.
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_unstable_by_key(|&i| (std::cmp::Reverse(tasks[i].priority), tasks[i].share == 0, i));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut zero_at: Option<(i32, usize)> = None;
    for i in order {
        let t = &tasks[i];
        if t.share > 0 {
            match groups.last_mut() {
                Some(g) if tasks[g[0]].priority == t.priority => g.push(i),
                _ => groups.push(vec![i]),
            }
        } else if let Some((p, first)) = zero_at.filter(|&(p, _)| p == t.priority) {
            refused.push(Unreproducible {
                task: i,
                key: "share",
                message: format!(
                    "share 0, as task[{first}] at priority {p}: the simulator runs tasks of share 0 one at a \
                     time, first come, first served; Linux's SCHED_IDLE divides the CPU between them"
                ),
            });
        } else {
            zero_at = Some((t.priority, i));
            groups.push(vec![i]);
        }
    }
    groups
}

/// The first group of [`FairRule::Shares`] at nice levels: share 1 is nice 0, unless the largest
/// share would be beyond −20, when all move together so that it is −20; a share then beyond 19 is
/// refused. A group of one task of share 0 is nice 0.
fn nice_levels(
    tasks: &[FairTask],
    group: &[usize],
    levels: &mut [FairLevel],
    refused: &mut Vec<Unreproducible>,
) {
    let raw = |i: usize| nice_of_ratio(f64::from(tasks[i].share.max(1)));
    // The task of the largest share (the lowest level), the first of them.
    let big = group.iter().copied().fold(group[0], |b, i| if raw(i) < raw(b) { i } else { b });
    let shift = if raw(big).round() < -20.0 { -20.0 - raw(big) } else { 0.0 };
    for &i in group {
        let n = (raw(i) + shift).round();
        if n <= 19.0 {
            levels[i] = FairLevel::Nice(n as i8);
            continue;
        }
        let (s, b) = (tasks[i].share, tasks[big].share);
        refused.push(Unreproducible {
            task: i,
            key: "share",
            message: format!(
                "share {s} is {:.0} times smaller than task[{big}]'s {b}: Linux's weights reach no further \
                 than 1 : {:.0} (nice 19 to -20)",
                f64::from(b) / f64::from(s),
                widest()
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(priority: i32, share: u32) -> FairTask {
        FairTask { priority, share, start: 0 }
    }

    fn nice(levels: &[FairLevel]) -> Vec<Option<i8>> {
        levels
            .iter()
            .map(|l| match l {
                FairLevel::Nice(n) => Some(*n),
                FairLevel::Idle => None,
            })
            .collect()
    }

    #[test]
    fn eevdf_takes_nice_0_from_its_option() {
        let e = crate::entry("eevdf").unwrap();
        let mut o = Options::new();
        o.insert("nice0_share".into(), crate::OptValue::Int(100));
        let rule = FairRule::of(e, &o).unwrap();
        assert_eq!(rule, FairRule::Nice { nice0: 100 });
        // Share 100 is nice 0 (not -20, as with nice 0 at share 1), 304 is -5, 1 is 19, 0 idle.
        let l = rule.levels(&[t(0, 100), t(0, 304), t(0, 1), t(0, 0)]).unwrap();
        assert_eq!(nice(&l), [Some(0), Some(-5), Some(19), None]);
        assert_eq!(FairRule::of(e, &Options::new()).unwrap(), FairRule::Nice { nice0: 1 });
        o.insert("nice0_share".into(), crate::OptValue::Int(0));
        assert!(FairRule::of(e, &o).is_err());
    }

    #[test]
    fn eevdf_refuses_a_task_that_has_its_weight_until_a_higher_priority_starts() {
        let rule = FairRule::Nice { nice0: 1 };
        let at = |priority, share, start| FairTask { priority, share, start };
        let refused =
            |tasks: &[FairTask]| rule.levels(tasks).map_err(|e| e.iter().map(|u| u.task).collect::<Vec<_>>());
        // Priority 0 at shares 1 and 3 from 0 s, priority 1 from 2 s: the simulated eevdf divides the
        // CPU 1024 : 3121 for 2 s, Linux's SCHED_IDLE 1 : 1.
        let e = rule.levels(&[at(0, 1, 0), at(0, 3, 0), at(1, 1, 2)]).unwrap_err();
        assert_eq!(e.iter().map(|u| (u.task, u.key)).collect::<Vec<_>>(), [(0, "start"), (1, "start")]);
        assert!(e[0].message.contains("task[2]"), "{}", e[0].message);
        // Beside a task of share 0 (idle in both): 1024 : 3 against 3 : 3.
        assert_eq!(refused(&[at(0, 1, 0), at(0, 0, 0), at(1, 1, 2)]), Err(vec![0]));
        // Alone until then, or with equal shares: the same split (all of it, or halves) in both.
        assert!(rule.levels(&[at(0, 1, 0), at(1, 1, 2)]).is_ok());
        assert!(rule.levels(&[at(0, 2, 0), at(0, 2, 1), at(1, 1, 2)]).is_ok());
        // Started together, or after, or of share 0 (idle either way): the same on Linux.
        for tasks in [[at(0, 1, 0), at(1, 1, 0)], [at(0, 1, 5), at(1, 1, 2)], [at(0, 0, 0), at(1, 1, 2)]] {
            assert_eq!(nice(&rule.levels(&tasks).unwrap()), [None, Some(0)]);
        }
        // Below a middle priority that started first it is idle from its start in both; the middle one
        // has its share's weight beside it until priority 2 starts.
        assert_eq!(refused(&[at(1, 1, 0), at(0, 1, 1), at(2, 1, 2)]), Err(vec![0]));
        assert!(rule.levels(&[at(1, 1, 0), at(0, 1, 1), at(2, 1, 1)]).is_ok());
    }

    #[test]
    fn ts_priorities_are_solaris_nice_levels() {
        let rule = FairRule::of(crate::entry("ts").unwrap(), &Options::new()).unwrap();
        assert_eq!(rule, FairRule::SolarisUser);
        // nice n is user priority -3n; the share means nothing; ts clamps 100 to 60 (nice -20).
        let l = rule.levels(&[t(0, 0), t(-3, 5), t(15, 1), t(60, 1), t(100, 1), t(-57, 1)]).unwrap();
        assert_eq!(nice(&l), [Some(0), Some(1), Some(-5), Some(-20), Some(-20), Some(19)]);
        let e = rule.levels(&[t(1, 1), t(-58, 1), t(-200, 1), t(3, 1)]).unwrap_err();
        assert_eq!(
            e.iter().map(|u| (u.task, u.key)).collect::<Vec<_>>(),
            [(0, "priority"), (1, "priority"), (2, "priority")]
        );
        assert!(e[2].message.contains("user priority -60"), "{}", e[2].message);
    }

    #[test]
    fn shares_give_the_first_group_nice_levels_and_the_second_sched_idle() {
        let rule = FairRule::Shares;
        // Share 1 is nice 0, 3 is -5; share 0 at the top and everything below: idle.
        assert_eq!(nice(&rule.levels(&[t(1, 1), t(1, 3), t(1, 0)]).unwrap()), [Some(0), Some(-5), None]);
        assert_eq!(nice(&rule.levels(&[t(1, 2), t(0, 5), t(0, 5)]).unwrap()), [Some(-3), None, None]);
        // A top priority of one task of share 0 is the first group: nice 0, above the rest.
        assert_eq!(nice(&rule.levels(&[t(1, 0), t(0, 7)]).unwrap()), [Some(0), None]);
        // Shares past nice -20 move together: 100 : 200 : 300 keeps its ratios.
        assert_eq!(
            nice(&rule.levels(&[t(0, 100), t(0, 200), t(0, 300)]).unwrap()),
            [Some(-15), Some(-18), Some(-20)]
        );
    }

    #[test]
    fn shares_refuse_what_sched_idle_cannot_say() {
        let keys = |tasks: &[FairTask]| {
            FairRule::Shares.levels(tasks).unwrap_err().iter().map(|u| (u.task, u.key)).collect::<Vec<_>>()
        };
        // A third priority.
        assert_eq!(keys(&[t(2, 1), t(1, 1), t(0, 1)]), [(2, "priority")]);
        // Share 0 at the top beside shares, and a lower priority: three groups.
        assert_eq!(keys(&[t(1, 3), t(1, 0), t(0, 1)]), [(2, "priority")]);
        // A share 0 behind a share in the second group.
        assert_eq!(keys(&[t(1, 1), t(0, 1), t(0, 0)]), [(2, "share")]);
        // Unequal shares in the second group.
        assert_eq!(keys(&[t(1, 1), t(0, 1), t(0, 2)]), [(2, "share")]);
        // Two tasks of share 0 at one priority.
        assert_eq!(keys(&[t(0, 1), t(0, 0), t(0, 0)]), [(2, "share")]);
        // Shares further apart than 1 : 5917.
        assert_eq!(keys(&[t(0, 1), t(0, 10_000)]), [(0, "share")]);
        assert!(FairRule::Shares.levels(&[t(0, 1), t(0, 5_000)]).is_ok());
    }

    #[test]
    fn linux_own_class_is_the_old_mapping() {
        let l = FairRule::Kernel.levels(&[t(1, 3), t(1, 0), t(0, 1), t(1, u32::MAX)]).unwrap();
        assert_eq!(nice(&l), [Some(-5), None, None, Some(-20)]);
    }
}
