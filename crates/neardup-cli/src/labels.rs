//! `neardup eval --labels FILE`: the labels neardup-io reads ([`neardup_io::labels`],
//! which says what a labels file holds), turned into the core's [`Grouping`], which
//! `neardup::measure::metrics` scores.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{bail, Result};
use neardup::measure::metrics::{ClusteringBuilder, Grouping};
use neardup_io::labels::{LabelKind, Labels};

/// Reads a labels file (the format from its extension) into a grouping.
pub fn read_labels(path: &Path) -> Result<Grouping> {
    let labels = neardup_io::labels::read_labels(path)?;
    grouping(labels, &path.display().to_string())
}

/// The grouping of `labels`; `source` names them in messages. Cluster labels that put one
/// id in two clusters are refused, naming both lines.
fn grouping(labels: Labels, source: &str) -> Result<Grouping> {
    match labels.kind {
        LabelKind::Pairs => Ok(Grouping::from_pairs(
            labels
                .labels
                .iter()
                .map(|l| (l.first.as_str(), l.second.as_str())),
        )),
        LabelKind::Clusters => {
            let mut clusters = ClusteringBuilder::default();
            let mut lines: HashMap<&str, u64> = HashMap::new();
            for l in &labels.labels {
                if let Err(c) = clusters.add(&l.first, &l.second) {
                    let first = lines.get(l.first.as_str()).copied().unwrap_or(0);
                    bail!("{source}:{}: {c} (line {first})", l.line);
                }
                lines.entry(&l.first).or_insert(l.line);
            }
            Ok(clusters.build())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use neardup::measure::metrics::{adjusted_rand_index, pair_metrics, GroupingKind};

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/labels")
            .join(name)
    }

    #[test]
    fn fixtures_agree_across_formats() {
        let pairs_jsonl = read_labels(&fixture("pairs.jsonl")).unwrap();
        let pairs_csv = read_labels(&fixture("pairs.csv")).unwrap();
        let clusters_jsonl = read_labels(&fixture("clusters.jsonl")).unwrap();
        let clusters_csv = read_labels(&fixture("clusters.csv")).unwrap();
        let clusters_tsv = read_labels(&fixture("clusters.tsv")).unwrap();
        assert_eq!(pairs_jsonl.kind(), GroupingKind::Pairs);
        assert_eq!(clusters_csv.kind(), GroupingKind::Clusters);
        // The pair files list all pairs within the clusters {1,2,3} {4,5,6} {"8.50","x,y"}
        // (and a repeat): 3 + 3 + 1 = 7 pairs.
        for g in [&pairs_jsonl, &pairs_csv] {
            assert_eq!(g.pair_count(), 7);
            assert!(g.contains("8.50") && g.contains("x,y"));
        }
        for g in [&clusters_jsonl, &clusters_csv, &clusters_tsv] {
            assert_eq!(g.pair_count(), 7);
            assert_eq!(g.documents(), 9);
            for other in [&pairs_jsonl, &pairs_csv, &clusters_jsonl, &clusters_csv] {
                let m = pair_metrics(g, other);
                assert_eq!((m.predicted, m.labelled, m.both), (7, 7, 7));
                assert_eq!(adjusted_rand_index(g, other, 9), 1.0);
            }
        }
    }

    /// An id in two clusters names both lines; the reader's errors keep their cause.
    #[test]
    fn errors_name_the_file_and_line() {
        let e = format!(
            "{:#}",
            read_labels(&fixture("bad-conflict.csv")).unwrap_err()
        );
        assert!(
            e.contains(
                "bad-conflict.csv:4: id \"b\" is in cluster \"1\" and in cluster \"2\" (line 3)"
            ),
            "{e}"
        );
        let e = format!("{:#}", read_labels(&fixture("missing.csv")).unwrap_err());
        assert!(
            e.contains("cannot read the labels file: ") && e.matches("missing.csv").count() == 1,
            "{e}"
        );
        // Repeated pairs and "7" and 7 as one cluster.
        let g = grouping(
            neardup_io::labels::parse_labels_from(
                b"{\"id\": 1, \"cluster\": 7}\n{\"id\": 2, \"cluster\": \"7\"}\n",
                neardup_io::Format::Jsonl,
                "L",
            )
            .unwrap(),
            "L",
        )
        .unwrap();
        assert_eq!(g.pair_count(), 1);
    }
}
