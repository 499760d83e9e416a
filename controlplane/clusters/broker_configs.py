"""Broker config overrides a cluster spec may carry: Kafka's own property names, checked by type.

The provisioner owns the properties that place a broker on this host (ids, listeners, data dirs) and
secure it (SASL, super users, the authorizer), so a spec cannot set those.
"""

from __future__ import annotations

INT, LONG, BOOL, DOUBLE, STRING, LIST = "int", "long", "boolean", "double", "string", "list"

# Kafka broker properties a spec may override, with their types. Unknown names are refused: a typo in
# a config name would otherwise be silently ignored by the broker.
KNOWN_BROKER_CONFIGS: dict[str, str] = {
    "auto.create.topics.enable": BOOL,
    "auto.leader.rebalance.enable": BOOL,
    "compression.type": STRING,
    "connections.max.idle.ms": LONG,
    "default.replication.factor": INT,
    "delete.topic.enable": BOOL,
    "follower.replication.throttled.rate": LONG,
    "group.initial.rebalance.delay.ms": INT,
    "group.max.session.timeout.ms": INT,
    "group.max.size": INT,
    "group.min.session.timeout.ms": INT,
    "leader.replication.throttled.rate": LONG,
    "log.cleaner.backoff.ms": LONG,
    "log.cleaner.delete.retention.ms": LONG,
    "log.cleaner.enable": BOOL,
    "log.cleaner.max.compaction.lag.ms": LONG,
    "log.cleaner.min.cleanable.ratio": DOUBLE,
    "log.cleaner.min.compaction.lag.ms": LONG,
    "log.cleaner.threads": INT,
    "log.cleanup.policy": LIST,
    "log.flush.interval.messages": LONG,
    "log.flush.interval.ms": LONG,
    "log.flush.scheduler.interval.ms": LONG,
    "log.index.interval.bytes": INT,
    "log.index.size.max.bytes": INT,
    "log.message.timestamp.after.max.ms": LONG,
    "log.message.timestamp.before.max.ms": LONG,
    "log.message.timestamp.type": STRING,
    "log.preallocate": BOOL,
    "log.retention.bytes": LONG,
    "log.retention.check.interval.ms": LONG,
    "log.retention.hours": INT,
    "log.retention.minutes": INT,
    "log.retention.ms": LONG,
    "log.roll.hours": INT,
    "log.roll.jitter.ms": LONG,
    "log.roll.ms": LONG,
    "log.segment.bytes": INT,
    "log.segment.delete.delay.ms": LONG,
    "max.connections": INT,
    "max.connections.per.ip": INT,
    "message.max.bytes": INT,
    "min.insync.replicas": INT,
    "num.io.threads": INT,
    "num.network.threads": INT,
    "num.partitions": INT,
    "num.recovery.threads.per.data.dir": INT,
    "offsets.commit.timeout.ms": INT,
    "offsets.retention.check.interval.ms": LONG,
    "offsets.retention.minutes": INT,
    "offsets.topic.num.partitions": INT,
    "offsets.topic.replication.factor": INT,
    "offsets.topic.segment.bytes": INT,
    "producer.id.expiration.ms": INT,
    "queued.max.requests": INT,
    "replica.fetch.max.bytes": INT,
    "replica.lag.time.max.ms": LONG,
    "socket.receive.buffer.bytes": INT,
    "socket.request.max.bytes": INT,
    "socket.send.buffer.bytes": INT,
    "transaction.state.log.min.isr": INT,
    "transaction.state.log.replication.factor": INT,
    "transactional.id.expiration.ms": INT,
    "unclean.leader.election.enable": BOOL,
}

# Set by the provisioner for each node; a spec that sets them would break the placement.
PROVISIONER_OWNED = frozenset(
    {
        "node.id",
        "broker.id",
        "listeners",
        "advertised.listeners",
        "listener.security.protocol.map",
        "inter.broker.listener.name",
        "log.dirs",
        "log.dir",
        "metrics.port",
        "metrics.host",
        "cluster.id",
        "process.roles",
        "controller.quorum.voters",
        "controller.listener.names",
        # Security is the provisioner's too: a spec could otherwise lock the control plane out.
        "sasl.enabled.mechanisms",
        "sasl.bootstrap.users",
        "super.users",
        "authorizer.class.name",
        "allow.everyone.if.no.acl.found",
    }
)


class InvalidBrokerConfig(ValueError):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


_INT_RANGES = {INT: (-(2**31), 2**31 - 1), LONG: (-(2**63), 2**63 - 1)}


def _type_error(name: str, kind: str, value: object) -> str | None:
    text = str(value).strip()
    if kind in _INT_RANGES:
        if isinstance(value, bool):
            return f"{name} must be an integer, not {value!r}."
        try:
            number = int(text)
        except ValueError:
            return f"{name} must be an integer, not {value!r}."
        low, high = _INT_RANGES[kind]
        return None if low <= number <= high else f"{name} is out of range for a Kafka {kind}."
    if kind == BOOL:
        return None if text.lower() in ("true", "false") else f"{name} must be true or false."
    if kind == DOUBLE:
        try:
            float(text)
        except ValueError:
            return f"{name} must be a number, not {value!r}."
        return None
    if not text:
        return f"{name} must not be empty."
    return None


def validate_broker_config(overrides: object) -> dict[str, str]:
    """The overrides as Kafka property strings, or InvalidBrokerConfig listing every problem found."""
    if not isinstance(overrides, dict):
        raise InvalidBrokerConfig(["Broker config must be an object of Kafka property names to values."])
    problems: list[str] = []
    normalized: dict[str, str] = {}
    for name, value in overrides.items():
        if name in PROVISIONER_OWNED:
            problems.append(f"{name} is set by the provisioner and cannot be overridden.")
        elif name not in KNOWN_BROKER_CONFIGS:
            problems.append(f"{name} is not a known Kafka broker config.")
        elif isinstance(value, dict | list) or value is None:
            problems.append(f"{name} must be a single value.")
        elif any(ord(char) < 32 for char in str(value)):
            # A line break would let a value write other properties into broker.properties.
            problems.append(f"{name} must not contain control characters.")
        elif (error := _type_error(name, KNOWN_BROKER_CONFIGS[name], value)) is not None:
            problems.append(error)
        else:
            normalized[name] = str(value).lower() if isinstance(value, bool) else str(value).strip()
    if problems:
        raise InvalidBrokerConfig(problems)
    return normalized
