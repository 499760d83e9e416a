"""Moving a partition's replicas between brokers of a real cluster while clients keep working;
ElectLeaders, UnregisterBroker; and what a single-node broker answers to the same APIs."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, ElectionType, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient
from kafka import TopicPartition as KafkaTopicPartition
from kafka.errors import (
    ClusterAuthorizationFailedError,
    InvalidReplicationAssignmentError,
    NoReassignmentInProgressError,
)
from kio.schema.errors import ErrorCode
from kio.schema.unregister_broker.v0.request import UnregisterBrokerRequest
from kio.static.primitive import i32

from broker.log.log_manager import partition_dir_name
from tests.fixtures.broker import BrokerProcess, SecureBrokerProcess
from tests.fixtures.cluster import LocalCluster, start_cluster
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker_security.clients import add_scram_user, unique

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

TOPIC = "moving"
RECORDS_BEFORE = 3000
VALUE_PADDING = b"." * 300  # ~1 MB before the move: the throttle below makes catching up take seconds
# Catching-up replicas (outside the ISR) get this many bytes/s: the move is observable in progress.
CATCH_UP_RATE = 128 * 1024


def wait_until(condition: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Three broker+controller nodes and broker 4, broker-only."""
    started = start_cluster(
        tmp_path_factory.mktemp("reassignment"),
        size=4,
        controllers=3,
        properties={
            "leader.replication.throttled.rate": str(CATCH_UP_RATE),
            "auto.leader.rebalance.enable": "false",  # the test moves leaders itself
        },
    )
    try:
        yield started
    finally:
        started.stop()


def partition_state(admin: AdminClient, topic: str) -> tuple[int, list[int], list[int]]:
    """(leader, replicas, isr) of partition 0 as Metadata reports it."""
    metadata = admin.list_topics(topic, timeout=10).topics[topic]
    partition = metadata.partitions[0]
    return partition.leader, list(partition.replicas), list(partition.isrs)


class ClientTraffic:
    """An acks=all idempotent producer and a consumer of partition 0 running in threads."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.acked: list[bytes] = []
        self.consumed: list[bytes] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._producing = threading.Event()
        self._producer = Producer(
            cluster.client_config(**{"acks": "all", "enable.idempotence": "true", "linger.ms": "5"})
        )
        # Assigned, not subscribed: this test is about the data path, not the group coordinator.
        self._consumer = Consumer(
            cluster.client_config(
                **{"group.id": f"watcher-{uuid.uuid4().hex[:6]}", "enable.auto.commit": "false"}
            )
        )
        self._threads = [
            threading.Thread(target=self._produce, daemon=True),
            threading.Thread(target=self._consume, daemon=True),
        ]

    def _on_delivery(self, error: Any, message: Any) -> None:
        if error is None:
            self.acked.append(message.value())
        else:
            self.errors.append(str(error))

    def produce_batch(self, count: int, prefix: str) -> None:
        for i in range(count):
            self._producer.produce(
                TOPIC, f"{prefix}-{i:06d}".encode() + VALUE_PADDING, on_delivery=self._on_delivery
            )
            self._producer.poll(0)
        assert self._producer.flush(60) == 0

    def start(self) -> None:
        self._consumer.assign([TopicPartition(TOPIC, 0, 0)])
        for thread in self._threads:
            thread.start()
        wait_until(lambda: self._producing.is_set() and self.consumed, 30, "the clients to start")

    def _produce(self) -> None:
        i = 0
        while not self._stop.is_set():
            self._producer.produce(TOPIC, f"live-{i:06d}".encode(), on_delivery=self._on_delivery)
            self._producer.poll(0.02)
            self._producing.set()
            i += 1
        self._producer.flush(60)

    def _consume(self) -> None:
        while not self._stop.is_set():
            message = self._consumer.poll(0.2)
            if message is not None and message.error() is None:
                self.consumed.append(message.value())

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(90)
        self._consumer.close()


def read_everything(cluster: LocalCluster, expected: int) -> list[bytes]:
    """Every record of partition 0 from offset 0 (no group), until `expected` arrived."""
    consumer = Consumer(cluster.client_config(**{"group.id": "reader", "enable.auto.commit": "false"}))
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while len(values) < expected and time.monotonic() < deadline:
            for message in consumer.consume(500, timeout=1):
                if message.error() is None:
                    values.append(message.value())
    finally:
        consumer.close()
    return values


def partition_dir_exists(cluster: LocalCluster, broker_id: int) -> bool:
    return (cluster.node(broker_id).data_dir / "logs" / partition_dir_name(TOPIC, 0)).is_dir()


def test_a_partition_moves_to_other_brokers_while_clients_produce_and_consume(cluster: LocalCluster) -> None:
    admin = AdminClient(cluster.client_config())
    [created] = admin.create_topics([NewTopic(TOPIC, num_partitions=1, replication_factor=2)]).values()
    created.result(30)
    _, original, _ = wait_until(
        lambda: (state := partition_state(admin, TOPIC))[0] >= 0 and len(state[2]) == 2 and state,
        30,
        "the new topic's leader and ISR",
    )
    target = sorted(set(cluster.nodes) - set(original))
    assert 4 in target  # the broker-only node receives a replica

    traffic = ClientTraffic(cluster)
    traffic.produce_batch(RECORDS_BEFORE, "before")
    traffic.start()
    legacy_admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)
    partition = KafkaTopicPartition(TOPIC, 0)
    try:
        assert legacy_admin.alter_partition_reassignments({partition: target}) == {partition: None}
        ongoing = legacy_admin.list_partition_reassignments([partition])
        assert ongoing[partition]["adding_replicas"] == target
        assert ongoing[partition]["removing_replicas"] == original
        assert ongoing[partition]["replicas"] == target + original
        wait_until(lambda: legacy_admin.list_partition_reassignments() == {}, 90, "the reassignment to end")
        leader, _, isr = wait_until(
            lambda: (state := partition_state(admin, TOPIC))[1] == target and state, 30, "metadata to show it"
        )
        assert leader in target
        assert sorted(isr) == target
        cancel = legacy_admin.alter_partition_reassignments({partition: None})
        assert cancel == {partition: NoReassignmentInProgressError}
        # Some records are produced after the move too.
        wait_until(lambda: any(v.startswith(b"live") for v in traffic.acked[-10:]), 30, "produce to resume")
        time.sleep(1)
    finally:
        traffic.stop()
        legacy_admin.close()

    assert traffic.errors == []
    everything = read_everything(cluster, len(traffic.acked))
    assert len(everything) == len(set(everything)), "a record is stored twice"
    assert set(traffic.acked) <= set(everything), "an acknowledged record is missing"
    # The consumer read the log in order, without gaps or repeats, across the move.
    assert traffic.consumed == everything[: len(traffic.consumed)]
    assert len(traffic.consumed) > RECORDS_BEFORE

    for broker_id in target:
        assert partition_dir_exists(cluster, broker_id)
    wait_until(
        lambda: not any(partition_dir_exists(cluster, b) for b in original),
        30,
        "the old replicas' logs to be deleted",
    )

    # Leadership moves off the preferred replica (controlled shutdown), then ElectLeaders brings it back.
    preferred = target[0]
    cluster.node(preferred).restart()
    cluster.wait_ready()
    leader, _, isr = wait_until(
        lambda: (state := partition_state(admin, TOPIC))[2] and sorted(state[2]) == target and state,
        60,
        "the restarted broker to rejoin the ISR",
    )
    assert leader != preferred
    [elected] = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(TOPIC, 0)]).result(30).items()
    assert elected[1] is None
    assert wait_until(lambda: partition_state(admin, TOPIC)[0] == preferred, 30, "the preferred leader")
    # Asked again: nothing to do (ELECTION_NOT_NEEDED is not an error to the client).
    again = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(TOPIC, 0)]).result(30)
    assert [e is None or "ELECTION_NOT_NEEDED" in str(e) for e in again.values()] == [True]


def unregister(cluster: LocalCluster, broker_id: int) -> tuple[ErrorCode, str | None]:
    with WireClient(cluster.node(1).bootstrap, timeout=30) as client:
        response = client.request(UnregisterBrokerRequest(broker_id=i32(broker_id)))
    return response.error_code, response.error_message


def test_only_a_stopped_broker_holding_no_replicas_can_be_unregistered(cluster: LocalCluster) -> None:
    assert unregister(cluster, 99)[0] == ErrorCode.broker_id_not_registered
    assert unregister(cluster, 2)[0] == ErrorCode.invalid_request  # running
    extra = cluster.add_broker(5)
    cluster.wait_ready()
    extra.stop()
    # Its session ends (broker.session.timeout.ms) and it is fenced; then it may go.
    wait_until(lambda: unregister(cluster, 5)[0] == ErrorCode.none, 30, "broker 5 to be unregistered")
    admin = AdminClient(cluster.client_config())
    assert 5 not in admin.list_topics(timeout=10).brokers


@pytest.fixture
def single_broker(broker_factory: Callable[..., BrokerProcess]) -> BrokerProcess:
    return broker_factory()


def test_a_single_broker_has_nothing_to_move_or_elect(single_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": single_broker.bootstrap})
    [created] = admin.create_topics([NewTopic("alone", num_partitions=1, replication_factor=1)]).values()
    created.result(10)
    elected = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition("alone", 0)]).result(10)
    assert [e is None or "ELECTION_NOT_NEEDED" in str(e) for e in elected.values()] == [True]
    legacy_admin = KafkaAdminClient(bootstrap_servers=single_broker.bootstrap)
    try:
        partition = KafkaTopicPartition("alone", 0)
        assert legacy_admin.alter_partition_reassignments({partition: [1]}) == {partition: None}
        answer = legacy_admin.alter_partition_reassignments({partition: [2]})
        assert answer == {partition: InvalidReplicationAssignmentError}
        assert legacy_admin.list_partition_reassignments() == {}
    finally:
        legacy_admin.close()


def test_moving_and_electing_need_the_cluster_alter_permission(secure_broker: SecureBrokerProcess) -> None:
    user, password = unique("mover"), "mover-secret"
    add_scram_user(secure_broker, user, password)
    config = secure_broker.client_config(user, password, "SCRAM-SHA-256")
    admin = AdminClient(config)  # kept alive until its future resolves
    with pytest.raises(KafkaException) as refused:
        admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition("any", 0)]).result(10)
    assert refused.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    legacy_admin = KafkaAdminClient(
        bootstrap_servers=config["bootstrap.servers"],
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-256",
        sasl_plain_username=user,
        sasl_plain_password=password,
    )
    try:
        with pytest.raises(ClusterAuthorizationFailedError):
            legacy_admin.alter_partition_reassignments({KafkaTopicPartition("any", 0): [1]})
        with pytest.raises(ClusterAuthorizationFailedError):
            legacy_admin.list_partition_reassignments()
    finally:
        legacy_admin.close()
