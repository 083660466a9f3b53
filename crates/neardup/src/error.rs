//! The library's error type.

/// Everything that can go wrong when configuring or running the pipeline.
///
/// The pipeline itself cannot fail on any input text; only configuration is validated.
/// Messages speak of the library's settings, so any front end can show them; new kinds of
/// error may be added, so match with a wildcard arm.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The similarity threshold must lie in
    /// [`MIN_THRESHOLD`](crate::pipeline::MIN_THRESHOLD)..=1: below it, size windows such
    /// as `n / t` and the band plan's arithmetic lose precision.
    #[error("threshold must be in 0.01..=1, got {0}")]
    InvalidThreshold(f64),
    /// A shingle specification could not be parsed (expected `char:K` or `word:K` with K
    /// in 1..=[`MAX_SHINGLE_SIZE`](crate::shingle::MAX_SHINGLE_SIZE)).
    #[error("invalid shingle spec {0:?}: expected char:K or word:K with K in 1..=1024")]
    InvalidShingleSpec(String),
    /// A normalization level could not be parsed (expected `none`, `basic`, `nfkc` or
    /// `aggressive`).
    #[error("invalid normalization {0:?}: expected none, basic, nfkc or aggressive")]
    InvalidNormalization(String),
    /// The shingle size must be in 1..=[`MAX_SHINGLE_SIZE`](crate::shingle::MAX_SHINGLE_SIZE).
    #[error("shingle size must be in 1..=1024, got {0}")]
    InvalidShingleSize(usize),
    /// The cap on shingle positions per document must be in
    /// 1..=[`MAX_MAX_SHINGLES`](crate::shingle::MAX_MAX_SHINGLES).
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
    /// Keep ranks must be given for every document.
    #[error("{ranks} keep ranks for {documents} documents: give one per document")]
    KeepRanks {
        /// Ranks given.
        ranks: usize,
        /// Documents in the corpus.
        documents: usize,
    },
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
}

/// The library's result alias.
pub type Result<T> = std::result::Result<T, Error>;
