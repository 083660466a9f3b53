//! `neardup index ...` end to end: against `pairs`, across commands, and on bad use.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/pypi-summaries.jsonl")
}

fn run(args: &[&str]) -> Output {
    Command::cargo_bin("neardup")
        .unwrap()
        .args(args)
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A temporary directory and the path of an index in it (not yet built).
fn index_dir() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx").to_str().unwrap().to_string();
    (dir, idx)
}

fn write(dir: &Path, name: &str, lines: &[(&str, &str)]) -> String {
    let text: String = lines
        .iter()
        .map(|(id, t)| format!("{}\n", serde_json::json!({"id": id, "text": t})))
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn index_query_finds_what_pairs_finds_in_its_buckets() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    let (idx, input) = (idx.to_str().unwrap(), corpus());
    let input = input.to_str().unwrap();
    let built = run(&["index", "build", idx, input, "-t", "0.7", "--seed", "5"]);
    assert!(built.status.success());
    let summary = String::from_utf8_lossy(&built.stderr);
    assert!(summary.contains("indexed 5,000 documents"), "{summary}");
    let mut from_index = BTreeSet::new();
    for line in json_lines(&ok(&["index", "query", idx, input, "-q"])) {
        let a = line["id"].as_str().unwrap().to_string();
        for n in line["neighbours"].as_array().unwrap() {
            let b = n["id"].as_str().unwrap().to_string();
            let j = format!("{}", n["jaccard"]);
            if a != b {
                from_index.insert((a.clone().min(b.clone()), a.clone().max(b), j));
            }
        }
    }
    let pairs = ok(&[
        "pairs",
        input,
        "-t",
        "0.7",
        "--seed",
        "5",
        "--no-neighbours",
        "-q",
    ]);
    let from_pairs: BTreeSet<(String, String, String)> = json_lines(&pairs)
        .iter()
        .map(|p| {
            let (a, b) = (p["a"].as_str().unwrap(), p["b"].as_str().unwrap());
            (
                a.min(b).to_string(),
                a.max(b).to_string(),
                format!("{}", p["jaccard"]),
            )
        })
        .collect();
    assert!(from_pairs.len() > 1000);
    assert_eq!(from_index, from_pairs);
}

#[test]
fn add_dedup_remove_stats_compact_and_check_work_together() {
    let (dir, idx) = index_dir();
    let idx = idx.as_str();
    let base = write(
        dir.path(),
        "base.jsonl",
        &[
            (
                "bike",
                "Vintage road bike, 56 cm steel frame, new tyres, collection only",
            ),
            (
                "sofa",
                "Three-seater sofa in grey velvet, barely used, smoke-free home",
            ),
        ],
    );
    ok(&["index", "build", idx, &base, "-q"]);
    let today = write(
        dir.path(),
        "today.jsonl",
        &[
            (
                "bike-2",
                "Vintage road bike, 56 cm steel frame, new tyres, collection only!",
            ),
            (
                "lamp",
                "Brass desk lamp with a green glass shade, working order",
            ),
            (
                "lamp-2",
                "Brass desk lamp with a green glass shade, working order.",
            ),
            ("empty", ""),
        ],
    );
    let lines = json_lines(&ok(&["index", "add", idx, &today, "--dedup", "-q"]));
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["duplicate_of"], "bike");
    assert_eq!(lines[0]["of_indexed"], true);
    assert!(lines[0]["jaccard"].as_f64().unwrap() >= 0.8);
    assert_eq!(lines[1], serde_json::json!({"id": "lamp", "added": true}));
    assert_eq!(lines[2]["duplicate_of"], "lamp");
    assert_eq!(lines[2]["of_indexed"], false);
    assert_eq!(
        lines[3],
        serde_json::json!({"id": "empty", "added": false, "skipped": "empty"})
    );
    let stats: Value = serde_json::from_str(&ok(&["index", "stats", idx, "--json"])).unwrap();
    assert_eq!(
        (stats["documents"].as_u64(), stats["segments"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(stats["parameters"]["threshold"], 0.8);
    let removed = run(&["index", "remove", idx, "sofa", "nobody"]);
    assert!(removed.status.success());
    let said = String::from_utf8_lossy(&removed.stderr);
    assert!(
        said.contains("removed 1 document; 1 not in the index (the first: \"nobody\")"),
        "{said}"
    );
    ok(&["index", "compact", idx]);
    let stats: Value = serde_json::from_str(&ok(&["index", "stats", idx, "--json"])).unwrap();
    assert_eq!(
        (stats["documents"].as_u64(), stats["deleted"].as_u64()),
        (Some(2), Some(0))
    );
    assert!(ok(&["index", "check", idx]).starts_with("ok: 2 documents in 1 segment\n"));
    // --top and a stricter threshold.
    let q = write(
        dir.path(),
        "q.jsonl",
        &[(
            "q",
            "Vintage road bike, 56 cm steel frame, new tyres, collection only",
        )],
    );
    let found = json_lines(&ok(&[
        "index", "query", idx, &q, "--top", "1", "-t", "0.99", "-q",
    ]));
    assert_eq!(
        found[0]["neighbours"][0],
        serde_json::json!({"id": "bike", "jaccard": 1.0})
    );
}

#[test]
fn bad_use_is_refused_with_the_reason() {
    let (dir, idx) = index_dir();
    let idx = idx.as_str();
    let base = write(
        dir.path(),
        "base.jsonl",
        &[("a", "some text to index here")],
    );
    ok(&["index", "build", idx, &base, "-q", "--seed", "3"]);
    let cases: [(&[&str], i32, &str); 6] = [
        (
            &["index", "build", idx, &base],
            2,
            "an index already exists here",
        ),
        (
            &["index", "query", idx, &base, "--kind", "neighbors"],
            2,
            "[possible values: neighbours]",
        ),
        (
            &["index", "add", idx, &base, "--seed", "4"],
            2,
            "seed: the index has 3, asked for 4",
        ),
        (
            &["index", "query", idx, &base, "-t", "0.5"],
            2,
            "the index's or more",
        ),
        (&["index", "stats", "/nonexistent/idx"], 2, "no index here"),
        (
            &["index", "remove", idx],
            2,
            "required arguments were not provided",
        ),
    ];
    for (args, code, says) in cases {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // A damaged segment: check says so and exits with 3.
    let seg = std::fs::read_dir(idx)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "seg"))
        .unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    // Inside the last section (the footer is the last 8 bytes): the layout still adds up,
    // only the checksum can tell.
    let at = bytes.len() - 12;
    bytes[at] ^= 1;
    std::fs::write(&seg, bytes).unwrap();
    let out = run(&["index", "check", idx]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stdout).contains("checksum does not match"));
}

#[test]
fn documents_without_ids_are_indexed_under_their_line_numbers_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    let lines = dir.path().join("lines.txt");
    std::fs::write(&lines, "first line of text\nsecond line of text\n").unwrap();
    let out = run(&[
        "index",
        "build",
        idx.to_str().unwrap(),
        lines.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("without ids"), "{err}");
    let q = ok(&[
        "index",
        "query",
        idx.to_str().unwrap(),
        lines.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(json_lines(&q)[1]["neighbours"][0]["id"], "2");
}

/// `index build` and `index add` count one skipped record in the singular.
#[test]
fn index_commands_count_one_skipped_record_in_the_singular() {
    let (dir, idx) = index_dir();
    let one_bad = |name: &str, id: &str| {
        let path = dir.path().join(name);
        let line = serde_json::json!({"id": id, "text": "the quick brown fox jumps"});
        std::fs::write(&path, format!("{line}\nnot json at all\n")).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (first, second) = (one_bad("a.jsonl", "a"), one_bad("b.jsonl", "b"));
    for args in [
        vec!["index", "build", idx.as_str(), first.as_str()],
        vec!["index", "add", idx.as_str(), second.as_str()],
    ] {
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{args:?}: {err}");
        assert!(err.contains("; 1 record skipped ("), "{args:?}: {err}");
        assert!(!err.contains("1 records"), "{args:?}: {err}");
    }
}
