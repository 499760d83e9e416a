"""One broker as an operator looks at it: the replicas it hosts and leads, those out of sync, its disks
(DescribeLogDirs), its role in the controller quorum, and the messages per second it takes in as leader.

Messages per second come from the lag sampler's log-end history (no extra request): the log-end offsets
of the partitions the broker leads, moved over the window. Kafka does not report bytes in/out over the
protocol (only JMX does): a local node's own Prometheus endpoint gives them (node_metrics.py, both engines).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis

from controlplane.clusters import log_ends, node_metrics
from controlplane.clusters.choices import BrokerStatus
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Broker, Cluster
from controlplane.core.changes import Change, audited_change
from controlplane.core.errors import ServiceError
from controlplane.kafka.cluster import BrokerNode, describe_cluster
from controlplane.kafka.config_entries import config_entries
from controlplane.kafka.configs import DocumentedConfig, alter_broker_configs, describe_documented_configs
from controlplane.kafka.connection import Connection
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.log_dirs import LogDir, describe_log_dirs
from controlplane.kafka.refusals import kafka_refusals
from controlplane.kafka.topics import list_topics
from controlplane.tenancy.access import Actor, require_org_admin

logger = logging.getLogger(__name__)

THROUGHPUT_WINDOW_SECONDS = 300
READ_BACK_SECONDS = 5.0


# Per-broker health: listed in Metadata (registered, unfenced); its process runs but the cluster does not
# list it (starting, or fenced); its process is not running.
BROKER_UP, BROKER_NOT_LISTED, BROKER_DOWN = "up", "not_listed", "down"


def broker_health(cluster: Cluster, broker: Broker) -> str:
    """A broker's status from the cluster's last health check (up, not_listed or down)."""
    health = cluster.health or {}
    if broker.node_id in health.get("dead_broker_ids", []) or broker.status == BrokerStatus.DEAD:
        return BROKER_DOWN
    if broker.node_id in health.get("broker_ids", []):
        return BROKER_UP
    return BROKER_NOT_LISTED


@dataclass(frozen=True)
class HostedReplica:
    topic: str
    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]
    size_bytes: int | None

    def as_dict(self, node_id: int) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "leader": self.leader,
            "is_leader": self.leader == node_id,
            "replicas": self.replicas,
            "isr": self.isr,
            "in_sync": node_id in self.isr,
            "under_replicated": len(self.isr) < len(self.replicas),
            "size_bytes": self.size_bytes,
        }


def _messages_per_second(cluster: Cluster, led: list[tuple[str, int]]) -> float | None:
    """Messages appended per second to the partitions the broker leads, over the sampler's last window;
    None when the sampler has too little history (or Redis cannot be read)."""
    try:
        ends = log_ends.log_end_history(
            log_ends.history_redis(), cluster.id, since=time.time() - THROUGHPUT_WINDOW_SECONDS
        )
    except redis.RedisError as error:
        logger.warning("log-end history of cluster %s unreadable: %s", cluster.id, error)
        return None
    moved, span = 0, 0.0
    for topic, partition in led:
        points = ends.get(log_ends.partition_key(topic, partition), [])
        if len(points) < 2:
            continue
        (first_time, first_end), (last_time, last_end) = points[0], points[-1]
        moved += max(0, last_end - first_end)
        span = max(span, last_time - first_time)
    return moved / span if span > 0 else None


def describe_broker(*, cluster: Cluster, node_id: int) -> dict[str, Any]:
    """The broker's page: hosted replicas, leaders, under-replicated replicas, log dirs, controller role."""
    stored = Broker.objects.filter(cluster=cluster, node_id=node_id).first()
    connection = connection_for(cluster)
    with kafka_refusals():
        description = describe_cluster(connection)
        node = next((each for each in description.brokers if each.node_id == node_id), None)
        if node is None and stored is None:
            raise ServiceError(f"The cluster has no broker {node_id}.", code="unknown_broker")
        topics = list_topics(connection)
        log_dirs: list[LogDir] = []
        log_dirs_error = ""
        if node is not None:
            try:
                log_dirs = describe_log_dirs(connection, node)
            except KafkaGatewayError as error:
                log_dirs_error = str(error)
    sizes = {key: size for directory in log_dirs for key, size in directory.replica_bytes.items()}
    hosted = [
        HostedReplica(
            topic=topic.name,
            partition=p.partition,
            leader=p.leader,
            replicas=p.replicas,
            isr=p.isr,
            size_bytes=sizes.get((topic.name, p.partition)) if log_dirs else None,
        )
        for topic in sorted(topics.values(), key=lambda each: each.name)
        for p in topic.partitions
        if node_id in p.replicas
    ]
    led = [(each.topic, each.partition) for each in hosted if each.leader == node_id]
    metrics, metrics_error = None, ""
    try:
        metrics = node_metrics.read_node_metrics(
            cluster_id=cluster.id, node_id=node_id, port=stored.metrics_port if stored is not None else 0
        ).as_dict()
    except node_metrics.MetricsUnavailable as error:
        metrics_error = str(error)
    return {
        "node_id": node_id,
        "host": node.host if node is not None else stored.host,
        "port": node.port if node is not None else stored.port,
        "rack": stored.rack if stored is not None else "",
        "listed": node is not None,
        "health": broker_health(cluster, stored) if stored is not None else "up",
        "is_active_controller": description.controller_id == node_id,
        "is_controller_voter": stored.is_controller if stored is not None else False,
        "replica_count": len(hosted),
        "leader_count": len(led),
        "out_of_sync_count": sum(1 for each in hosted if node_id not in each.isr),
        "under_replicated_count": sum(1 for each in hosted if len(each.isr) < len(each.replicas)),
        "messages_in_per_second": _messages_per_second(cluster, led),
        "log_dirs": [
            {
                "path": directory.path,
                "error": directory.error,
                "total_bytes": directory.total_bytes if directory.total_bytes >= 0 else None,
                "usable_bytes": directory.usable_bytes if directory.usable_bytes >= 0 else None,
                "size_bytes": directory.size_bytes,
                "replica_count": len(directory.replica_bytes),
            }
            for directory in log_dirs
        ],
        "log_dirs_error": log_dirs_error,
        "replicas": [each.as_dict(node_id) for each in hosted],
        "metrics": metrics,
        "metrics_error": metrics_error,
    }


def _read_back(
    connection: Connection, node: BrokerNode, expected: Mapping[str, str]
) -> dict[str, DocumentedConfig]:
    """The broker's configs once they show the values just set. Apache Kafka applies a dynamic config when
    the broker replays the controller's ConfigRecord, a moment after IncrementalAlterConfigs answers, so
    a DescribeConfigs right away can still show the old value; after READ_BACK_SECONDS the last answer is
    taken as it is."""
    deadline = time.monotonic() + READ_BACK_SECONDS
    while True:
        current = describe_documented_configs(connection, broker=node)
        applied = all(
            name in current and current[name].value == str(value) for name, value in expected.items()
        )
        if applied or time.monotonic() > deadline:
            return current
        time.sleep(0.1)


def update_broker_configs(
    *, actor: Actor, cluster: Cluster, node_id: int, configs: Mapping[str, str | None]
) -> dict[str, dict[str, Any]]:
    """Org admins set a broker's dynamic configs (None returns one to its static or default value) through
    IncrementalAlterConfigs; the names must be ones the broker reports as changeable at runtime. Returns the
    broker's configs as read back from it."""
    change = Change(
        action="cluster.update_broker_configs",
        resource_type="cluster",
        organization_id=cluster.organization_id,
        extra={"node_id": node_id, "configs": dict(configs)},
    )
    change.on(cluster)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, cluster.organization)
        connection = connection_for(cluster)
        with kafka_refusals():
            node = next((n for n in describe_cluster(connection).brokers if n.node_id == node_id), None)
            if node is None:
                raise ServiceError(f"The cluster has no broker {node_id} up.", code="unknown_broker")
            current = describe_documented_configs(connection, broker=node)
            unknown = sorted(name for name in configs if name not in current)
            fixed = sorted(name for name in configs if name in current and current[name].read_only)
            if unknown or fixed:
                problems = [f"{name} is not a config of this broker." for name in unknown] + [
                    f"{name} can only be changed in the broker's config file and a restart." for name in fixed
                ]
                raise ServiceError(
                    " ".join(problems),
                    code="invalid_config",
                    details={"unknown": unknown, "read_only": fixed},
                )
            change.before = {name: current[name].value for name in configs}
            alter_broker_configs(
                connection,
                node_id=node_id,
                set_configs={k: v for k, v in configs.items() if v is not None},
                delete_configs=[k for k, v in configs.items() if v is None],
            )
            after = _read_back(connection, node, {k: v for k, v in configs.items() if v is not None})
        change.after = {name: after[name].value if name in after else None for name in configs}
    return config_entries(after)
