"""The transaction APIs through the real dispatcher and broker state with ACLs on: TransactionalId
authorization, the versions that get INVALID_PRODUCER_EPOCH instead of PRODUCER_FENCED (KIP-588),
the broker-only batched AddPartitionsToTxn, DescribeTransactions and ListTransactions."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kio.schema.add_partitions_to_txn.v1 import request as add_v1
from kio.schema.add_partitions_to_txn.v3 import request as add_v3
from kio.schema.add_partitions_to_txn.v4 import request as add_v4
from kio.schema.describe_transactions.v0 import request as describe_v0
from kio.schema.end_txn.v3 import request as end_v3
from kio.schema.end_txn.v5 import request as end_v5
from kio.schema.errors import ErrorCode
from kio.schema.init_producer_id.v4 import request as init_v4
from kio.schema.list_transactions.v1 import request as list_v1
from kio.schema.produce.v9 import request as produce_v9
from kio.schema.produce.v12 import request as produce_v12
from kio.schema.txn_offset_commit.v5 import request as txn_offset_commit_v5
from kio.static.primitive import i16, i32, i32Timedelta, i64

from broker.auth.authorizer import AclBinding, Operation, PatternType, Permission, ResourceType
from broker.metadata.security_records import CreateAclRecord
from broker.wire.records.records import Record, build_batch
from tests.unit.broker.server.test_dispatcher_replica_requests import AclBroker

ADMIN = "User:broker"
ALICE = "User:alice"
TOPIC = "orders"
TXN_ID = "orders-writer"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[AclBroker]:
    broker = AclBroker(tmp_path)
    broker.create_topic(TOPIC, 2)
    allow(broker, ResourceType.TOPIC, TOPIC, Operation.WRITE)
    yield broker
    broker.close()


def allow(broker: AclBroker, resource: ResourceType, name: str, operation: Operation) -> None:
    binding = AclBinding(resource, name, PatternType.LITERAL, ALICE, "*", operation, Permission.ALLOW)
    broker.state.security.apply_records([CreateAclRecord(binding.as_tuple())])


def init(broker: AclBroker, principal: str = ALICE, timeout_ms: int = 60_000) -> Any:
    return broker.send(
        principal,
        init_v4.InitProducerIdRequest(
            transactional_id=TXN_ID,
            transaction_timeout=i32Timedelta.parse(datetime.timedelta(milliseconds=timeout_ms)),
            producer_id=i64(-1),
            producer_epoch=i16(-1),
        ),
    )


def add_partition(broker: AclBroker, producer_id: int, epoch: int, *, version: int = 3) -> ErrorCode:
    schema = add_v3 if version == 3 else add_v1
    answer = broker.send(
        ALICE,
        schema.AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=TXN_ID,
            v3_and_below_producer_id=i64(producer_id),
            v3_and_below_producer_epoch=i16(epoch),
            v3_and_below_topics=(schema.AddPartitionsToTxnTopic(name=TOPIC, partitions=(i32(0),)),),
        ),
    )
    return answer.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code


def test_init_producer_id_needs_write_on_the_transactional_id(broker: AclBroker) -> None:
    assert init(broker).error_code == ErrorCode.transactional_id_authorization_failed
    allow(broker, ResourceType.TRANSACTIONAL_ID, TXN_ID, Operation.WRITE)
    answer = init(broker)
    assert answer.error_code == ErrorCode.none
    assert answer.producer_epoch == 0


def test_a_too_long_transaction_timeout_is_refused(broker: AclBroker) -> None:
    allow(broker, ResourceType.TRANSACTIONAL_ID, TXN_ID, Operation.WRITE)
    assert init(broker, timeout_ms=900_001).error_code == ErrorCode.invalid_transaction_timeout


def test_a_fenced_producer_gets_the_error_its_version_knows(broker: AclBroker) -> None:
    allow(broker, ResourceType.TRANSACTIONAL_ID, TXN_ID, Operation.WRITE)
    old = init(broker)
    assert init(broker).producer_epoch == 1
    assert add_partition(broker, old.producer_id, 0, version=3) == ErrorCode.producer_fenced
    assert add_partition(broker, old.producer_id, 0, version=1) == ErrorCode.invalid_producer_epoch


def test_commit_then_describe_and_list(broker: AclBroker) -> None:
    allow(broker, ResourceType.TRANSACTIONAL_ID, TXN_ID, Operation.WRITE)
    producer = init(broker)
    assert add_partition(broker, producer.producer_id, 0) == ErrorCode.none

    # (An unknown id is answered with start time -1, as Kafka does, which kio's decoder refuses to
    # read back: the coordinator's answer for it is checked in test_coordinator.py.)
    described = broker.send(ADMIN, describe_v0.DescribeTransactionsRequest(transactional_ids=(TXN_ID,)))
    (ongoing,) = described.transaction_states
    assert (ongoing.error_code, ongoing.transaction_state) == (ErrorCode.none, "Ongoing")
    assert [(t.topic, tuple(t.partitions)) for t in ongoing.topics] == [(TOPIC, (0,))]
    assert ongoing.transaction_timeout == datetime.timedelta(seconds=60)

    ended = broker.send(
        ALICE,
        end_v3.EndTxnRequest(
            transactional_id=TXN_ID,
            producer_id=i64(producer.producer_id),
            producer_epoch=i16(producer.producer_epoch),
            committed=True,
        ),
    )
    assert ended.error_code == ErrorCode.none
    broker.loop.run_until_complete(broker.state.transactions.drain())  # the markers' round

    listed = broker.send(
        ADMIN,
        list_v1.ListTransactionsRequest(state_filters=("CompleteCommit", "Nonsense"), producer_id_filters=()),
    )
    assert [(t.transactional_id, t.transaction_state) for t in listed.transaction_states] == [
        (TXN_ID, "CompleteCommit")
    ]
    assert listed.unknown_state_filters == ("Nonsense",)
    # Alice may write her transactional id, which lets her describe it; others see nothing.
    assert (
        len(
            broker.send(
                ALICE, list_v1.ListTransactionsRequest(state_filters=(), producer_id_filters=())
            ).transaction_states
        )
        == 1
    )
    assert (
        broker.send(
            "User:mallory", list_v1.ListTransactionsRequest(state_filters=(), producer_id_filters=())
        ).transaction_states
        == ()
    )


def test_the_batched_form_is_for_brokers_only(broker: AclBroker) -> None:
    request = add_v4.AddPartitionsToTxnRequest(
        transactions=(
            add_v4.AddPartitionsToTxnTransaction(
                transactional_id=TXN_ID,
                producer_id=i64(1),
                producer_epoch=i16(0),
                verify_only=True,
                topics=(add_v4.AddPartitionsToTxnTopic(name=TOPIC, partitions=(i32(0),)),),
            ),
        )
    )
    assert broker.send(ALICE, request).error_code == ErrorCode.cluster_authorization_failed
    answer = broker.send(ADMIN, request)
    assert answer.error_code == ErrorCode.none
    result = answer.results_by_transaction[0].topic_results[0].results_by_partition[0]
    assert result.partition_error_code == ErrorCode.invalid_producer_id_mapping


def produce(broker: AclBroker, producer_id: int, epoch: int) -> ErrorCode:
    batch = build_batch(
        [Record(key=None, value=b"v", timestamp=1_000)],
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=0,
        transactional=True,
    )
    answer = broker.send(
        ALICE,
        produce_v9.ProduceRequest(
            transactional_id=TXN_ID,
            acks=i16(-1),
            timeout=i32Timedelta.parse(datetime.timedelta(seconds=5)),
            topic_data=(
                produce_v9.TopicProduceData(
                    name=TOPIC, partition_data=(produce_v9.PartitionProduceData(index=i32(0), records=batch),)
                ),
            ),
        ),
    )
    return answer.responses[0].partition_responses[0].error_code


def test_produce_is_verified_with_the_coordinator(broker: AclBroker) -> None:
    allow(broker, ResourceType.TRANSACTIONAL_ID, TXN_ID, Operation.WRITE)
    producer = init(broker)
    # KIP-890: a partition not added to the transaction is refused.
    assert produce(broker, producer.producer_id, 0) == ErrorCode.invalid_txn_state
    assert add_partition(broker, producer.producer_id, 0) == ErrorCode.none
    assert produce(broker, producer.producer_id, 0) == ErrorCode.none
    # Later batches of the open transaction are not checked again (the coordinator could be away).
    coordinator = broker.state.transactions
    partition = coordinator.partition_for(TXN_ID)
    coordinator.unload_partition(partition)
    assert produce(broker, producer.producer_id, 0) == ErrorCode.none  # the log answers it (a duplicate)

    async def reload() -> None:
        loading = coordinator.load_partition(partition)
        assert loading is not None
        await loading

    broker.loop.run_until_complete(reload())
    # A fenced producer's batch gets INVALID_PRODUCER_EPOCH (Produce has no PRODUCER_FENCED), which
    # clients treat as fatal.
    assert init(broker).error_code == ErrorCode.concurrent_transactions  # aborting the open transaction
    broker.loop.run_until_complete(broker.state.transactions.drain())
    assert init(broker).producer_epoch == 2
    assert produce(broker, producer.producer_id, 0) == ErrorCode.invalid_producer_epoch


def produce_v2(broker: AclBroker, producer_id: int, epoch: int) -> ErrorCode:
    """A transaction version 2 Produce (v12): no AddPartitionsToTxn before it, the leader adds the partition."""
    batch = build_batch(
        [Record(key=None, value=b"v", timestamp=1_000)],
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=0,
        transactional=True,
    )
    answer = broker.send(
        ALICE,
        produce_v12.ProduceRequest(
            transactional_id=TXN_ID,
            acks=i16(-1),
            timeout=i32Timedelta.parse(datetime.timedelta(seconds=5)),
            topic_data=(
                produce_v12.TopicProduceData(
                    name=TOPIC,
                    partition_data=(produce_v12.PartitionProduceData(index=i32(0), records=batch),),
                ),
            ),
        ),
    )
    return answer.responses[0].partition_responses[0].error_code


def commit_v2(broker: AclBroker, producer_id: int, epoch: int) -> Any:
    """EndTxn v5: answered once PrepareCommit is written; the markers are written after the answer."""
    ended = broker.send(
        ALICE,
        end_v5.EndTxnRequest(
            transactional_id=TXN_ID, producer_id=i64(producer_id), producer_epoch=i16(epoch), committed=True
        ),
    )
    assert (ended.error_code, ended.producer_epoch) == (ErrorCode.none, epoch + 1)
    assert broker.state.transactions.describe(TXN_ID)[1].state == "PrepareCommit"
    return ended


def test_a_v2_produce_right_after_commit_waits_for_the_markers_instead_of_failing(broker: AclBroker) -> None:
    """Issue #36: the next transaction's first Produce, sent while the previous commit's markers are written,
    is retried by the leader (add.partitions.to.txn.retry.backoff.ms) and appended, as in Kafka; answering
    NOT_ENOUGH_REPLICAS at once cost franz-go its 250 ms retry backoff on every transaction."""
    allow(broker, ResourceType.TRANSACTIONAL_ID, TXN_ID, Operation.WRITE)
    producer = init(broker)
    assert produce_v2(broker, producer.producer_id, 0) == ErrorCode.none
    commit_v2(broker, producer.producer_id, 0)
    assert produce_v2(broker, producer.producer_id, 1) == ErrorCode.none
    found = broker.state.transactions.describe(TXN_ID)[1]
    assert (found.state, found.producer_epoch) == ("Ongoing", 1)


def test_a_v2_produce_answers_concurrent_transactions_once_the_retry_window_is_spent(tmp_path: Path) -> None:
    """With no retry window (add.partitions.to.txn.retry.backoff.max.ms=0) the coordinator's first answer is
    the Produce's: transaction version 2 passes CONCURRENT_TRANSACTIONS on as Kafka 4.2 does (version 1
    verification turns it into NOT_ENOUGH_REPLICAS)."""
    broker = AclBroker(tmp_path, {"add.partitions.to.txn.retry.backoff.max.ms": "0"})
    try:
        broker.create_topic(TOPIC, 2)
        allow(broker, ResourceType.TOPIC, TOPIC, Operation.WRITE)
        allow(broker, ResourceType.TRANSACTIONAL_ID, TXN_ID, Operation.WRITE)
        producer = init(broker)
        assert produce_v2(broker, producer.producer_id, 0) == ErrorCode.none
        commit_v2(broker, producer.producer_id, 0)
        assert produce_v2(broker, producer.producer_id, 1) == ErrorCode.concurrent_transactions
    finally:
        broker.close()


def test_txn_offset_commit_while_the_last_commit_completes_is_retriable(broker: AclBroker) -> None:
    """Transaction version 2: the next transaction's TxnOffsetCommit adds the group's offsets partition itself.
    Sent while the previous commit's markers are still being written, it is answered as Kafka answers it,
    CONCURRENT_TRANSACTIONS (clients retry it), not Produce's NOT_ENOUGH_REPLICAS, which franz-go's
    TestTxnEtl took as fatal."""
    allow(broker, ResourceType.TRANSACTIONAL_ID, TXN_ID, Operation.WRITE)
    allow(broker, ResourceType.GROUP, "etl", Operation.READ)
    allow(broker, ResourceType.TOPIC, TOPIC, Operation.READ)
    producer = init(broker)
    assert add_partition(broker, producer.producer_id, 0) == ErrorCode.none
    ended = broker.send(
        ALICE,
        end_v5.EndTxnRequest(
            transactional_id=TXN_ID,
            producer_id=i64(producer.producer_id),
            producer_epoch=i16(0),
            committed=True,
        ),
    )
    assert (ended.error_code, ended.producer_epoch) == (ErrorCode.none, 1)
    assert broker.state.transactions.describe(TXN_ID)[1].state == "PrepareCommit"
    answer = broker.send(
        ALICE,
        txn_offset_commit_v5.TxnOffsetCommitRequest(
            transactional_id=TXN_ID,
            group_id="etl",
            producer_id=i64(producer.producer_id),
            producer_epoch=i16(1),
            topics=(
                txn_offset_commit_v5.TxnOffsetCommitRequestTopic(
                    name=TOPIC,
                    partitions=(
                        txn_offset_commit_v5.TxnOffsetCommitRequestPartition(
                            partition_index=i32(0), committed_offset=i64(5), committed_metadata=None
                        ),
                    ),
                ),
            ),
        ),
    )
    assert answer.topics[0].partitions[0].error_code == ErrorCode.concurrent_transactions
