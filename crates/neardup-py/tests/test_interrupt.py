"""Ctrl-C interrupts a long call: each long native call checks for signals between
chunks of its work and raises `KeyboardInterrupt` soon after SIGINT, rather than when the
call would have ended; an interrupted commit leaves the index at the commit before."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import neardup

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")

# A child process makes a call that would run for minutes to hours, says so, and reports
# how it ended. Each U+FDFA becomes 18 characters under NFKC, so a megabyte of them takes
# about half a second to shingle, and a list of one such text held many times is long
# work in little memory.
CHILD = r"""
import sys
import neardup

kind, path = sys.argv[1], sys.argv[2]
text = "\ufdfa" * 333_333
texts = [text] * 10_000
if kind in ("query", "commit"):
    index = neardup.Index(path)
    index.add(["the one text committed first"], ["first"])
    index.commit()
if kind == "clusters":
    call = lambda: neardup.clusters(texts)
elif kind == "exact pairs on 2 threads":
    call = lambda: neardup.pairs(texts, exact=True, threads=2)
elif kind == "minhashes":
    call = lambda: neardup.MinHash.from_texts(texts)
elif kind == "query":
    call = lambda: index.query(texts)
elif kind == "commit":
    # Several hundred documents of 100 kB (a few MB in all): many seconds of work.
    index.add([text[:33_333]] * 600, [f"d{i}" for i in range(600)])
    call = index.commit
elif kind == "commit waiting for another writer":
    index = neardup.Index(path)
    index.add(["a short text to commit"], ["short"])
    call = index.commit
elif kind == "compact waiting for another writer":
    index = neardup.Index(path)
    call = index.compact
elif kind == "lsh inserts":
    # Classic MinHash with 65,536 permutations: milliseconds per set of 2,000 elements.
    lsh = neardup.MinHashLSH(threshold=0.9, num_perm=65536, sketch="classic")
    # Of the table's num_perm: another is refused, as datasketch refuses it.
    minhash = neardup.MinHash(num_perm=65536, sketch="classic")
    minhash.update_batch([str(i) for i in range(2000)])
    call = lambda: lsh.insert_many((i, minhash) for i in range(2000))
print("calling", flush=True)
try:
    call()
except KeyboardInterrupt:
    if kind.startswith("commit"):
        print(f"interrupted: {len(index)} indexed, {index.pending} pending", flush=True)
    elif kind == "lsh inserts":
        print(f"interrupted: {len(lsh)} keys, {len(lsh._table)} sets", flush=True)
    else:
        print("interrupted", flush=True)
    sys.exit(130)
print("finished", flush=True)
"""

# Far more than an interrupted call takes to stop (a second or two), far less than most
# of the calls would take to finish (hours). The commit and the inserts take seconds:
# what they left tells whether they were interrupted.
BOUND = 20


KINDS = ["clusters", "exact pairs on 2 threads", "minhashes", "query", "commit", "lsh inserts"]


def interrupt_child(kind: str, index: Path) -> tuple[str, str]:
    """Runs CHILD's call `kind` on `index`, sends SIGINT once it is in the call, and
    answers what it printed (stdout, stderr) once it exited with KeyboardInterrupt's 130."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, kind, str(index)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "calling\n"
        # Into the call (the bytecodes between the print and the call take microseconds).
        time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=BOUND)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{kind}: still running {BOUND} s after SIGINT")
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 130, err
    return out, err


@pytest.mark.parametrize("kind", KINDS)
def test_ctrl_c_interrupts_a_long_call(kind: str, tmp_path: Path) -> None:
    out, _ = interrupt_child(kind, tmp_path / "idx")
    if kind == "lsh inserts":
        # All or nothing: none was inserted, in the table or among the keys.
        assert out == "interrupted: 0 keys, 0 sets\n"
        return
    if kind != "commit":
        assert out == "interrupted\n"
        return
    # Nothing of the interrupted commit was made: the documents are still staged, and
    # the index, opened again, is at the commit before.
    assert out == "interrupted: 1 indexed, 600 pending\n"
    index = neardup.Index(tmp_path / "idx")
    assert index.ids() == ["first"] and index.generation == 1
    index.add(["a second text"], ["second"])
    assert index.commit()["added"] == 1
    assert sorted(index.ids()) == ["first", "second"]


@pytest.mark.parametrize("kind", ["commit waiting for another writer", "compact waiting for another writer"])
def test_ctrl_c_interrupts_a_wait_for_another_writer(kind: str, tmp_path: Path) -> None:
    index = neardup.Index(tmp_path / "idx")
    index.add(["the one text committed first"], ["first"])
    index.commit()
    # Another writer holds the index (flock(1) takes the lock a writer takes) for longer
    # than the test runs.
    holder = subprocess.Popen(["flock", "-x", "-o", str(tmp_path / "idx" / "LOCK"), "sleep", "120"])
    try:
        time.sleep(0.3)
        out, _ = interrupt_child(kind, tmp_path / "idx")
    finally:
        holder.kill()
        holder.communicate()
    if kind.startswith("commit"):
        assert out == "interrupted: 1 indexed, 1 pending\n"
    else:
        assert out == "interrupted\n"
