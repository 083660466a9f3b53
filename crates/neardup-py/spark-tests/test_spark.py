"""neardup.spark on a real Spark cluster (scripts/test-spark starts a standalone master and
two workers and ships the package to them as a packed environment): every case of
testdata/cases, the PyPI sample and its dirty variants give exactly what the `neardup`
command gives on one machine with ``--no-neighbours``, whatever the partitioning."""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path
from typing import Any, Iterator

import pytest
from pyspark.sql import DataFrame, SparkSession

import neardup
from neardup import spark as nds
from conftest import ROOT, Cli, load_cases

SAMPLE = ROOT / "testdata" / "pypi-summaries.jsonl"
SCHEMA = "id string, text string"


def cli_round(x: float) -> float:
    """A similarity as the command prints it: 6 decimals, halves away from zero."""
    scaled = x * 1e6
    whole = math.floor(scaled)
    return (whole + 1 if scaled - whole >= 0.5 else whole) / 1e6


def frame(spark: SparkSession, texts: list[Any], partitions: int = 2) -> DataFrame:
    """Texts with ids 0..n-1, in `partitions` input partitions, in order."""
    rows = spark.sparkContext.parallelize(list(enumerate(texts)), partitions)
    return spark.createDataFrame(rows, "id long, text string")


def pair_rows(df: DataFrame) -> set[tuple[Any, Any, float]]:
    return {(r["a"], r["b"], cli_round(r["jaccard"])) for r in df.collect()}


def cluster_rows(df: DataFrame) -> set[tuple[Any, Any, bool, float]]:
    return {
        (r["id"], r["duplicate_of"], r["kept"], -1.0 if r["jaccard"] is None else cli_round(r["jaccard"]))
        for r in df.collect()
    }


def cli_pairs(lines: list[dict[str, Any]]) -> set[tuple[Any, Any, float]]:
    return {(o["a"], o["b"], o["jaccard"]) for o in lines}


def cli_clusters(lines: list[dict[str, Any]]) -> set[tuple[Any, Any, bool, float]]:
    return {(o["id"], o.get("duplicate_of", o["id"]), o["kept"], o.get("jaccard", -1.0)) for o in lines}


def as_lists(rows: set[tuple[Any, Any, bool, float]]) -> list[list[Any]]:
    """Clusters as the cases write them: kept first, then duplicates in input order."""
    by_kept: dict[Any, list[Any]] = {}
    for doc, kept, _, _ in rows:
        by_kept.setdefault(kept, [])
        if doc != kept:
            by_kept[kept].append(doc)
    return sorted([k, *sorted(d)] for k, d in by_kept.items())


CASE_LIST = [(n, c) for n, c in load_cases() if not c["lsh_may_miss"] and (c["engines"] is None or "spark" in c["engines"])]


@pytest.mark.parametrize("name,case", CASE_LIST, ids=[n for n, _ in CASE_LIST])
def test_cases(spark: SparkSession, cli: Cli, name: str, case: dict[str, Any]) -> None:
    settings = {
        "shingle": case["shingle"],
        "normalize": case["normalize"],
        "threshold": case["threshold"],
        "num_perm": case["num_perm"],
        "multiset": case["multiset"],
    }
    options = ["--shingle", case["shingle"], "--normalize", case["normalize"],
               "-t", str(case["threshold"]), "--num-perm", str(case["num_perm"]), "--no-neighbours",
               *(["--multiset"] if case["multiset"] else [])]
    df = frame(spark, case["docs"])
    pairs = pair_rows(nds.pairs(df, partitions=3, **settings))
    assert sorted([a, b] for a, b, _ in pairs) == sorted(case["pairs"]), name
    assert pairs == cli_pairs(cli.run("pairs", case["docs"], *options)), name
    expected = cli_clusters(cli.run("clusters", case["docs"], *options))
    # The components found on the driver (the default budget), then by Spark's rounds.
    for budget in (None, 0):
        extra = {} if budget is None else {"components_budget": budget}
        clusters = cluster_rows(nds.clusters(df, partitions=3, **settings, **extra))
        assert as_lists(clusters) == sorted(case["clusters"]), (name, budget)
        assert clusters == expected, (name, budget)


# Five PyPI summaries: the first's band key matches those of the last two in its top 32
# bits, by chance, in a band where the two share a bucket. A corpus run buckets by those
# 32 bits, so the chance match heads that bucket and takes its links; the other buckets of
# the two are headed by documents not similar enough, and the command finds no cluster.
# With the whole 64-bit key Spark linked the two and removed the last (issue 37: on the
# 841,708 summaries, types-aiobotocore-s3vectors).
CHANCE_MATCH = [
    "Generate OKF knowledge bundles from codebases — Claude skill + OpenCode integration",
    "Type annotations for aiobotocore AccessAnalyzer 3.10.0 service generated with mypy-boto3-builder 8.12.0",
    "Type annotations for aiobotocore S3Control 3.10.0 service generated with mypy-boto3-builder 8.12.0",
    "Type annotations for aiobotocore S3Outposts 3.10.0 service generated with mypy-boto3-builder 8.12.0",
    "Type annotations for aiobotocore S3Tables 3.10.0 service generated with mypy-boto3-builder 8.12.0",
]


def test_buckets_are_the_commands_chance_matches_included(spark: SparkSession, cli: Cli) -> None:
    df = frame(spark, CHANCE_MATCH)
    expected = cli_clusters(cli.run("clusters", CHANCE_MATCH, "--no-neighbours"))
    for parts in (1, 3):
        assert cluster_rows(nds.clusters(df, partitions=parts)) == expected, parts
    kept = sorted(r["id"] for r in nds.dedup(df, partitions=3).collect())
    assert kept == sorted(o["id"] for o in cli.run("dedup", CHANCE_MATCH, "--no-neighbours"))
    # The pair is found where every pair of a bucket is verified.
    assert (3, 4) in {(a, b) for a, b, _ in pair_rows(nds.pairs(df, partitions=3))}


def test_the_walk_reads_the_blocks_in_place_and_names_a_bad_table() -> None:
    """The blocks go from a task's sketch to the walk as Arrow columns (no Python object
    per block): the walk reads `binary` and `large_binary` alike, and a table without
    the columns it needs is refused with their names, not a crash. No Spark needed."""
    import numpy as np
    import pyarrow as pa
    from neardup import _neardup

    config = nds._config({})._native
    texts = pa.chunked_array([pa.array(CHANCE_MATCH)])
    kinds, _, ends, data = (
        np.asarray(c) for c in _neardup.spark_sketch(config, np.arange(5, dtype=np.int64), texts, 1, 1)
    )
    starts = [0, *ends[:-1].tolist()]
    blocks = [data[s:e].tobytes() for s, e in zip(starts, ends.tolist())]
    table = pa.table({"kind": pa.array(kinds, pa.int32()), "block": pa.array(blocks, pa.binary())})

    def links(t: Any) -> set[tuple[int, int]]:
        found: set[tuple[int, int]] = set()
        for a, b, kind in _neardup._BucketWalk(t, "links"):
            found |= {(x, y) for x, y, k in zip(*(np.asarray(c).tolist() for c in (a, b, kind))) if k == 0}
        return found

    assert (0, 3) in links(table) and (3, 4) not in links(table)
    assert links(table.cast(pa.schema([("kind", pa.int32()), ("block", pa.large_binary())]))) == links(table)
    for bad, message in [
        (table.drop_columns(["block"]), "no column block"),
        (table.set_column(1, "block", pa.array(["x"] * len(blocks))), "block that is not binary"),
        (table.set_column(0, "kind", pa.array(kinds, pa.int64())), "no int32 column kind"),
        (table.set_column(0, "kind", pa.array([7] * len(blocks), pa.int32())), "unknown block kind 7"),
    ]:
        with pytest.raises(ValueError, match=message):
            _neardup._BucketWalk(bad, "links")


@pytest.fixture(scope="module")
def sample_cli(cli_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The command's pairs, clusters and dedup of the PyPI sample."""
    import subprocess

    out = tmp_path_factory.mktemp("cli")
    got: dict[str, Any] = {}
    for command in ("pairs", "clusters", "dedup"):
        path = out / f"{command}.jsonl"
        subprocess.run([str(cli_bin), command, str(SAMPLE), "-q", "--no-neighbours", "-o", str(path)], check=True)
        got[command] = [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l]
    return got


# (input partitions, shuffle partitions, components' budget): one of each, copies split
# across partitions, and the components found by the driver (default budget), by Spark's
# rounds on the tasks' forests (0), and by the rounds because the forests outgrow a budget
# of 100 edges.
LAYOUTS = [(1, 1, None), (4, 7, None), (4, 7, 0), (2, 3, 1600)]


@pytest.mark.parametrize("inputs,parts,budget", LAYOUTS)
def test_pypi_sample_equals_the_command(
    spark: SparkSession, sample_cli: dict[str, Any], inputs: int, parts: int, budget: Any
) -> None:
    df = read_sample(spark, inputs)
    assert (df.rdd.getNumPartitions() > 1) == (inputs > 1)
    extra = {} if budget is None else {"components_budget": budget}
    assert pair_rows(nds.pairs(df, partitions=parts)) == cli_pairs(sample_cli["pairs"])
    with stages() as seen:
        assert cluster_rows(nds.clusters(df, partitions=parts, **extra)) == cli_clusters(sample_cli["clusters"])
    assert ("connected components on the driver" in seen) == (budget is None), seen
    assert ("connected components in rounds" in seen) == (budget is not None), seen
    kept = nds.dedup(df, partitions=parts, **extra)
    assert kept.columns == ["id", "text"]
    assert sorted(r["id"] for r in kept.collect()) == sorted(o["id"] for o in sample_cli["dedup"])


@contextlib.contextmanager
def stages() -> Iterator[list[str]]:
    """The names of the stages a run goes through (the benchmark's observer)."""
    seen: list[str] = []
    nds._observer = lambda name, df: seen.append(name)
    try:
        yield seen
    finally:
        nds._observer = None


def test_a_bad_components_budget_is_named(spark: SparkSession) -> None:
    df = frame(spark, ["a red apple on the table", "A red apple on the table!"])
    for bad in (-1, 1.5, True):
        with pytest.raises(neardup.NeardupError, match="components_budget"):
            nds.clusters(df, components_budget=bad)


def read_sample(spark: SparkSession, inputs: int) -> DataFrame:
    """The sample read as a user reads it, split into `inputs` partitions in file order
    (about that many: the split size is read when a job runs, so it stays set until
    the next call)."""
    size = SAMPLE.stat().st_size
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(size // inputs + 1))
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    spark.conf.set("spark.sql.files.minPartitionNum", str(inputs))
    return spark.read.json(str(SAMPLE), schema=SCHEMA)


@pytest.mark.parametrize("keep", ["last", "longest"])
def test_keep_policies_equal_the_command(spark: SparkSession, cli_bin: Path, tmp_path: Path, keep: str) -> None:
    import subprocess

    out = tmp_path / "clusters.jsonl"
    subprocess.run([str(cli_bin), "clusters", str(SAMPLE), "-q", "--no-neighbours", "--keep", keep, "-o", str(out)],
                   check=True)
    expected = cli_clusters([json.loads(l) for l in out.read_text(encoding="utf-8").splitlines() if l])
    got = cluster_rows(nds.clusters(read_sample(spark, 3), keep=keep, partitions=4))
    assert got == expected


def test_every_record_is_accounted_for(spark: SparkSession, cli: Cli) -> None:
    """Empty, missing and too-short texts are skipped as the command skips them: dedup keeps
    exactly the command's records, and kept + removed + skipped = read."""
    texts: list[Any] = ["", None, "ab", "   ", "a red apple on the table", "A red apple on the table!",
                        "pears and plums", "pears and plums", "ab"]
    df = frame(spark, texts, partitions=3)
    kept = sorted(r["id"] for r in nds.dedup(df, partitions=2).collect())
    expected = sorted(o["id"] for o in cli.run("dedup", [t or "" for t in texts], "--no-neighbours"))
    assert kept == expected
    removed = [r for r in nds.clusters(df, partitions=2).collect() if not r["kept"]]
    skipped = [i for i, t in enumerate(texts) if not (t or "").strip()]
    assert len(kept) + len(removed) + len(skipped) == len(texts)
    assert {r["id"] for r in removed}.isdisjoint(kept)


def test_without_ids_documents_are_named_by_position(spark: SparkSession) -> None:
    texts = ["pears", "a red apple on the table", "plums", "A red apple on the table!"]
    df = spark.createDataFrame(spark.sparkContext.parallelize([(t,) for t in texts], 2), "body string")
    rows = nds.pairs(df, "body", None).collect()
    assert len(rows) == 1
    # Positions grow in input order (not densely: partition p starts at p * 2^33).
    assert 0 < rows[0]["a"] < rows[0]["b"]
    assert rows[0]["b"] >= 2**33


def test_a_missing_column_is_named(spark: SparkSession) -> None:
    df = spark.createDataFrame([("x", "text")], "id string, body string")
    with pytest.raises(neardup.NeardupError, match="'text'"):
        nds.pairs(df)
    with pytest.raises(neardup.NeardupError, match="threshold"):
        nds.clusters(df, "body", threshold=1.5)
    with pytest.raises(neardup.NeardupError, match="partitions must be at least 1, got 0"):
        nds.dedup(df, "body", partitions=0)


def test_executors_run_the_shipped_environment(spark: SparkSession) -> None:
    """The package reaches the executors as a user ships it: their Python workers run the
    packed environment's interpreter and import neardup from it."""
    import pyarrow as pa

    def probe(batches: Any) -> Any:
        import os
        import sys

        import neardup as shipped

        for _ in batches:
            yield pa.RecordBatch.from_pylist(
                [{"python": sys.executable, "neardup": shipped.__file__, "pid": os.getpid()}]
            )

    rows = spark.range(0, 4, numPartitions=2).mapInArrow(probe, "python string, neardup string, pid long").collect()
    import os

    assert rows and all("/environment/" in r["python"] and "/environment/" in r["neardup"] for r in rows), rows
    assert all(r["pid"] != os.getpid() for r in rows)


BARE_DRIVER = """
import sys
from pyspark.sql import SparkSession
import neardup
from neardup import spark as nds

spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.log.level", "ERROR").getOrCreate())
df = spark.createDataFrame([(0, "a red apple on the table"), (1, "A red apple on the table!")], "id long, text string")
try:
    nds.dedup(df).collect()
except neardup.NeardupError as e:
    print("NeardupError:", e)
else:
    print("no error")
"""


def test_executors_without_the_package_get_one_clear_error(tmp_path: Path) -> None:
    """A local session whose workers' Python lacks neardup (the driver's environment but
    for the package): the first call fails before any heavy stage with one error that names
    the workers' Python and says what to set, the local case (PYSPARK_PYTHON) first, then
    the cluster's (spark.archives), not a worker's traceback."""
    import os
    import subprocess
    import sys
    import sysconfig

    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = bare / "bin" / "python"
    site = Path(subprocess.check_output(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], text=True
    ).strip())
    for entry in Path(sysconfig.get_path("purelib")).iterdir():
        if not entry.name.startswith("neardup") and not (site / entry.name).exists():
            (site / entry.name).symlink_to(entry)
    assert subprocess.run([str(python), "-c", "import pyarrow, numpy"]).returncode == 0
    assert subprocess.run([str(python), "-c", "import neardup"], capture_output=True).returncode != 0
    env = {**os.environ, "PYSPARK_PYTHON": str(python), "SPARK_LOCAL_IP": "127.0.0.1"}
    out = subprocess.run([sys.executable, "-c", BARE_DRIVER], env=env, capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    message = out.stdout.strip()
    assert message.startswith("NeardupError:"), (out.stdout, out.stderr[-2000:])
    assert f"their Python ({python}) cannot import neardup" in message
    assert "No module named 'neardup'" in message
    assert f"PYSPARK_PYTHON={sys.executable}" in message
    assert message.index("For a local session (local[1])") < message.index("spark.archives=")
    assert "Traceback" not in message and "\n" not in message


def test_the_readme_example_runs(spark: SparkSession, sample_cli: dict[str, Any], tmp_path: Path) -> None:
    """The README's cluster example, on the PyPI sample split in two files (the session is
    the suite's: `getOrCreate` returns it). Spark reads the larger file first, so the first
    file holds two thirds: input order is then the sample's."""
    import os
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## On a cluster"):readme.index("## As a library")]
    block = next(b for b in re.findall(r"```python\n(.*?)```", section, flags=re.S) if "spark.archives" in b)
    # The split settings other tests set would cut the files into pieces read by size.
    for key in ("maxPartitionBytes", "openCostInBytes", "minPartitionNum"):
        spark.conf.unset(f"spark.sql.files.{key}")
    (tmp_path / "listings").mkdir()
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    half = 2 * len(lines) // 3
    (tmp_path / "listings" / "a.jsonl").write_text("".join(lines[:half]), encoding="utf-8")
    (tmp_path / "listings" / "b.jsonl").write_text("".join(lines[half:]), encoding="utf-8")
    # Spark resolves relative paths against the driver JVM's directory, not Python's.
    for name in ("listings/", "unique/", "clusters/", "pairs/"):
        block = block.replace(f'"{name}', f'"{tmp_path}/{name}')
    python = os.environ.get("PYSPARK_PYTHON")
    try:
        exec(compile(block, "README.md", "exec"), {})
    finally:
        if python is not None:
            os.environ["PYSPARK_PYTHON"] = python
    unique = spark.read.parquet(str(tmp_path / "unique"))
    assert sorted(r["id"] for r in unique.collect()) == sorted(o["id"] for o in sample_cli["dedup"])
    assert spark.read.parquet(str(tmp_path / "clusters")).filter("not kept").count() > 0
    assert spark.read.parquet(str(tmp_path / "pairs")).count() > 0


def test_triage_verification_equals_the_command(spark: SparkSession, cli_bin: Path, tmp_path: Path) -> None:
    """Triage accepts or rejects on the MinHash estimate far from the threshold and computes
    the exact Jaccard in between, as the command does: the same pairs and clusters."""
    import subprocess

    got_pairs = {(r["a"], r["b"]) for r in nds.pairs(read_sample(spark, 2), verify="triage", partitions=3).collect()}
    got_clusters = cluster_rows(nds.clusters(read_sample(spark, 2), verify="triage", partitions=3))
    expected: dict[str, list[dict[str, Any]]] = {}
    for command in ("pairs", "clusters"):
        out = tmp_path / f"{command}.jsonl"
        subprocess.run([str(cli_bin), command, str(SAMPLE), "-q", "--no-neighbours", "--verify", "triage",
                        "-o", str(out)], check=True)
        expected[command] = [json.loads(l) for l in out.read_text(encoding="utf-8").splitlines() if l]
    assert got_pairs == {(o["a"], o["b"]) for o in expected["pairs"]}
    assert {(d, k, kept) for d, k, kept, _ in got_clusters} == {
        (d, k, kept) for d, k, kept, _ in cli_clusters(expected["clusters"])
    }


def test_annotate_marks_the_rows_dedup_and_clusters_give(
    spark: SparkSession, sample_cli: dict[str, Any]
) -> None:
    """Every row marked: the kept ones are the command's dedup, the duplicates its
    clusters', and every mark the one-machine `neardup.annotate` gives without the checks
    beyond the buckets (its cluster, a position there, is the kept row's id here)."""
    rows = nds.annotate(read_sample(spark, 3), partitions=4).collect()
    lines = [json.loads(l) for l in SAMPLE.read_text(encoding="utf-8").splitlines() if l]
    assert len(rows) == len(lines)
    assert sorted(r["id"] for r in rows if r["kept"]) == sorted(o["id"] for o in sample_cli["dedup"])
    removed = {r["id"]: (r["duplicate_of"], cli_round(r["jaccard"])) for r in rows if r["duplicate_of"] is not None}
    assert removed == {o["id"]: (o["duplicate_of"], o["jaccard"]) for o in sample_cli["clusters"] if not o["kept"]}
    assert removed
    ids, texts = [o["id"] for o in lines], [o.get("text") for o in lines]
    local = neardup.annotate(texts, ids=ids, neighbours=False).to_pylist()
    want = {ids[i]: (ids[m["cluster"]], m["cluster_size"], m["kept"], m["duplicate_of"]) for i, m in enumerate(local)}
    assert {r["id"]: (r["cluster"], r["cluster_size"], r["kept"], r["duplicate_of"]) for r in rows} == want


def test_annotate_refuses_a_column_it_would_add_unless_prefixed(spark: SparkSession) -> None:
    df = frame(spark, ["a red apple on the table", "A red apple on the table!", "pears"])
    with pytest.raises(neardup.NeardupError, match=r"\['kept'\].*prefix="):
        nds.annotate(df.withColumn("kept", df["id"]))
    rows = nds.annotate(df.withColumn("kept", df["id"]), prefix="nd_").orderBy("id").collect()
    assert [(r["kept"], r["nd_kept"], r["nd_duplicate_of"], r["nd_cluster_size"]) for r in rows] == [
        (0, True, None, 2), (1, False, 0, 2), (2, True, None, 1)
    ]


def test_runs_against_a_reference_equal_the_command(
    spark: SparkSession, cli_bin: Path, tmp_path: Path
) -> None:
    """The sample's first third as the reference: Spark keeps the records `neardup dedup
    --reference` keeps, annotate names the reference records they duplicate as the
    command's annotate does, and pairs and clusters are the command's."""
    import subprocess

    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    third = len(lines) // 3
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_text("".join(lines[:third]), encoding="utf-8")
    new.write_text("".join(lines[third:]), encoding="utf-8")
    expected: dict[str, list[dict[str, Any]]] = {}
    for command in ("dedup", "annotate", "pairs", "clusters"):
        out = tmp_path / f"{command}.jsonl"
        subprocess.run([str(cli_bin), command, str(new), "--reference", str(old), "-q", "--no-neighbours",
                        "-o", str(out)], check=True)
        expected[command] = [json.loads(l) for l in out.read_text(encoding="utf-8").splitlines() if l]
    reference = spark.read.json(str(old), schema=SCHEMA)
    df = spark.read.json(str(new), schema=SCHEMA)
    kept = sorted(r["id"] for r in nds.dedup(df, reference=reference, partitions=4).collect())
    assert kept == sorted(o["id"] for o in expected["dedup"])
    assert len(kept) < len(sorted(r["id"] for r in nds.dedup(df, partitions=4).collect()))
    marks = {r["id"]: (r["kept"], r["duplicate_of"]) for r in nds.annotate(df, reference=reference).collect()}
    old_ids = {json.loads(l)["id"] for l in lines[:third]}
    want = {o["id"]: (o["kept"], o["duplicate_of"]) for o in expected["annotate"] if o["id"] not in old_ids}
    assert marks == want
    assert any(of in old_ids for _, of in marks.values())
    pairs = pair_rows(nds.pairs(df, reference=reference, partitions=3))
    assert pairs == cli_pairs(expected["pairs"])
    assert any(a in old_ids for a, _, _ in pairs) and not any(b in old_ids for _, b, _ in pairs)
    clusters = cluster_rows(nds.clusters(df, reference=reference, partitions=3))
    assert clusters == cli_clusters(expected["clusters"])
