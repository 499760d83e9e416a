"""Only principals allowed CLUSTER_ACTION may send replica requests (replica_id >= 0), on every version.

A real broker state with ACLs on, requests through the dispatcher as an authenticated principal (no
sockets). This broker does not replicate: posing as a follower is refused all the same.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v4 import request as fetch_v4
from kio.schema.offset_for_leader_epoch.v3 import request as epoch_v3
from kio.static.primitive import i32, i32Timedelta, i64

from broker.auth.sasl import AuthSession
from broker.context import BrokerState, ClientSession
from broker.server.dispatcher import Peer, dispatch
from broker.wire.frames import decode_response, encode_request
from tests.unit.broker.replication.test_manager import TOPIC, fetch_request
from tests.unit.broker.running_state import create_topic, delete_topic, start_node

PEER = Peer("127.0.0.1", 40000, "PLAINTEXT")


class AclBroker:
    def __init__(self, directory: Path, configs: Mapping[str, str] | None = None) -> None:
        self.loop = asyncio.new_event_loop()
        self.node = self.loop.run_until_complete(
            start_node(
                {
                    "log.dirs": str(directory),
                    "authorizer.class.name": "acl",
                    "super.users": "User:broker",
                    # No socket is bound: the port the node registers with and answers in endpoints.
                    "advertised.listeners": "PLAINTEXT://127.0.0.1:19092",
                    **(configs or {}),
                }
            )
        )
        self.state: BrokerState = self.node.state
        self.correlation_id = 0

    def send(self, principal: str, body: Any) -> Any:
        self.correlation_id += 1
        auth = AuthSession(
            requires_sasl=False,
            enabled_mechanisms=[],
            store=None,
            reauth_ms=0,
            max_token_bytes=1024,
            principal=principal,
        )
        frame = encode_request(body, self.correlation_id, "unit")[4:]
        chunks = self.loop.run_until_complete(dispatch(self.state, PEER, frame, ClientSession(auth=auth)))
        assert chunks is not None
        raw = b"".join(bytes(chunk) for chunk in chunks)[4:]
        return decode_response(raw, int(body.__api_key__), int(body.__version__), self.correlation_id)

    def create_topic(self, name: str, partitions: int) -> None:
        self.loop.run_until_complete(create_topic(self.state, name, partitions))

    def delete_topic(self, name: str) -> None:
        self.loop.run_until_complete(delete_topic(self.state, name))

    def close(self) -> None:
        self.loop.run_until_complete(self.node.close())
        self.loop.close()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[AclBroker]:
    broker = AclBroker(tmp_path)
    yield broker
    broker.close()


def fetch_v4_request(replica_id: int) -> Any:
    return fetch_v4.FetchRequest(
        replica_id=i32(replica_id),
        max_wait=i32Timedelta.parse(datetime.timedelta(0)),
        min_bytes=i32(0),
        topics=(
            fetch_v4.FetchTopic(
                topic=TOPIC,
                partitions=(
                    fetch_v4.FetchPartition(
                        partition=i32(0), fetch_offset=i64(0), partition_max_bytes=i32(1024)
                    ),
                ),
            ),
        ),
    )


def epoch_v3_request(replica_id: int) -> Any:
    return epoch_v3.OffsetForLeaderEpochRequest(
        replica_id=i32(replica_id),
        topics=(
            epoch_v3.OffsetForLeaderTopic(
                topic=TOPIC,
                partitions=(epoch_v3.OffsetForLeaderPartition(partition=i32(0), leader_epoch=i32(0)),),
            ),
        ),
    )


def partition_errors(response: Any) -> list[ErrorCode]:
    topics = getattr(response, "responses", None) or response.topics
    return [p.error_code for t in topics for p in t.partitions]


def test_a_replica_fetch_without_cluster_action_fails_at_the_top_level_and_on_every_partition(
    broker: AclBroker,
) -> None:
    response = broker.send("User:mallory", fetch_request(0, 1))
    assert response.error_code == ErrorCode.cluster_authorization_failed
    assert partition_errors(response) == [ErrorCode.cluster_authorization_failed]


def test_fetch_versions_without_a_top_level_error_carry_it_on_every_partition(broker: AclBroker) -> None:
    assert partition_errors(broker.send("User:mallory", fetch_v4_request(2))) == [
        ErrorCode.cluster_authorization_failed
    ]


def test_offset_for_leader_epoch_as_a_replica_needs_cluster_action(broker: AclBroker) -> None:
    assert partition_errors(broker.send("User:mallory", epoch_v3_request(1))) == [
        ErrorCode.cluster_authorization_failed
    ]


def test_a_super_user_passes_the_check_and_meets_the_usual_partition_errors(broker: AclBroker) -> None:
    response = broker.send("User:broker", fetch_request(0, 1))
    assert response.error_code == ErrorCode.none
    assert partition_errors(response) == [ErrorCode.unknown_topic_or_partition]
    assert partition_errors(broker.send("User:broker", epoch_v3_request(1))) == [
        ErrorCode.unknown_topic_or_partition
    ]


def test_a_consumer_fetch_is_judged_on_topic_read_not_cluster_action(broker: AclBroker) -> None:
    response = broker.send("User:mallory", fetch_request(0, -1))
    assert response.error_code == ErrorCode.none
    assert partition_errors(response) == [ErrorCode.topic_authorization_failed]
