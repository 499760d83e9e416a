"""Replication settings, read from the broker's properties (Kafka's names and defaults).

They are not in `broker.config.BROKER_DEFAULTS`: replication is optional, and these arrive
through `BrokerConfig.extra` like any property that module does not know.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from broker.config import BrokerConfig, ConfigError


@dataclass(frozen=True, slots=True)
class ReplicationConfig:
    node_id: int
    replica_lag_time_max_ms: int = 30_000
    replica_fetch_wait_max_ms: int = 500
    replica_fetch_min_bytes: int = 1
    replica_fetch_max_bytes: int = 1_048_576
    replica_fetch_response_max_bytes: int = 10_485_760
    replica_fetch_backoff_ms: int = 1_000
    replica_socket_timeout_ms: int = 30_000
    high_watermark_checkpoint_interval_ms: int = 5_000
    # Bytes/s for replicas that are catching up (not in the ISR); None: unthrottled.
    leader_replication_throttled_rate: int | None = None
    follower_replication_throttled_rate: int | None = None
    # Test/bootstrap only: a JSON file fixing leaders and replicas (see static_assignments.py).
    static_assignments: Path | None = None

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> ReplicationConfig:
        extra = config.extra

        def number(name: str, default: int, minimum: int = 0) -> int:
            text = extra.get(name)
            if text is None:
                return default
            try:
                value = int(text)
            except ValueError:
                raise ConfigError(f"{name}: expected an integer, got {text!r}") from None
            if value < minimum:
                raise ConfigError(f"{name}: must be at least {minimum}, got {value}")
            return value

        def rate(name: str) -> int | None:
            value = number(name, -1, minimum=-1)
            # Kafka's default is Long.MAX_VALUE (no throttle); -1 and 0 mean the same here.
            return value if value > 0 else None

        static = extra.get("replication.static.assignments", "").strip()
        return cls(
            node_id=config.node_id,
            replica_lag_time_max_ms=number("replica.lag.time.max.ms", 30_000, 1),
            replica_fetch_wait_max_ms=number("replica.fetch.wait.max.ms", 500),
            replica_fetch_min_bytes=number("replica.fetch.min.bytes", 1, 1),
            replica_fetch_max_bytes=config.get_int("replica.fetch.max.bytes"),
            replica_fetch_response_max_bytes=number("replica.fetch.response.max.bytes", 10_485_760, 1),
            replica_fetch_backoff_ms=number("replica.fetch.backoff.ms", 1_000),
            replica_socket_timeout_ms=number("replica.socket.timeout.ms", 30_000, 1),
            high_watermark_checkpoint_interval_ms=number(
                "replica.high.watermark.checkpoint.interval.ms", 5_000, 1
            ),
            leader_replication_throttled_rate=rate("leader.replication.throttled.rate"),
            follower_replication_throttled_rate=rate("follower.replication.throttled.rate"),
            static_assignments=Path(static) if static else None,
        )
