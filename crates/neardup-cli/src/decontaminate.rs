//! `neardup decontaminate`: which benchmark items occur inside which corpus documents
//! (the core's `decontaminate::TestSet`), reported per document and per item, and the
//! corpus written without the contaminated documents or annotated.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use neardup::decontaminate::{ItemMatch, TestSet};
use neardup_io::documents::{DocId, Documents, InputOptions};
use neardup_io::{open, Entry, ReadOptions};
use rayon::prelude::*;
use serde::Serialize;

use crate::args::{InputFlags, RuntimeArgs};
use crate::errors::BadRecord;
use crate::output::{finish, open_output, round};

/// `decontaminate`.
#[derive(Args, Debug, Clone)]
pub struct DecontaminateArgs {
    /// A benchmark file (JSONL, CSV, TSV, Parquet; repeatable): each record is one test
    /// item. A record without the test fields is an error naming the file and line.
    #[arg(long = "tests", value_name = "FILE", required = true)]
    pub tests: Vec<PathBuf>,
    /// The field (JSONL, Parquet) or column (CSV/TSV) of a test item's text; repeatable,
    /// the fields joined by a line break (`--test-field question --test-field answer`)
    /// [default: text].
    #[arg(long = "test-field", value_name = "NAME")]
    pub test_fields: Vec<String>,
    /// Words per n-gram (13 as lm-eval-harness; datatrove uses 12).
    #[arg(long, default_value_t = neardup::decontaminate::DEFAULT_NGRAM, value_name = "N")]
    pub ngram: usize,
    /// Items shorter than --ngram but with at least this many words are one n-gram of all
    /// their words (GPT-3's and NeMo Curator's rule); shorter ones are not checked and
    /// are counted. --min-ngram equal to --ngram checks only items of n words or more, as
    /// lm-eval-harness.
    #[arg(long, default_value_t = neardup::decontaminate::DEFAULT_MIN_NGRAM, value_name = "N")]
    pub min_ngram: usize,
    /// The share of an item's distinct n-grams a document must hold for the item to be
    /// reported (0: any one n-gram, lm-eval-harness's rule).
    #[arg(long, default_value_t = neardup::decontaminate::DEFAULT_MIN_OVERLAP, value_name = "SHARE")]
    pub min_overlap: f64,
    /// Write the corpus here without its contaminated documents, each record's bytes as
    /// read (with --annotate: every document, annotated). The per-document report then
    /// goes to --report-json only.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write every document to -o with a field (JSONL), column (CSV/TSV: JSON text) or
    /// string column (Parquet: JSON text) `contamination` added: the items it holds,
    /// [{"test", "item", "containment", "spans"}] ([] when clean). CSV, TSV and Parquet
    /// inputs are read twice: files, not standard input.
    #[arg(long, requires = "output")]
    pub annotate: bool,
    /// The per-document report, one JSON object per contaminated document (default:
    /// standard output when there is no -o).
    #[arg(long, value_name = "FILE")]
    pub report_json: Option<PathBuf>,
    /// The per-item report, one JSON object per test item: its file, id, line, words,
    /// whether it was checked, and the documents holding it.
    #[arg(long, value_name = "FILE")]
    pub items_json: Option<PathBuf>,
    /// An HTML page: per benchmark, items contaminated of total; per item, its text beside
    /// each span of a document that holds it.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputFlags,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// A test item: where it is and its text.
#[derive(Debug, Clone)]
pub struct TestItem {
    /// The index of its file in `--tests`.
    pub file: usize,
    /// Its id (the id field or column), else its line.
    pub id: String,
    pub line: u64,
    pub text: String,
}

/// Reads every test file: one item per record, the fields joined by a line break.
pub fn read_tests(files: &[PathBuf], fields: &[String]) -> Result<Vec<TestItem>> {
    let default = [String::from("text")];
    let fields = if fields.is_empty() {
        &default[..]
    } else {
        fields
    };
    let mut items = Vec::new();
    for (file, path) in files.iter().enumerate() {
        let first = items.len();
        for (k, field) in fields.iter().enumerate() {
            let opts = ReadOptions::default()
                .with_text_field(field.clone())
                .with_text_columns([field.clone()]);
            let reader = open(path, &opts)
                .with_context(|| format!("cannot read test file {}", path.display()))?;
            for (n, entry) in (first..).zip(reader) {
                let record = match entry? {
                    Entry::Record(r) => r,
                    Entry::Skipped(s) => {
                        return Err(BadRecord(format!(
                        "{}: test item not read ({}); every item must have --test-field {field}",
                        s.location, s.reason
                    ))
                        .into())
                    }
                };
                if k == 0 {
                    items.push(TestItem {
                        file,
                        id: record
                            .id
                            .clone()
                            .unwrap_or_else(|| record.location.line.to_string()),
                        line: record.location.line,
                        text: record.text,
                    });
                } else if let Some(item) = items.get_mut(n) {
                    item.text.push('\n');
                    item.text.push_str(&record.text);
                }
            }
        }
    }
    Ok(items)
}

/// What a run found: the contaminated documents and their matches, in input order.
pub struct Found {
    pub docs: Documents,
    pub hits: Vec<(u32, Vec<ItemMatch>)>,
    /// The first spans found, for the HTML page, with the text around them.
    pub views: Vec<View>,
    /// Items found in documents in all (an item in two documents counts twice).
    pub matches: u64,
}

/// A span of a document holding an item, with some text either side.
pub struct View {
    pub doc: u32,
    pub item: usize,
    pub containment: f64,
    pub before: String,
    pub span: String,
    pub after: String,
}

/// Characters of context either side of a span on the HTML page.
const CONTEXT: usize = 160;

fn view(doc: u32, text: &str, m: &ItemMatch) -> Option<View> {
    let span = m.spans.first()?.clone();
    let before = &text[..span.start];
    let from = before
        .char_indices()
        .rev()
        .nth(CONTEXT - 1)
        .map_or(0, |(i, _)| i);
    let after = &text[span.end..];
    let to = after
        .char_indices()
        .nth(CONTEXT)
        .map_or(after.len(), |(i, _)| i);
    Some(View {
        doc,
        item: m.item,
        containment: m.containment,
        before: before[from..].to_string(),
        span: text[span].to_string(),
        after: after[..to].to_string(),
    })
}

fn input_options(flags: &InputFlags, keep_raw: bool) -> InputOptions {
    let mut options: InputOptions = flags.clone().into();
    options.keep_raw = keep_raw;
    options
}

/// Searches every corpus document for the items, a batch at a time in parallel.
fn search(tests: &TestSet, options: &InputOptions) -> Result<Found> {
    let mut hits = Vec::new();
    let mut views = Vec::new();
    let mut matches = 0u64;
    let mut next: u32 = 0;
    let docs = Documents::read_batches(
        options,
        1 << 12,
        || {},
        |texts: Vec<String>| {
            let found: Vec<Vec<ItemMatch>> = texts.par_iter().map(|t| tests.find(t)).collect();
            for (i, f) in found.into_iter().enumerate() {
                if f.is_empty() {
                    continue;
                }
                let doc = next + i as u32;
                for m in &f {
                    matches += 1;
                    if views.len() < neardup_report::decontamination::MAX_VIEWS {
                        views.extend(view(doc, &texts[i], m));
                    }
                }
                hits.push((doc, f));
            }
            next += texts.len() as u32;
            Ok::<(), anyhow::Error>(())
        },
    )?;
    Ok(Found {
        docs,
        hits,
        views,
        matches,
    })
}

/// One item found in a document, as reported.
#[derive(Serialize)]
pub(crate) struct ItemHit<'a> {
    test: &'a str,
    item: &'a str,
    containment: Option<f64>,
    matched: usize,
    ngrams: usize,
    spans: Vec<[usize; 2]>,
}

/// One contaminated document of the per-document report.
#[derive(Serialize)]
struct DocReport<'a> {
    id: DocId,
    source: &'a str,
    line: u64,
    items: Vec<ItemHit<'a>>,
}

/// One test item of the per-item report.
#[derive(Serialize)]
struct ItemReport<'a> {
    test: &'a str,
    item: &'a str,
    line: u64,
    words: usize,
    checked: bool,
    documents: Vec<DocId>,
}

pub(crate) fn hits_of<'a>(
    matches: &[ItemMatch],
    items: &'a [TestItem],
    names: &'a [String],
) -> Vec<ItemHit<'a>> {
    matches
        .iter()
        .map(|m| {
            let item = &items[m.item];
            ItemHit {
                test: &names[item.file],
                item: &item.id,
                containment: round(Some(m.containment)),
                matched: m.matched,
                ngrams: m.ngrams,
                spans: m.spans.iter().map(|s| [s.start, s.end]).collect(),
            }
        })
        .collect()
}

pub fn run(args: &DecontaminateArgs) -> Result<()> {
    if args.annotate {
        crate::decontaminate_output::refuse_before_reading(&args.input)?;
    }
    let items = read_tests(&args.tests, &args.test_fields)?;
    let tests = TestSet::builder()
        .ngram(args.ngram)
        .min_ngram(args.min_ngram)
        .min_overlap(args.min_overlap)
        .build(items.iter().map(|i| i.text.as_str()))
        .map_err(|e| crate::errors::Usage(e.to_string()))?;
    let options = input_options(&args.input, args.output.is_some());
    let found = search(&tests, &options)?;
    if args.output.is_some() {
        crate::decontaminate_output::refuse(&found.docs, args.annotate)?;
    }
    let names: Vec<String> = args.tests.iter().map(|p| p.display().to_string()).collect();
    let doc_lines = if args.report_json.is_some() || args.output.is_none() {
        Some(doc_report(&found, &items, &names)?)
    } else {
        None
    };
    if let Some(lines) = &doc_lines {
        let mut out = open_output(args.report_json.as_deref(), &args.input.inputs)?;
        out.write_all(lines).map_err(|e| out.error(e))?;
        finish(out)?;
    }
    let per_item = documents_per_item(&found, items.len());
    if let Some(path) = &args.items_json {
        write_items(
            path,
            &per_item,
            &items,
            &names,
            &tests,
            &found.docs,
            &args.input.inputs,
        )?;
    }
    let run = Run {
        found: &found,
        per_item: &per_item,
        items: &items,
        names: &names,
        tests: &tests,
        args,
    };
    if let Some(path) = &args.report {
        let page = crate::decontaminate_page::page(&run);
        let mut out = open_output(Some(path), &args.input.inputs)?;
        out.write_all(page.as_bytes()).map_err(|e| out.error(e))?;
        finish(out)?;
    }
    if let Some(path) = &args.output {
        let out = crate::decontaminate_output::Out {
            path,
            found: &found,
            items: &items,
            names: &names,
            options: &options,
        };
        out.write(args.annotate)?;
    }
    if !args.runtime.quiet {
        crate::summary::to_stderr(&summary(&run));
    }
    Ok(())
}

/// The per-document report's lines.
fn doc_report(found: &Found, items: &[TestItem], names: &[String]) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    for (doc, matches) in &found.hits {
        let place = found.docs.place(*doc);
        let line = DocReport {
            id: found.docs.id(*doc),
            source: found.docs.source_of(*doc),
            line: place.line,
            items: hits_of(matches, items, names),
        };
        serde_json::to_writer(&mut buf, &line)?;
        buf.push(b'\n');
    }
    Ok(buf)
}

/// For each item, the documents (by number) that hold it.
pub fn documents_per_item(found: &Found, items: usize) -> Vec<Vec<u32>> {
    let mut per_item = vec![Vec::new(); items];
    for (doc, matches) in &found.hits {
        for m in matches {
            per_item[m.item].push(*doc);
        }
    }
    per_item
}

fn write_items(
    path: &Path,
    per_item: &[Vec<u32>],
    items: &[TestItem],
    names: &[String],
    tests: &TestSet,
    docs: &Documents,
    inputs: &[PathBuf],
) -> Result<()> {
    let mut out = open_output(Some(path), inputs)?;
    let mut buf = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let line = ItemReport {
            test: &names[item.file],
            item: &item.id,
            line: item.line,
            words: tests.item_len(i),
            checked: tests.is_checked(i),
            documents: per_item[i].iter().map(|d| docs.id(*d)).collect(),
        };
        buf.clear();
        serde_json::to_writer(&mut buf, &line)?;
        buf.push(b'\n');
        out.write_all(&buf).map_err(|e| out.error(e))?;
    }
    finish(out)
}

/// What a run found, as the summary and the report page read it.
pub struct Run<'a> {
    pub found: &'a Found,
    /// Each item's documents.
    pub per_item: &'a [Vec<u32>],
    pub items: &'a [TestItem],
    /// The test files' names.
    pub names: &'a [String],
    pub tests: &'a TestSet,
    pub args: &'a DecontaminateArgs,
}

/// The summary: the accounting of documents, then per test file the items contaminated.
fn summary(run: &Run) -> String {
    let Run {
        found,
        per_item,
        items,
        names,
        tests,
        args,
    } = *run;
    let docs = &found.docs;
    let removed = found.hits.len() as u64;
    let skipped = docs.skipped_count();
    let read = docs.read_count();
    let mut s = format!(
        "decontaminate: read {read} = kept {} + contaminated {removed} + skipped {skipped}\n",
        read - removed - skipped
    );
    for b in crate::decontaminate_page::benchmarks(per_item, items, names, tests, args.ngram) {
        s.push_str(&format!(
            "{}: {} of {} items contaminated; {} shorter than {} words checked whole, {} under {} words not checked\n",
            b.name, b.contaminated, b.items, b.short, args.ngram, b.unchecked, args.min_ngram
        ));
    }
    s
}
