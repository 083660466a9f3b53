"""`MinHash` and `MinHashLSH` behave as datasketch users expect, with exact answers."""

from __future__ import annotations

import random
import sys
import threading
from typing import Any

import numpy as np
import pytest

import neardup
from neardup import MinHash, MinHashLSH
from conftest import corpus


def words(text: str) -> MinHash:
    m = MinHash(num_perm=128)
    for w in text.split():
        m.update(w.encode("utf8"))
    return m


SET1 = ["minhash", "is", "a", "probabilistic", "data", "structure", "for", "estimating",
        "the", "similarity", "between", "datasets"]
SET2 = ["minhash", "is", "a", "probability", "data", "structure", "for", "estimating",
        "the", "similarity", "between", "documents"]


def test_the_datasketch_example() -> None:
    m1, m2 = MinHash(num_perm=128), MinHash(num_perm=128)
    for d in SET1:
        m1.update(d.encode("utf8"))
    for d in SET2:
        m2.update(d.encode("utf8"))
    exact = len(set(SET1) & set(SET2)) / len(set(SET1) | set(SET2))
    # jaccard is datasketch's estimate (#36); the exact similarity has its own name.
    assert m1.exact_jaccard(m2) == exact
    assert abs(m1.jaccard(m2) - exact) < 0.2
    assert len(m1.hashes()) == len(set(SET1))
    assert abs(m1.count() - len(set(SET1))) < 5


def test_update_forms_agree() -> None:
    a, b, c, d = MinHash(), MinHash(), MinHash(), MinHash()
    for w in SET1:
        a.update(w.encode())
        b.update(w)  # a str is its UTF-8 bytes
        c.update(bytearray(w.encode()))
    d.update_batch([w.encode() for w in SET1 + SET1])  # repeats count once
    assert a == b == c == d
    assert a.digest().tolist() == d.digest().tolist()


def test_from_text_is_the_library_shingle_set() -> None:
    texts = corpus(50, seed=5)
    sets = neardup.shingle_sets(texts)
    many = MinHash.from_texts(texts)
    for text, s, m in zip(texts, sets, many):
        assert m.hashes().tolist() == s.tolist()
        assert MinHash.from_text(text) == m
        assert m.exact_jaccard(many[0]) == neardup.jaccard(text, texts[0])
    hashes = MinHash(sketch="oph")
    hashes.update_hashes(sets[3])
    assert hashes.hashes().tolist() == sets[3].tolist()


def test_digest_and_estimate() -> None:
    rng = np.random.default_rng(1)
    base = rng.integers(0, 2**63, 400, dtype=np.uint64)
    a, b = MinHash(sketch="oph"), MinHash(sketch="oph")
    a.update_hashes(base[:300])
    b.update_hashes(base[100:])
    assert a.digest().dtype == np.uint64 and len(a.digest()) == 128 == len(a)
    assert a.exact_jaccard(b) == 0.5
    # The estimate's standard deviation at J = 0.5, K = 128 is 0.044.
    assert abs(a.estimate(b) - 0.5) < 0.2
    classic = MinHash(sketch="classic")
    classic.update_hashes(base[:300])
    assert classic.digest().tolist() != a.digest().tolist()
    with pytest.raises(ValueError, match="different permutation schemes"):
        a.estimate(classic)
    with pytest.raises(ValueError, match="different numbers of permutation functions"):
        a.estimate(MinHash(num_perm=64, sketch="oph"))


def test_merge_union_copy_clear() -> None:
    a, b = words("a b c"), words("c d")
    u = MinHash.union(a, b)
    c = a.copy()
    c.merge(b)
    assert u == c == words("a b c d")
    assert a == words("a b c"), "union and copy leave the originals"
    c.clear()
    assert c.is_empty() and c.count() == 0 and c.jaccard(a) == 0.0
    assert not a.is_empty()
    # datasketch: two empty sketches agree everywhere.
    assert MinHash().jaccard(MinHash()) == 1.0


def test_bulk() -> None:
    sets = [SET1, SET2, []]
    bulk = MinHash.bulk([[w.encode() for w in s] for s in sets], num_perm=128)
    assert bulk[0] == words(" ".join(SET1)) and bulk[2].is_empty()


def test_element_types() -> None:
    with pytest.raises(TypeError, match="bytes or str, not int"):
        MinHash().update(3)
    with pytest.raises(neardup.NeardupError, match="number of permutations must be in 1..=65536, got 0"):
        MinHash(num_perm=0)


def test_lsh_insert_query_remove() -> None:
    texts = corpus(400, seed=9)
    minhashes = MinHash.from_texts(texts)
    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    assert (lsh.b, lsh.r, lsh.h, lsh.threshold) == (16, 8, 128, 0.8)
    for i, m in enumerate(minhashes):
        lsh.insert(f"d{i}", m)
    assert len(lsh) == 400 and "d3" in lsh and not lsh.is_empty()
    pairs = {(a, b) for a, b, _ in neardup.pairs(texts, neighbours=False)}
    for i, m in enumerate(minhashes):
        found = lsh.query_with_similarity(m)
        assert [k for k, _ in found] == lsh.query(m)
        sims = [j for _, j in found]
        assert sims == sorted(sims, reverse=True) and all(j >= 0.8 for j in sims)
        keys = {int(k[1:]) for k, _ in found} - {i}
        assert keys == {b for a, b in pairs if a == i} | {a for a, b in pairs if b == i}
    lsh.remove("d3")
    assert "d3" not in lsh and len(lsh) == 399
    assert "d3" not in lsh.query(minhashes[3])
    with pytest.raises(ValueError, match="The given key does not exist"):
        lsh.remove("d3")
    with pytest.raises(ValueError, match="The given key already exists"):
        lsh.insert("d4", minhashes[4])
    lsh.insert("d4", minhashes[0], check_duplication=False)
    assert "d4" in lsh.query(minhashes[0])


def test_unverified_answers_are_the_candidates() -> None:
    texts = corpus(400, seed=2)
    minhashes = MinHash.from_texts(texts)
    loose = MinHashLSH(threshold=0.5, verify=False)
    strict = MinHashLSH(threshold=0.5)
    for i, m in enumerate(minhashes):
        loose.insert(i, m)
        strict.insert(i, m)
    for m in minhashes:
        verified, candidates = strict.query(m), loose.query(m)
        assert set(verified) <= set(candidates)
        assert candidates == sorted(candidates)
        assert all(m.exact_jaccard(minhashes[k]) >= 0.5 for k in verified)
        assert all(np.isnan(j) for _, j in loose.query_with_similarity(m))


def test_insertion_session_and_params() -> None:
    minhashes = MinHash.from_texts(corpus(100, seed=4))
    lsh = MinHashLSH(threshold=0.8, params=(8, 4))
    assert (lsh.b, lsh.r) == (8, 4)
    with lsh.insertion_session(buffer_size=16) as session:
        for i, m in enumerate(minhashes):
            session.insert(i, m)
        with pytest.raises(ValueError, match="already exists"):
            session.insert(0, minhashes[0])
    assert lsh.keys() == list(range(100))
    one = MinHashLSH(threshold=0.8, params=(8, 4))
    for i, m in enumerate(minhashes):
        one.insert(i, m)
    assert all(lsh.query(m) == one.query(m) for m in minhashes)


def test_an_empty_minhash_matches_nothing() -> None:
    lsh = MinHashLSH(threshold=0.5)
    lsh.insert("empty", MinHash())
    lsh.insert("x", words("a b c"))
    assert lsh.query(MinHash()) == []
    assert lsh.query(words("a b c")) == ["x"]


def test_threads_sharing_a_table_see_it_whole() -> None:
    # Four threads insert, replace, query and remove the same keys at once. A query once
    # mapped its slots to keys after another thread had dropped them (KeyError), and two
    # inserts of one key both passed the check, leaving a set no key removes.
    minhashes = MinHash.from_texts(corpus(48, seed=5))
    lsh = MinHashLSH(threshold=0.5)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(1500):
                k = rng.randrange(len(minhashes))
                op = rng.randrange(4)
                if op == 0:
                    try:
                        lsh.insert(k, minhashes[k])
                    except ValueError as e:
                        assert str(e) == "The given key already exists"
                elif op == 1:
                    lsh.insert(k, minhashes[k], check_duplication=False)
                elif op == 2:
                    try:
                        lsh.remove(k)
                    except ValueError as e:
                        assert str(e) == "The given key does not exist"
                else:
                    found = lsh.query_with_similarity(minhashes[k])
                    assert all(minhashes[key].exact_jaccard(minhashes[k]) == j >= 0.5 for key, j in found)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    # Switching threads often makes the interleavings that broke it common.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    # The keys and the table agree: each key's set is found, nothing else is left.
    assert len(lsh) == len(lsh._table)
    for k in lsh.keys():
        assert k in lsh.query(minhashes[k])
    for k in lsh.keys():
        lsh.remove(k)
    assert len(lsh._table) == 0 and all(lsh.query(m) == [] for m in minhashes)


class _InterruptedMap(dict):  # type: ignore[type-arg]
    """A key map whose next update raises KeyboardInterrupt, as Ctrl-C pressed just as a
    native insert finished is raised at the caller's next step."""

    def update(self, *args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    def __setitem__(self, key: Any, value: Any) -> None:
        raise KeyboardInterrupt


@pytest.mark.parametrize("many", [False, True])
def test_an_insert_interrupted_after_the_native_table_took_it_is_undone(many: bool) -> None:
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    lsh.insert("kept", words("a b c d e f"))
    keys = dict(lsh._slots)
    lsh._slots = _InterruptedMap(keys)
    with pytest.raises(KeyboardInterrupt):
        if many:
            lsh.insert_many([("x", words("a b c d e g")), ("y", words("p q r s"))])
        else:
            lsh.insert("x", words("a b c d e g"))
    lsh._slots = dict(lsh._slots)
    assert len(lsh._table) == 1, "the sets the interrupted insert put in are taken out"
    assert sorted(lsh._slots) == ["kept"] and list(lsh._keys.values()) == ["kept"]
    assert lsh.query(words("a b c d e g")) == ["kept"]
