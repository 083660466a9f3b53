//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use neardup::{
    defaults, KeepPolicy, Measure, Method, Normalization, ShingleKind, SketchKind, Verification,
};
use neardup_io::documents::InputOptions;

use crate::settings::{
    EvalSettings, MatchSettings, PlanSettings, RunSettings, RuntimeSettings, ServeSettings,
    SimSettings,
};

/// Find near-duplicate documents: shingling, MinHash, LSH, exact verification.
#[derive(Parser, Debug)]
#[command(name = "neardup", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Similar pairs, one JSON object per line: {"a", "b", "jaccard", "estimate"}.
    Pairs(PairsArgs),
    /// Clusters, one JSON object per document in a cluster of 2+:
    /// {"id", "cluster", "kept", "duplicate_of", "jaccard", "estimate"}.
    Clusters(ClustersArgs),
    /// The surviving records, byte for byte, in the input's own format.
    Dedup(DedupArgs),
    /// Every record back in its own format with what dedup decided added (JSONL, CSV, TSV,
    /// Parquet).
    ///
    /// A JSONL line keeps its own bytes and gets fields before its closing brace, a CSV or
    /// TSV row columns at its end (the header too): cluster (the number, 0-based in input
    /// order, of the kept document of its cluster; its own if it is in none),
    /// cluster_size (1 in none), kept (true or false), duplicate_of (the kept
    /// document's id, null when kept), jaccard (their similarity, null when kept).
    /// Records keeping `kept` true are exactly what dedup writes. Nothing is left out: a
    /// record the readers skipped, or with no text to compare, stays in its place with
    /// kept false and the other fields null (empty in CSV/TSV); one with no place for
    /// fields (a line that is not a JSON object, a CSV row of the wrong width) is written
    /// unchanged. A Parquet file gets the five as columns after its own (int64, int64,
    /// bool, string, float64), on every row. A record that already has a field of one of
    /// these names is an error naming the file, line and field: --annotate-prefix names
    /// them apart, --force replaces the value where it stands (a Parquet column in its place). The
    /// same as `dedup --annotate`.
    Annotate(AnnotateArgs),
    /// LSH against the exact join on the same input: time, pairs, recall, precision.
    Eval(EvalArgs),
    /// Exact Jaccard and MinHash estimate of two texts (or files).
    Sim(SimArgs),
    /// The LSH plan before a run: S-curves of the chosen and alternative band plans, and,
    /// given an input, the expected candidates, missed pairs, memory and time.
    Plan(PlanArgs),
    /// Which test items (benchmark records) occur inside which corpus documents: word
    /// n-grams (13 by default) confirmed word for word, with each item's containment (the
    /// share of its n-grams in the document) and the byte spans of the text holding them.
    /// Writes one JSON object per contaminated document ({"id", "source", "line",
    /// "items": [{"test", "item", "containment", "matched", "ngrams", "spans"}]}), a
    /// summary per test file on standard error, and with -o the corpus without the
    /// contaminated documents (or annotated).
    Decontaminate(crate::decontaminate::DecontaminateArgs),
    /// A persistent index: build it, add documents, ask which indexed documents a new one
    /// is a near-duplicate of, remove, compact, check.
    #[command(subcommand)]
    Index(crate::index_args::IndexCommand),
    /// Serve an index over HTTP: add, query and remove with JSON (see /v1/openapi.json).
    Serve(ServeArgs),
}

/// `plan`: the input options of the matching commands (so a dedup command line can be
/// planned as it is), the inputs optional.
#[derive(Args, Debug, Clone)]
#[command(mut_arg("inputs", |a| a.required(false).help(
    "Input files to estimate from (optional); a uniform sample is shingled and sketched"
)))]
pub struct PlanArgs {
    #[command(flatten)]
    pub read: InputFlags,
    /// Documents in the sample, 1..=1000000.
    #[arg(long, default_value_t = 2000, value_name = "N", value_parser = parse_sample)]
    pub sample: usize,
    /// Write the S-curves as an SVG plot here.
    #[arg(long, value_name = "FILE.svg")]
    pub svg: Option<PathBuf>,
    #[command(flatten)]
    pub matching: MatchArgs,
}

/// Where documents come from: the input options (resolved into
/// neardup-io's `InputOptions` right after parsing, below).
#[derive(Args, Debug, Clone)]
pub struct InputFlags {
    /// Input files or directories; `-` reads standard input. `.gz` is read transparently.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Input format (default: from the file name; stdin: JSONL if it starts with `{`).
    #[arg(long, value_enum)]
    pub format: Option<neardup_io::Format>,
    /// JSONL: the field holding the text [default: text].
    #[arg(long, value_name = "NAME")]
    pub text_field: Option<String>,
    /// JSONL: the field holding the id [default: id, else the line number]. A field
    /// named here must be in the records.
    #[arg(long, value_name = "NAME")]
    pub id_field: Option<String>,
    /// CSV/TSV: columns joined with a space to make the text, e.g. "Title,Short
    /// Description" [default: text].
    #[arg(long, value_name = "COLS")]
    pub text_columns: Option<String>,
    /// CSV/TSV: the column holding the id [default: id, if the header has a column
    /// named so, else the record number]. A column named here must be in the header.
    #[arg(long, value_name = "COL")]
    pub id_column: Option<String>,
    /// Records longer than this many bytes are skipped (reason too_large) without being
    /// held in memory.
    #[arg(long, default_value_t = neardup_io::DEFAULT_MAX_RECORD_BYTES, value_name = "BYTES")]
    pub max_record_bytes: usize,
    /// What a malformed record does: `skip` it (counted, listed with --skipped) or
    /// `fail` the run (exit 3). Invalid UTF-8 is decoded lossily under skip, an error
    /// under fail.
    #[arg(long, value_enum, default_value_t = OnError::Skip)]
    pub on_error: OnError,
    /// TSV: decode the escapes \t, \n, \r and \\ in fields (TSV has no quoting: a field
    /// ends at a tab or a line end). Not with --quote.
    #[arg(long)]
    pub tsv_escapes: bool,
    /// TSV: read fields quoted as in CSV with this quote character, e.g. --quote '"'
    /// (default: no quoting, a `"` is text). CSV always quotes with '"'.
    #[arg(long, value_name = "CHAR", value_parser = parse_quote)]
    pub quote: Option<u8>,
    /// CSV: the character between fields [default: ,], e.g. --delimiter ';' for the
    /// semicolon-separated files spreadsheets write where the comma is a decimal mark.
    #[arg(long, value_name = "CHAR", value_parser = parse_delimiter)]
    pub delimiter: Option<u8>,
    /// Directories: include hidden files and folders (names starting with `.`; left out
    /// and counted by default).
    #[arg(long)]
    pub hidden: bool,
    /// Directories: read only the files matching this glob (repeatable); a pattern
    /// without `/` matches the file name (`*.txt`), one with `/` the path relative to the
    /// directory (`docs/**/*.md`). Files not matched are left out and counted.
    #[arg(long = "glob", value_name = "PATTERN")]
    pub globs: Vec<String>,
    /// Directories: follow symbolic links (a link loop is detected and skipped); by
    /// default a link is skipped with reason symlink.
    #[arg(long)]
    pub follow: bool,
}

/// Parses --quote: one ASCII character that is not a tab or a line end.
/// Parses an integer in `lo..=hi`, naming the range when it is not.
fn parse_in(s: &str, lo: usize, hi: usize) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!("must be an integer in {lo}..={hi}")),
    }
}

/// Parses a memory size: a number (fractions allowed) with an optional unit `K`, `M`,
/// `G` or `T` (each a power of 1024, with or without `B`/`iB`); a bare number is bytes.
pub fn parse_memory(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim().to_ascii_uppercase();
    let scale: u64 = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return Err(format!("unknown unit {unit:?}: use K, M, G or T, e.g. 8G")),
    };
    let bad = || format!("must be a size such as 8G, 500M or 1.5GiB (got {s:?})");
    let value: f64 = number.parse().map_err(|_| bad())?;
    let bytes = value * scale as f64;
    if !(1.0..=u64::MAX as f64).contains(&bytes) {
        return Err(bad());
    }
    Ok(bytes as u64)
}

fn parse_sample(s: &str) -> Result<usize, String> {
    parse_in(s, 1, 1_000_000)
}

fn parse_max_shingles(s: &str) -> Result<usize, String> {
    parse_in(s, 1, neardup::text::MAX_MAX_SHINGLES)
}

/// At most 8 threads per available core: more only costs memory and start-up time
/// (4294967296 threads never finished starting).
pub fn max_threads() -> usize {
    8 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn parse_threads(s: &str) -> Result<usize, String> {
    parse_in(s, 1, max_threads())
        .map_err(|e| format!("{e} (8 x the {} available cores)", max_threads() / 8))
}

fn parse_threshold(s: &str) -> Result<f64, String> {
    let min = neardup::run::MIN_THRESHOLD;
    match s.trim().parse::<f64>() {
        Ok(t) if (min..=1.0).contains(&t) => Ok(t),
        _ => Err(format!("must be a number in {min}..=1")),
    }
}

fn parse_quote(s: &str) -> Result<u8, String> {
    match s.as_bytes() {
        [b] if b.is_ascii() && !matches!(b, b'\t' | b'\n' | b'\r') => Ok(*b),
        _ => Err(format!(
            "the quote must be one ASCII character other than a tab or a line end, e.g. '\"' (got {s:?})"
        )),
    }
}

/// Parses --delimiter: one ASCII character that is not a quote or a line end.
fn parse_delimiter(s: &str) -> Result<u8, String> {
    match s.as_bytes() {
        [b] if b.is_ascii() && !matches!(b, b'"' | b'\n' | b'\r') => Ok(*b),
        _ => Err(format!(
            "the delimiter must be one ASCII character other than '\"' or a line end, e.g. ';' (got {s:?})"
        )),
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// Skip malformed records, count them and go on.
    Skip,
    /// Stop at the first malformed record.
    Fail,
}

/// How documents are compared.
#[derive(Args, Debug, Clone)]
pub struct MatchArgs {
    /// Shingles: `char:K` (characters) or `word:K` (words).
    #[arg(long, default_value = defaults::SHINGLE, value_name = "KIND:K")]
    pub shingle: ShingleKind,
    /// How text is normalized before shingling: `none` (as is), `basic` (lowercase,
    /// whitespace collapsed, trimmed), `nfkc` (Unicode NFKC, then basic: NFD and NFC,
    /// full-width and half-width, ligatures become the same), `aggressive` (nfkc, accents
    /// folded, punctuation removed).
    #[arg(long, value_enum, default_value_t = Normalization::Nfkc, value_name = "LEVEL")]
    pub normalize: Normalization,
    /// Keep text as is: the same as --normalize none.
    #[arg(long, conflicts_with = "normalize")]
    pub no_normalize: bool,
    /// Count repeated shingles: the i-th occurrence of a shingle is an element of its
    /// own, so similarities are the weighted Jaccard Σ min / Σ max of the shingles' counts
    /// (a page repeating a phrase differs from one saying it once).
    #[arg(long)]
    pub multiset: bool,
    /// MinHash signature length K.
    #[arg(long, default_value_t = defaults::NUM_PERM, value_name = "K")]
    pub num_perm: usize,
    /// Sketch: MinHash by one-permutation hashing (classic below 64 shingles), classic
    /// MinHash, or SimHash fingerprints compared by Hamming distance [default: oph].
    #[arg(long, value_enum)]
    pub sketch: Option<SketchKind>,
    /// What -t is a threshold of: Jaccard similarity, or the containment |A ∩ B| / |A| of
    /// the smaller document A in the larger B (pairs, eval, plan: a fragment inside a
    /// longer document).
    #[arg(long, value_enum, default_value_t = Measure::Jaccard, value_name = "MEASURE")]
    pub measure: Measure,
    /// With --sketch simhash: fingerprints at most K bits apart are candidates, 0..=16
    /// [default: 3].
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(0..=16))]
    pub hamming: Option<u32>,
    /// Seed of the MinHash permutations.
    #[arg(long, default_value_t = defaults::SEED)]
    pub seed: u64,
    /// Jaccard similarity threshold, 0.01..=1 (below 0.01 it is refused: the band plan
    /// and size windows lose precision there).
    #[arg(short, long, default_value_t = defaults::THRESHOLD, value_name = "T", value_parser = parse_threshold)]
    pub threshold: f64,
    /// Shingle positions compared exactly per document, 1..=4294967296 (default: about
    /// 16 MB of text). A pair with a longer document is reported by the MinHash estimate of
    /// the whole document, with "jaccard": null and "truncated": true, and never removes
    /// a document unless --allow-truncated is given.
    #[arg(long, default_value_t = defaults::MAX_SHINGLES, value_name = "N", value_parser = parse_max_shingles)]
    pub max_shingles: usize,
    /// pairs: do not check pairs of documents that are both verified near-duplicates of a
    /// third without sharing a bucket (LSH candidates only, recall on the S-curve).
    #[arg(long)]
    pub no_neighbours: bool,
    /// Memory a run may use, e.g. `8G`, `500M`, `2GiB` (powers of 1024; default: half of
    /// this machine's memory). pairs, clusters and dedup with LSH: an input predicted to
    /// need more in memory (8 bytes per input byte, at most) spills its sets, band keys
    /// and candidates to sorted runs in --tmp, with the same result. Otherwise a run
    /// predicted to need more, from what it holds after reading plus its band keys and
    /// signatures, is refused before sketching; `plan` says whether its estimate fits.
    #[arg(long, value_name = "SIZE", value_parser = parse_memory)]
    pub memory: Option<u64>,
    /// LSH bands (with --rows; default: chosen from the threshold for high recall).
    #[arg(long, requires = "rows")]
    pub bands: Option<usize>,
    /// LSH rows per band (with --bands).
    #[arg(long, requires = "bands")]
    pub rows: Option<usize>,
}

/// How a run behaves.
#[derive(Args, Debug, Clone)]
pub struct RuntimeArgs {
    /// Worker threads, 1..=8 × the available cores (default: all cores). Results do not
    /// depend on it.
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// No summary, no progress bars.
    #[arg(short, long)]
    pub quiet: bool,
}

/// What every batch command (pairs, clusters, dedup) takes besides its inputs and
/// matching options: the method, the outputs every command writes, the run's behaviour.
#[derive(Args, Debug, Clone)]
pub struct BatchArgs {
    /// How candidates are confirmed.
    #[arg(long, value_enum, default_value_t = Verification::Exact)]
    pub verify: Verification,
    /// How pairs are found: `auto` runs LSH and the exact join on a sample of the
    /// input, predicts what each would cost on all of it and runs the cheaper (the
    /// summary says which and why); `lsh` and `exact` choose. Both report exact
    /// similarities; the exact join finds every pair.
    #[arg(long, value_enum, default_value_t = Method::Auto, conflicts_with = "exact")]
    pub method: Method,
    /// Find every pair ≥ t with the exact set-similarity join instead of LSH (no
    /// sketch, no bands: the LSH options do not apply); the same as `--method exact`.
    #[arg(long, conflicts_with_all = ["verify", "bands", "rows", "num_perm", "sketch", "no_neighbours"])]
    pub exact: bool,
    /// Output file (default: standard output); for dedup of a directory, a new or empty
    /// output directory.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write every skipped record's location and reason here, one JSON object per line.
    #[arg(long, value_name = "FILE")]
    pub skipped: Option<PathBuf>,
    /// Write a self-contained HTML report of the run here.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// Folder for the temporary files of a run that spills to disk (see --memory;
    /// default: the system's temporary folder). They have no names and vanish with the
    /// run, even if it is killed.
    #[arg(long, value_name = "DIR")]
    pub tmp: Option<PathBuf>,
    /// Deduplicate the inputs against these files or folders (read the same way, first):
    /// their records are never removed and never written; an input record is removed when
    /// it is a near-duplicate of one of theirs (named with its file) or of an earlier kept
    /// input record. Pairs between two of theirs are not reported. Every path after it is
    /// a reference: give it after the inputs (or once per path).
    #[arg(long, value_name = "OLD", num_args = 1..)]
    pub reference: Vec<PathBuf>,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// The format of the pairs or clusters written (pairs, clusters).
#[derive(Args, Debug, Clone)]
pub struct OutputFormatArgs {
    /// Format of the pairs or clusters written (dedup writes the input's own format).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<crate::output::OutputFormat>,
}

/// How Parquet outputs are written (pairs and clusters with `--output-format parquet`,
/// dedup of Parquet inputs).
#[derive(Args, Debug, Clone)]
pub struct ParquetArgs {
    /// Compression of Parquet output: zstd (the default, level 1), zstd:LEVEL (1-22),
    /// snappy, gzip, gzip:LEVEL (0-9), lz4 or none.
    #[arg(long, value_name = "CODEC", value_parser = parse_compression)]
    pub compression: Option<neardup_io::parquet::ParquetCompression>,
    /// Rows per row group of Parquet output (at most; a row group also ends at 64 MiB of
    /// data) [default: 131072].
    #[arg(long, value_name = "ROWS", value_parser = clap::value_parser!(u64).range(1..))]
    pub row_group_size: Option<u64>,
}

fn parse_compression(s: &str) -> Result<neardup_io::parquet::ParquetCompression, String> {
    s.parse().map_err(|e: neardup_io::Error| e.to_string())
}

impl ParquetArgs {
    /// The options, when either is given.
    fn resolve(self) -> Option<neardup_io::parquet::ParquetOutput> {
        if self.compression.is_none() && self.row_group_size.is_none() {
            return None;
        }
        let mut out = neardup_io::parquet::ParquetOutput::new();
        if let Some(c) = self.compression {
            out = out.compression(c);
        }
        if let Some(rows) = self.row_group_size {
            out = out.row_group_size(usize::try_from(rows).unwrap_or(usize::MAX));
        }
        Some(out)
    }
}

/// Which document a cluster keeps (clusters, dedup).
#[derive(Args, Debug, Clone)]
pub struct KeepArgs {
    /// Which document a cluster keeps [default: first].
    #[arg(long, value_enum, conflicts_with = "keep_by")]
    pub keep: Option<KeepPolicy>,
    /// Keep the document with the smallest (`:asc`, the default) or largest (`:desc`)
    /// value of this JSONL field or CSV/TSV column, e.g. `Timestamp:desc` keeps the
    /// newest. Values compare as numbers when every value is a number, else as text;
    /// records without a value are kept last; ties keep the first.
    #[arg(long, value_name = "FIELD[:asc|:desc]")]
    pub keep_by: Option<String>,
    /// Let a pair with a document longer than --max-shingles (judged on its MinHash
    /// estimate, no exact Jaccard) remove a document. Off: both are kept.
    #[arg(long)]
    pub allow_truncated: bool,
    /// Remove every record of a cluster, the one it would keep too (none of a duplicated
    /// text survives; records of --reference stay). dedup and annotate only.
    #[arg(long)]
    pub drop_all: bool,
}

/// dedup's own outputs.
#[derive(Args, Debug, Clone)]
pub struct DedupOnlyArgs {
    /// Replace an existing, non-empty output directory (never an input).
    #[arg(long)]
    pub force: bool,
    /// Write every removed record here, one JSON object per line, with the id of the
    /// record it duplicates and their Jaccard similarity.
    #[arg(long, value_name = "FILE")]
    pub removed: Option<PathBuf>,
}

/// dedup's annotated outputs (`annotate` takes the prefix alone).
#[derive(Args, Debug, Clone)]
pub struct AnnotateFlags {
    /// Write every record back with what dedup decided added, instead of the survivors:
    /// the output of `neardup annotate` (see `neardup annotate --help`). With --force, a
    /// field that already has one of the names gets its value replaced.
    #[arg(long, conflicts_with = "cluster_size_field")]
    pub annotate: bool,
    /// Name the annotation's fields PREFIX + their names (`nd_` gives nd_kept, ...).
    #[arg(long, value_name = "PREFIX", requires = "annotate")]
    pub annotate_prefix: Option<String>,
    /// Write the survivors as dedup does, each with its cluster's size added as this
    /// JSONL field or CSV/TSV column (1 for a document in no cluster): FineWeb-2's
    /// minhash_cluster_size, to upsample by later. With --force, a field of this name
    /// gets its value replaced.
    #[arg(long, value_name = "NAME")]
    pub cluster_size_field: Option<String>,
}

/// `annotate`.
#[derive(Args, Debug, Clone)]
pub struct AnnotateArgs {
    #[command(flatten)]
    pub run: CommonRunSettings,
    #[command(flatten)]
    pub keep: KeepArgs,
    /// Name the fields PREFIX + their names (`nd_` gives nd_kept, ...).
    #[arg(long, value_name = "PREFIX")]
    pub annotate_prefix: Option<String>,
    /// Replace the value of a field or column that already has one of the names, where it
    /// stands (default: an error naming the file, line and field).
    #[arg(long)]
    pub force: bool,
    /// Write every removed record here, one JSON object per line, as dedup --removed.
    #[arg(long, value_name = "FILE")]
    pub removed: Option<PathBuf>,
    #[command(flatten)]
    pub parquet: ParquetArgs,
    #[command(flatten)]
    pub units: crate::units_output::UnitArgs,
}

/// What pairs, clusters and dedup all take: inputs, matching, method, outputs, runtime.
#[derive(Args, Debug, Clone)]
pub struct CommonRunSettings {
    #[command(flatten)]
    pub input: InputFlags,
    #[command(flatten)]
    pub matching: MatchArgs,
    #[command(flatten)]
    pub batch: BatchArgs,
}

/// `pairs`.
#[derive(Args, Debug, Clone)]
pub struct PairsArgs {
    #[command(flatten)]
    pub run: CommonRunSettings,
    #[command(flatten)]
    pub format: OutputFormatArgs,
    #[command(flatten)]
    pub parquet: ParquetArgs,
}

/// `clusters`.
#[derive(Args, Debug, Clone)]
pub struct ClustersArgs {
    #[command(flatten)]
    pub run: CommonRunSettings,
    #[command(flatten)]
    pub format: OutputFormatArgs,
    #[command(flatten)]
    pub keep: KeepArgs,
    #[command(flatten)]
    pub parquet: ParquetArgs,
}

/// `dedup`.
#[derive(Args, Debug, Clone)]
pub struct DedupArgs {
    #[command(flatten)]
    pub run: CommonRunSettings,
    #[command(flatten)]
    pub keep: KeepArgs,
    #[command(flatten)]
    pub dedup: DedupOnlyArgs,
    #[command(flatten)]
    pub parquet: ParquetArgs,
    #[command(flatten)]
    pub annotate: AnnotateFlags,
    #[command(flatten)]
    pub units: crate::units_output::UnitArgs,
}

impl RunSettings {
    fn gather(common: CommonRunSettings) -> Self {
        let CommonRunSettings {
            input,
            matching,
            batch,
        } = common;
        let mut input: InputOptions = input.into();
        input.reference = batch.reference;
        RunSettings {
            input,
            matching: matching.into(),
            verify: batch.verify,
            keep: None,
            keep_by: None,
            allow_truncated: false,
            drop_all: false,
            method: batch.method,
            exact: batch.exact,
            output: batch.output,
            force: false,
            removed: None,
            output_format: None,
            parquet: None,
            skipped: batch.skipped,
            report: batch.report,
            tmp: batch.tmp,
            runtime: batch.runtime.into(),
            annotate: None,
        }
    }

    fn with_keep(self, keep: KeepArgs) -> Self {
        RunSettings {
            keep: keep.keep,
            keep_by: keep.keep_by,
            allow_truncated: keep.allow_truncated,
            drop_all: keep.drop_all,
            ..self
        }
    }
}

impl From<PairsArgs> for RunSettings {
    fn from(a: PairsArgs) -> Self {
        RunSettings {
            output_format: a.format.output_format,
            parquet: a.parquet.resolve(),
            ..RunSettings::gather(a.run)
        }
    }
}

impl From<ClustersArgs> for RunSettings {
    fn from(a: ClustersArgs) -> Self {
        RunSettings {
            output_format: a.format.output_format,
            parquet: a.parquet.resolve(),
            ..RunSettings::gather(a.run).with_keep(a.keep)
        }
    }
}

impl From<DedupArgs> for RunSettings {
    fn from(a: DedupArgs) -> Self {
        use crate::annotate_output::Annotate;
        let AnnotateFlags {
            annotate,
            annotate_prefix,
            cluster_size_field,
        } = a.annotate;
        let annotate = match (annotate, cluster_size_field) {
            (true, _) => Some(Annotate::All {
                prefix: annotate_prefix.unwrap_or_default(),
            }),
            (false, Some(field)) => Some(Annotate::ClusterSize { field }),
            (false, None) => None,
        };
        RunSettings {
            force: a.dedup.force,
            removed: a.dedup.removed,
            parquet: a.parquet.resolve(),
            annotate,
            ..RunSettings::gather(a.run).with_keep(a.keep)
        }
    }
}

impl From<AnnotateArgs> for RunSettings {
    fn from(a: AnnotateArgs) -> Self {
        RunSettings {
            force: a.force,
            removed: a.removed,
            annotate: Some(crate::annotate_output::Annotate::All {
                prefix: a.annotate_prefix.unwrap_or_default(),
            }),
            parquet: a.parquet.resolve(),
            ..RunSettings::gather(a.run).with_keep(a.keep)
        }
    }
}

/// The input options, as given (an option left out stays `None`, so the document table
/// can refuse one that does not fit an input's format); what the run sets (the key field,
/// the empty-text test, raw bytes, the skipped list) is set by the run.
impl From<InputFlags> for InputOptions {
    fn from(f: InputFlags) -> Self {
        let mut options = InputOptions::new(f.inputs);
        options.format = f.format;
        options.text_field = f.text_field;
        options.id_field = f.id_field;
        options.text_columns = f.text_columns;
        options.id_column = f.id_column;
        options.max_record_bytes = f.max_record_bytes;
        options.fail_on_error = f.on_error == OnError::Fail;
        options.tsv_escapes = f.tsv_escapes;
        options.quote = f.quote;
        options.delimiter = f.delimiter;
        options.hidden = f.hidden;
        options.globs = f.globs;
        options.follow = f.follow;
        options
    }
}

impl From<MatchArgs> for MatchSettings {
    fn from(m: MatchArgs) -> Self {
        MatchSettings {
            shingle: m.shingle,
            normalize: if m.no_normalize {
                Normalization::None
            } else {
                m.normalize
            },
            multiset: m.multiset,
            num_perm: m.num_perm,
            sketch: m.sketch,
            measure: m.measure,
            hamming: m.hamming,
            seed: m.seed,
            threshold: m.threshold,
            max_shingles: m.max_shingles,
            no_neighbours: m.no_neighbours,
            memory: m.memory,
            bands: m.bands,
            rows: m.rows,
        }
    }
}

impl From<RuntimeArgs> for RuntimeSettings {
    fn from(r: RuntimeArgs) -> Self {
        RuntimeSettings { quiet: r.quiet }
    }
}

impl From<EvalArgs> for EvalSettings {
    fn from(a: EvalArgs) -> Self {
        EvalSettings {
            input: a.input.into(),
            matching: a.matching.into(),
            verify: a.verify,
            labels: a.labels,
            allow_unknown_labels: a.allow_unknown_labels,
            missed: a.missed,
            json: a.json,
            report: a.report,
            runtime: a.runtime.into(),
        }
    }
}

impl From<SimArgs> for SimSettings {
    fn from(a: SimArgs) -> Self {
        SimSettings {
            a: a.a,
            b: a.b,
            text: a.text,
            matching: a.matching.into(),
            json: a.json,
        }
    }
}

impl From<PlanArgs> for PlanSettings {
    fn from(a: PlanArgs) -> Self {
        PlanSettings {
            input: a.read.into(),
            sample: a.sample,
            svg: a.svg,
            matching: a.matching.into(),
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// The index directory (made by `neardup index build`). The server is its writer while
    /// it runs (unless --read-only).
    pub index: PathBuf,
    /// Address to listen on. Anything but loopback needs a token (or --insecure).
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub addr: std::net::SocketAddr,
    /// File holding the token every write needs (`Authorization: Bearer TOKEN`); else the
    /// NEARDUP_TOKEN environment variable, if set.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// File holding a token every read needs (the write token is accepted too); else the
    /// NEARDUP_READ_TOKEN environment variable, if set. Without a write token, writes need
    /// it too. Without it reads are open.
    #[arg(long, value_name = "FILE")]
    pub read_token_file: Option<PathBuf>,
    /// Serve a non-loopback address without a token: anyone who reaches it can write.
    #[arg(long)]
    pub insecure: bool,
    /// Serve the index without writing it: no writer lock (an `index add` may run beside
    /// it, the directory may be read-only), writes answer 403, new commits are picked up.
    #[arg(long)]
    pub read_only: bool,
    #[command(flatten)]
    pub wait: crate::index_args::WaitArgs,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = 16 << 20, value_name = "BYTES")]
    pub max_body: usize,
    /// Most documents or ids in one request.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub max_batch: usize,
    /// Seconds one request may take.
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Requests served at once; more are answered 503 with Retry-After.
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub max_concurrent: usize,
    /// Connections open at once; more wait until one closes. Keep it below the open-file
    /// limit (`ulimit -n`).
    #[arg(long, default_value_t = 512, value_name = "N")]
    pub max_connections: usize,
    /// Seconds a client has to send a request's line and headers.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub header_timeout: f64,
    /// Seconds an idle connection stays open between requests (0: one request each).
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub keep_alive: f64,
    /// Seconds the requests in flight have to finish after SIGTERM or Ctrl-C.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub shutdown_timeout: f64,
    /// Memory budget of the requests in flight, in MiB: each request with a body holds 40
    /// times its size until answered (a write until committed); past it 503 with
    /// Retry-After. At least 40 times --max-body.
    #[arg(long, default_value_t = 1024, value_name = "MIB")]
    pub memory: usize,
    /// Milliseconds the writer waits for more adds before a commit, so that adds arriving
    /// close together share one (0: commit each group at once).
    #[arg(long, default_value_t = 5.0, value_name = "MS")]
    pub commit_delay: f64,
}

impl From<ServeArgs> for ServeSettings {
    fn from(a: ServeArgs) -> Self {
        ServeSettings {
            index: a.index,
            addr: a.addr,
            token_file: a.token_file,
            read_token_file: a.read_token_file,
            insecure: a.insecure,
            read_only: a.read_only,
            wait: a.wait.wait,
            max_body: a.max_body,
            max_batch: a.max_batch,
            timeout: a.timeout,
            max_concurrent: a.max_concurrent,
            max_connections: a.max_connections,
            header_timeout: a.header_timeout,
            keep_alive: a.keep_alive,
            shutdown_timeout: a.shutdown_timeout,
            memory: a.memory,
            commit_delay: a.commit_delay,
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct EvalArgs {
    #[command(flatten)]
    pub input: InputFlags,
    #[command(flatten)]
    pub matching: MatchArgs,
    /// How the approximate method's candidates are confirmed: with `none` (or `estimate`)
    /// its precision against the exact join shows what verification removes.
    #[arg(long, value_enum, default_value_t = Verification::Exact)]
    pub verify: Verification,
    /// Labelled duplicates to score against: pairs ({"a","b"} / CSV a,b) or cluster ids
    /// ({"id","cluster"} / CSV id,cluster), JSONL or CSV.
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,
    /// Count label ids that are not in the input without failing (by default any is
    /// an error: they usually mean the labels name records another way).
    #[arg(long, requires = "labels")]
    pub allow_unknown_labels: bool,
    /// Write the pairs that one method found and the other did not here, one JSON
    /// object per line: LSH's misses against the exact join (and, with --labels, each
    /// method's missed and false pairs against the labels), with their exact Jaccard.
    #[arg(long, value_name = "FILE")]
    pub missed: Option<PathBuf>,
    /// Print the metrics as one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Write a self-contained HTML report of the comparison here.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

#[derive(Args, Debug, Clone)]
pub struct SimArgs {
    /// First text, or a file holding it (an argument with a `/` or a file extension
    /// must name an existing file, unless --text is given).
    pub a: String,
    /// Second text, or a file holding it.
    pub b: String,
    /// Take both arguments as text, never as file names.
    #[arg(long)]
    pub text: bool,
    #[command(flatten)]
    pub matching: MatchArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{Mode, Resolved};

    #[test]
    fn core_values_parse_under_their_names() {
        let cli = Cli::try_parse_from([
            "neardup",
            "clusters",
            "x.jsonl",
            "--keep",
            "longest",
            "--verify",
            "triage",
            "--sketch",
            "classic",
            "--normalize",
            "aggressive",
        ])
        .unwrap();
        let Command::Clusters(run) = cli.command else {
            panic!("not clusters: {:?}", cli.command);
        };
        let run = RunSettings::from(run);
        assert_eq!(run.keep, Some(KeepPolicy::Longest));
        assert_eq!(run.verify, Verification::Triage);
        assert_eq!(run.matching.sketch, Some(SketchKind::Classic));
        assert_eq!(run.matching.normalize, Normalization::Aggressive);
        assert_eq!(run.matching.shingle, ShingleKind::Char(5));
        let cli = Cli::try_parse_from(["neardup", "pairs", "x.jsonl"]).unwrap();
        let Command::Pairs(run) = cli.command else {
            panic!("not pairs: {:?}", cli.command);
        };
        let run = RunSettings::from(run);
        assert_eq!((run.keep, run.verify), (None, Verification::Exact));
        assert_eq!(
            (run.matching.sketch, run.matching.normalize),
            (None, Normalization::Nfkc)
        );
        for bad in [
            ["--keep", "biggest"],
            ["--verify", "Exact"],
            ["--sketch", "fast"],
            ["--normalize", "nfd"],
        ] {
            let err = Cli::try_parse_from(["neardup", "clusters", "x.jsonl", bad[0], bad[1]])
                .unwrap_err();
            assert_eq!(err.kind(), clap::error::ErrorKind::InvalidValue, "{bad:?}");
        }
        // --format parses into neardup-io's Format, --output-format into the writer's.
        for format in neardup_io::Format::ALL {
            let cli =
                Cli::try_parse_from(["neardup", "pairs", "x", "--format", format.name()]).unwrap();
            let Command::Pairs(run) = cli.command else {
                panic!("not pairs: {:?}", cli.command);
            };
            assert_eq!(RunSettings::from(run).input.format, Some(format));
        }
        let cli =
            Cli::try_parse_from(["neardup", "clusters", "x", "--output-format", "tsv"]).unwrap();
        let Command::Clusters(run) = cli.command else {
            panic!("not clusters: {:?}", cli.command);
        };
        assert_eq!(
            RunSettings::from(run).output_format,
            Some(crate::output::OutputFormat::Tsv)
        );
        // Refused by the core's FromStr, whose message clap shows.
        let err = Cli::try_parse_from(["neardup", "pairs", "x.jsonl", "--shingle", "char:0"])
            .unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
        assert!(err.to_string().contains("invalid shingle spec"), "{err}");
    }

    fn resolved(line: &[&str]) -> anyhow::Result<Resolved> {
        let (mode, settings) = match Cli::try_parse_from(line).expect("parses").command {
            Command::Pairs(a) => (Mode::Pairs, a.into()),
            Command::Clusters(a) => (Mode::Clusters, a.into()),
            Command::Dedup(a) => (Mode::Dedup, a.into()),
            other => panic!("not a matching command: {other:?}"),
        };
        crate::run::resolve(mode, settings)
    }

    #[test]
    fn refusals_the_command_line_decides_are_made_while_resolving() {
        // The input does not exist: reading it would fail otherwise.
        let missing = "no-such-input.jsonl";
        for (line, said) in [
            (
                &["neardup", "clusters", missing, "--measure", "containment"][..],
                "--measure containment is for pairs",
            ),
            (
                &["neardup", "pairs", missing, "--hamming", "3"],
                "--hamming is the distance of SimHash fingerprints",
            ),
            (
                &["neardup", "dedup", missing, "--keep-by", ":desc"],
                "--keep-by needs a field or column name",
            ),
            (
                &["neardup", "dedup", missing, "-o", "out.csv"],
                "dedup writes the input's own format",
            ),
        ] {
            let e = resolved(line).err().expect("refused");
            assert!(e.to_string().starts_with(said), "{line:?}: {e}");
        }
        let r = resolved(&[
            "neardup",
            "clusters",
            missing,
            "-t",
            "0.6",
            "--keep-by",
            "Time:desc",
        ])
        .unwrap();
        assert_eq!(r.config.threshold(), 0.6);
        assert_eq!(
            r.keep_by.map(|k| (k.field, k.descending)),
            Some(("Time".into(), true))
        );
    }
}
