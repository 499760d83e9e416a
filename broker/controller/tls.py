"""Warnings about the controller listener's security; its TLS files are read with the config
(`broker.config.ControllerTls`).

Mutual TLS on the controller listener (`listener.security.protocol.map=...,CONTROLLER:SSL`).

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

from broker.config import ControllerTls

log = logging.getLogger("broker.cluster")


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
