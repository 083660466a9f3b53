//! `sim A B`: how similar two texts are, exactly and as estimated.

use std::path::Path;

use anyhow::{Context, Result};
use neardup::sketch::Sketch;
use neardup::verify::{estimate, intersection_size, jaccard_from_counts};
use neardup::ClassicMinHash;
use serde_json::json;

use crate::args::{KeepArg, SimArgs, VerifyArg};
use crate::run::config;

/// A file's content if `arg` names a file, else `arg` itself.
fn text_of(arg: &str) -> Result<String> {
    let path = Path::new(arg);
    if path.is_file() {
        let bytes = std::fs::read(path).with_context(|| format!("cannot read {arg}"))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    } else {
        Ok(arg.to_string())
    }
}

pub fn run(args: &SimArgs) -> Result<String> {
    let config = config(&args.matching, VerifyArg::Exact, KeepArg::First)?;
    let (a, b) = (text_of(&args.a)?, text_of(&args.b)?);
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
    let k = config.num_perm() as f64;
    let sd = (j * (1.0 - j) / k).sqrt();
    let similar = j >= config.threshold();
    let p = config.plan().probability(j);
    Ok(if args.json {
        json!({
            "jaccard": j, "estimate": e, "shingles_a": sa.len(), "shingles_b": sb.len(),
            "shared": shared, "similar": similar, "candidate_probability": p,
        })
        .to_string()
            + "\n"
    } else {
        format!(
            "jaccard   {j:.4} ({shared} shared of {} distinct {} shingles; A has {}, B has {})\n\
             estimate  {e:.4} (K = {}, standard deviation {sd:.4})\n\
             verdict   {} at threshold {}; LSH makes such a pair a candidate with probability {p:.3}\n",
            sa.len() + sb.len() - shared,
            sh.kind(),
            sa.len(),
            sb.len(),
            config.num_perm(),
            if similar { "near-duplicates" } else { "not near-duplicates" },
            config.threshold(),
        )
    })
}
