"""One JSON error shape for every API response: {"error": {"code", "message", "details"}}."""

from typing import Any

from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler


def error_body(code: str, message: str, details: Any = None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def error_response_handler(exc: Exception, context: dict) -> Response | None:
    response = exception_handler(exc, context)
    if response is None:
        return None  # unexpected errors become a 500 and are logged by Django
    if isinstance(exc, exceptions.ValidationError):
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
    if response.status_code == status.HTTP_429_TOO_MANY_REQUESTS:
        response.data["error"]["details"] = {"retry_after_seconds": getattr(exc, "wait", None)}
    return response
