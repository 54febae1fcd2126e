//! Line figures rendered to SVG with `plotters` (SVG backend only).

use std::path::Path;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::{Deserialize, Serialize};

use crate::escape::visible;

/// Series longer than this are downsampled before drawing (see [`downsample`]).
pub const MAX_PLOT_POINTS: usize = 2000;

/// Width of a rendered figure in SVG user units (pixels).
pub(crate) const WIDTH: u32 = 960;
/// Height of a rendered figure in SVG user units (pixels).
pub(crate) const HEIGHT: u32 = 600;

/// A chart titled `title` drawn by `draw` as a standalone SVG document of [`WIDTH`]×[`HEIGHT`]
/// user units. Drawing into a String cannot fail for I/O reasons; plotters only reports errors of the
/// backend, and the SVG string backend has none. A failure here is a bug.
pub(crate) fn svg_string(
    title: &str,
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), DrawingAreaErrorKind<std::io::Error>>,
) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root).unwrap_or_else(|e| panic!("report: plotting {title:?} failed: {e}"));
        root.present().unwrap_or_else(|e| panic!("report: finishing SVG {title:?} failed: {e}"));
    }
    svg
}
/// What a series' legend entry and label draw, counted as points.
const LEGEND_POINTS: u64 = 8;
/// The points of a dashed series: two a dash, at most a dash every few pixels along a curve that
/// rises across the plot (measured: 230 for the ideal curve of a run's figure).
pub const DASHED_POINTS: u64 = 400;
/// Font family of every text element; the viewer picks the actual face.
pub(crate) const FONT: &str = "sans-serif";

/// Series colours: the Okabe–Ito palette (distinct for colour-blind readers; its yellow is left
/// out because it vanishes on white), then a few darker extras. Used in order, then cycled.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(140, 86, 75),   // brown
    RGBColor(127, 127, 127), // grey
    RGBColor(148, 148, 20),  // olive
];

/// Stroke width of every series line, in pixels.
const LINE_WIDTH: u32 = 2;
/// Length of a dash of an ideal series (short: it reads as dotted), in pixels.
const DASH: u32 = 4;
/// Gap between two dashes of an ideal series, in pixels.
const GAP: u32 = 4;
/// Dash patterns (dash, gap) of a measured series drawn over another it overlaps: the first is
/// solid (drawn wider, so the ones above leave it showing), the next ones long dashes that let the
/// colours below show through; all longer than an ideal series' dots.
const OVERLAP_DASHES: [(u32, u32); 4] = [(0, 0), (14, 8), (22, 10), (8, 12)];
/// Two measured series closer than this (median, in pixels) are drawn as overlapping.
const OVERLAP_PX: f64 = 4.0;
/// Up to this many measured series, overlapping ones are dashed and every line is labelled at its
/// end; beyond, the labels could not be told apart and the pairwise test grows with the square,
/// so the legend alone names them.
pub const MAX_MARKED_SERIES: usize = 20;
/// Font size of the direct labels at the end of the measured lines.
const END_LABEL_SIZE: u32 = 19;

/// A named polyline: x in seconds (wall time), y in the unit the figure says.
///
/// Points are drawn in the order given (normally increasing x). Points with a non-finite
/// coordinate (NaN, ±∞) are skipped when drawing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Series {
    /// Name shown in the legend; an ideal series with the same name as a measured one shares its
    /// colour.
    pub name: String,
    /// The points `(x, y)`.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// Creates a series from a name and points.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series { name: name.into(), points }
    }
}

/// A line chart like the SMART dissertation's figures 6-1 to 6-7: cumulative execution time
/// against wall time, measured series solid, ideal series dashed.
///
/// Colours: each measured series gets the next palette colour. An ideal series whose name
/// equals a measured series' name is drawn dotted in a darker shade of that colour (visible on top
/// of our line where the two coincide), and all such ideal series share
/// one legend entry, "ideal" (a grey dashed sample). An ideal series with no measured namesake
/// gets its own colour and its own legend entry under its name.
///
/// Legend: in the corner of the plot where it covers the fewest line samples (upper left for
/// rising cumulative curves), judged from estimated text widths.
///
/// Overlaps: a measured series that runs within a few pixels of an earlier one (R1 and R2 of
/// fig. 6-9 meet the same deadlines) is drawn in long dashes over it, the earlier one wider and
/// solid, so both colours show; each measured line is labelled with its name at its end, in its
/// colour (labels nudged apart when lines end together), as well as in the legend.
///
/// Axes: x spans the data (starting at 0 when the data start at or near 0), y starts at 0 unless
/// the data go negative, with a little headroom above the largest value. An empty figure still
/// renders, with unit axes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Figure {
    /// Title drawn above the plot.
    pub title: String,
    /// Label of the x axis, e.g. `"wall time (s)"`.
    pub x_label: String,
    /// Label of the y axis, e.g. `"cumulative execution time (s)"`.
    pub y_label: String,
    /// Measured series, drawn solid.
    pub measured: Vec<Series>,
    /// Ideal (expected) series, drawn dashed; same colour as the measured series of the same
    /// name if any.
    pub ideal: Vec<Series>,
    /// Point clouds, drawn as dots, each in the next palette colour with its own legend entry
    /// (e.g. Etsion's fig. 4: effective quantum against billed time). At most
    /// [`MAX_PLOT_POINTS`] dots each (evenly taken).
    #[serde(default)]
    pub scatter: Vec<Series>,
    /// Logarithmic x axis (base 10): for distributions over orders of magnitude (quantum lengths
    /// from microseconds to seconds). Points with x ≤ 0 are left out.
    #[serde(default)]
    pub log_x: bool,
}

impl Figure {
    /// Creates an empty figure with a title and axis labels; push series into
    /// [`Figure::measured`] and [`Figure::ideal`].
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Self {
        Figure {
            title: title.to_string(),
            x_label: x_label.to_string(),
            y_label: y_label.to_string(),
            measured: Vec::new(),
            ideal: Vec::new(),
            scatter: Vec::new(),
            log_x: false,
        }
    }

    /// The drawing of a figure whose measured series will hold `points` points each (before
    /// downsampling to [`MAX_PLOT_POINTS`]) and which has `dashed` ideal series, for
    /// [`crate::export::check_drawing`] before the data exists: the figure's size, every series'
    /// drawn points and its legend entry. A dashed series is drawn as its dashes, as many as its
    /// length on the plot allows, whatever its points ([`DASHED_POINTS`]).
    pub fn planned(
        points: impl IntoIterator<Item = u64>,
        dashed: u64,
        why: String,
    ) -> crate::export::Drawing {
        let lines: u64 = points.into_iter().map(|p| p.min(MAX_PLOT_POINTS as u64) + LEGEND_POINTS).sum();
        let drawn = lines.saturating_add(dashed.saturating_mul(DASHED_POINTS + LEGEND_POINTS));
        crate::export::Drawing { width: f64::from(WIDTH), height: f64::from(HEIGHT), points: drawn, why }
    }

    /// Renders the figure as a standalone SVG document (960×600 user units, with a `viewBox`,
    /// so it scales). Deterministic: the same figure gives the same string.
    pub fn to_svg(&self) -> String {
        svg_string(&self.title, |root| self.draw(root))
    }

    /// Writes [`Figure::to_svg`] to `path`, replacing the file.
    pub fn write_svg(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_svg())
    }

    /// Writes the figure to `path` in the format its extension names (`.svg`, `.png`, `.pdf`;
    /// see [`crate::export::write_image`]).
    pub fn write_image(&self, path: &Path) -> Result<(), crate::export::ExportError> {
        crate::export::write_image(&self.to_svg(), path)
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;

        // A log axis is drawn as a linear one over log10(x), labelled with x itself.
        let log_x = self.log_x;
        let to_plot = |points: &[(f64, f64)]| -> Vec<(f64, f64)> {
            if log_x {
                points.iter().filter(|p| p.0 > 0.0).map(|&(x, y)| (x.log10(), y)).collect()
            } else {
                points.to_vec()
            }
        };
        // Names, title and labels are drawn as `escape::visible` shows them (plotters escapes `&`,
        // `<` and quotes itself, but would write a control character that XML forbids as it is);
        // an ideal series finds its measured namesake by the exact name.
        fn shown(v: &[Series]) -> Vec<std::borrow::Cow<'_, str>> {
            v.iter().map(|s| visible(&s.name)).collect()
        }
        let (measured_names, ideal_names, scatter_names) =
            (shown(&self.measured), shown(&self.ideal), shown(&self.scatter));
        let measured: Vec<(&str, Vec<(f64, f64)>)> = self
            .measured
            .iter()
            .zip(&measured_names)
            .map(|(s, n)| (n.as_ref(), plot_points(&to_plot(&s.points))))
            .collect();
        let ideal: Vec<(&str, Vec<(f64, f64)>)> = self
            .ideal
            .iter()
            .zip(&ideal_names)
            .map(|(s, n)| (n.as_ref(), plot_points(&to_plot(&s.points))))
            .collect();
        let scatter: Vec<(&str, Vec<(f64, f64)>)> = self
            .scatter
            .iter()
            .zip(&scatter_names)
            .map(|(s, n)| (n.as_ref(), dots(&to_plot(&s.points))))
            .collect();

        let (x_range, y_range) = ranges(measured.iter().chain(&ideal).chain(&scatter).flat_map(|(_, p)| p));

        let mut chart = ChartBuilder::on(root)
            .caption(visible(&self.title), (FONT, 28).into_font().color(&BLACK))
            .margin_top(16)
            .margin_bottom(12)
            .margin_left(16)
            .margin_right(end_label_room(&measured))
            .x_label_area_size(56)
            .y_label_area_size(y_label_area(&y_range))
            .build_cartesian_2d(x_range.clone(), y_range.clone())?;

        let x_lin = tick_formatter(&x_range);
        let x_fmt = move |v: &f64| if log_x { log_label(*v) } else { x_lin(v) };
        let y_fmt = tick_formatter(&y_range);
        chart
            .configure_mesh()
            .x_desc(visible(&self.x_label))
            .y_desc(visible(&self.y_label))
            .axis_desc_style((FONT, 22).into_font().color(&BLACK))
            .label_style((FONT, 19).into_font().color(&RGBColor(40, 40, 40)))
            .x_labels(10)
            .y_labels(8)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .bold_line_style(RGBColor(215, 215, 215).stroke_width(1))
            .light_line_style(TRANSPARENT)
            .axis_style(RGBColor(60, 60, 60).stroke_width(1))
            .draw()?;

        let mut colour_of = Vec::new();
        let plot_h = f64::from(chart.plotting_area().dim_in_pixel().1.max(1));
        let marked = measured.len() <= MAX_MARKED_SERIES;
        let stacks = if marked {
            overlap_layers(&measured, &x_range, &y_range, plot_h)
        } else {
            Stacks { layer: vec![0; measured.len()], under: vec![false; measured.len()] }
        };
        for (i, (name, points)) in measured.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            colour_of.push((*name, colour));
            let (dash, gap) = OVERLAP_DASHES[stacks.layer[i] % OVERLAP_DASHES.len()];
            if dash == 0 {
                // The bottom of a stack of overlapping lines is wider, so it shows beside the dashes.
                let style = colour.stroke_width(if stacks.under[i] { LINE_WIDTH + 3 } else { LINE_WIDTH });
                chart
                    .draw_series(LineSeries::new(points.iter().copied(), style))?
                    .label(*name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
            } else {
                let style = colour.stroke_width(LINE_WIDTH + 1);
                chart
                    .draw_series(DashedLineSeries::new(points.iter().copied(), dash, gap, style))?
                    .label(*name)
                    .legend(move |(x, y)| {
                        DashedPathElement::new(vec![(x, y), (x + 24, y)], dash, gap, style)
                    });
            }
        }

        // Ideal series without a measured namesake first, each with its own colour and legend
        // entry; then those with one, in its colour, sharing one "ideal" entry that comes last.
        let colour_for = |k: usize| {
            let name = &self.ideal[k].name;
            self.measured.iter().position(|m| m.name == *name).map(|i| PALETTE[i % PALETTE.len()])
        };
        let (matched, unmatched): (Vec<_>, Vec<_>) =
            ideal.iter().enumerate().partition(|(k, _)| colour_for(*k).is_some());
        for (k, (_, (name, points))) in unmatched.iter().enumerate() {
            let style = PALETTE[(measured.len() + k) % PALETTE.len()].stroke_width(LINE_WIDTH);
            chart
                .draw_series(dashed(points, style))?
                .label(*name)
                .legend(move |(x, y)| legend_dashes(x, y, style));
        }
        for (k, (j, (_, points))) in matched.iter().enumerate() {
            // A darker shade of the measured colour: where ours equals the ideal, its dots show on
            // our line instead of vanishing into it.
            let colour = darker(colour_for(*j).unwrap_or(BLACK));
            let anno = chart.draw_series(dashed(points, colour.stroke_width(LINE_WIDTH)))?;
            if k + 1 == matched.len() {
                let grey = RGBColor(90, 90, 90).stroke_width(LINE_WIDTH);
                anno.label("ideal").legend(move |(x, y)| legend_dashes(x, y, grey));
            }
        }

        for (k, (name, points)) in scatter.iter().enumerate() {
            let colour = PALETTE[(measured.len() + unmatched.len() + k) % PALETTE.len()];
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 2, colour.mix(0.6).filled())))?
                .label(*name)
                .legend(move |(x, y)| Circle::new((x + 12, y), 4, colour.filled()));
        }

        // Direct labels at the ends of the measured lines, nudged apart vertically.
        let mut ends: Vec<(i32, i32, &str, RGBColor)> = measured
            .iter()
            .zip(&colour_of)
            .filter(|_| marked)
            .filter_map(|((name, p), (_, c))| {
                let last = p.last()?;
                let (x, y) = chart.backend_coord(last);
                Some((x, y, *name, *c))
            })
            .collect();
        let (top, bottom) = {
            let (_, ys) = chart.plotting_area().get_pixel_range();
            (ys.start, ys.end)
        };
        for (x, y, name, colour) in spread_labels(&mut ends, top, bottom) {
            root.draw(&Text::new(
                name.to_string(),
                (x + 6, y),
                (FONT, END_LABEL_SIZE).into_font().color(&colour).pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }

        if !measured.is_empty() || !ideal.is_empty() || !scatter.is_empty() {
            let labels: Vec<&str> = measured
                .iter()
                .map(|(n, _)| *n)
                .chain(unmatched.iter().map(|(_, (n, _))| *n))
                .chain((!matched.is_empty()).then_some("ideal"))
                .chain(scatter.iter().map(|(n, _)| *n))
                .collect();
            let corner = legend_corner(
                &labels,
                chart.plotting_area().dim_in_pixel(),
                (&x_range, &y_range),
                measured.iter().chain(&ideal).chain(&scatter).map(|(_, p)| p.as_slice()),
            );
            chart
                .configure_series_labels()
                .position(corner)
                .margin(12)
                .legend_area_size(30)
                .label_font((FONT, 20).into_font().color(&BLACK))
                .background_style(WHITE.mix(0.9))
                .border_style(RGBColor(180, 180, 180))
                .draw()?;
        }
        Ok(())
    }
}

/// A darker shade of `c` (about 55 % of each channel).
fn darker(c: RGBColor) -> RGBColor {
    let d = |v: u8| (u16::from(v) * 11 / 20) as u8;
    RGBColor(d(c.0), d(c.1), d(c.2))
}

/// Room at the right of the plot for the direct labels (about 10 px per character at their size).
fn end_label_room(measured: &[(&str, Vec<(f64, f64)>)]) -> u32 {
    let chars = measured.iter().map(|(n, _)| n.chars().count()).max().unwrap_or(0) as u32;
    if chars == 0 {
        36
    } else {
        (16 + 11 * chars).clamp(36, WIDTH / 4)
    }
}

/// Whether measured series `i` and `j` run within [`OVERLAP_PX`] of each other: the median of their
/// vertical distance, in pixels, at 64 points across the x range both cover.
fn overlaps(
    measured: &[(&str, Vec<(f64, f64)>)],
    i: usize,
    j: usize,
    xr: &std::ops::Range<f64>,
    yr: &std::ops::Range<f64>,
    plot_h: f64,
) -> bool {
    let (a, b) = (&measured[i].1, &measured[j].1);
    let (Some(a0), Some(a1), Some(b0), Some(b1)) = (a.first(), a.last(), b.first(), b.last()) else {
        return false;
    };
    let (from, to) = (a0.0.max(b0.0), a1.0.min(b1.0));
    // Less than a tenth of the axis shared: not a visible overlap.
    if to <= from || (to - from) < 0.1 * (xr.end - xr.start) {
        return false;
    }
    let px = plot_h / (yr.end - yr.start).max(f64::MIN_POSITIVE);
    let mut d: Vec<f64> = (0..64)
        .map(|k| {
            let x = from + (to - from) * f64::from(k) / 63.0;
            (interpolate(a, x) - interpolate(b, x)).abs() * px
        })
        .collect();
    d.sort_by(f64::total_cmp);
    d[d.len() / 2] < OVERLAP_PX
}

/// How the measured series stack where they overlap.
struct Stacks {
    /// Per series: 0 for one that overlaps no earlier series, else one more than the highest layer
    /// among the earlier ones it overlaps.
    layer: Vec<usize>,
    /// Per series: whether a later series is drawn over it (so it is drawn wider).
    under: Vec<bool>,
}

/// The stacks of overlapping measured series, each pair tested once.
fn overlap_layers(
    measured: &[(&str, Vec<(f64, f64)>)],
    xr: &std::ops::Range<f64>,
    yr: &std::ops::Range<f64>,
    plot_h: f64,
) -> Stacks {
    let n = measured.len();
    let mut st = Stacks { layer: vec![0; n], under: vec![false; n] };
    for j in 0..n {
        for i in 0..j {
            if overlaps(measured, i, j, xr, yr, plot_h) {
                st.layer[j] = st.layer[j].max(st.layer[i] + 1);
                st.under[i] = true;
            }
        }
    }
    st
}

/// `points` (increasing x) at `x`, linearly interpolated; the end values beyond the ends.
fn interpolate(points: &[(f64, f64)], x: f64) -> f64 {
    let k = points.partition_point(|p| p.0 < x);
    match (k.checked_sub(1).and_then(|i| points.get(i)), points.get(k)) {
        (Some(a), Some(b)) if b.0 > a.0 => a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0),
        (_, Some(b)) => b.1,
        (Some(a), None) => a.1,
        (None, None) => f64::NAN,
    }
}

/// Label positions at the ends of lines: sorted top to bottom and pushed apart to at least one
/// label height, kept within `top..bottom` (pixels).
fn spread_labels<'a>(
    ends: &mut [(i32, i32, &'a str, RGBColor)],
    top: i32,
    bottom: i32,
) -> Vec<(i32, i32, &'a str, RGBColor)> {
    let gap = END_LABEL_SIZE as i32 + 2;
    ends.sort_by_key(|e| (e.1, e.2));
    let mut out: Vec<(i32, i32, &str, RGBColor)> = Vec::with_capacity(ends.len());
    for &(x, y, n, c) in ends.iter() {
        let y = match out.last() {
            Some(prev) => y.max(prev.1 + gap),
            None => y.max(top + gap / 2),
        };
        out.push((x, y, n, c));
    }
    // Pushed past the bottom: shift the whole column up, as far as the top allows.
    if let Some(last) = out.last() {
        let over = last.1 - (bottom - gap / 2);
        if over > 0 {
            for e in &mut out {
                e.1 -= over;
            }
        }
    }
    out
}

/// The corner of the plot for the legend: the one its box covers the least of the lines in,
/// preferring upper left, lower right, upper right, lower left in that order on ties.
fn legend_corner<'a>(
    labels: &[&str],
    plot_px: (u32, u32),
    (xr, yr): (&std::ops::Range<f64>, &std::ops::Range<f64>),
    lines: impl Iterator<Item = &'a [(f64, f64)]>,
) -> SeriesLabelPosition {
    // The legend box as drawn by plotters with the settings used above: 12 px margin, 30 px
    // sample, ~9 px per character, ~23 px per entry (estimates; the viewer's font decides).
    let chars = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
    let w = (12.0 + 30.0 + 9.0 * chars + 20.0) / f64::from(plot_px.0.max(1));
    let h = (12.0 + 23.0 * labels.len() as f64 + 16.0) / f64::from(plot_px.1.max(1));
    // Box per corner in the unit square of the plot, (u0, u1, v0, v1), v pointing up.
    let corners = [
        (SeriesLabelPosition::UpperLeft, (0.0, w, 1.0 - h, 1.0)),
        (SeriesLabelPosition::LowerRight, (1.0 - w, 1.0, 0.0, h)),
        (SeriesLabelPosition::UpperRight, (1.0 - w, 1.0, 1.0 - h, 1.0)),
        (SeriesLabelPosition::LowerLeft, (0.0, w, 0.0, h)),
    ];
    let (sx, sy) = (xr.end - xr.start, yr.end - yr.start);
    let mut hits = [0usize; 4];
    for line in lines {
        let unit: Vec<(f64, f64)> =
            line.iter().map(|&(x, y)| ((x - xr.start) / sx, (y - yr.start) / sy)).collect();
        // Sample every segment so a long straight segment through a corner counts.
        let segments = unit.windows(2).map(|s| (s[0], s[1]));
        let single = (unit.len() == 1).then(|| (unit[0], unit[0]));
        for ((u0, v0), (u1, v1)) in segments.chain(single) {
            for k in 0..=8 {
                let t = f64::from(k) / 8.0;
                let (u, v) = (u0 + (u1 - u0) * t, v0 + (v1 - v0) * t);
                for (i, (_, (a, b, c, d))) in corners.iter().enumerate() {
                    if u >= *a && u <= *b && v >= *c && v <= *d {
                        hits[i] += 1;
                    }
                }
            }
        }
    }
    let best = (0..corners.len()).min_by_key(|&i| (hits[i], i)).unwrap_or(0);
    corners[best].0.clone()
}

/// An ideal series' dashed line.
fn dashed(
    points: &[(f64, f64)],
    style: ShapeStyle,
) -> DashedLineSeries<std::iter::Copied<std::slice::Iter<'_, (f64, f64)>>, u32> {
    DashedLineSeries::new(points.iter().copied(), DASH, GAP, style)
}

/// The legend sample of a dashed series: three dashes.
fn legend_dashes(
    x: i32,
    y: i32,
    style: ShapeStyle,
) -> DashedPathElement<std::vec::IntoIter<(i32, i32)>, u32> {
    DashedPathElement::new(vec![(x, y), (x + 24, y)], DASH, GAP, style)
}

/// The finite points of a series, downsampled to at most [`MAX_PLOT_POINTS`].
fn plot_points(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let finite: Vec<(f64, f64)> =
        points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
    downsample(&finite, MAX_PLOT_POINTS)
}

/// The finite points of a point cloud, at most [`MAX_PLOT_POINTS`] of them taken evenly.
fn dots(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let finite: Vec<(f64, f64)> =
        points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
    let step = finite.len().div_ceil(MAX_PLOT_POINTS).max(1);
    finite.into_iter().step_by(step).collect()
}

/// The label of a log axis tick at log10(x) = `v`: x with two significant digits.
fn log_label(v: f64) -> String {
    let x = 10f64.powf(v);
    if !(1e-3..1e5).contains(&x) {
        format!("{x:.1e}")
    } else {
        let digits = (1 - x.log10().floor() as i32).max(0) as usize;
        format!("{x:.digits$}")
    }
}

/// Axis ranges covering `points`, with the conventions described on [`Figure`].
fn ranges<'a>(points: impl Iterator<Item = &'a (f64, f64)>) -> (std::ops::Range<f64>, std::ops::Range<f64>) {
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64, 0.0f64);
    let mut any = false;
    for &(x, y) in points {
        any = true;
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !any {
        return (0.0..1.0, 0.0..1.0);
    }
    // Start the time axis at 0 when the data start at or close to it.
    if x0 >= 0.0 && x0 <= 0.05 * x1 {
        x0 = 0.0;
    }
    if x1 <= x0 {
        let pad = if x0 == 0.0 { 1.0 } else { x0.abs() * 0.1 };
        x1 = x0 + pad;
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    // Headroom so the highest line does not run along the frame.
    let span = y1 - y0;
    if y1 > 0.0 {
        y1 += 0.04 * span;
    }
    if y0 < 0.0 {
        y0 -= 0.04 * span;
    }
    (x0..x1, y0..y1)
}

/// Decimal places for tick labels over `range`, so that ten ticks are told apart.
fn tick_decimals(range: &std::ops::Range<f64>) -> usize {
    let step = (range.end - range.start) / 10.0;
    if step.is_nan() || step <= 0.0 || step >= 1.0 {
        return 0;
    }
    (-step.log10().floor()).clamp(0.0, 9.0) as usize
}

/// A tick-label formatter for `range`: a fixed number of decimals and no `-0`; scientific
/// notation (`2.50e8`) when the values are 10^7 or more, or all below 10^-4, in magnitude.
pub(crate) fn tick_formatter(range: &std::ops::Range<f64>) -> impl Fn(&f64) -> String {
    let decimals = tick_decimals(range);
    let magnitude = range.start.abs().max(range.end.abs());
    let scientific = magnitude >= 1e7 || (magnitude > 0.0 && magnitude < 1e-4);
    move |v: &f64| {
        if scientific {
            return if *v == 0.0 { "0".to_string() } else { format!("{v:.2e}") };
        }
        let s = format!("{:.*}", decimals, v);
        if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
            s[1..].to_string()
        } else {
            s
        }
    }
}

/// Width of the y label area: the widest tick label (estimated) plus the axis description,
/// at most a quarter of the figure.
pub(crate) fn y_label_area(range: &std::ops::Range<f64>) -> u32 {
    let fmt = tick_formatter(range);
    let chars = [range.start, range.end].iter().map(|v| fmt(v).chars().count()).max().unwrap_or(1) as u32;
    // ~9 px per digit at the tick font size, plus room for the rotated axis description.
    (40 + 9 * chars).min(WIDTH / 4)
}

/// Reduces `points` to at most `max` points with the largest-triangle-three-buckets algorithm
/// (Steinarsson 2013), which keeps the first and last point and the visual shape of the line.
///
/// Returns a copy when `points.len() <= max`. Points are taken in the order given (normally
/// increasing x). A `max` below 3 is treated as 3.
pub fn downsample(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    let max = max.max(3);
    let n = points.len();
    if n <= max {
        return points.to_vec();
    }
    let mut out = Vec::with_capacity(max);
    out.push(points[0]);
    // The n - 2 inner points are split into max - 2 buckets; one point is kept per bucket: the
    // one forming the largest triangle with the previously kept point and the average of the
    // next bucket.
    let buckets = max - 2;
    let width = (n - 2) as f64 / buckets as f64;
    let bucket = |i: usize| {
        let start = 1 + (i as f64 * width) as usize;
        let end = (1 + ((i + 1) as f64 * width) as usize).min(n - 1);
        start..end.max(start + 1)
    };
    let mut prev = points[0];
    for i in 0..buckets {
        let next_avg = if i + 1 < buckets {
            let r = bucket(i + 1);
            let len = r.len() as f64;
            let (sx, sy) = points[r].iter().fold((0.0, 0.0), |(ax, ay), &(x, y)| (ax + x, ay + y));
            (sx / len, sy / len)
        } else {
            points[n - 1]
        };
        let mut best = bucket(i).start;
        let mut best_area = -1.0;
        for j in bucket(i) {
            let (x, y) = points[j];
            let area = ((prev.0 - next_avg.0) * (y - prev.1) - (prev.0 - x) * (next_avg.1 - prev.1)).abs();
            if area > best_area {
                best_area = area;
                best = j;
            }
        }
        prev = points[best];
        out.push(prev);
    }
    out.push(points[n - 1]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> Figure {
        let mut f = Figure::new(
            "Execution times <shares 3:2:1> & more",
            "wall time (s)",
            "cumulative execution time (s)",
        );
        for (name, share) in [("C1", 3.0), ("C2", 2.0), ("C3", 1.0)] {
            let measured = (0..=600)
                .map(|i| {
                    let t = i as f64;
                    (t, t * share / 6.0 + (t / 7.0).sin())
                })
                .collect();
            f.measured.push(Series::new(name, measured));
            f.ideal.push(Series::new(name, vec![(0.0, 0.0), (600.0, 600.0 * share / 6.0)]));
        }
        f.ideal.push(Series::new("fair & <1/3>", vec![(0.0, 0.0), (600.0, 200.0)]));
        f
    }

    /// Stroke colours of the `<polyline>` elements, in document order.
    fn polyline_strokes(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
        doc.descendants()
            .filter(|n| n.has_tag_name("polyline"))
            .map(|n| n.attribute("stroke").unwrap_or("").to_string())
            .collect()
    }

    #[test]
    fn svg_is_well_formed_and_names_every_series() {
        let f = example();
        let svg = f.to_svg();
        let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let texts: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect();
        for name in ["C1", "C2", "C3", "ideal", "fair & <1/3>"] {
            assert!(texts.iter().any(|t| t == name), "legend lacks {name}: {texts:?}");
        }
        assert!(texts.iter().any(|t| t == "Execution times <shares 3:2:1> & more"));
        assert!(texts.iter().any(|t| t == "wall time (s)"));
        assert!(texts.iter().any(|t| t == "cumulative execution time (s)"));
    }

    #[test]
    fn ideal_series_are_dotted_in_a_darker_shade_of_the_measured_colour() {
        let mut f = Figure::new("t", "x", "y");
        f.measured.push(Series::new("A", vec![(0.0, 0.0), (10.0, 10.0)]));
        f.ideal.push(Series::new("A", vec![(0.0, 0.0), (10.0, 5.0)]));
        let strokes = polyline_strokes(&f.to_svg());
        let (blue, dark_blue) = ("#0072B2", "#003E61");
        let n = |c: &str| strokes.iter().filter(|s| s.eq_ignore_ascii_case(c)).count();
        // One solid polyline for the data, one for its legend sample; the ideal is many dots.
        assert_eq!(n(blue), 2, "{strokes:?}");
        assert!(n(dark_blue) > 20, "expected many dots in {dark_blue}, got {}: {strokes:?}", n(dark_blue));

        // Without the ideal series there are exactly the two solid polylines.
        f.ideal.clear();
        let strokes = polyline_strokes(&f.to_svg());
        let n_blue = strokes.iter().filter(|s| s.eq_ignore_ascii_case(blue)).count();
        assert_eq!(n_blue, 2, "{strokes:?}");
    }

    /// Past [`MAX_MARKED_SERIES`] lines, identical ones are neither dashed nor labelled at their
    /// ends (the legend names them), and the pairwise overlap test is not run.
    #[test]
    fn many_series_are_drawn_plain() {
        let line: Vec<(f64, f64)> = (0..=100).map(|i| (f64::from(i), f64::from(i))).collect();
        let figure = |n: usize| {
            let mut f = Figure::new("t", "x", "y");
            for k in 0..n {
                f.measured.push(Series::new(format!("S{k}"), line.clone()));
            }
            f.to_svg()
        };
        let texts = |svg: &str, name: &str| {
            svg.matches(&format!(">\n{name}\n</text>")).count()
                + svg.matches(&format!(">{name}</text>")).count()
        };
        let few = figure(MAX_MARKED_SERIES);
        // LINE_WIDTH + 3 under a stack, LINE_WIDTH + 1 for the dashes drawn over it.
        assert!(few.contains(r#"stroke-width="5""#), "the first of identical lines is drawn wider");
        assert!(few.contains(r#"stroke-width="3""#), "the others are dashed over it");
        let many = figure(300);
        assert!(!many.contains(r#"stroke-width="5""#));
        assert!(!many.contains(r#"stroke-width="3""#), "no dashed line over another");
        assert!(
            texts(&few, "S1") > texts(&many, "S1"),
            "no end label: {} {}",
            texts(&few, "S1"),
            texts(&many, "S1")
        );
    }

    #[test]
    fn overlapping_series_are_dashed_over_a_wider_line_and_every_line_is_labelled_at_its_end() {
        let mut f = Figure::new("t", "x", "y");
        let line: Vec<(f64, f64)> = (0..=100).map(|i| (f64::from(i), f64::from(i) * 10.0)).collect();
        f.measured.push(Series::new("R1", line.clone()));
        f.measured.push(Series::new("R2", line.clone()));
        f.measured.push(Series::new("C1", line.iter().map(|&(x, y)| (x, y / 2.0)).collect()));
        let svg = f.to_svg();
        let strokes = polyline_strokes(&svg);
        let n = |c: &str| strokes.iter().filter(|s| s.eq_ignore_ascii_case(c)).count();
        // R1 (blue) one solid line and its legend sample; R2 (vermillion), drawn on top of it, in
        // dashes; C1 (green), apart from both, solid.
        assert_eq!(n("#0072B2"), 2, "{strokes:?}");
        assert!(n("#D55E00") > 20, "R2 should be dashed: {strokes:?}");
        assert_eq!(n("#009E73"), 2, "{strokes:?}");
        assert!(svg.contains(r#"stroke-width="5""#), "R1 is drawn wider under R2");
        // Each name twice: in the legend and at the end of its line; R1 and R2 end at the same
        // point, and their labels are one label height apart.
        let texts: Vec<String> = svg
            .split("<text")
            .skip(1)
            .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim().to_string()))
            .collect();
        for name in ["R1", "R2", "C1"] {
            assert_eq!(texts.iter().filter(|t| *t == name).count(), 2, "{name} in {texts:?}");
        }
        let y_of = |name: &str| -> Vec<f64> {
            svg.split("<text")
                .filter(|t| {
                    t.split_once('>')
                        .is_some_and(|(_, rest)| rest.trim_start().starts_with(&format!("{name}\n")))
                })
                .filter_map(|t| t.split("y=\"").nth(1)?.split('"').next()?.parse().ok())
                .collect()
        };
        let (r1, r2) = (y_of("R1"), y_of("R2"));
        assert!(
            r1.iter().any(|a| r2.iter().any(|b| (a - b).abs() >= f64::from(END_LABEL_SIZE))),
            "{r1:?} {r2:?}"
        );
    }

    #[test]
    fn unmatched_ideal_series_gets_its_own_colour() {
        let mut f = Figure::new("t", "x", "y");
        f.measured.push(Series::new("A", vec![(0.0, 0.0), (10.0, 10.0)]));
        f.ideal.push(Series::new("B", vec![(0.0, 0.0), (10.0, 5.0)]));
        let strokes = polyline_strokes(&f.to_svg());
        let second = "#D55E00";
        assert!(strokes.iter().filter(|s| s.eq_ignore_ascii_case(second)).count() > 10);
    }

    #[test]
    fn empty_and_degenerate_figures_render() {
        let mut f = Figure::new("empty", "x", "y");
        roxmltree::Document::parse(&f.to_svg()).expect("empty figure is well-formed");
        f.measured.push(Series::new("one", vec![(5.0, 5.0)]));
        f.measured.push(Series::new("none", vec![]));
        f.measured.push(Series::new("nan", vec![(f64::NAN, 1.0), (1.0, f64::INFINITY)]));
        roxmltree::Document::parse(&f.to_svg()).expect("degenerate figure is well-formed");
    }

    #[test]
    fn rendering_is_deterministic() {
        assert_eq!(example().to_svg(), example().to_svg());
    }

    #[test]
    fn long_series_are_downsampled_for_drawing() {
        let mut f = Figure::new("t", "x", "y");
        let pts: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, (i % 7) as f64)).collect();
        f.measured.push(Series::new("long", pts));
        let svg = f.to_svg();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let longest = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline"))
            .map(|n| n.attribute("points").unwrap().split_whitespace().count())
            .max()
            .unwrap();
        assert!(longest <= MAX_PLOT_POINTS, "{longest} points drawn");
        assert!(longest > MAX_PLOT_POINTS / 2, "{longest} points drawn");
    }

    #[test]
    fn downsample_keeps_ends_and_peaks() {
        let mut pts: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, 0.0)).collect();
        pts[5_000].1 = 100.0; // one spike
        let d = downsample(&pts, 100);
        assert_eq!(d.len(), 100);
        assert_eq!(d[0], pts[0]);
        assert_eq!(d[99], pts[9_999]);
        assert!(d.contains(&(5_000.0, 100.0)), "spike lost");
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0), "order kept");
        // Short inputs are returned unchanged.
        assert_eq!(downsample(&pts[..50], 100), pts[..50].to_vec());
    }

    #[test]
    fn tick_labels_have_sensible_precision() {
        let f = tick_formatter(&(0.0..600.0));
        assert_eq!(f(&300.0), "300");
        let f = tick_formatter(&(0.0..0.5));
        assert_eq!(f(&0.25), "0.25");
        assert_eq!(f(&-0.0001), "0.00");
        let f = tick_formatter(&(0.0..3e8));
        assert_eq!(f(&2.5e8), "2.50e8");
        assert_eq!(f(&0.0), "0");
    }

    #[test]
    fn legend_avoids_the_lines() {
        let px = (800, 500);
        let r = (&(0.0..10.0), &(0.0..10.0));
        let rising: &[(f64, f64)] = &[(0.0, 0.0), (10.0, 10.0)];
        let falling: &[(f64, f64)] = &[(0.0, 10.0), (10.0, 0.0)];
        let corner =
            |lines: Vec<&[(f64, f64)]>| format!("{:?}", legend_corner(&["a", "b"], px, r, lines.into_iter()));
        assert_eq!(corner(vec![rising]), "UpperLeft");
        assert_eq!(corner(vec![falling]), "UpperRight");
        assert_eq!(corner(vec![rising, falling]), "UpperLeft"); // all touched once: first
        let high: &[(f64, f64)] = &[(0.0, 9.5), (10.0, 9.5)];
        assert_eq!(corner(vec![high]), "LowerRight");
    }

    #[test]
    fn extreme_ranges_render() {
        for (x, y) in [(1.0, 1e300), (1e-12, 1e-12), (-5.0, -1e9), (1e15, 3.0)] {
            let mut f = Figure::new("extreme", "x", "y");
            f.measured.push(Series::new("s", vec![(0.0, 0.0), (x, y)]));
            f.ideal.push(Series::new("s", vec![(0.0, 0.0), (x, y / 2.0)]));
            roxmltree::Document::parse(&f.to_svg()).expect("well-formed");
        }
    }
}
