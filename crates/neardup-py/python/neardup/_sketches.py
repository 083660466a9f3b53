"""datasketch's other MinHash classes, on neardup's `MinHash`: `LeanMinHash` (a frozen
sketch, datasketch's byte format), `bBitMinHash` (b-bit compression) and
`WeightedMinHash` / `WeightedMinHashGenerator` (Ioffe's consistent weighted sampling).

Each gives datasketch 2.0's values and bytes for the same input (the suite checks them
against values datasketch wrote, tests/fixtures/datasketch-2.0.0.json): a user's stored
sketches stay readable. The weighted sketches are NumPy arithmetic in float32 in the order
datasketch does it, since its random draws and float32 rounding are what the values are.
"""

from __future__ import annotations

import struct
from typing import Any, Optional

import numpy as np

from ._neardup import MinHash

# The scheme codes of datasketch's byte formats (legacy payloads have none).
_SCHEME_CODES = {"affine32": 1, "affine64": 2}
_SCHEMES_BY_CODE = {code: scheme for scheme, code in _SCHEME_CODES.items()}
_VALUE_FORMATS = {"legacy": "I", "affine32": "I", "affine64": "Q"}
_SCHEMES = ("affine32", "affine64", "legacy")

# The newest format of the pickles below; a later neardup reads every earlier one.
_PICKLE_VERSION = 1


def _need_scheme() -> ValueError:
    return ValueError(
        "scheme must be specified explicitly when initializing from existing hash values: pass "
        "the scheme of the MinHash they came from, or scheme='legacy' for hash values created by "
        "datasketch before 2.0.0."
    )


class LeanMinHash(MinHash):
    """A MinHash frozen to its hashvalues (datasketch's ``LeanMinHash``): no `update`, no
    set, a smaller footprint, and datasketch's byte format (`serialize`, `deserialize`,
    `bytesize`). ``LeanMinHash(minhash)``, or ``LeanMinHash(seed=, hashvalues=, scheme=)``
    from stored values. It is a `MinHash`: `jaccard`, `merge`, `MinHashLSH` take it."""

    def __new__(
        cls,
        minhash: Optional[MinHash] = None,
        seed: Optional[int] = None,
        hashvalues: Any = None,
        scheme: Optional[str] = None,
    ) -> "LeanMinHash":
        if minhash is not None:
            if scheme is not None and scheme != minhash.scheme:
                raise ValueError(
                    f"scheme {scheme!r} conflicts with the scheme {minhash.scheme!r} of the given MinHash"
                )
            seed, hashvalues, scheme = minhash.seed, minhash.hashvalues, minhash.scheme
        elif hashvalues is None or seed is None:
            raise ValueError(
                "Init parameters cannot be None: make sure to set either minhash or both of hash "
                "values and seed"
            )
        elif scheme is None:
            raise _need_scheme()
        if scheme not in _SCHEMES:
            raise ValueError(
                f"LeanMinHash takes datasketch's schemes ({', '.join(_SCHEMES)}), not {scheme!r}: "
                "neardup's own sketch keeps its set; pickle the MinHash instead"
            )
        return super().__new__(cls, seed=seed, hashvalues=hashvalues, scheme=scheme)

    def update(self, b: Any) -> None:
        """Not available on a LeanMinHash (``TypeError``, as datasketch's)."""
        raise TypeError("Cannot update a LeanMinHash")

    def update_batch(self, b: Any) -> None:
        """Not available on a LeanMinHash (``TypeError``)."""
        raise TypeError("Cannot update a LeanMinHash")

    def copy(self) -> "LeanMinHash":
        return LeanMinHash(self)

    @classmethod
    def union(cls, *lmhs: MinHash) -> "LeanMinHash":
        """The union of two or more MinHashes, as a LeanMinHash."""
        return LeanMinHash(MinHash.union(*lmhs))

    def _format(self, byteorder: str) -> str:
        n, scheme = len(self), self.scheme
        if scheme == "legacy":
            return f"{byteorder}qi{n}I"
        return f"{byteorder}qiB{n}{_VALUE_FORMATS[scheme]}"

    def bytesize(self, byteorder: str = "@") -> int:
        """The size of `serialize`'s bytes: datasketch's (8 for the seed, 4 for the count,
        1 for the scheme code unless legacy, 4 or 8 per value)."""
        return struct.calcsize(self._format(byteorder))

    def serialize(self, buf: Any, byteorder: str = "@") -> None:
        """Writes the sketch into `buf` (a writable buffer of at least `bytesize()` bytes)
        in datasketch's format, so datasketch reads it and this reads datasketch's."""
        if len(buf) < self.bytesize(byteorder):
            raise ValueError("The buffer does not have enough space for holding this MinHash.")
        values = [int(v) for v in self.hashvalues]
        if self.scheme == "legacy":
            struct.pack_into(self._format(byteorder), buf, 0, self.seed, len(self), *values)
        else:
            code = _SCHEME_CODES[self.scheme]
            struct.pack_into(self._format(byteorder), buf, 0, self.seed, -len(self), code, *values)

    @classmethod
    def deserialize(cls, buf: Any, byteorder: str = "@") -> "LeanMinHash":
        """Reads a sketch `serialize` (or datasketch) wrote; a count that is not negative
        marks datasketch's format before 2.0 (the legacy scheme)."""
        head = f"{byteorder}qi"
        view = memoryview(buf)
        seed, count = struct.unpack_from(head, view, 0)
        if count >= 0:
            scheme, offset = "legacy", struct.calcsize(head)
        else:
            count = -count
            (code,) = struct.unpack_from(byteorder + "B", view, struct.calcsize(head))
            if code not in _SCHEMES_BY_CODE:
                raise ValueError(f"Unknown permutation scheme code: {code}")
            scheme = _SCHEMES_BY_CODE[code]
            # A zero-count value aligns the offset as native order ("@") pads.
            offset = struct.calcsize(f"{byteorder}qiB0{_VALUE_FORMATS[scheme]}")
        values = struct.unpack_from(f"{byteorder}{count}{_VALUE_FORMATS[scheme]}", view, offset)
        return cls(seed=seed, hashvalues=np.array(values, dtype=np.uint64), scheme=scheme)

    def __hash__(self) -> int:
        return hash((self.scheme, self.seed, tuple(int(v) for v in self.hashvalues)))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        buf = bytearray(self.bytesize("<"))
        self.serialize(buf, "<")
        return (_restore_lean, (_PICKLE_VERSION, bytes(buf)))

    def __repr__(self) -> str:
        return f"LeanMinHash(num_perm={len(self)}, seed={self.seed}, scheme={self.scheme!r})"


def _restore_lean(version: int, data: bytes) -> LeanMinHash:
    """Unpickles a LeanMinHash (format 1: `serialize`'s bytes, little-endian)."""
    if version > _PICKLE_VERSION:
        raise ValueError(f"this LeanMinHash was pickled by a newer neardup (format {version})")
    return LeanMinHash.deserialize(data, "<")


class bBitMinHash:  # noqa: N801 - datasketch's name
    """The lowest `b` bits of each of a MinHash's hashvalues (datasketch's
    ``bBitMinHash``, after Li and König): a smaller sketch whose `jaccard` corrects for the
    chance agreement of `b` bits; `r` is the set size over the universe's, 0 if unknown.
    Pickles in datasketch's byte format; no update, no LSH."""

    __slots__ = ("b", "hashvalues", "r", "scheme", "seed")
    _PARAMS = "<qBdi"
    _BLOCK = "Q"

    def __init__(self, minhash: MinHash, b: int = 1, r: float = 0.0) -> None:
        b, r = int(b), float(r)
        if b > 32 or b < 0:
            raise ValueError("b must be an integer in [0, 32]")
        if r > 1.0:
            raise ValueError("r must be a float in [0.0, 1.0]")
        if minhash.scheme not in _SCHEMES:
            raise ValueError(
                f"bBitMinHash takes datasketch's schemes ({', '.join(_SCHEMES)}), not {minhash.scheme!r}"
            )
        mask = (1 << b) - 1
        self.hashvalues = np.bitwise_and(np.asarray(minhash.hashvalues), mask).astype(np.uint32)
        self.seed, self.scheme, self.b, self.r = minhash.seed, minhash.scheme, b, r

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and isinstance(other, bBitMinHash)
            and (self.scheme, self.seed, self.b, self.r) == (other.scheme, other.seed, other.b, other.r)
            and np.array_equal(self.hashvalues, other.hashvalues)
        )

    __hash__ = None  # type: ignore[assignment]

    def jaccard(self, other: "bBitMinHash") -> float:
        """The estimated Jaccard similarity, corrected for b-bit chance agreement."""
        if self.b != other.b:
            raise ValueError("Cannot compare two b-bit MinHashes with different b values")
        if self.scheme != other.scheme:
            raise ValueError("Cannot compare two b-bit MinHashes with different permutation schemes")
        if self.seed != other.seed:
            raise ValueError("Cannot compare two b-bit MinHashes with different set of permutations")
        raw = float(np.count_nonzero(self.hashvalues == other.hashvalues)) / float(self.hashvalues.size)
        a1, a2 = _chance(self.r, self.b), _chance(other.r, other.b)
        if self.r == 0.0 and other.r == 0.0:
            c1, c2 = a1, a2
        else:
            c1 = (a1 * other.r + a2 * self.r) / (self.r + other.r)
            c2 = (a1 * self.r + a2 * other.r) / (self.r + other.r)
        return (raw - c1) / (1 - c2)

    def _layout(self) -> tuple[int, int, int, int]:
        """Bits per slot, slots per 64-bit block, blocks, and the total size in bytes."""
        slot = next(s for s in (1, 2, 4, 8, 16, 32) if self.b <= s)
        per_block = 64 // slot
        blocks = -(-self.hashvalues.size // per_block)
        params = self._PARAMS if self.scheme == "legacy" else self._PARAMS + "B"
        return slot, per_block, blocks, struct.calcsize(f"{params}{blocks}{self._BLOCK}")

    def bytesize(self) -> int:
        """The size of the pickled bytes (datasketch's format)."""
        return self._layout()[-1]

    def __getstate__(self) -> bytearray:
        slot, per_block, blocks, total = self._layout()
        packed = [0] * blocks
        for i, v in enumerate(int(v) for v in self.hashvalues):
            packed[i // per_block] |= v << (per_block - 1 - i % per_block) * slot
        buf = bytearray(total)
        n = self.hashvalues.size
        if self.scheme == "legacy":
            struct.pack_into(f"{self._PARAMS}{blocks}Q", buf, 0, self.seed, self.b, self.r, n, *packed)
        else:
            code = _SCHEME_CODES[self.scheme]
            struct.pack_into(
                f"{self._PARAMS}B{blocks}Q", buf, 0, self.seed, self.b, self.r, -n, code, *packed
            )
        return buf

    def __setstate__(self, buf: Any) -> None:
        view = memoryview(buf)
        self.seed, self.b, self.r, n = struct.unpack_from(self._PARAMS, view, 0)
        offset = struct.calcsize(self._PARAMS)
        if n >= 0:
            self.scheme = "legacy"
        else:
            n = -n
            (code,) = struct.unpack_from("<B", view, offset)
            if code not in _SCHEMES_BY_CODE:
                raise ValueError(f"Unknown permutation scheme code: {code}")
            self.scheme = _SCHEMES_BY_CODE[code]
            offset += 1
        self.hashvalues = np.zeros(n, dtype=np.uint32)
        slot, per_block, blocks, _ = self._layout()
        packed = struct.unpack_from(f"<{blocks}Q", view, offset)
        mask = (1 << slot) - 1
        for i in range(n):
            self.hashvalues[i] = (packed[i // per_block] >> (per_block - 1 - i % per_block) * slot) & mask


def _chance(r: float, b: int) -> float:
    """A(r, b): the chance two different b-bit values agree (Li and König)."""
    if r == 0.0:
        return 1.0 / (1 << b)
    return float(r * (1 - r) ** (2**b - 1) / (1 - (1 - r) ** (2 * b)))


class WeightedMinHash:
    """A weighted MinHash (datasketch's): `sample_size` pairs ``(k, t)`` made by a
    `WeightedMinHashGenerator`; `jaccard` estimates the weighted Jaccard similarity."""

    def __init__(self, seed: int, hashvalues: np.ndarray) -> None:
        self.seed = seed
        self.hashvalues = hashvalues

    def jaccard(self, other: "WeightedMinHash") -> float:
        """The share of samples whose ``(k, t)`` agree."""
        if other.seed != self.seed:
            raise ValueError("Cannot compute Jaccard given WeightedMinHash objects with different seeds")
        if len(self) != len(other):
            raise ValueError(
                "Cannot compute Jaccard given WeightedMinHash objects with different numbers of hash values"
            )
        same = np.all(np.asarray(self.hashvalues) == np.asarray(other.hashvalues), axis=1)
        return float(np.count_nonzero(same)) / float(len(self))

    def digest(self) -> np.ndarray:
        return np.array(self.hashvalues, copy=True)

    def copy(self) -> "WeightedMinHash":
        return WeightedMinHash(self.seed, self.digest())

    def __len__(self) -> int:
        return len(self.hashvalues)

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and isinstance(other, WeightedMinHash)
            and self.seed == other.seed
            and np.array_equal(self.hashvalues, other.hashvalues)
        )

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        values = np.asarray(self.hashvalues, dtype=np.int64)
        return (_restore_weighted, (_PICKLE_VERSION, self.seed, values.tobytes(), values.shape))


def _restore_weighted(version: int, seed: int, data: bytes, shape: tuple[int, ...]) -> WeightedMinHash:
    """Unpickles a WeightedMinHash (format 1: its int64 values)."""
    if version > _PICKLE_VERSION:
        raise ValueError(f"this WeightedMinHash was pickled by a newer neardup (format {version})")
    values = np.frombuffer(data, dtype=np.int64).reshape(shape).astype(int)
    return WeightedMinHash(seed, values)


class WeightedMinHashGenerator:
    """Makes weighted MinHashes of vectors of `dim` weights (datasketch's, after Ioffe's
    "Improved Consistent Sampling"): `sample_size` samples drawn from `seed` by NumPy's
    ``RandomState``, as datasketch draws them, so the same vectors give the same values."""

    def __init__(self, dim: int, sample_size: int = 128, seed: int = 1) -> None:
        self.dim, self.sample_size, self.seed = dim, sample_size, seed
        draws = np.random.RandomState(seed=seed)
        self.rs = draws.gamma(2, 1, (sample_size, dim)).astype(np.float32)
        self.ln_cs = np.log(draws.gamma(2, 1, (sample_size, dim))).astype(np.float32)
        self.betas = draws.uniform(0, 1, (sample_size, dim)).astype(np.float32)

    def minhash(self, v: Any) -> WeightedMinHash:
        """The weighted MinHash of one vector of `dim` non-negative weights."""
        if not hasattr(v, "__len__"):
            raise TypeError("Input vector must be sized")
        if len(v) != self.dim:
            raise ValueError(f"Input dimension mismatch, expecting {self.dim}")
        # A float32 copy: the caller's vector is left as it was.
        v = np.array(v, dtype=np.float32, copy=True)
        zeros = v == 0
        if zeros.all():
            raise ValueError("Input is all zeros")
        v[zeros] = np.nan
        logs = np.log(v)
        values = np.zeros((self.sample_size, 2), dtype=int)
        for i in range(self.sample_size):
            t = np.floor((logs / self.rs[i]) + self.betas[i])
            ln_a = self.ln_cs[i] - (t - self.betas[i]) * self.rs[i] - self.rs[i]
            k = np.nanargmin(ln_a)
            values[i] = k, int(t[k])
        return WeightedMinHash(self.seed, values)

    def minhash_many(self, X: Any) -> list[Optional[WeightedMinHash]]:
        """The weighted MinHashes of a matrix's rows (a NumPy array or a SciPy sparse
        matrix), None for an all-zero row. As datasketch's, its values differ from
        `minhash`'s for the same vector."""
        if hasattr(X, "tocsr"):
            X = X.tocsr().astype(np.float32)
            X.sort_indices()
            rows, cols = X.nonzero()
            data = np.asarray(X[rows, cols]).ravel()
            shape = X.shape
        elif isinstance(X, np.ndarray):
            shape = X.shape
            if X.ndim != 2:
                raise ValueError("Input must have two dimensions")
            dense = X.astype(np.float32)
            rows, cols = dense.nonzero()
            data = dense[rows, cols]
        else:
            raise TypeError("Input X must be a sparse matrix or numpy matrix")
        if len(shape) != 2:
            raise ValueError("Input must have two dimensions")
        if shape[1] != self.dim:
            raise ValueError(f"Input dimension mismatch, expecting {self.dim}")
        rs, betas, ln_cs = self.rs[:, cols], self.betas[:, cols], self.ln_cs[:, cols]
        logs = np.vstack([np.log(data)] * self.sample_size)
        t = np.floor(logs / rs + betas)
        ln_a = ln_cs - (t - betas + 1) * rs
        starts = np.searchsorted(rows, np.arange(shape[0] + 1))
        out: list[Optional[WeightedMinHash]] = []
        for doc in range(shape[0]):
            begin, end = starts[doc], starts[doc + 1]
            if begin == end:
                out.append(None)
                continue
            best = np.argmin(ln_a[:, begin:end], axis=1)
            values = np.zeros((self.sample_size, 2), dtype=int)
            values[:, 0] = cols[begin + best]
            values[:, 1] = t[np.arange(self.sample_size), begin + best]
            out.append(WeightedMinHash(self.seed, values))
        return out
