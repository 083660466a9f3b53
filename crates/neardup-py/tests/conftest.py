"""Shared helpers of the Python package's tests: the tests-as-data cases, the `neardup`
command to compare with, and generated corpora."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - CI runs 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[3]
CASES = ROOT / "testdata" / "cases"


def load_cases() -> list[tuple[str, dict[str, Any]]]:
    """Every case of testdata/cases, by name, with its defaults filled in as
    crates/neardup-testsuite/src/case.rs fills them."""
    out = []
    for path in sorted(CASES.glob("*.toml")):
        case = tomllib.loads(path.read_text(encoding="utf-8"))
        case.setdefault("shingle", "char:5")
        case.setdefault("normalize", "nfkc")
        case.setdefault("num_perm", 128)
        case.setdefault("multiset", False)
        case.setdefault("lsh_may_miss", False)
        case.setdefault("engines", None)
        out.append((path.stem, case))
    return out


def cli_path() -> Path | None:
    """The `neardup` binary: $NEARDUP_BIN, else the newest one cargo built."""
    given = os.environ.get("NEARDUP_BIN")
    if given:
        return Path(given)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    built = [p for p in (target / "debug" / "neardup", target / "release" / "neardup") if p.exists()]
    found = shutil.which("neardup")
    if not built and found:
        built = [Path(found)]
    return max(built, key=lambda p: p.stat().st_mtime) if built else None


class Cli:
    """Runs the `neardup` command on a list of texts written as JSONL with ids 0..n-1."""

    def __init__(self, path: Path, tmp: Path) -> None:
        self.path = path
        self.tmp = tmp

    def _input(self, texts: list[str]) -> Path:
        path = self.tmp / "input.jsonl"
        with path.open("w", encoding="utf-8") as f:
            for i, t in enumerate(texts):
                f.write(json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n")
        return path

    def run(self, command: str, texts: list[str], *options: str) -> list[dict[str, Any]]:
        """The JSON lines a command writes."""
        args = [str(self.path), command, str(self._input(texts)), "-q", *options]
        if command == "dedup":
            out = self.tmp / "dedup.jsonl"
            args += ["-o", str(out)]
            subprocess.run(args, check=True)
            text = out.read_text(encoding="utf-8")
        else:
            text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
        return [json.loads(line) for line in text.splitlines() if line]


@pytest.fixture(scope="session")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    path = cli_path()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("no neardup binary to compare with: build it or set NEARDUP_BIN")
        pytest.skip("no neardup binary to compare with (cargo build -p neardup-cli)")
    return Cli(path, tmp_path_factory.mktemp("cli"))


def _words(count: int) -> list[str]:
    rng = random.Random(0)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randrange(3, 10))) for _ in range(count)]


WORDS = _words(5000)


def corpus(n: int, seed: int = 7, words: int = 24) -> list[str]:
    """`n` texts in families of near-duplicates: an original, edited copies (a word or two
    replaced), exact copies, and some empty texts."""
    rng = random.Random(seed)
    texts: list[str] = []
    while len(texts) < n:
        base = [rng.choice(WORDS) for _ in range(words)]
        texts.append(" ".join(base))
        for _ in range(rng.randrange(4)):
            edited = list(base)
            for _ in range(rng.randrange(1, 3)):
                edited[rng.randrange(len(edited))] = rng.choice(WORDS)
            texts.append(" ".join(edited))
        if rng.random() < 0.2:
            texts.append(texts[-1])
        if rng.random() < 0.02:
            texts.append("")
    return texts[:n]
