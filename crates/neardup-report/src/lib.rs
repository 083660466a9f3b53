#![deny(missing_docs)]
//! The self-contained HTML report of a neardup run: one page, no I/O of its own.
//!
//! The caller fills a [`ReportData`] with typed values (parameters, counts, timings, the
//! band [`Plan`] and threshold, similarities, clusters, a sample of pairs, and for an
//! evaluation the core's [`Evaluation`]) and [`render`] turns it into a single document:
//! inline CSS, inline SVG charts drawn by hand ([`svg`], [`charts`]), a few lines of
//! inline JavaScript (expand and collapse all), no network access, no external fonts. All
//! user text is escaped.
//!
//! The page stays small whatever the input: similarities are binned ([`histogram`]), texts
//! are truncated, at most [`MAX_CLUSTERS`] clusters with [`MAX_DUPLICATES`] duplicates each
//! and [`MAX_PAIRS`] pairs are shown, and the word diffs of pairs are bounded ([`diff`]).
//!
//! ```
//! use neardup::measure::plan::Plan;
//! use neardup_report::histogram::similarity_bins;
//! use neardup_report::{render, Count, DocView, PairView, ReportData};
//!
//! let data = ReportData {
//!     title: "neardup pairs listings.jsonl".into(),
//!     threshold: Some(0.8),
//!     plan: Some(Plan::new(16, 8)),
//!     counts: vec![Count::new("pairs", 1)],
//!     verified_similarities: similarity_bins(&[0.9], neardup::run::SIMILARITY_BINS),
//!     sample_pairs: vec![PairView {
//!         a: DocView { id: "1".into(), text: "red bike for sale".into() },
//!         b: DocView { id: "2".into(), text: "red bike for sale!".into() },
//!         jaccard: Some(0.9),
//!         estimate: None,
//!         containment: None,
//!     }],
//!     ..ReportData::default()
//! };
//! let html = render(&data);
//! assert!(html.starts_with("<!DOCTYPE html>"));
//! assert!(html.contains("16 bands × 8 rows"));
//! assert!(html.contains("<b>0.947</b>")); // P(0.8) for 16 × 8
//! ```

pub mod charts;
mod containment;
pub mod decontamination;
pub mod diff;
pub mod example;
pub mod histogram;
pub mod html;
mod sections;
pub mod svg;

use std::fmt::Write as _;

pub use neardup::candidates::{EnsemblePlan, PartitionCount};
pub use neardup::measure::evaluation::Evaluation;
pub use neardup::measure::plan::Plan;

use html::escape;
use sections::{
    cluster_section, eval_section, hamming_section, pair_section, plan_section, run_section,
    similarity_section, time_section,
};

/// Largest clusters shown.
pub const MAX_CLUSTERS: usize = 20;
/// Duplicates shown per cluster.
pub const MAX_DUPLICATES: usize = 20;
/// Sample pairs shown.
pub const MAX_PAIRS: usize = 100;
/// Characters of a document's text shown in a cluster.
pub const TEXT_CHARS: usize = 400;
/// Characters of an id shown.
pub const ID_CHARS: usize = 120;
/// Bins of the similarity histograms over [0, 1].
pub const SIMILARITY_BINS: usize = 50;

/// A document as shown: its id and text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DocView {
    /// The document's id, as the user knows it.
    pub id: String,
    /// Its text (cut for display by the report).
    pub text: String,
}

/// A pair of documents with their exact Jaccard similarity and MinHash estimate.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairView {
    /// The first document.
    pub a: DocView,
    /// The second document.
    pub b: DocView,
    /// Exact Jaccard, if computed.
    pub jaccard: Option<f64>,
    /// The MinHash estimate, if kept.
    pub estimate: Option<f64>,
    /// A containment run's |A ∩ B| / |A|, `a` the contained document and `b` the one
    /// containing it; None in other runs.
    pub containment: Option<f64>,
}

/// A duplicate in a cluster, with its Jaccard similarity to the kept document.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DuplicateView {
    /// The duplicate.
    pub doc: DocView,
    /// Exact Jaccard to the kept document, if computed.
    pub jaccard: Option<f64>,
}

/// A cluster: the kept document and (some of) its duplicates; `size` counts all members,
/// also those not passed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterView {
    /// The document kept.
    pub kept: DocView,
    /// Some or all of its duplicates (the first [`MAX_DUPLICATES`] are shown).
    pub duplicates: Vec<DuplicateView>,
    /// Members of the cluster, the kept document included.
    pub size: usize,
}

/// A named count, shown as a card ("pairs: 1,234") or a table row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Count {
    /// What is counted.
    pub name: String,
    /// How many.
    pub value: u64,
}

impl Count {
    /// `name`: `value`.
    pub fn new(name: impl Into<String>, value: u64) -> Count {
        Count {
            name: name.into(),
            value,
        }
    }
}

/// A run parameter as shown: its name and its value as text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parameter {
    /// The parameter's name.
    pub name: String,
    /// Its value, as the user would write it.
    pub value: String,
}

impl Parameter {
    /// `name` = `value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Parameter {
        Parameter {
            name: name.into(),
            value: value.into(),
        }
    }
}

/// Seconds one stage took.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timing {
    /// The stage's name.
    pub stage: String,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl Timing {
    /// `stage` took `seconds`.
    pub fn new(stage: impl Into<String>, seconds: f64) -> Timing {
        Timing {
            stage: stage.into(),
            seconds,
        }
    }
}

/// Everything a report shows. Lists are shown in the order given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReportData {
    /// E.g. "neardup clusters testdata/pypi-summaries.jsonl".
    pub title: String,
    /// A timestamp or version string.
    pub generated: String,
    /// shingle, normalize, num_perm, seed, threshold, bands, rows, verify, keep, exact, threads…
    pub parameters: Vec<Parameter>,
    /// The similarity threshold, marked on the charts.
    pub threshold: Option<f64>,
    /// The band plan, whose S-curve is drawn at the threshold; None in exact mode (or
    /// without a threshold), which the plan section then explains.
    pub plan: Option<Plan>,
    /// read, kept, removed, skipped, candidates, verified, pairs, clusters…
    pub counts: Vec<Count>,
    /// Skipped records by reason code.
    pub skipped: Vec<Count>,
    /// Seconds per stage.
    pub timings: Vec<Timing>,
    /// Jaccard of the verified pairs or links, counted in [`neardup::run::SIMILARITY_BINS`]
    /// bins (never listed).
    pub verified_similarities: Vec<u64>,
    /// Pairs (or cluster links) between identical copies: Jaccard 1, found by the
    /// exact-duplicate pre-pass rather than verified, so not in `verified_similarities`.
    /// The verified histogram shows them as a bar of their own at 1.0.
    pub identical_pairs: u64,
    /// Jaccard of the candidates rejected by verification, counted like
    /// `verified_similarities`.
    pub rejected_similarities: Vec<u64>,
    /// Size of every cluster.
    pub cluster_sizes: Vec<usize>,
    /// The largest clusters, largest first (the first [`MAX_CLUSTERS`] are shown).
    pub largest_clusters: Vec<ClusterView>,
    /// A sample of pairs over the similarity range (shown by increasing similarity).
    pub sample_pairs: Vec<PairView>,
    /// LSH against the exact join (and labels), for `neardup eval`.
    pub eval: Option<Evaluation>,
    /// A SimHash run's Hamming distance K: the plan section shows SimHash's curve
    /// instead of a band plan's.
    pub simhash: Option<u32>,
    /// Repeated shingles were counted (`--multiset`): every similarity is the weighted
    /// Jaccard Σ min / Σ max of the shingles' counts, and the histograms say so.
    pub multiset: bool,
    /// A SimHash run's reported pairs (clusters: removed documents) by the distance of
    /// their fingerprints, `hamming[d]` at distance d; empty otherwise.
    pub hamming: Vec<u64>,
    /// A containment run's own contents: its plan section and its histograms replace the
    /// band plan's and the similarity histograms.
    pub containment: Option<ContainmentData>,
}

/// What a containment run (`--measure containment`) shows of its own.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContainmentData {
    /// The search's plan; None for the exact containment join (recall 1, no bands).
    pub plan: Option<EnsemblePlan>,
    /// The run's documents by size partition ([`EnsemblePlan::partitions_of`]).
    pub partitions: Vec<PartitionCount>,
    /// Containment of the reported pairs, counted in [`neardup::run::SIMILARITY_BINS`] bins.
    pub containments: Vec<u64>,
    /// Jaccard of the same pairs, counted alike.
    pub jaccards: Vec<u64>,
    /// Of those pairs, the ones whose Jaccard is below the threshold: what a Jaccard
    /// search at the same threshold would miss.
    pub below_jaccard_threshold: u64,
    /// One-row buckets passed over as too large (`Stats::skipped_buckets`).
    pub skipped_buckets: u64,
}

const STYLE: &str = "\
*{box-sizing:border-box}\
body{margin:0;background:#f6f7f9;color:#1f2937;font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\
header{background:#1e3a8a;color:#fff;padding:18px 28px}\
header h1{margin:0;font-size:22px;word-break:break-word}\
header p{margin:4px 0 0;opacity:.85;font-size:13px}\
nav{background:#fff;border-bottom:1px solid #d1d5db;padding:8px 28px;font-size:14px;position:sticky;top:0;z-index:1}\
nav a{margin-right:16px;color:#1e40af;text-decoration:none}\
main{max-width:1240px;margin:0 auto;padding:8px 20px 40px}\
section{background:#fff;border:1px solid #e5e7eb;border-radius:8px;margin:16px 0;padding:14px 20px}\
h2{font-size:18px;margin:2px 0 10px}h3{font-size:15px;margin:12px 0 6px}\
.grid{display:flex;flex-wrap:wrap;gap:20px;align-items:flex-start}\
.grid>div{flex:1 1 520px;min-width:0}\
table{border-collapse:collapse;font-size:14px}\
th,td{border-bottom:1px solid #e5e7eb;padding:4px 10px;text-align:left;vertical-align:top}\
thead th{background:#f3f4f6}\
.num{text-align:right;font-variant-numeric:tabular-nums}\
.kv th{font-weight:600;color:#374151}\
.cards{display:flex;flex-wrap:wrap;gap:10px;margin-bottom:12px}\
.card{border:1px solid #dbeafe;background:#eff6ff;border-radius:6px;padding:6px 14px;min-width:110px}\
.card b{display:block;font-size:20px;font-variant-numeric:tabular-nums}\
.card span{font-size:12px;color:#4b5563;text-transform:uppercase;letter-spacing:.03em}\
.muted,.cut{color:#6b7280;font-size:13px}\
code{font:13px ui-monospace,'DejaVu Sans Mono',monospace;background:#f3f4f6;padding:0 3px;border-radius:3px;overflow-wrap:anywhere}\
code.nw{white-space:nowrap}\
details{border:1px solid #e5e7eb;border-radius:6px;margin:8px 0;padding:6px 12px}\
summary{cursor:pointer;font-weight:600}\
.sim{display:inline-block;min-width:10em;color:#1e40af;font-variant-numeric:tabular-nums}\
.cols{display:grid;grid-template-columns:1fr 1fr;gap:14px;margin-top:8px}\
.doc{border-left:3px solid #cbd5e1;padding:2px 10px;word-break:break-word;min-width:0}\
.doc p{margin:4px 0}\
mark.a{background:#fecaca;color:#7f1d1d}mark.b{background:#bbf7d0;color:#14532d}\
.members td:nth-child(4){word-break:break-word}\
.members tr.kept{background:#f0fdf4}\
button{font:inherit;font-size:13px;margin:0 6px 6px 0;padding:3px 10px;border:1px solid #9ca3af;border-radius:5px;background:#fff;cursor:pointer}\
footer{text-align:center;color:#6b7280;font-size:12px;padding:10px}\
";

/// Expand/collapse-all buttons; marks the page as scripted last, so a test can tell the
/// script ran to its end without an error.
const SCRIPT: &str = "\
(function(){\
var bs=document.querySelectorAll('button[data-open]');\
for(var i=0;i<bs.length;i++){bs[i].addEventListener('click',function(e){\
var b=e.currentTarget,open=b.getAttribute('data-open')==='1';\
var ds=document.querySelectorAll(b.getAttribute('data-target')+' details');\
for(var j=0;j<ds.length;j++){ds[j].open=open;}});}\
document.documentElement.setAttribute('data-report-ok','1');\
})();";

/// The whole HTML document for `data`.
pub fn render(data: &ReportData) -> String {
    let mut out = String::with_capacity(96 * 1024);
    let title = escape(&data.title);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{title}</title><style>{STYLE}{}</style></head><body>\
         <header><h1>{title}</h1><p>{}</p></header>",
        svg::CHART_STYLE,
        escape(&data.generated)
    );
    let has_clusters = !data.cluster_sizes.is_empty() || !data.largest_clusters.is_empty();
    let plan = if data.containment.is_some() {
        "Containment plan"
    } else if data.simhash.is_some() {
        "SimHash plan"
    } else {
        "LSH plan"
    };
    let mut nav: Vec<(&str, &str)> = vec![("run", "Run"), ("plan", plan), ("time", "Time")];
    if data.eval.is_some() {
        nav.push(("eval", "Evaluation"));
    }
    if data.containment.is_some() {
        nav.push(("containment", "Containment"));
    } else {
        nav.push(("similarities", "Similarities"));
    }
    if !data.hamming.is_empty() {
        nav.push(("hamming", "Hamming distances"));
    }
    if has_clusters {
        nav.push(("clusters", "Clusters"));
    }
    nav.push(("pairs", "Sample pairs"));
    out.push_str("<nav>");
    for (id, name) in &nav {
        let _ = write!(out, "<a href=\"#{id}\">{name}</a>");
    }
    out.push_str("</nav><main>");

    run_section(&mut out, data);
    match &data.containment {
        Some(c) => containment::plan_section(&mut out, c, data.threshold),
        None => plan_section(&mut out, data),
    }
    time_section(&mut out, data);
    if let Some(eval) = &data.eval {
        eval_section(&mut out, eval);
    }
    match &data.containment {
        Some(c) => containment::value_section(&mut out, c, data.threshold),
        None => similarity_section(&mut out, data),
    }
    if !data.hamming.is_empty() {
        hamming_section(&mut out, data);
    }
    if has_clusters {
        cluster_section(&mut out, data);
    }
    pair_section(&mut out, data);
    let _ = writeln!(
        out,
        "</main><footer>neardup report · {}</footer><script>{SCRIPT}</script></body></html>",
        escape(&data.generated)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simhash_runs_show_their_curve_and_distances() {
        let mut data = example::data(1_000, 10);
        data.plan = None;
        data.simhash = Some(6);
        data.hamming = vec![40, 0, 7, 3];
        let html = render(&data);
        assert!(html.contains("SimHash plan and candidate curve"));
        assert!(html.contains("at most <b>6</b> bits apart"));
        // The curve at the threshold, in the text and the legend.
        let at = format!("{:.3}", neardup::candidates::simhash_probability(0.8, 6));
        assert!(html.contains(&format!("<b>{at}</b>")), "{at}");
        assert!(html.contains(&format!("K = 6: P(0.8) = {at}")));
        assert!(!html.contains("bands ×"), "no band plan in a SimHash run");
        // The distances: 50 pairs, a column per distance, the empty one without a bar.
        assert!(html.contains("<h2>Hamming distances</h2><p>The 50 reported pairs"));
        assert!(html.contains("40 pairs 0 bits apart") && html.contains("3 pairs 3 bits apart"));
        assert!(!html.contains("0 pairs 1 bits apart"));
        assert!(html.contains("href=\"#hamming\""));
        // A MinHash run has neither.
        let plain = render(&example::data(1_000, 10));
        assert!(!plain.contains("SimHash") && !plain.contains("id=\"hamming\""));
    }

    /// A containment run of a fragment (hostile text included) in a page.
    fn containment_data(plan: Option<EnsemblePlan>) -> ReportData {
        let fine = |v: &[f64]| histogram::similarity_bins(v, neardup::run::SIMILARITY_BINS);
        let mut data = example::data(0, 0);
        data.plan = None;
        data.threshold = Some(0.8);
        data.sample_pairs = vec![PairView {
            a: DocView {
                id: "<b>brief</b>".into(),
                text: "<script>alert(1)</script> <img src=x onerror=alert(2)> markets".into(),
            },
            b: DocView {
                id: "digest".into(),
                text: "weather: rain. <script>alert(1)</script> markets closed higher. sport"
                    .into(),
            },
            jaccard: Some(0.36),
            estimate: None,
            containment: Some(1.0),
        }];
        data.containment = Some(ContainmentData {
            plan,
            partitions: EnsemblePlan::partitions_of([20, 24, 90, 300]),
            containments: fine(&[1.0, 0.9, 0.85]),
            jaccards: fine(&[0.36, 0.3, 0.82]),
            below_jaccard_threshold: 2,
            skipped_buckets: 1_234,
        });
        data
    }

    #[test]
    fn containment_runs_show_their_plan_values_and_pairs() {
        let plan = EnsemblePlan::new(0.8, 128);
        let html = render(&containment_data(Some(plan)));
        // The plan: partitions 16–31 (2 documents), 64–127 and 256–511 (one each).
        assert!(html.contains("<h2>Containment plan</h2>"));
        assert!(html.contains("href=\"#plan\">Containment plan</a>"));
        assert!(
            html.contains("<tr><td>16–31</td><td class=\"num\">2</td><td class=\"num\">20</td>")
        );
        assert!(
            html.contains("<tr><td>256–511</td><td class=\"num\">1</td><td class=\"num\">300</td>")
        );
        // Query 20 against the largest partition: the values `neardup plan` prints.
        let r = plan.row(20, 8);
        let row = format!(
            "<tr><td class=\"num\">20</td><td>256–511</td><td class=\"num\">{:.4}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{:.3}</td></tr>",
            r.jaccard_floor, r.rows, r.recall
        );
        assert!(html.contains(&row), "{row}");
        assert_eq!(
            r.rows, 1,
            "a query 25 times smaller than its container gets one row"
        );
        // Three query sizes: 3 + 2 + 1 rows against the partitions at or above their own.
        assert_eq!(html.matches("<tr><td class=\"num\">").count(), 6);
        // The values: three pairs, two of them below t as Jaccard, bars in both charts.
        assert!(html.contains("The 3 reported pairs by their containment"));
        assert!(html.contains("<b>2</b> of them have a Jaccard below 0.8"));
        assert!(html.contains("containment |A ∩ B| / |A|"));
        assert!(html.contains("0.84–0.86: 1 pair<") && html.contains("0.36–0.38: 1 pair<"));
        assert!(html.contains("<b>1,234</b> one-row buckets of more than 1,024"));
        // No similarity histograms of a Jaccard run, and no band plan.
        assert!(!html.contains("id=\"similarities\"") && !html.contains("bands ×"));
        assert!(html.contains("href=\"#containment\""));
        // The pair: contained first, both values, the text escaped.
        assert!(html.contains(
            "<span class=\"sim\">containment 1.000 · Jaccard 0.360</span> \
             <code class=\"nw\">&lt;b&gt;brief&lt;/b&gt;</code> in <code class=\"nw\">digest</code>"
        ));
        assert_eq!(html.matches("<script").count(), 1);
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        // The exact join: no rows per band; no skipped buckets, no notice.
        let mut exact = containment_data(None);
        exact.containment.as_mut().unwrap().skipped_buckets = 0;
        let html = render(&exact);
        assert!(html.contains("Exact containment join") && html.contains("recall 1"));
        assert!(!html.contains("rows per band") && !html.contains("one-row buckets"));
        assert!(
            html.contains("<tr><td>64–127</td><td class=\"num\">1</td><td class=\"num\">90</td>")
        );
    }

    #[test]
    fn injected_markup_is_inert() {
        let containment = containment_data(Some(EnsemblePlan::new(0.8, 128)));
        for data in [example::data(1_000, 10), containment] {
            only_the_reports_own_markup(&render(&data));
        }
    }

    fn only_the_reports_own_markup(html: &str) {
        // Only the report's own script element, and only the report's own kinds of tags.
        assert_eq!(html.matches("<script").count(), 1, "{html}");
        assert!(html.contains("&lt;script&gt;") && html.contains("&lt;img src=x"));
        assert!(html.contains("&lt;/title&gt;"));
        let allowed = [
            "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "p",
            "nav", "a", "main", "section", "div", "b", "span", "table", "thead", "tbody", "tr",
            "th", "td", "svg", "g", "line", "text", "path", "rect", "circle", "sup", "details",
            "summary", "code", "mark", "button", "footer", "script",
        ];
        let markup = &html[..html.find("<script>").unwrap()];
        for (at, _) in markup.match_indices('<') {
            let rest = &markup[at + 1..];
            let name: String = rest
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            if !rest.starts_with("!DOCTYPE") {
                assert!(allowed.contains(&name.as_str()), "tag {name:?} at {at}");
            }
        }
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.trim_end().ends_with("</html>"));
    }

    #[test]
    fn multiset_runs_name_the_weighted_jaccard() {
        let mut data = example::data(1_000, 3);
        let sets = render(&data);
        assert!(sets.contains("Verified pairs by Jaccard similarity"));
        assert!(!sets.contains("weighted"));
        data.multiset = true;
        let html = render(&data);
        for needle in [
            "Exact weighted Jaccard similarity (Σ min / Σ max of the shingles' counts",
            "Verified pairs by weighted Jaccard",
            "Rejected candidates by weighted Jaccard",
            "weighted Jaccard Σ min / Σ max of counts",
        ] {
            assert!(html.contains(needle), "missing {needle}");
        }
        assert!(!html.contains("pairs by Jaccard similarity"));
    }

    #[test]
    fn sections_and_contents() {
        let data = example::data(10_000, 12);
        let html = render(&data);
        for needle in [
            "id=\"run\"",
            "id=\"plan\"",
            "id=\"time\"",
            "id=\"eval\"",
            "id=\"similarities\"",
            "id=\"clusters\"",
            "id=\"pairs\"",
            "threshold t = 0.8",
            "Jaccard similarity",
            ">pairs<",
            "cluster size (documents)",
            "time (seconds)",
            "16 bands × 8 rows",
            "<b>0.947</b>",
            "<mark class=\"a\">",
            "<mark class=\"b\">",
            "Jaccard 0.",
            "estimate 0.",
            "identical copies (J = 1)",
            "去<mark class=\"a\">公园</mark>散步",
            "<span class=\"sim\">Jaccard 0.810</span>",
        ] {
            assert!(html.contains(needle), "missing {needle}");
        }
        // No external resources.
        for bad in ["http://", "https://", " src=\"", "@import", "url("] {
            let outside_svg_ns = html.replace("http://www.w3.org/2000/svg", "");
            assert!(!outside_svg_ns.contains(bad), "found {bad}");
        }
    }

    #[test]
    fn exact_mode_and_empty_data() {
        let data = ReportData {
            title: "neardup pairs --exact".into(),
            parameters: vec![Parameter::new("threshold", "0.7")],
            threshold: Some(0.7),
            ..ReportData::default()
        };
        let html = render(&data);
        assert!(html.contains("Exact mode"));
        assert!(html.contains("t = 0.7"));
        assert!(!html.contains("id=\"clusters\""));
        assert!(html.contains("No pairs in the sample."));
        assert!(html.contains("No record was skipped."));
    }

    #[test]
    fn a_million_similarities_make_a_small_report() {
        let data = example::data(1_000_000, 50);
        assert_eq!(data.verified_similarities.iter().sum::<u64>(), 1_000_000);
        assert_eq!(data.sample_pairs.len(), 50);
        let html = render(&data);
        println!("report with a million similarities: {} bytes", html.len());
        assert!(html.len() < 300_000, "{} bytes", html.len());
    }

    #[test]
    fn long_texts_are_cut_and_caps_hold() {
        let mut data = example::data(100, 0);
        let huge = "<b>&</b> ".repeat(5_000);
        data.sample_pairs = (0..150)
            .map(|i| PairView {
                a: DocView {
                    id: format!("a{i}"),
                    text: huge.clone(),
                },
                b: DocView {
                    id: "x".repeat(10_000),
                    text: huge.clone(),
                },
                jaccard: Some(1.0),
                estimate: Some(1.0),
                containment: None,
            })
            .collect();
        let html = render(&data);
        assert_eq!(html.matches("class=\"pair\"").count(), MAX_PAIRS);
        assert!(html.len() < 2_000_000, "{} bytes", html.len());
        assert!(html.contains("(cut here: "));
        assert!(html.contains(" more words, "));
    }

    #[test]
    fn no_estimate_column_without_estimates() {
        let mut data = example::data(10, 3);
        for p in &mut data.sample_pairs {
            p.estimate = None;
        }
        let html = render(&data);
        assert!(!html.contains("estimate"), "an estimate shown");
        assert!(html.contains("Jaccard 0."));
        // Triage: accepted on the estimate, no exact Jaccard.
        data.sample_pairs[0].jaccard = None;
        data.sample_pairs[0].estimate = Some(0.93);
        let html = render(&data);
        assert!(html.contains("<span class=\"sim\">estimate 0.930</span>"));
    }

    #[test]
    fn identical_copies_show_in_the_verified_histogram() {
        let mut data = example::data(100, 3);
        data.identical_pairs = 1234;
        let html = render(&data);
        assert!(html.contains("1,234 pairs (or links) of identical copies"));
        assert!(html.contains("identical copies (J = 1): 1,234"));
    }

    #[test]
    fn unspaced_texts_are_diffed_by_character_and_shown_whole() {
        let mut data = example::data(10, 0);
        data.sample_pairs = vec![PairView {
            a: DocView {
                id: "zh1".into(),
                text: "今天天气很好，我们一起去公园散步。".into(),
            },
            b: DocView {
                id: "zh2".into(),
                text: "今天天气很好，我们一起去湖边散步。".into(),
            },
            jaccard: Some(0.8),
            estimate: None,
            containment: None,
        }];
        let html = render(&data);
        assert!(html.contains("今天天气很好，我们一起去<mark class=\"a\">公园</mark>散步。"));
        assert!(html.contains("<mark class=\"b\">湖边</mark>"));
        assert!(!html.contains("cut here"));
    }
}
