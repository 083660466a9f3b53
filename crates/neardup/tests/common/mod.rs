//! Helpers shared by the integration tests: a seeded generator and planted corpora.
#![allow(dead_code)] // each test binary uses its own part of the helpers

/// The library's own seeded generator, so tests need no rand crate.
pub use neardup::sketch::SplitMix64 as Rng;

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

/// Long documents of random words, fragments cut from them (a few words replaced),
/// fragments of no document, copies of fragments, and an empty text.
pub fn planted_fragments(seed: u64, hosts: usize) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let word = |rng: &mut Rng| format!("w{}", rng.below(20_000));
    let mut texts: Vec<String> = Vec::new();
    let mut hosted: Vec<Vec<String>> = Vec::new();
    for _ in 0..hosts {
        let len = 300 + rng.below(2_500) as usize;
        let words: Vec<String> = (0..len).map(|_| word(&mut rng)).collect();
        texts.push(words.join(" "));
        hosted.push(words);
    }
    for (i, host) in hosted.iter().enumerate() {
        let len = 20 + rng.below(200) as usize;
        let start = rng.below((host.len() - len) as u64) as usize;
        let mut frag = host[start..start + len].to_vec();
        for _ in 0..rng.below(len as u64 / 6 + 1) {
            let at = rng.below(len as u64) as usize;
            frag[at] = word(&mut rng);
        }
        texts.push(frag.join(" "));
        if i % 10 == 0 {
            texts.push(frag.join(" "));
        }
        if i % 4 == 0 {
            let own: Vec<String> = (0..len).map(|_| word(&mut rng)).collect();
            texts.push(own.join(" "));
        }
    }
    texts.push(String::new());
    texts
}

/// Texts of 10 to 49 random words; every `period`-th is a near-copy (one word replaced,
/// or none) of an earlier text.
pub fn near_copies(seed: u64, n: usize, period: usize) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let mut texts: Vec<String> = Vec::new();
    for i in 0..n {
        if i % period == period - 1 {
            let src = texts[rng.below(i as u64) as usize].clone();
            let mut words: Vec<String> = src.split(' ').map(str::to_owned).collect();
            if rng.below(2) == 0 && words.len() > 3 {
                let k = rng.below(words.len() as u64) as usize;
                words[k] = format!("edit{}", rng.below(1000));
            }
            texts.push(words.join(" "));
        } else {
            let len = 10 + rng.below(40) as usize;
            let words: Vec<String> = (0..len).map(|_| format!("w{}", rng.below(300))).collect();
            texts.push(words.join(" "));
        }
    }
    texts
}

/// A sink that keeps what a run hands on, counting the chunks.
#[derive(Default)]
pub struct Collect {
    pub pairs: Vec<neardup::Pair>,
    pub contained: Vec<neardup::Contained>,
    pub chunks: usize,
}

impl neardup::Sink for Collect {
    type Error = std::convert::Infallible;
    fn pairs(&mut self, chunk: &[neardup::Pair]) -> Result<(), Self::Error> {
        self.chunks += 1;
        self.pairs.extend_from_slice(chunk);
        Ok(())
    }
    fn contained(&mut self, chunk: &[neardup::Contained]) -> Result<(), Self::Error> {
        self.chunks += 1;
        self.contained.extend_from_slice(chunk);
        Ok(())
    }
}
