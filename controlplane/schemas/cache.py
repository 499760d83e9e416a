"""Per-process cache of registry answers, kept honest by the registry's generation counter.

Every write bumps `RegistryState.generation`. A process re-reads the counter at most every
`GENERATION_TTL_S`, and at once after its own writes, so an answer cached by another process can be served at
most that long after a write elsewhere. Reads that hit the cache touch no database table.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

from django.db import transaction

GENERATION_TTL_S = 1.0
MAX_ENTRIES = 20_000

T = TypeVar("T")
_lock = threading.Lock()
_generations: dict[int, tuple[int, float]] = {}
_answers: OrderedDict[tuple[int, Hashable], tuple[int, object]] = OrderedDict()


def generation(cluster_id: int) -> int:
    from controlplane.schemas.models import RegistryState

    now = time.monotonic()
    known = _generations.get(cluster_id)
    if known is not None and now - known[1] < GENERATION_TTL_S:
        return known[0]
    current = (
        RegistryState.objects.filter(cluster_id=cluster_id).values_list("generation", flat=True).first() or 0
    )
    _generations[cluster_id] = (current, now)
    return current


def invalidate_locally(cluster_id: int) -> None:
    """Forget the counter now and again when the write commits, so this process re-reads it."""
    _generations.pop(cluster_id, None)
    transaction.on_commit(lambda: _generations.pop(cluster_id, None))


def cached(cluster_id: int, key: Hashable, compute: Callable[[], T]) -> T:
    """The answer for `key` in this registry's current generation, computed once per generation."""
    current = generation(cluster_id)
    entry_key = (cluster_id, key)
    with _lock:
        entry = _answers.get(entry_key)
        if entry is not None and entry[0] == current:
            _answers.move_to_end(entry_key)
            return entry[1]  # type: ignore[return-value]
    value = compute()
    with _lock:
        _answers[entry_key] = (current, value)
        if len(_answers) > MAX_ENTRIES:
            _answers.popitem(last=False)
    return value


def clear() -> None:
    with _lock:
        _answers.clear()
        _generations.clear()
