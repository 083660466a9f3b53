//! The run's summary on stderr: the plan before the run, counts and timings after it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use neardup::{Config, ShingleKind, Stats};

/// Similarities at which the plan shows the S-curve.
pub const CURVE_POINTS: [f64; 7] = [0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95];

/// Groups digits by thousands: 1234567 → "1,234,567" (the report's formatting).
pub use neardup_report::html::thousands;

/// `n` and the noun that fits it, digits grouped: `count(1, "pair", "pairs")` is
/// "1 pair", `count(1200, "pair", "pairs")` "1,200 pairs". Every message with a number
/// names its unit through this.
pub fn count(n: u64, singular: &str, plural: &str) -> String {
    format!(
        "{} {}",
        thousands(n),
        if n == 1 { singular } else { plural }
    )
}

/// Writes to stderr, ignoring failure: the summary and messages are for a person, and a
/// closed or full stderr (`2>/dev/full`, `2>&1 | head -1`) must neither panic nor change
/// the exit code, which reports the main output only.
pub fn to_stderr(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Seconds with a precision that suits the magnitude.
pub fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 10.0 {
        format!("{s:.3}s")
    } else {
        format!("{s:.1}s")
    }
}

/// The plan: what will be compared, how, and what LSH is expected to find.
pub fn plan(config: &Config, exact: bool) -> String {
    let sh = config.shingler();
    let mut out = format!(
        "plan      {} shingles (normalization {}), threshold {}, ",
        sh.kind(),
        sh.normalization_level(),
        config.threshold(),
    );
    if config.measure().from_smaller() {
        if exact {
            out.push_str(
                "containment of the smaller document, exact containment join (recall 1)\n",
            );
        } else {
            let _ = writeln!(
                out,
                "containment of the smaller document, LSH Ensemble: {} sketch, {} permutations \
                 (seed {}), size partitions of powers of two, rows per band (1, 2, 4 or 8) \
                 chosen per query size and partition, verify exact",
                config.sketch(),
                config.num_perm(),
                config.seed()
            );
        }
        return out;
    }
    if exact {
        out.push_str("exact set-similarity join (no LSH, recall 1)\n");
        return out;
    }
    if !config.sketch().is_minhash() {
        let k = config.hamming();
        let _ = writeln!(
            out,
            "simhash sketch, 64-bit fingerprints (seed {}), candidates within {k} bits by permuted tables, verify {}",
            config.seed(),
            config.verification()
        );
        out.push_str("S-curve   P(candidate | s), sets of equal size:");
        for (s, at_t) in crate::plan::with_threshold(&CURVE_POINTS, config.threshold()) {
            let mark = if at_t { "*" } else { "" };
            let _ = write!(
                out,
                "  {s}{mark}: {:.3}",
                neardup::candidates::simhash_probability(s, k)
            );
        }
        out.push('\n');
        return out;
    }
    let p = config.plan();
    let _ = writeln!(
        out,
        "{} sketch, {} permutations (seed {}), {} bands x {} rows, verify {}",
        config.sketch(),
        config.num_perm(),
        config.seed(),
        p.bands(),
        p.rows(),
        config.verification()
    );
    out.push_str("S-curve   P(candidate | s):");
    for (s, at_t) in crate::plan::with_threshold(&CURVE_POINTS, config.threshold()) {
        let mark = if at_t { "*" } else { "" };
        let _ = write!(out, "  {s}{mark}: {:.3}", p.probability(s));
    }
    out.push('\n');
    out
}

/// A warning when most non-empty documents have fewer than K tokens: each of them is one
/// shingle, which matches only exact copies, so near-duplicates among them go unseen.
pub fn short_documents_warning(kind: ShingleKind, short: u64, documents: u64) -> Option<String> {
    if short == 0 || short * 2 <= documents {
        return None;
    }
    let (k, unit, smaller) = match kind {
        ShingleKind::Word(k) => (k, "words", ShingleKind::Word(k.saturating_sub(1).max(1))),
        ShingleKind::Char(k) => (
            k,
            "characters",
            ShingleKind::Char(k.saturating_sub(1).max(1)),
        ),
    };
    let hint = match kind {
        ShingleKind::Word(k) if k > 1 => {
            format!("use a smaller K (--shingle {smaller}) or char shingles")
        }
        ShingleKind::Word(_) => "use char shingles".to_string(),
        ShingleKind::Char(_) => format!("use a smaller K (--shingle {smaller})"),
    };
    Some(format!(
        "{} of {} {} fewer than {k} {unit}: each is a single shingle and matches only exact \
         copies; {hint}",
        thousands(short),
        count(documents, "document", "documents"),
        if short == 1 { "has" } else { "have" },
    ))
}

/// The label of the summary's warnings.
const WARNING: &str = "warning";

/// Lines of the summary, built up stage by stage.
#[derive(Default)]
pub struct Summary {
    lines: Vec<(String, String)>,
}

impl Summary {
    pub fn line(&mut self, label: &str, text: impl Into<String>) {
        self.lines.push((label.to_string(), text.into()));
    }

    /// A warning about the data, which [`Summary::print`] prints even under `--quiet`.
    pub fn warning(&mut self, text: impl Into<String>) {
        self.line(WARNING, text);
    }

    /// Prints the summary on stderr; under `quiet` only its warnings, each as
    /// `warning: ...`: a quiet run hides progress and counts, never what is wrong with
    /// the data (documents that will replace others, ids of mixed kinds, a format told
    /// from the content that does not fit).
    pub fn print(&self, quiet: bool) {
        if quiet {
            to_stderr(&self.warnings());
        } else {
            to_stderr(&self.render());
        }
    }

    /// The warnings alone, one `warning: ...` line each.
    pub fn warnings(&self) -> String {
        let mut out = String::new();
        for (_, text) in self.lines.iter().filter(|(label, _)| label == WARNING) {
            let _ = writeln!(out, "warning: {text}");
        }
        out
    }

    /// Standard lines for read counts and the pipeline's stages.
    pub fn stages(
        &mut self,
        read: u64,
        inputs: usize,
        read_time: Duration,
        skipped: &BTreeMap<&str, u64>,
        lossy: u64,
        stats: &Stats,
    ) {
        self.line(
            "read",
            format!(
                "{} from {} in {}{}",
                count(read, "record", "records"),
                count(inputs as u64, "input", "inputs"),
                secs(read_time),
                if lossy > 0 {
                    format!(
                        " ({} with invalid UTF-8, decoded lossily)",
                        thousands(lossy)
                    )
                } else {
                    String::new()
                }
            ),
        );
        let total: u64 = skipped.values().sum();
        if total > 0 {
            let why: Vec<String> = skipped
                .iter()
                .map(|(k, v)| format!("{k} {}", thousands(*v)))
                .collect();
            self.line(
                "skipped",
                format!("{} ({})", thousands(total), why.join(", ")),
            );
        }
        for (stage, time) in &stats.timings {
            let what = match stage {
                neardup::run::Stage::Shingle => count(stats.shingles, "shingle", "shingles"),
                neardup::run::Stage::Sketch => "signatures".to_string(),
                neardup::run::Stage::Group if stats.skipped_buckets > 0 => format!(
                    "{} of 2+ (largest {}; {} of more than {} passed over)",
                    count(stats.buckets, "bucket", "buckets"),
                    thousands(stats.largest_bucket),
                    count(stats.skipped_buckets, "one-row bucket", "one-row buckets"),
                    thousands(neardup::candidates::MAX_ONE_ROW_BUCKET as u64)
                ),
                neardup::run::Stage::Group => format!(
                    "{} of 2+ (largest {})",
                    count(stats.buckets, "bucket", "buckets"),
                    thousands(stats.largest_bucket)
                ),
                neardup::run::Stage::Verify => verify_line(stats),
                neardup::run::Stage::ExactJoin => format!(
                    "{}, {} verified",
                    count(stats.candidates, "candidate", "candidates"),
                    thousands(stats.verified)
                ),
                neardup::run::Stage::Cluster => String::new(),
            };
            let sep = if what.is_empty() { "" } else { " in " };
            self.line(stage.name(), format!("{what}{sep}{}", secs(*time)));
            if *stage == neardup::run::Stage::Shingle && stats.truncated > 0 {
                self.line(
                    "truncated",
                    format!(
                        "{}, {} reported by estimate (longer than --max-shingles: no \
                         exact Jaccard; they remove nothing without --allow-truncated)",
                        count(stats.truncated, "document", "documents"),
                        count(stats.truncated_pairs, "pair", "pairs")
                    ),
                );
            }
            if *stage == neardup::run::Stage::Shingle {
                self.line(
                    "identical",
                    format!(
                        "{} with the same shingles as an earlier one (its duplicates, no \
                         LSH needed)",
                        count(stats.identical, "document", "documents")
                    ),
                );
            }
        }
    }

    /// A `warning` line when most documents are shorter than K tokens.
    pub fn short_documents(&mut self, kind: ShingleKind, stats: &Stats) {
        let documents = stats.documents - stats.empty;
        if let Some(w) = short_documents_warning(kind, stats.short_documents, documents) {
            self.warning(w);
        }
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        for (label, text) in &self.lines {
            let _ = writeln!(out, "{label:<9} {text}");
        }
        out
    }
}

/// A predicted CPU time, to three figures: `1.23 s`, `45.6 ms`, `789 µs`.
fn cpu_time(secs: f64) -> String {
    let (value, unit) = if secs >= 1.0 {
        (secs, "s")
    } else if secs >= 1e-3 {
        (secs * 1e3, "ms")
    } else {
        (secs * 1e6, "µs")
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

/// What `--method auto` chose and why: the chosen method, its predicted CPU time and
/// the other's, and the sample they were predicted from.
pub fn method_choice(c: &neardup::run::MethodChoice) -> String {
    let exact = c.method == neardup::Method::Exact;
    let (chosen, mine, other, theirs) = if exact {
        ("the exact join", c.exact_secs, "LSH", c.lsh_secs)
    } else {
        ("LSH", c.lsh_secs, "the exact join", c.exact_secs)
    };
    if c.sample == 0 {
        return format!("{chosen} (auto: no text to compare)");
    }
    let bound = if c.exact_is_bound { "at least " } else { "" };
    let texts = if c.sample == 1 { "text" } else { "texts" };
    format!(
        "{chosen} (auto: predicted {} of CPU against {bound}{} for {other}, from a sample of \
         {} distinct {texts})",
        cpu_time(mine),
        cpu_time(theirs),
        thousands(c.sample as u64)
    )
}

/// The verify stage's line: candidates and verified, with the candidates the prefilter
/// rejected and those found beyond the buckets when there are any.
fn verify_line(stats: &neardup::Stats) -> String {
    let mut line = format!(
        "{}, {} verified",
        count(stats.candidates, "candidate", "candidates"),
        thousands(stats.verified)
    );
    if stats.prefiltered > 0 {
        line += &format!(
            " ({} rejected by the 1-bit prefilter)",
            thousands(stats.prefiltered)
        );
    }
    if stats.neighbour_candidates + stats.large_group_candidates > 0 {
        line += &format!(
            " (beyond the buckets: {} with large groups of copies, {} verified; {} through a \
             shared neighbour, {} verified)",
            thousands(stats.large_group_candidates),
            thousands(stats.large_group_verified),
            thousands(stats.neighbour_candidates),
            thousands(stats.neighbour_verified)
        );
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_documents_are_warned_about_when_most_are() {
        assert_eq!(short_documents_warning(ShingleKind::Word(3), 5, 10), None);
        assert_eq!(short_documents_warning(ShingleKind::Word(3), 0, 0), None);
        assert_eq!(
            short_documents_warning(ShingleKind::Word(3), 6, 10).unwrap(),
            "6 of 10 documents have fewer than 3 words: each is a single shingle and \
             matches only exact copies; use a smaller K (--shingle word:2) or char shingles"
        );
        assert!(short_documents_warning(ShingleKind::Char(5), 2, 3)
            .unwrap()
            .contains("fewer than 5 characters"));
    }

    #[test]
    fn counts_name_their_unit_in_the_singular_for_one() {
        assert_eq!(count(1, "pair", "pairs"), "1 pair");
        assert_eq!(count(0, "pair", "pairs"), "0 pairs");
        assert_eq!(count(2, "document", "documents"), "2 documents");
        assert_eq!(count(1_000, "record", "records"), "1,000 records");
        let stats = Stats {
            shingles: 1,
            identical: 1,
            timings: vec![(neardup::run::Stage::Shingle, Duration::ZERO)],
            ..Stats::default()
        };
        let mut s = Summary::default();
        s.stages(1, 1, Duration::ZERO, &BTreeMap::new(), 0, &stats);
        assert_eq!(
            s.render(),
            "read      1 record from 1 input in 0.000s\n\
             shingle   1 shingle in 0.000s\n\
             identical 1 document with the same shingles as an earlier one (its duplicates, \
             no LSH needed)\n"
        );
    }

    #[test]
    fn quiet_keeps_the_warnings() {
        let mut s = Summary::default();
        s.line("read", "2 records");
        s.warning("1 of 2 records of x.jsonl have no id field \"id\"");
        assert_eq!(
            s.warnings(),
            "warning: 1 of 2 records of x.jsonl have no id field \"id\"\n"
        );
        assert!(s.render().contains("read      2 records\n"));
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
