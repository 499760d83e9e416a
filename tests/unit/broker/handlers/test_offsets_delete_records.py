"""DeleteRecords through the real dispatcher and a single node's state (logs on disk)."""

from __future__ import annotations

import asyncio
import datetime
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kio.schema.delete_records.v2 import request as delete_records_v2
from kio.schema.errors import ErrorCode
from kio.static.primitive import i32, i32Timedelta, i64

from broker.auth.sasl import AuthSession
from broker.context import ClientSession
from broker.server.dispatcher import dispatch
from broker.wire.frames import decode_response, encode_request
from tests.unit.broker.server.test_dispatcher_replica_requests import PEER, AclBroker

ADMIN = "User:broker"  # a super user


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[AclBroker]:
    broker = AclBroker(tmp_path)
    yield broker
    broker.close()


def delete_records(topic: str) -> Any:
    return delete_records_v2.DeleteRecordsRequest(
        topics=(
            delete_records_v2.DeleteRecordsTopic(
                name=topic,
                partitions=(delete_records_v2.DeleteRecordsPartition(partition_index=i32(0), offset=i64(0)),),
            ),
        ),
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=10)),
    )


async def send(broker: AclBroker, body: Any) -> Any:
    auth = AuthSession(
        requires_sasl=False,
        enabled_mechanisms=[],
        store=None,
        reauth_ms=0,
        max_token_bytes=1024,
        principal=ADMIN,
    )
    frame = encode_request(body, 1, "unit")[4:]
    chunks = await dispatch(broker.state, PEER, frame, ClientSession(auth=auth))
    assert chunks is not None
    raw = b"".join(bytes(chunk) for chunk in chunks)[4:]
    return decode_response(raw, int(body.__api_key__), int(body.__version__), 1)


def test_a_partition_whose_log_is_still_being_created_is_waited_for(broker: AclBroker) -> None:
    """CreateTopics answers once Metadata names this broker leader, but the log is created off the event
    loop: a DeleteRecords sent right after the answer waits for it, as Produce does."""
    replication = broker.state.partitions.replication
    released = threading.Event()
    create_logs = replication._create_logs

    def held_create_logs(jobs: Any) -> None:
        released.wait(10)
        create_logs(jobs)

    replication._create_logs = held_create_logs  # type: ignore[method-assign]

    async def create_then_delete_records() -> Any:
        await broker.state.topics.create("fresh", 1, 1)
        assert replication.opening_to_lead("fresh", 0)
        asyncio.get_running_loop().call_later(0.1, released.set)
        return await send(broker, delete_records("fresh"))

    answer = broker.loop.run_until_complete(create_then_delete_records())
    [partition] = answer.topics[0].partitions
    assert partition.error_code == ErrorCode.none
    assert partition.low_watermark == 0
