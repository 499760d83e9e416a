"""Group protocol errors seen on the wire: exact requests, exact error codes, and the broker
keeps serving. Also members that vanish without a word (session expiry)."""

from __future__ import annotations

import datetime
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer
from kio.schema.describe_groups.v5.request import DescribeGroupsRequest
from kio.schema.describe_groups.v6.request import DescribeGroupsRequest as DescribeGroupsV6
from kio.schema.errors import ErrorCode
from kio.schema.heartbeat.v4.request import HeartbeatRequest
from kio.schema.join_group.v5.request import JoinGroupRequest, JoinGroupRequestProtocol
from kio.schema.join_group.v9.request import JoinGroupRequest as JoinGroupV9
from kio.schema.join_group.v9.request import JoinGroupRequestProtocol as ProtocolV9
from kio.schema.sync_group.v5.request import SyncGroupRequest, SyncGroupRequestAssignment
from kio.static.primitive import i32, i32Timedelta

from .kafka_wire import WireClient
from .test_groups_confluent import (
    balanced,
    consumers_closed_at_teardown,
    create_topic,
    poll_until,
    produce,
    unique,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def open_consumer() -> Iterator[Callable[..., Consumer]]:
    yield from consumers_closed_at_teardown()


def ms(value: int) -> i32Timedelta:
    return i32Timedelta.parse(datetime.timedelta(milliseconds=value))


def join(
    client: WireClient,
    group: str,
    member_id: str = "",
    *,
    session_ms: int = 6000,
    instance: str | None = None,
    protocols: tuple[JoinGroupRequestProtocol, ...] = (
        JoinGroupRequestProtocol(name="range", metadata=b"m"),
    ),
) -> Any:
    """A JoinGroup v5; returns the decoded response."""
    return client.request(
        JoinGroupRequest(
            group_id=group,
            session_timeout=ms(session_ms),
            rebalance_timeout=ms(10_000),
            member_id=member_id,
            group_instance_id=instance,
            protocol_type="consumer",
            protocols=protocols,
        )
    )


def heartbeat(
    client: WireClient, group: str, generation: int, member_id: str, instance: str | None = None
) -> int:
    response = client.request(
        HeartbeatRequest(
            group_id=group, generation_id=i32(generation), member_id=member_id, group_instance_id=instance
        )
    )
    return response.error_code


def describe_state(client: WireClient, group: str) -> str:
    response = client.request(DescribeGroupsRequest(groups=(group,), include_authorized_operations=False))
    return response.groups[0].group_state


def test_a_wire_client_walks_the_join_protocol_and_gets_exact_errors(broker) -> None:
    group = unique("g")
    with WireClient(broker.bootstrap) as client:
        too_short = join(client, group, session_ms=10)
        assert too_short.error_code == ErrorCode.invalid_session_timeout
        no_protocols = join(client, group, protocols=())
        assert no_protocols.error_code == ErrorCode.inconsistent_group_protocol

        first = join(client, group)
        assert first.error_code == ErrorCode.member_id_required
        joined = join(client, group, first.member_id)
        assert joined.error_code == ErrorCode.none
        assert joined.leader == joined.member_id
        assert [m.member_id for m in joined.members] == [joined.member_id]

        wrong_generation = client.request(
            SyncGroupRequest(
                group_id=group,
                generation_id=i32(joined.generation_id + 5),
                member_id=joined.member_id,
                assignments=(),
            )
        )
        assert wrong_generation.error_code == ErrorCode.illegal_generation
        synced = client.request(
            SyncGroupRequest(
                group_id=group,
                generation_id=joined.generation_id,
                member_id=joined.member_id,
                protocol_type="consumer",
                protocol_name="range",
                assignments=(SyncGroupRequestAssignment(member_id=joined.member_id, assignment=b"all"),),
            )
        )
        assert (synced.error_code, synced.assignment, synced.protocol_name) == (
            ErrorCode.none,
            b"all",
            "range",
        )
        assert heartbeat(client, group, joined.generation_id, joined.member_id) == ErrorCode.none
        assert heartbeat(client, group, joined.generation_id, "intruder") == ErrorCode.unknown_member_id
        assert describe_state(client, group) == "Stable"


def test_a_silent_member_is_expired_after_its_session_timeout(broker) -> None:
    group = unique("g")
    with WireClient(broker.bootstrap) as client:
        joined = join(client, group, session_ms=1000, instance="silent")
        assert joined.error_code == ErrorCode.none
        client.request(
            SyncGroupRequest(
                group_id=group,
                generation_id=joined.generation_id,
                member_id=joined.member_id,
                group_instance_id="silent",
                assignments=(),
            )
        )
        assert describe_state(client, group) == "Stable"
        deadline = time.monotonic() + 5
        while describe_state(client, group) != "Empty" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert describe_state(client, group) == "Empty"
        expired = heartbeat(client, group, joined.generation_id, joined.member_id, "silent")
        assert expired == ErrorCode.unknown_member_id


def test_a_second_instance_with_the_same_group_instance_id_fences_the_first(broker) -> None:
    group = unique("g")
    with WireClient(broker.bootstrap) as first_client, WireClient(broker.bootstrap) as second_client:
        first = join(first_client, group, instance="pod-0")
        first_client.request(
            SyncGroupRequest(
                group_id=group,
                generation_id=first.generation_id,
                member_id=first.member_id,
                group_instance_id="pod-0",
                assignments=(SyncGroupRequestAssignment(member_id=first.member_id, assignment=b"p"),),
            )
        )
        second = join(second_client, group, instance="pod-0")
        assert second.error_code == ErrorCode.none
        assert second.member_id != first.member_id
        # The restarted leader takes over without a rebalance and is told the old leader id,
        # so it does not re-assign a stable group.
        assert (second.generation_id, second.leader, second.members) == (
            first.generation_id,
            first.member_id,
            (),
        )
        resynced = second_client.request(
            SyncGroupRequest(
                group_id=group,
                generation_id=second.generation_id,
                member_id=second.member_id,
                group_instance_id="pod-0",
                assignments=(),
            )
        )
        assert resynced.assignment == b"p"
        assert heartbeat(first_client, group, first.generation_id, first.member_id, "pod-0") == (
            ErrorCode.fenced_instance_id
        )
        assert (
            heartbeat(second_client, group, second.generation_id, second.member_id, "pod-0") == ErrorCode.none
        )


def test_a_killed_group_member_is_dropped_and_its_partitions_move(broker, open_consumer, kcat: str) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 2)
    produce(broker.bootstrap, topic, 4, partitions=2)
    survivor = open_consumer(broker.bootstrap, group, **{"session.timeout.ms": 6000})
    survivor.subscribe([topic])
    poll_until([survivor], balanced([survivor], 2))
    doomed = subprocess.Popen(
        [kcat, "-b", broker.bootstrap, "-G", group, "-X", "session.timeout.ms=1500", "-q", topic],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        poll_until([survivor], lambda: len(survivor.assignment()) == 1)  # kcat took a partition
    finally:
        doomed.kill()  # no LeaveGroup: only the session timeout can notice
        doomed.wait()
    started = time.monotonic()
    poll_until([survivor], balanced([survivor], 2))
    assert time.monotonic() - started < 10


def test_describe_groups_v6_reports_an_unknown_group_as_not_found_and_v5_as_dead(broker) -> None:
    group = unique("missing")
    with WireClient(broker.bootstrap) as client:
        assert describe_state(client, group) == "Dead"
        (v6,) = client.request(DescribeGroupsV6(groups=(group,), include_authorized_operations=False)).groups
    assert v6.error_code == ErrorCode.group_id_not_found
    assert v6.error_message == f"Group {group} not found."


def test_join_group_v9_joins_with_a_reason_and_no_skipped_assignment(broker) -> None:
    group = unique("g9")
    request = {
        "group_id": group,
        "session_timeout": ms(10_000),
        "rebalance_timeout": ms(10_000),
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocols": (ProtocolV9(name="range", metadata=b""),),
        "reason": "starting up",
    }
    with WireClient(broker.bootstrap) as client:
        first = client.request(JoinGroupV9(member_id="", **request))
        assert first.error_code == ErrorCode.member_id_required
        joined = client.request(JoinGroupV9(member_id=first.member_id, **request))
    assert joined.error_code == ErrorCode.none
    assert joined.skip_assignment is False
    assert joined.leader == joined.member_id
