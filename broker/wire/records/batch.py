"""Zero-copy views over record batch v2 headers (REFERENCE.md section 2).

The broker treats records as opaque bytes: it reads the 61-byte header, checks
the CRC, and rewrites only the fields that sit outside the CRC (baseOffset,
partitionLeaderEpoch) or, for LogAppendTime topics, maxTimestamp and the CRC.
"""

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from crc32c import crc32c

from broker.wire.records.codecs import Codec, codec_from_attributes
from broker.wire.records.errors import CorruptRecordError, InvalidRecordError

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
# baseOffset + batchLength: the part of the header that precedes batchLength's span.
LOG_OVERHEAD = 12

BASE_OFFSET_AT = 0
LENGTH_AT = 8
PARTITION_LEADER_EPOCH_AT = 12
MAGIC_AT = 16
CRC_AT = 17
ATTRIBUTES_AT = 21
MAX_TIMESTAMP_AT = 35

CODEC_MASK = 0x07
TIMESTAMP_TYPE_FLAG = 0x08  # set: LogAppendTime
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20

_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I16 = struct.Struct(">h")

NO_SEQUENCE = -1


@dataclass(slots=True)
class BatchView:
    """The header fields of one batch plus where its bytes live in the buffer it was read from."""

    buffer: memoryview
    position: int  # start of the batch inside `buffer`
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def size(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def end(self) -> int:
        return self.position + self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def codec(self) -> Codec:
        return codec_from_attributes(self.attributes)

    @property
    def is_log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_FLAG)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id >= 0

    def raw(self) -> memoryview:
        """The whole batch, header included, without copying."""
        return self.buffer[self.position : self.end]

    def records_payload(self) -> memoryview:
        """The (possibly compressed) records section after the header."""
        return self.buffer[self.position + HEADER_SIZE : self.end]

    def compute_crc(self) -> int:
        return crc32c(self.buffer[self.position + ATTRIBUTES_AT : self.end])

    def is_crc_valid(self) -> bool:
        return self.compute_crc() == self.crc

    def check_crc(self) -> None:
        if not self.is_crc_valid():
            raise CorruptRecordError(f"CRC mismatch in batch at offset {self.base_offset}")


def increment_sequence(sequence: int, increment: int) -> int:
    """Producer sequences wrap from Int32.MAX to 0."""
    if sequence > 0x7FFFFFFF - increment:
        return increment - (0x7FFFFFFF - sequence) - 1
    return sequence + increment


def read_batch_header(buffer: memoryview, position: int) -> BatchView:
    """Parse the header at `position`; raise CorruptRecordError unless a whole, well-formed batch is there."""
    available = len(buffer) - position
    if available > MAGIC_AT:  # Kafka looks at the magic before anything else of a batch
        magic = buffer[position + MAGIC_AT]
        if magic > 2:
            raise CorruptRecordError(
                f"Invalid magic found in record: {magic - 256 if magic > 127 else magic}"
            )
        if magic < 2:  # a message set of before 0.11: Kafka calls it invalid, not corrupt
            raise InvalidRecordError(f"record batch magic {magic}: only magic 2 is accepted")
    if available < HEADER_SIZE:
        if available >= LOG_OVERHEAD:
            (length,) = _I32.unpack_from(buffer, position + LENGTH_AT)
            if length < HEADER_SIZE - LOG_OVERHEAD:
                raise CorruptRecordError(f"batch length {length} is smaller than a batch header")
        raise CorruptRecordError(f"truncated batch header: {available} bytes at position {position}")
    fields = HEADER.unpack_from(buffer, position)
    view = BatchView(buffer, position, *fields)
    if view.batch_length < HEADER_SIZE - LOG_OVERHEAD:
        raise CorruptRecordError(f"batch length {view.batch_length} is smaller than a batch header")
    if view.end > len(buffer):
        raise CorruptRecordError(
            f"truncated batch at position {position}: needs {view.size} bytes, has {available}"
        )
    if view.last_offset_delta < 0 or view.record_count < 0:
        raise InvalidRecordError(
            f"invalid record count {view.record_count} or lastOffsetDelta {view.last_offset_delta}"
        )
    return view


# Kafka reads a batch's size once 17 bytes (up to the magic) are there, and refuses a size below the
# smallest message of magic 0 (14 bytes).
_SIZE_READABLE_FROM = 17
_SMALLEST_MESSAGE = 14


def whole_batches_length(buffer: bytes | bytearray | memoryview) -> int:
    """How many leading bytes of a produce request's records are whole batches, read as Kafka reads them
    (ByteBufferLogInputStream): it stops before a batch the bytes do not hold whole and ignores the rest,
    so a producer's trailing partial batch is dropped, not refused. A size below 14 bytes is corrupt."""
    position = 0
    total = len(buffer)
    while total - position >= _SIZE_READABLE_FROM:
        (length,) = _I32.unpack_from(buffer, position + LENGTH_AT)
        if length < _SMALLEST_MESSAGE:
            raise CorruptRecordError(f"Record size {length} is less than the minimum record overhead (14)")
        if length + LOG_OVERHEAD > total - position:
            break
        position += length + LOG_OVERHEAD
    return position


def iter_batches(buffer: bytes | bytearray | memoryview) -> Iterator[BatchView]:
    """Every batch in a buffer of concatenated batches; raises CorruptRecordError on any truncation."""
    view = buffer if isinstance(buffer, memoryview) else memoryview(buffer)
    position = 0
    total = len(view)
    while position < total:
        batch = read_batch_header(view, position)
        yield batch
        position = batch.end


def with_records(batch: BatchView, codec_bits: int, records: bytes | bytearray | memoryview) -> bytes:
    """`batch` with its records section replaced by `records`, already in the codec `codec_bits` names
    (its other header fields kept, the length and CRC recomputed)."""
    out = bytearray(batch.buffer[batch.position : batch.position + HEADER_SIZE])
    out += records
    _I32.pack_into(out, LENGTH_AT, len(out) - LOG_OVERHEAD)
    (attributes,) = _I16.unpack_from(out, ATTRIBUTES_AT)
    _I16.pack_into(out, ATTRIBUTES_AT, (attributes & ~CODEC_MASK) | codec_bits)
    _U32.pack_into(out, CRC_AT, crc32c(memoryview(out)[ATTRIBUTES_AT:]))
    return bytes(out)


def set_base_offset(buffer: bytearray | memoryview, position: int, base_offset: int) -> None:
    _I64.pack_into(buffer, position + BASE_OFFSET_AT, base_offset)


def set_partition_leader_epoch(buffer: bytearray | memoryview, position: int, epoch: int) -> None:
    _I32.pack_into(buffer, position + PARTITION_LEADER_EPOCH_AT, epoch)


def set_log_append_time(buffer: bytearray | memoryview, position: int, timestamp_ms: int) -> None:
    """Mark the batch LogAppendTime with `timestamp_ms` as maxTimestamp; both sit inside the CRC."""
    (length,) = _I32.unpack_from(buffer, position + LENGTH_AT)
    (attributes,) = _I16.unpack_from(buffer, position + ATTRIBUTES_AT)
    _I16.pack_into(buffer, position + ATTRIBUTES_AT, attributes | TIMESTAMP_TYPE_FLAG)
    _I64.pack_into(buffer, position + MAX_TIMESTAMP_AT, timestamp_ms)
    end = position + LOG_OVERHEAD + length
    _U32.pack_into(buffer, position + CRC_AT, crc32c(memoryview(buffer)[position + ATTRIBUTES_AT : end]))
