"""A controller whose metadata log holds a record of a newer release (a rolling upgrade the other way
round, or a downgrade) refuses that entry whole, stops applying there, keeps answering with the image it
had, and says where it stopped in DescribeQuorum."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from broker.controller import records as rec
from broker.controller.client import ControllerClient
from broker.controller.decisions import ControllerSettings, Decision
from broker.controller.quorum_driver import ControllerNodeConfig
from broker.controller.rpc.brokers import FetchMetadataRequest
from broker.controller.rpc.quorum import DescribeQuorumRequest
from broker.controller.server import ControllerServer
from broker.metadata.metadata_records import MetadataRecord, RecordJson
from broker.raft.node import RaftTimings
from tests.fixtures.broker import free_port

pytestmark = pytest.mark.integration


@dataclass(frozen=True, slots=True)
class TieredSegmentRecord(MetadataRecord):
    """What a later release might write; this release has no such record type (it is not registered)."""

    TYPE_ID = 900
    TYPE = "tiered_segment"
    segment: int

    def fields_json(self, version: int) -> RecordJson:
        return {"segment": self.segment}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> TieredSegmentRecord:
        return cls(int(data["segment"]))


async def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def test_a_controller_stops_at_an_entry_of_a_newer_release_and_keeps_serving_its_last_image(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    topic_id = uuid.uuid4()

    async def scenario() -> None:
        voters = {1: ("127.0.0.1", free_port())}
        server = ControllerServer(
            ControllerNodeConfig(
                node_id=1,
                voters=voters,
                metadata_dir=tmp_path / "controller-1",
                listen_host="127.0.0.1",
                listen_port=voters[1][1],
                settings=ControllerSettings(session_timeout_s=30.0),
                timings=RaftTimings(election_timeout_s=0.3, heartbeat_interval_s=0.03),
            )
        )
        await server.start()
        client = ControllerClient(voters)
        try:
            await wait_for(lambda: server.node is not None and server.node.is_leader, 10, "the election")
            await server.driver.decide_and_commit(
                lambda d, image: Decision(
                    [rec.TopicRecord("orders", topic_id), rec.PartitionRecord(topic_id, 0, (1,), (1,), 1)]
                )
            )
            good = server.image.offset
            newer = Decision(
                [rec.ConfigRecord("topic", "orders", "retention.ms", "1"), TieredSegmentRecord(7)]
            )
            # Never applied, so never answered: the proposal is left behind once the refusal is seen.
            proposing = asyncio.create_task(server.driver.decide_and_commit(lambda d, image: newer))
            await wait_for(lambda: server.driver.refusal.stopped_at is not None, 10, "the refusal")
            proposing.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await proposing

            assert server.driver.refusal.stopped_at == good + 1
            assert server.image.offset == good
            orders = server.image.topic_by_name("orders")
            assert orders is not None
            assert orders.configs == {}  # the known record of the refused entry was not applied either
            quorum = (await client.call(DescribeQuorumRequest())).result
            assert quorum is not None
            assert quorum.metadata_refused_at == good + 1
            assert quorum.applied_offset == good < quorum.commit_index
            fetched = (await client.call(FetchMetadataRequest(after_offset=0, max_wait_ms=0))).result
            assert fetched is not None
            assert fetched.applied_offset == good
        finally:
            client.close()
            await server.stop()

    with caplog.at_level(logging.ERROR, "broker.controller.image"):
        asyncio.run(scenario())
    refusals = [r.getMessage() for r in caplog.records if r.name == "broker.controller.image"]
    assert len(refusals) == 1
    assert "'tiered_segment' version 0" in refusals[0]
