"""The same input gives the same output: twice, and on 1 thread or several."""

from __future__ import annotations

import numpy as np
import pytest

import neardup
from conftest import corpus

TEXTS = corpus(20_000, seed=29)


@pytest.mark.parametrize(
    "run",
    [
        lambda t, **kw: neardup.pairs(TEXTS, output="numpy", threads=t, **kw),
        lambda t, **kw: neardup.pairs(TEXTS, threshold=0.6, verify="triage", output="numpy", threads=t, **kw),
        lambda t, **kw: neardup.clusters(TEXTS, threads=t, **kw),
        lambda t, **kw: neardup.clusters(TEXTS, keep="longest", exact=True, threads=t, **kw),
        lambda t, **kw: neardup.dedup(TEXTS, output="numpy", threads=t, **kw),
        lambda t, **kw: neardup.band_keys(TEXTS, threads=t, **kw),
        lambda t, **kw: neardup.shingle_sets(TEXTS, output="numpy", threads=t, **kw),
    ],
    ids=["pairs", "triage", "clusters", "exact-clusters", "dedup", "band_keys", "shingle_sets"],
)
def test_same_output_twice_and_on_any_thread_count(run) -> None:
    first = run(None)
    assert_same(first, run(None))
    assert_same(first, run(1))
    assert_same(first, run(2))
    assert_same(first, run(3))


def assert_same(x: object, y: object) -> None:
    if isinstance(x, dict):
        assert x.keys() == y.keys()
        for k in x:
            assert_same(x[k], y[k])
    elif isinstance(x, tuple):
        for a, b in zip(x, y):
            assert_same(a, b)
    elif isinstance(x, np.ndarray):
        np.testing.assert_array_equal(x, y)
    else:
        assert x == y
