"""The three result forms (plain objects, NumPy arrays, a pyarrow table) say the same
thing, and the building blocks agree with the runs and with each other."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pyarrow as pa
import pytest

import neardup
from conftest import corpus

TEXTS = corpus(2000, seed=11)
IDS = [f"doc-{i}" for i in range(len(TEXTS))]


@pytest.mark.parametrize("ids", [None, IDS, np.array(IDS), pa.array(IDS), list(range(100, 100 + len(TEXTS)))])
def test_pairs_in_every_form(ids: object) -> None:
    plain = neardup.pairs(TEXTS, ids)
    assert plain, "the corpus has near-duplicates"
    columns = neardup.pairs(TEXTS, ids, output="numpy")
    table = neardup.pairs(TEXTS, ids, output="arrow")
    assert set(columns) == {"a", "b", "jaccard", "estimate", "truncated"}
    assert table.column_names == ["a", "b", "jaccard", "estimate", "truncated"]
    assert list(zip(columns["a"].tolist(), columns["b"].tolist(), columns["jaccard"].tolist())) == plain
    rows = table.to_pylist()
    assert [(r["a"], r["b"], r["jaccard"]) for r in rows] == plain
    # Exact verification keeps no signatures: no estimate, and nothing truncated.
    assert np.isnan(columns["estimate"]).all() and table.column("estimate").null_count == len(rows)
    assert not columns["truncated"].any()


def test_pairs_are_sorted_by_position_with_a_before_b() -> None:
    columns = neardup.pairs(TEXTS, output="numpy")
    a, b = columns["a"].astype(np.int64), columns["b"].astype(np.int64)
    assert (a < b).all()
    order = np.lexsort((b, a))
    assert (order == np.arange(len(a))).all()


def test_estimates_where_verification_uses_them() -> None:
    columns = neardup.pairs(TEXTS, verify="estimate", output="numpy")
    assert np.isnan(columns["jaccard"]).all()
    assert (columns["estimate"] >= 0.8).all()
    plain = neardup.pairs(TEXTS, verify="estimate")
    assert [s for _, _, s in plain] == columns["estimate"].tolist()


@pytest.mark.parametrize("ids", [None, IDS])
def test_clusters_in_every_form(ids: object) -> None:
    plain = neardup.clusters(TEXTS, ids)
    columns = neardup.clusters(TEXTS, ids, output="numpy")
    table = neardup.clusters(TEXTS, ids, output="arrow").to_pylist()
    rebuilt: list[list] = []
    for row in table:
        if row["kept"]:
            rebuilt.append([row["id"]])
            assert row["duplicate_of"] is None and row["jaccard"] is None
        else:
            assert row["duplicate_of"] == rebuilt[-1][0]
            assert row["jaccard"] >= 0.8
            rebuilt[-1].append(row["id"])
        assert row["cluster"] == len(rebuilt) - 1
    assert rebuilt == plain
    assert columns["id"].tolist() == [r["id"] for r in table]
    kept = columns["kept"]
    # In NumPy a kept row names itself as what it duplicates.
    assert (columns["duplicate_of"][kept] == columns["id"][kept]).all()


def test_every_removed_document_is_similar_to_its_kept_one() -> None:
    for cluster in neardup.clusters(TEXTS):
        for doc in cluster[1:]:
            assert neardup.jaccard(TEXTS[cluster[0]], TEXTS[doc]) >= 0.8


@pytest.mark.parametrize("keep", ["first", "last", "longest", "shortest"])
def test_dedup_keeps_what_clusters_keep(keep: str) -> None:
    clusters = neardup.clusters(TEXTS, keep=keep)
    removed = {d for c in clusters for d in c[1:]}
    empty = {i for i, t in enumerate(TEXTS) if not t.strip()}
    survivors = [i for i in range(len(TEXTS)) if i not in removed and i not in empty]
    assert neardup.dedup(TEXTS, list(range(len(TEXTS))), keep=keep) == survivors
    assert neardup.dedup(TEXTS, keep=keep) == [TEXTS[i] for i in survivors]
    mask = neardup.dedup(TEXTS, keep=keep, output="numpy")
    assert mask.dtype == np.bool_ and np.flatnonzero(mask).tolist() == survivors
    table = neardup.dedup(TEXTS, IDS, keep=keep, output="arrow")
    assert table.column("id").to_pylist() == [IDS[i] for i in survivors]
    assert table.column("text").to_pylist() == [TEXTS[i] for i in survivors]


def test_dedup_of_arrow_and_numpy_texts() -> None:
    expected = neardup.dedup(TEXTS)
    assert neardup.dedup(np.array(TEXTS)) == expected
    assert neardup.dedup(pa.array(TEXTS)) == expected
    assert neardup.dedup(pa.array(TEXTS), output="arrow").column("text").to_pylist() == expected


def test_the_survivors_are_the_input_objects() -> None:
    texts = ["the same listing posted twice", "the same listing posted twice!"]
    assert neardup.dedup(texts)[0] is texts[0]


def test_exact_pairs_hold_the_lsh_pairs() -> None:
    lsh = neardup.pairs(TEXTS)
    exact = neardup.exact_pairs(TEXTS)
    assert set(lsh) <= set(exact)
    assert neardup.pairs(TEXTS, exact=True) == exact
    # LSH may miss a pair near the threshold, rarely (the S-curve gives 0.947 at 0.8).
    assert len(lsh) >= 0.99 * len(exact)


def test_shingle_sets_in_every_form() -> None:
    plain = neardup.shingle_sets(TEXTS[:50])
    offsets, hashes = neardup.shingle_sets(TEXTS[:50], output="numpy")
    arrow = neardup.shingle_sets(TEXTS[:50], output="arrow")
    assert len(plain) == 50 and offsets.dtype == np.int64 and hashes.dtype == np.uint64
    for i, s in enumerate(plain):
        assert s.dtype == np.uint64
        assert (np.diff(s.astype(np.float64)) > 0).all(), "sorted, no repeats"
        assert s.tolist() == hashes[offsets[i]:offsets[i + 1]].tolist() == arrow[i].as_py()


def test_jaccard_of_texts_is_jaccard_of_their_sets() -> None:
    sets = neardup.shingle_sets(TEXTS[:20])
    for a, b in combinations(range(20), 2):
        x, y = set(sets[a].tolist()), set(sets[b].tolist())
        by_hand = len(x & y) / len(x | y) if x | y else 0.0
        assert neardup.jaccard(TEXTS[a], TEXTS[b]) == by_hand
        assert neardup.jaccard(sets[a], sets[b]) == by_hand
        assert neardup.jaccard(list(reversed(sets[a].tolist())), sets[b]) == by_hand


def test_band_keys() -> None:
    config = neardup.Config()
    keys = neardup.band_keys(TEXTS)
    bands, rows = config.plan
    assert keys.dtype == np.uint64 and keys.shape == (len(TEXTS), config.families * bands)
    assert config.families == 2 and (bands, rows) == (16, 8)
    classic = neardup.band_keys(TEXTS, sketch="classic")
    assert classic.shape == (len(TEXTS), bands)
    for i, text in enumerate(TEXTS):
        if not text.strip():
            assert not keys[i].any(), "an empty text has no key"
        else:
            # Each family the document is in fills all of its bands.
            families = [keys[i, f * bands:(f + 1) * bands] for f in range(2)]
            assert any(f.all() for f in families)
            assert all(f.all() or not f.any() for f in families)
    # Identical texts have identical keys.
    first = {}
    for i, text in enumerate(TEXTS):
        if text in first:
            assert (keys[i] == keys[first[text]]).all()
        first.setdefault(text, i)


def test_verify_keeps_the_pairs_that_pass_in_their_order() -> None:
    found = neardup.pairs(TEXTS)
    candidates = [(b, a) for a, b, _ in found[:50]] + [(0, 1), (2, 3)]
    verified = neardup.verify(candidates, TEXTS)
    expected = [(b, a, j) for a, b, j in found[:50]]
    expected += [(a, b, j) for a, b in [(0, 1), (2, 3)] if (j := neardup.jaccard(TEXTS[a], TEXTS[b])) >= 0.8]
    assert verified == expected
    as_array = neardup.verify(np.array(candidates, dtype=np.int32), TEXTS, output="numpy")
    assert as_array["a"].tolist() == [a for a, _, _ in expected]
    assert neardup.verify([], TEXTS) == []
    assert neardup.verify(candidates, TEXTS, IDS)[0][:2] == (IDS[candidates[0][0]], IDS[candidates[0][1]])


def test_config_plan_and_probability() -> None:
    config = neardup.Config(threshold=0.7)
    assert config.plan == (21, 6)
    assert abs(config.probability(0.7) - (1 - (1 - 0.7**6) ** 21)) < 1e-12
    assert neardup.Config(bands=4, rows=8).plan == (4, 8)
    assert config.replace(threshold=0.8).plan == (16, 8)


@pytest.mark.parametrize("output", ["list", "numpy", "arrow"])
def test_ids_of_every_kind(output: str) -> None:
    def form(result: object) -> object:
        if output == "arrow":
            return result.to_pylist()
        if output == "numpy" and isinstance(result, dict):
            # NaN is not equal to itself: the estimates (all absent) are left out.
            return {k: v.tolist() for k, v in result.items() if k != "estimate"}
        if output == "numpy":
            return result.tolist()
        return result

    expected = form(neardup.pairs(TEXTS, IDS, output=output))
    chunked = pa.chunked_array([IDS[:500], IDS[500:]])
    for ids in (tuple(IDS), (i for i in IDS), np.array(IDS, dtype=object), chunked):
        assert form(neardup.pairs(TEXTS, ids, output=output)) == expected
    survivors = neardup.dedup(TEXTS, IDS, output=output)
    assert form(neardup.dedup(TEXTS, chunked, output=output)) == form(survivors)


class Column:
    """An iterable that is neither a list nor an array, as a DataFrame column is."""

    def __init__(self, values: list) -> None:
        self.values = values

    def __iter__(self):
        return iter(self.values)


def test_any_iterable_of_texts() -> None:
    assert neardup.pairs(Column(TEXTS), Column(IDS)) == neardup.pairs(TEXTS, IDS)
    assert neardup.dedup(Column(TEXTS)) == neardup.dedup(TEXTS)


def test_multiset_counts_repeated_shingles() -> None:
    texts = ["buy now buy now buy now", "buy now"]
    assert neardup.pairs(texts, shingle="word:1") == [(0, 1, 1.0)]
    # As multisets: (1 + 1) / (3 + 3).
    counted = neardup.Config(shingle="word:1", multiset=True, threshold=0.3)
    assert counted.pairs(texts) == [(0, 1, 2 / 6)]
    assert neardup.pairs(texts, shingle="word:1", multiset=True) == []
    # The setting survives a copy, as every other does.
    assert counted.replace(threshold=0.5).multiset
