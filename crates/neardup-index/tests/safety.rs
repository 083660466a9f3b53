//! What an index must never do to its user's data: delete files it did not write, carry
//! damage into a new segment, report a durable change as lost, or wrap a counter.

use std::path::Path;

use neardup::Config;
use neardup_index::{check, Error, IndexWriter, Outcome, Searcher};

fn config() -> Config {
    Config::builder().threshold(0.8).build().unwrap()
}

fn listing(i: usize) -> (String, String) {
    (
        format!("doc-{i}"),
        format!("listing number {i}: a handmade oak table with {i} chairs, collection only"),
    )
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn creating_an_index_refuses_a_directory_with_the_users_files_and_keeps_them() {
    for user_file in ["report.tmp", "take1.seg", "00000001.seg", "notes.txt"] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(user_file), "precious").unwrap();
        let err = IndexWriter::create(dir.path(), &config()).unwrap_err();
        assert!(
            matches!(&err, Error::NotEmpty { example, .. } if example == user_file),
            "{user_file}: {err}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join(user_file)).unwrap(),
            "precious"
        );
        assert_eq!(names(dir.path()), [user_file], "nothing added or removed");
    }
    // A new or empty directory is fine, and so is one a build left before its first commit.
    let dir = tempfile::tempdir().unwrap();
    drop(IndexWriter::create(dir.path(), &config()).unwrap());
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    writer.add(&[listing(1)]).unwrap();
}

#[test]
fn a_writer_removes_only_the_files_it_could_have_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    writer.add(&[listing(1)]).unwrap();
    drop(writer);
    // A user's files in the index's directory, and what an interrupted commit leaves.
    for name in ["report.tmp", "take1.seg", "notes.del", "COMMON.bak"] {
        std::fs::write(dir.path().join(name), "precious").unwrap();
    }
    for name in [
        "00000099.seg.tmp",
        "00000099.seg",
        "00000001.42.del",
        "MANIFEST.tmp",
    ] {
        std::fs::write(dir.path().join(name), "left by a crash").unwrap();
    }
    drop(IndexWriter::open(dir.path()).unwrap());
    let left = names(dir.path());
    for name in ["report.tmp", "take1.seg", "notes.del", "COMMON.bak"] {
        assert!(
            left.contains(&name.to_string()),
            "{name} was removed: {left:?}"
        );
    }
    for name in [
        "00000099.seg.tmp",
        "00000099.seg",
        "00000001.42.del",
        "MANIFEST.tmp",
    ] {
        assert!(
            !left.contains(&name.to_string()),
            "{name} was kept: {left:?}"
        );
    }
}

/// Flips one byte inside a live segment's last section (its layout still adds up: only
/// the checksum can tell).
fn damage_a_segment(dir: &Path) {
    let seg = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "seg"))
        .unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    let at = bytes.len() - 12;
    bytes[at] ^= 0x10;
    std::fs::write(&seg, bytes).unwrap();
}

#[test]
fn a_merge_refuses_to_carry_damage_into_a_new_segment() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    writer
        .add(&(0..20).map(listing).collect::<Vec<_>>())
        .unwrap();
    writer.add(&[listing(100)]).unwrap();
    drop(writer);
    damage_a_segment(dir.path());
    assert!(!check(dir.path()).unwrap().is_ok());
    let mut writer = IndexWriter::open(dir.path()).unwrap();
    writer.remove(&["doc-3"]).unwrap();
    let err = writer.compact().unwrap_err();
    assert!(matches!(&err, Error::Damaged { .. }), "{err}");
    assert!(err.to_string().contains("checksum"), "{err}");
    // The damage is still there to be seen, not laundered under a fresh checksum.
    let report = check(dir.path()).unwrap();
    assert!(!report.is_ok());
    assert!(
        report.problems[0].contains("checksum"),
        "{:?}",
        report.problems
    );
    // The writer is still usable: the refused merge changed nothing.
    writer.add(&[listing(200)]).unwrap();
    assert!(writer.searcher().contains("doc-200"));
}

#[test]
fn an_add_stands_when_the_merge_after_it_fails() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    // Three segments of one tier; the fourth add would merge them all.
    for batch in 0..3 {
        let docs: Vec<_> = (batch * 10..batch * 10 + 10).map(listing).collect();
        writer.add(&docs).unwrap();
    }
    drop(writer);
    damage_a_segment(dir.path());
    let mut writer = IndexWriter::open(dir.path()).unwrap();
    let docs: Vec<_> = (30..40).map(listing).collect();
    let report = writer.add(&docs).unwrap();
    assert_eq!(report.added, 10);
    let why = writer.merge_failure().expect("the merge failed");
    assert!(why.contains("refusing to merge a damaged segment"), "{why}");
    // Committed and visible, to this writer and to a new reader.
    assert!(writer.searcher().contains("doc-35"));
    let reader = Searcher::open(dir.path()).unwrap();
    assert_eq!(reader.len(), 40);
    assert_eq!(reader.stats().segments, 4);
    // Nothing half-written is left behind.
    assert!(names(dir.path()).iter().all(|n| !n.ends_with(".tmp")));
}

#[test]
fn a_counter_at_its_largest_value_is_refused_not_wrapped() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    writer.add(&[listing(1)]).unwrap();
    drop(writer);
    let path = dir.path().join("MANIFEST");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    manifest["generation"] = serde_json::json!(u64::MAX);
    std::fs::write(&path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let mut writer = IndexWriter::open(dir.path()).unwrap();
    let err = writer.add(&[listing(2)]).unwrap_err();
    assert!(matches!(err, Error::CounterExhausted(_)), "{err}");
    // The index is as it was, and still opens.
    let reader = Searcher::open(dir.path()).unwrap();
    assert_eq!((reader.len(), reader.generation()), (1, u64::MAX));
    assert!(check(dir.path()).unwrap().is_ok());
}

#[test]
fn ids_are_counted_once_and_an_empty_id_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    let (_, text) = listing(1);
    let report = writer
        .add(&[
            ("a", text.as_str()),
            ("a", text.as_str()),
            ("b", "another text"),
        ])
        .unwrap();
    assert_eq!(
        (report.added, report.replaced, report.superseded),
        (2, 0, 1)
    );
    let report = writer.add(&[("a", text.as_str())]).unwrap();
    assert_eq!(
        (report.added, report.replaced, report.superseded),
        (1, 1, 0)
    );
    let report = writer.remove(&["a", "a", "a", "zz", "zz"]).unwrap();
    assert_eq!(report.removed, 1);
    assert_eq!(report.missing, ["zz"]);
    assert_eq!(report.repeated, 3);
    let err = writer.add(&[("x", "text"), ("", "no id")]).unwrap_err();
    assert!(matches!(err, Error::EmptyId { position: 1 }), "{err}");
    let err = writer.add_unique(&[("", "no id")]).unwrap_err();
    assert!(matches!(err, Error::EmptyId { position: 0 }), "{err}");
}

#[test]
fn add_unique_adds_one_document_per_id_and_says_which_was_superseded() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    let outcomes = writer
        .add_unique(&[
            ("new", "Set of four ladder-back chairs in solid beech wood"),
            (
                "new",
                "Brass desk lamp with a green glass shade, working order",
            ),
            // A copy of the superseded text: nothing in the index is like it.
            (
                "other",
                "Set of four ladder-back chairs in solid beech wood",
            ),
        ])
        .unwrap();
    assert_eq!(outcomes[0], Outcome::Superseded);
    assert_eq!(outcomes[1], Outcome::Added { replaced: false });
    assert_eq!(outcomes[2], Outcome::Added { replaced: false });
    let searcher = writer.searcher();
    assert_eq!(searcher.len(), 2);
    assert!(searcher.contains("new") && searcher.contains("other"));
}

#[test]
fn a_batch_judged_is_committed_only_against_the_same_commit() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    let batch = writer.judge_unique(&[listing(1)]).unwrap();
    assert_eq!(batch.outcomes(), [Outcome::Added { replaced: false }]);
    assert_eq!(writer.searcher().len(), 0, "judging writes nothing");
    writer.add(&[listing(2)]).unwrap();
    let err = writer.commit_unique(batch).unwrap_err();
    assert!(matches!(err, Error::StaleBatch { .. }), "{err}");
    let batch = writer.judge_unique(&[listing(1)]).unwrap();
    writer.commit_unique(batch).unwrap();
    assert_eq!(writer.searcher().len(), 2);
}

#[test]
fn a_writer_with_a_deadline_gives_up_on_a_held_index() {
    let dir = tempfile::tempdir().unwrap();
    let _first = IndexWriter::create(dir.path(), &config()).unwrap();
    let err = IndexWriter::open_within(dir.path(), Some(std::time::Duration::from_millis(100)))
        .unwrap_err();
    assert!(
        matches!(err, Error::Locked { holder: Some(pid), .. } if pid == std::process::id()),
        "{err}"
    );
    assert!(err.to_string().contains("holds the index's lock"), "{err}");
}
