//! klogger: scheduling events from an unmodified Linux kernel via BPF, and the clock analyses of
//! Etsion, Tsafrir and Feitelson (SIGMETRICS 2003) on real traces.
#![deny(missing_docs)]

pub mod format;
pub mod record;

#[allow(clippy::all, missing_docs)]
mod skel {
    include!(concat!(env!("OUT_DIR"), "/klogger.skel.rs"));
}
