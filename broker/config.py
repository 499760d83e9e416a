"""Broker configuration: Kafka property names, Kafka's defaults, validated into a typed object."""

from __future__ import annotations

import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

LONG_MAX = 9223372036854775807


class ConfigError(ValueError):
    """A property is missing, malformed or out of range."""


@dataclass(frozen=True, slots=True)
class Listener:
    name: str
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


# Broker property -> (type, default). Types: int, bool, str, float, list (comma separated).
# These are Kafka's own defaults (REFERENCE.md §3) except where noted.
BROKER_DEFAULTS: dict[str, tuple[type, object]] = {
    "node.id": (int, 0),
    "broker.id": (int, -1),
    "listeners": (str, "PLAINTEXT://127.0.0.1:9092"),
    "advertised.listeners": (str, ""),
    "log.dirs": (str, "/tmp/kafka-logs"),
    "num.partitions": (int, 1),
    "default.replication.factor": (int, 1),
    "auto.create.topics.enable": (bool, True),
    "delete.topic.enable": (bool, True),
    "log.retention.ms": (int, -2),
    "log.retention.minutes": (int, -2),
    "log.retention.hours": (int, 168),
    "log.retention.bytes": (int, -1),
    "log.retention.check.interval.ms": (int, 300000),
    "log.segment.bytes": (int, 1073741824),
    "log.roll.ms": (int, -2),
    "log.roll.hours": (int, 168),
    "log.roll.jitter.ms": (int, 0),
    "log.index.interval.bytes": (int, 4096),
    "log.index.size.max.bytes": (int, 10485760),
    "log.cleanup.policy": (str, "delete"),
    "log.cleaner.enable": (bool, True),
    "log.cleaner.backoff.ms": (int, 15000),
    "replica.alter.log.dirs.io.max.bytes.per.second": (int, LONG_MAX),
    "log.cleaner.delete.retention.ms": (int, 86400000),
    "log.cleaner.min.compaction.lag.ms": (int, 0),
    "log.cleaner.max.compaction.lag.ms": (int, LONG_MAX),
    "log.cleaner.min.cleanable.ratio": (float, 0.5),
    "log.flush.interval.messages": (int, LONG_MAX),
    "log.flush.interval.ms": (int, LONG_MAX),
    "log.flush.scheduler.interval.ms": (int, LONG_MAX),
    "log.message.timestamp.type": (str, "CreateTime"),
    "log.message.timestamp.before.max.ms": (int, LONG_MAX),
    "log.message.timestamp.after.max.ms": (int, 3_600_000),  # Kafka 4.0's default (KIP-1030)
    "log.preallocate": (bool, False),
    "log.segment.delete.delay.ms": (int, 60000),
    "compression.type": (str, "producer"),
    "compression.gzip.level": (int, -1),
    "compression.lz4.level": (int, 9),
    "compression.zstd.level": (int, 3),
    "log.local.retention.bytes": (int, -2),
    "log.local.retention.ms": (int, -2),
    "message.max.bytes": (int, 1048588),
    "min.insync.replicas": (int, 1),
    "unclean.leader.election.enable": (bool, False),
    "socket.request.max.bytes": (int, 104857600),
    # Kafka's default is 50, for an acceptor thread that does nothing else. Ours accepts on the event loop
    # that serves requests too: a few milliseconds of work there while clients connect back to back filled 50
    # (or asyncio's 100), the kernel dropped the SYNs and those clients waited out its 1 s retransmit.
    "socket.listen.backlog.size": (int, 1024),
    # Kafka's default is -1 (unbounded): request bytes held by all connections at once.
    "queued.max.request.bytes": (int, 536870912),
    "max.connections": (int, 2147483647),
    "max.connections.per.ip": (int, 2147483647),
    "max.connections.per.ip.overrides": (str, ""),
    "group.initial.rebalance.delay.ms": (int, 3000),
    "group.min.session.timeout.ms": (int, 6000),
    "group.max.session.timeout.ms": (int, 1800000),
    # KIP-848 consumer groups (broker/groups/consumer_groups.py)
    "group.consumer.session.timeout.ms": (int, 45000),
    "group.consumer.heartbeat.interval.ms": (int, 5000),
    "group.consumer.max.size": (int, 2147483647),
    "group.consumer.assignors": (list, ["uniform", "range"]),
    "group.consumer.migration.policy": (str, "bidirectional"),
    "group.consumer.regex.refresh.interval.ms": (int, 600000),
    # KIP-932 share groups (broker/share/)
    "group.share.record.lock.duration.ms": (int, 30000),
    "group.share.min.record.lock.duration.ms": (int, 15000),
    "group.share.max.record.lock.duration.ms": (int, 60000),
    "group.share.delivery.count.limit": (int, 5),
    "group.share.partition.max.record.locks": (int, 2000),
    "group.share.heartbeat.interval.ms": (int, 5000),
    "group.share.session.timeout.ms": (int, 45000),
    "group.share.max.share.sessions": (int, 2000),
    "share.coordinator.state.topic.num.partitions": (int, 50),
    "share.coordinator.write.timeout.ms": (int, 5000),
    # Like offsets.topic.replication.factor here (1; Kafka's defaults are 3 and 2).
    "share.coordinator.state.topic.replication.factor": (int, 1),
    "share.coordinator.state.topic.min.isr": (int, 1),
    "offsets.topic.num.partitions": (int, 50),
    "offsets.topic.replication.factor": (int, 1),
    "offsets.topic.segment.bytes": (int, 104857600),
    "offsets.retention.minutes": (int, 10080),
    "offsets.retention.check.interval.ms": (int, 600000),
    "offsets.commit.timeout.ms": (int, 5000),
    "transactional.id.expiration.ms": (int, 604800000),
    "transaction.state.log.num.partitions": (int, 50),
    # Like offsets.topic.replication.factor here (1; Kafka's default is 3): the control plane
    # sets both, and transaction.state.log.min.isr, from the cluster's size.
    "transaction.state.log.replication.factor": (int, 1),
    "transaction.state.log.min.isr": (int, 1),
    "transaction.state.log.segment.bytes": (int, 104857600),
    "transaction.max.timeout.ms": (int, 900000),
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": (int, 10000),
    "transaction.remove.expired.transaction.cleanup.interval.ms": (int, 3600000),
    # Transaction version 2 Produce: while the coordinator answers CONCURRENT_TRANSACTIONS (the previous
    # transaction's markers are still being written) the leader asks it again every backoff.ms, for at most
    # max.ms (despite its name, the whole retry window) and never longer than request.timeout.ms.
    "add.partitions.to.txn.retry.backoff.ms": (int, 20),
    "add.partitions.to.txn.retry.backoff.max.ms": (int, 100),
    # How long the broker's requests to other brokers (transaction markers, KIP-890 verification) may take.
    "request.timeout.ms": (int, 30000),
    "producer.id.expiration.ms": (int, 86400000),
    "connections.max.idle.ms": (int, 600000),
    "replica.fetch.max.bytes": (int, 1048576),
    "max.incremental.fetch.session.cache.slots": (int, 1000),
    # --- the quorum (broker/controller/README.md); unset process.roles = a single node, its own one voter
    "process.roles": (str, ""),
    "controller.quorum.voters": (str, ""),
    "controller.quorum.bootstrap.servers": (str, ""),
    "controller.listener.names": (str, "CONTROLLER"),
    "controller.quorum.election.timeout.ms": (int, 1000),
    "broker.rack": (str, ""),
    "broker.heartbeat.interval.ms": (int, 2000),
    "broker.session.timeout.ms": (int, 9000),
    "metadata.log.dir": (str, ""),
    "auto.leader.rebalance.enable": (bool, True),
    "leader.imbalance.check.interval.seconds": (int, 300),
    "leader.imbalance.per.broker.percentage": (int, 10),
    # Not a Kafka property: serve the old API versions Kafka 3.9 served and 4.0 dropped (Fetch v0-3 with
    # down-conversion, ListOffsets v0; broker/handlers/api_versions.py). false: Kafka 4.0's ranges only.
    "legacy.api.versions.enable": (bool, True),
    # Not a Kafka property: our Prometheus endpoint (0 = off).
    "metrics.port": (int, 0),
    "metrics.host": (str, "127.0.0.1"),
    # Client telemetry (KIP-714). Kafka serves it with a ClientTelemetryReceiver plugin; ours exports the
    # pushed metrics on the Prometheus endpoint (broker/telemetry/). Not Kafka properties: the switch (false:
    # GetTelemetrySubscriptions/PushTelemetry are not advertised) and the cap on client instances exported.
    "telemetry.max.bytes": (int, 1048576),
    "client.telemetry.enable": (bool, True),
    "client.telemetry.max.clients": (int, 1000),
    "cluster.id": (str, ""),
    # --- security (see broker/auth/__init__.py for the properties we chose where Kafka has none)
    "listener.security.protocol.map": (
        str,
        "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
    ),
    "sasl.enabled.mechanisms": (list, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]),
    "sasl.server.max.receive.size": (int, 524288),
    "connections.max.reauth.ms": (int, 0),
    "connection.failed.authentication.delay.ms": (int, 100),
    # PEM files (Kafka's ssl.keystore.type=PEM): the keystore holds the certificate chain and key.
    "ssl.keystore.type": (str, "PEM"),
    "ssl.keystore.location": (str, ""),
    "ssl.key.password": (str, ""),
    "ssl.truststore.type": (str, "PEM"),
    "ssl.truststore.location": (str, ""),
    "ssl.client.auth": (str, "none"),
    "super.users": (str, ""),
    # Not a Kafka property: SCRAM users created at start when missing, `name:MECHANISM:password;...`.
    "sasl.bootstrap.users": (str, ""),
    "authorizer.class.name": (str, ""),
    # Delegation tokens (broker/auth/delegation_tokens.py): empty secret = the token APIs answer
    # DELEGATION_TOKEN_AUTH_DISABLED. Every broker of a cluster needs the same secret.
    "delegation.token.secret.key": (str, ""),
    "delegation.token.max.lifetime.ms": (int, 604800000),
    "delegation.token.expiry.time.ms": (int, 86400000),
    "delegation.token.expiry.check.interval.ms": (int, 3600000),
    "allow.everyone.if.no.acl.found": (bool, False),
    "quota.window.num": (int, 11),
    "quota.window.size.seconds": (int, 1),
    # --- inter-broker connections (broker/replication/README.md): replica fetchers authenticate as this
    # Empty: the first listener that is not a controller listener.
    "inter.broker.listener.name": (str, ""),
    # Empty: the protocol the listener map gives the inter-broker listener.
    "security.inter.broker.protocol": (str, ""),
    # Kafka's default is GSSAPI, which we do not have.
    "sasl.mechanism.inter.broker.protocol": (str, "SCRAM-SHA-512"),
    # The broker's own client login; `listener.name.<listener>.<mechanism>.sasl.jaas.config` wins.
    "sasl.jaas.config": (str, ""),
    # "https" checks the peer's certificate against its host name; empty turns that off.
    "ssl.endpoint.identification.algorithm": (str, "https"),
}

# Never reported by DescribeConfigs (Kafka marks them is_sensitive and sends a null value).
SENSITIVE_BROKER_CONFIGS = frozenset(
    {"ssl.key.password", "sasl.bootstrap.users", "sasl.jaas.config", "delegation.token.secret.key"}
)
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
# Kafka's group.consumer.migration.policy values: which ways a group with members may convert.
MIGRATION_POLICIES = ("disabled", "upgrade", "downgrade", "bidirectional")
SUPPORTED_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")

# Topic config name -> the broker property that supplies its default (Kafka's synonyms).
TOPIC_CONFIG_BROKER_SYNONYMS: dict[str, str] = {
    "cleanup.policy": "log.cleanup.policy",
    "compression.type": "compression.type",
    "compression.gzip.level": "compression.gzip.level",
    "compression.lz4.level": "compression.lz4.level",
    "compression.zstd.level": "compression.zstd.level",
    "local.retention.bytes": "log.local.retention.bytes",
    "local.retention.ms": "log.local.retention.ms",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "file.delete.delay.ms": "log.segment.delete.delay.ms",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms",
    "index.interval.bytes": "log.index.interval.bytes",
    "max.compaction.lag.ms": "log.cleaner.max.compaction.lag.ms",
    "max.message.bytes": "message.max.bytes",
    "message.timestamp.type": "log.message.timestamp.type",
    "message.timestamp.before.max.ms": "log.message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms": "log.message.timestamp.after.max.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "min.insync.replicas": "min.insync.replicas",
    "preallocate": "log.preallocate",
    "retention.bytes": "log.retention.bytes",
    "retention.ms": "log.retention.ms",
    "segment.bytes": "log.segment.bytes",
    "segment.index.bytes": "log.index.size.max.bytes",
    "segment.jitter.ms": "log.roll.jitter.ms",
    "segment.ms": "log.roll.ms",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
}


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java .properties text (key=value or key: value, # and ! comments, \\ continuation)."""
    props: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending += line[:-1]
            continue
        line = pending + line
        pending = ""
        separators = [i for i in (line.find("="), line.find(":")) if i >= 0]
        if not separators:
            props[line] = ""
            continue
        cut = min(separators)
        props[line[:cut].strip()] = line[cut + 1 :].strip()
    return props


def parse_listeners(value: str, property_name: str) -> list[Listener]:
    listeners = []
    for item in (v.strip() for v in value.split(",")):
        if not item:
            continue
        name, sep, address = item.partition("://")
        host, colon, port_text = address.rpartition(":")
        if not sep or not colon or not name:
            raise ConfigError(f"{property_name}: {item!r} is not NAME://host:port")
        try:
            port = int(port_text)
        except ValueError:
            raise ConfigError(f"{property_name}: port in {item!r} is not a number") from None
        if not 0 <= port <= 65535:
            raise ConfigError(f"{property_name}: port {port} is out of range")
        listeners.append(Listener(name=name.upper(), host=host.strip("[]"), port=port))
    return listeners


def parse_property_value(name: str, kind: type, value: str) -> object:
    """A property's text as its BROKER_DEFAULTS type; ConfigError names the property and the problem."""
    text = value.strip()
    if kind is bool:
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise ConfigError(f"{name}: expected true or false, got {value!r}")
    if kind is int:
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"{name}: expected an integer, got {value!r}") from None
    if kind is float:
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"{name}: expected a number, got {value!r}") from None
    if kind is list:
        return [item.strip() for item in text.split(",") if item.strip()]
    return text


def parse_ip_overrides(value: str) -> dict[str, int]:
    """`host:count,host:count` (Kafka's format); an IPv6 host keeps its colons."""
    overrides: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in value.split(","))):
        host, sep, count = item.rpartition(":")
        try:
            limit = int(count)
        except ValueError:
            limit = -1
        if not sep or not host or limit < 0:
            raise ConfigError(f"max.connections.per.ip.overrides: {item!r} is not host:count")
        overrides[host] = limit
    return overrides


@dataclass(frozen=True)
class BrokerConfig:
    """Every broker property, typed, with Kafka's defaults filled in.

    `values` holds all known properties (typed) and `explicit` the names the operator set,
    which DescribeConfigs reports as STATIC_BROKER_CONFIG rather than DEFAULT_CONFIG.
    """

    values: dict[str, object]
    explicit: frozenset[str]
    listeners: list[Listener]
    advertised_listeners: list[Listener]
    log_dirs: list[Path]
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> BrokerConfig:
        values: dict[str, object] = {}
        extra: dict[str, str] = {}
        for name, (kind, default) in BROKER_DEFAULTS.items():
            values[name] = parse_property_value(name, kind, props[name]) if name in props else default
        for name, value in props.items():
            if name not in BROKER_DEFAULTS:
                extra[name] = value
        listeners = parse_listeners(str(values["listeners"]), "listeners")
        if not listeners:
            raise ConfigError("listeners: at least one listener is required")
        advertised = parse_listeners(str(values["advertised.listeners"]), "advertised.listeners")
        dirs = [Path(d.strip()) for d in str(values["log.dirs"]).split(",") if d.strip()]
        if props.get("broker.id") and "node.id" not in props:
            values["node.id"] = values["broker.id"]
        config = cls(
            values=values,
            explicit=frozenset(props),
            listeners=listeners,
            advertised_listeners=advertised,
            log_dirs=dirs,
            extra=extra,
        )
        config.validate()
        return config

    @classmethod
    def load(cls, path: str | Path | None, overrides: Iterable[str] = ()) -> BrokerConfig:
        props: dict[str, str] = {}
        if path is not None:
            try:
                props.update(parse_properties(Path(path).read_text(encoding="utf-8")))
            except OSError as exc:
                raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
        for override in overrides:
            key, sep, value = override.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"--override {override!r} is not key=value")
            props[key.strip()] = value.strip()
        return cls.from_properties(props)

    def validate(self) -> None:
        self.validate_values()
        if self.node_id < 0:
            raise ConfigError(f"node.id: must not be negative, got {self.node_id}")
        if not 0 <= self.metrics_port <= 65535:
            raise ConfigError(f"metrics.port: {self.metrics_port} is out of range")
        if not self.log_dirs:
            raise ConfigError("log.dirs: at least one directory is required")
        names = {listener.name for listener in self.listeners}
        for adv in self.advertised_listeners:
            if adv.name not in names:
                raise ConfigError(f"advertised.listeners: {adv.name} is not in listeners")
        self._validate_security()
        if self.get_str("process.roles"):
            validate_cluster_config(self)

    def validate_values(self) -> None:
        """The checks of single values and of values against each other (what a dynamic config change
        can break); `validate` adds the listeners, security and cluster shape."""
        positive = [
            "num.partitions",
            "default.replication.factor",
            "offsets.topic.num.partitions",
            "transaction.state.log.num.partitions",
            "transaction.state.log.replication.factor",
            "transaction.state.log.min.isr",
            "transaction.max.timeout.ms",
            "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            "transaction.remove.expired.transaction.cleanup.interval.ms",
            "message.max.bytes",
            "socket.request.max.bytes",
            "socket.listen.backlog.size",
            "log.retention.check.interval.ms",
            "min.insync.replicas",
            "telemetry.max.bytes",
            "client.telemetry.max.clients",
            "add.partitions.to.txn.retry.backoff.ms",
        ]
        for name in positive:
            if int(self.values[name]) < 1:  # type: ignore[call-overload]
                raise ConfigError(f"{name}: must be at least 1, got {self.values[name]}")
        queued = self.get_int("queued.max.request.bytes")
        if 0 < queued < self.socket_request_max_bytes:
            raise ConfigError("queued.max.request.bytes: must be -1 or at least socket.request.max.bytes")
        if self.get_int("connections.max.idle.ms") < 1:
            raise ConfigError("connections.max.idle.ms: must be at least 1")
        for name in (
            "max.connections",
            "max.connections.per.ip",
            "add.partitions.to.txn.retry.backoff.max.ms",
            "request.timeout.ms",
        ):
            if self.get_int(name) < 0:
                raise ConfigError(f"{name}: must not be negative, got {self.get_int(name)}")
        parse_ip_overrides(self.get_str("max.connections.per.ip.overrides"))
        if int(self.values["log.segment.bytes"]) < 14:  # type: ignore[call-overload]
            raise ConfigError("log.segment.bytes: must be at least 14")
        if self.values["log.cleanup.policy"] not in ("delete", "compact", "compact,delete", "delete,compact"):
            raise ConfigError(f"log.cleanup.policy: invalid value {self.values['log.cleanup.policy']!r}")
        if self.values["compression.type"] not in (
            "producer",
            "uncompressed",
            "gzip",
            "snappy",
            "lz4",
            "zstd",
        ):
            raise ConfigError(f"compression.type: invalid value {self.values['compression.type']!r}")
        for name, low, high, also in (
            ("compression.gzip.level", 1, 9, -1),
            ("compression.lz4.level", 1, 17, None),
            ("compression.zstd.level", -131072, 22, None),
            ("log.local.retention.bytes", -2, LONG_MAX, None),
            ("log.local.retention.ms", -2, LONG_MAX, None),
        ):
            if not (low <= self.get_int(name) <= high or self.get_int(name) == also):
                raise ConfigError(f"{name}: must be between {low} and {high}, got {self.get_int(name)}")
        if self.values["log.message.timestamp.type"] not in ("CreateTime", "LogAppendTime"):
            raise ConfigError("log.message.timestamp.type: must be CreateTime or LogAppendTime")
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ConfigError("group.min.session.timeout.ms exceeds group.max.session.timeout.ms")
        unknown_assignors = set(self.values["group.consumer.assignors"]) - {"uniform", "range"}  # type: ignore[call-overload]
        if unknown_assignors or not self.values["group.consumer.assignors"]:
            raise ConfigError(
                f"group.consumer.assignors: unknown {sorted(unknown_assignors)}; known: range, uniform"
            )

        policy = self.values["group.consumer.migration.policy"]
        if policy not in MIGRATION_POLICIES:
            raise ConfigError(
                f"group.consumer.migration.policy: invalid value {policy!r}; one of {', '.join(MIGRATION_POLICIES)}"
            )

    def _validate_security(self) -> None:
        protocols = self.security_protocol_map
        for listener in self.listeners:
            protocol = protocols.get(listener.name)
            if protocol is None:
                raise ConfigError(
                    f"listener.security.protocol.map: no security protocol for listener {listener.name}"
                )
            if (
                protocol in ("SSL", "SASL_SSL")
                and not self.get_str("ssl.keystore.location")
                # A controller listener may have a listener-prefixed keystore (see validate_cluster_config).
                and not (self.get_str("process.roles") and listener.name in self.controller_listener_names)
            ):
                raise ConfigError(f"ssl.keystore.location: required by {protocol} listener {listener.name}")
        for mechanism in self.sasl_enabled_mechanisms:
            if mechanism not in SUPPORTED_SASL_MECHANISMS:
                raise ConfigError(
                    f"sasl.enabled.mechanisms: {mechanism} is not one of {', '.join(SUPPORTED_SASL_MECHANISMS)}"
                )
        if (
            self.get_str("ssl.keystore.type").upper() != "PEM"
            or self.get_str("ssl.truststore.type").upper() != "PEM"
        ):
            raise ConfigError("ssl.keystore.type / ssl.truststore.type: only PEM files are supported")
        if self.get_str("ssl.client.auth") not in ("none", "requested", "required"):
            raise ConfigError("ssl.client.auth: must be none, requested or required")
        for name in ("quota.window.num", "quota.window.size.seconds"):
            if self.get_int(name) < 1:
                raise ConfigError(f"{name}: must be at least 1")
        for entry in self.super_users:
            if ":" not in entry:
                raise ConfigError(f"super.users: {entry!r} is not Type:name")

    @property
    def security_protocol_map(self) -> dict[str, str]:
        mapping: dict[str, str] = {}
        for item in self.get_str("listener.security.protocol.map").split(","):
            name, sep, protocol = item.strip().partition(":")
            if not item.strip():
                continue
            protocol = protocol.strip().upper()
            if not sep or protocol not in SECURITY_PROTOCOLS:
                raise ConfigError(f"listener.security.protocol.map: {item!r} is not LISTENER:PROTOCOL")
            mapping[name.strip().upper()] = protocol
        return mapping

    def security_protocol(self, listener_name: str) -> str:
        return self.security_protocol_map.get(listener_name, "PLAINTEXT")

    def listener_property(self, listener_name: str, name: str) -> str:
        """`listener.name.<listener>.<name>` when set, else the un-prefixed property (Kafka's lookup)."""
        prefixed = self.extra.get(f"listener.name.{listener_name.lower()}.{name}", "").strip()
        return prefixed or self.get_str(name).strip()

    @property
    def controller_listener_names(self) -> set[str]:
        return {n.strip().upper() for n in self.get_str("controller.listener.names").split(",") if n.strip()}

    @property
    def sasl_enabled_mechanisms(self) -> list[str]:
        return [str(m).upper() for m in self.values["sasl.enabled.mechanisms"]]  # type: ignore[attr-defined]

    @property
    def super_users(self) -> list[str]:
        return [u.strip() for u in self.get_str("super.users").split(";") if u.strip()]

    @property
    def authorizer_enabled(self) -> bool:
        return bool(self.get_str("authorizer.class.name").strip())

    def get_int(self, name: str) -> int:
        return int(self.values[name])  # type: ignore[call-overload]

    def get_bool(self, name: str) -> bool:
        return bool(self.values[name])

    def get_str(self, name: str) -> str:
        return str(self.values[name])

    @property
    def node_id(self) -> int:
        return self.get_int("node.id")

    @property
    def num_partitions(self) -> int:
        return self.get_int("num.partitions")

    @property
    def default_replication_factor(self) -> int:
        return self.get_int("default.replication.factor")

    @property
    def auto_create_topics_enable(self) -> bool:
        return self.get_bool("auto.create.topics.enable")

    @property
    def message_max_bytes(self) -> int:
        return self.get_int("message.max.bytes")

    @property
    def socket_request_max_bytes(self) -> int:
        return self.get_int("socket.request.max.bytes")

    @property
    def offsets_topic_num_partitions(self) -> int:
        return self.get_int("offsets.topic.num.partitions")

    @property
    def group_initial_rebalance_delay_ms(self) -> int:
        return self.get_int("group.initial.rebalance.delay.ms")

    @property
    def group_min_session_timeout_ms(self) -> int:
        return self.get_int("group.min.session.timeout.ms")

    @property
    def group_max_session_timeout_ms(self) -> int:
        return self.get_int("group.max.session.timeout.ms")

    @property
    def log_retention_check_interval_ms(self) -> int:
        return self.get_int("log.retention.check.interval.ms")

    @property
    def metrics_port(self) -> int:
        return self.get_int("metrics.port")

    @property
    def log_retention_ms(self) -> int:
        """Kafka's precedence: log.retention.ms, then .minutes, then .hours."""
        if self.get_int("log.retention.ms") != -2:
            return self.get_int("log.retention.ms")
        if self.get_int("log.retention.minutes") != -2:
            return self.get_int("log.retention.minutes") * 60_000
        return self.get_int("log.retention.hours") * 3_600_000

    @property
    def log_roll_ms(self) -> int:
        if self.get_int("log.roll.ms") != -2:
            return self.get_int("log.roll.ms")
        return self.get_int("log.roll.hours") * 3_600_000

    def broker_value(self, name: str) -> str | None:
        """A broker property as Kafka would print it (derived retention/roll values included)."""
        if name == "log.retention.ms":
            return str(self.log_retention_ms)
        if name == "log.roll.ms":
            return str(self.log_roll_ms)
        if name in self.values:
            value = self.values[name]
            if isinstance(value, bool):
                return "true" if value else "false"
            if isinstance(value, list):
                return ",".join(value)
            return str(value)
        return self.extra.get(name)

    def topic_defaults(self) -> dict[str, str]:
        """Topic-level config defaults as derived from broker properties (Kafka's synonyms)."""
        return {
            topic_name: str(self.broker_value(broker_name))
            for topic_name, broker_name in TOPIC_CONFIG_BROKER_SYNONYMS.items()
        }


# --- cluster nodes (`process.roles`) ----------------------------------------------------------------
# Checked with the rest of the config, so that a node refuses a bad cluster config before it starts.

CLUSTER_ROLES = ("broker", "controller")


def roles_of(config: BrokerConfig) -> set[str]:
    return {r.strip() for r in config.get_str("process.roles").split(",") if r.strip()}


def parse_voters(text: str) -> dict[int, tuple[str, int]]:
    """`controller.quorum.voters`: `1@host:9093,2@host:9094` -> {1: ("host", 9093), ...}."""
    voters: dict[int, tuple[str, int]] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        node, at, address = item.partition("@")
        host, colon, port = address.rpartition(":")
        if not at or not colon:
            raise ValueError(f"controller.quorum.voters: {item!r} is not id@host:port")
        voters[int(node)] = (host.strip("[]"), int(port))
    return voters


def parse_bootstrap_servers(text: str) -> list[tuple[str, int]]:
    """`controller.quorum.bootstrap.servers`: `host:9093,host:9094` -> [("host", 9093), ...]."""
    servers = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        host, colon, port = item.rpartition(":")
        if not colon or not port.isdigit():
            raise ValueError(f"controller.quorum.bootstrap.servers: {item!r} is not host:port")
        servers.append((host.strip("[]"), int(port)))
    return servers


def is_dynamic_quorum(config: BrokerConfig) -> bool:
    """KIP-853: `controller.quorum.bootstrap.servers` without `controller.quorum.voters` (Kafka lets
    the static voters win when both are set)."""
    return not config.get_str("controller.quorum.voters").strip() and bool(
        config.get_str("controller.quorum.bootstrap.servers").strip()
    )


def controller_addresses(config: BrokerConfig) -> dict[int, tuple[str, int]]:
    """Where a node dials the quorum: the static voters by id, or the bootstrap servers under
    negative ids (Kafka's convention: their node ids are unknown until they answer)."""
    if is_dynamic_quorum(config):
        servers = parse_bootstrap_servers(config.get_str("controller.quorum.bootstrap.servers"))
        return {-(position + 1): address for position, address in enumerate(servers)}
    return parse_voters(config.get_str("controller.quorum.voters"))


def client_ssl_context(
    *,
    truststore: Path | None,
    keystore: Path | None,
    key_password: str | None,
    check_hostname: bool,
    purpose: str,
) -> ssl.SSLContext:
    """A TLS client context for dialing peers; without a truststore the system's CAs verify them
    (as Kafka falls back to the JVM's). `purpose` names the setting in the ConfigError."""
    try:
        context = ssl.create_default_context(cafile=str(truststore) if truststore else None)
        context.check_hostname = check_hostname
        if keystore is not None:
            context.load_cert_chain(str(keystore), password=key_password or None)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"{purpose}: cannot load the truststore or keystore: {exc}") from None
    return context


CONTROLLER_PROTOCOLS = ("PLAINTEXT", "SSL")


@dataclass(frozen=True, slots=True)
class ControllerTls:
    listener_name: str
    keystore: Path
    truststore: Path
    key_password: str | None = field(default=None, repr=False)
    check_hostname: bool = True

    def server_context(self) -> ssl.SSLContext:
        """The controller listener's context: a client certificate signed by the truststore is required."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            context.load_cert_chain(str(self.keystore), password=self.key_password)
            context.load_verify_locations(cafile=str(self.truststore))
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"{self.listener_name} controller listener TLS: cannot load {exc}") from None
        context.verify_mode = ssl.CERT_REQUIRED
        return context

    def client_context(self) -> ssl.SSLContext:
        """For dialing controllers: our certificate, and only the truststore's CA is believed."""
        return client_ssl_context(
            truststore=self.truststore,
            keystore=self.keystore,
            key_password=self.key_password,
            check_hostname=self.check_hostname,
            purpose=f"{self.listener_name} controller listener TLS",
        )


def controller_protocol(config: BrokerConfig) -> tuple[str, str]:
    """(name, security protocol) of the controller listener this node serves or dials."""
    names = sorted(config.controller_listener_names)
    served = [listener.name for listener in config.listeners if listener.name in names]
    # Kafka dials the first name of controller.listener.names; a controller serves the one it has.
    name = served[0] if served else (names[0] if names else "CONTROLLER")
    return name, config.security_protocol(name)


def controller_tls(config: BrokerConfig) -> ControllerTls | None:
    """The controller listener's TLS files, or None when it is PLAINTEXT. Raises ConfigError."""
    name, protocol = controller_protocol(config)
    if protocol not in CONTROLLER_PROTOCOLS:
        raise ConfigError(f"{name}: the controller listener supports PLAINTEXT or SSL, not {protocol}")
    if protocol == "PLAINTEXT":
        return None
    keystore = config.listener_property(name, "ssl.keystore.location")
    truststore = config.listener_property(name, "ssl.truststore.location")
    prefix = f"listener.name.{name.lower()}."
    if not keystore:
        raise ConfigError(
            f"{prefix}ssl.keystore.location (or ssl.keystore.location): required by the SSL controller "
            "listener (its certificate, presented to peers)"
        )
    if not truststore:
        raise ConfigError(
            f"{prefix}ssl.truststore.location (or ssl.truststore.location): required by the SSL controller "
            "listener (the CA that signed every node's certificate)"
        )
    algorithm = config.listener_property(name, "ssl.endpoint.identification.algorithm")
    if f"{prefix}ssl.endpoint.identification.algorithm" in config.extra:
        # An explicitly empty prefixed value turns the check off even when the global one is https.
        algorithm = config.extra[f"{prefix}ssl.endpoint.identification.algorithm"].strip()
    return ControllerTls(
        listener_name=name,
        keystore=Path(keystore),
        truststore=Path(truststore),
        key_password=config.listener_property(name, "ssl.key.password") or None,
        check_hostname=algorithm.lower() == "https",
    )


def validate_cluster_config(config: BrokerConfig) -> None:
    roles = roles_of(config)
    unknown = roles - set(CLUSTER_ROLES)
    if unknown or not roles:
        raise ConfigError(
            f"process.roles: {config.get_str('process.roles')!r} is not broker, controller or both"
        )
    try:
        voters = parse_voters(config.get_str("controller.quorum.voters"))
        bootstrap = parse_bootstrap_servers(config.get_str("controller.quorum.bootstrap.servers"))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if not voters and not bootstrap:
        raise ConfigError(
            "controller.quorum.voters or controller.quorum.bootstrap.servers: one is required "
            "when process.roles is set"
        )
    if not voters and not config.get_str("cluster.id").strip():
        # A dynamic quorum's controllers change: the id cannot be derived from them.
        raise ConfigError("cluster.id: required with controller.quorum.bootstrap.servers (a dynamic quorum)")
    names = config.controller_listener_names
    controller_listeners = [listener for listener in config.listeners if listener.name in names]
    if "controller" in roles:
        if voters and config.node_id not in voters:
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
