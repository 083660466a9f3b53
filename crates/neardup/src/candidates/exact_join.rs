//! The exact set-similarity join, documented on [`ExactJoin`].

use rayon::prelude::*;

use crate::corpus::slot::{check_documents, doc_id, doc_ids, Slot};
use crate::error::{Error, Result};
use crate::text::ids::Shingle;
use crate::verify::jaccard::{intersection_at_least, jaccard_from_counts, meets_threshold};

/// A pair of documents (indices into the input slice) with a < b, and their exact Jaccard similarity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoredPair {
    /// Index of the first document in the input slice (the smaller index).
    pub a: u32,
    /// Index of the second document in the input slice (`b > a`).
    pub b: u32,
    /// Exact Jaccard similarity of the two sets, as given by
    /// [`jaccard_from_counts`].
    pub jaccard: f64,
}

/// Counters for the summary: how much work the filters saved.
///
/// `candidates >= verified >= pairs`; all three are identical whatever the number of threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JoinStats {
    /// Pairs that shared a prefix token and survived the length and positional filters, and
    /// so were handed to verification.
    pub candidates: u64,
    /// Candidates whose full overlap had to be counted by merging the two sets (the others were
    /// ruled out by the upper bound on what the rest of the sets can still share).
    pub verified: u64,
    /// Pairs reported: Jaccard similarity at or above the threshold.
    pub pairs: u64,
    /// Prefix-index entries read while looking for candidates: the join's search work.
    pub postings: u64,
    /// Elements of the candidates' remaining tokens handed to the merge (at most what
    /// it compares): the join's verification work.
    pub merged: u64,
}

/// Counters of parts of one join, summed.
impl std::ops::AddAssign for JoinStats {
    fn add_assign(&mut self, part: JoinStats) {
        self.candidates += part.candidates;
        self.verified += part.verified;
        self.pairs += part.pairs;
        self.postings += part.postings;
        self.merged += part.merged;
    }
}

/// Exact set-similarity join: every pair of shingle sets whose Jaccard similarity reaches the
/// threshold `t`, found without comparing all pairs.
///
/// This is the AllPairs / PPJoin family of algorithms (Bayardo, Ma and Srikant, "Scaling up all
/// pairs similarity search", WWW 2007; Xiao, Wang, Lin and Yu, "Efficient similarity joins for
/// near duplicate detection", WWW 2008). It rests on the *prefix principle*: fix one global order
/// of all tokens and sort every set by it; if `|x ∩ y| >= α`, then the first `|x| - α + 1`
/// tokens of `x` and the first `|y| - α + 1` tokens of `y` share at least one token (otherwise
/// `α` shared tokens would not fit in what is left). So only pairs that share a token in their
/// short prefixes can reach the threshold, and an inverted index over prefix tokens finds them.
/// The steps are:
///
/// 1. **Global order.** Tokens are ranked by rising document frequency, ties broken by the hash
///    value, so prefixes consist of rare tokens and their posting lists are short. Tokens that
///    occur in one document only can never be shared: they are not ranked at all, only counted.
///    They sort before every shared token and fill the head of each set's prefix, which costs
///    nothing and keeps the positions right.
/// 2. **Records by size.** Non-empty sets are processed in `(size, index)` order, so a record
///    only has to look for partners among the records before it, which are no larger.
/// 3. **Prefixes.** A record `x` indexes its first `|x| - α(x, x) + 1` tokens (the shorter
///    "midprefix": every partner probing it is at least as large), and a probing record `y` looks
///    up its first `|y| - α(m, y) + 1` tokens, where `m` is the smallest partner size allowed by
///    the length filter.
/// 4. **Length filter.** `J(x, y) <= |x| / |y|` for `|x| <= |y|`, so partners smaller than
///    `t |y|` are skipped; posting lists are in record order, hence sorted by size, and a binary
///    search jumps over them.
/// 5. **Positional filter (PPJoin).** When `y`'s token at position `j` meets `x`'s at position `i`,
///    at most `A[x] + 1 + min(|x| - i - 1, |y| - j - 1)` tokens can be shared, where `A[x]` counts
///    the matches found so far; a pair whose bound falls below the required overlap is pruned.
/// 6. **Verification.** The prefix overlap of each surviving candidate is completed by merging the
///    rest of the two sets, starting after the prefixes, and the pair is kept when
///    `meets_threshold(jaccard_from_counts(overlap, |x|, |y|), t)`: the very same test as the
///    LSH verifier, so both modes agree to the bit at the threshold.
///
/// Every bound above ("required overlap `α`", "smallest partner size") is not computed from a
/// formula such as `ceil(t (|x| + |y|) / (1 + t))`, whose floating-point rounding could drop a
/// pair sitting exactly on the threshold, but tabulated from that final floating-point test
/// itself, which is monotone in the overlap and in the sizes. The filters therefore never drop a
/// pair the final test would accept, and never let through more than they must.
///
/// The remapping is linear-time and cache-friendly, because at a million documents it costs as
/// much as the join itself: token occurrences are grouped by a two-level radix partition on a
/// bijective mix of the token (then small sorts), only the shared tokens are sorted into the
/// global order, and each record's ranks are placed block by block of neighbouring records.
/// Peak memory is about 20 bytes per input token on top of the input.
///
/// Probing is read-only once the index is built, so records probe in parallel (rayon), each
/// against the records before it, with a per-worker overlap counter; per-record results are
/// merged and sorted by `(a, b)`, so the output and the counters do not depend on the number of
/// threads.
#[derive(Clone, Copy, Debug)]
pub struct ExactJoin {
    threshold: f64,
}

impl ExactJoin {
    /// A join reporting pairs with Jaccard similarity `>= threshold`.
    ///
    /// The threshold must be in `(0, 1]`; the caller validates it (this is only checked in debug
    /// builds). Never panics.
    pub fn new(threshold: f64) -> Self {
        debug_assert!(
            threshold > 0.0 && threshold <= 1.0,
            "Jaccard threshold must be in (0, 1], got {threshold}"
        );
        Self { threshold }
    }

    /// All pairs with Jaccard >= threshold, sorted by (a, b).
    ///
    /// Each set must be sorted and deduplicated (checked in debug builds only); empty sets are
    /// never part of a pair. The result is identical whatever the number of rayon threads.
    ///
    /// Documents and shingles are numbered with `u32`: more than `u32::MAX` sets is
    /// [`Error::TooManyDocuments`]; a set of `u32::MAX` shingles or more, or more than
    /// `u32::MAX` distinct shingles shared between sets, is [`Error::TooManyShingles`].
    pub fn try_join<S: Shingle>(&self, sets: &[&[S]]) -> Result<(Vec<ScoredPair>, JoinStats)> {
        check_documents(sets.len())?;
        if let Some(set) = sets.iter().find(|s| s.len() > MAX_SET) {
            return Err(Error::TooManyShingles {
                shingles: set.len(),
                limit: MAX_SET,
            });
        }
        debug_assert!(
            sets.iter().all(|s| s.windows(2).all(|w| w[0] < w[1])),
            "every set must be sorted and deduplicated"
        );

        let mut order: Vec<u32> = doc_ids(sets.len())
            .filter(|&i| !sets[i as usize].is_empty())
            .collect();
        if order.len() < 2 {
            return Ok((Vec::new(), JoinStats::default()));
        }
        order.par_sort_unstable_by_key(|&i| (sets[i as usize].len(), i));
        let max_len = sets[*order.last().expect("two records or more") as usize].len();

        let bounds = Bounds::new(self.threshold, max_len);
        let records = Records::build(sets, order)?;
        let index = PrefixIndex::build(&records, &bounds);
        let ctx = Probe {
            threshold: self.threshold,
            bounds: &bounds,
            records: &records,
            index: &index,
        };

        let n = records.len();
        let chunks = n.div_ceil(PROBE_CHUNK);
        let parts: Vec<(Vec<ScoredPair>, JoinStats)> = (0..chunks)
            .into_par_iter()
            .map_init(
                || Scratch::new(n),
                |scratch, chunk| {
                    let mut found = Vec::new();
                    let mut stats = JoinStats::default();
                    let end = n.min((chunk + 1) * PROBE_CHUNK);
                    for y in chunk * PROBE_CHUNK..end {
                        ctx.probe(y, scratch, &mut found, &mut stats);
                    }
                    (found, stats)
                },
            )
            .collect();

        let mut stats = JoinStats::default();
        let mut pairs = Vec::with_capacity(parts.iter().map(|(p, _)| p.len()).sum());
        for (found, part) in parts {
            stats += part;
            pairs.extend(found);
        }
        // Pairs are distinct, so an unstable sort is deterministic.
        pairs.par_sort_unstable_by_key(|p| (p.a, p.b));
        stats.pairs = pairs.len() as u64;
        Ok((pairs, stats))
    }
}

/// About how many blocks of consecutive records the ranked tokens are partitioned into.
const RECORD_BLOCKS: usize = 512;

/// Records probed by one task, all with one overlap-count buffer.
const PROBE_CHUNK: usize = 512;

/// The largest set the join takes: sizes, positions and overlap counts (held in a [`Slot`])
/// stay below `u32::MAX`.
const MAX_SET: usize = u32::MAX as usize - 1;

/// Overlap bounds tabulated from the final floating-point test, so the filters are exact.
struct Bounds {
    /// `alpha[s]`: the least overlap with which two sets whose sizes add up to `s` meet the
    /// threshold; `s / 2 + 1` (more than they can share) when no overlap does.
    alpha: Vec<u32>,
    /// `min_len[l]`: the least size `m <= l` of a set that can meet the threshold with a set of
    /// size `l` (the length filter); `l + 1` when there is none.
    min_len: Vec<u32>,
}

impl Bounds {
    fn new(threshold: f64, max_len: usize) -> Self {
        // jaccard_from_counts(o, la, lb) = o / (la + lb - o) depends on the sizes through their
        // sum only. With IEEE division (correctly rounded, hence monotone in each operand) the
        // test is monotone: more overlap at the same total size never fails where less passed,
        // and a larger total never passes where a smaller one failed. So each table is
        // non-decreasing and is filled by one forward scan.
        let passes = |overlap: usize, la: usize, lb: usize| {
            meets_threshold(jaccard_from_counts(overlap, la, lb), threshold)
        };

        let mut alpha = Vec::with_capacity(2 * max_len + 1);
        // Never below 1: two sets without a shared token are never a pair.
        let mut o = 1;
        for s in 0..=2 * max_len {
            while o <= s / 2 && !passes(o, o, s - o) {
                o += 1;
            }
            alpha.push(to_u32(o));
        }

        let mut min_len = Vec::with_capacity(max_len + 1);
        let mut m = 1;
        for l in 0..=max_len {
            // A set of size m <= l shares at most m tokens with one of size l: J <= m / l.
            while m <= l && !passes(m, m, l) {
                m += 1;
            }
            min_len.push(to_u32(m));
        }
        Self { alpha, min_len }
    }

    /// Least overlap for two sets of sizes `la` and `lb` to meet the threshold.
    #[inline]
    fn required(&self, la: usize, lb: usize) -> usize {
        self.alpha[la + lb] as usize
    }

    /// Smallest partner size for a record of size `l`, or `None` if it can have no partner.
    #[inline]
    fn min_partner(&self, l: usize) -> Option<usize> {
        let m = self.min_len[l] as usize;
        (m <= l).then_some(m)
    }

    /// Tokens of a record of size `l` put in the index: its partners probing it are no smaller.
    fn index_prefix(&self, l: usize) -> usize {
        (l + 1).saturating_sub(self.required(l, l))
    }

    /// Tokens a record of size `l` looks up: its partners are no smaller than the length filter's
    /// bound `m`, and the required overlap grows with the partner's size.
    fn probe_prefix(&self, l: usize) -> usize {
        match self.min_partner(l) {
            Some(m) => (l + 1).saturating_sub(self.required(m, l)),
            None => 0,
        }
    }
}

/// The non-empty sets in `(size, index)` order, their tokens replaced by global ranks.
///
/// A record's tokens in the global order are `unique` tokens of its own (document frequency 1,
/// never shared, so never ranked), followed by its ranked tokens in rising rank order.
struct Records {
    /// Input index of each record.
    ids: Vec<u32>,
    /// Size of each record (all its tokens).
    lens: Vec<u32>,
    /// Number of tokens that occur in this record only.
    unique: Vec<u32>,
    /// Start of each record's ranked tokens in `ranks`; `ranks[start..start + lens - unique]`.
    starts: Vec<usize>,
    /// Ranked (shared) tokens of all records, each record's in rising order.
    ranks: Vec<u32>,
    /// Number of distinct ranked tokens.
    distinct: usize,
}

/// One token occurrence during the remapping: the token, mixed by [`mix`], and the record
/// (position in the order). Packed to 12 bytes: there is one per token of the input.
#[derive(Clone, Copy, Default)]
#[repr(C, packed(4))]
struct Occurrence {
    key: u64,
    record: u32,
}

/// A token shared by several records (`df` of them); `run` numbers the runs of shared tokens in
/// the grouped occurrences.
#[derive(Clone, Copy)]
struct SharedToken {
    token: u64,
    df: u32,
    run: u32,
}

impl Records {
    /// Fails if more than `u32::MAX` distinct tokens are shared: ranks are `u32`.
    fn build<S: Shingle>(sets: &[&[S]], order: Vec<u32>) -> Result<Self> {
        let n = order.len();
        let lens: Vec<u32> = order
            .iter()
            .map(|&i| to_u32(sets[i as usize].len()))
            .collect();
        let mut starts = Vec::with_capacity(n);
        let mut total = 0usize;
        for &l in &lens {
            starts.push(total);
            total += l as usize;
        }

        // Group the occurrences of each token: a two-level radix partition on a bijective mix of
        // the token (uniform whatever the token values), then small sorts inside each part.
        let bits = bucket_bits(total);
        let bucket = |key: u64| {
            if bits == 0 {
                0
            } else {
                (key >> (64 - bits)) as usize
            }
        };
        let mut bucket_starts = vec![0usize; (1 << bits) + 1];
        for &i in &order {
            for &token in sets[i as usize] {
                bucket_starts[bucket(mix(token.into())) + 1] += 1;
            }
        }
        for b in 1..bucket_starts.len() {
            bucket_starts[b] += bucket_starts[b - 1];
        }
        let mut occ = vec![Occurrence::default(); total];
        let mut cursor = bucket_starts.clone();
        for (record, &i) in order.iter().enumerate() {
            for &token in sets[i as usize] {
                let key = mix(token.into());
                let c = &mut cursor[bucket(key)];
                occ[*c] = Occurrence {
                    key,
                    record: doc_id(record),
                };
                *c += 1;
            }
        }
        drop(cursor);

        let mut buckets = Vec::with_capacity(1 << bits);
        let mut rest = occ.as_mut_slice();
        for b in 0..1 << bits {
            let (head, tail) = rest.split_at_mut(bucket_starts[b + 1] - bucket_starts[b]);
            buckets.push(head);
            rest = tail;
        }
        let mut shared: Vec<SharedToken> = buckets
            .into_par_iter()
            .map_init(Vec::new, |scratch, bucket| {
                sort_by_key(bucket, bits, scratch);
                shared_runs(bucket)
                    .map(|run| SharedToken {
                        token: unmix(bucket[run.start].key),
                        df: to_u32(run.len()),
                        run: 0,
                    })
                    .collect::<Vec<_>>()
            })
            .flatten()
            .collect();
        if u32::try_from(shared.len()).is_err() {
            return Err(Error::TooManyShingles {
                shingles: shared.len(),
                limit: u32::MAX as usize,
            });
        }
        for (run, s) in shared.iter_mut().enumerate() {
            s.run = to_u32(run);
        }
        // The global order: rising document frequency, then token value. Distinct tokens, so
        // the unstable sort is deterministic.
        shared.par_sort_unstable_by_key(|s| (s.df, s.token));
        let mut rank_of_run = vec![0u32; shared.len()];
        for (rank, s) in shared.iter().enumerate() {
            rank_of_run[s.run as usize] = to_u32(rank);
        }
        let distinct = shared.len();
        drop(shared);

        let (ranks, unique) = place_ranks(&rank_of_run, occ, &lens, &starts);
        Ok(Self {
            ids: order,
            lens,
            unique,
            starts,
            ranks,
            distinct,
        })
    }

    fn len(&self) -> usize {
        self.ids.len()
    }

    /// The ranked tokens of record `r`, in rising order.
    #[inline]
    fn ranked(&self, r: usize) -> &[u32] {
        let start = self.starts[r];
        &self.ranks[start..start + (self.lens[r] - self.unique[r]) as usize]
    }
}

/// The runs of two or more equal keys in occurrences grouped by key.
fn shared_runs(occ: &[Occurrence]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < occ.len() {
            let key = occ[i].key;
            let start = i;
            i += 1;
            while i < occ.len() && occ[i].key == key {
                i += 1;
            }
            if i - start > 1 {
                return Some(start..i);
            }
        }
        None
    })
}

/// Each record's ranked tokens in rising order, laid out at `starts`, and its number of unique
/// tokens (those in no shared run).
///
/// Writing each occurrence's rank straight to its record would cost a cache miss per
/// occurrence, so the ranks are first partitioned by blocks of consecutive records, in one
/// sequential pass over the occurrences, each block's part laid where its records' tokens will
/// go; then each block is placed, and each record sorted, within the block's own range.
fn place_ranks(
    rank_of_run: &[u32],
    occ: Vec<Occurrence>,
    lens: &[u32],
    starts: &[usize],
) -> (Vec<u32>, Vec<u32>) {
    let (n, total) = (lens.len(), occ.len());
    let block_bits = (n / RECORD_BLOCKS).max(1).ilog2();
    let blocks = n.div_ceil(1 << block_bits);
    let block_start = |b: usize| starts.get(b << block_bits).copied().unwrap_or(total);
    let mut placed = vec![(0u32, 0u32); total];
    let mut cursor: Vec<usize> = (0..blocks).map(block_start).collect();
    for (run, range) in shared_runs(&occ).enumerate() {
        let rank = rank_of_run[run];
        for o in &occ[range] {
            let record = o.record;
            let c = &mut cursor[record as usize >> block_bits];
            placed[*c] = (record, rank);
            *c += 1;
        }
    }
    drop(occ);

    let mut ranks = vec![0u32; total];
    let mut regions = Vec::with_capacity(blocks);
    let mut rest = ranks.as_mut_slice();
    for b in 0..blocks {
        let (head, tail) = rest.split_at_mut(block_start(b + 1) - block_start(b));
        regions.push((b, head));
        rest = tail;
    }
    let unique: Vec<u32> = regions
        .into_par_iter()
        .flat_map_iter(|(b, region)| {
            let first = b << block_bits;
            let records = first..n.min((b + 1) << block_bits);
            let base = block_start(b);
            let mut fill: Vec<usize> = records.clone().map(|r| starts[r] - base).collect();
            for &(record, rank) in &placed[base..cursor[b]] {
                let f = &mut fill[record as usize - first];
                region[*f] = rank;
                *f += 1;
            }
            for r in records.clone() {
                region[starts[r] - base..fill[r - first]].sort_unstable();
            }
            records.map(move |r| lens[r] - to_u32(fill[r - first] + base - starts[r]))
        })
        .collect();
    (ranks, unique)
}

/// Odd, so multiplying by it is a bijection on `u64` that spreads any token values evenly over
/// the high bits.
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// The inverse of [`MIX`] modulo 2^64 (Newton's iteration doubles the correct low bits).
const UNMIX: u64 = {
    let mut inv = MIX; // correct to 3 bits, as for every odd number
    let mut i = 0;
    while i < 5 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(MIX.wrapping_mul(inv)));
        i += 1;
    }
    inv
};

#[inline]
fn mix(token: u64) -> u64 {
    token.wrapping_mul(MIX)
}

#[inline]
fn unmix(key: u64) -> u64 {
    key.wrapping_mul(UNMIX)
}

/// Number of first-level partition bits (high bits of the key) for `total` occurrences.
fn bucket_bits(total: usize) -> u32 {
    const TARGET: usize = 1 << 16;
    const MAX_BITS: u32 = 8;
    if total <= TARGET {
        0
    } else {
        (total / TARGET).ilog2().min(MAX_BITS - 1) + 1
    }
}

/// Sorts occurrences whose keys agree on their `used` high bits by key: a counting sort on the
/// next bits of the key into `scratch`, then a small sort of each part.
fn sort_by_key(part: &mut [Occurrence], used: u32, scratch: &mut Vec<Occurrence>) {
    const PER_PART: usize = 32;
    if part.len() <= 2 * PER_PART {
        part.sort_unstable_by_key(|o| o.key);
        return;
    }
    let bits = (part.len() / PER_PART).ilog2().min(16);
    let shift = 64 - used - bits;
    let digit = |key: u64| ((key >> shift) as usize) & ((1 << bits) - 1);
    let mut starts = vec![0usize; (1 << bits) + 1];
    for o in part.iter() {
        starts[digit(o.key) + 1] += 1;
    }
    for d in 1..starts.len() {
        starts[d] += starts[d - 1];
    }
    scratch.clear();
    scratch.resize(part.len(), Occurrence::default());
    let mut cursor = starts.clone();
    for &o in part.iter() {
        let c = &mut cursor[digit(o.key)];
        scratch[*c] = o;
        *c += 1;
    }
    for d in 0..1 << bits {
        scratch[starts[d]..starts[d + 1]].sort_unstable_by_key(|o| o.key);
    }
    part.copy_from_slice(scratch);
}

/// An indexed prefix token: the record holding it and its position in that record's order.
#[derive(Clone, Copy, Default)]
struct Posting {
    record: u32,
    position: u32,
}

/// Inverted index of the records' index prefixes; every list is in record order.
struct PrefixIndex {
    /// `postings[heads[rank]..heads[rank + 1]]` lists the records indexing `rank`.
    heads: Vec<usize>,
    postings: Vec<Posting>,
    /// `first_of_size[l]`: the first record of size `l` or more (records are sorted by size).
    first_of_size: Vec<u32>,
}

impl PrefixIndex {
    fn build(records: &Records, bounds: &Bounds) -> Self {
        let n = records.len();
        // Ranked tokens among the first `index_prefix` tokens of record r.
        let indexed = |r: usize| {
            let prefix = bounds.index_prefix(records.lens[r] as usize);
            let ranked = records.ranked(r);
            &ranked[..prefix
                .saturating_sub(records.unique[r] as usize)
                .min(ranked.len())]
        };
        let mut heads = vec![0usize; records.distinct + 1];
        for r in 0..n {
            for &rank in indexed(r) {
                heads[rank as usize + 1] += 1;
            }
        }
        for k in 1..heads.len() {
            heads[k] += heads[k - 1];
        }
        let mut postings = vec![Posting::default(); heads[records.distinct]];
        let mut fill = heads.clone();
        for r in 0..n {
            let unique = records.unique[r];
            for (i, &rank) in indexed(r).iter().enumerate() {
                let f = &mut fill[rank as usize];
                postings[*f] = Posting {
                    record: doc_id(r),
                    position: unique + to_u32(i),
                };
                *f += 1;
            }
        }

        let max_len = records.lens[n - 1] as usize;
        let mut first_of_size = Vec::with_capacity(max_len + 2);
        let mut r = 0;
        for l in 0..=max_len + 1 {
            while r < n && (records.lens[r] as usize) < l {
                r += 1;
            }
            first_of_size.push(to_u32(r)); // r <= the record count
        }
        Self {
            heads,
            postings,
            first_of_size,
        }
    }

    #[inline]
    fn list(&self, rank: u32) -> &[Posting] {
        &self.postings[self.heads[rank as usize]..self.heads[rank as usize + 1]]
    }
}

/// Per-worker state of the probes, reused from one record to the next.
struct Scratch {
    /// Prefix overlap of each earlier record with the probing one, none once the record is
    /// ruled out for this probe; all zero between probes.
    count: Vec<Slot>,
    /// Records whose `count` is not zero.
    touched: Vec<u32>,
}

impl Scratch {
    fn new(records: usize) -> Self {
        Self {
            count: vec![Slot::new(0); records],
            touched: Vec::new(),
        }
    }
}

/// Everything a probe reads.
struct Probe<'a> {
    threshold: f64,
    bounds: &'a Bounds,
    records: &'a Records,
    index: &'a PrefixIndex,
}

impl Probe<'_> {
    /// Finds the partners of record `y` among the records before it.
    fn probe(
        &self,
        y: usize,
        scratch: &mut Scratch,
        found: &mut Vec<ScoredPair>,
        stats: &mut JoinStats,
    ) {
        let records = self.records;
        let bounds = self.bounds;
        let ly = records.lens[y] as usize;
        let Some(min_partner) = bounds.min_partner(ly) else {
            return;
        };
        let unique_y = records.unique[y] as usize;
        let ranked_y = records.ranked(y);
        let probe_len = bounds
            .probe_prefix(ly)
            .saturating_sub(unique_y)
            .min(ranked_y.len());
        if probe_len == 0 {
            return;
        }
        let first = self.index.first_of_size[min_partner];
        let Scratch { count, touched } = scratch;

        // Candidates: earlier records at least `min_partner` long sharing a prefix token.
        for (j, &rank) in ranked_y[..probe_len].iter().enumerate() {
            let list = self.index.list(rank);
            let from = list.partition_point(|p| p.record < first);
            let rest_y = ly - (unique_y + j) - 1;
            let upto = list[from..].partition_point(|p| (p.record as usize) < y);
            stats.postings += upto as u64;
            for p in &list[from..from + upto] {
                let x = p.record as usize;
                let Some(c) = count[x].get() else {
                    continue;
                };
                if c == 0 {
                    touched.push(p.record);
                }
                let lx = records.lens[x] as usize;
                let rest_x = lx - p.position as usize - 1;
                let bound = c as usize + 1 + rest_x.min(rest_y);
                // c + 1 <= the probe prefix, shorter than a set (at most MAX_SET).
                count[x] = if bound >= bounds.required(lx, ly) {
                    Slot::new(c + 1)
                } else {
                    Slot::NONE
                };
            }
        }

        // Verification: complete the prefix overlap with the rest of both sets.
        let last_y = ranked_y[probe_len - 1];
        for &x in touched.iter() {
            let x = x as usize;
            let Some(c) = std::mem::replace(&mut count[x], Slot::new(0)).get() else {
                continue;
            };
            stats.candidates += 1;
            let c = c as usize;
            let lx = records.lens[x] as usize;
            let ranked_x = records.ranked(x);
            let index_len = bounds.index_prefix(lx) - records.unique[x] as usize;
            let last_x = ranked_x[index_len - 1];
            // The `c` matches are exactly the shared tokens up to min(last_x, last_y). Past that,
            // shared tokens are in the tail of the set whose prefix ends first and, in the other
            // set, after its first `c` ranked tokens (at least `c` of its tokens are that small).
            let (rest_x, rest_y) = if last_x < last_y {
                (&ranked_x[index_len..], &ranked_y[c..])
            } else {
                (&ranked_x[c..], &ranked_y[probe_len..])
            };
            let required = bounds.required(lx, ly);
            if c + rest_x.len().min(rest_y.len()) < required {
                continue;
            }
            stats.verified += 1;
            stats.merged += (rest_x.len() + rest_y.len()) as u64;
            let Some(rest) = intersection_at_least(rest_x, rest_y, required.saturating_sub(c))
            else {
                continue;
            };
            let jaccard = jaccard_from_counts(c + rest, lx, ly);
            if meets_threshold(jaccard, self.threshold) {
                let (a, b) = (records.ids[x], records.ids[y]);
                found.push(ScoredPair {
                    a: a.min(b),
                    b: a.max(b),
                    jaccard,
                });
            }
        }
        touched.clear();
    }
}

/// A size, count or rank as `u32`: [`ExactJoin::try_join`] checked that sets, their sizes
/// and the shared tokens fit (re-checked in debug builds).
#[inline(always)]
fn to_u32(n: usize) -> u32 {
    debug_assert!(
        u32::try_from(n).is_ok(),
        "{n} past the join's 32-bit numbering"
    );
    n as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::jaccard::jaccard;
    use proptest::prelude::*;

    use crate::sketch::SplitMix64;

    /// Uniform-enough integer in `lo..=hi`.
    fn range(rng: &mut SplitMix64, lo: usize, hi: usize) -> usize {
        lo + rng.below((hi - lo + 1) as u64) as usize
    }

    fn normalize(mut s: Vec<u64>) -> Vec<u64> {
        s.sort_unstable();
        s.dedup();
        s
    }

    fn run(sets: &[Vec<u64>], t: f64) -> (Vec<ScoredPair>, JoinStats) {
        let refs: Vec<&[u64]> = sets.iter().map(Vec::as_slice).collect();
        ExactJoin::new(t).try_join(&refs).unwrap()
    }

    /// Every pair with a shared token and its Jaccard, by a plain double loop, sorted by (a, b).
    fn all_overlapping(sets: &[Vec<u64>]) -> Vec<ScoredPair> {
        let mut out = Vec::new();
        for a in 0..sets.len() {
            for b in a + 1..sets.len() {
                let j = jaccard(&sets[a], &sets[b]);
                if j > 0.0 {
                    out.push(ScoredPair {
                        a: a as u32,
                        b: b as u32,
                        jaccard: j,
                    });
                }
            }
        }
        out
    }

    fn at_threshold(all: &[ScoredPair], t: f64) -> Vec<ScoredPair> {
        all.iter()
            .copied()
            .filter(|p| meets_threshold(p.jaccard, t))
            .collect()
    }

    /// Runs the join and checks it against the brute-force pairs; returns the stats.
    fn check_against(sets: &[Vec<u64>], all: &[ScoredPair], t: f64) -> JoinStats {
        let (got, stats) = run(sets, t);
        let want = at_threshold(all, t);
        if got != want {
            let missing: Vec<_> = want.iter().filter(|p| !got.contains(p)).take(5).collect();
            let extra: Vec<_> = got.iter().filter(|p| !want.contains(p)).take(5).collect();
            panic!(
                "t = {t}: join found {} pairs, brute force {}; missing {missing:?}, extra {extra:?}",
                got.len(),
                want.len()
            );
        }
        assert_eq!(stats.pairs, got.len() as u64);
        assert!(stats.candidates >= stats.verified && stats.verified >= stats.pairs);
        stats
    }

    fn check(sets: &[Vec<u64>], t: f64) -> JoinStats {
        check_against(sets, &all_overlapping(sets), t)
    }

    fn pair(a: u32, b: u32, jaccard: f64) -> ScoredPair {
        ScoredPair { a, b, jaccard }
    }

    #[test]
    fn no_sets_and_single_sets() {
        assert_eq!(run(&[], 0.5), (vec![], JoinStats::default()));
        assert_eq!(run(&[vec![1, 2, 3]], 0.5), (vec![], JoinStats::default()));
        assert_eq!(run(&[vec![]], 0.5), (vec![], JoinStats::default()));
        assert_eq!(run(&[vec![], vec![]], 1.0), (vec![], JoinStats::default()));
    }

    #[test]
    fn empty_sets_are_never_paired() {
        let sets = vec![vec![], vec![4, 9], vec![], vec![4, 9], vec![]];
        let (pairs, stats) = run(&sets, 1.0);
        assert_eq!(pairs, vec![pair(1, 3, 1.0)]);
        assert_eq!(stats.pairs, 1);
        check(&sets, 0.3);
    }

    #[test]
    fn identical_sets_pair_at_every_threshold() {
        let s: Vec<u64> = (0..50).map(|i| i * 7919).collect();
        let sets = vec![s.clone(), vec![1, 2, 3], s.clone(), s];
        for t in [0.1, 0.5, 0.8, 0.99, 1.0] {
            let (pairs, _) = run(&sets, t);
            assert_eq!(
                pairs,
                vec![pair(0, 2, 1.0), pair(0, 3, 1.0), pair(2, 3, 1.0)],
                "t = {t}"
            );
        }
    }

    #[test]
    fn pairs_exactly_at_the_threshold_are_found() {
        // (x, y, t) with J(x, y) == t exactly in floating point.
        let cases: Vec<(Vec<u64>, Vec<u64>, f64)> = vec![
            (vec![1, 2, 3, 4, 5], vec![1, 2, 3, 4], 0.8),
            (
                vec![10, 20, 30, 40, 50, 60, 70, 80],
                vec![10, 20, 30, 40, 50, 60, 70, 90],
                0.7777777777777778,
            ),
            (vec![1, 2, 3], vec![2, 3, 4], 0.5),
            (vec![5, 6], vec![5], 0.5),
            ((1..=10).collect(), (1..=9).collect(), 0.9),
            ((1..=19).collect(), (2..=20).collect(), 0.9),
            (vec![1, 2, 3], vec![1, 2], 2.0 / 3.0),
            ((1..=30).collect(), (1..=20).collect(), 2.0 / 3.0),
            ((1..=12).collect(), (3..=14).collect(), 10.0 / 14.0),
            ((1..=100).collect(), (1..=80).collect(), 0.8),
        ];
        for (x, y, t) in cases {
            let j = jaccard(&x, &y);
            assert_eq!(j, t, "test case itself is off: J = {j}, t = {t}");
            // Surround the pair with unrelated and partly related sets so the order is not trivial.
            let noise: Vec<u64> = x.iter().map(|v| v + 1000).collect();
            let sets = vec![noise.clone(), y.clone(), vec![x[0], 5000], x.clone(), noise];
            let (pairs, _) = run(&sets, t);
            assert!(
                pairs.contains(&pair(1, 3, j)),
                "J = t = {t} for |x| = {}, |y| = {} not found: {pairs:?}",
                x.len(),
                y.len()
            );
            check(&sets, t);
            // Just above the similarity, the pair must go.
            let above = t + 1e-12;
            if above <= 1.0 {
                let (pairs, _) = run(&sets, above);
                assert!(!pairs.iter().any(|p| (p.a, p.b) == (1, 3)), "t = {above}");
            }
        }
    }

    #[test]
    fn pairs_just_below_the_threshold_are_not_reported() {
        // 8/9 < 0.9, 3/4 < 0.8, 4/9 < 0.5, 3/5 < 2/3.
        let cases: Vec<(Vec<u64>, Vec<u64>, f64)> = vec![
            ((1..=9).collect(), (1..=8).collect(), 0.9),
            (vec![1, 2, 3, 4], vec![1, 2, 3], 0.8),
            ((1..=6).collect(), (3..=9).collect(), 0.5),
            (vec![1, 2, 3, 4], vec![2, 3, 4, 5], 2.0 / 3.0),
        ];
        for (x, y, t) in cases {
            assert!(jaccard(&x, &y) < t);
            let (pairs, stats) = run(&[x, y], t);
            assert!(pairs.is_empty(), "t = {t}: {pairs:?}");
            assert_eq!(stats.pairs, 0);
        }
    }

    #[test]
    fn every_small_size_and_overlap_agrees_with_the_final_test() {
        // Two sets of sizes lx, ly sharing exactly o tokens, for all small combinations: the
        // bounds must match meets_threshold exactly, including on the boundary.
        let thresholds = [
            0.3,
            0.1 + 0.2,
            0.5,
            0.6,
            2.0 / 3.0,
            0.7,
            0.75,
            0.8,
            0.85,
            0.9,
            1.0,
        ];
        for t in thresholds {
            for lx in 1..=14u64 {
                for ly in 1..=14u64 {
                    for o in 0..=lx.min(ly) {
                        let x: Vec<u64> = (0..lx).collect();
                        let y: Vec<u64> = (lx - o..lx - o + ly).collect();
                        let j = jaccard_from_counts(o as usize, lx as usize, ly as usize);
                        let want = if meets_threshold(j, t) {
                            vec![pair(0, 1, j)]
                        } else {
                            vec![]
                        };
                        let (got, _) = run(&[x, y], t);
                        assert_eq!(got, want, "t = {t}, |x| = {lx}, |y| = {ly}, overlap {o}");
                    }
                }
            }
        }
    }

    #[test]
    fn bound_tables_are_the_least_passing_values() {
        let thresholds = [
            0.05,
            0.1 + 0.2,
            1.0 / 3.0,
            0.5,
            0.6,
            2.0 / 3.0,
            0.7,
            0.8,
            0.9,
            0.95,
            0.99,
            1.0,
        ];
        for t in thresholds {
            let b = Bounds::new(t, 300);
            let passes =
                |o: usize, la: usize, lb: usize| meets_threshold(jaccard_from_counts(o, la, lb), t);
            for s in 0..=600 {
                let least = (1..=s / 2)
                    .find(|&o| passes(o, o, s - o))
                    .unwrap_or(s / 2 + 1);
                assert_eq!(b.alpha[s] as usize, least, "t = {t}, s = {s}");
            }
            for l in 0..=300 {
                let least = (1..=l).find(|&m| passes(m, m, l)).unwrap_or(l + 1);
                assert_eq!(b.min_len[l] as usize, least, "t = {t}, l = {l}");
            }
        }
    }

    /// `n` sets of 0 to `max_len` tokens drawn from `0..vocabulary`.
    fn random_corpus(seed: u64, n: usize, vocabulary: u64, max_len: usize) -> Vec<Vec<u64>> {
        let mut rng = SplitMix64::new(seed);
        (0..n)
            .map(|_| {
                let len = range(&mut rng, 0, max_len);
                normalize((0..len).map(|_| rng.next_u64() % vocabulary).collect())
            })
            .collect()
    }

    /// ~300 base sets of 20–200 random tokens, each with 5 mutated copies (tokens dropped,
    /// replaced and added), shuffled together: Jaccards spread over about 0.5–1.0.
    fn near_duplicate_corpus(seed: u64, bases: usize) -> Vec<Vec<u64>> {
        let mut rng = SplitMix64::new(seed);
        let mut sets = Vec::new();
        for _ in 0..bases {
            let len = range(&mut rng, 20, 200);
            let base: Vec<u64> = (0..len).map(|_| rng.next_u64()).collect();
            sets.push(normalize(base.clone()));
            for _ in 0..5 {
                let mut copy = base.clone();
                let edits = range(&mut rng, 0, len * 3 / 10);
                for _ in 0..edits {
                    match range(&mut rng, 0, 2) {
                        0 if copy.len() > 1 => {
                            let i = range(&mut rng, 0, copy.len() - 1);
                            copy.swap_remove(i);
                        }
                        1 => {
                            let i = range(&mut rng, 0, copy.len() - 1);
                            copy[i] = rng.next_u64();
                        }
                        _ => copy.push(rng.next_u64()),
                    }
                }
                sets.push(normalize(copy));
            }
        }
        // Shuffle so near-duplicates are not neighbours in the input.
        for i in (1..sets.len()).rev() {
            let j = range(&mut rng, 0, i);
            sets.swap(i, j);
        }
        sets
    }

    #[test]
    fn random_sets_from_a_small_vocabulary_match_brute_force() {
        let sets = random_corpus(7, 3000, 40, 12);
        let all = all_overlapping(&sets);
        for t in [0.3, 0.5, 2.0 / 3.0, 0.7, 0.8, 0.9, 1.0] {
            check_against(&sets, &all, t);
        }
        let sets = random_corpus(11, 1500, 400, 40);
        let all = all_overlapping(&sets);
        for t in [0.2, 0.4, 0.6] {
            check_against(&sets, &all, t);
        }
    }

    #[test]
    fn near_duplicate_corpus_matches_brute_force() {
        let sets = near_duplicate_corpus(42, 300);
        let all = all_overlapping(&sets);
        let total_pairs = (sets.len() * (sets.len() - 1) / 2) as u64;
        let mut previous = u64::MAX;
        for t in [0.5, 0.7, 0.8, 0.9, 1.0] {
            let stats = check_against(&sets, &all, t);
            assert!(stats.pairs > 0, "t = {t}: the corpus should have pairs");
            assert!(stats.pairs <= previous);
            previous = stats.pairs;
            // The filters must do their job: far fewer candidates than pairs of documents.
            assert!(
                stats.candidates * 100 < total_pairs,
                "t = {t}: {} candidates out of {total_pairs} pairs",
                stats.candidates
            );
        }
        // The corpus is really spread over 0.5–1.0.
        let spread = |lo: f64, hi: f64| {
            all.iter()
                .filter(|p| p.jaccard >= lo && p.jaccard < hi)
                .count()
        };
        assert!(spread(0.5, 0.7) > 100 && spread(0.7, 0.9) > 100 && spread(0.9, 1.0) > 100);
    }

    #[test]
    fn same_results_on_one_and_two_threads() {
        let mut sets = near_duplicate_corpus(3, 200);
        sets.extend(random_corpus(5, 1000, 60, 15));
        let refs: Vec<&[u64]> = sets.iter().map(Vec::as_slice).collect();
        for t in [0.5, 0.8] {
            let on = |threads: usize| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| ExactJoin::new(t).try_join(&refs).unwrap())
            };
            let one = on(1);
            let two = on(2);
            assert!(!one.0.is_empty());
            assert_eq!(one, two, "t = {t}");
            assert_eq!(one, ExactJoin::new(t).try_join(&refs).unwrap());
        }
    }

    #[test]
    fn input_order_does_not_change_the_pairs() {
        let sets = near_duplicate_corpus(9, 60);
        let reversed: Vec<Vec<u64>> = sets.iter().rev().cloned().collect();
        let n = sets.len() as u32;
        let (forward, _) = run(&sets, 0.7);
        let (mut backward, _) = run(&reversed, 0.7);
        for p in &mut backward {
            (p.a, p.b) = (n - 1 - p.b, n - 1 - p.a);
        }
        backward.sort_by_key(|p| (p.a, p.b));
        assert_eq!(forward, backward);
    }

    #[test]
    fn extreme_token_values() {
        let sets = vec![
            vec![0, 1, u64::MAX - 1, u64::MAX],
            vec![0, 1, u64::MAX],
            vec![u64::MAX],
            vec![0, u64::MAX - 1, u64::MAX],
        ];
        for t in [0.25, 0.5, 0.75, 1.0] {
            check(&sets, t);
        }
    }

    #[test]
    fn tokens_are_ranked_by_rising_document_frequency_then_value() {
        let mut sets = near_duplicate_corpus(13, 100);
        sets.extend(random_corpus(17, 500, 300, 20));
        sets.push(vec![]);
        let refs: Vec<&[u64]> = sets.iter().map(Vec::as_slice).collect();
        let mut order: Vec<u32> = (0..sets.len() as u32)
            .filter(|&i| !sets[i as usize].is_empty())
            .collect();
        order.sort_by_key(|&i| (sets[i as usize].len(), i));
        let records = Records::build(&refs, order.clone()).unwrap();

        let mut df = std::collections::HashMap::new();
        for s in &sets {
            for &token in s {
                *df.entry(token).or_insert(0u32) += 1;
            }
        }
        let mut shared: Vec<(u32, u64)> = df
            .iter()
            .filter(|&(_, &d)| d > 1)
            .map(|(&token, &d)| (d, token))
            .collect();
        shared.sort_unstable();
        let rank: std::collections::HashMap<u64, u32> = shared
            .iter()
            .enumerate()
            .map(|(r, &(_, token))| (token, r as u32))
            .collect();
        assert_eq!(records.distinct, shared.len());
        assert_eq!(records.ids, order);
        for (r, &i) in order.iter().enumerate() {
            let set = &sets[i as usize];
            let mut want: Vec<u32> = set.iter().filter_map(|t| rank.get(t).copied()).collect();
            want.sort_unstable();
            assert_eq!(records.lens[r] as usize, set.len());
            assert_eq!(records.unique[r] as usize, set.len() - want.len());
            assert_eq!(records.ranked(r), want.as_slice(), "record {r}");
        }
    }

    #[test]
    fn mixing_is_a_bijection() {
        assert_eq!(MIX.wrapping_mul(UNMIX), 1);
        let mut rng = SplitMix64::new(1);
        for x in [0, 1, 2, u64::MAX]
            .into_iter()
            .chain((0..1000).map(|_| rng.next_u64()))
        {
            assert_eq!(unmix(mix(x)), x);
        }
    }

    #[test]
    fn radix_grouping_sorts_by_key() {
        let mut rng = SplitMix64::new(2);
        for (len, distinct) in [
            (0, 1),
            (10, 3),
            (64, 1000),
            (65, 1000),
            (5000, 50),
            (40_000, 1 << 40),
        ] {
            for used in [0, 3, 8] {
                // Keys that agree on their `used` high bits, as after the first-level partition.
                let high = if used == 0 {
                    0
                } else {
                    rng.next_u64() & !(u64::MAX >> used)
                };
                let mut part: Vec<Occurrence> = (0..len)
                    .map(|i| Occurrence {
                        key: high | (mix(rng.next_u64() % distinct) >> used),
                        record: i as u32,
                    })
                    .collect();
                let mut want: Vec<(u64, u32)> = part.iter().map(|o| (o.key, o.record)).collect();
                want.sort_unstable();
                sort_by_key(&mut part, used, &mut Vec::new());
                let mut got: Vec<(u64, u32)> = part.iter().map(|o| (o.key, o.record)).collect();
                assert!(
                    got.windows(2).all(|w| w[0].0 <= w[1].0),
                    "len {len}, used {used}"
                );
                got.sort_unstable();
                assert_eq!(got, want);
            }
        }
    }

    fn threshold_strategy() -> impl Strategy<Value = f64> {
        prop_oneof![
            0.3f64..=1.0,
            prop::sample::select(vec![
                0.3,
                1.0 / 3.0,
                0.4,
                0.5,
                0.6,
                2.0 / 3.0,
                0.7,
                0.75,
                0.8,
                0.9,
                1.0
            ]),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn join_equals_brute_force(
            sets in prop::collection::vec(prop::collection::btree_set(0u64..60, 0..30), 0..40),
            t in threshold_strategy(),
        ) {
            let sets: Vec<Vec<u64>> = sets.into_iter().map(|s| s.into_iter().collect()).collect();
            let (got, stats) = run(&sets, t);
            let want = at_threshold(&all_overlapping(&sets), t);
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(stats.pairs, got.len() as u64);
            prop_assert!(stats.candidates >= stats.verified && stats.verified >= stats.pairs);
        }
    }
}
