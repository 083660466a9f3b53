//! Arguments of `neardup index ...`, and their resolution into `index_settings.rs`'s
//! plain settings.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use neardup::{Config, Measure, Normalization, ShingleKind, SketchKind};
use neardup_index::Kind;

use crate::args::{InputFlags, RuntimeArgs};
use crate::errors::usage;
use crate::index_settings::{
    GivenParams, IndexAddSettings, IndexBuildSettings, IndexCheckSettings, IndexCompactSettings,
    IndexQuerySettings, IndexRemoveSettings, IndexSettings, IndexStatsSettings,
};

/// The index commands.
#[derive(Subcommand, Debug, Clone)]
pub enum IndexCommand {
    /// Create an index from the inputs (in one commit; INDEX must not hold an index yet).
    /// The shingling, sketch and band plan are pinned: later commands use the index's.
    Build(IndexInputArgs),
    /// Add the inputs' documents in one durable commit. A document whose id is already
    /// indexed replaces it. With --dedup, add only the documents that are not
    /// near-duplicates of an indexed one or of one earlier in the input, and print for
    /// each one JSON line saying which.
    Add(IndexAddArgs),
    /// For each document of the inputs (`-` for standard input), its indexed neighbours
    /// with similarity ≥ the threshold, best first, verified by exact Jaccard: one JSON
    /// line {"id", "neighbours": [{"id", "jaccard"}]} per document, in input order. In a
    /// containment index each neighbour also has "containment" and "inside" ("query" or
    /// "document": which of the two is inside the other).
    Query(IndexQueryArgs),
    /// Remove documents by id, in one durable commit.
    Remove(IndexRemoveArgs),
    /// Documents live and deleted, segments, size on disk, and the pinned parameters.
    Stats(IndexStatsArgs),
    /// Merge every segment into one and drop deleted documents, in one durable commit.
    Compact(IndexCompactArgs),
    /// Read every byte of the index and report anything that does not add up (exit
    /// code 3 if something does).
    Check(IndexDirArgs),
}

impl IndexCommand {
    /// Threads asked for, if any.
    pub fn threads(&self) -> Option<usize> {
        match self {
            IndexCommand::Build(a) => a.runtime.threads,
            IndexCommand::Add(a) => a.build.runtime.threads,
            IndexCommand::Query(a) => a.runtime.threads,
            _ => None,
        }
    }
}

/// The parameters an index is pinned to. `index build` takes them (defaults as for
/// `pairs`); `index add` and `index query` check any given against the index's.
#[derive(Args, Debug, Clone, Default)]
pub struct IndexParamArgs {
    /// Shingles: `char:K` or `word:K` [build default: char:5].
    #[arg(long, value_name = "KIND:K")]
    pub shingle: Option<ShingleKind>,
    /// Normalization level [build default: nfkc].
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub normalize: Option<Normalization>,
    /// MinHash signature length K [build default: 128].
    #[arg(long, value_name = "K")]
    pub num_perm: Option<usize>,
    /// MinHash sketch [build default: oph].
    #[arg(long, value_enum)]
    pub sketch: Option<SketchKind>,
    /// Seed of the MinHash permutations [build default: 1].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Shingle positions compared exactly per document [build default: as `pairs`].
    #[arg(long, value_name = "N")]
    pub max_shingles: Option<usize>,
    /// LSH bands (with --rows; default: chosen from the threshold).
    #[arg(long, requires = "rows")]
    pub bands: Option<usize>,
    /// LSH rows per band (with --bands).
    #[arg(long, requires = "bands")]
    pub rows: Option<usize>,
    /// Count repeated shingles: similarities are the weighted Jaccard of the shingles'
    /// counts (pinned at build).
    #[arg(long)]
    pub multiset: bool,
    /// What the threshold is of [build default: jaccard]. A containment index answers the
    /// indexed documents a query is inside of, and those inside it (|A ∩ B| / |A| ≥ t, A
    /// the smaller), from LSH Ensemble-style tables of 1, 2, 4 and 8 rows per band, signed
    /// without the tokens common to more than 1 % of the build's documents (pinned at
    /// build).
    #[arg(long, value_enum, value_name = "MEASURE")]
    pub measure: Option<Measure>,
}

/// An index and the documents a command reads for it.
#[derive(Args, Debug, Clone)]
pub struct IndexAt {
    /// The index directory.
    #[arg(value_name = "INDEX")]
    pub index: PathBuf,
    #[command(flatten)]
    pub input: InputFlags,
    #[command(flatten)]
    pub params: IndexParamArgs,
}

#[derive(Args, Debug, Clone)]
pub struct IndexInputArgs {
    #[command(flatten)]
    pub at: IndexAt,
    /// Jaccard threshold the band plan is chosen for; queries may ask for more, never
    /// less [build default: 0.8].
    #[arg(short, long, value_name = "T")]
    pub threshold: Option<f64>,
    #[command(flatten)]
    pub wait: WaitArgs,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// How long a writing command waits for another writer of the index.
#[derive(Args, Debug, Clone, Default)]
pub struct WaitArgs {
    /// While another writer holds the index (a `neardup serve`, another command), wait at
    /// most this many seconds for it, then give up (exit code 4); 0 fails at once
    /// [default: wait as long as it takes, saying whom for].
    #[arg(long, value_name = "SECONDS", value_parser = parse_wait)]
    pub wait: Option<Duration>,
}

fn parse_wait(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("{text:?} is not a number of seconds (0 or more)"))
}

#[derive(Args, Debug, Clone)]
pub struct IndexCompactArgs {
    /// The index directory.
    #[arg(value_name = "INDEX")]
    pub index: PathBuf,
    #[command(flatten)]
    pub wait: WaitArgs,
}

#[derive(Args, Debug, Clone)]
pub struct IndexAddArgs {
    #[command(flatten)]
    pub build: IndexInputArgs,
    /// Add only documents that are not near-duplicates of an indexed document or of one
    /// earlier in the input; print one JSON line per document: {"id", "added"} or {"id",
    /// "added": false, "duplicate_of", "jaccard", "of_indexed"} or {"id", "added": false,
    /// "skipped": "empty"}.
    #[arg(long)]
    pub dedup: bool,
    /// Where --dedup's lines go (default: standard output). Written before the commit: if
    /// it cannot be written, nothing is added.
    #[arg(short, long, value_name = "FILE", requires = "dedup")]
    pub output: Option<PathBuf>,
    /// Let documents without ids (named by their line or record number) replace indexed
    /// documents of the same number. Without it such an add is refused: a file read
    /// without its ids would silently overwrite the index's documents.
    #[arg(long)]
    pub replace_numbered: bool,
}

#[derive(Args, Debug, Clone)]
pub struct IndexQueryArgs {
    #[command(flatten)]
    pub at: IndexAt,
    /// Only neighbours at least this similar (at least the index's threshold).
    #[arg(short, long, value_name = "T")]
    pub threshold: Option<f64>,
    /// At most K neighbours per document, the most similar.
    #[arg(long, value_name = "K")]
    pub top: Option<usize>,
    /// What each line answers, in the field of that name.
    #[arg(long, value_name = "KIND", default_value = Kind::default().name(), value_parser = kind())]
    pub kind: Kind,
    /// Where the lines go (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// The index's query kinds, by name.
fn kind() -> impl clap::builder::TypedValueParser<Value = Kind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Kind::names())
        .map(|name| Kind::named(&name).expect("one of the names offered"))
}

#[derive(Args, Debug, Clone)]
pub struct IndexRemoveArgs {
    /// The index directory.
    #[arg(value_name = "INDEX")]
    pub index: PathBuf,
    /// Ids to remove.
    #[arg(value_name = "ID", required_unless_present = "ids")]
    pub id: Vec<String>,
    /// A file of ids to remove, one per line (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    pub ids: Option<PathBuf>,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// No summary.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args, Debug, Clone)]
pub struct IndexStatsArgs {
    /// The index directory.
    #[arg(value_name = "INDEX")]
    pub index: PathBuf,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct IndexDirArgs {
    /// The index directory.
    #[arg(value_name = "INDEX")]
    pub index: PathBuf,
}

impl IndexCommand {
    /// Resolves the command into its settings, right after parsing; refuses here what the
    /// arguments alone decide (`build`'s parameters that do not go together), before the
    /// index is opened or any input read.
    pub fn resolve(self) -> anyhow::Result<IndexSettings> {
        Ok(match self {
            IndexCommand::Build(a) => IndexSettings::Build(IndexBuildSettings {
                config: build_config(&a.at.params, a.threshold)?,
                index: a.at.index,
                input: a.at.input.into(),
                wait: a.wait.wait,
                runtime: a.runtime.into(),
            }),
            IndexCommand::Add(a) => IndexSettings::Add(IndexAddSettings {
                given: a.build.at.params.given(a.build.threshold),
                index: a.build.at.index,
                input: a.build.at.input.into(),
                wait: a.build.wait.wait,
                runtime: a.build.runtime.into(),
                dedup: a.dedup,
                output: a.output,
                replace_numbered: a.replace_numbered,
            }),
            IndexCommand::Query(a) => IndexSettings::Query(IndexQuerySettings {
                // A query's --threshold is how similar its neighbours must be, not the
                // threshold the index was built for.
                given: a.at.params.given(None),
                index: a.at.index,
                input: a.at.input.into(),
                threshold: a.threshold,
                top: a.top,
                kind: a.kind,
                output: a.output,
                runtime: a.runtime.into(),
            }),
            IndexCommand::Remove(a) => IndexSettings::Remove(IndexRemoveSettings {
                index: a.index,
                ids: a.id,
                ids_file: a.ids,
                wait: a.wait.wait,
                quiet: a.quiet,
            }),
            IndexCommand::Stats(a) => IndexSettings::Stats(IndexStatsSettings {
                index: a.index,
                json: a.json,
            }),
            IndexCommand::Compact(a) => IndexSettings::Compact(IndexCompactSettings {
                index: a.index,
                wait: a.wait.wait,
            }),
            IndexCommand::Check(a) => IndexSettings::Check(IndexCheckSettings { index: a.index }),
        })
    }
}

impl IndexParamArgs {
    /// The parameters as given to `add` or `query`, to be checked against the index's.
    fn given(self, threshold: Option<f64>) -> GivenParams {
        GivenParams {
            shingle: self.shingle,
            normalize: self.normalize,
            num_perm: self.num_perm,
            sketch: self.sketch,
            seed: self.seed,
            max_shingles: self.max_shingles,
            bands: self.bands,
            rows: self.rows,
            multiset: self.multiset,
            measure: self.measure,
            threshold,
        }
    }
}

/// The configuration `index build` pins: the given parameters, defaults for the rest.
/// Refuses, before any input is read, what an index cannot be built with (SimHash, which
/// `IndexWriter::create` would refuse only once the inputs were read).
fn build_config(p: &IndexParamArgs, threshold: Option<f64>) -> anyhow::Result<Config> {
    let d = Config::builder().build()?;
    let measure = p.measure.unwrap_or_default();
    if !measure.has_band_plan() && p.bands.is_some() {
        usage!("--bands/--rows do not apply to --measure {measure}: its rows per band are chosen for each pair of sizes");
    }
    let shingler = d.shingler();
    let config = Config::builder()
        .shingle(p.shingle.unwrap_or(shingler.kind()))
        .normalization(p.normalize.unwrap_or(shingler.normalization_level()))
        .max_shingles(p.max_shingles.unwrap_or(shingler.shingle_cap()))
        .num_perm(p.num_perm.unwrap_or(d.num_perm()))
        .sketch(p.sketch.unwrap_or(d.sketch()))
        .seed(p.seed.unwrap_or(d.seed()))
        .threshold(threshold.unwrap_or(d.threshold()))
        .bands(p.bands)
        .rows(p.rows)
        .multiset(p.multiset)
        .measure(measure)
        .build()
        .map_err(|e| match e {
            // An index refuses SimHash whatever else is given (IndexWriter::create): say
            // that rather than which MinHash setting SimHash does not take.
            neardup::Error::NumPermWithSimHash(_) => neardup::Error::NotForSimHash("an index"),
            e => e,
        })?;
    if !config.sketch().is_minhash() {
        return Err(neardup::Error::NotForSimHash("an index").into());
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::args::{Cli, Command};
    use crate::index_settings::IndexSettings;

    fn resolve(line: &[&str]) -> anyhow::Result<IndexSettings> {
        let cli = Cli::try_parse_from(line).expect("parses");
        let Command::Index(c) = cli.command else {
            panic!("not an index command: {:?}", cli.command);
        };
        c.resolve()
    }

    #[test]
    fn build_refuses_parameters_that_do_not_go_together_before_touching_the_index() {
        let dir = std::env::temp_dir().join(format!("neardup-resolve-{}", std::process::id()));
        let index = dir.join("idx");
        let index = index.to_str().unwrap();
        let e = resolve(&[
            "neardup",
            "index",
            "build",
            index,
            "missing.jsonl",
            "--measure",
            "containment",
            "--bands",
            "4",
            "--rows",
            "2",
        ])
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--bands/--rows do not apply to --measure containment"),
            "{e}"
        );
        let e = resolve(&[
            "neardup",
            "index",
            "build",
            index,
            "missing.jsonl",
            "--sketch",
            "simhash",
        ])
        .unwrap_err();
        assert!(e.to_string().contains("an index"), "{e}");
        assert!(!dir.exists(), "resolving created {}", dir.display());
    }

    #[test]
    fn build_resolves_defaults_and_add_keeps_only_what_was_given() {
        let IndexSettings::Build(b) =
            resolve(&["neardup", "index", "build", "idx", "a.jsonl", "-t", "0.7"]).unwrap()
        else {
            panic!("not build");
        };
        assert_eq!(b.config.threshold(), 0.7);
        assert_eq!(b.config.num_perm(), neardup::defaults::NUM_PERM);
        let IndexSettings::Add(a) = resolve(&[
            "neardup", "index", "add", "idx", "a.jsonl", "-t", "0.7", "--seed", "3",
        ])
        .unwrap() else {
            panic!("not add");
        };
        assert_eq!(
            (a.given.threshold, a.given.seed, a.given.num_perm),
            (Some(0.7), Some(3), None)
        );
        // A query's threshold is how similar its neighbours are, not the index's.
        let IndexSettings::Query(q) =
            resolve(&["neardup", "index", "query", "idx", "a.jsonl", "-t", "0.9"]).unwrap()
        else {
            panic!("not query");
        };
        assert_eq!((q.threshold, q.given.threshold), (Some(0.9), None));
    }
}
