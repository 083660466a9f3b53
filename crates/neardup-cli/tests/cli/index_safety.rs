//! `neardup index ...` never loses a user's data: not the files beside an index, not the
//! index itself under a careless `-o`, not a committed add whose merge failed; writers
//! say what they wait for; counts and ids mean what they say.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/pypi-summaries.jsonl")
}

fn neardup() -> PathBuf {
    assert_cmd::cargo::cargo_bin("neardup")
}

fn run(args: &[&str]) -> Output {
    Command::new(neardup()).args(args).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ok(args: &[&str]) -> Output {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    out
}

/// `index stats --json` of an index.
fn stats(idx: &Path) -> Value {
    serde_json::from_slice(&ok(&["index", "stats", s(idx), "--json"]).stdout).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The first `n` lines of the shipped corpus from line `from` (0-based), as a file.
fn slice(dir: &Path, name: &str, from: usize, n: usize) -> PathBuf {
    let text = std::fs::read_to_string(corpus()).unwrap();
    let lines: String = text
        .lines()
        .skip(from)
        .take(n)
        .map(|l| format!("{l}\n"))
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, lines).unwrap();
    path
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
fn build_refuses_a_directory_holding_the_users_files_and_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("report.tmp"), "precious").unwrap();
    std::fs::write(d.join("take1.seg"), "x").unwrap();
    let input = slice(dir.path(), "in.jsonl", 0, 50);
    let out = run(&["index", "build", s(&d), s(&input)]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not empty"), "{}", stderr(&out));
    assert_eq!(names(&d), ["report.tmp", "take1.seg"]);
    assert_eq!(
        std::fs::read_to_string(d.join("report.tmp")).unwrap(),
        "precious"
    );
}

#[test]
fn an_output_inside_the_index_is_refused_and_the_index_kept() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    let input = slice(dir.path(), "in.jsonl", 0, 200);
    let more = slice(dir.path(), "more.jsonl", 200, 100);
    ok(&["index", "build", s(&idx), s(&input), "-q"]);
    let before = names(&idx);
    let manifest = std::fs::read(idx.join("MANIFEST")).unwrap();
    let cases: [Vec<String>; 3] = [
        vec![
            "query".into(),
            s(&idx).into(),
            s(&input).into(),
            "-o".into(),
            s(&idx.join("MANIFEST")).into(),
        ],
        vec![
            "add".into(),
            s(&idx).into(),
            s(&more).into(),
            "--dedup".into(),
            "-o".into(),
            s(&idx.join("00000001.seg")).into(),
        ],
        // Another name for the same place.
        vec![
            "query".into(),
            s(&idx).into(),
            s(&input).into(),
            "-o".into(),
            format!("{}/../idx/new.jsonl", s(&idx)),
        ],
    ];
    for args in cases {
        let mut all = vec!["index".to_string()];
        all.extend(args);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = run(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("inside the index"),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(names(&idx), before);
    assert_eq!(std::fs::read(idx.join("MANIFEST")).unwrap(), manifest);
    let check = ok(&["index", "check", s(&idx)]);
    assert!(String::from_utf8_lossy(&check.stdout).starts_with("ok: 200 documents"));
}

#[test]
fn compact_refuses_to_launder_a_damaged_segment() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    let input = slice(dir.path(), "in.jsonl", 0, 100);
    ok(&["index", "build", s(&idx), s(&input), "-q"]);
    let seg = idx.join("00000001.seg");
    let mut bytes = std::fs::read(&seg).unwrap();
    let at = bytes.len() - 12;
    bytes[at] ^= 0x20;
    std::fs::write(&seg, bytes).unwrap();
    assert_eq!(run(&["index", "check", s(&idx)]).status.code(), Some(3));
    let first_id: Value = serde_json::from_str(
        std::fs::read_to_string(&input)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    ok(&[
        "index",
        "remove",
        s(&idx),
        first_id["id"].as_str().unwrap(),
        "-q",
    ]);
    let out = run(&["index", "compact", s(&idx)]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("refusing to merge a damaged segment"),
        "{}",
        stderr(&out)
    );
    let out = run(&["index", "check", s(&idx)]);
    assert_eq!(out.status.code(), Some(3), "the damage is still reported");
    assert!(String::from_utf8_lossy(&out.stdout).contains("checksum does not match"));
}

/// Runs `neardup ARGS` under a file size limit of `kib` KiB (SIGXFSZ ignored, so a write
/// past it fails with EFBIG as on a full disk).
fn run_limited(kib: u64, args: &[&str]) -> Output {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {kib}; exec '{}' {}",
            s(&neardup()),
            quoted.join(" ")
        ))
        .output()
        .unwrap()
}

#[test]
fn an_add_whose_merge_fails_on_a_full_disk_is_committed_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    // Three segments of one size tier; the fourth add merges all four.
    let batches: Vec<PathBuf> = (0..4)
        .map(|b| slice(dir.path(), &format!("b{b}.jsonl"), b * 300, 300))
        .collect();
    ok(&["index", "build", s(&idx), s(&batches[0]), "-q"]);
    for b in &batches[1..3] {
        ok(&["index", "add", s(&idx), s(b), "-q"]);
    }
    let largest = std::fs::read_dir(&idx)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .max()
        .unwrap();
    // Room for one more segment, not for the four merged.
    let limit = (largest * 2).div_ceil(1024);
    let out = run_limited(limit, &["index", "add", s(&idx), s(&batches[3]), "-q"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("the change is committed, but merging segments after it failed"),
        "{err}"
    );
    let st = stats(&idx);
    assert_eq!(st["documents"], 1200);
    assert_eq!(st["segments"], 4);
    assert!(
        names(&idx).iter().all(|n| !n.ends_with(".tmp")),
        "{:?}",
        names(&idx)
    );
    ok(&["index", "check", s(&idx)]);
    // With room again, the next change merges.
    ok(&["index", "remove", s(&idx), "no-such-id", "-q"]);
    ok(&["index", "compact", s(&idx)]);
    let st = stats(&idx);
    assert_eq!(
        (st["documents"].as_u64(), st["segments"].as_u64()),
        (Some(1200), Some(1))
    );
}

#[test]
fn add_dedup_writes_its_lines_before_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    let base = slice(dir.path(), "base.jsonl", 0, 100);
    let more = slice(dir.path(), "more.jsonl", 100, 400);
    ok(&["index", "build", s(&idx), s(&base), "-q"]);
    let generation = |idx: &Path| stats(idx)["generation"].clone();
    let before = generation(&idx);
    // The lines do not fit: nothing is added.
    let out_file = dir.path().join("out.jsonl");
    let out = run_limited(
        4,
        &[
            "index",
            "add",
            s(&idx),
            s(&more),
            "--dedup",
            "-o",
            s(&out_file),
            "-q",
        ],
    );
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(generation(&idx), before, "{}", stderr(&out));
    assert!(!out_file.exists());
    ok(&[
        "index",
        "add",
        s(&idx),
        s(&more),
        "--dedup",
        "-o",
        s(&out_file),
        "-q",
    ]);
    assert_eq!(
        std::fs::read_to_string(&out_file).unwrap().lines().count(),
        400
    );
}

#[test]
fn a_writer_says_whom_it_waits_for_and_gives_up_after_wait() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    let input = slice(dir.path(), "in.jsonl", 0, 20);
    ok(&["index", "build", s(&idx), s(&input), "-q"]);
    // Another writer holds the lock (flock(1) takes the same lock as a writer).
    let mut holder = std::process::Command::new("flock")
        .args(["-x", "-o", s(&idx.join("LOCK")), "sleep", "30"])
        .spawn()
        .expect("flock(1) from util-linux");
    // Until flock has the lock, a --wait 0 add may get it: wait for the refusal.
    let mut out = run(&["index", "add", s(&idx), s(&input), "--wait", "0", "-q"]);
    for _ in 0..100 {
        if !out.status.success() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        out = run(&["index", "add", s(&idx), s(&input), "--wait", "0", "-q"]);
    }
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("holds the index's lock"),
        "{}",
        stderr(&out)
    );
    for args in [
        vec!["add", s(&idx), s(&input), "--wait", "0.2", "-q"],
        vec!["remove", s(&idx), "x", "--wait", "0.2", "-q"],
        vec!["compact", s(&idx), "--wait", "0.2"],
    ] {
        let mut all = vec!["index"];
        all.extend(args);
        let out = run(&all);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(4), "{all:?}: {err}");
        assert!(err.contains(&format!("waiting for {}", s(&idx))), "{err}");
        assert!(err.contains("giving up after"), "{err}");
    }
    let out = run(&["index", "add", s(&idx), s(&input), "--wait", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    holder.kill().unwrap();
    holder.wait().unwrap();
    ok(&["index", "add", s(&idx), s(&input), "--wait", "5", "-q"]);
}

fn write_lines(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn counts_say_what_happened_to_each_id() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    let base = write_lines(
        dir.path(),
        "base.jsonl",
        "{\"id\":\"a\",\"text\":\"Vintage road bike, 56 cm steel frame, new tyres\"}\n",
    );
    ok(&["index", "build", s(&idx), s(&base), "-q"]);
    let twice = write_lines(
        dir.path(),
        "twice.jsonl",
        "{\"id\":\"n\",\"text\":\"Brass desk lamp with a green glass shade\"}\n\
         {\"id\":\"n\",\"text\":\"Set of four ladder-back chairs in solid beech\"}\n",
    );
    let out = ok(&["index", "add", s(&idx), s(&twice), "--dedup"]);
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        serde_json::json!({"id": "n", "added": false, "skipped": "superseded"})
    );
    assert_eq!(lines[1], serde_json::json!({"id": "n", "added": true}));
    let err = stderr(&out);
    assert!(
        err.contains(
            "added 1 document (0 replaced an indexed id; 1 not added: a later one had the same id"
        ),
        "{err}"
    );
    let out = ok(&["index", "add", s(&idx), s(&twice)]);
    let err = stderr(&out);
    assert!(
        err.contains(
            "added 1 document (1 replaced an indexed id; 1 not added: a later one had the same id)"
        ),
        "{err}"
    );
    let ids = write_lines(dir.path(), "ids.txt", "n\nn\nn\nzz\n");
    let out = ok(&["index", "remove", s(&idx), "--ids", s(&ids)]);
    let err = stderr(&out);
    assert!(err.contains("removed 1 document; 1 not in the index (the first: \"zz\"); 2 ids asked for again, counted once"), "{err}");
    // Bytes per live document.
    let st = stats(&idx);
    let per = st["bytes"].as_f64().unwrap() / st["documents"].as_f64().unwrap();
    assert!(
        (st["bytes_per_document"].as_f64().unwrap() - per).abs() < 0.1,
        "{st}"
    );
}

#[test]
fn ids_an_index_cannot_tell_apart_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    let cases = [
        (
            "empty.jsonl",
            "{\"id\":\"a\",\"text\":\"first text here\"}\n{\"id\":\"\",\"text\":\"second text here\"}\n",
            "empty.jsonl:2: the record's id is empty",
        ),
        (
            "mixed.jsonl",
            "{\"id\":12,\"text\":\"first text here\"}\n{\"id\":\"12\",\"text\":\"second text here\"}\n",
            "mixed.jsonl:2: the id \"12\" and the id 12 at",
        ),
    ];
    for (name, text, says) in cases {
        let input = write_lines(dir.path(), name, text);
        let out = run(&["index", "build", s(&idx), s(&input)]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn documents_without_ids_do_not_replace_indexed_ones_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    let base = write_lines(
        dir.path(),
        "base.jsonl",
        "{\"id\":\"1\",\"text\":\"Vintage road bike, 56 cm steel frame\"}\n\
         {\"id\":\"2\",\"text\":\"Brass desk lamp with a green glass shade\"}\n",
    );
    ok(&["index", "build", s(&idx), s(&base), "-q"]);
    let plain = write_lines(dir.path(), "plain.txt", "a text read without its id\n");
    let out = run(&["index", "add", s(&idx), s(&plain), "-q"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--replace-numbered"),
        "{}",
        stderr(&out)
    );
    let out = ok(&[
        "index",
        "add",
        s(&idx),
        s(&plain),
        "-q",
        "--replace-numbered",
    ]);
    // The warning is about the index's contents: --quiet does not hide it.
    assert!(
        stderr(&out).contains("1 document without ids goes by its line or record number"),
        "{}",
        stderr(&out)
    );
    let st = stats(&idx);
    assert_eq!(st["documents"], 2);
}
