"""Metadata responses put together from separately encoded topic entries are byte for byte what kio
encodes for the whole response, in every version the broker serves."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import pytest
from kio.schema.errors import ErrorCode

from broker.handlers.api_table import API_TABLE
from broker.handlers.metadata import (
    BrokerEndpoint,
    TopicEntryCache,
    _encode,
    _encoded_partition,
    _encoded_topic,
    _splice_topics,
    error_entry,
    metadata_answer,
    partition_entry,
)
from broker.partitions.manager import PartitionState

LOWEST, HIGHEST, *_ = API_TABLE[3]


def topic(version: int, name: str, partitions: int) -> Any:
    entry = error_entry(version, name, uuid.uuid4(), ErrorCode.none)
    return dataclasses.replace(
        entry,
        topic_authorized_operations=3576,
        partitions=tuple(
            partition_entry(
                version, PartitionState(index, ErrorCode.none, index % 3, 7, (0, 1, 2), (0, 1), (2,))
            )
            for index in range(partitions)
        ),
    )


def body(version: int) -> Any:
    return metadata_answer(version, [BrokerEndpoint(1, "broker-1", 9092, "a")], "cluster", 1, 3968, ())


@pytest.mark.parametrize("version", range(LOWEST, HIGHEST + 1))
@pytest.mark.parametrize("count", [0, 1, 2, 130])  # 130 entries: a two-byte compact array length
def test_spliced_response_equals_the_whole_encoding(version: int, count: int) -> None:
    topics = [topic(version, f"t{i}", 300 if i == 0 else i % 4) for i in range(count)]
    cache = TopicEntryCache()
    spliced = _splice_topics(version, body(version), [_encoded_topic(cache, version, t) for t in topics])
    assert spliced == _encode(version, dataclasses.replace(body(version), topics=tuple(topics)))


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
    bare = topic(version, "t", 0)
    whole = _encoded_topic(
        cache,
        version,
        dataclasses.replace(bare, partitions=tuple(partition_entry(version, s) for s in STATES)),
    )
    empty = _encoded_topic(cache, version, bare)
    hand = [_encoded_partition(version, state) for state in STATES]
    tail = (4 if version >= 8 else 0) + (1 if version >= 9 else 0)
    length = 1 if version >= 9 else 4
    assert whole[: len(empty) - tail - length] == empty[: len(empty) - tail - length]
    assert whole[len(empty) - tail : len(whole) - tail] == b"".join(hand)
