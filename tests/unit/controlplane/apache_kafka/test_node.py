"""An Apache Kafka node's configuration and format arguments (controlplane/apache_kafka/node.py), and the
node metrics parser: plain values, no JVM."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

import pytest

from controlplane.apache_kafka import node
from controlplane.clusters.node_metrics import parse_exposition


def _spec(**overrides) -> node.NodeSpec:
    values = {
        "node_id": 4,
        "host": "127.0.0.1",
        "port": 19092,
        "data_dir": Path("/data/node-4"),
        "controller_port": 0,
        "quorum_bootstrap": "127.0.0.1:19093,127.0.0.1:19094,127.0.0.1:19095",
        "super_user": "streamhub-admin",
        "super_user_password": "s3cret-Pass_word",
        **overrides,
    }
    return node.NodeSpec(**values)


def test_it_makes_a_broker_only_node_that_finds_the_quorum_and_cannot_be_overridden_out_of_security() -> None:
    properties = node.server_properties(
        _spec(), {"default.replication.factor": "3"}, {"super.users": "User:mallory", "num.partitions": "6"}
    )
    assert properties["process.roles"] == "broker"
    assert properties["listeners"] == "SASL_PLAINTEXT://127.0.0.1:19092"
    assert (
        properties["controller.quorum.bootstrap.servers"] == "127.0.0.1:19093,127.0.0.1:19094,127.0.0.1:19095"
    )
    assert properties["super.users"] == "User:streamhub-admin;User:streamhub-quorum"
    assert properties["authorizer.class.name"].endswith("StandardAuthorizer")
    assert properties["num.partitions"] == "6"
    assert properties["default.replication.factor"] == "3"
    assert (
        'password="s3cret-Pass_word"'
        in properties["listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config"]
    )


def test_a_controller_node_listens_on_its_quorum_port_with_mutual_tls() -> None:
    properties = node.server_properties(_spec(controller_port=19096), {}, {})
    assert properties["process.roles"] == "broker,controller"
    assert properties["listeners"].endswith(",CONTROLLER://127.0.0.1:19096")
    assert "CONTROLLER:SSL" in properties["listener.security.protocol.map"]
    assert properties["listener.name.controller.ssl.client.auth"] == "required"


@pytest.mark.parametrize("password", ["", 'quo"te', "semi;colon", "line\nbreak", "back\\slash"])
def test_it_refuses_a_password_that_would_break_the_jaas_line(password: str) -> None:
    with pytest.raises(node.UnwritableProperty):
        node.server_properties(_spec(super_user_password=password), {}, {})


def test_the_cluster_id_is_kafkas_base64_uuid_and_stable() -> None:
    first = node.cluster_uuid("7")
    assert first == node.cluster_uuid("7") != node.cluster_uuid("8")
    assert len(first) == 22
    assert len(base64.urlsafe_b64decode(first + "==")) == 16


def test_initial_controllers_get_kafkas_directory_ids() -> None:
    directory = uuid.UUID("6f1c2a54-9b0e-4d39-8c2a-0d1e2f3a4b5c")
    converted = node.initial_controllers_argument(
        f"1@127.0.0.1:19093:{directory},2@127.0.0.1:19094:AAAAAAAAAAAAAAAAAAAAAQ"
    )
    first, second = converted.split(",")
    assert first == f"1@127.0.0.1:19093:{node.kafka_uuid(directory)}"
    assert second == "2@127.0.0.1:19094:AAAAAAAAAAAAAAAAAAAAAQ"


def test_only_the_initial_controllers_format_with_the_super_users_credentials() -> None:
    config = Path("/data/node-1/broker.properties")
    initial = node.format_arguments(
        config, "cid", quorum="initial", initial_controllers="1@h:1:AAAAAAAAAAAAAAAAAAAAAQ",
        super_user="admin", super_user_password="pw",
    )  # fmt: skip
    assert initial.count("--add-scram") == 2
    assert "SCRAM-SHA-512=[name=admin,password=pw]" in initial
    joining = node.format_arguments(config, "cid", quorum="join")
    assert "--no-initial-controllers" in joining
    assert "--add-scram" not in joining
    assert "--initial-controllers" not in node.format_arguments(config, "cid", quorum="broker")


def test_the_argument_file_quotes_every_argument() -> None:
    assert node.argument_file_text(["a b", 'say "hi"', "c:\\d"]) == '"a b"\n"say \\"hi\\""\n"c:\\\\d"\n'


def test_the_heap_comes_from_the_environment_with_a_floor(monkeypatch) -> None:
    monkeypatch.delenv("APACHE_KAFKA_NODE_HEAP_MB", raising=False)
    assert node.heap_mb() == node.DEFAULT_HEAP_MB
    monkeypatch.setenv("APACHE_KAFKA_NODE_HEAP_MB", "1024")
    assert node.heap_mb() == 1024
    monkeypatch.setenv("APACHE_KAFKA_NODE_HEAP_MB", "64")
    with pytest.raises(node.UnwritableProperty):
        node.heap_mb()


def test_node_metrics_sum_each_name_over_its_labels() -> None:
    text = "\n".join(
        [
            "# HELP kafka_broker_topic_bytes_in_total Record bytes appended per topic.",
            "# TYPE kafka_broker_topic_bytes_in_total counter",
            'kafka_broker_topic_bytes_in_total{topic="a"} 100.0',
            'kafka_broker_topic_bytes_in_total{topic="b,c"} 50',
            "kafka_broker_under_replicated_partitions 2.0",
            "garbage line",
        ]
    )
    assert parse_exposition(text) == {
        "kafka_broker_topic_bytes_in_total": 150.0,
        "kafka_broker_under_replicated_partitions": 2.0,
    }
