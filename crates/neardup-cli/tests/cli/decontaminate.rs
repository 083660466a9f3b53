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

/// The case's five documents: (id, text).
fn documents() -> Vec<(&'static str, String)> {
    vec![
        ("whole", format!("Minutes. {LONG}. End.")),
        ("moons", format!("Quiz: {SHORT} Answer: Saturn. {TINY}")),
        (
            "clean",
            "Nothing to see here at all, just an ordinary page of text.".to_string(),
        ),
        ("first", format!("{} and then", words(LONG, 0, 15))),
        ("last", format!("so {}", words(LONG, 2, 20))),
    ]
}

/// The case's five documents as CSV (or TSV) rows `id,text,n`, and a sixth row of one
/// column (skipped by the reader).
fn delimited(sep: char) -> String {
    let quote = |t: &str| {
        if sep == ',' {
            format!("\"{t}\"")
        } else {
            t.to_string()
        }
    };
    let mut out = format!("id{sep}text{sep}n\n");
    for (n, (id, text)) in documents().iter().enumerate() {
        out.push_str(&format!("{id}{sep}{}{sep}{n}\n", quote(text)));
    }
    out.push_str("broken\n");
    out
}

#[test]
fn csv_and_tsv_are_written_clean_or_annotated_with_a_json_column() {
    for (sep, ext) in [(',', "csv"), ('\t', "tsv")] {
        let c = case();
        let corpus = write(&c.dir, &format!("corpus.{ext}"), &delimited(sep));
        let clean = c.dir.join(format!("clean.{ext}"));
        let annotated = c.dir.join(format!("annotated.{ext}"));
        let run = |out: &Path, annotate: bool| {
            let mut args = vec!["decontaminate", "--tests", &c.tests, "-o"];
            args.push(out.to_str().unwrap());
            if annotate {
                args.push("--annotate");
            }
            args.push(&corpus);
            let o = neardup(&args);
            assert!(o.status.success(), "{ext}: {}", stderr(&o));
            stderr(&o)
        };
        let err = run(&clean, false);
        assert!(
            err.contains("read 6 = kept 2 + contaminated 3 + skipped 1"),
            "{ext}: {err}"
        );
        // The header and the clean rows, byte for byte.
        let given = delimited(sep);
        let rows: Vec<&str> = given.lines().collect();
        let kept = format!("{}\n{}\n{}\n", rows[0], rows[3], rows[4]);
        assert_eq!(std::fs::read_to_string(&clean).unwrap(), kept, "{ext}");

        run(&annotated, true);
        let text = std::fs::read_to_string(&annotated).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 7, "{ext}: every row, the skipped one too");
        assert_eq!(lines[0], format!("{}{sep}contamination", rows[0]));
        for (line, row) in lines.iter().zip(&rows).skip(1) {
            assert!(line.starts_with(row), "{ext}: {line}");
        }
        // The value is one field: JSON, CSV-quoted where it must be.
        let value = |line: &str| -> Value {
            let field = &line[rows.iter().find(|r| line.starts_with(*r)).unwrap().len() + 1..];
            let json = if sep == ',' {
                field
                    .strip_prefix('"')
                    .and_then(|f| f.strip_suffix('"'))
                    .map_or(field.to_string(), |f| f.replace("\"\"", "\""))
            } else {
                field.to_string()
            };
            serde_json::from_str(&json).unwrap()
        };
        assert_eq!(value(lines[1])[0]["item"], "long", "{ext}");
        assert_eq!(value(lines[1])[0]["containment"], 1.0, "{ext}");
        assert_eq!(value(lines[3]), serde_json::json!([]), "{ext}");
        // The row the reader skipped is copied as it was.
        assert_eq!(lines[6], rows[6], "{ext}");
    }
}

/// A Parquet file of the case's five documents (`id`, `text`, `n`) and a row with a
/// null text (skipped by the reader).
fn corpus_parquet(path: &Path) {
    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    let mut rows = documents();
    rows.push(("empty", String::new()));
    let ids: Vec<&str> = rows.iter().map(|r| r.0).collect();
    let texts: Vec<Option<&str>> = rows
        .iter()
        .map(|r| Some(r.1.as_str()).filter(|t| !t.is_empty()))
        .collect();
    let batch = RecordBatch::try_from_iter([
        (
            "id",
            std::sync::Arc::new(StringArray::from(ids)) as ArrayRef,
        ),
        (
            "text",
            std::sync::Arc::new(StringArray::from(texts)) as ArrayRef,
        ),
        (
            "n",
            std::sync::Arc::new(Int64Array::from_iter_values(0..rows.len() as i64)) as ArrayRef,
        ),
    ])
    .unwrap();
    write_parquet(path, &batch);
}

#[test]
fn parquet_is_written_clean_or_annotated_and_read_back() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_array::Array;
    let c = case();
    let corpus = c.dir.join("corpus.parquet");
    corpus_parquet(&corpus);
    let clean = c.dir.join("clean.parquet");
    let o = neardup(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "-o",
        clean.to_str().unwrap(),
        corpus.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("read 6 = kept 2 + contaminated 3 + skipped 1"),
        "{}",
        stderr(&o)
    );
    let rows = parquet_batch(&clean);
    // The clean rows with every column; the row with no text is no document, not kept.
    assert_eq!(rows.num_columns(), 3);
    let ids: Vec<&str> = rows.column(0).as_string::<i32>().iter().flatten().collect();
    assert_eq!(ids, ["clean", "first"]);
    let n: Vec<i64> = rows.column(2).as_primitive::<Int64Type>().values().to_vec();
    assert_eq!(n, [2, 3]);

    let annotated = c.dir.join("annotated.parquet");
    ok(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "-o",
        annotated.to_str().unwrap(),
        "--annotate",
        corpus.to_str().unwrap(),
    ]);
    let rows = parquet_batch(&annotated);
    let given = parquet_batch(&corpus);
    assert_eq!(rows.num_rows(), 6);
    for i in 0..3 {
        assert_eq!(rows.column(i), given.column(i));
    }
    assert_eq!(rows.schema().field(3).name(), "contamination");
    let values = rows.column(3).as_string::<i32>();
    let items = |row: usize| -> Value { serde_json::from_str(values.value(row)).unwrap() };
    assert_eq!(items(0)[0]["item"], "long");
    assert_eq!(items(1)[0]["item"], "short");
    assert_eq!(items(2), serde_json::json!([]));
    assert_eq!(items(4)[0]["containment"], 0.75);
    assert!(values.is_null(5), "the row with no text was not searched");

    // A column of the name already there is refused, naming the file.
    let again = c.dir.join("again.parquet");
    let o = neardup(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "-o",
        again.to_str().unwrap(),
        "--annotate",
        annotated.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("annotated.parquet: the file already has a column \"contamination\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_gzip_corpus_is_read_and_zstd_and_gzip_outputs_written() {
    let c = case();
    let given = std::fs::read(&c.corpus).unwrap();
    let gz = c.dir.join("corpus.jsonl.gz");
    std::fs::write(&gz, gzip_bytes(&given)).unwrap();
    let clean = c.dir.join("clean.jsonl.zst");
    ok(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "-o",
        clean.to_str().unwrap(),
        "-q",
        gz.to_str().unwrap(),
    ]);
    let text =
        String::from_utf8(zstd::decode_all(std::fs::File::open(&clean).unwrap()).unwrap()).unwrap();
    let kept: String = String::from_utf8(given)
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"clean\"") || l.contains("\"first\""))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(text, kept);

    // A CSV corpus annotated into a gzip file.
    let csv = c.dir.join("corpus.csv.gz");
    std::fs::write(&csv, gzip_bytes(delimited(',').as_bytes())).unwrap();
    let annotated = c.dir.join("annotated.csv.gz");
    ok(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "-o",
        annotated.to_str().unwrap(),
        "--annotate",
        "-q",
        csv.to_str().unwrap(),
    ]);
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&annotated).unwrap()),
        &mut text,
    )
    .unwrap();
    assert_eq!(text.lines().count(), 7);
    assert!(text.starts_with("id,text,n,contamination\n"), "{text}");
    assert!(text.contains("\"[{\"\"test\"\":"), "{text}");
}

#[test]
fn what_annotate_and_one_output_cannot_write_is_refused() {
    let c = case();
    let out = c.dir.join("out");
    let lines_corpus = write(&c.dir, "corpus.txt", &format!("{LONG}\n"));
    let csv = write(&c.dir, "corpus.csv", &delimited(','));
    let cases: [(Vec<&str>, &str); 3] = [
        (
            vec!["--format", "lines", "--annotate", &lines_corpus],
            "--annotate writes JSONL, CSV, TSV and Parquet corpora; not lines",
        ),
        (
            vec!["--format", "csv", "--annotate", "-"],
            "not from standard input",
        ),
        (vec![&c.corpus, &csv], "writes one output in one format"),
    ];
    for (extra, said) in cases {
        let mut args = vec!["decontaminate", "--tests", &c.tests, "-o"];
        args.push(out.to_str().unwrap());
        args.extend(extra);
        let o = neardup(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(said), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn two_benchmarks_are_counted_apart_and_min_ngram_n_checks_no_short_item() {
    let c = case();
    let other = write(
        &c.dir,
        "trivia.jsonl",
        &jsonl(&[
            ("moons-again", SHORT),
            ("unseen", "Which river runs through the old town of Prague?"),
        ]),
    );
    let o = neardup(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "--tests",
        &other,
        &c.corpus,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let docs = lines(&stdout(&o));
    let moons = docs.iter().find(|d| d["id"] == "moons").unwrap();
    let tests: Vec<(&str, &str)> = moons["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["test"].as_str().unwrap(), i["item"].as_str().unwrap()))
        .collect();
    assert_eq!(
        tests,
        [(c.tests.as_str(), "short"), (other.as_str(), "moons-again")]
    );
    let err = stderr(&o);
    assert!(
        err.contains("quiz.jsonl: 2 of 3 items contaminated"),
        "{err}"
    );
    assert!(
        err.contains("trivia.jsonl: 1 of 2 items contaminated; 2 shorter than 13 words checked whole, 0 under 8 words not checked"),
        "{err}"
    );
    // lm-eval-harness's rule: no item shorter than n is checked, and each is counted.
    let o = neardup(&[
        "decontaminate",
        "--tests",
        &c.tests,
        "--tests",
        &other,
        "--min-ngram",
        "13",
        &c.corpus,
    ]);
    let docs = lines(&stdout(&o));
    let ids: Vec<&str> = docs.iter().map(|d| d["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["whole", "last"]);
    let err = stderr(&o);
    assert!(
        err.contains("quiz.jsonl: 1 of 3 items contaminated; 0 shorter than 13 words checked whole, 2 under 13 words not checked"),
        "{err}"
    );
    assert!(err.contains("trivia.jsonl: 0 of 2 items contaminated; 0 shorter than 13 words checked whole, 2 under 13 words not checked"), "{err}");
}
