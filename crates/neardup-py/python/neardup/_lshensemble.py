"""`MinHashLSHEnsemble`, datasketch's containment index (Zhu et al., VLDB 2016): the sets
are split by size into partitions, each with LSH tables for several row counts, and a
query looks in each partition with the bands and rows that suit the ratio of the
partition's largest size to the query's. Answers are verified by exact containment when
both sets are known (neardup MinHashes keep them), else they are the candidates.

neardup's own containment search (``pairs(texts, measure="containment")``, an `Index` of
``Config(measure="containment")``) works on texts, not on sketches and sizes, so this is
the partitioned scheme, on `MinHashLSH` tables.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from typing import Any, Hashable, Iterable, Iterator, Optional

import numpy as np

from ._lsh import MinHashLSH, _areas, _check_arguments
from ._neardup import MinHash

# The ratios of a partition's largest set size to the query's size the plans are made for.
_XQS = np.exp(np.linspace(-5, 5, 10))


def _plan(
    threshold: float, num_perm: int, max_r: int, xq: float, weights: tuple[float, float]
) -> tuple[int, int]:
    """The (b, r), r <= max_r, b·r <= num_perm, minimising the weighted areas of false
    positives and negatives of containment at `threshold` for the size ratio `xq`."""
    plans = np.array(
        [(b, r) for b in range(1, num_perm + 1) for r in range(1, max_r + 1) if b * r <= num_perm],
        dtype=float,
    )
    b, r = plans[:, :1], plans[:, 1:]

    def collide(t: Any) -> Any:
        # The Jaccard of a set inside another of xq times its size, at containment t.
        return 1 - (1 - (t[None, :] / (1 + xq - t[None, :])) ** r) ** b

    def miss(t: Any) -> Any:
        return 1 - collide(t)

    fp = _areas(collide, 0.0, min(threshold, xq))
    fn = _areas(miss, threshold, min(1.0, xq)) if xq >= threshold else np.zeros(len(plans))
    error = fp * weights[0] + fn * weights[1]
    i = int(np.argmin(error))
    return int(plans[i, 0]), int(plans[i, 1])


def _partitions(sizes: list[int], counts: list[int], parts: int) -> list[tuple[int, int]]:
    """Intervals of the sorted distinct `sizes`, at most `parts`, minimising the expected
    false positives of taking each interval's upper size for all its sets."""
    n = len(sizes)
    if parts >= n:
        return [(s, s) for s in sizes]
    if parts < 2:
        return [(sizes[0], sizes[-1])]
    size = np.array(sizes, dtype=float)
    count = np.array(counts, dtype=float)
    # cost[l, u]: sets of sizes[l..=u] counted as of size sizes[u].
    cost = np.full((n, n), np.inf)
    for u in range(n):
        share = (size[u] - size[: u + 1]) / size[u] * count[: u + 1]
        cost[: u + 1, u] = np.cumsum(share[::-1])[::-1]
    best = cost[0].copy()  # one interval ending at u
    cuts: list[list[int]] = [[-1] * n]
    for _ in range(1, parts):
        nxt = np.full(n, np.inf)
        cut = [-1] * n
        for u in range(1, n):
            # The last interval is sizes[m+1..=u] after the best split of sizes[..=m].
            split = best[:u] + cost[1 : u + 1, u]
            m = int(np.argmin(split))
            nxt[u], cut[u] = split[m], m
        best = nxt
        cuts.append(cut)
    bounds, u = [], n - 1
    for cut in reversed(cuts):
        m = cut[u]
        bounds.append((sizes[m + 1], sizes[u]))
        u = m
        if u < 0:
            break
    return bounds[::-1]


class MinHashLSHEnsemble:
    """datasketch's LSH Ensemble: the keys whose sets contain at least `threshold` of a
    query set (containment ``|Q ∩ X| / |Q|``).

    Args:
        threshold: containment threshold in [0, 1].
        num_perm: signature length of the sketches.
        num_part: partitions by set size.
        m: memory factor: each partition keeps tables for up to `m` row counts.
        weights: ``(false_positive_weight, false_negative_weight)`` of the plans.
        storage_config: ``{"type": "dict"}`` only (see `MinHashLSH`).
        prepickle: taken for datasketch's signature; keys are kept as they are.
    """

    def __init__(
        self,
        threshold: float = 0.9,
        num_perm: int = 128,
        num_part: int = 16,
        m: int = 8,
        weights: tuple[float, float] = (0.5, 0.5),
        storage_config: Optional[dict[str, Any]] = None,
        prepickle: Optional[bool] = None,
    ) -> None:
        _check_arguments(storage_config, threshold, num_perm, weights)
        if num_part < 1:
            raise ValueError("num_part must be at least 1")
        if m < 2 or m > num_perm:
            raise ValueError("m must be in the range of [2, num_perm]")
        self.threshold = threshold
        self.h = num_perm
        self.m = m
        self.prepickle = bool(prepickle)
        self.xqs = _XQS
        self.params = np.array([_plan(threshold, num_perm, m, xq, weights) for xq in _XQS], dtype=int)
        rows = sorted({int(r) for _, r in self.params})
        self.indexes = [
            {r: MinHashLSH(num_perm=num_perm, params=(num_perm // r, r), verify=False) for r in rows}
            for _ in range(num_part)
        ]
        for part in self.indexes:
            for lsh in part.values():
                lsh._by_hashvalues = True
        self.lowers: list[Optional[int]] = [None] * num_part
        self.uppers: list[Optional[int]] = [None] * num_part
        self._sets: dict[Hashable, Any] = {}

    def index(self, entries: Iterable[tuple[Hashable, Any, int]]) -> None:
        """Indexes ``(key, minhash, size)`` entries, once (``ValueError`` on a second call,
        for no entries, or a size below 1)."""
        if not self.is_empty():
            raise ValueError("Cannot call index again on a non-empty index")
        entries = list(entries)
        if any(size <= 0 for _, _, size in entries):
            raise ValueError("Set size must be positive")
        if not entries:
            raise ValueError("entries is empty")
        sizes, counts = zip(*sorted(Counter(size for _, _, size in entries).items()))
        for i, (lower, upper) in enumerate(_partitions(list(sizes), list(counts), len(self.indexes))):
            self.lowers[i], self.uppers[i] = lower, upper
        uppers = [u for u in self.uppers if u is not None]
        for key, minhash, size in entries:
            part = self.indexes[bisect_left(uppers, size)]
            for lsh in part.values():
                lsh.insert(key, minhash)
            self._sets[key] = _set_of(minhash)

    def query(self, minhash: Any, size: int) -> Iterator[Hashable]:
        """The keys whose sets likely contain at least `threshold` of the query set of
        `size` elements; verified by exact containment when both sets are known."""
        query_set = _set_of(minhash)
        for part, upper in zip(self.indexes, self.uppers):
            if upper is None:
                continue
            i = min(int(np.searchsorted(self.xqs, upper / size, side="left")), len(self.params) - 1)
            b, r = self.params[i]
            for key in part[int(r)]._query_b(minhash, int(b)):
                if self._contains(query_set, self._sets.get(key)):
                    yield key

    def _contains(self, query: Optional[Any], other: Optional[Any]) -> bool:
        if query is None or other is None or not len(query):
            return True
        inside = len(np.intersect1d(query, other, assume_unique=True))
        return bool(inside >= self.threshold * len(query))

    def __contains__(self, key: Hashable) -> bool:
        return any(key in lsh for part in self.indexes for lsh in part.values())

    def is_empty(self) -> bool:
        return all(lsh.is_empty() for part in self.indexes for lsh in part.values())


def _set_of(minhash: Any) -> Optional[Any]:
    """A neardup MinHash's set (its sorted hashes), None for a sketch without one."""
    if not isinstance(minhash, MinHash):
        return None
    try:
        hashes = minhash.hashes()
    except ValueError:  # a sketch rebuilt from hashvalues, or fed by the caller's hashfunc
        return None
    return hashes if len(hashes) else None
