//! Tests as data: every case in `testdata/cases/*.toml` is a small corpus with the pairs
//! and clusters expected at its settings, run against every engine. All engines must give
//! the expected answer; a case's expected pairs are also checked against brute force, so a
//! wrong case cannot pass.
//!
//! A case file holds:
//!
//! ```toml
//! description = "what the case is about"
//! shingle = "char:5"          # optional, as `--shingle`
//! normalize = "nfkc"          # optional, as `--normalize`
//! multiset = false            # optional, as `--multiset`
//! threshold = 0.5
//! num_perm = 128              # optional
//! engines = ["exact"]         # optional: only these engines (default: all); names:
//!                             # lsh-oph, lsh-classic, triage, exact, documents, index,
//!                             # spark (run by crates/neardup-py/spark-tests)
//! lsh_may_miss = false        # optional: true if the S-curve allows a miss
//! docs = ["first text", "second text"]
//! pairs = [[0, 1]]            # every pair (a < b) with Jaccard ≥ threshold
//! clusters = [[0, 1]]         # kept document first, then its duplicates in input order
//!
//! [containment]               # optional: what `--measure containment` finds (exact join,
//!                             # ensemble search, containment index alike)
//! pairs = [[1, 0]]            # (a, b): a, the smaller, contained in b at ≥ threshold
//!
//! [simhash]                   # optional: what `--sketch simhash --hamming K` finds
//! hamming = 3                 # K
//! pairs = [[0, 1]]            # every pair with Jaccard ≥ threshold and fingerprints ≤ K apart
//! clusters = [[0, 1]]
//! ```
//!
//! Unless a case says `lsh_may_miss`, every expected pair must have a miss probability
//! under [`MAX_MISS`] on the case's S-curve, so the LSH engines cannot fail it by chance.

use std::path::{Path, PathBuf};

use neardup::{
    cluster, jaccard, Cluster, Config, DocSet, DocSketch, KeepPolicy, Normalization, Pair,
    Pipeline, Quiet, ShingleKind, Similarity, SketchKind, Verification,
};
use neardup_index::{IndexWriter, Query};
use serde::Deserialize;

/// The largest chance of an LSH miss an expected pair may have.
const MAX_MISS: f64 = 1e-6;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    description: String,
    #[serde(default = "default_shingle")]
    shingle: String,
    #[serde(default = "default_normalize")]
    normalize: String,
    #[serde(default)]
    multiset: bool,
    threshold: f64,
    #[serde(default = "default_num_perm")]
    num_perm: usize,
    engines: Option<Vec<String>>,
    #[serde(default)]
    lsh_may_miss: bool,
    docs: Vec<String>,
    pairs: Vec<[u32; 2]>,
    clusters: Vec<Vec<u32>>,
    simhash: Option<SimHashCase>,
    containment: Option<ContainmentCase>,
}

/// What a containment run of a case finds, the exact join and the ensemble search alike.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContainmentCase {
    pairs: Vec<[u32; 2]>,
}

/// What a SimHash run of a case finds: it has no S-curve to lean on, so its own answer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SimHashCase {
    hamming: u32,
    pairs: Vec<[u32; 2]>,
    clusters: Vec<Vec<u32>>,
}

fn default_shingle() -> String {
    "char:5".into()
}

fn default_normalize() -> String {
    "nfkc".into()
}

fn default_num_perm() -> usize {
    128
}

/// A way of finding the pairs and clusters of a corpus.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Engine {
    /// LSH over one-permutation hashing (classic below 64 shingles), exact verification.
    LshOph,
    /// LSH over the classic sketch throughout, exact verification.
    LshClassic,
    /// LSH, deciding on the signature far from the threshold, exactly near it.
    Triage,
    /// The exact set-similarity join: no sketch, no misses.
    Exact,
    /// One document at a time, as an index or a cluster job meets them: copies by
    /// fingerprint, candidates by a band key shared in their family, verdicts by
    /// `verify_docs`, clusters by `neardup::cluster` over the verified pairs.
    Documents,
    /// The persistent index (`neardup-index`): the corpus added in two batches, each
    /// document queried against it; clusters by `neardup::cluster` over those pairs.
    Index,
    /// The index behind `neardup-server`, over HTTP on a loopback port: the corpus posted
    /// in two batches, each document queried; Jaccard as the API gives it (6 decimals).
    Server,
}

const ENGINES: [Engine; 7] = [
    Engine::LshOph,
    Engine::LshClassic,
    Engine::Triage,
    Engine::Exact,
    Engine::Documents,
    Engine::Index,
    Engine::Server,
];

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::LshOph => "lsh-oph",
            Engine::LshClassic => "lsh-classic",
            Engine::Triage => "triage",
            Engine::Exact => "exact",
            Engine::Documents => "documents",
            Engine::Index => "index",
            Engine::Server => "server",
        }
    }

    fn is_lsh(self) -> bool {
        self != Engine::Exact
    }
}

/// The pairs and clusters of a corpus from the per-document building blocks alone.
fn one_at_a_time(pipeline: &Pipeline, texts: &[String]) -> Answer {
    let docs: Vec<DocSet> = texts.iter().map(|t| pipeline.shingle_doc(t)).collect();
    let sketches: Vec<DocSketch> = docs.iter().map(|d| pipeline.sketch_doc(d)).collect();
    let identical = Similarity {
        jaccard: Some(1.0),
        estimate: None,
        truncated: false,
        hamming: None,
    };
    let similar = |a: usize, b: usize| -> Option<Similarity> {
        if docs[a].fingerprint().is_some() && docs[a].fingerprint() == docs[b].fingerprint() {
            return Some(identical);
        }
        let sketches = (&sketches[a], &sketches[b]);
        pipeline
            .verify_docs(&docs[a], &docs[b], Some(sketches))
            .passed()
    };
    let mut pairs = Vec::new();
    for a in 0..docs.len() {
        for b in a + 1..docs.len() {
            let copies =
                docs[a].fingerprint().is_some() && docs[a].fingerprint() == docs[b].fingerprint();
            let collide = sketches[a].shared_family(&sketches[b]).is_some_and(|f| {
                let (x, y) = (sketches[a].band_keys(f), sketches[b].band_keys(f));
                x.unwrap().iter().zip(y.unwrap()).any(|(x, y)| x == y)
            });
            if copies || collide {
                if let Some(similarity) = similar(a, b) {
                    pairs.push(Pair {
                        a: a as u32,
                        b: b as u32,
                        similarity,
                    });
                }
            }
        }
    }
    let links: Vec<(u32, u32)> = pairs.iter().map(|p| (p.a, p.b)).collect();
    let keep = pipeline.config().keep();
    let clusters = cluster(
        docs.len(),
        &links,
        keep,
        |d| texts[d as usize].len(),
        |kept, doc| similar(kept as usize, doc as usize),
    )
    .expect("a small corpus");
    Answer { pairs, clusters }
}

/// An index of the corpus under the pipeline's configuration, added in two batches (two
/// segments), each document under its number; the directory lives as long as it is held.
fn two_segments(pipeline: &Pipeline, texts: &[String]) -> (tempfile::TempDir, IndexWriter) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut writer = IndexWriter::create(dir.path(), pipeline.config()).expect("an index");
    let docs: Vec<(String, &str)> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| (i.to_string(), t.as_str()))
        .collect();
    let half = docs.len() / 2;
    writer.add(&docs[..half]).expect("first batch");
    writer.add(&docs[half..]).expect("second batch");
    (dir, writer)
}

/// The pairs and clusters of a corpus from an index of it: added in two batches (two
/// segments), every document queried.
fn indexed(pipeline: &Pipeline, texts: &[String]) -> Answer {
    let (_dir, writer) = two_segments(pipeline, texts);
    let searcher = writer.searcher();
    from_neighbours(pipeline, texts, |text| {
        let found = searcher.query(text, &Query::new()).expect("a query");
        found
            .iter()
            .map(|n| (n.id.parse().expect("a numeric id"), n.similarity))
            .collect()
    })
}

/// The containment pairs of a corpus from a containment index of it (two segments, every
/// document queried), as `(contained, containing)` in the order the batch run gives them.
fn contained_by_index(pipeline: &Pipeline, texts: &[String]) -> Vec<[u32; 2]> {
    let (_dir, writer) = two_segments(pipeline, texts);
    let searcher = writer.searcher();
    let size = |i: usize| pipeline.shingle_doc(&texts[i]).set().len();
    let mut pairs = std::collections::BTreeSet::new();
    for (q, text) in texts.iter().enumerate() {
        for n in searcher.query(text, &Query::new()).expect("a query") {
            let d: u32 = n.id.parse().expect("a numeric id");
            let q = q as u32;
            let inside = n.containment.expect("a containment answer").inside;
            let (sq, sd) = (size(q as usize), size(d as usize));
            if sq != sd {
                let query_inside = inside == neardup_index::Inside::Query;
                assert_eq!(
                    query_inside,
                    sq < sd,
                    "query {q}, neighbour {d}: the smaller is inside"
                );
            }
            // The batch run's order: the smaller first, on equal sizes the lower number.
            let pair = if (sq, q) < (sd, d) { [q, d] } else { [d, q] };
            if d != q {
                pairs.insert(pair);
            }
        }
    }
    pairs.into_iter().collect()
}

/// The pairs and clusters of a corpus served over HTTP: posted in two batches, every
/// document queried with `POST /v1/query`.
fn served(pipeline: &Pipeline, texts: &[String]) -> Answer {
    let dir = tempfile::tempdir().expect("a temporary directory");
    drop(IndexWriter::create(dir.path(), pipeline.config()).expect("an index"));
    let server = neardup_server::Server::open(dir.path(), Default::default()).expect("a server");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = runtime.spawn(server.serve(listener, async {
        let _ = stopped.await;
    }));
    let post = |path: &str, body: serde_json::Value| -> serde_json::Value {
        use std::io::{Read, Write};
        let body = serde_json::to_vec(&body).unwrap();
        let mut stream = std::net::TcpStream::connect(addr).expect("a connection");
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nhost: cases\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .unwrap();
        stream.write_all(&body).unwrap();
        let mut raw = String::new();
        stream.read_to_string(&mut raw).unwrap();
        assert!(raw.starts_with("HTTP/1.1 200"), "{path}: {raw}");
        serde_json::from_str(raw.split("\r\n\r\n").nth(1).unwrap()).unwrap()
    };
    let docs: Vec<serde_json::Value> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| serde_json::json!({"id": i.to_string(), "text": t}))
        .collect();
    let half = docs.len() / 2;
    post("/v1/documents", serde_json::json!(docs[..half]));
    post("/v1/documents", serde_json::json!(docs[half..]));
    let answer = from_neighbours(pipeline, texts, |text| {
        let found = post("/v1/query", serde_json::json!({ "texts": [text] }));
        found["results"][0]["neighbours"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let similarity = Similarity {
                    jaccard: n["jaccard"].as_f64(),
                    estimate: n["estimate"].as_f64(),
                    truncated: n["truncated"].as_bool().unwrap_or(false),
                    hamming: None,
                };
                (n["id"].as_str().unwrap().parse().unwrap(), similarity)
            })
            .collect()
    });
    let _ = stop.send(());
    runtime.block_on(serving).unwrap().expect("served");
    answer
}

/// The pairs (a < b) from each document's neighbours, and clusters by `neardup::cluster`
/// over them.
fn from_neighbours(
    pipeline: &Pipeline,
    texts: &[String],
    neighbours: impl Fn(&str) -> Vec<(u32, Similarity)>,
) -> Answer {
    let mut pairs = Vec::new();
    for (a, text) in texts.iter().enumerate() {
        for (b, similarity) in neighbours(text) {
            if b > a as u32 {
                pairs.push(Pair {
                    a: a as u32,
                    b,
                    similarity,
                });
            }
        }
    }
    pairs.sort_by_key(|p| (p.a, p.b));
    let by_pair: std::collections::HashMap<(u32, u32), Similarity> =
        pairs.iter().map(|p| ((p.a, p.b), p.similarity)).collect();
    let links: Vec<(u32, u32)> = pairs.iter().map(|p| (p.a, p.b)).collect();
    let clusters = cluster(
        texts.len(),
        &links,
        pipeline.config().keep(),
        |d| texts[d as usize].len(),
        |kept, doc| by_pair.get(&(kept.min(doc), kept.max(doc))).copied(),
    )
    .expect("a small corpus");
    Answer { pairs, clusters }
}

/// What an engine answered.
struct Answer {
    pairs: Vec<Pair>,
    clusters: Vec<Cluster>,
}

impl Case {
    fn config(&self, engine: Engine) -> Config {
        self.config_with(engine, neardup::Measure::Jaccard)
    }

    /// The same with what the threshold is of.
    fn config_with(&self, engine: Engine, measure: neardup::Measure) -> Config {
        let shingle: ShingleKind = self.shingle.parse().expect("shingle");
        let normalize: Normalization = self.normalize.parse().expect("normalize");
        let sketch = match engine {
            Engine::LshClassic => SketchKind::Classic,
            _ => SketchKind::OnePermutation,
        };
        let verification = match engine {
            Engine::Triage => Verification::Triage,
            _ => Verification::Exact,
        };
        Config::builder()
            .shingle(shingle)
            .normalization(normalize)
            .threshold(self.threshold)
            .num_perm(self.num_perm)
            .sketch(sketch)
            .verification(verification)
            .keep(KeepPolicy::First)
            .multiset(self.multiset)
            .measure(measure)
            .build()
            .expect("a valid configuration")
    }

    /// The documents' shingle sets under the case's settings.
    fn sets(&self) -> Vec<Vec<u64>> {
        let config = self.config(Engine::Exact);
        self.docs
            .iter()
            .map(|d| config.shingler().shingle_set(d))
            .collect()
    }

    fn run(&self, engine: Engine) -> Answer {
        let pipeline = Pipeline::new(self.config(engine)).expect("pipeline");
        if engine == Engine::Documents {
            return one_at_a_time(&pipeline, &self.docs);
        }
        if engine == Engine::Index {
            return indexed(&pipeline, &self.docs);
        }
        if engine == Engine::Server {
            return served(&pipeline, &self.docs);
        }
        let ((pairs, _), (clusters, _)) = if engine == Engine::Exact {
            let corpus = pipeline.shingle(&self.docs).unwrap();
            (
                pipeline.exact_pairs(&corpus, &mut Quiet).unwrap(),
                pipeline.exact_clusters(&corpus, &mut Quiet).unwrap(),
            )
        } else {
            let corpus = pipeline.sketch_texts(&self.docs).unwrap();
            (
                pipeline.pairs(&corpus, &mut Quiet),
                pipeline.clusters(&corpus, &mut Quiet),
            )
        };
        Answer { pairs, clusters }
    }

    fn engines(&self) -> Vec<Engine> {
        match &self.engines {
            None => ENGINES.to_vec(),
            Some(names) => names
                .iter()
                .filter(|n| n.as_str() != "spark")
                .map(|n| {
                    *ENGINES
                        .iter()
                        .find(|e| e.name() == n)
                        .unwrap_or_else(|| panic!("unknown engine {n:?}"))
                })
                .collect(),
        }
    }
}

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cases")
}

fn load_cases() -> Vec<(String, Case)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .expect("testdata/cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable case");
            let case: Case =
                toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            (name, case)
        })
        .collect()
}

/// The pairs ≥ threshold by brute force over the shingle sets, with their Jaccard.
fn brute_force(case: &Case) -> Vec<(u32, u32, f64)> {
    let sets = case.sets();
    let mut out = Vec::new();
    for a in 0..sets.len() {
        for b in a + 1..sets.len() {
            if sets[a].is_empty() || sets[b].is_empty() {
                continue;
            }
            let j = jaccard(&sets[a], &sets[b]);
            if j >= case.threshold {
                out.push((a as u32, b as u32, j));
            }
        }
    }
    out
}

#[test]
fn there_are_cases() {
    assert!(load_cases().len() >= 8, "testdata/cases lost its cases");
}

/// The cases themselves: expected pairs are the brute-force pairs, every expected pair is
/// safe from an LSH miss (unless marked), clusters cover each document at most once.
#[test]
fn every_case_is_right_about_itself() {
    for (name, case) in load_cases() {
        let truth = brute_force(&case);
        let pairs: Vec<[u32; 2]> = truth.iter().map(|&(a, b, _)| [a, b]).collect();
        assert_eq!(pairs, case.pairs, "{name}: expected pairs ≠ brute force");
        if !case.lsh_may_miss {
            let plan = case.config(Engine::LshOph).plan();
            for &(a, b, j) in &truth {
                let miss = 1.0 - plan.probability(j);
                assert!(
                    miss < MAX_MISS,
                    "{name}: pair ({a}, {b}) at J = {j:.3} is missed with probability {miss:.2e} \
                     under {}×{}; mark the case lsh_may_miss or move the pair",
                    plan.bands(),
                    plan.rows()
                );
            }
        }
        let mut seen: Vec<u32> = case.clusters.iter().flatten().copied().collect();
        let n = seen.len();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), n, "{name}: a document in two clusters");
        assert!(!case.description.is_empty(), "{name}: no description");
    }
}

#[test]
fn every_engine_agrees_with_every_case() {
    let mut checked = 0;
    for (name, case) in load_cases() {
        let truth = brute_force(&case);
        for engine in case.engines() {
            if engine.is_lsh() && case.lsh_may_miss {
                continue;
            }
            let what = format!("{name} [{}]", engine.name());
            let answer = case.run(engine);
            let pairs: Vec<[u32; 2]> = answer.pairs.iter().map(|p| [p.a, p.b]).collect();
            assert_eq!(pairs, case.pairs, "{what}: pairs");
            for (p, &(_, _, j)) in answer.pairs.iter().zip(&truth) {
                // Triage may accept a pair on its signature alone, without a Jaccard.
                match p.similarity.jaccard {
                    // The API gives 6 decimals.
                    Some(x) if engine == Engine::Server => assert!(
                        (x - j).abs() <= 5e-7,
                        "{what}: Jaccard of ({}, {}): {x} for {j}",
                        p.a,
                        p.b
                    ),
                    Some(x) => assert_eq!(x, j, "{what}: Jaccard of ({}, {})", p.a, p.b),
                    None => assert_eq!(engine, Engine::Triage, "{what}: no Jaccard"),
                }
            }
            assert_eq!(members(&answer.clusters), case.clusters, "{what}: clusters");
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} case × engine runs");
}

/// Each cluster's documents as a case lists them: the kept one, then its duplicates.
fn members(clusters: &[Cluster]) -> Vec<Vec<u32>> {
    clusters
        .iter()
        .map(|c| {
            std::iter::once(c.kept)
                .chain(c.duplicates.iter().map(|d| d.doc))
                .collect()
        })
        .collect()
}

/// Cases with a `[simhash]` table: its pairs are exactly the brute-force pairs with Jaccard
/// ≥ t and fingerprints within K bits, and a SimHash run gives them and its clusters.
#[test]
fn simhash_agrees_with_its_cases() {
    let mut checked = 0;
    for (name, case) in load_cases() {
        let Some(sim) = &case.simhash else { continue };
        let config = Config::builder()
            .shingle(case.shingle.parse().expect("shingle"))
            .normalization(case.normalize.parse().expect("normalize"))
            .threshold(case.threshold)
            .multiset(case.multiset)
            .sketch(SketchKind::SimHash)
            .hamming(sim.hamming)
            .build()
            .expect("a valid configuration");
        let pipeline = Pipeline::new(config).expect("pipeline");
        let shingled = pipeline.shingle(&case.docs).unwrap();
        let c = shingled.corpus().clone();
        let truth: Vec<[u32; 2]> = brute_force(&case)
            .into_iter()
            .filter(|&(a, b, _)| c.hamming(a, b).is_some_and(|d| d <= sim.hamming))
            .map(|(a, b, _)| [a, b])
            .collect();
        assert_eq!(truth, sim.pairs, "{name}: simhash pairs ≠ brute force");
        let corpus = pipeline.sketch(shingled, &mut Quiet);
        let (pairs, _) = pipeline.pairs(&corpus, &mut Quiet);
        let got: Vec<[u32; 2]> = pairs.iter().map(|p| [p.a, p.b]).collect();
        assert_eq!(got, sim.pairs, "{name} [simhash]: pairs");
        let (clusters, _) = pipeline.clusters(&corpus, &mut Quiet);
        assert_eq!(
            members(&clusters),
            sim.clusters,
            "{name} [simhash]: clusters"
        );
        checked += 1;
    }
    assert!(checked >= 1, "no case has a [simhash] table");
}

/// Cases with a `[containment]` table: its pairs are exactly the brute-force pairs (the
/// smaller contained in the larger at the threshold), and the exact containment join and
/// the LSH Ensemble-style search both give them, and so does a containment index of it.
#[test]
fn containment_agrees_with_its_cases() {
    let mut checked = 0;
    for (name, case) in load_cases() {
        let Some(want) = &case.containment else {
            continue;
        };
        let config = case.config(Engine::Exact);
        let sets = case.sets();
        let mut truth = Vec::new();
        for (a, x) in sets.iter().enumerate() {
            for (b, y) in sets.iter().enumerate() {
                let smaller = neardup::is_smaller(x.len(), a as u32, y.len(), b as u32);
                if a == b || x.is_empty() || !smaller {
                    continue;
                }
                let c = neardup::intersection_size(x, y) as f64 / x.len() as f64;
                if neardup::meets_threshold(c, case.threshold) {
                    truth.push([a as u32, b as u32]);
                }
            }
        }
        truth.sort_unstable();
        assert_eq!(truth, want.pairs, "{name}: containment pairs ≠ brute force");
        let pipeline = Pipeline::new(config).expect("pipeline");
        let shingled = pipeline.shingle(&case.docs).unwrap();
        let pairs = |found: Vec<neardup::Contained>| -> Vec<[u32; 2]> {
            found.iter().map(|c| [c.a, c.b]).collect()
        };
        let exact = pipeline.exact_containment_pairs(&shingled, &mut Quiet).0;
        assert_eq!(pairs(exact), want.pairs, "{name} [exact containment]");
        let search = pipeline.containment_pairs(&shingled, &mut Quiet).unwrap().0;
        assert_eq!(pairs(search), want.pairs, "{name} [ensemble]");
        let index = Pipeline::new(case.config_with(Engine::Exact, neardup::Measure::Containment))
            .expect("pipeline");
        assert_eq!(
            contained_by_index(&index, &case.docs),
            want.pairs,
            "{name} [containment index]"
        );
        checked += 1;
    }
    assert!(checked >= 1, "no case has a [containment] table");
}
