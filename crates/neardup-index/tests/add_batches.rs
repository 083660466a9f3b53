//! `IndexWriter::add_batches`: batches added in one commit end and are answered as the
//! same batches added one after another.

use neardup::Config;
use neardup_index::{IndexWriter, Outcome, Query, Searcher};
use proptest::prelude::*;

const BIKE: &str = "Vintage road bike, 56 cm steel frame, new tyres and brakes";
const BIKE2: &str = "Vintage road bike, 56 cm steel frame, new tyres and brakes!";
const CHAIRS: &str = "Set of four ladder-back chairs in beech, lightly used";
const TEXTS: [&str; 5] = [BIKE, BIKE2, CHAIRS, "", "   "];
const IDS: [&str; 3] = ["a", "b", "c"];

fn writer(containment: bool) -> (tempfile::TempDir, IndexWriter) {
    let dir = tempfile::tempdir().unwrap();
    let measure = if containment {
        neardup::Measure::Containment
    } else {
        neardup::Measure::Jaccard
    };
    let config = Config::builder()
        .measure(measure)
        .threshold(0.7)
        .seed(3)
        .build()
        .unwrap();
    let writer = IndexWriter::create(dir.path(), &config).unwrap();
    (dir, writer)
}

/// What each text of `TEXTS` finds: ids with their Jaccard.
type Found = Vec<Vec<(String, Option<f64>)>>;

/// Each live id with its set's size, and what each text finds.
fn contents(searcher: &Searcher) -> (Vec<(String, usize)>, Found) {
    let mut ids: Vec<(String, usize)> = searcher
        .ids()
        .map(|id| (id.to_string(), searcher.stored(id).unwrap().set().len()))
        .collect();
    ids.sort();
    let found = TEXTS
        .iter()
        .map(|t| {
            (searcher.query(t, &Query::new()).unwrap().iter())
                .map(|n| (n.id.to_string(), n.similarity.jaccard))
                .collect()
        })
        .collect();
    (ids, found)
}

#[test]
fn an_empty_word_leaves_its_id_as_an_earlier_batch_left_it() {
    let (_dir, mut writer) = writer(false);
    writer.add(&[("x", CHAIRS)]).unwrap();
    let outcomes = writer
        .add_batches(&[
            vec![("x", BIKE), ("y", ""), ("z", BIKE2)],
            vec![("x", ""), ("y", CHAIRS), ("z", BIKE), ("z", "")],
        ])
        .unwrap();
    let added = |replaced| Outcome::Added { replaced };
    assert_eq!(
        outcomes,
        [
            vec![added(true), Outcome::Empty, added(false)],
            vec![
                Outcome::Empty,
                added(false),
                Outcome::Superseded,
                Outcome::Empty
            ],
        ]
    );
    let searcher = writer.searcher();
    assert_eq!(searcher.len(), 3);
    let found = searcher.query(BIKE, &Query::new()).unwrap();
    let found: Vec<_> = found.iter().map(|n| (n.id, n.similarity.jaccard)).collect();
    // x holds the first batch's text, z its own from the first batch.
    assert_eq!(found[0], ("x", Some(1.0)));
    assert_eq!(found.len(), 2);
    assert_eq!(found[1].0, "z");
}

fn batch() -> impl Strategy<Value = Vec<(&'static str, &'static str)>> {
    proptest::collection::vec(
        (
            prop::sample::select(IDS.to_vec()),
            prop::sample::select(TEXTS.to_vec()),
        ),
        0..4,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    /// The index ends the same, and each batch's outcomes add up to the report of the same
    /// batch added alone.
    #[test]
    fn batches_in_one_commit_end_and_answer_as_one_after_another(
        first in batch(),
        batches in proptest::collection::vec(batch(), 1..6),
        containment in any::<bool>(),
    ) {
        let (_a, mut together) = writer(containment);
        let (_b, mut alone) = writer(containment);
        together.add(&first).unwrap();
        alone.add(&first).unwrap();
        let outcomes = together.add_batches(&batches).unwrap();
        prop_assert_eq!(outcomes.len(), batches.len());
        for (batch, outcomes) in batches.iter().zip(&outcomes) {
            let report = alone.add(batch).unwrap();
            prop_assert_eq!(outcomes.len(), batch.len());
            let count = |f: fn(&Outcome) -> bool| outcomes.iter().filter(|o| f(o)).count();
            prop_assert_eq!(count(|o| matches!(o, Outcome::Added { .. })), report.added);
            prop_assert_eq!(count(|o| matches!(o, Outcome::Added { replaced: true })), report.replaced);
            prop_assert_eq!(count(|o| matches!(o, Outcome::Superseded)), report.superseded);
            let empty: Vec<&str> = (batch.iter().zip(outcomes))
                .filter(|(_, o)| matches!(o, Outcome::Empty))
                .map(|((id, _), _)| *id)
                .collect();
            prop_assert_eq!(empty, report.empty.iter().map(String::as_str).collect::<Vec<_>>());
        }
        prop_assert_eq!(contents(together.searcher()), contents(alone.searcher()));
    }
}
