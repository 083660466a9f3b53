"""neardup's datasketch classes give datasketch 2.0.0's values and bytes: hashvalues per
scheme, permutations, LeanMinHash's and bBitMinHash's byte formats, weighted MinHash.
The expected values were written by the real datasketch 2.0.0
(fixtures/make_datasketch_values.py); a pickle written by neardup 0.1.0 still loads."""

from __future__ import annotations

import hashlib
import json
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

import neardup
from neardup import LeanMinHash, MinHash, WeightedMinHash, WeightedMinHashGenerator, bBitMinHash

FIXTURES = Path(__file__).resolve().parent / "fixtures"
DS = json.loads((FIXTURES / "datasketch-2.0.0.json").read_text())
TOKENS = [t.encode() for t in DS["tokens"]]
CASES = DS["minhash"]


def case_id(c: dict) -> str:
    return f"{c['scheme']}-{c['num_perm']}-{c['seed']}"


def built(c: dict) -> MinHash:
    m = MinHash(c["num_perm"], c["seed"], scheme=c["scheme"])
    m.update_batch(TOKENS[:6])
    return m


@pytest.mark.parametrize("c", CASES, ids=case_id)
def test_hashvalues_are_datasketchs(c: dict) -> None:
    m = MinHash(c["num_perm"], c["seed"], scheme=c["scheme"])
    assert m.hashvalues.tolist() == c["empty"] and m.is_empty()
    for t in TOKENS[:6]:
        m.update(t)
    assert m.hashvalues.tolist() == c["hashvalues"]
    assert str(m.hashvalues.dtype) == c["dtype"]
    assert np.asarray(m.permutations).tolist() == c["permutations"]
    assert m.count() == pytest.approx(c["count"])
    assert built(c) == m, "update_batch and update agree"
    one = MinHash(c["num_perm"], c["seed"], scheme=c["scheme"])
    one.update(b"Hello")
    assert one.hashvalues.tolist() == c["hello"]
    ints = MinHash(c["num_perm"], c["seed"], scheme=c["scheme"], hashfunc=lambda x: x)
    ints.update_batch([12, 24, 36])
    assert ints.hashvalues.tolist() == c["ints"]
    assert not ints.has_set and m.has_set


def test_the_default_is_affine32_and_legacy_gives_the_old_values() -> None:
    m = MinHash(4, 1)
    assert m.scheme == "affine32" and m.hashfunc is neardup.sha1_hash32
    legacy = MinHash(4, 1, scheme="legacy")
    legacy.update(b"Hello")
    # datasketch's test_byte_tokens, which pins the values before 2.0.
    assert legacy.hashvalues.tolist() == [734825475, 960773806, 359816889, 342714745]
    digest = hashlib.sha1(b"Hello").digest()
    assert neardup.sha1_hash32(b"Hello") == int.from_bytes(digest[:4], "little")
    assert neardup.sha1_hash64(b"Hello") == int.from_bytes(digest[:8], "little")


def test_token_hash_is_sha1_at_every_length() -> None:
    # Tokens up to 55 bytes are padded into one block by neardup itself: both sides of
    # that limit, and the lengths where the padding moves to a second block.
    for n in range(0, 200):
        token = bytes((7 * i + n) % 256 for i in range(n))
        digest = hashlib.sha1(token).digest()
        assert neardup.sha1_hash32(token) == int.from_bytes(digest[:4], "little"), n
        assert neardup.sha1_hash64(token) == int.from_bytes(digest[:8], "little"), n

def test_rebuilt_from_hashvalues_and_permutations() -> None:
    c = CASES[1]
    m = built(c)
    with pytest.raises(ValueError, match="scheme must be specified explicitly"):
        MinHash(hashvalues=m.hashvalues)
    again = MinHash(seed=m.seed, hashvalues=m.hashvalues, scheme=m.scheme)
    assert again == m and again.jaccard(m) == 1.0 and not again.has_set
    with pytest.raises(ValueError, match="exact_jaccard needs both sets"):
        again.exact_jaccard(m)
    perms = MinHash(c["num_perm"], 99, permutations=m.permutations, scheme=m.scheme)
    perms.update_batch(TOKENS[:6])
    assert perms.hashvalues.tolist() == c["hashvalues"], "the given permutations are used"
    with pytest.raises(ValueError, match="must be odd"):
        MinHash(4, permutations=[[2, 3, 5, 7], [0, 0, 0, 0]], scheme="affine32")
    with pytest.raises(ValueError, match="out of range"):
        MinHash(hashvalues=[2**33, 1], scheme="affine32")


def test_jaccard_is_datasketchs_and_exact_jaccard_is_neardups() -> None:
    a, b = MinHash(128, 1), MinHash(128, 1)
    a.update_batch(TOKENS[:8])
    b.update_batch(TOKENS[3:])
    assert a.jaccard(b) == DS["jaccard"]
    words_a, words_b = set(TOKENS[:8]), set(TOKENS[3:])
    assert a.exact_jaccard(b) == len(words_a & words_b) / len(words_a | words_b)
    assert MinHash().jaccard(MinHash()) == 1.0
    for other in (MinHash(128, 2), MinHash(64, 1), MinHash(128, 1, scheme="legacy")):
        with pytest.raises(ValueError, match="Cannot compute Jaccard"):
            a.jaccard(other)
        with pytest.raises(ValueError, match="Cannot merge"):
            a.merge(other)
    with pytest.raises(ValueError, match="less than 2"):
        MinHash.union(a)


def test_merge_union_copy_clear_keep_the_set() -> None:
    a, b = MinHash(), MinHash()
    a.update_batch(TOKENS[:4])
    b.update_batch(TOKENS[4:])
    whole = MinHash()
    whole.update_batch(TOKENS)
    u = MinHash.union(a, b)
    c = a.copy()
    c.merge(b)
    assert u == c == whole and u.exact_jaccard(whole) == 1.0
    setless = MinHash(seed=1, hashvalues=b.hashvalues, scheme="affine32")
    c.merge(setless)
    assert c == whole and not c.has_set
    c.clear()
    assert c.is_empty() and c.has_set and c.count() == 0.0


def test_gpu_mode_hashobj_and_hashfunc() -> None:
    m = MinHash(4, 1, gpu_mode="detect")
    m.update_batch([b"a"])
    assert m._gpu_mode == "detect"
    with pytest.raises(RuntimeError, match="CPU only"):
        MinHash(gpu_mode="always").update_batch([b"a"])
    with pytest.raises(ValueError, match="gpu_mode"):
        MinHash(gpu_mode="sometimes")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        MinHash(hashobj=object())
    assert [w.category for w in caught] == [DeprecationWarning]
    with pytest.raises(ValueError, match="callable"):
        MinHash(hashfunc=3)
    with pytest.raises(ValueError, match="out of range for scheme 'affine32'"):
        MinHash(hashfunc=lambda x: x).update(2**40)
    wide = MinHash(4, 1, scheme="affine64", hashfunc=lambda x: x)
    wide.update(2**40)
    assert not wide.is_empty()
    given = MinHash(4, 1, hashfunc=neardup.sha1_hash32)
    given.update(b"x")
    assert given.has_set, "neardup's own SHA-1 function is the default path"


def test_bulk_and_generator() -> None:
    sets = [TOKENS[:3], TOKENS[3:], []]
    bulk = MinHash.bulk(sets, num_perm=16, seed=3)
    gen = list(MinHash.generator(iter(sets), num_perm=16, seed=3))
    for s, m, g in zip(sets, bulk, gen):
        one = MinHash(16, 3)
        one.update_batch(s)
        assert m == one == g
    assert bulk[2].is_empty()


@pytest.mark.parametrize("c", CASES, ids=case_id)
def test_lean_minhash_bytes_are_datasketchs(c: dict) -> None:
    lean = LeanMinHash(built(c))
    assert isinstance(lean, MinHash) and lean.scheme == c["scheme"]
    for order, expected in c["lean"].items():
        buf = bytearray(lean.bytesize(order))
        lean.serialize(buf, order)
        assert buf.hex() == expected
        back = LeanMinHash.deserialize(bytes.fromhex(expected), order)
        assert back == lean and back.hashvalues.tolist() == c["hashvalues"]
    back = pickle.loads(pickle.dumps(lean))
    assert back == lean and hash(back) == hash(lean)
    with pytest.raises(TypeError):
        lean.update(b"x")
    with pytest.raises(ValueError, match="scheme must be specified"):
        LeanMinHash(seed=1, hashvalues=c["hashvalues"])
    assert LeanMinHash(seed=c["seed"], hashvalues=c["hashvalues"], scheme=c["scheme"]) == lean


@pytest.mark.parametrize("c", CASES, ids=case_id)
def test_b_bit_minhash_bytes_are_datasketchs(c: dict) -> None:
    m = built(c)
    for b, expected in c["bbit"].items():
        bm = bBitMinHash(m, int(b))
        assert bytes(bm.__getstate__()).hex() == expected
        assert bm.bytesize() == len(bytes.fromhex(expected))
        back = pickle.loads(pickle.dumps(bm))
        assert back == bm and back.hashvalues.tolist() == bm.hashvalues.tolist()


def test_b_bit_jaccard_is_datasketchs() -> None:
    a, b = MinHash(128, 1), MinHash(128, 1)
    a.update_batch(TOKENS[:8])
    b.update_batch(TOKENS[3:])
    for bits, expected in DS["bbit_jaccard"].items():
        assert bBitMinHash(a, int(bits)).jaccard(bBitMinHash(b, int(bits))) == pytest.approx(expected)


def test_weighted_minhash_values_are_datasketchs() -> None:
    w = DS["weighted"]
    mg = WeightedMinHashGenerator(w["dim"], w["sample_size"], w["seed"])
    made = [mg.minhash(v) for v in w["vectors"]]
    assert [m.hashvalues.tolist() for m in made] == w["minhash"]
    assert made[0].jaccard(made[1]) == w["jaccard"]
    many = mg.minhash_many(np.array(w["vectors"]))
    assert [m.hashvalues.tolist() for m in many if m is not None] == w["minhash_many"]
    back = pickle.loads(pickle.dumps(made[0]))
    assert isinstance(back, WeightedMinHash) and back == made[0]


def test_own_sketches_stay() -> None:
    m = MinHash.from_text("a text of a few words, long enough for shingles")
    assert m.scheme == m.sketch == "oph" and m.has_set and m.permutations is None
    assert m.jaccard(m.copy()) == 1.0 == m.exact_jaccard(m)
    with pytest.raises(ValueError, match="update_hashes adds to neardup's own sketch"):
        MinHash().update_hashes([1, 2])
    with pytest.raises(ValueError, match="takes no scheme"):
        MinHash(sketch="oph", scheme="legacy")
    with pytest.raises(ValueError, match="LeanMinHash takes datasketch's schemes"):
        LeanMinHash(m)


def pickled_by_0_1_0() -> list:
    with open(FIXTURES / "minhash-0.1.0.pickle", "rb") as f:
        version, cases = pickle.load(f)
    assert version == "0.1.0"
    return cases


def test_pickles_of_earlier_versions_load() -> None:
    cases = pickled_by_0_1_0()
    assert [c[0] for c in cases] == ["from_text", "words", "classic", "empty"]
    for name, m, num_perm, seed, sketch, hashes, digest in cases:
        assert (m.num_perm, m.seed, m.sketch) == (num_perm, seed, sketch), name
        assert m.hashes().tolist() == hashes, name
        assert m.digest().tolist() == digest, name
        assert pickle.loads(pickle.dumps(m)) == m, name


def test_pickles_carry_a_version() -> None:
    m = MinHash(16, 2, scheme="legacy", hashfunc=neardup.sha1_hash64)
    restore, (state,) = m.__reduce__()
    assert state["version"] == 2 and "permutations" not in state
    given = MinHash(4, 1, permutations=[[1, 3, 5, 7], [0, 1, 2, 3]], scheme="affine32")
    given.update(b"x")
    back = pickle.loads(pickle.dumps(given))
    assert back == given and back.permutations.tolist() == [[1, 3, 5, 7], [0, 1, 2, 3]]
    with pytest.raises(ValueError, match="newer neardup"):
        restore({**state, "version": 99})
