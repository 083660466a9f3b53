//! `sim A B`: how similar two texts are, exactly and as estimated.

use std::path::Path;

use anyhow::{Context, Result};
use neardup::candidates::{hamming, simhash};
use neardup::sketch::{ClassicMinHash, Sketch};
use neardup::verify::{
    estimate, estimate_std_dev, intersection_size, jaccard_from_counts, meets_threshold,
};
use neardup::{Config, KeepPolicy, Verification};
use serde_json::json;

use crate::errors::usage;
use crate::run::config;
use crate::settings::SimSettings;

/// File extensions that make an argument a file name rather than a text.
const FILE_EXTENSIONS: [&str; 14] = [
    "txt", "text", "md", "json", "jsonl", "ndjson", "csv", "tsv", "tab", "html", "htm", "xml",
    "gz", "log",
];

/// A file's content if `arg` names a file, else `arg` itself. An argument that looks like
/// a path (it has a `/`, or ends in a file extension) but names no file is an error, so a
/// typo in a file name is not compared as text.
fn text_of(arg: &str, force_text: bool) -> Result<String> {
    let path = Path::new(arg);
    if force_text {
        return Ok(arg.to_string());
    }
    if path.is_file() {
        let bytes = std::fs::read(path).with_context(|| format!("cannot read {arg}"))?;
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    if path.is_dir() {
        usage!("{arg} is a directory; sim compares two texts or two files (--text to compare the words themselves)");
    }
    if looks_like_path(arg) {
        usage!("no file {arg}; to compare it as text, add --text");
    }
    Ok(arg.to_string())
}

/// True for an argument with a `/` or a short file extension and no space.
fn looks_like_path(arg: &str) -> bool {
    if arg.contains(char::is_whitespace) || arg.contains('\n') {
        return false;
    }
    arg.contains('/')
        || arg.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty() && FILE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
        })
}

/// sim's configuration, resolved right after parsing (`main.rs`), with the options it
/// takes but cannot use refused: before either file is read.
pub fn resolve(args: &SimSettings) -> Result<Config> {
    // The estimate always comes from the classic sketch of the two whole sets, and there
    // is no corpus to look beyond the buckets of.
    if args.matching.sketch.is_some_and(|s| s.is_minhash()) {
        usage!(
            "--sketch {} does not apply to sim: its estimate is the classic MinHash of the two sets (--sketch simhash asks whether SimHash makes them candidates)",
            args.matching.sketch.map(|s| s.name()).unwrap_or_default()
        );
    }
    if args.matching.no_neighbours {
        usage!("--no-neighbours does not apply to sim: it compares two texts, not a corpus");
    }
    if args.matching.memory.is_some() {
        usage!("--memory does not apply to sim: it compares two texts, not a corpus");
    }
    config(&args.matching, Verification::Exact, KeepPolicy::First)
}

pub fn run(args: &SimSettings, config: &Config) -> Result<String> {
    let (a, b) = (text_of(&args.a, args.text)?, text_of(&args.b, args.text)?);
    let sh = config.shingler();
    let (sa, sb) = (sh.shingle_set(&a), sh.shingle_set(&b));
    let shared = intersection_size(&sa, &sb);
    let j = jaccard_from_counts(shared, sa.len(), sb.len());
    let sketch = ClassicMinHash::new(config.num_perm(), config.seed())?;
    let e = if sa.is_empty() || sb.is_empty() {
        0.0
    } else {
        estimate(&sketch.sketch(&sa), &sketch.sketch(&sb))
    };
    let sd = estimate_std_dev(j, config.num_perm());
    let similar = meets_threshold(j, config.tested_threshold());
    // The SimHash of each text, its shingles weighed by their counts as a run weighs them.
    let fingerprint = |text: &str| {
        let mut hashes = Vec::new();
        sh.hashes_into(text, &mut hashes);
        hashes.sort_unstable();
        simhash(&hashes, config.seed())
    };
    let distance = hamming(fingerprint(&a), fingerprint(&b));
    // Containment of the smaller in the larger (the lower argument on equal sizes).
    let (small, large) = if neardup::candidates::is_smaller(sa.len(), 0, sb.len(), 1) {
        (&sa, &sb)
    } else {
        (&sb, &sa)
    };
    let containment = if small.is_empty() {
        0.0
    } else {
        shared as f64 / small.len() as f64
    };
    let by_containment = config.measure().from_smaller();
    let similar = if by_containment {
        meets_threshold(containment, config.tested_threshold())
    } else {
        similar
    };
    let simhash_run = !config.sketch().is_minhash();
    let p = if by_containment {
        let plan = neardup::candidates::EnsemblePlan::new(config.threshold(), config.num_perm());
        plan.probability(
            small.len(),
            neardup::candidates::EnsemblePlan::partition(large.len()),
            j,
        )
    } else {
        config.candidate_curve().probability(j)
    };
    let candidates = if by_containment {
        format!("the containment search makes such a pair a candidate with probability {p:.3}")
    } else if simhash_run {
        let k = config.hamming();
        let yes = if distance <= k { "yes" } else { "no" };
        format!("SimHash within {k} bits makes them candidates: {yes}")
    } else {
        format!("LSH makes such a pair a candidate with probability {p:.3}")
    };
    Ok(if args.json {
        json!({
            "jaccard": j, "estimate": e, "shingles_a": sa.len(), "shingles_b": sb.len(),
            "shared": shared, "similar": similar, "candidate_probability": p,
            "hamming": distance, "containment": containment,
        })
        .to_string()
            + "\n"
    } else {
        format!(
            "jaccard   {j:.4} ({shared} shared of {} distinct {} shingles; A has {}, B has {})\n\
             estimate  {e:.4} (K = {}, standard deviation {sd:.4})\n\
             contained {containment:.4} of the smaller text's shingles are in the other's\n\
             simhash   {distance} of 64 bits apart (seed {})\n\
             verdict   {} at threshold {}; {candidates}\n",
            sa.len() + sb.len() - shared,
            sh.kind(),
            sa.len(),
            sb.len(),
            config.num_perm(),
            config.seed(),
            if similar {
                "near-duplicates"
            } else {
                "not near-duplicates"
            },
            config.threshold(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::looks_like_path;

    #[test]
    fn paths_are_told_from_texts() {
        assert!(looks_like_path("data/a.txt"));
        assert!(looks_like_path("a.TXT"));
        assert!(looks_like_path("./a"));
        assert!(looks_like_path("review.jsonl.gz"));
        assert!(!looks_like_path("the cat sat on the mat."));
        assert!(!looks_like_path("hello"));
        assert!(!looks_like_path("version 1.2"));
        assert!(!looks_like_path(".txt"));
        assert!(!looks_like_path("and/or with spaces"));
    }
}
