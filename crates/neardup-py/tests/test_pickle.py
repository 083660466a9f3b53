"""Configurations, MinHashes, LSH tables and index handles pickle, so they travel to Spark
and Ray workers, and answer the same after the trip."""

from __future__ import annotations

import multiprocessing
import pickle
from pathlib import Path

import pytest

import neardup
from conftest import corpus

TEXTS = corpus(500, seed=13)


@pytest.mark.parametrize(
    "config",
    [
        neardup.Config(),
        neardup.Config(threshold=0.6, shingle="word:3", normalize="aggressive", keep="longest"),
        neardup.Config(num_perm=64, seed=9, sketch="classic", bands=8, rows=8, verify="triage"),
    ],
)
def test_config_round_trip(config: neardup.Config) -> None:
    copy = pickle.loads(pickle.dumps(config))
    assert copy == config and hash(copy) == hash(config) and repr(copy) == repr(config)
    assert copy.plan == config.plan
    assert copy.pairs(TEXTS) == config.pairs(TEXTS)
    assert copy.clusters(TEXTS) == config.clusters(TEXTS)


def _pairs_in_a_worker(config: neardup.Config, texts: list[str]) -> list:
    return config.pairs(texts)


def test_a_config_travels_to_another_process() -> None:
    config = neardup.Config(threshold=0.7)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        remote = pool.apply(_pairs_in_a_worker, (config, TEXTS))
    assert remote == config.pairs(TEXTS)


def test_minhash_round_trip() -> None:
    for m in neardup.MinHash.from_texts(TEXTS[:20]) + [neardup.MinHash(), neardup.MinHash(64, 3, sketch="classic")]:
        copy = pickle.loads(pickle.dumps(m))
        assert copy == m
        assert (copy.num_perm, copy.seed, copy.sketch) == (m.num_perm, m.seed, m.sketch)
        assert copy.digest().tolist() == m.digest().tolist()
    pending = neardup.MinHash()
    pending.update_batch([b"b", b"a", b"b"])  # not yet sorted when pickled
    assert len(pickle.loads(pickle.dumps(pending)).hashes()) == 2  # count() estimates (#36)


def test_minhash_lsh_round_trip() -> None:
    minhashes = neardup.MinHash.from_texts(TEXTS)
    lsh = neardup.MinHashLSH(threshold=0.8)
    for i, m in enumerate(minhashes):
        lsh.insert(f"k{i}", m)
    for i in range(0, 500, 3):
        lsh.remove(f"k{i}")  # removed slots travel as gaps
    copy = pickle.loads(pickle.dumps(lsh))
    assert copy.keys() == lsh.keys() and len(copy) == len(lsh)
    for m in minhashes:
        assert copy.query_with_similarity(m) == lsh.query_with_similarity(m)
    copy.insert("new", minhashes[0])
    assert "new" in copy.query(minhashes[0]) and "new" not in lsh


def test_index_round_trip(tmp_path: Path) -> None:
    index = neardup.Index(tmp_path / "idx", neardup.Config(threshold=0.7))
    index.add(TEXTS, [str(i) for i in range(len(TEXTS))])
    index.commit()
    copy = pickle.loads(pickle.dumps(index))
    assert copy.params == index.params
    assert copy.query(TEXTS[:50]) == index.query(TEXTS[:50])


def test_errors_pickle() -> None:
    with pytest.raises(neardup.NeardupError) as caught:
        neardup.Config(threshold=2)
    copy = pickle.loads(pickle.dumps(caught.value))
    assert type(copy) is neardup.NeardupError and str(copy) == str(caught.value)
