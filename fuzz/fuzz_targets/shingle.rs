//! The shingler on arbitrary (lossily decoded) text, for char:1..8 and word:1..4, with
//! and without normalization: no panic, and a text that is not empty after
//! normalization gives at least one shingle (a text shorter than k is one shingle).
#![no_main]

use libfuzzer_sys::fuzz_target;
use neardup::shingle::{normalize, ShingleKind, Shingler};

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
        for on in [true, false] {
            let shingler = Shingler::new(kind).normalize(on);
            let set = shingler.shingle_set(&text);
            assert!(set.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
            let prepared = shingler.prepare(&text);
            let has_text = match kind {
                ShingleKind::Char(_) => !prepared.is_empty(),
                ShingleKind::Word(_) => prepared.chars().any(|c| !c.is_whitespace()),
            };
            if on {
                assert_eq!(prepared, normalized);
            }
            if has_text {
                assert!(
                    !set.is_empty(),
                    "{kind} normalize={on}: no shingle for {prepared:?}"
                );
            } else {
                assert!(set.is_empty(), "{kind} normalize={on}: shingles of nothing");
            }
            if on && !normalized.is_empty() {
                assert!(!set.is_empty());
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
