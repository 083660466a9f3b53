"""`Config`: the settings of a run, validated by the library, picklable."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal, Mapping, Optional

import numpy as np

from . import _output
from ._neardup import (
    DEFAULT_HAMMING,
    DEFAULT_MAX_SHINGLES,
    DEFAULT_NUM_PERM,
    DEFAULT_SEED,
    DEFAULT_SHINGLE,
    DEFAULT_THRESHOLD,
    NeardupError,
    _Config,
    band_keys as _band_keys,
    jaccard_sets as _jaccard_sets,
    jaccard_texts as _jaccard_texts,
    run_clusters as _run_clusters,
    run_pairs as _run_pairs,
    shingle_sets as _shingle_sets,
    verify as _verify,
)
from ._output import Output

# The options that only LSH has: the exact join refuses them, as `neardup --exact` does.
_LSH_ONLY = ("num_perm", "sketch", "bands", "rows", "verify", "neighbours", "hamming")


def _form(output: str) -> Literal["list", "columns"]:
    """How the native module hands a result back for an output form."""
    return "list" if output == "list" else "columns"


@dataclass(frozen=True)
class Config:
    """The settings of a run, the same as the `neardup` command's options and defaults.

    Every value is checked by the library when the `Config` is made: a refused one raises
    `NeardupError` with the library's message. A `Config` is immutable, hashable and
    picklable, so it can be sent to Spark or Ray workers; its methods run the library with
    these settings (the module's functions of the same names make one for each call).

    Attributes:
        threshold: Jaccard similarity threshold, 0.01..=1.
        shingle: ``"char:K"`` (K characters) or ``"word:K"`` (K words), K in 1..=1024.
        normalize: ``"none"``, ``"basic"`` (lowercase, whitespace collapsed), ``"nfkc"``
            (Unicode NFKC, then basic) or ``"aggressive"`` (nfkc, accents folded,
            punctuation removed).
        num_perm: MinHash signature length K, 1..=65536.
        seed: seed of the MinHash permutations.
        sketch: ``"oph"`` (one-permutation hashing, the classic sketch below 64 shingles),
            ``"classic"``, or ``"simhash"`` (64-bit SimHash fingerprints; candidates are
            fingerprints at most `hamming` bits apart, verified by exact Jaccard unless
            ``verify="none"``).
        bands, rows: the LSH band plan; both or neither (default: chosen from the
            threshold for high recall, 16 x 8 at 0.8).
        verify: how candidates are confirmed: ``"exact"`` Jaccard, ``"estimate"``,
            ``"triage"`` or ``"none"``.
        keep: which document a cluster keeps: ``"first"``, ``"last"``, ``"longest"`` or
            ``"shortest"``.
        max_shingles: shingle positions compared exactly per document; a pair with a
            longer document is judged on the whole documents' MinHash estimate.
        neighbours: also check pairs beyond the LSH buckets (the largest groups of
            copies, shared verified neighbours).
        allow_truncated: let a pair judged on an estimate (a truncated document) remove a
            document from a cluster.
        multiset: count repeated shingles, so similarities are the weighted Jaccard
            (sum of min / sum of max of the shingles' counts).
        hamming: with ``sketch="simhash"``, the largest Hamming distance of two
            fingerprints that makes them candidates, 0..=16.
        measure: what `threshold` is a threshold of: ``"jaccard"``, or ``"containment"``,
            |A ∩ B| / |A| of the smaller document A in the larger B (a fragment inside a
            longer document). Containment finds pairs (`pairs`: an LSH Ensemble
            search, or with ``exact=True`` the exact containment join), each a `Contained`
            ``(a, b, containment, jaccard)``, `a` the contained document, and makes an
            `Index` a containment index; `clusters`, `dedup`, `band_keys` and
            `verify_pairs` refuse it. It takes no
            `bands`, `rows`, ``neighbours=False`` or other `verify` than ``"exact"``.
    """

    threshold: float = DEFAULT_THRESHOLD
    shingle: str = DEFAULT_SHINGLE
    normalize: str = "nfkc"
    num_perm: int = DEFAULT_NUM_PERM
    seed: int = DEFAULT_SEED
    sketch: str = "oph"
    bands: Optional[int] = None
    rows: Optional[int] = None
    verify: str = "exact"
    keep: str = "first"
    max_shingles: int = DEFAULT_MAX_SHINGLES
    neighbours: bool = True
    allow_truncated: bool = False
    multiset: bool = False
    hamming: int = DEFAULT_HAMMING
    measure: str = "jaccard"
    _native: _Config = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        settings = self._settings()
        # The default distance is left out, as not given: the library refuses a distance
        # given without SimHash (as the command refuses --hamming without --sketch simhash).
        if settings["hamming"] == DEFAULT_HAMMING:
            del settings["hamming"]
        native = _Config(**settings)
        object.__setattr__(self, "_native", native)

    @classmethod
    def _of(cls, arguments: Mapping[str, Any], **fixed: Any) -> Config:
        """The settings among a call's `arguments` (its ``locals()``: every name that is
        a setting, the others ignored), with `fixed` ones on top. Every function of the
        package that takes settings as keywords makes its `Config` here, so a setting is
        passed on by its name alone."""
        settings = {k: v for k, v in arguments.items() if k in _SETTINGS}
        return cls(**{**settings, **fixed})

    def _settings(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    def __getstate__(self) -> dict[str, Any]:
        return self._settings()

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        self.__post_init__()

    def replace(self, **changes: Any) -> Config:
        """A copy with some settings changed."""
        return Config(**{**self._settings(), **changes})

    @property
    def plan(self) -> tuple[int, int]:
        """The band plan the runs use: (bands, rows)."""
        return (self._native.bands, self._native.rows)

    @property
    def families(self) -> int:
        """Sketch families: 2 with ``sketch="oph"`` (classic below 64 shingles,
        one-permutation from 64, overlapping), 1 with ``"classic"``. `band_keys` has
        ``families * bands`` columns."""
        return self._native.families

    def probability(self, similarity: float) -> float:
        """The chance that a pair of this similarity becomes a candidate: for LSH
        1 - (1 - s**rows)**bands; for SimHash, that two sets of equal size are within
        `hamming` bits."""
        return self._native.probability(similarity)

    def _check_exact(self) -> None:
        for name in _LSH_ONLY:
            default = _DEFAULTS[name]
            if getattr(self, name) != default:
                raise NeardupError(
                    f"exact=True finds every pair with the exact join: {name} is an LSH "
                    f"option and does not apply (leave it at {default!r})"
                )

    def _run(
        self,
        run: Any,
        texts: Any,
        ids: Any,
        reference: Any,
        reference_ids: Any,
        exact: bool,
        threads: Optional[int],
        form: str,
        text_col: Optional[str],
    ) -> tuple[Any, Any]:
        """A run of the native module on `texts` (after `reference`, if any): its raw
        result, and the names of every document it numbers (ids, or None for positions)."""
        if exact:
            self._check_exact()
        names = _output.ids_of(ids)
        if reference is not None:
            reference = _output.texts_of(reference)
            if (names is None) != (reference_ids is None):
                raise NeardupError(
                    "with reference=, give ids and reference_ids together (documents are "
                    "named by both), or neither (positions, the reference's first)"
                )
            if names is not None:
                names = list(_output.ids_list(_output.ids_of(reference_ids)) or []) + list(
                    _output.ids_list(names) or []
                )
        elif reference_ids is not None:
            raise NeardupError("reference_ids names the documents of reference=, which is not given")
        raw = run(
            self._native, _output.texts_of(texts), _output.ids_list(names), exact, threads, form, text_col, reference
        )
        return raw, names

    def pairs(
        self,
        texts: Any,
        ids: Any = None,
        *,
        exact: bool = False,
        output: Output = "list",
        threads: Optional[int] = None,
        text_col: Optional[str] = None,
        reference: Any = None,
        reference_ids: Any = None,
    ) -> Any:
        """Every similar pair of `texts`, sorted by position (with
        ``measure="containment"``, every `Contained` pair); see `neardup.pairs`."""
        _output.check_output(output)
        raw, names = self._run(
            _run_pairs, texts, ids, reference, reference_ids, exact, threads, _form(output), text_col
        )
        if self._native.from_smaller:
            return _output.contained(raw, names, output)
        return _output.pairs(raw, names, output)

    def exact_pairs(
        self,
        texts: Any,
        ids: Any = None,
        *,
        output: Output = "list",
        threads: Optional[int] = None,
    ) -> Any:
        """Every pair with Jaccard >= threshold, by the exact join; see `neardup.exact_pairs`."""
        return self.pairs(texts, ids, exact=True, output=output, threads=threads)

    def clusters(
        self,
        texts: Any,
        ids: Any = None,
        *,
        exact: bool = False,
        output: Output = "list",
        threads: Optional[int] = None,
        text_col: Optional[str] = None,
        reference: Any = None,
        reference_ids: Any = None,
    ) -> Any:
        """The clusters of near-duplicates; see `neardup.clusters`."""
        _output.check_output(output)
        raw, names = self._run(
            _run_clusters, texts, ids, reference, reference_ids, exact, threads, _form(output), text_col
        )
        return _output.clusters(raw, names, output)

    def annotate(
        self,
        texts: Any,
        ids: Any = None,
        *,
        exact: bool = False,
        output: Output = "arrow",
        threads: Optional[int] = None,
        text_col: Optional[str] = None,
        reference: Any = None,
        reference_ids: Any = None,
    ) -> Any:
        """Every document's cluster, cluster size, whether it is kept, what it duplicates
        and how closely; see `neardup.annotate`."""
        _output.check_output(output)
        raw, names = self._run(
            _run_clusters, texts, ids, reference, reference_ids, exact, threads, "annotate", text_col
        )
        return _output.annotated(raw, names, output)

    def dedup(
        self,
        texts: Any,
        ids: Any = None,
        *,
        exact: bool = False,
        output: Output = "list",
        threads: Optional[int] = None,
        text_col: Optional[str] = None,
        reference: Any = None,
        reference_ids: Any = None,
    ) -> Any:
        """What survives deduplication; see `neardup.dedup`."""
        _output.check_output(output)
        texts = _output.texts_of(texts)
        ids = _output.ids_of(ids)
        # A stream is read once: the survivors' texts come back with the mask.
        if _output.is_arrow_source(texts) and (output == "arrow" or (output == "list" and ids is None)):
            (mask, kept), _ = self._run(
                _run_clusters, texts, ids, reference, reference_ids, exact, threads, "survivor_texts", text_col
            )
            return _output.survivor_texts(mask, kept, ids, output)
        mask, _ = self._run(
            _run_clusters, texts, ids, reference, reference_ids, exact, threads, "survivors", text_col
        )
        return _output.survivors(mask, texts, ids, output)

    def shingle_sets(
        self, texts: Any, *, output: Output = "list", threads: Optional[int] = None
    ) -> Any:
        """Each text's shingle set; see `neardup.shingle_sets`."""
        _output.check_output(output)
        starts, values = _shingle_sets(self._native, _output.texts_of(texts), threads)
        offsets, hashes = np.asarray(starts), np.asarray(values)
        if output == "numpy":
            return offsets, hashes
        if output == "arrow":
            pa = _output.pyarrow()
            return pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(hashes))
        return np.split(hashes, offsets[1:-1]) if len(offsets) > 1 else []

    def band_keys(self, texts: Any, *, threads: Optional[int] = None) -> np.ndarray:
        """Each text's LSH band keys; see `neardup.band_keys`."""
        return np.asarray(_band_keys(self._native, _output.texts_of(texts), threads))

    def jaccard(self, a: Any, b: Any) -> float:
        """The exact Jaccard similarity of two texts (or two shingle sets); see
        `neardup.jaccard`."""
        if isinstance(a, str) and isinstance(b, str):
            return _jaccard_texts(self._native, a, b)
        if isinstance(a, str) or isinstance(b, str):
            raise TypeError("jaccard compares two texts or two shingle sets, not one of each")
        sets = [np.ascontiguousarray(x, dtype=np.uint64) for x in (a, b)]
        for s in sets:
            if s.ndim != 1:
                raise NeardupError(f"a shingle set is one-dimensional, got shape {s.shape}")
        return _jaccard_sets(sets[0], sets[1])

    def verify_pairs(
        self,
        pairs: Any,
        texts: Any,
        ids: Any = None,
        *,
        output: Output = "list",
        threads: Optional[int] = None,
    ) -> Any:
        """The candidate pairs that pass verification; see `neardup.verify`."""
        _output.check_output(output)
        array = _output.pair_array(pairs)
        ids = _output.ids_of(ids)
        form = _form(output)
        raw = _verify(
            self._native, _output.texts_of(texts), array, _output.ids_list(ids), threads, form
        )
        return _output.pairs(raw, ids, output)


# The names of the settings and their defaults.
_DEFAULTS = {f.name: f.default for f in fields(Config) if f.init}
_SETTINGS = frozenset(_DEFAULTS)
