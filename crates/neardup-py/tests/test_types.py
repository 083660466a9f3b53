"""The package is typed: mypy accepts it, its stubs describe the extension as it is, and
the signatures Python shows carry the real defaults."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import neardup


def mypy(*args: str) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy")
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, cwd="/"
    )


def test_mypy_accepts_the_package() -> None:
    run = mypy("mypy", "--strict", "-p", "neardup", "--no-incremental")
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_stubs_match_the_extension() -> None:
    run = mypy("mypy.stubtest", "neardup._neardup")
    # The one remaining remark is about the module's `__all__`, which PyO3 fills itself.
    problems = [l for l in run.stdout.splitlines() if l.startswith("error:") and "__all__" not in l]
    assert not problems, run.stdout


def test_signatures_show_the_defaults() -> None:
    params = inspect.signature(neardup.MinHash.from_text).parameters
    assert params["max_shingles"].default == neardup.DEFAULT_MAX_SHINGLES
    assert params["shingle"].default == "char:5"
    assert str(inspect.signature(neardup.MinHash)) == (
        "(num_perm=128, seed=1, gpu_mode='disable', hashfunc=None, hashobj=None, "
        "hashvalues=None, permutations=None, scheme=None, *, sketch=None)"
    )
    assert inspect.signature(neardup.pairs).parameters["threshold"].default == 0.8
