//! The sections of a containment run (`--measure containment`): its plan (size partitions,
//! rows per band, the chance of finding a pair at the threshold) and the containment and
//! Jaccard of the pairs it found. Its sample pairs are drawn by the common pair section.

use std::fmt::Write as _;

use neardup::candidates::{
    EnsemblePlan, EnsembleRow, PartitionCount, ENSEMBLE_RECALL, MAX_ONE_ROW_BUCKET,
};

use super::html::thousands;
use super::{charts, svg, ContainmentData, SIMILARITY_BINS};

/// The plan: the exact join's promise, or the ensemble's partitions and what each query
/// size gets in each of them.
pub fn plan_section(out: &mut String, c: &ContainmentData, threshold: Option<f64>) {
    out.push_str("<section id=\"plan\"><h2>Containment plan</h2>");
    let t = threshold.map_or_else(|| "t".to_string(), |t| t.to_string());
    let Some(plan) = c.plan else {
        let _ = write!(
            out,
            "<p>Exact containment join: every document contained at {t} or more \
             (|A ∩ B| / |A|, A the smaller) in a larger one is found, by prefix filtering \
             with the rarest tokens first; there are no bands (recall 1).</p>"
        );
        partition_table(out, &c.partitions);
        out.push_str("</section>");
        return;
    };
    let _ = write!(
        out,
        "<p>LSH Ensemble search at containment {t} (|A ∩ B| / |A|, A the smaller), {} \
         permutations. Documents are partitioned by set size in powers of two; a query of a \
         shingles looks in each partition j with the rows per band (1, 2, 4 or 8) that find a \
         pair at containment {t} there with probability {ENSEMBLE_RECALL} when one of them \
         can. The partition's worst case is a containing set of its largest size u, where the \
         pair's Jaccard is only t·a / (a + u − t·a). Every candidate is verified exactly \
         (precision 1).</p><div class=\"grid\"><div><h3>Documents by size partition</h3>",
        plan.num_perm()
    );
    partition_table(out, &c.partitions);
    out.push_str(
        "</div><div><h3>Rows per band and P(found at t), by query size</h3><p class=\"muted\">\
         Each partition's smallest document as the query, against its own partition and \
         every larger one of the run.</p>",
    );
    row_table(out, &query_rows(&plan, &c.partitions));
    out.push_str("</div></div></section>");
}

/// The run's partitions: their size ranges, documents and smallest documents.
fn partition_table(out: &mut String, partitions: &[PartitionCount]) {
    if partitions.is_empty() {
        out.push_str("<p class=\"muted\">No document has shingles.</p>");
        return;
    }
    out.push_str(
        "<table><thead><tr><th>partition (shingles)</th><th class=\"num\">documents</th>\
         <th class=\"num\">smallest</th></tr></thead><tbody>",
    );
    for p in partitions {
        let _ = write!(
            out,
            "<tr><td>{}–{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            thousands(1u64 << p.partition),
            thousands(EnsemblePlan::upper(p.partition) as u64),
            thousands(p.documents),
            thousands(p.smallest as u64)
        );
    }
    out.push_str("</tbody></table>");
}

/// Each partition's smallest size as a query against its own partition and every larger
/// one present: the pairs this run could have.
fn query_rows(plan: &EnsemblePlan, partitions: &[PartitionCount]) -> Vec<EnsembleRow> {
    partitions
        .iter()
        .flat_map(|q| {
            partitions
                .iter()
                .filter(move |p| p.partition >= q.partition)
                .map(move |p| plan.row(q.smallest, p.partition))
        })
        .collect()
}

/// The rows as `neardup plan --measure containment` prints them.
fn row_table(out: &mut String, rows: &[EnsembleRow]) {
    out.push_str(
        "<table><thead><tr><th class=\"num\">query (shingles)</th><th>in partition</th>\
         <th class=\"num\">least Jaccard</th><th class=\"num\">rows per band</th>\
         <th class=\"num\">P(found at t)</th></tr></thead><tbody>",
    );
    for r in rows {
        let _ = write!(
            out,
            "<tr><td class=\"num\">{}</td><td>{}–{}</td><td class=\"num\">{:.4}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{:.3}</td></tr>",
            thousands(r.query as u64),
            thousands(r.lower() as u64),
            thousands(r.upper() as u64),
            r.jaccard_floor,
            r.rows,
            r.recall
        );
    }
    out.push_str("</tbody></table>");
}

/// The pairs' containment and their Jaccard side by side: how far below the threshold
/// Jaccard puts fragments of longer documents.
pub fn value_section(out: &mut String, c: &ContainmentData, threshold: Option<f64>) {
    let pairs: u64 = c.containments.iter().sum();
    let t = threshold.map_or_else(|| "the threshold".to_string(), |t| t.to_string());
    let _ = write!(
        out,
        "<section id=\"containment\"><h2>Containment and Jaccard</h2><p>The {} reported \
         pairs by their containment |A ∩ B| / |A| (A the contained document) and by the \
         Jaccard similarity of the same pairs. <b>{}</b> of them have a Jaccard below {t}: a \
         Jaccard search at the same threshold would miss them.</p>",
        thousands(pairs),
        thousands(c.below_jaccard_threshold)
    );
    if c.skipped_buckets > 0 {
        let _ = write!(
            out,
            "<p><b>{}</b> one-row buckets of more than {} documents were passed over (a \
             minimum hash most documents share tells nothing of which ones share text); pairs \
             are looked for in their other bands, and `neardup eval --measure containment` \
             measures what this costs in recall.</p>",
            thousands(c.skipped_buckets),
            thousands(MAX_ONE_ROW_BUCKET as u64)
        );
    }
    out.push_str("<div class=\"grid\"><div><h3>Containment</h3>");
    out.push_str(&charts::containment_histogram(
        "Reported pairs by containment",
        &c.containments,
        SIMILARITY_BINS,
        threshold,
        svg::PALETTE[0],
    ));
    out.push_str("</div><div><h3>Jaccard of the same pairs</h3>");
    out.push_str(&charts::similarity_histogram(
        "Reported pairs by Jaccard similarity",
        &c.jaccards,
        0,
        SIMILARITY_BINS,
        threshold,
        svg::PALETTE[1],
    ));
    out.push_str("</div></div></section>");
}
