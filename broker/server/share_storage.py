"""Share-partition state on `__share_group_state` (KIP-932's persister), in Kafka's record format.

The leader of a share-partition writes a ShareSnapshot of its window after every request that changed it
and before answering (so an acknowledged record stays acknowledged), and reads the latest snapshot when it
first serves the share-partition (after a restart or a leader change). The snapshot's partition of
`__share_group_state` is Kafka's (abs(hash("group:topicId:partition")) % partitions); this broker appends to
it as its leader. A single node creates the topic on first use; a cluster member persists only where it
leads that partition of an existing topic (see README: share groups).
"""

from __future__ import annotations

import logging
import time
import uuid

from broker.context import BrokerState
from broker.groups.offsets_log import OffsetsAppendError
from broker.metadata.coordinator_records import CoordinatorRecordError
from broker.server.group_storage import append_and_commit, read_led
from broker.share.share_partition import SharePartition
from broker.share.state_records import (
    SHARE_STATE_TOPIC,
    ShareSnapshot,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
    share_state_partition,
)

log = logging.getLogger(__name__)

ShareKey = tuple[str, uuid.UUID, int]


class ShareStateStore:
    def __init__(self, state: BrokerState) -> None:
        self._state = state
        # Per `__share_group_state` partition replayed here: key -> its latest snapshot.
        self._replayed: dict[int, dict[ShareKey, ShareSnapshot]] = {}
        # What was last written (or read) per share-partition: its window version and snapshot epoch.
        self._written: dict[ShareKey, tuple[int, int]] = {}

    def _num_partitions(self) -> int | None:
        topic = self._state.metadata.get(SHARE_STATE_TOPIC)
        if topic is None and self._state.cluster is None:
            config = self._state.config
            topic = self._state.topics.create_topic(
                SHARE_STATE_TOPIC,
                config.get_int("share.coordinator.state.topic.num.partitions"),
                1,
                {"cleanup.policy": "compact", "compression.type": "producer"},
                internal=True,
            )
        return None if topic is None else topic.partitions

    def _location(self, key: ShareKey) -> int | None:
        count = self._num_partitions()
        return None if count is None else share_state_partition(*key, count)

    def load(self, key: ShareKey) -> ShareSnapshot | None:
        """The latest snapshot of a share-partition, or None (never written, or not reachable here)."""
        partition = self._location(key)
        if partition is None:
            return None
        if partition not in self._replayed:
            try:
                entries = list(read_led(self._state, SHARE_STATE_TOPIC, partition))
            except LookupError:
                return None
            latest: dict[ShareKey, ShareSnapshot] = {}
            for entry in entries:
                if entry.key is None:
                    continue
                try:
                    decoded = decode_key(entry.key)
                    if decoded is None:
                        continue
                    if entry.value is None:
                        latest.pop(decoded, None)
                    else:
                        latest[decoded] = decode_value(entry.value)
                except CoordinatorRecordError as exc:
                    log.warning(
                        "skipping a malformed %s record at offset %d: %s",
                        SHARE_STATE_TOPIC,
                        entry.offset,
                        exc,
                    )
            self._replayed[partition] = latest
        snapshot = self._replayed[partition].get(key)
        if snapshot is not None:
            self._written[key] = (0, snapshot.snapshot_epoch)
        return snapshot

    def restore(
        self, key: ShareKey, *, delivery_count_limit: int, max_in_flight: int
    ) -> SharePartition | None:
        snapshot = self.load(key)
        if snapshot is None:
            return None
        share = SharePartition.restored(
            snapshot.start_offset,
            snapshot.state_batches,
            delivery_count_limit=delivery_count_limit,
            max_in_flight=max_in_flight,
        )
        self._written[key] = (share.version, snapshot.snapshot_epoch)
        return share

    async def save(self, key: ShareKey, share: SharePartition, leader_epoch: int) -> bool:
        """Write the window if it changed since the last write; False when it could not be written."""
        version, epoch = self._written.get(key, (-1, -1))
        if version == share.version:
            return True
        partition = self._location(key)
        if partition is None:
            return False
        now = int(time.time() * 1000)
        snapshot = ShareSnapshot(
            snapshot_epoch=epoch + 1,
            state_epoch=0,
            leader_epoch=leader_epoch,
            start_offset=share.start_offset,
            create_timestamp=now,
            write_timestamp=now,
            state_batches=tuple(share.state_batches()),
        )
        try:
            await append_and_commit(
                self._state,
                SHARE_STATE_TOPIC,
                partition,
                [(encode_key(*key), encode_value(snapshot))],
                self._state.config.get_int("share.coordinator.write.timeout.ms") / 1000,
            )
        except OffsetsAppendError as exc:
            log.warning(
                "share state of %s not written to %s: error %s", key, SHARE_STATE_TOPIC, exc.error_code
            )
            return False
        self._written[key] = (share.version, snapshot.snapshot_epoch)
        self._replayed.setdefault(partition, {})[key] = snapshot
        return True

    async def forget(self, key: ShareKey) -> None:
        """DeleteShareGroupOffsets: a tombstone, so the share-partition starts over when next read."""
        partition = self._location(key)
        if partition is None:
            return
        try:
            await append_and_commit(
                self._state,
                SHARE_STATE_TOPIC,
                partition,
                [(encode_key(*key), None)],
                self._state.config.get_int("share.coordinator.write.timeout.ms") / 1000,
            )
        except OffsetsAppendError as exc:
            log.warning(
                "share state of %s not deleted from %s: error %s", key, SHARE_STATE_TOPIC, exc.error_code
            )
            return
        self._written.pop(key, None)
        self._replayed.get(partition, {}).pop(key, None)
