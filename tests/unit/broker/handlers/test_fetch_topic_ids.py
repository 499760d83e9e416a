"""Fetch v13-17 through the real dispatcher and broker state (logs on disk, ACLs on): topics named by the
registry's ids, unknown and stale ids, a topic re-created under its name, fetch sessions keyed by id,
the replica id in v15's replica_state."""

from __future__ import annotations

import dataclasses
import datetime
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12 import request as fetch_v12
from kio.schema.fetch.v13 import request as fetch_v13
from kio.schema.fetch.v15 import request as fetch_v15
from kio.schema.fetch.v17 import request as fetch_v17
from kio.static.primitive import i32, i32Timedelta, i64

from broker.handlers.fetch_sessions import FetchSessionCache
from broker.wire.records.records import Record, build_batch
from tests.unit.broker.server.test_dispatcher_replica_requests import AclBroker

ADMIN = "User:broker"  # a super user
ALICE = "User:alice"  # no ACLs: may not act as a replica
TOPIC = "ids"
NO_WAIT = i32Timedelta.parse(datetime.timedelta(0))


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[AclBroker]:
    broker = AclBroker(tmp_path)
    broker.create_topic(TOPIC, 2)
    yield broker
    broker.close()


def append(broker: AclBroker, partition: int, *values: bytes) -> None:
    led, error = broker.state.partitions.leader(TOPIC, partition)
    assert led is not None, error
    assert (
        led.append(build_batch([Record(key=None, value=v) for v in values]), acks=-1).error == ErrorCode.none
    )


def topic_id(broker: AclBroker) -> uuid.UUID:
    topic = broker.state.metadata.get(TOPIC)
    assert topic is not None
    return topic.topic_id


def fetch_topic(
    version_module: Any, partitions: list[int], current_leader_epoch: int = -1, **name_or_id: Any
) -> Any:
    """A request topic of `version_module`'s Fetch reading `partitions` from offset 0."""
    return version_module.FetchTopic(
        **name_or_id,
        partitions=tuple(
            version_module.FetchPartition(
                partition=i32(p),
                current_leader_epoch=i32(current_leader_epoch),
                fetch_offset=i64(0),
                partition_max_bytes=i32(1 << 20),
            )
            for p in partitions
        ),
    )


def v17_fetch(
    topics: dict[uuid.UUID, list[int]],
    *,
    session: tuple[int, int] = (0, -1),
    forgotten: dict[uuid.UUID, list[int]] | None = None,
) -> Any:
    return fetch_v17.FetchRequest(
        max_wait=NO_WAIT,
        min_bytes=i32(0),
        session_id=i32(session[0]),
        session_epoch=i32(session[1]),
        topics=tuple(fetch_topic(fetch_v17, parts, topic_id=tid) for tid, parts in topics.items()),
        forgotten_topics_data=tuple(
            fetch_v17.ForgottenTopic(topic_id=tid, partitions=tuple(i32(p) for p in parts))
            for tid, parts in (forgotten or {}).items()
        ),
    )


def answers(response: Any) -> dict[tuple[uuid.UUID, int], tuple[ErrorCode, int, bytes]]:
    return {
        (t.topic_id, int(p.partition_index)): (p.error_code, int(p.high_watermark), bytes(p.records or b""))
        for t in response.responses
        for p in t.partitions
    }


def test_a_v17_fetch_names_topics_by_the_registry_id_and_reads_records(broker: AclBroker) -> None:
    append(broker, 0, b"a", b"b")
    tid = topic_id(broker)
    response = broker.send(ADMIN, v17_fetch({tid: [0, 1]}))
    assert response.error_code == ErrorCode.none
    got = answers(response)
    assert set(got) == {(tid, 0), (tid, 1)}
    assert got[tid, 0][:2] == (ErrorCode.none, 2)
    assert got[tid, 0][2]
    assert got[tid, 1] == (ErrorCode.none, 0, b"")


@pytest.mark.parametrize("version_module", [fetch_v13, fetch_v17])
def test_an_id_that_names_no_topic_and_the_zero_id_are_unknown_topic_id(
    broker: AclBroker, version_module: Any
) -> None:
    stranger, zero = uuid.uuid4(), uuid.UUID(int=0)
    request = version_module.FetchRequest(
        max_wait=NO_WAIT,
        min_bytes=i32(0),
        topics=tuple(fetch_topic(version_module, [0], topic_id=tid) for tid in (stranger, zero)),
        forgotten_topics_data=(),
    )
    got = broker.send(ADMIN, request)
    errors = {(t.topic_id, p.error_code) for t in got.responses for p in t.partitions}
    # kio reads the zero id back as None.
    assert errors == {(stranger, ErrorCode.unknown_topic_id), (None, ErrorCode.unknown_topic_id)}


def test_a_topic_recreated_under_its_name_has_a_new_id_and_the_old_one_is_refused(broker: AclBroker) -> None:
    old = topic_id(broker)
    append(broker, 0, b"old")
    broker.delete_topic(TOPIC)
    broker.create_topic(TOPIC, 2)
    new = topic_id(broker)
    assert new != old
    append(broker, 0, b"new-1", b"new-2")
    assert answers(broker.send(ADMIN, v17_fetch({old: [0]}))) == {
        (old, 0): (ErrorCode.unknown_topic_id, -1, b"")
    }
    error, high_watermark, records = answers(broker.send(ADMIN, v17_fetch({new: [0]})))[new, 0]
    assert (error, high_watermark) == (ErrorCode.none, 2)
    assert b"new-2" in records
    assert b"old" not in records


def test_a_replica_of_another_incarnation_than_the_id_is_inconsistent_topic_id(broker: AclBroker) -> None:
    """The registry and the replica disagree only on a cluster member between a re-create in the metadata
    image and its application to local replicas; here the replica's assignment is given an older id."""
    tid = topic_id(broker)
    led, _ = broker.state.partitions.leader(TOPIC, 0)
    assert led is not None
    led.assignment = dataclasses.replace(led.assignment, topic_id=uuid.uuid4())
    got = answers(broker.send(ADMIN, v17_fetch({tid: [0, 1]})))
    assert got[tid, 0][0] == ErrorCode.inconsistent_topic_id
    assert got[tid, 1][0] == ErrorCode.none


def test_a_session_opened_at_v17_is_keyed_by_id_and_follows_appends(broker: AclBroker) -> None:
    tid = topic_id(broker)
    opened = broker.send(ADMIN, v17_fetch({tid: [0, 1]}, session=(0, 0)))
    session_id = int(opened.session_id)
    assert session_id > 0
    cache = broker.state.response_caches.get(FetchSessionCache, lambda: pytest.fail("no session cache"))
    session = cache.get(session_id)
    assert session is not None
    assert session.uses_topic_ids
    assert set(session.partitions) == {(tid, 0), (tid, 1)}
    # Nothing new: the incremental answer is empty.
    assert answers(broker.send(ADMIN, v17_fetch({}, session=(session_id, 1)))) == {}
    append(broker, 1, b"x")
    got = answers(broker.send(ADMIN, v17_fetch({}, session=(session_id, 2))))
    assert list(got) == [(tid, 1)]
    assert got[tid, 1][1] == 1
    # Forgetting by id removes the partition from the session.
    broker.send(ADMIN, v17_fetch({}, session=(session_id, 3), forgotten={tid: [0]}))
    assert set(session.partitions) == {(tid, 1)}


def test_a_session_whose_topic_is_recreated_answers_unknown_topic_id(broker: AclBroker) -> None:
    old = topic_id(broker)
    session_id = int(broker.send(ADMIN, v17_fetch({old: [0]}, session=(0, 0))).session_id)
    broker.delete_topic(TOPIC)
    broker.create_topic(TOPIC, 2)
    append(broker, 0, b"new")
    got = answers(broker.send(ADMIN, v17_fetch({}, session=(session_id, 1))))
    assert got == {(old, 0): (ErrorCode.unknown_topic_id, -1, b"")}


def test_a_session_cannot_cross_v13(broker: AclBroker) -> None:
    """Kafka's FETCH_SESSION_TOPIC_ID_ERROR: a session keyed by names continued with ids, or the reverse."""
    tid = topic_id(broker)
    by_id = int(broker.send(ADMIN, v17_fetch({tid: [0]}, session=(0, 0))).session_id)
    by_name = int(broker.send(ADMIN, v12_fetch(session=(0, 0))).session_id)
    assert (
        broker.send(ADMIN, v12_fetch(session=(by_id, 1))).error_code == ErrorCode.fetch_session_topic_id_error
    )
    crossed = broker.send(ADMIN, v17_fetch({}, session=(by_name, 1)))
    assert crossed.error_code == ErrorCode.fetch_session_topic_id_error


def v12_fetch(session: tuple[int, int]) -> Any:
    return fetch_v12.FetchRequest(
        max_wait=NO_WAIT,
        min_bytes=i32(0),
        session_id=i32(session[0]),
        session_epoch=i32(session[1]),
        topics=(fetch_topic(fetch_v12, [0], topic=TOPIC),) if session[1] == 0 else (),
        forgotten_topics_data=(),
    )


def test_v15_reads_the_replica_id_from_replica_state(broker: AclBroker) -> None:
    """A consumer posing as follower 7 in replica_state is refused like one posing in v12's replica_id."""
    tid = topic_id(broker)
    request = fetch_v15.FetchRequest(
        replica_state=fetch_v15.ReplicaState(replica_id=i32(7), replica_epoch=i64(1)),
        max_wait=NO_WAIT,
        min_bytes=i32(0),
        topics=(fetch_topic(fetch_v15, [0], topic_id=tid),),
        forgotten_topics_data=(),
    )
    refused = broker.send(ALICE, request)
    assert refused.error_code == ErrorCode.cluster_authorization_failed
    assert [(t.topic_id, p.error_code) for t in refused.responses for p in t.partitions] == [
        (tid, ErrorCode.cluster_authorization_failed)
    ]


@pytest.mark.parametrize(("version_module", "hinted"), [(fetch_v15, False), (fetch_v17, True)])
def test_a_fenced_fetch_names_the_current_leader_and_its_endpoint_from_v16(
    broker: AclBroker, version_module: Any, hinted: bool
) -> None:
    """The image moved the partition to leader epoch 3 (as a leader election does); a consumer still at 1 is
    FENCED_LEADER_EPOCH, and from v16 told who leads at which epoch and where (KIP-951)."""
    tid = topic_id(broker)
    replication = broker.state.partitions.replication
    key = (TOPIC, 0)
    replication.assignments[key] = dataclasses.replace(replication.assignments[key], leader_epoch=3)
    request = version_module.FetchRequest(
        max_wait=NO_WAIT,
        min_bytes=i32(0),
        topics=(fetch_topic(version_module, [0], current_leader_epoch=1, topic_id=tid),),
        forgotten_topics_data=(),
    )
    response = broker.send(ADMIN, request)
    (partition,) = response.responses[0].partitions
    assert partition.error_code == ErrorCode.fenced_leader_epoch
    node_id = broker.state.node_id
    leader = (int(partition.current_leader.leader_id), int(partition.current_leader.leader_epoch))
    if not hinted:
        assert leader == (-1, -1)
        return
    assert leader == (node_id, 3)
    assert [(int(n.node_id), n.port > 0) for n in response.node_endpoints] == [(node_id, True)]
