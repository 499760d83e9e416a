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

    def __init__(self, message: str = "", record_errors: list[tuple[int, str]] | None = None) -> None:
        super().__init__(message or type(self).__name__)
        # KIP-467: the offending records by their index in the batch, each with its own message. The
        # Produce answer lists them; clients fail those records and retry-fail only the rest.
        self.record_errors = record_errors or []


class CorruptRecordError(StorageError):
    """Bad CRC, bad length, bad magic, truncated batch, undecodable records."""

    error_code = ErrorCode.corrupt_message.value


class DecompressedTooLargeError(CorruptRecordError):
    """Compressed data that would decompress to more than the caller's limit (a decompression bomb, or
    just too much)."""


class InvalidRecordError(StorageError):
    """Records Kafka would not read (a bad length, varint, count or header), or well-formed ones that
    break a rule (a missing key on a compacted topic, a client control batch)."""

    error_code = ErrorCode.invalid_record.value


class RecordTooLargeError(StorageError, code=ErrorCode.message_too_large):
    """A batch or record larger than the topic's max.message.bytes allows."""


class InvalidTimestampError(StorageError, code=ErrorCode.invalid_timestamp):
    """A timestamp too far from the broker's clock (message.timestamp.before/after.max.ms)."""


class UnsupportedCompressionError(StorageError, code=ErrorCode.unsupported_compression_type):
    """A compression codec that does not exist."""
