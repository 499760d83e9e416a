"""Typed errors of the log layer, each carrying its Kafka error code."""

from kio.schema.errors import ErrorCode

from broker.wire.records.errors import StorageError


class OffsetOutOfRangeError(StorageError):
    error_code = ErrorCode.offset_out_of_range.value


class OutOfOrderSequenceError(StorageError):
    error_code = ErrorCode.out_of_order_sequence_number.value


class InvalidProducerEpochError(StorageError):
    error_code = ErrorCode.invalid_producer_epoch.value


class UnknownProducerIdError(StorageError):
    error_code = ErrorCode.unknown_producer_id.value


class InvalidConfigError(StorageError):
    error_code = ErrorCode.invalid_config.value

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"invalid value for {name}: {reason}")
        self.name = name
        self.reason = reason


class LogStorageError(StorageError):
    """The disk failed under us (I/O error): KAFKA_STORAGE_ERROR."""

    error_code = ErrorCode.kafka_storage_error.value


class InvalidTxnStateError(StorageError):
    error_code = ErrorCode.invalid_txn_state.value


class TransactionCoordinatorFencedError(StorageError):
    error_code = ErrorCode.transaction_coordinator_fenced.value


class LogDirNotFoundError(StorageError):
    """AlterReplicaLogDirs named a directory that is not one of log.dirs."""

    error_code = ErrorCode.log_dir_not_found.value


class ReplicaNotAvailableError(StorageError):
    """The partition has no replica on this broker (yet)."""

    error_code = ErrorCode.replica_not_available.value
