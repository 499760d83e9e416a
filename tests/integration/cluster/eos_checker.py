"""Exactly-once consume-transform-produce on a cluster, and its checker (issue #22).

The input topic holds `records` values "partition:number". A read_committed consumer in a group reads
batches; each batch is written to the output topic (same partition) and its offsets committed in one
transaction. Failed transactions are aborted (a fatal error makes a new producer instance, which fences
the old one) and the consumer rewinds to the group's committed offsets. `check_output` then reads the
output with read_committed and counts lost, duplicated and reordered input records.
Used by tests/integration/cluster/test_transactions_failover.py and bench/transactions_soak.py.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from broker.groups.offsets_format import partition_for_group
from tests.fixtures.cluster import LocalCluster
from tests.integration.cluster.fault_checker import partition_states

# The transactional producer's settings beyond its id. librdkafka 2.16 can block
# send_offsets_to_transaction without end when the group coordinator's broker dies: the TxnOffsetCommit
# waits on a coordinator cached before the failure, and once a Metadata answer no longer lists that broker
# its connection thread is gone, so nothing wakes the request until some other connection of the producer
# goes up or down (librdkafka issues #5511 and #5456: the request's timeout is never checked). Kafka's
# brokers answer the same way, so only the client can end it: closing idle connections after 5 s makes
# such a state change happen within seconds. Without it the wait lasted until a broker closed an idle
# connection after its connections.max.idle.ms (10 min); by then the consumer had left the group
# (max.poll.interval.ms) and the TxnOffsetCommit failed with UNKNOWN_MEMBER_ID.
TRANSACTIONAL_PRODUCER_SETTINGS = {
    "transaction.timeout.ms": "10000",
    "linger.ms": "5",
    "connections.max.idle.ms": "5000",
}


@dataclass
class EosRun:
    cluster: LocalCluster
    source: str
    sink: str
    group: str
    transactional_id: str
    partitions: int
    records: int
    transactions: int = 0
    aborts: int = 0
    fatal: int = 0
    errors: list[str] = field(default_factory=list)


def fill_source(run: EosRun) -> None:
    producer = Producer(run.cluster.client_config(acks="all", **{"enable.idempotence": "true"}))
    for number in range(run.records):
        partition = number % run.partitions
        while True:
            try:
                producer.produce(run.source, value=b"%d:%d" % (partition, number), partition=partition)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(60) == 0


def _new_producer(run: EosRun) -> Producer:
    producer = Producer(
        run.cluster.client_config(
            **{"transactional.id": run.transactional_id, **TRANSACTIONAL_PRODUCER_SETTINGS}
        )
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            producer.init_transactions(10)
            return producer
        except KafkaException as exc:
            if time.monotonic() > deadline or exc.args[0].fatal():
                raise
            time.sleep(0.2)


def group_coordinated_by(cluster: LocalCluster, broker: int, prefix: str) -> str:
    """A group id (prefix-N) whose `__consumer_offsets` partition `broker` leads (the topic must exist)."""
    leaders = {p: state[0] for p, state in partition_states(cluster, "__consumer_offsets").items()}
    for number in range(10_000):
        group = f"{prefix}-{number}"
        if leaders[partition_for_group(group, len(leaders))] == broker:
            return group
    raise LookupError(f"broker {broker} leads no partition of __consumer_offsets")


def _committed_total(consumer: Consumer) -> int:
    """Records the group has committed over the consumer's assignment (retried while coordinators move)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            assignment = consumer.assignment()
            committed = consumer.committed(assignment, 5)
            for tp in committed:
                consumer.seek(TopicPartition(tp.topic, tp.partition, max(tp.offset, 0)))
            return sum(max(tp.offset, 0) for tp in committed)
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def process_all(run: EosRun, limit_s: float, on_progress: Callable[[int], None] = lambda done: None) -> None:
    """Runs the loop until every input record is committed (AssertionError after `limit_s`);
    `on_progress(committed)` is called after each batch (the caller injects faults there)."""
    consumer = Consumer(
        run.cluster.client_config(
            **{
                "group.id": run.group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": "false",
                "isolation.level": "read_committed",
                "session.timeout.ms": "6000",
                "heartbeat.interval.ms": "500",
                "topic.metadata.refresh.interval.ms": "1000",
            }
        )
    )
    consumer.subscribe([run.source])
    producer = _new_producer(run)
    committed = 0
    started = time.monotonic()
    try:
        while committed < run.records:
            assert time.monotonic() - started < limit_s, (
                f"only {committed} of {run.records} committed in time"
            )
            on_progress(committed)
            batch = [m for m in consumer.consume(50, 0.5) if m.error() is None]
            if not batch:
                continue
            try:
                producer.begin_transaction()
                for message in batch:
                    producer.produce(run.sink, value=message.value(), partition=message.partition())
                positions = consumer.position(consumer.assignment())
                producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 20)
                producer.commit_transaction(20)
                run.transactions += 1
                committed += len(batch)
            except KafkaException as exc:
                error: KafkaError = exc.args[0]
                run.aborts += 1
                run.errors.append(str(error))
                if error.fatal():
                    run.fatal += 1
                    producer = _new_producer(run)  # fences the failed instance and aborts its work
                else:
                    try:
                        producer.abort_transaction(30)
                    except KafkaException:
                        run.fatal += 1
                        producer = _new_producer(run)
                # Records of the aborted batch were counted: recount from the group's offsets.
                committed = _committed_total(consumer)
    finally:
        consumer.close()


def check_output(run: EosRun, timeout_s: float = 60.0) -> tuple[int, int, int]:
    """(lost, duplicated, reordered) input records in the read_committed output."""
    reader = Consumer(
        run.cluster.client_config(
            **{
                "group.id": f"{run.group}-checker",
                "isolation.level": "read_committed",
                "enable.partition.eof": "true",
            }
        )
    )
    reader.assign([TopicPartition(run.sink, p, 0) for p in range(run.partitions)])
    seen: dict[int, list[int]] = {p: [] for p in range(run.partitions)}
    at_end: set[int] = set()
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and (
            len(at_end) < run.partitions or sum(map(len, seen.values())) < run.records
        ):
            message = reader.poll(0.5)
            if message is None:
                continue
            if message.error():
                if message.error().code() == KafkaError._PARTITION_EOF:
                    at_end.add(message.partition())
                continue
            at_end.discard(message.partition())
            partition, number = (int(x) for x in message.value().split(b":"))
            seen[partition].append(number)
    finally:
        reader.close()
    numbers = [n for values in seen.values() for n in values]
    lost = run.records - len(set(numbers))
    duplicated = len(numbers) - len(set(numbers))
    reordered = sum(
        1 for values in seen.values() for earlier, later in itertools.pairwise(values) if later < earlier
    )
    return lost, duplicated, reordered
