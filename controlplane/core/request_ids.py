"""A request id for every HTTP request: sent back in `X-Request-ID`, put on every log line written while the
request runs, stored with the audit events and operations the request caused, and quoted in error bodies,
so a user's "it failed" leads to the exact log lines and records."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable
from contextvars import ContextVar

from django.http import HttpRequest, HttpResponse

HEADER = "X-Request-ID"
# A caller's own id (a proxy's, a client's) is kept when it is short and plain; anything else is replaced.
_ACCEPTED = re.compile(r"[A-Za-z0-9._:-]{8,64}")

_current: ContextVar[str] = ContextVar("request_id", default="")


def current_request_id() -> str:
    """The id of the request being answered, or "" outside one (tasks, commands)."""
    return _current.get()


def new_request_id() -> str:
    return uuid.uuid4().hex


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        offered = request.META.get("HTTP_X_REQUEST_ID", "")
        request_id = offered if _ACCEPTED.fullmatch(offered) else new_request_id()
        request.request_id = request_id
        token = _current.set(request_id)
        try:
            response = self.get_response(request)
        finally:
            _current.reset(token)
        response[HEADER] = request_id
        return response


class RequestIdLogFilter(logging.Filter):
    """Adds `request_id` ("-" outside a request) to every record, for the log format."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _current.get() or "-"
        return True
