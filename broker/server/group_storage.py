"""The group coordinator's storage: Kafka's `__consumer_offsets` topic on our own logs."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

from broker.groups.coordinator import GroupCoordinator, GroupCoordinatorConfig
from broker.groups.offsets_log import OFFSETS_TOPIC_NAME
from broker.records.batch import iter_batches
from broker.records.records import Record, build_batch, decode_records
from broker.server.context import BrokerState

# Replay reads this much of a partition per step.
READ_CHUNK_BYTES = 4 * 1024 * 1024


class ConsumerOffsetsLog:
    """Implements broker.groups.offsets_log.OffsetsLog over the partition logs."""

    def __init__(self, state: BrokerState) -> None:
        self._state = state
        topic = state.topics.ensure_offsets_topic()
        self.num_partitions = topic.partitions

    def _partition_log(self, partition: int) -> Any:
        partition_log = self._state.logs.get(OFFSETS_TOPIC_NAME, partition)
        if partition_log is None:
            raise LookupError(f"{OFFSETS_TOPIC_NAME}-{partition} has no log")
        return partition_log

    async def append(self, partition: int, records: Sequence[tuple[bytes, bytes | None]]) -> int:
        topic = self._state.metadata.get(OFFSETS_TOPIC_NAME)
        epoch = topic.leader_epoch(partition) if topic is not None else 0
        now_ms = int(time.time() * 1000)
        batch = build_batch([Record(key=key, value=value, timestamp=now_ms) for key, value in records])
        partition_log = self._partition_log(partition)
        result = partition_log.append_as_leader(batch, leader_epoch=epoch, now_ms=now_ms)
        partition_log.high_watermark = partition_log.log_end_offset
        return int(result.last_offset)

    def read(self, partition: int) -> Iterator[tuple[int, bytes, bytes | None]]:
        partition_log = self._partition_log(partition)
        offset = partition_log.log_start_offset
        end = partition_log.log_end_offset
        while offset < end:
            chunk = partition_log.read(offset, READ_CHUNK_BYTES, max_offset=end, min_one_message=True)
            if not chunk:
                return
            for batch in iter_batches(chunk):
                if batch.is_control:
                    offset = batch.next_offset
                    continue
                for record in decode_records(batch):
                    record_offset = batch.base_offset + (record.offset_delta or 0)
                    if record_offset >= offset and record.key is not None:
                        yield record_offset, record.key, record.value
                offset = batch.next_offset


async def start_group_coordinator(state: BrokerState) -> GroupCoordinator:
    config = state.config
    coordinator = GroupCoordinator(
        ConsumerOffsetsLog(state),
        GroupCoordinatorConfig(
            initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms,
            min_session_timeout_ms=config.group_min_session_timeout_ms,
            max_session_timeout_ms=config.group_max_session_timeout_ms,
            offsets_retention_ms=config.get_int("offsets.retention.minutes") * 60_000,
        ),
    )
    await coordinator.start()
    return coordinator
