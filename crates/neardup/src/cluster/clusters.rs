//! Verified links → clusters, each a kept document and the documents that duplicate it.
//!
//! Links are joined with union-find into connected components. Linking is transitive but
//! similarity is not (A ~ B and B ~ C does not make A ~ C), so inside a component every
//! document is checked against the component's kept documents, in keep-policy order: the
//! first kept document it is similar to claims it, and a document similar to none is kept
//! itself and heads a cluster of its own. Every removed document is thus similar to the
//! very document it is reported a duplicate of.

use rayon::prelude::*;

use crate::corpus::slot::{check_documents, doc_id, doc_ids, Slot};
use crate::error::{by_name, Error};

/// Which document of a cluster is kept.
///
/// Printed and parsed by its [name](KeepPolicy::name); with the `clap` feature it is a
/// `clap::ValueEnum` under the same names, its variants' first paragraphs as their help.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum KeepPolicy {
    /// The first in input order (the default).
    #[default]
    #[cfg_attr(feature = "clap", value(name = "first"))]
    First,
    /// The last in input order (e.g. the latest re-post of a listing).
    #[cfg_attr(feature = "clap", value(name = "last"))]
    Last,
    /// The longest text (ties: the first).
    #[cfg_attr(feature = "clap", value(name = "longest"))]
    Longest,
    /// The shortest text (ties: the first).
    #[cfg_attr(feature = "clap", value(name = "shortest"))]
    Shortest,
}

by_name!(KeepPolicy, Error::InvalidKeepPolicy);

impl KeepPolicy {
    /// Every policy, the default first.
    pub const ALL: [KeepPolicy; 4] = [
        KeepPolicy::First,
        KeepPolicy::Last,
        KeepPolicy::Longest,
        KeepPolicy::Shortest,
    ];

    /// The policy's name: `first`, `last`, `longest`, `shortest`.
    pub fn name(self) -> &'static str {
        match self {
            KeepPolicy::First => "first",
            KeepPolicy::Last => "last",
            KeepPolicy::Longest => "longest",
            KeepPolicy::Shortest => "shortest",
        }
    }

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

/// Disjoint sets over indices (path halving, union by size).
#[derive(Clone, Debug)]
pub(crate) struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    /// `n` singleton sets; `n` is bounded by the document count.
    pub(crate) fn new(n: usize) -> Self {
        UnionFind {
            parent: doc_ids(n).collect(),
            size: vec![1; n],
        }
    }

    /// The representative of `x`'s set.
    pub(crate) fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    /// Joins the sets of `a` and `b`; true if they were apart.
    pub(crate) fn union(&mut self, a: u32, b: u32) -> bool {
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
    /// Hamming distance of the two documents' SimHash fingerprints, in a SimHash run.
    pub hamming: Option<u32>,
}

impl Similarity {
    /// The best value known: the exact Jaccard when it was computed, else the estimate;
    /// `None` for a pair reported with neither (no verification, no signatures).
    pub fn value(&self) -> Option<f64> {
        self.jaccard.or(self.estimate)
    }
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

/// Clusters the documents `0..num_docs` joined by `links`.
///
/// `len(doc)` gives a document's length for the keep policy; `similar(kept, doc)` says
/// whether `doc` is a duplicate of `kept`, and how close. Clusters come out sorted by their
/// kept document; the result does not depend on the order of `links` or the thread count.
/// More than `u32::MAX` documents is [`Error::TooManyDocuments`](crate::Error).
///
/// # Panics
///
/// If a link names a document `>= num_docs`.
pub fn cluster<L, S>(
    num_docs: usize,
    links: &[(u32, u32)],
    keep: KeepPolicy,
    len: L,
    similar: S,
) -> crate::Result<Vec<Cluster>>
where
    L: Fn(u32) -> usize + Sync,
    S: Fn(u32, u32) -> Option<Similarity> + Sync,
{
    cluster_ranked(num_docs, links, |d| keep.rank(d, len(d)), similar)
}

/// [`cluster`] with the keep order given directly: in each cluster the document with the
/// smallest `rank(doc)` is kept (ranks must be distinct, e.g. end in the document).
///
/// # Panics
///
/// If a link names a document `>= num_docs`.
pub(crate) fn cluster_ranked<R, S>(
    num_docs: usize,
    links: &[(u32, u32)],
    rank: R,
    similar: S,
) -> crate::Result<Vec<Cluster>>
where
    R: Fn(u32) -> (i128, u32) + Sync,
    S: Fn(u32, u32) -> Option<Similarity> + Sync,
{
    check_documents(num_docs)?;
    let alone: Vec<u32> = doc_ids(num_docs).collect();
    Ok(cluster_sets(&alone, num_docs, links, 0, rank, similar).to_vec())
}

/// Clusters documents that come in groups of identical ones, working on the groups.
///
/// `set_of[doc]` numbers each document's group (below `sets`): documents of one group are
/// identical, so whatever is similar to one is similar to all, and `similar(a, b)` is
/// asked once per group of two or more for two of its members (if it says no, the
/// group's other members stay out of its cluster). `links` join documents as in
/// [`cluster_ranked`]; a group is represented by its first document in keep order.
/// The result is that of [`cluster_ranked`] with every group's documents linked, but
/// the work and the memory of clustering grow with the number of groups: a copy costs
/// 4 bytes (8 if removed) in the result.
///
/// `set_of` holds at most `u32::MAX` documents, the library's limit
/// ([`Error::TooManyDocuments`](crate::Error)); checked in debug builds only.
///
/// Documents `0..reference` are a reference (see [`Clusters::reference`]): they come
/// first in keep order, are never removed and always head their clusters, and a cluster
/// is made only for the other documents; each of those joins the most similar reference
/// head, else the most similar other head (as an index deduplicating a batch does).
///
/// # Panics
///
/// If a group number is `>= sets` or a link names a document past `set_of`.
pub(crate) fn cluster_sets<R, S>(
    set_of: &[u32],
    sets: usize,
    links: &[(u32, u32)],
    reference: u32,
    rank: R,
    similar: S,
) -> Clusters
where
    R: Fn(u32) -> (i128, u32) + Sync,
    S: Fn(u32, u32) -> Option<Similarity> + Sync,
{
    let rank = |d: u32| {
        if d < reference {
            (i128::MIN, d)
        } else {
            rank(d)
        }
    };
    // With a reference: which groups hold a document that is not in it (only those are
    // ever listed in a cluster).
    let mut has_new = (reference > 0).then(|| vec![false; sets]);
    // Per group: its size, its first document in keep order, and one other member (the
    // size says which of these a group has: no sentinel needed).
    let mut size = vec![0u32; sets];
    let mut leader = vec![0u32; sets];
    let mut other = vec![0u32; sets];
    for (d, &s) in set_of.iter().enumerate() {
        let (d, s) = (doc_id(d), s as usize);
        if let Some(has_new) = has_new.as_mut() {
            has_new[s] |= d >= reference;
        }
        if size[s] == 0 {
            leader[s] = d;
        } else if rank(d) < rank(leader[s]) {
            other[s] = leader[s];
            leader[s] = d;
        } else {
            other[s] = d;
        }
        size[s] += 1;
    }
    let links: Vec<(u32, u32)> = links
        .iter()
        .map(|&(a, b)| (set_of[a as usize], set_of[b as usize]))
        .filter(|(a, b)| a != b)
        .collect();
    let mut uf = UnionFind::new(sets);
    for &(a, b) in &links {
        uf.union(a, b);
    }
    let mut involved: Vec<u32> = links.iter().flat_map(|&(a, b)| [a, b]).collect();
    involved.extend(doc_ids(sets).filter(|&s| size[s as usize] > 1));
    drop(links);
    involved.sort_unstable();
    involved.dedup();
    let mut by_root: Vec<(u32, u32)> = involved.iter().map(|&s| (uf.find(s), s)).collect();
    drop((involved, uf));
    by_root.sort_unstable();
    let components: Vec<&[(u32, u32)]> = by_root.chunk_by(|x, y| x.0 == y.0).collect();

    // Per cluster: its kept document and its groups with their similarity to it.
    let mut found: Vec<(u32, Vec<(u32, Similarity)>)> = components
        .par_iter()
        .flat_map_iter(|component| {
            let mut groups: Vec<u32> = component.iter().map(|&(_, s)| s).collect();
            groups.sort_by_key(|&s| rank(leader[s as usize]));
            let leader = |s: u32| leader[s as usize];
            let heads = match reference {
                0 => stars(&groups, leader, &similar),
                _ => reference_stars(&groups, leader, |s| leader(s) < reference, &similar),
            };
            let listed = |h: usize| has_new.as_ref().is_none_or(|n| n[h]);
            let found: Vec<_> = heads
                .into_iter()
                .filter_map(|(head, mut joined)| {
                    let h = head as usize;
                    if size[h] > 1 && listed(h) {
                        if let Some(sim) = similar(leader(head), other[h]) {
                            joined.push((head, sim));
                        }
                    }
                    (!joined.is_empty()).then_some((leader(head), joined))
                })
                .collect();
            found
        })
        .collect();
    drop(by_root);
    found.sort_unstable_by_key(|c| c.0);

    // Clusters and entries are fewer than groups, which are fewer than documents.
    let mut entry_of_set = vec![Slot::NONE; sets];
    let mut entries = Vec::new();
    let mut kept = Vec::with_capacity(found.len());
    for (c, (k, groups)) in found.into_iter().enumerate() {
        kept.push(k);
        for (s, sim) in groups {
            entry_of_set[s as usize] = Slot::new(doc_id(entries.len()));
            entries.push((doc_id(c), sim));
        }
    }
    let entry_of: Vec<Slot> = set_of.iter().map(|&s| entry_of_set[s as usize]).collect();
    drop(entry_of_set);
    // The removed documents, cluster by cluster, in input order (a counting sort).
    let mut start = vec![0usize; kept.len() + 1];
    let cluster_of = |d: usize| -> Option<usize> {
        let e = entry_of[d].get()?;
        let c = entries[e as usize].0 as usize;
        (kept[c] != doc_id(d) && doc_id(d) >= reference).then_some(c)
    };
    for d in 0..entry_of.len() {
        if let Some(c) = cluster_of(d) {
            start[c + 1] += 1;
        }
    }
    for c in 0..kept.len() {
        start[c + 1] += start[c];
    }
    let mut members = vec![0u32; start[kept.len()]];
    let mut next = start.clone();
    for d in 0..entry_of.len() {
        if let Some(c) = cluster_of(d) {
            members[next[c]] = doc_id(d);
            next[c] += 1;
        }
    }
    Clusters {
        kept,
        start,
        members,
        entry_of,
        entries,
        reference,
        drop_all: false,
    }
}

/// Greedy star cover of one component whose groups come in keep order: each joins the
/// first head its leader is similar to, or becomes a head. Heads with what joined them.
fn stars<S>(
    groups: &[u32],
    leader: impl Fn(u32) -> u32,
    similar: &S,
) -> Vec<(u32, Vec<(u32, Similarity)>)>
where
    S: Fn(u32, u32) -> Option<Similarity>,
{
    let mut heads: Vec<(u32, Vec<(u32, Similarity)>)> = Vec::new();
    'groups: for &g in groups {
        for (head, joined) in heads.iter_mut() {
            if let Some(similarity) = similar(leader(*head), leader(g)) {
                joined.push((g, similarity));
                continue 'groups;
            }
        }
        heads.push((g, Vec::new()));
    }
    heads
}

/// The star cover with a reference: each reference group heads a cluster of its own; every
/// other group joins the reference head it is most similar to, else the most similar
/// other head, else heads a cluster (ties: the first in keep order). So a document is
/// removed exactly when it is similar to a reference document or to an earlier kept one,
/// and names the one an index deduplicating it would name.
fn reference_stars<S>(
    groups: &[u32],
    leader: impl Fn(u32) -> u32,
    in_reference: impl Fn(u32) -> bool,
    similar: &S,
) -> Vec<(u32, Vec<(u32, Similarity)>)>
where
    S: Fn(u32, u32) -> Option<Similarity>,
{
    let mut heads: Vec<(u32, Vec<(u32, Similarity)>)> = Vec::new();
    for &g in groups {
        if in_reference(g) {
            heads.push((g, Vec::new()));
            continue;
        }
        let score = |s: &Similarity| s.value().unwrap_or(0.0);
        let mut best: Option<(usize, Similarity, bool)> = None;
        for (i, (head, _)) in heads.iter().enumerate() {
            let from_reference = in_reference(*head);
            if best.is_some_and(|(_, _, r)| r && !from_reference) {
                break;
            }
            if let Some(s) = similar(leader(*head), leader(g)) {
                if best.is_none_or(|(_, b, _)| score(&s) > score(&b)) {
                    best = Some((i, s, from_reference));
                }
            }
        }
        match best {
            Some((i, s, _)) => heads[i].1.push((g, s)),
            None => heads.push((g, Vec::new())),
        }
    }
    heads
}

/// Clusters held compactly: per document 4 bytes, per removed document 4 more, per
/// group of identical documents in a cluster one similarity.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Clusters {
    /// Each cluster's kept document, ascending.
    kept: Vec<u32>,
    /// Where each cluster's removed documents start in `members`, and a final end.
    start: Vec<usize>,
    /// The removed documents, cluster by cluster, each cluster's in input order.
    members: Vec<u32>,
    /// Each document's entry in `entries`, none if it is in no cluster.
    entry_of: Vec<Slot>,
    /// Per group of identical documents in a cluster: the cluster, and the similarity of
    /// the group's removed documents to the kept one.
    entries: Vec<(u32, Similarity)>,
    /// Documents `0..reference` are the reference: never removed.
    reference: u32,
    /// Every document of a cluster is removed, its kept one too ([`Clusters::drop_all`]).
    drop_all: bool,
}

/// One cluster of [`Clusters`].
#[derive(Clone, Copy, Debug)]
pub struct ClusterRef<'a> {
    clusters: &'a Clusters,
    index: usize,
}

impl<'a> ClusterRef<'a> {
    /// The document the cluster keeps.
    pub fn kept(&self) -> u32 {
        self.clusters.kept[self.index]
    }

    /// The removed documents, in input order, with their similarity to the kept one.
    pub fn duplicates(&self) -> impl ExactSizeIterator<Item = Duplicate> + 'a {
        let c = self.clusters;
        c.members[c.start[self.index]..c.start[self.index + 1]]
            .iter()
            .map(move |&doc| Duplicate {
                doc,
                similarity: c
                    .entry(doc)
                    .expect("cluster_sets lists as members only documents with an entry")
                    .1,
            })
    }

    /// Number of documents in the cluster, the kept one included.
    pub fn len(&self) -> usize {
        self.clusters.start[self.index + 1] - self.clusters.start[self.index] + 1
    }

    /// Never true: a cluster has at least two documents.
    pub fn is_empty(&self) -> bool {
        false
    }
}

impl Clusters {
    /// Number of clusters.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// True if there are no clusters.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Number of removed documents, over all clusters (with [`Clusters::drop_all`], the
    /// kept documents outside the reference too).
    pub fn removed(&self) -> usize {
        let heads = if self.drop_all {
            self.kept.iter().filter(|&&k| k >= self.reference).count()
        } else {
            0
        };
        self.members.len() + heads
    }

    /// Documents `0..reference()` are a reference corpus (see
    /// [`Held::set_reference`](crate::Held::set_reference)): they are never removed,
    /// always kept in their clusters, and every cluster holds a document past them.
    pub fn reference(&self) -> u32 {
        self.reference
    }

    /// Removes every document of a cluster, the kept one too (unless it is in the
    /// reference), for users who want none of a duplicated text: a kept document is then
    /// reported by [`Clusters::duplicate_of`] as a duplicate of its cluster's first
    /// removed document, which is similar to it. The clusters themselves are unchanged.
    pub fn drop_all(&mut self) {
        self.drop_all = true;
    }

    /// The clusters, sorted by kept document.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = ClusterRef<'_>> {
        (0..self.len()).map(|index| ClusterRef {
            clusters: self,
            index,
        })
    }

    /// The kept document a removed document duplicates, and how similar they are;
    /// `None` for a document that is not removed.
    pub fn duplicate_of(&self, doc: u32) -> Option<(u32, Similarity)> {
        if doc < self.reference {
            return None;
        }
        if self.drop_all {
            if let Ok(c) = self.kept.binary_search(&doc) {
                let first = self.members[self.start[c]];
                return Some((first, self.entry(first)?.1));
            }
        }
        let (c, similarity) = self.entry(doc)?;
        let kept = self.kept[c as usize];
        (kept != doc).then_some((kept, similarity))
    }

    /// A document's cluster and its similarity to the kept one, if it is in a cluster.
    fn entry(&self, doc: u32) -> Option<(u32, Similarity)> {
        let e = self.entry_of.get(doc as usize)?.get()?;
        Some(self.entries[e as usize])
    }

    /// The clusters as plain structs (one [`Duplicate`] per removed document).
    pub fn to_vec(&self) -> Vec<Cluster> {
        self.iter()
            .map(|c| Cluster {
                kept: c.kept(),
                duplicates: c.duplicates().collect(),
            })
            .collect()
    }

    /// Bytes of heap held (capacities), for tests that bound what a document costs.
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        self.kept.capacity() * 4
            + self.start.capacity() * std::mem::size_of::<usize>()
            + self.members.capacity() * 4
            + self.entry_of.capacity() * std::mem::size_of::<Slot>()
            + self.entries.capacity() * std::mem::size_of::<(u32, Similarity)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_policies_print_and_parse_by_name() {
        crate::error::assert_named(&KeepPolicy::ALL);
        assert_eq!(
            "biggest".parse::<KeepPolicy>(),
            Err(Error::InvalidKeepPolicy("biggest".into()))
        );
    }

    fn sim() -> Option<Similarity> {
        Some(Similarity {
            jaccard: Some(1.0),
            estimate: None,
            truncated: false,
            hamming: None,
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
        let run = |k| cluster(3, &links, k, |d| lens[d as usize], |_, _| sim()).unwrap();
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
        let c = cluster(3, &links, KeepPolicy::First, |_| 1, similar).unwrap();
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
        let a = cluster(10, &links, KeepPolicy::First, |_| 1, |_, _| sim()).unwrap();
        let b = cluster(10, &rev, KeepPolicy::First, |_| 1, |_, _| sim()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.iter().map(|c| c.kept).collect::<Vec<_>>(), vec![0, 4, 7]);
        assert_eq!(a[0].len(), 4);
    }

    /// Groups of identical documents cluster as if each member were linked to the others.
    #[test]
    fn groups_cluster_like_linked_documents() {
        // Sets: 0 = {0, 2, 6, 9}, 1 = {1, 4}, 2 = {3}, 3 = {5, 7}, 4 = {8}, 5 = {10, 11}.
        let set_of = [0, 1, 0, 2, 1, 3, 0, 3, 4, 0, 5, 5];
        let links = [(0, 1), (1, 3), (3, 5), (8, 10)];
        // Sets 0 and 2 are not similar (the chain 0 ~ 1 ~ 2 breaks); 4 and 5 are not.
        let similar_sets = |a: u32, b: u32| !matches!((a.min(b), a.max(b)), (0, 2) | (4, 5));
        let by_doc =
            |a: u32, b: u32| similar_sets(set_of[a as usize], set_of[b as usize]).then(sim)?;
        let mut all_links = links.to_vec();
        for (d, &s) in set_of.iter().enumerate() {
            let first = set_of.iter().position(|&x| x == s).unwrap() as u32;
            if first != d as u32 {
                all_links.push((first, d as u32));
            }
        }
        let n = set_of.len();
        let ranks: [&(dyn Fn(u32) -> (i128, u32) + Sync); 3] =
            [&|d| (0, d), &|d| (-i128::from(d), d), &|d| {
                (i128::from((d * 7) % 12), d)
            }];
        for rank in ranks {
            let grouped = cluster_sets(&set_of, 6, &links, 0, rank, by_doc).to_vec();
            let plain = cluster_ranked(n, &all_links, rank, by_doc).unwrap();
            assert_eq!(grouped, plain);
            assert!(grouped.len() >= 2);
        }
        let c = cluster_sets(&set_of, 6, &links, 0, |d| (0, d), by_doc);
        assert_eq!(c.duplicate_of(2), Some((0, sim().unwrap())));
        assert_eq!(c.duplicate_of(0), None, "kept");
        assert_eq!(c.removed(), c.iter().map(|c| c.len() - 1).sum::<usize>());
    }

    /// A copy costs 8 bytes in the result (4 if not removed), never a `Duplicate`.
    #[test]
    fn copies_cost_a_few_bytes_each() {
        let n = 100_000u32;
        // Set 0: all but ten documents; sets 1..=10: one document each, 1 and 2 linked.
        let set_of: Vec<u32> = (0..n)
            .map(|d| if d % 10_000 == 5 { 1 + d / 10_000 } else { 0 })
            .collect();
        let c = cluster_sets(
            &set_of,
            11,
            &[(5, 10_005)],
            0,
            |d| (-i128::from(d), d),
            |_, _| sim(),
        );
        assert_eq!(c.len(), 2);
        assert_eq!(c.removed(), (n - 10) as usize);
        // Keep the last: the last copy is kept, the first removed.
        assert_eq!(c.duplicate_of(0).map(|(k, _)| k), Some(n - 1));
        assert_eq!(c.duplicate_of(5).map(|(k, _)| k), Some(10_005));
        let per_doc = c.heap_bytes() as f64 / f64::from(n);
        assert!(per_doc <= 8.1, "{per_doc} bytes per document");
    }

    /// A reference document heads its own cluster even when it is similar to another:
    /// a new document similar only to it is removed (as an index would reject it), and
    /// names it.
    #[test]
    fn reference_documents_always_head_their_clusters() {
        // 0 ~ 1 ~ 2 linked; 0 and 2 are not similar. 0 and 1 are the reference.
        let links = [(0, 1), (1, 2)];
        let similar = |a: u32, b: u32| (a.min(b), a.max(b)).ne(&(0, 2)).then(sim)?;
        let c = cluster_sets(&[0, 1, 2], 3, &links, 2, |d| (0, d), similar);
        assert_eq!(c.duplicate_of(2), Some((1, sim().unwrap())));
        assert_eq!((c.duplicate_of(0), c.duplicate_of(1)), (None, None));
        assert_eq!(
            c.len(),
            1,
            "the reference's own cluster holds no new document"
        );
        // Without a reference, 1 joins 0 and 2 stays alone.
        let plain = cluster_sets(&[0, 1, 2], 3, &links, 0, |d| (0, d), similar);
        assert_eq!(plain.duplicate_of(2), None);
    }

    /// Copies inside the reference are neither removed nor listed; a new copy of them is
    /// removed as a duplicate of the first, whatever the keep policy says.
    #[test]
    fn copies_in_the_reference_stay_and_new_copies_go() {
        // Set 0: docs 0, 1 (reference) and 3 (new); set 1: doc 2 (reference) alone.
        let set_of = [0, 0, 1, 0];
        let last = |d: u32| (-i128::from(d), d);
        let c = cluster_sets(&set_of, 2, &[], 3, last, |_, _| sim());
        assert_eq!(c.duplicate_of(3), Some((0, sim().unwrap())));
        assert_eq!(c.removed(), 1);
        let clusters = c.to_vec();
        assert_eq!(clusters.len(), 1);
        assert_eq!(clusters[0].kept, 0);
        assert_eq!(clusters[0].duplicates.len(), 1);
        // Only reference copies: no cluster at all.
        let none = cluster_sets(&set_of[..3], 2, &[], 3, last, |_, _| sim());
        assert!(none.is_empty());
    }

    /// Past the 32-bit numbering, clustering refuses before allocating anything.
    #[test]
    fn too_many_documents_are_an_error() {
        let n = crate::corpus::slot::MAX_DOCUMENTS + 1;
        let refused = cluster(n, &[], KeepPolicy::First, |_| 1, |_, _| sim());
        assert_eq!(refused, Err(crate::Error::TooManyDocuments(n)));
    }

    #[test]
    fn parses_policies() {
        assert_eq!("longest".parse::<KeepPolicy>(), Ok(KeepPolicy::Longest));
        assert_eq!("last".parse::<KeepPolicy>(), Ok(KeepPolicy::Last));
        assert!("biggest".parse::<KeepPolicy>().is_err());
    }
}
