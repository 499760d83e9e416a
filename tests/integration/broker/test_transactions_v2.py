"""Transaction version 2 (KIP-890 part 2) with raw requests, as a Kafka 4 Java producer sends them: InitProducerId
v5, Produce v12 with no AddPartitionsToTxn (the partition leader adds the partition through the coordinator),
TxnOffsetCommit v5 with no AddOffsetsToTxn, EndTxn v5 bumping the epoch every time (the old epoch is fenced).
With transaction.version 1 finalized the same request versions keep the version 1 behaviour."""

from __future__ import annotations

import datetime
import time
import uuid
from dataclasses import dataclass, field

import pytest
from confluent_kafka import Consumer, TopicPartition
from kio.schema.add_partitions_to_txn.v3 import request as add_v3
from kio.schema.end_txn.v5 import request as end_v5
from kio.schema.errors import ErrorCode
from kio.schema.init_producer_id.v5 import request as init_v5
from kio.schema.produce.v12 import request as produce_v12
from kio.schema.txn_offset_commit.v5 import request as offsets_v5
from kio.schema.update_features.v2.request import FeatureUpdateKey, UpdateFeaturesRequest
from kio.static.primitive import i8, i16, i32, i32Timedelta, i64

from broker.wire.records.records import Record, build_batch
from tests.fixtures.broker import BrokerProcess
from tests.integration.broker import test_transactions_clients as clients
from tests.integration.broker.helpers import create_topic
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker.transactions_wire import _coordinator_of, consume_values

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

# What a Java producer retries a Produce on (the coordinator is still writing the previous markers).
RETRIABLE = {ErrorCode.not_enough_replicas, ErrorCode.concurrent_transactions}


@dataclass
class V2Producer:
    client: WireClient
    coordinator: WireClient
    transactional_id: str
    producer_id: int = -1
    epoch: int = -1
    sequences: dict[tuple[str, int], int] = field(default_factory=dict)

    def init(self) -> None:
        answer = self.coordinator.request(
            init_v5.InitProducerIdRequest(
                transactional_id=self.transactional_id,
                transaction_timeout=i32Timedelta.parse(datetime.timedelta(seconds=60)),
                producer_id=i64(-1),
                producer_epoch=i16(-1),
            )
        )
        assert answer.error_code == ErrorCode.none, answer
        self.producer_id, self.epoch = int(answer.producer_id), int(answer.producer_epoch)

    def produce(
        self, topic: str, partition: int, value: bytes, *, epoch: int | None = None, sequence: int = 0
    ) -> ErrorCode:
        """One batch (acks=all), retried while the coordinator is busy; the partition's error code. With
        `epoch`, a batch of an older producer instance (at `sequence`)."""
        key = (topic, partition)
        sequence = self.sequences.get(key, 0) if epoch is None else sequence
        batch = build_batch(
            [Record(key=None, value=value)],
            producer_id=self.producer_id,
            producer_epoch=self.epoch if epoch is None else epoch,
            base_sequence=sequence,
            transactional=True,
        )
        request = produce_v12.ProduceRequest(
            transactional_id=self.transactional_id,
            acks=i16(-1),
            timeout=i32Timedelta.parse(datetime.timedelta(seconds=10)),
            topic_data=(
                produce_v12.TopicProduceData(
                    name=topic,
                    partition_data=(produce_v12.PartitionProduceData(index=i32(partition), records=batch),),
                ),
            ),
        )
        deadline = time.monotonic() + 20
        while True:
            error = self.client.request(request).responses[0].partition_responses[0].error_code
            if error not in RETRIABLE or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if error == ErrorCode.none and epoch is None:
            self.sequences[key] = sequence + 1
        return error

    def end(self, commit: bool, *, epoch: int | None = None) -> tuple[ErrorCode, int, int]:
        """EndTxn, retried while the previous transaction's markers are written (CONCURRENT_TRANSACTIONS)."""
        request = end_v5.EndTxnRequest(
            transactional_id=self.transactional_id,
            producer_id=i64(self.producer_id),
            producer_epoch=i16(self.epoch if epoch is None else epoch),
            committed=commit,
        )
        deadline = time.monotonic() + 20
        while True:
            answer = self.coordinator.request(request)
            if answer.error_code != ErrorCode.concurrent_transactions or time.monotonic() > deadline:
                return answer.error_code, int(answer.producer_id), int(answer.producer_epoch)
            time.sleep(0.05)

    def end_and_follow(self, commit: bool) -> None:
        """EndTxn as a TV2 client does: carry on with the producer id and epoch it answers."""
        error, producer_id, epoch = self.end(commit)
        assert error == ErrorCode.none
        assert (producer_id, epoch) == (self.producer_id, self.epoch + 1), "every EndTxn bumps the epoch"
        self.producer_id, self.epoch = producer_id, epoch
        self.sequences.clear()  # a new epoch starts its sequences at 0

    def commit_offsets(self, group_id: str, topic: str, offset: int) -> ErrorCode:
        answer = self.coordinator.request(
            offsets_v5.TxnOffsetCommitRequest(
                transactional_id=self.transactional_id,
                group_id=group_id,
                producer_id=i64(self.producer_id),
                producer_epoch=i16(self.epoch),
                generation_id=i32(-1),
                member_id="",
                group_instance_id=None,
                topics=(
                    offsets_v5.TxnOffsetCommitRequestTopic(
                        name=topic,
                        partitions=(
                            offsets_v5.TxnOffsetCommitRequestPartition(
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
        return answer.topics[0].partitions[0].error_code


def set_transaction_version(broker: BrokerProcess, level: int) -> None:
    request = UpdateFeaturesRequest(
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=10)),
        feature_updates=(
            FeatureUpdateKey(feature="transaction.version", max_version_level=i16(level), upgrade_type=i8(2)),
        ),
        validate_only=False,
    )
    with WireClient(broker.bootstrap) as client:
        assert client.request(request).error_code == 0


def committed_offset(bootstrap: str, group_id: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group_id, "enable.auto.commit": "false"})
    try:
        return consumer.committed([TopicPartition(topic, 0)], timeout=10)[0].offset
    finally:
        consumer.close()


def test_a_transaction_version_2_exchange(fresh_broker: BrokerProcess) -> None:
    topic = create_topic(fresh_broker.bootstrap, f"tv2-{uuid.uuid4().hex[:8]}", partitions=2)
    group_id = f"tv2-group-{uuid.uuid4().hex[:8]}"
    with WireClient(fresh_broker.bootstrap) as client:
        producer = V2Producer(client, _coordinator_of(client, "tv2-id"), "tv2-id")
        producer.init()
        first_epoch = producer.epoch

        # 1: committed, to both partitions, with the input offsets; nothing added by hand.
        assert producer.produce(topic, 0, b"committed-1") == ErrorCode.none
        assert producer.produce(topic, 1, b"committed-1b") == ErrorCode.none
        assert producer.commit_offsets(group_id, topic, 7) == ErrorCode.none
        producer.end_and_follow(commit=True)
        assert producer.epoch == first_epoch + 1

        # A retried EndTxn (its answer lost) is answered, once the transaction is complete, with the epoch
        # it bumped to.
        assert producer.end(True, epoch=first_epoch) == (ErrorCode.none, producer.producer_id, producer.epoch)
        # The markers carried the new epoch: the old one is fenced on every partition, and at the coordinator.
        for partition in (0, 1):
            zombie = producer.produce(topic, partition, b"zombie", epoch=first_epoch, sequence=1)
            assert zombie == ErrorCode.invalid_producer_epoch
        assert producer.end(True, epoch=first_epoch - 1)[0] == ErrorCode.producer_fenced

        # 2: aborted (offsets too); a retried abort is answered again, a commit with that epoch is refused.
        assert producer.produce(topic, 0, b"aborted-2") == ErrorCode.none
        assert producer.commit_offsets(group_id, topic, 99) == ErrorCode.none
        aborted_with = producer.epoch
        producer.end_and_follow(commit=False)
        assert producer.end(False, epoch=aborted_with) == (
            ErrorCode.none,
            producer.producer_id,
            producer.epoch,
        )
        assert producer.end(True, epoch=aborted_with)[0] == ErrorCode.invalid_txn_state

        # 3: an abort with nothing sent still moves the epoch on; then a committed one.
        producer.end_and_follow(commit=False)
        assert producer.produce(topic, 0, b"committed-3") == ErrorCode.none
        producer.end_and_follow(commit=True)
        assert producer.epoch == first_epoch + 4
        producer.coordinator.close()

    assert consume_values(fresh_broker.bootstrap, topic, "read_committed", 2) == [
        b"committed-1",
        b"committed-3",
    ]
    assert consume_values(fresh_broker.bootstrap, topic, "read_committed", 1, partition=1) == [
        b"committed-1b"
    ]
    assert consume_values(fresh_broker.bootstrap, topic, "read_uncommitted", 3) == [
        b"committed-1",
        b"aborted-2",
        b"committed-3",
    ]
    assert committed_offset(fresh_broker.bootstrap, group_id, topic) == 7


def test_transaction_version_1_keeps_version_1_behaviour_at_the_same_request_versions(
    fresh_broker: BrokerProcess,
) -> None:
    set_transaction_version(fresh_broker, 1)
    topic = create_topic(fresh_broker.bootstrap, f"tv1-{uuid.uuid4().hex[:8]}")
    with WireClient(fresh_broker.bootstrap) as client:
        producer = V2Producer(client, _coordinator_of(client, "tv1-id"), "tv1-id")
        producer.init()
        # Produce v12 adds nothing: the partition was not added, so the batch is refused (KIP-890 part 1).
        assert producer.produce(topic, 0, b"not-added") == ErrorCode.invalid_txn_state
        # Nothing to abort: version 1 refuses (version 2 would bump the epoch).
        assert producer.end(False) == (ErrorCode.invalid_txn_state, -1, -1)
        added = producer.coordinator.request(
            add_v3.AddPartitionsToTxnRequest(
                v3_and_below_transactional_id="tv1-id",
                v3_and_below_producer_id=i64(producer.producer_id),
                v3_and_below_producer_epoch=i16(producer.epoch),
                v3_and_below_topics=(add_v3.AddPartitionsToTxnTopic(name=topic, partitions=(i32(0),)),),
            )
        )
        assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0
        assert producer.produce(topic, 0, b"added") == ErrorCode.none
        # EndTxn v5 commits without an epoch bump.
        assert producer.end(True) == (ErrorCode.none, producer.producer_id, producer.epoch)
        producer.coordinator.close()
    assert consume_values(fresh_broker.bootstrap, topic, "read_committed", 1) == [b"added"]


def test_the_client_libraries_transactions_work_at_transaction_version_1(fresh_broker: BrokerProcess) -> None:
    """librdkafka, kafka-python and aiokafka send version 1 requests; test_transactions_clients.py runs them at
    the default level (2), this at level 1."""
    set_transaction_version(fresh_broker, 1)
    clients.test_confluent_commit_and_abort_as_read_committed_sees_them(fresh_broker)
    clients.test_consume_transform_produce_commits_offsets_with_the_output(fresh_broker)
    clients.test_a_second_producer_with_the_same_transactional_id_fences_the_first(fresh_broker)
    clients.test_kafka_python_transactional_producer(fresh_broker)
    clients.test_aiokafka_transactional_producer(fresh_broker)
