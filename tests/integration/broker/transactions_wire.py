"""Transactions by hand for the log-side tests: raw transactional Produce and WriteTxnMarkers
requests (as a transaction coordinator sends them), read back by confluent-kafka consumers."""

from __future__ import annotations

import asyncio
import datetime
import time
import uuid
from dataclasses import dataclass, field

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from kio.schema.add_partitions_to_txn.v3 import request as add_v3
from kio.schema.errors import ErrorCode
from kio.schema.find_coordinator.v4 import request as find_v4
from kio.schema.init_producer_id.v4 import request as init_v4
from kio.schema.produce.v9 import request as produce_v9
from kio.schema.write_txn_markers.v1 import request as markers_v1
from kio.static.primitive import i8, i16, i32, i32Timedelta, i64

from broker.wire.records.records import Record, build_batch
from tests.integration.broker.kafka_wire import WireClient


@dataclass
class WireProducer:
    """A producer id with its epoch and next sequence per partition; transactional when it has an id.

    A transactional one gets its id from the transaction coordinator (InitProducerId) and adds each
    partition to its transaction (AddPartitionsToTxn) before the first batch, as clients do, so the
    partitions' KIP-890 verification accepts its batches; the markers are then written by hand."""

    client: WireClient
    producer_id: int
    epoch: int
    transactional_id: str | None
    sequences: dict[tuple[str, int], int]
    coordinator: WireClient | None = None
    added: set[tuple[str, int]] = field(default_factory=set)

    @classmethod
    def start(cls, client: WireClient, transactional_id: str | None = None) -> WireProducer:
        coordinator = None if transactional_id is None else _coordinator_of(client, transactional_id)
        answer = (coordinator or client).request(
            init_v4.InitProducerIdRequest(
                transactional_id=transactional_id,
                transaction_timeout=i32Timedelta.parse(datetime.timedelta(seconds=60)),
            )
        )
        assert answer.error_code == ErrorCode.none, answer
        return cls(
            client, int(answer.producer_id), int(answer.producer_epoch), transactional_id, {}, coordinator
        )

    def _add_to_transaction(self, topic: str, partition: int) -> None:
        if self.coordinator is None or self.transactional_id is None or (topic, partition) in self.added:
            return
        answer = self.coordinator.request(
            add_v3.AddPartitionsToTxnRequest(
                v3_and_below_transactional_id=self.transactional_id,
                v3_and_below_producer_id=i64(self.producer_id),
                v3_and_below_producer_epoch=i16(self.epoch),
                v3_and_below_topics=(
                    add_v3.AddPartitionsToTxnTopic(name=topic, partitions=(i32(partition),)),
                ),
            )
        )
        error = answer.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code
        assert error == ErrorCode.none, answer
        self.added.add((topic, partition))

    def send(
        self,
        topic: str,
        partition: int,
        *values: bytes,
        keys: list[bytes] | None = None,
        client: WireClient | None = None,
    ) -> int:
        """Append `values` (with `keys`, else keyless) as one batch with acks=all; returns the base offset."""
        key = (topic, partition)
        self._add_to_transaction(topic, partition)
        sequence = self.sequences.get(key, 0)
        record_keys: list[bytes | None] = list(keys) if keys is not None else [None] * len(values)
        batch = build_batch(
            [Record(key=k, value=value) for k, value in zip(record_keys, values, strict=True)],
            producer_id=self.producer_id,
            producer_epoch=self.epoch,
            base_sequence=sequence,
            transactional=self.transactional_id is not None,
        )
        answer = (client or self.client).request(
            produce_v9.ProduceRequest(
                transactional_id=self.transactional_id,
                acks=i16(-1),
                timeout=i32Timedelta.parse(datetime.timedelta(seconds=10)),
                topic_data=(
                    produce_v9.TopicProduceData(
                        name=topic,
                        partition_data=(
                            produce_v9.PartitionProduceData(index=i32(partition), records=batch),
                        ),
                    ),
                ),
            )
        )
        part = answer.responses[0].partition_responses[0]
        assert part.error_code == ErrorCode.none, part
        self.sequences[key] = sequence + len(values)
        return int(part.base_offset)

    def end(
        self, topic: str, partitions: list[int], *, commit: bool, client: WireClient | None = None
    ) -> dict[int, ErrorCode]:
        """WriteTxnMarkers for this producer's transaction in `partitions` (coordinator epoch 0)."""
        answer = (client or self.client).request(
            markers_v1.WriteTxnMarkersRequest(
                markers=(
                    markers_v1.WritableTxnMarker(
                        producer_id=i64(self.producer_id),
                        producer_epoch=i16(self.epoch),
                        transaction_result=commit,
                        topics=(
                            markers_v1.WritableTxnMarkerTopic(
                                name=topic, partition_indexes=tuple(i32(p) for p in partitions)
                            ),
                        ),
                        coordinator_epoch=i32(0),
                    ),
                )
            )
        )
        # The next batches start a new transaction: add their partitions again.
        self.added.difference_update((topic, p) for p in partitions)
        return {int(p.partition_index): p.error_code for p in answer.markers[0].topics[0].partitions}


def _coordinator_of(client: WireClient, transactional_id: str, timeout_s: float = 30.0) -> WireClient:
    """A connection to the transactional id's coordinator (FindCoordinator key type 1; the state topic
    is created by the first lookup, so it is retried)."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = client.request(
            find_v4.FindCoordinatorRequest(key_type=i8(1), coordinator_keys=(transactional_id,))
        ).coordinators[0]
        if answer.error_code == ErrorCode.none:
            return WireClient(f"{answer.host}:{answer.port}")
        assert time.monotonic() < deadline, answer
        time.sleep(0.2)


def consume_values(
    bootstrap: str,
    topic: str,
    isolation_level: str,
    expected: int,
    *,
    partition: int = 0,
    timeout_s: float = 30.0,
    settle_s: float = 2.0,
) -> list[bytes]:
    """Every value a fresh confluent-kafka consumer of `isolation_level` reads from the beginning:
    waits for `expected` values, then keeps polling `settle_s` to catch any extra one."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"txn-check-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": "false",
            "isolation.level": isolation_level,
        }
    )
    values: list[bytes] = []
    try:
        consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        deadline = time.monotonic() + timeout_s
        settle_until: float | None = None
        while time.monotonic() < (settle_until if settle_until is not None else deadline):
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                values.append(message.value())
            if settle_until is None and len(values) >= expected:
                settle_until = time.monotonic() + settle_s
        return values
    finally:
        consumer.close()


def watermarks(bootstrap: str, topic: str, isolation_level: str, partition: int = 0) -> tuple[int, int]:
    """(low, high) as librdkafka's ListOffsets of that isolation level reports them."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "txn-watermarks", "isolation.level": isolation_level}
    )
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
    finally:
        consumer.close()


def consume_values_aiokafka(
    bootstrap: str,
    topic: str,
    isolation_level: str,
    expected: int,
    *,
    timeout_s: float = 30.0,
    settle_s: float = 2.0,
) -> list[bytes]:
    """As `consume_values`, with aiokafka (its own read_committed filtering, in Python)."""
    from aiokafka import AIOKafkaConsumer
    from aiokafka import TopicPartition as AioTopicPartition

    async def read() -> list[bytes]:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, isolation_level=isolation_level, enable_auto_commit=False
        )
        await consumer.start()
        values: list[bytes] = []
        try:
            partition = AioTopicPartition(topic, 0)
            consumer.assign([partition])
            await consumer.seek_to_beginning(partition)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout_s
            settle_until: float | None = None
            while loop.time() < (settle_until if settle_until is not None else deadline):
                batches = await consumer.getmany(timeout_ms=200)
                values.extend(message.value for messages in batches.values() for message in messages)
                if settle_until is None and len(values) >= expected:
                    settle_until = loop.time() + settle_s
            return values
        finally:
            await consumer.stop()

    return asyncio.run(read())
