"""`MinHashLSH`, shaped like datasketch's: `insert`, `query`, `remove`, with answers
verified by exact Jaccard unless asked otherwise."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Hashable, Iterator, Optional

from ._config import Config
from ._neardup import DEFAULT_NUM_PERM, DEFAULT_SEED, MinHash, _LshTable


class _SharedLock:
    """Many readers or one writer, writers first: queries of threads sharing a table run
    side by side (the native calls release the GIL), while a change waits for them and
    holds off new ones, so the keys a query maps its slots to are those of the table it
    read. Not reentrant."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    # Each count is undone in a `finally` entered before it is made, so a
    # KeyboardInterrupt at any point leaves no reader or writer behind.

    @contextmanager
    def read(self) -> Iterator[None]:
        counted = False
        try:
            with self._cond:
                while self._writing or self._writers_waiting:
                    self._cond.wait()
                self._readers += 1
                counted = True
            yield
        finally:
            if counted:
                with self._cond:
                    self._readers -= 1
                    if not self._readers:
                        self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        writing = False
        try:
            with self._cond:
                self._writers_waiting += 1
                try:
                    while self._writing or self._readers:
                        self._cond.wait()
                finally:
                    self._writers_waiting -= 1
                    # Readers held off by this writer may go on if it gives up.
                    self._cond.notify_all()
                self._writing = writing = True
            yield
        finally:
            if writing:
                with self._cond:
                    self._writing = False
                    self._cond.notify_all()


class MinHashLSH:
    """An in-memory LSH index of `MinHash` sets, under the names datasketch uses.

    ``MinHashLSH(threshold=0.9, num_perm=128)`` finds, for a query MinHash, the inserted
    keys whose sets have Jaccard similarity >= threshold. Candidates come from LSH buckets
    with neardup's band plan (chosen for high recall at the threshold, or ``params=(b, r)``)
    and are verified by exact Jaccard on the sets the MinHashes keep, so no answer is below
    the threshold (datasketch returns the unverified candidates: ``verify=False`` does
    that here). Inserting ``MinHash.from_text`` sets gives the candidates a `neardup.pairs`
    run finds in its buckets.

    Args:
        threshold: Jaccard threshold, 0.01..=1 (datasketch's default, 0.9).
        num_perm: signature length K of the band plan.
        params: ``(bands, rows)`` instead of the plan chosen from the threshold.
        seed: seed of the sketches (MinHashes of any seed can be inserted: the table
            sketches their sets itself).
        sketch: ``"oph"`` or ``"classic"``, as in `Config`.
        verify: verify answers by exact Jaccard (default) or return the raw candidates.

    The table and its keys pickle (sets included). Threads may share a table: each
    change is atomic, and a query answers from the table as it was between two changes.
    """

    def __init__(
        self,
        threshold: float = 0.9,
        num_perm: int = DEFAULT_NUM_PERM,
        params: Optional[tuple[int, int]] = None,
        *,
        seed: int = DEFAULT_SEED,
        sketch: str = "oph",
        verify: bool = True,
    ) -> None:
        bands, rows = params if params is not None else (None, None)
        self._config = Config(
            threshold=threshold, num_perm=num_perm, seed=seed, sketch=sketch, bands=bands, rows=rows
        )
        self.verify = verify
        self._table = _LshTable(self._config._native)
        self._slots: dict[Hashable, int] = {}
        self._keys: dict[int, Hashable] = {}
        # Guards the key maps and the table together: they change as one.
        self._lock = _SharedLock()

    @property
    def threshold(self) -> float:
        """The Jaccard threshold."""
        return self._config.threshold

    @property
    def h(self) -> int:
        """Signature length (datasketch's name)."""
        return self._config.num_perm

    @property
    def b(self) -> int:
        """Bands of the plan."""
        return self._config.plan[0]

    @property
    def r(self) -> int:
        """Rows per band."""
        return self._config.plan[1]

    def insert(self, key: Hashable, minhash: MinHash, check_duplication: bool = True) -> None:
        """Inserts `minhash` under `key`. A key already present is refused (``ValueError``)
        unless ``check_duplication=False``, which replaces its set."""
        if not isinstance(minhash, MinHash):
            raise TypeError(f"insert takes a neardup.MinHash, not {type(minhash).__name__}")
        with self._lock.write():
            if key in self._slots:
                if check_duplication:
                    raise ValueError("The given key already exists")
                self._remove(key)
            slot = self._table.insert(minhash)
            try:
                self._slots[key] = slot
                self._keys[slot] = key
            except BaseException:
                # A KeyboardInterrupt between the native insert and the maps: undone, so
                # no set stays in the table without its key.
                self._forget([key], [slot])
                raise

    def insert_many(self, items: Any) -> None:
        """Inserts ``(key, minhash)`` pairs at once, sketched in parallel with the GIL
        released; duplicate keys are refused before anything is inserted."""
        items = list(items)
        keys = [k for k, _ in items]
        with self._lock.write():
            seen: set[Hashable] = set()
            for k in keys:
                if k in self._slots or k in seen:
                    raise ValueError("The given key already exists")
                seen.add(k)
            slots = self._table.insert_many([m for _, m in items])
            try:
                self._slots.update(zip(keys, slots))
                self._keys.update(zip(slots, keys))
            except BaseException:
                # Ctrl-C pressed as the native insert finished is raised here: the insert
                # is undone, so an interrupted insert_many inserts nothing.
                self._forget(keys, slots)
                raise

    def _forget(self, keys: list[Hashable], slots: list[int]) -> None:
        """Takes sets just inserted out of the table and the maps (the write lock held)."""
        for key, slot in zip(keys, slots):
            if self._slots.get(key) == slot:
                del self._slots[key]
            self._keys.pop(slot, None)
            self._table.remove(slot)

    def insertion_session(self, buffer_size: int = 50000) -> _InsertionSession:
        """A context manager that buffers inserts and adds them in batches (datasketch's
        ``insertion_session``)."""
        return _InsertionSession(self, buffer_size)

    def query(self, minhash: MinHash) -> list[Any]:
        """The keys of the inserted sets similar to `minhash`: verified, most similar
        first (ties in insertion order); with ``verify=False`` the raw candidates in
        insertion order."""
        with self._lock.read():
            slots, _ = self._table.query(minhash, self.verify)
            return [self._keys[s] for s in slots]

    def query_with_similarity(self, minhash: MinHash) -> list[tuple[Any, float]]:
        """`query` with each key's exact Jaccard (NaN when not verified)."""
        with self._lock.read():
            slots, sims = self._table.query(minhash, self.verify)
            return [(self._keys[s], j) for s, j in zip(slots, sims)]

    def remove(self, key: Hashable) -> None:
        """Removes a key (``ValueError`` if it is not there, as in datasketch)."""
        with self._lock.write():
            self._remove(key)

    def _remove(self, key: Hashable) -> None:
        """`remove`, the lock held for writing."""
        slot = self._slots.get(key)
        if slot is None:
            raise ValueError("The given key does not exist")
        self._table.remove(slot)
        del self._slots[key]
        del self._keys[slot]

    def _discard(self, key: Hashable) -> None:
        """Removes a key if it is there."""
        with self._lock.write():
            if key in self._slots:
                self._remove(key)

    def keys(self) -> list[Any]:
        """The keys, in insertion order."""
        with self._lock.read():
            return list(self._slots)

    def is_empty(self) -> bool:
        with self._lock.read():
            return not self._slots

    def __contains__(self, key: Hashable) -> bool:
        with self._lock.read():
            return key in self._slots

    def __len__(self) -> int:
        with self._lock.read():
            return len(self._slots)

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self.keys())

    def __repr__(self) -> str:
        return (
            f"MinHashLSH(threshold={self.threshold}, num_perm={self.h}, params=({self.b}, "
            f"{self.r}), keys={len(self)}, verify={self.verify})"
        )

    def __getstate__(self) -> dict[str, Any]:
        with self._lock.read():
            return {
                "config": self._config,
                "verify": self.verify,
                "slots": dict(self._slots),
                "table": self._table.export(),
            }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._config = state["config"]
        self.verify = state["verify"]
        self._slots = state["slots"]
        self._keys = {s: k for k, s in self._slots.items()}
        self._table = _LshTable(self._config._native)
        self._table.restore(state["table"])
        self._lock = _SharedLock()


class _InsertionSession:
    """Buffers `insert` calls and adds them in batches. A session belongs to the thread
    that opened it; the table it fills may be shared."""

    def __init__(self, lsh: MinHashLSH, buffer_size: int) -> None:
        self._lsh = lsh
        self._size = max(1, buffer_size)
        self._buffer: dict[Hashable, MinHash] = {}

    def insert(self, key: Hashable, minhash: MinHash, check_duplication: bool = True) -> None:
        if key in self._buffer or key in self._lsh:
            if check_duplication:
                raise ValueError("The given key already exists")
            self._buffer.pop(key, None)
            self._lsh._discard(key)
        self._buffer[key] = minhash
        if len(self._buffer) >= self._size:
            self.flush()

    def flush(self) -> None:
        buffered, self._buffer = self._buffer, {}
        self._lsh.insert_many(buffered.items())

    def __enter__(self) -> _InsertionSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is None:
            self.flush()
