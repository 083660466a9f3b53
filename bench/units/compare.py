"""Scores a paragraph dedup's removals on the corpus of make_corpus.py: a removed line
(Dolma's "paragraph" is a line) is false if no equal line came before it in input order.

    python bench/units/compare.py CORPUS_DIR   (after `dolma dedupe` wrote attributes/para/)
"""

import gzip
import json
import sys

d = sys.argv[1]
docs = [json.loads(l) for l in gzip.open(f"{d}/documents/corpus.jsonl.gz", "rt")]
attrs = [json.loads(l) for l in gzip.open(f"{d}/attributes/para/corpus.jsonl.gz", "rt")]
by_id = {a["id"]: a["attributes"].get("bff_duplicate_paragraph_spans", []) for a in attrs}
seen, removed, false, removed_bytes = set(), 0, 0, 0
for doc in docs:
    text = doc["text"]
    spans = by_id.get(doc["id"], [])
    starts = {s for s, _, _ in spans}
    pos = 0
    for line in text.split("\n"):
        if pos in starts:
            removed += 1
            removed_bytes += len(line.encode())
            if line not in seen:
                false += 1
        seen.add(line)
        pos += len(line) + 1
print(json.dumps({"dolma_removed_lines": removed, "dolma_removed_unseen": false, "dolma_removed_bytes": removed_bytes}))
