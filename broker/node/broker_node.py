"""Joining a broker to the controller quorum: everything a broker runs besides its listeners.

`join_cluster` runs after the broker bound its listeners (so it can advertise the real ports)
and before it serves a single request: it registers with the active controller, catches up
with the metadata log (topics, partitions, security), starts replication, then the group and
transaction coordinators. Until then no client can see the broker, and it can never serve a partition it
does not lead.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import uuid
from collections.abc import Sequence
from typing import Any

from broker.config import BrokerConfig, controller_addresses, controller_tls, parse_voters
from broker.context import BrokerState
from broker.controller.api import Endpoint
from broker.controller.broker_lifecycle import BrokerLifecycle
from broker.controller.client import ControllerClient
from broker.controller.forwarding import ControllerError, ControllerLink, commit_security_records
from broker.controller.rpc.admin import CreateTopicsRequest, NewTopic
from broker.node.applier import MetadataApplier
from broker.replication.config import ReplicationConfig
from broker.replication.manager import ReplicaManager
from broker.server.group_storage import open_group_coordinator
from broker.server.share_storage import ShareStateStore
from broker.server.txn_storage import open_transaction_coordinator

log = logging.getLogger("broker.cluster")

UNFENCE_POLL_S = 0.01
EAGER_TOPICS_TIMEOUT_S = 30.0
TOPIC_ALREADY_EXISTS = 36
_CLUSTER_ID_NAMESPACE = uuid.UUID("0b5f4a52-5e1d-4c55-9a8e-3c1f0d7a6e21")


def cluster_id_for(config: BrokerConfig) -> str:
    """`cluster.id` if set, else derived from the quorum: the same on every node of a cluster,
    different between clusters (clients refuse brokers reporting different ids)."""
    configured = config.get_str("cluster.id").strip()
    if configured:
        return configured
    voters = parse_voters(config.get_str("controller.quorum.voters"))
    canonical = ",".join(f"{node}@{host}:{port}" for node, (host, port) in sorted(voters.items()))
    digest = uuid.uuid5(_CLUSTER_ID_NAMESPACE, canonical).bytes
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


class ClusterMembership:
    """What `join_cluster` started; the broker closes it before its logs."""

    def __init__(
        self,
        lifecycle: BrokerLifecycle,
        manager: ReplicaManager,
        state: BrokerState,
        link: ControllerLink,
        alter_channel: ControllerClient,
    ) -> None:
        self.lifecycle = lifecycle
        self.link = link
        self.alter_channel = alter_channel
        self.manager = manager
        self.state = state

    async def controlled_shutdown(self, timeout_s: float) -> bool:
        """Move leadership away (the controller answers once this broker leads nothing)."""
        return await self.lifecycle.controlled_shutdown(timeout_s)

    async def close(self) -> None:
        if self.state.transactions is not None:
            await self.state.transactions.close()
            self.state.transactions = None
        if self.state.groups is not None:
            await self.state.groups.close()
            self.state.groups = None
        if self.state.share.store is not None:
            await self.state.share.store.close()
        await self.lifecycle.close()
        await self.manager.close()
        self.alter_channel.close()
        self.link.close()


async def join_cluster(
    config: BrokerConfig, state: BrokerState, *, eager_topics: Sequence[dict[str, Any]] = ()
) -> ClusterMembership:
    """Register, catch up with the metadata log and start the data path (see the module doc).
    `eager_topics` (CreateTopics specs, as the controller RPC takes them) are created if missing, and
    led here, before the coordinators start."""
    endpoints = []
    for listener in state.config.listeners:
        host, port = state.advertised_endpoint(listener.name)
        endpoints.append(Endpoint(listener.name, host, port, state.config.security_protocol(listener.name)))
    tls = controller_tls(config)
    client = ControllerClient(
        controller_addresses(config),
        ssl=tls.client_context() if tls is not None else None,
    )
    lifecycle = BrokerLifecycle(
        client,
        broker_id=config.node_id,
        endpoints=endpoints,
        rack=config.get_str("broker.rack") or None,
        heartbeat_interval_s=config.get_int("broker.heartbeat.interval.ms") / 1000,
    )
    state.metrics.add_gauge(
        "kafka_broker_metadata_refused_offset",
        "Offset of the metadata log entry this broker stopped at: it holds a record of a newer release.",
        lifecycle.refusal.samples,
    )
    # Kafka's separate controller channels: forwarded admin writes (a large topic creation may take
    # seconds) and AlterPartition never delay heartbeats, nor each other; all follow one active controller.
    link = ControllerLink(client.sibling(), lifecycle, config.node_id)
    alter_channel = client.sibling()
    manager = ReplicaManager(
        ReplicationConfig.from_broker_config(state.config),
        alter_channel,
        logs=state.logs,
        metadata=state.metadata,
        log_config=state.topics.log_config,
        broker_epoch=lambda: lifecycle.broker_epoch,
    )
    manager.committed_assignment = lifecycle.committed_assignment
    applier = MetadataApplier(state, lambda: lifecycle.image, [manager])
    lifecycle.listeners = [applier]
    state.metadata.cluster_id = cluster_id_for(config)
    state.replication = manager
    state.cluster = link
    state.topics.cluster = link
    membership = ClusterMembership(lifecycle, manager, state, link, alter_channel)
    try:
        await lifecycle.start()
        await lifecycle.caught_up.wait()
        await _until_unfenced(lifecycle, config.get_int("broker.session.timeout.ms") / 1000)
        manager.start()
        await _create_eagerly(state, link, eager_topics)
        # After the ReplicaManager: a coordinator loads a partition once its replica leads it.
        state.groups, group_listener = open_group_coordinator(state)
        state.share.store = ShareStateStore(state)
        applier.followers.append(group_listener)
        state.transactions, transaction_listener = open_transaction_coordinator(state)
        applier.followers.append(transaction_listener)
        await _create_bootstrap_users(config, state)
    except BaseException:
        await membership.close()
        raise
    log.info(
        "broker %d joined the cluster (epoch %s, metadata offset %d, %d partitions hosted)",
        config.node_id,
        lifecycle.broker_epoch,
        lifecycle.image.offset,
        len(manager.partitions),
    )
    return membership


async def _create_eagerly(state: BrokerState, link: ControllerLink, specs: Sequence[dict[str, Any]]) -> None:
    missing = [spec for spec in specs if link.image.topic_by_name(spec["name"]) is None]
    if missing:
        result = await link.call(CreateTopicsRequest(tuple(NewTopic(**spec) for spec in missing)))
        for answer in result.results:
            if answer.error_code not in (0, TOPIC_ALREADY_EXISTS):
                raise ControllerError(answer.error_code, str(answer.message))
    deadline = asyncio.get_running_loop().time() + EAGER_TOPICS_TIMEOUT_S
    for spec in specs:
        # As the image has it (a topic created before may have another partition count than configured now).
        while not _led_here(state, link, spec["name"]):
            if asyncio.get_running_loop().time() > deadline:
                log.warning("%s is not led here yet: serving anyway", spec["name"])
                return
            await asyncio.sleep(UNFENCE_POLL_S)


def _led_here(state: BrokerState, link: ControllerLink, name: str) -> bool:
    topic = link.image.topic_by_name(name)
    return topic is not None and all(state.partitions.knows(name, index) for index in topic.partitions)


async def _until_unfenced(lifecycle: BrokerLifecycle, timeout_s: float) -> None:
    """As Kafka's BrokerServer, serve once the image shows this broker unfenced: its partitions have leaders
    by then (on a single node, every partition's leader is this broker). After `timeout_s` it serves anyway,
    fenced, as before: the controller unfences it when its heartbeats say it caught up."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while asyncio.get_running_loop().time() < deadline:
        registration = lifecycle.image.brokers.get(lifecycle.broker_id)
        if (
            registration is not None
            and not registration.fenced
            and lifecycle.published_offset >= lifecycle.image.offset
        ):
            return
        await asyncio.sleep(UNFENCE_POLL_S)
    log.warning("broker %d still fenced after %.0f s: serving anyway", lifecycle.broker_id, timeout_s)


async def _create_bootstrap_users(config: BrokerConfig, state: BrokerState) -> None:
    """`sasl.bootstrap.users` missing from the cluster's SCRAM credentials are proposed to the
    controller (every node has the same list; the first to ask creates them)."""
    records, created = state.scram.bootstrap_user_records(config.get_str("sasl.bootstrap.users"))
    if not records:
        return
    try:
        await commit_security_records(state.cluster, records)
    except ControllerError as exc:
        log.warning("bootstrap SCRAM users not created yet (%s); the next start retries", exc.message)
        return
    log.info("created bootstrap SCRAM users: %s", ", ".join(created))
