"""The transaction coordinator's storage and marker delivery on this broker.

`__transaction_state` is kept like `__consumer_offsets` (group_storage.py): created through the controller
and replicated, each broker coordinates the
transactional ids of the partitions it leads. Markers go to each partition's leader: written
directly when this broker leads the partition, else sent as WriteTxnMarkers over an inter-broker
connection (TLS and SASL as the replica fetchers use them).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from kio.schema.add_partitions_to_txn.v5.request import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from kio.schema.errors import ErrorCode
from kio.schema.write_txn_markers.v1.request import (
    WritableTxnMarker,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
)

from broker.config import BrokerConfig
from broker.context import BrokerState
from broker.groups.offsets_format import partition_for_group
from broker.groups.offsets_log import OFFSETS_TOPIC_NAME, OffsetsAppendError
from broker.handlers.txn_markers import write_marker_as_leader
from broker.metadata.coordinator_records import LogEntry
from broker.replication.peer_connection import PeerConnection, PeerConnectionError
from broker.server.group_storage import (
    LeadershipListener,
    PartitionLeaderLocator,
    append_and_commit,
    read_led,
    wait_until_committed,
)
from broker.topics import TRANSACTION_STATE_TOPIC, transaction_state_topic_configs
from broker.transactions.coordinator import (
    TransactionCoordinator,
    TransactionCoordinatorConfig,
    TransactionStateAppendError,
)
from broker.transactions.state import TopicPartition

log = logging.getLogger(__name__)

_TopicEntry = TypeVar("_TopicEntry")

# KIP-890: coordinator answers a producer should retry become NOT_ENOUGH_REPLICAS on Produce, as in Kafka
# (it makes clients retry without looking the leader up again).
_RETRIABLE_VERIFY_ERRORS = frozenset(
    {
        ErrorCode.not_coordinator,
        ErrorCode.coordinator_not_available,
        ErrorCode.coordinator_load_in_progress,
        ErrorCode.concurrent_transactions,
        ErrorCode.network_exception,
    }
)


class PartitionTransactionStateLog:
    """TransactionStateLog over `__transaction_state` through the partition layer (acks=all)."""

    def __init__(self, state: BrokerState, num_partitions: int, timeout_ms: int) -> None:
        self._state = state
        self.num_partitions = num_partitions
        self._timeout_s = timeout_ms / 1000

    async def append(self, partition: int, records: Sequence[tuple[bytes, bytes | None]]) -> int:
        try:
            return await append_and_commit(
                self._state, TRANSACTION_STATE_TOPIC, partition, records, self._timeout_s
            )
        except OffsetsAppendError as exc:
            raise TransactionStateAppendError(exc.error_code, str(exc)) from None

    def read(self, partition: int) -> Iterator[LogEntry]:
        return read_led(self._state, TRANSACTION_STATE_TOPIC, partition)

    async def wait_until_committed(self, partition: int) -> None:
        try:
            await wait_until_committed(self._state, TRANSACTION_STATE_TOPIC, partition)
        except OffsetsAppendError as exc:
            raise TransactionStateAppendError(exc.error_code, str(exc)) from None

    def coordinator_epoch(self, partition: int) -> int:
        led, _ = self._state.partitions.leader(TRANSACTION_STATE_TOPIC, partition)
        return led.leader_epoch if led is not None else -1


class PeerPool:
    """One inter-broker connection per peer for the coordinator's requests (markers, KIP-890
    verification), one request in flight on each; TLS and SASL as the replica fetchers use them."""

    def __init__(self, state: BrokerState, purpose: str = "transactions") -> None:
        self._state = state
        self._purpose = purpose
        self._peers: dict[int, PeerConnection] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    async def request(self, broker_id: int, body: Any) -> Any:
        """The peer's answer; raises PeerConnectionError when it cannot be had (the connection is
        dropped and the next request opens a new one)."""
        async with self._locks.setdefault(broker_id, asyncio.Lock()):
            connection = self._peer(broker_id)
            if connection is None:
                raise PeerConnectionError(f"broker {broker_id} has no known endpoint")
            try:
                return await connection.request(body)
            except (PeerConnectionError, OSError, TimeoutError) as exc:
                await self._drop(broker_id)
                raise PeerConnectionError(str(exc)) from exc

    async def request_or_none(self, broker_id: int, body: Any, purpose: str) -> Any | None:
        """The peer's answer, or None (logged) when it cannot be had: the caller answers
        NETWORK_EXCEPTION for the partitions it asked about, which the coordinator retries."""
        try:
            return await self.request(broker_id, body)
        except PeerConnectionError as exc:
            log.info("%s with broker %d failed: %s", purpose, broker_id, exc)
            return None

    def _peer(self, broker_id: int) -> PeerConnection | None:
        connection = self._peers.get(broker_id)
        if connection is not None:
            return connection
        replication = self._state.replication
        inter_broker = replication.config.inter_broker
        endpoint = replication.endpoint(broker_id, inter_broker.listener_name)
        if endpoint is None:
            return None
        connection = self._peers[broker_id] = PeerConnection(
            endpoint.host,
            endpoint.port,
            client_id=f"broker-{self._state.node_id}-{self._purpose}",
            # Kafka's request.timeout.ms: how long one WriteTxnMarkers or AddPartitionsToTxn may take.
            timeout_s=self._state.config.get_int("request.timeout.ms") / 1000,
            ssl_context=inter_broker.client_ssl_context(),
            sasl=inter_broker.sasl,
        )
        return connection

    async def _drop(self, broker_id: int) -> None:
        connection = self._peers.pop(broker_id, None)
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.close()

    async def close(self) -> None:
        for broker_id in list(self._peers):
            await self._drop(broker_id)


class _PeerClient:
    """The coordinator's side of a request to other brokers: the broker's state and its peers."""

    def __init__(self, state: BrokerState, peers: PeerPool) -> None:
        self._state = state
        self._peers = peers


class BrokerMarkerWriter(_PeerClient):
    """MarkerWriter: each partition's marker to its leader, this broker included."""

    async def write_markers(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        partitions: Sequence[TopicPartition],
    ) -> dict[TopicPartition, int]:
        state = self._state
        answers: dict[TopicPartition, int] = {}
        by_leader: dict[int, list[TopicPartition]] = {}
        for topic, index in partitions:
            if not state.partitions.knows(topic, index):
                # Deleted (or never created): nothing to mark, as Kafka drops such partitions.
                exists = state.metadata.get(topic) is not None
                answers[(topic, index)] = (
                    ErrorCode.unknown_topic_or_partition if exists else ErrorCode.unknown_topic_id
                )
                continue
            leader = state.partitions.leader_for(topic, index)
            if leader < 0:
                answers[(topic, index)] = ErrorCode.leader_not_available
            else:
                by_leader.setdefault(leader, []).append((topic, index))
        local = by_leader.pop(state.node_id, [])

        def request_for(tps: Sequence[TopicPartition]) -> WriteTxnMarkersRequest:
            return WriteTxnMarkersRequest(
                markers=(
                    WritableTxnMarker(
                        producer_id=producer_id,
                        producer_epoch=producer_epoch,
                        transaction_result=commit,
                        topics=_per_topic(
                            tps,
                            lambda name, indexes: WritableTxnMarkerTopic(
                                name=name, partition_indexes=indexes
                            ),
                        ),
                        coordinator_epoch=coordinator_epoch,
                    ),
                )
            )

        # Every leader at once: each write waits for its partition's ISR.
        results = await asyncio.gather(
            *(
                write_marker_as_leader(
                    state, topic, index, producer_id, producer_epoch, commit, coordinator_epoch
                )
                for topic, index in local
            ),
            *(self._send(leader, request_for(tps), tps) for leader, tps in by_leader.items()),
        )
        answers.update(zip(local, results[: len(local)], strict=True))
        for remote in results[len(local) :]:
            answers.update(remote)
        return answers

    async def _send(
        self, leader: int, request: WriteTxnMarkersRequest, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int]:
        response = await self._peers.request_or_none(leader, request, "WriteTxnMarkers")
        if response is None:
            return dict.fromkeys(partitions, ErrorCode.network_exception)
        return {
            tp: error
            for marker in response.markers
            for tp, error in _errors_by_partition(marker.topics, "partitions", "error_code").items()
        }

    async def close(self) -> None:
        await self._peers.close()


class CoordinatorTransactionVerifier(_PeerClient):
    """BrokerState.txn_verifier (KIP-890): asks the transactional id's coordinator whether the
    partitions are in the producer's ongoing transaction — directly when it is this broker,
    else with AddPartitionsToTxn v5 `verify_only` to the broker leading its state partition. With
    `add_partitions` (transaction version 2, Produce v12) the coordinator adds them instead
    (`verify_only` false), as Kafka's partition leaders do for a producer that no longer sends
    AddPartitionsToTxn itself."""

    async def verify(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Sequence[TopicPartition],
        *,
        add_partitions: bool = False,
        for_produce: bool = True,
    ) -> dict[TopicPartition, ErrorCode]:
        """Errors as Produce answers them (`_produce_error`), or as the coordinator gave them when not
        `for_produce` (TxnOffsetCommit maps them its own way)."""
        answer = (
            functools.partial(_produce_error, transaction_v2=add_partitions) if for_produce else ErrorCode
        )
        coordinator = self._state.transactions
        if coordinator is None:
            return dict.fromkeys(partitions, answer(ErrorCode.coordinator_not_available))
        # As Kafka: only a partition's first batch in a transaction is checked with the coordinator.
        partitions = [tp for tp in partitions if not self._already_open(tp, producer_id, producer_epoch)]
        if not partitions:
            return {}
        if coordinator.owns(transactional_id) and add_partitions:
            added = await coordinator.add_partitions(
                transactional_id, producer_id, producer_epoch, partitions
            )
            answers = dict.fromkeys(partitions, added)
        elif coordinator.owns(transactional_id):
            answers = coordinator.verify_partitions(transactional_id, producer_id, producer_epoch, partitions)
        else:
            answers = await self._ask_remote(
                coordinator, transactional_id, producer_id, producer_epoch, partitions, not add_partitions
            )
        return {tp: answer(error) for tp, error in answers.items()}

    def _already_open(self, tp: TopicPartition, producer_id: int, producer_epoch: int) -> bool:
        led, _ = self._state.partitions.leader(*tp)
        return led is not None and led.in_open_transaction(producer_id, producer_epoch)

    async def _ask_remote(
        self,
        coordinator: TransactionCoordinator,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Sequence[TopicPartition],
        verify_only: bool,
    ) -> dict[TopicPartition, int]:
        leader = self._state.partitions.leader_for(
            TRANSACTION_STATE_TOPIC, coordinator.partition_for(transactional_id)
        )
        if leader < 0 or leader == self._state.node_id:
            return dict.fromkeys(partitions, ErrorCode.not_coordinator)
        request = AddPartitionsToTxnRequest(
            transactions=(
                AddPartitionsToTxnTransaction(
                    transactional_id=transactional_id,
                    producer_id=producer_id,
                    producer_epoch=producer_epoch,
                    verify_only=verify_only,
                    topics=_per_topic(
                        partitions,
                        lambda name, indexes: AddPartitionsToTxnTopic(name=name, partitions=indexes),
                    ),
                ),
            )
        )
        response = await self._peers.request_or_none(
            leader, request, f"verifying the transaction of {transactional_id}"
        )
        if response is None:
            return dict.fromkeys(partitions, ErrorCode.network_exception)
        if response.error_code != ErrorCode.none:
            return dict.fromkeys(partitions, response.error_code)
        return {
            tp: error
            for result in response.results_by_transaction
            for tp, error in _errors_by_partition(
                result.topic_results, "results_by_partition", "partition_error_code"
            ).items()
        }


def _per_topic(
    partitions: Sequence[TopicPartition], entry: Callable[[str, tuple[int, ...]], _TopicEntry]
) -> tuple[_TopicEntry, ...]:
    """A request's topic entries: `entry(topic, its partition indexes)` for each topic, in order."""
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    return tuple(entry(topic, tuple(indexes)) for topic, indexes in by_topic.items())


def _errors_by_partition(
    topics: Iterable[Any], partitions_field: str, error_field: str
) -> dict[TopicPartition, int]:
    """Each partition's error code from an answer's topics, each listing its partitions."""
    return {
        (topic.name, partition.partition_index): getattr(partition, error_field)
        for topic in topics
        for partition in getattr(topic, partitions_field)
    }


def _produce_error(verification_error: int, *, transaction_v2: bool) -> ErrorCode:
    """What Produce answers for a verification error, as Kafka 4.2 does: coordinator trouble is retriable
    (NOT_ENOUGH_REPLICAS), except CONCURRENT_TRANSACTIONS when the leader adds the partition itself
    (transaction version 2), which the Produce handler retries and then passes on as it is (clients retry it
    and it says what happened); a fenced producer gets INVALID_PRODUCER_EPOCH (Produce has no
    PRODUCER_FENCED; clients treat INVALID_PRODUCER_EPOCH on Produce as fenced)."""
    if transaction_v2 and verification_error == ErrorCode.concurrent_transactions:
        return ErrorCode.concurrent_transactions
    if verification_error in _RETRIABLE_VERIFY_ERRORS:
        return ErrorCode.not_enough_replicas
    if verification_error == ErrorCode.producer_fenced:
        return ErrorCode.invalid_producer_epoch
    return ErrorCode(verification_error)


def transaction_state_topic_spec(config: BrokerConfig) -> dict[str, Any]:
    return {
        "name": TRANSACTION_STATE_TOPIC,
        "partitions": config.get_int("transaction.state.log.num.partitions"),
        "replication_factor": config.get_int("transaction.state.log.replication.factor"),
        "configs": transaction_state_topic_configs(config),
        "internal": True,
    }


def coordinator_config(config: BrokerConfig) -> TransactionCoordinatorConfig:
    return TransactionCoordinatorConfig(
        max_timeout_ms=config.get_int("transaction.max.timeout.ms"),
        id_expiration_ms=config.get_int("transactional.id.expiration.ms"),
        abort_timed_out_interval_ms=config.get_int(
            "transaction.abort.timed.out.transaction.cleanup.interval.ms"
        ),
        remove_expired_interval_ms=config.get_int(
            "transaction.remove.expired.transaction.cleanup.interval.ms"
        ),
    )


def _offsets_partition_for_group(state: BrokerState) -> Callable[[str], TopicPartition]:
    def locate(group_id: str) -> TopicPartition:
        count = (
            state.groups.log.num_partitions
            if state.groups is not None
            else state.config.offsets_topic_num_partitions
        )
        return OFFSETS_TOPIC_NAME, partition_for_group(group_id, count)

    return locate


def _producer_id_allocator(state: BrokerState) -> Callable[[], Awaitable[int]]:
    async def allocate() -> int:
        producer_id, _ = await state.cluster.init_producer(-1, -1)
        return producer_id

    return allocate


def open_transaction_coordinator(state: BrokerState) -> tuple[TransactionCoordinator, LeadershipListener]:
    """The broker's transaction coordinator and the metadata listener that moves transactional ids with
    the leadership of `__transaction_state` partitions (call it after the group coordinator's)."""
    config = state.config
    state_log = PartitionTransactionStateLog(
        state,
        config.get_int("transaction.state.log.num.partitions"),
        config.get_int("offsets.commit.timeout.ms"),
    )
    peers = PeerPool(state)
    coordinator = TransactionCoordinator(
        state_log,
        BrokerMarkerWriter(state, peers),
        _producer_id_allocator(state),
        _offsets_partition_for_group(state),
        coordinator_config(config),
    )
    state.txn_verifier = CoordinatorTransactionVerifier(state, peers)
    coordinator.locator = PartitionLeaderLocator(
        state, state_log, state.cluster, TRANSACTION_STATE_TOPIC, transaction_state_topic_spec
    )
    coordinator.start_sweeps()
    listener = LeadershipListener(coordinator, state_log, state.node_id, TRANSACTION_STATE_TOPIC)
    listener.on_image_loaded(state.partitions.assignments_of(TRANSACTION_STATE_TOPIC), [])
    return coordinator, listener
