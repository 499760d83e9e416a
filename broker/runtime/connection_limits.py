"""Kafka's `max.connections`, `max.connections.per.ip` and `max.connections.per.ip.overrides`, and
the limits a listener that is not the broker's own (the controller's) takes from the same config."""

from __future__ import annotations

import collections
from collections.abc import Mapping
from dataclasses import dataclass, field

from broker.config import BrokerConfig, parse_ip_overrides


class ConnectionLimits:
    def __init__(self, max_connections: int, max_per_ip: int, overrides: dict[str, int]) -> None:
        self.max_connections = max_connections
        self.max_per_ip = max_per_ip
        self.overrides = overrides
        self.total = 0
        self._per_ip: collections.Counter[str] = collections.Counter()

    @classmethod
    def from_config(cls, config: BrokerConfig) -> ConnectionLimits:
        limits = cls(0, 0, {})
        limits.reconfigure(config)
        return limits

    def reconfigure(self, config: BrokerConfig) -> None:
        """New limits (dynamic broker configs); connections already open stay open, as in Kafka."""
        self.max_connections = config.get_int("max.connections")
        self.max_per_ip = config.get_int("max.connections.per.ip")
        self.overrides = parse_ip_overrides(config.get_str("max.connections.per.ip.overrides"))

    def admit(self, host: str) -> str | None:
        """Count a new connection from `host`; the reason it is refused (then not counted), or None."""
        if self.total >= self.max_connections:
            return f"max.connections ({self.max_connections}) reached"
        limit = self.overrides.get(host, self.max_per_ip)
        if self._per_ip[host] >= limit:
            return f"max.connections.per.ip ({limit}) reached for {host}"
        self.total += 1
        self._per_ip[host] += 1
        return None

    def release(self, host: str) -> None:
        self.total -= 1
        self._per_ip[host] -= 1
        if self._per_ip[host] <= 0:
            del self._per_ip[host]


@dataclass(frozen=True, slots=True)
class ListenerLimits:
    """What one listener allows its clients, by Kafka's broker properties (defaults as Kafka's)."""

    max_connections: int = 2_147_483_647
    max_connections_per_ip: int = 2_147_483_647
    per_ip_overrides: Mapping[str, int] = field(default_factory=dict)
    # queued.max.request.bytes: request bytes all connections together hold (-1: unbounded).
    queued_max_request_bytes: int = 536_870_912
    # socket.request.max.bytes
    max_request_bytes: int = 104_857_600
    # connections.max.idle.ms: a connection silent this long is closed.
    max_idle_s: float = 600.0

    @classmethod
    def from_config(cls, config: BrokerConfig) -> ListenerLimits:
        return cls(
            max_connections=config.get_int("max.connections"),
            max_connections_per_ip=config.get_int("max.connections.per.ip"),
            per_ip_overrides=parse_ip_overrides(config.get_str("max.connections.per.ip.overrides")),
            queued_max_request_bytes=config.get_int("queued.max.request.bytes"),
            max_request_bytes=config.get_int("socket.request.max.bytes"),
            max_idle_s=config.get_int("connections.max.idle.ms") / 1000,
        )

    def connection_limits(self) -> ConnectionLimits:
        return ConnectionLimits(
            self.max_connections, self.max_connections_per_ip, dict(self.per_ip_overrides)
        )
