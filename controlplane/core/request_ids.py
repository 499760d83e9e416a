"""A request id for every HTTP request: sent back in `X-Request-ID`, put on every log line written while the
request runs, stored with the audit events and operations the request caused, and quoted in error bodies,
so a user's "it failed" leads to the exact log lines and records."""

from __future__ import annotations

import logging
import re
import uuid
from contextvars import ContextVar

from django.http import HttpRequest, HttpResponse
from django.utils.deprecation import MiddlewareMixin

HEADER = "X-Request-ID"
# A caller's own id (a proxy's, a client's) is kept when it is short and plain; anything else is replaced.
_ACCEPTED = re.compile(r"[A-Za-z0-9._:-]{8,64}")

_current: ContextVar[str] = ContextVar("request_id", default="")


def current_request_id() -> str:
    """The id of the request being answered, or "" outside one (tasks, commands)."""
    return _current.get()


def new_request_id() -> str:
    return uuid.uuid4().hex


class RequestIdMiddleware(MiddlewareMixin):
    """Request and response hooks (not a wrapping call), so the schema registry's hot path, which runs only
    the hooks of the middleware it knows, gives its answers a request id too."""

    def process_request(self, request: HttpRequest) -> None:
        offered = request.META.get("HTTP_X_REQUEST_ID", "")
        request.request_id = offered if _ACCEPTED.fullmatch(offered) else new_request_id()
        request._request_id_token = _current.set(request.request_id)

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if hasattr(request, "request_id"):
            response[HEADER] = request.request_id
            _current.reset(request._request_id_token)
            del request._request_id_token, request.request_id
        return response


class RequestIdLogFilter(logging.Filter):
    """Adds `request_id` ("-" outside a request) to every record, for the log format."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _current.get() or "-"
        return True
