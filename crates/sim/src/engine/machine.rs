//! The simulated machine: its CPUs, their clock and what a CPU spends besides its task's work.
//!
//! `cpus`; `hz`, one tick per CPU, all at the same instants; billing `exact` (the policy is billed
//! the wall time a task ran) or `tick` (whoever runs at a tick is billed the whole tick; a quantum
//! between two ticks is billed nothing, Etsion 2003 §4); timer resolution `hr` (exact), `tick`
//! (fires on the next tick) or `rtc:<Hz>`, per machine with a per-task override for the task's own
//! wake-ups; overheads: the tick handler, the context switch, each scheduling decision, the cache
//! refill after a switch (`min(working_set, cache) / bandwidth`, Regehr 2002 §5.2) and after a clock
//! interrupt (`min(tick_cache, working_set, cache) / bandwidth`, Etsion 2003 §3), and a migration
//! (a task dispatched on another CPU than it last ran on) are time the CPU spends before the
//! incoming task makes progress, billed to it as the kernel would.
//!
//! Progress is accounted lazily per CPU (a CPU is brought up to date when something about it is
//! needed, [`Sim::sync`]), and each CPU's next event (its task's work done, or its slice's end) is
//! kept in a heap, so an event costs O(log N) in the number of CPUs, except ticks, which touch every
//! CPU.

use std::cmp::Reverse;

use dary_heap::QuaternaryHeap;
use sched::{CpuId, Nanos, TaskId};
use workload::{Scenario, TimerKind};

use super::Sim;
use crate::result::CpuStats;

/// Up to this many CPUs, the next CPU event is found by looking at each CPU rather than kept in a heap.
const FEW_CPUS: usize = 8;

/// Time of clock tick `k` at `hz` (exact integer arithmetic for any rate; saturating, never wrapping,
/// past 2^64 ns).
pub(super) fn tick_time(k: u64, hz: u32) -> Nanos {
    sched::clamp_nanos((k as u128 * 1_000_000_000u128) / hz as u128)
}

/// Index of the first tick at or after `t`.
fn tick_at_or_after(t: Nanos, hz: u32) -> u64 {
    let mut k = sched::clamp_nanos((t as u128 * hz as u128) / 1_000_000_000u128);
    while tick_time(k, hz) < t {
        k += 1;
    }
    k
}

/// When a timer asked for `t` fires, given its resolution (`linux-2.4` as `tick`: see [`sleep_ends`]
/// for its sleeps).
pub fn timer_fires(t: Nanos, kind: TimerKind, hz: u32) -> Nanos {
    match kind {
        TimerKind::Hr => t,
        TimerKind::Tick | TimerKind::Linux24 if hz == 0 => t,
        TimerKind::Tick | TimerKind::Linux24 => tick_time(tick_at_or_after(t, hz), hz),
        TimerKind::Rtc(f) => tick_time(tick_at_or_after(t, f), f),
    }
}

/// When a sleep begun at `now` until `until` ends: as [`timer_fires`]`(until)`, but for Linux 2.4's
/// `nanosleep` (`linux-2.4`), which counts from the jiffies at the call: tick `⌊now·hz⌋ + ⌈(until −
/// now)·hz⌉ + 1`, up to two ticks late; no sleep when `until` has passed.
pub fn sleep_ends(now: Nanos, until: Nanos, kind: TimerKind, hz: u32) -> Nanos {
    match kind {
        TimerKind::Linux24 if hz > 0 => {
            if until <= now {
                return now;
            }
            // The ticks fired by now: the last at or before it.
            let next = tick_at_or_after(now, hz);
            let jiffies = if tick_time(next, hz) == now { next } else { next - 1 };
            let d = u128::from(until - now) * u128::from(hz);
            let ticks = sched::clamp_nanos(d.div_ceil(1_000_000_000));
            tick_time(jiffies.saturating_add(ticks).saturating_add(1), hz)
        }
        _ => timer_fires(until, kind, hz),
    }
}

/// One simulated CPU: the task it executes (dispatched by the core, until it stops) and its
/// progress, accounted up to `synced`.
#[derive(Clone, Debug, Default)]
pub(super) struct Cpu {
    pub(super) running: Option<TaskId>,
    pub(super) synced: Nanos,
    /// Wall time the running task has been on the CPU since dispatch, and ticks billed to it.
    pub(super) run_wall: Nanos,
    pub(super) run_ticks: Nanos,
    pub(super) slice_end: Option<Nanos>,
    /// Overhead the running task must get through before progressing.
    pub(super) stall: Nanos,
    pub(super) dispatched_at: Nanos,
    /// The task it ran last (a different one is a context switch).
    pub(super) last_ran: Option<TaskId>,
    /// When its running task's work or slice ends (MAX: never, or nothing runs), as of the last
    /// [`Sim::arm`]; and the generation of its entry in the CPU event heap (older entries are stale).
    pub(super) next_event: Nanos,
    pub(super) gen: u64,
    pub(super) stats: CpuStats,
}

/// The CPUs and the clock.
pub(super) struct Machine {
    pub(super) cpus: Vec<Cpu>,
    /// Next own event of each CPU (its task's work done, or its slice's end): (time, CPU, gen).
    events: QuaternaryHeap<Reverse<(Nanos, CpuId, u64)>>,
    /// Few CPUs: their next events are found by looking at each (no heap), whenever one changes; the
    /// earliest (time, CPU).
    few: bool,
    next: (Nanos, usize),
    gen: u64,
    /// The clock: the next tick's index, whether ticks are simulated at all, a tick's length.
    pub(super) next_tick: u64,
    pub(super) ticks_on: bool,
    pub(super) tick_len: Nanos,
    /// What switching to each task costs its CPU: the switch itself and refilling the cache with
    /// the task's working set.
    pub(super) switch_cost: Vec<Nanos>,
    /// What a clock interrupt costs the task it interrupts: the handler and refilling what it
    /// evicted of the task's working set (`tick_cache`).
    pub(super) tick_cost: Vec<Nanos>,
}

impl Machine {
    /// The machine of `scn`; ticks are simulated when something needs them (tick billing, a tick
    /// overhead, a policy that asks for ticks).
    pub(super) fn new(scn: &Scenario, policy_ticks: bool) -> Machine {
        let m = &scn.machine;
        let n = m.cpus as usize;
        let ticks_on = m.hz > 0
            && (m.billing == workload::Billing::Tick
                || m.overhead.tick > 0
                || m.overhead.tick_cache > 0
                || policy_ticks);
        let switch_cost = scn
            .tasks
            .iter()
            .map(|spec| {
                let o = &m.overhead;
                o.switch.saturating_add(o.switch_refill(spec.working_set))
            })
            .collect();
        let tick_cost = scn
            .tasks
            .iter()
            .map(|spec| m.overhead.tick.saturating_add(m.overhead.tick_refill(spec.working_set)))
            .collect();
        Machine {
            cpus: vec![Cpu { next_event: Nanos::MAX, ..Cpu::default() }; n],
            events: QuaternaryHeap::new(),
            few: n <= FEW_CPUS,
            next: (Nanos::MAX, 0),
            gen: 0,
            next_tick: 1,
            ticks_on,
            tick_len: if m.hz > 0 { 1_000_000_000 / m.hz as u64 } else { 0 },
            switch_cost,
            tick_cost,
        }
    }
}

impl Sim<'_> {
    /// The next event of CPU `c`'s running task: its work done or its slice's end. Called whenever
    /// what it depends on changes other than by time passing (a dispatch, a stop, new work, overhead).
    #[inline]
    pub(super) fn arm(&mut self, c: usize) {
        // One CPU: its next event is computed when asked for (see `next_cpu_event`).
        if self.m.cpus.len() > 1 {
            self.arm_cpu(c);
        }
    }

    fn arm_cpu(&mut self, c: usize) {
        let t = self.cpu_event(c);
        let m = &mut self.m;
        m.cpus[c].next_event = t;
        if m.few {
            // The earliest of a few: look at each (ties: the lowest CPU).
            let mut best = (Nanos::MAX, 0);
            for k in 0..m.cpus.len() {
                if m.cpus[k].next_event < best.0 {
                    best = (m.cpus[k].next_event, k);
                }
            }
            m.next = best;
            return;
        }
        m.gen += 1;
        m.cpus[c].gen = m.gen;
        if t != Nanos::MAX {
            m.events.push(Reverse((t, c as CpuId, m.gen)));
        }
    }

    /// When CPU `c`'s running task finishes its work or its slice (MAX: neither). Time passing leaves it
    /// unchanged ([`Sim::sync`] moves `synced` forward by what it takes off the overhead and the work).
    #[inline]
    fn cpu_event(&self, c: usize) -> Nanos {
        let cpu = &self.m.cpus[c];
        let Some(r) = cpu.running else { return Nanos::MAX };
        let rem = self.tasks[r.idx()].remaining;
        let mut t = Nanos::MAX;
        if rem != Nanos::MAX {
            t = cpu.synced.saturating_add(cpu.stall).saturating_add(rem);
        }
        if let Some(s) = cpu.slice_end {
            t = t.min(s);
        }
        t
    }

    /// The earliest pending CPU event and its CPU (ties: the lowest CPU), dropping stale ones.
    pub(super) fn next_cpu_event(&mut self) -> Option<(Nanos, usize)> {
        if self.m.cpus.len() == 1 {
            let t = self.cpu_event(0);
            return (t != Nanos::MAX).then_some((t, 0));
        }
        let m = &mut self.m;
        if m.few {
            return (m.next.0 != Nanos::MAX).then_some(m.next);
        }
        while let Some(&Reverse((t, c, gen))) = m.events.peek() {
            if m.cpus[c as usize].gen == gen {
                return Some((t, c as usize));
            }
            m.events.pop();
        }
        None
    }

    /// Drops the CPU event just handled (a heap's top).
    pub(super) fn pop_cpu_event(&mut self) {
        if !self.m.few {
            self.m.events.pop();
        }
    }

    /// Bring CPU `c` up to now: its running task progresses (after paying any pending overhead).
    #[inline]
    pub(super) fn sync(&mut self, c: usize) {
        let now = self.now;
        let cpu = &mut self.m.cpus[c];
        let dt = now - cpu.synced;
        cpu.synced = now;
        if dt == 0 {
            return;
        }
        if let Some(r) = cpu.running {
            let paid = dt.min(cpu.stall);
            cpu.stall -= paid;
            cpu.stats.overhead_ns += paid;
            cpu.stats.busy_ns += dt;
            cpu.run_wall += dt;
            self.metrics.sys.overhead_ns += paid;
            let progress = dt - paid;
            let tr = &mut self.tasks[r.idx()];
            if tr.remaining != Nanos::MAX {
                tr.remaining -= progress.min(tr.remaining);
            }
            self.metrics.tasks[r.idx()].cpu += dt;
        } else {
            cpu.stats.idle_ns += dt;
            self.metrics.sys.idle_ns += dt;
        }
    }

    pub(super) fn sync_all(&mut self) {
        for c in 0..self.m.cpus.len() {
            self.sync(c);
        }
    }

    /// A clock tick on every CPU: the running task is billed the tick (tick billing) and pays the
    /// handler, and tick-driven policies hear of it.
    pub(super) fn tick(&mut self) {
        let now = self.now;
        let handler = self.scn.machine.overhead.tick;
        self.m.next_tick += 1;
        for c in 0..self.m.cpus.len() {
            self.metrics.sys.ticks += 1;
            self.sync(c);
            let running = self.m.cpus[c].running;
            if self.trace.is_some() {
                self.emit(trace::Record::Tick { cpu: c as u32, task: running.map(|r| r.0), at: now });
            }
            let cpu = &mut self.m.cpus[c];
            if let Some(r) = running {
                cpu.run_ticks += self.m.tick_len;
                // Overheads pile up at one instant without bound: saturating (see `start_on`).
                cpu.stall = cpu.stall.saturating_add(self.m.tick_cost[r.idx()]);
                self.arm(c);
            } else {
                self.metrics.sys.overhead_ns += handler;
                cpu.stats.overhead_ns += handler;
            }
            self.core.tick(c as CpuId, now);
        }
    }

    /// The time of the next tick, if ticks are simulated.
    pub(super) fn next_tick_time(&self) -> Option<Nanos> {
        self.m.ticks_on.then(|| tick_time(self.m.next_tick, self.scn.machine.hz))
    }

    /// CPU `c` starts executing task `t` now for at most `slice`: the decision, the switch (and
    /// refilling the cache) unless `t` ran there last, and a migration if it last ran elsewhere, are
    /// overhead it pays first.
    pub(super) fn start_on(&mut self, c: usize, t: TaskId, slice: Option<Nanos>, migrated: bool) {
        let mach = &self.scn.machine;
        let now = self.now;
        let cpu = &mut self.m.cpus[c];
        // Each cost is at most MAX_TIME, but any number of dispatches may add theirs at one instant
        // before time pays them off: the stall saturates (it is a sum of unboundedly many terms).
        cpu.stall = cpu.stall.saturating_add(mach.overhead.decision);
        if cpu.last_ran != Some(t) {
            self.metrics.sys.switches += 1;
            cpu.stats.switches += 1;
            cpu.stall = cpu.stall.saturating_add(self.m.switch_cost[t.idx()]);
        }
        if migrated {
            self.metrics.sys.migrations += 1;
            cpu.stall = cpu.stall.saturating_add(mach.overhead.migration);
        }
        cpu.last_ran = Some(t);
        cpu.running = Some(t);
        cpu.dispatched_at = now;
        cpu.slice_end = slice.map(|s| timer_fires(now.saturating_add(s), mach.timer, mach.hz));
        self.arm(c);
    }

    /// CPU `c` stops executing its task: what the task is billed (the wall time it ran, or the ticks
    /// that found it there), and whether it ran at all since its dispatch.
    pub(super) fn stop_on(&mut self, c: usize) -> (Nanos, bool) {
        let cpu = &mut self.m.cpus[c];
        let charged = match self.scn.machine.billing {
            workload::Billing::Exact => cpu.run_wall,
            workload::Billing::Tick => cpu.run_ticks,
        };
        let ran = self.now > cpu.dispatched_at;
        cpu.running = None;
        cpu.slice_end = None;
        cpu.run_wall = 0;
        cpu.run_ticks = 0;
        // Overhead not paid yet (a task stopped at the instant it was dispatched) is paid by the next.
        (charged, ran)
    }
}
