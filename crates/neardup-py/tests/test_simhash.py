"""SimHash from Python: the tests-as-data cases' `[simhash]` answers, the same as the
`neardup` command's, and the refusals of what SimHash does not do."""

from __future__ import annotations

from typing import Any

import pytest

import neardup
from conftest import load_cases
from neardup import NeardupError

SIMHASH = [(name, case) for name, case in load_cases() if "simhash" in case]


def options(case: dict[str, Any]) -> dict[str, Any]:
    return {
        "shingle": case["shingle"],
        "normalize": case["normalize"],
        "threshold": case["threshold"],
        "multiset": case["multiset"],
        "sketch": "simhash",
        "hamming": case["simhash"]["hamming"],
    }


def test_there_is_a_simhash_case() -> None:
    assert SIMHASH


@pytest.mark.parametrize(("name", "case"), SIMHASH)
def test_pairs_and_clusters_are_the_cases(name: str, case: dict[str, Any], cli: Any) -> None:
    docs, sim = case["docs"], case["simhash"]
    pairs = neardup.pairs(docs, **options(case))
    assert [[a, b] for a, b, _ in pairs] == sim["pairs"], name
    for a, b, similarity in pairs:
        assert similarity == neardup.jaccard(
            docs[a], docs[b], shingle=case["shingle"], normalize=case["normalize"]
        )
    assert neardup.clusters(docs, **options(case)) == sim["clusters"], name

    flags = [
        "--shingle", case["shingle"],
        "--normalize", case["normalize"],
        "-t", str(case["threshold"]),
        "--sketch", "simhash",
        "--hamming", str(sim["hamming"]),
    ]
    by_cli = cli.run("pairs", docs, *flags)
    assert sorted([p["a"], p["b"]] for p in by_cli) == sim["pairs"]
    assert all(isinstance(p["hamming"], int) and p["hamming"] <= sim["hamming"] for p in by_cli)
    survivors = [r["id"] for r in cli.run("dedup", docs, *flags)]
    assert neardup.dedup(docs, list(range(len(docs))), **options(case)) == survivors


def test_probability_follows_the_distance() -> None:
    near = neardup.Config(sketch="simhash", hamming=3)
    far = neardup.Config(sketch="simhash", hamming=10)
    assert near.probability(1.0) == pytest.approx(1.0)
    assert near.probability(0.9) < far.probability(0.9)


def test_band_keys_are_refused() -> None:
    with pytest.raises(NeardupError, match="band keys: MinHash sketches only"):
        neardup.band_keys(["a text", "another"], sketch="simhash")
