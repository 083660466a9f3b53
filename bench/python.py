"""neardup through Python beside rensa and datasketch: list of strings in, verified pairs out.

    bench/python [--quick] [--corpus all|pypi|stdlib] [--tools neardup,rensa,datasketch]
                 [--datasketch-sample N] [--overhead-docs N] [--repeats N] [--timeout S]

Every tool runs in a Python process of its own (peak RSS by GNU time) that reads the corpus
into a list of str (untimed), then is timed from that list to an array of verified pairs:

  neardup      `neardup.pairs(texts, output="numpy")` (16 bands x 8 rows, 128 permutations,
               basic normalization: the same shingle sets the peers get)
  rensa        shingling in Python (shingling.py), `RMinHash.from_token_sets`,
               `RMinHashLSH.insert_many` / `query_all`, then exact Jaccard of each candidate
               pair with Python sets (peers.py)
  datasketch   the same with `MinHash.bulk` and `MinHashLSH` (on an evenly spaced sample
               of the large corpus: it takes minutes per 100k documents)

Recall is measured against `neardup.exact_pairs` on the same list (the exact join), or on
the sample's pairs for a sampled run. The Python layer's overhead: `neardup.pairs` on the
first N documents against the library stages of `neardup pairs` (shingle + sketch + group
+ verify, from its summary; reading and writing excluded) on the same documents, the
median of a few runs of each. Results go to stdout and bench/results/RESULTS-python.md.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)

THRESHOLD, BANDS, ROWS, NUM_PERM = 0.8, 16, 8, 128


def read_texts(path, sample):
    import peers

    _, texts = peers.read_corpus(path, sample)
    return texts


def pair_keys(a, b, n):
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return np.unique(lo * n + hi)


def verify_python(sets, a, b):
    """The candidate pairs whose exact Jaccard (Python sets) reaches the threshold, as
    peers.py verifies them."""
    keep_a, keep_b = [], []
    for i, j in zip(a, b):
        x, y = sets[i], sets[j]
        inter = len(x & y) if len(x) <= len(y) else len(y & x)
        union = len(x) + len(y) - inter
        if union and inter / union >= THRESHOLD:  # neardup's verify::meets_threshold
            keep_a.append(i)
            keep_b.append(j)
    return keep_a, keep_b


def worker(tool, corpus, sample, out, threads):
    """One tool, timed from a list of str to verified pairs; writes keys and stats."""
    texts = read_texts(corpus, sample)
    n = len(texts)
    stages = {}
    t0 = time.perf_counter()
    if tool in ("neardup", "neardup-exact"):
        import neardup

        kwargs = dict(threshold=THRESHOLD, normalize="basic", output="numpy", threads=threads)
        if tool == "neardup":
            got = neardup.pairs(texts, bands=BANDS, rows=ROWS, num_perm=NUM_PERM, **kwargs)
        else:
            got = neardup.exact_pairs(texts, **kwargs)
        a, b = got["a"], got["b"]
    else:
        import peers
        from shingling import shingle_set

        sets = [shingle_set(t) for t in texts]
        t1 = time.perf_counter()
        run = {"rensa": peers.run_rensa, "datasketch": peers.run_datasketch}[tool]
        ca, cb, _ = run(sets, NUM_PERM, BANDS, ROWS, THRESHOLD)
        t2 = time.perf_counter()
        a, b = verify_python(sets, ca, cb)
        stages = {"shingle": t1 - t0, "sketch_lsh": t2 - t1, "verify": time.perf_counter() - t2,
                  "candidates": len(ca)}
    seconds = time.perf_counter() - t0
    keys = pair_keys(a, b, n)
    np.save(out + ".npy", keys)
    with open(out + ".json", "w") as f:
        json.dump({"seconds": seconds, "docs": n, "pairs": int(len(keys)), "stages": stages}, f)


def version_of(package):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def run_worker(tool, corpus, sample, work, timeout, threads=None):
    import bench

    out = os.path.join(work, f"{tool}-{sample or 'all'}")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", tool, "--corpus-path", corpus, "--out", out]
    if sample:
        cmd += ["--sample", str(sample)]
    if threads:
        cmd += ["--threads", str(threads)]
    r = bench.run_measured(cmd, out, timeout)
    if r["exit"] != 0 or r["timed_out"]:
        tail = r["stderr"].strip().splitlines()[-3:]
        print(f"[python] {tool} failed (exit {r['exit']}, timed out {r['timed_out']}): {tail}", file=sys.stderr)
        return None
    with open(out + ".json") as f:
        stats = json.load(f)
    stats["keys"] = np.load(out + ".npy")
    stats["rss"] = r["maxrss_bytes"]
    return stats


def bench_corpus(corpus, args, work):
    import bench

    tools = args.tools.split(",")
    print(f"[python] {corpus['title']}: {corpus['docs']:,} documents", file=sys.stderr)
    exact = run_worker("neardup-exact", corpus["path"], None, work, args.timeout)
    truth = exact["keys"]
    rows = [("neardup.exact_pairs (ground truth)", exact, truth)]
    for tool in tools:
        sample = args.datasketch_sample if tool == "datasketch" and corpus["docs"] > args.datasketch_sample else None
        r = run_worker(tool, corpus["path"], sample, work, args.timeout)
        print(f"[python] {tool}: {r and round(r['seconds'], 2)} s", file=sys.stderr)
        if r is None:
            rows.append((tool, None, None))
            continue
        want = bench.restrict(truth, corpus["docs"], peers_sample(corpus["docs"], sample)) if sample else truth
        name = f"{tool} (sample of {sample:,})" if sample else tool
        rows.append((name, r, want))
    return rows


def peers_sample(total, size):
    import peers

    return peers.sample_indices(total, size)


def overhead(corpus, args, work, neardup_bin):
    """`neardup.pairs` against the library stages of `neardup pairs` on the same N docs."""
    import bench

    n = 0
    path = os.path.join(work, "first.jsonl")
    with open(corpus["path"]) as src, open(path, "w") as dst:
        for line in src:
            if n == args.overhead_docs:
                break
            dst.write(line)
            n += 1
    cli, py = [], []
    for k in range(args.repeats):
        cmd = [neardup_bin, "pairs", path, "-t", str(THRESHOLD), "--bands", str(BANDS), "--rows", str(ROWS),
               "--num-perm", str(NUM_PERM), "--normalize", "basic", "-o", os.path.join(work, "cli-pairs.jsonl")]
        r = bench.run_measured(cmd, os.path.join(work, f"cli-{k}"), args.timeout)
        stages, _ = bench.parse_neardup_summary(r["stderr"])
        cli.append(sum(stages.get(s, 0.0) for s in ("shingle", "sketch", "group", "verify")))
        p = run_worker("neardup", path, None, work, args.timeout)
        py.append(p["seconds"])
    return {"docs": n, "title": corpus["title"], "cli": statistics.median(cli), "python": statistics.median(py), "cli_all": cli, "python_all": py}


def fmt_s(s):
    return f"{s:.2f} s" if s < 100 else f"{s:.0f} s"


def render(results, over, args):
    import bench

    ms = bench.machine()
    lines = [
        "# Benchmark: neardup from Python beside rensa and datasketch",
        "",
        f"- **date**: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- **machine**: {ms['nproc']} cores ({ms['cpu']}), {ms['memory']} memory, {ms['os']}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end (other work may share the machine)",
        f"- **versions**: neardup {version_of('neardup')}, rensa {version_of('rensa')}, datasketch {version_of('datasketch')}, "
        f"NumPy {version_of('numpy')}, CPython {sys.version.split()[0]}",
        f"- **task**: a Python list of str in, verified pairs (exact Jaccard ≥ {THRESHOLD}) out; {BANDS} bands × {ROWS} rows, "
        f"{NUM_PERM} permutations, char 5-grams, basic normalization, for every tool; each in a process of its own",
        f"- **command**: `bench/python {os.environ.get('BENCH_ARGS', '')}`".replace(" `", "`"),
        "",
    ]
    for corpus, rows in results:
        lines += [f"## {corpus['title']}: {corpus['docs']:,} documents", "", f"{corpus['origin']}", "",
                  "| tool | time | vs neardup | peak RSS | pairs | recall |", "|---|--:|--:|--:|--:|--:|"]
        base = next((r["seconds"] for name, r, _ in rows if name == "neardup" and r), None)
        for name, r, want in rows:
            if r is None:
                lines.append(f"| {name} | failed | | | | |")
                continue
            s = bench.score(r["keys"], want)
            if name == "neardup":
                ratio = "1×"
            elif "sample" in name:
                ratio = "(a sample)"  # less work than neardup's whole corpus: no ratio
            elif base and not name.startswith("neardup"):
                ratio = f"{r['seconds'] / base:.1f}×"
            else:
                ratio = ""
            lines.append(f"| {name} | **{fmt_s(r['seconds'])}** | {ratio} | {bench.fmt_bytes(r['rss'])} | "
                         f"{r['pairs']:,} | {100 * s['recall']:.3f} % |")
        for name, r, _ in rows:
            if r and r["stages"]:
                st = r["stages"]
                lines.append(f"\n{name}: shingling in Python {fmt_s(st['shingle'])}, sketch + LSH {fmt_s(st['sketch_lsh'])}, "
                             f"verifying {st['candidates']:,} candidates {fmt_s(st['verify'])}")
        lines.append("")
    if over:
        add = over["python"] / over["cli"] - 1
        lines += [
            "## The Python layer",
            "",
            f"The first {over['docs']:,} documents of the {over['title']}, the median of {args.repeats} runs each: "
            f"`neardup.pairs(texts, output=\"numpy\")` takes **{over['python']:.3f} s** from the list to the arrays; "
            f"the library stages of `neardup pairs` (shingle + sketch + group + verify) take **{over['cli']:.3f} s**: "
            f"the Python layer adds **{100 * add:+.1f} %**.",
            f"(runs: Python {', '.join(f'{x:.3f}' for x in over['python_all'])} s; "
            f"CLI stages {', '.join(f'{x:.3f}' for x in over['cli_all'])} s)",
            "",
        ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--corpus-path", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--sample", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--neardup", help="the neardup binary (for the overhead comparison)")
    ap.add_argument("--quick", action="store_true", help="the small versions of the corpora")
    ap.add_argument("--corpus", default="all", choices=["all", "pypi", "stdlib"])
    ap.add_argument("--tools", default="neardup,rensa,datasketch")
    ap.add_argument("--datasketch-sample", type=int, default=100_000)
    ap.add_argument("--overhead-docs", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--pypi-tsv", default=os.path.join(ROOT, "..", ".library", "env", "packages", "pypi.tsv"))
    ap.add_argument("--out-file", default=os.path.join(BENCH, "results", "RESULTS-python.md"))
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.corpus_path, args.sample, args.out, args.threads)
        return 0

    import corpora

    data = os.path.join(BENCH, "data")
    chosen = []
    if args.corpus in ("all", "pypi"):
        chosen.append(corpora.pypi_summaries(data, args.pypi_tsv, args.quick))
    if args.corpus in ("all", "stdlib"):
        chosen.append(corpora.python_stdlib(data, args.quick))
    work = tempfile.mkdtemp(prefix="neardup-python-")
    results = [(c, bench_corpus(c, args, work)) for c in chosen]
    over = None
    pypi = next((c for c in chosen if c["title"].startswith("PyPI")), None)
    if pypi and args.neardup and "neardup" in args.tools.split(","):
        over = overhead(pypi, args, work, args.neardup)
    text = render(results, over, args)
    print(text)
    if not args.quick:
        with open(args.out_file, "w") as f:
            f.write(text + "\n")
        print(f"(written to {os.path.relpath(args.out_file, ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
