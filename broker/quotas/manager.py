"""Quota lookup with Kafka's precedence, per-client measurement and throttle times.

Quotas live in the SecurityStore keyed by entity (user, client-id, user+client-id, ip and
their defaults). For a (user, client-id) the first entity below that defines the key wins,
and it also decides which clients share one measurement (Kafka's ClientQuotaManager):

  1 user + client-id   2 user + default client-id   3 user
  4 default user + client-id   5 default user + default client-id   6 default user
  7 client-id   8 default client-id
"""

from __future__ import annotations

from broker.metadata.security_records import QuotaEntity
from broker.metadata.security_registry import SecurityStore
from broker.quotas.rate import WindowedRate

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"

CLIENT_KEYS = frozenset(
    {PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE, REQUEST_PERCENTAGE, CONTROLLER_MUTATION_RATE}
)
IP_KEYS = frozenset({CONNECTION_CREATION_RATE})
USER, CLIENT_ID, IP = "user", "client-id", "ip"

# Sensor key: (quota key, user tag, client-id tag).
SensorKey = tuple[str, str, str]


def entity_key(components: dict[str, str | None]) -> QuotaEntity:
    return tuple(sorted(components.items()))


def _candidates(user: str, client_id: str) -> list[tuple[QuotaEntity, str, str]]:
    """(entity, user tag, client-id tag) in precedence order."""
    return [
        (entity_key({USER: user, CLIENT_ID: client_id}), user, client_id),
        (entity_key({USER: user, CLIENT_ID: None}), user, client_id),
        (entity_key({USER: user}), user, ""),
        (entity_key({USER: None, CLIENT_ID: client_id}), user, client_id),
        (entity_key({USER: None, CLIENT_ID: None}), user, client_id),
        (entity_key({USER: None}), user, ""),
        (entity_key({CLIENT_ID: client_id}), "", client_id),
        (entity_key({CLIENT_ID: None}), "", client_id),
    ]


class QuotaManager:
    MAX_SENSORS = 100_000

    def __init__(self, security: SecurityStore, *, num_windows: int, window_s: float) -> None:
        self._security = security
        self.num_windows = num_windows
        self.window_s = window_s
        self._resolved: dict[tuple[str, str, str], tuple[float, SensorKey] | None] = {}
        self._sensors: dict[SensorKey, WindowedRate] = {}
        self._ip_sensors: dict[str, WindowedRate] = {}
        self.enabled = bool(security.quotas)
        security.add_listener(self._quotas_changed)

    def _quotas_changed(self) -> None:
        self._resolved = {}
        self.enabled = bool(self._security.quotas)

    def resolve(self, key: str, user: str, client_id: str) -> tuple[float, SensorKey] | None:
        """The quota that applies and the sensor that measures it, or None (unlimited)."""
        cache_key = (key, user, client_id)
        if cache_key in self._resolved:
            return self._resolved[cache_key]
        found = None
        quotas = self._security.quotas
        for entity, user_tag, client_tag in _candidates(user, client_id):
            values = quotas.get(entity)
            if values is not None and key in values:
                found = (values[key], (key, user_tag, client_tag))
                break
        self._resolved[cache_key] = found
        return found

    def _sensor(self, sensor_key: SensorKey, now: float) -> WindowedRate:
        sensor = self._sensors.get(sensor_key)
        if sensor is None:
            if len(self._sensors) >= self.MAX_SENSORS:
                self._sensors.clear()
            sensor = self._sensors[sensor_key] = WindowedRate(self.num_windows, self.window_s, now)
        return sensor

    def record(self, key: str, user: str, client_id: str, value: float, now: float) -> float:
        """Record `value` against the client's quota; returns the throttle time in seconds."""
        if not self.enabled:
            return 0.0
        quota = self.resolve(key, user, client_id)
        if quota is None:
            return 0.0
        limit, sensor_key = quota
        sensor = self._sensor(sensor_key, now)
        sensor.record(value, now)
        return sensor.throttle_s(limit, now, self.window_s) if limit > 0 else self.window_s

    def throttle(self, key: str, user: str, client_id: str, now: float) -> float:
        """The throttle time the client has earned so far, without recording anything."""
        if not self.enabled:
            return 0.0
        quota = self.resolve(key, user, client_id)
        if quota is None:
            return 0.0
        limit, sensor_key = quota
        if limit <= 0:
            return self.window_s
        return self._sensor(sensor_key, now).throttle_s(limit, now, self.window_s)

    def headroom(self, key: str, user: str, client_id: str, now: float) -> float | None:
        """Bytes (or units) the client may still use before it is over its quota; None: no quota."""
        if not self.enabled:
            return None
        quota = self.resolve(key, user, client_id)
        if quota is None:
            return None
        limit, sensor_key = quota
        return self._sensor(sensor_key, now).headroom(limit, now)

    def limit(self, key: str, user: str, client_id: str) -> float | None:
        quota = self.resolve(key, user, client_id) if self.enabled else None
        return quota[0] if quota is not None else None

    def accept_connection(self, ip: str, now: float) -> bool:
        """Per-IP connection_creation_rate: False if this connection would exceed it."""
        if not self.enabled:
            return True
        quotas = self._security.quotas
        values = quotas.get(entity_key({IP: ip})) or quotas.get(entity_key({IP: None})) or {}
        limit = values.get(CONNECTION_CREATION_RATE)
        if limit is None:
            return True
        sensor = self._ip_sensors.get(ip)
        if sensor is None:
            if len(self._ip_sensors) >= self.MAX_SENSORS:
                self._ip_sensors.clear()
            sensor = self._ip_sensors[ip] = WindowedRate(self.num_windows, self.window_s, now)
        if sensor.rate(now) * sensor.elapsed(now) + 1 > limit * sensor.elapsed(now):
            return False
        sensor.record(1, now)
        return True
