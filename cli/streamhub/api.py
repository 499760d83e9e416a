"""The REST API, as the CLI uses it: one session with the API key, and the API's errors as `ApiError`
(its code, message, hint and request id), so every command reports them the same way."""

from __future__ import annotations

from typing import Any

import requests

from . import __version__
from .settings import Login

TIMEOUT_SECONDS = 300.0  # an apply of a thousand changes answers in one request


class ApiError(Exception):
    def __init__(
        self, status: int, code: str, message: str, details: dict[str, Any], request_id: str
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.details, self.request_id = details, request_id

    @property
    def hint(self) -> str | None:
        return self.details.get("hint") if isinstance(self.details, dict) else None


class NotLoggedIn(Exception):
    pass


class Api:
    def __init__(self, login: Login) -> None:
        self.base = login.url
        self.session = requests.Session()
        self.session.headers.update(
            {"Authorization": f"Bearer {login.api_key}", "User-Agent": f"streamhub-cli/{__version__}"}
        )

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        url = f"{self.base}/api/v1/{path.lstrip('/')}"
        try:
            response = self.session.request(method, url, timeout=TIMEOUT_SECONDS, **kwargs)
        except requests.RequestException as error:
            raise ApiError(0, "unreachable", f"Cannot reach {self.base}: {error}", {}, "") from error
        if response.status_code == 204:
            return None
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code >= 400:
            error = (body or {}).get("error") if isinstance(body, dict) else None
            if not isinstance(error, dict):
                error = {
                    "code": f"http_{response.status_code}",
                    "message": response.text[:500] or response.reason,
                }
            raise ApiError(
                response.status_code,
                str(error.get("code", "error")),
                str(error.get("message", "")),
                error.get("details") or {},
                str(error.get("request_id") or response.headers.get("X-Request-ID", "")),
            )
        return body

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params={k: v for k, v in params.items() if v is not None})

    def post(self, path: str, body: Any) -> Any:
        return self.request("POST", path, json=body)

    def list_all(self, path: str, **params: Any) -> list[dict[str, Any]]:
        """Every row of a paginated list (the API pages with limit/offset)."""
        rows: list[dict[str, Any]] = []
        offset = 0
        while True:
            page = self.get(path, limit=500, offset=offset, **params)
            if isinstance(page, list):
                return page
            rows += page["results"]
            if not page.get("next"):
                return rows
            offset += len(page["results"])
