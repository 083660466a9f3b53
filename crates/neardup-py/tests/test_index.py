"""`neardup.Index`: staged changes, commits, queries, and several processes on one index."""

from __future__ import annotations

import multiprocessing
import pickle
from pathlib import Path
from typing import Any

import pytest

import neardup
from conftest import corpus

TEXTS = corpus(300, seed=21)
IDS = [f"t{i}" for i in range(len(TEXTS))]


def test_add_commit_query_remove(tmp_path: Path) -> None:
    index = neardup.Index(tmp_path / "idx")
    assert len(index) == 0 and index.generation == 0
    index.add(TEXTS[:200], IDS[:200])
    assert index.pending == 200
    assert len(index) == 0, "nothing is visible before the commit"
    report = index.commit()
    empty = [i for i, t in zip(IDS[:200], TEXTS[:200]) if not t.strip()]
    assert empty, "the corpus has empty texts"
    assert report == {
        "added": 200 - len(empty),
        "replaced": 0,
        "superseded": 0,
        "removed": 0,
        "missing": [],
        "empty": empty,
        "merge_failed": None,
    }
    assert len(index) == 200 - len(empty) and index.pending == 0

    # A query finds the indexed near-duplicates, verified, most similar first.
    pairs = neardup.pairs(TEXTS[:200], IDS[:200], neighbours=False)
    for i in range(0, 200, 7):
        found = index.query(TEXTS[i])
        sims = [j for _, j in found]
        assert sims == sorted(sims, reverse=True) and all(j >= 0.8 for j in sims)
        expected = {b for a, b, _ in pairs if a == IDS[i]} | {a for a, b, _ in pairs if b == IDS[i]}
        if TEXTS[i].strip():
            expected.add(IDS[i])
        assert {k for k, _ in found} == expected
    assert index.query(TEXTS[:3]) == [index.query(t) for t in TEXTS[:3]]
    assert index.query(TEXTS[0], top=1) == index.query(TEXTS[0])[:1]
    neighbours = index.query_id(IDS[0])
    assert neighbours == [n for n in index.query(TEXTS[0]) if n[0] != IDS[0]]
    assert index.query_id("nobody") is None

    index.remove([IDS[0], "nobody"])
    index.add(["a brand new text about nothing in particular"], ["new"])
    report = index.commit()
    assert (report["removed"], report["missing"], report["added"]) == (1, ["nobody"], 1)
    assert IDS[0] not in index and "new" in index
    assert IDS[0] not in {k for k, _ in index.query(TEXTS[0])}
    assert sorted(index.ids()) == sorted((set(IDS[1:200]) - set(empty)) | {"new"})
    stats = index.stats()
    # The second commit() made two commits: a run of removals, then a run of adds.
    assert stats["documents"] == len(index) and stats["generation"] == index.generation == 3
    index.compact()
    assert index.stats()["segments"] == 1 and index.stats()["deleted"] == 0


def test_the_context_manager_commits_or_discards(tmp_path: Path) -> None:
    with neardup.Index(tmp_path / "idx") as index:
        index.add(TEXTS[:10], IDS[:10])
    assert len(index) == len([t for t in TEXTS[:10] if t.strip()])
    with pytest.raises(RuntimeError):
        with index:
            index.remove(IDS[:5])
            raise RuntimeError("changed my mind")
    assert index.pending == 0 and all(i in index for i in IDS[:5] if TEXTS[IDS.index(i)].strip())
    index.remove("t1")
    index.discard()
    assert index.commit()["removed"] == 0


def test_parameters_are_pinned(tmp_path: Path) -> None:
    config = neardup.Config(threshold=0.7, shingle="word:2")
    neardup.Index(tmp_path / "idx", config).add(["x"], ["x"])
    again = neardup.Index(tmp_path / "idx")
    assert again.params["threshold"] == 0.7 and again.params["shingle"] == "word:2"
    assert neardup.Config(**again.params) == neardup.Config(threshold=0.7, shingle="word:2", bands=21, rows=6)
    neardup.Index(tmp_path / "idx", config)  # the same parameters: fine
    with pytest.raises(neardup.NeardupError, match="seed: the index has 1, asked for 2"):
        neardup.Index(tmp_path / "idx", config.replace(seed=2))
    with pytest.raises(neardup.NeardupError, match="query threshold 0.5 is below the index's threshold 0.7"):
        again.query("anything", threshold=0.5)
    assert again.query("anything", threshold=0.9) == []


def test_a_query_kind_is_passed_through_by_name(tmp_path: Path) -> None:
    texts = ["a vintage road bike with a steel frame", "a grey velvet sofa, barely used"]
    with neardup.Index(tmp_path / "idx") as index:
        index.add(texts, ["bike", "sofa"])
    assert index.query(texts[0], kind="neighbours") == index.query(texts[0]) == [("bike", 1.0)]
    assert index.query_id("sofa", kind="neighbours") == index.query_id("sofa") == []
    with pytest.raises(neardup.NeardupError, match='kind "neighbors": one of neighbours'):
        index.query(texts[0], kind="neighbors")


def test_a_file_is_not_an_index(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not an index")
    with pytest.raises(neardup.IndexFileError):
        neardup.Index(tmp_path / "file")
    assert issubclass(neardup.IndexFileError, OSError)


def test_a_directory_of_other_files_is_left_alone(tmp_path: Path) -> None:
    # An index was once created in it, and its first commit removed every `*.tmp` and
    # `*.seg` it did not name: the user's files.
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "report.tmp").write_text("precious")
    (folder / "take1.seg").write_text("x")
    with pytest.raises(neardup.IndexFileError, match=r"d: the directory is not empty and holds no index") as raised:
        index = neardup.Index(folder)
        index.add(["a text of the user's"], ["t"])
        index.commit()
    assert str(folder) in str(raised.value)
    assert sorted(p.name for p in folder.iterdir()) == ["report.tmp", "take1.seg"]
    assert (folder / "report.tmp").read_text() == "precious"
    assert (folder / "take1.seg").read_text() == "x"
    # A new or empty directory is made an index.
    (tmp_path / "empty").mkdir()
    for path in (tmp_path / "empty", tmp_path / "new"):
        index = neardup.Index(path)
        index.add(["a text"], ["t"])
        assert index.commit()["added"] == 1


def _writer(index: neardup.Index, ids: list[str], texts: list[str], ready: Any, go: Any) -> None:
    """In another process: commit one batch, then wait, then see the parent's commit."""
    index.add(texts, ids)
    index.commit()
    ready.set()
    go.wait(60)
    # The parent committed meanwhile: this handle sees it without being reopened.
    assert "parent" in index, "the parent's commit is not visible"
    assert index.query("a text the parent process added, and only it")[0][0] == "parent"


def test_two_processes_see_each_others_commits(tmp_path: Path) -> None:
    index = neardup.Index(tmp_path / "idx")
    spawn = multiprocessing.get_context("spawn")
    ready, go = spawn.Event(), spawn.Event()
    # The handle travels to the child pickled (as its path).
    child = spawn.Process(target=_writer, args=(index, IDS[:50], TEXTS[:50], ready, go))
    child.start()
    assert ready.wait(60), "the child did not commit"
    assert IDS[0] in index, "the child's commit is not visible here"
    assert index.query(TEXTS[0])[0] == (IDS[0], 1.0)
    index.add(["a text the parent process added, and only it"], ["parent"])
    index.commit()
    go.set()
    child.join(60)
    assert child.exitcode == 0


def _add_many(path: str, start: int) -> None:
    index = neardup.Index(path)
    for k in range(5):
        n = start + 10 * k
        index.add(TEXTS[n:n + 10], IDS[n:n + 10])
        index.commit()


def test_writers_in_several_processes_take_turns(tmp_path: Path) -> None:
    path = str(tmp_path / "idx")
    neardup.Index(path)
    spawn = multiprocessing.get_context("spawn")
    workers = [spawn.Process(target=_add_many, args=(path, s)) for s in (0, 50, 100)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    index = neardup.Index(path)
    assert sorted(index.ids()) == sorted(i for i, t in zip(IDS[:150], TEXTS[:150]) if t.strip())
    # 15 commits of adds, and the merges they set off.
    assert index.generation >= 15


def test_a_handle_pickles_as_its_path(tmp_path: Path) -> None:
    index = neardup.Index(tmp_path / "idx")
    index.add(TEXTS[:20], IDS[:20])
    with pytest.raises(neardup.NeardupError, match="staged changes"):
        pickle.dumps(index)
    index.commit()
    copy = pickle.loads(pickle.dumps(index))
    assert copy.path == index.path and len(copy) == len(index)
    assert copy.query(TEXTS[1]) == index.query(TEXTS[1])


def test_refused_queries(tmp_path: Path) -> None:
    index = neardup.Index(tmp_path / "idx")
    with pytest.raises(neardup.NeardupError, match="top must be 0 or more, got -1"):
        index.query("a text", top=-1)
    with pytest.raises(neardup.NeardupError, match="query threshold 1.5 is not in"):
        index.query("a text", threshold=1.5)
    with pytest.raises(neardup.NeardupError, match="2 ids for 1 texts"):
        index.add(["a text"], ["a", "b"])
    with pytest.raises(TypeError):
        index.add(["a text"], [1])
    assert index.query("a text", top=0) == []


def test_the_empty_id_is_refused(tmp_path: Path) -> None:
    # It was committed, and then no id could name it to fetch or remove it.
    index = neardup.Index(tmp_path / "idx")
    index.add(["a first text"], ["first"])
    with pytest.raises(neardup.NeardupError, match=r"ids\[1\] is the empty string"):
        index.add(["a text", "another text"], ["a", ""])
    with pytest.raises(ValueError, match="is the empty string"):
        index.add(["a text"], "")
    assert index.pending == 1, "a refused batch is not staged"
    assert index.commit()["added"] == 1
    assert index.ids() == ["first"]


def test_a_staged_id_given_twice_is_added_once(tmp_path: Path) -> None:
    index = neardup.Index(tmp_path / "idx")
    index.add(["Brass desk lamp with a green glass shade", "Set of four ladder-back chairs"], ["a", "a"])
    report = index.commit()
    assert (report["added"], report["replaced"], report["superseded"]) == (1, 0, 1)
    index.add(["Oak dining table, seats six"], ["a"])
    report = index.commit()
    assert (report["added"], report["replaced"], report["superseded"]) == (1, 1, 0)
    assert len(index) == 1


def test_staged_adds_apply_in_order_as_separate_commits_would(tmp_path: Path) -> None:
    index = neardup.Index(tmp_path / "idx")
    lamp = "Brass desk lamp with a green glass shade"
    index.add([lamp], ["a"])
    index.add([""], ["a"])  # an empty text leaves "a" as the earlier add left it
    index.add(["Set of four ladder-back chairs"], ["b"])
    index.add(["Oak dining table, seats six"], ["b"])  # a later add of "b" replaces it
    report = index.commit()
    assert (report["added"], report["replaced"], report["empty"]) == (3, 1, ["a"])
    assert sorted(index.ids()) == ["a", "b"]
    assert [k for k, _ in index.query(lamp)] == ["a"], "the acknowledged add of a is kept"
    assert [k for k, _ in index.query("Oak dining table, seats six")] == ["b"]
