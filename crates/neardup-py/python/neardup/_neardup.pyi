"""Type stubs of the extension module (crates/neardup-py/src). The public names are
re-exported by `neardup`; the ones starting with `_` and the functions are the package's
own plumbing, documented in `neardup`'s functions and `Config`'s methods."""

from __future__ import annotations

from os import PathLike
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Optional, Sequence, Union, final, overload

import numpy as np
import numpy.typing as npt
from typing_extensions import Self, disjoint_base

__all__: list[str]
__version__: str
DEFAULT_THRESHOLD: float
DEFAULT_NUM_PERM: int
DEFAULT_SEED: int
DEFAULT_SHINGLE: str
DEFAULT_HAMMING: int
DEFAULT_MAX_SHINGLES: int
MIN_THRESHOLD: float
_MEASURES_BY_SIZE: list[str]

class NeardupError(ValueError):
    """A setting or an argument neardup refuses, with the library's message."""

class IndexFileError(OSError):
    """An index's files could not be used (none at the path, corrupt, unreadable, a format
    this version does not read, a commit that failed half way), or an index cannot be
    created where asked (a directory that is not empty and holds no index)."""

@final
class _Buffer:
    @property
    def __array_interface__(self) -> dict[str, Any]: ...
    def __len__(self) -> int: ...

@final
class _Config:
    def __new__(
        cls,
        *,
        shingle: str,
        normalize: str,
        threshold: float,
        num_perm: int,
        seed: int,
        sketch: str,
        bands: Optional[int],
        rows: Optional[int],
        verify: str,
        keep: str,
        max_shingles: int,
        neighbours: bool,
        allow_truncated: bool,
        multiset: bool,
        measure: str,
        hamming: Optional[int] = None,
    ) -> _Config: ...
    @property
    def bands(self) -> int: ...
    @property
    def rows(self) -> int: ...
    @property
    def families(self) -> int: ...
    @property
    def measure(self) -> str: ...
    @property
    def from_smaller(self) -> bool: ...
    def probability(self, s: float) -> float: ...

_Form = Literal["list", "columns"]

def run_pairs(
    config: _Config,
    texts: Any,
    ids: Optional[list[Any]],
    exact: bool,
    threads: Optional[int],
    form: _Form,
    text_col: Optional[str] = None,
    reference: Any = None,
) -> Any: ...
def run_clusters(
    config: _Config,
    texts: Any,
    ids: Optional[list[Any]],
    exact: bool,
    threads: Optional[int],
    form: Literal["list", "columns", "survivors", "survivor_texts", "annotate"],
    text_col: Optional[str] = None,
    reference: Any = None,
) -> Any: ...
def shingle_sets(config: _Config, texts: Any, threads: Optional[int]) -> tuple[_Buffer, _Buffer]: ...
def band_keys(config: _Config, texts: Any, threads: Optional[int]) -> _Buffer: ...
def jaccard_texts(config: _Config, a: str, b: str) -> float: ...
def units_dedup(
    config: _Config,
    texts: list[str],
    unit: str,
    near: bool,
    min_unit_chars: int,
    max_unit_count: Optional[int] = None,
    keep: str = "first",
    reference: int = 0,
) -> list[tuple[Optional[str], list[tuple[int, int, int]]]]: ...
def decontaminate_texts(
    tests: list[str], texts: list[str], ngram: int, min_ngram: int, min_overlap: float
) -> tuple[list[tuple[int, int, float, int, int, list[tuple[int, int]]]], int, int]: ...
def jaccard_sets(a: npt.NDArray[np.uint64], b: npt.NDArray[np.uint64]) -> float: ...
def verify(
    config: _Config,
    texts: Any,
    pairs: npt.NDArray[np.int64],
    ids: Optional[list[Any]],
    threads: Optional[int],
    form: _Form,
) -> Any: ...

_Element = Union[bytes, bytearray, str]

@disjoint_base
class MinHash:
    """datasketch 2's ``MinHash``: the same constructor, the same hashvalues for the same
    tokens (``scheme`` "affine32", the default, "affine64" or "legacy"), `jaccard` as
    datasketch estimates it. It also keeps its set while it can (default hash function,
    not rebuilt from hashvalues), so `exact_jaccard` is exact and `MinHashLSH` verifies.
    ``sketch="oph"`` or ``"classic"`` makes neardup's own sketch of the set instead.
    ``gpu_mode`` is accepted; neardup runs on the CPU only."""

    def __new__(
        cls,
        num_perm: int = 128,
        seed: int = 1,
        gpu_mode: str = "disable",
        hashfunc: Optional[Callable[[Any], int]] = None,
        hashobj: Optional[object] = None,
        hashvalues: Optional[npt.ArrayLike] = None,
        permutations: Optional[Any] = None,
        scheme: Optional[str] = None,
        *,
        sketch: Optional[str] = None,
    ) -> Self: ...
    @staticmethod
    def from_text(
        text: str,
        *,
        shingle: str = "char:5",
        normalize: str = "nfkc",
        max_shingles: int = 16777216,
        num_perm: int = 128,
        seed: int = 1,
        sketch: str = "oph",
    ) -> MinHash:
        """The MinHash of a text's shingle set, made as the library makes it."""
    @staticmethod
    def from_texts(
        texts: Any,
        *,
        shingle: str = "char:5",
        normalize: str = "nfkc",
        max_shingles: int = 16777216,
        num_perm: int = 128,
        seed: int = 1,
        sketch: str = "oph",
    ) -> list[MinHash]:
        """The MinHashes of many texts, shingled in parallel with the GIL released."""
    @classmethod
    def bulk(cls, b: Iterable[Iterable[Any]], **kwargs: Any) -> list[MinHash]:
        """MinHashes of many sets of tokens (datasketch's ``MinHash.bulk``)."""
    @classmethod
    def generator(cls, b: Iterable[Iterable[Any]], **kwargs: Any) -> MinHashes:
        """MinHashes of many sets, one at a time (datasketch's ``MinHash.generator``)."""
    @staticmethod
    def union(*mhs: MinHash) -> MinHash:
        """The union of two or more MinHashes of the same scheme, seed and length."""
    def update(self, b: Any) -> None:
        """Adds one token (bytes, a str as UTF-8, or what `hashfunc` takes)."""
    def update_batch(self, b: Iterable[Any]) -> None:
        """Adds every token of an iterable."""
    def update_hashes(self, values: Union[npt.ArrayLike, Sequence[int]]) -> None:
        """Adds 64-bit hashes as they are to neardup's own sketch."""
    def jaccard(self, other: Any) -> float:
        """datasketch's estimate: the share of agreeing hashvalues (two empty: 1.0)."""
    def estimate(self, other: Any) -> float:
        """The same as `jaccard` (its older name here)."""
    def exact_jaccard(self, other: MinHash) -> float:
        """The exact Jaccard similarity of the two sets (0 if either is empty)."""
    def digest(self) -> npt.NDArray[np.unsignedinteger[Any]]:
        """The hashvalues (a copy): uint32 for affine32, else uint64."""
    @property
    def hashvalues(self) -> npt.NDArray[np.unsignedinteger[Any]]:
        """The hashvalues (datasketch's attribute)."""
    @property
    def permutations(self) -> Optional[npt.NDArray[np.unsignedinteger[Any]]]:
        """The permutation parameters, rows `a` and `b` (None for neardup's own sketch)."""
    @property
    def hashfunc(self) -> Optional[Callable[[Any], int]]:
        """The tokens' hash function (default: `sha1_hash32`, `sha1_hash64` for affine64)."""
    @property
    def _gpu_mode(self) -> str: ...
    @property
    def has_set(self) -> bool:
        """Whether the MinHash carries its set."""
    def hashes(self) -> npt.NDArray[np.uint64]:
        """The set's hashes, sorted."""
    def count(self) -> float:
        """datasketch's estimate of the number of distinct elements."""
    def is_empty(self) -> bool: ...
    def merge(self, other: MinHash) -> None:
        """Makes this MinHash the union of both."""
    def clear(self) -> None: ...
    def copy(self) -> MinHash: ...
    @property
    def num_perm(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def scheme(self) -> str: ...
    @property
    def sketch(self) -> str: ...
    def __len__(self) -> int: ...
    def __eq__(self, value: object, /) -> bool: ...
    @staticmethod
    def _from_state(state: dict[str, Any]) -> MinHash: ...
    @staticmethod
    def _restore(
        num_perm: int, seed: int, sketch: str, set: bytes, whole: Optional[bytes]
    ) -> MinHash: ...

@final
class MinHashes:
    """The MinHashes `MinHash.generator` makes, one per set of tokens."""

    def __iter__(self) -> MinHashes: ...
    def __next__(self) -> MinHash: ...

def sha1_hash32(data: Any) -> int:
    """datasketch's token hash: SHA-1's first 4 bytes, little-endian."""

def sha1_hash64(data: Any) -> int:
    """SHA-1's first 8 bytes, little-endian (the affine64 scheme's token hash)."""

@final
class _LshTable:
    def __new__(cls, config: _Config) -> _LshTable: ...
    def insert(self, minhash: MinHash) -> int: ...
    def insert_many(self, minhashes: list[MinHash]) -> list[int]: ...
    def remove(self, slot: int) -> None: ...
    def insert_given(
        self, values: Optional[Any], width: int, minhashes: list[Optional[MinHash]]
    ) -> list[int]: ...
    def query(self, minhash: MinHash, verify: bool = True) -> tuple[list[int], list[float]]: ...
    def query_given(
        self,
        values: Optional[Any],
        width: int,
        minhash: Optional[MinHash] = None,
        verify: bool = True,
        bands: Optional[int] = None,
    ) -> tuple[list[int], list[float]]: ...
    def band_keys(self, slot: int) -> list[int]: ...
    def copy_from(self, other: _LshTable, slots: list[int]) -> list[int]: ...
    def export(self) -> list[Optional[tuple[Optional[bytes], ...]]]: ...
    def restore(self, slots: list[Optional[tuple[Optional[bytes], ...]]]) -> None: ...
    def __len__(self) -> int: ...

@final
class Index:
    """A persistent near-duplicate index in a directory, shared by threads and processes.

    ``Index(path, config=None)`` opens the index at `path`, creating it (pinned to
    `config`, or to the defaults) if there is none; an existing index is checked against a
    `config` given. An index is created only in a new or empty directory: one that holds
    other files is refused (`IndexFileError`, naming it), so none of them is ever taken
    for the index's. `add` and `remove` stage changes, `commit` makes them durable (each run
    of adds or of removals one atomic commit) and visible to every process; queries read
    the last commit and notice newer ones. A handle pickles as its path. Created with
    ``Config(measure="containment")`` it answers the indexed documents a query is inside
    of and those inside it, as ``(id, containment, inside, jaccard)``.
    """

    def __new__(cls, path: Union[str, PathLike[str]], config: Any = None) -> Index: ...
    def add(self, texts: Any, ids: Union[str, Sequence[str]]) -> None:
        """Stages documents to add under `ids` (str, one per text, not empty); an indexed id is
        replaced."""
    def remove(self, ids: Union[str, Sequence[str]]) -> None:
        """Stages removals by id."""
    def commit(self) -> dict[str, Any]:
        """Makes the staged changes durable; returns ``added``, ``replaced`` (of an indexed
        id), ``superseded`` (staged documents a later one with the same id replaced),
        ``removed``, ``missing`` (ids not in the index), ``empty`` (texts with no shingles)
        and ``merge_failed`` (why merging segments after the commit failed, else None: the
        commit stands and the merge is tried again after the next one). Ctrl-C
        stops it before the commit it is preparing is made: the commits made stand, the
        rest stays staged."""
    def discard(self) -> None:
        """Drops the staged changes."""
    @property
    def pending(self) -> int:
        """Documents and ids staged and not yet committed."""
    # `kind` names what a query answers (the index's query kinds): one overload per kind.
    @overload
    def query(
        self,
        texts: str,
        *,
        kind: Literal["neighbours"] = "neighbours",
        threshold: Optional[float] = None,
        top: Optional[int] = None,
    ) -> list[_Neighbour]: ...
    @overload
    def query(
        self,
        texts: Any,
        *,
        kind: Literal["neighbours"] = "neighbours",
        threshold: Optional[float] = None,
        top: Optional[int] = None,
    ) -> list[list[_Neighbour]]: ...
    def query_id(
        self,
        id: str,
        *,
        kind: Literal["neighbours"] = "neighbours",
        threshold: Optional[float] = None,
        top: Optional[int] = None,
    ) -> Optional[list[_Neighbour]]:
        """The neighbours of an indexed document (itself left out); None if absent."""
    def compact(self) -> None:
        """Merges every segment into one and drops deleted documents."""
    def refresh(self) -> None:
        """Moves to the last commit now."""
    def ids(self) -> list[str]: ...
    def stats(self) -> dict[str, int]: ...
    @property
    def params(self) -> dict[str, Any]:
        """The parameters the index is pinned to, as `neardup.Config` takes them."""
    @property
    def generation(self) -> int: ...
    @property
    def path(self) -> Path: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: str, /) -> bool: ...
    def __enter__(self) -> Index: ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool: ...

# A neighbour: (id, similarity); in a containment index (id, containment, inside, jaccard),
# inside "query" or "document".
_Neighbour = Union[tuple[str, float], tuple[str, float, str, float]]

# The tasks of neardup.spark.
def spark_sketch(
    config: _Config, positions: Any, texts: Any, parts: int, threads: Optional[int]
) -> tuple[_Buffer, _Buffer, _Buffer, _Buffer]: ...
def spark_clusters(
    config: _Config,
    components: Any,
    positions: Any,
    texts: Any,
    threads: Optional[int],
    reference_below: int = ...,
) -> list[tuple[str, _Buffer]]: ...
def spark_components(u: Any, v: Any) -> tuple[_Buffer, _Buffer]: ...
@final
class _BucketWalk:
    def __new__(cls, blocks: Any, mode: str) -> _BucketWalk: ...
    def __iter__(self) -> _BucketWalk: ...
    def __next__(self) -> tuple[_Buffer, _Buffer, _Buffer]: ...
