"""A consumer-protocol member changing its regex subscription, asked of our broker and of Apache Kafka alike.

The sequences are those of librdkafka's tests 0045 `resubscribe_with_regex` and 0033 `regex_subscribe`, sent as
librdkafka sends them (ConsumerGroupHeartbeat with the topic names and one combined regex, `""` for none; a leave
and a rejoin with the same member id on unsubscribe/subscribe). Each step records the assignments the member goes
through until it owns what its new subscription matches: no topic of an earlier subscription may linger, a regex
new to the group comes one heartbeat after the named topics of the same subscription, and it comes within a few
heartbeats.
"""

from __future__ import annotations

import datetime
import time
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kio.schema.consumer_group_heartbeat.v1.request import ConsumerGroupHeartbeatRequest, TopicPartitions
from kio.schema.errors import ErrorCode
from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.types import TopicName
from kio.static.primitive import i32

from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration

BEAT_SPACING_S = 0.1
# How many heartbeats a step may take to reach its assignment: Apache Kafka resolves a new regex in the
# background within milliseconds; a loaded machine gets some slack.
MAX_BEATS = 30

Assignment = dict[str, int]  # topic name -> number of partitions owned
# A coordinator just elected (a fresh Apache Kafka) answers these a moment: clients retry.
RETRIABLE = {
    ErrorCode.coordinator_load_in_progress,
    ErrorCode.coordinator_not_available,
    ErrorCode.not_coordinator,
}


@pytest.fixture(
    params=[pytest.param("streamhub"), pytest.param("apache-kafka", marks=pytest.mark.apache_kafka)]
)
def bootstrap(request: pytest.FixtureRequest) -> str:
    node = request.getfixturevalue("broker" if request.param == "streamhub" else "apache_kafka")
    return node.bootstrap


def create_topics(bootstrap: str, partitions: dict[str, int]) -> dict[uuid.UUID, str]:
    """Creates the topics; their ids once the group coordinator knows them all."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics(
        [NewTopic(name, count, 1) for name, count in partitions.items()]
    ).values():
        future.result(30)
    request = MetadataRequest(
        topics=tuple(MetadataRequestTopic(name=TopicName(name), topic_id=None) for name in partitions),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    deadline = time.monotonic() + 30
    with WireClient(bootstrap) as wire:
        while True:
            topics = wire.request(request).topics
            if all(topic.error_code == ErrorCode.none for topic in topics):
                break
            assert time.monotonic() < deadline, topics
            time.sleep(0.1)
        names = {topic.topic_id: str(topic.name) for topic in topics}
        # Apache Kafka's group coordinator sees new topics a moment after Metadata does, and a regex resolved
        # without them waits 10 s for its next refresh: a member subscribed to their names gets them only once
        # the coordinator knows them.
        probe = Member(wire, f"probe-{uuid.uuid4().hex}", names)
        probe.subscribe(tuple(partitions), "", partitions)
        probe.leave()
    return names


class Member:
    """A consumer-protocol member that heartbeats as librdkafka does and owns what it was last given."""

    def __init__(self, wire: WireClient, group: str, names: dict[uuid.UUID, str]) -> None:
        self.wire, self.group, self.names = wire, group, names
        self.member_id = str(uuid.uuid4())  # chosen by the client and kept across rejoins (KIP-1082)
        self.epoch = 0
        self.owned: dict[uuid.UUID, tuple[int, ...]] = {}
        self._await_coordinator()

    def _await_coordinator(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            (coordinator,) = self.wire.request(
                FindCoordinatorRequest(coordinator_keys=(self.group,))
            ).coordinators
            if coordinator.error_code == ErrorCode.none:
                return
            assert time.monotonic() < deadline, coordinator
            time.sleep(0.2)

    @property
    def assignment(self) -> Assignment:
        return {
            self.names[topic_id]: len(partitions) for topic_id, partitions in self.owned.items() if partitions
        }

    def heartbeat(
        self, subscription: tuple[tuple[str, ...], str] | None = None, epoch: int | None = None
    ) -> Any:
        """One heartbeat: `subscription` (topic names, regex) only when it changes, as librdkafka sends it."""
        member_epoch = self.epoch if epoch is None else epoch
        topics, regex = subscription if subscription is not None else (None, None)
        for _ in range(50):
            answer = self.wire.request(
                ConsumerGroupHeartbeatRequest(
                    group_id=self.group,
                    member_id=self.member_id,
                    member_epoch=i32(member_epoch),
                    instance_id=None,
                    rack_id=None,
                    rebalance_timeout=datetime.timedelta(milliseconds=30_000 if member_epoch == 0 else -1),
                    subscribed_topic_names=topics,
                    subscribed_topic_regex=regex,
                    server_assignor=None,
                    topic_partitions=tuple(
                        TopicPartitions(topic_id=t, partitions=tuple(i32(p) for p in ps))
                        for t, ps in self.owned.items()
                    ),
                )
            )
            if answer.error_code not in RETRIABLE:
                break
            time.sleep(0.1)
        assert answer.error_code == ErrorCode.none, answer
        self.epoch = int(answer.member_epoch)
        if answer.assignment is not None:
            self.owned = {t.topic_id: tuple(t.partitions) for t in answer.assignment.topic_partitions}
        return answer

    def subscribe(self, topics: tuple[str, ...], regex: str, expected: Assignment) -> list[Assignment]:
        """Sends the new subscription, then heartbeats until the member owns `expected`; the assignments
        it went through, starting with the one the subscribing heartbeat answered."""
        self.heartbeat((topics, regex))
        seen = [self.assignment]
        for _ in range(MAX_BEATS):
            if self.assignment == expected:
                return seen
            time.sleep(BEAT_SPACING_S)
            self.heartbeat()
            if self.assignment != seen[-1]:
                seen.append(self.assignment)
        raise AssertionError(f"never reached {expected}: went through {seen}")

    def leave(self) -> None:
        self.heartbeat(epoch=-1)
        self.epoch, self.owned = 0, {}


def test_resubscribing_as_librdkafka_0045_puts_the_named_topic_before_the_regex(bootstrap: str) -> None:
    prefix = f"rx{uuid.uuid4().hex[:8]}_"
    regex1, regex2, named = f"{prefix}topic_regex1", f"{prefix}topic_regex2", f"{prefix}topic_a"
    names = create_topics(bootstrap, {regex1: 4, regex2: 4, named: 2})
    regex = f"^{prefix}topic_regex.*"
    with WireClient(bootstrap) as wire:
        member = Member(wire, f"g-{prefix}", names)
        assert member.subscribe((regex1,), "", {regex1: 4}) == [{regex1: 4}]
        member.leave()
        assert member.subscribe((regex2,), "", {regex2: 4}) == [{regex2: 4}]
        member.leave()
        both = {regex1: 4, regex2: 4}
        assert member.subscribe((), f"({regex})", both) == [{}, both]
        member.leave()
        # The resolution left with the regex's last member: subscribed again, it is new and comes after the
        # named topic (what 0045 expects of a KIP-848 broker).
        assert member.subscribe((named,), f"({regex})", {named: 2, **both}) == [
            {named: 2},
            {named: 2, **both},
        ]


def test_a_member_changing_its_regex_moves_to_the_new_topics_and_keeps_none_of_the_old(
    bootstrap: str,
) -> None:
    prefix = f"rx{uuid.uuid4().hex[:8]}_"
    a1, a2, b1 = f"{prefix}A1", f"{prefix}A2", f"{prefix}B1"
    names = create_topics(bootstrap, {a1: 2, a2: 2, b1: 3})
    with WireClient(bootstrap) as wire:
        member = Member(wire, f"g-{prefix}", names)
        assert member.subscribe((), f"^{prefix}A.*", {a1: 2, a2: 2}) == [{}, {a1: 2, a2: 2}]
        # Without leaving: regex A to regex B, then to a topic name, then back to regex A. Each time the old
        # topics are revoked first (the new regex is not resolved yet), then the new ones come.
        assert member.subscribe((), f"^{prefix}B.*", {b1: 3}) == [{}, {b1: 3}]
        assert member.subscribe((a1,), "", {a1: 2}) == [{}, {a1: 2}]
        assert member.subscribe((), f"^{prefix}A.*", {a1: 2, a2: 2}) == [{}, {a1: 2, a2: 2}]


def test_rejoining_with_other_regexes_as_librdkafka_0033_matches_only_the_new_ones(bootstrap: str) -> None:
    prefix = f"rx{uuid.uuid4().hex[:8]}_"
    uno, dup, toothpic = f"{prefix}TOPIC_0001_UNO", f"{prefix}topic_0002_dup", f"{prefix}TOOTHPIC_0003_3"
    names = create_topics(bootstrap, {uno: 2, dup: 2, toothpic: 2})
    with WireClient(bootstrap) as wire:
        member = Member(wire, f"g-{prefix}", names)
        steps = [
            (f"^{prefix}.*", {uno: 2, dup: 2, toothpic: 2}),
            (f"^{prefix}[tToOpPiIcC]+_0+[12]_[^_]+", {uno: 2, dup: 2}),
            (f"^{prefix}TOOTHPIC_000._.", {toothpic: 2}),
            # librdkafka joins several regexes of one subscription into one: "(r1)|(r2)".
            (f"(^{prefix}to.*)|(^{prefix}TOO.*)", {dup: 2, toothpic: 2}),
        ]
        for regex, expected in steps:
            assert member.subscribe((), regex, expected) == [{}, expected], regex
            member.leave()


def test_a_member_whose_leave_was_lost_rejoins_with_its_regex_still_resolved(bootstrap: str) -> None:
    """What librdkafka 0045 met when the group's coordinator moved between its unsubscribe and its next subscribe
    (the leave answered NOT_COORDINATOR): the member never left, its regex stayed resolved, and its rejoin (epoch 0,
    same member id, a topic name added) is given everything at once, by Apache Kafka as by us."""
    prefix = f"rx{uuid.uuid4().hex[:8]}_"
    regex1, regex2, named = f"{prefix}topic_regex1", f"{prefix}topic_regex2", f"{prefix}topic_a"
    names = create_topics(bootstrap, {regex1: 4, regex2: 4, named: 2})
    regex = f"(^{prefix}topic_regex.*)"
    with WireClient(bootstrap) as wire:
        member = Member(wire, f"g-{prefix}", names)
        both = {regex1: 4, regex2: 4}
        assert member.subscribe((), regex, both) == [{}, both]
        member.epoch, member.owned = 0, {}  # the client thinks it left
        assert member.subscribe((named,), regex, {named: 2, **both}) == [{named: 2, **both}]


# librdkafka itself, as 0045 drives it. Apache Kafka's heartbeat interval is 5 s at least (its minimum), so each
# regex there waits a heartbeat of 5 s: its side is left out of CI's default run (-m apache_kafka runs it).
FAST_HEARTBEAT_MS = 500


@pytest.fixture(
    params=[
        pytest.param("streamhub"),
        pytest.param("apache-kafka", marks=[pytest.mark.apache_kafka, pytest.mark.apache_kafka_slow]),
    ]
)
def client_broker(request: pytest.FixtureRequest) -> tuple[str, int]:
    """(bootstrap, heartbeat interval in ms)."""
    if request.param == "apache-kafka":
        return request.getfixturevalue("apache_kafka").bootstrap, 5000
    factory = request.getfixturevalue("broker_factory")
    node = factory(properties={"group.consumer.heartbeat.interval.ms": str(FAST_HEARTBEAT_MS)})
    return node.bootstrap, FAST_HEARTBEAT_MS


def test_librdkafka_resubscribing_with_a_regex_gets_the_named_topic_first(
    client_broker: tuple[str, int],
) -> None:
    bootstrap, heartbeat_ms = client_broker
    prefix = f"rx{uuid.uuid4().hex[:8]}_"
    regex1, regex2, named = f"{prefix}topic_regex1", f"{prefix}topic_regex2", f"{prefix}topic_a"
    create_topics(bootstrap, {regex1: 4, regex2: 4, named: 2})
    events: list[tuple[str, Assignment]] = []

    def counted(partitions: list[TopicPartition]) -> Assignment:
        counts: Assignment = {}
        for partition in partitions:
            counts[partition.topic] = counts.get(partition.topic, 0) + 1
        return counts

    def on_assign(_consumer: Consumer, partitions: list[TopicPartition]) -> None:
        events.append(("assign", counted(partitions)))

    def on_revoke(_consumer: Consumer, partitions: list[TopicPartition]) -> None:
        events.append(("revoke", counted(partitions)))

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"g-{prefix}", "group.protocol": "consumer"}
    )

    def await_events(expected: list[tuple[str, Assignment]]) -> float:
        """Polls until the rebalance events are `expected`; how long it took."""
        started = time.monotonic()
        while len(events) < len(expected) and time.monotonic() < started + 30:
            consumer.poll(0.05)
        assert events == expected
        events.clear()
        return time.monotonic() - started

    try:
        for topic in (regex1, regex2):
            consumer.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
            await_events([("assign", {topic: 4})])
            consumer.unsubscribe()
            await_events([("revoke", {topic: 4})])
        both = {regex1: 4, regex2: 4}
        consumer.subscribe([f"^{prefix}topic_regex.*"], on_assign=on_assign, on_revoke=on_revoke)
        waited = await_events([("assign", both)])
        # A new regex is resolved in the background: the heartbeat after the join brings its topics.
        assert waited < 4 * heartbeat_ms / 1000, waited
        consumer.unsubscribe()
        await_events([("revoke", both)])
        consumer.subscribe([f"^{prefix}topic_regex.*", named], on_assign=on_assign, on_revoke=on_revoke)
        await_events([("assign", {named: 2}), ("assign", both)])
    finally:
        consumer.close()
