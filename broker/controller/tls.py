"""Mutual TLS on the controller listener (`listener.security.protocol.map=...,CONTROLLER:SSL`).

Whoever reaches the controller listener can rewrite the cluster's metadata (SCRAM credentials,
ACLs, Raft votes), so an SSL controller listener requires a client certificate, and every node
dials its controllers with its own certificate and checks theirs. Both ends use the same files:
`listener.name.<controller listener>.ssl.keystore.location` (certificate chain + key, PEM),
`...ssl.truststore.location` (the CA, PEM), `...ssl.key.password`, each falling back to the
un-prefixed `ssl.*` property as in Kafka.
"""

from __future__ import annotations

import ipaddress
import logging
import ssl
from dataclasses import dataclass, field
from pathlib import Path

from broker.config import BrokerConfig, ConfigError
from broker.replication.config import InterBrokerConfig

log = logging.getLogger("broker.cluster")

CONTROLLER_PROTOCOLS = ("PLAINTEXT", "SSL")


@dataclass(frozen=True, slots=True)
class ControllerTls:
    listener_name: str
    keystore: Path
    truststore: Path
    key_password: str | None = field(default=None, repr=False)
    check_hostname: bool = True

    def server_context(self) -> ssl.SSLContext:
        """The controller listener's context: a client certificate signed by the truststore is required."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            context.load_cert_chain(str(self.keystore), password=self.key_password)
            context.load_verify_locations(cafile=str(self.truststore))
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"{self.listener_name} controller listener TLS: cannot load {exc}") from None
        context.verify_mode = ssl.CERT_REQUIRED
        return context

    def client_context(self) -> ssl.SSLContext:
        """For dialing controllers: our certificate, and only the truststore's CA is believed."""
        peer = InterBrokerConfig(
            listener_name=self.listener_name,
            security_protocol="SSL",
            truststore=self.truststore,
            keystore=self.keystore,
            key_password=self.key_password,
            check_hostname=self.check_hostname,
        )
        context = peer.client_ssl_context()
        assert context is not None
        return context


def controller_protocol(config: BrokerConfig) -> tuple[str, str]:
    """(name, security protocol) of the controller listener this node serves or dials."""
    names = sorted(config.controller_listener_names)
    served = [listener.name for listener in config.listeners if listener.name in names]
    # Kafka dials the first name of controller.listener.names; a controller serves the one it has.
    name = served[0] if served else (names[0] if names else "CONTROLLER")
    return name, config.security_protocol(name)


def controller_tls(config: BrokerConfig) -> ControllerTls | None:
    """The controller listener's TLS files, or None when it is PLAINTEXT. Raises ConfigError."""
    name, protocol = controller_protocol(config)
    if protocol not in CONTROLLER_PROTOCOLS:
        raise ConfigError(f"{name}: the controller listener supports PLAINTEXT or SSL, not {protocol}")
    if protocol == "PLAINTEXT":
        return None
    keystore = config.listener_property(name, "ssl.keystore.location")
    truststore = config.listener_property(name, "ssl.truststore.location")
    prefix = f"listener.name.{name.lower()}."
    if not keystore:
        raise ConfigError(
            f"{prefix}ssl.keystore.location (or ssl.keystore.location): required by the SSL controller "
            "listener (its certificate, presented to peers)"
        )
    if not truststore:
        raise ConfigError(
            f"{prefix}ssl.truststore.location (or ssl.truststore.location): required by the SSL controller "
            "listener (the CA that signed every node's certificate)"
        )
    algorithm = config.listener_property(name, "ssl.endpoint.identification.algorithm")
    if f"{prefix}ssl.endpoint.identification.algorithm" in config.extra:
        # An explicitly empty prefixed value turns the check off even when the global one is https.
        algorithm = config.extra[f"{prefix}ssl.endpoint.identification.algorithm"].strip()
    return ControllerTls(
        listener_name=name,
        keystore=Path(keystore),
        truststore=Path(truststore),
        key_password=config.listener_property(name, "ssl.key.password") or None,
        check_hostname=algorithm.lower() == "https",
    )


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def warn_if_unauthenticated(listener_name: str, host: str, tls: ControllerTls | None) -> bool:
    """Log (and return True) when a PLAINTEXT controller listener is reachable from other hosts."""
    if tls is not None or is_loopback(host):
        return False
    log.warning(
        "the controller listener %s on %s is PLAINTEXT and unauthenticated: anything that reaches it can "
        "change the cluster's metadata (map it to SSL with certificates, or bind it to loopback)",
        listener_name,
        host or "every interface",
    )
    return True
