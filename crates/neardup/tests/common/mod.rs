//! Helpers shared by the integration tests: a seeded generator and planted corpora.
#![allow(dead_code)] // each test binary uses its own part of the helpers

/// SplitMix64: a tiny deterministic generator, so tests need no rand crate.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

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
