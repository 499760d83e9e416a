"""Starting spark-submit for a run in its own session, reading its progress, and stopping all of it.

Nothing here touches the database: services.py decides, this module only deals with processes and files.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controlplane.spark.jobs.runtime import DRIVER_FILE, KAFKA_CONFIG_ENV, RESULT_FILE

REPO_ROOT = Path(__file__).resolve().parents[2]
SUBMIT_SCRIPT = REPO_ROOT / "controlplane" / "spark" / "submit.py"
LOG_FILE = "driver.log"
# Only what Java, Spark and Python need: the worker's own environment holds the database URL and secret key.
PASSED_ENVIRONMENT = ("PATH", "HOME", "LANG", "LC_ALL", "JAVA_HOME", "TMPDIR", "SPARK_HOME")
_ERROR_LINE = re.compile(
    r"^\s*(?:[\w.]+\.)?(TopicReadError|InvalidOptions|ProduceFailed|ValueError|AnalysisException|"
    r"[A-Z]\w*(?:Error|Exception)): (.+)$"
)


@dataclass
class SparkProcess:
    process: subprocess.Popen[bytes]
    output_dir: Path

    @property
    def session_id(self) -> int:
        return self.process.pid  # start_new_session makes the child a session (and group) leader

    @property
    def log_path(self) -> Path:
        return self.output_dir / LOG_FILE


def submit_command(
    *, job: str, parameters: dict[str, Any], output_dir: Path, compute_target: str
) -> list[str]:
    command = [str(Path(sys.executable).parent / "spark-submit")]
    command += (
        ["--remote", compute_target] if compute_target.startswith("sc://") else ["--master", compute_target]
    )
    command += [
        "--conf", "spark.ui.port=0",  # any free port: two runs may overlap
        "--conf", "spark.ui.showConsoleProgress=false",
        "--conf", "spark.sql.session.timeZone=UTC",
        "--conf", f"spark.pyspark.python={sys.executable}",
    ]  # fmt: skip
    if compute_target.startswith("local"):
        command += ["--conf", "spark.driver.bindAddress=127.0.0.1", "--conf", "spark.driver.host=127.0.0.1"]
    command += [str(SUBMIT_SCRIPT), "--job", job, "--parameters", json.dumps(parameters)]
    command += ["--output-dir", str(output_dir)]
    return command


def write_connection_file(directory: Path, kafka_config: dict[str, Any]) -> Path:
    """The librdkafka properties of the run (credentials included) in a file only this user can read."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / "connection.json"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump({key: str(value) for key, value in kafka_config.items()}, handle)
    return path


def start(
    *, job: str, parameters: dict[str, Any], output_dir: Path, compute_target: str, connection_file: Path
) -> SparkProcess:
    output_dir.mkdir(parents=True, exist_ok=True)
    environment = {name: os.environ[name] for name in PASSED_ENVIRONMENT if name in os.environ}
    environment.update(
        {
            "PYTHONPATH": str(REPO_ROOT),
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1",
            KAFKA_CONFIG_ENV: str(connection_file),
        }
    )
    with open(output_dir / LOG_FILE, "ab") as log:
        process = subprocess.Popen(
            submit_command(
                job=job, parameters=parameters, output_dir=output_dir, compute_target=compute_target
            ),
            cwd=output_dir,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return SparkProcess(process, output_dir)


def session_processes(session_id: int) -> list[int]:
    """Every live process of a session: PySpark's daemon moves its workers to their own group, not session."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the command (which may contain spaces) start after the last ')'.
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == session_id and fields[0] != "Z":
            pids.append(int(entry.name))
    return pids


def stop(spark: SparkProcess, grace_seconds: float = 10.0) -> None:
    stop_session(spark.session_id, grace_seconds)
    if spark.process.poll() is None:
        spark.process.wait(5)


def stop_session(session_id: int, grace_seconds: float = 10.0) -> None:
    """SIGTERM to every process of the session, then SIGKILL to whatever is left after the grace period."""
    for pid in session_processes(session_id):
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    while time.monotonic() < deadline and session_processes(session_id):
        time.sleep(0.1)
    for pid in session_processes(session_id):
        _signal(pid, signal.SIGKILL)


def _signal(pid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, number)


def ui_address(output_dir: Path) -> str | None:
    try:
        return json.loads((output_dir / DRIVER_FILE).read_text()).get("ui")
    except (OSError, ValueError):
        return None


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=2) as response:
        return json.loads(response.read())


def read_progress(address: str) -> dict[str, int] | None:
    """Stages and tasks done of total, and records read, from the driver UI's REST API (None if it is not up)."""
    try:
        applications = _get_json(f"{address}/api/v1/applications")
        if not applications:
            return None
        stages = _get_json(f"{address}/api/v1/applications/{applications[0]['id']}/stages")
    except (OSError, urllib.error.URLError, ValueError):
        return None
    return summarize_stages(stages)


def summarize_stages(stages: list[dict[str, Any]]) -> dict[str, int]:
    # A stage retried after a failure appears once per attempt; the latest attempt counts.
    latest: dict[int, dict[str, Any]] = {}
    for stage in stages:
        if stage["stageId"] not in latest or stage["attemptId"] > latest[stage["stageId"]]["attemptId"]:
            latest[stage["stageId"]] = stage
    finished = {"COMPLETE", "SKIPPED"}
    return {
        "stages_done": sum(1 for s in latest.values() if s["status"] in finished),
        "stages_total": len(latest),
        "tasks_done": sum(s.get("numCompleteTasks", 0) for s in latest.values()),
        "tasks_total": sum(s.get("numTasks", 0) for s in latest.values()),
        "records_read": sum(s.get("inputRecords", 0) for s in latest.values()),
    }


def failure_reason(log_path: Path, return_code: int) -> str:
    """The most telling error line of a failed run's log, or its exit status."""
    try:
        lines = log_path.read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    found = [match for line in lines if (match := _ERROR_LINE.match(line))]
    ours = [
        m for m in found if m.group(1) in ("TopicReadError", "InvalidOptions", "ProduceFailed", "ValueError")
    ]
    chosen = (ours or found or [None])[-1]
    if chosen is None:
        return f"spark-submit exited with status {return_code}"
    return f"{chosen.group(1)}: {chosen.group(2)}"[:2000]


def read_result(output_dir: Path) -> dict[str, Any] | None:
    path = output_dir / RESULT_FILE
    return json.loads(path.read_text()) if path.exists() else None


def log_tail(output_dir: Path, lines: int = 200) -> list[str]:
    try:
        return (output_dir / LOG_FILE).read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return []
