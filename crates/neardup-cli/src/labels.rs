//! `neardup eval --labels FILE`: ground-truth labels and the metrics that compare a run
//! with them.
//!
//! Labels are either **pairs** of duplicates (`{"a": ID, "b": ID}` lines, or CSV/TSV with
//! columns `a,b`) or **cluster ids** (`{"id": ID, "cluster": C}`, or columns `id,cluster`),
//! the format chosen by the file's extension. Ids are text: a JSON number keeps its source
//! text (`8.50` stays `8.50`), as neardup's readers do; cluster ids likewise (so `"7"` and
//! `7` are the same cluster).
//!
//! Labels become a [`Grouping`] of the core's `metrics` module, which scores them.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use neardup::metrics::{ClusteringBuilder, Grouping, GroupingKind as LabelKind};
use serde_json::value::RawValue;

/// The syntax of a labels file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelFormat {
    Jsonl,
    Csv,
    Tsv,
}

impl LabelFormat {
    /// The format from a file name: `.jsonl`, `.ndjson`, `.json`, `.csv` or `.tsv`.
    pub fn from_path(path: &Path) -> Option<LabelFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "jsonl" | "ndjson" | "json" => Some(LabelFormat::Jsonl),
            "csv" => Some(LabelFormat::Csv),
            "tsv" | "tab" => Some(LabelFormat::Tsv),
            _ => None,
        }
    }
}

/// Reads a labels file; the format comes from its extension.
pub fn read_labels(path: &Path) -> Result<Grouping> {
    let name = path.display().to_string();
    let Some(format) = LabelFormat::from_path(path) else {
        bail!(
            "cannot tell the format of labels file {name}: expected a name ending in \
             .jsonl, .ndjson, .json, .csv or .tsv"
        );
    };
    let bytes = std::fs::read(path).with_context(|| format!("cannot read labels file {name}"))?;
    parse_labels(&String::from_utf8_lossy(&bytes), format, &name)
}

/// Parses labels from `text`; `source` names the file in error messages ("FILE:LINE: …").
pub fn parse_labels(text: &str, format: LabelFormat, source: &str) -> Result<Grouping> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut labels = Collector::new(source);
    match format {
        LabelFormat::Jsonl => parse_jsonl(text, &mut labels)?,
        LabelFormat::Csv => parse_delimited(text, b',', &mut labels)?,
        LabelFormat::Tsv => parse_delimited(text, b'\t', &mut labels)?,
    }
    labels.finish()
}

/// Gathers labels of one kind, remembering the line that set the kind.
struct Collector<'a> {
    source: &'a str,
    kind: Option<(LabelKind, usize)>,
    pairs: Vec<(String, String)>,
    clusters: ClusteringBuilder,
    cluster_lines: HashMap<String, usize>,
}

impl<'a> Collector<'a> {
    fn new(source: &'a str) -> Self {
        Collector {
            source,
            kind: None,
            pairs: Vec::new(),
            clusters: ClusteringBuilder::default(),
            cluster_lines: HashMap::new(),
        }
    }

    fn kind(&mut self, kind: LabelKind, line: usize) -> Result<()> {
        match self.kind {
            None => self.kind = Some((kind, line)),
            Some((k, first)) if k != kind => bail!(
                "{}:{line}: a {} label in a file of {} labels (line {first} is one)",
                self.source,
                name(kind),
                name(k)
            ),
            Some(_) => {}
        }
        Ok(())
    }

    fn pair(&mut self, a: String, b: String, line: usize) -> Result<()> {
        self.kind(LabelKind::Pairs, line)?;
        for id in [&a, &b] {
            if id.is_empty() {
                bail!("{}:{line}: empty id", self.source);
            }
        }
        if a == b {
            bail!("{}:{line}: a pair of {a:?} with itself", self.source);
        }
        self.pairs.push((a, b));
        Ok(())
    }

    fn member(&mut self, id: String, cluster: String, line: usize) -> Result<()> {
        self.kind(LabelKind::Clusters, line)?;
        if id.is_empty() {
            bail!("{}:{line}: empty id", self.source);
        }
        if let Err(c) = self.clusters.add(&id, &cluster) {
            let first = self.cluster_lines.get(&id).copied().unwrap_or(0);
            bail!("{}:{line}: {c} (line {first})", self.source);
        }
        self.cluster_lines.entry(id).or_insert(line);
        Ok(())
    }

    fn finish(self) -> Result<Grouping> {
        match self.kind {
            None => bail!("{}: no labels", self.source),
            Some((LabelKind::Pairs, _)) => Ok(Grouping::from_pairs(
                self.pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())),
            )),
            Some((LabelKind::Clusters, _)) => Ok(self.clusters.build()),
        }
    }
}

fn name(kind: LabelKind) -> &'static str {
    match kind {
        LabelKind::Pairs => "pair",
        LabelKind::Clusters => "cluster",
    }
}

/// A JSON string unescaped or a JSON number's source text.
fn json_text(raw: &RawValue, field: &str, source: &str, line: usize) -> Result<String> {
    let json = raw.get();
    if json.starts_with('"') {
        return serde_json::from_str::<String>(json)
            .with_context(|| format!("{source}:{line}: bad string in field {field:?}"));
    }
    if json.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        return Ok(json.to_string());
    }
    bail!("{source}:{line}: field {field:?} must be a string or a number, not {json}")
}

fn parse_jsonl(text: &str, labels: &mut Collector) -> Result<()> {
    let source = labels.source;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let object: HashMap<String, &RawValue> = serde_json::from_str(line)
            .with_context(|| format!("{source}:{n}: not a JSON object"))?;
        let field = |f: &str| -> Result<Option<String>> {
            object
                .get(f)
                .map(|raw| json_text(raw, f, source, n))
                .transpose()
        };
        match (field("a")?, field("b")?, field("id")?, field("cluster")?) {
            (Some(a), Some(b), _, _) => labels.pair(a, b, n)?,
            (_, _, Some(id), Some(c)) => labels.member(id, c, n)?,
            _ => bail!(
                "{source}:{n}: expected {{\"a\": ID, \"b\": ID}} (a pair) or \
                 {{\"id\": ID, \"cluster\": C}} (a cluster label)"
            ),
        }
    }
    Ok(())
}

/// One record of delimited text: its fields and the line it starts on.
type Row = (Vec<String>, usize);

/// Splits CSV/TSV into records (RFC 4180: quoted fields may hold the delimiter, newlines
/// and doubled quotes; CRLF or LF line ends). Blank lines are skipped.
fn records(text: &str, delimiter: u8, source: &str) -> Result<Vec<Row>> {
    let bytes = text.as_bytes();
    let mut rows = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < bytes.len() {
        let start_line = line;
        let mut fields = Vec::new();
        let mut field = Vec::new();
        let mut quoted = false;
        let mut at_start = true;
        loop {
            let Some(&c) = bytes.get(i) else {
                if quoted {
                    bail!("{source}:{start_line}: unterminated quoted field");
                }
                break;
            };
            i += 1;
            if quoted {
                match c {
                    b'"' if bytes.get(i) == Some(&b'"') => {
                        field.push(b'"');
                        i += 1;
                    }
                    b'"' => quoted = false,
                    b'\n' => {
                        line += 1;
                        field.push(c);
                    }
                    _ => field.push(c),
                }
                continue;
            }
            match c {
                b'"' if at_start => {
                    quoted = true;
                    at_start = false;
                }
                b'\n' => {
                    line += 1;
                    break;
                }
                b'\r' if bytes.get(i) == Some(&b'\n') => {}
                c if c == delimiter => {
                    fields.push(std::mem::take(&mut field));
                    at_start = true;
                }
                _ => {
                    field.push(c);
                    at_start = false;
                }
            }
        }
        fields.push(field);
        let fields: Vec<String> = fields
            .into_iter()
            .map(|f| String::from_utf8_lossy(&f).into_owned())
            .collect();
        if !(fields.len() == 1 && fields[0].trim().is_empty()) {
            rows.push((fields, start_line));
        }
    }
    Ok(rows)
}

fn parse_delimited(text: &str, delimiter: u8, labels: &mut Collector) -> Result<()> {
    let source = labels.source;
    let rows = records(text, delimiter, source)?;
    let Some(((header, header_line), rows)) = rows.split_first() else {
        bail!("{source}: no labels");
    };
    let column = |name: &str| header.iter().position(|h| h.trim() == name);
    let (kind, x, y) = match (column("a"), column("b"), column("id"), column("cluster")) {
        (Some(a), Some(b), _, _) => (LabelKind::Pairs, a, b),
        (_, _, Some(id), Some(c)) => (LabelKind::Clusters, id, c),
        _ => bail!(
            "{source}:{header_line}: the header must name the columns a,b (pairs) or \
             id,cluster (cluster labels); it has {}",
            header.join(if delimiter == b',' { "," } else { "\t" })
        ),
    };
    for (fields, line) in rows {
        if fields.len() <= x.max(y) {
            bail!(
                "{source}:{line}: {} fields, the header has {}",
                fields.len(),
                header.len()
            );
        }
        let (a, b) = (fields[x].clone(), fields[y].clone());
        match kind {
            LabelKind::Pairs => labels.pair(a, b, *line)?,
            LabelKind::Clusters => labels.member(a, b, *line)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use neardup::metrics::{adjusted_rand_index, pair_metrics};

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
                "bad-mixed.jsonl:3: a cluster label in a file of pair labels (line 1 is one)"
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
            e.contains("bad-null.jsonl:2: field \"b\" must be a string or a number, not null"),
            "{e}"
        );
        let e = format!("{:#}", read_labels(&fixture("missing.csv")).unwrap_err());
        assert!(
            e.contains("cannot read labels file") && e.contains("missing.csv"),
            "{e}"
        );
        let e = format!("{:#}", read_labels(Path::new("labels.txt")).unwrap_err());
        assert!(
            e.contains("cannot tell the format of labels file labels.txt"),
            "{e}"
        );

        let parse =
            |text: &str, f: LabelFormat| format!("{:#}", parse_labels(text, f, "L").unwrap_err());
        assert_eq!(parse("", LabelFormat::Jsonl), "L: no labels");
        assert!(parse("\n{\"a\": 1}\n", LabelFormat::Jsonl).starts_with("L:2: expected"));
        assert!(parse("{\"a\": 1, \"b\": 1}", LabelFormat::Jsonl)
            .contains("L:1: a pair of \"1\" with itself"));
        assert!(parse("not json", LabelFormat::Jsonl).starts_with("L:1: not a JSON object"));
        assert!(parse("x,y\n1,2\n", LabelFormat::Csv).starts_with("L:1: the header must name"));
        assert!(parse("a,b\n1\n", LabelFormat::Csv).starts_with("L:2: 1 fields, the header has 2"));
        assert!(
            parse("a,b\n\"1,2\n", LabelFormat::Csv).starts_with("L:2: unterminated quoted field")
        );
        assert!(parse("id,cluster\n,3\n", LabelFormat::Csv).starts_with("L:2: empty id"));
    }

    #[test]
    fn csv_quoting_and_line_ends() {
        let text = "\u{feff}\"a\",b,note\r\n\"x, \"\"quoted\"\"\",y,\"two\nlines\"\r\n\r\nz,w,\n";
        let g = parse_labels(text, LabelFormat::Csv, "L").unwrap();
        assert!(g.contains("x, \"quoted\"") && g.contains("y") && g.contains("z"));
        assert_eq!(g.pair_count(), 2);
        // Line numbers count the newline inside quotes.
        let bad = "a,b\n\"p\",\"q\nr\"\ns,s\n";
        let e = format!(
            "{:#}",
            parse_labels(bad, LabelFormat::Csv, "L").unwrap_err()
        );
        assert!(e.starts_with("L:4: a pair of \"s\" with itself"), "{e}");
        let tsv = parse_labels("id\tcluster\n1\ta\n2\ta\n", LabelFormat::Tsv, "L").unwrap();
        assert_eq!(tsv.pair_count(), 1);
    }

    #[test]
    fn json_ids_keep_their_text() {
        let g = parse_labels(
            "{\"a\": 8.50, \"b\": -1e3, \"extra\": [1]}\n{\"a\": \"\\u00e9\", \"b\": 10}\n",
            LabelFormat::Jsonl,
            "L",
        )
        .unwrap();
        for id in ["8.50", "-1e3", "é", "10"] {
            assert!(g.contains(id), "{id}");
        }
        let g = parse_labels(
            "{\"id\": 1, \"cluster\": 7}\n{\"id\": 2, \"cluster\": \"7\"}\n",
            LabelFormat::Jsonl,
            "L",
        )
        .unwrap();
        assert_eq!(g.pair_count(), 1);
    }

    #[test]
    fn formats_from_names() {
        let f = |n: &str| LabelFormat::from_path(Path::new(n));
        assert_eq!(f("l.jsonl"), Some(LabelFormat::Jsonl));
        assert_eq!(f("l.JSON"), Some(LabelFormat::Jsonl));
        assert_eq!(f("l.csv"), Some(LabelFormat::Csv));
        assert_eq!(f("l.tsv"), Some(LabelFormat::Tsv));
        assert_eq!(f("l.txt"), None);
        assert_eq!(f("labels"), None);
    }
}
