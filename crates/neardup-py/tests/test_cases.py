"""Tests as data: every case of testdata/cases run through the Python package, as the
Rust suite (crates/neardup-testsuite) runs it through every engine. The package must
give each case's expected pairs and clusters, the same as the `neardup` command's output
on the same texts, and its engines built from the building blocks (band keys + verify,
MinHashLSH, Index) must find the same pairs."""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np
import pytest

import neardup
from conftest import load_cases

CASES = load_cases()
NAMES = [name for name, _ in CASES]

# Python engines, each named after the Rust suite's engine it corresponds to.
LSH_ENGINES = {
    "lsh-oph": {},
    "lsh-classic": {"sketch": "classic"},
    "triage": {"verify": "triage"},
}


def applies(case: dict[str, Any], engine: str) -> bool:
    """Whether the case runs `engine` (as cases.rs decides: its list, and no LSH engine
    when a miss is allowed)."""
    listed = case["engines"]
    if listed is not None and engine not in listed:
        return False
    return engine == "exact" or not case["lsh_may_miss"]


def settings(case: dict[str, Any]) -> dict[str, Any]:
    return {
        "shingle": case["shingle"],
        "normalize": case["normalize"],
        "threshold": case["threshold"],
        "multiset": case["multiset"],
    }


def lsh_settings(case: dict[str, Any]) -> dict[str, Any]:
    return {**settings(case), "num_perm": case["num_perm"]}


def cli_options(case: dict[str, Any], engine: str) -> list[str]:
    options = [
        "--shingle", case["shingle"],
        "--normalize", case["normalize"],
        "-t", str(case["threshold"]),
        *(["--multiset"] if case["multiset"] else []),
    ]
    if engine == "exact":
        return [*options, "--exact"]
    options += ["--method", "lsh", "--num-perm", str(case["num_perm"])]
    if engine == "lsh-classic":
        options += ["--sketch", "classic"]
    if engine == "triage":
        options += ["--verify", "triage"]
    return options


def python_run(case: dict[str, Any], engine: str, what: str, **kw: Any) -> Any:
    if engine == "exact":
        return getattr(neardup, what)(case["docs"], **settings(case), exact=True, **kw)
    return getattr(neardup, what)(case["docs"], **lsh_settings(case), **LSH_ENGINES[engine], **kw)


def cli_round(x: float) -> float:
    """A similarity as the command prints it: to 6 decimals, halves away from zero (Rust's
    `f64::round`; Python's `round` takes halves to even)."""
    scaled = x * 1e6
    whole = math.floor(scaled)
    return (whole + 1 if scaled - whole >= 0.5 else whole) / 1e6


def brute_force_jaccard(case: dict[str, Any], a: int, b: int) -> float:
    return neardup.jaccard(
        case["docs"][a],
        case["docs"][b],
        shingle=case["shingle"],
        normalize=case["normalize"],
        multiset=case["multiset"],
    )


@pytest.mark.parametrize("engine", [*LSH_ENGINES, "exact"])
@pytest.mark.parametrize("name", NAMES)
def test_pairs_and_clusters_are_the_cases(name: str, engine: str) -> None:
    case = dict(CASES)[name]
    if not applies(case, engine):
        pytest.skip(f"{name} does not run {engine}")
    pairs = python_run(case, engine, "pairs")
    assert [[a, b] for a, b, _ in pairs] == case["pairs"]
    for a, b, similarity in pairs:
        if engine != "triage":  # triage may accept on the estimate
            assert similarity == brute_force_jaccard(case, a, b)
    clusters = python_run(case, engine, "clusters")
    assert clusters == case["clusters"]


@pytest.mark.parametrize("engine", [*LSH_ENGINES, "exact"])
@pytest.mark.parametrize("name", NAMES)
def test_the_same_as_the_command(name: str, engine: str, cli: Any) -> None:
    case = dict(CASES)[name]
    if not applies(case, engine):
        pytest.skip(f"{name} does not run {engine}")
    options = cli_options(case, engine)
    docs = case["docs"]

    # pairs: the same pairs, Jaccard and estimate to the command's 6 decimals.
    by_cli = sorted(
        (p["a"], p["b"], p.get("jaccard"), p.get("estimate"))
        for p in cli.run("pairs", docs, *options)
    )
    columns = python_run(case, engine, "pairs", output="numpy")

    def rounded(x: float) -> float | None:
        return None if np.isnan(x) else cli_round(float(x))

    by_python = sorted(
        (int(a), int(b), rounded(j), rounded(e))
        for a, b, j, e in zip(columns["a"], columns["b"], columns["jaccard"], columns["estimate"])
    )
    assert by_python == by_cli

    # clusters: the same members, kept documents and similarities.
    rows = cli.run("clusters", docs, *options)
    table = python_run(case, engine, "clusters", output="arrow").to_pylist()
    assert [(r["id"], r["cluster"] - 1, r["kept"], r.get("duplicate_of")) for r in rows] == [
        (r["id"], r["cluster"], r["kept"], r["duplicate_of"]) for r in table
    ]
    assert [r.get("jaccard") for r in rows] == [
        None if r["jaccard"] is None else cli_round(r["jaccard"]) for r in table
    ]

    # dedup: the same survivors.
    survivors = [r["id"] for r in cli.run("dedup", docs, *options)]
    ids = list(range(len(docs)))
    assert python_run(case, engine, "dedup", ids=ids) == survivors


@pytest.mark.parametrize("name", NAMES)
def test_band_keys_and_verify_find_the_pairs(name: str) -> None:
    """An engine made of the building blocks: candidates are documents sharing a band key
    in a column, confirmed by `verify`."""
    case = dict(CASES)[name]
    if not applies(case, "documents"):
        pytest.skip(f"{name} does not run documents")
    keys = neardup.band_keys(case["docs"], **lsh_settings(case))
    candidates = set()
    for column in keys.T:
        buckets: dict[int, list[int]] = {}
        for doc, key in enumerate(column.tolist()):
            if key:
                buckets.setdefault(key, []).append(doc)
        for members in buckets.values():
            candidates.update(combinations(members, 2))
    verified = neardup.verify(sorted(candidates), case["docs"], **settings(case))
    assert [[a, b] for a, b, _ in verified] == case["pairs"]
    for a, b, j in verified:
        assert j == brute_force_jaccard(case, a, b)


@pytest.mark.parametrize("name", NAMES)
def test_minhash_lsh_finds_the_pairs(name: str) -> None:
    """MinHashLSH over `MinHash.from_text`: every document inserted, then queried."""
    case = dict(CASES)[name]
    if not applies(case, "documents"):
        pytest.skip(f"{name} does not run documents")
    if case["multiset"]:
        pytest.skip("MinHash.from_texts sketches shingle sets, as datasketch's does")
    shingling = {"shingle": case["shingle"], "normalize": case["normalize"]}
    minhashes = neardup.MinHash.from_texts(case["docs"], **shingling, num_perm=case["num_perm"])
    lsh = neardup.MinHashLSH(threshold=case["threshold"], num_perm=case["num_perm"])
    for i, m in enumerate(minhashes):
        lsh.insert(i, m)
    found = sorted(
        [a, b] for a, m in enumerate(minhashes) for b in lsh.query(m) if b > a
    )
    assert found == case["pairs"]


@pytest.mark.parametrize("name", NAMES)
def test_the_index_finds_the_pairs(name: str, tmp_path: Any) -> None:
    """The persistent index: the case added in two commits, every document queried."""
    case = dict(CASES)[name]
    if not applies(case, "index"):
        pytest.skip(f"{name} does not run index")
    config = neardup.Config(**lsh_settings(case))
    index = neardup.Index(tmp_path / "index", config)
    docs = case["docs"]
    ids = [str(i) for i in range(len(docs))]
    half = len(docs) // 2
    index.add(docs[:half], ids[:half])
    index.commit()
    index.add(docs[half:], ids[half:])
    index.commit()
    found = []
    for a, neighbours in enumerate(index.query(docs)):
        for b, j in neighbours:
            if int(b) > a:
                found.append((a, int(b), j))
    assert [[a, b] for a, b, _ in sorted(found)] == case["pairs"]
    for a, b, j in found:
        assert j == brute_force_jaccard(case, a, b)


def test_there_are_cases() -> None:
    assert len(CASES) >= 8, "testdata/cases lost its cases"
