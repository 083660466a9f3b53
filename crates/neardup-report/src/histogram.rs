//! Binning: similarities into equal-width bins over [0, 1] (and counts into coarser bins),
//! cluster sizes into log-scaled bins.
//!
//! ```
//! use neardup_report::histogram::{cluster_size_bins, coarsen, similarity_bins};
//! assert_eq!(similarity_bins(&[0.1, 0.85, 0.9, 1.0], 2), [1, 3]);
//! assert_eq!(coarsen(&[1, 0, 2, 1], 2), [1, 3]);
//! let labels: Vec<String> = cluster_size_bins(&[2, 7]).iter().map(|b| b.label()).collect();
//! assert_eq!(labels, ["2", "3", "4–5", "6–10"]);
//! ```

/// Slack for values computed as ratios that sit exactly on a bin edge (29/50 = 0.58 must
/// land in the bin starting at 0.58, although 0.58 × 50 = 28.999…).
const EDGE_EPSILON: f64 = 1e-9;

/// Counts of values in `bins` equal-width bins over [0, 1]: bin i holds [i/bins, (i+1)/bins),
/// the last one also holds 1.0. Values outside [0, 1] are clamped; NaNs are not counted.
pub fn similarity_bins(values: &[f64], bins: usize) -> Vec<u64> {
    let mut counts = vec![0u64; bins.max(1)];
    let n = counts.len();
    for &v in values {
        if v.is_nan() {
            continue;
        }
        let i = (v.clamp(0.0, 1.0) * n as f64 + EDGE_EPSILON).floor() as usize;
        counts[i.min(n - 1)] += 1;
    }
    counts
}

/// Counts in fewer bins: `counts` (a multiple of `bins` long, equal widths over [0, 1])
/// added up per coarse bin.
pub fn coarsen(counts: &[u64], bins: usize) -> Vec<u64> {
    let bins = bins.max(1);
    let per = counts.len().div_ceil(bins).max(1);
    let mut out = vec![0u64; bins];
    for (i, &n) in counts.iter().enumerate() {
        out[(i / per).min(bins - 1)] += n;
    }
    out
}

/// One bin of the cluster-size distribution: sizes `lo..=hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeBin {
    /// The smallest size in the bin.
    pub lo: usize,
    /// The largest size in the bin.
    pub hi: usize,
    /// Clusters whose size falls in the bin.
    pub clusters: u64,
    /// Documents in those clusters.
    pub documents: u64,
}

impl SizeBin {
    /// "2", "4–5", "11–20".
    pub fn label(&self) -> String {
        if self.lo == self.hi {
            self.lo.to_string()
        } else {
            format!("{}\u{2013}{}", self.lo, self.hi)
        }
    }
}

/// Upper bounds of the size bins: 1, 2, 3, 5, then 1-2-5 steps (10, 20, 50, 100, …).
fn upper_bound(bin: usize) -> usize {
    match bin {
        0 => 1,
        1 => 2,
        2 => 3,
        3 => 5,
        _ => {
            let k = bin - 4;
            let decade = 10usize.saturating_pow((k / 3) as u32 + 1);
            decade.saturating_mul([1, 2, 5][k % 3])
        }
    }
}

/// Which size bin holds `size` (≥ 1).
fn bin_of(size: usize) -> usize {
    let mut bin = 0;
    while upper_bound(bin) < size {
        bin += 1;
    }
    bin
}

/// The cluster-size distribution in log-scaled bins 1, 2, 3, 4–5, 6–10, 11–20, 21–50, …,
/// from the bin of the smallest size to that of the largest, empty bins in between
/// included (so the axis stays logarithmic). Sizes of 0 are ignored.
pub fn cluster_size_bins(sizes: &[usize]) -> Vec<SizeBin> {
    let (Some(&min), Some(&max)) = (
        sizes.iter().filter(|&&s| s > 0).min(),
        sizes.iter().filter(|&&s| s > 0).max(),
    ) else {
        return Vec::new();
    };
    let first = bin_of(min);
    let mut bins: Vec<SizeBin> = (first..=bin_of(max))
        .map(|b| SizeBin {
            lo: if b == 0 { 1 } else { upper_bound(b - 1) + 1 },
            hi: upper_bound(b),
            clusters: 0,
            documents: 0,
        })
        .collect();
    for &s in sizes.iter().filter(|&&s| s > 0) {
        let bin = &mut bins[bin_of(s) - first];
        bin.clusters += 1;
        bin.documents += s as u64;
    }
    bins
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_bins_put_edges_in_the_upper_bin() {
        let counts = similarity_bins(&[0.0, 0.01, 0.02, 29.0 / 50.0, 0.8, 0.999, 1.0, 1.5], 50);
        assert_eq!(counts.len(), 50);
        assert_eq!(counts[0], 2); // 0.0, 0.01
        assert_eq!(counts[1], 1); // 0.02
        assert_eq!(counts[29], 1); // 0.58 exactly
        assert_eq!(counts[40], 1); // 0.8 exactly
        assert_eq!(counts[49], 3); // 0.999, 1.0 and 1.5 clamped
        assert_eq!(counts.iter().sum::<u64>(), 8);
        assert_eq!(similarity_bins(&[f64::NAN, -1.0], 10), {
            let mut v = vec![0; 10];
            v[0] = 1;
            v
        });
    }

    #[test]
    fn size_bins_are_log_scaled() {
        let labels: Vec<String> = (0..12)
            .map(|b| {
                SizeBin {
                    lo: if b == 0 { 1 } else { upper_bound(b - 1) + 1 },
                    hi: upper_bound(b),
                    clusters: 0,
                    documents: 0,
                }
                .label()
            })
            .collect();
        assert_eq!(
            labels,
            [
                "1",
                "2",
                "3",
                "4–5",
                "6–10",
                "11–20",
                "21–50",
                "51–100",
                "101–200",
                "201–500",
                "501–1000",
                "1001–2000"
            ]
        );
    }

    #[test]
    fn size_bins_count_clusters_and_documents() {
        let bins = cluster_size_bins(&[2, 2, 3, 7, 10, 11, 0]);
        let got: Vec<(String, u64, u64)> = bins
            .iter()
            .map(|b| (b.label(), b.clusters, b.documents))
            .collect();
        assert_eq!(
            got,
            [
                ("2".to_string(), 2, 4),
                ("3".to_string(), 1, 3),
                ("4–5".to_string(), 0, 0),
                ("6–10".to_string(), 2, 17),
                ("11–20".to_string(), 1, 11),
            ]
        );
        assert!(cluster_size_bins(&[]).is_empty());
        assert_eq!(cluster_size_bins(&[1_000_000]).len(), 1);
        assert_eq!(cluster_size_bins(&[1_000_000])[0].label(), "500001–1000000");
    }
}
