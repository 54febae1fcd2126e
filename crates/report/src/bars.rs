//! Grouped bar charts with confidence intervals and reference marks: the dissertation's figs.
//! 6-16 to 6-19 (per scheduler, a bar per application or per outcome), drawn with our mean over
//! seeds, its 95 % interval as a whisker, and the paper's number, where it printed one, as a black
//! diamond on the bar.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::{Deserialize, Serialize};

use crate::escape::visible;
use crate::figure::{tick_formatter, y_label_area, FONT, PALETTE, WIDTH};

/// A grouped bar chart: along x the groups (e.g. schedulers), in each group one bar per series
/// (e.g. frames on time, early, late, dropped), each series in its own colour in every group.
///
/// Values that are not finite are not drawn (a series a group lacks). An interval (`errors`,
/// half-widths) is drawn as a whisker from `value − e` to `value + e` when `e > 0`. A mark
/// (`marks`, the paper's value) is drawn as a black diamond at its height over the bar; the legend
/// then has an entry "paper".
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BarChart {
    /// Title drawn above the plot.
    pub title: String,
    /// Label of the y axis.
    pub y_label: String,
    /// Group names, along x.
    pub groups: Vec<String>,
    /// Series names, in the legend; a bar each per group.
    pub series: Vec<String>,
    /// `values[g][s]`: the bar of series `s` in group `g`.
    pub values: Vec<Vec<f64>>,
    /// `errors[g][s]`: its interval's half-width (empty: none).
    pub errors: Vec<Vec<f64>>,
    /// `marks[g][s]`: a reference value drawn over the bar (empty: none).
    pub marks: Vec<Vec<Option<f64>>>,
}

impl BarChart {
    /// Renders the chart as a standalone SVG document (960×600 user units, with a `viewBox`).
    /// Deterministic: the same chart gives the same string.
    pub fn to_svg(&self) -> String {
        crate::figure::svg_string(&self.title, |root| self.draw(root))
    }

    fn cell<T: Copy>(v: &[Vec<T>], g: usize, s: usize) -> Option<T> {
        v.get(g).and_then(|r| r.get(s)).copied()
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;
        // The legend to the right of the plot, so that it never covers a bar.
        let has_marks = self.marks.iter().flatten().any(|m| m.is_some_and(f64::is_finite));
        let longest = self.series.iter().map(|n| visible(n).chars().count()).max().unwrap_or(0).max(5);
        let legend_w = (44 + 10 * longest as u32).min(WIDTH * 2 / 5);
        let (plot_area, legend_area) = root.split_horizontally(WIDTH - legend_w);
        let root = &plot_area;
        let (ng, ns) = (self.groups.len().max(1), self.series.len().max(1));
        let mut top = 0.0f64;
        for g in 0..self.groups.len() {
            for s in 0..self.series.len() {
                let v = Self::cell(&self.values, g, s).unwrap_or(f64::NAN);
                let e = Self::cell(&self.errors, g, s).unwrap_or(0.0);
                if v.is_finite() {
                    top = top.max(v + if e.is_finite() { e.max(0.0) } else { 0.0 });
                }
                if let Some(Some(m)) = Self::cell(&self.marks, g, s) {
                    if m.is_finite() {
                        top = top.max(m);
                    }
                }
            }
        }
        let y_range = 0.0..if top > 0.0 { top * 1.08 } else { 1.0 };
        let y_fmt = tick_formatter(&y_range);
        let mut chart = ChartBuilder::on(root)
            .caption(visible(&self.title), (FONT, 28).into_font().color(&BLACK))
            .margin_top(16)
            .margin_bottom(12)
            .margin_left(16)
            .margin_right(24)
            .x_label_area_size(64)
            .y_label_area_size(y_label_area(&y_range))
            .build_cartesian_2d(0.0..ng as f64, y_range.clone())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc(visible(&self.y_label))
            .axis_desc_style((FONT, 22).into_font().color(&BLACK))
            .label_style((FONT, 19).into_font().color(&RGBColor(40, 40, 40)))
            .y_labels(8)
            .y_label_formatter(&y_fmt)
            .bold_line_style(RGBColor(215, 215, 215).stroke_width(1))
            .light_line_style(TRANSPARENT)
            .axis_style(RGBColor(60, 60, 60).stroke_width(1))
            .draw()?;
        // Each group takes a unit of x: its bars side by side over the middle 80 %.
        let width = 0.8 / ns as f64;
        let x_of = |g: usize, s: usize| g as f64 + 0.1 + s as f64 * width;
        for s in 0..self.series.len() {
            let colour = PALETTE[s % PALETTE.len()];
            let bars: Vec<_> = (0..self.groups.len())
                .filter_map(|g| {
                    let v = Self::cell(&self.values, g, s)?;
                    v.is_finite().then(|| {
                        let x = x_of(g, s);
                        Rectangle::new([(x, 0.0), (x + width * 0.92, v.max(0.0))], colour.filled())
                    })
                })
                .collect();
            chart.draw_series(bars)?;
            for g in 0..self.groups.len() {
                let v = Self::cell(&self.values, g, s).unwrap_or(f64::NAN);
                let e = Self::cell(&self.errors, g, s).unwrap_or(0.0);
                if !(v.is_finite() && e.is_finite() && e > 0.0) {
                    continue;
                }
                let xm = x_of(g, s) + width * 0.46;
                let (lo, hi) = ((v - e).max(0.0), v + e);
                let cap = width * 0.2;
                let style = BLACK.stroke_width(1);
                chart.draw_series([
                    PathElement::new(vec![(xm, lo), (xm, hi)], style),
                    PathElement::new(vec![(xm - cap, lo), (xm + cap, lo)], style),
                    PathElement::new(vec![(xm - cap, hi), (xm + cap, hi)], style),
                ])?;
            }
        }
        let marks: Vec<(f64, f64)> = (0..self.groups.len())
            .flat_map(|g| (0..self.series.len()).map(move |s| (g, s)))
            .filter_map(|(g, s)| match Self::cell(&self.marks, g, s) {
                Some(Some(m)) if m.is_finite() => Some((x_of(g, s) + width * 0.46, m)),
                _ => None,
            })
            .collect();
        if !marks.is_empty() {
            let diamond = |(x, y): (f64, f64)| {
                EmptyElement::at((x, y))
                    + Polygon::new(vec![(0, -7), (6, 0), (0, 7), (-6, 0)], BLACK.filled())
                    + Polygon::new(vec![(0, -4), (3, 0), (0, 4), (-3, 0)], WHITE.filled())
            };
            chart.draw_series(marks.into_iter().map(diamond))?;
        }
        let text =
            TextStyle::from((FONT, 18).into_font()).color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
        let mut y = 90;
        for (s, name) in self.series.iter().enumerate() {
            let colour = PALETTE[s % PALETTE.len()];
            legend_area.draw(&Rectangle::new([(8, y - 8), (26, y + 8)], colour.filled()))?;
            legend_area.draw(&Text::new(visible(name).into_owned(), (34, y), text.clone()))?;
            y += 28;
        }
        if has_marks {
            let diamond = EmptyElement::at((17, y))
                + Polygon::new(vec![(0, -8), (7, 0), (0, 8), (-7, 0)], BLACK.filled());
            legend_area.draw(&diamond)?;
            legend_area.draw(&Text::new("paper".to_string(), (34, y), text.clone()))?;
        }
        // Group names under the axis, centred under their bars.
        let style =
            TextStyle::from((FONT, 18).into_font()).color(&BLACK).pos(Pos::new(HPos::Center, VPos::Top));
        for (g, name) in self.groups.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(g as f64 + 0.5, 0.0));
            root.draw(&Text::new(visible(name).into_owned(), (px, py + 10), style.clone()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> BarChart {
        BarChart {
            title: "Frames".into(),
            y_label: "% of frames".into(),
            groups: vec!["WFQ".into(), "SMART".into()],
            series: vec!["on time".into(), "dropped".into()],
            values: vec![vec![50.0, 30.0], vec![60.0, f64::NAN]],
            errors: vec![vec![2.0, 1.0], vec![0.0, 0.0]],
            marks: vec![vec![Some(32.0), None], vec![Some(57.0), None]],
        }
    }

    #[test]
    fn draws_a_bar_per_finite_value_whiskers_and_marks() {
        let svg = chart().to_svg();
        let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
        let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
        for want in ["WFQ", "SMART", "on time", "dropped", "paper", "Frames"] {
            assert!(texts.iter().any(|t| t.trim() == want), "{want} missing");
        }
        // Three bars (the NaN is not drawn) plus two legend boxes, filled in the series' colours.
        let blue = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "rect" && n.attribute("fill") == Some("#0072B2"))
            .count();
        let red = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "rect" && n.attribute("fill") == Some("#D55E00"))
            .count();
        assert_eq!((blue, red), (3, 2));
        assert_eq!(svg, chart().to_svg(), "deterministic");
    }

    #[test]
    fn an_empty_chart_still_renders() {
        let svg = BarChart::default().to_svg();
        assert!(roxmltree::Document::parse(&svg).is_ok());
    }
}
