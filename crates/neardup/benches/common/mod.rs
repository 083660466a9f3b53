//! What the benchmarks share: the shipped PyPI package summaries.

/// The texts of `testdata/pypi-summaries.jsonl`, in order.
pub fn summaries() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/pypi-summaries.jsonl"
    );
    std::fs::read_to_string(path)
        .expect("testdata/pypi-summaries.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["text"].as_str().unwrap().to_string()
        })
        .collect()
}
