"""process.roles and the quorum properties: validated at start, absent means single-node."""

from __future__ import annotations

import pytest

from broker.config import BrokerConfig, ConfigError, parse_voters
from broker.node.roles import broker_only_config, controller_node_config

VOTERS = "1@127.0.0.1:9093,2@127.0.0.1:9094,3@[::1]:9095"
CONTROLLER = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.quorum.voters": VOTERS,
    "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
}


def test_it_parses_the_voters() -> None:
    assert parse_voters(VOTERS) == {1: ("127.0.0.1", 9093), 2: ("127.0.0.1", 9094), 3: ("::1", 9095)}
    with pytest.raises(ValueError, match="id@host:port"):
        parse_voters("1:127.0.0.1:9093")


def test_a_combined_node_serves_clients_without_its_controller_listener() -> None:
    config = BrokerConfig.from_properties(CONTROLLER)
    assert [listener.name for listener in broker_only_config(config).listeners] == ["PLAINTEXT"]
    node = controller_node_config(config)
    assert (node.node_id, node.listen_port) == (1, 9093)
    assert node.metadata_dir.name == "__cluster_metadata"


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"process.roles": "leader"}, "process.roles"),
        ({"controller.quorum.voters": ""}, "controller.quorum.voters"),
        ({"node.id": "9"}, "not one of the voters"),
        ({"listeners": "PLAINTEXT://127.0.0.1:9092"}, "no controller listener"),
        (
            {"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT"},
            "PLAINTEXT or SSL",
        ),
        ({"broker.heartbeat.interval.ms": "9000"}, "shorter than"),
    ],
)
def test_it_refuses_an_inconsistent_cluster_config(changes: dict[str, str], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        BrokerConfig.from_properties(CONTROLLER | changes)


def test_without_process_roles_the_broker_stays_single_node() -> None:
    config = BrokerConfig.from_properties({"listeners": "PLAINTEXT://127.0.0.1:9092"})
    assert config.get_str("process.roles") == ""
