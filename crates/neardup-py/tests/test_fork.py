"""A process forked after neardup ran (multiprocessing's `fork` start method, the default
on Linux before Python 3.14) inherits the thread pools but not their threads; neardup
must still work there rather than wait forever."""

from __future__ import annotations

import multiprocessing
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import neardup
from conftest import corpus

TEXTS = corpus(3000, seed=31)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork is a Unix start method")


def _everything(path: str) -> list[Any]:
    lsh = neardup.MinHashLSH(threshold=0.8)
    minhashes = neardup.MinHash.from_texts(TEXTS[:200])
    lsh.insert_many(enumerate(minhashes))
    index = neardup.Index(path)
    index.add(TEXTS[:100], [str(i) for i in range(100)])
    index.commit()
    return [
        neardup.pairs(TEXTS),
        neardup.pairs(TEXTS, threads=2),
        neardup.clusters(TEXTS, exact=True),
        neardup.band_keys(TEXTS).tolist(),
        [lsh.query(m) for m in minhashes],
        index.query(TEXTS[:100]),
    ]


def test_work_in_a_forked_process(tmp_path: Path) -> None:
    here = _everything(str(tmp_path / "parent"))  # starts the pools, global and of 2
    with warnings.catch_warnings():
        # Python 3.12+ warns that forking a process with threads may deadlock: the point.
        warnings.simplefilter("ignore", DeprecationWarning)
        with multiprocessing.get_context("fork").Pool(1) as pool:
            forked = pool.apply_async(_everything, (str(tmp_path / "child"),))
            assert forked.get(timeout=120) == here
