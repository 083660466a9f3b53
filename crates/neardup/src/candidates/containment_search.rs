//! Containment runs: documents contained in larger ones at the threshold, by the LSH
//! Ensemble-style search ([`EnsemblePlan`]) or by the exact containment join, both on the
//! representatives of the groups of identical sets, then expanded to the copies.

use std::convert::Infallible;

use rayon::prelude::*;

use crate::candidates::bands::BandPlan;
use crate::candidates::containment::{
    contained, is_smaller, without_common, Contained, ContainmentJoin, EnsemblePlan, TokenCounter,
    MAX_ONE_ROW_BUCKET,
};
use crate::candidates::source::{
    gather, CandidateSource, JoinedContainment, Judge, Link, Listed, Take,
};
use crate::corpus::sets::Corpus;
use crate::corpus::slot::doc_ids;
use crate::corpus::stages::Shingled;
use crate::error::{Error, Result};
use crate::run::observer::Observer;
use crate::run::pairs::Groups;
use crate::run::pipeline::{Pipeline, PAIR_CHUNK};
use crate::run::stats::{Stage, Stats};
use crate::run::stream::STREAM_CHUNK;
use crate::sketch::classic::Sketch;
use crate::sketch::document::{DocSet, DocSketch, FamilySketch};
use crate::text::ids::SketchInput;
use crate::verify::verifier::Tally;

/// What one band (or all of them) gave.
#[derive(Default)]
struct BandLinks {
    /// Candidates `(a, b)`, indices of representatives, `a` the smaller (empty once
    /// counted in a total).
    links: Vec<(u32, u32)>,
    /// Buckets of two or more.
    buckets: u64,
    /// The largest bucket.
    largest: usize,
    /// One-row buckets passed over ([`MAX_ONE_ROW_BUCKET`]).
    skipped: u64,
}

/// The band keys of one row count r: K / r keys per representative, back to back.
struct Keys {
    rows: usize,
    bands: usize,
    keys: Vec<u64>,
}

impl Keys {
    fn of(&self, rep: usize) -> &[u64] {
        &self.keys[rep * self.bands..(rep + 1) * self.bands]
    }
}

impl Pipeline {
    /// The containment search's plan under this configuration: the threshold as a
    /// containment, the signature length K.
    pub fn ensemble_plan(&self) -> EnsemblePlan {
        EnsemblePlan::new(self.config.tested_threshold(), self.config.num_perm())
    }

    /// The sketch the containment search signs every size with: the configured MinHash
    /// sketch of the largest sizes (one-permutation hashing, or classic), the same
    /// function for every document so that any two can collide.
    fn ensemble_sketch(&self) -> Result<&dyn Sketch> {
        match self.families.last() {
            Some(family) if self.config.sketch().is_minhash() => Ok(family.sketch.as_ref()),
            _ => Err(Error::NotForSimHash("containment")),
        }
    }

    /// One document's keys in every table of the containment search
    /// ([`EnsemblePlan::table_bands`]: for each row count, K / r band keys, back to back),
    /// signed over its tokens not in `common` (sorted; tokens held by more than a share of the sets, `COMMON_TOKEN_SHARE`): equal to
    /// those the batch search gives the same set under the same common tokens. They are
    /// one family, numbered 0; an empty document has none. SimHash is refused.
    ///
    /// ```
    /// use neardup::{Config, Measure, Pipeline};
    /// let config = Config::builder().measure(Measure::Containment).threshold(0.8).build()?;
    /// let pipeline = Pipeline::new(config)?;
    /// let doc = pipeline.shingle_doc("a short listing of a bike");
    /// let keys = pipeline.ensemble_keys(&doc, &[])?;
    /// assert_eq!(keys.band_keys(0).unwrap().len(), pipeline.ensemble_plan().table_bands());
    /// # Ok::<(), neardup::Error>(())
    /// ```
    pub fn ensemble_keys(&self, doc: &DocSet, common: &[u64]) -> Result<DocSketch> {
        let sketch = self.ensemble_sketch()?;
        if doc.set().is_empty() {
            return Ok(DocSketch::new(Vec::new()));
        }
        let plan = self.ensemble_plan();
        let k = plan.num_perm();
        let mut sig = vec![0u64; k];
        let values = self
            .config
            .sketch_input()
            .values(&without_common(doc.set(), common));
        sketch.sketch_into(&values, &mut sig);
        let mut keys = vec![0u64; plan.table_bands()];
        let mut start = 0;
        for rows in plan.tables() {
            let bands = BandPlan::new(k / rows, rows, k).expect("fits the signature");
            bands.band_keys_into(&sig, &mut keys[start..start + k / rows]);
            start += k / rows;
        }
        Ok(DocSketch::new(vec![FamilySketch::new(0, keys, Vec::new())]))
    }

    /// Every document contained at the threshold in a larger one (|A ∩ B| / |A| ≥ t, A the
    /// smaller), found by an LSH Ensemble-style search and verified exactly, sorted by
    /// `(a, b)`. Identical documents contain each other (the lower number is `a`).
    ///
    /// Documents are partitioned by set size; each pair is looked for with the rows per
    /// band [`EnsemblePlan::rows`] gives its smaller document against the larger's
    /// partition, in the first band where their keys agree. The signature is the
    /// configured MinHash sketch over every size (one-permutation hashing, or classic);
    /// SimHash is refused ([`Error::NotForSimHash`]).
    ///
    /// ```
    /// use neardup::{Config, Pipeline, Quiet};
    /// let pipeline = Pipeline::new(Config::builder().threshold(0.9).build()?)?;
    /// let brief = "Markets closed higher on Friday after a quiet week of trading";
    /// let digest = format!("Weather: rain all weekend, clearing on Monday. {brief}. Sport: the cup final ends in a draw.");
    /// let corpus = pipeline.shingle(&[digest.as_str(), brief])?;
    /// let (pairs, _) = pipeline.containment_pairs(&corpus, &mut Quiet)?;
    /// assert_eq!((pairs[0].a, pairs[0].b), (1, 0)); // the brief is inside the digest
    /// assert_eq!(pairs[0].containment, 1.0);
    /// # Ok::<(), neardup::Error>(())
    /// ```
    pub fn containment_pairs(
        &self,
        shingled: &Shingled,
        observer: &mut dyn Observer,
    ) -> Result<(Vec<Contained>, Stats)> {
        let (found, stats) = self.ensemble_found(shingled, observer)?;
        Ok((expand(&shingled.corpus, found), stats))
    }

    /// The containment search's pairs of representatives (not yet expanded to copies).
    pub(crate) fn ensemble_found(
        &self,
        shingled: &Shingled,
        observer: &mut dyn Observer,
    ) -> Result<(Vec<Contained>, Stats)> {
        let sketch = self.ensemble_sketch()?;
        let corpus = &shingled.corpus;
        let mut stats = shingled.stats.clone();
        let plan = self.ensemble_plan();
        observer.start(Stage::Sketch, 0);
        let filtering = std::time::Instant::now();
        let search = Search::new(corpus);
        let filtering = filtering.elapsed();
        let (rows_of, keys) = stats.time(Stage::Sketch, || search.keys(&plan, sketch));
        stats.add_time(Stage::Sketch, filtering);
        observer.finish();
        // The bands are searched a few at a time and each batch of candidates verified at
        // once: the candidates are never held whole.
        let mut bands = EnsembleBands::new(&search, &keys, &rows_of);
        let judge = Containment {
            corpus,
            reps: &search.reps,
            threshold: self.config.tested_threshold(),
        };
        observer.start(Stage::Verify, 0);
        let start = std::time::Instant::now();
        let (found, judged) = gather(&mut bands, &judge, observer);
        observer.finish();
        stats.spend(Stage::Group, start.elapsed().saturating_sub(judged.judging));
        stats.spend(Stage::Verify, judged.judging);
        let counted = &bands.counted;
        stats.buckets = counted.buckets;
        stats.largest_bucket = counted.largest as u64;
        stats.skipped_buckets = counted.skipped;
        stats.candidates = judged.tally.candidates;
        stats.verified = judged.tally.verified;
        Ok((found, stats))
    }

    /// Every document contained at the threshold in a larger one, by the exact
    /// containment join ([`ContainmentJoin`]): the ground truth of
    /// [`Pipeline::containment_pairs`], in the same order and form.
    pub fn exact_containment_pairs(
        &self,
        shingled: &Shingled,
        observer: &mut dyn Observer,
    ) -> (Vec<Contained>, Stats) {
        let (found, stats) = self.containment_join_found(shingled, observer);
        (expand(&shingled.corpus, found), stats)
    }

    /// The exact containment join's pairs of representatives (not yet expanded).
    pub(crate) fn containment_join_found(
        &self,
        shingled: &Shingled,
        observer: &mut dyn Observer,
    ) -> (Vec<Contained>, Stats) {
        let corpus = &shingled.corpus;
        let mut stats = shingled.stats.clone();
        observer.start(Stage::ExactJoin, 0);
        let (found, join) = stats.time(Stage::ExactJoin, || {
            let sets = corpus.representative_sets();
            ContainmentJoin::new(self.config.tested_threshold()).join(&sets)
        });
        observer.finish();
        stats.candidates = join.candidates;
        stats.postings = join.postings;
        stats.merged = join.merged;
        stats.verified = found.len() as u64;
        let (found, _) = gather(&mut Listed(&found), &JoinedContainment, observer);
        (found, stats)
    }
}

/// The containment search over a corpus's representatives: what it sees of each set (its
/// tokens not common to much of the corpus), their keys, and the candidates they share.
struct Search<'c> {
    corpus: &'c Corpus,
    reps: Vec<u32>,
    /// Each representative's set without the common tokens (the whole set if all are).
    sets: Vec<Vec<u32>>,
    /// Partitions of filtered set sizes, one past the largest used.
    partitions: usize,
}

impl<'c> Search<'c> {
    fn new(corpus: &'c Corpus) -> Self {
        let reps = corpus.members();
        let sets: Vec<Vec<u32>> = {
            let whole: Vec<&[u32]> = reps.iter().map(|&d| corpus.set(d)).collect();
            let mut counter = TokenCounter::new();
            counter.add(&whole);
            let common = counter.common();
            whole
                .par_iter()
                .map(|s| without_common(s, &common).into_owned())
                .collect()
        };
        let partitions = sets
            .iter()
            .map(|s| EnsemblePlan::partition(s.len()) + 1)
            .max()
            .unwrap_or(0);
        Search {
            corpus,
            reps,
            sets,
            partitions,
        }
    }

    /// Filtered sizes place a set in its partition (its keys are of the filtered set).
    fn size(&self, i: usize) -> usize {
        self.sets[i].len()
    }

    /// Whole sizes say which of two documents is the smaller, as the exact join does.
    fn whole(&self, i: usize) -> usize {
        self.corpus.set(self.reps[i]).len()
    }

    /// Per representative and partition, the rows its pairs there are looked for with;
    /// and the band keys of every row count used.
    fn keys(&self, plan: &EnsemblePlan, sketch: &dyn Sketch) -> (Vec<u8>, Vec<Keys>) {
        let partitions = self.partitions;
        let rows_of: Vec<u8> = (0..self.reps.len())
            .into_par_iter()
            .flat_map_iter(|i| {
                let a = self.size(i);
                // Every partition: a set smaller in whole may be larger once filtered.
                (0..partitions).map(move |j| plan.rows(a, j) as u8)
            })
            .collect();
        let mut used: Vec<usize> = rows_of.iter().map(|&r| r as usize).collect();
        used.par_sort_unstable();
        used.dedup();
        let k = plan.num_perm();
        let mut keys: Vec<Keys> = used
            .iter()
            .map(|&rows| Keys {
                rows,
                bands: k / rows,
                keys: vec![0; self.reps.len() * (k / rows)],
            })
            .collect();
        let signatures: Vec<Vec<u64>> = self
            .sets
            .par_iter()
            .map(|set| {
                let mut sig = vec![0u64; k];
                sketch.sketch_into(&SketchInput::Ids.values(set), &mut sig);
                sig
            })
            .collect();
        for kind in &mut keys {
            let bands = BandPlan::new(kind.bands, kind.rows, k).expect("fits the signature");
            kind.keys
                .par_chunks_mut(kind.bands)
                .zip(&signatures)
                .for_each(|(out, sig)| bands.band_keys_into(sig, out));
        }
        (rows_of, keys)
    }

    /// The keys of each one-row band's oversized buckets: a pair that shares one of them
    /// has not been looked at there, so a later band must.
    fn oversized(&self, keys: &[Keys]) -> Vec<Vec<u64>> {
        let Some(kind) = keys.iter().find(|k| k.rows == 1) else {
            return Vec::new();
        };
        (0..kind.bands)
            .into_par_iter()
            .map(|band| {
                let mut column: Vec<u64> = (0..self.reps.len()).map(|i| kind.of(i)[band]).collect();
                column.sort_unstable();
                column
                    .chunk_by(|x, y| x == y)
                    .filter(|run| run.len() > MAX_ONE_ROW_BUCKET)
                    .map(|run| run[0])
                    .collect()
            })
            .collect()
    }

    /// One band's candidates, each pair in the first band its keys agree in (and not
    /// passed over there), looked for with the row count its smaller set asks for
    /// against the larger one's partition.
    fn band_links(
        &self,
        (kind, band): (&Keys, usize),
        oversized: &[Vec<u64>],
        rows_of: &[u8],
    ) -> BandLinks {
        let passed_over = |kind: &Keys, band: usize, key: u64| {
            kind.rows == 1 && oversized[band].binary_search(&key).is_ok()
        };
        let rows_for = |i: usize, j: usize| rows_of[i * self.partitions + j] as usize;
        let mut records: Vec<(u64, u32)> = (0..self.reps.len())
            .map(|i| (kind.of(i)[band], i as u32))
            .collect();
        records.sort_unstable();
        let mut found = BandLinks::default();
        for run in records.chunk_by(|x, y| x.0 == y.0).filter(|r| r.len() > 1) {
            found.buckets += 1;
            found.largest = found.largest.max(run.len());
            if passed_over(kind, band, run[0].0) {
                found.skipped += 1;
                continue;
            }
            for (n, &(_, x)) in run.iter().enumerate() {
                for &(_, y) in &run[n + 1..] {
                    let (x, y) = (x as usize, y as usize);
                    let (a, b) =
                        if is_smaller(self.whole(x), self.reps[x], self.whole(y), self.reps[y]) {
                            (x, y)
                        } else {
                            (y, x)
                        };
                    let j = EnsemblePlan::partition(self.size(b));
                    if rows_for(a, j) != kind.rows {
                        continue;
                    }
                    let (ka, kb) = (kind.of(a), kind.of(b));
                    let looked = |e: usize| ka[e] == kb[e] && !passed_over(kind, e, ka[e]);
                    if (0..band).any(looked) {
                        continue;
                    }
                    found.links.push((a as u32, b as u32));
                }
            }
        }
        found
    }
}

/// The containment search's bands as a candidate source: a few bands searched in
/// parallel at a time, their candidates handed on before the next few are searched.
struct EnsembleBands<'s> {
    search: &'s Search<'s>,
    bands: Vec<(&'s Keys, usize)>,
    oversized: Vec<Vec<u64>>,
    rows_of: &'s [u8],
    /// Buckets, the largest and those passed over, of every band searched so far.
    counted: BandLinks,
}

impl<'s> EnsembleBands<'s> {
    fn new(search: &'s Search<'s>, keys: &'s [Keys], rows_of: &'s [u8]) -> Self {
        EnsembleBands {
            search,
            bands: keys
                .iter()
                .flat_map(|kind| (0..kind.bands).map(move |band| (kind, band)))
                .collect(),
            oversized: search.oversized(keys),
            rows_of,
            counted: BandLinks::default(),
        }
    }
}

impl CandidateSource for EnsembleBands<'_> {
    type Candidate = Link;
    type Error = Infallible;

    fn propose<G: From<Infallible>>(
        &mut self,
        take: &mut Take<'_, Link, G>,
    ) -> std::result::Result<(), G> {
        // Enough bands at a time to keep every thread busy, few enough that their
        // candidates stay a small part of what the run holds.
        let at_once = 4 * rayon::current_num_threads().max(1);
        for group in self.bands.chunks(at_once) {
            let found: Vec<BandLinks> = group
                .par_iter()
                .map(|&band| self.search.band_links(band, &self.oversized, self.rows_of))
                .collect();
            for band in found {
                let c = &mut self.counted;
                c.buckets += band.buckets;
                c.largest = c.largest.max(band.largest);
                c.skipped += band.skipped;
                band.links.chunks(PAIR_CHUNK).try_for_each(&mut *take)?;
            }
        }
        Ok(())
    }
}

/// Containment at the threshold, checked exactly on the representatives' sets.
struct Containment<'a> {
    corpus: &'a Corpus,
    /// The representative of each index the search numbers.
    reps: &'a [u32],
    threshold: f64,
}

impl Judge<Link> for Containment<'_> {
    type Found = Contained;
    type Error = Infallible;

    fn judge(
        &self,
        batch: &[Link],
        tally: &mut Tally,
        _: &mut dyn Observer,
    ) -> std::result::Result<Vec<Contained>, Infallible> {
        let (corpus, reps, t) = (self.corpus, self.reps, self.threshold);
        let found: Vec<Contained> = batch
            .par_iter()
            .filter_map(|&(a, b)| {
                let (a, b) = (reps[a as usize], reps[b as usize]);
                contained((a, corpus.set(a)), (b, corpus.set(b)), t)
            })
            .collect();
        tally.candidates += batch.len() as u64;
        tally.verified += found.len() as u64;
        Ok(found)
    }
}

/// The pairs of representatives expanded to their groups of copies (each copy of A in
/// each copy of B), with every two copies of one set contained in each other; sorted.
fn expand(corpus: &Corpus, found: Vec<Contained>) -> Vec<Contained> {
    let mut out = Vec::new();
    let streamed = for_each_expanded(corpus, &found, |chunk| {
        out.extend_from_slice(chunk);
        Ok::<(), Infallible>(())
    });
    streamed.unwrap_or_else(|never| match never {});
    out
}

/// The pairs of representatives `found` expanded to their groups of copies, handed to
/// `out` in chunks of at most [`STREAM_CHUNK`] by `(a, b)`: document by document, so only
/// the representatives' pairs and one document's row are held, never the expansion.
/// Returns the number of documents in at least one pair.
///
/// A copy of A and a copy of B are a pair as A and B are; two sets of one size contain
/// each other alike, and then the lower number is `a`; every two copies of one set
/// contain each other.
pub(crate) fn for_each_expanded<E>(
    corpus: &Corpus,
    found: &[Contained],
    mut out: impl FnMut(&[Contained]) -> std::result::Result<(), E>,
) -> std::result::Result<u64, E> {
    let groups = Groups::new(corpus);
    let equal = |p: &Contained| corpus.set(p.a).len() == corpus.set(p.b).len();
    // Each representative's pairs in which its copies can be `a`: those where it is the
    // smaller set, and both sides of a pair of equal sizes.
    let mut rows: Vec<(u32, u32)> = Vec::with_capacity(found.len());
    for (i, p) in found.iter().enumerate() {
        rows.push((p.a, i as u32));
        if equal(p) {
            rows.push((p.b, i as u32));
        }
    }
    rows.par_sort_unstable();
    let mut paired = vec![false; corpus.len()];
    let mut row: Vec<Contained> = Vec::new();
    let mut buf: Vec<Contained> = Vec::with_capacity(STREAM_CHUNK.min(rows.len() + 1024));
    for x in doc_ids(corpus.len()).filter(|&x| corpus.has_shingles(x)) {
        let r = corpus.representative(x);
        row.clear();
        let copies = groups.members(&r).iter().filter(|&&y| y > x);
        row.extend(copies.map(|&b| Contained {
            a: x,
            b,
            containment: 1.0,
            jaccard: 1.0,
        }));
        let from = rows.partition_point(|&(rep, _)| rep < r);
        for &(_, i) in rows[from..].iter().take_while(|&&(rep, _)| rep == r) {
            let p = found[i as usize];
            let (other, both) = (if p.a == r { p.b } else { p.a }, equal(&p));
            let partners = groups.members(&other).iter();
            row.extend(
                partners
                    .filter(|&&y| !both || y > x)
                    .map(|&b| Contained { a: x, b, ..p }),
            );
        }
        row.sort_unstable_by_key(|p| p.b);
        for p in &row {
            paired[p.a as usize] = true;
            paired[p.b as usize] = true;
            buf.push(*p);
            if buf.len() == STREAM_CHUNK {
                out(&buf)?;
                buf.clear();
            }
        }
    }
    if !buf.is_empty() {
        out(&buf)?;
    }
    Ok(paired.iter().filter(|&&p| p).count() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::config::Config;
    use crate::run::observer::Quiet;
    use crate::text::shingle::ShingleKind;

    /// The expansion as it was first written: every pair built, then sorted.
    fn expanded_by_sorting(corpus: &Corpus, found: &[Contained]) -> Vec<Contained> {
        let groups = Groups::new(corpus);
        let mut out = Vec::new();
        for g in groups.all() {
            for (i, &a) in g.iter().enumerate() {
                out.extend(g[i + 1..].iter().map(|&b| Contained {
                    a,
                    b,
                    containment: 1.0,
                    jaccard: 1.0,
                }));
            }
        }
        for p in found {
            let equal = corpus.set(p.a).len() == corpus.set(p.b).len();
            for &x in groups.members(&p.a) {
                for &y in groups.members(&p.b) {
                    let (a, b) = if equal { (x.min(y), x.max(y)) } else { (x, y) };
                    out.push(Contained { a, b, ..*p });
                }
            }
        }
        out.sort_by_key(|p| (p.a, p.b));
        out
    }

    #[test]
    fn streamed_expansion_is_the_sorted_one_in_bounded_chunks() {
        let page = "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20";
        let texts = [
            "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10", // a fragment of the page
            page,
            "w1 w2 w3 w4 w5 w6 w7 w8 w9 x10", // the same size as the fragment, 9 of 10 shared
            "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10", // a copy of the fragment
            "",
            page, // a copy of the page
            "w1 w2 w3 w4 w5 w6 w7 w8 w9 x10",
            "unrelated words entirely here",
            "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10",
        ];
        let config = Config::builder()
            .measure(crate::run::measure::Measure::Containment)
            .shingle(ShingleKind::Word(1))
            .threshold(0.8)
            .build()
            .unwrap();
        let p = Pipeline::new(config).unwrap();
        let shingled = p.shingle(&texts).unwrap();
        let (found, _) = p.containment_join_found(&shingled, &mut Quiet);
        let corpus = &shingled.corpus;
        let equal = found
            .iter()
            .filter(|c| corpus.set(c.a).len() == corpus.set(c.b).len())
            .count();
        assert!(equal > 0, "a pair of equal sizes is in the case");
        let want = expanded_by_sorting(corpus, &found);
        let mut got = Vec::new();
        let mut largest = 0;
        let documents = for_each_expanded(corpus, &found, |chunk| {
            largest = largest.max(chunk.len());
            got.extend_from_slice(chunk);
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(got, want);
        assert!(largest <= STREAM_CHUNK);
        let mut docs: Vec<u32> = want.iter().flat_map(|c| [c.a, c.b]).collect();
        docs.sort_unstable();
        docs.dedup();
        assert_eq!(documents, docs.len() as u64);
        // 3 fragments, 2 near-fragments of equal size, 2 pages: all but the empty and the
        // unrelated text are paired.
        assert_eq!(documents, 7);
    }

    #[test]
    fn a_consumer_error_stops_the_expansion() {
        let texts = ["a b c d e", "a b c d e", "a b c d e"];
        let config = Config::builder()
            .measure(crate::run::measure::Measure::Containment)
            .shingle(ShingleKind::Word(1))
            .build()
            .unwrap();
        let p = Pipeline::new(config).unwrap();
        let shingled = p.shingle(&texts).unwrap();
        let mut calls = 0;
        let stopped = for_each_expanded(&shingled.corpus, &[], |_| {
            calls += 1;
            Err("stop")
        });
        assert_eq!((stopped, calls), (Err("stop"), 1));
    }
}
