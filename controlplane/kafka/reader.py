"""Reading records of one topic for the message browser: assigned partitions, explicit offsets, never a
consumer group (nothing joins, nothing is committed).

A `TopicReader` holds one librdkafka consumer for one request. `bounds` asks every partition's log start
and end in one ListOffsets round (per leader), `read` fetches offset ranges of many partitions at once and
yields each partition's records in offset order, keeping `positions` (the next offset to read per
partition) exact, so a caller can stop anywhere and resume later without a gap or a repeat.
"""

from __future__ import annotations

import heapq
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import TracebackType

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from controlplane.kafka.connection import DEFAULT_TIMEOUT_SECONDS, Connection, librdkafka_log, raise_typed
from controlplane.kafka.errors import ClusterUnreachable

# ListOffsets timestamps that mean "the log end" and "the log start" (Kafka's LATEST and EARLIEST).
_LATEST = -1
_EARLIEST = -2
_BATCH = 1000
# A bounded prefetch queue: a browse reads little, and a scan must not hold hundreds of MB per request.
_QUEUED_KBYTES = 16 * 1024
_PARTITION_FETCH_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class Record:
    partition: int
    offset: int
    timestamp_ms: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]

    @property
    def size(self) -> int:
        """Bytes of key, value and headers (what the record costs to scan, without batch overhead)."""
        return (
            len(self.key or b"")
            + len(self.value or b"")
            + sum(len(name) + len(value or b"") for name, value in self.headers)
        )


def merge_key(record: Record) -> tuple[int, int, int]:
    """The browser's order across partitions: time, then partition and offset for equal times."""
    return record.timestamp_ms, record.partition, record.offset


def merged(per_partition: Mapping[int, list[Record]]) -> list[Record]:
    """Records of several partitions in time order; each partition's own (offset) order is kept even where
    its timestamps go backwards, so a prefix or suffix of the result is a prefix or suffix of each."""
    return list(heapq.merge(*per_partition.values(), key=merge_key))


class TopicReader:
    def __init__(
        self, connection: Connection, topic: str, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    ) -> None:
        self.topic = topic
        self.timeout_seconds = timeout_seconds
        config = {
            **connection.client_config(timeout_seconds),
            # A group id is required by the client; it is never joined (assign only) nor committed.
            "group.id": f"controlplane-browser-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "enable.partition.eof": True,
            "fetch.wait.max.ms": 100,
            "queued.max.messages.kbytes": _QUEUED_KBYTES,
            # Smaller per-partition fetches interleave the partitions, so a scan's early matches come from
            # all of them rather than from the first partition's first megabyte.
            "max.partition.fetch.bytes": _PARTITION_FETCH_BYTES,
        }
        try:
            self._consumer = Consumer(config, logger=librdkafka_log)
        except KafkaException as error:
            raise_typed(error.args[0] if error.args else None, "invalid client configuration")
            raise
        # Next offset to read per partition of the last `read`.
        self.positions: dict[int, int] = {}

    def __enter__(self) -> TopicReader:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._consumer.close()

    def _list_offsets(self, wanted: Mapping[int, int]) -> dict[int, int]:
        try:
            found = self._consumer.offsets_for_times(
                [TopicPartition(self.topic, partition, spec) for partition, spec in wanted.items()],
                self.timeout_seconds,
            )
        except KafkaException as error:
            raise_typed(error.args[0] if error.args else None, "ListOffsets failed")
            raise
        for tp in found:
            if tp.error is not None:
                raise_typed(tp.error, "ListOffsets failed")
        return {tp.partition: int(tp.offset) for tp in found}

    def bounds(self, partitions: list[int]) -> dict[int, tuple[int, int]]:
        """(log start, log end) per partition: the first offset still there and the next one to be written
        (the last stable offset under read_committed, librdkafka's default)."""
        if not partitions:
            return {}
        starts = self._list_offsets(dict.fromkeys(partitions, _EARLIEST))
        ends = self._list_offsets(dict.fromkeys(partitions, _LATEST))
        return {partition: (starts[partition], ends[partition]) for partition in partitions}

    def offsets_at(self, partitions: list[int], timestamp_ms: int) -> dict[int, int | None]:
        """The first offset whose timestamp is at or after `timestamp_ms`, None where no record is that
        recent."""
        found = self._list_offsets(dict.fromkeys(partitions, max(0, timestamp_ms)))
        return {partition: (offset if offset >= 0 else None) for partition, offset in found.items()}

    def read(
        self, ranges: Mapping[int, tuple[int, int | None]], *, deadline: float, idle_return: bool = False
    ) -> Iterator[Record]:
        """Records in [start, stop) of each partition (stop None: up to whatever arrives before the deadline),
        each partition in offset order, the partitions interleaved as fetched. `positions` follows every
        record yielded; a partition that reached its stop or the log end (nothing in between can be
        delivered: compaction gaps, transaction markers) is moved to its stop. With `idle_return`, the read
        ends at the first moment nothing is left to fetch after something was yielded (a tail's long-poll).
        The caller may stop consuming the iterator at any record."""
        self.positions = {partition: start for partition, (start, _stop) in ranges.items()}
        pending = {
            partition: stop for partition, (start, stop) in ranges.items() if stop is None or start < stop
        }
        if not pending:
            return
        self._consumer.assign([TopicPartition(self.topic, p, self.positions[p]) for p in pending])
        bounded = {p for p, stop in pending.items() if stop is not None}
        yielded = False
        try:
            while (pending.keys() & bounded or not bounded) and time.monotonic() < deadline:
                # consume() waits until it has a whole batch or the timeout passes: the last records of a
                # bounded read would wait the whole timeout, so bounded reads ask often and briefly.
                wait = 0.01 if bounded else 0.1
                timeout = max(0.0, min(wait, deadline - time.monotonic()))
                try:
                    batch = self._consumer.consume(num_messages=_BATCH, timeout=timeout)
                except KafkaException as error:
                    raise_typed(error.args[0] if error.args else None, "Fetch failed")
                    raise
                caught_up = not batch
                for message in batch:
                    partition = message.partition()
                    if partition not in pending:
                        continue  # fetched before the partition was finished
                    stop = pending[partition]
                    error = message.error()
                    if error is not None:
                        if error.code() != KafkaError._PARTITION_EOF:
                            raise_typed(error, "Fetch failed")
                        if stop is not None:
                            self.positions[partition] = stop
                            del pending[partition]
                        else:
                            self.positions[partition] = max(self.positions[partition], message.offset())
                            caught_up = True
                        continue
                    offset = message.offset()
                    if stop is not None and offset >= stop:
                        self.positions[partition] = stop
                        del pending[partition]
                        continue
                    self.positions[partition] = offset + 1
                    yielded = True
                    yield Record(
                        partition=partition,
                        offset=offset,
                        timestamp_ms=message.timestamp()[1],
                        key=message.key(),
                        value=message.value(),
                        headers=list(message.headers() or []),
                    )
                    if stop is not None and offset + 1 >= stop:
                        del pending[partition]
                if idle_return and yielded and caught_up:
                    return
        finally:
            self._consumer.unassign()


def read_newest(
    reader: TopicReader, bounds: Mapping[int, tuple[int, int]], limit: int, *, deadline: float
) -> list[Record]:
    """Exactly the latest `limit` records before each partition's `bounds` end, by time: each partition's
    own last `limit` records (read back from the end; further back where compaction or transaction markers
    left fewer), merged by timestamp, the limit applied after the merge."""
    tails: dict[int, list[Record]] = {p: [] for p in bounds}
    upper = {p: high for p, (_low, high) in bounds.items()}
    window = limit
    while True:
        ranges = {
            p: (max(bounds[p][0], upper[p] - window), upper[p])
            for p in bounds
            if len(tails[p]) < limit and upper[p] > bounds[p][0]
        }
        if not ranges:
            break
        fetched: dict[int, list[Record]] = {p: [] for p in ranges}
        for record in reader.read(ranges, deadline=deadline):
            fetched[record.partition].append(record)
        if any(reader.positions[p] < stop for p, (_start, stop) in ranges.items()):
            raise ClusterUnreachable("_TIMED_OUT", "the newest records could not be read in time")
        for p, (start, _stop) in ranges.items():
            tails[p] = fetched[p] + tails[p]
            upper[p] = start
        window *= 2
    return merged(tails)[-limit:]


def read_first(
    reader: TopicReader, ranges: Mapping[int, tuple[int, int]], limit: int, *, deadline: float
) -> list[Record]:
    """Exactly the first `limit` records by time of each partition's [start, end): each partition's own
    first `limit` (further on where offsets hold no record), merged by timestamp, the limit applied after
    the merge."""
    heads: dict[int, list[Record]] = {p: [] for p in ranges}
    lower = {p: start for p, (start, _end) in ranges.items()}
    window = limit
    while True:
        step = {
            p: (lower[p], min(end, lower[p] + window))
            for p, (_start, end) in ranges.items()
            if len(heads[p]) < limit and lower[p] < end
        }
        if not step:
            break
        for record in reader.read(step, deadline=deadline):
            heads[record.partition].append(record)
        if any(reader.positions[p] < stop for p, (_start, stop) in step.items()):
            raise ClusterUnreachable("_TIMED_OUT", "the records could not be read in time")
        for p, (_start, stop) in step.items():
            lower[p] = stop
        window *= 2
    return merged(heads)[:limit]
