"""ReplicaManager with a real broker state and real logs, requests through the dispatcher (no sockets).

Followers are played by the test: it sends the Fetch requests a follower would (replica_id >= 0) and
appends what it gets to a second log, as the replica fetcher does.
"""

from __future__ import annotations

import asyncio
import datetime
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12 import request as fetch_v12
from kio.schema.produce.v9 import request as produce_v9
from kio.static.primitive import i16, i32, i32Timedelta, i64

from broker.config import BrokerConfig
from broker.controller.api import BrokerRegistration, Endpoint, PartitionAssignment
from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog
from broker.replication import manager as replication_manager
from broker.replication.config import ReplicationConfig
from broker.replication.manager import ReplicaManager
from broker.server.app import close_broker_state, open_broker_state
from broker.server.dispatcher import Peer, dispatch
from broker.wire.frames import decode_response, encode_request
from tests.fixtures.static_assignments import StaticAlterPartitions, static_topic_id
from tests.unit.broker.log.helpers import NOW_MS, batch_of

TOPIC = "orders"
PEER = Peer("127.0.0.1", 40000, "PLAINTEXT")
LAG_MS = 200


def assignment(**changes: Any) -> PartitionAssignment:
    values: dict[str, Any] = {
        "topic": TOPIC,
        "partition": 0,
        "topic_id": static_topic_id(TOPIC),
        "leader": 1,
        "leader_epoch": 0,
        "partition_epoch": 0,
        "replicas": (1, 2, 3),
        "isr": (1, 2, 3),
        **changes,
    }
    return PartitionAssignment(**values)


class Node:
    """Broker 1's state and ReplicaManager on a private event loop."""

    def __init__(self, directory: Path, min_insync: int, leader_throttle: int | None = None) -> None:
        self.loop = asyncio.new_event_loop()
        config = BrokerConfig.from_properties(
            {
                "node.id": "1",
                "log.dirs": str(directory / "broker-1"),
                "offsets.topic.num.partitions": "1",
                "min.insync.replicas": str(min_insync),
            }
        )
        # Opened, never joined: the manager under test, fed static assignments, is its partition layer.
        self.state = self.loop.run_until_complete(open_broker_state(config))
        self.manager = ReplicaManager(
            ReplicationConfig(
                node_id=1, replica_lag_time_max_ms=LAG_MS, leader_replication_throttled_rate=leader_throttle
            ),
            logs=self.state.logs,
            metadata=self.state.metadata,
            log_config=self.state.topics.log_config,
            broker_epoch=lambda: 1,
        )
        self.manager.alter_partitions.sender = StaticAlterPartitions(self.manager)
        self.state.replication = self.manager
        self.correlation_id = 0

    def send(self, body: Any) -> Any:
        return self.loop.run_until_complete(self.send_async(body))

    async def send_async(self, body: Any) -> Any:
        self.correlation_id += 1
        correlation_id = self.correlation_id
        frame = encode_request(body, correlation_id, "unit")[4:]
        chunks = await dispatch(self.state, PEER, frame)
        assert chunks is not None
        raw = b"".join(bytes(chunk) for chunk in chunks)[4:]
        return decode_response(raw, int(body.__api_key__), int(body.__version__), correlation_id)

    def settle(self) -> None:
        self.loop.run_until_complete(asyncio.sleep(0.01))

    @property
    def log(self) -> PartitionLog:
        partition_log = self.state.logs.get(TOPIC, 0)
        assert partition_log is not None
        return partition_log

    def close(self) -> None:
        self.loop.run_until_complete(self.manager.close())
        self.loop.run_until_complete(close_broker_state(self.state))
        self.loop.close()


@pytest.fixture
def node(tmp_path: Path) -> Iterator[Node]:
    node = Node(tmp_path, min_insync=2)
    yield node
    node.close()


def produce_request(values: list[bytes], acks: int = -1, timeout_ms: int = 5_000) -> Any:
    return produce_v9.ProduceRequest(
        transactional_id=None,
        acks=i16(acks),
        timeout=i32Timedelta.parse(datetime.timedelta(milliseconds=timeout_ms)),
        topic_data=(
            produce_v9.TopicProduceData(
                name=TOPIC,
                partition_data=(produce_v9.PartitionProduceData(index=i32(0), records=batch_of(*values)),),
            ),
        ),
    )


def fetch_request(offset: int, replica_id: int, epoch: int = -1) -> Any:
    return fetch_v12.FetchRequest(
        cluster_id=None,
        replica_id=i32(replica_id),
        max_wait=i32Timedelta.parse(datetime.timedelta(milliseconds=0)),
        min_bytes=i32(0),
        max_bytes=i32(1 << 20),
        isolation_level=0,
        session_id=i32(0),
        session_epoch=i32(-1),
        topics=(
            fetch_v12.FetchTopic(
                topic=TOPIC,
                partitions=(
                    fetch_v12.FetchPartition(
                        partition=i32(0),
                        current_leader_epoch=i32(epoch),
                        fetch_offset=i64(offset),
                        last_fetched_epoch=i32(-1),
                        log_start_offset=i64(-1),
                        partition_max_bytes=i32(1 << 20),
                    ),
                ),
            ),
        ),
        forgotten_topics_data=(),
        rack_id="",
    )


def produce_error(response: Any) -> ErrorCode:
    return response.responses[0].partition_responses[0].error_code


def fetched(response: Any) -> Any:
    return response.responses[0].partitions[0]


def follower_log(tmp_path: Path, node_id: int) -> PartitionLog:
    return PartitionLog.open(
        tmp_path / f"follower-{node_id}", LogConfig.from_properties({}), topic=TOPIC, partition=0
    )


def test_the_leader_moves_the_high_watermark_as_followers_fetch(node: Node, tmp_path: Path) -> None:
    node.manager.on_image_loaded([assignment()], [])
    node.send(produce_request([b"a", b"b", b"c"], acks=1))
    assert node.log.log_end_offset == 3
    assert node.log.high_watermark == 0
    followers = {2: follower_log(tmp_path, 2), 3: follower_log(tmp_path, 3)}
    for replica_id, copy in followers.items():
        answer = fetched(node.send(fetch_request(copy.log_end_offset, replica_id)))
        copy.append_as_follower(answer.records)
    assert node.log.high_watermark == 0  # the followers have not yet said they hold the records
    node.send(fetch_request(3, 2))
    assert node.log.high_watermark == 0
    answer = fetched(node.send(fetch_request(3, 3)))
    assert node.log.high_watermark == 3
    assert answer.high_watermark == 3
    assert followers[2].read(0, 1 << 20) == node.log.read(0, 1 << 20)


def test_consumers_read_only_up_to_the_high_watermark(node: Node) -> None:
    node.manager.on_image_loaded([assignment()], [])
    node.send(produce_request([b"a", b"b"], acks=1))
    node.send(fetch_request(2, 2))
    node.send(fetch_request(1, 3))
    assert node.log.high_watermark == 1
    answer = fetched(node.send(fetch_request(0, -1)))
    assert answer.high_watermark == 1
    assert len(answer.records) < len(node.log.read(0, 1 << 20))
    follower_answer = fetched(node.send(fetch_request(0, 3)))
    assert follower_answer.records == node.log.read(0, 1 << 20)  # followers read to the log end


def test_acks_all_waits_until_the_isr_has_the_batch(node: Node) -> None:
    node.manager.on_image_loaded([assignment(isr=(1, 2))], [])

    async def scenario() -> Any:
        pending = asyncio.ensure_future(node.send_async(produce_request([b"x"])))
        await asyncio.sleep(0.05)
        assert not pending.done()
        await node.send_async(fetch_request(1, 2))
        return await asyncio.wait_for(pending, 2)

    response = node.loop.run_until_complete(scenario())
    assert produce_error(response) == ErrorCode.none
    assert response.responses[0].partition_responses[0].base_offset == 0


def test_acks_all_times_out_when_the_isr_never_catches_up(node: Node) -> None:
    node.manager.on_image_loaded([assignment(isr=(1, 2))], [])
    response = node.send(produce_request([b"x"], timeout_ms=100))
    assert produce_error(response) == ErrorCode.request_timed_out


def test_acks_all_is_refused_before_appending_when_the_isr_is_below_min_insync(node: Node) -> None:
    node.manager.on_image_loaded([assignment(isr=(1,))], [])
    response = node.send(produce_request([b"x"]))
    assert produce_error(response) == ErrorCode.not_enough_replicas
    assert node.log.log_end_offset == 0
    assert produce_error(node.send(produce_request([b"x"], acks=1))) == ErrorCode.none


def test_acks_all_fails_after_append_when_the_isr_shrinks_below_min_insync_meanwhile(node: Node) -> None:
    node.manager.on_image_loaded([assignment(isr=(1, 2))], [])

    async def scenario() -> Any:
        pending = asyncio.ensure_future(node.send_async(produce_request([b"x"], timeout_ms=5_000)))
        await asyncio.sleep(LAG_MS * 2 / 1000)
        node.manager.shrink_lagging_isrs()  # follower 2 never fetched
        return await asyncio.wait_for(pending, 2)

    response = node.loop.run_until_complete(scenario())
    assert produce_error(response) == ErrorCode.not_enough_replicas_after_append
    assert node.manager.isr_of(TOPIC, 0) == (1,)
    assert node.manager.assignment(TOPIC, 0).partition_epoch == 1


def test_a_caught_up_follower_rejoins_the_isr_and_the_partition_epoch_is_bumped(node: Node) -> None:
    node.manager.on_image_loaded([assignment(isr=(1, 2))], [])
    node.send(produce_request([b"a"], acks=1))
    node.send(fetch_request(1, 2))
    node.send(fetch_request(0, 3))
    node.settle()
    assert node.manager.isr_of(TOPIC, 0) == (1, 2)
    node.send(fetch_request(1, 3))
    node.settle()
    assert node.manager.isr_of(TOPIC, 0) == (1, 2, 3)
    assert node.manager.assignment(TOPIC, 0).partition_epoch == 1


def test_a_caught_up_follower_that_is_fenced_or_shutting_down_is_not_proposed_for_the_isr(node: Node) -> None:
    brokers = [registration(1), registration(2), registration(3, in_controlled_shutdown=True)]
    node.manager.on_image_loaded([assignment(isr=(1, 2))], brokers)
    node.send(produce_request([b"a"], acks=1))
    node.send(fetch_request(1, 2))
    node.send(fetch_request(1, 3))
    node.settle()
    assert node.manager.isr_of(TOPIC, 0) == (1, 2)

    node.manager.on_broker_changed(registration(3))
    node.send(fetch_request(1, 3))
    node.settle()
    assert node.manager.isr_of(TOPIC, 0) == (1, 2, 3)


def registration(broker_id: int, *, in_controlled_shutdown: bool = False) -> BrokerRegistration:
    endpoint = Endpoint("PLAINTEXT", "127.0.0.1", 9090 + broker_id)
    return BrokerRegistration(
        broker_id, uuid.uuid4(), 1, (endpoint,), fenced=False, in_controlled_shutdown=in_controlled_shutdown
    )


def test_clients_are_told_who_leads_and_are_fenced_by_leader_epoch(node: Node) -> None:
    node.manager.on_image_loaded([assignment(leader=2, leader_epoch=4)], [])
    assert produce_error(node.send(produce_request([b"x"], acks=1))) == ErrorCode.not_leader_or_follower
    assert fetched(node.send(fetch_request(0, -1))).error_code == ErrorCode.not_leader_or_follower
    node.manager.on_partition_changed(None, assignment(leader=1, leader_epoch=5))
    assert fetched(node.send(fetch_request(0, -1, epoch=4))).error_code == ErrorCode.fenced_leader_epoch
    assert fetched(node.send(fetch_request(0, -1, epoch=6))).error_code == ErrorCode.unknown_leader_epoch
    assert fetched(node.send(fetch_request(0, -1, epoch=5))).error_code == ErrorCode.none


def test_assignments_are_idempotent_by_leader_epoch(node: Node) -> None:
    node.manager.on_image_loaded([assignment(leader_epoch=3)], [])
    node.send(produce_request([b"a"], acks=1))
    assert node.log.leader_epochs.latest_epoch == 3
    node.manager.on_partition_changed(None, assignment(leader=2, leader_epoch=2))  # stale: ignored
    assert node.manager.leader_partition(TOPIC, 0)[1] == ErrorCode.none
    node.manager.on_partition_changed(None, assignment(leader_epoch=3, partition_epoch=1, isr=(1, 2)))
    partition, _ = node.manager.leader_partition(TOPIC, 0)
    assert partition is not None
    assert partition.isr == (1, 2)


def test_losing_leadership_fails_waiting_produce_requests(node: Node) -> None:
    node.manager.on_image_loaded([assignment(isr=(1, 2))], [])

    async def scenario() -> Any:
        pending = asyncio.ensure_future(node.send_async(produce_request([b"x"])))
        await asyncio.sleep(0.05)
        node.manager.on_partition_changed(None, assignment(leader=2, leader_epoch=1))
        return await asyncio.wait_for(pending, 2)

    assert produce_error(node.loop.run_until_complete(scenario())) == ErrorCode.not_leader_or_follower


def test_a_partition_is_one_object_whichever_way_it_is_looked_up_and_led(node: Node) -> None:
    """Handlers, the fetcher and the ISR sweeps see the same Partition; one held across a leadership
    move refuses to append to what is now a follower's log."""
    node.manager.on_image_loaded([assignment(isr=(1, 2))], [])
    held, _ = node.state.partitions.leader(TOPIC, 0)
    assert held is not None
    assert held is node.manager.partitions[(TOPIC, 0)] is node.manager.hosted(TOPIC, 0)
    node.manager.on_partition_changed(None, assignment(leader=2, leader_epoch=1))
    assert node.state.partitions.leader(TOPIC, 0) == (None, ErrorCode.not_leader_or_follower)
    assert held.append(batch_of(b"late"), acks=1).error == ErrorCode.not_leader_or_follower
    assert node.log.log_end_offset == 0
    node.manager.on_partition_changed(None, assignment(leader_epoch=2, isr=(1, 2)))
    assert node.state.partitions.leader(TOPIC, 0) == (held, ErrorCode.none)


def test_a_new_leader_starts_its_epoch_at_its_log_end(node: Node) -> None:
    node.manager.on_image_loaded([assignment(leader=2, leader_epoch=0)], [])
    node.log.append_as_follower(node_batches(node, [b"a", b"b"]))
    node.manager.on_partition_changed(None, assignment(leader=1, leader_epoch=1))
    assert node.log.end_offset_for_leader_epoch(0) == (0, 2)
    assert node.log.end_offset_for_leader_epoch(1) == (1, 2)


def node_batches(node: Node, values: list[bytes]) -> bytes:
    """A batch as a leader would have written it: offsets from 0, leader epoch 0."""
    other = PartitionLog.open(
        node.log.directory.parent / f"other-{uuid.uuid4()}",
        LogConfig.from_properties({}),
        topic=TOPIC,
        partition=0,
    )
    other.append_as_leader(batch_of(*values), leader_epoch=0, now_ms=NOW_MS)
    data = other.read(0, 1 << 20)
    other.close()
    return data


def test_a_partition_without_this_broker_among_its_replicas_is_not_hosted(node: Node) -> None:
    node.manager.on_image_loaded([assignment(leader=2, replicas=(2, 3), isr=(2, 3))], [])
    assert node.manager.partitions == {}
    assert produce_error(node.send(produce_request([b"x"], acks=1))) == ErrorCode.not_leader_or_follower


def test_the_leader_throttles_only_followers_outside_the_isr(tmp_path: Path) -> None:
    node = Node(tmp_path, min_insync=1, leader_throttle=100)
    try:
        node.manager.on_image_loaded([assignment(isr=(1, 2))], [])
        for _ in range(30):
            node.send(produce_request([b"x" * 100], acks=1))
        everything = len(node.log.read(0, 1 << 30))
        assert len(fetched(node.send(fetch_request(0, 2))).records) == everything  # in the ISR
        node.send(fetch_request(30, 2))
        assert node.log.high_watermark == 30
        catching_up = fetched(node.send(fetch_request(0, 3))).records
        # 100 B/s measured over 11 one-second windows: a burst of about ten windows, then nothing.
        assert 0 < len(catching_up) <= 1_200
        assert fetched(node.send(fetch_request(10, 3))).records == b""
    finally:
        node.close()


def test_metadata_reports_leader_replicas_isr_and_offline_replicas(node: Node) -> None:
    from kio.schema.metadata.v12 import request as metadata_v12

    from broker.controller.api import BrokerRegistration, Endpoint

    brokers = [
        BrokerRegistration(b, uuid.uuid4(), 0, (Endpoint("PLAINTEXT", "127.0.0.1", 9090 + b),), fenced=b == 3)
        for b in (1, 2, 3)
    ]
    node.manager.on_image_loaded([assignment(leader=2, leader_epoch=7, isr=(1, 2))], brokers)
    request = metadata_v12.MetadataRequest(
        topics=(metadata_v12.MetadataRequestTopic(topic_id=None, name=TOPIC),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    response = node.send(request)
    assert sorted(b.node_id for b in response.brokers) == [1, 2]  # broker 3 is fenced
    partition = response.topics[0].partitions[0]
    assert (partition.leader_id, partition.leader_epoch) == (2, 7)
    assert (list(partition.replica_nodes), list(partition.isr_nodes)) == ([1, 2, 3], [1, 2])
    assert list(partition.offline_replicas) == [3]
    assert response.topics[0].topic_id == static_topic_id(TOPIC)


def test_metadata_leaves_out_this_broker_while_the_controller_has_it_fenced(node: Node) -> None:
    from kio.schema.metadata.v12 import request as metadata_v12

    # A broker serves as soon as its image holds its registration, before the controller unfences it;
    # counting it then would let a client or the control plane expect replicas it cannot have yet.
    fenced_self = replace(registration(1), fenced=True)
    node.manager.on_image_loaded([], [fenced_self, registration(2), registration(3)])
    request = metadata_v12.MetadataRequest(
        topics=(), allow_auto_topic_creation=False, include_topic_authorized_operations=False
    )
    assert [b.node_id for b in node.send(request).brokers] == [2, 3]

    node.manager.on_broker_changed(registration(1))
    assert [b.node_id for b in node.send(request).brokers] == [1, 2, 3]


def test_a_new_image_replaces_partitions_and_brokers_it_no_longer_lists(node: Node) -> None:
    from broker.controller.api import BrokerRegistration, Endpoint

    old_broker = BrokerRegistration(
        9, uuid.uuid4(), 0, (Endpoint("PLAINTEXT", "127.0.0.1", 9099),), fenced=False
    )
    node.manager.on_image_loaded([assignment()], [old_broker])
    assert node.manager.assignment(TOPIC, 0) is not None
    node.manager.on_image_loaded([], [])
    assert node.manager.brokers == {}
    assert node.manager.partitions == {}
    # Not served as a single-node topic either, although its registry entry and log remain here.
    assert produce_error(node.send(produce_request([b"x"], acks=1))) == ErrorCode.unknown_topic_or_partition


class SlowAlterPartitions:
    """A controller whose AlterPartitions answer arrives only when the test releases it."""

    def __init__(self, manager: ReplicaManager) -> None:
        self.accepting = StaticAlterPartitions(manager)
        self.release = asyncio.Event()

    async def alter_partitions(self, requests: Any) -> Any:
        results = await self.accepting.alter_partitions(requests)
        await self.release.wait()
        return results


def test_a_late_alter_partition_answer_does_not_undo_a_newer_committed_isr(node: Node) -> None:
    # The leader proposes 3 back into the ISR; before the answer arrives the metadata log brings a newer
    # state of the partition (the controller fenced broker 2, same leader epoch). The answer is older.
    node.manager.on_image_loaded([assignment(isr=(1, 2))], [])
    slow = SlowAlterPartitions(node.manager)
    node.manager.alter_partitions.sender = slow
    node.send(produce_request([b"a"], acks=1))
    node.send(fetch_request(1, 3))
    node.settle()
    node.manager.on_partition_changed(None, assignment(isr=(1,), partition_epoch=2))
    slow.release.set()
    node.settle()
    assert node.manager.isr_of(TOPIC, 0) == (1,)
    assert node.manager.assignment(TOPIC, 0).partition_epoch == 2


def test_a_leader_takes_the_committed_isr_where_its_own_disagrees(node: Node) -> None:
    committed = {(TOPIC, 0): assignment(isr=(1, 2), partition_epoch=4)}
    node.manager.committed_assignment = lambda topic, partition: committed.get((topic, partition))
    # The leader's view is older than the log (its answer was lost, an update was missed).
    node.manager.on_image_loaded([assignment(isr=(1, 2, 3), partition_epoch=3)], [])
    node.manager.reconcile_with_committed()
    assert node.manager.isr_of(TOPIC, 0) == (1, 2)
    assert node.manager.assignment(TOPIC, 0).partition_epoch == 4
    # An AlterPartition answer newer than this broker's image (the image catches up later) is kept.
    node.manager.on_partition_changed(None, assignment(isr=(1, 2, 3), partition_epoch=5))
    node.manager.reconcile_with_committed()
    assert node.manager.isr_of(TOPIC, 0) == (1, 2, 3)
    # Another leader epoch in the log is the metadata follower's business, not reconciliation's.
    committed[(TOPIC, 0)] = assignment(leader=2, leader_epoch=1, isr=(2, 3), partition_epoch=6)
    node.manager.reconcile_with_committed()
    assert node.manager.leader_partition(TOPIC, 0)[1] == ErrorCode.none


def test_the_high_watermark_checkpoint_is_one_file_per_log_dir_in_kafkas_format(tmp_path: Path) -> None:
    node = Node(tmp_path, min_insync=2)
    node.manager.on_image_loaded([assignment()], [])
    node.send(produce_request([b"a", b"b", b"c"], acks=1))
    node.send(fetch_request(2, 2))
    node.send(fetch_request(2, 3))
    assert node.log.high_watermark == 2
    node.manager.checkpoint()
    log_dir = tmp_path / "broker-1"
    # Kafka's replication-offset-checkpoint: version, count, "topic partition offset" lines.
    lines = (log_dir / "replication-offset-checkpoint").read_text().splitlines()
    assert lines[0] == "0"
    assert f"{TOPIC} 0 2" in lines[2:]
    assert int(lines[1]) == len(lines) - 2
    assert not (log_dir / f"{TOPIC}-0" / "high-watermark-checkpoint").exists()
    assert node.state.logs.stored_high_watermark(TOPIC, 0) == 2
    node.close()


def test_reconciliation_looks_only_at_leaders_an_event_touched_between_sweeps(
    node: Node, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[str, int]] = []

    def committed(topic: str, partition: int) -> PartitionAssignment | None:
        asked.append((topic, partition))
        return held.get((topic, partition))

    node.manager.committed_assignment = committed
    held = {(TOPIC, p): assignment(partition=p) for p in range(20)}
    followed = [assignment(partition=p, leader=2) for p in range(20, 30)]
    node.manager.on_image_loaded([*held.values(), *followed], [])
    node.manager.reconcile_with_committed()
    assert sorted(asked) == sorted(held)  # a new image: every leader, never a follower
    asked.clear()
    node.manager.reconcile_with_committed()
    assert asked == []  # nothing happened since
    # The controller committed ISR (1, 2) for partition 3; this broker missed it (no event).
    held[(TOPIC, 3)] = assignment(partition=3, isr=(1, 2), partition_epoch=1)
    node.manager.reconcile_with_committed()
    assert node.manager.isr_of(TOPIC, 3) == (1, 2, 3)
    monkeypatch.setattr(
        replication_manager, "ISR_RECONCILE_SWEEP_S", 0.0
    )  # the sweep over every leader is due
    node.manager.reconcile_with_committed()
    assert node.manager.isr_of(TOPIC, 3) == (1, 2)


def test_metadata_after_one_partitions_isr_changes_shows_the_change_and_only_it(node: Node) -> None:
    from kio.schema.metadata.v12 import request as metadata_v12

    node.manager.on_image_loaded([assignment(partition=p, leader=2, isr=(1, 2, 3)) for p in range(50)], [])
    request = metadata_v12.MetadataRequest(
        topics=(metadata_v12.MetadataRequestTopic(topic_id=None, name=TOPIC),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )

    def isrs() -> list[list[int]]:
        partitions = sorted(node.send(request).topics[0].partitions, key=lambda p: p.partition_index)
        return [list(partition.isr_nodes) for partition in partitions]

    assert isrs() == [[1, 2, 3]] * 50
    # Each partition's encoded entry is reused while its state is unchanged (the topic's is not).
    node.manager.on_partition_changed(None, assignment(partition=17, leader=2, isr=(2, 3), partition_epoch=1))
    assert isrs() == [[1, 2, 3]] * 17 + [[2, 3]] + [[1, 2, 3]] * 32
