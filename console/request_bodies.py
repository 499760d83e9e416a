"""Request bodies sent without a Content-Length (chunked) are read here, up to a limit, before Django sees them.

Every size check downstream (the registry's 4 MiB, Django's DATA_UPLOAD_MAX_MEMORY_SIZE) reads Content-Length.
The web server marks chunked bodies `wsgi.input_terminated`, so Django would read one of any size into memory.
Reading at most `limit + 1` bytes here and handing the rest of the stack an ordinary sized body keeps every
check honest; a larger body is answered 413 in the error shape of the API it was sent to.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable
from typing import Any

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class ChunkedBodyLimit:
    """WSGI wrapper: chunked bodies up to `limit_bytes` become sized ones; larger ones get 413."""

    def __init__(self, app: WsgiApp, limit_bytes: int) -> None:
        self.app = app
        self.limit_bytes = limit_bytes

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if (
            environ.get("CONTENT_LENGTH")
            or "chunked" not in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        ):
            return self.app(environ, start_response)
        body = environ["wsgi.input"].read(self.limit_bytes + 1)
        if len(body) > self.limit_bytes:
            return self._too_large(environ, start_response)
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        environ.pop("wsgi.input_terminated", None)
        return self.app(environ, start_response)

    def _too_large(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        message = f"Request body is larger than {self.limit_bytes} bytes"
        if "/schema-registry/" in environ.get("PATH_INFO", ""):
            content_type = "application/vnd.schemaregistry.v1+json"
            payload: dict[str, Any] = {"error_code": 413, "message": message}
        else:
            content_type = "application/json"
            payload = {"error": {"code": "request_too_large", "message": message, "details": {}}}
        body = json.dumps(payload).encode()
        start_response(
            "413 Request Entity Too Large",
            [("Content-Type", content_type), ("Content-Length", str(len(body))), ("Connection", "close")],
        )
        return [body]
