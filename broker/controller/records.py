"""Metadata log records: plain JSON-able dicts with a "type", built only by these functions.

One Raft entry holds a JSON list of records that apply together (a topic and its
partitions, a fencing and the leader elections it causes). ACL, SCRAM and quota records
are `broker.metadata.security_registry.SecurityStore`'s own records, carried unchanged.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Generator, Iterator, Sequence
from typing import Any

from broker.controller.api import Endpoint
from broker.raft.messages import VOTERS_ENTRY_PREFIX

Record = dict[str, Any]

SECURITY_RECORD_TYPES = frozenset(
    {
        "create_acl",
        "delete_acl",
        "upsert_scram",
        "delete_scram",
        "alter_quota",
        "upsert_token",
        "delete_token",
    }
)


def encode_entry(records: Sequence[Record]) -> bytes:
    return json.dumps(list(records), separators=(",", ":"), sort_keys=True).encode()


def decode_entry(data: bytes) -> list[Record]:
    """Records of one Raft entry; the leader's no-op (empty data) and a voter set (Raft's own) hold none."""
    return json.loads(data) if data and not data.startswith(VOTERS_ENTRY_PREFIX) else []


def decoded_entry_items(data: bytes) -> Iterator[Record]:
    """`decode_entry`, one record at a time, for a caller that yields to its event loop in between (one
    `json.loads` of a 10,000-partition entry holds it for tens of milliseconds under load)."""
    if not data or data.startswith(VOTERS_ENTRY_PREFIX):
        return iter(())
    return json_array_items(data.decode(), 0)


_ARRAY_START = re.compile(r"\s*\[\s*")
_ARRAY_NEXT = re.compile(r"\s*(,|\])\s*")


def json_array_items(text: str, position: int) -> Generator[Any, None, int]:
    """The items of the JSON array that starts at `position` of `text`, decoded one by one; returns
    where the array ends (the text after it is not looked at). Malformed JSON raises `ValueError`."""
    start = _ARRAY_START.match(text, position)
    if start is None:
        raise ValueError(f"no JSON array at character {position}")
    position = start.end()
    if text.startswith("]", position):
        return position + 1
    decoder = json.JSONDecoder()
    while True:
        item, position = decoder.raw_decode(text, position)
        yield item
        separator = _ARRAY_NEXT.match(text, position)
        if separator is None:
            raise ValueError(f"malformed JSON array at character {position}")
        position = separator.end()
        if separator.group(1) == "]":
            return position


def register_broker(
    broker_id: int, incarnation_id: uuid.UUID, endpoints: Sequence[Endpoint], rack: str | None
) -> Record:
    return {
        "type": "register_broker",
        "broker_id": broker_id,
        "incarnation_id": str(incarnation_id),
        "endpoints": [[e.name, e.host, e.port, e.security_protocol] for e in endpoints],
        "rack": rack,
    }


def fence_broker(broker_id: int, epoch: int) -> Record:
    return {"type": "fence_broker", "broker_id": broker_id, "epoch": epoch}


def unfence_broker(broker_id: int, epoch: int) -> Record:
    return {"type": "unfence_broker", "broker_id": broker_id, "epoch": epoch}


def begin_controlled_shutdown(broker_id: int, epoch: int) -> Record:
    return {"type": "begin_controlled_shutdown", "broker_id": broker_id, "epoch": epoch}


def unregister_broker(broker_id: int) -> Record:
    return {"type": "unregister_broker", "broker_id": broker_id}


def topic(name: str, topic_id: uuid.UUID, internal: bool = False) -> Record:
    return {"type": "topic", "name": name, "topic_id": str(topic_id), "internal": internal}


def remove_topic(topic_id: uuid.UUID) -> Record:
    return {"type": "remove_topic", "topic_id": str(topic_id)}


def partition(
    topic_id: uuid.UUID,
    index: int,
    replicas: Sequence[int],
    isr: Sequence[int],
    leader: int,
    leader_epoch: int = 0,
    partition_epoch: int = 0,
    adding_replicas: Sequence[int] = (),
    removing_replicas: Sequence[int] = (),
) -> Record:
    record: Record = {
        "type": "partition",
        "topic_id": str(topic_id),
        "partition": index,
        "replicas": list(replicas),
        "isr": list(isr),
        "leader": leader,
        "leader_epoch": leader_epoch,
        "partition_epoch": partition_epoch,
    }
    # Only written while a reassignment is in progress, so older logs read the same.
    if adding_replicas:
        record["adding_replicas"] = list(adding_replicas)
    if removing_replicas:
        record["removing_replicas"] = list(removing_replicas)
    return record


def partition_change(
    topic_id: uuid.UUID,
    index: int,
    *,
    leader: int | None = None,
    isr: Sequence[int] | None = None,
    replicas: Sequence[int] | None = None,
    adding_replicas: Sequence[int] | None = None,
    removing_replicas: Sequence[int] | None = None,
) -> Record:
    """Only the given fields change; applying it bumps partition_epoch, and leader_epoch when
    the leader changes (so every replica derives the same epochs from the log). A reassignment
    sets `adding_replicas` / `removing_replicas`; completing or cancelling it sets them empty."""
    record: Record = {"type": "partition_change", "topic_id": str(topic_id), "partition": index}
    if leader is not None:
        record["leader"] = leader
    if isr is not None:
        record["isr"] = list(isr)
    if replicas is not None:
        record["replicas"] = list(replicas)
    if adding_replicas is not None:
        record["adding_replicas"] = list(adding_replicas)
    if removing_replicas is not None:
        record["removing_replicas"] = list(removing_replicas)
    return record


def config(resource_type: str, resource_name: str, name: str, value: str | None) -> Record:
    """resource_type is "topic", "broker" (resource_name "" = the cluster-wide default), "group" or
    "client_metrics" (a KIP-714 subscription); a None value removes the override."""
    return {
        "type": "config",
        "resource_type": resource_type,
        "resource_name": resource_name,
        "name": name,
        "value": value,
    }


def producer_ids(broker_id: int, next_producer_id: int) -> Record:
    """Ids below `next_producer_id` are handed out; the broker got the block ending there."""
    return {"type": "producer_ids", "broker_id": broker_id, "next_producer_id": next_producer_id}


def feature_level(name: str, level: int) -> Record:
    """A finalized feature's level (Kafka's FeatureLevelRecord); level 0 un-finalizes it."""
    return {"type": "feature_level", "name": name, "level": level}
