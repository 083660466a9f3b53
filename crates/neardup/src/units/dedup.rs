//! Units seen before removed from the documents that repeat them: exact (hash, then the
//! normalized texts compared) or near (the units run through the pipeline as documents).

use std::collections::HashMap;
use std::ops::Range;

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use super::UnitKind;
use crate::{Config, Error, KeepPolicy, Normalization, Pipeline, Quiet, Result};

/// Removes units (paragraphs, lines, sentence spans) that occurred earlier in the corpus,
/// in input order, from the documents that repeat them.
///
/// "Earlier" is the keep order of whole-document dedup: documents are visited in the
/// order of their [`KeepPolicy`] ranks (input order by default) or of given keep ranks
/// ([`UnitDedup::keep_ranks`], as `--keep-by` gives them), so the document the rules rank
/// first keeps a repeated unit and the others lose it; inside a document the first copy
/// in the text is kept. A reference corpus ([`UnitDedup::reference`]) comes before all.
///
/// Exact mode (the default) compares units after [`Normalization`], as documents are
/// compared: units whose normalized texts hash alike are compared in full, so a unit is
/// removed only if an earlier one is equal to it (no false positives, unlike a Bloom
/// filter). Near mode ([`UnitDedup::near`]) runs the units through a [`Pipeline`] as
/// documents (MinHash, LSH, exact verification) and removes every unit of a cluster but
/// the one it keeps.
///
/// ```
/// use neardup::units::{UnitDedup, UnitKind};
///
/// let texts = [
///     "Welcome to the shop.\n\nWe use cookies on this site.",
///     "Our opening hours.\n\nWe use  COOKIES on this site.\n",
/// ];
/// let outcome = UnitDedup::new(UnitKind::Paragraph).run(&texts)?;
/// let removed = &outcome.docs[1].removed[0];
/// assert_eq!(&texts[1][removed.span.clone()], "We use  COOKIES on this site.");
/// assert_eq!(removed.duplicate_of.doc, 0);
/// assert_eq!(outcome.docs[1].rewrite(texts[1]).as_deref(), Some("Our opening hours.\n"));
/// assert_eq!((outcome.stats.units, outcome.stats.removed), (4, 1));
/// # Ok::<(), neardup::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct UnitDedup {
    pub(super) kind: UnitKind,
    normalization: Normalization,
    min_unit_chars: usize,
    pub(super) max_unit_count: Option<u64>,
    pub(super) near: Option<Config>,
    keep: KeepPolicy,
    keep_ranks: Option<Vec<u32>>,
    pub(super) reference: u32,
}

/// A unit of a document: the document's number and the unit's byte range in its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitRef {
    /// The document, numbered from 0 in the order given.
    pub doc: u32,
    /// The unit's bytes in that document's text.
    pub span: Range<usize>,
}

/// A unit removed from a document, and the earlier unit it repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemovedUnit {
    /// The removed unit's bytes in its document's text.
    pub span: Range<usize>,
    /// The unit kept in its stead (in an earlier document, or earlier in the same one).
    pub duplicate_of: UnitRef,
}

/// One document's units and which of them are removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocUnits {
    /// Every unit of the document, in order.
    pub units: Vec<Range<usize>>,
    /// The removed ones, in order.
    pub removed: Vec<RemovedUnit>,
}

/// What a unit run counted, over the documents that are not a reference.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnitStats {
    /// Units read.
    pub units: u64,
    /// Units shorter than the minimum (or empty once normalized), left alone.
    pub short: u64,
    /// Units removed.
    pub removed: u64,
    /// The removed units' bytes (the separators removed with them not counted).
    pub bytes_removed: u64,
    /// Documents that had units and lost every one ([`DocUnits::is_emptied`]).
    pub emptied: u64,
}

/// A unit run's result: per document, in the order given, and the counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnitOutcome {
    /// Each document's units and removals.
    pub docs: Vec<DocUnits>,
    /// The counts.
    pub stats: UnitStats,
}

impl DocUnits {
    /// True if the document had units and every one was removed: nothing of it is left
    /// to keep.
    pub fn is_emptied(&self) -> bool {
        !self.units.is_empty() && self.removed.len() == self.units.len()
    }

    /// The text without its removed units, or `None` if every unit was removed.
    ///
    /// Every byte of a kept unit is unchanged, as are the bytes before the first unit,
    /// and the separator after each kept unit; a removed unit goes with the separator
    /// after it, and the text's own ending (after its last unit) stays.
    pub fn rewrite(&self, text: &str) -> Option<String> {
        if self.removed.is_empty() {
            return Some(text.to_owned());
        }
        if self.is_emptied() {
            return None;
        }
        let mut removed = self.removed.iter().map(|r| r.span.start).peekable();
        let kept: Vec<usize> = (0..self.units.len())
            .filter(|&i| {
                let gone = removed.peek() == Some(&self.units[i].start);
                if gone {
                    removed.next();
                }
                !gone
            })
            .collect();
        let mut out = String::with_capacity(text.len());
        out.push_str(&text[..self.units[0].start]);
        for (j, &i) in kept.iter().enumerate() {
            let unit = &self.units[i];
            // After the last kept unit comes the text's own ending; after any other, its
            // own separator.
            let end = match (kept.get(j + 1), self.units.get(i + 1)) {
                (Some(_), Some(next)) => next.start,
                _ => unit.end,
            };
            out.push_str(&text[unit.start..end]);
        }
        out.push_str(&text[self.units[self.units.len() - 1].end..]);
        Some(out)
    }
}

/// Each document's units, each with the hash of its normalized text, or `None` if it is
/// left alone.
type Cut = [Vec<(Range<usize>, Option<u64>)>];

/// For each unit, the unit it repeats (`None`: none, or left alone); and for each first
/// unit, how many times it occurs.
type Firsts = (Vec<Vec<Option<Place>>>, Vec<Vec<u64>>);

/// A unit's place: its document and its number in it.
#[derive(Clone, Copy, Debug)]
struct Place {
    doc: u32,
    unit: u32,
}

impl UnitDedup {
    /// Exact unit deduplication of `kind` units, normalized at the default level, every
    /// unit counted, every repeat removed.
    pub fn new(kind: UnitKind) -> Self {
        UnitDedup {
            kind,
            normalization: Normalization::default(),
            min_unit_chars: 0,
            max_unit_count: None,
            near: None,
            keep: KeepPolicy::First,
            keep_ranks: None,
            reference: 0,
        }
    }

    /// Which document keeps a unit that several repeat: the one this policy ranks first
    /// (as it picks the document a cluster keeps); `first`, input order, by default.
    pub fn keep(mut self, keep: KeepPolicy) -> Self {
        self.keep = keep;
        self
    }

    /// Documents ranked for keeping (smaller first, ties in input order) in place of the
    /// keep policy, one rank per document, as
    /// [`Shingled::set_keep_ranks`](crate::corpus::Shingled::set_keep_ranks) takes them
    /// (see [`KeepRanks`](crate::cluster::KeepRanks)). [`UnitDedup::run`] fails unless it
    /// gets one text per rank.
    pub fn keep_ranks(mut self, ranks: Vec<u32>) -> Self {
        self.keep_ranks = Some(ranks);
        self
    }

    /// Makes the first `n` texts a reference corpus: their units come before every other
    /// document's and are never removed, so a unit of a later document equal (or, in near
    /// mode, similar) to one of theirs is removed; their units are not counted in
    /// [`UnitStats`]. [`UnitDedup::run`] fails if fewer than `n` texts are given.
    pub fn reference(mut self, n: u32) -> Self {
        self.reference = n;
        self
    }

    /// How units are normalized before they are compared (exact mode; in near mode the
    /// configuration's own level applies); and, in both modes, measured for
    /// [`UnitDedup::min_unit_chars`].
    pub fn normalization(mut self, level: Normalization) -> Self {
        self.normalization = level;
        self
    }

    /// Units of fewer characters than this, once normalized, are left alone: never
    /// removed, never the reason another is.
    pub fn min_unit_chars(mut self, chars: usize) -> Self {
        self.min_unit_chars = chars;
        self
    }

    /// Remove a unit's repeats only if it occurs more than `k` times in all (CCNet's
    /// rule for boilerplate lines); its first occurrence stays.
    pub fn max_unit_count(mut self, k: u64) -> Self {
        self.max_unit_count = Some(k);
        self
    }

    /// Near mode: units are removed if they are near-duplicates of an earlier unit by
    /// this configuration (its threshold, shingles, normalization), verified as documents
    /// are. Its keep policy should stay `first`: the units enter the pipeline in keep
    /// order ([`UnitDedup::keep`], [`UnitDedup::keep_ranks`]), so the first is the one to
    /// keep.
    pub fn near(mut self, config: Config) -> Self {
        self.near = Some(config);
        self
    }

    /// The unit kind.
    pub fn kind(&self) -> UnitKind {
        self.kind
    }

    /// Cuts every text into units and decides which are removed. Fails if the keep ranks
    /// or the reference do not fit the texts, or as the pipeline does in near mode (more
    /// units than a corpus holds).
    pub fn run<T: AsRef<str> + Sync>(&self, texts: &[T]) -> Result<UnitOutcome> {
        let order = self.order(texts.len(), |d| texts[d as usize].as_ref().len())?;
        // Each unit with its hash, or `None` if it is left alone.
        let cut: Vec<Vec<(Range<usize>, Option<u64>)>> = texts
            .par_iter()
            .map(|t| self.cut(t.as_ref(), |n| xxh3_64(n.as_bytes())))
            .collect();
        // For each unit, the unit it repeats (`None`: none, or left alone), and how many
        // times each distinct unit occurs.
        let (firsts, counts) = match &self.near {
            None => self.exact_firsts(texts, &cut, &order),
            Some(config) => self.near_firsts(config, texts, &cut, &order)?,
        };
        let mut outcome = UnitOutcome::default();
        for (doc, units) in cut.iter().enumerate() {
            let mut d = DocUnits::default();
            if doc < self.reference as usize {
                // A reference document: its units are what others repeat, never removed.
                d.units = units.iter().map(|(r, _)| r.clone()).collect();
                outcome.docs.push(d);
                continue;
            }
            for (unit, (range, hash)) in units.iter().enumerate() {
                let range = range.clone();
                outcome.stats.units += 1;
                outcome.stats.short += u64::from(hash.is_none());
                let first = firsts[doc][unit].filter(|f| {
                    self.max_unit_count
                        .is_none_or(|k| counts[f.doc as usize][f.unit as usize] > k)
                });
                if let Some(first) = first {
                    outcome.stats.removed += 1;
                    outcome.stats.bytes_removed += range.len() as u64;
                    d.removed.push(RemovedUnit {
                        span: range.clone(),
                        duplicate_of: UnitRef {
                            doc: first.doc,
                            // The first unit's range as cut, not cut again.
                            span: cut[first.doc as usize][first.unit as usize].0.clone(),
                        },
                    });
                }
                d.units.push(range);
            }
            outcome.stats.emptied += u64::from(d.is_emptied());
            outcome.docs.push(d);
        }
        Ok(outcome)
    }

    /// A text's units, each with the hash (by `hash`) of its normalized text, or `None`
    /// if it is left alone (empty once normalized, or shorter than the minimum).
    pub(super) fn cut<H>(
        &self,
        text: &str,
        hash: impl Fn(&str) -> H,
    ) -> Vec<(Range<usize>, Option<H>)> {
        self.kind
            .split(text)
            .into_iter()
            .map(|r| {
                let normalized = self.normalization.apply(&text[r.clone()]);
                let long =
                    !normalized.is_empty() && normalized.chars().count() >= self.min_unit_chars;
                (r, long.then(|| hash(&normalized)))
            })
            .collect()
    }

    /// A unit's text as it is compared.
    pub(super) fn normalized(&self, unit: &str) -> String {
        self.normalization.apply(unit).into_owned()
    }

    /// The `n` documents in keep order: the reference first, in input order; then the
    /// others by their keep ranks if given, else by the keep policy's rank of their length
    /// in bytes (`len`), as a cluster picks its kept document.
    pub(super) fn order(&self, n: usize, len: impl Fn(u32) -> usize) -> Result<Vec<u32>> {
        if self.reference as usize > n {
            return Err(Error::Reference {
                reference: self.reference,
                documents: n,
            });
        }
        let ranks = self.keep_ranks.as_deref();
        if let Some(ranks) = ranks.filter(|r| r.len() != n) {
            return Err(Error::KeepRanks {
                ranks: ranks.len(),
                documents: n,
            });
        }
        let key = |d: u32| match ranks {
            _ if d < self.reference => (i128::MIN, d),
            Some(ranks) => (i128::from(ranks[d as usize]), d),
            None => self.keep.rank(d, len(d)),
        };
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&d| key(d));
        Ok(order)
    }

    /// Exact mode: each unit's first equal unit in keep order (by hash, then by
    /// normalized text).
    fn exact_firsts<T: AsRef<str>>(&self, texts: &[T], cut: &Cut, order: &[u32]) -> Firsts {
        let normalized = |p: Place| {
            let range = cut[p.doc as usize][p.unit as usize].0.clone();
            self.normalization
                .apply(&texts[p.doc as usize].as_ref()[range])
                .into_owned()
        };
        // The first units seen, by hash; units of one hash that differ are kept apart.
        let mut seen: HashMap<u64, Vec<Place>, foldhash::fast::FixedState> = HashMap::default();
        let mut counts: Vec<Vec<u64>> = cut.iter().map(|u| vec![0; u.len()]).collect();
        let mut firsts = vec![Vec::new(); cut.len()];
        for &doc in order {
            let units = &cut[doc as usize];
            let mut doc_firsts = Vec::with_capacity(units.len());
            for (unit, (_, hash)) in units.iter().enumerate() {
                let here = Place {
                    doc,
                    unit: unit as u32,
                };
                let Some(hash) = hash else {
                    doc_firsts.push(None);
                    continue;
                };
                let firsts_of_hash = seen.entry(*hash).or_default();
                let first = match firsts_of_hash.as_slice() {
                    [] => None,
                    _ => {
                        let text = normalized(here);
                        firsts_of_hash
                            .iter()
                            .copied()
                            .find(|&f| normalized(f) == text)
                    }
                };
                if first.is_none() {
                    firsts_of_hash.push(here);
                }
                let counted = first.unwrap_or(here);
                counts[counted.doc as usize][counted.unit as usize] += 1;
                doc_firsts.push(first);
            }
            firsts[doc as usize] = doc_firsts;
        }
        (firsts, counts)
    }

    /// Near mode: the units left for comparison run as one corpus of documents, in keep
    /// order (the reference's units a reference of the pipeline's own); each unit of a
    /// cluster but the kept one repeats the kept one.
    fn near_firsts<T: AsRef<str>>(
        &self,
        config: &Config,
        texts: &[T],
        cut: &Cut,
        order: &[u32],
    ) -> Result<Firsts> {
        let mut places = Vec::new();
        let mut unit_texts = Vec::new();
        let mut reference_units = 0u32;
        for &doc in order {
            for (unit, (range, hash)) in cut[doc as usize].iter().enumerate() {
                if hash.is_some() {
                    places.push(Place {
                        doc,
                        unit: unit as u32,
                    });
                    unit_texts.push(&texts[doc as usize].as_ref()[range.clone()]);
                    reference_units += u32::from(doc < self.reference);
                }
            }
        }
        let mut firsts: Vec<Vec<Option<Place>>> = cut.iter().map(|u| vec![None; u.len()]).collect();
        let mut counts: Vec<Vec<u64>> = cut.iter().map(|u| vec![0; u.len()]).collect();
        if unit_texts.is_empty() {
            return Ok((firsts, counts));
        }
        let pipeline = Pipeline::new(config.clone())?;
        let mut shingled = pipeline.shingle(&unit_texts)?;
        shingled.set_reference(reference_units)?;
        let sketched = pipeline.sketch(shingled, &mut Quiet);
        let (clusters, _) = pipeline.clusters(&sketched, &mut Quiet);
        for cluster in clusters {
            let kept = places[cluster.kept as usize];
            counts[kept.doc as usize][kept.unit as usize] = cluster.len() as u64;
            for dup in &cluster.duplicates {
                let p = places[dup.doc as usize];
                firsts[p.doc as usize][p.unit as usize] = Some(kept);
            }
        }
        Ok((firsts, counts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(outcome: &UnitOutcome, doc: usize) -> Vec<(Range<usize>, u32)> {
        outcome.docs[doc]
            .removed
            .iter()
            .map(|r| (r.span.clone(), r.duplicate_of.doc))
            .collect()
    }

    #[test]
    fn exact_removes_later_repeats_only_and_counts_units_and_bytes() {
        let texts = [
            "a1\nshared line\nb1",
            "shared line\nc1\nSHARED   line\n",
            "c1",
        ];
        let outcome = UnitDedup::new(UnitKind::Line).run(&texts).unwrap();
        assert!(outcome.docs[0].removed.is_empty());
        assert_eq!(spans(&outcome, 1), [(0..11, 0), (15..28, 0)]);
        assert_eq!(spans(&outcome, 2), [(0..2, 1)]);
        assert_eq!(outcome.docs[1].rewrite(texts[1]).unwrap(), "c1\n");
        assert_eq!(outcome.docs[2].rewrite(texts[2]), None);
        let stats = outcome.stats;
        assert_eq!((stats.units, stats.removed, stats.emptied), (7, 3, 1));
        assert_eq!(stats.bytes_removed, 11 + 13 + 2);
    }

    #[test]
    fn units_equal_only_without_normalization_stay_apart_at_none() {
        let texts = ["Same Text", "same text"];
        let outcome = UnitDedup::new(UnitKind::Line)
            .normalization(Normalization::None)
            .run(&texts)
            .unwrap();
        assert_eq!(outcome.stats.removed, 0);
    }

    #[test]
    fn kept_bytes_and_separators_stay_as_they_were() {
        let text = "Intro  \r\n\r\nBoiler plate.\n\n\nBody, unchanged  \n\nBoiler plate.\n";
        let texts = ["Boiler plate.", text];
        let outcome = UnitDedup::new(UnitKind::Paragraph).run(&texts).unwrap();
        assert_eq!(
            outcome.docs[1].rewrite(text).unwrap(),
            "Intro  \r\n\r\nBody, unchanged\n"
        );
        // The first unit removed: what precedes it stays, its separator goes.
        let texts = ["Boiler plate.", "\n Boiler plate.\n\nRest.\n"];
        let outcome = UnitDedup::new(UnitKind::Paragraph).run(&texts).unwrap();
        assert_eq!(outcome.docs[1].rewrite(texts[1]).unwrap(), "\n Rest.\n");
    }

    #[test]
    fn spans_are_byte_offsets_in_multibyte_text() {
        let texts = [
            "Über uns. Wir nutzen Cookies. Danke!",
            "日本語です。Über uns. Wir nutzen Cookies. Ende.",
        ];
        let outcome = UnitDedup::new(UnitKind::Sentences(std::num::NonZeroU32::MIN))
            .run(&texts)
            .unwrap();
        let removed: Vec<&str> = outcome.docs[1]
            .removed
            .iter()
            .map(|r| &texts[1][r.span.clone()])
            .collect();
        assert_eq!(removed, ["Über uns.", "Wir nutzen Cookies."]);
        assert_eq!(outcome.docs[1].removed[0].span, 18..28);
        assert_eq!(outcome.docs[1].removed[0].duplicate_of.span, 0..10);
        assert_eq!(
            outcome.docs[1].rewrite(texts[1]).unwrap(),
            "日本語です。Ende."
        );
    }

    #[test]
    fn short_units_are_left_alone() {
        let texts = ["ok\nlong enough line", "ok\nlong enough line"];
        let outcome = UnitDedup::new(UnitKind::Line)
            .min_unit_chars(5)
            .run(&texts)
            .unwrap();
        assert_eq!(spans(&outcome, 1), [(3..19, 0)]);
        assert_eq!(outcome.stats.short, 2);
    }

    #[test]
    fn max_unit_count_removes_only_units_seen_more_often() {
        let texts = ["twice\nthrice", "twice\nthrice", "thrice"];
        let outcome = UnitDedup::new(UnitKind::Line)
            .max_unit_count(2)
            .run(&texts)
            .unwrap();
        assert_eq!(spans(&outcome, 1), [(6..12, 0)]);
        assert_eq!(spans(&outcome, 2), [(0..6, 0)]);
        assert_eq!(outcome.stats.removed, 2);
    }

    #[test]
    fn near_mode_removes_near_duplicate_units_and_exact_mode_does_not() {
        let banner = "We use cookies to improve your experience on our website and to show you relevant advertising";
        let edited = "We use cookies to improve your experience on our website and to show you relevant adverts";
        let texts = [
            format!("First page.\n\n{banner}"),
            format!("{edited}\n\nSecond page, other words entirely."),
        ];
        let config = Config::builder().threshold(0.7).build().unwrap();
        let near = UnitDedup::new(UnitKind::Paragraph)
            .near(config)
            .run(&texts)
            .unwrap();
        assert_eq!(
            near.docs[1].removed,
            [RemovedUnit {
                span: 0..edited.len(),
                duplicate_of: UnitRef {
                    doc: 0,
                    span: 13..13 + banner.len()
                }
            }]
        );
        let exact = UnitDedup::new(UnitKind::Paragraph).run(&texts).unwrap();
        assert_eq!(exact.stats.removed, 0);
    }

    #[test]
    fn the_document_the_keep_rules_rank_first_keeps_the_unit() {
        let texts = [
            "short\nshared line",
            "shared line\nlonger text here",
            "shared line",
        ];
        let removed_from = |dedup: UnitDedup| -> Vec<(usize, u32)> {
            let outcome = dedup.run(&texts).unwrap();
            (0..texts.len())
                .flat_map(|d| spans(&outcome, d).into_iter().map(move |(_, of)| (d, of)))
                .collect()
        };
        let line = || UnitDedup::new(UnitKind::Line);
        assert_eq!(removed_from(line()), [(1, 0), (2, 0)]);
        assert_eq!(
            removed_from(line().keep(KeepPolicy::Last)),
            [(0, 2), (1, 2)]
        );
        assert_eq!(
            removed_from(line().keep(KeepPolicy::Longest)),
            [(0, 1), (2, 1)]
        );
        assert_eq!(
            removed_from(line().keep(KeepPolicy::Shortest)),
            [(0, 2), (1, 2)]
        );
        // Ranks as --keep-by gives them win over the policy.
        let ranks =
            crate::cluster::KeepRanks::from_values(&[Some("1"), Some("3"), Some("2")], true);
        assert_eq!(
            removed_from(line().keep(KeepPolicy::Last).keep_ranks(ranks.ranks)),
            [(0, 1), (2, 1)]
        );
        // The same order in near mode.
        let config = Config::builder().threshold(0.9).build().unwrap();
        assert_eq!(
            removed_from(line().near(config).keep(KeepPolicy::Longest)),
            [(0, 1), (2, 1)]
        );
        assert!(matches!(
            line().keep_ranks(vec![0]).run(&texts),
            Err(Error::KeepRanks {
                ranks: 1,
                documents: 3
            })
        ));
    }

    #[test]
    fn reference_units_remove_repeats_and_are_never_removed_or_counted() {
        let texts = [
            "licence block\nold only",
            "licence block\nold only",
            "new\nlicence block",
            "new",
        ];
        for dedup in [
            UnitDedup::new(UnitKind::Line).reference(2),
            UnitDedup::new(UnitKind::Line)
                .reference(2)
                .keep(KeepPolicy::Last)
                .near(Config::builder().threshold(0.9).build().unwrap()),
        ] {
            let outcome = dedup.run(&texts).unwrap();
            assert!(outcome.docs[0].removed.is_empty() && outcome.docs[1].removed.is_empty());
            assert_eq!(outcome.docs[1].units.len(), 2);
            // "new" is kept in the first new document even under --keep last: the keep
            // rules order the new documents only.
            let keeps_new = dedup.keep == KeepPolicy::First;
            assert!(spans(&outcome, 2).contains(&(4..17, 0)));
            assert_eq!(spans(&outcome, 2).len(), usize::from(!keeps_new) + 1);
            assert_eq!(spans(&outcome, 3).len(), usize::from(keeps_new));
            let stats = outcome.stats;
            assert_eq!(
                (stats.units, stats.removed, stats.bytes_removed),
                (3, 2, 16)
            );
        }
        assert!(matches!(
            UnitDedup::new(UnitKind::Line).reference(5).run(&texts),
            Err(Error::Reference {
                reference: 5,
                documents: 4
            })
        ));
    }

    #[test]
    fn no_texts_and_no_units_give_nothing() {
        let none: [&str; 0] = [];
        let outcome = UnitDedup::new(UnitKind::Paragraph).run(&none).unwrap();
        assert_eq!(outcome, UnitOutcome::default());
        let blank = ["", " \n\n "];
        let outcome = UnitDedup::new(UnitKind::Line).run(&blank).unwrap();
        assert_eq!(outcome.stats, UnitStats::default());
        assert_eq!(outcome.docs[1].rewrite(blank[1]).unwrap(), " \n\n ");
    }
}
