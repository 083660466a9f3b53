#!/usr/bin/env python3
"""Decontamination benchmark: known test items planted, with edits, in a corpus of real
text; neardup decontaminate against lm-eval-harness's 13-gram method on the same data.

Corpus: PyPI package summaries (the machine's package list), 10 consecutive summaries a
document. Test items: consecutive summaries of a held-out part joined until at least 40 words (so
no item is in the corpus by accident as a whole). Each planted item gets edits: its case
changed, its punctuation between words changed, and one word replaced at a random place (which breaks
up to 13 of its 13-grams). Recall: planted (document, item) pairs reported. A report not
planted is checked by hand of the script: the document's words are searched for the
item's 13-grams in Python, so a report is false only if fewer than half are there.

The lm-eval-harness method (lm_eval/decontamination/janitor.py and decontaminate.py):
lowercase, punctuation stripped, split on whitespace, the 13-grams of every test item in
a dict; a document is contaminated with an item when any of its 13-grams is in the dict.
It is reimplemented here in plain Python (its own code reads the Pile's pre-built n-gram
files, not a corpus), timed on one core as neardup is (`--threads 1`). Times are CPU
time (neardup's user + sys as a child process, the method's process time), which a
loaded machine disturbs less than wall time.
"""

import argparse
import json
import os
import random
import re
import resource
import string
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUNCT = str.maketrans("", "", string.punctuation)


def summaries(path):
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        next(f)
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 5 and len(parts[4].split()) >= 4:
                out.append(parts[4])
    return out


def edit(item, rng):
    words = item.split()
    at = rng.randrange(len(words))
    words[at] = "zqxj" + str(rng.randrange(10**6))
    text = " ".join(words)
    text = text.upper() if rng.random() < 0.5 else text.lower()
    return text.replace(". ", "; ").replace(", ", " - ")


def build(args, workdir):
    rng = random.Random(38)
    rows = summaries(args.pypi_tsv)
    rng.shuffle(rows)
    held = rows[: args.items * 20]
    body = rows[args.items * 20 :]
    items = []
    i = 0
    while len(items) < args.items and i < len(held):
        parts = []
        while i < len(held) and len(" ".join(parts).split()) < 40:
            parts.append(held[i])
            i += 1
        items.append(" ".join(parts))
    docs = [" ".join(body[d * 10 : d * 10 + 10]) for d in range(args.docs)]
    planted = {}
    for item in range(len(items)):
        doc = rng.randrange(len(docs))
        while doc in planted.values():
            doc = rng.randrange(len(docs))
        planted[item] = doc
        cut = docs[doc].find(" ", len(docs[doc]) // 2)
        cut = len(docs[doc]) if cut < 0 else cut
        docs[doc] = docs[doc][:cut] + " " + edit(items[item], rng) + docs[doc][cut:]
    tests = os.path.join(workdir, "items.jsonl")
    corpus = os.path.join(workdir, "corpus.jsonl")
    with open(tests, "w") as f:
        for n, t in enumerate(items):
            f.write(json.dumps({"id": n, "text": t}) + "\n")
    with open(corpus, "w") as f:
        for n, t in enumerate(docs):
            f.write(json.dumps({"id": n, "text": t}) + "\n")
    return items, docs, planted, tests, corpus


def normalize(text):
    return text.translate(PUNCT).lower().split()


def lm_eval_method(items, docs, n=13):
    start = time.process_time()
    grams = {}
    for i, item in enumerate(items):
        w = normalize(item)
        for k in range(len(w) - n + 1):
            grams.setdefault(tuple(w[k : k + n]), set()).add(i)
    found = set()
    for d, doc in enumerate(docs):
        w = normalize(doc)
        for k in range(len(w) - n + 1):
            hit = grams.get(tuple(w[k : k + n]))
            if hit:
                for i in hit:
                    found.add((d, i))
    return found, time.process_time() - start


def words(text):
    return re.findall(r"\w+", text.lower())


def share_present(item, doc, n=13):
    w, d = words(item), words(doc)
    dg = {tuple(d[k : k + n]) for k in range(len(d) - n + 1)}
    ig = {tuple(w[k : k + n]) for k in range(len(w) - n + 1)}
    return len(ig & dg) / max(1, len(ig))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--docs", type=int, default=100_000)
    p.add_argument("--items", type=int, default=1_000)
    p.add_argument("--pypi-tsv", default=os.path.join(ROOT, "../.library/env/packages/pypi.tsv"))
    p.add_argument("--neardup", default=os.path.join(ROOT, "target/release/neardup"))
    p.add_argument("--workdir", default=os.path.join(ROOT, "bench/data/decontaminate"))
    a = p.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    items, docs, planted, tests, corpus = build(a, a.workdir)
    mb = os.path.getsize(corpus) / 1e6
    text_mb = sum(len(d.encode()) for d in docs) / 1e6
    report = os.path.join(a.workdir, "report.jsonl")
    def children_cpu():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    start, cpu = time.perf_counter(), children_cpu()
    subprocess.run(
        [a.neardup, "decontaminate", "--tests", tests, corpus, "--threads", "1", "-q",
         "--report-json", report, "-o", os.devnull],
        check=True,
    )
    nd_wall = time.perf_counter() - start
    nd_time = children_cpu() - cpu
    found = set()
    with open(report) as f:
        for line in f:
            r = json.loads(line)
            for it in r["items"]:
                found.add((int(r["id"]), int(it["item"])))
    truth = {(d, i) for i, d in planted.items()}
    recall = len(found & truth) / len(truth)
    extra = found - truth
    false = [(d, i) for d, i in extra if share_present(items[i], docs[d]) < 0.5]
    lm_found, lm_time = lm_eval_method(items, docs)
    lm_recall = len(lm_found & truth) / len(truth)
    lm_extra = len(lm_found - truth)
    rows = [
        f"corpus: {len(docs):,} documents (10 PyPI package summaries each), {text_mb:.1f} MB of text, "
        f"{mb:.1f} MB of JSONL; {len(items):,} items (held-out summaries joined, >= 40 words) planted "
        "once each with case, punctuation and one word changed",
        "",
        "| method | CPU time (user + sys, 1 thread) | MB/s of text per core | wall | recall of planted | reports not planted | of those false (< 50 % of the item's 13-grams in the document) |",
        "|---|---|---|---|---|---|---|",
        f"| neardup decontaminate (13-grams, min overlap 0.5, verified) | {nd_time:.2f} s | {text_mb / nd_time:.1f} | {nd_wall:.2f} s | {recall:.4f} | {len(extra)} | {len(false)} |",
        f"| lm-eval-harness's method (any shared 13-gram), Python | {lm_time:.2f} s | {text_mb / lm_time:.1f} | | {lm_recall:.4f} | {lm_extra} | not verified |",
    ]
    print("\n".join(rows))


if __name__ == "__main__":
    sys.exit(main())
