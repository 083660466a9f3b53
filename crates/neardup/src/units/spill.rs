//! Unit runs larger than memory: the texts go to a temporary file as they are read.
//! Exact mode: every unit left for comparison becomes a 40-byte record (its 128-bit hash, its
//! document's place in keep order, its number and byte range) sorted on disk, so the
//! units of one hash come together, the one kept first; the removals found go through a
//! second sort back into document order, and the documents are handed back one by one
//! with their units and removals, as [`UnitDedup::run`] gives them.
//!
//! No false positives, as in memory: the units of one hash are compared by their
//! normalized texts, read back from the texts' file by their byte ranges, so two units
//! that share a hash but differ are kept apart.
//!
//! Near mode (`spill_near.rs`) runs the units through the pipeline's own spilled run
//! instead of the sort by hash; its removals take the same way back.

use std::ops::Range;

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_128;

use super::dedup::{DocUnits, RemovedUnit, UnitDedup, UnitRef, UnitStats};
use crate::spill::runs::{Fixed, Merged, Sorter};
use crate::spill::texts::TextFile;
use crate::spill::SpillOptions;
use crate::Result;

/// A document's units, each with its 128-bit hash unless left alone.
type Cut = Vec<(Range<usize>, Option<u128>)>;

/// Documents cut into units at a time, side by side: their texts are held at once.
pub(super) const CHUNK: usize = 256;

/// A unit left for comparison, as sorted: by hash, then by its document's place in keep
/// order, then by its number in the document (the field order is the sort order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Occurrence {
    hash: u128,
    place: u32,
    unit: u32,
    start: u64,
    end: u64,
}

impl Fixed for Occurrence {
    const WIDTH: usize = 40;
    fn put(&self, out: &mut [u8]) {
        out[..16].copy_from_slice(&self.hash.to_le_bytes());
        out[16..20].copy_from_slice(&self.place.to_le_bytes());
        out[20..24].copy_from_slice(&self.unit.to_le_bytes());
        out[24..32].copy_from_slice(&self.start.to_le_bytes());
        out[32..40].copy_from_slice(&self.end.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        let at = |i: usize, n: usize| &b[i..i + n];
        Occurrence {
            hash: u128::from_le_bytes(at(0, 16).try_into().expect("16 bytes")),
            place: u32::from_le_bytes(at(16, 4).try_into().expect("4 bytes")),
            unit: u32::from_le_bytes(at(20, 4).try_into().expect("4 bytes")),
            start: u64::from_le_bytes(at(24, 8).try_into().expect("8 bytes")),
            end: u64::from_le_bytes(at(32, 8).try_into().expect("8 bytes")),
        }
    }
}

/// A removed unit, sorted back into document order: its document and number, and the
/// kept unit's document and byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Removal {
    pub(super) doc: u32,
    pub(super) unit: u32,
    pub(super) kept_doc: u32,
    pub(super) kept_start: u64,
    pub(super) kept_end: u64,
}

impl Fixed for Removal {
    const WIDTH: usize = 28;
    fn put(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.doc.to_le_bytes());
        out[4..8].copy_from_slice(&self.unit.to_le_bytes());
        out[8..12].copy_from_slice(&self.kept_doc.to_le_bytes());
        out[12..20].copy_from_slice(&self.kept_start.to_le_bytes());
        out[20..28].copy_from_slice(&self.kept_end.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Removal {
            doc: u32_at(0),
            unit: u32_at(4),
            kept_doc: u32_at(8),
            kept_start: u64_at(12),
            kept_end: u64_at(20),
        }
    }
}

/// A unit run that spills to disk, taking the texts batch by batch
/// ([`UnitDedup::spill`]); [`UnitSpill::finish`] decides.
pub struct UnitSpill {
    pub(super) dedup: UnitDedup,
    pub(super) options: SpillOptions,
    pub(super) texts: TextFile,
}

/// What a spilled run decided: the removals (sorted into document order as they are
/// read), each document's number of units and of removed units, and the counts (all
/// but `emptied`).
pub(super) struct Decided {
    pub(super) removals: Sorter<Removal>,
    pub(super) units: Vec<u32>,
    pub(super) removed: Vec<u32>,
    pub(super) stats: UnitStats,
}

/// A spilled unit run's result: the counts, and each document's text and units in
/// document order (an iterator of [`UnitDoc`]s).
pub struct SpilledUnits {
    dedup: UnitDedup,
    texts: TextFile,
    removals: std::iter::Peekable<Merged<Removal>>,
    /// Per document: its units, and those removed.
    units: Vec<u32>,
    removed: Vec<u32>,
    next: u32,
    stats: UnitStats,
}

/// One document of a spilled run: its text, read back, and its units.
pub type UnitDoc = (String, DocUnits);

impl UnitDedup {
    /// The same run, larger than memory: the texts and the units' records go to
    /// temporary files in `options`' folder, sorted `options`' memory at a time. In near
    /// mode the units run through [`Pipeline::spill_batches`](crate::Pipeline::spill_batches),
    /// whose refusals (a configuration that does not spill: estimated verification, a
    /// SimHash sketch) come here, before any text is taken.
    ///
    /// ```
    /// use neardup::units::{UnitDedup, UnitKind};
    /// use neardup::SpillOptions;
    ///
    /// let texts = ["Menu\nFirst page.", "Menu\nSecond page."];
    /// let dir = tempfile::tempdir()?;
    /// let mut spill = UnitDedup::new(UnitKind::Line).spill(SpillOptions::new(dir.path()))?;
    /// spill.add(&texts)?;
    /// let mut spilled = spill.finish()?;
    /// assert_eq!(spilled.stats().removed, 1);
    /// let docs: Vec<_> = spilled.by_ref().collect::<Result<_, _>>()?;
    /// assert_eq!(docs[1].1.rewrite(&docs[1].0).as_deref(), Some("Second page."));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn spill(&self, options: SpillOptions) -> Result<UnitSpill> {
        if let Some(config) = &self.near {
            crate::Pipeline::new(config.clone())?.spill_batches(options.clone())?;
        }
        Ok(UnitSpill {
            dedup: self.clone(),
            texts: TextFile::new(options.dir())?,
            options,
        })
    }
}

impl UnitSpill {
    /// Appends the next documents' texts.
    pub fn add<T: AsRef<str>>(&mut self, texts: &[T]) -> Result<()> {
        texts.iter().try_for_each(|t| self.texts.push(t.as_ref()))
    }

    /// Documents added.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// True if no document was added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ranks the documents for keeping, as [`UnitDedup::keep_ranks`] (known only once
    /// every record is read).
    pub fn set_keep_ranks(&mut self, ranks: Vec<u32>) {
        self.dedup = self.dedup.clone().keep_ranks(ranks);
    }

    /// Makes the first `n` documents a reference, as [`UnitDedup::reference`].
    pub fn set_reference(&mut self, n: u32) {
        self.dedup = self.dedup.clone().reference(n);
    }

    /// Decides which units are removed: in exact mode the units sorted by hash on disk,
    /// each group compared in keep order; in near mode the units clustered by the
    /// pipeline's spilled run in keep order. The removals are sorted back into document
    /// order. Fails as [`UnitDedup::run`] does, or if a temporary file cannot be written
    /// or read.
    pub fn finish(mut self) -> Result<SpilledUnits> {
        self.texts.seal()?;
        let n = self.texts.len();
        let order = self.dedup.order(n, |d| self.texts.text_len(d))?;
        let Decided {
            removals,
            units,
            removed,
            mut stats,
        } = match self.dedup.near.clone() {
            None => self.exact(&order)?,
            Some(config) => self.near(&config, &order)?,
        };
        stats.emptied = (self.dedup.reference as usize..n)
            .filter(|&d| units[d] > 0 && removed[d] == units[d])
            .count() as u64;
        Ok(SpilledUnits {
            dedup: self.dedup,
            texts: self.texts,
            removals: removals.finish()?.peekable(),
            units,
            removed,
            next: 0,
            stats,
        })
    }

    /// Exact mode: the units sorted by hash, each hash's units compared in keep order.
    fn exact(&self, order: &[u32]) -> Result<Decided> {
        let n = self.texts.len();
        let (occurrences, units, stats) = self.occurrences(order)?;
        let mut found = Found {
            dedup: &self.dedup,
            texts: &self.texts,
            order,
            removals: Sorter::new(self.options.dir(), self.options.memory_bytes()),
            removed: vec![0u32; n],
            stats,
            group: Vec::new(),
        };
        let mut hash = None;
        for occurrence in occurrences {
            let occurrence = occurrence?;
            if hash != Some(occurrence.hash) {
                found.group.clear();
                hash = Some(occurrence.hash);
            }
            found.place(occurrence)?;
        }
        let Found {
            removals,
            removed,
            stats,
            ..
        } = found;
        Ok(Decided {
            removals,
            units,
            removed,
            stats,
        })
    }

    /// Every unit left for comparison, sorted by hash and keep order; each document's
    /// number of units; the counts of units read and left alone.
    fn occurrences(&self, order: &[u32]) -> Result<(Merged<Occurrence>, Vec<u32>, UnitStats)> {
        let n = self.texts.len();
        let mut place_of = vec![0u32; n];
        for (place, &doc) in order.iter().enumerate() {
            place_of[doc as usize] = place as u32;
        }
        let mut sorter = Sorter::new(self.options.dir(), self.options.memory_bytes());
        let mut units = vec![0u32; n];
        let mut stats = UnitStats::default();
        for start in (0..n).step_by(CHUNK) {
            let docs = start..n.min(start + CHUNK);
            let cut: Vec<Result<Cut>> = docs
                .clone()
                .into_par_iter()
                .map(|d| {
                    let text = self.texts.get(d as u32)?;
                    Ok(self.dedup.cut(&text, |n| xxh3_128(n.as_bytes())))
                })
                .collect();
            for (doc, cut) in docs.zip(cut) {
                let cut = cut?;
                units[doc] = cut.len() as u32;
                if doc >= self.dedup.reference as usize {
                    stats.units += cut.len() as u64;
                    stats.short += cut.iter().filter(|(_, h)| h.is_none()).count() as u64;
                }
                for (unit, (range, hash)) in cut.into_iter().enumerate() {
                    if let Some(hash) = hash {
                        sorter.push(Occurrence {
                            hash,
                            place: place_of[doc],
                            unit: unit as u32,
                            start: range.start as u64,
                            end: range.end as u64,
                        })?;
                    }
                }
            }
        }
        Ok((sorter.finish()?, units, stats))
    }
}

/// The distinct units of one hash seen so far, in keep order.
struct Class {
    /// The kept unit: its document and range.
    doc: u32,
    span: Range<usize>,
    /// Its normalized text, read when a second unit of its hash comes.
    text: Option<String>,
    /// Units equal to it so far, itself included.
    count: u64,
    /// With `max_unit_count` K: its repeats and their lengths, held until it is seen
    /// more than K times.
    pending: Vec<(Removal, u64)>,
}

/// What walking the sorted units gathers.
struct Found<'a> {
    dedup: &'a UnitDedup,
    texts: &'a TextFile,
    order: &'a [u32],
    removals: Sorter<Removal>,
    removed: Vec<u32>,
    stats: UnitStats,
    /// The current hash's classes.
    group: Vec<Class>,
}

impl Found<'_> {
    fn normalized(&self, doc: u32, span: Range<usize>) -> Result<String> {
        Ok(self.dedup.normalized(&self.texts.get_span(doc, span)?))
    }

    /// Places one unit among its hash's classes: a new one if it equals none, else a
    /// repeat, removed (or held, under `max_unit_count`).
    fn place(&mut self, o: Occurrence) -> Result<()> {
        let doc = self.order[o.place as usize];
        let span = o.start as usize..o.end as usize;
        let mut class = None;
        if !self.group.is_empty() {
            let text = self.normalized(doc, span.clone())?;
            for i in 0..self.group.len() {
                if self.group[i].text.is_none() {
                    let (d, s) = (self.group[i].doc, self.group[i].span.clone());
                    self.group[i].text = Some(self.normalized(d, s)?);
                }
                if self.group[i].text.as_deref() == Some(&text) {
                    class = Some(i);
                    break;
                }
            }
        }
        let Some(i) = class else {
            self.group.push(Class {
                doc,
                span,
                text: None,
                count: 1,
                pending: Vec::new(),
            });
            return Ok(());
        };
        let c = &mut self.group[i];
        c.count += 1;
        if doc < self.dedup.reference {
            return Ok(()); // counted, never removed
        }
        let removal = Removal {
            doc,
            unit: o.unit,
            kept_doc: c.doc,
            kept_start: c.span.start as u64,
            kept_end: c.span.end as u64,
        };
        let len = o.end - o.start;
        if self.dedup.max_unit_count.is_some_and(|k| c.count <= k) {
            c.pending.push((removal, len));
            return Ok(());
        }
        let pending = std::mem::take(&mut c.pending);
        for (r, len) in pending.into_iter().chain([(removal, len)]) {
            self.removed[r.doc as usize] += 1;
            self.stats.removed += 1;
            self.stats.bytes_removed += len;
            self.removals.push(r)?;
        }
        Ok(())
    }
}

impl SpilledUnits {
    /// The counts, as [`UnitOutcome::stats`](super::UnitOutcome::stats).
    pub fn stats(&self) -> UnitStats {
        self.stats
    }

    /// Documents.
    pub fn len(&self) -> usize {
        self.units.len()
    }

    /// True if there are no documents.
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// Documents that lost some of their units but not all.
    pub fn changed(&self) -> u64 {
        let reference = self.dedup.reference as usize;
        (reference..self.units.len())
            .filter(|&d| self.removed[d] > 0 && self.removed[d] < self.units[d])
            .count() as u64
    }

    /// True if document `doc` had units and lost every one ([`DocUnits::is_emptied`]),
    /// known before it is handed back.
    pub fn is_emptied(&self, doc: u32) -> bool {
        let d = doc as usize;
        self.units[d] > 0 && self.removed[d] == self.units[d]
    }
}

impl Iterator for SpilledUnits {
    type Item = Result<UnitDoc>;

    /// The next document's text, read back, and its units and removals.
    fn next(&mut self) -> Option<Result<UnitDoc>> {
        let doc = self.next;
        if doc as usize >= self.units.len() {
            return None;
        }
        self.next += 1;
        let result = (|| {
            let text = self.texts.get(doc)?;
            let units = self.dedup.kind.split(&text);
            let mut removed = Vec::new();
            while let Some(r) = self
                .removals
                .next_if(|r| r.as_ref().map_or(true, |r| r.doc == doc))
            {
                let r = r?;
                removed.push(RemovedUnit {
                    span: units[r.unit as usize].clone(),
                    duplicate_of: UnitRef {
                        doc: r.kept_doc,
                        span: r.kept_start as usize..r.kept_end as usize,
                    },
                });
            }
            Ok((text, DocUnits { units, removed }))
        })();
        Some(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::UnitKind;
    use crate::KeepPolicy;

    /// The spilled run's documents and counts, sorting a few records at a time.
    fn spilled(dedup: &UnitDedup, texts: &[String]) -> (Vec<DocUnits>, UnitStats) {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = dedup
            .spill(SpillOptions::new(dir.path()).memory(1))
            .unwrap();
        for batch in texts.chunks(7) {
            spill.add(batch).unwrap();
        }
        let out = spill.finish().unwrap();
        let stats = out.stats();
        let docs: Vec<DocUnits> = out.map(|d| d.unwrap().1).collect();
        (docs, stats)
    }

    #[test]
    fn a_spilled_run_gives_the_in_memory_result() {
        // Enough units for several runs of 4,096 records, with repeats far apart.
        let texts: Vec<String> = (0..3000)
            .map(|i| {
                format!(
                    "Line {}\nShared footer\nline {}\n\nÜber {}. Ende.\n\nDoc {i}.",
                    i % 977,
                    i % 13,
                    i % 5,
                )
            })
            .collect();
        for dedup in [
            UnitDedup::new(UnitKind::Line),
            UnitDedup::new(UnitKind::Paragraph).keep(KeepPolicy::Last),
            UnitDedup::new(UnitKind::Sentences(std::num::NonZeroU32::MIN))
                .min_unit_chars(8)
                .max_unit_count(600)
                .reference(100),
        ] {
            let memory = dedup.run(&texts).unwrap();
            let (docs, stats) = spilled(&dedup, &texts);
            assert_eq!(stats, memory.stats);
            assert!(stats.removed > 0);
            assert_eq!(docs, memory.docs);
        }
    }

    #[test]
    fn a_spilled_near_run_gives_the_in_memory_near_result() {
        // Lines that differ in a word or a number (near, not equal), repeated far apart.
        let texts: Vec<String> = (0..2000)
            .map(|i| {
                format!(
                    "Catalogue line {} of the shop\nWe use cookies on this site to improve \
                     your experience, edition {}\nline {}\n\nÜber {} und mehr Text. Ende.\n\nDoc {i}.",
                    i % 577,
                    i % 7,
                    i % 13,
                    i % 5,
                )
            })
            .collect();
        let near = |t: f64| crate::Config::builder().threshold(t).build().unwrap();
        let ranks: Vec<u32> = (0..texts.len() as u32).map(|i| (i * 7919) % 1000).collect();
        for (i, dedup) in [
            UnitDedup::new(UnitKind::Line).near(near(0.6)),
            UnitDedup::new(UnitKind::Paragraph)
                .keep(KeepPolicy::Last)
                .near(near(0.5)),
            UnitDedup::new(UnitKind::Line)
                .keep_ranks(ranks)
                .min_unit_chars(8)
                .near(near(0.6)),
            UnitDedup::new(UnitKind::Sentences(std::num::NonZeroU32::MIN))
                .min_unit_chars(8)
                .max_unit_count(150)
                .reference(100)
                .near(near(0.6)),
        ]
        .into_iter()
        .enumerate()
        {
            let memory = dedup.run(&texts).unwrap();
            let (docs, stats) = spilled(&dedup, &texts);
            assert_eq!(stats, memory.stats);
            assert_eq!(docs, memory.docs);
            let mut exact = dedup.clone();
            exact.near = None;
            let exact = exact.run(&texts).unwrap().stats.removed;
            assert!(stats.removed >= exact && stats.removed > 0, "{i}");
            if i == 0 {
                // Lines equal but for a number are removed too: near, not exact.
                assert!(stats.removed > exact, "{} against {exact}", stats.removed);
            }
        }
    }

    #[test]
    fn a_near_spill_without_units_to_compare_removes_nothing_and_refuses_early() {
        let near = |b: crate::ConfigBuilder| {
            UnitDedup::new(UnitKind::Line)
                .min_unit_chars(5)
                .near(b.build().unwrap())
        };
        let texts: Vec<String> = ["", "ab\ncd", " \n "].map(String::from).into();
        let dedup = near(crate::Config::builder());
        let (docs, stats) = spilled(&dedup, &texts);
        assert_eq!(docs, dedup.run(&texts).unwrap().docs);
        assert_eq!((stats.units, stats.short, stats.removed), (2, 2, 0));
        // A configuration the pipeline does not spill is refused before any text.
        let dir = tempfile::tempdir().unwrap();
        let estimate = near(crate::Config::builder().verification(crate::Verification::Estimate));
        assert!(matches!(
            estimate.spill(SpillOptions::new(dir.path())),
            Err(crate::Error::SpillNeedsExact(_))
        ));
    }

    #[test]
    fn units_of_one_hash_that_differ_stay_apart() {
        // Two units forced into one group: the walk compares their texts.
        let dedup = UnitDedup::new(UnitKind::Line);
        let dir = tempfile::tempdir().unwrap();
        let mut spill = dedup.spill(SpillOptions::new(dir.path())).unwrap();
        spill.add(&["alpha\nbeta", "beta\nalpha"]).unwrap();
        spill.texts.seal().unwrap();
        let order = [0, 1];
        let mut found = Found {
            dedup: &dedup,
            texts: &spill.texts,
            order: &order,
            removals: Sorter::new(dir.path(), 1 << 20),
            removed: vec![0; 2],
            stats: UnitStats::default(),
            group: Vec::new(),
        };
        let at = |place, unit, start, end| Occurrence {
            hash: 7,
            place,
            unit,
            start,
            end,
        };
        for o in [
            at(0, 0, 0, 5),
            at(0, 1, 6, 10),
            at(1, 0, 0, 4),
            at(1, 1, 5, 10),
        ] {
            found.place(o).unwrap();
        }
        assert_eq!(found.group.len(), 2, "alpha and beta are two classes");
        let removals: Vec<Removal> = found
            .removals
            .finish()
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            removals
                .iter()
                .map(|r| (r.doc, r.unit, r.kept_start))
                .collect::<Vec<_>>(),
            [(1, 0, 6), (1, 1, 0)]
        );
    }
}
