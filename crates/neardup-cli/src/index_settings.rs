//! `neardup index ...` resolved into plain settings, once, right after parsing
//! (`index_args.rs` resolves its clap structs into these): what `index_cmd.rs` reads. A
//! refusal the arguments alone decide (`build`'s parameters that do not go together) is
//! made while resolving; what needs the index (parameters given to `add` or `query`
//! against the pinned ones) is left to the command.

use std::path::PathBuf;
use std::time::Duration;

use neardup::{Config, Measure, Normalization, ShingleKind, SketchKind};
use neardup_index::Kind;
use neardup_io::documents::InputOptions;

use crate::settings::RuntimeSettings;

/// One index command's settings.
#[derive(Debug, Clone)]
pub enum IndexSettings {
    Build(IndexBuildSettings),
    Add(IndexAddSettings),
    Query(IndexQuerySettings),
    Remove(IndexRemoveSettings),
    Stats(IndexStatsSettings),
    Compact(IndexCompactSettings),
    Check(IndexCheckSettings),
}

/// The pinned parameters given to `add` or `query`, as given (`None`, `false`: not
/// given); each given one must be the index's.
#[derive(Debug, Clone, Default)]
pub struct GivenParams {
    pub shingle: Option<ShingleKind>,
    pub normalize: Option<Normalization>,
    pub num_perm: Option<usize>,
    pub sketch: Option<SketchKind>,
    pub seed: Option<u64>,
    pub max_shingles: Option<usize>,
    pub bands: Option<usize>,
    pub rows: Option<usize>,
    pub multiset: bool,
    pub measure: Option<Measure>,
    /// The threshold the index was built for (`add -t`; `query -t` asks for neighbours at
    /// least this similar, and is not here).
    pub threshold: Option<f64>,
}

/// `index build`: the configuration it pins, resolved (defaults for what is not given).
#[derive(Debug, Clone)]
pub struct IndexBuildSettings {
    pub index: PathBuf,
    pub input: InputOptions,
    pub config: Config,
    /// `--wait` (`None`: as long as it takes).
    pub wait: Option<Duration>,
    pub runtime: RuntimeSettings,
}

/// `index add`.
#[derive(Debug, Clone)]
pub struct IndexAddSettings {
    pub index: PathBuf,
    pub input: InputOptions,
    pub given: GivenParams,
    pub wait: Option<Duration>,
    pub runtime: RuntimeSettings,
    pub dedup: bool,
    /// Where `--dedup`'s lines go (`None`: standard output).
    pub output: Option<PathBuf>,
    pub replace_numbered: bool,
}

/// `index query`.
#[derive(Debug, Clone)]
pub struct IndexQuerySettings {
    pub index: PathBuf,
    pub input: InputOptions,
    pub given: GivenParams,
    /// Only neighbours at least this similar.
    pub threshold: Option<f64>,
    pub top: Option<usize>,
    pub kind: Kind,
    pub output: Option<PathBuf>,
    pub runtime: RuntimeSettings,
}

/// `index remove`.
#[derive(Debug, Clone)]
pub struct IndexRemoveSettings {
    pub index: PathBuf,
    /// The ids named on the command line.
    pub ids: Vec<String>,
    /// A file of more ids, one per line (`-`: standard input).
    pub ids_file: Option<PathBuf>,
    pub wait: Option<Duration>,
    pub quiet: bool,
}

/// `index stats`.
#[derive(Debug, Clone)]
pub struct IndexStatsSettings {
    pub index: PathBuf,
    pub json: bool,
}

/// `index compact`.
#[derive(Debug, Clone)]
pub struct IndexCompactSettings {
    pub index: PathBuf,
    pub wait: Option<Duration>,
}

/// `index check`.
#[derive(Debug, Clone)]
pub struct IndexCheckSettings {
    pub index: PathBuf,
}
