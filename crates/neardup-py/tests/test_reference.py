"""Deduplicating against a reference (``reference=``): texts already kept, read first, never
removed; the answers of the command's ``--reference`` and of an index built from the
reference taking the new texts with ``index add --dedup``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import neardup
from conftest import Cli, corpus

TEXTS = corpus(400, seed=11)
OLD, NEW = TEXTS[:150], TEXTS[150:]
OLD_IDS = [f"o{i}" for i in range(len(OLD))]
NEW_IDS = [f"n{i}" for i in range(len(NEW))]


def write(path: Path, ids: list[str], texts: list[str]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i, t in zip(ids, texts):
            f.write(json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n")
    return path


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("reference")
    return write(tmp / "old.jsonl", OLD_IDS, OLD), write(tmp / "new.jsonl", NEW_IDS, NEW)


def test_dedup_keeps_what_the_command_keeps(cli: Cli, files: tuple[Path, Path], tmp_path: Path) -> None:
    old, new = files
    out = tmp_path / "kept.jsonl"
    subprocess.run([str(cli.path), "dedup", str(new), "--reference", str(old), "-q", "-o", str(out)], check=True)
    expected = [o["id"] for o in lines(out)]
    assert neardup.dedup(NEW, ids=NEW_IDS, reference=OLD, reference_ids=OLD_IDS) == expected
    # Texts that only the reference makes duplicates are removed: fewer than without it.
    assert len(expected) < len(neardup.dedup(NEW))
    kept = set(neardup.dedup(NEW, reference=OLD))
    assert kept == {NEW[int(i[1:])] for i in expected}


def test_dedup_equals_an_index_of_the_reference_adding_with_dedup(
    cli: Cli, files: tuple[Path, Path], tmp_path: Path
) -> None:
    old, new = files
    index = tmp_path / "old.idx"
    subprocess.run([str(cli.path), "index", "build", str(index), str(old), "-q"], check=True)
    out = tmp_path / "added.jsonl"
    subprocess.run([str(cli.path), "index", "add", str(index), str(new), "--dedup", "-q", "-o", str(out)], check=True)
    added = lines(out)
    ann = neardup.annotate(NEW, ids=NEW_IDS, reference=OLD, reference_ids=OLD_IDS, output="list")
    assert [a.kept for a in ann] == [o["added"] for o in added]
    assert [a.duplicate_of for a in ann] == [o.get("duplicate_of") for o in added]
    # Some texts duplicate the reference, and name it.
    assert any(str(a.duplicate_of).startswith("o") for a in ann)


def test_annotate_gives_the_commands_annotations(cli: Cli, files: tuple[Path, Path], tmp_path: Path) -> None:
    old, new = files
    out = tmp_path / "annotated.jsonl"
    subprocess.run([str(cli.path), "annotate", str(new), "--reference", str(old), "-q", "-o", str(out)], check=True)
    # Only the new records are compared (contract seam 5 leaves the reference's out of
    # what annotate writes; the command writes them as they are).
    written = [o for o in lines(out) if not o["id"].startswith("o")]
    assert [o["id"] for o in written] == NEW_IDS
    ann = neardup.annotate(NEW, ids=NEW_IDS, reference=OLD, reference_ids=OLD_IDS).to_pylist()
    # Python numbers every text by its place; the command numbers the documents it read,
    # skipped records (empty texts) not counted: compare the kept documents by id.
    names = OLD_IDS + NEW_IDS
    documents = [i for i, t in zip(names, OLD + NEW) if t]
    assert len(documents) < len(names)
    for o, a in zip(written, ann):
        mine = None if a["cluster"] is None else names[a["cluster"]]
        theirs = None if o["cluster"] is None else documents[o["cluster"]]
        assert (theirs, o["cluster_size"], o["kept"], o["duplicate_of"]) == (
            mine, a["cluster_size"], a["kept"], a["duplicate_of"]
        ), o["id"]
        if a["jaccard"] is None:
            assert o["jaccard"] is None
        else:
            assert o["jaccard"] == pytest.approx(a["jaccard"], abs=1e-6)


def test_a_reference_text_is_never_removed_nor_listed() -> None:
    old = ["a red apple on the table", "A red apple on the table!"]
    new = ["a red apple on the table.", "pears and plums on a plate"]
    # Both reference texts stay, though one duplicates the other; the new copy names the first.
    assert neardup.clusters(new, reference=old) == [[0, 2]]
    assert neardup.dedup(new, reference=old) == ["pears and plums on a plate"]
    assert [(a, b) for a, b, _ in neardup.pairs(new, reference=old)] == [(0, 2), (1, 2)]
    ann = neardup.annotate(new, reference=old, output="list")
    assert [(a.cluster, a.kept, a.duplicate_of) for a in ann] == [(0, False, 0), (3, True, None)]


def test_a_reference_from_an_arrow_producer() -> None:
    old = pl.DataFrame({"id": OLD_IDS, "text": OLD})
    new = pl.DataFrame({"id": NEW_IDS, "text": NEW})
    got = neardup.dedup(new, reference=old, text_col="text")
    assert got == neardup.dedup(NEW, reference=OLD)
    mask = neardup.dedup(new, reference=old, output="numpy")
    assert new.filter(mask)["text"].to_list() == got


def test_ids_are_given_for_both_or_neither() -> None:
    with pytest.raises(neardup.NeardupError, match="ids and reference_ids together"):
        neardup.dedup(NEW, ids=NEW_IDS, reference=OLD)
    with pytest.raises(neardup.NeardupError, match="reference_ids names"):
        neardup.dedup(NEW, reference_ids=OLD_IDS)
