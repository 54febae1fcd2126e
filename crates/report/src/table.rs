//! Plain-text, Markdown and HTML tables.

use serde::Serialize;

use crate::escape::{markup, visible};

/// Plain text table with aligned columns, for terminals; numbers right-aligned.
///
/// A column is right-aligned when every non-empty cell of its body is a number, optionally with
/// a unit suffix (`12`, `-3.5`, `1e6`, `99.9%`, `30ms`, `1.5 s`) or a placeholder (`-`, `—`,
/// `n/a`, `null`); other columns are left-aligned. Headers follow their column's alignment.
///
/// Serializes as `{"headers": [...], "rows": [[...], ...]}`.
///
/// Invariant: every row has as many cells as there are headers ([`Table::row`] panics
/// otherwise, naming both counts).
///
/// ```
/// let mut t = report::Table::new(&["task", "cpu s"]);
/// t.row(vec!["R1".into(), "12.5".into()]);
/// t.row(vec!["conventional".into(), "3".into()]);
/// assert_eq!(
///     t.render(),
///     "task          cpu s\n\
///      ------------  -----\n\
///      R1             12.5\n\
///      conventional      3\n"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// Creates a table with these column headers and no rows.
    pub fn new(headers: &[&str]) -> Self {
        Table { headers: headers.iter().map(|h| h.to_string()).collect(), rows: Vec::new() }
    }

    /// Appends a row.
    ///
    /// # Panics
    /// If `cells.len()` differs from the number of headers.
    pub fn row(&mut self, cells: Vec<String>) {
        assert_eq!(
            cells.len(),
            self.headers.len(),
            "report::Table::row: row has {} cells but the table has {} columns ({:?})",
            cells.len(),
            self.headers.len(),
            self.headers
        );
        self.rows.push(cells);
    }

    /// The column headers.
    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    /// The rows added so far.
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// Whether each column is right-aligned (numeric), see [`Table`].
    pub fn numeric_columns(&self) -> Vec<bool> {
        (0..self.headers.len())
            .map(|c| {
                let mut any = false;
                for row in &self.rows {
                    let cell = row[c].trim();
                    if cell.is_empty() || is_placeholder(cell) {
                        continue;
                    }
                    if !is_number(cell) {
                        return false;
                    }
                    any = true;
                }
                any
            })
            .collect()
    }

    /// Renders for a terminal: header line, a line of dashes under each header, then the rows;
    /// columns separated by two spaces; no trailing spaces; every line ends with `\n`. Every cell is
    /// shown as [`visible`] writes it (a name holding an escape sequence or a line break cannot
    /// reach the terminal raw, nor break the columns).
    pub fn render(&self) -> String {
        let headers: Vec<String> = self.headers.iter().map(|h| visible(h).into_owned()).collect();
        let rows: Vec<Vec<String>> =
            self.rows.iter().map(|r| r.iter().map(|c| visible(c).into_owned()).collect()).collect();
        let widths = widths(&headers, &rows);
        let numeric = self.numeric_columns();
        let mut out = String::new();
        let mut line = |cells: &mut dyn Iterator<Item = (usize, &str)>| {
            let mut l = String::new();
            for (c, cell) in cells {
                if c > 0 {
                    l.push_str("  ");
                }
                pad(&mut l, cell, widths[c], numeric[c]);
            }
            out.push_str(l.trim_end());
            out.push('\n');
        };
        line(&mut headers.iter().map(String::as_str).enumerate());
        let dashes: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        line(&mut dashes.iter().map(String::as_str).enumerate());
        for row in &rows {
            line(&mut row.iter().map(String::as_str).enumerate());
        }
        out
    }

    /// Renders as a GitHub-flavoured Markdown table, padded so the source is aligned too;
    /// numeric columns are marked right-aligned (`---:`), `|` in cells is escaped, newlines
    /// become spaces and other control characters are shown as [`visible`] writes them.
    pub fn to_markdown(&self) -> String {
        let cell = |s: &str| visible(&s.replace('|', "\\|").replace(['\r', '\n'], " ")).into_owned();
        let headers: Vec<String> = self.headers.iter().map(|h| cell(h)).collect();
        let rows: Vec<Vec<String>> = self.rows.iter().map(|r| r.iter().map(|c| cell(c)).collect()).collect();
        let numeric = self.numeric_columns();
        let widths: Vec<usize> = (0..headers.len())
            .map(|c| rows.iter().map(|r| width(&r[c])).chain([width(&headers[c]), 3]).max().unwrap_or(3))
            .collect();
        let mut out = String::new();
        let line = |out: &mut String, cells: &[String]| {
            out.push('|');
            for (c, s) in cells.iter().enumerate() {
                out.push(' ');
                pad(out, s, widths[c], numeric[c]);
                out.push_str(" |");
            }
            out.push('\n');
        };
        line(&mut out, &headers);
        let rule: Vec<String> = widths
            .iter()
            .zip(&numeric)
            .map(|(&w, &n)| if n { format!("{}:", "-".repeat(w - 1)) } else { "-".repeat(w) })
            .collect();
        line(&mut out, &rule);
        for r in &rows {
            line(&mut out, r);
        }
        out
    }

    /// Renders as an HTML `<table>` (with `<thead>` and `<tbody>`); all text is escaped and
    /// numeric columns get `class="num"` (the page of [`crate::HtmlReport`] right-aligns them).
    pub fn to_html(&self) -> String {
        let numeric = self.numeric_columns();
        let class = |c: usize| if numeric[c] { " class=\"num\"" } else { "" };
        let mut out = String::from("<table>\n<thead><tr>");
        for (c, h) in self.headers.iter().enumerate() {
            out.push_str(&format!("<th{}>{}</th>", class(c), markup(h)));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (c, cell) in row.iter().enumerate() {
                out.push_str(&format!("<td{}>{}</td>", class(c), markup(cell)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        out
    }
}

/// The width of each column: its widest cell or header.
fn widths(headers: &[String], rows: &[Vec<String>]) -> Vec<usize> {
    (0..headers.len())
        .map(|c| {
            rows.iter().map(|r| width(&r[c])).chain(std::iter::once(width(&headers[c]))).max().unwrap_or(0)
        })
        .collect()
}

/// Display width used for alignment: the number of `char`s.
fn width(s: &str) -> usize {
    s.chars().count()
}

fn pad(out: &mut String, s: &str, width: usize, right: bool) {
    let fill = width.saturating_sub(self::width(s));
    if right {
        out.push_str(&" ".repeat(fill));
        out.push_str(s);
    } else {
        out.push_str(s);
        out.push_str(&" ".repeat(fill));
    }
}

fn is_placeholder(s: &str) -> bool {
    matches!(s, "-" | "—" | "–" | "n/a" | "N/A" | "null" | "none" | "?")
}

/// A number with an optional unit suffix: `12`, `-3.5`, `+1e-6`, `99.9%`, `30ms`, `1.5 s`,
/// `inf`, `NaN`; thousands separators `_` and `,` are not accepted.
fn is_number(s: &str) -> bool {
    let numeric_end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .map_or(s.len(), |(i, _)| i);
    let (num, unit) = s.split_at(numeric_end);
    let unit = unit.trim_start();
    let num_ok = num.parse::<f64>().is_ok() && num.chars().any(|c| c.is_ascii_digit());
    let unit_ok = unit.len() <= 4 && unit.chars().all(|c| c.is_alphabetic() || c == '%');
    if num_ok && unit_ok {
        return true;
    }
    matches!(s.to_ascii_lowercase().as_str(), "inf" | "-inf" | "nan")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Table {
        let mut t = Table::new(&["task", "policy", "cpu %", "missed"]);
        t.row(vec!["R1".into(), "smart".into(), "49.5".into(), "0".into()]);
        t.row(vec!["conv-long".into(), "wfq".into(), "100".into(), "-".into()]);
        t.row(vec!["C".into(), "edf".into(), "1.25%".into(), "1234".into()]);
        t
    }

    #[test]
    fn render_aligns_columns_exactly() {
        let expected = "\
task       policy  cpu %  missed
---------  ------  -----  ------
R1         smart    49.5       0
conv-long  wfq       100       -
C          edf     1.25%    1234
";
        assert_eq!(small().render(), expected);
    }

    #[test]
    fn markdown_marks_numeric_columns_and_escapes_pipes() {
        let mut t = Table::new(&["name", "n"]);
        t.row(vec!["a|b".into(), "7".into()]);
        t.row(vec!["multi\nline".into(), "10".into()]);
        let expected = "\
| name       |   n |
| ---------- | --: |
| a\\|b       |   7 |
| multi line |  10 |
";
        assert_eq!(t.to_markdown(), expected);
    }

    #[test]
    fn html_escapes_and_marks_numbers() {
        let mut t = Table::new(&["<name>", "x"]);
        t.row(vec!["a&b".into(), "3".into()]);
        let html = t.to_html();
        assert!(html.contains("<th>&lt;name&gt;</th><th class=\"num\">x</th>"), "{html}");
        assert!(html.contains("<td>a&amp;b</td><td class=\"num\">3</td>"), "{html}");
    }

    #[test]
    fn empty_table_renders_headers() {
        let t = Table::new(&["a", "bb"]);
        assert_eq!(t.render(), "a  bb\n-  --\n");
    }

    #[test]
    #[should_panic(expected = "row has 1 cells but the table has 2 columns")]
    fn wrong_row_length_panics() {
        Table::new(&["a", "b"]).row(vec!["x".into()]);
    }

    #[test]
    fn recognises_numbers_with_units() {
        for s in ["0", "-3.5", "+1e-6", "99.9%", "30ms", "1.5 s", "676", "NaN", "inf"] {
            assert!(is_number(s), "{s}");
        }
        for s in ["R1", "e", "-", "1.2.3", "12 apples", "v2", "ms"] {
            assert!(!is_number(s), "{s}");
        }
    }
}
