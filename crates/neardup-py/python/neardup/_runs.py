"""The module's functions: whole runs and building blocks, each with its settings as
keyword arguments (defaults as the `neardup` command's, the library's own constants). Each
makes its `Config` from its arguments by name (`Config._of`) and calls the method of the
same name; keep a `Config` to reuse or ship settings."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ._config import Config
from ._neardup import (
    DEFAULT_HAMMING,
    DEFAULT_MAX_SHINGLES,
    DEFAULT_NUM_PERM,
    DEFAULT_SEED,
    DEFAULT_SHINGLE,
    DEFAULT_THRESHOLD,
)
from ._output import Output


def pairs(
    texts: Any,
    ids: Any = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    shingle: str = DEFAULT_SHINGLE,
    normalize: str = "nfkc",
    num_perm: int = DEFAULT_NUM_PERM,
    seed: int = DEFAULT_SEED,
    sketch: str = "oph",
    bands: Optional[int] = None,
    rows: Optional[int] = None,
    verify: str = "exact",
    neighbours: bool = True,
    max_shingles: int = DEFAULT_MAX_SHINGLES,
    multiset: bool = False,
    hamming: int = DEFAULT_HAMMING,
    measure: str = "jaccard",
    exact: bool = False,
    output: Output = "list",
    threads: Optional[int] = None,
    text_col: Optional[str] = None,
    reference: Any = None,
    reference_ids: Any = None,
) -> Any:
    """Every pair of near-duplicate texts: LSH candidates verified by exact Jaccard (the
    `neardup pairs` command), or with ``exact=True`` every pair at or above the threshold
    by the exact set-similarity join (`neardup pairs --exact`).

    Args:
        texts: a list (or tuple) of str, a NumPy array of str, a pyarrow string array
            (chunked or not), any Arrow producer (an object with ``__arrow_c_stream__`` or
            ``__arrow_c_array__``: a Polars Series or DataFrame, a DuckDB relation, a
            pyarrow Table or RecordBatchReader, a Hugging Face ``Dataset``'s
            ``.data.table``), read a batch at a time in place, its strings never Python
            objects, or any iterable of str. Arrow texts may be ``string``,
            ``large_string``, ``string_view`` or dictionary-encoded. ``None`` (a null) is
            a missing text: like an empty one, it pairs with nothing.
        ids: one id per text (any objects); results name documents by them. Default: by
            position in `texts`.
        threshold, shingle, normalize, num_perm, seed, sketch, bands, rows, verify,
            neighbours, max_shingles, multiset, hamming: the run's settings; see `Config`.
        measure: ``"jaccard"``, or ``"containment"``: every text contained at the
            threshold (|A ∩ B| / |A|) in a longer one, by an LSH Ensemble search (every
            candidate verified exactly) or with ``exact=True`` the exact containment join.
            Each pair is then a `Contained` ``(a, b, containment, jaccard)``, `a` the
            contained text (on equal sizes the earlier one), sorted by ``(a, b)``;
            ``"numpy"`` and ``"arrow"`` give columns ``a``, ``b``, ``containment`` and
            ``jaccard``.
        exact: the exact join instead of LSH (the LSH options must stay at their
            defaults).
        output: ``"list"``: ``[(a, b, similarity), ...]`` sorted by the documents'
            positions, similarity being the exact Jaccard (the MinHash estimate where none
            was computed); ``"numpy"``: a dict of arrays ``a``, ``b``, ``jaccard``,
            ``estimate`` (NaN where absent) and ``truncated``; ``"arrow"``: a
            ``pyarrow.Table`` with those columns (nulls where absent).
        threads: worker threads (default: all cores, or ``RAYON_NUM_THREADS``). Results
            do not depend on it.
        text_col: the column of texts when `texts` is a table or data frame (default: its
            only column, else the one named ``"text"``).
        reference: texts already kept (an existing dataset, in any form `texts` takes),
            read first: a reference text is never removed, never listed as a duplicate
            and always kept in its cluster; a text is removed when it duplicates a
            reference text or an earlier kept text, and then names the reference one.
            Pairs of two reference texts are left out. Positions then count the reference
            first (``reference[i]`` is i, ``texts[j]`` is ``len(reference) + j``), as the
            command numbers ``--reference`` records; dedup and annotate give the texts'
            rows only.
        reference_ids: the reference's ids, given with `ids` (both or neither).

    Every pair has ``a`` before ``b`` in input order. Identical texts (after
    normalization) pair with Jaccard 1.

    >>> import neardup
    >>> neardup.pairs(["a red apple on the table", "A red apple on the table!", "pears"])
    [(0, 1, 0.9523809523809523)]
    """
    config = Config._of(locals())
    return config.pairs(
        texts,
        ids,
        exact=exact,
        output=output,
        threads=threads,
        text_col=text_col,
        reference=reference,
        reference_ids=reference_ids,
    )


def exact_pairs(
    texts: Any,
    ids: Any = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    shingle: str = DEFAULT_SHINGLE,
    normalize: str = "nfkc",
    max_shingles: int = DEFAULT_MAX_SHINGLES,
    multiset: bool = False,
    output: Output = "list",
    threads: Optional[int] = None,
    text_col: Optional[str] = None,
) -> Any:
    """Every pair with Jaccard >= threshold, found by the exact set-similarity join (no
    sketch, no misses): `pairs(..., exact=True)`, the ground truth LSH is measured against.
    Arguments and results as for `pairs`."""
    config = Config._of(locals())
    return config.pairs(texts, ids, exact=True, output=output, threads=threads, text_col=text_col)


def clusters(
    texts: Any,
    ids: Any = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    shingle: str = DEFAULT_SHINGLE,
    normalize: str = "nfkc",
    num_perm: int = DEFAULT_NUM_PERM,
    seed: int = DEFAULT_SEED,
    sketch: str = "oph",
    bands: Optional[int] = None,
    rows: Optional[int] = None,
    verify: str = "exact",
    keep: str = "first",
    neighbours: bool = True,
    max_shingles: int = DEFAULT_MAX_SHINGLES,
    multiset: bool = False,
    hamming: int = DEFAULT_HAMMING,
    measure: str = "jaccard",
    allow_truncated: bool = False,
    exact: bool = False,
    output: Output = "list",
    threads: Optional[int] = None,
    text_col: Optional[str] = None,
    reference: Any = None,
    reference_ids: Any = None,
) -> Any:
    """Clusters of near-duplicates (the `neardup clusters` command): in each, the document
    kept (by `keep`) and the documents removed as its duplicates, each verified against
    that very document (a chain A ~ B ~ C with A !~ C is split).

    Arguments as for `pairs`, and `keep`, `allow_truncated` (see `Config`);
    ``measure="containment"`` is refused (`NeardupError`): a fragment inside two unrelated
    pages does not make the pages one cluster.

    Returns, for ``output="list"``, ``[[kept, duplicate, ...], ...]`` (ids, or positions)
    in order of the kept document, duplicates in input order; for ``"numpy"`` a dict of
    arrays and for ``"arrow"`` a ``pyarrow.Table``, one row per document in a cluster,
    the kept one first: ``id``, ``cluster`` (its index in the list form), ``kept``,
    ``duplicate_of`` (the kept document; in NumPy a kept row names itself, in Arrow it is
    null), ``jaccard``, ``estimate`` and ``truncated``.

    >>> import neardup
    >>> neardup.clusters(["a red apple on the table", "pears", "A red apple on the table!"])
    [[0, 2]]
    """
    config = Config._of(locals())
    return config.clusters(
        texts,
        ids,
        exact=exact,
        output=output,
        threads=threads,
        text_col=text_col,
        reference=reference,
        reference_ids=reference_ids,
    )


def dedup(
    texts: Any,
    ids: Any = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    shingle: str = DEFAULT_SHINGLE,
    normalize: str = "nfkc",
    num_perm: int = DEFAULT_NUM_PERM,
    seed: int = DEFAULT_SEED,
    sketch: str = "oph",
    bands: Optional[int] = None,
    rows: Optional[int] = None,
    verify: str = "exact",
    keep: str = "first",
    neighbours: bool = True,
    max_shingles: int = DEFAULT_MAX_SHINGLES,
    multiset: bool = False,
    hamming: int = DEFAULT_HAMMING,
    measure: str = "jaccard",
    allow_truncated: bool = False,
    exact: bool = False,
    output: Output = "list",
    threads: Optional[int] = None,
    text_col: Optional[str] = None,
    reference: Any = None,
    reference_ids: Any = None,
) -> Any:
    """What survives deduplication (the `neardup dedup` command): every document that is
    neither removed as a duplicate (see `clusters`) nor empty, in input order.

    Arguments as for `clusters` (``measure="containment"`` is refused likewise). Returns,
    for ``output="list"``, the surviving texts (the input's own objects), or their ids when
    `ids` is given; for ``"numpy"`` a boolean mask over the input (``df[mask]`` keeps the
    survivors); for ``"arrow"`` a ``pyarrow.Table`` of the survivors' ``id`` (or position)
    and ``text``.

    >>> import neardup
    >>> neardup.dedup(["a red apple on the table", "pears", "A red apple on the table!", ""])
    ['a red apple on the table', 'pears']
    """
    config = Config._of(locals())
    return config.dedup(
        texts,
        ids,
        exact=exact,
        output=output,
        threads=threads,
        text_col=text_col,
        reference=reference,
        reference_ids=reference_ids,
    )


def annotate(
    texts: Any,
    ids: Any = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    shingle: str = DEFAULT_SHINGLE,
    normalize: str = "nfkc",
    num_perm: int = DEFAULT_NUM_PERM,
    seed: int = DEFAULT_SEED,
    sketch: str = "oph",
    bands: Optional[int] = None,
    rows: Optional[int] = None,
    verify: str = "exact",
    keep: str = "first",
    neighbours: bool = True,
    max_shingles: int = DEFAULT_MAX_SHINGLES,
    multiset: bool = False,
    hamming: int = DEFAULT_HAMMING,
    measure: str = "jaccard",
    allow_truncated: bool = False,
    exact: bool = False,
    output: Output = "arrow",
    threads: Optional[int] = None,
    text_col: Optional[str] = None,
    reference: Any = None,
    reference_ids: Any = None,
) -> Any:
    """Every document marked instead of removed (the `neardup annotate` command): one row
    per text, in input order, with the columns

    - ``cluster``: the position of its cluster's kept document (its own when it is in no
      cluster);
    - ``cluster_size``: the documents in that cluster (1 in none), to upsample survivors
      by, as FineWeb-2 does;
    - ``kept``: whether `dedup` keeps it (False for a duplicate, and for an empty or
      missing text, which is skipped: ``kept`` False and every other column null, as
      the command writes it; in NumPy its own position and 1);
    - ``duplicate_of``: the id (or position) of the kept document it duplicates, null if
      none;
    - ``jaccard``: its similarity to that document, null if none.

    Arguments as for `clusters`. Returns, for ``output="arrow"`` (the default), a
    ``pyarrow.Table`` (``pl.from_arrow`` and DuckDB read it in place); for ``"numpy"`` a
    dict of arrays (``duplicate_of`` names the document itself and ``jaccard`` is NaN where
    it duplicates nothing); for ``"list"`` an `Annotation` per text.

    >>> import neardup
    >>> t = neardup.annotate(["a red apple on the table", "pears", "A red apple on the table!"])
    >>> t.column("kept").to_pylist(), t.column("duplicate_of").to_pylist()
    ([True, True, False], [None, None, 0])
    """
    config = Config._of(locals())
    return config.annotate(
        texts,
        ids,
        exact=exact,
        output=output,
        threads=threads,
        text_col=text_col,
        reference=reference,
        reference_ids=reference_ids,
    )


def shingle_sets(
    texts: Any,
    *,
    shingle: str = DEFAULT_SHINGLE,
    normalize: str = "nfkc",
    max_shingles: int = DEFAULT_MAX_SHINGLES,
    multiset: bool = False,
    output: Output = "list",
    threads: Optional[int] = None,
) -> Any:
    """Each text's shingle set: the 64-bit hashes of its normalized shingles, sorted and
    deduplicated (empty for an empty or missing text). A run compares two texts by
    each hash's top 32 bits, its id (``hashes >> 32``), and so does ``jaccard`` of two
    texts; ``jaccard`` of two sets compares their values as given.

    Returns, for ``output="list"``, one uint64 array per text (views of one buffer); for
    ``"numpy"`` ``(offsets, hashes)``, text i's set being ``hashes[offsets[i]:offsets[i+1]]``;
    for ``"arrow"`` a ``pyarrow.LargeListArray`` of uint64.
    """
    config = Config._of(locals())
    return config.shingle_sets(texts, output=output, threads=threads)


def band_keys(
    texts: Any,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    shingle: str = DEFAULT_SHINGLE,
    normalize: str = "nfkc",
    num_perm: int = DEFAULT_NUM_PERM,
    seed: int = DEFAULT_SEED,
    sketch: str = "oph",
    bands: Optional[int] = None,
    rows: Optional[int] = None,
    max_shingles: int = DEFAULT_MAX_SHINGLES,
    multiset: bool = False,
    threads: Optional[int] = None,
) -> np.ndarray:
    """Each text's LSH band keys, for an engine that groups documents itself (a Spark
    ``groupBy``, a database index): a uint64 matrix of documents x (families x bands).

    Column ``f * bands + j`` is band j of sketch family f (`Config.families`: with the
    default ``sketch="oph"`` family 0 is the classic sketch of sets under ~64/t shingles and
    family 1 the one-permutation sketch of sets from 64, so a document may have keys in
    both). 0 means no key (the document is not in that family, or is empty); a key that
    happened to be 0 is given as 1. Two documents are candidates when they share a nonzero
    key in the same column; `verify` then confirms them. The keys are the library's own:
    grouping them gives the candidates of a `pairs` run (its checks beyond the buckets
    aside), whatever engine does the grouping.
    """
    config = Config._of(locals())
    return config.band_keys(texts, threads=threads)


def jaccard(
    a: Any,
    b: Any,
    *,
    shingle: str = DEFAULT_SHINGLE,
    normalize: str = "nfkc",
    max_shingles: int = DEFAULT_MAX_SHINGLES,
    multiset: bool = False,
) -> float:
    """The exact Jaccard similarity of two texts' shingle sets, or of two shingle sets
    given as arrays of hashes (as `shingle_sets` gives them, in any order). 0 when either
    is empty.

    >>> import neardup
    >>> round(neardup.jaccard("the quick brown fox", "the quick brown fox!"), 3)
    0.938
    """
    config = Config._of(locals())
    return config.jaccard(a, b)


def verify(
    pairs: Any,
    texts: Any,
    ids: Any = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    shingle: str = DEFAULT_SHINGLE,
    normalize: str = "nfkc",
    max_shingles: int = DEFAULT_MAX_SHINGLES,
    multiset: bool = False,
    output: Output = "list",
    threads: Optional[int] = None,
) -> Any:
    """The candidate pairs that are near-duplicates: each pair ``(a, b)`` of positions in
    `texts` (a sequence of pairs or an integer array of shape (n, 2)) judged by exact
    Jaccard against the threshold, as a run judges its candidates (a pair with a text
    longer than `max_shingles` on the whole texts' estimate). Kept pairs come in their
    given order, in the forms of `pairs`.
    """
    config = Config._of(locals())
    return config.verify_pairs(pairs, texts, ids, output=output, threads=threads)
