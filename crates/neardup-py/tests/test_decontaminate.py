"""`neardup.decontaminate`: test items inside documents, as `neardup decontaminate`."""

import pytest

import neardup

LONG = (
    "The committee met on a cold Tuesday morning to decide whether the old bridge "
    "over the river should close today"
)


def test_an_item_inside_a_document_with_character_spans():
    doc = f"日本語 — «{LONG.upper()}» ✓"
    result = neardup.decontaminate(["nothing here", doc], [LONG])
    (hit,) = result.found
    assert (hit.document, hit.item, hit.containment, hit.matched, hit.ngrams) == (1, 0, 1.0, 8, 8)
    start, end = hit.spans[0]
    assert doc[start:end] == LONG.upper()


def test_an_item_across_two_documents_and_an_item_inside_another():
    words = LONG.split(" ")
    halves = [" ".join(words[:15]), " ".join(words[2:])]
    inner = " ".join(words[3:17])
    result = neardup.decontaminate(halves + [LONG], [LONG, inner], min_overlap=0.3)
    found = [(f.document, f.item, f.containment) for f in result.found]
    assert found == [(0, 0, 0.375), (1, 0, 0.75), (1, 1, 1.0), (2, 0, 1.0), (2, 1, 1.0)]


def test_short_items_are_counted_and_checked_whole_or_not_at_all():
    tests = [LONG, "Which planet has the most moons in the sky", "Name three colours."]
    result = neardup.decontaminate(["which planet has the most moons", "name three colours"], tests)
    assert (result.short, result.unchecked) == (1, 1)
    assert result.found == []


def test_bad_settings_are_refused():
    with pytest.raises(neardup.NeardupError, match="n-gram"):
        neardup.decontaminate(["a"], ["b"], ngram=5, min_ngram=6)
    with pytest.raises(neardup.NeardupError, match="overlap"):
        neardup.decontaminate(["a"], ["b"], min_overlap=1.5)
