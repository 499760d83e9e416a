"""The fast way to read an offset range: raw record batches over the Kafka protocol, decoded in bulk.

confluent-kafka makes one Python Message object per record, which caps one executor core at about 0.25 M
records/s. Here a Fetch response's record batches are decompressed per batch and their records decoded by a
small C function (native/record_decoder.c, compiled with the system's C compiler on first use) straight into
Arrow column buffers. Without a compiler, with TLS, with headers wanted, or on any partition-level error the
caller (reading.read_range) reads with confluent-kafka instead, from where this path stopped.
"""

from __future__ import annotations

import ctypes
import datetime
import hashlib
import importlib.resources
import logging
import os
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from kio.schema.fetch.v5.request import FetchPartition, FetchRequest, FetchTopic
from kio.schema.metadata.v4.request import MetadataRequest, MetadataRequestTopic
from kio.schema.types import BrokerId, TopicName

from broker.wire.records.batch import (
    CODEC_MASK,
    CONTROL_FLAG,
    HEADER,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_FLAG,
    TRANSACTIONAL_FLAG,
)
from broker.wire.records.codecs import Codec, codec_from_attributes, decompress
from broker.wire.records.errors import CorruptRecordError, UnsupportedCompressionError
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.wire import WireConnection
from controlplane.spark.allocator import keep_buffers_in_heap
from controlplane.spark.connection import ConnectionSettings
from controlplane.spark.offset_range import OffsetRange
from controlplane.spark.planning import TopicReadError
from controlplane.spark.projection import TIMESTAMP_TYPE, Projection

log = logging.getLogger(__name__)

# Read as a package resource: on a cluster this module is imported from the code artifact's zip.
SOURCE = ("controlplane.spark", "native/record_decoder.c")
# One Fetch response becomes one Arrow batch: large enough that Spark's per-batch cost vanishes.
FETCH_MAX_BYTES = 8 * 1024 * 1024
FETCH_MAX_WAIT_MS = 100
CONNECT_TIMEOUT_S = 30.0
# Every fetch allocates and frees buffers of about FETCH_MAX_BYTES (the response's records, the value column).
# Above glibc's mmap threshold each one is mapped afresh and its pages fault in zero-filled one by one: a
# quarter of the reader's CPU (bench/spark_read.py). Thresholds above that size keep them in the heap; a
# worker then holds at most the trim threshold of freed memory.
HEAP_MMAP_THRESHOLD = 2 * FETCH_MAX_BYTES
HEAP_TRIM_THRESHOLD = 8 * FETCH_MAX_BYTES

CONTROL_ABORT = 0
CONTROL_KEY = struct.Struct(">hh")  # version, type


class RecordDataError(ValueError):
    """A batch the decoder cannot read: corrupt, truncated or in an unknown format."""


class _Columns(ctypes.Structure):
    _fields_ = [
        ("offsets", ctypes.c_void_p),
        ("timestamps", ctypes.c_void_p),
        ("key_ends", ctypes.c_void_p),
        ("key_valid", ctypes.c_void_p),
        ("key_data", ctypes.c_void_p),
        ("value_ends", ctypes.c_void_p),
        ("value_valid", ctypes.c_void_p),
        ("value_data", ctypes.c_void_p),
        ("record_capacity", ctypes.c_int64),
        ("key_capacity", ctypes.c_int64),
        ("value_capacity", ctypes.c_int64),
        ("count", ctypes.c_int64),
        ("key_nulls", ctypes.c_int64),
        ("value_nulls", ctypes.c_int64),
    ]


_decoder: ctypes._CFuncPtr | None = None
_decoder_loaded = False
_allocator_tuned = False


def _keep_fetch_buffers_in_heap() -> None:
    """Once per process (a Spark Python worker serves many reads)."""
    global _allocator_tuned
    if not _allocator_tuned:
        _allocator_tuned = True
        keep_buffers_in_heap(HEAP_MMAP_THRESHOLD, HEAP_TRIM_THRESHOLD)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "controlplane-spark"


def _build_library(source: bytes) -> Path:
    """Compiles the decoder once per source version; concurrent executors each build to a temporary name
    and rename, so none loads a half-written library."""
    digest = hashlib.sha256(source).hexdigest()[:16]
    target = _cache_dir() / f"record_decoder-{digest}.so"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    source_path = target.with_suffix(".c")
    if not source_path.exists():
        source_path.write_bytes(source)  # the same bytes whoever writes it: no rename needed
    handle, partial = tempfile.mkstemp(dir=target.parent, suffix=".so")
    os.close(handle)
    try:
        compiler = os.environ.get("CC", "cc")
        command = [compiler, "-O2", "-shared", "-fPIC", "-o", partial, str(source_path)]
        subprocess.run(command, check=True, capture_output=True, timeout=120)
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


def native_decoder() -> ctypes._CFuncPtr | None:
    """The C decoder, or None where it cannot be built (no compiler on the executor). Logged once."""
    global _decoder, _decoder_loaded
    if _decoder_loaded:
        return _decoder
    _decoder_loaded = True
    try:
        package, name = SOURCE
        library = ctypes.CDLL(
            str(_build_library(importlib.resources.files(package).joinpath(name).read_bytes()))
        )
    except (OSError, subprocess.SubprocessError) as error:
        log.warning("topic reads use confluent-kafka: the native record decoder is unavailable (%s)", error)
        return None
    function = library.decode_records
    function.restype = ctypes.c_int64
    function.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
    function.argtypes += [ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(_Columns)]
    log.info("topic reads use raw fetches and the native record decoder")
    _decoder = function
    return function


class _WholeFrameConnection(WireConnection):
    """Reads each response frame with one blocking recv_into. The fetch thread then takes the GIL once per
    frame instead of once per socket read, each of which can wait the 5 ms switch interval while Spark's
    thread holds the GIL (bench/spark_read.py: 12.0 s with per-read switching, 6.1 s like this).

    Frames land in one buffer kept for the connection's life, handed out as a read-only view, so no frame is
    allocated and zero-filled per fetch (megabytes each). Fetch responses are read in place
    (parse_fetch_response) and their records decoded before the next request overwrites the buffer; kio's
    parser, for the other requests, copies what it keeps."""

    def __init__(self, address: str, **options: Any) -> None:
        # Set before connecting: SASL authentication in super().__init__ already reads frames.
        self._frame_buffer = bytearray(64 * 1024)
        super().__init__(address, **options)
        # Blocking mode so MSG_WAITALL waits for the whole frame; the kernel's receive timeout still bounds it.
        seconds = options["timeout_seconds"]
        self._sock.settimeout(None)
        timeout = struct.pack("ll", int(seconds), int((seconds % 1) * 1_000_000))
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeout)

    def _read_exactly(self, count: int) -> memoryview:
        if len(self._frame_buffer) < count:
            self._frame_buffer = bytearray(count)
        view = memoryview(self._frame_buffer)[:count]
        received = 0
        while received < count:
            read = self._sock.recv_into(view[received:], count - received, socket.MSG_WAITALL)
            if read == 0:
                raise ConnectionError("connection closed by the broker")
            received += read
        return view.toreadonly()


def _connect(settings: ConnectionSettings, address: str) -> WireConnection:
    return _WholeFrameConnection(
        address,
        security_protocol=settings.security_protocol,
        sasl_mechanism=settings.sasl_mechanism,
        username=settings.username,
        password=settings.password,
        timeout_seconds=CONNECT_TIMEOUT_S,
    )


def _connect_to_leader(settings: ConnectionSettings, topic: str, partition: int) -> WireConnection | None:
    """A connection to the partition's leader, or None when no bootstrap broker names one."""
    for address in settings.bootstrap:
        try:
            connection = _connect(settings, address)
        except KafkaGatewayError:
            continue
        try:
            metadata = connection.request(
                MetadataRequest(topics=(MetadataRequestTopic(name=TopicName(topic)),))
            )
        except KafkaGatewayError:
            connection.close()
            continue
        brokers = {b.node_id: f"{b.host}:{b.port}" for b in metadata.brokers}
        leader = next(
            (p.leader_id for t in metadata.topics for p in t.partitions if p.partition_index == partition),
            None,
        )
        if leader is None or leader not in brokers:
            connection.close()
            return None
        if brokers[leader] == address:
            return connection
        connection.close()
        try:
            return _connect(settings, brokers[leader])
        except KafkaGatewayError:
            return None
    return None


def _decompress(attributes: int, data: memoryview) -> bytes | memoryview:
    codec = attributes & CODEC_MASK
    if codec == Codec.NONE:
        return data  # decoded in place, no copy
    try:
        return decompress(codec_from_attributes(codec), data)
    except (CorruptRecordError, UnsupportedCompressionError) as error:
        raise RecordDataError(str(error)) from None


@dataclass(frozen=True)
class FetchedPartition:
    """The one partition of a Fetch v5 response to a single-partition request. `records` is a view into the
    connection's frame buffer, valid until the next request on that connection."""

    partition: int
    error_code: int
    high_watermark: int
    last_stable_offset: int
    aborted_transactions: list[tuple[int, int]]  # (first offset, producer id)
    records: memoryview


_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_FETCH_PARTITION = struct.Struct(">ihqqq")  # index, error code, high watermark, last stable, log start offset
_ABORTED = struct.Struct(">qq")  # producer id, first offset


def parse_fetch_response(frame: bytes | memoryview) -> FetchedPartition:
    """Reads a Fetch v5 response frame (correlation id first) in place: kio's reader copies the record set,
    megabytes per fetch, which the decoder then reads once and copies into Arrow buffers anyway."""
    view = memoryview(frame)
    try:
        position = 8  # correlation id, throttle time
        (topics,) = _INT32.unpack_from(view, position)
        (name_length,) = _INT16.unpack_from(view, position + 4)
        position += 6 + max(name_length, 0)
        (partitions,) = _INT32.unpack_from(view, position)
        if topics != 1 or partitions != 1:
            raise KafkaGatewayError("_BAD_MSG", f"a fetch of one partition answered {topics}/{partitions}")
        partition, error_code, high_watermark, last_stable, _log_start = _FETCH_PARTITION.unpack_from(
            view, position + 4
        )
        position += 4 + _FETCH_PARTITION.size
        (aborted_count,) = _INT32.unpack_from(view, position)
        position += 4
        aborted = []
        for _ in range(max(aborted_count, 0)):  # -1: null
            producer_id, first_offset = _ABORTED.unpack_from(view, position)
            aborted.append((first_offset, producer_id))
            position += _ABORTED.size
        (records_length,) = _INT32.unpack_from(view, position)
        position += 4
    except struct.error as error:
        raise KafkaGatewayError("_BAD_MSG", f"a truncated fetch response: {error}") from None
    records_length = max(records_length, 0)  # -1: null
    if position + records_length > len(view):
        raise KafkaGatewayError("_BAD_MSG", "a fetch response's records run past its frame")
    return FetchedPartition(
        partition,
        error_code,
        high_watermark,
        last_stable,
        aborted,
        view[position : position + records_length],
    )


@dataclass
class DecodedRecords:
    """The records of one record set in the range, and the offset to fetch next."""

    batch: pa.RecordBatch | None
    next_offset: int


class AbortedTransactions:
    """read_committed over raw batches: the data of a producer's transaction is dropped from the aborted
    transaction's first offset (as the Fetch response lists them) up to its ABORT marker."""

    def __init__(self) -> None:
        self.pending: list[tuple[int, int]] = []  # (first offset, producer id), ascending
        self.open: set[int] = set()

    def add(self, listed: list[tuple[int, int]]) -> None:
        self.pending = sorted(set(self.pending) | set(listed))

    def skips(self, producer_id: int, last_offset: int, attributes: int, payload: bytes | memoryview) -> bool:
        while self.pending and self.pending[0][0] <= last_offset:
            self.open.add(self.pending.pop(0)[1])
        if attributes & CONTROL_FLAG:
            if producer_id in self.open and _control_type(payload) == CONTROL_ABORT:
                self.open.discard(producer_id)
            return True
        return bool(attributes & TRANSACTIONAL_FLAG) and producer_id in self.open


def _control_type(records: bytes | memoryview) -> int:
    """The type in the key of a control batch's single record (length, attributes, deltas, key length)."""
    decoder = native_decoder()
    if decoder is None:
        raise RecordDataError("no decoder")
    columns = _allocate(1, len(records))
    data = np.frombuffer(records, np.uint8)
    if decoder(data.ctypes.data, len(data), 1, 0, 0, 0, 1, ctypes.byref(columns.struct)) != 1:
        raise RecordDataError("a malformed control record")
    key = columns.key_data[: columns.key_ends[1]].tobytes()
    if len(key) < CONTROL_KEY.size:
        raise RecordDataError("a control record without a key")
    return CONTROL_KEY.unpack_from(key)[1]


@dataclass
class _Buffers:
    offsets: np.ndarray
    timestamps: np.ndarray
    key_ends: np.ndarray | None
    key_valid: np.ndarray | None
    key_data: np.ndarray | None
    value_ends: np.ndarray | None
    value_valid: np.ndarray | None
    value_data: np.ndarray | None
    struct: _Columns


def _allocate(records: int, data_bytes: int, *, keys: bool = True, values: bool = True) -> _Buffers:
    """Column buffers for the decoder; keys or values not wanted get no buffers and are never copied."""

    def binary(wanted: bool) -> dict[str, np.ndarray | None]:
        if not wanted:
            return {"ends": None, "valid": None, "data": None}
        return {
            "ends": np.zeros(records + 1, np.int32),
            "valid": np.empty(records, np.uint8),
            "data": np.empty(max(data_bytes, 1), np.uint8),
        }

    arrays: dict[str, np.ndarray | None] = {
        "offsets": np.empty(records, np.int64),
        "timestamps": np.empty(records, np.int64),
        **{f"key_{name}": array for name, array in binary(keys).items()},
        **{f"value_{name}": array for name, array in binary(values).items()},
    }
    columns = _Columns(**{name: None if a is None else a.ctypes.data for name, a in arrays.items()})
    columns.record_capacity = records
    columns.key_capacity = data_bytes if keys else 0
    columns.value_capacity = data_bytes if values else 0
    return _Buffers(**arrays, struct=columns)


def _binary_column(ends: np.ndarray, valid: np.ndarray, data: np.ndarray, count: int, nulls: int) -> pa.Array:
    validity = pa.py_buffer(np.packbits(valid[:count], bitorder="little")) if nulls else None
    return pa.Array.from_buffers(
        pa.binary(), count, [validity, pa.py_buffer(ends[: count + 1]), pa.py_buffer(data)], null_count=nulls
    )


@dataclass
class _WantedBatch:
    payload: np.ndarray
    record_count: int
    base_offset: int
    base_timestamp: int
    append_time: int  # the broker's time for LogAppendTime batches, else -1


def decode_record_set(
    records: bytes | memoryview,
    offset_range: OffsetRange,
    next_offset: int,
    projection: Projection,
    aborted: AbortedTransactions,
) -> DecodedRecords:
    """The records of the complete batches in a Fetch response's record set with offsets in
    [next_offset, range end), with the projection's columns; a trailing partial batch (cut by max_bytes) is
    left for the next fetch."""
    decoder = native_decoder()
    if decoder is None:
        raise RecordDataError("the native record decoder is unavailable")
    view = memoryview(records)
    wanted: list[_WantedBatch] = []
    total_records = total_bytes = counted = 0
    position = 0
    while position + HEADER.size <= len(view) and next_offset < offset_range.end:
        header = HEADER.unpack_from(view, position)
        base_offset, batch_length, _epoch, magic, _crc, attributes, last_delta = header[:7]
        base_timestamp, max_timestamp, producer_id, _producer_epoch, _sequence, record_count = header[7:]
        batch_end = position + LOG_OVERHEAD + batch_length
        if batch_end > len(view):
            break
        if magic != 2:
            raise RecordDataError(f"record batch magic {magic}: only v2 is read here")
        payload = view[position + HEADER.size : batch_end]
        position = batch_end
        last_offset = base_offset + last_delta
        if last_offset < next_offset:
            continue
        next_offset = last_offset + 1
        control = attributes & CONTROL_FLAG
        if aborted.skips(
            producer_id, last_offset, attributes, _decompress(attributes, payload) if control else b""
        ):
            continue
        if projection.counts_only and base_offset >= offset_range.start and last_offset < offset_range.end:
            # Every record of the batch is in the range: its header says how many, nothing inside is needed.
            counted += record_count
            continue
        decompressed = _decompress(attributes, payload)
        # Uncompressed payloads are decoded in place: a view over the response, not a copy.
        wanted.append(
            _WantedBatch(
                np.frombuffer(decompressed, np.uint8),
                record_count,
                base_offset,
                base_timestamp,
                max_timestamp if attributes & TIMESTAMP_TYPE_FLAG else -1,
            )
        )
        total_records += record_count
        total_bytes += len(decompressed)

    if not wanted and not counted:
        return DecodedRecords(None, next_offset)
    if total_bytes >= 2**31:
        raise RecordDataError("more than 2 GiB of records in one fetch: beyond Arrow's binary offsets")
    buffers = _allocate(
        total_records, total_bytes, keys=projection.wants("key"), values=projection.wants("value")
    )
    columns = buffers.struct
    start, end = offset_range.start, offset_range.end
    stamp_types: list[tuple[int, int, int]] = []
    for batch in wanted:
        first = columns.count
        kept = decoder(
            batch.payload.ctypes.data,
            len(batch.payload),
            batch.record_count,
            batch.base_offset,
            batch.base_timestamp,
            start,
            end,
            ctypes.byref(columns),
        )
        if kept < 0:
            raise RecordDataError(f"a malformed record in the batch at offset {batch.base_offset}")
        if batch.append_time >= 0:
            stamp_types.append((first, first + kept, batch.append_time))
    count = columns.count + counted
    return DecodedRecords(
        _to_batch(buffers, columns, count, stamp_types, offset_range, projection), next_offset
    )


_create_time_zeros: np.ndarray = np.zeros(0, np.int32)


def _create_time_types(count: int) -> pa.Array:
    """`count` CreateTime (0) types, sliced from one zeroed array kept for the process (Arrow arrays are
    immutable, so batches can share it) instead of zero-filling a new one per fetch."""
    global _create_time_zeros
    if len(_create_time_zeros) < count:
        _create_time_zeros = np.zeros(count, np.int32)
    return pa.array(_create_time_zeros[:count])


def _to_batch(
    buffers: _Buffers,
    columns: _Columns,
    count: int,
    stamp_types: list[tuple[int, int, int]],
    offset_range: OffsetRange,
    projection: Projection,
) -> pa.RecordBatch:
    """The decoded columns the projection asks for, built without copying the decoder's buffers."""
    decoded = columns.count

    def timestamps() -> pa.Array:
        stamps = buffers.timestamps[:decoded]
        for first, last, append_time in stamp_types:
            # LogAppendTime batches: every record carries the broker's append time (the batch's max timestamp).
            stamps[first:last] = append_time
        # Milliseconds to Spark's microseconds in place: a fresh result array cost 30 times more per batch.
        np.multiply(stamps, 1000, out=stamps)
        return pa.array(stamps, TIMESTAMP_TYPE)

    def timestamp_types() -> pa.Array:
        if not stamp_types:
            return _create_time_types(decoded)
        types = np.zeros(decoded, np.int32)
        for first, last, _ in stamp_types:
            types[first:last] = 1
        return pa.array(types)

    builders = {
        "key": lambda: _binary_column(
            buffers.key_ends, buffers.key_valid, buffers.key_data, decoded, columns.key_nulls
        ),
        "value": lambda: _binary_column(
            buffers.value_ends, buffers.value_valid, buffers.value_data, decoded, columns.value_nulls
        ),
        "topic": lambda: pa.repeat(pa.scalar(offset_range.topic, pa.string()), count),
        "partition": lambda: pa.repeat(pa.scalar(offset_range.partition, pa.int32()), count),
        "offset": lambda: pa.array(buffers.offsets[:decoded]),
        "timestamp": timestamps,
        "timestampType": timestamp_types,
    }
    return pa.RecordBatch.from_arrays([builders[c]() for c in projection.columns], schema=projection.schema)


def read_range_raw(
    offset_range: OffsetRange,
    settings: ConnectionSettings,
    projection: Projection,
    *,
    fail_on_data_loss: bool,
    poll_timeout_ms: int,
) -> Generator[pa.RecordBatch, None, int | None]:
    """Yields the range's records as Arrow batches. Returns None when the range is done, or the offset from
    which the caller must read with confluent-kafka (no leader found, a partition error such as an offset
    out of range or a refused authorization), so errors are reported the same way on both paths."""
    connection = _connect_to_leader(settings, offset_range.topic, offset_range.partition)
    if connection is None:
        return offset_range.start
    _keep_fetch_buffers_in_heap()
    next_offset = offset_range.start
    aborted = AbortedTransactions()
    idle_since = time.monotonic()
    # One fetch is always in flight: the broker reads the next records while Spark takes in this batch.
    fetcher = ThreadPoolExecutor(1, thread_name_prefix="topic-fetch")
    isolation_level = 1 if settings.read_committed else 0
    pending = fetcher.submit(_fetch, connection, offset_range, next_offset, isolation_level)
    try:
        while True:
            try:
                part = pending.result()
            except KafkaGatewayError:
                return next_offset
            if part.error_code != 0:
                return next_offset
            aborted.add(part.aborted_transactions)
            try:
                # Decoded before the next fetch is sent: the records are a view of the connection's buffer.
                decoded = decode_record_set(part.records, offset_range, next_offset, projection, aborted)
            except RecordDataError as error:
                # Old message formats and corrupt data: librdkafka reads the one and reports the other.
                log.warning("raw read of %s handed to confluent-kafka: %s", offset_range, error)
                return next_offset
            progressed = decoded.next_offset > next_offset
            next_offset = decoded.next_offset
            if next_offset < offset_range.end:
                pending = fetcher.submit(_fetch, connection, offset_range, next_offset, isolation_level)
            if decoded.batch is not None and decoded.batch.num_rows:
                yield decoded.batch
            if next_offset >= offset_range.end:
                return None
            if progressed:
                idle_since = time.monotonic()
                continue
            # Nothing new: at the end of the (committed) log the rest of the range is gone.
            log_end = (
                part.last_stable_offset if settings.read_committed and part.last_stable_offset >= 0 else -1
            )
            log_end = log_end if log_end >= 0 else part.high_watermark
            if log_end <= next_offset:
                if fail_on_data_loss:
                    raise TopicReadError(
                        f"{offset_range.topic}-{offset_range.partition} ends at {log_end}, before the planned "
                        f"end {offset_range.end}; set failOnDataLoss=false to accept this"
                    )
                return None
            if time.monotonic() - idle_since > poll_timeout_ms / 1000:
                raise TopicReadError(
                    f"no records from {offset_range.topic}-{offset_range.partition} within {poll_timeout_ms} "
                    f"ms while reading [{offset_range.start}, {offset_range.end})"
                )
    finally:
        # The fetch in flight ends within its wait time; the connection closes only after it.
        fetcher.shutdown(wait=True)
        connection.close()


def _fetch(
    connection: WireConnection, offset_range: OffsetRange, offset: int, isolation_level: int
) -> FetchedPartition:
    frame = connection.request_frame(
        FetchRequest(
            replica_id=BrokerId(-1),
            max_wait=datetime.timedelta(milliseconds=FETCH_MAX_WAIT_MS),
            min_bytes=1,
            max_bytes=FETCH_MAX_BYTES,
            isolation_level=isolation_level,
            topics=(
                FetchTopic(
                    topic=TopicName(offset_range.topic),
                    partitions=(
                        FetchPartition(
                            partition=offset_range.partition,
                            fetch_offset=offset,
                            log_start_offset=-1,
                            partition_max_bytes=FETCH_MAX_BYTES,
                        ),
                    ),
                ),
            ),
        )
    )
    part = parse_fetch_response(frame)
    if part.partition != offset_range.partition:
        raise KafkaGatewayError(
            "_BAD_MSG", f"asked for partition {offset_range.partition}, got {part.partition}"
        )
    return part
