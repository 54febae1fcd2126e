//! # scx_smart: the policies of `crates/sched` scheduling real Linux tasks through sched_ext
//!
//! The binary `scx_smart` (src/main.rs) loads scx_rustland_core's BPF scheduler, which queues every
//! runnable task to user space; there a [`driver::Driver`] turns what the kernel reports into the calls of
//! the [`sched::Policy`] trait, the same calls the simulator makes, and dispatches the policy's choice.
//! This library holds the driver alone, without BPF, so it can be tested (and reused) anywhere: the
//! binary's global allocator (scx_rustland_core's fixed, locked arena) does not suit a test harness.
//! [`jobs`] tells where a periodic test thread's time went, job by job (`smart-periodic --jobs`);
//! [`passes`] times the scheduler's loop (why it stopped, when sched_ext ejects it);
//! [`cli`] holds what the test programs of `src/bin/` share of their command lines (`-v`/`-q`).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cli;
pub mod driver;
pub mod jobs;
pub mod passes;
