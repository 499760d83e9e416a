"""Per-process cache of registry answers, kept honest by the registry's generation counter.

Every write bumps `RegistryState.generation` in the write's own transaction. Each request reads the counter
once (`read_stamp`, one indexed query, together with the caller's API key state) before it looks at the cache,
and an answer is served only while it was computed under that same generation. So a write in any process —
another web server worker, another host — is seen by the very next request everywhere: a new version, a soft
or a permanent delete never leave a stale answer behind. An answer is tagged with the generation read
*before* it was computed, so a write landing during the computation can only make it look older, never newer.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from django.contrib.auth import get_user_model
from django.db import connection

MAX_ENTRIES = 20_000
# Bits of `Stamp.key_state`, as `key_state_of` computes them for a loaded key.
KEY_REVOKED = 1
KEY_ROTATED = 2
KEY_OWNER_INACTIVE = 4

T = TypeVar("T")
_lock = threading.Lock()
_answers: OrderedDict[tuple[int, Hashable], tuple[int, object]] = OrderedDict()


@dataclass(frozen=True)
class Stamp:
    """What one request reads before trusting anything a process remembers."""

    generation: int
    # KEY_* bits of the caller's API key; None when no key was asked about or the key no longer exists.
    key_state: int | None


@lru_cache(maxsize=2)
def _stamp_sql(placeholder: str) -> str:
    from controlplane.accounts.models import ApiKey
    from controlplane.schemas.models import RegistryState

    # Both in one round trip: the counter, and what can change about a key after it was verified.
    return (
        f"SELECT (SELECT generation FROM {RegistryState._meta.db_table} WHERE cluster_id = {placeholder}), "
        f"(SELECT CASE WHEN k.revoked_at IS NULL THEN 0 ELSE {KEY_REVOKED} END"
        f" + CASE WHEN k.overlap_until IS NULL THEN 0 ELSE {KEY_ROTATED} END"
        f" + CASE WHEN u.is_active IS NULL OR u.is_active THEN 0 ELSE {KEY_OWNER_INACTIVE} END"
        f" FROM {ApiKey._meta.db_table} k LEFT JOIN {get_user_model()._meta.db_table} u ON u.id = k.user_id"
        f" WHERE k.id = {placeholder})"
    )


def read_stamp(cluster_id: int, api_key_id: int | None = None) -> Stamp:
    # On the driver's own cursor: Django's cursor machinery costs more than this indexed read itself, and
    # every registry request makes it. Errors still come out as Django's (and mark the connection for reuse
    # checks), through wrap_database_errors.
    connection.ensure_connection()
    with connection.wrap_database_errors:
        cursor = connection.connection.cursor()
        try:
            cursor.execute(
                _stamp_sql("?" if connection.vendor == "sqlite" else "%s"), (cluster_id, api_key_id)
            )
            generation, key_state = cursor.fetchone()
        finally:
            cursor.close()
    return Stamp(generation=generation or 0, key_state=key_state)


def cached(cluster_id: int, generation: int, key: Hashable, compute: Callable[[], T]) -> T:
    """The answer for `key` computed under `generation` (the request's stamp), computed once per generation."""
    entry_key = (cluster_id, key)
    with _lock:
        entry = _answers.get(entry_key)
        if entry is not None and entry[0] == generation:
            _answers.move_to_end(entry_key)
            return entry[1]  # type: ignore[return-value]
    value = compute()
    with _lock:
        entry = _answers.get(entry_key)
        # A slower thread that read an older stamp must not replace a newer answer.
        if entry is None or entry[0] <= generation:
            _answers[entry_key] = (generation, value)
            _answers.move_to_end(entry_key)
        if len(_answers) > MAX_ENTRIES:
            _answers.popitem(last=False)
    return value


def clear() -> None:
    with _lock:
        _answers.clear()
