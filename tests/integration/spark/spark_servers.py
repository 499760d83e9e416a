"""Real Spark servers started from the product's own pyspark: a standalone master and worker, and a Spark
Connect server. None of them has the repository on its Python path or as its working directory: they stand
for hosts that share nothing with the control plane."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyspark
import pytest

from tests.fixtures.servers import free_port, wait_until

SPARK_HOME = Path(pyspark.__file__).parent
REPO_ROOT = Path(__file__).resolve().parents[3]


def executor_python() -> str:
    """This CPython without the control plane's virtualenv: no pyarrow, confluent-kafka or repository, so
    whatever the executors import arrives in the artifacts a run ships."""
    return str(Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}")


def spark_environment(directory: Path) -> dict[str, str]:
    """What a Spark host has: Java, Spark, a home; no PYTHONPATH, no virtualenv on PATH."""
    environment = {
        "PATH": os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if ".venv" not in p),
        "HOME": os.environ.get("HOME", str(directory)),
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(directory / "logs"),
        "SPARK_PID_DIR": str(directory / "pids"),
        "SPARK_CONF_DIR": str(directory / "conf"),
    }
    if "JAVA_HOME" in os.environ:
        environment["JAVA_HOME"] = os.environ["JAVA_HOME"]
    (directory / "conf").mkdir(parents=True, exist_ok=True)
    assert not str(directory.resolve()).startswith(str(REPO_ROOT))
    return environment


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def _answers(url: str) -> bool:
    try:
        get_json(url)
    except OSError:
        return False
    return True


@dataclass
class StandaloneCluster:
    master_url: str
    web_url: str
    worker_dir: Path

    def state(self) -> dict:
        return get_json(f"{self.web_url}/json/")

    def application(self, application_id: str) -> dict | None:
        state = self.state()
        for where in ("activeapps", "completedapps"):
            for application in state.get(where, []):
                if application["id"] == application_id:
                    return {**application, "list": where}
        return None


def _spark_class(main: str, arguments: list[str], directory: Path, log: Path) -> subprocess.Popen:
    with open(log, "ab") as output:
        return subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), main, *arguments],
            cwd=directory,
            env=spark_environment(directory),
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # the worker's executors are stopped with it
        )


def _stop_group(process: subprocess.Popen) -> None:
    for number, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, number)
        except ProcessLookupError:
            return
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture
def standalone_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """A master and one worker (2 cores, 2 GB) from pyspark's own classes, via spark-class."""
    directory = tmp_path_factory.mktemp("spark-standalone")
    port, web_port = free_port(), free_port()
    master = _spark_class(
        "org.apache.spark.deploy.master.Master",
        ["--host", "127.0.0.1", "--port", str(port), "--webui-port", str(web_port)],
        directory,
        directory / "master.log",
    )
    cluster = StandaloneCluster(
        f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{web_port}", directory / "work"
    )
    worker = None
    try:
        wait_until(lambda: _answers(f"{cluster.web_url}/json/"), 90, "the Spark master", interval=0.5)
        worker = _spark_class(
            "org.apache.spark.deploy.worker.Worker",
            [
                *("--host", "127.0.0.1", "--cores", "2", "--memory", "2g"),
                *("--webui-port", str(free_port()), "--work-dir", str(cluster.worker_dir)),
                cluster.master_url,
            ],
            directory,
            directory / "worker.log",
        )
        wait_until(
            lambda: any(w["state"] == "ALIVE" for w in cluster.state()["workers"]),
            90,
            "the Spark worker to register",
            interval=0.5,
        )
        yield cluster
    finally:
        if worker is not None:
            _stop_group(worker)
        _stop_group(master)


@dataclass
class ConnectServer:
    url: str
    directory: Path

    def log(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in (self.directory / "logs").glob("*.out"))

    def requests(self) -> list[tuple[str, str]]:
        """Every request the server received, whole, as (gRPC method, protobuf text): what clients sent
        (connect_recorder/RecordingInterceptor.java)."""
        text = (self.directory / "requests.txt").read_text(errors="replace")
        records = [record.split("\n", 1) for record in text.split("== ")[1:]]
        return [(method.rsplit("/", 1)[-1], body) for method, body in records]

    def event_log(self) -> str:
        """Spark's event log of the server: each operation's plan as the server got it (the Connect listener's
        statementText, the jobs' descriptions), so what a client sent can be read back."""
        files = sorted(path for path in (self.directory / "events").rglob("*") if path.is_file())
        return "\n".join(path.read_text(errors="replace") for path in files)

    def files_holding(self, text: str) -> list[Path]:
        """Files under the server's own temporary and local directories that contain `text`."""
        needle = text.encode()
        return [
            path
            for root in (self.directory / "tmp", self.directory / "local")
            for path in root.rglob("*")
            if path.is_file() and needle in path.read_bytes()
        ]


@pytest.fixture
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectServer]:
    """A Spark Connect server (local[2]) started with pyspark's sbin/start-connect-server.sh and stopped with
    its stop script. Its Python has the third-party packages but not the repository: the code comes from
    the client's addArtifacts."""
    directory = tmp_path_factory.mktemp("spark-connect")
    for name in ("events", "tmp", "local"):
        (directory / name).mkdir()
    recorder = _compile_request_recorder(directory / "recorder")
    port = free_port()
    environment = {
        **spark_environment(directory),
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_IDENT_STRING": f"streamhub-test-{port}",
    }
    command = [
        str(SPARK_HOME / "sbin" / "start-connect-server.sh"),
        "--master", "local[2]",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", "spark.ui.port=0",
        "--conf", "spark.sql.shuffle.partitions=2",
        "--conf", "spark.driver.bindAddress=127.0.0.1",
        "--conf", "spark.driver.host=127.0.0.1",
        # Everything it records and keeps stays in its directory, for the tests to read.
        "--conf", "spark.eventLog.enabled=true",
        "--conf", f"spark.eventLog.dir={directory / 'events'}",
        "--conf", "spark.eventLog.compress=false",
        "--conf", f"spark.local.dir={directory / 'local'}",
        "--conf", f"spark.driver.extraJavaOptions=-Djava.io.tmpdir={directory / 'tmp'} "
        f"-Dstreamhub.test.requests={directory / 'requests.txt'}",
        # Every request it receives, whole, into requests.txt.
        "--conf", f"spark.driver.extraClassPath={recorder}",
        "--conf", "spark.connect.grpc.interceptor.classes=RecordingInterceptor",
    ]  # fmt: skip
    subprocess.run(command, cwd=directory, env=environment, check=True, capture_output=True, timeout=120)
    server = ConnectServer(f"sc://127.0.0.1:{port}", directory)
    try:
        wait_until(lambda: _port_open(port), 120, "the Spark Connect server", interval=0.5)
        yield server
    finally:
        subprocess.run(
            [str(SPARK_HOME / "sbin" / "stop-connect-server.sh")],
            cwd=directory,
            env=environment,
            capture_output=True,
            timeout=120,
        )


def _compile_request_recorder(directory: Path) -> Path:
    """connect_recorder/RecordingInterceptor.java compiled against pyspark's jars (their shaded gRPC) into
    `directory`, a class path entry for the server's driver."""
    java_home = os.environ.get("JAVA_HOME")
    javac = str(Path(java_home) / "bin" / "javac") if java_home else "javac"
    source = Path(__file__).parent / "connect_recorder" / "RecordingInterceptor.java"
    command = [
        javac,
        "--release",
        "17",
        "-d",
        str(directory),
        "-cp",
        str(SPARK_HOME / "jars" / "*"),
        str(source),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    return directory


def _port_open(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0
