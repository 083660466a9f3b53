"""Unit dedup larger than memory: the same run in memory and spilled (`--memory`), on a
corpus several times the limit, with their outputs compared byte for byte and their peak
resident memory and CPU time measured by `/usr/bin/time -v`, the two alternating round by
round.

The corpus is make_corpus.py's (Debian manual pages and copyright files with planted
licence paragraphs), written N times over with the ids made distinct: a re-crawl of the
same pages, so every unit of a later copy repeats one of the first.

    python bench/units/spill.py CORPUS_DIR [--times 4] [--memory 64M] [--rounds 2]
        [--unit paragraph] [--unit-threshold T] [--neardup target/debug/neardup]
"""

import argparse
import filecmp
import json
import os
import re
import subprocess
import tempfile


def timed(cmd):
    """Runs `cmd` under /usr/bin/time -v: (peak RSS in MiB, user+sys s, wall s, stderr)."""
    out = subprocess.run(
        ["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, check=True
    ).stderr

    def field(name):
        return re.search(rf"{re.escape(name)}: (.+)", out).group(1).strip()

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
    wall_s = sum(float(x) * 60**i for i, x in enumerate(reversed(wall)))
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    return int(field("Maximum resident set size (kbytes)")) / 1024, cpu, wall_s, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--times", type=int, default=4)
    ap.add_argument("--memory", default="64M")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--unit", default="paragraph")
    ap.add_argument("--unit-threshold", help="near mode at this threshold")
    ap.add_argument("--neardup", default="target/debug/neardup")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="units-spill-", dir=a.corpus)
    big = os.path.join(work, "recrawled.jsonl")
    with open(os.path.join(a.corpus, "corpus.jsonl")) as src, open(big, "w") as out:
        lines = src.readlines()
        for copy in range(a.times):
            for line in lines:
                doc = json.loads(line)
                doc["id"] = f"{doc['id']}#{copy}"
                out.write(json.dumps(doc) + "\n")
    size = os.path.getsize(big)
    print(f"corpus: {big}, {size / 2**20:.0f} MiB, {a.times} x {len(lines)} documents")
    print(f"load average: {os.getloadavg()}")
    runs = {"memory": [], "spilled": []}
    outputs = {}
    for r in range(a.rounds):
        order = ["memory", "spilled"] if r % 2 == 0 else ["spilled", "memory"]
        for how in order:
            out = os.path.join(work, f"out-{how}.jsonl")
            cmd = [a.neardup, "dedup", "--unit", a.unit, big, "-o", out, "--force"]
            if a.unit_threshold:
                cmd += ["--unit-threshold", a.unit_threshold]
            if how == "spilled":
                cmd += ["--memory", a.memory, "--tmp", work]
            rss, cpu, wall, err = timed(cmd)
            runs[how].append((rss, cpu, wall))
            outputs[how] = out
            summary = [l for l in err.splitlines() if l.startswith(("memory", "units", "result"))]
            print(f"round {r + 1} {how}: peak {rss:.0f} MiB, cpu {cpu:.1f} s, wall {wall:.1f} s")
            for line in summary:
                print(f"    {line}")
    same = filecmp.cmp(outputs["memory"], outputs["spilled"], shallow=False)
    print(f"outputs identical: {same}")
    for how, rs in runs.items():
        print(
            f"{how}: peak RSS {max(r[0] for r in rs):.0f} MiB (max of {len(rs)}), "
            f"cpu {min(r[1] for r in rs):.1f} s, wall {min(r[2] for r in rs):.1f} s (min)"
        )
    print(f"load average: {os.getloadavg()}")
    for f in os.listdir(work):
        os.remove(os.path.join(work, f))
    os.rmdir(work)


if __name__ == "__main__":
    main()
