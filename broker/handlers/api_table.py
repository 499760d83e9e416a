"""The API handler registry: the handler modules, and the table of what they serve.

Listed here, not discovered: the import graph shows every handler the dispatcher can reach, and
ApiVersions advertises exactly this table.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from broker.context import RequestContext
from broker.handlers import (
    acls,
    api_versions,
    configs,
    consumer_groups,
    delegation_tokens,
    describe_producers,
    features,
    fetch,
    groups,
    log_dirs,
    metadata,
    offsets,
    produce,
    producers,
    quorum,
    quotas,
    reassignments,
    sasl,
    scram,
    share_fetch,
    share_groups,
    share_offsets,
    share_state,
    streams_groups,
    telemetry,
    topic_admin,
    topic_partitions,
    transactions,
    txn_markers,
)
from broker.protocol.frames import FramedResponse

Handler = Callable[[RequestContext, Any], Awaitable[dict | FramedResponse | None]]
ApiTable = dict[int, tuple[int, int, Handler]]

HANDLER_MODULES = (
    acls,
    configs,
    consumer_groups,
    delegation_tokens,
    describe_producers,
    features,
    fetch,
    groups,
    log_dirs,
    metadata,
    offsets,
    produce,
    producers,
    quorum,
    quotas,
    reassignments,
    sasl,
    scram,
    share_fetch,
    share_groups,
    share_offsets,
    share_state,
    streams_groups,
    telemetry,
    topic_admin,
    topic_partitions,
    transactions,
    txn_markers,
)


def _collect() -> ApiTable:
    table: ApiTable = {}
    for module in HANDLER_MODULES:
        apis: ApiTable = module.APIS
        for api_key, entry in apis.items():
            if api_key in table:
                raise RuntimeError(f"api key {api_key} registered twice ({module.__name__})")
            table[api_key] = entry
    low, high = api_versions.SERVED_VERSIONS
    table[api_versions.API_VERSIONS] = (low, high, api_versions.api_versions_handler(table))
    return table


_REGISTRY = _collect()


def registry() -> ApiTable:
    """Every served API: api key -> (min version, max version, handler)."""
    return _REGISTRY
