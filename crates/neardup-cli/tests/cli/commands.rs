//! pairs, clusters and dedup end to end: goldens, keep policies, several inputs, the method chosen.

use crate::common::*;

#[test]
fn pairs_on_plain_lines_with_ids_golden() {
    let o = neardup(&["pairs", "cli/stories.txt"]);
    assert!(o.status.success());
    insta::assert_snapshot!("pairs_stories_stdout", stdout(&o));
    insta::assert_snapshot!("pairs_stories_summary", summary_without_times(&stderr(&o)));
}

#[test]
fn clusters_on_tsv_listings_golden() {
    let out = ok(&[&["clusters"][..], LISTINGS, &["--quiet"]].concat());
    insta::assert_snapshot!("clusters_listings", out);
    for line in json_lines(&out) {
        if line["kept"] == false {
            assert!(line["jaccard"].as_f64().unwrap() >= 0.7);
        }
    }
}

#[test]
fn clusters_on_jsonl_count_every_record() {
    let o = neardup(&[
        "clusters",
        "cli/reviews.jsonl",
        "--text-field",
        "body",
        "--id-field",
        "review_id",
    ]);
    assert!(o.status.success());
    let summary = stderr(&o);
    insta::assert_snapshot!("clusters_reviews_summary", summary_without_times(&summary));
    let (read, kept, removed, skipped) = accounting(&summary);
    assert_eq!(read, 9, "the file has 9 lines");
    assert_eq!(read, kept + removed + skipped);
    assert_eq!(skipped, 3, "empty body, a malformed line, a missing field");
    let skipped_count = skipped;
    let lines = json_lines(&stdout(&o));
    // review_id is a JSON number in the input: the output keeps it a number.
    let removed_ids: Vec<u64> = lines
        .iter()
        .filter(|l| l["kept"] == false)
        .map(|l| l["id"].as_u64().unwrap())
        .collect();
    assert_eq!(removed_ids.len() as u64, removed);
    assert_eq!(removed_ids, [103, 106, 109]);

    // The skipped list names each skipped record's line and reason, in input order.
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("skipped.jsonl");
    ok(&[
        "clusters",
        "cli/reviews.jsonl",
        "--text-field",
        "body",
        "--id-field",
        "review_id",
        "-q",
        "--skipped",
        list.to_str().unwrap(),
    ]);
    let skipped = json_lines(&std::fs::read_to_string(&list).unwrap());
    let got: Vec<(u64, &str)> = skipped
        .iter()
        .map(|s| (s["line"].as_u64().unwrap(), s["code"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [(4, "empty"), (7, "malformed_json"), (8, "missing_field")]
    );
    assert_eq!(skipped.len() as u64, skipped_count);
}

#[test]
fn dedup_tsv_keeps_survivors_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("listings.dedup.tsv");
    ok(&[
        &["dedup"][..],
        LISTINGS,
        &["-o", out.to_str().unwrap(), "-q"],
    ]
    .concat());
    let input = std::fs::read_to_string(testdata("cli/listings.tsv")).unwrap();
    let written = std::fs::read_to_string(&out).unwrap();
    // L3, L5 and L7 are removed; the rest stays as it was.
    let expected: String = {
        let mut keep = String::new();
        let mut skip = false;
        for line in input.split_inclusive('\n') {
            let starts = ["L3\t", "L5\t", "L7\t"].iter().any(|p| line.starts_with(p));
            if starts {
                skip = true;
            } else if line.starts_with('L') || line.starts_with("id\t") {
                skip = false;
            }
            if !skip {
                keep.push_str(line);
            }
        }
        keep
    };
    assert_eq!(written, expected);
    assert!(written.starts_with("id\tTitle\tShort Description\tPrice\n"));
}

#[test]
fn dedup_jsonl_and_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("reviews.jsonl");
    ok(&[
        "dedup",
        "cli/reviews.jsonl",
        "--text-field",
        "body",
        "--id-field",
        "review_id",
        "-o",
        out.to_str().unwrap(),
        "-q",
    ]);
    let written = std::fs::read_to_string(&out).unwrap();
    let ids: Vec<i64> = json_lines(&written)
        .iter()
        .map(|l| l["review_id"].as_i64().unwrap())
        .collect();
    assert_eq!(
        ids,
        [101, 102, 105],
        "duplicates and skipped records are not written"
    );
    let input = std::fs::read_to_string(testdata("cli/reviews.jsonl")).unwrap();
    for line in written.lines() {
        assert!(
            input.lines().any(|l| l == line),
            "not byte for byte: {line}"
        );
    }

    let tree = dir.path().join("articles");
    ok(&["dedup", "cli/articles", "-o", tree.to_str().unwrap(), "-q"]);
    assert!(tree.join("sports/final-wire.txt").exists());
    assert!(!tree.join("sports/final.txt").exists());
    assert!(tree.join("tech/chips-copy.txt").exists());
    assert!(!tree.join("tech/chips.txt").exists());
    assert!(!tree.join("tech/logo.gif").exists());
    assert_eq!(
        std::fs::read(tree.join("politics/budget.txt")).unwrap(),
        std::fs::read(testdata("cli/articles/politics/budget.txt")).unwrap()
    );
}

#[test]
fn dedup_refuses_to_overwrite_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("stories.txt");
    std::fs::copy(testdata("cli/stories.txt"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let o = neardup(&[
        "dedup",
        input.to_str().unwrap(),
        "-o",
        input.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("refusing to overwrite input"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&input).unwrap(), before);
}

#[test]
fn keep_policies_choose_the_kept_document() {
    let common = [
        "clusters",
        "cli/reviews.jsonl",
        "--text-field",
        "body",
        "--id-field",
        "review_id",
        "-q",
    ];
    let kept = |policy: &str| -> Vec<u64> {
        json_lines(&ok(&[&common[..], &["--keep", policy]].concat()))
            .iter()
            .filter(|l| l["kept"] == true)
            .map(|l| l["id"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(kept("first"), [101, 102]);
    // 106 is the longest of the coffee reviews, 109 the shortest of the blender ones.
    assert_eq!(kept("longest"), [102, 106]);
    assert_eq!(kept("shortest"), [101, 109]);
    assert_eq!(kept("last"), [106, 109]);
}

#[test]
fn several_inputs_are_numbered_by_source_and_output_goes_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pairs.jsonl");
    let printed = ok(&[
        "pairs",
        "cli/notes.txt",
        "cli/stories.txt",
        "-t",
        "0.7",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(printed.is_empty(), "with -o nothing goes to stdout");
    let pairs = json_lines(&std::fs::read_to_string(&out).unwrap());
    let ab: Vec<(String, String)> = pairs
        .iter()
        .map(|p| {
            (
                p["a"].as_str().unwrap().to_string(),
                p["b"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        ("cli/notes.txt:1", "cli/notes.txt:3"),
        ("cli/notes.txt:1", "cli/notes.txt:6"),
        ("cli/notes.txt:3", "cli/notes.txt:6"),
        // Copies first, then pairs as LSH verifies them: not sorted by id.
        ("s2", "s5"),
        ("s1", "s3"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(ab, want);
}

/// Many identical documents: the pre-pass makes them one group, so clustering is linear.
#[test]
fn many_identical_documents_cluster_in_linear_work() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("same.txt");
    let n = 200_000;
    let mut text = String::with_capacity(n * 40);
    for _ in 0..n {
        text.push_str("Add your description here\n");
    }
    text.push_str("A different package entirely\n");
    std::fs::write(&path, text).unwrap();
    let o = neardup(&[
        "dedup",
        path.to_str().unwrap(),
        "-o",
        dir.path().join("out.txt").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (read, kept, removed, skipped) = accounting(&stderr(&o));
    assert_eq!(
        (read, kept, removed, skipped),
        (n as u64 + 1, 2, n as u64 - 1, 0)
    );
    assert!(stderr(&o).contains(&format!(
        "identical {} documents",
        summary_thousands(n as u64 - 1)
    )));
    let out = std::fs::read_to_string(dir.path().join("out.txt")).unwrap();
    assert_eq!(
        out,
        "Add your description here\nA different package entirely\n"
    );
}

/// `--method auto` takes the exact join for package names (a few shingles each: LSH's
/// K hashes and band records per document cost more than ranking them) and LSH for long
/// pages sharing a template; it says which and why, the run then shows that method's
/// stages, and its result equals the chosen method's own.
#[test]
fn method_auto_chooses_by_predicted_cost_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let names = dir.path().join("names.txt");
    let lines: Vec<String> = (0..3_000)
        .map(|i| {
            format!(
                "pkg-{}-{}",
                ["core", "utils", "client", "sdk"][i % 4],
                i / 3
            )
        })
        .collect();
    std::fs::write(&names, lines.join("\n")).unwrap();
    let pages = dir.path().join("pages.txt");
    let template: String = (0..400)
        .map(|i| format!("clause {i} of the terms "))
        .collect();
    let texts: Vec<String> = (0..600)
        .map(|i| format!("{template} listing {i} {}", "item ".repeat(i % 7)))
        .collect();
    std::fs::write(&pages, texts.join("\n")).unwrap();
    for (input, chosen, stage) in [
        (
            &names,
            "method    the exact join (auto: predicted ",
            "exact join ",
        ),
        (&pages, "method    LSH (auto: predicted ", "sketch    "),
    ] {
        let i = input.to_str().unwrap();
        let auto = neardup(&["clusters", i]);
        let summary = stderr(&auto);
        assert!(auto.status.success(), "{summary}");
        assert!(summary.contains(chosen), "{summary}");
        assert!(summary.contains(stage), "{summary}");
        let method = if stage == "sketch    " {
            "lsh"
        } else {
            "exact"
        };
        let forced = neardup(&["clusters", i, "--method", method]);
        assert_eq!(auto.stdout, forced.stdout, "{i}");
        assert!(!stderr(&forced).contains("method    "));
        // The choice is the same every run.
        assert_eq!(stdout(&neardup(&["clusters", i])), stdout(&auto));
    }
    // An LSH option given asks for LSH.
    let o = neardup(&[
        "pairs",
        names.to_str().unwrap(),
        "--bands",
        "4",
        "--rows",
        "2",
    ]);
    assert!(stderr(&o).contains("method    LSH (auto: --bands is an LSH option)"));
}

#[test]
fn keep_last_and_removed_list() {
    let dir = tempfile::tempdir().unwrap();
    let removed = dir.path().join("removed.jsonl");
    let out = dir.path().join("out.jsonl");
    let common = [
        "dedup",
        "cli/reviews.jsonl",
        "--text-field",
        "body",
        "--id-field",
        "review_id",
        "-q",
        "-o",
        out.to_str().unwrap(),
        "--removed",
        removed.to_str().unwrap(),
    ];
    let first = ok(&[&common[..], &["--keep", "first"]].concat());
    assert!(first.is_empty());
    let lines = json_lines(&std::fs::read_to_string(&removed).unwrap());
    let kept: Vec<Value> = json_lines(&std::fs::read_to_string(&out).unwrap());
    let kept_ids: Vec<u64> = kept
        .iter()
        .map(|k| k["review_id"].as_u64().unwrap())
        .collect();
    assert!(!lines.is_empty());
    for l in &lines {
        // Each removed record names a kept record, with a Jaccard ≥ t and its source.
        let of = l["duplicate_of"].as_u64().unwrap();
        assert!(kept_ids.contains(&of), "{l}");
        assert!(!kept_ids.contains(&l["id"].as_u64().unwrap()), "{l}");
        assert!(l["jaccard"].as_f64().unwrap() >= 0.8, "{l}");
        assert_eq!(l["source"], "cli/reviews.jsonl");
        let record: Value = serde_json::from_str(l["record"].as_str().unwrap()).unwrap();
        assert_eq!(record["review_id"], l["id"]);
    }
    // Kept + removed + skipped (104 empty, line 7 not JSON, 108 without a body) = every
    // line.
    let total = std::fs::read_to_string(testdata("cli/reviews.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(kept.len() + lines.len() + 3, total);
    // --keep last keeps the last of each cluster in input order.
    ok(&[&common[..], &["--keep", "last"]].concat());
    let last: Vec<Value> = json_lines(&std::fs::read_to_string(&removed).unwrap());
    for l in &last {
        let (id, of) = (
            l["id"].as_u64().unwrap(),
            l["duplicate_of"].as_u64().unwrap(),
        );
        assert!(id < of, "{id} removed for the later {of}");
    }
}

#[test]
fn dedup_tsv_with_quoted_titles_keeps_every_distinct_listing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("listings.tsv");
    std::fs::write(&input, QUOTED_TITLES_TSV).unwrap();
    let out = dir.path().join("out.tsv");
    let o = neardup(&[
        "dedup",
        input.to_str().unwrap(),
        "--text-columns",
        "title,description",
        "--id-column",
        "id",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let written = std::fs::read_to_string(&out).unwrap();
    // Only listing 5 (a copy of 1) is removed; the rest is written byte for byte.
    let expected: String = QUOTED_TITLES_TSV
        .split_inclusive('\n')
        .filter(|line| !line.starts_with("5\t"))
        .collect();
    assert_eq!(written, expected);
    let err = stderr(&o);
    assert!(
        err.contains("read 6 = kept 5 + removed 1 + skipped 0"),
        "{err}"
    );
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn keep_by_a_field_or_column_keeps_the_newest_or_cheapest() {
    let (dir, path) = temp_file(
        "listings.jsonl",
        concat!(
            "{\"id\": \"a\", \"ts\": 9, \"text\": \"Bright two bedroom flat near the park, balcony, new kitchen\"}\n",
            "{\"id\": \"b\", \"ts\": 10, \"text\": \"Bright two bedroom flat near the park, balcony, new kitchen!\"}\n",
            "{\"id\": \"c\", \"text\": \"Bright two bedroom flat near the park, balcony, new kitchen.\"}\n",
            "{\"id\": \"d\", \"ts\": 100, \"text\": \"Vintage road bike, steel frame, 54 cm, recently serviced\"}\n",
            "{\"id\": \"e\", \"ts\": 20, \"text\": \"Vintage road bike, steel frame, 54 cm, recently serviced!\"}\n",
        ),
    );
    let p = path.to_str().unwrap();
    let kept = |spec: &str| -> (Vec<String>, String) {
        let o = neardup(&["clusters", p, "--keep-by", spec]);
        assert!(o.status.success(), "{}", stderr(&o));
        let kept = json_lines(&stdout(&o))
            .iter()
            .filter(|l| l["kept"] == true)
            .map(|l| l["id"].as_str().unwrap().to_string())
            .collect();
        (kept, stderr(&o))
    };
    // Numbers compare as numbers (10 > 9 although "10" < "9" as text); c has no ts.
    let (newest, summary) = kept("ts:desc");
    assert_eq!(newest, ["b", "d"]);
    assert!(
        summary.contains("1 of 5 records has no \"ts\"; a cluster keeps it only when"),
        "{summary}"
    );
    assert_eq!(kept("ts:asc").0, ["a", "e"]);
    assert_eq!(kept("ts").0, ["a", "e"]);
    // A CSV column.
    let csv = dir.path().join("l.csv");
    std::fs::write(
        &csv,
        "id,price,text\nx,300,Vintage road bike steel frame 54 cm serviced\ny,250,Vintage road bike steel frame 54 cm serviced!\n",
    )
    .unwrap();
    let o = neardup(&[
        "clusters",
        csv.to_str().unwrap(),
        "--id-column",
        "id",
        "--keep-by",
        "price",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    assert_eq!(lines[0]["id"], "y");
    assert_eq!(lines[0]["kept"], true);
    // Nowhere to take it from: an error, not a silent first-kept.
    let o = neardup(&["clusters", p, "--keep-by", "date", "-q"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("\"date\"") && stderr(&o).contains("id, ts, text"),
        "{}",
        stderr(&o)
    );
    let o = neardup(&["clusters", "cli/stories.txt", "--keep-by", "date", "-q"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let o = neardup(&["clusters", csv.to_str().unwrap(), "--keep-by", "date", "-q"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
}
