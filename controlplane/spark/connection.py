"""The connection settings the raw readers (raw_reading.py in Python, the JVM reader) implement themselves:
PLAINTEXT or SASL_PLAINTEXT with PLAIN or SCRAM credentials. A module of its own so that the JVM reader's planner
(jvm_planning.py, a process per read) does not import the Python reader.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SUPPORTED_MECHANISMS = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}


@dataclass(frozen=True)
class ConnectionSettings:
    bootstrap: list[str]
    security_protocol: str
    sasl_mechanism: str
    username: str
    password: str = field(repr=False)
    read_committed: bool


def connection_settings(kafka_config: dict[str, str]) -> ConnectionSettings | None:
    """The settings this path can honour, or None when the configuration needs librdkafka (TLS, Kerberos,
    OAuth or any other `ssl.*`/`sasl.*` setting this client does not implement)."""
    protocol = kafka_config.get("security.protocol", "PLAINTEXT").upper()
    mechanism = kafka_config.get("sasl.mechanism", kafka_config.get("sasl.mechanisms", "PLAIN")).upper()
    understood = {"sasl.mechanism", "sasl.mechanisms", "sasl.username", "sasl.password"}
    if protocol not in ("PLAINTEXT", "SASL_PLAINTEXT") or mechanism not in SUPPORTED_MECHANISMS:
        return None
    if any(key.startswith(("ssl.", "sasl.")) and key not in understood for key in kafka_config):
        return None
    return ConnectionSettings(
        bootstrap=[a.strip() for a in kafka_config.get("bootstrap.servers", "").split(",") if a.strip()],
        security_protocol=protocol,
        sasl_mechanism=mechanism,
        username=kafka_config.get("sasl.username", ""),
        password=kafka_config.get("sasl.password", ""),
        read_committed=kafka_config.get("isolation.level", "read_committed") != "read_uncommitted",
    )
