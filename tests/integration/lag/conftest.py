"""A real broker registered as a cluster, a producer at a steady rate and a consumer group the test
drives (keep up, slow down, stall, leave), for the lag sampler's acceptance tests."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
import redis
from confluent_kafka import Consumer, Producer

from controlplane.clusters import services as clusters
from controlplane.clusters.models import Cluster
from controlplane.groups.models import ConsumerGroup
from controlplane.lag.models import GroupLag
from controlplane.lag.sampler import sample_cluster
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from tests.fixtures.broker import BrokerProcess
from tests.integration.topics.world import kafka_world  # noqa: F401 - the fixture, shared by the apps' tests

SYSTEM = Actor.system()
# The test samples every INTERVAL seconds (the beat's 5-60 s bounds are for production settings).
INTERVAL = 1.0
PRODUCE_PER_SECOND = 50


class SteadyProducer(threading.Thread):
    """Produces PRODUCE_PER_SECOND records across the topic's partitions and remembers each record's
    timestamp by (partition, offset)."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        super().__init__(daemon=True)
        self.topic, self.partitions = topic, partitions
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        self.timestamps: dict[tuple[int, int], int] = {}
        self.stop_event = threading.Event()

    def _delivered(self, error: object, message: object) -> None:
        if error is None:
            self.timestamps[(message.partition(), message.offset())] = message.timestamp()[1]

    def run(self) -> None:
        sent = 0
        started = time.monotonic()
        while not self.stop_event.is_set():
            self.producer.produce(
                self.topic, value=b"x" * 20, partition=sent % self.partitions, on_delivery=self._delivered
            )
            sent += 1
            self.producer.poll(0)
            pause = started + sent / PRODUCE_PER_SECOND - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        self.producer.flush(10)

    def stop(self) -> None:
        self.stop_event.set()
        self.join(15)


class DrivenConsumer(threading.Thread):
    """A group member whose behaviour the test switches: keep_up, slow (a few records a second), stall
    (polls, so it stays in the group, but never commits) or leave."""

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        super().__init__(daemon=True)
        self.topic = topic
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 500,
            }
        )
        self.mode = "keep_up"
        self.assigned = threading.Event()
        self.stopped = threading.Event()

    def run(self) -> None:
        self.consumer.subscribe([self.topic], on_assign=lambda _c, _p: self.assigned.set())
        try:
            while self.mode != "leave":
                if self.mode == "keep_up":
                    if self.consumer.consume(500, 0.05):
                        self.consumer.commit(asynchronous=False)
                elif self.mode == "slow":
                    message = self.consumer.poll(0.05)
                    if message is not None and message.error() is None:
                        self.consumer.commit(message=message, asynchronous=False)
                        time.sleep(0.25)
                else:  # stall: stays a member, never commits
                    self.consumer.poll(0.05)
        finally:
            self.consumer.close()
            self.stopped.set()

    def leave(self) -> None:
        self.mode = "leave"
        assert self.stopped.wait(15), "the consumer did not leave"


@dataclass
class LagWorld:
    broker: BrokerProcess
    cluster: Cluster
    topic: str
    group: str
    producer: SteadyProducer
    consumer: DrivenConsumer
    runs: list[float] = field(default_factory=list)

    def sample(self) -> GroupLag:
        """One sampling run, INTERVAL after the previous one; the group's row afterwards."""
        if self.runs:
            pause = self.runs[-1] + INTERVAL - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        self.runs.append(time.monotonic())
        sample_cluster(self.cluster)
        return GroupLag.objects.get(group__cluster=self.cluster, group__name=self.group)

    def status_within_two_intervals(self, expected: str) -> GroupLag:
        """Samples right after a change until `expected` shows; it must within two sampling runs."""
        seen = []
        for _run in range(2):
            row = self.sample()
            seen.append((row.status, row.reason))
            if row.status == expected:
                return row
        raise AssertionError(f"expected {expected} within two intervals, saw {seen}")


@pytest.fixture
def lag_redis(settings, redis_url: str) -> str:
    """The session's Redis without earlier tests' lag history (database ids repeat between tests)."""
    settings.REDIS_URL = redis_url
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter("lag:*", count=1000))
    if keys:
        client.delete(*keys)
    return redis_url


@pytest.fixture
def lag_world(db, settings, lag_redis: str, fresh_broker: BrokerProcess) -> Iterator[LagWorld]:
    settings.LAG_HEALTH_WINDOW_SECONDS = 1.5 * INTERVAL
    settings.LAG_LAGGING_MIN_MESSAGES = 10
    uid = uuid.uuid4().hex[:8]
    organization = tenancy.create_organization(actor=SYSTEM, name=f"Lag {uid}")
    cluster = clusters.register_external_cluster(
        actor=SYSTEM, organization=organization, name=f"lag-{uid}", bootstrap_servers=fresh_broker.bootstrap
    )
    topic, group = f"orders-{uid}", f"billing-{uid}"
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": fresh_broker.bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(10)
    producer = SteadyProducer(fresh_broker.bootstrap, topic, 2)
    consumer = DrivenConsumer(fresh_broker.bootstrap, topic, group)
    producer.start()
    consumer.start()
    assert consumer.assigned.wait(20), "the consumer was never assigned its partitions"
    world = LagWorld(fresh_broker, cluster, topic, group, producer, consumer)
    yield world
    if consumer.mode != "leave":
        consumer.leave()
    producer.stop()


def group_row(world: LagWorld) -> ConsumerGroup:
    return ConsumerGroup.objects.get(cluster=world.cluster, name=world.group)
