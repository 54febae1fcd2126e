//! Perfetto export: Chrome trace-event JSON (opens in ui.perfetto.dev and chrome://tracing).
//!
//! One track per CPU (process "CPUs", thread = CPU id) holding every quantum as a complete event
//! named after its task, with the end reason in `args`; recorded ticks are instant events on the
//! CPU's track. Timestamps are microseconds from the start of the recording.

use std::io::Write;

use serde_json::json;

use crate::analysis::Trace;

/// Writes the trace as Chrome trace-event JSON.
pub fn perfetto<W: Write>(trace: &Trace, mut w: W) -> std::io::Result<()> {
    let us = |t: u64| (t - trace.start) as f64 / 1e3;
    writeln!(w, "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[")?;
    let mut first = true;
    let mut emit = |w: &mut W, v: serde_json::Value| -> std::io::Result<()> {
        if !first {
            writeln!(w, ",")?;
        }
        first = false;
        serde_json::to_writer(&mut *w, &v).map_err(std::io::Error::other)
    };
    emit(&mut w, json!({"ph":"M","pid":0,"name":"process_name","args":{"name":"CPUs"}}))?;
    for cpu in 0..trace.ticks.len() {
        emit(
            &mut w,
            json!({"ph":"M","pid":0,"tid":cpu,"name":"thread_name","args":{"name":format!("CPU {cpu}")}}),
        )?;
    }
    for q in &trace.quanta {
        if q.tid == 0 {
            continue;
        }
        let name = trace.tasks.get(&q.tid).map(|m| m.name.as_str()).unwrap_or("?");
        emit(
            &mut w,
            json!({"ph":"X","pid":0,"tid":q.cpu,"ts":us(q.start),"dur":(q.end - q.start) as f64 / 1e3,
                   "name":format!("{name} ({})", q.tid),
                   "args":{"tid":q.tid,"end":q.end_kind,"complete":q.complete,"ticks":q.observed_ticks}}),
        )?;
    }
    for (cpu, ticks) in trace.ticks.iter().enumerate() {
        for &t in ticks {
            emit(&mut w, json!({"ph":"i","s":"t","pid":0,"tid":cpu,"ts":us(t),"name":"tick"}))?;
        }
    }
    writeln!(w, "\n]}}")?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tests::{header, sw};

    #[test]
    fn export_is_valid_json_with_one_event_per_quantum() {
        let ev = vec![sw(1000, 0, 0, 5, false), sw(3000, 0, 5, 6, false), sw(4000, 0, 6, 0, true)];
        let t = Trace::from_events(header(1), &ev);
        let mut out = Vec::new();
        perfetto(&t, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let evs = v["traceEvents"].as_array().unwrap();
        let x: Vec<_> = evs.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(x.len(), 2);
        assert_eq!(x[0]["name"], "t5 (5)");
        assert_eq!(x[0]["ts"], 0.0);
        assert_eq!(x[0]["dur"], 2.0);
        assert_eq!(x[1]["args"]["end"], "blocked");
    }
}
