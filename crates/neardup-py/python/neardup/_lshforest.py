"""`MinHashLSHForest`, datasketch's top-k index: `l` trees over the hashvalues' prefixes.

Each tree holds, for its `k` positions of every sketch, the values as big-endian bytes,
so byte order is value order and the first ``r`` positions are a prefix; a sorted list of
them is the tree. A query walks the prefixes from all `k` positions down to one until it
has `k` keys, as datasketch's does.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any, Hashable

import numpy as np

from ._lsh import _hashvalues


class MinHashLSHForest:
    """datasketch's LSH Forest: `add` sketches, `index` them, `query` the approximate
    top-k keys by Jaccard. Works on any sketch with ``hashvalues`` (MinHash, weighted
    MinHash); its answers are candidates, not verified (as datasketch's).

    Args:
        num_perm: signature length of the sketches (for a weighted MinHash its sample size).
        l: number of prefix trees; each covers ``k = num_perm // l`` positions.
    """

    def __init__(self, num_perm: int = 128, l: int = 8) -> None:  # noqa: E741 (datasketch's name)
        if l <= 0 or num_perm <= 0:
            raise ValueError("num_perm and l must be positive")
        if l > num_perm:
            raise ValueError("l cannot be greater than num_perm")
        self.l = l
        self.k = num_perm // l
        self.hashtables: list[dict[bytes, list[Any]]] = [{} for _ in range(l)]
        self.hashranges = [(i * self.k, (i + 1) * self.k) for i in range(l)]
        self.keys: dict[Hashable, list[bytes]] = {}
        self._sorted: list[list[bytes]] = [[] for _ in range(l)]

    def _trees(self, minhash: Any) -> tuple[list[bytes], int]:
        """The sketch's bytes in each tree, and the bytes per position."""
        if len(minhash) < self.k * self.l:
            raise ValueError("The num_perm of MinHash out of range")
        values, width = _hashvalues(minhash)
        big = values.astype(">u8")
        step = self.k * width
        return [big[i * step : (i + 1) * step].tobytes() for i in range(self.l)], width * 8

    def add(self, key: Hashable, minhash: Any) -> None:
        """Adds a unique key with its sketch; it is searchable after the next `index`."""
        trees, _ = self._trees(minhash)
        if key in self.keys:
            raise ValueError("The given key has already been added")
        self.keys[key] = trees
        for h, table in zip(trees, self.hashtables):
            table.setdefault(h, []).append(key)

    def index(self) -> None:
        """Makes every key added so far searchable."""
        self._sorted = [sorted(table) for table in self.hashtables]

    def query(self, minhash: Any, k: int) -> list[Any]:
        """At most `k` keys whose sketches share the longest prefixes with `minhash`'s."""
        if k <= 0:
            raise ValueError("k must be positive")
        trees, per = self._trees(minhash)
        found: dict[Hashable, None] = {}
        for depth in range(self.k, 0, -1):
            for tree, table, h in zip(self._sorted, self.hashtables, trees):
                prefix = h[: depth * per]
                i = bisect_left(tree, prefix)
                while i < len(tree) and tree[i].startswith(prefix):
                    for key in table[tree[i]]:
                        found.setdefault(key)
                        if len(found) >= k:
                            return list(found)
                    i += 1
        return list(found)

    def get_minhash_hashvalues(self, key: Hashable) -> Any:
        """The hashvalues the key was added with (uint64), to rebuild its MinHash."""
        trees = self.keys.get(key)
        if trees is None:
            raise KeyError(f"The provided key does not exist in the LSHForest: {key}")
        return np.frombuffer(b"".join(trees), dtype=">u8").astype(np.uint64)

    def is_empty(self) -> bool:
        """True while no key is searchable (before the first `index`)."""
        return any(not tree for tree in self._sorted)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.keys

    def __len__(self) -> int:
        return len(self.keys)
