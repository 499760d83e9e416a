"""ReplicaManager: the cross-partition service of one broker (Kafka's `ReplicaManager`).

Each hosted partition is one `Partition` (partition.py) that owns its log, leader epoch, ISR, high
watermark, acks=all waiters and follower state. This manager holds them and does what spans
partitions: it applies the metadata image to them — leadership comes from the controller's metadata
log (`broker.controller.api`), through `on_image_loaded` / `on_partition_changed`, idempotent by
leader epoch (a repeated or older assignment changes nothing) — creates new logs off the event loop,
runs the replica fetchers (`broker.replication.fetcher`), sweeps the ISRs it leads (shrink, expand,
reconcile with the committed metadata), sends its leaders' AlterPartition proposals in batches
(`AlterPartitionManager`, alter_partition.py) and hands each partition its answer, writes the high watermark
checkpoints, and looks partitions up for the request path (handlers reach it through `broker.partitions`,
never directly).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kio.schema.errors import ErrorCode

from broker.controller.api import (
    NO_LEADER,
    AlterPartitionsSender,
    BrokerRegistration,
    Endpoint,
    PartitionAssignment,
    TopicConfigChange,
)
from broker.log.config import LogConfig
from broker.log.leader_epoch import leader_epoch_error
from broker.log.log_manager import LogManager
from broker.metadata.topic_names import OFFSETS_TOPIC_NAME
from broker.metadata.topic_registry import MetadataStore, TopicRecord
from broker.replication.alter_partition import AlterPartitionManager
from broker.replication.config import ReplicationConfig
from broker.replication.fetcher import FetcherPool
from broker.replication.partition import ALTER_PARTITION_RETRY_S, Partition, now_ms
from broker.replication.throttle import ReplicationThrottle
from broker.runtime.heap import full_collections

log = logging.getLogger(__name__)

LEADER_THROTTLED_RATE = "leader.replication.throttled.rate"
FOLLOWER_THROTTLED_RATE = "follower.replication.throttled.rate"
# How often a leader compares its ISR with the committed metadata where an event may have set them apart (see
# reconcile_with_committed), and how often it compares every partition it leads.
ISR_RECONCILE_INTERVAL_S = 1.0
ISR_RECONCILE_SWEEP_S = 30.0
# expand_isrs proposes only followers whose latest Fetch (any partition) is at most this old.
FOLLOWER_ACTIVE_MS = 3_000
# New partition logs are created in a worker thread, this many per hand-off (see _open_new_logs).
OPEN_BATCH = 256
# Opened partitions become leader or follower on the loop in slices of this long.
APPLY_SLICE_S = 0.01


class ReplicaManager:
    def __init__(
        self,
        config: ReplicationConfig,
        controller: AlterPartitionsSender | None = None,
        *,
        logs: LogManager,
        metadata: MetadataStore,
        log_config: Callable[[TopicRecord], LogConfig],
        broker_epoch: Callable[[], int | None],
    ) -> None:
        """`controller`: where AlterPartition proposals go; `broker_epoch`: this broker's registration
        epoch (None until it registered), read as each batch of proposals is sent."""
        # The broker's logs and topic registry, and how a topic's configs become its log's: what
        # this layer needs of the broker, given rather than reached for through its whole state.
        self.logs = logs
        self.metadata = metadata
        self.log_config_for = log_config
        self.config = config
        self.node_id = config.node_id
        self.alter_partitions = AlterPartitionManager(controller, config.node_id, broker_epoch)
        self.assignments: dict[tuple[str, int], PartitionAssignment] = {}
        # Every partition this broker hosts, leader or follower.
        self.partitions: dict[tuple[str, int], Partition] = {}
        # The partitions this broker leads: the periodic ISR work looks at these only, not at every one.
        self._leading: dict[tuple[str, int], Partition] = {}
        # Leaders whose ISR may disagree with the committed metadata (an AlterPartition answered or lost, a
        # stale update ignored, a new image or leadership): reconcile_with_committed looks at these every
        # interval and at every leader only every ISR_RECONCILE_SWEEP_S.
        self._to_reconcile: set[tuple[str, int]] = set()
        self._reconcile_swept = time.monotonic()
        self.brokers: dict[int, BrokerRegistration] = {}
        # Bumps on every change a Metadata response shows (leaders, ISR, brokers); per topic in
        # `topic_versions` and for the broker list in `brokers_version`, so that a Metadata answer
        # reuses the encoded entry of every topic that did not change.
        self.version = 0
        self.topic_versions: dict[str, int] = {}
        self.brokers_version = 0
        monotonic = time.monotonic()
        self.leader_throttle = ReplicationThrottle(config.leader_replication_throttled_rate, monotonic)
        self.follower_throttle = ReplicationThrottle(config.follower_replication_throttled_rate, monotonic)
        # Dynamic broker configs by resource name (this broker's id, or "" for the cluster default).
        self.dynamic_configs: dict[str, dict[str, str]] = {}
        self.fetchers: FetcherPool | None = None
        # The partition as the metadata log committed it (the broker's image), for reconciling.
        self.committed_assignment: Callable[[str, int], PartitionAssignment | None] | None = None
        # Follower broker id -> when its latest Fetch arrived (ms): with fetch sessions an idle
        # partition is not named in every fetch, yet a follower that fetches is caught up on it.
        self.last_follower_fetch_ms: dict[int, int] = {}
        # Called with (topic, partition) whenever its assignment or leadership here changes (fetch
        # sessions read such a partition again instead of rereading all of theirs).
        self.partition_listeners: list[Callable[[tuple[str, int]], None]] = []
        # The high watermark each replica's checkpoint file holds.
        self._checkpointed: dict[tuple[str, int], int] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._alter_tasks: set[asyncio.Task[None]] = set()
        # Hosted partitions whose log does not exist yet, waiting for the worker thread that creates
        # it (a directory and three files each: 10,000 of them are ~20 s of file system calls, which
        # must not run on the event loop). They become leader or follower once their log exists.
        self._logs_to_open: dict[tuple[str, int], None] = {}
        # The batch the worker thread is creating now, and an event set (then replaced) each time a
        # batch's replicas are opened: a request for a partition this broker is to lead waits for its
        # log instead of being refused.
        self._logs_opening: set[tuple[str, int]] = set()
        self._logs_opened = asyncio.Event()
        self._open_wakeup: asyncio.Event | None = None
        self._closing = False

    # ---- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        self.fetchers = FetcherPool(self)
        self._open_wakeup = asyncio.Event()
        self._tasks.append(asyncio.create_task(self._open_new_logs(), name="replication-open-logs"))
        for partition in self.partitions.values():
            if not partition.is_leader:
                self.fetchers.follow(partition)
        # Caught up with the metadata now: logs of partitions assigned elsewhere can go.
        for assignment in list(self.assignments.values()):
            if not assignment.is_replica(self.node_id):
                self._delete_log(assignment)
        self._tasks.append(
            asyncio.create_task(
                self._every(self.config.replica_lag_time_max_ms / 2000, self.shrink_lagging_isrs),
                name="replication-isr-shrink",
            )
        )
        self._tasks.append(
            asyncio.create_task(
                self._every(ALTER_PARTITION_RETRY_S, self.expand_isrs), name="replication-isr-expand"
            )
        )
        if self.committed_assignment is not None:
            self._tasks.append(
                asyncio.create_task(
                    self._every(ISR_RECONCILE_INTERVAL_S, self.reconcile_with_committed),
                    name="replication-isr-reconcile",
                )
            )
        self._tasks.append(
            asyncio.create_task(
                self._every(self.config.high_watermark_checkpoint_interval_ms / 1000, self.checkpoint),
                name="replication-hwm-checkpoint",
            )
        )

    async def close(self) -> None:
        if self._closing:
            return  # closed already (its starter and the broker's shutdown both close it)
        self._closing = True
        for task in [*self._tasks, *self._alter_tasks]:
            task.cancel()
        for task in [*self._tasks, *self._alter_tasks]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.alter_partitions.close()
        if self.fetchers is not None:
            await self.fetchers.close()
        for partition in self.partitions.values():
            partition.stop()
        self.checkpoint()

    async def _every(self, interval_s: float, work: Any) -> None:
        while True:
            await asyncio.sleep(max(interval_s, 0.05))
            try:
                work()
            except Exception:
                log.exception("replication periodic task failed")

    def checkpoint(self) -> None:
        """Write the high watermark of every replica whose watermark moved since its last checkpoint
        (10,000 idle partitions must not cost 10,000 file replacements every interval)."""
        checkpointed = self._checkpointed
        changed = {
            key: partition.log.high_watermark
            for key, partition in self.partitions.items()
            if checkpointed.get(key) != partition.log.high_watermark
        }
        # One file per log dir, as Kafka's replication-offset-checkpoint, not one per partition.
        self.logs.checkpoint_high_watermarks(changed)
        checkpointed.update(changed)

    # ---- metadata (broker.controller.api.MetadataListener) ------------------------------------

    def on_image_loaded(
        self, partitions: Sequence[PartitionAssignment], brokers: Sequence[BrokerRegistration]
    ) -> None:
        previous_brokers, self.brokers = self.brokers, {b.broker_id: b for b in brokers}
        if self.fetchers is not None:
            for broker_id, broker in self.brokers.items():
                if previous_brokers.get(broker_id, broker).endpoints != broker.endpoints:
                    self.fetchers.broker_changed(broker_id)
        known = {(p.topic, p.partition) for p in partitions}
        for key in [k for k in self.assignments if k not in known]:
            self.on_partition_removed(self.assignments[key])
        for assignment in partitions:
            self.apply(assignment)
        self._to_reconcile.update(self._leading)
        self.version += 1
        self.brokers_version += 1

    def on_partition_changed(
        self, previous: PartitionAssignment | None, current: PartitionAssignment
    ) -> None:
        self.apply(current)

    def on_partition_removed(self, previous: PartitionAssignment) -> None:
        key = (previous.topic, previous.partition)
        self.assignments.pop(key, None)
        self._logs_to_open.pop(key, None)
        self._partition_changed(key)
        partition = self.partitions.pop(key, None)
        if partition is not None:
            # Its topic is deleted (its log with it): no high watermark to keep.
            self._stop_partition(partition, checkpoint=False)
        self._bump_version(previous.topic)

    def on_topic_configs_changed(self, change: TopicConfigChange) -> None:
        """Configs are applied to the topic registry and logs by the broker's metadata applier."""

    def on_broker_changed(self, broker: BrokerRegistration) -> None:
        self.brokers[broker.broker_id] = broker
        self.version += 1
        self.brokers_version += 1
        if self.fetchers is not None:
            self.fetchers.broker_changed(broker.broker_id)

    def on_broker_configs_changed(self, resource_name: str, configs: Mapping[str, str]) -> None:
        """`leader.replication.throttled.rate` / `follower.replication.throttled.rate` set
        dynamically (AlterConfigs on this broker, or on the cluster default ""): they override the
        properties file, this broker's over the default."""
        if resource_name not in ("", str(self.node_id)):
            return
        self.dynamic_configs[resource_name] = dict(configs)
        now = time.monotonic()
        for throttle, name, static in (
            (self.leader_throttle, LEADER_THROTTLED_RATE, self.config.leader_replication_throttled_rate),
            (
                self.follower_throttle,
                FOLLOWER_THROTTLED_RATE,
                self.config.follower_replication_throttled_rate,
            ),
        ):
            throttle.set_rate(self.dynamic_rate(name, static), now)

    def dynamic_rate(self, name: str, static: int | None) -> int | None:
        for resource_name in (str(self.node_id), ""):
            value = self.dynamic_configs.get(resource_name, {}).get(name)
            if value is not None:
                return int(value)
        return static

    def on_security_records(self, records: Sequence[dict[str, Any]]) -> None:
        """ACLs, SCRAM and quotas are not the data path's business."""

    def _bump_version(self, topic: str) -> None:
        self.version += 1
        self.topic_versions[topic] = self.topic_versions.get(topic, 0) + 1

    def _partition_changed(self, key: tuple[str, int]) -> None:
        for listener in self.partition_listeners:
            listener(key)

    # ---- becoming leader or follower ----------------------------------------------------------

    def apply(self, assignment: PartitionAssignment) -> None:
        key = (assignment.topic, assignment.partition)
        current = self.assignments.get(key)
        if current is not None and _older(assignment, current):
            if key in self._leading:
                self._to_reconcile.add(key)
            return  # a stale update (replayed or reordered): ignore it
        self.assignments[key] = assignment
        self._bump_version(assignment.topic)
        self._partition_changed(key)
        topic = self._registered_topic(assignment)
        if not assignment.is_replica(self.node_id):
            self._logs_to_open.pop(key, None)
            self._drop_partition(assignment)
            return
        if key not in self.partitions and self._open_later(key, topic):
            return
        if assignment.leader == self.node_id:
            self.become_leader(assignment, topic)
        else:
            self.become_follower(assignment, topic)

    def _registered_topic(self, assignment: PartitionAssignment) -> TopicRecord:
        """The topic registry must know every partition handlers may be asked about."""
        metadata = self.metadata
        topic = metadata.get(assignment.topic)
        if topic is None:
            topic = TopicRecord(
                name=assignment.topic,
                topic_id=assignment.topic_id,
                partitions=assignment.partition + 1,
                replication_factor=len(assignment.replicas),
                leader_epochs=(0,) * (assignment.partition + 1),
            )
            return metadata.add_topic(topic)
        if topic.partitions <= assignment.partition:
            return metadata.add_partitions(assignment.topic, assignment.partition + 1)
        return topic

    def _open_later(self, key: tuple[str, int], topic: TopicRecord) -> bool:
        """Whether the partition's log is (now) left to the worker thread: only once the manager
        runs, only for logs that do not exist yet, and never for `__consumer_offsets` (the group
        coordinator reads its partitions as soon as this broker leads them)."""
        if self._open_wakeup is None or topic.internal or topic.name == OFFSETS_TOPIC_NAME:
            return False
        if key in self._logs_to_open:
            return True
        if self.logs.get(*key) is not None:
            return False
        self._logs_to_open[key] = None
        self._open_wakeup.set()
        return True

    async def _open_new_logs(self) -> None:
        """Creates queued partition logs in a worker thread, a batch at a time, then applies each
        partition's current assignment on the loop (it may have changed, or gone, meanwhile)."""
        assert self._open_wakeup is not None
        while True:
            await self._open_wakeup.wait()
            self._open_wakeup.clear()
            while self._logs_to_open:
                batch = list(itertools.islice(self._logs_to_open, OPEN_BATCH))
                jobs = []
                for key in batch:
                    del self._logs_to_open[key]
                    self._logs_opening.add(key)
                    topic = self.metadata.get(key[0])
                    assignment = self.assignments.get(key)
                    if topic is not None and assignment is not None:
                        leading = assignment.leader_epoch if assignment.leader == self.node_id else -1
                        jobs.append((key, self.log_config_for(topic), leading))
                await asyncio.to_thread(self._create_logs, jobs)
                slice_end = time.monotonic() + APPLY_SLICE_S
                for key, _, _ in jobs:
                    assignment = self.assignments.get(key)
                    if assignment is None or not assignment.is_replica(self.node_id):
                        # Deleted or moved away while its log was being created.
                        if key not in self.partitions and self.logs.get(*key) is not None:
                            self.logs.delete_partition(*key)
                        continue
                    try:
                        self.apply(assignment)
                    except Exception:
                        log.exception("opening %s-%d failed", *key)
                    if time.monotonic() >= slice_end:
                        await asyncio.sleep(0)
                        slice_end = time.monotonic() + APPLY_SLICE_S
                self._logs_opening.clear()
                opened, self._logs_opened = self._logs_opened, asyncio.Event()
                opened.set()
                # Each batch adds thousands of long-lived objects: keep full collections off them.
                full_collections.burst()

    def _create_logs(self, jobs: list[tuple[tuple[str, int], LogConfig, int]]) -> None:
        """Worker thread: create the logs (LogManager.create registers each under its lock). Where
        this broker is to lead, the leader epoch is written here too (become_leader would write the
        same checkpoint file on the loop; it leaves an epoch already recorded alone). Nothing else
        uses these logs until the loop opens their replicas."""
        for (topic, partition), config, leader_epoch in jobs:
            if self._closing:
                return
            try:
                partition_log = self.logs.create(topic, partition, config)
                if leader_epoch >= 0:
                    partition_log.leader_epochs.assign(leader_epoch, partition_log.log_end_offset)
            except Exception:
                log.exception("creating the log of %s-%d failed", topic, partition)

    def _open_partition(self, assignment: PartitionAssignment, topic: TopicRecord) -> Partition:
        key = (assignment.topic, assignment.partition)
        partition = self.partitions.get(key)
        if partition is not None:
            return partition
        partition_log = self.logs.get(*key)
        if partition_log is None:
            partition_log = self.logs.create(*key, self.log_config_for(topic))
        # A single replica's high watermark is its log end; a replicated one is what was committed.
        partition_log.restore_high_watermark(self.logs.stored_high_watermark(*key))
        self._checkpointed[key] = partition_log.high_watermark
        partition = Partition(assignment, partition_log, self)
        self.partitions[key] = partition
        return partition

    def become_leader(self, assignment: PartitionAssignment, topic: TopicRecord) -> Partition:
        partition = self._open_partition(assignment, topic)
        if self.fetchers is not None and not partition.is_leader:
            self.fetchers.unfollow(partition)
        if not partition.make_leader(assignment, now_ms()):
            return partition  # already leading at this epoch: the assignment's replicas and ISR taken
        self._leading[partition.key] = partition
        self._to_reconcile.add(partition.key)
        log.info(
            "leading %s-%d at epoch %d (log end %d, high watermark %d, isr %s)",
            assignment.topic,
            assignment.partition,
            assignment.leader_epoch,
            partition.log.log_end_offset,
            partition.log.high_watermark,
            list(assignment.isr),
        )
        return partition

    def become_follower(self, assignment: PartitionAssignment, topic: TopicRecord) -> Partition:
        partition = self._open_partition(assignment, topic)
        if not partition.make_follower(assignment):
            if self.fetchers is not None and not self.fetchers.is_following(partition):
                self.fetchers.follow(partition)
            return partition
        self._leading.pop(partition.key, None)
        log.info(
            "following %s-%d from broker %d at epoch %d (log end %d)",
            assignment.topic,
            assignment.partition,
            assignment.leader,
            assignment.leader_epoch,
            partition.log.log_end_offset,
        )
        if self.fetchers is not None:
            self.fetchers.follow(partition)
        return partition

    def _drop_partition(self, assignment: PartitionAssignment) -> None:
        """The newest assignment does not list this broker (a reassignment moved the partition
        away, or it never lived here): stop hosting it and delete its local log, as Kafka does."""
        partition = self.partitions.pop((assignment.topic, assignment.partition), None)
        if partition is not None:
            self._stop_partition(partition)
        if self.fetchers is not None:
            self._delete_log(assignment)
        # Not started: a restarted broker is still replaying the metadata log, whose past states
        # need not list it; `start` deletes what the caught-up assignments do not list.

    def _delete_log(self, assignment: PartitionAssignment) -> None:
        key = (assignment.topic, assignment.partition)
        if self.assignments.get(key) is not assignment or assignment.is_replica(self.node_id):
            return  # never delete a log this broker is still a replica of
        if self.logs.get(*key) is not None:
            log.info("%s-%d is not assigned to this broker: deleting its log", *key)
            self.logs.delete_partition(*key)

    def _stop_partition(self, partition: Partition, *, checkpoint: bool = True) -> None:
        self._leading.pop(partition.key, None)
        if self.fetchers is not None:
            self.fetchers.unfollow(partition)
        partition.stop()
        if checkpoint:
            # Written with the next checkpoint of its log dir (its log stays until that is deleted too).
            self.logs.note_high_watermark(partition.key, partition.log.high_watermark)
        self._checkpointed.pop(partition.key, None)

    # ---- lookups for the request handlers -----------------------------------------------------

    def leader_partition(
        self, topic: str, index: int, requested_epoch: int = -1
    ) -> tuple[Partition | None, ErrorCode]:
        """The partition if this broker leads it, else the error a client gets (unknown, not leader,
        fenced or unknown leader epoch)."""
        key = (topic, index)
        assignment = self.assignments.get(key)
        if assignment is None:
            return None, ErrorCode.unknown_topic_or_partition
        error = leader_epoch_error(requested_epoch, assignment.leader_epoch)
        if error != ErrorCode.none:
            return None, error
        partition = self._leading.get(key)
        if partition is None:
            return None, ErrorCode.not_leader_or_follower
        return partition, ErrorCode.none

    def hosted(self, topic: str, index: int) -> Partition | None:
        """The partition if this broker hosts a replica of it, leader or follower."""
        return self.partitions.get((topic, index))

    def opening_logs(self) -> bool:
        """Whether any new partition log is queued or being created: a cheap first check for Fetch's hot path."""
        return bool(self._logs_to_open or self._logs_opening)

    def opening_to_lead(self, topic: str, partition: int) -> bool:
        """Whether this broker is the partition's leader in the metadata but its new log is still being
        created (Metadata already names it leader: Kafka creates the log as it applies the metadata)."""
        key = (topic, partition)
        assignment = self.assignments.get(key)
        return (
            assignment is not None
            and assignment.leader == self.node_id
            and (key in self._logs_to_open or key in self._logs_opening)
        )

    async def wait_to_lead(self, keys: Sequence[tuple[str, int]], timeout_s: float) -> None:
        """Wait, at most `timeout_s`, until none of `keys` is still `opening_to_lead`."""
        deadline = time.monotonic() + timeout_s
        while any(self.opening_to_lead(*key) for key in keys):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                await asyncio.wait_for(self._logs_opened.wait(), remaining)
            except TimeoutError:
                return

    def assignment(self, topic: str, partition: int) -> PartitionAssignment | None:
        return self.assignments.get((topic, partition))

    def isr_of(self, topic: str, index: int) -> tuple[int, ...]:
        """The ISR as this broker knows it (a leader's own view is the freshest)."""
        partition = self.partitions.get((topic, index))
        if partition is not None:
            return partition.isr
        assignment = self.assignments.get((topic, index))
        return assignment.isr if assignment is not None else ()

    def offline_replicas(self, assignment: PartitionAssignment) -> list[int]:
        return [r for r in assignment.replicas if r not in self.brokers or self.brokers[r].fenced]

    def endpoint(self, broker_id: int, listener_name: str | None = None) -> Endpoint | None:
        broker = self.brokers.get(broker_id)
        if broker is None or not broker.endpoints:
            return None
        for endpoint in broker.endpoints:
            if endpoint.name == listener_name:
                return endpoint
        return broker.endpoints[0]

    def isr_eligible(self, broker_id: int) -> bool:
        """Kafka's rule for joining the ISR: the broker is registered, unfenced and not shutting down
        (with no broker registrations at all, as in tests that feed bare assignments, every replica is)."""
        broker = self.brokers.get(broker_id)
        if broker is None:
            return not self.brokers
        return not broker.fenced and not broker.in_controlled_shutdown

    def live_brokers(self) -> Iterable[BrokerRegistration]:
        return (b for _, b in sorted(self.brokers.items()) if not b.fenced)

    # ---- leaders: follower fetches, ISR sweeps, AlterPartition ---------------------------------

    def note_follower_fetch(self, follower: int) -> None:
        """A Fetch from follower broker `follower` arrived (whichever partitions it names)."""
        self.last_follower_fetch_ms[follower] = now_ms()

    def shrink_lagging_isrs(self) -> None:
        now = now_ms()
        lag_max_ms = self.config.replica_lag_time_max_ms
        for partition in list(self._leading.values()):
            partition.maybe_shrink_isr(now, lag_max_ms, self.last_follower_fetch_ms)

    def expand_isrs(self) -> None:
        """Proposes caught-up followers for the ISR where a follower's fetch did not.

        A follower's fetch proposes it as it catches up (`Partition.record_follower_fetch`), but with
        fetch sessions a caught-up follower stops naming an idle partition, and the leader stops reading
        it for that follower: a proposal the controller refused, or one held back because the
        follower's broker was still fenced (a restarted broker fetches before it is unfenced), would
        never be made again. Only partitions with a follower outside the ISR cost anything here."""
        fetching_since_ms = now_ms() - FOLLOWER_ACTIVE_MS
        for partition in list(self._leading.values()):
            partition.maybe_expand_isr(fetching_since_ms, self.last_follower_fetch_ms)

    def reconcile_with_committed(self) -> None:
        """A leader's ISR must not disagree with the committed metadata for long: where no
        AlterPartition is in flight and the log holds a state at least as new as the leader's
        (same leader epoch), the leader takes it. A lost or late answer, or a missed update, heals
        within a second instead of leaving Metadata and the leader's view apart.

        Only leaders where something may have set the two apart (`_to_reconcile`) are looked at each
        interval, every leader only every ISR_RECONCILE_SWEEP_S (10,000 partitions must not cost 10,000
        comparisons a second when nothing happens)."""
        assert self.committed_assignment is not None
        now = time.monotonic()
        if now - self._reconcile_swept >= ISR_RECONCILE_SWEEP_S:
            self._reconcile_swept = now
            self._to_reconcile.update(self._leading)
        pending, self._to_reconcile = self._to_reconcile, set()
        for key in pending:
            partition = self._leading.get(key)
            if partition is None or not partition.is_leader:
                continue
            if partition.alter_in_flight:
                continue  # its answer puts it back (see _alter_partition)
            committed = self.committed_assignment(*key)
            held = partition.assignment
            if committed is None or _older(committed, held):
                self._to_reconcile.add(key)  # the image has yet to catch up: look again
                continue
            if committed.leader_epoch != held.leader_epoch or (
                committed == held and partition.in_sync == frozenset(committed.isr)
            ):
                continue
            if partition.in_sync != frozenset(committed.isr):
                log.warning(
                    "ISR of %s-%d was %s here but %s in the metadata log (partition epoch %d): taking it",
                    *partition.key,
                    sorted(partition.in_sync),
                    list(committed.isr),
                    committed.partition_epoch,
                )
            self.apply(committed)

    def send_alter_partition(self, partition: Partition, new_isr: tuple[int, ...]) -> None:
        """A leader proposes `new_isr` (Partition.propose_isr): ask the controller, off the caller's path."""
        task = asyncio.ensure_future(self._alter_partition(partition, new_isr))
        self._alter_tasks.add(task)
        task.add_done_callback(self._alter_tasks.discard)

    async def _alter_partition(self, partition: Partition, new_isr: tuple[int, ...]) -> None:
        try:
            result = await self.alter_partitions.submit(partition.assignment, new_isr)
        except Exception:
            log.exception("AlterPartition for %s-%d failed", *partition.key)
            result = None
        self._to_reconcile.add(partition.key)
        if result is not None and (result.error_code != 0 or result.assignment is None):
            log.info("AlterPartition for %s-%d refused with error %d", *partition.key, result.error_code)
        accepted = result.assignment if result is not None and result.error_code == 0 else None
        # A partition no longer led here (stopped, or following) takes no answer.
        if partition.alter_partition_answered(accepted):
            assert accepted is not None
            self.assignments[partition.key] = accepted
            self._partition_changed(partition.key)
            self._bump_version(partition.key[0])


def _older(candidate: PartitionAssignment, current: PartitionAssignment) -> bool:
    if candidate.leader_epoch != current.leader_epoch:
        return candidate.leader_epoch < current.leader_epoch
    return candidate.partition_epoch < current.partition_epoch


__all__ = ["NO_LEADER", "ReplicaManager"]
