"""The containment benchmark (see bench/containment)."""

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys

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
    for t in args.thresholds.split(","):
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
    with open("bench/results/RESULTS-containment.md", "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print("wrote bench/results/RESULTS-containment.md")


if __name__ == "__main__":
    main()
