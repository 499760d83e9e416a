"""Chunked request bodies become sized ones before Django, or a 413 in the shape of the API they were sent to."""

from __future__ import annotations

import io
import json
from typing import Any

from console.request_bodies import ChunkedBodyLimit

LIMIT = 64


class SeenByApp:
    """The WSGI application behind the limit: records the body and Content-Length it was handed."""

    def __init__(self) -> None:
        self.calls: list[tuple[bytes, str | None]] = []

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        self.calls.append((environ["wsgi.input"].read(), environ.get("CONTENT_LENGTH")))
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]


def call(app: ChunkedBodyLimit, path: str, body: bytes, *, chunked: bool) -> tuple[str, dict, bytes]:
    environ: dict[str, Any] = {"PATH_INFO": path, "REQUEST_METHOD": "POST", "wsgi.input": io.BytesIO(body)}
    if chunked:
        environ["HTTP_TRANSFER_ENCODING"] = "chunked"
        environ["wsgi.input_terminated"] = True
    else:
        environ["CONTENT_LENGTH"] = str(len(body))
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        answer["status"], answer["headers"] = status, dict(headers)

    payload = b"".join(app(environ, start_response))
    return answer["status"], answer["headers"], payload


def test_a_chunked_body_within_the_limit_reaches_the_app_with_its_length() -> None:
    inner = SeenByApp()
    status, _headers, _payload = call(
        ChunkedBodyLimit(inner, LIMIT), "/api/v1/topics/", b"x" * LIMIT, chunked=True
    )
    assert status == "200 OK"
    assert inner.calls == [(b"x" * LIMIT, str(LIMIT))]


def test_a_sized_body_is_handed_on_untouched_whatever_its_size() -> None:
    inner = SeenByApp()
    call(ChunkedBodyLimit(inner, LIMIT), "/api/v1/topics/", b"y" * (LIMIT * 2), chunked=False)
    assert inner.calls == [(b"y" * (LIMIT * 2), str(LIMIT * 2))]


def test_an_oversized_chunked_body_gets_the_registrys_413_on_registry_paths() -> None:
    inner = SeenByApp()
    status, headers, payload = call(
        ChunkedBodyLimit(inner, LIMIT),
        "/clusters/3/schema-registry/subjects/a-value",
        b"z" * 100,
        chunked=True,
    )
    assert status.startswith("413")
    assert headers["Content-Type"] == "application/vnd.schemaregistry.v1+json"
    assert json.loads(payload) == {"error_code": 413, "message": f"Request body is larger than {LIMIT} bytes"}
    assert inner.calls == []


def test_an_oversized_chunked_body_gets_the_apis_error_shape_elsewhere() -> None:
    inner = SeenByApp()
    status, headers, payload = call(
        ChunkedBodyLimit(inner, LIMIT), "/api/v1/topics/", b"z" * 100, chunked=True
    )
    assert status.startswith("413")
    assert headers["Content-Type"] == "application/json"
    assert json.loads(payload)["error"]["code"] == "request_too_large"
    assert inner.calls == []
