"""Marks the tests listed in skips.py skipped, with their reasons; fails the run on a
listed test that no longer exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from .skips import SKIPS

HERE = Path(__file__).resolve().parent


def local_id(item: pytest.Item) -> str | None:
    """The item's node id relative to this folder, or None for a test elsewhere."""
    try:
        rel = item.path.resolve().relative_to(HERE).as_posix()
    except ValueError:
        return None
    return rel + "::" + item.nodeid.split("::", 1)[1]


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect: every test is seen
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seen = set()
    files = set()
    for item in items:
        node = local_id(item)
        if node is None:
            continue
        seen.add(node)
        files.add(node.split("::", 1)[0])
        if node in SKIPS:
            item.add_marker(pytest.mark.skip(reason=SKIPS[node]))
    # A listed test of a collected file, or of a file that is gone, must exist (unless
    # the run names single tests).
    if any("::" in arg for arg in config.args):
        return
    stale = [
        node
        for node in SKIPS
        if node not in seen
        and (node.split("::", 1)[0] in files or not (HERE / node.split("::", 1)[0]).exists())
    ]
    if stale:
        raise pytest.UsageError(
            "tests/datasketch/skips.py lists tests that do not exist: " + ", ".join(sorted(stale))
        )
