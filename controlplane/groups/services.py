"""Consumer groups: live description with lag, offset resets (preview, apply, undo), deletion. Resets and
deletions are refused while the group has members; every change is audited."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

from controlplane.clusters.connections import connection_for
from controlplane.clusters.outcomes import confirmed_change
from controlplane.clusters.ownership import require_cluster_admin
from controlplane.core.changes import Change, audited_change
from controlplane.core.errors import Conflict, ServiceError
from controlplane.groups.choices import INACTIVE_STATES, GroupType, ResetStrategy
from controlplane.groups.models import ConsumerGroup, OffsetReset
from controlplane.groups.resets import PlannedOffset, lag_of, plan_reset
from controlplane.kafka import groups as kafka_groups
from controlplane.kafka import share_groups as kafka_share
from controlplane.kafka.connection import Connection
from controlplane.kafka.offsets import list_partition_offsets
from controlplane.kafka.refusals import kafka_refusals
from controlplane.kafka.topics import list_topics
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
    """State, protocol, members (client ids, hosts, assignments), committed offsets and lag, live; a share
    group adds its share-partitions and delivery settings, a Streams group its topology and tasks."""
    _require_group_role(actor, group, TeamRole.VIEWER)
    if group.group_type == GroupType.SHARE:
        return _describe_share_group(group)
    if group.group_type == GroupType.STREAMS:
        return _describe_streams_group(group)
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
        "share_partitions": [],
        "share_configs": [],
        "streams": None,
    }


def _kafka_state(state: str) -> str:
    """Kafka's `NotReady` in the spelling the groups app uses: `NOT_READY`."""
    return "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(state)).upper() or "UNKNOWN"


def share_partitions(
    offsets: Mapping[tuple[str, int], kafka_share.SharePartitionOffset],
    log_ends: Mapping[tuple[str, int], int],
) -> list[dict[str, Any]]:
    """Per share-partition: the start offset (SPSO), the log end, the in-flight window between them, how
    many records in it are already acknowledged (finished) and the backlog (lag: not yet acknowledged).
    The protocol tells the SPSO and the lag; the window is the log end minus the SPSO and the finished
    records are the window minus the lag. Acquired and available records are not told apart by any
    request Kafka serves, so both are in the backlog."""
    rows = []
    for (topic, partition), offset in sorted(offsets.items()):
        end = log_ends.get((topic, partition), offset.start_offset)
        window = max(end - offset.start_offset, 0)
        lag = offset.lag if offset.lag >= 0 else window
        rows.append(
            {
                "topic": topic,
                "partition": partition,
                "start_offset": offset.start_offset,
                "log_end_offset": end,
                "in_flight": window,
                "acknowledged": max(window - lag, 0),
                "lag": lag,
            }
        )
    return rows


def _describe_share_group(group: ConsumerGroup) -> dict[str, Any]:
    connection = connection_for(group.cluster)
    with kafka_refusals():
        description = kafka_share.describe_share_group(connection, group.name)
        offsets = {
            tp: o
            for tp, o in kafka_share.share_group_offsets(connection, group.name).items()
            if o.start_offset >= 0
        }
        ends = _log_ends(connection, sorted(offsets))
        configs = kafka_share.describe_group_configs(connection, group.name)
    partitions = share_partitions(offsets, ends)
    return {
        "state": _kafka_state(description.state) if description else "UNKNOWN",
        "protocol": description.assignor if description else "",
        "members": [
            {
                "member_id": m.member_id,
                "client_id": m.client_id,
                "host": m.host,
                "assignments": [{"topic": t, "partition": p} for t, p in m.assignments],
            }
            for m in (description.members if description else [])
        ],
        "offsets": [
            {
                "topic": p["topic"],
                "partition": p["partition"],
                "committed_offset": p["start_offset"],
                "log_end_offset": p["log_end_offset"],
                "lag": p["lag"],
            }
            for p in partitions
        ],
        "total_lag": sum(p["lag"] for p in partitions),
        "share_partitions": partitions,
        "share_configs": [
            {"name": name, "value": configs[name][0], "source": configs[name][1]}
            for name in kafka_share.SHARE_GROUP_CONFIGS
            if name in configs
        ],
        "streams": None,
    }


def _task_list(tasks: Mapping[str, list[int]]) -> list[dict[str, Any]]:
    return [{"subtopology": s, "partitions": p} for s, p in sorted(tasks.items())]


def _describe_streams_group(group: ConsumerGroup) -> dict[str, Any]:
    connection = connection_for(group.cluster)
    with kafka_refusals():
        description = kafka_share.describe_streams_group(connection, group.name)
        committed = kafka_groups.list_group_offsets(connection, [group.name]).get(group.name, {})
        ends = _log_ends(connection, sorted(committed))
    partitions = lags_from(committed, ends)
    return {
        "state": _kafka_state(description.state) if description else "UNKNOWN",
        "protocol": "streams",
        "members": [
            {"member_id": m.member_id, "client_id": m.client_id, "host": m.host, "assignments": []}
            for m in (description.members if description else [])
        ],
        "offsets": partitions,
        "total_lag": sum(p["lag"] for p in partitions),
        "share_partitions": [],
        "share_configs": [],
        "streams": None
        if description is None
        else {
            "group_epoch": description.group_epoch,
            "topology_epoch": description.topology_epoch,
            "subtopologies": [asdict(s) for s in description.subtopologies],
            "members": [
                {
                    "member_id": m.member_id,
                    "client_id": m.client_id,
                    "host": m.host,
                    "process_id": m.process_id,
                    "member_epoch": m.member_epoch,
                    "active_tasks": _task_list(m.tasks.active),
                    "standby_tasks": _task_list(m.tasks.standby),
                    "warmup_tasks": _task_list(m.tasks.warmup),
                }
                for m in description.members
            ],
        },
    }


def set_share_configs(
    *, actor: Actor, group: ConsumerGroup, set_configs: Mapping[str, str], delete_configs: list[str]
) -> None:
    """Changes a share group's delivery settings (group configs); the cluster checks names and bounds."""
    change = _change(
        "group.alter_configs", group, after={**set_configs, **dict.fromkeys(delete_configs, None)}
    )
    with audited_change(actor=actor, change=change):
        _require_group_role(actor, group, TeamRole.DEVELOPER)
        if group.group_type != GroupType.SHARE:
            raise ServiceError("Only share groups have delivery settings here.", code="not_a_share_group")
        unknown = sorted((set(set_configs) | set(delete_configs)) - set(kafka_share.SHARE_GROUP_CONFIGS))
        if unknown:
            raise ServiceError(f"Not a share-group config: {', '.join(unknown)}.", code="unknown_config")
        if group.team is not None:
            check_change_rate(group.team)
        connection = connection_for(group.cluster)
        with kafka_refusals():
            before = kafka_share.describe_group_configs(connection, group.name)
            change.before = {
                name: before.get(name, (None, ""))[0] for name in (*set_configs, *delete_configs)
            }
            kafka_share.alter_group_configs(
                connection, group_id=group.name, set_configs=set_configs, delete_configs=delete_configs
            )


def _committed_offsets(connection: Connection, group: ConsumerGroup) -> dict[tuple[str, int], int]:
    """Committed offsets; a share group's share-partition start offsets."""
    if group.group_type == GroupType.SHARE:
        return {
            tp: o.start_offset
            for tp, o in kafka_share.share_group_offsets(connection, group.name).items()
            if o.start_offset >= 0
        }
    return kafka_groups.list_group_offsets(connection, [group.name]).get(group.name, {})


def _alter_offsets(connection: Connection, group: ConsumerGroup, offsets: dict[tuple[str, int], int]) -> None:
    if group.group_type == GroupType.SHARE:
        kafka_share.alter_share_group_offsets(connection, group_id=group.name, offsets=offsets)
    else:
        kafka_groups.alter_group_offsets(connection, group_id=group.name, offsets=offsets)


def _plan(connection: Connection, group: ConsumerGroup, request: ResetRequest) -> list[PlannedOffset]:
    committed = _committed_offsets(connection, group)
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
    if group.group_type == GroupType.SHARE:
        share = kafka_share.describe_share_group(connection, group.name)
        members, state = (len(share.members), _kafka_state(share.state)) if share else (0, "DEAD")
    else:
        description = kafka_groups.describe_groups(connection, [group.name]).get(group.name)
        members, state = (len(description.members), description.state) if description else (0, "DEAD")
    if members or state not in INACTIVE_STATES:
        raise Conflict(
            f"Group {group.name} has {members} active member(s); stop its consumers first"
            + (
                " (Kafka changes a share group's offsets only while it is empty)."
                if group.group_type == GroupType.SHARE
                else "."
            ),
            code="group_active",
            details={"state": state, "members": members},
        )


def preview_reset(*, actor: Actor, group: ConsumerGroup, request: ResetRequest) -> list[dict[str, Any]]:
    """Old -> new offset per partition; nothing changes."""
    _require_group_role(actor, group, TeamRole.DEVELOPER)
    with kafka_refusals():
        return [asdict(p) for p in _plan(connection_for(group.cluster), group, request)]


def _committed(connection: Connection, group: ConsumerGroup, offsets: dict[tuple[str, int], int]) -> bool:
    """Whether the group's committed offsets are these (a reset read back after no answer)."""
    committed = _committed_offsets(connection, group)
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
        with confirmed_change(lambda: _committed(connection, group, offsets)):
            _alter_offsets(connection, group, offsets)
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
                _alter_offsets(connection, group, restore)
            if group.group_type == GroupType.SHARE:
                # A share group's state goes per topic: only topics the group had no state for at all.
                restored_topics = {topic for topic, _partition in restore}
                fresh = [topic for topic in uncommitted if topic not in restored_topics]
                if fresh:
                    kafka_share.delete_share_group_offsets(connection, group_id=group.name, topics=fresh)
            else:
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
            if group.group_type == GroupType.SHARE:
                kafka_share.delete_share_group_offsets(connection, group_id=group.name, topics=[topic])
            else:
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
