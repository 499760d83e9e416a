"""A classic group as Kafka's GroupMetadata record of `__consumer_offsets`, and back."""

from __future__ import annotations

from collections.abc import Mapping

from broker.groups.group import Group, GroupState, Member
from broker.groups.offsets_format import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    encode_group_metadata_key,
    encode_group_metadata_value,
)


def group_metadata_record(
    group: Group, assignments: Mapping[str, bytes] | None = None
) -> tuple[bytes, bytes]:
    """The group's metadata record (key, value); raises OffsetsFormatError when a string does not fit."""
    protocol = group.protocol_name
    value = GroupMetadataValue(
        protocol_type=group.protocol_type or "",
        generation=group.generation_id,
        protocol=protocol,
        leader=group.leader_id,
        current_state_timestamp=group.current_state_timestamp,
        members=tuple(
            MemberMetadata(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout=m.rebalance_timeout_ms,
                session_timeout=m.session_timeout_ms,
                subscription=m.metadata_for(protocol) if protocol else b"",
                assignment=(assignments or {}).get(m.member_id, m.assignment),
            )
            for m in group.members.values()
        ),
    )
    return encode_group_metadata_key(GroupMetadataKey(group.group_id)), encode_group_metadata_value(value)


def group_from_metadata(group_id: str, value: GroupMetadataValue | None, now_ms: int) -> Group:
    """The group a metadata record describes (None: a group with offsets only): Stable with its members, or
    Empty."""
    group = Group(group_id=group_id, current_state_timestamp=now_ms)
    if value is None:
        return group
    group.generation_id = value.generation
    group.protocol_type = value.protocol_type or None
    group.protocol_name = value.protocol
    if value.current_state_timestamp >= 0:
        group.current_state_timestamp = value.current_state_timestamp
    for stored in value.members:
        group.add_member(
            Member(
                member_id=stored.member_id,
                group_instance_id=stored.group_instance_id,
                client_id=stored.client_id,
                client_host=stored.client_host,
                session_timeout_ms=stored.session_timeout,
                rebalance_timeout_ms=stored.rebalance_timeout,
                protocol_type=value.protocol_type,
                protocols=((value.protocol or "", stored.subscription),),
                assignment=stored.assignment,
            )
        )
    group.leader_id = value.leader if value.leader in group.members else next(iter(group.members), None)
    group.state = GroupState.STABLE if group.members else GroupState.EMPTY
    return group
