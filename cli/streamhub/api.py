"""The REST API, as the CLI uses it: one session with the API key (or the single sign-on access token, renewed
once with the refresh token when it has expired), and the API's errors as `ApiError` (its code, message, hint
and request id), so every command reports them the same way."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import requests

from . import __version__, oidc
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


def _message(response: requests.Response) -> str:
    try:
        return str(response.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return response.text[:200] or response.reason


class SessionExpired(Exception):
    """The single sign-on session cannot be renewed: the person has to run `streamhub login` again."""


class Api:
    def __init__(self, login: Login, *, on_renewed: Callable[[Login], Any] | None = None) -> None:
        """`on_renewed` keeps the renewed tokens (the credentials file), so the next command starts with them."""
        self.base = login.url
        self.login = login
        self.on_renewed = on_renewed
        self.renewed = False
        self.session = requests.Session()
        self.session.headers.update({"User-Agent": f"streamhub-cli/{__version__}"})

    def _renew(self, reason: str) -> None:
        """Once per command: a second failure means the refresh token no longer works either."""
        session = self.login.oidc
        assert session is not None
        if self.renewed or not session.tokens.refresh_token:
            raise SessionExpired(f"The single sign-on session {reason}.")
        self.renewed = True
        try:
            tokens = oidc.refresh(
                session.token_endpoint, session.client_id, session.audience, session.tokens.refresh_token
            )
        except oidc.OidcLoginError as error:
            raise SessionExpired(
                f"The single sign-on session {reason} and could not be renewed: {error}"
            ) from error
        self.login = self.login.with_tokens(tokens)
        if self.on_renewed is not None:
            self.on_renewed(self.login)

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        url = f"{self.base}/api/v1/{path.lstrip('/')}"
        if self.login.oidc is not None and self.login.oidc.tokens.expired(time.time()):
            self._renew("has expired")
        response = self._send(method, url, **kwargs)
        if response.status_code == 401 and self.login.oidc is not None:
            if not self.renewed:  # expired early, or revoked at the provider: renew once
                self._renew("was refused by the server")
                response = self._send(method, url, **kwargs)
            if response.status_code == 401:
                raise SessionExpired(f"The server refuses the single sign-on token: {_message(response)}")
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

    def _send(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.login.bearer}"}
        try:
            return self.session.request(method, url, timeout=TIMEOUT_SECONDS, headers=headers, **kwargs)
        except requests.RequestException as error:
            raise ApiError(0, "unreachable", f"Cannot reach {self.base}: {error}", {}, "") from error

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
