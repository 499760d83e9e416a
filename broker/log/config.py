"""Topic-level log configuration with Kafka's names, defaults and validation rules."""

import dataclasses
import re
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
    # Kafka 4.2's levels for the codecs the broker recompresses with (KIP-390), Kafka's defaults.
    "compression.gzip.level": "-1",
    "compression.lz4.level": "9",
    "compression.zstd.level": "3",
    # Accepted and stored with Kafka's defaults, no effect here: replication throttles (quotas on replication
    # traffic are not implemented) and tiered storage (KIP-405; there is no remote storage, so
    # remote.storage.enable=true is refused as Kafka refuses it on a broker without remote storage).
    "leader.replication.throttled.replicas": "",
    "follower.replication.throttled.replicas": "",
    "local.retention.bytes": "-2",
    "local.retention.ms": "-2",
    "remote.storage.enable": "false",
    "remote.log.copy.disable": "false",
    "remote.log.delete.on.disable": "false",
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


def _parse_range(low: int, high: int, *, also: int | None = None) -> Callable[[str, str], int]:
    parse_int = _parse_int(-(2**31))

    def parse(name: str, raw: str) -> int:
        value = parse_int(name, raw)
        if not (low <= value <= high or value == also):
            extra = f" or equal to {also}" if also is not None else ""
            raise InvalidConfigError(name, f"Value must be between {low} and {high}{extra}")
        return value

    return parse


_THROTTLED_REPLICA = re.compile(r"\d+:\d+")


def _parse_throttled_replicas(name: str, raw: str) -> str:
    """`*` or `partition:broker,…` (Kafka's ThrottledReplicaListValidator; empty is no throttle)."""
    value = raw.strip()
    entries = value.split(",") if value else []
    if value != "*" and not all(_THROTTLED_REPLICA.fullmatch(entry) for entry in entries):
        raise InvalidConfigError(
            name,
            f"{name} must be the literal '*' or a list of replicas in the following format: "
            "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
        )
    return value


def _parse_remote_storage_enable(name: str, raw: str) -> bool:
    if _parse_bool(name, raw):
        raise InvalidConfigError(
            name,
            "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote "
            "log storage.",
        )
    return False


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
    "compression.gzip.level": ("compression_gzip_level", _parse_range(1, 9, also=-1)),
    "compression.lz4.level": ("compression_lz4_level", _parse_range(1, 17)),
    "compression.zstd.level": ("compression_zstd_level", _parse_range(-131072, 22)),
    "leader.replication.throttled.replicas": (
        "leader_replication_throttled_replicas",
        _parse_throttled_replicas,
    ),
    "follower.replication.throttled.replicas": (
        "follower_replication_throttled_replicas",
        _parse_throttled_replicas,
    ),
    "local.retention.bytes": ("local_retention_bytes", _parse_long(-2)),
    "local.retention.ms": ("local_retention_ms", _parse_long(-2)),
    "remote.storage.enable": ("remote_storage_enable", _parse_remote_storage_enable),
    "remote.log.copy.disable": ("remote_log_copy_disable", _parse_bool),
    "remote.log.delete.on.disable": ("remote_log_delete_on_disable", _parse_bool),
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
    compression_gzip_level: int = -1
    compression_lz4_level: int = 9
    compression_zstd_level: int = 3
    leader_replication_throttled_replicas: str = ""
    follower_replication_throttled_replicas: str = ""
    local_retention_bytes: int = -2
    local_retention_ms: int = -2
    remote_storage_enable: bool = False
    remote_log_copy_disable: bool = False
    remote_log_delete_on_disable: bool = False

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


def compression_level(config: LogConfig, codec_name: str) -> int | None:
    """The level the topic's config names for a codec the broker compresses with (None: the codec has none);
    Kafka's gzip -1 is zlib's default, 6."""
    match codec_name:
        case "gzip":
            return 6 if config.compression_gzip_level == -1 else config.compression_gzip_level
        case "lz4":
            return config.compression_lz4_level
        case "zstd":
            return config.compression_zstd_level
    return None


def known_topic_configs() -> frozenset[str]:
    """Every topic config a client may set or describe: the log's own and the broker synonyms'."""
    return frozenset(TOPIC_CONFIG_DEFAULTS) | frozenset(TOPIC_CONFIG_BROKER_SYNONYMS)
