"""Dynamic broker configs: the values AlterConfigs / IncrementalAlterConfigs set on a running broker.

Kafka keeps three layers over the properties file, the highest set one wins: the config set on this
broker id (DYNAMIC_BROKER_CONFIG), the cluster-wide default set on the broker resource "" (DYNAMIC_DEFAULT_
BROKER_CONFIG), then the file (STATIC_BROKER_CONFIG) and Kafka's default (DEFAULT_CONFIG).

`DynamicBrokerConfig` writes the effective value into the broker's one `BrokerConfig.values` (so that every
reader of `config.get_int(...)` sees it at once) and tells its subscribers which names changed, so that the
parts holding a derived copy (the default topic log config, connection limits) rebuild it. The layers are
kept in the metadata log (the broker's applier sets them from the image).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Iterator, Mapping

from broker.config import (
    BROKER_DEFAULTS,
    SENSITIVE_BROKER_CONFIGS,
    TOPIC_CONFIG_BROKER_SYNONYMS,
    BrokerConfig,
    ConfigError,
    parse_property_value,
)
from broker.runtime.kafka_config_defs import (
    ALL_DYNAMIC_DEFS,
    ConfigDef,
    ConfigValueError,
    check_reconfiguration,
    check_scope,
    parse_kafka_value,
)

log = logging.getLogger(__name__)

LONG_MAX = 9223372036854775807

# The broker properties Kafka lets AlterConfigs change at runtime (broker/runtime/kafka_config_defs.py); every
# other name in BROKER_DEFAULTS is read-only (Kafka: "Cannot update these configs dynamically").
# Kafka's DynamicLogConfig: the first broker synonym of every topic config (log.retention.ms, log.roll.ms, …);
# the .minutes/.hours forms stay read-only there, and so here.
LOG_DEFAULT_CONFIGS = frozenset(TOPIC_CONFIG_BROKER_SYNONYMS.values())
CONNECTION_CONFIGS = frozenset(
    {"max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides"}
)

# Dynamic in Kafka, not in BROKER_DEFAULTS: kept as text in `BrokerConfig.extra`. The cleaner's read where
# they are used (broker/server/app.py); the replication throttles by the ReplicaManager; the
# rest belong to subsystems this broker does not have (Kerberos, JVM thread pools, tiered storage, JMX):
# Kafka accepts them on any broker and so do we (librdkafka's admin test 0081 sets some); they are stored and
# described, and change nothing here (README, "Dynamic broker configs").
EXTRA_DYNAMIC_CONFIGS: dict[str, ConfigDef] = {
    name: definition for name, definition in ALL_DYNAMIC_DEFS.items() if name not in BROKER_DEFAULTS
}

DYNAMIC_CONFIGS = frozenset(ALL_DYNAMIC_DEFS)

# Dynamic in Kafka, which re-binds its listeners and re-creates its authenticators live; this broker reads
# them when it starts only: they are described and checked as Kafka does, and a change is refused with a
# clear reason rather than stored and silently not applied.
RESTART_ONLY_CONFIGS = frozenset(
    {
        "listeners",
        "listener.security.protocol.map",
        "sasl.enabled.mechanisms",
        "sasl.jaas.config",
        "sasl.mechanism.inter.broker.protocol",
        "ssl.client.auth",
        "ssl.endpoint.identification.algorithm",
    }
)

# Never reported by DescribeConfigs (Kafka marks them is_sensitive and sends a null value).
SENSITIVE_CONFIGS = SENSITIVE_BROKER_CONFIGS | frozenset(
    name for name, definition in ALL_DYNAMIC_DEFS.items() if definition.kind == "PASSWORD"
)

# Broker configs whose value is a comma-separated list (Kafka's type LIST): APPEND / SUBTRACT apply.
BROKER_LIST_CONFIGS = frozenset(
    {"log.cleanup.policy", *(name for name, (kind, _default) in BROKER_DEFAULTS.items() if kind is list)}
)

# Group configs (resource type GROUP, KIP-848): name -> (Kafka's default, minimum, maximum); the bounds are
# Kafka's defaults of group.consumer.{min,max}.{session.timeout,heartbeat.interval}.ms.
GROUP_CONFIGS: dict[str, tuple[int, int, int]] = {
    "consumer.session.timeout.ms": (45000, 45000, 60000),
    "consumer.heartbeat.interval.ms": (5000, 5000, 15000),
    # Share groups (KIP-932): bounds are Kafka's group.share.{min,max}.* defaults; the lock duration's are the
    # broker's group.share.{min,max}.record.lock.duration.ms (checked where the broker config is known).
    "share.record.lock.duration.ms": (30000, 0, 2**31 - 1),
    "share.heartbeat.interval.ms": (5000, 5000, 15000),
    "share.session.timeout.ms": (45000, 45000, 60000),
}

# Group configs whose value is a string: name -> Kafka's default.
GROUP_STRING_CONFIGS: dict[str, str] = {
    "share.auto.offset.reset": "latest",
    "share.isolation.level": "read_uncommitted",
}
_ISOLATION_LEVELS = ("read_committed", "read_uncommitted")
_BY_DURATION = re.compile(r"by_duration:P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?")

# DescribeConfigs' ConfigSource values (Kafka's numbering).
DYNAMIC_BROKER_CONFIG = 2
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5

CLUSTER_DEFAULT = ""
_DEFAULT_VALUES = {name: default for name, (_kind, default) in BROKER_DEFAULTS.items()}


class DynamicConfigError(ValueError):
    """A change Kafka refuses; `invalid_request` says INVALID_REQUEST (Kafka 4.2's answer to every bad
    broker config value), else INVALID_CONFIG."""

    def __init__(self, message: str, *, invalid_request: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.invalid_request = invalid_request


def check_group_configs(configs: Mapping[str, str]) -> None:
    """Refuse an unknown group config or a value out of Kafka's bounds (DynamicConfigError)."""
    for name, raw in configs.items():
        if name in GROUP_STRING_CONFIGS:
            _check_group_string_config(name, raw)
            continue
        if name not in GROUP_CONFIGS:
            raise DynamicConfigError(f"Unknown group config name: {name}")
        _default, minimum, maximum = GROUP_CONFIGS[name]
        try:
            value = int(raw.strip())
        except ValueError:
            raise DynamicConfigError(
                f"Invalid value {raw} for configuration {name}: Not a number of type INT"
            ) from None
        if not minimum <= value <= maximum:
            raise DynamicConfigError(
                f"Invalid value {raw} for configuration {name}: must be between {minimum} and {maximum}"
            )


def _check_group_string_config(name: str, raw: str) -> None:
    value = raw.strip()
    if name == "share.isolation.level" and value not in _ISOLATION_LEVELS:
        raise DynamicConfigError(
            f"Invalid value {raw} for configuration {name}: String must be one of: {', '.join(_ISOLATION_LEVELS)}"
        )
    if (
        name == "share.auto.offset.reset"
        and value not in ("earliest", "latest")
        and not _BY_DURATION.fullmatch(value)
    ):
        raise DynamicConfigError(
            f"Invalid value {raw} for configuration {name}: Invalid value `{raw}` for configuration {name}. "
            "The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."
        )


def kind_of(name: str) -> type:
    return BROKER_DEFAULTS[name][0] if name in BROKER_DEFAULTS else str


_DEFAULT_EXTRA = {
    name: definition.default
    for name, definition in EXTRA_DYNAMIC_CONFIGS.items()
    if definition.default is not None
}


class DynamicBrokerConfig:
    """The dynamic layers of one broker over its static `BrokerConfig`."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.broker_id = str(config.node_id)
        self._static_values = dict(config.values)
        self._static_extra = dict(config.extra)
        self.layers: dict[str, dict[str, str]] = {CLUSTER_DEFAULT: {}, self.broker_id: {}}
        self._subscribers: list[Callable[[frozenset[str]], None]] = []

    def subscribe(self, callback: Callable[[frozenset[str]], None]) -> None:
        """`callback(names)` after a change of the effective value of `names`."""
        self._subscribers.append(callback)

    def layer(self, resource_name: str) -> dict[str, str]:
        return dict(self.layers.get(resource_name, {}))

    # --- checks --------------------------------------------------------------------------------

    def check(self, changes: Mapping[str, str | None], resource_name: str | None = None) -> BrokerConfig:
        """Refuse what Kafka refuses, in Kafka's order and words; returns the config as it would be with
        `changes` on this broker (for further checks by the caller, e.g. the topic log defaults it implies).
        `resource_name`: the broker id or "" (the cluster default) the change is for."""
        read_only = sorted(n for n in changes if n in BROKER_DEFAULTS and n not in DYNAMIC_CONFIGS)
        if read_only:
            # Kafka's wording (a Scala Set): "Cannot update these configs dynamically: Set(num.partitions)".
            raise DynamicConfigError(
                f"Cannot update these configs dynamically: Set({', '.join(read_only)})", invalid_request=True
            )
        unknown = sorted(n for n in changes if n not in DYNAMIC_CONFIGS)
        if unknown:
            raise DynamicConfigError(f"Unknown broker config: {', '.join(unknown)}")
        typed: dict[str, object] = {}
        try:
            for name, raw in changes.items():
                if raw is not None:
                    typed[name] = parse_kafka_value(name, ALL_DYNAMIC_DEFS[name], raw)
            check_scope(self.broker_id if resource_name is None else resource_name, sorted(changes))
            check_reconfiguration(typed, _CurrentValues(self))
        except ConfigValueError as exc:
            raise DynamicConfigError(str(exc), invalid_request=True) from None
        restart_only = sorted(n for n in changes if n in RESTART_ONLY_CONFIGS)
        if restart_only:
            raise DynamicConfigError(
                f"This broker applies these configs when it starts, not while it runs: Set({', '.join(restart_only)})"
                " (set them in its properties and restart it)",
                invalid_request=True,
            )
        values = dict(self.config.values)
        extra = dict(self.config.extra)
        for name, raw in changes.items():
            if raw is None:
                continue
            if name in EXTRA_DYNAMIC_CONFIGS:
                extra[name] = raw.strip()
                continue
            try:
                values[name] = parse_property_value(name, kind_of(name), raw)
            except ConfigError as exc:
                raise DynamicConfigError(
                    f"Invalid value {raw} for configuration {name}: {exc}", invalid_request=True
                ) from None
        candidate = dataclasses.replace(self.config, values=values, extra=extra)
        try:
            candidate.validate_values()
        except ConfigError as exc:
            names = ", ".join(sorted(changes))
            raise DynamicConfigError(
                f"Invalid value for configuration {names}: {exc}", invalid_request=True
            ) from None
        return candidate

    def effective_text(self, name: str) -> str | None:
        """A dynamic config's value now, as DescribeConfigs prints it."""
        if name in BROKER_DEFAULTS:
            return self.config.broker_value(name)
        return self.config.extra.get(name, _DEFAULT_EXTRA.get(name))

    # --- applying ------------------------------------------------------------------------------

    def set_layer(self, resource_name: str, configs: Mapping[str, str]) -> frozenset[str]:
        """All dynamic configs of `resource_name` (a broker id or "") after a change; other brokers'
        layers are ignored. Returns the names whose effective value changed."""
        if resource_name not in self.layers:
            return frozenset()
        self.layers[resource_name] = dict(configs)
        changed = self._recompute()
        for callback in self._subscribers:
            callback(changed)
        return changed

    def _recompute(self) -> frozenset[str]:
        own, default = self.layers[self.broker_id], self.layers[CLUSTER_DEFAULT]
        changed = set()
        for name in DYNAMIC_CONFIGS:
            raw = own.get(name, default.get(name))
            if name in EXTRA_DYNAMIC_CONFIGS:
                before = self.config.extra.get(name)
                if raw is None:
                    self.config.extra.pop(name, None)
                    if name in self._static_extra:
                        self.config.extra[name] = self._static_extra[name]
                else:
                    self.config.extra[name] = raw
                if self.config.extra.get(name) != before:
                    changed.add(name)
                continue
            value = self._static_values[name]
            if raw is not None:
                try:
                    value = parse_property_value(name, kind_of(name), raw)
                except ConfigError as exc:
                    # Checked before it was stored; a value from an older version that no longer parses
                    # is left out rather than stopping the broker.
                    log.warning("ignoring dynamic broker config %s=%r: %s", name, raw, exc)
            if self.config.values[name] != value:
                self.config.values[name] = value
                changed.add(name)
        return frozenset(changed)

    # --- describing ----------------------------------------------------------------------------

    def synonyms(self, name: str) -> list[tuple[str, str | None, int]]:
        """(value, source) of `name` in every layer that has it, the winning one first (Kafka's
        synonyms order: dynamic broker, dynamic default, static, default)."""
        found: list[tuple[str, str | None, int]] = []
        for layer, source in (
            (self.broker_id, DYNAMIC_BROKER_CONFIG),
            (CLUSTER_DEFAULT, DYNAMIC_DEFAULT_BROKER_CONFIG),
        ):
            if name in self.layers[layer]:
                found.append((name, self.layers[layer][name], source))
        if name in self.config.explicit:
            found.append(
                (name, self._text_with(self._static_values, self._static_extra, name), STATIC_BROKER_CONFIG)
            )
        default = self._text_with(_DEFAULT_VALUES, _DEFAULT_EXTRA, name)
        # Kafka lists no default synonym for a config whose default is null (ssl.provider, log.retention.ms
        # whose value derives from log.retention.hours, …).
        if name in ALL_DYNAMIC_DEFS and ALL_DYNAMIC_DEFS[name].default is None:
            return found
        if default is not None or name in BROKER_DEFAULTS:
            found.append((name, default, DEFAULT_CONFIG))
        return found

    def _text_with(self, values: Mapping[str, object], extra: Mapping[str, str], name: str) -> str | None:
        """`name` as `broker_value` prints it with these values (log.retention.ms and log.roll.ms are
        derived from their .hours/.minutes forms when unset)."""
        if name in BROKER_DEFAULTS:
            return dataclasses.replace(self.config, values=dict(values)).broker_value(name)
        return extra.get(name)


class _CurrentValues(Mapping[str, object]):
    """Every dynamic config's effective value, typed as Kafka types it, read when asked (the subsystem checks
    look at a few)."""

    def __init__(self, dynamic: DynamicBrokerConfig) -> None:
        self.dynamic = dynamic

    def __getitem__(self, name: str) -> object:
        text = self.dynamic.effective_text(name)
        if text is None:
            raise KeyError(name)
        return parse_kafka_value(name, ALL_DYNAMIC_DEFS[name], text)

    def __iter__(self) -> Iterator[str]:
        return iter(ALL_DYNAMIC_DEFS)

    def __len__(self) -> int:
        return len(ALL_DYNAMIC_DEFS)
