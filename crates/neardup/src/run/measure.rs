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

    /// The measure's name: `jaccard`, `containment`.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Jaccard => "jaccard",
            Measure::Containment => "containment",
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
    }
}
