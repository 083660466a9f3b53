//! The sections of the report page, each appended to the document being built.

use std::fmt::Write as _;

use neardup::measure::evaluation::Evaluation;

use super::charts::{self, CurvePlan};
use super::html::{
    count, escape, escape_into, key_value_table, seconds, similarity, thousands, truncated,
};
use super::{diff, histogram, svg};
use super::{ClusterView, PairView, ReportData};
use super::{ID_CHARS, MAX_CLUSTERS, MAX_DUPLICATES, MAX_PAIRS, SIMILARITY_BINS, TEXT_CHARS};

/// Pair cards and cluster cards open when the page loads.
const OPEN_CARDS: usize = 6;
/// Similarities at which the S-curve is tabulated (the threshold is added).
const CURVE_TABLE: [f64; 7] = [0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95];

pub fn run_section(out: &mut String, data: &ReportData) {
    out.push_str("<section id=\"run\"><h2>Run</h2><div class=\"cards\">");
    for c in &data.counts {
        let _ = write!(
            out,
            "<div class=\"card\"><b>{}</b><span>{}</span></div>",
            thousands(c.value),
            escape(&c.name)
        );
    }
    out.push_str("</div><div class=\"grid\"><div><h3>Parameters</h3>");
    let parameters: Vec<(String, String)> = data
        .parameters
        .iter()
        .map(|p| (p.name.clone(), p.value.clone()))
        .collect();
    out.push_str(&key_value_table(&parameters, false));
    out.push_str("</div><div><h3>Skipped records by reason</h3>");
    if data.skipped.is_empty() {
        out.push_str("<p class=\"muted\">No record was skipped.</p>");
    } else {
        let total: u64 = data.skipped.iter().map(|c| c.value).sum();
        let mut rows: Vec<(String, String)> = data
            .skipped
            .iter()
            .map(|c| (c.name.clone(), thousands(c.value)))
            .collect();
        rows.push(("total".to_string(), thousands(total)));
        out.push_str(&key_value_table(&rows, true));
    }
    out.push_str("</div></div></section>");
}

pub fn plan_section(out: &mut String, data: &ReportData) {
    if let (Some(k), Some(t)) = (data.simhash, data.threshold) {
        return simhash_plan(out, k, t);
    }
    out.push_str("<section id=\"plan\"><h2>LSH plan and S-curve</h2>");
    let (Some(plan), Some(t)) = (data.plan, data.threshold) else {
        out.push_str(
            "<p>Exact mode: the exact set-similarity join finds every pair at or above the \
             threshold, so there is no banding and no S-curve (recall 1).</p></section>",
        );
        return;
    };
    let (bands, rows) = (plan.bands, plan.rows);
    let at = plan.probability(t);
    let above = plan.mean_probability(t, 1.0);
    let _ = write!(
        out,
        "<p>{bands} bands × {rows} rows: two documents become candidates when all {rows} rows \
         of at least one band agree, with probability P(s) = 1 − (1 − s<sup>{rows}</sup>)\
         <sup>{bands}</sup>. A pair exactly at the threshold {t} is found with probability \
         <b>{at:.3}</b>; pairs spread evenly over [{t}, 1] are found with probability \
         <b>{above:.3}</b> on average.</p><div class=\"grid\"><div>"
    );
    out.push_str(&charts::s_curve(
        &[CurvePlan {
            label: plan.label(),
            plan,
        }],
        t,
    ));
    curve_table(out, t, &|s| plan.probability(s));
}

/// The plan of a SimHash run: its distance, and its candidate curve for sets of equal size.
fn simhash_plan(out: &mut String, k: u32, t: f64) {
    let probability = |s: f64| neardup::candidates::simhash_probability(s, k);
    let _ = write!(
        out,
        "<section id=\"plan\"><h2>SimHash plan and candidate curve</h2>\
         <p>Each document has a 64-bit SimHash fingerprint of its shingles, weighted by their \
         counts; two documents become candidates when their fingerprints are at most \
         <b>{k}</b> bits apart, found by tables of permuted fingerprints. For two sets of \
         equal size whose shingles occur once, Jaccard s means each bit differs with \
         probability arccos(2s / (1 + s)) / π; a pair exactly at the threshold {t} is then \
         found with probability <b>{:.3}</b>. Repeated shingles move a pair along this \
         curve, so it is the curve's shape, not a promise for each pair.</p>\
         <div class=\"grid\"><div>",
        probability(t)
    );
    out.push_str(&charts::candidate_curves(
        "SimHash: probability that a pair becomes a candidate, by Jaccard similarity",
        &[(format!("K = {k}"), Box::new(probability))],
        t,
    ));
    curve_table(out, t, &probability);
}

/// The table beside a candidate curve: P(candidate | s) at [`CURVE_TABLE`] and at `t`;
/// closes the section.
fn curve_table(out: &mut String, t: f64, probability: &dyn Fn(f64) -> f64) {
    out.push_str(
        "</div><div><table><thead><tr><th>similarity s</th><th class=\"num\">P(candidate | s)\
         </th></tr></thead><tbody>",
    );
    let mut points = CURVE_TABLE.to_vec();
    if !points.iter().any(|s| (s - t).abs() < 1e-9) {
        points.push(t);
        points.sort_by(f64::total_cmp);
    }
    for s in points {
        let mark = (s - t).abs() < 1e-9;
        let _ = write!(
            out,
            "<tr><td>{}{s}{}</td><td class=\"num\">{:.3}</td></tr>",
            if mark { "<b>" } else { "" },
            if mark { " (threshold)</b>" } else { "" },
            probability(s)
        );
    }
    out.push_str("</tbody></table></div></div></section>");
}

/// A SimHash run's reported pairs by the distance of their fingerprints.
pub fn hamming_section(out: &mut String, data: &ReportData) {
    let total: u64 = data.hamming.iter().sum();
    let _ = write!(
        out,
        "<section id=\"hamming\"><h2>Hamming distances</h2><p>The {} reported pairs (for \
         clusters: each removed document and the document it was kept against) by how many \
         bits of their fingerprints differ.</p>",
        thousands(total)
    );
    out.push_str(&charts::hamming_distances(&data.hamming));
    out.push_str("</section>");
}

pub fn time_section(out: &mut String, data: &ReportData) {
    out.push_str("<section id=\"time\"><h2>Time per stage</h2>");
    if data.timings.is_empty() {
        out.push_str("<p class=\"muted\">No timings.</p></section>");
        return;
    }
    let total: f64 = data.timings.iter().map(|t| t.seconds).sum();
    out.push_str(&charts::timings(&data.timings));
    let _ = write!(
        out,
        "<p class=\"muted\">Sum of the stages: {}.</p></section>",
        seconds(total)
    );
}

/// The evaluation's headline figures: LSH's recall, precision and times, and each method
/// against the labels.
pub fn eval_section(out: &mut String, e: &Evaluation) {
    out.push_str("<section id=\"eval\"><h2>Evaluation</h2>");
    out.push_str(&key_value_table(&eval_metrics(e), true));
    out.push_str("</section>");
}

/// Seconds as the command line's summary writes them: "0.048s", "12.3s".
fn short_seconds(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.3}s")
    } else {
        format!("{s:.1}s")
    }
}

/// The rows of the evaluation table.
fn eval_metrics(e: &Evaluation) -> Vec<(String, String)> {
    let mut metrics = vec![
        ("LSH recall".to_string(), format!("{:.4}", e.recall)),
        ("LSH precision".to_string(), format!("{:.4}", e.precision)),
        (
            "LSH recall over distinct texts".to_string(),
            format!("{:.4}", e.distinct.recall),
        ),
        ("LSH time".to_string(), short_seconds(e.lsh.seconds)),
        (
            "exact join time".to_string(),
            short_seconds(e.exact.seconds),
        ),
    ];
    if let Some(l) = &e.labels {
        for m in &l.methods {
            let name = m.method;
            metrics.extend([
                (
                    format!("{name} label precision"),
                    format!("{:.4}", m.precision),
                ),
                (format!("{name} label recall"), format!("{:.4}", m.recall)),
                (format!("{name} label F1"), format!("{:.4}", m.f1)),
                (
                    format!("{name} adjusted Rand index"),
                    format!("{:.4}", m.adjusted_rand_index),
                ),
            ]);
        }
    }
    metrics
}

pub fn similarity_section(out: &mut String, data: &ReportData) {
    let t = data.threshold;
    let identical = if data.identical_pairs > 0 {
        format!(
            ", plus {} (or links) of identical copies, Jaccard 1, found by the \
             exact-duplicate pre-pass before LSH and shown as a grey bar of their own at 1.0",
            count(data.identical_pairs, "pair", "pairs")
        )
    } else {
        String::new()
    };
    // Repeated shingles counted: the weighted Jaccard of the shingles' counts.
    let (measure, by) = if data.multiset {
        (
            "Exact weighted Jaccard similarity (Σ min / Σ max of the shingles' counts: \
             repeated shingles counted)",
            "weighted Jaccard",
        )
    } else {
        ("Exact Jaccard similarity", "Jaccard similarity")
    };
    let _ = write!(
        out,
        "<section id=\"similarities\"><h2>Similarities</h2><p>{measure} of \
         the {} verified pairs (or cluster links){identical}, and of the {} candidates that \
         verification rejected, in bins of {:.2}.</p><div class=\"grid\"><div><h3>Verified</h3>",
        thousands(data.verified_similarities.iter().sum()),
        thousands(data.rejected_similarities.iter().sum()),
        1.0 / SIMILARITY_BINS as f64
    );
    let panels = [
        (
            "",
            "Verified pairs",
            &data.verified_similarities,
            data.identical_pairs,
        ),
        (
            "</div><div><h3>Rejected candidates</h3>",
            "Rejected candidates",
            &data.rejected_similarities,
            0,
        ),
    ];
    for (i, (head, what, values, identical)) in panels.into_iter().enumerate() {
        out.push_str(head);
        out.push_str(&charts::value_histogram(
            &format!("{what} by {by}"),
            charts::similarity_axis(data.multiset),
            values,
            identical,
            SIMILARITY_BINS,
            t,
            svg::PALETTE[i],
        ));
    }
    out.push_str("</div></div></section>");
}

/// An id as code; short ids never wrap, long ones wrap anywhere.
fn doc_id(id: &str) -> String {
    let class = if id.chars().count() <= 24 {
        " class=\"nw\""
    } else {
        ""
    };
    format!("<code{class}>{}</code>", truncated(id, ID_CHARS))
}

pub fn cluster_section(out: &mut String, data: &ReportData) {
    let bins = histogram::cluster_size_bins(&data.cluster_sizes);
    let _ = write!(
        out,
        "<section id=\"clusters\"><h2>Clusters</h2><p>{} clusters holding {} documents; \
         the largest has {}.</p><div class=\"grid\"><div>",
        thousands(data.cluster_sizes.len() as u64),
        thousands(data.cluster_sizes.iter().map(|&s| s as u64).sum()),
        thousands(data.cluster_sizes.iter().copied().max().unwrap_or(0) as u64)
    );
    if bins.is_empty() {
        out.push_str("<p class=\"muted\">No cluster sizes.</p>");
    } else {
        out.push_str(&charts::cluster_sizes(&bins));
    }
    out.push_str(
        "</div><div><table><thead><tr><th>size</th><th class=\"num\">clusters</th>\
         <th class=\"num\">documents</th></tr></thead><tbody>",
    );
    for b in &bins {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            b.label(),
            thousands(b.clusters),
            thousands(b.documents)
        );
    }
    out.push_str("</tbody></table></div></div>");
    if !data.largest_clusters.is_empty() {
        let shown = data.largest_clusters.len().min(MAX_CLUSTERS);
        let _ = write!(
            out,
            "<h3>The {shown} largest clusters</h3><div id=\"largest\">\
             <button data-open=\"1\" data-target=\"#largest\">expand all</button>\
             <button data-open=\"0\" data-target=\"#largest\">collapse all</button>"
        );
        for (i, c) in data.largest_clusters.iter().take(MAX_CLUSTERS).enumerate() {
            cluster_card(out, c, i < OPEN_CARDS / 2);
        }
        out.push_str("</div>");
    }
    out.push_str("</section>");
}

fn cluster_card(out: &mut String, c: &ClusterView, open: bool) {
    let _ = write!(
        out,
        "<details class=\"cluster\"{}><summary>{} documents · kept {}</summary>\
         <table class=\"members\"><thead><tr><th>role</th><th>id</th>\
         <th class=\"num\">Jaccard to kept</th><th>text</th></tr></thead><tbody>\
         <tr class=\"kept\"><td>kept</td><td>{}</td><td class=\"num\">–</td><td>{}</td></tr>",
        if open { " open" } else { "" },
        thousands(c.size as u64),
        doc_id(&c.kept.id),
        doc_id(&c.kept.id),
        truncated(&c.kept.text, TEXT_CHARS)
    );
    for d in c.duplicates.iter().take(MAX_DUPLICATES) {
        let _ = write!(
            out,
            "<tr><td>duplicate</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            doc_id(&d.doc.id),
            similarity(d.jaccard),
            truncated(&d.doc.text, TEXT_CHARS)
        );
    }
    out.push_str("</tbody></table>");
    let shown = 1 + c.duplicates.len().min(MAX_DUPLICATES);
    if c.size > shown {
        let _ = write!(
            out,
            "<p class=\"muted\">… and {} more documents not shown.</p>",
            thousands((c.size - shown) as u64)
        );
    }
    out.push_str("</details>");
}

pub fn pair_section(out: &mut String, data: &ReportData) {
    let _ = write!(
        out,
        "<section id=\"pairs\"><h2>Sample pairs</h2><p>{}, by increasing similarity, \
         side by side. Words in the longest common word sequence are plain; \
         <mark class=\"a\">words only in the left text</mark> and \
         <mark class=\"b\">words only in the right text</mark> are highlighted. A word is a \
         word, a number or a punctuation mark; in Chinese, Japanese and Thai, written without \
         spaces, a character. Texts are shown whole up to {} words or {} characters; where \
         one is cut, the place and what was left out are marked.</p>",
        count(
            data.sample_pairs.len().min(MAX_PAIRS) as u64,
            "pair",
            "pairs"
        ),
        thousands(diff::MAX_WORDS as u64),
        thousands(diff::MAX_CHARS as u64)
    );
    if data.sample_pairs.is_empty() {
        out.push_str("<p class=\"muted\">No pairs in the sample.</p></section>");
        return;
    }
    out.push_str(
        "<button data-open=\"1\" data-target=\"#pairs\">expand all</button>\
         <button data-open=\"0\" data-target=\"#pairs\">collapse all</button>",
    );
    let key = |p: &PairView| {
        p.containment
            .or(p.jaccard)
            .or(p.estimate)
            .unwrap_or(f64::NAN)
    };
    let mut pairs: Vec<&PairView> = data.sample_pairs.iter().take(MAX_PAIRS).collect();
    pairs.sort_by(|x, y| key(x).total_cmp(&key(y)));
    for (i, p) in pairs.iter().enumerate() {
        pair_card(out, p, i < OPEN_CARDS);
    }
    out.push_str("</section>");
}

/// "Jaccard 0.912 · estimate 0.906" ("containment 1.000 · Jaccard 0.360" for a contained
/// pair), leaving out what the pair does not have (exact
/// verification keeps no estimate; triage accepts some pairs on the estimate alone).
fn pair_similarity(p: &PairView) -> String {
    let mut parts = Vec::new();
    if let Some(c) = p.containment {
        parts.push(format!("containment {}", similarity(Some(c))));
    }
    if p.jaccard.is_some() || p.estimate.is_none() {
        parts.push(format!("Jaccard {}", similarity(p.jaccard)));
    }
    if p.estimate.is_some() {
        parts.push(format!("estimate {}", similarity(p.estimate)));
    }
    parts.join(" · ")
}

fn pair_card(out: &mut String, p: &PairView, open: bool) {
    let d = diff::word_diff(&p.a.text, &p.b.text);
    let _ = write!(
        out,
        "<details class=\"pair\"{}><summary><span class=\"sim\">{}</span> {} {} {} \
         <span class=\"muted\">· {} shared words of {} and {}</span></summary>\
         <div class=\"cols\">",
        if open { " open" } else { "" },
        pair_similarity(p),
        doc_id(&p.a.id),
        // A contained pair reads "fragment in page"; other pairs have no direction.
        if p.containment.is_some() { "in" } else { "↔" },
        doc_id(&p.b.id),
        thousands(d.shared_words as u64),
        thousands((d.a_words + d.a_cut.words) as u64),
        thousands((d.b_words + d.b_cut.words) as u64)
    );
    for (doc, segs, cut, class) in [(&p.a, &d.a, d.a_cut, "a"), (&p.b, &d.b, d.b_cut, "b")] {
        let _ = write!(out, "<div class=\"doc\">{}<p>", doc_id(&doc.id));
        for (i, s) in segs.iter().enumerate() {
            if i > 0 && s.space_before {
                out.push(' ');
            }
            if s.shared {
                escape_into(out, &s.text);
            } else {
                let _ = write!(out, "<mark class=\"{class}\">");
                escape_into(out, &s.text);
                out.push_str("</mark>");
            }
        }
        if segs.is_empty() {
            out.push_str("<span class=\"muted\">(empty)</span>");
        }
        if cut.words > 0 {
            let _ = write!(
                out,
                " \u{2026} <span class=\"cut\">(cut here: {} more words, {} characters, \
                 not shown)</span>",
                thousands(cut.words as u64),
                thousands(cut.chars as u64)
            );
        } else if !cut.is_none() {
            let _ = write!(
                out,
                " <span class=\"cut\">(words over {} characters shortened at \u{2026}: {} \
                 characters not shown)</span>",
                diff::MAX_WORD_CHARS,
                thousands(cut.chars as u64)
            );
        }
        out.push_str("</p></div>");
    }
    out.push_str("</div></details>");
}
