"""Running a cluster node: `process.roles` = controller, broker, or broker,controller.

A controller serves the quorum on the listener named by `controller.listener.names`; a broker
serves clients on its other listeners, registers with the quorum and follows the metadata
log. Without `process.roles` none of this runs (the single-node broker of broker/server/).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import signal
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
from broker.controller.decisions import ControllerSettings
from broker.controller.server import (
    KRAFT_VERSION_DYNAMIC,
    ControllerNodeConfig,
    ControllerServer,
    DynamicQuorum,
)
from broker.controller.tls import warn_if_unauthenticated
from broker.node.broker_node import join_cluster
from broker.node.storage_format import read_metadata_dir
from broker.raft.node import RaftTimings
from broker.runtime.connection_limits import ListenerLimits
from broker.runtime.loop_watch import watch_loop_stalls
from broker.server.app import BrokerServer

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


async def run_cluster_node(config: BrokerConfig) -> None:
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
        if "broker" in roles:
            broker = BrokerServer(broker_only_config(config))
            # Joining waits for an active controller: a stop signal must still be heard meanwhile.
            starting = asyncio.create_task(
                broker.start(join_cluster=lambda state: join_cluster(config, state)), name="broker-start"
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
            if membership is not None:
                moved = await membership.controlled_shutdown(CONTROLLED_SHUTDOWN_TIMEOUT_S)
                log.info("controlled shutdown %s", "complete" if moved else "timed out")
            await broker.stop()
        if controller is not None:
            await controller.stop()
        stall_watch.cancel()
