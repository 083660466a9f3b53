//! Reading where big corpora live: Parquet files (written by pyarrow, Polars, DuckDB),
//! zstd-compressed JSONL, and folders of shards, each giving the pairs its JSONL gives.

use crate::common::*;

/// Pairs of the fixture rows at a threshold their near-duplicates pass.
fn pairs(input: &str, extra: &[&str]) -> String {
    ok(&[&["pairs", input, "-q", "-t", "0.5"][..], extra].concat())
}

#[test]
fn parquet_from_pyarrow_polars_and_duckdb_gives_the_pairs_of_its_jsonl() {
    let jsonl = pairs("parquet/rows.jsonl", &[]);
    assert!(json_lines(&jsonl).len() >= 3, "{jsonl}");
    for file in [
        "parquet/pyarrow.parquet",
        "parquet/polars.parquet",
        "parquet/duckdb.parquet",
        "parquet/dictionary.parquet",
        "parquet/string_view.parquet",
    ] {
        assert_eq!(pairs(file, &[]), jsonl, "{file}");
    }
    let clusters = |input: &str| ok(&["clusters", input, "-q", "-t", "0.5"]);
    assert_eq!(
        clusters("parquet/polars.parquet"),
        clusters("parquet/rows.jsonl")
    );
}

#[test]
fn a_struct_field_is_named_by_a_dotted_path() {
    let o = neardup(&[
        "pairs",
        "parquet/struct.parquet",
        "-q",
        "-t",
        "0.5",
        "--text-field",
        "meta.body",
        "--id-field",
        "meta.url",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let pairs = json_lines(&stdout(&o));
    assert!(!pairs.is_empty());
    assert!(
        stdout(&o).contains("https://example.org/1"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn parquet_errors_name_the_file_and_what_is_wrong() {
    let o = neardup(&["pairs", "parquet/struct.parquet", "--text-field", "body"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(r#"parquet/struct.parquet: column "body" is not in the Parquet file"#)
            && err.contains(r#"did you mean "meta.body"?"#),
        "{err}"
    );
    let o = neardup(&["pairs", "parquet/int_text.parquet"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(r#"column "text" is int64"#),
        "{}",
        stderr(&o)
    );
    let o = neardup_stdin(&["pairs", "-", "--format", "parquet"], Vec::new());
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("not from standard input"),
        "{}",
        stderr(&o)
    );
    // --text-columns is CSV's.
    let o = neardup(&["pairs", "parquet/pyarrow.parquet", "--text-columns", "text"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("Parquet takes --text-field"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_folder_of_gz_zst_and_parquet_shards_gives_the_pairs_of_the_whole_file() {
    let args = ["--text-field", "body", "--id-field", "review_id", "-q"];
    let whole = ok(&[&["pairs", "cli/reviews.jsonl"][..], &args].concat());
    assert!(!whole.is_empty());
    let shards = ok(&[&["pairs", "shards/reviews"][..], &args].concat());
    assert_eq!(shards, whole);
    // Every record accounted for: 9 read, 2 + 1 + 1 skipped (empty, not JSON, no body).
    let o = neardup(&[&["clusters", "shards/reviews"][..], &args[..4]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("read 9 = "), "{err}");
}

#[test]
fn plan_samples_a_folder_of_shards_as_a_run_reads_it() {
    let plan = |input: &str| {
        let out = ok(&["plan", input, "--text-field", "body"]);
        out.lines()
            .find(|l| l.starts_with("From a uniform sample"))
            .map(str::to_string)
            .unwrap_or(out)
    };
    let whole = plan("cli/reviews.jsonl");
    assert_eq!(whole, "From a uniform sample of 7 of the 7 documents read:");
    assert_eq!(plan("shards/reviews"), whole);
}
