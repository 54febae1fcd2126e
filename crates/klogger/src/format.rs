//! The klogger log file, klogger's raw recording: its layout, reader and writer live with the trace
//! they convert to ([`trace::klog`]), so that every tool that reads a trace reads a recording too.

pub use trace::klog::{
    comm_bytes, comm_str, Event, Header, Kind, Log, LogWriter, FLAG_PREEMPT, FORMAT_VERSION, MAGIC,
    RECORD_SIZE,
};
pub use trace::ReadError;
