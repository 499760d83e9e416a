"""Several log dirs per broker (JBOD): AlterReplicaLogDirs moves a live replica to another log dir of its
broker under produce and consume load, DescribeLogDirs shows the future replica and its lag meanwhile, and
a kill -9 in the middle of a move leaves one whole copy."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaAdminClient
from kafka.errors import KafkaStorageError, LogDirNotFoundError, NoError, ReplicaNotAvailableError
from kafka.structs import TopicPartitionReplica

from tests.fixtures.broker import BrokerProcess
from tests.integration.broker.helpers import create_topic

pytestmark = pytest.mark.integration

NODE_ID = 1  # the test broker's node.id


def _two_dir_broker(
    broker_factory: Callable[..., BrokerProcess], tmp_path: Path, move_bytes_per_second: int | None = None
) -> tuple[BrokerProcess, Path, Path]:
    first, second = tmp_path / "disk-a", tmp_path / "disk-b"
    properties = {"log.dirs": f"{first},{second}"}
    if move_bytes_per_second is not None:
        properties["replica.alter.log.dirs.io.max.bytes.per.second"] = str(move_bytes_per_second)
    return broker_factory(properties=properties), first, second


def _replicas(admin: KafkaAdminClient, topic: str) -> list[tuple[str, int, bool, int, int]]:
    """(log dir, partition, is future, offset lag, error code of the dir) of `topic`'s replicas."""
    found = []
    for broker in admin.describe_log_dirs():
        for log_dir in broker["log_dirs"]:
            for described in log_dir["topics"]:
                if described["name"] != topic:
                    continue
                for partition in described["partitions"]:
                    found.append(
                        (
                            log_dir["log_dir"],
                            partition["partition_index"],
                            partition["is_future_key"],
                            partition["offset_lag"],
                            log_dir["error_code"],
                        )
                    )
    return found


def _produce(bootstrap: str, topic: str, start: int, count: int) -> None:
    # Small batches: a throttled move copies whole batches, so the throttle is only as fine as they are.
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all", "batch.size": 16384})
    for index in range(start, start + count):
        producer.produce(topic, value=b"%08d" % index + b"x" * 200)
        if index % 1000 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0


def _consume_all(bootstrap: str, topic: str, expected: int, timeout_s: float = 60) -> list[bytes]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"{topic}-check-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    values: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    try:
        while len(values) < expected and time.monotonic() < deadline:
            for message in consumer.consume(1000, 1.0):
                assert message.error() is None, message.error()
                values.append(message.value()[:8])
    finally:
        consumer.close()
    return values


def _wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_replica_moves_under_produce_and_consume_load_with_nothing_lost(
    broker_factory: Callable[..., BrokerProcess], tmp_path: Path, topic_name: str
) -> None:
    # Throttled so that the move is still running while records keep arriving and being read.
    broker, first, second = _two_dir_broker(broker_factory, tmp_path, move_bytes_per_second=2_000_000)
    create_topic(broker.bootstrap, topic_name, 1)
    _produce(broker.bootstrap, topic_name, 0, 20_000)  # ~4.5 MB before the move
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        [(source, _, _, _, _)] = _replicas(admin, topic_name)
        target = str(second if source == str(first) else first)

        produced = 20_000
        consumed: list[bytes] = []
        stop = threading.Event()

        def keep_producing() -> None:
            nonlocal produced
            # ~1 MB/s: slower than the move's throttle, or the copy could never catch up (as in Kafka).
            while not stop.is_set():
                _produce(broker.bootstrap, topic_name, produced, 500)
                produced += 500
                time.sleep(0.1)

        def keep_consuming() -> None:
            consumer = Consumer(
                {
                    "bootstrap.servers": broker.bootstrap,
                    "group.id": topic_name,
                    "auto.offset.reset": "earliest",
                }
            )
            consumer.subscribe([topic_name])
            try:
                while not stop.is_set() or len(consumed) < produced:
                    for message in consumer.consume(500, 0.5):
                        assert message.error() is None
                        consumed.append(message.value()[:8])
                    if stop.is_set() and time.monotonic() > stopped_at + 60:
                        break
            finally:
                consumer.close()

        stopped_at = float("inf")
        threads = [threading.Thread(target=keep_producing), threading.Thread(target=keep_consuming)]
        for thread in threads:
            thread.start()
        tpr = TopicPartitionReplica(topic_name, 0, NODE_ID)
        assert admin.alter_replica_log_dirs({tpr: target}) == {tpr: NoError}

        future_seen: list[int] = []

        def moved() -> bool:
            replicas = _replicas(admin, topic_name)
            future_seen.extend(lag for _, _, is_future, lag, _ in replicas if is_future)
            return replicas == [(target, 0, False, 0, 0)]

        _wait_for(moved, 120, "the replica to arrive in its new log dir")
        time.sleep(1)  # the load goes on against the moved replica
        stop.set()
        stopped_at = time.monotonic()
        for thread in threads:
            thread.join(90)
        assert future_seen, "DescribeLogDirs never showed the future replica"
        assert max(future_seen) > 0, "the future replica never lagged"
    finally:
        admin.close()

    assert sorted(consumed) == [b"%08d" % i for i in range(produced)]  # each exactly once, in order
    assert consumed == sorted(consumed)
    assert _consume_all(broker.bootstrap, topic_name, produced) == [b"%08d" % i for i in range(produced)]
    assert not (Path(source) / f"{topic_name}-0").exists()
    assert (Path(target) / f"{topic_name}-0").is_dir()


def test_a_kill_during_a_move_leaves_one_whole_copy_and_a_new_move_completes(
    broker_factory: Callable[..., BrokerProcess], tmp_path: Path, topic_name: str
) -> None:
    broker, first, second = _two_dir_broker(broker_factory, tmp_path, move_bytes_per_second=500_000)
    create_topic(broker.bootstrap, topic_name, 1)
    _produce(broker.bootstrap, topic_name, 0, 20_000)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        [(source, _, _, _, _)] = _replicas(admin, topic_name)
        target = str(second if source == str(first) else first)
        tpr = TopicPartitionReplica(topic_name, 0, NODE_ID)
        assert admin.alter_replica_log_dirs({tpr: target}) == {tpr: NoError}
        _wait_for(
            lambda: any(is_future and lag > 0 for _, _, is_future, lag, _ in _replicas(admin, topic_name)),
            30,
            "the move to be under way",
        )
        time.sleep(1)
    finally:
        admin.close()
    assert any(path.name.endswith("-future") for path in Path(target).iterdir())
    broker.kill9()
    broker.start()

    assert _consume_all(broker.bootstrap, topic_name, 20_000) == [b"%08d" % i for i in range(20_000)]
    hosts = [d for d in (first, second) if (d / f"{topic_name}-0").is_dir()]
    assert hosts == [Path(source)]  # the move had not swapped: the old copy, and no leftover future
    assert not any(path.name.endswith("-future") for path in Path(target).iterdir())

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        assert admin.alter_replica_log_dirs({tpr: target}) == {tpr: NoError}
        _wait_for(lambda: _replicas(admin, topic_name) == [(target, 0, False, 0, 0)], 120, "the second move")
    finally:
        admin.close()
    _produce(broker.bootstrap, topic_name, 20_000, 10)
    assert len(_consume_all(broker.bootstrap, topic_name, 20_010)) == 20_010


def test_alter_replica_log_dirs_answers_kafkas_errors(
    broker_factory: Callable[..., BrokerProcess], tmp_path: Path, topic_name: str
) -> None:
    broker, first, _second = _two_dir_broker(broker_factory, tmp_path)
    create_topic(broker.bootstrap, topic_name, 1)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        here = TopicPartitionReplica(topic_name, 0, NODE_ID)
        missing = TopicPartitionReplica(topic_name, 7, NODE_ID)
        assert admin.alter_replica_log_dirs({here: str(tmp_path / "nowhere")}) == {here: LogDirNotFoundError}
        assert admin.alter_replica_log_dirs({missing: str(first)}) == {missing: ReplicaNotAvailableError}
    finally:
        admin.close()


def test_an_unusable_log_dir_is_reported_offline_and_the_broker_serves_from_the_other(
    broker_factory: Callable[..., BrokerProcess], tmp_path: Path, topic_name: str
) -> None:
    broken = tmp_path / "broken-disk"
    broken.write_text("a file where a directory should be")
    # Second: the first log dir also holds the broker's metadata, without which it cannot run (as Kafka's
    # metadata log dir).
    broker = broker_factory(properties={"log.dirs": f"{tmp_path / 'ok'},{broken}"})
    create_topic(broker.bootstrap, topic_name, 2)
    _produce(broker.bootstrap, topic_name, 0, 100)
    assert len(_consume_all(broker.bootstrap, topic_name, 100)) == 100
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        dirs = {d["log_dir"]: d["error_code"] for b in admin.describe_log_dirs() for d in b["log_dirs"]}
        tpr = TopicPartitionReplica(topic_name, 0, NODE_ID)
        assert admin.alter_replica_log_dirs({tpr: str(broken)}) == {tpr: KafkaStorageError}
    finally:
        admin.close()
    assert dirs == {str(broken): KafkaStorageError.errno, str(tmp_path / "ok"): 0}
