"""A stand-in for the `mockredis` package, which datasketch's vendored test_lsh.py and
test_lshensemble.py import at the top (for their Redis tests, skipped here: neardup has
no Redis storage). It lets those files load unchanged; its client is never made."""


def mock_redis_client(**kwargs: object) -> object:
    raise RuntimeError("no Redis storage in neardup: the Redis tests are skipped (tests/datasketch/skips.py)")
