//! A containment index against the exact containment join: queried with each document of
//! a corpus of fragments planted in long documents, it answers a verified subset of the
//! join's pairs, each with its exact containment, with the recall the plan promises,
//! across segments, merges, removals and reopening.

#[path = "../../neardup/tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;

use neardup::{Config, Measure, Pipeline, Quiet, ShingleKind};
use neardup_index::{check, Error, IndexWriter, Inside, Query, Searcher};

fn config(t: f64) -> Config {
    Config::builder()
        .shingle(ShingleKind::Word(2))
        .measure(Measure::Containment)
        .threshold(t)
        .build()
        .unwrap()
}

/// The exact join's pairs as {lower, higher} document numbers, with their containment.
fn truth(texts: &[String], t: f64) -> BTreeMap<(u32, u32), f64> {
    let p = Pipeline::new(config(t)).unwrap();
    let shingled = p.shingle(texts).unwrap();
    let (pairs, _) = p.exact_containment_pairs(&shingled, &mut Quiet);
    pairs
        .iter()
        .map(|c| ((c.a.min(c.b), c.a.max(c.b)), c.containment))
        .collect()
}

/// The pairs the index answers when queried with each document, as {lower, higher}, with
/// their containment; checks that each answer says the smaller document is inside.
fn answered(searcher: &Searcher, texts: &[String], query: &Query) -> BTreeMap<(u32, u32), f64> {
    let p = searcher.pipeline();
    let size = |i: usize| p.shingle_doc(&texts[i]).set().len();
    let mut out = BTreeMap::new();
    for (q, text) in texts.iter().enumerate() {
        for n in searcher.query(text, query).unwrap() {
            let d: usize = n.id[1..].parse().unwrap();
            if d == q {
                continue;
            }
            let c = n
                .containment
                .expect("a containment index says how much is inside");
            let inside = if size(q) <= size(d) {
                Inside::Query
            } else {
                Inside::Document
            };
            assert_eq!(c.inside, inside, "query {q}, neighbour {d}");
            assert!(n.similarity.jaccard.unwrap() <= c.value);
            let pair = (q.min(d) as u32, q.max(d) as u32);
            if let Some(before) = out.insert(pair, c.value) {
                assert_eq!(before, c.value, "{pair:?} answered both ways alike");
            }
        }
    }
    out
}

/// Every answer is a pair of the exact join with its exact containment, and the answers
/// hold the join's pairs with the recall the plan promises: each pair is found with
/// probability at least [`neardup::candidates::ENSEMBLE_RECALL`], so the share found falls below it by
/// more than three standard deviations of a binomial share only by a defect.
fn assert_verified_subset(got: &BTreeMap<(u32, u32), f64>, want: &BTreeMap<(u32, u32), f64>) {
    for (pair, c) in got {
        assert_eq!(want.get(pair), Some(c), "{pair:?} is not in the exact join");
    }
    let p = neardup::candidates::ENSEMBLE_RECALL;
    let floor = p - 3.0 * (p * (1.0 - p) / want.len() as f64).sqrt();
    let found = got.len() as f64 / want.len() as f64;
    eprintln!("recall {found:.3} ({} of {})", got.len(), want.len());
    assert!(
        found >= floor,
        "recall {found:.3} ({} of {}) below {floor:.3}",
        got.len(),
        want.len()
    );
}

fn ids(texts: &[String], range: std::ops::Range<usize>) -> Vec<(String, &str)> {
    range
        .map(|i| (format!("d{i}"), texts[i].as_str()))
        .collect()
}

#[test]
fn a_containment_index_answers_the_exact_join_across_segments_and_merges() {
    let texts = common::planted_fragments(11, 160);
    let t = 0.8;
    let want = truth(&texts, t);
    assert!(want.len() >= 100, "{} pairs planted", want.len());
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config(t)).unwrap();
    // Three batches: three segments, so answers come from several.
    let third = texts.len() / 3;
    for range in [0..third, third..2 * third, 2 * third..texts.len()] {
        writer.add(&ids(&texts, range)).unwrap();
    }
    let searcher = Searcher::open(dir.path()).unwrap();
    assert!(searcher.is_containment());
    assert_eq!(searcher.params().measure, "containment");
    assert!(searcher.stats().segments >= 2);
    let got = answered(&searcher, &texts, &Query::new());
    assert_verified_subset(&got, &want);

    // A higher threshold answers the join at it.
    let strict = answered(&searcher, &texts, &Query::new().threshold(0.95));
    assert_verified_subset(&strict, &truth(&texts, 0.95));
    assert!(strict.len() < got.len());

    // Merged into one segment, the same answers.
    writer.compact().unwrap();
    let merged = Searcher::open(dir.path()).unwrap();
    assert_eq!(merged.stats().segments, 1);
    assert_eq!(answered(&merged, &texts, &Query::new()), got);
    assert!(check(dir.path()).unwrap().is_ok());
}

#[test]
fn common_tokens_are_learned_from_the_first_documents_pinned_and_checked() {
    // Boilerplate every listing carries: its word pairs are in every document.
    let texts: Vec<String> = common::planted_fragments(5, 120)
        .into_iter()
        .map(|t| {
            if t.is_empty() {
                t
            } else {
                format!("posted today by the seller {t}")
            }
        })
        .collect();
    let t = 0.8;
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config(t)).unwrap();
    assert_eq!(writer.searcher().stats().common_tokens, None);
    let half = texts.len() / 2;
    writer.add(&ids(&texts, 0..half)).unwrap();
    let learned = writer.searcher().stats().common_tokens;
    assert_eq!(
        learned,
        Some(4),
        "posted today, today by, by the, the seller"
    );
    // The second batch is signed without the same tokens, so it meets the first.
    writer.add(&ids(&texts, half..texts.len())).unwrap();
    assert_eq!(writer.searcher().stats().common_tokens, learned);
    let searcher = Searcher::open(dir.path()).unwrap();
    assert_verified_subset(
        &answered(&searcher, &texts, &Query::new()),
        &truth(&texts, t),
    );
    assert!(check(dir.path()).unwrap().is_ok());
    drop(writer);
    // A damaged COMMON file is named when the index is opened.
    let path = dir.path().join("COMMON");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[17] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let err = Searcher::open(dir.path()).unwrap_err().to_string();
    assert!(err.contains("COMMON") && err.contains("checksum"), "{err}");
}

#[test]
fn removed_documents_are_no_longer_answered_and_top_keeps_the_most_contained() {
    let host = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi \
                omicron pi rho sigma tau upsilon phi chi psi omega";
    let fragment = "gamma delta epsilon zeta eta theta iota kappa";
    let loose = "gamma delta epsilon zeta eta theta iota kappa one two";
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config(0.6)).unwrap();
    writer
        .add(&[("host", host), ("fragment", fragment), ("loose", loose)])
        .unwrap();
    let searcher = Searcher::open(dir.path()).unwrap();
    // The fragment is inside the host (7 of its 7 word pairs) and inside `loose`.
    let found = searcher.query(fragment, &Query::new()).unwrap();
    let by_id: BTreeMap<&str, (f64, Inside)> = found
        .iter()
        .map(|n| (n.id, n.containment.map(|c| (c.value, c.inside)).unwrap()))
        .collect();
    assert_eq!(by_id["host"], (1.0, Inside::Query));
    assert_eq!(by_id["loose"], (1.0, Inside::Query));
    assert_eq!(by_id["fragment"], (1.0, Inside::Query));
    // Asked with the host, the fragment is inside it; `loose` has 7 of its 9 pairs there.
    let found = searcher.query(host, &Query::new().top(1)).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].containment.unwrap().inside, Inside::Document);
    assert_eq!(found[0].score(), 1.0);
    let all = searcher.query(host, &Query::new()).unwrap();
    let loose_in_host = all.iter().find(|n| n.id == "loose").unwrap();
    assert_eq!(loose_in_host.containment.unwrap().value, 7.0 / 9.0);
    assert!(all.windows(2).all(|w| w[0].score() >= w[1].score()));

    writer.remove(&["host"]).unwrap();
    let after = Searcher::open(dir.path()).unwrap();
    let found = after.query(fragment, &Query::new()).unwrap();
    assert!(found.iter().all(|n| n.id != "host"), "{found:?}");
    assert_eq!(found.len(), 2);
}

#[test]
fn a_containment_index_refuses_what_it_does_not_do() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config(0.8)).unwrap();
    let err = writer
        .add_unique(&[("a", "some text of a few words")])
        .unwrap_err();
    assert!(matches!(err, Error::NotForContainment(_)), "{err}");
    assert!(err.to_string().contains("containment index"), "{err}");
    drop(writer);
    // Opened for Jaccard, the pinned measure is named as the difference.
    let jaccard = Config::builder()
        .shingle(ShingleKind::Word(2))
        .threshold(0.8)
        .build()
        .unwrap();
    let err = Searcher::open_with(dir.path(), &jaccard).unwrap_err();
    assert!(
        err.to_string()
            .contains("measure: the index has containment, asked for jaccard"),
        "{err}"
    );
}
