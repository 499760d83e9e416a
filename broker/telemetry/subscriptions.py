"""CLIENT_METRICS config resources (resource type 16): a named subscription of `metrics` name prefixes,
pushed every `interval.ms` by the clients its `match` selectors pick. Validated as Kafka 4.0 validates them
(ClientMetricsConfigs): an unknown config or an interval out of range is INVALID_REQUEST, a bad number or
match pattern INVALID_CONFIG."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

METRICS = "metrics"
INTERVAL_MS = "interval.ms"
MATCH = "match"
CONFIG_NAMES = (INTERVAL_MS, MATCH, METRICS)

DEFAULT_INTERVAL_MS = 300_000
MIN_INTERVAL_MS = 100
MAX_INTERVAL_MS = 3_600_000
# In `metrics`, "*" subscribes every metric (and is what clients are sent then).
ALL_METRICS = "*"

CLIENT_INSTANCE_ID = "client_instance_id"
CLIENT_ID = "client_id"
CLIENT_SOFTWARE_NAME = "client_software_name"
CLIENT_SOFTWARE_VERSION = "client_software_version"
CLIENT_SOURCE_ADDRESS = "client_source_address"
CLIENT_SOURCE_PORT = "client_source_port"
MATCH_KEYS = frozenset(
    {
        CLIENT_INSTANCE_ID,
        CLIENT_ID,
        CLIENT_SOFTWARE_NAME,
        CLIENT_SOFTWARE_VERSION,
        CLIENT_SOURCE_ADDRESS,
        CLIENT_SOURCE_PORT,
    }
)
# Subscriptions a cluster may hold: every broker keeps them all and matches each new client against them.
MAX_SUBSCRIPTIONS = 1_000

# Kafka's DescribeConfigs types for the three configs (INT, LIST).
CONFIG_TYPES = {INTERVAL_MS: 3, MATCH: 7, METRICS: 7}
DEFAULTS = {INTERVAL_MS: str(DEFAULT_INTERVAL_MS), MATCH: "", METRICS: ""}
DOCUMENTATION = {
    METRICS: "Telemetry metric name prefix list ('*': every metric).",
    INTERVAL_MS: "Metrics push interval in milliseconds (100 to 3600000).",
    MATCH: "Client match criteria: comma-separated name=regex selectors on "
    + ", ".join(sorted(MATCH_KEYS))
    + " (none: every client).",
}


class SubscriptionConfigError(Exception):
    """A refused CLIENT_METRICS config; `invalid_request` tells INVALID_REQUEST from INVALID_CONFIG."""

    def __init__(self, message: str, *, invalid_request: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.invalid_request = invalid_request


def split_list(value: str) -> list[str]:
    """A LIST config's items, as Kafka parses them: comma-separated, trimmed, "" is the empty list."""
    return [item.strip() for item in value.split(",")] if value.strip() else []


def parse_match(patterns: list[str]) -> dict[str, re.Pattern[str]]:
    selectors: dict[str, re.Pattern[str]] = {}
    for pattern in patterns:
        parts = pattern.split("=")
        key = parts[0].strip()
        if len(parts) != 2 or key not in MATCH_KEYS or not parts[1].strip():
            raise SubscriptionConfigError(f"Illegal client matching pattern: {pattern}")
        try:
            selectors[key] = re.compile(parts[1].strip())
        except re.error:
            raise SubscriptionConfigError(f"Illegal client matching pattern: {pattern}") from None
    return selectors


def _interval(raw: str) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise SubscriptionConfigError(
            f"Invalid value {raw} for configuration {INTERVAL_MS}: Not a number of type INT"
        ) from None
    if not MIN_INTERVAL_MS <= value <= MAX_INTERVAL_MS:
        raise SubscriptionConfigError(
            f"Invalid value {value} for {INTERVAL_MS}, interval must be between "
            f"{MIN_INTERVAL_MS} and {MAX_INTERVAL_MS} (1 hour)",
            invalid_request=True,
        )
    return value


def check_subscription(name: str, configs: Mapping[str, str]) -> None:
    """Refuse what Kafka refuses (SubscriptionConfigError): an empty name, unknown configs, bad values."""
    if not name:
        raise SubscriptionConfigError("Subscription name can't be empty", invalid_request=True)
    for key in configs:
        if key not in CONFIG_NAMES:
            raise SubscriptionConfigError(
                f"Unknown client metrics configuration: {key}", invalid_request=True
            )
    if INTERVAL_MS in configs:
        _interval(configs[INTERVAL_MS])
    if MATCH in configs:
        parse_match(split_list(configs[MATCH]))


@dataclass(frozen=True, slots=True)
class ClientIdentity:
    """What a subscription's `match` selectors look at."""

    client_instance_id: str
    client_id: str
    client_software_name: str
    client_software_version: str
    client_source_address: str
    client_source_port: str

    def value(self, key: str) -> str:
        return str(getattr(self, key))


@dataclass(frozen=True, slots=True)
class Subscription:
    name: str
    metrics: tuple[str, ...]
    interval_ms: int
    match: Mapping[str, re.Pattern[str]]

    @classmethod
    def parse(cls, name: str, configs: Mapping[str, str]) -> Subscription:
        """A stored subscription (already checked when it was set)."""
        return cls(
            name=name,
            metrics=tuple(split_list(configs.get(METRICS, ""))),
            interval_ms=_interval(configs.get(INTERVAL_MS, str(DEFAULT_INTERVAL_MS))),
            match=parse_match(split_list(configs.get(MATCH, ""))),
        )

    def matches(self, client: ClientIdentity) -> bool:
        """Every selector matches the whole value (no selector: every client), as Java's matches()."""
        return all(pattern.fullmatch(client.value(key)) for key, pattern in self.match.items())
