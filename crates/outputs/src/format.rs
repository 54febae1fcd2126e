//! The formats the tools write, the extensions that name them, and which an option may write.

use std::path::Path;

/// A file format one of the tools writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// An SVG image (the figures' and charts' reference form).
    Svg,
    /// A PNG image, converted from the SVG (`report::export`).
    Png,
    /// A one-page vector PDF, converted from the SVG (`report::export`).
    Pdf,
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON object per line.
    JsonLines,
    /// One JSON document (Perfetto's Chrome trace events, say).
    Json,
    /// An HTML page.
    Html,
    /// The project's execution trace (`crates/trace`).
    Trace,
    /// A klogger recording.
    Klog,
    /// A scenario (TOML).
    Toml,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 10] = [
        Format::Svg,
        Format::Png,
        Format::Pdf,
        Format::Csv,
        Format::JsonLines,
        Format::Json,
        Format::Html,
        Format::Trace,
        Format::Klog,
        Format::Toml,
    ];

    /// The format's name, as messages give it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Svg => "SVG",
            Format::Png => "PNG",
            Format::Pdf => "PDF",
            Format::Csv => "CSV",
            Format::JsonLines => "JSON Lines",
            Format::Json => "JSON",
            Format::Html => "HTML",
            Format::Trace => "a trace (crates/trace)",
            Format::Klog => "a klogger recording",
            Format::Toml => "TOML (a scenario)",
        }
    }

    /// The extensions (lower case, without the dot) that name the format, the usual one first.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Format::Svg => &["svg"],
            Format::Png => &["png"],
            Format::Pdf => &["pdf"],
            Format::Csv => &["csv"],
            Format::JsonLines => &["jsonl", "ndjson"],
            Format::Json => &["json"],
            Format::Html => &["html", "htm"],
            Format::Trace => &["trace", "smtrace"],
            Format::Klog => &["klog"],
            Format::Toml => &["toml"],
        }
    }

    /// The usual extension, without the dot.
    pub fn extension(self) -> &'static str {
        self.extensions()[0]
    }

    /// The format an extension names (any case), if it names one of ours.
    pub fn of_extension(ext: &str) -> Option<Format> {
        let ext = ext.to_ascii_lowercase();
        Format::ALL.into_iter().find(|f| f.extensions().contains(&ext.as_str()))
    }
}

/// Extensions of formats no tool writes but a file name may still claim: an output so named is
/// refused rather than filled with something else.
const FOREIGN: &[(&str, &str)] = &[
    ("gif", "a GIF image"),
    ("jpg", "a JPEG image"),
    ("jpeg", "a JPEG image"),
    ("webp", "a WebP image"),
    ("bmp", "a BMP image"),
    ("tif", "a TIFF image"),
    ("tiff", "a TIFF image"),
    ("eps", "a PostScript image"),
    ("ps", "PostScript"),
    ("xml", "XML"),
    ("yaml", "YAML"),
    ("yml", "YAML"),
    ("md", "Markdown"),
    ("gz", "gzip"),
    ("zip", "a zip archive"),
];

/// What a file named with extension `ext` (any case) is taken to hold, if anything we know.
pub(crate) fn what_extension_claims(ext: &str) -> Option<&'static str> {
    if let Some(f) = Format::of_extension(ext) {
        return Some(f.name());
    }
    let ext = ext.to_ascii_lowercase();
    FOREIGN.iter().find(|(e, _)| *e == ext).map(|(_, what)| *what)
}

/// The formats one output option may write.
///
/// The file name chooses among them: an extension of one of them writes that one; a name without
/// an extension writes the first (the default, or the one a format option such as `--jobs-format`
/// chose). A *strict* kind (images) refuses every other name, as the image options always did; a
/// lenient one refuses an extension that names another format (`--jobs x.png`) and writes its
/// default under a name that claims nothing we know (`--trace run.out`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    formats: &'static [Format],
    strict: bool,
}

impl Kind {
    /// SVG, PNG or PDF, as the extension says (SVG without one); any other name is refused.
    pub const IMAGE: Kind = Kind::new(&[Format::Svg, Format::Png, Format::Pdf], true);
    /// CSV only.
    pub const CSV: Kind = Kind::new(&[Format::Csv], false);
    /// CSV (the default) or JSON Lines.
    pub const CSV_OR_JSON_LINES: Kind = Kind::new(&[Format::Csv, Format::JsonLines], false);
    /// One JSON document.
    pub const JSON: Kind = Kind::new(&[Format::Json], false);
    /// An HTML page.
    pub const HTML: Kind = Kind::new(&[Format::Html], false);
    /// The project's trace format.
    pub const TRACE: Kind = Kind::new(&[Format::Trace], false);
    /// A klogger recording.
    pub const KLOG: Kind = Kind::new(&[Format::Klog], false);
    /// A scenario (TOML).
    pub const SCENARIO: Kind = Kind::new(&[Format::Toml], false);

    /// The kind that writes `formats` (at least one; the first is the default); `strict` refuses
    /// any extension that is not one of theirs.
    pub const fn new(formats: &'static [Format], strict: bool) -> Kind {
        assert!(!formats.is_empty(), "a kind writes at least one format");
        Kind { formats, strict }
    }

    /// The formats, the default first.
    pub fn formats(&self) -> &'static [Format] {
        self.formats
    }

    /// Whether every name but one of the formats' extensions is refused.
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// `.svg, .png or .pdf`: the extensions a message suggests.
    pub(crate) fn suggestion(&self) -> String {
        let exts: Vec<String> = self.formats.iter().map(|f| format!(".{}", f.extension())).collect();
        match exts.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => exts.concat(),
        }
    }
}

/// The extension of `path` as written (`None` without a dot; `Some("")` for `fig.`).
pub(crate) fn extension(path: &Path) -> Option<String> {
    path.extension().map(|e| e.to_string_lossy().into_owned())
}

/// What an output's name and a format option choose.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    /// Write this.
    Write(Format),
    /// An extension the kind does not write: what it claims, if anything known.
    Refused { ext: String, claims: Option<&'static str> },
    /// The format option's format, and the other one the extension names.
    Disagrees { named: Format },
}

/// The format `path` is written in, for an option of `kind` with the format option's choice
/// `flag`.
pub(crate) fn choose(path: &Path, kind: Kind, flag: Option<Format>) -> Choice {
    let ext = extension(path);
    let named = ext.as_deref().and_then(Format::of_extension).filter(|f| kind.formats.contains(f));
    match (named, flag) {
        (Some(n), Some(f)) if n != f => Choice::Disagrees { named: n },
        (Some(n), _) => Choice::Write(n),
        (None, flag) => {
            let default = flag.unwrap_or(kind.formats[0]);
            match ext {
                None => Choice::Write(default),
                Some(e) => {
                    let claims = what_extension_claims(&e);
                    if kind.strict || claims.is_some() {
                        Choice::Refused { ext: e, claims }
                    } else {
                        Choice::Write(default)
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(path: &str, kind: Kind, flag: Option<Format>) -> Choice {
        choose(Path::new(path), kind, flag)
    }

    #[test]
    fn the_extension_chooses_among_the_formats_of_the_option() {
        assert_eq!(c("g.png", Kind::IMAGE, None), Choice::Write(Format::Png));
        assert_eq!(c("g.PDF", Kind::IMAGE, None), Choice::Write(Format::Pdf));
        assert_eq!(c("dir.d/g", Kind::IMAGE, None), Choice::Write(Format::Svg));
        assert_eq!(c("j.jsonl", Kind::CSV_OR_JSON_LINES, None), Choice::Write(Format::JsonLines));
        assert_eq!(c("j.csv", Kind::CSV_OR_JSON_LINES, None), Choice::Write(Format::Csv));
        assert_eq!(c("j", Kind::CSV_OR_JSON_LINES, None), Choice::Write(Format::Csv));
        assert_eq!(c("run.smtrace", Kind::TRACE, None), Choice::Write(Format::Trace));
    }

    #[test]
    fn a_format_option_chooses_when_the_name_does_not_and_must_agree_when_it_does() {
        let k = Kind::CSV_OR_JSON_LINES;
        assert_eq!(c("j", k, Some(Format::JsonLines)), Choice::Write(Format::JsonLines));
        assert_eq!(c("j.out", k, Some(Format::JsonLines)), Choice::Write(Format::JsonLines));
        assert_eq!(c("j.jsonl", k, Some(Format::JsonLines)), Choice::Write(Format::JsonLines));
        assert_eq!(c("j.csv", k, Some(Format::JsonLines)), Choice::Disagrees { named: Format::Csv });
    }

    #[test]
    fn a_name_that_claims_another_format_is_refused() {
        assert_eq!(
            c("j.png", Kind::CSV_OR_JSON_LINES, None),
            Choice::Refused { ext: "png".into(), claims: Some("PNG") }
        );
        assert_eq!(
            c("t.json", Kind::TRACE, None),
            Choice::Refused { ext: "json".into(), claims: Some("JSON") }
        );
        assert_eq!(
            c("r.klog", Kind::TRACE, None),
            Choice::Refused { ext: "klog".into(), claims: Some("a klogger recording") }
        );
        assert_eq!(
            c("s.toml", Kind::CSV, None),
            Choice::Refused { ext: "toml".into(), claims: Some("TOML (a scenario)") }
        );
    }

    #[test]
    fn images_refuse_every_other_name_and_other_kinds_write_under_names_that_claim_nothing() {
        assert_eq!(
            c("f.gif", Kind::IMAGE, None),
            Choice::Refused { ext: "gif".into(), claims: Some("a GIF image") }
        );
        assert_eq!(c("f.", Kind::IMAGE, None), Choice::Refused { ext: "".into(), claims: None });
        assert_eq!(c("f.out", Kind::IMAGE, None), Choice::Refused { ext: "out".into(), claims: None });
        assert_eq!(c("t.out", Kind::TRACE, None), Choice::Write(Format::Trace));
        assert_eq!(c("t.", Kind::TRACE, None), Choice::Write(Format::Trace));
        assert_eq!(c(".hidden", Kind::TRACE, None), Choice::Write(Format::Trace));
    }

    #[test]
    fn suggestions_list_the_extensions() {
        assert_eq!(Kind::IMAGE.suggestion(), ".svg, .png or .pdf");
        assert_eq!(Kind::CSV_OR_JSON_LINES.suggestion(), ".csv or .jsonl");
        assert_eq!(Kind::HTML.suggestion(), ".html");
    }

    #[test]
    fn every_extension_names_one_format() {
        for f in Format::ALL {
            for e in f.extensions() {
                assert_eq!(Format::of_extension(e), Some(f));
                assert_eq!(Format::of_extension(&e.to_uppercase()), Some(f));
                assert!(FOREIGN.iter().all(|(x, _)| x != e), "{e} is ours and foreign");
            }
        }
    }
}
