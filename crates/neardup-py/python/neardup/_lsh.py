"""`MinHashLSH`, datasketch's public API over neardup's table: answers verified by exact
Jaccard when both sets are known (unless asked otherwise), else the bands' candidates."""

from __future__ import annotations

import threading
from contextlib import ExitStack, contextmanager
from typing import Any, Callable, ContextManager, Hashable, Iterable, Iterator, Optional

import numpy as np

from ._config import Config
from ._neardup import DEFAULT_NUM_PERM, DEFAULT_SEED, MinHash, _LshTable


class _SharedLock:
    """Many readers or one writer, writers first: queries of threads sharing a table run
    side by side (the native calls release the GIL), while a change waits for them and
    holds off new ones, so the keys a query maps its slots to are those of the table it
    read. Not reentrant."""

    def __init__(self) -> None:
        # The condition's own lock, taken directly where no wait follows: a C call, where
        # the condition's `with` is a Python one.
        self._mutex = threading.Lock()
        self._cond = threading.Condition(self._mutex)
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0
        self._reading = _Reading(self)

    # Each count is undone in a `finally` entered before it is made, so a
    # KeyboardInterrupt at any point leaves no reader or writer behind.

    def read(self) -> _Reading:
        """A context manager holding the lock for reading (one object, reused: a query
        takes microseconds, a generator-based manager would double that)."""
        return self._reading

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


class _Reading:
    """`_SharedLock.read`'s context manager."""

    def __init__(self, lock: _SharedLock) -> None:
        self._lock = lock

    def __enter__(self) -> None:
        lock = self._lock
        counted = False
        try:
            with lock._mutex:
                while lock._writing or lock._writers_waiting:
                    lock._cond.wait()
                lock._readers += 1
                counted = True
        except BaseException:
            if counted:
                self.__exit__()
            raise

    def __exit__(self, *exc: Any) -> None:
        lock = self._lock
        with lock._mutex:
            lock._readers -= 1
            # Only writers wait for readers to leave.
            if not lock._readers and lock._writers_waiting:
                lock._cond.notify_all()


_OWN_SKETCHES = ("oph", "classic")

# Gauss-Legendre nodes for the band-plan integrals: exact for the polynomials of degree
# up to 2·nodes−1 that a plan's collision curve is (b·r ≤ num_perm), close beyond.
_NODES = np.polynomial.legendre.leggauss(128)


def _areas(f: Callable[[Any], Any], lo: float, hi: float) -> Any:
    """∫ f over [lo, hi] for each row of plans `f` is evaluated for."""
    x, w = _NODES
    s = (hi - lo) / 2 * (x + 1) + lo
    return (hi - lo) / 2 * (f(s) @ w)


def optimal_param(
    threshold: float, num_perm: int, false_positive_weight: float, false_negative_weight: float
) -> tuple[int, int]:
    """datasketch's band plan: the (b, r) with b·r ≤ num_perm minimising the weighted sum
    of the areas under the collision curve below the threshold (false positives) and above
    it (false negatives); the first such plan in (b, r) order on a tie."""
    plans = np.array(
        [(b, r) for b in range(1, num_perm + 1) for r in range(1, num_perm // b + 1)], dtype=float
    )
    best, best_error = (0, 0), np.inf
    for chunk in np.array_split(plans, max(1, len(plans) // 4096)):
        b, r = chunk[:, :1], chunk[:, 1:]

        def collide(s: Any, b: Any = b, r: Any = r) -> Any:
            return 1 - (1 - s[None, :] ** r) ** b

        def miss(s: Any) -> Any:
            return 1 - collide(s)

        fp = _areas(collide, 0.0, threshold)
        fn = _areas(miss, threshold, 1.0)
        error = fp * false_positive_weight + fn * false_negative_weight
        i = int(np.argmin(error))
        if error[i] < best_error:
            best_error, best = error[i], (int(chunk[i, 0]), int(chunk[i, 1]))
    return best


def _own_sketch(minhash: Any) -> bool:
    """Whether a MinHash is a neardup MinHash of neardup's own sketch, whose set a table
    sketches itself rather than filing it by its hashvalues."""
    return isinstance(minhash, MinHash) and getattr(minhash, "sketch", None) in _OWN_SKETCHES


def _hashvalues(minhash: Any) -> tuple[Any, int]:
    """A sketch's hashvalues as one row of uint64, and the values per position (1, or 2
    for a weighted MinHash's ``(k, 2)`` array)."""
    try:
        values = np.ascontiguousarray(minhash.hashvalues)
    except AttributeError:
        raise TypeError(
            f"MinHashLSH takes a MinHash (or a sketch with hashvalues), not {type(minhash).__name__}"
        ) from None
    if values.dtype.itemsize != 8 or values.dtype.kind not in "iu":
        values = values.astype(np.uint64)
    flat = values.view(np.uint64).reshape(-1)
    return flat, max(1, flat.size // max(1, len(minhash)))


def _refuse_storage(storage_config: Optional[dict[str, Any]]) -> None:
    kind = (storage_config or {"type": "dict"}).get("type", "dict")
    if kind != "dict":
        raise ValueError(
            f"storage_config type {kind!r} is not available: neardup.MinHashLSH lives in "
            "memory (it pickles, and merge() joins tables). The on-disk index, durable and "
            "shared by processes, is neardup.Index(path): it indexes texts, not MinHashes"
        )


def _check_arguments(
    storage_config: Optional[dict[str, Any]],
    threshold: float,
    num_perm: int,
    weights: Optional[tuple[float, float]],
) -> None:
    """The checks datasketch's LSH indexes make of their common arguments."""
    _refuse_storage(storage_config)
    if not 0.0 <= threshold <= 1.0:
        raise ValueError("threshold must be in [0.0, 1.0]")
    if num_perm < 2:
        raise ValueError("Too few permutation functions")
    if weights is not None:
        if any(w < 0.0 or w > 1.0 for w in weights):
            raise ValueError("Weight must be in [0.0, 1.0]")
        if sum(weights) != 1.0:
            raise ValueError("Weights must sum to 1.0")


class _KeysView:
    """``lsh.keys`` as datasketch code uses it (``key in lsh.keys``, ``lsh.keys[key]``: the
    key's bucket per band, iteration, ``len``) and as neardup's did (``lsh.keys()``: the
    keys in insertion order)."""

    def __init__(self, lsh: MinHashLSH) -> None:
        self._lsh = lsh

    def __call__(self) -> list[Any]:
        with self._lsh._lock.read():
            return list(self._lsh._slots)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._lsh

    def __getitem__(self, key: Hashable) -> list[bytes]:
        with self._lsh._lock.read():
            slot = self._lsh._slots[key]
            return [k.to_bytes(8, "big") for k in self._lsh._table.band_keys(slot)]

    def get(self, key: Hashable) -> list[bytes]:
        """The key's buckets, none for a missing key (datasketch's storage ``get``)."""
        try:
            return self[key]
        except KeyError:
            return []

    def getmany(self, *keys: Hashable) -> list[list[bytes]]:
        return [self.get(k) for k in keys]

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self())

    def __len__(self) -> int:
        return len(self._lsh)

    def __repr__(self) -> str:
        return f"<keys of {len(self)} sets>"


class MinHashLSH:
    """An in-memory LSH index of MinHash sketches with datasketch's API.

    ``MinHashLSH(threshold=0.9, num_perm=128)`` finds, for a query MinHash, the inserted
    keys whose sets have Jaccard similarity >= threshold. A neardup `MinHash` of neardup's
    own sketch (``sketch="oph"``, `MinHash.from_text`) is sketched by the table from its
    set, as `neardup.pairs` sketches texts; any other sketch (datasketch's, one rebuilt
    from stored hashvalues, a weighted MinHash) is filed by its hashvalues, ``b`` bands of
    ``r`` values, as datasketch files it. Answers are verified by exact Jaccard when both
    sets are known, so none is below the threshold; sketches without their sets give the
    bands' candidates, as datasketch does (``verify=False`` always does).

    Args:
        threshold: Jaccard threshold (datasketch's default, 0.9).
        num_perm: signature length K (for a weighted MinHash its sample size).
        weights: ``(false_positive_weight, false_negative_weight)``: the band plan is then
            datasketch's, minimising their weighted sum; without it neardup's plan, chosen
            for recall at the threshold (answers are verified).
        params: ``(bands, rows)`` instead of either plan.
        storage_config: ``{"type": "dict"}`` (memory) only; Redis and Cassandra are
            refused, naming `neardup.Index`, the on-disk index.
        prepickle, hashfunc: taken for datasketch's signature; keys are kept as they are
            and each band is hashed to 64 bits already, so neither changes anything.
        seed: seed of the sketches the table makes of neardup MinHashes' sets.
        sketch: ``"oph"`` or ``"classic"``, as in `Config`.
        verify: verify answers by exact Jaccard (default) or return the raw candidates.

    The table and its keys pickle (sets included). Threads may share a table: each
    change is atomic, and a query answers from the table as it was between two changes.
    """

    def __init__(
        self,
        threshold: float = 0.9,
        num_perm: int = DEFAULT_NUM_PERM,
        weights: Optional[tuple[float, float]] = None,
        params: Optional[tuple[int, int]] = None,
        storage_config: Optional[dict[str, Any]] = None,
        prepickle: Optional[bool] = None,
        hashfunc: Optional[Callable[[bytes], bytes]] = None,
        *,
        seed: int = DEFAULT_SEED,
        sketch: str = "oph",
        verify: bool = True,
    ) -> None:
        _check_arguments(storage_config, threshold, num_perm, weights)
        if params is not None:
            bands, rows = params
            if bands * rows > num_perm:
                raise ValueError(
                    f"The product of b and r in params is {bands} * {rows} = {bands * rows} -- "
                    f"it must be less than num_perm {num_perm}. Did you forget to specify num_perm?"
                )
        elif weights is not None:
            bands, rows = optimal_param(threshold, num_perm, *weights)
        if (params is not None or weights is not None) and bands < 2:
            raise ValueError("The number of bands are too small (b < 2)")
        chosen = params is not None or weights is not None
        self._config = Config(
            threshold=threshold,
            num_perm=num_perm,
            seed=seed,
            sketch=sketch,
            bands=bands if chosen else None,
            rows=rows if chosen else None,
        )
        self.verify = verify
        self.prepickle = bool(prepickle)
        self.hashfunc = hashfunc
        self._table = _LshTable(self._config._native)
        self._slots: dict[Hashable, int] = {}
        self._keys: dict[int, Hashable] = {}
        self._query_buffer: list[Any] = []
        # Every sketch filed by its hashvalues (LSH Ensemble's tables look in some bands).
        self._by_hashvalues = False
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

    @property
    def hashranges(self) -> list[tuple[int, int]]:
        """The positions of each band, as datasketch lists them."""
        return [(i * self.r, (i + 1) * self.r) for i in range(self.b)]

    @property
    def keys(self) -> _KeysView:
        """The keys: ``key in lsh.keys``, ``lsh.keys[key]`` (its bucket per band),
        ``lsh.keys()`` (a list, in insertion order)."""
        return _KeysView(self)

    @property
    def hashtables(self) -> list[dict[bytes, list[Any]]]:
        """Each band's buckets, ``{bucket: [keys]}``, as datasketch's in-memory tables (a
        copy made on each call: bucket names are 8-byte hashes of the band's values)."""
        tables: list[dict[bytes, list[Any]]] = [{} for _ in range(self.b)]
        with self._lock.read():
            for key, slot in self._slots.items():
                for table, k in zip(tables, self._table.band_keys(slot)):
                    table.setdefault(k.to_bytes(8, "big"), []).append(key)
        return tables

    def _sketched(self, minhash: Any) -> bool:
        return not self._by_hashvalues and _own_sketch(minhash)

    def _check(self, minhash: Any) -> None:
        if len(minhash) != self.h:
            raise ValueError("Expecting minhash with length %d, got %d" % (self.h, len(minhash)))

    def _put(self, minhashes: list[Any]) -> list[int]:
        """Files sketches in the table (the write lock held); returns their slots, in order."""
        slots: list[int] = [0] * len(minhashes)
        own = [i for i, m in enumerate(minhashes) if self._sketched(m)]
        given = [i for i, m in enumerate(minhashes) if not self._sketched(m)]
        if own:
            for i, s in zip(own, self._table.insert_many([minhashes[i] for i in own])):
                slots[i] = s
        if given:
            carried = [minhashes[i] if isinstance(minhashes[i], MinHash) else None for i in given]
            values, width = None, 1
            if not all(carried):
                # Sketches of other libraries: their hashvalues, read here.
                rows = [_hashvalues(minhashes[i]) for i in given]
                values, width = np.concatenate([v for v, _ in rows]), rows[0][1]
            for i, s in zip(given, self._table.insert_given(values, width, carried)):
                slots[i] = s
        return slots

    def insert(self, key: Hashable, minhash: Any, check_duplication: bool = True) -> None:
        """Inserts `minhash` (a MinHash, or any sketch with ``hashvalues`` of length
        ``num_perm``) under `key`. A key already present is refused (``ValueError``) unless
        ``check_duplication=False``, which replaces its set."""
        self._check(minhash)
        with self._lock.write():
            if key in self._slots:
                if check_duplication:
                    raise ValueError("The given key already exists")
                self._remove(key)
            (slot,) = self._put([minhash])
            try:
                self._slots[key] = slot
                self._keys[slot] = key
            except BaseException:
                # A KeyboardInterrupt between the native insert and the maps: undone, so
                # no set stays in the table without its key.
                self._forget([key], [slot])
                raise

    def insert_many(self, items: Iterable[tuple[Hashable, Any]]) -> None:
        """Inserts ``(key, minhash)`` pairs at once (neardup sets sketched in parallel with
        the GIL released); duplicate keys are refused before anything is inserted."""
        items = list(items)
        keys = [k for k, _ in items]
        for _, m in items:
            self._check(m)
        with self._lock.write():
            seen: set[Hashable] = set()
            for k in keys:
                if k in self._slots or k in seen:
                    raise ValueError("The given key already exists")
                seen.add(k)
            slots = self._put([m for _, m in items])
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

    def deletion_session(self, buffer_size: int = 50000) -> _DeletionSession:
        """A context manager for removals (datasketch's ``deletion_session``): each
        ``session.remove(key)`` is done at once, a missing key a ``ValueError``."""
        return _DeletionSession(self)

    def merge(self, other: MinHashLSH, check_overlap: bool = False) -> None:
        """Makes this table the union of both (datasketch's ``merge``). Tables of another
        type, ``num_perm`` or band plan are refused; with ``check_overlap`` so are tables
        sharing a key, else a shared key takes the other table's set."""
        if type(other) is not type(self):
            raise ValueError(f"Cannot merge type MinHashLSH and type {type(other).__name__}.")
        if (self.h, self.b, self.r) != (other.h, other.b, other.r):
            raise ValueError("Cannot merge MinHashLSH with different initialization parameters.")
        if other is self:
            if check_overlap and self._slots:
                raise ValueError("The keys are overlapping, duplicate key exists.")
            return
        with ExitStack() as held:
            # Both locks in one order whatever the direction, so two tables merged into
            # each other at once cannot wait for each other.
            locks: list[tuple[int, ContextManager[None]]] = [
                (id(other), other._lock.read()),
                (id(self), self._lock.write()),
            ]
            for _, lock in sorted(locks, key=lambda pair: pair[0]):
                held.enter_context(lock)
            theirs = dict(other._slots)
            if check_overlap and not theirs.keys().isdisjoint(self._slots):
                raise ValueError("The keys are overlapping, duplicate key exists.")
            for key in theirs:
                if key in self._slots:
                    self._remove(key)
            slots = self._table.copy_from(other._table, list(theirs.values()))
            self._slots.update(zip(theirs, slots))
            self._keys.update(zip(slots, theirs))

    def _answer(
        self, minhash: Any, bands: Optional[int] = None, verify: Optional[bool] = None
    ) -> tuple[list[int], list[float]]:
        """The slots answering `minhash` and their similarities, in the first `bands`
        bands (the read lock held)."""
        self._check(minhash)
        verify = self.verify if verify is None else verify
        if self._sketched(minhash) and bands is None:
            return self._table.query(minhash, verify)
        if isinstance(minhash, MinHash):
            return self._table.query_given(None, 1, minhash, verify, bands)
        values, width = _hashvalues(minhash)
        return self._table.query_given(values, width, None, verify, bands)

    def query(self, minhash: Any) -> list[Any]:
        """The keys of the inserted sets similar to `minhash`: verified ones most similar
        first (ties in insertion order), then unverified candidates in insertion order."""
        with self._lock.read():
            slots, _ = self._answer(minhash)
            return [self._keys[s] for s in slots]

    def query_with_similarity(self, minhash: Any) -> list[tuple[Any, float]]:
        """`query` with each key's exact Jaccard (NaN when not verified)."""
        with self._lock.read():
            slots, sims = self._answer(minhash)
            return [(self._keys[s], j) for s, j in zip(slots, sims)]

    def _query_b(self, minhash: Any, b: int) -> set[Any]:
        """The unverified candidates of the first `b` bands (datasketch's private
        ``_query_b``, which its LSH Ensemble uses)."""
        if b > self.b:
            raise ValueError("b must be less or equal to the number of hash tables")
        with self._lock.read():
            slots, _ = self._answer(minhash, b, verify=False)
            return {self._keys[s] for s in slots}

    def add_to_query_buffer(self, minhash: Any) -> None:
        """Buffers a query for `collect_query_buffer`."""
        self._check(minhash)
        self._query_buffer.append(minhash)

    def collect_query_buffer(self) -> list[Any]:
        """The keys answering every buffered query (their intersection, as datasketch's),
        and empties the buffer."""
        buffered, self._query_buffer = self._query_buffer, []
        found = [set(self.query(m)) for m in buffered]
        return list(set.intersection(*found)) if found else []

    def get_counts(self) -> list[dict[bytes, int]]:
        """Per band, the number of keys in each bucket."""
        return [{h: len(ks) for h, ks in t.items()} for t in self.hashtables]

    def get_subset_counts(self, *keys: Hashable) -> list[dict[bytes, int]]:
        """`get_counts` over the given keys only (a missing key counts nowhere, as in
        datasketch)."""
        tables: list[dict[bytes, int]] = [{} for _ in range(self.b)]
        for buckets in self.keys.getmany(*set(keys)):
            for table, h in zip(tables, buckets):
                table[h] = table.get(h, 0) + 1
        return tables

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
                "prepickle": self.prepickle,
                "hashfunc": self.hashfunc,
                "by_hashvalues": self._by_hashvalues,
                "slots": dict(self._slots),
                "table": self._table.export(),
            }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._config = state["config"]
        self.verify = state["verify"]
        self.prepickle = state.get("prepickle", False)
        self.hashfunc = state.get("hashfunc")
        self._by_hashvalues = state.get("by_hashvalues", False)
        self._slots = state["slots"]
        self._keys = {s: k for k, s in self._slots.items()}
        self._query_buffer = []
        self._table = _LshTable(self._config._native)
        self._table.restore(state["table"])
        self._lock = _SharedLock()


class _InsertionSession:
    """Buffers `insert` calls and adds them in batches. A session belongs to the thread
    that opened it; the table it fills may be shared."""

    def __init__(self, lsh: MinHashLSH, buffer_size: int) -> None:
        self._lsh = lsh
        self._size = max(1, buffer_size)
        self._buffer: dict[Hashable, Any] = {}

    def insert(self, key: Hashable, minhash: Any, check_duplication: bool = True) -> None:
        self._lsh._check(minhash)
        # Read without the lock: insert_many checks again under it.
        if key in self._buffer or key in self._lsh._slots:
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

    def close(self) -> None:
        self.flush()

    def __enter__(self) -> _InsertionSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is None:
            self.flush()


class _DeletionSession:
    """datasketch's deletion session: removals are done as they come (a table in memory
    gains nothing by holding them)."""

    def __init__(self, lsh: MinHashLSH) -> None:
        self._lsh = lsh

    def remove(self, key: Hashable) -> None:
        self._lsh.remove(key)

    def close(self) -> None:
        pass

    def __enter__(self) -> _DeletionSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        pass
