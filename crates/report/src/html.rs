//! A self-contained HTML report page.

use std::path::Path;

use crate::escape::markup;
use crate::{Figure, Table};

/// Text as HTML paragraphs: blank lines separate them, other line breaks are kept as `<br>`.
fn paragraphs(text: &str) -> String {
    let mut out = String::new();
    for para in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        let lines: Vec<String> = para.lines().map(markup).collect();
        out.push_str(&format!("<p>{}</p>\n", lines.join("<br>\n")));
    }
    out
}

/// HTML report: a page with a title, sections each holding a paragraph, a table (as HTML) and
/// inline SVG figures.
///
/// The page is one file with no external resources (styles inline, figures as inline `<svg>`),
/// so it can be archived, mailed or attached as is. It fits any window from 500 CSS pixels up
/// (`scripts/check-report-browser` checks it in Chromium): figures shrink with the window
/// keeping their aspect ratio, a table wider than the window scrolls sideways in its own box,
/// and long words wrap. All text given to it is escaped; it never
/// interprets its input as HTML. Sections are rendered when added (the table and figures are
/// borrowed only for the call). With two or more sections the page starts with a list of links
/// to them.
///
/// ```
/// let mut page = report::HtmlReport::new("SMART vs WFQ");
/// page.section("Setup", "Three tasks, shares 3:2:1.", None, &[]);
/// assert!(page.render().contains("<h2 id=\"s1\">Setup</h2>"));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HtmlReport {
    title: String,
    /// Paragraphs under the title, before the list of sections.
    intro: String,
    /// `(heading, rendered body)` per section.
    sections: Vec<(String, String)>,
    /// A section shown before the list of sections ([`HtmlReport::lead_with_last`]).
    lead: Option<(String, String)>,
}

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;\
max-width:1040px;margin:2em auto;padding:0 1em;color:#1a1a1a;line-height:1.5;\
overflow-wrap:break-word}\
h1{font-size:1.8em;margin-bottom:.3em}h2{margin-top:1.8em;border-bottom:1px solid #ddd}\
.wide{overflow-x:auto;margin:1em 0}\
table{border-collapse:collapse;font-variant-numeric:tabular-nums}\
th,td{padding:.25em .8em;border-bottom:1px solid #e4e4e4;text-align:left}\
th{border-bottom:2px solid #bbb}.num{text-align:right}\
figure{margin:1em 0}figure svg{max-width:100%;height:auto;display:block}\
figcaption{font-size:.95em;color:#333;margin-top:.4em}\
nav ol{padding-left:1.5em}";

impl HtmlReport {
    /// Creates an empty report with this page title (shown as `<title>` and `<h1>`).
    pub fn new(title: &str) -> Self {
        HtmlReport { title: title.to_string(), intro: String::new(), sections: Vec::new(), lead: None }
    }

    /// Sets the text under the title (blank lines separate paragraphs), e.g. what the page
    /// reproduces, cited in full.
    pub fn intro(&mut self, text: &str) {
        self.intro = paragraphs(text);
    }

    /// Appends a section: a heading, the text (blank lines separate paragraphs; other line
    /// breaks are kept as `<br>`), then the table if any, then each figure as inline SVG.
    pub fn section(&mut self, heading: &str, text: &str, table: Option<&Table>, figures: &[&Figure]) {
        let figures: Vec<(&Figure, &str)> = figures.iter().map(|f| (*f, "")).collect();
        self.section_captioned(heading, text, table, &figures);
    }

    /// As [`HtmlReport::section`], each figure with a caption under it (`<figcaption>`; blank lines
    /// separate its paragraphs; none when empty).
    pub fn section_captioned(
        &mut self,
        heading: &str,
        text: &str,
        table: Option<&Table>,
        figures: &[(&Figure, &str)],
    ) {
        let drawings: Vec<(String, &str)> = figures.iter().map(|(f, c)| (f.to_svg(), *c)).collect();
        self.section_drawings(heading, text, table.as_slice(), &drawings);
    }

    /// Appends a section: the text, the tables, then each drawing (an SVG document made by this
    /// crate: a [`Figure`], a [`crate::BarChart`], a [`crate::Gantt`]) with its caption under it.
    pub fn section_drawings(
        &mut self,
        heading: &str,
        text: &str,
        tables: &[&Table],
        drawings: &[(String, &str)],
    ) {
        let mut body = paragraphs(text);
        for t in tables {
            // A table wider than the window scrolls sideways in its own box; the page does not.
            body.push_str("<div class=\"wide\">\n");
            body.push_str(&t.to_html());
            body.push_str("</div>\n");
        }
        for (svg, caption) in drawings {
            body.push_str("<figure>\n");
            // Inline SVG in HTML needs no XML declaration; plotters emits none, but be safe.
            let svg = match svg.find("<svg") {
                Some(i) => &svg[i..],
                None => svg,
            };
            body.push_str(svg.trim_end());
            if !caption.trim().is_empty() {
                body.push_str(&format!("\n<figcaption>{}</figcaption>", paragraphs(caption).trim_end()));
            }
            body.push_str("\n</figure>\n");
        }
        self.sections.push((heading.to_string(), body));
    }

    /// Shows the last section first, under the intro and before the list of sections: a summary
    /// known only at the end (a table of verdicts) on the first screen.
    pub fn lead_with_last(&mut self) {
        self.lead = self.sections.pop();
    }

    /// Appends a section holding an SVG drawing made by this crate (e.g.
    /// [`crate::analyses::execution_map`]) after the text.
    pub fn section_svg(&mut self, heading: &str, text: &str, svg: &str) {
        self.section(heading, text, None, &[]);
        let body = &mut self.sections.last_mut().expect("just added").1;
        let svg = svg.find("<svg").map_or(svg, |i| &svg[i..]);
        body.push_str(&format!("<figure>\n{}\n</figure>\n", svg.trim_end()));
    }

    /// Renders the whole page as an HTML5 document.
    pub fn render(&self) -> String {
        let title = markup(&self.title);
        let mut out = format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n{}",
            self.intro
        );
        if let Some((heading, body)) = &self.lead {
            out.push_str(&format!(
                "<section>\n<h2 id=\"lead\">{}</h2>\n{}</section>\n",
                markup(heading),
                body
            ));
        }
        if self.sections.len() >= 2 {
            out.push_str("<nav><ol>\n");
            for (i, (heading, _)) in self.sections.iter().enumerate() {
                out.push_str(&format!("<li><a href=\"#s{}\">{}</a></li>\n", i + 1, markup(heading)));
            }
            out.push_str("</ol></nav>\n");
        }
        for (i, (heading, body)) in self.sections.iter().enumerate() {
            out.push_str(&format!(
                "<section>\n<h2 id=\"s{}\">{}</h2>\n{}</section>\n",
                i + 1,
                markup(heading),
                body
            ));
        }
        out.push_str("</body>\n</html>\n");
        out
    }

    /// Writes [`HtmlReport::render`] to `path`, replacing the file.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Series;

    #[test]
    fn escapes_all_text() {
        let mut page = HtmlReport::new("a <b> & c");
        let mut t = Table::new(&["x<y"]);
        t.row(vec!["p&q".into()]);
        page.section("<script>alert(1)</script>", "1 < 2 && 3 > 2", Some(&t), &[]);
        let html = page.render();
        assert!(html.contains("<title>a &lt;b&gt; &amp; c</title>"));
        assert!(html.contains("<h1>a &lt;b&gt; &amp; c</h1>"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!html.contains("<script>"));
        assert!(html.contains("<p>1 &lt; 2 &amp;&amp; 3 &gt; 2</p>"));
        assert!(html.contains("<th>x&lt;y</th>"));
        assert!(html.contains("<td>p&amp;q</td>"));
    }

    #[test]
    fn sections_hold_paragraphs_tables_and_figures() {
        let mut page = HtmlReport::new("r");
        let mut f = Figure::new("fig <1>", "x", "y");
        f.measured.push(Series::new("A&B", vec![(0.0, 0.0), (1.0, 1.0)]));
        let t = Table::new(&["h"]);
        page.section("one", "first\n\nsecond\nline", Some(&t), &[&f, &f]);
        page.section("two", "", None, &[]);
        let html = page.render();
        assert!(html.contains("<p>first</p>\n<p>second<br>\nline</p>"), "{html}");
        assert_eq!(html.matches("<figure>").count(), 2);
        assert_eq!(html.matches("<svg").count(), 2);
        assert_eq!(html.matches("<table>").count(), 1);
        assert!(html.contains("<div class=\"wide\">\n<table>"), "a table scrolls in its own box");
        assert!(html.contains("<a href=\"#s2\">two</a>"));
        // The SVG's own text is escaped by the SVG writer.
        assert!(html.contains("A&amp;B") && html.contains("fig &lt;1&gt;"));
        // Everything except the doctype is well-formed XML, so an XML parser reads the page.
        let body = html.trim_start_matches("<!DOCTYPE html>\n");
        let xml =
            body.replace("<br>", "<br/>").replace("<meta charset=\"utf-8\">", "<meta charset=\"utf-8\"/>");
        let xml = xml.replace(
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>",
        );
        roxmltree::Document::parse(&xml).expect("page is well-formed apart from void tags");
    }
}
