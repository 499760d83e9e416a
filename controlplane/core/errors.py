"""Domain errors: a service function's refusal, free of any transport.

Services, models, tasks and plans raise and read these (`code`, `message`, `details`); the REST API renders
them in its error shape with the HTTP status of their class, mapped in one place
(`controlplane/core/api/errors.py`). A subclass says what kind of refusal it is, never how it is answered.
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """The request is not valid for the service (HTTP: 400)."""

    default_code = "invalid"

    def __init__(
        self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.details = details or {}


class Conflict(ServiceError):
    """The request conflicts with what the service holds (HTTP: 409)."""

    default_code = "conflict"


class Missing(ServiceError):
    """Something the request names is not there (or not for the caller) (HTTP: 404)."""

    default_code = "not_found"


class Forbidden(ServiceError):
    """The caller may not do this (HTTP: 403)."""

    default_code = "permission_denied"


class PolicyViolated(ServiceError):
    """A policy or guardrail refuses the request (HTTP: 400)."""

    default_code = "policy_violation"


class RateLimited(ServiceError):
    """Too many changes in a short time; the same request later may pass (HTTP: 429)."""

    default_code = "rate_limited"


class Unavailable(ServiceError):
    """The service cannot answer for certain now; asking again later may succeed (HTTP: 503)."""

    default_code = "service_unavailable"
