"""neardup's normalization and character shingling, re-implemented in Python.

The peers are handed the same shingle sets neardup computes, so every tool answers the
same question. Two details keep the Python version equal to the Rust one
(`crates/neardup/src/text/shingle.rs`):

- Whitespace is Rust's `char::is_whitespace` (the Unicode White_Space property), listed
  explicitly: Python's own notion (`str.isspace`, `str.split`) also counts U+001C..U+001F.
- Lowercasing is per character in Rust, so a final capital sigma becomes 'σ'; Python's
  `str.lower` applies the final-sigma rule and would give 'ς'. Mapping 'Σ' to 'σ' first
  removes the only context-dependent rule Python applies.
"""

import re

K = 5

_WHITESPACE = re.compile(
    "[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+"
)


def normalize(text: str) -> str:
    """Unicode lowercase, whitespace runs collapsed to one space, trimmed."""
    return _WHITESPACE.sub(" ", text.replace("Σ", "σ").lower()).strip(" ")


def shingle_set(text: str, k: int = K) -> set:
    """The set of character k-grams of the normalized text.

    As in neardup, a non-empty text of at most k characters is one shingle and an empty
    text has none.
    """
    t = normalize(text)
    n = len(t)
    if n <= k:
        return {t} if n else set()
    return {t[i : i + k] for i in range(n - k + 1)}
