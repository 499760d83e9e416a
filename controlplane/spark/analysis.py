"""Checking a job's SQL transform as Spark would, before the job is accepted: parsed by Spark's own parser as a
query (nothing else: a `WITH … INSERT` is refused by the grammar, so nothing is ever executed) and analysed
against the schema its source produces (the view `source`), so `SELEC …`, an unknown column or a wrong function
is refused at creation with Spark's own message and position instead of failing in the driver.

Spark needs a JVM, which costs seconds to start and does not survive a fork (Celery's and gunicorn's workers
fork), and a process has only one SparkContext (a job's or a test's session must not become ours): so the
analysis runs in one long-lived worker per control-plane process (`python -m controlplane.spark.analysis`,
local[1], 512 MiB heap, UI off), started on first use and reused, talking JSON lines over its stdin/stdout. Each
check uses a fresh session of its SparkContext (`newSession`: own temp views and conf), so checks never see
each other's views.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from controlplane.spark.reading import HEADERS_DDL, SCHEMA_DDL

SOURCE_VIEW = "source"
# The JVM's start dominates the first check (seconds, tens of seconds on a loaded host); later checks take
# milliseconds. A request waits for a starting worker at most START_WAIT_SECONDS.
START_TIMEOUT_SECONDS = 180.0
START_WAIT_SECONDS = 30.0
CHECK_TIMEOUT_SECONDS = 30.0
# Spark refuses a heap under 450 MiB (its reserved memory times 1.5).
DRIVER_MEMORY = "512m"
# An AnalysisException's message ends with the plan it analysed, after its SQL state and position: the user needs
# the position, not Spark's plan tree.
_PLAN_AFTER_POSITION = re.compile(r"(SQLSTATE: \w+(?:; line \d+ pos \d+)?);\n.*\Z", re.DOTALL)


def source_schema(include_headers: bool = False) -> str:
    """The DDL of what the jobs' `topics` reader produces (topic_source.TopicDataSource.schema)."""
    return SCHEMA_DDL + (HEADERS_DDL if include_headers else "")


@dataclass(frozen=True)
class Refusal:
    """Spark's refusal of a query: its exception's name, error class, SQL state, message and where in the text."""

    exception: str
    message: str
    error_class: str | None = None
    sql_state: str | None = None
    # [{"fragment", "start", "stop"}]: character positions in the query (analysis errors; a parse error says
    # its line and position in the message).
    positions: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "exception": self.exception,
            "message": self.message,
            "error_class": self.error_class,
            "sql_state": self.sql_state,
            "positions": self.positions,
        }


class SqlRefused(Exception):
    def __init__(self, refusal: Refusal) -> None:
        super().__init__(f"{refusal.exception}: {refusal.message}")
        self.refusal = refusal


class AnalysisUnavailable(Exception):
    """The analysis worker could not start or answer (no Java on this host, …): the SQL is left to the driver."""


# --- the worker's side ---------------------------------------------------------------------------------------


def _refusal_of(error: Exception) -> Refusal:
    message = str(error).strip()
    message = _PLAN_AFTER_POSITION.sub(r"\1", message)
    positions = []
    for context in getattr(error, "getQueryContext", list)() or []:
        try:
            positions.append(
                {"fragment": context.fragment(), "start": context.startIndex(), "stop": context.stopIndex()}
            )
        except Exception:
            continue
    return Refusal(
        exception=type(error).__name__,
        message=message,
        error_class=getattr(error, "getCondition", lambda: None)(),
        sql_state=getattr(error, "getSqlState", lambda: None)(),
        positions=positions,
    )


def analyse(spark: Any, request: dict[str, Any], empty_directory: str) -> dict[str, Any]:
    """One check in a fresh session of `spark`: {"columns": [output column names]} or {"refused": Refusal}."""
    from pyspark.errors.exceptions.captured import CapturedException

    session = spark.newSession()
    # As the driver runs it (runtime.transform_sql): the query sees only the view `source`, never files.
    session.conf.set("spark.sql.runSQLOnFiles", "false")
    schema = request["schema"]
    try:
        if request.get("streaming"):
            # A streaming frame of exactly that schema that reads nothing: streaming-only rules (watermarks)
            # are checked as in the driver.
            frame = session.readStream.schema(schema).format("json").load(empty_directory)
        else:
            frame = session.createDataFrame([], schema)
        watermark = request.get("watermark")
        if watermark:
            frame = frame.withWatermark(watermark[0], watermark[1])
        frame.createOrReplaceTempView(SOURCE_VIEW)
        jsession = session._jsparkSession
        # parseQuery, not parsePlan: only a query is accepted, so analysing it cannot run a command.
        plan = jsession.sessionState().sqlParser().parseQuery(request["sql"])
        analysed = session._jvm.org.apache.spark.sql.classic.Dataset.ofRows(jsession, plan)
        return {"columns": list(analysed.columns())}
    except CapturedException as error:
        return {"refused": _refusal_of(error).as_json()}


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """The worker: starts its session, says it is ready, then answers one JSON line per request line."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .appName("streamhub-sql-analysis")
        .config("spark.driver.memory", DRIVER_MEMORY)
        # Analysis is short and light: C1 alone and the serial collector start the JVM in about half the time
        # (measured here) and keep its footprint small.
        .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.log.level", "ERROR")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    empty_directory = tempfile.mkdtemp(prefix="streamhub-sql-analysis-")

    def answer(body: dict[str, Any]) -> None:
        answers.write(json.dumps(body).encode() + b"\n")
        answers.flush()

    # The first analysis loads the parser's, analyser's and streaming planner's classes (seconds on a loaded
    # host): done before saying ready, so that the first user's check is as quick as the next.
    for streaming in (True, False):
        analyse(
            spark,
            {"sql": "SELECT value FROM source", "schema": source_schema(), "streaming": streaming},
            empty_directory,
        )
    answer({"ready": True})
    for line in requests:
        try:
            answer(analyse(spark, json.loads(line), empty_directory))
        except Exception as error:
            answer({"failed": f"{type(error).__name__}: {error}"[:2000]})


def main() -> None:
    import logging

    # PySpark logs every captured error as JSON on stderr; a refusal is an answer here, not an incident.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    # The protocol has stdout to itself: the JVM and py4j inherit a stdout that is really stderr.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    serve(sys.stdin.buffer, answers)


# --- the control plane's side --------------------------------------------------------------------------------


class AnalysisWorker:
    """The one analysis worker of this process, started on first use (and again if it died or the process
    forked since), shared by every thread one check at a time. A check waits for a starting worker at most
    START_WAIT_SECONDS (a request must not hang on a JVM's start): past that the SQL is left to the driver while
    the worker goes on starting for the next check."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._owner_pid = 0
        self._ready = threading.Event()
        self._start_failure = ""
        self._started_at = 0.0

    def check(self, request: dict[str, Any], wait_seconds: float = START_WAIT_SECONDS) -> dict[str, Any]:
        with self._lock:
            process = self._started()
            if not self._ready.wait(wait_seconds):
                raise AnalysisUnavailable(
                    f"the SQL analysis worker is still starting after {wait_seconds:.0f} s"
                )
            try:
                if self._start_failure:
                    raise AnalysisUnavailable(self._start_failure)
                assert process.stdin is not None
                process.stdin.write(json.dumps(request).encode() + b"\n")
                process.stdin.flush()
                return self._read(process, CHECK_TIMEOUT_SECONDS)
            except (OSError, AnalysisUnavailable) as error:
                self._stop()
                raise AnalysisUnavailable(f"the SQL analysis worker failed: {error}") from None

    def warm(self, timeout: float = START_TIMEOUT_SECONDS) -> bool:
        """Starts the worker if it is not running and waits until it answers (True) or `timeout` passed."""
        with self._lock:
            self._started()
        return self._ready.wait(timeout) and not self._start_failure

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._owner_pid == os.getpid() and self._process.poll() is None:
            return self._process
        if self._owner_pid == os.getpid():
            self._stop()
        self._process, self._owner_pid = None, os.getpid()  # a forked child never touches its parent's pipes
        environment = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
        repository = str(Path(__file__).resolve().parents[2])
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [repository, os.environ.get("PYTHONPATH")]))
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "controlplane.spark.analysis"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=environment,
                start_new_session=True,  # a Ctrl-C of the control plane is its to handle, not the JVM's
            )
        except OSError as error:
            raise AnalysisUnavailable(f"the SQL analysis worker did not start: {error}") from None
        self._process, self._ready, self._start_failure = process, threading.Event(), ""
        self._started_at = time.monotonic()
        ready, failure = self._ready, ""

        def wait_until_ready() -> None:
            nonlocal failure
            assert process.stdout is not None
            line = process.stdout.readline()
            try:
                if not json.loads(line or b"{}").get("ready"):
                    failure = f"the SQL analysis worker did not start: {line[:500]!r}"
            except ValueError:
                failure = f"the SQL analysis worker did not start: {line[:500]!r}"
            if failure and self._process is process:
                self._start_failure = failure
            ready.set()

        threading.Thread(target=wait_until_ready, name="sql-analysis-start", daemon=True).start()
        return process

    @staticmethod
    def _read(process: subprocess.Popen[bytes], timeout: float) -> dict[str, Any]:
        assert process.stdout is not None
        line: list[bytes] = []
        reader = threading.Thread(target=lambda: line.append(process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        if not line or not line[0]:
            raise AnalysisUnavailable("no answer" if reader.is_alive() else "it exited")
        return json.loads(line[0])

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None or self._owner_pid != os.getpid():
            return
        if process.stdin is not None:
            process.stdin.close()  # the worker's loop ends, and with it its JVM
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)

    def stop(self) -> None:
        with self._lock:
            self._stop()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None


_worker = AnalysisWorker()
atexit.register(_worker.stop)


def worker() -> AnalysisWorker:
    return _worker


def check_sql(
    sql: str,
    *,
    schema: str | None = None,
    streaming: bool = False,
    watermark: tuple[str, str] | None = None,
) -> list[str]:
    """The output columns of `sql` over the view `source` of `schema` (default: the topics reader's), or
    SqlRefused with Spark's refusal; AnalysisUnavailable when Spark cannot be asked here."""
    answer = _worker.check(
        {
            "sql": sql,
            "schema": schema or source_schema(),
            "streaming": streaming,
            "watermark": list(watermark) if watermark else None,
        }
    )
    if "refused" in answer:
        raise SqlRefused(Refusal(**answer["refused"]))
    if "failed" in answer:
        raise AnalysisUnavailable(answer["failed"])
    return answer["columns"]


if __name__ == "__main__":
    main()
