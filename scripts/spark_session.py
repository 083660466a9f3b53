"""A SparkSession on the cluster of scripts/spark-cluster, set up as a user's job on a real
cluster is: the executors run the Python environment packed by scripts/spark-pack and
shipped through spark.archives. Used by the Spark suite (crates/neardup-py/spark-tests)
and the benchmark (bench/spark); SETTINGS suit this machine's cluster (2 workers of 1
core, 24 GiB) and the comments say why."""

from __future__ import annotations

import os
from typing import Any, Optional

SETTINGS = {
    # Everything on the loopback interface, as the cluster is.
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    # One executor per worker, each with the worker's 1 core; the application takes both.
    # 3g of the workers' 4g: a request above a worker's memory is never granted, and the
    # job would wait for ever. The Python workers (neardup's Rust) are outside this heap.
    "spark.executor.cores": "1",
    "spark.cores.max": "2",
    "spark.executor.memory": "3g",
    # The driver only plans and collects results.
    "spark.driver.memory": "2g",
    # Jobs start with both executors, not with whichever registered first: runs that
    # compare timings use the same two cores each time.
    "spark.scheduler.minRegisteredResourcesRatio": "1.0",
    "spark.scheduler.maxRegisteredResourcesWaitingTime": "60s",
    # 200 by default: 100 waves of tiny tasks on 2 cores, each a Python worker round trip.
    "spark.sql.shuffle.partitions": "4",
    # The web UI stays on (spark_metrics reads the stages from its REST API) on any free
    # port; its console progress bar only clutters the output.
    "spark.ui.port": "0",
    "spark.ui.showConsoleProgress": "false",
    "spark.log.level": "ERROR",
}


def session(master: str, archive: str, app: str, settings: Optional[dict[str, str]] = None) -> Any:
    """A session on `master` whose executors run the packed environment `archive`, with
    SETTINGS and `settings` (by Spark's names; they win)."""
    from pyspark.sql import SparkSession

    # Spark reads PYSPARK_PYTHON when the context starts; spark.pyspark.python set on the
    # builder is ignored unless the script runs through spark-submit.
    os.environ["PYSPARK_PYTHON"] = "./environment/bin/python"
    # The driver's JVM on the loopback interface too (else it warns that the host name
    # resolves to 127.0.0.1 and picks another interface's address).
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master(master).appName(app)
    for key, value in {**SETTINGS, "spark.archives": f"{archive}#environment", **(settings or {})}.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
