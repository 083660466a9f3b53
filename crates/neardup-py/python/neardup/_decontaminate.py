"""`decontaminate`: which test items (benchmark records) occur inside which texts (the
command's ``neardup decontaminate``)."""

from __future__ import annotations

from typing import Iterable, NamedTuple

from ._neardup import decontaminate_texts as _decontaminate_texts


class Contamination(NamedTuple):
    """One test item found inside one document."""

    document: int
    """The document's index in `documents`."""
    item: int
    """The item's index in `tests`."""
    containment: float
    """The share of the item's distinct n-grams found in the document."""
    matched: int
    """The item's distinct n-grams found in the document."""
    ngrams: int
    """The item's distinct n-grams."""
    spans: list[tuple[int, int]]
    """``(start, end)`` character offsets: ``document[start:end]`` holds the n-grams found."""


class Decontamination(NamedTuple):
    """What `decontaminate` found, and how many items it checked whole or not at all."""

    found: list[Contamination]
    """Every item found inside a document, by document then item."""
    short: int
    """Items shorter than `ngram` words, checked as one n-gram of all their words."""
    unchecked: int
    """Items shorter than `min_ngram` words, not checked."""


def decontaminate(
    documents: Iterable[str],
    tests: Iterable[str],
    *,
    ngram: int = 13,
    min_ngram: int = 8,
    min_overlap: float = 0.5,
) -> Decontamination:
    """The test items of `tests` that occur inside each of `documents`.

    Texts are Unicode words (punctuation ignored), lowercased. An item is looked up by
    its word `ngram`-grams (13, as lm-eval-harness), every hit confirmed word for word;
    it is reported when the document holds at least `min_overlap` of its distinct
    n-grams (0: any one, lm-eval-harness's rule). An item shorter than `ngram` words but
    of at least `min_ngram` is one n-gram of all its words (GPT-3's and NeMo Curator's
    rule); a shorter one is not checked, and counted.

    >>> import neardup
    >>> tests = ["Which planet in our solar system has the most moons?"]
    >>> docs = ["Trivia night. which planet in our solar system has the MOST moons! Saturn."]
    >>> result = neardup.decontaminate(docs, tests)
    >>> hit = result.found[0]
    >>> (hit.document, hit.item, hit.containment, result.short)
    (0, 0, 1.0, 1)
    >>> start, end = hit.spans[0]
    >>> docs[0][start:end]
    'which planet in our solar system has the MOST moons'
    """
    found, short, unchecked = _decontaminate_texts(
        list(tests), list(documents), ngram, min_ngram, min_overlap
    )
    return Decontamination([Contamination(*f) for f in found], short, unchecked)
