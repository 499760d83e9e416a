"""Acceptance 5: changes made behind the control plane's back show up as drift; a managed topic deleted
on the cluster is re-created; unmanaged resources are reported, never deleted, and can be adopted."""

import time

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from controlplane.clusters.connections import connection_for
from controlplane.kafka.acls import describe_acls
from controlplane.kafka.quotas import alter_client_quota
from tests.integration.topics.world import KafkaWorld, create_topic, reconcile

pytestmark = pytest.mark.integration


def _drift(world: KafkaWorld, client=None) -> list[dict]:
    client = client or world.org_admin
    return client.get("/api/v1/drift/", {"cluster": world.cluster.id, "limit": 500}).json()["results"]


def _wait_until_gone(world: KafkaWorld, topic: str) -> None:
    admin = world.admin_client()
    deadline = time.monotonic() + 5
    while topic in admin.list_topics(timeout=5).topics:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_outside_changes_are_drift_and_a_deleted_managed_topic_comes_back(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    managed = world.topic_prefix_a + "payments"
    create_topic(world, world.developer_a, managed, partitions=2, configs={"retention.ms": "86400000"})
    assert [d for d in _drift(world) if d["resource_name"] == managed] == []
    reconcile(world)
    assert [d for d in _drift(world) if d["resource_name"] == managed] == []

    admin = world.admin_client()
    resource = ConfigResource(
        ResourceType.TOPIC,
        managed,
        incremental_configs=[
            ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(10)
    sneaky = AclBinding(
        ResourceType.TOPIC,
        world.topic_prefix_a,
        ResourcePatternType.PREFIXED,
        "User:intruder",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )
    for future in admin.create_acls([sneaky]).values():
        future.result(10)
    stray = world.topic_prefix_b + "stray"
    for future in admin.create_topics([NewTopic(stray, 1, 1)]).values():
        future.result(10)

    run = reconcile(world)

    drift = _drift(world)
    (config_drift,) = [
        d for d in drift if d["kind"] == "topic_config_changed" and d["resource_name"] == managed
    ]
    assert config_drift["details"]["configs"] == {"retention.ms": {"desired": "86400000", "observed": "1000"}}
    assert config_drift["team"] == world.team_a.id
    assert any(d["kind"] == "unmanaged_acl" and d["details"]["principal"] == "User:intruder" for d in drift)
    assert any(d["kind"] == "unmanaged_topic" and d["resource_name"] == stray for d in drift)
    assert run["summary"]["drift"]["unmanaged_acl"] >= 1
    # The team sees its topic's drift, not the organization's unmanaged findings.
    team_view = _drift(world, world.developer_a)
    assert {d["kind"] for d in team_view} == {"topic_config_changed"}
    # Nothing unmanaged was deleted.
    assert stray in admin.list_topics(timeout=5).topics

    for future in admin.delete_topics([managed]).values():
        future.result(10)
    _wait_until_gone(world, managed)
    run = reconcile(world)
    assert f"topic:{managed}" in run["summary"]["created"]
    recreated = admin.list_topics(topic=managed, timeout=5).topics[managed]
    assert len(recreated.partitions) == 2
    assert any(d["kind"] == "managed_topic_missing" and d["resource_name"] == managed for d in _drift(world))


def test_an_admin_adopts_an_unmanaged_topic_into_a_team(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    found = world.topic_prefix_a + "legacy"
    admin = world.admin_client()
    for future in admin.create_topics([NewTopic(found, 3, 1, config={"retention.ms": "7200000"})]).values():
        future.result(10)
    reconcile(world)
    listed = world.org_admin.get("/api/v1/topics/", {"cluster": world.cluster.id, "managed": "false"}).json()[
        "results"
    ]
    (row,) = [t for t in listed if t["name"] == found]
    assert row["team"] is None
    assert world.developer_a.get(f"/api/v1/topics/{row['id']}/").status_code == 404

    denied = world.developer_a.post(
        f"/api/v1/topics/{row['id']}/adopt/", {"team": world.team_a.id}, format="json"
    )
    assert denied.status_code == 404
    adopted = world.org_admin.post(
        f"/api/v1/topics/{row['id']}/adopt/", {"team": world.team_a.id}, format="json"
    )
    assert adopted.status_code == 200, adopted.json()
    assert adopted.json()["managed"] is True
    assert adopted.json()["partitions"] == 3
    assert adopted.json()["configs"] == {"retention.ms": "7200000"}
    assert world.developer_a.get(f"/api/v1/topics/{row['id']}/").status_code == 200
    reconcile(world)
    assert not [d for d in _drift(world) if d["resource_name"] == found]


def test_acls_and_quotas_made_outside_are_adopted_and_deleted_managed_bindings_come_back(
    kafka_world: KafkaWorld,
) -> None:
    world = kafka_world
    grant = world.developer_a.post(
        "/api/v1/access-grants/",
        {
            "cluster": world.cluster.id,
            "service_account": world.account_a.id,
            "template": "producer",
            "topic_prefix": world.topic_prefix_a,
        },
        format="json",
    ).json()
    write = next(b for b in grant["bindings"] if b["operation"] == "WRITE")
    admin = world.admin_client()
    deleted = AclBindingFilter(
        ResourceType.TOPIC,
        write["resource_name"],
        ResourcePatternType.PREFIXED,
        write["principal"],
        "*",
        AclOperation.WRITE,
        AclPermissionType.ALLOW,
    )
    for future in admin.delete_acls([deleted]).values():
        future.result(10)
    outsider_user = f"outside-{world.account_a.name}"
    alter_client_quota(
        connection_for(world.cluster), entity={"user": outsider_user}, set_values={"producer_byte_rate": 5e5}
    )

    run = reconcile(world)

    assert any(item.startswith("acl:") for item in run["summary"]["created"])
    on_cluster = describe_acls(connection_for(world.cluster))
    assert any(acl.principal == write["principal"] and acl.operation == "WRITE" for acl in on_cluster)
    assert any(
        d["kind"] == "managed_acl_missing" and d["team"] == world.team_a.id
        for d in _drift(world, world.developer_a)
    )

    quotas = world.org_admin.get("/api/v1/quotas/", {"cluster": world.cluster.id, "managed": "false"}).json()
    (found,) = [q for q in quotas["results"] if q["entity"] == {"user": outsider_user}]
    assert found["observed_values"] == {"producer_byte_rate": 5e5}
    assert world.developer_a.post(f"/api/v1/quotas/{found['id']}/adopt/").status_code == 404
    adopted = world.org_admin.post(f"/api/v1/quotas/{found['id']}/adopt/")
    assert adopted.status_code == 200, adopted.json()
    assert adopted.json()["values"] == {"producer_byte_rate": 5e5}

    acls = world.org_admin.get(
        "/api/v1/acls/", {"cluster": world.cluster.id, "managed": "false", "limit": 500}
    ).json()
    outside_acls = [b for b in acls["results"] if b["principal"] == f"User:{world.account_a.name}"]
    assert outside_acls == []  # the restored binding is the grant's, not an unmanaged one
    reconcile(world)
    kinds = {(d["kind"], d["resource_name"]) for d in _drift(world)}
    assert ("unmanaged_quota", f"user={outsider_user}") not in kinds
    alter_client_quota(
        connection_for(world.cluster),
        entity={"user": outsider_user},
        set_values={},
        remove_keys=["producer_byte_rate"],
    )
