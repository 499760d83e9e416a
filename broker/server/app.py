"""The broker process: start every component, serve, shut down gracefully."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from broker.auth.authorizer import Authorizer
from broker.auth.delegation_tokens import DelegationTokens
from broker.auth.sasl import FailedAuthentications
from broker.auth.scram_store import ScramStore
from broker.config import BrokerConfig, ConfigError
from broker.context import BrokerState
from broker.controller.forwarding import commit_security_records
from broker.log.log_manager import LogManager
from broker.metadata.security_registry import SecurityStore
from broker.metadata.topic_registry import MetadataStore
from broker.quotas.manager import QuotaManager
from broker.runtime.connection_limits import ConnectionLimits
from broker.runtime.metrics import BrokerMetrics, serve_metrics
from broker.runtime.request_memory import RequestMemory
from broker.server.connection import Connection
from broker.telemetry.manager import ClientMetricsManager
from broker.telemetry.receiver import TelemetryReceiver
from broker.topics import TopicManager

log = logging.getLogger("broker")

SHUTDOWN_GRACE_S = 10.0
FLUSH_CHECK_INTERVAL_S = 1.0
# Replica moves between log dirs (AlterReplicaLogDirs): a copy pass of at most this many bytes runs in
# a worker thread every interval, so moves run at up to ~80 MiB/s in all (less with
# replica.alter.log.dirs.io.max.bytes.per.second, as Kafka) without starving produce and fetch.
MOVE_INTERVAL_S = 0.1
MOVE_BYTES_PER_PASS = 8 << 20


class ClusterMembership(Protocol):
    """What `join_cluster` started (broker/node/broker_node.py)."""

    async def controlled_shutdown(self, timeout_s: float) -> bool: ...

    async def close(self) -> None: ...


def now_ms() -> int:
    return int(time.time() * 1000)


async def open_broker_state(config: BrokerConfig, stopping: asyncio.Event | None = None) -> BrokerState:
    """Open the logs and the broker's copies of the metadata in the data directory; no sockets are opened.

    The broker takes its topics, security state, dynamic configs and coordinators from the controller quorum
    once it has joined (broker/node/broker_node.py), not from here.
    """
    data_dir = config.log_dirs[0]
    data_dir.mkdir(parents=True, exist_ok=True)
    metadata = MetadataStore(data_dir)
    metadata.load()
    logs = LogManager(config.log_dirs, TopicManager.default_log_config_for(config))
    logs.load()
    topics = TopicManager(config, metadata, logs)
    topics.open_all()
    security = SecurityStore(data_dir)
    security.load()
    scram = open_scram(config, security)
    state = BrokerState(
        config=config,
        metadata=metadata,
        logs=logs,
        topics=topics,
        metrics=BrokerMetrics(),
        security=security,
        scram=scram,
        quotas=QuotaManager(
            security,
            num_windows=config.get_int("quota.window.num"),
            window_s=float(config.get_int("quota.window.size.seconds")),
        ),
        failed_authentications=FailedAuthentications(
            config.get_int("connection.failed.authentication.delay.ms")
        ),
        authorizer=authorizer_for(config, security),
        stopping=stopping or asyncio.Event(),
        request_memory=RequestMemory(config.get_int("queued.max.request.bytes")),
        connection_limits=ConnectionLimits.from_config(config),
    )
    start_client_telemetry(state)
    return state


def start_client_telemetry(state: BrokerState) -> None:
    """Client telemetry (KIP-714) with its receiver on the metrics endpoint, when `client.telemetry.enable`."""
    config = state.config
    if not config.get_bool("client.telemetry.enable"):
        return
    receiver = TelemetryReceiver(config.get_int("client.telemetry.max.clients"))
    state.telemetry = ClientMetricsManager(
        state.client_metrics_subscriptions, receiver, lambda: config.get_int("telemetry.max.bytes")
    )
    state.metrics.add_collector(receiver.exposition)
    state.metrics.add_gauge(
        "kafka_broker_telemetry_clients",
        "Client instances whose pushed telemetry is exported (limit: client.telemetry.max.clients).",
        lambda: [({}, float(len(receiver)))],
    )
    state.metrics.add_gauge(
        "kafka_broker_telemetry_series",
        "Client telemetry series exported.",
        lambda: [({}, float(receiver.series))],
    )


def open_scram(config: BrokerConfig, security: SecurityStore) -> ScramStore:
    """SCRAM credentials over the loaded security store. `sasl.bootstrap.users` is checked here (a bad list
    stops the start); the broker proposes the missing users to the controller once it has joined."""
    scram = ScramStore(security, DelegationTokens(security, config.get_str("delegation.token.secret.key")))
    try:
        scram.bootstrap_user_records(config.get_str("sasl.bootstrap.users"))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return scram


async def sweep_expired_tokens(state: BrokerState) -> None:
    """Delete the tokens whose expiry time passed (authentication already refuses them). In a
    cluster every broker may propose the same deletes; deleting a deleted token changes nothing."""
    tokens = state.scram.tokens
    if not isinstance(tokens, DelegationTokens):
        return
    records = tokens.expired_records(now_ms())
    if records:
        await commit_security_records(state.cluster, records)
        log.info("expired %d delegation token(s)", len(records))


def authorizer_for(config: BrokerConfig, security: SecurityStore) -> Authorizer | None:
    """The ACL authorizer, or None when `authorizer.class.name` is unset (everything is allowed)."""
    if not config.authorizer_enabled:
        return None
    return Authorizer(
        security,
        super_users=config.super_users,
        allow_if_no_acl=config.get_bool("allow.everyone.if.no.acl.found"),
    )


def server_ssl_context(config: BrokerConfig) -> ssl.SSLContext:
    """TLS for SSL / SASL_SSL listeners from the PEM keystore (and truststore)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    keystore = config.get_str("ssl.keystore.location")
    password = config.get_str("ssl.key.password") or None
    try:
        context.load_cert_chain(keystore, password=password)
        truststore = config.get_str("ssl.truststore.location")
        if truststore:
            context.load_verify_locations(cafile=truststore)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"ssl.keystore.location / ssl.truststore.location: cannot load: {exc}") from None
    client_auth = config.get_str("ssl.client.auth")
    context.verify_mode = {
        "required": ssl.CERT_REQUIRED,
        "requested": ssl.CERT_OPTIONAL,
    }.get(client_auth, ssl.CERT_NONE)
    return context


async def close_broker_state(state: BrokerState) -> None:
    """Stop the coordinators and the partition layer, then flush and close every log and write the topic
    registry's pending deletions."""
    if state.transactions is not None:
        await state.transactions.close()
    if state.groups is not None:
        await state.groups.close()
    replication = getattr(state, "replication", None)  # unset when the broker never joined
    if replication is not None:
        await replication.close()
    state.logs.close()
    state.metadata.flush()


class BrokerServer:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.state: BrokerState | None = None
        self._servers: list[asyncio.AbstractServer] = []
        self._metrics_server: asyncio.AbstractServer | None = None
        self._connections: set[Connection] = set()
        self._periodic: list[asyncio.Task[None]] = []
        self._cleaner_pass: asyncio.Future[Any] | None = None
        self._move_pass: asyncio.Future[Any] | None = None
        # What `join_cluster` returned, once the broker has joined its quorum.
        self.cluster_membership: ClusterMembership | None = None
        self.stopping = asyncio.Event()

    # --- lifecycle ---------------------------------------------------------------------

    async def start(self, join_cluster: Callable[[BrokerState], Awaitable[ClusterMembership]]) -> None:
        """Open the data directory, bind the listeners and serve.

        `join_cluster` (see broker/node/broker_node.py) runs after the listeners are bound and before they
        accept anyone; what it returns is closed on stop.
        """
        config = self.config
        state = await open_broker_state(config, self.stopping)
        metadata, metrics = state.metadata, state.metrics
        data_dir = config.log_dirs[0]
        self.state = state
        self._register_gauges(state)
        self._schedule_offsets_expiry(state)

        loop = asyncio.get_running_loop()
        tls: ssl.SSLContext | None = None
        for listener in config.listeners:
            protocol = config.security_protocol(listener.name)
            if protocol in ("SSL", "SASL_SSL") and tls is None:
                tls = server_ssl_context(config)
            server = await loop.create_server(
                lambda name=listener.name: self._accept(name),
                listener.host or "127.0.0.1",
                listener.port,
                reuse_address=True,
                backlog=config.get_int("socket.listen.backlog.size"),
                ssl=tls if protocol in ("SSL", "SASL_SSL") else None,
                start_serving=False,
            )
            port = server.sockets[0].getsockname()[1]
            state.bound_ports[listener.name] = port
            self._servers.append(server)
            log.info("listening on %s://%s:%d (%s)", listener.name, listener.host, port, protocol)
        self.cluster_membership = await join_cluster(state)
        # Once joined: the tokens are the controller's until then.
        self._schedule(
            "delegation-token-expiry",
            config.get_int("delegation.token.expiry.check.interval.ms") / 1000,
            lambda: sweep_expired_tokens(state),
        )
        for server in self._servers:
            await server.start_serving()
        if config.metrics_port:
            self._metrics_server = await serve_metrics(
                metrics, config.get_str("metrics.host"), config.metrics_port
            )
            log.info("metrics on http://%s:%d/metrics", config.get_str("metrics.host"), config.metrics_port)

        self._schedule("retention", config.log_retention_check_interval_ms / 1000, self._run_retention)
        # A dynamic config: the wait is read again before each pass.
        self._schedule("cleaner", lambda: config.get_int("log.cleaner.backoff.ms") / 1000, self._run_cleaner)
        self._schedule("flush", FLUSH_CHECK_INTERVAL_S, self._run_flush)
        # Deletions the topic registry has not written yet (off the loop: it rewrites the whole file).
        self._schedule("topic-registry", FLUSH_CHECK_INTERVAL_S, lambda: asyncio.to_thread(metadata.flush))
        self._schedule("log-dir-moves", MOVE_INTERVAL_S, self._run_moves)
        max_idle_s = config.get_int("connections.max.idle.ms") / 1000
        self._schedule("idle-connections", min(max_idle_s / 2, 30.0), lambda: self._close_idle(max_idle_s))
        log.info(
            "broker %d started (cluster %s, %d topics, data in %s)",
            config.node_id,
            metadata.cluster_id,
            len(metadata),
            data_dir,
        )

    def _schedule_offsets_expiry(self, state: BrokerState) -> None:
        expiry_s = self.config.get_int("offsets.retention.check.interval.ms") / 1000
        self._schedule(
            "offsets-expiry",
            expiry_s,
            lambda: state.groups.expire_offsets(now_ms()) if state.groups is not None else None,
        )

    async def stop(self) -> None:
        if self.stopping.is_set():
            return
        log.info("broker stopping: no new connections, finishing in-flight requests")
        self.stopping.set()
        for server in self._servers:
            server.close()
        for task in self._periodic:
            task.cancel()
        for worker_pass in (self._cleaner_pass, self._move_pass):
            if worker_pass is not None and not worker_pass.done():
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(worker_pass), SHUTDOWN_GRACE_S)
        for connection in list(self._connections):
            connection.request_stop()
        workers = {c.worker for c in self._connections if c.worker is not None}
        if workers:
            _done, pending = await asyncio.wait(workers, timeout=SHUTDOWN_GRACE_S)
            for task in pending:
                task.cancel()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        if self._metrics_server is not None:
            self._metrics_server.close()
        if self.cluster_membership is not None:
            await self.cluster_membership.close()
        if self.state is not None:
            await close_broker_state(self.state)
        log.info("broker stopped")

    # --- connections -------------------------------------------------------------------

    def _accept(self, listener_name: str) -> Connection:
        assert self.state is not None
        connection = Connection(self.state, listener_name, self._connections.discard)
        if self.stopping.is_set():
            connection.request_stop()
        self._connections.add(connection)
        return connection

    # --- periodic work -----------------------------------------------------------------

    def _schedule(
        self, name: str, interval_s: float | Callable[[], float], work: Callable[[], Awaitable[Any] | Any]
    ) -> None:
        async def loop() -> None:
            while True:
                await asyncio.sleep(max(interval_s() if callable(interval_s) else interval_s, 0.01))
                try:
                    await _maybe_await(work())
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("periodic task %s failed", name)

        self._periodic.append(asyncio.create_task(loop(), name=f"broker-{name}"))

    def _close_idle(self, max_idle_s: float) -> None:
        now = asyncio.get_running_loop().time()
        for connection in list(self._connections):
            connection.close_if_idle(now, max_idle_s)

    def _run_retention(self) -> None:
        assert self.state is not None
        # producer.id.expiration.ms is dynamic: read again before each pass.
        self.state.logs.run_retention(now_ms(), self.config.get_int("producer.id.expiration.ms"))

    async def _run_cleaner(self) -> None:
        assert self.state is not None
        if self.config.get_bool("log.cleaner.enable"):
            # Compaction rewrites whole segments: keep it off the event loop. Shielded, so
            # that stopping waits for a pass in progress instead of closing logs under it.
            # Dynamic configs: read again before each pass.
            self._cleaner_pass = asyncio.ensure_future(
                asyncio.to_thread(
                    self.state.logs.run_cleaner,
                    now_ms(),
                    int(self.config.extra.get("log.cleaner.threads", "1")),
                    float(self.config.extra.get("log.cleaner.io.max.bytes.per.second", "inf")),
                )
            )
            await asyncio.shield(self._cleaner_pass)

    async def _run_moves(self) -> None:
        assert self.state is not None
        logs = self.state.logs
        if not logs.has_moves():
            return
        # Copying runs off the event loop (shielded: stopping waits for it before closing logs);
        # the swap runs on it, where no append can come between the last copy and the swap.
        throttle = self.config.get_int("replica.alter.log.dirs.io.max.bytes.per.second")
        budget = max(1, min(MOVE_BYTES_PER_PASS, int(throttle * MOVE_INTERVAL_S)))
        self._move_pass = asyncio.ensure_future(asyncio.to_thread(logs.copy_futures, budget))
        await asyncio.shield(self._move_pass)
        if not self.stopping.is_set():
            logs.finish_caught_up_moves()

    def _run_flush(self) -> None:
        assert self.state is not None
        self.state.logs.flush_due(now_ms())

    def _register_gauges(self, state: BrokerState) -> None:
        def log_sizes() -> list[tuple[dict[str, str], float]]:
            samples = []
            for log_dir, partitions in state.logs.dir_usage():
                for topic, partition, size in partitions:
                    labels = {"topic": topic, "partition": str(partition), "log_dir": str(log_dir)}
                    samples.append((labels, float(size)))
            return samples

        def group_count() -> list[tuple[dict[str, str], float]]:
            return [({}, float(state.groups.group_count() if state.groups is not None else 0))]

        state.metrics.add_gauge("kafka_log_size_bytes", "Bytes on disk per partition.", log_sizes)
        state.metrics.add_gauge(
            "kafka_broker_groups", "Consumer groups known to the coordinator.", group_count
        )
        state.metrics.add_gauge("kafka_broker_topics", "Topics.", lambda: [({}, float(len(state.metadata)))])
        state.metrics.add_gauge(
            "kafka_broker_request_memory_bytes",
            "Request bytes held by all connections (limit: queued.max.request.bytes).",
            lambda: [({}, float(state.request_memory.used))],
        )


async def _maybe_await(value: Any) -> Any:
    if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
        return await value
    return value
