"""datasketch's own tests, vendored (see README.md). A package so that its module names
(`datasketch.test_minhash`, `datasketch.conftest`) do not clash with the suite's own."""
