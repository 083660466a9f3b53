"""The containment benchmark (see bench/containment)."""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import corpora  # noqa: E402

NEARDUP = "target/release/neardup"
BRUTE = "target/release/examples/containment_brute"
DATA = "bench/data"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--thresholds", default="0.5,0.8,0.9")
    ap.add_argument("--brute", type=int, default=4000)
    ap.add_argument("--pypi-tsv", default="../.library/env/packages/pypi.tsv")
    ap.add_argument("--index", default="0.8",
                    help="thresholds of the containment index pass (empty: none)")
    args = ap.parse_args()
    summaries = corpora.pypi_summaries(DATA, args.pypi_tsv, False)
    meta = corpora.planted_fragments(DATA, summaries["path"])
    path, n = meta["path"], meta["docs"]
    lines = [
        "# Containment: fragments planted in long pages",
        "",
        f"`bench/containment --thresholds {args.thresholds} --brute {args.brute}`, "
        f"{datetime.date.today()}, {platform.machine()}, {os.cpu_count()} cores.",
        "",
        f"{meta['title']}: {n:,} documents, {meta['text_bytes'] / 1e6:.1f} MB of text. "
        f"{meta['origin']}.",
        "",
        "Each row is one `neardup eval --measure containment --json`: the LSH Ensemble-style "
        "search (128 permutations, size partitions of powers of two, every candidate verified) "
        "against the exact containment join, recall over all pairs and over pairs of distinct "
        "texts, and each method's time with shingling. The brute force compares every "
        f"ordered pair of the first {args.brute:,} documents exactly; its time is scaled by "
        f"({n:,} / {args.brute:,})² to the whole corpus.",
        "",
        "| threshold | pairs (exact) | found | recall | recall, distinct texts | precision | search | exact join | brute force (scaled) | search vs brute force |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for t in filter(None, args.thresholds.split(",")):
        p = subprocess.run([NEARDUP, "eval", path, "--measure", "containment", "-t", t, "--json"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"neardup eval failed:\n{p.stderr}")
        e = json.loads(p.stdout)
        print(p.stderr, file=sys.stderr)
        b = subprocess.run([BRUTE, path, str(args.brute), t], capture_output=True, text=True,
                           check=True).stdout
        seconds = float(re.search(r"seconds ([\d.]+)", b).group(1))
        scaled = seconds * (n / args.brute) ** 2
        search = e["lsh"]["seconds"]
        row = (f"| {t} | {e['exact']['pairs']:,} | {e['lsh']['pairs']:,} | {e['recall']:.4f} | "
               f"{e['distinct']['recall']:.4f} | {e['precision']:.4f} | {search:.2f} s | "
               f"{e['exact']['seconds']:.2f} s | {scaled:,.0f} s ({seconds:.2f} s on {args.brute:,}) | "
               f"{scaled / max(search, 1e-9):,.0f}× |")
        print(row, flush=True)
        lines.append(row)
    lines.append("")
    if args.thresholds:
        write("bench/results/RESULTS-containment.md", lines)
    if args.index:
        head = lines[:6]
        head[2] = (f"`bench/containment --thresholds '' --index {args.index}`, "
                   f"{datetime.date.today()}, {platform.machine()}, {os.cpu_count()} cores.")
        write("bench/results/RESULTS-containment-index.md",
              head + index_pass(path, n, args.index.split(",")))


def write(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(f"wrote {path}")


def pairs_of(path, t, extra):
    """Unordered id pairs of `neardup pairs --measure containment` (+ extra args)."""
    p = subprocess.run([NEARDUP, "pairs", path, "-q", "--measure", "containment", "-t", t]
                       + extra, capture_output=True, text=True, check=True)
    return {tuple(sorted((v["a"], v["b"]))) for v in map(json.loads, p.stdout.splitlines())}


def timed(cmd):
    start = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    return p, time.perf_counter() - start


def index_pass(path, n, thresholds):
    """A containment index built from the corpus, then queried with each document of it:
    recall and precision of the answers against the exact containment join, and the time
    per query on one thread."""
    lines = [
        "## A containment index",
        "",
        "`neardup index build --measure containment` over the corpus, then `neardup index "
        "query` with each of its documents, on one thread (`--threads 1`). Every pair of "
        "distinct documents a query answers is compared with the exact containment join's.",
        "",
        "| threshold | pairs (exact) | answered | recall | precision | build | queries | per query |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for t in thresholds:
        truth = pairs_of(path, t, ["--method", "exact"])
        where = os.path.join(DATA, "containment-index")
        shutil.rmtree(where, ignore_errors=True)
        _, build = timed([NEARDUP, "index", "build", where, path, "-q", "--measure",
                          "containment", "-t", t])
        q, query = timed([NEARDUP, "index", "query", where, path, "-q", "--threads", "1"])
        shutil.rmtree(where, ignore_errors=True)
        answered = set()
        for v in map(json.loads, q.stdout.splitlines()):
            for m in v["neighbours"]:
                if m["id"] != v["id"]:
                    answered.add(tuple(sorted((v["id"], m["id"]))))
        hit = len(answered & truth)
        row = (f"| {t} | {len(truth):,} | {len(answered):,} | {hit / max(len(truth), 1):.4f} | "
               f"{hit / max(len(answered), 1):.4f} | {build:.1f} s | {query:.1f} s | "
               f"{query / n * 1e3:.2f} ms |")
        print(row, flush=True)
        lines.append(row)
    lines.append("")
    return lines


if __name__ == "__main__":
    main()
