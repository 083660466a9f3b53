//! The page of `neardup decontaminate --report`: per benchmark, how many items were
//! found inside the corpus; per item found, its text beside the span of a document that
//! holds it.
//!
//! ```
//! use neardup_report::decontamination::{render, Benchmark, Data, SpanView};
//!
//! let data = Data {
//!     title: "neardup decontaminate corpus.jsonl".into(),
//!     settings: vec![("n-gram".into(), "13 words".into())],
//!     benchmarks: vec![Benchmark {
//!         name: "quiz.jsonl".into(),
//!         items: 2,
//!         contaminated: 1,
//!         documents: 3,
//!         short: 0,
//!         unchecked: 1,
//!     }],
//!     views: vec![SpanView {
//!         benchmark: "quiz.jsonl".into(),
//!         item: "q1".into(),
//!         item_text: "What is the capital of France?".into(),
//!         document: "doc-7".into(),
//!         containment: 1.0,
//!         before: "Quiz: ".into(),
//!         span: "what is the capital of France".into(),
//!         after: "? Paris.".into(),
//!     }],
//!     views_left_out: 0,
//! };
//! let html = render(&data);
//! assert!(html.contains("<td>quiz.jsonl</td><td class=\"n\">1 / 2</td>"));
//! assert!(html.contains("<mark>what is the capital of France</mark>"));
//! ```

use std::fmt::Write as _;

use crate::html::{escape, key_value_table, thousands};

/// The most spans shown; the caller counts the rest in [`Data::views_left_out`].
pub const MAX_VIEWS: usize = 200;

/// Everything the page shows.
#[derive(Debug, Clone, Default)]
pub struct Data {
    /// The page's title.
    pub title: String,
    /// The run's settings, as (name, value).
    pub settings: Vec<(String, String)>,
    /// One row per test file.
    pub benchmarks: Vec<Benchmark>,
    /// Items beside the spans holding them, at most [`MAX_VIEWS`].
    pub views: Vec<SpanView>,
    /// Items found in documents but not shown.
    pub views_left_out: u64,
}

/// One test file's counts.
#[derive(Debug, Clone)]
pub struct Benchmark {
    /// The file.
    pub name: String,
    /// Its items.
    pub items: u64,
    /// Items found inside at least one document.
    pub contaminated: u64,
    /// Documents holding one of its items.
    pub documents: u64,
    /// Items shorter than n words, checked whole.
    pub short: u64,
    /// Items too short to be checked.
    pub unchecked: u64,
}

/// A test item beside a span of a document holding it.
#[derive(Debug, Clone)]
pub struct SpanView {
    /// Its test file.
    pub benchmark: String,
    /// The item's id.
    pub item: String,
    /// The item's text.
    pub item_text: String,
    /// The document's id.
    pub document: String,
    /// The share of the item's n-grams in the document.
    pub containment: f64,
    /// Document text just before the span.
    pub before: String,
    /// The span.
    pub span: String,
    /// Document text just after the span.
    pub after: String,
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums}.pair{display:grid;grid-template-columns:1fr 1fr;gap:1em;margin:1em 0 2em}\
.pair div{border:1px solid #ddd;padding:.6em;white-space:pre-wrap;overflow-wrap:anywhere}mark{background:#ffe08a}h3{margin-bottom:.2em}";

/// The page: one self-contained HTML document, every user text escaped.
pub fn render(data: &Data) -> String {
    let mut out = String::new();
    let title = escape(&data.title);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title><style>{STYLE}</style></head><body><h1>{title}</h1>"
    );
    out.push_str("<h2>Settings</h2>");
    out.push_str(&key_value_table(&data.settings, false));
    out.push_str("<h2>Benchmarks</h2><table><tr><th>test file</th><th>items contaminated</th><th>documents</th><th>shorter than n, checked whole</th><th>too short, not checked</th></tr>");
    for b in &data.benchmarks {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n\">{} / {}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            escape(&b.name),
            thousands(b.contaminated),
            thousands(b.items),
            thousands(b.documents),
            thousands(b.short),
            thousands(b.unchecked)
        );
    }
    out.push_str("</table><h2>Items and spans</h2>");
    if data.views.is_empty() {
        out.push_str("<p>No test item was found inside the corpus.</p>");
    }
    for v in &data.views {
        let _ = write!(
            out,
            "<h3>{} item {} in document {} (containment {:.3})</h3><div class=\"pair\"><div>{}</div><div>{}<mark>{}</mark>{}</div></div>",
            escape(&v.benchmark),
            escape(&v.item),
            escape(&v.document),
            v.containment,
            escape(&v.item_text),
            escape(&v.before),
            escape(&v.span),
            escape(&v.after)
        );
    }
    if data.views_left_out > 0 {
        let _ = write!(
            out,
            "<p>{} more items found in documents, not shown.</p>",
            thousands(data.views_left_out)
        );
    }
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(span: &str) -> SpanView {
        SpanView {
            benchmark: "b.jsonl".into(),
            item: "7".into(),
            item_text: "x < y".into(),
            document: "d".into(),
            containment: 0.5,
            before: "<script>".into(),
            span: span.into(),
            after: String::new(),
        }
    }

    #[test]
    fn user_text_is_escaped() {
        let html = render(&Data {
            views: vec![view("a & b")],
            ..Data::default()
        });
        assert!(html.contains("&lt;script&gt;<mark>a &amp; b</mark>"));
        assert!(html.contains("<div>x &lt; y</div>"));
        assert!(!html.contains("<script>"));
    }

    #[test]
    fn an_empty_run_says_so_and_counts_left_out_views() {
        let html = render(&Data::default());
        assert!(html.contains("No test item was found"));
        let html = render(&Data {
            views: vec![view("s")],
            views_left_out: 1234,
            ..Data::default()
        });
        assert!(html.contains("1,234 more items found in documents, not shown."));
    }
}
