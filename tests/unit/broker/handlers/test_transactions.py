"""The log side of transactions through the real dispatcher and broker state (ACLs on):
WriteTxnMarkers, transactional Produce (ACLs, the KIP-890 verifier hook), read_committed Fetch and
ListOffsets, DescribeProducers."""

from __future__ import annotations

import datetime
import itertools
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from kio.schema.describe_producers.v0 import request as describe_v0
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12 import request as fetch_v12
from kio.schema.list_offsets.v7 import request as list_offsets_v7
from kio.schema.produce.v9 import request as produce_v9
from kio.schema.produce.v12 import request as produce_v12
from kio.schema.write_txn_markers.v1 import request as markers_v1
from kio.static.primitive import i8, i16, i32, i32Timedelta, i64

from broker.auth.authorizer import AclBinding, Operation, PatternType, Permission, ResourceType
from broker.handlers.api_table import API_TABLE
from broker.metadata.security_records import CreateAclRecord
from broker.wire.records.batch import iter_batches
from broker.wire.records.control import read_txn_marker
from broker.wire.records.records import Record, build_batch, decode_records
from tests.unit.broker.server.test_dispatcher_replica_requests import AclBroker

ADMIN = "User:broker"
ALICE = "User:alice"
TOPIC = "payments"
TXN_ID = "payments-writer"
PID = 9001


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[AclBroker]:
    broker = AclBroker(tmp_path)
    # These tests drive the log side with a made-up producer; KIP-890 verification by the real
    # transaction coordinator is tested with it (tests/unit/broker/transactions).
    broker.state.txn_verifier = None
    broker.create_topic(TOPIC, 2)
    allow = [
        AclBinding(ResourceType.TOPIC, TOPIC, PatternType.LITERAL, ALICE, "*", op, Permission.ALLOW)
        for op in (Operation.WRITE, Operation.READ, Operation.DESCRIBE)
    ]
    broker.state.security.apply_records([CreateAclRecord(b.as_tuple()) for b in allow])
    yield broker
    broker.close()


def allow_transactional_id(broker: AclBroker) -> None:
    binding = AclBinding(
        ResourceType.TRANSACTIONAL_ID,
        TXN_ID,
        PatternType.LITERAL,
        ALICE,
        "*",
        Operation.WRITE,
        Permission.ALLOW,
    )
    broker.state.security.apply_records([CreateAclRecord(binding.as_tuple())])


def records(sequence: int, *values: bytes, transactional: bool = True, epoch: int = 0) -> bytes:
    return build_batch(
        [Record(key=None, value=value, timestamp=1_000) for value in values],
        producer_id=PID,
        producer_epoch=epoch,
        base_sequence=sequence,
        transactional=transactional,
    )


def produce(
    broker: AclBroker,
    data: bytes,
    *,
    partition: int = 0,
    transactional_id: str | None = TXN_ID,
    principal: str = ADMIN,
) -> Any:
    request = produce_v9.ProduceRequest(
        transactional_id=transactional_id,
        acks=i16(-1),
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=5)),
        topic_data=(
            produce_v9.TopicProduceData(
                name=TOPIC,
                partition_data=(produce_v9.PartitionProduceData(index=i32(partition), records=data),),
            ),
        ),
    )
    return broker.send(principal, request).responses[0].partition_responses[0]


def write_markers(
    broker: AclBroker,
    commit: bool,
    partitions: Sequence[int] = (0,),
    *,
    epoch: int = 0,
    principal: str = ADMIN,
) -> dict[int, ErrorCode]:
    request = markers_v1.WriteTxnMarkersRequest(
        markers=(
            markers_v1.WritableTxnMarker(
                producer_id=i64(PID),
                producer_epoch=i16(epoch),
                transaction_result=commit,
                topics=(
                    markers_v1.WritableTxnMarkerTopic(
                        name=TOPIC, partition_indexes=tuple(i32(p) for p in partitions)
                    ),
                ),
                coordinator_epoch=i32(1),
            ),
        )
    )
    (marker,) = broker.send(principal, request).markers
    assert marker.producer_id == PID
    return {int(p.partition_index): p.error_code for p in marker.topics[0].partitions}


def fetch(broker: AclBroker, isolation_level: int, offset: int = 0) -> Any:
    request = fetch_v12.FetchRequest(
        max_wait=i32Timedelta.parse(datetime.timedelta(0)),
        min_bytes=i32(0),
        isolation_level=i8(isolation_level),
        topics=(
            fetch_v12.FetchTopic(
                topic=TOPIC,
                partitions=(
                    fetch_v12.FetchPartition(
                        partition=i32(0), fetch_offset=i64(offset), partition_max_bytes=i32(1 << 20)
                    ),
                ),
            ),
        ),
        forgotten_topics_data=(),
    )
    return broker.send(ADMIN, request).responses[0].partitions[0]


def listed_offset(broker: AclBroker, isolation_level: int, timestamp: int = -1) -> int:
    request = list_offsets_v7.ListOffsetsRequest(
        replica_id=i32(-1),
        isolation_level=i8(isolation_level),
        topics=(
            list_offsets_v7.ListOffsetsTopic(
                name=TOPIC,
                partitions=(
                    list_offsets_v7.ListOffsetsPartition(partition_index=i32(0), timestamp=i64(timestamp)),
                ),
            ),
        ),
    )
    return int(broker.send(ADMIN, request).topics[0].partitions[0].offset)


def values_of(raw: bytes | None) -> list[bytes | None]:
    return [
        record.value
        for batch in iter_batches(raw or b"")
        if not batch.is_control
        for record in decode_records(batch)
    ]


def test_served_versions_are_kafka_4_2s() -> None:
    assert API_TABLE[27][:2] == (1, 2)
    assert API_TABLE[61][:2] == (0, 0)


def test_a_transaction_is_invisible_to_read_committed_until_its_commit_marker(broker: AclBroker) -> None:
    assert produce(broker, records(0, b"a", b"b")).error_code == ErrorCode.none
    uncommitted, committed = fetch(broker, 0), fetch(broker, 1)
    assert values_of(uncommitted.records) == [b"a", b"b"]
    assert (committed.high_watermark, committed.last_stable_offset) == (2, 0)
    assert values_of(committed.records) == []
    assert (listed_offset(broker, 0), listed_offset(broker, 1)) == (2, 0)
    # By timestamp too, read_committed finds nothing past the last stable offset (-1: none).
    assert (listed_offset(broker, 0, timestamp=1_000), listed_offset(broker, 1, timestamp=1_000)) == (0, -1)
    assert write_markers(broker, commit=True) == {0: ErrorCode.none}
    committed = fetch(broker, 1)
    assert committed.last_stable_offset == 3
    assert values_of(committed.records) == [b"a", b"b"]
    assert committed.aborted_transactions == ()
    (marker,) = [batch for batch in iter_batches(committed.records) if batch.is_control]
    assert read_txn_marker(marker) == (True, 1)
    assert listed_offset(broker, 1) == 3


def test_read_committed_gets_the_aborted_transactions_it_overlaps(broker: AclBroker) -> None:
    produce(broker, records(0, b"x"))
    assert write_markers(broker, commit=False) == {0: ErrorCode.none}
    answer = fetch(broker, 1)
    assert [(t.producer_id, t.first_offset) for t in answer.aborted_transactions] == [(PID, 0)]
    assert fetch(broker, 0).aborted_transactions is None  # read_uncommitted: null, as Kafka
    assert fetch(broker, 1, offset=2).aborted_transactions == ()


def test_write_txn_markers_needs_cluster_action(broker: AclBroker) -> None:
    produce(broker, records(0, b"x"))
    assert write_markers(broker, commit=True, principal=ALICE) == {0: ErrorCode.cluster_authorization_failed}
    assert broker.state.partitions.leader(TOPIC, 0)[0].log_end_offset == 1


def test_write_txn_markers_answers_each_partition(broker: AclBroker) -> None:
    produce(broker, records(0, b"x", epoch=3), partition=1)
    errors = write_markers(broker, commit=False, partitions=(0, 1, 7), epoch=3)
    assert errors == {0: ErrorCode.none, 1: ErrorCode.none, 7: ErrorCode.unknown_topic_or_partition}
    assert write_markers(broker, commit=False, partitions=(1,), epoch=2) == {
        1: ErrorCode.invalid_producer_epoch
    }


def test_transactional_produce_needs_write_on_the_transactional_id(broker: AclBroker) -> None:
    refused = produce(broker, records(0, b"x"), principal=ALICE)
    assert refused.error_code == ErrorCode.transactional_id_authorization_failed
    anonymous = produce(broker, records(0, b"x"), transactional_id=None, principal=ALICE)
    assert anonymous.error_code == ErrorCode.transactional_id_authorization_failed
    allow_transactional_id(broker)
    assert produce(broker, records(0, b"x"), principal=ALICE).error_code == ErrorCode.none


class RefusePartitionOne:
    """A transaction verifier (KIP-890) that knows only partition 0 is in the transaction."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int, list[tuple[str, int]]]] = []

    async def verify(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Sequence[tuple[str, int]],
        *,
        add_partitions: bool = False,
    ) -> Mapping[tuple[str, int], ErrorCode]:
        assert not add_partitions, "Produce v3-11 only verifies"
        self.calls.append((transactional_id, producer_id, producer_epoch, list(partitions)))
        return {(t, p): ErrorCode.none if p == 0 else ErrorCode.invalid_txn_state for t, p in partitions}


def test_the_transaction_verifier_is_consulted_before_appending(broker: AclBroker) -> None:
    verifier = RefusePartitionOne()
    broker.state.txn_verifier = verifier
    assert produce(broker, records(0, b"x", epoch=4), partition=1).error_code == ErrorCode.invalid_txn_state
    assert broker.state.partitions.leader(TOPIC, 1)[0].log_end_offset == 0
    assert produce(broker, records(0, b"y", epoch=4), partition=0).error_code == ErrorCode.none
    assert verifier.calls == [(TXN_ID, PID, 4, [(TOPIC, 1)]), (TXN_ID, PID, 4, [(TOPIC, 0)])]
    # Idempotent (non-transactional) produce is not verified.
    produce(broker, records(0, b"z", transactional=False), partition=1, transactional_id=None)
    assert len(verifier.calls) == 2


class BusyWithPartitionOne:
    """A transaction coordinator (KIP-890 part 2) that adds partition 0 but keeps answering
    CONCURRENT_TRANSACTIONS for partition 1, as while a previous transaction's markers cannot be written."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, list[tuple[str, int]]]] = []

    async def verify(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Sequence[tuple[str, int]],
        *,
        add_partitions: bool = False,
    ) -> Mapping[tuple[str, int], ErrorCode]:
        assert add_partitions, "transaction version 2 Produce adds the partitions"
        self.calls.append((time.monotonic(), list(partitions)))
        return {
            (t, p): ErrorCode.none if p == 0 else ErrorCode.concurrent_transactions for t, p in partitions
        }


def test_a_v2_produce_asks_a_busy_coordinator_again_within_the_retry_window(broker: AclBroker) -> None:
    """Kafka's add.partitions.to.txn.retry.backoff.ms (20) between tries, for at most
    add.partitions.to.txn.retry.backoff.max.ms (100) in all; then the busy partition is answered
    CONCURRENT_TRANSACTIONS and the other one is appended."""
    allow_transactional_id(broker)
    verifier = BusyWithPartitionOne()
    broker.state.txn_verifier = verifier
    batch = {index: records(0, b"v%d" % index, epoch=3) for index in (0, 1)}
    request = produce_v12.ProduceRequest(
        transactional_id=TXN_ID,
        acks=i16(-1),
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=5)),
        topic_data=(
            produce_v12.TopicProduceData(
                name=TOPIC,
                partition_data=tuple(
                    produce_v12.PartitionProduceData(index=i32(index), records=batch[index])
                    for index in (0, 1)
                ),
            ),
        ),
    )
    started = time.monotonic()
    answer = broker.send(ADMIN, request).responses[0].partition_responses
    took = time.monotonic() - started
    assert [p.error_code for p in answer] == [ErrorCode.none, ErrorCode.concurrent_transactions]
    assert broker.state.partitions.leader(TOPIC, 1)[0].log_end_offset == 0
    first, *retries = verifier.calls
    assert first[1] == [(TOPIC, 0), (TOPIC, 1)]
    # Only the busy partition is asked again, each time after the backoff, until the window has passed.
    assert 1 <= len(retries) <= 5
    assert all(partitions == [(TOPIC, 1)] for _, partitions in retries)
    asked_at = [at for at, _ in verifier.calls]
    assert all(later - earlier >= 0.019 for earlier, later in itertools.pairwise(asked_at))
    # The last answer is given once the 100 ms window has passed, and not much later.
    assert asked_at[-1] - started >= 0.1
    assert took < 2


def test_describe_producers_shows_the_open_transaction(broker: AclBroker) -> None:
    produce(broker, records(0, b"a", b"b", epoch=2))
    request = describe_v0.DescribeProducersRequest(
        topics=(describe_v0.TopicRequest(name=TOPIC, partition_indexes=(i32(0), i32(1))),)
    )
    first, second = broker.send(ADMIN, request).topics[0].partitions
    (producer,) = first.active_producers
    assert (producer.producer_id, producer.producer_epoch, producer.last_sequence) == (PID, 2, 1)
    assert (producer.coordinator_epoch, producer.current_txn_start_offset) == (-1, 0)
    assert second.active_producers == ()
    write_markers(broker, commit=True, epoch=2)
    (producer,) = broker.send(ADMIN, request).topics[0].partitions[0].active_producers
    assert (producer.coordinator_epoch, producer.current_txn_start_offset) == (1, -1)
    denied = broker.send("User:mallory", request).topics[0].partitions[0]
    assert denied.error_code == ErrorCode.topic_authorization_failed
