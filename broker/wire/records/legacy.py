"""Record batches (magic 2) down-converted to the message sets of magic 0 and 1, for Fetch v0-3.

Clients that fetch with v0-3 (sarama-era tools such as Debian's Burrow 1.2.1) read only the old message
format. Kafka 3.9 converted for them on the broker (Kafka 4.0 dropped those versions, KIP-896); so do we:
each record becomes an uncompressed message (offset, size, CRC-32, magic, attributes, [timestamp], key,
value). Headers do not exist before magic 2 and are dropped; control batches (transaction markers) are left
out, as Kafka leaves them out.
"""

import struct
import zlib

from broker.wire.records.batch import iter_batches
from broker.wire.records.errors import CorruptRecordError
from broker.wire.records.records import decode_records

_OFFSET_SIZE = struct.Struct(">qi")
_CRC = struct.Struct(">I")
_MAGIC_ATTRIBUTES = struct.Struct(">bb")
_TIMESTAMP = struct.Struct(">q")
_LENGTH = struct.Struct(">i")
# Message attribute bit 3 (magic 1): the timestamp is the broker's append time.
LOG_APPEND_TIME_ATTRIBUTE = 0x08


def _bytes_field(value: bytes | None) -> bytes:
    return _LENGTH.pack(-1) if value is None else _LENGTH.pack(len(value)) + value


def encode_message(
    offset: int, magic: int, key: bytes | None, value: bytes | None, timestamp: int, log_append_time: bool
) -> bytes:
    """One message of the old format with its offset and size prefix."""
    attributes = LOG_APPEND_TIME_ATTRIBUTE if magic >= 1 and log_append_time else 0
    body = _MAGIC_ATTRIBUTES.pack(magic, attributes)
    if magic >= 1:
        body += _TIMESTAMP.pack(timestamp)
    body += _bytes_field(key) + _bytes_field(value)
    message = _CRC.pack(zlib.crc32(body)) + body
    return _OFFSET_SIZE.pack(offset, len(message)) + message


def down_convert(records: bytes | memoryview, magic: int, from_offset: int = 0) -> bytes:
    """The records at or after `from_offset` in `records` (whole v2 batches) as a message set of `magic`."""
    if magic not in (0, 1):
        raise ValueError(f"down-conversion is to magic 0 or 1, not {magic}")
    out = bytearray()
    batches = iter_batches(records)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            break
        except CorruptRecordError:
            break  # a batch cut off at the end of the read (the byte limit): the client asks again from there
        if batch.is_control:
            continue
        log_append_time = batch.is_log_append_time
        for record in decode_records(batch):
            offset = batch.base_offset + (record.offset_delta or 0)
            if offset < from_offset:
                continue
            timestamp = batch.max_timestamp if log_append_time else (record.timestamp or -1)
            out += encode_message(offset, magic, record.key, record.value, timestamp, log_append_time)
    return bytes(out)
