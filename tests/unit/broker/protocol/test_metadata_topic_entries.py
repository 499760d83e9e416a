"""Metadata responses put together from separately encoded topic entries are byte for byte what kio
encodes for the whole response, in every version the broker serves."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from broker.handlers.metadata import APIS, TopicEntryCache, _encode, _encoded_topic, _splice_topics

LOWEST, HIGHEST, _ = APIS[3]


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
