"""A config without cluster settings becomes a one-voter combined node's; a release's data directory becomes
the records of the quorum's first entry (broker/node/single_node.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from broker.config import BrokerConfig, ConfigError
from broker.controller.image import MetadataImage
from broker.metadata.security_records import AlterQuotaRecord, CreateAclRecord
from broker.metadata.security_registry import SecurityStore
from broker.metadata.topic_registry import MetadataStore
from broker.node.single_node import adoption_records, single_node_overrides


def combined(tmp_path: Path, **properties: str) -> BrokerConfig:
    props = {"node.id": "3", "log.dirs": str(tmp_path), **properties}
    return BrokerConfig.from_properties(
        {**props, **dict(o.split("=", 1) for o in single_node_overrides(BrokerConfig.from_properties(props)))}
    )


def test_kafkas_example_ports_and_the_data_directorys_cluster_id(tmp_path: Path) -> None:
    config = combined(tmp_path, listeners="PLAINTEXT://127.0.0.1:9092")
    assert config.get_str("process.roles") == "broker,controller"
    assert [str(item) for item in config.listeners] == [
        "PLAINTEXT://127.0.0.1:9092",
        "CONTROLLER://127.0.0.1:9093",
    ]
    assert config.get_str("controller.quorum.voters") == "3@127.0.0.1:9093"
    assert config.security_protocol("CONTROLLER") == "PLAINTEXT"
    store = MetadataStore(tmp_path)
    store.load()
    assert config.get_str("cluster.id") == store.cluster_id
    # The same id at the next start.
    assert (
        combined(tmp_path, listeners="PLAINTEXT://127.0.0.1:9092").get_str("cluster.id") == store.cluster_id
    )


def test_another_client_port_gets_a_free_loopback_port_and_a_configured_one_is_kept(tmp_path: Path) -> None:
    chosen = combined(tmp_path, listeners="PLAINTEXT://127.0.0.1:0")
    (controller,) = [item for item in chosen.listeners if item.name == "CONTROLLER"]
    assert controller.host == "127.0.0.1"
    assert controller.port > 0
    protocols = "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    kept = combined(
        tmp_path,
        listeners="PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:19093",
        **{"listener.security.protocol.map": protocols},
    )
    assert kept.get_str("controller.quorum.voters") == "3@127.0.0.1:19093"
    with pytest.raises(ConfigError, match="needs a port"):
        combined(
            tmp_path,
            listeners="PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
            **{"listener.security.protocol.map": protocols},
        )


def test_a_release_data_directory_becomes_records_the_image_applies_as_it_was(tmp_path: Path) -> None:
    topics = MetadataStore(tmp_path)
    topics.load()
    created = topics.create_topic("orders", 2, configs={"retention.ms": "1000"})
    security = SecurityStore(tmp_path)
    security.load()
    acl = (2, "orders", 3, "User:alice", "*", 3, 3)
    security.apply_records(
        [
            CreateAclRecord(acl),
            AlterQuotaRecord(((("user", "alice"),)), {"producer_byte_rate": 1024.0}),
        ]
    )
    (tmp_path / "dynamic-configs.json").write_text(
        json.dumps(
            {
                "broker": {"": {"min.insync.replicas": "1"}},
                "group": {"g": {"consumer.session.timeout.ms": "50000"}},
            }
        )
    )
    (tmp_path / "finalized-features.json").write_text(
        json.dumps({"epoch": 4, "levels": {"group.version": 0}})
    )
    (tmp_path / "producer-ids.json").write_text(json.dumps({"block_end": 5000}))

    image = MetadataImage()
    image.apply_entry(1, adoption_records(tmp_path, 3))

    topic = image.topic_by_name("orders")
    assert topic is not None
    assert image.topic_ids["orders"] == created.topic_id
    assert sorted(topic.partitions) == [0, 1]
    assert {p.leader for p in topic.partitions.values()} == {3}
    assert topic.configs == {"retention.ms": "1000"}
    assert image.broker_configs[""] == {"min.insync.replicas": "1"}
    assert image.group_configs["g"] == {"consumer.session.timeout.ms": "50000"}
    assert image.features["group.version"] == 0
    assert image.next_producer_id == 5000
    assert tuple(next(iter(image.acls))) == acl
    assert len(image.quotas) == 1


def test_a_fresh_data_directory_has_nothing_to_adopt_but_its_security_store(tmp_path: Path) -> None:
    assert adoption_records(tmp_path, 1) == []
    assert not (tmp_path / "broker-metadata.json").exists()


class _ScriptedProbe:
    """A probe socket the kernel answers from a script: the ports it offered, in order."""

    offers: list[int] = []

    def __init__(self, *_: object) -> None:
        self._port = 0

    def __enter__(self) -> _ScriptedProbe:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def bind(self, _: tuple[str, int]) -> None:
        self._port = self.offers.pop(0)

    def getsockname(self) -> tuple[str, int]:
        return ("127.0.0.1", self._port)


def test_the_chosen_controller_port_is_never_one_the_config_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The kernel may offer a port that is free only because this process has not bound it yet: a broker once
    # took its own metrics port for its controller and died with "address already in use".
    monkeypatch.setattr(_ScriptedProbe, "offers", [29092, 29100, 29093])
    monkeypatch.setattr("broker.node.single_node.socket.socket", _ScriptedProbe)
    config = combined(tmp_path, listeners="PLAINTEXT://127.0.0.1:29092", **{"metrics.port": "29100"})
    assert config.get_str("controller.quorum.voters") == "3@127.0.0.1:29093"
