//! CPU shares per window of time (the dissertation's figures are cumulative CPU against time; a
//! window's share is the slope over it): each task's CPU time inside `[from, from + window)`, as a
//! fraction of one CPU, for every window of a trace. Streaming: it keeps one number per task and
//! window, never the records; a stretch across a window boundary is split exactly.
//!
//! Its work is bounded by the windows it can emit, never by the length of a stretch: a stretch
//! covering many windows is kept as its two cut ends and one span of whole windows, which
//! [`Windows::finish`] adds up window by window; nothing past [`MAX_WINDOWS`] windows from the start
//! is counted or emitted (a hostile record 2^62 ns long costs what a short one does). Time:
//! O(records + windows × tasks + spans × log spans).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::Record;

/// The most windows one report gives (a window too small for the run would take time and memory
/// without bound).
pub const MAX_WINDOWS: u64 = 100_000;

/// The most windows × tasks one report gives: each is a number kept, a cell of the table and a
/// value of the JSON (100,000 windows of 20,000 tasks once took 2 GB and aborted; 10⁷ cells took
/// 1.1 to 1.4 GB, about 130 bytes a cell), so that a report stays well within 1 GiB.
pub const MAX_CELLS: u64 = 2_000_000;

/// Checks a user's window length against the length `len` of what it divides (ns) and the `tasks`
/// it has a column each for: positive, at most [`MAX_WINDOWS`] windows and [`MAX_CELLS`] cells.
pub fn check(len: u64, window: u64, tasks: usize) -> Result<(), String> {
    if window == 0 {
        return Err("--window must be positive".into());
    }
    let n = len.div_ceil(window);
    if n > MAX_WINDOWS {
        return Err(format!(
            "--window {window} ns cuts {len} ns into {n} windows, more than {MAX_WINDOWS}: take a longer window"
        ));
    }
    let cells = n.saturating_mul(tasks as u64);
    if cells > MAX_CELLS {
        return Err(format!(
            "--window {window} ns gives {n} windows of {tasks} tasks, {cells} shares, more than {MAX_CELLS}: \
             take a longer window"
        ));
    }
    Ok(())
}

/// One window's shares.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Window {
    /// Start (ns, the trace's clock).
    pub from_ns: u64,
    /// End: the next window's start, or the end of the trace.
    pub to_ns: u64,
    /// CPU time over the window's length (a fraction of one CPU), one per task in [`Windows::tasks`]
    /// order.
    pub shares: Vec<f64>,
}

/// The accumulator: give it every record ([`Windows::add`]), then [`Windows::finish`].
#[derive(Clone, Debug)]
pub struct Windows {
    start: u64,
    window: u64,
    /// Task id → column, in order of first appearance.
    column: BTreeMap<u32, usize>,
    order: Vec<u32>,
    /// Per window, CPU ns per column (the cut ends of stretches).
    cpu: Vec<Vec<u64>>,
    /// Spans of whole windows a column ran through: (first window, window after the last, column).
    spans: Vec<(usize, usize, usize)>,
    end: u64,
    ended: Option<u64>,
}

impl Windows {
    /// Windows of `window` ns from `start` (the trace header's `start_ns`).
    pub fn new(start: u64, window: u64) -> Windows {
        Windows {
            start,
            window: window.max(1),
            column: BTreeMap::new(),
            order: Vec::new(),
            cpu: Vec::new(),
            spans: Vec::new(),
            end: start,
            ended: None,
        }
    }

    fn col(&mut self, task: u32) -> usize {
        let n = self.order.len();
        *self.column.entry(task).or_insert_with(|| {
            self.order.push(task);
            n
        })
    }

    /// Takes one record into account.
    pub fn add(&mut self, r: &Record) {
        match *r {
            Record::Task { task, .. } => {
                self.col(task);
            }
            Record::Run { task, start, end, .. } => {
                self.end = self.end.max(end);
                let c = self.col(task);
                // Only what falls in the windows that can be emitted counts.
                let (t0, t1) = (start.max(self.start), end.min(self.edge(MAX_WINDOWS as usize)));
                if t0 >= t1 {
                    return;
                }
                let (k0, k1) = (self.index(t0), self.index(t1));
                if k0 == k1 {
                    self.put(k0, c, t1 - t0);
                    return;
                }
                self.put(k0, c, self.edge(k0 + 1) - t0);
                if k1 > k0 + 1 {
                    self.spans.push((k0 + 1, k1, c));
                }
                // A file's times go up to 2^64 − 1: the edges saturate rather than wrap.
                let tail = t1.saturating_sub(self.edge(k1));
                if tail > 0 {
                    self.put(k1, c, tail);
                }
            }
            Record::End { at } => self.ended = Some(at),
            Record::Wake { at, .. }
            | Record::Tick { at, .. }
            | Record::Release { at, .. }
            | Record::JobEnd { at, .. }
            | Record::Notify { at, .. }
            | Record::Mark { at, .. } => self.end = self.end.max(at),
        }
    }

    /// The start of window `k` (saturating at 2^64 − 1).
    fn edge(&self, k: usize) -> u64 {
        self.start.saturating_add((k as u64).saturating_mul(self.window))
    }

    /// The window that holds `t` (at or after the start).
    fn index(&self, t: u64) -> usize {
        ((t - self.start) / self.window) as usize
    }

    /// Adds `ns` to column `c` of window `k`.
    fn put(&mut self, k: usize, c: usize, ns: u64) {
        if self.cpu.len() <= k {
            self.cpu.resize(k + 1, Vec::new());
        }
        let row = &mut self.cpu[k];
        if row.len() <= c {
            row.resize(c + 1, 0);
        }
        row[c] = row[c].saturating_add(ns); // a hostile trace may overlap runs
    }

    /// The tasks, in column order (order of first appearance).
    pub fn tasks(&self) -> &[u32] {
        &self.order
    }

    /// Every window from the start to the end of the trace (its End record, or the last time seen),
    /// at most [`MAX_WINDOWS`] of them (a caller checks the window first, [`check`]); the last one may
    /// be shorter.
    pub fn finish(&self) -> Vec<Window> {
        let end = self.ended.unwrap_or(self.end);
        // Spans of whole windows, by their first window and by the window after their last.
        let mut opens: Vec<(usize, usize)> = self.spans.iter().map(|&(a, _, c)| (a, c)).collect();
        let mut closes: Vec<(usize, usize)> = self.spans.iter().map(|&(_, b, c)| (b, c)).collect();
        opens.sort_unstable();
        closes.sort_unstable();
        let (mut opens, mut closes) = (opens.into_iter().peekable(), closes.into_iter().peekable());
        let mut through = vec![0u64; self.order.len()];
        let mut out = Vec::new();
        let mut from = self.start;
        let mut k = 0;
        while from < end && k < MAX_WINDOWS as usize {
            while let Some((_, c)) = opens.next_if(|o| o.0 <= k) {
                through[c] += 1;
            }
            while let Some((_, c)) = closes.next_if(|o| o.0 <= k) {
                through[c] -= 1;
            }
            let to = from.saturating_add(self.window).min(end);
            let len = (to - from) as f64;
            let row = self.cpu.get(k);
            let shares = (0..self.order.len())
                .map(|c| {
                    let cut = row.and_then(|r| r.get(c)).copied().unwrap_or(0);
                    cut.saturating_add(through[c].saturating_mul(self.window)) as f64 / len
                })
                .collect();
            out.push(Window { from_ns: from, to_ns: to, shares });
            from = to;
            k += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EndReason;

    #[test]
    fn windows_too_small_for_the_run_are_refused() {
        assert!(check(1_000, 10, 1).is_ok());
        assert!(check(1_000, 0, 1).is_err());
        assert!(check(MAX_WINDOWS * 10, 10, 1).is_ok());
        assert!(check(MAX_WINDOWS * 10 + 1, 10, 1).unwrap_err().contains("100001 windows"));
        // Windows × tasks: 100,000 windows of 20 tasks pass, of 21 tasks do not.
        assert!(check(MAX_WINDOWS * 10, 10, 20).is_ok());
        let e = check(MAX_WINDOWS * 10, 10, 21).unwrap_err();
        assert!(e.contains("100000 windows of 21 tasks, 2100000 shares"), "{e}");
    }

    #[test]
    fn stretches_are_split_at_window_edges() {
        let mut w = Windows::new(0, 10);
        let run = |task, start, end| Record::Run {
            task,
            cpu: 0,
            start,
            end,
            why: EndReason::Preempted,
            complete: true,
        };
        for r in [run(7, 0, 15), run(3, 15, 25), Record::End { at: 25 }] {
            w.add(&r);
        }
        assert_eq!(w.tasks(), &[7, 3]);
        let ws = w.finish();
        assert_eq!(ws.len(), 3);
        assert_eq!(ws[0].shares, vec![1.0, 0.0]);
        assert_eq!(ws[1].shares, vec![0.5, 0.5]);
        assert_eq!((ws[2].from_ns, ws[2].to_ns, ws[2].shares.clone()), (20, 25, vec![0.0, 1.0]));
    }

    #[test]
    fn times_near_2_to_the_64_neither_wrap_nor_split_wrongly() {
        // A trace whose clock starts near the top of u64 (a hostile or damaged file): the window
        // edges past 2^64 saturate, the last window ends at the last time, overlapping runs add up
        // to at most u64::MAX.
        let top = u64::MAX - 25;
        let mut w = Windows::new(top, 10);
        let run = |task, start, end| Record::Run {
            task,
            cpu: 0,
            start,
            end,
            why: EndReason::Preempted,
            complete: true,
        };
        for r in [run(7, top, top + 15), run(3, top + 15, u64::MAX), run(7, top, u64::MAX)] {
            w.add(&r);
        }
        let ws = w.finish();
        assert_eq!(
            ws.iter().map(|x| (x.from_ns - top, x.to_ns - top)).collect::<Vec<_>>(),
            [(0, 10), (10, 20), (20, 25)]
        );
        assert_eq!(ws[0].shares, vec![2.0, 0.0]);
        assert_eq!(ws[2].shares, vec![1.0, 1.0]);
        // A window as long as the clock: one window, no edge past 2^64.
        let mut w = Windows::new(1, u64::MAX);
        w.add(&run(1, 1, u64::MAX));
        let ws = w.finish();
        assert_eq!((ws.len(), ws[0].to_ns, ws[0].shares.clone()), (1, u64::MAX, vec![1.0]));
        // Runs piling up more CPU time than 64 bits hold in one window saturate.
        let mut w = Windows::new(0, u64::MAX);
        for _ in 0..3 {
            w.add(&run(1, 0, u64::MAX));
        }
        assert_eq!(w.cpu[0][0], u64::MAX);
    }
}
