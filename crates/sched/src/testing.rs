//! A random world of tasks for conformance tests: the event generator that drives every policy of
//! the registry through the [`Core`] (`crates/sched/tests/conformance.rs`) and
//! `scx_smart`'s adapter from kernel records (its driver tests), so that a driver and a policy are
//! checked against the same sequences of events.
//!
//! A [`World`] plays the machine: it keeps which task runs on which CPU since when (as the driver
//! dispatched them) and which are asleep, and produces, one [`World::step`] at a time, [`Happening`]s that could happen next on
//! such a machine: a task is admitted, wakes, blocks, yields, runs out its slice, exits, announces
//! a time constraint, gets new parameters, is interacted with; a clock tick; time passing. A slice
//! handed out ends when it is due (a [`Happening::Stop`] with [`Stop::SliceEnd`]). The driver
//! applies each happening, makes its decisions, and tells the world what it dispatched
//! ([`World::dispatched`]) and what it preempted ([`World::preempted`]).
//!
//! Everything follows from the seed: the same seed gives the same happenings for the same
//! decisions. The generator is a SplitMix64 (Steele, Lea, Flood 2014), enough for test variety and
//! small enough not to give this pure crate a dependency.

use crate::{Core, CpuId, Nanos, Policy, Stop, TaskId, TaskParams, TimeConstraint, MS};

/// SplitMix64: a small, fast, well-mixed generator for test inputs.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `percent` %.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// What kind of world to make.
#[derive(Clone, Debug)]
pub struct Shape {
    /// CPUs.
    pub cpus: usize,
    /// The most tasks admitted at once.
    pub max_tasks: usize,
    /// Every task bound to one CPU (for partitioned policies); otherwise some tasks get an affinity.
    pub bound: bool,
    /// Tasks may announce time constraints.
    pub constraints: bool,
}

/// One thing that happens on the machine, for the driver to apply.
#[derive(Clone, Debug, PartialEq)]
pub enum Happening {
    /// A new task, with its parameters: admit it and wake it at once.
    Admit(TaskId, TaskParams),
    /// A blocked task became runnable.
    Wake(TaskId),
    /// A running task left its CPU after running `ran` since its dispatch, for `why`; with
    /// `Stop::Blocked` and `woke_at_once`, it woke again before the driver could read that it blocked
    /// (the kernel's two records of a block read in either order).
    Stop {
        /// The task.
        task: TaskId,
        /// Its CPU.
        cpu: CpuId,
        /// Time on the CPU since its dispatch.
        ran: Nanos,
        /// Why.
        why: Stop,
        /// It woke again at once.
        woke_at_once: bool,
    },
    /// A task that does not run is gone.
    Exit(TaskId),
    /// A task sets or clears its time constraint.
    Constraint(TaskId, Option<TimeConstraint>),
    /// A task gets new parameters.
    Params(TaskId, TaskParams),
    /// The user interacted with a task.
    Interact(TaskId),
    /// A clock tick on a CPU.
    Tick(CpuId),
    /// Time passed to this instant.
    Advance(Nanos),
}

impl Happening {
    /// Applies this happening to `core` at `now`, as a driver does: a task admitted is woken at
    /// once, and one that woke at once after blocking wakes again. (Timers and decisions are the
    /// driver's to make after it.)
    pub fn apply<P: Policy + ?Sized>(&self, core: &mut Core<P>, now: Nanos) {
        match self {
            Happening::Admit(t, p) => {
                core.admit(*t, p, now);
                core.wake(*t, now);
            }
            Happening::Wake(t) => core.wake(*t, now),
            Happening::Stop { task, ran, why, woke_at_once, .. } => {
                core.stop(*task, *ran, *why, now);
                if *woke_at_once {
                    core.wake(*task, now);
                }
            }
            Happening::Exit(t) => core.exit(*t, now),
            Happening::Constraint(t, c) => core.set_time_constraint(*t, *c, now),
            Happening::Params(t, p) => core.set_params(*t, p, now),
            Happening::Interact(t) => core.interact(*t, now),
            Happening::Tick(c) => core.tick(*c, now),
            Happening::Advance(_) => core.advance_to(now),
        }
    }
}

/// Where a task of the world is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Where {
    /// Not admitted yet, or exited.
    Gone,
    /// Blocked.
    Asleep,
    /// Runnable, waiting for the driver to dispatch it.
    Waiting,
    /// Running on `cpu` since `since`, for at most `slice`.
    On {
        /// The CPU.
        cpu: CpuId,
        /// When it was dispatched.
        since: Nanos,
        /// Its slice.
        slice: Option<Nanos>,
    },
}

#[derive(Clone, Debug)]
struct Task {
    at: Where,
    params: TaskParams,
}

/// The machine a driver is tested against (see the module documentation).
#[derive(Clone, Debug)]
pub struct World {
    rng: Rng,
    shape: Shape,
    now: Nanos,
    tasks: Vec<Task>,
}

impl World {
    /// A world of `shape` from `seed`, at time 0, with no task.
    pub fn new(seed: u64, shape: Shape) -> World {
        assert!(shape.cpus >= 1 && shape.max_tasks >= 1);
        World { rng: Rng::new(seed), shape, now: 0, tasks: Vec::new() }
    }

    /// The current time.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// The task running on `cpu`, as the world knows it.
    pub fn running(&self, cpu: CpuId) -> Option<TaskId> {
        self.tasks
            .iter()
            .position(|t| matches!(t.at, Where::On { cpu: c, .. } if c == cpu))
            .map(|i| TaskId(i as u32))
    }

    /// Where task `t` is.
    pub fn place(&self, t: TaskId) -> &Where {
        self.tasks.get(t.idx()).map_or(&Where::Gone, |x| &x.at)
    }

    /// Every task ever admitted, by id.
    pub fn tasks(&self) -> impl Iterator<Item = TaskId> {
        (0..self.tasks.len() as u32).map(TaskId)
    }

    /// Tasks admitted and not gone.
    pub fn live(&self) -> usize {
        self.tasks.iter().filter(|t| t.at != Where::Gone).count()
    }

    /// The parameters task `t` was last given.
    pub fn params(&self, t: TaskId) -> &TaskParams {
        &self.tasks[t.idx()].params
    }

    /// The driver dispatched `task` on `cpu` for `slice` (`None`: until it stops) now.
    pub fn dispatched(&mut self, cpu: CpuId, task: TaskId, slice: Option<Nanos>) {
        assert!(self.running(cpu).is_none(), "task {task} dispatched on busy CPU {cpu}");
        let now = self.now;
        let t = &mut self.tasks[task.idx()];
        assert_eq!(t.at, Where::Waiting, "task {task} dispatched while {:?}", t.at);
        t.at = Where::On { cpu, since: now, slice };
    }

    /// The driver preempted what runs on `cpu`: the task and what it ran (it waits again).
    pub fn preempted(&mut self, cpu: CpuId) -> (TaskId, Nanos) {
        let task = self.running(cpu).unwrap_or_else(|| panic!("preempted CPU {cpu}, which runs nothing"));
        let Where::On { since, .. } = self.tasks[task.idx()].at else { unreachable!() };
        self.tasks[task.idx()].at = Where::Waiting;
        (task, self.now - since)
    }

    /// Makes every decision due now on two cores fed this world, in lockstep: both must ask for a
    /// decision on the same CPUs and pick the same dispatches; a CPU running a task is first
    /// preempted, billed what the world says it ran. The dispatches are the world's. Returns the
    /// decisions made, those that dispatched a task and the longest run queue seen before one, or
    /// what differed at `step`.
    pub fn decide_both<P: Policy + ?Sized, Q: Policy + ?Sized>(
        &mut self,
        a: &mut Core<P>,
        b: &mut Core<Q>,
        step: usize,
    ) -> Result<(usize, usize, usize), String> {
        let now = self.now;
        let (mut decisions, mut dispatches, mut longest) = (0, 0, 0);
        loop {
            let (c, other) = (a.next_decision(), b.next_decision());
            if c != other {
                return Err(format!("step {step}: who decides ({c:?} against {other:?})"));
            }
            let Some(c) = c else { return Ok((decisions, dispatches, longest)) };
            if a.view().running(c).is_some() {
                let (t, ran) = self.preempted(c);
                a.stop(t, ran, Stop::Preempted, now);
                b.stop(t, ran, Stop::Preempted, now);
            }
            longest = longest.max(a.view().runnable_count());
            let d = a.pick(c, now);
            let e = b.pick(c, now);
            if d != e {
                return Err(format!("step {step}: CPU {c} picks {d:?} against {e:?}"));
            }
            decisions += 1;
            if let Some(d) = d {
                self.dispatched(c, d.task, d.slice);
                dispatches += 1;
            }
        }
    }

    fn pick(&mut self, f: impl Fn(&Task) -> bool) -> Option<TaskId> {
        let ids: Vec<usize> = (0..self.tasks.len()).filter(|&i| f(&self.tasks[i])).collect();
        (!ids.is_empty()).then(|| TaskId(ids[self.rng.below(ids.len() as u64) as usize] as u32))
    }

    fn new_params(&mut self) -> TaskParams {
        let cpus = self.shape.cpus as u64;
        let affinity = if self.shape.bound {
            Some(vec![self.rng.below(cpus) as CpuId])
        } else if cpus > 1 && self.rng.chance(20) {
            let a = self.rng.below(cpus) as CpuId;
            let b = self.rng.below(cpus) as CpuId;
            let mut v = vec![a.min(b), a.max(b)];
            v.dedup();
            Some(v)
        } else {
            None
        };
        TaskParams {
            priority: self.rng.below(3) as i32 - 1,
            share: if self.rng.chance(10) { 0 } else { 1 + self.rng.below(4) as u32 },
            latency_tolerance: self.rng.chance(30).then(|| (1 + self.rng.below(50)) * MS),
            cpus: affinity,
            ..TaskParams::default()
        }
    }

    fn constraint(&mut self) -> Option<TimeConstraint> {
        if self.rng.chance(25) {
            return None;
        }
        let deadline = self.now + (1 + self.rng.below(60)) * MS;
        Some(TimeConstraint {
            deadline,
            cpu_estimate: self.rng.chance(80).then(|| 1 + self.rng.below(20 * MS)),
            notify_time: match self.rng.below(3) {
                0 => None,
                1 => Some(0),
                _ => Some(deadline),
            },
            period: self.rng.chance(50).then(|| (5 + self.rng.below(40)) * MS),
            release: self.rng.chance(50).then_some(self.now),
        })
    }

    /// The earliest slice end due, if any: (time, CPU).
    fn next_slice_end(&self) -> Option<(Nanos, CpuId)> {
        self.tasks
            .iter()
            .filter_map(|t| match t.at {
                Where::On { cpu, since, slice: Some(s) } => Some((since.saturating_add(s), cpu)),
                _ => None,
            })
            .min()
    }

    fn stop(&mut self, task: TaskId, why: Stop, woke_at_once: bool) -> Happening {
        let Where::On { cpu, since, .. } = self.tasks[task.idx()].at else { unreachable!("a running task") };
        self.tasks[task.idx()].at = match why {
            Stop::Blocked if !woke_at_once => Where::Asleep,
            _ => Where::Waiting,
        };
        Happening::Stop { task, cpu, ran: self.now - since, why, woke_at_once }
    }

    /// What happens next. Time moves forward by at most a few milliseconds per call, and never past a
    /// slice end, which happens in its turn.
    pub fn step(&mut self) -> Happening {
        if let Some((_, cpu)) = self.next_slice_end().filter(|&(end, _)| end <= self.now) {
            let t = self.running(cpu).expect("a slice ends on a busy CPU");
            return self.stop(t, Stop::SliceEnd, false);
        }
        let (cpus, now) = (self.shape.cpus as u64, self.now);
        match self.rng.below(100) {
            0..=7 if self.live() < self.shape.max_tasks => {
                let t = TaskId(self.tasks.len() as u32);
                let params = self.new_params();
                self.tasks.push(Task { at: Where::Waiting, params: params.clone() });
                Happening::Admit(t, params)
            }
            8..=24 => match self.pick(|t| t.at == Where::Asleep) {
                Some(t) => {
                    self.tasks[t.idx()].at = Where::Waiting;
                    Happening::Wake(t)
                }
                None => self.advance(),
            },
            // A task blocks or yields after running a while (a stretch of a real CPU is never empty).
            25..=44 => match self.pick(|t| matches!(t.at, Where::On { since, .. } if since < now)) {
                Some(t) => {
                    let why = if self.rng.chance(15) { Stop::Yielded } else { Stop::Blocked };
                    let at_once = why == Stop::Blocked && self.rng.chance(25);
                    self.stop(t, why, at_once)
                }
                None => self.advance(),
            },
            45..=47 => match self.pick(|t| matches!(t.at, Where::Asleep | Where::Waiting)) {
                Some(t) => {
                    self.tasks[t.idx()].at = Where::Gone;
                    Happening::Exit(t)
                }
                None => self.advance(),
            },
            48..=57 if self.shape.constraints => match self.pick(|t| t.at != Where::Gone) {
                Some(t) => {
                    let c = self.constraint();
                    Happening::Constraint(t, c)
                }
                None => self.advance(),
            },
            58..=60 => match self.pick(|t| t.at != Where::Gone) {
                Some(t) => {
                    let mut p = self.new_params();
                    // An affinity is set at admission; a new one would move a running task.
                    p.cpus = self.tasks[t.idx()].params.cpus.clone();
                    self.tasks[t.idx()].params = p.clone();
                    Happening::Params(t, p)
                }
                None => self.advance(),
            },
            61..=63 => match self.pick(|t| t.at != Where::Gone) {
                Some(t) => Happening::Interact(t),
                None => self.advance(),
            },
            64..=69 => Happening::Tick(self.rng.below(cpus) as CpuId),
            _ => self.advance(),
        }
    }

    fn advance(&mut self) -> Happening {
        let mut to = self.now + 1 + self.rng.below(3 * MS);
        if let Some((end, _)) = self.next_slice_end() {
            to = to.min(end.max(self.now));
        }
        self.now = to;
        Happening::Advance(to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_happenings() {
        let shape = Shape { cpus: 3, max_tasks: 6, bound: false, constraints: true };
        let run = |seed| {
            let mut w = World::new(seed, shape.clone());
            (0..500).map(|_| format!("{:?}", w.step())).collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn a_slice_ends_when_it_is_due() {
        let shape = Shape { cpus: 1, max_tasks: 1, bound: false, constraints: false };
        let mut w = World::new(1, shape);
        loop {
            if let Happening::Admit(t, _) = w.step() {
                w.dispatched(0, t, Some(2 * MS));
                break;
            }
        }
        let start = w.now();
        let end = loop {
            match w.step() {
                Happening::Stop { why: Stop::SliceEnd, ran, .. } => break ran,
                Happening::Stop { .. } => return, // it blocked or yielded first
                _ => assert!(w.now() <= start + 2 * MS),
            }
        };
        assert_eq!(end, 2 * MS);
    }
}
