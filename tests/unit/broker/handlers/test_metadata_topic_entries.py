"""Metadata responses put together from separately encoded topic entries are byte for byte what kio
encodes for the whole response, in every version the broker serves."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from kio.schema.errors import ErrorCode

from broker.handlers.api_table import API_TABLE
from broker.handlers.metadata import (
    TopicEntryCache,
    _encode,
    _encoded_partition,
    _encoded_topic,
    _splice_topics,
    partition_entry,
)
from broker.partitions.manager import PartitionState

LOWEST, HIGHEST, *_ = API_TABLE[3]


def topic(name: str, partitions: int) -> dict[str, Any]:
    return {
        "error_code": 0,
        "name": name,
        "topic_id": uuid.uuid4(),
        "is_internal": False,
        "partitions": [
            {
                "error_code": 0,
                "partition_index": index,
                "leader_id": index % 3,
                "leader_epoch": 7,
                "replica_nodes": [0, 1, 2],
                "isr_nodes": [0, 1],
                "offline_replicas": [2],
            }
            for index in range(partitions)
        ],
        "topic_authorized_operations": 3576,
    }


BODY = {
    "throttle_time": 5,
    "brokers": [{"node_id": 1, "host": "broker-1", "port": 9092, "rack": "a"}],
    "cluster_id": "cluster",
    "controller_id": 1,
    "cluster_authorized_operations": 3968,
    "error_code": 0,
}


@pytest.mark.parametrize("version", range(LOWEST, HIGHEST + 1))
@pytest.mark.parametrize("count", [0, 1, 2, 130])  # 130 entries: a two-byte compact array length
def test_spliced_response_equals_the_whole_encoding(version: int, count: int) -> None:
    topics = [topic(f"t{i}", 300 if i == 0 else i % 4) for i in range(count)]
    cache = TopicEntryCache()
    spliced = _splice_topics(version, BODY, [_encoded_topic(cache, version, t) for t in topics])
    assert spliced == _encode(version, {**BODY, "topics": topics})


def test_a_cached_entry_is_used_only_under_the_same_stamp() -> None:
    cache = TopicEntryCache()
    cache.put(12, "orders", ("v1",), b"encoded")
    assert cache.get(12, "orders", ("v1",)) == b"encoded"
    assert cache.get(12, "orders", ("v2",)) is None
    assert cache.get(11, "orders", ("v1",)) is None


STATES = [
    PartitionState(0, ErrorCode.none, 1, 7, (1, 2, 3), (1, 2), (3,)),
    PartitionState(130, ErrorCode.leader_not_available, -1, -1, (), (), ()),
    PartitionState(2**31 - 1, ErrorCode.none, 2, 2**31 - 1, tuple(range(200)), tuple(range(130)), ()),
]


@pytest.mark.parametrize("version", range(LOWEST, HIGHEST + 1))
def test_partition_entries_encoded_by_hand_are_what_kio_encodes(version: int) -> None:
    """A topic entry's partitions are encoded without kio (a 10,000-partition topic re-encodes only the
    partitions that changed): byte for byte kio's encoding, in every version."""
    cache = TopicEntryCache()
    bare = topic("t", 0)
    whole = _encoded_topic(cache, version, {**bare, "partitions": [partition_entry(s) for s in STATES]})
    empty = _encoded_topic(cache, version, bare)
    hand = [_encoded_partition(version, state) for state in STATES]
    tail = (4 if version >= 8 else 0) + (1 if version >= 9 else 0)
    length = 1 if version >= 9 else 4
    assert whole[: len(empty) - tail - length] == empty[: len(empty) - tail - length]
    assert whole[len(empty) - tail : len(whole) - tail] == b"".join(hand)
