"""What slipped through the request is adopted by the reconciler for the team and the request that caused it:
a change the cluster applied after the request could record it, and one reported failed (not seen in time)
that the cluster shows later. A deletion reported failed that completed later is not undone."""

import pytest
from confluent_kafka.admin import NewTopic

from controlplane.audit.models import AuditEvent
from controlplane.audit.services import actor_record
from controlplane.clusters import outcomes
from controlplane.clusters.choices import OperationKind
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Operation
from controlplane.kafka.topics import delete_topic
from controlplane.reconcile.models import Drift
from controlplane.tenancy.access import Actor
from controlplane.topics.models import Topic
from controlplane.topics.services import _topic_change
from tests.integration.topics.world import KafkaWorld, create_topic, reconcile

pytestmark = pytest.mark.integration


def _create_operation(world: KafkaWorld, name: str, request_id: str) -> Operation:
    """The operation a request records before it sends a create, as topics.services.create_topic does."""
    change = _topic_change("topic.create", world.cluster, world.team_a, resource_name=name, extra={})
    operation = outcomes.begin(
        kind=OperationKind.TOPIC_CREATE,
        cluster=world.cluster,
        change=change,
        actor=actor_record(Actor(user=world.team_a.memberships.first().user)),
        parameters={"partitions": 2, "replication_factor": 1, "configs": {}},
        team_id=world.team_a.id,
    )
    Operation.objects.filter(pk=operation.pk).update(request_id=request_id)
    return Operation.objects.get(pk=operation.pk)


def _create_on_cluster(world: KafkaWorld, name: str) -> None:
    admin = world.admin_client()  # kept referenced: a collected client cancels its futures
    admin.create_topics([NewTopic(name, 2, 1)])[name].result(10)


def test_a_create_the_request_never_recorded_is_settled_by_the_reconciler(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    name = world.topic_prefix_a + "crashed"
    operation = _create_operation(world, name, "req-crashed-0001")
    _create_on_cluster(world, name)  # sent, then the web process died before it could record the outcome

    reconcile(world)

    operation.refresh_from_db()
    assert operation.state == "succeeded"
    topic = Topic.objects.get(cluster=world.cluster, name=name)
    assert (topic.team_id, topic.managed, topic.observed_partitions) == (world.team_a.id, True, 2)
    (event,) = AuditEvent.objects.filter(action="topic.create", resource_name=name)
    assert (event.result, event.request_id, event.team_id) == ("success", "req-crashed-0001", world.team_a.id)
    assert not Drift.objects.filter(cluster=world.cluster, resource_name=name).exists()
    listed = world.developer_a.get("/api/v1/topics/", {"name": name}).json()["results"]
    assert [t["name"] for t in listed] == [name]


def test_a_create_reported_failed_that_appears_later_is_adopted_for_its_request(
    kafka_world: KafkaWorld,
) -> None:
    world = kafka_world
    name = world.topic_prefix_a + "late"
    operation = _create_operation(world, name, "req-late-0001")
    outcomes.fail(operation, "The cluster did not apply the change within 60 s: not there", unconfirmed=True)
    _create_on_cluster(world, name)  # the controller applied it after all

    reconcile(world)

    operation.refresh_from_db()
    assert operation.state == "succeeded"
    assert operation.log[-1]["message"].endswith("adopted by the reconciler")
    topic = Topic.objects.get(cluster=world.cluster, name=name)
    assert (topic.team_id, topic.managed) == (world.team_a.id, True)
    results = list(
        AuditEvent.objects.filter(action="topic.create", resource_name=name).values_list(
            "result", "request_id"
        )
    )
    assert sorted(results) == [("failure", "req-late-0001"), ("success", "req-late-0001")]


def test_a_refused_create_is_never_adopted(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    name = world.topic_prefix_a + "refused"
    operation = _create_operation(world, name, "req-refused-001")
    outcomes.fail(operation, "A topic with this name already exists on the cluster.")
    _create_on_cluster(world, name)  # someone else's, created behind the control plane's back

    reconcile(world)

    topic = Topic.objects.get(cluster=world.cluster, name=name)
    assert (topic.team_id, topic.managed) == (None, False)


def test_a_deletion_reported_failed_that_completed_later_is_not_undone(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    name = world.topic_prefix_a + "gone"
    created = create_topic(world, world.developer_a, name)
    topic = Topic.objects.get(pk=created["id"])
    change = _topic_change("topic.delete", world.cluster, world.team_a, resource_name=name)
    operation = outcomes.begin(
        kind=OperationKind.TOPIC_DELETE,
        cluster=world.cluster,
        change=change,
        actor=actor_record(Actor.system()),
        parameters={"topic_id": topic.id},
        team_id=world.team_a.id,
    )
    outcomes.fail(
        operation, "The cluster did not apply the change within 60 s: still there", unconfirmed=True
    )
    delete_topic(connection_for(world.cluster), name=name)

    reconcile(world)

    assert not Topic.objects.filter(pk=topic.id).exists()
    assert name not in world.admin_client().list_topics(timeout=10).topics  # not re-created
    operation.refresh_from_db()
    assert operation.state == "succeeded"
