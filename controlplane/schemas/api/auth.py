"""Who is calling: HTTP Basic with an API key (user = key id, password = secret: how Confluent clients send
`basic.auth.user.info`), a `Bearer` API key, or the console's session.

A key's secret is checked once per process and `AUTH_TTL_S`; in between, every request still reads the key's
state with the registry's generation (`cache.read_stamp`, one query), so a revoked or rotated key, or a
deactivated owner, is re-checked on the very next request. The access a caller has (teams, prefixes) is
remembered for `AUTH_TTL_S`, so a membership change takes effect within that time.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import threading
import time
from dataclasses import dataclass

from django.http import HttpRequest

from controlplane.accounts.keys import TOKEN_PREFIX, parse_token
from controlplane.accounts.models import ApiKey
from controlplane.accounts.services import authenticate_api_key
from controlplane.schemas import cache
from controlplane.schemas.access import RegistryAccess, load_access
from controlplane.schemas.cache import Stamp, read_stamp
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
        return user  # the whole key given as the user name
    if password.startswith(f"{TOKEN_PREFIX}_"):
        # The key exactly as the key API returns it (`secret`: shk_<key id>_<secret>) as the password, with
        # the key id as the user name; a user name naming another key is refused.
        token = parse_token(password)
        return password if token is not None and token.key_id == user else None
    return f"{TOKEN_PREFIX}_{user}_{password}"  # key id and the secret part alone


def key_state_of(api_key: ApiKey) -> int:
    """The `cache.KEY_*` bits of a loaded key, to compare with what the database says now."""
    state = cache.KEY_REVOKED if api_key.revoked_at is not None else 0
    if api_key.overlap_until is not None:
        state |= cache.KEY_ROTATED
    if api_key.user_id is not None and not api_key.user.is_active:
        state |= cache.KEY_OWNER_INACTIVE
    return state


@dataclass(frozen=True)
class Caller:
    actor: Actor
    by_session: bool
    # Read before anything this process remembers about the registry is trusted.
    stamp: Stamp


def _verified_key(token: str, cluster_id: int) -> tuple[ApiKey, Stamp] | None:
    digest = hashlib.sha256(token.encode()).hexdigest()
    with _lock:
        known = _keys.get(digest)
    if known is not None and known[1] > time.monotonic():
        api_key = known[0]
        stamp = read_stamp(cluster_id, api_key.pk)
        if stamp.key_state == key_state_of(api_key) and api_key.is_usable:
            return api_key, stamp
        with _lock:
            _keys.pop(digest, None)  # revoked, rotated, owner deactivated or expired: check it afresh
    api_key = authenticate_api_key(raw_token=token)
    if api_key is None:
        return None
    with _lock:
        _keys[digest] = (api_key, time.monotonic() + AUTH_TTL_S)
    return api_key, read_stamp(cluster_id, api_key.pk)


def authenticate(request: HttpRequest, cluster_id: int) -> Caller | None:
    """The caller and the request's stamp; None when nobody valid is calling."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header:
        token = _token_from_header(header)
        verified = _verified_key(token, cluster_id) if token else None
        if verified is None:
            return None
        api_key, stamp = verified
        user = api_key.user if api_key.user_id is not None else None
        return Caller(actor=Actor(user=user, api_key=api_key), by_session=False, stamp=stamp)
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return Caller(actor=Actor(user=user), by_session=True, stamp=read_stamp(cluster_id))
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
