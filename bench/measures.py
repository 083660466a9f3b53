"""The measures benchmark (see bench/measures): MinHash and SimHash side by side."""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import corpora  # noqa: E402

NEARDUP = "target/release/neardup"
DATA = "bench/data"
DEFAULT_TSV = "../.library/env/packages/pypi.tsv"


def evaluate(path, threshold, extra):
    """`neardup eval --json` with `extra` options: the evaluation as a dict."""
    p = subprocess.run([NEARDUP, "eval", path, "-q", "--json", "-t", str(threshold), *extra],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"neardup eval {path} {' '.join(extra)} failed:\n{p.stderr}")
    return json.loads(p.stdout)


def build(names, tsv):
    """The corpora asked for that can be built here, each as its meta dict."""
    out = []
    summaries = None
    for name in names:
        try:
            if name in ("pypi", "templated") and summaries is None:
                summaries = corpora.pypi_summaries(DATA, tsv, False)
            if name == "pypi":
                out.append(summaries)
            elif name == "stdlib":
                out.append(corpora.python_stdlib(DATA, False))
            elif name == "templated":
                out.append(corpora.templated_pages(DATA, summaries["path"], False))
            else:
                sys.exit(f"unknown corpus {name!r}: pypi, stdlib or templated")
        except corpora.CorpusError as e:
            print(f"[measures] skipping {name}: {e}", file=sys.stderr)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--hamming", default="3,6,10")
    ap.add_argument("--corpus", default="pypi,stdlib,templated")
    ap.add_argument("--pypi-tsv", default=DEFAULT_TSV)
    ap.add_argument("--multiset", action="store_true",
                    help="only sets against multisets, into RESULTS-multiset.md")
    args = ap.parse_args()
    t = args.threshold
    if args.multiset:
        return multiset(args)
    methods = [("MinHash LSH (default plan)", [], "exact"),
               ("MinHash LSH, --verify none", ["--verify", "none"], "none")]
    for k in args.hamming.split(","):
        base = ["--sketch", "simhash", "--hamming", k]
        methods.append((f"SimHash K = {k}", base, "exact"))
        methods.append((f"SimHash K = {k}, --verify none", [*base, "--verify", "none"], "none"))
    lines = [
        "# MinHash and SimHash on the same corpora",
        "",
        f"`bench/measures --threshold {t} --hamming {args.hamming}`, "
        f"{datetime.date.today()}, {platform.machine()}, {os.cpu_count()} cores. "
        "Each row is one `neardup eval --json`: recall and precision of the method's pairs "
        f"against the exact join's pairs at Jaccard ≥ {t} (identical copies included), and the "
        "method's time with shingling (the exact join's time beside it, from the same run). "
        "`expected` is the recall the method's candidate curve predicts over the pairs of "
        "distinct texts (SimHash's assumes sets of equal size whose shingles occur once).",
        "",
    ]
    for meta in build(args.corpus.split(","), args.pypi_tsv):
        path = meta["path"]
        lines += [f"## {meta['title']}", "",
                  f"{meta['docs']:,} documents, {meta['text_bytes'] / 1e6:.1f} MB of text. {meta['origin']}",
                  "",
                  "| method | verify | pairs | recall | recall over distinct texts (expected) | precision | time | exact join |",
                  "|---|---|--:|--:|--:|--:|--:|--:|"]
        for name, extra, verify in methods:
            e = evaluate(path, t, extra)
            d = e["distinct"]
            row = (f"| {name} | {verify} | {e['lsh']['pairs']:,} | {e['recall']:.4f} | "
                   f"{d['recall']:.4f} ({d['expected']:.4f}) | {e['precision']:.4f} | "
                   f"{e['lsh']['seconds']:.2f} s | {e['exact']['seconds']:.2f} s |")
            print(f"{meta['name']}: {row}", flush=True)
            lines.append(row)
        lines.append("")
    os.makedirs("bench/results", exist_ok=True)
    with open("bench/results/RESULTS-measures.md", "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print("wrote bench/results/RESULTS-measures.md")


def multiset(args):
    """Each corpus as sets and as multisets (`--multiset`: the i-th occurrence of a
    shingle is an element of its own), each LSH run against the exact join of the same
    measure."""
    t = args.threshold
    lines = [
        "# Sets and multisets on the same corpora",
        "",
        f"`bench/measures --multiset --threshold {t}`, {datetime.date.today()}, "
        f"{platform.machine()}, {os.cpu_count()} cores. Each row is one `neardup eval --json`, "
        "LSH (default plan, verified exactly) against the exact join of the same measure: "
        f"Jaccard of the shingle sets, or with `--multiset` the weighted Jaccard Σmin/Σmax of "
        f"the shingles' counts, at ≥ {t}.",
        "",
        "| corpus | measure | pairs (exact join) | found by LSH | recall | recall over distinct texts (expected) | precision | LSH | exact join |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for meta in build(args.corpus.split(","), args.pypi_tsv):
        for name, extra in [("sets", []), ("multisets", ["--multiset"])]:
            e = evaluate(meta["path"], t, extra)
            d = e["distinct"]
            row = (f"| {meta['title']} | {name} | {e['exact']['pairs']:,} | {e['lsh']['pairs']:,} | "
                   f"{e['recall']:.4f} | {d['recall']:.4f} ({d['expected']:.4f}) | "
                   f"{e['precision']:.4f} | {e['lsh']['seconds']:.2f} s | {e['exact']['seconds']:.2f} s |")
            print(row, flush=True)
            lines.append(row)
    lines.append("")
    with open("bench/results/RESULTS-multiset.md", "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print("wrote bench/results/RESULTS-multiset.md")


if __name__ == "__main__":
    main()
