"""Typed storage errors. Each carries the Kafka error code the broker answers with."""

from kio.schema.errors import ErrorCode


class StorageError(Exception):
    """Base of every error the record and log layers raise on bad input or bad state."""

    error_code: int = ErrorCode.unknown_server_error.value

    def __init_subclass__(cls, code: ErrorCode | None = None, **kwargs: object) -> None:
        """`class XError(StorageError, code=ErrorCode.x)` sets the code the broker answers with."""
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.error_code = code.value

    def __init__(self, message: str = "") -> None:
        super().__init__(message or type(self).__name__)


class CorruptRecordError(StorageError):
    """Bad CRC, bad length, bad magic, truncated batch, undecodable records."""

    error_code = ErrorCode.corrupt_message.value


class DecompressedTooLargeError(CorruptRecordError):
    """Compressed data that would decompress to more than the caller's limit (a decompression bomb, or
    just too much)."""


class InvalidRecordError(StorageError):
    """Well-formed bytes that break a rule: a missing key on a compacted topic, a client control batch.

    `record_errors` names the offending records by their index in the batch (KIP-467): the Produce
    answer lists them, and clients fail those records with INVALID_RECORD and only retry-fail the rest.
    """

    error_code = ErrorCode.invalid_record.value

    def __init__(self, message: str = "", record_errors: list[int] | None = None) -> None:
        super().__init__(message)
        self.record_errors = record_errors or []


class RecordTooLargeError(StorageError, code=ErrorCode.message_too_large):
    """A batch or record larger than the topic's max.message.bytes allows."""


class InvalidTimestampError(StorageError, code=ErrorCode.invalid_timestamp):
    """A timestamp too far from the broker's clock (message.timestamp.before/after.max.ms)."""


class UnsupportedCompressionError(StorageError, code=ErrorCode.unsupported_compression_type):
    """A compression codec that does not exist."""
