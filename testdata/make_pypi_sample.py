#!/usr/bin/env python3
"""Builds testdata/pypi-summaries.jsonl: real PyPI package summaries, rich in near-duplicates.

Inputs: the PyPI package list (a TSV of name, version, month, rank, summary) and the output
of `neardup clusters` on all of its summaries. The sample takes whole clusters that hold at
least one near-duplicate that is not an exact copy (up to 4 documents each), then fills up
with randomly chosen summaries, and sorts by package name as the list is. Fixed seed.

    python3 testdata/make_pypi_sample.py PYPI_TSV CLUSTERS_JSONL > testdata/pypi-summaries.jsonl
"""
import json
import random
import sys
from collections import defaultdict

NEAR_CLUSTERS = 300
TOTAL = 5000


def main() -> None:
    tsv, clusters_path = sys.argv[1], sys.argv[2]
    summaries = {}
    with open(tsv, encoding="utf-8", errors="replace") as f:
        next(f)
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 5 and parts[4].strip():
                summaries[parts[0]] = parts[4]
    members = defaultdict(list)
    near = set()
    with open(clusters_path) as f:
        for line in f:
            c = json.loads(line)
            members[c["cluster"]].append(c["id"])
            if not c["kept"] and c["jaccard"] < 1.0:
                near.add(c["cluster"])
    rng = random.Random(20261121)
    chosen = set()
    for cid in rng.sample(sorted(near), min(NEAR_CLUSTERS, len(near))):
        chosen.update(members[cid][:4])
    names = sorted(summaries)
    while len(chosen) < TOTAL:
        chosen.add(rng.choice(names))
    for name in sorted(chosen):
        print(json.dumps({"id": name, "text": summaries[name]}, ensure_ascii=False))


if __name__ == "__main__":
    main()
