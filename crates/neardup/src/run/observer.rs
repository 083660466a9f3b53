//! What a run reports while it goes: the progress of its stages and the score of each
//! candidate. Passed to each call, as a searcher is handed a sink, so a
//! [`Pipeline`](crate::Pipeline) keeps no state of its runs and can be shared by threads.

use crate::run::stats::{Similarities, Stage};

/// Receives what a run reports while it goes. Every method does nothing by default;
/// implement the ones you need.
///
/// ```
/// use neardup::{Config, Observer, Pipeline};
/// use neardup::run::Stage;
///
/// /// Counts the candidates that verification rejected.
/// #[derive(Default)]
/// struct Rejected(u64);
/// impl Observer for Rejected {
///     fn wants_scores(&self) -> bool {
///         true
///     }
///     fn scored(&mut self, _similarity: f64, verified: bool) {
///         self.0 += u64::from(!verified);
///     }
/// }
///
/// let pipeline = Pipeline::new(Config::builder().threshold(0.9).build()?)?;
/// let corpus = pipeline.sketch_texts(&["a tale of two cities", "a tale of two kitties"])?;
/// let mut rejected = Rejected::default();
/// let (pairs, stats) = pipeline.pairs(&corpus, &mut rejected);
/// assert_eq!(rejected.0, stats.candidates - stats.verified);
/// # Ok::<(), neardup::Error>(())
/// ```
pub trait Observer {
    /// A stage starts with `total` units of work (0 if unknown).
    fn start(&mut self, _stage: Stage, _total: u64) {}
    /// `n` more units of the current stage are done.
    fn advance(&mut self, _n: u64) {}
    /// The current stage is over.
    fn finish(&mut self) {}
    /// Whether [`Observer::scored`] is to be called; when `false` (the default) a run
    /// spends nothing on it.
    fn wants_scores(&self) -> bool {
        false
    }
    /// A candidate was judged: the similarity the verdict was made on (exact Jaccard, or
    /// the estimate when verification used that) and whether it passed.
    fn scored(&mut self, _similarity: f64, _verified: bool) {}
}

/// An [`Observer`] that takes no notice.
#[derive(Clone, Copy, Debug, Default)]
pub struct Quiet;

impl Observer for Quiet {}

impl<O: Observer + ?Sized> Observer for &mut O {
    fn start(&mut self, stage: Stage, total: u64) {
        (**self).start(stage, total)
    }
    fn advance(&mut self, n: u64) {
        (**self).advance(n)
    }
    fn finish(&mut self) {
        (**self).finish()
    }
    fn wants_scores(&self) -> bool {
        (**self).wants_scores()
    }
    fn scored(&mut self, similarity: f64, verified: bool) {
        (**self).scored(similarity, verified)
    }
}

/// Absent: takes no notice.
impl<O: Observer> Observer for Option<O> {
    fn start(&mut self, stage: Stage, total: u64) {
        if let Some(o) = self {
            o.start(stage, total)
        }
    }
    fn advance(&mut self, n: u64) {
        if let Some(o) = self {
            o.advance(n)
        }
    }
    fn finish(&mut self) {
        if let Some(o) = self {
            o.finish()
        }
    }
    fn wants_scores(&self) -> bool {
        self.as_ref().is_some_and(O::wants_scores)
    }
    fn scored(&mut self, similarity: f64, verified: bool) {
        if let Some(o) = self {
            o.scored(similarity, verified)
        }
    }
}

/// Both observers hear everything (e.g. progress bars and a [`Similarities`] recorder).
impl<A: Observer, B: Observer> Observer for (A, B) {
    fn start(&mut self, stage: Stage, total: u64) {
        self.0.start(stage, total);
        self.1.start(stage, total);
    }
    fn advance(&mut self, n: u64) {
        self.0.advance(n);
        self.1.advance(n);
    }
    fn finish(&mut self) {
        self.0.finish();
        self.1.finish();
    }
    fn wants_scores(&self) -> bool {
        self.0.wants_scores() || self.1.wants_scores()
    }
    fn scored(&mut self, similarity: f64, verified: bool) {
        if self.0.wants_scores() {
            self.0.scored(similarity, verified);
        }
        if self.1.wants_scores() {
            self.1.scored(similarity, verified);
        }
    }
}

/// Records every candidate's score in its histogram.
impl Observer for Similarities {
    fn wants_scores(&self) -> bool {
        true
    }
    fn scored(&mut self, similarity: f64, verified: bool) {
        self.add(similarity, verified);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Log(Vec<String>);
    impl Observer for Log {
        fn start(&mut self, stage: Stage, total: u64) {
            self.0.push(format!("start {} {total}", stage.name()));
        }
        fn advance(&mut self, n: u64) {
            self.0.push(format!("advance {n}"));
        }
        fn finish(&mut self) {
            self.0.push("finish".into());
        }
    }

    #[test]
    fn a_pair_of_observers_tells_both_and_scores_only_the_one_that_asks() {
        let mut both = (Log::default(), Similarities::default());
        assert!(both.wants_scores());
        both.start(Stage::Verify, 3);
        both.advance(2);
        both.scored(0.95, true);
        both.scored(0.25, false);
        both.finish();
        assert_eq!(both.0 .0, ["start verify 3", "advance 2", "finish"]);
        assert_eq!(both.1.verified.iter().sum::<u64>(), 1);
        assert_eq!(both.1.verified[950], 1);
        assert_eq!(both.1.rejected[250], 1);
        let mut none: Option<Similarities> = None;
        assert!(!none.wants_scores() && !Quiet.wants_scores());
        none.scored(0.5, true);
        assert!(none.is_none());
    }
}
