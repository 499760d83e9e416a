"""A single node is a cluster of one: the partition layer over its one-voter quorum's image."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from kio.schema.errors import ErrorCode

from broker.context import BrokerState
from broker.wire.records.records import Record, build_batch
from tests.unit.broker.running_state import create_topic, delete_topic, grow_topic, start_node

TOPIC = "orders"


def run_broker(tmp_path: Path, test: Callable[[BrokerState], Awaitable[None]], **properties: str) -> None:
    async def main() -> None:
        node = await start_node({"node.id": "7", "log.dirs": str(tmp_path / "logs"), **properties})
        try:
            await test(node.state)
        finally:
            await node.close()

    asyncio.run(main())


def batch(*values: bytes) -> bytes:
    return build_batch([Record(key=None, value=value, timestamp=1_000) for value in values])


def test_the_node_leads_every_partition_with_itself_as_the_isr(tmp_path: Path) -> None:
    async def test(state: BrokerState) -> None:
        await create_topic(state, TOPIC, 2)
        partitions = state.partitions
        described = partitions.describe(TOPIC, 2)
        assert [(p.error, p.leader, p.replicas, p.isr, p.offline_replicas) for p in described] == [
            (ErrorCode.none, 7, (7,), (7,), ())
        ] * 2
        assert partitions.leader_for(TOPIC, 1) == 7
        assert partitions.is_leader(TOPIC, 1)
        assert [b.broker_id for b in partitions.live_brokers()] == [7]

    run_broker(tmp_path, test)


def test_an_append_moves_the_high_watermark_by_the_isr_rule(tmp_path: Path) -> None:
    async def test(state: BrokerState) -> None:
        await create_topic(state, TOPIC)
        partition, error = state.partitions.leader(TOPIC, 0)
        assert partition is not None
        assert error == ErrorCode.none
        outcome = partition.append(batch(b"a", b"b", b"c"), acks=-1)
        assert outcome.error == ErrorCode.none
        assert outcome.result is not None
        # The ISR is this node alone: acks=all is satisfied by the append itself.
        assert outcome.acks_pending is None
        assert partition.high_watermark == partition.log_end_offset == 3
        assert partition.read(0, 1 << 20, partition.fetch_bound(0, follower=False), True)

    run_broker(tmp_path, test)


def test_acks_all_below_min_insync_replicas_appends_nothing(tmp_path: Path) -> None:
    async def test(state: BrokerState) -> None:
        await create_topic(state, TOPIC, 1, **{"min.insync.replicas": "2"})
        partition, _ = state.partitions.leader(TOPIC, 0)
        assert partition is not None
        outcome = partition.append(batch(b"a"), acks=-1)
        assert outcome.error == ErrorCode.not_enough_replicas
        assert partition.log_end_offset == 0
        # acks=1 does not ask for the ISR.
        assert partition.append(batch(b"a"), acks=1).error == ErrorCode.none
        assert partition.high_watermark == 1

    run_broker(tmp_path, test)


def test_leader_epochs_fence_and_the_image_follows_the_registry(tmp_path: Path) -> None:
    async def test(state: BrokerState) -> None:
        partitions = state.partitions
        await create_topic(state, TOPIC)
        assert partitions.leader(TOPIC, 0, requested_epoch=3)[1] == ErrorCode.unknown_leader_epoch
        assert partitions.leader(TOPIC, 0, requested_epoch=0)[1] == ErrorCode.none
        await grow_topic(state, TOPIC, 3)
        assert partitions.leader(TOPIC, 2)[0] is not None
        await delete_topic(state, TOPIC)
        assert partitions.leader(TOPIC, 0) == (None, ErrorCode.unknown_topic_or_partition)
        assert not partitions.knows(TOPIC, 2)

    run_broker(tmp_path, test)


def test_a_restarted_node_exposes_everything_it_had_appended(tmp_path: Path) -> None:
    async def first(state: BrokerState) -> None:
        await create_topic(state, TOPIC)
        partition, _ = state.partitions.leader(TOPIC, 0)
        assert partition is not None
        partition.append(batch(b"a", b"b"), acks=1)

    async def second(state: BrokerState) -> None:
        partition, _ = state.partitions.leader(TOPIC, 0)
        assert partition is not None
        assert partition.high_watermark == partition.log_end_offset == 2

    run_broker(tmp_path, first)
    run_broker(tmp_path, second)
