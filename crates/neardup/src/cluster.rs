//! Verified links → clusters, each a kept document and the documents that duplicate it.
//!
//! Links are joined with union-find into connected components. Linking is transitive but
//! similarity is not (A ~ B and B ~ C does not make A ~ C), so inside a component every
//! document is checked against the component's kept documents, in keep-policy order: the
//! first kept document it is similar to claims it, and a document similar to none is kept
//! itself and heads a cluster of its own. Every removed document is thus similar to the
//! very document it is reported a duplicate of.

use std::fmt;
use std::str::FromStr;

use rayon::prelude::*;

/// Which document of a cluster is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KeepPolicy {
    /// The one that comes first in the input (default).
    #[default]
    First,
    /// The one that comes last in the input (e.g. the latest re-post of a listing).
    Last,
    /// The longest text (ties: the first).
    Longest,
    /// The shortest text (ties: the first).
    Shortest,
}

impl FromStr for KeepPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "first" => Ok(KeepPolicy::First),
            "last" => Ok(KeepPolicy::Last),
            "longest" => Ok(KeepPolicy::Longest),
            "shortest" => Ok(KeepPolicy::Shortest),
            _ => Err(format!(
                "unknown keep policy {s:?}: expected first, last, longest or shortest"
            )),
        }
    }
}

impl fmt::Display for KeepPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeepPolicy::First => "first",
            KeepPolicy::Last => "last",
            KeepPolicy::Longest => "longest",
            KeepPolicy::Shortest => "shortest",
        })
    }
}

impl KeepPolicy {
    /// Sort key: smaller is kept first. `len` is the document's length.
    pub fn rank(self, doc: u32, len: usize) -> (i128, u32) {
        match self {
            KeepPolicy::First => (0, doc),
            KeepPolicy::Last => (-i128::from(doc), doc),
            KeepPolicy::Longest => (-(len as i128), doc),
            KeepPolicy::Shortest => (len as i128, doc),
        }
    }
}

/// Disjoint sets over document indices (path halving, union by size).
#[derive(Clone, Debug)]
pub struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    /// `n` singleton sets.
    pub fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    /// The representative of `x`'s set.
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    /// Joins the sets of `a` and `b`; true if they were apart.
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (mut ra, mut rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        if self.size[ra as usize] < self.size[rb as usize] {
            std::mem::swap(&mut ra, &mut rb);
        }
        self.parent[rb as usize] = ra;
        self.size[ra as usize] += self.size[rb as usize];
        true
    }
}

/// How similar two documents are: exact Jaccard when it was computed, and the estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Similarity {
    /// Exact Jaccard of the shingle sets, when computed.
    pub jaccard: Option<f64>,
    /// MinHash estimate, when signatures exist.
    pub estimate: Option<f64>,
    /// One of the two documents was longer than the shingle cap: `jaccard` is `None` and
    /// the verdict is the estimate of the whole documents' sketches. Such a pair never
    /// removes a document unless the configuration allows it
    /// ([`ConfigBuilder::allow_truncated`](crate::ConfigBuilder::allow_truncated)).
    pub truncated: bool,
}

/// A document removed as a duplicate of its cluster's kept document.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Duplicate {
    /// The removed document.
    pub doc: u32,
    /// Its similarity to the kept document.
    pub similarity: Similarity,
}

/// A kept document and its duplicates (at least one).
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    /// The document the cluster keeps.
    pub kept: u32,
    /// The removed documents, in input order.
    pub duplicates: Vec<Duplicate>,
}

impl Cluster {
    /// Number of documents in the cluster, the kept one included.
    pub fn len(&self) -> usize {
        self.duplicates.len() + 1
    }

    /// Never true: a cluster has at least two documents.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// Clusters the documents joined by `links`.
///
/// `len(doc)` gives a document's length for the keep policy; `similar(kept, doc)` says
/// whether `doc` is a duplicate of `kept`, and how close. Clusters come out sorted by their
/// kept document; the result does not depend on the order of `links` or the thread count.
pub fn cluster<L, S>(
    num_docs: usize,
    links: &[(u32, u32)],
    keep: KeepPolicy,
    len: L,
    similar: S,
) -> Vec<Cluster>
where
    L: Fn(u32) -> usize + Sync,
    S: Fn(u32, u32) -> Option<Similarity> + Sync,
{
    cluster_ranked(num_docs, links, |d| keep.rank(d, len(d)), similar)
}

/// [`cluster`] with the keep order given directly: in each cluster the document with the
/// smallest `rank(doc)` is kept (ranks must be distinct, e.g. end in the document).
pub fn cluster_ranked<R, S>(
    num_docs: usize,
    links: &[(u32, u32)],
    rank: R,
    similar: S,
) -> Vec<Cluster>
where
    R: Fn(u32) -> (i128, u32) + Sync,
    S: Fn(u32, u32) -> Option<Similarity> + Sync,
{
    let mut uf = UnionFind::new(num_docs);
    for &(a, b) in links {
        uf.union(a, b);
    }
    let mut linked: Vec<u32> = links.iter().flat_map(|&(a, b)| [a, b]).collect();
    linked.sort_unstable();
    linked.dedup();
    let mut by_root: Vec<(u32, u32)> = linked.iter().map(|&d| (uf.find(d), d)).collect();
    by_root.sort_unstable();
    let components: Vec<&[(u32, u32)]> = by_root.chunk_by(|x, y| x.0 == y.0).collect();

    let mut clusters: Vec<Cluster> = components
        .par_iter()
        .flat_map_iter(|component| {
            let mut docs: Vec<u32> = component.iter().map(|&(_, d)| d).collect();
            docs.sort_by_key(|&d| rank(d));
            stars(&docs, &similar)
        })
        .collect();
    clusters.sort_unstable_by_key(|c| c.kept);
    clusters
}

/// Greedy star cover of one component whose documents come in keep order.
fn stars<S>(docs: &[u32], similar: &S) -> Vec<Cluster>
where
    S: Fn(u32, u32) -> Option<Similarity>,
{
    let mut heads: Vec<Cluster> = Vec::new();
    'docs: for &doc in docs {
        for head in heads.iter_mut() {
            if let Some(similarity) = similar(head.kept, doc) {
                head.duplicates.push(Duplicate { doc, similarity });
                continue 'docs;
            }
        }
        heads.push(Cluster {
            kept: doc,
            duplicates: Vec::new(),
        });
    }
    heads.retain(|c| !c.duplicates.is_empty());
    for c in &mut heads {
        c.duplicates.sort_unstable_by_key(|d| d.doc);
    }
    heads
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim() -> Option<Similarity> {
        Some(Similarity {
            jaccard: Some(1.0),
            estimate: None,
            truncated: false,
        })
    }

    #[test]
    fn union_find_joins_transitively() {
        let mut uf = UnionFind::new(5);
        assert!(uf.union(0, 1));
        assert!(uf.union(3, 4));
        assert!(!uf.union(1, 0));
        assert!(uf.union(1, 4));
        assert_eq!(uf.find(0), uf.find(3));
        assert_ne!(uf.find(2), uf.find(0));
    }

    #[test]
    fn keep_policies_pick_the_right_document() {
        let lens = [5usize, 9, 2];
        let links = [(0, 1), (1, 2)];
        let run = |k| cluster(3, &links, k, |d| lens[d as usize], |_, _| sim());
        assert_eq!(run(KeepPolicy::First)[0].kept, 0);
        assert_eq!(run(KeepPolicy::Last)[0].kept, 2);
        assert_eq!(run(KeepPolicy::Longest)[0].kept, 1);
        assert_eq!(run(KeepPolicy::Shortest)[0].kept, 2);
        let c = &run(KeepPolicy::Longest)[0];
        assert_eq!(
            c.duplicates.iter().map(|d| d.doc).collect::<Vec<_>>(),
            vec![0, 2]
        );
    }

    #[test]
    fn chains_are_split_where_similarity_breaks() {
        // 0~1, 1~2 linked, but 0 and 2 are not similar: 2 must not be a duplicate of 0.
        let links = [(0, 1), (1, 2)];
        let similar = |a: u32, b: u32| {
            let (a, b) = (a.min(b), a.max(b));
            if (a, b) == (0, 2) {
                None
            } else {
                sim()
            }
        };
        let c = cluster(3, &links, KeepPolicy::First, |_| 1, similar);
        // 0 keeps 1; 2 is similar to no kept document except itself: it stays alone.
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].kept, 0);
        assert_eq!(c[0].duplicates[0].doc, 1);
    }

    #[test]
    fn output_is_independent_of_link_order() {
        let links = vec![(4, 5), (0, 1), (1, 2), (7, 9), (2, 3)];
        let mut rev = links.clone();
        rev.reverse();
        let a = cluster(10, &links, KeepPolicy::First, |_| 1, |_, _| sim());
        let b = cluster(10, &rev, KeepPolicy::First, |_| 1, |_, _| sim());
        assert_eq!(a, b);
        assert_eq!(a.iter().map(|c| c.kept).collect::<Vec<_>>(), vec![0, 4, 7]);
        assert_eq!(a[0].len(), 4);
    }

    #[test]
    fn parses_policies() {
        assert_eq!("longest".parse::<KeepPolicy>(), Ok(KeepPolicy::Longest));
        assert_eq!("last".parse::<KeepPolicy>(), Ok(KeepPolicy::Last));
        assert!("biggest".parse::<KeepPolicy>().is_err());
    }
}
