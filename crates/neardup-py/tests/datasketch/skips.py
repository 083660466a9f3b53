"""The one list of datasketch's tests that do not run against neardup, each with its
reason (conftest.py marks them skipped). Keys are node ids relative to this folder. Only
storage backends and byte layouts are reasons without argument; any other entry is a real
difference, also named in the README's datasketch migration table. A key whose test no
longer exists fails the run, so the list cannot rot."""

SKIPS: dict[str, str] = {
    # test_minhash.py
    # test_lean_minhash.py
    # test_weighted_minhash.py
}
