"""Controller servers in this process over real sockets: snapshots (a late broker and a restarted
controller rebuild the metadata), AlterPartition through the client, duplicate broker ids, bad input."""

from __future__ import annotations

import asyncio
import contextlib
import struct
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from kio.schema.errors import ErrorCode

from broker.controller.api import (
    AlterPartitionRequest,
    BrokerRegistration,
    Endpoint,
    PartitionAssignment,
    TopicConfigChange,
)
from broker.controller.broker_lifecycle import BrokerLifecycle
from broker.controller.client import ControllerClient, RpcChannel
from broker.controller.decisions import ControllerSettings
from broker.controller.image import MetadataImage
from broker.controller.quorum_driver import ControllerNodeConfig
from broker.controller.rpc.admin import AlterConfigsRequest, CreateTopicsRequest, NewTopic
from broker.controller.rpc.base import Request
from broker.controller.rpc.brokers import BrokerHeartbeatRequest, FetchMetadataRequest, RegisterBrokerRequest
from broker.controller.rpc.catalog import VERSIONS
from broker.controller.rpc.quorum import DescribeQuorumRequest
from broker.controller.server import ControllerServer
from broker.raft.node import RaftTimings
from broker.raft.wire import encode_frame, read_frame
from broker.replication.alter_partition import AlterPartitionManager
from tests.fixtures.broker import free_port

pytestmark = pytest.mark.integration

SNAPSHOT_EVERY = 5


def node_config(node_id: int, voters: dict[int, tuple[str, int]], base: Path) -> ControllerNodeConfig:
    return ControllerNodeConfig(
        node_id=node_id,
        voters=voters,
        metadata_dir=base / f"controller-{node_id}",
        listen_host="127.0.0.1",
        listen_port=voters[node_id][1],
        settings=ControllerSettings(session_timeout_s=30.0),
        timings=RaftTimings(election_timeout_s=0.3, heartbeat_interval_s=0.03),
        snapshot_every_entries=SNAPSHOT_EVERY,
    )


class ImageListener:
    """Counts what a broker's listener is told, to see the snapshot path was taken."""

    def __init__(self) -> None:
        self.loaded: list[int] = []
        self.partitions: dict[tuple[str, int], PartitionAssignment] = {}

    def on_image_loaded(
        self, partitions: list[PartitionAssignment], brokers: list[BrokerRegistration]
    ) -> None:
        self.loaded.append(len(partitions))
        self.partitions = {(p.topic, p.partition): p for p in partitions}

    def on_partition_changed(
        self, previous: PartitionAssignment | None, current: PartitionAssignment
    ) -> None:
        self.partitions[(current.topic, current.partition)] = current

    def on_partition_removed(self, previous: PartitionAssignment) -> None:
        self.partitions.pop((previous.topic, previous.partition), None)

    def on_topic_configs_changed(self, change: TopicConfigChange) -> None:
        pass

    def on_broker_configs_changed(self, resource_name: str, configs: object) -> None:
        pass  # the cluster-wide min.insync.replicas default the first registration records

    def on_broker_changed(self, broker: BrokerRegistration) -> None:
        pass

    def on_security_records(self, records: list[dict[str, Any]]) -> None:
        pass


async def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def summary(image: MetadataImage) -> tuple[Any, ...]:
    return (
        image.offset,
        sorted((p.topic, p.partition, p.leader, p.isr) for p in image.partitions()),
        {t.name: t.configs for t in image.topics.values()},
        sorted(image.brokers),
    )


async def raw_call(port: int, frame: dict[str, Any]) -> dict[str, Any]:
    """One frame as any peer could send it (the typed client cannot send a malformed one)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(encode_frame(frame))
        await writer.drain()
        return await read_frame(reader)
    finally:
        writer.close()


@contextlib.asynccontextmanager
async def single_controller(base: Path) -> AsyncIterator[tuple[ControllerServer, ControllerClient]]:
    """A one-voter quorum (it elects itself at once) and a client for it."""
    voters = {1: ("127.0.0.1", free_port())}
    server = ControllerServer(node_config(1, voters, base))
    await server.start()
    client = ControllerClient(voters)
    try:
        yield server, client
    finally:
        client.close()
        await server.stop()


def test_a_late_broker_and_a_restarted_controller_rebuild_metadata_from_a_snapshot(tmp_path: Path) -> None:
    async def scenario() -> None:
        voters = {i: ("127.0.0.1", free_port()) for i in (1, 2, 3)}
        servers = {i: ControllerServer(node_config(i, voters, tmp_path)) for i in voters}
        for server in servers.values():
            await server.start()
        client = ControllerClient(voters, request_timeout_s=10)
        first = BrokerLifecycle(
            ControllerClient(voters), 1, [Endpoint("PLAINTEXT", "127.0.0.1", 1)], "a", 0.2
        )
        await first.start()
        try:
            await wait_for(lambda: not first.fenced, 10, "the broker to be unfenced")
            topics = tuple(NewTopic(f"topic-{i}", 2, 1) for i in range(4))
            reply = await client.call(CreateTopicsRequest(topics))
            assert [r.error_code for r in reply.answer().results] == [0, 0, 0, 0]
            for i in range(8):
                change = AlterConfigsRequest("topic", "topic-0", {"retention.ms": str(i)})
                assert (await client.call(change)).error_code == 0

            leader_id = client.leader_id
            assert leader_id is not None
            leader = servers[leader_id]
            assert leader.node is not None
            assert leader.node.snapshot.last_index > 0, "no snapshot was taken"
            assert len(leader.node.log) < leader.image.offset, "compaction kept the whole log"

            listener = ImageListener()
            late = BrokerLifecycle(ControllerClient(voters), 2, [], None, 0.2, listeners=[listener])
            await late.start()
            await wait_for(
                lambda: late.image.offset >= leader.image.offset, 10, "the late broker to catch up"
            )
            assert any(offset > 0 for offset in listener.loaded), (
                "the late broker did not start from a snapshot"
            )
            assert summary(late.image)[1:3] == summary(leader.image)[1:3]
            assert len(listener.partitions) == 8
            await late.close()

            follower_id = next(i for i in voters if i != leader_id)
            await servers[follower_id].stop()
            restarted = ControllerServer(node_config(follower_id, voters, tmp_path))
            servers[follower_id] = restarted
            await restarted.start()
            await wait_for(
                lambda: restarted.image.offset >= leader.image.offset, 10, "the restarted controller"
            )
            assert summary(restarted.image)[1:] == summary(leader.image)[1:]
            assert restarted.image.topic_by_name("topic-0").configs == {"retention.ms": "7"}  # type: ignore[union-attr]
        finally:
            await first.close()
            client.close()
            for server in servers.values():
                await server.stop()

    asyncio.run(scenario())


def test_two_processes_with_one_broker_id_cannot_both_register(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with single_controller(tmp_path) as (_, client):
            first = await client.call(RegisterBrokerRequest(5, str(uuid.uuid4()), ()))
            epoch = first.answer().broker_epoch
            beat = BrokerHeartbeatRequest(5, epoch, epoch)
            assert (await client.call(beat)).answer().is_fenced is False
            second = await client.call(RegisterBrokerRequest(5, str(uuid.uuid4()), ()))
            assert second.error_code == 101  # DUPLICATE_BROKER_REGISTRATION

    asyncio.run(scenario())


def test_the_controller_listener_refuses_bad_input_and_keeps_serving(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with single_controller(tmp_path) as (server, client):
            reader, writer = await asyncio.open_connection("127.0.0.1", server.bound_port)
            writer.write(struct.pack(">I", 5) + b"nope!")  # not JSON: the connection is closed
            await writer.drain()
            assert await reader.read() == b""
            writer.close()

            unknown = await raw_call(server.bound_port, {"t": "rpc", "id": 1, "method": "become_leader"})
            assert unknown["error_code"] == 42  # INVALID_REQUEST
            malformed = {"t": "rpc", "id": 2, "method": "register_broker", "params": {"broker_id": "seven"}}
            assert (await raw_call(server.bound_port, malformed))["error_code"] == 42
            bad_name = await client.call(CreateTopicsRequest((NewTopic("bad/name", 1),)))
            assert bad_name.answer().results[0].error_code == 17  # INVALID_TOPIC_EXCEPTION
            quorum = await client.call(DescribeQuorumRequest())
            assert quorum.answer().role == "leader"

    asyncio.run(scenario())


@contextlib.asynccontextmanager
async def two_brokers(client: ControllerClient) -> AsyncIterator[list[BrokerLifecycle]]:
    """Brokers 1 and 2 registered with the controller and unfenced."""
    brokers = [BrokerLifecycle(ControllerClient(client.voters), i, [], None, 0.2) for i in (1, 2)]
    try:
        for broker in brokers:
            await broker.start()
        await wait_for(lambda: not any(b.fenced for b in brokers), 10, "both brokers to be unfenced")
        yield brokers
    finally:
        for broker in brokers:
            await broker.close()


def test_a_leader_changes_its_isr_through_the_controller_client(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with single_controller(tmp_path) as (server, client), two_brokers(client) as brokers:
            topic = NewTopic("isr", 1, 2)
            assert (await client.call(CreateTopicsRequest((topic,)))).error_code == 0
            p = server.image.partitions()[0]
            leader = next(b for b in brokers if b.broker_id == p.leader)
            assert leader.broker_epoch is not None
            follower = next(b for b in p.replicas if b != p.leader)

            shrink = AlterPartitionRequest(
                p.leader,
                leader.broker_epoch,
                p.topic_id,
                0,
                p.leader_epoch,
                p.partition_epoch,
                (p.leader,),
            )
            (result,) = await client.alter_partitions([shrink])
            assert result.error_code == 0
            assert result.assignment is not None
            assert result.assignment.isr == (p.leader,)
            assert result.assignment.partition_epoch == p.partition_epoch + 1
            # The same (now stale) version again is refused; the leader must use the new one.
            (again,) = await client.alter_partitions([shrink])
            assert again.error_code == 95  # INVALID_UPDATE_VERSION
            expand = replace(
                shrink, partition_epoch=result.assignment.partition_epoch, new_isr=(p.leader, follower)
            )
            (expanded,) = await client.alter_partitions([expand])
            assert expanded.assignment is not None
            assert expanded.assignment.isr == (p.leader, follower)
            # Every broker following the log sees the committed ISR.
            await wait_for(
                lambda: all(b.image.partitions()[0].isr == (p.leader, follower) for b in brokers),
                5,
                "brokers",
            )

    asyncio.run(scenario())


def test_isr_changes_of_many_partitions_go_to_the_controller_in_one_request_per_broker(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with single_controller(tmp_path) as (server, client), two_brokers(client) as brokers:
            topic = NewTopic("many", 40, 2)
            assert (await client.call(CreateTopicsRequest((topic,)))).error_code == 0
            calls: list[str] = []
            sent = client.call

            async def counting_call(request: Request[Any], *args: Any, **kwargs: Any) -> Any:
                calls.append(request.API)
                return await sent(request, *args, **kwargs)

            client.call = counting_call  # type: ignore[method-assign]
            managers = {
                b.broker_id: AlterPartitionManager(client, b.broker_id, lambda b=b: b.broker_epoch)
                for b in brokers
            }
            partitions = server.image.partitions()
            # One partition's proposal is based on a partition epoch the controller never had: only it is refused.
            proposals = [
                (
                    replace(partitions[0], partition_epoch=partitions[0].partition_epoch + 5),
                    (partitions[0].leader,),
                )
            ]
            proposals += [(p, (p.leader,)) for p in partitions[1:]]
            results = await asyncio.gather(
                *(managers[p.leader].submit(p, new_isr) for p, new_isr in proposals)
            )
            assert calls == ["alter_partitions"] * len(brokers)
            assert results[0].error_code == 95  # INVALID_UPDATE_VERSION
            for (p, new_isr), result in zip(proposals[1:], results[1:], strict=True):
                assert result.error_code == 0
                assert result.assignment is not None
                assert result.assignment.partition == p.partition
                assert result.assignment.isr == new_isr
            committed = {p.partition: p.isr for p in server.image.partitions()}
            assert all(committed[p.partition] == new_isr for p, new_isr in proposals[1:])

    asyncio.run(scenario())


@contextlib.asynccontextmanager
async def hung_controller() -> AsyncIterator[tuple[str, int]]:
    """A controller address that accepts connections and never answers (a SIGSTOPped process)."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    try:
        yield "127.0.0.1", server.sockets[0].getsockname()[1]
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()


def test_requests_queued_on_a_hung_controller_move_to_the_new_one(tmp_path: Path) -> None:
    # The broker still believes voter 9 is active; it hangs. Twenty AlterPartitions wait on its
    # connection. The broker's heartbeats give up on it after one interval and find controller 1: every
    # queued request goes there at once, instead of each waiting out its own timeout in turn.
    async def scenario() -> None:
        async with single_controller(tmp_path) as (server, admin), hung_controller() as hung:
            voters = {**admin.voters, 9: hung}
            broker = BrokerLifecycle(ControllerClient(admin.voters), 1, [], None, 0.2)
            await broker.start()
            await wait_for(lambda: not broker.fenced, 10, "the broker to be unfenced")
            topic = NewTopic("many", 20, 1)
            assert (await admin.call(CreateTopicsRequest((topic,)))).error_code == 0
            await broker.close()

            heartbeats = ControllerClient(voters)
            heartbeats.active.observe(9, term=0)  # what it knew before the controller moved
            lifecycle = BrokerLifecycle(heartbeats, 1, [], None, 0.2)
            lifecycle.broker_epoch = server.image.brokers[1].epoch
            alter = heartbeats.sibling()
            requests = [
                AlterPartitionRequest(
                    1,
                    lifecycle.broker_epoch,
                    p.topic_id,
                    p.partition,
                    p.leader_epoch,
                    p.partition_epoch,
                    (1,),
                )
                for p in server.image.partitions()
            ]
            started = asyncio.get_running_loop().time()
            beating = asyncio.create_task(lifecycle._heartbeat_loop())
            try:
                answers = await asyncio.gather(*(alter.alter_partitions([r]) for r in requests))
            finally:
                beating.cancel()
                alter.close()
                heartbeats.close()
            elapsed = asyncio.get_running_loop().time() - started
            assert [result.error_code for (result,) in answers] == [0] * 20
            assert elapsed < 2.0, elapsed
            assert heartbeats.leader_id == 1

    asyncio.run(scenario())


def test_rpc_versions_are_negotiated_and_d32902d_frames_answered_in_their_shape(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with single_controller(tmp_path) as (server, client):
            assert (await client.call(RegisterBrokerRequest(5, str(uuid.uuid4()), ()))).error_code == 0
            port = server.bound_port
            # A version this controller does not speak: refused, with the versions it does.
            newer = {"t": "rpc", "id": 1, "method": "fetch_metadata", "v": 9, "params": {"after_offset": 0}}
            refused = await raw_call(port, newer)
            assert (refused["error_code"], refused["supported"]) == (
                ErrorCode.unsupported_version.value,
                [0, 1],
            )
            # d32902d's frame (no version) asking for decoded records: version 0, answered as d32902d did.
            old = {
                "t": "rpc",
                "id": 2,
                "method": "fetch_metadata",
                "params": {"after_offset": 0, "max_wait_ms": 0},
            }
            answer = await raw_call(port, old)
            assert answer["error_code"] == 0
            assert "snapshot" not in answer["result"]
            entries = answer["result"]["entries"]
            assert all(isinstance(index, int) and isinstance(records, list) for index, records in entries)
            assert {"type": "register_broker", "broker_id": 5}.items() <= entries[-1][1][0].items()
            # Our channel learns the versions on connecting and sends the highest both know.
            channel = RpcChannel("127.0.0.1", port)
            try:
                reply = await channel.call(FetchMetadataRequest(0), 5.0)
            finally:
                channel.close()
            assert channel.versions == VERSIONS
            entries = reply.answer().entries
            assert entries
            assert all(isinstance(stored, str) for _, stored in entries), "version 1 sends stored bytes"

    asyncio.run(scenario())
