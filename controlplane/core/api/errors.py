"""One JSON error shape for every API response: {"error": {"code", "message", "details"}}."""

import logging
from typing import Any

import redis
from django.http import Http404
from kombu.exceptions import OperationalError as TaskQueueUnreachable
from rest_framework import exceptions, status
from rest_framework.response import Response

logger = logging.getLogger(__name__)


class ServiceError(exceptions.APIException):
    """A service function's refusal, rendered in the error shape with its own code and details."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid"
    default_detail = "The request was refused."

    def __init__(self, message: str, *, code: str | None = None, details: dict | None = None) -> None:
        super().__init__(detail=message, code=code or self.default_code)
        self.details = details or {}


class Conflict(ServiceError):
    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"


class Forbidden(ServiceError):
    status_code = status.HTTP_403_FORBIDDEN
    default_code = "permission_denied"


class PolicyViolated(ServiceError):
    default_code = "policy_violation"


def error_body(code: str, message: str, details: Any = None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def error_response_handler(exc: Exception, context: dict) -> Response | None:
    # Imported here: rest_framework.views loads the authentication classes, which raise these errors.
    from rest_framework.views import exception_handler

    if isinstance(exc, redis.RedisError | TaskQueueUnreachable):
        return _backing_store_unavailable(exc)
    response = exception_handler(exc, context)
    if response is None:
        return None  # unexpected errors become a 500 and are logged by Django
    if isinstance(exc, exceptions.ValidationError):
        body = error_body("invalid", "The request is not valid.", exc.detail)
    elif isinstance(exc, ServiceError):
        body = error_body(str(exc.get_codes()), str(exc.detail), exc.details)
    elif isinstance(exc, Http404):
        body = error_body("not_found", "Not found.")
    elif isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else exc.default_code
        message = exc.detail if isinstance(exc.detail, str) else exc.default_detail
        body = error_body(code, str(message))
    else:
        body = error_body("error", "The request failed.")
    response.data = body
    if response.status_code == status.HTTP_429_TOO_MANY_REQUESTS:
        response.data["error"]["details"] = {"retry_after_seconds": getattr(exc, "wait", None)}
    return response


def _backing_store_unavailable(exc: Exception) -> Response:
    """Redis (lag history, the task queue) being down is an outage of ours, not a bug in the request: a 503
    the console can show and a client can retry, instead of a 500 with a traceback."""
    logger.warning("Redis unreachable while answering a request: %s: %s", type(exc).__name__, exc)
    body = error_body(
        "service_unavailable",
        "A backing service (Redis: lag history and the task queue) is unreachable; retry shortly.",
    )
    return Response(body, status=status.HTTP_503_SERVICE_UNAVAILABLE, headers={"Retry-After": "5"})
