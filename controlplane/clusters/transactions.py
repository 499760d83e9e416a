"""A cluster's transactions as its users look at them: the open ones (teams see those under their
transactional-id prefixes, org admins all), the hanging ones (a partition holds an open transaction that no
coordinator will finish, so read_committed consumers are stuck behind it), and the org admin's abort of a
hanging one, like `kafka-transactions.sh find-hanging` and `abort`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.core.changes import Change, audited_change
from controlplane.core.errors import ServiceError
from controlplane.kafka.cluster import describe_cluster
from controlplane.kafka.configs import describe_documented_configs
from controlplane.kafka.refusals import kafka_refusals
from controlplane.kafka.transactions import (
    ProducerOnPartition,
    abort_transaction,
    describe_producers,
    describe_transactions,
    find_hanging_transactions,
    list_transactions,
)
from controlplane.tenancy.access import Actor, org_roles, require_org_admin, team_roles
from controlplane.tenancy.choices import PrefixResourceType
from controlplane.tenancy.models import TeamPrefix

# Kafka's default `transaction.max.timeout.ms`, for a cluster that does not report its own.
DEFAULT_MAX_TRANSACTION_TIMEOUT_MS = 900_000


@dataclass(frozen=True)
class OpenTransaction:
    transactional_id: str
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    started_at: datetime | None
    partitions: list[tuple[str, int]]
    coordinator_id: int
    team: str | None


def _owners(cluster: Cluster) -> list[tuple[str, int, str]]:
    """(prefix, team id, team name) of the organization's transactional-id prefixes, longest first."""
    rows = TeamPrefix.objects.filter(
        organization_id=cluster.organization_id, resource_type=PrefixResourceType.TRANSACTIONAL_ID
    ).select_related("team")
    return sorted(((row.prefix, row.team_id, row.team.name) for row in rows), key=lambda row: -len(row[0]))


def list_open_transactions(
    *, actor: Actor, cluster: Cluster, state: str | None = None
) -> list[OpenTransaction]:
    """The transactions the cluster's coordinators know, described, that the actor may see."""
    is_admin = cluster.organization_id in org_roles(actor)
    visible_teams = set(team_roles(actor))
    owners = _owners(cluster)
    connection = connection_for(cluster)
    with kafka_refusals():
        listed = list_transactions(connection, states=[state] if state else ())
        ids = []
        for listing in listed:
            owner = next(
                (
                    (team_id, name)
                    for prefix, team_id, name in owners
                    if listing.transactional_id.startswith(prefix)
                ),
                None,
            )
            if is_admin or (owner is not None and owner[0] in visible_teams):
                ids.append(listing.transactional_id)
        described = describe_transactions(connection, ids)
    return [
        OpenTransaction(
            transactional_id=each.transactional_id,
            state=each.state,
            producer_id=each.producer_id,
            producer_epoch=each.producer_epoch,
            timeout_ms=each.timeout_ms,
            started_at=each.started_at,
            partitions=each.partitions,
            coordinator_id=each.coordinator_id,
            team=next(
                (name for prefix, _id, name in owners if each.transactional_id.startswith(prefix)), None
            ),
        )
        for each in described
    ]


def _max_transaction_timeout_ms(cluster: Cluster) -> int:
    connection = connection_for(cluster)
    brokers = describe_cluster(connection).brokers
    if not brokers:
        return DEFAULT_MAX_TRANSACTION_TIMEOUT_MS
    configs = describe_documented_configs(connection, broker=brokers[0])
    entry = configs.get("transaction.max.timeout.ms")
    return int(entry.value) if entry is not None and entry.value else DEFAULT_MAX_TRANSACTION_TIMEOUT_MS


def list_hanging_transactions(
    *, actor: Actor, cluster: Cluster, topic: str | None = None
) -> list[ProducerOnPartition]:
    """Org admins: open transactions on partitions that no coordinator will finish — older than the
    longest timeout a transaction may have (`transaction.max.timeout.ms`) and unknown to, or finished by,
    every coordinator. They hold back the last stable offset, so read_committed consumers stop there."""
    require_org_admin(actor, cluster.organization)
    with kafka_refusals():
        return find_hanging_transactions(
            connection_for(cluster),
            now_ms=int(time.time() * 1000),
            max_transaction_timeout_ms=_max_transaction_timeout_ms(cluster),
            topics=[topic] if topic else None,
        )


def abort_hanging_transaction(
    *, actor: Actor, cluster: Cluster, topic: str, partition: int, producer_id: int
) -> None:
    """Org admins: writes an abort marker for the producer's open transaction on one partition, with the
    producer's epoch and coordinator epoch as the partition's leader reports them. Refused when the
    partition has no open transaction of that producer; confirmed by reading the producer back."""
    change = Change(
        action="cluster.abort_transaction",
        resource_type="cluster",
        organization_id=cluster.organization_id,
        extra={"topic": topic, "partition": partition, "producer_id": producer_id},
    )
    change.on(cluster)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, cluster.organization)
        connection = connection_for(cluster)
        with kafka_refusals():
            producer = _open_transaction_of(cluster, topic, partition, producer_id)
            if producer is None:
                raise ServiceError(
                    f"Producer {producer_id} has no open transaction on {topic}-{partition}.",
                    code="no_open_transaction",
                )
            change.before = {"open_transaction_offset": producer.open_transaction_offset}
            abort_transaction(
                connection,
                topic=topic,
                partition=partition,
                producer_id=producer_id,
                producer_epoch=producer.producer_epoch,
                # A producer state from before any marker has no coordinator epoch yet (-1).
                coordinator_epoch=max(producer.coordinator_epoch, 0),
            )
            still_open = _open_transaction_of(cluster, topic, partition, producer_id)
        change.after = {"open_transaction_offset": still_open.open_transaction_offset if still_open else -1}


def _open_transaction_of(
    cluster: Cluster, topic: str, partition: int, producer_id: int
) -> ProducerOnPartition | None:
    return next(
        (
            producer
            for producer in describe_producers(connection_for(cluster), topics=[topic])
            if producer.partition == partition
            and producer.producer_id == producer_id
            and producer.open_transaction_offset >= 0
        ),
        None,
    )
