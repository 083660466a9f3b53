//! Committed indexes of each format (`testdata/index-vN`, built by `neardup index build`,
//! `add` and `remove` from the same 40 PyPI summaries): every later version must open them
//! and answer as they did when they were written (`testdata/index-vN.answers.jsonl`), and
//! write to them.

use std::path::{Path, PathBuf};

use neardup_index::{check, IndexWriter, Query, Searcher, FORMAT_VERSION, OLDEST_FORMAT};

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
fn there_is_a_fixture_for_every_format_read() {
    for format in OLDEST_FORMAT..=FORMAT_VERSION {
        assert!(
            testdata().join(format!("index-v{format}")).is_dir(),
            "a new format: keep the old fixtures, add one for it"
        );
    }
}

fn opens_and_answers_as_when_written(format: u32) {
    let dir = testdata().join(format!("index-v{format}"));
    let searcher = Searcher::open(&dir).unwrap();
    let stats = searcher.stats();
    assert_eq!(stats.format, format);
    assert_eq!((stats.documents, stats.deleted, stats.segments), (39, 1, 2));
    assert_eq!(searcher.params().seed, 7);
    let queries = lines(&format!("index-v{format}.queries.jsonl"));
    let answers = lines(&format!("index-v{format}.answers.jsonl"));
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
fn the_format_1_fixture_opens_and_answers_as_when_it_was_written() {
    opens_and_answers_as_when_written(1);
}

#[test]
fn the_format_2_fixture_opens_and_answers_as_when_it_was_written() {
    opens_and_answers_as_when_written(2);
    // Format 2 shares one stored set among copies: "A package" is indexed twice.
    let stats = Searcher::open(testdata().join("index-v2")).unwrap().stats();
    assert!(stats.sets < stats.documents + stats.deleted, "{stats:?}");
}

#[test]
fn the_format_3_fixture_opens_and_answers_as_when_it_was_written() {
    opens_and_answers_as_when_written(3);
    // Its band keys hash 32-bit shingle ids, as a batch run's do; older indexes keep
    // hashing the 64-bit hashes they were built with, even once written in format 3.
    let input = |format: u32| {
        let dir = testdata().join(format!("index-v{format}"));
        Searcher::open(&dir).unwrap().params().sketch_input.clone()
    };
    assert_eq!(input(3), "ids");
    assert_eq!(input(2), "hashes");
    assert_eq!(input(1), "hashes");
}

/// Adding to an old index and compacting it leaves one segment in this version's format
/// that answers as the old one did.
fn can_be_written_to(format: u32) {
    let copy = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(testdata().join(format!("index-v{format}"))).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, copy.path().join(path.file_name().unwrap())).unwrap();
    }
    let mut writer = IndexWriter::open(copy.path()).unwrap();
    writer
        .add(&[("new", "a document added by a later version")])
        .unwrap();
    writer.compact().unwrap();
    let searcher = writer.searcher();
    let stats = searcher.stats();
    assert_eq!((stats.documents, stats.deleted, stats.segments), (40, 0, 1));
    assert_eq!(stats.format, FORMAT_VERSION);
    assert!(check(copy.path()).unwrap().is_ok());
    let queries = lines(&format!("index-v{format}.queries.jsonl"));
    let answers = lines(&format!("index-v{format}.answers.jsonl"));
    for (q, a) in queries.iter().zip(&answers) {
        let found: Vec<&str> = searcher
            .query(q["text"].as_str().unwrap(), &Query::new())
            .unwrap()
            .iter()
            .map(|n| n.id)
            .collect();
        let want: Vec<&str> = a["neighbours"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["id"].as_str().unwrap())
            .collect();
        assert_eq!(found, want, "query {}", q["id"]);
    }
}

#[test]
fn the_format_1_fixture_can_be_written_to() {
    can_be_written_to(1);
}

#[test]
fn the_format_2_fixture_can_be_written_to() {
    can_be_written_to(2);
}

#[test]
fn the_format_3_fixture_can_be_written_to() {
    can_be_written_to(3);
}
