//! Which engine finds a run's candidates, chosen once, and why.

use crate::error::{Error, Result};
use crate::run::method::{Goal, Method, MethodChoice};
use crate::run::pipeline::Pipeline;

use super::intake::Held;

/// A way of finding a run's pairs. Verification, streaming and clustering downstream are
/// the same for every engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Engine {
    /// MinHash signatures cut into bands; documents sharing a band's key are candidates
    /// (with the checks beyond the buckets when the configuration has them on).
    Bands,
    /// SimHash fingerprints searched in permuted tables within the Hamming distance.
    SimHash,
    /// The exact set-similarity join: every pair at the threshold, no LSH.
    ExactJoin,
    /// Containment by the LSH Ensemble search over partitions of set sizes.
    Ensemble,
    /// The exact containment join.
    ExactContainment,
    /// MinHash bands sorted on disk: a corpus larger than memory.
    Spilled,
}

impl Engine {
    /// True for the engines that find every pair above the threshold (no LSH).
    pub fn is_exact(self) -> bool {
        matches!(self, Engine::ExactJoin | Engine::ExactContainment)
    }

    /// True for the containment engines, whose pairs are
    /// [`Contained`](crate::Contained).
    pub fn is_containment(self) -> bool {
        matches!(self, Engine::Ensemble | Engine::ExactContainment)
    }
}

/// Why [`Method::Auto`] chose its engine (nothing to say when the method was given).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Why {
    /// The corpus spilled to disk, and the exact join holds every set in memory.
    Spilled,
    /// SimHash finds its candidates by fingerprint.
    SimHash,
    /// Containment: the LSH Ensemble (the exact containment join is asked for by name).
    Containment,
    /// An LSH option was given (its name, as the caller spells it).
    LshOption(&'static str),
    /// The costs of both methods predicted on a sample.
    Predicted(MethodChoice),
}

/// The plan of a run: its goal, its engine and why it was chosen. Made once, before any
/// candidate is looked for, by [`RunPlan::choose`].
#[derive(Clone, Debug)]
pub struct RunPlan {
    goal: Goal,
    engine: Engine,
    why: Option<Why>,
}

impl RunPlan {
    /// The engine for `held` under the pipeline's configuration and `method`, for
    /// `goal`. With [`Method::Auto`]: the spilled bands for a corpus on disk, SimHash or
    /// the LSH Ensemble when the configuration asks for them, else the cheaper of LSH and
    /// the exact join as predicted on a sample. Containment gives pairs only: a fragment
    /// contained in two unrelated pages does not make the pages one cluster.
    pub fn choose(
        pipeline: &Pipeline,
        held: &Held<'_>,
        method: Method,
        goal: Goal,
    ) -> Result<Self> {
        Self::choose_with(pipeline, held, method, goal, None)
    }

    /// As [`RunPlan::choose`], where `lsh_option` names an LSH option the user gave: with
    /// [`Method::Auto`] it asks for LSH.
    pub fn choose_with(
        pipeline: &Pipeline,
        held: &Held<'_>,
        method: Method,
        goal: Goal,
        lsh_option: Option<&'static str>,
    ) -> Result<Self> {
        let config = pipeline.config();
        let containment = config.measure().from_smaller();
        if !config.measure().gives_clusters() && goal == Goal::Clusters {
            return Err(Error::NotForContainment(
                crate::run::config::NO_CONTAINMENT_CLUSTERS,
            ));
        }
        let auto = method == Method::Auto;
        let lsh = if config.sketch().is_minhash() {
            Engine::Bands
        } else {
            Engine::SimHash
        };
        let plan = |engine, why: Option<Why>| RunPlan {
            goal,
            engine,
            why: why.filter(|_| auto),
        };
        let shingled = match held {
            Held::Disk { .. } => return Ok(plan(Engine::Spilled, Some(Why::Spilled))),
            Held::Memory(shingled) => shingled,
        };
        Ok(match method {
            _ if containment && method == Method::Exact => plan(Engine::ExactContainment, None),
            _ if containment => plan(Engine::Ensemble, Some(Why::Containment)),
            Method::Exact => plan(Engine::ExactJoin, None),
            Method::Lsh => plan(lsh, None),
            Method::Auto if lsh == Engine::SimHash => plan(lsh, Some(Why::SimHash)),
            Method::Auto if lsh_option.is_some() => plan(lsh, lsh_option.map(Why::LshOption)),
            Method::Auto => {
                let choice = pipeline.choose_method(shingled, goal)?;
                let engine = if choice.method == Method::Exact {
                    Engine::ExactJoin
                } else {
                    lsh
                };
                plan(engine, Some(Why::Predicted(choice)))
            }
        })
    }

    /// What the run gives: pairs or clusters.
    pub fn goal(&self) -> Goal {
        self.goal
    }

    /// The engine that finds the candidates.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Why [`Method::Auto`] chose the engine; `None` when the method was given.
    pub fn why(&self) -> Option<&Why> {
        self.why.as_ref()
    }
}
