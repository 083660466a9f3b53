"""The one list of datasketch's tests that do not run against neardup, each with its
reason (conftest.py marks them skipped). Keys are node ids relative to this folder. Only
storage backends and byte layouts are reasons without argument; any other entry is a real
difference, also named in the README's datasketch migration table. A key whose test no
longer exists fails the run, so the list cannot rot."""

_REDIS = (
    "storage backend: Redis (neardup's LSH indexes live in memory and pickle; a storage_config "
    "of type redis is refused with a message naming neardup.Index, the on-disk index)"
)
_DEFAULT_PLAN = (
    "a real difference: without weights= or params=, MinHashLSH takes neardup's band plan, "
    "chosen for recall at the threshold because answers are verified (16 x 8 at 0.8: a pair "
    "at exactly 0.8 collides with probability 0.95; datasketch's default weights give 9 x 13, "
    "0.40), so the default is not datasketch's and the test's b1 < b2 against "
    "weights=(0.2, 0.8) (datasketch's 12 x 10, which neardup gives exactly) does not hold"
)

SKIPS: dict[str, str] = {
    # test_minhash.py
    "test_minhash.py::TestMinHash::test_byte_tokens": (
        "pins the values of datasketch before 2.0 (the legacy scheme, then the default); "
        "datasketch 2.0.0 fails it too: its default, and neardup's, is affine32. "
        "MinHash(4, 1, scheme='legacy') gives these values (test_minhash_datasketch.py)"
    ),
    # test_lean_minhash.py
    "test_lean_minhash.py::TestLeanMinHash::test_init": (
        "rebuilds from hashvalues without scheme=, which datasketch 2.0 refuses (ValueError: "
        "hash values carry no trace of their scheme); datasketch 2.0.0 fails it too. With "
        "scheme= it passes (test_minhash_datasketch.py)"
    ),
    "test_lean_minhash.py::TestLeanMinHash::test_bytesize": (
        "byte layout: pins the size of the format before 2.0 (legacy); the affine32 format "
        "of datasketch 2.0 adds a scheme code, so datasketch 2.0.0 fails it too. neardup "
        "writes 2.0's bytes exactly (test_minhash_datasketch.py)"
    ),
    # test_weighted_minhash.py
    # test_lsh.py
    "test_lsh.py::TestMinHashLSH::test_init": _DEFAULT_PLAN,
    "test_lsh.py::TestWeightedMinHashLSH::test_init": _DEFAULT_PLAN,
    "test_lsh.py::TestMinHashLSH::test_insert_redis": _REDIS,
    "test_lsh.py::TestMinHashLSH::test_query_redis": _REDIS,
    "test_lsh.py::TestMinHashLSH::test_query_buffer_redis": _REDIS,
    "test_lsh.py::TestMinHashLSH::test_merge_redis": _REDIS,
    "test_lsh.py::TestMinHashLSH::test_redis_deletion_session": _REDIS,
    # test_lshforest.py
    "test_lshforest.py::TestMinHashLSHForest::test_get_minhash_hashvalues": (
        "rebuilds a MinHash with MinHash(hashvalues=...) and no scheme=, which datasketch 2.0 "
        "refuses (ValueError), so datasketch 2.0.0 fails it too; get_minhash_hashvalues "
        "itself is tested in test_lsh_api.py"
    ),
    # test_lshensemble.py
    "test_lshensemble.py::TestMinHashLSHEnsemble::test_index_redis": _REDIS,
    "test_lshensemble.py::TestMinHashLSHEnsemble::test_query_redis": _REDIS,
}
