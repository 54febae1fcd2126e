//! What a scenario's task does, defined once for every runner: the simulator's event loop and
//! hourglass's real threads run the same [`Stream`], so that a task means the same in both, draw
//! for draw.
//!
//! A stream holds the task's random generator ([`task_rng`]: one per task, from the seed and its
//! name) and its position: how many requests or interactions it has drawn, its running estimate.
//! The runner asks, in the order the task lives:
//!
//! * a `cpu` task: when it starts ([`Stream::start`]: its start, late by a jitter draw), and how
//!   much work it has ([`Stream::work`]);
//! * a `periodic` task: its next request ([`Stream::next_request`]: the nominal release `start +
//!   k·period`, or after drawn `interarrival` gaps, from a generator of their own, and when it is
//!   released, late by a jitter draw and its `input_delay` draw), then, when it is released, the CPU
//!   it needs ([`Stream::exec`]); when one ends, whether more follow ([`Stream::more_after`]); what it
//!   tells the scheduler ([`Stream::constraint`]) and what it learns from the time a request took
//!   ([`Stream::observe`]); what it does with a request that will be late ([`Stream::late_rule`]);
//! * an `interactive` task: its next interaction ([`Stream::next_interaction`]: the wait until the
//!   user's next event, late by a jitter draw, and the CPU the response needs);
//! * a `forkwait` task: its next piece ([`Stream::next_piece`]: a fork, then a child, in turn).
//!
//! **The order of draws is part of the format** (a scenario's numbers must not change when a
//! runner is rewritten): per periodic request, its jitter, its input delay, then its execution time and
//! its server's work; per
//! interaction, the think time, the jitter, the burst; per child of a `forkwait` task, its fork, then
//! the child; a `cpu` task draws its start's jitter and
//! nothing else. A task with no `jitter` draws none.
//!
//! Times are exact integers of nanoseconds; a release that would lie beyond `u64` nanoseconds ends
//! the stream instead of wrapping.

use rand::Rng;
use rand_pcg::Pcg64;

use crate::{
    task_rng, Discard, Estimate, Exec, Model, Nanos, Notify, OnMiss, Periodic, Player, Series, TaskSpec,
    MAX_TIME,
};

/// One request of a periodic task, as planned before it is released.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    /// Its number among the task's requests, from 0.
    pub index: u64,
    /// Its nominal release, `start + index·period`.
    pub nominal: Nanos,
    /// When it is released: the nominal release, late by the jitter draw (before the runner's
    /// timer has its say).
    pub at: Nanos,
    /// Its absolute deadline: nominal release + relative deadline.
    pub deadline: Nanos,
}

/// Why a periodic task plans no more requests.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// It has released all its `count` requests.
    Count,
    /// The next nominal release lies at or past its `stop`, or past the end of the run.
    Window,
}

/// One interaction of an interactive task.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Interaction {
    /// From the end of the previous burst (or the task's start) to the user's event: the think
    /// time, late by the jitter draw.
    pub wait: Nanos,
    /// The CPU its response needs (at least 1 ns).
    pub burst: Nanos,
}

/// One piece of a `forkwait` task's work ([`Stream::next_piece`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The CPU it needs (at least 1 ns).
    pub cpu: Nanos,
    /// A child's work (else the parent's fork).
    pub child: bool,
    /// The first piece of an iteration (the iteration's time counts from its start).
    pub first: bool,
    /// The last piece of an iteration (its end ends the iteration).
    pub last: bool,
}

/// What a task does with a request that will not meet its deadline (`on_miss`, `notify`), as its
/// runner lets it learn of the miss.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LateRule {
    /// It drops the request when the scheduler notifies it (SMART's applications).
    DropWhenNotified,
    /// It drops the request at its deadline if unfinished (`on_miss = "abort"`; or `"discard"` on
    /// a runner that tells the task of a miss only when the deadline has passed: hourglass's threads,
    /// which watch their own deadlines, Linux having no notifications).
    DropAtDeadline,
    /// It finishes it late.
    Finish,
}

impl Periodic {
    /// What the task does with a request that will be late, as [`Stream::late_rule`] says: it
    /// depends on the task's keys alone, so a runner may ask before it runs the task (hourglass
    /// says so in its mapping).
    #[inline]
    pub fn late_rule(&self, notifies: bool, sees_its_deadline: bool) -> LateRule {
        match self.on_miss {
            OnMiss::Abort => LateRule::DropAtDeadline,
            OnMiss::Finish => LateRule::Finish,
            OnMiss::Discard if self.notify == Notify::Never || !self.time_constraint => LateRule::Finish,
            OnMiss::Discard if notifies => LateRule::DropWhenNotified,
            OnMiss::Discard if sees_its_deadline => LateRule::DropAtDeadline,
            OnMiss::Discard => LateRule::Finish,
        }
    }
}

/// A task's behaviour as it unfolds (see the module documentation).
#[derive(Clone, Debug)]
pub struct Stream<'s> {
    spec: &'s TaskSpec,
    rng: Pcg64,
    /// Requests or interactions drawn so far.
    drawn: u64,
    /// The running average of execution times (the EWMA estimate), once a request has ended; a
    /// player's also of the wall-clock time its frames took.
    average: Option<f64>,
    elapsed: Option<f64>,
    /// Drawn times that are series (`ar1`, `file`): the execution times, think times and the server's
    /// work.
    execs: Series,
    thinks: Series,
    sends: Series,
    /// Drawn arrivals (`interarrival`: a sporadic task's releases, a player's timestamps), from a
    /// generator of their own, so that when a runner asks for them does not change any draw.
    arrivals: Pcg64,
    gaps: Series,
    /// With drawn arrivals: the nominal release of request `drawn` (`None`: not drawn yet), and of the
    /// one before it.
    upcoming: Option<Nanos>,
    last_nominal: Option<Nanos>,
    /// The input path (`input_delay`): its draws, and the last request's time through it.
    inputs: Series,
    last_at: Nanos,
}

impl<'s> Stream<'s> {
    /// The stream of task `spec` in a run with `seed`.
    pub fn new(spec: &'s TaskSpec, seed: u64) -> Self {
        Stream {
            spec,
            rng: task_rng(seed, &spec.name),
            drawn: 0,
            average: None,
            elapsed: None,
            execs: Series::default(),
            thinks: Series::default(),
            sends: Series::default(),
            arrivals: task_rng(seed ^ 0x6172_7269_7661_6c73, &spec.name),
            gaps: Series::default(),
            upcoming: None,
            last_nominal: None,
            inputs: Series::default(),
            last_at: 0,
        }
    }

    /// The task.
    #[inline]
    pub fn spec(&self) -> &'s TaskSpec {
        self.spec
    }

    /// A release or wake-up is late by a uniform draw in `[0, jitter]` (none drawn without `jitter`).
    #[inline]
    fn jitter(&mut self) -> Nanos {
        self.spec.jitter.map_or(0, |j| self.rng.random_range(0..=j))
    }

    /// When a `cpu` task starts: its `start`, late by a jitter draw. Other models start at `start`.
    #[inline]
    pub fn start(&mut self) -> Nanos {
        match self.spec.model {
            Model::Cpu { .. } => self.spec.start.saturating_add(self.jitter()),
            _ => self.spec.start,
        }
    }

    /// The total CPU a `cpu` task needs (`None`: it runs until the end or its stop).
    #[inline]
    pub fn work(&self) -> Option<Nanos> {
        match self.spec.model {
            Model::Cpu { work } => work,
            _ => None,
        }
    }

    #[inline]
    fn periodic(&self) -> &'s Periodic {
        match &self.spec.model {
            Model::Periodic(p) => p,
            m => panic!("task {} is {}, not periodic", self.spec.name, m.name()),
        }
    }

    /// The spacing of the task's releases or timestamps: a fixed period, or drawn gaps.
    #[inline]
    fn spacing(&self) -> (Nanos, Option<&'s Exec>) {
        match &self.spec.model {
            Model::Periodic(p) => (p.period, p.interarrival.as_ref()),
            Model::Player(p) => (p.period, p.interarrival.as_ref()),
            m => panic!("task {} is {}: it has no releases", self.spec.name, m.name()),
        }
    }

    /// The nominal release of request (or timestamp of frame) `k`, if it is representable: `start +
    /// k·period`, or, with drawn gaps, the start plus the first `k` gaps (`k` is then the next one
    /// not planned yet, asked in order).
    #[inline]
    fn nominal(&mut self, k: u64) -> Option<Nanos> {
        match self.spacing() {
            (period, None) => k.checked_mul(period)?.checked_add(self.spec.start),
            (_, Some(gap)) => {
                debug_assert_eq!(k, self.drawn, "drawn arrivals are asked in order");
                if self.upcoming.is_none() {
                    let at = if k == 0 {
                        Some(self.spec.start)
                    } else {
                        let g = self.gaps.draw(gap, &self.spec.traces, &mut self.arrivals).max(1);
                        self.last_nominal.and_then(|l| l.checked_add(g))
                    };
                    self.upcoming = Some(at.unwrap_or(Nanos::MAX));
                }
                self.upcoming.filter(|&u| u != Nanos::MAX)
            }
        }
    }

    /// Whether a periodic task (or a player) releases request (frame) `k` in a run that ends at
    /// `end`: within its `count`, before its `stop` and the end.
    #[inline]
    fn releases(&mut self, k: u64, end: Nanos) -> Result<Nanos, Ended> {
        let count = match &self.spec.model {
            Model::Periodic(p) => p.count,
            Model::Player(p) => p.count,
            _ => None,
        };
        if count.is_some_and(|c| k >= c) {
            return Err(Ended::Count);
        }
        match self.nominal(k) {
            Some(n) if n < end && self.spec.stop.is_none_or(|s| n < s) => Ok(n),
            _ => Err(Ended::Window),
        }
    }

    /// A periodic task's next request in a run that ends at `end`, with its jitter drawn; the next
    /// call plans the one after. Its execution time is drawn when it is released ([`Stream::exec`]).
    #[inline]
    pub fn next_request(&mut self, end: Nanos) -> Result<Planned, Ended> {
        let k = self.drawn;
        let nominal = self.releases(k, end)?;
        let mut at = nominal.saturating_add(self.jitter());
        if let Some(d) = &self.periodic().input_delay {
            // Through the input path, in order: a request never overtakes the one before.
            at = at.saturating_add(self.inputs.draw(d, &self.spec.traces, &mut self.rng)).max(self.last_at);
            self.last_at = at;
        }
        self.advance(nominal);
        let deadline = nominal.saturating_add(self.periodic().deadline);
        Ok(Planned { index: k, nominal, at, deadline })
    }

    /// Request `drawn`, at `nominal`, is planned: the next one is the one after.
    #[inline]
    fn advance(&mut self, nominal: Nanos) {
        self.drawn += 1;
        self.last_nominal = Some(nominal);
        self.upcoming = None;
    }

    /// The CPU the request just released needs (at least 1 ns).
    #[inline]
    pub fn exec(&mut self) -> Nanos {
        let e = &self.periodic().exec;
        self.execs.draw(e, &self.spec.traces, &mut self.rng).max(1)
    }

    /// The work the request just released hands its server (`server_exec`, at least 1 ns), drawn after
    /// its own exec; 0 for a task that has no server.
    #[inline]
    pub fn server_exec(&mut self) -> Nanos {
        match &self.spec.send {
            Some(c) => self.sends.draw(&c.exec, &self.spec.traces, &mut self.rng).max(1),
            None => 0,
        }
    }

    /// Whether a periodic task that has planned `planned` requests releases another in a run that
    /// ends at `end` (when its last one ends and nothing is pending, it leaves if not).
    #[inline]
    pub fn more_after(&mut self, planned: u64, end: Nanos) -> bool {
        self.releases(planned, end).is_ok()
    }

    /// The time constraint a periodic task announces for a request (SMART §3.4): its deadline,
    /// its estimate of the CPU it needs (`estimate`: the exact draw, a fixed time, or the running
    /// average of past requests times a margin, at most [`MAX_TIME`]), when it wants to hear of a
    /// miss (`notify`), its period, and when the request was `released`.
    #[inline]
    pub fn constraint(&self, r: &Planned, exec: Nanos, released: Nanos) -> sched::TimeConstraint {
        let p = self.periodic();
        let estimate = match p.estimate {
            Estimate::Exact => exec,
            Estimate::Fixed(e) => e,
            Estimate::Ewma { factor, initial, .. } => {
                let avg = self.average.unwrap_or_else(|| initial.unwrap_or(p.exec.mean()) as f64);
                // At most MAX_TIME, whatever the factor: the policy adds it to instants.
                (avg * factor).round().clamp(1.0, MAX_TIME as f64) as Nanos
            }
        };
        let notify_time = match p.notify {
            Notify::Never => None,
            Notify::Asap => Some(0),
            Notify::AtDeadline => Some(r.deadline),
            Notify::After(d) => Some(r.nominal.saturating_add(d).min(r.deadline)),
        };
        sched::TimeConstraint {
            deadline: r.deadline,
            cpu_estimate: Some(estimate),
            notify_time,
            period: p.interarrival.is_none().then_some(p.period),
            release: Some(released),
        }
    }

    /// A request that needed `exec` ended: the running average learns it.
    #[inline]
    pub fn observe(&mut self, exec: Nanos) {
        if let Estimate::Ewma { alpha, .. } = self.periodic().estimate {
            let a = self.average.unwrap_or(exec as f64);
            self.average = Some(a + alpha * (exec as f64 - a));
        }
    }

    /// What the task does with a request that will be late: under a scheduler that notifies
    /// (`notifies`), or else on a runner that lets it see its deadline pass
    /// (`sees_its_deadline`: hourglass) or not (the simulator under a policy that never notifies,
    /// where `"discard"` finishes the request late).
    #[inline]
    pub fn late_rule(&self, notifies: bool, sees_its_deadline: bool) -> LateRule {
        self.periodic().late_rule(notifies, sees_its_deadline)
    }

    /// An interactive task's next interaction (the think time and the jitter, then the burst, are
    /// drawn), or `None` once it has had its `count`.
    #[inline]
    pub fn next_interaction(&mut self) -> Option<Interaction> {
        let Model::Interactive { think, burst, count } = &self.spec.model else {
            panic!("task {} is {}, not interactive", self.spec.name, self.spec.model.name())
        };
        if count.is_some_and(|c| self.drawn >= c) {
            return None;
        }
        let wait = self.thinks.draw(think, &self.spec.traces, &mut self.rng).saturating_add(self.jitter());
        let burst = self.execs.draw(burst, &self.spec.traces, &mut self.rng).max(1);
        self.drawn += 1;
        Some(Interaction { wait, burst })
    }

    #[inline]
    fn player(&self) -> &'s Player {
        match &self.spec.model {
            Model::Player(p) => p,
            m => panic!("task {} is {}, not a player", self.spec.name, m.name()),
        }
    }

    /// A `forkwait` task's next piece of work: the parent's fork, then the child, in turn, `children`
    /// children an iteration; `None` once it has done its `count` iterations. Draws: per child, its
    /// fork's CPU, then the child's (each at least 1 ns).
    #[inline]
    pub fn next_piece(&mut self) -> Option<Piece> {
        let Model::ForkWait { fork, child, children, count } = &self.spec.model else {
            panic!("task {} is {}, not forkwait", self.spec.name, self.spec.model.name())
        };
        // `drawn` counts pieces: 2 per child.
        let per_iteration = children.saturating_mul(2);
        let k = self.drawn;
        if count.is_some_and(|c| k / per_iteration >= c) {
            return None;
        }
        self.drawn += 1;
        let in_iteration = k % per_iteration;
        Some(if in_iteration % 2 == 0 {
            let cpu = self.execs.draw(fork, &self.spec.traces, &mut self.rng).max(1);
            Piece { cpu, child: false, first: in_iteration == 0, last: false }
        } else {
            let cpu = self.thinks.draw(child, &self.spec.traces, &mut self.rng).max(1);
            Piece { cpu, child: true, first: false, last: in_iteration + 1 == per_iteration }
        })
    }

    /// A player's next frame in a run that ends at `end`: its number, its timestamp (`nominal`), when it
    /// is wanted on screen (`at`: the timestamp plus `delay`) and its `deadline` (`at` plus the
    /// `window`); and the CPU it needs, drawn now, every frame in order whether it is shown or not
    /// (a frame's cost is its content's), then the work it hands its server (0 without one).
    #[inline]
    pub fn next_frame(&mut self, end: Nanos) -> Result<(Planned, Nanos, Nanos), Ended> {
        let k = self.drawn;
        let nominal = self.releases(k, end)?;
        self.advance(nominal);
        let p = self.player();
        let at = nominal.saturating_add(p.delay);
        let exec = self.execs.draw(&p.exec, &self.spec.traces, &mut self.rng).max(1);
        let server = self.server_exec();
        Ok((Planned { index: k, nominal, at, deadline: at.saturating_add(p.window) }, exec, server))
    }

    /// How long a player expects its next frame to take on the wall clock, from its start to its
    /// display: the exponential average of what past frames took (× `estimate_factor` with `discard =
    /// "estimate"`), the first frame `estimate_initial` or the exec's mean. It paces by it, and, tuned
    /// for time sharing, drops by it (Nieh §3.5.1; the player adapted to SMART paces "by the same
    /// mechanism as the original").
    #[inline]
    pub fn frame_estimate(&self) -> Nanos {
        let p = self.player();
        let Estimate::Ewma { factor, initial, .. } = p.estimate else { return p.exec.mean() };
        let avg = self.elapsed.unwrap_or_else(|| initial.unwrap_or(p.exec.mean()) as f64);
        let factor = if p.discard == Discard::Estimate { factor } else { 1.0 };
        (avg * factor).round().clamp(1.0, MAX_TIME as f64) as Nanos
    }

    /// The CPU a player adapted to SMART tells the scheduler its next frame needs: `estimate_factor` ×
    /// the exponential average of the CPU past frames took (§3.5.1: 10 % more).
    #[inline]
    pub fn frame_cpu_estimate(&self) -> Nanos {
        let p = self.player();
        let Estimate::Ewma { factor, initial, .. } = p.estimate else { return p.exec.mean() };
        let avg = self.average.unwrap_or_else(|| initial.unwrap_or(p.exec.mean()) as f64);
        (avg * factor).round().clamp(1.0, MAX_TIME as f64) as Nanos
    }

    /// A player showed a frame that took `wall` from its start to its display and `cpu` of the CPU:
    /// its averages learn them.
    #[inline]
    pub fn observe_frame(&mut self, wall: Nanos, cpu: Nanos) {
        if let Estimate::Ewma { alpha, .. } = self.player().estimate {
            let ewma = |avg: Option<f64>, x: Nanos| {
                let a = avg.unwrap_or(x as f64);
                Some(a + alpha * (x as f64 - a))
            };
            self.elapsed = ewma(self.elapsed, wall);
            self.average = ewma(self.average, cpu);
        }
    }

    /// The time constraint of a frame a player adapted to SMART gives (`discard = "notified"`): its
    /// deadline (wanted time plus the window), its estimate, notification as soon as a miss is seen.
    #[inline]
    pub fn frame_constraint(&self, f: &Planned, now: Nanos) -> sched::TimeConstraint {
        sched::TimeConstraint {
            deadline: f.deadline,
            cpu_estimate: Some(self.frame_cpu_estimate()),
            notify_time: Some(0),
            period: None,
            release: Some(now),
        }
    }

    /// Requests (periodic) or interactions (interactive) drawn so far.
    #[inline]
    pub fn drawn(&self) -> u64 {
        self.drawn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Exec, Periodic};

    const MS: Nanos = 1_000_000;

    #[inline]
    fn periodic(p: Periodic) -> TaskSpec {
        TaskSpec { jitter: Some(MS), ..TaskSpec::new("t", Model::Periodic(p)) }
    }

    #[test]
    fn drawn_arrivals_accumulate_and_do_not_change_the_other_draws() {
        let spec = TaskSpec {
            start: 5 * MS,
            ..TaskSpec::new(
                "keys",
                Model::Periodic(Periodic {
                    interarrival: Some(Exec::Uniform(MS, 3 * MS)),
                    deadline: 50 * MS,
                    ..Periodic::new(Exec::Uniform(MS, 2 * MS), 2 * MS)
                }),
            )
        };
        let mut a = Stream::new(&spec, 3);
        let mut b = Stream::new(&spec, 3);
        let mut at = Vec::new();
        let mut last = None;
        for k in 0..50 {
            let r = a.next_request(u64::MAX).unwrap();
            assert_eq!(r.index, k);
            let gap = last.map(|l| r.nominal - l);
            assert!(gap.is_none_or(|g| (MS..=3 * MS).contains(&g)), "{gap:?}");
            assert_eq!(r.deadline, r.nominal + 50 * MS);
            last = Some(r.nominal);
            at.push((r.nominal, a.exec()));
        }
        assert_eq!(at[0].0, 5 * MS, "the first at the start");
        // The other stream asks for all the releases first, then the execs: the same numbers.
        let releases: Vec<Nanos> = (0..50).map(|_| b.next_request(u64::MAX).unwrap().nominal).collect();
        let execs: Vec<Nanos> = (0..50).map(|_| b.exec()).collect();
        assert_eq!(releases, at.iter().map(|x| x.0).collect::<Vec<_>>());
        assert_eq!(execs, at.iter().map(|x| x.1).collect::<Vec<_>>());
        // No period is told to the scheduler for sporadic requests.
        let r = a.next_request(u64::MAX).unwrap();
        assert_eq!(a.constraint(&r, MS, r.at).period, None);
    }

    #[test]
    fn an_input_delay_makes_requests_reach_the_task_later_and_in_order() {
        let spec = TaskSpec::new(
            "keys",
            Model::Periodic(Periodic {
                input_delay: Some(Exec::Uniform(0, 30 * MS)),
                ..Periodic::new(Exec::Fixed(MS), 10 * MS)
            }),
        );
        let mut s = Stream::new(&spec, 1);
        let mut last = 0;
        let mut later = 0;
        for _ in 0..200 {
            let r = s.next_request(u64::MAX).unwrap();
            assert!(r.at >= r.nominal && r.at >= last, "{r:?}");
            assert_eq!(r.deadline, r.nominal + 10 * MS, "the deadline counts from the arrival");
            later += u64::from(r.at > r.nominal);
            last = r.at;
        }
        assert!(later > 190);
    }

    #[test]
    fn a_players_frames_are_timestamped_wanted_a_delay_later_and_each_drawn_once() {
        let p = crate::Player {
            exec: Exec::Uniform(10 * MS, 20 * MS),
            period: 40 * MS,
            interarrival: None,
            count: Some(3),
            window: 20 * MS,
            delay: 100 * MS,
            pace: true,
            discard: crate::Discard::Notified,
            ring: None,
            adapt: crate::Adapt::None,
            estimate: Estimate::Ewma { alpha: 0.5, factor: 1.1, initial: None },
        };
        let spec = TaskSpec::new("v", Model::Player(p));
        let mut s = Stream::new(&spec, 1);
        let mut rng = task_rng(1, "v");
        for k in 0..3 {
            let (f, exec, server) = s.next_frame(u64::MAX).unwrap();
            assert_eq!(
                (f.index, f.nominal, f.at, f.deadline),
                (k, 40 * MS * k, 40 * MS * k + 100 * MS, 40 * MS * k + 120 * MS)
            );
            assert_eq!(exec, Exec::Uniform(10 * MS, 20 * MS).sample(&mut rng));
            assert_eq!(server, 0);
        }
        assert_eq!(s.next_frame(u64::MAX), Err(Ended::Count));
        assert_eq!(s.frame_cpu_estimate(), 16_500_000, "the exec's mean, 10 % more");
        assert_eq!(s.frame_estimate(), 15 * MS, "paced by the wall clock, with no margin, when notified");
        s.observe_frame(50 * MS, 20 * MS);
        assert_eq!((s.frame_estimate(), s.frame_cpu_estimate()), (50 * MS, 22 * MS));
        s.observe_frame(30 * MS, 10 * MS);
        assert_eq!(s.frame_cpu_estimate(), 16_500_000, "half the newest: (20 + 10) / 2 × 1.1");
        assert_eq!(s.frame_estimate(), 40 * MS);
    }

    #[test]
    fn requests_follow_the_period_within_count_stop_and_end() {
        let spec = TaskSpec {
            start: 5 * MS,
            stop: Some(45 * MS),
            ..periodic(Periodic {
                count: Some(10),
                deadline: 8 * MS,
                ..Periodic::new(Exec::Fixed(MS), 10 * MS)
            })
        };
        let mut s = Stream::new(&spec, 1);
        let planned: Vec<Planned> = std::iter::from_fn(|| s.next_request(Nanos::MAX).ok()).collect();
        assert_eq!(planned.iter().map(|p| p.nominal).collect::<Vec<_>>(), [5, 15, 25, 35].map(|x| x * MS));
        assert!(planned
            .iter()
            .all(|p| p.at >= p.nominal && p.at <= p.nominal + MS && p.deadline == p.nominal + 8 * MS));
        assert_eq!(s.next_request(Nanos::MAX), Err(Ended::Window), "45 ms is its stop");
        assert!(!s.more_after(4, Nanos::MAX));
        let spec = periodic(Periodic { count: Some(2), ..Periodic::new(Exec::Fixed(MS), 10 * MS) });
        let mut s = Stream::new(&spec, 1);
        assert!(s.next_request(25 * MS).is_ok() && s.next_request(25 * MS).is_ok());
        assert_eq!(s.next_request(25 * MS), Err(Ended::Count));
        let mut s = Stream::new(&spec, 1);
        assert_eq!(s.next_request(0), Err(Ended::Window), "the run ends before the first release");
    }

    #[test]
    fn draws_come_in_the_documented_order() {
        // Per request: jitter, then exec; the same generator drawn by hand gives the same values.
        let spec = periodic(Periodic::new(Exec::Uniform(MS, 3 * MS), 10 * MS));
        let mut s = Stream::new(&spec, 7);
        let mut rng = task_rng(7, "t");
        for k in 0..50 {
            let p = s.next_request(Nanos::MAX).unwrap();
            assert_eq!(p.at - p.nominal, rng.random_range(0..=MS), "jitter of request {k}");
            assert_eq!(s.exec(), Exec::Uniform(MS, 3 * MS).sample(&mut rng).max(1), "exec of request {k}");
        }
        // Interactive: think, jitter, burst.
        let spec = TaskSpec {
            jitter: Some(MS),
            ..TaskSpec::new(
                "t",
                Model::Interactive {
                    think: Exec::Exponential { mean: 5 * MS },
                    burst: Exec::Uniform(MS, 2 * MS),
                    count: Some(3),
                },
            )
        };
        let mut s = Stream::new(&spec, 7);
        let mut rng = task_rng(7, "t");
        for _ in 0..3 {
            let i = s.next_interaction().unwrap();
            let think = Exec::Exponential { mean: 5 * MS }.sample(&mut rng);
            assert_eq!(i.wait, think + rng.random_range(0..=MS));
            assert_eq!(i.burst, Exec::Uniform(MS, 2 * MS).sample(&mut rng).max(1));
        }
        assert_eq!(s.next_interaction(), None, "count 3");
    }

    #[test]
    fn the_estimate_is_the_running_average_times_its_margin() {
        let spec = periodic(Periodic::new(Exec::Fixed(10 * MS), 40 * MS));
        let mut s = Stream::new(&spec, 1);
        let r = s.next_request(Nanos::MAX).unwrap();
        // Before any request ended: the mean of `exec`, times 1.1.
        assert_eq!(s.constraint(&r, 10 * MS, r.at).cpu_estimate, Some(11 * MS));
        s.observe(20 * MS);
        s.observe(10 * MS); // 20 ms, then half way to 10 ms: 15 ms
        assert_eq!(s.constraint(&r, 10 * MS, r.at).cpu_estimate, Some(16_500_000));
        let c = s.constraint(&r, 10 * MS, r.at);
        assert_eq!(
            (c.deadline, c.period, c.notify_time, c.release),
            (r.deadline, Some(40 * MS), Some(0), Some(r.at))
        );
    }

    #[test]
    fn a_late_request_is_dropped_or_finished_as_the_scenario_says() {
        let rule = |on_miss, notify, notifies, sees| {
            let spec = periodic(Periodic { on_miss, notify, ..Periodic::new(Exec::Fixed(MS), 10 * MS) });
            Stream::new(&spec, 1).late_rule(notifies, sees)
        };
        assert_eq!(rule(OnMiss::Discard, Notify::Asap, true, false), LateRule::DropWhenNotified);
        assert_eq!(rule(OnMiss::Discard, Notify::Asap, false, false), LateRule::Finish);
        assert_eq!(rule(OnMiss::Discard, Notify::Asap, false, true), LateRule::DropAtDeadline);
        assert_eq!(rule(OnMiss::Discard, Notify::Never, true, true), LateRule::Finish);
        assert_eq!(rule(OnMiss::Abort, Notify::Asap, true, false), LateRule::DropAtDeadline);
        assert_eq!(rule(OnMiss::Finish, Notify::Asap, true, true), LateRule::Finish);
    }

    #[test]
    fn an_ewma_estimate_with_a_huge_margin_stays_within_max_time() {
        let spec = periodic(Periodic {
            estimate: Estimate::Ewma { alpha: 0.5, factor: 1e300, initial: None },
            ..Periodic::new(Exec::Fixed(MAX_TIME), MAX_TIME)
        });
        let mut s = Stream::new(&spec, 1);
        let r = s.next_request(Nanos::MAX).unwrap();
        assert_eq!(s.constraint(&r, MAX_TIME, r.at).cpu_estimate, Some(MAX_TIME));
        s.observe(MAX_TIME);
        assert_eq!(s.constraint(&r, MAX_TIME, r.at).cpu_estimate, Some(MAX_TIME));
    }

    #[test]
    fn releases_beyond_u64_end_the_stream_instead_of_wrapping() {
        let spec = periodic(Periodic::new(Exec::Fixed(1), u64::MAX / 2 + 1));
        let mut s = Stream::new(&spec, 1);
        assert!(s.next_request(Nanos::MAX).is_ok());
        assert!(s.next_request(Nanos::MAX).is_ok());
        assert_eq!(s.next_request(Nanos::MAX), Err(Ended::Window));
    }
}
