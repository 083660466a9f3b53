//! The command line resolved into plain settings, once, right after parsing: what the
//! layers below the commands read instead of clap's argument structs (`args.rs` defines
//! those and resolves them here, ripgrep's `HiArgs` idea; the index commands' are in
//! `index_settings.rs`). The input options resolve into neardup-io's `InputOptions`.

use std::path::PathBuf;

use neardup::{KeepPolicy, Measure, Method, Normalization, ShingleKind, SketchKind, Verification};
use neardup_io::documents::InputOptions;

use crate::output::OutputFormat;

/// How documents are compared (`--shingle`, `--threshold`, `--sketch`, ...), as given; a
/// SimHash or MinHash option left out stays `None`, so one that does not apply is refused
/// rather than ignored.
#[derive(Debug, Clone)]
pub struct MatchSettings {
    pub shingle: ShingleKind,
    /// `--normalize`, or `none` under `--no-normalize`.
    pub normalize: Normalization,
    pub multiset: bool,
    pub num_perm: usize,
    pub sketch: Option<SketchKind>,
    pub measure: Measure,
    pub hamming: Option<u32>,
    pub seed: u64,
    pub threshold: f64,
    pub max_shingles: usize,
    pub no_neighbours: bool,
    /// The memory limit in bytes (`None`: half of this machine's).
    pub memory: Option<u64>,
    pub bands: Option<usize>,
    pub rows: Option<usize>,
}

/// How a run behaves (`--threads` starts the thread pool in `main.rs`, before any command).
#[derive(Debug, Clone, Copy)]
pub struct RuntimeSettings {
    /// No summary, no progress bars.
    pub quiet: bool,
}

/// A batch command's settings (pairs, clusters, dedup); what the command does not offer
/// is at its default (no `--keep`, no `--force`, ...).
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub input: InputOptions,
    pub matching: MatchSettings,
    pub verify: Verification,
    pub keep: Option<KeepPolicy>,
    pub keep_by: Option<String>,
    pub allow_truncated: bool,
    /// `--drop-all`: every document of a cluster removed (the reference's stay).
    pub drop_all: bool,
    pub method: Method,
    pub exact: bool,
    pub output: Option<PathBuf>,
    pub force: bool,
    pub removed: Option<PathBuf>,
    pub output_format: Option<OutputFormat>,
    /// `--compression` and `--row-group-size` of Parquet outputs, when either is given.
    pub parquet: Option<neardup_io::parquet::ParquetOutput>,
    pub skipped: Option<PathBuf>,
    pub report: Option<PathBuf>,
    pub tmp: Option<PathBuf>,
    pub runtime: RuntimeSettings,
    /// dedup: every record annotated, or the survivors with their cluster size, instead
    /// of the survivors alone.
    pub annotate: Option<crate::annotate_output::Annotate>,
}

impl RunSettings {
    /// The method asked for: `--exact` is `--method exact`.
    pub fn method(&self) -> Method {
        if self.exact {
            Method::Exact
        } else {
            self.method
        }
    }
}

/// `eval`'s settings.
#[derive(Debug, Clone)]
pub struct EvalSettings {
    pub input: InputOptions,
    pub matching: MatchSettings,
    pub verify: Verification,
    pub labels: Option<PathBuf>,
    pub allow_unknown_labels: bool,
    pub missed: Option<PathBuf>,
    pub json: bool,
    pub report: Option<PathBuf>,
    pub runtime: RuntimeSettings,
}

/// `sim`'s settings.
#[derive(Debug, Clone)]
pub struct SimSettings {
    /// The first text, or a file holding it.
    pub a: String,
    /// The second text, or a file holding it.
    pub b: String,
    /// Both are texts, never file names.
    pub text: bool,
    pub matching: MatchSettings,
    pub json: bool,
}

/// `plan`'s settings: the input options of the matching commands, the inputs optional.
#[derive(Debug, Clone)]
pub struct PlanSettings {
    /// The inputs to sample (none: the plan alone) and how to read them.
    pub input: InputOptions,
    /// Documents in the sample.
    pub sample: usize,
    pub svg: Option<PathBuf>,
    pub matching: MatchSettings,
}

impl PlanSettings {
    /// The inputs to sample (none: the plan alone).
    pub fn inputs(&self) -> &[PathBuf] {
        &self.input.inputs
    }
}

/// `serve`'s settings, as given (each is checked by `serve_cmd::run` before the index is
/// opened).
#[derive(Debug, Clone)]
pub struct ServeSettings {
    pub index: PathBuf,
    pub addr: std::net::SocketAddr,
    pub token_file: Option<PathBuf>,
    pub read_token_file: Option<PathBuf>,
    pub insecure: bool,
    pub read_only: bool,
    pub wait: Option<std::time::Duration>,
    pub max_body: usize,
    pub max_batch: usize,
    pub timeout: f64,
    pub max_concurrent: usize,
    pub max_connections: usize,
    pub header_timeout: f64,
    pub keep_alive: f64,
    pub shutdown_timeout: f64,
    pub memory: usize,
    pub commit_delay: f64,
}
