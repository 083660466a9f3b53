//! `neardup eval --labels FILE`: ground-truth labels, read into the core's
//! [`Grouping`], which `neardup::metrics` scores.
//!
//! Labels are either **pairs** of duplicates (`{"a": ID, "b": ID}` lines, or CSV/TSV with
//! columns `a,b`) or **cluster ids** (`{"id": ID, "cluster": C}`, or columns `id,cluster`),
//! the format chosen by the file's extension (`.jsonl`, `.ndjson`, `.json`, `.csv`, `.tsv`,
//! `.tab`; a `.gz` after it is decompressed). The kind is that of the first label; every
//! label must be of that kind.
//!
//! The file is read by `neardup-io`'s readers, so a label's id is read exactly as the
//! data's id is: a JSON string unescaped (a lone surrogate replaced), a JSON number (or
//! any other value) as its source text (`8.50` stays `8.50`), `null` as absent; a CSV
//! field with CSV quoting; a TSV field verbatim, without quoting (a `"` is an ordinary
//! character, as in TSV data). Cluster ids follow the same rule (`"7"` and `7` are one
//! cluster). Column names must match exactly. Blank lines are ignored; any other record
//! the reader skips (malformed JSON, a short row, an unclosed quote) is an error naming
//! the file and line.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use neardup::metrics::{ClusteringBuilder, Grouping, GroupingKind as LabelKind};
use neardup_io::{Entry, Format, ReadOptions, Reader, Record, SkipReason};

/// The format of a labels file from its name (JSONL, CSV or TSV, as the readers tell
/// it from an extension: `.jsonl`, `.ndjson`, `.json`, `.csv`, `.tsv` or `.tab`, before
/// any `.gz`).
pub fn label_format(path: &Path) -> Option<Format> {
    Format::from_extension(path).filter(|f| matches!(f, Format::Jsonl | Format::Csv | Format::Tsv))
}

/// Reads a labels file; the format comes from its extension.
pub fn read_labels(path: &Path) -> Result<Grouping> {
    let name = path.display().to_string();
    let Some(format) = label_format(path) else {
        bail!(
            "cannot tell the format of labels file {name}: expected a name ending in \
             .jsonl, .ndjson, .json, .csv or .tsv"
        );
    };
    parse_labels(&|opts| neardup_io::open(path, opts), format, &name)
}

/// Opens the labels with the given reading options (the file, or bytes in a test).
type Open<'a> = dyn Fn(&ReadOptions) -> neardup_io::Result<Reader> + 'a;

/// The two fields of a label of `kind`: (a, b) or (id, cluster).
fn fields(kind: LabelKind) -> (&'static str, &'static str) {
    match kind {
        LabelKind::Pairs => ("a", "b"),
        LabelKind::Clusters => ("id", "cluster"),
    }
}

/// Reads the first field of a label as the record's id, the second as its key, and no
/// text: the readers' id rule for both.
fn options(format: Format, kind: LabelKind) -> ReadOptions {
    let (first, second) = fields(kind);
    let opts = ReadOptions::default()
        .with_format(format)
        .with_key_field(second);
    match format {
        Format::Jsonl => opts.with_text_field("").with_id_field(first),
        // CSV/TSV need a text column: the id's own serves.
        _ => opts.with_text_columns([first]).with_id_column(first),
    }
}

/// Reads labels through `open`; `source` names them in messages ("FILE:LINE: …").
fn parse_labels(open: &Open, format: Format, source: &str) -> Result<Grouping> {
    // The readers' errors name the file already.
    let context = || "cannot read the labels file".to_string();
    let Some((kind, reader)) = open_labels(open, format, source)? else {
        bail!("{source}: no labels");
    };
    let mut labels = Collector::new(source, kind);
    for entry in reader {
        if let Some(record) = label_record(entry.with_context(context)?, source)? {
            labels.add(record)?;
        }
    }
    labels.finish()
}

/// The record of a label; None for a blank line; an error for any other skipped record.
fn label_record(entry: Entry, source: &str) -> Result<Option<Record>> {
    let skipped = match entry {
        Entry::Record(r) => return Ok(Some(r)),
        Entry::Skipped(s) => s,
    };
    let line = skipped.location.line;
    match skipped.reason {
        SkipReason::BlankLine => Ok(None),
        SkipReason::MalformedJson(why) => bail!("{source}:{line}: not a JSON object: {why}"),
        SkipReason::MissingColumns { expected, found } => {
            bail!("{source}:{line}: {found} fields, the header has {expected}")
        }
        SkipReason::UnclosedQuote { .. } => {
            bail!("{source}:{line}: unterminated quoted field (it runs to the end of the file)")
        }
        other => bail!("{source}:{line}: {other}"),
    }
}

/// The kind of the labels and a reader of them from the start; None if there is no label.
/// CSV/TSV: the kind whose columns the header names. JSONL: the kind whose two fields the
/// first object has.
fn open_labels(open: &Open, format: Format, source: &str) -> Result<Option<(LabelKind, Reader)>> {
    // The readers' errors name the file already.
    let context = || "cannot read the labels file".to_string();
    let mut header = Vec::new();
    let mut first_line = 0;
    for kind in [LabelKind::Pairs, LabelKind::Clusters] {
        let mut reader = match open(&options(format, kind)) {
            Err(neardup_io::Error::MissingColumn { available, .. }) => {
                header = available;
                continue;
            }
            other => other.with_context(context)?,
        };
        let first = loop {
            match reader.next() {
                None => return Ok(None),
                Some(entry) => {
                    if let Some(r) = label_record(entry.with_context(context)?, source)? {
                        break r;
                    }
                }
            }
        };
        if format != Format::Jsonl || (first.id.is_some() && first.key.is_some()) {
            return Ok(Some((
                kind,
                open(&options(format, kind)).with_context(context)?,
            )));
        }
        first_line = first.location.line;
    }
    if format == Format::Jsonl {
        bail!(
            "{source}:{first_line}: expected {{\"a\": ID, \"b\": ID}} (a pair) or \
             {{\"id\": ID, \"cluster\": C}} (a cluster label)"
        );
    }
    bail!(
        "{source}:1: the header must name the columns a,b (pairs) or id,cluster (cluster \
         labels); it has {}",
        header.join(if format == Format::Csv { "," } else { "\t" })
    )
}

/// Gathers labels of one kind, remembering the line of each clustered id.
struct Collector<'a> {
    source: &'a str,
    kind: LabelKind,
    /// The line of the first label (the one that set the kind).
    first_line: Option<u64>,
    pairs: Vec<(String, String)>,
    clusters: ClusteringBuilder,
    cluster_lines: HashMap<String, u64>,
}

impl<'a> Collector<'a> {
    fn new(source: &'a str, kind: LabelKind) -> Self {
        Collector {
            source,
            kind,
            first_line: None,
            pairs: Vec::new(),
            clusters: ClusteringBuilder::default(),
            cluster_lines: HashMap::new(),
        }
    }

    fn add(&mut self, record: Record) -> Result<()> {
        let source = self.source;
        let line = record.location.line;
        let first_line = *self.first_line.get_or_insert(line);
        let (first, second) = fields(self.kind);
        let (Some(x), Some(y)) = (record.id, record.key) else {
            bail!(
                "{source}:{line}: a {} label needs the fields {first:?} and {second:?} (not \
                 null), as line {first_line} has",
                name(self.kind)
            );
        };
        if x.is_empty() || (self.kind == LabelKind::Pairs && y.is_empty()) {
            bail!("{source}:{line}: empty id");
        }
        match self.kind {
            LabelKind::Pairs => {
                if x == y {
                    bail!("{source}:{line}: a pair of {x:?} with itself");
                }
                self.pairs.push((x, y));
            }
            LabelKind::Clusters => {
                if let Err(c) = self.clusters.add(&x, &y) {
                    let first = self.cluster_lines.get(&x).copied().unwrap_or(0);
                    bail!("{source}:{line}: {c} (line {first})");
                }
                self.cluster_lines.entry(x).or_insert(line);
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Grouping> {
        match self.kind {
            LabelKind::Pairs => Ok(Grouping::from_pairs(
                self.pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())),
            )),
            LabelKind::Clusters => Ok(self.clusters.build()),
        }
    }
}

fn name(kind: LabelKind) -> &'static str {
    match kind {
        LabelKind::Pairs => "pair",
        LabelKind::Clusters => "cluster",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use neardup::metrics::{adjusted_rand_index, pair_metrics};

    /// Labels from `text`, named "L" in messages.
    fn parse(text: &str, format: Format) -> Result<Grouping> {
        let bytes = text.as_bytes().to_vec();
        let open = move |opts: &ReadOptions| {
            Reader::from_reader(std::io::Cursor::new(bytes.clone()), "L", opts)
        };
        parse_labels(&open, format, "L")
    }

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/labels")
            .join(name)
    }

    #[test]
    fn fixtures_agree_across_formats() {
        let pairs_jsonl = read_labels(&fixture("pairs.jsonl")).unwrap();
        let pairs_csv = read_labels(&fixture("pairs.csv")).unwrap();
        let clusters_jsonl = read_labels(&fixture("clusters.jsonl")).unwrap();
        let clusters_csv = read_labels(&fixture("clusters.csv")).unwrap();
        let clusters_tsv = read_labels(&fixture("clusters.tsv")).unwrap();
        assert_eq!(pairs_jsonl.kind(), LabelKind::Pairs);
        assert_eq!(clusters_csv.kind(), LabelKind::Clusters);
        // The pair files list all pairs within the clusters {1,2,3} {4,5,6} {"8.50","x,y"}
        // (and a repeat): 3 + 3 + 1 = 7 pairs.
        for g in [&pairs_jsonl, &pairs_csv] {
            assert_eq!(g.pair_count(), 7);
            assert!(g.contains("8.50") && g.contains("x,y"));
        }
        for g in [&clusters_jsonl, &clusters_csv, &clusters_tsv] {
            assert_eq!(g.pair_count(), 7);
            assert_eq!(g.documents(), 9);
            for other in [&pairs_jsonl, &pairs_csv, &clusters_jsonl, &clusters_csv] {
                let m = pair_metrics(g, other);
                assert_eq!((m.predicted, m.labelled, m.both), (7, 7, 7));
                assert_eq!(adjusted_rand_index(g, other, 9), 1.0);
            }
        }
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let err = |name: &str| format!("{:#}", read_labels(&fixture(name)).unwrap_err());
        let e = err("bad-mixed.jsonl");
        assert!(
            e.contains(
                "bad-mixed.jsonl:3: a pair label needs the fields \"a\" and \"b\" (not null), \
                 as line 1 has"
            ),
            "{e}"
        );
        let e = err("bad-conflict.csv");
        assert!(
            e.contains(
                "bad-conflict.csv:4: id \"b\" is in cluster \"1\" and in cluster \"2\" (line 3)"
            ),
            "{e}"
        );
        let e = err("bad-null.jsonl");
        assert!(
            e.contains("bad-null.jsonl:2: a pair label needs the fields \"a\" and \"b\""),
            "{e}"
        );
        let e = format!("{:#}", read_labels(&fixture("missing.csv")).unwrap_err());
        assert!(
            e.contains("cannot read the labels file: ") && e.matches("missing.csv").count() == 1,
            "{e}"
        );
        let e = format!("{:#}", read_labels(Path::new("labels.txt")).unwrap_err());
        assert!(
            e.contains("cannot tell the format of labels file labels.txt"),
            "{e}"
        );

        let parse = |text: &str, f: Format| format!("{:#}", parse(text, f).unwrap_err());
        assert_eq!(parse("", Format::Jsonl), "L: no labels");
        assert!(parse("\n{\"a\": 1}\n", Format::Jsonl).starts_with("L:2: expected"));
        assert!(parse("{\"a\": 1, \"b\": 1}", Format::Jsonl)
            .contains("L:1: a pair of \"1\" with itself"));
        assert!(parse("not json", Format::Jsonl).starts_with("L:1: not a JSON object"));
        assert!(parse("x,y\n1,2\n", Format::Csv).starts_with("L:1: the header must name"));
        assert!(parse("a,b\n1\n", Format::Csv).starts_with("L:2: 1 fields, the header has 2"));
        assert!(parse("a,b\n\"1,2\n", Format::Csv).starts_with("L:2: unterminated quoted field"));
        assert!(parse("id,cluster\n,3\n", Format::Csv).starts_with("L:2: empty id"));
        assert_eq!(parse("a,b\n", Format::Csv), "L: no labels");
        assert_eq!(parse("", Format::Tsv), "L: no labels");
    }

    #[test]
    fn csv_quoting_and_line_ends() {
        let text = "\u{feff}\"a\",b,note\r\n\"x, \"\"quoted\"\"\",y,\"two\nlines\"\r\n\r\nz,w,\n";
        let g = parse(text, Format::Csv).unwrap();
        assert!(g.contains("x, \"quoted\"") && g.contains("y") && g.contains("z"));
        assert_eq!(g.pair_count(), 2);
        // Line numbers count the newline inside quotes.
        let bad = "a,b\n\"p\",\"q\nr\"\ns,s\n";
        let e = format!("{:#}", parse(bad, Format::Csv).unwrap_err());
        assert!(e.starts_with("L:4: a pair of \"s\" with itself"), "{e}");
        let tsv = parse("id\tcluster\n1\ta\n2\ta\n", Format::Tsv).unwrap();
        assert_eq!(tsv.pair_count(), 1);
    }

    /// Labels read ids with the data's rule: TSV has no quoting (a user-visible change:
    /// the labels' own parser used to read TSV with CSV quoting), and a JSON value that
    /// is neither a string nor a number is its source text, as a data id is.
    #[test]
    fn label_ids_follow_the_readers_id_rule() {
        let data = "id\ttext\n\"x,y\"\tsome text\n";
        let opts = ReadOptions::default()
            .with_format(Format::Tsv)
            .with_id_column("id");
        let record = Reader::from_reader(std::io::Cursor::new(data), "d.tsv", &opts)
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(record.id(), Some("\"x,y\""));
        let tsv = parse("id\tcluster\n\"x,y\"\t1\nz\t1\n", Format::Tsv).unwrap();
        assert!(tsv.contains("\"x,y\"") && !tsv.contains("x,y"));
        assert!(tsv.together("\"x,y\"", "z"));
        // CSV quotes, as for CSV data.
        let csv = parse("id,cluster\n\"x,y\",1\nz,1\n", Format::Csv).unwrap();
        assert!(csv.contains("x,y"));
        // JSON: true is the id "true"; a lone surrogate is replaced, as in a data id.
        let g = parse("{\"a\": true, \"b\": \"\\ud800\"}\n", Format::Jsonl).unwrap();
        assert!(g.together("true", "\u{FFFD}"));
    }

    #[test]
    fn json_ids_keep_their_text() {
        let g = parse(
            "{\"a\": 8.50, \"b\": -1e3, \"extra\": [1]}\n{\"a\": \"\\u00e9\", \"b\": 10}\n",
            Format::Jsonl,
        )
        .unwrap();
        for id in ["8.50", "-1e3", "é", "10"] {
            assert!(g.contains(id), "{id}");
        }
        let g = parse(
            "{\"id\": 1, \"cluster\": 7}\n{\"id\": 2, \"cluster\": \"7\"}\n",
            Format::Jsonl,
        )
        .unwrap();
        assert_eq!(g.pair_count(), 1);
    }

    #[test]
    fn formats_from_names() {
        let f = |n: &str| label_format(Path::new(n));
        assert_eq!(f("l.jsonl"), Some(Format::Jsonl));
        assert_eq!(f("l.JSON"), Some(Format::Jsonl));
        assert_eq!(f("l.csv"), Some(Format::Csv));
        assert_eq!(f("l.tsv"), Some(Format::Tsv));
        assert_eq!(f("dir.d/l.jsonl.gz"), Some(Format::Jsonl));
        assert_eq!(f("l.gz"), None);
        assert_eq!(f("l.txt"), None);
        assert_eq!(f("labels"), None);
    }
}
