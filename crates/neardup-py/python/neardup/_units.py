"""`dedup_units`: repeated paragraphs, lines and sentence spans removed below the
document (the command's ``dedup --unit``)."""

from __future__ import annotations

from typing import Iterable, Optional

from ._config import Config
from ._neardup import DEFAULT_SHINGLE, DEFAULT_THRESHOLD
from ._neardup import units_dedup as _units_dedup


def dedup_units(
    texts: Iterable[str],
    *,
    unit: str = "paragraph",
    threshold: Optional[float] = None,
    normalize: str = "nfkc",
    shingle: str = DEFAULT_SHINGLE,
    min_unit_chars: int = 0,
    max_unit_count: Optional[int] = None,
    keep: str = "first",
    reference: int = 0,
) -> list[tuple[Optional[str], list[tuple[int, int, int]]]]:
    """Each text without the units (``"paragraph"``: text between blank lines,
    ``"line"``, or ``"sentences:N"``: spans of N sentences) seen earlier in `texts`.

    A unit is compared after `normalize`, exactly (hash, then the texts compared: no
    false positives); with `threshold`, as a near-duplicate at that Jaccard similarity
    of its `shingle` shingles, verified exactly. Units of fewer than `min_unit_chars`
    characters are left alone; with `max_unit_count` K, a unit's repeats are removed only
    if it occurs more than K times. The first occurrence always stays: first in the
    order of `keep` (``"first"``, ``"last"``, ``"longest"``, ``"shortest"``: the text that
    policy ranks first keeps a repeated unit, as a cluster keeps its document). The first
    `reference` texts are a reference corpus: they come before all, lose nothing, and
    every unit they hold is removed from the others.

    Returns, per text in order, its new text (every kept unit's characters unchanged,
    with the separator after it; ``None`` if every unit was removed) and its removed
    units as ``(start, end, doc)``: ``text[start:end]`` is the unit, `doc` the index of
    the text holding the unit it repeats.

    >>> import neardup
    >>> pages = ["Hello.\\n\\nWe use cookies.", "Prices.\\n\\nWe use  COOKIES.\\n"]
    >>> neardup.dedup_units(pages)
    [('Hello.\\n\\nWe use cookies.', []), ('Prices.\\n', [(9, 25, 0)])]
    """
    config = Config(
        threshold=DEFAULT_THRESHOLD if threshold is None else threshold,
        shingle=shingle,
        normalize=normalize,
    )
    return _units_dedup(
        config._native,
        list(texts),
        unit,
        threshold is not None,
        min_unit_chars,
        max_unit_count,
        keep,
        reference,
    )
