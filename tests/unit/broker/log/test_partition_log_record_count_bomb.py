"""A small compressed batch holding hundreds of thousands of tiny records: every way the leader handles it
(store, recompress to the topic's codec, refuse keyless records on a compacted topic, refuse timestamps out
of range) costs about what Kafka's own validation costs, never a Python object per record.

Apache Kafka 4.2, sent such a batch (1,000,000 records of 7 bytes, 0.8 MB in zstd): stores it in 0.4 s of
CPU, answers MESSAGE_TOO_LARGE on an lz4 topic (recompressed over max.message.bytes), INVALID_RECORD /
INVALID_TIMESTAMP listing every record at 100,000 records and UNKNOWN_SERVER_ERROR at a million."""

from __future__ import annotations

import time
from collections.abc import Callable

import cramjam
import numpy as np
import pytest

from broker.log.partition_log import MAX_LISTED_RECORD_ERRORS
from broker.wire.records.batch import iter_batches
from broker.wire.records.codecs import Codec
from broker.wire.records.errors import InvalidRecordError, InvalidTimestampError, RecordTooLargeError
from tests.fixtures.poison_batches import ZSTD, raw_batch

from .conftest import LogFactory
from .helpers import NOW_MS

RECORDS = 300_000
# CPU seconds one such batch may take here; before it was bounded, recompressing it took ~1.5 s and refusing
# its records 3 s (a Record and an error text built per record).
CPU_BUDGET_S = 0.8


def tiny_records(count: int) -> bytes:
    """`count` records without key, value or headers, offset deltas 0, 1, …, timestamp delta 0."""
    out = bytearray()
    for index in range(count):
        delta = bytearray()
        raw = index << 1
        while raw >= 0x80:
            delta.append((raw & 0x7F) | 0x80)
            raw >>= 7
        delta.append(raw)
        body = b"\x00\x00" + bytes(delta) + b"\x01\x01\x00"
        out.append(len(body) << 1)
        out += body
    return bytes(out)


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    section = bytes(cramjam.zstd.compress(tiny_records(RECORDS), level=3))
    return {
        "now": raw_batch(section, RECORDS, attributes=ZSTD, base_timestamp=NOW_MS),
        "long ago": raw_batch(section, RECORDS, attributes=ZSTD, base_timestamp=1000),
    }


def cpu_seconds(action: Callable[[], object]) -> float:
    started = time.process_time()
    action()
    return time.process_time() - started


def test_it_is_stored_as_kafka_stores_it(open_log: LogFactory, bombs: dict[str, bytes]) -> None:
    log = open_log()
    assert len(bombs["now"]) < 1048588
    spent = cpu_seconds(lambda: log.append_as_leader(bombs["now"], leader_epoch=0, now_ms=NOW_MS))
    assert log.log_end_offset == RECORDS
    assert spent < CPU_BUDGET_S


def test_recompressing_it_decodes_no_record(open_log: LogFactory, bombs: dict[str, bytes]) -> None:
    log = open_log(compression_type="lz4", max_message_bytes=8 << 20)

    spent = cpu_seconds(lambda: log.append_as_leader(bombs["now"], leader_epoch=0, now_ms=NOW_MS))

    assert spent < CPU_BUDGET_S
    log.high_watermark = log.log_end_offset
    (batch,) = iter_batches(log.read(0, 16 << 20))
    assert (batch.codec, batch.record_count, batch.is_crc_valid()) == (Codec.LZ4, RECORDS, True)
    with pytest.raises(RecordTooLargeError):  # over Kafka's default max.message.bytes, as Kafka answers
        open_log(compression_type="lz4").append_as_leader(bombs["now"], leader_epoch=0, now_ms=NOW_MS)


def test_keyless_records_on_a_compacted_topic_are_refused_cheaply(
    open_log: LogFactory, bombs: dict[str, bytes]
) -> None:
    log = open_log(cleanup_policy="compact")
    caught: list[InvalidRecordError] = []

    def append() -> None:
        with pytest.raises(InvalidRecordError) as error:
            log.append_as_leader(bombs["now"], leader_epoch=0, now_ms=NOW_MS)
        caught.append(error.value)

    assert cpu_seconds(append) < CPU_BUDGET_S
    assert f"due to {RECORDS} record errors in total" in str(caught[0])
    assert len(caught[0].record_errors) == MAX_LISTED_RECORD_ERRORS
    assert caught[0].record_errors[1] == (
        1,
        "Compacted topic cannot accept message without key in topic partition topic-0",
    )
    assert log.log_end_offset == 0


def test_timestamps_out_of_range_are_refused_cheaply(open_log: LogFactory, bombs: dict[str, bytes]) -> None:
    log = open_log(message_timestamp_before_max_ms=3_600_000)
    caught: list[InvalidTimestampError] = []

    def append() -> None:
        with pytest.raises(InvalidTimestampError) as error:
            log.append_as_leader(bombs["long ago"], leader_epoch=0, now_ms=NOW_MS)
        caught.append(error.value)

    assert cpu_seconds(append) < CPU_BUDGET_S
    errors = caught[0].record_errors
    assert len(errors) == MAX_LISTED_RECORD_ERRORS
    low, high = NOW_MS - 3_600_000, NOW_MS + 3_600_000
    assert errors[2] == (
        2,
        f"Timestamp 1000 of message with offset 2 is out of range. The timestamp should be within [{low}, {high}]",
    )
    assert np.all(np.diff([index for index, _ in errors]) == 1)
    assert log.log_end_offset == 0
