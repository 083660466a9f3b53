"""The scale benchmark's runs (see bench/scale): generate, run, measure, tabulate."""

import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import threading
import time

NEARDUP = "target/release/neardup"
# A limit under which a first corpus that ran in memory (1M documents, 0.13 GiB) spills.
SPILL_REFERENCE = "256M"
PLANTED = "target/release/examples/planted"


def run_pairs(corpus, out, memory, tmp):
    """Runs `neardup pairs`; returns (seconds, peak RSS bytes, peak temp bytes, summary)."""
    stats = os.statvfs(tmp)
    free_before = stats.f_bavail * stats.f_frsize
    lowest = [free_before]
    done = threading.Event()

    def watch():
        # The spilled files have no names: the disk they take shows only as free space.
        while not done.wait(0.2):
            s = os.statvfs(tmp)
            lowest[0] = min(lowest[0], s.f_bavail * s.f_frsize)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    start = time.monotonic()
    p = subprocess.run(
        ["/usr/bin/time", "-f", "maxrss_kb %M", NEARDUP, "pairs", corpus,
         "--memory", memory, "--tmp", tmp, "--output-format", "tsv", "-o", out],
        capture_output=True, text=True)
    seconds = time.monotonic() - start
    done.set()
    watcher.join()
    if p.returncode != 0:
        sys.exit(f"neardup failed on {corpus}:\n{p.stderr}")
    rss = int(re.search(r"maxrss_kb (\d+)", p.stderr).group(1)) * 1024
    out_size = os.path.getsize(out)
    temp = max(0, free_before - lowest[0] - out_size)
    return seconds, rss, temp, p.stderr


def gib(n):
    return f"{n / 2**30:.2f} GiB"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--memory", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    rows = []
    sizes = [int(s) for s in args.sizes.split(",")]
    runs = [(n, args.memory) for n in sizes]
    while runs:
        n, memory = runs.pop(0)
        corpus = os.path.join(args.dir, f"planted-{n}-{args.seed}.jsonl")
        truth = os.path.join(args.dir, f"planted-{n}-{args.seed}.truth.tsv")
        if not (os.path.exists(corpus) and os.path.exists(truth)):
            subprocess.run([PLANTED, "generate", str(n), str(args.seed), corpus, truth],
                           check=True)
        out = os.path.join(args.dir, f"pairs-{n}.tsv")
        seconds, rss, temp, summary = run_pairs(corpus, out, memory, args.dir)
        recall = subprocess.run([PLANTED, "recall", truth, out], check=True,
                                capture_output=True, text=True).stdout.strip()
        os.remove(out)
        spilled = "spills to" in summary
        if memory == SPILL_REFERENCE and not spilled:
            sys.exit(f"{corpus} did not spill under --memory {memory}")
        if not rows and not spilled:
            # The first corpus ran in memory: run it spilled too, so the spilled runs'
            # growth is measured against a spilled run, not an in-memory one.
            runs.insert(0, (n, SPILL_REFERENCE))
        m = re.search(r"recall ([\d.]+)", recall)
        planted = re.search(r"at or above [\d.]+: (\d+)", recall).group(1)
        pairs = re.search(r"result +([\d,]+) pairs", summary).group(1)
        rows.append((n, os.path.getsize(corpus), memory, spilled, seconds, rss, temp,
                     int(planted), m.group(1), pairs))
        print(f"{n:,} documents: {seconds:.1f} s, peak RSS {gib(rss)}, temp {gib(temp)}, "
              f"{'spilled' if spilled else 'in memory'}; {recall}", flush=True)
        print(summary, flush=True)
    load = os.getloadavg()
    lines = [
        f"# Scale: `neardup pairs --memory {args.memory}` on planted corpora",
        "",
        f"{datetime.date.today()}, {platform.machine()} {os.cpu_count()} cores, "
        f"load average {load[0]:.2f} at the end. Corpora: `planted generate N {args.seed}` "
        "(crates/neardup/examples/planted.rs). Recall: planted pairs with Jaccard ≥ 0.8 "
        "found, from `planted recall`. Temp: the lowest free space of the temporary "
        "folder's disk during the run, less the pairs written.",
        "",
        "| documents | input | run | time | time / (n log₂ n), vs the first run of its kind | peak RSS | peak temp disk | planted pairs ≥ 0.8 | recall | pairs reported |",
        "|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    import math
    base = {}
    for n, size, memory, spilled, seconds, rss, temp, planted, recall, pairs in rows:
        per = seconds / (n * math.log2(n))
        per_base = base.setdefault(spilled, per)
        run = "spilled" if spilled else "in memory"
        if memory != args.memory:
            run += f" (`--memory {memory}`)"
        lines.append(
            f"| {n:,} | {gib(size)} | {run} | "
            f"{seconds:.1f} s | {per / per_base:.2f} | {gib(rss)} | {gib(temp)} | {planted:,} | "
            f"{recall} | {pairs} |")
    path = "bench/results/RESULTS-scale.md"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"written to {path}")


if __name__ == "__main__":
    main()
