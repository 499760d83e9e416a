from pathlib import Path

from broker.config import BrokerConfig
from controlplane.clusters.provisioners.base import NodePlan
from controlplane.clusters.provisioners.local import LocalProvisioner


def test_it_writes_a_config_the_broker_loads_with_the_spec_overrides(tmp_path: Path) -> None:
    provisioner = LocalProvisioner(root=tmp_path)
    node = NodePlan(node_id=1, host="127.0.0.1", port=19092, data_dir=tmp_path / "7" / "node-1")

    provisioner.write_config(cluster_id=7, node=node, overrides={"num.partitions": "3"})
    config = BrokerConfig.load(provisioner.config_path(node))

    assert config.node_id == 1
    assert [str(listener) for listener in config.listeners] == ["PLAINTEXT://127.0.0.1:19092"]
    assert config.log_dirs == [node.data_dir / "logs"]
    assert config.num_partitions == 3
    assert config.get_str("cluster.id") == "streamhub-7"


def test_the_provisioner_keeps_its_own_properties_whatever_the_overrides_say(tmp_path: Path) -> None:
    provisioner = LocalProvisioner(root=tmp_path)
    node = NodePlan(node_id=2, host="127.0.0.1", port=19093, data_dir=tmp_path / "node-2")

    provisioner.write_config(
        cluster_id=1, node=node, overrides={"node.id": "9", "listeners": "PLAINTEXT://0.0.0.0:1"}
    )
    config = BrokerConfig.load(provisioner.config_path(node))

    assert config.node_id == 2
    assert config.listeners[0].host == "127.0.0.1"


def test_a_pid_that_is_not_this_nodes_broker_is_not_alive(tmp_path: Path) -> None:
    import os

    node = NodePlan(node_id=1, host="127.0.0.1", port=19092, data_dir=tmp_path)

    assert not LocalProvisioner(root=tmp_path).is_alive(node, os.getpid())  # alive, but not a broker
    assert not LocalProvisioner(root=tmp_path).is_alive(node, None)
