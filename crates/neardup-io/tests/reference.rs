//! A reference read before the inputs (`InputOptions::reference`): its documents come
//! first, its inputs first, and its records are counted apart from the inputs' accounts.

use std::io::Write;
use std::path::PathBuf;

use neardup_io::documents::{DocId, Documents, InputOptions};

fn file(dir: &tempfile::TempDir, name: &str, body: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    path
}

#[test]
fn the_reference_is_read_first_and_counted_apart() {
    let dir = tempfile::tempdir().unwrap();
    let old = file(
        &dir,
        "old.jsonl",
        "{\"id\": \"o1\", \"text\": \"red bike\"}\n\n{\"text\": \"blue car\"}\n",
    );
    let new = file(&dir, "new.csv", "id,text\nn1,green boat\nn2,\n");
    let options = InputOptions::new(vec![new.clone()])
        .with_reference(vec![old.clone()])
        .with_empty_text(|t| t.trim().is_empty());
    let docs = Documents::read(&options).unwrap();
    assert_eq!(docs.texts, ["red bike", "blue car", "green boat"]);
    assert_eq!(docs.reference_docs(), 2);
    assert_eq!(docs.reference_inputs(), 1);
    assert!(docs.is_reference(1) && !docs.is_reference(2));
    assert_eq!(docs.inputs[0].path, old);
    assert_eq!(docs.inputs[1].path, new);
    // The reference's records: two documents and a blank line.
    assert_eq!(docs.reference_read(), 3);
    // The inputs': one document and an empty record; one document removed.
    let accounts = docs.accounts(1, 0);
    assert_eq!(
        (
            accounts.read,
            accounts.kept,
            accounts.removed,
            accounts.skipped
        ),
        (2, 0, 1, 1)
    );
    // Two files read: numbered ids name their file, the reference's too.
    assert_eq!(docs.id(0), DocId::Text("o1".into()));
    assert_eq!(docs.id(1), DocId::Text(format!("{}:3", old.display())));
    assert_eq!(docs.source_of(1), old.display().to_string());
}

#[test]
fn without_a_reference_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let new = file(&dir, "new.txt", "one line\nanother line\n");
    let docs = Documents::read(&InputOptions::new(vec![new])).unwrap();
    assert_eq!(docs.reference_docs(), 0);
    assert_eq!(docs.reference_read(), 0);
    assert_eq!(docs.id(1), DocId::Number(2));
    assert_eq!(docs.accounts(0, 0).read, 2);
}
