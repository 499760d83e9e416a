"""A transactional id's state, as Kafka's `TransactionMetadata` keeps it."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from broker.transactions.state_format import TransactionLogValue

# The highest epoch a producer id may reach; past it the coordinator hands out a new producer id.
MAX_PRODUCER_EPOCH = 32767


class TxnState(IntEnum):
    """Kafka's TransactionState, with the ids it writes to `__transaction_state`."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    # In memory only: an InitProducerId is fencing the producer and aborting its transaction.
    PREPARE_EPOCH_FENCE = 7


STATE_NAMES = {
    TxnState.EMPTY: "Empty",
    TxnState.ONGOING: "Ongoing",
    TxnState.PREPARE_COMMIT: "PrepareCommit",
    TxnState.PREPARE_ABORT: "PrepareAbort",
    TxnState.COMPLETE_COMMIT: "CompleteCommit",
    TxnState.COMPLETE_ABORT: "CompleteAbort",
    TxnState.DEAD: "Dead",
    TxnState.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}
STATES_BY_NAME = {name: state for state, name in STATE_NAMES.items()}

# States in which no transaction is open: a new one may start, the id may expire.
COMPLETED = frozenset({TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT})
PREPARED = frozenset({TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT})

TopicPartition = tuple[str, int]


@dataclass(eq=False)
class TransactionMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: set[TopicPartition] = field(default_factory=set)
    start_ms: int = -1
    last_update_ms: int = -1
    # The producer id before the last one (KIP-360: a retried InitProducerId is recognised by it).
    previous_producer_id: int = -1
    # The epoch the producer had before the last bump: a retried InitProducerId is answered again.
    last_producer_epoch: int = -1
    # Transaction version 2 (KIP-890 part 2): the producer id the producer moves to once the transaction that
    # exhausted its epoch completes (-1: none), and the version of the client that ended the transaction.
    next_producer_id: int = -1
    client_transaction_version: int = 0
    # A write of this id's state is in flight: other requests for it get CONCURRENT_TRANSACTIONS.
    pending: bool = False

    def to_value(self, state: TxnState | None = None) -> TransactionLogValue:
        written = self.state if state is None else state
        return TransactionLogValue(
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            timeout_ms=self.timeout_ms,
            status=int(written),
            partitions=_grouped(self.partitions),
            last_update_ms=self.last_update_ms,
            start_ms=self.start_ms,
            previous_producer_id=self.previous_producer_id,
            next_producer_id=self.next_producer_id,
            client_transaction_version=self.client_transaction_version,
        )

    @classmethod
    def from_value(cls, transactional_id: str, value: TransactionLogValue) -> TransactionMetadata:
        return cls(
            transactional_id=transactional_id,
            producer_id=value.producer_id,
            producer_epoch=value.producer_epoch,
            timeout_ms=value.timeout_ms,
            state=TxnState(value.status),
            partitions={(topic, p) for topic, indexes in value.partitions for p in indexes},
            start_ms=value.start_ms,
            last_update_ms=value.last_update_ms,
            previous_producer_id=value.previous_producer_id,
            next_producer_id=value.next_producer_id,
            client_transaction_version=value.client_transaction_version,
        )


def _grouped(partitions: set[TopicPartition]) -> tuple[tuple[str, tuple[int, ...]], ...]:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(partitions):
        by_topic.setdefault(topic, []).append(partition)
    return tuple((topic, tuple(indexes)) for topic, indexes in by_topic.items())
