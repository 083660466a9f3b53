"""What each stage of a Spark application did, read from the driver: for benchmarks that
report how many bytes a run shuffled, and where its time went.

>>> from spark_metrics import stage_metrics                 # doctest: +SKIP
>>> for s in stage_metrics(spark): print(s)                 # doctest: +SKIP

The source is the driver's monitoring REST API (/api/v1/applications/<id>/stages,
https://spark.apache.org/docs/latest/monitoring.html#rest-api): public and stable across
versions, unlike the driver's internal status store through py4j, and it has the shuffle
bytes, which `SparkContext.statusTracker()` does not. It is served by the driver's web
UI, so this needs spark.ui.enabled (the default) — set spark.ui.port=0 to take any free
port when several drivers run. Standard library only, so it runs with any driver's Python.
"""

from __future__ import annotations

import json
import time
import urllib.request
from datetime import datetime
from typing import Any, Optional


def _time(value: Optional[str]) -> Optional[datetime]:
    # The API's dates, e.g. "2026-11-23T14:30:00.123GMT".
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%f%Z") if value else None


def _duration(stage: dict[str, Any]) -> Optional[float]:
    start, end = _time(stage.get("submissionTime")), _time(stage.get("completionTime"))
    return (end - start).total_seconds() if start and end else None


def stage_metrics(spark: Any, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Every stage attempt of the application so far, in stage order: id, attempt, name,
    status, duration (seconds from submission to completion, None while it runs), tasks,
    executor run time and the JVM's CPU time in it (ms, summed over tasks), input bytes and records, shuffle write and
    read bytes and records, bytes spilled to disk.

    The driver's listeners record a stage's end after the action that ran it has returned,
    so this first waits (up to `timeout` seconds) until no stage is active or pending."""
    sc = spark.sparkContext
    if not sc.uiWebUrl:
        raise RuntimeError("stage_metrics reads the driver's web UI: set spark.ui.enabled=true")
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages"
    deadline = time.monotonic() + timeout
    while True:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            stages = json.load(response)
        if time.monotonic() >= deadline or not any(
            s["status"] in ("ACTIVE", "PENDING") for s in stages
        ):
            break
        time.sleep(0.05)
    return [
        {
            "id": s["stageId"],
            "attempt": s["attemptId"],
            "name": s["name"],
            "status": s["status"],
            "duration": _duration(s),
            "tasks": s["numTasks"],
            "executor_run_time_ms": s["executorRunTime"],
            # The JVM's task threads only: a Python worker's CPU is its own process's.
            "executor_cpu_time_ms": s.get("executorCpuTime", 0) / 1e6,
            "input_bytes": s["inputBytes"],
            "input_records": s["inputRecords"],
            "shuffle_write_bytes": s["shuffleWriteBytes"],
            "shuffle_write_records": s["shuffleWriteRecords"],
            "shuffle_read_bytes": s["shuffleReadBytes"],
            "shuffle_read_records": s["shuffleReadRecords"],
            "disk_spilled_bytes": s["diskBytesSpilled"],
        }
        for s in sorted(stages, key=lambda s: (s["stageId"], s["attemptId"]))
    ]
