"""How many copies new topics of a local cluster get: what the provisioner configures its nodes with, and
what a topic created without a replication factor gets (controlplane/topics). Pure: no provisioning here."""

# Defaults of every local node: a cluster of one node needs replication factors of 1.
NODE_DEFAULTS = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "default.replication.factor": "1",
}


def replication_defaults(broker_count: int) -> dict[str, str]:
    """New topics survive one broker failure when the cluster is big enough: RF 3 with two in sync from
    three brokers on, RF 2 (one in sync) with two. Nodes take it from the number of controller voters,
    which a cluster keeps when brokers are added, so every node of a cluster has the same defaults."""
    if broker_count <= 1:
        return dict(NODE_DEFAULTS)
    factor, in_sync = (3, 2) if broker_count >= 3 else (2, 1)
    return {
        "default.replication.factor": str(factor),
        "offsets.topic.replication.factor": str(factor),
        "transaction.state.log.replication.factor": str(factor),
        "min.insync.replicas": str(in_sync),
        "transaction.state.log.min.isr": str(in_sync),
    }


def default_replication_factor(broker_count: int) -> int:
    return int(replication_defaults(broker_count)["default.replication.factor"])
