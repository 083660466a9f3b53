//! The index against the batch run, across batches, removals, reopening and damage.

use std::collections::BTreeMap;
use std::path::Path;

use neardup::{Config, Pipeline, Quiet};
use neardup_index::{check, Error, IndexWriter, Outcome, Query, Searcher};

/// The shipped sample of PyPI package summaries: (id, text).
fn summaries() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/pypi-summaries.jsonl");
    std::fs::read_to_string(path)
        .expect("testdata/pypi-summaries.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
            (
                v["id"].as_str().unwrap().to_string(),
                v["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn config() -> Config {
    Config::builder().threshold(0.7).seed(3).build().unwrap()
}

/// Every pair (a < b by position in `docs`) the index answers when queried with each
/// document, with its Jaccard.
fn pairs_by_query(searcher: &Searcher, docs: &[(String, String)]) -> BTreeMap<(u32, u32), f64> {
    let position: BTreeMap<&str, u32> = docs
        .iter()
        .enumerate()
        .map(|(i, (id, _))| (id.as_str(), i as u32))
        .collect();
    let mut out = BTreeMap::new();
    for (a, (id, text)) in docs.iter().enumerate() {
        for n in searcher.query(text, &Query::new()).unwrap() {
            if n.id == *id {
                continue;
            }
            let b = position[n.id];
            let key = (a as u32).min(b)..=(a as u32).max(b);
            let j = n.similarity.jaccard.expect("exact Jaccard");
            if let Some(old) = out.insert((*key.start(), *key.end()), j) {
                assert_eq!(old, j, "asymmetric answer for {key:?}");
            }
        }
    }
    out
}

#[test]
fn an_index_queried_with_its_corpus_finds_the_batch_runs_pairs() {
    let docs = summaries();
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    let report = writer.add(&docs).unwrap();
    assert_eq!(report.added + report.empty.len(), docs.len());
    let searcher = Searcher::open(dir.path()).unwrap();
    let found = pairs_by_query(&searcher, &docs);

    // The batch run, buckets only, with the same seed and plan.
    let batch = Pipeline::new(searcher.params().config().unwrap()).unwrap();
    let texts: Vec<&str> = docs.iter().map(|(_, t)| t.as_str()).collect();
    let (pairs, _) = batch.pairs(&batch.sketch_texts(&texts).unwrap(), &mut Quiet);
    let expected: BTreeMap<(u32, u32), f64> = pairs
        .iter()
        .map(|p| ((p.a, p.b), p.similarity.jaccard.unwrap()))
        .collect();
    assert!(
        expected.len() > 1000,
        "the sample has near-duplicates: {}",
        expected.len()
    );
    assert_eq!(found, expected);
}

#[test]
fn ten_add_batches_answer_as_one_build() {
    let docs: Vec<(String, String)> = summaries().into_iter().take(2000).collect();
    let (one, ten) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    IndexWriter::create(one.path(), &config())
        .unwrap()
        .add(&docs)
        .unwrap();
    let mut writer = IndexWriter::create(ten.path(), &config()).unwrap();
    for batch in docs.chunks(200) {
        writer.add(batch).unwrap();
    }
    drop(writer);
    let (a, b) = (
        Searcher::open(one.path()).unwrap(),
        Searcher::open(ten.path()).unwrap(),
    );
    assert_eq!(a.len(), b.len());
    // Ten batches of similar size were merged as they piled up.
    assert!(b.stats().segments < 10, "{:?}", b.stats());
    let (pa, pb) = (pairs_by_query(&a, &docs), pairs_by_query(&b, &docs));
    assert!(!pa.is_empty());
    assert_eq!(pa, pb);
    assert!(check(ten.path()).unwrap().is_ok());
}

#[test]
fn removed_and_replaced_documents_are_never_returned() {
    let text = "Fast near-duplicate detection for large text corpora";
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    writer
        .add(&[
            ("a", text),
            ("b", "Fast near-duplicate detection for large text corpora!"),
            ("c", "unrelated words about gardening and roses"),
        ])
        .unwrap();
    let query = |w: &IndexWriter| -> Vec<String> {
        w.searcher()
            .query(text, &Query::new())
            .unwrap()
            .into_iter()
            .map(|n| n.id.to_string())
            .collect()
    };
    assert_eq!(query(&writer), ["a", "b"]);
    let report = writer.remove(&["b", "nobody"]).unwrap();
    assert_eq!(report.removed, 1);
    assert_eq!(report.missing, ["nobody"]);
    assert_eq!(query(&writer), ["a"]);
    // Adding an existing id replaces the document: the old text is gone.
    let report = writer
        .add(&[("a", "a completely different listing for a bicycle")])
        .unwrap();
    assert_eq!((report.added, report.replaced), (1, 1));
    assert!(query(&writer).is_empty());
    assert_eq!(writer.searcher().len(), 2);
    writer.compact().unwrap();
    let stats = writer.searcher().stats();
    assert_eq!((stats.documents, stats.deleted, stats.segments), (2, 0, 1));
    assert!(query(&writer).is_empty());
    writer.remove(&["a", "c"]).unwrap();
    assert!(writer.searcher().is_empty());
    assert_eq!(writer.searcher().stats().segments, 0);
    assert!(check(dir.path()).unwrap().is_ok());
}

#[test]
fn add_unique_keeps_the_first_of_each_group_of_near_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    writer
        .add(&[(
            "old",
            "Handmade oak dining table, seats six, excellent condition",
        )])
        .unwrap();
    let outcomes = writer
        .add_unique(&[
            (
                "n1",
                "Handmade oak dining table, seats six. Excellent condition!",
            ),
            ("n2", "Set of four ladder-back chairs in solid beech wood"),
            ("n3", "Set of four ladder-back chairs in solid beech wood."),
            ("n4", ""),
            (
                "old",
                "Handmade oak dining table, seats six, excellent condition!",
            ),
        ])
        .unwrap();
    assert!(matches!(&outcomes[0], Outcome::Duplicate { of, indexed: true, .. } if of == "old"));
    assert_eq!(outcomes[1], Outcome::Added { replaced: false });
    assert!(
        matches!(&outcomes[2], Outcome::Duplicate { of, indexed: false, similarity } if of == "n2" && similarity.jaccard.unwrap() >= 0.7)
    );
    assert_eq!(outcomes[3], Outcome::Empty);
    // A new version of an indexed id is not a duplicate of the version it replaces.
    assert_eq!(outcomes[4], Outcome::Added { replaced: true });
    let searcher = writer.searcher();
    let mut ids: Vec<&str> = searcher.ids().collect();
    ids.sort_unstable();
    assert_eq!(ids, ["n2", "old"]);
}

#[test]
fn copies_share_one_stored_set_and_answer_in_id_order_across_segments_merges_and_removals() {
    let text = "Vintage road bike, 56 cm steel frame, new tyres and brakes";
    let near = "Vintage road bike, 56 cm steel frame, new tyres and brakes!";
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    // Ids out of order in the batch; one near-copy with its own set.
    writer
        .add(&[("c", text), ("a", text), ("near", near), ("b", text)])
        .unwrap();
    let ids = |w: &IndexWriter, k: Option<usize>| -> Vec<String> {
        let q = k.map_or(Query::new(), |k| Query::new().top(k));
        let found = w.searcher().query(text, &q).unwrap();
        assert!(found
            .windows(2)
            .all(|p| (-p[0].score(), p[0].id) < (-p[1].score(), p[1].id)));
        found.iter().map(|n| n.id.to_string()).collect()
    };
    assert_eq!(ids(&writer, None), ["a", "b", "c", "near"]);
    assert_eq!(writer.searcher().stats().sets, 2);
    // A second segment with more copies: each segment stores the set once.
    writer.add(&[("aa", text), ("0", text)]).unwrap();
    assert_eq!(writer.searcher().stats().segments, 2);
    assert_eq!(writer.searcher().stats().sets, 3);
    assert_eq!(ids(&writer, None), ["0", "a", "aa", "b", "c", "near"]);
    assert_eq!(ids(&writer, Some(3)), ["0", "a", "aa"]);
    // A merge joins the copies of both segments in one entry.
    writer.compact().unwrap();
    let stats = writer.searcher().stats();
    assert_eq!((stats.segments, stats.sets, stats.documents), (1, 2, 6));
    assert_eq!(ids(&writer, None), ["0", "a", "aa", "b", "c", "near"]);
    // Removing and replacing single copies leaves the others answered.
    writer.remove(&["a", "0"]).unwrap();
    writer
        .add(&[("b", "something else entirely, about roses")])
        .unwrap();
    assert_eq!(ids(&writer, None), ["aa", "c", "near"]);
    writer.remove(&["aa", "c"]).unwrap();
    assert_eq!(ids(&writer, None), ["near"]);
    writer.compact().unwrap();
    assert_eq!(ids(&writer, None), ["near"]);
    assert_eq!(writer.searcher().stats().sets, 2);
    assert!(check(dir.path()).unwrap().is_ok());
}

#[test]
fn query_thresholds_and_top_k() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    let base = "the quick brown fox jumps over the lazy dog near the river bank";
    writer
        .add(&[
            ("same", base),
            (
                "close",
                "the quick brown fox jumps over the lazy dog near the river bank!",
            ),
            (
                "nearer",
                "the quick brown fox jumped over the lazy dog near the river bank",
            ),
        ])
        .unwrap();
    let s = writer.searcher();
    let all = s.query(base, &Query::new()).unwrap();
    assert_eq!(all[0].id, "same");
    assert!(all.windows(2).all(|w| w[0].score() >= w[1].score()));
    assert_eq!(s.query(base, &Query::new().top(1)).unwrap().len(), 1);
    let strict = s.query(base, &Query::new().threshold(0.99)).unwrap();
    assert!(strict.iter().all(|n| n.score() >= 0.99) && strict.len() < all.len());
    assert!(matches!(
        s.query(base, &Query::new().threshold(0.5)),
        Err(Error::ThresholdBelowIndex { .. })
    ));
    assert!(matches!(
        s.query(base, &Query::new().threshold(f64::NAN)),
        Err(Error::InvalidThreshold(_))
    ));
}

#[test]
fn other_parameters_are_refused_by_name_and_an_index_is_not_created_twice() {
    let dir = tempfile::tempdir().unwrap();
    drop(IndexWriter::create(dir.path(), &config()).unwrap());
    let other = Config::builder().threshold(0.7).seed(4).build().unwrap();
    let err = Searcher::open_with(dir.path(), &other).unwrap_err();
    assert!(
        err.to_string()
            .contains("seed: the index has 3, asked for 4"),
        "{err}"
    );
    assert!(matches!(
        IndexWriter::open_with(dir.path(), &other),
        Err(Error::ParameterMismatch { .. })
    ));
    assert!(Searcher::open_with(dir.path(), &config()).is_ok());
    // Created but never committed to (a build that died before its commit): created
    // anew. Once it holds a commit, it is refused.
    drop(IndexWriter::create(dir.path(), &config()).unwrap());
    let mut writer = IndexWriter::open(dir.path()).unwrap();
    writer.add(&[("a", "some words to commit")]).unwrap();
    drop(writer);
    assert!(matches!(
        IndexWriter::create(dir.path(), &config()),
        Err(Error::AlreadyExists(_))
    ));
    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        Searcher::open(empty.path()),
        Err(Error::NotAnIndex(_))
    ));
}

#[test]
fn check_finds_a_damaged_segment_and_open_refuses_a_truncated_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    writer.add(&summaries()[..300]).unwrap();
    drop(writer);
    assert!(check(dir.path()).unwrap().is_ok());
    let seg = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "seg"))
        .unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&seg, &bytes).unwrap();
    let report = check(dir.path()).unwrap();
    assert!(!report.is_ok());
    assert!(
        report.problems[0].contains("checksum"),
        "{:?}",
        report.problems
    );
    std::fs::write(&seg, &bytes[..100]).unwrap();
    let err = Searcher::open(dir.path()).unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains(".seg"), "{err}");
}

#[test]
fn a_reader_keeps_its_state_until_it_reloads() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    let docs = summaries();
    writer.add(&docs[..100]).unwrap();
    let before = Searcher::open(dir.path()).unwrap();
    for batch in docs[100..900].chunks(100) {
        writer.add(batch).unwrap(); // merges remove segments the reader has mapped
    }
    writer.compact().unwrap();
    assert_eq!(before.len(), 100);
    let (id, text) = &docs[5];
    assert!(before
        .query(text, &Query::new())
        .unwrap()
        .iter()
        .any(|n| n.id == *id));
    let after = before.reload().unwrap();
    assert_eq!(after.len(), writer.searcher().len());
    assert!(after.generation() > before.generation());
}

#[test]
fn reader_threads_see_only_whole_commits_while_a_writer_adds_and_removes() {
    let docs = summaries();
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    writer.add(&docs[..100]).unwrap();
    let first = writer.searcher().clone();
    let batch_of = |id: &str| docs.iter().position(|(d, _)| d == id).unwrap() / 100;
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (mut searcher, done) = (first.clone(), &done);
                scope.spawn(move || {
                    let mut states = std::collections::BTreeSet::new();
                    while !done.load(std::sync::atomic::Ordering::Relaxed) {
                        searcher = searcher.reload().unwrap();
                        let mut per_batch = BTreeMap::new();
                        for id in searcher.ids() {
                            *per_batch.entry(batch_of(id)).or_insert(0) += 1;
                        }
                        // Batch b was added whole (100 ids; the sample's ids are unique)
                        // and odd batches are later removed whole.
                        assert!(per_batch.values().all(|&n| n == 100), "{per_batch:?}");
                        states.insert(searcher.generation());
                    }
                    states.len()
                })
            })
            .collect();
        for b in 1..30 {
            writer.add(&docs[b * 100..(b + 1) * 100]).unwrap();
            if b % 2 == 1 {
                let ids: Vec<&str> = docs[b * 100..(b + 1) * 100]
                    .iter()
                    .map(|(id, _)| id.as_str())
                    .collect();
                writer.remove(&ids).unwrap();
            }
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        for r in readers {
            assert!(r.join().unwrap() >= 1);
        }
    });
    assert_eq!(writer.searcher().len(), 1500);
}
