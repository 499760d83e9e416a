"""`python -m broker format` for a dynamic quorum (KIP-853) and the configs that select one."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from broker.__main__ import main
from broker.config import BrokerConfig, ConfigError, controller_addresses, is_dynamic_quorum
from broker.node.storage_format import (
    FormatError,
    format_metadata_dir,
    kafka_uuid,
    parse_directory_id,
    parse_initial_controllers,
    read_metadata_dir,
)
from broker.raft.messages import Voter


def test_a_directory_id_is_read_in_kafkas_printed_form_and_as_a_uuid() -> None:
    directory = uuid.uuid4()
    assert parse_directory_id(kafka_uuid(str(directory))) == str(directory)
    assert parse_directory_id(str(directory)) == str(directory)
    with pytest.raises(FormatError, match="not a directory id"):
        parse_directory_id("nope")


def test_initial_controllers_name_id_endpoint_and_directory() -> None:
    first, second = uuid.uuid4(), uuid.uuid4()
    voters = parse_initial_controllers(f"1@localhost:9093:{kafka_uuid(str(first))},2@[::1]:9094:{second}")
    assert voters == (Voter(1, str(first), "localhost", 9093), Voter(2, str(second), "::1", 9094))
    for bad in ("1@localhost:9093", f"x@h:1:{first}", f"1@h:1:{first},1@h:2:{second}", ""):
        with pytest.raises(FormatError):
            parse_initial_controllers(bad)


def test_format_writes_the_directory_id_and_the_bootstrap_voters_once(tmp_path: Path) -> None:
    directory = uuid.uuid4()
    formatted = format_metadata_dir(
        tmp_path / "meta",
        node_id=2,
        cluster_id="c1",
        endpoint=("127.0.0.1", 9094),
        initial_controllers=f"1@h:9093:{uuid.uuid4()},2@h:9094:{directory}",
    )
    assert formatted.directory_id == str(directory)
    assert read_metadata_dir(tmp_path / "meta", 2) == formatted
    with pytest.raises(FormatError, match="already formatted"):
        format_metadata_dir(tmp_path / "meta", node_id=2, cluster_id="c1", endpoint=("h", 1), standalone=True)
    with pytest.raises(FormatError, match="formatted for node 2"):
        read_metadata_dir(tmp_path / "meta", 3)
    with pytest.raises(FormatError, match="not one of them"):
        format_metadata_dir(
            tmp_path / "other",
            node_id=5,
            cluster_id="c1",
            endpoint=("h", 1),
            initial_controllers=f"1@h:1:{directory}",
        )


def test_standalone_and_observer_formats(tmp_path: Path) -> None:
    alone = format_metadata_dir(tmp_path / "a", node_id=1, cluster_id="c", endpoint=("h", 9), standalone=True)
    assert alone.bootstrap_voters == (Voter(1, alone.directory_id, "h", 9),)
    observer = format_metadata_dir(tmp_path / "b", node_id=4, cluster_id="c", endpoint=("h", 9))
    assert observer.bootstrap_voters == ()
    assert observer.directory_id != alone.directory_id
    with pytest.raises(FormatError, match="not formatted"):
        read_metadata_dir(tmp_path / "c", 1)


def _controller(tmp_path: Path, **extra: str) -> list[str]:
    properties = {
        "process.roles": "controller",
        "node.id": "1",
        "listeners": "CONTROLLER://127.0.0.1:19093",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
        "log.dirs": str(tmp_path / "logs"),
        **extra,
    }
    return [item for key, value in properties.items() for item in ("--override", f"{key}={value}")]


def test_the_format_command_and_the_dynamic_quorum_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overrides = _controller(
        tmp_path, **{"controller.quorum.bootstrap.servers": "127.0.0.1:19093", "cluster.id": "c1"}
    )
    assert main(["format", *overrides, "--standalone"]) == 0
    assert "Formatted" in capsys.readouterr().out
    assert main(["format", *overrides, "--standalone"]) == 2
    assert "already formatted" in capsys.readouterr().err
    config = BrokerConfig.load(None, [item for item in overrides if item != "--override"])
    assert is_dynamic_quorum(config)
    assert controller_addresses(config) == {-1: ("127.0.0.1", 19093)}


def test_a_dynamic_quorum_needs_a_cluster_id(tmp_path: Path) -> None:
    overrides = _controller(tmp_path, **{"controller.quorum.bootstrap.servers": "127.0.0.1:19093"})
    with pytest.raises(ConfigError, match=r"cluster\.id: required"):
        BrokerConfig.load(None, [item for item in overrides if item != "--override"])
