"""A consumer group's state as Kafka's records 3-8 in `__consumer_offsets` (broker/groups/consumer_records.py),
and back: what a write must hold, and the groups a partition's replayed records describe."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping

from broker.groups import consumer_records as records
from broker.groups.assignors import Assignment
from broker.groups.consumer_config import resolve_regexes
from broker.groups.consumer_group import ConsumerGroup, ConsumerMember, MemberState
from broker.groups.offsets_format import OffsetsFormatError

log = logging.getLogger(__name__)


def groups_from_records(replayed: Mapping[bytes, bytes | None]) -> list[ConsumerGroup]:
    groups: dict[str, ConsumerGroup] = {}
    by_group: dict[str, list[tuple[records.ConsumerRecordKey, bytes, bytes]]] = {}
    for key_bytes, value in replayed.items():
        key = records.decode_key(key_bytes)
        if key is not None and value is not None:
            by_group.setdefault(key.group_id, []).append((key, key_bytes, value))
    for group_id, entries in by_group.items():
        try:
            group = group_from_records(group_id, entries)
        except OffsetsFormatError:
            log.warning(
                "group %s: unreadable consumer group records in __consumer_offsets; skipped", group_id
            )
            continue
        if group is not None:
            groups[group_id] = group
    return list(groups.values())


def group_from_records(
    group_id: str, entries: list[tuple[records.ConsumerRecordKey, bytes, bytes]]
) -> ConsumerGroup | None:
    group = ConsumerGroup(group_id)
    found = False
    members: dict[str, ConsumerMember] = {}

    def member(member_id: str) -> ConsumerMember:
        return members.setdefault(member_id, ConsumerMember(member_id=member_id))

    for key, key_bytes, value in entries:
        group.written[key_bytes] = value
        if key.record_type == records.GROUP_METADATA:
            group.group_epoch = records.decode_epoch(value)
            found = True
        elif key.record_type == records.TARGET_ASSIGNMENT_METADATA:
            group.assignment_epoch = records.decode_epoch(value)
        elif key.record_type == records.PARTITION_METADATA:
            _, topics = records.decode_partition_metadata(value)
            group.subscribed_topics = {t.topic_id: (t.name, t.partitions) for t in topics}
        elif key.record_type == records.MEMBER_METADATA and key.member_id is not None:
            stored = records.decode_member_metadata(value)
            m = member(key.member_id)
            m.instance_id, m.rack_id = stored.instance_id, stored.rack_id
            m.client_id, m.client_host = stored.client_id, stored.client_host
            m.subscribed_topic_names = stored.subscribed_topic_names
            m.subscribed_topic_regex = stored.subscribed_topic_regex
            m.rebalance_timeout_ms = stored.rebalance_timeout_ms
            m.server_assignor = stored.server_assignor
            m.classic = stored.classic
        elif key.record_type == records.TARGET_ASSIGNMENT_MEMBER and key.member_id is not None:
            group.target[key.member_id] = assignment_of(records.decode_target_member(value))
        elif key.record_type == records.CURRENT_MEMBER_ASSIGNMENT and key.member_id is not None:
            current = records.decode_current_assignment(value)
            m = member(key.member_id)
            m.member_epoch, m.previous_member_epoch = current.member_epoch, current.previous_member_epoch
            m.state = (
                MemberState(current.state)
                if current.state in MemberState._value2member_map_
                else MemberState.STABLE
            )
            m.assigned = assignment_of(current.assigned)
            m.pending_revocation = assignment_of(current.pending_revocation)
    if not found:
        return None
    subscribed_names = {name for name, _ in group.subscribed_topics.values()}
    for m in members.values():
        group.add_member(m)
    # What the regexes resolved to when the group was written (authorized then); the next heartbeat
    # resolves them again, with its member's ACLs.
    group.resolved_regexes.update(resolve_regexes(group.subscribed_regexes(), subscribed_names, None))
    group.target = {member_id: t for member_id, t in group.target.items() if member_id in group.members}
    votes = Counter(m.server_assignor for m in group.members.values() if m.server_assignor)
    group.assignor_name = votes.most_common(1)[0][0] if votes else ""
    return group


def desired_records(group: ConsumerGroup) -> dict[bytes, bytes]:
    gid = group.group_id

    def key(record_type: int, member_id: str | None = None) -> bytes:
        return records.encode_key(records.ConsumerRecordKey(record_type, gid, member_id))

    desired: dict[bytes, bytes] = {}
    for member in group.members.values():
        desired[key(records.MEMBER_METADATA, member.member_id)] = records.encode_member_metadata(
            records.MemberMetadataValue(
                instance_id=member.instance_id,
                rack_id=member.rack_id,
                client_id=member.client_id,
                client_host=member.client_host,
                subscribed_topic_names=member.subscribed_topic_names,
                subscribed_topic_regex=member.subscribed_topic_regex,
                rebalance_timeout_ms=member.rebalance_timeout_ms,
                server_assignor=member.server_assignor,
                classic=member.classic,
            )
        )
        desired[key(records.TARGET_ASSIGNMENT_MEMBER, member.member_id)] = records.encode_target_member(
            topic_partitions_of(group.target.get(member.member_id, {}))
        )
        desired[key(records.CURRENT_MEMBER_ASSIGNMENT, member.member_id)] = records.encode_current_assignment(
            records.CurrentAssignmentValue(
                member_epoch=member.member_epoch,
                previous_member_epoch=member.previous_member_epoch,
                state=int(member.state),
                assigned=topic_partitions_of(member.assigned),
                pending_revocation=topic_partitions_of(member.pending_revocation),
            )
        )
    desired[key(records.PARTITION_METADATA)] = records.encode_partition_metadata(
        group.group_epoch,
        tuple(
            records.TopicMetadata(topic_id, name, count)
            for topic_id, (name, count) in sorted(group.subscribed_topics.items(), key=lambda e: e[1][0])
        ),
    )
    desired[key(records.TARGET_ASSIGNMENT_METADATA)] = records.encode_epoch(group.assignment_epoch)
    desired[key(records.GROUP_METADATA)] = records.encode_epoch(group.group_epoch)
    return desired


def assignment_of(value: records.TopicPartitions) -> Assignment:
    return {topic_id: frozenset(partitions) for topic_id, partitions in value if partitions}


def topic_partitions_of(assignment: Assignment) -> records.TopicPartitions:
    return tuple(
        (topic_id, tuple(sorted(ps))) for topic_id, ps in sorted(assignment.items(), key=lambda e: str(e[0]))
    )
