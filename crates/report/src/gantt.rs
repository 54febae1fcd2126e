//! Gantt charts of an execution trace, as SimSo draws them: one row per task (and one per CPU on a
//! machine of several), executions as bars, releases and deadlines as arrows, missed deadlines
//! crossed out.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use trace::{EndReason, Header, Outcome, Record};

use crate::escape::{markup, visible};
use crate::figure::PALETTE;
use crate::format_time_exact;

/// Most execution stretches a chart draws: a window holding more gets a chart that says so
/// instead of its bars (see [`Gantt`]).
pub const MAX_BARS: usize = 20_000;
/// Most release marks, and most deadline marks, a chart draws (the same rule as [`MAX_BARS`]).
pub const MAX_MARKS: usize = 20_000;
/// Most task rows (and CPU rows) a chart draws; beyond, the tasks with the least CPU time in the
/// window are left out and the chart says how many.
pub const MAX_ROWS: usize = 200;
/// The window drawn when none is given: the first 200 ms (or the whole trace if it is shorter).
pub const DEFAULT_WINDOW_NS: u64 = 200_000_000;
/// Task names kept (a hostile trace may name millions of tasks; later ones are drawn as `task N`).
const MAX_NAMES: usize = 100_000;

/// Width of the chart in SVG user units (pixels).
const WIDTH: f64 = 1000.0;
/// Right margin of the plot.
const RIGHT: f64 = 24.0;
/// Longest row label, in characters (longer names are cut with `…`; the full name is the label's
/// tooltip).
const LABEL_CHARS: usize = 28;
/// Estimated width of a character of the 12 px sans-serif labels (the SVG cannot measure glyphs).
const CHAR_W: f64 = 6.8;
/// The colour of a missed deadline's cross.
const MISS: &str = "#d00000";

/// One execution stretch inside the window (times relative to the trace's start, clipped).
#[derive(Clone, Debug, PartialEq)]
struct Bar {
    task: u32,
    cpu: u32,
    start: u64,
    end: u64,
    why: EndReason,
    /// Cut by the window or by the recording.
    cut: bool,
}

/// A Gantt chart of one window `[from, to)` of a trace, built record by record ([`Gantt::add`]) so
/// that a run or a trace file of any length streams through it, and rendered as SVG text
/// ([`Gantt::to_svg`]).
///
/// **What it draws.** One row per task, in task-number order, named at the left: each stretch the
/// task ran as a bar (clipped to the window), each request's release as an up-arrow at its release
/// and its absolute deadline as a down-arrow (for the implicit deadlines of periodic tasks the two
/// meet in a double-headed line, as in SimSo), and a missed deadline as a red cross over its
/// down-arrow: the shape, not only the colour, says it. On one CPU a task's bars have its palette
/// colour (Okabe–Ito, cycled); on several, a task's bars have the colour of the CPU they ran on (with
/// the CPU's number inside when it fits) and one row per CPU follows the tasks, showing which task
/// ran there (coloured by task, its name inside when it fits), as SimSo's processor view. A time
/// axis with ticks at round steps (1, 2 or 5 times a power of ten, in the unit that step reads best
/// in) runs along the bottom, and also along the top when there are more than 25 rows. Every bar
/// and mark has a tooltip (`<title>`).
///
/// **Rows.** A task gets a row if it ran, was released or had a deadline in the window, and every
/// task the trace names does when it names at most [`MAX_ROWS`] (so a starved task shows as an
/// empty row). klogger's idle task (task 0, "idle") gets none: its time is the gaps. Row height
/// adapts (32 px for a few rows down to 16 px from 35 rows on) and the SVG grows with the rows: 50
/// tasks make a chart about 900 px tall whose 12 px labels never overlap. With more than
/// [`MAX_ROWS`] tasks, those with the least CPU time in the window are left out, and the chart says
/// how many.
///
/// **Times** are nanoseconds since the trace's start (its header's `start_ns`), so a recording on
/// `CLOCK_MONOTONIC` reads as a simulated run does. Stretches are clipped to `[from, to)`; a
/// release or deadline is drawn if it falls in `[from, to]` (the right edge is a drawable instant,
/// the end of a hyperperiod say).
///
/// **Misses.** A deadline in the window is crossed out when its request ended `late`, `discarded`
/// or `aborted`, or was still unfinished after its deadline when the recording stopped. A request
/// unfinished when the recording stopped exactly at its deadline is not judged (it may have been
/// finishing at that very instant), nor is one with no end record (a trace cut short).
///
/// **Machine-readable.** Every bar is a `<rect class="run">` (CPU rows: `class="cpu-run"`) with
/// `data-task` (name), `data-task-id`, `data-cpu`, `data-start-ns`, `data-end-ns` (clipped) and
/// `data-why`; every mark a `<g class="release|deadline|miss">` with `data-task`, `data-task-id`,
/// `data-job` and `data-at-ns`, so a test (or a script) reads the chart back.
///
/// **Names** are drawn, and written in `data-task`, as [`crate::escape::visible`] shows them:
/// a name holding a control character (which XML cannot hold) or a right-to-left override reads
/// with it escaped (`\x1b`, `\u{202e}`); `data-task-id` names the task exactly.
///
/// **Bounds.** A window holding more than [`MAX_BARS`] stretches (or [`MAX_MARKS`] releases or
/// deadlines) is not drawn bar by bar: a chart of that many would be many megabytes of sub-pixel
/// slivers. The chart then keeps its rows and axis and says, in red across the plot, how many
/// stretches the window holds and to choose a shorter one ([`Gantt::overflow`] says the same for a
/// command line); memory stays bounded since nothing past the bound is kept.
///
/// ```
/// use trace::{EndReason, Header, Record, Source};
/// let h = Header::new(Source::Hourglass { kernel: "k".into() }, 1, "CLOCK_MONOTONIC", 0, None);
/// let mut g = report::Gantt::new(&h, 0, 10_000_000);
/// g.add(&Record::Task { task: 0, process: 0, name: "audio".into() });
/// g.add(&Record::Run { task: 0, cpu: 0, start: 1_000_000, end: 3_000_000, why: EndReason::Blocked, complete: true });
/// let svg = g.to_svg();
/// assert!(svg.contains("data-start-ns=\"1000000\" data-end-ns=\"3000000\""));
/// ```
#[derive(Clone, Debug)]
pub struct Gantt {
    title: String,
    cpus: u32,
    /// The trace's start: times are drawn relative to it.
    origin: u64,
    from: u64,
    to: u64,
    names: BTreeMap<u32, String>,
    bars: Vec<Bar>,
    /// Stretches in the window, drawn or not.
    stretches: u64,
    /// (task, job, at) of the releases in the window.
    releases: Vec<(u32, u32, u64)>,
    releases_seen: u64,
    /// Deadlines in the window, by (task, job).
    deadlines: BTreeMap<(u32, u32), u64>,
    deadlines_seen: u64,
    missed: BTreeSet<(u32, u32)>,
    /// CPU time in the window per task (which tasks keep a row when there are too many).
    cpu_ns: BTreeMap<u32, u64>,
    /// Tasks with something in the window, counted past the bounds on what is drawn, up to
    /// [`MAX_NAMES`] (then `active_full`).
    active: BTreeSet<u32>,
    /// More than [`MAX_NAMES`] tasks had something in the window: `active` holds the first.
    active_full: bool,
    /// Latest instant of any record, relative to the trace's start.
    last_ns: u64,
}

impl Gantt {
    /// An empty chart of the window `[from, to)` (ns since the start of the trace `header`
    /// describes); a window of no length is taken as 1 ns long.
    pub fn new(header: &Header, from: u64, to: u64) -> Gantt {
        Gantt {
            title: String::new(),
            cpus: header.cpus.max(1),
            origin: header.start_ns,
            from,
            to: to.max(from.saturating_add(1)),
            names: BTreeMap::new(),
            bars: Vec::new(),
            stretches: 0,
            releases: Vec::new(),
            releases_seen: 0,
            deadlines: BTreeMap::new(),
            deadlines_seen: 0,
            missed: BTreeSet::new(),
            cpu_ns: BTreeMap::new(),
            active: BTreeSet::new(),
            active_full: false,
            last_ns: 0,
        }
    }

    /// The drawing of a chart of a run of `tasks` tasks on `cpus` CPUs, before the run, for
    /// [`crate::export::check_drawing`]: at most [`MAX_ROWS`] task rows and as many CPU rows, and
    /// at most [`MAX_BARS`] bars and [`MAX_MARKS`] releases and deadlines, whatever the run holds.
    pub fn planned(tasks: usize, cpus: u32) -> crate::export::Drawing {
        let cpu_rows = match cpus {
            0 | 1 => 0,
            2..=32 => cpus as usize,
            _ => (cpus as usize).min(MAX_ROWS),
        };
        let n_rows = tasks.min(MAX_ROWS) + cpu_rows;
        let row_h = (560.0 / n_rows.max(1) as f64).clamp(16.0, 32.0);
        // The title, legend, two notes and the top axis above; the CPUs' gap and the axis below.
        let gap = if cpu_rows > 0 { row_h * 0.5 } else { 0.0 };
        let height = (62.0 + 2.0 * 18.0 + 16.0 + row_h * n_rows as f64 + gap + 52.0).ceil();
        let points = (MAX_BARS + 2 * MAX_MARKS + 4 * n_rows) as u64;
        let why = format!("{} rows of tasks and CPUs, up to {MAX_BARS} bars", n_rows);
        crate::export::Drawing { width: WIDTH, height, points, why }
    }

    /// Sets the title drawn above the chart (the window is added to it).
    pub fn set_title(&mut self, title: &str) {
        self.title = title.to_string();
    }

    /// Takes one record of the trace into account. Records may come in any order, except that a
    /// request's end is judged only if its release came first (as every writer of traces orders them).
    pub fn add(&mut self, r: &Record) {
        let origin = self.origin;
        let rel = |t: u64| t.saturating_sub(origin);
        let (from, to) = (self.from, self.to);
        match r {
            Record::Task { task, name, .. } => {
                if self.names.len() < MAX_NAMES || self.names.contains_key(task) {
                    self.names.insert(*task, name.clone());
                }
            }
            Record::Run { task, cpu, start, end, why, complete } => {
                let (s, e) = (rel(*start), rel(*end));
                self.last_ns = self.last_ns.max(e);
                if e <= from || s >= to || e <= s {
                    return;
                }
                let (cs, ce) = (s.max(from), e.min(to));
                self.stretches += 1;
                self.note_active(*task);
                if self.stretches as usize <= MAX_BARS {
                    *self.cpu_ns.entry(*task).or_default() += ce - cs;
                    self.bars.push(Bar {
                        task: *task,
                        cpu: *cpu,
                        start: cs,
                        end: ce,
                        why: *why,
                        cut: !complete || cs != s || ce != e,
                    });
                }
            }
            Record::Release { task, job, at, deadline } => {
                let a = rel(*at);
                self.last_ns = self.last_ns.max(a);
                if (from..=to).contains(&a) {
                    self.releases_seen += 1;
                    self.note_active(*task);
                    if self.releases_seen as usize <= MAX_MARKS {
                        self.releases.push((*task, *job, a));
                    }
                }
                if let Some(d) = deadline.map(rel).filter(|d| (from..=to).contains(d)) {
                    self.deadlines_seen += 1;
                    self.note_active(*task);
                    if self.deadlines_seen as usize <= MAX_MARKS {
                        self.deadlines.insert((*task, *job), d);
                    }
                }
            }
            Record::JobEnd { task, job, at, outcome } => {
                let a = rel(*at);
                self.last_ns = self.last_ns.max(a);
                if let Some(&d) = self.deadlines.get(&(*task, *job)) {
                    let missed = match outcome {
                        Outcome::Met => false,
                        Outcome::Unfinished => d < a,
                        _ => true,
                    };
                    if missed {
                        self.missed.insert((*task, *job));
                    }
                }
            }
            Record::Wake { at, .. }
            | Record::Tick { at, .. }
            | Record::Notify { at, .. }
            | Record::Mark { at, .. }
            | Record::End { at } => self.last_ns = self.last_ns.max(rel(*at)),
        }
    }

    /// Ends the window at `to` if that is earlier (a window chosen before the trace's end was known,
    /// once it is): stretches are clipped again, marks after `to` dropped.
    pub fn end_window_at(&mut self, to: u64) {
        let to = to.max(self.from.saturating_add(1));
        if to >= self.to {
            return;
        }
        self.to = to;
        self.bars.retain(|b| b.start < to);
        for b in &mut self.bars {
            if b.end > to {
                b.end = to;
                b.cut = true;
            }
        }
        // Past the bound the bars were not kept, and the count stays what the longer window held.
        if self.stretches as usize <= MAX_BARS {
            self.stretches = self.bars.len() as u64;
        }
        self.releases.retain(|r| r.2 <= to);
        self.deadlines.retain(|_, d| *d <= to);
        let deadlines = &self.deadlines;
        self.missed.retain(|k| deadlines.contains_key(k));
        if self.releases_seen as usize <= MAX_MARKS {
            self.releases_seen = self.releases.len() as u64;
        }
        if self.deadlines_seen as usize <= MAX_MARKS {
            self.deadlines_seen = self.deadlines.len() as u64;
        }
    }

    /// The latest instant any record named, in ns since the trace's start: where the trace ends.
    pub fn last_ns(&self) -> u64 {
        self.last_ns
    }

    /// Execution stretches inside the window (drawn or not).
    pub fn stretches(&self) -> u64 {
        self.stretches
    }

    /// Missed deadlines crossed out on the chart.
    pub fn misses(&self) -> usize {
        self.missed.len()
    }

    /// Why the chart draws no bars, if the window holds more than it draws ([`MAX_BARS`],
    /// [`MAX_MARKS`]).
    pub fn overflow(&self) -> Option<String> {
        let marks = self.releases_seen.max(self.deadlines_seen);
        if self.stretches as usize > MAX_BARS || marks as usize > MAX_MARKS {
            Some(format!(
                "the window {} holds {} stretches and {} releases, more than the {MAX_BARS} a chart draws: \
                 choose a shorter window",
                window_text(self.from, self.to),
                self.stretches,
                self.releases_seen
            ))
        } else {
            None
        }
    }

    /// The window `(from, to)`, ns since the trace's start.
    pub fn window(&self) -> (u64, u64) {
        (self.from, self.to)
    }

    /// Tasks left out of the chart: more than [`MAX_ROWS`] had something in the window. Exact up
    /// to [`MAX_NAMES`] tasks in the window; past that a lower bound ([`Gantt::left_out_at_least`]).
    pub fn left_out(&self) -> usize {
        self.task_rows().1
    }

    /// Whether [`Gantt::left_out`] is a lower bound: more tasks had something in the window than the
    /// chart counts (its memory is bounded).
    pub fn left_out_at_least(&self) -> bool {
        self.active_full
    }

    /// Counts `task` among those with something in the window (up to [`MAX_NAMES`]).
    fn note_active(&mut self, task: u32) {
        if self.active.len() < MAX_NAMES || self.active.contains(&task) {
            self.active.insert(task);
        } else {
            self.active_full = true;
        }
    }

    /// A task's name as the chart shows it ([`visible`]: its labels are cut and measured in the
    /// characters a reader sees), or `task N` for a task the trace did not name.
    fn name(&self, task: u32) -> String {
        self.names.get(&task).map_or_else(|| format!("task {task}"), |n| visible(n).into_owned())
    }

    /// The task rows (task numbers, in order) and how many tasks were left out.
    fn task_rows(&self) -> (Vec<u32>, usize) {
        let mut ids: BTreeSet<u32> = self.active.clone();
        if self.names.len() <= MAX_ROWS {
            ids.extend(self.names.keys());
        }
        if self.names.get(&0).is_some_and(|n| n == "idle") {
            ids.remove(&0);
        }
        let total = ids.len();
        let mut ids: Vec<u32> = ids.into_iter().collect();
        if total > MAX_ROWS {
            let cpu = |t: &u32| self.cpu_ns.get(t).copied().unwrap_or(0);
            ids.sort_by(|a, b| cpu(b).cmp(&cpu(a)).then(a.cmp(b)));
            ids.truncate(MAX_ROWS);
            ids.sort_unstable();
        }
        let hidden = total - ids.len();
        (ids, hidden)
    }

    /// The CPU rows: none on one CPU; every CPU on up to 32; else the CPUs that ran something in the
    /// window (at most [`MAX_ROWS`]).
    fn cpu_rows(&self, drawn: bool) -> Vec<u32> {
        if self.cpus <= 1 {
            return Vec::new();
        }
        if self.cpus <= 32 {
            return (0..self.cpus).collect();
        }
        let used: BTreeSet<u32> =
            if drawn { self.bars.iter().map(|b| b.cpu).collect() } else { BTreeSet::new() };
        used.into_iter().take(MAX_ROWS).collect()
    }

    /// The chart as a standalone SVG document (1000 px wide, as tall as its rows need, with a
    /// `viewBox` so it scales). Deterministic: the same records give the same text.
    pub fn to_svg(&self) -> String {
        let overflow = self.overflow();
        let drawn = overflow.is_none();
        let (tasks, hidden) = self.task_rows();
        let cpus = self.cpu_rows(drawn);
        let n_rows = tasks.len() + cpus.len();
        let row_h = (560.0 / n_rows.max(1) as f64).clamp(16.0, 32.0);
        let many_cpus = self.cpus > 1;
        let labels: Vec<String> = tasks.iter().map(|&t| self.name(t)).collect();
        let longest = labels.iter().map(|l| l.chars().count().min(LABEL_CHARS)).max().unwrap_or(0).max(6);
        let x0 = (longest as f64 * CHAR_W + 16.0).clamp(64.0, 230.0);
        let x1 = WIDTH - RIGHT;
        let span = (self.to - self.from) as f64;
        let x = |t: u64| x0 + (t.saturating_sub(self.from)) as f64 / span * (x1 - x0);
        let ticks = ticks(self.from, self.to, ((x1 - x0) / 90.0).floor().max(2.0) as u64);

        let mut notes: Vec<String> = Vec::new();
        if let Some(o) = &overflow {
            notes.push(format!("Not drawn: {o}."));
        }
        if hidden > 0 {
            notes.push(format!(
                "{hidden} more tasks, with the least CPU time in this window, are not drawn (at most {MAX_ROWS} rows)."
            ));
        }
        let top_axis = n_rows > 25;
        let title_y = 20.0;
        let legend_y = 42.0;
        let notes_y = 62.0;
        let mut y0 = notes_y + 18.0 * notes.len() as f64;
        if top_axis {
            y0 += 16.0;
        }
        let cpu_gap = if cpus.is_empty() { 0.0 } else { row_h * 0.5 };
        let rows_end = y0 + row_h * n_rows as f64 + cpu_gap;
        let height = (rows_end + 52.0).ceil();

        let mut o = String::with_capacity(4096 + 300 * self.bars.len());
        let _ = writeln!(
            o,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
             viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\" font-size=\"12\" \
             data-from-ns=\"{}\" data-to-ns=\"{}\">",
            self.from, self.to
        );
        o.push_str("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        let title = if self.title.is_empty() { "Gantt chart".to_string() } else { self.title.clone() };
        let _ = writeln!(
            o,
            "<text x=\"{x0:.1}\" y=\"{title_y}\" font-size=\"15\" font-weight=\"bold\">{} — {}</text>",
            markup(&title),
            markup(&window_text(self.from, self.to))
        );
        self.legend(&mut o, x0, legend_y, many_cpus);
        for (k, n) in notes.iter().enumerate() {
            let _ = writeln!(
                o,
                "<text x=\"{x0:.1}\" y=\"{:.1}\" fill=\"{MISS}\" class=\"note\">{}</text>",
                notes_y + 18.0 * k as f64,
                markup(n)
            );
        }

        // Row backgrounds (zebra), labels and the grid.
        let row_top = |k: usize| {
            let gap = if k >= tasks.len() { cpu_gap } else { 0.0 };
            y0 + gap + row_h * k as f64
        };
        let font = if row_h < 20.0 { 11.0 } else { 12.0 };
        for k in 0..n_rows {
            let y = row_top(k);
            if k % 2 == 0 {
                let _ = writeln!(
                    o,
                    "<rect x=\"0\" y=\"{y:.2}\" width=\"{x1:.1}\" height=\"{row_h:.2}\" fill=\"#f3f3f3\"/>"
                );
            }
            let (label, full) = if k < tasks.len() {
                (cut_text(&labels[k], LABEL_CHARS), labels[k].clone())
            } else {
                let c = format!("CPU {}", cpus[k - tasks.len()]);
                (c.clone(), c)
            };
            let weight = if k >= tasks.len() { " font-weight=\"bold\"" } else { "" };
            let _ = writeln!(
                o,
                "<text x=\"{:.1}\" y=\"{:.2}\" font-size=\"{font}\" text-anchor=\"end\"{weight}>{}<title>{}</title></text>",
                x0 - 6.0,
                y + row_h / 2.0 + font * 0.35,
                markup(&label),
                markup(&full)
            );
        }
        for &(t, _) in &ticks {
            let xt = x(t);
            let _ = writeln!(
                o,
                "<line x1=\"{xt:.2}\" x2=\"{xt:.2}\" y1=\"{y0:.2}\" y2=\"{rows_end:.2}\" stroke=\"#d8d8d8\"/>"
            );
        }
        if !cpus.is_empty() {
            let ys = y0 + row_h * tasks.len() as f64 + cpu_gap / 2.0;
            let _ = writeln!(
                o,
                "<line x1=\"0\" x2=\"{x1:.1}\" y1=\"{ys:.2}\" y2=\"{ys:.2}\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>"
            );
        }

        let row_of: BTreeMap<u32, usize> = tasks.iter().enumerate().map(|(k, &t)| (t, k)).collect();
        let cpu_row: BTreeMap<u32, usize> =
            cpus.iter().enumerate().map(|(k, &c)| (c, tasks.len() + k)).collect();
        let bar_h = (row_h * 0.5).round();
        if drawn {
            let mut bars: Vec<&Bar> = self.bars.iter().collect();
            bars.sort_by_key(|b| (b.start, b.task, b.cpu, b.end));
            for b in &bars {
                let name = self.name(b.task);
                let (bx0, bx1) = (x(b.start), x(b.end));
                let w = (bx1 - bx0).max(0.5);
                let tip = format!(
                    "{name}: {} to {} on CPU {} ({}{})",
                    crate::format_time(b.start),
                    crate::format_time(b.end),
                    b.cpu,
                    b.why.name(),
                    if b.cut { ", cut by the window or the recording" } else { "" }
                );
                let attrs = format!(
                    "data-task=\"{}\" data-task-id=\"{}\" data-cpu=\"{}\" data-start-ns=\"{}\" data-end-ns=\"{}\" data-why=\"{}\"",
                    markup(&name),
                    b.task,
                    b.cpu,
                    b.start,
                    b.end,
                    b.why.name()
                );
                if let Some(&k) = row_of.get(&b.task) {
                    let colour = if many_cpus { colour(b.cpu as usize) } else { colour(k) };
                    let y = row_top(k) + row_h - bar_h - 3.0;
                    let _ = writeln!(
                        o,
                        "<rect class=\"run\" x=\"{bx0:.2}\" y=\"{y:.2}\" width=\"{w:.2}\" height=\"{bar_h}\" fill=\"{colour}\" {attrs}><title>{}</title></rect>",
                        markup(&tip)
                    );
                    if many_cpus {
                        inside(&mut o, &b.cpu.to_string(), bx0, w, y, bar_h, &colour);
                    }
                }
                if let Some(&k) = cpu_row.get(&b.cpu) {
                    let colour = colour(row_of.get(&b.task).copied().unwrap_or(b.task as usize));
                    let y = row_top(k) + (row_h - bar_h) / 2.0;
                    let _ = writeln!(
                        o,
                        "<rect class=\"cpu-run\" x=\"{bx0:.2}\" y=\"{y:.2}\" width=\"{w:.2}\" height=\"{bar_h}\" fill=\"{colour}\" {attrs}><title>{}</title></rect>",
                        markup(&tip)
                    );
                    inside(&mut o, &name, bx0, w, y, bar_h, &colour);
                }
            }
            let head = (row_h * 0.16).clamp(2.5, 4.5);
            let mark_attrs = |task: u32, job: u32, at: u64| {
                format!(
                    "data-task=\"{}\" data-task-id=\"{task}\" data-job=\"{job}\" data-at-ns=\"{at}\"",
                    markup(&self.name(task))
                )
            };
            let mut releases = self.releases.clone();
            releases.sort_unstable_by_key(|&(t, j, a)| (a, t, j));
            for &(t, j, a) in &releases {
                let Some(&k) = row_of.get(&t) else { continue };
                let (xa, top, bottom) = (x(a), row_top(k) + 2.0, row_top(k) + row_h - 1.0);
                let _ = writeln!(
                    o,
                    "<g class=\"release\" {}><title>{}: request {j} released at {}</title>\
                     <line x1=\"{xa:.2}\" x2=\"{xa:.2}\" y1=\"{bottom:.2}\" y2=\"{:.2}\" stroke=\"#222\" stroke-width=\"1.2\"/>\
                     <path d=\"M{xa:.2} {top:.2}L{:.2} {:.2}L{:.2} {:.2}Z\" fill=\"#222\"/></g>",
                    mark_attrs(t, j, a),
                    markup(&self.name(t)),
                    crate::format_time(a),
                    top + head,
                    xa - head * 0.8,
                    top + head * 1.6,
                    xa + head * 0.8,
                    top + head * 1.6,
                );
            }
            for (&(t, j), &d) in &self.deadlines {
                let Some(&k) = row_of.get(&t) else { continue };
                let (xd, top, bottom) = (x(d), row_top(k) + 2.0, row_top(k) + row_h - 1.0);
                let _ = writeln!(
                    o,
                    "<g class=\"deadline\" {}><title>{}: request {j} due at {}</title>\
                     <line x1=\"{xd:.2}\" x2=\"{xd:.2}\" y1=\"{top:.2}\" y2=\"{:.2}\" stroke=\"#222\" stroke-width=\"1.2\"/>\
                     <path d=\"M{xd:.2} {bottom:.2}L{:.2} {:.2}L{:.2} {:.2}Z\" fill=\"#222\"/></g>",
                    mark_attrs(t, j, d),
                    markup(&self.name(t)),
                    crate::format_time(d),
                    bottom - head,
                    xd - head * 0.8,
                    bottom - head * 1.6,
                    xd + head * 0.8,
                    bottom - head * 1.6,
                );
            }
            let s = (row_h * 0.28).clamp(4.0, 7.0);
            for &(t, j) in &self.missed {
                let (Some(&k), Some(&d)) = (row_of.get(&t), self.deadlines.get(&(t, j))) else { continue };
                let (xd, ym) = (x(d), row_top(k) + row_h / 2.0);
                let cross = format!(
                    "M{:.2} {:.2}L{:.2} {:.2}M{:.2} {:.2}L{:.2} {:.2}",
                    xd - s,
                    ym - s,
                    xd + s,
                    ym + s,
                    xd - s,
                    ym + s,
                    xd + s,
                    ym - s
                );
                let _ = writeln!(
                    o,
                    "<g class=\"miss\" {}><title>{}: request {j} missed its deadline at {}</title>\
                     <path d=\"{cross}\" stroke=\"white\" stroke-width=\"5\"/>\
                     <path d=\"{cross}\" stroke=\"{MISS}\" stroke-width=\"2.4\"/></g>",
                    mark_attrs(t, j, d),
                    markup(&self.name(t)),
                    crate::format_time(d)
                );
            }
        } else if let Some(msg) = &overflow {
            let _ = writeln!(
                o,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"14\" fill=\"{MISS}\">{}</text>",
                (x0 + x1) / 2.0,
                (y0 + rows_end) / 2.0,
                markup(&format!("too much to draw: {msg}"))
            );
        }

        // The time axis, at the bottom (and at the top of a tall chart).
        let axis = |o: &mut String, y: f64, below: bool| {
            let _ = writeln!(
                o,
                "<line x1=\"{x0:.1}\" x2=\"{x1:.1}\" y1=\"{y:.2}\" y2=\"{y:.2}\" stroke=\"#333\"/>"
            );
            for (t, label) in &ticks {
                let xt = x(*t);
                let (ty, ly) = if below { (y + 5.0, y + 17.0) } else { (y - 5.0, y - 8.0) };
                let _ = writeln!(
                    o,
                    "<line x1=\"{xt:.2}\" x2=\"{xt:.2}\" y1=\"{y:.2}\" y2=\"{ty:.2}\" stroke=\"#333\"/>\
                     <text x=\"{xt:.2}\" y=\"{ly:.2}\" text-anchor=\"middle\" class=\"tick\">{}</text>",
                    markup(label)
                );
            }
        };
        axis(&mut o, rows_end, true);
        if top_axis {
            axis(&mut o, y0, false);
        }
        let _ = writeln!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#444\">time since the start of the trace</text>",
            (x0 + x1) / 2.0,
            rows_end + 38.0
        );
        o.push_str("</svg>\n");
        o
    }

    /// The legend line: bar, release, deadline, missed deadline; on several CPUs, the CPU colours.
    fn legend(&self, o: &mut String, mut lx: f64, y: f64, many_cpus: bool) {
        let text = |o: &mut String, lx: &mut f64, s: &str| {
            let _ = writeln!(o, "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>", *lx, y + 4.0, markup(s));
            *lx += s.chars().count() as f64 * CHAR_W + 16.0;
        };
        if !many_cpus {
            let _ = writeln!(
                o,
                "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"18\" height=\"10\" fill=\"{}\"/>",
                y - 5.0,
                colour(0)
            );
            lx += 22.0;
            text(o, &mut lx, "execution");
        }
        let _ = writeln!(
            o,
            "<line x1=\"{lx:.1}\" x2=\"{lx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#222\" stroke-width=\"1.2\"/>\
             <path d=\"M{lx:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}Z\" fill=\"#222\"/>",
            y + 7.0,
            y - 5.0,
            y - 7.0,
            lx - 3.5,
            y - 1.0,
            lx + 3.5,
            y - 1.0
        );
        lx += 8.0;
        text(o, &mut lx, "release");
        let _ = writeln!(
            o,
            "<line x1=\"{lx:.1}\" x2=\"{lx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#222\" stroke-width=\"1.2\"/>\
             <path d=\"M{lx:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}Z\" fill=\"#222\"/>",
            y - 7.0,
            y + 5.0,
            y + 7.0,
            lx - 3.5,
            y + 1.0,
            lx + 3.5,
            y + 1.0
        );
        lx += 8.0;
        text(o, &mut lx, "deadline");
        let _ = writeln!(
            o,
            "<path d=\"M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}\" stroke=\"{MISS}\" stroke-width=\"2.4\"/>",
            lx - 5.0,
            y - 5.0,
            lx + 5.0,
            y + 5.0,
            lx - 5.0,
            y + 5.0,
            lx + 5.0,
            y - 5.0
        );
        lx += 10.0;
        text(o, &mut lx, "missed deadline");
        if many_cpus {
            text(o, &mut lx, "task bars by CPU:");
            lx -= 10.0;
            for c in 0..self.cpus.min(PALETTE.len() as u32) {
                let _ = writeln!(
                    o,
                    "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"14\" height=\"10\" fill=\"{}\"/>",
                    y - 5.0,
                    colour(c as usize)
                );
                lx += 17.0;
                text(o, &mut lx, &c.to_string());
                lx -= 8.0;
            }
            if self.cpus as usize > PALETTE.len() {
                text(o, &mut lx, "… (colours repeat)");
            }
        }
    }
}

/// The palette colour `k` (cycled) as `#rrggbb`.
fn colour(k: usize) -> String {
    let c = PALETTE[k % PALETTE.len()];
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// Text that reads on `fill`: black on light colours, white on dark ones.
fn ink(fill: &str) -> &'static str {
    let v = |i: usize| u8::from_str_radix(&fill[i..i + 2], 16).map_or(0.0, f64::from);
    let luma = 0.299 * v(1) + 0.587 * v(3) + 0.114 * v(5);
    if luma > 140.0 {
        "black"
    } else {
        "white"
    }
}

/// Writes `text` inside the bar at `bx`, `w` wide, if it fits or at least four characters of it do.
fn inside(o: &mut String, text: &str, bx: f64, w: f64, y: f64, h: f64, fill: &str) {
    let size = (h - 2.0).clamp(7.0, 11.0);
    let fits = ((w - 4.0) / (size * 0.6)).floor();
    let n = text.chars().count();
    // The whole text, or at least four characters of it (a cut of one or two reads as noise).
    if fits < (n.min(4)) as f64 {
        return;
    }
    let shown = cut_text(text, fits as usize);
    let _ = writeln!(
        o,
        "<text x=\"{:.2}\" y=\"{:.2}\" font-size=\"{size}\" fill=\"{}\" pointer-events=\"none\">{}</text>",
        bx + 2.0,
        y + h / 2.0 + size * 0.35,
        ink(fill),
        markup(&shown)
    );
}

/// `s` cut to `n` characters, the last one `…` if it was cut.
fn cut_text(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// `from..to` as the window is written on the command line.
fn window_text(from: u64, to: u64) -> String {
    format!("{}..{}", format_time_exact(from), format_time_exact(to))
}

/// Ticks over `[from, to]` at a round step (1, 2 or 5 times a power of ten ns) giving at most
/// `most` intervals, each labelled in the unit of the window's end (`s`, `ms`, `us`, `ns`) with
/// the decimals that write the step exactly.
fn ticks(from: u64, to: u64, most: u64) -> Vec<(u64, String)> {
    let span = to - from;
    let mut step = 1u64;
    'find: for p in 0..19 {
        let base = 10u64.pow(p);
        for m in [1, 2, 5] {
            step = base.saturating_mul(m);
            if span / step <= most {
                break 'find;
            }
        }
    }
    let (unit, scale) = match to {
        t if t >= 1_000_000_000 => ("s", 1_000_000_000u64),
        t if t >= 1_000_000 => ("ms", 1_000_000),
        t if t >= 1_000 => ("us", 1_000),
        _ => ("ns", 1),
    };
    let mut decimals = 0usize;
    let mut r = scale;
    while r > 1 && step % r != 0 {
        r /= 10;
        decimals += 1;
    }
    let first = from.div_ceil(step) * step;
    (0..)
        .map(|k| first + k * step)
        .take_while(|&t| t <= to)
        .map(|t| {
            let label = if t == 0 {
                "0".to_string()
            } else {
                let whole = t / scale;
                let frac = t % scale;
                if decimals == 0 {
                    format!("{whole}{unit}")
                } else {
                    // Exact decimal digits (no float rounding): frac / scale to `decimals` places.
                    let digits = frac / 10u64.pow((scale.ilog10() as usize - decimals) as u32);
                    format!("{whole}.{digits:0decimals$}{unit}")
                }
            };
            (t, label)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::Source;

    const MS: u64 = 1_000_000;

    fn header(cpus: u32) -> Header {
        Header::new(
            Source::Simulator { scenario: "s".into(), seed: 1, policy: "edf".into() },
            cpus,
            "simulated",
            0,
            None,
        )
    }

    fn run(task: u32, cpu: u32, start: u64, end: u64) -> Record {
        Record::Run { task, cpu, start: start * MS, end: end * MS, why: EndReason::Blocked, complete: true }
    }

    /// The elements of `class` as their data attributes.
    fn elements(svg: &str, class: &str) -> Vec<BTreeMap<String, String>> {
        let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
        doc.descendants()
            .filter(|n| n.attribute("class") == Some(class))
            .map(|n| {
                n.attributes()
                    .filter(|a| a.name().starts_with("data-"))
                    .map(|a| (a.name().to_string(), a.value().to_string()))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_planned_drawing_bounds_the_chart_and_fits_every_format() {
        for (tasks, cpus) in [(1, 1), (3, 2), (40, 4), (300, 64), (1000, 256)] {
            let mut g = Gantt::new(&header(cpus), 0, 1000 * MS);
            for t in 0..tasks {
                g.add(&Record::Task { task: t, process: t, name: format!("t{t}") });
                g.add(&run(t, t % cpus, u64::from(t), u64::from(t) + 1));
            }
            let svg = g.to_svg();
            let doc = roxmltree::Document::parse(&svg).unwrap();
            let height: f64 = doc.root_element().attribute("height").unwrap().parse().unwrap();
            let planned = Gantt::planned(tasks as usize, cpus);
            assert!(height <= planned.height, "{tasks} tasks on {cpus} CPUs: {height} > {}", planned.height);
            assert!(doc.descendants().count() as u64 <= planned.points, "{tasks} tasks on {cpus} CPUs");
        }
        // Whatever the run, the chart's rows and bars are bounded: it fits as PNG, PDF and SVG.
        let most = Gantt::planned(usize::MAX, u32::MAX);
        for f in crate::export::ImageFormat::ALL {
            crate::export::check_drawing(&most, f).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        }
    }

    #[test]
    fn bars_are_clipped_to_the_window_and_marks_kept_in_it() {
        let mut g = Gantt::new(&header(1), 2 * MS, 10 * MS);
        g.add(&Record::Task { task: 0, process: 0, name: "a<&>\"b".into() });
        g.add(&Record::Task { task: 1, process: 1, name: "idle-not".into() });
        for r in [run(0, 0, 0, 3), run(1, 0, 3, 4), run(0, 0, 9, 12), run(1, 0, 12, 13), run(1, 0, 1, 2)] {
            g.add(&r);
        }
        for (job, at) in [(0u32, 0u64), (1, 5), (2, 10), (3, 15)] {
            g.add(&Record::Release { task: 0, job, at: at * MS, deadline: Some((at + 5) * MS) });
        }
        g.add(&Record::JobEnd { task: 0, job: 0, at: 3 * MS, outcome: Outcome::Met });
        g.add(&Record::JobEnd { task: 0, job: 1, at: 11 * MS, outcome: Outcome::Late });
        let svg = g.to_svg();
        let bars: Vec<(String, u64, u64)> = elements(&svg, "run")
            .iter()
            .map(|b| {
                (
                    b["data-task"].clone(),
                    b["data-start-ns"].parse().unwrap(),
                    b["data-end-ns"].parse().unwrap(),
                )
            })
            .collect();
        let a = "a<&>\"b".to_string();
        assert_eq!(
            bars,
            vec![
                (a.clone(), 2 * MS, 3 * MS),
                ("idle-not".into(), 3 * MS, 4 * MS),
                (a.clone(), 9 * MS, 10 * MS)
            ]
        );
        assert_eq!(g.stretches(), 3);
        let at = |class: &str| -> Vec<u64> {
            elements(&svg, class).iter().map(|m| m["data-at-ns"].parse().unwrap()).collect()
        };
        // Releases and deadlines in [2 ms, 10 ms], the right edge included.
        assert_eq!(at("release"), vec![5 * MS, 10 * MS]);
        assert_eq!(at("deadline"), vec![5 * MS, 10 * MS]);
        // Request 1 was late: its deadline (10 ms) is crossed out; request 0 was met.
        assert_eq!(at("miss"), vec![10 * MS]);
        assert_eq!(elements(&svg, "miss")[0]["data-job"], "1");
        assert_eq!(g.last_ns(), 15 * MS);
        // One CPU: no CPU rows.
        assert!(elements(&svg, "cpu-run").is_empty());
    }

    #[test]
    fn several_cpus_get_a_row_each_showing_which_task_ran() {
        let mut g = Gantt::new(&header(2), 0, 10 * MS);
        g.add(&Record::Task { task: 0, process: 0, name: "x".into() });
        g.add(&Record::Task { task: 1, process: 1, name: "y".into() });
        for r in [run(0, 0, 0, 4), run(1, 1, 0, 6), run(0, 1, 6, 8)] {
            g.add(&r);
        }
        let svg = g.to_svg();
        let cpu_bars: Vec<(String, String)> = elements(&svg, "cpu-run")
            .iter()
            .map(|b| (b["data-cpu"].clone(), b["data-task"].clone()))
            .collect();
        assert_eq!(
            cpu_bars,
            vec![("0".into(), "x".into()), ("1".into(), "y".into()), ("1".into(), "x".into())]
        );
        assert!(svg.contains(">CPU 0<") && svg.contains(">CPU 1<"));
        // Task bars are coloured by CPU: x's two bars differ, x on CPU 1 has y's colour on CPU 1.
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let fill = |task: &str, cpu: &str| {
            doc.descendants()
                .find(|n| {
                    n.attribute("class") == Some("run")
                        && n.attribute("data-task") == Some(task)
                        && n.attribute("data-cpu") == Some(cpu)
                })
                .and_then(|n| n.attribute("fill"))
                .unwrap()
                .to_string()
        };
        assert_ne!(fill("x", "0"), fill("x", "1"));
        assert_eq!(fill("x", "1"), fill("y", "1"));
        assert!(!svg.contains("colours repeat"));
        // Past the palette's ten colours the legend says they repeat; every CPU still has a row.
        let mut g = Gantt::new(&header(12), 0, 10 * MS);
        g.add(&run(0, 11, 0, 4));
        let svg = g.to_svg();
        assert!(svg.contains("(colours repeat)") && svg.contains(">CPU 11<"));
        assert_eq!(elements(&svg, "cpu-run")[0]["data-cpu"], "11");
    }

    #[test]
    fn fifty_tasks_stay_readable() {
        let mut g = Gantt::new(&header(1), 0, 100 * MS);
        for t in 0..50u32 {
            g.add(&Record::Task {
                task: t,
                process: t,
                name: format!("task-with-a-long-name-{t:02}-and-more"),
            });
            g.add(&run(t, 0, 2 * t as u64, 2 * t as u64 + 2));
        }
        let svg = g.to_svg();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let root = doc.root_element();
        let height: f64 = root.attribute("height").unwrap().parse().unwrap();
        assert!(height > 50.0 * 16.0, "the chart grows with its rows: {height}");
        // Row labels: one per task, cut to 28 characters, at least 16 px apart (11 px text).
        let labels: Vec<(f64, String)> = doc
            .descendants()
            .filter(|n| n.attribute("text-anchor") == Some("end"))
            .map(|n| (n.attribute("y").unwrap().parse().unwrap(), n.text().unwrap().to_string()))
            .collect();
        assert_eq!(labels.len(), 50);
        assert!(labels.iter().all(|(_, l)| l.chars().count() <= LABEL_CHARS && l.ends_with('…')));
        for w in labels.windows(2) {
            assert!(w[1].0 - w[0].0 >= 16.0, "{w:?}");
        }
        // Axis ticks do not overlap: at least 90 px apart, labels of at most 8 characters.
        let ticks: Vec<(f64, String)> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("tick"))
            .map(|n| (n.attribute("x").unwrap().parse().unwrap(), n.text().unwrap().to_string()))
            .collect();
        assert!(ticks.len() >= 5, "{ticks:?}");
        // The top axis repeats the bottom one on a tall chart.
        let half = &ticks[..ticks.len() / 2];
        assert_eq!(half[..3].iter().map(|t| t.1.as_str()).collect::<Vec<_>>(), ["0", "20ms", "40ms"]);
        for w in half.windows(2) {
            assert!(w[1].0 - w[0].0 >= 70.0 && w[0].1.len() <= 8, "{w:?}");
        }
        assert_eq!(elements(&svg, "run").len(), 50);
    }

    #[test]
    fn tasks_left_out_are_counted_past_the_bound_on_bars() {
        // Each task once, many more than the bars a chart keeps: all are counted, up to MAX_NAMES.
        for tasks in [MAX_BARS as u32 + 5_000, MAX_NAMES as u32 + 7] {
            let mut g = Gantt::new(&header(1), 0, u64::MAX);
            for task in 0..tasks {
                let start = u64::from(task) * 10;
                let why = EndReason::Preempted;
                g.add(&Record::Run { task, cpu: 0, start, end: start + 10, why, complete: true });
            }
            let counted = tasks.min(MAX_NAMES as u32) as usize;
            assert_eq!(g.left_out(), counted - MAX_ROWS, "{tasks} tasks");
            assert_eq!(g.left_out_at_least(), tasks as usize > MAX_NAMES, "{tasks} tasks");
        }
    }

    #[test]
    fn too_many_bars_are_refused_on_the_chart() {
        let mut g = Gantt::new(&header(1), 0, 1_000_000_000);
        g.add(&Record::Task { task: 0, process: 0, name: "busy".into() });
        for k in 0..(MAX_BARS as u64 + 10) {
            g.add(&Record::Run {
                task: 0,
                cpu: 0,
                start: k * 1000,
                end: k * 1000 + 500,
                why: EndReason::Preempted,
                complete: true,
            });
        }
        assert_eq!(g.stretches(), MAX_BARS as u64 + 10);
        assert_eq!(g.bars.len(), MAX_BARS, "nothing is kept past the bound");
        let msg = g.overflow().expect("over the bound");
        assert!(msg.contains("20010 stretches") && msg.contains("shorter window"), "{msg}");
        let svg = g.to_svg();
        assert!(elements(&svg, "run").is_empty());
        assert!(svg.contains("too much to draw"));
        assert!(svg.len() < 10_000, "{}", svg.len());
    }

    #[test]
    fn klogger_idle_has_no_row_and_times_are_from_the_trace_start() {
        let h = Header::new(
            Source::Klogger { kernel: "k".into(), target: "system".into() },
            1,
            "CLOCK_MONOTONIC",
            5_000 * MS,
            None,
        );
        let mut g = Gantt::new(&h, 0, 10 * MS);
        g.add(&Record::Task { task: 0, process: 0, name: "idle".into() });
        g.add(&Record::Task { task: 7, process: 7, name: "bash".into() });
        g.add(&run(0, 0, 5_000, 5_002));
        g.add(&run(7, 0, 5_002, 5_004));
        let svg = g.to_svg();
        let bars = elements(&svg, "run");
        assert_eq!(bars.len(), 1);
        assert_eq!(
            (bars[0]["data-start-ns"].as_str(), bars[0]["data-end-ns"].as_str()),
            ("2000000", "4000000")
        );
        assert!(!svg.contains(">idle<"));
    }

    #[test]
    fn ticks_fall_on_round_steps_in_the_unit_of_the_step() {
        let labels = |from, to, most| ticks(from, to, most).into_iter().map(|t| t.1).collect::<Vec<_>>();
        assert_eq!(
            labels(0, 200 * MS, 10),
            ["0", "20ms", "40ms", "60ms", "80ms", "100ms", "120ms", "140ms", "160ms", "180ms", "200ms"]
        );
        assert_eq!(labels(MS, 2 * MS, 4), ["1.0ms", "1.5ms", "2.0ms"]);
        assert_eq!(
            labels(1_000_000_000, 1_000_010_000, 5),
            ["1.000000s", "1.000002s", "1.000004s", "1.000006s", "1.000008s", "1.000010s"]
        );
        assert_eq!(labels(0, 3 * 1_000_000_000, 8), ["0", "0.5s", "1.0s", "1.5s", "2.0s", "2.5s", "3.0s"]);
        assert_eq!(labels(0, 700, 8), ["0", "100ns", "200ns", "300ns", "400ns", "500ns", "600ns", "700ns"]);
    }
}
