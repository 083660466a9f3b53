"""Fixtures of the Spark suite: a session on the cluster scripts/test-spark started
($NEARDUP_SPARK_MASTER, the package shipped as $NEARDUP_SPARK_ARCHIVE), and the package
suite's helpers (cases, the `neardup` command)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Iterator

import pytest
from pyspark.sql import SparkSession

# The package suite's conftest, under another name (both files are "conftest").
_spec = importlib.util.spec_from_file_location(
    "package_conftest", Path(__file__).resolve().parents[1] / "tests" / "conftest.py"
)
assert _spec and _spec.loader
package_conftest = importlib.util.module_from_spec(_spec)
sys.modules["package_conftest"] = package_conftest
_spec.loader.exec_module(package_conftest)
sys.path.insert(0, str(package_conftest.ROOT / "scripts"))
import spark_session  # noqa: E402

ROOT = package_conftest.ROOT
Cli = package_conftest.Cli
load_cases = package_conftest.load_cases
cli = package_conftest.cli


@pytest.fixture(scope="session")
def cli_bin(cli: Cli) -> Path:
    return cli.path


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One session for the whole suite: each new one unpacks the environment again."""
    master, archive = os.environ.get("NEARDUP_SPARK_MASTER"), os.environ.get("NEARDUP_SPARK_ARCHIVE")
    if not master or not archive:
        pytest.fail("no cluster: run this suite through scripts/test-spark")
    session = spark_session.session(master, archive, "neardup-spark-tests")
    yield session
    session.stop()
