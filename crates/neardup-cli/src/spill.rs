//! Whether a run spills to disk: when its input, read into memory, is predicted to need
//! more than the memory limit.

use anyhow::Result;
use neardup::{Config, Method, SpillOptions, Verification};

use crate::errors::usage;
use crate::plan::{bytes, memory_limit};
use crate::settings::RunSettings;

/// Bytes an in-memory run is taken to hold per byte of input: each byte of text starts at
/// most one shingle, held as a 4-byte id, and each document adds its band keys and places
/// (the summaries' run holds about 4.2). Not a bound: many very short records (plain
/// lines of a few words) can hold more, and the check before sketching
/// (`plan::refuse_over_memory`, on the memory actually held) refuses a run this let
/// through.
const HELD_PER_INPUT_BYTE: u64 = 5;

/// Inputs predicted to need more memory than the limit.
pub struct Over {
    /// Bytes of the input files (gzip, zstd and Parquet files counted as expanded, see
    /// [`GZIP_RATIO`]).
    pub input: u64,
    /// The most an in-memory run may hold for them.
    pub need: u64,
    pub limit: u64,
    /// The limit in words, for messages.
    pub named: String,
}

/// The inputs' prediction if it is over the memory limit (`arg`, or half the machine's);
/// `None` if it fits or the inputs' size is unknown (standard input, a folder of
/// documents). A folder of shards (as `opts` reads it) counts as its files.
pub fn over_limit<P: AsRef<std::path::Path>>(
    inputs: &[P],
    opts: &neardup_io::ReadOptions,
    arg: Option<u64>,
) -> Option<Over> {
    let mut input = 0u64;
    for path in inputs {
        let path = path.as_ref();
        let size = match std::fs::metadata(path) {
            Ok(m) if m.is_file() => expanded_size(path, m.len()),
            Ok(m) if m.is_dir() => {
                let shards = neardup_io::documents::shards(path, opts).ok()??;
                shards.files.iter().try_fold(0u64, |sum, file| {
                    let len = std::fs::metadata(file).ok()?.len();
                    Some(sum.saturating_add(expanded_size(file, len)))
                })?
            }
            _ => return None,
        };
        input = input.saturating_add(size);
    }
    let (limit, named) = memory_limit(arg)?;
    let need = input.saturating_mul(HELD_PER_INPUT_BYTE);
    (need > limit).then_some(Over {
        input,
        need,
        limit,
        named,
    })
}

/// The bytes a file of `len` bytes is taken to hold once read: compressed files (gzip,
/// zstd, Parquet, whose pages are compressed too) as expanded by [`GZIP_RATIO`].
fn expanded_size(path: &std::path::Path, len: u64) -> u64 {
    let compressed = neardup_io::is_gzip_name(path)
        || neardup_io::is_zstd_name(path)
        || neardup_io::Format::from_extension(path) == Some(neardup_io::Format::Parquet);
    len.saturating_mul(if compressed { GZIP_RATIO } else { 1 })
}

/// What a gzip file is taken to expand to, times its size: text typically compresses 3 to
/// 5 times, so the prediction errs towards spilling.
const GZIP_RATIO: u64 = 5;

/// A run that spills: where, how, and the summary's line on why.
pub struct Spill {
    pub options: SpillOptions,
    pub line: String,
}

/// The spill of a run whose inputs are predicted not to fit in memory; `None` if they
/// fit, if their size is unknown (standard input), or if the exact join was asked for
/// (it holds every set; the memory check refuses it if it would not fit).
pub fn decide(args: &RunSettings, config: &Config) -> Result<Option<Spill>> {
    if args.method() == Method::Exact {
        return Ok(None);
    }
    let Some(over) = over_limit_of(args) else {
        return Ok(None);
    };
    let (input, need, named) = (over.input, over.need, &over.named);
    let in_memory = if !config.sketch().is_minhash() {
        Some("a simhash run holds every set in memory: use a MinHash sketch (which spills to disk)")
    } else if config.measure().from_smaller() {
        Some("a containment run holds every set in memory")
    } else {
        None
    };
    if let Some(why) = in_memory {
        usage!(
            "the input ({}) may need up to {} in memory, more than {named}; {why} or raise --memory",
            bytes(input),
            bytes(need)
        );
    }
    if config.verification() != Verification::Exact {
        usage!(
            "the input ({}) may need up to {} in memory, more than {named}; a run that \
             large spills to disk, which verifies exactly: drop --verify {}",
            bytes(input),
            bytes(need),
            config.verification().name()
        );
    }
    spill_at(args, over).map(Some)
}

/// [`over_limit`] for a run's inputs and its reference (held as the inputs are), at
/// its `--memory`.
pub fn over_limit_of(args: &RunSettings) -> Option<Over> {
    let given: Vec<&std::path::PathBuf> = args
        .input
        .reference
        .iter()
        .chain(&args.input.inputs)
        .collect();
    over_limit(&given, &args.input.read_options(), args.matching.memory)
}

/// The spill of a run over the limit: into --tmp (or the system's folder), sorting a
/// quarter of the limit at a time.
pub fn spill_at(args: &RunSettings, over: Over) -> Result<Spill> {
    let Over {
        input,
        need,
        limit,
        named,
    } = over;
    let dir = args.tmp.clone().unwrap_or_else(std::env::temp_dir);
    if !dir.is_dir() {
        usage!("--tmp {}: not a folder", dir.display());
    }
    // A quarter for sorting at a time: verification holds twice that, and the rest is
    // per document (ids, places, sets' offsets, groups).
    let sorting = (limit / 4).max(1 << 20);
    let options = SpillOptions::new(&dir).memory(usize::try_from(sorting).unwrap_or(usize::MAX));
    let line = format!(
        "spills to {}: the input ({}) may need up to {} in memory, more than {named}; \
         sorts {} at a time",
        dir.display(),
        bytes(input),
        bytes(need),
        bytes(sorting)
    );
    Ok(Spill { options, line })
}
