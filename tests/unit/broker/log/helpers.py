"""Batch builders and readers shared by the log tests."""

import time

from broker.log.partition_log import PartitionLog
from broker.wire.records.batch import iter_batches
from broker.wire.records.codecs import Codec
from broker.wire.records.records import Record, build_batch, decode_records

NOW_MS = int(time.time() * 1000)


def batch_of(
    *values: bytes | None,
    keys: list[bytes | None] | None = None,
    timestamp: int = NOW_MS,
    codec: Codec = Codec.NONE,
    **kwargs: object,
) -> bytes:
    keys = keys if keys is not None else [b"key-%d" % i for i in range(len(values))]
    records = [Record(key, value, timestamp=timestamp) for key, value in zip(keys, values, strict=True)]
    return build_batch(records, codec=codec, **kwargs)  # type: ignore[arg-type]


def append_values(
    log: PartitionLog, count: int, *, per_batch: int = 1, size: int = 10, now_ms: int = NOW_MS
) -> None:
    for start in range(0, count, per_batch):
        values = [b"%0*d" % (size, start + i) for i in range(min(per_batch, count - start))]
        log.append_as_leader(batch_of(*values, timestamp=now_ms), leader_epoch=0, now_ms=now_ms)
    log.high_watermark = log.log_end_offset


def read_records(log: PartitionLog, start: int | None = None) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of every record from `start` (default: log start) to the log end."""
    offset = log.log_start_offset if start is None else start
    out = []
    data = log.read(offset, 1 << 30, max_offset=None)
    for batch in iter_batches(data):
        batch.check_crc()
        for record in decode_records(batch):
            out.append((batch.base_offset + (record.offset_delta or 0), record.key, record.value))
    return out


def crash(log: PartitionLog) -> None:
    """Drop the log like a killed process would: file descriptors closed, nothing flushed or marked clean."""
    log._closed = True
    segments, _ = log.segments_snapshot()
    for segment in segments:
        segment.close()
