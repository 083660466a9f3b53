#!/usr/bin/env python3
"""Load and faults on `neardup serve` (bench/serve; see bench/README.md).

An index of the PyPI package summaries is served on a loopback port; the load generator
(bench/load/, Rust) runs CLIENTS concurrent clients that send 95 % queries of one short
text and 5 % adds of one new short document. Then the server is killed with SIGKILL in
the middle of a load, restarted, and every add that was answered 2xx is looked up.
Client and server share the machine's cores. Loopback only; every run is bounded in
time; every process started is stopped.
"""

import argparse
import json
import os
import random
import statistics
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import corpora

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(addr, path, timeout=5):
    try:
        with urllib.request.urlopen(f"http://{addr}{path}", timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except OSError:
        return None, b""


class Server:
    """`neardup serve` as a child process, with its RSS sampled every 0.5 s."""

    def __init__(self, neardup, index, port):
        self.addr = f"127.0.0.1:{port}"
        self.log = open(os.path.join(os.path.dirname(index), f"serve-{port}.log"), "ab")
        self.proc = subprocess.Popen(
            [neardup, "serve", index, "--addr", self.addr, "--max-concurrent", "4096"],
            stdout=subprocess.DEVNULL, stderr=self.log)
        self.rss = []
        deadline = time.time() + 60
        while get(self.addr, "/readyz", timeout=1)[0] != 200:
            if self.proc.poll() is not None or time.time() > deadline:
                raise SystemExit(f"bench/serve: the server did not start (see {self.log.name})")
            time.sleep(0.05)
        self.sampling = True
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self):
        while self.sampling and self.proc.poll() is None:
            try:
                with open(f"/proc/{self.proc.pid}/status") as f:
                    fields = {}
                    for line in f:
                        key, _, value = line.partition(":")
                        if key in ("VmRSS", "RssAnon", "RssFile"):
                            fields[key] = int(value.split()[0]) * 1024
                if "VmRSS" in fields:
                    self.rss.append((time.time(), fields))
            except OSError:
                pass
            time.sleep(0.5)

    def kill(self):
        self.sampling = False
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        self.sampling = False
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)


def load(tool, addr, queries, clients, seconds, add_share, prefix, top=None):
    acked = tempfile.NamedTemporaryFile(prefix="acked-", delete=False).name
    cmd = [tool, addr, queries, str(clients), str(seconds), str(add_share), acked, prefix]
    if top:
        cmd += ["--top", str(top)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120)
    if out.returncode != 0:
        raise SystemExit(f"bench/serve: the load generator failed: {out.stderr}")
    with open(acked) as f:
        ids = f.read().split()
    os.unlink(acked)
    return json.loads(out.stdout), ids


def mib(b):
    return f"{b / 2**20:,.0f} MiB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--neardup", required=True)
    ap.add_argument("--load", required=True, help="the load generator binary")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--add-share", type=float, default=0.05)
    ap.add_argument("--memory-seconds", type=float, default=600,
                    help="length of the run whose RSS must stay flat (0: skip)")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--top", type=int, default=10,
                    help="a second run whose queries ask for this many neighbours (0: none)")
    ap.add_argument("--pypi-tsv", default=os.path.join(ROOT, "..", ".library", "env", "packages", "pypi.tsv"))
    ap.add_argument("--out", default=os.path.join(BENCH, "results", "RESULTS-serve.md"))
    args = ap.parse_args()

    corpus = corpora.pypi_summaries(os.path.join(BENCH, "data"), args.pypi_tsv, False)
    work = tempfile.mkdtemp(prefix="neardup-serve-")
    index = os.path.join(work, "idx")
    queries = os.path.join(work, "queries.jsonl")
    with open(corpus["path"]) as f:
        lines = f.readlines()
    random.Random(7).shuffle(lines)
    with open(queries, "w") as f:
        f.writelines(lines[:100_000])
    t = time.time()
    subprocess.run([args.neardup, "index", "build", index, corpus["path"], "-q"], check=True)
    build_s = time.time() - t
    print(f"[serve] index of {corpus['docs']:,} documents built in {build_s:.1f} s", file=sys.stderr)

    # Throughput and latency.
    server = Server(args.neardup, index, free_port())
    load(args.load, server.addr, queries, args.clients, 5, args.add_share, "warm-")
    main_run, acked = load(args.load, server.addr, queries, args.clients, args.seconds, args.add_share, "main-")
    print(f"[serve] main run: {json.dumps(main_run)}", file=sys.stderr)
    missing = sum(1 for i in acked[:2000] if get(server.addr, f"/v1/documents/{i}")[0] != 200)
    top_run = None
    if args.top > 0:
        top_run, _ = load(args.load, server.addr, queries, args.clients, args.seconds, args.add_share, "top-", args.top)
        print(f"[serve] top-{args.top} run: {json.dumps(top_run)}", file=sys.stderr)

    # Memory over a long run.
    memory = None
    if args.memory_seconds > 0:
        start = len(server.rss)
        long_run, _ = load(args.load, server.addr, queries, args.clients, args.memory_seconds, args.add_share, "long-")
        samples = [r for _, r in server.rss[start:]]
        tenth = max(1, len(samples) // 10)

        def summary(key):
            values = [s.get(key, 0) for s in samples]
            first, last = sum(values[:tenth]) / tenth, sum(values[-tenth:]) / tenth
            # Merges raise the heap for seconds at a time; the median of a tenth is the
            # level the server comes back to, the mean counts the merges it caught.
            first_med, last_med = statistics.median(values[:tenth]), statistics.median(values[-tenth:])
            return {"first_tenth": first, "last_tenth": last, "min": min(values), "max": max(values),
                    "change": last / first - 1 if first else 0.0,
                    "first_median": first_med, "last_median": last_med,
                    "median_change": last_med / first_med - 1 if first_med else 0.0}

        status, body = get(server.addr, "/v1/stats")
        docs_after = json.loads(body)["documents"] if status == 200 else None
        memory = {"seconds": args.memory_seconds, "run": long_run, "docs_after": docs_after,
                  "rss": summary("VmRSS"), "anon": summary("RssAnon"), "file": summary("RssFile")}
        print(f"[serve] memory: {memory}", file=sys.stderr)
    code = server.stop()

    # Kill and restart.
    trials = []
    rng = random.Random(11)
    for k in range(args.trials):
        server = Server(args.neardup, index, free_port())
        result = {}
        def run():
            result["load"] = load(args.load, server.addr, queries, 8, 3.0, 0.5, f"kill{k}-")
        th = threading.Thread(target=run)
        th.start()
        time.sleep(rng.uniform(0.5, 2.5))
        server.kill()
        th.join()
        stats, ids = result["load"]
        server = Server(args.neardup, index, free_port())
        lost = [i for i in ids if get(server.addr, f"/v1/documents/{i}")[0] != 200]
        server.stop()
        trials.append({"acked": len(ids), "lost": len(lost), "errors": stats["errors"]})
        print(f"[serve] kill trial {k + 1}: {len(ids)} acknowledged adds, {len(lost)} lost", file=sys.stderr)

    q = main_run["query_ms"]
    a = main_run["add_ms"]
    lines = [
        "# Benchmark: `neardup serve` under load and SIGKILL",
        "",
        f"- **date**: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- **machine**: {os.cpu_count()} cores shared by the load generator and the server; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end",
        f"- **index**: {corpus['title']}, {corpus['docs']:,} documents ({corpus['origin']}); built in {build_s:.1f} s",
        f"- **load**: {args.clients} concurrent keep-alive clients (bench/load: Rust, HTTP/1.1 on one thread) on loopback, "
        f"{100 - 100 * args.add_share:.0f} % `POST /v1/query` of one summary, {100 * args.add_share:.0f} % "
        f"`POST /v1/documents` of one new summary (durable commit before the answer), for {args.seconds:.0f} s after a 5 s warm-up",
        f"- **command**: `bench/serve {os.environ.get('BENCH_ARGS', '')}`".replace(' `', '`'),
        "",
        "| | requests/s | queries/s | query p50 / p99 / p99.9 ms | add p50 / p99 / p99.9 ms | errors |",
        "|---|--:|--:|--:|--:|--:|",
        f"| main run | {main_run['requests_per_s']:,.0f} | {main_run['queries_per_s']:,.0f} | "
        f"{q['p50']:.2f} / {q['p99']:.2f} / {q['p999']:.2f} | {a['p50']:.2f} / {a['p99']:.2f} / {a['p999']:.2f} | {main_run['errors']} |",
    ]
    if top_run:
        tq, ta = top_run["query_ms"], top_run["add_ms"]
        lines.append(
            f"| queries with `\"top\": {args.top}` | {top_run['requests_per_s']:,.0f} | {top_run['queries_per_s']:,.0f} | "
            f"{tq['p50']:.2f} / {tq['p99']:.2f} / {tq['p999']:.2f} | {ta['p50']:.2f} / {ta['p99']:.2f} / {ta['p999']:.2f} | {top_run['errors']} |")
    lines += [
        "",
        "- the main run's queries ask for every neighbour: a summary has 79 on average and 1 % of them "
        "(boilerplate such as \"Add your description here\") have about 4,900, answers of ~200 KB; "
        f"the second run, right after it on the same server, asks for the {args.top} most similar",
        f"- acknowledged adds checked afterwards: {min(2000, len(acked)):,} of {len(acked):,}, missing {missing}; "
        f"SIGTERM at the end: exit code {code}",
    ]
    if memory:
        def describe(m):
            return (f"median {mib(m['first_median'])} in its first tenth, {mib(m['last_median'])} in its last "
                    f"(**{100 * m['median_change']:+.1f} %**); mean {mib(m['first_tenth'])} and {mib(m['last_tenth'])} "
                    f"({100 * m['change']:+.1f} %); min {mib(m['min'])}, max {mib(m['max'])}")
        lines += [
            f"- memory over a {memory['seconds']:.0f} s run of the same load ({memory['run']['requests_per_s']:,.0f} requests/s, "
            f"{memory['run']['acked_adds']:,} documents added, {memory['docs_after'] or 0:,} in the index at the end, "
            f"{memory['run']['errors']} errors), sampled twice a second:",
            f"  - the server's own memory (RssAnon: heap, stacks): {describe(memory['anon'])}",
            f"  - the index's mapped pages (RssFile, which grows with the index and the page cache can drop): {describe(memory['file'])}",
            f"  - RSS, both: {describe(memory['rss'])}",
        ]
    total_acked = sum(t["acked"] for t in trials)
    total_lost = sum(t["lost"] for t in trials)
    lines += [
        f"- kill trials: {len(trials)} × (8 clients, 50 % adds, SIGKILL of the server 0.5–2.5 s into a 3 s load, "
        f"restart, every acknowledged add looked up): {total_acked:,} acknowledged adds, **{total_lost} lost**",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    with open(args.out, "w") as f:
        f.write(text)
    print(f"(written to {os.path.relpath(args.out, ROOT)})")
    subprocess.run(["rm", "-rf", work])
    return 1 if total_lost else 0


if __name__ == "__main__":
    sys.exit(main())
