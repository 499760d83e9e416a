"""The OpenID Connect relying party: discovery, the authorization code flow with PKCE, ID token checks,
refresh and RP-initiated logout.

Authlib builds the protocol messages and joserfc (Authlib's JOSE library) verifies signatures and claims;
nothing here parses or checks a JWT by hand. Every call to the provider goes through
`controlplane.core.outbound`, so an issuer on a loopback or private address is refused unless the operator
allows it (`OUTBOUND_ALLOWED_NETWORKS`), like any other address the control plane is told to contact.
"""

from __future__ import annotations

import base64
import hmac
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from authlib.common.security import generate_token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri, prepare_token_request
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from django.conf import settings
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet

from controlplane.core import outbound

logger = logging.getLogger(__name__)

# Asymmetric algorithms only: an HS256 token would be checked with the client secret, which the provider and
# every holder of the secret share; "none" is never accepted.
SIGNING_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
METADATA_TTL_SECONDS = 300
MAX_RESPONSE_BYTES = 1 << 20
RECHECK_WITHOUT_EXPIRY_SECONDS = 300


class OidcError(Exception):
    """A sign-in or token that cannot be accepted; the message is safe to show to the person."""


@dataclass(frozen=True)
class OidcConfig:
    issuer: str
    client_id: str
    client_secret: str
    scopes: tuple[str, ...]
    provider_name: str
    username_claim: str
    email_claim: str
    groups_claim: str
    clock_skew_seconds: int
    timeout_seconds: float
    redirect_uri: str  # empty: derived from the request


def current_config() -> OidcConfig | None:
    """The configured provider, or None when single sign-on is off (OIDC_ISSUER unset)."""
    values = settings.OIDC
    if not values["issuer"]:
        return None
    return OidcConfig(**values)


@dataclass
class _Cached:
    value: Any
    fetched_at: float


_cache: dict[tuple[str, str], _Cached] = {}
_cache_lock = threading.Lock()


def _fetch_json(
    url: str, config: OidcConfig, *, body: bytes | None = None, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    method = "GET" if body is None else "POST"
    try:
        response = outbound.request(
            method,
            url,
            body=body,
            headers={"Accept": "application/json", **(headers or {})},
            timeout=config.timeout_seconds,
            max_body=MAX_RESPONSE_BYTES,
        )
    except outbound.RefusedDestination as refusal:
        raise OidcError(f"The identity provider's address is refused: {refusal}") from refusal
    except OSError as error:
        logger.warning("OpenID provider unreachable at %s: %s", url, error)
        raise OidcError("The identity provider could not be reached; try again later.") from error
    try:
        document = json.loads(response.body)
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise OidcError(f"The identity provider answered {response.status} without a JSON object.")
    if response.status >= 400:
        # OAuth errors carry `error` and maybe `error_description`; never echo tokens.
        reason = document.get("error_description") or document.get("error") or f"HTTP {response.status}"
        raise OidcError(f"The identity provider refused the request: {reason}")
    return document


def _cached(key: tuple[str, str], load: Any, *, refresh: bool = False) -> Any:
    now = time.monotonic()
    with _cache_lock:
        entry = _cache.get(key)
        if entry is not None and not refresh and now - entry.fetched_at < METADATA_TTL_SECONDS:
            return entry.value
    value = load()
    with _cache_lock:
        _cache[key] = _Cached(value, now)
    return value


def forget_provider_metadata() -> None:
    """Drops cached discovery documents and keys (tests switch providers; operators never need this)."""
    with _cache_lock:
        _cache.clear()


def metadata(config: OidcConfig) -> dict[str, Any]:
    """The provider's discovery document; its `issuer` must be exactly the configured one."""

    def load() -> dict[str, Any]:
        document = _fetch_json(f"{config.issuer.rstrip('/')}/.well-known/openid-configuration", config)
        if document.get("issuer") != config.issuer:
            raise OidcError(
                f"The discovery document names the issuer {document.get('issuer')!r}, not the configured "
                f"{config.issuer!r} (OIDC_ISSUER must match it exactly)."
            )
        for endpoint in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(document.get(endpoint), str):
                raise OidcError(f"The discovery document has no {endpoint}.")
        return document

    return _cached(("metadata", config.issuer), load)


def signing_keys(config: OidcConfig, *, refresh: bool = False) -> KeySet:
    def load() -> KeySet:
        document = _fetch_json(metadata(config)["jwks_uri"], config)
        try:
            return KeySet.import_key_set(document)
        except (JoseError, ValueError, TypeError, KeyError) as error:
            raise OidcError("The identity provider's key set cannot be read.") from error

    return _cached(("jwks", config.issuer), load, refresh=refresh)


@dataclass(frozen=True)
class PendingLogin:
    """What the browser's session keeps between the redirect to the provider and its answer."""

    state: str
    nonce: str
    code_verifier: str
    redirect_uri: str
    next_path: str

    def as_session(self) -> dict[str, str]:
        return self.__dict__.copy()

    @classmethod
    def from_session(cls, value: Any) -> PendingLogin | None:
        try:
            return cls(**value)
        except TypeError:
            return None


def authorization_url(config: OidcConfig, *, redirect_uri: str, next_path: str) -> tuple[str, PendingLogin]:
    """Where to send the browser: an authorization request with PKCE (S256), a state and a nonce."""
    pending = PendingLogin(
        state=generate_token(32),
        nonce=generate_token(32),
        code_verifier=generate_token(64),
        redirect_uri=redirect_uri,
        next_path=next_path,
    )
    url = prepare_grant_uri(
        metadata(config)["authorization_endpoint"],
        config.client_id,
        "code",
        redirect_uri=redirect_uri,
        scope=" ".join(config.scopes),
        state=pending.state,
        nonce=pending.nonce,
        code_challenge=create_s256_code_challenge(pending.code_verifier),
        code_challenge_method="S256",
    )
    return url, pending


@dataclass
class Tokens:
    """A verified token response. `claims` are the ID token's, completed by the userinfo endpoint."""

    id_token: str
    claims: dict[str, Any]
    access_token: str = ""
    refresh_token: str = ""
    expires_at: float = 0.0  # epoch seconds: when the session must be re-checked with the provider
    userinfo: dict[str, Any] = field(default_factory=dict)


def _client_auth_header(config: OidcConfig) -> str:
    # RFC 6749 2.3.1: client id and secret are form-urlencoded before they are joined and base64-encoded.
    credentials = f"{quote(config.client_id, safe='')}:{quote(config.client_secret, safe='')}"
    return "Basic " + base64.b64encode(credentials.encode()).decode()


def _token_request(config: OidcConfig, body: str) -> dict[str, Any]:
    return _fetch_json(
        metadata(config)["token_endpoint"],
        config,
        body=body.encode(),
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Authorization": _client_auth_header(config),
        },
    )


def verify_id_token(config: OidcConfig, raw: str, *, nonce: str | None) -> dict[str, Any]:
    """Checks an ID token's signature against the provider's keys and its iss, aud, azp, exp, iat and nonce
    (a clock skew of `clock_skew_seconds` is tolerated). Raises OidcError saying what failed."""
    if not isinstance(raw, str) or not raw:
        raise OidcError("The identity provider sent no ID token.")
    allowed = [
        alg
        for alg in metadata(config).get("id_token_signing_alg_values_supported", ["RS256"])
        if alg in SIGNING_ALGORITHMS
    ]
    try:
        token = _decode(config, raw, allowed)
    except (JoseError, ValueError) as error:
        reason = getattr(error, "error", "") or "malformed"
        raise OidcError(f"The ID token's signature is not valid ({reason}).") from error
    expected: dict[str, Any] = {
        "iss": {"essential": True, "value": config.issuer},
        "aud": {"essential": True, "value": config.client_id},
        "exp": {"essential": True},
        "iat": {"essential": True},
        "sub": {"essential": True},
    }
    if nonce is not None:
        expected["nonce"] = {"essential": True, "value": nonce}
    registry = jwt.JWTClaimsRegistry(leeway=config.clock_skew_seconds, **expected)
    try:
        registry.validate(token.claims)
    except JoseError as error:
        raise OidcError(f"The ID token is not acceptable: {error.description or error.error}.") from error
    audience = token.claims["aud"]
    if isinstance(audience, list) and len(audience) > 1 and token.claims.get("azp") != config.client_id:
        raise OidcError("The ID token was issued to another party (azp).")
    return token.claims


def verify_access_token(config: OidcConfig, raw: str, *, audience: str) -> dict[str, Any]:
    """Checks a JWT access token the provider issued for this API (RFC 9068): signature against the
    provider's keys, `iss`, `aud` containing `audience`, `exp` (with the clock-skew leeway) and `sub`. An ID
    token is not an access token: one carrying a `nonce` is refused even if its audience matched."""
    try:
        token = _decode(config, raw, list(SIGNING_ALGORITHMS))
    except (JoseError, ValueError) as error:
        reason = getattr(error, "error", "") or "malformed"
        raise OidcError(f"The access token's signature is not valid ({reason}).") from error
    registry = jwt.JWTClaimsRegistry(
        leeway=config.clock_skew_seconds,
        iss={"essential": True, "value": config.issuer},
        aud={"essential": True, "value": audience},
        exp={"essential": True},
        sub={"essential": True},
    )
    try:
        registry.validate(token.claims)
    except JoseError as error:
        raise OidcError(f"The access token is not acceptable: {error.description or error.error}.") from error
    if "nonce" in token.claims:
        raise OidcError("An ID token is not an access token.")
    return token.claims


def _decode(config: OidcConfig, raw: str, algorithms: list[str]) -> jwt.Token:
    try:
        return jwt.decode(raw, signing_keys(config), algorithms=algorithms)
    except InvalidKeyIdError:
        # A key id the cached set does not have may be a key the provider rotated in: read the set again.
        return jwt.decode(raw, signing_keys(config, refresh=True), algorithms=algorithms)


def _with_userinfo(config: OidcConfig, tokens: Tokens) -> Tokens:
    """Adds the userinfo endpoint's claims (many providers put groups only there); its `sub` must match."""
    endpoint = metadata(config).get("userinfo_endpoint")
    if not endpoint or not tokens.access_token:
        return tokens
    userinfo = _fetch_json(endpoint, config, headers={"Authorization": f"Bearer {tokens.access_token}"})
    if userinfo.get("sub") != tokens.claims["sub"]:
        raise OidcError("The userinfo endpoint answered for another person.")
    tokens.userinfo = userinfo
    tokens.claims = {**userinfo, **tokens.claims}
    return tokens


def _tokens_from(response: dict[str, Any], claims: dict[str, Any], id_token: str) -> Tokens:
    now = time.time()
    expires_at = float(claims["exp"])
    expires_in = response.get("expires_in")
    if isinstance(expires_in, int | float) and expires_in > 0:
        expires_at = min(expires_at, now + float(expires_in))
    return Tokens(
        id_token=id_token,
        claims=dict(claims),
        access_token=str(response.get("access_token") or ""),
        refresh_token=str(response.get("refresh_token") or ""),
        expires_at=expires_at,
    )


def finish_login(config: OidcConfig, pending: PendingLogin, params: dict[str, str]) -> Tokens:
    """Handles the provider's redirect back: checks state (and the RFC 9207 `iss` parameter), exchanges the
    code with the PKCE verifier, and verifies the ID token with the nonce of this login."""
    if params.get("error"):
        raise OidcError(
            f"The identity provider did not sign you in: {params.get('error_description') or params['error']}"
        )
    if not hmac.compare_digest(str(params.get("state", "")), pending.state):
        raise OidcError("This sign-in answer does not belong to the sign-in this browser started.")
    if "iss" in params and params["iss"] != config.issuer:
        raise OidcError("This sign-in answer comes from another identity provider.")
    code = params.get("code")
    if not code:
        raise OidcError("The identity provider sent no authorization code.")
    body = prepare_token_request(
        "authorization_code",
        code=code,
        redirect_uri=pending.redirect_uri,
        code_verifier=pending.code_verifier,
    )
    response = _token_request(config, body)
    id_token = response.get("id_token")
    claims = verify_id_token(config, id_token, nonce=pending.nonce)
    return _with_userinfo(config, _tokens_from(response, claims, id_token))


def refresh(config: OidcConfig, *, refresh_token: str, subject: str, id_token: str) -> Tokens:
    """Renews an expired sign-in with the refresh token; the person must still be the same subject."""
    response = _token_request(config, prepare_token_request("refresh_token", refresh_token=refresh_token))
    new_id_token = response.get("id_token") or ""
    if new_id_token:
        claims = verify_id_token(config, new_id_token, nonce=None)
    else:
        # No new ID token: the provider vouches through the new access token; userinfo below must agree.
        # Without expires_in either, the provider is asked again after RECHECK_WITHOUT_EXPIRY_SECONDS.
        lifetime = response.get("expires_in") or RECHECK_WITHOUT_EXPIRY_SECONDS
        claims = {"sub": subject, "exp": time.time() + float(lifetime)}
    if claims["sub"] != subject:
        raise OidcError("The identity provider renewed the sign-in of another person.")
    tokens = _tokens_from(response, claims, new_id_token or id_token)
    tokens.refresh_token = tokens.refresh_token or refresh_token
    return _with_userinfo(config, tokens)


def end_session_url(config: OidcConfig, *, id_token: str, post_logout_redirect_uri: str) -> str | None:
    """The provider's logout page for RP-initiated logout, or None when it offers none."""
    try:
        endpoint = metadata(config).get("end_session_endpoint")
    except OidcError:
        return None  # the provider is down: the local session is ended anyway
    if not endpoint:
        return None
    query = urlencode(
        {
            "id_token_hint": id_token,
            "post_logout_redirect_uri": post_logout_redirect_uri,
            "client_id": config.client_id,
        }
    )
    return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"
