//! The committed index of format 1 (`testdata/index-v1`, built by `neardup index build`,
//! `add` and `remove`): every later version must open it and answer as it did when it
//! was written (`testdata/index-v1.answers.jsonl`).

use std::path::{Path, PathBuf};

use neardup_index::{check, IndexWriter, Query, Searcher, FORMAT_VERSION};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn lines(name: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(testdata().join(name))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_format_1_fixture_opens_and_answers_as_when_it_was_written() {
    assert_eq!(
        FORMAT_VERSION, 1,
        "a new format: keep this fixture, add one for it"
    );
    let dir = testdata().join("index-v1");
    let searcher = Searcher::open(&dir).unwrap();
    let stats = searcher.stats();
    assert_eq!((stats.documents, stats.deleted, stats.segments), (39, 1, 2));
    assert_eq!(searcher.params().seed, 7);
    let queries = lines("index-v1.queries.jsonl");
    let answers = lines("index-v1.answers.jsonl");
    assert_eq!(queries.len(), answers.len());
    for (q, a) in queries.iter().zip(&answers) {
        let found = searcher
            .query(q["text"].as_str().unwrap(), &Query::new())
            .unwrap();
        let want = a["neighbours"].as_array().unwrap();
        assert_eq!(found.len(), want.len(), "query {}", q["id"]);
        for (n, w) in found.iter().zip(want) {
            assert_eq!(n.id, w["id"].as_str().unwrap(), "query {}", q["id"]);
            let j = n.similarity.jaccard.unwrap();
            assert!(
                (j - w["jaccard"].as_f64().unwrap()).abs() < 1e-6,
                "query {}",
                q["id"]
            );
        }
    }
    assert!(check(&dir).unwrap().is_ok());
}

#[test]
fn the_format_1_fixture_can_be_written_to() {
    let copy = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(testdata().join("index-v1")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, copy.path().join(path.file_name().unwrap())).unwrap();
    }
    let mut writer = IndexWriter::open(copy.path()).unwrap();
    writer
        .add(&[("new", "a document added by a later version")])
        .unwrap();
    writer.compact().unwrap();
    let stats = writer.searcher().stats();
    assert_eq!((stats.documents, stats.deleted, stats.segments), (40, 0, 1));
    assert!(check(copy.path()).unwrap().is_ok());
}
