"""The API handler registry.

Every module in this package defines ``APIS: dict[int, tuple[int, int, Handler]]`` mapping an
api key to (min version, max version, handler). A handler receives the RequestContext and the
decoded kio request entity and returns the response body as a dict tree keyed by kio's field names
(a nested value may be a kio entity of the exact class), or None when no response must be sent
(Produce with acks=0). `broker.protocol.responses` checks the tree against the version's schema: a
field no version has, a value of the wrong type or a required field left out raises
ResponseShapeError (fields of other versions are dropped). Hot paths may instead return a
``broker.protocol.frames.FramedResponse`` they encoded themselves (Fetch does).
ApiVersions advertises exactly this registry.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable
from typing import Any

from broker.protocol.frames import FramedResponse
from broker.server.context import RequestContext

Handler = Callable[[RequestContext, Any], Awaitable[dict | FramedResponse | None]]
ApiTable = dict[int, tuple[int, int, Handler]]


def _collect() -> ApiTable:
    table: ApiTable = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        apis: ApiTable | None = getattr(module, "APIS", None)
        if apis is None:
            continue
        for api_key, entry in apis.items():
            if api_key in table:
                raise RuntimeError(f"api key {api_key} registered twice ({module.__name__})")
            table[api_key] = entry
    return table


_REGISTRY: ApiTable | None = None


def registry() -> ApiTable:
    """All handlers, discovered once on first use."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _collect()
    return _REGISTRY
