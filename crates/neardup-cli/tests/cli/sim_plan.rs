//! `neardup sim` and `neardup plan`.

use crate::common::*;

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
fn plan_explains_bands_by_rows_in_words() {
    let out = ok(&["plan"]);
    assert!(out.contains("16 × 8 is 16 bands of 8 rows"), "{out}");
}
