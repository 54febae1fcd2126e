//! What `smartsim run`, `compare` and `sweep` show of a long run, and how Ctrl-C stops it.
//!
//! - **The bar**: a thread reads the runs' [`Progress`] ten times a second and, once a second has
//!   passed and only if standard error is a terminal, draws on it the simulated time done of the
//!   total (summed over the runs of a `compare` or a `sweep`), the event loop's steps per second and
//!   the time left. Nothing is drawn on a pipe or a file, nor for a run of less than a second; the
//!   bar is cleared before the results are printed.
//! - **Counting bars**: `reproduce` and `schedulability` count their runs or sets ([`counter`]) on
//!   a bar drawn by the same rule.
//! - **Ctrl-C** (SIGINT, through the `ctrlc` crate) asks the runs to stop: each ends at its next
//!   check ([`smartsim::engine::CHECK_EVERY`] steps), its results are those of the time simulated,
//!   marked partial, and the command prints them as usual and exits with status 130
//!   ([`INTERRUPTED`]). A second Ctrl-C ends the process at once, with status 130 and nothing more.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use smartsim::engine::Progress;

/// The exit status of a command interrupted by Ctrl-C (128 + SIGINT, as shells report it).
pub const INTERRUPTED: i32 = 130;

/// A run lasting less than this draws no bar.
const QUIET_FOR: Duration = Duration::from_secs(1);
/// How often the bar is redrawn.
const EVERY: Duration = Duration::from_millis(100);

/// The process's one [`Progress`], its Ctrl-C handler installed: the first Ctrl-C asks every run
/// watched by it to stop (and says so on standard error), a second exits at once with
/// [`INTERRUPTED`]. Called once, before the runs.
pub fn interruptible() -> anyhow::Result<Arc<Progress>> {
    let p = Arc::new(Progress::new());
    let q = Arc::clone(&p);
    ctrlc::set_handler(move || {
        if q.stopping() {
            std::process::exit(INTERRUPTED);
        }
        q.stop();
        // On a terminal, over the bar's line (the bar is drawn again below it).
        let clear = if std::io::stderr().is_terminal() { "\r\x1b[2K" } else { "" };
        eprintln!(
            "{clear}smartsim: interrupted: printing the results of the time simulated so far, marked \
             partial (Ctrl-C again to quit at once)"
        );
    })
    .map_err(|e| anyhow::anyhow!("cannot install the Ctrl-C handler: {e}"))?;
    Ok(p)
}

/// What the bar counts.
pub struct Plan {
    /// Simulated time of every run together, ns.
    pub total_ns: u64,
    /// Runs (1 for `run`; the policies of `compare`; the runs of `sweep`), and what one is called.
    pub runs: (u64, &'static str),
}

/// The bar while it may be drawn; dropping it clears it (and stops its thread).
pub struct Bar {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Bar {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Follows `p` on standard error as `plan` says, if it is a terminal (else does nothing).
pub fn bar(p: &Arc<Progress>, plan: Plan) -> Bar {
    let p = Arc::clone(p);
    // What was seen over the last second (at least two looks), for the rates.
    let mut seen: std::collections::VecDeque<Look> = Default::default();
    let total = plan.total_ns.max(1);
    follow(Arc::default(), move || {
        let now = Instant::now();
        seen.push_back(Look { at: now, steps: p.steps(), simulated: p.simulated_ns() });
        while seen.len() > 2 && now.duration_since(seen[0].at) > QUIET_FOR {
            seen.pop_front();
        }
        let msg = message(&p, &plan, &seen[0], &seen[seen.len() - 1]);
        (p.simulated_ns().min(plan.total_ns), total, msg)
    })
}

/// A bar counting steps (the runs of `reproduce`, the sets of `schedulability`), drawn as
/// [`bar`] is: on a terminal only, once a second has passed. Dropping it clears it.
pub struct Counter {
    done: Arc<AtomicU64>,
    label: Arc<Mutex<String>>,
    shown: Shown,
    _bar: Bar,
}

/// Counts `len` steps, each called `what` (`runs`, `sets`).
pub fn counter(len: u64, what: &'static str) -> Counter {
    let done = Arc::new(AtomicU64::new(0));
    let label = Arc::new(Mutex::new(String::new()));
    let shown = Shown::default();
    let (d, l, t0) = (Arc::clone(&done), Arc::clone(&label), Instant::now());
    let bar = follow(Arc::clone(&shown), move || {
        let n = d.load(Ordering::Relaxed).min(len);
        let took = t0.elapsed().as_secs_f64();
        let left = if n > 0 {
            wall(took / n as f64 * (len - n) as f64) + " left"
        } else {
            "time left unknown".into()
        };
        let label = l.lock().expect("not poisoned");
        let sep = if label.is_empty() { "" } else { ", " };
        (n, len.max(1), format!("{n}/{len} {what}{sep}{label} ({} so far, {left})", wall(took)))
    });
    Counter { done, label, shown, _bar: bar }
}

impl Counter {
    /// One step more done.
    pub fn inc(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    /// What is being done now (an experiment's name), shown after the count.
    pub fn set_label(&self, label: &str) {
        label.clone_into(&mut self.label.lock().expect("not poisoned"));
    }

    /// Runs `f` (which prints) with the bar cleared from the terminal, if it is drawn.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &*self.shown.lock().expect("not poisoned") {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }
}

/// The bar once drawn, shared with the thread that draws it.
type Shown = Arc<Mutex<Option<indicatif::ProgressBar>>>;

/// Draws on standard error, if it is a terminal, a bar whose position, length and message `look`
/// gives, every [`EVERY`] once [`QUIET_FOR`] has passed, until the returned [`Bar`] is dropped.
fn follow(shown: Shown, mut look: impl FnMut() -> (u64, u64, String) + Send + 'static) -> Bar {
    if !std::io::stderr().is_terminal() {
        return Bar { stop: None, thread: None };
    }
    let (tx, rx) = mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        let t0 = Instant::now();
        while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(EVERY) {
            let (pos, len, msg) = look();
            if t0.elapsed() < QUIET_FOR {
                continue;
            }
            let mut shown = shown.lock().expect("not poisoned");
            let b = shown.get_or_insert_with(|| {
                let b = indicatif::ProgressBar::with_draw_target(
                    Some(len),
                    indicatif::ProgressDrawTarget::stderr(),
                );
                b.set_style(
                    indicatif::ProgressStyle::with_template("{spinner} {msg} [{wide_bar}]")
                        .expect("valid template")
                        .progress_chars("=> "),
                );
                b
            });
            b.set_message(msg);
            b.set_position(pos);
        }
        if let Some(b) = shown.lock().expect("not poisoned").take() {
            b.finish_and_clear();
        }
    });
    Bar { stop: Some(tx), thread: Some(thread) }
}

/// The runs' totals at a time.
#[derive(Clone, Copy)]
struct Look {
    at: Instant,
    steps: u64,
    simulated: u64,
}

/// `36/1000 s simulated, 884k events/s, 32 s left` (and `, 3/10 runs done` before the time left for
/// several runs), the rates over the last second.
fn message(p: &Progress, plan: &Plan, first: &Look, last: &Look) -> String {
    let (n, what) = plan.runs;
    let runs = if n > 1 { format!(", {}/{n} {what} done", p.runs_done()) } else { String::new() };
    let dt = last.at.duration_since(first.at).as_secs_f64();
    let per_s = |a: u64, b: u64| if dt > 0.0 { b.saturating_sub(a) as f64 / dt } else { 0.0 };
    let (events, simulated) = (per_s(first.steps, last.steps), per_s(first.simulated, last.simulated));
    let left = if simulated > 0.0 {
        wall(plan.total_ns.saturating_sub(last.simulated) as f64 / simulated) + " left"
    } else {
        "time left unknown".to_string()
    };
    format!(
        "{}/{} s simulated, {} events/s{runs}, {left}",
        seconds(last.simulated),
        seconds(plan.total_ns),
        count(events)
    )
}

/// A wall time, short: `45 s`, `12 min`, `3.5 h`.
fn wall(s: f64) -> String {
    match s {
        s if s < 90.0 => format!("{s:.0} s"),
        s if s < 90.0 * 60.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

/// Simulated seconds: `0.25`, `36`.
fn seconds(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if s < 10.0 {
        format!("{s:.2}")
    } else {
        format!("{s:.0}")
    }
}

/// A rate to three figures: `950`, `2.13k`, `884k`, `1.20M`.
fn count(x: f64) -> String {
    let (v, unit) = match x {
        x if x >= 1e9 => (x / 1e9, "G"),
        x if x >= 1e6 => (x / 1e6, "M"),
        x if x >= 1e3 => (x / 1e3, "k"),
        x => (x, ""),
    };
    let decimals = if v >= 100.0 || unit.is_empty() {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.decimals$}{unit}")
}
