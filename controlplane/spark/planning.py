"""Turning the read options into offset ranges: which partitions, and from where to where.

Runs in the driver with a confluent-kafka consumer that never joins a group (metadata, watermarks and
ListOffsets only).
"""

from __future__ import annotations

import itertools
import math
import re
import uuid
from typing import TYPE_CHECKING

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from controlplane.spark.offset_range import OffsetRange
from controlplane.spark.options import (
    EARLIEST,
    LATEST,
    InvalidOptions,
    OffsetSpec,
    ReadOptions,
    TopicSelection,
)

if TYPE_CHECKING:
    from controlplane.spark.pushdown import RangeFilter

METADATA_TIMEOUT_S = 15.0


class TopicReadError(RuntimeError):
    """A read cannot go ahead: unknown topic, offsets out of range, unreachable cluster, refused access."""


class PlanningConsumer(Consumer):
    """A consumer that keeps the client errors librdkafka reports on the side (an authentication failure
    surfaces from a metadata request only as "transport failure"), so refusals can name their cause."""

    def __init__(self, kafka_config: dict[str, str]) -> None:
        self.errors: list[KafkaError] = []
        super().__init__(
            {
                "group.id": f"spark-planner-{uuid.uuid4().hex[:12]}",
                "enable.auto.commit": False,
                "allow.auto.create.topics": False,
                **kafka_config,
                "error_cb": self.errors.append,
            }
        )

    def cause(self) -> str:
        """The most telling error seen so far: authentication first, else the latest one."""
        self.poll(0)  # error callbacks are only served while polling
        authentication = [e for e in self.errors if e.code() in _AUTHENTICATION_CODES]
        chosen = authentication or self.errors
        return f" ({chosen[-1].str()})" if chosen else ""


_AUTHENTICATION_CODES = {KafkaError._AUTHENTICATION, KafkaError.SASL_AUTHENTICATION_FAILED}


def planning_consumer(kafka_config: dict[str, str]) -> PlanningConsumer:
    return PlanningConsumer(kafka_config)


def _raise_kafka(error: KafkaException | KafkaError, what: str, consumer: Consumer | None = None) -> None:
    kafka_error = error.args[0] if isinstance(error, KafkaException) else error
    cause = consumer.cause() if isinstance(consumer, PlanningConsumer) else ""
    raise TopicReadError(
        f"{what}: {kafka_error.str() if hasattr(kafka_error, 'str') else kafka_error}{cause}"
    )


def select_partitions(consumer: Consumer, selection: TopicSelection) -> list[tuple[str, int]]:
    """The (topic, partition) pairs the selection names, checked against the cluster's metadata."""
    try:
        metadata = consumer.list_topics(timeout=METADATA_TIMEOUT_S)
    except KafkaException as error:
        _raise_kafka(error, "cannot read the cluster's metadata", consumer)
    known = {
        name: sorted(topic.partitions)
        for name, topic in metadata.topics.items()
        if topic.error is None and not name.startswith("__")
    }
    if selection.pattern is not None:
        pattern = re.compile(selection.pattern)
        return [(name, p) for name in sorted(known) if pattern.fullmatch(name) for p in known[name]]
    if selection.topics:
        missing = [name for name in selection.topics if name not in known]
        if missing:
            raise TopicReadError(f"unknown topic(s): {', '.join(missing)}")
        return [(name, p) for name in selection.topics for p in known[name]]
    for topic, partition in selection.assigned:
        if partition not in known.get(topic, []):
            raise TopicReadError(f"unknown topic partition: {topic}-{partition}")
    return list(selection.assigned)


def watermarks(consumer: Consumer, pairs: list[tuple[str, int]]) -> dict[tuple[str, int], tuple[int, int]]:
    result = {}
    for topic, partition in pairs:
        try:
            result[(topic, partition)] = consumer.get_watermark_offsets(
                TopicPartition(topic, partition), timeout=METADATA_TIMEOUT_S, cached=False
            )
        except KafkaException as error:
            _raise_kafka(error, f"cannot read the offsets of {topic}-{partition}", consumer)
    return result


def _offsets_for_timestamps(
    consumer: Consumer, stamps: dict[tuple[str, int], int], marks: dict[tuple[str, int], tuple[int, int]]
) -> dict[tuple[str, int], int]:
    """The first offset at or after each timestamp; the end of the log when no record is that late."""
    if not stamps:
        return {}
    query = [TopicPartition(t, p, ts) for (t, p), ts in stamps.items()]
    try:
        answers = consumer.offsets_for_times(query, timeout=METADATA_TIMEOUT_S)
    except KafkaException as error:
        _raise_kafka(error, "cannot look up offsets by timestamp", consumer)
    result = {}
    for answer in answers:
        if answer.error is not None:
            _raise_kafka(
                answer.error, f"cannot look up offsets by timestamp in {answer.topic}-{answer.partition}"
            )
        key = (answer.topic, answer.partition)
        result[key] = answer.offset if answer.offset >= 0 else marks[key][1]
    return result


def _wanted_offsets(
    consumer: Consumer, spec: OffsetSpec, marks: dict[tuple[str, int], tuple[int, int]]
) -> dict[tuple[str, int], int]:
    """Per partition: an exact offset, or EARLIEST / LATEST still to be resolved against the watermarks."""
    if spec.timestamp is not None:
        return _offsets_for_timestamps(consumer, dict.fromkeys(marks, spec.timestamp), marks)
    if spec.per_partition_timestamp:
        unknown = set(spec.per_partition_timestamp) - set(marks)
        if unknown:
            raise InvalidOptions(f"timestamps given for partitions that are not read: {sorted(unknown)}")
        missing = set(marks) - set(spec.per_partition_timestamp)
        if missing:
            raise InvalidOptions(f"no timestamp given for partitions {sorted(missing)}")
        return _offsets_for_timestamps(consumer, spec.per_partition_timestamp, marks)
    unknown = set(spec.per_partition) - set(marks)
    if unknown:
        raise InvalidOptions(f"offsets given for partitions that are not read: {sorted(unknown)}")
    return {key: spec.per_partition.get(key, spec.default) for key in marks}


def resolve_offset(
    key: tuple[str, int], wanted: int, marks: tuple[int, int], *, fail_on_data_loss: bool
) -> int:
    """An offset within [low, high]; outside it is an error, or clamped when data loss is accepted."""
    low, high = marks
    if wanted == EARLIEST:
        return low
    if wanted == LATEST:
        return high
    if wanted < low:
        if fail_on_data_loss:
            raise TopicReadError(
                f"offset {wanted} of {key[0]}-{key[1]} is no longer available (log starts at {low}); "
                "set failOnDataLoss=false to start at the earliest record instead"
            )
        return low
    if wanted > high:
        if fail_on_data_loss:
            raise TopicReadError(
                f"offset {wanted} of {key[0]}-{key[1]} is beyond the end of the log ({high}); "
                "set failOnDataLoss=false to stop at the latest record instead"
            )
        return high
    return wanted


def resolve_spec(
    consumer: Consumer,
    spec: OffsetSpec,
    marks: dict[tuple[str, int], tuple[int, int]],
    *,
    fail_on_data_loss: bool,
) -> dict[tuple[str, int], int]:
    wanted = _wanted_offsets(consumer, spec, marks)
    return {
        key: resolve_offset(key, offset, marks[key], fail_on_data_loss=fail_on_data_loss)
        for key, offset in wanted.items()
    }


def plan_batch(options: ReadOptions, range_filter: RangeFilter | None = None) -> list[OffsetRange]:
    """The offset ranges of a batch read, in topic and partition order, empty ones left out, narrowed to what
    the filters Spark pushed down allow."""
    consumer = planning_consumer(options.kafka_config)
    try:
        pairs = select_partitions(consumer, options.selection)
        marks = watermarks(consumer, pairs)
        starts = resolve_spec(consumer, options.starting, marks, fail_on_data_loss=options.fail_on_data_loss)
        ends = resolve_spec(consumer, options.ending, marks, fail_on_data_loss=options.fail_on_data_loss)
        for key in pairs:
            if ends[key] < starts[key]:
                raise InvalidOptions(
                    f"ending offset {ends[key]} of {key[0]}-{key[1]} is before its starting offset {starts[key]}"
                )
        if range_filter is not None:
            pairs = [key for key in pairs if range_filter.allows_partition(key[1])]
            if range_filter.min_timestamp_ms is not None:
                # Records before the first one at or after the timestamp are all earlier: start there.
                stamps = dict.fromkeys(pairs, range_filter.min_timestamp_ms)
                by_time = _offsets_for_timestamps(consumer, stamps, marks)
                starts = {key: max(starts[key], by_time.get(key, starts[key])) for key in starts}
    finally:
        consumer.close()
    ranges = [OffsetRange(key[0], key[1], starts[key], ends[key]) for key in pairs if ends[key] > starts[key]]
    if range_filter is not None:
        ranges = range_filter.narrow(ranges)
    return split_ranges(ranges, options.min_partitions)


def split_ranges(ranges: list[OffsetRange], min_partitions: int | None) -> list[OffsetRange]:
    """Split large ranges so there are at least `min_partitions` pieces, each range in proportion to its size."""
    if not min_partitions or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)
    pieces: list[OffsetRange] = []
    for offset_range in ranges:
        count = max(1, min(offset_range.size, math.ceil(offset_range.size / total * min_partitions)))
        step = offset_range.size / count
        bounds = [offset_range.start + round(step * i) for i in range(count)] + [offset_range.end]
        pieces.extend(
            OffsetRange(offset_range.topic, offset_range.partition, lo, hi)
            for lo, hi in itertools.pairwise(bounds)
            if hi > lo
        )
    return pieces


def limit_offsets(start: dict[tuple[str, int], int], latest: dict[tuple[str, int], int], limit: int) -> dict:
    """End offsets that read at most `limit` records in total, shared in proportion to each partition's backlog
    (as Spark's maxOffsetsPerTrigger does), never less than one record from a partition with a backlog."""
    backlog = {key: max(0, latest[key] - start.get(key, latest[key])) for key in latest}
    total = sum(backlog.values())
    if total <= limit:
        return dict(latest)
    ends = {}
    for key, pending in backlog.items():
        share = math.floor(pending / total * limit)
        ends[key] = start.get(key, latest[key]) + (max(1, share) if pending else 0)
    return ends
