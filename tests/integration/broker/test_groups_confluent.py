"""Consumer groups driven by confluent-kafka (librdkafka 2.16) against a real broker process."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterable, Iterator

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

pytestmark = pytest.mark.integration


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)


def produce(bootstrap: str, topic: str, count: int, partitions: int = 1) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        producer.produce(topic, value=f"m{i}".encode(), partition=i % partitions)
    assert producer.flush(10) == 0


def consumer(bootstrap: str, group: str, **extra: object) -> Consumer:
    """A consumer the test closes itself (use `open_consumer` to have teardown close it)."""
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 200,
            **extra,
        }
    )


def consumers_closed_at_teardown() -> Iterator[Callable[..., Consumer]]:
    """Makes consumers and closes whichever ones a test leaves open, even when it fails."""
    made: list[Consumer] = []

    def make(bootstrap: str, group: str, **extra: object) -> Consumer:
        made.append(consumer(bootstrap, group, **extra))
        return made[-1]

    yield make
    for member in made:
        with contextlib.suppress(RuntimeError):  # already closed
            member.close()


@pytest.fixture
def open_consumer() -> Iterator[Callable[..., Consumer]]:
    yield from consumers_closed_at_teardown()


def poll_until(consumers: Iterable[Consumer], done: Callable[[], bool], timeout: float = 20.0) -> None:
    """Polls every consumer in turn (rebalances only progress inside poll) until `done()`."""
    members = list(consumers)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for member in members:
            message = member.poll(0.05)
            if message is not None and message.error() is not None:
                raise AssertionError(message.error())
        if done():
            return
    raise AssertionError("condition not reached in time")


def assigned(member: Consumer) -> set[int]:
    return {tp.partition for tp in member.assignment()}


def balanced(members: list[Consumer], partitions: int) -> Callable[[], bool]:
    def check() -> bool:
        sets = [assigned(m) for m in members]
        union = set().union(*sets)
        return all(sets) and sum(len(s) for s in sets) == partitions and union == set(range(partitions))

    return check


def test_a_group_of_three_rebalances_as_members_join_and_leave(broker, open_consumer) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 6)
    first = open_consumer(broker.bootstrap, group)
    first.subscribe([topic])
    poll_until([first], balanced([first], 6))

    second, third = open_consumer(broker.bootstrap, group), open_consumer(broker.bootstrap, group)
    second.subscribe([topic])
    third.subscribe([topic])
    members = [first, second, third]
    poll_until(members, balanced(members, 6))
    assert sorted(len(assigned(m)) for m in members) == [2, 2, 2]

    third.close()  # LeaveGroup: the others take its partitions
    poll_until([first, second], balanced([first, second], 6))
    assert sorted(len(assigned(m)) for m in (first, second)) == [3, 3]
    first.close()
    second.close()


def test_a_cooperative_sticky_group_rebalances_incrementally(broker, open_consumer) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 4)
    settings = {"partition.assignment.strategy": "cooperative-sticky"}
    first = open_consumer(broker.bootstrap, group, **settings)
    first.subscribe([topic])
    poll_until([first], balanced([first], 4))
    second = open_consumer(broker.bootstrap, group, **settings)
    second.subscribe([topic])
    poll_until([first, second], balanced([first, second], 4))
    assert sorted(len(assigned(m)) for m in (first, second)) == [2, 2]
    first.close()
    second.close()


def consume_values(member: Consumer, count: int, timeout: float = 20.0) -> list[bytes]:
    values: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(values) < count and time.monotonic() < deadline:
        message = member.poll(0.1)
        if message is None:
            continue
        assert message.error() is None, message.error()
        values.append(message.value())
    assert len(values) == count, values
    return values


def test_a_consumer_resumes_from_committed_offsets_after_a_broker_restart(
    fresh_broker, open_consumer
) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(fresh_broker.bootstrap, topic, 1)
    produce(fresh_broker.bootstrap, topic, 10)
    member = open_consumer(fresh_broker.bootstrap, group, **{"max.poll.interval.ms": 10000})
    member.subscribe([topic])
    assert consume_values(member, 4) == [b"m0", b"m1", b"m2", b"m3"]
    member.commit(asynchronous=False)
    member.close()

    fresh_broker.restart()

    again = open_consumer(fresh_broker.bootstrap, group)
    committed = again.committed([TopicPartition(topic, 0)], timeout=10)
    assert committed[0].offset == 4
    again.subscribe([topic])
    assert consume_values(again, 6) == [f"m{i}".encode() for i in range(4, 10)]
    again.close()


def test_a_committed_offset_survives_a_hard_kill(fresh_broker, open_consumer) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(fresh_broker.bootstrap, topic, 2)
    member = open_consumer(fresh_broker.bootstrap, group)
    member.commit(offsets=[TopicPartition(topic, 0, 17), TopicPartition(topic, 1, 3)], asynchronous=False)
    member.close()
    fresh_broker.restart(hard=True)
    reader = open_consumer(fresh_broker.bootstrap, group)
    offsets = reader.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)], timeout=10)
    assert [tp.offset for tp in offsets] == [17, 3]
    reader.close()


def test_a_static_member_restarting_keeps_its_partitions_without_a_rebalance(broker, open_consumer) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 2)
    settings = {"group.instance.id": "pod-a", "session.timeout.ms": 10000}
    first = open_consumer(broker.bootstrap, group, **settings)
    first.subscribe([topic])
    poll_until([first], balanced([first], 2))
    first.close()  # a static member's close does not leave the group
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    description = admin.describe_consumer_groups([group])[group].result(10)
    assert [m.group_instance_id for m in description.members] == ["pod-a"]

    again = open_consumer(broker.bootstrap, group, **settings)
    again.subscribe([topic])
    poll_until([again], balanced([again], 2))
    described = admin.describe_consumer_groups([group])[group].result(10)
    assert len(described.members) == 1
    assert described.members[0].member_id != description.members[0].member_id
    again.close()


def test_committing_for_an_unknown_topic_is_refused(broker, open_consumer) -> None:
    member = open_consumer(broker.bootstrap, unique("g"))
    with pytest.raises(KafkaException) as failure:
        member.commit(offsets=[TopicPartition(unique("missing"), 0, 1)], asynchronous=False)
    assert "UNKNOWN_TOPIC_OR_PART" in str(failure.value)
    member.close()
