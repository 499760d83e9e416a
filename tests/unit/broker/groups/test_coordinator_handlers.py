"""The group API handlers: every served version answers any decodable request with a response
that encodes, and the version-specific shapes are right. No sockets: a small stand-in for the
broker state carries the real coordinator."""

from __future__ import annotations

import asyncio
import datetime
import uuid
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.schema.errors import ErrorCode

from broker.context import RequestContext
from broker.groups.coordinator import GROUP_AUTHORIZED_OPERATIONS, GroupCoordinator
from broker.groups.offsets_replay import CoordinatorEndpoint
from broker.handlers.api_table import API_TABLE, handler
from broker.protocol.frames import encode_response
from broker.protocol.responses import build_response
from broker.wire.schemas import request_class
from tests.fixtures.coordinators import lead_every_partition, load_every_partition

from .conftest import TEST_CONFIG, ManualClock, SlowToCommitLog
from .helpers import request_context

NODE_ID = 7
ENDPOINT = ("127.0.0.1", 19092)


class KnownTopics:
    """Topics named `known-*` exist with three partitions; by id (OffsetCommit/OffsetFetch v10) none is known."""

    def get(self, name: str) -> Any:
        return SimpleNamespace(partitions=3, topic_id=uuid.UUID(int=3)) if name.startswith("known") else None

    def get_by_id(self, topic_id: uuid.UUID) -> Any:
        return None


class ItselfLocator:
    """Every key is coordinated by this broker (as on a single node, whose quorum's only broker it is)."""

    def locate(self, _key: str, _listener_name: str) -> CoordinatorEndpoint:
        return CoordinatorEndpoint(ErrorCode.none, NODE_ID, *ENDPOINT)


def context(coordinator: GroupCoordinator, api_key: int, version: int) -> RequestContext:
    coordinator.locator = ItselfLocator()
    broker = SimpleNamespace(
        groups=coordinator,
        transactions=SimpleNamespace(locator=ItselfLocator()),
        authorizer=None,
        metadata=KnownTopics(),
        node_id=NODE_ID,
        advertised_endpoint=lambda listener: ENDPOINT,
        # share.version 0: ListGroups lists no share groups (they need the broker's share state).
        feature_level=lambda _name: 0,
        # No share group exists: DeleteGroups hands every group to the group coordinator; no share state
        # store either: FindCoordinator answers a share key (type 2) that no coordinator is available.
        share=SimpleNamespace(groups=SimpleNamespace(groups={}), store=None),
    )
    return request_context(broker, api_key, version)


async def started_coordinator(loaded: bool = True) -> GroupCoordinator:
    """A coordinator leading every partition; with `loaded` False their replays wait for followers."""
    offsets_log = SlowToCommitLog()
    coordinator = GroupCoordinator(offsets_log, TEST_CONFIG, ManualClock())
    if loaded:
        await lead_every_partition(coordinator)
    else:
        offsets_log.followers_caught_up.clear()
        load_every_partition(coordinator)
    return coordinator


async def call(coordinator: GroupCoordinator, api_key: int, version: int, request: Any) -> Any:
    """The handler's answer as the entity of the asked version (what goes on the wire)."""
    result = await asyncio.wait_for(handler(api_key)(context(coordinator, api_key, version), request), 2)
    assert result is not None
    return build_response(api_key, version, result)


def request(api_key: int, version: int, **fields: Any) -> Any:
    cls = request_class(api_key, version)
    module = __import__(cls.__module__, fromlist=["*"])
    return cls(**{name: _nested(module, value) for name, value in fields.items()})


def _nested(module: Any, value: Any) -> Any:
    # ("ClassName", {fields}) tuples build nested request entities of the same version.
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], str)
        and isinstance(value[1], dict)
    ):
        return getattr(module, value[0])(**{k: _nested(module, v) for k, v in value[1].items()})
    if isinstance(value, list):
        return tuple(_nested(module, item) for item in value)
    return value


GROUP_APIS = {key: entry for key, entry in API_TABLE.items() if entry.module == "broker.handlers.groups"}
SERVED = [
    (api_key, version)
    for api_key, (low, high, *_) in sorted(GROUP_APIS.items())
    for version in range(low, high + 1)
]


@pytest.mark.parametrize(("api_key", "version"), SERVED)
def test_every_version_answers_arbitrary_requests_with_an_encodable_response(
    api_key: int, version: int
) -> None:
    @settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.from_type(request_class(api_key, version)))
    def answers(decoded: Any) -> None:
        async def scenario() -> Any:
            return await call(await started_coordinator(), api_key, version, decoded)

        entity = asyncio.run(scenario())
        assert encode_response(api_key, version, 1, entity)

    answers()


def test_it_advertises_the_versions_real_clients_use() -> None:
    assert {key: (low, high) for key, (low, high, *_) in GROUP_APIS.items()} == {
        8: (2, 10),
        9: (1, 10),
        10: (0, 6),
        11: (0, 9),
        12: (0, 4),
        13: (0, 5),
        14: (0, 5),
        15: (0, 6),
        16: (0, 5),
        42: (0, 2),
        47: (0, 0),
    }


async def test_find_coordinator_answers_single_and_batched_keys() -> None:
    coordinator = await started_coordinator()
    single = await call(coordinator, 10, 0, request(10, 0, key="g"))
    assert (single.error_code, single.node_id, single.host, single.port) == (
        0,
        NODE_ID,
        *ENDPOINT,
    )
    batched = await call(coordinator, 10, 4, request(10, 4, key_type=1, coordinator_keys=("txn-a", "txn-b")))
    assert [(c.key, c.node_id) for c in batched.coordinators] == [
        ("txn-a", NODE_ID),
        ("txn-b", NODE_ID),
    ]
    unknown_type = await call(coordinator, 10, 3, request(10, 3, key="g", key_type=5))
    assert unknown_type.error_code == ErrorCode.invalid_request


def join_request(version: int, member_id: str = "") -> Any:
    fields: dict[str, Any] = {
        "group_id": "g",
        "session_timeout": datetime.timedelta(seconds=10),
        "member_id": member_id,
        "protocol_type": "consumer",
        "protocols": [("JoinGroupRequestProtocol", {"name": "range", "metadata": b"m"})],
    }
    if version >= 1:
        fields["rebalance_timeout"] = datetime.timedelta(seconds=20)
    return request(11, version, **fields)


async def test_join_group_asks_for_a_member_id_only_from_version_4() -> None:
    coordinator = await started_coordinator()
    old = await call(coordinator, 11, 3, join_request(3))
    assert old.error_code == ErrorCode.none
    assert old.member_id.startswith("handler-test-")
    assert coordinator.groups["g"].members[old.member_id].client_host == "/127.0.0.1"
    new = await call(await started_coordinator(), 11, 4, join_request(4))
    assert new.error_code == ErrorCode.member_id_required
    assert new.protocol_name == ""  # non-nullable before v7


async def test_join_group_v0_uses_the_session_timeout_as_rebalance_timeout() -> None:
    coordinator = await started_coordinator()
    joined = await call(coordinator, 11, 0, join_request(0))
    assert coordinator.groups["g"].members[joined.member_id].rebalance_timeout_ms == 10_000


async def test_leave_group_puts_errors_where_each_version_has_them() -> None:
    coordinator = await started_coordinator()
    joined = await call(coordinator, 11, 3, join_request(3))
    v0 = await call(coordinator, 13, 0, request(13, 0, group_id="g", member_id="stranger"))
    assert v0.error_code == ErrorCode.unknown_member_id
    identities = [
        ("MemberIdentity", {"member_id": joined.member_id, "group_instance_id": None}),
        ("MemberIdentity", {"member_id": "stranger", "group_instance_id": None}),
    ]
    v3 = await call(coordinator, 13, 3, request(13, 3, group_id="g", members=identities))
    assert v3.error_code == ErrorCode.none
    assert [m.error_code for m in v3.members] == [ErrorCode.none, ErrorCode.unknown_member_id]


def commit_request(version: int, topic: str) -> Any:
    return request(
        8,
        version,
        group_id="g",
        generation_id_or_member_epoch=-1,
        member_id="",
        topics=[
            (
                "OffsetCommitRequestTopic",
                {
                    "name": topic,
                    "partitions": [
                        (
                            "OffsetCommitRequestPartition",
                            {"partition_index": 0, "committed_offset": 12, "committed_metadata": None},
                        ),
                        (
                            "OffsetCommitRequestPartition",
                            {"partition_index": 9, "committed_offset": 12, "committed_metadata": None},
                        ),
                    ],
                },
            )
        ],
    )


async def test_offset_commit_refuses_partitions_that_do_not_exist() -> None:
    coordinator = await started_coordinator()
    known = await call(coordinator, 8, 8, commit_request(8, "known-topic"))
    assert [p.error_code for p in known.topics[0].partitions] == [
        ErrorCode.none,
        ErrorCode.unknown_topic_or_partition,
    ]
    unknown = await call(coordinator, 8, 2, commit_request(2, "missing-topic"))
    assert {p.error_code for p in unknown.topics[0].partitions} == {ErrorCode.unknown_topic_or_partition}
    _, offsets = coordinator.fetch_offsets(group_id="g", topics=None)
    assert [(t, p, c.offset if c else None) for t, p, c in offsets] == [("known-topic", 0, 12)]


async def test_offset_fetch_v1_reports_group_errors_on_each_partition() -> None:
    loading = await started_coordinator(loaded=False)
    topics = [("OffsetFetchRequestTopic", {"name": "known-topic", "partition_indexes": (0, 1)})]
    v1 = await call(loading, 9, 1, request(9, 1, group_id="g", topics=topics))
    codes = {p.error_code for p in v1.topics[0].partitions}
    assert codes == {ErrorCode.coordinator_load_in_progress}
    v5 = await call(loading, 9, 5, request(9, 5, group_id="g", topics=topics))
    assert (v5.error_code, v5.topics) == (ErrorCode.coordinator_load_in_progress, ())


async def test_offset_fetch_v8_answers_several_groups_at_once() -> None:
    coordinator = await started_coordinator()
    await call(coordinator, 8, 8, commit_request(8, "known-topic"))
    groups = [
        ("OffsetFetchRequestGroup", {"group_id": "g", "topics": None}),
        (
            "OffsetFetchRequestGroup",
            {
                "group_id": "other",
                "topics": [("OffsetFetchRequestTopics", {"name": "known-topic", "partition_indexes": (0,)})],
            },
        ),
    ]
    answer = await call(coordinator, 9, 8, request(9, 8, groups=groups, require_stable=True))
    by_group = {g.group_id: g for g in answer.groups}
    assert by_group["g"].topics[0].partitions[0].committed_offset == 12
    assert by_group["other"].topics[0].partitions[0].committed_offset == -1


async def test_describe_groups_reports_authorized_operations_only_when_asked() -> None:
    coordinator = await started_coordinator()
    await call(coordinator, 11, 3, join_request(3))
    asked = await call(coordinator, 15, 3, request(15, 3, groups=("g",), include_authorized_operations=True))
    assert asked.groups[0].authorized_operations == GROUP_AUTHORIZED_OPERATIONS
    not_asked = await call(
        coordinator, 15, 3, request(15, 3, groups=("g",), include_authorized_operations=False)
    )
    assert not_asked.groups[0].authorized_operations == -(2**31)
    assert not_asked.groups[0].members[0].client_id == "handler-test"
