"""KIP-848 groups over raw requests: OffsetCommit v9 / OffsetFetch v9 member epoch checks, regex subscriptions."""

from __future__ import annotations

import datetime
import time
import uuid
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kio.schema.consumer_group_heartbeat.v1.request import ConsumerGroupHeartbeatRequest, TopicPartitions
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


HEARTBEAT_MS = 500


@pytest.fixture
def regex_broker(broker_factory):
    return broker_factory(properties={"group.consumer.heartbeat.interval.ms": str(HEARTBEAT_MS)})


class WireMember:
    """A consumer-protocol member driven by hand: it heartbeats and owns what it was last given."""

    def __init__(self, wire: WireClient, group: str, **subscription: Any) -> None:
        self.wire, self.group = wire, group
        answer = join_consumer_group(wire, group, subscription.get("topics"), regex=subscription.get("regex"))
        assert answer.error_code == ErrorCode.none, answer
        self.member_id, self.epoch = answer.member_id, int(answer.member_epoch)
        self.owned: dict[uuid.UUID, tuple[int, ...]] = {}
        self._take(answer)

    def _take(self, answer: Any) -> None:
        if answer.assignment is not None:
            self.owned = {t.topic_id: tuple(t.partitions) for t in answer.assignment.topic_partitions}

    def heartbeat(self) -> None:
        answer = self.wire.request(
            ConsumerGroupHeartbeatRequest(
                group_id=self.group,
                member_id=self.member_id,
                member_epoch=i32(self.epoch),
                instance_id=None,
                rack_id=None,
                rebalance_timeout=datetime.timedelta(milliseconds=-1),
                subscribed_topic_names=None,
                subscribed_topic_regex=None,
                server_assignor=None,
                topic_partitions=tuple(
                    TopicPartitions(topic_id=t, partitions=tuple(i32(p) for p in ps))
                    for t, ps in self.owned.items()
                ),
            )
        )
        assert answer.error_code == ErrorCode.none, answer
        self.epoch = int(answer.member_epoch)
        self._take(answer)

    @property
    def partitions(self) -> int:
        return sum(len(ps) for ps in self.owned.values())


def test_members_subscribed_to_a_regex_before_its_topics_exist_share_them_once_created(regex_broker) -> None:
    group, prefix = f"g-{uuid.uuid4().hex[:8]}", f"rx{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": regex_broker.bootstrap})
    with WireClient(regex_broker.bootstrap) as w1, WireClient(regex_broker.bootstrap) as w2:
        members = [WireMember(w, group, regex=f"{prefix}-.*") for w in (w1, w2)]
        assert [m.partitions for m in members] == [0, 0]
        for name in (f"{prefix}-a", f"{prefix}-b"):
            admin.create_topics([NewTopic(name, 2, 1)])[name].result(10)
        rounds = 0
        while [m.partitions for m in members] != [2, 2]:
            rounds += 1
            # Before the fix the first member took all four and the second none, for ever.
            assert rounds <= 3, [m.partitions for m in members]
            time.sleep(HEARTBEAT_MS / 1000)
            for member in members:
                member.heartbeat()


def test_named_topics_are_assigned_before_the_regex_of_the_same_subscription(regex_broker) -> None:
    group, prefix = f"g-{uuid.uuid4().hex[:8]}", f"rx{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": regex_broker.bootstrap})
    for name, partitions in ((f"{prefix}-a", 2), (f"named-{prefix}", 1)):
        admin.create_topics([NewTopic(name, partitions, 1)])[name].result(10)
    with WireClient(regex_broker.bootstrap) as wire:
        # As Kafka: the join gets the named topic; the regex, resolved in the background, comes next.
        member = WireMember(wire, group, topics=(f"named-{prefix}",), regex=f"{prefix}-.*")
        assert member.partitions == 1
        for _ in range(10):
            time.sleep(0.05)
            member.heartbeat()
            if member.partitions == 3:
                break
        assert member.partitions == 3
