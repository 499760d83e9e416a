"""Topic and broker configs: described (with documentation and synonyms where asked) and altered."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource, ResourceType
from kio.schema.describe_configs.v4.request import DescribeConfigsRequest, DescribeConfigsResource
from kio.static.primitive import i8

from controlplane.kafka.cluster import BrokerNode
from controlplane.kafka.connection import (
    DEFAULT_TIMEOUT_SECONDS,
    Connection,
    admin_client,
    await_result,
    protocol_connection,
    raise_for_code,
)


@dataclass(frozen=True)
class ConfigValue:
    value: str | None
    source: str
    read_only: bool
    sensitive: bool


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
    with protocol_connection(connection, timeout_seconds, address) as wire:
        response = wire.request(request)
    (result,) = response.results
    raise_for_code(int(result.error_code), result.error_message, "DescribeConfigs")
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


def describe_topic_configs(
    connection: Connection, names: Iterable[str], *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> dict[str, dict[str, ConfigValue]]:
    admin = admin_client(connection, timeout_seconds)
    resources = {name: ConfigResource(ResourceType.TOPIC, name) for name in names}
    if not resources:
        return {}
    futures = admin.describe_configs(list(resources.values()), request_timeout=timeout_seconds)
    return {
        name: {
            key: _config_value(entry)
            for key, entry in await_result(futures[resource], "DescribeConfigs", timeout_seconds).items()
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
    admin = admin_client(connection, timeout_seconds)
    resource = ConfigResource(resource_type, name, incremental_configs=entries)
    futures = admin.incremental_alter_configs(
        [resource], validate_only=validate_only, request_timeout=timeout_seconds
    )
    await_result(futures[resource], "IncrementalAlterConfigs", timeout_seconds)
