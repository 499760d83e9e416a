"""Schema documents: a team's subjects exported, applied to a fresh team's registry, diffed, drifted, pruned
(soft, as the registry's DELETE), and refused at plan time by the registry's own compatibility check."""

from __future__ import annotations

import json

import pytest

from controlplane.audit.models import AuditEvent
from controlplane.schemas import services as registry
from controlplane.schemas.models import SubjectVersion
from tests.fixtures.engines import STREAMHUB, ManagedCluster
from tests.integration.declarative.test_plan_and_apply import (
    _apply,
    _changes,
    _fresh_team_on_another_cluster,
    _plan,
)
from tests.integration.topics.world import KafkaWorld

pytestmark = pytest.mark.integration


@pytest.fixture
def engine() -> str:
    """The registry lives in the control plane's database, whichever engine runs the cluster: one is enough."""
    return STREAMHUB


def _avro(*fields: tuple[str, str, object]) -> str:
    """An Avro record with the fields (name, type, default — `...` for none), as compact JSON."""
    return json.dumps(
        {
            "type": "record",
            "name": "Order",
            "fields": [
                {"name": name, "type": kind, **({} if default is ... else {"default": default})}
                for name, kind, default in fields
            ],
        },
        separators=(",", ":"),
    )


def _register(cluster_id: int, subject: str, text: str) -> SubjectVersion:
    return registry.register_schema(
        cluster_id=cluster_id, subject=subject, schema_input=registry.SchemaInput("AVRO", text)
    )


def _live_versions(cluster_id: int, subject: str) -> list[int]:
    return list(
        SubjectVersion.objects.filter(cluster_id=cluster_id, subject=subject, deleted=False)
        .order_by("version")
        .values_list("version", flat=True)
    )


def test_subjects_export_apply_to_a_fresh_team_diff_drift_prune_and_refuse_an_incompatible_schema(
    kafka_world: KafkaWorld, managed_cluster: ManagedCluster
) -> None:
    world = kafka_world
    orders, refunds = world.topic_prefix_a + "orders-value", world.topic_prefix_a + "refunds-value"
    v1 = _avro(("id", "string", ...))
    _register(world.cluster.id, orders, v1)
    registry.set_config(cluster_id=world.cluster.id, subject=orders, body={"compatibility": "FULL"})
    _register(world.cluster.id, refunds, v1)
    _register(world.cluster.id, world.topic_prefix_b + "other-value", v1)  # team b's: not exported

    exported = world.developer_a.get(
        "/api/v1/declarative/export/", {"team": world.team_a.slug, "cluster": world.cluster.id}
    ).json()["documents"]
    documents = [d for d in exported if d["kind"] == "Schema"]
    assert [(d["metadata"]["name"], d["spec"].get("compatibility")) for d in documents] == [
        (orders, "FULL"),
        (refunds, None),
    ]

    # A fresh team in another organization's cluster (a registry of its own): everything is created.
    team, cluster, client = _fresh_team_on_another_cluster(managed_cluster, world.topic_prefix_a)
    placed = {"team": team.slug, "cluster": cluster.name}
    first = _changes(_plan(client, documents, **placed))
    assert {key: c["action"] for key, c in first.items()} == {
        ("Schema", orders): "create",
        ("Schema", refunds): "create",
    }
    assert first[("Schema", orders)]["diff"] == {
        "compatibility": {"from": None, "to": "FULL"},
        "schemaType": {"from": None, "to": "AVRO"},
        "schema": {"from": None, "to": v1},
    }
    assert _apply(client, documents, **placed)["change_set"]["state"] == "applied"
    assert _live_versions(cluster.id, orders) == [1]
    assert registry.get_config(cluster_id=cluster.id, subject=orders)["compatibilityLevel"] == "FULL"
    assert _changes(_plan(client, documents, **placed)) == {}
    assert _apply(client, documents, **placed)["change_set"] is None  # applying twice registers nothing
    assert _live_versions(cluster.id, orders) == [1]

    # A field with a default added: exactly that diff, and one new version.
    v2 = _avro(("id", "string", ...), ("note", "string", ""))
    changed = [
        {**d, "spec": {**d["spec"], "schema": v2}} if d["metadata"]["name"] == orders else d
        for d in documents
    ]
    diff = _changes(_plan(client, changed, **placed))
    assert diff == {("Schema", orders): diff[("Schema", orders)]}
    assert diff[("Schema", orders)]["diff"] == {"schema": {"from": v1, "to": v2}}
    assert _apply(client, changed, **placed)["change_set"]["state"] == "applied"
    assert _live_versions(cluster.id, orders) == [1, 2]
    assert AuditEvent.objects.filter(action="schema.register", resource_name=orders).count() == 2

    # A version registered by hand through the registry is drift; the plan puts the declared one back.
    v3 = _avro(("id", "string", ...), ("note", "string", ""), ("by_hand", "int", 0))
    _register(cluster.id, orders, v3)
    drifted = _changes(_plan(client, changed, **placed))[("Schema", orders)]
    assert drifted["drift"] == {"version": {"recorded": 2, "on_cluster": 3}}
    assert drifted["action"] == "refused"
    assert drifted["refusal"]["code"] == "schema_is_an_older_version"

    # Not FULL compatible (a field without a default): refused at plan time with the registry's reason.
    breaking = [
        {**d, "spec": {**d["spec"], "schema": _avro(("id", "string", ...), ("amount", "long", ...))}}
        if d["metadata"]["name"] == refunds
        else d
        for d in documents
    ]
    breaking[1]["spec"]["compatibility"] = "FULL"
    refused = _changes(_plan(client, breaking, **placed))[("Schema", refunds)]
    assert refused["action"] == "refused"
    assert refused["refusal"]["code"] == "incompatible_schema"
    assert "amount" in refused["refusal"]["message"]
    rejected = client.post(
        "/api/v1/declarative/apply/",
        {"documents": breaking, "file_set": "repo/kafka", **placed},
        format="json",
    )
    assert rejected.status_code == 409, rejected.json()
    assert _live_versions(cluster.id, refunds) == [1]

    # Prune soft-deletes only the managed subject no document declares; one registered by hand stays.
    clicked = world.topic_prefix_a + "clicked-value"
    _register(cluster.id, clicked, v1)
    without_refunds = [d for d in documents if d["metadata"]["name"] != refunds]
    without_refunds[0]["spec"]["schema"] = v3
    pruned = _plan(client, without_refunds, prune=True, **placed)
    assert {k: c["action"] for k, c in _changes(pruned).items()} == {("Schema", refunds): "delete"}
    assert _apply(client, without_refunds, prune=True, **placed)["change_set"]["state"] == "applied"
    assert _live_versions(cluster.id, refunds) == []
    assert SubjectVersion.objects.filter(cluster_id=cluster.id, subject=refunds, deleted=True).count() == 1
    assert _live_versions(cluster.id, clicked) == [1]
    assert _changes(_plan(client, without_refunds, prune=True, **placed)) == {}


def test_a_schema_outside_the_teams_prefixes_is_refused_at_plan_time(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    document = {
        "kind": "Schema",
        "metadata": {
            "name": world.topic_prefix_b + "x-value",
            "team": world.team_a.slug,
            "cluster": world.cluster.name,
        },
        "spec": {"schema": _avro(("id", "string", ...))},
    }
    (change,) = _plan(world.developer_a, [document])["changes"]
    assert change["action"] == "refused"
    assert change["refusal"]["code"] == "permission_denied"
    assert not SubjectVersion.objects.filter(cluster=world.cluster).exists()


def _schema_document(world: KafkaWorld, subject: str, text: str, *references: tuple[str, int]) -> dict:
    spec: dict = {"schema": text}
    if references:
        spec["references"] = [
            {"name": referenced.removesuffix("-value"), "subject": referenced, "version": version}
            for referenced, version in references
        ]
    return {
        "kind": "Schema",
        "metadata": {"name": subject, "team": world.team_a.slug, "cluster": world.cluster.name},
        "spec": spec,
    }


def test_a_schema_referencing_a_subject_of_the_same_plan_is_registered_after_it(
    kafka_world: KafkaWorld,
) -> None:
    """The referencing document comes first in the file: the plan registers the referenced subject first
    (in its simulation, then when applying); a cycle, or a reference to a version no one registers, is
    refused with its reason."""
    world = kafka_world
    money, order = world.topic_prefix_a + "money-value", world.topic_prefix_a + "priced-value"
    money_text = json.dumps(
        {"type": "record", "name": "Money", "fields": [{"name": "cents", "type": "long"}]}
    )
    order_text = json.dumps(
        {"type": "record", "name": "Priced", "fields": [{"name": "price", "type": "Money"}]}
    )
    documents = [
        _schema_document(world, order, order_text, (money, 1)),
        _schema_document(world, money, money_text),
    ]
    plan = _plan(world.developer_a, documents)
    assert [(c["name"], c["action"]) for c in plan["changes"]] == [(money, "create"), (order, "create")]
    assert not SubjectVersion.objects.filter(cluster=world.cluster).exists()  # the simulation left nothing
    assert _apply(world.developer_a, documents)["change_set"]["state"] == "applied"
    (priced,) = SubjectVersion.objects.filter(cluster=world.cluster, subject=order).select_related("schema")
    assert priced.schema.references == [
        {"name": money.removesuffix("-value"), "subject": money, "version": 1}
    ]
    assert _changes(_plan(world.developer_a, documents)) == {}

    # A version of the referenced subject that the plan does not register: refused with the registry's reason.
    wrong_version = [_schema_document(world, order + "2", order_text, (money, 2))]
    (refused,) = _plan(world.developer_a, wrong_version)["changes"]
    assert (refused["action"], refused["refusal"]["code"]) == ("refused", "invalid_schema")
    assert "does not exist" in refused["refusal"]["message"]

    # Two subjects referencing each other: no order registers them.
    left, right = world.topic_prefix_a + "left-value", world.topic_prefix_a + "right-value"
    cycle = [
        _schema_document(world, left, order_text, (right, 1)),
        _schema_document(world, right, order_text, (left, 1)),
    ]
    changes = _plan(world.developer_a, cycle)["changes"]
    assert [(c["action"], c["refusal"]["code"], c["refusal"]["details"]) for c in changes] == [
        ("refused", "reference_cycle", {"subjects": [right]}),
        ("refused", "reference_cycle", {"subjects": [left]}),
    ]
