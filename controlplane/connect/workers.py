"""Kafka Connect workers (Apache Kafka's `ConnectDistributed`) as processes on this host, on plain values.

A Connect cluster's files live under `DATA_DIR/connect/<connect cluster id>/`:
  worker-<n>/worker.properties   the worker's config (0600: it holds the worker's SCRAM password)
  worker-<n>/worker.log          log4j's log; worker.out the JVM's own output; worker.pid
  secrets/<connector>.properties connector secrets (0600), read by the workers' FileConfigProvider, which may
                                 read nothing outside this directory (`allowed.paths`)
Workers are started through the clusters app's detach module (their own session, re-parented to init), so
they outlive the web process as brokers do. Nothing here touches the database.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from controlplane.apache_kafka import runtime

HOST = "127.0.0.1"
WORKER_MAIN = runtime.TOOL_MAIN_CLASSES["connect-distributed"]
PLUGINS_POM = runtime.REPO_ROOT / "jvm" / "connect-plugins" / "pom.xml"
LOG_TAIL_LINES = 30
STACK_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")
# Connectors' secrets are referenced as ${file:<path>:<key>}; FileConfigProvider resolves them in the worker.
CONFIG_PROVIDER = "file"


class WorkerFailed(Exception):
    """A worker cannot be configured or started; the message is shown to the org admin."""


@dataclass(frozen=True)
class WorkerPlan:
    """Where one worker lives: its directory and the REST port it answers on (127.0.0.1 only)."""

    index: int
    rest_port: int
    directory: Path

    @property
    def config_path(self) -> Path:
        return self.directory / "worker.properties"

    @property
    def log_path(self) -> Path:
        return self.directory / "worker.log"

    @property
    def output_path(self) -> Path:
        return self.directory / "worker.out"

    @property
    def pid_path(self) -> Path:
        return self.directory / "worker.pid"

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.rest_port}"


@dataclass(frozen=True)
class ClusterLogin:
    """How the workers reach the Kafka cluster: its bootstrap servers and the Connect cluster's own user."""

    bootstrap_servers: str
    security_protocol: str
    sasl_mechanism: str
    username: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class WorkerGroup:
    """What every worker of one Connect cluster shares: the group, its internal topics, the secrets directory."""

    group_id: str
    replication_factor: int
    secrets_dir: Path

    @property
    def config_topic(self) -> str:
        return f"{self.group_id}-configs"

    @property
    def offset_topic(self) -> str:
        return f"{self.group_id}-offsets"

    @property
    def status_topic(self) -> str:
        return f"{self.group_id}-status"

    @property
    def internal_topics(self) -> tuple[str, str, str]:
        return (self.config_topic, self.offset_topic, self.status_topic)


def heap() -> str:
    """Each worker's JVM heap: 384 MiB fits Connect with Debezium on a shared two-core machine (the host's
    engineers run several); CONNECT_WORKER_HEAP overrides it (e.g. 1g on a dedicated host)."""
    return os.environ.get("CONNECT_WORKER_HEAP", "384m")


def plugins_home() -> Path:
    return Path(os.environ.get("CONNECT_PLUGINS_HOME") or runtime.REPO_ROOT / ".cache" / "connect-plugins")


def plugin_path() -> list[Path]:
    """Apache Kafka's own plugin directories (FileStream) and the pinned Debezium release's, as installed by
    scripts/bootstrap.sh; a missing directory is left out (its plugins are then not in the catalog)."""
    version = re.search(r"<debezium\.version>([^<]+)</debezium\.version>", PLUGINS_POM.read_text())
    paths = [runtime.installation().plugins]
    if version is not None:
        paths.append(plugins_home() / f"debezium-{version.group(1)}")
    return [path for path in paths if path.is_dir()]


def _jaas(login: ClusterLogin) -> str:
    module = (
        "org.apache.kafka.common.security.scram.ScramLoginModule"
        if login.sasl_mechanism.startswith("SCRAM")
        else "org.apache.kafka.common.security.plain.PlainLoginModule"
    )
    return f'{module} required username="{login.username}" password="{login.password}";'


def client_properties(login: ClusterLogin) -> dict[str, str]:
    properties = {"bootstrap.servers": login.bootstrap_servers, "security.protocol": login.security_protocol}
    if login.security_protocol.startswith("SASL"):
        properties["sasl.mechanism"] = login.sasl_mechanism
        properties["sasl.jaas.config"] = _jaas(login)
    return properties


def worker_properties(plan: WorkerPlan, login: ClusterLogin, group: WorkerGroup) -> dict[str, str]:
    client = client_properties(login)
    replication = str(group.replication_factor)
    return {
        **client,
        # The worker's own clients and every connector's producers, consumers and admins log in as it does;
        # connectors may not override any client setting (policy None), so none can reach another cluster
        # or log in as someone else.
        **{
            f"{prefix}.{key}": value
            for prefix in ("producer", "consumer", "admin")
            for key, value in client.items()
        },
        "connector.client.config.override.policy": "None",
        "group.id": group.group_id,
        "config.storage.topic": group.config_topic,
        "offset.storage.topic": group.offset_topic,
        "status.storage.topic": group.status_topic,
        "config.storage.replication.factor": replication,
        "offset.storage.replication.factor": replication,
        "status.storage.replication.factor": replication,
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "false",
        "value.converter.schemas.enable": "false",
        "listeners": f"http://{HOST}:{plan.rest_port}",
        "rest.advertised.host.name": HOST,
        "rest.advertised.port": str(plan.rest_port),
        "rest.advertised.listener": "http",
        "plugin.path": ",".join(str(path) for path in plugin_path()),
        # Plugins from their ServiceLoader manifests (Connect's and Debezium's have them): scanning every
        # class of the ~100 jars on the classpath took ~40 s per start here.
        "plugin.discovery": "service_load",
        "offset.flush.interval.ms": "1000",
        # A worker that died (not one that left) gets its tasks back if it returns within this delay, else
        # they move to the others: Connect's default waits 5 minutes, too long for a managed service.
        "scheduled.rebalance.max.delay.ms": "10000",
        "config.providers": CONFIG_PROVIDER,
        f"config.providers.{CONFIG_PROVIDER}.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        # KIP-993: a connector config can name no file outside the secrets directory.
        f"config.providers.{CONFIG_PROVIDER}.param.allowed.paths": str(group.secrets_dir),
    }


def write_private(path: Path, text: str) -> None:
    """Replaces `path` with `text` in a file that is 0600 from its creation (never briefly readable)."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.unlink(missing_ok=True)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)
    temporary.replace(path)


def properties_text(properties: dict[str, str]) -> str:
    for key, value in properties.items():
        if "\n" in key or "\n" in value:
            raise WorkerFailed(f"The worker property {key!r} holds a line break.")
    # Java properties treat a backslash as an escape: written doubled, read back as one.
    return "".join(f"{key}={value.replace(chr(92), chr(92) * 2)}\n" for key, value in properties.items())


def write_worker_config(plan: WorkerPlan, login: ClusterLogin, group: WorkerGroup) -> None:
    try:
        plan.directory.mkdir(parents=True, exist_ok=True)
        plan.directory.chmod(0o700)
        group.secrets_dir.mkdir(parents=True, exist_ok=True)
        group.secrets_dir.chmod(0o700)
        write_private(plan.config_path, properties_text(worker_properties(plan, login, group)))
    except OSError as error:
        raise WorkerFailed(f"Cannot write worker {plan.index}'s config: {error}") from error


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def free_port(taken: set[int]) -> int:
    """A port free on 127.0.0.1 now and not among `taken` (ports planned for other workers)."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind((HOST, 0))
            port = probe.getsockname()[1]
        if port not in taken:
            return port
    raise WorkerFailed("No free port on 127.0.0.1 for a Connect worker.")


def start_worker(plan: WorkerPlan) -> int:
    """Starts the worker detached (see controlplane/clusters/provisioners/detach.py) and returns its pid."""
    if not port_is_free(plan.rest_port):
        raise WorkerFailed(f"Port {plan.rest_port} on {HOST} is already in use.")
    try:
        log4j = runtime.file_log4j_config(plan.directory / "log4j2.properties", plan.log_path)
        command = runtime.installation().command(
            WORKER_MAIN, str(plan.config_path), heap=heap(), log4j_config=log4j
        )
    except runtime.ApacheKafkaNotInstalled as error:
        raise WorkerFailed(str(error)) from error
    launcher = [
        sys.executable,
        "-m",
        "controlplane.clusters.provisioners.detach",
        str(plan.output_path),
        str(plan.pid_path),
        *command,
    ]
    try:
        launched = subprocess.run(
            launcher, cwd=runtime.REPO_ROOT, capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise WorkerFailed(f"Cannot start worker {plan.index}: {error}") from error
    if launched.returncode != 0:
        raise WorkerFailed(f"Cannot start worker {plan.index}: {launched.stderr.strip()}")
    return int(launched.stdout.strip())


def _is_worker_process(plan: WorkerPlan, pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False
    state = status.rsplit(")", 1)[-1].split()[0]
    return state not in ("Z", "X") and str(plan.config_path) in cmdline.split("\0")


def running_pid(plan: WorkerPlan, pid: int | None) -> int | None:
    """The worker's process: `pid` if it still is this worker's (not a reused pid), else the pid file's."""
    from_file = None
    with contextlib.suppress(OSError, ValueError):
        from_file = int(plan.pid_path.read_text().strip())
    for candidate in (pid, from_file):
        if candidate and _is_worker_process(plan, candidate):
            return candidate
    return None


def stop_worker(plan: WorkerPlan, pid: int | None, *, timeout_seconds: float = 20.0) -> None:
    """SIGTERM (the worker leaves its group and hands its tasks over), SIGKILL after the timeout."""
    pid = running_pid(plan, pid)
    if pid is None:
        return
    for number, wait in ((signal.SIGTERM, timeout_seconds), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, number)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if running_pid(plan, pid) is None:
                return
            time.sleep(0.05)


def log_tail(plan: WorkerPlan) -> str:
    """The JVM's output and log4j's log, without Java stack frames that would push the reason out."""
    tail: list[str] = []
    for path, count in ((plan.output_path, 10), (plan.log_path, LOG_TAIL_LINES)):
        with contextlib.suppress(OSError):
            lines = [
                line for line in path.read_text(errors="replace").splitlines() if not STACK_FRAME.match(line)
            ]
            tail += lines[-count:]
    return "\n".join(tail)


def remove_files(root: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(root)
