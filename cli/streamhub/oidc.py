"""Signing a person in with their identity provider from a terminal: the OAuth 2.0 device authorization grant
(RFC 8628). The server says which provider, public client, scopes and audience (GET /api/v1/auth/cli/); the
provider's discovery document gives the endpoints; the person approves the code in any browser while the
CLI polls the token endpoint. The access token (a JWT for the API's audience) is the CLI's bearer token, and
the refresh token renews it when it expires."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests

DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
DEFAULT_INTERVAL_SECONDS = 5  # RFC 8628 §3.2: when the provider names no interval
SLOW_DOWN_SECONDS = 5  # RFC 8628 §3.5: every slow_down adds five seconds to the interval, for good
TIMEOUT_SECONDS = 15.0
EXPIRY_MARGIN_SECONDS = 30  # renew a little early: a token valid when sent may expire on the way


class OidcLoginError(Exception):
    """A sign-in that did not end with tokens; `reason` is the RFC 8628 / OAuth error code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Offer:
    """What the server offers for signing in from the CLI (GET /api/v1/auth/cli/)."""

    issuer: str
    client_id: str
    scopes: tuple[str, ...]
    audience: str


@dataclass(frozen=True)
class Endpoints:
    device_authorization: str
    token: str
    revocation: str | None


@dataclass(frozen=True)
class DeviceAuthorization:
    device_code: str
    user_code: str
    verification_uri: str
    verification_uri_complete: str | None
    expires_in: int
    interval: int


@dataclass(frozen=True)
class Tokens:
    access_token: str
    refresh_token: str | None
    expires_at: float | None  # epoch seconds; None when the provider did not say

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at - EXPIRY_MARGIN_SECONDS


def offer(server_url: str) -> Offer | None:
    """The server's single sign-on offer for the CLI, or None when it has none (API keys only)."""
    try:
        response = requests.get(f"{server_url}/api/v1/auth/cli/", timeout=TIMEOUT_SECONDS)
    except requests.RequestException as error:
        raise OidcLoginError("unreachable", f"Cannot reach {server_url}: {error}") from error
    if response.status_code == 404:  # a server from before the CLI could sign in with single sign-on
        return None
    if response.status_code != 200:
        raise OidcLoginError(
            "server_error", f"{server_url} answered {response.status_code} for its sign-in options"
        )
    body = response.json().get("oidc")
    if not body:
        return None
    return Offer(body["issuer"], body["client_id"], tuple(body["scopes"]), body["audience"])


def discover(issuer: str) -> Endpoints:
    url = f"{issuer.rstrip('/')}/.well-known/openid-configuration"
    try:
        response = requests.get(url, timeout=TIMEOUT_SECONDS)
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as error:
        raise OidcLoginError("unreachable", f"Cannot read the identity provider's {url}: {error}") from error
    if not document.get("device_authorization_endpoint"):
        raise OidcLoginError(
            "unsupported",
            f"The identity provider {issuer} does not offer the device authorization grant.",
        )
    return Endpoints(
        document["device_authorization_endpoint"],
        document["token_endpoint"],
        document.get("revocation_endpoint"),
    )


def _form_post(url: str, data: dict[str, str]) -> tuple[int, dict[str, Any]]:
    try:
        response = requests.post(url, data=data, timeout=TIMEOUT_SECONDS)
    except requests.RequestException as error:
        raise OidcLoginError("unreachable", f"Cannot reach the identity provider: {error}") from error
    try:
        body = response.json()
    except ValueError:
        body = {}
    return response.status_code, body if isinstance(body, dict) else {}


def _provider_error(body: dict[str, Any], status: int) -> OidcLoginError:
    reason = str(body.get("error") or f"http_{status}")
    description = body.get("error_description")
    return OidcLoginError(
        reason, f"The identity provider refused: {reason}" + (f" ({description})" if description else "")
    )


def start(offer: Offer, endpoints: Endpoints) -> DeviceAuthorization:
    status, body = _form_post(
        endpoints.device_authorization,
        {"client_id": offer.client_id, "scope": " ".join(offer.scopes), "resource": offer.audience},
    )
    if status != 200 or "device_code" not in body:
        raise _provider_error(body, status)
    return DeviceAuthorization(
        device_code=body["device_code"],
        user_code=body["user_code"],
        verification_uri=body.get("verification_uri") or body.get("verification_url", ""),
        verification_uri_complete=body.get("verification_uri_complete"),
        expires_in=int(body.get("expires_in") or 600),
        interval=int(body.get("interval") or DEFAULT_INTERVAL_SECONDS),
    )


def _tokens(body: dict[str, Any], now: float, previous_refresh_token: str | None = None) -> Tokens:
    expires_in = body.get("expires_in")
    return Tokens(
        access_token=body["access_token"],
        # A provider may keep the refresh token across renewals and leave it out of the answer.
        refresh_token=body.get("refresh_token") or previous_refresh_token,
        expires_at=now + float(expires_in) if expires_in else None,
    )


def poll(
    offer: Offer,
    endpoints: Endpoints,
    authorization: DeviceAuthorization,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    wall_clock: Callable[[], float] = time.time,
) -> Tokens:
    """Asks the token endpoint every `interval` seconds until the person approves (tokens), refuses
    (access_denied) or the code expires (expired_token, or its lifetime passes without an answer)."""
    interval = authorization.interval
    deadline = clock() + authorization.expires_in
    while True:
        sleep(interval)
        if clock() > deadline:
            raise OidcLoginError("expired_token", "The code expired before it was approved.")
        status, body = _form_post(
            endpoints.token,
            {
                "grant_type": DEVICE_CODE_GRANT,
                "device_code": authorization.device_code,
                "client_id": offer.client_id,
            },
        )
        if status == 200 and "access_token" in body:
            return _tokens(body, wall_clock())
        error = body.get("error")
        if error == "authorization_pending":
            continue
        if error == "slow_down":
            interval += SLOW_DOWN_SECONDS
            continue
        if error == "access_denied":
            raise OidcLoginError("access_denied", "The sign-in was refused at the identity provider.")
        if error == "expired_token":
            raise OidcLoginError("expired_token", "The code expired before it was approved.")
        raise _provider_error(body, status)


def refresh(token_endpoint: str, client_id: str, audience: str, refresh_token: str) -> Tokens:
    status, body = _form_post(
        token_endpoint,
        {
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": client_id,
            "resource": audience,
        },
    )
    if status != 200 or "access_token" not in body:
        raise _provider_error(body, status)
    return _tokens(body, time.time(), previous_refresh_token=refresh_token)


def revoke(revocation_endpoint: str, client_id: str, refresh_token: str) -> bool:
    """Best effort (logout must work with the provider down): True when the provider confirmed."""
    try:
        status, _ = _form_post(
            revocation_endpoint,
            {"token": refresh_token, "token_type_hint": "refresh_token", "client_id": client_id},
        )
    except OidcLoginError:
        return False
    return status == 200
