import re

import pytest
from cryptography.fernet import Fernet

from controlplane.clusters.broker_configs import InvalidBrokerConfig, validate_broker_config
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.clusters.provisioners.base import ProvisioningFailed
from controlplane.clusters.services import LOCAL_SUPER_USER, listener_security, new_super_user_password
from controlplane.core.encryption import encrypt_secret


def _sasl_cluster(password: str) -> Cluster:
    return Cluster(
        name="events",
        provider="local",
        bootstrap_servers="127.0.0.1:19092",
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-512",
        admin_username=LOCAL_SUPER_USER,
        admin_password_encrypted=encrypt_secret(password),
    )


def test_the_control_plane_connects_to_a_sasl_cluster_with_its_super_user() -> None:
    connection = connection_for(_sasl_cluster("pw-from-request-time"))

    config = connection.client_config(timeout_seconds=1)

    assert {name: config[name] for name in ("bootstrap.servers", "security.protocol")} == {
        "bootstrap.servers": "127.0.0.1:19092",
        "security.protocol": "SASL_PLAINTEXT",
    }
    assert (config["sasl.mechanism"], config["sasl.username"], config["sasl.password"]) == (
        "SCRAM-SHA-512",
        LOCAL_SUPER_USER,
        "pw-from-request-time",
    )
    assert "pw-from-request-time" not in repr(connection)


def test_the_provisioner_gets_the_decrypted_password_of_a_sasl_cluster() -> None:
    security = listener_security(_sasl_cluster("pw-from-request-time"))

    assert security.uses_sasl
    assert (security.super_user, security.super_user_password) == (LOCAL_SUPER_USER, "pw-from-request-time")


def test_a_password_the_configured_keys_cannot_read_fails_provisioning_with_the_reason(settings) -> None:
    cluster = _sasl_cluster("pw-from-request-time")
    settings.FIELD_ENCRYPTION_KEY = Fernet.generate_key().decode()  # the key was rotated away

    with pytest.raises(ProvisioningFailed, match="cannot be decrypted"):
        listener_security(cluster)


def test_a_cluster_made_before_brokers_had_security_keeps_plaintext() -> None:
    legacy = Cluster(name="old", provider="local", bootstrap_servers="127.0.0.1:9092")

    assert legacy.security_protocol == "PLAINTEXT"
    assert not listener_security(legacy).uses_sasl
    assert connection_for(legacy).client_config(timeout_seconds=1)["security.protocol"] == "PLAINTEXT"
    assert "sasl.username" not in connection_for(legacy).client_config(timeout_seconds=1)


def test_super_user_passwords_are_long_random_and_safe_for_the_bootstrap_users_list() -> None:
    passwords = {new_super_user_password() for _ in range(50)}

    assert len(passwords) == 50
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{43}", password) for password in passwords)


@pytest.mark.parametrize("name", ["super.users", "sasl.bootstrap.users", "authorizer.class.name"])
def test_a_spec_cannot_override_the_clusters_security(name: str) -> None:
    with pytest.raises(InvalidBrokerConfig) as refused:
        validate_broker_config({name: "User:mallory"})

    assert refused.value.problems == [f"{name} is set by the provisioner and cannot be overridden."]
