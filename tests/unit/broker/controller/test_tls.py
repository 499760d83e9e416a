"""The controller listener's mutual TLS: which files each node uses, and what a handshake accepts.

Handshakes run through memory buffers (ssl.MemoryBIO): the real TLS code, no sockets.
"""

from __future__ import annotations

import logging
import ssl
from pathlib import Path

import pytest

from broker.config import BrokerConfig, ConfigError, ControllerTls, controller_tls
from broker.controller.tls import warn_if_unauthenticated
from broker.node.roles import controller_node_config
from controlplane.clusters.provisioners.certificates import NodeCertificates, issue_cluster_certificates

VOTERS = "1@127.0.0.1:9093,2@127.0.0.1:9094,3@127.0.0.1:9095"
SSL_CONTROLLER = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.quorum.voters": VOTERS,
    "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
    "listener.name.controller.ssl.keystore.location": "/etc/kafka/node-1.pem",
    "listener.name.controller.ssl.truststore.location": "/etc/kafka/ca.pem",
}


def _tls(properties: dict[str, str]) -> ControllerTls | None:
    return controller_tls(BrokerConfig.from_properties(properties))


def test_an_ssl_controller_listener_uses_its_listener_prefixed_files() -> None:
    tls = _tls(SSL_CONTROLLER | {"ssl.keystore.location": "/elsewhere/broker.pem"})
    assert tls == ControllerTls("CONTROLLER", Path("/etc/kafka/node-1.pem"), Path("/etc/kafka/ca.pem"))
    assert tls is not None
    assert tls.check_hostname


def test_it_falls_back_to_the_unprefixed_ssl_properties() -> None:
    properties = {k: v for k, v in SSL_CONTROLLER.items() if not k.startswith("listener.name.")}
    properties |= {
        "ssl.keystore.location": "/etc/kafka/broker.pem",
        "ssl.truststore.location": "/etc/kafka/ca.pem",
        "ssl.key.password": "secret",
        "ssl.endpoint.identification.algorithm": "",
    }
    tls = _tls(properties)
    assert tls is not None
    assert (tls.keystore, tls.truststore, tls.key_password) == (
        Path("/etc/kafka/broker.pem"),
        Path("/etc/kafka/ca.pem"),
        "secret",
    )
    assert not tls.check_hostname
    assert "secret" not in repr(tls)


def test_an_empty_listener_prefixed_identification_algorithm_turns_the_hostname_check_off() -> None:
    tls = _tls(SSL_CONTROLLER | {"listener.name.controller.ssl.endpoint.identification.algorithm": ""})
    assert tls is not None
    assert not tls.check_hostname


def test_a_plaintext_controller_listener_has_no_tls() -> None:
    plaintext = SSL_CONTROLLER | {
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    }
    assert _tls(plaintext) is None
    assert controller_node_config(BrokerConfig.from_properties(plaintext)).tls is None


def test_the_controller_node_serves_with_the_resolved_tls() -> None:
    node = controller_node_config(BrokerConfig.from_properties(SSL_CONTROLLER))
    assert node.tls is not None
    assert node.tls.keystore == Path("/etc/kafka/node-1.pem")


def test_a_broker_only_node_dials_the_controllers_with_tls_from_the_protocol_map() -> None:
    broker = SSL_CONTROLLER | {
        "process.roles": "broker",
        "node.id": "4",
        "listeners": "PLAINTEXT://127.0.0.1:9092",
        "listener.name.controller.ssl.keystore.location": "/etc/kafka/node-4.pem",
    }
    tls = _tls(broker)
    assert tls is not None
    assert tls.keystore == Path("/etc/kafka/node-4.pem")


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"listener.name.controller.ssl.truststore.location": ""}, "truststore.location"),
        ({"listener.name.controller.ssl.keystore.location": ""}, "keystore.location"),
        ({"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_SSL"}, "PLAINTEXT or SSL"),
        # A broker-only node is checked too: it would otherwise fail only when dialing.
        (
            {
                "process.roles": "broker",
                "listeners": "PLAINTEXT://127.0.0.1:9092",
                "node.id": "4",
                "listener.name.controller.ssl.truststore.location": "",
            },
            "truststore.location",
        ),
    ],
)
def test_it_refuses_an_ssl_controller_listener_without_its_files(
    changes: dict[str, str], problem: str
) -> None:
    with pytest.raises(ConfigError, match=problem):
        BrokerConfig.from_properties(SSL_CONTROLLER | changes)


def test_a_client_listener_still_needs_the_unprefixed_keystore() -> None:
    properties = SSL_CONTROLLER | {
        "listeners": "SSL://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
        "listener.security.protocol.map": "SSL:SSL,CONTROLLER:SSL",
    }
    with pytest.raises(ConfigError, match="required by SSL listener SSL"):
        BrokerConfig.from_properties(properties)


def test_unreadable_files_are_a_config_error() -> None:
    tls = ControllerTls("CONTROLLER", Path("/nonexistent/node.pem"), Path("/nonexistent/ca.pem"))
    with pytest.raises(ConfigError, match="CONTROLLER controller listener TLS"):
        tls.server_context()
    with pytest.raises(ConfigError):
        tls.client_context()


def test_a_plaintext_listener_reachable_from_other_hosts_is_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tls = ControllerTls("CONTROLLER", Path("k.pem"), Path("ca.pem"))
    with caplog.at_level(logging.WARNING, logger="broker.cluster"):
        assert not warn_if_unauthenticated("CONTROLLER", "127.0.0.1", None)
        assert not warn_if_unauthenticated("CONTROLLER", "localhost", None)
        assert not warn_if_unauthenticated("CONTROLLER", "::1", None)
        assert not warn_if_unauthenticated("CONTROLLER", "10.0.0.5", tls)
        assert not caplog.records
        assert warn_if_unauthenticated("CONTROLLER", "0.0.0.0", None)
        assert warn_if_unauthenticated("CONTROLLER", "kafka-1.internal", None)
    assert "unauthenticated" in caplog.records[0].getMessage()


# --- handshakes -----------------------------------------------------------------------------------


def _handshake(server: ssl.SSLContext, client: ssl.SSLContext, server_hostname: str = "127.0.0.1") -> None:
    """Run a TLS handshake between two contexts through memory; raises the first side's SSLError."""
    to_server, to_client = ssl.MemoryBIO(), ssl.MemoryBIO()
    server_out, client_out = ssl.MemoryBIO(), ssl.MemoryBIO()
    server_end = server.wrap_bio(to_server, server_out, server_side=True)
    client_end = client.wrap_bio(to_client, client_out, server_hostname=server_hostname)
    done = {"client": False, "server": False}
    for _ in range(10):
        for name, end in (("client", client_end), ("server", server_end)):
            if not done[name]:
                try:
                    end.do_handshake()
                    done[name] = True
                except ssl.SSLWantReadError:
                    pass
            to_server.write(client_out.read())
            to_client.write(server_out.read())
        if all(done.values()):
            # TLS 1.3 reports a refused client certificate after the client's side completed.
            client_end.write(b"x")
            to_server.write(client_out.read())
            assert server_end.read(1) == b"x"
            return
    raise AssertionError(f"handshake did not finish: {done}")


def _node_tls(files: NodeCertificates, *, check_hostname: bool = True) -> ControllerTls:
    return ControllerTls("CONTROLLER", files.keystore, files.truststore, check_hostname=check_hostname)


@pytest.fixture(scope="module")
def cluster_files(tmp_path_factory: pytest.TempPathFactory) -> dict[int, NodeCertificates]:
    return issue_cluster_certificates(tmp_path_factory.mktemp("certs"), [1, 2], ["127.0.0.1"])


@pytest.fixture(scope="module")
def foreign_files(tmp_path_factory: pytest.TempPathFactory) -> dict[int, NodeCertificates]:
    return issue_cluster_certificates(tmp_path_factory.mktemp("other-ca"), [2], ["127.0.0.1"])


def test_two_nodes_of_one_cluster_complete_a_mutual_handshake(
    cluster_files: dict[int, NodeCertificates],
) -> None:
    _handshake(_node_tls(cluster_files[1]).server_context(), _node_tls(cluster_files[2]).client_context())


def test_a_client_without_a_certificate_is_refused(cluster_files: dict[int, NodeCertificates]) -> None:
    anonymous = ssl.create_default_context(cafile=str(cluster_files[2].truststore))
    with pytest.raises(ssl.SSLError):
        _handshake(_node_tls(cluster_files[1]).server_context(), anonymous)


def test_a_client_certificate_from_another_ca_is_refused(
    cluster_files: dict[int, NodeCertificates], foreign_files: dict[int, NodeCertificates]
) -> None:
    # The stranger even trusts our CA: its own certificate is what the server refuses.
    stranger = ControllerTls("CONTROLLER", foreign_files[2].keystore, cluster_files[1].truststore)
    with pytest.raises(ssl.SSLError):
        _handshake(_node_tls(cluster_files[1]).server_context(), stranger.client_context())


def test_a_controller_with_a_certificate_from_another_ca_is_refused_by_the_client(
    cluster_files: dict[int, NodeCertificates], foreign_files: dict[int, NodeCertificates]
) -> None:
    impostor = ControllerTls("CONTROLLER", foreign_files[2].keystore, cluster_files[1].truststore)
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(impostor.server_context(), _node_tls(cluster_files[1]).client_context())


def test_the_hostname_check_follows_the_identification_algorithm(
    cluster_files: dict[int, NodeCertificates],
) -> None:
    server = _node_tls(cluster_files[1]).server_context()
    with pytest.raises(ssl.SSLCertVerificationError, match="IP address mismatch"):
        _handshake(server, _node_tls(cluster_files[2]).client_context(), server_hostname="10.9.9.9")
    _handshake(
        server, _node_tls(cluster_files[2], check_hostname=False).client_context(), server_hostname="10.9.9.9"
    )
