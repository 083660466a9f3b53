//! The HTML report.

use crate::common::*;

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
