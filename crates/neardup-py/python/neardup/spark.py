"""neardup on a Spark cluster: `pairs`, `clusters` and `dedup` of a DataFrame's texts,
with the same settings, defaults and results as the `neardup` command on one machine
(its run without the checks beyond the buckets, ``neighbours=False``).

>>> from neardup import spark as nds                                  # doctest: +SKIP
>>> df = spark.read.json("listings.jsonl")                            # doctest: +SKIP
>>> nds.clusters(df, text_col="text", id_col="id").show()             # doctest: +SKIP

How a run goes, stage by stage (every stage that touches texts runs in Rust, a whole
partition at a time, through Arrow; none runs a Python loop over rows):

1. each document gets its position in input order (`monotonically_increasing_id`), and
   each partition is shingled and sketched: per destination partition, a block of band
   rows (band key, position) and one of set fingerprints; a copy of a document seen
   earlier in the same partition sends no band rows;
2. Spark's shuffle brings equal keys together; each partition's buckets are walked in
   Rust: a link from every member to the bucket's first (clusters), or every pair
   (pairs), and the groups of identical documents from the fingerprints;
3. candidates between first copies, deduplicated across bands, are verified in Rust
   against both texts (brought together by two joins);
4. pairs: the verified pairs expanded to the groups of copies. Clusters: connected
   components of the verified links and the groups (large-star / small-star, Kiveris et
   al. 2014, in DataFrame operations), then each component clustered in Rust exactly as
   on one machine: groups of copies, keep order, star cover, each removed document
   verified against the one it is reported a duplicate of. Dedup: the rows of `df` that
   are neither removed nor without shingles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]

from . import _neardup
from ._config import Config
from ._neardup import (
    DEFAULT_MAX_SHINGLES,
    DEFAULT_NUM_PERM,
    DEFAULT_SEED,
    DEFAULT_SHINGLE,
    DEFAULT_THRESHOLD,
    NeardupError,
)

if TYPE_CHECKING:  # pyspark is needed only where Spark runs
    from pyspark.sql import DataFrame  # type: ignore[import-not-found, unused-ignore]

__all__ = ["pairs", "clusters", "dedup", "annotate"]

_POS = "_neardup_pos"
# Documents' positions start here when a reference comes first (see `_Run`).
_REFERENCE_BELOW = 1 << 62
_BANDS, _COPIES, _SKIPPED = 0, 1, 2

# Set by a benchmark (bench/spark): called as each stage's result is materialized, to
# time the stages one by one. None in normal runs, where Spark runs the whole plan lazily.
_observer: Optional[Callable[[str, DataFrame], None]] = None


def _step(name: str, df: DataFrame) -> DataFrame:
    """`df`, materialized and reported to the observer if there is one."""
    if _observer is None:
        return df
    df = df.persist()
    _observer(name, df)
    return df


def _config(arguments: Mapping[str, Any]) -> Config:
    """The `Config` of a run's arguments (its ``locals()``), Spark's refusals first; Spark
    runs never look beyond the buckets."""
    measure = str(arguments.get("measure", "jaccard")).strip()
    if measure in _neardup._MEASURES_BY_SIZE:
        raise NeardupError(
            f"measure='{measure}': Spark runs group documents by one band plan for every "
            f"size, and {measure} plans its rows per size partition; find contained "
            f"documents on one machine with neardup.pairs(texts, measure='{measure}') or "
            f"`neardup pairs --measure {measure}`"
        )
    if arguments.get("sketch") == "simhash":
        raise NeardupError(
            "sketch='simhash': Spark runs group documents by their MinHash bands; "
            "SimHash runs on one machine (neardup.pairs, neardup.clusters)"
        )
    return Config._of(arguments, neighbours=False)


# Sessions whose executors were found to import this package (`_check_executors`).
_checked: set[str] = set()


def _check_executors(spark: Any) -> None:
    """A tiny job before the first heavy stage: the executors' Python must import neardup
    at the driver's version, else one error says what to set instead of a worker's
    traceback deep in a stage. Once per application, one task per core (executors added
    later are not probed)."""
    from . import __version__

    app = spark.conf.get("spark.app.id", None) or str(id(spark))
    if app in _checked:
        return

    def probe(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        # Defined here, so Spark ships it by value: a module-level function would be
        # shipped as a reference to neardup.spark, which is what may be missing.
        import sys

        for _ in batches:
            try:
                import neardup as shipped

                found, error = shipped.__version__, ""
            except Exception as e:  # any failure to import is the answer
                found, error = "", f"{type(e).__name__}: {e}"
            yield pa.RecordBatch.from_pylist(
                [{"python": sys.executable, "version": found, "error": error}],
                schema=pa.schema([("python", pa.string()), ("version", pa.string()), ("error", pa.string())]),
            )

    try:
        # A row per core the application has, so that every executor is likely to run one.
        cores = max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:  # no SparkContext on Spark Connect
        cores = 1
    try:
        rows = (
            spark.range(0, cores, numPartitions=cores)
            .mapInArrow(probe, "python string, version string, error string")
            .collect()
        )
    except Exception as e:  # the worker did not start or could not run the probe
        lines = [l for l in str(e).splitlines() if "Error" in l or "error" in l]
        raise NeardupError(_executors_advice(spark, f"their Python failed: {(lines or [str(e)])[-1].strip()}")) from None
    problems = {(r["python"], r["version"], r["error"]) for r in rows if r["version"] != __version__}
    if problems:
        python, version, error = sorted(problems)[0]
        what = (
            f"their Python ({python}) cannot import neardup ({error})"
            if not version
            else f"their Python ({python}) imports neardup {version}, the driver runs {__version__}"
        )
        raise NeardupError(_executors_advice(spark, what))
    _checked.add(app)


def _executors_advice(spark: Any, what: str) -> str:
    """The error for executors without this package: what was found, then what to set,
    the local session's case first."""
    import sys

    master = str(spark.conf.get("spark.master", ""))
    local = (
        f"for a local session ({master or 'local'}), set PYSPARK_PYTHON={sys.executable} (the "
        "driver's Python) before the session starts: Spark starts its Python workers with "
        "PYSPARK_PYTHON, else with python3 from the PATH"
    )
    cluster = (
        "for a cluster, ship an environment that has the package: spark.archives="
        "env.tar.gz#environment and PYSPARK_PYTHON=./environment/bin/python (the README's "
        "section 'On a cluster')"
    )
    first, second = (local, cluster) if master.startswith("local") else (cluster, local)
    return f"neardup.spark: the executors cannot run neardup: {what}. {first[0].upper()}{first[1:]}; {second}"


def _column(batches: list[pa.RecordBatch], name: str) -> pa.ChunkedArray:
    return pa.chunked_array([b.column(name) for b in batches], type=batches[0].schema.field(name).type)


def _positions(batches: list[pa.RecordBatch], name: str) -> np.ndarray:
    return np.ascontiguousarray(_column(batches, name).to_numpy(), dtype=np.int64)


def _verify_batch(config: Config, batch: pa.RecordBatch) -> tuple[np.ndarray, Mapping[str, Any]]:
    """The rows of a batch of candidates (a, b, ta, tb) that pass verification, and their
    columns from the package's `verify`."""
    m = batch.num_rows
    texts = pa.chunked_array([batch.column("ta"), batch.column("tb")], type=pa.string())
    index = np.arange(m, dtype=np.int64)
    cols = dict(
        _neardup.verify(config._native, texts, np.ascontiguousarray(np.stack([index, index + m], 1)), None, 1, "columns")
    )
    return np.asarray(cols["a"]).astype(np.int64), cols


class _Run:
    """One run: the settings, the documents with their positions, and the stages."""

    def __init__(
        self,
        df: DataFrame,
        text_col: str,
        id_col: Optional[str],
        config: Config,
        partitions: Optional[int],
        reference: Optional[DataFrame] = None,
    ) -> None:
        from pyspark.sql import functions as F  # type: ignore[import-not-found, unused-ignore]

        for frame, what in [(df, "DataFrame"), (reference, "reference DataFrame")]:
            if frame is None:
                continue
            for col in [text_col] + ([id_col] if id_col else []):
                if col not in frame.columns:
                    raise NeardupError(f"the {what} has no column {col!r} (it has {frame.columns})")
            if _POS in frame.columns:
                raise NeardupError(f"the {what} already has a column {_POS!r}")
        self.spark = df.sparkSession
        _check_executors(self.spark)
        self.config = config
        self.id_col = id_col
        self.parts = (
            partitions if partitions is not None else int(self.spark.conf.get("spark.sql.shuffle.partitions"))
        )
        if self.parts < 1:
            raise NeardupError(f"partitions must be at least 1, got {self.parts}")
        # Positions follow the input order (partition, then row): "first" means what it
        # means on one machine. Kept, so every stage sees the same positions. A reference
        # comes first: its positions are below every document's (Spark's ids stay below
        # 2^61, and a position takes 63 bits in the shuffle blocks).
        offset = F.lit(0 if reference is None else _REFERENCE_BELOW)
        self.docs = _step("read", df.withColumn(_POS, F.monotonically_increasing_id() + offset).persist())
        self.texts = self.docs.select(
            F.col(_POS).alias("pos"), F.col(text_col).cast("string").alias("text")
        )
        self.reference_below: Optional[int] = None
        self.reference: Optional[DataFrame] = None
        # How many documents are in the components, when the driver found them.
        self.driver_nodes: Optional[int] = None
        if reference is not None:
            self.reference_below = _REFERENCE_BELOW
            self.reference = _step(
                "read the reference", reference.withColumn(_POS, F.monotonically_increasing_id()).persist()
            )
            texts = self.reference.select(F.col(_POS).alias("pos"), F.col(text_col).cast("string").alias("text"))
            self.texts = texts.unionByName(self.texts)

    def named(self, pos: str, name: str) -> DataFrame:
        """Every document's position and id (the reference's too), as columns `pos`, `name`."""
        from pyspark.sql import functions as F  # type: ignore[import-not-found, unused-ignore]

        ids = self.docs.select(F.col(_POS).alias(pos), self.id_of(name))
        if self.reference is not None:
            ids = self.reference.select(F.col(_POS).alias(pos), self.id_of(name)).unionByName(ids)
        return ids

    def id_of(self, name: str) -> Any:
        """The id column of the documents, as `name` (the position when there is none)."""
        from pyspark.sql import functions as F  # type: ignore[import-not-found, unused-ignore]

        return F.col(self.id_col if self.id_col else _POS).alias(name)

    def walk(self, mode: str) -> DataFrame:
        """Stages 1 and 2: rows (a, b, kind) of candidates, copies and skipped documents."""
        config, parts = self.config, self.parts

        def sketch(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            held = [b for b in batches if b.num_rows]
            if not held:
                return
            kinds, dests, ends, data = (
                np.asarray(c)
                for c in _neardup.spark_sketch(config._native, _positions(held, "pos"), _column(held, "text"), parts, 1)
            )
            # A row per block over Rust's buffer (no copy; a block is far below 2 GiB).
            start = 0
            for i, end in enumerate(ends.tolist()):
                block = pa.Array.from_buffers(
                    pa.binary(), 1, [None, pa.py_buffer(np.array([0, end - start], np.int32)), pa.py_buffer(data[start:end])]
                )
                start = end
                yield pa.RecordBatch.from_arrays(
                    [pa.array(kinds[i : i + 1], pa.int32()), pa.array(dests[i : i + 1], pa.int32()), block],
                    names=["kind", "part", "block"],
                )

        def buckets(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            held = [b for b in batches if b.num_rows]
            if not held:
                return
            # Rust reads the blocks where Arrow holds them.
            for a, b, kind in _neardup._BucketWalk(pa.Table.from_batches(held), mode):
                yield pa.RecordBatch.from_arrays(
                    [pa.array(np.asarray(a)), pa.array(np.asarray(b)), pa.array(np.asarray(kind).astype(np.int8))],
                    names=["a", "b", "kind"],
                )

        shuffled = self.texts.mapInArrow(sketch, "kind int, part int, block binary")
        return shuffled.repartition(parts, "part").mapInArrow(buckets, "a long, b long, kind byte")

    def candidates(self, walked: DataFrame) -> DataFrame:
        """Stage 3's input: the candidates between first copies, once each, with both
        texts: (a, b, ta, tb)."""
        from pyspark.sql import functions as F  # type: ignore[import-not-found, unused-ignore]

        # The texts of first copies: a candidate that names a later copy finds no text and
        # drops out of the joins (its first copy has the same candidates). One shuffle of
        # the texts, which both joins read (Spark reuses the exchange), where anti-joins
        # of the candidates with the copies took two more shuffles of the candidates.
        copies = walked.filter(F.col("kind") == _COPIES).select(F.col("b").alias("pos"))
        firsts = self.texts.join(copies, "pos", "left_anti")
        candidates = walked.filter(F.col("kind") == _BANDS).select("a", "b").distinct()
        ta = firsts.select(F.col("pos").alias("a"), F.col("text").alias("ta"))
        tb = firsts.select(F.col("pos").alias("b"), F.col("text").alias("tb"))
        return candidates.join(ta, "a").join(tb, "b").select("a", "b", "ta", "tb")

    def verified(self, walked: DataFrame) -> DataFrame:
        """Stage 3: the candidates between first copies, once each, that pass
        verification: (a, b, jaccard, estimate, truncated)."""
        config = self.config

        def verify(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in batches:
                if not batch.num_rows:
                    continue
                rows, cols = _verify_batch(config, batch)
                yield pa.RecordBatch.from_arrays(
                    [
                        pa.array(batch.column("a").to_numpy()[rows]),
                        pa.array(batch.column("b").to_numpy()[rows]),
                        pa.array(np.asarray(cols["jaccard"]), from_pandas=True),
                        pa.array(np.asarray(cols["estimate"]), from_pandas=True),
                        pa.array(np.asarray(cols["truncated"])),
                    ],
                    names=["a", "b", "jaccard", "estimate", "truncated"],
                )

        return self.candidates(walked).mapInArrow(
            verify, "a long, b long, jaccard double, estimate double, truncated boolean"
        )

    def linked(self, walked: DataFrame) -> DataFrame:
        """Stage 3 for clusters: the candidates verified, then, in the same pass, the
        partition's verified edges joined by union-find (Rust) into a forest: (u, v) edges
        from each document to the smallest position of its tree. Far fewer rows than
        edges where documents have many near-duplicates, and the same components."""
        config = self.config

        def link(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            us, vs = [], []
            for batch in batches:
                if not batch.num_rows:
                    continue
                rows, _ = _verify_batch(config, batch)
                us.append(batch.column("a").to_numpy()[rows])
                vs.append(batch.column("b").to_numpy()[rows])
            if not us:
                return
            node, label = (np.asarray(c) for c in _neardup.spark_components(
                np.ascontiguousarray(np.concatenate(us), dtype=np.int64),
                np.ascontiguousarray(np.concatenate(vs), dtype=np.int64),
            ))
            tree = node != label
            yield pa.RecordBatch.from_arrays([pa.array(node[tree]), pa.array(label[tree])], names=["u", "v"])

        return self.candidates(walked).mapInArrow(link, "u long, v long")

    def identical(self) -> tuple[Optional[float], Optional[float]]:
        """(jaccard, estimate) that identical documents are reported with, as on one machine."""
        exact = self.config.verify == "exact"
        return (1.0 if exact else None, None if exact else 1.0)


# What the driver may take in to find the components itself (`components_budget`): the
# reduced edges at 16 bytes each (two longs), 4 Mi edges by default.
_COMPONENTS_BUDGET = 64 << 20
_EDGE_BYTES = 16


def _connected(spark: Any, edges: DataFrame, budget: int) -> tuple[DataFrame, Optional[int]]:
    """Connected components of `edges` (u, v) as rows (node, label), and how many nodes
    they have if they were found on the driver: when the edges fit `budget` bytes, they
    are collected and joined by union-find in Rust (one job); else (None) Spark runs the
    rounds of `_components`."""
    edges = edges.persist()
    if budget == 0 or edges.count() * _EDGE_BYTES > budget:
        return _components(edges), None
    table = edges.toArrow()
    ends = [np.ascontiguousarray(table.column(c).to_numpy(), dtype=np.int64) for c in ("u", "v")]
    node, label = (np.asarray(c) for c in _neardup.spark_components(*ends))
    edges.unpersist()
    found = pa.table({"node": pa.array(node, pa.int64()), "label": pa.array(label, pa.int64())})
    return spark.createDataFrame(found), len(node)


def _components(edges: DataFrame) -> DataFrame:
    """Connected components of an undirected graph given as edges (u, v): rows (node,
    label), the label being the component's smallest node. Large-star and small-star
    alternate until a round changes nothing (Kiveris et al., "Connected Components in
    MapReduce and Beyond", 2014)."""
    from pyspark.sql import functions as F  # type: ignore[import-not-found, unused-ignore]

    def clean(e: DataFrame) -> DataFrame:
        return e.filter(F.col("u") != F.col("v")).distinct()

    def large_star(e: DataFrame) -> DataFrame:
        both = e.union(e.select(F.col("v").alias("u"), F.col("u").alias("v")))
        low = both.groupBy("u").agg(F.min("v").alias("m"))
        return clean(
            both.join(low, "u")
            .filter(F.col("v") > F.col("u"))
            .select(F.col("v").alias("u"), F.least("m", "u").alias("v"))
        )

    def small_star(e: DataFrame) -> DataFrame:
        down = e.select(F.greatest("u", "v").alias("u"), F.least("u", "v").alias("v"))
        low = down.groupBy("u").agg(F.min("v").alias("m"))
        moved = down.join(low, "u").select(F.col("v").alias("u"), F.col("m").alias("v"))
        return clean(moved.union(low.select("u", F.col("m").alias("v"))))

    def fingerprint(e: DataFrame) -> tuple[int, int]:
        row = e.agg(F.count("*"), F.bit_xor(F.xxhash64("u", "v"))).first()
        return (row[0], row[1] or 0)

    current = clean(edges.select(F.greatest("u", "v").alias("u"), F.least("u", "v").alias("v")))
    current = current.localCheckpoint()
    before = fingerprint(current)
    while True:
        current = small_star(large_star(current)).localCheckpoint()
        after = fingerprint(current)
        if after == before:
            break
        before = after
    # Every edge now joins a node to its component's smallest node.
    down = current.select(F.greatest("u", "v").alias("node"), F.least("u", "v").alias("label"))
    roots = down.select(F.col("label").alias("node"), "label").distinct()
    return down.union(roots).distinct()


_SETTINGS_DOC = """
    Args:
        df: the documents, one per row.
        text_col: the column of texts (cast to string; a null is a missing text, which
            like an empty one takes part in nothing).
        id_col: the column naming documents in the results (default: the document's
            position in input order, a long).
        threshold, shingle, normalize, num_perm, seed, sketch, bands, rows, verify, keep,
            max_shingles, allow_truncated: as for `neardup.Config` and the command.
        measure: ``"jaccard"`` only: ``"containment"`` is refused (`NeardupError`), as
            Spark groups by one band plan for every size; `neardup.pairs` with
            ``measure="containment"`` finds contained documents on one machine.
        partitions: shuffle partitions of the band rows (default:
            ``spark.sql.shuffle.partitions``). Results do not depend on it.
        components_budget: (clusters, dedup, annotate) bytes of edges, 16 each, that the
            driver may collect to find the connected components itself, after each task
            has reduced its verified edges to a forest (default 64 MiB); beyond it, or
            with 0, Spark finds them in rounds. Results do not depend on it.
"""


def _settings_doc(f: Callable[..., Any]) -> Callable[..., Any]:
    f.__doc__ = (f.__doc__ or "") + _SETTINGS_DOC
    return f


@_settings_doc
def pairs(
    df: DataFrame,
    text_col: str = "text",
    id_col: Optional[str] = "id",
    *,
    threshold: float = DEFAULT_THRESHOLD,
    shingle: str = DEFAULT_SHINGLE,
    normalize: str = "nfkc",
    num_perm: int = DEFAULT_NUM_PERM,
    seed: int = DEFAULT_SEED,
    sketch: str = "oph",
    bands: Optional[int] = None,
    rows: Optional[int] = None,
    verify: str = "exact",
    max_shingles: int = DEFAULT_MAX_SHINGLES,
    multiset: bool = False,
    measure: str = "jaccard",
    partitions: Optional[int] = None,
    reference: Optional[DataFrame] = None,
) -> DataFrame:
    """Every pair of near-duplicate documents: a DataFrame of ``a``, ``b`` (ids, ``a``
    before ``b`` in input order), ``jaccard``, ``estimate`` (null where not computed) and
    ``truncated``: the pairs `neardup pairs --no-neighbours` gives on one machine.
    Identical documents pair with Jaccard 1. With `reference` (see `dedup`), pairs of
    two reference rows are left out.
    """
    # Settings are refused before pyspark is needed.
    config = _config(locals())
    from pyspark.sql import functions as F  # type: ignore[import-not-found, unused-ignore]

    run = _Run(df, text_col, id_col, config, partitions, reference)
    walked = _step("sketch, shuffle, bucket walk", run.walk("pairs").persist())
    verified = _step("verify", run.verified(walked))
    # Groups of copies: each member with its group's first document, the first included.
    copies = walked.filter(F.col("kind") == _COPIES).select(F.col("a").alias("rep"), F.col("b").alias("member"))
    groups = copies.union(copies.select("rep", F.col("rep").alias("member")).distinct())
    ids = run.named("member", "mid")
    members = groups.join(ids, "member")
    ga = members.select(F.col("rep").alias("a"), F.col("member").alias("pa"), F.col("mid").alias("ida"))
    gb = members.select(F.col("rep").alias("b"), F.col("member").alias("pb"), F.col("mid").alias("idb"))
    ia = run.named("a", "ia")
    ib = run.named("b", "ib")
    expanded = (
        verified.join(ia, "a")
        .join(ib, "b")
        .join(ga, "a", "left")
        .join(gb, "b", "left")
        .select(
            F.coalesce("pa", "a").alias("pa"),
            F.coalesce("pb", "b").alias("pb"),
            F.coalesce("ida", "ia").alias("ida"),
            F.coalesce("idb", "ib").alias("idb"),
            "jaccard",
            "estimate",
            "truncated",
        )
    )
    jaccard, estimate = run.identical()
    m1 = members.select(F.col("rep"), F.col("member").alias("pa"), F.col("mid").alias("ida"))
    m2 = members.select(F.col("rep"), F.col("member").alias("pb"), F.col("mid").alias("idb"))
    within = (
        m1.join(m2, "rep")
        .filter(F.col("pa") < F.col("pb"))
        .select(
            "pa", "pb", "ida", "idb",
            F.lit(jaccard).cast("double").alias("jaccard"),
            F.lit(estimate).cast("double").alias("estimate"),
            F.lit(False).alias("truncated"),
        )
    )
    first = F.col("pa") < F.col("pb")
    found = within.union(expanded)
    if run.reference_below is not None:
        # Pairs of two reference documents are not reported.
        found = found.filter((F.col("pa") >= run.reference_below) | (F.col("pb") >= run.reference_below))
    return found.select(
        F.when(first, F.col("ida")).otherwise(F.col("idb")).alias("a"),
        F.when(first, F.col("idb")).otherwise(F.col("ida")).alias("b"),
        "jaccard",
        "estimate",
        "truncated",
    )


def _cluster_rows(run: _Run, budget: int) -> tuple[DataFrame, DataFrame]:
    """One row per document in a cluster: position, the kept document's position, kept?,
    and the similarity to the kept document; and the walk's rows (for the skipped).
    `budget`: bytes of reduced edges the driver may collect (see `_connected`)."""
    from pyspark.sql import functions as F  # type: ignore[import-not-found, unused-ignore]

    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise NeardupError(f"components_budget must be a whole number of bytes, 0 or more, got {budget!r}")
    walked = _step("sketch, shuffle, bucket walk", run.walk("links").persist())
    links = _step("verify", run.linked(walked))
    copies = walked.filter(F.col("kind") == _COPIES).select(F.col("a").alias("u"), F.col("b").alias("v"))
    components, run.driver_nodes = _connected(run.spark, links.union(copies), budget)
    on_driver = run.driver_nodes is not None
    components = _step(f"connected components {'on the driver' if on_driver else 'in rounds'}", components)
    # Components the driver found are small (they fit its budget): sent to every task,
    # they pick their members' texts where the texts are, and only those are shuffled.
    nodes = F.broadcast(components) if on_driver else components
    members = nodes.join(
        run.texts.select(F.col("pos").alias("node"), "text"), "node"
    ).repartition(run.parts, "label")
    config = run.config
    below = run.reference_below if run.reference_below is not None else -(2**63)

    def cluster(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        held = [b for b in batches if b.num_rows]
        if not held:
            return
        cols = dict(
            _neardup.spark_clusters(
                config._native,
                _positions(held, "label"),
                _positions(held, "node"),
                _column(held, "text"),
                1,
                below,
            )
        )
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(np.asarray(cols["doc"])),
                pa.array(np.asarray(cols["duplicate_of"])),
                pa.array(np.asarray(cols["kept"])),
                pa.array(np.asarray(cols["jaccard"]), from_pandas=True),
                pa.array(np.asarray(cols["estimate"]), from_pandas=True),
                pa.array(np.asarray(cols["truncated"])),
            ],
            names=["doc", "duplicate_of", "kept", "jaccard", "estimate", "truncated"],
        )

    rows = members.mapInArrow(
        cluster,
        "doc long, duplicate_of long, kept boolean, jaccard double, estimate double, truncated boolean",
    )
    return _step("cluster components", rows), walked


@_settings_doc
def clusters(
    df: DataFrame,
    text_col: str = "text",
    id_col: Optional[str] = "id",
    *,
    threshold: float = DEFAULT_THRESHOLD,
    shingle: str = DEFAULT_SHINGLE,
    normalize: str = "nfkc",
    num_perm: int = DEFAULT_NUM_PERM,
    seed: int = DEFAULT_SEED,
    sketch: str = "oph",
    bands: Optional[int] = None,
    rows: Optional[int] = None,
    verify: str = "exact",
    keep: str = "first",
    max_shingles: int = DEFAULT_MAX_SHINGLES,
    multiset: bool = False,
    allow_truncated: bool = False,
    measure: str = "jaccard",
    partitions: Optional[int] = None,
    reference: Optional[DataFrame] = None,
    components_budget: int = _COMPONENTS_BUDGET,
) -> DataFrame:
    """Clusters of near-duplicate documents: a DataFrame with one row per document in a
    cluster, ``id``, ``duplicate_of`` (the id of the cluster's kept document; its own for
    the kept one), ``kept``, and the similarity to the kept document ``jaccard``,
    ``estimate``, ``truncated`` (null for the kept one): the clusters of
    `neardup clusters --no-neighbours` on one machine. Every removed document was
    verified against the document it is reported a duplicate of. With `reference` (see
    `dedup`), only clusters holding a row of `df` are given, a reference row heading its
    own.
    """
    # Settings are refused before pyspark is needed.
    config = _config(locals())
    from pyspark.sql import functions as F  # type: ignore[import-not-found, unused-ignore]

    run = _Run(df, text_col, id_col, config, partitions, reference)
    found, _ = _cluster_rows(run, components_budget)
    ids = run.named("doc", "id")
    kept_ids = run.named("duplicate_of", "kept_id")
    return found.join(ids, "doc").join(kept_ids, "duplicate_of").select(
        "id",
        F.col("kept_id").alias("duplicate_of"),
        "kept",
        F.when(F.isnan("jaccard"), None).otherwise(F.col("jaccard")).alias("jaccard"),
        F.when(F.isnan("estimate"), None).otherwise(F.col("estimate")).alias("estimate"),
        F.when(F.col("kept"), None).otherwise(F.col("truncated")).alias("truncated"),
    )


@_settings_doc
def dedup(
    df: DataFrame,
    text_col: str = "text",
    id_col: Optional[str] = "id",
    *,
    threshold: float = DEFAULT_THRESHOLD,
    shingle: str = DEFAULT_SHINGLE,
    normalize: str = "nfkc",
    num_perm: int = DEFAULT_NUM_PERM,
    seed: int = DEFAULT_SEED,
    sketch: str = "oph",
    bands: Optional[int] = None,
    rows: Optional[int] = None,
    verify: str = "exact",
    keep: str = "first",
    max_shingles: int = DEFAULT_MAX_SHINGLES,
    multiset: bool = False,
    allow_truncated: bool = False,
    measure: str = "jaccard",
    partitions: Optional[int] = None,
    reference: Optional[DataFrame] = None,
    components_budget: int = _COMPONENTS_BUDGET,
) -> DataFrame:
    """The rows of `df` that survive: neither removed as a near-duplicate of a kept row
    nor without shingles (an empty or missing text), with `df`'s columns: the records
    `neardup dedup --no-neighbours` writes on one machine. `clusters` says which row each
    removed one duplicates.

    `reference`: rows already kept (with `text_col`, and `id_col` if given): never removed nor
    returned, they come first in keep order and always keep their clusters, so a row of
    `df` is removed when it duplicates one of them or an earlier kept row of `df`: the
    records `neardup dedup --reference` writes. `annotate` names the reference row.
    """
    # Settings are refused before pyspark is needed.
    config = _config(locals())
    from pyspark.sql import functions as F  # type: ignore[import-not-found, unused-ignore]

    run = _Run(df, text_col, id_col, config, partitions, reference)
    found, walked = _cluster_rows(run, components_budget)
    removed = found.filter(~F.col("kept")).select(F.col("doc").alias(_POS))
    skipped = walked.filter(F.col("kind") == _SKIPPED).select(F.col("a").alias(_POS))
    gone = removed.union(skipped)
    # Positions to drop that fit the budget (8 bytes each; the removed are among the
    # components' nodes) go to every task, so the documents are not shuffled to meet them.
    if run.driver_nodes is not None and (run.driver_nodes + skipped.count()) * 8 <= components_budget:
        gone = F.broadcast(gone)
    return run.docs.join(gone, _POS, "left_anti").drop(_POS)



@_settings_doc
def annotate(
    df: DataFrame,
    text_col: str = "text",
    id_col: Optional[str] = "id",
    *,
    threshold: float = DEFAULT_THRESHOLD,
    shingle: str = DEFAULT_SHINGLE,
    normalize: str = "nfkc",
    num_perm: int = DEFAULT_NUM_PERM,
    seed: int = DEFAULT_SEED,
    sketch: str = "oph",
    bands: Optional[int] = None,
    rows: Optional[int] = None,
    verify: str = "exact",
    keep: str = "first",
    max_shingles: int = DEFAULT_MAX_SHINGLES,
    multiset: bool = False,
    allow_truncated: bool = False,
    measure: str = "jaccard",
    partitions: Optional[int] = None,
    prefix: str = "",
    reference: Optional[DataFrame] = None,
    components_budget: int = _COMPONENTS_BUDGET,
) -> DataFrame:
    """Every row of `df` marked instead of removed: `df`'s columns and, each named with
    `prefix`, ``cluster`` (the id of its cluster's kept row; its own in none),
    ``cluster_size`` (1 in none), ``kept`` (what `dedup` keeps: false for a duplicate and
    for an empty or missing text), ``duplicate_of`` (the kept row's id, null if it
    duplicates none) and ``jaccard`` (the similarity to it, the estimate where no exact
    one was computed; null if none): the annotations of `neardup annotate
    --no-neighbours` on one machine, where ``cluster`` is a document number. A column of
    `df` with one of those names is refused; `prefix` avoids it. With `reference` (as for
    `dedup`; with `id_col` too), only `df`'s rows are marked, and a row that duplicates a
    reference row names it in ``cluster`` and ``duplicate_of``.
    """
    # Settings are refused before pyspark is needed.
    config = _config(locals())
    from pyspark.sql import functions as F  # type: ignore[import-not-found, unused-ignore]

    names = [prefix + n for n in ("cluster", "cluster_size", "kept", "duplicate_of", "jaccard")]
    clash = [n for n in names if n in df.columns]
    if clash:
        raise NeardupError(
            f"the DataFrame already has the column(s) {clash}: choose a prefix= for the annotations"
        )
    run = _Run(df, text_col, id_col, config, partitions, reference)
    found, walked = _cluster_rows(run, components_budget)
    sizes = found.groupBy("duplicate_of").agg(F.count("*").cast("long").alias("_size"))
    similarity = F.coalesce(
        F.when(F.isnan("jaccard"), None).otherwise(F.col("jaccard")),
        F.when(F.isnan("estimate"), None).otherwise(F.col("estimate")),
    )
    marks = found.join(sizes, "duplicate_of").select(
        F.col("doc").alias(_POS),
        F.col("duplicate_of").alias("_head"),
        F.col("kept").alias("_kept"),
        "_size",
        F.when(F.col("kept"), None).otherwise(similarity).alias("_similarity"),
    )
    skipped = walked.filter(F.col("kind") == _SKIPPED).select(F.col("a").alias(_POS), F.lit(True).alias("_skipped"))
    heads = run.named("_head", "_head_id")
    own = F.col(id_col if id_col else _POS)
    cluster, size, kept, of, jaccard = names
    return (
        run.docs.join(marks, _POS, "left")
        .join(skipped, _POS, "left")
        .join(heads, "_head", "left")
        .select(
            *[F.col(c) for c in df.columns],
            F.coalesce(F.col("_head_id"), own).alias(cluster),
            F.coalesce(F.col("_size"), F.lit(1).cast("long")).alias(size),
            F.coalesce(F.col("_kept"), F.col("_skipped").isNull()).alias(kept),
            F.when(~F.col("_kept"), F.col("_head_id")).alias(of),
            F.col("_similarity").cast("double").alias(jaccard),
        )
    )
