//! Integration tests of the `neardup` binary: every subcommand and input kind.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// The repository's `testdata/` folder.
fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

/// The shipped listings, matched on two columns at t = 0.7.
const LISTINGS: &[&str] = &[
    "cli/listings.tsv",
    "--text-columns",
    "Title,Short Description",
    "--id-column",
    "id",
    "-t",
    "0.7",
];

/// Runs `neardup ARGS` with the test data folder as working directory.
fn neardup(args: &[&str]) -> Output {
    Command::cargo_bin("neardup")
        .unwrap()
        .current_dir(testdata(""))
        .args(args)
        .output()
        .unwrap()
}

/// Runs `neardup ARGS` with `input` on its standard input.
fn neardup_stdin(args: &[&str], input: impl Into<Vec<u8>>) -> Output {
    Command::cargo_bin("neardup")
        .unwrap()
        .args(args)
        .write_stdin(input.into())
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Runs and expects success, returning stdout.
fn ok(args: &[&str]) -> String {
    let o = neardup(args);
    assert!(
        o.status.success(),
        "neardup {args:?} failed: {}",
        stderr(&o)
    );
    stdout(&o)
}

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The summary with timings replaced, so it can be compared as a golden file.
fn summary_without_times(s: &str) -> String {
    s.lines()
        .map(|line| {
            // The peak memory varies from run to run like the times do.
            if line.starts_with("peak ") {
                return "peak      <memory>".to_string();
            }
            line.split(' ')
                .map(|w| {
                    let t = w.trim_end_matches(',');
                    let is_time = t.ends_with('s')
                        && t.len() > 1
                        && t[..t.len() - 1]
                            .chars()
                            .all(|c| c.is_ascii_digit() || c == '.');
                    if is_time {
                        "<time>"
                    } else {
                        w
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Parses "read N = kept K + removed R + skipped S" from a summary.
fn accounting(summary: &str) -> (u64, u64, u64, u64) {
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
    (nums[0], nums[1], nums[2], nums[3])
}

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
fn exact_verification_never_reports_a_pair_below_the_threshold() {
    for t in ["0.6", "0.8", "0.9"] {
        let out = ok(&["pairs", "pypi-summaries.jsonl", "-t", t, "-q"]);
        let t: f64 = t.parse().unwrap();
        let pairs = json_lines(&out);
        assert!(pairs.len() > 100, "too few pairs to mean anything at t={t}");
        for p in &pairs {
            assert!(p["jaccard"].as_f64().unwrap() >= t, "{p}");
        }
    }
}

#[test]
fn lsh_pairs_are_a_subset_of_the_exact_join() {
    let lsh = ok(&["pairs", "pypi-summaries.jsonl", "-q"]);
    let exact = ok(&["pairs", "pypi-summaries.jsonl", "--exact", "-q"]);
    let exact_lines: std::collections::HashSet<(String, String)> = json_lines(&exact)
        .iter()
        .map(|p| (p["a"].to_string(), p["b"].to_string()))
        .collect();
    let lsh_pairs = json_lines(&lsh);
    let found = lsh_pairs
        .iter()
        .filter(|p| exact_lines.contains(&(p["a"].to_string(), p["b"].to_string())))
        .count();
    assert_eq!(
        found,
        lsh_pairs.len(),
        "a verified LSH pair the exact join missed"
    );
    // S-curve at 0.8 is 0.947 and most pairs sit higher: recall must be high.
    assert!(
        found as f64 >= 0.95 * exact_lines.len() as f64,
        "{found} of {}",
        exact_lines.len()
    );
}

#[test]
fn output_is_identical_with_one_and_two_threads() {
    for cmd in ["pairs", "clusters"] {
        for extra in [&[][..], &["--exact"][..], &["--verify", "estimate"][..]] {
            let base = [cmd, "pypi-summaries.jsonl", "-q", "-t", "0.7"];
            let one = ok(&[&base[..], extra, &["--threads", "1"]].concat());
            let two = ok(&[&base[..], extra, &["--threads", "2"]].concat());
            assert!(!one.is_empty());
            assert_eq!(one, two, "{cmd} {extra:?}");
        }
    }
}

#[test]
fn verify_modes_differ_as_documented() {
    let exact = json_lines(&ok(&["pairs", "pypi-summaries.jsonl", "-q"]));
    let estimate = json_lines(&ok(&[
        "pairs",
        "pypi-summaries.jsonl",
        "-q",
        "--verify",
        "estimate",
    ]));
    let none = json_lines(&ok(&[
        "pairs",
        "pypi-summaries.jsonl",
        "-q",
        "--verify",
        "none",
    ]));
    assert!(none.len() >= exact.len() && none.len() >= estimate.len());
    assert!(estimate
        .iter()
        .all(|p| p["jaccard"].is_null() && p["estimate"].as_f64().unwrap() >= 0.8));
    assert!(exact.iter().all(|p| p["jaccard"].as_f64().is_some()));
}

#[test]
fn sim_gives_exact_jaccard_and_estimate() {
    let out = ok(&[
        "sim",
        "the quick brown fox",
        "the quick brown fox!",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    // "the quick brown fox" has 15 char 5-grams; the "!" adds one: 15 / 16.
    assert_eq!(v["shingles_a"], 15);
    assert_eq!(v["shingles_b"], 16);
    assert_eq!(v["shared"], 15);
    assert_eq!(v["jaccard"].as_f64().unwrap(), 15.0 / 16.0);
    assert!((v["estimate"].as_f64().unwrap() - 0.9375).abs() < 0.15);
    assert_eq!(v["similar"], true);
    let text = ok(&[
        "sim",
        "cli/articles/sports/final.txt",
        "cli/articles/sports/final-wire.txt",
    ]);
    assert!(text.starts_with("jaccard   0.9192"), "{text}");
    assert!(text.contains("near-duplicates at threshold 0.8"));
}

#[test]
fn multiset_counts_repeated_shingles_in_every_command() {
    let sim = |extra: &[&str]| -> f64 {
        let args = [
            &[
                "sim",
                "buy now buy now buy now",
                "buy now",
                "--shingle",
                "word:1",
                "--json",
            ][..],
            extra,
        ]
        .concat();
        let v: Value = serde_json::from_str(&ok(&args)).unwrap();
        v["jaccard"].as_f64().unwrap()
    };
    // As sets the texts are equal; as multisets: (1 + 1) / (3 + 3).
    assert_eq!(sim(&[]), 1.0);
    // Printed to six decimals.
    assert!((sim(&["--multiset"]) - 2.0 / 6.0).abs() < 1e-6);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("spam.jsonl");
    std::fs::write(
        &input,
        "{\"id\": \"a\", \"text\": \"great phone, fast shipping\"}\n\
         {\"id\": \"b\", \"text\": \"great phone, fast shipping great phone, fast shipping\"}\n",
    )
    .unwrap();
    let p = input.to_str().unwrap();
    assert_eq!(json_lines(&ok(&["pairs", p, "-q"])).len(), 1);
    assert_eq!(json_lines(&ok(&["pairs", p, "-q", "--multiset"])).len(), 0);
    let pairs = json_lines(&ok(&["pairs", p, "-q", "--multiset", "-t", "0.4"]));
    let j = pairs[0]["jaccard"].as_f64().unwrap();
    assert!((0.4..0.55).contains(&j), "{j}");
    // Its report says the similarities are weighted.
    let report = dir.path().join("multiset.html");
    let r = report.to_str().unwrap();
    ok(&["pairs", p, "-q", "--multiset", "-t", "0.4", "--report", r]);
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("repeated shingles counted (weighted Jaccard)"));
    assert!(html.contains("Verified pairs by weighted Jaccard"));
    // An index pins it: a query that asks otherwise is refused.
    let index = dir.path().join("index");
    let ix = index.to_str().unwrap();
    ok(&["index", "build", ix, p, "-q"]);
    refused(
        &["index", "query", ix, p, "--multiset", "-q"],
        &["multiset: the index has false, asked for true"],
    );
}

#[test]
fn an_index_built_for_containment_answers_fragments_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("pages.jsonl");
    let brief =
        "Markets closed higher on Friday after a quiet week of trading in London and Frankfurt.";
    std::fs::write(
        &pages,
        format!(
            "{{\"id\":\"digest\",\"text\":\"Weather: rain all weekend, clearing on Monday. {brief} Sport: the cup final ends in a draw.\"}}\n\
             {{\"id\":\"bakery\",\"text\":\"A new bakery opens on the high street, selling sourdough every morning.\"}}\n"
        ),
    )
    .unwrap();
    let queries = dir.path().join("queries.jsonl");
    std::fs::write(
        &queries,
        format!(
            "{{\"id\":\"q-brief\",\"text\":\"{brief}\"}}\n\
             {{\"id\":\"q-long\",\"text\":\"Today: a new bakery opens on the high street, selling sourdough every morning. And more news.\"}}\n"
        ),
    )
    .unwrap();
    let index = dir.path().join("index");
    let (ix, p, q) = (
        index.to_str().unwrap(),
        pages.to_str().unwrap(),
        queries.to_str().unwrap(),
    );
    let o = neardup(&[
        "index",
        "build",
        ix,
        p,
        "--measure",
        "containment",
        "-t",
        "0.8",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "containment tables of 1, 2, 4, 8 rows (240 bands), containment threshold 0.8, \
             0 common tokens"
        ),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o)
            .contains("learned its common tokens from 2 distinct documents (fewer than 1,600)"),
        "{}",
        stderr(&o)
    );
    let answers = json_lines(&ok(&[
        "index",
        "query",
        ix,
        q,
        "-q",
        "--measure",
        "containment",
    ]));
    let first = |i: usize| answers[i]["neighbours"][0].clone();
    // The brief is inside the digest, whole; the bakery page is inside the longer query.
    assert_eq!(
        (
            first(0)["id"].clone(),
            first(0)["inside"].clone(),
            first(0)["containment"].clone()
        ),
        (
            Value::from("digest"),
            Value::from("query"),
            Value::from(1.0)
        )
    );
    assert!(first(0)["jaccard"].as_f64().unwrap() < 0.6, "{answers:?}");
    assert_eq!(
        (first(1)["id"].clone(), first(1)["inside"].clone()),
        (Value::from("bakery"), Value::from("document"))
    );
    assert!(first(1)["containment"].as_f64().unwrap() >= 0.8);
    assert!(ok(&["index", "stats", ix]).contains("containment threshold 0.8"));
    refused(
        &["index", "query", ix, q, "--measure", "jaccard", "-q"],
        &["measure: the index has containment, asked for jaccard"],
    );
    refused(
        &["index", "add", ix, q, "--dedup", "-q"],
        &["does not apply to a containment index"],
    );
    let other = dir.path().join("other");
    refused(
        &[
            "index",
            "build",
            other.to_str().unwrap(),
            p,
            "--measure",
            "containment",
            "--bands",
            "16",
            "--rows",
            "8",
        ],
        &["--bands/--rows do not apply to --measure containment"],
    );
}

#[test]
fn simhash_finds_pairs_within_the_distance_in_every_command() {
    let case =
        "Two bedroom apartment near the central station, balcony, bright kitchen, available from";
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("listings.jsonl");
    let lines: Vec<String> = [
        format!("{case} March"),
        format!("{case} April"),
        format!("{case} March").replace("apartment", "apartmnet"),
    ]
    .iter()
    .enumerate()
    .map(|(i, t)| format!("{{\"id\":{i},\"text\":\"{t}\"}}\n"))
    .collect();
    std::fs::write(&input, lines.concat()).unwrap();
    let p = input.to_str().unwrap();
    let sim = ["--sketch", "simhash", "-t", "0.6"];
    // The fingerprints are 8 (0-1), 5 (0-2) and 7 (1-2) bits apart.
    let found = |k: &str, verify: &str| -> Vec<(u64, u64, u64)> {
        let args = [
            &["pairs", p, "-q", "--hamming", k, "--verify", verify][..],
            &sim,
        ]
        .concat();
        json_lines(&ok(&args))
            .iter()
            .map(|v| {
                let n = |f: &str| v[f].as_u64().unwrap();
                (n("a"), n("b"), n("hamming"))
            })
            .collect()
    };
    assert_eq!(found("4", "exact"), []);
    assert_eq!(found("5", "exact"), [(0, 2, 5)]);
    assert_eq!(found("7", "exact"), [(0, 2, 5), (1, 2, 7)]);
    assert_eq!(found("8", "none"), [(0, 1, 8), (0, 2, 5), (1, 2, 7)]);
    // Verified pairs carry their Jaccard; unverified ones only their distance.
    let verified = json_lines(&ok(
        &[&["pairs", p, "-q", "--hamming", "7"][..], &sim].concat()
    ));
    assert!(verified
        .iter()
        .all(|v| v["jaccard"].as_f64().unwrap() >= 0.6));
    let raw = json_lines(&ok(
        &[&["pairs", p, "-q", "--verify", "none"][..], &sim].concat()
    ));
    assert!(raw.iter().all(|v| v.get("jaccard").is_none()));
    // TSV has the distance as its last column.
    let tsv = ok(&[
        &["pairs", p, "-q", "--hamming", "5", "--output-format", "tsv"][..],
        &sim,
    ]
    .concat());
    assert_eq!(
        tsv,
        "a\tb\tjaccard\testimate\ttruncated\thamming\n0\t2\t0.873684\t\tfalse\t5\n"
    );
    // Clusters check each member against the kept document: 1 is 8 bits from 0.
    let clusters = json_lines(&ok(
        &[&["clusters", p, "-q", "--hamming", "7"][..], &sim].concat()
    ));
    let members: Vec<(u64, Option<u64>)> = clusters
        .iter()
        .map(|v| (v["id"].as_u64().unwrap(), v["hamming"].as_u64()))
        .collect();
    assert_eq!(members, [(0, None), (2, Some(5))]);
    // The report shows SimHash's curve and the distances of what it found.
    let report = dir.path().join("report.html");
    let r = report.to_str().unwrap();
    ok(&[
        &["pairs", p, "-q", "--hamming", "7", "--report", r][..],
        &sim,
    ]
    .concat());
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("SimHash plan and candidate curve"));
    assert!(html.contains("1 pair 5 bits apart") && html.contains("1 pair 7 bits apart"));
    // The summary says how candidates were found.
    let o = neardup(&[&["pairs", p, "--hamming", "7"][..], &sim].concat());
    let err = stderr(&o);
    assert!(err.contains("method    SimHash"), "{err}");
    assert!(
        err.contains("candidates within 7 bits by permuted tables, verify exact"),
        "{err}"
    );
    // eval names the method and measures it against the exact join.
    let eval = ok(&[&["eval", p, "-q", "--hamming", "7"][..], &sim].concat());
    assert!(
        eval.contains("SimHash recall 0.6667, precision 1.0000"),
        "{eval}"
    );
    // sim gives the distance.
    let a = format!("{case} March");
    let b = format!("{case} April");
    let v: Value = serde_json::from_str(&ok(&["sim", &a, &b, "--json"])).unwrap();
    assert_eq!(v["hamming"].as_u64(), Some(8));
    // What SimHash does not do is refused, before any work.
    refused(
        &["pairs", p, "--hamming", "3"],
        &["--hamming", "--sketch simhash"],
    );
    refused(
        &[&["pairs", p, "--bands", "4", "--rows", "8"][..], &sim].concat(),
        &["bands and rows: MinHash sketches only"],
    );
    refused(
        &[&["pairs", p, "--verify", "triage"][..], &sim].concat(),
        &["--verify triage: MinHash sketches only"],
    );
    refused(
        &[&["pairs", p, "--method", "exact"][..], &sim].concat(),
        &["--sketch is an LSH option"],
    );
    refused(
        &[&["pairs", p, "--num-perm", "64"][..], &sim].concat(),
        &["one 64-bit fingerprint"],
    );
    refused(
        &[&["clusters", p, "--no-neighbours"][..], &sim].concat(),
        &["no pairs beyond"],
    );
    refused(
        &["plan", p, "--sketch", "simhash"],
        &["neardup eval --sketch simhash"],
    );
    let plan = ok(&["plan", "--sketch", "simhash", "--hamming", "6"]);
    assert!(plan.contains("s = 0.8   0.130 (threshold)"), "{plan}");
    refused(
        &[&["pairs", p, "--memory", "1K"][..], &sim].concat(),
        &["a simhash run holds every set in memory"],
    );
    let index = dir.path().join("index");
    let o = neardup(&[
        "index",
        "build",
        index.to_str().unwrap(),
        p,
        "--sketch",
        "simhash",
        "-q",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("an index: MinHash sketches only"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn containment_finds_fragments_inside_longer_documents() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("news.jsonl");
    let brief =
        "Markets closed higher on Friday after a quiet week of trading in London and Frankfurt.";
    let lines = [
        ("digest", format!("Weather: rain all weekend, clearing on Monday with highs of twelve degrees. {brief} Sport: the cup final ends in a draw after extra time, replay next Sunday.")),
        ("brief", brief.to_string()),
        ("edited", brief.replace(" and ", " & ").replace('.', "")),
        ("other", "A new bakery opens on the high street, selling sourdough and pastries every morning.".to_string()),
    ];
    let text: String = lines
        .iter()
        .map(|(id, t)| format!("{{\"id\":\"{id}\",\"text\":\"{t}\"}}\n"))
        .collect();
    std::fs::write(&input, text).unwrap();
    let p = input.to_str().unwrap();
    let run = |extra: &[&str]| -> Vec<(String, String, f64, f64)> {
        let args = [
            &["pairs", p, "-q", "--measure", "containment", "-t", "0.8"][..],
            extra,
        ]
        .concat();
        json_lines(&ok(&args))
            .iter()
            .map(|v| {
                let s = |f: &str| v[f].as_str().unwrap().to_string();
                (
                    s("a"),
                    s("b"),
                    v["containment"].as_f64().unwrap(),
                    v["jaccard"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let found = run(&[]);
    assert_eq!(
        found,
        run(&["--method", "exact"]),
        "the search finds what the exact join finds"
    );
    let names: Vec<(&str, &str)> = found
        .iter()
        .map(|(a, b, _, _)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("brief", "digest"),
            ("edited", "digest"),
            ("edited", "brief")
        ]
    );
    // The brief is wholly inside the digest, where Jaccard sees a third of it.
    assert_eq!(found[0].2, 1.0);
    assert!(found[0].3 < 0.4, "{found:?}");
    // Jaccard at the same threshold finds only the edited brief.
    assert_eq!(json_lines(&ok(&["pairs", p, "-q", "-t", "0.8"])).len(), 1);
    // The report holds the run's pairs, for the search and for the exact join.
    let below = found.iter().filter(|f| f.3 < 0.8).count();
    assert_eq!(below, 2, "{found:?}");
    for (method, plan) in [
        ("lsh", "rows per band"),
        ("exact", "Exact containment join"),
    ] {
        let report = dir.path().join(format!("containment-{method}.html"));
        let r = report.to_str().unwrap();
        let pairs = run(&["--report", r, "--method", method]);
        assert_eq!(pairs, found);
        let html = std::fs::read_to_string(&report).unwrap();
        assert!(html.contains(plan), "{method}");
        for needle in [
            format!("<b>{}</b><span>pairs</span>", found.len()),
            format!("The {} reported pairs by their containment", found.len()),
            format!("<b>{below}</b> of them have a Jaccard below 0.8"),
            // The first pair shown is the least contained; the brief inside the digest
            // is among them, with its Jaccard as the output gives it.
            format!(
                "containment 1.000 · Jaccard {:.3}</span> <code class=\"nw\">brief</code> in \
                 <code class=\"nw\">digest</code>",
                found[0].3
            ),
        ] {
            assert!(html.contains(&needle), "{method}: {needle}");
        }
        assert_eq!(html.matches("class=\"pair\"").count(), found.len());
        assert!(!html.contains("id=\"similarities\""));
    }
    // TSV.
    let tsv = ok(&[
        "pairs",
        p,
        "-q",
        "--measure",
        "containment",
        "-t",
        "0.8",
        "--output-format",
        "tsv",
    ]);
    assert!(
        tsv.starts_with("a\tb\tcontainment\tjaccard\nbrief\tdigest\t1.0\t"),
        "{tsv}"
    );
    // The summary names the method; eval measures it; plan shows the partitions.
    let o = neardup(&["pairs", p, "--measure", "containment", "-t", "0.8"]);
    assert!(
        stderr(&o).contains("method    LSH Ensemble"),
        "{}",
        stderr(&o)
    );
    let eval = ok(&["eval", p, "-q", "--measure", "containment", "-t", "0.8"]);
    assert!(
        eval.contains("LSH Ensemble recall 1.0000, precision 1.0000"),
        "{eval}"
    );
    assert!(eval.contains("recall by exact containment"), "{eval}");
    // Its report: the evaluation beside the run's containment page.
    let report = dir.path().join("eval-containment.html");
    let r = report.to_str().unwrap();
    ok(&[
        "eval",
        p,
        "-q",
        "--measure",
        "containment",
        "-t",
        "0.8",
        "--report",
        r,
    ]);
    let html = std::fs::read_to_string(&report).unwrap();
    for needle in [
        "id=\"eval\"",
        "<th scope=\"row\">LSH recall</th><td class=\"num\">1.0000</td>",
        "rows per band",
        &format!("The {} reported pairs by their containment", found.len()),
    ] {
        assert!(html.contains(needle), "eval report: {needle}");
    }
    // --missed names the containment it judged; a cut document is said to be cut.
    let missed = dir.path().join("missed.jsonl");
    let m = missed.to_str().unwrap();
    let args = [
        "eval",
        p,
        "-q",
        "--measure",
        "containment",
        "-t",
        "0.95",
        "--missed",
        m,
    ];
    ok(&[&args[..], &["--num-perm", "1"]].concat());
    // One permutation misses the brief inside the digest (containment 1).
    let missed_lines = json_lines(&std::fs::read_to_string(&missed).unwrap());
    assert!(!missed_lines.is_empty());
    for line in missed_lines {
        assert!(line.get("jaccard").is_none() && line["containment"].as_f64().unwrap() >= 0.95);
    }
    let o = neardup(&[
        "pairs",
        p,
        "--measure",
        "containment",
        "--max-shingles",
        "40",
    ]);
    assert!(stderr(&o).contains("their containment is of their first 40 shingles only"));
    let plan = ok(&["plan", p, "--measure", "containment", "-t", "0.8"]);
    assert!(
        plan.contains("On the sample: 3 pairs contained at 0.8, 3 found"),
        "{plan}"
    );
    assert!(plan.contains("partition "), "{plan}");
    // sim gives the containment of the smaller text and judges on it.
    let digest = &lines[0].1;
    let v: Value = serde_json::from_str(&ok(&[
        "sim",
        brief,
        digest,
        "--json",
        "--measure",
        "containment",
    ]))
    .unwrap();
    assert_eq!(v["containment"].as_f64(), Some(1.0));
    assert_eq!(v["similar"], true);
    assert!(v["candidate_probability"].as_f64().unwrap() > 0.99);
    let v: Value = serde_json::from_str(&ok(&["sim", brief, digest, "--json"])).unwrap();
    assert_eq!(v["similar"], false, "as Jaccard they are a third alike");
    // What it does not do is refused before any work.
    let refused_with = |args: &[&str], needle: &str| {
        let args = [args, &["--measure", "containment"][..]].concat();
        refused(&args, &[needle]);
    };
    refused_with(&["clusters", p], "is for pairs, eval and plan");
    refused_with(
        &["dedup", p, "-o", "/dev/null"],
        "is for pairs, eval and plan",
    );
    refused_with(
        &["pairs", p, "--sketch", "simhash"],
        "--sketch simhash has none",
    );
    refused_with(
        &["pairs", p, "--bands", "4", "--rows", "8"],
        "chosen for each size partition",
    );
    refused_with(
        &["plan", "--bands", "4", "--rows", "8"],
        "chosen for each size partition",
    );
    refused_with(
        &["eval", p, "--no-neighbours"],
        "no steps beyond the buckets",
    );
    refused_with(
        &["pairs", p, "--verify", "none"],
        "verifies every candidate exactly",
    );
    refused_with(
        &["pairs", p, "--memory", "1K"],
        "a containment run holds every set in memory",
    );
}

#[test]
fn eval_compares_lsh_with_the_exact_join() {
    let o = neardup(&["eval", "pypi-summaries.jsonl"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let exact_pairs = json_lines(&ok(&["pairs", "pypi-summaries.jsonl", "--exact", "-q"])).len();
    let lsh_pairs = json_lines(&ok(&["pairs", "pypi-summaries.jsonl", "-q"])).len();
    let row = |name: &str| -> u64 {
        let line = out.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace()
            .last()
            .unwrap()
            .replace(',', "")
            .parse()
            .unwrap()
    };
    assert_eq!(row("exact") as usize, exact_pairs);
    assert_eq!(row("lsh") as usize, lsh_pairs);
    assert_eq!(
        row("both") as usize,
        lsh_pairs,
        "every verified LSH pair is a true pair"
    );
    let recall = lsh_pairs as f64 / exact_pairs as f64;
    assert!(
        out.contains(&format!("LSH recall {recall:.4}, precision 1.0000")),
        "{out}"
    );
    assert!(out.contains("recall by exact similarity"));
}

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
fn word_shingles_and_no_normalize_change_what_matches() {
    let words = json_lines(&ok(&[
        "pairs",
        "cli/stories.txt",
        "--shingle",
        "word:2",
        "-t",
        "0.7",
        "-q",
    ]));
    assert_eq!(words.len(), 2);
    // Without normalization, case and spacing count.
    let sim = |extra: &[&str]| -> f64 {
        let out = ok(&[
            &["sim", "HELLO   World", "hello world", "--json"][..],
            extra,
        ]
        .concat());
        serde_json::from_str::<Value>(&out).unwrap()["jaccard"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(sim(&[]), 1.0);
    assert_eq!(sim(&["--no-normalize"]), 0.0);
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

#[test]
fn report_shows_parameters_counts_and_a_known_pair() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    ok(&[
        &["clusters"][..],
        LISTINGS,
        &["-q", "--report", html.to_str().unwrap()],
    ]
    .concat());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") || page.starts_with("<!doctype html>"));
    assert!(page.contains("21 x 6"), "the band plan chosen for t = 0.7");
    // Counts: 8 records, 3 clusters, 3 removed, 5 kept.
    for (label, n) in [
        ("records read", 8),
        ("clusters", 3),
        ("removed", 3),
        ("kept", 5),
    ] {
        let card = format!("<div class=\"card\"><b>{n}</b><span>{label}</span></div>");
        assert!(page.contains(&card), "no card {card}");
    }
    // L3 duplicates L1 at Jaccard 0.820513: shown side by side with its similarity.
    assert!(page.contains("L3") && page.contains("L1") && page.contains("0.821"));
    // Self-contained: nothing is fetched (the SVG namespace URI is a name, not a load).
    for load in ["src=\"http", "href=\"http", "@import", "url(http"] {
        assert!(!page.contains(load), "the report loads {load}");
    }
}

#[test]
fn eval_scores_against_labels() {
    // Found: s1~s3, s2~s5. Labelled: those and s4~s6. Precision 1, recall 2/3, F1 0.8.
    // ARI by hand: predicted {s1,s3}{s2,s5}{s4}{s6}, labelled {s1,s3}{s2,s5}{s4,s6}, n = 6:
    // Σ C(n_ij,2) = 2, Σ C(a_i,2) = 2, Σ C(b_j,2) = 3, C(6,2) = 15, expected = 2·3/15 = 0.4,
    // max = (2+3)/2 = 2.5, ARI = (2 − 0.4)/(2.5 − 0.4) = 0.7619.
    let labels = |file: &str| -> Value {
        let out = ok(&["eval", "cli/stories.txt", "--labels", file, "--json", "-q"]);
        let v: Value = serde_json::from_str(&out).unwrap();
        v["labels"].clone()
    };
    let plain = labels("cli/stories-labels.jsonl");
    assert_eq!(plain["ids"], 6);
    let lsh = &plain["methods"][0];
    assert_eq!(lsh["method"], "lsh");
    assert_eq!(lsh["precision"], 1.0);
    assert!((lsh["recall"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
    assert!((lsh["f1"].as_f64().unwrap() - 0.8).abs() < 1e-12);
    let ari = lsh["adjusted_rand_index"].as_f64().unwrap();
    assert!((ari - 1.6 / 2.1).abs() < 1e-12, "{ari}");
    // The same labels gzip-compressed are read by the same reader (`.gz` stripped).
    let mut gz = labels("cli/stories-labels.jsonl.gz");
    gz["file"] = plain["file"].clone();
    assert_eq!(gz, plain);
    // The table shows the same figures.
    let out = ok(&[
        "eval",
        "cli/stories.txt",
        "--labels",
        "cli/stories-labels.jsonl",
        "-q",
    ]);
    assert!(
        out.contains("lsh         1.0000   0.6667   0.8000   0.7619"),
        "{out}"
    );
}

#[test]
fn plan_prints_s_curves_and_estimates_from_a_sample() {
    let out = ok(&["plan"]);
    assert!(
        out.contains("16 × 8 (chosen)") && out.contains("9 × 13 (integral)"),
        "{out}"
    );
    assert!(
        out.contains("recall at t = 0.8                 0.947"),
        "{out}"
    );
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("s.svg");
    let out = ok(&[
        "plan",
        "pypi-summaries.jsonl",
        "--sample",
        "1000",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.contains("From a uniform sample of 1000 of the 5,000 documents read"),
        "{out}"
    );
    for word in ["candidates", "similar", "missed", "memory", "time"] {
        assert!(
            out.lines().any(|l| l.starts_with(word)),
            "no {word} line: {out}"
        );
    }
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains("<svg") && svg.contains("Jaccard"));
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

#[test]
fn huge_documents_are_capped_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.txt");
    let long: String = (0..50_000).map(|i| format!("w{i} ")).collect();
    std::fs::write(&path, format!("{long}\n{long}tail\nshort line\n")).unwrap();
    let o = neardup(&["pairs", path.to_str().unwrap(), "--max-shingles", "1000"]);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("truncated 2 documents, 1 pair reported by estimate"),
        "{}",
        stderr(&o)
    );
    // Their first 1000 shingles are the same, but that is not the documents' Jaccard: the
    // pair is reported by the whole documents' estimate, never as an exact 1.0 (issue 10).
    let pairs = json_lines(&stdout(&o));
    assert_eq!(pairs.len(), 1);
    assert!(pairs[0]["jaccard"].is_null());
    assert_eq!(pairs[0]["truncated"], true);
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

fn summary_thousands(n: u64) -> String {
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

/// A reader that stops early (like `head -1`) ends the run quietly and successfully.
#[test]
fn a_closed_stdout_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::{Command as Std, Stdio};
    let mut child = Std::new(assert_cmd::cargo::cargo_bin("neardup"))
        .current_dir(testdata(""))
        .args(["pairs", "pypi-summaries.jsonl", "-t", "0.5", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take()); // the reader goes away after one line
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    assert!(first.starts_with(b"{\"a\":"));
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
fn tsv_output_holds_the_same_pairs_and_clusters_as_jsonl() {
    let args = ["cli/stories.txt", "-q"];
    for mode in ["pairs", "clusters"] {
        let json = ok(&[&[mode][..], &args].concat());
        let tsv = ok(&[&[mode][..], &args, &["--output-format", "tsv"]].concat());
        let mut lines = tsv.lines();
        let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
        let objects = json_lines(&json);
        assert!(!objects.is_empty());
        assert_eq!(rows.len(), objects.len(), "{mode}: one row per JSON line");
        for (row, obj) in rows.iter().zip(&objects) {
            assert_eq!(row.len(), header.len());
            for (name, field) in header.iter().zip(row) {
                let expected = match &obj[name] {
                    // JSON names `truncated` only when true.
                    Value::Null if *name == "truncated" => "false".to_string(),
                    Value::Null => String::new(),
                    Value::String(s) => s.clone(),
                    v => v.to_string(),
                };
                assert_eq!(*field, expected, "{mode}: column {name}");
            }
        }
    }
    // Ids with tabs, line breaks or backslashes are escaped, one row per pair.
    let jsonl = "{\"id\":\"a\\tb\",\"text\":\"the same words twice over\"}\n\
                 {\"id\":\"c\\\\d\\ne\",\"text\":\"the same words twice over\"}\n";
    let o = neardup_stdin(&["pairs", "-", "-q", "--output-format", "tsv"], jsonl);
    assert_eq!(
        stdout(&o),
        "a\tb\tjaccard\testimate\ttruncated\na\\tb\tc\\\\d\\ne\t1.0\t\tfalse\n"
    );
    // dedup writes the input's own format: the option is a usage error there.
    let o = neardup(&["dedup", "cli/stories.txt", "--output-format", "tsv"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--output-format"));
}

// ---- options, outputs, eval and keep policies (issue 9) ----

/// Writes `content` to `name` in a new temporary folder; returns both.
fn temp_file(name: &str, content: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, content).unwrap();
    (dir, path)
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
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

/// The options `neardup COMMAND --help` lists, one per line (`-o, --output`), without
/// their help: a change to what a command offers shows in its golden file.
fn options_listed(command: &str) -> String {
    let help = ok(&[command, "--help"]);
    help.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("--") || (l.starts_with('-') && l.get(2..4) == Some(", ")))
        .map(|l| l.split("  ").next().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n")
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

/// A FIFO nobody writes to: a command that opens it to read blocks for ever, so one that
/// returns has read nothing from it.
#[cfg(unix)]
fn silent_fifo(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap();
    assert!(made.success());
    path
}

/// Runs `neardup ARGS`, killed after a minute (a safety net: a refusal made before
/// reading returns at once, one made after reading a silent FIFO never does).
#[cfg(unix)]
fn neardup_or_hang(args: &[&str]) -> Output {
    let o = Command::cargo_bin("neardup")
        .unwrap()
        .current_dir(testdata(""))
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(o.status.code().is_some(), "{args:?} read the FIFO: killed");
    o
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
fn sim_refuses_a_missing_file_and_text_forces_text() {
    let o = neardup(&["sim", "cli/missing.txt", "some text"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("--text"), "{}", stderr(&o));
    let o = neardup(&["sim", "data/x", "some text"]);
    assert_eq!(code(&o), 2);
    let j = |args: &[&str]| -> f64 {
        let v: Value = serde_json::from_str(&ok(&[&["sim", "--json"], args].concat())).unwrap();
        v["jaccard"].as_f64().unwrap()
    };
    assert_eq!(j(&["--text", "cli/missing.txt", "cli/missing.txt"]), 1.0);
    // A sentence with a full stop or a slash and spaces is text.
    assert_eq!(j(&["red and/or blue.", "red and/or blue."]), 1.0);
}

#[test]
fn eval_reports_unknown_labels_missed_pairs_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let labels = dir.path().join("labels.jsonl");
    std::fs::write(
        &labels,
        "{\"a\": \"s1\", \"b\": \"s3\"}\n{\"a\": \"s4\", \"b\": \"s6\"}\n{\"a\": \"s1\", \"b\": \"zz9\"}\n",
    )
    .unwrap();
    let l = labels.to_str().unwrap();
    let o = neardup(&["eval", "cli/stories.txt", "--labels", l, "-q"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 of the 5 ids") && stderr(&o).contains("zz9"),
        "{}",
        stderr(&o)
    );
    let missed = dir.path().join("missed.jsonl");
    let out = ok(&[
        "eval",
        "cli/stories.txt",
        "--labels",
        l,
        "--allow-unknown-labels",
        "--missed",
        missed.to_str().unwrap(),
        "--json",
        "-q",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["labels"]["unknown_ids"], 1);
    assert_eq!(v["labels"]["ids"], 5);
    assert_eq!(v["exact"]["pairs"], 2);
    assert_eq!(v["recall"], 1.0);
    let lsh = &v["labels"]["methods"][0];
    assert_eq!(lsh["method"], "lsh");
    // Found s1~s3 and s2~s5; labelled s1~s3, s4~s6, s1~zz9: precision 1/2, recall 1/3.
    assert_eq!(lsh["precision"], 0.5);
    assert!((lsh["recall"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
    let lines = json_lines(&std::fs::read_to_string(&missed).unwrap());
    let of = |kind: &str, method: &str| -> Vec<(String, String, Option<f64>)> {
        lines
            .iter()
            .filter(|x| x["kind"] == kind && x["method"] == method)
            .map(|x| {
                (
                    x["a"].as_str().unwrap().to_string(),
                    x["b"].as_str().unwrap().to_string(),
                    x["jaccard"].as_f64(),
                )
            })
            .collect()
    };
    assert!(of("missed_by_lsh", "lsh").is_empty());
    let missed_lsh = of("missed_label", "lsh");
    assert_eq!(missed_lsh.len(), 2, "{lines:?}");
    assert_eq!(missed_lsh[0].0, "s1");
    assert_eq!(missed_lsh[0].1, "zz9");
    assert_eq!(missed_lsh[0].2, None, "an unknown id has no Jaccard");
    assert_eq!(
        (missed_lsh[1].0.as_str(), missed_lsh[1].1.as_str()),
        ("s4", "s6")
    );
    let j = missed_lsh[1].2.unwrap();
    assert!(j > 0.0 && j < 0.8, "{j}");
    let false_lsh = of("false_pair", "lsh");
    assert_eq!(false_lsh.len(), 1);
    assert_eq!(
        (false_lsh[0].0.as_str(), false_lsh[0].1.as_str()),
        ("s2", "s5")
    );
    assert!(false_lsh[0].2.unwrap() >= 0.8);
}

#[test]
fn eval_never_prints_negative_zero() {
    let (_d, path) = temp_file("distinct.txt", "red bike for sale\nblue car, like new\n");
    let out = ok(&["eval", path.to_str().unwrap(), "-q"]);
    assert!(!out.contains("-0.0"), "{out}");
    assert!(out.contains("expected 0.0000"), "{out}");
}

#[test]
fn plan_explains_bands_by_rows_in_words() {
    let out = ok(&["plan"]);
    assert!(out.contains("16 × 8 is 16 bands of 8 rows"), "{out}");
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

// ---- input formats (issue 9) ----

/// Listings whose titles start with a quote: TSV has no quoting, so every row is a
/// listing (the CSV parser had merged 18 rows into one and dropped the rest of the file).
const QUOTED_TITLES_TSV: &str = "id\ttitle\tdescription\tprice\n\
    1\t\"Bilocale\" luminoso\tDue camere con balcone, cucina abitabile, vicino alla metro\t900\n\
    2\tTrilocale con \"vista\" mare\tTre camere, terrazzo sul mare, garage e cantina inclusi\t1200\n\
    3\t\"Monolocale arredato\tUn ambiente con angolo cottura, arredato, ideale per studenti\t500\n\
    4\tAttico \"panoramico\"\tUltimo piano con terrazza panoramica e ascensore privato\t2000\n\
    5\t\"Bilocale\" luminoso\tDue camere con balcone, cucina abitabile, vicino alla metro!\t910\n\
    6\tBox auto\tPosto auto coperto in garage condominiale, accesso con telecomando\t100\n";

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

// ---- unicode (issue 9) ----

/// `sim A B --json` with extra options: the exact Jaccard.
fn unicode_sim(a: &str, b: &str, extra: &[&str]) -> f64 {
    let out = ok(&[&["sim", a, b, "--json"][..], extra].concat());
    serde_json::from_str::<Value>(&out).unwrap()["jaccard"]
        .as_f64()
        .unwrap()
}

#[test]
fn sim_of_nfd_and_full_width_text_is_one() {
    let nfc = "Perché è così città più";
    let nfd = "Perche\u{301} e\u{300} cosi\u{300} citta\u{300} piu\u{300}";
    assert_eq!(unicode_sim(nfc, nfd, &[]), 1.0);
    assert_eq!(unicode_sim("ＡＩ技術１２３％", "AI技術123%", &[]), 1.0);
    assert_eq!(
        unicode_sim("ＡＩ技術１２３％", "AI技術123%", &["--shingle", "word:2"]),
        1.0
    );
    // basic is the old behaviour; none and --no-normalize keep everything.
    assert!(unicode_sim(nfc, nfd, &["--normalize", "basic"]) < 0.5);
    assert!(unicode_sim("ＡＩ技術１２３％", "AI技術123%", &["--normalize", "none"]) < 0.5);
    assert!(unicode_sim("ＡＩ技術１２３％", "AI技術123%", &["--no-normalize"]) < 0.5);
    // aggressive folds accents and removes punctuation.
    let plain = "Perche e cosi citta piu";
    assert!(unicode_sim(nfc, plain, &[]) < 1.0);
    assert_eq!(
        unicode_sim(
            "«Perché», è così città più!",
            plain,
            &["--normalize", "aggressive"]
        ),
        1.0
    );
    // The two spellings of none conflict only when both are given.
    let o = neardup(&["sim", "a", "b", "--no-normalize", "--normalize", "basic"]);
    assert_eq!(o.status.code(), Some(2));
    let o = neardup(&["sim", "a", "b", "--normalize", "nfd"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn word_shingles_find_chinese_japanese_and_thai_near_duplicates() {
    let jsonl = "{\"id\":\"zh1\",\"text\":\"今天天气很好，我们一起去公园散步，然后在湖边喝咖啡聊天，一直到太阳下山才回家。\"}\n\
                 {\"id\":\"ja1\",\"text\":\"東京タワーの近くにある小さなレストランで、友達と一緒に晩ご飯を食べました。とても美味しかったです。\"}\n\
                 {\"id\":\"th1\",\"text\":\"วันนี้อากาศดีมากเราจะไปเดินเล่นที่สวนสาธารณะกับเพื่อนแล้วกินข้าวเย็นด้วยกันที่ร้านอาหารริมแม่น้ำ\"}\n\
                 {\"id\":\"zh2\",\"text\":\"今天天气很好，我们一起去公园散步，然后在河边喝咖啡聊天，一直到太阳下山才回家。\"}\n\
                 {\"id\":\"ja2\",\"text\":\"東京タワーの近くにある小さなレストランで、家族と一緒に晩ご飯を食べました。とても美味しかったです。\"}\n\
                 {\"id\":\"th2\",\"text\":\"วันนี้อากาศดีมากเราจะไปเดินเล่นที่สวนสาธารณะกับน้องแล้วกินข้าวเย็นด้วยกันที่ร้านอาหารริมแม่น้ำ\"}\n";
    for shingle in ["word:3", "char:3"] {
        let o = neardup_stdin(&["pairs", "-", "--shingle", shingle, "-t", "0.6"], jsonl);
        assert!(o.status.success(), "{}", stderr(&o));
        let pairs: Vec<(String, String)> = json_lines(&stdout(&o))
            .iter()
            .map(|p| {
                (
                    p["a"].as_str().unwrap().into(),
                    p["b"].as_str().unwrap().into(),
                )
            })
            .collect();
        let expected = [("zh1", "zh2"), ("ja1", "ja2"), ("th1", "th2")];
        assert_eq!(pairs.len(), 3, "{shingle}: {pairs:?}");
        for (a, b) in expected {
            assert!(
                pairs.contains(&(a.into(), b.into())),
                "{shingle}: {pairs:?}"
            );
        }
        assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
        assert!(stderr(&o).contains("normalization nfkc"), "{}", stderr(&o));
    }
}

#[test]
fn documents_shorter_than_k_are_warned_about() {
    let texts = "one two\nthree four\nfive six\nseven eight nine ten\n";
    let o = neardup_stdin(&["pairs", "-", "--shingle", "word:3"], texts);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("warning"), "{err}");
    assert!(
        err.contains("3 of 4 documents have fewer than 3 words"),
        "{err}"
    );
    let o = neardup_stdin(&["pairs", "-", "--shingle", "word:2"], texts);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    // plan's sample estimate says it too.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.txt");
    std::fs::write(&path, texts).unwrap();
    let o = neardup(&["plan", path.to_str().unwrap(), "--shingle", "word:3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(all.contains("fewer than 3 words"), "{all}");
}

#[test]
fn report_counts_identical_copies_and_diffs_unspaced_text_by_character() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.html");
    let texts = "今天天气很好，我们一起去公园散步，然后在湖边喝咖啡聊天。\n\
                 今天天气很好，我们一起去公园散步，然后在湖边喝咖啡聊天。\n\
                 今天天气很好，我们一起去公园散步，然后在河边喝咖啡聊天。\n";
    let o = neardup_stdin(
        &[
            "pairs",
            "-",
            "-q",
            "-t",
            "0.5",
            "--report",
            report.to_str().unwrap(),
        ],
        texts,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json_lines(&stdout(&o)).len(), 3);
    let html = std::fs::read_to_string(&report).unwrap();
    // The pair of copies is in the verified histogram, as its own bar.
    assert!(
        html.contains("identical copies (J = 1): 1"),
        "no identical bar"
    );
    // Character diff of the near-duplicate pair; exact verification has no estimate.
    assert!(
        html.contains("<mark class=\"a\">湖</mark>")
            || html.contains("<mark class=\"b\">湖</mark>")
    );
    assert!(!html.contains("estimate –"));
}

// ---- accounting (issue 10) ----

/// A small deterministic generator for the accounting corpora.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
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

// ---- outputs (issue 10) ----

/// Two near-duplicate records and one other, as JSONL.
const OUT_JSONL: &str = concat!(
    "{\"id\": \"a\", \"text\": \"red bike for sale, barely used, with lights\"}\n",
    "{\"id\": \"b\", \"text\": \"red bike for sale, barely used, with lights!\"}\n",
    "{\"id\": \"c\", \"text\": \"a completely different story about the sea\"}\n",
);

/// The names in `dir` that start with `.neardup-`: temporary files or folders left over.
fn litter(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".neardup-"))
        .collect()
}

#[cfg(unix)]
#[test]
fn outputs_special_files_are_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let (dir, input) = temp_file("a.jsonl", OUT_JSONL);
    let input = input.to_str().unwrap();
    // A character device (made here, as /dev/null is: 1, 3) stays a device.
    let dev = dir.path().join("n");
    let made = std::process::Command::new("mknod")
        .args([dev.to_str().unwrap(), "c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    if made {
        let o = neardup(&["dedup", input, "-o", dev.to_str().unwrap(), "-q"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let t = std::fs::symlink_metadata(&dev).unwrap().file_type();
        assert!(t.is_char_device(), "the device was replaced: {t:?}");
    }
    // A FIFO's reader gets the output.
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let o = neardup(&["dedup", input, "-o", fifo.to_str().unwrap(), "-q"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let got = reader.join().unwrap();
    assert_eq!(String::from_utf8(got).unwrap().lines().count(), 2);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    // A link to a file: the file is replaced, the link stays a link.
    let real = dir.path().join("real.jsonl");
    std::fs::write(&real, "old\n").unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink("real.jsonl", &link).unwrap();
    let o = neardup(&["dedup", input, "-o", link.to_str().unwrap(), "-q"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap().lines().count(), 2);
    // pairs and --skipped go through the same opener.
    let o = neardup(&[
        "pairs",
        input,
        "-o",
        link.to_str().unwrap(),
        "--skipped",
        "/dev/null",
        "-q",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .contains("\"a\":\"a\""));
    // A dangling link is an error, and is left as it is.
    let dangling = dir.path().join("dangling.jsonl");
    std::os::unix::fs::symlink("nowhere/x.jsonl", &dangling).unwrap();
    let o = neardup(&["dedup", input, "-o", dangling.to_str().unwrap(), "-q"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("dangling"), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&dangling)
        .unwrap()
        .file_type()
        .is_symlink());
    // Another name for the input (a hard link) is refused, by device and inode.
    let hard = dir.path().join("hard.jsonl");
    std::fs::hard_link(input, &hard).unwrap();
    for flag in ["-o", "--removed"] {
        let o = neardup(&["dedup", input, flag, hard.to_str().unwrap(), "-q"]);
        assert_eq!(code(&o), 2, "{flag}: {}", stderr(&o));
        assert!(stderr(&o).contains("refusing"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read_to_string(input).unwrap(), OUT_JSONL);
    assert!(litter(dir.path()).is_empty(), "{:?}", litter(dir.path()));
}

#[test]
fn outputs_several_directories_keep_every_file() {
    let dir = tempfile::tempdir().unwrap();
    for (root, text) in [
        ("dA", "the first story about a red bike and its owner"),
        ("dB", "another tale entirely, of ships and of the sea"),
    ] {
        std::fs::create_dir_all(dir.path().join(root)).unwrap();
        std::fs::write(dir.path().join(root).join("x.txt"), text).unwrap();
    }
    let out = dir.path().join("out");
    let o = Command::cargo_bin("neardup")
        .unwrap()
        .current_dir(dir.path())
        .args(["dedup", "dA", "dB", "-o", "out"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("kept 2 "), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(out.join("dA/x.txt")).unwrap(),
        "the first story about a red bike and its owner"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("dB/x.txt")).unwrap(),
        "another tale entirely, of ships and of the sea"
    );
    // The same root twice: told apart, still every file.
    let o = Command::cargo_bin("neardup")
        .unwrap()
        .current_dir(dir.path())
        .args(["dedup", "dA", "./dA", "-o", "out2", "-t", "0.99"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // Identical files: one kept, one removed; the kept one is where the summary says.
    assert!(stderr(&o).contains("kept 1 "), "{}", stderr(&o));
    assert!(dir.path().join("out2/dA/x.txt").is_file());
    assert!(!dir.path().join("out2/dA-2").exists());
    // One root keeps the flat layout.
    let o = Command::cargo_bin("neardup")
        .unwrap()
        .current_dir(dir.path())
        .args(["dedup", "dA", "-o", "out3"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(dir.path().join("out3/x.txt").is_file());
}

#[test]
fn outputs_gz_names_are_compressed() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.jsonl.gz");
    std::fs::write(&input, gzip_bytes(OUT_JSONL.as_bytes())).unwrap();
    let out = dir.path().join("y.jsonl.gz");
    let o = neardup(&[
        "dedup",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..2], [0x1f, 0x8b], "not gzip");
    // neardup reads its own output back: 2 records.
    let o = neardup(&["clusters", out.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("read 2 "), "{}", stderr(&o));
    let pairs = dir.path().join("p.jsonl.gz");
    let o = neardup(&[
        "pairs",
        input.to_str().unwrap(),
        "-o",
        pairs.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(&std::fs::read(&pairs).unwrap()[..2], [0x1f, 0x8b]);
}

/// `bytes` compressed by the `gzip` command (the CLI's tests do not depend on flate2).
fn gzip_bytes(bytes: &[u8]) -> Vec<u8> {
    let o = std::process::Command::new("gzip")
        .arg("-c")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(bytes)?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(o.status.success());
    o.stdout
}

#[test]
fn outputs_closed_stdin_is_an_error() {
    let bin = assert_cmd::cargo::cargo_bin("neardup");
    let o = std::process::Command::new("sh")
        .args(["-c", "exec \"$0\" pairs - <&-"])
        .arg(&bin)
        .output()
        .unwrap();
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot read standard input"),
        "{}",
        stderr(&o)
    );
    // An empty standard input is no error.
    let o = std::process::Command::new(&bin)
        .args(["pairs", "-", "-q"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn outputs_trailing_bytes_after_gzip_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.jsonl.gz");
    let mut bytes = gzip_bytes(OUT_JSONL.as_bytes());
    let n = bytes.len();
    bytes.extend_from_slice(b"garbage");
    std::fs::write(&input, &bytes).unwrap();
    let o = neardup(&["pairs", input.to_str().unwrap(), "-q"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("trailing bytes after the gzip stream at byte {n}")),
        "{}",
        stderr(&o)
    );
}

#[test]
fn outputs_lone_surrogate_id_is_kept_lossily() {
    let (_d, path) = temp_file(
        "s.jsonl",
        concat!(
            "{\"id\": \"x\\ud800y\", \"text\": \"red bike for sale, barely used, with lights\"}\n",
            "{\"id\": \"b\", \"text\": \"red bike for sale, barely used, with lights!\"}\n",
        ),
    );
    let o = neardup(&["pairs", path.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    assert_eq!(lines[0]["a"], "x\u{FFFD}y", "{}", stdout(&o));
    assert!(stderr(&o).contains("decoded lossily"), "{}", stderr(&o));
}

/// Starts `neardup pairs` on 2,000 identical documents (2 million pairs, ~70 MB of
/// output) into `out`, waits until its temporary file appears, sends `signal`, and
/// checks that it exits with `code`, leaves no temporary file, and `out` is unchanged.
#[cfg(unix)]
fn interrupted_write_leaves_nothing(signal: &str, expected: i32) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.txt");
    std::fs::write(
        &input,
        "the same sentence about a red bike, again and again\n".repeat(2000),
    )
    .unwrap();
    let out = dir.path().join("out.jsonl");
    std::fs::write(&out, "old\n").unwrap();
    let args = [
        "pairs",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    let status = signal_once_it_writes(&args, dir.path(), signal);
    assert_eq!(status.code(), Some(expected), "{status}");
    assert!(litter(dir.path()).is_empty(), "{:?}", litter(dir.path()));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
}

/// Runs `neardup ARGS -q`, waits until it has a temporary output in `dir`, sends it
/// `signal`, and returns how
/// it ended.
#[cfg(unix)]
fn signal_once_it_writes(args: &[&str], dir: &Path, signal: &str) -> std::process::ExitStatus {
    use std::time::{Duration, Instant};
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("neardup"))
        .args(args)
        .arg("-q")
        .spawn()
        .unwrap();
    let start = Instant::now();
    while litter(dir).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no temporary output"
        );
        if let Some(status) = child.try_wait().unwrap() {
            panic!("finished before the signal: {status}");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let killed = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    child.wait().unwrap()
}

#[cfg(unix)]
#[test]
fn outputs_sigterm_while_writing_removes_the_temporary_file() {
    interrupted_write_leaves_nothing("-TERM", 143);
}

#[cfg(unix)]
#[test]
fn outputs_sigint_while_writing_removes_the_temporary_file() {
    interrupted_write_leaves_nothing("-INT", 130);
}

/// dedup of a directory of 3,000 files, interrupted while the kept files are copied into
/// the temporary folder beside the output: no folder is left, no output appears.
#[cfg(unix)]
#[test]
fn outputs_sigterm_while_copying_a_directory_removes_the_temporary_folder() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    for i in 0..3000 {
        let sub = src.join(format!("d{}", i % 30));
        std::fs::create_dir_all(&sub).unwrap();
        let text = format!("document number {i} says {} ", i * 7919).repeat(400);
        std::fs::write(sub.join(format!("f{i}.txt")), text).unwrap();
    }
    let out = dir.path().join("out");
    let args = ["dedup", src.to_str().unwrap(), "-o", out.to_str().unwrap()];
    let status = signal_once_it_writes(&args, dir.path(), "-TERM");
    assert_eq!(status.code(), Some(143), "{status}");
    assert!(litter(dir.path()).is_empty(), "{:?}", litter(dir.path()));
    assert!(!out.exists());
}

// ---- exact means exact, parameters (issue 10) ----

/// Runs and expects exit code 2 with a message holding every one of `needles`.
fn refused(args: &[&str], needles: &[&str]) {
    let o = neardup(args);
    assert_eq!(o.status.code(), Some(2), "neardup {args:?}: {}", stderr(&o));
    let err = stderr(&o);
    for n in needles {
        assert!(err.contains(n), "neardup {args:?}: {n:?} not in {err}");
    }
}

#[test]
fn numbers_at_the_edges_are_refused_with_their_range() {
    let input = "pypi-summaries.jsonl";
    refused(
        &["pairs", input, "--max-shingles", "18446744073709551615"],
        &["--max-shingles", "1..=4294967296"],
    );
    refused(
        &["pairs", input, "--max-shingles", "0"],
        &["--max-shingles", "1..="],
    );
    refused(
        &["pairs", input, "--shingle", "char:18446744073709551615"],
        &["char:18446744073709551615", "1..=1024"],
    );
    refused(&["pairs", input, "--shingle", "word:1025"], &["1..=1024"]);
    refused(
        &["pairs", input, "-t", "1e-18"],
        &["--threshold", "0.01..=1"],
    );
    refused(
        &["eval", input, "-t", "0.001"],
        &["--threshold", "0.01..=1"],
    );
    refused(
        &["pairs", input, "--threads", "4294967296"],
        &["--threads", "available cores"],
    );
    refused(&["pairs", input, "--threads", "0"], &["--threads"]);
    refused(&["plan", "--sample", "0"], &["--sample", "1..=1000000"]);
    refused(
        &["pairs", input, "--num-perm", "65537"],
        &["permutations", "1..=65536"],
    );
    // The minimum itself is accepted.
    ok(&["pairs", input, "-t", "0.01", "--max-shingles", "1", "-q"]);
}

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

/// Two documents sharing their first 20,000 bytes, then 100,000 different ones each
/// (distinct numbered words, so the shared part is about a sixth of each set).
fn long_pair_sharing_a_prefix() -> (tempfile::TempDir, PathBuf) {
    let words = |tag: char, bytes: usize| {
        let mut s = String::new();
        let mut i = 0u64;
        while s.len() < bytes {
            s.push_str(&format!("{tag}{i} "));
            i += 1;
        }
        s
    };
    let shared = words('s', 20_000);
    let a = format!("{shared}{}", words('a', 100_000));
    let b = format!("{shared}{}", words('b', 100_000));
    temp_file(
        "long.jsonl",
        &format!("{{\"text\":\"{a}\"}}\n{{\"text\":\"{b}\"}}\n"),
    )
}

#[test]
fn truncation_is_never_reported_as_exact() {
    let (_d, path) = long_pair_sharing_a_prefix();
    let p = path.to_str().unwrap();
    // Compared whole by default: the exact Jaccard is far below 1, no pair at 0.5.
    assert_eq!(
        ok(&["pairs", p, "--shingle", "word:2", "-t", "0.5", "-q"]),
        ""
    );
    // Past the cap: never "jaccard": 1.0 from the prefix; the estimate of the whole
    // documents, which is low, so no pair at 0.5 either.
    for exact in [false, true] {
        let mut args = vec![
            "pairs",
            p,
            "--shingle",
            "word:2",
            "-t",
            "0.5",
            "--max-shingles",
            "10000",
            "-q",
        ];
        if exact {
            args.push("--exact");
        }
        assert_eq!(ok(&args), "", "{args:?}");
    }
    // At a low threshold the pair is reported by estimate, marked truncated.
    let o = neardup(&[
        "pairs",
        p,
        "--shingle",
        "word:2",
        "-t",
        "0.05",
        "--max-shingles",
        "10000",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    assert_eq!(lines.len(), 1, "{}", stdout(&o));
    assert!(lines[0]["jaccard"].is_null(), "{}", lines[0]);
    assert_eq!(lines[0]["truncated"], true);
    let e = lines[0]["estimate"].as_f64().unwrap();
    assert!(e > 0.05 && e < 0.4, "estimate {e}");
    assert!(
        stderr(&o).contains("2 documents, 1 pair reported by estimate"),
        "{}",
        stderr(&o)
    );
    // A pair known only by estimate removes nothing, unless allowed.
    let clusters = ok(&[
        "clusters",
        p,
        "--shingle",
        "word:2",
        "-t",
        "0.05",
        "--max-shingles",
        "10000",
        "-q",
    ]);
    assert_eq!(clusters, "");
    let clusters = ok(&[
        "clusters",
        p,
        "--shingle",
        "word:2",
        "-t",
        "0.05",
        "--max-shingles",
        "10000",
        "--allow-truncated",
        "-q",
    ]);
    let lines = json_lines(&clusters);
    assert_eq!(lines.len(), 2, "{clusters}");
    assert_eq!(lines[1]["truncated"], true);
}

// ---- a memory limit (issue 10) ----

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

// Copies cost a few bytes (issue 10, item 4): records are spilled to an unnamed temporary
// file and read back for dedup; ids without a user id and places are computed, not held;
// groups of copies are clustered as groups.

/// A corpus of copies among distinct records, blank and malformed lines, CRLF endings and
/// a few user ids; and the output dedup must write: each distinct record's first copy.
fn copies_corpus() -> (String, String) {
    let mut input = String::new();
    let mut expected = String::new();
    let texts = [
        "a bright two bedroom apartment near the river",
        "an old bicycle with a new chain and two baskets",
        "fresh sourdough bread baked every single morning",
    ];
    let mut seen = [false; 3];
    for i in 0..3000 {
        let which = (i * 7 + i / 13) % 3;
        let line = match i % 50 {
            0 => "\n".to_string(),
            1 => "{not json\n".to_string(),
            2 => format!("{{\"id\": \"u{i}\", \"text\": \"{}\"}}\r\n", texts[which]),
            _ => format!("{{\"text\": \"{}\", \"n\": {i}}}\n", texts[which]),
        };
        input.push_str(&line);
        if !line.starts_with("{\"") || seen[which] {
            continue;
        }
        seen[which] = true;
        expected.push_str(&line);
    }
    (input, expected)
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

// ---- memory that does not grow with junk (issue 10) ----

/// The exit code and peak resident memory of a run, as its summary states it (VmHWM of
/// its own address space: a child's `ru_maxrss` would also count the test process's
/// own peak, which the child inherits when it is spawned).
#[cfg(target_os = "linux")]
fn peak_memory(args: &[&str]) -> (i32, u64) {
    let o = neardup(
        &args
            .iter()
            .copied()
            .filter(|&a| a != "-q")
            .collect::<Vec<_>>(),
    );
    let err = stderr(&o);
    let peak = err
        .lines()
        .find_map(|l| l.strip_prefix("peak"))
        .unwrap_or_else(|| panic!("no peak in {err}"));
    let peak = peak.trim().trim_end_matches(" resident");
    let (number, unit) = peak.split_once(' ').expect("a number and a unit");
    let scale = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => panic!("unit {unit}"),
    };
    let bytes = number.parse::<f64>().unwrap() * scale;
    (o.status.code().unwrap_or(-1), bytes as u64)
}

/// Bytes of peak memory per record beyond a fixed allowance, for junk inputs. Before the
/// fix a blank line cost ~490 bytes and an identical copy ~820; the targets (50M blank
/// lines in 100 MB, 10M copies in 400 MB) allow 2 and 40.
#[cfg(target_os = "linux")]
fn bytes_per_record(args: &[&str], records: u64) -> f64 {
    const ALLOWANCE: u64 = 48 << 20;
    let (code, peak) = peak_memory(args);
    assert_eq!(code, 0, "neardup {args:?}");
    peak.saturating_sub(ALLOWANCE) as f64 / records as f64
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

// ---- Streamed pairs (issue 10, item 5): order, truncated column, closed pipes ----

/// `n` near-copies of one 60-word text, each with two words replaced: all pairs similar.
fn mutual_near_copies(n: usize) -> String {
    let base: Vec<String> = (0..60)
        .map(|i| format!("word{}", (i * 7919) % 1000))
        .collect();
    let mut out = String::new();
    for d in 0..n {
        let mut words = base.clone();
        words[(d * 13) % 60] = format!("x{d}");
        words[(d * 29 + 5) % 60] = format!("y{d}");
        out.push_str(&words.join(" "));
        out.push('\n');
        if d % 10 == 0 {
            out.push_str(&words.join(" "));
            out.push('\n');
        }
    }
    out
}

#[test]
fn pairs_output_order_is_deterministic_whatever_the_threads() {
    let (_dir, path) = temp_file("near.txt", &mutual_near_copies(300));
    let path = path.to_str().unwrap();
    for format in ["jsonl", "tsv"] {
        let run = |threads: &str| {
            ok(&[
                "pairs",
                path,
                "-q",
                "-t",
                "0.7",
                "--threads",
                threads,
                "--output-format",
                format,
            ])
        };
        let one = run("1");
        assert_eq!(one, run("2"), "{format}");
        assert_eq!(one, run("2"), "{format}, again");
        let lines: Vec<&str> = one.lines().collect();
        let mut sorted = lines.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), lines.len(), "{format}: each pair once");
    }
    // The summary counts every pair written.
    let o = neardup(&["pairs", path, "-t", "0.7"]);
    let written = stdout(&o).lines().count();
    let result = stderr(&o)
        .lines()
        .find_map(|l| l.strip_prefix("result"))
        .map(|l| l.trim().replace(',', ""))
        .unwrap_or_default();
    assert_eq!(result, format!("{written} pairs among 330 documents"));
}

#[test]
fn tsv_pairs_mark_pairs_with_a_truncated_document() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.txt");
    let long: String = (0..50_000).map(|i| format!("w{i} ")).collect();
    std::fs::write(&path, format!("{long}\n{long}tail\nshort line\n")).unwrap();
    let tsv = ok(&[
        "pairs",
        path.to_str().unwrap(),
        "--max-shingles",
        "1000",
        "--output-format",
        "tsv",
        "-q",
    ]);
    let lines: Vec<&str> = tsv.lines().collect();
    assert_eq!(lines[0], "a\tb\tjaccard\testimate\ttruncated");
    assert_eq!(lines.len(), 2, "{tsv}");
    let row: Vec<&str> = lines[1].split('\t').collect();
    assert_eq!((row[0], row[1], row[2], row[4]), ("1", "2", "", "true"));
}

#[test]
fn pairs_into_a_closed_pipe_print_the_first_lines_and_exit_cleanly() {
    use std::io::BufRead;
    let (_dir, path) = temp_file("near.txt", &mutual_near_copies(3000));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("neardup"))
        .args(["pairs", path.to_str().unwrap(), "-t", "0.7", "-q"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    assert!(first.starts_with("{\"a\":"), "{first}");
    // Millions of pairs: the first lines come while the rest are still being found.
    assert!(child.try_wait().unwrap().is_none(), "still running");
    drop(reader);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "no error on a closed pipe"
    );
}
