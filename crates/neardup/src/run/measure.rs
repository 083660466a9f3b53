//! What the threshold is a threshold of, and what each measure means to a front end.
//!
//! A front end asks a [`Measure`] its questions (does it pair documents both ways, does it
//! give clusters, what its score is called) instead of comparing it with a variant, so a
//! new measure is a new variant here and its engine, not an edit in every front end.

use crate::error::{by_name, Error};

/// What the threshold is a threshold of.
///
/// Printed and parsed by its [name](Measure::name); with the `clap` feature it is a
/// `clap::ValueEnum` under the same names, its variants' first paragraphs as their help.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Measure {
    /// Jaccard similarity |A ∩ B| / |A ∪ B| (the default).
    #[default]
    #[cfg_attr(feature = "clap", value(name = "jaccard"))]
    Jaccard,
    /// Containment |A ∩ B| / |A| of the smaller document A in the larger B.
    ///
    /// A fragment inside a longer document: candidates by an LSH Ensemble-style search
    /// over size partitions, each verified exactly.
    #[cfg_attr(feature = "clap", value(name = "containment"))]
    Containment,
}

impl Measure {
    /// Every measure, the default first.
    pub const ALL: [Measure; 2] = [Measure::Jaccard, Measure::Containment];

    /// The measure's name: `jaccard`, `containment`. It is also the name of a pair's
    /// score in the outputs.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Jaccard => "jaccard",
            Measure::Containment => "containment",
        }
    }

    /// Whether a pair is scored from its smaller document: a [`Contained`](crate::Contained)
    /// pair, `a` inside `b`, found by size (the LSH Ensemble search over size partitions,
    /// or the exact containment join) rather than by one band plan. Such a run holds its
    /// sets in memory and needs MinHash sketches.
    pub fn from_smaller(self) -> bool {
        match self {
            Measure::Jaccard => false,
            Measure::Containment => true,
        }
    }

    /// Whether its pairs join into clusters (`clusters`, `dedup`): not containment's, as a
    /// fragment contained in two unrelated pages does not make the pages one cluster.
    pub fn gives_clusters(self) -> bool {
        !self.from_smaller()
    }

    /// Whether a run of it has one band plan (bands × rows, and an index keeps them):
    /// a search by size chooses its rows per band for each size partition.
    pub fn has_band_plan(self) -> bool {
        !self.from_smaller()
    }

    /// The threshold the engines test for a threshold `t` of this measure, in the score
    /// they compute: Jaccard, or containment for a measure found by size. `t` itself for
    /// every measure so far; a measure that is a function of one of those (Dice is
    /// 2J / (1 + J)) converts here, and every engine, the band plan and `sim` follow.
    pub fn tested(self, t: f64) -> f64 {
        match self {
            Measure::Jaccard | Measure::Containment => t,
        }
    }

    /// A pair's score in this measure, from the score the engines computed (see
    /// [`Measure::tested`]): the same value for every measure so far.
    pub fn score(self, computed: f64) -> f64 {
        match self {
            Measure::Jaccard | Measure::Containment => computed,
        }
    }

    /// Every measure's name, for a message: `jaccard or containment`.
    pub(crate) fn expected() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|m| m.name()).collect();
        match names.split_last() {
            Some((last, [])) => (*last).to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

by_name!(Measure, Error::InvalidMeasure);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_are_named() {
        crate::error::assert_named(&Measure::ALL);
        assert_eq!(Measure::expected(), "jaccard or containment");
        assert_eq!(
            "overlap".parse::<Measure>().unwrap_err().to_string(),
            "invalid measure \"overlap\": expected jaccard or containment"
        );
    }

    #[test]
    fn containment_is_scored_from_the_smaller_document_and_gives_no_clusters() {
        assert!(!Measure::Jaccard.from_smaller());
        assert!(Measure::Jaccard.gives_clusters() && Measure::Jaccard.has_band_plan());
        assert!(Measure::Containment.from_smaller());
        assert!(!Measure::Containment.gives_clusters());
        assert!(!Measure::Containment.has_band_plan());
    }
}
