"""Online migration of a live group between the protocols (Kafka 4.0, `group.consumer.migration.policy`).

A confluent-kafka classic group (eager `range` or cooperative `cooperative-sticky`) consumes while records
flow; a `group.protocol=consumer` member joins: the group becomes a consumer group, the classic members
stay in it (JoinGroup/SyncGroup/Heartbeat served from the server-side assignment) and keep consuming;
the consumer member leaves: the group is classic again. Every record is consumed exactly once.
"""

from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from tests.integration.broker.test_consumer_protocol import (
    CONSUMER_PROTOCOL,
    Member,
    create_topic,
    members,  # noqa: F401 - the fixture the test uses
    unique,
    wait_for,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

PARTITIONS = 6
CLASSIC_SETTINGS = {"heartbeat.interval.ms": "300", "session.timeout.ms": "10000"}


@pytest.fixture
def broker(broker_factory):
    return broker_factory(properties=CONSUMER_PROTOCOL)


class Flow:
    """Produces numbered records round-robin over the partitions on a thread until stopped."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap})
        self.topic = topic
        self.produced: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            value = f"r{len(self.produced)}".encode()
            self.producer.produce(self.topic, value=value, partition=len(self.produced) % PARTITIONS)
            self.produced.append(value)
            self.producer.poll(0)
            time.sleep(0.01)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(20)
        assert self.producer.flush(10) == 0


def group_type(admin: AdminClient, group: str) -> str:
    listed = {g.group_id: g for g in admin.list_consumer_groups().result(10).valid}
    return listed[group].type.name if group in listed else "ABSENT"


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_a_live_classic_group_converts_to_the_consumer_protocol_and_back(
    broker,
    members,  # noqa: F811 - the fixture imported above
    strategy: str,
) -> None:
    topic, group = unique("mig"), unique("mig-g")
    create_topic(broker.bootstrap, topic, PARTITIONS)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    flow = Flow(broker.bootstrap, topic)
    classic_settings = {**CLASSIC_SETTINGS, "partition.assignment.strategy": strategy}
    classic = [
        Member(broker.bootstrap, group, topic, f"classic-{i}", **classic_settings).start() for i in range(2)
    ]
    members.extend(classic)
    wait_for(
        lambda: sorted(len(m.owned) for m in classic) == [3, 3], describe=lambda: [m.owned for m in classic]
    )
    assert group_type(admin, group) == "CLASSIC"

    modern = Member(broker.bootstrap, group, topic, "modern", **{"group.protocol": "consumer"}).start()
    members.append(modern)
    # The group converts and the server-side assignor spreads the partitions over all three.
    wait_for(
        lambda: sorted(len(m.owned) for m in (*classic, modern)) == [2, 2, 2],
        timeout=60,
        describe=lambda: [(m.name, m.owned, m.error) for m in (*classic, modern)],
    )
    assert group_type(admin, group) == "CONSUMER"
    described = admin.describe_consumer_groups([group])[group].result(10)
    assert len(described.members) == 3
    # The classic members keep consuming in the consumer group.
    before = [len(m.consumed) for m in classic]
    wait_for(lambda: all(len(m.consumed) > count for m, count in zip(classic, before, strict=True)))

    modern.stop()  # the last consumer-protocol member leaves: the group is classic again
    wait_for(lambda: group_type(admin, group) == "CLASSIC", timeout=30)
    wait_for(
        lambda: sorted(len(m.owned) for m in classic) == [3, 3],
        timeout=60,
        describe=lambda: [(m.name, m.owned, m.error) for m in classic],
    )
    wait_for(lambda: len(flow.produced) >= 300)  # records flowed through every phase
    flow.stop()
    wait_for(
        lambda: len({v for m in members for _, v in m.consumed}) == len(flow.produced),
        timeout=60,
        describe=lambda: (len(flow.produced), len({v for m in members for _, v in m.consumed})),
    )
    for member in classic:
        member.stop()
    every = [value for member in members for _, value in member.consumed]
    assert sorted(every) == sorted(flow.produced), "a record was lost or consumed twice"
