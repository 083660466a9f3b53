"""`MinHashLSH`, `MinHashLSHForest` and `MinHashLSHEnsemble` with datasketch's API: what its
vendored tests (tests/datasketch) do not pin."""

import pickle

import numpy as np
import pytest

from neardup import MinHash, MinHashLSH, MinHashLSHEnsemble, MinHashLSHForest


class Sketch:
    """A sketch without its set, as datasketch's MinHash or one rebuilt from stored
    hashvalues: the table files it by its hashvalues."""

    def __init__(self, values):
        self.hashvalues = np.asarray(values, dtype=np.uint64)

    def __len__(self):
        return len(self.hashvalues)


def words(text, **kwargs):
    m = MinHash(**kwargs)
    m.update_batch(text.split())
    return m


def test_weights_give_datasketchs_band_plan():
    # datasketch 2.0.0's _optimal_param for these (its docstring shows 5 x 25 at 0.9).
    assert (MinHashLSH(threshold=0.9, weights=(0.5, 0.5)).b, MinHashLSH(threshold=0.9, weights=(0.5, 0.5)).r) == (5, 25)
    lsh = MinHashLSH(threshold=0.8, weights=(0.2, 0.8))
    assert (lsh.b, lsh.r) == (12, 10)
    # Without weights or params, neardup's plan (recall at the threshold).
    assert (MinHashLSH(threshold=0.8).b, MinHashLSH(threshold=0.8).r) == (16, 8)
    with pytest.raises(ValueError, match="sum to 1.0"):
        MinHashLSH(weights=(0.5, 0.6))
    with pytest.raises(ValueError, match="b < 2"):
        MinHashLSH(num_perm=16, params=(1, 16))
    with pytest.raises(ValueError, match="must be less than num_perm"):
        MinHashLSH(num_perm=16, params=(8, 4))


def test_other_storage_is_refused_naming_the_index():
    with pytest.raises(ValueError, match=r"neardup\.Index"):
        MinHashLSH(storage_config={"type": "redis", "redis": {"host": "localhost"}})
    with pytest.raises(ValueError, match="cassandra"):
        MinHashLSHEnsemble(storage_config={"type": "cassandra"})
    assert MinHashLSH(storage_config={"type": "dict"}).is_empty()


def test_sketches_without_sets_give_the_bands_candidates():
    lsh = MinHashLSH(num_perm=16, params=(8, 2))
    base = np.arange(16, dtype=np.uint64)
    near = base.copy()
    near[2:] += 100  # only the first band agrees
    far = base + 1000
    lsh.insert("base", Sketch(base))
    lsh.insert("near", Sketch(near))
    lsh.insert("far", Sketch(far))
    # Unverified: a candidate in one band of eight is returned, as datasketch returns it.
    assert lsh.query(Sketch(base)) == ["base", "near"]
    assert lsh.query_with_similarity(Sketch(base))[0][0] == "base"
    assert np.isnan(lsh.query_with_similarity(Sketch(base))[0][1])
    assert lsh._query_b(Sketch(near), 1) == {"base", "near"}
    with pytest.raises(ValueError, match="length 16, got 8"):
        lsh.query(Sketch(base[:8]))
    copy = pickle.loads(pickle.dumps(lsh))
    assert copy.query(Sketch(base)) == ["base", "near"]
    assert copy.keys["near"] == lsh.keys["near"] and len(copy.keys["near"]) == 8


def test_sets_are_verified_and_views_agree():
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    lsh.insert("x", words("a b c d e f g h"))
    lsh.insert("y", words("a b c d e f g z"))
    lsh.insert("z", words("p q r s"))
    assert lsh.query(words("a b c d e f g h")) == ["x", "y"]
    assert "x" in lsh.keys and "w" not in lsh.keys and lsh.keys() == ["x", "y", "z"]
    tables = lsh.hashtables
    assert len(tables) == lsh.b and lsh.hashranges[1] == (lsh.r, 2 * lsh.r)
    for key in lsh.keys:
        for table, h in zip(tables, lsh.keys[key]):
            assert key in table[h] and len(h) == 8
    assert [sum(t.values()) for t in lsh.get_counts()] == [3] * lsh.b
    assert [sum(t.values()) for t in lsh.get_subset_counts("x", "z", "missing")] == [2] * lsh.b
    assert lsh.keys.get("missing") == [] and lsh.keys.getmany("x")[0] == lsh.keys["x"]
    lsh.add_to_query_buffer(words("a b c d e f g h"))
    lsh.add_to_query_buffer(words("a b c d e f g z"))
    assert sorted(lsh.collect_query_buffer()) == ["x", "y"]
    assert lsh.collect_query_buffer() == []


def test_merge():
    one = MinHashLSH(threshold=0.5, num_perm=128)
    two = MinHashLSH(threshold=0.5, num_perm=128)
    one.insert("x", words("a b c d"))
    two.insert("y", words("a b c d e"))
    two.insert("z", words("k l m"))
    one.merge(two)
    assert one.keys() == ["x", "y", "z"] and two.keys() == ["y", "z"]
    assert one.query(words("a b c d")) == ["x", "y"]
    with pytest.raises(ValueError, match="overlapping"):
        one.merge(two, check_overlap=True)
    # A shared key takes the other table's set.
    three = MinHashLSH(threshold=0.5, num_perm=128)
    three.insert("x", words("k l m"))
    one.merge(three)
    assert sorted(one.query(words("k l m"))) == ["x", "z"]
    with pytest.raises(ValueError, match="different initialization"):
        one.merge(MinHashLSH(threshold=0.5, num_perm=64))
    with pytest.raises(ValueError, match="Cannot merge type"):
        one.merge(MinHashLSHForest())


def test_deletion_session():
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    for k in "abc":
        lsh.insert(k, words(f"{k} x y"))
    with lsh.deletion_session() as session:
        session.remove("a")
        with pytest.raises(ValueError, match="does not exist"):
            session.remove("q")
    assert lsh.keys() == ["b", "c"]


def test_forest_ranks_by_longest_shared_prefix():
    forest = MinHashLSHForest(num_perm=16, l=4)
    base = np.arange(16, dtype=np.uint64)
    for depth in range(5):
        values = base.copy()
        for tree in range(4):
            values[tree * 4 + depth : tree * 4 + 4] += 1000  # agrees on `depth` positions per tree
        forest.add(depth, Sketch(values))
    assert forest.is_empty()
    forest.index()
    assert not forest.is_empty() and len(forest) == 5
    assert forest.query(Sketch(base), 1) == [4]
    assert forest.query(Sketch(base), 3) == [4, 3, 2]
    assert list(forest.get_minhash_hashvalues(2)) == list(Sketch(base).hashvalues + np.array(
        [0, 0, 1000, 1000] * 4, dtype=np.uint64))
    with pytest.raises(KeyError):
        forest.get_minhash_hashvalues("missing")
    with pytest.raises(ValueError, match="k must be positive"):
        forest.query(Sketch(base), 0)
    copy = pickle.loads(pickle.dumps(forest))
    assert copy.query(Sketch(base), 3) == [4, 3, 2]


def test_ensemble_answers_are_verified_containment():
    sets = {k: [str(i) for i in range(k, k + size)] for k, size in enumerate([10, 20, 40, 80, 15, 30])}
    lsh = MinHashLSHEnsemble(threshold=0.8, num_perm=128, num_part=3)
    lsh.index((k, words(" ".join(s)), len(s)) for k, s in sets.items())
    with pytest.raises(ValueError, match="again"):
        lsh.index([(99, words("a"), 1)])
    for q, s in sets.items():
        found = set(lsh.query(words(" ".join(s)), len(s)))
        assert q in found
        for k in found:
            assert len(set(s) & set(sets[k])) >= 0.8 * len(s)
    assert 3 in lsh and 99 not in lsh


def test_two_tables_merged_into_each_other_at_once():
    import threading

    one = MinHashLSH(threshold=0.5, num_perm=128)
    two = MinHashLSH(threshold=0.5, num_perm=128)
    for i in range(200):
        one.insert(("one", i), words(f"a{i} b{i} c{i}"))
        two.insert(("two", i), words(f"x{i} y{i} z{i}"))
    threads = [threading.Thread(target=one.merge, args=(two,)), threading.Thread(target=two.merge, args=(one,))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "the merges wait for each other"
    assert len(one) >= 400 or len(two) >= 400


def test_stored_signatures_meet_fresh_minhashes():
    fresh = words("a b c d e f g h")
    stored = MinHash(hashvalues=fresh.hashvalues, scheme="affine32")  # no set
    other = words("a b c d e f g z")
    lsh = MinHashLSH(threshold=0.5)
    lsh.insert("fresh", fresh)
    lsh.insert("other", other)
    lsh.insert("stored", stored)
    # Verified where both sets are known (most similar first), then the candidate that
    # has only its signature.
    found = lsh.query_with_similarity(words("a b c d e f g h"))
    assert [k for k, _ in found] == ["fresh", "other", "stored"]
    assert found[0][1] == 1.0 and found[1][1] == 7 / 9 and np.isnan(found[2][1])
    # Without its set, the query gets the bands' candidates, in insertion order.
    got = lsh.query(stored)
    assert got[0] == "fresh" and "stored" in got
    assert got == sorted(got, key=["fresh", "other", "stored"].index)
    # neardup's own sketch is filed by its set, apart from datasketch's hashvalues.
    own = words("a b c d e f g h", sketch="oph")
    lsh.insert("own", own)
    assert lsh.query(own) == ["own"]
