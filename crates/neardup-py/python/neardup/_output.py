"""Inputs made ready for the native module, and its results in the form asked for."""

from __future__ import annotations

import itertools
from typing import Any, Literal, NamedTuple, Optional, Sequence

import numpy as np

from ._neardup import NeardupError

Output = Literal["list", "numpy", "arrow"]
OUTPUTS = ("list", "numpy", "arrow")


def check_output(output: str) -> None:
    if output not in OUTPUTS:
        raise NeardupError(f"output must be 'list', 'numpy' or 'arrow', got {output!r}")


def pyarrow() -> Any:
    try:
        import pyarrow  # type: ignore[import-untyped]
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("output='arrow' needs pyarrow: pip install pyarrow") from e
    return pyarrow


def _is_array(x: Any) -> bool:
    """A NumPy array or a pyarrow (chunked) array: read as it is, never as a list."""
    if isinstance(x, np.ndarray):
        return True
    module = type(x).__module__ or ""
    # A Table or a RecordBatch has a schema: a producer of columns, not an array.
    return module.startswith("pyarrow") and hasattr(x, "to_pylist") and not hasattr(x, "schema")


def is_arrow_source(x: Any) -> bool:
    """An Arrow producer other than a pyarrow array (a Polars Series or DataFrame, a DuckDB
    relation, a pyarrow Table or RecordBatchReader): read through the Arrow PyCapsule
    interface, a batch at a time by the runs, its strings never Python objects."""
    if isinstance(x, (list, tuple, str, bytes)) or _is_array(x):
        return False
    return hasattr(x, "__arrow_c_stream__") or hasattr(x, "__arrow_c_array__")


def _is_hf_dataset(x: Any) -> bool:
    """A Hugging Face `datasets.Dataset` (held as Arrow tables, which it lends)."""
    return (type(x).__module__ or "").startswith("datasets") and hasattr(x, "with_format")


def texts_of(texts: Any) -> Any:
    """The texts as the native module reads them: lists, tuples, arrays and other Arrow
    producers as they are, any other iterable (a generator, a pandas Series) as a list, so
    it can be read twice."""
    if isinstance(texts, (list, tuple, str, bytes)) or _is_array(texts) or is_arrow_source(texts):
        return texts
    if _is_hf_dataset(texts):
        # Its rows as one Arrow table (its indices applied), its columns not copied.
        return texts.with_format("arrow")[:]
    if not hasattr(texts, "__iter__"):
        raise TypeError(
            "texts must be a list of str, a NumPy array of str or a pyarrow string array, "
            f"not {type(texts).__name__} (or any object with __arrow_c_stream__: a Polars "
            "Series, a DuckDB relation)"
        )
    return list(texts)


def ids_of(ids: Any) -> Any:
    """Ids kept as they are when they can be read twice (a list, a NumPy or pyarrow
    array), else as a list."""
    if ids is None or isinstance(ids, list) or _is_array(ids):
        return ids
    if isinstance(ids, (str, bytes)):
        raise TypeError("ids must be a sequence with one id per text, not one str")
    return list(ids)


def ids_list(ids: Any) -> list[Any] | None:
    """Ids (from `ids_of`) as a list, for results made of Python objects."""
    if ids is None or isinstance(ids, list):
        return ids
    values: list[Any] = ids.tolist() if isinstance(ids, np.ndarray) else ids.to_pylist()
    return values


def _take(ids: Any, positions: np.ndarray) -> Any:
    """The ids at `positions` (the positions themselves when there are no ids)."""
    if ids is None:
        return positions
    if hasattr(ids, "to_pylist") and not isinstance(ids, np.ndarray):
        return ids.take(positions)
    return np.asarray(ids)[positions]


def _arrow_column(values: Any) -> Any:
    pa = pyarrow()
    return values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values)


def _nullable(values: np.ndarray) -> Any:
    """A float column with NaN as null, for pyarrow."""
    pa = pyarrow()
    return pa.array(values, mask=np.isnan(values))


def pairs(raw: Any, ids: Any, output: str) -> Any:
    if output == "list":
        return raw
    cols = {k: np.asarray(v) for k, v in raw.items()}
    a, b = _take(ids, cols["a"]), _take(ids, cols["b"])
    if output == "numpy":
        if hasattr(a, "to_numpy"):
            a, b = a.to_numpy(zero_copy_only=False), b.to_numpy(zero_copy_only=False)
        return {"a": a, "b": b, **{k: cols[k] for k in ("jaccard", "estimate", "truncated")}}
    pa = pyarrow()
    return pa.table(
        {
            "a": _arrow_column(a),
            "b": _arrow_column(b),
            "jaccard": _nullable(cols["jaccard"]),
            "estimate": _nullable(cols["estimate"]),
            "truncated": pa.array(cols["truncated"]),
        }
    )


class Contained(NamedTuple):
    """A document `a` contained in a larger document `b` (``measure="containment"``)."""

    a: Any
    """The contained (smaller) document: its id, or its position."""
    b: Any
    """The containing document."""
    containment: float
    """|A ∩ B| / |A| of their shingle sets."""
    jaccard: float
    """|A ∩ B| / |A ∪ B|: low for a fragment of a longer document."""


def contained(raw: Any, ids: Any, output: str) -> Any:
    """A containment run's pairs in the form asked for."""
    if output == "list":
        return [Contained._make(t) for t in raw]
    cols = {k: np.asarray(v) for k, v in raw.items()}
    a, b = _take(ids, cols["a"]), _take(ids, cols["b"])
    if output == "numpy":
        if hasattr(a, "to_numpy"):
            a, b = a.to_numpy(zero_copy_only=False), b.to_numpy(zero_copy_only=False)
        return {"a": a, "b": b, "containment": cols["containment"], "jaccard": cols["jaccard"]}
    pa = pyarrow()
    return pa.table(
        {
            "a": _arrow_column(a),
            "b": _arrow_column(b),
            "containment": pa.array(cols["containment"]),
            "jaccard": pa.array(cols["jaccard"]),
        }
    )


def clusters(raw: Any, ids: Any, output: str) -> Any:
    if output == "list":
        return raw
    cols = {k: np.asarray(v) for k, v in raw.items()}
    doc, of = _take(ids, cols["doc"]), _take(ids, cols["duplicate_of"])
    rest = ("cluster", "kept")
    if output == "numpy":
        if hasattr(doc, "to_numpy"):
            doc, of = doc.to_numpy(zero_copy_only=False), of.to_numpy(zero_copy_only=False)
        return {
            "id": doc,
            **{k: cols[k] for k in rest},
            "duplicate_of": of,
            **{k: cols[k] for k in ("jaccard", "estimate", "truncated")},
        }
    pa = pyarrow()
    kept = cols["kept"]
    # A kept document duplicates nothing.
    if isinstance(of, np.ndarray):
        of = pa.array(of, mask=kept)
    else:
        import pyarrow.compute as pc  # type: ignore[import-untyped]

        of = pc.if_else(pa.array(kept), pa.scalar(None, of.type), of)
    return pa.table(
        {
            "id": _arrow_column(doc),
            "cluster": pa.array(cols["cluster"]),
            "kept": pa.array(kept),
            "duplicate_of": of,
            "jaccard": _nullable(cols["jaccard"]),
            "estimate": _nullable(cols["estimate"]),
            "truncated": pa.array(cols["truncated"]),
        }
    )


def survivors(mask_buffer: Any, texts: Any, ids: Any, output: str) -> Any:
    mask = np.asarray(mask_buffer)
    if output == "numpy":
        return mask
    if output == "list":
        if ids is not None:
            return list(itertools.compress(ids_list(ids) or [], mask.tolist()))
        if isinstance(texts, np.ndarray):
            return texts[mask].tolist()
        if hasattr(texts, "filter") and hasattr(texts, "to_pylist"):
            return texts.filter(pyarrow().array(mask)).to_pylist()
        return list(itertools.compress(texts, mask.tolist()))
    pa = pyarrow()
    kept = np.flatnonzero(mask).astype(np.uint32)
    if isinstance(texts, (pa.Array, pa.ChunkedArray)):
        text = texts.filter(pa.array(mask))
    elif isinstance(texts, np.ndarray):
        text = pa.array(texts[mask])
    else:
        text = pa.array([texts[i] for i in kept.tolist()], type=pa.string())
    return pa.table({"id": _arrow_column(_take(ids, kept)), "text": text})


def survivor_texts(mask_buffer: Any, kept_texts: list[str], ids: Any, output: str) -> Any:
    """`survivors` of texts read from an Arrow stream (read once): the native module hands
    back the surviving texts beside the mask."""
    mask = np.asarray(mask_buffer)
    if output == "list":
        return kept_texts
    pa = pyarrow()
    kept = np.flatnonzero(mask).astype(np.uint32)
    text = pa.array(kept_texts, type=pa.string())
    return pa.table({"id": _arrow_column(_take(ids, kept)), "text": text})


class Annotation(NamedTuple):
    """One document's annotation (`neardup.annotate`)."""

    cluster: Optional[int]
    """The position of its cluster's kept document (its own when it is in no cluster);
    None for an empty or missing text, which is skipped."""
    cluster_size: Optional[int]
    """The number of documents in its cluster (1 in none; None for a skipped text)."""
    kept: bool
    """Whether it survives a dedup: False for a duplicate and for a skipped text."""
    duplicate_of: Any
    """The id (or position) of the kept document it duplicates; None if it duplicates none."""
    jaccard: Optional[float]
    """Its similarity to that document; None if it duplicates none."""


def annotated(raw: Any, ids: Any, output: str) -> Any:
    """The per-document columns of an annotate run in the form asked for."""
    cols = {k: np.asarray(v) for k, v in raw.items()}
    of_self = cols.pop("alone")
    # Not kept and a duplicate of nothing: no text to compare (the command's nulls).
    skipped = of_self & ~cols["kept"]
    of = _take(ids, cols["duplicate_of"])
    if output == "numpy":
        if hasattr(of, "to_numpy"):
            of = of.to_numpy(zero_copy_only=False)
        return {**cols, "duplicate_of": of}
    if output == "list":
        names = ids_list(ids)
        return [
            Annotation(
                None if skip else int(c),
                None if skip else int(size),
                bool(k),
                None if own else (names[d] if names is not None else int(d)),
                None if own else float(j),
            )
            for c, size, k, d, own, skip, j in zip(
                cols["cluster"].tolist(),
                cols["cluster_size"].tolist(),
                cols["kept"].tolist(),
                cols["duplicate_of"].tolist(),
                of_self.tolist(),
                skipped.tolist(),
                cols["jaccard"].tolist(),
            )
        ]
    pa = pyarrow()
    if isinstance(of, np.ndarray):
        of = pa.array(of, mask=of_self)
    else:
        import pyarrow.compute as pc

        of = pc.if_else(pa.array(of_self), pa.scalar(None, of.type), of)
    return pa.table(
        {
            "cluster": pa.array(cols["cluster"], mask=skipped),
            "cluster_size": pa.array(cols["cluster_size"], mask=skipped),
            "kept": pa.array(cols["kept"]),
            "duplicate_of": of,
            "jaccard": _nullable(cols["jaccard"]),
        }
    )


def pair_array(pairs: Any) -> np.ndarray:
    """Candidate pairs as a contiguous int64 array of rows (a, b)."""
    if isinstance(pairs, np.ndarray):
        array = pairs
    else:
        rows: Sequence[Any] = list(pairs)
        array = np.asarray(rows if rows else np.zeros((0, 2)), dtype=np.int64)
    if array.ndim != 2 or array.shape[1] != 2:
        raise NeardupError(
            f"pairs must be rows (a, b): a sequence of pairs or an array of shape (n, 2), "
            f"got shape {array.shape}"
        )
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"pairs must hold document positions (integers), not {array.dtype}")
    return np.ascontiguousarray(array, dtype=np.int64)
