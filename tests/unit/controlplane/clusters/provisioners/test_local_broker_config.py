import os
import stat
from pathlib import Path

import pytest

from broker.config import BrokerConfig
from controlplane.clusters.provisioners.base import ListenerSecurity, NodePlan, ProvisioningFailed
from controlplane.clusters.provisioners.local import LocalProvisioner

SECURE = ListenerSecurity(
    protocol="SASL_PLAINTEXT", super_user="streamhub-admin", super_user_password="s3cr3t-pw"
)
LEGACY = ListenerSecurity(protocol="PLAINTEXT")


def _node(tmp_path: Path, node_id: int = 1, port: int = 19092) -> NodePlan:
    return NodePlan(node_id=node_id, host="127.0.0.1", port=port, data_dir=tmp_path / "7" / f"node-{node_id}")


def test_it_writes_a_config_the_broker_loads_with_the_spec_overrides(tmp_path: Path) -> None:
    provisioner = LocalProvisioner(root=tmp_path)
    node = _node(tmp_path)

    provisioner.write_config(cluster_id=7, node=node, overrides={"num.partitions": "3"}, security=SECURE)
    config = BrokerConfig.load(provisioner.config_path(node))

    assert config.node_id == 1
    assert config.log_dirs == [node.data_dir / "logs"]
    assert config.num_partitions == 3
    assert config.get_str("cluster.id") == "streamhub-7"


def test_a_new_cluster_listens_with_scram_on_loopback_with_acls_and_the_super_user(tmp_path: Path) -> None:
    provisioner = LocalProvisioner(root=tmp_path)
    node = _node(tmp_path)

    provisioner.write_config(cluster_id=7, node=node, overrides={}, security=SECURE)
    config = BrokerConfig.load(provisioner.config_path(node))

    assert [str(listener) for listener in config.listeners] == ["SASL_PLAINTEXT://127.0.0.1:19092"]
    assert sorted(config.sasl_enabled_mechanisms) == ["SCRAM-SHA-256", "SCRAM-SHA-512"]
    assert config.super_users == ["User:streamhub-admin"]
    assert config.authorizer_enabled
    assert config.get_bool("allow.everyone.if.no.acl.found") is False
    assert config.get_str("sasl.bootstrap.users") == (
        "streamhub-admin:SCRAM-SHA-512:s3cr3t-pw;streamhub-admin:SCRAM-SHA-256:s3cr3t-pw"
    )


def test_the_config_holding_the_password_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    provisioner = LocalProvisioner(root=tmp_path)
    node = _node(tmp_path)
    old_umask = os.umask(0o022)  # the usual umask would leave a plain write world-readable
    try:
        provisioner.write_config(cluster_id=7, node=node, overrides={}, security=SECURE)
        provisioner.write_config(cluster_id=7, node=node, overrides={}, security=SECURE)  # rewrite too
    finally:
        os.umask(old_umask)

    assert stat.S_IMODE(provisioner.config_path(node).stat().st_mode) == 0o600
    assert stat.S_IMODE(node.data_dir.stat().st_mode) == 0o700
    assert [path.name for path in node.data_dir.iterdir()] == ["broker.properties"]  # no temporary left


def test_an_existing_plaintext_cluster_keeps_its_plaintext_listener(tmp_path: Path) -> None:
    provisioner = LocalProvisioner(root=tmp_path)
    node = _node(tmp_path)

    provisioner.write_config(cluster_id=7, node=node, overrides={}, security=LEGACY)
    config = BrokerConfig.load(provisioner.config_path(node))

    assert [str(listener) for listener in config.listeners] == ["PLAINTEXT://127.0.0.1:19092"]
    assert not config.authorizer_enabled
    assert config.get_str("sasl.bootstrap.users") == ""


@pytest.mark.parametrize("password", ["with;semicolon", "with:colon", "line\nbreak", ""])
def test_it_refuses_a_password_that_would_not_survive_the_bootstrap_users_list(
    tmp_path: Path, password: str
) -> None:
    security = ListenerSecurity(protocol="SASL_PLAINTEXT", super_user="admin", super_user_password=password)

    with pytest.raises(ProvisioningFailed, match="cannot be written"):
        LocalProvisioner(root=tmp_path).write_config(
            cluster_id=7, node=_node(tmp_path), overrides={}, security=security
        )
    assert not (tmp_path / "7" / "node-1" / "broker.properties").exists()


def test_it_refuses_a_protocol_local_brokers_are_not_given_certificates_for(tmp_path: Path) -> None:
    with pytest.raises(ProvisioningFailed, match="do not listen with SASL_SSL"):
        LocalProvisioner(root=tmp_path).write_config(
            cluster_id=7, node=_node(tmp_path), overrides={}, security=ListenerSecurity(protocol="SASL_SSL")
        )


def test_the_provisioner_keeps_its_own_properties_whatever_the_overrides_say(tmp_path: Path) -> None:
    provisioner = LocalProvisioner(root=tmp_path)
    node = _node(tmp_path, node_id=2, port=19093)

    provisioner.write_config(
        cluster_id=1,
        node=node,
        overrides={"node.id": "9", "listeners": "PLAINTEXT://0.0.0.0:1", "super.users": "User:mallory"},
        security=SECURE,
    )
    config = BrokerConfig.load(provisioner.config_path(node))

    assert config.node_id == 2
    assert [str(listener) for listener in config.listeners] == ["SASL_PLAINTEXT://127.0.0.1:19093"]
    assert config.super_users == ["User:streamhub-admin"]


def test_the_super_users_password_is_not_in_the_security_settings_repr() -> None:
    assert "s3cr3t-pw" not in repr(SECURE)


def test_a_pid_that_is_not_this_nodes_broker_is_not_alive(tmp_path: Path) -> None:
    node = NodePlan(node_id=1, host="127.0.0.1", port=19092, data_dir=tmp_path)

    assert not LocalProvisioner(root=tmp_path).is_alive(node, os.getpid())  # alive, but not a broker
    assert not LocalProvisioner(root=tmp_path).is_alive(node, None)
