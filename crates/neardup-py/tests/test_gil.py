"""The GIL is released while the library works: a second Python thread makes progress
during a long call. If a call held the GIL, the counting thread could not run at all in
the middle of it."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

import pytest

import neardup
from conftest import corpus


@pytest.fixture(scope="module")
def large() -> list[str]:
    # About a second of work for pairs on 2 cores, once the module is built in release.
    return corpus(200_000, seed=17)


def progress_during(call: Callable[[], Any]) -> tuple[int, float]:
    """Runs `call` in a thread while this one counts; returns how many counts fell in the
    middle half of the call, and the call's duration."""
    stamps: list[float] = []
    done = threading.Event()
    span: list[float] = []

    def work() -> None:
        span.append(time.perf_counter())
        try:
            call()
        finally:
            span.append(time.perf_counter())
            done.set()

    worker = threading.Thread(target=work)
    worker.start()
    i = 0
    while not done.is_set():
        i += 1
        if i % 1000 == 0:
            stamps.append(time.perf_counter())
    worker.join()
    start, end = span
    quarter = (end - start) / 4
    middle = [t for t in stamps if start + quarter <= t <= end - quarter]
    return len(middle), end - start


@pytest.mark.parametrize(
    "name",
    ["pairs", "clusters", "exact_pairs", "band_keys", "index.query"],
)
def test_a_second_thread_runs_during_a_long_call(name: str, large: list[str], tmp_path: Any) -> None:
    calls: dict[str, Callable[[], Any]] = {
        "pairs": lambda: neardup.pairs(large, output="numpy"),
        "clusters": lambda: neardup.clusters(large, output="numpy"),
        "exact_pairs": lambda: neardup.exact_pairs(large, output="numpy"),
        "band_keys": lambda: neardup.band_keys(large + large),
    }
    if name == "index.query":
        index = neardup.Index(tmp_path / "idx")
        index.add(large[:50_000], [str(i) for i in range(50_000)])
        index.commit()
        calls[name] = lambda: index.query(large[:100_000])
    counted, seconds = progress_during(calls[name])
    assert seconds > 0.2, f"{name} took {seconds:.3f} s: too short to tell"
    # With the GIL held the count would be 0; released, Python counts millions a second.
    assert counted >= 50, f"{name}: {counted} thousand counts in the middle of a {seconds:.2f} s call"
