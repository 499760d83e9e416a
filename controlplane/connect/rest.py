"""Kafka Connect's REST API, as the control plane calls it: the only module that does.

Workers listen on 127.0.0.1; teams never reach them (the console and the API go through services.py, which
checks tenancy first). A call tries the workers in turn: any worker forwards writes to the group's leader,
and a stopped worker is skipped.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

TIMEOUT_SECONDS = 30.0
REBALANCE_WAIT_SECONDS = 15.0


class ConnectUnreachable(Exception):
    """No worker of the Connect cluster answered."""


class ConnectRefused(Exception):
    """A worker answered with an error: Connect's own status code and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _quote(name: str) -> str:
    return urllib.parse.quote(name, safe="")


class ConnectRest:
    def __init__(self, urls: Sequence[str], *, timeout_seconds: float = TIMEOUT_SECONDS) -> None:
        self.urls = list(urls)
        self.timeout_seconds = timeout_seconds

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """Connect answers 409 while its group rebalances (a worker joined, left or died): asked again
        until REBALANCE_WAIT_SECONDS have passed, the request then usually goes through."""
        deadline = time.monotonic() + REBALANCE_WAIT_SECONDS
        while True:
            try:
                return self._call_any_worker(method, path, body)
            except ConnectRefused as refusal:
                if refusal.status != 409 or time.monotonic() >= deadline:
                    raise
            time.sleep(0.5)

    def _call_any_worker(self, method: str, path: str, body: Any) -> Any:
        last_error = "no workers"
        for url in self.urls:
            request = urllib.request.Request(
                url + path,
                method=method,
                data=None if body is None else json.dumps(body).encode(),
                headers={"Content-Type": "application/json", "Accept": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_seconds) as answer:
                    text = answer.read()
                return json.loads(text) if text else None
            except urllib.error.HTTPError as error:
                raise ConnectRefused(error.code, _message(error.read())) from error
            except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
                last_error = f"{url}: {getattr(error, 'reason', error)}"
        raise ConnectUnreachable(f"No Connect worker answered ({last_error}).")

    def root(self) -> dict[str, Any]:
        return self.call("GET", "/")

    def plugins(self) -> list[dict[str, Any]]:
        return self.call("GET", "/connector-plugins?connectorsOnly=true")

    def validate(self, connector_class: str, config: dict[str, str]) -> dict[str, Any]:
        return self.call("PUT", f"/connector-plugins/{_quote(connector_class)}/config/validate", {**config})

    def put_config(self, name: str, config: dict[str, str]) -> dict[str, Any]:
        return self.call("PUT", f"/connectors/{_quote(name)}/config", config)

    def status(self, name: str) -> dict[str, Any]:
        return self.call("GET", f"/connectors/{_quote(name)}/status")

    def pause(self, name: str) -> None:
        self.call("PUT", f"/connectors/{_quote(name)}/pause")

    def resume(self, name: str) -> None:
        self.call("PUT", f"/connectors/{_quote(name)}/resume")

    def restart(self, name: str, *, include_tasks: bool, only_failed: bool) -> Any:
        query = f"includeTasks={str(include_tasks).lower()}&onlyFailed={str(only_failed).lower()}"
        return self.call("POST", f"/connectors/{_quote(name)}/restart?{query}")

    def restart_task(self, name: str, task: int) -> None:
        self.call("POST", f"/connectors/{_quote(name)}/tasks/{task}/restart")

    def delete(self, name: str) -> None:
        self.call("DELETE", f"/connectors/{_quote(name)}")

    def connectors(self) -> list[str]:
        return self.call("GET", "/connectors")

    def offsets(self, name: str) -> dict[str, Any]:
        return self.call("GET", f"/connectors/{_quote(name)}/offsets")


def answers(url: str, timeout_seconds: float = 2.0) -> bool:
    """Whether the worker at `url` serves connectors: its REST root answers early in its start, the
    connector list only once it has read its group's config topic."""
    try:
        ConnectRest([url], timeout_seconds=timeout_seconds).connectors()
        return True
    except (ConnectUnreachable, ConnectRefused):
        return False


def _message(body: bytes) -> str:
    try:
        parsed = json.loads(body)
    except ValueError:
        return body.decode(errors="replace")[:500]
    return str(parsed.get("message", parsed)) if isinstance(parsed, dict) else str(parsed)
