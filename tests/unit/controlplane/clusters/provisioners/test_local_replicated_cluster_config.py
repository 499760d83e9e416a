"""What the local provisioner writes for the nodes of a replicated cluster, loaded by the broker's own
config parser (which also runs the cluster-mode validation)."""

import uuid
from pathlib import Path

import pytest

from broker.config import BrokerConfig, controller_tls, parse_properties, roles_of
from controlplane.clusters.provisioners.base import ClusterTopology, ListenerSecurity, NodePlan
from controlplane.clusters.provisioners.local import LocalProvisioner, controller_ids
from controlplane.clusters.replication_defaults import default_replication_factor

SECURE = ListenerSecurity(
    protocol="SASL_PLAINTEXT", super_user="streamhub-admin", super_user_password="s3cr3t-pw"
)
JAAS = "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config"


def _nodes(tmp_path: Path, count: int, voters: int = 3) -> list[NodePlan]:
    return [
        NodePlan(
            node_id=node_id,
            host="127.0.0.1",
            port=19090 + node_id,
            data_dir=tmp_path / "7" / f"node-{node_id}",
            controller_port=19190 + node_id if node_id <= voters else 0,
        )
        for node_id in range(1, count + 1)
    ]


def _written(tmp_path: Path, node: NodePlan, topology: ClusterTopology, **overrides: str) -> BrokerConfig:
    provisioner = LocalProvisioner(root=tmp_path)
    provisioner.write_config(cluster_id=7, node=node, overrides=overrides, security=SECURE, topology=topology)
    return BrokerConfig.load(provisioner.config_path(node))


def _properties(tmp_path: Path, node: NodePlan) -> dict[str, str]:
    """The file as written: some of these properties are the broker's own, some pass through as extras."""
    return parse_properties(LocalProvisioner(root=tmp_path).config_path(node).read_text())


def test_the_first_three_nodes_vote_in_the_quorum_and_the_rest_are_brokers_only() -> None:
    assert controller_ids(1) == set()
    assert controller_ids(2) == {1, 2}
    assert controller_ids(3) == {1, 2, 3}
    assert controller_ids(5) == {1, 2, 3}


def test_a_controller_node_listens_for_clients_with_scram_and_for_the_quorum_in_plaintext(
    tmp_path: Path,
) -> None:
    nodes = _nodes(tmp_path, 4)
    topology = ClusterTopology(voters=tuple(nodes[:3]))

    config = _written(tmp_path, nodes[0], topology)

    assert roles_of(config) == {"broker", "controller"}
    assert config.get_str("controller.quorum.voters") == (
        "1@127.0.0.1:19191,2@127.0.0.1:19192,3@127.0.0.1:19193"
    )
    assert [str(listener) for listener in config.listeners] == [
        "SASL_PLAINTEXT://127.0.0.1:19091",
        "CONTROLLER://127.0.0.1:19191",
    ]
    assert [str(listener) for listener in config.advertised_listeners] == ["SASL_PLAINTEXT://127.0.0.1:19091"]
    assert config.security_protocol_map == {"SASL_PLAINTEXT": "SASL_PLAINTEXT", "CONTROLLER": "SSL"}
    assert config.get_str("controller.listener.names") == "CONTROLLER"


def test_the_quorum_speaks_mutual_tls_with_certificates_from_the_cluster_ca(tmp_path: Path) -> None:
    nodes = _nodes(tmp_path, 4)
    topology = ClusterTopology(voters=tuple(nodes[:3]))

    for node in (nodes[0], nodes[3]):  # a voter and a broker-only node both dial the controllers
        config = _written(tmp_path, node, topology)
        tls = controller_tls(config)
        assert tls is not None
        assert tls.keystore.name == f"node-{node.node_id}.pem"
        assert tls.keystore.stat().st_mode & 0o077 == 0
        assert tls.truststore.name == "ca.pem"
        tls.server_context()  # the keystore and CA load


def test_a_fourth_node_is_a_broker_with_the_same_voters_and_no_controller_listener(tmp_path: Path) -> None:
    nodes = _nodes(tmp_path, 4)
    topology = ClusterTopology(voters=tuple(nodes[:3]))

    config = _written(tmp_path, nodes[3], topology)

    assert roles_of(config) == {"broker"}
    assert [str(listener) for listener in config.listeners] == ["SASL_PLAINTEXT://127.0.0.1:19094"]
    assert config.get_str("controller.quorum.voters").count("@") == 3


def test_brokers_authenticate_to_each_other_as_the_super_user_with_scram_sha_512(tmp_path: Path) -> None:
    nodes = _nodes(tmp_path, 3)

    _written(tmp_path, nodes[1], ClusterTopology(voters=tuple(nodes)))
    written = _properties(tmp_path, nodes[1])

    assert written["sasl.mechanism.inter.broker.protocol"] == "SCRAM-SHA-512"
    assert written["inter.broker.listener.name"] == "SASL_PLAINTEXT"
    assert written[JAAS] == (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="streamhub-admin" password="s3cr3t-pw";'
    )


@pytest.mark.parametrize(
    ("size", "factor", "min_insync"),
    [(3, 3, 2), (2, 2, 1)],
)
def test_replication_defaults_follow_the_quorum_size(
    tmp_path: Path, size: int, factor: int, min_insync: int
) -> None:
    nodes = _nodes(tmp_path, size)

    config = _written(tmp_path, nodes[0], ClusterTopology(voters=tuple(nodes)))

    assert config.default_replication_factor == factor
    assert config.get_int("offsets.topic.replication.factor") == factor
    assert config.get_int("min.insync.replicas") == min_insync
    assert default_replication_factor(size) == factor


def test_failover_timings_are_set_and_a_spec_may_still_override_them(tmp_path: Path) -> None:
    nodes = _nodes(tmp_path, 3)
    topology = ClusterTopology(voters=tuple(nodes))

    config = _written(tmp_path, nodes[0], topology)
    lag = _properties(tmp_path, nodes[0])["replica.lag.time.max.ms"]
    _written(tmp_path, nodes[0], topology, **{"replica.lag.time.max.ms": "20000"})
    tuned_lag = _properties(tmp_path, nodes[0])["replica.lag.time.max.ms"]

    assert config.get_int("broker.heartbeat.interval.ms") == 400
    assert config.get_int("broker.session.timeout.ms") == 2000
    assert config.get_int("controller.quorum.election.timeout.ms") == 1000
    assert (lag, tuned_lag) == ("10000", "20000")


def test_a_single_node_cluster_stays_the_plain_broker_without_roles(tmp_path: Path) -> None:
    (node,) = _nodes(tmp_path, 1, voters=0)

    config = _written(tmp_path, node, ClusterTopology())

    assert config.get_str("process.roles") == ""
    assert config.default_replication_factor == 1
    assert "sasl.mechanism.inter.broker.protocol" not in _properties(tmp_path, node)
    assert "broker.heartbeat.interval.ms" not in config.explicit


def test_a_password_with_a_quote_is_refused_since_it_would_end_the_jaas_value(tmp_path: Path) -> None:
    from controlplane.clusters.provisioners.base import ProvisioningFailed

    nodes = _nodes(tmp_path, 3)
    quoted = ListenerSecurity(protocol="SASL_PLAINTEXT", super_user="admin", super_user_password='pw"x')

    with pytest.raises(ProvisioningFailed):
        LocalProvisioner(root=tmp_path).write_config(
            cluster_id=7,
            node=nodes[0],
            overrides={},
            security=quoted,
            topology=ClusterTopology(voters=tuple(nodes)),
        )


def test_a_dynamic_quorum_names_its_bootstrap_servers_and_formats_each_controller_once(
    tmp_path: Path,
) -> None:
    nodes = _nodes(tmp_path, 4)
    topology = ClusterTopology(voters=tuple(nodes[:3]), dynamic=True)
    controller = _written(tmp_path, nodes[0], topology)
    broker_only = _written(tmp_path, nodes[3], topology)
    for config in (controller, broker_only):
        assert not config.get_str("controller.quorum.voters")
        assert (
            config.get_str("controller.quorum.bootstrap.servers")
            == "127.0.0.1:19191,127.0.0.1:19192,127.0.0.1:19193"
        )
        assert config.get_str("cluster.id") == "streamhub-7"
    provisioner = LocalProvisioner(root=tmp_path)
    initial = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}:{uuid.uuid4()}" for n in nodes[:3])
    provisioner.format_controller(nodes[0], initial_controllers=initial)
    meta = nodes[0].data_dir / "logs" / "__cluster_metadata" / "meta.properties"
    written = meta.read_text()
    assert initial.split(",")[0].rsplit(":", 1)[1] in written
    provisioner.format_controller(nodes[0], initial_controllers=None)  # formatted already: left as it is
    assert meta.read_text() == written
