//! Near unit runs larger than memory: the units left for comparison are read back from
//! the texts' file in keep order, a few documents at a time, and become the documents of
//! the pipeline's spilled run ([`Pipeline::spill_batches`]), the reference's units its
//! own reference, as [`UnitDedup::run`](super::UnitDedup::run) hands them to the
//! in-memory pipeline; so the clusters, and the units removed, are the same. Each
//! cluster's units but the kept one become removals, which go back into document order
//! as exact mode's do.
//!
//! Held per unit: its document, number and byte range (24 bytes), beside the few words
//! per document of the pipeline's spilled run.

use std::ops::Range;

use rayon::prelude::*;

use super::dedup::UnitStats;
use super::spill::{Decided, Removal, UnitSpill, CHUNK};
use crate::spill::runs::Sorter;
use crate::{Config, Pipeline, Quiet, Result};

/// A unit run through the pipeline: its document, its number there, its byte range.
#[derive(Clone, Copy, Debug)]
struct UnitAt {
    doc: u32,
    unit: u32,
    start: u64,
    end: u64,
}

impl UnitSpill {
    /// Near mode: the units clustered by the pipeline's spilled run, in keep order;
    /// every unit of a cluster but the kept one is removed (unless the cluster is not
    /// larger than `max_unit_count`).
    pub(super) fn near(&self, config: &Config, order: &[u32]) -> Result<Decided> {
        let n = self.texts.len();
        let reference = self.dedup.reference;
        let pipeline = Pipeline::new(config.clone())?;
        let mut batches = pipeline.spill_batches(self.options.clone())?;
        // The pipeline's documents, in the order they are added.
        let mut at: Vec<UnitAt> = Vec::new();
        let mut units = vec![0u32; n];
        let mut stats = UnitStats::default();
        let mut reference_units = 0u32;
        for docs in order.chunks(CHUNK) {
            let texts: Vec<String> = docs
                .par_iter()
                .map(|&d| self.texts.get(d))
                .collect::<Result<_>>()?;
            let cut: Vec<Vec<(Range<usize>, Option<()>)>> = texts
                .par_iter()
                .map(|t| self.dedup.cut(t, |_| ()))
                .collect();
            let mut unit_texts: Vec<&str> = Vec::new();
            for ((&doc, text), cut) in docs.iter().zip(&texts).zip(&cut) {
                units[doc as usize] = cut.len() as u32;
                if doc >= reference {
                    stats.units += cut.len() as u64;
                    stats.short += cut.iter().filter(|(_, c)| c.is_none()).count() as u64;
                }
                for (unit, (range, compared)) in cut.iter().enumerate() {
                    if compared.is_none() {
                        continue;
                    }
                    at.push(UnitAt {
                        doc,
                        unit: unit as u32,
                        start: range.start as u64,
                        end: range.end as u64,
                    });
                    unit_texts.push(&text[range.clone()]);
                    reference_units += u32::from(doc < reference);
                }
            }
            batches.add(&unit_texts)?;
        }
        let mut removals = Sorter::new(self.options.dir(), self.options.memory_bytes());
        let mut removed = vec![0u32; n];
        if !at.is_empty() {
            let mut spilled = batches.finish()?;
            spilled.set_reference(reference_units)?;
            let (clusters, _) = spilled.cluster_set(None, &mut Quiet)?;
            for cluster in clusters.iter() {
                if (self.dedup.max_unit_count).is_some_and(|k| cluster.len() as u64 <= k) {
                    continue;
                }
                let kept = at[cluster.kept() as usize];
                for dup in cluster.duplicates() {
                    let u = at[dup.doc as usize];
                    // The pipeline's reference is never removed; checked as in memory.
                    if u.doc < reference {
                        continue;
                    }
                    removed[u.doc as usize] += 1;
                    stats.removed += 1;
                    stats.bytes_removed += u.end - u.start;
                    removals.push(Removal {
                        doc: u.doc,
                        unit: u.unit,
                        kept_doc: kept.doc,
                        kept_start: kept.start,
                        kept_end: kept.end,
                    })?;
                }
            }
        }
        Ok(Decided {
            removals,
            units,
            removed,
            stats,
        })
    }
}
