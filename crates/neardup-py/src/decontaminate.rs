//! `neardup.decontaminate`: the core's test-set search (`neardup::decontaminate`) over a
//! list of texts, spans given in characters, as Python indexes a `str`.

use pyo3::prelude::*;
use rayon::prelude::*;

use neardup::decontaminate::TestSet;

use crate::errors::refused;

/// One item found in one document: (document, item, containment, matched n-grams,
/// n-grams of the item, spans as (start, end) in characters).
type Found = (usize, usize, f64, usize, usize, Vec<(usize, usize)>);

/// Every test item inside every text, in document then item order, and the numbers of
/// items checked whole (shorter than `ngram`) and not checked (shorter than `min_ngram`).
#[pyfunction]
#[pyo3(signature = (tests, texts, ngram, min_ngram, min_overlap))]
pub fn decontaminate_texts(
    py: Python<'_>,
    tests: Vec<String>,
    texts: Vec<String>,
    ngram: usize,
    min_ngram: usize,
    min_overlap: f64,
) -> PyResult<(Vec<Found>, usize, usize)> {
    let set = TestSet::builder()
        .ngram(ngram)
        .min_ngram(min_ngram)
        .min_overlap(min_overlap)
        .build(&tests)
        .map_err(|e| refused(e.to_string()))?;
    Ok(py.detach(|| {
        let per_doc: Vec<Vec<Found>> = texts
            .par_iter()
            .enumerate()
            .map(|(doc, text)| {
                set.find(text)
                    .into_iter()
                    .map(|m| {
                        // Byte offsets to character offsets, a match's spans being in order.
                        let (mut byte, mut chars) = (0, 0);
                        let mut at = |offset: usize| {
                            chars += text[byte..offset].chars().count();
                            byte = offset;
                            chars
                        };
                        let spans = m.spans.iter().map(|s| (at(s.start), at(s.end))).collect();
                        (doc, m.item, m.containment, m.matched, m.ngrams, spans)
                    })
                    .collect()
            })
            .collect();
        (
            per_doc.into_iter().flatten().collect(),
            set.short(),
            set.unchecked(),
        )
    }))
}
