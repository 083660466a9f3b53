//! `neardup index ...`: build, add to, query and maintain a persistent index.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use neardup::Normalization;
use neardup_index::{check, IndexWriter, Outcome, OutcomeJson, Params, Query, Searcher};
use neardup_io::documents::{DocId, Documents, InputOptions};
use rayon::prelude::*;
use serde::Serialize;

use crate::errors::usage;
use crate::index_settings::{
    GivenParams, IndexAddSettings, IndexBuildSettings, IndexCheckSettings, IndexCompactSettings,
    IndexQuerySettings, IndexRemoveSettings, IndexSettings, IndexStatsSettings,
};
use crate::output::{finish, open_output};
use crate::progress::Bars;
use crate::summary::{secs, thousands, to_stderr};

/// Query lines are computed in parallel this many documents at a time, then written in
/// order.
const QUERY_CHUNK: usize = 8192;

pub fn run(command: &IndexSettings) -> Result<()> {
    match command {
        IndexSettings::Build(a) => build(a),
        IndexSettings::Add(a) => add(a),
        IndexSettings::Query(a) => query(a),
        IndexSettings::Remove(a) => remove(a),
        IndexSettings::Stats(a) => stats(a),
        IndexSettings::Compact(a) => compact(a),
        IndexSettings::Check(a) => check_cmd(a),
    }
}

/// The pinned search: the band plan and threshold, or the containment tables (and the
/// common tokens they leave out, once learned).
fn plan_words(searcher: &Searcher) -> String {
    let p = searcher.params();
    if searcher.pipeline().config().measure().from_smaller() {
        let common = searcher
            .stats()
            .common_tokens
            .map(|n| {
                format!(
                    ", {} common tokens left out of the signatures",
                    thousands(n)
                )
            })
            .unwrap_or_default();
        format!(
            "containment tables of {} rows ({} bands), containment threshold {}{common}",
            searcher
                .pipeline()
                .ensemble_plan()
                .tables()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            p.bands,
            p.threshold
        )
    } else {
        format!(
            "{} bands x {} rows, threshold {}",
            p.bands, p.rows, p.threshold
        )
    }
}

/// Refuses parameters given to `add` or `query` that differ from the index's.
fn check_given(index: &Path, have: &Params, p: &GivenParams) -> Result<()> {
    let mut asked = have.clone();
    if let Some(s) = p.shingle {
        asked.shingle = s.to_string();
    }
    if let Some(n) = p.normalize {
        asked.normalization = Normalization::name(n).to_string();
    }
    if let Some(n) = p.max_shingles {
        asked.max_shingles = n;
    }
    if let Some(k) = p.num_perm {
        asked.num_perm = k;
    }
    if let Some(s) = p.sketch {
        asked.sketch = s.name().to_string();
    }
    if let Some(s) = p.seed {
        asked.seed = s;
    }
    if let Some(t) = p.threshold {
        asked.threshold = t;
    }
    if let (Some(b), Some(r)) = (p.bands, p.rows) {
        (asked.bands, asked.rows) = (b, r);
    }
    if p.multiset {
        asked.multiset = true;
    }
    if let Some(m) = p.measure {
        asked.measure = m.name().to_string();
    }
    let differences = have.differences(&asked);
    if !differences.is_empty() {
        usage!(
            "{}: the index was built with other parameters: {}",
            index.display(),
            differences.join("; ")
        );
    }
    Ok(())
}

/// Reads the inputs: the documents' ids and texts, and what was skipped. `stored`: the
/// documents go into the index, so their ids must name them: an empty id, or a JSON number
/// and a string with the same text (`12` and `"12"`, one id in the index), are refused.
fn read(
    input: &InputOptions,
    quiet: bool,
    stored: bool,
) -> Result<(Documents, Vec<(DocId, String)>)> {
    let bars = Bars::new(quiet);
    // Empty texts are not skipped while reading (as the batch commands do): `add --dedup`
    // and `query` answer one line per document read, an empty one included, and an index
    // command holds the texts anyway.
    let mut docs = crate::ready::read_all(input, &bars)?;
    // As the batch commands' summary: how a format was told is a note (quiet under -q),
    // warnings about the data print under -q too.
    if !quiet {
        for line in docs.sniffed_formats() {
            to_stderr(&format!("note: {line}\n"));
        }
    }
    for w in &docs.warnings {
        to_stderr(&format!("warning: {w}\n"));
    }
    let texts = std::mem::take(&mut docs.texts);
    let pairs: Vec<(DocId, String)> = texts
        .into_iter()
        .enumerate()
        .map(|(d, t)| (docs.id(d as u32), t))
        .collect();
    if stored {
        check_ids(&docs, &pairs)?;
    }
    Ok((docs, pairs))
}

/// Where document `d` is, for messages: `file:line`.
fn place_words(docs: &Documents, d: usize) -> String {
    format!("{}:{}", docs.source_of(d as u32), docs.place(d as u32).line)
}

/// Refuses ids an index cannot tell apart or name.
fn check_ids(docs: &Documents, pairs: &[(DocId, String)]) -> Result<()> {
    if let Some(d) = pairs
        .iter()
        .position(|(id, _)| matches!(id, DocId::Text(t) if t.is_empty()))
    {
        return Err(crate::errors::BadRecord(format!(
            "{}: the record's id is empty; an indexed document needs an id to be found or removed by",
            place_words(docs, d)
        ))
        .into());
    }
    let json_numbers = pairs
        .iter()
        .any(|(id, _)| matches!(id, DocId::JsonNumber(_)));
    let texts = pairs.iter().any(|(id, _)| matches!(id, DocId::Text(_)));
    if json_numbers && texts {
        // Only a mixed input pays for the map.
        let mut seen: std::collections::HashMap<&str, (usize, bool)> =
            std::collections::HashMap::new();
        for (d, (id, _)) in pairs.iter().enumerate() {
            let (text, number) = match id {
                DocId::JsonNumber(t) => (t.as_str(), true),
                DocId::Text(t) => (t.as_str(), false),
                DocId::Number(_) => continue,
            };
            match seen.get(text) {
                Some(&(first, was_number)) if was_number != number => {
                    return Err(crate::errors::BadRecord(format!(
                        "{}: the id {} and the id {} at {} are one id in an index (ids are text there); \
                         make the input's ids all strings or all numbers",
                        place_words(docs, d),
                        if number { text.to_string() } else { format!("{text:?}") },
                        if was_number { text.to_string() } else { format!("{text:?}") },
                        place_words(docs, first)
                    ))
                    .into());
                }
                Some(_) => {}
                None => {
                    seen.insert(text, (d, number));
                }
            }
        }
    }
    Ok(())
}

/// The warning for documents without ids, printed even with --quiet: it is about what
/// goes into the index, not about progress.
fn numbered_warning(count: u64) {
    if count > 0 {
        to_stderr(&format!(
            "warning: {} without ids go{} by {} line or record number{}, which the documents of \
             another input would replace; give ids (--id-field, --id-column, or ID<TAB>TEXT lines)\n",
            documents(count),
            if count == 1 { "es" } else { "" },
            if count == 1 { "its" } else { "their" },
            if count == 1 { "" } else { "s" },
        ));
    }
}

/// "1 document", "2 documents".
fn documents(n: u64) -> String {
    crate::summary::count(n, "document", "documents")
}

/// Refuses an output inside the index's directory: it would replace the index's own files
/// (`-o INDEX/MANIFEST`), or leave a file a writer may take for one of its own.
fn refuse_output_in_index(index: &Path, output: Option<&Path>) -> Result<()> {
    let Some(output) = output.filter(|o| *o != Path::new("-")) else {
        return Ok(());
    };
    let Ok(index) = std::fs::canonicalize(index) else {
        return Ok(());
    };
    // The output need not exist: its directory does (else writing it fails anyway).
    let parent = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(parent) = std::fs::canonicalize(&parent) else {
        return Ok(());
    };
    let resolved = match output.file_name() {
        Some(name) => std::fs::canonicalize(parent.join(name)).unwrap_or(parent.join(name)),
        None => parent,
    };
    if resolved.starts_with(&index) {
        usage!(
            "-o {}: the output is inside the index {}; write it elsewhere (the index's files are its own)",
            output.display(),
            index.display()
        );
    }
    Ok(())
}

/// Opens the index for writing. When another writer holds it, says so (and whom, when the
/// lock names it) before waiting, up to `wait` (--wait; `None`: as long as it takes).
pub fn open_writer(index: &Path, wait: Option<Duration>) -> Result<IndexWriter> {
    writer_waiting(index, wait, |w| IndexWriter::open_within(index, w))
}

fn writer_waiting(
    index: &Path,
    wait: Option<Duration>,
    open: impl Fn(Option<Duration>) -> neardup_index::Result<IndexWriter>,
) -> Result<IndexWriter> {
    match open(Some(Duration::ZERO)) {
        Err(neardup_index::Error::Locked { holder, .. }) if wait != Some(Duration::ZERO) => {
            to_stderr(&format!(
                "waiting for {}: another writer{} holds it (a `neardup serve` or an index command){}\n",
                index.display(),
                holder.map(|p| format!(", process {p},")).unwrap_or_default(),
                match wait {
                    Some(w) => format!("; giving up after {}", secs(w)),
                    None => "; --wait SECONDS gives up after that long".to_string(),
                }
            ));
            Ok(open(wait)?)
        }
        other => Ok(other?),
    }
}

/// Tells that a change was committed but the merge after it was not.
fn merge_warning(writer: &IndexWriter) {
    if let Some(why) = writer.merge_failure() {
        to_stderr(&format!(
            "warning: the change is committed, but merging segments after it failed ({why}); \
             the index is sound and the merge is tried again after the next change\n"
        ));
    }
}

fn ids_and_texts(docs: &[(DocId, String)]) -> Vec<(String, &str)> {
    docs.iter()
        .map(|(id, t)| (id.to_string(), t.as_str()))
        .collect()
}

/// "; 3 records skipped (2 empty, 1 bad-json)" for the summary.
fn skipped_note(docs: &Documents, empty: u64) -> String {
    let counts = docs.skip_counts(empty);
    let total: u64 = counts.values().sum();
    if total == 0 {
        return String::new();
    }
    let parts: Vec<String> = counts.iter().map(|(c, n)| format!("{n} {c}")).collect();
    format!(
        "; {} skipped ({})",
        crate::summary::count(total, "record", "records"),
        parts.join(", ")
    )
}

fn size_line(searcher: &Searcher) -> String {
    let s = searcher.stats();
    format!(
        "{} in {} segment{}, {} bytes on disk ({:.0} bytes per live document, {:.0} beyond the shingle sets)",
        documents(s.documents),
        s.segments,
        if s.segments == 1 { "" } else { "s" },
        thousands(s.bytes),
        s.bytes_per_document(),
        s.index_bytes_per_document()
    )
}

fn build(a: &IndexBuildSettings) -> Result<()> {
    let start = Instant::now();
    let config = &a.config;
    // An index that never committed a document (a build killed before its commit) is
    // built anew.
    if Searcher::open(&a.index).is_ok_and(|s| s.generation() > 0) {
        usage!(
            "{}: an index already exists here; add to it with `neardup index add`",
            a.index.display()
        );
    }
    let (docs, items) = read(&a.input, a.runtime.quiet, true)?;
    let mut writer = writer_waiting(&a.index, a.wait, |w| {
        IndexWriter::create_within(&a.index, config, w)
    })?;
    numbered_warning(docs.numbered());
    let report = writer.add(&ids_and_texts(&items))?;
    merge_warning(&writer);
    if report.superseded > 0 {
        to_stderr(&format!(
            "{} had an id that came again later in the input: the last one was kept\n",
            documents(report.superseded as u64)
        ));
    }
    if !a.runtime.quiet {
        let p = writer.searcher().params().clone();
        to_stderr(&format!(
            "indexed {} into {} in {}{}\n{}\nparameters: {} shingles, {} normalization, {} {} permutations, seed {}, {}\n",
            documents(report.added as u64),
            a.index.display(),
            secs(start.elapsed()),
            skipped_note(&docs, report.empty.len() as u64),
            size_line(writer.searcher()),
            p.shingle, p.normalization, p.num_perm, p.sketch, p.seed, plan_words(writer.searcher())
        ));
        common_warning(&report);
    }
    Ok(())
}

/// Warns when a containment index learned its common tokens from too few documents for a
/// 1 % share to mean anything: they are pinned, so later documents are signed with them.
fn common_warning(report: &neardup_index::AddReport) {
    let few = (16.0 / neardup::candidates::COMMON_TOKEN_SHARE) as u64;
    if let Some(n) = report.common_learned_from.filter(|&n| n < few) {
        to_stderr(&format!(
            "warning: the containment index learned its common tokens from {} distinct \
             documents (fewer than {}): they stay pinned, so build it from a representative \
             corpus for queries to stay fast\n",
            thousands(n),
            thousands(few)
        ));
    }
}

/// `index add`, with or without --dedup.
fn add(a: &IndexAddSettings) -> Result<()> {
    let start = Instant::now();
    refuse_output_in_index(&a.index, a.output.as_deref())?;
    let mut writer = open_writer(&a.index, a.wait)?;
    check_given(&a.index, writer.searcher().params(), &a.given)?;
    if a.dedup && writer.searcher().is_containment() {
        usage!(
            "{}: --dedup does not apply to a containment index: it answers which documents are \
             inside which (`neardup index query`), not which are new",
            a.index.display()
        );
    }
    let (docs, items) = read(&a.input, a.runtime.quiet, true)?;
    let numbered_count = docs.numbered();
    if numbered_count > 0 {
        let searcher = writer.searcher();
        let replacing = items
            .iter()
            .enumerate()
            .filter(|(d, (id, _))| {
                docs.is_numbered(*d as u32) && searcher.contains(&id.to_string())
            })
            .count() as u64;
        if replacing > 0 && !a.replace_numbered {
            usage!(
                "{}: {} without ids would replace indexed documents of the same line or record \
                 number ({} of them); give the input's ids (--id-field, --id-column, ID<TAB>TEXT \
                 lines, or a .jsonl/.csv name), or pass --replace-numbered if that is what you want",
                a.index.display(),
                documents(numbered_count),
                thousands(replacing)
            );
        }
        numbered_warning(numbered_count);
    }
    let pairs = ids_and_texts(&items);
    let (added, replaced, superseded, duplicates, empty) = if a.dedup {
        let batch = writer.judge_unique(&pairs)?;
        // The lines are written (to a temporary file, for a file) before the commit: if
        // they cannot be, nothing is added, and once the commit is made it stands.
        let mut out = open_output(a.output.as_deref(), &a.input.inputs)?;
        let mut counts = (0u64, 0u64, 0u64, 0u64, 0u64);
        let mut w = std::io::BufWriter::new(&mut out);
        for ((id, _), outcome) in items.iter().zip(batch.outcomes()) {
            match outcome {
                Outcome::Added { replaced } => {
                    counts.0 += 1;
                    counts.1 += u64::from(*replaced);
                }
                Outcome::Superseded => counts.2 += 1,
                Outcome::Duplicate { .. } => counts.3 += 1,
                Outcome::Empty => counts.4 += 1,
            }
            let line = OutcomeJson { id, outcome };
            serde_json::to_writer(&mut w, &line)?;
            w.write_all(b"\n")?;
        }
        w.flush()?;
        drop(w);
        out.flush()?;
        writer.commit_unique(batch)?;
        finish(out).context(
            "the documents were added (the commit is durable), but their lines could not be put in place",
        )?;
        counts
    } else {
        let r = writer.add(&pairs)?;
        if !a.runtime.quiet {
            common_warning(&r);
        }
        (
            r.added as u64,
            r.replaced as u64,
            r.superseded as u64,
            0,
            r.empty.len() as u64,
        )
    };
    merge_warning(&writer);
    if !a.runtime.quiet {
        let mut notes = vec![format!("{} replaced an indexed id", thousands(replaced))];
        if superseded > 0 {
            notes.push(format!(
                "{} not added: a later one had the same id",
                thousands(superseded)
            ));
        }
        if a.dedup {
            notes.push(format!(
                "{} near-duplicate{} not added",
                thousands(duplicates),
                if duplicates == 1 { "" } else { "s" }
            ));
        }
        to_stderr(&format!(
            "added {} ({}) in {}{}\n{}\n",
            documents(added),
            notes.join("; "),
            secs(start.elapsed()),
            skipped_note(&docs, empty),
            size_line(writer.searcher())
        ));
    }
    Ok(())
}

/// One line of `index query`: the id, then the answer's field (`"neighbours"`).
#[derive(Serialize)]
struct QueryLine<'a> {
    id: &'a DocId,
    #[serde(flatten)]
    answer: neardup_index::Answer<'a>,
}

fn query(a: &IndexQuerySettings) -> Result<()> {
    let start = Instant::now();
    let searcher = Searcher::open(&a.index)?;
    let built = searcher.params().threshold;
    check_given(&a.index, searcher.params(), &a.given)?;
    let mut q = Query::new().kind(a.kind);
    if let Some(t) = a.threshold {
        if !(t > 0.0 && t <= 1.0) || t < built {
            usage!("--threshold {t}: a query asks for a threshold in [{built}, 1], the index's or more (it was built for {built})");
        }
        q = q.threshold(t);
    }
    if let Some(k) = a.top {
        q = q.top(k);
    }
    refuse_output_in_index(&a.index, a.output.as_deref())?;
    let (docs, items) = read(&a.input, a.runtime.quiet, false)?;
    let mut out = open_output(a.output.as_deref(), &a.input.inputs)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut out);
    let mut answered = 0u64;
    let mut with_neighbours = 0u64;
    for chunk in items.chunks(QUERY_CHUNK) {
        let lines: Vec<Result<(Vec<u8>, bool)>> = chunk
            .par_iter()
            .map(|(id, text)| {
                let answer = searcher.answer(text, &q)?;
                let line = QueryLine { id, answer };
                let mut bytes = serde_json::to_vec(&line)?;
                bytes.push(b'\n');
                Ok((bytes, line.answer.found_any()))
            })
            .collect();
        for line in lines {
            let (bytes, any) = line?;
            w.write_all(&bytes)?;
            answered += 1;
            with_neighbours += u64::from(any);
        }
    }
    w.flush()?;
    drop(w);
    finish(out)?;
    if !a.runtime.quiet {
        let elapsed = start.elapsed();
        to_stderr(&format!(
            "answered {} queries in {} ({:.0} per second), {} with neighbours{}\n",
            thousands(answered),
            secs(elapsed),
            answered as f64 / elapsed.as_secs_f64().max(1e-9),
            thousands(with_neighbours),
            skipped_note(&docs, 0)
        ));
    }
    Ok(())
}

fn remove(a: &IndexRemoveSettings) -> Result<()> {
    let mut ids = a.ids.clone();
    if let Some(path) = &a.ids_file {
        let reader: Box<dyn BufRead> = if path == Path::new("-") {
            Box::new(std::io::stdin().lock())
        } else {
            let file = std::fs::File::open(path)
                .with_context(|| format!("{}: cannot open the list of ids", path.display()))?;
            Box::new(std::io::BufReader::new(file))
        };
        for (n, line) in reader.lines().enumerate() {
            let line =
                line.with_context(|| format!("{}:{}: cannot read", path.display(), n + 1))?;
            let id = line.strip_suffix('\r').unwrap_or(&line);
            if !id.is_empty() {
                ids.push(id.to_string());
            }
        }
    }
    let mut writer = open_writer(&a.index, a.wait)?;
    let report = writer.remove(&ids)?;
    merge_warning(&writer);
    if !a.quiet {
        let missing = match report.missing.first() {
            Some(first) => format!(
                "; {} not in the index (the first: {first:?})",
                thousands(report.missing.len() as u64)
            ),
            None => String::new(),
        };
        let repeated = match report.repeated {
            0 => String::new(),
            n => format!(
                "; {} asked for again, counted once",
                if n == 1 {
                    "1 id".to_string()
                } else {
                    format!("{} ids", thousands(n as u64))
                }
            ),
        };
        to_stderr(&format!(
            "removed {}{missing}{repeated}\n{}\n",
            documents(report.removed as u64),
            size_line(writer.searcher())
        ));
    }
    Ok(())
}

fn stats(a: &IndexStatsSettings) -> Result<()> {
    let searcher = Searcher::open(&a.index)?;
    let s = searcher.stats();
    let p = searcher.params();
    let text = if a.json {
        let out = neardup_index::StatsJson(&searcher);
        format!("{}\n", serde_json::to_string(&out)?)
    } else {
        format!(
            "documents        {} live, {} deleted (until compact)\n\
             segments         {}\n\
             shingle sets     {} distinct (copies in a segment share one)\n\
             size on disk     {} bytes: {:.0} per document, of which shingle sets {} bytes; {:.0} per document beyond them\n\
             commit           {}, format {}\n\
             parameters       {} shingles, {} normalization, max {} shingles, {} {} permutations, seed {}, {}\n",
            thousands(s.documents),
            thousands(s.deleted),
            s.segments,
            thousands(s.sets),
            thousands(s.bytes),
            s.bytes_per_document(),
            thousands(s.set_bytes),
            s.index_bytes_per_document(),
            s.generation,
            s.format,
            p.shingle,
            p.normalization,
            p.max_shingles,
            p.num_perm,
            p.sketch,
            p.seed,
            plan_words(&searcher)
        )
    };
    std::io::stdout().write_all(text.as_bytes())?;
    Ok(())
}

fn compact(a: &IndexCompactSettings) -> Result<()> {
    let start = Instant::now();
    let mut writer = open_writer(&a.index, a.wait)?;
    let before = writer.searcher().stats();
    writer.compact()?;
    to_stderr(&format!(
        "compacted {} segment{} and {} deleted in {}\n{}\n",
        before.segments,
        if before.segments == 1 { "" } else { "s" },
        documents(before.deleted),
        secs(start.elapsed()),
        size_line(writer.searcher())
    ));
    Ok(())
}

/// A damaged index: `check` found problems (exit code 3).
#[derive(Debug)]
pub struct Damaged(pub String);

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Damaged {}

fn check_cmd(a: &IndexCheckSettings) -> Result<()> {
    let report = check(&a.index)?;
    let mut text = String::new();
    for p in &report.problems {
        text.push_str(&format!("problem: {p}\n"));
    }
    for f in &report.unreferenced {
        text.push_str(&format!(
            "note: {f} is not part of the index (left by an interrupted commit; the next writer removes it)\n"
        ));
    }
    if report.is_ok() {
        text.push_str(&format!(
            "ok: {} documents in {} segment{}\n",
            thousands(report.documents),
            report.segments,
            if report.segments == 1 { "" } else { "s" }
        ));
        std::io::stdout().write_all(text.as_bytes())?;
        Ok(())
    } else {
        std::io::stdout().write_all(text.as_bytes())?;
        Err(Damaged(format!(
            "{}: {} problem{} found",
            a.index.display(),
            report.problems.len(),
            if report.problems.len() == 1 { "" } else { "s" }
        ))
        .into())
    }
}
