//! `decontaminate --report`: the run's results as neardup-report's decontamination page.

use neardup::decontaminate::TestSet;
use neardup_report::decontamination::{render, Benchmark, Data, SpanView};

use crate::decontaminate::{Run, TestItem};

/// The page of a run.
pub fn page(run: &Run) -> String {
    let Run {
        found,
        per_item,
        items,
        names,
        tests,
        args,
    } = *run;
    let benchmarks = benchmarks(per_item, items, names, tests, args.ngram);
    let views: Vec<SpanView> = found
        .views
        .iter()
        .map(|v| SpanView {
            benchmark: names[items[v.item].file].clone(),
            item: items[v.item].id.clone(),
            item_text: items[v.item].text.clone(),
            document: found.docs.id(v.doc).to_string(),
            containment: v.containment,
            before: v.before.clone(),
            span: v.span.clone(),
            after: v.after.clone(),
        })
        .collect();
    let inputs: Vec<String> = args
        .input
        .inputs
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    render(&Data {
        title: format!("neardup decontaminate {}", inputs.join(" ")),
        settings: vec![
            ("n-gram".into(), format!("{} words", args.ngram)),
            (
                "shortest item checked".into(),
                format!("{} words", args.min_ngram),
            ),
            ("minimum overlap".into(), format!("{}", args.min_overlap)),
            (
                "words".into(),
                "Unicode words (UAX #29), lowercased; punctuation ignored".into(),
            ),
        ],
        views_left_out: found.matches.saturating_sub(found.views.len() as u64),
        benchmarks,
        views,
    })
}

/// Per test file: items, items contaminated, documents holding one, short and unchecked
/// items (`n` words per n-gram).
pub fn benchmarks(
    per_item: &[Vec<u32>],
    items: &[TestItem],
    names: &[String],
    tests: &TestSet,
    n: usize,
) -> Vec<Benchmark> {
    let count = |of_file: &[usize], f: &dyn Fn(usize) -> bool| {
        of_file.iter().filter(|i| f(**i)).count() as u64
    };
    names
        .iter()
        .enumerate()
        .map(|(file, name)| {
            let of_file: Vec<usize> = (0..items.len())
                .filter(|i| items[*i].file == file)
                .collect();
            let mut documents: Vec<u32> = of_file
                .iter()
                .flat_map(|i| per_item[*i].iter().copied())
                .collect();
            documents.sort_unstable();
            documents.dedup();
            Benchmark {
                name: name.clone(),
                items: of_file.len() as u64,
                contaminated: count(&of_file, &|i| !per_item[i].is_empty()),
                documents: documents.len() as u64,
                short: count(&of_file, &|i| tests.is_checked(i) && tests.item_len(i) < n),
                unchecked: count(&of_file, &|i| !tests.is_checked(i)),
            }
        })
        .collect()
}
