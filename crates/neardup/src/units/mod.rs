//! Deduplication below the document: documents cut into units (paragraphs, lines, spans
//! of sentences, [`UnitKind`]) and the units seen earlier in the corpus removed from the
//! documents that repeat them ([`UnitDedup`]), exactly or as near-duplicates.
//!
//! Boilerplate (cookie banners, navigation, licence blocks, signatures) repeats across
//! pages that otherwise differ, so a document-level run keeps it. A unit run removes it
//! where it repeats and says, per removed unit, which earlier unit it repeats, by byte
//! ranges into the texts as given.

mod dedup;
mod spill;
mod spill_near;
mod split;

pub use dedup::{DocUnits, RemovedUnit, UnitDedup, UnitOutcome, UnitRef, UnitStats};
pub use spill::{SpilledUnits, UnitDoc, UnitSpill};
pub use split::{UnitKind, UnitKindError};
