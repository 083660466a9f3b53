//! `neardup decontaminate`: test items found inside corpus documents, the reports, -o
//! and --annotate, bad test files.

use crate::common::*;

/// 20 words: eight 13-grams.
const LONG: &str = "The committee met on a cold Tuesday morning to decide whether the old bridge over the river should close today";
/// 9 words: shorter than 13, checked whole.
const SHORT: &str = "Which planet in our solar system has the most moons?";
/// 3 words: not checked.
const TINY: &str = "Name three colours.";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn jsonl(records: &[(&str, &str)]) -> String {
    records
        .iter()
        .map(|(id, text)| format!("{}\n", serde_json::json!({"id": id, "text": text})))
        .collect()
}

fn words(text: &str, from: usize, to: usize) -> String {
    text.split(' ').collect::<Vec<_>>()[from..to].join(" ")
}

struct Case {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    tests: String,
    corpus: String,
}

fn case() -> Case {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let tests = write(
        &path,
        "quiz.jsonl",
        &jsonl(&[("long", LONG), ("short", SHORT), ("tiny", TINY)]),
    );
    let corpus = write(
        &path,
        "corpus.jsonl",
        &jsonl(&[
            ("whole", &format!("Minutes. {LONG}. End.")),
            ("moons", &format!("Quiz: {SHORT} Answer: Saturn. {TINY}")),
            (
                "clean",
                "Nothing to see here at all, just an ordinary page of text.",
            ),
            ("first", &format!("{} and then", words(LONG, 0, 15))),
            ("last", &format!("so {}", words(LONG, 2, 20))),
        ]),
    );
    Case {
        _dir: dir,
        dir: path,
        tests,
        corpus,
    }
}

fn lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn reports_each_contaminated_document_with_items_spans_and_counts() {
    let c = case();
    let o = neardup(&["decontaminate", "--tests", &c.tests, &c.corpus]);
    assert!(o.status.success(), "{}", stderr(&o));
    let docs = lines(&stdout(&o));
    let ids: Vec<&str> = docs.iter().map(|d| d["id"].as_str().unwrap()).collect();
    // "first" holds 3 of the 8 13-grams (0.375 < 0.5), "last" 6 of 8.
    assert_eq!(ids, ["whole", "moons", "last"]);
    let whole = &docs[0]["items"][0];
    assert_eq!(whole["item"], "long");
    assert_eq!(whole["containment"], 1.0);
    assert_eq!(
        (whole["matched"].as_u64(), whole["ngrams"].as_u64()),
        (Some(8), Some(8))
    );
    let text = format!("Minutes. {LONG}. End.");
    let span = &whole["spans"][0];
    let (s, e) = (
        span[0].as_u64().unwrap() as usize,
        span[1].as_u64().unwrap() as usize,
    );
    assert_eq!(&text[s..e], LONG);
    assert_eq!(docs[1]["items"][0]["item"], "short");
    assert_eq!(
        docs[1]["items"].as_array().unwrap().len(),
        1,
        "the tiny item is not checked"
    );
    assert_eq!(docs[2]["items"][0]["containment"], 0.75);
    let err = stderr(&o);
    assert!(
        err.contains("read 5 = kept 2 + contaminated 3 + skipped 0"),
        "{err}"
    );
    assert!(
        err.contains("quiz.jsonl: 2 of 3 items contaminated; 1 shorter than 13 words checked whole, 1 under 8 words not checked"),
        "{err}"
    );
}

#[test]
fn an_item_across_two_documents_is_reported_in_each_at_a_lower_overlap() {
    let c = case();
    let out = ok(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "--min-overlap",
        "0.3",
        &c.corpus,
    ]);
    let docs = lines(&out);
    let first = docs.iter().find(|d| d["id"] == "first").unwrap();
    assert_eq!(first["items"][0]["containment"], 0.375);
    assert!(docs.iter().any(|d| d["id"] == "last"));
}

#[test]
fn items_json_lists_the_documents_per_item_and_what_was_not_checked() {
    let c = case();
    let items = c.dir.join("items.jsonl");
    ok(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "--items-json",
        items.to_str().unwrap(),
        "-q",
        &c.corpus,
    ]);
    let items = lines(&std::fs::read_to_string(items).unwrap());
    assert_eq!(items.len(), 3);
    assert_eq!(items[0]["documents"], serde_json::json!(["whole", "last"]));
    assert_eq!(items[1]["documents"], serde_json::json!(["moons"]));
    assert_eq!(
        (items[2]["checked"].as_bool(), items[2]["words"].as_u64()),
        (Some(false), Some(3))
    );
}

#[test]
fn an_item_inside_another_item_is_found_with_it() {
    let c = case();
    let inner = words(LONG, 3, 17);
    let tests = write(
        &c.dir,
        "nested.jsonl",
        &jsonl(&[("outer", LONG), ("inner", &inner)]),
    );
    let docs = lines(&ok(&["decontaminate", "--tests", &tests, &c.corpus]));
    let found: Vec<&str> = docs[0]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["item"].as_str().unwrap())
        .collect();
    assert_eq!(found, ["outer", "inner"]);
}

#[test]
fn spans_are_byte_offsets_of_multi_byte_text() {
    let dir = tempfile::tempdir().unwrap();
    let item = "Sœur Thérèse écrivit à Zürich une lettre très longue sur l'été, dit-on, à Noël";
    let doc = format!("日本語 — «{}» ✓", item.to_uppercase());
    let tests = write(dir.path(), "t.jsonl", &jsonl(&[("1", item)]));
    let corpus = write(dir.path(), "c.jsonl", &jsonl(&[("d", &doc)]));
    let docs = lines(&ok(&["decontaminate", "--tests", &tests, &corpus]));
    let span = &docs[0]["items"][0]["spans"][0];
    let (s, e) = (
        span[0].as_u64().unwrap() as usize,
        span[1].as_u64().unwrap() as usize,
    );
    assert_eq!(doc[s..e], item.to_uppercase());
}

#[test]
fn output_is_the_corpus_without_contaminated_documents_byte_for_byte() {
    let c = case();
    let out = c.dir.join("clean.jsonl");
    let report = c.dir.join("report.jsonl");
    let o = neardup(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "-o",
        out.to_str().unwrap(),
        "--report-json",
        report.to_str().unwrap(),
        &c.corpus,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let input = std::fs::read_to_string(&c.corpus).unwrap();
    let kept: String = input
        .lines()
        .filter(|l| l.contains("\"clean\"") || l.contains("\"first\""))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(std::fs::read_to_string(out).unwrap(), kept);
    assert_eq!(lines(&std::fs::read_to_string(report).unwrap()).len(), 3);
}

#[test]
fn annotate_adds_the_items_to_every_document() {
    let c = case();
    let out = c.dir.join("annotated.jsonl");
    ok(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "-o",
        out.to_str().unwrap(),
        "--annotate",
        &c.corpus,
    ]);
    let docs = lines(&std::fs::read_to_string(out).unwrap());
    assert_eq!(docs.len(), 5);
    assert_eq!(docs[0]["contamination"][0]["item"], "long");
    assert_eq!(docs[0]["contamination"][0]["test"], c.tests.as_str());
    assert_eq!(docs[2]["contamination"], serde_json::json!([]));
    assert_eq!(
        docs[2]["text"],
        "Nothing to see here at all, just an ordinary page of text."
    );
}

#[test]
fn annotate_refuses_a_record_that_has_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let tests = write(dir.path(), "t.jsonl", &jsonl(&[("1", LONG)]));
    let corpus = write(
        dir.path(),
        "c.jsonl",
        "{\"text\": \"a\"}\n{\"text\": \"b\", \"contamination\": 1}\n",
    );
    let out = dir.path().join("o.jsonl");
    let o = neardup(&[
        "decontaminate",
        "--tests",
        &tests,
        "-o",
        out.to_str().unwrap(),
        "--annotate",
        &corpus,
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("c.jsonl:2: the record already has a field \"contamination\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn several_test_fields_are_joined_and_csv_tests_read() {
    let dir = tempfile::tempdir().unwrap();
    let tests = write(
        dir.path(),
        "qa.csv",
        &format!(
            "id,question,answer\nq1,\"{}\",\"{}\"\n",
            words(LONG, 0, 10),
            words(LONG, 10, 20)
        ),
    );
    let corpus = write(dir.path(), "c.jsonl", &jsonl(&[("d", LONG)]));
    let docs = lines(&ok(&[
        "decontaminate",
        "--tests",
        &tests,
        "--test-field",
        "question",
        "--test-field",
        "answer",
        &corpus,
    ]));
    assert_eq!(docs[0]["items"][0]["item"], "q1");
    assert_eq!(docs[0]["items"][0]["containment"], 1.0);
    // The question alone has 10 words: one 10-gram, inside the document too.
    let docs = lines(&ok(&[
        "decontaminate",
        "--tests",
        &tests,
        "--test-field",
        "question",
        &corpus,
    ]));
    assert_eq!(docs[0]["items"][0]["ngrams"], 1);
}

#[test]
fn a_bad_test_record_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let tests = write(
        dir.path(),
        "bad.jsonl",
        &format!("{}\n{{not json\n", jsonl(&[("1", LONG)]).trim_end()),
    );
    let corpus = write(dir.path(), "c.jsonl", &jsonl(&[("d", LONG)]));
    let o = neardup(&["decontaminate", "--tests", &tests, &corpus]);
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("bad.jsonl:2"), "{}", stderr(&o));
    let tests = write(
        dir.path(),
        "nofield.jsonl",
        "{\"text\": \"a b c\"}\n{\"question\": \"x\"}\n",
    );
    let o = neardup(&["decontaminate", "--tests", &tests, &corpus]);
    assert_eq!(o.status.code(), Some(3));
    let err = stderr(&o);
    assert!(
        err.contains("nofield.jsonl:2") && err.contains("--test-field text"),
        "{err}"
    );
}

#[test]
fn bad_settings_are_usage_errors() {
    let c = case();
    let o = neardup(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "--ngram",
        "5",
        "--min-ngram",
        "6",
        &c.corpus,
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = neardup(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "--min-overlap",
        "2",
        &c.corpus,
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_html_report_has_the_table_and_the_spans() {
    let c = case();
    let page = c.dir.join("report.html");
    ok(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "--report",
        page.to_str().unwrap(),
        "-q",
        &c.corpus,
    ]);
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains("<td class=\"n\">2 / 3</td><td class=\"n\">3</td><td class=\"n\">1</td><td class=\"n\">1</td>"), "{html}");
    assert!(html.contains(&format!("<mark>{LONG}</mark>")));
}
