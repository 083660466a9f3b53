//! `neardup.dedup_units`: the core's unit deduplication (`neardup::units`) over a list
//! of texts, the removed spans given in characters, as Python indexes a `str`.

use pyo3::prelude::*;

use neardup::units::{UnitDedup, UnitKind};
use neardup::KeepPolicy;

use crate::config::NativeConfig;
use crate::errors::{core, refused};

/// One document's result: its text without the removed units (`None` if every unit was
/// removed), and each removed unit as (start, end, the document holding the kept unit).
type DocResult = (Option<String>, Vec<(usize, usize, u32)>);

/// Each text without its units seen earlier (exactly after the configuration's
/// normalization, or with `near` as near-duplicates by the whole configuration).
#[pyfunction]
#[pyo3(signature = (config, texts, unit, near, min_unit_chars, max_unit_count=None, keep="first", reference=0))]
#[allow(clippy::too_many_arguments)]
pub fn units_dedup(
    py: Python<'_>,
    config: &NativeConfig,
    texts: Vec<String>,
    unit: &str,
    near: bool,
    min_unit_chars: usize,
    max_unit_count: Option<u64>,
    keep: &str,
    reference: u32,
) -> PyResult<Vec<DocResult>> {
    let kind: UnitKind = unit.parse().map_err(|e| refused(format!("{e}")))?;
    let keep: KeepPolicy = keep.parse().map_err(core)?;
    let core_config = config.config().clone();
    let mut dedup = UnitDedup::new(kind)
        .normalization(core_config.shingler().normalization_level())
        .min_unit_chars(min_unit_chars)
        .keep(keep)
        .reference(reference);
    if let Some(k) = max_unit_count {
        dedup = dedup.max_unit_count(k);
    }
    if near {
        dedup = dedup.near(core_config);
    }
    py.detach(|| {
        let outcome = dedup.run(&texts).map_err(core)?;
        Ok(outcome
            .docs
            .iter()
            .zip(&texts)
            .map(|(units, text)| {
                // Byte offsets to character offsets, the spans being in order.
                let (mut byte, mut chars) = (0, 0);
                let mut at = |offset: usize| {
                    chars += text[byte..offset].chars().count();
                    byte = offset;
                    chars
                };
                let spans = units
                    .removed
                    .iter()
                    .map(|r| (at(r.span.start), at(r.span.end), r.duplicate_of.doc))
                    .collect();
                (units.rewrite(text), spans)
            })
            .collect())
    })
}
