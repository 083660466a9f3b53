//! The shingler on arbitrary (lossily decoded) text, for char:1..8 and word:1..4, at every
//! normalization level: no panic, the basic level is idempotent, and a text that has
//! something to shingle (a character for char:K, a Unicode word for word:K) gives at least
//! one shingle (a text shorter than k is one shingle), and nothing otherwise.
#![no_main]

use libfuzzer_sys::fuzz_target;
use neardup::text::normalize;
use neardup::{Normalization, ShingleKind, Shingler};
use unicode_segmentation::UnicodeSegmentation;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let normalized = normalize(&text);
    assert_eq!(
        normalize(&normalized),
        normalized,
        "normalize is idempotent"
    );
    let kinds = (1..=8)
        .map(ShingleKind::Char)
        .chain((1..=4).map(ShingleKind::Word));
    for kind in kinds {
        for level in Normalization::ALL {
            let shingler = Shingler::new(kind).normalization(level);
            let set = shingler.shingle_set(&text);
            assert!(set.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
            let prepared = shingler.prepare(&text);
            assert_eq!(prepared, level.apply(&text));
            let has_text = match kind {
                ShingleKind::Char(_) => !prepared.is_empty(),
                ShingleKind::Word(_) => prepared.unicode_words().next().is_some(),
            };
            if has_text {
                assert!(!set.is_empty(), "{kind} {level}: no shingle for {prepared:?}");
            } else {
                assert!(set.is_empty(), "{kind} {level}: shingles of nothing");
            }
            // A set is the same whether built in one go or from the hashes.
            let mut hashes = Vec::new();
            shingler.hashes_into(&text, &mut hashes);
            hashes.sort_unstable();
            hashes.dedup();
            assert_eq!(hashes, set);
        }
    }
});
