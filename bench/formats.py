"""The formats benchmark: the same text as JSONL, Parquet, .jsonl.gz and .jsonl.zst, and a
folder of Parquet shards under `--memory` (bench/formats; see bench/README.md).

Run it through bench/formats, which sets up bench/.venv (pyarrow) and builds neardup.
Measurements, every run its own process under GNU time (wall, CPU, peak RSS):

  parquet   the PyPI package summaries as JSONL and as Parquet (one file written by pyarrow,
            zstd, its default row groups): `dedup` and `pairs` end to end, and the read
            stage of `dedup --threads 1` (MB of text per second on one core), also on
            one shard of the listings below (longer documents)
  zstd      the same JSONL as .jsonl.gz (gzip -6) and .jsonl.zst (zstd -3, the two
            commands' defaults): `dedup` end to end and the read stage on one core
  annotate  `annotate` against `clusters` of the same JSONL
  shards    `dedup` of a folder of Parquet shards with `--memory 2G`: peak RSS against the
            limit, time, temporary disk

Variants of one comparison run alternately (A B, then B A, ...), and ratios are taken
within a round, so a change of load on the shared machine falls on both.

The shards are "PyPI listings": each document joins 10 to 60 PyPI summaries drawn at
random (a fixed seed), and one document in twenty re-posts an earlier one with one
summary replaced, one in a hundred copies one: real text, mostly distinct, with real
near-duplicates. They are written with pyarrow's defaults but zstd, in shards of about
--shard-mb MB of text.
"""

import argparse
import datetime
import json
import operator
import os
import statistics
import subprocess
import sys
import threading

import numpy as np

import corpora
from bench import fmt_bytes, fmt_secs, machine, parse_neardup_summary, run_measured, versions
from peers import read_corpus

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
SEED = 20261127
# How far back a listing may re-post an earlier one (documents).
RECENT = 200_000


# ---------------------------------------------------------------------------------------
# The data


def _fresh(path, *sources):
    """Whether path exists and is newer than every source."""
    return os.path.exists(path) and all(os.path.getmtime(path) >= os.path.getmtime(s) for s in sources)


def to_parquet(jsonl, out):
    """The JSONL corpus ({"id", "text"}) as one Parquet file, zstd, pyarrow's row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if _fresh(out, jsonl):
        return out
    ids, texts = read_corpus(jsonl, 0)
    pq.write_table(pa.table({"id": ids, "text": texts}), out + ".tmp", compression="zstd")
    os.replace(out + ".tmp", out)
    return out


def compressed(jsonl, out, command):
    """jsonl compressed by `command` (gzip -6 or zstd -3: each command's default)."""
    if not _fresh(out, jsonl):
        with open(jsonl, "rb") as src, open(out + ".tmp", "wb") as dst:
            subprocess.run(command, stdin=src, stdout=dst, check=True)
        os.replace(out + ".tmp", out)
    return out


def listings(summaries_jsonl, folder, total_mb, shard_mb):
    """Parquet shards of PyPI listings (see the module's note), about total_mb MB of text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    spec = {"source": summaries_jsonl, "total_mb": total_mb, "shard_mb": shard_mb, "seed": SEED, "version": 1}
    meta_path = os.path.join(folder, ".meta.json")
    if os.path.exists(meta_path):
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
        if meta.get("spec") == spec:
            return meta
    print(f"[formats] writing {total_mb:,} MB of PyPI listings as Parquet shards in {folder} ...", file=sys.stderr, flush=True)
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        os.remove(os.path.join(folder, name))
    os.makedirs(folder, exist_ok=True)
    with open(summaries_jsonl, encoding="utf-8") as f:
        pool = [json.loads(line)["text"] for line in f]
    rng = np.random.default_rng(SEED)
    docs = text_bytes = 0
    shard = 0
    # The summaries of the last RECENT documents, any of which a document may re-post
    # (across shards too).
    recent = [None] * RECENT
    while text_bytes < total_mb * 1e6:
        ids, texts, size = [], [], 0
        while size < shard_mb * 1e6:
            # A batch of documents: their summary counts, then every pick at once.
            counts = rng.integers(10, 61, size=10_000)
            picks = rng.integers(0, len(pool), size=int(counts.sum()))
            ends = np.cumsum(counts)
            for k in range(len(counts)):
                chosen = picks[ends[k] - counts[k] : ends[k]]
                roll = rng.random()
                if docs and roll < 0.06:
                    earlier = recent[int(rng.integers(min(docs, RECENT)))]
                    chosen = earlier if roll < 0.01 else earlier.copy()
                    if roll >= 0.01:
                        chosen[int(rng.integers(len(chosen)))] = rng.integers(len(pool))
                recent[docs % RECENT] = chosen
                text = " ".join(operator.itemgetter(*chosen)(pool))
                ids.append(f"listing-{docs}")
                texts.append(text)
                docs += 1
                size += len(text.encode("utf-8"))
        pq.write_table(pa.table({"id": ids, "text": texts}), os.path.join(folder, f"shard-{shard:04d}.parquet"), compression="zstd")
        text_bytes += size
        shard += 1
        print(f"[formats]   shard {shard}: {text_bytes / 1e6:,.0f} MB of text so far", file=sys.stderr, flush=True)
    meta = {"spec": spec, "docs": docs, "text_bytes": text_bytes, "shards": shard,
            "disk_bytes": sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder) if n.endswith(".parquet"))}
    with open(meta_path, "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
    return meta


# ---------------------------------------------------------------------------------------
# Running


class Runner:
    def __init__(self, neardup, work, timeout):
        self.neardup = neardup
        self.work = work
        self.timeout = timeout
        os.makedirs(work, exist_ok=True)
        self.count = 0

    def run(self, args, output=None):
        """One neardup run; its output (a file or folder under work/) removed afterwards."""
        self.count += 1
        log = os.path.join(self.work, f"run{self.count:03d}")
        cmd = [self.neardup, *args]
        if output:
            cmd += ["-o", os.path.join(self.work, output)]
        r = run_measured(cmd, log, self.timeout)
        stages, _ = parse_neardup_summary(r["stderr"])
        r["read"] = stages.get("read")
        r["result"] = next((line.split(None, 1)[1] for line in r["stderr"].splitlines() if line.startswith("result ")), None)
        if r["exit"] != 0:
            tail = r["stderr"].strip().splitlines()[-3:]
            print(f"[formats] {' '.join(cmd)} failed (exit {r['exit']}): {' / '.join(tail)}", file=sys.stderr)
        if output:
            subprocess.run(["rm", "-rf", os.path.join(self.work, output)], check=False)
        os.sync()  # no run pays for another's writeback
        return r

    def alternate(self, variants, rounds):
        """Runs each (name, args, output) variant once per round, the order reversed every
        other round; {name: [run, ...]}."""
        runs = {name: [] for name, _, _ in variants}
        for k in range(rounds):
            for name, args, output in variants if k % 2 == 0 else variants[::-1]:
                r = self.run(args, output)
                runs[name].append(r)
                print(f"[formats]   {name:<40} {r['wall']:8.2f} s  {fmt_bytes(r['maxrss_bytes']):>9}  exit {r['exit']}", file=sys.stderr, flush=True)
        return runs


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ok(runs):
    return all(r["exit"] == 0 and not r["timed_out"] for r in runs)


def row(name, runs, text_bytes=None):
    """A table row: median wall, CPU, read stage; peak RSS; read MB/s on the median read."""
    if not ok(runs):
        return f"| {name} | failed (exit {runs[-1]['exit']}): `{runs[-1]['stderr'].strip().splitlines()[-1:]}` | | | | |"
    read = med(r["read"] for r in runs)
    rate = f"{text_bytes / 1e6 / read:,.0f} MB/s" if text_bytes and read else "—"
    return (f"| {name} | **{fmt_secs(med(r['wall'] for r in runs))}** | {fmt_secs(med(r['cpu'] for r in runs))} | "
            f"{fmt_bytes(max(r['maxrss_bytes'] for r in runs))} | {fmt_secs(read)} | {rate} |")


def ratios(a_runs, b_runs, key="wall"):
    """B / A within each round."""
    return [b[key] / a[key] for a, b in zip(a_runs, b_runs) if a[key] and b[key]]


def ratio_line(label, a_runs, b_runs):
    if not (ok(a_runs) and ok(b_runs)):
        return f"- {label}: —"
    wall, cpu = ratios(a_runs, b_runs), ratios(a_runs, b_runs, "cpu")
    return (f"- {label}: wall {med(wall):.3f} (rounds: {', '.join(f'{x:.2f}' for x in wall)}), "
            f"CPU {med(cpu):.3f} (rounds: {', '.join(f'{x:.2f}' for x in cpu)})")


HEADER = ["| run | end to end (median) | CPU (median) | peak RSS (max) | read stage (median) | text read per second |",
          "|---|--:|--:|--:|--:|--:|"]


# ---------------------------------------------------------------------------------------
# The measurements


def bench_parquet(runner, summaries, listing_shard, rounds):
    jsonl, parquet = summaries["path"], summaries["parquet"]
    nb = summaries["text_bytes"]
    out = ["## PyPI package summaries: Parquet (zstd, written by pyarrow) against JSONL", "",
           f"{summaries['docs']:,} summaries, {nb / 1e6:.1f} MB of text; JSONL {os.path.getsize(jsonl) / 1e6:.1f} MB, "
           f"Parquet {os.path.getsize(parquet) / 1e6:.1f} MB. {rounds} rounds, alternating.", ""]
    for command, extra, ext_of in [
        ("dedup", [], lambda f: "out" + (".parquet" if f == "parquet" else ".jsonl")),
        ("pairs", ["--output-format", "tsv"], lambda f: "out.tsv"),
    ]:
        variants = [(f"{command} JSONL", [command, jsonl, *extra], ext_of("jsonl")),
                    (f"{command} Parquet", [command, parquet, *extra], ext_of("parquet"))]
        runs = runner.alternate(variants, rounds)
        out += [f"`neardup {command} FILE {' '.join(extra)} -o OUT`:", "", *HEADER]
        out += [row(name, runs[name], nb) for name, _, _ in variants]
        out += ["", ratio_line(f"Parquet / JSONL, `{command}`", runs[variants[0][0]], runs[variants[1][0]]), ""]
    variants = [("dedup --threads 1, JSONL", ["dedup", jsonl, "--threads", "1"], "out.jsonl"),
                ("dedup --threads 1, Parquet", ["dedup", parquet, "--threads", "1"], "out.parquet")]
    if listing_shard:
        variants.append((f"dedup --threads 1, one listings shard ({listing_shard['text_bytes'] / 1e6:.0f} MB of text)",
                         ["dedup", listing_shard["path"], "--threads", "1"], "out.parquet"))
    runs = runner.alternate(variants, rounds)
    out += ["Reading on one core (`--threads 1`; the read stage of neardup's summary, text bytes / its seconds):", "", *HEADER]
    out += [row(name, runs[name], listing_shard["text_bytes"] if "listings" in name else nb) for name, _, _ in variants]
    out += ["", ratio_line("Parquet / JSONL, read stage on one core", [dict(r, wall=r["read"], cpu=r["read"]) for r in runs[variants[0][0]]],
                           [dict(r, wall=r["read"], cpu=r["read"]) for r in runs[variants[1][0]]]), ""]
    return out


def bench_reader(readrate, summaries, listing_shard, rounds):
    """The reader alone (bench/readrate: neardup_io::open, every record taken out, one
    thread), MB of text per second, the files alternating."""
    files = [("JSONL", summaries["path"]), ("Parquet (pyarrow, zstd)", summaries["parquet"]),
             (".jsonl.gz", summaries["gz"]), (".jsonl.zst", summaries["zst"])]
    if listing_shard:
        files.append((f"Parquet, one listings shard ({listing_shard['text_bytes'] / 1e6:.0f} MB of text)", listing_shard["path"]))
    rates = {name: [] for name, _ in files}
    for k in range(rounds):
        for name, path in files if k % 2 == 0 else files[::-1]:
            p = subprocess.run([readrate, "--passes", "5", path], capture_output=True, text=True, check=True)
            rates[name].append(json.loads(p.stdout)["text_mb_per_s"])
            print(f"[formats]   read {name:<40} {rates[name][-1]:8.1f} MB/s", file=sys.stderr, flush=True)
    out = ["## The reader alone, one core", "",
           "`bench/readrate --passes 5 FILE` (built from this checkout's neardup-io): `neardup_io::open` on one "
           "thread, every record taken out of the reader and nothing else done, so the figure is the reader's own; "
           "MB of text (UTF-8 bytes of the text fields) per second, the best of 5 passes over the file (the least "
           f"disturbed on a shared machine). {rounds} rounds, the files alternating; the table gives the median "
           "round.", "",
           "| input | MB of text / s (median) | rounds |", "|---|--:|---|"]
    out += [f"| {name} | **{med(rates[name]):,.0f}** | {', '.join(f'{x:,.0f}' for x in rates[name])} |" for name, _ in files]
    ratio = lambda a, b: [y / x for x, y in zip(rates[a], rates[b])]  # noqa: E731
    pj, zg = ratio("JSONL", "Parquet (pyarrow, zstd)"), ratio(".jsonl.gz", ".jsonl.zst")
    out += ["", f"- Parquet / JSONL, text per second: {med(pj):.2f} (rounds: {', '.join(f'{x:.2f}' for x in pj)})",
            f"- .jsonl.zst / .jsonl.gz, text per second: {med(zg):.2f} (rounds: {', '.join(f'{x:.2f}' for x in zg)})", ""]
    return out


def bench_zstd(runner, summaries, rounds):
    gz, zst, nb = summaries["gz"], summaries["zst"], summaries["text_bytes"]
    out = ["## .jsonl.zst against .jsonl.gz", "",
           f"The same JSONL ({os.path.getsize(summaries['path']) / 1e6:.1f} MB) as `gzip -6` ({os.path.getsize(gz) / 1e6:.1f} MB) "
           f"and `zstd -3` ({os.path.getsize(zst) / 1e6:.1f} MB). {rounds} rounds, alternating.", "", *HEADER]
    variants = [("dedup .jsonl.gz", ["dedup", gz], "out.jsonl"), ("dedup .jsonl.zst", ["dedup", zst], "out.jsonl"),
                ("dedup --threads 1 .jsonl.gz", ["dedup", gz, "--threads", "1"], "out.jsonl"),
                ("dedup --threads 1 .jsonl.zst", ["dedup", zst, "--threads", "1"], "out.jsonl")]
    runs = runner.alternate(variants, rounds)
    out += [row(name, runs[name], nb) for name, _, _ in variants]
    read = lambda rs: [dict(r, wall=r["read"], cpu=r["read"]) for r in rs]  # noqa: E731
    out += ["", ratio_line("zst / gz, `dedup`", runs["dedup .jsonl.gz"], runs["dedup .jsonl.zst"]),
            ratio_line("zst / gz, read stage on one core", read(runs["dedup --threads 1 .jsonl.gz"]), read(runs["dedup --threads 1 .jsonl.zst"])), ""]
    return out


def bench_annotate(runner, summaries, rounds):
    jsonl, nb = summaries["path"], summaries["text_bytes"]
    out = ["## `annotate` against `clusters`", "", f"The PyPI package summaries as JSONL. {rounds} rounds, alternating.", "", *HEADER]
    variants = [("clusters", ["clusters", jsonl], "out.jsonl"), ("annotate", ["annotate", jsonl], "out.jsonl")]
    runs = runner.alternate(variants, rounds)
    out += [row(name, runs[name], nb) for name, _, _ in variants]
    out += ["", ratio_line("annotate / clusters", runs["clusters"], runs["annotate"]), ""]
    return out


def bench_shards(runner, meta, folder, memory, tmp, command, as_files):
    """One run on the shard folder, its temporary disk watched (spilled files have no names)."""
    os.makedirs(tmp, exist_ok=True)
    lowest = [None]
    done = threading.Event()

    def free():
        s = os.statvfs(tmp)
        return s.f_bavail * s.f_frsize

    before = free()
    lowest[0] = before

    def watch():
        while not done.wait(0.5):
            lowest[0] = min(lowest[0], free())

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    inputs = sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".parquet")) if as_files else [folder]
    args = [command, *inputs, "--memory", memory, "--tmp", tmp]
    output = "shards-out" if command == "dedup" else "shards-out.jsonl"
    r = runner.run(args, output)
    done.set()
    watcher.join()
    floor = 40 * meta["docs"]  # about 40 bytes held per document (README, "How big can it get?")
    limit = _parse_size(memory)
    out = ["## A folder of Parquet shards under `--memory " + memory + "`", "",
           f"{meta['shards']} shards of PyPI listings, {meta['docs']:,} documents, {meta['text_bytes'] / 1e9:.2f} GB of text, "
           f"{meta['disk_bytes'] / 1e9:.2f} GB of Parquet (zstd).", "",
           f"`neardup {command} {os.path.relpath(folder, ROOT) + ('/*.parquet' if as_files else '')} {' '.join(args[1 + len(inputs):])} -o OUT`", "",
           "| end to end | CPU | peak RSS | limit + per-document floor (40 B × documents) | within | peak temporary disk | summary |",
           "|--:|--:|--:|--:|---|--:|---|"]
    if r["exit"] != 0:
        out.append(f"| failed (exit {r['exit']}) | | | | | | `{r['stderr'].strip().splitlines()[-1:]}` |")
    else:
        bound = limit + floor
        out.append(f"| **{fmt_secs(r['wall'])}** | {fmt_secs(r['cpu'])} | {fmt_bytes(r['maxrss_bytes'])} | "
                   f"{fmt_bytes(limit)} + {fmt_bytes(floor)} = {fmt_bytes(bound)} | {'yes' if r['maxrss_bytes'] <= bound else '**no**'} | "
                   f"{fmt_bytes(max(0, before - lowest[0]))} | {(r['result'] or '').replace('|', '—')} |")
    return out + [""]


def _parse_size(text):
    units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    t = text.upper().removesuffix("IB").removesuffix("B")
    return int(float(t[:-1]) * units[t[-1]]) if t[-1] in units else int(t)


# ---------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--neardup", required=True)
    ap.add_argument("--readrate", help="the bench/readrate binary (the reader alone); without it that table is left out")
    ap.add_argument("--neardup-label", help="what the binary is, for the report (default: its version and the checkout's commit)")
    ap.add_argument("--only", action="append", choices=["read", "parquet", "zstd", "annotate", "shards"],
                    help="run only these measurements (repeatable; default: all)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of each alternating comparison (default 5)")
    ap.add_argument("--pypi-tsv", default=os.path.join(ROOT, "..", ".library", "env", "packages", "pypi.tsv"))
    ap.add_argument("--shards-gb", type=float, default=10, help="GB of text in the shard folder (default 10)")
    ap.add_argument("--shard-mb", type=int, default=256, help="MB of text per shard (default 256)")
    ap.add_argument("--memory", default="2G", help="--memory of the shards run (default 2G)")
    ap.add_argument("--shards-command", default="dedup", choices=["dedup", "clusters", "pairs"])
    ap.add_argument("--shards-as-files", action="store_true", help="give the shards to neardup as files, not the folder")
    ap.add_argument("--tmp", default=None, help="--tmp of the shards run (default bench/data/formats/tmp)")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--results", default=os.path.join(BENCH, "results", "RESULTS-formats.md"))
    args = ap.parse_args()
    only = set(args.only or ["read", "parquet", "zstd", "annotate", "shards"])

    data = os.path.join(BENCH, "data", "formats")
    os.makedirs(data, exist_ok=True)
    summaries = corpora.pypi_summaries(os.path.join(BENCH, "data"), args.pypi_tsv, False)
    summaries["parquet"] = to_parquet(summaries["path"], os.path.join(data, "pypi-summaries.parquet"))
    summaries["gz"] = compressed(summaries["path"], os.path.join(data, "pypi-summaries.jsonl.gz"), ["gzip", "-6", "-c"])
    summaries["zst"] = compressed(summaries["path"], os.path.join(data, "pypi-summaries.jsonl.zst"), ["zstd", "-3", "-c", "-q"])
    shard_folder = os.path.join(data, f"listings-{args.shards_gb:g}gb")
    meta = None
    if only & {"shards", "parquet", "read"}:
        meta = listings(summaries["path"], shard_folder, int(args.shards_gb * 1000), args.shard_mb)
    listing_shard = None
    if meta:
        first = os.path.join(shard_folder, "shard-0000.parquet")
        import pyarrow.parquet as pq

        texts = pq.read_table(first, columns=["text"]).column("text")
        listing_shard = {"path": first, "text_bytes": sum(len(t.as_py().encode("utf-8")) for t in texts)}

    runner = Runner(args.neardup, os.path.join(data, "runs"), args.timeout)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    vers = versions(args.neardup, ["pyarrow"])
    if args.neardup_label:
        vers["neardup"] = args.neardup_label
    ms = machine()
    lines = ["# Formats: Parquet, zstd, annotate and shards", "",
             f"- **date**: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
             f"- **machine**: {ms['nproc']} cores ({ms['cpu']}), {ms['memory']} memory; load average {load} at the start "
             "(other work shares the machine: compare rows and ratios of one run)",
             "- **versions**: " + ", ".join(f"{k} {v}" if not v.startswith(k) else v for k, v in vers.items()),
             f"- **command**: `{os.environ.get('BENCH_COMMAND', 'bench/formats')}`", ""]
    if "read" in only and args.readrate:
        lines += bench_reader(args.readrate, summaries, listing_shard, args.rounds)
    if "parquet" in only:
        lines += bench_parquet(runner, summaries, listing_shard, args.rounds)
    if "zstd" in only:
        lines += bench_zstd(runner, summaries, args.rounds)
    if "annotate" in only:
        lines += bench_annotate(runner, summaries, args.rounds)
    if "shards" in only:
        lines += bench_shards(runner, meta, shard_folder, args.memory, args.tmp or os.path.join(data, "tmp"), args.shards_command,
                              args.shards_as_files)
    text = "\n".join(lines) + "\n"
    with open(args.results, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    print(f"(written to {os.path.relpath(args.results, ROOT)})", file=sys.stderr)


if __name__ == "__main__":
    main()
