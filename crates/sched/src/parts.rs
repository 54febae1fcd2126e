//! One policy per CPU, each with a view of its own tasks under ids of its own: what partitioned
//! scheduling ([`crate::partition`]) and per-CPU run queues ([`crate::percpu`]) are made of.
//!
//! **State.** Per CPU its policy (built for one CPU) and its [`View`] of the tasks it holds, under
//! local ids dense per CPU (so a policy's per-task vectors hold only its own tasks); per task the CPU
//! whose part holds it and its local id there. A task's part sees it on its CPU 0.
//!
//! **What it does not do.** It decides nothing: which part holds a task, and when a task moves, is the
//! owner's ([`crate::partition::Partitioned`] never moves one; [`crate::percpu::PerCpu`] places and
//! balances). [`Parts::place`] and [`Parts::unplace`] change only the views and the ids; telling the
//! part's policy (admit, exit, or a migration's detach and attach) is the caller's.

use crate::{Availability, CpuId, Nanos, Notification, Policy, TaskId, TaskParams, View};

/// Where a task lives: its CPU and its id in that CPU's part.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Home {
    pub cpu: CpuId,
    pub local: TaskId,
}

/// One CPU's own policy and its view of its own tasks, by local id.
pub(crate) struct Part<Q: ?Sized> {
    pub policy: Box<Q>,
    pub view: View,
    /// Global ids by local id, and local ids free for reuse.
    global: Vec<TaskId>,
    free: Vec<TaskId>,
}

/// A policy per CPU and the tasks each holds.
pub(crate) struct Parts<Q: ?Sized + Policy> {
    parts: Vec<Part<Q>>,
    /// Per global task id: its home, while held.
    home: Vec<Option<Home>>,
    notes: Vec<Notification>,
    /// The time the per-CPU views were last brought to.
    now: Nanos,
}

impl<Q: ?Sized + Policy> Parts<Q> {
    /// `inner[k]` is CPU `k`'s policy, built for one CPU.
    pub fn new(inner: Vec<Box<Q>>) -> Self {
        assert!(!inner.is_empty());
        let parts = inner
            .into_iter()
            .map(|policy| Part { policy, view: View::new(1), global: Vec::new(), free: Vec::new() })
            .collect();
        Parts { parts, home: Vec::new(), notes: Vec::new(), now: 0 }
    }

    /// The number of CPUs.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// The home of a held task.
    pub fn home(&self, t: TaskId) -> Home {
        self.home[t.idx()].expect("a task held by a per-CPU policy")
    }

    /// The CPU whose part holds `t`, if one does.
    pub fn cpu_of(&self, t: TaskId) -> Option<CpuId> {
        self.home.get(t.idx()).copied().flatten().map(|h| h.cpu)
    }

    /// Brings every CPU's view to the time of `v` (the policies' `&self` answers read it).
    pub fn sync(&mut self, v: &View) {
        if self.now != v.now() {
            self.now = v.now();
            for p in &mut self.parts {
                p.view.set_now(v.now());
            }
        }
    }

    /// `t`'s part (brought to the time of `v`) and its local id.
    pub fn of(&mut self, t: TaskId, v: &View) -> (&mut Part<Q>, TaskId) {
        self.sync(v);
        let h = self.home(t);
        (&mut self.parts[h.cpu as usize], h.local)
    }

    /// CPU `cpu`'s part.
    pub fn cpu(&self, cpu: CpuId) -> &Part<Q> {
        &self.parts[cpu as usize]
    }

    /// CPU `cpu`'s part, to change (bring it to the time first with [`Parts::sync`]).
    pub fn cpu_mut(&mut self, cpu: CpuId) -> &mut Part<Q> {
        &mut self.parts[cpu as usize]
    }

    /// The global id of CPU `cpu`'s local task `local`.
    pub fn global(&self, cpu: CpuId, local: TaskId) -> TaskId {
        self.parts[cpu as usize].global[local.idx()]
    }

    /// A task's parameters as its part sees them: its affinity is the part's business, not the
    /// part's policy's (each part has one CPU).
    pub fn local_params(p: &TaskParams) -> TaskParams {
        TaskParams { cpus: None, ..p.clone() }
    }

    /// Puts `t` into CPU `cpu`'s part under a new local id, admitted to that part's view (blocked)
    /// with parameters `p` (without affinity); returns the local id. The part's policy is not told.
    pub fn place(&mut self, cpu: CpuId, t: TaskId, p: &TaskParams) -> TaskId {
        let part = &mut self.parts[cpu as usize];
        let local = part.free.pop().unwrap_or(TaskId(part.global.len() as u32));
        if local.idx() == part.global.len() {
            part.global.push(t);
        } else {
            part.global[local.idx()] = t;
        }
        *crate::slot(&mut self.home, t) = Some(Home { cpu, local });
        part.view.set_now(self.now);
        part.view.admit(local, &Self::local_params(p));
        local
    }

    /// Takes `t` out of its part, which must not run it: its view forgets it and its local id is
    /// free again. The notifications the part's policy holds are moved out first (with `t`'s global
    /// id), so a reused local id cannot be mistaken for it. The part's policy must have been told
    /// (exit, or a migration's detach) before.
    pub fn unplace(&mut self, t: TaskId) -> Home {
        let h = self.home(t);
        let mut local_notes = Vec::new();
        let part = &mut self.parts[h.cpu as usize];
        part.view.exit(h.local);
        part.policy.take_notifications(&mut local_notes);
        self.globalize(h.cpu, &mut local_notes);
        self.parts[h.cpu as usize].free.push(h.local);
        self.home[t.idx()] = None;
        h
    }

    fn globalize(&mut self, cpu: CpuId, local: &mut Vec<Notification>) {
        for n in local.drain(..) {
            self.notes.push(Notification { task: self.parts[cpu as usize].global[n.task.idx()], ..n });
        }
    }

    /// [`Policy::availability`] of `t`, answered by its part at the time of `v`.
    pub fn availability(&self, t: TaskId, v: &View) -> Availability {
        let h = self.home(t);
        let part = &self.parts[h.cpu as usize];
        let mut view = part.view.clone();
        view.set_now(v.now());
        part.policy.availability(h.local, &view)
    }

    /// [`Policy::take_notifications`]: every part's, with global ids.
    pub fn take_notifications(&mut self, out: &mut Vec<Notification>) {
        let mut local = Vec::new();
        for cpu in 0..self.parts.len() {
            self.parts[cpu].policy.take_notifications(&mut local);
            self.globalize(cpu as CpuId, &mut local);
        }
        out.append(&mut self.notes);
    }

    /// [`Policy::next_timer`]: the earliest of the parts'.
    pub fn next_timer(&self) -> Option<Nanos> {
        self.parts.iter().filter_map(|p| p.policy.next_timer()).min()
    }

    /// [`Policy::timer`]: each part whose timer is due.
    pub fn timer(&mut self, v: &View) -> bool {
        self.sync(v);
        let mut resched = false;
        for p in &mut self.parts {
            if p.policy.next_timer().is_some_and(|t| t <= v.now()) {
                resched |= p.policy.timer(&p.view);
            }
        }
        resched
    }

    /// [`Policy::kick`]: the CPU of the first part whose policy kicks its CPU.
    pub fn kick(&mut self, v: &View) -> Option<CpuId> {
        self.sync(v);
        let kicked = self.parts.iter_mut().position(|p| p.policy.kick(&p.view).is_some())?;
        Some(kicked as CpuId)
    }

    /// [`Policy::counters`]: the parts' summed by name.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut sum: Vec<(&'static str, u64)> = Vec::new();
        for p in &self.parts {
            for (k, v) in p.policy.counters() {
                match sum.iter_mut().find(|(x, _)| *x == k) {
                    Some(e) => e.1 += v,
                    None => sum.push((k, v)),
                }
            }
        }
        sum
    }

    /// [`Policy::walked`]: the parts' added up.
    pub fn walked(&self) -> u64 {
        self.parts.iter().map(|p| p.policy.walked()).sum()
    }
}
