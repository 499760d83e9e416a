"""DescribeTopicPartitions (75) through the real dispatcher and broker state (logs on disk, ACLs on):
cursor paging, the partition limit, unknown and unauthorized topics."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kio.schema.describe_topic_partitions.v0.request import (
    Cursor,
    DescribeTopicPartitionsRequest,
    TopicRequest,
)
from kio.schema.errors import ErrorCode
from kio.static.primitive import i32

from broker.auth.authorizer import AclBinding, Operation, PatternType, Permission, ResourceType
from broker.handlers.api_table import API_TABLE
from broker.handlers.metadata import ALL_TOPIC_OPERATIONS
from broker.metadata.security_records import CreateAclRecord
from broker.protocol.frames import MalformedRequest, decode_body, decode_header
from tests.fixtures.hostile_frames import minimal_request
from tests.unit.broker.server.test_dispatcher_replica_requests import AclBroker

ADMIN = "User:broker"  # a super user: everything allowed, as with ACLs off
ALICE = "User:alice"
WIDE, NARROW, SECRET = "wide", "narrow", "secret"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AclBroker]:
    broker = AclBroker(Path(tmp_path_factory.mktemp("dtp")))
    broker.create_topic(WIDE, 25)
    broker.create_topic(NARROW, 2)
    broker.create_topic(SECRET, 3)
    allow_describe = [
        AclBinding(
            ResourceType.TOPIC, name, PatternType.LITERAL, ALICE, "*", Operation.DESCRIBE, Permission.ALLOW
        )
        for name in (WIDE, NARROW)
    ]
    broker.state.security.apply_records([CreateAclRecord(b.as_tuple()) for b in allow_describe])
    yield broker
    broker.close()


def describe(
    broker: AclBroker,
    names: list[str],
    limit: int = 2000,
    cursor: tuple[str, int] | None = None,
    principal: str = ADMIN,
) -> Any:
    request = DescribeTopicPartitionsRequest(
        topics=tuple(TopicRequest(name=name) for name in names),
        response_partition_limit=i32(limit),
        cursor=None if cursor is None else Cursor(topic_name=cursor[0], partition_index=i32(cursor[1])),
    )
    return broker.send(principal, request)


def pages(broker: AclBroker, names: list[str], limit: int, principal: str = ADMIN) -> list[Any]:
    responses, cursor = [], None
    while True:
        response = describe(broker, names, limit, cursor, principal)
        responses.append(response)
        if response.next_cursor is None:
            return responses
        cursor = (response.next_cursor.topic_name, int(response.next_cursor.partition_index))
        assert len(responses) < 100, "the cursor does not advance"


def described(responses: list[Any]) -> list[tuple[str, int]]:
    return [(t.name, int(p.partition_index)) for r in responses for t in r.topics for p in t.partitions]


def test_served_at_v0() -> None:
    low, high, *_ = API_TABLE[75]
    assert (low, high) == (0, 0)


def test_cursor_pages_through_a_topic_with_many_partitions(broker: AclBroker) -> None:
    responses = pages(broker, [WIDE], limit=10)
    assert [len(r.topics[0].partitions) for r in responses] == [10, 10, 5]
    assert [(r.next_cursor.topic_name, r.next_cursor.partition_index) for r in responses[:2]] == [
        (WIDE, 10),
        (WIDE, 20),
    ]
    assert described(responses) == [(WIDE, i) for i in range(25)]
    partition = responses[0].topics[0].partitions[3]
    assert partition.error_code == ErrorCode.none
    node = broker.state.node_id
    assert (partition.leader_id, partition.replica_nodes, partition.isr_nodes) == (node, (node,), (node,))
    assert partition.eligible_leader_replicas == ()
    assert partition.last_known_elr == ()
    topic = responses[0].topics[0]
    assert topic.topic_id == broker.state.metadata.get(WIDE).topic_id
    assert topic.topic_authorized_operations == ALL_TOPIC_OPERATIONS


def test_all_topics_in_name_order_across_pages(broker: AclBroker) -> None:
    responses = pages(broker, [], limit=7)
    everything = described(responses)
    topics = sorted(t.name for t in broker.state.metadata.topics())
    expected = [(name, i) for name in topics for i in range(broker.state.metadata.get(name).partitions)]
    assert everything == expected
    assert all(sum(len(t.partitions) for t in r.topics) <= 7 for r in responses)


def test_a_full_page_ends_before_the_next_topic(broker: AclBroker) -> None:
    response = describe(broker, [NARROW, SECRET], limit=2)
    assert [(t.name, len(t.partitions)) for t in response.topics] == [(NARROW, 2)]
    assert (response.next_cursor.topic_name, response.next_cursor.partition_index) == (SECRET, 0)


def test_unknown_and_illegal_topics_are_answered_without_using_the_limit(broker: AclBroker) -> None:
    response = describe(broker, ["no-such-topic", NARROW, "bad/name"], limit=3)
    by_name = {t.name: t for t in response.topics}
    assert by_name["no-such-topic"].error_code == ErrorCode.unknown_topic_or_partition
    assert by_name["bad/name"].error_code == ErrorCode.invalid_topic_exception
    assert by_name[NARROW].error_code == ErrorCode.none
    assert len(by_name[NARROW].partitions) == 2
    assert response.next_cursor is None
    assert broker.state.metadata.get("no-such-topic") is None  # never auto-created


def test_a_cursor_outside_the_requested_topics_is_an_invalid_request(broker: AclBroker) -> None:
    response = describe(broker, [NARROW], cursor=(WIDE, 3))
    assert [(t.name, t.error_code) for t in response.topics] == [(NARROW, ErrorCode.invalid_request)]


def test_a_cursor_past_the_end_of_a_topic_goes_on_with_the_next(broker: AclBroker) -> None:
    response = describe(broker, [NARROW, SECRET], cursor=(NARROW, 5))
    assert [(t.name, len(t.partitions)) for t in response.topics] == [(NARROW, 0), (SECRET, 3)]


def test_unauthorized_topics_are_refused_by_name_and_hidden_from_all_topics(broker: AclBroker) -> None:
    named = describe(broker, [SECRET, NARROW, "ghost"], principal=ALICE)
    assert [(t.name, t.error_code) for t in named.topics] == [
        (NARROW, ErrorCode.none),
        ("ghost", ErrorCode.topic_authorization_failed),  # existence not disclosed
        (SECRET, ErrorCode.topic_authorization_failed),
    ]
    assert named.topics[2].partitions == ()
    assert named.topics[0].topic_authorized_operations == 1 << Operation.DESCRIBE
    everything = described(pages(broker, [], limit=4, principal=ALICE))
    assert {name for name, _ in everything} == {WIDE, NARROW}
    assert len(everything) == 27


def test_the_cursor_is_a_nullable_struct_checked_before_decoding() -> None:
    # The body walk in front of kio's reader knows the presence marker of a nullable struct.
    frame, _offset, _sites = minimal_request(75, 0)
    cursor_at = frame.index(b"\x01\x02a")  # present marker, then the cursor's topic name
    absent = frame[:cursor_at] + b"\xff" + frame[-1:]
    assert decode_body(decode_header(absent), absent).cursor is None
    truncated = frame[: cursor_at + 2]
    with pytest.raises(MalformedRequest):
        decode_body(decode_header(truncated), truncated)
