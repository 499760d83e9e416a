"""What every catalog job shares: how it finds its cluster credentials, reads its topic range and reports.

A job learns its connection from a JSON file named by STREAMHUB_KAFKA_CONFIG_FILE (librdkafka properties,
mode 0600), so credentials never appear in argv or process lists; its non-secret parameters come as JSON.
Results go to <output_dir>/result.json and, unchanged, into JobRun.result (see Result.as_json for the shape).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controlplane.spark.options import CONNECTION_FILE_OPTION

KAFKA_CONFIG_ENV = "STREAMHUB_KAFKA_CONFIG_FILE"
RESULT_FILE = "result.json"
DRIVER_FILE = "driver.json"  # where the driver's UI listens, written as soon as the session is up
PROGRESS_FILE = "progress.json"  # stage progress a Spark Connect client hears from its server
# The job's own lines (started, each micro-batch's rows, what its sink wrote, why it failed), apart from the
# driver's log (driver.log: everything the driver process prints, Spark's lines included).
JOB_LOG_FILE = "job.log"
JOB_LINE_PREFIX = "streamhub: "
RESOURCES_PARAMETER = "resources"
_MEMORY = re.compile(r"^(\d+)([mg])$")
_SINGLE_SELECT = re.compile(r"^\s*(select|with)\b[^;]*;?\s*$", re.IGNORECASE | re.DOTALL)


SPARK_LOG_LEVELS = ("ERROR", "WARN", "INFO", "DEBUG")


@dataclass(frozen=True)
class SparkResources:
    """What one run asks of the cluster, given as the `resources` object of any job's parameters.

    Memory as Spark spells it ("512m", "2g"); `max_executors` bounds the executors of a run, so one team's
    run cannot take a whole shared cluster (standalone: total cores = max_executors * executor_cores).
    """

    driver_memory: str = "1g"
    executor_memory: str = "1g"
    executor_cores: int = 1
    max_executors: int = 2
    # Spark's own log level in the driver log: its INFO lines (hundreds per micro-batch) drown the job's own.
    spark_log_level: str = "WARN"

    def __post_init__(self) -> None:
        if self.spark_log_level not in SPARK_LOG_LEVELS:
            raise ValueError(f"resources.spark_log_level must be one of {', '.join(SPARK_LOG_LEVELS)}")
        for name in ("driver_memory", "executor_memory"):
            match = _MEMORY.match(str(getattr(self, name)).lower())
            megabytes = int(match.group(1)) * (1024 if match.group(2) == "g" else 1) if match else 0
            if not 256 <= megabytes <= 64 * 1024:
                raise ValueError(f"resources.{name} must be 256m to 64g, as '512m' or '2g'")
        for name, most in (("executor_cores", 32), ("max_executors", 64)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
                raise ValueError(f"resources.{name} must be a whole number from 1 to {most}")


def split_resources(parameters: dict[str, Any]) -> tuple[dict[str, Any], SparkResources]:
    """The job's own parameters, and the resources the run asks for (defaults where not given)."""
    own = {name: value for name, value in parameters.items() if name != RESOURCES_PARAMETER}
    asked = parameters.get(RESOURCES_PARAMETER) or {}
    if not isinstance(asked, dict):
        raise ValueError("resources must be an object")
    known = {f.name for f in dataclasses.fields(SparkResources)}
    if set(asked) - known:
        raise ValueError(f"unknown resources: {', '.join(sorted(set(asked) - known))}")
    return own, SparkResources(**asked)


@dataclass(frozen=True)
class TopicRange:
    """Which records a job reads: a topic, and optionally offsets (JSON as in the data source) or timestamps."""

    topic: str
    starting_offsets: str = "earliest"
    ending_offsets: str = "latest"
    starting_timestamp: int | None = None
    ending_timestamp: int | None = None
    fail_on_data_loss: bool = True


@dataclass
class Table:
    columns: list[str]
    rows: list[list[Any]]


@dataclass
class Chart:
    """Plot data: one x axis and one or more named series of numbers (None where a series has no value)."""

    kind: str  # "bar" or "line"
    x: list[Any]
    series: dict[str, list[float | int | None]]
    x_label: str = ""


@dataclass
class Result:
    tables: dict[str, Table] = field(default_factory=dict)
    charts: dict[str, Chart] = field(default_factory=dict)
    # Structured results that are neither tables nor charts, e.g. a suggested JSON Schema.
    documents: dict[str, Any] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """The stored shape, lists in the order the job gave them so the console can show them as they are:

        {"tables": [{"name", "columns": [str], "rows": [[value]]}],
         "charts": [{"name", "kind": "bar"|"line", "x_label", "x": [value], "series": [{"name", "values"}]}],
         "documents": [{"name", "content": any JSON}],
         "files": [path relative to the run's directory], "metrics": {name: number|string|bool}}
        """
        return {
            "tables": [{"name": name, **dataclasses.asdict(table)} for name, table in self.tables.items()],
            "charts": [
                {
                    "name": name,
                    "kind": chart.kind,
                    "x_label": chart.x_label,
                    "x": chart.x,
                    "series": [{"name": label, "values": values} for label, values in chart.series.items()],
                }
                for name, chart in self.charts.items()
            ],
            "documents": [{"name": name, "content": content} for name, content in self.documents.items()],
            "files": self.files,
            "metrics": self.metrics,
        }


def connection_options(kafka_config: dict[str, str], connection_file: str | None) -> dict[str, str]:
    """How the `topics` source is told the connection: the name of the session file holding it where there is one
    (Spark Connect: the plan goes to a server that logs it, so it must not carry the credentials), else the
    properties themselves as `kafka.*` options."""
    if connection_file is not None:
        return {CONNECTION_FILE_OPTION: connection_file}
    return {f"kafka.{key}": str(value) for key, value in kafka_config.items()}


@dataclass(frozen=True)
class JobContext:
    kafka_config: dict[str, str]
    output_dir: Path
    # Spark Connect: the name of the session file with kafka_config (topic_source.add_connection_file).
    connection_file: str | None = None

    def source_options(self, source: TopicRange) -> dict[str, str]:
        options = connection_options(self.kafka_config, self.connection_file)
        options["subscribe"] = source.topic
        options["failOnDataLoss"] = str(source.fail_on_data_loss).lower()
        if source.starting_timestamp is not None:
            options["startingTimestamp"] = str(source.starting_timestamp)
        else:
            options["startingOffsets"] = source.starting_offsets
        if source.ending_timestamp is not None:
            options["endingTimestamp"] = str(source.ending_timestamp)
        else:
            options["endingOffsets"] = source.ending_offsets
        return options

    def read(self, spark: Any, source: TopicRange) -> Any:
        return spark.read.format("topics").options(**self.source_options(source)).load()

    def sink_options(self, topic: str) -> dict[str, str]:
        return {"topic": topic, **connection_options(self.kafka_config, self.connection_file)}


def single_select(sql: str) -> str:
    """A user's transform, checked to be one SELECT (or WITH … SELECT), without its trailing semicolon."""
    if not isinstance(sql, str) or not _SINGLE_SELECT.match(sql):
        raise ValueError("the transform must be a single SELECT statement over the view 'source'")
    return sql.strip().rstrip(";")


def transform_sql(spark: Any, sql: str) -> str:
    """A user's transform (single_select), with reading files from SQL switched off in the session so it can
    only see the views the job made."""
    checked = single_select(sql)
    spark.conf.set("spark.sql.runSQLOnFiles", "false")
    return checked


_job_log: dict[str, Path] = {}


def open_job_log(output_dir: Path) -> None:
    """Where this driver's job_line calls go (submit.py names the run's output directory once)."""
    _job_log["path"] = output_dir / JOB_LOG_FILE


def job_line(message: str) -> None:
    """One line of the job's own log: into job.log with its UTC time, and as "streamhub: …" into the driver's
    log, where it stands out from Spark's."""
    line = f"{JOB_LINE_PREFIX}{message}"
    print(line, flush=True)
    path = _job_log.get("path")
    if path is not None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with open(path, "a") as log:
            log.write(f"{stamp} {line}\n")


def load_kafka_config() -> dict[str, str]:
    path = os.environ.get(KAFKA_CONFIG_ENV)
    if not path:
        raise RuntimeError(f"{KAFKA_CONFIG_ENV} does not name a connection file")
    return {str(k): str(v) for k, v in json.loads(Path(path).read_text()).items()}


def parameters_from_json(parameters_type: type, data: dict[str, Any]) -> Any:
    """Build a (nested) parameters dataclass from JSON, refusing unknown names."""
    known = {f.name: f for f in dataclasses.fields(parameters_type)}
    unknown = set(data) - set(known)
    if unknown:
        raise ValueError(f"unknown parameters: {', '.join(sorted(unknown))}")
    # A nested object becomes the dataclass its field declares (TopicRange, StreamSource, ...).
    hints = typing.get_type_hints(parameters_type)
    values = {}
    for name, value in data.items():
        if isinstance(value, dict) and dataclasses.is_dataclass(hints.get(name)):
            value = parameters_from_json(hints[name], value)
        values[name] = value
    return parameters_type(**values)


def write_result(output_dir: Path, result: Result, started: float) -> None:
    result.metrics.setdefault("duration_seconds", round(time.monotonic() - started, 3))
    records = result.metrics.get("records_read")
    if records is not None and result.metrics["duration_seconds"] > 0:
        result.metrics["records_per_second"] = round(records / result.metrics["duration_seconds"], 1)
    temporary = output_dir / (RESULT_FILE + ".tmp")
    temporary.write_text(json.dumps(result.as_json(), default=str, indent=1))
    temporary.replace(output_dir / RESULT_FILE)
