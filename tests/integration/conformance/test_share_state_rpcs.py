"""The share coordinator's RPCs (KIP-932: Initialize, Read, Write, Delete ShareGroupState and
ReadShareGroupStateSummary) against the session's Apache Kafka: the same steps sent to both, the answers
compared field by field (topic ids aside: each broker picks its own).

Kafka's brokers send these to each other; Kafka answers them on a client listener too, to a principal with
CLUSTER_ACTION (the super user here).
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import TopicCollection
from confluent_kafka.admin import AdminClient, NewTopic
from kio.schema.delete_share_group_state.v0 import request as delete
from kio.schema.find_coordinator.v6.request import FindCoordinatorRequest
from kio.schema.initialize_share_group_state.v0 import request as initialize
from kio.schema.read_share_group_state.v0 import request as read
from kio.schema.read_share_group_state_summary.v1 import request as summary
from kio.schema.write_share_group_state.v1 import request as write
from kio.static.primitive import i8, i16, i32, i64

from broker.share.state_records import share_coordinator_key
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.conformance.normalization import to_tree

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

SHARE_KEY_TYPE = 2
Batch = tuple[int, int, int, int]


def _topic_uuid(topic_id: object) -> uuid.UUID:
    """confluent-kafka prints a topic id as Kafka does (URL-safe base64, unpadded)."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(f"{topic_id}=="))


class _Coordinator:
    """One broker's share coordinator for one topic partition of one group."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
        self.client = WireClient(bootstrap)
        self.group = group
        self.topic_id = self._topic_id(admin, topic)
        # FindCoordinator with the share key type makes Kafka create `__share_group_state`; both answer once
        # its partition has a leader.
        deadline = time.monotonic() + 60
        while True:
            found = self.client.request(
                FindCoordinatorRequest(
                    key_type=i8(SHARE_KEY_TYPE),
                    coordinator_keys=(share_coordinator_key(group, self.topic_id, 0),),
                )
            )
            if int(found.coordinators[0].error_code) == 0:
                break
            assert time.monotonic() < deadline, found
            time.sleep(0.2)
        self.found = found

    @staticmethod
    def _topic_id(admin: AdminClient, topic: str) -> uuid.UUID:
        described = admin.describe_topics(TopicCollection([topic]))[topic].result(30)
        return _topic_uuid(described.topic_id)

    def ask(self, body: Callable[[uuid.UUID, str], Any], retry_until_ready: bool = True) -> Any:
        """The answer's tree with the topic id replaced; retried while the coordinator loads."""
        deadline = time.monotonic() + 30
        while True:
            tree = to_tree(self.client.request(body(self.topic_id, self.group)))
            codes = [p["error_code"] for r in tree["results"] for p in r["partitions"]]
            if not retry_until_ready or not set(codes) & {14, 15, 16} or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        for result in tree["results"]:
            if result["topic_id"] == str(self.topic_id) or result["topic_id"] == self.topic_id:
                result["topic_id"] = "<topic>"
        return tree


def _read(leader_epoch: int, partition: int = 0) -> Callable[[uuid.UUID, str], Any]:
    return lambda topic_id, group: read.ReadShareGroupStateRequest(
        group_id=group,
        topics=(
            read.ReadStateData(
                topic_id=topic_id,
                partitions=(read.PartitionData(partition=i32(partition), leader_epoch=i32(leader_epoch)),),
            ),
        ),
    )


def _summary() -> Callable[[uuid.UUID, str], Any]:
    return lambda topic_id, group: summary.ReadShareGroupStateSummaryRequest(
        group_id=group,
        topics=(
            summary.ReadStateSummaryData(
                topic_id=topic_id, partitions=(summary.PartitionData(partition=i32(0), leader_epoch=i32(-1)),)
            ),
        ),
    )


def _initialize(state_epoch: int, start_offset: int) -> Callable[[uuid.UUID, str], Any]:
    return lambda topic_id, group: initialize.InitializeShareGroupStateRequest(
        group_id=group,
        topics=(
            initialize.InitializeStateData(
                topic_id=topic_id,
                partitions=(
                    initialize.PartitionData(
                        partition=i32(0), state_epoch=i32(state_epoch), start_offset=i64(start_offset)
                    ),
                ),
            ),
        ),
    )


def _write(
    state_epoch: int, leader_epoch: int, start_offset: int, batches: list[Batch]
) -> Callable[[uuid.UUID, str], Any]:
    return lambda topic_id, group: write.WriteShareGroupStateRequest(
        group_id=group,
        topics=(
            write.WriteStateData(
                topic_id=topic_id,
                partitions=(
                    write.PartitionData(
                        partition=i32(0),
                        state_epoch=i32(state_epoch),
                        leader_epoch=i32(leader_epoch),
                        start_offset=i64(start_offset),
                        state_batches=tuple(
                            write.StateBatch(
                                first_offset=i64(first),
                                last_offset=i64(last),
                                delivery_state=i8(state),
                                delivery_count=i16(count),
                            )
                            for first, last, state, count in batches
                        ),
                    ),
                ),
            ),
        ),
    )


def _delete() -> Callable[[uuid.UUID, str], Any]:
    return lambda topic_id, group: delete.DeleteShareGroupStateRequest(
        group_id=group,
        topics=(
            delete.DeleteStateData(topic_id=topic_id, partitions=(delete.PartitionData(partition=i32(0)),)),
        ),
    )


STEPS: list[tuple[str, Callable[[uuid.UUID, str], Any]]] = [
    ("read before any state", _read(0)),
    ("summary before any state", _summary()),
    ("write before initialize", _write(0, 0, 3, [(3, 4, 0, 1)])),
    ("read after the first write", _read(0)),
    ("initialize", _initialize(1, 5)),
    ("read after initialize", _read(1)),
    ("write batches", _write(1, 1, 5, [(5, 7, 0, 1), (8, 9, 2, 1), (10, 12, 4, 3)])),
    ("write over part of them, keeping the start offset", _write(1, 1, -1, [(6, 6, 2, 2), (9, 11, 0, 2)])),
    ("read merged", _read(1)),
    ("write moving the start offset", _write(1, 2, 7, [(12, 13, 2, 1)])),
    ("read pruned", _read(2)),
    ("summary", _summary()),
    ("write from an older leader epoch", _write(1, 1, -1, [(7, 7, 2, 1)])),
    ("read from an older leader epoch", _read(1)),
    ("write from an older state epoch", _write(0, 2, -1, [(7, 7, 2, 1)])),
    ("initialize with an older state epoch", _initialize(0, 0)),
    ("read a partition the topic has not", _read(2, partition=3)),
    ("delete", _delete()),
    ("read after delete", _read(2)),
    ("summary after delete", _summary()),
]


def test_share_state_rpcs_answer_as_kafkas_share_coordinator(apache_kafka, conformance_broker) -> None:
    group, topic = f"sg-{uuid.uuid4().hex[:8]}", f"state-{uuid.uuid4().hex[:8]}"
    kafka = _Coordinator(apache_kafka.bootstrap, group, topic)
    ours = _Coordinator(conformance_broker.bootstrap, group, topic)
    try:
        differences = {}
        for name, step in STEPS:
            theirs, mine = kafka.ask(step), ours.ask(step)
            if theirs != mine:
                differences[name] = {"kafka": theirs, "ours": mine}
        assert not differences, json.dumps(differences, indent=1, default=str)
    finally:
        kafka.client.close()
        ours.client.close()
