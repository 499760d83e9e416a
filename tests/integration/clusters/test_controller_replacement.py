"""Replacing a controller node of a locally provisioned cluster through the API (KIP-853, a real worker and
real broker processes): a new broker+controller node joins as an observer and becomes a voter, the old
one's replicas move off it, it leaves the quorum and is removed; the cluster keeps creating topics."""

from __future__ import annotations

from typing import Any

import pytest

from controlplane.audit.models import AuditEvent
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.kafka.quorum import describe_quorum
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.models import Team

pytestmark = pytest.mark.integration


def _provision(people: Any, wait_for_operation: Any, name: str) -> Cluster:
    accepted = people.org_admin.post(
        "/api/v1/clusters/", {"organization": people.organization.id, "name": name}, format="json"
    )
    assert accepted.status_code == 202, accepted.json()
    operation = wait_for_operation(accepted.json()["operation"]["id"], timeout=120)
    assert operation.state == "succeeded", operation.error
    return Cluster.objects.get(pk=accepted.json()["cluster"]["id"])


def _create_topic(people: Any, cluster: Cluster, name: str) -> None:
    team = Team.objects.get(organization=people.organization, name="Payments")
    if not team.prefixes.exists():
        tenancy.add_prefix(actor=Actor.system(), team=team, resource_type="topic", prefix="payments.")
    body = {"cluster": cluster.id, "team": team.id, "name": name, "partitions": 1}
    response = people.developer.post("/api/v1/topics/", body, format="json")
    assert response.status_code == 201, response.json()


def test_a_controller_node_is_replaced_end_to_end(people: Any, worker: Any, wait_for_operation: Any) -> None:
    cluster = _provision(people, wait_for_operation, "quorum-replace")
    assert cluster.dynamic_quorum
    _create_topic(people, cluster, "payments.before")
    before = describe_quorum(connection_for(cluster))
    assert sorted(v.node_id for v in before.voters) == [1, 2, 3]
    assert all(v.directory_id is not None for v in before.voters), (
        "a dynamic quorum's voters have directory ids"
    )
    old_id = before.leader_id  # the hardest case: the active controller leaves

    unconfirmed = people.org_admin.post(
        f"/api/v1/clusters/{cluster.id}/brokers/{old_id}/replace-controller/",
        {"confirm_node_id": 99},
        format="json",
    )
    assert unconfirmed.status_code == 400
    accepted = people.org_admin.post(
        f"/api/v1/clusters/{cluster.id}/brokers/{old_id}/replace-controller/",
        {"confirm_node_id": old_id},
        format="json",
    )
    assert accepted.status_code == 202, accepted.json()
    operation = wait_for_operation(accepted.json()["operation"]["id"], timeout=280)
    assert operation.state == "succeeded", (operation.error, operation.log)

    after = describe_quorum(connection_for(cluster))
    voters = sorted(v.node_id for v in after.voters)
    assert voters == sorted({1, 2, 3, 4} - {old_id})
    assert after.leader_id in voters
    detail = people.org_admin.get(f"/api/v1/clusters/{cluster.id}/").json()
    assert sorted(b["node_id"] for b in detail["brokers"]) == voters
    assert all(b["roles"] == ["broker", "controller"] for b in detail["brokers"])
    assert not cluster.brokers.filter(node_id=old_id).exists()
    assert AuditEvent.objects.filter(action="cluster.replace_controller").exists()
    _create_topic(people, cluster, "payments.after")

    # A static quorum keeps refusing (clusters provisioned before dynamic quorums).
    Cluster.objects.filter(pk=cluster.pk).update(dynamic_quorum=False)
    refused = people.org_admin.post(
        f"/api/v1/clusters/{cluster.id}/brokers/{voters[0]}/replace-controller/",
        {"confirm_node_id": voters[0]},
        format="json",
    )
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "static_quorum"
