//! Helpers shared by the integration tests: a seeded generator and planted corpora.
#![allow(dead_code)] // each test binary uses its own part of the helpers

/// The library's own seeded generator, so tests need no rand crate.
pub use neardup::SplitMix64 as Rng;

/// Two sets with exactly `shared` common elements and `own` elements each of their own:
/// Jaccard = shared / (shared + 2·own). Elements are fresh random 64-bit values.
pub fn planted_sets(rng: &mut Rng, shared: usize, own: usize) -> (Vec<u64>, Vec<u64>) {
    let common: Vec<u64> = (0..shared).map(|_| rng.next_u64()).collect();
    let mut a = common.clone();
    let mut b = common;
    a.extend((0..own).map(|_| rng.next_u64()));
    b.extend((0..own).map(|_| rng.next_u64()));
    a.sort_unstable();
    b.sort_unstable();
    (a, b)
}

/// Texts of distinct tokens: with `word:1` shingles a text's shingle set is its token set,
/// so the Jaccard similarity of two texts is known exactly.
pub fn tokens_text(tokens: &[u64]) -> String {
    tokens
        .iter()
        .map(|t| format!("t{t:x}"))
        .collect::<Vec<_>>()
        .join(" ")
}
