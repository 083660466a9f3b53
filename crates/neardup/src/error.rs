//! The library's error type, and the names the option enums print as and parse from.

/// Everything that can go wrong when configuring or running the pipeline.
///
/// The pipeline itself cannot fail on any input text; only configuration is validated.
/// Messages speak of the library's settings, so any front end can show them; new kinds of
/// error may be added, so match with a wildcard arm.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The similarity threshold must lie in
    /// [`MIN_THRESHOLD`](crate::run::MIN_THRESHOLD)..=1: below it, size windows such
    /// as `n / t` and the band plan's arithmetic lose precision.
    #[error("threshold must be in 0.01..=1, got {0}")]
    InvalidThreshold(f64),
    /// A shingle specification could not be parsed (expected `char:K` or `word:K` with K
    /// in 1..=[`MAX_SHINGLE_SIZE`](crate::text::shingle::MAX_SHINGLE_SIZE)).
    #[error("invalid shingle spec {0:?}: expected char:K or word:K with K in 1..=1024")]
    InvalidShingleSpec(String),
    /// A normalization level could not be parsed (expected `none`, `basic`, `nfkc` or
    /// `aggressive`).
    #[error("invalid normalization {0:?}: expected none, basic, nfkc or aggressive")]
    InvalidNormalization(String),
    /// A verification policy could not be parsed (expected `exact`, `estimate`, `triage`
    /// or `none`).
    #[error("invalid verification {0:?}: expected exact, estimate, triage or none")]
    InvalidVerification(String),
    /// A keep policy could not be parsed (expected `first`, `last`, `longest` or
    /// `shortest`).
    #[error("invalid keep policy {0:?}: expected first, last, longest or shortest")]
    InvalidKeepPolicy(String),
    /// A method could not be parsed (expected `auto`, `lsh` or `exact`).
    #[error("invalid method {0:?}: expected auto, lsh or exact")]
    InvalidMethod(String),
    /// A sketch kind could not be parsed (expected `oph`, `classic` or `simhash`).
    #[error("invalid sketch {0:?}: expected oph, classic or simhash")]
    InvalidSketch(String),
    /// A measure could not be parsed (expected one of [`Measure::ALL`](crate::Measure::ALL)
    /// by its name).
    #[error("invalid measure {0:?}: expected {names}", names = crate::run::measure::Measure::expected())]
    InvalidMeasure(String),
    /// The SimHash distance must be in 0..=[`MAX_HAMMING`](crate::candidates::MAX_HAMMING).
    #[error("the Hamming distance must be in 0..=16, got {0}")]
    InvalidHamming(u32),
    /// A setting or a use that only MinHash has was asked of SimHash: bands and rows,
    /// verification by the MinHash estimate (`estimate`, `triage`), spilling to disk, an
    /// index.
    #[error("{0}: MinHash sketches only, not simhash (simhash verifies exactly or not at all)")]
    NotForSimHash(&'static str),
    /// A setting or a use that containment does not take was asked of it: clusters (a
    /// fragment contained in two unrelated pages does not make the pages one cluster),
    /// bands and rows (chosen per size partition), the checks beyond the buckets turned
    /// off (it has none), verification other than exact. The text says which, and why.
    #[error("measure containment: {0}")]
    NotForContainment(&'static str),
    /// A Hamming distance was given without [`SketchKind::SimHash`](crate::sketch::SketchKind::SimHash):
    /// it is the distance of SimHash fingerprints.
    #[error("the Hamming distance is the distance of SimHash fingerprints: it applies to sketch simhash only")]
    HammingWithoutSimHash,
    /// A signature length other than the default was given with SimHash, which keeps one
    /// 64-bit fingerprint per document.
    #[error("the number of permutations ({0}) is the length of a MinHash signature; sketch simhash keeps one 64-bit fingerprint")]
    NumPermWithSimHash(usize),
    /// The checks beyond the buckets were turned off with SimHash, which has none.
    #[error("sketch simhash looks at no pairs beyond its candidates: the checks beyond the buckets cannot be turned off")]
    NoNeighboursWithSimHash,
    /// A run plan was made for another corpus: a corpus on disk runs on the spilled
    /// bands, and they need one.
    #[error("the {0:?} engine does not run on this corpus (a run plan is made for the corpus it runs on)")]
    PlanNotForCorpus(crate::run::Engine),
    /// A corpus spilled to disk was run a second time: its files are consumed by the
    /// first run.
    #[error("a corpus spilled to disk runs once; read it again to run it again")]
    CorpusSpent,
    /// The shingle size must be in 1..=[`MAX_SHINGLE_SIZE`](crate::text::shingle::MAX_SHINGLE_SIZE).
    #[error("shingle size must be in 1..=1024, got {0}")]
    InvalidShingleSize(usize),
    /// The cap on shingle positions per document must be in
    /// 1..=[`MAX_MAX_SHINGLES`](crate::text::shingle::MAX_MAX_SHINGLES).
    #[error("the cap on shingles per document must be in 1..=4294967296, got {0}")]
    InvalidMaxShingles(usize),
    /// The number of permutations must be in 1..=65536.
    #[error("number of permutations must be in 1..=65536, got {0}")]
    InvalidNumPerm(usize),
    /// Bands × rows must fit in the signature and both must be at least 1.
    #[error("{bands} bands x {rows} rows does not fit a signature of {num_perm} (need bands, rows >= 1 and bands*rows <= num_perm)")]
    InvalidBands {
        /// Requested bands.
        bands: usize,
        /// Requested rows per band.
        rows: usize,
        /// Signature length.
        num_perm: usize,
    },
    /// Only one of `bands` and `rows` was given.
    #[error("bands and rows go together: give both or neither")]
    IncompleteBands,
    /// A pair handed to [`PairSet::from_pairs`](crate::run::PairSet::from_pairs) names no two
    /// distinct documents of the corpus that take part in matching.
    #[error("pair ({a}, {b}) is not two distinct documents with shingles among {documents}")]
    InvalidPair {
        /// One document of the pair.
        a: u32,
        /// The other.
        b: u32,
        /// Documents in the corpus.
        documents: usize,
    },
    /// Keep ranks must be given for every document.
    #[error("{ranks} keep ranks for {documents} documents: give one per document")]
    KeepRanks {
        /// Ranks given.
        ranks: usize,
        /// Documents in the corpus.
        documents: usize,
    },
    /// A reference corpus of more documents than the corpus holds.
    #[error("a reference of {reference} documents in a corpus of {documents}")]
    Reference {
        /// Reference documents given.
        reference: u32,
        /// Documents in the corpus.
        documents: usize,
    },
    /// An engine that cannot keep a reference corpus apart (its own pairs or clusters do
    /// not know it): the engine's name.
    #[error("{0} does not run against a reference corpus")]
    ReferenceNotFor(&'static str),
    /// More documents than the library takes: they are numbered with `u32`, so at most
    /// `u32::MAX` (4,294,967,295) at once. Holds the number given.
    #[error("too many documents: {0} (at most 4294967295)")]
    TooManyDocuments(usize),
    /// More shingles than the exact join numbers with `u32`: a set of `shingles` elements
    /// (at most `u32::MAX − 1`), or `shingles` distinct shingles shared between sets (at
    /// most `u32::MAX`).
    #[error("too many shingles for the exact join: {shingles} (at most {limit})")]
    TooManyShingles {
        /// Shingles given: in one set, or distinct and shared between sets.
        shingles: usize,
        /// The most the join takes.
        limit: usize,
    },
    /// A corpus holds 32-bit ids and sketches them: a configuration whose sketches hash
    /// the 64-bit hashes ([`SketchInput::Hashes`](crate::text::SketchInput::Hashes), an older
    /// index's) is for single documents only.
    #[error("a corpus sketches 32-bit shingle ids; sketch input `hashes` is for indexes made before format 3")]
    CorpusSketchesIds,
    /// A run that spills to disk verifies exactly: estimates need every signature in
    /// memory. Holds the verification asked for.
    #[error("a run that spills to disk verifies exactly, not by {0}")]
    SpillNeedsExact(String),
    /// A run that spills to disk could not write or read one of its temporary files
    /// (the folder is missing or full, say).
    #[error("cannot use the temporary folder {dir}: {message}")]
    Spill {
        /// The folder of the temporary files.
        dir: String,
        /// What the system said.
        message: String,
    },
    /// A block of a distributed run's shuffle ([`shuffle`](crate::shuffle)) could not be
    /// read (truncated or not written by [`BlockWriter`](crate::shuffle::BlockWriter)), or
    /// its inputs do not fit together. Holds what is wrong.
    #[error("shuffle: {0}")]
    ShuffleBlock(String),
}

/// The library's result alias.
pub type Result<T> = std::result::Result<T, Error>;

/// `Display` and `FromStr` for an option enum through its `name()` and `ALL`, so that a
/// value parses from exactly the name it prints as (surrounding whitespace aside) and
/// anything else is `$error` holding the text given.
macro_rules! by_name {
    ($enum:ty, $error:path) => {
        impl std::fmt::Display for $enum {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $enum {
            type Err = $crate::Error;

            /// Parses a value's name.
            fn from_str(s: &str) -> $crate::Result<Self> {
                <$enum>::ALL
                    .into_iter()
                    .find(|v| v.name() == s.trim())
                    .ok_or_else(|| $error(s.to_string()))
            }
        }
    };
}
pub(crate) use by_name;

/// Checks an option enum's names: each value prints as its name and parses back from it;
/// with the `clap` feature, its `clap::ValueEnum` has the same values under the same names.
#[cfg(test)]
pub(crate) fn assert_named<T>(all: &[T])
where
    T: Copy + std::fmt::Debug + PartialEq + std::fmt::Display + std::str::FromStr<Err = Error>,
    T: MaybeValueEnum,
{
    for &v in all {
        assert_eq!(v.to_string().parse::<T>(), Ok(v));
        assert_eq!(format!(" {v}\n").parse::<T>(), Ok(v));
    }
    #[cfg(feature = "clap")]
    {
        assert_eq!(T::value_variants(), all);
        for v in all {
            let value = v.to_possible_value().expect("every value has a name");
            assert_eq!(value.get_name(), v.to_string());
        }
    }
}

/// `clap::ValueEnum` when the `clap` feature is on, nothing otherwise: the bound
/// [`assert_named`] needs to check the clap names only where they exist.
#[cfg(all(test, feature = "clap"))]
pub(crate) trait MaybeValueEnum: clap::ValueEnum {}
#[cfg(all(test, feature = "clap"))]
impl<T: clap::ValueEnum> MaybeValueEnum for T {}
#[cfg(all(test, not(feature = "clap")))]
pub(crate) trait MaybeValueEnum {}
#[cfg(all(test, not(feature = "clap")))]
impl<T> MaybeValueEnum for T {}
