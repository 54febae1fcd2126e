//! Scenario mode: the tasks of a simulator scenario (the TOML of DESIGN.md) run as real Hourglass
//! threads, so one workload can be simulated and measured and the two JSON outputs compared.
//!
//! This is a small reader for the contract keys only, kept behind this module so that it can be
//! replaced by the project's `workload` crate (the full parser and validator) without touching the
//! rest of hourglass: [`load`] is the whole interface.
//!
//! Mapping onto the real kernel (which cannot run the simulator's policies):
//!
//! | `scheduler.policy` | Linux class |
//! |---|---|
//! | `fifo`, `rr`, `svr4-rt`, `fixed-priority` | `SCHED_FIFO`, priority + 1 (1..=98) |
//! | `cbs`, `edf` | periodic tasks `SCHED_DEADLINE` (runtime = largest `exec`, period), others fair |
//! | anything else (`smart`, `cfs`, `eevdf`, `wfq`, ...) | fair class, nice = −log₁.₂₅(share); share 0 = `SCHED_IDLE` |
//!
//! Models: `cpu` (with `work`: finite; with `working_set`: scanning), `cpu-scan`, `cpu-yield`
//! (`exec` = CPU between yields), `periodic` (`exec` fixed or `a..b`, `deadline`, `count`,
//! `on_miss`, `jitter`), `cpu-periodic`, `latency` (`period`). Timers: `hr` → HR, `rtc:<Hz>` →
//! RTC, `tick` → NATIVE (Linux has no tick-aligned user timers), `timerfd`, `native`.
//!
//! Weak: `interactive` tasks and distributions other than fixed and uniform are refused; the
//! machine's `hz`, `billing` and overheads describe a simulated machine and are ignored (reported
//! as warnings); SMART-only keys (`estimate*`, `notify`, `latency_tolerance`) have no kernel
//! counterpart and are ignored with a warning.

use crate::config::{CpuChoice, RunConfig, ThreadSpec, Workload, MAX_DURATION};
use crate::sys::Priority;
use crate::timer::TimerKind;
use crate::units::{parse_size, parse_time, Nanos};
use std::path::Path;
use toml::Value;

struct Ctx<'a> {
    file: String,
    src: &'a str,
    errors: Vec<String>,
    warnings: Vec<String>,
}

impl Ctx<'_> {
    /// Line:col of the first occurrence of `key =` after byte `from` (the TOML value API has no
    /// spans; this finds the key textually, which is exact for the simple files scenarios are).
    fn pos(&self, from: usize, key: &str) -> (usize, usize) {
        let mut off = None;
        let mut search = from.min(self.src.len());
        while let Some(i) = self.src[search..].find(key) {
            let at = search + i;
            let line_start = self.src[..at].rfind('\n').map_or(0, |x| x + 1);
            let before = self.src[line_start..at].trim();
            let after = self.src[at + key.len()..].trim_start();
            if before.is_empty() && after.starts_with('=') {
                off = Some(at);
                break;
            }
            search = at + key.len();
        }
        let at = off.unwrap_or(from.min(self.src.len()));
        let line = self.src[..at].matches('\n').count() + 1;
        let col = at - self.src[..at].rfind('\n').map_or(0, |x| x + 1) + 1;
        (line, col)
    }
    fn err(&mut self, from: usize, key: &str, field: &str, msg: impl Into<String>) {
        let (l, c) = self.pos(from, key);
        self.errors.push(format!("{}:{l}:{c}: {field}: {}", self.file, msg.into()));
    }
}

/// Byte offsets of each `[[task]]` header, to place errors.
fn task_offsets(src: &str) -> Vec<usize> {
    let mut v = Vec::new();
    let mut off = 0;
    for line in src.split_inclusive('\n') {
        if line.trim_start().starts_with("[[task]]") {
            v.push(off);
        }
        off += line.len();
    }
    v
}

fn section_offset(src: &str, name: &str) -> usize {
    src.find(&format!("[{name}]")).unwrap_or(0)
}

/// Loads a scenario into a run configuration. `base` carries the command line's run options;
/// `duration_given` makes its duration override the scenario's. Every problem is listed.
pub fn load(path: &Path, base: RunConfig, duration_given: bool) -> Result<RunConfig, String> {
    let file = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| format!("{file}: {e}"))?;
    load_str(&src, &file, base, duration_given)
}

/// [`load`] from a string (`file` names it in errors).
pub fn load_str(src: &str, file: &str, base: RunConfig, duration_given: bool) -> Result<RunConfig, String> {
    let root: toml::Table = src.parse().map_err(|e: toml::de::Error| {
        let (l, c) = e.span().map_or((1, 1), |s| {
            let at = s.start.min(src.len());
            (src[..at].matches('\n').count() + 1, at - src[..at].rfind('\n').map_or(0, |x| x + 1) + 1)
        });
        format!("{file}:{l}:{c}: {}", e.message())
    })?;
    let mut cx = Ctx { file: file.to_string(), src, errors: vec![], warnings: vec![] };
    let mut cfg = base;
    cfg.source = file.to_string();
    let empty = toml::Table::new();
    let machine = root.get("machine").and_then(Value::as_table).unwrap_or(&empty);
    let moff = section_offset(src, "machine");
    let time = |cx: &mut Ctx, v: &Value, from: usize, key: &str, field: &str| -> Option<Nanos> {
        match v.as_str() {
            Some(s) => match parse_time(s) {
                Ok(t) => Some(t),
                Err(e) => {
                    cx.err(from, key, field, e.to_string());
                    None
                }
            },
            None => {
                cx.err(from, key, field, "a time is a string with a unit, e.g. \"40ms\"");
                None
            }
        }
    };
    if !duration_given {
        match machine.get("duration") {
            Some(v) => {
                if let Some(d) = time(&mut cx, v, moff, "duration", "machine.duration") {
                    if d == 0 {
                        cx.err(moff, "duration", "machine.duration", "must be positive");
                    } else if d > MAX_DURATION && !cfg.force {
                        cx.err(
                            moff,
                            "duration",
                            "machine.duration",
                            format!(
                                "{} is longer than hourglass's 10m cap for real runs: shorten it with -d, or add --force",
                                crate::units::format_time(d)
                            ),
                        );
                    } else {
                        cfg.duration = d;
                    }
                }
            }
            None => cx.err(moff, "[machine]", "machine.duration", "missing (e.g. duration = \"10s\")"),
        }
    }
    if let Some(s) = machine.get("seed") {
        match s.as_integer() {
            Some(x) if x >= 0 => cfg.seed = Some(x as u64),
            _ => cx.err(moff, "seed", "machine.seed", "must be a non-negative integer"),
        }
    }
    for k in ["hz", "billing", "overhead", "sample"] {
        if machine.contains_key(k) {
            cx.warnings
                .push(format!("machine.{k} describes the simulated machine; the real kernel's is used"));
        }
    }
    if machine.get("cpus").and_then(Value::as_integer).is_some_and(|c| c > 1) && cfg.cpu != CpuChoice::All {
        cx.warnings.push("machine.cpus > 1: add --cpu all to let the threads use several CPUs".into());
    }
    let parse_timer = |cx: &mut Ctx, v: &Value, from: usize, field: &str| -> Option<TimerKind> {
        let s = v.as_str().unwrap_or("");
        match s {
            "hr" => Some(TimerKind::Hr),
            "native" => Some(TimerKind::Native),
            "timerfd" => Some(TimerKind::Timerfd),
            "tick" => {
                cx.warnings.push(format!(
                    "{field} = \"tick\": Linux has no tick-aligned user timers; NATIVE (relative nanosleep) is used"
                ));
                Some(TimerKind::Native)
            }
            s if s.starts_with("rtc:") => Some(TimerKind::Rtc),
            _ => {
                cx.err(
                    from,
                    "timer",
                    field,
                    format!("unknown timer {v} (\"hr\", \"tick\", \"rtc:<Hz>\", \"timerfd\", \"native\")"),
                );
                None
            }
        }
    };
    let machine_timer = match machine.get("timer") {
        Some(v) => parse_timer(&mut cx, v, moff, "machine.timer").unwrap_or(TimerKind::Hr),
        None => TimerKind::Hr,
    };
    let sched = root.get("scheduler").and_then(Value::as_table).unwrap_or(&empty);
    let policy = sched.get("policy").and_then(Value::as_str).unwrap_or("smart").to_string();
    #[derive(PartialEq)]
    enum Class {
        Fifo,
        Deadline,
        Fair,
    }
    let class = match policy.as_str() {
        "fifo" | "rr" | "svr4-rt" | "fixed-priority" => Class::Fifo,
        "cbs" | "edf" => Class::Deadline,
        _ => Class::Fair,
    };
    if !matches!(policy.as_str(), "cfs" | "eevdf" | "fifo" | "cbs") {
        cx.warnings.push(format!(
            "policy \"{policy}\" is not in this kernel: tasks run under Linux's {}",
            match class {
                Class::Fifo => "SCHED_FIFO (the closest fixed-priority class)",
                Class::Deadline => "SCHED_DEADLINE (EDF with CBS budgets)",
                Class::Fair => "fair class (EEVDF) with nice levels from the shares",
            }
        ));
    }
    cfg.policy = format!(
        "linux-{}",
        match class {
            Class::Fifo => "fifo",
            Class::Deadline => "deadline",
            Class::Fair => "fair",
        }
    );
    let tasks = match root.get("task").and_then(Value::as_array) {
        Some(t) if !t.is_empty() => t.clone(),
        _ => {
            cx.err(0, "[[task]]", "task", "no [[task]] in the scenario");
            vec![]
        }
    };
    let offs = task_offsets(src);
    let mut threads = Vec::new();
    let mut ignored = std::collections::BTreeSet::new();
    for (i, t) in tasks.iter().enumerate() {
        let from = offs.get(i).copied().unwrap_or(0);
        let Some(t) = t.as_table() else { continue };
        let name = t.get("name").and_then(Value::as_str).unwrap_or("").to_string();
        let f = |k: &str| format!("task[{i}].{k} (task \"{name}\")");
        if name.is_empty() {
            cx.err(from, "[[task]]", &format!("task[{i}].name"), "missing");
        }
        let model = t.get("model").and_then(Value::as_str).unwrap_or("cpu").to_string();
        let get_time = |cx: &mut Ctx, k: &str| t.get(k).and_then(|v| time(cx, v, from, k, &f(k)));
        let exec_range = |cx: &mut Ctx| -> Option<(Nanos, Nanos)> {
            let v = t.get("exec")?;
            let s = v.as_str().unwrap_or("");
            if let Some((a, b)) = s.split_once("..") {
                let (a, b) = (parse_time(a), parse_time(b));
                match (a, b) {
                    (Ok(a), Ok(b)) if a <= b && b > 0 => Some((a, b)),
                    (Ok(_), Ok(_)) => {
                        cx.err(from, "exec", &f("exec"), "need 0 < a <= b in \"a..b\"");
                        None
                    }
                    (Err(e), _) | (_, Err(e)) => {
                        cx.err(from, "exec", &f("exec"), e.to_string());
                        None
                    }
                }
            } else if s.contains('(') {
                cx.err(
                    from,
                    "exec",
                    &f("exec"),
                    format!("hourglass runs fixed and uniform (\"a..b\") execution times, not {s}"),
                );
                None
            } else {
                time(cx, v, from, "exec", &f("exec")).filter(|&x| x > 0).map(|x| (x, x))
            }
        };
        let mut spec = ThreadSpec::new(i);
        spec.name = if name.is_empty() { format!("task {i}") } else { name.clone() };
        spec.timer = match t.get("timer") {
            Some(v) => parse_timer(&mut cx, v, from, &f("timer")).unwrap_or(machine_timer),
            None => machine_timer,
        };
        if let Some(s) = get_time(&mut cx, "start") {
            spec.start = s;
        }
        spec.finish = get_time(&mut cx, "stop");
        let ws = t.get("working_set").and_then(|v| match v {
            Value::Integer(b) if *b > 0 => Some(*b as usize),
            Value::String(s) => match parse_size(&s.replace("KiB", "KB").replace("MiB", "MB")) {
                Ok(b) if b >= 64 => Some(b),
                _ => {
                    cx.err(
                        from,
                        "working_set",
                        &f("working_set"),
                        format!("'{s}' is not a size like \"256KiB\""),
                    );
                    None
                }
            },
            _ => None,
        });
        let need = |cx: &mut Ctx, k: &str, v: Option<Nanos>| -> Nanos {
            if v.is_none() && !t.contains_key(k) {
                cx.err(from, "model", &f(k), format!("required by model \"{model}\""));
            }
            v.unwrap_or(1)
        };
        spec.workload = match model.as_str() {
            "cpu" => {
                spec.work = get_time(&mut cx, "work");
                match ws {
                    Some(bytes) => Workload::CpuScan { bytes },
                    None => Workload::Cpu,
                }
            }
            "cpu-scan" => Workload::CpuScan {
                bytes: ws.unwrap_or_else(|| {
                    cx.err(from, "model", &f("working_set"), "required by model \"cpu-scan\"");
                    65536
                }),
            },
            "cpu-yield" => {
                let e = exec_range(&mut cx).map(|x| x.0);
                let amount = need(&mut cx, "exec", e);
                match ws {
                    Some(bytes) => Workload::CpuScanYield { bytes, amount },
                    None => Workload::CpuYield { amount },
                }
            }
            "periodic" | "cpu-periodic" => {
                let e = exec_range(&mut cx);
                let p = get_time(&mut cx, "period");
                let period = need(&mut cx, "period", p);
                let (lo, hi) = e.unwrap_or_else(|| {
                    need(&mut cx, "exec", None);
                    (1, 1)
                });
                if hi > period {
                    cx.err(from, "exec", &f("exec"), "exceeds the period");
                }
                let deadline = get_time(&mut cx, "deadline");
                if deadline.is_some_and(|d| d > period || d == 0) {
                    cx.err(from, "deadline", &f("deadline"), "hourglass needs 0 < deadline <= period");
                }
                let finish_late = match t.get("on_miss").and_then(Value::as_str) {
                    None | Some("discard") => false,
                    Some("finish") => true,
                    Some(o) => {
                        cx.err(
                            from,
                            "on_miss",
                            &f("on_miss"),
                            format!("\"{o}\" is not \"discard\" or \"finish\""),
                        );
                        false
                    }
                };
                spec.count = match t.get("count") {
                    None => None,
                    Some(Value::Integer(c)) if *c > 0 => Some(*c as u64),
                    Some(_) => {
                        cx.err(from, "count", &f("count"), "must be a positive integer");
                        None
                    }
                };
                if model == "periodic" {
                    Workload::Periodic {
                        amount: lo,
                        amount_max: (hi != lo).then_some(hi),
                        period,
                        deadline,
                        finish_late,
                        jitter: get_time(&mut cx, "jitter").unwrap_or(0),
                    }
                } else {
                    Workload::CpuPeriodic { amount: hi, period }
                }
            }
            "latency" => {
                let p = get_time(&mut cx, "period");
                Workload::Lat { period: need(&mut cx, "period", p) }
            }
            other => {
                cx.err(
                    from,
                    "model",
                    &f("model"),
                    format!("model \"{other}\" cannot run as an hourglass thread (cpu, cpu-scan, cpu-yield, periodic, cpu-periodic, latency)"),
                );
                Workload::Cpu
            }
        };
        let share =
            t.get("share").and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64))).unwrap_or(1.0);
        let prio = t.get("priority").and_then(Value::as_integer).unwrap_or(0);
        if share < 0.0 {
            cx.err(from, "share", &f("share"), "must not be negative");
        }
        match class {
            Class::Fifo => spec.priority = Priority::Fifo((prio + 1).clamp(1, 98) as u8),
            Class::Deadline => {
                if let Workload::Periodic { amount, amount_max, period, .. } = spec.workload {
                    spec.reservation = Some(crate::config::Reservation {
                        amount: amount_max.unwrap_or(amount).max(1024),
                        period,
                        soft: false,
                    });
                }
            }
            Class::Fair => {
                spec.priority = if share == 0.0 {
                    Priority::Idle
                } else {
                    Priority::Nice((-(share.ln() / 1.25f64.ln())).round().clamp(-20.0, 19.0) as i8)
                }
            }
        }
        for k in t.keys() {
            if matches!(k.as_str(), "latency_tolerance" | "notify" | "think" | "burst")
                || k.starts_with("estimate")
            {
                ignored.insert(k.clone());
            }
        }
        threads.push(spec);
    }
    if !ignored.is_empty() {
        cx.warnings.push(format!(
            "keys with no kernel counterpart are ignored: {}",
            ignored.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    if !cx.errors.is_empty() {
        return Err(cx.errors.join("\n"));
    }
    for th in &threads {
        if th.start >= cfg.duration {
            return Err(format!("{file}: task \"{}\" starts after the end of the run", th.name));
        }
    }
    cfg.threads = threads;
    cfg.scenario_warnings = cx.warnings;
    cfg.scenario_policy = Some(policy);
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[machine]
duration = "2s"
hz = 1000
timer = "hr"
seed = 7

[scheduler]
policy = "fifo"

[[task]]
name = "audio"
model = "periodic"
exec = "2ms..3ms"
period = "10ms"
deadline = "8ms"
count = 50
on_miss = "finish"
priority = 2

[[task]]
name = "batch"
model = "cpu"
work = "500ms"
working_set = "256KiB"
"#;

    #[test]
    fn contract_keys_map_onto_threads() {
        let c = load_str(GOOD, "good.toml", RunConfig::new(0), false).unwrap();
        assert_eq!(c.duration, 2_000_000_000);
        assert_eq!(c.seed, Some(7));
        assert_eq!(c.policy, "linux-fifo");
        assert_eq!(c.threads[0].name, "audio");
        assert_eq!(c.threads[0].priority, Priority::Fifo(3));
        assert_eq!(c.threads[0].count, Some(50));
        assert_eq!(
            c.threads[0].workload,
            Workload::Periodic {
                amount: 2_000_000,
                amount_max: Some(3_000_000),
                period: 10_000_000,
                deadline: Some(8_000_000),
                finish_late: true,
                jitter: 0
            }
        );
        assert_eq!(c.threads[1].workload, Workload::CpuScan { bytes: 256 * 1024 });
        assert_eq!(c.threads[1].work, Some(500_000_000));
    }

    #[test]
    fn every_error_names_file_line_and_field() {
        let bad = "[machine]\nduration = \"10\"\n\n[[task]]\nname = \"R1\"\nmodel = \"periodic\"\nperiod = \"40ms\"\nexec = \"exp(2ms)\"\n";
        let e = load_str(bad, "bad.toml", RunConfig::new(0), false).unwrap_err();
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(lines.len(), 2, "{e}");
        assert!(lines[0].starts_with("bad.toml:2:1: machine.duration:"), "{e}");
        assert!(lines[1].starts_with("bad.toml:8:1: task[0].exec (task \"R1\"):"), "{e}");
        let e = load_str("[machine\n", "x.toml", RunConfig::new(0), false).unwrap_err();
        assert!(e.starts_with("x.toml:1:"), "{e}");
    }

    #[test]
    fn fair_policies_use_nice_from_share() {
        let s = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"smart\"\n[[task]]\nname = \"a\"\nmodel = \"cpu\"\nshare = 3\n[[task]]\nname = \"b\"\nmodel = \"cpu\"\nshare = 0\n";
        let c = load_str(s, "s.toml", RunConfig::new(0), false).unwrap();
        assert_eq!(c.threads[0].priority, Priority::Nice(-5)); // 1.25^5 ~ 3
        assert_eq!(c.threads[1].priority, Priority::Idle);
        assert!(c.scenario_warnings.iter().any(|w| w.contains("\"smart\" is not in this kernel")));
    }
}
