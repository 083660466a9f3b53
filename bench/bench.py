"""The side-by-side benchmark: neardup against datasketch, rensa and gaoya.

Run it through bench/run, which sets up the virtual environment and builds neardup; see
bench/README.md for what is measured and how. For each corpus this script

  1. builds the corpus (corpora.py),
  2. runs `neardup pairs --exact` (the ground truth), `neardup pairs` with all cores and
     with one thread, and each peer through peers.py, every one as its own process under
     GNU time (CPU time and peak RSS),
  3. measures each tool's recall against the exact pairs,
  4. prints a Markdown table and writes it to bench/results/RESULTS-<corpus>.md.
"""

import argparse
import datetime
import filecmp
import importlib.util
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from importlib.metadata import PackageNotFoundError, version

import numpy as np

import corpora
from peers import sample_indices
from shingling import K

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
PEERS = ["rensa", "gaoya", "datasketch"]
# Peers that deduplicate (remove documents) rather than list pairs: compared with
# `neardup dedup` in a table of their own.
DEDUP_PEERS = ["datatrove"]

# The task, the same for every tool.
THRESHOLD = 0.8
NUM_PERM = 128
BANDS = 16
ROWS = 8
# Corpora whose pairs crowd at the threshold get one more neardup row with a plan that
# finds 99.8 % of the pairs at exactly t (16 x 8 finds 94.7 %).
RECALL_PLANS = {"templated-pages": (20, 6), "templated-pages-quick": (20, 6)}


# ---------------------------------------------------------------------------------------
# Running and measuring one process


TIME = "/usr/bin/time"


def run_measured(cmd, log_prefix, timeout, session_memory=False):
    """Runs cmd with stdout/stderr to files; its wall time, CPU time and peak RSS.

    GNU time reports the rusage of the command it starts. Taking the child's rusage here
    directly (wait4) would be wrong: Linux carries the high-water RSS of the forked
    copy of this (large) Python process over the exec into the child's maxrss.

    GNU time's peak is that of the largest single process. With `session_memory`, the
    memory of every process of the run together (a pool of workers) is also sampled:
    "session_peak_bytes".
    """
    time_file = log_prefix + ".time"
    with open(log_prefix + ".stdout", "wb") as so, open(log_prefix + ".stderr", "wb") as se:
        start = time.perf_counter()
        # A session of its own, so a timeout can kill time and the command together.
        proc = subprocess.Popen([TIME, "-f", "%M %U %S %x", "-o", time_file, *cmd], stdout=so, stderr=se, start_new_session=True)
        sampler = SessionMemory(proc.pid) if session_memory else None
        try:
            proc.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            timed_out = True
        wall = time.perf_counter() - start
        session_peak, session_cpu = sampler.stop() if sampler else (None, None)
    with open(log_prefix + ".stderr", encoding="utf-8", errors="replace") as f:
        stderr = f.read()
    maxrss_kb, cpu, status = 0, 0.0, proc.returncode
    if not timed_out and os.path.exists(time_file):
        with open(time_file, encoding="utf-8", errors="replace") as f:
            last = f.read().strip().splitlines()[-1:]  # after "Command terminated by signal N", if any
        fields = last[0].split() if last else []
        if len(fields) == 4:
            maxrss_kb, cpu, status = int(fields[0]), float(fields[1]) + float(fields[2]), int(fields[3])
    return {
        "cmd": cmd,
        "wall": wall,
        "cpu": cpu,
        "maxrss_bytes": maxrss_kb * 1024,
        "exit": proc.returncode or status,  # time's own failure, else the command's status
        "timed_out": timed_out,
        "stderr": stderr,
        "session_peak_bytes": session_peak,
        "session_cpu": session_cpu,
    }


class SessionMemory:
    """Samples, ten times a second, the memory of every process in a session: the sum of
    their proportional set sizes (PSS: a page shared by forked workers counts once in
    all), so a pool of workers is measured as a whole. Also their CPU time as last seen
    (a process's last tenth of a second may be missed): GNU time counts only the
    processes its command waited for, and a pool's workers belong to a server process."""

    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self, sid):
        self.sid = sid
        self.peak = 0
        self.cpu_ticks = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.done.wait(0.1):
            self.peak = max(self.peak, self._sample())

    def _sample(self):
        total = 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    # Fields after the command name, which is in parentheses: state, ppid,
                    # pgrp, session, ..., utime and stime at 11 and 12.
                    fields = f.read().rsplit(b")", 1)[1].split()
                if int(fields[3]) != self.sid:
                    continue
                self.cpu_ticks[pid] = int(fields[11]) + int(fields[12])
                with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                    for line in f:
                        if line.startswith(b"Pss:"):
                            total += int(line.split()[1]) * 1024
                            break
            except (OSError, IndexError, ValueError):
                continue  # the process ended meanwhile
        return total

    def stop(self):
        """The peak memory (bytes) and the CPU time (seconds) of the session."""
        self.done.set()
        self.thread.join()
        return self.peak, sum(self.cpu_ticks.values()) / self.TICK


# ---------------------------------------------------------------------------------------
# neardup


NEARDUP_LABELS = ["exact join", "read", "shingle", "sketch", "group", "verify", "write", "total"]


def parse_neardup_summary(stderr):
    """Stage times (seconds) and the shingle count from neardup's summary on stderr."""
    stages, shingles = {}, None
    for line in stderr.splitlines():
        for label in NEARDUP_LABELS:
            if line.startswith(label + " "):
                times = re.findall(r"(\d+(?:\.\d+)?)s\b", line)
                if times:
                    stages[label] = float(times[-1])
                if label == "shingle":
                    m = re.search(r"([\d,]+) shingles", line)
                    shingles = int(m.group(1).replace(",", "")) if m else None
                break
    return stages, shingles


def run_neardup(neardup, corpus, out, log, timeout, exact=False, threads=None, seed=None, extra=(), auto=False, plan=None):
    """One `neardup pairs` run: the exact join, LSH with the peers' band plan (or `plan`,
    a (bands, rows) pair), or `auto` (neardup's own choice of method, default plan)."""
    # TSV, the format the peers' pairs are written in.
    cmd = [neardup, "pairs", corpus, "-t", str(THRESHOLD), "-o", out, "--output-format", "tsv"]
    if exact:
        cmd += ["--exact"]
    elif not auto:
        bands, rows = plan or (BANDS, ROWS)
        cmd += ["--bands", str(bands), "--rows", str(rows), "--num-perm", str(NUM_PERM)]
    if threads:
        cmd += ["--threads", str(threads)]
    if seed:
        cmd += ["--seed", str(seed)]
    cmd += list(extra)
    r = run_measured(cmd, log, timeout)
    s, r["shingles"] = parse_neardup_summary(r["stderr"])
    # Under --method auto, what it chose and why.
    r["method"] = next((line.split(None, 1)[1] for line in r["stderr"].splitlines() if line.startswith("method ")), None)
    exact = exact or "exact join" in s
    # The plan line says what neardup did (shingles, sketch, bands); it goes in the report.
    r["plan"] = next((line.split(None, 1)[1] for line in r["stderr"].splitlines() if line.startswith("plan ")), None)
    r["stages"] = {
        "read": s.get("read"),
        "shingle": s.get("shingle"),
        "sketch_lsh": None if exact else _sum(s.get("sketch"), s.get("group")),
        "verify": s.get("exact join") if exact else s.get("verify"),
        "write": s.get("write"),
    }
    m = re.search(r"([\d,]+) pairs among", r["stderr"])
    r["pairs"] = int(m.group(1).replace(",", "")) if m else None
    m = re.search(r"([\d,]+) candidates", r["stderr"])
    r["candidates"] = int(m.group(1).replace(",", "")) if m else None
    return r


def _sum(*xs):
    return None if any(x is None for x in xs) else sum(xs)


# ---------------------------------------------------------------------------------------
# Pairs → keys i * n + j (i < j) for set arithmetic in NumPy


def corpus_ids(path):
    """The corpus's ids, in order."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["id"] for line in f]


# Random odd multipliers of the span hash, one per byte position; ids are at most this long.
_MAX_ID = 4096
_WEIGHTS = np.random.default_rng(0x6E656172).integers(0, 2**63, size=_MAX_ID, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


def _span_hashes(buf, starts, ends):
    """A 64-bit hash of each byte string buf[start:end], computed for all at once.

    sum((byte_i + 1) * w_i) mod 2^64 with random odd w_i: two different ids collide with
    probability about 2^-56, and the ids of a corpus are checked to hash apart. Parsing
    neardup's output line by line in Python would take minutes for millions of pairs.
    """
    lens = ends - starts
    if len(lens) and lens.max() > _MAX_ID:
        raise ValueError("id too long for the pair parser")
    seg = np.zeros(len(lens), dtype=np.int64)
    np.cumsum(lens[:-1], out=seg[1:])
    pos = np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(seg, lens)
    vals = (buf[np.repeat(starts, lens) + pos].astype(np.uint64) + np.uint64(1)) * _WEIGHTS[pos]
    vals = np.append(vals, np.uint64(0))  # reduceat needs a valid index for a trailing empty span
    h = np.add.reduceat(vals, seg)
    h[lens == 0] = 0
    return h


class IdIndex:
    """Maps the byte spans of ids found in an output file to their document numbers."""

    def __init__(self, ids):
        raw = [i.encode("utf-8") for i in ids]
        buf = np.frombuffer(b"".join(raw), dtype=np.uint8)
        lens = np.fromiter(map(len, raw), dtype=np.int64, count=len(raw))
        ends = np.cumsum(lens)
        h = _span_hashes(buf, ends - lens, ends)
        self.order = np.argsort(h, kind="stable")
        self.sorted = h[self.order]
        if len(self.sorted) > 1 and np.any(self.sorted[1:] == self.sorted[:-1]):
            raise ValueError("duplicate ids (or a hash collision) in the corpus")
        self.n = len(ids)

    def lookup(self, buf, starts, ends):
        h = _span_hashes(buf, starts, ends)
        pos = np.minimum(np.searchsorted(self.sorted, h), len(self.sorted) - 1)
        if np.any(self.sorted[pos] != h):
            raise KeyError("an id in the output is not in the corpus")
        return self.order[pos]


def neardup_keys(path, index):
    """Keys i * n + j (i < j) of the pairs in neardup's TSV output (`--output-format tsv`)."""
    parts = []
    with open(path, "rb") as f:
        f.readline()  # the header: a, b, jaccard, estimate
        while True:
            chunk = f.read(1 << 27)
            if not chunk:
                break
            chunk += f.readline()
            parts.append(_chunk_keys(chunk, index))
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


_TSV_ESCAPES = {b"t": b"\t", b"n": b"\n", b"r": b"\r", b"\\": b"\\"}


def _unescape(field):
    return re.sub(rb"\\(.)", lambda m: _TSV_ESCAPES.get(m.group(1), m.group(0)), field)


def _chunk_keys(chunk, index):
    # A line is A<TAB>B<TAB>J<TAB>E: three tabs, the ids before the first two. Ids with
    # escapes (a backslash) go through the slow path, unescaped.
    buf = np.frombuffer(chunk, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    tabs = np.flatnonzero(buf == 9)
    if len(tabs) == 3 * len(nl) and not np.count_nonzero(buf == 92):
        starts = np.concatenate(([0], nl[:-1] + 1)).astype(np.int64)
        t1, t2 = tabs[0::3], tabs[1::3]
        a = index.lookup(buf, starts, t1)
        b = index.lookup(buf, t1 + 1, t2)
        return np.minimum(a, b) * index.n + np.maximum(a, b)
    rows = [line.split(b"\t") for line in chunk.split(b"\n") if line]
    names = list(dict.fromkeys(_unescape(x) for r in rows for x in r[:2]))
    nbuf = np.frombuffer(b"".join(names), dtype=np.uint8)
    lens = np.fromiter(map(len, names), dtype=np.int64, count=len(names))
    ends = np.cumsum(lens)
    num = dict(zip(names, index.lookup(nbuf, ends - lens, ends)))
    a = np.fromiter((num[_unescape(r[0])] for r in rows), dtype=np.int64, count=len(rows))
    b = np.fromiter((num[_unescape(r[1])] for r in rows), dtype=np.int64, count=len(rows))
    return np.minimum(a, b) * index.n + np.maximum(a, b)


def restrict(truth, n, sample):
    """The ground-truth keys of the pairs inside a subsample, renumbered as in it."""
    pos = np.full(n, -1, dtype=np.int64)
    pos[np.asarray(sample)] = np.arange(len(sample))
    pi, pj = pos[truth // n], pos[truth % n]
    keep = (pi >= 0) & (pj >= 0)
    return np.unique(pi[keep] * len(sample) + pj[keep])


def score(found, truth):
    hits = int(np.isin(found, truth, assume_unique=True).sum())
    return {
        "recall": hits / len(truth) if len(truth) else 1.0,
        "missed": len(truth) - hits,
        "not_in_truth": len(found) - hits,
    }


# ---------------------------------------------------------------------------------------
# The report


def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "?"
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    return {"nproc": os.cpu_count(), "cpu": cpu, "memory": mem, "os": platform.platform()}


def versions(neardup, packages=None, labels=None):
    """neardup's version (with the commit, and whether it had uncommitted changes), rustc's,
    Python's and the packages' (default: the peers and NumPy), each under its label."""
    v = {}
    out = subprocess.run([neardup, "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if commit.returncode == 0:
        clean = subprocess.run(["git", "-C", ROOT, "diff-index", "--quiet", "HEAD", "--"]).returncode == 0
        out += f" (commit {commit.stdout.strip()}{'' if clean else ' + uncommitted changes'})"
    v["neardup"] = out
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True)
    if rustc.returncode == 0:
        v["rustc"] = rustc.stdout.strip()
    v["python"] = platform.python_version()
    for pkg in packages or PEERS + DEDUP_PEERS + ["numpy"]:
        label = (labels or {}).get(pkg, pkg)
        try:
            v[label] = version(pkg)
        except PackageNotFoundError:
            v[label] = "not installed"
    return v


def fmt_secs(s):
    if s is None:
        return "—"
    return f"{s:.2f} s" if s < 10 else f"{s:.1f} s"


def fmt_bytes(b):
    return f"{b / 2**30:.2f} GiB" if b >= 2**30 else f"{b / 2**20:.0f} MiB"


def fmt_int(n):
    return "—" if n is None else f"{n:,}"


def render(corpus, rows, info, args):
    ms = info["machine"]
    lines = [
        f"# Benchmark: {corpus['title']}",
        "",
        f"- **date**: {info['date']}",
        f"- **machine**: {ms['nproc']} cores ({ms['cpu']}), {ms['memory']} memory, {ms['os']}; "
        f"load average {info['load']} at the start (other work may share the machine)",
        f"- **corpus**: {corpus['docs']:,} documents, {corpus['text_bytes'] / 1e6:.1f} MB of text "
        f"(UTF-8 bytes of the text fields) — {corpus['origin']}",
        f"- **task**: char {K}-gram shingles after neardup's normalization, {NUM_PERM} permutations, "
        f"{BANDS} bands × {ROWS} rows, threshold {THRESHOLD}, every candidate verified by exact Jaccard "
        "of its shingle sets; recall against `neardup pairs --exact`",
        "- **versions**: " + ", ".join(f"{k} {v}" if not v.startswith(k) else v for k, v in info["versions"].items()),
        f"- **command**: `{info['command']}`",
        "",
        "| tool | read | shingle | sketch + LSH | verify | write | end to end | CPU | docs/s | MB/s | peak RSS | pairs | recall |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for row in rows:
        r = row["run"]
        name = row["name"]
        why = why_no_result(row, args)
        if why:
            lines.append(f"| {name} | {why} |" + " |" * 11)
            continue
        st = r["stages"]
        docs = row.get("docs", corpus["docs"])
        nbytes = row.get("text_bytes", corpus["text_bytes"])
        recall = row.get("score")
        lines.append(
            "| "
            + " | ".join(
                [
                    name,
                    fmt_secs(st["read"]),
                    fmt_secs(st["shingle"]),
                    fmt_secs(st["sketch_lsh"]),
                    fmt_secs(st["verify"]),
                    fmt_secs(st["write"]),
                    f"**{fmt_secs(r['wall'])}**",
                    fmt_secs(r["cpu"]),
                    f"{docs / r['wall']:,.0f}",
                    f"{nbytes / 1e6 / r['wall']:.2f}",
                    fmt_bytes(r["maxrss_bytes"]),
                    fmt_int(r["pairs"]),
                    "—" if recall is None else f"{100 * recall['recall']:.3f} %",
                ]
            )
            + " |"
        )
    lines += ["", *summary_lines(rows), "", "Columns:", ""]
    lines += [
        "- *read*: parsing the JSONL corpus; *shingle*: normalization and char 5-gram sets "
        "(in Rust for neardup, in Python for the peers — `bench/shingling.py`, the same sets); "
        "*sketch + LSH*: MinHash signatures, the 16 × 8 band index and the candidate pairs "
        "(neardup: its `sketch` + `group` stages; neardup enumerates candidate pairs inside "
        "its `verify` stage); *verify*: exact Jaccard of the candidates (neardup --exact: the "
        "whole exact join); *write*: the verified pairs to a file.",
        "- *end to end*: wall time of the whole process as a user runs it (start-up and "
        "imports included); docs/s and MB/s are taken on it. *CPU*: user + system time of "
        "the process (above the wall time when it used both cores). *peak RSS*: the "
        "process's maximum resident set size. CPU and RSS as GNU time reports them.",
        "- *recall*: share of the exact join's pairs that the tool reported. "
        "Every tool verifies exactly, so none reports a pair below the threshold.",
    ]
    lines += ["", *detail_lines(rows, corpus)]
    return "\n".join(lines) + "\n"


def why_no_result(row, args):
    """Why a row has no result (not installed, timed out, failed), or None."""
    r = row["run"]
    if r is not None and r["exit"] == 0 and not r["timed_out"]:
        return None
    return (
        row.get("skip")
        or (f"did not finish in {args.timeout:.0f} s" if r and r["timed_out"] else None)
        or f"failed (exit {r['exit'] if r else '?'}; see {row.get('log', '?')}.stderr)"
    )


def not_installed(tool):
    """The row of a peer that pip could not install."""
    why = "not installed: pip could not install it here (see bench/.venv/install.log)"
    print(f"   {tool:<28} {why}", file=sys.stderr)
    return {"key": tool, "name": tool, "run": None, "skip": why}


def summary_lines(rows):
    ok = {
        row["key"]: row
        for row in rows
        if row["run"] and row["run"]["exit"] == 0 and not row["run"]["timed_out"] and not row.get("sample")
    }
    out = []
    nd = ok.get("neardup")
    peers = [ok[p] for p in PEERS if p in ok]
    if nd and peers:
        best = min(peers, key=lambda r: r["run"]["wall"])
        a, b = nd["run"]["wall"], best["run"]["wall"]
        out.append(
            f"**End to end, neardup / fastest peer ({best['name']})**: {a:.2f} s / {b:.2f} s = "
            f"**{a / b:.3f}** (neardup {'is ' + format(b / a, '.1f') + '× faster' if a < b else 'is slower'})."
        )
        best_lsh = min(peers, key=lambda r: r["run"]["stages"]["sketch_lsh"])
        a2, b2 = nd["run"]["stages"]["sketch_lsh"], best_lsh["run"]["stages"]["sketch_lsh"]
        if a2 and b2:
            out.append(
                f"Sketch + LSH only, neardup / fastest peer ({best_lsh['name']}): "
                f"{a2:.2f} s / {b2:.2f} s = {a2 / b2:.3f}."
            )
        seeds = nd.get("seed_recalls")
        if seeds and len(seeds) > 1:
            out.append(
                f"neardup's recall over seeds 1–{len(seeds)} (`--seed`, same plan): min "
                f"{100 * min(seeds):.3f} %, mean {100 * sum(seeds) / len(seeds):.3f} %, max {100 * max(seeds):.3f} % "
                f"({', '.join(f'{100 * x:.3f}' for x in seeds)}). Every tool bands with the same 16 × 8 plan; "
                "neardup also checks pairs beyond the buckets (around large groups of copies, and through shared "
                "verified neighbours), which the `--no-neighbours` row leaves out."
            )
        nd1 = ok.get("neardup-1")
        if nd1:
            out.append(
                f"With one thread, neardup's end to end is {nd1['run']['wall']:.2f} s "
                f"= {nd1['run']['wall'] / b:.3f} of the fastest peer's."
            )
    for row in rows:
        if row.get("sample") and row["run"] and row["run"]["exit"] == 0:
            out.append(
                f"{row['name']} ran on an evenly spaced subsample of {row['docs']:,} documents "
                "(--datasketch-sample); its recall is against the exact pairs inside that sample, "
                "and its times are not comparable to the other rows'."
            )
    return out


def detail_lines(rows, corpus):
    out = ["Details:", ""]
    for row in rows:
        r = row["run"]
        if not r or r["exit"] != 0 or r["timed_out"]:
            continue
        bits = []
        if r.get("candidates") is not None:
            own = " (as neardup's summary counts them)" if row["key"].startswith("neardup") or row["key"] == "exact" else ""
            bits.append(f"{r['candidates']:,} candidate pairs{own}")
        if r.get("substages"):
            bits.append("sketch + LSH = " + ", ".join(f"{k.replace('_', ' ')} {fmt_secs(v)}" for k, v in r["substages"].items()))
        if r.get("shingles") is not None:
            bits.append(f"{r['shingles']:,} shingles")
        sc = row.get("score")
        if sc:
            bits.append(f"missed {sc['missed']:,} exact pairs, {sc['not_in_truth']:,} pairs not in the exact join")
        if row.get("note"):
            bits.append(row["note"])
        if r.get("plan"):
            bits.append(f"plan: `{r['plan']}`")
        out.append(f"- {row['name']}: " + "; ".join(bits) + ".")
    shingle_counts = {row["name"]: row["run"].get("shingles") for row in rows if row["run"] and row["run"].get("shingles") and not row.get("sample")}
    if len(set(shingle_counts.values())) == 1:
        out.append(
            f"- Shingle sets agree: Rust and Python count the same {next(iter(shingle_counts.values())):,} "
            "(document, shingle) pairs."
        )
    elif shingle_counts:
        out.append(f"- **Shingle counts differ**: {shingle_counts}.")
    return out


# ---------------------------------------------------------------------------------------
# Deduplication: `neardup dedup` beside datatrove's MinHash pipeline


def run_neardup_dedup(neardup, corpus, log, timeout, exact=False):
    """One `neardup dedup` run as a user runs it (defaults, or --exact); the ids it removed."""
    kept, removed = log + ".kept.jsonl", log + ".removed.jsonl"
    cmd = [neardup, "dedup", corpus, "-t", str(THRESHOLD), "-o", kept, "--removed", removed]
    if exact:
        cmd += ["--exact"]
    r = run_measured(cmd, log, timeout, session_memory=True)
    lines = r["stderr"].splitlines()
    r["method"] = next((line.split(None, 1)[1] for line in lines if line.startswith("method ")), None)
    r["plan"] = next((line.split(None, 1)[1] for line in lines if line.startswith("plan ")), None)
    if r["exit"] == 0 and not r["timed_out"]:
        with open(removed, encoding="utf-8") as f:
            r["removed_ids"] = [json.loads(line)["id"] for line in f]
    for p in (kept, removed):
        if os.path.exists(p):
            os.remove(p)
    return r


def write_shards(path, folder, count):
    """The corpus as `count` JSONL files of consecutive records (the same records in the
    same order): datatrove runs one task per file."""
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(path, "rb") as f:
        lines = f.readlines()
    step = -(-len(lines) // count)
    for k in range(count):
        with open(os.path.join(folder, f"{k:05d}.jsonl"), "wb") as out:
            out.writelines(lines[k * step : (k + 1) * step])


def run_datatrove(corpus, runs_dir, log, timeout):
    """datatrove's four MinHash stages (datatrove_dedup.py) on the corpus, one shard per core."""
    shards, work = os.path.join(runs_dir, "datatrove-shards"), os.path.join(runs_dir, "datatrove-work")
    write_shards(corpus, shards, os.cpu_count())
    shutil.rmtree(work, ignore_errors=True)
    stats = log + ".stats.json"
    cmd = [sys.executable, os.path.join(BENCH, "datatrove_dedup.py"), shards, "--work", work, "--stats", stats]
    r = run_measured(cmd, log, timeout, session_memory=True)
    if r["exit"] == 0 and not r["timed_out"]:
        with open(stats, encoding="utf-8") as f:
            s = json.load(f)
        r.update(removed_ids=s["removed_ids"], datatrove_stages=s["stages"], config=s["config"], tasks=s["tasks"], kept=s["kept"])
        os.remove(stats)
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(shards, ignore_errors=True)
    return r


def removal_score(removed_ids, number, truth, n):
    """What a removal did, against the exact join's pairs (keys i * n + j): how many of the
    removed documents have a near-duplicate (Jaccard >= t) that was kept, or any
    near-duplicate at all, and how many kept documents still have a kept near-duplicate."""
    removed = np.zeros(n, dtype=bool)
    idx = np.fromiter((number[i] for i in removed_ids), dtype=np.int64, count=len(removed_ids))
    removed[idx] = True
    a, b = truth // n, truth % n
    has_any = np.zeros(n, dtype=bool)
    has_any[a] = True
    has_any[b] = True
    has_kept = np.zeros(n, dtype=bool)
    has_kept[a[~removed[b]]] = True
    has_kept[b[~removed[a]]] = True
    return {
        "removed": int(removed.sum()),
        "listed_twice": len(removed_ids) - int(removed.sum()),
        "removed_kept_partner": int((removed & has_kept).sum()),
        "removed_any_partner": int((removed & has_any).sum()),
        "kept_kept_partner": int((~removed & has_kept).sum()),
    }


def bench_dedup(corpus, args, id_list, truth, log, say):
    """neardup's dedup (defaults, and --exact: the removal the exact join makes) and
    datatrove, each scored against the exact join's pairs."""
    path, n = corpus["path"], corpus["docs"]
    number = {rid: k for k, rid in enumerate(id_list)}
    rows = []
    if "neardup" in args.tools:
        r = run_neardup_dedup(args.neardup, path, log("dedup"), args.timeout)
        say("neardup dedup", r)
        rows.append({"key": "neardup-dedup", "name": "**neardup dedup** (defaults)", "run": r, "log": log("dedup")})
    r = run_neardup_dedup(args.neardup, path, log("dedup-exact"), args.timeout, exact=True)
    say("neardup dedup --exact", r)
    rows.append({"key": "neardup-dedup-exact", "name": "neardup dedup --exact", "run": r, "log": log("dedup-exact")})
    for tool in DEDUP_PEERS:
        if tool not in args.tools:
            continue
        if importlib.util.find_spec(tool) is None:
            rows.append(not_installed(tool))
            continue
        r = run_datatrove(path, os.path.dirname(log(tool)), log(tool), args.timeout)
        say(tool, r)
        rows.append({"key": tool, "name": tool, "run": r, "log": log(tool)})
    for row in rows:
        r = row["run"]
        if r and r.get("removed_ids") is not None:
            row["score"] = removal_score(r.pop("removed_ids"), number, truth, n)
    return rows


def render_dedup(rows, args):
    lines = [
        "## Deduplication: `neardup dedup` beside datatrove",
        "",
        f"The same corpus, deduplicated: `neardup dedup -t {THRESHOLD}` as a user runs it, with "
        "`--removed` (the removed records and what each duplicates), and datatrove's four documented "
        "MinHash stages on its local executor (`bench/datatrove_dedup.py`). What each removed is scored "
        "against the exact join above (neardup's char 5-grams, Jaccard ≥ "
        f"{THRESHOLD}): *precision* is the share of removed documents that have a near-duplicate which "
        "was kept (so the removal lost nothing); *with any* counts those with a near-duplicate at all, "
        "kept or not; *duplicates left* is the number of kept documents that still have a kept "
        "near-duplicate.",
        "",
        "| tool | end to end | CPU | peak RSS (largest process) | peak memory (all processes) | removed | precision | with any | duplicates left |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    details = []
    for row in rows:
        r = row["run"]
        why = why_no_result(row, args)
        if why:
            lines.append(f"| {row['name']} | {why} |" + " |" * 7)
            continue
        sc = row.get("score") or {}
        removed = sc.get("removed", 0)
        share = lambda k: f"{100 * sc[k] / removed:.3f} %" if removed else "—"  # noqa: E731
        lines.append(
            "| "
            + " | ".join(
                [
                    row["name"],
                    f"**{fmt_secs(r['wall'])}**",
                    fmt_secs(max(r["cpu"], r.get("session_cpu") or 0)),
                    fmt_bytes(r["maxrss_bytes"]),
                    fmt_bytes(r["session_peak_bytes"]) if r.get("session_peak_bytes") else "—",
                    fmt_int(removed),
                    share("removed_kept_partner"),
                    share("removed_any_partner"),
                    fmt_int(sc.get("kept_kept_partner")),
                ]
            )
            + " |"
        )
        bits = []
        if r.get("method"):
            bits.append(f"method {r['method']}")
        if r.get("plan"):
            bits.append(f"plan: `{r['plan']}`")
        if r.get("datatrove_stages"):
            bits.append("stages " + ", ".join(f"{k} {fmt_secs(v)}" for k, v in r["datatrove_stages"].items()))
            bits.append(f"config `{r['config']}`; {r['tasks']} shards, one task each in stages 1 and 4, one per bucket in stage 2")
        if sc:
            bits.append(
                f"{sc['removed_kept_partner']:,} of {removed:,} removed have a kept near-duplicate, "
                f"{sc['removed_any_partner']:,} any near-duplicate"
                + (f"; {sc['listed_twice']:,} ids listed twice" if sc["listed_twice"] else "")
            )
        details.append(f"- {row['name']}: " + "; ".join(bits) + ".")
    lines += ["", "Details:", "", *details]
    lines += [
        "",
        "datatrove runs its documented configuration, `MinhashConfig(hash_config=HashConfig(precision=64), "
        "num_buckets=14, hashes_per_bucket=8)` (its default too): shingles of 5 words of its simplified text "
        "(lowercased, numbers, weekdays and months replaced, punctuation and diacritics removed), 14 bands × 8 "
        "rows (a candidate at Jaccard (1/14)^(1/8) ≈ 0.72 half the time, at 0.8 92 % of the time), and no "
        "verification: every band match joins a cluster. A document of fewer than 5 words has no shingles, "
        "no signature, and is always kept. The corpus is given to it as one JSONL shard per core "
        "(written before the run, untimed), so stages 1 and 4 use every core; the peak memory of all "
        "processes is the sum of their PSS, sampled ten times a second, and their CPU time is "
        "sampled with it (GNU time sees only the processes its command waited for; a pool's workers "
        "are not among them).",
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------


def bench_corpus(corpus, args, info):
    runs_dir = os.path.join(BENCH, "data", "runs", corpus["name"])
    os.makedirs(runs_dir, exist_ok=True)
    path = corpus["path"]
    log = lambda name: os.path.join(runs_dir, name)  # noqa: E731
    rows = []
    print(f"\n== {corpus['title']}: {corpus['docs']:,} documents, {corpus['text_bytes'] / 1e6:.1f} MB", file=sys.stderr)

    def say(name, r):
        state = "timed out" if r["timed_out"] else f"exit {r['exit']}"
        print(f"   {name:<28} {r['wall']:8.2f} s  {fmt_bytes(r['maxrss_bytes']):>9}  {state}", file=sys.stderr, flush=True)

    outputs = []
    exact_out = log("exact.tsv")
    r = run_neardup(args.neardup, path, exact_out, log("exact"), args.timeout, exact=True)
    say("neardup --exact", r)
    outputs.append(exact_out)
    exact_row = {"key": "exact", "name": "neardup --exact (ground truth)", "run": r, "log": log("exact")}

    t = time.perf_counter()
    id_list = corpus_ids(path)
    ids = IdIndex(id_list)
    truth = neardup_keys(exact_out, ids) if r["exit"] == 0 else None
    print(f"   (ground truth read back in {time.perf_counter() - t:.1f} s)", file=sys.stderr)

    if "neardup" in args.tools:
        lsh_out = log("neardup.tsv")
        r = run_neardup(args.neardup, path, lsh_out, log("neardup"), args.timeout)
        say("neardup", r)
        outputs.append(lsh_out)
        row = {"key": "neardup", "name": f"**neardup** ({os.cpu_count()} threads)", "run": r, "log": log("neardup")}
        keys = neardup_keys(lsh_out, ids) if r["exit"] == 0 else None
        if truth is not None and keys is not None:
            row["score"] = score(keys, truth)
        rows.append(row)

        one_out = log("neardup-1.tsv")
        r1 = run_neardup(args.neardup, path, one_out, log("neardup-1"), args.timeout, threads=1)
        say("neardup --threads 1", r1)
        outputs.append(one_out)
        row1 = {"key": "neardup-1", "name": "neardup (1 thread)", "run": r1, "log": log("neardup-1")}
        if r1["exit"] == 0 and truth is not None:
            # neardup's output does not depend on the thread count; a byte comparison
            # checks that and saves parsing the file again.
            if r["exit"] == 0 and filecmp.cmp(lsh_out, one_out, shallow=False):
                row1["score"] = row["score"]
                row1["note"] = "output byte-identical to the run with all threads"
            else:
                row1["score"] = score(neardup_keys(one_out, ids), truth)
        rows.append(row1)

        # The buckets alone, without the candidates neardup finds beyond them: the recall
        # of the 16 x 8 plan as every peer runs it.
        lsh_only_out = log("neardup-buckets.tsv")
        rb = run_neardup(args.neardup, path, lsh_only_out, log("neardup-buckets"), args.timeout, extra=["--no-neighbours"])
        say("neardup --no-neighbours", rb)
        rowb = {"key": "neardup-buckets", "name": "neardup --no-neighbours (buckets only)", "run": rb, "log": log("neardup-buckets")}
        if rb["exit"] == 0 and truth is not None:
            rowb["score"] = score(neardup_keys(lsh_only_out, ids), truth)
        os.remove(lsh_only_out)
        rows.append(rowb)

        # neardup as a user runs it: no band plan given, --method auto picks LSH or the
        # exact join from a sample.
        auto_out = log("neardup-auto.tsv")
        ra = run_neardup(args.neardup, path, auto_out, log("neardup-auto"), args.timeout, auto=True)
        say("neardup (auto)", ra)
        rowa = {"key": "neardup-auto", "name": "neardup --method auto (defaults)", "run": ra, "log": log("neardup-auto")}
        if ra["exit"] == 0 and truth is not None:
            rowa["score"] = score(neardup_keys(auto_out, ids), truth)
        if ra.get("method"):
            rowa["note"] = f"chose {ra['method']}"
        os.remove(auto_out)
        rows.append(rowa)

        # A plan with more recall at the threshold, where pairs crowd near it.
        plan = RECALL_PLANS.get(corpus["name"])
        if plan:
            plan_out = log("neardup-plan.tsv")
            rp = run_neardup(args.neardup, path, plan_out, log("neardup-plan"), args.timeout, plan=plan)
            name = f"neardup --bands {plan[0]} --rows {plan[1]}"
            say(name, rp)
            rowp = {"key": "neardup-plan", "name": name, "run": rp, "log": log("neardup-plan")}
            if rp["exit"] == 0 and truth is not None:
                rowp["score"] = score(neardup_keys(plan_out, ids), truth)
            os.remove(plan_out)
            rows.append(rowp)

        # Recall under a fixed 16 x 8 plan depends on the hash seed: one missed band
        # against a large group of identical copies loses every pair of the group.
        # Other seeds show how far one run's recall is from another's.
        if truth is not None and args.seeds > 1:
            recalls = [row["score"]["recall"]] if "score" in row else []
            for seed in range(2, args.seeds + 1):
                out_s = log(f"neardup-seed{seed}.tsv")
                rs = run_neardup(args.neardup, path, out_s, log(f"neardup-seed{seed}"), args.timeout, seed=seed)
                say(f"neardup --seed {seed}", rs)
                if rs["exit"] == 0:
                    recalls.append(score(neardup_keys(out_s, ids), truth)["recall"])
                os.remove(out_s)
            row["seed_recalls"] = recalls

    for tool in PEERS:
        if tool not in args.tools:
            continue
        if importlib.util.find_spec(tool) is None:
            rows.append(not_installed(tool))
            continue
        sample = args.datasketch_sample if tool == "datasketch" and args.datasketch_sample else 0
        out, stats, keysf = log(tool + ".tsv"), log(tool + ".stats.json"), log(tool + ".keys.npy")
        cmd = [sys.executable, os.path.join(BENCH, "peers.py"), path, "--tool", tool, "--out", out, "--stats", stats, "--keys", keysf,
               "--threshold", str(THRESHOLD), "--num-perm", str(NUM_PERM), "--bands", str(BANDS), "--rows", str(ROWS)]
        if sample:
            cmd += ["--sample", str(sample)]
        r = run_measured(cmd, log(tool), args.timeout)
        say(tool + (f" (sample {sample:,})" if sample else ""), r)
        outputs += [out, keysf]
        row = {"key": tool, "name": tool, "run": r, "log": log(tool)}
        if r["exit"] == 0 and not r["timed_out"]:
            with open(stats, encoding="utf-8") as f:
                s = json.load(f)
            r.update(stages=s["stages"], substages=s["substages"], pairs=s["pairs"], candidates=s["candidates"], shingles=s["shingles"])
            keys = np.unique(np.load(keysf))
            if sample and s["docs"] < corpus["docs"]:
                row.update(sample=True, docs=s["docs"], text_bytes=s["text_bytes"])
                row["name"] = f"{tool} (subsample: {s['docs']:,} docs)"
                if truth is not None:
                    row["score"] = score(keys, restrict(truth, corpus["docs"], sample_indices(corpus["docs"], sample)))
            elif truth is not None:
                row["score"] = score(keys, truth)
        rows.append(row)

    rows.append(exact_row)
    if truth is not None:
        exact_row["score"] = score(truth, truth)

    dedup_rows = bench_dedup(corpus, args, id_list, truth, log, say) if truth is not None else []
    del truth

    if not args.keep_outputs:
        for p in outputs:
            if os.path.exists(p):
                os.remove(p)

    text = render(corpus, rows, info, args)
    if dedup_rows:
        text += "\n" + render_dedup(dedup_rows, args)
    os.makedirs(os.path.join(BENCH, "results"), exist_ok=True)
    tag = f"-{args.results_tag}" if args.results_tag else ""
    result_path = os.path.join(BENCH, "results", f"RESULTS-{corpus['name']}{tag}.md")
    with open(result_path, "w", encoding="utf-8") as f:
        f.write(text)
    print("\n" + text)
    print(f"(written to {os.path.relpath(result_path, ROOT)})", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description="neardup vs datasketch, rensa and gaoya (see bench/README.md)")
    ap.add_argument("--neardup", required=True, help="the neardup binary")
    ap.add_argument("--quick", action="store_true", help="small corpora: 50k summaries, two standard libraries")
    ap.add_argument("--summaries", type=int, default=None, metavar="N",
                    help="a random sample of N PyPI summaries (default: all of them; 50,000 with --quick)")
    ap.add_argument("--corpus", choices=["all", "pypi", "stdlib", "pages"], default="all")
    ap.add_argument("--pypi-tsv", default=os.path.join(ROOT, "..", ".library", "env", "packages", "pypi.tsv"),
                    help="the PyPI package list (default: ../.library/env/packages/pypi.tsv from the project root)")
    ap.add_argument("--tools", default=",".join(["neardup", *PEERS, *DEDUP_PEERS]),
                    help="comma-separated subset of neardup,rensa,gaoya,datasketch,datatrove")
    ap.add_argument("--datasketch-sample", type=int, default=0, metavar="N",
                    help="run datasketch on an evenly spaced subsample of N documents (default: the whole corpus)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds each tool may run (default 1800)")
    ap.add_argument("--seeds", type=int, default=5, metavar="N", help="also run neardup with seeds 2..N and report the spread of its recall (default 5; 1 for none)")
    ap.add_argument("--keep-outputs", action="store_true", help="keep the pair files in bench/data/runs/")
    ap.add_argument("--results-tag", metavar="TAG", help="write bench/results/RESULTS-<corpus>-TAG.md (a run of some tools that must not replace the whole table)")
    args = ap.parse_args()
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = set(args.tools) - {"neardup", *PEERS, *DEDUP_PEERS}
    if unknown:
        ap.error(f"unknown tools: {', '.join(sorted(unknown))}")

    data_dir = os.path.join(BENCH, "data")
    todo = []
    try:
        if args.corpus in ("all", "pypi", "pages"):
            summaries = corpora.pypi_summaries(data_dir, args.pypi_tsv, args.quick, args.summaries)
            if args.corpus != "pages":
                todo.append(summaries)
        if args.corpus in ("all", "stdlib"):
            todo.append(corpora.python_stdlib(data_dir, args.quick))
        # Not in "all": the peers verify its millions of long candidates in Python, which
        # took rensa more than 14 minutes and 8 GB.
        if args.corpus == "pages":
            todo.append(corpora.templated_pages(data_dir, summaries["path"], args.quick))
    except corpora.CorpusError as e:
        sys.exit(f"bench: {e}")

    info = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "machine": machine(),
        "versions": versions(args.neardup),
        # bench/run passes its own command line; the --neardup it adds is no user's choice.
        "command": os.environ.get("BENCH_COMMAND", "").strip() or " ".join(["python", "bench/bench.py", *sys.argv[1:]]),
    }
    for corpus in todo:
        info["load"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
        bench_corpus(corpus, args, info)


if __name__ == "__main__":
    main()
