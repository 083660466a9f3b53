use super::*;

fn set(n: usize, min: usize, overlap: f64, items: &[&str]) -> TestSet {
    TestSet::builder()
        .ngram(n)
        .min_ngram(min)
        .min_overlap(overlap)
        .build(items)
        .unwrap()
}

const ITEM: &str = "one two three four five six seven eight nine ten";

#[test]
fn an_item_whole_inside_a_document_is_found_with_its_span() {
    let tests = set(4, 4, 0.5, &[ITEM]);
    let doc = format!("before it {ITEM} after it");
    let found = tests.find(&doc);
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].matched, found[0].ngrams), (7, 7));
    assert_eq!(&doc[found[0].spans[0].clone()], ITEM);
}

#[test]
fn an_item_split_across_two_documents_is_partly_in_each() {
    let tests = set(4, 4, 0.0, &[ITEM]);
    let first = tests.find("intro one two three four five six");
    let second = tests.find("five six seven eight nine ten outro");
    // 7 distinct 4-grams: 3 in the first half, 3 in the second; none spans both.
    assert_eq!(first[0].matched, 3);
    assert_eq!(second[0].matched, 3);
    assert!((first[0].containment - 3.0 / 7.0).abs() < 1e-12);
    // At the default overlap neither half is reported.
    let strict = set(4, 4, 0.5, &[ITEM]);
    assert!(strict.find("intro one two three four five six").is_empty());
}

#[test]
fn an_item_inside_another_item_is_found_in_the_document_with_both() {
    let inner = "three four five six seven eight";
    let tests = set(4, 4, 0.5, &[ITEM, inner]);
    let doc = format!("x {ITEM} y");
    let found = tests.find(&doc);
    let items: Vec<usize> = found.iter().map(|m| m.item).collect();
    assert_eq!(items, [0, 1]);
    assert_eq!(&doc[found[1].spans[0].clone()], inner);
    // The document holding only the inner item holds less than half of the outer.
    let found = tests.find(&format!("z {inner} z"));
    assert_eq!(found.iter().map(|m| m.item).collect::<Vec<_>>(), [1]);
}

#[test]
fn short_items_are_matched_whole_and_shorter_ones_not_checked() {
    let tests = set(6, 3, 0.5, &[ITEM, "alpha beta gamma delta", "too short"]);
    assert_eq!(tests.short(), 1);
    assert_eq!(tests.unchecked(), 1);
    assert!(!tests.is_checked(2));
    let found = tests.find("so alpha beta gamma delta and too short");
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].item, found[0].ngrams), (1, 1));
    // Part of a short item is not the item.
    assert!(tests.find("alpha beta gamma").is_empty());
}

#[test]
fn spans_are_byte_offsets_in_multi_byte_text() {
    let item = "Ça coûte très cher à Zürich, dit-elle en été";
    let tests = set(4, 4, 0.5, &[item]);
    let doc = "日本語のテキスト: ça COÛTE très cher à zürich, dit-elle en été! ✓";
    let found = tests.find(doc);
    assert_eq!(found.len(), 1);
    assert_eq!(
        &doc[found[0].spans[0].clone()],
        "ça COÛTE très cher à zürich, dit-elle en été"
    );
}

#[test]
fn decomposed_accents_and_full_width_letters_are_the_same_words() {
    let item = "the café on the corner serves the best coffee in the whole old town";
    let tests = set(13, 8, 1.0, &[item]);
    // NFD: "é" as "e" and a combining acute accent; full-width "ｃｏｆｆｅｅ".
    let nfd = "Intro. the cafe\u{301} on the corner serves the best coffee in the whole old town.";
    let wide = "the café on the corner serves the best ｃｏｆｆｅｅ in the whole old town";
    for doc in [nfd, wide] {
        let found = tests.find(doc);
        assert_eq!(found.len(), 1, "{doc}");
        let span = &doc[found[0].spans[0].clone()];
        assert!(
            span.starts_with("the caf") && span.ends_with("old town"),
            "{span}"
        );
    }
}

#[test]
fn punctuation_and_case_do_not_matter_but_words_do() {
    let tests = set(4, 4, 1.0, &[ITEM]);
    assert_eq!(
        tests
            .find("ONE, two; three: four! five six seven eight nine ten")
            .len(),
        1
    );
    assert!(tests
        .find("one two three four five six seven eight nine eleven")
        .is_empty());
}

#[test]
fn separate_occurrences_give_separate_spans_and_count_once() {
    let tests = set(4, 4, 0.5, &[ITEM]);
    let doc = format!("{ITEM} and again {ITEM}");
    let found = tests.find(&doc);
    assert_eq!(found[0].matched, 7);
    assert_eq!(found[0].spans.len(), 2);
    assert_eq!(&doc[found[0].spans[1].clone()], ITEM);
}

#[test]
fn bad_settings_are_errors() {
    assert!(matches!(
        TestSet::builder().ngram(0).build([ITEM]),
        Err(DecontaminateError::BadNgram { .. })
    ));
    assert!(matches!(
        TestSet::builder().ngram(5).min_ngram(6).build([ITEM]),
        Err(DecontaminateError::BadNgram { .. })
    ));
    assert!(matches!(
        TestSet::builder().min_overlap(1.5).build([ITEM]),
        Err(DecontaminateError::BadOverlap(_))
    ));
}

#[test]
fn a_document_without_words_finds_nothing() {
    let tests = set(4, 4, 0.0, &[ITEM]);
    assert!(tests.find("").is_empty());
    assert!(tests.find("... !!! ").is_empty());
}

#[test]
fn items_sharing_n_grams_and_an_item_repeating_one_are_each_counted_right() {
    // Item 1 repeats its first 4-gram; item 2 is item 0 again.
    let repeating = "one two three four one two three four five";
    let tests = set(4, 4, 0.0, &[ITEM, repeating, ITEM]);
    let found = tests.find("one two three four five");
    let got: Vec<(usize, usize, usize)> = found
        .iter()
        .map(|m| (m.item, m.matched, m.ngrams))
        .collect();
    // Item 1's distinct 4-grams: "one two three four", "two three four one",
    // "three four one two", "four one two three", "two three four five".
    assert_eq!(got, [(0, 2, 7), (1, 2, 5), (2, 2, 7)]);
}

#[test]
fn ascii_lower_lowercases_every_ascii_byte_at_every_place() {
    for b in 0u8..0x80 {
        for at in 0..8 {
            let word = u64::from(b) << (at * 8) | 0x41 << ((at + 1) % 8 * 8);
            let mut bytes = word.to_le_bytes();
            bytes.make_ascii_lowercase();
            assert_eq!(
                ascii_lower(word),
                u64::from_le_bytes(bytes),
                "{b:#x} at {at}"
            );
        }
    }
}

proptest::proptest! {
    /// A document's word hashed in place is the hash of the word folded, whatever its
    /// length, case, script and place in the text (the fast path reads 16 bytes ahead).
    #[test]
    fn a_word_hashed_in_place_is_its_folded_hash(
        text in "([A-Za-z0-9_]{1,20}|[ .,'é\u{212b}\u{ff21}ß]){0,12}"
    ) {
        let mut buf = String::new();
        for (start, end) in word_spans(&text) {
            let fast = word_hash(&text, start, end, &mut buf);
            fold(&text[start..end], &mut buf);
            proptest::prop_assert_eq!(fast, hash_folded(&buf), "{:?}", &text[start..end]);
        }
    }
}
