"""Consumer groups: live description with lag, offset resets (preview, apply, undo), deletion. Resets and
deletions are refused while the group has members; every change is audited."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

from controlplane.audit.services import Change, audited_change
from controlplane.clusters.connections import connection_for
from controlplane.clusters.outcomes import confirmed_change
from controlplane.core.api.errors import Conflict, ServiceError
from controlplane.groups.choices import INACTIVE_STATES, ResetStrategy
from controlplane.groups.models import ConsumerGroup, OffsetReset
from controlplane.groups.resets import PlannedOffset, lag_of, plan_reset
from controlplane.kafka import groups as kafka_groups
from controlplane.kafka.connection import Connection
from controlplane.kafka.offsets import list_partition_offsets
from controlplane.kafka.refusals import kafka_refusals
from controlplane.kafka.topics import list_topics
from controlplane.reconcile.ownership import require_cluster_admin
from controlplane.tenancy.access import Actor, require_team_role
from controlplane.tenancy.choices import TeamRole
from controlplane.topics.guardrails import check_change_rate


@dataclass(frozen=True)
class ResetRequest:
    strategy: str
    topics: list[str] = field(default_factory=list)  # empty: every topic the group has offsets for
    timestamp: datetime | None = None
    offsets: list[dict[str, int | str]] = field(default_factory=list)  # [{topic, partition, offset}]
    shift_by: int = 0


def _change(action: str, group: ConsumerGroup, **fields: Any) -> Change:
    change = Change(
        action=action,
        resource_type="consumer_group",
        organization_id=group.cluster.organization_id,
        team_id=group.team_id,
        team_name=group.team.name if group.team_id else "",
        **fields,
    )
    change.on(group)
    return change


def _require_group_role(actor: Actor, group: ConsumerGroup, minimum: str) -> None:
    if group.team_id is None:
        require_cluster_admin(actor, group.cluster)
    else:
        require_team_role(actor, group.team, minimum)


def _log_ends(connection: Connection, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    return list_partition_offsets(connection, partitions, spec="latest")


def describe_group(*, actor: Actor, group: ConsumerGroup) -> dict[str, Any]:
    """State, protocol, members (client ids, hosts, assignments), committed offsets and lag, live."""
    _require_group_role(actor, group, TeamRole.VIEWER)
    connection = connection_for(group.cluster)
    with kafka_refusals():
        description = kafka_groups.describe_groups(connection, [group.name]).get(group.name)
        committed = kafka_groups.list_group_offsets(connection, [group.name]).get(group.name, {})
        ends = _log_ends(connection, sorted(committed))
    partitions = lags_from(committed, ends)
    return {
        "state": description.state if description else "UNKNOWN",
        "protocol": description.protocol if description else "",
        "members": [
            {
                "member_id": m.member_id,
                "client_id": m.client_id,
                "host": m.host,
                "assignments": [{"topic": t, "partition": p} for t, p in m.assignments],
            }
            for m in (description.members if description else [])
        ],
        "offsets": partitions,
        "total_lag": sum(p["lag"] for p in partitions),
    }


def _plan(connection: Connection, group: ConsumerGroup, request: ResetRequest) -> list[PlannedOffset]:
    committed = kafka_groups.list_group_offsets(connection, [group.name]).get(group.name, {})
    topics = set(request.topics) or {topic for topic, _ in committed}
    if request.strategy == ResetStrategy.OFFSET:
        topics |= {str(item["topic"]) for item in request.offsets}
    metadata = list_topics(connection)
    missing = sorted(topics - set(metadata))
    if missing:
        raise ServiceError(f"Unknown topic: {', '.join(missing)}.", code="unknown_topic")
    partitions = [(topic, p.partition) for topic in sorted(topics) for p in metadata[topic].partitions]
    if not partitions:
        raise ServiceError(
            "The group has no committed offsets; name the topics to reset.", code="nothing_to_reset"
        )
    exact = None
    if request.strategy == ResetStrategy.OFFSET:
        exact = {(str(i["topic"]), int(i["partition"])): int(i["offset"]) for i in request.offsets}
        unknown = sorted(set(exact) - set(partitions))
        if unknown:
            raise ServiceError(
                f"Unknown partition: {unknown[0][0]}/{unknown[0][1]}.", code="unknown_partition"
            )
    by_timestamp = None
    if request.strategy == ResetStrategy.TIMESTAMP:
        if request.timestamp is None:
            raise ServiceError("A timestamp reset needs the timestamp.", code="invalid_reset")
        by_timestamp = list_partition_offsets(
            connection, partitions, spec="timestamp", timestamp_ms=int(request.timestamp.timestamp() * 1000)
        )
    return plan_reset(
        strategy=request.strategy,
        partitions=partitions,
        committed=committed,
        earliest=list_partition_offsets(connection, partitions, spec="earliest"),
        latest=_log_ends(connection, partitions),
        by_timestamp=by_timestamp,
        exact=exact,
        shift_by=request.shift_by,
    )


def _require_inactive(connection: Connection, group: ConsumerGroup) -> None:
    description = kafka_groups.describe_groups(connection, [group.name]).get(group.name)
    if description is not None and (description.members or description.state not in INACTIVE_STATES):
        raise Conflict(
            f"Group {group.name} has {len(description.members)} active member(s); stop its consumers first.",
            code="group_active",
            details={"state": description.state, "members": len(description.members)},
        )


def preview_reset(*, actor: Actor, group: ConsumerGroup, request: ResetRequest) -> list[dict[str, Any]]:
    """Old -> new offset per partition; nothing changes."""
    _require_group_role(actor, group, TeamRole.DEVELOPER)
    with kafka_refusals():
        return [asdict(p) for p in _plan(connection_for(group.cluster), group, request)]


def _committed(connection: Connection, group: str, offsets: dict[tuple[str, int], int]) -> bool:
    """Whether the group's committed offsets are these (a reset read back after no answer)."""
    committed = kafka_groups.list_group_offsets(connection, [group]).get(group, {})
    return all(committed.get(key) == offset for key, offset in offsets.items())


def reset_offsets(*, actor: Actor, group: ConsumerGroup, request: ResetRequest) -> OffsetReset:
    """Applies the reset and keeps the replaced offsets for `undo_reset`."""
    parameters = {
        "topics": request.topics,
        "timestamp": request.timestamp.isoformat() if request.timestamp else None,
        "offsets": request.offsets,
        "shift_by": request.shift_by,
    }
    change = _change("group.reset_offsets", group, extra={"strategy": request.strategy, **parameters})
    with audited_change(actor=actor, change=change):
        _require_group_role(actor, group, TeamRole.DEVELOPER)
        if group.team is not None:
            check_change_rate(group.team)
        connection = connection_for(group.cluster)
        with kafka_refusals():
            _require_inactive(connection, group)
            planned = _plan(connection, group, request)
        offsets = {(p.topic, p.partition): p.new_offset for p in planned}
        with confirmed_change(lambda: _committed(connection, group.name, offsets)):
            kafka_groups.alter_group_offsets(connection, group_id=group.name, offsets=offsets)
        reset = OffsetReset.objects.create(
            group=group,
            strategy=request.strategy,
            parameters=parameters,
            offsets=[asdict(p) for p in planned],
            requested_by=actor.name,
        )
        change.before = {f"{p.topic}/{p.partition}": p.old_offset for p in planned}
        change.after = {f"{p.topic}/{p.partition}": p.new_offset for p in planned}
    return reset


def undo_reset(*, actor: Actor, group: ConsumerGroup) -> OffsetReset:
    """Puts back the offsets the latest reset replaced (partitions without a commit lose theirs again)."""
    reset = group.offset_resets.filter(undone_at__isnull=True).first()
    change = _change("group.undo_reset", group, extra={"reset": reset.pk if reset else None})
    with audited_change(actor=actor, change=change):
        _require_group_role(actor, group, TeamRole.DEVELOPER)
        if group.team is not None:
            check_change_rate(group.team)
        if reset is None:
            raise Conflict("There is no reset to undo.", code="nothing_to_undo")
        connection = connection_for(group.cluster)
        restore = {
            (o["topic"], o["partition"]): o["old_offset"]
            for o in reset.offsets
            if o["old_offset"] is not None
        }
        uncommitted: dict[str, list[int]] = {}
        for o in reset.offsets:
            if o["old_offset"] is None:
                uncommitted.setdefault(o["topic"], []).append(o["partition"])
        with kafka_refusals():
            _require_inactive(connection, group)
            if restore:
                kafka_groups.alter_group_offsets(connection, group_id=group.name, offsets=restore)
            for topic, partitions in uncommitted.items():
                kafka_groups.delete_group_offsets(
                    connection, group_id=group.name, topic=topic, partitions=partitions
                )
        reset.undone_at = timezone.now()
        reset.save(update_fields=["undone_at"])
        change.after = {f"{t}/{p}": o for (t, p), o in restore.items()}
    return reset


def delete_group(*, actor: Actor, group: ConsumerGroup) -> None:
    change = _change("group.delete", group, before={"name": group.name, "state": group.state})
    with audited_change(actor=actor, change=change):
        _require_group_role(actor, group, TeamRole.DEVELOPER)
        if group.team is not None:
            check_change_rate(group.team)
        connection = connection_for(group.cluster)
        with kafka_refusals():
            _require_inactive(connection, group)
        with confirmed_change(lambda: group.name not in kafka_groups.list_groups(connection)):
            kafka_groups.delete_group(connection, group_id=group.name)
        group.delete()


def delete_group_offsets(*, actor: Actor, group: ConsumerGroup, topic: str) -> None:
    """Forgets the group's committed offsets for one topic (OffsetDelete)."""
    change = _change("group.delete_offsets", group, extra={"topic": topic})
    with audited_change(actor=actor, change=change):
        _require_group_role(actor, group, TeamRole.DEVELOPER)
        if group.team is not None:
            check_change_rate(group.team)
        connection = connection_for(group.cluster)
        with kafka_refusals():
            info = list_topics(connection).get(topic)
            if info is None:
                raise ServiceError(f"Unknown topic {topic!r}.", code="unknown_topic")
            kafka_groups.delete_group_offsets(
                connection,
                group_id=group.name,
                topic=topic,
                partitions=[p.partition for p in info.partitions],
            )


def lags_from(
    committed: Mapping[tuple[str, int], int], log_ends: Mapping[tuple[str, int], int]
) -> list[dict[str, Any]]:
    return [
        {
            "topic": topic,
            "partition": partition,
            "committed_offset": offset,
            "log_end_offset": log_ends.get((topic, partition), offset),
            "lag": lag_of(offset, log_ends.get((topic, partition), offset)),
        }
        for (topic, partition), offset in sorted(committed.items())
    ]
