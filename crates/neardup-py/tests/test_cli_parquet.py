"""Files the `neardup` command writes, read back by pyarrow and DuckDB: dedup's Parquet
survivors keep the input's schema and rows, pairs and clusters as Parquet hold the JSON
lines' rows, and a .zst output is zstd that a reader of its own decompresses."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import ROOT, cli_path

PARQUET = ROOT / "testdata" / "parquet"


@pytest.fixture(scope="module")
def neardup() -> Path:
    path = cli_path()
    if path is None:
        pytest.skip("no neardup binary (cargo build -p neardup-cli)")
    return path


def run(neardup: Path, *args: str) -> str:
    done = subprocess.run([str(neardup), *args, "-q"], check=True, capture_output=True, text=True)
    return done.stdout


def test_dedup_of_a_pyarrow_file_reads_back_with_its_schema(neardup: Path, tmp_path: Path) -> None:
    # A table of the types pipelines carry: nested struct, list, timestamp, dictionary.
    texts = ["the quick brown fox jumps over the lazy dog " * 3, "something else entirely " * 4]
    texts = [texts[0], texts[0] + "!", texts[1], texts[0]]
    table = pa.table(
        {
            "text": texts,
            "meta": pa.array(
                [{"url": f"u{i}", "score": i / 2} for i in range(4)],
                pa.struct([("url", pa.string()), ("score", pa.float64())]),
            ),
            "tags": pa.array([["a"], [], ["b", "c"], None], pa.list_(pa.string())),
            "when": pa.array([1, 2, 3, 4], pa.timestamp("ms")),
            "lang": pa.array(["en", "en", "fr", "en"]).dictionary_encode(),
        }
    )
    source = tmp_path / "in.parquet"
    pq.write_table(table, source, compression="zstd")
    out = tmp_path / "kept.parquet"
    run(neardup, "dedup", str(source), "-o", str(out))
    back = pq.read_table(out)
    assert back.schema.equals(table.schema, check_metadata=False)
    # Rows 2 and 4 are near copies of row 1.
    assert back.to_pylist() == [table.slice(0, 1).to_pylist()[0], table.slice(2, 1).to_pylist()[0]]
    assert pq.ParquetFile(out).metadata.row_group(0).column(0).compression == "ZSTD"
    rows = duckdb.sql(f"select meta.url as url, tags from '{out}' order by url").fetchall()
    assert rows == [("u0", ["a"]), ("u2", ["b", "c"])]


def test_pairs_and_clusters_as_parquet_hold_the_json_lines(neardup: Path, tmp_path: Path) -> None:
    source = str(PARQUET / "rows.jsonl")
    for command in ("pairs", "clusters"):
        lines = [json.loads(line) for line in run(neardup, command, source).splitlines()]
        out = tmp_path / f"{command}.parquet"
        run(neardup, command, source, "--output-format", "parquet", "-o", str(out))
        rows = pq.read_table(out).to_pylist()
        assert len(rows) == len(lines) > 0
        for row, line in zip(rows, lines):
            for key, value in line.items():
                assert row[key] == (str(value) if key in ("a", "b", "id", "duplicate_of") else value)
        via_duckdb = duckdb.sql(f"select count(*) from '{out}'").fetchall()
        assert via_duckdb == [(len(lines),)]
    schema = pq.read_schema(tmp_path / "clusters.parquet")
    assert schema.field("cluster").type == pa.uint64()
    assert schema.field("kept").type == pa.bool_()
    assert schema.field("jaccard").type == pa.float64()


def test_a_folder_of_shards_comes_back_shard_by_shard(neardup: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(
        neardup,
        "dedup",
        str(ROOT / "testdata" / "shards" / "reviews"),
        "--text-field",
        "body",
        "--id-field",
        "review_id",
        "-o",
        str(out),
    )
    kept = pq.read_table(out / "b" / "d.parquet")
    assert kept.schema.equals(pq.read_schema(ROOT / "testdata" / "shards" / "reviews" / "b" / "d.parquet"))
    for shard in ("b/c.jsonl.zst", "a.jsonl.gz"):
        [(count,)] = duckdb.sql(f"select count(*) from read_json('{out / shard}')").fetchall()
        assert count >= 1, shard
