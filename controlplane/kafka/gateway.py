"""A thin, typed gateway over confluent-kafka's AdminClient.

Every call has a timeout and turns librdkafka's errors into the typed exceptions of errors.py, so
callers never see a KafkaException and never wait forever on a cluster that does not answer.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from controlplane.kafka.errors import (
    AuthenticationFailed,
    ClusterUnreachable,
    KafkaGatewayError,
    NotAuthorized,
)

DEFAULT_TIMEOUT_SECONDS = 5.0

# librdkafka logs every refused connection; they are expected while a broker starts, so keep them quiet.
_librdkafka_log = logging.getLogger("controlplane.kafka.librdkafka")

_UNREACHABLE = {
    KafkaError._TRANSPORT,
    KafkaError._TIMED_OUT,
    KafkaError._ALL_BROKERS_DOWN,
    KafkaError._RESOLVE,
    KafkaError.REQUEST_TIMED_OUT,
    KafkaError.NETWORK_EXCEPTION,
}
_AUTHENTICATION = {KafkaError._AUTHENTICATION, KafkaError.SASL_AUTHENTICATION_FAILED}
_AUTHORIZATION = {KafkaError.CLUSTER_AUTHORIZATION_FAILED, KafkaError.TOPIC_AUTHORIZATION_FAILED}


@dataclass(frozen=True)
class Connection:
    """How to reach a cluster. The password is only ever passed to librdkafka, never logged."""

    bootstrap_servers: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str = ""
    username: str = ""
    password: str = field(default="", repr=False)

    def client_config(self, timeout_seconds: float) -> dict[str, object]:
        timeout_ms = max(1000, int(timeout_seconds * 1000))
        config: dict[str, object] = {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": self.security_protocol,
            "socket.timeout.ms": timeout_ms,
            "socket.connection.setup.timeout.ms": timeout_ms,
            "reconnect.backoff.max.ms": 500,
            "log.connection.close": False,
        }
        if self.security_protocol.startswith("SASL"):
            config.update(
                {
                    "sasl.mechanism": self.sasl_mechanism or "PLAIN",
                    "sasl.username": self.username,
                    "sasl.password": self.password,
                }
            )
        return config


@dataclass(frozen=True)
class BrokerNode:
    node_id: int
    host: str
    port: int


@dataclass(frozen=True)
class ClusterDescription:
    cluster_id: str | None
    controller_id: int
    brokers: list[BrokerNode]
    topic_count: int
    partition_count: int
    offline_partitions: int


@dataclass(frozen=True)
class ConfigValue:
    value: str | None
    source: str
    read_only: bool
    sensitive: bool


def _raise_typed(error: KafkaError | None, fallback: str) -> None:
    if error is None:
        raise KafkaGatewayError("UNKNOWN", fallback)
    name, message = error.name(), error.str()
    code = error.code()
    if code in _UNREACHABLE:
        raise ClusterUnreachable(name, message)
    if code in _AUTHENTICATION:
        raise AuthenticationFailed(name, message)
    if code in _AUTHORIZATION:
        raise NotAuthorized(name, message)
    raise KafkaGatewayError(name, message)


def _admin(connection: Connection, timeout_seconds: float) -> AdminClient:
    try:
        return AdminClient(connection.client_config(timeout_seconds), logger=_librdkafka_log)
    except KafkaException as error:
        _raise_typed(error.args[0] if error.args else None, "invalid client configuration")
        raise  # unreachable: _raise_typed always raises


def describe_cluster(
    connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> ClusterDescription:
    """Brokers, controller and partition health from one Metadata request."""
    admin = _admin(connection, timeout_seconds)
    try:
        metadata = admin.list_topics(timeout=timeout_seconds)
    except KafkaException as error:
        _raise_typed(error.args[0] if error.args else None, "Metadata request failed")
    partitions = [p for topic in metadata.topics.values() for p in topic.partitions.values()]
    return ClusterDescription(
        cluster_id=metadata.cluster_id,
        controller_id=metadata.controller_id,
        brokers=sorted(
            (BrokerNode(node_id=b.id, host=b.host, port=b.port) for b in metadata.brokers.values()),
            key=lambda node: node.node_id,
        ),
        topic_count=len(metadata.topics),
        partition_count=len(partitions),
        offline_partitions=sum(1 for p in partitions if p.leader < 0),
    )


def describe_broker_configs(
    connection: Connection, node_ids: Iterable[int], *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> dict[int, dict[str, ConfigValue]]:
    """Every broker config of the given nodes (DescribeConfigs, resource type BROKER)."""
    admin = _admin(connection, timeout_seconds)
    resources = {node_id: ConfigResource(ResourceType.BROKER, str(node_id)) for node_id in node_ids}
    futures = admin.describe_configs(list(resources.values()), request_timeout=timeout_seconds)
    configs: dict[int, dict[str, ConfigValue]] = {}
    for node_id, resource in resources.items():
        try:
            entries = futures[resource].result(timeout=timeout_seconds + 1)
        except KafkaException as error:
            _raise_typed(error.args[0] if error.args else None, "DescribeConfigs failed")
        except TimeoutError as error:
            raise ClusterUnreachable("_TIMED_OUT", "DescribeConfigs got no answer") from error
        configs[node_id] = {
            name: ConfigValue(
                value=None if entry.is_sensitive else entry.value,
                source=entry.source.name if hasattr(entry.source, "name") else str(entry.source),
                read_only=bool(entry.is_read_only),
                sensitive=bool(entry.is_sensitive),
            )
            for name, entry in entries.items()
        }
    return configs
