"""The Connect REST client against a stand-in worker on 127.0.0.1: a rebalance's 409 is asked again, other
refusals are not, and a stopped worker is skipped for the next one."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from controlplane.connect import rest


class Worker(BaseHTTPRequestHandler):
    answers: list[tuple[int, object]] = []
    seen: list[str] = []

    def do_GET(self) -> None:
        self.seen.append(self.path)
        status, body = self.answers.pop(0)
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def worker_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Worker)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Worker.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_it_asks_again_while_the_group_rebalances(worker_url: str) -> None:
    Worker.answers = [(409, {"message": "rebalance in progress"}), (409, {"message": "again"}), (200, ["a"])]
    assert rest.ConnectRest([worker_url]).connectors() == ["a"]
    assert len(Worker.seen) == 3


def test_it_passes_other_refusals_on_with_connects_message(worker_url: str) -> None:
    Worker.answers = [(404, {"error_code": 404, "message": "Connector x not found"})]
    with pytest.raises(rest.ConnectRefused) as refused:
        rest.ConnectRest([worker_url]).status("x")
    assert (refused.value.status, refused.value.message) == (404, "Connector x not found")
    assert Worker.seen == ["/connectors/x/status"]


def test_a_stopped_worker_is_skipped_for_the_next(worker_url: str) -> None:
    Worker.answers = [(200, [])]
    stopped = "http://127.0.0.1:9"  # the discard port: nothing listens there
    assert rest.ConnectRest([stopped, worker_url]).connectors() == []
    with pytest.raises(rest.ConnectUnreachable):
        rest.ConnectRest([stopped]).connectors()
