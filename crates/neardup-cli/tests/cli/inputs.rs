//! Input formats as users have them: gzip, stdin, lines, directories, CSV/TSV quirks, JSONL ids, skipped records and the accounting of every line.

use crate::common::*;

#[test]
fn gzip_input_reads_like_plain() {
    let args = ["--text-field", "body", "--id-field", "review_id", "-q"];
    let plain = ok(&[&["pairs", "cli/reviews.jsonl"][..], &args].concat());
    let gz = ok(&[&["pairs", "cli/reviews.jsonl.gz"][..], &args].concat());
    assert!(!plain.is_empty());
    assert_eq!(plain, gz);
}

#[test]
fn stdin_is_read_with_dash() {
    let text = std::fs::read(testdata("cli/stories.txt")).unwrap();
    let o = neardup_stdin(&["pairs", "-", "-q"], text);
    assert!(o.status.success());
    assert_eq!(stdout(&o), ok(&["pairs", "cli/stories.txt", "-q"]));
    // JSONL on stdin is recognized by its first byte.
    let jsonl = std::fs::read(testdata("cli/reviews.jsonl")).unwrap();
    let o = neardup_stdin(
        &[
            "pairs",
            "-",
            "--text-field",
            "body",
            "--id-field",
            "review_id",
            "-q",
        ],
        jsonl,
    );
    let from_file = ok(&[
        "pairs",
        "cli/reviews.jsonl",
        "--text-field",
        "body",
        "--id-field",
        "review_id",
        "-q",
    ]);
    assert_eq!(json_lines(&from_file).len(), 3);
    assert_eq!(stdout(&o), from_file);
}

#[test]
fn plain_lines_are_numbered_and_empty_lines_skipped() {
    let o = neardup(&["pairs", "cli/notes.txt", "-t", "0.7"]);
    let pairs = json_lines(&stdout(&o));
    let ab: Vec<(u64, u64)> = pairs
        .iter()
        .map(|p| (p["a"].as_u64().unwrap(), p["b"].as_u64().unwrap()))
        .collect();
    assert_eq!(ab, [(1, 3), (1, 6), (3, 6)]);
    assert!(
        stderr(&o).contains("skipped   2 (empty 2)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn directory_tree_by_relative_path() {
    let out = ok(&["clusters", "cli/articles", "-q"]);
    insta::assert_snapshot!("clusters_articles", out);
    let o = neardup(&["clusters", "cli/articles"]);
    let (read, kept, removed, skipped) = accounting(&stderr(&o));
    assert_eq!((read, kept, removed, skipped), (8, 5, 2, 1));
    assert!(stderr(&o).contains("binary 1"));
}

/// One file of dirty input: every record is accounted for, the summary and the skipped
/// list are golden, and the near-duplicates among the survivors are still found.
#[test]
fn dirty_jsonl_is_accounted_for_golden() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("skipped.jsonl");
    let o = neardup(&[
        "clusters",
        "cli/dirty.jsonl",
        "--skipped",
        list.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = stderr(&o);
    insta::assert_snapshot!("dirty_summary", summary_without_times(&summary));
    insta::assert_snapshot!("dirty_clusters", stdout(&o));
    insta::assert_snapshot!("dirty_skipped", std::fs::read_to_string(&list).unwrap());
    let (read, kept, removed, skipped) = accounting(&summary);
    assert_eq!(read, 14, "14 lines, one of them blank");
    assert_eq!(read, kept + removed + skipped);
    assert_eq!(
        std::fs::read_to_string(&list).unwrap().lines().count() as u64,
        skipped
    );
}

#[test]
fn on_error_fail_stops_at_the_first_bad_record() {
    let o = neardup(&["clusters", "cli/dirty.jsonl", "--on-error", "fail"]);
    assert_eq!(o.status.code(), Some(3));
    // Line 3 has invalid UTF-8: under fail that is an error, not a lossy decode.
    assert!(
        stderr(&o).contains("cli/dirty.jsonl:3: invalid UTF-8"),
        "{}",
        stderr(&o)
    );
    let o = neardup(&[
        "clusters",
        "cli/reviews.jsonl",
        "--text-field",
        "body",
        "--on-error",
        "fail",
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("cli/reviews.jsonl:7: malformed JSON"),
        "{}",
        stderr(&o)
    );
    // Clean input passes under fail.
    ok(&["pairs", "cli/stories.txt", "--on-error", "fail", "-q"]);
}

/// The skipped list follows the inputs' order, directories in walk order included.
#[test]
fn skipped_list_is_in_input_order_across_files_and_directories() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir_all(d.join("a")).unwrap();
    std::fs::write(d.join("a.txt"), b"bin\0").unwrap();
    std::fs::write(d.join("a/b.txt"), b"bin\0").unwrap();
    std::fs::write(d.join("c.txt"), "some text here").unwrap();
    let first = dir.path().join("first.jsonl");
    std::fs::write(&first, "{\"text\":\"hello there world\"}\n{bad\n").unwrap();
    let list = dir.path().join("sk.jsonl");
    ok(&[
        "clusters",
        first.to_str().unwrap(),
        d.to_str().unwrap(),
        "-q",
        "--skipped",
        list.to_str().unwrap(),
    ]);
    let root = dir.path().to_str().unwrap().to_string() + "/";
    let sources: Vec<String> = json_lines(&std::fs::read_to_string(&list).unwrap())
        .iter()
        .map(|s| {
            s["source"]
                .as_str()
                .unwrap()
                .trim_start_matches(&root)
                .to_string()
        })
        .collect();
    // first.jsonl's bad line 2, then the directory in walk order ("a" sorts before "a.txt").
    assert_eq!(sources, ["first.jsonl", "d/a/b.txt", "d/a.txt"]);
}

#[test]
fn every_record_missing_the_text_field_is_an_error_naming_the_fields() {
    let (_d, path) = temp_file(
        "data.jsonl",
        "{\"id\": 1, \"title\": \"a\", \"text\": \"red bike\"}\n{\"id\": 2, \"title\": \"b\", \"text\": \"blue car\"}\n",
    );
    let out = path.with_extension("out.jsonl");
    let p = path.to_str().unwrap();
    let o = neardup(&[
        "dedup",
        p,
        "--text-field",
        "body",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("\"body\"") && err.contains("all 2 skipped"),
        "{err}"
    );
    assert!(err.contains("id, title, text"), "{err}");
    assert!(!out.exists(), "no output is written");
    // A wrong id field is an error too, not a silent fallback to line numbers.
    let o = neardup(&["pairs", p, "--id-field", "key", "-q"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(stderr(&o).contains("id field \"key\""), "{}", stderr(&o));
    // An id field in only some records is named in a warning.
    let (_d2, some) = temp_file(
        "some.jsonl",
        "{\"key\": \"a\", \"text\": \"red bike\"}\n{\"text\": \"blue car\"}\n",
    );
    let o = neardup(&["pairs", some.to_str().unwrap(), "--id-field", "key"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 of 2 records") && stderr(&o).contains("named by line number"),
        "{}",
        stderr(&o)
    );
    // Every record skipped for another single reason fails as well.
    let (_d3, csvish) = temp_file("rows.jsonl", "a,b\n1,2\n3,4\n");
    let o = neardup(&["pairs", csvish.to_str().unwrap(), "-q"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(stderr(&o).contains("all 3 records"), "{}", stderr(&o));
}

#[test]
fn tsv_quote_and_escapes_options() {
    let dir = tempfile::tempdir().unwrap();
    // A TSV written with CSV-style quotes (a field over two lines): --quote '"' reads it.
    let quoted = dir.path().join("quoted.tsv");
    std::fs::write(
        &quoted,
        "id\ttext\n1\t\"a quoted\nfield\"\n2\tsomething else entirely\n",
    )
    .unwrap();
    let o = neardup(&["clusters", quoted.to_str().unwrap(), "--quote", "\""]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("read 2 = "), "{}", stderr(&o));
    // Without it, the quote is text and the field's second line is a short row.
    let o = neardup(&["clusters", quoted.to_str().unwrap()]);
    assert!(stderr(&o).contains("read 3 = "), "{}", stderr(&o));
    assert!(stderr(&o).contains("missing_columns 1"), "{}", stderr(&o));
    // --tsv-escapes decodes \t \n \r \\ in fields (a backslash before anything else stays).
    let escaped = dir.path().join("escaped.tsv");
    std::fs::write(
        &escaped,
        "id\ttext\n1\tsee C:\\\\Users\\\\docs for the files\n2\tsee C:\\Users\\docs for the files\n",
    )
    .unwrap();
    let pairs = |extra: &[&str]| {
        let o = neardup(&[&["pairs", escaped.to_str().unwrap(), "-q"][..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert!(pairs(&["--tsv-escapes"]).contains("\"jaccard\":1.0"));
    assert!(!pairs(&[]).contains("\"jaccard\":1.0"));
    // A bad quote is a usage error (exit 2) that says what is wanted.
    let o = neardup(&["pairs", quoted.to_str().unwrap(), "--quote", "ab"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("one ASCII character"), "{}", stderr(&o));
}

#[test]
fn csv_runaway_quote_is_a_warning_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("notes.csv");
    let mut data = String::from("id,text\n1,first note\n2,\"a stray quote\n");
    for i in 3..150 {
        data.push_str(&format!("{i},note number {i}\n"));
    }
    std::fs::write(&csv, data).unwrap();
    let o = neardup(&["clusters", csv.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("notes.csv:3: a quoted field opened here runs 148 lines"),
        "{err}"
    );
    assert!(err.contains("is a quote stray?"), "{err}");
}

/// Each input warning is printed once by every batch command, with and without -q.
#[test]
fn input_warnings_are_printed_once_by_each_batch_command() {
    let (_d, some) = temp_file(
        "some.jsonl",
        "{\"id\": \"a\", \"text\": \"red bike\"}\n{\"text\": \"blue car\"}\n",
    );
    let out = some.with_extension("out.jsonl");
    for command in ["pairs", "clusters", "dedup"] {
        for quiet in [false, true] {
            let mut args = vec![command, some.to_str().unwrap()];
            if command == "dedup" {
                args.extend(["-o", out.to_str().unwrap()]);
            }
            if quiet {
                args.push("-q");
            }
            let o = neardup(&args);
            assert!(o.status.success(), "{args:?}: {}", stderr(&o));
            let err = stderr(&o);
            assert_eq!(
                err.matches("has no id field \"id\"").count(),
                1,
                "{args:?}: {err}"
            );
        }
    }
}

#[test]
fn tab_separated_csv_gets_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("export.csv");
    std::fs::write(&csv, "id\ttext\n1\thello\n").unwrap();
    let o = neardup(&["pairs", csv.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("looks tab-separated"), "{err}");
    assert!(err.contains("try --format tsv"), "{err}");
    assert!(err.contains("\"id\", \"text\""), "{err}");
}

#[test]
fn directories_leave_out_hidden_and_unmatched_files_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("docs");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main").unwrap();
    std::fs::write(root.join(".notes.txt"), "a hidden note about nothing").unwrap();
    std::fs::write(root.join("a.txt"), "the first document, about apples").unwrap();
    std::fs::write(root.join("b.md"), "the second document, about pears").unwrap();
    let path = root.to_str().unwrap();
    let o = neardup(&["clusters", path]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("read 2 = "), "{err}");
    assert!(err.contains("2 files or folders (hidden 2)"), "{err}");
    let o = neardup(&["clusters", path, "--hidden"]);
    assert!(stderr(&o).contains("read 4 = "), "{}", stderr(&o));
    let o = neardup(&["clusters", path, "--glob", "*.md"]);
    let err = stderr(&o);
    assert!(err.contains("read 1 = "), "{err}");
    assert!(
        err.contains("3 files or folders (hidden 2, not matched by --glob 1)"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn directories_skip_links_and_fifos_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.txt"), "the only document").unwrap();
    std::os::unix::fs::symlink(root.join("a.txt"), root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(&root, root.join("loop")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(root.join("pipe"))
        .status()
        .unwrap();
    assert!(fifo.success());
    let skipped = dir.path().join("skipped.jsonl");
    let o = neardup(&[
        "clusters",
        root.to_str().unwrap(),
        "--skipped",
        skipped.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let codes: Vec<String> = json_lines(&std::fs::read_to_string(&skipped).unwrap())
        .iter()
        .map(|v| v["code"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(codes, ["symlink", "symlink", "special_file"]);
    // Followed, the file link is read and the loop ends as unreadable.
    let o = neardup(&[
        "clusters",
        root.to_str().unwrap(),
        "--follow",
        "--skipped",
        skipped.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let codes: Vec<String> = json_lines(&std::fs::read_to_string(&skipped).unwrap())
        .iter()
        .map(|v| v["code"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(codes, ["unreadable", "special_file"]);
}

#[test]
fn json_ids_keep_their_type() {
    let (_d, path) = temp_file(
        "ids.jsonl",
        concat!(
            "{\"id\": 8.50, \"text\": \"red bike for sale, barely used, with lights\"}\n",
            "{\"id\": \"8.50\", \"text\": \"red bike for sale, barely used, with lights!\"}\n",
            "{\"text\": \"red bike for sale, barely used, with lights.\"}\n",
        ),
    );
    let out = ok(&["pairs", path.to_str().unwrap(), "-q"]);
    // A JSON number stays a number with its source text, a string a string, and a
    // record without an id is its line number (a number).
    assert!(out.contains("{\"a\":8.50,\"b\":\"8.50\""), "{out}");
    assert!(out.contains("{\"a\":8.50,\"b\":3,"), "{out}");
}

#[test]
fn semicolon_csv_reads_with_delimiter_and_headers_give_hints() {
    let (_d, path) = temp_file(
        "spreadsheet.csv",
        "id;Text;price\n1;Lavatrice usata, ottime condizioni, 7 kg;120,50\n2;Lavatrice usata, ottime condizioni, 7 kg!;120,00\n",
    );
    let p = path.to_str().unwrap();
    let o = neardup(&["pairs", p, "-q"]);
    assert_eq!(code(&o), 3);
    assert!(stderr(&o).contains("try --delimiter ';'"), "{}", stderr(&o));
    let o = neardup(&["pairs", p, "--delimiter", ";", "-q"]);
    assert_eq!(code(&o), 3);
    assert!(
        stderr(&o).contains("did you mean \"Text\"?"),
        "{}",
        stderr(&o)
    );
    let out = ok(&[
        "pairs",
        p,
        "--delimiter",
        ";",
        "--text-columns",
        "Text",
        "--id-column",
        "id",
        "-q",
    ]);
    let pairs = json_lines(&out);
    assert_eq!(pairs.len(), 1);
    assert_eq!(
        (pairs[0]["a"].as_str(), pairs[0]["b"].as_str()),
        (Some("1"), Some("2"))
    );
    // Only CSV has a delimiter to choose.
    let o = neardup(&["pairs", "cli/listings.tsv", "--delimiter", ";", "-q"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let o = neardup(&["pairs", p, "--delimiter", "\"", "-q"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

#[test]
fn every_line_is_kept_removed_or_skipped_exactly_once() {
    let texts = [
        "red bike for sale, barely used, with lights and a bell",
        "blue car, one owner, full service history, new tyres",
        "sunny flat near the park with a balcony and a new kitchen",
    ];
    for seed in 1..=12u64 {
        let mut rng = Lcg(seed);
        let n = 40 + (rng.next() % 60) as usize;
        let mut input = String::new();
        for line in 1..=n {
            let text = texts[(rng.next() % 3) as usize];
            let row = match rng.next() % 10 {
                0 => String::new(),                                            // blank: skipped
                1 => format!("{{\"id\": {line}, \"text\": "),                  // malformed: skipped
                2 => format!("{{\"id\": {line}, \"text\": \"\"}}"),            // empty: skipped
                3 => format!("{{\"id\": {line}}}"),                            // no text: skipped
                4 | 5 => format!("{{\"id\": {line}, \"text\": \"{text}!\"}}"), // near copy
                _ => format!(
                    "{{\"id\": {line}, \"text\": \"{text} {}\"}}",
                    rng.next() % 3
                ),
            };
            input.push_str(&row);
            input.push('\n');
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.jsonl");
        std::fs::write(&path, &input).unwrap();
        let (out, removed, skipped) = (
            dir.path().join("out.jsonl"),
            dir.path().join("removed.jsonl"),
            dir.path().join("skipped.jsonl"),
        );
        let o = neardup(&[
            "dedup",
            path.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--removed",
            removed.to_str().unwrap(),
            "--skipped",
            skipped.to_str().unwrap(),
            "-t",
            "0.7",
        ]);
        assert!(o.status.success(), "seed {seed}: {}", stderr(&o));
        let mut seen = vec![0u32; n + 1];
        let kept_text = std::fs::read_to_string(&out).unwrap();
        for line in kept_text.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let l = v["id"].as_u64().unwrap() as usize;
            // Byte for byte: the kept line is the input's line.
            assert_eq!(input.lines().nth(l - 1).unwrap(), line, "seed {seed}");
            seen[l] += 1;
        }
        let read = |p: &Path| json_lines(&std::fs::read_to_string(p).unwrap());
        let removed_lines = read(&removed);
        let skipped_lines = read(&skipped);
        for v in removed_lines.iter().chain(&skipped_lines) {
            seen[v["line"].as_u64().unwrap() as usize] += 1;
        }
        assert!(
            seen[1..].iter().all(|&c| c == 1),
            "seed {seed}: every line accounted for once: {seen:?}"
        );
        // The summary's counts add up to the same.
        let (read_n, kept, removed_n, skipped_n) = accounting(&stderr(&o));
        assert_eq!(read_n, n as u64, "seed {seed}");
        assert_eq!(kept, kept_text.lines().count() as u64);
        assert_eq!(removed_n, removed_lines.len() as u64);
        assert_eq!(skipped_n, skipped_lines.len() as u64);
        // The skipped list is in input order.
        let lines: Vec<u64> = skipped_lines
            .iter()
            .map(|v| v["line"].as_u64().unwrap())
            .collect();
        assert!(
            lines.windows(2).all(|w| w[0] < w[1]),
            "seed {seed}: {lines:?}"
        );
    }
}
