"""The documentation's examples run and say what they show: the package's doctests, and
the README's Python examples that need no files of their own."""

from __future__ import annotations

import doctest
import os
import re
from pathlib import Path

import pytest

import neardup
import neardup._config
import neardup._lsh
import neardup._runs
from conftest import ROOT


@pytest.mark.parametrize("module", [neardup, neardup._runs, neardup._config, neardup._lsh])
def test_doctests(module: object) -> None:
    result = doctest.testmod(module)
    assert result.failed == 0


def readme_blocks() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## From Python"):readme.index("## On a cluster")]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_readme_examples_run(tmp_path: Path) -> None:
    blocks = [b for b in readme_blocks() if "parquet" not in b and "df[" not in b]
    assert len(blocks) >= 2
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        scope: dict = {}
        for block in blocks:
            exec(compile(block, "README.md", "exec"), scope)
    finally:
        os.chdir(cwd)
    texts = scope["texts"]
    assert neardup.pairs(texts) == [(0, 1, neardup.jaccard(texts[0], texts[1]))]
    assert neardup.clusters(texts, ids=["b1", "b2", "s1", "x", "y"]) == [["b1", "b2"]]
    assert neardup.dedup(texts) == [texts[0], texts[2]]
    assert [k for k, _ in scope["index"].query(texts[1])] == ["bike-1"]
    page, brief = scope["page"], scope["brief"]
    assert scope["inside"] == [neardup.Contained(1, 0, 1.0, neardup.jaccard(brief, page))]


def test_the_readme_parquet_example(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    block = next(b for b in readme_blocks() if "parquet" in b)
    code = block.split("# Deduplicate a DataFrame")[0]
    texts = ["Vintage road bike, 56 cm steel frame, new tyres, collection only",
             "Vintage road bike, 56 cm steel frame, new tyres. Collection only!", "a sofa"]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        pq.write_table(pa.table({"id": ["a", "b", "c"], "text": texts}), "listings.parquet")
        exec(compile(code, "README.md", "exec"), {"neardup": neardup})
        written = pq.read_table("pairs.parquet").to_pylist()
    finally:
        os.chdir(cwd)
    assert [(r["a"], r["b"]) for r in written] == [("a", "b")]
