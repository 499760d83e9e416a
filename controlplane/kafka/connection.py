"""How the control plane reaches a cluster, and the plumbing every resource module shares.

`Connection` says how to reach a cluster; `admin_client` makes a confluent-kafka AdminClient for it and
`protocol_connection` a kio protocol connection (for the admin APIs librdkafka lacks). Every call has a
timeout, and librdkafka's errors become the typed exceptions of errors.py (`raise_typed`, `await_result`),
so callers never see a KafkaException and never wait forever on a cluster that does not answer.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from controlplane.kafka.errors import (
    AuthenticationFailed,
    ClusterUnreachable,
    KafkaGatewayError,
    NotAuthorized,
)
from controlplane.kafka.wire import WireConnection

DEFAULT_TIMEOUT_SECONDS = 5.0

# librdkafka logs every refused connection; they are expected while a broker starts, so keep them quiet.
librdkafka_log = logging.getLogger("controlplane.kafka.librdkafka")

_UNREACHABLE = {
    KafkaError._TRANSPORT,
    KafkaError._TIMED_OUT,
    KafkaError._ALL_BROKERS_DOWN,
    KafkaError._RESOLVE,
    KafkaError.REQUEST_TIMED_OUT,
    KafkaError.NETWORK_EXCEPTION,
}
_AUTHENTICATION = {KafkaError._AUTHENTICATION, KafkaError.SASL_AUTHENTICATION_FAILED}
_AUTHORIZATION = {
    KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    KafkaError.TOPIC_AUTHORIZATION_FAILED,
    KafkaError.GROUP_AUTHORIZATION_FAILED,
}


@dataclass(frozen=True)
class Connection:
    """How to reach a cluster. The password is only ever passed to librdkafka, never logged."""

    bootstrap_servers: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str = ""
    username: str = ""
    password: str = field(default="", repr=False)

    def client_config(self, timeout_seconds: float) -> dict[str, object]:
        timeout_ms = max(1000, int(timeout_seconds * 1000))
        config: dict[str, object] = {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": self.security_protocol,
            "socket.timeout.ms": timeout_ms,
            "socket.connection.setup.timeout.ms": timeout_ms,
            "reconnect.backoff.max.ms": 500,
            "log.connection.close": False,
        }
        if self.security_protocol.startswith("SASL"):
            config.update(
                {
                    "sasl.mechanism": self.sasl_mechanism or "PLAIN",
                    "sasl.username": self.username,
                    "sasl.password": self.password,
                }
            )
        return config


def raise_typed(error: KafkaError | None, fallback: str) -> None:
    if error is None:
        raise KafkaGatewayError("UNKNOWN", fallback)
    name, message = error.name(), error.str()
    code = error.code()
    if code in _UNREACHABLE:
        raise ClusterUnreachable(name, message)
    if code in _AUTHENTICATION:
        raise AuthenticationFailed(name, message)
    if code in _AUTHORIZATION:
        raise NotAuthorized(name, message)
    raise KafkaGatewayError(name, message)


def admin_client(connection: Connection, timeout_seconds: float) -> AdminClient:
    try:
        return AdminClient(connection.client_config(timeout_seconds), logger=librdkafka_log)
    except KafkaException as error:
        raise_typed(error.args[0] if error.args else None, "invalid client configuration")
        raise  # unreachable: raise_typed always raises


def await_result(future: Future, what: str, timeout_seconds: float) -> Any:
    """The future's value, with librdkafka's failures turned into the typed errors."""
    try:
        return future.result(timeout=timeout_seconds + 1)
    except KafkaException as error:
        raise_typed(error.args[0] if error.args else None, f"{what} failed")
    except TimeoutError as error:
        raise ClusterUnreachable("_TIMED_OUT", f"{what} got no answer") from error


def raise_for_code(error_code: int, message: str | None, what: str) -> None:
    if error_code != 0:
        error = KafkaError(error_code)
        raise_typed(error, message or f"{what} failed")


def protocol_connection(
    connection: Connection, timeout_seconds: float, address: str | None = None
) -> WireConnection:
    """A protocol connection to `address`, else to the first bootstrap server that answers."""
    candidates = [address] if address else [a.strip() for a in connection.bootstrap_servers.split(",")]
    last_error: KafkaGatewayError | None = None
    for candidate in candidates:
        try:
            return WireConnection(
                candidate,
                security_protocol=connection.security_protocol,
                sasl_mechanism=connection.sasl_mechanism,
                username=connection.username,
                password=connection.password,
                timeout_seconds=timeout_seconds,
            )
        except ClusterUnreachable as error:
            last_error = error
    raise last_error or ClusterUnreachable("_TRANSPORT", "no bootstrap server")
