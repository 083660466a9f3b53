"""Writes the Parquet fixtures neardup-io's tests read: the same rows as rows.jsonl,
written by pyarrow, Polars and DuckDB, plus the column types and layouts the reader
must handle; and testdata/shards/reviews/, testdata/cli/reviews.jsonl cut into a folder
of shards (.jsonl.gz, .jsonl.zst of two frames, Parquet). The files are committed, so
the Rust tests need no Python; run this again (with pyarrow, polars and duckdb
installed, and the zstd command) only to change them:

    python testdata/parquet/make.py
"""

import gzip
import json
import pathlib
import subprocess

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

HERE = pathlib.Path(__file__).parent

# Short texts with near-duplicates among them (ids 1/2, 4/5/6, 9/10), a null text
# (id 7) and an empty one (id 8): what the reader skips and what it keeps.
BASE = [
    "the quick brown fox jumps over the lazy dog near the river bank today",
    "the quick brown fox jumps over the lazy dog near the river bank today!",
    "a completely different sentence about parquet files and their row groups",
    "neardup reads shards of jsonl and parquet written by many tools alike",
    "neardup reads shards of jsonl and parquet written by many tools alike.",
    "Neardup reads shards of jsonl and parquet written by many tools alike",
    None,
    "",
    "zstd frames follow each other in one file and are read as one stream",
    "zstd frames follow each other in one file and are read as one stream.",
    "the last row of the fixture stands alone with nothing like it at all",
    "one more unrelated line so that the row groups are not all the same size",
]
IDS = list(range(1, len(BASE) + 1))


def rows_table(text_type=pa.string()):
    return pa.table(
        {"id": pa.array(IDS, pa.int64()), "text": pa.array(BASE, text_type)}
    )


def main():
    with open(HERE / "rows.jsonl", "w", encoding="utf-8") as f:
        for i, text in zip(IDS, BASE):
            f.write(json.dumps({"id": i, "text": text}) + "\n")

    # pyarrow: plain strings in row groups of 5 rows (5 + 5 + 2).
    pq.write_table(rows_table(), HERE / "pyarrow.parquet", row_group_size=5)
    pq.write_table(rows_table(pa.large_string()), HERE / "large_string.parquet")
    pq.write_table(rows_table(pa.string_view()), HERE / "string_view.parquet")
    table = rows_table()
    table = table.set_column(1, "text", table.column("text").dictionary_encode())
    pq.write_table(table, HERE / "dictionary.parquet", row_group_size=4)

    # A struct column: the text is meta.body, the id meta.url.
    meta = pa.StructArray.from_arrays(
        [pa.array([f"https://example.org/{i}" for i in IDS]), pa.array(BASE)],
        names=["url", "body"],
    )
    pq.write_table(
        pa.table({"meta": meta, "lang": pa.array(["en"] * len(IDS))}),
        HERE / "struct.parquet",
    )

    # A text column that is not a string.
    pq.write_table(
        pa.table({"id": pa.array(IDS), "text": pa.array(IDS, pa.int64())}),
        HERE / "int_text.parquet",
    )

    # Polars and DuckDB, each with its own writer.
    pl.DataFrame({"id": IDS, "text": BASE}).write_parquet(
        HERE / "polars.parquet", row_group_size=5
    )
    con = duckdb.connect()
    con.register("rows", rows_table())
    con.execute(
        f"COPY (SELECT * FROM rows ORDER BY id) TO '{HERE / 'duckdb.parquet'}' "
        "(FORMAT parquet, ROW_GROUP_SIZE 4)"
    )


def shards():
    """testdata/cli/reviews.jsonl as three shards in a folder: lines 1-4, 5-7 (line 7
    is not JSON), 8-9 (as Parquet: line 8 has no body, a null there)."""
    lines = (HERE.parent / "cli" / "reviews.jsonl").read_bytes().splitlines(keepends=True)
    out = HERE.parent / "shards" / "reviews"
    (out / "b").mkdir(parents=True, exist_ok=True)
    # mtime 0: the same bytes every time.
    with gzip.GzipFile(out / "a.jsonl.gz", "wb", mtime=0) as f:
        f.writelines(lines[:4])
    frames = b"".join(
        subprocess.run(["zstd", "-q", "-c"], input=chunk, check=True, capture_output=True).stdout
        for chunk in (b"".join(lines[4:6]), lines[6])
    )
    (out / "b" / "c.jsonl.zst").write_bytes(frames)
    rows = [json.loads(line) for line in lines[7:]]
    schema = pa.schema(
        [("review_id", pa.int64()), ("body", pa.string()), ("stars", pa.int64())]
    )
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, out / "b" / "d.parquet")


if __name__ == "__main__":
    main()
    shards()
