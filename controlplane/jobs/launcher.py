"""Starting spark-submit for a run in its own session, reading its progress, and stopping all of it.

Nothing here touches the database: services.py decides, this module only deals with processes and files.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controlplane.spark import artifact
from controlplane.spark.jobs.runtime import (
    DRIVER_FILE,
    JOB_LOG_FILE,
    KAFKA_CONFIG_ENV,
    PROGRESS_FILE,
    RESULT_FILE,
    SparkResources,
)
from controlplane.spark.tuning import topic_read_confs

REPO_ROOT = Path(__file__).resolve().parents[2]
SUBMIT_SCRIPT = REPO_ROOT / "controlplane" / "spark" / "submit.py"
DRIVER_LOG_CONFIGURATION = REPO_ROOT / "controlplane" / "spark" / "log4j2-driver.properties"
LOG_FILE = "driver.log"
LOG_SOURCES = ("job", "spark")
# Only what Java, Spark and Python need: the worker's own environment holds the database URL and secret key.
# SPARK_LOCAL_IP/SPARK_PUBLIC_DNS: the address executors on other hosts reach the driver (this host) at.
# STREAMHUB_SINK_TEST_PAUSE_BEFORE_COMMIT_S: the supervision test's hook into the topic sink (streaming.py).
PASSED_ENVIRONMENT = (
    "PATH", "HOME", "LANG", "LC_ALL", "JAVA_HOME", "TMPDIR", "SPARK_HOME", "SPARK_LOCAL_IP", "SPARK_PUBLIC_DNS",
    "STREAMHUB_SINK_TEST_PAUSE_BEFORE_COMMIT_S",
)  # fmt: skip
# Where the dependency archive is unpacked in each executor's working directory, and put on its Python path.
DEPENDENCIES_ALIAS = "streamhub-deps"
_CSRF_FIELD = re.compile(r'name="csrfToken"[^>]*value="([^"]*)"')
# py4j puts a Java exception's line after ": " (the topics source's JVM reader raises TopicReadError there too).
_ERROR_LINE = re.compile(
    r"^\s*(?::\s*)?(?:[\w.]+\.)?(TopicReadError|InvalidOptions|ProduceFailed|ValueError|AnalysisException|"
    r"[A-Z]\w*(?:Error|Exception)): (.+)$"
)


@dataclass(frozen=True)
class ClusterSettings:
    """How runs reach compute that shares nothing with this host (services.py fills it from the settings)."""

    artifacts_dir: Path
    # The interpreter executors start (None: this one). It must be the same CPython minor version as this
    # one when dependencies are shipped, as the archive holds compiled extensions.
    executor_python: str | None = None
    # Ship the third-party dependencies as an archive (off when the executors' Python has them installed).
    ship_dependencies: bool = True
    # The standalone master's web UI (application state, kill); default http://<master host>:8080.
    master_web_url: str | None = None


@dataclass(frozen=True)
class Shipment:
    """The built artifacts one run takes to the cluster."""

    code: Path
    dependencies: Path | None = None
    # The topics source's JVM reader (controlplane/spark/jvm.py); None where no JDK could build it.
    jvm_reader: Path | None = None


@dataclass
class SparkProcess:
    process: subprocess.Popen[bytes]
    output_dir: Path
    compute_target: str = "local[2]"

    @property
    def session_id(self) -> int:
        return self.process.pid  # start_new_session makes the child a session (and group) leader

    @property
    def log_path(self) -> Path:
        return self.output_dir / LOG_FILE


def is_local(compute_target: str) -> bool:
    return compute_target.startswith("local")


def is_connect(compute_target: str) -> bool:
    return compute_target.startswith("sc://")


def prepare_shipment(compute_target: str, settings: ClusterSettings) -> Shipment:
    """Builds (or reuses) the code artifact, the JVM reader's jar, and the dependency archive for a cluster's
    executors."""
    code = artifact.build_code_artifact(settings.artifacts_dir)
    ship = settings.ship_dependencies and not is_local(compute_target) and not is_connect(compute_target)
    # A Connect server's classpath is its operator's (README): spark-submit --remote starts no JVM of ours.
    jvm_reader = None if is_connect(compute_target) else artifact.build_jvm_reader(settings.artifacts_dir)
    dependencies = artifact.build_dependency_archive(settings.artifacts_dir) if ship else None
    return Shipment(code, dependencies, jvm_reader)


def submit_command(
    *,
    job: str,
    parameters: dict[str, Any],
    output_dir: Path,
    compute_target: str,
    shipment: Shipment,
    resources: SparkResources | None = None,
    settings: ClusterSettings | None = None,
    extra_arguments: list[str] | None = None,
) -> list[str]:
    """spark-submit's argv: no credential in it (they are in the connection file the driver reads).

    The driver always runs here, in client mode: it writes the run's result and progress into the run's
    directory, and Spark does not run Python applications in cluster mode on a standalone master.
    """
    resources = resources or SparkResources()
    executor_python = (settings.executor_python if settings else None) or sys.executable
    command = [str(Path(sys.executable).parent / "spark-submit")]
    if is_connect(compute_target):
        # The Connect server runs the plan: the client gives the session the code (submit.py --code-artifact).
        command += ["--remote", compute_target]
    else:
        command += ["--master", compute_target, "--deploy-mode", "client", "--py-files", str(shipment.code)]
        if shipment.jvm_reader is not None:
            # Batch reads of topics on the JVM (the driver serves the jar to the executors).
            command += ["--jars", str(shipment.jvm_reader)]
        command += ["--driver-memory", resources.driver_memory]
        command += ["--conf", f"spark.log.level={resources.spark_log_level}"]
        command += ["--conf", "spark.ui.port=0"]  # any free port: two runs may overlap
        command += ["--conf", f"spark.pyspark.driver.python={sys.executable}"]
        command += ["--conf", f"spark.pyspark.python={executor_python}"]
        # The driver's and executors' JVMs take in the topic source's Arrow batches (tuning.py). A Connect
        # server's JVMs are started by its operator with the same confs (README). The driver logs at the run's
        # level from its first line (log4j2-driver.properties).
        confs = topic_read_confs()
        confs["spark.driver.extraJavaOptions"] = " ".join(
            [
                confs["spark.driver.extraJavaOptions"],
                f"-Dlog4j2.configurationFile=file:{DRIVER_LOG_CONFIGURATION}",
                f"-Dstreamhub.spark.log.level={resources.spark_log_level}",
            ]
        )
        for name, value in confs.items():
            command += ["--conf", f"{name}={value}"]
    if not is_local(compute_target) and not is_connect(compute_target):
        command += ["--executor-memory", resources.executor_memory]
        command += ["--executor-cores", str(resources.executor_cores)]
        if compute_target.startswith("spark://"):
            command += ["--total-executor-cores", str(resources.executor_cores * resources.max_executors)]
        else:  # k8s, yarn
            command += ["--conf", f"spark.executor.instances={resources.max_executors}"]
            command += ["--conf", f"spark.dynamicAllocation.maxExecutors={resources.max_executors}"]
        if shipment.dependencies is not None:
            command += ["--archives", f"{shipment.dependencies}#{DEPENDENCIES_ALIAS}"]
            # Relative: archives are unpacked in the executor's working directory, where Python workers start.
            command += ["--conf", f"spark.executorEnv.PYTHONPATH={DEPENDENCIES_ALIAS}"]
    command += [
        "--conf", "spark.ui.showConsoleProgress=false",
        "--conf", "spark.sql.session.timeZone=UTC",
    ]  # fmt: skip
    if is_local(compute_target):
        command += ["--conf", "spark.driver.bindAddress=127.0.0.1", "--conf", "spark.driver.host=127.0.0.1"]
    command += [str(SUBMIT_SCRIPT), "--job", job, "--parameters", json.dumps(parameters)]
    command += ["--output-dir", str(output_dir), *(extra_arguments or [])]
    if is_connect(compute_target):
        command += ["--code-artifact", str(shipment.code)]
    return command


def _site_packages() -> list[str]:
    paths = sysconfig.get_paths()
    return list(dict.fromkeys([paths["purelib"], paths["platlib"]]))


def write_connection_file(directory: Path, kafka_config: dict[str, Any]) -> Path:
    """The librdkafka properties of the run (credentials included) in a file only this user can read."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / "connection.json"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump({key: str(value) for key, value in kafka_config.items()}, handle)
    return path


def start(
    *,
    job: str,
    parameters: dict[str, Any],
    output_dir: Path,
    compute_target: str,
    connection_file: Path,
    shipment: Shipment,
    resources: SparkResources | None = None,
    settings: ClusterSettings | None = None,
    extra_arguments: list[str] | None = None,
) -> SparkProcess:
    output_dir.mkdir(parents=True, exist_ok=True)
    environment = {name: os.environ[name] for name in PASSED_ENVIRONMENT if name in os.environ}
    environment.update(
        {
            # The driver imports the same artifact the executors get, not this checkout. PySpark plans a
            # Python data source in Python workers beside the driver, started with the executors' interpreter:
            # here they find the dependencies in this interpreter's site-packages (same CPython version).
            "PYTHONPATH": os.pathsep.join([str(shipment.code), *_site_packages()]),
            "PYSPARK_PYTHON": (settings.executor_python if settings else None) or sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            KAFKA_CONFIG_ENV: str(connection_file),
        }
    )
    if is_local(compute_target):
        environment["SPARK_LOCAL_IP"] = "127.0.0.1"
    if is_connect(compute_target):
        environment["SPARK_REMOTE"] = compute_target  # what PySpark's session builder connects to
    command = submit_command(
        job=job,
        parameters=parameters,
        output_dir=output_dir,
        compute_target=compute_target,
        shipment=shipment,
        resources=resources,
        settings=settings,
        extra_arguments=extra_arguments,
    )
    with open(output_dir / LOG_FILE, "ab") as log:
        process = subprocess.Popen(
            command,
            cwd=output_dir,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return SparkProcess(process, output_dir, compute_target)


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


def driver_info(output_dir: Path) -> dict[str, Any]:
    """What the driver wrote once its session was up: {"ui", "application_id"} (empty before that)."""
    try:
        return json.loads((output_dir / DRIVER_FILE).read_text())
    except (OSError, ValueError):
        return {}


def ui_address(output_dir: Path) -> str | None:
    return driver_info(output_dir).get("ui")


def connect_progress(output_dir: Path) -> dict[str, int] | None:
    """Progress a Spark Connect client heard from its server (submit.py writes it), None before any."""
    try:
        return json.loads((output_dir / PROGRESS_FILE).read_text())
    except (OSError, ValueError):
        return None


def run_progress(spark: SparkProcess) -> dict[str, int] | None:
    if is_connect(spark.compute_target):
        return connect_progress(spark.output_dir)
    address = ui_address(spark.output_dir)
    return read_progress(address) if address else None


def master_web_url(compute_target: str, settings: ClusterSettings | None) -> str | None:
    """The standalone master's web UI for a spark:// target (the first master of an HA list)."""
    if not compute_target.startswith("spark://"):
        return None
    if settings and settings.master_web_url:
        return settings.master_web_url.rstrip("/")
    host = compute_target.removeprefix("spark://").split(",")[0].rsplit(":", 1)[0]
    return f"http://{host}:8080"


def master_application(web_url: str, application_id: str) -> dict[str, Any] | None:
    """The master's record of an application, from its JSON state (None if it does not know it)."""
    state = _get_json(f"{web_url}/json/")
    for application in state.get("activeapps", []) + state.get("completedapps", []):
        if application.get("id") == application_id:
            return application
    return None


def kill_on_master(web_url: str, application_id: str) -> None:
    """Asks the master to kill the application: its executors stop wherever they run.

    The master's kill endpoint is its web UI's own form, which carries the UI's CSRF token (Spark 4): read it
    from the page that shows the form, as a browser would.
    """
    with urllib.request.urlopen(f"{web_url}/", timeout=5) as response:
        page = response.read().decode(errors="replace")
    fields = {"id": application_id, "terminate": "true"}
    token = _CSRF_FIELD.search(page)
    if token:
        fields["csrfToken"] = html.unescape(token.group(1))
    body = urllib.parse.urlencode(fields).encode()
    request = urllib.request.Request(f"{web_url}/app/kill/", data=body, method="POST")
    with urllib.request.urlopen(request, timeout=5):
        pass


def cancel(spark: SparkProcess, settings: ClusterSettings | None, grace_seconds: float = 10.0) -> None:
    """Stops a run everywhere: the application on a standalone master first (so its executors on other
    hosts stop even if the driver here cannot say goodbye), then every local process of the run."""
    web_url = master_web_url(spark.compute_target, settings)
    application_id = driver_info(spark.output_dir).get("application_id")
    if web_url and application_id:
        try:
            kill_on_master(web_url, application_id)
        except (OSError, urllib.error.URLError) as error:
            # The driver's own stop below still ends the application; say why the master was not asked.
            with open(spark.log_path, "a") as log:
                log.write(f"streamhub: could not ask the master to kill {application_id}: {error}\n")
    stop(spark, grace_seconds)


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


def failure_reason(log_path: Path, return_code: int, since: int = 0) -> str:
    """The most telling error line of a failed run's log (from byte `since`: a restarted stream's log holds
    its earlier drivers' lines too), or its exit status."""
    try:
        with open(log_path, "rb") as log:
            log.seek(since)
            lines = log.read().decode(errors="replace").splitlines()
    except OSError:
        lines = []
    # pyspark prints a ParseException's message on the line after its name ("…ParseException: \n[PARSE_…"):
    # joined, the reason is Spark's own sentence.
    lines = [
        f"{line} {lines[index + 1].strip()}"
        if line.endswith(("Exception: ", "Exception:")) and index + 1 < len(lines)
        else line
        for index, line in enumerate(lines)
    ]
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


def log_tail(output_dir: Path, lines: int = 200, source: str = "job") -> list[str]:
    """The last lines of a run's log: the job's own ("job": what it started, read, wrote, why it failed) or the
    driver's whole log ("spark": Spark's lines and the job's, as the driver printed them). A run from before
    the job's log existed shows its driver's log."""
    path = output_dir / (JOB_LOG_FILE if source == "job" else LOG_FILE)
    if source == "job" and not path.exists():
        path = output_dir / LOG_FILE
    try:
        return path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return []
