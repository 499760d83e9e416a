"""Security properties are validated when the broker configuration is read."""

from __future__ import annotations

import pytest

from broker.config import BrokerConfig, ConfigError


def config(**properties: str) -> BrokerConfig:
    return BrokerConfig.from_properties({k.replace("_", "."): v for k, v in properties.items()})


def test_listener_names_map_to_security_protocols() -> None:
    loaded = config(
        listeners="INTERNAL://127.0.0.1:9092,EXTERNAL://127.0.0.1:9093",
        listener_security_protocol_map="INTERNAL:SASL_PLAINTEXT,EXTERNAL:PLAINTEXT",
    )
    assert loaded.security_protocol("INTERNAL") == "SASL_PLAINTEXT"
    assert loaded.security_protocol("EXTERNAL") == "PLAINTEXT"


def test_a_listener_without_a_protocol_is_refused() -> None:
    with pytest.raises(ConfigError, match="INTERNAL"):
        config(listeners="INTERNAL://127.0.0.1:9092")


def test_tls_listeners_need_a_keystore() -> None:
    with pytest.raises(ConfigError, match=r"ssl\.keystore\.location"):
        config(listeners="SASL_SSL://127.0.0.1:9092")


def test_only_supported_mechanisms_may_be_enabled() -> None:
    with pytest.raises(ConfigError, match="GSSAPI"):
        config(sasl_enabled_mechanisms="PLAIN,GSSAPI")
    assert config(sasl_enabled_mechanisms="scram-sha-512").sasl_enabled_mechanisms == ["SCRAM-SHA-512"]


def test_super_users_and_the_authorizer_are_read_the_kafka_way() -> None:
    loaded = config(super_users="User:admin;User:ops", authorizer_class_name="acl")
    assert loaded.super_users == ["User:admin", "User:ops"]
    assert loaded.authorizer_enabled
    assert not config().authorizer_enabled
    with pytest.raises(ConfigError, match=r"super\.users"):
        config(super_users="admin")


def test_quota_windows_must_be_positive() -> None:
    with pytest.raises(ConfigError, match=r"quota\.window\.num"):
        config(quota_window_num="0")
