//! Hand-written SVG charts: a plot area with two axes (ticks, tick labels, titles) and the
//! marks drawn in data coordinates. Styling comes from the report's stylesheet (classes), so
//! the markup stays small; colors of marks are attributes.
//!
//! ```
//! use neardup_report::svg::{standalone, Axis, Plot, PALETTE};
//!
//! let mut plot = Plot::new(
//!     "A line",
//!     400.0,
//!     300.0,
//!     Axis::linear("x", 0.0, 1.0, 5),
//!     Axis::linear("y", 0.0, 1.0, 5),
//! );
//! plot.line(&[(0.0, 0.0), (1.0, 1.0)], PALETTE[0], 2.0, false);
//! let file = standalone(&plot.finish());
//! assert!(file.starts_with("<?xml") && file.contains("<path"));
//! ```

use std::fmt::Write as _;

use super::html::escape;

/// Colors of series, in order (colorblind-friendly, readable on white).
pub const PALETTE: [&str; 6] = [
    "#2563eb", "#ea580c", "#16a34a", "#9333ea", "#0891b2", "#b45309",
];
/// The charts' stylesheet: the report's page includes it once; [`standalone`] puts it
/// inside an SVG file of its own.
pub const CHART_STYLE: &str = "\
svg.chart{max-width:100%;height:auto;display:block;background:#fff;\
font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\
svg.chart text{font-size:12px;fill:#374151}\
svg.chart .axis-title{font-size:13px;font-weight:600}\
svg.chart .grid line{stroke:#e5e7eb}\
svg.chart .axis,svg.chart .tickmark{stroke:#6b7280;fill:none}\
svg.chart .legend{fill:#fff;fill-opacity:.92;stroke:#d1d5db}\
";

/// A chart from [`Plot::finish`] as a standalone SVG file (XML declaration, own styles).
pub fn standalone(svg: &str) -> String {
    let body_at = svg.find('>').map_or(0, |i| i + 1);
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}<style>{CHART_STYLE}</style>{}\n",
        &svg[..body_at],
        &svg[body_at..]
    )
}

/// Approximate width of a character of tick-label text, in pixels.
const CHAR_PX: f64 = 6.8;

/// The color of threshold markers.
pub const MARKER: &str = "#dc2626";

/// One axis: its data range, tick positions with labels, and a title (with the unit).
#[derive(Clone, Debug)]
pub struct Axis {
    /// The axis title, with the unit.
    pub title: String,
    /// The lowest value shown.
    pub lo: f64,
    /// The highest value shown.
    pub hi: f64,
    /// Tick positions (data values) and their labels.
    pub ticks: Vec<(f64, String)>,
}

impl Axis {
    /// A linear axis over [lo, hi] with about `target` "nice" ticks (1, 2, 5 × 10ⁿ steps).
    pub fn linear(title: &str, lo: f64, hi: f64, target: usize) -> Axis {
        let step = nice_step(hi - lo, target);
        let decimals = decimals(step);
        let mut ticks = Vec::new();
        let mut i = (lo / step - 1e-9).ceil() as i64;
        loop {
            let v = i as f64 * step;
            if v > hi + step * 1e-9 {
                break;
            }
            ticks.push((v, format!("{v:.decimals$}")));
            i += 1;
        }
        Axis {
            title: title.to_string(),
            lo,
            hi,
            ticks,
        }
    }

    /// A count axis from 0 to a nice bound at or above `max`, tick labels compact
    /// (12,000 → "12k", 3,500,000 → "3.5M").
    pub fn counts(title: &str, max: f64, target: usize) -> Axis {
        let max = if max > 0.0 { max } else { 1.0 };
        let step = nice_step(max, target).max(1.0);
        let hi = (max / step).ceil() * step;
        let mut axis = Axis::linear(title, 0.0, hi, target);
        for (v, label) in &mut axis.ticks {
            *label = compact(*v);
        }
        axis
    }

    /// A categorical axis: category i is centred at i + 0.5 on [0, n].
    pub fn categories(title: &str, names: &[String]) -> Axis {
        Axis {
            title: title.to_string(),
            lo: 0.0,
            hi: names.len().max(1) as f64,
            ticks: names
                .iter()
                .enumerate()
                .map(|(i, n)| (i as f64 + 0.5, n.clone()))
                .collect(),
        }
    }
}

/// A step of 1, 2 or 5 × 10ⁿ giving about `target` steps over `range`.
pub fn nice_step(range: f64, target: usize) -> f64 {
    let range = if range > 0.0 && range.is_finite() {
        range
    } else {
        1.0
    };
    let rough = range / target.max(1) as f64;
    let magnitude = 10f64.powf(rough.log10().floor());
    let norm = rough / magnitude;
    let nice = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// Decimals needed to print multiples of `step` exactly.
fn decimals(step: f64) -> usize {
    let mut d = 0;
    while d < 6
        && ((step * 10f64.powi(d as i32)).round() - step * 10f64.powi(d as i32)).abs() > 1e-6
    {
        d += 1;
    }
    d
}

/// A compact count: 950, 1.5k, 12k, 1.5M, 2G.
pub fn compact(v: f64) -> String {
    let a = v.abs();
    let (x, unit) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        return format!("{}", v.round() as i64);
    };
    let s = format!("{x:.1}");
    format!("{}{unit}", s.strip_suffix(".0").unwrap_or(&s))
}

/// Where text is anchored horizontally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    /// The text starts at the point.
    Start,
    /// The text is centred on the point.
    Middle,
    /// The text ends at the point.
    End,
}

impl Anchor {
    fn name(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// An SVG chart being drawn: the frame, grid and axes are written by [`Plot::new`]; marks
/// are added in data coordinates; [`Plot::finish`] closes the document.
pub struct Plot {
    out: String,
    x: Axis,
    y: Axis,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

/// Formats a coordinate with one decimal (enough for screen pixels, small markup).
fn c(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

impl Plot {
    /// A `width` × `height` chart titled `label` (for screen readers and tooltips) with
    /// the given axes. Tick labels of a categorical x axis are rotated when they are many.
    pub fn new(label: &str, width: f64, height: f64, x: Axis, y: Axis) -> Plot {
        let widest_y = y.ticks.iter().map(|(_, l)| l.chars().count()).max();
        let left = 34.0 + 7.0 * widest_y.unwrap_or(1) as f64;
        let right = width - 16.0;
        // Rotate x tick labels when they would not fit side by side, and make room for them.
        let widest_x = x.ticks.iter().map(|(_, l)| l.chars().count()).max();
        let label_px = CHAR_PX * widest_x.unwrap_or(0) as f64;
        let span = (x.hi - x.lo).max(f64::MIN_POSITIVE);
        let spacing = x
            .ticks
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) / span * (right - left))
            .fold(f64::INFINITY, f64::min);
        let rotate = label_px + 6.0 > spacing;
        let top = 22.0;
        let bottom = height - 46.0 - if rotate { 0.6 * label_px } else { 0.0 };
        let mut p = Plot {
            out: String::new(),
            x,
            y,
            left,
            right,
            top,
            bottom,
        };
        let _ = write!(
            p.out,
            "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" \
             width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{l}\"><title>{l}</title>",
            w = c(width),
            h = c(height),
            l = escape(label)
        );
        // Grid and tick labels.
        p.out.push_str("<g class=\"grid\">");
        for i in 0..p.y.ticks.len() {
            let y = p.py(p.y.ticks[i].0);
            let _ = write!(
                p.out,
                "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\"/>",
                c(p.left),
                c(p.right),
                y = c(y)
            );
        }
        p.out.push_str("</g><g class=\"tick\">");
        for i in 0..p.y.ticks.len() {
            let (v, ref label) = p.y.ticks[i];
            let _ = write!(
                p.out,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                c(p.left - 6.0),
                c(p.py(v) + 4.0),
                escape(label)
            );
        }
        for i in 0..p.x.ticks.len() {
            let (v, ref label) = p.x.ticks[i];
            let (x, y) = (p.px(v), p.bottom + 16.0);
            if rotate {
                let _ = write!(
                    p.out,
                    "<text x=\"{x}\" y=\"{y}\" text-anchor=\"end\" transform=\"rotate(-35 {x} {y})\">{}</text>",
                    escape(label),
                    x = c(x + 4.0),
                    y = c(y - 2.0)
                );
            } else {
                let _ = write!(
                    p.out,
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                    c(x),
                    c(y),
                    escape(label)
                );
            }
            let _ = write!(
                p.out,
                "<line class=\"tickmark\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/>",
                c(p.bottom),
                c(p.bottom + 4.0),
                x = c(x)
            );
        }
        p.out.push_str("</g>");
        // Axis lines and titles.
        let _ = write!(
            p.out,
            "<path class=\"axis\" d=\"M{} {}V{}H{}\"/>",
            c(p.left),
            c(p.top),
            c(p.bottom),
            c(p.right)
        );
        let _ = write!(
            p.out,
            "<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            c((p.left + p.right) / 2.0),
            c(height - 14.0),
            escape(&p.x.title)
        );
        let (ty, tx) = ((p.top + p.bottom) / 2.0, 14.0);
        let _ = write!(
            p.out,
            "<text class=\"axis-title\" x=\"{tx}\" y=\"{ty}\" text-anchor=\"middle\" \
             transform=\"rotate(-90 {tx} {ty})\">{}</text>",
            escape(&p.y.title),
            tx = c(tx),
            ty = c(ty)
        );
        p
    }

    /// The SVG x of a data value.
    pub fn px(&self, v: f64) -> f64 {
        let span = (self.x.hi - self.x.lo).max(f64::MIN_POSITIVE);
        self.left + (v.clamp(self.x.lo, self.x.hi) - self.x.lo) / span * (self.right - self.left)
    }

    /// The SVG y of a data value.
    pub fn py(&self, v: f64) -> f64 {
        let span = (self.y.hi - self.y.lo).max(f64::MIN_POSITIVE);
        self.bottom - (v.clamp(self.y.lo, self.y.hi) - self.y.lo) / span * (self.bottom - self.top)
    }

    /// A polyline through `points` (data coordinates).
    pub fn line(&mut self, points: &[(f64, f64)], color: &str, width: f64, dashed: bool) {
        if points.is_empty() {
            return;
        }
        let mut d = String::with_capacity(points.len() * 12);
        for (i, &(x, y)) in points.iter().enumerate() {
            let _ = write!(
                d,
                "{}{} {}",
                if i == 0 { "M" } else { "L" },
                c(self.px(x)),
                c(self.py(y))
            );
        }
        let _ = write!(
            self.out,
            "<path d=\"{d}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{}\"{}/>",
            c(width),
            if dashed {
                " stroke-dasharray=\"5 4\""
            } else {
                ""
            }
        );
    }

    /// A vertical marker line at data x over the whole plot height, labelled at its top.
    pub fn vline(&mut self, x: f64, color: &str, label: &str) {
        let px = self.px(x);
        let _ = write!(
            self.out,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{color}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>",
            c(self.top),
            c(self.bottom),
            x = c(px)
        );
        let anchor = if px > (self.left + self.right) / 2.0 {
            Anchor::End
        } else {
            Anchor::Start
        };
        let dx = if anchor == Anchor::End { -4.0 } else { 4.0 };
        self.text_px(px + dx, self.top - 6.0, anchor, label, Some(color));
    }

    /// A dot at a data point, with an optional label beside it.
    pub fn dot(&mut self, x: f64, y: f64, color: &str, label: Option<&str>) {
        let (px, py) = (self.px(x), self.py(y));
        let _ = write!(
            self.out,
            "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{color}\" stroke=\"#fff\" stroke-width=\"1.5\"/>",
            c(px),
            c(py)
        );
        if let Some(label) = label {
            let (anchor, dx) = if px > (self.left + self.right) / 2.0 {
                (Anchor::End, -8.0)
            } else {
                (Anchor::Start, 8.0)
            };
            self.text_px(px + dx, py + 4.0, anchor, label, Some(color));
        }
    }

    /// A rectangle between data coordinates, with a tooltip.
    pub fn rect(&mut self, x0: f64, x1: f64, y0: f64, y1: f64, color: &str, tooltip: &str) {
        let (a, b) = (self.px(x0), self.px(x1));
        let (top, bottom) = (self.py(y1.max(y0)), self.py(y1.min(y0)));
        let _ = write!(
            self.out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\"><title>{}</title></rect>",
            c(a.min(b)),
            c(top),
            c((b - a).abs()),
            c(bottom - top),
            escape(tooltip)
        );
    }

    /// Text at a data point.
    pub fn text(&mut self, x: f64, y: f64, anchor: Anchor, text: &str, color: Option<&str>) {
        let (px, py) = (self.px(x), self.py(y));
        self.text_px(px, py, anchor, text, color);
    }

    fn text_px(&mut self, x: f64, y: f64, anchor: Anchor, text: &str, color: Option<&str>) {
        let _ = write!(
            self.out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"{}\"{}>{}</text>",
            c(x),
            c(y),
            anchor.name(),
            // A style, not an attribute: the stylesheet's text fill would override that.
            color
                .map(|c| format!(" style=\"fill:{c}\""))
                .unwrap_or_default(),
            escape(text)
        );
    }

    /// A legend box in the top-left corner of the plot: one line per (color, label, dashed).
    pub fn legend(&mut self, entries: &[(&str, String, bool)]) {
        if entries.is_empty() {
            return;
        }
        let widest = entries
            .iter()
            .map(|(_, l, _)| l.chars().count())
            .max()
            .unwrap_or(0);
        let (x, y) = (self.left + 10.0, self.top + 8.0);
        let _ = write!(
            self.out,
            "<rect class=\"legend\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
            c(x),
            c(y),
            c(34.0 + 6.6 * widest as f64),
            c(8.0 + 18.0 * entries.len() as f64)
        );
        for (i, (color, label, dashed)) in entries.iter().enumerate() {
            let ly = y + 16.0 + 18.0 * i as f64;
            let _ = write!(
                self.out,
                "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"3\"{}/>",
                c(x + 4.0),
                c(x + 26.0),
                if *dashed { " stroke-dasharray=\"5 4\"" } else { "" },
                ly = c(ly - 4.0)
            );
            self.text_px(x + 30.0, ly, Anchor::Start, label, None);
        }
    }

    /// The finished SVG element.
    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps_and_ticks() {
        assert_eq!(nice_step(1.0, 5), 0.2);
        assert_eq!(nice_step(1.0, 10), 0.1);
        assert_eq!(nice_step(730.0, 5), 200.0);
        let a = Axis::linear("s", 0.0, 1.0, 5);
        let labels: Vec<&str> = a.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        let a = Axis::counts("pairs", 12_345.0, 5);
        assert_eq!(a.hi, 15_000.0);
        assert_eq!(a.ticks.last().unwrap().1, "15k");
        assert_eq!(Axis::counts("n", 0.0, 5).hi, 1.0);
        assert_eq!(Axis::counts("n", 3.0, 5).ticks.len(), 4); // 0, 1, 2, 3: whole numbers
    }

    #[test]
    fn compact_counts() {
        assert_eq!(compact(950.0), "950");
        assert_eq!(compact(1_500.0), "1.5k");
        assert_eq!(compact(12_000.0), "12k");
        assert_eq!(compact(1_500_000.0), "1.5M");
        assert_eq!(compact(2e9), "2G");
    }

    #[test]
    fn a_plot_is_well_formed_and_escapes_text() {
        let mut p = Plot::new(
            "<chart>",
            400.0,
            300.0,
            Axis::linear("x <unit>", 0.0, 1.0, 5),
            Axis::counts("y", 10.0, 5),
        );
        p.line(&[(0.0, 0.0), (1.0, 10.0)], PALETTE[0], 2.0, false);
        p.vline(0.5, MARKER, "t = 0.5 & more");
        p.rect(0.0, 0.1, 0.0, 5.0, PALETTE[1], "bin <0.1>");
        p.dot(0.5, 5.0, PALETTE[0], Some("P = 0.5"));
        p.legend(&[(PALETTE[0], "a & b".to_string(), false)]);
        let svg = p.finish();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(!svg.contains("<chart>") && !svg.contains("<unit>") && !svg.contains("<0.1>"));
        assert!(svg.contains("x &lt;unit&gt;") && svg.contains("t = 0.5 &amp; more"));
        assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
        // The line goes from the origin's pixel to the top right corner of the plot.
        assert!(svg.contains("stroke=\"#2563eb\" stroke-width=\"2\""));
        let file = standalone(&svg);
        assert!(file.starts_with("<?xml") && file.contains("<style>svg.chart{"));
        assert!(file.trim_end().ends_with("</svg>"));
    }
}
