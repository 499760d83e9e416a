"""One JSON error shape for every API response: {"error": {"code", "message", "details"}}."""

import logging
from collections.abc import Iterator
from typing import Any

import redis
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import OperationalError as DatabaseUnavailable
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from kombu.exceptions import OperationalError as TaskQueueUnreachable
from rest_framework import exceptions, status
from rest_framework.response import Response

from controlplane.core.errors import Conflict, Forbidden, Missing, RateLimited, ServiceError, Unavailable
from controlplane.core.request_ids import current_request_id

logger = logging.getLogger(__name__)


# The HTTP status of each kind of domain refusal; a subclass answers with its nearest listed ancestor's.
HTTP_STATUS: dict[type[ServiceError], int] = {
    Conflict: status.HTTP_409_CONFLICT,
    Missing: status.HTTP_404_NOT_FOUND,
    Forbidden: status.HTTP_403_FORBIDDEN,
    RateLimited: status.HTTP_429_TOO_MANY_REQUESTS,
    Unavailable: status.HTTP_503_SERVICE_UNAVAILABLE,
    ServiceError: status.HTTP_400_BAD_REQUEST,
}


def http_status(error: ServiceError) -> int:
    return next(HTTP_STATUS[kind] for kind in type(error).__mro__ if kind in HTTP_STATUS)


def error_body(code: str, message: str, details: Any = None) -> dict:
    """The error shape; `request_id` is the one in the response's X-Request-ID header and in the logs."""
    return {
        "error": {
            "code": code,
            "message": message,
            "details": details or {},
            "request_id": current_request_id(),
        }
    }


INTERNAL_ERROR_MESSAGE = (
    "The server failed to answer this request. It has been logged; quote the request id when reporting it."
)


MISSING_OBJECT_MESSAGE = (
    "An object the request names does not exist, or is not visible to you; `details` names the field."
)


def names_a_missing_object(codes: object) -> bool:
    """Whether a serializer's errors are all references to objects that do not exist (DRF's related fields
    say `does_not_exist`, for objects of other teams too). Such a request is answered 404, as if the object
    were in the path (`POST /topics/ {"cluster": 7}` is `POST /clusters/7/topics/` written flat): the request
    is well formed, what it names is not there. A request that is also malformed otherwise stays a 400."""
    leaves = list(_leaf_codes(codes))
    return bool(leaves) and all(code == "does_not_exist" for code in leaves)


def _leaf_codes(codes: object) -> Iterator[object]:
    if isinstance(codes, dict):
        for value in codes.values():
            yield from _leaf_codes(value)
    elif isinstance(codes, list | tuple):
        for value in codes:
            yield from _leaf_codes(value)
    else:
        yield codes


def error_response_handler(exc: Exception, context: dict) -> Response | None:
    # Imported here: rest_framework.views loads the authentication classes, which import this module.
    from rest_framework.views import exception_handler, set_rollback

    if isinstance(exc, redis.RedisError | TaskQueueUnreachable):
        return _backing_store_unavailable(exc)
    if isinstance(exc, DatabaseUnavailable):
        return _database_unavailable(exc)
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        body = error_body("request_too_large", f"The request body is larger than {limit} bytes.")
        return Response(body, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    if isinstance(exc, ServiceError):
        set_rollback()  # as DRF does for the refusals it renders: an atomic request's writes are undone
        return Response(error_body(exc.code, exc.message, exc.details), status=http_status(exc))
    response = exception_handler(exc, context)
    if response is None:
        return _unexpected(exc)
    if isinstance(exc, exceptions.ValidationError) and names_a_missing_object(exc.get_codes()):
        body = error_body("not_found", MISSING_OBJECT_MESSAGE, exc.detail)
        response.status_code = status.HTTP_404_NOT_FOUND
    elif isinstance(exc, exceptions.ValidationError):
        body = error_body("invalid", "The request is not valid.", exc.detail)
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
    if isinstance(exc, exceptions.Throttled):
        response.data["error"]["details"] = {"retry_after_seconds": exc.wait}
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


def _database_unavailable(exc: Exception) -> Response:
    """The database refused or dropped the connection, or stayed locked past its timeout: retryable."""
    logger.warning("database unavailable while answering a request: %s", exc)
    body = error_body("service_unavailable", "The database is busy or unreachable; retry shortly.")
    return Response(body, status=status.HTTP_503_SERVICE_UNAVAILABLE, headers={"Retry-After": "5"})


def _unexpected(exc: Exception) -> Response:
    """A bug: logged with its traceback and request id, answered in the error shape (never an HTML page)."""
    logger.error("unexpected error answering a request", exc_info=exc)
    return Response(
        error_body("internal_error", INTERNAL_ERROR_MESSAGE), status=status.HTTP_500_INTERNAL_SERVER_ERROR
    )


def not_found_view(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's handler404, for paths no view matches (and Http404 outside DRF's views): an API answers in
    its error shape, never with an HTML page; the console's paths keep Django's page."""
    if not request.path.startswith("/api/"):
        return defaults.page_not_found(request, exception)
    # A resolver's 404 carries the URL patterns it tried, which are not the caller's business.
    said = exception.args[0] if exception.args and isinstance(exception.args[0], str) else ""
    return JsonResponse(error_body("not_found", said or "No such API path."), status=404)


def server_error_view(request: HttpRequest) -> JsonResponse:
    """Django's handler500, for failures outside DRF's views (middleware, plain views): the error shape
    of the API asked (the schema registry has Confluent's), with the request id. Django has already
    logged the exception with it."""
    if "/schema-registry" in request.path:
        body = {"error_code": 50001, "message": f"{INTERNAL_ERROR_MESSAGE} ({current_request_id()})"}
        return JsonResponse(body, status=500, content_type="application/vnd.schemaregistry.v1+json")
    return JsonResponse(error_body("internal_error", INTERNAL_ERROR_MESSAGE), status=500)
