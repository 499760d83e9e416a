"""AddRaftVoter (80) and RemoveRaftVoter (81) on a single node, through the real dispatcher and broker
state (ACLs on): ALTER on the cluster is required, and a node without a controller quorum answers
UNSUPPORTED_VERSION (kraft.version 0), as Kafka does for a static quorum. Dynamic quorums are tested on
real processes (tests/integration/cluster/test_dynamic_quorum.py)."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kio.schema.add_raft_voter.v0.request import AddRaftVoterRequest, Listener
from kio.schema.errors import ErrorCode
from kio.schema.remove_raft_voter.v0.request import RemoveRaftVoterRequest
from kio.static.primitive import i32, i32Timedelta, u16

from broker.controller.rpc.quorum import AddVoterRequest, RemoveVoterRequest
from broker.handlers.api_table import API_TABLE
from broker.handlers.quorum import _already_done
from tests.unit.broker.server.test_dispatcher_replica_requests import AclBroker

ADMIN = "User:broker"  # a super user


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AclBroker]:
    broker = AclBroker(Path(tmp_path_factory.mktemp("voters")))
    yield broker
    broker.close()


def add(
    listeners: tuple[Listener, ...] = (Listener(name="CONTROLLER", host="h", port=u16(9093)),),
) -> AddRaftVoterRequest:
    return AddRaftVoterRequest(
        cluster_id=None,
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=5)),
        voter_id=i32(4),
        voter_directory_id=uuid.uuid4(),
        listeners=listeners,
    )


def remove() -> RemoveRaftVoterRequest:
    return RemoveRaftVoterRequest(cluster_id=None, voter_id=i32(1), voter_directory_id=uuid.uuid4())


def test_served_at_kafka_4_2_versions() -> None:
    assert API_TABLE[80][:2] == (0, 1)
    assert API_TABLE[81][:2] == (0, 0)
    assert 82 not in API_TABLE, "UpdateRaftVoter is controller to controller (not served by Kafka's brokers)"


@pytest.mark.parametrize("make", [add, remove])
def test_they_need_alter_on_the_cluster(broker: AclBroker, make) -> None:  # type: ignore[no-untyped-def]
    response = broker.send("User:alice", make())
    assert response.error_code == ErrorCode.cluster_authorization_failed


@pytest.mark.parametrize("make", [add, remove])
def test_a_node_without_a_quorum_cannot_change_voters(broker: AclBroker, make) -> None:  # type: ignore[no-untyped-def]
    response = broker.send(ADMIN, make())
    assert response.error_code == ErrorCode.unsupported_version
    assert "kraft.version 0" in response.error_message


def test_a_new_voter_needs_a_listener(broker: AclBroker) -> None:
    response = broker.send(ADMIN, add(listeners=()))
    assert response.error_code == ErrorCode.invalid_request
    # Whoever may not change voters learns nothing about the request's validity.
    response = broker.send("User:alice", add(listeners=()))
    assert response.error_code == ErrorCode.cluster_authorization_failed


DIRECTORY = str(uuid.uuid4())


@pytest.mark.parametrize(
    ("method", "params", "code", "before", "done"),
    [
        # The leader removed itself, moved, and the client sent the removal again to the new leader.
        (
            "remove_voter",
            {"voter_id": 2, "directory_id": DIRECTORY},
            ErrorCode.voter_not_found,
            {2: DIRECTORY},
            True,
        ),
        (
            "remove_voter",
            {"voter_id": 2, "directory_id": None},
            ErrorCode.voter_not_found,
            {2: DIRECTORY},
            True,
        ),
        # Never a voter, or not with that directory: the refusal stands.
        (
            "remove_voter",
            {"voter_id": 9, "directory_id": None},
            ErrorCode.voter_not_found,
            {2: DIRECTORY},
            False,
        ),
        (
            "remove_voter",
            {"voter_id": 2, "directory_id": str(uuid.uuid4())},
            ErrorCode.voter_not_found,
            {2: DIRECTORY},
            False,
        ),
        # An addition answered DUPLICATE_VOTER by a new leader that already has it.
        (
            "add_voter",
            {"voter_id": 4, "directory_id": DIRECTORY},
            ErrorCode.duplicate_voter,
            {2: DIRECTORY},
            True,
        ),
        (
            "add_voter",
            {"voter_id": 2, "directory_id": DIRECTORY},
            ErrorCode.duplicate_voter,
            {2: DIRECTORY},
            False,
        ),
        # Other refusals, or no view of the set before the request, are never taken for success.
        (
            "remove_voter",
            {"voter_id": 2, "directory_id": None},
            ErrorCode.request_timed_out,
            {2: DIRECTORY},
            False,
        ),
        ("remove_voter", {"voter_id": 2, "directory_id": None}, ErrorCode.voter_not_found, None, False),
    ],
)
def test_a_change_the_previous_leader_made_is_not_reported_as_refused(
    method: str, params: dict[str, object], code: ErrorCode, before: dict[int, str | None] | None, done: bool
) -> None:
    change = (
        AddVoterRequest(host="127.0.0.1", port=9093, **params)  # type: ignore[arg-type]
        if method == "add_voter"
        else RemoveVoterRequest(**params)  # type: ignore[arg-type]
    )
    assert _already_done(change, code, before) is done
