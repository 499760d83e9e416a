"""What a lag sampling run reads from a cluster, over the Kafka protocol only, in few round trips.

AdminClient asks one group per OffsetFetch and one ListOffsets spec per call; with thousands of groups
that is thousands of requests. Here one connection per broker sends batched requests (ListOffsets per
leader, FindCoordinator v4 and OffsetFetch v8 for many groups at once, DescribeGroups in chunks), and
the brokers are asked in parallel. Requires Kafka 3.0+ protocol versions (our broker serves them).
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.describe_groups.v5.request import DescribeGroupsRequest
from kio.schema.describe_share_group_offsets.v1 import request as share_offsets
from kio.schema.fetch.v11.request import FetchPartition, FetchRequest, FetchTopic
from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest
from kio.schema.list_groups.v4.request import ListGroupsRequest as ListGroupsRequestV4
from kio.schema.list_groups.v5.request import ListGroupsRequest
from kio.schema.list_offsets.v4.request import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from kio.schema.metadata.v9.request import MetadataRequest
from kio.schema.offset_fetch.v8.request import OffsetFetchRequest, OffsetFetchRequestGroup
from kio.schema.share_group_describe.v1.request import ShareGroupDescribeRequest
from kio.schema.streams_group_describe.v0.request import StreamsGroupDescribeRequest
from kio.static.primitive import i8, i32, i32Timedelta, i64

from broker.wire.records.batch import HEADER, HEADER_SIZE, LOG_OVERHEAD, BatchView
from broker.wire.records.errors import StorageError
from broker.wire.records.records import decode_records
from controlplane.kafka.connection import Connection
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.wire import WireConnection

EARLIEST, LATEST = -2, -1
READ_UNCOMMITTED, READ_COMMITTED = 0, 1
LIST_GROUPS_KEY = 16
GROUPS_PER_REQUEST = 1000
DESCRIBES_PER_REQUEST = 250
# Enough for the batch holding one record in most topics; a larger batch comes back cut, and then its
# header still bounds the record's timestamp.
FETCH_PARTITION_BYTES = 64 * 1024
FETCH_TOTAL_BYTES = 16 * 1024 * 1024

Result = TypeVar("Result")
TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class PartitionOffsets:
    log_start: int
    log_end: int  # high watermark
    last_stable: int  # equals log_end without open transactions


@dataclass(frozen=True)
class ListedGroup:
    name: str
    state: str  # Kafka's spelling: Stable, Empty, PreparingRebalance, CompletingRebalance, Dead
    protocol_type: str
    group_type: str = "classic"  # ListGroups v5: classic, consumer, share, streams


@dataclass(frozen=True)
class ShareOffset:
    start_offset: int  # the share-partition start offset
    lag: int  # records from it to the end not yet acknowledged, as the broker counts them (-1: unknown)


@dataclass(frozen=True)
class Member:
    member_id: str
    client_id: str
    host: str
    assignments: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class DescribedGroup:
    state: str
    members: tuple[Member, ...]


def _check(error_code: int, what: str) -> None:
    if error_code != 0:
        raise KafkaGatewayError(f"ERROR_{error_code}", f"{what} failed with error code {error_code}")


def _chunks(items: list[Any], size: int) -> Iterable[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class ClusterReader:
    """One sampling run's connections: one per broker, opened when first needed, closed by `close`."""

    def __init__(self, connection: Connection, *, timeout_seconds: float = 10.0) -> None:
        self._connection = connection
        self._timeout = timeout_seconds
        self._wires: dict[str, WireConnection] = {}
        self.brokers: dict[int, str] = {}
        self.leaders: dict[TopicPartition, int] = {}

    def __enter__(self) -> ClusterReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for wire in self._wires.values():
            wire.close()
        self._wires.clear()

    def _wire(self, address: str | None = None) -> WireConnection:
        if address is None:
            address = (
                next(iter(self.brokers.values()), None) or self._connection.bootstrap_servers.split(",")[0]
            )
        if address not in self._wires:
            self._wires[address] = WireConnection(
                address.strip(),
                security_protocol=self._connection.security_protocol,
                sasl_mechanism=self._connection.sasl_mechanism,
                username=self._connection.username,
                password=self._connection.password,
                timeout_seconds=self._timeout,
            )
        return self._wires[address]

    def _per_broker(self, work: dict[int, Any], ask: Callable[[WireConnection, Any], Result]) -> list[Result]:
        """Runs `ask(connection, items)` for every broker's items, the brokers in parallel."""
        if not work:
            return []
        for node in work:  # open connections here: _wire is not thread safe
            self._wire(self.brokers[node])
        if len(work) == 1:
            ((node, items),) = work.items()
            return [ask(self._wires[self.brokers[node]], items)]
        with ThreadPoolExecutor(max_workers=min(8, len(work))) as pool:
            futures = [
                pool.submit(ask, self._wires[self.brokers[node]], items) for node, items in work.items()
            ]
            return [future.result() for future in futures]

    def _per_coordinator(
        self, coordinators: dict[str, int], ask: Callable[[WireConnection, list[str]], dict[str, Any]]
    ) -> dict[str, Any]:
        """Runs `ask(connection, group names)` on each group's coordinator (brokers in parallel), merged."""
        by_node: dict[int, list[str]] = defaultdict(list)
        for name, node in coordinators.items():
            by_node[node].append(name)
        merged: dict[str, Any] = {}
        for part in self._per_broker(by_node, ask):
            merged.update(part)
        return merged

    # --- topics and offsets -----------------------------------------------------------------------

    def load_metadata(self) -> None:
        response = self._wire().request(
            MetadataRequest(
                topics=None,
                allow_auto_topic_creation=False,
                include_cluster_authorized_operations=False,
                include_topic_authorized_operations=False,
            )
        )
        self.brokers = {int(b.node_id): f"{b.host}:{int(b.port)}" for b in response.brokers}
        self.leaders = {
            (topic.name, int(p.partition_index)): int(p.leader_id)
            for topic in response.topics
            if topic.error_code == 0 and not topic.is_internal
            for p in topic.partitions
            if int(p.leader_id) in self.brokers
        }

    def partition_offsets(self) -> dict[TopicPartition, PartitionOffsets]:
        """Log-start, log-end and last-stable offsets of every partition (three requests per leader)."""
        by_leader: dict[int, list[TopicPartition]] = defaultdict(list)
        for tp, leader in self.leaders.items():
            by_leader[leader].append(tp)

        def ask(
            wire: WireConnection, partitions: list[TopicPartition]
        ) -> dict[TopicPartition, PartitionOffsets]:
            start = _list_offsets(wire, partitions, EARLIEST, READ_UNCOMMITTED)
            end = _list_offsets(wire, partitions, LATEST, READ_UNCOMMITTED)
            stable = _list_offsets(wire, partitions, LATEST, READ_COMMITTED)
            return {
                tp: PartitionOffsets(
                    log_start=start[tp], log_end=end[tp], last_stable=stable.get(tp, end[tp])
                )
                for tp in partitions
                if tp in start and tp in end
            }

        offsets: dict[TopicPartition, PartitionOffsets] = {}
        for part in self._per_broker(by_leader, ask):
            offsets.update(part)
        return offsets

    # --- groups -----------------------------------------------------------------------------------

    def list_groups(self) -> dict[str, ListedGroup]:
        """Every consumer, share and Streams group (and every group that only commits offsets) on every
        broker."""

        def ask(wire: WireConnection, _items: None) -> list[ListedGroup]:
            # v5 (Kafka 3.8+) tells each group's type; an older broker gets v4 and has classic groups only.
            modern = _max_version(wire, LIST_GROUPS_KEY) >= 5
            response = wire.request(ListGroupsRequest() if modern else ListGroupsRequestV4())
            _check(int(response.error_code), "ListGroups")
            return [
                ListedGroup(
                    g.group_id, g.group_state, g.protocol_type, _group_type(g.group_type, g.protocol_type)
                )
                for g in response.groups
            ]

        groups: dict[str, ListedGroup] = {}
        for listed in self._per_broker(dict.fromkeys(self.brokers), ask):
            groups.update(
                {g.name: g for g in listed if g.protocol_type in ("consumer", "share", "streams", "")}
            )
        return groups

    def coordinators(self, names: list[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for chunk in _chunks(names, GROUPS_PER_REQUEST):
            response = self._wire().request(
                FindCoordinatorRequest(key_type=i8(0), coordinator_keys=tuple(chunk))
            )
            for coordinator in response.coordinators:
                if coordinator.error_code == 0:
                    node = int(coordinator.node_id)
                    self.brokers.setdefault(node, f"{coordinator.host}:{int(coordinator.port)}")
                    found[coordinator.key] = node
        return found

    def committed_offsets(self, coordinators: dict[str, int]) -> dict[str, dict[TopicPartition, int]]:
        """Every committed offset of the given groups (OffsetFetch v8: many groups per request)."""

        def ask(wire: WireConnection, names: list[str]) -> dict[str, dict[TopicPartition, int]]:
            committed: dict[str, dict[TopicPartition, int]] = {}
            for chunk in _chunks(names, GROUPS_PER_REQUEST):
                request = OffsetFetchRequest(
                    groups=tuple(OffsetFetchRequestGroup(group_id=name, topics=None) for name in chunk)
                )
                for group in wire.request(request).groups:
                    if group.error_code != 0:
                        continue
                    committed[group.group_id] = {
                        (topic.name, int(p.partition_index)): int(p.committed_offset)
                        for topic in group.topics
                        for p in topic.partitions
                        if p.error_code == 0 and p.committed_offset >= 0
                    }
            return committed

        return self._per_coordinator(coordinators, ask)

    def describe_groups(self, coordinators: dict[str, int]) -> dict[str, DescribedGroup]:

        def ask(wire: WireConnection, names: list[str]) -> dict[str, DescribedGroup]:
            described = {}
            for chunk in _chunks(names, DESCRIBES_PER_REQUEST):
                request = DescribeGroupsRequest(groups=tuple(chunk), include_authorized_operations=False)
                for group in wire.request(request).groups:
                    if group.error_code != 0:
                        continue
                    members = tuple(
                        Member(
                            member_id=m.member_id,
                            client_id=m.client_id,
                            host=m.client_host,
                            assignments=parse_assignment(bytes(m.member_assignment))
                            if group.protocol_type == "consumer"
                            else (),
                        )
                        for m in group.members
                    )
                    described[group.group_id] = DescribedGroup(state=group.group_state, members=members)
            return described

        return self._per_coordinator(coordinators, ask)

    def share_offsets(self, coordinators: dict[str, int]) -> dict[str, dict[TopicPartition, ShareOffset]]:
        """Share-partition start offsets and lags of the given share groups (DescribeShareGroupOffsets v1,
        many groups per request)."""

        def ask(wire: WireConnection, names: list[str]) -> dict[str, dict[TopicPartition, ShareOffset]]:
            found: dict[str, dict[TopicPartition, ShareOffset]] = {}
            for chunk in _chunks(names, GROUPS_PER_REQUEST):
                request = share_offsets.DescribeShareGroupOffsetsRequest(
                    groups=tuple(
                        share_offsets.DescribeShareGroupOffsetsRequestGroup(group_id=name, topics=None)
                        for name in chunk
                    )
                )
                for group in wire.request(request).groups:
                    if group.error_code != 0:
                        continue
                    found[group.group_id] = {
                        (topic.topic_name, int(p.partition_index)): ShareOffset(
                            int(p.start_offset), int(p.lag)
                        )
                        for topic in group.topics
                        for p in topic.partitions
                        if p.error_code == 0 and p.start_offset >= 0
                    }
            return found

        return self._per_coordinator(coordinators, ask)

    def describe_new_groups(self, coordinators: dict[str, int], group_type: str) -> dict[str, DescribedGroup]:
        """Members of share groups (ShareGroupDescribe, with their partitions) or Streams groups
        (StreamsGroupDescribe; their tasks are on the group's page, not here)."""
        describe = ShareGroupDescribeRequest if group_type == "share" else StreamsGroupDescribeRequest

        def ask(wire: WireConnection, names: list[str]) -> dict[str, DescribedGroup]:
            described = {}
            for chunk in _chunks(names, DESCRIBES_PER_REQUEST):
                request = describe(group_ids=tuple(chunk), include_authorized_operations=False)
                for group in wire.request(request).groups:
                    if group.error_code != 0:
                        continue
                    members = tuple(
                        Member(
                            member_id=m.member_id,
                            client_id=m.client_id,
                            host=m.client_host,
                            assignments=tuple(
                                sorted(
                                    (tp.topic_name, int(p))
                                    for tp in m.assignment.topic_partitions
                                    for p in tp.partitions
                                )
                            )
                            if group_type == "share"
                            else (),
                        )
                        for m in group.members
                    )
                    described[group.group_id] = DescribedGroup(state=group.group_state, members=members)
            return described

        return self._per_coordinator(coordinators, ask)

    # --- record timestamps ------------------------------------------------------------------------

    def record_timestamps(self, wanted: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The timestamp (ms) of the record at (or first after) each partition's given offset, one Fetch
        per leader; partitions whose offset is out of range or empty are left out."""
        by_leader: dict[int, dict[TopicPartition, int]] = defaultdict(dict)
        for tp, offset in wanted.items():
            leader = self.leaders.get(tp)
            if leader is not None:
                by_leader[leader][tp] = offset

        def ask(wire: WireConnection, offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
            topics: dict[str, list[FetchPartition]] = defaultdict(list)
            for (topic, partition), offset in offsets.items():
                topics[topic].append(
                    FetchPartition(
                        partition=i32(partition),
                        fetch_offset=i64(offset),
                        partition_max_bytes=i32(FETCH_PARTITION_BYTES),
                    )
                )
            request = FetchRequest(
                max_wait=i32Timedelta.parse(timedelta(0)),
                min_bytes=i32(0),
                max_bytes=i32(FETCH_TOTAL_BYTES),
                isolation_level=i8(READ_UNCOMMITTED),
                topics=tuple(FetchTopic(topic=t, partitions=tuple(ps)) for t, ps in topics.items()),
                forgotten_topics_data=(),
            )
            found = {}
            for topic in wire.request(request).responses:
                for p in topic.partitions:
                    tp = (topic.topic, int(p.partition_index))
                    if p.error_code != 0 or not p.records or tp not in offsets:
                        continue
                    timestamp = timestamp_at(bytes(p.records), offsets[tp])
                    if timestamp is not None:
                        found[tp] = timestamp
            return found

        timestamps: dict[TopicPartition, int] = {}
        for part in self._per_broker(by_leader, ask):
            timestamps.update(part)
        return timestamps


def _max_version(wire: WireConnection, api_key: int) -> int:
    """The highest version of `api_key` the broker behind `wire` serves (ApiVersions v3), -1 if none."""
    response = wire.request(
        ApiVersionsRequest(client_software_name="streamhub-controlplane", client_software_version="1")
    )
    return max((int(k.max_version) for k in response.api_keys if int(k.api_key) == api_key), default=-1)


def _group_type(group_type: str, protocol_type: str) -> str:
    """ListGroups v5's type; an older broker's answer has none: its consumer groups are classic."""
    if group_type:
        return group_type.lower()
    return protocol_type if protocol_type in ("share", "streams") else "classic"


def _list_offsets(
    wire: WireConnection, partitions: list[TopicPartition], spec: int, isolation: int
) -> dict[TopicPartition, int]:
    topics: dict[str, list[int]] = defaultdict(list)
    for topic, partition in partitions:
        topics[topic].append(partition)
    request = ListOffsetsRequest(
        replica_id=i32(-1),
        isolation_level=i8(isolation),
        topics=tuple(
            ListOffsetsTopic(
                name=topic,
                partitions=tuple(
                    ListOffsetsPartition(partition_index=i32(p), timestamp=i64(spec)) for p in ps
                ),
            )
            for topic, ps in topics.items()
        ),
    )
    return {
        (topic.name, int(p.partition_index)): int(p.offset)
        for topic in wire.request(request).topics
        for p in topic.partitions
        if p.error_code == 0
    }


# --- consumer protocol and record batch parsing ----------------------------------------------------


def parse_assignment(data: bytes) -> tuple[TopicPartition, ...]:
    """The partitions in a consumer-protocol assignment (version, [topic, [partition]], user data)."""
    if len(data) < 6:
        return ()
    position = 2  # version
    (topic_count,) = struct.unpack_from(">i", data, position)
    position += 4
    assigned = []
    for _ in range(max(topic_count, 0)):
        (name_length,) = struct.unpack_from(">h", data, position)
        position += 2
        topic = data[position : position + name_length].decode()
        position += name_length
        (partition_count,) = struct.unpack_from(">i", data, position)
        position += 4
        partitions = struct.unpack_from(f">{max(partition_count, 0)}i", data, position)
        position += 4 * max(partition_count, 0)
        assigned += [(topic, int(p)) for p in partitions]
    return tuple(sorted(assigned))


def timestamp_at(records: bytes, offset: int) -> int | None:
    """The timestamp (ms) of the first record at or after `offset` in v2 record batches; a batch cut
    short by the fetch size, or one that does not decode, gives its base timestamp (a lower bound of its
    records' times)."""
    view = memoryview(records)
    position = 0
    while len(view) - position >= HEADER_SIZE:
        # The header read as is: a fetch ends with a batch cut short, which read_batch_header refuses.
        batch = BatchView(view, position, *HEADER.unpack_from(view, position))
        if batch.batch_length < HEADER_SIZE - LOG_OVERHEAD:
            return None  # not a batch: nothing further can be framed
        if batch.last_offset < offset or batch.is_control:
            position = batch.end
            continue
        if batch.is_log_append_time:  # every record carries the batch's time
            return batch.max_timestamp
        if batch.end > len(view):
            return batch.base_timestamp
        try:
            decoded = decode_records(batch)
        except StorageError:
            return batch.base_timestamp
        found = next(
            (record.timestamp for record in decoded if batch.base_offset + record.offset_delta >= offset),
            None,
        )
        if found is not None:
            return found
        position = batch.end
    return None
