"""Runs one Python MinHash-LSH library on a corpus, the way neardup's `pairs` runs.

    peers.py --tool rensa|gaoya|datasketch CORPUS.jsonl --out PAIRS.tsv --stats STATS.json

Stages, each timed on its own:
  read          the JSONL corpus, json.loads per line (neardup parses the same file)
  shingle       neardup's normalization and char 5-grams, in Python (shingling.py): every
                peer gets the very same shingle sets
  sketch + LSH  the library's MinHash of each document, its LSH index with 16 bands of 8
                rows, and the candidate pairs read back from the index
  verify        exact Jaccard of the shingle sets of each candidate pair, with Python sets
  write         the verified pairs as TSV (neardup writes its pairs too)

The index pairs are also saved as a NumPy file (not timed) for the recall computation.
"""

import argparse
import json
import sys
import time
from array import array
from importlib.metadata import version

import numpy as np

from shingling import K, shingle_set


def candidate_pairs(neighbours):
    """(A, B) arrays of the pairs i < j such that j is among i's LSH candidates.

    An LSH query returns the document itself and finds each pair from both ends: keeping
    j > i only turns the candidate lists into a set of unordered pairs.
    """
    a = array("i")
    b = array("i")
    for i, cands in enumerate(neighbours):
        js = [j for j in cands if j > i]
        if js:
            a.extend([i] * len(js))
            b.extend(js)
    return a, b


# ---------------------------------------------------------------------------------------
# The peers. Each gets the shingle sets and the LSH plan and returns candidate pairs and
# the times of its sub-stages. Each uses the fastest path its documentation offers for
# "sketch a batch of token sets, index them, query them all".


def run_rensa(sets, num_perm, bands, rows, threshold):
    import rensa

    times = {}
    t0 = time.perf_counter()
    # The batch constructor hashes the tokens and builds all sketches in Rust (R-MinHash,
    # full-set: no token sampling, unlike rensa's "rho" pipeline).
    minhashes = rensa.RMinHash.from_token_sets(sets, num_perm=num_perm, seed=1)
    t1 = time.perf_counter()
    # threshold only matters to RMinHashLSH.is_similar; query returns the raw candidates.
    lsh = rensa.RMinHashLSH(threshold, num_perm, bands)
    assert lsh.get_num_bands() == bands and num_perm // bands == rows
    lsh.insert_many(minhashes)
    t2 = time.perf_counter()
    neighbours = lsh.query_all(minhashes)
    t3 = time.perf_counter()
    a, b = candidate_pairs(neighbours)
    t4 = time.perf_counter()
    times.update(sketch=t1 - t0, index=t2 - t1, query=t3 - t2, pairs=t4 - t3)
    return a, b, times


# gaoya's token API takes lists and its queries re-sketch their tokens; feeding it in
# chunks keeps the Rust-side copies of the token lists small.
GAOYA_CHUNK = 100_000


def run_gaoya(sets, num_perm, bands, rows, threshold):
    import gaoya

    times = {}
    t0 = time.perf_counter()
    # jaccard_threshold=0: gaoya filters its band candidates by the signature estimate;
    # at 0 it keeps them all, so exact verification sees the same kind of candidates as
    # for the other tools (with 0.8 it would drop about half the pairs sitting at 0.8).
    # id_container="vec": the fastest of its three bucket types here (no removals).
    index = gaoya.minhash.MinHashStringIndex(
        hash_size=32,
        jaccard_threshold=0.0,
        num_bands=bands,
        band_size=rows,
        id_container="vec",
    ).minhash_index
    n = len(sets)
    for lo in range(0, n, GAOYA_CHUNK):
        chunk = [list(s) for s in sets[lo : lo + GAOYA_CHUNK]]
        index.par_bulk_insert_tokens(list(range(lo, lo + len(chunk))), chunk)
    t1 = time.perf_counter()
    neighbours = []
    for lo in range(0, n, GAOYA_CHUNK):
        chunk = [list(s) for s in sets[lo : lo + GAOYA_CHUNK]]
        neighbours.extend(index.par_bulk_query_tokens(chunk))
    t2 = time.perf_counter()
    a, b = candidate_pairs(neighbours)
    t3 = time.perf_counter()
    times.update(sketch_and_index=t1 - t0, query=t2 - t1, pairs=t3 - t2)
    return a, b, times


def run_datasketch(sets, num_perm, bands, rows, threshold):
    from datasketch import MinHash, MinHashLSH

    times = {}
    t0 = time.perf_counter()
    # MinHash.bulk is the documented batch constructor; its default hash (SHA-1) wants
    # bytes, so the shingles are encoded on the way in.
    minhashes = MinHash.bulk(([s.encode("utf-8") for s in st] for st in sets), num_perm=num_perm)
    t1 = time.perf_counter()
    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, params=(bands, rows))
    for i, m in enumerate(minhashes):
        lsh.insert(i, m)
    t2 = time.perf_counter()
    neighbours = [lsh.query(m) for m in minhashes]
    t3 = time.perf_counter()
    a, b = candidate_pairs(neighbours)
    t4 = time.perf_counter()
    times.update(sketch=t1 - t0, index=t2 - t1, query=t3 - t2, pairs=t4 - t3)
    return a, b, times


PEERS = {"rensa": run_rensa, "gaoya": run_gaoya, "datasketch": run_datasketch}


# ---------------------------------------------------------------------------------------


def read_corpus(path, sample):
    ids, texts = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            ids.append(rec["id"])
            texts.append(rec["text"])
    if sample:
        keep = sample_indices(len(texts), sample)
        ids = [ids[i] for i in keep]
        texts = [texts[i] for i in keep]
    return ids, texts


def sample_indices(total, size):
    """An evenly spaced subsample of `size` of `total` documents (the orchestrator uses
    the same function to restrict the ground truth)."""
    if size >= total:
        return list(range(total))
    return [k * total // size for k in range(size)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--tool", required=True, choices=sorted(PEERS))
    ap.add_argument("--out", required=True, help="verified pairs, TSV: id_a, id_b, jaccard")
    ap.add_argument("--stats", required=True, help="stage times and counts, JSON")
    ap.add_argument("--keys", help="verified pairs as NumPy int64 keys i * n + j (not timed)")
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--num-perm", type=int, default=128)
    ap.add_argument("--bands", type=int, default=16)
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--sample", type=int, default=0, help="run on an evenly spaced subsample of this many documents")
    args = ap.parse_args()
    if args.bands * args.rows != args.num_perm:
        sys.exit("peers.py: bands x rows must equal num-perm")

    stages = {}
    t = time.perf_counter()
    ids, texts = read_corpus(args.corpus, args.sample)
    stages["read"] = time.perf_counter() - t

    t = time.perf_counter()
    sets = [shingle_set(text, K) for text in texts]
    stages["shingle"] = time.perf_counter() - t
    text_bytes = sum(len(x.encode("utf-8")) for x in texts)
    del texts

    t = time.perf_counter()
    a, b, sub = PEERS[args.tool](sets, args.num_perm, args.bands, args.rows, args.threshold)
    stages["sketch_lsh"] = time.perf_counter() - t

    t = time.perf_counter()
    sizes = [len(s) for s in sets]
    ka, kb, kj = array("i"), array("i"), array("d")
    threshold = args.threshold
    for i, j in zip(a, b):
        si, sj = sets[i], sets[j]
        inter = len(si & sj) if len(si) <= len(sj) else len(sj & si)
        jac = inter / (sizes[i] + sizes[j] - inter)
        if jac >= threshold:  # neardup's verify::meets_threshold, on the same f64
            ka.append(i)
            kb.append(j)
            kj.append(jac)
    stages["verify"] = time.perf_counter() - t

    t = time.perf_counter()
    with open(args.out, "w", encoding="utf-8") as out:
        step = 1 << 16
        for lo in range(0, len(ka), step):
            out.write(
                "".join(
                    f"{ids[i]}\t{ids[j]}\t{jac:.6f}\n"
                    for i, j, jac in zip(ka[lo : lo + step], kb[lo : lo + step], kj[lo : lo + step])
                )
            )
    stages["write"] = time.perf_counter() - t

    if args.keys:
        n = len(ids)
        np.save(args.keys, np.frombuffer(ka, dtype=np.int32).astype(np.int64) * n + np.frombuffer(kb, dtype=np.int32))

    with open(args.stats, "w", encoding="utf-8") as f:
        json.dump(
            {
                "tool": args.tool,
                "version": version(args.tool),
                "docs": len(ids),
                "text_bytes": text_bytes,
                "shingles": sum(sizes),
                "candidates": len(a),
                "pairs": len(ka),
                "stages": stages,
                "substages": sub,
            },
            f,
            indent=1,
        )


if __name__ == "__main__":
    main()
