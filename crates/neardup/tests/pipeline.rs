//! The pipeline end to end on generated corpora: verification, agreement with the exact
//! join, independence from the thread count, and accounting.

mod common;

use common::Rng;
use neardup::corpus::{Shingled, Sketched};
use neardup::run::Similarities;
use neardup::{Cluster, Config, KeepPolicy, Pair, Pipeline, Quiet, Stats, Verification};
use proptest::prelude::*;

const WORDS: &[&str] = &[
    "apartment",
    "bright",
    "balcony",
    "kitchen",
    "metro",
    "near",
    "downtown",
    "quiet",
    "garden",
    "bedroom",
    "studio",
    "heating",
    "included",
    "parking",
    "floor",
    "view",
    "the",
    "a",
    "with",
    "and",
    "for",
    "rent",
    "large",
    "small",
    "cozy",
    "new",
];

/// `bases` random texts and, for each, a few edited copies (words dropped, swapped, added).
fn near_duplicate_corpus(seed: u64, bases: usize) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let mut texts = Vec::new();
    for _ in 0..bases {
        let len = 8 + rng.below(30) as usize;
        let base: Vec<&str> = (0..len)
            .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
            .collect();
        texts.push(base.join(" "));
        for _ in 0..rng.below(4) {
            let mut copy = base.clone();
            for _ in 0..rng.below(4) {
                let i = rng.below(copy.len() as u64) as usize;
                match rng.below(3) {
                    0 if copy.len() > 2 => {
                        copy.remove(i);
                    }
                    1 => copy[i] = WORDS[rng.below(WORDS.len() as u64) as usize],
                    _ => copy.insert(i, WORDS[rng.below(WORDS.len() as u64) as usize]),
                }
            }
            texts.push(copy.join(" "));
        }
    }
    texts
}

fn pipeline(t: f64, verification: Verification) -> Pipeline {
    Pipeline::new(
        Config::builder()
            .threshold(t)
            .verification(verification)
            .keep(KeepPolicy::Longest)
            .build()
            .unwrap(),
    )
    .unwrap()
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

fn keys(pairs: &[Pair]) -> Vec<(u32, u32)> {
    pairs.iter().map(|p| (p.a, p.b)).collect()
}

#[test]
fn verified_pairs_are_true_pairs_and_recall_is_high() {
    let texts = near_duplicate_corpus(1, 600);
    for &t in &[0.6, 0.8, 0.9] {
        let p = pipeline(t, Verification::Exact);
        let corpus = p.sketch_texts(&texts).unwrap();
        let (lsh, stats) = p.pairs(&corpus, &mut Quiet);
        let (exact, _) = p.exact_pairs(&corpus, &mut Quiet).unwrap();
        assert!(
            exact.len() > 200,
            "corpus too sparse at t={t}: {}",
            exact.len()
        );
        let exact_keys = keys(&exact);
        for pair in &lsh {
            let j = pair.similarity.jaccard.unwrap();
            assert!(j >= t, "pair below threshold: {pair:?}");
            assert!(
                exact_keys.binary_search(&(pair.a, pair.b)).is_ok(),
                "{pair:?} not in exact"
            );
        }
        // Counters are over distinct sets; identical copies add pairs on top.
        assert!(stats.verified <= lsh.len() as u64);
        assert!(stats.candidates >= stats.verified);
        // Expected recall is the mean S-curve over the true pairs; allow 4 binomial SEs.
        let plan = p.config().plan();
        let expected: f64 = exact
            .iter()
            .map(|e| plan.probability(e.similarity.jaccard.unwrap()))
            .sum::<f64>()
            / exact.len() as f64;
        let recall = lsh.len() as f64 / exact.len() as f64;
        let se = (expected * (1.0 - expected) / exact.len() as f64)
            .sqrt()
            .max(1.0 / exact.len() as f64);
        assert!(
            recall >= expected - 4.0 * se,
            "t={t}: recall {recall:.4} vs expected {expected:.4}"
        );
    }
}

/// Long pages sharing one of a few templates, each with its own random listing; some
/// re-post an earlier page with one word changed. Pairs of one template crowd below 0.8.
fn templated_pages(seed: u64, pages: usize) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let word = |rng: &mut Rng| WORDS[rng.below(WORDS.len() as u64) as usize];
    let templates: Vec<String> = (0..4)
        .map(|_| {
            (0..500)
                .map(|_| word(&mut rng))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let mut texts: Vec<String> = Vec::new();
    for i in 0..pages {
        if i > 8 && rng.below(10) == 0 {
            let mut copy: Vec<String> = texts[i - 4].split(' ').map(String::from).collect();
            let at = rng.below(copy.len() as u64) as usize;
            copy[at] = word(&mut rng).to_string();
            texts.push(copy.join(" "));
            continue;
        }
        let listing = 60 + rng.below(140) as usize;
        let tail: Vec<&str> = (0..listing).map(|_| word(&mut rng)).collect();
        texts.push(format!("{} {}", templates[i % 4], tail.join(" ")));
    }
    texts
}

/// Scores every candidate, so verification computes each exact Jaccard to the end.
struct Scoring(u64);

impl neardup::Observer for Scoring {
    fn wants_scores(&self) -> bool {
        true
    }
    fn scored(&mut self, _similarity: f64, _verified: bool) {
        self.0 += 1;
    }
}

/// The prefilter and the early exit only save work: the pairs equal those of full
/// verification (which runs when every candidate's score is wanted), and the prefilter
/// does reject candidates on this corpus.
#[test]
fn prefilter_and_early_exit_reject_nothing_that_passes() {
    let texts = templated_pages(5, 400);
    let p = pipeline(0.8, Verification::Exact);
    let corpus = p.sketch_texts(&texts).unwrap();
    let (quick, quick_stats) = p.pairs(&corpus, &mut Quiet);
    let mut scoring = Scoring(0);
    let (full, full_stats) = p.pairs(&corpus, &mut scoring);
    assert_eq!(quick, full);
    assert!(full.len() > 30, "{} pairs", full.len());
    assert_eq!(quick_stats.candidates, full_stats.candidates);
    assert_eq!(scoring.0, full_stats.candidates);
    assert_eq!(full_stats.prefiltered, 0);
    assert!(
        quick_stats.prefiltered * 10 > quick_stats.candidates,
        "{} of {} prefiltered",
        quick_stats.prefiltered,
        quick_stats.candidates
    );
    // Every pair the exact join finds among candidates is kept.
    let (exact, _) = p.exact_pairs(&corpus, &mut Quiet).unwrap();
    let exact_keys = keys(&exact);
    assert!(keys(&quick)
        .iter()
        .all(|k| exact_keys.binary_search(k).is_ok()));
}

#[test]
fn estimate_and_none_modes() {
    let texts = near_duplicate_corpus(2, 300);
    let est = pipeline(0.8, Verification::Estimate);
    let corpus = est.sketch_texts(&texts).unwrap();
    let (pairs, _) = est.pairs(&corpus, &mut Quiet);
    assert!(!pairs.is_empty());
    assert!(pairs
        .iter()
        .all(|p| p.similarity.jaccard.is_none() && p.similarity.estimate.unwrap() >= 0.8));
    let none = pipeline(0.8, Verification::None);
    let (raw, stats) = none.pairs(&none.sketch_texts(&texts).unwrap(), &mut Quiet);
    // No verification: every candidate passes; identical copies add their pairs on top.
    assert_eq!(
        stats.verified, stats.candidates,
        "no verification: every candidate is reported"
    );
    assert!(raw.len() as u64 >= stats.candidates);
    assert!(raw.len() >= pairs.len());
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let texts = near_duplicate_corpus(3, 800);
    let run = |threads| {
        in_pool(threads, || {
            let p = pipeline(0.7, Verification::Exact);
            let corpus = p.sketch_texts(&texts).unwrap();
            let (pairs, _) = p.pairs(&corpus, &mut Quiet);
            let (clusters, _) = p.clusters(&corpus, &mut Quiet);
            let (exact, _) = p.exact_pairs(&corpus, &mut Quiet).unwrap();
            let (exact_clusters, _) = p.exact_clusters(&corpus, &mut Quiet).unwrap();
            (pairs, clusters, exact, exact_clusters)
        })
    };
    let (one, two) = (run(1), run(2));
    assert!(!one.0.is_empty() && !one.1.is_empty());
    assert_eq!(one, two);
}

/// Every removed document is similar (≥ t) to the document it duplicates, and no document is
/// in two clusters.
fn check_clusters(texts: &[String], clusters: &[Cluster], t: f64) {
    let sh = neardup::Shingler::default();
    let mut seen = vec![false; texts.len()];
    for c in clusters {
        for d in std::iter::once(c.kept).chain(c.duplicates.iter().map(|d| d.doc)) {
            assert!(!seen[d as usize], "document {d} in two clusters");
            seen[d as usize] = true;
        }
        let kept = sh.shingle_set(&texts[c.kept as usize]);
        for d in &c.duplicates {
            let j = neardup::verify::jaccard(&kept, &sh.shingle_set(&texts[d.doc as usize]));
            assert!(j >= t, "{} duplicates {} at only {j}", d.doc, c.kept);
            assert_eq!(d.similarity.jaccard, Some(j));
        }
    }
}

#[test]
fn clusters_hold_only_verified_duplicates() {
    let texts = near_duplicate_corpus(4, 500);
    let p = pipeline(0.7, Verification::Exact);
    let corpus = p.sketch_texts(&texts).unwrap();
    let (clusters, _) = p.clusters(&corpus, &mut Quiet);
    assert!(clusters.len() > 50);
    check_clusters(&texts, &clusters, 0.7);
    let (exact, _) = p.exact_clusters(&corpus, &mut Quiet).unwrap();
    check_clusters(&texts, &exact, 0.7);
    // Longest is kept: no duplicate is longer than its kept document.
    for c in &clusters {
        for d in &c.duplicates {
            assert!(texts[d.doc as usize].len() <= texts[c.kept as usize].len());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// For arbitrary corpora (empty and tiny documents included), every document is kept,
    /// removed or skipped, exactly once.
    #[test]
    fn accounting_adds_up(texts in proptest::collection::vec("[ab ]{0,12}", 0..40), t in 0.3f64..1.0) {
        let p = pipeline(t, Verification::Exact);
        let corpus = p.sketch_texts(&texts).unwrap();
        let (clusters, stats) = p.clusters(&corpus, &mut Quiet);
        let removed: usize = clusters.iter().map(|c| c.duplicates.len()).sum();
        let in_clusters_kept = clusters.len();
        let skipped = (0..texts.len() as u32).filter(|&d| !corpus.corpus().has_shingles(d)).count();
        prop_assert_eq!(stats.documents as usize, texts.len());
        prop_assert_eq!(stats.empty as usize, skipped);
        prop_assert_eq!(skipped, texts.iter().filter(|t| t.trim().is_empty()).count());
        let mut status = vec![0u8; texts.len()];
        for c in &clusters {
            status[c.kept as usize] += 1;
            for d in &c.duplicates { status[d.doc as usize] += 1; }
        }
        prop_assert!(status.iter().all(|&s| s <= 1), "a document in two clusters");
        for (d, &s) in status.iter().enumerate() {
            if !corpus.corpus().has_shingles(d as u32) {
                prop_assert_eq!(s, 0, "a skipped document in a cluster");
            }
        }
        let kept = texts.len() - removed - skipped;
        prop_assert!(kept >= in_clusters_kept);
        prop_assert_eq!(kept + removed + skipped, texts.len());
    }
}

fn banded(t: f64, bands: usize, rows: usize, beyond: bool) -> Pipeline {
    Pipeline::new(
        Config::builder()
            .threshold(t)
            .bands(Some(bands))
            .rows(Some(rows))
            .neighbours(beyond)
            .build()
            .unwrap(),
    )
    .unwrap()
}

/// Pairs found by LSH alone and by looking beyond the buckets too, under a `bands × rows`
/// plan, with the exact join's; checks that LSH alone ⊆ beyond ⊆ exact and that every
/// reported pair is verified. Returns (alone, beyond, exact, beyond's stats, pipeline with
/// beyond on, corpus corpus).
fn alone_and_beyond(
    texts: &[String],
    t: f64,
    bands: usize,
    rows: usize,
) -> (Vec<Pair>, Vec<Pair>, Vec<Pair>, Stats, Pipeline, Sketched) {
    let off = banded(t, bands, rows, false);
    let on = banded(t, bands, rows, true);
    let corpus = on.sketch_texts(texts).unwrap();
    let (alone, off_stats) = off.pairs(&corpus, &mut Quiet);
    assert_eq!(
        off_stats.neighbour_candidates + off_stats.large_group_candidates,
        0
    );
    let (beyond, stats) = on.pairs(&corpus, &mut Quiet);
    let (exact, _) = on.exact_pairs(&corpus, &mut Quiet).unwrap();
    let (alone_k, beyond_k, exact_k) = (keys(&alone), keys(&beyond), keys(&exact));
    assert!(alone_k.iter().all(|k| beyond_k.binary_search(k).is_ok()));
    assert!(beyond_k.iter().all(|k| exact_k.binary_search(k).is_ok()));
    assert!(beyond.iter().all(|p| p.similarity.jaccard.unwrap() >= t));
    (alone, beyond, exact, stats, on, corpus)
}

#[test]
fn pairs_with_a_large_group_of_copies_are_all_found() {
    // One band of 32 rows: a pair at J = 0.85 shares its bucket with probability
    // 0.85^32 ≈ 0.006, so LSH alone misses near-copies of the group almost surely.
    let mut texts = near_duplicate_corpus(4, 200);
    let copy = "bright studio apartment near the metro with a balcony and a small garden";
    let near = "bright studio apartment near the metro with a balcony and a small garden!!";
    let first = texts.len() as u32;
    texts.extend(std::iter::repeat_n(copy.to_string(), 40));
    texts.push(near.to_string());
    let near_doc = texts.len() as u32 - 1;
    let (_, beyond, exact, stats, on, corpus) = alone_and_beyond(&texts, 0.8, 1, 32);
    let with_group = |pairs: &[Pair]| {
        pairs
            .iter()
            .filter(|p| p.b == near_doc && p.a >= first)
            .count()
    };
    assert_eq!(
        with_group(&exact),
        40,
        "the near-copy pairs with every copy"
    );
    assert_eq!(with_group(&beyond), 40);
    assert!(stats.large_group_verified >= 1);
    // Clusters: the near-copy is removed as a duplicate of the group's kept document.
    let (clusters, _) = on.clusters(&corpus, &mut Quiet);
    let group = clusters.iter().find(|c| c.kept == first).unwrap();
    assert!(group.duplicates.iter().any(|d| d.doc == near_doc));
}

#[test]
fn shared_neighbours_lift_recall_above_the_s_curve() {
    // 4 bands of 8 rows find a pair at J = 0.8 with probability 0.52 only.
    let texts = near_duplicate_corpus(5, 600);
    let (lsh_only, beyond, _, stats, _, _) = alone_and_beyond(&texts, 0.7, 4, 8);
    assert!(stats.neighbour_verified > 0, "{stats:?}");
    assert!(
        beyond.len() > lsh_only.len(),
        "{} vs {}",
        beyond.len(),
        lsh_only.len()
    );
}

#[test]
fn unspaced_scripts_and_unicode_variants_are_found_with_word_shingles() {
    let texts = [
        // 0, 1: Chinese, one character changed.
        "今天天气很好，我们一起去公园散步，然后在湖边喝咖啡聊天，一直到太阳下山才回家。",
        "今天天气很好，我们一起去公园散步，然后在河边喝咖啡聊天，一直到太阳下山才回家。",
        // 2, 3: Japanese, one word changed.
        "東京タワーの近くにある小さなレストランで、友達と一緒に晩ご飯を食べました。とても美味しかったです。",
        "東京タワーの近くにある小さなレストランで、家族と一緒に晩ご飯を食べました。とても美味しかったです。",
        // 4, 5: Thai, one word changed.
        "วันนี้อากาศดีมากเราจะไปเดินเล่นที่สวนสาธารณะกับเพื่อนแล้วกินข้าวเย็นด้วยกันที่ร้านอาหารริมแม่น้ำ",
        "วันนี้อากาศดีมากเราจะไปเดินเล่นที่สวนสาธารณะกับน้องแล้วกินข้าวเย็นด้วยกันที่ร้านอาหารริมแม่น้ำ",
        // 6, 7: full-width and half-width forms of the same text.
        "ＡＩ技術１２３％で新しいサービスを開発しました",
        "AI技術123%で新しいサービスを開発しました",
    ];
    for kind in ["word:2", "word:3", "char:3"] {
        let config = Config::builder()
            .shingle(kind.parse().unwrap())
            .threshold(0.6)
            .build()
            .unwrap();
        let pipeline = Pipeline::new(config).unwrap();
        let corpus = pipeline.sketch_texts(&texts).unwrap();
        assert_eq!(corpus.stats().short_documents, 0, "{kind}");
        let (pairs, _) = pipeline.pairs(&corpus, &mut Quiet);
        assert_eq!(
            keys(&pairs),
            vec![(0, 1), (2, 3), (4, 5), (6, 7)],
            "{kind}: {pairs:?}"
        );
    }
}

#[test]
fn documents_shorter_than_k_are_counted() {
    let config = Config::builder()
        .shingle("word:3".parse().unwrap())
        .build()
        .unwrap();
    let pipeline = Pipeline::new(config).unwrap();
    let texts = ["one two", "", "three whole words", "北京", "a b c d", "!!"];
    let corpus = pipeline.sketch_texts(&texts).unwrap();
    assert_eq!(corpus.stats().short_documents, 2);
    assert_eq!(corpus.stats().empty, 2);
}

// ---- parameters at their edges (issue 10) ----

#[test]
fn parameters_out_of_range_are_refused_by_build() {
    use neardup::text::{MAX_MAX_SHINGLES, MAX_SHINGLE_SIZE};
    use neardup::{Error, ShingleKind};
    let build = |b: neardup::ConfigBuilder| b.build().map(|_| ()).unwrap_err();
    assert_eq!(
        build(Config::builder().threshold(1e-18)),
        Error::InvalidThreshold(1e-18)
    );
    assert_eq!(
        build(Config::builder().threshold(0.009)),
        Error::InvalidThreshold(0.009)
    );
    assert!(Config::builder()
        .threshold(neardup::run::MIN_THRESHOLD)
        .build()
        .is_ok());
    assert_eq!(
        build(Config::builder().shingle(ShingleKind::Char(usize::MAX))),
        Error::InvalidShingleSize(usize::MAX)
    );
    assert_eq!(
        build(Config::builder().shingle(ShingleKind::Word(MAX_SHINGLE_SIZE + 1))),
        Error::InvalidShingleSize(MAX_SHINGLE_SIZE + 1)
    );
    assert_eq!(
        build(Config::builder().max_shingles(0)),
        Error::InvalidMaxShingles(0)
    );
    assert_eq!(
        build(Config::builder().max_shingles(usize::MAX)),
        Error::InvalidMaxShingles(usize::MAX)
    );
    assert!(Config::builder()
        .max_shingles(MAX_MAX_SHINGLES)
        .build()
        .is_ok());
    assert!("char:1025".parse::<ShingleKind>().is_err());
    assert!("char:18446744073709551615".parse::<ShingleKind>().is_err());
    assert_eq!(
        "word:1024".parse::<ShingleKind>(),
        Ok(ShingleKind::Word(1024))
    );
}

#[test]
fn huge_caps_and_sizes_do_not_wrap_to_nothing() {
    use neardup::{ShingleKind, Shingler};
    let text = "a quick brown fox jumps over the lazy dog";
    let whole = Shingler::new(ShingleKind::Char(5)).shingle_set(text);
    let huge_cap = Shingler::new(ShingleKind::Char(5)).max_shingles(usize::MAX);
    assert_eq!(huge_cap.shingle_set(text), whole);
    let mut set = Vec::new();
    assert!(!huge_cap.shingle_info(text, &mut set).truncated);
    // A shingle longer than the text is the whole text, never an empty set.
    let huge_k = Shingler::new(ShingleKind::Char(usize::MAX / 2));
    assert_eq!(huge_k.shingle_set(text).len(), 1);
}

#[test]
fn at_the_minimum_threshold_lsh_and_the_exact_join_agree_with_brute_force() {
    let t = neardup::run::MIN_THRESHOLD;
    let texts = near_duplicate_corpus(7, 60);
    let p = pipeline(t, Verification::Exact);
    let corpus = p.sketch_texts(&texts).unwrap();
    let c = corpus.corpus();
    let sets: Vec<&[u32]> = (0..c.len() as u32).map(|d| c.set(d)).collect();
    let mut brute = Vec::new();
    for a in 0..sets.len() {
        for b in a + 1..sets.len() {
            let j = neardup::verify::jaccard(sets[a], sets[b]);
            if !sets[a].is_empty() && neardup::verify::meets_threshold(j, t) {
                brute.push((a as u32, b as u32, j));
            }
        }
    }
    assert!(brute.len() > 1000, "too few pairs: {}", brute.len());
    let (exact, _) = p.exact_pairs(&corpus, &mut Quiet).unwrap();
    let exact: Vec<(u32, u32, f64)> = exact
        .iter()
        .map(|p| (p.a, p.b, p.similarity.jaccard.unwrap()))
        .collect();
    assert_eq!(exact, brute);
    let (lsh, _) = p.pairs(&corpus, &mut Quiet);
    for pair in &lsh {
        let j = pair.similarity.jaccard.unwrap();
        let i = brute
            .binary_search_by(|x| (x.0, x.1).cmp(&(pair.a, pair.b)))
            .unwrap_or_else(|_| panic!("{pair:?} is not a brute-force pair"));
        assert_eq!(brute[i].2, j);
    }
    // At t = 0.01 the plan has one row per band: nearly every pair is a candidate.
    assert!(
        lsh.len() * 10 >= brute.len() * 9,
        "{} of {}",
        lsh.len(),
        brute.len()
    );
}

// ---- Streamed pairs (`for_each_pair_chunk`): same pairs, each once, in a fixed order ----

/// A corpus with near-copies, small groups of identical copies, and a group of 40 copies
/// with a near-copy (so the large-group and shared-neighbour checks both take part).
fn corpus_with_copies(seed: u64) -> Vec<String> {
    let mut texts = near_duplicate_corpus(seed, 300);
    let mut rng = Rng::new(seed ^ 0xC0FFEE);
    for i in 0..texts.len() {
        if rng.below(4) == 0 {
            let copy = texts[i].clone();
            texts.push(copy);
        }
    }
    let copy = "bright studio apartment near the metro with a balcony and a small garden";
    texts.extend(std::iter::repeat_n(copy.to_string(), 40));
    texts.push(format!("{copy}!!"));
    texts.push(String::new());
    texts
}

/// A corpus streamed by LSH or by the exact join.
#[derive(Clone, Copy)]
enum Streamed<'a> {
    Lsh(&'a Sketched),
    Exact(&'a Shingled),
}

/// Every pair of a streamed run, in order, totals, stats and the recorded similarities.
fn streamed(
    pipeline: &Pipeline,
    corpus: Streamed<'_>,
) -> (Vec<Pair>, neardup::run::PairTotals, Stats, Similarities) {
    let mut all = Vec::new();
    let sink = |chunk: &[Pair]| {
        assert!(!chunk.is_empty() && chunk.len() <= neardup::run::STREAM_CHUNK);
        all.extend_from_slice(chunk);
        Ok::<(), ()>(())
    };
    let mut recorded = Similarities::default();
    let (totals, stats) = match corpus {
        Streamed::Exact(c) => pipeline
            .exact_for_each_pair_chunk(c, &mut recorded, sink)
            .unwrap(),
        Streamed::Lsh(c) => pipeline.for_each_pair_chunk(c, &mut recorded, sink),
    }
    .unwrap();
    (all, totals, stats, recorded)
}

fn without_timings(mut s: Stats) -> Stats {
    s.timings.clear();
    s
}

#[test]
fn streamed_pairs_are_the_pair_sets_each_once_whatever_the_threads() {
    for (seed, t, bands, rows) in [(11, 0.7, 4, 8), (12, 0.5, 8, 4), (13, 0.8, 1, 32)] {
        let texts = corpus_with_copies(seed);
        let pipeline = banded(t, bands, rows, true);
        let corpus = pipeline.sketch_texts(&texts).unwrap();
        let lsh = Streamed::Lsh(&corpus);
        let (one, totals, stats, recorded) = in_pool(1, || streamed(&pipeline, lsh));
        let (two, totals2, stats2, _) = in_pool(2, || streamed(&pipeline, lsh));
        assert_eq!(
            one, two,
            "seed {seed}: the order does not depend on the threads"
        );
        assert_eq!(totals, totals2);
        assert_eq!(without_timings(stats.clone()), without_timings(stats2));
        // The same pairs as the non-streaming path, each exactly once.
        let (held, held_stats) = pipeline.pairs(&corpus, &mut Quiet);
        let mut sorted = one.clone();
        sorted.sort_by_key(|p| (p.a, p.b));
        assert!(sorted
            .windows(2)
            .all(|w| (w[0].a, w[0].b) < (w[1].a, w[1].b)));
        assert_eq!(sorted, held, "seed {seed}");
        assert!(one.iter().all(|p| p.a < p.b));
        assert_eq!(without_timings(stats.clone()), without_timings(held_stats));
        let mut docs: Vec<u32> = held.iter().flat_map(|p| [p.a, p.b]).collect();
        docs.sort_unstable();
        docs.dedup();
        assert_eq!(
            (totals.pairs, totals.documents),
            (held.len() as u64, docs.len() as u64)
        );
        let identical = held
            .iter()
            .filter(|p| corpus.corpus().representative(p.a) == corpus.corpus().representative(p.b))
            .count() as u64;
        assert!(identical > 40 * 39 / 2);
        assert_eq!(totals.identical, identical);
        // The copies come first, then the pairs of distinct sets.
        assert!(one[..identical as usize]
            .iter()
            .all(|p| corpus.corpus().representative(p.a) == corpus.corpus().representative(p.b)));
        // Every pair is a true pair (⊆ the exact join's).
        let (exact, _) = pipeline.exact_pairs(&corpus, &mut Quiet).unwrap();
        let exact = keys(&exact);
        assert!(keys(&one).iter().all(|k| exact.binary_search(k).is_ok()));
        assert!(stats.verified > 0 && stats.candidates >= stats.verified);
        assert_eq!(recorded.verified.iter().sum::<u64>(), stats.verified);
        assert_eq!(
            recorded.verified.iter().sum::<u64>() + recorded.rejected.iter().sum::<u64>(),
            stats.candidates
        );
        if bands == 4 {
            assert!(stats.neighbour_verified > 0, "{stats:?}");
        }
        if bands == 1 {
            assert!(stats.large_group_verified > 0, "{stats:?}");
        }
    }
}

#[test]
fn the_exact_join_streams_the_same_pairs() {
    let texts = corpus_with_copies(21);
    let pipeline = banded(0.7, 4, 8, true);
    let corpus = pipeline.shingle(&texts).unwrap();
    let exact = Streamed::Exact(&corpus);
    let (one, totals, stats, _) = in_pool(1, || streamed(&pipeline, exact));
    let (two, ..) = in_pool(2, || streamed(&pipeline, exact));
    assert_eq!(one, two);
    let (held, held_stats) = pipeline.exact_pairs(&corpus, &mut Quiet).unwrap();
    let mut sorted = one.clone();
    sorted.sort_by_key(|p| (p.a, p.b));
    assert_eq!(sorted, held);
    assert_eq!(totals.pairs, held.len() as u64);
    assert_eq!(without_timings(stats), without_timings(held_stats));
}

#[test]
fn an_error_from_the_consumer_stops_the_walk() {
    let texts = corpus_with_copies(31);
    let pipeline = banded(0.7, 4, 8, true);
    let corpus = pipeline.sketch_texts(&texts).unwrap();
    for exact in [false, true] {
        let mut chunks = 0;
        let count = |_: &[Pair]| {
            chunks += 1;
            Ok::<(), ()>(())
        };
        if exact {
            pipeline
                .exact_for_each_pair_chunk(&corpus, &mut Quiet, count)
                .unwrap()
                .unwrap();
        } else {
            pipeline
                .for_each_pair_chunk(&corpus, &mut Quiet, count)
                .unwrap();
        }
        assert!(chunks >= 2, "{chunks} chunks: the test needs more than one");
        let mut calls = 0;
        let sink = |_: &[Pair]| {
            calls += 1;
            Err("disk full")
        };
        let out = if exact {
            pipeline
                .exact_for_each_pair_chunk(&corpus, &mut Quiet, sink)
                .unwrap()
        } else {
            pipeline.for_each_pair_chunk(&corpus, &mut Quiet, sink)
        };
        assert_eq!(out.err(), Some("disk full"));
        assert_eq!(calls, 1, "no chunk after the error");
    }
}

// ---- One document at a time: the same sets, keys and verdicts as a corpus run ----

/// The pairs a corpus run reports, rebuilt from the per-document building blocks alone:
/// copies by fingerprint, candidates by a band key shared in the family two documents are
/// compared in, verdicts by `verify_docs`. They must be the run's pairs, with the same
/// similarities, under every verification and with truncated documents.
#[test]
fn documents_one_at_a_time_give_the_corpus_runs_pairs() {
    use neardup::sketch::{DocSet, DocSketch};
    let mut texts = near_duplicate_corpus(41, 120);
    texts.extend_from_within(..40);
    texts.push(String::new());
    let n = texts.len();
    let verifications = [
        Verification::Exact,
        Verification::Estimate,
        Verification::Triage,
        Verification::None,
    ];
    for verification in verifications {
        for max_shingles in [neardup::text::DEFAULT_MAX_SHINGLES, 60] {
            let config = Config::builder()
                .threshold(0.6)
                .verification(verification)
                .max_shingles(max_shingles)
                .neighbours(false)
                .build()
                .unwrap();
            let p = Pipeline::new(config).unwrap();
            let corpus = p.sketch_texts(&texts).unwrap();
            let c = corpus.corpus();
            let (pairs, _) = p.pairs(&corpus, &mut Quiet);
            let docs: Vec<DocSet> = texts.iter().map(|t| p.shingle_doc(t)).collect();
            let sketches: Vec<DocSketch> = docs.iter().map(|d| p.sketch_doc(d)).collect();
            let truncated = docs.iter().filter(|d| d.is_truncated()).count();
            assert_eq!(truncated > 0, max_shingles == 60);
            let mut expected = Vec::new();
            for a in 0..n {
                assert_eq!(neardup::text::shingle_ids(docs[a].set()), c.set(a as u32));
                assert_eq!(docs[a].is_truncated(), c.is_truncated(a as u32));
                for b in a + 1..n {
                    let same = c.representative(a as u32) == c.representative(b as u32);
                    if let (Some(x), Some(y)) = (docs[a].fingerprint(), docs[b].fingerprint()) {
                        assert_eq!(x == y, same, "fingerprints of {a} and {b}");
                    }
                    if same && c.has_shingles(a as u32) {
                        expected.push((a as u32, b as u32, None));
                        continue;
                    }
                    let (sa, sb) = (&sketches[a], &sketches[b]);
                    let Some(f) = sa.shared_family(sb) else {
                        continue;
                    };
                    let keys = sa
                        .band_keys(f)
                        .unwrap()
                        .iter()
                        .zip(sb.band_keys(f).unwrap());
                    if keys.clone().all(|(x, y)| x != y) {
                        continue;
                    }
                    let verdict = p.verify_docs(&docs[a], &docs[b], Some((sa, sb)));
                    if verdict.verified {
                        expected.push((a as u32, b as u32, Some(verdict.similarity)));
                    }
                }
            }
            let near: Vec<_> = expected.iter().filter_map(|e| e.2).collect();
            assert!(
                near.len() >= 20,
                "{verification:?}: too few near pairs to compare"
            );
            assert_eq!(near.iter().any(|s| s.truncated), max_shingles == 60);
            assert_eq!(
                pairs.len(),
                expected.len(),
                "{verification:?} {max_shingles}"
            );
            for (pair, (a, b, similarity)) in pairs.iter().zip(&expected) {
                assert_eq!(
                    (pair.a, pair.b),
                    (*a, *b),
                    "{verification:?} {max_shingles}"
                );
                if let Some(s) = similarity {
                    assert_eq!(pair.similarity, *s, "{verification:?} ({a}, {b})");
                }
            }
        }
    }
}

// ---- One pipeline, many threads ----

/// A server shares one pipeline and one corpus between its threads: both are `Send + Sync`
/// and give every thread the same answer.
#[test]
fn one_pipeline_serves_several_threads() {
    fn shared<T: Send + Sync>(_: &T) {}
    let texts = corpus_with_copies(51);
    let p = pipeline(0.7, Verification::Exact);
    let corpus = p.sketch_texts(&texts).unwrap();
    shared(&p);
    shared(&corpus);
    let (alone, _) = p.pairs(&corpus, &mut Quiet);
    assert!(!alone.is_empty());
    let answers: Vec<Vec<Pair>> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..3)
            .map(|_| s.spawn(|| p.pairs(&corpus, &mut Quiet).0))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    assert!(answers.iter().all(|a| *a == alone));
}

// ---- A pair set built from pairs found elsewhere ----

/// A cluster job verifies pairs on its workers and hands them back: `PairSet::from_pairs`
/// over the same corpus must give back the run's pairs, whatever their order and however
/// many copies' pairs were sent, and refuse a pair that names no two documents.
#[test]
fn a_pair_set_from_found_pairs_is_the_runs() {
    use neardup::run::PairSet;
    use neardup::Error;
    let texts = corpus_with_copies(61);
    let p = pipeline(0.7, Verification::Exact);
    let corpus = p.sketch_texts(&texts).unwrap();
    let (set, _) = p.pair_set(&corpus, &mut Quiet);
    let pairs = set.to_vec();
    assert!(set.totals().identical > 0 && pairs.len() > set.distinct().len());
    // Every pair, reversed, in reverse order: copies' pairs repeat their groups' pair.
    let sent = pairs.iter().rev().map(|q| Pair {
        a: q.b,
        b: q.a,
        ..*q
    });
    let rebuilt = PairSet::from_pairs(corpus.corpus(), sent, set.identical_similarity()).unwrap();
    assert_eq!(rebuilt.to_vec(), pairs);
    assert_eq!(rebuilt.totals(), set.totals());
    let empty = (0..texts.len() as u32)
        .find(|&d| !corpus.corpus().has_shingles(d))
        .unwrap();
    let n = texts.len() as u32;
    for (a, b) in [(0, 0), (0, n), (0, empty)] {
        let bad = Pair { a, b, ..pairs[0] };
        let got = PairSet::from_pairs(corpus.corpus(), [bad], set.identical_similarity());
        assert!(matches!(got, Err(Error::InvalidPair { .. })), "({a}, {b})");
    }
}
