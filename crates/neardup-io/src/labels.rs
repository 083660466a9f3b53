//! Ground-truth labels for evaluating a run: a labels file read into [`Labels`], which a
//! front end turns into whatever it scores with (the command line: the core's
//! `Grouping`).
//!
//! Labels are either **pairs** of duplicates (`{"a": ID, "b": ID}` lines, or CSV/TSV with
//! columns `a,b`) or **cluster ids** (`{"id": ID, "cluster": C}`, or columns `id,cluster`),
//! the format chosen by the file's extension (`.jsonl`, `.ndjson`, `.json`, `.csv`, `.tsv`,
//! `.tab`; a `.gz` after it is decompressed). The kind is that of the first label; every
//! label must be of that kind.
//!
//! The file is read by this crate's readers, so a label's id is read exactly as the
//! data's id is: a JSON string unescaped (a lone surrogate replaced), a JSON number (or
//! any other value) as its source text (`8.50` stays `8.50`), `null` as absent; a CSV
//! field with CSV quoting; a TSV field verbatim, without quoting (a `"` is an ordinary
//! character, as in TSV data). Cluster ids follow the same rule (`"7"` and `7` are one
//! cluster). Column names must match exactly. Blank lines are ignored; any other record
//! the reader skips (malformed JSON, a short row, an unclosed quote) is an error naming
//! the file and line, as is a label without both fields, an empty id or a pair of an id
//! with itself.

use std::path::Path;

use crate::{Entry, Format, ReadOptions, Reader, Record, SkipReason};

/// What the labels of a file are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelKind {
    /// Pairs of duplicates: `a`, `b`.
    Pairs,
    /// Cluster ids: `id`, `cluster`.
    Clusters,
}

/// One label: a pair `(a, b)`, or a document `id` and its `cluster`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// The 1-based line it starts on.
    pub line: u64,
    /// `a`, or the document's id.
    pub first: String,
    /// `b`, or the cluster id.
    pub second: String,
}

/// The labels of a file, all of one kind, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Labels {
    /// Pairs or cluster ids.
    pub kind: LabelKind,
    /// The labels, in file order (repeats kept).
    pub labels: Vec<Label>,
}

/// Why a labels file could not be read. Messages name the file and, for a bad label, the
/// line (`FILE:LINE: …`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabelsError {
    /// The file's name does not say JSONL, CSV or TSV.
    #[error(
        "cannot tell the format of labels file {0}: expected a name ending in .jsonl, \
         .ndjson, .json, .csv or .tsv"
    )]
    UnknownFormat(String),
    /// The file could not be opened or read.
    #[error("cannot read the labels file")]
    Read(#[source] crate::Error),
    /// A label (or the file's header, or its first label) is not one of the two kinds.
    #[error("{0}")]
    Invalid(String),
}

/// The format of a labels file from its name (JSONL, CSV or TSV, as the readers tell
/// it from an extension: `.jsonl`, `.ndjson`, `.json`, `.csv`, `.tsv` or `.tab`, before
/// any `.gz`).
pub fn label_format(path: &Path) -> Option<Format> {
    Format::from_extension(path).filter(|f| matches!(f, Format::Jsonl | Format::Csv | Format::Tsv))
}

/// Reads a labels file; the format comes from its extension.
pub fn read_labels(path: &Path) -> Result<Labels, LabelsError> {
    let name = path.display().to_string();
    let Some(format) = label_format(path) else {
        return Err(LabelsError::UnknownFormat(name));
    };
    parse_labels(&|opts| crate::open(path, opts), format, &name)
}

/// Reads labels from bytes in `format`; `source` names them in messages.
pub fn parse_labels_from(
    bytes: &[u8],
    format: Format,
    source: &str,
) -> Result<Labels, LabelsError> {
    let open = |opts: &ReadOptions| {
        Reader::from_reader(std::io::Cursor::new(bytes.to_vec()), source, opts)
    };
    parse_labels(&open, format, source)
}

/// Opens the labels with the given reading options (the file, or bytes).
type Open<'a> = dyn Fn(&ReadOptions) -> crate::Result<Reader> + 'a;

/// An invalid label's error.
macro_rules! invalid {
    ($($arg:tt)*) => {
        return Err(LabelsError::Invalid(format!($($arg)*)))
    };
}

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
fn parse_labels(open: &Open, format: Format, source: &str) -> Result<Labels, LabelsError> {
    let Some((kind, reader)) = open_labels(open, format, source)? else {
        invalid!("{source}: no labels");
    };
    let mut labels = Labels {
        kind,
        labels: Vec::new(),
    };
    for entry in reader {
        if let Some(record) = label_record(entry.map_err(LabelsError::Read)?, source)? {
            labels.add(record, source)?;
        }
    }
    Ok(labels)
}

impl Labels {
    /// Adds a label's record, checked: both fields, a nonempty id, not a pair of an id
    /// with itself.
    fn add(&mut self, record: Record, source: &str) -> Result<(), LabelsError> {
        let line = record.location.line;
        let first_line = self.labels.first().map_or(line, |l| l.line);
        let (first, second) = fields(self.kind);
        let (Some(x), Some(y)) = (record.id, record.key) else {
            invalid!(
                "{source}:{line}: a {} label needs the fields {first:?} and {second:?} (not \
                 null), as line {first_line} has",
                match self.kind {
                    LabelKind::Pairs => "pair",
                    LabelKind::Clusters => "cluster",
                }
            );
        };
        if x.is_empty() || (self.kind == LabelKind::Pairs && y.is_empty()) {
            invalid!("{source}:{line}: empty id");
        }
        if self.kind == LabelKind::Pairs && x == y {
            invalid!("{source}:{line}: a pair of {x:?} with itself");
        }
        self.labels.push(Label {
            line,
            first: x,
            second: y,
        });
        Ok(())
    }
}

/// The record of a label; None for a blank line; an error for any other skipped record.
fn label_record(entry: Entry, source: &str) -> Result<Option<Record>, LabelsError> {
    let skipped = match entry {
        Entry::Record(r) => return Ok(Some(r)),
        Entry::Skipped(s) => s,
    };
    let line = skipped.location.line;
    match skipped.reason {
        SkipReason::BlankLine => Ok(None),
        SkipReason::MalformedJson(why) => {
            invalid!("{source}:{line}: not a JSON object: {why}")
        }
        SkipReason::MissingColumns { expected, found } => {
            invalid!("{source}:{line}: {found} fields, the header has {expected}")
        }
        SkipReason::UnclosedQuote { .. } => {
            invalid!("{source}:{line}: unterminated quoted field (it runs to the end of the file)")
        }
        other => invalid!("{source}:{line}: {other}"),
    }
}

/// The kind of the labels and a reader of them from the start; None if there is no label.
/// CSV/TSV: the kind whose columns the header names. JSONL: the kind whose two fields the
/// first object has.
fn open_labels(
    open: &Open,
    format: Format,
    source: &str,
) -> Result<Option<(LabelKind, Reader)>, LabelsError> {
    let mut header = Vec::new();
    let mut first_line = 0;
    for kind in [LabelKind::Pairs, LabelKind::Clusters] {
        let mut reader = match open(&options(format, kind)) {
            Err(crate::Error::MissingColumn { available, .. }) => {
                header = available;
                continue;
            }
            other => other.map_err(LabelsError::Read)?,
        };
        let first = loop {
            match reader.next() {
                None => return Ok(None),
                Some(entry) => {
                    if let Some(r) = label_record(entry.map_err(LabelsError::Read)?, source)? {
                        break r;
                    }
                }
            }
        };
        if format != Format::Jsonl || (first.id.is_some() && first.key.is_some()) {
            return Ok(Some((
                kind,
                open(&options(format, kind)).map_err(LabelsError::Read)?,
            )));
        }
        first_line = first.location.line;
    }
    if format == Format::Jsonl {
        invalid!(
            "{source}:{first_line}: expected {{\"a\": ID, \"b\": ID}} (a pair) or \
             {{\"id\": ID, \"cluster\": C}} (a cluster label)"
        );
    }
    Err(LabelsError::Invalid(format!(
        "{source}:1: the header must name the columns a,b (pairs) or id,cluster (cluster \
         labels); it has {}",
        header.join(if format == Format::Csv { "," } else { "\t" })
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Labels from `text`, named "L" in messages.
    fn parse(text: &str, format: Format) -> Result<Labels, LabelsError> {
        parse_labels_from(text.as_bytes(), format, "L")
    }

    /// The labels as `(first, second)` pairs.
    fn ids(labels: &Labels) -> Vec<(&str, &str)> {
        labels
            .labels
            .iter()
            .map(|l| (l.first.as_str(), l.second.as_str()))
            .collect()
    }

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/labels")
            .join(name)
    }

    #[test]
    fn fixtures_read_alike_in_every_format() {
        let pairs_jsonl = read_labels(&fixture("pairs.jsonl")).unwrap();
        let pairs_csv = read_labels(&fixture("pairs.csv")).unwrap();
        assert_eq!(pairs_jsonl.kind, LabelKind::Pairs);
        // The same pairs, each either way round.
        let unordered = |l: &Labels| {
            let mut pairs: Vec<(String, String)> = ids(l)
                .into_iter()
                .map(|(a, b)| (a.min(b).to_string(), a.max(b).to_string()))
                .collect();
            pairs.sort();
            pairs
        };
        assert_eq!(unordered(&pairs_jsonl), unordered(&pairs_csv));
        assert_eq!(pairs_csv.labels.len(), 8);
        assert!(ids(&pairs_csv).contains(&("8.50", "x,y")));
        let clusters = ["clusters.jsonl", "clusters.csv", "clusters.tsv"]
            .map(|name| read_labels(&fixture(name)).unwrap());
        for c in &clusters {
            assert_eq!(c.kind, LabelKind::Clusters);
            assert_eq!(c.labels.len(), 9);
        }
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let err = |name: &str| read_labels(&fixture(name)).unwrap_err().to_string();
        let e = err("bad-mixed.jsonl");
        assert!(
            e.contains(
                "bad-mixed.jsonl:3: a pair label needs the fields \"a\" and \"b\" (not null), \
                 as line 1 has"
            ),
            "{e}"
        );
        let e = err("bad-null.jsonl");
        assert!(
            e.contains("bad-null.jsonl:2: a pair label needs the fields \"a\" and \"b\""),
            "{e}"
        );
        // A conflict between cluster ids is the scorer's to find: both labels are read.
        assert_eq!(
            read_labels(&fixture("bad-conflict.csv")).unwrap().kind,
            LabelKind::Clusters
        );
        let e = read_labels(&fixture("missing.csv")).unwrap_err();
        assert!(matches!(e, LabelsError::Read(_)), "{e}");
        assert_eq!(e.to_string(), "cannot read the labels file");
        let e = read_labels(Path::new("labels.txt"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("cannot tell the format of labels file labels.txt"),
            "{e}"
        );

        let parse = |text: &str, f: Format| parse(text, f).unwrap_err().to_string();
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
        let labels = parse(text, Format::Csv).unwrap();
        assert_eq!(ids(&labels), [("x, \"quoted\"", "y"), ("z", "w")]);
        // Line numbers count the newline inside quotes.
        assert_eq!(labels.labels[1].line, 5);
        let bad = "a,b\n\"p\",\"q\nr\"\ns,s\n";
        let e = parse(bad, Format::Csv).unwrap_err().to_string();
        assert!(e.starts_with("L:4: a pair of \"s\" with itself"), "{e}");
        let tsv = parse("id\tcluster\n1\ta\n2\ta\n", Format::Tsv).unwrap();
        assert_eq!(ids(&tsv), [("1", "a"), ("2", "a")]);
    }

    /// Labels read ids with the data's rule: TSV has no quoting, and a JSON value that
    /// is neither a string nor a number is its source text, as a data id is.
    #[test]
    fn label_ids_follow_the_readers_id_rule() {
        let tsv = parse("id\tcluster\n\"x,y\"\t1\nz\t1\n", Format::Tsv).unwrap();
        assert_eq!(ids(&tsv), [("\"x,y\"", "1"), ("z", "1")]);
        // CSV quotes, as for CSV data.
        let csv = parse("id,cluster\n\"x,y\",1\nz,1\n", Format::Csv).unwrap();
        assert_eq!(ids(&csv)[0], ("x,y", "1"));
        // JSON: true is the id "true"; a lone surrogate is replaced, as in a data id.
        let g = parse("{\"a\": true, \"b\": \"\\ud800\"}\n", Format::Jsonl).unwrap();
        assert_eq!(ids(&g), [("true", "\u{FFFD}")]);
    }

    #[test]
    fn json_ids_keep_their_text() {
        let g = parse(
            "{\"a\": 8.50, \"b\": -1e3, \"extra\": [1]}\n{\"a\": \"\\u00e9\", \"b\": 10}\n",
            Format::Jsonl,
        )
        .unwrap();
        assert_eq!(ids(&g), [("8.50", "-1e3"), ("\u{e9}", "10")]);
        let g = parse(
            "{\"id\": 1, \"cluster\": 7}\n{\"id\": 2, \"cluster\": \"7\"}\n",
            Format::Jsonl,
        )
        .unwrap();
        assert_eq!(ids(&g), [("1", "7"), ("2", "7")]);
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
