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

from broker.config import BrokerConfig, ConfigError, Listener
from broker.controller.client import parse_voters
from broker.controller.decisions import ControllerSettings
from broker.controller.server import ControllerNodeConfig, ControllerServer
from broker.controller.tls import controller_tls, warn_if_unauthenticated
from broker.raft.node import RaftTimings
from broker.server.connection_limits import ListenerLimits
from broker.server.loop_watch import watch_loop_stalls

log = logging.getLogger("broker.cluster")

ROLES = ("broker", "controller")
CONTROLLED_SHUTDOWN_TIMEOUT_S = 15.0


def roles_of(config: BrokerConfig) -> set[str]:
    return {r.strip() for r in config.get_str("process.roles").split(",") if r.strip()}


def controller_listener_names(config: BrokerConfig) -> set[str]:
    return config.controller_listener_names


def validate_cluster_config(config: BrokerConfig) -> None:
    roles = roles_of(config)
    unknown = roles - set(ROLES)
    if unknown or not roles:
        raise ConfigError(
            f"process.roles: {config.get_str('process.roles')!r} is not broker, controller or both"
        )
    try:
        voters = parse_voters(config.get_str("controller.quorum.voters"))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if not voters:
        raise ConfigError("controller.quorum.voters: required when process.roles is set")
    names = controller_listener_names(config)
    controller_listeners = [listener for listener in config.listeners if listener.name in names]
    if "controller" in roles:
        if config.node_id not in voters:
            raise ConfigError(f"controller.quorum.voters: node.id {config.node_id} is not one of the voters")
        if not controller_listeners:
            raise ConfigError(f"listeners: no controller listener named {', '.join(sorted(names))}")
    elif controller_listeners:
        raise ConfigError("listeners: a broker-only node has no controller listener")
    # Brokers dial the controllers with the same protocol and files: checked for every role.
    controller_tls(config)
    if "broker" in roles and len(controller_listeners) == len(config.listeners):
        raise ConfigError("listeners: a broker needs a listener besides the controller listener")
    heartbeat_ms = config.get_int("broker.heartbeat.interval.ms")
    if "broker" in roles and heartbeat_ms >= config.get_int("broker.session.timeout.ms"):
        raise ConfigError("broker.heartbeat.interval.ms must be shorter than broker.session.timeout.ms")


def metadata_dir(config: BrokerConfig) -> Path:
    base = config.get_str("metadata.log.dir") or str(config.log_dirs[0])
    # Not `<name>-<number>`: the log manager would take it for a partition directory.
    return Path(base) / "__cluster_metadata"


def controller_node_config(config: BrokerConfig) -> ControllerNodeConfig:
    names = controller_listener_names(config)
    listener = next(item for item in config.listeners if item.name in names)
    election_timeout_s = config.get_int("controller.quorum.election.timeout.ms") / 1000
    return ControllerNodeConfig(
        node_id=config.node_id,
        voters=parse_voters(config.get_str("controller.quorum.voters")),
        metadata_dir=metadata_dir(config),
        listen_host=listener.host or "127.0.0.1",
        listen_port=listener.port,
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
        ),
        timings=RaftTimings(
            election_timeout_s=election_timeout_s, heartbeat_interval_s=election_timeout_s / 10
        ),
    )


def broker_only_config(config: BrokerConfig) -> BrokerConfig:
    """The node's config as the client-facing broker sees it: without the controller listener."""
    names = controller_listener_names(config)

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
    broker = None
    starting: asyncio.Task[None] | None = None
    stall_watch = asyncio.create_task(watch_loop_stalls(), name="loop-stall-watch")
    try:
        if "controller" in roles:
            node_config = controller_node_config(config)
            warn_if_unauthenticated(
                "/".join(sorted(controller_listener_names(config))), node_config.listen_host, node_config.tls
            )
            controller = ControllerServer(node_config)
            await controller.start()
        if "broker" in roles:
            from broker.controller.broker_node import join_cluster
            from broker.server.app import BrokerServer

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
