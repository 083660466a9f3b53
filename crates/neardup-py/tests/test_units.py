"""`neardup.dedup_units`: repeated units removed below the document, as `dedup --unit`."""

import json
import os
import subprocess

import pytest

import neardup

BANNER = "We use cookies to remember your basket. By staying you accept them."


def test_paragraphs_repeated_are_removed_with_character_offsets():
    texts = [
        f"Über uns\n\n{BANNER}",
        f"日本語のページ。\n\n{BANNER}\n\nEnde.",
        BANNER,
    ]
    out = neardup.dedup_units(texts)
    assert out[0] == (texts[0], [])
    text, spans = out[1]
    assert text == "日本語のページ。\n\nEnde."
    (start, end, doc), = spans
    assert texts[1][start:end] == BANNER and doc == 0
    assert start == len("日本語のページ。\n\n")
    assert out[2] == (None, [(0, len(BANNER), 0)])


@pytest.mark.parametrize(
    "unit, texts, kept",
    [
        ("line", ["menu\nfirst\nfooter", "menu\nsecond\nfooter"], "second"),
        ("sentences:1", ["One. Two. Three.", "Four. Two. Three."], "Four."),
        ("sentences:2", ["One. Two. Three.", "One. Two. Five."], "Five."),
    ],
)
def test_every_unit_kind(unit, texts, kept):
    assert neardup.dedup_units(texts, unit=unit)[1][0] == kept


def test_near_mode_short_units_and_counts():
    a = "Sign up for our newsletter to receive weekly updates about new products and offers"
    b = "Sign up for our newsletter to receive weekly updates about new products and deals"
    texts = [f"one\n\n{a}", f"two\n\n{b}"]
    assert neardup.dedup_units(texts)[1][1] == []
    assert neardup.dedup_units(texts, threshold=0.7)[1] == ("two", [(5, 5 + len(b), 0)])
    short = ["ok\nlong line here", "ok\nlong line here"]
    assert neardup.dedup_units(short, unit="line", min_unit_chars=5)[1][0] == "ok"
    thrice = ["x line", "x line", "x line"]
    assert neardup.dedup_units(thrice, unit="line", max_unit_count=3)[2][1] == []
    assert neardup.dedup_units(thrice, unit="line", max_unit_count=2)[2][0] is None


def test_empty_input_and_bad_unit():
    assert neardup.dedup_units([]) == []
    assert neardup.dedup_units(["", " \n\n "]) == [("", []), (" \n\n ", [])]
    with pytest.raises(neardup.NeardupError, match="sentences:N"):
        neardup.dedup_units(["a"], unit="words")


def test_same_as_the_command(tmp_path):
    texts = [f"Intro {i}.\n\n{BANNER}\n\nBody {i % 2}." for i in range(4)]
    path = tmp_path / "pages.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    cli = subprocess.run(
        [os.environ["NEARDUP_BIN"], "dedup", "--unit", "paragraph", str(path), "-q"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    from_cli = [json.loads(line)["text"] for line in cli.splitlines()]
    assert from_cli == [t for t, _ in neardup.dedup_units(texts) if t is not None]


def test_the_text_the_keep_policy_ranks_first_keeps_the_unit():
    texts = ["a\nshared line", "shared line\nlonger text here", "shared line"]

    def keeper(**kw):
        out = neardup.dedup_units(texts, unit="line", **kw)
        return {doc for _, spans in out for (_, _, doc) in spans}

    assert keeper() == {0}
    assert keeper(keep="last") == {2}
    assert keeper(keep="longest") == {1}
    assert keeper(keep="shortest") == {2}
    assert keeper(keep="longest", threshold=0.9) == {1}
    with pytest.raises(ValueError):
        neardup.dedup_units(texts, keep="biggest")


def test_a_reference_loses_nothing_and_its_units_are_removed_from_the_others():
    texts = ["licence\nold", "new\nlicence", "old"]
    out = neardup.dedup_units(texts, unit="line", reference=1, keep="last")
    assert out[0] == (texts[0], [])
    assert out[1] == ("new", [(4, 11, 0)])
    assert out[2] == (None, [(0, 3, 0)])
