"""What an editor needs to know about a Kafka config that DescribeConfigs does not say.

The cluster reports each config's type and documentation (DescribeConfigs v3+); Kafka's validators, which
hold the allowed values of an enum-like string, stay on the broker, and a LONG does not say whether it
counts milliseconds or bytes. This module adds those, for the names Kafka documents:

- `choices`: the values Kafka's validator accepts (`multiple`: a list config takes several of them);
- `unit`: "ms", "seconds", "minutes", "hours" or "bytes", from Kafka's naming convention (the suffix says
  the unit: retention.ms, segment.bytes, log.retention.hours);
- `unlimited`: the value that turns the limit off (-1 for retention.ms and retention.bytes, Long.MAX for
  the flush intervals and timestamp bounds), which an editor shows as "unlimited" rather than a number.
"""

from __future__ import annotations

from dataclasses import dataclass

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1

COMPRESSION_TYPES = ("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
CLEANUP_POLICIES = ("delete", "compact")

_CHOICES: dict[str, tuple[tuple[str, ...], bool]] = {
    "cleanup.policy": (CLEANUP_POLICIES, True),
    "log.cleanup.policy": (CLEANUP_POLICIES, True),
    "compression.type": (COMPRESSION_TYPES, False),
    "message.timestamp.type": (TIMESTAMP_TYPES, False),
    "log.message.timestamp.type": (TIMESTAMP_TYPES, False),
    "ssl.client.auth": (("none", "requested", "required"), False),
}

# Configs whose "no limit" is a sentinel value rather than a large number.
_UNLIMITED: dict[str, str] = {
    "retention.ms": "-1",
    "retention.bytes": "-1",
    "log.retention.ms": "-1",
    "log.retention.bytes": "-1",
    "flush.messages": str(LONG_MAX),
    "flush.ms": str(LONG_MAX),
    "log.flush.interval.messages": str(LONG_MAX),
    "log.flush.interval.ms": str(LONG_MAX),
    "max.compaction.lag.ms": str(LONG_MAX),
    "log.cleaner.max.compaction.lag.ms": str(LONG_MAX),
    "message.timestamp.before.max.ms": str(LONG_MAX),
    "message.timestamp.after.max.ms": str(LONG_MAX),
    "log.message.timestamp.before.max.ms": str(LONG_MAX),
    "log.message.timestamp.after.max.ms": str(LONG_MAX),
    "max.connections": str(INT_MAX),
    "max.connections.per.ip": str(INT_MAX),
}

_UNIT_SUFFIXES = (
    (".ms", "ms"),
    (".seconds", "seconds"),
    (".minutes", "minutes"),
    (".hours", "hours"),
    (".bytes", "bytes"),
    (".rate", "bytes_per_second"),
)
# Sizes whose name does not end in .bytes.
_BYTES = frozenset({"message.max.bytes", "max.message.bytes", "replica.fetch.max.bytes"})
_INTEGER_TYPES = frozenset({"int", "short", "long"})


@dataclass(frozen=True)
class ConfigKind:
    choices: tuple[str, ...] = ()
    multiple: bool = False
    unit: str | None = None
    unlimited: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "choices": list(self.choices),
            "multiple": self.multiple,
            "unit": self.unit,
            "unlimited": self.unlimited,
        }


def config_kind(name: str, config_type: str | None) -> ConfigKind:
    """How to edit `name`: its choices, or its unit, and the value that means unlimited."""
    if name in _CHOICES:
        choices, multiple = _CHOICES[name]
        return ConfigKind(choices=choices, multiple=multiple)
    if config_type is not None and config_type not in _INTEGER_TYPES:
        return ConfigKind()
    unit = "bytes" if name in _BYTES else next((u for s, u in _UNIT_SUFFIXES if name.endswith(s)), None)
    return ConfigKind(unit=unit, unlimited=_UNLIMITED.get(name))
