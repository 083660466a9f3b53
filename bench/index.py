"""The persistent-index benchmark: neardup's index against datasketch and rensa.

Run it through bench/index, which sets up the virtual environment and builds neardup;
see bench/README.md. On PyPI package summaries split into a BASE and QUERIES it

  1. computes the exact answers (`neardup pairs --exact` on BASE + QUERIES, the
     (query, base) pairs of Jaccard >= 0.8),
  2. for each tool: builds an index of BASE, queries it with each query document one
     at a time, adds QUERIES in batches of 10,000, and measures memory and size,
  3. scores each tool's answers against the exact ones,
  4. runs neardup-index's crash test,
  5. prints a Markdown table and writes it to bench/results/RESULTS-index.md.

Each peer runs in a process of its own (this script with --worker) under GNU time.
"""

import argparse
import datetime
import importlib.util
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

import corpora
from bench import BANDS, NUM_PERM, ROWS, THRESHOLD, IdIndex, fmt_bytes, machine, neardup_keys, run_measured, versions
from peers import read_corpus, sample_indices
from shingling import K, shingle_set

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
TOOLS = ["neardup", "rensa", "datasketch", "datasketch-redis"]

# The split: a fixed-seed shuffle of the corpus, the last QUERIES documents are queries.
SPLIT_SEED = 20240607
QUERIES = 100_000
QUICK_QUERIES = 5_000
# Documents per added batch (one durable commit each for neardup).
BATCH = 10_000
# Queries answered, untimed, before the timed loop: connections, caches and lazily
# built structures are warm when the clock starts.
WARMUP = 1_000
# All neardup commands shingle as bench/shingling.py does: neardup's default is NFKC,
# which the peers' Python shingling does not implement.
NORMALIZE = ["--normalize", "basic"]


# ---------------------------------------------------------------------------------------
# The split and the exact answers


def write_jsonl(path, ids, texts):
    with open(path, "w", encoding="utf-8") as f:
        for i, t in zip(ids, texts):
            f.write(json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n")


def split(corpus_path, n_queries, work):
    """BASE and QUERIES files (both in shuffled order) and BASE + QUERIES for the exact join."""
    ids, texts = read_corpus(corpus_path, None)
    order = list(range(len(ids)))
    # Shuffled: the corpus is sorted by package name, and neighbouring names are
    # unusually often near-duplicates; queries must be a random part of the corpus.
    random.Random(SPLIT_SEED).shuffle(order)
    nb = len(order) - n_queries
    s = {
        "base_ids": [ids[i] for i in order[:nb]],
        "base_texts": [texts[i] for i in order[:nb]],
        "query_ids": [ids[i] for i in order[nb:]],
        "query_texts": [texts[i] for i in order[nb:]],
    }
    s["base"], s["queries"], s["all"] = (os.path.join(work, n) for n in ("base.jsonl", "queries.jsonl", "all.jsonl"))
    write_jsonl(s["base"], s["base_ids"], s["base_texts"])
    write_jsonl(s["queries"], s["query_ids"], s["query_texts"])
    write_jsonl(s["all"], s["base_ids"] + s["query_ids"], s["base_texts"] + s["query_texts"])
    s["batches"] = []
    for k, lo in enumerate(range(0, n_queries, BATCH)):
        p = os.path.join(work, f"queries-batch-{k:03d}.jsonl")
        write_jsonl(p, s["query_ids"][lo : lo + BATCH], s["query_texts"][lo : lo + BATCH])
        s["batches"].append(p)
    return s


def cross_pairs(neardup, sp, work, timeout, name, options):
    """Keys q * nb + b of the (query, base) pairs `neardup pairs OPTIONS` finds on
    BASE + QUERIES (None if it failed), and its run."""
    out = os.path.join(work, f"{name}.tsv")
    cmd = [neardup, "pairs", sp["all"], *options, "-t", str(THRESHOLD), *NORMALIZE, "-o", out, "--output-format", "tsv"]
    r = run_measured(cmd, os.path.join(work, name), timeout)
    if r["exit"] != 0 or r["timed_out"]:
        return None, r
    nb = len(sp["base_ids"])
    index = IdIndex(sp["base_ids"] + sp["query_ids"])
    keys = neardup_keys(out, index)
    os.remove(out)
    i, j = keys // index.n, keys % index.n  # i < j; base documents come first
    cross = (i < nb) & (j >= nb)
    return np.unique((j[cross] - nb) * nb + i[cross]), r


def exact_answers(neardup, sp, work, timeout):
    """The (query, base) pairs with Jaccard >= t, by the exact join, and the join's run."""
    keys, r = cross_pairs(neardup, sp, work, timeout, "exact", ["--exact"])
    if keys is None:
        sys.exit(f"bench: the exact join failed (exit {r['exit']}); see {work}/exact.stderr")
    return keys, r


def batch_answers(neardup, sp, work, timeout):
    """The (query, base) pairs the batch run finds in the buckets of the same plan
    (`neardup pairs --no-neighbours`): what the index's recall is held to."""
    options = ["--no-neighbours", "--bands", str(BANDS), "--rows", str(ROWS), "--num-perm", str(NUM_PERM)]
    return cross_pairs(neardup, sp, work, timeout, "batch", options)[0]


def restrict(truth, nb, nq, base_sample, query_sample):
    """The exact answers inside a sample of base and query documents, renumbered."""
    bpos = np.full(nb, -1, dtype=np.int64)
    bpos[np.asarray(base_sample)] = np.arange(len(base_sample))
    qpos = np.full(nq, -1, dtype=np.int64)
    qpos[np.asarray(query_sample)] = np.arange(len(query_sample))
    q, b = qpos[truth // nb], bpos[truth % nb]
    keep = (q >= 0) & (b >= 0)
    return np.unique(q[keep] * len(base_sample) + b[keep])


def score(found, truth):
    hits = int(np.isin(found, truth).sum())
    return {
        "recall": hits / len(truth) if len(truth) else 1.0,
        "answers": len(found),
        "hits": hits,
        "truth": len(truth),
    }


# ---------------------------------------------------------------------------------------
# The peers, in a worker process: each gets texts and returns keys; shingling is part of
# every timed step, as it is part of neardup's.


class Rensa:
    def __init__(self, redis_port):
        import rensa

        self.rensa = rensa
        self.lsh = rensa.RMinHashLSH(THRESHOLD, NUM_PERM, BANDS)
        assert self.lsh.get_num_bands() == BANDS

    def sketch_many(self, sets):
        return self.rensa.RMinHash.from_token_sets(sets, num_perm=NUM_PERM, seed=1)

    def insert_many(self, start, sketches):
        self.lsh.insert_many(sketches, start_key=start)

    def query(self, s):
        m = self.rensa.RMinHash(NUM_PERM, 1)
        m.update(list(s))
        return self.lsh.query(m)


class Datasketch:
    def __init__(self, redis_port):
        from datasketch import MinHash, MinHashLSH

        self.MinHash = MinHash
        config = None
        if redis_port:
            config = {"type": "redis", "basename": b"bench", "redis": {"host": "127.0.0.1", "port": redis_port}}
        self.lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, params=(BANDS, ROWS), storage_config=config)

    def sketch_many(self, sets):
        # The default hash (SHA-1 of bytes) and seed, the same as MinHash() in query().
        return self.MinHash.bulk(([x.encode("utf-8") for x in s] for s in sets), num_perm=NUM_PERM)

    def insert_many(self, start, sketches):
        # The documented batch path; the keys are unique by construction, so the
        # duplicate check (a round trip per key on Redis) is switched off.
        with self.lsh.insertion_session() as session:
            for k, m in enumerate(sketches, start):
                session.insert(k, m, check_duplication=False)

    def query(self, s):
        m = self.MinHash(num_perm=NUM_PERM)
        m.update_batch([x.encode("utf-8") for x in s])
        return self.lsh.query(m)


PEERS = {"rensa": Rensa, "datasketch": Datasketch, "datasketch-redis": Datasketch}


def worker(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", required=True, choices=sorted(PEERS))
    ap.add_argument("--base", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--candidates", required=True, help="NumPy keys q * nb + b of the answers")
    ap.add_argument("--stats", required=True)
    ap.add_argument("--redis-port", type=int, default=0)
    a = ap.parse_args(argv)
    _, base = read_corpus(a.base, None)
    _, queries = read_corpus(a.queries, None)
    nb, nq = len(base), len(queries)
    tool = PEERS[a.worker](a.redis_port)

    # Build: shingle, sketch and insert BASE in chunks, so that no shingle set outlives
    # its chunk and peak RSS is the index's, not Python's sets'.
    t_shingle = t_sketch = t_insert = 0.0
    for lo in range(0, nb, BATCH):
        t0 = time.perf_counter()
        sets = [shingle_set(t, K) for t in base[lo : lo + BATCH]]
        t1 = time.perf_counter()
        sketches = tool.sketch_many(sets)
        t2 = time.perf_counter()
        tool.insert_many(lo, sketches)
        t3 = time.perf_counter()
        t_shingle, t_sketch, t_insert = t_shingle + t1 - t0, t_sketch + t2 - t1, t_insert + t3 - t2
    del sets, sketches

    for text in queries[:WARMUP]:
        tool.query(shingle_set(text, K))
    lat = np.zeros(nq, dtype=np.int64)
    qs, bs = [], []
    t_loop = time.perf_counter()
    for q, text in enumerate(queries):
        t = time.perf_counter_ns()
        found = tool.query(shingle_set(text, K))
        lat[q] = time.perf_counter_ns() - t
        bs.extend(found)
        qs.extend([q] * len(found))
    t_loop = time.perf_counter() - t_loop
    bs = np.asarray(bs, dtype=np.int64)
    qs = np.asarray(qs, dtype=np.int64)
    np.save(a.candidates, np.unique(qs * nb + bs))

    add_times = []
    for lo in range(0, nq, BATCH):
        t = time.perf_counter()
        chunk = queries[lo : lo + BATCH]
        tool.insert_many(nb + lo, tool.sketch_many([shingle_set(x, K) for x in chunk]))
        add_times.append(time.perf_counter() - t)

    with open(a.stats, "w", encoding="utf-8") as f:
        json.dump(
            {
                "docs": nb,
                "queries": nq,
                "build": t_shingle + t_sketch + t_insert,
                "build_stages": {"shingle": t_shingle, "sketch": t_sketch, "insert": t_insert},
                "p50_us": float(np.percentile(lat, 50)) / 1e3,
                "p99_us": float(np.percentile(lat, 99)) / 1e3,
                "query_loop": t_loop,
                "add_times": add_times,
            },
            f,
            indent=1,
        )


# ---------------------------------------------------------------------------------------
# Redis: Debian's redis-server, started here on a free port with a directory of its own


class RedisServer:
    def __init__(self):
        exe = shutil.which("redis-server")
        if exe is None:
            if os.getuid() != 0 or shutil.which("apt-get") is None:
                raise RuntimeError("redis-server is missing (Debian's package redis-server; as root bench/index installs it)")
            print("[bench] installing redis-server (apt-get install redis-server)", file=sys.stderr)
            subprocess.run(["apt-get", "update", "-qq"], check=True)
            subprocess.run(["apt-get", "install", "-y", "-qq", "redis-server"], check=True, stdout=subprocess.DEVNULL,
                           env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
            exe = shutil.which("redis-server")
        self.version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
        self.dir = tempfile.mkdtemp(prefix="bench-redis-")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        # No snapshots or append-only file while measuring: the RDB is written once, by SAVE.
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir, "--dbfilename", "dump.rdb",
             "--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", os.path.join(self.dir, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        import redis

        self.client = redis.Redis(host="127.0.0.1", port=self.port)
        for _ in range(100):
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("redis-server did not answer within 10 s")

    def sizes(self):
        used = self.client.info("memory")["used_memory"]
        self.client.save()
        return used, os.path.getsize(os.path.join(self.dir, "dump.rdb"))

    def peak_rss(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return 0

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------------------
# Running the tools


def failed(r, log):
    if r["timed_out"]:
        return "did not finish in time"
    if r["exit"] != 0:
        return f"failed (exit {r['exit']}; see {os.path.relpath(log, ROOT)}.stderr)"
    return None


def run_peer(tool, sp, truth, work, args, info):
    row = {"name": tool, "key": tool}
    lib = tool.split("-")[0]
    if importlib.util.find_spec(lib) is None:
        row["skip"] = f"{lib} is not installed: pip could not install it here (see bench/.venv/install.log)"
        return row
    log = os.path.join(work, tool)
    base, queries = sp["base"], sp["queries"]
    nb = len(sp["base_ids"])
    base_idx, query_idx = range(nb), range(len(sp["query_ids"]))
    server = None
    if tool == "datasketch-redis":
        base_idx = sample_indices(nb, args.redis_sample)
        query_idx = sample_indices(len(sp["query_ids"]), args.redis_queries)
        base, queries = os.path.join(work, "redis-base.jsonl"), os.path.join(work, "redis-queries.jsonl")
        write_jsonl(base, [sp["base_ids"][i] for i in base_idx], [sp["base_texts"][i] for i in base_idx])
        write_jsonl(queries, [sp["query_ids"][i] for i in query_idx], [sp["query_texts"][i] for i in query_idx])
        truth = restrict(truth, nb, len(sp["query_ids"]), base_idx, query_idx)
        row["name"] = f"datasketch + Redis (sample: {len(base_idx):,} base, {len(query_idx):,} queries)"
        try:
            server = RedisServer()
        except (RuntimeError, OSError, ImportError, subprocess.CalledProcessError) as e:
            row["skip"] = f"no Redis: {e}"
            return row
        info["versions"]["redis-server"] = server.version.split(" sha=")[0]
    cands, stats = log + ".candidates.npy", log + ".stats.json"
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", tool, "--base", base, "--queries", queries,
           "--candidates", cands, "--stats", stats]
    if server:
        cmd += ["--redis-port", str(server.port)]
    try:
        r = run_measured(cmd, log, args.timeout)
        row["skip"] = failed(r, log)
        if server and not row["skip"]:
            used, rdb = server.sizes()
            row["disk"] = rdb
            row["server_rss"] = server.peak_rss()
            row["notes"] = [f"size on disk is the RDB after SAVE; Redis's INFO used_memory was {fmt_bytes(used)}",
                            f"peak RSS is the Python client's + redis-server's ({fmt_bytes(row['server_rss'])})"]
    finally:
        if server:
            server.stop()
    if row["skip"]:
        return row
    with open(stats, encoding="utf-8") as f:
        s = json.load(f)
    n_b, n_q = len(base_idx), len(query_idx)
    st = s["build_stages"]
    row.update(
        build=n_b / s["build"], p50=s["p50_us"], p99=s["p99_us"], qps=n_q / s["query_loop"], qps_how="loop",
        add=n_q / sum(s["add_times"]), rss=r["maxrss_bytes"] + row.get("server_rss", 0),
    )
    row.setdefault("notes", []).insert(
        0, f"build {s['build']:.1f} s = shingle {st['shingle']:.1f} s + sketch {st['sketch']:.1f} s + insert {st['insert']:.1f} s")
    # The peers' answers are LSH candidates: verified here, with Python sets, outside
    # every timed step, to measure their precision.
    found = np.load(cands)
    bt = [sp["base_texts"][i] for i in base_idx]
    qt = [sp["query_texts"][i] for i in query_idx]
    sets = {}

    def shingles(kind, i):
        k = (kind, i)
        if k not in sets:
            sets[k] = shingle_set((qt if kind else bt)[i], K)
        return sets[k]

    good = np.zeros(len(found), dtype=bool)
    for x, key in enumerate(found.tolist()):
        a, b = shingles(1, key // n_b), shingles(0, key % n_b)
        inter = len(a & b)
        good[x] = inter / (len(a) + len(b) - inter) >= THRESHOLD
    sc = score(found, truth)
    row["recall"] = sc["recall"]
    row["precision"] = float(good.mean()) if len(found) else 1.0
    verified = found[good]
    off = int((~np.isin(verified, truth)).sum()) + int((~np.isin(truth[np.isin(truth, found)], verified)).sum())
    row["notes"].append(
        f"{sc['answers']:,} candidates for {sc['truth']:,} exact answers; {int(good.sum()):,} pass exact verification"
        + ("" if off == 0 else f"; **{off:,} disagree with the exact join**")
    )
    if tool == "datasketch-redis":
        row["notes"].append("recall against the exact answers inside the sample; its figures are not comparable to the full rows'")
    return row


def cargo_json(cmd):
    """Runs cargo with --message-format=json in the project; the artifact's executable."""
    p = subprocess.run(["cargo", *cmd, "--message-format=json"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return None
    exe = None
    for line in p.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            exe = msg["executable"]
    return exe


def dir_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def index_stats(neardup, idx):
    p = subprocess.run([neardup, "index", "stats", idx, "--json"], capture_output=True, text=True)
    return json.loads(p.stdout) if p.returncode == 0 else None


def run_neardup(neardup, sp, truth, work, args):
    row = {"name": "**neardup index**", "key": "neardup", "notes": []}
    log = lambda name: os.path.join(work, name)  # noqa: E731
    idx = log("neardup.idx")
    shutil.rmtree(idx, ignore_errors=True)
    deadline = time.monotonic() + args.timeout
    left = lambda: max(1.0, deadline - time.monotonic())  # noqa: E731
    nb, nq = len(sp["base_ids"]), len(sp["query_ids"])

    b = run_measured([neardup, "index", "build", idx, sp["base"], "--bands", str(BANDS), "--rows", str(ROWS),
                      "--num-perm", str(NUM_PERM), "-t", str(THRESHOLD), *NORMALIZE], log("nd-build"), left())
    if failed(b, log("nd-build")):
        row["skip"] = "index build " + failed(b, log("nd-build"))
        return row
    # The batch pipeline on the same documents, for the build's ratio to it.
    c = run_measured([neardup, "clusters", sp["base"], "--bands", str(BANDS), "--rows", str(ROWS), "--num-perm",
                      str(NUM_PERM), "-t", str(THRESHOLD), *NORMALIZE, "-o", os.devnull, "-q"], log("nd-clusters"), left())
    if not failed(c, log("nd-clusters")):
        row["notes"].append(f"`neardup clusters` on the BASE in the same run: {c['wall']:.1f} s, so the build takes "
                            f"{b['wall'] / c['wall']:.2f}× as long")
    built = index_stats(neardup, idx)
    # The parameters line says what the index pinned (sketch, normalization, bands).
    params = next((x.split(None, 1)[1] for x in b["stderr"].splitlines() if x.startswith("parameters:")), None)
    if params:
        row["notes"].append(f"parameters: `{params}`")
    out = log("nd-answers.jsonl")
    q = run_measured([neardup, "index", "query", idx, sp["queries"], "-o", out], log("nd-query"), left())
    if failed(q, log("nd-query")):
        row["skip"] = "index query " + failed(q, log("nd-query"))
        return row

    # The library's latency, from an example program of neardup-index; built before the
    # clock starts, run right after the CLI's queries (warm page cache).
    exe = cargo_json(["build", "--release", "-p", "neardup-index", "--example", "latency"])
    if exe:
        lr = run_measured([exe, idx, sp["queries"]], log("nd-latency"), left())
        try:
            with open(log("nd-latency") + ".stdout", encoding="utf-8") as f:
                lat = json.loads(f.read().strip().splitlines()[-1])
            row.update(p50=lat["p50_us"], p99=lat["p99_us"])
            row["notes"].append(f"latency example: open {lat['open_ms']:.1f} ms, {lat['queries']:,} queries")
        except (ValueError, IndexError, KeyError, OSError):
            row["notes"].append(f"the latency example gave no figures ({failed(lr, log('nd-latency')) or 'unreadable output'})")
    else:
        row["notes"].append("the latency example (cargo build --release -p neardup-index --example latency) did not build")

    adds, rss = [], [b["maxrss_bytes"], q["maxrss_bytes"]]
    for k, batch in enumerate(sp["batches"]):
        a = run_measured([neardup, "index", "add", idx, batch], log(f"nd-add-{k:03d}"), left())
        if failed(a, log(f"nd-add-{k:03d}")):
            row["skip"] = f"index add of batch {k} " + failed(a, log(f"nd-add-{k:03d}"))
            return row
        adds.append(a["wall"])
        rss.append(a["maxrss_bytes"])
    end = index_stats(neardup, idx)
    on_disk = dir_bytes(idx)
    row.update(build=nb / b["wall"], qps=nq / q["wall"], qps_how="CLI", add=nq / sum(adds), rss=max(rss), disk=on_disk)
    row["notes"].insert(0, f"build {b['wall']:.1f} s (CPU {b['cpu']:.1f} s, peak RSS {fmt_bytes(b['maxrss_bytes'])}); "
                           f"`index query` {q['wall']:.1f} s for {nq:,} queries (peak RSS {fmt_bytes(q['maxrss_bytes'])}); "
                           f"{len(adds)} `index add` of up to {BATCH:,}: {', '.join(f'{x:.2f}' for x in adds)} s")
    for when, st in (("after build", built), ("after the adds", end)):
        if st:
            row["notes"].append(
                f"stats {when}: {st['documents']:,} documents in {st['segments']} segment(s), {fmt_bytes(st['bytes'])} "
                f"({st['bytes_per_document']:.0f} B/doc; sets {fmt_bytes(st['set_bytes'])}, index {st['index_bytes_per_document']:.0f} B/doc)")
    if end and end["bytes"] != on_disk:
        row["notes"].append(f"the index directory holds {fmt_bytes(on_disk)} of files; stats says {fmt_bytes(end['bytes'])}")

    batch = batch_answers(neardup, sp, work, left())
    if batch is not None:
        bs = score(batch, truth)
        row["notes"].append(f"the batch run on the same plan (`neardup pairs --no-neighbours` on BASE + QUERIES) "
                            f"finds {bs['hits']:,} of the {bs['truth']:,} exact answers: recall {100 * bs['recall']:.3f} %")
        row["batch_keys"] = batch
    # The answers: already verified by neardup, so precision should be 1.
    base_pos = {x: i for i, x in enumerate(sp["base_ids"])}
    query_pos = {x: i for i, x in enumerate(sp["query_ids"])}
    keys, lines, unknown = [], 0, 0
    with open(out, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            lines += 1
            qi = query_pos[rec["id"]]
            for nbr in rec["neighbours"]:
                bi = base_pos.get(nbr["id"])
                if bi is None:
                    unknown += 1
                else:
                    keys.append(qi * nb + bi)
    found = np.unique(np.asarray(keys, dtype=np.int64))
    sc = score(found, truth)
    row["recall"] = sc["recall"]
    row["precision"] = (sc["hits"] / (sc["answers"] + unknown)) if sc["answers"] + unknown else 1.0
    if "batch_keys" in row:
        batch = row.pop("batch_keys")
        row["notes"].append(f"the index's answers and the batch run's pairs: {int(np.isin(found, batch).sum()):,} in both, "
                            f"{int((~np.isin(found, batch)).sum()):,} only in the index, {int((~np.isin(batch, found)).sum()):,} only in the batch run")
    row["notes"].append(f"{lines:,} answer lines, {sc['answers']:,} neighbours (verified by neardup) for {sc['truth']:,} exact answers"
                        + (f"; {unknown:,} neighbours not in BASE" if unknown else ""))
    if not args.keep_outputs:
        os.remove(out)
    return row


def crash_trials(n, work, timeout):
    """neardup-index's crash test with n SIGKILLed writers: (passed, seconds, note)."""
    if cargo_json(["test", "--release", "-p", "neardup-index", "--test", "crash", "--no-run"]) is None:
        return None, None, "not run: the crash test did not build"
    env_cmd = ["env", f"NEARDUP_CRASH_TRIALS={n}", "cargo", "test", "--release", "-p", "neardup-index", "--test", "crash", "--", "--nocapture"]
    # cargo test runs in the project, and the test's own children inherit the environment.
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        r = run_measured(env_cmd, os.path.join(work, "crash"), timeout)
    finally:
        os.chdir(cwd)
    return r["exit"] == 0 and not r["timed_out"], r["wall"], failed(r, os.path.join(work, "crash"))


# ---------------------------------------------------------------------------------------
# The report


def fmt_rate(x):
    return "—" if x is None else f"{x:,.0f}"


def fmt_us(x):
    return "—" if x is None else (f"{x:,.0f}" if x >= 100 else f"{x:.1f}")


def render(corpus, sp, truth_n, exact_run, rows, crash, info, args):
    ms = info["machine"]
    nb, nq = len(sp["base_ids"]), len(sp["query_ids"])
    lines = [
        "# Benchmark: persistent index, PyPI package summaries" + (" (quick)" if args.quick else ""),
        "",
        f"- **date**: {info['date']}",
        f"- **machine**: {ms['nproc']} cores ({ms['cpu']}), {ms['memory']} memory, {ms['os']}; "
        f"load average {info['load']} at the start (other work may share the machine)",
        f"- **corpus**: {corpus['title']}, {corpus['docs']:,} documents — {corpus['origin']}. Shuffled with seed "
        f"{SPLIT_SEED}: the first {nb:,} are the BASE, the other {nq:,} the QUERIES",
        f"- **task**: char {K}-gram shingles after neardup's basic normalization (lowercase, whitespace collapsed; "
        f"`--normalize basic`, what `bench/shingling.py` does), {NUM_PERM} permutations, {BANDS} bands × {ROWS} rows, "
        f"threshold {THRESHOLD}. Exact answers: the {truth_n:,} (query, base) pairs of `neardup pairs --exact` on "
        f"BASE + QUERIES ({exact_run['wall']:.1f} s)",
        "- **versions**: " + ", ".join(f"{k} {v}" if not v.startswith(k) else v for k, v in info["versions"].items()),
        f"- **command**: `{info['command']}`",
        "",
        "| tool | build docs/s | query p50 µs | query p99 µs | queries/s | add docs/s (batches of 10k) | peak RSS | size on disk | recall | precision |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for row in rows:
        if row.get("skip"):
            lines.append(f"| {row['name']} | {row['skip']} |" + " |" * 8)
            continue
        lines.append("| " + " | ".join([
            row["name"],
            fmt_rate(row.get("build")),
            fmt_us(row.get("p50")),
            fmt_us(row.get("p99")),
            fmt_rate(row.get("qps")) + f" ({row['qps_how']})",
            fmt_rate(row.get("add")),
            fmt_bytes(row["rss"]),
            fmt_bytes(row["disk"]) if row.get("disk") is not None else "— (in memory)",
            f"{100 * row['recall']:.3f} %",
            f"{100 * row['precision']:.2f} %",
        ]) + " |")
    if crash is not None:
        ok, secs, why = crash
        lines += ["", f"**Crash trials** (`NEARDUP_CRASH_TRIALS={args.crash_trials} cargo test --release -p neardup-index "
                      f"--test crash -- --nocapture`, SIGKILLed writers): "
                      + ("**passed**" if ok else f"**FAILED** ({why})" if ok is False else why) + (f" in {secs:.1f} s." if secs else ".")]
    lines += [
        "",
        "Columns:",
        "",
        "- *build docs/s*: BASE documents per second into a new index — neardup: the wall time of "
        "`neardup index build` (process start, reading, shingling, sketching, writing, the durable commit); "
        "peers: shingling in Python (`bench/shingling.py`), the library's sketches and its inserts, from texts in memory.",
        "- *query p50 / p99*: latency of one query document at a time, from its text to its answer — neardup: the "
        "`latency` example of neardup-index (the library, index opened once, answers verified by exact Jaccard), run "
        "right after `index query` read the same index; peers: shingle + sketch + LSH query in Python after "
        f"{WARMUP:,} untimed queries, answers **not** verified.",
        "- *queries/s*: neardup: all QUERIES through `neardup index query` (CLI), start-up included; "
        "peers: the timed loop of single queries.",
        "- *add docs/s*: QUERIES added in batches of 10,000 (neardup: one `neardup index add` and one durable commit per batch).",
        "- *peak RSS*: GNU time's maximum resident set size — neardup: the largest of its build, query and add processes; "
        "peers: the whole worker process (Python, its texts, the index).",
        "- *size on disk*: after all documents are in — neardup: its index directory; in-memory peers have none.",
        "- *recall*: share of the exact (query, base) answers a tool's answers contain. *precision*: share of its answers "
        "that reach the threshold — neardup verifies its answers; the peers return LSH candidates, verified here "
        "by exact Jaccard of the Python shingle sets, outside every timed step.",
        "",
        "Details:",
        "",
    ]
    for row in rows:
        if not row.get("skip") and row.get("notes"):
            lines.append(f"- {row['name']}: " + "; ".join(row["notes"]) + ".")
    return "\n".join(lines) + "\n"


def main():
    if "--worker" in sys.argv[1:]:
        return worker(sys.argv[1:])
    ap = argparse.ArgumentParser(description="neardup's persistent index vs datasketch and rensa (see bench/README.md)")
    ap.add_argument("--neardup", required=True, help="the neardup binary")
    ap.add_argument("--quick", action="store_true", help=f"the 50k quick corpus: {QUICK_QUERIES:,} queries")
    ap.add_argument("--pypi-tsv", default=os.path.join(ROOT, "..", ".library", "env", "packages", "pypi.tsv"),
                    help="the PyPI package list (default: ../.library/env/packages/pypi.tsv from the project root)")
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma-separated subset of " + ",".join(TOOLS))
    ap.add_argument("--redis-sample", type=int, default=20_000, metavar="N", help="base documents for datasketch on Redis (default 20,000)")
    ap.add_argument("--redis-queries", type=int, default=1_000, metavar="M", help="queries for datasketch on Redis (default 1,000)")
    ap.add_argument("--crash-trials", type=int, default=100, metavar="N", help="neardup-index's crash test trials (default 100; 0: skip)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds each tool may run (default 1800)")
    ap.add_argument("--keep-outputs", action="store_true", help="keep the split, answers and index in bench/data/runs/")
    args = ap.parse_args()
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = set(args.tools) - set(TOOLS)
    if unknown:
        ap.error(f"unknown tools: {', '.join(sorted(unknown))}")

    try:
        corpus = corpora.pypi_summaries(os.path.join(BENCH, "data"), args.pypi_tsv, args.quick)
    except corpora.CorpusError as e:
        sys.exit(f"bench: {e}")
    info = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "machine": machine(),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "versions": versions(args.neardup, ["rensa", "datasketch", "redis", "numpy"], {"redis": "redis (Python client)"}),
        "command": os.environ.get("BENCH_COMMAND", "").strip() or " ".join(["python", "bench/index.py", *sys.argv[1:]]),
    }
    work = os.path.join(BENCH, "data", "runs", "index-quick" if args.quick else "index")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    def say(row):
        state = row.get("skip") or (f"build {fmt_rate(row['build'])} docs/s, p50 {fmt_us(row.get('p50'))} µs, "
                                    f"recall {100 * row['recall']:.3f} %, precision {100 * row['precision']:.2f} %")
        print(f"   {row['name']}: {state}", file=sys.stderr, flush=True)

    sp = split(corpus["path"], QUICK_QUERIES if args.quick else QUERIES, work)
    print(f"\n== {len(sp['base_ids']):,} base documents, {len(sp['query_ids']):,} queries", file=sys.stderr)
    truth, exact_run = exact_answers(args.neardup, sp, work, args.timeout)
    print(f"   exact answers: {len(truth):,} (query, base) pairs", file=sys.stderr)

    rows, crash = [], None
    if "neardup" in args.tools:
        rows.append(run_neardup(args.neardup, sp, truth, work, args))
        say(rows[-1])
        if args.crash_trials > 0:
            crash = crash_trials(args.crash_trials, work, args.timeout)
            print(f"   crash trials: {crash}", file=sys.stderr)
    for tool in TOOLS[1:]:
        if tool in args.tools:
            rows.append(run_peer(tool, sp, truth, work, args, info))
            say(rows[-1])

    text = render(corpus, sp, len(truth), exact_run, rows, crash, info, args)
    os.makedirs(os.path.join(BENCH, "results"), exist_ok=True)
    path = os.path.join(BENCH, "results", "RESULTS-index.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print("\n" + text)
    print(f"(written to {os.path.relpath(path, ROOT)})", file=sys.stderr)
    if not args.keep_outputs:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
