"""The API table: every API the broker serves, the versions it serves, and where its handler is.

The only place version ranges are written. ApiVersions advertises the table as data, and a handler's
module is imported on its API's first request (`handler`): starting a broker used to import every
handler module and, through them, some 300 kio request and response modules (issue #33: startup 1.15 s
at the release, 1.58 s after). Every entry is checked to import and name a coroutine function by
tests/unit/broker/handlers/test_api_table.py.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from kio.static.protocol import ResponsePayload

from broker.context import RequestContext
from broker.protocol.frames import FramedResponse

log = logging.getLogger(__name__)

# A handler answers the kio response entity of the newest version it serves, framed bytes (Fetch, Metadata)
# or None (Produce with acks=0).
Handler = Callable[[RequestContext, Any], Awaitable[ResponsePayload | FramedResponse | None]]


class ServedApi(NamedTuple):
    min_version: int
    max_version: int
    module: str  # the handler's module, imported on the API's first request
    function: str  # the coroutine function in it: handler(ctx, request) -> the answer


API_TABLE: dict[int, ServedApi] = {
    # v11 adds TRANSACTION_ABORTABLE (KIP-890); v12 is v11 unless transaction.version 2 is finalized, when a
    # transactional batch to a partition not yet in the transaction adds it (the producer sends no
    # AddPartitionsToTxn).
    0: ServedApi(3, 13, "broker.handlers.produce", "handle_produce"),
    # Up to the newest version the hand-framed answer encodes (broker.protocol.fetch_encoding.MAX_VERSION).
    1: ServedApi(4, 18, "broker.handlers.fetch", "handle_fetch"),
    # v10's timeout_ms bounds waits for remote storage: none here
    2: ServedApi(1, 11, "broker.handlers.offsets", "handle_list_offsets"),
    3: ServedApi(0, 13, "broker.handlers.metadata", "handle_metadata"),
    8: ServedApi(2, 10, "broker.handlers.groups", "offset_commit"),
    9: ServedApi(1, 10, "broker.handlers.groups", "offset_fetch"),
    10: ServedApi(0, 6, "broker.handlers.groups", "find_coordinator"),
    # v8 adds the member's reason (ignored), v9 skip_assignment (false: classic groups)
    11: ServedApi(0, 9, "broker.handlers.groups", "join_group"),
    12: ServedApi(0, 4, "broker.handlers.groups", "heartbeat"),
    13: ServedApi(0, 5, "broker.handlers.groups", "leave_group"),
    14: ServedApi(0, 5, "broker.handlers.groups", "sync_group"),
    15: ServedApi(0, 6, "broker.handlers.groups", "describe_groups"),
    16: ServedApi(0, 5, "broker.handlers.groups", "list_groups"),
    17: ServedApi(0, 1, "broker.handlers.sasl", "handle_sasl_handshake"),
    18: ServedApi(0, 4, "broker.handlers.api_versions", "handle_api_versions"),
    19: ServedApi(2, 7, "broker.handlers.topic_admin", "handle_create_topics"),
    20: ServedApi(1, 6, "broker.handlers.topic_admin", "handle_delete_topics"),
    21: ServedApi(0, 2, "broker.handlers.offsets", "handle_delete_records"),
    22: ServedApi(0, 5, "broker.handlers.producers", "handle_init_producer_id"),
    23: ServedApi(2, 4, "broker.handlers.offsets", "handle_offset_for_leader_epoch"),
    24: ServedApi(0, 5, "broker.handlers.transactions", "add_partitions_to_txn"),
    25: ServedApi(0, 4, "broker.handlers.transactions", "add_offsets_to_txn"),
    26: ServedApi(0, 5, "broker.handlers.transactions", "end_txn"),
    # Kafka 4.0 serves version 1 only (v0 was removed by KIP-896).
    # v2 adds the marker's transaction version (KIP-890): markers are written the same either way here.
    27: ServedApi(1, 2, "broker.handlers.txn_markers", "handle_write_txn_markers"),
    28: ServedApi(0, 5, "broker.handlers.transactions", "txn_offset_commit"),
    29: ServedApi(1, 3, "broker.handlers.acls", "handle_describe_acls"),
    30: ServedApi(1, 3, "broker.handlers.acls", "handle_create_acls"),
    31: ServedApi(1, 3, "broker.handlers.acls", "handle_delete_acls"),
    32: ServedApi(1, 4, "broker.handlers.configs", "handle_describe_configs"),
    33: ServedApi(0, 2, "broker.handlers.configs", "handle_alter_configs"),
    34: ServedApi(1, 2, "broker.handlers.log_dirs", "handle_alter_replica_log_dirs"),
    35: ServedApi(1, 4, "broker.handlers.log_dirs", "handle_describe_log_dirs"),
    36: ServedApi(0, 2, "broker.handlers.sasl", "handle_sasl_authenticate"),
    37: ServedApi(0, 3, "broker.handlers.topic_admin", "handle_create_partitions"),
    38: ServedApi(1, 3, "broker.handlers.delegation_tokens", "handle_create_delegation_token"),
    39: ServedApi(1, 2, "broker.handlers.delegation_tokens", "handle_renew_delegation_token"),
    40: ServedApi(1, 2, "broker.handlers.delegation_tokens", "handle_expire_delegation_token"),
    41: ServedApi(1, 3, "broker.handlers.delegation_tokens", "handle_describe_delegation_token"),
    42: ServedApi(0, 2, "broker.handlers.groups", "delete_groups"),
    43: ServedApi(0, 2, "broker.handlers.reassignments", "handle_elect_leaders"),
    44: ServedApi(0, 1, "broker.handlers.configs", "handle_incremental_alter_configs"),
    45: ServedApi(0, 1, "broker.handlers.reassignments", "handle_alter_partition_reassignments"),
    46: ServedApi(0, 0, "broker.handlers.reassignments", "handle_list_partition_reassignments"),
    47: ServedApi(0, 0, "broker.handlers.groups", "offset_delete"),
    48: ServedApi(0, 1, "broker.handlers.quotas", "handle_describe_client_quotas"),
    49: ServedApi(0, 1, "broker.handlers.quotas", "handle_alter_client_quotas"),
    50: ServedApi(0, 0, "broker.handlers.scram", "handle_describe_user_scram_credentials"),
    51: ServedApi(0, 0, "broker.handlers.scram", "handle_alter_user_scram_credentials"),
    55: ServedApi(0, 2, "broker.handlers.quorum", "handle_describe_quorum"),
    57: ServedApi(0, 2, "broker.handlers.features", "handle_update_features"),
    60: ServedApi(0, 2, "broker.handlers.metadata", "handle_describe_cluster"),
    61: ServedApi(0, 0, "broker.handlers.describe_producers", "handle_describe_producers"),
    64: ServedApi(0, 0, "broker.handlers.reassignments", "handle_unregister_broker"),
    65: ServedApi(0, 0, "broker.handlers.transactions", "describe_transactions"),
    66: ServedApi(0, 2, "broker.handlers.transactions", "list_transactions"),
    68: ServedApi(0, 1, "broker.handlers.consumer_groups", "consumer_group_heartbeat"),
    69: ServedApi(0, 1, "broker.handlers.consumer_groups", "consumer_group_describe"),
    # Advertised only while the telemetry receiver is on (broker.handlers.api_versions.hidden_apis).
    71: ServedApi(0, 0, "broker.handlers.telemetry", "handle_get_telemetry_subscriptions"),
    72: ServedApi(0, 0, "broker.handlers.telemetry", "handle_push_telemetry"),
    74: ServedApi(0, 1, "broker.handlers.configs", "handle_list_config_resources"),
    75: ServedApi(0, 0, "broker.handlers.topic_partitions", "handle_describe_topic_partitions"),
    76: ServedApi(1, 1, "broker.handlers.share_groups", "share_group_heartbeat"),
    77: ServedApi(1, 1, "broker.handlers.share_groups", "share_group_describe"),
    78: ServedApi(1, 2, "broker.handlers.share_fetch", "handle_share_fetch"),
    79: ServedApi(1, 2, "broker.handlers.share_fetch", "handle_share_acknowledge"),
    # v1's ack_when_committed=false lets Kafka answer before the new voter set commits; we always wait.
    80: ServedApi(0, 1, "broker.handlers.quorum", "handle_add_raft_voter"),
    81: ServedApi(0, 0, "broker.handlers.quorum", "handle_remove_raft_voter"),
    83: ServedApi(0, 0, "broker.handlers.share_state", "initialize_share_group_state"),
    84: ServedApi(0, 0, "broker.handlers.share_state", "read_share_group_state"),
    85: ServedApi(0, 1, "broker.handlers.share_state", "write_share_group_state"),
    86: ServedApi(0, 0, "broker.handlers.share_state", "delete_share_group_state"),
    87: ServedApi(0, 1, "broker.handlers.share_state", "read_share_group_state_summary"),
    88: ServedApi(0, 0, "broker.handlers.streams_groups", "streams_group_heartbeat"),
    89: ServedApi(0, 0, "broker.handlers.streams_groups", "streams_group_describe"),
    90: ServedApi(0, 1, "broker.handlers.share_offsets", "describe_share_group_offsets"),
    91: ServedApi(0, 0, "broker.handlers.share_offsets", "alter_share_group_offsets"),
    92: ServedApi(0, 0, "broker.handlers.share_offsets", "delete_share_group_offsets"),
}


class HandlerUnavailable(Exception):
    """An API's handler module does not import: the request fails as a handler's exception does (the
    connection closes); the API's next request imports again."""


# api key -> (the table entry resolved, its handler). The entry is kept so that a replaced entry
# (a test's stand-in) is resolved anew.
_resolved: dict[int, tuple[ServedApi, Handler]] = {}
# Modules whose import failure is logged, so that a broken module logs its traceback once, not once
# per request; cleared when it imports.
_failing_modules: set[str] = set()


def handler(api_key: int) -> Handler:
    """The handler of a served api key, its module imported on first use.

    Raises HandlerUnavailable when the module does not import (logged the first time).
    """
    entry = API_TABLE[api_key]
    resolved = _resolved.get(api_key)
    if resolved is not None and resolved[0] is entry:
        return resolved[1]
    try:
        module = importlib.import_module(entry.module)
    except Exception as exc:
        if entry.module not in _failing_modules:
            _failing_modules.add(entry.module)
            log.exception(
                "cannot import %s, the handler of api %d: its requests fail until it imports",
                entry.module,
                api_key,
            )
        raise HandlerUnavailable(f"api {api_key}: {entry.module} does not import ({exc!r})") from None
    _failing_modules.discard(entry.module)
    found: Handler = getattr(module, entry.function)
    _resolved[api_key] = (entry, found)
    return found


def every_handler() -> dict[int, tuple[int, int, Handler]]:
    """Every served API with its handler imported: api key -> (min version, max version, handler).
    For checks over all handlers (tests); the broker itself imports a handler on its first request."""
    return {key: (entry.min_version, entry.max_version, handler(key)) for key, entry in API_TABLE.items()}
