//! `dedup --unit` and `annotate --unit`: units (paragraphs, lines, sentence spans) seen
//! earlier in the corpus (in keep order, a reference first) removed from the documents
//! that repeat them (the core's `neardup::units`), in memory or spilled to disk over
//! `--memory`; the documents written back without them, or annotated with the removed
//! spans, in their own format (`units_write.rs`).
//!
//! In a JSON line only the text field's value is replaced (JSON-encoded anew), every other
//! byte of the line stays; `annotate` leaves the text as it is and adds a field of
//! `[start, end, duplicate_of]` byte ranges into the text.

use std::io::Write;
use std::ops::Range;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use neardup::units::{DocUnits, UnitDedup, UnitKind, UnitSpill, UnitStats};
use neardup::{Config, KeepPolicy, Method};
use neardup_io::documents::{DocId, Documents};
use neardup_io::Format;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::errors::{usage, BadRecord};
use crate::keep_by::KeepBy;
use crate::output::{finish, open_output};
use crate::progress::Bars;
use crate::settings::RunSettings;
use crate::spill::Spill;
use crate::summary::{count, secs, thousands, Summary};
use crate::units_write::{InMemory, Spilled, UnitDocs};

/// The unit options of `dedup` and `annotate`.
#[derive(Args, Debug, Clone)]
pub struct UnitArgs {
    /// Remove repeated units instead of whole documents: `paragraph` (text between
    /// blank lines), `line`, or `sentences:N` (spans of N sentences). A unit seen earlier
    /// (normalized as documents are, compared exactly) is removed from the later
    /// documents, "earlier" in the order of --keep or --keep-by (input order by default),
    /// a --reference before all; a document left without units is skipped. Spills to
    /// --tmp over --memory.
    #[arg(long, value_name = "UNIT")]
    pub unit: Option<UnitKind>,
    /// Remove units that are near-duplicates of an earlier unit at this Jaccard
    /// similarity (MinHash, LSH and exact verification, with the matching options),
    /// instead of equal ones.
    #[arg(long, value_name = "T", requires = "unit")]
    pub unit_threshold: Option<f64>,
    /// Leave units of fewer characters (once normalized) alone.
    #[arg(long, value_name = "N", requires = "unit", default_value_t = 0)]
    pub min_unit_chars: usize,
    /// Remove a unit's repeats only if it is seen more than K times in all.
    #[arg(long, value_name = "K", requires = "unit")]
    pub max_unit_count: Option<u64>,
}

/// The name of the field `annotate --unit` adds (after the prefix).
const SPANS_FIELD: &str = "removed_spans";

/// Runs `dedup --unit` (`annotate` false) or `annotate --unit`.
pub fn run(args: &RunSettings, units: &UnitArgs, annotate: Option<&str>) -> Result<()> {
    let started = Instant::now();
    let Some(kind) = units.unit else {
        usage!("--unit is missing")
    };
    refuse(args, annotate.is_some())?;
    crate::dedup_output::refuse_before_reading(args)?;
    let keep_by = args.keep_by.as_deref().map(KeepBy::parse).transpose()?;
    let near = near_config(args, units)?;
    let mut dedup = unit_dedup(args, units, kind, near.clone());
    let spill = spill_for(args, near.as_ref())?;
    let bars = Bars::new(args.runtime.quiet);
    let mut input = args.input.clone();
    input.keep_raw = true;
    input.key_field = keep_by.as_ref().map(|k| k.field.clone());
    let mut spilling = match &spill {
        Some(s) => Some(dedup.spill(s.options.clone())?),
        None => None,
    };
    let mut docs = read(&input, &bars, spilling.as_mut())?;
    let read_time = started.elapsed();
    let ranks = match &keep_by {
        Some(keep_by) => Some(crate::ready::keep_by_ranks(&mut docs, keep_by)?),
        None => None,
    };
    crate::units_write::refuse_inputs(&docs, args, kind, annotate.is_some())?;
    let match_start = Instant::now();
    let outcome;
    let (stats, changed, mut source): (UnitStats, u64, Box<dyn UnitDocs + '_>) = match spilling {
        None => {
            if let Some(ranks) = ranks {
                dedup = dedup.keep_ranks(ranks);
            }
            outcome = dedup.reference(docs.reference_docs()).run(&docs.texts)?;
            let changed = outcome
                .docs
                .iter()
                .filter(|d| !d.removed.is_empty() && !d.is_emptied())
                .count() as u64;
            let source = InMemory {
                texts: &docs.texts,
                outcome: &outcome,
            };
            (outcome.stats, changed, Box::new(source))
        }
        Some(mut spilling) => {
            if let Some(ranks) = ranks {
                spilling.set_keep_ranks(ranks);
            }
            spilling.set_reference(docs.reference_docs());
            let units = spilling.finish()?;
            let (stats, changed) = (units.stats(), units.changed());
            (stats, changed, Box::new(Spilled { units, next: 0 }))
        }
    };
    let match_time = match_start.elapsed();
    let write_start = Instant::now();
    let written = match annotate {
        None => crate::units_write::write_rewritten(&docs, &mut *source, args)?,
        Some(prefix) => write_spans(&docs, &mut *source, args, &format!("{prefix}{SPANS_FIELD}"))?,
    };
    let mut summary = Summary::default();
    if let Some(s) = &spill {
        summary.line("memory", &s.line);
    }
    summary.line(
        "read",
        format!(
            "{} from {} in {}",
            count(docs.read_count(), "record", "records"),
            count(docs.inputs.len() as u64, "input", "inputs"),
            secs(read_time)
        ),
    );
    summary.line(
        "units",
        format!(
            "{} read ({kind}), {} removed ({} of text), {} shorter than --min-unit-chars left alone, in {}",
            thousands(stats.units),
            thousands(stats.removed),
            count(stats.bytes_removed, "byte", "bytes"),
            thousands(stats.short),
            secs(match_time)
        ),
    );
    summary.line("write", secs(write_start.elapsed()));
    summary.line(
        "result",
        result_line(&docs, stats.emptied, changed, written, annotate.is_some())?,
    );
    for w in &docs.warnings {
        summary.warning(w);
    }
    summary.line("total", secs(started.elapsed()));
    summary.print(args.runtime.quiet);
    Ok(())
}

/// Documents handed from reading to a spilled run at a time: few, so that a batch of
/// long documents stays small beside the limit.
const READ_BATCH: usize = 256;

/// Reads every input: the texts held (in memory), or handed on to `spilling`.
fn read(
    input: &neardup_io::documents::InputOptions,
    bars: &Bars,
    spilling: Option<&mut UnitSpill>,
) -> Result<Documents> {
    let Some(spilling) = spilling else {
        return crate::ready::read_all(input, bars);
    };
    bars.spinner("read");
    let docs = Documents::read_batches(
        input,
        READ_BATCH,
        || bars.tick(),
        |batch| spilling.add(&batch).map_err(anyhow::Error::from),
    )?;
    bars.done();
    Ok(docs)
}

/// The spill of a unit run whose input is predicted not to fit in `--memory` (as
/// dedup predicts it); in near mode, with dedup's refusals of what does not spill (its
/// units are the documents of a spilled pipeline run).
fn spill_for(args: &RunSettings, near: Option<&Config>) -> Result<Option<Spill>> {
    if let Some(config) = near {
        return crate::spill::decide(args, config);
    }
    let Some(over) = crate::spill::over_limit_of(args) else {
        return Ok(None);
    };
    crate::spill::spill_at(args, over).map(Some)
}

/// The accounts: every record read is kept, or skipped with its reason (no document is
/// removed whole by a unit run): `read N = kept K + removed 0 + skipped S`, S counting the
/// documents left empty (dedup; annotate writes them) and the readers' skips; the
/// reference's records are counted apart. An error if the records written are not the
/// records counted as kept.
fn result_line(
    docs: &Documents,
    emptied: u64,
    changed: u64,
    written: u64,
    annotate: bool,
) -> Result<String> {
    let (empty, accounts) = if annotate {
        ("every unit a repeat, annotated", docs.accounts(0, 0))
    } else {
        ("left empty, skipped", docs.accounts(0, emptied))
    };
    if written != accounts.kept {
        anyhow::bail!(
            "--unit wrote {written} records but counts {} as kept",
            accounts.kept
        );
    }
    let mut line = format!(
        "{} with units removed, {} {empty} | read {} = kept {} + removed 0 + skipped {}",
        count(changed, "document", "documents"),
        thousands(emptied),
        thousands(accounts.read),
        thousands(accounts.kept),
        thousands(accounts.skipped),
    );
    if docs.reference_docs() > 0 || docs.reference_read() > 0 {
        line += &format!(
            " | reference: {}, never written",
            count(docs.reference_read(), "record", "records")
        );
    }
    Ok(line)
}

/// The core's unit run for the command line's options (near mode with `near`).
fn unit_dedup(
    args: &RunSettings,
    units: &UnitArgs,
    kind: UnitKind,
    near: Option<Config>,
) -> UnitDedup {
    let mut dedup = UnitDedup::new(kind)
        .normalization(args.matching.normalize)
        .min_unit_chars(units.min_unit_chars)
        .keep(args.keep.unwrap_or_default());
    if let Some(k) = units.max_unit_count {
        dedup = dedup.max_unit_count(k);
    }
    if let Some(config) = near {
        dedup = dedup.near(config);
    }
    dedup
}

/// Near mode's configuration (`--unit-threshold` and the matching options), keeping
/// first: the units enter in keep order.
fn near_config(args: &RunSettings, units: &UnitArgs) -> Result<Option<Config>> {
    let Some(t) = units.unit_threshold else {
        return Ok(None);
    };
    let config = crate::run::builder(&args.matching, args.verify, KeepPolicy::First)?
        .threshold(t)
        .build()?;
    Ok(Some(config))
}

/// Refuses what a unit run does not do.
fn refuse(args: &RunSettings, annotate: bool) -> Result<()> {
    let given = [
        ("--drop-all", args.drop_all),
        ("--allow-truncated", args.allow_truncated),
        ("--removed", args.removed.is_some()),
        ("--report", args.report.is_some()),
        ("--skipped", args.skipped.is_some()),
        ("--exact", args.method == Method::Exact || args.exact),
        ("--cluster-size-field", !annotate && args.annotate.is_some()),
        ("--compression or --row-group-size", args.parquet.is_some()),
    ];
    if let Some((flag, _)) = given.iter().find(|(_, on)| *on) {
        usage!("{flag} does not apply to --unit: a unit run removes units, not documents, and writes them as they are rewritten");
    }
    Ok(())
}

/// `annotate --unit`: every non-reference document with its removed spans added in a
/// field or column `field`, in its input's format; returns how many were written.
fn write_spans(
    docs: &Documents,
    source: &mut dyn UnitDocs,
    args: &RunSettings,
    field: &str,
) -> Result<u64> {
    let spans = |units: &DocUnits| spans_json(docs, units);
    let format = docs.inputs.get(docs.reference_inputs()).map(|i| i.format);
    if format == Some(Format::Parquet) {
        return crate::units_write::write_parquet(docs, source, args, Some((field, &spans)));
    }
    let mut out = open_output(args.output.as_deref(), &args.input.inputs)?;
    let written = match format {
        Some(Format::Csv | Format::Tsv) => {
            crate::units_write::annotate_delimited(docs, args, field, source, &spans, &mut out)?
        }
        _ => write_annotated(docs, source, field, args.force, &mut out)?,
    };
    finish(out)?;
    Ok(written)
}

/// The JSON object `line` (a BOM before it kept, no line end after it) with the value of
/// its text field `field` replaced by `text`, every other byte kept; `None` if it is not
/// one JSON object in UTF-8 with that field.
pub fn replace_json_field(line: &[u8], field: &str, text: &str) -> Option<Vec<u8>> {
    let body = body(line);
    let spans = field_spans(&line[body.clone()], &[field])?;
    let span = spans[0].clone()?;
    let encoded = serde_json::to_string(text).ok()?;
    let at = body.start;
    Some(
        [
            &line[..at + span.start],
            encoded.as_bytes(),
            &line[at + span.end..],
        ]
        .concat(),
    )
}

/// Writes every document with the field of its removed spans added (or replaced, with
/// `force`); returns how many were written.
fn write_annotated(
    docs: &Documents,
    source: &mut dyn UnitDocs,
    field: &str,
    force: bool,
    out: &mut impl Write,
) -> Result<u64> {
    let mut raw = docs.raw_reader()?;
    let reference = docs.reference_docs();
    for doc in reference..docs.len() as u32 {
        let line = raw.read(doc)?;
        let value = spans_json(docs, &source.doc(doc)?.1)?;
        let body = body(line);
        let found =
            field_spans(&line[body.clone()], &[field]).ok_or_else(|| not_an_object(docs, doc))?;
        let at = body.start;
        match &found[0] {
            Some(existing) if force => {
                out.write_all(&line[..at + existing.start])?;
                out.write_all(value.as_bytes())?;
                out.write_all(&line[at + existing.end..])?;
            }
            Some(_) => {
                let place = docs.place(doc);
                return Err(BadRecord(format!(
                    "{}:{}: the record already has a field {field:?}; --annotate-prefix \
                     names the new one apart, --force replaces it",
                    docs.source_of(doc),
                    place.line
                ))
                .into());
            }
            None => {
                // Before the closing brace, the whitespace before it kept where it was.
                let close = at + line[body].iter().rposition(|&b| b == b'}').unwrap_or(0);
                out.write_all(&line[..close])?;
                write!(out, ",\"{}\":{value}", field.replace('"', "\\\""))?;
                out.write_all(&line[close..])?;
            }
        }
    }
    Ok(u64::from(docs.len() as u32 - reference))
}

/// `[[start, end, duplicate_of], ...]`, the duplicate named by its record's id.
fn spans_json(docs: &Documents, units: &DocUnits) -> Result<String> {
    let spans: Vec<(usize, usize, DocId)> = units
        .removed
        .iter()
        .map(|r| (r.span.start, r.span.end, docs.id(r.duplicate_of.doc)))
        .collect();
    Ok(serde_json::to_string(&spans)?)
}

fn not_an_object(docs: &Documents, doc: u32) -> anyhow::Error {
    let place = docs.place(doc);
    BadRecord(format!(
        "{}:{}: the record cannot be rewritten: not one JSON object in UTF-8",
        docs.source_of(doc),
        place.line
    ))
    .into()
}

/// The JSON object of a line: without a BOM before it and the line end after it.
fn body(line: &[u8]) -> Range<usize> {
    let start = if line.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let mut end = line.len();
    while end > start && matches!(line[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    start..end
}

/// The byte range of the value of each of `names` among the top-level fields of the JSON
/// object `body` (the last, if a name occurs twice, as the reader takes it); `None` if
/// `body` is not one JSON object in UTF-8.
fn field_spans(body: &[u8], names: &[&str]) -> Option<Vec<Option<Range<usize>>>> {
    struct Fields<'n>(&'n [&'n str]);
    impl<'de> Visitor<'de> for Fields<'_> {
        type Value = Vec<Option<&'de RawValue>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found = vec![None; self.0.len()];
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                match self.0.iter().position(|n| *n == key) {
                    Some(i) => found[i] = Some(map.next_value::<&RawValue>()?),
                    None => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(found)
        }
    }
    let text = std::str::from_utf8(body).ok()?;
    let mut de = serde_json::Deserializer::from_str(text);
    let found = serde::Deserializer::deserialize_map(&mut de, Fields(names)).ok()?;
    de.end().ok()?;
    let base = text.as_ptr() as usize;
    Some(
        found
            .into_iter()
            .map(|raw| {
                raw.map(|raw| {
                    let start = raw.get().as_ptr() as usize - base;
                    start..start + raw.get().len()
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_spans_find_the_last_value_of_each_name() {
        let line = br#"{"text": "a\nb", "id": 3, "text":"c", "x": {"text": 1}}"#;
        let spans = field_spans(line, &["text", "id", "none"]).unwrap();
        assert_eq!(&line[spans[0].clone().unwrap()], br#""c""#);
        assert_eq!(&line[spans[1].clone().unwrap()], b"3");
        assert_eq!(spans[2], None);
        assert_eq!(field_spans(b"[1]", &["text"]), None);
        assert_eq!(field_spans(b"{\"a\":1} x", &["text"]), None);
    }

    #[test]
    fn the_body_leaves_out_a_bom_and_the_line_end() {
        assert_eq!(body(b"\xEF\xBB\xBF{}\r\n"), 3..5);
        assert_eq!(body(b"{}"), 0..2);
    }
}
