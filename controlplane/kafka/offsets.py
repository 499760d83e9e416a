"""Partition offsets: looked up (ListOffsets) and moved forward by deleting records (DeleteRecords)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from confluent_kafka import TopicPartition
from confluent_kafka.admin import OffsetSpec

from controlplane.kafka.connection import DEFAULT_TIMEOUT_SECONDS, Connection, admin_client, await_result


def list_partition_offsets(
    connection: Connection,
    partitions: Iterable[tuple[str, int]],
    *,
    spec: str = "latest",
    timestamp_ms: int | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> dict[tuple[str, int], int]:
    """Offsets per (topic, partition): `earliest`, `latest`, or the first at or after `timestamp_ms`
    (-1 where no record is that recent)."""
    wanted = list(partitions)
    if not wanted:
        return {}
    if spec == "earliest":
        offset_spec = OffsetSpec.earliest()
    elif spec == "timestamp":
        offset_spec = OffsetSpec.for_timestamp(int(timestamp_ms or 0))
    else:
        offset_spec = OffsetSpec.latest()
    admin = admin_client(connection, timeout_seconds)
    futures = admin.list_offsets(
        {TopicPartition(topic, partition): offset_spec for topic, partition in wanted},
        request_timeout=timeout_seconds,
    )
    return {
        (tp.topic, tp.partition): int(await_result(future, "ListOffsets", timeout_seconds).offset)
        for tp, future in futures.items()
    }


def delete_records(
    connection: Connection,
    before_offsets: Mapping[tuple[str, int], int],
    *,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> dict[tuple[str, int], int]:
    """DeleteRecords: every record before the given offset goes (-1 means up to the end); returns the
    new log-start offsets."""
    if not before_offsets:
        return {}
    admin = admin_client(connection, timeout_seconds)
    futures = admin.delete_records(
        [TopicPartition(topic, partition, offset) for (topic, partition), offset in before_offsets.items()],
        request_timeout=timeout_seconds,
        operation_timeout=timeout_seconds,
    )
    return {
        (tp.topic, tp.partition): int(await_result(future, "DeleteRecords", timeout_seconds).low_watermark)
        for tp, future in futures.items()
    }
