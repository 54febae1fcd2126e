//! # hourglass — what the kernel does to real-time work, seen from user space
//!
//! A modern Linux implementation of Hourglass (John Regehr, *Inferring Scheduling Behavior with
//! Hourglass*, FREENIX 2002): a synthetic real-time application whose threads poll the cycle
//! counter and record every gap in their own execution, so that a map of who ran when, context
//! switch costs, dispatch latency and missed deadlines can be inferred without touching the kernel.
//! It also carries the microbenchmarks of the papers this project builds on (Etsion et al. 2003
//! table 2; Dannenberg et al. 1993 §§6, 8, 9).
//!
//! The design decision that shapes it: **measure in the hot loop, think afterwards.** The probe
//! ([`run`]) does nothing in its loop but read the clock, compare with a per-thread calibrated
//! threshold and, on a gap, claim a slot of a preallocated buffer; everything else — the paper's
//! text formats, JSON, Perfetto traces, histograms ([`output`]) and the analyses of §5
//! ([`analyze`]) — works on the finished trace.
//!
//! Pieces: [`cli`] (appendix A's command line), [`config`] (what a run is), [`budget`] (the memory a
//! run will hold, refused over a limit before it starts), [`clock`] (invariant TSC
//! or `clock_gettime`), [`timer`] (NATIVE, HR, TIMERFD, RTC), [`sys`] (priorities, `SCHED_DEADLINE`
//! reservations, affinity, `mlockall`, RT throttling; every `unsafe` block of the crate but one),
//! [`run`] (thread models, gap detection, watchdog), [`output`], [`analyze`], [`bench`]
//! ([`punctuality`] among them), [`scenario`] (simulator scenarios, read by the `workload` crate
//! and run by its job streams, as real threads), [`diag`] (warnings and `-v` chatter through `tracing`, to stderr).
//!
//! Memory is bounded before a run starts ([`budget`]): the trace buffer, every array a thread scans
//! and every sample a thread may keep are estimated from the options or the scenario and refused over
//! 1 GiB, naming the option or key (`--force` raises the limit to three quarters of the memory
//! available, never beyond); an allocation that still fails is an error, never an abort. A scenario's
//! `working_set`, which the simulator reads as a cache refill, is scanned as an array of at most
//! 256 MiB, larger than any cache, and the mapping says so.
//!
//! Where it is weak: causes of gaps are inferred, never observed (pair it with `klogger` for
//! that); on a VM a gap may be the hypervisor; threads pinned to one CPU reproduce the paper's
//! uniprocessor, while `--cpu all` gives a trace whose gaps mix CPUs; reservations cannot be
//! pinned (Linux refuses `SCHED_DEADLINE` on a partial affinity mask); the RTC timer is untested
//! where no `/dev/rtc` exists.

#![deny(missing_docs)]
// Unsafe code lives in `sys`; the one block elsewhere (bench.rs's fork) is allowed where it stands.
#![deny(unsafe_code)]

pub mod analyze;
pub mod bench;
pub mod budget;
pub mod cli;
pub mod clock;
pub mod config;
/// Warnings and `-v` chatter through `tracing`, to stderr: the workspace's one [`diag`](::diag).
pub use diag;
pub mod output;
pub mod punctuality;
pub mod run;
pub mod scenario;
#[allow(unsafe_code)]
pub mod sys;
pub mod timer;
pub mod units;
