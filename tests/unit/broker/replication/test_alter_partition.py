"""AlterPartitionManager: the proposals of every partition waiting at the same time go in one AlterPartitions
request, each answered with its own result (tests/integration/cluster/test_controller_server.py sends them to a
real controller)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence

import pytest

from broker.controller.api import AlterPartitionRequest, AlterPartitionResult, PartitionAssignment
from broker.replication.alter_partition import ALTER_BATCH, AlterPartitionManager

STALE_BROKER_EPOCH = 77
INVALID_UPDATE_VERSION = 95
TOPIC_ID = uuid.UUID("1f0e7a1c-2b35-4d7c-9e0a-8c6b5d4e3f21")


def partition(index: int, partition_epoch: int = 3) -> PartitionAssignment:
    return PartitionAssignment("t", index, TOPIC_ID, 1, 2, partition_epoch, (1, 2, 3), (1, 2, 3))


class RecordingController:
    """Answers each request as the controller checks versions (partition epoch 3 is current), after `hold` is
    set; keeps the requests it was sent."""

    def __init__(self) -> None:
        self.sent: list[list[AlterPartitionRequest]] = []
        self.hold = asyncio.Event()
        self.hold.set()
        self.failing = False

    async def alter_partitions(self, requests: Sequence[AlterPartitionRequest]) -> list[AlterPartitionResult]:
        self.sent.append(list(requests))
        await self.hold.wait()
        if self.failing:
            raise ConnectionResetError("controller connection lost")
        return [
            AlterPartitionResult(INVALID_UPDATE_VERSION)
            if request.partition_epoch != 3
            else AlterPartitionResult(0, partition(request.partition, 4))
            for request in requests
        ]


def test_proposals_waiting_together_go_in_one_request_each_answered_for_its_partition() -> None:
    async def scenario() -> None:
        controller = RecordingController()
        manager = AlterPartitionManager(controller, 1, lambda: 42)
        proposals = [(partition(i, partition_epoch=2 if i == 7 else 3), (1, 2)) for i in range(10)]
        results = await asyncio.gather(*(manager.submit(p, isr) for p, isr in proposals))
        assert len(controller.sent) == 1
        (request_batch,) = controller.sent
        assert [r.partition for r in request_batch] == list(range(10))
        assert {(r.broker_id, r.broker_epoch, r.leader_epoch, r.new_isr) for r in request_batch} == {
            (1, 42, 2, (1, 2))
        }
        assert [r.error_code for r in results] == [INVALID_UPDATE_VERSION if i == 7 else 0 for i in range(10)]
        assert all(
            r.assignment is not None and r.assignment.partition == i for i, r in enumerate(results) if i != 7
        )

    asyncio.run(scenario())


def test_one_request_is_in_flight_at_a_time_and_a_large_backlog_is_split() -> None:
    async def scenario() -> None:
        controller = RecordingController()
        controller.hold.clear()
        epochs = iter([5, 6, 6])
        manager = AlterPartitionManager(controller, 1, lambda: next(epochs))
        first = asyncio.ensure_future(manager.submit(partition(0), (1,)))
        while not controller.sent:
            await asyncio.sleep(0)
        # Proposals made while the first request is unanswered wait for it, then go together.
        later = [asyncio.ensure_future(manager.submit(partition(i), (1,))) for i in range(1, ALTER_BATCH + 2)]
        await asyncio.sleep(0)
        assert len(controller.sent) == 1
        controller.hold.set()
        await asyncio.gather(first, *later)
        assert [len(batch) for batch in controller.sent] == [1, ALTER_BATCH, 1]
        # Each request carries the broker epoch as it is when that request is sent.
        assert [batch[0].broker_epoch for batch in controller.sent] == [5, 6, 6]

    asyncio.run(scenario())


def test_before_registering_every_proposal_is_answered_stale_broker_epoch_without_asking() -> None:
    async def scenario() -> None:
        controller = RecordingController()
        manager = AlterPartitionManager(controller, 1, lambda: None)
        results = await asyncio.gather(*(manager.submit(partition(i), (1,)) for i in range(3)))
        assert [r.error_code for r in results] == [STALE_BROKER_EPOCH] * 3
        assert controller.sent == []

    asyncio.run(scenario())


def test_a_lost_request_fails_its_proposals_and_the_next_ones_are_still_sent() -> None:
    async def scenario() -> None:
        controller = RecordingController()
        manager = AlterPartitionManager(controller, 1, lambda: 42)
        controller.failing = True
        with pytest.raises(ConnectionResetError):
            await manager.submit(partition(0), (1,))
        controller.failing = False
        assert (await manager.submit(partition(0), (1,))).error_code == 0
        assert len(controller.sent) == 2

    asyncio.run(scenario())


def test_a_proposal_given_up_before_sending_is_not_sent_and_close_stops_the_sender() -> None:
    async def scenario() -> None:
        controller = RecordingController()
        controller.hold.clear()
        manager = AlterPartitionManager(controller, 1, lambda: 42)
        in_flight = asyncio.ensure_future(manager.submit(partition(0), (1,)))
        while not controller.sent:
            await asyncio.sleep(0)
        given_up = asyncio.ensure_future(manager.submit(partition(1), (1,)))
        kept = asyncio.ensure_future(manager.submit(partition(2), (1,)))
        await asyncio.sleep(0)
        given_up.cancel()
        controller.hold.set()
        await asyncio.gather(in_flight, kept)
        assert [[r.partition for r in batch] for batch in controller.sent] == [[0], [2]]
        controller.hold.clear()
        waiting = asyncio.ensure_future(manager.submit(partition(3), (1,)))
        while len(controller.sent) < 3:
            await asyncio.sleep(0)
        await manager.close()
        with pytest.raises(asyncio.CancelledError):
            await waiting

    asyncio.run(scenario())
