"""Dynamic broker configs: the values AlterConfigs / IncrementalAlterConfigs set on a running broker.

Kafka keeps three layers over the properties file, the highest set one wins: the config set on this
broker id (DYNAMIC_BROKER_CONFIG), the cluster-wide default set on the broker resource "" (DYNAMIC_DEFAULT_
BROKER_CONFIG), then the file (STATIC_BROKER_CONFIG) and Kafka's default (DEFAULT_CONFIG).

`DynamicBrokerConfig` writes the effective value into the broker's one `BrokerConfig.values` (so that every
reader of `config.get_int(...)` sees it at once) and tells its subscribers which names changed, so that the
parts holding a derived copy (the default topic log config, connection limits) rebuild it. Where the layers
are kept is the caller's business: the metadata log in a cluster, `DynamicConfigFile` on a single node.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from broker.config import (
    BROKER_DEFAULTS,
    TOPIC_CONFIG_BROKER_SYNONYMS,
    BrokerConfig,
    ConfigError,
    parse_property_value,
)
from broker.runtime.durable_json import write_json_durably

log = logging.getLogger(__name__)

LONG_MAX = 9223372036854775807

# The broker properties Kafka lets AlterConfigs change at runtime that this broker has, and what they do
# here. Everything else in BROKER_DEFAULTS is read-only (Kafka: "Cannot update these configs dynamically").
# Kafka's DynamicLogConfig: the first broker synonym of every topic config (log.retention.ms, log.roll.ms, …);
# the .minutes/.hours forms stay read-only there, and so here.
LOG_DEFAULT_CONFIGS = frozenset(TOPIC_CONFIG_BROKER_SYNONYMS.values())
CONNECTION_CONFIGS = frozenset(
    {"max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides"}
)
# Read where it is used (the wait before each cleaner pass), so a change applies from the next pass.
SCHEDULER_CONFIGS = frozenset({"log.cleaner.backoff.ms", "replica.alter.log.dirs.io.max.bytes.per.second"})

# Dynamic in Kafka, not in BROKER_DEFAULTS: (type, Kafka's default, minimum). The replication throttles
# are applied by the ReplicaManager (cluster mode). The last two belong to subsystems this broker does not
# have (Kerberos logins, a JVM background thread pool): Kafka accepts them on any broker and so do we
# (librdkafka's admin test 0081 sets both); they are stored and described, and change nothing here.
EXTRA_DYNAMIC_CONFIGS: dict[str, tuple[type, object, int | None]] = {
    "leader.replication.throttled.rate": (int, LONG_MAX, 1),
    "follower.replication.throttled.rate": (int, LONG_MAX, 1),
    "background.threads": (int, 10, 1),
    "sasl.kerberos.min.time.before.relogin": (int, 60000, None),
}

DYNAMIC_CONFIGS = (
    LOG_DEFAULT_CONFIGS | CONNECTION_CONFIGS | SCHEDULER_CONFIGS | frozenset(EXTRA_DYNAMIC_CONFIGS)
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
    """A change Kafka refuses; `read_only` says INVALID_REQUEST, else INVALID_CONFIG."""

    def __init__(self, message: str, *, read_only: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.read_only = read_only


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
    if name in BROKER_DEFAULTS:
        return BROKER_DEFAULTS[name][0]
    return EXTRA_DYNAMIC_CONFIGS[name][0]


def _as_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


_DEFAULT_EXTRA = {
    name: _as_text(default) for name, (_kind, default, _minimum) in EXTRA_DYNAMIC_CONFIGS.items()
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

    def check(self, changes: Mapping[str, str | None]) -> BrokerConfig:
        """Refuse what Kafka refuses; returns the config as it would be with `changes` on this broker
        (for further checks by the caller, e.g. the topic log defaults it implies)."""
        read_only = sorted(n for n in changes if n in BROKER_DEFAULTS and n not in DYNAMIC_CONFIGS)
        if read_only:
            # Kafka's wording (a Scala Set): "Cannot update these configs dynamically: Set(num.partitions)".
            raise DynamicConfigError(
                f"Cannot update these configs dynamically: Set({', '.join(read_only)})", read_only=True
            )
        unknown = sorted(n for n in changes if n not in DYNAMIC_CONFIGS)
        if unknown:
            raise DynamicConfigError(f"Unknown broker config: {', '.join(unknown)}")
        values = dict(self.config.values)
        extra = dict(self.config.extra)
        for name, raw in changes.items():
            if raw is None:
                continue
            try:
                typed = parse_property_value(name, kind_of(name), raw)
            except ConfigError as exc:
                raise DynamicConfigError(f"Invalid value {raw} for configuration {name}: {exc}") from None
            if name in EXTRA_DYNAMIC_CONFIGS:
                minimum = EXTRA_DYNAMIC_CONFIGS[name][2]
                if minimum is not None and int(typed) < minimum:  # type: ignore[call-overload]
                    raise DynamicConfigError(
                        f"Invalid value {raw} for configuration {name}: Value must be at least {minimum}"
                    )
                extra[name] = raw.strip()
            else:
                values[name] = typed
        candidate = dataclasses.replace(self.config, values=values, extra=extra)
        try:
            candidate.validate_values()
        except ConfigError as exc:
            names = ", ".join(sorted(changes))
            raise DynamicConfigError(f"Invalid value for configuration {names}: {exc}") from None
        return candidate

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
        found.append((name, self._text_with(_DEFAULT_VALUES, _DEFAULT_EXTRA, name), DEFAULT_CONFIG))
        return found

    def _text_with(self, values: Mapping[str, object], extra: Mapping[str, str], name: str) -> str | None:
        """`name` as `broker_value` prints it with these values (log.retention.ms and log.roll.ms are
        derived from their .hours/.minutes forms when unset)."""
        if name in BROKER_DEFAULTS:
            return dataclasses.replace(self.config, values=dict(values)).broker_value(name)
        return extra.get(name)


class DynamicConfigFile:
    """A single node's dynamic configs in its data directory (a cluster keeps them in the metadata log):
    {"broker": {"": {...}, "<id>": {...}}, "group": {"<group>": {...}}, "client_metrics": {"<name>": {...}}},
    replaced atomically."""

    KINDS = ("broker", "group", "client_metrics")

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / "dynamic-configs.json"

    def load(self) -> dict[str, dict[str, dict[str, str]]]:
        if not self.path.exists():
            return {kind: {} for kind in self.KINDS}
        data = json.loads(self.path.read_text(encoding="utf-8"))
        return {kind: {k: dict(v) for k, v in data.get(kind, {}).items()} for kind in self.KINDS}

    def save(self, data: Mapping[str, Mapping[str, Mapping[str, str]]]) -> None:
        layers_set = {kind: {k: dict(v) for k, v in layers.items() if v} for kind, layers in data.items()}
        write_json_durably(self.path, layers_set)
