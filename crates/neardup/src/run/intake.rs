//! Texts in, batch by batch: shingled in memory, or shingled, sketched and spilled to
//! disk. The corpus it ends in, and that corpus made ready for its engine.

use crate::corpus::stages::{ShingleBatches, Shingled, Sketched};
use crate::error::Result;
use crate::run::observer::Observer;
use crate::run::pipeline::Pipeline;
use crate::spill::spilled::{SpillBatches, Spilled};
use crate::spill::SpillOptions;

use super::plan::{Engine, RunPlan};

/// Where read batches go: shingled in memory, or spilled to disk (see
/// [`Pipeline::intake`]).
pub enum Intake<'p> {
    /// Shingled in memory.
    Memory(ShingleBatches),
    /// Shingled, sketched and written to temporary files.
    Disk(SpillBatches<'p>),
}

impl<'p> Intake<'p> {
    /// Adds a batch of texts, numbered after those added before.
    pub fn add<T: AsRef<str> + Sync>(&mut self, texts: &[T]) -> Result<()> {
        match self {
            Intake::Memory(b) => b.add(texts),
            Intake::Disk(b) => b.add(texts),
        }
    }

    /// The corpus of every text added.
    pub fn finish(self) -> Result<Held<'p>> {
        Ok(match self {
            Intake::Memory(b) => Held::Memory(b.finish()),
            Intake::Disk(b) => Held::Disk {
                spilled: b.finish()?,
                ranks: None,
            },
        })
    }
}

/// A corpus after reading, before its engine is chosen.
pub enum Held<'p> {
    /// Shingled in memory: every engine can run on it.
    Memory(Shingled),
    /// Spilled to disk: the spilled bands are its engine.
    Disk {
        /// The corpus on disk.
        spilled: Spilled<'p>,
        /// The caller's keep order, if set.
        ranks: Option<Vec<u32>>,
    },
}

impl Held<'_> {
    /// Orders documents for keeping (smaller first) in place of the keep policy, as
    /// [`Shingled::set_keep_ranks`] does; an error unless one rank per document.
    pub fn set_keep_ranks(&mut self, ranks: Vec<u32>) -> Result<()> {
        match self {
            Held::Memory(shingled) => shingled.set_keep_ranks(ranks),
            Held::Disk { spilled, ranks: r } => {
                if ranks.len() != spilled.len() {
                    return Err(crate::Error::KeepRanks {
                        ranks: ranks.len(),
                        documents: spilled.len(),
                    });
                }
                *r = Some(ranks);
                Ok(())
            }
        }
    }

    /// Makes documents `0..n` a reference corpus (read first): they are never removed and
    /// always head their clusters, clusters are made only for the other documents, and
    /// pairs of two reference documents are not reported (see
    /// [`Shingled::set_reference`](crate::corpus::Shingled::set_reference)). An error if
    /// `n` is past the corpus.
    pub fn set_reference(&mut self, n: u32) -> Result<()> {
        match self {
            Held::Memory(shingled) => shingled.set_reference(n),
            Held::Disk { spilled, .. } => spilled.set_reference(n),
        }
    }

    /// The number of reference documents ([`Held::set_reference`]).
    pub fn reference(&self) -> u32 {
        match self {
            Held::Memory(s) => s.reference(),
            Held::Disk { spilled, .. } => spilled.reference(),
        }
    }

    /// The number of documents.
    pub fn len(&self) -> usize {
        match self {
            Held::Memory(s) => s.corpus().len(),
            Held::Disk { spilled, .. } => spilled.len(),
        }
    }

    /// True if no document was added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The corpus in memory, if it is held there.
    pub fn shingled(&self) -> Option<&Shingled> {
        match self {
            Held::Memory(s) => Some(s),
            Held::Disk { .. } => None,
        }
    }
}

/// The corpus as far as its engine needs it: what [`Pipeline::run`] takes.
pub struct Ready<'p> {
    pub(super) plan: RunPlan,
    pub(super) corpus: Prepared<'p>,
}

pub(super) enum Prepared<'p> {
    Shingled(Shingled),
    Sketched(Sketched),
    /// Taken when it runs: its files are consumed.
    Disk(Option<Spilled<'p>>, Option<Vec<u32>>),
}

impl<'p> Ready<'p> {
    /// The plan the run follows.
    pub fn plan(&self) -> &RunPlan {
        &self.plan
    }

    /// True if the document has shingles (it takes part; one without is skipped).
    pub fn has_shingles(&self, doc: u32) -> bool {
        match &self.corpus {
            Prepared::Shingled(s) => s.corpus().has_shingles(doc),
            Prepared::Sketched(s) => s.corpus().has_shingles(doc),
            Prepared::Disk(s, _) => s.as_ref().is_some_and(|s| s.has_shingles(doc)),
        }
    }

    /// The number of reference documents ([`Held::set_reference`]).
    pub fn reference(&self) -> u32 {
        match &self.corpus {
            Prepared::Shingled(s) => s.reference(),
            Prepared::Sketched(s) => s.reference(),
            Prepared::Disk(s, _) => s.as_ref().map_or(0, Spilled::reference),
        }
    }

    /// The corpus back, to run it with another plan (the exact join after LSH, as an
    /// evaluation does); `None` for a corpus on disk that has run (its files are consumed).
    pub fn into_held(self) -> Option<Held<'p>> {
        match self.corpus {
            Prepared::Shingled(s) => Some(Held::Memory(s)),
            Prepared::Sketched(s) => Some(Held::Memory(s.0)),
            Prepared::Disk(spilled, ranks) => spilled.map(|spilled| Held::Disk { spilled, ranks }),
        }
    }

    /// The corpus in memory, if it is held there.
    pub fn shingled(&self) -> Option<&Shingled> {
        match &self.corpus {
            Prepared::Shingled(s) => Some(s),
            Prepared::Sketched(s) => Some(s),
            Prepared::Disk(..) => None,
        }
    }
}

impl Pipeline {
    /// Where texts go as they are read: shingled in memory, or spilled to disk with
    /// `spill` (see [`Pipeline::spill_batches`]).
    pub fn intake(&self, spill: Option<SpillOptions>) -> Result<Intake<'_>> {
        Ok(match spill {
            None => Intake::Memory(self.shingle_batches()),
            Some(options) => Intake::Disk(self.spill_batches(options)?),
        })
    }

    /// The corpus made ready for the plan's engine: sketched for the band and SimHash
    /// engines; as it is for the joins and the spilled bands.
    /// An error if the plan was made for another corpus (a corpus on disk runs on the
    /// spilled bands only, and they need one).
    pub fn prepare<'p>(
        &self,
        held: Held<'p>,
        plan: &RunPlan,
        observer: &mut dyn Observer,
    ) -> Result<Ready<'p>> {
        let corpus = match (held, plan.engine()) {
            (Held::Disk { spilled, ranks }, Engine::Spilled) => {
                Prepared::Disk(Some(spilled), ranks)
            }
            (Held::Memory(shingled), Engine::Bands | Engine::SimHash) => {
                Prepared::Sketched(self.sketch(shingled, observer))
            }
            (Held::Memory(_), Engine::Spilled) | (Held::Disk { .. }, _) => {
                return Err(crate::Error::PlanNotForCorpus(plan.engine()))
            }
            (Held::Memory(shingled), _) => Prepared::Shingled(shingled),
        };
        Ok(Ready {
            plan: plan.clone(),
            corpus,
        })
    }
}
