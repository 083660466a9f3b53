"""neardup.spark on a two-worker standalone cluster beside the `neardup` command, in the
same run (bench/spark starts the cluster and calls this with the driver's Python).

For one corpus: the command's dedup, clusters, pairs (all with --no-neighbours, what the
Spark run reproduces) and the exact join; then on the cluster the session's start, dedup
end to end, the same run again stage by stage (each stage materialized, with its shuffle
bytes), clusters and pairs written out and compared with the command's, and the pairs'
recall against the exact join. Writes bench/results/RESULTS-spark.md."""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
import pyarrow.parquet as pq

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(BENCH))

from spark_metrics import stage_metrics  # noqa: E402
from spark_session import session  # noqa: E402

import bench as common  # noqa: E402


def timed(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of a command (GNU time is not needed: resource usage of children)."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(args, check=True)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def tree_cpu(root: int = 0) -> float:
    """CPU seconds of this process and all its descendants (a local session's JVM and
    Python workers), those that exited included once reaped (cutime, cstime)."""
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # After the name: state, ppid, ..., utime (14th field), stime, cutime, cstime.
        stats[int(d.name)] = (int(fields[1]), sum(int(x) for x in fields[11:15]) / tick)
    me = root or os.getpid()
    total, todo = 0.0, [me]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, (0, 0.0))[1]
        todo.extend(p for p, (parent, _) in stats.items() if parent == pid)
    return total


def executors_cpu() -> float:
    """CPU seconds of a cluster's executors (their JVMs and Python workers, each a process
    tree of its own on this machine); 0 in a local session, whose executor is the driver."""
    total = 0.0
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and b"CoarseGrainedExecutorBackend" in (d / "cmdline").read_bytes():
                total += tree_cpu(int(d.name))
        except OSError:
            continue
    return total


def local_session(partitions: int, memory: str):
    """A local[2] session whose Python workers run this Python (PYSPARK_PYTHON), as the
    README's local case sets it."""
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return (
        SparkSession.builder.master("local[2]").appName("neardup-bench-local")
        .config("spark.driver.memory", memory)
        .config("spark.sql.shuffle.partitions", str(partitions))
        .config("spark.ui.port", "0").config("spark.ui.showConsoleProgress", "false")
        .config("spark.log.level", "ERROR")
        .getOrCreate()
    )


def read_pairs_jsonl(path: Path) -> pa.Table:
    schema = pa.schema([("a", pa.string()), ("b", pa.string()), ("jaccard", pa.float64())])
    return pj.read_json(
        path, parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    )


def by_pair(t: pa.Table) -> pa.Table:
    t = t.select(["a", "b", "jaccard"]).combine_chunks()
    return t.take(pc.sort_indices(t, sort_keys=[("a", "ascending"), ("b", "ascending")]))


def compare_pairs(cli: pa.Table, spark: pa.Table) -> tuple[bool, float]:
    """Same (a, b) pairs in both, and the largest Jaccard difference (the command prints
    6 decimals)."""
    cli, spark = by_pair(cli), by_pair(spark)
    same = cli.num_rows == spark.num_rows and cli["a"].equals(spark["a"]) and cli["b"].equals(spark["b"])
    diff = float(np.abs(cli["jaccard"].to_numpy() - spark["jaccard"].to_numpy()).max()) if same and cli.num_rows else 0.0
    return same, diff


def found(exact: pa.Table, got: pa.Table) -> int:
    """How many of the exact join's pairs `got` has."""
    key = lambda t: pc.binary_join_element_wise(t["a"], t["b"], "\x00")  # noqa: E731
    return int(pc.sum(pc.is_in(key(exact), value_set=key(got))).as_py() or 0)


def cluster_set(rows: list[dict]) -> set:
    def r6(x: float) -> float:
        s = x * 1e6
        w = math.floor(s)
        return (w + 1 if s - w >= 0.5 else w) / 1e6

    return {
        (r["id"], r.get("duplicate_of") or r["id"], r["kept"],
         -1.0 if r.get("jaccard") is None else r6(r["jaccard"]) if "cluster" not in r else r["jaccard"])
        for r in rows
    }


def peer(args: argparse.Namespace) -> None:
    """neardup.spark.pairs and Spark ML's MinHashLSH (the recipe Spark users reach for:
    char 5-grams hashed by HashingTF, approxSimilarityJoin at distance 1 - t) on the
    corpus's first `args.peer` documents, in one local[2] session, each timed to its
    pairs written, with recall against the exact join (`neardup pairs --exact`)."""
    from pyspark.ml.feature import HashingTF, MinHashLSH, NGram
    from pyspark.sql import functions as F

    import neardup.spark as nds

    work = Path(args.work) / "peer"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    corpus = work / f"first-{args.peer}.jsonl"
    with Path(args.corpus).open("rb") as src, corpus.open("wb") as dst:
        for i, line in enumerate(src):
            if i == args.peer:
                break
            dst.write(line)
    docs = sum(1 for _ in corpus.open("rb"))
    truth_path = work / "exact.jsonl"
    subprocess.run([args.neardup, "pairs", str(corpus), "-q", "--exact", "-o", str(truth_path)], check=True)
    truth = read_pairs_jsonl(truth_path)
    # Unordered: the command orders a pair by input order, MinHashLSH's join by neither.
    truth_pairs = {tuple(sorted(p)) for p in zip(truth["a"].to_pylist(), truth["b"].to_pylist())}
    load = os.getloadavg()
    spark = local_session(args.partitions, "6g")
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.read.json(str(corpus), schema="id string, text string").persist()
    df.count()
    rows = []

    def timed_pairs(name: str, make) -> None:
        out = work / name.replace(" ", "-")
        start = time.perf_counter()
        make().write.parquet(str(out))
        wall = time.perf_counter() - start
        got = pq.read_table(out, columns=["a", "b"])
        pairs = {tuple(sorted(p)) for p in zip(got["a"].to_pylist(), got["b"].to_pylist())}
        rows.append((name, wall, len(pairs), len(pairs & truth_pairs)))
        print(f"[bench] {name}: {wall:.1f} s, {got.num_rows:,} pairs", file=sys.stderr)

    # The first call in the session also starts the Python workers and compiles the
    # plans; the second is the one compared.
    timed_pairs("neardup.spark.pairs (first in the session)", lambda: nds.pairs(df).select("a", "b"))
    timed_pairs("neardup.spark.pairs", lambda: nds.pairs(df).select("a", "b"))
    # Char 5-grams as Spark ML makes them: the text split into characters, NGram(5).
    chars = df.select("id", F.split(F.coalesce("text", F.lit("")), "").alias("chars"))
    grams = NGram(n=5, inputCol="chars", outputCol="grams").transform(chars)
    vectors = HashingTF(inputCol="grams", outputCol="features", numFeatures=1 << 20, binary=True).transform(grams)
    # MinHashLSH refuses an empty vector (a text under 5 characters).
    vectors = vectors.filter(F.size("grams") > 0).select("id", "features").persist()
    vectors.count()
    for tables in (args.peer_tables or [5]):
        model = MinHashLSH(inputCol="features", outputCol="hashes", numHashTables=tables, seed=1).fit(vectors)

        def join(model=model):
            joined = model.approxSimilarityJoin(vectors, vectors, 1 - 0.8, distCol="distance")
            return joined.select(F.col("datasetA.id").alias("a"), F.col("datasetB.id").alias("b")).filter("a < b")

        timed_pairs(f"MinHashLSH numHashTables={tables}", join)
    spark.stop()
    lines = [
        "# Benchmark: neardup.spark against Spark ML's MinHashLSH",
        "",
        f"- **date**: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average "
        f"{' '.join(f'{x:.2f}' for x in load)} at the start (other work may share the machine)",
        f"- **session**: local[2], {args.partitions} shuffle partitions; **corpus**: the first {docs:,} of "
        f"{Path(args.corpus).name}; threshold 0.8, char 5-grams; truth: `neardup pairs --exact` "
        f"({truth.num_rows:,} pairs)",
        f"- **command**: `bench/spark {os.environ.get('BENCH_ARGS', '')}`".rstrip(),
        "",
        "| run | wall (pairs written) | pairs | recall | × neardup.spark |",
        "|---|--:|--:|--:|--:|",
    ]
    base = rows[1][1]
    for name, wall, n, hits in rows:
        lines.append(f"| {name} | {wall:.1f} s | {n:,} | {hits / max(truth.num_rows, 1):.4f} | {wall / base:.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out or BENCH / "results" / "RESULTS-spark-peer.md").write_text(text, encoding="utf-8")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--corpus", default=str(BENCH / "data" / "pypi-summaries.jsonl"))
    p.add_argument("--neardup", required=True)
    p.add_argument("--master")
    p.add_argument("--archive")
    p.add_argument("--local", action="store_true", help="a local[2] session, no cluster")
    p.add_argument("--only-dedup", action="store_true", help="the dedup runs alone")
    p.add_argument("--peer", type=int, default=0, help="Spark ML's MinHashLSH on the first N documents")
    p.add_argument("--peer-tables", type=int, action="append", help="MinHashLSH's numHashTables (repeat; 5)")
    p.add_argument("--partitions", type=int, default=8)
    p.add_argument("--executor-memory", default="3g")
    p.add_argument("--work", default=str(ROOT / "target" / "spark-bench"))
    p.add_argument("--out")
    args = p.parse_args()
    if not args.local and not (args.master and args.archive):
        p.error("--master and --archive, or --local")
    if args.peer:
        peer(args)
        return
    if args.out is None:
        args.out = str(BENCH / "results" / ("RESULTS-spark-local.md" if args.local else "RESULTS-spark.md"))
    corpus, work = Path(args.corpus), Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    docs = sum(1 for _ in corpus.open("rb"))
    load_start = os.getloadavg()

    # The command, on this machine, in the same run.
    cli: dict[str, tuple[float, float]] = {}
    commands = [
        ("dedup", ["dedup", "--no-neighbours"]),
        ("clusters", ["clusters", "--no-neighbours"]),
        ("pairs", ["pairs", "--no-neighbours"]),
        ("exact", ["pairs", "--exact"]),
    ]
    for name, command in commands[:1] if args.only_dedup else commands:
        out = work / f"cli-{name}.jsonl"
        cli[name] = timed([args.neardup, command[0], str(corpus), "-q", *command[1:], "-o", str(out)])
        print(f"[bench] neardup {' '.join(command)}: {cli[name][0]:.1f} s", file=sys.stderr)

    # The cluster.
    import neardup.spark as nds

    start = time.perf_counter()
    if args.local:
        spark = local_session(args.partitions, "6g")
    else:
        spark = session(args.master, args.archive, "neardup-bench", {
            "spark.executor.memory": args.executor_memory,
            "spark.sql.shuffle.partitions": str(args.partitions),
        })
    spark.sparkContext.setLogLevel("ERROR")
    # Executors start with the first job: a trivial one, so its time is counted here.
    spark.sparkContext.parallelize(range(4), 4).map(lambda x: x).collect()
    startup = time.perf_counter() - start
    print(f"[bench] session and executors: {startup:.1f} s", file=sys.stderr)
    schema = "id string, text string"

    def frame():
        return spark.read.json(str(corpus), schema=schema)

    cpus: dict[str, float] = {}

    def run(name: str, action) -> float:
        # A run caches its input and intermediate results; an equal plan would reuse them.
        spark.catalog.clearCache()
        cpu = tree_cpu()
        start = time.perf_counter()
        action()
        wall = time.perf_counter() - start
        cpus[name] = tree_cpu() - cpu
        print(f"[bench] spark {name}: {wall:.1f} s (CPU of the driver's process tree {cpus[name]:.1f} s)",
              file=sys.stderr)
        return wall

    dedup_out = work / "spark-dedup"
    walls = {"dedup": run("dedup", lambda: nds.dedup(frame()).write.json(str(dedup_out)))}
    # Again in the same application: Spark has compiled the plans' code, the executors'
    # Python workers are up.
    warm_out = work / "spark-dedup-warm"
    walls["dedup again"] = run("dedup again", lambda: nds.dedup(frame()).write.json(str(warm_out)))

    # The same dedup, each stage materialized in turn: times and shuffle bytes per stage.
    steps: list[dict] = []
    seen = max((s["id"] for s in stage_metrics(spark)), default=-1)
    mark = [time.perf_counter()]

    def observe(name: str, df) -> None:
        nonlocal seen
        df.count()
        now = time.perf_counter()
        stages = [s for s in stage_metrics(spark) if s["id"] > seen]
        seen = max([seen] + [s["id"] for s in stages])
        steps.append({
            "name": name,
            "wall": now - mark[0],
            "run_ms": sum(s["executor_run_time_ms"] for s in stages),
            "jvm_cpu_ms": sum(s["executor_cpu_time_ms"] for s in stages),
            "shuffle_write": sum(s["shuffle_write_bytes"] for s in stages),
            "shuffle_read": sum(s["shuffle_read_bytes"] for s in stages),
        })
        mark[0] = now

    nds._observer = observe
    spark.catalog.clearCache()
    staged_cpu, staged_executors = tree_cpu(), executors_cpu()
    try:
        mark[0] = time.perf_counter()
        staged_out = work / "spark-dedup-staged"
        nds.dedup(frame()).write.json(str(staged_out))
        observe("dedup output", spark.createDataFrame([], "x int"))
    finally:
        nds._observer = None
    cpus["staged"] = tree_cpu() - staged_cpu
    cpus["staged executors"] = executors_cpu() - staged_executors

    if args.only_dedup:
        spark.stop()
        kept_cli = sorted(json.loads(l)["id"] for l in (work / "cli-dedup.jsonl").open(encoding="utf-8"))
        kept_spark = sorted(pa.concat_tables(
            [pj.read_json(f) for f in warm_out.glob("part-*.json") if f.stat().st_size]
        )["id"].to_pylist())
        summary = {
            "cli_dedup_wall": cli["dedup"][0], "cli_dedup_cpu": cli["dedup"][1], "startup": startup,
            "dedup": walls["dedup"], "dedup_again": walls["dedup again"], "cpu": cpus,
            "same": kept_cli == kept_spark, "kept": len(kept_spark),
            "stages": steps, "docs": docs, "load": os.getloadavg(),
        }
        text = json.dumps(summary, indent=1)
        print(text)
        Path(args.out).write_text(text, encoding="utf-8")
        return

    clusters_out = work / "spark-clusters.parquet"
    walls["clusters"] = run("clusters", lambda: nds.clusters(frame()).write.parquet(str(clusters_out)))
    pairs_out = work / "spark-pairs.parquet"
    walls["pairs"] = run("pairs", lambda: nds.pairs(frame()).write.parquet(str(pairs_out)))
    spark.stop()

    # Results against the command's and the exact join's.
    kept_cli = sorted(json.loads(l)["id"] for l in (work / "cli-dedup.jsonl").open(encoding="utf-8"))
    kept_spark = sorted(pa.concat_tables(
        [pj.read_json(f) for f in dedup_out.glob("part-*.json") if f.stat().st_size]
    )["id"].to_pylist())
    dedup_same = kept_cli == kept_spark
    cli_clusters = [json.loads(l) for l in (work / "cli-clusters.jsonl").open(encoding="utf-8")]
    spark_clusters = pq.read_table(clusters_out).to_pylist()
    clusters_same = cluster_set(cli_clusters) == cluster_set(spark_clusters)
    spark_pairs = pq.read_table(pairs_out, columns=["a", "b", "jaccard"])
    pairs_same, pairs_diff = compare_pairs(read_pairs_jsonl(work / "cli-pairs.jsonl"), spark_pairs)
    exact = read_pairs_jsonl(work / "cli-exact.jsonl")
    hits = found(exact, spark_pairs)

    band = steps[1]["shuffle_write"] if len(steps) > 1 else 0
    verify_bytes = next((s["shuffle_write"] for s in steps if s["name"] == "verify"), 0)
    ms = common.machine()
    lines = [
        "# Benchmark: neardup on a Spark cluster",
        "",
        f"- **date**: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- **machine**: {ms['nproc']} cores ({ms['cpu']}), {ms['memory']} memory, {ms['os']}; load average "
        f"{' '.join(f'{x:.2f}' for x in load_start)} at the start (other work may share the machine)",
        (f"- **cluster**: a local[2] session (driver and executor in one JVM, 6g), the workers running the "
         f"driver's Python (PYSPARK_PYTHON); {args.partitions} shuffle partitions" if args.local else
         f"- **cluster**: Spark standalone on this machine: a master and 2 workers (separate JVMs), one executor "
         f"of 1 core and {args.executor_memory} per worker; the package shipped as a packed environment "
         f"(spark.archives); {args.partitions} shuffle partitions"),
        f"- **corpus**: {docs:,} documents ({corpus.name}); settings: the defaults (char:5, nfkc, threshold 0.8, "
        f"128 permutations, 16 x 8 bands, exact verification)",
        "- **versions**: " + ", ".join(
            v if v.startswith(k) else f"{k} {v}" for k, v in common.versions(args.neardup, packages=["pyspark", "pyarrow", "numpy"]).items()
        ),
        f"- **command**: `bench/spark {os.environ.get('BENCH_ARGS', '')}`".rstrip(),
        "",
        "| run | wall | note |",
        "|---|--:|---|",
        f"| `neardup dedup --no-neighbours` (this machine, 2 threads) | {cli['dedup'][0]:.1f} s | CPU {cli['dedup'][1]:.1f} s |",
        f"| `neardup clusters --no-neighbours` | {cli['clusters'][0]:.1f} s | CPU {cli['clusters'][1]:.1f} s |",
        f"| `neardup pairs --no-neighbours` | {cli['pairs'][0]:.1f} s | CPU {cli['pairs'][1]:.1f} s |",
        f"| `neardup pairs --exact` (ground truth) | {cli['exact'][0]:.1f} s | CPU {cli['exact'][1]:.1f} s |",
        f"| Spark session and executors' start | {startup:.1f} s | once per application |",
        f"| **`neardup.spark.dedup`**, written as JSON (the application's first job) | **{walls['dedup']:.1f} s** | kept rows identical to the command's: {dedup_same} ({len(kept_spark):,}) |",
        f"| the same dedup again in the same application | {walls['dedup again']:.1f} s | |",
        f"| `neardup.spark.clusters`, written as Parquet | {walls['clusters']:.1f} s | rows identical to the command's (ids, kept, duplicate_of, Jaccard): {clusters_same} ({len(spark_clusters):,}) |",
        f"| `neardup.spark.pairs`, written as Parquet | {walls['pairs']:.1f} s | pairs identical to the command's: {pairs_same} ({spark_pairs.num_rows:,}; Jaccard within {pairs_diff:.1e}); recall against the exact join {hits / max(exact.num_rows, 1):.5%} ({hits:,} of {exact.num_rows:,}) |",
        "",
        "The dedup run a third time, each stage materialized before the next (so the stages add up to",
        "a little more than the run above; a stage's wall time counts from the end of the one before):",
        "",
        "| stage | wall | executors' run time | shuffle written | per document |",
        "|---|--:|--:|--:|--:|",
    ]
    for s in steps:
        lines.append(
            f"| {s['name']} | {s['wall']:.1f} s | {s['run_ms'] / 1000:.1f} s | {s['shuffle_write'] / 2**20:.1f} MiB "
            f"| {s['shuffle_write'] / docs:.0f} B |"
        )
    lines += [
        "",
        f"Band rows and set fingerprints (the shuffle of LSH): **{band / docs:.0f} bytes per document**; "
        f"the verification's shuffle (candidates deduplicated, texts brought to them): {verify_bytes / docs:.0f} bytes "
        "per document.",
    ]
    first = startup + walls["dedup"]
    work_cpu = cli["dedup"][1]
    run_s = sum(x["run_ms"] for x in steps) / 1000
    shuffled = sum(x["shuffle_write"] for x in steps)
    lines += [
        "",
        f"End to end for a user (session start + the first dedup): **{first:.1f} s**. The work itself, the "
        f"command's CPU time for the same job, is {work_cpu:.1f} s ({work_cpu / first:.0%}); the rest is Spark's: "
        "starting the application and its executors, compiling each plan's code on first use, moving rows "
        "between the JVM and the Python workers through Arrow, the shuffles, and the rounds of the "
        f"connected components. The staged run's executors worked {run_s:.1f} s in all "
        f"({run_s * 1e6 / docs:.0f} µs per document) and shuffled {shuffled / docs:.0f} bytes per document.",
        "",
        "Projection from these per-document figures (short documents like these; see ARCHITECTURE.md, "
        "*Scale-out plan*): 10⁹ documents shuffle "
        f"{shuffled * 1e9 / docs / 1e12:.2f} TB and take {run_s * 1e9 / docs / 3600:.0f} executor-core-hours, "
        f"{run_s * 1e9 / docs / 1600:.0f} s of work per core on 100 machines of 16 cores at this machine's "
        "speed per core, before Spark's fixed costs and the rounds' latency.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
