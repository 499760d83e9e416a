"""Kafka 4.2's definitions of the broker configs it lets AlterConfigs change at runtime: their type, default
and validator, and where they may be set. The checks answer in Kafka's words (the installed Apache Kafka was
asked with bad values; tests/integration/conformance/test_dynamic_broker_configs.py compares name by name).

Kafka checks a change in this order: each value against its definition (type, then validator), the configs
that only a listener prefix may set, the configs that only a broker id (not the cluster default "") may set,
then the subsystems' own checks (thread pools may at most halve or double, the cleaner's dedupe buffer, …).
"""

from __future__ import annotations

import collections
import math
from collections.abc import Mapping
from dataclasses import dataclass

INT_RANGE = (-(2**31), 2**31 - 1)
LONG_RANGE = (-(2**63), 2**63 - 1)
SHORT_RANGE = (-(2**15), 2**15 - 1)
INT_MAX = INT_RANGE[1]
LONG_MAX = LONG_RANGE[1]
# Java's Double.MAX_VALUE as Kafka prints it (log.cleaner.io.max.bytes.per.second's default).
DOUBLE_MAX_TEXT = "1.7976931348623157E308"
MIB = 1024 * 1024

# DescribeConfigs' ConfigType for each of Kafka's type names.
CONFIG_TYPE_CODES = {
    "BOOLEAN": 1,
    "STRING": 2,
    "INT": 3,
    "SHORT": 4,
    "LONG": 5,
    "DOUBLE": 6,
    "LIST": 7,
    "CLASS": 8,
    "PASSWORD": 9,
}


class ConfigValueError(ValueError):
    """A value Kafka refuses (always INVALID_REQUEST for broker configs in Kafka 4.2)."""


@dataclass(frozen=True)
class ConfigDef:
    """One config as Kafka's ConfigDef declares it."""

    kind: str
    default: str | None
    at_least: float | None = None
    at_most: float | None = None
    one_of: tuple[str, ...] = ()
    # Kafka refuses these on the cluster default "": each broker has its own.
    per_broker: bool = False
    # Kafka takes these only under a listener prefix (listener.name.<l>.ssl.keystore.location, …).
    per_listener: bool = False
    # A thread pool Kafka resizes live: a change may at most halve or double it.
    thread_pool: bool = False

    @property
    def type_code(self) -> int:
        return CONFIG_TYPE_CODES[self.kind]


def _int(default: int, at_least: int | None = None, at_most: int | None = None, **kw: object) -> ConfigDef:
    return ConfigDef("INT", str(default), at_least, at_most, **kw)  # type: ignore[arg-type]


def _long(default: int, at_least: int | None = None, **kw: object) -> ConfigDef:
    return ConfigDef("LONG", str(default), at_least, **kw)  # type: ignore[arg-type]


def _double(default: str, at_least: float | None = None, **kw: object) -> ConfigDef:
    return ConfigDef("DOUBLE", default, at_least, **kw)  # type: ignore[arg-type]


def _string(default: str | None, *one_of: str, **kw: object) -> ConfigDef:
    return ConfigDef("STRING", default, one_of=one_of, **kw)  # type: ignore[arg-type]


def _per_broker(kind: str, default: str | None, **kw: object) -> ConfigDef:
    return ConfigDef(kind, default, per_broker=True, **kw)  # type: ignore[arg-type]


def _per_listener(kind: str, default: str | None) -> ConfigDef:
    return ConfigDef(kind, default, per_listener=True)


COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
DEFAULT_PRINCIPAL_BUILDER = "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder"
DEFAULT_SSL_ENGINE_FACTORY = "org.apache.kafka.common.security.ssl.DefaultSslEngineFactory"
JMX_REPORTER = "org.apache.kafka.common.metrics.JmxReporter"
# The classes a CLASS or class-LIST config may name here: Kafka's own defaults (a JVM plugin cannot load
# into this broker); anything else gets Kafka's "could not be found".
KNOWN_CLASSES = frozenset({DEFAULT_PRINCIPAL_BUILDER, DEFAULT_SSL_ENGINE_FACTORY, JMX_REPORTER})
CLASS_LIST_CONFIGS = frozenset({"metric.reporters"})

# Every broker config Kafka 4.2 lists as dynamic (DescribeConfigs read_only=false), as Kafka defines it.
DYNAMIC_BROKER_CONFIG_DEFS: dict[str, ConfigDef] = {
    "background.threads": _int(10, 1, thread_pool=True),
    "compression.gzip.level": _int(-1),
    "compression.lz4.level": _int(9, 1, 17),
    "compression.type": _string("producer", *COMPRESSION_TYPES),
    "compression.zstd.level": _int(3, -131072, 22),
    "config.providers": ConfigDef("LIST", ""),
    "listener.security.protocol.map": _per_broker(
        "STRING", "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"
    ),
    "listeners": _per_broker("LIST", "PLAINTEXT://:9092"),
    "log.cleaner.backoff.ms": _long(15000, 0),
    "log.cleaner.dedupe.buffer.size": _long(128 * MIB),
    "log.cleaner.delete.retention.ms": _long(86400000, 0),
    "log.cleaner.io.buffer.load.factor": _double("0.9"),
    "log.cleaner.io.buffer.size": _int(524288, 0),
    "log.cleaner.io.max.bytes.per.second": _double(DOUBLE_MAX_TEXT),
    "log.cleaner.max.compaction.lag.ms": _long(LONG_MAX, 1),
    "log.cleaner.min.cleanable.ratio": _double("0.5", 0, at_most=1),
    "log.cleaner.min.compaction.lag.ms": _long(0, 0),
    "log.cleaner.threads": _int(1, 0),
    "log.cleanup.policy": ConfigDef("LIST", "delete", one_of=("compact", "delete")),
    "log.flush.interval.messages": _long(LONG_MAX, 1),
    "log.flush.interval.ms": ConfigDef("LONG", None),
    "log.index.interval.bytes": _int(4096, 0),
    "log.index.size.max.bytes": _int(10485760, 4),
    "log.local.retention.bytes": _long(-2, -2),
    "log.local.retention.ms": _long(-2, -2),
    "log.message.timestamp.after.max.ms": _long(3600000, 0),
    "log.message.timestamp.before.max.ms": _long(LONG_MAX, 0),
    "log.message.timestamp.type": _string("CreateTime", "CreateTime", "LogAppendTime"),
    "log.preallocate": ConfigDef("BOOLEAN", "false"),
    "log.retention.bytes": _long(-1),
    "log.retention.ms": ConfigDef("LONG", None),
    "log.roll.jitter.ms": ConfigDef("LONG", None),
    "log.roll.ms": ConfigDef("LONG", None),
    "log.segment.bytes": _int(1073741824, MIB),
    "log.segment.delete.delay.ms": _long(60000, 0),
    "max.connection.creation.rate": _int(INT_MAX, 0),
    "max.connections": _int(INT_MAX, 0),
    "max.connections.per.ip": _int(INT_MAX, 0),
    "max.connections.per.ip.overrides": _string(""),
    "message.max.bytes": _int(1048588, 0),
    "metric.reporters": ConfigDef("LIST", JMX_REPORTER),
    "min.insync.replicas": _int(1, 1),
    "num.io.threads": _int(8, 1, thread_pool=True),
    "num.network.threads": _int(3, 1, thread_pool=True),
    "num.recovery.threads.per.data.dir": _int(2, 1, thread_pool=True),
    "num.replica.fetchers": _int(1, 1, thread_pool=True),
    "principal.builder.class": _per_broker("CLASS", DEFAULT_PRINCIPAL_BUILDER),
    "producer.id.expiration.ms": _int(86400000, 1),
    "remote.fetch.max.wait.ms": _int(500, 1),
    "remote.list.offsets.request.timeout.ms": _long(30000, 1),
    "remote.log.index.file.cache.total.size.bytes": _long(1073741824, 1),
    "remote.log.manager.copier.thread.pool.size": _int(10, 1, thread_pool=True),
    "remote.log.manager.copy.max.bytes.per.second": _long(LONG_MAX, 1),
    "remote.log.manager.expiration.thread.pool.size": _int(10, 1, thread_pool=True),
    "remote.log.manager.fetch.max.bytes.per.second": _long(LONG_MAX, 1),
    "remote.log.manager.follower.thread.pool.size": _int(2, 1, thread_pool=True),
    "remote.log.reader.threads": _int(10, 1, thread_pool=True),
    "sasl.enabled.mechanisms": _per_broker("LIST", "GSSAPI"),
    "sasl.jaas.config": _per_broker("PASSWORD", None),
    "sasl.kerberos.kinit.cmd": _per_broker("STRING", "/usr/bin/kinit"),
    "sasl.kerberos.min.time.before.relogin": _per_broker("LONG", "60000"),
    "sasl.kerberos.principal.to.local.rules": _per_broker("LIST", "DEFAULT"),
    "sasl.kerberos.service.name": _per_broker("STRING", None),
    "sasl.kerberos.ticket.renew.jitter": _per_broker("DOUBLE", "0.05"),
    "sasl.kerberos.ticket.renew.window.factor": _per_broker("DOUBLE", "0.8"),
    "sasl.login.refresh.buffer.seconds": _per_broker("SHORT", "300"),
    "sasl.login.refresh.min.period.seconds": _per_broker("SHORT", "60"),
    "sasl.login.refresh.window.factor": _per_broker("DOUBLE", "0.8"),
    "sasl.login.refresh.window.jitter": _per_broker("DOUBLE", "0.05"),
    "sasl.mechanism.inter.broker.protocol": _per_broker("STRING", "GSSAPI"),
    "ssl.cipher.suites": _per_broker("LIST", ""),
    "ssl.client.auth": _per_broker("STRING", "none", one_of=("required", "requested", "none")),
    "ssl.enabled.protocols": _per_broker("LIST", "TLSv1.2,TLSv1.3"),
    "ssl.endpoint.identification.algorithm": _per_broker("STRING", "https"),
    "ssl.engine.factory.class": _per_broker("CLASS", None),
    "ssl.key.password": _per_listener("PASSWORD", None),
    "ssl.keymanager.algorithm": _per_broker("STRING", "SunX509"),
    "ssl.keystore.certificate.chain": _per_listener("PASSWORD", None),
    "ssl.keystore.key": _per_listener("PASSWORD", None),
    "ssl.keystore.location": _per_listener("STRING", None),
    "ssl.keystore.password": _per_listener("PASSWORD", None),
    "ssl.keystore.type": _per_listener("STRING", "JKS"),
    "ssl.protocol": _per_broker("STRING", "TLSv1.3"),
    "ssl.provider": _per_broker("STRING", None),
    "ssl.secure.random.implementation": _per_broker("STRING", None),
    "ssl.trustmanager.algorithm": _per_broker("STRING", "PKIX"),
    "ssl.truststore.certificates": _per_listener("PASSWORD", None),
    "ssl.truststore.location": _per_listener("STRING", None),
    "ssl.truststore.password": _per_listener("PASSWORD", None),
    "ssl.truststore.type": _per_listener("STRING", "JKS"),
    "transaction.partition.verification.enable": ConfigDef("BOOLEAN", "true"),
    "unclean.leader.election.enable": ConfigDef("BOOLEAN", "false"),
}

# Dynamic in Kafka but not ConfigDef keys (quotas held per broker): Kafka describes them only once set; we list
# them always, so that the console offers them (a named difference in the conformance test).
DYNAMIC_QUOTA_CONFIG_DEFS: dict[str, ConfigDef] = {
    "leader.replication.throttled.rate": _long(LONG_MAX, 1),
    "follower.replication.throttled.rate": _long(LONG_MAX, 1),
    "replica.alter.log.dirs.io.max.bytes.per.second": _long(LONG_MAX, 1),
}

ALL_DYNAMIC_DEFS = {**DYNAMIC_BROKER_CONFIG_DEFS, **DYNAMIC_QUOTA_CONFIG_DEFS}

_RANGES = {"INT": INT_RANGE, "LONG": LONG_RANGE, "SHORT": SHORT_RANGE}


def _number_text(value: float) -> str:
    """A parsed number as Java prints it in Kafka's messages (-1 read as a DOUBLE is -1.0)."""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    return str(value)


def parse_kafka_value(name: str, definition: ConfigDef, raw: str) -> object:
    """`raw` as Kafka's ConfigDef parses and validates it; ConfigValueError in Kafka's words."""
    text = raw.strip()
    prefix = f"Invalid value {raw} for configuration {name}"
    value: object = text
    if definition.kind in _RANGES:
        low, high = _RANGES[definition.kind]
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:  # type: ignore[operator]
            raise ConfigValueError(f"{prefix}: Not a number of type {definition.kind}")
    elif definition.kind == "DOUBLE":
        try:
            value = float(text)
        except ValueError:
            raise ConfigValueError(f"{prefix}: Not a number of type DOUBLE") from None
    elif definition.kind == "BOOLEAN":
        if text.lower() not in ("true", "false"):
            raise ConfigValueError(f"{prefix}: Expected value to be either true or false")
        value = text.lower() == "true"
    elif definition.kind == "LIST":
        value = [item.strip() for item in text.split(",") if item.strip()]
    _validate(name, definition, raw, value)
    return value


def _validate(name: str, definition: ConfigDef, raw: str, value: object) -> None:
    shown = _number_text(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else raw
    prefix = f"Invalid value {shown} for configuration {name}"
    if name == "compression.gzip.level" and not (value == -1 or 1 <= value <= 9):  # type: ignore[operator]
        raise ConfigValueError(f"{prefix}: Value must be between 1 and 9 or equal to -1")
    if definition.at_least is not None and value < definition.at_least:  # type: ignore[operator]
        raise ConfigValueError(f"{prefix}: Value must be at least {_bound(definition.at_least)}")
    if definition.at_most is not None and value > definition.at_most:  # type: ignore[operator]
        raise ConfigValueError(f"{prefix}: Value must be no more than {_bound(definition.at_most)}")
    if definition.one_of:
        items = value if isinstance(value, list) else [value]
        if any(item not in definition.one_of for item in items):
            raise ConfigValueError(f"{prefix}: String must be one of: {', '.join(definition.one_of)}")
    if name == "listeners" and not value:
        raise ConfigValueError(
            "Configuration 'listeners' must not be empty. Valid values include: any non-empty value"
        )
    classes = value if name in CLASS_LIST_CONFIGS else [value] if definition.kind == "CLASS" else []
    for class_name in classes:  # type: ignore[union-attr]
        if class_name not in KNOWN_CLASSES:
            raise ConfigValueError(
                f"Invalid value {class_name} for configuration {name}: Class {class_name} could not be found."
            )


def _bound(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else str(bound)


def check_scope(resource_name: str, names: list[str]) -> None:
    """Refuse configs that Kafka takes only under a listener prefix, or only on a broker id."""
    per_listener = sorted(n for n in names if n in ALL_DYNAMIC_DEFS and ALL_DYNAMIC_DEFS[n].per_listener)
    if per_listener:
        raise ConfigValueError(
            "These security configs can be dynamically updated only per-listener using the listener prefix: "
            f"HashSet({', '.join(per_listener)})"
        )
    per_broker = sorted(n for n in names if n in ALL_DYNAMIC_DEFS and ALL_DYNAMIC_DEFS[n].per_broker)
    if resource_name == "" and per_broker:
        raise ConfigValueError(
            "Cannot update these configs at default cluster level, broker id must be specified: "
            f"Set({', '.join(per_broker)})"
        )


def _reconfiguration_failed(detail: str) -> ConfigValueError:
    return ConfigValueError(
        f"Invalid value org.apache.kafka.common.config.ConfigException: {detail} for configuration "
        "Invalid dynamic configuration"
    )


def check_reconfiguration(changed: Mapping[str, object], current: Mapping[str, object]) -> None:
    """The subsystems' checks of a change (`changed`: the new typed values; `current`: every dynamic config's
    effective typed value before it), in Kafka's words."""
    after = collections.ChainMap(dict(changed), current)  # type: ignore[arg-type]
    for name, value in changed.items():
        definition = ALL_DYNAMIC_DEFS.get(name)
        if definition is None or not definition.thread_pool:
            continue
        before = int(current[name])  # type: ignore[call-overload]
        new = int(value)  # type: ignore[call-overload]
        if new < before // 2:
            raise _reconfiguration_failed(
                f"Dynamic thread count update validation failed for {name}={new}, value should be at least "
                f"half the current value {before}"
            )
        if new > before * 2:
            raise _reconfiguration_failed(
                f"Dynamic thread count update validation failed for {name}={new}, value should not be greater "
                f"than double the current value {before}"
            )
    if {"log.cleaner.threads", "log.cleaner.dedupe.buffer.size"} & set(changed):
        threads = int(after["log.cleaner.threads"])  # type: ignore[call-overload]
        if threads == 0:
            # Kafka divides by it and answers "/ by zero"; the same refusal, said plainly.
            raise ConfigValueError("requirement failed: log.cleaner.threads must be at least 1")
        if int(after["log.cleaner.dedupe.buffer.size"]) // threads <= MIB:  # type: ignore[call-overload]
            raise ConfigValueError(
                "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread."
            )
    for name in ("max.connections", "max.connection.creation.rate"):
        if name in changed and changed[name] == 0:
            raise _reconfiguration_failed(f"Invalid {name} 0")
    overrides = str(after.get("max.connections.per.ip.overrides", "")).strip()
    if changed.get("max.connections.per.ip") == 0 and not overrides:
        raise ConfigValueError(
            "requirement failed: max.connections.per.ip can be set to zero only if "
            "max.connections.per.ip.overrides property is set."
        )
    if changed.get("log.local.retention.ms") == -1 and after.get("log.retention.ms", -1) != -1:
        raise _reconfiguration_failed(
            "Invalid value -1 for configuration log.local.retention.ms: Value must not be -1 as "
            f"log.retention.ms value is set as {after['log.retention.ms']}."
        )
    if "log.retention.ms" in changed and changed["log.retention.ms"] == 0:
        raise ConfigValueError(
            "requirement failed: log.retention.ms must be unlimited (-1) or, greater than or equal to 1"
        )
    if "log.roll.ms" in changed and int(changed["log.roll.ms"]) < 1:  # type: ignore[call-overload]
        raise ConfigValueError("requirement failed: log.roll.ms must be greater than or equal to 1")
    if "log.roll.jitter.ms" in changed and int(changed["log.roll.jitter.ms"]) < 0:  # type: ignore[call-overload]
        raise ConfigValueError("requirement failed: log.roll.jitter.ms must be greater than or equal to 0")
