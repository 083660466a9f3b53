//! The extension module `neardup._neardup` of the neardup Python package: the library's
//! pipeline, building blocks, a datasketch-shaped `MinHash` and LSH table, and the
//! persistent index, for the pure-Python package in `python/neardup`, which gives them
//! their documented signatures and result forms.
//!
//! Every call that works on texts releases the GIL while the library works (rayon inside),
//! and touches Python objects only to read the texts and to build the results. A long
//! call stops on Ctrl-C between chunks of its work (`threads::interruptible`).
//!
//! | module | job |
//! |---|---|
//! | `texts` | texts from a list, a NumPy array or a pyarrow array, borrowed where possible |
//! | `arrow` | texts from any Arrow producer (the PyCapsule interface), a batch at a time |
//! | `config` | the validated configuration and its pipeline |
//! | `runs` | whole runs: pairs, clusters, dedup (LSH or the exact join) |
//! | `blocks` | shingle sets, band keys, Jaccard, verification of given pairs |
//! | `spark` | the tasks of `neardup.spark`, bound to the core's `neardup::shuffle` (shuffle blocks, bucket walks, clusters of components) |
//! | `results` | results as columns, as Python lists or NumPy buffers |
//! | `buffer` | vectors handed to NumPy without a copy |
//! | `minhash`, `lsh` | `MinHash` and the table behind `MinHashLSH` |
//! | `scheme` | datasketch's permutation schemes, so `MinHash` gives its hashvalues |
//! | `index` | `Index` over `neardup-index` |
//! | `threads` | a call's thread count |
//! | `errors` | the exceptions and the library's errors mapped onto them |

use pyo3::prelude::*;

mod arrow;
mod blocks;
mod buffer;
mod config;
mod decontaminate;
mod errors;
mod index;
mod lsh;
mod minhash;
mod results;
mod runs;
mod scheme;
mod spark;
mod texts;
mod threads;
mod units;

#[pymodule]
fn _neardup(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    threads::loaded();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The core's defaults, so the package restates none of them.
    m.add("DEFAULT_THRESHOLD", neardup::defaults::THRESHOLD)?;
    m.add("DEFAULT_NUM_PERM", neardup::defaults::NUM_PERM)?;
    m.add("DEFAULT_SEED", neardup::defaults::SEED)?;
    m.add("DEFAULT_SHINGLE", neardup::defaults::SHINGLE)?;
    m.add("DEFAULT_HAMMING", neardup::defaults::HAMMING)?;
    m.add("DEFAULT_MAX_SHINGLES", neardup::defaults::MAX_SHINGLES)?;
    m.add("MIN_THRESHOLD", neardup::run::MIN_THRESHOLD)?;
    // The measures searched by size, with no one band plan (Spark refuses them by name).
    let by_size: Vec<&str> = neardup::Measure::ALL
        .into_iter()
        .filter(|m| !m.has_band_plan())
        .map(neardup::Measure::name)
        .collect();
    m.add("_MEASURES_BY_SIZE", by_size)?;
    m.add("NeardupError", py.get_type::<errors::NeardupError>())?;
    m.add("IndexFileError", py.get_type::<errors::IndexFileError>())?;
    m.add_class::<config::NativeConfig>()?;
    m.add_class::<buffer::Buffer>()?;
    m.add_class::<minhash::MinHash>()?;
    m.add_class::<minhash::MinHashes>()?;
    m.add_function(wrap_pyfunction!(minhash::sha1_hash32, m)?)?;
    m.add_function(wrap_pyfunction!(minhash::sha1_hash64, m)?)?;
    m.add_class::<lsh::LshTable>()?;
    m.add_class::<index::Index>()?;
    m.add_function(wrap_pyfunction!(runs::run_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(runs::run_clusters, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::shingle_sets, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::band_keys, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::jaccard_texts, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::jaccard_sets, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::verify, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_sketch, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_clusters, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_components, m)?)?;
    m.add_class::<spark::BucketWalk>()?;
    m.add_function(wrap_pyfunction!(units::units_dedup, m)?)?;
    m.add_function(wrap_pyfunction!(decontaminate::decontaminate_texts, m)?)?;
    Ok(())
}
