//! Output for the SMART tools: terminal tables, SVG figures (also as PNG and PDF), a
//! self-contained HTML report and Perfetto (Chrome trace event JSON) export.
//!
//! The simulator `smartsim` and the measurement tools (`hourglass`, `klogger`) all end in the same
//! few artefacts, so they are built here once:
//!
//! - [`Table`]: a plain-text table with aligned columns for terminals (numeric columns
//!   right-aligned), also as Markdown and HTML.
//! - [`Figure`]: a line chart in the style of the SMART dissertation's figures 6-1 to 6-7
//!   (cumulative execution time against wall time): measured series solid, ideal series dashed in
//!   the same colour, a legend, axis labels and a title. Rendered to SVG with `plotters`.
//! - [`BarChart`]: grouped bars with 95 % intervals as whiskers and reference values (a paper's
//!   numbers) as marks, like the dissertation's figs. 6-16 to 6-19.
//! - [`HtmlReport`]: one HTML page of sections, each a paragraph, an optional table and inline SVG
//!   figures; no external files, scripts or fonts, so it can be mailed or attached to an issue.
//! - [`analyses`]: the tables and figures of a trace's analyses (tasks, tick billing, quantum CDFs,
//!   billing scatter) and the HTML sections every tool's trace report has.
//! - [`Gantt`]: a Gantt chart of a window of an execution trace, as SimSo draws them: a row per
//!   task (and per CPU on a machine of several), executions as bars, releases and deadlines as
//!   arrows, missed deadlines crossed out in red; hand-written SVG text whose bars and marks carry
//!   their exact times as `data-*` attributes. A window of more than [`MAX_BARS`] stretches is
//!   refused *on the chart* (rows and axis, and a line saying to choose a shorter window) rather than
//!   drawn as a file of megabytes of sub-pixel slivers.
//! - [`Trace`]: Chrome trace event JSON (`{"traceEvents": [...]}`) that opens in
//!   <https://ui.perfetto.dev> and `chrome://tracing`: one track per task, complete events for
//!   execution intervals, instant events for marks such as deadline misses.
//! - [`escape`]: names and other text from outside, escaped for each medium (terminal, CSV, HTML,
//!   SVG) in one place; every writer above uses it.
//! - [`export`]: a figure (any SVG) to PNG with `resvg` or to a vector PDF with `svg2pdf`, in
//!   process, text drawn with the system's fonts (DejaVu Sans when installed).
//!
//! # Design decision
//!
//! Everything is rendered as *text* first (SVG, HTML, JSON): `plotters` is used with only its SVG
//! backend, which emits `<text>` elements and leaves glyph rendering to the viewer, so the output
//! is byte-for-byte deterministic (the same data give the same file, which the simulator's
//! reproducibility promise relies on) and the SVG is the reference artefact. PNG and PDF are
//! conversions of that SVG ([`export`]), made in process by the pure-Rust `resvg`/`usvg`/`svg2pdf`
//! stack (no system library, no external program); they need font files at run time and depend on
//! which sans-serif face the machine has, so they are deterministic per machine, not across
//! machines.
//!
//! # Where it is weak
//!
//! - Text widths are *estimated* (plotters' naive layout, about 0.7 em per character) because the
//!   SVG backend cannot measure glyphs; very long tick labels or legend names may be placed a few
//!   pixels off, and the viewer's sans-serif font decides the final look.
//! - Plot coordinates are whole pixels (a `plotters` limit); at 960×600 this is invisible for
//!   lines but a series with many tiny steps is drawn as a staircase of pixels.
//! - Series longer than [`MAX_PLOT_POINTS`] are downsampled (largest-triangle-three-buckets)
//!   for drawing; the shape is kept, single-sample spikes narrower than a bucket may not be.
//! - [`Table`] aligns by `char` count, not display width: East Asian wide characters and emoji
//!   misalign the terminal rendering.
//! - [`Trace`] keeps all events in memory until [`Trace::write`]; names are interned, so an
//!   event costs about 32 bytes (a million intervals is about 32 MB).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod analyses;
mod bars;
pub mod escape;
pub mod export;
mod figure;
mod gantt;
mod html;
mod table;
mod trace;

pub use bars::BarChart;
pub use figure::{downsample, Figure, Series, MAX_PLOT_POINTS};
pub use gantt::{Gantt, DEFAULT_WINDOW_NS, MAX_BARS, MAX_MARKS, MAX_ROWS};
pub use html::HtmlReport;
pub use table::Table;
pub use trace::Trace;

/// Formats nanoseconds as a short self-describing time, to the precision people read: `1.5s`,
/// `1020ms`, `87.0us`, `500ns`, `3m` (whole minutes). The time formatter of every text output.
pub fn format_time(ns: u64) -> String {
    fn trim(s: String) -> String {
        if !s.contains('.') {
            return s;
        }
        let t = s.trim_end_matches('0');
        t.strip_suffix('.').map_or(t.to_string(), |x| format!("{x}.0"))
    }
    let f = ns as f64;
    if ns >= 60_000_000_000 && ns % 60_000_000_000 == 0 {
        format!("{}m", ns / 60_000_000_000)
    } else if ns >= 1_000_000_000 {
        trim(format!("{:.3}", f / 1e9)) + "s"
    } else if ns >= 1_000_000 {
        trim(format!("{:.3}", f / 1e6)) + "ms"
    } else if ns >= 1_000 {
        trim(format!("{:.1}", f / 1e3)) + "us"
    } else {
        format!("{ns}ns")
    }
}

/// Formats nanoseconds exactly, in the largest unit that writes them as a whole number: `0s`,
/// `200ms`, `1500us`, `3s`, `7ns` (what a command line reads back with `workload::parse_time`).
pub fn format_time_exact(ns: u64) -> String {
    if ns == 0 {
        return "0s".into();
    }
    for (unit, scale) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns % scale == 0 {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

/// Escapes text for HTML and XML content and attribute values: [`escape::markup`], under the name
/// it had before that module.
pub fn escape_html(text: &str) -> String {
    escape::markup(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_written() {
        assert_eq!(format_time(87_000), "87.0us");
        assert_eq!(format_time(1_500_000_000), "1.5s");
        assert_eq!(format_time(1_020_000_000), "1.02s");
        assert_eq!(format_time(5_300_000), "5.3ms");
        assert_eq!(format_time(180_000_000_000), "3m");
        assert_eq!(format_time(500), "500ns");
    }

    #[test]
    fn exact_times_are_whole_numbers_of_their_unit() {
        assert_eq!(format_time_exact(0), "0s");
        assert_eq!(format_time_exact(200_000_000), "200ms");
        assert_eq!(format_time_exact(1_500_000), "1500us");
        assert_eq!(format_time_exact(3_000_000_000), "3s");
        assert_eq!(format_time_exact(1_000_000_001), "1000000001ns");
    }

    #[test]
    fn escapes_markup_characters() {
        assert_eq!(escape_html(r#"a<b>&"c"'d'"#), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
    }
}
