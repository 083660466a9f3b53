"""neardup: find near-duplicate texts, fast and verified.

Shingles, MinHash (one-permutation hashing), LSH banding, then exact Jaccard verification
of every candidate, by the Rust library behind the `neardup` command. Every call that works
on texts releases the GIL and runs on all cores; results do not depend on the number of
threads.

Whole runs (the command's `pairs`, `clusters`, `dedup`, `annotate`, `pairs --exact`; fragments inside
longer texts with ``pairs(texts, measure="containment")``, each pair a `Contained`):

>>> import neardup
>>> texts = ["a red apple on the table", "pears", "A red apple on the table!"]
>>> neardup.pairs(texts)
[(0, 2, 0.9523809523809523)]
>>> neardup.clusters(texts, ids=["x", "y", "z"])
[['x', 'z']]

`decontaminate` finds test items (benchmark records) inside documents, with the spans
holding them (the command's ``decontaminate``).

Below the document (the command's ``dedup --unit``): `dedup_units` removes repeated
paragraphs, lines or sentence spans.

Building blocks for engines of your own: `shingle_sets`, `band_keys`, `jaccard`,
`verify`. For people moving from datasketch: `MinHash` and `MinHashLSH`. A persistent
index shared by processes: `Index`. Settings: `Config` (picklable, for Spark and Ray
workers); its defaults, the library's own, are the ``DEFAULT_*`` constants. Errors: `NeardupError` (a refused value, a `ValueError`) and `IndexFileError`
(an index's files, an `OSError`); a value of the wrong type is a `TypeError`.
"""

from ._config import Config
from ._output import Annotation, Contained
from ._lsh import MinHashLSH
from ._lshensemble import MinHashLSHEnsemble
from ._lshforest import MinHashLSHForest
from ._neardup import (
    DEFAULT_HAMMING,
    DEFAULT_MAX_SHINGLES,
    DEFAULT_NUM_PERM,
    DEFAULT_SEED,
    DEFAULT_SHINGLE,
    DEFAULT_THRESHOLD,
    MIN_THRESHOLD,
    Index,
    IndexFileError,
    MinHash,
    NeardupError,
    __version__,
    sha1_hash32,
    sha1_hash64,
)
from ._decontaminate import Contamination, Decontamination, decontaminate
from ._units import dedup_units
from ._sketches import LeanMinHash, WeightedMinHash, WeightedMinHashGenerator, bBitMinHash
from ._runs import (
    annotate,
    band_keys,
    clusters,
    dedup,
    exact_pairs,
    jaccard,
    pairs,
    shingle_sets,
    verify,
)

__all__ = [
    "Annotation",
    "Config",
    "Contained",
    "Contamination",
    "DEFAULT_HAMMING",
    "DEFAULT_MAX_SHINGLES",
    "DEFAULT_NUM_PERM",
    "DEFAULT_SEED",
    "DEFAULT_SHINGLE",
    "DEFAULT_THRESHOLD",
    "Decontamination",
    "Index",
    "IndexFileError",
    "MIN_THRESHOLD",
    "LeanMinHash",
    "MinHash",
    "MinHashLSH",
    "MinHashLSHEnsemble",
    "MinHashLSHForest",
    "NeardupError",
    "WeightedMinHash",
    "WeightedMinHashGenerator",
    "__version__",
    "annotate",
    "bBitMinHash",
    "band_keys",
    "clusters",
    "dedup",
    "dedup_units",
    "decontaminate",
    "exact_pairs",
    "jaccard",
    "pairs",
    "sha1_hash32",
    "sha1_hash64",
    "shingle_sets",
    "verify",
]
