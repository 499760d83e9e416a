"""Replication settings, read from the broker's properties (Kafka's names and defaults).

The replica.* ones are not in `broker.config.BROKER_DEFAULTS`: replication is optional, and they
arrive through `BrokerConfig.extra` like any property that module does not know. The inter-broker
security properties are there (DescribeConfigs reports them, `sasl.jaas.config` as sensitive);
the listener-prefixed `listener.name.<listener>.…` variants arrive through `extra`.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from pathlib import Path

from broker.auth.jaas import SaslCredentials, sasl_credentials
from broker.config import (
    SUPPORTED_SASL_MECHANISMS,
    BrokerConfig,
    ConfigError,
    client_ssl_context,
    parse_voters,
)


@dataclass(frozen=True, slots=True)
class InterBrokerConfig:
    """How this broker connects to other brokers: which of their listeners, TLS, SASL login."""

    # None: the peer's first advertised endpoint.
    listener_name: str | None = None
    security_protocol: str = "PLAINTEXT"
    sasl: SaslCredentials | None = None
    truststore: Path | None = None
    # Our certificate chain and key (PEM), for peers that ask for client certificates.
    keystore: Path | None = None
    key_password: str | None = field(default=None, repr=False)
    check_hostname: bool = True

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    def client_ssl_context(self) -> ssl.SSLContext | None:
        """The TLS client context for SSL / SASL_SSL peers (None for plaintext ones)."""
        if not self.uses_tls:
            return None
        return client_ssl_context(
            truststore=self.truststore,
            keystore=self.keystore,
            key_password=self.key_password,
            check_hostname=self.check_hostname,
            purpose="inter-broker TLS",
        )

    @classmethod
    def from_broker_config(cls, config: BrokerConfig, *, needs_credentials: bool) -> InterBrokerConfig:
        """Kafka's inter-broker properties; `needs_credentials`: this broker will fetch from peers."""
        listener_name = _inter_broker_listener_name(config)
        protocol = config.security_protocol(listener_name)
        sasl = None
        if protocol.startswith("SASL_"):
            mechanism = config.get_str("sasl.mechanism.inter.broker.protocol").strip().upper()
            if mechanism not in SUPPORTED_SASL_MECHANISMS:
                raise ConfigError(
                    f"sasl.mechanism.inter.broker.protocol: {mechanism!r} is not one of "
                    f"{', '.join(SUPPORTED_SASL_MECHANISMS)}"
                )
            if mechanism not in config.sasl_enabled_mechanisms:
                raise ConfigError(
                    f"sasl.mechanism.inter.broker.protocol: {mechanism} is not in sasl.enabled.mechanisms"
                )
            sasl = _inter_broker_credentials(config, listener_name, mechanism, needs_credentials)

        def listener_property(name: str) -> str:
            prefixed = f"listener.name.{listener_name.lower()}.{name}"
            return config.extra.get(prefixed, "").strip() or config.get_str(name).strip()

        truststore = listener_property("ssl.truststore.location")
        keystore = listener_property("ssl.keystore.location")
        return cls(
            listener_name=listener_name,
            security_protocol=protocol,
            sasl=sasl,
            truststore=Path(truststore) if truststore else None,
            keystore=Path(keystore) if keystore else None,
            key_password=listener_property("ssl.key.password") or None,
            check_hostname=config.get_str("ssl.endpoint.identification.algorithm").strip().lower() == "https",
        )


def _inter_broker_listener_name(config: BrokerConfig) -> str:
    names = [listener.name for listener in config.listeners]
    controller_names = {
        n.strip().upper() for n in config.get_str("controller.listener.names").split(",") if n.strip()
    }
    explicit = config.get_str("inter.broker.listener.name").strip().upper()
    protocol = config.get_str("security.inter.broker.protocol").strip().upper()
    if explicit and protocol:
        raise ConfigError("inter.broker.listener.name and security.inter.broker.protocol cannot both be set")
    if protocol:
        # Kafka: the listener named after the protocol (PLAINTEXT://, SASL_PLAINTEXT://, ...).
        explicit = protocol
    if explicit:
        if explicit not in names:
            raise ConfigError(f"inter.broker.listener.name: {explicit} is not in listeners")
        if explicit in controller_names:
            raise ConfigError(f"inter.broker.listener.name: {explicit} is a controller listener")
        return explicit
    return next((name for name in names if name not in controller_names), names[0])


def _inter_broker_credentials(
    config: BrokerConfig, listener_name: str, mechanism: str, needs_credentials: bool
) -> SaslCredentials | None:
    prefixed = f"listener.name.{listener_name.lower()}.{mechanism.lower()}.sasl.jaas.config"
    if config.extra.get(prefixed, "").strip():
        return sasl_credentials(config.extra[prefixed], mechanism, prefixed)
    if config.get_str("sasl.jaas.config").strip():
        return sasl_credentials(config.get_str("sasl.jaas.config"), mechanism)
    if needs_credentials:
        raise ConfigError(
            f"{prefixed} (or sasl.jaas.config): required for the {config.security_protocol(listener_name)} "
            f"inter-broker listener {listener_name}"
        )
    return None


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
    # Not a Kafka property: followers fetch through incremental fetch sessions (KIP-227).
    fetch_sessions: bool = True
    inter_broker: InterBrokerConfig = field(default_factory=InterBrokerConfig)

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

        # A broker in a cluster fetches from its peers; a single node (the only voter of its own quorum, no
        # cluster settings given) has none, so it needs no inter-broker credentials.
        roles = config.get_str("process.roles")
        alone = "controller" in roles and set(parse_voters(config.get_str("controller.quorum.voters"))) == {
            config.node_id
        }
        fetches = "broker" in roles and not alone
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
            fetch_sessions=extra.get("replica.fetch.sessions.enable", "true").strip().lower() == "true",
            inter_broker=InterBrokerConfig.from_broker_config(config, needs_credentials=fetches),
        )
