"""Runs the whole product in the foreground: Redis (embedded default), web, Celery worker and beat,
and the brokers of the local clusters (started by the control plane, stopped again on exit).

Logs are prefixed by process name; Ctrl-C (or SIGTERM) stops every process this command started.
Only one instance may run per data directory.
"""

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlparse

import redis
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from console.webserver import DEFAULT_THREADS, web_server_command
from controlplane.clusters import services as clusters

STOP_TIMEOUT_SECONDS = 15
COLORS = ["\033[36m", "\033[33m", "\033[35m", "\033[32m", "\033[34m", "\033[31m"]
RESET = "\033[0m"


@dataclass
class ProcessSpec:
    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


class Supervisor:
    """Starts child processes in their own process groups, prefixes their output, stops them together."""

    def __init__(self, write: callable, use_color: bool) -> None:
        self._write = write
        self._use_color = use_color
        self._children: list[tuple[ProcessSpec, subprocess.Popen]] = []
        self._print_lock = threading.Lock()
        self._width = 8

    def log(self, name: str, line: str, color: str = "") -> None:
        prefix = f"{name:<{self._width}}|"
        if self._use_color and color:
            prefix = f"{color}{prefix}{RESET}"
        with self._print_lock:
            self._write(f"{prefix} {line}")

    def start(self, spec: ProcessSpec) -> subprocess.Popen:
        color = COLORS[len(self._children) % len(COLORS)]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **spec.env}
        process = subprocess.Popen(
            spec.argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            text=True,
            bufsize=1,
            start_new_session=True,  # own process group: a terminal's Ctrl-C reaches only us, we stop them
        )
        self._children.append((spec, process))
        self.log(spec.name, f"started (pid {process.pid}): {' '.join(spec.argv)}", color)
        threading.Thread(target=self._pump, args=(spec.name, process, color), daemon=True).start()
        return process

    def _pump(self, name: str, process: subprocess.Popen, color: str) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self.log(name, line.rstrip("\n"), color)

    def exited(self) -> tuple[ProcessSpec, int] | None:
        for spec, process in self._children:
            code = process.poll()
            if code is not None:
                return spec, code
        return None

    def stop_all(self) -> None:
        for spec, process in reversed(self._children):
            if process.poll() is None:
                self.log(spec.name, "stopping")
                _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        for spec, process in reversed(self._children):
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.log(spec.name, "did not stop in time; killing")
                _signal_group(process, signal.SIGKILL)
                process.wait()
            # Children of the child (e.g. the web server's workers) share its group; make sure none survive.
            _signal_group(process, signal.SIGKILL)
            self.log(spec.name, f"stopped (exit code {process.returncode})")


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)


def _port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _acquire_instance_lock(lock_path: Path) -> int:
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode().strip() or "unknown"
        os.close(fd)
        raise CommandError(
            f"StreamHub is already running from this data directory (pid {holder}). "
            "Stop it first (Ctrl-C in its terminal), or set STREAMHUB_DATA_DIR for a second instance."
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd


class Command(BaseCommand):
    help = "Run web, Celery worker, Celery beat (and embedded Redis) in the foreground."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--bind", default=os.environ.get("WEB_BIND", "127.0.0.1:8000"))
        parser.add_argument("--web-workers", type=int, default=int(os.environ.get("WEB_WORKERS", "2")))
        parser.add_argument(
            "--web-threads", type=int, default=int(os.environ.get("WEB_THREADS", str(DEFAULT_THREADS)))
        )
        parser.add_argument(
            "--worker-concurrency", type=int, default=int(os.environ.get("CELERY_CONCURRENCY", "2"))
        )

        parser.add_argument(
            "--streaming-jobs",
            type=int,
            default=int(os.environ.get("STREAMING_JOBS_MAX", "8")),
            help="streaming jobs that can run at once (threads of the spark-streams worker)",
        )

    def handle(self, *args: object, **options: object) -> None:
        lock_fd = _acquire_instance_lock(settings.DATA_DIR / "run" / "stack.lock")
        host, _, port = str(options["bind"]).rpartition(":")
        if not _port_is_free(host, int(port)):
            raise CommandError(f"Port {options['bind']} is already in use; set WEB_BIND to another address.")

        supervisor = Supervisor(lambda line: print(line, flush=True), use_color=sys.stdout.isatty())
        stop_requested = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop_requested.set())

        try:
            redis_spec = self._embedded_redis_spec()
            if redis_spec:
                supervisor.start(redis_spec)
            self._wait_for_redis()
            # Local clusters come back before the worker and beat start, so nothing restarts them twice.
            for line in clusters.start_local_clusters():
                supervisor.log("clusters", line)
            clusters.resend_stuck_operations(older_than=timedelta(0))
            python = sys.executable
            supervisor.start(
                ProcessSpec(
                    "web",
                    web_server_command(
                        host=host.strip("[]"),
                        port=int(port),
                        workers=int(options["web_workers"]),
                        threads=int(options["web_threads"]),
                    ),
                )
            )
            celery = [python, "-m", "celery", "-A", "console"]
            supervisor.start(
                ProcessSpec(
                    "worker",
                    [
                        *celery,
                        "worker",
                        "-l",
                        "INFO",
                        "--concurrency",
                        str(options["worker_concurrency"]),
                        "-n",
                        "worker@%h",
                        "-Q",
                        "celery,spark",  # spark: job runs (controlplane.jobs), which watch spark-submit
                    ],
                )
            )
            supervisor.start(
                ProcessSpec(
                    "streams",
                    [
                        *celery,
                        "worker",
                        "-l",
                        "INFO",
                        # Each running streaming job's supervisor holds a thread while it watches its driver.
                        "--pool",
                        "threads",
                        "--concurrency",
                        str(options["streaming_jobs"]),
                        "-n",
                        "streams@%h",
                        "-Q",
                        "spark-streams",
                    ],
                )
            )
            supervisor.start(
                ProcessSpec(
                    "beat", [*celery, "beat", "-l", "INFO", "-s", settings.CELERY_BEAT_SCHEDULE_FILENAME]
                )
            )
            supervisor.log("stack", f"console at http://{options['bind']}/  (Ctrl-C stops everything)")
            while not stop_requested.wait(0.5):
                crashed = supervisor.exited()
                if crashed:
                    spec, code = crashed
                    supervisor.log("stack", f"{spec.name} exited with code {code}; stopping the stack")
                    raise CommandError(f"{spec.name} exited unexpectedly (code {code}).")
        finally:
            supervisor.stop_all()
            # After the worker and beat are gone, so nothing restarts them; data and definitions stay.
            for line in clusters.stop_local_clusters():
                supervisor.log("clusters", line)
            os.close(lock_fd)

    def _embedded_redis_spec(self) -> ProcessSpec | None:
        url = urlparse(settings.REDIS_URL)
        embedded = os.environ.get("EMBEDDED_REDIS", "auto")
        local = url.hostname in {"127.0.0.1", "localhost"}
        if embedded == "false" or (embedded == "auto" and not local):
            return None
        if not _port_is_free("127.0.0.1", url.port or 6379):
            self.stdout.write(f"Redis port {url.port or 6379} is in use; using the Redis already there.")
            return None
        server = shutil.which("redis-server")
        if not server:
            raise CommandError("redis-server is not installed; run scripts/bootstrap.sh or set REDIS_URL.")
        redis_dir = settings.DATA_DIR / "redis"
        redis_dir.mkdir(parents=True, exist_ok=True)
        return ProcessSpec(
            "redis",
            [
                server,
                "--bind",
                "127.0.0.1",
                "--port",
                str(url.port or 6379),
                "--dir",
                str(redis_dir),
                "--save",
                "60 1",
                "--protected-mode",
                "yes",
                "--daemonize",
                "no",
            ],
        )

    def _wait_for_redis(self, timeout: float = 15.0) -> None:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1, socket_connect_timeout=1)
        deadline = time.monotonic() + timeout
        while True:
            try:
                client.ping()
                return
            except redis.RedisError as error:
                if time.monotonic() > deadline:
                    raise CommandError(f"Redis at {settings.REDIS_URL} is not reachable: {error}") from None
                time.sleep(0.2)
