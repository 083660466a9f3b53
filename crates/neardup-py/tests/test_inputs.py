"""Texts arrive as lists, tuples, NumPy arrays of every string kind and pyarrow arrays of
every string layout; each gives the same documents, and so the same results."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import neardup
from conftest import corpus

# Non-ASCII on purpose: accents (composed and decomposed), CJK, emoji, a full-width form.
TEXTS = [
    "Café au lait près de la gare, lumineux et calme",
    "Cafe\u0301 au lait pre\u0300s de la gare, lumineux et calme!",
    "東京の駅から徒歩五分の明るいアパート",
    "東京の駅から徒歩五分の明るいアパートです",
    "a room with a view 🌅 near the sea",
    "A room with a view 🌅 near the sea.",
    "",
    "ｆｕｌｌ ｗｉｄｔｈ ｔｅｘｔ ｉｓ ｔｈｅ ｓａｍｅ",
    "full width text is the same",
] + corpus(300, seed=3)


def expected() -> list:
    return neardup.pairs(TEXTS, threshold=0.6)


def containers() -> dict[str, object]:
    large = pa.array(TEXTS, type=pa.large_string())
    return {
        "tuple": tuple(TEXTS),
        "generator": (t for t in TEXTS),
        "numpy-U": np.array(TEXTS),
        "numpy-U-big-endian": np.array(TEXTS).astype(np.array(TEXTS).dtype.newbyteorder(">")),
        "numpy-object": np.array(TEXTS, dtype=object),
        "numpy-StringDType": np.array(TEXTS, dtype=np.dtypes.StringDType()),
        "arrow-string": pa.array(TEXTS),
        "arrow-large_string": large,
        "arrow-string_view": pa.array(TEXTS, type=pa.string_view()),
        "arrow-dictionary": pa.array(TEXTS).dictionary_encode(),
        "arrow-chunked": pa.chunked_array([TEXTS[:4], TEXTS[4:100], [], TEXTS[100:]]),
        "arrow-chunked-large": pa.chunked_array([large.slice(0, 7), large.slice(7)]),
    }


@pytest.mark.parametrize("kind", list(containers()))
def test_every_container_gives_the_same_pairs(kind: str) -> None:
    assert neardup.pairs(containers()[kind], threshold=0.6) == expected()


def test_the_unicode_pairs_are_found() -> None:
    found = {(a, b) for a, b, _ in expected()}
    assert {(0, 1), (2, 3), (4, 5), (7, 8)} <= found


def test_a_sliced_arrow_array_is_read_from_its_offset() -> None:
    sliced = pa.array(TEXTS).slice(2, 50)
    assert neardup.pairs(sliced, threshold=0.6) == neardup.pairs(TEXTS[2:52], threshold=0.6)
    assert neardup.shingle_sets(sliced, output="numpy")[1].tolist() == (
        neardup.shingle_sets(TEXTS[2:52], output="numpy")[1].tolist()
    )


def test_a_strided_numpy_array_is_read_as_its_items() -> None:
    array = np.array(TEXTS)
    assert neardup.pairs(array[::2], threshold=0.6) == neardup.pairs(TEXTS[::2], threshold=0.6)


def test_none_and_null_are_missing_texts_in_their_place() -> None:
    texts = ["the same text here", None, "the same text here", None]
    as_list = neardup.pairs(texts)
    assert as_list == [(0, 2, 1.0)]
    assert neardup.pairs(pa.array(texts)) == as_list
    assert neardup.pairs(np.array(texts, dtype=object)) == as_list
    # Missing texts are skipped by dedup, like empty ones.
    assert neardup.dedup(texts, ids=["a", "b", "c", "d"]) == ["a"]
    assert neardup.shingle_sets(pa.array(texts), output="numpy")[0].tolist() == (
        neardup.shingle_sets(["the same text here", "", "the same text here", ""], output="numpy")[0].tolist()
    )


def test_a_nul_inside_a_numpy_string_is_text() -> None:
    texts = ["abc\x00def ghijkl", "abc def ghijkl"]
    assert neardup.shingle_sets(np.array(texts), output="numpy")[1].tolist() == (
        neardup.shingle_sets(texts, output="numpy")[1].tolist()
    )


def test_empty_inputs() -> None:
    for empty in ([], np.array([], dtype=str), pa.array([], type=pa.string())):
        assert neardup.pairs(empty) == []
        assert neardup.clusters(empty) == []
        assert neardup.dedup(empty) == []
        assert neardup.band_keys(empty).shape == (0, 32)
        assert neardup.shingle_sets(empty) == []
