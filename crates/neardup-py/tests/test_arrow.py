"""Texts from any Arrow producer through the Arrow PyCapsule interface (`__arrow_c_stream__`,
`__arrow_c_array__`): Polars Series and DataFrames, DuckDB relations, pyarrow Tables, record
batches and readers, Hugging Face datasets, with the real packages (pinned in
requirements-test.txt). Each gives the answers of the same texts as a list of str; nulls
are missing texts, as `None` is in a list. And `annotate`, which marks instead of removing."""

from __future__ import annotations

from typing import Any, Callable

import datasets
import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pytest

import neardup
from conftest import corpus

# Near-duplicates among non-ASCII texts, a null and an empty text among them.
TEXTS: list[Any] = [
    "Café au lait près de la gare, lumineux et calme",
    "Cafe\u0301 au lait pre\u0300s de la gare, lumineux et calme!",
    None,
    "東京の駅から徒歩五分の明るいアパート",
    "東京の駅から徒歩五分の明るいアパートです",
    "",
    "a room with a view 🌅 near the sea",
    "A room with a view 🌅 near the sea.",
] + corpus(300, seed=5)

SETTINGS = {"threshold": 0.6}


def table() -> pa.Table:
    n = len(TEXTS)
    return pa.table({"id": [f"r{i}" for i in range(n)], "text": TEXTS, "n": list(range(n))})


def producers() -> dict[str, Callable[[], Any]]:
    """Each producer of TEXTS, and the text_col it needs (None: found by itself)."""
    return {
        "polars-series": lambda: pl.Series("text", TEXTS),
        "polars-dataframe": lambda: pl.from_arrow(table()),
        "polars-categorical": lambda: pl.DataFrame({"text": TEXTS}, schema={"text": pl.Categorical}),
        "duckdb-relation": lambda: duckdb.from_arrow(table()).project("id, text, n"),
        "pyarrow-table": table,
        "pyarrow-table-string_view": lambda: table().cast(
            pa.schema([("id", pa.string()), ("text", pa.string_view()), ("n", pa.int64())])
        ),
        "pyarrow-table-dictionary": lambda: table().set_column(
            1, "text", table()["text"].dictionary_encode()
        ),
        "pyarrow-record-batch": lambda: table().to_batches()[0],
        "pyarrow-reader-of-small-batches": lambda: pa.RecordBatchReader.from_batches(
            table().schema, table().to_batches(max_chunksize=7)
        ),
        "hf-dataset": lambda: datasets.Dataset(table()),
        "hf-dataset-arrow-format": lambda: datasets.Dataset(table()).with_format("arrow")[:],
    }


@pytest.mark.parametrize("kind", list(producers()))
def test_every_producer_gives_the_answers_of_a_list(kind: str) -> None:
    make = producers()[kind]
    assert neardup.pairs(make(), **SETTINGS) == neardup.pairs(TEXTS, **SETTINGS)
    assert neardup.clusters(make(), **SETTINGS) == neardup.clusters(TEXTS, **SETTINGS)
    assert neardup.dedup(make(), **SETTINGS) == neardup.dedup(TEXTS, **SETTINGS)
    expected = neardup.annotate(TEXTS, **SETTINGS)
    assert neardup.annotate(make(), **SETTINGS).equals(expected)


def test_the_answers_are_not_empty() -> None:
    found = {(a, b) for a, b, _ in neardup.pairs(TEXTS, **SETTINGS)}
    assert {(0, 1), (3, 4), (6, 7)} <= found
    assert 2 not in neardup.dedup(TEXTS, output="numpy").nonzero()[0]


def test_a_polars_dataframe_names_its_text_column() -> None:
    df = pl.DataFrame({"body": TEXTS, "title": ["t"] * len(TEXTS)})
    assert neardup.pairs(df, text_col="body", **SETTINGS) == neardup.pairs(TEXTS, **SETTINGS)
    with pytest.raises(neardup.NeardupError, match=r'no text_col.*\["body", "title"\]'):
        neardup.pairs(df)
    with pytest.raises(neardup.NeardupError, match=r'no column "Body".*did you mean "body"'):
        neardup.pairs(df, text_col="Body")


def test_a_column_that_is_not_strings_is_refused_naming_its_type() -> None:
    with pytest.raises(TypeError, match=r'column "n" holds Int64, not strings'):
        neardup.pairs(table(), text_col="n")
    with pytest.raises(TypeError, match="holds Int64"):
        neardup.shingle_sets(pl.Series([1, 2, 3]))


def test_text_col_is_refused_for_texts_that_are_not_a_table() -> None:
    with pytest.raises(neardup.NeardupError, match="text_col"):
        neardup.pairs(TEXTS, text_col="text")


def test_dedup_of_a_stream_read_once_gives_the_surviving_texts() -> None:
    # A reader is read once: the survivors come back from the same pass.
    reader = pa.RecordBatchReader.from_batches(table().schema, table().to_batches(max_chunksize=5))
    assert neardup.dedup(reader, **SETTINGS) == neardup.dedup(TEXTS, **SETTINGS)
    reader = pa.RecordBatchReader.from_batches(table().schema, table().to_batches(max_chunksize=5))
    got = neardup.dedup(reader, output="arrow", **SETTINGS)
    want = neardup.dedup(pa.array(TEXTS), output="arrow", **SETTINGS)
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    assert got.column("text").to_pylist() == want.column("text").to_pylist()


def test_a_dedup_mask_filters_a_polars_dataframe() -> None:
    df = pl.from_arrow(table())
    kept = df.filter(neardup.dedup(df, output="numpy", **SETTINGS))
    assert kept["text"].to_list() == neardup.dedup(TEXTS, **SETTINGS)


def test_ids_name_documents_of_a_frame() -> None:
    df = pl.from_arrow(table())
    ids = df["id"].to_list()
    assert neardup.clusters(df, ids=df["id"], **SETTINGS) == neardup.clusters(TEXTS, ids=ids, **SETTINGS)


def test_the_building_blocks_take_arrow_producers() -> None:
    series = pl.Series(TEXTS)
    got, want = neardup.shingle_sets(series), neardup.shingle_sets(TEXTS)
    assert len(got) == len(want) and all(np.array_equal(a, b) for a, b in zip(got, want))
    assert np.array_equal(neardup.band_keys(series), neardup.band_keys(TEXTS))
    assert neardup.verify([(0, 1), (0, 3)], series) == neardup.verify([(0, 1), (0, 3)], TEXTS)


def test_invalid_utf8_from_a_producer_is_refused_naming_the_rows() -> None:
    bad = pa.Array.from_buffers(
        pa.string(), 2, [None, pa.py_buffer(np.array([0, 1, 3], dtype=np.int32).tobytes()), pa.py_buffer(b"a\xff\xfe")]
    )
    batch = pa.record_batch([bad], names=["text"])
    with pytest.raises(neardup.NeardupError, match="row 0.*(UTF|utf)"):
        neardup.pairs(pa.RecordBatchReader.from_batches(batch.schema, [batch]))


# annotate


def test_annotate_marks_every_document_as_clusters_and_dedup_find_them() -> None:
    ann = neardup.annotate(TEXTS, **SETTINGS).to_pylist()
    assert len(ann) == len(TEXTS)
    kept = neardup.dedup(TEXTS, output="numpy", **SETTINGS)
    assert [r["kept"] for r in ann] == kept.tolist()
    clusters = neardup.clusters(TEXTS, **SETTINGS)
    in_cluster = {}
    for members in clusters:
        for m in members:
            in_cluster[m] = (members[0], len(members))
    for doc, row in enumerate(ann):
        if doc in (2, 5):
            continue
        head, size = in_cluster.get(doc, (doc, 1))
        assert (row["cluster"], row["cluster_size"]) == (head, size)
        assert row["duplicate_of"] == (None if head == doc else head)
        if head == doc:
            assert row["jaccard"] is None
        else:
            assert row["jaccard"] == pytest.approx(neardup.jaccard(TEXTS[doc], TEXTS[head]))
    # The null and the empty text are skipped: not kept, the rest null (as the command).
    assert [ann[i] for i in (2, 5)] == [
        {"cluster": None, "cluster_size": None, "kept": False, "duplicate_of": None, "jaccard": None}
    ] * 2
    assert any(size > 1 for size in (r["cluster_size"] for r in ann))


def test_annotate_names_documents_by_ids_in_every_output() -> None:
    ids = [f"r{i}" for i in range(len(TEXTS))]
    arrow = neardup.annotate(TEXTS, ids=ids, **SETTINGS)
    assert arrow.column("duplicate_of")[1].as_py() == "r0"
    listed = neardup.annotate(TEXTS, ids=ids, output="list", **SETTINGS)
    assert listed[1] == neardup.Annotation(0, 2, False, "r0", arrow.column("jaccard")[1].as_py())
    assert listed[0] == neardup.Annotation(0, 2, True, None, None)
    cols = neardup.annotate(TEXTS, ids=ids, output="numpy", **SETTINGS)
    assert cols["duplicate_of"][1] == "r0" and cols["cluster"].dtype == np.uint32


def test_annotate_joins_a_polars_dataframe_row_for_row() -> None:
    df = pl.from_arrow(table())
    marked = pl.concat([df, pl.from_arrow(neardup.annotate(df, **SETTINGS))], how="horizontal")
    assert marked.columns == ["id", "text", "n", "cluster", "cluster_size", "kept", "duplicate_of", "jaccard"]
    assert marked.filter(pl.col("kept"))["text"].to_list() == neardup.dedup(TEXTS, **SETTINGS)


def test_annotate_refuses_containment() -> None:
    with pytest.raises(neardup.NeardupError, match="annotate with measure='containment'"):
        neardup.annotate(TEXTS, measure="containment")


def test_the_readme_examples_for_polars_duckdb_and_datasets() -> None:
    import re

    from conftest import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## From Python"):readme.index("## On a cluster")]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    ours = [next(b for b in blocks if f"import {m}" in b) for m in ("polars", "duckdb", "datasets")]
    scope: dict = {"neardup": neardup}
    for block in ours:
        exec(compile(block, "README.md", "exec"), scope)
    assert scope["unique"]["id"].to_list() == ["b1", "s1"]
    marked = scope["marked"]
    assert marked.columns == ["id", "text", "cluster", "cluster_size", "kept", "duplicate_of", "jaccard"]
    assert marked["kept"].to_list() == [True, False, True]
    assert marked["duplicate_of"].to_list() == [None, "b1", None]
    assert marked["cluster"].to_list() == [0, 0, 2] and marked["cluster_size"].to_list() == [2, 2, 1]
    assert round(marked["jaccard"][1], 2) == 0.83
    assert scope["survivors"] == [scope["listings"]["text"][0]]
    assert scope["kept"]["text"] == [scope["listings"]["text"][0], scope["listings"]["text"][2]]


def test_a_run_drops_each_batch_of_a_stream_before_it_reads_far_ahead() -> None:
    """Memory bounded by a batch: when the producer makes batch k, batch k - 2 has been
    released (its buffers' owner is gone), unless dedup keeps the batches to hand back the
    surviving texts."""
    import weakref

    def reader(alive_at_each: list[list[bool]]) -> pa.RecordBatchReader:
        owners: list[Any] = []

        def batches() -> Any:
            for k in range(0, len(TEXTS), 20):
                alive_at_each.append([ref() is not None for ref in owners])
                texts = [t or "" for t in TEXTS[k:k + 20]]
                data = np.frombuffer("".join(texts).encode(), dtype=np.uint8).copy()
                offsets = np.cumsum([0] + [len(t.encode()) for t in texts], dtype=np.int32)
                owners.append(weakref.ref(data))
                array = pa.Array.from_buffers(pa.string(), len(texts), [None, pa.py_buffer(offsets), pa.py_buffer(data)])
                yield pa.record_batch([array], names=["text"])

        schema = pa.schema([("text", pa.string())])
        return pa.RecordBatchReader.from_batches(schema, batches())

    seen: list[list[bool]] = []
    want = neardup.pairs([t or "" for t in TEXTS], **SETTINGS)
    assert neardup.pairs(reader(seen), **SETTINGS) == want
    assert len(seen) > 5
    assert all(not any(alive[:-2]) for alive in seen)
    kept: list[list[bool]] = []
    assert neardup.dedup(reader(kept), **SETTINGS) == neardup.dedup([t or "" for t in TEXTS], **SETTINGS)
    assert all(all(alive) for alive in kept)
