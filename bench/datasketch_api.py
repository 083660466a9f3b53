"""datasketch's own API, run unchanged on neardup, beside datasketch 2.0.0 and rensa.

    bench/datasketch-api [--docs N] [--rounds N] [--tools neardup,datasketch,rensa]

The code a datasketch user has, on PyPI package summaries (a random sample of 100,000:
the summaries of bench/run --summaries 100000), with only the import changed for neardup:

    m = MinHash(num_perm=128); m.update_batch(shingles)                  # sketch
    lsh = MinHashLSH(threshold=0.8, num_perm=128, params=(16, 8))
    with lsh.insertion_session() as session:                             # insert
        for key, m in enumerate(minhashes): session.insert(key, m)
    [lsh.query(m) for m in minhashes]                                    # query

rensa the same with its own classes (`RMinHash(128, seed).update(shingles)`,
`RMinHashLSH(0.8, 128, 16)`, `insert`, `query`). Every tool gets the same shingle sets
(neardup's normalization and char 5-grams, shingling.py; bytes for datasketch's and
neardup's `update_batch`, str for rensa's), made before the clock starts. datasketch and
rensa return the bands' candidates: their exact Jaccard is checked in Python and timed
as "verify", the step a user needs for the answers neardup's query gives verified (its
MinHashes keep their sets).

Each tool runs in a process of its own (peak RSS by GNU time); the tools take turns round
after round in a rotating order, so a noisy shared machine slows them alike, and the
ratios are of medians from the same run. Results go to stdout and
bench/results/RESULTS-datasketch.md.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)

THRESHOLD, BANDS, ROWS, NUM_PERM = 0.8, 16, 8, 128
PHASES = ("sketch", "insert", "query", "verify")


def exact_answers(sets, found, threshold):
    """The (query, key) answers whose exact Jaccard reaches the threshold, the query
    itself left out (neardup's verify::meets_threshold on the same f64)."""
    kept = 0
    for q, keys in enumerate(found):
        x = sets[q]
        for k in keys:
            if k == q:
                continue
            y = sets[k]
            inter = len(x & y)
            if inter / (len(x) + len(y) - inter) >= threshold:
                kept += 1
    return kept


def worker(tool, corpus, docs, out):
    import peers
    from shingling import shingle_set

    _, texts = peers.read_corpus(corpus, None)
    sets = [shingle_set(t) for t in texts[:docs]]
    del texts
    times = {}
    if tool == "rensa":
        from rensa import RMinHash as MinHash
        from rensa import RMinHashLSH

        tokens = [list(s) for s in sets]
        t0 = time.perf_counter()
        minhashes = []
        for shingles in tokens:
            m = MinHash(num_perm=NUM_PERM, seed=1)
            m.update(shingles)
            minhashes.append(m)
        t1 = time.perf_counter()
        lsh = RMinHashLSH(THRESHOLD, NUM_PERM, BANDS)
        for key, m in enumerate(minhashes):
            lsh.insert(key, m)
        t2 = time.perf_counter()
    else:
        if tool == "neardup":
            from neardup import MinHash, MinHashLSH
        else:
            from datasketch import MinHash, MinHashLSH

        tokens = [[s.encode("utf-8") for s in st] for st in sets]
        t0 = time.perf_counter()
        minhashes = []
        for shingles in tokens:
            m = MinHash(num_perm=NUM_PERM)
            m.update_batch(shingles)
            minhashes.append(m)
        t1 = time.perf_counter()
        lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, params=(BANDS, ROWS))
        with lsh.insertion_session() as session:
            for key, m in enumerate(minhashes):
                session.insert(key, m)
        t2 = time.perf_counter()
    found = [lsh.query(m) for m in minhashes]
    t3 = time.perf_counter()
    # The peers' candidates are checked here; neardup's answers come verified, and are
    # counted the same way (untimed).
    answers = exact_answers(sets, found, THRESHOLD)
    t4 = time.perf_counter()
    times = {"sketch": t1 - t0, "insert": t2 - t1, "query": t3 - t2, "verify": t4 - t3 if tool != "neardup" else 0.0}
    returned = sum(len(f) for f in found)
    with open(out, "w") as f:
        json.dump({"times": times, "returned": returned, "answers": answers, "docs": len(sets)}, f)


def version_of(package):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def run(tool, corpus, docs, work, round_, timeout):
    import bench

    out = os.path.join(work, f"{tool}-{round_}")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", tool, "--corpus-path", corpus,
           "--docs", str(docs), "--out", out + ".json"]
    r = bench.run_measured(cmd, out, timeout)
    if r["exit"] != 0 or r["timed_out"]:
        tail = r["stderr"].strip().splitlines()[-3:]
        print(f"[datasketch-api] {tool} failed (exit {r['exit']}, timed out {r['timed_out']}): {tail}", file=sys.stderr)
        return None
    with open(out + ".json") as f:
        stats = json.load(f)
    stats["rss"] = r["maxrss_bytes"]
    return stats


def render(corpus, tools, runs, args):
    import bench

    ms = bench.machine()
    med = {t: {p: statistics.median(r["times"][p] for r in runs[t]) for p in PHASES} for t in tools if runs[t]}
    for t in med:
        med[t]["total"] = sum(med[t][p] for p in PHASES)
    base = med.get("neardup")
    lines = [
        "# Benchmark: datasketch's API on neardup, beside datasketch and rensa",
        "",
        f"- **date**: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- **machine**: {ms['nproc']} cores ({ms['cpu']}), {ms['memory']} memory, {ms['os']}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end (other work shares the machine)",
        f"- **versions**: neardup {version_of('neardup')}, datasketch {version_of('datasketch')}, rensa {version_of('rensa')}, "
        f"NumPy {version_of('numpy')}, CPython {sys.version.split()[0]}",
        f"- **data**: {corpus['title']}, the first {args.docs:,}; {corpus['origin']}",
        f"- **task**: datasketch's code with the import changed (bench/datasketch_api.py): `MinHash(num_perm={NUM_PERM})` + "
        f"`update_batch` per summary, `MinHashLSH(threshold={THRESHOLD}, num_perm={NUM_PERM}, params=({BANDS}, {ROWS}))` "
        "filled in an `insertion_session`, `query` of every sketch; rensa's `RMinHash`/`RMinHashLSH` the same way. "
        "The peers' candidates are checked by exact Jaccard in Python (verify); neardup's answers come verified",
        f"- **rounds**: {args.rounds}, each tool in a process of its own, in a rotating order; medians below, "
        "all rounds in the last table",
        f"- **command**: `{os.environ.get('BENCH_COMMAND', 'bench/datasketch-api')}`",
        "",
        "| tool | sketch | insert | query | verify | total | ÷ neardup (total) | insert+query ÷ neardup | answers (pairs ≥ 0.8, both ways) | returned keys | peak RSS |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in tools:
        if not runs[t]:
            lines.append(f"| {t} | failed | | | | | | | | | |")
            continue
        m, last = med[t], runs[t][-1]
        ratio = f"{m['total'] / base['total']:.1f}" if base else ""
        iq = f"{(m['insert'] + m['query']) / (base['insert'] + base['query']):.1f}" if base else ""
        lines.append(
            f"| {t} | {m['sketch']:.2f} s | {m['insert']:.2f} s | {m['query']:.2f} s | {m['verify']:.2f} s | "
            f"{m['total']:.2f} s | {ratio} | {iq} | {last['answers']:,} | {last['returned']:,} | "
            f"{max(r['rss'] for r in runs[t]) / 2**20:.0f} MiB |"
        )
    lines += ["", "Every round (seconds: sketch / insert / query / verify):", "", "| round | " + " | ".join(tools) + " |",
              "|---|" + "---|" * len(tools)]
    for k in range(args.rounds):
        cells = []
        for t in tools:
            r = runs[t][k] if k < len(runs[t]) else None
            cells.append(" / ".join(f"{r['times'][p]:.2f}" for p in PHASES) if r else "failed")
        lines.append(f"| {k + 1} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--corpus-path", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tools", default="neardup,datasketch,rensa")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--pypi-tsv", default=os.path.join(ROOT, "..", ".library", "env", "packages", "pypi.tsv"))
    ap.add_argument("--out-file", default=os.path.join(BENCH, "results", "RESULTS-datasketch.md"))
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.corpus_path, args.docs, args.out)
        return 0

    import corpora

    corpus = corpora.pypi_summaries(os.path.join(BENCH, "data"), args.pypi_tsv, False, sample=100_000)
    tools = args.tools.split(",")
    work = tempfile.mkdtemp(prefix="neardup-datasketch-api-")
    runs = {t: [] for t in tools}
    for k in range(args.rounds):
        order = tools[k % len(tools):] + tools[:k % len(tools)]
        for t in order:
            r = run(t, corpus["path"], args.docs, work, k, args.timeout)
            print(f"[datasketch-api] round {k + 1} {t}: {r and {p: round(v, 2) for p, v in r['times'].items()}}", file=sys.stderr)
            if r:
                runs[t].append(r)
    text = render(corpus, tools, runs, args)
    print(text)
    with open(args.out_file, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
