"""Who is calling: HTTP Basic with an API key (user = key id, password = secret: how Confluent clients send
`basic.auth.user.info`), a `Bearer` API key, or the console's session.

Verified keys and the access they carry are remembered for `AUTH_TTL_S` per process, so a busy serializer
costs no database round trip per request; a revoked key therefore stops working within that time.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import threading
import time

from django.http import HttpRequest

from controlplane.accounts.keys import TOKEN_PREFIX
from controlplane.accounts.models import ApiKey
from controlplane.accounts.services import authenticate_api_key
from controlplane.schemas.access import RegistryAccess, load_access
from controlplane.tenancy.access import Actor

AUTH_TTL_S = 10.0
_lock = threading.Lock()
_keys: dict[str, tuple[ApiKey, float]] = {}
_access: dict[tuple[str, int], tuple[RegistryAccess, float]] = {}


def _token_from_header(header: str) -> str | None:
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer":
        return credentials.strip()
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(credentials.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, _, password = decoded.partition(":")
    if user.startswith(f"{TOKEN_PREFIX}_") and not password:
        return user  # the whole token given as the user name
    return f"{TOKEN_PREFIX}_{user}_{password}"


def _verified_key(token: str) -> ApiKey | None:
    digest = hashlib.sha256(token.encode()).hexdigest()
    now = time.monotonic()
    with _lock:
        known = _keys.get(digest)
    if known is not None and known[1] > now:
        return known[0]
    api_key = authenticate_api_key(raw_token=token)
    if api_key is not None:
        with _lock:
            _keys[digest] = (api_key, now + AUTH_TTL_S)
    return api_key


def authenticate(request: HttpRequest) -> tuple[Actor, bool] | None:
    """The actor and whether it came by session; None when nobody valid is calling."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header:
        token = _token_from_header(header)
        api_key = _verified_key(token) if token else None
        if api_key is None:
            return None
        user = api_key.user if api_key.user_id is not None else None
        return Actor(user=user, api_key=api_key), False
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return Actor(user=user), True
    return None


def registry_access(actor: Actor, cluster_id: int) -> RegistryAccess:
    identity = f"key:{actor.api_key.pk}" if actor.api_key is not None else f"user:{actor.user.pk}"
    now = time.monotonic()
    with _lock:
        known = _access.get((identity, cluster_id))
    if known is not None and known[1] > now:
        return known[0]
    access = load_access(actor, cluster_id)
    with _lock:
        _access[(identity, cluster_id)] = (access, now + AUTH_TTL_S)
    return access


def forget_everything() -> None:
    """Tests change memberships and keys between requests: start from a clean slate."""
    with _lock:
        _keys.clear()
        _access.clear()
