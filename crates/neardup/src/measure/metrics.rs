//! Metrics that compare a grouping of documents with another: pair precision, recall and
//! F1, and the adjusted Rand index from contingency tables.
//!
//! A [`Grouping`] is a set of unordered pairs of documents or a clustering of documents,
//! by id (any text: the caller's ids, as in its input). [`pair_metrics`] gives precision,
//! recall and F1 over unordered pairs (the pairs of a clustering are all pairs within each
//! cluster, counted from the contingency table, never listed); [`adjusted_rand_index`]
//! compares two clusterings (a set of pairs counts as its connected components). A
//! document absent from a grouping is a singleton in it.
//!
//! [`recall_by_similarity`] breaks the recall of one method's pairs against another's down
//! by bands of exact Jaccard, each with what the S-curve expects ([`BandRecall`]).
//! [`evaluation`](crate::measure::evaluation) uses all of these to score LSH against the exact join
//! and both against ground-truth labels.
//!
//! ```
//! use neardup::measure::metrics::{adjusted_rand_index, pair_metrics, Grouping};
//!
//! let labelled = Grouping::from_clusters([("1", "x"), ("2", "x"), ("3", "x")])?;
//! let predicted = Grouping::from_pairs([("1", "2"), ("3", "4")]);
//! let m = pair_metrics(&predicted, &labelled);
//! assert_eq!((m.predicted, m.labelled, m.both), (2, 3, 1));
//! assert_eq!(m.precision(), 0.5);
//! assert!(adjusted_rand_index(&predicted, &labelled, 4) < 1.0);
//! # Ok::<(), neardup::measure::metrics::Conflict>(())
//! ```

use std::collections::{HashMap, HashSet};

use crate::run::pairs::Pair;

/// Whether a [`Grouping`] lists pairs or places documents in clusters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupingKind {
    /// Unordered pairs of documents.
    Pairs,
    /// A cluster for each document named.
    Clusters,
}

/// Unordered pairs of documents, or a clustering of documents, by id.
///
/// Ids are numbered with `u32`: a grouping names fewer than 2³² distinct ids, and naming
/// more panics (holding that many ids takes well over 100 GB first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grouping {
    /// Id → index of the document within this grouping.
    ids: HashMap<Box<str>, u32>,
    kind: Kind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// Pairs (x, y) of document indices with x < y.
    Pairs(HashSet<(u32, u32)>),
    /// The cluster of each document index, and each cluster's size.
    Clusters {
        cluster_of: Vec<u32>,
        sizes: Vec<u64>,
    },
}

/// Interns ids (or cluster names) to dense indices, fewer than `u32::MAX` of them, so that
/// `0..ids.len() as u32` numbers them all.
fn intern(ids: &mut HashMap<Box<str>, u32>, id: &str) -> u32 {
    if let Some(&i) = ids.get(id) {
        return i;
    }
    let i = u32::try_from(ids.len())
        .ok()
        .filter(|&i| i < u32::MAX)
        .expect("a grouping names fewer than 2³² ids");
    ids.insert(id.into(), i);
    i
}

/// A document placed in two different clusters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The document's id.
    pub id: String,
    /// The cluster it was placed in first.
    pub first: String,
    /// The other cluster.
    pub second: String,
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "id {:?} is in cluster {:?} and in cluster {:?}",
            self.id, self.first, self.second
        )
    }
}

impl std::error::Error for Conflict {}

/// Builds a clustering one (id, cluster) at a time, refusing an id in two clusters.
#[derive(Debug, Default)]
pub struct ClusteringBuilder {
    ids: HashMap<Box<str>, u32>,
    clusters: HashMap<Box<str>, u32>,
    cluster_names: Vec<Box<str>>,
    cluster_of: Vec<u32>,
}

impl ClusteringBuilder {
    /// Puts `id` in cluster `cluster`; the same placement twice is fine.
    pub fn add(&mut self, id: &str, cluster: &str) -> std::result::Result<(), Conflict> {
        let c = intern(&mut self.clusters, cluster);
        if c as usize == self.cluster_names.len() {
            self.cluster_names.push(cluster.into());
        }
        let doc = intern(&mut self.ids, id) as usize;
        if doc == self.cluster_of.len() {
            self.cluster_of.push(c);
        } else if self.cluster_of[doc] != c {
            return Err(Conflict {
                id: id.to_string(),
                first: self.cluster_names[self.cluster_of[doc] as usize].to_string(),
                second: cluster.to_string(),
            });
        }
        Ok(())
    }

    /// The clustering of the documents added so far.
    pub fn build(self) -> Grouping {
        let mut sizes = vec![0u64; self.cluster_names.len()];
        for &c in &self.cluster_of {
            sizes[c as usize] += 1;
        }
        Grouping {
            ids: self.ids,
            kind: Kind::Clusters {
                cluster_of: self.cluster_of,
                sizes,
            },
        }
    }
}

/// C(n, 2) = n(n − 1)/2.
fn pairs_of(n: u64) -> u128 {
    let n = n as u128;
    n * n.saturating_sub(1) / 2
}

impl Grouping {
    /// Unordered pairs of ids; repeated and reversed pairs count once, (x, x) is dropped.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Grouping {
        let mut ids = HashMap::new();
        let mut set = HashSet::new();
        for (a, b) in pairs {
            let (x, y) = (intern(&mut ids, a), intern(&mut ids, b));
            if x != y {
                set.insert((x.min(y), x.max(y)));
            }
        }
        Grouping {
            ids,
            kind: Kind::Pairs(set),
        }
    }

    /// A clustering from (id, cluster) placements; an id in two clusters is an error.
    pub fn from_clusters<'a>(
        members: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> std::result::Result<Grouping, Conflict> {
        let mut b = ClusteringBuilder::default();
        for (id, cluster) in members {
            b.add(id, cluster)?;
        }
        Ok(b.build())
    }

    /// Whether this is a set of pairs or a clustering.
    pub fn kind(&self) -> GroupingKind {
        match self.kind {
            Kind::Pairs(_) => GroupingKind::Pairs,
            Kind::Clusters { .. } => GroupingKind::Clusters,
        }
    }

    /// Distinct documents named.
    pub fn documents(&self) -> usize {
        self.ids.len()
    }

    /// Whether `id` is named.
    pub fn contains(&self, id: &str) -> bool {
        self.ids.contains_key(id)
    }

    /// Unordered pairs: the set's size, or Σ C(size, 2) over clusters.
    pub fn pair_count(&self) -> u128 {
        match &self.kind {
            Kind::Pairs(set) => set.len() as u128,
            Kind::Clusters { sizes, .. } => sizes.iter().map(|&s| pairs_of(s)).sum(),
        }
    }

    /// The clustering of this grouping: itself, or a set of pairs' connected components.
    pub fn to_clusters(&self) -> Grouping {
        match &self.kind {
            Kind::Clusters { .. } => self.clone(),
            Kind::Pairs(set) => {
                let mut parent: Vec<u32> = (0..self.ids.len() as u32).collect();
                fn root(parent: &mut [u32], mut x: u32) -> u32 {
                    while parent[x as usize] != x {
                        let up = parent[parent[x as usize] as usize];
                        parent[x as usize] = up;
                        x = up;
                    }
                    x
                }
                for &(x, y) in set {
                    let (rx, ry) = (root(&mut parent, x), root(&mut parent, y));
                    if rx != ry {
                        parent[rx.max(ry) as usize] = rx.min(ry);
                    }
                }
                let mut number: HashMap<u32, u32> = HashMap::new();
                let mut cluster_of = Vec::with_capacity(parent.len());
                for x in 0..parent.len() as u32 {
                    let r = root(&mut parent, x);
                    let next = number.len() as u32;
                    cluster_of.push(*number.entry(r).or_insert(next));
                }
                let mut sizes = vec![0u64; number.len()];
                for &c in &cluster_of {
                    sizes[c as usize] += 1;
                }
                Grouping {
                    ids: self.ids.clone(),
                    kind: Kind::Clusters { cluster_of, sizes },
                }
            }
        }
    }

    /// The ids this grouping names.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.ids.keys().map(|id| &**id)
    }

    /// Whether `a` and `b` are duplicates here: a listed pair, or in one cluster.
    pub fn together(&self, a: &str, b: &str) -> bool {
        let (Some(&x), Some(&y)) = (self.ids.get(a), self.ids.get(b)) else {
            return false;
        };
        match &self.kind {
            Kind::Pairs(set) => set.contains(&(x.min(y), x.max(y))),
            Kind::Clusters { cluster_of, .. } => {
                x != y && cluster_of[x as usize] == cluster_of[y as usize]
            }
        }
    }

    /// Every unordered pair, by id, in a fixed order (sorted): the listed pairs, or all
    /// pairs within each cluster.
    pub fn pair_ids(&self) -> Vec<(&str, &str)> {
        let mut names = vec![""; self.ids.len()];
        for (id, &i) in &self.ids {
            names[i as usize] = id;
        }
        let ordered = |x: u32, y: u32| {
            let (a, b) = (names[x as usize], names[y as usize]);
            if a <= b {
                (a, b)
            } else {
                (b, a)
            }
        };
        let mut out: Vec<(&str, &str)> = match &self.kind {
            Kind::Pairs(set) => set.iter().map(|&(x, y)| ordered(x, y)).collect(),
            Kind::Clusters { cluster_of, .. } => {
                let mut members: HashMap<u32, Vec<u32>> = HashMap::new();
                for (x, &c) in cluster_of.iter().enumerate() {
                    members.entry(c).or_default().push(x as u32); // x < ids.len()
                }
                members
                    .values()
                    .flat_map(|m| {
                        m.iter()
                            .enumerate()
                            .flat_map(move |(i, &x)| m[i + 1..].iter().map(move |&y| (x, y)))
                    })
                    .map(|(x, y)| ordered(x, y))
                    .collect()
            }
        };
        out.sort_unstable();
        out
    }

    /// For each document of `self`, its index in `other` if `other` names it.
    fn translate(&self, other: &Grouping) -> Vec<Option<u32>> {
        let mut to = vec![None; self.ids.len()];
        for (id, &i) in &self.ids {
            to[i as usize] = other.ids.get(id).copied();
        }
        to
    }
}

/// Pairs counted by [`pair_metrics`]. Counts are u128: the pairs of a clustering of n
/// documents reach n²/2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairMetrics {
    /// Pairs predicted.
    pub predicted: u128,
    /// Pairs labelled.
    pub labelled: u128,
    /// Pairs both predicted and labelled.
    pub both: u128,
}

impl PairMetrics {
    /// both / predicted; **1.0 when nothing is predicted** (no predicted pair is wrong).
    pub fn precision(&self) -> f64 {
        ratio_of_counts(self.both, self.predicted)
    }

    /// both / labelled; 1.0 when nothing is labelled (no labelled pair is missed).
    pub fn recall(&self) -> f64 {
        ratio_of_counts(self.both, self.labelled)
    }

    /// The harmonic mean of precision and recall; 0.0 when both are 0.
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

/// a / b; 1 when b = 0 (nothing to find, nothing wrong).
pub(crate) fn ratio_of_counts(a: u128, b: u128) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}

/// Pairs of `pairs` whose two documents are in one cluster of `clusters`.
fn pairs_within(pairs: &Grouping, set: &HashSet<(u32, u32)>, clusters: &Grouping) -> u128 {
    let Kind::Clusters { cluster_of, .. } = &clusters.kind else {
        unreachable!("a clustering")
    };
    let to = pairs.translate(clusters);
    set.iter()
        .filter(|&&(x, y)| match (to[x as usize], to[y as usize]) {
            (Some(a), Some(b)) => cluster_of[a as usize] == cluster_of[b as usize],
            _ => false,
        })
        .count() as u128
}

/// The contingency table of two clusterings over the documents both name: (cluster in
/// `a`, cluster in `b`) → documents. Documents named by one only are singletons in the
/// other and share no pair, so they add nothing.
fn contingency(a: &Grouping, b: &Grouping) -> HashMap<(u32, u32), u64> {
    let (Kind::Clusters { cluster_of: ca, .. }, Kind::Clusters { cluster_of: cb, .. }) =
        (&a.kind, &b.kind)
    else {
        unreachable!("two clusterings")
    };
    let mut table = HashMap::new();
    for (i, j) in a.translate(b).iter().enumerate() {
        if let Some(j) = j {
            *table.entry((ca[i], cb[*j as usize])).or_insert(0) += 1;
        }
    }
    table
}

/// Precision, recall and F1 of `predicted` pairs against `labelled` pairs, over unordered
/// pairs of ids. A clustering stands for all pairs within each of its clusters.
pub fn pair_metrics(predicted: &Grouping, labelled: &Grouping) -> PairMetrics {
    let both = match (&predicted.kind, &labelled.kind) {
        (Kind::Pairs(p), Kind::Pairs(l)) => {
            let to = predicted.translate(labelled);
            p.iter()
                .filter(|&&(x, y)| match (to[x as usize], to[y as usize]) {
                    (Some(a), Some(b)) => l.contains(&(a.min(b), a.max(b))),
                    _ => false,
                })
                .count() as u128
        }
        (Kind::Pairs(p), Kind::Clusters { .. }) => pairs_within(predicted, p, labelled),
        (Kind::Clusters { .. }, Kind::Pairs(l)) => pairs_within(labelled, l, predicted),
        (Kind::Clusters { .. }, Kind::Clusters { .. }) => contingency(predicted, labelled)
            .values()
            .map(|&n| pairs_of(n))
            .sum(),
    };
    PairMetrics {
        predicted: predicted.pair_count(),
        labelled: labelled.pair_count(),
        both,
    }
}

/// The adjusted Rand index (Hubert & Arabie 1985) of two clusterings of `documents`
/// documents (at least the documents either one names; the others are singletons in
/// both). A set of pairs counts as its connected components. 1.0 for identical
/// clusterings (also when both are all singletons), about 0 for independent ones, and
/// negative below chance.
pub fn adjusted_rand_index(predicted: &Grouping, labelled: &Grouping, documents: u64) -> f64 {
    let (a, b) = (predicted.to_clusters(), labelled.to_clusters());
    let common = a.translate(&b).iter().filter(|j| j.is_some()).count() as u64;
    let named = (a.documents() + b.documents()) as u64 - common;
    let together: u128 = contingency(&a, &b).values().map(|&n| pairs_of(n)).sum();
    ari_from_counts(
        together,
        a.pair_count(),
        b.pair_count(),
        documents.max(named),
    )
}

/// The adjusted Rand index from pair counts: `together` pairs in one cluster in both,
/// `pairs_a` and `pairs_b` pairs within clusters of each, `n` documents. With the pair
/// confusion matrix tp = together, fp = pairs_a − tp, fn = pairs_b − tp,
/// tn = C(n, 2) − pairs_a − pairs_b + tp:
/// ARI = 2 (tp·tn − fn·fp) / ((tp + fn)(fn + tn) + (tp + fp)(fp + tn)),
/// which equals Hubert & Arabie's (index − expected) / (max − expected). Exact in u128
/// while the products fit (n up to about 2³²), in f64 beyond. Counts that cannot come
/// from two clusterings (`together` above `pairs_a` or `pairs_b`, more pairs than
/// C(n, 2)) are clamped into range rather than overflowing.
pub fn ari_from_counts(together: u128, pairs_a: u128, pairs_b: u128, n: u64) -> f64 {
    let total = pairs_of(n);
    let tp = together.min(pairs_a).min(pairs_b);
    let fp = pairs_a - tp;
    let fn_ = pairs_b - tp;
    // C(n, 2) − (pairs together in either): subtracting pairs_a and pairs_b one at a
    // time would underflow when both clusterings are one cluster of all n.
    let tn = total.saturating_sub(pairs_a.saturating_add(pairs_b) - tp);
    if fp == 0 && fn_ == 0 {
        return 1.0;
    }
    let exact = || -> Option<f64> {
        let plus = tp.checked_mul(tn)?;
        let minus = fn_.checked_mul(fp)?;
        let den = (tp.checked_add(fn_)?)
            .checked_mul(fn_.checked_add(tn)?)?
            .checked_add((tp.checked_add(fp)?).checked_mul(fp.checked_add(tn)?)?)?;
        let num = if plus >= minus {
            (plus - minus) as f64
        } else {
            -((minus - plus) as f64)
        };
        Some(2.0 * num / den as f64)
    };
    exact().unwrap_or_else(|| {
        let (tp, fp, fn_, tn) = (tp as f64, fp as f64, fn_ as f64, tn as f64);
        2.0 * (tp * tn - fn_ * fp) / ((tp + fn_) * (fn_ + tn) + (tp + fp) * (fp + tn))
    })
}

/// Upper ends of the similarity bands in which recall is broken down (those above the
/// threshold), each exclusive; a last band [1, 1] follows.
pub const SIMILARITY_BANDS: [f64; 6] = [0.8, 0.85, 0.9, 0.95, 0.99, 1.0];

/// Recall in one band of exact similarity, `[low, high)` or, if `closed`, `[low, high]`
/// (the last band, which ends at 1).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BandRecall {
    /// Lower end (inclusive).
    pub low: f64,
    /// Upper end (exclusive unless `closed`).
    pub high: f64,
    /// Whether `high` is in the band.
    pub closed: bool,
    /// Exact pairs in the band.
    pub pairs: u64,
    /// Of those, pairs LSH found.
    pub found: u64,
    /// found / pairs.
    pub recall: f64,
    /// The mean S-curve over the band's pairs.
    pub expected: f64,
}

pub use crate::candidates::bands::CandidateCurve;

/// The mean S-curve over `pairs`' exact Jaccard; 0 for none.
pub(crate) fn expected(plan: CandidateCurve, pairs: &[&Pair]) -> f64 {
    if pairs.is_empty() {
        return 0.0;
    }
    let sum: f64 = pairs
        .iter()
        .map(|p| plan.probability(p.similarity.jaccard.unwrap_or(0.0)))
        .sum();
    sum / pairs.len() as f64
}

/// Recall of `found` (sorted by (a, b)) over the pairs of `truth` in each band of exact
/// Jaccard from `threshold` up: the bands end at the [`SIMILARITY_BANDS`] above the
/// threshold, then a last, closed band [1, 1] holds the pairs of identical sets (or, for
/// t = 1, [1, 1] is the only band). Empty bands are left out.
pub fn recall_by_similarity(
    truth: &[Pair],
    found: &[Pair],
    plan: impl Into<CandidateCurve>,
    threshold: f64,
) -> Vec<BandRecall> {
    let plan = plan.into();
    let mut out = Vec::new();
    let mut low = threshold;
    for &high in SIMILARITY_BANDS
        .iter()
        .filter(|&&b| b > threshold)
        .chain(std::iter::once(&f64::INFINITY))
    {
        let in_band: Vec<&Pair> = truth
            .iter()
            .filter(|p| {
                let j = p.similarity.jaccard.unwrap_or(0.0);
                j >= low && (j < high || (high.is_infinite() && j <= 1.0))
            })
            .collect();
        if !in_band.is_empty() {
            let hits = in_band
                .iter()
                .filter(|p| {
                    found
                        .binary_search_by_key(&(p.a, p.b), |f| (f.a, f.b))
                        .is_ok()
                })
                .count();
            out.push(BandRecall {
                low,
                high: high.min(1.0),
                closed: high.is_infinite(),
                pairs: in_band.len() as u64,
                found: hits as u64,
                recall: ratio_of_counts(hits as u128, in_band.len() as u128),
                expected: expected(plan, &in_band),
            });
        }
        low = high;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidates::bands::BandPlan;
    use crate::cluster::clusters::Similarity;

    fn pair(a: u32, b: u32, j: f64) -> Pair {
        Pair {
            a,
            b,
            similarity: Similarity {
                jaccard: Some(j),
                ..Similarity::default()
            },
        }
    }

    fn clusters(members: &[(&str, &str)]) -> Grouping {
        Grouping::from_clusters(members.iter().copied()).unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// The six-document case. Labels {1,2,3} {4,5,6}; prediction {1,2} {3,4} {5,6}.
    /// Contingency (rows: predicted, columns: labelled):
    ///             L1  L2   | a_i  C(a_i,2)
    ///   P1 {1,2}   2   0   |  2     1
    ///   P2 {3,4}   1   1   |  2     1
    ///   P3 {5,6}   0   2   |  2     1
    ///   b_j        3   3      n = 6, C(6,2) = 15
    ///   C(b_j,2)   3   3
    /// index = Σ C(n_ij, 2) = 1 + 1 = 2; Σ C(a_i,2) = 3; Σ C(b_j,2) = 6;
    /// expected = 3 · 6 / 15 = 1.2; max = (3 + 6) / 2 = 4.5;
    /// ARI = (2 − 1.2) / (4.5 − 1.2) = 0.8 / 3.3 = 8/33 = 0.242424…
    /// Pairs: predicted 3, labelled 6, both 2: precision 2/3, recall 1/3, F1 4/9.
    fn six() -> (Grouping, Grouping) {
        let labelled = clusters(&[
            ("1", "L1"),
            ("2", "L1"),
            ("3", "L1"),
            ("4", "L2"),
            ("5", "L2"),
            ("6", "L2"),
        ]);
        let predicted = clusters(&[
            ("1", "P1"),
            ("2", "P1"),
            ("3", "P2"),
            ("4", "P2"),
            ("5", "P3"),
            ("6", "P3"),
        ]);
        (predicted, labelled)
    }

    #[test]
    fn six_documents() {
        let (p, l) = six();
        assert!(close(adjusted_rand_index(&p, &l, 6), 8.0 / 33.0));
        let m = pair_metrics(&p, &l);
        assert_eq!((m.predicted, m.labelled, m.both), (3, 6, 2));
        assert!(close(m.precision(), 2.0 / 3.0));
        assert!(close(m.recall(), 1.0 / 3.0));
        assert!(close(m.f1(), 4.0 / 9.0));
        // ARI is symmetric; documents beyond the named six change it: with n = 10 the four
        // extra singletons add C(10,2) − C(6,2) = 30 pairs apart in both:
        // expected = 3·6/45 = 0.4, ARI = (2 − 0.4)/(4.5 − 0.4) = 1.6/4.1 = 16/41.
        assert!(close(adjusted_rand_index(&l, &p, 6), 8.0 / 33.0));
        assert!(close(adjusted_rand_index(&p, &l, 10), 16.0 / 41.0));
    }

    #[test]
    fn perfect_agreement() {
        let (_, l) = six();
        // Same partition under other cluster names.
        let renamed = clusters(&[
            ("6", "x"),
            ("5", "x"),
            ("4", "x"),
            ("3", "7"),
            ("2", "7"),
            ("1", "7"),
        ]);
        assert_eq!(adjusted_rand_index(&renamed, &l, 6), 1.0);
        assert_eq!(adjusted_rand_index(&renamed, &l, 1_000), 1.0);
        let m = pair_metrics(&renamed, &l);
        assert_eq!((m.precision(), m.recall(), m.f1()), (1.0, 1.0, 1.0));
    }

    #[test]
    fn all_singletons_against_one_cluster() {
        // Labelled: one cluster of 4; predicted: nothing (all singletons).
        // tp = 0, fp = 0, fn = C(4,2) = 6, tn = 0: ARI = 2(0 − 0)/((0+6)(6+0) + 0) = 0.
        let one = clusters(&[("a", "c"), ("b", "c"), ("c", "c"), ("d", "c")]);
        let none = Grouping::from_pairs([]);
        assert_eq!(adjusted_rand_index(&none, &one, 4), 0.0);
        // Both all singletons: identical clusterings.
        assert_eq!(adjusted_rand_index(&none, &none, 4), 1.0);
        // Nothing predicted: precision 1 by definition, recall 0, F1 0.
        let m = pair_metrics(&none, &one);
        assert_eq!((m.predicted, m.labelled, m.both), (0, 6, 0));
        assert_eq!((m.precision(), m.recall(), m.f1()), (1.0, 0.0, 0.0));
    }

    #[test]
    fn tiny_pair_sets() {
        // Predicted {a-b, b-c, c-d}, labelled {b-a, c-b, a-c, d-e}: both = {a-b, b-c} = 2.
        // Precision 2/3, recall 2/4, F1 = 2·(2/3)(1/2)/(2/3 + 1/2) = (2/3)/(7/6) = 4/7.
        let p = Grouping::from_pairs([("a", "b"), ("b", "c"), ("c", "d"), ("b", "a")]);
        let l = Grouping::from_pairs([("b", "a"), ("c", "b"), ("a", "c"), ("d", "e")]);
        let m = pair_metrics(&p, &l);
        assert_eq!((m.predicted, m.labelled, m.both), (3, 4, 2));
        assert!(close(m.precision(), 2.0 / 3.0));
        assert!(close(m.recall(), 0.5));
        assert!(close(m.f1(), 4.0 / 7.0));
        // Self-pairs are dropped.
        assert_eq!(Grouping::from_pairs([("x", "x")]).pair_count(), 0);
    }

    #[test]
    fn pairs_against_clusters_and_back() {
        // Labelled clusters {1,2,3} {4,5,6} hold 6 pairs. Predicted pairs 1-2, 2-3, 3-4,
        // 7-8: within a labelled cluster are 1-2 and 2-3 (7 and 8 are unlabelled:
        // singletons). Precision 2/4, recall 2/6.
        let (_, l) = six();
        let p = Grouping::from_pairs([("1", "2"), ("2", "3"), ("3", "4"), ("7", "8")]);
        let m = pair_metrics(&p, &l);
        assert_eq!((m.predicted, m.labelled, m.both), (4, 6, 2));
        let back = pair_metrics(&l, &p);
        assert_eq!((back.predicted, back.labelled, back.both), (6, 4, 2));
        // As clusters, the pairs are their components {1,2,3,4} {7,8}: against the labels
        // over 8 documents: n_ij: {1,2,3}∩ → 3, {4} → 1, {7,8} → (unlabelled) so tp =
        // C(3,2) = 3; pairs_a = C(4,2) + C(2,2) = 7; pairs_b = 6; C(8,2) = 28.
        // fp = 4, fn = 3, tn = 28 − 7 − 6 + 3 = 18.
        // ARI = 2(3·18 − 3·4)/((3+3)(3+18) + (3+4)(4+18)) = 84/(126 + 154) = 0.3.
        assert!(close(adjusted_rand_index(&p, &l, 8), 0.3));
        assert_eq!(p.to_clusters().pair_count(), 7);
    }

    #[test]
    fn ari_with_huge_counts() {
        // n = 4·10⁹ documents; labelled: one cluster of 2·10⁹; predicted: a cluster of
        // 10⁹ inside it. Hubert–Arabie in f64: index = C(10⁹,2), expected = A·B/T.
        let c = |n: u64| (n as u128) * (n as u128 - 1) / 2;
        let (n, a, b) = (4_000_000_000u64, c(1_000_000_000), c(2_000_000_000));
        let got = ari_from_counts(a, a, b, n);
        let (af, bf, tf) = (a as f64, b as f64, c(n) as f64);
        let expected = af * bf / tf;
        let want = (af - expected) / ((af + bf) / 2.0 - expected);
        assert!((got - want).abs() < 1e-9, "{got} {want}");
        // Past u128 products (n = 2⁴⁰), the f64 path gives the same formula.
        let n = 1u64 << 40;
        let (a, b) = (c(1 << 30), c(1 << 31));
        let got = ari_from_counts(a, a, b, n);
        let (af, bf, tf) = (a as f64, b as f64, c(n) as f64);
        let expected = af * bf / tf;
        let want = (af - expected) / ((af + bf) / 2.0 - expected);
        assert!(got.is_finite() && (got - want).abs() < 1e-6, "{got} {want}");
        assert_eq!(ari_from_counts(c(1 << 31), c(1 << 31), c(1 << 31), n), 1.0);
    }

    #[test]
    fn ari_of_one_cluster_of_everything_and_of_impossible_counts() {
        // Both clusterings one cluster of all 5 documents: every pair together in both,
        // tn = 0 (the subtraction order used to underflow here).
        let all = clusters(&[("1", "x"), ("2", "x"), ("3", "x"), ("4", "x"), ("5", "x")]);
        assert_eq!(adjusted_rand_index(&all, &all, 5), 1.0);
        assert_eq!(ari_from_counts(10, 10, 10, 5), 1.0);
        // One cluster of all against all singletons: tp = 0, fp = 10, fn = 0, tn = 0.
        let none = Grouping::from_pairs([]);
        assert_eq!(adjusted_rand_index(&all, &none, 5), 0.0);
        // Counts no two clusterings give: clamped, finite or NaN, never a panic.
        for (t, a, b, n) in [
            (7, 3, 2, 4),
            (0, u128::MAX, u128::MAX, 3),
            (u128::MAX, 1, u128::MAX, u64::MAX),
        ] {
            let ari = ari_from_counts(t, a, b, n);
            assert!(ari.is_finite() || ari.is_nan(), "{ari}");
        }
    }

    #[test]
    fn big_clusters_are_counted_not_listed() {
        // Two clusterings of 200,000 documents: one cluster vs two halves.
        let ids: Vec<String> = (0..200_000).map(|i| i.to_string()).collect();
        let one = Grouping::from_clusters(ids.iter().map(|i| (i.as_str(), "all"))).unwrap();
        let halves = Grouping::from_clusters(
            ids.iter()
                .enumerate()
                .map(|(k, i)| (i.as_str(), if k < 100_000 { "x" } else { "y" })),
        )
        .unwrap();
        let m = pair_metrics(&halves, &one);
        // C(200000,2) = 19,999,900,000 labelled; 2·C(100000,2) = 9,999,900,000 both.
        assert_eq!(m.labelled, 19_999_900_000);
        assert_eq!((m.predicted, m.both), (9_999_900_000, 9_999_900_000));
        assert_eq!(m.precision(), 1.0);
    }

    #[test]
    fn conflicting_clusters() {
        let err = Grouping::from_clusters([("a", "1"), ("a", "1"), ("a", "2")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "id \"a\" is in cluster \"1\" and in cluster \"2\""
        );
    }

    #[test]
    fn bands_split_recall_at_their_edges() {
        let plan = BandPlan::new(16, 8, 128).unwrap();
        let truth = [
            pair(0, 1, 0.8),
            pair(0, 2, 0.84),
            pair(1, 2, 0.85),
            pair(1, 3, 0.99),
            pair(2, 3, 1.0),
        ];
        let found = [pair(0, 1, 0.8), pair(1, 2, 0.85), pair(2, 3, 1.0)];
        let bands = recall_by_similarity(&truth, &found, plan, 0.8);
        let got: Vec<(f64, f64, bool, u64, u64)> = bands
            .iter()
            .map(|b| (b.low, b.high, b.closed, b.pairs, b.found))
            .collect();
        // [0.8, 0.85): 0.8 and 0.84; [0.85, 0.9): 0.85; [0.99, 1): 0.99; [1, 1]: 1.0,
        // identical sets on their own (the empty bands [0.9, 0.95) and [0.95, 0.99) are
        // left out).
        assert_eq!(
            got,
            [
                (0.8, 0.85, false, 2, 1),
                (0.85, 0.9, false, 1, 1),
                (0.99, 1.0, false, 1, 0),
                (1.0, 1.0, true, 1, 1),
            ]
        );
        assert_eq!(bands[0].recall, 0.5);
        let want = (plan.probability(0.8) + plan.probability(0.84)) / 2.0;
        assert!((bands[0].expected - want).abs() < 1e-15);
        // A threshold between the edges starts the first band there.
        let bands = recall_by_similarity(&truth, &found, plan, 0.83);
        assert_eq!(
            (bands[0].low, bands[0].high, bands[0].pairs),
            (0.83, 0.85, 1)
        );
        assert!(recall_by_similarity(&[], &found, plan, 0.8).is_empty());
    }
}
