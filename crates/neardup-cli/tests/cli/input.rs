//! Integration tests of how the `neardup` binary reads its inputs: junk that costs
//! nothing, formats told by content, ids that stay apart, warnings `--quiet` keeps.

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// Runs `neardup ARGS` in `dir`.
fn neardup_in(dir: &Path, args: &[&str]) -> Output {
    Command::cargo_bin("neardup")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Runs and expects success; returns (stdout, stderr).
fn ok(dir: &Path, args: &[&str]) -> (String, String) {
    let o = neardup_in(dir, args);
    assert!(
        o.status.success(),
        "neardup {args:?} failed: {}",
        stderr(&o)
    );
    (stdout(&o), stderr(&o))
}

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The numbers of "read N = kept K + removed R + skipped S" in a summary.
fn accounting(summary: &str) -> [u64; 4] {
    let (read, kept, removed, skipped) = crate::common::accounting(summary);
    [read, kept, removed, skipped]
}

/// Records with nothing to compare (blank lines of text, texts of spaces) are skipped as
/// they are read, like blank JSONL lines; every record is still accounted for, and the
/// skipped list has each of them, in input order, with the readers' own skips.
#[test]
fn records_without_text_are_accounted_for_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000;
    let a = "the quick brown fox jumps over the lazy dog";
    let jsonl = format!(
        "{{\"text\": \"{a}\"}}\n{}not json\n{{\"text\": \"{a}\"}}\n\n{{\"text\": \"other words here entirely\"}}\n",
        "{\"text\": \"  \\t \"}\n".repeat(n)
    );
    let lines = format!(
        "{a}\n{}{a}\n \nother words here entirely\n",
        "   \n".repeat(n)
    );
    std::fs::write(dir.path().join("in.jsonl"), jsonl).unwrap();
    std::fs::write(dir.path().join("in.txt"), lines).unwrap();
    for (input, last) in [("in.jsonl", n + 5), ("in.txt", n + 4)] {
        for mode in ["clusters", "dedup"] {
            let (_, err) = ok(
                dir.path(),
                &[mode, input, "--skipped", "skipped.jsonl", "-o", "out"],
            );
            let [read, kept, removed, skipped] = accounting(&err);
            assert_eq!(read, last as u64, "{input} {mode}: {err}");
            assert_eq!((kept, removed), (2, 1), "{input} {mode}: {err}");
            assert_eq!(read, kept + removed + skipped, "{input} {mode}: {err}");
            let list = std::fs::read_to_string(dir.path().join("skipped.jsonl")).unwrap();
            let list = json_lines(&list);
            assert_eq!(list.len() as u64, skipped, "{input} {mode}");
            let records: Vec<u64> = list.iter().map(|v| v["record"].as_u64().unwrap()).collect();
            let mut sorted = records.clone();
            sorted.sort_unstable();
            assert_eq!(records, sorted, "{input} {mode}: in input order");
            let empty = list.iter().filter(|v| v["code"] == "empty").count();
            let want = if input == "in.jsonl" { n } else { n + 1 };
            assert_eq!(empty, want, "{input} {mode}");
            assert!(
                err.contains(&format!(
                    "empty {}",
                    crate::common::summary_thousands(want as u64)
                )),
                "{err}"
            );
        }
    }
}

/// A JSONL file without an extension (`split -l N new.jsonl batch_` makes `batch_aa`, ...)
/// is read as JSONL, as standard input is, and the summary says how it was read; a text
/// file without an extension is still read as lines.
#[test]
fn a_file_without_a_known_extension_is_read_by_its_content() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = "{\"id\": \"a\", \"text\": \"the quick brown fox jumps over the lazy dog\"}\n\
                 {\"id\": \"b\", \"text\": \"the quick brown fox jumps over the lazy dog!\"}\n";
    std::fs::write(dir.path().join("batch_aa"), jsonl).unwrap();
    std::fs::write(
        dir.path().join("notes"),
        "{\"text\": \"some json\"}\n{not json} but text\nmore text here\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("notes2"), "{not json} but text\n").unwrap();
    std::fs::write(dir.path().join("plain.md"), "some text\nsome text\n").unwrap();
    let (out, err) = ok(dir.path(), &["clusters", "batch_aa"]);
    let ids: Vec<String> = json_lines(&out)
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["a", "b"], "{err}");
    assert!(
        err.contains(
            "format    batch_aa: jsonl (no known extension: its first non-blank byte is '{')"
        ),
        "{err}"
    );
    // Options for JSONL are accepted for it.
    ok(
        dir.path(),
        &["clusters", "batch_aa", "--id-field", "id", "-q"],
    );
    let (out, err) = ok(dir.path(), &["clusters", "plain.md"]);
    assert_eq!(json_lines(&out)[0]["id"], 1, "{err}");
    assert!(
        err.contains("format    plain.md: lines (no known extension: it does not start with '{')"),
        "{err}"
    );
    // Read as JSONL, lines that are not JSON are a warning that --quiet keeps.
    let (_, err) = ok(dir.path(), &["pairs", "notes", "batch_aa", "-q"]);
    assert_eq!(
        err,
        "warning: notes was read as JSONL because its first non-blank byte is '{', but 2 of \
         its lines are not JSON; --format lines reads every line as text\n"
    );
    let o = neardup_in(dir.path(), &["pairs", "notes2"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).ends_with(
            "nothing to compare (it has no known extension and starts with '{', so it was read \
             as JSONL; --format lines reads every line as text)\n"
        ),
        "{}",
        stderr(&o)
    );
    // Options for another format are refused, saying how the format was told.
    let o = neardup_in(dir.path(), &["pairs", "plain.md", "--text-field", "body"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "--text-field does not apply to plain.md, read as lines (by its content: it has \
             no known extension and does not start with '{'): each line is a document"
        ),
        "{}",
        stderr(&o)
    );
    // A known extension still decides, whatever the content.
    std::fs::write(dir.path().join("batch.txt"), jsonl).unwrap();
    let (out, _) = ok(dir.path(), &["pairs", "batch.txt", "-t", "0.5", "-q"]);
    assert_eq!(
        (&json_lines(&out)[0]["a"], &json_lines(&out)[0]["b"]),
        (&1.into(), &2.into())
    );
}

/// `--quiet` hides the summary, never a warning about the data.
#[test]
fn quiet_keeps_warnings_about_the_data() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mixed.jsonl"),
        "{\"id\": \"a\", \"text\": \"hello there world\"}\n{\"text\": \"hello there world\"}\n",
    )
    .unwrap();
    let want = "warning: 1 of 2 records of mixed.jsonl has no id field \"id\"; it is named by \
                line number\n";
    let (_, err) = ok(dir.path(), &["clusters", "mixed.jsonl", "--quiet"]);
    assert_eq!(err, want);
    // Once in the summary.
    let (_, err) = ok(dir.path(), &["clusters", "mixed.jsonl"]);
    assert_eq!(err.matches("has no id field").count(), 1, "{err}");
    let (_, err) = ok(dir.path(), &["eval", "mixed.jsonl", "-q"]);
    assert_eq!(err, want);
}

/// Plain lines where some lines have `ID<TAB>` mix ids of two kinds: warned about, as
/// JSONL records without the id field are (blank lines aside).
#[test]
fn lines_with_and_without_ids_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ids.txt"),
        "x1\tthe quick brown fox\nthe quick brown fox\n\nx3\tanother text here\n",
    )
    .unwrap();
    let (out, err) = ok(dir.path(), &["clusters", "ids.txt", "-q"]);
    assert_eq!(
        err,
        "warning: 1 of 3 lines of ids.txt has no \"ID<TAB>\" before its text; it is named by \
         line number, the others by the id before their tab: ids of two kinds\n"
    );
    let ids: Vec<Value> = json_lines(&out).iter().map(|v| v["id"].clone()).collect();
    assert_eq!(ids, [Value::from("x1"), Value::from(2)]);
    std::fs::write(
        dir.path().join("all.txt"),
        "x1\tthe quick brown fox\n\nx2\tthe quick brown fox\n",
    )
    .unwrap();
    let (_, err) = ok(dir.path(), &["clusters", "all.txt", "-q"]);
    assert_eq!(err, "");
}

/// Ids from several folders are prefixed by the subfolder dedup writes each folder's
/// files to, so two `README.md` stay apart, and name the files of dedup's output.
#[test]
fn ids_from_several_folders_are_prefixed_by_dedups_subfolders() {
    let dir = tempfile::tempdir().unwrap();
    let text = "the same page, word for word, in two years' folders\n";
    for year in ["2024", "2025"] {
        let folder = dir.path().join(year).join("articles");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("README.md"), text).unwrap();
    }
    let (out, err) = ok(dir.path(), &["clusters", "2024/articles", "2025/articles"]);
    let lines = json_lines(&out);
    let ids: Vec<&str> = lines.iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["articles/README.md", "articles-2/README.md"], "{err}");
    assert_eq!(lines[1]["duplicate_of"], "articles/README.md");
    ok(
        dir.path(),
        &[
            "dedup",
            "2024/articles",
            "2025/articles",
            "-o",
            "out",
            "--removed",
            "removed.jsonl",
        ],
    );
    assert!(dir.path().join("out/articles/README.md").is_file());
    let removed = std::fs::read_to_string(dir.path().join("removed.jsonl")).unwrap();
    let removed = json_lines(&removed);
    assert_eq!(removed[0]["id"], "articles-2/README.md");
    assert_eq!(removed[0]["duplicate_of"], "articles/README.md");
    // One folder: ids are the paths in it, as before.
    let (out, _) = ok(dir.path(), &["clusters", "2024/articles", "-q"]);
    assert_eq!(out, "");
}

/// CSV and TSV take their ids from a column named `id` when there is one, as JSONL does
/// from the field `id`; `--id-column` still names another.
#[test]
fn csv_and_tsv_default_to_an_id_column() {
    let dir = tempfile::tempdir().unwrap();
    let text = "a bright flat near the station with two rooms";
    std::fs::write(
        dir.path().join("annunci.csv"),
        format!("id,text,ref\nA17,{text},r1\nB22,{text}!,r2\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("annunci.tsv"),
        format!("text\tid\n{text}\tA17\n{text}!\n"),
    )
    .unwrap();
    let ids = |args: &[&str]| -> Vec<Value> {
        let (out, _) = ok(dir.path(), args);
        json_lines(&out).iter().map(|v| v["id"].clone()).collect()
    };
    assert_eq!(ids(&["clusters", "annunci.csv", "-q"]), ["A17", "B22"]);
    assert_eq!(
        ids(&["clusters", "annunci.csv", "--id-column", "ref", "-q"]),
        ["r1", "r2"]
    );
    // A row too short for the default id column is a record without an id, not skipped.
    assert_eq!(
        ids(&["clusters", "annunci.tsv", "-q"]),
        [Value::from("A17"), Value::from(2)]
    );
}

/// `plan` takes the input options of a dedup command line.
#[test]
fn plan_takes_the_input_options_of_dedup() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("in.csv"),
        "key;body\n1;the quick brown fox jumps\n2;the quick brown fox jumps!\n",
    )
    .unwrap();
    let (out, err) = ok(
        dir.path(),
        &[
            "plan",
            "in.csv",
            "--id-column",
            "key",
            "--text-columns",
            "body",
            "--delimiter",
            ";",
            "--on-error",
            "fail",
            "--max-record-bytes",
            "1000",
        ],
    );
    assert!(
        out.contains("From a uniform sample of 2 of the 2 documents read"),
        "{out}{err}"
    );
    std::fs::write(
        dir.path().join("in.jsonl"),
        "{\"k\": 1, \"text\": \"a b c\"}\n",
    )
    .unwrap();
    ok(dir.path(), &["plan", "in.jsonl", "--id-field", "k"]);
    // Options that do not fit the format are refused as dedup refuses them.
    let o = neardup_in(dir.path(), &["plan", "in.jsonl", "--id-column", "k"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--id-column does not apply to in.jsonl"),
        "{}",
        stderr(&o)
    );
}

/// A CSV/TSV header's `ID` (any case) names the records as `id` does.
#[test]
fn an_id_column_is_found_in_any_case() {
    for (name, sep) in [("a.csv", ","), ("a.tsv", "\t")] {
        for header in ["id", "ID", "Id"] {
            let dir = tempfile::tempdir().unwrap();
            let data = format!(
                "{header}{sep}text\nx1{sep}the very same words here\nx2{sep}the very same words here\n"
            );
            std::fs::write(dir.path().join(name), data).unwrap();
            let (out, _) = ok(dir.path(), &["pairs", name, "-q"]);
            let pairs = json_lines(&out);
            assert_eq!(pairs.len(), 1, "{header}: {out}");
            assert_eq!(
                (pairs[0]["a"].as_str(), pairs[0]["b"].as_str()),
                (Some("x1"), Some("x2")),
                "{header}: {out}"
            );
        }
    }
}
