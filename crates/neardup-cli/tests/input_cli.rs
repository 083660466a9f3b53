//! Integration tests of how the `neardup` binary reads its inputs: junk that costs
//! nothing.

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
    let line = summary
        .lines()
        .find(|l| l.starts_with("result"))
        .expect("result line");
    let nums: Vec<u64> = line
        .split_once("read ")
        .unwrap()
        .1
        .split(|c: char| !c.is_ascii_digit() && c != ',')
        .filter(|w| !w.is_empty() && *w != ",")
        .map(|w| w.replace(',', "").parse().unwrap())
        .collect();
    [nums[0], nums[1], nums[2], nums[3]]
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
                err.contains(&format!("empty {}", thousands(want as u64))),
                "{err}"
            );
        }
    }
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

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
