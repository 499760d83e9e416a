"""Transactions on a cluster: the open ones the coordinators know (ListTransactions, DescribeTransactions),
the producers the partitions know (DescribeProducers), the hanging ones where the two disagree, and
aborting a hanging one the way `kafka-transactions.sh abort` does (WriteTxnMarkers). librdkafka has none of
these admin calls."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from confluent_kafka import KafkaException
from kio.schema.describe_producers.v0.request import DescribeProducersRequest, TopicRequest
from kio.schema.describe_transactions.v0.request import DescribeTransactionsRequest
from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest
from kio.schema.list_transactions.v1.request import ListTransactionsRequest
from kio.schema.write_txn_markers.v1.request import (
    WritableTxnMarker,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
)
from kio.static.primitive import i8, i16, i32, i64

from controlplane.kafka.cluster import describe_cluster
from controlplane.kafka.connection import (
    DEFAULT_TIMEOUT_SECONDS,
    Connection,
    admin_client,
    protocol_connection,
    raise_for_code,
    raise_typed,
)
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.transaction_answers import read_described_transactions

TRANSACTION_COORDINATOR = i8(1)


@dataclass(frozen=True)
class TransactionListing:
    """One transactional id a coordinator knows, as ListTransactions tells it."""

    transactional_id: str
    producer_id: int
    state: str
    coordinator_id: int


@dataclass(frozen=True)
class TransactionDescription:
    """One transactional id's current transaction, as its coordinator describes it."""

    transactional_id: str
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    # None while no transaction is open.
    started_at: datetime | None
    partitions: list[tuple[str, int]]
    coordinator_id: int


@dataclass(frozen=True)
class ProducerOnPartition:
    """A producer a partition's leader keeps state for; `open_transaction_offset` is the first offset of
    its open transaction on the partition (-1: none)."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp_ms: int
    coordinator_epoch: int
    open_transaction_offset: int


def list_transactions(
    connection: Connection,
    *,
    states: Iterable[str] = (),
    longer_than_ms: int = -1,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> list[TransactionListing]:
    """Every transactional id of every broker's coordinator, optionally only in the given states and
    open longer than `longer_than_ms`."""
    listings = []
    request = ListTransactionsRequest(state_filters=tuple(states), duration_filter=i64(longer_than_ms))
    for node in describe_cluster(connection, timeout_seconds=timeout_seconds).brokers:
        with protocol_connection(connection, timeout_seconds, f"{node.host}:{node.port}") as wire:
            response = wire.request(request)
        raise_for_code(int(response.error_code), None, "ListTransactions")
        listings.extend(
            TransactionListing(
                transactional_id=str(each.transactional_id),
                producer_id=int(each.producer_id),
                state=each.transaction_state,
                coordinator_id=node.node_id,
            )
            for each in response.transaction_states
        )
    return sorted(listings, key=lambda listing: listing.transactional_id)


def describe_transactions(
    connection: Connection,
    transactional_ids: Iterable[str],
    *,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> list[TransactionDescription]:
    """Each transactional id's transaction, asked of its coordinator (FindCoordinator key type 1)."""
    ids = sorted(set(transactional_ids))
    if not ids:
        return []
    with protocol_connection(connection, timeout_seconds) as wire:
        found = wire.request(
            FindCoordinatorRequest(key_type=TRANSACTION_COORDINATOR, coordinator_keys=tuple(ids))
        )
    by_coordinator: dict[tuple[int, str, int], list[str]] = defaultdict(list)
    for coordinator in found.coordinators:
        raise_for_code(int(coordinator.error_code), coordinator.error_message, "FindCoordinator")
        address = (int(coordinator.node_id), coordinator.host, int(coordinator.port))
        by_coordinator[address].append(coordinator.key)
    descriptions = []
    for (node_id, host, port), keys in by_coordinator.items():
        with protocol_connection(connection, timeout_seconds, f"{host}:{port}") as wire:
            frame = wire.request_frame(DescribeTransactionsRequest(transactional_ids=tuple(keys)))
        response = read_described_transactions(frame)
        for state in response.transaction_states:
            raise_for_code(int(state.error_code), None, f"DescribeTransactions of {state.transactional_id}")
            start_ms = int(state.transaction_start_time)
            descriptions.append(
                TransactionDescription(
                    transactional_id=str(state.transactional_id),
                    state=state.transaction_state,
                    producer_id=int(state.producer_id),
                    producer_epoch=int(state.producer_epoch),
                    timeout_ms=int(state.transaction_timeout),
                    started_at=datetime.fromtimestamp(start_ms / 1000, UTC) if start_ms >= 0 else None,
                    partitions=sorted(
                        (topic.topic, int(p)) for topic in state.topics for p in topic.partitions
                    ),
                    coordinator_id=node_id,
                )
            )
    return sorted(descriptions, key=lambda description: description.transactional_id)


def _leaders(
    connection: Connection, topics: Iterable[str] | None, timeout_seconds: float
) -> dict[int, dict[str, list[int]]]:
    """Partitions by their leader's node id: of the given topics, else of every topic."""
    admin = admin_client(connection, timeout_seconds)
    try:
        metadata = admin.list_topics(timeout=timeout_seconds)
    except KafkaException as error:
        raise_typed(error.args[0] if error.args else None, "Metadata request failed")
    wanted = set(topics) if topics is not None else None
    by_leader: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for name, topic in metadata.topics.items():
        if wanted is not None and name not in wanted:
            continue
        for partition in topic.partitions.values():
            if partition.leader >= 0:
                by_leader[partition.leader][name].append(partition.id)
    return by_leader


def describe_producers(
    connection: Connection,
    *,
    topics: Iterable[str] | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> list[ProducerOnPartition]:
    """The producers each partition's leader keeps state for, over the given topics (else all)."""
    nodes = {
        node.node_id: node for node in describe_cluster(connection, timeout_seconds=timeout_seconds).brokers
    }
    producers = []
    for leader, partitions in _leaders(connection, topics, timeout_seconds).items():
        node = nodes[leader]
        request = DescribeProducersRequest(
            topics=tuple(
                TopicRequest(name=name, partition_indexes=tuple(i32(p) for p in sorted(numbers)))
                for name, numbers in sorted(partitions.items())
            )
        )
        with protocol_connection(connection, timeout_seconds, f"{node.host}:{node.port}") as wire:
            response = wire.request(request)
        for topic in response.topics:
            for partition in topic.partitions:
                # A partition that moved since the metadata was read is left out, not failed.
                if int(partition.error_code) != 0:
                    continue
                producers.extend(
                    ProducerOnPartition(
                        topic=str(topic.name),
                        partition=int(partition.partition_index),
                        producer_id=int(state.producer_id),
                        producer_epoch=int(state.producer_epoch),
                        last_sequence=int(state.last_sequence),
                        last_timestamp_ms=int(state.last_timestamp),
                        coordinator_epoch=int(state.coordinator_epoch),
                        open_transaction_offset=int(state.current_txn_start_offset),
                    )
                    for state in partition.active_producers
                )
    return producers


def find_hanging_transactions(
    connection: Connection,
    *,
    now_ms: int,
    max_transaction_timeout_ms: int,
    topics: Iterable[str] | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> list[ProducerOnPartition]:
    """Open transactions on partitions that no coordinator will finish (kafka-transactions.sh
    find-hanging), over the given topics (else all): see `hanging_among`."""
    stale = stale_open_transactions(
        describe_producers(connection, topics=topics, timeout_seconds=timeout_seconds),
        now_ms=now_ms,
        max_transaction_timeout_ms=max_transaction_timeout_ms,
    )
    if not stale:
        return []
    producer_ids = {producer.producer_id for producer in stale}
    open_ids = [
        listing.transactional_id
        for listing in list_transactions(connection, timeout_seconds=timeout_seconds)
        if listing.producer_id in producer_ids
    ]
    return hanging_among(stale, describe_transactions(connection, open_ids, timeout_seconds=timeout_seconds))


def stale_open_transactions(
    producers: Iterable[ProducerOnPartition], *, now_ms: int, max_transaction_timeout_ms: int
) -> list[ProducerOnPartition]:
    """Producers with a transaction open on a partition whose last write is older than the longest
    timeout any transaction may have: a live transaction would have been finished or timed out by now."""
    return [
        producer
        for producer in producers
        if producer.open_transaction_offset >= 0
        and producer.last_timestamp_ms >= 0
        and now_ms - producer.last_timestamp_ms > max_transaction_timeout_ms
    ]


def hanging_among(
    stale: Iterable[ProducerOnPartition], coordinators_view: Iterable[TransactionDescription]
) -> list[ProducerOnPartition]:
    """The stale open transactions that no coordinator has open on that partition for that producer:
    nobody will ever write their marker."""
    still_open = {
        (description.producer_id, topic, partition)
        for description in coordinators_view
        if description.state in ("Ongoing", "PrepareCommit", "PrepareAbort")
        for topic, partition in description.partitions
    }
    return [p for p in stale if (p.producer_id, p.topic, p.partition) not in still_open]


def abort_transaction(
    connection: Connection,
    *,
    topic: str,
    partition: int,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """Writes an abort marker for the producer's open transaction on one partition, at its leader —
    what `kafka-transactions.sh abort` does for a hanging transaction. Needs ClusterAction."""
    leaders = _leaders(connection, [topic], timeout_seconds)
    leader = next((node_id for node_id, parts in leaders.items() if partition in parts.get(topic, [])), None)
    if leader is None:
        raise KafkaGatewayError("LEADER_NOT_AVAILABLE", f"{topic}-{partition} has no leader")
    nodes = {
        node.node_id: node for node in describe_cluster(connection, timeout_seconds=timeout_seconds).brokers
    }
    request = WriteTxnMarkersRequest(
        markers=(
            WritableTxnMarker(
                producer_id=i64(producer_id),
                producer_epoch=i16(producer_epoch),
                transaction_result=False,
                topics=(WritableTxnMarkerTopic(name=topic, partition_indexes=(i32(partition),)),),
                coordinator_epoch=i32(coordinator_epoch),
            ),
        )
    )
    node = nodes[leader]
    with protocol_connection(connection, timeout_seconds, f"{node.host}:{node.port}") as wire:
        response = wire.request(request)
    for marker in response.markers:
        for result_topic in marker.topics:
            for result in result_topic.partitions:
                raise_for_code(
                    int(result.error_code), None, f"aborting the transaction on {topic}-{partition}"
                )
