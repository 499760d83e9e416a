"""Running a cluster node: `process.roles` = controller, broker, or broker,controller.

A controller serves the quorum on the listener named by `controller.listener.names`; a broker
serves clients on its other listeners, registers with the quorum and follows the metadata
log. Without `process.roles` the node is a combined node, the only voter of its own quorum
(broker/node/single_node.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import signal
from collections.abc import Mapping
from pathlib import Path

from broker.config import (
    BrokerConfig,
    Listener,
    controller_addresses,
    controller_tls,
    is_dynamic_quorum,
    parse_voters,
    roles_of,
)
from broker.context import BrokerState
from broker.controller.decisions import ControllerSettings
from broker.controller.quorum_driver import KRAFT_VERSION_DYNAMIC, ControllerNodeConfig, DynamicQuorum
from broker.controller.server import ControllerServer
from broker.controller.tls import warn_if_unauthenticated
from broker.node.broker_node import ClusterMembership, join_cluster
from broker.node.single_node import prepare_single_node, single_node_internal_topics, single_node_overrides
from broker.node.storage_format import read_metadata_dir
from broker.raft.node import RaftTimings
from broker.runtime.connection_limits import ListenerLimits
from broker.runtime.loop_watch import watch_loop_stalls
from broker.server.app import BrokerServer, close_broker_state, open_broker_state

log = logging.getLogger("broker.cluster")

CONTROLLED_SHUTDOWN_TIMEOUT_S = 15.0


def metadata_dir(config: BrokerConfig) -> Path:
    base = config.get_str("metadata.log.dir") or str(config.log_dirs[0])
    # Not `<name>-<number>`: the log manager would take it for a partition directory.
    return Path(base) / "__cluster_metadata"


def controller_endpoint(config: BrokerConfig) -> tuple[str, int]:
    """The controller listener's host and port (StopIteration: the node has none)."""
    names = config.controller_listener_names
    listener = next(item for item in config.listeners if item.name in names)
    return listener.host or "127.0.0.1", listener.port


def controller_node_config(config: BrokerConfig) -> ControllerNodeConfig:
    """Raises FormatError when a dynamic quorum's controller has an unformatted metadata dir."""
    listen_host, listen_port = controller_endpoint(config)
    election_timeout_s = config.get_int("controller.quorum.election.timeout.ms") / 1000
    directory = metadata_dir(config)
    dynamic: DynamicQuorum | None = None
    if is_dynamic_quorum(config):
        formatted = read_metadata_dir(directory, config.node_id)
        dynamic = DynamicQuorum(
            directory_id=formatted.directory_id,
            bootstrap_voters=formatted.bootstrap_voters,
            bootstrap_servers=tuple(controller_addresses(config).values()),
        )
    return ControllerNodeConfig(
        node_id=config.node_id,
        voters=parse_voters(config.get_str("controller.quorum.voters")),
        dynamic=dynamic,
        metadata_dir=directory,
        listen_host=listen_host,
        listen_port=listen_port,
        tls=controller_tls(config),
        limits=ListenerLimits.from_config(config),
        settings=ControllerSettings(
            session_timeout_s=config.get_int("broker.session.timeout.ms") / 1000,
            default_partitions=config.num_partitions,
            default_replication_factor=config.default_replication_factor,
            unclean_leader_election=config.get_bool("unclean.leader.election.enable"),
            auto_leader_rebalance=config.get_bool("auto.leader.rebalance.enable"),
            leader_imbalance_check_interval_s=config.get_int("leader.imbalance.check.interval.seconds"),
            leader_imbalance_percentage=config.get_int("leader.imbalance.per.broker.percentage"),
            kraft_version=KRAFT_VERSION_DYNAMIC if dynamic is not None else 0,
            min_insync_replicas=config.get_int("min.insync.replicas"),
        ),
        timings=RaftTimings(
            election_timeout_s=election_timeout_s, heartbeat_interval_s=election_timeout_s / 10
        ),
    )


def broker_only_config(config: BrokerConfig) -> BrokerConfig:
    """The node's config as the client-facing broker sees it: without the controller listener."""
    names = config.controller_listener_names

    def keep(listeners: list[Listener]) -> list[Listener]:
        return [item for item in listeners if item.name not in names]

    return dataclasses.replace(
        config, listeners=keep(config.listeners), advertised_listeners=keep(config.advertised_listeners)
    )


async def run_cluster_node(config: BrokerConfig, *, single_node: bool = False) -> None:
    """`single_node`: the node is its own one-voter quorum (broker/node/single_node.py): before its broker
    joins, it adopts a data directory written outside a quorum; the broker serves only once its internal
    topics exist and are led here, so its first clients find their coordinators at once."""
    roles = roles_of(config)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    controller: ControllerServer | None = None
    broker: BrokerServer | None = None
    starting: asyncio.Task[None] | None = None
    stall_watch = asyncio.create_task(watch_loop_stalls(), name="loop-stall-watch")
    try:
        if "controller" in roles:
            node_config = controller_node_config(config)
            warn_if_unauthenticated(
                "/".join(sorted(config.controller_listener_names)), node_config.listen_host, node_config.tls
            )
            controller = ControllerServer(node_config)
            await controller.start()
            if single_node:
                await prepare_single_node(controller, config.log_dirs[0], config.node_id)
        if "broker" in roles:
            broker = BrokerServer(broker_only_config(config))
            # Joining waits for an active controller: a stop signal must still be heard meanwhile.
            starting = asyncio.create_task(
                broker.start(
                    join_cluster=lambda state: join_cluster(
                        config, state, eager_topics=single_node_internal_topics(config) if single_node else ()
                    )
                ),
                name="broker-start",
            )
            stop_wait = asyncio.create_task(stopping.wait())
            await asyncio.wait({starting, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
            stop_wait.cancel()
            if starting.done():
                starting.result()  # a failed start ends the process with its error
        await stopping.wait()
    finally:
        if starting is not None and not starting.done():
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
        if broker is not None:
            membership = broker.cluster_membership
            # A single node has no other broker to move leadership to: its partitions keep their leader
            # until it stops (a long poll in progress is answered, not told NOT_LEADER_OR_FOLLOWER).
            if membership is not None and not single_node:
                moved = await membership.controlled_shutdown(CONTROLLED_SHUTDOWN_TIMEOUT_S)
                log.info("controlled shutdown %s", "complete" if moved else "timed out")
            await broker.stop()
        if controller is not None:
            await controller.stop()
        stall_watch.cancel()


class InProcessNode:
    """A single node run inside the caller's event loop (see `open_single_node`)."""

    def __init__(
        self, controller: ControllerServer, state: BrokerState, membership: ClusterMembership
    ) -> None:
        self.controller = controller
        self.state = state
        self.membership = membership

    async def close(self) -> None:
        await self.membership.close()
        await close_broker_state(self.state)
        await self.controller.stop()


def single_node_config(properties: Mapping[str, str]) -> BrokerConfig:
    """`properties` (no `process.roles`) as the one-voter combined node `python -m broker` makes of them."""
    config = BrokerConfig.from_properties(properties)
    overrides = dict(item.split("=", 1) for item in single_node_overrides(config))
    return BrokerConfig.from_properties({**properties, **overrides})


async def open_single_node(config: BrokerConfig, stopping: asyncio.Event | None = None) -> InProcessNode:
    """The controller and the broker of a single node (`single_node_config`), started as `run_cluster_node`
    starts them but without client listeners: the broker's state is served by whoever holds it (tools and
    dispatcher-level tests hand requests to it directly)."""
    controller = ControllerServer(controller_node_config(config))
    await controller.start()
    try:
        await prepare_single_node(controller, config.log_dirs[0], config.node_id)
        state = await open_broker_state(broker_only_config(config), stopping)
        try:
            membership = await join_cluster(config, state, eager_topics=single_node_internal_topics(config))
        except BaseException:
            await close_broker_state(state)
            raise
    except BaseException:
        await controller.stop()
        raise
    return InProcessNode(controller, state, membership)
