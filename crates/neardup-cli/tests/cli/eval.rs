//! `neardup eval`: LSH against the exact join, labels, missed pairs, JSON.

use crate::common::*;

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
