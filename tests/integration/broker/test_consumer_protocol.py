"""KIP-848 consumer groups (`group.protocol=consumer`) driven by confluent-kafka (librdkafka 2.16)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

pytestmark = pytest.mark.integration

PARTITIONS = 6
# A short heartbeat interval keeps the test quick: reconciliation advances one heartbeat at a time.
CONSUMER_PROTOCOL = {
    "group.consumer.heartbeat.interval.ms": "300",
    "group.consumer.session.timeout.ms": "6000",
}


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def broker(broker_factory):
    return broker_factory(properties=CONSUMER_PROTOCOL)


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)


def commit_stored(consumer: Consumer) -> None:
    """Commits the stored offsets; having nothing new to commit is fine."""
    try:
        consumer.commit(asynchronous=False)
    except KafkaException as exc:
        if exc.args[0].code() != KafkaError._NO_OFFSET:
            raise


class Member:
    """One consumer on its own thread: records what it consumed and every revocation it saw."""

    def __init__(
        self,
        bootstrap: str,
        group: str,
        topic: str,
        name: str,
        **extra: object,
    ) -> None:
        self.name = name
        self.consumed: list[tuple[int, bytes]] = []
        self.revocations: list[tuple[set[int], set[int]]] = []  # (revoked, owned at the time)
        self.owned: set[int] = set()
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                **extra,
            }
        )
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(topic,), name=name, daemon=True)

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.owned |= {tp.partition for tp in partitions}

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        revoked = {tp.partition for tp in partitions}
        self.revocations.append((revoked, set(self.owned)))
        # What was consumed of the revoked partitions is committed before they move on.
        if partitions:
            commit_stored(consumer)
        self.owned -= revoked

    def start(self, topic: str | None = None) -> Member:
        self._thread.start()
        return self

    def _run(self, topic: str) -> None:
        try:
            self._consume(topic)
        except BaseException as exc:
            self.error = exc
            raise

    def _consume(self, topic: str) -> None:
        self.consumer.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke)
        while not self._stop.is_set():
            message = self.consumer.poll(0.05)
            if message is None:
                continue
            assert message.error() is None, message.error()
            self.consumed.append((message.partition(), message.value()))
            self.consumer.store_offsets(message)
        commit_stored(self.consumer)
        self.consumer.close()  # leaves the group

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        assert not self._thread.is_alive(), f"{self.name} did not stop"


def wait_for(
    condition: Callable[[], bool], timeout: float = 30.0, describe: Callable[[], object] = lambda: ""
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"condition not reached in time {describe()}")


@pytest.fixture
def members() -> Iterator[list[Member]]:
    made: list[Member] = []
    yield made
    for member in made:
        if member._thread.is_alive():
            member.stop()


def test_three_members_joining_and_leaving_consume_every_record_once(broker, members) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, PARTITIONS)
    settings = {"group.protocol": "consumer"}
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    produced: list[bytes] = []
    stop_producing = threading.Event()

    def produce() -> None:
        while not stop_producing.is_set():
            value = f"r{len(produced)}".encode()
            producer.produce(topic, value=value, partition=len(produced) % PARTITIONS)
            produced.append(value)
            producer.poll(0)
            time.sleep(0.005)
        assert producer.flush(10) == 0

    producing = threading.Thread(target=produce, daemon=True)
    producing.start()
    first = Member(broker.bootstrap, group, topic, "first", **settings).start(topic)
    members.append(first)
    wait_for(lambda: len(first.owned) == PARTITIONS)
    second = Member(broker.bootstrap, group, topic, "second", **settings).start(topic)
    third = Member(broker.bootstrap, group, topic, "third", **settings).start(topic)
    members.extend([second, third])
    wait_for(lambda: sorted(len(m.owned) for m in (first, second, third)) == [2, 2, 2])
    # No stop-the-world: the first member only ever gave up partitions it had to hand over,
    # and kept consuming the others meanwhile.
    assert first.revocations, "the first member never revoked anything"
    assert all(revoked < owned for revoked, owned in first.revocations), first.revocations
    consumed_while_rebalancing = len(first.consumed)
    wait_for(lambda: len(first.consumed) > consumed_while_rebalancing)

    third.stop()  # leaves: the others take its partitions over
    wait_for(lambda: sorted(len(m.owned) for m in (first, second)) == [3, 3])
    time.sleep(0.5)
    stop_producing.set()
    producing.join(20)
    wait_for(lambda: len({v for m in members for _, v in m.consumed}) == len(produced), timeout=30)
    first.stop()
    second.stop()

    every = [value for member in (first, second, third) for _, value in member.consumed]
    assert len(produced) > 200
    assert sorted(every) == sorted(produced), "a record was lost or consumed twice"


EVERY_VALUE = {f"v{i}".encode() for i in range(40)}


def test_a_classic_group_and_a_consumer_group_share_a_topic(broker, members) -> None:
    topic = unique("t")
    create_topic(broker.bootstrap, topic, 4)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(40):
        producer.produce(topic, value=f"v{i}".encode(), partition=i % 4)
    assert producer.flush(10) == 0
    classic_group, consumer_group = unique("classic"), unique("consumer")
    classic = [Member(broker.bootstrap, classic_group, topic, f"c{i}").start(topic) for i in range(2)]
    modern = [
        Member(broker.bootstrap, consumer_group, topic, f"m{i}", **{"group.protocol": "consumer"}).start(
            topic
        )
        for i in range(2)
    ]
    members.extend(classic + modern)
    for side in (classic, modern):
        wait_for(
            lambda side=side: sorted(len(m.owned) for m in side) == [2, 2],
            describe=lambda side=side: [
                (m.name, m.owned, m.revocations, m._thread.is_alive(), m.error) for m in side
            ],
        )
        # Each group reads the whole topic (a record read before the second member joined may be read
        # again by it: nothing was committed before it moved).
        wait_for(lambda side=side: {v for m in side for _, v in m.consumed} == EVERY_VALUE)

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    listed = {g.group_id: g for g in admin.list_consumer_groups().result(10).valid}
    assert listed[classic_group].type.name == "CLASSIC"
    assert listed[consumer_group].type.name == "CONSUMER"
    described = admin.describe_consumer_groups([consumer_group, classic_group])
    modern_description = described[consumer_group].result(10)
    assert modern_description.type.name == "CONSUMER"
    assert sorted(len(m.assignment.topic_partitions) for m in modern_description.members) == [2, 2]
    assert len(described[classic_group].result(10).members) == 2


def test_the_lag_sampler_and_the_console_gateway_see_a_consumer_group(broker, members) -> None:
    from controlplane.kafka import groups as console_groups
    from controlplane.kafka.connection import Connection
    from controlplane.kafka.lag_reads import ClusterReader

    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 2)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(10):
        producer.produce(topic, value=f"v{i}".encode(), partition=i % 2)
    assert producer.flush(10) == 0
    settings = {"group.protocol": "consumer", "enable.auto.commit": True, "auto.commit.interval.ms": 100}
    member = Member(broker.bootstrap, group, topic, "m", **settings).start(topic)
    members.append(member)
    wait_for(lambda: len(member.consumed) == 10)

    connection = Connection(bootstrap_servers=broker.bootstrap)
    with ClusterReader(connection) as reader:
        reader.load_metadata()
        listed = reader.list_groups()
        assert listed[group].protocol_type == "consumer"
        coordinators = reader.coordinators([group])
        wait_for(lambda: reader.committed_offsets(coordinators)[group] == {(topic, 0): 5, (topic, 1): 5})
        described = reader.describe_groups(coordinators)[group]
        assert described.state == "Stable"
        assert sorted(described.members[0].assignments) == [(topic, 0), (topic, 1)]

    assert console_groups.list_groups(connection)[group] == "STABLE"
    console_view = console_groups.describe_groups(connection, [group])[group]
    assert console_view.members[0].assignments == [(topic, 0), (topic, 1)]
