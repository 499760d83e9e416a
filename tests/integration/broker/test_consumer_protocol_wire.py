"""KIP-848 groups over raw requests: OffsetCommit v9 / OffsetFetch v9 member epoch checks."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kio.schema.errors import ErrorCode
from kio.schema.offset_commit.v9 import request as commit_v9
from kio.schema.offset_fetch.v9 import request as fetch_v9
from kio.static.primitive import i32, i64

from tests.integration.broker.kafka_wire import WireClient, join_consumer_group

pytestmark = pytest.mark.integration


def heartbeat_join(wire: WireClient, group: str, topic: str) -> tuple[str, int]:
    answer = join_consumer_group(wire, group, (topic,))
    assert answer.error_code == ErrorCode.none, answer
    return answer.member_id, int(answer.member_epoch)


def commit(wire: WireClient, group: str, topic: str, member_id: str, epoch: int, offset: int) -> int:
    answer = wire.request(
        commit_v9.OffsetCommitRequest(
            group_id=group,
            generation_id_or_member_epoch=i32(epoch),
            member_id=member_id,
            group_instance_id=None,
            topics=(
                commit_v9.OffsetCommitRequestTopic(
                    name=topic,
                    partitions=(
                        commit_v9.OffsetCommitRequestPartition(
                            partition_index=i32(0),
                            committed_offset=i64(offset),
                            committed_leader_epoch=i32(-1),
                            committed_metadata=None,
                        ),
                    ),
                ),
            ),
        )
    )
    return int(answer.topics[0].partitions[0].error_code)


def fetch(wire: WireClient, group: str, topic: str, member_id: str | None, epoch: int) -> tuple[int, int]:
    """(the group's error code, the committed offset of partition 0 or -1)."""
    answer = wire.request(
        fetch_v9.OffsetFetchRequest(
            groups=(
                fetch_v9.OffsetFetchRequestGroup(
                    group_id=group,
                    member_id=member_id,
                    member_epoch=i32(epoch),
                    topics=(fetch_v9.OffsetFetchRequestTopics(name=topic, partition_indexes=(i32(0),)),),
                ),
            ),
            require_stable=False,
        )
    )
    group_answer = answer.groups[0]
    offset = group_answer.topics[0].partitions[0].committed_offset if group_answer.topics else -1
    return int(group_answer.error_code), int(offset)


def test_offset_fetch_v9_and_offset_commit_v9_check_the_member_epoch(broker) -> None:
    topic, group = f"t-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)
    with WireClient(broker.bootstrap) as wire:
        member_id, epoch = heartbeat_join(wire, group, topic)
        assert epoch > 0
        assert commit(wire, group, topic, member_id, epoch + 1, 5) == ErrorCode.stale_member_epoch
        assert commit(wire, group, topic, "someone-else", epoch, 5) == ErrorCode.unknown_member_id
        assert commit(wire, group, topic, member_id, epoch, 5) == ErrorCode.none

        assert fetch(wire, group, topic, member_id, epoch) == (ErrorCode.none, 5)
        assert fetch(wire, group, topic, member_id, epoch - 1) == (ErrorCode.stale_member_epoch, -1)
        assert fetch(wire, group, topic, "someone-else", epoch) == (ErrorCode.unknown_member_id, -1)
        # A caller that names no member (admin tools) reads the offsets.
        assert fetch(wire, group, topic, None, -1) == (ErrorCode.none, 5)
