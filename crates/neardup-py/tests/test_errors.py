"""Bad arguments raise clear exceptions: the library's refusals as `NeardupError` (a
`ValueError`) with the library's own message, wrong types as `TypeError`."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import neardup
from neardup import NeardupError

TEXTS = ["one text here", "another text", "one text here!"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"shingle": "char:0"}, 'invalid shingle spec "char:0": expected char:K or word:K with K in 1..=1024'),
        ({"shingle": "letters:5"}, 'invalid shingle spec "letters:5"'),
        ({"threshold": 1.5}, "threshold must be in 0.01..=1, got 1.5"),
        ({"threshold": 0.0}, "threshold must be in 0.01..=1, got 0"),
        ({"threshold": float("nan")}, "threshold must be in 0.01..=1, got NaN"),
        ({"normalize": "nfd"}, 'invalid normalization "nfd": expected none, basic, nfkc or aggressive'),
        ({"verify": "Exact"}, 'invalid verification "Exact": expected exact, estimate, triage or none'),
        ({"sketch": "fast"}, 'invalid sketch "fast": expected oph, classic or simhash'),
        ({"sketch": "simhash", "hamming": 17}, "the Hamming distance must be in 0..=16, got 17"),
        ({"sketch": "simhash", "hamming": -1}, "the Hamming distance must be in 0..=16, got -1"),
        ({"sketch": "simhash", "bands": 4, "rows": 8}, "bands and rows: MinHash sketches only, not simhash"),
        ({"sketch": "simhash", "verify": "triage"}, "--verify triage: MinHash sketches only, not simhash"),
        ({"hamming": 5}, "the Hamming distance is the distance of SimHash fingerprints: it applies to sketch simhash only"),
        ({"sketch": "simhash", "num_perm": 64}, "the number of permutations (64) is the length of a MinHash signature"),
        ({"sketch": "simhash", "neighbours": False}, "sketch simhash looks at no pairs beyond its candidates"),
        ({"num_perm": 0}, "number of permutations must be in 1..=65536, got 0"),
        ({"num_perm": -3}, "number of permutations must be in 1..=65536, got -3"),
        ({"bands": 4}, "bands and rows go together: give both or neither"),
        ({"bands": 17, "rows": 8}, "17 bands x 8 rows does not fit a signature of 128"),
        ({"max_shingles": 0}, "the cap on shingles per document must be in 1..=4294967296, got 0"),
    ],
)
def test_refused_settings(options: dict, message: str) -> None:
    with pytest.raises(NeardupError) as caught:
        neardup.pairs(TEXTS, **options)
    assert message in str(caught.value)
    with pytest.raises(NeardupError):
        neardup.Config(**options)


def test_the_default_distance_is_not_given() -> None:
    # A Config holds every setting; the distance at its default is not passed on as
    # given, so a MinHash run keeps it rather than being refused.
    config = neardup.Config(hamming=neardup.DEFAULT_HAMMING)
    assert config.hamming == neardup.DEFAULT_HAMMING
    assert neardup.pairs(TEXTS, hamming=neardup.DEFAULT_HAMMING) == neardup.pairs(TEXTS)


def test_keep_is_checked() -> None:
    with pytest.raises(NeardupError, match='invalid keep policy "biggest": expected first, last, longest or shortest'):
        neardup.clusters(TEXTS, keep="biggest")


def test_neardup_error_is_a_value_error() -> None:
    assert issubclass(NeardupError, ValueError)


def test_ids_of_the_wrong_length() -> None:
    for call in (neardup.pairs, neardup.clusters, neardup.dedup):
        with pytest.raises(NeardupError, match="2 ids for 3 texts: give one id per text"):
            call(TEXTS, ["a", "b"])
    with pytest.raises(NeardupError, match="2 ids for 3 texts"):
        neardup.pairs(TEXTS, ["a", "b"], output="numpy")
    with pytest.raises(TypeError, match="not one str"):
        neardup.pairs(TEXTS, "abc")


@pytest.mark.parametrize(
    ("texts", "error", "message"),
    [
        (["fine", 3, "fine"], TypeError, r"texts\[1\] is int, not str \(None counts as a missing text\)"),
        ([b"bytes"], TypeError, r"texts\[0\] is bytes, not str"),
        ("one string", TypeError, "must be a sequence of str, not one str"),
        (42, TypeError, "must be a list of str, a NumPy array of str or a pyarrow string array, not int"),
        (np.array([b"a", b"b"]), TypeError, "NumPy array of bytes: decode it to str first"),
        (np.array([1, 2]), TypeError, "NumPy array of int64, not of str"),
        (np.array([["a", "b"]]), NeardupError, "must be one-dimensional, got a NumPy array of 2 dimensions"),
        (pa.array([1, 2]), TypeError, "pyarrow array of int64, not of strings"),
        (["ok", "\ud800 lone surrogate"], NeardupError, r"texts\[1\] is not valid Unicode"),
    ],
)
def test_texts_of_the_wrong_kind(texts: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        neardup.pairs(texts)


def test_output_threads_and_exact() -> None:
    with pytest.raises(NeardupError, match="output must be 'list', 'numpy' or 'arrow', got 'pandas'"):
        neardup.pairs(TEXTS, output="pandas")
    for threads in (0, -1, 5000):
        with pytest.raises(NeardupError, match=f"threads must be in 1..=1024, got {threads}"):
            neardup.pairs(TEXTS, threads=threads)
    with pytest.raises(NeardupError, match="exact=True finds every pair with the exact join: bands is an LSH option"):
        neardup.clusters(TEXTS, bands=4, rows=8, exact=True)
    with pytest.raises(NeardupError, match="verify is an LSH option"):
        neardup.Config(verify="triage").dedup(TEXTS, exact=True)


def test_verify_refuses_pairs_that_name_no_two_documents() -> None:
    with pytest.raises(NeardupError, match=r"pairs\[1\] = \(0, 9\) names document 9, but there are 3 texts"):
        neardup.verify([(0, 2), (0, 9)], TEXTS)
    with pytest.raises(NeardupError, match=r"pairs\[0\] = \(-1, 2\) names document -1"):
        neardup.verify([(-1, 2)], TEXTS)
    with pytest.raises(NeardupError, match=r"pairs\[0\] = \(1, 1\) names one document twice"):
        neardup.verify([(1, 1)], TEXTS)
    with pytest.raises(NeardupError, match="pairs must be rows"):
        neardup.verify([(0, 1, 2)], TEXTS)
    with pytest.raises(TypeError, match="document positions"):
        neardup.verify(np.array([[0.0, 1.0]]), TEXTS)


def test_jaccard_compares_like_with_like() -> None:
    with pytest.raises(TypeError, match="two texts or two shingle sets"):
        neardup.jaccard("a text", np.array([1, 2], dtype=np.uint64))
    with pytest.raises(NeardupError, match="one-dimensional"):
        neardup.jaccard(np.zeros((2, 2)), np.zeros(2))
