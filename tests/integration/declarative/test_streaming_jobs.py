"""StreamingJob documents: exported, applied to a fresh team (with the service account it reads as), started
and stopped by a diff, refused at plan time by the streams' own checks, stopped by a prune (the API deletes
no stream); the service account's password never shows. No Spark runs here: the supervisor is enqueued only
once a transaction commits, which these database tests never do (tests/integration/spark runs streams)."""

from __future__ import annotations

import json

import pytest

from controlplane.declarative.models import ChangeSet, ManagedResource
from controlplane.jobs import streams
from controlplane.jobs.models import StreamingJob
from tests.fixtures.engines import STREAMHUB, ManagedCluster
from tests.integration.declarative.test_plan_and_apply import (
    SYSTEM,
    _apply,
    _changes,
    _fresh_team_on_another_cluster,
    _plan,
)
from tests.integration.topics.world import KafkaWorld, create_topic

pytestmark = pytest.mark.integration
PASSWORD = "the-service-accounts-password"


@pytest.fixture
def engine() -> str:
    """Streams are checked against the cluster's topics and ACLs, which either engine answers alike."""
    return STREAMHUB


def test_streams_export_apply_start_stop_refuse_and_prune_without_showing_the_password(
    kafka_world: KafkaWorld, managed_cluster: ManagedCluster
) -> None:
    world = kafka_world
    source, target = world.topic_prefix_a + "orders", world.topic_prefix_a + "large-orders"
    create_topic(world, world.developer_a, source, partitions=1)
    parameters = {"source": {"topic": source}, "target_topic": target}
    streams.create_stream(
        actor=SYSTEM,
        team=world.team_a,
        cluster=world.cluster,
        name="orders-filter",
        job="stream_topic_sql",
        parameters=parameters,
        service_account=world.account_a,
        password=PASSWORD,
        compute_target="local[1]",
    )
    exported = world.developer_a.get(
        "/api/v1/declarative/export/", {"team": world.team_a.slug, "cluster": world.cluster.id}
    ).json()["documents"]
    (stream_document,) = [d for d in exported if d["kind"] == "StreamingJob"]
    assert stream_document["spec"] == {
        "job": "stream_topic_sql",
        "parameters": parameters,
        "serviceAccount": world.account_a.name,
        "computeTarget": "local[1]",
        "desiredState": "running",
        "password": "${STREAMHUB_STREAM_ORDERS_FILTER_PASSWORD}",
    }
    (account,) = [
        d for d in exported if d["kind"] == "ServiceAccount" and d["metadata"]["name"] == world.account_a.name
    ]
    # What the CLI sends once it has read the password's ${ENV_VAR}.
    declared = {**stream_document, "spec": {**stream_document["spec"], "password": PASSWORD}}
    documents = [account, declared]

    team, cluster, client = _fresh_team_on_another_cluster(managed_cluster, world.topic_prefix_a)
    placed = {"team": team.slug, "cluster": cluster.name}
    first = _plan(client, documents, **placed)
    assert {key: c["action"] for key, c in _changes(first).items()} == {
        ("ServiceAccount", world.account_a.name): "create",
        ("StreamingJob", "orders-filter"): "create",  # as the account the same plan creates
    }
    applied = _apply(client, documents, **placed)
    assert applied["change_set"]["state"] == "applied", applied["change_set"]["report"]
    stream = StreamingJob.objects.get(team=team, name="orders-filter")
    assert (stream.cluster_id, stream.parameters, stream.desired_state) == (cluster.id, parameters, "running")
    assert _changes(_plan(client, documents, **placed)) == {}
    assert _apply(client, documents, **placed)["change_set"] is None

    # Stopped by a diff of exactly that field, started again by the next.
    stopped = [account, {**declared, "spec": {**declared["spec"], "desiredState": "stopped"}}]
    plan = _plan(client, stopped, **placed)
    assert {key: c["diff"] for key, c in _changes(plan).items()} == {
        ("StreamingJob", "orders-filter"): {"desiredState": {"from": "running", "to": "stopped"}}
    }
    assert _apply(client, stopped, **placed)["change_set"]["state"] == "applied"
    assert StreamingJob.objects.get(pk=stream.pk).desired_state == "stopped"
    assert _apply(client, documents, **placed)["change_set"]["state"] == "applied"
    assert StreamingJob.objects.get(pk=stream.pk).desired_state == "running"

    # Refused at plan time, with the streams' reasons: a definition change, another team's topic.
    retargeted = {
        **declared,
        "spec": {**declared["spec"], "parameters": {**parameters, "target_topic": target + "2"}},
    }
    stolen = {
        **declared,
        "metadata": {**declared["metadata"], "name": "steal"},
        "spec": {
            **declared["spec"],
            "parameters": {**parameters, "target_topic": world.topic_prefix_b + "x"},
        },
    }
    refused = _changes(_plan(client, [account, retargeted, stolen], **placed))
    assert refused[("StreamingJob", "orders-filter")]["refusal"]["code"] == "stream_definition_change"
    assert refused[("StreamingJob", "steal")]["refusal"]["code"] == "topic_not_allowed"

    # Prune stops the managed stream (the API deletes none) and never touches one made through the API.
    other = streams.create_stream(
        actor=SYSTEM,
        team=team,
        cluster=cluster,
        name="clicked",
        job="stream_topic_sql",
        parameters=parameters,
        service_account=team.service_accounts.get(),
        password=PASSWORD,
        compute_target="local[1]",
    )
    pruned = _plan(client, [account], prune=True, **placed)
    assert {key: c["action"] for key, c in _changes(pruned).items()} == {
        ("StreamingJob", "orders-filter"): "delete"
    }
    assert _apply(client, [account], prune=True, **placed)["change_set"]["state"] == "applied"
    assert StreamingJob.objects.get(pk=stream.pk).desired_state == "stopped"
    assert StreamingJob.objects.get(pk=other.pk).desired_state == "running"
    assert not ManagedResource.objects.filter(kind="StreamingJob", team=team).exists()

    shown = json.dumps([first, plan, pruned, list(ChangeSet.objects.values("report"))])
    assert PASSWORD not in shown
    assert PASSWORD not in json.dumps(client.get("/api/v1/managed-resources/").json())
