"""A Kafka Streams member without the JVM: StreamsGroupHeartbeat (KIP-1071) sent as a Kafka Streams 4.2 client
would, for tests that need a Streams group with a member and its tasks."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from kio.schema.streams_group_heartbeat.v0 import request as heartbeat
from kio.static.primitive import i32, i32Timedelta

from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.kafka.connection import protocol_connection
from controlplane.kafka.share_groups import coordinator_address

LOADING = (14, 15, 16)  # COORDINATOR_LOAD_IN_PROGRESS, _NOT_AVAILABLE, NOT_COORDINATOR: clients ask again


@dataclass
class StreamsMember:
    member_id: str
    epoch: int
    active_partitions: list[int]  # of subtopology "0", sorted


def send_heartbeat(cluster: Cluster, group: str, member: str, epoch: int, topic: str) -> Any:
    """One StreamsGroupHeartbeat: the first (epoch 0) declares a one-subtopology topology on `topic`."""
    request = heartbeat.StreamsGroupHeartbeatRequest(
        group_id=group,
        member_id=member,
        member_epoch=i32(epoch),
        endpoint_information_epoch=i32(0),
        rebalance_timeout=i32Timedelta.parse(timedelta(seconds=30)),
        topology=heartbeat.Topology(
            epoch=i32(0),
            subtopologies=(
                heartbeat.Subtopology(
                    subtopology_id="0",
                    source_topics=(topic,),
                    state_changelog_topics=(),
                    repartition_source_topics=(),
                    copartition_groups=(),
                ),
            ),
        )
        if epoch == 0
        else None,
        active_tasks=() if epoch == 0 else None,
        standby_tasks=() if epoch == 0 else None,
        warmup_tasks=() if epoch == 0 else None,
        process_id=member if epoch == 0 else None,
        client_tags=() if epoch == 0 else None,
        task_offsets=None,
        task_end_offsets=None,
    )
    connection = connection_for(cluster)
    with protocol_connection(connection, 10, coordinator_address(connection, group)) as wire:
        return wire.request(request)


def join_streams_group(cluster: Cluster, group: str, topic: str, timeout: float = 30.0) -> StreamsMember:
    """A new member joins, heartbeats until it is given tasks and acknowledges them (it is then reconciled);
    its process id is its member id."""
    member = str(uuid.uuid4())
    deadline = time.monotonic() + timeout
    answer = send_heartbeat(cluster, group, member, 0, topic)
    while answer.error_code in LOADING and time.monotonic() < deadline:  # a new cluster's coordinator
        time.sleep(0.5)
        answer = send_heartbeat(cluster, group, member, 0, topic)
    assert answer.error_code == 0, answer
    epoch = int(answer.member_epoch)
    tasks: list[int] = []
    while not tasks and time.monotonic() < deadline:  # the first assignment may be delayed a few seconds
        time.sleep(0.5)
        answer = send_heartbeat(cluster, group, member, epoch, topic)
        assert answer.error_code == 0, answer
        epoch = int(answer.member_epoch)
        tasks = sorted(int(p) for t in answer.active_tasks or () for p in t.partitions)
    acknowledged = send_heartbeat(cluster, group, member, epoch, topic)
    assert acknowledged.error_code == 0, acknowledged
    return StreamsMember(member, int(acknowledged.member_epoch), tasks)
