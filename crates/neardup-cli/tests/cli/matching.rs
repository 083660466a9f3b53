//! How documents are compared: verification, LSH against the exact join, multisets, SimHash, containment, shingles, truncation, parameter ranges.

use crate::common::*;

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
// One scenario read top to bottom (the rule against long functions is for the code).
#[allow(clippy::too_many_lines)]
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
