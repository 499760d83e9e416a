"""The README's run command: one foreground supervisor for Redis, web, workers and beat."""

import os
import signal
import subprocess
import sys
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from controlplane.kafka.cluster import describe_cluster
from controlplane.kafka.connection import Connection
from controlplane.kafka.errors import KafkaGatewayError
from tests.fixtures.servers import REPO_ROOT, free_port, wait_until

pytestmark = pytest.mark.integration


def _proc_stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name (field 2) may contain spaces; split after its closing parenthesis.
    return raw[raw.rindex(")") + 2 :].split()


def _processes_in_sessions(session_ids: set[int]) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _proc_stat(int(entry))
            if stat and stat[0] != "Z" and int(stat[3]) in session_ids:
                found.add(int(entry))
    return found


def _children_of(pid: int) -> set[int]:
    return {
        int(entry)
        for entry in os.listdir("/proc")
        if entry.isdigit() and (stat := _proc_stat(int(entry))) and int(stat[1]) == pid
    }


def _http_get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except (urllib.error.URLError, TimeoutError):
        return 0, ""  # not listening yet, or still too busy starting to answer


@pytest.fixture
def stack_env(tmp_path: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "STREAMHUB_DATA_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
        "WEB_BIND": f"127.0.0.1:{free_port()}",
        "WEB_WORKERS": "1",
        "CELERY_CONCURRENCY": "1",
        "DEFAULT_CLUSTER_PORT": str(free_port()),
    }
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO_ROOT, env=env, check=True)
    # Like scripts/run.sh: the default local cluster is defined before the stack starts.
    subprocess.run(
        [sys.executable, "manage.py", "ensure_default_cluster"], cwd=REPO_ROOT, env=env, check=True
    )
    return env


def _default_cluster_connection(env: dict[str, str]) -> Connection:
    """The default cluster listens with SASL: connect as its super user, as the README tells operators."""
    printed = subprocess.run(
        [sys.executable, "manage.py", "cluster_credentials", "local"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    credentials = dict(line.split("=", 1) for line in printed.splitlines())
    return Connection(
        bootstrap_servers=credentials["bootstrap.servers"],
        security_protocol=credentials["security.protocol"],
        sasl_mechanism=credentials["sasl.mechanism"],
        username=credentials["sasl.username"],
        password=credentials["sasl.password"],
    )


def _broker_answers(connection: Connection) -> bool:
    try:
        description = describe_cluster(connection, timeout_seconds=1)
    except KafkaGatewayError:
        return False
    return sorted(node.node_id for node in description.brokers) == [1, 2, 3]


def _local_broker_processes(data_dir: str) -> set[int]:
    """Broker processes of the stack's local clusters (they run in their own sessions, see the provisioner)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            stat = _proc_stat(int(entry))
            if stat and stat[0] != "Z" and f"{data_dir}/clusters/" in cmdline and "broker" in cmdline:
                found.add(int(entry))
    return found


# Lines of each of the local clusters' log files printed with the stack's output.
LOG_TAIL_LINES = 40


@dataclass
class Stack:
    process: subprocess.Popen
    output: Path  # what the stack printed


def _start_stack(env: dict[str, str]) -> Stack:
    """The stack, its output into a file of the data directory (one per start): a pipe nobody reads until the
    stop fills up (64 KiB), then the supervisor's printing blocks, and with it every child writing a line."""
    data_dir = Path(env["STREAMHUB_DATA_DIR"])
    path = data_dir / f"runstack-{len(list(data_dir.glob('runstack-*.out')))}.out"
    with open(path, "w") as output:  # the child holds its own descriptor
        process = subprocess.Popen(
            [sys.executable, "manage.py", "runstack"],
            cwd=REPO_ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    return Stack(process, path)


def _stop_stack(stack: Stack, env: dict[str, str]) -> str:
    """Stops the stack (Ctrl-C) and returns its output, printed with the tails of the local clusters' logs:
    pytest shows them when the test fails."""
    stack.process.send_signal(signal.SIGINT)
    try:
        stack.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        stack.process.kill()
        stack.process.wait()
    output = stack.output.read_text(errors="replace")
    print(f"--- the stack's output ({stack.output}) ---\n{output}")
    for log in sorted((Path(env["STREAMHUB_DATA_DIR"]) / "clusters").rglob("*.log")):
        tail = log.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:]
        print(f"--- {log} (last {len(tail)} lines) ---", *tail, sep="\n")
    assert stack.process.returncode == 0, output
    return output


def test_it_runs_the_stack_refuses_a_second_copy_and_stops_everything_on_ctrl_c(stack_env) -> None:
    stack = _start_stack(stack_env)
    base_url = f"http://{stack_env['WEB_BIND']}"
    try:
        wait_until(lambda: _http_get(f"{base_url}/api/v1/auth/session/")[0] == 200, 60, "the web server")
        status, page = _http_get(f"{base_url}/login")
        assert status == 200
        assert '<div id="root">' in page  # the built console's shell, served for a client-side route

        second = subprocess.run(
            [sys.executable, "manage.py", "runstack"],
            cwd=REPO_ROOT,
            env=stack_env,
            capture_output=True,
            text=True,
        )
        assert second.returncode != 0
        assert "already running" in second.stderr
        assert "Traceback" not in second.stderr

        sessions = _children_of(stack.process.pid)
        assert len(sessions) == 5  # redis, web, worker, streams (worker), beat
        assert _processes_in_sessions(sessions)  # gunicorn and celery have their own children too
    finally:
        output = _stop_stack(stack, stack_env)

    for name in ("redis", "web", "worker", "streams", "beat"):
        assert f"{name:<8}| stopped" in output
    assert _processes_in_sessions(sessions) == set()
    assert _local_broker_processes(stack_env["STREAMHUB_DATA_DIR"]) == set()


def test_it_provisions_the_default_cluster_stops_its_brokers_on_ctrl_c_and_brings_them_back(
    stack_env,
) -> None:
    port, data_dir = stack_env["DEFAULT_CLUSTER_PORT"], stack_env["STREAMHUB_DATA_DIR"]
    connection = _default_cluster_connection(stack_env)
    assert connection.bootstrap_servers == ""  # not provisioned yet; the credentials exist from the request
    connection = replace(connection, bootstrap_servers=f"127.0.0.1:{port}")
    stack = _start_stack(stack_env)
    try:
        # The worker runs the provisioning workflow the definition asked for.
        # Three brokers by default: replicated, with a controller quorum.
        wait_until(
            lambda: _broker_answers(connection), 90, "the default cluster's brokers to answer Metadata"
        )
        assert not _broker_answers(Connection(f"127.0.0.1:{port}"))  # no credentials, no Metadata
        assert len(_local_broker_processes(data_dir)) == 3
    finally:
        output = _stop_stack(stack, stack_env)
    assert "clusters| cluster local: stopped" in output
    assert _local_broker_processes(data_dir) == set()
    assert not _broker_answers(connection)

    stack = _start_stack(stack_env)
    try:
        wait_until(
            lambda: _broker_answers(connection), 90, "the default cluster to come back on the next run"
        )
    finally:
        output = _stop_stack(stack, stack_env)
    assert f"clusters| cluster local: running at 127.0.0.1:{port}" in output
    assert _local_broker_processes(data_dir) == set()
