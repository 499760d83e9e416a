"""How each topic change is confirmed on the cluster and recorded (see controlplane/clusters/outcomes.py)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from controlplane.clusters.choices import OperationKind
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Operation
from controlplane.clusters.outcomes import Look, handles
from controlplane.kafka.configs import describe_topic_configs
from controlplane.kafka.topics import TopicInfo, describe_topic
from controlplane.topics.models import Topic

# A read-back must answer quicker than the request's own call, which already waited.
LOOK_TIMEOUT_SECONDS = 3.0
DYNAMIC_TOPIC_CONFIG = "DYNAMIC_TOPIC_CONFIG"


def snapshot_topic(topic: Topic) -> dict[str, Any]:
    return {
        "name": topic.name,
        "cluster": topic.cluster.name,
        "team": topic.team.name if topic.team_id else None,
        "managed": topic.managed,
        "partitions": topic.partitions,
        "replication_factor": topic.replication_factor,
        "configs": dict(topic.configs),
    }


def _observed_topic(operation: Operation) -> TopicInfo | None:
    return describe_topic(
        connection_for(operation.cluster), operation.resource_name, timeout_seconds=LOOK_TIMEOUT_SECONDS
    )


def _shape(info: TopicInfo | None) -> dict[str, Any]:
    if info is None:
        return {"exists": False}
    return {"exists": True, "partitions": len(info.partitions), "replication_factor": info.replication_factor}


@handles(OperationKind.TOPIC_CREATE)
class CreateTopic:
    def look(self, operation: Operation) -> Look:
        info = _observed_topic(operation)
        summary = (
            "the topic does not exist" if info is None else f"the topic has {len(info.partitions)} partitions"
        )
        return Look(applied=info is not None, observed=_shape(info), summary=summary)

    def record_success(self, operation: Operation, look: Look | None) -> dict[str, Any]:
        spec = operation.parameters
        observed = look.observed if look is not None else {}
        fields = {
            "team_id": operation.team_id,
            "managed": True,
            "partitions": spec["partitions"],
            "replication_factor": spec["replication_factor"],
            "configs": spec["configs"],
            "exists_on_cluster": True,
            "observed_partitions": observed.get("partitions", spec["partitions"]),
            "observed_replication_factor": observed.get("replication_factor", spec["replication_factor"]),
            "observed_configs": spec["configs"] if look is None else {},
            "observed_at": timezone.now(),
        }
        # The reconciler may have found the new topic first and recorded it unmanaged: it becomes the team's.
        topic, _created = Topic.objects.update_or_create(
            cluster=operation.cluster, name=operation.resource_name, defaults=fields
        )
        operation.parameters = {**spec, "topic_id": topic.id}
        return snapshot_topic(topic)


@handles(OperationKind.TOPIC_DELETE)
class DeleteTopic:
    def look(self, operation: Operation) -> Look:
        info = _observed_topic(operation)
        summary = "the topic is gone" if info is None else "the topic still exists"
        return Look(applied=info is None, observed=_shape(info), summary=summary)

    def record_success(self, operation: Operation, look: Look | None) -> dict[str, Any]:
        Topic.objects.filter(pk=operation.parameters["topic_id"]).delete()
        return {"exists": False}


@handles(OperationKind.TOPIC_PARTITIONS)
class AddPartitions:
    def look(self, operation: Operation) -> Look:
        info = _observed_topic(operation)
        wanted = operation.parameters["partitions"]
        count = len(info.partitions) if info is not None else 0
        return Look(
            applied=count >= wanted, observed=_shape(info), summary=f"{count} of {wanted} partitions exist"
        )

    def record_success(self, operation: Operation, look: Look | None) -> dict[str, Any]:
        topic = Topic.objects.select_for_update().get(pk=operation.parameters["topic_id"])
        topic.partitions = operation.parameters["partitions"]
        topic.observed_partitions = look.observed["partitions"] if look is not None else topic.partitions
        topic.save(update_fields=["partitions", "observed_partitions", "updated_at"])
        return snapshot_topic(topic)


@handles(OperationKind.TOPIC_CONFIGS)
class ChangeConfigs:
    def look(self, operation: Operation) -> Look:
        name = operation.resource_name
        configs = describe_topic_configs(
            connection_for(operation.cluster), [name], timeout_seconds=LOOK_TIMEOUT_SECONDS
        )[name]
        overrides = {k: v.value for k, v in configs.items() if v.source == DYNAMIC_TOPIC_CONFIG}
        # Only the names this change touched decide; other overrides may drift (the reconciler reports it).
        to_set, to_delete = operation.parameters["set"], operation.parameters["delete"]
        differing = sorted(
            [k for k, v in to_set.items() if overrides.get(k) != v] + [k for k in to_delete if k in overrides]
        )
        summary = "the configs match" if not differing else f"differing: {', '.join(differing)}"
        return Look(applied=not differing, observed={"configs": overrides}, summary=summary)

    def record_success(self, operation: Operation, look: Look | None) -> dict[str, Any]:
        topic = Topic.objects.select_for_update().get(pk=operation.parameters["topic_id"])
        topic.configs = operation.parameters["configs"]
        topic.observed_configs = look.observed["configs"] if look is not None else topic.configs
        topic.save(update_fields=["configs", "observed_configs", "updated_at"])
        return snapshot_topic(topic)
