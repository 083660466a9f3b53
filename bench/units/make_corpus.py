"""Builds the paragraph-dedup corpus from real text on this machine: Debian's manual pages
(groff source, decompressed) and package copyright files, with planted shared paragraphs
(whole licence paragraphs of /usr/share/common-licenses, each put into many documents at
a random paragraph break). Writes Dolma's document format (`id`, `text`, `source`,
`added`, `created`), which neardup reads as JSONL too, and the planted paragraphs.

    python bench/units/make_corpus.py OUT_DIR [--man N] [--seed S]
"""

import argparse
import glob
import gzip
import json
import os
import random


def paragraphs(text):
    return [p.strip() for p in text.split("\n\n") if len(p.strip()) > 200]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--man", type=int, default=6000)
    ap.add_argument("--plants", type=int, default=40)
    ap.add_argument("--copies", type=int, default=50)
    ap.add_argument("--seed", type=int, default=38)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    texts = []
    for path in sorted(glob.glob("/usr/share/doc/*/copyright")):
        with open(path, encoding="utf-8", errors="replace") as f:
            texts.append((path, f.read()))
    man = sorted(glob.glob("/usr/share/man/**/*.gz", recursive=True))
    for path in rng.sample(man, min(a.man, len(man))):
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                texts.append((path, f.read()))
        except (OSError, EOFError):
            continue
    licences = []
    for path in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                licences.extend(paragraphs(f.read()))
    plants = rng.sample(licences, min(a.plants, len(licences)))
    texts = [[p, t] for p, t in texts if t.strip()]
    for plant in plants:
        for doc in rng.sample(range(len(texts)), a.copies):
            t = texts[doc][1]
            breaks = [i for i in range(len(t) - 1) if t[i : i + 2] == "\n\n"] or [len(t)]
            at = rng.choice(breaks)
            texts[doc][1] = t[:at] + "\n\n" + plant + "\n\n" + t[at:]
    os.makedirs(os.path.join(a.out, "documents"), exist_ok=True)
    with gzip.open(os.path.join(a.out, "documents", "corpus.jsonl.gz"), "wt") as gz, open(
        os.path.join(a.out, "corpus.jsonl"), "w"
    ) as plain:
        for i, (path, text) in enumerate(texts):
            line = json.dumps(
                {"id": path, "text": text, "source": "debian", "added": "2026-11-27", "created": "2026-11-27"}
            )
            gz.write(line + "\n")
            plain.write(line + "\n")
    with open(os.path.join(a.out, "plants.json"), "w") as f:
        json.dump(plants, f)
    print(f"{len(texts)} documents, {sum(len(t) for _, t in texts)} characters, {len(plants)} plants x {a.copies}")


if __name__ == "__main__":
    main()
