"""Waiting for a streaming query's output in the test session's own Spark, so that a failed wait explains itself:
a query that stopped fails the wait at once with its own exception, and a timeout reports what the query was
doing (its status, its last batches' input and watermark, and where a batch running in this process is parked).

A CI run keeps only the end of a failed test's output: the explanation is in the assertion message itself.

`start_query` starts a query again when Spark gave up on the Python process of its source at the start: Spark
waits a fixed 10 s (PythonWorkerFactory.createSimpleWorker, not configurable) for a new Python interpreter to
import pyspark, pyarrow and numpy and connect back, which on two loaded cores takes longer (seen under two CPU
hogs: "Python worker failed to connect back" before the first batch). A managed stream's supervisor restarts
its driver for the same reason; a test's query in this session gets the same second chance."""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

# How many of the query's last progress reports a timeout shows (Spark keeps 100).
RECENT_BATCHES = 6
# Frames of this process whose stacks a timeout shows: the sink and the source run here, in py4j's threads.
OWN_CODE = ("controlplane/spark/",)


WORKER_DID_NOT_CONNECT = "Python worker failed to connect back"
START_ATTEMPTS = 3
START_TIMEOUT_S = 120.0


def start_query(start: Callable[[], Any]) -> Any:
    """`start()`'s query once it reported its first batch (or stopped, or START_TIMEOUT_S passed), started
    again (from its checkpoint, where no batch ran) when Spark's Python source process did not connect back in
    time; any other failure is the caller's to see. (Spark's status message is no sign that the sources
    exist: a query that failed creating them was seen returned while its status did not say "Initializing".)"""
    for _attempt in range(START_ATTEMPTS):
        query = start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while query.isActive and not query.recentProgress and time.monotonic() < deadline:
            time.sleep(0.1)
        if query.isActive or query.recentProgress or WORKER_DID_NOT_CONNECT not in str(query.exception()):
            return query
        print(f"{query.name}: {WORKER_DID_NOT_CONNECT} within Spark's 10 s; starting it again")
    return query


def wait_for_query(
    query: Any,
    predicate: Callable[[], bool],
    timeout: float,
    what: str,
    sink_status: dict[str, Any] | None = None,
    interval: float = 0.2,
) -> None:
    """Waits until `predicate()` holds. Raises AssertionError with the query's exception as soon as the query is
    no longer active, and TimeoutError with `query_report` after `timeout` seconds."""
    started = time.monotonic()
    while not predicate():
        if not query.isActive:
            # The predicate may have become true in the last batch before the query stopped.
            if predicate():
                return
            raise AssertionError(
                f"the query stopped while waiting for {what}: {query.exception()}\n"
                f"{query_report(query, sink_status)}"
            )
        if time.monotonic() - started > timeout:
            raise TimeoutError(
                f"timed out after {timeout}s waiting for {what}\n{query_report(query, sink_status)}"
            )
        time.sleep(interval)


def query_report(query: Any, sink_status: dict[str, Any] | None = None) -> str:
    """The query's status, its recent batches (id, input rows and offsets, watermark and event times, state
    rows), the sink's status, and the stacks of this process's threads inside controlplane/spark."""
    lines = [f"query {query.name} active={query.isActive} status={json.dumps(query.status)}"]
    reports = query.recentProgress
    # The first report of each of the first batches too: a stuck query repeats its last batch's no-data reports,
    # while what it planned and read at the start (batch 0's offsets and rows) says why it is stuck.
    firsts = [
        progress
        for index, progress in enumerate(reports[:-RECENT_BATCHES])
        if index == 0 or progress.get("batchId") != reports[index - 1].get("batchId")
    ][:RECENT_BATCHES]
    for progress in firsts:
        lines.append(f"  {json.dumps(batch_summary(progress))}")
    if firsts:
        lines.append("  ...")
    for progress in reports[-RECENT_BATCHES:]:
        lines.append(f"  {json.dumps(batch_summary(progress))}")
    if not reports:
        lines.append("  no batch has reported progress")
    if sink_status is not None:
        lines.append(f"sink: {json.dumps(sink_status, default=str)}")
    lines.extend(own_stacks())
    return "\n".join(lines)


def batch_summary(progress: dict[str, Any]) -> dict[str, Any]:
    """What decides whether a windowed aggregate emits: the batch's input, offsets, watermark and state."""
    return {
        "batch": progress.get("batchId"),
        "at": progress.get("timestamp"),
        "input_rows": progress.get("numInputRows"),
        "duration_ms": progress.get("durationMs", {}).get("triggerExecution"),
        "event_time": progress.get("eventTime", {}),
        "sources": [
            {key: source.get(key) for key in ("startOffset", "endOffset", "latestOffset")}
            for source in progress.get("sources", [])
        ],
        "state": [
            {
                key: operator.get(key)
                for key in ("numRowsTotal", "numRowsUpdated", "numRowsRemoved", "numRowsDroppedByWatermark")
            }
            for operator in progress.get("stateOperators", [])
        ],
    }


def own_stacks() -> list[str]:
    """The stacks of this process's threads that are in the project's Spark code (a batch parked in the sink,
    a source call waiting on the broker)."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    lines = []
    for ident, frame in sys._current_frames().items():
        stack = traceback.format_stack(frame)
        if any(part in entry for entry in stack for part in OWN_CODE):
            lines.append(f"thread {names.get(ident, ident)}:")
            lines.extend(line.rstrip() for line in stack[-12:])
    return lines
