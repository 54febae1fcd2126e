//! SVG to PNG (raster, `resvg`) and to PDF (vector, `svg2pdf`), in process: no external program.
//!
//! Both go through one `usvg` tree, parsed with the system's fonts: text is shaped with real
//! glyphs here, where the SVG itself leaves that to the viewer. The font database is loaded
//! once per process (it reads every font file's header, tens of milliseconds) and shared.
//!
//! Fonts: `sans-serif` (the family every figure asks for) is DejaVu Sans when it is installed
//! (Debian's `fonts-dejavu-core`, which `scripts/ci/setup-report.sh` installs), otherwise what
//! fontconfig names for it. With no usable font, or when a text element of the SVG could not be
//! drawn, the conversion fails with [`ExportError::NoFont`] or [`ExportError::TextNotDrawn`]
//! rather than give an image without its labels.
//!
//! Weak: the PNG depends on the fonts of the machine (another sans-serif face gives other pixels);
//! the SVG stays the reference artefact.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use resvg::tiny_skia;
use resvg::usvg::{self, fontdb};

/// The family `sans-serif` is mapped to when it is installed.
pub const PREFERRED_SANS: &str = "DejaVu Sans";

/// The family `serif` (usvg's fallback for a family it cannot find) is mapped to when it is
/// installed.
pub const PREFERRED_SERIF: &str = "DejaVu Serif";

/// The largest PNG side, in pixels (a 960×600 figure at scale 16 is 15360 wide): beyond it the
/// conversion is refused instead of allocating gigabytes.
pub const MAX_PNG_SIDE: u32 = 16_384;

/// What an image will take to draw, known before its data exists (from a scenario, when a
/// program plans its outputs): its size in SVG user units and the points its lines, bars and marks
/// hold. [`check_drawing`] refuses one too large for its format before any run.
#[derive(Clone, Debug, PartialEq)]
pub struct Drawing {
    /// Width, SVG user units (pixels at scale 1).
    pub width: f64,
    /// Height, SVG user units.
    pub height: f64,
    /// Points drawn: every vertex of a line, every bar and mark (at most).
    pub points: u64,
    /// What makes the points many, for the refusal (e.g. "10000 tasks × 2 curves of up to 101 points").
    pub why: String,
}

/// Most points a PNG or PDF is drawn from: parsing and rasterising take about 0.33 KB a point
/// (measured with `smartsim run --svg f.png`: 3000 tasks, 1.55 million points by
/// [`crate::Figure::planned`], took 500 MB; 10 000 tasks passed 900 MB and failed after the run),
/// so this keeps a conversion near 650 MB.
pub const MAX_RASTER_POINTS: u64 = 2_000_000;
/// Most points an SVG is written with (about 36 bytes a point: 360 MB of SVG).
pub const MAX_SVG_POINTS: u64 = 10_000_000;
/// Most bytes of a PNG's pixels (4 a pixel, at [`PNG_SCALE`]).
pub const MAX_PNG_BYTES: u64 = 512 << 20;

/// Refuses a drawing too large for `format`: too many points to write or to rasterise, or a PNG
/// whose pixels pass [`MAX_PNG_BYTES`] or whose side passes [`MAX_PNG_SIDE`]. The message says
/// what is too large and what to change; the caller names the option and the file.
pub fn check_drawing(d: &Drawing, format: ImageFormat) -> Result<(), String> {
    let most = if format == ImageFormat::Svg { MAX_SVG_POINTS } else { MAX_RASTER_POINTS };
    if d.points > most {
        return Err(format!(
            "the image would hold about {} points ({}), more than the {most} a{} {} is drawn from: \
             draw fewer tasks or a shorter run{}",
            d.points,
            d.why,
            if format == ImageFormat::Svg { "n" } else { "" },
            format.extension().to_ascii_uppercase(),
            if format == ImageFormat::Svg { "" } else { ", or write an .svg" }
        ));
    }
    if format == ImageFormat::Png {
        let scale = f64::from(PNG_SCALE);
        let (w, h) = ((d.width * scale).ceil(), (d.height * scale).ceil());
        let bytes = w * h * 4.0;
        if w > f64::from(MAX_PNG_SIDE) || h > f64::from(MAX_PNG_SIDE) || bytes > MAX_PNG_BYTES as f64 {
            return Err(format!(
                "a PNG of {w}×{h} pixels ({:.0} MiB; {}) is beyond {MAX_PNG_SIDE} a side or {} MiB: \
                 write an .svg or a .pdf",
                bytes / f64::from(1u32 << 20),
                d.why,
                MAX_PNG_BYTES >> 20
            ));
        }
    }
    Ok(())
}

/// Why an SVG could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// No font on this machine can draw the figures' text.
    #[error("no font to draw text with: {0} (on Debian: apt-get install fonts-dejavu-core)")]
    NoFont(String),
    /// Some text elements were dropped while parsing (no font has their glyphs).
    #[error("{missing} of {total} text elements could not be drawn (no font for them; on Debian: apt-get install fonts-dejavu-core)")]
    TextNotDrawn {
        /// Text elements of the SVG that did not become glyphs.
        missing: usize,
        /// Non-empty text elements of the SVG.
        total: usize,
    },
    /// The SVG could not be parsed.
    #[error("not a valid SVG: {0}")]
    Svg(String),
    /// The PNG scale is not a positive finite number, or gives an image beyond [`MAX_PNG_SIDE`].
    #[error("PNG scale {scale}: {why}")]
    Scale {
        /// The scale asked for.
        scale: f32,
        /// What is wrong with it.
        why: String,
    },
    /// Rasterising or encoding the PNG failed.
    #[error("PNG encoding failed: {0}")]
    Png(String),
    /// The PDF conversion failed.
    #[error("PDF conversion failed: {0}")]
    Pdf(String),
    /// A file name whose extension names no format this module writes.
    #[error("{}: unknown image format (use a file name ending in .svg, .png or .pdf)", .0.display())]
    UnknownFormat(PathBuf),
    /// Writing the file failed.
    #[error("writing {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// An image file format a figure can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageFormat {
    /// The SVG text itself.
    Svg,
    /// A PNG at twice the SVG's size (sharp on high-density screens and in print at 150 dpi).
    Png,
    /// A one-page vector PDF, text embedded (selectable) with subset fonts.
    Pdf,
}

impl ImageFormat {
    /// Every format, in the order of their extensions' listing.
    pub const ALL: [ImageFormat; 3] = [ImageFormat::Svg, ImageFormat::Png, ImageFormat::Pdf];

    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Svg => "svg",
            ImageFormat::Png => "png",
            ImageFormat::Pdf => "pdf",
        }
    }

    /// The format a file name's extension names (case-insensitive), if any.
    pub fn from_path(path: &Path) -> Option<ImageFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        ImageFormat::ALL.into_iter().find(|f| f.extension() == ext)
    }
}

/// The scale of PNGs written by [`write_image`].
pub const PNG_SCALE: f32 = 2.0;

/// Writes `svg` to `path` in the format its extension names (`.svg`, `.png` at [`PNG_SCALE`],
/// `.pdf`); any other extension is [`ExportError::UnknownFormat`], checked before converting.
pub fn write_image(svg: &str, path: &Path) -> Result<(), ExportError> {
    let format =
        ImageFormat::from_path(path).ok_or_else(|| ExportError::UnknownFormat(path.to_path_buf()))?;
    write_as(svg, path, format)
}

/// Writes `svg` to `path` as `format`, whatever the file is called.
pub fn write_as(svg: &str, path: &Path, format: ImageFormat) -> Result<(), ExportError> {
    let bytes = match format {
        ImageFormat::Svg => svg.as_bytes().to_vec(),
        ImageFormat::Png => svg_to_png(svg, PNG_SCALE)?,
        ImageFormat::Pdf => svg_to_pdf(svg)?,
    };
    std::fs::write(path, bytes).map_err(|source| ExportError::Io { path: path.to_path_buf(), source })
}

/// Renders an SVG document to PNG bytes, `scale` times its size (1.0: one pixel per SVG user
/// unit). White where the SVG draws nothing is left transparent; the figures of this crate paint
/// their own white background.
pub fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>, ExportError> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(ExportError::Scale { scale, why: "not a positive number".into() });
    }
    let tree = parse(svg)?;
    let size = tree.size();
    let (w, h) = ((size.width() * scale).ceil(), (size.height() * scale).ceil());
    if w > MAX_PNG_SIDE as f32 || h > MAX_PNG_SIDE as f32 {
        return Err(ExportError::Scale {
            scale,
            why: format!("{w}×{h} pixels is beyond {MAX_PNG_SIDE} a side"),
        });
    }
    let mut pixmap = tiny_skia::Pixmap::new((w as u32).max(1), (h as u32).max(1))
        .ok_or_else(|| ExportError::Png(format!("cannot allocate {w}×{h} pixels")))?;
    resvg::render(&tree, tiny_skia::Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| ExportError::Png(e.to_string()))
}

/// Converts an SVG document to a one-page PDF of the same size, vector throughout, text kept as
/// text with the used glyphs of its font embedded. An SVG user unit is a CSS pixel (1/96 inch,
/// 0.75 pt), as a browser prints it: a 960×600 figure is a 10 × 6.25 inch page.
pub fn svg_to_pdf(svg: &str) -> Result<Vec<u8>, ExportError> {
    let tree = parse(svg)?;
    let page = svg2pdf::PageOptions { dpi: 96.0 };
    svg2pdf::to_pdf(&tree, svg2pdf::ConversionOptions::default(), page)
        .map_err(|e| ExportError::Pdf(e.to_string()))
}

/// Loads the system's fonts now (once per process) and says whether text can be drawn: for a
/// program to refuse `--png` or `--pdf` before a long run rather than after it.
pub fn check_fonts() -> Result<(), ExportError> {
    fonts().map(drop)
}

/// The system's fonts, loaded on first use, with `sans-serif` and `serif` naming installed
/// faces; an error when neither can.
fn fonts() -> Result<Arc<fontdb::Database>, ExportError> {
    static FONTS: OnceLock<Result<Arc<fontdb::Database>, String>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = fontdb::Database::new();
            db.load_system_fonts();
            if db.is_empty() {
                return Err("no font files found on this system".into());
            }
            let has = |db: &fontdb::Database, name: &str| {
                db.faces().any(|f| f.families.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)))
            };
            if has(&db, PREFERRED_SANS) {
                db.set_sans_serif_family(PREFERRED_SANS);
            }
            if has(&db, PREFERRED_SERIF) {
                db.set_serif_family(PREFERRED_SERIF);
            }
            let resolves = |db: &fontdb::Database, family| {
                db.query(&fontdb::Query { families: &[family], ..Default::default() }).is_some()
            };
            // fontconfig may name faces that are not installed. usvg falls back to the serif
            // family for a family it cannot find: each of the two stands in for the other.
            let (sans, serif) =
                (resolves(&db, fontdb::Family::SansSerif), resolves(&db, fontdb::Family::Serif));
            if !sans && !serif {
                return Err(format!(
                    "{} font faces found, but neither sans-serif ('{}') nor serif ('{}') is among them",
                    db.len(),
                    db.family_name(&fontdb::Family::SansSerif),
                    db.family_name(&fontdb::Family::Serif)
                ));
            }
            if !serif {
                let name = db.family_name(&fontdb::Family::SansSerif).to_string();
                db.set_serif_family(name);
            } else if !sans {
                let name = db.family_name(&fontdb::Family::Serif).to_string();
                db.set_sans_serif_family(name);
            }
            Ok(Arc::new(db))
        })
        .clone()
        .map_err(ExportError::NoFont)
}

/// Parses `svg` into a usvg tree with the system's fonts (loaded only if it has text).
fn parse(svg: &str) -> Result<usvg::Tree, ExportError> {
    let doc = usvg::roxmltree::Document::parse(svg).map_err(|e| ExportError::Svg(e.to_string()))?;
    let fontdb = if text_elements(&doc) > 0 { fonts()? } else { Arc::new(fontdb::Database::new()) };
    parse_with(&doc, fontdb)
}

/// Non-empty `<text>` elements of a document.
fn text_elements(doc: &usvg::roxmltree::Document) -> usize {
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter(|n| n.descendants().any(|d| d.text().is_some_and(|t| !t.trim().is_empty())))
        .count()
}

/// Builds the usvg tree of `doc` with these fonts, and checks that every non-empty text element
/// became glyphs (usvg drops a text whose font it cannot find).
fn parse_with(
    doc: &usvg::roxmltree::Document,
    fontdb: Arc<fontdb::Database>,
) -> Result<usvg::Tree, ExportError> {
    let total = text_elements(doc);
    let font_family = fontdb.family_name(&fontdb::Family::SansSerif).to_string();
    let options = usvg::Options { fontdb, font_family, ..Default::default() };
    let tree = usvg::Tree::from_xmltree(doc, &options).map_err(|e| ExportError::Svg(e.to_string()))?;
    let drawn = count_text(tree.root());
    if drawn < total {
        return Err(ExportError::TextNotDrawn { missing: total - drawn, total });
    }
    Ok(tree)
}

/// Text nodes with at least one glyph outline, in a group and its subgroups.
fn count_text(group: &usvg::Group) -> usize {
    group
        .children()
        .iter()
        .map(|node| match node {
            usvg::Node::Group(g) => count_text(g),
            usvg::Node::Text(t) => usize::from(!t.flattened().children().is_empty()),
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drawing_is_refused_by_its_points_and_pixels_for_its_format() {
        let d = |width, height, points| Drawing { width, height, points, why: "w".into() };
        let ok = d(960.0, 600.0, MAX_RASTER_POINTS);
        for f in ImageFormat::ALL {
            assert!(check_drawing(&ok, f).is_ok(), "{f:?}");
        }
        let many = d(960.0, 600.0, MAX_RASTER_POINTS + 1);
        assert!(check_drawing(&many, ImageFormat::Svg).is_ok());
        let e = check_drawing(&many, ImageFormat::Png).unwrap_err();
        assert!(e.contains(&format!("{} points (w)", MAX_RASTER_POINTS + 1)) && e.contains(".svg"), "{e}");
        assert!(check_drawing(&many, ImageFormat::Pdf).is_err());
        assert!(check_drawing(&d(960.0, 600.0, MAX_SVG_POINTS + 1), ImageFormat::Svg).is_err());
        // 8192 × 2 a side is the most; 12000 × 12000 × 4 bytes is beyond the bytes.
        assert!(check_drawing(&d(8192.0, 100.0, 1), ImageFormat::Png).is_ok());
        assert!(check_drawing(&d(8193.0, 100.0, 1), ImageFormat::Png).unwrap_err().contains("16386×200"));
        assert!(check_drawing(&d(6000.0, 6000.0, 1), ImageFormat::Png).unwrap_err().contains("MiB"));
        assert!(check_drawing(&d(6000.0, 6000.0, 1), ImageFormat::Pdf).is_ok());
    }
    use crate::{Figure, Series};

    fn figure(title: &str) -> Figure {
        let mut f = Figure::new(title, "wall time (s)", "cumulative execution time (s)");
        f.measured.push(Series::new("A", vec![(0.0, 0.0), (10.0, 6.0)]));
        f.ideal.push(Series::new("A", vec![(0.0, 0.0), (10.0, 5.0)]));
        f
    }

    fn decode(png: &[u8]) -> tiny_skia::Pixmap {
        tiny_skia::Pixmap::decode_png(png).expect("a PNG tiny-skia reads back")
    }

    #[test]
    fn png_has_the_scaled_size_and_draws_lines_and_text() {
        let with_title = decode(&svg_to_png(&figure("Figure 6-4").to_svg(), 2.0).unwrap());
        assert_eq!((with_title.width(), with_title.height()), (1920, 1200));
        let px = with_title.pixels();
        let white =
            px.iter().filter(|p| (p.red(), p.green(), p.blue(), p.alpha()) == (255, 255, 255, 255)).count();
        assert!(white < px.len(), "every pixel is white");
        // The series colour (the palette's blue, 0,114,178) is drawn somewhere.
        assert!(px.iter().any(|p| (p.red(), p.green(), p.blue()) == (0, 114, 178)));
        // The same figure without its title: only the title's glyphs differ, in the top band.
        let untitled = decode(&svg_to_png(&figure("").to_svg(), 2.0).unwrap());
        let differing: Vec<usize> =
            (0..px.len()).filter(|&i| px[i] != untitled.pixels()[i]).map(|i| i / 1920).collect();
        assert!(differing.len() > 200, "title drew only {} pixels", differing.len());
        assert!(differing.iter().any(|&row| row < 100), "the title is drawn at the top");
    }

    #[test]
    fn scale_is_checked() {
        let svg = figure("t").to_svg();
        assert_eq!(decode(&svg_to_png(&svg, 0.5).unwrap()).width(), 480);
        for bad in [0.0, -1.0, f32::NAN, f32::INFINITY, 100.0] {
            let e = svg_to_png(&svg, bad).unwrap_err();
            assert!(matches!(e, ExportError::Scale { .. }), "{bad}: {e}");
        }
    }

    #[test]
    fn pdf_is_a_vector_page_with_embedded_text() {
        let pdf = svg_to_pdf(&figure("Figure 6-4").to_svg()).unwrap();
        assert!(pdf.starts_with(b"%PDF-"));
        let text = String::from_utf8_lossy(&pdf);
        assert!(text.contains("/Font"), "no font resource");
        assert!(text.contains("/FontFile2") || text.contains("/FontFile3"), "no embedded font program");
        // 960×600 SVG units at 96 per inch is 720×450 points.
        assert!(text.contains("/MediaBox [0 0 720 450]"), "page size");
        assert!(text.trim_end().ends_with("%%EOF"));
    }

    #[test]
    fn conversions_are_deterministic() {
        let svg = figure("t").to_svg();
        assert_eq!(svg_to_png(&svg, 1.0).unwrap(), svg_to_png(&svg, 1.0).unwrap());
        assert_eq!(svg_to_pdf(&svg).unwrap(), svg_to_pdf(&svg).unwrap());
    }

    #[test]
    fn bad_svg_and_unknown_formats_are_refused() {
        assert!(matches!(svg_to_png("<svg", 1.0), Err(ExportError::Svg(_))));
        assert!(matches!(svg_to_pdf("not xml"), Err(ExportError::Svg(_))));
        let e = write_image("<svg/>", Path::new("fig.gif")).unwrap_err();
        assert!(e.to_string().contains("fig.gif: unknown image format"), "{e}");
        assert_eq!(ImageFormat::from_path(Path::new("a/b.PNG")), Some(ImageFormat::Png));
        assert_eq!(ImageFormat::from_path(Path::new("noext")), None);
    }

    #[test]
    fn text_without_a_font_is_an_error_not_a_blank() {
        let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="40"><text x="5" y="20" font-family="NoSuchFamily">Hi</text><text> </text><rect width="5" height="5"/></svg>"#;
        let doc = usvg::roxmltree::Document::parse(svg).unwrap();
        // With no fonts at all the text is dropped, and that is reported (the blank text is not
        // counted).
        let e = parse_with(&doc, Arc::new(fontdb::Database::new())).unwrap_err();
        assert!(matches!(e, ExportError::TextNotDrawn { missing: 1, total: 1 }), "{e}");
        // A family no machine has falls back to the system's sans-serif or serif face.
        svg_to_png(svg, 1.0).unwrap();
    }

    #[test]
    fn write_image_chooses_by_extension() {
        let dir = std::env::temp_dir().join(format!("report-export-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let svg = figure("t").to_svg();
        for f in ImageFormat::ALL {
            let p = dir.join(format!("fig.{}", f.extension()));
            write_image(&svg, &p).unwrap();
            let head = std::fs::read(&p).unwrap();
            let magic: &[u8] = match f {
                ImageFormat::Svg => b"<svg",
                ImageFormat::Png => b"\x89PNG",
                ImageFormat::Pdf => b"%PDF",
            };
            assert!(head.starts_with(magic), "{f:?}");
        }
        let e = write_image(&svg, &dir.join("no/such/dir/fig.png")).unwrap_err();
        assert!(matches!(e, ExportError::Io { .. }) && e.to_string().contains("no/such/dir/fig.png"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
