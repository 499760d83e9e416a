"""What the apps that act on a cluster need from the clusters app: how to reach it, and the replication a
topic created without one gets. Nothing here provisions: topics, ACLs, quotas, groups, credentials,
reconciliation, lag, alerts and jobs import this module, never services.py or the provisioners."""

from __future__ import annotations

from controlplane.clusters.choices import Provider
from controlplane.clusters.models import Cluster
from controlplane.clusters.replication_defaults import default_replication_factor as local_replication_factor
from controlplane.core.encryption import decrypt_secret
from controlplane.kafka.connection import Connection


def connection_for(cluster: Cluster, *, bootstrap_servers: str | None = None) -> Connection:
    return Connection(
        bootstrap_servers=bootstrap_servers or cluster.bootstrap_servers,
        security_protocol=cluster.security_protocol,
        sasl_mechanism=cluster.sasl_mechanism,
        username=cluster.admin_username,
        password=decrypt_secret(cluster.admin_password_encrypted),
    )


def default_replication_factor(cluster: Cluster) -> int:
    """The replication factor of a topic created without one: what the provisioner configured for a local
    cluster (from its controller voters, which the cluster keeps as brokers are added); 1 for a registered
    cluster, whose defaults are its own."""
    if cluster.provider != Provider.LOCAL:
        return 1
    voters = sum(1 for broker in cluster.brokers.all() if broker.is_controller)
    return local_replication_factor(voters or 1)
