//! `neardup plan` and the memory check of a run, as text: the S-curves of band plans as a
//! table and an SVG chart, and a sample's [`Estimate`] as lines. The numbers come from the
//! core's `neardup::measure::plan`.

use std::fmt::Write as _;

use neardup::measure::plan::{Estimate, NamedPlan, Plan};
use neardup_report::charts::{self, CurvePlan};
use neardup_report::html::{seconds, thousands};
use neardup_report::svg;

/// Similarities of the text table (the threshold is added).
const TABLE_POINTS: [f64; 10] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];

/// The S-curves of `plans` side by side as a text table: P(candidate | s) for s = 0.1 … 1.0
/// and the threshold (marked `*`), then the recall at t, the recall over [t, 1] and the
/// false-positive and false-negative areas.
pub fn curve_table(plans: &[NamedPlan], t: f64) -> String {
    let heads: Vec<String> = plans
        .iter()
        .map(|p| format!("{} ({})", p.plan.label(), p.name))
        .collect();
    let widths: Vec<usize> = heads.iter().map(|h| h.chars().count().max(7)).collect();
    let first = 22;
    let mut out = String::new();
    let _ = write!(out, "{:<first$}", "similarity s");
    for (h, w) in heads.iter().zip(&widths) {
        let _ = write!(out, "  {h:>w$}");
    }
    out.push('\n');
    let row = |out: &mut String, label: String, f: &dyn Fn(&Plan) -> f64| {
        let _ = write!(out, "{label:<first$}");
        for (p, w) in plans.iter().zip(&widths) {
            let _ = write!(out, "  {:>w$.3}", f(&p.plan));
        }
        out.push('\n');
    };
    for (s, at_t) in with_threshold(&TABLE_POINTS, t) {
        let mark = if at_t { " *" } else { "" };
        row(&mut out, format!("{s:.2}{mark}"), &|p| p.probability(s));
    }
    row(&mut out, format!("recall at t = {t}"), &|p| p.recall_at(t));
    row(&mut out, format!("recall over [{t}, 1]"), &|p| {
        p.recall_above(t)
    });
    row(&mut out, "FP area ∫₀ᵗ P".to_string(), &|p| {
        p.false_positive_area(t)
    });
    row(&mut out, "FN area ∫ₜ¹ (1 − P)".to_string(), &|p| {
        p.false_negative_area(t)
    });
    out
}

/// Similarities to show an S-curve at: `points` and the threshold `t`, in order, each
/// with whether it is `t` (for a mark).
pub fn with_threshold(points: &[f64], t: f64) -> Vec<(f64, bool)> {
    let is_t = |s: f64| (s - t).abs() < 1e-9;
    let mut all = points.to_vec();
    if !all.iter().any(|&s| is_t(s)) {
        all.push(t);
        all.sort_by(f64::total_cmp);
    }
    all.into_iter().map(|s| (s, is_t(s))).collect()
}

/// The S-curves of `plans` on one chart with the threshold marked, as an SVG element (for
/// a page) — wrap it with [`svg::standalone`] for an `.svg` file.
pub fn curve_svg(plans: &[NamedPlan], t: f64) -> String {
    let curves: Vec<CurvePlan> = plans
        .iter()
        .map(|p| CurvePlan {
            label: format!("{} ({})", p.plan.label(), p.name),
            plan: p.plan,
        })
        .collect();
    charts::s_curve(&curves, t)
}

/// The S-curve chart as a standalone SVG file.
pub fn curve_svg_file(plans: &[NamedPlan], t: f64) -> String {
    svg::standalone(&curve_svg(plans, t))
}

/// The machine's memory (MemTotal of /proc/meminfo), if known.
pub fn machine_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// This process's resident memory (VmRSS of /proc/self/status), if known.
pub fn resident_memory() -> Option<u64> {
    status_bytes("VmRSS:")
}

/// This process's peak resident memory so far (VmHWM of /proc/self/status), if known.
pub fn peak_memory() -> Option<u64> {
    status_bytes("VmHWM:")
}

fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The memory a run may use: `--memory`, or half the machine's (the rest is for other
/// processes and the page cache), with words naming it for messages. None if neither is
/// known.
pub fn memory_limit(arg: Option<u64>) -> Option<(u64, String)> {
    match arg {
        Some(limit) => Some((limit, format!("the --memory limit ({})", bytes(limit)))),
        None => machine_memory().map(|total| {
            (
                total / 2,
                format!(
                    "half of this machine's memory ({} of {}; set another limit with --memory)",
                    bytes(total / 2),
                    bytes(total)
                ),
            )
        }),
    }
}

/// Refuses (usage error, exit 2) a run predicted to need more than the memory limit
/// ([`memory_limit`]): what the process holds once the input is read and shingled, plus
/// the band keys and signatures that sketching adds. Called before any sketching.
pub fn refuse_over_memory(
    documents: u64,
    config: &neardup::Config,
    limit: Option<u64>,
) -> anyhow::Result<()> {
    let sketch = neardup::measure::plan::sketch_memory(documents, config);
    let held = resident_memory().unwrap_or(0);
    let need = held.saturating_add(sketch);
    if let Some((limit, named)) = memory_limit(limit) {
        if need > limit {
            crate::errors::usage!(
                "{} documents with {} bands x {} rows of {} permutations would need about {} \
                 ({} held after reading + {} for band keys and signatures), more than {named}: \
                 use fewer bands (--bands/--rows) or a smaller --num-perm, or give the input \
                 as files, whose size lets a run that would not fit spill to disk",
                documents,
                config.plan().bands(),
                config.plan().rows(),
                config.num_perm(),
                bytes(need),
                bytes(held),
                bytes(sketch),
            );
        }
    }
    Ok(())
}

/// Bytes in binary units: "812 B", "1.5 KiB", "3.2 GiB".
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// The estimate as text lines for the `plan` command.
pub fn render_estimate(e: &Estimate) -> String {
    let mut out = String::new();
    let count = |v: f64| thousands(v.round().max(0.0) as u64);
    let _ = writeln!(
        out,
        "candidates  ≈ {} (from {} in the sample)",
        count(e.candidates),
        count(e.sample_collisions as f64)
    );
    let _ = writeln!(
        out,
        "similar     ≈ {} pairs at or above the threshold (from {} in the sample), {} expected found",
        count(e.similar_pairs),
        count(e.sample_similar_pairs as f64),
        count(e.found_pairs)
    );
    match e.missed_share {
        Some(m) => {
            let _ = writeln!(
                out,
                "missed      ≈ {:.1} % of the similar pairs (pairs spread evenly above t: {:.1} %)",
                100.0 * m,
                100.0 * e.missed_share_uniform
            );
        }
        None => {
            let _ = writeln!(
                out,
                "missed      no similar pair in the sample; pairs spread evenly above t: {:.1} %",
                100.0 * e.missed_share_uniform
            );
        }
    }
    let parts: Vec<String> = e
        .memory
        .parts()
        .iter()
        .filter(|(_, b)| *b > 0)
        .map(|(name, b)| format!("{name} {}", bytes(*b)))
        .collect();
    let _ = writeln!(
        out,
        "memory      ≈ {} ({})",
        bytes(e.memory.total()),
        parts.join(", ")
    );
    let parts: Vec<String> = e
        .time
        .parts()
        .iter()
        .map(|(name, s)| format!("{name} {}", seconds(*s)))
        .collect();
    let _ = writeln!(
        out,
        "time        ≈ {} ({})",
        seconds(e.time.total()),
        parts.join(", ")
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use neardup::measure::plan::{alternatives, Memory, Time};

    #[test]
    fn table_and_chart() {
        let alts = alternatives(Plan::new(16, 8), 0.8, 128);
        let table = curve_table(&alts, 0.75);
        assert!(table.starts_with("similarity s"));
        assert!(table.contains("16 × 8 (chosen)"));
        assert!(table.contains("9 × 13 (integral)"));
        assert!(table.contains("0.75 *"));
        assert!(table.contains("recall over [0.75, 1]"));
        // 12 lines of similarities (0.1 … 1.0 and t), 4 of figures, 1 header.
        assert_eq!(table.lines().count(), 1 + 11 + 4);
        let row_08 = table.lines().find(|l| l.starts_with("0.80")).unwrap();
        let cells: Vec<&str> = row_08.split_whitespace().collect();
        assert_eq!(&cells[1..], ["0.947", "0.986", "0.867", "0.399"]);
        let svg = curve_svg(&alts, 0.8);
        assert_eq!(svg.matches("stroke-width=\"2\"").count(), 4);
        assert!(svg.contains("9 × 13 (integral): P(0.8) = 0.399"));
        assert!(curve_svg_file(&alts, 0.8).starts_with("<?xml"));
    }

    #[test]
    fn estimate_as_lines() {
        let e = Estimate {
            candidates: 3_003_000.4,
            sample_collisions: 3,
            similar_pairs: 2_002_000.0,
            sample_similar_pairs: 2,
            found_pairs: 1_948_000.0,
            missed_share: Some(0.0265),
            missed_share_uniform: 0.006,
            memory: Memory {
                band_keys: 128 << 20,
                shingle_sets: 1 << 30,
                ..Memory::default()
            },
            time: Time {
                read: 1.2,
                verify: 12.25,
                ..Time::default()
            },
            ..Estimate::default()
        };
        let text = render_estimate(&e);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "candidates  ≈ 3,003,000 (from 3 in the sample)",
                "similar     ≈ 2,002,000 pairs at or above the threshold (from 2 in the \
                 sample), 1,948,000 expected found",
                "missed      ≈ 2.6 % of the similar pairs (pairs spread evenly above t: 0.6 %)",
                "memory      ≈ 1.1 GiB (band keys 128.0 MiB, shingle sets 1.0 GiB)",
                "time        ≈ 13.4 s (read 1.200 s, shingle 0.000 s, sketch 0.000 s, \
                 group 0.000 s, verify 12.2 s)",
            ]
        );
    }

    #[test]
    fn estimate_of_an_empty_sample() {
        let text = render_estimate(&Estimate::default());
        assert!(
            text.contains("missed      no similar pair in the sample"),
            "{text}"
        );
        assert!(text.contains("memory      ≈ 0 B ()"), "{text}");
    }

    #[test]
    fn threshold_joins_the_points_once() {
        let points = [0.5, 0.8, 0.9];
        let marked = |t| with_threshold(&points, t);
        assert_eq!(
            marked(0.7),
            [(0.5, false), (0.7, true), (0.8, false), (0.9, false)]
        );
        assert_eq!(marked(0.8), [(0.5, false), (0.8, true), (0.9, false)]);
        assert_eq!(marked(0.1 + 0.7), [(0.5, false), (0.8, true), (0.9, false)]);
        assert_eq!(marked(1.0).last(), Some(&(1.0, true)));
    }

    #[test]
    fn byte_units() {
        assert_eq!(bytes(812), "812 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(3 << 30), "3.0 GiB");
    }
}
