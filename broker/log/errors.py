"""Typed errors of the log layer, each carrying its Kafka error code (`StorageError`'s `code`)."""

from kio.schema.errors import ErrorCode

from broker.wire.records.errors import StorageError


class OffsetOutOfRangeError(StorageError, code=ErrorCode.offset_out_of_range):
    """A fetch position, or a DeleteRecords offset, outside the log."""


class OutOfOrderSequenceError(StorageError, code=ErrorCode.out_of_order_sequence_number):
    """An idempotent producer's batch does not follow its last sequence number."""


class InvalidProducerEpochError(StorageError, code=ErrorCode.invalid_producer_epoch):
    """A producer's batch or marker carries an epoch older than the partition has seen (a zombie)."""


class UnknownProducerIdError(StorageError, code=ErrorCode.unknown_producer_id):
    """The partition has no state for the producer and its batch does not start a sequence."""


class InvalidConfigError(StorageError, code=ErrorCode.invalid_config):
    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"invalid value for {name}: {reason}")
        self.name = name
        self.reason = reason


class LogStorageError(StorageError, code=ErrorCode.kafka_storage_error):
    """The disk failed under us (I/O error): KAFKA_STORAGE_ERROR."""


class InvalidTxnStateError(StorageError, code=ErrorCode.invalid_txn_state):
    """A batch the producer's transaction state does not allow (non-transactional inside its open one)."""


class TransactionCoordinatorFencedError(StorageError, code=ErrorCode.transaction_coordinator_fenced):
    """A marker from a coordinator older than one the partition has already heard from."""


class LogDirNotFoundError(StorageError, code=ErrorCode.log_dir_not_found):
    """AlterReplicaLogDirs named a directory that is not one of log.dirs."""


class ReplicaNotAvailableError(StorageError, code=ErrorCode.replica_not_available):
    """The partition has no replica on this broker (yet)."""
