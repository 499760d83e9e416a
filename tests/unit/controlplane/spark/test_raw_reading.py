"""The bulk record decoder of the raw read path, on batches built by the broker's own record code
(no cluster, no sockets)."""

import datetime
import io
import struct

import pytest
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v5.response import (
    AbortedTransaction,
    FetchableTopicResponse,
    FetchResponse,
    PartitionData,
)
from kio.schema.types import ProducerId, TopicName
from kio.serial import entity_reader, entity_writer
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from broker.wire.records.codecs import Codec
from broker.wire.records.records import Record, TimestampType, build_batch
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.spark.connection import connection_settings
from controlplane.spark.offset_range import OffsetRange
from controlplane.spark.options import InvalidOptions
from controlplane.spark.projection import full_projection, projection_for
from controlplane.spark.raw_reading import (
    AbortedTransactions,
    RecordDataError,
    decode_record_set,
    native_decoder,
    parse_fetch_response,
)

pytestmark = pytest.mark.skipif(native_decoder() is None, reason="no C compiler for the native decoder")

FULL = full_projection(False)
T0 = 1_700_000_000_000


def rows(batch) -> list[tuple]:
    columns = batch.to_pydict()
    return list(
        zip(
            columns["offset"],
            columns["key"],
            columns["value"],
            [int(t.timestamp() * 1000) for t in columns["timestamp"]],
            columns["timestampType"],
            strict=True,
        )
    )


def decode(record_set: bytes, start: int = 0, end: int = 1_000, next_offset: int | None = None):
    offset_range = OffsetRange("orders", 3, start, end)
    return decode_record_set(
        record_set, offset_range, start if next_offset is None else next_offset, FULL, AbortedTransactions()
    )


@pytest.mark.parametrize("codec", list(Codec))
def test_it_decodes_keys_values_offsets_and_timestamps_of_every_codec(codec):
    records = [Record(b"k%d" % i, b"v" * i, timestamp=T0 + i) for i in range(200)]
    decoded = decode(build_batch(records, base_offset=40, codec=codec))
    assert rows(decoded.batch) == [(40 + i, b"k%d" % i, b"v" * i, T0 + i, 0) for i in range(200)]
    assert decoded.next_offset == 240
    assert decoded.batch.column("topic").to_pylist() == ["orders"] * 200
    assert decoded.batch.column("partition").to_pylist() == [3] * 200


def test_it_keeps_null_and_empty_keys_and_values_apart():
    records = [
        Record(None, b"a", timestamp=T0),
        Record(b"", None, timestamp=T0),
        Record(b"k", b"", timestamp=T0),
    ]
    decoded = decode(build_batch(records))
    assert [(r[1], r[2]) for r in rows(decoded.batch)] == [(None, b"a"), (b"", None), (b"k", b"")]


def test_it_skips_headers_and_reads_the_records_after_them():
    records = [
        Record(b"k1", b"v1", headers=(("trace", b"x" * 300), ("n", None)), timestamp=T0),
        Record(b"k2", b"v2", timestamp=T0 - 5),
    ]
    decoded = decode(build_batch(records))
    assert rows(decoded.batch) == [(0, b"k1", b"v1", T0, 0), (1, b"k2", b"v2", T0 - 5, 0)]


def test_it_keeps_only_offsets_inside_the_range_and_follows_compaction_gaps():
    gappy = [Record(b"k%d" % d, b"v%d" % d, timestamp=T0, offset_delta=d) for d in (0, 3, 4, 9)]
    record_set = build_batch(gappy, base_offset=100, last_offset_delta=12) + build_batch(
        [Record(b"late", b"x", timestamp=T0)], base_offset=113
    )
    decoded = decode(record_set, start=103, end=113)
    assert [r[0] for r in rows(decoded.batch)] == [103, 104, 109]
    # The next fetch starts after the range's end: the batch at 113 is not wanted.
    assert decoded.next_offset == 113


def test_it_leaves_a_batch_cut_short_by_the_fetch_size_for_the_next_fetch():
    first = build_batch([Record(b"a", b"1", timestamp=T0)], base_offset=0)
    second = build_batch([Record(b"b", b"2", timestamp=T0)], base_offset=1)
    decoded = decode(first + second[:-3])
    assert [r[0] for r in rows(decoded.batch)] == [0]
    assert decoded.next_offset == 1


def test_it_stamps_log_append_time_batches_with_the_brokers_time():
    batch = build_batch(
        [Record(b"a", b"1", timestamp=T0), Record(b"b", b"2", timestamp=T0 + 1)],
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        max_timestamp=T0 + 500,
    )
    assert [(r[3], r[4]) for r in rows(decode(batch).batch)] == [(T0 + 500, 1), (T0 + 500, 1)]


def control(producer_id: int, base_offset: int, kind: int) -> bytes:
    return build_batch(
        [Record(struct.pack(">hh", 0, kind), struct.pack(">hi", 0, 0), timestamp=T0)],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=0,
        transactional=True,
        control=True,
    )


def transactional(producer_id: int, base_offset: int, value: bytes) -> bytes:
    return build_batch(
        [Record(None, value, timestamp=T0)],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=0,
        transactional=True,
    )


def test_it_drops_aborted_transactions_and_control_records():
    record_set = (
        transactional(7, 0, b"aborted")
        + transactional(8, 1, b"committed")
        + control(7, 2, 0)
        + control(8, 3, 1)
        + transactional(7, 4, b"later")
    )
    aborted = AbortedTransactions()
    aborted.add([(0, 7)])
    decoded = decode_record_set(record_set, OffsetRange("orders", 0, 0, 10), 0, FULL, aborted)
    assert [(r[0], r[2]) for r in rows(decoded.batch)] == [(1, b"committed"), (4, b"later")]
    assert decoded.next_offset == 5


def test_a_set_of_control_records_only_yields_no_batch_but_moves_on():
    decoded = decode(control(7, 0, 1) + control(7, 1, 1))
    assert decoded.batch is None
    assert decoded.next_offset == 2


def test_it_refuses_a_record_whose_length_runs_past_its_batch():
    batch = bytearray(build_batch([Record(b"k", b"value", timestamp=T0)]))
    # The first record's length varint sits right after the 61-byte header: claim 60 bytes (zigzag 120).
    batch[61] = 120
    with pytest.raises(RecordDataError):
        decode(bytes(batch))


def test_it_refuses_a_negative_length_other_than_null():
    record = bytearray(build_batch([Record(b"k", b"value", timestamp=T0)]))
    # Record: length, attributes, timestamp delta, offset delta, then the key length: -2 (zigzag 3).
    record[61 + 4] = 3
    with pytest.raises(RecordDataError):
        decode(bytes(record))


def test_it_leaves_tls_and_unknown_sasl_settings_to_confluent_kafka():
    plain = {"bootstrap.servers": "a:1,b:2"}
    assert connection_settings(plain).bootstrap == ["a:1", "b:2"]
    scram = {**plain, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512"}
    assert connection_settings(scram).sasl_mechanism == "SCRAM-SHA-512"
    assert connection_settings({**plain, "security.protocol": "SASL_SSL"}) is None
    assert connection_settings({**scram, "sasl.mechanism": "OAUTHBEARER"}) is None
    assert connection_settings({**plain, "ssl.ca.location": "/ca.pem"}) is None
    assert connection_settings({**plain, "isolation.level": "read_uncommitted"}).read_committed is False


def test_it_refuses_old_message_formats_so_confluent_kafka_reads_them():
    batch = bytearray(build_batch([Record(b"k", b"value", timestamp=T0)]))
    batch[16] = 1  # magic: the byte after baseOffset, batchLength and partitionLeaderEpoch
    with pytest.raises(RecordDataError):
        decode(bytes(batch))


def projected(*fields: tuple[str, DataType]):
    return projection_for(StructType([StructField(name, kind) for name, kind in fields]), False)


def test_a_projection_yields_only_its_columns_under_the_names_it_was_given():
    records = [Record(b"k%d" % i, b"v%d" % i, timestamp=T0 + i) for i in range(5)]
    projection = projected(("VALUE", BinaryType()), ("offset", LongType()))
    decoded = decode_record_set(
        build_batch(records, base_offset=10),
        OffsetRange("orders", 3, 11, 14),
        11,
        projection,
        AbortedTransactions(),
    )
    assert decoded.batch.schema.names == ["VALUE", "offset"]
    assert decoded.batch.to_pydict() == {"VALUE": [b"v1", b"v2", b"v3"], "offset": [11, 12, 13]}


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.ZSTD])
def test_counting_by_partition_counts_whole_batches_and_decodes_only_those_cut_by_the_range(codec):
    gappy = [Record(None, b"v", timestamp=T0, offset_delta=d) for d in (0, 3, 4, 9)]
    record_set = (
        build_batch(gappy, base_offset=100, last_offset_delta=12, codec=codec)  # 100..112, cut at 103
        + build_batch([Record(None, b"x", timestamp=T0)] * 7, base_offset=113, codec=codec)  # 113..119, whole
        + build_batch(
            [Record(None, b"y", timestamp=T0)] * 5, base_offset=120, codec=codec
        )  # 120..124, cut at 122
    )
    projection = projected(("partition", IntegerType()))
    decoded = decode_record_set(
        record_set, OffsetRange("orders", 3, 103, 122), 103, projection, AbortedTransactions()
    )
    # 103, 104, 109 from the first batch, all 7 of the second, 120 and 121 of the third.
    assert decoded.batch.to_pydict() == {"partition": [3] * 12}
    assert decoded.next_offset == 125  # past the range: the read is done


def test_counting_still_drops_aborted_transactions():
    record_set = transactional(7, 0, b"aborted") + transactional(8, 1, b"committed") + control(7, 2, 0)
    aborted = AbortedTransactions()
    aborted.add([(0, 7)])
    projection = projected(("topic", StringType()), ("partition", IntegerType()))
    decoded = decode_record_set(record_set, OffsetRange("orders", 0, 0, 10), 0, projection, aborted)
    assert decoded.batch.to_pydict() == {"topic": ["orders"], "partition": [0]}


def test_the_default_projection_is_the_kafka_sources_full_schema():
    assert FULL.schema.names == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    assert full_projection(True).schema.names[-1] == "headers"
    assert projection_for(None, False) == FULL


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ((("partition", IntegerType()), ("payload", BinaryType())), "column 'payload' is not a column"),
        ((("offset", IntegerType()),), "column 'offset' must have type bigint, not int"),
        ((("key", BinaryType()), ("KEY", BinaryType())), "column 'KEY' is named twice"),
        ((), "the schema names no column"),
    ],
)
def test_a_schema_with_a_column_the_source_lacks_or_a_wrong_type_is_refused_by_name(fields, message):
    with pytest.raises(InvalidOptions, match=message):
        projected(*fields)


def test_asking_for_the_headers_column_reads_headers():
    projection = projected(
        ("offset", LongType()),
        (
            "headers",
            ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())])),
        ),
    )
    assert projection.include_headers
    assert not projection.counts_only


def fetch_frame(records: bytes | None, aborted: tuple | None, partitions: int = 1) -> bytes:
    """A Fetch v5 response frame as a broker sends it (correlation id, then the body), written by kio."""
    part = PartitionData(
        partition_index=3,
        error_code=ErrorCode.none,
        high_watermark=1_000,
        last_stable_offset=990,
        log_start_offset=7,
        aborted_transactions=aborted,
        records=records,
    )
    body = FetchResponse(
        throttle_time=datetime.timedelta(0),
        responses=(FetchableTopicResponse(topic=TopicName("orders"), partitions=(part,) * partitions),),
    )
    buffer = io.BytesIO()
    entity_writer(FetchResponse)(buffer, body)
    return struct.pack(">i", 42) + buffer.getvalue()


def test_a_fetch_response_is_read_in_place_as_kio_reads_it():
    records = build_batch([Record(b"k", b"v", timestamp=T0)], base_offset=500)
    aborted = (AbortedTransaction(producer_id=ProducerId(9), first_offset=480),)
    frame = fetch_frame(records, aborted)
    part = parse_fetch_response(memoryview(frame))
    expected = entity_reader(FetchResponse)(frame, 4)[0].responses[0].partitions[0]
    assert (part.partition, part.error_code, part.high_watermark, part.last_stable_offset) == (
        3,
        0,
        1_000,
        990,
    )
    assert part.aborted_transactions == [
        (t.first_offset, t.producer_id) for t in expected.aborted_transactions
    ]
    assert bytes(part.records) == expected.records == records
    assert part.records.obj is frame  # a view, not a copy
    empty = parse_fetch_response(fetch_frame(None, None))
    assert (bytes(empty.records), empty.aborted_transactions) == (b"", [])


def test_a_fetch_response_of_another_shape_or_cut_short_is_refused():
    with pytest.raises(KafkaGatewayError, match="one partition"):
        parse_fetch_response(fetch_frame(b"", None, partitions=2))
    frame = fetch_frame(build_batch([Record(b"k", b"v", timestamp=T0)]), None)
    for cut in (10, len(frame) - 1):
        with pytest.raises(KafkaGatewayError, match=r"truncated|past its frame"):
            parse_fetch_response(frame[:cut])
