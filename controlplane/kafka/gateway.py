"""A thin, typed gateway over confluent-kafka's AdminClient.

Every call has a timeout and turns librdkafka's errors into the typed exceptions of errors.py, so
callers never see a KafkaException and never wait forever on a cluster that does not answer.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from confluent_kafka import (
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from kio.schema.alter_client_quotas.v1 import request as alter_quotas
from kio.schema.alter_partition_reassignments.v0 import request as alter_reassignments
from kio.schema.describe_client_quotas.v1 import request as describe_quotas
from kio.schema.describe_configs.v4.request import DescribeConfigsRequest, DescribeConfigsResource
from kio.schema.describe_log_dirs.v1.request import DescribableLogDirTopic, DescribeLogDirsRequest
from kio.schema.describe_log_dirs.v4.request import DescribeLogDirsRequest as DescribeLogDirsRequestV4
from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest
from kio.schema.list_partition_reassignments.v0 import request as list_reassignments
from kio.schema.offset_delete.v0 import request as offset_delete
from kio.schema.unregister_broker.v0.request import UnregisterBrokerRequest
from kio.static.primitive import f64, i8, i32, i32Timedelta

from controlplane.kafka.errors import (
    AuthenticationFailed,
    ClusterUnreachable,
    KafkaGatewayError,
    NotAuthorized,
)
from controlplane.kafka.wire import WireConnection

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
_AUTHORIZATION = {
    KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    KafkaError.TOPIC_AUTHORIZATION_FAILED,
    KafkaError.GROUP_AUTHORIZATION_FAILED,
}


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
    # Partitions whose in-sync replicas are fewer than their replicas.
    under_replicated_partitions: int = 0


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
        under_replicated_partitions=sum(1 for p in partitions if len(p.isrs) < len(p.replicas)),
    )


# Kafka's ConfigType numbers (DescribeConfigs v3+) and names.
CONFIG_TYPES = {
    1: "boolean",
    2: "string",
    3: "int",
    4: "short",
    5: "long",
    6: "double",
    7: "list",
    8: "class",
    9: "password",
}
_TOPIC_RESOURCE, _BROKER_RESOURCE = 2, 4


@dataclass(frozen=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: str


@dataclass(frozen=True)
class DocumentedConfig(ConfigValue):
    """A config as DescribeConfigs v4 reports it with documentation and synonyms: its type ("long",
    "list"…, None when the cluster does not say), what it means, and where else its value could come
    from, most specific first (the value a reset returns to is the first synonym after the current one)."""

    config_type: str | None = None
    documentation: str | None = None
    synonyms: tuple[ConfigSynonym, ...] = ()


def describe_documented_configs(
    connection: Connection,
    *,
    topic: str | None = None,
    broker: BrokerNode | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> dict[str, DocumentedConfig]:
    """One topic's or one broker's configs with types, documentation and synonyms (DescribeConfigs v4,
    which librdkafka does not ask for). A broker is asked on its own address, as Kafka requires for
    BROKER resources."""
    if (topic is None) == (broker is None):
        raise ValueError("describe a topic or a broker")
    resource_type, name = (
        (_TOPIC_RESOURCE, topic) if topic is not None else (_BROKER_RESOURCE, str(broker.node_id))
    )
    request = DescribeConfigsRequest(
        resources=(
            DescribeConfigsResource(
                resource_type=i8(resource_type), resource_name=name, configuration_keys=None
            ),
        ),
        include_synonyms=True,
        include_documentation=True,
    )
    address = f"{broker.host}:{broker.port}" if broker is not None else None
    with _wire(connection, timeout_seconds, address) as wire:
        response = wire.request(request)
    (result,) = response.results
    _raise_for_code(int(result.error_code), result.error_message, "DescribeConfigs")
    return {
        entry.name: DocumentedConfig(
            value=None if entry.is_sensitive else entry.value,
            source=_source_name(int(entry.config_source)),
            read_only=bool(entry.read_only),
            sensitive=bool(entry.is_sensitive),
            config_type=CONFIG_TYPES.get(int(entry.config_type)),
            documentation=entry.documentation or None,
            synonyms=tuple(
                ConfigSynonym(
                    name=synonym.name,
                    value=None if entry.is_sensitive else synonym.value,
                    source=_source_name(int(synonym.source)),
                )
                for synonym in entry.synonyms
            ),
        )
        for entry in result.configs
    }


# --- shared plumbing for the calls below ----------------------------------------------------------


def _result(future: Future, what: str, timeout_seconds: float) -> Any:
    """The future's value, with librdkafka's failures turned into the typed errors."""
    try:
        return future.result(timeout=timeout_seconds + 1)
    except KafkaException as error:
        _raise_typed(error.args[0] if error.args else None, f"{what} failed")
    except TimeoutError as error:
        raise ClusterUnreachable("_TIMED_OUT", f"{what} got no answer") from error


def _raise_for_code(error_code: int, message: str | None, what: str) -> None:
    if error_code != 0:
        error = KafkaError(error_code)
        _raise_typed(error, message or f"{what} failed")


def _source_name(source: object) -> str:
    """librdkafka reports a config's source as a number; Kafka's names say what it means."""
    try:
        return ConfigSource(source).name
    except ValueError:
        return str(source)


def _config_value(entry: ConfigEntry) -> ConfigValue:
    return ConfigValue(
        value=None if entry.is_sensitive else entry.value,
        source=_source_name(entry.source),
        read_only=bool(entry.is_read_only),
        sensitive=bool(entry.is_sensitive),
    )


def _wire(connection: Connection, timeout_seconds: float, address: str | None = None) -> WireConnection:
    """A protocol connection to `address`, else to the first bootstrap server that answers."""
    candidates = [address] if address else [a.strip() for a in connection.bootstrap_servers.split(",")]
    last_error: KafkaGatewayError | None = None
    for candidate in candidates:
        try:
            return WireConnection(
                candidate,
                security_protocol=connection.security_protocol,
                sasl_mechanism=connection.sasl_mechanism,
                username=connection.username,
                password=connection.password,
                timeout_seconds=timeout_seconds,
            )
        except ClusterUnreachable as error:
            last_error = error
    raise last_error or ClusterUnreachable("_TRANSPORT", "no bootstrap server")


# --- topics ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionInfo:
    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]
    # Replicas on brokers the cluster does not list as alive (Kafka's offline replicas).
    offline_replicas: list[int] = field(default_factory=list)

    @property
    def under_replicated(self) -> bool:
        return len(self.isr) < len(self.replicas)

    @property
    def offline(self) -> bool:
        return self.leader < 0


@dataclass(frozen=True)
class TopicInfo:
    name: str
    internal: bool
    partitions: list[PartitionInfo]

    @property
    def replication_factor(self) -> int:
        return max((len(p.replicas) for p in self.partitions), default=0)


def list_topics(
    connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> dict[str, TopicInfo]:
    """Every topic with its partitions, leaders and replicas (one Metadata request)."""
    admin = _admin(connection, timeout_seconds)
    try:
        metadata = admin.list_topics(timeout=timeout_seconds)
    except KafkaException as error:
        _raise_typed(error.args[0] if error.args else None, "Metadata request failed")
    topics = {}
    alive = set(metadata.brokers)
    for name, topic in metadata.topics.items():
        if topic.error is not None:
            continue
        partitions = [
            PartitionInfo(
                partition=p.id,
                leader=p.leader,
                replicas=list(p.replicas),
                isr=list(p.isrs),
                offline_replicas=[replica for replica in p.replicas if replica not in alive],
            )
            for p in sorted(topic.partitions.values(), key=lambda p: p.id)
        ]
        topics[name] = TopicInfo(name=name, internal=name.startswith("__"), partitions=partitions)
    return topics


def create_topic(
    connection: Connection,
    *,
    name: str,
    partitions: int,
    replication_factor: int,
    configs: Mapping[str, str],
    validate_only: bool = False,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    admin = _admin(connection, timeout_seconds)
    new_topic = NewTopic(
        name, num_partitions=partitions, replication_factor=replication_factor, config=dict(configs)
    )
    futures = admin.create_topics(
        [new_topic], validate_only=validate_only, request_timeout=timeout_seconds, operation_timeout=0
    )
    _result(futures[name], "CreateTopics", timeout_seconds)


def delete_topic(
    connection: Connection, *, name: str, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    admin = _admin(connection, timeout_seconds)
    futures = admin.delete_topics([name], request_timeout=timeout_seconds, operation_timeout=0)
    _result(futures[name], "DeleteTopics", timeout_seconds)


def create_partitions(
    connection: Connection,
    *,
    name: str,
    total: int,
    validate_only: bool = False,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """Grows the topic to `total` partitions (Kafka never shrinks one)."""
    admin = _admin(connection, timeout_seconds)
    futures = admin.create_partitions(
        [NewPartitions(name, total)], validate_only=validate_only, request_timeout=timeout_seconds
    )
    _result(futures[name], "CreatePartitions", timeout_seconds)


def describe_topic_configs(
    connection: Connection, names: Iterable[str], *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> dict[str, dict[str, ConfigValue]]:
    admin = _admin(connection, timeout_seconds)
    resources = {name: ConfigResource(ResourceType.TOPIC, name) for name in names}
    if not resources:
        return {}
    futures = admin.describe_configs(list(resources.values()), request_timeout=timeout_seconds)
    return {
        name: {
            key: _config_value(entry)
            for key, entry in _result(futures[resource], "DescribeConfigs", timeout_seconds).items()
        }
        for name, resource in resources.items()
    }


def alter_topic_configs(
    connection: Connection,
    *,
    name: str,
    set_configs: Mapping[str, str],
    delete_configs: Iterable[str] = (),
    validate_only: bool = False,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """IncrementalAlterConfigs: sets some names and returns others to their defaults, leaving the rest."""
    _alter_configs(
        connection, ResourceType.TOPIC, name, set_configs, delete_configs, validate_only, timeout_seconds
    )


def alter_broker_configs(
    connection: Connection,
    *,
    node_id: int,
    set_configs: Mapping[str, str],
    delete_configs: Iterable[str] = (),
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """IncrementalAlterConfigs of one broker's dynamic configs (DYNAMIC_BROKER_CONFIG)."""
    _alter_configs(
        connection, ResourceType.BROKER, str(node_id), set_configs, delete_configs, False, timeout_seconds
    )


def _alter_configs(
    connection: Connection,
    resource_type: ResourceType,
    name: str,
    set_configs: Mapping[str, str],
    delete_configs: Iterable[str],
    validate_only: bool,
    timeout_seconds: float,
) -> None:
    entries = [
        ConfigEntry(key, str(value), incremental_operation=AlterConfigOpType.SET)
        for key, value in set_configs.items()
    ] + [ConfigEntry(key, None, incremental_operation=AlterConfigOpType.DELETE) for key in delete_configs]
    if not entries:
        return
    admin = _admin(connection, timeout_seconds)
    resource = ConfigResource(resource_type, name, incremental_configs=entries)
    futures = admin.incremental_alter_configs(
        [resource], validate_only=validate_only, request_timeout=timeout_seconds
    )
    _result(futures[resource], "IncrementalAlterConfigs", timeout_seconds)


def list_partition_offsets(
    connection: Connection,
    partitions: Iterable[tuple[str, int]],
    *,
    spec: str = "latest",
    timestamp_ms: int | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> dict[tuple[str, int], int]:
    """Offsets per (topic, partition): `earliest`, `latest`, or the first at or after `timestamp_ms`
    (-1 where no record is that recent)."""
    wanted = list(partitions)
    if not wanted:
        return {}
    if spec == "earliest":
        offset_spec = OffsetSpec.earliest()
    elif spec == "timestamp":
        offset_spec = OffsetSpec.for_timestamp(int(timestamp_ms or 0))
    else:
        offset_spec = OffsetSpec.latest()
    admin = _admin(connection, timeout_seconds)
    futures = admin.list_offsets(
        {TopicPartition(topic, partition): offset_spec for topic, partition in wanted},
        request_timeout=timeout_seconds,
    )
    return {
        (tp.topic, tp.partition): int(_result(future, "ListOffsets", timeout_seconds).offset)
        for tp, future in futures.items()
    }


def delete_records(
    connection: Connection,
    before_offsets: Mapping[tuple[str, int], int],
    *,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> dict[tuple[str, int], int]:
    """DeleteRecords: every record before the given offset goes (-1 means up to the end); returns the
    new log-start offsets."""
    if not before_offsets:
        return {}
    admin = _admin(connection, timeout_seconds)
    futures = admin.delete_records(
        [TopicPartition(topic, partition, offset) for (topic, partition), offset in before_offsets.items()],
        request_timeout=timeout_seconds,
        operation_timeout=timeout_seconds,
    )
    return {
        (tp.topic, tp.partition): int(_result(future, "DeleteRecords", timeout_seconds).low_watermark)
        for tp, future in futures.items()
    }


def describe_partition_sizes(
    connection: Connection,
    *,
    partitions: Mapping[str, list[int]] | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> dict[tuple[str, int], int]:
    """Bytes on disk per (topic, partition) — of the given partitions, or of all — summed over every
    broker (DescribeLogDirs, which librdkafka lacks). Replicas count once each, so a replicated partition
    shows its total footprint."""
    sizes: dict[tuple[str, int], int] = {}
    for (topic, partition, _node_id), size in describe_replica_sizes(
        connection, partitions=partitions, timeout_seconds=timeout_seconds
    ).items():
        sizes[(topic, partition)] = sizes.get((topic, partition), 0) + size
    return sizes


def describe_replica_sizes(
    connection: Connection,
    *,
    partitions: Mapping[str, list[int]] | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> dict[tuple[str, int, int], int]:
    """Bytes on disk per (topic, partition, broker id): each broker's own replicas (DescribeLogDirs asked
    of every broker the cluster lists)."""
    description = describe_cluster(connection, timeout_seconds=timeout_seconds)
    wanted = None
    if partitions is not None:
        wanted = tuple(
            DescribableLogDirTopic(topic=topic, partitions=tuple(i32(p) for p in numbers))
            for topic, numbers in partitions.items()
        )
    sizes: dict[tuple[str, int, int], int] = {}
    for node in description.brokers:
        with _wire(connection, timeout_seconds, f"{node.host}:{node.port}") as wire:
            response = wire.request(DescribeLogDirsRequest(topics=wanted))
        for result in response.results:
            for topic in result.topics:
                for partition in topic.partitions:
                    key = (topic.name, int(partition.partition_index), node.node_id)
                    sizes[key] = sizes.get(key, 0) + int(partition.partition_size)
    return sizes


@dataclass(frozen=True)
class LogDir:
    """One log directory of a broker: its volume's size and free space (-1: the broker does not say), the
    bytes of each replica it holds, and Kafka's error for a directory it cannot use."""

    path: str
    error: str | None
    total_bytes: int
    usable_bytes: int
    replica_bytes: dict[tuple[str, int], int]

    @property
    def size_bytes(self) -> int:
        return sum(self.replica_bytes.values())


def describe_log_dirs(
    connection: Connection, broker: BrokerNode, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> list[LogDir]:
    """The broker's log directories with every replica's size (DescribeLogDirs v4, asked of that broker)."""
    with _wire(connection, timeout_seconds, f"{broker.host}:{broker.port}") as wire:
        response = wire.request(DescribeLogDirsRequestV4(topics=None))
    _raise_for_code(int(response.error_code), None, "DescribeLogDirs")
    return [
        LogDir(
            path=result.log_dir,
            error=None if int(result.error_code) == 0 else KafkaError(int(result.error_code)).name(),
            total_bytes=int(result.total_bytes),
            usable_bytes=int(result.usable_bytes),
            replica_bytes={
                (topic.name, int(partition.partition_index)): int(partition.partition_size)
                for topic in result.topics
                for partition in topic.partitions
            },
        )
        for result in response.results
    ]


# --- reassignments and brokers (protocol client: librdkafka 2.16 has no calls for them) ------------


@dataclass(frozen=True)
class OngoingReassignment:
    """A partition whose replica set is changing: `replicas` is the full set while it moves (target plus
    the replicas still to be removed)."""

    topic: str
    partition: int
    replicas: list[int]
    adding: list[int]
    removing: list[int]

    @property
    def target(self) -> list[int]:
        return [replica for replica in self.replicas if replica not in self.removing]


def alter_partition_reassignments(
    connection: Connection,
    targets: Mapping[tuple[str, int], list[int] | None],
    *,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """AlterPartitionReassignments: moves each partition to its target replicas (the first leads when
    preferred); None cancels the partition's ongoing reassignment."""
    if not targets:
        return
    by_topic: dict[str, list[alter_reassignments.ReassignablePartition]] = {}
    for (topic, partition), replicas in targets.items():
        by_topic.setdefault(topic, []).append(
            alter_reassignments.ReassignablePartition(
                partition_index=i32(partition),
                replicas=None if replicas is None else tuple(i32(r) for r in replicas),
            )
        )
    request = alter_reassignments.AlterPartitionReassignmentsRequest(
        timeout=i32Timedelta.parse(timedelta(seconds=timeout_seconds)),
        topics=tuple(
            alter_reassignments.ReassignableTopic(name=topic, partitions=tuple(partitions))
            for topic, partitions in by_topic.items()
        ),
    )
    with _wire(connection, timeout_seconds) as wire:
        response = wire.request(request)
    _raise_for_code(int(response.error_code), response.error_message, "AlterPartitionReassignments")
    for topic_result in response.responses:
        for partition in topic_result.partitions:
            _raise_for_code(
                int(partition.error_code),
                partition.error_message
                and f"{topic_result.name}-{partition.partition_index}: {partition.error_message}",
                "AlterPartitionReassignments",
            )


def list_partition_reassignments(
    connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> list[OngoingReassignment]:
    """Every ongoing reassignment of the cluster (ListPartitionReassignments)."""
    request = list_reassignments.ListPartitionReassignmentsRequest(
        timeout=i32Timedelta.parse(timedelta(seconds=timeout_seconds)), topics=None
    )
    with _wire(connection, timeout_seconds) as wire:
        response = wire.request(request)
    _raise_for_code(int(response.error_code), response.error_message, "ListPartitionReassignments")
    return sorted(
        (
            OngoingReassignment(
                topic=topic.name,
                partition=int(partition.partition_index),
                replicas=[int(r) for r in partition.replicas],
                adding=[int(r) for r in partition.adding_replicas],
                removing=[int(r) for r in partition.removing_replicas],
            )
            for topic in response.topics
            for partition in topic.partitions
        ),
        key=lambda ongoing: (ongoing.topic, ongoing.partition),
    )


def unregister_broker(
    connection: Connection, *, node_id: int, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    """UnregisterBroker: the controller forgets a broker that was shut down for good."""
    with _wire(connection, timeout_seconds) as wire:
        response = wire.request(UnregisterBrokerRequest(broker_id=i32(node_id)))
    _raise_for_code(int(response.error_code), response.error_message, "UnregisterBroker")


# --- messages (reading them: reader.py) -------------------------------------------------------


@dataclass(frozen=True)
class ProducedMessage:
    partition: int
    offset: int
    timestamp_ms: int


def produce_message(
    connection: Connection,
    *,
    topic: str,
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes]],
    partition: int | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> ProducedMessage:
    producer = Producer(
        {**connection.client_config(timeout_seconds), "message.timeout.ms": int(timeout_seconds * 1000)},
        logger=_librdkafka_log,
    )
    outcome: dict[str, Any] = {}

    def delivered(error: KafkaError | None, message: Any) -> None:
        outcome["error"], outcome["message"] = error, message

    extra = {"partition": partition} if partition is not None else {}
    producer.produce(topic, value=value, key=key, headers=headers, on_delivery=delivered, **extra)
    producer.flush(timeout_seconds + 1)
    if "message" not in outcome:
        raise ClusterUnreachable("_TIMED_OUT", "the message was not acknowledged in time")
    if outcome["error"] is not None:
        _raise_typed(outcome["error"], "Produce failed")
    message = outcome["message"]
    return ProducedMessage(
        partition=message.partition(), offset=message.offset(), timestamp_ms=message.timestamp()[1]
    )


# --- ACLs -----------------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Acl:
    """One binding in Kafka's model; enum fields hold Kafka's names (TOPIC, PREFIXED, READ, ALLOW)."""

    resource_type: str
    resource_name: str
    pattern_type: str
    principal: str
    host: str
    operation: str
    permission: str

    def binding(self) -> AclBinding:
        return AclBinding(
            ResourceType[self.resource_type],
            self.resource_name,
            ResourcePatternType[self.pattern_type],
            self.principal,
            self.host,
            AclOperation[self.operation],
            AclPermissionType[self.permission],
        )

    @classmethod
    def of(cls, binding: AclBinding) -> Acl:
        return cls(
            resource_type=binding.restype.name,
            resource_name=binding.name,
            pattern_type=binding.resource_pattern_type.name,
            principal=binding.principal,
            host=binding.host,
            operation=binding.operation.name,
            permission=binding.permission_type.name,
        )


def describe_acls(connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS) -> list[Acl]:
    """Every ACL binding on the cluster."""
    admin = _admin(connection, timeout_seconds)
    match_all = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    future = admin.describe_acls(match_all, request_timeout=timeout_seconds)
    return sorted(Acl.of(binding) for binding in _result(future, "DescribeAcls", timeout_seconds))


def create_acls(
    connection: Connection, acls: Iterable[Acl], *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    bindings = [acl.binding() for acl in acls]
    if not bindings:
        return
    admin = _admin(connection, timeout_seconds)
    for future in admin.create_acls(bindings, request_timeout=timeout_seconds).values():
        _result(future, "CreateAcls", timeout_seconds)


def delete_acls(
    connection: Connection, acls: Iterable[Acl], *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    """Deletes exactly these bindings (each filter matches one binding)."""
    filters = [
        AclBindingFilter(
            b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation, b.permission_type
        )
        for b in (acl.binding() for acl in acls)
    ]
    if not filters:
        return
    admin = _admin(connection, timeout_seconds)
    for future in admin.delete_acls(filters, request_timeout=timeout_seconds).values():
        _result(future, "DeleteAcls", timeout_seconds)


# --- SCRAM credentials ----------------------------------------------------------------------------

SCRAM_MECHANISMS = {
    "SCRAM-SHA-256": ScramMechanism.SCRAM_SHA_256,
    "SCRAM-SHA-512": ScramMechanism.SCRAM_SHA_512,
}


def upsert_scram_credential(
    connection: Connection,
    *,
    user: str,
    mechanism: str,
    password: str,
    salt: bytes,
    iterations: int = 8192,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    upsertion = UserScramCredentialUpsertion(
        user, ScramCredentialInfo(SCRAM_MECHANISMS[mechanism], iterations), password.encode(), salt
    )
    admin = _admin(connection, timeout_seconds)
    for future in admin.alter_user_scram_credentials([upsertion], request_timeout=timeout_seconds).values():
        _result(future, "AlterUserScramCredentials", timeout_seconds)


def delete_scram_credential(
    connection: Connection, *, user: str, mechanism: str, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    deletion = UserScramCredentialDeletion(user, SCRAM_MECHANISMS[mechanism])
    admin = _admin(connection, timeout_seconds)
    for future in admin.alter_user_scram_credentials([deletion], request_timeout=timeout_seconds).values():
        _result(future, "AlterUserScramCredentials", timeout_seconds)


# --- client quotas (protocol client: librdkafka has no call for them) -----------------------------

QUOTA_ENTITY_TYPES = ("user", "client-id")


@dataclass(frozen=True)
class QuotaEntry:
    """A quota entity ({"user": "app"}, {"user": None} for the default user, ...) and its values."""

    entity: dict[str, str | None]
    values: dict[str, float]


def describe_client_quotas(
    connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> list[QuotaEntry]:
    """Every user / client-id quota on the cluster (non-strict match of any user, then any client id)."""
    entries: dict[tuple, QuotaEntry] = {}
    with _wire(connection, timeout_seconds) as wire:
        for entity_type in QUOTA_ENTITY_TYPES:
            request = describe_quotas.DescribeClientQuotasRequest(
                components=(
                    describe_quotas.ComponentData(entity_type=entity_type, match_type=i8(2), match=None),
                ),
                strict=False,
            )
            response = wire.request(request)
            _raise_for_code(int(response.error_code), response.error_message, "DescribeClientQuotas")
            for entry in response.entries or ():
                entity = {e.entity_type: e.entity_name for e in entry.entity}
                if set(entity) - set(QUOTA_ENTITY_TYPES):
                    continue
                key = tuple(sorted(entity.items(), key=lambda item: item[0]))
                entries[key] = QuotaEntry(entity=entity, values={v.key: float(v.value) for v in entry.values})
    return list(entries.values())


def alter_client_quota(
    connection: Connection,
    *,
    entity: Mapping[str, str | None],
    set_values: Mapping[str, float],
    remove_keys: Iterable[str] = (),
    validate_only: bool = False,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    ops = [
        alter_quotas.OpData(key=key, value=f64(float(value)), remove=False)
        for key, value in set_values.items()
    ]
    ops += [alter_quotas.OpData(key=key, value=f64(0.0), remove=True) for key in remove_keys]
    request = alter_quotas.AlterClientQuotasRequest(
        entries=(
            alter_quotas.EntryData(
                entity=tuple(
                    alter_quotas.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()
                ),
                ops=tuple(ops),
            ),
        ),
        validate_only=validate_only,
    )
    with _wire(connection, timeout_seconds) as wire:
        response = wire.request(request)
    for entry in response.entries:
        _raise_for_code(int(entry.error_code), entry.error_message, "AlterClientQuotas")


# --- consumer groups ------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupMember:
    member_id: str
    client_id: str
    host: str
    assignments: list[tuple[str, int]]


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    state: str
    protocol: str
    members: list[GroupMember]


def list_groups(
    connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> dict[str, str]:
    """Every consumer group id with its state."""
    admin = _admin(connection, timeout_seconds)
    result = _result(
        admin.list_consumer_groups(request_timeout=timeout_seconds), "ListGroups", timeout_seconds
    )
    return {listing.group_id: listing.state.name for listing in result.valid}


def describe_groups(
    connection: Connection, group_ids: Iterable[str], *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> dict[str, GroupDescription]:
    ids = list(group_ids)
    if not ids:
        return {}
    admin = _admin(connection, timeout_seconds)
    futures = admin.describe_consumer_groups(ids, request_timeout=timeout_seconds)
    described = {}
    for group_id, future in futures.items():
        group = _result(future, "DescribeGroups", timeout_seconds)
        members = [
            GroupMember(
                member_id=member.member_id,
                client_id=member.client_id,
                host=member.host,
                assignments=sorted(
                    (tp.topic, tp.partition)
                    for tp in (member.assignment.topic_partitions if member.assignment else [])
                ),
            )
            for member in group.members
        ]
        described[group_id] = GroupDescription(
            group_id=group_id,
            state=group.state.name,
            protocol=group.partition_assignor or "",
            members=members,
        )
    return described


def list_group_offsets(
    connection: Connection, group_ids: Iterable[str], *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> dict[str, dict[tuple[str, int], int]]:
    """Committed offsets of each group (librdkafka asks one group per request, so they go out together)."""
    ids = list(group_ids)
    if not ids:
        return {}
    admin = _admin(connection, timeout_seconds)
    futures = {
        group_id: admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group_id)], request_timeout=timeout_seconds
        )[group_id]
        for group_id in ids
    }
    offsets = {}
    for group_id, future in futures.items():
        result = _result(future, "OffsetFetch", timeout_seconds)
        offsets[group_id] = {
            (tp.topic, tp.partition): int(tp.offset) for tp in result.topic_partitions if tp.offset >= 0
        }
    return offsets


def alter_group_offsets(
    connection: Connection,
    *,
    group_id: str,
    offsets: Mapping[tuple[str, int], int],
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """Commits the given offsets for the group (the cluster refuses while the group has members)."""
    admin = _admin(connection, timeout_seconds)
    request = ConsumerGroupTopicPartitions(
        group_id, [TopicPartition(topic, partition, offset) for (topic, partition), offset in offsets.items()]
    )
    future = admin.alter_consumer_group_offsets([request], request_timeout=timeout_seconds)[group_id]
    result = _result(future, "OffsetCommit", timeout_seconds)
    for tp in result.topic_partitions:
        if tp.error is not None:
            _raise_typed(tp.error, "OffsetCommit failed")


def delete_group(
    connection: Connection, *, group_id: str, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    admin = _admin(connection, timeout_seconds)
    future = admin.delete_consumer_groups([group_id], request_timeout=timeout_seconds)[group_id]
    _result(future, "DeleteGroups", timeout_seconds)


def delete_group_offsets(
    connection: Connection,
    *,
    group_id: str,
    topic: str,
    partitions: Iterable[int],
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """OffsetDelete (librdkafka lacks it) at the group's coordinator."""
    with _wire(connection, timeout_seconds) as wire:
        coordinator = wire.request(FindCoordinatorRequest(key=group_id, key_type=i8(0)))
    _raise_for_code(int(coordinator.error_code), coordinator.error_message, "FindCoordinator")
    request = offset_delete.OffsetDeleteRequest(
        group_id=group_id,
        topics=(
            offset_delete.OffsetDeleteRequestTopic(
                name=topic,
                partitions=tuple(
                    offset_delete.OffsetDeleteRequestPartition(partition_index=i32(p)) for p in partitions
                ),
            ),
        ),
    )
    with _wire(connection, timeout_seconds, f"{coordinator.host}:{coordinator.port}") as wire:
        response = wire.request(request)
    _raise_for_code(int(response.error_code), None, "OffsetDelete")
    for topic_result in response.topics:
        for partition in topic_result.partitions:
            _raise_for_code(int(partition.error_code), None, "OffsetDelete")


def decode_text(data: bytes | None) -> tuple[str | None, str]:
    """(text, encoding): UTF-8 text when the bytes are valid UTF-8, base64 otherwise."""
    if data is None:
        return None, "null"
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return base64.b64encode(data).decode("ascii"), "base64"


# --- cluster health (alert rules on brokers, partitions and disks) ----------------------------------


@dataclass(frozen=True)
class ClusterHealthReport:
    """What the cluster says about its own health in one look: listed (unfenced) brokers, the controller,
    partition replication against each topic's `min.insync.replicas`, and each broker's fullest log-dir
    volume (DescribeLogDirs v4; None when the broker did not say or could not be asked)."""

    controller_id: int
    broker_ids: frozenset[int]
    partition_count: int
    under_replicated_partitions: int
    offline_partitions: int
    under_min_isr_partitions: int
    disk_used_percent: dict[int, float | None]


def _volume_used_percent(wire: WireConnection) -> float | None:
    # No topics asked: the answer carries only each log dir's volume sizes, not every partition's size.
    response = wire.request(DescribeLogDirsRequestV4(topics=()))
    used = [
        100.0 * (int(result.total_bytes) - int(result.usable_bytes)) / int(result.total_bytes)
        for result in response.results
        if result.error_code == 0 and int(result.total_bytes) > 0 and int(result.usable_bytes) >= 0
    ]
    return max(used) if used else None


def describe_cluster_health(
    connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> ClusterHealthReport:
    """One Metadata request, one DescribeConfigs over the topics (their effective min.insync.replicas) and
    one DescribeLogDirs per listed broker. Raises ClusterUnreachable (and the other gateway errors) when the
    cluster cannot be asked at all; a single broker that cannot be asked for its disks reads as unknown."""
    admin = _admin(connection, timeout_seconds)
    try:
        metadata = admin.list_topics(timeout=timeout_seconds)
    except KafkaException as error:
        _raise_typed(error.args[0] if error.args else None, "Metadata request failed")
    topics = {name: topic for name, topic in metadata.topics.items() if topic.error is None}
    min_isr: dict[str, int] = {}
    if topics:
        configs = describe_topic_configs(connection, topics, timeout_seconds=timeout_seconds)
        for name, entries in configs.items():
            value = entries.get("min.insync.replicas")
            min_isr[name] = int(value.value) if value is not None and value.value else 1
    partitions = [(name, p) for name, topic in topics.items() for p in topic.partitions.values()]
    disks: dict[int, float | None] = {}
    for broker in metadata.brokers.values():
        try:
            with _wire(connection, timeout_seconds, f"{broker.host}:{broker.port}") as wire:
                disks[broker.id] = _volume_used_percent(wire)
        except KafkaGatewayError:
            disks[broker.id] = None
    return ClusterHealthReport(
        controller_id=metadata.controller_id,
        broker_ids=frozenset(metadata.brokers),
        partition_count=len(partitions),
        under_replicated_partitions=sum(1 for _, p in partitions if len(p.isrs) < len(p.replicas)),
        offline_partitions=sum(1 for _, p in partitions if p.leader < 0),
        under_min_isr_partitions=sum(
            1 for name, p in partitions if p.leader >= 0 and len(p.isrs) < min_isr.get(name, 1)
        ),
        disk_used_percent=disks,
    )
