"""Settings take one path: the defaults are the library's constants, and every function that
takes settings as keywords hands each one, by name, to the `Config` it runs with."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable

import pytest

import neardup
from neardup import spark
from neardup._config import Config

RUNS: list[Callable[..., Any]] = [
    neardup.pairs,
    neardup.exact_pairs,
    neardup.clusters,
    neardup.dedup,
    neardup.shingle_sets,
    neardup.band_keys,
    neardup.jaccard,
    neardup.verify,
]
SPARK_RUNS: list[Callable[..., Any]] = [spark.pairs, spark.clusters, spark.dedup]

# A value other than the default for every setting (checked before any validation).
OTHER = {
    "threshold": 0.55,
    "shingle": "word:2",
    "normalize": "basic",
    "num_perm": 64,
    "seed": 7,
    "sketch": "classic",
    "bands": 4,
    "rows": 4,
    "verify": "estimate",
    "keep": "last",
    "max_shingles": 1000,
    "neighbours": False,
    "allow_truncated": True,
    "multiset": True,
    "hamming": 5,
    "measure": "containment",
}
DEFAULTS = {f.name: f.default for f in dataclasses.fields(Config) if f.init}


def test_the_defaults_are_the_librarys() -> None:
    assert neardup.DEFAULT_THRESHOLD == 0.8
    assert neardup.DEFAULT_NUM_PERM == 128
    assert neardup.DEFAULT_SEED == 1
    assert neardup.DEFAULT_SHINGLE == "char:5"
    assert neardup.DEFAULT_HAMMING == 3
    assert neardup.DEFAULT_MAX_SHINGLES > 0
    config = Config()
    assert config.threshold == neardup.DEFAULT_THRESHOLD
    assert config.num_perm == neardup.DEFAULT_NUM_PERM
    assert config.seed == neardup.DEFAULT_SEED
    assert config.shingle == neardup.DEFAULT_SHINGLE
    assert config.hamming == neardup.DEFAULT_HAMMING
    assert config.max_shingles == neardup.DEFAULT_MAX_SHINGLES
    assert set(OTHER) == set(DEFAULTS), "a new setting needs a value in OTHER"


@pytest.mark.parametrize("run", RUNS + SPARK_RUNS, ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_every_keyword_setting_has_the_configs_default(run: Callable[..., Any]) -> None:
    params = inspect.signature(run).parameters
    settings = [name for name in params if name in DEFAULTS]
    assert "threshold" in settings or "shingle" in settings
    for name in settings:
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert params[name].default == DEFAULTS[name], name


class Made(Exception):
    """Raised by a `Config` as it is made, carrying its settings."""

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__()
        self.settings = settings


def made_with(monkeypatch: pytest.MonkeyPatch, call: Callable[[], Any]) -> dict[str, Any]:
    def record(self: Config) -> None:
        raise Made(self._settings())

    monkeypatch.setattr(Config, "__post_init__", record)
    with pytest.raises(Made) as made:
        call()
    return made.value.settings


@pytest.mark.parametrize("run", RUNS + SPARK_RUNS, ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_every_keyword_setting_reaches_the_config(
    monkeypatch: pytest.MonkeyPatch, run: Callable[..., Any]
) -> None:
    params = inspect.signature(run).parameters
    positional = [None] * sum(
        1 for p in params.values() if p.default is inspect.Parameter.empty
    )
    on_spark = run in SPARK_RUNS
    # Spark refuses containment before it makes a Config, and never looks beyond buckets.
    settings = [n for n in params if n in DEFAULTS and not (on_spark and n == "measure")]
    given = {name: OTHER[name] for name in settings}
    got = made_with(monkeypatch, lambda: run(*positional, **given))
    assert {name: got[name] for name in settings} == given
    untouched = {n: v for n, v in got.items() if n not in settings}
    expected = {n: DEFAULTS[n] for n in untouched}
    if on_spark:
        expected["neighbours"] = False
    assert untouched == expected
