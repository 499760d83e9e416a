"""The web server command line, shared by `runstack`, the container image and the registry benchmark.

Granian serves the WSGI application from native worker threads (`--blocking-threads`) with its HTTP/1.1
handling in Rust. Against gunicorn's gthread workers with the same processes and threads it serves the
registry's cached reads at a third of the CPU per request, and at 2,000 requests/s its p99 stays in
milliseconds where gthread's reached seconds (bench/schema_registry.py). Django still runs in ordinary
threads, so blocking calls (librdkafka admin requests, database queries) need no special care.
"""

from __future__ import annotations

import sys

DEFAULT_THREADS = 4


def web_server_command(
    *,
    host: str,
    port: int,
    workers: int,
    threads: int = DEFAULT_THREADS,
    application: str = "console.wsgi:application",
    access_log: bool = True,
    log_level: str = "info",
) -> list[str]:
    """Granian's command line for `application`, bound to host:port."""
    command = [
        sys.executable,
        "-m",
        "granian",
        "--interface",
        "wsgi",
        application,
        "--host",
        host,
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--blocking-threads",
        str(threads),
        "--log-level",
        log_level,
        # Gives in-flight requests time to finish on SIGTERM before a worker is killed.
        "--workers-kill-timeout",
        "10",
        "--respawn-failed-workers",
    ]
    if access_log:
        command.append("--access-log")
    return command
