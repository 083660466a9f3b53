//! Memory: the limit, spilling to disk, copies that cost a few bytes, junk that costs none.
//!
//! Copies cost a few bytes (issue 10, item 4): records are spilled to an unnamed temporary
//! file and read back for dedup; ids without a user id and places are computed, not held;
//! groups of copies are clustered as groups.

use crate::common::*;

#[test]
fn a_run_predicted_to_exceed_memory_is_refused_at_once() {
    let start = std::time::Instant::now();
    refused(
        &[
            "pairs",
            "pypi-summaries.jsonl",
            "--num-perm",
            "65536",
            "--bands",
            "65536",
            "--rows",
            "1",
            "--memory",
            "4G",
        ],
        &["65536 bands", "GiB", "memory"],
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn a_run_over_the_memory_limit_spills_to_disk_with_the_same_result() {
    let input = testdata("pypi-summaries.jsonl");
    let p = input.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().to_str().unwrap();
    let sorted = |s: String| {
        let mut lines: Vec<&str> = s.lines().collect();
        lines.sort_unstable();
        lines.join("\n")
    };
    // In memory, LSH (auto may take the exact join, which finds a few more pairs).
    let pairs = ok(&["pairs", p, "--method", "lsh", "-q"]);
    let spilled = neardup(&["pairs", p, "--memory", "1M", "--tmp", tmp]);
    assert!(spilled.status.success(), "{}", stderr(&spilled));
    let summary = stderr(&spilled);
    assert!(
        summary.contains("memory    spills to")
            && summary.contains("more than the --memory limit (1.0 MiB)")
            && summary.contains("method    LSH (auto: the run spills to disk"),
        "{summary}"
    );
    // The same pairs, in another order.
    assert_eq!(sorted(stdout(&spilled)), sorted(pairs.clone()));
    assert!(pairs.lines().count() > 1000);
    for mode in ["clusters", "dedup"] {
        assert_eq!(
            ok(&[mode, p, "--memory", "1M", "--tmp", tmp, "-q"]),
            ok(&[mode, p, "--method", "lsh", "-q"]),
            "{mode}"
        );
    }
    for keep in [&["--keep", "longest"][..], &["--keep-by", "id:desc"]] {
        let args = [&["clusters", p, "--method", "lsh", "-q"][..], keep].concat();
        let spilled = [&["clusters", p, "--memory", "1M", "-q"][..], keep].concat();
        assert_eq!(ok(&spilled), ok(&args), "{keep:?}");
    }
    // Nothing is left behind in the folder.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    refused(
        &["pairs", p, "--memory", "1M", "--tmp", "/no/such/folder"],
        &["--tmp /no/such/folder: not a folder"],
    );
    refused(
        &["pairs", p, "--memory", "1M", "--verify", "estimate"],
        &[
            "spills to disk, which verifies exactly",
            "--verify estimate",
        ],
    );
}

#[test]
fn memory_limit_refuses_a_run_predicted_over_it_and_plan_says_so() {
    let input = testdata("pypi-summaries.jsonl");
    let p = input.to_str().unwrap();
    // Reading alone holds more than 1 MiB: eval is refused before sketching, the limit
    // named (pairs, clusters and dedup with LSH spill to disk instead, tested below).
    {
        refused(
            &["eval", p, "--memory", "1M", "-q"],
            &[
                "would need about",
                "held after reading",
                "the --memory limit (1.0 MiB)",
            ],
        );
    }
    // A generous limit changes nothing in the output.
    assert_eq!(
        ok(&["pairs", p, "--memory", "8G", "-q"]),
        ok(&["pairs", p, "-q"])
    );
    let plan = ok(&["plan", p, "--memory", "1M"]);
    assert!(
        plan.contains("memory fit  spills:")
            && plan.contains("more than the --memory limit (1.0 MiB)")
            && plan.contains("would spill to disk"),
        "{plan}"
    );
    // The input fits, but the estimate of the whole run (with twice the bands) does not:
    // refused.
    let plan = ok(&[
        "plan", p, "--memory", "2.5M", "--bands", "32", "--rows", "4",
    ]);
    assert!(
        plan.contains("memory fit  refused:") && plan.contains("the --memory limit (2.5 MiB)"),
        "{plan}"
    );
    let plan = ok(&["plan", p, "--memory", "1.5GiB"]);
    assert!(
        plan.contains("memory fit  fits:") && plan.contains("(1.5 GiB)"),
        "{plan}"
    );
    for bad in ["0", "12X", "0.5", "G", "1e400", "99999999999T"] {
        refused(&["pairs", p, "--memory", bad], &["--memory"]);
    }
    refused(
        &["sim", "a b c", "a b d", "--text", "--memory", "1G"],
        &["--memory does not apply to sim"],
    );
}

#[test]
fn dedup_of_copies_writes_first_copies_byte_for_byte_from_file_and_stdin() {
    let (input, expected) = copies_corpus();
    let (dir, path) = temp_file("copies.jsonl", &input);
    let p = path.to_str().unwrap();
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("out{threads}.jsonl"));
        let removed = dir.path().join(format!("removed{threads}.jsonl"));
        let o = neardup(&[
            "dedup",
            p,
            "-o",
            out.to_str().unwrap(),
            "--removed",
            removed.to_str().unwrap(),
            "--threads",
            threads,
        ]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), expected);
        // 120 blank or malformed lines; 3 records kept.
        assert_eq!(accounting(&stderr(&o)), (3000, 3, 2877, 120));
        let removed = std::fs::read_to_string(&removed).unwrap();
        outputs.push(removed.clone());
        let lines = json_lines(&removed);
        assert_eq!(lines.len(), 2877);
        for l in &lines {
            // Each removed record is the line it names, without its line end.
            let n = l["line"].as_u64().unwrap() as usize;
            let raw = input.lines().nth(n - 1).unwrap();
            assert_eq!(l["record"].as_str().unwrap(), raw.trim_end_matches('\r'));
            if n % 50 == 3 {
                assert_eq!(l["id"], format!("u{}", n - 1).as_str(), "{l}");
            } else {
                assert_eq!(l["id"].as_u64(), Some(n as u64), "{l}");
            }
        }
    }
    assert_eq!(outputs[0], outputs[1], "1 and 2 threads");
    let o = neardup_stdin(&["dedup", "-", "-q"], input.clone());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), expected, "standard input is spilled too");
}

#[test]
fn clusters_of_copies_name_documents_by_line_and_source() {
    let (input, _) = copies_corpus();
    let (dir, path) = temp_file("copies.jsonl", &input);
    let other = dir.path().join("more.txt");
    std::fs::write(
        &other,
        "x\nfresh sourdough bread baked every single morning\n",
    )
    .unwrap();
    let clusters = ok(&["clusters", path.to_str().unwrap(), "-q"]);
    let lines = json_lines(&clusters);
    assert_eq!(lines.len(), 3000 - 120);
    // Line 3 (the first line is blank, the second malformed) has a user id; line 4 not.
    assert_eq!(lines[0]["id"], "u2", "{}", lines[0]);
    assert_eq!(lines[1]["duplicate_of"], "u2");
    let second = lines.iter().find(|l| l["cluster"] == 2).unwrap();
    assert_eq!(second["id"], 4, "{second}");
    let both = ok(&[
        "clusters",
        path.to_str().unwrap(),
        other.to_str().unwrap(),
        "-q",
    ]);
    // Several inputs: ids are source:line; the second input's line 2 copies text 2.
    let lines = json_lines(&both);
    let id = format!("{}:2", other.display());
    let copy = lines.iter().find(|l| l["id"] == id.as_str()).unwrap();
    assert_eq!(copy["duplicate_of"], "u2", "{copy}");
    assert_eq!(lines[1]["duplicate_of"], "u2");
    assert_eq!(
        lines[1]["id"],
        format!("{}:6", path.display()),
        "{}",
        lines[1]
    );
}

/// dedup's records and the skipped list's spill go to unnamed temporary files: while the
/// run reads standard input, `$TMPDIR` holds no name of them, and after SIGTERM nothing
/// is left there or beside the outputs.
#[cfg(target_os = "linux")]
#[test]
fn dedup_spills_to_unnamed_files_that_a_signal_leaves_nothing_of() {
    use std::io::Write;
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().unwrap();
    let outs = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("neardup"))
        .env("TMPDIR", tmp.path())
        .args(["dedup", "-", "-q", "-o"])
        .arg(outs.path().join("out.jsonl"))
        .arg("--skipped")
        .arg(outs.path().join("skipped.jsonl"))
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let records = "{\"text\": \"a listing, copied\"}\n\nnot json\n".repeat(1000);
    stdin.write_all(records.as_bytes()).unwrap();
    // Standard input stays open: the run is reading. Its spills are open, deleted files.
    let fds = Path::new("/proc").join(child.id().to_string()).join("fd");
    let unnamed = || {
        std::fs::read_dir(&fds)
            .map(|d| {
                d.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                    .filter(|target| {
                        let t = target.to_string_lossy();
                        t.starts_with(tmp.path().to_str().unwrap()) && t.ends_with(" (deleted)")
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    let start = Instant::now();
    while unnamed() < 2 {
        assert!(start.elapsed() < Duration::from_secs(60), "no spill files");
        assert!(child.try_wait().unwrap().is_none(), "finished early");
        std::thread::sleep(Duration::from_millis(5));
    }
    let names = |dir: &Path| std::fs::read_dir(dir).unwrap().count();
    assert_eq!(names(tmp.path()), 0, "a spill file has a name");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(child.wait().unwrap().code(), Some(143));
    drop(stdin);
    assert_eq!(names(tmp.path()), 0);
    assert_eq!(names(outs.path()), 0, "no output, no temporary output");
}

#[cfg(target_os = "linux")]
#[test]
fn junk_costs_no_memory_per_record() {
    let dir = tempfile::tempdir().unwrap();
    let blank = dir.path().join("blank.jsonl");
    let lines = 2_000_000u64;
    std::fs::write(&blank, "\n".repeat(lines as usize)).unwrap();
    let out = dir.path().join("out.jsonl");
    let skipped = dir.path().join("skipped.jsonl");
    let per_line = bytes_per_record(
        &[
            "dedup",
            blank.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--skipped",
            skipped.to_str().unwrap(),
            "-q",
        ],
        lines,
    );
    assert!(per_line <= 2.0, "{per_line:.1} bytes per blank line");

    let copies = dir.path().join("copies.jsonl");
    let n = 500_000u64;
    let record = "{\"text\": \"Bright two bedroom apartment near downtown with a balcony and hardwood floors\"}\n";
    std::fs::write(&copies, record.repeat(n as usize)).unwrap();
    for mode in ["dedup", "clusters"] {
        let per_copy = bytes_per_record(
            &[
                mode,
                copies.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "-q",
            ],
            n,
        );
        assert!(
            per_copy <= 40.0,
            "{mode}: {per_copy:.1} bytes per identical copy"
        );
    }
    // The output is right too: one cluster of every copy, the first one kept.
    let clusters = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        clusters.lines().count() as u64,
        n,
        "clusters: every copy listed"
    );
    let kept: Vec<&str> = clusters
        .lines()
        .filter(|l| l.contains("\"kept\":true"))
        .collect();
    assert_eq!(kept, [r#"{"id":1,"cluster":1,"kept":true}"#]);
}

/// A folder of shards counts as its files in the memory prediction: over the limit it
/// spills as the same files given one by one do (it was taken for a folder of unknown size
/// and held in memory whatever the limit).
#[test]
fn a_folder_of_shards_over_the_memory_limit_spills_as_its_files_do() {
    let dir = tempfile::tempdir().unwrap();
    let shards = dir.path().join("shards");
    std::fs::create_dir(&shards).unwrap();
    let text = std::fs::read_to_string(testdata("pypi-summaries.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (a, b) = lines.split_at(lines.len() / 2);
    std::fs::write(shards.join("a.jsonl"), a.join("\n") + "\n").unwrap();
    std::fs::write(shards.join("b.jsonl"), b.join("\n") + "\n").unwrap();
    let tmp = dir.path().to_str().unwrap();
    let folder = shards.to_str().unwrap();
    let files = [shards.join("a.jsonl"), shards.join("b.jsonl")];
    let files: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    let run = |inputs: &[&str]| {
        let args = [&["clusters"], inputs, &["--memory", "1M", "--tmp", tmp]].concat();
        let o = neardup(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        (stdout(&o), stderr(&o))
    };
    let (from_folder, summary) = run(&[folder]);
    assert!(summary.contains("memory    spills to"), "{summary}");
    let (from_files, _) = run(&files);
    assert_eq!(from_folder, from_files);
}
