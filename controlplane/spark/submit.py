"""spark-submit entry point for every catalog job.

    STREAMHUB_KAFKA_CONFIG_FILE=conn.json spark-submit controlplane/spark/submit.py \
        --job key_skew --parameters '{"source": {"topic": "orders"}, "top": 10}' --output-dir out/

The code must be importable by the driver and the Python workers: the launcher gives both the code artifact
(artifact.py) with --py-files and PYTHONPATH. Against Spark Connect (`--remote sc://…`) the plan runs on the
server, so `--code-artifact` adds that zip to the session (addArtifacts) before the source is registered, and the
connection goes to the session as a file that the source's options name (topic_source.add_connection_file): the
server logs and records plans, so they must not carry the credentials.
"""

from __future__ import annotations

import argparse
import importlib
import json
import signal
import sys
import time
from pathlib import Path

from controlplane.spark.jobs import CATALOG, STREAMING_CATALOG
from controlplane.spark.jobs.runtime import (
    DRIVER_FILE,
    PROGRESS_FILE,
    JobContext,
    job_line,
    load_kafka_config,
    open_job_log,
    parameters_from_json,
    write_result,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--job", required=True, choices=CATALOG + STREAMING_CATALOG)
    parser.add_argument("--parameters", default="{}", help="JSON object of the job's parameters")
    parser.add_argument("--output-dir", required=True, type=Path)
    parser.add_argument("--code-artifact", type=Path, help="Spark Connect: the zip to add to the session")
    parser.add_argument("--checkpoint-dir", type=Path, help="streaming jobs: the stream's own state")
    parser.add_argument("--stream-id", default="", help="streaming jobs: names the stream in its output")
    parser.add_argument("--stream-output-dir", type=Path, help="streaming jobs: where file sinks write")
    arguments = parser.parse_args(argv)
    module = importlib.import_module(f"controlplane.spark.jobs.{arguments.job}")
    parameters = parameters_from_json(module.Parameters, json.loads(arguments.parameters))
    arguments.output_dir.mkdir(parents=True, exist_ok=True)
    open_job_log(arguments.output_dir)
    started = time.monotonic()
    try:
        run_job(arguments, module, parameters, started)
    except Exception as error:
        # The job's log says why it stopped in one line; the traceback stays in the driver's log.
        job_line(f"failed: {type(error).__name__}: {(str(error).strip().splitlines() or [''])[0]}")
        raise
    return 0


def run_job(arguments: argparse.Namespace, module: object, parameters: object, started: float) -> None:

    from pyspark.sql import SparkSession

    from controlplane.spark.topic_source import add_connection_file, register_topic_source

    spark = SparkSession.builder.appName(f"streamhub-{arguments.job}").getOrCreate()
    remote = is_remote_session(spark)
    job_line(f"{arguments.job} started on Spark {spark.version}")
    kafka_config = load_kafka_config()
    connection_file = None
    if remote:
        if arguments.code_artifact:
            spark.addArtifacts(str(arguments.code_artifact), pyfile=True)
        # The server logs and records the plans it gets: the source's options name a session file instead.
        connection_file = add_connection_file(spark, kafka_config)
        spark.registerProgressHandler(ProgressFile(arguments.output_dir / PROGRESS_FILE))
        interrupt_on_sigterm(spark)
    register_topic_source(spark)
    # The launcher polls the driver UI's REST API for progress (the port is picked freely, so tell it where)
    # and kills the application on a standalone master by its id.
    driver = {"session_id": spark.session_id} if remote else {
        "ui": spark.sparkContext.uiWebUrl, "application_id": spark.sparkContext.applicationId
    }  # fmt: skip
    (arguments.output_dir / DRIVER_FILE).write_text(json.dumps(driver))
    try:
        if arguments.job in STREAMING_CATALOG:
            run_stream(spark, module, parameters, arguments, kafka_config, connection_file)
        else:
            context = JobContext(kafka_config, arguments.output_dir, connection_file)
            result = module.run(spark, parameters, context)
            write_result(arguments.output_dir, result, started)
            job_line(f"{arguments.job} finished: {json.dumps(result.metrics, default=str)}")
    finally:
        spark.stop()


def run_stream(
    spark: object,
    module: object,
    parameters: object,
    arguments: argparse.Namespace,
    kafka_config: dict[str, str],
    connection_file: str | None,
) -> None:
    """Runs a streaming job until it fails (an exception, so a non-zero exit) or is stopped (a signal),
    writing each new progress report (one per micro-batch, and one now and then while idle) for the
    supervisor."""
    from controlplane.spark.streaming import StreamContext, write_progress

    if arguments.checkpoint_dir is None:
        raise ValueError("a streaming job needs --checkpoint-dir")
    arguments.checkpoint_dir.mkdir(parents=True, exist_ok=True)
    context = StreamContext(
        stream_id=arguments.stream_id,
        kafka_config=kafka_config,
        checkpoint_dir=arguments.checkpoint_dir,
        output_dir=arguments.stream_output_dir or arguments.output_dir,
        connection_file=connection_file,
    )
    query = module.start(spark, parameters, context)
    job_line(f"stream {arguments.stream_id} running (query {query.id})")
    reported = None
    while not query.awaitTermination(1):  # raises StreamingQueryException when the query failed
        progress = query.lastProgress
        if progress is not None and progress.get("timestamp") != reported:
            write_progress(arguments.output_dir, progress, context.sink_status)
            reported = progress.get("timestamp")
            if progress.get("numInputRows"):  # idle batches are Spark's business, not the job's
                job_line(
                    f"batch {progress.get('batchId')}: {progress['numInputRows']} rows read "
                    f"({progress.get('processedRowsPerSecond') or 0:.1f} rows/s)"
                )


def is_remote_session(spark: object) -> bool:
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    return isinstance(spark, ConnectSession)


class ProgressFile:
    """A Spark Connect progress handler: the stages of the running operation, as the launcher reads them
    from the driver UI in the other modes ({"stages_done", "stages_total", "tasks_done", ...})."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.finished: dict[str, dict[str, int]] = {}  # by operation: earlier operations' totals count too

    def __call__(self, stages: object, inflight_tasks: int, operation_id: str | None, done: bool) -> None:
        stages = list(stages or [])
        current = {
            "stages_done": sum(1 for s in stages if s.done),
            "stages_total": len(stages),
            "tasks_done": sum(s.num_completed_tasks for s in stages),
            "tasks_total": sum(s.num_tasks for s in stages),
            "bytes_read": sum(s.num_bytes_read for s in stages),
        }
        self.finished[operation_id or ""] = current
        totals = {name: sum(op[name] for op in self.finished.values()) for name in current}
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(totals))
        temporary.replace(self.path)


def interrupt_on_sigterm(spark: object) -> None:
    """On cancel the launcher sends SIGTERM: a Connect server would otherwise go on running the operation
    of a client that went away. (In the other modes spark-submit's JVM stops the application itself.)"""

    def handler(number: int, frame: object) -> None:
        try:
            spark.interruptAll()
        finally:
            raise SystemExit(128 + number)

    signal.signal(signal.SIGTERM, handler)


if __name__ == "__main__":
    sys.exit(main())
