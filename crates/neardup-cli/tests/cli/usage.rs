//! Bad usage: options that do not apply or do not go together, refusals made before any work, outputs that would replace an input.

use crate::common::*;

#[test]
fn bad_usage_and_bad_input_have_distinct_exit_codes_and_clear_messages() {
    let o = neardup(&["pairs", "cli/stories.txt", "-t", "1.5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("threshold"), "{}", stderr(&o));

    let o = neardup(&["pairs", "cli/stories.txt", "--bands", "20", "--rows", "8"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("20 bands x 8 rows"), "{}", stderr(&o));

    let o = neardup(&["pairs", "cli/listings.tsv", "--text-columns", "Title,Body"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("Body") && stderr(&o).contains("listings.tsv"),
        "{}",
        stderr(&o)
    );

    let o = neardup(&["pairs", "cli/no-such-file.jsonl"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(stderr(&o).contains("no-such-file.jsonl"), "{}", stderr(&o));

    let o = neardup(&["pairs", "cli/stories.txt", "--shingle", "byte:3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("byte:3"));
}

#[test]
fn options_that_do_not_apply_are_refused() {
    let refused: &[&[&str]] = &[
        &["pairs", "cli/notes.txt", "--text-columns", "Title"],
        &["pairs", "cli/reviews.jsonl", "--text-columns", "Title"],
        &["pairs", "cli/listings.tsv", "--text-field", "body"],
        &["pairs", "cli/articles", "--id-field", "id"],
        &["pairs", "cli/stories.txt", "--keep", "longest"],
        &["pairs", "cli/stories.txt", "--keep-by", "date"],
        &["dedup", "cli/stories.txt", "--output-format", "tsv"],
        &["clusters", "cli/stories.txt", "--removed", "r.jsonl"],
        &["clusters", "cli/stories.txt", "--force"],
        &["pairs", "cli/stories.txt", "--exact", "--verify", "none"],
        &[
            "pairs",
            "cli/stories.txt",
            "--method",
            "exact",
            "--bands",
            "4",
            "--rows",
            "2",
        ],
        &[
            "pairs",
            "cli/stories.txt",
            "--method",
            "exact",
            "--sketch",
            "classic",
        ],
        &[
            "pairs",
            "cli/stories.txt",
            "--method",
            "exact",
            "--verify",
            "triage",
        ],
        &["pairs", "cli/stories.txt", "--method", "lsh", "--exact"],
        &[
            "pairs",
            "cli/stories.txt",
            "--exact",
            "--bands",
            "4",
            "--rows",
            "2",
        ],
        &[
            "clusters",
            "cli/stories.txt",
            "--keep",
            "last",
            "--keep-by",
            "x",
        ],
        &["eval", "cli/stories.txt", "--allow-unknown-labels"],
        &["sim", "a b c", "a b d", "--sketch", "classic"],
        &["sim", "a b c", "a b d", "--no-neighbours"],
    ];
    for args in refused {
        let o = neardup(args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// Each batch command offers only the options that apply to it: pairs no --keep,
/// --keep-by, --allow-truncated, --removed or --force; clusters no --removed or --force;
/// dedup no --output-format.
#[test]
fn batch_commands_offer_only_their_options_golden() {
    let pairs = options_listed("pairs");
    insta::assert_snapshot!("pairs_options", pairs);
    insta::assert_snapshot!("clusters_options", options_listed("clusters"));
    insta::assert_snapshot!("dedup_options", options_listed("dedup"));
    for absent in ["--keep", "--allow-truncated", "--removed", "--force"] {
        assert!(!pairs.lines().any(|l| l.starts_with(absent)), "{absent}");
    }
    for (args, unexpected) in [
        (
            &["pairs", "cli/stories.txt", "--allow-truncated"][..],
            "--allow-truncated",
        ),
        (
            &["dedup", "cli/stories.txt", "--output-format", "tsv"],
            "--output-format",
        ),
        (&["clusters", "cli/stories.txt", "--force"], "--force"),
    ] {
        let o = neardup(args);
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(
            stderr(&o).contains(&format!("unexpected argument '{unexpected}'")),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn outputs_never_replace_an_input_and_folders_need_force() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("stories.txt");
    std::fs::copy(testdata("cli/stories.txt"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let i = input.to_str().unwrap();
    let other = dir.path().join("o.txt");
    let o_ = other.to_str().unwrap();
    for args in [
        vec!["dedup", i, "-o", i],
        vec!["dedup", i, "-o", o_, "--skipped", i],
        vec!["dedup", i, "-o", o_, "--report", i],
        vec!["dedup", i, "-o", o_, "--removed", i],
        vec!["dedup", i, "-o", o_, "--removed", o_],
    ] {
        let o = neardup(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert_eq!(std::fs::read(&input).unwrap(), before);
    }
    // A non-empty output folder: exit 2 naming --force; --force replaces it.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("old.txt"), "old").unwrap();
    let args = ["dedup", "cli/articles", "-o", out.to_str().unwrap(), "-q"];
    let o = neardup(&args);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert!(out.join("old.txt").exists());
    let o = neardup(&[&args[..], &["--force"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!out.join("old.txt").exists());
    assert!(out.join("tech").is_dir());
    // --force never deletes a folder that holds an input.
    let o = neardup(&[
        "dedup",
        out.join("tech").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(out.join("tech").is_dir());
}

/// dedup refuses what it cannot write before reading any record: each case has a FIFO
/// that nobody writes to as one input, which reading would wait on for ever.
#[cfg(unix)]
#[test]
fn dedup_refuses_an_unwritable_output_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |name: &str| d.join(name).to_str().unwrap().to_string();
    std::fs::write(d.join("a.jsonl"), "{\"id\": 1, \"text\": \"red bike\"}\n").unwrap();
    std::fs::write(d.join("a.csv"), "id,text\n1,red bike\n").unwrap();
    std::fs::write(d.join("b.csv"), "id,body,text\n1,x,red bike\n").unwrap();
    let fifo_csv = silent_fifo(d, "fifo.csv");
    let fifo_jsonl = silent_fifo(d, "fifo.jsonl");
    let fifo_unnamed = silent_fifo(d, "fifo");
    let (fifo_csv, fifo_jsonl, fifo_unnamed) = (
        fifo_csv.to_str().unwrap(),
        fifo_jsonl.to_str().unwrap(),
        fifo_unnamed.to_str().unwrap(),
    );
    let cases: Vec<(Vec<String>, &str)> = vec![
        // A JSONL file and a CSV into one output.
        (
            vec![
                path("a.jsonl"),
                fifo_csv.into(),
                "-o".into(),
                path("o.jsonl"),
            ],
            "a.jsonl is jsonl and",
        ),
        // CSV files whose header lines differ (the FIFO's is not looked at).
        (
            vec![
                path("a.csv"),
                path("b.csv"),
                fifo_csv.into(),
                "-o".into(),
                path("o.csv"),
            ],
            "different headers",
        ),
        // JSONL written into a file named .csv.
        (
            vec![fifo_jsonl.into(), "-o".into(), path("o.csv")],
            "is jsonl and -o",
        ),
        // A directory without -o DIR (the FIFO's format is told by its content).
        (
            vec![
                testdata("cli/articles").to_str().unwrap().into(),
                fifo_unnamed.into(),
            ],
            "needs -o DIR",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["dedup"];
        all.extend(args.iter().map(String::as_str));
        let o = neardup_or_hang(&all);
        assert_eq!(code(&o), 2, "{all:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{all:?}: {}", stderr(&o));
    }
    // The output's name says the format: "-o o.csv" for a JSONL input names both.
    let o = neardup(&["dedup", &path("a.jsonl"), "-o", &path("o.csv")]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("name the output .jsonl"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("o.csv").exists());
    // Formats that agree, or an output name without a known extension, are written.
    for out in ["o.jsonl", "o.jsonl.gz", "o.out"] {
        let o = neardup(&["dedup", &path("a.jsonl"), "-o", &path(out), "-q"]);
        assert!(o.status.success(), "{out}: {}", stderr(&o));
    }
    // Read by its content, a JSONL input into a .csv output is refused after reading.
    let o = neardup_stdin(
        &["dedup", "-", "-o", &path("p.csv")],
        "{\"text\": \"red bike\"}\n",
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("- is jsonl"), "{}", stderr(&o));
    assert!(!d.join("p.csv").exists());
}

#[test]
fn a_full_or_closed_stderr_neither_panics_nor_fails_the_run() {
    let bin = assert_cmd::cargo::cargo_bin("neardup");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = std::process::Command::new(&bin)
        .current_dir(testdata(""))
        .args(["pairs", "cli/stories.txt"])
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("\"s1\""), "{}", stdout(&o));
    // A reader of stderr that has gone away before anything was written.
    let mut child = std::process::Command::new(&bin)
        .current_dir(testdata(""))
        .args(["clusters", "cli/stories.txt"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 0);
    assert!(!o.stdout.is_empty());
    // Errors still give their exit code with nowhere to say them.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = std::process::Command::new(&bin)
        .current_dir(testdata(""))
        .args(["pairs", "cli/stories.txt", "--keep", "last"])
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
}
