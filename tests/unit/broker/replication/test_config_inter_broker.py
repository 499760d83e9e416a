"""Which listener, protocol, SASL login and TLS settings a broker's replica fetchers use."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from broker.auth.jaas import SCRAM_LOGIN_MODULE
from broker.config import BrokerConfig, ConfigError
from broker.replication.config import InterBrokerConfig, ReplicationConfig
from tests.fixtures.broker import CertificateFiles

JAAS = f'{SCRAM_LOGIN_MODULE} required username="admin" password="secret";'
SASL_CLUSTER = {
    "node.id": "1",
    "process.roles": "broker",
    "controller.quorum.voters": "1@127.0.0.1:9093",
    "listeners": "SASL_PLAINTEXT://127.0.0.1:9092",
    "listener.security.protocol.map": "SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
}


def inter_broker(properties: dict[str, str]) -> InterBrokerConfig:
    return ReplicationConfig.from_broker_config(BrokerConfig.from_properties(properties)).inter_broker


def test_a_plaintext_single_node_needs_nothing() -> None:
    config = inter_broker({"listeners": "PLAINTEXT://127.0.0.1:9092"})
    assert (config.listener_name, config.security_protocol, config.sasl) == ("PLAINTEXT", "PLAINTEXT", None)
    assert config.client_ssl_context() is None


def test_the_default_listener_is_the_first_that_is_not_a_controller_listener() -> None:
    config = inter_broker(
        {
            "node.id": "1",
            "process.roles": "broker,controller",
            "controller.quorum.voters": "1@127.0.0.1:9093",
            "listeners": "CONTROLLER://127.0.0.1:9093,INTERNAL://127.0.0.1:9094,EXTERNAL://127.0.0.1:9092",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,INTERNAL:SASL_PLAINTEXT,EXTERNAL:SASL_PLAINTEXT",
            "listener.name.internal.scram-sha-512.sasl.jaas.config": JAAS,
        }
    )
    assert (config.listener_name, config.security_protocol) == ("INTERNAL", "SASL_PLAINTEXT")


def test_the_listener_prefixed_login_wins_over_the_plain_one() -> None:
    config = inter_broker(
        {
            **SASL_CLUSTER,
            "sasl.jaas.config": f'{SCRAM_LOGIN_MODULE} required username="other" password="x";',
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": JAAS,
        }
    )
    assert config.sasl is not None
    assert (config.sasl.mechanism, config.sasl.username, config.sasl.password) == (
        "SCRAM-SHA-512",
        "admin",
        "secret",
    )


def test_the_unprefixed_login_and_another_mechanism_are_accepted() -> None:
    config = inter_broker(
        {**SASL_CLUSTER, "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256", "sasl.jaas.config": JAAS}
    )
    assert config.sasl is not None
    assert config.sasl.mechanism == "SCRAM-SHA-256"


def test_a_replicating_broker_on_a_sasl_listener_must_have_a_login() -> None:
    with pytest.raises(
        ConfigError, match=r"listener\.name\.sasl_plaintext\.scram-sha-512\.sasl\.jaas\.config"
    ):
        inter_broker(SASL_CLUSTER)


def test_a_single_sasl_node_without_replication_needs_no_login() -> None:
    assert inter_broker({"listeners": "SASL_PLAINTEXT://127.0.0.1:9092"}).sasl is None


def test_a_malformed_login_stops_the_broker_without_printing_the_password() -> None:
    with pytest.raises(ConfigError) as failure:
        inter_broker(
            {**SASL_CLUSTER, "sasl.jaas.config": f'{SCRAM_LOGIN_MODULE} required password="hunter2"'}
        )
    assert "hunter2" not in str(failure.value)


def test_the_mechanism_must_be_enabled() -> None:
    with pytest.raises(ConfigError, match=r"PLAIN is not in sasl\.enabled\.mechanisms"):
        inter_broker(
            {
                **SASL_CLUSTER,
                "sasl.enabled.mechanisms": "SCRAM-SHA-512",
                "sasl.mechanism.inter.broker.protocol": "PLAIN",
                "sasl.jaas.config": JAAS,
            }
        )
    with pytest.raises(ConfigError, match="'GSSAPI' is not one of"):
        inter_broker(
            {**SASL_CLUSTER, "sasl.mechanism.inter.broker.protocol": "GSSAPI", "sasl.jaas.config": JAAS}
        )


def test_security_inter_broker_protocol_picks_the_listener_named_after_it() -> None:
    properties = {
        "listeners": "PLAINTEXT://127.0.0.1:9092,SASL_PLAINTEXT://127.0.0.1:9093",
        "security.inter.broker.protocol": "SASL_PLAINTEXT",
    }
    assert inter_broker(properties).listener_name == "SASL_PLAINTEXT"
    with pytest.raises(ConfigError, match="cannot both be set"):
        inter_broker({**properties, "inter.broker.listener.name": "PLAINTEXT"})
    with pytest.raises(ConfigError, match="SSL is not in listeners"):
        inter_broker({"listeners": "PLAINTEXT://127.0.0.1:9092", "security.inter.broker.protocol": "SSL"})


def test_the_inter_broker_listener_cannot_be_a_controller_listener() -> None:
    with pytest.raises(ConfigError, match="is a controller listener"):
        inter_broker(
            {
                "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "inter.broker.listener.name": "controller",
            }
        )


def test_tls_peers_are_verified_against_the_pem_truststore(tmp_path: Path) -> None:
    certificates = CertificateFiles(tmp_path)
    config = inter_broker(
        {
            "listeners": "SSL://127.0.0.1:9093",
            "ssl.keystore.location": str(certificates.keystore_path),
            "ssl.truststore.location": str(certificates.ca_path),
        }
    )
    assert (config.security_protocol, config.truststore) == ("SSL", certificates.ca_path)
    context = config.client_ssl_context()
    assert context is not None
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert [ca["subject"] for ca in context.get_ca_certs()] == [((("commonName", "broker test CA"),),)]


def test_host_name_checks_can_be_turned_off_and_a_missing_truststore_is_a_config_error(
    tmp_path: Path,
) -> None:
    certificates = CertificateFiles(tmp_path)
    base = {
        "listeners": "SASL_SSL://127.0.0.1:9093",
        "ssl.keystore.location": str(certificates.keystore_path),
        "ssl.endpoint.identification.algorithm": "",
    }
    context = inter_broker(
        {**base, "ssl.truststore.location": str(certificates.ca_path)}
    ).client_ssl_context()
    assert context is not None
    assert not context.check_hostname
    missing = inter_broker({**base, "ssl.truststore.location": str(tmp_path / "absent.pem")})
    with pytest.raises(ConfigError, match="cannot load the truststore or keystore"):
        missing.client_ssl_context()
