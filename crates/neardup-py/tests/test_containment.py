"""Containment from Python (``measure="containment"``): the pairs against a brute force
over the library's own shingle sets, the tests-as-data case and the `neardup` command, the
output forms, the types, and the refusals of what containment does not do."""

from __future__ import annotations

import pickle
import random
import re
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import neardup
import neardup.spark
from conftest import WORDS, load_cases
from neardup import Contained, NeardupError

T = 0.8


def planted(seed: int = 3) -> list[str]:
    """Pages of 40-80 words; fragments of 8-20 consecutive words of a page (every third
    with a word replaced, so containments spread below 1); copies of a fragment; short
    texts of other words; an empty text. Shuffled, so a fragment may come before its page."""
    rng = random.Random(seed)
    texts: list[str] = []
    for _ in range(25):
        page = [rng.choice(WORDS) for _ in range(rng.randrange(40, 80))]
        texts.append(" ".join(page))
        for k in range(rng.randrange(1, 4)):
            start = rng.randrange(len(page) - 20)
            part = page[start : start + rng.randrange(8, 20)]
            if k % 3 == 2:
                part[rng.randrange(len(part))] = rng.choice(WORDS)
            texts.append(" ".join(part))
        if rng.random() < 0.3:
            texts.append(texts[-1])
    texts += [" ".join(rng.choice(WORDS) for _ in range(10)) for _ in range(20)]
    texts.append("")
    rng.shuffle(texts)
    return texts


def brute(texts: list[str], t: float, **settings: Any) -> list[tuple[int, int, float, float]]:
    """Every pair with the smaller set (fewer shingles, or as many and the earlier text)
    contained at `t` in the other, from the sets `neardup.shingle_sets` gives."""
    sets = [set(s.tolist()) for s in neardup.shingle_sets(texts, **settings)]
    out = []
    for i in range(len(sets)):
        for j in range(i + 1, len(sets)):
            (la, a), (lb, b) = sorted([(len(sets[i]), i), (len(sets[j]), j)])
            if la == 0:
                continue
            shared = len(sets[a] & sets[b])
            if shared / la >= t:
                out.append((a, b, shared / la, shared / (la + lb - shared)))
    return sorted(out)


def close(found: list[Contained], expected: list[tuple[int, int, float, float]]) -> None:
    assert [(p.a, p.b) for p in found] == [(e[0], e[1]) for e in expected]
    for p, e in zip(found, expected):
        assert p.containment == pytest.approx(e[2], rel=1e-12)
        assert p.jaccard == pytest.approx(e[3], rel=1e-12)


def test_the_exact_join_is_the_brute_force_and_the_search_a_verified_subset() -> None:
    texts = planted()
    for t in (0.6, T, 1.0):
        truth = brute(texts, t)
        assert len(truth) > 20, t
        # Fragments are where Jaccard fails: most of these pairs are far below t as Jaccard.
        assert sum(e[3] < t for e in truth) > len(truth) // 2, t
        close(neardup.pairs(texts, measure="containment", threshold=t, exact=True), truth)
        found = neardup.pairs(texts, measure="containment", threshold=t)
        by_pair = {(e[0], e[1]): e for e in truth}
        assert found == sorted(found)
        close(found, [by_pair[(p.a, p.b)] for p in found])
        assert len(found) >= 0.95 * len(truth), (t, len(found), len(truth))


def test_pairs_are_contained_then_containing_with_both_values() -> None:
    page = " ".join(WORDS[:60])
    fragment = " ".join(WORDS[20:35])
    texts = [page, "an unrelated short text about pears", fragment]
    for exact in (False, True):
        (p,) = neardup.pairs(texts, ["page", "pears", "fragment"], measure="containment",
                             threshold=T, exact=exact)
        assert isinstance(p, Contained) and isinstance(p, tuple)
        assert (p.a, p.b, p.containment) == ("fragment", "page", 1.0)
        assert p.jaccard == pytest.approx(neardup.jaccard(fragment, page), rel=1e-12)
        assert p.jaccard < 0.3
    # As Jaccard, the same texts make no pair.
    assert neardup.pairs(texts, threshold=T) == []


def test_the_case_and_the_command_agree(cli: Any) -> None:
    (case,) = [c for _, c in load_cases() if "containment" in c]
    docs, t = case["docs"], case["threshold"]
    for exact in (False, True):
        found = neardup.pairs(docs, measure="containment", threshold=t, exact=exact)
        assert [[p.a, p.b] for p in found] == case["containment"]["pairs"]
    by_cli = cli.run("pairs", docs, "--measure", "containment", "-t", str(t))
    assert [[p["a"], p["b"]] for p in by_cli] == case["containment"]["pairs"]
    ours = neardup.pairs(docs, measure="containment", threshold=t)
    for p, c in zip(ours, by_cli):
        # The command rounds to six places.
        assert (round(p.containment, 6), round(p.jaccard, 6)) == (c["containment"], c["jaccard"])


def test_numpy_arrow_and_threads_give_the_same_pairs() -> None:
    texts = planted(5)
    ids = [f"d{i}" for i in range(len(texts))]
    listed = neardup.pairs(texts, ids, measure="containment", threshold=T)
    assert listed
    cols = neardup.pairs(texts, ids, measure="containment", threshold=T, output="numpy")
    assert list(cols) == ["a", "b", "containment", "jaccard"]
    assert cols["a"].tolist() == [p.a for p in listed]
    assert cols["b"].tolist() == [p.b for p in listed]
    assert cols["containment"].dtype == np.float64
    assert cols["containment"].tolist() == [p.containment for p in listed]
    assert cols["jaccard"].tolist() == [p.jaccard for p in listed]
    table = neardup.pairs(texts, ids, measure="containment", threshold=T, output="arrow")
    assert table.column_names == ["a", "b", "containment", "jaccard"]
    assert [Contained(*row.values()) for row in table.to_pylist()] == listed
    one = neardup.pairs(texts, ids, measure="containment", threshold=T, threads=1)
    assert one == listed


def test_a_config_keeps_its_measure_through_pickle() -> None:
    config = neardup.Config(measure="containment", threshold=T)
    again = pickle.loads(pickle.dumps(config))
    assert again == config and again.measure == "containment"
    texts = planted(7)
    assert again.pairs(texts) == neardup.pairs(texts, measure="containment", threshold=T)
    assert neardup.Config().measure == "jaccard"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"measure": "overlap"}, "invalid measure \"overlap\": expected jaccard or containment"),
        ({"bands": 4, "rows": 8}, "the rows per band are chosen for each size partition"),
        ({"neighbours": False}, "the checks beyond the buckets cannot be turned off"),
        ({"verify": "estimate"}, "verifies every candidate exactly"),
        ({"sketch": "simhash"}, "containment: MinHash sketches only, not simhash"),
    ],
)
def test_settings_it_does_not_take_are_refused(settings: dict[str, Any], message: str) -> None:
    settings = {"measure": "containment", **settings}
    with pytest.raises(NeardupError, match=re.escape(message)):
        neardup.Config(**settings)


def test_clusters_dedup_and_the_jaccard_building_blocks_are_refused() -> None:
    texts = planted()
    config = neardup.Config(measure="containment")
    refusals = {
        "clusters": lambda: neardup.clusters(texts, measure="containment"),
        "dedup": lambda: neardup.dedup(texts, measure="containment"),
        "band_keys": lambda: config.band_keys(texts),
        "verify": lambda: config.verify_pairs([(0, 1)], texts),
    }
    for what, call in refusals.items():
        with pytest.raises(ValueError, match=rf"^{what} with measure='containment': "
                           r"containment finds pairs only \(neardup\.pairs"):
            call()
    # The same calls as Jaccard work.
    assert neardup.clusters(texts)


def test_a_containment_index_answers_the_exact_join_both_ways(tmp_path: Any) -> None:
    texts = planted()
    config = neardup.Config(measure="containment", threshold=T)
    truth = {(e[0], e[1]): e for e in brute(texts, T)}
    sizes = [len(s) for s in neardup.shingle_sets(texts)]
    with neardup.Index(str(tmp_path / "index"), config) as index:
        half = len(texts) // 2
        index.add(texts[:half], [str(i) for i in range(half)])
        index.commit()
        index.add(texts[half:], [str(i) for i in range(half, len(texts))])
        index.commit()
        assert index.params["measure"] == "containment"
        assert "bands" not in index.params
        # The parameters rebuild the configuration the index was made with.
        assert neardup.Config(**index.params).measure == "containment"
        answered = {}
        for q, found in enumerate(index.query(texts)):
            for id_, containment, inside, jaccard in found:
                d = int(id_)
                if d == q:
                    continue
                small, large = sorted([(sizes[q], q), (sizes[d], d)])
                if sizes[q] != sizes[d]:
                    assert inside == ("query" if small[1] == q else "document"), (q, d)
                answered[(small[1], large[1])] = (containment, jaccard)
    # Every answer is a pair of the exact join with its values; the plan promises each pair
    # with probability 0.95 or more, so recall falls more than 3 sigma below it only by a
    # defect.
    for pair, (containment, jaccard) in answered.items():
        assert pair in truth, pair
        assert containment == pytest.approx(truth[pair][2], rel=1e-12)
        assert jaccard == pytest.approx(truth[pair][3], rel=1e-12)
    floor = 0.95 - 3 * (0.95 * 0.05 / len(truth)) ** 0.5
    assert len(answered) / len(truth) >= floor, (len(answered), len(truth))
    # Reopened without a configuration it is still a containment index; as Jaccard, refused.
    again = neardup.Index(str(tmp_path / "index"))
    a, b = min(answered)
    assert (str(b), *answered[(a, b)]) in [(n[0], n[1], n[3]) for n in again.query(texts[a])]
    with pytest.raises(NeardupError, match="measure: the index has containment, asked for jaccard"):
        neardup.Index(str(tmp_path / "index"), neardup.Config(threshold=T))


def test_spark_refuses_containment_and_names_what_to_use() -> None:
    # Refused before Spark (or pyspark) is touched.
    for run in (neardup.spark.pairs, neardup.spark.clusters, neardup.spark.dedup):
        with pytest.raises(NeardupError, match=r"^measure='containment': Spark .* find "
                           r"contained documents on one machine with neardup\.pairs\(texts, "
                           r"measure='containment'\)"):
            run(None, measure="containment")  # type: ignore[arg-type]


def test_the_types_describe_contained_pairs(tmp_path: Any) -> None:
    pytest.importorskip("mypy")
    snippet = tmp_path / "use.py"
    snippet.write_text(
        "import neardup\n"
        "pairs = neardup.pairs(['a b c'], measure='containment')\n"
        "c = neardup.Contained(0, 1, 1.0, 0.5)\n"
        "x: float = c.containment + c.jaccard\n"
        "y: str = c.containment\n",
        encoding="utf-8",
    )
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(snippet)],
        capture_output=True, text=True, cwd="/",
    )
    errors = [l for l in run.stdout.splitlines() if ": error:" in l]
    # Only the str annotation is wrong: the fields are typed, the stubs take `measure`.
    assert len(errors) == 1 and "use.py:5:" in errors[0], run.stdout
    assert 'Incompatible types in assignment (expression has type "float"' in errors[0]
