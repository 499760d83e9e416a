"""Topic-level log configuration with Kafka's names, defaults and validation rules."""

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from broker.config import TOPIC_CONFIG_BROKER_SYNONYMS
from broker.log.errors import InvalidConfigError

LONG_MAX = 9223372036854775807
HOUR_MS = 3_600_000

# Every topic config the broker understands, with Kafka's default (REFERENCE.md section 3).
TOPIC_CONFIG_DEFAULTS: dict[str, str] = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "delete.retention.ms": "86400000",
    "file.delete.delay.ms": "60000",
    "flush.messages": str(LONG_MAX),
    "flush.ms": str(LONG_MAX),
    "index.interval.bytes": "4096",
    "max.compaction.lag.ms": str(LONG_MAX),
    "max.message.bytes": "1048588",
    "message.timestamp.type": "CreateTime",
    "message.timestamp.before.max.ms": str(LONG_MAX),
    # Kafka 4.0 bounds future timestamps to an hour by default (KIP-1030).
    "message.timestamp.after.max.ms": str(HOUR_MS),
    "min.cleanable.dirty.ratio": "0.5",
    "min.compaction.lag.ms": "0",
    "min.insync.replicas": "1",
    "preallocate": "false",
    "retention.bytes": "-1",
    "retention.ms": "604800000",
    "segment.bytes": "1073741824",
    "segment.index.bytes": "10485760",
    "segment.jitter.ms": "0",
    "segment.ms": "604800000",
    "unclean.leader.election.enable": "false",
}

COMPRESSION_TYPES = frozenset({"producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"})
TIMESTAMP_TYPES = frozenset({"CreateTime", "LogAppendTime"})
CLEANUP_POLICIES = frozenset({"delete", "compact"})


def _parse_long(minimum: int | None = None) -> Callable[[str, str], int]:
    def parse(name: str, raw: str) -> int:
        try:
            value = int(raw.strip())
        except ValueError:
            raise InvalidConfigError(name, f"{raw!r} is not an integer") from None
        if not -LONG_MAX - 1 <= value <= LONG_MAX:
            raise InvalidConfigError(name, f"{raw!r} does not fit in a 64-bit integer")
        if minimum is not None and value < minimum:
            raise InvalidConfigError(name, f"{value} is below the minimum {minimum}")
        return value

    return parse


def _parse_int(minimum: int) -> Callable[[str, str], int]:
    parse_long = _parse_long(minimum)

    def parse(name: str, raw: str) -> int:
        value = parse_long(name, raw)
        if value > 2**31 - 1:
            raise InvalidConfigError(name, f"{value} does not fit in a 32-bit integer")
        return value

    return parse


def _parse_ratio(name: str, raw: str) -> float:
    try:
        value = float(raw.strip())
    except ValueError:
        raise InvalidConfigError(name, f"{raw!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise InvalidConfigError(name, f"{value} is not between 0 and 1")
    return value


def _parse_bool(name: str, raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered not in ("true", "false"):
        raise InvalidConfigError(name, f"{raw!r} is not true or false")
    return lowered == "true"


def _parse_choice(choices: frozenset[str], *, case_sensitive: bool = True) -> Callable[[str, str], str]:
    def parse(name: str, raw: str) -> str:
        value = raw.strip()
        if not case_sensitive:
            value = value.lower()
        if value not in choices:
            raise InvalidConfigError(name, f"{raw!r} is not one of {sorted(choices)}")
        return value

    return parse


def _parse_cleanup_policy(name: str, raw: str) -> frozenset[str]:
    policies = frozenset(part.strip().lower() for part in raw.split(",") if part.strip())
    unknown = policies - CLEANUP_POLICIES
    if unknown:
        raise InvalidConfigError(name, f"unknown policy {sorted(unknown)}")
    return policies


# Kafka name -> (field, parser). Minimums follow Kafka's LogConfig.
_FIELDS: dict[str, tuple[str, Callable[[str, str], Any]]] = {
    "segment.bytes": ("segment_bytes", _parse_int(14)),
    "segment.ms": ("segment_ms", _parse_long(1)),
    "segment.jitter.ms": ("segment_jitter_ms", _parse_long(0)),
    "segment.index.bytes": ("segment_index_bytes", _parse_int(4)),
    "index.interval.bytes": ("index_interval_bytes", _parse_int(0)),
    "retention.bytes": ("retention_bytes", _parse_long()),
    "retention.ms": ("retention_ms", _parse_long(-1)),
    "cleanup.policy": ("cleanup_policy", _parse_cleanup_policy),
    "delete.retention.ms": ("delete_retention_ms", _parse_long(0)),
    "min.compaction.lag.ms": ("min_compaction_lag_ms", _parse_long(0)),
    "max.compaction.lag.ms": ("max_compaction_lag_ms", _parse_long(1)),
    "min.cleanable.dirty.ratio": ("min_cleanable_dirty_ratio", _parse_ratio),
    "max.message.bytes": ("max_message_bytes", _parse_int(0)),
    "message.timestamp.type": ("message_timestamp_type", _parse_choice(TIMESTAMP_TYPES)),
    "message.timestamp.before.max.ms": ("message_timestamp_before_max_ms", _parse_long(0)),
    "message.timestamp.after.max.ms": ("message_timestamp_after_max_ms", _parse_long(0)),
    "compression.type": ("compression_type", _parse_choice(COMPRESSION_TYPES, case_sensitive=False)),
    "flush.messages": ("flush_messages", _parse_long(1)),
    "flush.ms": ("flush_ms", _parse_long(0)),
    "file.delete.delay.ms": ("file_delete_delay_ms", _parse_long(0)),
    "preallocate": ("preallocate", _parse_bool),
    "min.insync.replicas": ("min_insync_replicas", _parse_int(1)),
    "unclean.leader.election.enable": ("unclean_leader_election_enable", _parse_bool),
}


@dataclass(frozen=True)
class LogConfig:
    """One topic's effective log settings (Kafka topic-config semantics)."""

    segment_bytes: int = 1073741824
    segment_ms: int = 604800000
    segment_jitter_ms: int = 0
    segment_index_bytes: int = 10485760
    index_interval_bytes: int = 4096
    retention_bytes: int = -1
    retention_ms: int = 604800000
    cleanup_policy: frozenset[str] = frozenset({"delete"})
    delete_retention_ms: int = 86400000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    min_cleanable_dirty_ratio: float = 0.5
    max_message_bytes: int = 1048588
    message_timestamp_type: str = "CreateTime"
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = HOUR_MS
    compression_type: str = "producer"
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    file_delete_delay_ms: int = 60000
    preallocate: bool = False
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False

    @classmethod
    def from_properties(cls, props: Mapping[str, str], base: "LogConfig | None" = None) -> "LogConfig":
        """Overlay Kafka-named properties on `base` (or the defaults); raises InvalidConfigError."""
        changes: dict[str, Any] = {}
        for name, raw in props.items():
            if name not in _FIELDS:
                raise InvalidConfigError(name, "unknown topic config")
            if raw is None:
                raise InvalidConfigError(name, "a value is required")
            field, parse = _FIELDS[name]
            changes[field] = parse(name, str(raw))
        config = dataclasses.replace(base or cls(), **changes)
        if config.min_compaction_lag_ms > config.max_compaction_lag_ms:
            raise InvalidConfigError("min.compaction.lag.ms", "must not exceed max.compaction.lag.ms")
        return config

    def to_properties(self) -> dict[str, str]:
        """Kafka names and string values, as DescribeConfigs reports them."""
        out: dict[str, str] = {}
        for name, (field, _) in _FIELDS.items():
            value = getattr(self, field)
            if isinstance(value, bool):
                out[name] = "true" if value else "false"
            elif isinstance(value, frozenset):
                out[name] = ",".join(sorted(value))
            else:
                out[name] = str(value)
        return out

    @property
    def compacted(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def deletes(self) -> bool:
        return "delete" in self.cleanup_policy

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == "LogAppendTime"


def known_topic_configs() -> frozenset[str]:
    """Every topic config a client may set or describe: the log's own and the broker synonyms'."""
    return frozenset(TOPIC_CONFIG_DEFAULTS) | frozenset(TOPIC_CONFIG_BROKER_SYNONYMS)
