"""Configs as the API shows them to an editor: the cluster's answer (value, source, type, documentation,
the value a reset returns to) plus the catalog's choices and units and, for a team's topic, its policy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controlplane.kafka import configs as kafka_configs
from controlplane.kafka.cluster import describe_cluster
from controlplane.kafka.config_catalog import config_kind
from controlplane.kafka.connection import Connection
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.tenancy.policy import ConfigRule

TOPIC_OVERRIDE = "DYNAMIC_TOPIC_CONFIG"
_MS_PER_UNIT = {".hours": 3_600_000, ".minutes": 60_000, ".ms": 1}
# Topic configs whose broker default Kafka derives from a chain of broker settings, most specific first
# (its DynamicBrokerConfig.brokerConfigSynonyms): the first one set gives the default, in its own unit. An
# unset log.retention.ms is no synonym in DescribeConfigs, so a topic's override of retention.ms names no
# default to return to although the broker has one (log.retention.hours=168 unless set otherwise).
BROKER_DEFAULT_CHAINS = {
    "retention.ms": ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    "segment.ms": ("log.roll.ms", "log.roll.hours"),
    "segment.jitter.ms": ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    "flush.ms": ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
}


def _in_unit_of(name: str, synonym: kafka_configs.ConfigSynonym) -> str | None:
    """A synonym's value in `name`'s unit: Kafka's default retention is log.retention.hours=168, which a
    retention.ms editor shows as 604800000 ms."""
    if synonym.value is None or not name.endswith(".ms"):
        return synonym.value
    factor = next((f for suffix, f in _MS_PER_UNIT.items() if synonym.name.endswith(suffix)), 1)
    try:
        number = int(synonym.value)
    except ValueError:
        return synonym.value
    return str(number * factor) if number >= 0 else synonym.value


def _fallback(name: str, entry: kafka_configs.ConfigValue) -> dict[str, Any] | None:
    """What the config returns to when its override is removed: the next synonym after the override."""
    if entry.source != TOPIC_OVERRIDE and entry.source not in ("DYNAMIC_BROKER_CONFIG",):
        return {"name": name, "value": entry.value, "source": entry.source}
    synonyms = getattr(entry, "synonyms", ())
    for synonym in synonyms:
        if synonym.source != entry.source:
            return {"name": synonym.name, "value": _in_unit_of(name, synonym), "source": synonym.source}
    return None


def derived_broker_defaults(
    topic_configs: Mapping[str, kafka_configs.ConfigValue],
    broker_configs: Mapping[str, kafka_configs.ConfigValue],
) -> dict[str, dict[str, Any]]:
    """For each topic override in BROKER_DEFAULT_CHAINS that names no default, the broker's effective one:
    the first setting of the chain that has a value, in the topic config's unit, as Kafka computes it."""
    derived = {}
    for name, chain in BROKER_DEFAULT_CHAINS.items():
        entry = topic_configs.get(name)
        if entry is None or _fallback(name, entry) is not None:
            continue
        for setting in chain:
            broker_entry = broker_configs.get(setting)
            if broker_entry is not None and broker_entry.value is not None:
                synonym = kafka_configs.ConfigSynonym(setting, broker_entry.value, broker_entry.source)
                derived[name] = {
                    "name": setting,
                    "value": _in_unit_of(name, synonym),
                    "source": synonym.source,
                }
                break
    return derived


def config_entry(
    name: str,
    entry: kafka_configs.ConfigValue,
    rule: ConfigRule | None = None,
    broker_default: dict[str, Any] | None = None,
) -> dict[str, Any]:
    config_type = getattr(entry, "config_type", None)
    return {
        "value": entry.value,
        "source": entry.source,
        "read_only": entry.read_only,
        "sensitive": entry.sensitive,
        "type": config_type,
        "documentation": getattr(entry, "documentation", None),
        "default": _fallback(name, entry) or broker_default,
        **config_kind(name, config_type).as_dict(),
        "rule": (rule or ConfigRule(allowed=True)).as_dict(),
    }


def config_entries(
    configs: Mapping[str, kafka_configs.ConfigValue],
    rules: Mapping[str, ConfigRule] | None = None,
    broker_defaults: Mapping[str, dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    return {
        name: config_entry(name, value, (rules or {}).get(name), (broker_defaults or {}).get(name))
        for name, value in sorted(configs.items())
    }


def describe_broker_defaults(
    connection: Connection, topic_configs: Mapping[str, kafka_configs.ConfigValue]
) -> dict[str, dict[str, Any]]:
    """derived_broker_defaults from one broker's configs, asked only when an override needs them (brokers of
    one cluster are configured alike; Kafka requires a BROKER resource to be asked on that broker)."""
    needed = any(
        name in topic_configs and _fallback(name, topic_configs[name]) is None
        for name in BROKER_DEFAULT_CHAINS
    )
    brokers = describe_cluster(connection).brokers if needed else []
    if not brokers:
        return {}
    broker_configs = kafka_configs.describe_documented_configs(connection, broker=brokers[0])
    return derived_broker_defaults(topic_configs, broker_configs)


def describe_topic_configs(connection: Connection, topic: str) -> Mapping[str, kafka_configs.ConfigValue]:
    """The topic's configs with documentation; from a cluster that cannot answer DescribeConfigs v4 (a
    Kafka older than 2.8 closes the connection), the plain librdkafka answer without types."""
    try:
        return kafka_configs.describe_documented_configs(connection, topic=topic)
    except KafkaGatewayError as error:
        if error.error_name not in ("_TRANSPORT", "_BAD_MSG"):
            raise
        return kafka_configs.describe_topic_configs(connection, [topic])[topic]
