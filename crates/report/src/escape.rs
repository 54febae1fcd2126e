//! Text for each medium: the one place where names from outside are escaped on their way out.
//!
//! A task's name is chosen by whoever started the task (any process renames itself with
//! `prctl(PR_SET_NAME)`), read from a trace file or a klogger recording, or typed in a scenario.
//! The data keep it byte for byte (the trace file, the per-job rows, every JSON value); each
//! output escapes it for its medium, here, so that no call site escapes by hand:
//!
//! | medium | function | what it does |
//! |---|---|---|
//! | terminal (tables, reports, stderr) | [`visible`] | control characters, the characters that reorder text and every other one that shows nothing of itself (format, private-use, unassigned, default-ignorable: `diag::is_hidden`) written as `\x1b`, `\u{202e}`, `\u{200b}` |
//! | CSV | [`csv_field`] | RFC 4180 quoting; the name kept exact |
//! | JSON | none: `serde_json` | every JSON output is written by `serde_json`, which escapes what JSON requires; the name kept exact |
//! | HTML and SVG written by hand | [`markup`] | [`visible`], then `& < > " '` as entities, for text and attribute values alike |
//! | SVG drawn by `plotters` | [`visible`] | `plotters` writes `& < > " '` as entities itself; [`visible`] removes what XML forbids |
//!
//! [`Table::render`](crate::Table::render) (the terminal), [`Table::to_markdown`](crate::Table::to_markdown),
//! [`Table::to_html`](crate::Table::to_html), [`Figure`](crate::Figure),
//! [`Gantt`](crate::Gantt), [`HtmlReport`](crate::HtmlReport) and
//! [`analyses::execution_map`](crate::analyses::execution_map) apply these to every text they are
//! given, so a caller hands them names as they are.
//!
//! **Why the visible form, and not the name, in HTML and SVG.** XML 1.0 cannot hold most control
//! characters at all, not even as `&#27;`; a page or drawing that held one would not be
//! well-formed, and a viewer would refuse it or show nothing. The characters that reorder text
//! (U+202E, the right-to-left override, turns `gpj.exe` into `exe.jpg`) are allowed but lie to
//! the reader. So a drawing shows the same visible form a terminal does, and the exact name stays in
//! the data (the Gantt chart's `data-task` attribute holds the visible form too: XML cannot hold the
//! exact one).
//!
//! **CSV and formulas.** A spreadsheet opened on a CSV file evaluates a field that starts with `=`,
//! `+`, `-` or `@` as a formula. [`csv_field`] does not defuse such fields (with a leading `'`, as
//! some tools do): every CSV file the tools write (`smartsim run --jobs` and `--timeline`) holds
//! names from the user's own scenario, not from the kernel or a trace someone else made, and the
//! rows are data for programs (pandas, a comparison with SimSo) that must read the name exactly;
//! a prefix would change every name that starts with `-`.
//!
//! [`visible`] lives in crate `diag` (every binary's terminal output, including `scx_smart`'s,
//! which prints the kernel's command names and does not depend on this crate); it is re-exported
//! here so that this module is the whole list.

use std::borrow::Cow;

pub use diag::{is_hidden, visible};

/// Text for HTML and for SVG written by hand, in element content and in attribute values (quoted
/// with `"` or `'`) alike: [`visible`] (so it holds nothing XML forbids, nor anything that reorders
/// the text around it), then `<`, `>`, `&`, `"` and `'` as `&lt;`, `&gt;`, `&amp;`, `&quot;` and
/// `&#39;`.
///
/// ```
/// assert_eq!(report::escape::markup("<b>R&D</b>"), "&lt;b&gt;R&amp;D&lt;/b&gt;");
/// assert_eq!(report::escape::markup("a\u{1b}[2J\"'"), "a\\x1b[2J&quot;&#39;");
/// ```
pub fn markup(text: &str) -> String {
    let shown = visible(text);
    let mut out = String::with_capacity(shown.len());
    for c in shown.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A field of a CSV file (RFC 4180): quoted, with each `"` doubled, when it holds a comma, a
/// quote, a line break or any other control character; else as it is. A CSV reader gives back the
/// exact text (the `csv` crate does; a test checks it on arbitrary strings). See the module
/// documentation on formulas.
///
/// ```
/// assert_eq!(report::escape::csv_field("R1"), "R1");
/// assert_eq!(report::escape::csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
/// ```
pub fn csv_field(text: &str) -> Cow<'_, str> {
    if text.chars().any(|c| c == ',' || c == '"' || c.is_control()) {
        Cow::Owned(format!("\"{}\"", text.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn markup_escapes_markup_and_makes_controls_visible() {
        assert_eq!(markup(r#"a<b>&"c"'d'"#), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
        assert_eq!(markup("]]>"), "]]&gt;");
        assert_eq!(markup("&amp;"), "&amp;amp;");
        assert_eq!(markup("\u{0}\u{8}\u{b}\u{1f}\u{fffe}"), "\\x00\\x08\\x0b\\x1f\\u{fffe}");
        assert_eq!(markup("video ✓"), "video ✓");
    }

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("conventional"), "conventional");
        assert_eq!(csv_field(" spaced "), " spaced ");
        assert_eq!(csv_field("=1+1"), "=1+1");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_field("bell\u{7}"), "\"bell\u{7}\"");
        assert_eq!(csv_field(""), "");
    }

    /// Any string, weighted toward the characters that matter here.
    fn name() -> impl Strategy<Value = String> {
        let hostile = prop::sample::select(vec![
            '\u{0}', '\u{1b}', '\n', '\r', '\t', '\u{7f}', '\u{9b}', '\u{202e}', '\u{2066}', '\u{fffe}', ',',
            '"', '\'', '<', '>', '&', ';', ']', ' ', '\\', 'é', '✓',
        ]);
        // Characters that show nothing of themselves: a name holding one passes for another.
        let invisible = prop::sample::select(
            "\u{200b}\u{feff}\u{ad}\u{34f}\u{e0001}\u{180e}\u{115f}\u{3164}\u{1d173}\u{e000}\u{2060}\u{fe0f}"
                .chars()
                .collect::<Vec<char>>(),
        );
        prop::collection::vec(prop_oneof![3 => hostile, 2 => invisible, 1 => any::<char>()], 0..40)
            .prop_map(|v| v.into_iter().collect())
    }

    proptest! {
        /// Whatever the name, its markup parses as XML text and as an attribute value, and reads
        /// back as its visible form.
        #[test]
        fn markup_is_well_formed_xml_of_the_visible_text(n in name()) {
            let m = markup(&n);
            let doc = format!("<svg a=\"{m}\" b='{m}'>{m}<title>{m}</title></svg>");
            let parsed = roxmltree::Document::parse(&doc);
            prop_assert!(parsed.is_ok(), "{doc:?}: {parsed:?}");
            let parsed = parsed.unwrap();
            let root = parsed.root_element();
            let shown = visible(&n);
            prop_assert_eq!(root.attribute("a"), Some(shown.as_ref()));
            prop_assert_eq!(root.attribute("b"), Some(shown.as_ref()));
            prop_assert_eq!(root.text(), Some(shown.as_ref()).filter(|s| !s.is_empty()));
        }
    }
}
