//! The report's charts: S-curves, similarity histograms, cluster sizes, time per stage,
//! each an SVG element (wrap one with [`standalone`](crate::svg::standalone) for a file).
//!
//! ```
//! use neardup::measure::plan::Plan;
//! use neardup_report::charts::{s_curve, CurvePlan};
//!
//! let plans = [CurvePlan { label: "16 × 8".into(), plan: Plan::new(16, 8) }];
//! let svg = s_curve(&plans, 0.8);
//! assert!(svg.starts_with("<svg") && svg.contains("P(0.8) = 0.947"));
//! ```

use neardup::measure::plan::Plan;

use super::histogram::{coarsen, SizeBin};
use super::html::{count, seconds, thousands};
use super::svg::{compact, Anchor, Axis, Plot, MARKER, PALETTE};
use super::Timing;

/// Points sampled along an S-curve.
const CURVE_POINTS: usize = 200;

/// One band plan drawn on an S-curve chart.
#[derive(Clone, Debug, PartialEq)]
pub struct CurvePlan {
    /// Legend text, e.g. "16 × 8 (chosen)".
    pub label: String,
    /// The plan whose S-curve is drawn.
    pub plan: Plan,
}

/// The S-curves of one or more plans, with the threshold marked by a vertical line and each
/// curve's value at the threshold by a dot (and in the legend).
pub fn s_curve(plans: &[CurvePlan], threshold: f64) -> String {
    let curves: Vec<Curve> = plans
        .iter()
        .map(|plan| {
            let p = plan.plan;
            let f: Box<dyn Fn(f64) -> f64> = Box::new(move |s| p.probability(s));
            (plan.label.clone(), f)
        })
        .collect();
    candidate_curves(
        "LSH S-curve: probability that a pair becomes a candidate, by Jaccard similarity",
        &curves,
        threshold,
    )
}

/// A curve's legend and P(candidate | s).
pub type Curve<'a> = (String, Box<dyn Fn(f64) -> f64 + 'a>);

/// Curves of P(candidate | s), each with its legend, the threshold marked as on
/// [`s_curve`]: for any way of finding candidates (bands, SimHash fingerprints).
pub fn candidate_curves(title: &str, curves: &[Curve], threshold: f64) -> String {
    let mut p = Plot::new(
        title,
        600.0,
        380.0,
        Axis::linear("Jaccard similarity s", 0.0, 1.0, 10),
        Axis::linear("P(candidate | s)", 0.0, 1.0, 5),
    );
    p.vline(threshold, MARKER, &format!("threshold t = {threshold}"));
    let mut legend = Vec::new();
    for (i, (label, probability)) in curves.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let points: Vec<(f64, f64)> = (0..=CURVE_POINTS)
            .map(|j| {
                let s = j as f64 / CURVE_POINTS as f64;
                (s, probability(s))
            })
            .collect();
        p.line(&points, color, 2.0, i > 0);
        legend.push((
            color,
            format!("{label}: P({threshold}) = {:.3}", probability(threshold)),
            i > 0,
        ));
    }
    for (i, (_, probability)) in curves.iter().enumerate() {
        let at = probability(threshold);
        let label = (curves.len() == 1).then(|| format!("{at:.3}"));
        p.dot(threshold, at, PALETTE[i % PALETTE.len()], label.as_deref());
    }
    p.legend(&legend);
    p.finish()
}

/// A histogram of similarities in [0, 1], in `bins` bins, with the threshold marked.
/// Colour of the bar of identical copies (Jaccard 1 without verification).
pub const IDENTICAL_COLOR: &str = "#6b7280";

/// A histogram of similarities in `bins` bins over [0, 1], from `values`, counts in finer
/// bins (a multiple of `bins`). `identical` pairs of identical copies (Jaccard 1, found by
/// the exact-duplicate pre-pass, not counted in `values`) are stacked on the last bin in
/// their own colour, with a legend.
pub fn similarity_histogram(
    label: &str,
    values: &[u64],
    identical: u64,
    bins: usize,
    threshold: Option<f64>,
    color: &str,
) -> String {
    value_histogram(
        label,
        similarity_axis(false),
        values,
        identical,
        bins,
        threshold,
        color,
    )
}

/// A containment run's pairs by their containment |A ∩ B| / |A|, drawn like
/// [`similarity_histogram`] (without identical copies: they are pairs like the others).
pub fn containment_histogram(
    label: &str,
    values: &[u64],
    bins: usize,
    threshold: Option<f64>,
    color: &str,
) -> String {
    value_histogram(
        label,
        "containment |A ∩ B| / |A|",
        values,
        0,
        bins,
        threshold,
        color,
    )
}

/// The axis of a run's similarities: Jaccard, or for a run that counted repeated shingles
/// the weighted Jaccard of their counts.
pub fn similarity_axis(multiset: bool) -> &'static str {
    if multiset {
        "weighted Jaccard Σ min / Σ max of counts"
    } else {
        "Jaccard similarity"
    }
}

/// [`similarity_histogram`] of values in [0, 1] named `axis`.
pub fn value_histogram(
    label: &str,
    axis: &str,
    values: &[u64],
    identical: u64,
    bins: usize,
    threshold: Option<f64>,
    color: &str,
) -> String {
    let counts = coarsen(values, bins);
    let last = counts.len() - 1;
    let max = counts
        .iter()
        .enumerate()
        .map(|(i, &n)| if i == last { n + identical } else { n })
        .max()
        .unwrap_or(0);
    let mut p = Plot::new(
        label,
        540.0,
        300.0,
        Axis::linear(axis, 0.0, 1.0, 10),
        Axis::counts("pairs", max as f64, 5),
    );
    let width = 1.0 / counts.len() as f64;
    for (i, &n) in counts.iter().enumerate() {
        if n > 0 {
            let lo = i as f64 * width;
            let tip = format!("{lo:.2}–{:.2}: {}", lo + width, count(n, "pair", "pairs"));
            p.rect(
                lo + width * 0.06,
                lo + width * 0.94,
                0.0,
                n as f64,
                color,
                &tip,
            );
        }
    }
    if identical > 0 {
        let lo = last as f64 * width;
        let below = counts[last] as f64;
        let tip = format!(
            "1.00: {} of identical copies (found before LSH, not verified)",
            count(identical, "pair", "pairs")
        );
        p.rect(
            lo + width * 0.06,
            lo + width * 0.94,
            below,
            below + identical as f64,
            IDENTICAL_COLOR,
            &tip,
        );
        p.legend(&[
            (color, "verified".to_string(), false),
            (
                IDENTICAL_COLOR,
                format!("identical copies (J = 1): {}", thousands(identical)),
                false,
            ),
        ]);
    }
    if let Some(t) = threshold {
        p.vline(t, MARKER, &format!("t = {t}"));
    }
    if values.iter().all(|&n| n == 0) && identical == 0 {
        p.text(
            0.5,
            0.5 * max.max(1) as f64,
            Anchor::Middle,
            "no pairs",
            None,
        );
    }
    p.finish()
}

/// Number of clusters per size bin, as columns.
pub fn cluster_sizes(bins: &[SizeBin]) -> String {
    let columns: Vec<Column> = bins
        .iter()
        .map(|b| Column {
            name: b.label(),
            count: b.clusters,
            tip: format!(
                "size {}: {} clusters, {} documents",
                b.label(),
                thousands(b.clusters),
                thousands(b.documents)
            ),
        })
        .collect();
    column_chart(
        "Cluster sizes",
        ("cluster size (documents)", "clusters"),
        &columns,
        PALETTE[2],
    )
}

/// Reported pairs by the Hamming distance of their SimHash fingerprints: `counts[d]` pairs
/// at distance d, as columns.
pub fn hamming_distances(counts: &[u64]) -> String {
    let columns: Vec<Column> = counts
        .iter()
        .enumerate()
        .map(|(d, &count)| Column {
            name: d.to_string(),
            count,
            tip: format!(
                "{} {d} bits apart",
                crate::html::count(count, "pair", "pairs")
            ),
        })
        .collect();
    column_chart(
        "SimHash: reported pairs by the Hamming distance of their fingerprints",
        ("bits apart", "pairs"),
        &columns,
        PALETTE[0],
    )
}

/// One column of a [`column_chart`].
struct Column {
    name: String,
    count: u64,
    tip: String,
}

/// Counts per category as columns, each labelled with its count.
fn column_chart(title: &str, (x, y): (&str, &str), columns: &[Column], color: &str) -> String {
    let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    let max = columns.iter().map(|c| c.count).max().unwrap_or(0);
    let mut p = Plot::new(
        title,
        560.0,
        320.0,
        Axis::categories(x, &names),
        Axis::counts(y, max as f64, 5),
    );
    for (i, c) in columns.iter().enumerate() {
        let x = i as f64;
        if c.count > 0 {
            p.rect(x + 0.15, x + 0.85, 0.0, c.count as f64, color, &c.tip);
            p.text(
                x + 0.5,
                c.count as f64,
                Anchor::Middle,
                &compact(c.count as f64),
                None,
            );
        }
    }
    p.finish()
}

/// Seconds per stage as horizontal bars, labelled with their values.
pub fn timings(stages: &[Timing]) -> String {
    let n = stages.len();
    // Categories run top to bottom: stage i sits at n − i − 0.5 on the y axis.
    let names: Vec<String> = stages.iter().rev().map(|t| t.stage.clone()).collect();
    let max = stages
        .iter()
        .map(|t| t.seconds)
        .filter(|t| t.is_finite())
        .fold(0.0, f64::max);
    let hi = if max > 0.0 { max * 1.18 } else { 1.0 };
    let mut x = Axis::linear("time (seconds)", 0.0, hi, 6);
    x.ticks.retain(|(v, _)| *v <= hi);
    let mut p = Plot::new(
        "Time per stage",
        600.0,
        70.0 + 28.0 * n.max(1) as f64,
        x,
        Axis::categories("stage", &names),
    );
    for (i, Timing { stage, seconds: t }) in stages.iter().enumerate() {
        let y = (n - i - 1) as f64;
        let t = if t.is_finite() { t.max(0.0) } else { 0.0 };
        p.rect(
            0.0,
            t,
            y + 0.2,
            y + 0.8,
            PALETTE[0],
            &format!("{stage}: {}", seconds(t)),
        );
        p.text(
            t,
            y + 0.35,
            Anchor::Start,
            &format!(" {}", seconds(t)),
            None,
        );
    }
    p.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::{cluster_size_bins, similarity_bins};

    fn fine(values: &[f64]) -> Vec<u64> {
        similarity_bins(values, neardup::run::SIMILARITY_BINS)
    }

    #[test]
    fn s_curve_marks_the_threshold() {
        let plans = [CurvePlan {
            label: "16 × 8".into(),
            plan: Plan::new(16, 8),
        }];
        let svg = s_curve(&plans, 0.8);
        assert!(svg.contains("threshold t = 0.8"));
        assert!(svg.contains("P(0.8) = 0.947"));
        assert!(svg.contains(">0.947<"));
        assert!(svg.contains("Jaccard similarity s") && svg.contains("P(candidate | s)"));
    }

    #[test]
    fn charts_have_axis_titles_with_units() {
        let h = similarity_histogram(
            "verified",
            &fine(&[0.8, 0.9, 0.9]),
            0,
            50,
            Some(0.8),
            PALETTE[0],
        );
        assert!(h.contains("Jaccard similarity") && h.contains(">pairs<"));
        assert_eq!(h.matches("<rect").count(), 2);
        assert!(h.contains("0.90–0.92: 2 pairs"));
        let c = cluster_sizes(&cluster_size_bins(&[2, 2, 5]));
        assert!(c.contains("cluster size (documents)") && c.contains(">clusters<"));
        let t = timings(&[Timing::new("read", 0.5), Timing::new("verify", 1.25)]);
        assert!(t.contains("time (seconds)") && t.contains("1.250 s"));
        assert!(
            similarity_histogram("none", &fine(&[]), 0, 50, None, PALETTE[0]).contains("no pairs")
        );
    }

    #[test]
    fn identical_copies_are_a_bar_of_their_own_at_one() {
        let h = similarity_histogram("verified", &fine(&[0.9, 1.0]), 7, 50, Some(0.8), PALETTE[0]);
        assert!(h.contains("1.00: 7 pairs of identical copies"), "{h}");
        assert!(h.contains("identical copies (J = 1): 7"));
        assert!(h.contains(IDENTICAL_COLOR));
        // Two verified bars, the identical bar and the legend's box.
        assert_eq!(h.matches("<rect").count(), 4);
        // Only identical copies: a bar, not "no pairs".
        let h = similarity_histogram("verified", &fine(&[]), 3, 50, None, PALETTE[0]);
        assert!(!h.contains("no pairs") && h.contains("3 pairs of identical copies"));
    }
}
