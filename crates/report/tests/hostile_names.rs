//! Names from outside (a process's `comm`, a trace's task names) through every writer of this
//! crate: each SVG and HTML output is well-formed XML (read by `roxmltree`) in which each name's
//! visible form (`report::escape::visible`) can be found, and no text output lets a control
//! character through raw. `crates/sim/tests/hostile_names.rs` does the same through the binaries.

use proptest::prelude::*;
use report::analyses::{execution_map, map_rows, trace_sections};
use report::escape::{csv_field, is_hidden, visible};
use report::{Figure, Gantt, HtmlReport, Series, Table};
use trace::timeline::{Group, Timeline};
use trace::{EndReason, Header, Outcome, Record, Source};

const MS: u64 = 1_000_000;

/// Names as hostile as a task's name can be: every control character, markup, the end of a CDATA
/// section, an entity, quotes, code points XML forbids, a right-to-left override, only spaces, a
/// name as long as a trace holds, and an ordinary one.
fn hostile_names() -> Vec<String> {
    let controls: String = (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32).collect();
    vec![
        format!("all{controls}controls"),
        "evil\u{1b}[2J\u{1b}]0;title\u{7}".into(),
        "<script>alert(1)</script>".into(),
        "]]>".into(),
        "&amp; &lt;".into(),
        "\"double\" 'single'".into(),
        "nul\u{0}\u{8}\u{b}\u{c}\u{fffe}\u{ffff}".into(),
        "abc\u{202e}gpj.exe".into(),
        "au\u{200b}dio \u{feff}\u{ad}\u{34f}\u{e0001}\u{180e}\u{115f}\u{3164}\u{1d173}\u{e000}".into(),
        "   ".into(),
        "x".repeat(trace::MAX_TEXT),
        "audio ✓".into(),
    ]
}

/// A trace of 2 CPUs in which each task of `names` runs, is released, has a deadline and misses
/// every other one.
fn records(names: &[String]) -> (Header, Vec<Record>) {
    let h = Header::new(Source::Hourglass { kernel: "6.1\u{1b}[31m".into() }, 2, "CLOCK\u{0}", 0, Some(100));
    let mut r = Vec::new();
    for (k, n) in names.iter().enumerate() {
        r.push(Record::Task { task: k as u32, process: 1, name: n.clone() });
    }
    for (k, _) in names.iter().enumerate() {
        let t = k as u32;
        for j in 0..4u64 {
            let at = j * 10 * MS + k as u64 * MS / 2;
            r.push(Record::Release { task: t, job: j as u32, at, deadline: Some(at + 8 * MS) });
            let why = if j % 2 == 0 { EndReason::Preempted } else { EndReason::Blocked };
            r.push(Record::Run {
                task: t,
                cpu: (k % 2) as u32,
                start: at,
                end: at + 3 * MS,
                why,
                complete: true,
            });
            r.push(Record::Wake { task: t, cpu: Some((k % 2) as u32), at });
            let outcome = if j % 2 == 0 { Outcome::Met } else { Outcome::Late };
            r.push(Record::JobEnd { task: t, job: j as u32, at: at + 9 * MS, outcome });
        }
    }
    r.push(Record::End { at: 50 * MS });
    (h, r)
}

/// The HTML page as XML: the doctype dropped and the void elements closed (the page is otherwise
/// XML, see `html.rs`'s tests).
fn html_as_xml(html: &str) -> String {
    html.trim_start_matches("<!DOCTYPE html>\n")
        .replace("<br>", "<br/>")
        .replace("<meta charset=\"utf-8\">", "<meta charset=\"utf-8\"/>")
        .replace(
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>",
        )
}

/// Every text node (with the line breaks plotters puts around its text trimmed) and attribute value
/// of `xml`, which must be well-formed.
fn texts(what: &str, xml: &str) -> Vec<String> {
    let doc =
        roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("{what} is not well-formed XML: {e}"));
    let mut out = Vec::new();
    for n in doc.descendants() {
        if let Some(t) = n.text().filter(|_| n.is_text()) {
            out.push(t.trim_matches('\n').to_string());
        }
        out.extend(n.attributes().map(|a| a.value().to_string()));
    }
    out
}

/// No character that a terminal or XML must not get raw, but for line feeds between lines.
fn no_raw_controls(what: &str, text: &str) {
    if let Some((i, c)) = text.char_indices().find(|&(_, c)| c != '\n' && is_hidden(c)) {
        panic!("{what}: U+{:04X} raw at byte {i}", c as u32);
    }
}

/// Checks that `name`'s visible form is one of `texts` (or, as `holds`, in one of them).
fn shown(what: &str, texts: &[String], name: &str, holds: bool) {
    let v = visible(name);
    let found = texts.iter().any(|t| if holds { t.contains(v.as_ref()) } else { *t == v });
    assert!(found, "{what} does not show {v:?}");
}

#[test]
fn the_gantt_chart_is_well_formed_and_names_every_task() {
    let names = hostile_names();
    let (h, recs) = records(&names);
    let mut g = Gantt::new(&h, 0, 50 * MS);
    g.set_title("a <title> with \u{1b}[2J");
    for r in &recs {
        g.add(r);
    }
    let svg = g.to_svg();
    no_raw_controls("gantt", &svg);
    let t = texts("gantt", &svg);
    for n in &names {
        // The row label is cut to 28 characters; its tooltip, the bars' `data-task` and the marks'
        // tooltips hold the whole visible name.
        shown("gantt", &t, n, false);
        shown("gantt", &t, n, true);
    }
    assert!(t.iter().any(|x| x.starts_with("a <title> with \\x1b[2J")), "{t:?}");
}

#[test]
fn a_figure_of_hostile_series_is_well_formed_and_names_each() {
    let names = hostile_names();
    let mut f = Figure::new("fig \u{1b}[2J <1> & \u{202e}", "x \u{0}", "y \"'");
    for (k, n) in names.iter().enumerate() {
        let pts = vec![(0.0, 0.0), (1.0, k as f64)];
        f.measured.push(Series::new(n.clone(), pts.clone()));
        f.ideal.push(Series::new(n.clone(), vec![(0.0, 0.0), (1.0, k as f64 + 0.5)]));
        f.scatter.push(Series::new(format!("{n} dots"), pts));
    }
    // An ideal series with no measured namesake gets its own legend entry.
    f.ideal.push(Series::new("only ideal \u{1}", vec![(0.0, 1.0), (1.0, 2.0)]));
    let svg = f.to_svg();
    no_raw_controls("figure", &svg);
    let t = texts("figure", &svg);
    for n in &names {
        shown("figure", &t, n, false);
        shown("figure", &t, &format!("{n} dots"), false);
    }
    for s in ["fig \u{1b}[2J <1> & \u{202e}", "x \u{0}", "y \"'", "only ideal \u{1}"] {
        shown("figure", &t, s, false);
    }
}

#[test]
fn the_trace_report_page_is_well_formed_and_names_every_task() {
    let names = hostile_names();
    let (h, recs) = records(&names);
    let tl = Timeline::from_records::<()>(&h, recs.iter().cloned().map(Ok)).unwrap();
    let mut page = HtmlReport::new("report of \u{1b}[2J<x>");
    page.intro("from \u{202e}\u{0} & co");
    trace_sections(&mut page, &tl, Group::Thread, &[100, 1000], names.len(), |_| true);
    let mut g = Gantt::new(&h, 0, 50 * MS);
    for r in &recs {
        g.add(r);
    }
    page.section_svg("Gantt chart", "", &g.to_svg());
    let mut table = Table::new(&["name \u{7}"]);
    for n in &names {
        table.row(vec![n.clone()]);
    }
    page.section("names", "a\u{1b}b", Some(&table), &[]);
    let html = page.render();
    no_raw_controls("page", &html);
    let t = texts("page", &html_as_xml(&html));
    for n in &names {
        shown("page", &t, n, false);
        // The execution map's label and the figures' legends: `name (id)`.
        shown("page", &t, &format!("{n} ("), true);
    }
    shown("page", &t, "report of \u{1b}[2J<x>", false);
}

#[test]
fn the_execution_map_is_well_formed_and_names_every_row() {
    let names = hostile_names();
    let (h, recs) = records(&names);
    let tl = Timeline::from_records::<()>(&h, recs.iter().cloned().map(Ok)).unwrap();
    let rows = map_rows(&tl, Group::Thread, &tl.task_stats(Group::Thread));
    let svg = execution_map(&rows, 0, 50 * MS, 960);
    no_raw_controls("execution map", &svg);
    let t = texts("execution map", &svg);
    for n in &names {
        shown("execution map", &t, n, true);
    }
}

#[test]
fn terminal_and_markdown_tables_show_hostile_names_visibly_one_line_a_row() {
    let names = hostile_names();
    let mut t = Table::new(&["task", "cpu ms"]);
    for n in &names {
        t.row(vec![n.clone(), "1.0".into()]);
    }
    let render = t.render();
    let markdown = t.to_markdown();
    for (what, text) in [("render", &render), ("markdown", &markdown)] {
        no_raw_controls(what, text);
        assert_eq!(text.lines().count(), names.len() + 2, "{what}: a line per row\n{text}");
    }
    for n in &names {
        // Markdown writes a line break as a space and `|` as `\|` (cells are one line there).
        let md = visible(&n.replace('|', "\\|").replace(['\r', '\n'], " ")).into_owned();
        assert!(render.contains(visible(n).trim()), "render lacks {n:?}");
        assert!(markdown.contains(md.trim()), "markdown lacks {md:?}");
    }
}

/// Any string, weighted toward the characters that break terminals, CSV and markup.
fn any_name() -> impl Strategy<Value = String> {
    let hostile = prop::sample::select(vec![
        '\u{0}', '\u{1b}', '[', '\n', '\r', '\t', '\u{7}', '\u{8}', '\u{7f}', '\u{85}', '\u{9b}', '\u{202e}',
        '\u{2028}', '\u{fffe}', ',', '"', '\'', '=', '|', ' ', '\\', 'é', '✓',
    ]);
    // Characters that show nothing of themselves: a name holding one passes for another.
    let invisible = prop::sample::select(
        "\u{200b}\u{feff}\u{ad}\u{34f}\u{e0001}\u{180e}\u{115f}\u{3164}\u{1d173}\u{e000}\u{2060}\u{fe0f}"
            .chars()
            .collect::<Vec<char>>(),
    );
    prop::collection::vec(prop_oneof![3 => hostile, 2 => invisible, 1 => any::<char>()], 0..48)
        .prop_map(|v| v.into_iter().collect())
}

proptest! {
    /// A terminal table of arbitrary names: nothing hidden reaches it raw, a row is one line, and
    /// each name reads as its visible form.
    #[test]
    fn a_terminal_table_never_prints_a_control_character_raw(names in prop::collection::vec(any_name(), 1..6)) {
        let mut t = Table::new(&["task", "n"]);
        for n in &names {
            t.row(vec![n.clone(), "7".into()]);
        }
        let text = t.render();
        prop_assert!(!text.chars().any(|c| c != '\n' && is_hidden(c)), "{text:?}");
        prop_assert_eq!(text.lines().count(), names.len() + 2);
        for (n, line) in names.iter().zip(text.lines().skip(2)) {
            let v = visible(n);
            prop_assert!(line.contains(v.trim()), "{line:?} for {v:?}");
        }
    }

    /// A CSV row of arbitrary names (as `smartsim run --jobs` writes it) reads back exactly
    /// through the `csv` crate.
    #[test]
    fn csv_fields_read_back_exactly(names in prop::collection::vec(any_name(), 1..6)) {
        let mut text = String::from("task,job\n");
        for n in &names {
            text.push_str(&format!("{},1\n", csv_field(n)));
        }
        let mut r = csv::ReaderBuilder::new().has_headers(true).from_reader(text.as_bytes());
        let back: Vec<String> = r.records().map(|x| x.expect("a CSV record")[0].to_string()).collect();
        prop_assert_eq!(back, names);
    }
}
