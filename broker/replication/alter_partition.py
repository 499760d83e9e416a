"""AlterPartitionManager: the ISR proposals of every partition this broker leads, sent in batches (Kafka's
`AlterPartitionManager`).

A partition leader proposes a new ISR (`Partition.propose_isr`); `ReplicaManager` submits it here and hands
the partition the answer. The proposals of every partition waiting at the same time go to the active
controller in one AlterPartitions request, one request in flight at a time: a broker whose thousands of
partitions change their ISR at once (a peer fenced or back) makes a few requests, not thousands queued on one
connection. Each request is stamped with this broker's registration epoch when it is sent (the controller
refuses another life's proposals); before the broker registered, every proposal is answered
STALE_BROKER_EPOCH without asking. A refusal (stale versions, NOT_CONTROLLER when no controller answered)
comes back per partition: the partition retries after `ALTER_PARTITION_RETRY_S` from its own state.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from kio.schema.errors import ErrorCode

from broker.controller.api import (
    AlterPartitionRequest,
    AlterPartitionResult,
    AlterPartitionsSender,
    PartitionAssignment,
)

# Partitions per AlterPartitions request (~200 bytes each; the controller takes this many in one).
ALTER_BATCH = 2000


@dataclass(frozen=True, slots=True)
class _Proposal:
    assignment: PartitionAssignment
    new_isr: tuple[int, ...]
    answer: asyncio.Future[AlterPartitionResult]


class AlterPartitionManager:
    """A broker's AlterPartition proposals, batched (see the module doc)."""

    def __init__(
        self, sender: AlterPartitionsSender | None, broker_id: int, broker_epoch: Callable[[], int | None]
    ) -> None:
        """`sender`: the line to the active controller (None: no controller, every proposal fails);
        `broker_epoch`: this broker's current registration epoch, None until it registered."""
        self.sender = sender
        self.broker_id = broker_id
        self.broker_epoch = broker_epoch
        self._waiting: list[_Proposal] = []
        self._sending: asyncio.Future[None] | None = None

    async def submit(self, assignment: PartitionAssignment, new_isr: tuple[int, ...]) -> AlterPartitionResult:
        """Propose `new_isr` for the partition as this leader holds it (`assignment`'s leader and partition
        epochs are the versions the controller checks); the controller's answer for this partition.

        Raises what sending the batch raised (the caller treats it as no answer)."""
        proposal = _Proposal(assignment, new_isr, asyncio.get_running_loop().create_future())
        self._waiting.append(proposal)
        if self._sending is None or self._sending.done():
            self._sending = asyncio.ensure_future(self._send_waiting())
        return await proposal.answer

    async def close(self) -> None:
        """Stop sending: proposals waiting or in flight are cancelled (their leaders are stopping too)."""
        if self._sending is not None:
            self._sending.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sending
        for proposal in self._waiting:
            proposal.answer.cancel()
        self._waiting = []

    async def _send_waiting(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting[:ALTER_BATCH], self._waiting[ALTER_BATCH:]
            # A proposal whose leader stopped waiting (the partition stopped, the broker closes) is not sent.
            batch = [proposal for proposal in batch if not proposal.answer.done()]
            if not batch:
                continue
            try:
                results = await self._send(batch)
            except asyncio.CancelledError:
                for proposal in batch:
                    proposal.answer.cancel()
                raise
            except Exception as exc:
                for proposal in batch:
                    if not proposal.answer.done():
                        proposal.answer.set_exception(exc)
                continue
            for proposal, result in zip(batch, results, strict=True):
                if not proposal.answer.done():
                    proposal.answer.set_result(result)

    async def _send(self, proposals: list[_Proposal]) -> list[AlterPartitionResult]:
        epoch = self.broker_epoch()
        if epoch is None:
            return [AlterPartitionResult(ErrorCode.stale_broker_epoch.value)] * len(proposals)
        if self.sender is None:
            raise RuntimeError("no controller to send AlterPartition to")
        requests = [
            AlterPartitionRequest(
                broker_id=self.broker_id,
                broker_epoch=epoch,
                topic_id=proposal.assignment.topic_id,
                partition=proposal.assignment.partition,
                leader_epoch=proposal.assignment.leader_epoch,
                partition_epoch=proposal.assignment.partition_epoch,
                new_isr=proposal.new_isr,
            )
            for proposal in proposals
        ]
        return await self.sender.alter_partitions(requests)


__all__ = ["ALTER_BATCH", "AlterPartitionManager"]
