"""A KIP-853 dynamic controller quorum on real processes: three controller+broker nodes formatted with
`python -m broker format --initial-controllers`, a fourth controller formatted to join as an observer
and promoted with AddRaftVoter, voters removed with RemoveRaftVoter (the leader too: it steps down),
while topic creations keep being committed; kill -9 during a change; Kafka's refusals.

Requests go to a broker as a Kafka client sends them (kio frames), which forwards them to the active
controller. Each controller's own view of the voter set is read over the controller listener."""

from __future__ import annotations

import asyncio
import datetime
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kio.schema.add_raft_voter.v0.request import AddRaftVoterRequest
from kio.schema.add_raft_voter.v0.request import Listener as AddListener
from kio.schema.api_versions.v4.request import ApiVersionsRequest
from kio.schema.describe_quorum.v2.request import DescribeQuorumRequest, PartitionData, TopicData
from kio.schema.errors import ErrorCode
from kio.schema.remove_raft_voter.v0.request import RemoveRaftVoterRequest
from kio.static.primitive import i32, i32Timedelta, u16

from broker.controller.client import RpcChannel
from broker.controller.rpc import quorum as controller_rpc
from tests.fixtures.broker import free_port
from tests.fixtures.cluster import ClusterNode, LocalCluster
from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration

ZERO = uuid.UUID(int=0)


def add_voter(bootstrap: str, node_id: int, directory: uuid.UUID, port: int) -> tuple[ErrorCode, str | None]:
    request = AddRaftVoterRequest(
        cluster_id=None,
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=20)),
        voter_id=i32(node_id),
        voter_directory_id=directory,
        listeners=(AddListener(name="CONTROLLER", host="127.0.0.1", port=u16(port)),),
    )
    with WireClient(bootstrap, timeout=30) as client:
        response = client.request(request)
    return response.error_code, response.error_message


def remove_voter(bootstrap: str, node_id: int, directory: uuid.UUID) -> tuple[ErrorCode, str | None]:
    request = RemoveRaftVoterRequest(cluster_id=None, voter_id=i32(node_id), voter_directory_id=directory)
    with WireClient(bootstrap, timeout=30) as client:
        response = client.request(request)
    return response.error_code, response.error_message


def describe_quorum(bootstrap: str) -> Any:
    request = DescribeQuorumRequest(
        topics=(
            TopicData(topic_name="__cluster_metadata", partitions=(PartitionData(partition_index=i32(0)),)),
        )
    )
    with WireClient(bootstrap, timeout=10) as client:
        return client.request(request)


def voters_and_observers(bootstrap: str) -> tuple[dict[int, uuid.UUID], set[int], int] | None:
    """{voter: directory id}, observer ids and the leader, or None while the quorum does not answer."""
    try:
        answer = describe_quorum(bootstrap)
    except OSError:
        return None
    (topic,) = answer.topics
    (partition,) = topic.partitions
    if partition.error_code != ErrorCode.none:
        return None
    voters = {int(v.replica_id): v.replica_directory_id for v in partition.current_voters}
    return voters, {int(o.replica_id) for o in partition.observers}, int(partition.leader_id)


def controller_view(port: int) -> dict[str, Any]:
    """One controller's own `describe_quorum` over the controller listener."""

    async def ask() -> dict[str, Any]:
        channel = RpcChannel("127.0.0.1", port)
        try:
            reply = await channel.call(controller_rpc.DescribeQuorumRequest(), 5.0)
        finally:
            channel.close()
        # The wire form (JSON lists and string keys), as a packet capture would show it.
        return reply.answer().to_json(0)

    return asyncio.run(ask())


def wait_for(check: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        answer = check()
        if answer:
            return answer
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(0.2)


class TopicCreator(threading.Thread):
    """Creates a topic after another while the quorum changes; counts what the cluster committed."""

    def __init__(self, cluster: LocalCluster) -> None:
        super().__init__(daemon=True)
        self.admin = AdminClient(cluster.client_config())
        self.created: list[str] = []
        self.failures: list[str] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        number = 0
        while not self.stopping.is_set():
            number += 1
            name = f"during-change-{number}"
            future = self.admin.create_topics([NewTopic(name, 1, 1)], request_timeout=15)[name]
            try:
                future.result(timeout=20)
                self.created.append(name)
            except Exception as exc:  # a failover may refuse one; it is retried under a new name
                self.failures.append(f"{name}: {exc}")
            time.sleep(0.1)

    def stop(self) -> None:
        self.stopping.set()
        self.join(60)


def directory_of(node: ClusterNode) -> uuid.UUID:
    """The directory id `python -m broker format` wrote for `node`."""
    text = (node.data_dir / "logs" / "__cluster_metadata" / "meta.properties").read_text()
    return uuid.UUID(text.split("directory.id=")[1].split()[0])


def create_topic(cluster: LocalCluster, name: str) -> None:
    admin = AdminClient(cluster.client_config())
    admin.create_topics([NewTopic(name, 1, 1)], request_timeout=15)[name].result(timeout=20)
    assert name in admin.list_topics(timeout=10).topics


def test_a_dynamic_quorum_adds_a_voter_and_removes_the_leader_while_topics_are_created(
    cluster_factory: Callable[..., LocalCluster],
) -> None:
    cluster = cluster_factory(3, dynamic_quorum=True)
    bootstrap = cluster.node(1).bootstrap
    directories = {i: uuid.UUID(d) for i, d in cluster.directory_ids.items()}
    voters, _observers, _leader = wait_for(lambda: voters_and_observers(bootstrap), 30, "the quorum")
    assert voters == directories
    assert finalized_kraft_version(bootstrap) == 1, "a dynamic quorum finalizes kraft.version 1"

    fourth = cluster.add_controller(4)
    assert fourth.controller_port is not None
    assert 4 not in controller_view(fourth.controller_port)["voters"], "formatted to join as an observer"
    observed = wait_for(
        lambda: (answer := voters_and_observers(bootstrap)) and 4 in answer[1] and answer,
        30,
        "controller 4 fetching as an observer",
    )
    assert set(observed[0]) == {1, 2, 3}

    creator = TopicCreator(cluster)
    creator.start()
    try:
        directory_4 = directory_of(fourth)
        # Refusals first: a node that is not an observer, a voter already in the set, an unknown voter.
        error, message = add_voter(bootstrap, 7, uuid.uuid4(), 1)
        assert error == ErrorCode.request_timed_out, message
        error, message = add_voter(bootstrap, 2, directories[2], cluster.node(2).controller_port or 0)
        assert error == ErrorCode.duplicate_voter, message
        error, message = remove_voter(bootstrap, 9, uuid.uuid4())
        assert error == ErrorCode.voter_not_found, message
        error, message = remove_voter(bootstrap, 1, uuid.uuid4())
        assert error == ErrorCode.voter_not_found, "a voter is known by id and directory id"

        error, message = add_voter(bootstrap, 4, directory_4, fourth.controller_port or 0)
        assert error == ErrorCode.none, message
        voters, observers, leader = wait_for(
            lambda: (answer := voters_and_observers(bootstrap)) and len(answer[0]) == 4 and answer,
            15,
            "four voters",
        )
        assert voters == {**directories, 4: directory_4}
        assert 4 not in observers
        # Controller 4 holds the log: it sees itself a voter of the same set.
        port_4 = fourth.controller_port
        wait_for(lambda: controller_view(port_4)["voters"] == [1, 2, 3, 4], 10, "controller 4's view")

        # Remove the leader: it steps down once the new set is committed, another one is elected.
        error, message = remove_voter(bootstrap, leader, directories.get(leader, directory_4))
        assert error == ErrorCode.none, message
        voters, observers, new_leader = wait_for(
            # (for a moment after the commit the removed leader may still answer: not a voter, leading)
            lambda: (answer := voters_and_observers(bootstrap)) and answer[2] in answer[0] and answer,
            15,
            "three voters and a leader among them",
        )
        assert leader not in voters
        assert new_leader != leader
        assert new_leader in voters
        created_before = len(creator.created)
        wait_for(lambda: len(creator.created) >= created_before + 3, 30, "topic creations after the change")
    finally:
        creator.stop()
    # (How many creations fit in the window depends on the machine's load; that each one the cluster
    # acknowledged survived the two changes does not.)
    assert creator.created, creator.failures
    create_topic(cluster, "after-the-changes")
    listed = AdminClient(cluster.client_config()).list_topics(timeout=10).topics
    assert [name for name in creator.created if name not in listed] == []
    # Every controller still running agrees on the voter set.
    for node_id in (1, 2, 3, 4):
        port = cluster.node(node_id).controller_port
        assert port is not None
        view = wait_for(
            lambda p=port: (v := controller_view(p))["voters"] == sorted(voters) and v, 10, "agreement"
        )
        assert view["voters"] == sorted(voters)


def test_kill_9_of_the_leader_during_a_change_leaves_one_voter_set(
    cluster_factory: Callable[..., LocalCluster],
) -> None:
    cluster = cluster_factory(3, dynamic_quorum=True)
    bootstrap_nodes = [cluster.node(i) for i in (1, 2, 3)]
    _voters, _observers, leader = wait_for(
        lambda: voters_and_observers(bootstrap_nodes[0].bootstrap), 30, "the quorum"
    )
    fourth = cluster.add_controller(4)
    wait_for(
        lambda: (answer := voters_and_observers(bootstrap_nodes[0].bootstrap)) and 4 in answer[1],
        30,
        "controller 4 as an observer",
    )
    directory_4 = directory_of(fourth)
    ask_through = next(n for n in bootstrap_nodes if n.node_id != leader)
    outcome: list[tuple[ErrorCode, str | None]] = []
    adding = threading.Thread(
        target=lambda: outcome.append(
            add_voter(ask_through.bootstrap, 4, directory_4, fourth.controller_port or 0)
        )
    )
    adding.start()
    time.sleep(0.05)
    cluster.node(leader).kill9()
    adding.join(40)
    cluster.node(leader).start()

    # Whatever the answer was, the controllers converge on one set: with 4 (committed) or without.
    def agreed() -> list[int] | None:
        views = [controller_view(cluster.node(i).controller_port or 0) for i in (1, 2, 3, 4)]
        sets = {tuple(v["voters"]) for v in views}
        leaders = {v["leader_id"] for v in views}
        if len(sets) == 1 and len(leaders) == 1 and None not in leaders:
            return list(sets.pop())
        return None

    final = wait_for(agreed, 30, "one voter set on every controller")
    assert final in ([1, 2, 3], [1, 2, 3, 4])
    if outcome and outcome[0][0] == ErrorCode.none:
        assert final == [1, 2, 3, 4], "an acknowledged change is never lost"
    create_topic(cluster, "after-the-kill")


def finalized_kraft_version(bootstrap: str) -> int:
    """kraft.version as ApiVersions v4 lists it finalized (0 when not listed, as Kafka)."""
    with WireClient(bootstrap) as client:
        response = client.request(
            ApiVersionsRequest(client_software_name="quorum-test", client_software_version="1")
        )
    levels = {key.name: int(key.max_version_level) for key in response.finalized_features}
    return levels.get("kraft.version", 0)


def test_a_static_quorum_refuses_voter_changes(cluster_factory: Callable[..., LocalCluster]) -> None:
    cluster = cluster_factory(3)
    error, message = add_voter(cluster.node(1).bootstrap, 4, uuid.uuid4(), 1)
    assert error == ErrorCode.unsupported_version, message
    error, message = remove_voter(cluster.node(1).bootstrap, 1, ZERO)
    assert error == ErrorCode.unsupported_version, message
    answer = voters_and_observers(cluster.node(1).bootstrap)
    assert answer is not None
    assert answer[0] == {1: None, 2: None, 3: None}, "a static voter has no directory id (the zero uuid)"
    assert finalized_kraft_version(cluster.node(1).bootstrap) == 0


def test_a_voter_restarted_on_another_endpoint_updates_the_voter_set(
    cluster_factory: Callable[..., LocalCluster],
) -> None:
    cluster = cluster_factory(3, dynamic_quorum=True)
    bootstrap = cluster.node(1).bootstrap
    _voters, _observers, leader = wait_for(lambda: voters_and_observers(bootstrap), 30, "the quorum")
    moving = cluster.node(next(i for i in (1, 2, 3) if i != leader))
    moving.stop()
    old_port, new_port = moving.controller_port, free_port()
    moving.properties["listeners"] = moving.properties["listeners"].replace(f":{old_port}", f":{new_port}")
    moving.controller_port = new_port
    moving.start()

    def recorded() -> bool:
        view = controller_view(cluster.node(leader).controller_port or 0)
        return view["voter_addresses"].get(str(moving.node_id)) == ["127.0.0.1", new_port]

    wait_for(recorded, 30, "the leader to record the new endpoint (UpdateRaftVoter)")
    # The moved voter follows the leader again: it holds the newest commits.
    create_topic(cluster, "after-the-move")
    leader_view = controller_view(cluster.node(leader).controller_port or 0)
    wait_for(
        lambda: controller_view(new_port)["applied_offset"] >= leader_view["applied_offset"],
        15,
        "the moved voter to catch up",
    )


def test_a_wiped_voter_comes_back_as_an_observer_and_is_replaced_by_id_and_directory(
    cluster_factory: Callable[..., LocalCluster],
) -> None:
    cluster = cluster_factory(3, dynamic_quorum=True)
    bootstrap = cluster.node(1).bootstrap
    _voters, _observers, leader = wait_for(lambda: voters_and_observers(bootstrap), 30, "the quorum")
    wiped = cluster.node(next(i for i in (1, 2, 3) if i != leader))
    old_directory = directory_of(wiped)
    wiped.kill9()
    shutil.rmtree(wiped.data_dir / "logs" / "__cluster_metadata")
    wiped.format("--no-initial-controllers")
    new_directory = directory_of(wiped)
    assert new_directory != old_directory
    wiped.start()
    assert wiped.controller_port is not None
    port = wiped.controller_port

    # It lost the log it voted with: it is not that voter (frames for the old directory are dropped).
    view = wait_for(
        lambda: (v := controller_view(port))["applied_offset"] > 0 and v, 30, "the wiped node to catch up"
    )
    assert wiped.node_id in view["voters"]
    assert view["voter_directories"][str(wiped.node_id)] == str(old_directory)
    leader_port = cluster.node(leader).controller_port or 0
    create_topic(cluster, "while-wiped")
    committed = controller_view(leader_port)["commit_index"]
    # It holds the log again (it pulls as an observer), but the leader counts none of its answers: the
    # voter 3 it knows is the old directory, which holds nothing since the wipe.
    wait_for(
        lambda: controller_view(port)["applied_offset"] >= committed, 30, "the wiped node to hold the log"
    )
    time.sleep(1.0)
    progress = {p["node_id"]: p for p in controller_view(leader_port)["voter_progress"]}
    assert progress[wiped.node_id]["log_end_offset"] < committed

    error, message = add_voter(bootstrap, wiped.node_id, new_directory, port)
    assert error == ErrorCode.duplicate_voter, message
    error, message = remove_voter(bootstrap, wiped.node_id, new_directory)
    assert error == ErrorCode.voter_not_found, message
    error, message = remove_voter(bootstrap, wiped.node_id, old_directory)
    assert error == ErrorCode.none, message
    deadline = time.monotonic() + 30
    while (outcome := add_voter(bootstrap, wiped.node_id, new_directory, port))[
        0
    ] == ErrorCode.request_timed_out:
        assert time.monotonic() < deadline, outcome
        time.sleep(0.5)
    assert outcome[0] == ErrorCode.none, outcome
    voters, _observers, _leader = wait_for(
        lambda: (answer := voters_and_observers(bootstrap)) and len(answer[0]) == 3 and answer,
        15,
        "three voters",
    )
    assert voters[wiped.node_id] == new_directory
    create_topic(cluster, "after-the-wipe")
