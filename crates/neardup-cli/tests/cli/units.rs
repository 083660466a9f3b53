//! `dedup --unit` and `annotate --unit`: repeated paragraphs, lines and sentence spans
//! removed from the later documents, or their byte spans annotated.

use crate::common::*;

const PAGES: &str = "cli/shop-pages.jsonl";
const BANNER: &str = "We use cookies to remember your basket and to count visits. By staying on this site you accept them.";

#[test]
fn dedup_unit_paragraph_golden() {
    let o = neardup(&["dedup", "--unit", "paragraph", "--id-field", "url", PAGES]);
    assert!(o.status.success(), "{}", stderr(&o));
    insta::assert_snapshot!("dedup_unit_paragraph", stdout(&o));
    insta::assert_snapshot!(
        "dedup_unit_paragraph_summary",
        summary_without_times(&stderr(&o))
    );
    assert_eq!(accounting(&stderr(&o)), (5, 4, 0, 1));
}

#[test]
fn annotate_unit_spans_are_byte_offsets_into_multibyte_text() {
    let out = ok(&[
        "annotate",
        "--unit",
        "paragraph",
        "--id-field",
        "url",
        PAGES,
        "-q",
    ]);
    insta::assert_snapshot!("annotate_unit_paragraph", out);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 5, "every record is written");
    let ja = &lines[3];
    let text = ja["text"].as_str().unwrap();
    let spans = ja["removed_spans"].as_array().unwrap();
    let (start, end) = (spans[0][0].as_u64().unwrap(), spans[0][1].as_u64().unwrap());
    assert_eq!(&text[start as usize..end as usize], BANNER);
    assert_eq!(spans[0][2], "home");
    assert!(
        start > 40,
        "after the Japanese title: bytes, not characters"
    );
    // The same as dedup --annotate, prefix and all.
    let prefixed = ok(&[
        "dedup",
        "--unit",
        "paragraph",
        "--annotate",
        "--annotate-prefix",
        "nd_",
        "--id-field",
        "url",
        PAGES,
        "-q",
    ]);
    assert_eq!(
        prefixed,
        out.replace("\"removed_spans\"", "\"nd_removed_spans\"")
    );
}

#[test]
fn lines_and_sentence_spans_are_units_too() {
    // Lines: the footer and banner lines go; a short line is left alone with the limit.
    let (_dir, path) = temp_file(
        "lines.jsonl",
        "{\"text\": \"Menu\\nFirst story line.\\nShare this\"}\n\
         {\"text\": \"Menu\\nSecond story line.\\nShare this\"}\n",
    );
    let path = path.to_str().unwrap();
    let out = ok(&["dedup", "--unit", "line", path, "-q"]);
    assert_eq!(json_lines(&out)[1]["text"], "Second story line.");
    let out = ok(&[
        "dedup",
        "--unit",
        "line",
        "--min-unit-chars",
        "5",
        path,
        "-q",
    ]);
    assert_eq!(json_lines(&out)[1]["text"], "Menu\nSecond story line.");
    // Sentences: one at a time, across the paragraph structure.
    let (_dir, path) = temp_file(
        "sentences.jsonl",
        "{\"text\": \"Prices include VAT. Delivery is free. Kettles boil.\"}\n\
         {\"text\": \"Toasters toast. Prices include VAT. Delivery is free.\"}\n",
    );
    let path = path.to_str().unwrap();
    let out = ok(&["dedup", "--unit", "sentences:1", path, "-q"]);
    assert_eq!(json_lines(&out)[1]["text"], "Toasters toast.");
    let o = neardup(&["dedup", "--unit", "sentences:1", path]);
    let summary = stderr(&o);
    assert!(
        summary.contains("units     6 read (sentences:1), 2 removed (36 bytes of text)"),
        "{summary}"
    );
}

#[test]
fn near_mode_removes_edited_units_exact_mode_keeps_them() {
    let (_dir, path) = temp_file(
        "near.jsonl",
        "{\"text\": \"Page one.\\n\\nSign up for our newsletter to receive weekly updates about new products and offers\"}\n\
         {\"text\": \"Page two.\\n\\nSign up for our newsletter to receive weekly updates about new products and deals\"}\n",
    );
    let path = path.to_str().unwrap();
    let exact = ok(&["dedup", "--unit", "paragraph", path, "-q"]);
    assert!(json_lines(&exact)[1]["text"]
        .as_str()
        .unwrap()
        .contains("deals"));
    let near = ok(&[
        "dedup",
        "--unit",
        "paragraph",
        "--unit-threshold",
        "0.7",
        path,
        "-q",
    ]);
    assert_eq!(json_lines(&near)[1]["text"], "Page two.");
}

#[test]
fn max_unit_count_removes_only_frequent_units() {
    let args = |k: &'static str| {
        [
            "dedup",
            "--unit",
            "paragraph",
            "--max-unit-count",
            k,
            "--id-field",
            "url",
            PAGES,
            "-q",
        ]
    };
    // The banner and footer are on all 5 pages: more than 4, removed; not more than 5.
    assert_eq!(json_lines(&ok(&args("4"))).len(), 4);
    assert_eq!(
        ok(&args("5")),
        std::fs::read_to_string(testdata(PAGES)).unwrap()
    );
}

#[test]
fn unit_accounts_count_readers_skips_and_emptied_documents() {
    let (_dir, path) = temp_file(
        "skips.jsonl",
        "{\"text\": \"Same.\"}\n\nnot json\n{\"text\": \"Same.\"}\n{\"text\": \"\"}\n",
    );
    let o = neardup(&["dedup", "--unit", "line", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (read, kept, removed, skipped) = accounting(&stderr(&o));
    // Kept: the first "Same." and the empty text (no units, nothing to remove); skipped:
    // the blank line and the malformed one (the readers), the second "Same." (left empty).
    assert_eq!((read, kept, removed, skipped), (5, 2, 0, 3));
    assert_eq!(read, kept + removed + skipped);
    assert_eq!(json_lines(&stdout(&o)).len(), 2);
}

#[test]
fn an_existing_field_is_an_error_unless_forced() {
    let (_dir, path) = temp_file(
        "taken.jsonl",
        "{\"text\": \"a\", \"removed_spans\": 1}\n{\"text\": \"a\"}\n",
    );
    let path = path.to_str().unwrap();
    let o = neardup(&["annotate", "--unit", "line", path, "-q"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{path}:1: ")),
        "{}",
        stderr(&o)
    );
    let out = ok(&["annotate", "--unit", "line", path, "-q", "--force"]);
    assert_eq!(
        out,
        "{\"text\": \"a\", \"removed_spans\": []}\n{\"text\": \"a\",\"removed_spans\":[[0,1,1]]}\n"
    );
}

#[test]
fn unit_runs_refuse_what_they_do_not_do() {
    refused(
        &["dedup", "--unit", "paragraph", "--drop-all", PAGES],
        &["--drop-all does not apply to --unit"],
    );
    refused(
        &[
            "dedup",
            "--unit",
            "line",
            "cli/listings.tsv",
            "--text-columns",
            "Title,Short Description",
        ],
        &["--unit rewrites one text column", "is 2 columns joined"],
    );
    refused(
        &["dedup", "--unit", "sentences:0", PAGES],
        &["sentences:N must be a whole number from 1"],
    );
    refused(&["dedup", "--unit-threshold", "0.5", PAGES], &["--unit"]);
    // The output is JSONL like the input: a name of another format is refused, as
    // dedup refuses it without --unit.
    refused(
        &["dedup", "--unit", "paragraph", PAGES, "-o", "kept.parquet"],
        &["dedup writes the input's own format", "named as parquet"],
    );
}

/// Three pages sharing a licence line; `ts` and the lengths rank them differently.
const RANKED: &str = "{\"id\": \"a\", \"ts\": 2, \"text\": \"A.\\nShared licence line.\"}\n\
    {\"id\": \"b\", \"ts\": 3, \"text\": \"Shared licence line.\\nThe longest page of the three.\"}\n\
    {\"id\": \"c\", \"ts\": 1, \"text\": \"Shared licence line.\"}\n";

/// The id of the page that keeps the licence line, and the ids written.
fn keeper(extra: &[&str]) -> (String, Vec<String>) {
    let (_dir, path) = temp_file("ranked.jsonl", RANKED);
    let mut args = vec!["dedup", "--unit", "line", path.to_str().unwrap(), "-q"];
    args.extend(extra);
    let lines = json_lines(&ok(&args));
    let ids = lines
        .iter()
        .map(|l| l["id"].as_str().unwrap().to_string())
        .collect();
    let keeper = lines
        .iter()
        .find(|l| l["text"].as_str().unwrap().contains("Shared licence line."))
        .map(|l| l["id"].as_str().unwrap().to_string())
        .unwrap();
    (keeper, ids)
}

#[test]
fn keep_rules_choose_the_document_that_keeps_a_repeated_unit() {
    assert_eq!(keeper(&[]), ("a".into(), vec!["a".into(), "b".into()]));
    assert_eq!(
        keeper(&["--keep", "last"]),
        ("c".into(), vec!["a".into(), "b".into(), "c".into()])
    );
    assert_eq!(keeper(&["--keep", "longest"]).0, "b");
    assert_eq!(keeper(&["--keep", "shortest"]).0, "c");
    assert_eq!(keeper(&["--keep-by", "ts:desc"]).0, "b");
    assert_eq!(keeper(&["--keep-by", "ts"]).0, "c");
    // annotate names the kept page in the others' spans.
    let (_dir, path) = temp_file("ranked.jsonl", RANKED);
    let out = ok(&[
        "annotate",
        "--unit",
        "line",
        "--keep-by",
        "ts:desc",
        "--id-field",
        "id",
        path.to_str().unwrap(),
        "-q",
    ]);
    let spans: Vec<String> = json_lines(&out)
        .iter()
        .map(|l| l["removed_spans"].to_string())
        .collect();
    assert_eq!(spans, ["[[3,23,\"b\"]]", "[]", "[[0,20,\"b\"]]"]);
    // No value anywhere: the data's error, as dedup gives it.
    let o = neardup(&[
        "dedup",
        "--unit",
        "line",
        "--keep-by",
        "none",
        path.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(stderr(&o).contains("no record has a value for --keep-by \"none\""));
}

#[test]
fn units_of_a_reference_are_removed_from_the_inputs_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.jsonl");
    let new = dir.path().join("new.jsonl");
    std::fs::write(
        &old,
        "{\"id\": \"old-1\", \"text\": \"Licence paragraph from last year.\\n\\nOld news.\"}\n",
    )
    .unwrap();
    std::fs::write(
        &new,
        "{\"id\": \"new-1\", \"text\": \"Fresh news.\\n\\nLicence paragraph from last year.\"}\n\
         {\"id\": \"new-2\", \"text\": \"Old news.\"}\n",
    )
    .unwrap();
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let o = neardup(&[
        "dedup",
        "--unit",
        "paragraph",
        "--reference",
        old,
        "--id-field",
        "id",
        new,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    assert_eq!(
        lines.len(),
        1,
        "the reference is not written, new-2 is left empty"
    );
    assert_eq!(
        (lines[0]["id"].as_str(), lines[0]["text"].as_str()),
        (Some("new-1"), Some("Fresh news."))
    );
    let summary = stderr(&o);
    assert_eq!(accounting(&summary), (2, 1, 0, 1));
    assert!(
        summary.contains("reference: 1 record, never written"),
        "{summary}"
    );
    assert!(
        summary.contains("units     3 read (paragraph), 2 removed"),
        "{summary}"
    );
    // annotate names the reference record; --keep last does not reach into the reference.
    let out = ok(&[
        "annotate",
        "--unit",
        "paragraph",
        "--reference",
        old,
        "--keep",
        "last",
        "--id-field",
        "id",
        new,
        "-q",
    ]);
    let spans: Vec<String> = json_lines(&out)
        .iter()
        .map(|l| l["removed_spans"].to_string())
        .collect();
    assert_eq!(spans, ["[[13,46,\"old-1\"]]", "[[0,9,\"old-1\"]]"]);
}

/// Two shop pages sharing the banner paragraph, as CSV: the text quoted over lines, a
/// comma and a quote in the other values.
const CSV: &str = "id,text,note\r\n\
    p1,\"Kettles.\n\nWe use cookies here.\",\"plain\"\r\n\
    p2,\"Toasters, cheap.\n\nWe use cookies here.\",\"say \"\"hi\"\"\"\r\n";

#[test]
fn csv_and_tsv_get_their_text_column_rewritten_and_every_other_value_kept() {
    let (_dir, path) = temp_file("pages.csv", CSV);
    let path = path.to_str().unwrap();
    let out = ok(&["dedup", "--unit", "paragraph", path, "-q"]);
    assert_eq!(
        out,
        "id,text,note\r\np1,\"Kettles.\n\nWe use cookies here.\",\"plain\"\r\n\
         p2,\"Toasters, cheap.\",\"say \"\"hi\"\"\"\r\n"
    );
    // annotate: a column of the spans as JSON, every row written.
    let out = ok(&["annotate", "--unit", "paragraph", path, "-q"]);
    let mut reader = csv::Reader::from_reader(out.as_bytes());
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        ["id", "text", "note", "removed_spans"]
    );
    let spans: Vec<String> = reader
        .records()
        .map(|r| r.unwrap()[3].to_string())
        .collect();
    assert_eq!(spans, ["[]", "[[18,38,\"p1\"]]"]);
    // TSV, unquoted: a sentence at a time.
    let (_dir, tsv) = temp_file(
        "pages.tsv",
        "text\tid\nFree delivery. Kettles boil.\t1\nToasters toast. Free delivery.\t2\n",
    );
    let out = ok(&[
        "dedup",
        "--unit",
        "sentences:1",
        tsv.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(
        out,
        "text\tid\nFree delivery. Kettles boil.\t1\nToasters toast.\t2\n"
    );
}

#[test]
fn lines_take_sentence_spans_and_refuse_lines_and_paragraphs() {
    let (_dir, path) = temp_file(
        "pages.txt",
        "a\tFree delivery. Kettles boil.\nb\tToasters toast. Free delivery.\r\nFree delivery.\n",
    );
    let path = path.to_str().unwrap();
    let o = neardup(&["dedup", "--unit", "sentences:1", path]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "a\tFree delivery. Kettles boil.\nb\tToasters toast.\r\n"
    );
    assert_eq!(accounting(&stderr(&o)), (3, 2, 0, 1));
    refused(
        &["dedup", "--unit", "line", path],
        &["is one document, so its only line is the whole line"],
    );
    refused(
        &["annotate", "--unit", "sentences:1", path],
        &["annotate --unit adds a field or column", "is lines"],
    );
}

#[test]
fn compressed_inputs_are_read_and_outputs_compressed_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(testdata(PAGES)).unwrap();
    let gz = dir.path().join("pages.jsonl.gz");
    std::fs::write(&gz, gzip_bytes(&plain)).unwrap();
    let zst = dir.path().join("pages.csv.zst");
    std::fs::write(&zst, zstd::encode_all(CSV.as_bytes(), 3).unwrap()).unwrap();
    let expected = ok(&[
        "dedup",
        "--unit",
        "paragraph",
        "--id-field",
        "url",
        PAGES,
        "-q",
    ]);
    let from_gz = ok(&[
        "dedup",
        "--unit",
        "paragraph",
        "--id-field",
        "url",
        gz.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(from_gz, expected);
    let out = dir.path().join("kept.csv.zst");
    ok(&[
        "dedup",
        "--unit",
        "paragraph",
        zst.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "-q",
    ]);
    let back =
        String::from_utf8(zstd::decode_all(std::fs::File::open(&out).unwrap()).unwrap()).unwrap();
    assert!(
        back.ends_with("p2,\"Toasters, cheap.\",\"say \"\"hi\"\"\"\r\n"),
        "{back}"
    );
    // annotate reads the compressed CSV a second time.
    let out = ok(&[
        "annotate",
        "--unit",
        "paragraph",
        zst.to_str().unwrap(),
        "-q",
    ]);
    assert!(out.contains("[[18,38,\"\"p1\"\"]]"), "{out}");
}

/// A Parquet file of pages: `id`, a `large_string` text and a number.
fn pages_parquet(path: &Path, texts: &[Option<&str>]) {
    use arrow_array::{ArrayRef, Int64Array, LargeStringArray, RecordBatch, StringArray};
    let ids: Vec<String> = (1..=texts.len()).map(|i| format!("p{i}")).collect();
    let batch = RecordBatch::try_from_iter([
        (
            "id",
            std::sync::Arc::new(StringArray::from(ids)) as ArrayRef,
        ),
        (
            "text",
            std::sync::Arc::new(LargeStringArray::from(texts.to_vec())) as ArrayRef,
        ),
        (
            "n",
            std::sync::Arc::new(Int64Array::from_iter_values(0..texts.len() as i64)) as ArrayRef,
        ),
    ])
    .unwrap();
    write_parquet(path, &batch);
}

#[test]
fn parquet_rows_keep_the_schema_with_the_text_rewritten_or_spans_added() {
    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("pages.parquet");
    pages_parquet(
        &input,
        &[
            Some("Kettles.\n\nWe use cookies here."),
            None,
            Some("Toasters.\n\nWe use cookies here."),
            Some("We use cookies here."),
        ],
    );
    let out = dir.path().join("kept.parquet");
    let o = neardup(&[
        "dedup",
        "--unit",
        "paragraph",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Read 4 rows: the null text skipped by the reader, p4 left empty.
    assert_eq!(accounting(&stderr(&o)), (4, 2, 0, 2));
    let back = parquet_batch(&out);
    assert_eq!(
        back.schema(),
        parquet_batch(&input).schema(),
        "the input's schema"
    );
    let texts = back.column_by_name("text").unwrap().as_string::<i64>();
    assert_eq!(
        (0..texts.len()).map(|i| texts.value(i)).collect::<Vec<_>>(),
        ["Kettles.\n\nWe use cookies here.", "Toasters."]
    );
    let n = back
        .column_by_name("n")
        .unwrap()
        .as_primitive::<arrow_array::types::Int64Type>();
    assert_eq!(n.values().to_vec(), [0, 2]);
    // annotate: every row, a string column of the spans as JSON, null where no document.
    let annotated = dir.path().join("annotated.parquet");
    ok(&[
        "annotate",
        "--unit",
        "paragraph",
        input.to_str().unwrap(),
        "-o",
        annotated.to_str().unwrap(),
        "-q",
    ]);
    let back = parquet_batch(&annotated);
    let spans = back
        .column_by_name("removed_spans")
        .unwrap()
        .as_string::<i32>();
    let spans: Vec<Option<&str>> = (0..spans.len())
        .map(|i| spans.is_valid(i).then(|| spans.value(i)))
        .collect();
    assert_eq!(
        spans,
        [
            Some("[]"),
            None,
            Some("[[11,31,\"p1\"]]"),
            Some("[[0,20,\"p1\"]]")
        ]
    );
    // The column is there now: refused unless --force.
    let o = neardup(&[
        "annotate",
        "--unit",
        "paragraph",
        annotated.to_str().unwrap(),
        "-o",
        dir.path().join("again.parquet").to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("already has a column \"removed_spans\""),
        "{}",
        stderr(&o)
    );
}

/// The texts of the PyPI package summaries of testdata.
fn pypi_summaries() -> Vec<String> {
    let summaries = std::fs::read_to_string(testdata("pypi-summaries.jsonl")).unwrap();
    json_lines(&summaries)
        .iter()
        .map(|v| v["text"].as_str().unwrap().to_string())
        .collect()
}

/// The summary's line of unit counts, without its time.
fn units_line(summary: &str) -> String {
    summary
        .lines()
        .find(|l| l.starts_with("units"))
        .unwrap()
        .split(", in")
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn a_unit_run_over_the_memory_limit_spills_with_the_same_output() {
    // 20,000 pages of PyPI summaries (each summary on four pages), a licence line of four
    // kinds and a shared footer: 80,000 units, several sorted runs of the 1 MiB a run
    // sorts at the least.
    let texts = pypi_summaries();
    let mut corpus = String::new();
    for i in 0..20_000 {
        let page = format!(
            "Page {i}.\n{}\n\nLicence kind {}.\nHosted on the index.",
            texts[i % texts.len()],
            i % 4
        );
        corpus += &serde_json::json!({"id": i, "text": page, "ts": i % 7}).to_string();
        corpus.push('\n');
    }
    let (dir, path) = temp_file("pages.jsonl", &corpus);
    let (p, tmp) = (path.to_str().unwrap(), dir.path().to_str().unwrap());
    for extra in [
        &["--unit", "line"][..],
        &["--unit", "paragraph", "--keep-by", "ts:desc"],
        &[
            "--unit",
            "sentences:1",
            "--max-unit-count",
            "3",
            "--min-unit-chars",
            "10",
        ],
    ] {
        for command in ["dedup", "annotate"] {
            let args = [&[command, p, "-q"][..], extra].concat();
            let in_memory = ok(&args);
            let spilled = neardup(&[&args[..], &["--memory", "1K", "--tmp", tmp]].concat());
            assert!(spilled.status.success(), "{}", stderr(&spilled));
            assert_eq!(stdout(&spilled), in_memory, "{command} {extra:?}");
        }
    }
    // The summary says it spilled, and counts as in memory.
    let o = neardup(&["dedup", "--unit", "line", p, "--memory", "1K", "--tmp", tmp]);
    let summary = stderr(&o);
    assert!(summary.contains("memory    spills to"), "{summary}");
    let in_memory = stderr(&neardup(&["dedup", "--unit", "line", p]));
    assert_eq!(units_line(&summary), units_line(&in_memory));
    assert!(units_line(&summary).contains("removed"), "{summary}");
    assert!(litter(dir.path()).is_empty());
}

#[test]
fn a_near_unit_run_over_the_memory_limit_spills_with_the_same_output() {
    // 6,000 pages of PyPI summaries (each summary on three pages, in another part: near,
    // not equal, paragraphs), a licence paragraph of four kinds that differ
    // in one character, a shared footer.
    let texts = pypi_summaries();
    let mut corpus = String::new();
    for i in 0..6_000 {
        let page = format!(
            "Part {} of the index: {}\n\nLicence kind {}, hosted on the index.\n\nFooter.",
            i / 2_000,
            texts[i % 2_000],
            i % 4
        );
        corpus += &serde_json::json!({"id": i, "text": page, "ts": i % 7}).to_string();
        corpus.push('\n');
    }
    let (dir, path) = temp_file("pages.jsonl", &corpus);
    let (p, tmp) = (path.to_str().unwrap(), dir.path().to_str().unwrap());
    let near = ["--unit-threshold", "0.8"];
    for extra in [
        &["--unit", "paragraph"][..],
        &[
            "--unit",
            "paragraph",
            "--keep-by",
            "ts:desc",
            "--min-unit-chars",
            "10",
        ],
        &["--unit", "line", "--max-unit-count", "3"],
    ] {
        for command in ["dedup", "annotate"] {
            let args = [&[command, p, "-q"][..], &near, extra].concat();
            let in_memory = ok(&args);
            let spilled = neardup(&[&args[..], &["--memory", "1K", "--tmp", tmp]].concat());
            assert!(spilled.status.success(), "{}", stderr(&spilled));
            assert_eq!(stdout(&spilled), in_memory, "{command} {extra:?}");
        }
    }
    // The summary says it spilled, and counts as in memory: more than exact mode removes.
    let args = [&["dedup", p, "--unit", "paragraph"][..], &near].concat();
    let summary = stderr(&neardup(
        &[&args[..], &["--memory", "1K", "--tmp", tmp]].concat(),
    ));
    assert!(summary.contains("memory    spills to"), "{summary}");
    let removed = |s: &str| -> u64 {
        let line = units_line(s);
        let n = line.split(" read (paragraph), ").nth(1).unwrap();
        n.split(' ')
            .next()
            .unwrap()
            .replace(',', "")
            .parse()
            .unwrap()
    };
    let in_memory = stderr(&neardup(&args));
    assert_eq!(units_line(&summary), units_line(&in_memory));
    let exact = stderr(&neardup(&["dedup", p, "--unit", "paragraph"]));
    assert!(removed(&summary) > removed(&exact), "{summary}\n{exact}");
    // What the pipeline does not spill is refused before reading, as dedup refuses it.
    refused(
        &[
            &args[..],
            &["--verify", "estimate", "--memory", "1K", "--tmp", tmp],
        ]
        .concat(),
        &["verifies exactly: drop --verify estimate"],
    );
    assert!(litter(dir.path()).is_empty());
}

#[test]
fn spilled_runs_write_csv_and_parquet_as_in_memory_runs_do() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().to_str().unwrap();
    let parquet = dir.path().join("pages.parquet");
    pages_parquet(
        &parquet,
        &[
            Some("Kettles.\n\nWe use cookies here."),
            None,
            Some("Toasters.\n\nWe use cookies here."),
            Some("We use cookies here."),
        ],
    );
    let csv = dir.path().join("pages.csv");
    std::fs::write(&csv, CSV).unwrap();
    for (input, ext) in [(&parquet, "parquet"), (&csv, "csv")] {
        let o = neardup(&[
            "dedup",
            "--unit",
            "line",
            input.to_str().unwrap(),
            "--memory",
            "100",
        ]);
        assert!(stderr(&o).contains("memory    spills to"), "{}", stderr(&o));
        for command in ["dedup", "annotate"] {
            let run = |name: &str, extra: &[&str]| {
                let out = dir.path().join(format!("{name}.{ext}"));
                let args = [
                    command,
                    "--unit",
                    "paragraph",
                    input.to_str().unwrap(),
                    "-q",
                ];
                let o = neardup(&[&args[..], &["-o", out.to_str().unwrap()], extra].concat());
                assert!(o.status.success(), "{}", stderr(&o));
                std::fs::read(out).unwrap()
            };
            let in_memory = run("memory", &[]);
            // 100 bytes: under either input's predicted need.
            let spilled = run("spilled", &["--memory", "100", "--tmp", tmp]);
            assert_eq!(spilled, in_memory, "{command} {ext}");
        }
    }
}
