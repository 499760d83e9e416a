"""Each web server worker caches registry answers and verified keys; a change made by another process must
still be seen by the very next request. Two real web servers (the product's granian command line) share the
test's PostgreSQL database: one caches, the other (or the test process) writes."""

from __future__ import annotations

import base64
import http.client
import json
import os
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from console.webserver import web_server_command
from controlplane.accounts import services as accounts
from controlplane.accounts.models import ApiKey
from tests.fixtures.servers import free_port, stop_process, wait_until
from tests.integration.clusters.conftest import _database_url_of_this_test
from tests.integration.schemas.conftest import SYSTEM, Registry

pytestmark = pytest.mark.integration

REPO_ROOT = Path(__file__).resolve().parents[3]
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
SUBJECT = "payments.orders-value"
# In the registry's canonical form, so answers echo it unchanged.
ORDER = json.dumps(
    {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"}]}, separators=(",", ":")
)
ORDER_V2 = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "fields": [{"name": "id", "type": "string"}, {"name": "note", "type": "string", "default": ""}],
    },
    separators=(",", ":"),
)


class Server:
    """One web server (one worker process) serving the registry at `base`."""

    def __init__(self, base: str, credentials: str) -> None:
        self.base = base
        self.authorization = "Basic " + base64.b64encode(credentials.encode()).decode()

    def call(self, method: str, path: str, body: object | None = None) -> tuple[int, object]:
        request = urllib.request.Request(
            self.base + path,
            data=json.dumps(body).encode() if body is not None else None,
            method=method,
            headers={"Authorization": self.authorization, "Content-Type": CONTENT_TYPE},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as failure:
            return failure.code, json.loads(failure.read())

    def answers(self) -> bool:
        try:
            return self.call("GET", "/schemas/types")[0] == 200
        except OSError:  # not listening yet
            return False

    def lookup(self, schema: str, *, deleted: bool = False) -> tuple[int, object]:
        query = "?deleted=true" if deleted else ""
        return self.call("POST", f"/subjects/{SUBJECT}{query}", {"schema": schema})


def _start_web_server(port: int, data_dir: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": _database_url_of_this_test(),
        "SECRET_KEY": settings.SECRET_KEY,  # API key hashes are peppered with it
        "STREAMHUB_DATA_DIR": str(data_dir),
        "DEBUG": "0",
        "LOG_LEVEL": "WARNING",
    }
    return subprocess.Popen(
        web_server_command(
            host="127.0.0.1", port=port, workers=1, threads=2, access_log=False, log_level="warning"
        ),
        cwd=REPO_ROOT,
        env=env,
    )


@pytest.fixture(scope="module")
def server_ports(django_db_setup, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int]]:
    """Two servers for the whole module: each test's registry has its own cluster id, so nothing cached
    for one test can answer another."""
    ports = (free_port(), free_port())
    data_dir = tmp_path_factory.mktemp("web")
    processes = [_start_web_server(port, data_dir / str(port)) for port in ports]
    try:
        yield ports
    finally:
        for process in processes:
            stop_process(process)


@pytest.fixture
def servers(shared_registry: Registry, server_ports: tuple[int, int]) -> tuple[Server, Server]:
    writer, reader = (
        Server(f"http://127.0.0.1:{port}{shared_registry.url}", shared_registry.team_a_developer)
        for port in server_ports
    )
    for server in (writer, reader):
        wait_until(server.answers, 60, "the web server to answer")
    return writer, reader


def test_a_soft_and_a_permanent_delete_in_one_process_are_seen_at_once_by_another(servers) -> None:
    writer, reader = servers
    status, registered = writer.call("POST", f"/subjects/{SUBJECT}/versions", {"schema": ORDER})
    assert status == 200
    assert reader.lookup(ORDER) == (
        200,
        {"subject": SUBJECT, "version": 1, "id": registered["id"], "schema": ORDER},
    )
    assert reader.call("GET", f"/schemas/ids/{registered['id']}")[0] == 200  # both answers now cached

    assert writer.call("DELETE", f"/subjects/{SUBJECT}") == (200, [1])
    assert reader.lookup(ORDER)[1]["error_code"] == 40401
    assert reader.lookup(ORDER, deleted=True)[0] == 200  # a soft-deleted version only when asked for

    assert writer.call("DELETE", f"/subjects/{SUBJECT}?permanent=true") == (200, [1])
    assert reader.lookup(ORDER, deleted=True)[1]["error_code"] == 40401
    assert reader.call("GET", f"/schemas/ids/{registered['id']}")[1]["error_code"] == 40403


def test_a_new_version_registered_in_one_process_is_seen_at_once_by_another(servers) -> None:
    writer, reader = servers
    assert writer.call("POST", f"/subjects/{SUBJECT}/versions", {"schema": ORDER})[0] == 200
    assert reader.lookup(ORDER_V2)[1]["error_code"] == 40403

    status, registered = writer.call("POST", f"/subjects/{SUBJECT}/versions", {"schema": ORDER_V2})
    assert status == 200
    status, found = reader.lookup(ORDER_V2)
    assert (status, found["version"], found["id"]) == (200, 2, registered["id"])


def test_a_key_revoked_by_another_process_is_refused_on_the_next_request(servers, shared_registry) -> None:
    _writer, reader = servers
    assert reader.call("GET", "/subjects")[0] == 200  # the key is verified and remembered
    api_key = ApiKey.objects.get(key_id=shared_registry.team_a_developer.split(":")[0])
    accounts.revoke_api_key(actor=SYSTEM, api_key=api_key)
    assert reader.call("GET", "/subjects") == (401, {"error_code": 401, "message": "Unauthorized"})


def test_chunked_bodies_are_sized_before_the_registry_and_refused_over_its_limit(servers) -> None:
    """The real web server hands chunked bodies over without a Content-Length; the registry's size limit
    must still hold for them, and a refused one must not stop the server."""
    writer, _reader = servers
    url = urllib.parse.urlsplit(writer.base)

    def chunked_post(path: str, chunks: list[bytes]) -> tuple[int, object]:
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        try:
            connection.request(
                "POST",
                url.path + path,
                body=iter(chunks),
                headers={"Authorization": writer.authorization, "Content-Type": CONTENT_TYPE},
                encode_chunked=True,
            )
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    body = json.dumps({"schema": ORDER}).encode()
    status, registered = chunked_post(f"/subjects/{SUBJECT}/versions", [body[:10], body[10:]])
    assert status == 200, registered
    five_mebibytes = [b" " * (1 << 20)] * 5
    assert chunked_post(f"/subjects/{SUBJECT}/versions", [body[:-1], *five_mebibytes, b"}"]) == (
        413,
        {"error_code": 413, "message": f"Request body is larger than {4 * 1024 * 1024} bytes"},
    )
    assert writer.lookup(ORDER)[1]["id"] == registered["id"]
