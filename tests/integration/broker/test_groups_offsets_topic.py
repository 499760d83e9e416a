"""`__consumer_offsets` read back with a plain consumer and decoded by a decoder written here,
straight from Kafka's schemas (OffsetCommitKey/Value.json, GroupMetadataKey/Value.json and the
consumer protocol's ConsumerProtocolSubscription/Assignment.json). It shares no code with the
broker, so tools that read this topic on Apache Kafka can read ours."""

from __future__ import annotations

import struct
import time
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from .test_groups_confluent import balanced, consumer, create_topic, poll_until, unique

pytestmark = pytest.mark.integration

OFFSETS_TOPIC_PARTITIONS = 3  # offsets.topic.num.partitions in the test fixture


class Cursor:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, fmt: str) -> Any:
        (value,) = struct.unpack_from(fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return value

    def string(self) -> str | None:
        length = self.take(">h")
        if length == -1:
            return None
        text = self.data[self.at : self.at + length].decode()
        self.at += length
        return text

    def blob(self) -> bytes:
        length = self.take(">i")
        blob = self.data[self.at : self.at + length]
        self.at += length
        return blob

    def finished(self) -> bool:
        return self.at == len(self.data)


def decode_key(data: bytes) -> tuple[str, tuple]:
    cursor = Cursor(data)
    version = cursor.take(">h")
    if version in (0, 1):
        key = ("offset", (cursor.string(), cursor.string(), cursor.take(">i")))
    elif version == 2:
        key = ("group", (cursor.string(),))
    else:
        raise AssertionError(f"unexpected key version {version}")
    assert cursor.finished()
    return key


def decode_offset_value(data: bytes) -> dict[str, Any]:
    cursor = Cursor(data)
    version = cursor.take(">h")
    assert version == 3, "Kafka 3.x writes OffsetCommitValue v3 for commits without expiry"
    value = {
        "offset": cursor.take(">q"),
        "leader_epoch": cursor.take(">i"),
        "metadata": cursor.string(),
        "commit_timestamp": cursor.take(">q"),
    }
    assert cursor.finished()
    return value


def decode_group_value(data: bytes) -> dict[str, Any]:
    cursor = Cursor(data)
    version = cursor.take(">h")
    assert version == 3, "Kafka 3.x writes GroupMetadataValue v3"
    value: dict[str, Any] = {
        "protocol_type": cursor.string(),
        "generation": cursor.take(">i"),
        "protocol": cursor.string(),
        "leader": cursor.string(),
        "current_state_timestamp": cursor.take(">q"),
        "members": [],
    }
    for _ in range(cursor.take(">i")):
        value["members"].append(
            {
                "member_id": cursor.string(),
                "group_instance_id": cursor.string(),
                "client_id": cursor.string(),
                "client_host": cursor.string(),
                "rebalance_timeout": cursor.take(">i"),
                "session_timeout": cursor.take(">i"),
                "subscription": cursor.blob(),
                "assignment": cursor.blob(),
            }
        )
    assert cursor.finished()
    return value


def subscribed_topics(subscription: bytes) -> list[str]:
    cursor = Cursor(subscription)
    cursor.take(">h")  # version
    return [cursor.string() for _ in range(cursor.take(">i"))]


def assigned_partitions(assignment: bytes) -> dict[str, list[int]]:
    cursor = Cursor(assignment)
    cursor.take(">h")  # version
    assigned = {}
    for _ in range(cursor.take(">i")):
        topic = cursor.string()
        assigned[topic] = [cursor.take(">i") for _ in range(cursor.take(">i"))]
    return assigned


def java_hash_partition(group: str, partitions: int) -> int:
    """Utils.abs(group.hashCode()) % partitions, with Java's int arithmetic spelled out."""
    h = 0
    units = group.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (h * 31 + int.from_bytes(units[i : i + 2], "big")) % 2**32
    signed = h - 2**32 if h >= 2**31 else h
    return (0 if signed == -(2**31) else abs(signed)) % partitions


def read_offsets_topic(bootstrap: str) -> list[tuple[int, bytes, bytes | None]]:
    reader = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique("reader"), "enable.auto.commit": False}
    )
    reader.assign(
        [TopicPartition("__consumer_offsets", p, OFFSET_BEGINNING) for p in range(OFFSETS_TOPIC_PARTITIONS)]
    )
    records = []
    idle_since = time.monotonic()
    try:
        while time.monotonic() - idle_since < 2:
            message = reader.poll(0.2)
            if message is None or message.error() is not None:
                continue
            records.append((message.partition(), message.key(), message.value()))
            idle_since = time.monotonic()
    finally:
        reader.close()
    return records


def test_the_offsets_topic_holds_kafkas_own_record_format(fresh_broker) -> None:
    topic, group = unique("t"), unique("decode-me")
    create_topic(fresh_broker.bootstrap, topic, 2)
    member = consumer(fresh_broker.bootstrap, group, **{"client.id": "format-check"})
    member.subscribe([topic])
    poll_until([member], balanced([member], 2))
    member.commit(offsets=[TopicPartition(topic, 0, 3), TopicPartition(topic, 1, 5)], asynchronous=False)
    member_id = member.memberid()
    member.close()

    records = read_offsets_topic(fresh_broker.bootstrap)
    expected_partition = java_hash_partition(group, OFFSETS_TOPIC_PARTITIONS)
    ours = [(p, decode_key(k), v) for p, k, v in records if decode_key(k)[1][0] == group]
    assert ours, "no records for the group"
    assert {p for p, _, _ in ours} == {expected_partition}

    offsets = {
        key[1][1:]: decode_offset_value(v) for _, key, v in ours if key[0] == "offset" and v is not None
    }
    assert offsets[(topic, 0)]["offset"] == 3
    assert offsets[(topic, 1)]["offset"] == 5
    assert offsets[(topic, 1)]["leader_epoch"] == -1
    assert offsets[(topic, 1)]["commit_timestamp"] > 1_600_000_000_000

    groups = [decode_group_value(v) for _, key, v in ours if key[0] == "group" and v is not None]
    stable = [g for g in groups if g["members"]]
    assert stable, "no group metadata with members"
    last_stable = stable[-1]
    assert (last_stable["protocol_type"], last_stable["protocol"], last_stable["leader"]) == (
        "consumer",
        "range",
        member_id,
    )
    (stored,) = last_stable["members"]
    assert (stored["member_id"], stored["client_id"], stored["client_host"]) == (
        member_id,
        "format-check",
        "/127.0.0.1",
    )
    assert stored["session_timeout"] == 6000
    assert subscribed_topics(stored["subscription"]) == [topic]
    assert assigned_partitions(stored["assignment"]) == {topic: [0, 1]}
    # After the member left, the group is written again: empty, with the next generation.
    assert groups[-1]["members"] == []
    assert groups[-1]["generation"] == last_stable["generation"] + 1
    assert groups[-1]["protocol"] is None
