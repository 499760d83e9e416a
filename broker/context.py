"""Shared broker state and the per-request context handed to every API handler.

It sits between the handlers (above) and the services they call (below: coordinators, the
partition layer, the controller link, security, quotas); it imports none of the handlers.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol, TypeVar

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import Authorizer
from broker.auth.sasl import AuthSession, FailedAuthentications
from broker.auth.scram_store import ScramStore
from broker.config import BrokerConfig, Listener
from broker.controller.forwarding import ControllerLink
from broker.groups.coordinator import GroupCoordinator
from broker.log.log_manager import LogManager
from broker.metadata.features import finalized_levels
from broker.metadata.security_registry import SecurityStore
from broker.metadata.topic_registry import MetadataStore, TopicsView
from broker.partitions.manager import PartitionManager
from broker.quotas.manager import QuotaManager
from broker.replication.manager import ReplicaManager
from broker.runtime.connection_limits import ConnectionLimits
from broker.runtime.dynamic_config import (
    CONNECTION_CONFIGS,
    LOG_DEFAULT_CONFIGS,
    DynamicBrokerConfig,
)
from broker.runtime.metrics import BrokerMetrics
from broker.runtime.request_memory import RequestMemory
from broker.share.share_state import ShareState
from broker.telemetry.manager import ClientMetricsManager
from broker.topics import TopicManager
from broker.transactions.coordinator import TransactionCoordinator

CacheT = TypeVar("CacheT")


class HandlerCaches:
    """What handlers keep between requests (encoded responses, fetch sessions): one object per
    class, created on first use. Each handler validates its own entries."""

    def __init__(self) -> None:
        self._by_class: dict[type, object] = {}

    def get(self, kind: type[CacheT], create: Callable[[], CacheT]) -> CacheT:
        found = self._by_class.get(kind)
        if found is None:
            found = self._by_class[kind] = create()
        assert isinstance(found, kind)
        return found


class TransactionVerifier(Protocol):
    """KIP-890's server-side defence for transactional Produce (the transaction coordinator side
    provides it, see `BrokerState.txn_verifier`).

    Produce calls `verify` once per request, before appending, with every partition of the request
    that carries transactional batches. It answers, for each partition, ErrorCode.none when the
    producer (`producer_id`, `producer_epoch`) has added that partition to its ongoing transaction
    `transactional_id` (AddPartitionsToTxn), else the error that partition is answered with (such
    as INVALID_TXN_STATE, INVALID_PRODUCER_EPOCH, NOT_COORDINATOR); a partition missing from the
    answer is appended. The batches' own producer epoch is checked by the log either way.

    With `add_partitions` (transaction version 2: Produce v12, TxnOffsetCommit v5) the partitions not yet
    in the transaction are added to it (starting one) rather than refused: KIP-890 part 2's implicit add."""

    async def verify(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Sequence[tuple[str, int]],
        *,
        add_partitions: bool = False,
    ) -> Mapping[tuple[str, int], ErrorCode]: ...


@dataclass(eq=False)
class BrokerState:
    """Everything a handler may touch. One instance per broker process."""

    config: BrokerConfig
    metadata: MetadataStore
    logs: LogManager
    topics: TopicManager
    metrics: BrokerMetrics
    security: SecurityStore
    scram: ScramStore
    quotas: QuotaManager
    failed_authentications: FailedAuthentications
    authorizer: Authorizer | None = None  # None: ACLs off, everything is allowed
    # Set once the broker has joined its quorum; None until then.
    groups: GroupCoordinator | None = None
    # The transaction coordinator, set like `groups`.
    transactions: TransactionCoordinator | None = None
    # Leaders, ISRs and high watermarks of every hosted partition, fed the controller's image (set when the
    # broker joins its quorum). Handlers reach partitions through `partitions` only.
    replication: ReplicaManager = field(init=False)
    # The link to the controller quorum every broker belongs to (a single node: its own one-voter quorum),
    # set when it joins, before it serves anyone. Metadata writes go through it.
    cluster: ControllerLink = field(init=False)
    # Listener name -> port actually bound (differs from the config when it asks for port 0).
    bound_ports: dict[str, int] = field(default_factory=dict)
    started_at_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    # Encoded responses and fetch sessions that handlers keep between requests.
    response_caches: HandlerCaches = field(default_factory=HandlerCaches)
    # Request bytes held by all connections (queued.max.request.bytes) and the shared read buffer.
    request_memory: RequestMemory = field(default_factory=RequestMemory)
    # max.connections, max.connections.per.ip (unlimited unless open_broker_state sets them).
    connection_limits: ConnectionLimits = field(
        default_factory=lambda: ConnectionLimits(2**31 - 1, 2**31 - 1, {})
    )
    # KIP-890 verification of transactional produce; None: transactional batches are checked by the
    # log only (producer id, epoch, sequence).
    txn_verifier: TransactionVerifier | None = None
    # Set when shutdown begins, so long-polls return early.
    stopping: asyncio.Event = field(default_factory=asyncio.Event)

    # Dynamic broker configs (AlterConfigs on a broker resource) over `config`; see __post_init__.
    dynamic_config: DynamicBrokerConfig = field(init=False)
    # Client telemetry (KIP-714); None while `client.telemetry.enable` is false (71/72 not advertised).
    telemetry: ClientMetricsManager | None = None

    _partitions: PartitionManager | None = field(default=None, init=False, repr=False)
    # Share groups (KIP-932) coordinated here, share-partitions led here, share sessions: see `share`.
    _share: ShareState | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.dynamic_config = DynamicBrokerConfig(self.config)
        self.dynamic_config.subscribe(self._dynamic_configs_changed)

    def _dynamic_configs_changed(self, names: frozenset[str]) -> None:
        """Rebuild what holds a copy of a changed dynamic config (the rest read `config` when used)."""
        if names & LOG_DEFAULT_CONFIGS:
            self.topics.apply_broker_defaults()
        if names & CONNECTION_CONFIGS:
            self.connection_limits.reconfigure(self.config)

    def group_configs(self, group_id: str) -> dict[str, str]:
        """The configs set on a group (IncrementalAlterConfigs on resource type GROUP)."""
        return dict(self.cluster.image.group_configs.get(group_id, {}))

    def client_metrics_subscriptions(self) -> dict[str, dict[str, str]]:
        """Every CLIENT_METRICS subscription: name -> its configs."""
        return self.cluster.image.client_metrics_configs

    def finalized_features(self) -> tuple[int, dict[str, int]]:
        """(epoch, level of every known feature), from the metadata image (the epoch is the image's offset,
        as Kafka's)."""
        image = self.cluster.image
        return image.offset, finalized_levels(image.features)

    def feature_level(self, name: str) -> int:
        return self.finalized_features()[1].get(name, 0)

    @property
    def share(self) -> ShareState:
        """Share groups, share-partitions and share sessions of this broker (created on first use)."""
        if self._share is None:
            self._share = ShareState(
                TopicsView(
                    self.metadata,
                    lambda topics: MappingProxyType(
                        {
                            topic.name: (topic.topic_id, topic.partitions)
                            for topic in topics
                            if not topic.internal
                        }
                    ),
                )
            )
        return self._share

    @property
    def partitions(self) -> PartitionManager:
        """The partition layer over the current ReplicaManager."""
        partitions = self._partitions
        if partitions is None or partitions.replication is not self.replication:
            partitions = self._partitions = PartitionManager(self.replication, self.logs)
        return partitions

    @property
    def node_id(self) -> int:
        return self.config.node_id

    @property
    def cluster_id(self) -> str:
        return self.metadata.cluster_id

    def advertised_endpoint(self, listener_name: str) -> tuple[str, int]:
        """(host, port) clients should use for this broker on the given listener."""
        listener = self._advertised(listener_name)
        port = listener.port
        if port == 0:
            port = self.bound_ports.get(listener.name, 0)
        host = listener.host or "127.0.0.1"
        if host == "0.0.0.0":
            host = "127.0.0.1"
        return host, port

    def _advertised(self, listener_name: str) -> Listener:
        for listener in self.config.advertised_listeners:
            if listener.name == listener_name:
                return listener
        for listener in self.config.listeners:
            if listener.name == listener_name:
                return listener
        return self.config.listeners[0]


@dataclass(eq=False)
class ClientSession:
    """Per-connection state that outlives one request: who is calling, and quota delays."""

    auth: AuthSession
    # Set by the dispatcher: how long to hold the response (and stop reading) for quotas.
    throttle_s: float = 0.0
    # What ApiVersions v3+ said the client is (KIP-511).
    client_software_name: str = ""
    client_software_version: str = ""
    # (group id, member id) of the share sessions this connection opened: they end when it closes.
    share_sessions: set[tuple[str, str]] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class RequestContext:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    client_host: str
    client_port: int
    listener_name: str
    broker: BrokerState
    principal: str = "User:ANONYMOUS"
    session: ClientSession | None = None

    def allowed(self, operation: int, resource_type: int, name: str) -> bool:
        """The ACL decision for this request's principal and host (True when ACLs are off)."""
        authorizer = self.broker.authorizer
        if authorizer is None:
            return True
        return authorizer.authorize(self.principal, self.client_host, operation, resource_type, name)

    def authorized_operations(self, resource_type: int, name: str, everything: int) -> int:
        authorizer = self.broker.authorizer
        if authorizer is None:
            return everything
        return authorizer.authorized_operations(self.principal, self.client_host, resource_type, name)
