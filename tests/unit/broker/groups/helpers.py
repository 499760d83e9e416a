"""Builders shared by the coordinator tests."""

from __future__ import annotations

import asyncio
import struct
from typing import Any

from broker.context import RequestContext
from broker.groups.coordinator import GroupCoordinator
from broker.groups.group import JoinResult, SyncResult

from .conftest import settle

RANGE = (("range", b"range-metadata"),)


def request_context(broker: Any, api_key: int, version: int) -> RequestContext:
    """A request from a PLAINTEXT client to `broker` (a BrokerState, or a stand-in with what handlers read)."""
    return RequestContext(
        api_key=api_key,
        api_version=version,
        correlation_id=1,
        client_id="handler-test",
        client_host="127.0.0.1",
        client_port=50000,
        listener_name="PLAINTEXT",
        broker=broker,
    )


def subscription(*topics: str) -> bytes:
    """A ConsumerProtocolSubscription v0: topics and null user data."""
    encoded = struct.pack(">hi", 0, len(topics))
    for topic in topics:
        encoded += struct.pack(">h", len(topic)) + topic.encode()
    return encoded + struct.pack(">i", -1)


def join(
    coordinator: GroupCoordinator,
    *,
    group: str = "g",
    member_id: str = "",
    instance: str | None = None,
    protocols: tuple[tuple[str, bytes], ...] = RANGE,
    protocol_type: str = "consumer",
    session_ms: int = 10_000,
    rebalance_ms: int = 30_000,
    require_known_member_id: bool = True,
) -> asyncio.Future[JoinResult]:
    return asyncio.ensure_future(
        coordinator.join_group(
            group_id=group,
            member_id=member_id,
            group_instance_id=instance,
            protocol_type=protocol_type,
            protocols=protocols,
            session_timeout_ms=session_ms,
            rebalance_timeout_ms=rebalance_ms,
            client_id="client",
            client_host="/127.0.0.1",
            require_known_member_id=require_known_member_id,
        )
    )


def sync(
    coordinator: GroupCoordinator,
    result: JoinResult,
    *,
    group: str = "g",
    assignments: dict[str, bytes] | None = None,
    generation: int | None = None,
    instance: str | None = None,
) -> asyncio.Future[SyncResult]:
    return asyncio.ensure_future(
        coordinator.sync_group(
            group_id=group,
            generation_id=result.generation_id if generation is None else generation,
            member_id=result.member_id,
            group_instance_id=instance,
            protocol_type=None,
            protocol_name=None,
            assignments=assignments or {},
        )
    )


async def join_new_member(coordinator: GroupCoordinator, **kwargs: object) -> asyncio.Future[JoinResult]:
    """Does the KIP-394 dance: a first JoinGroup for an id, then the real one (left pending)."""
    first = await join(coordinator, **kwargs)  # type: ignore[arg-type]
    assert first.error_code == 79  # MEMBER_ID_REQUIRED
    future = join(coordinator, member_id=first.member_id, **kwargs)  # type: ignore[arg-type]
    await settle()
    return future


async def stable_group(coordinator: GroupCoordinator, size: int, group: str = "g") -> list[JoinResult]:
    """Brings `size` members into one Stable generation; the leader assigns each its own id.

    All ids are fetched first (MEMBER_ID_REQUIRED), so the rebalance waits for every one.
    """
    member_ids = []
    for _ in range(size):
        first = await join(coordinator, group=group)
        assert first.error_code == 79
        member_ids.append(first.member_id)
    futures = [join(coordinator, group=group, member_id=member_id) for member_id in member_ids]
    results = [await future for future in futures]
    leader = next(r for r in results if r.member_id == r.leader)
    assignments = {member[0]: member[0].encode() for member in leader.members}
    syncs = [
        sync(coordinator, r, group=group, assignments=assignments if r is leader else None) for r in results
    ]
    for future in syncs:
        assert (await future).error_code == 0
    return results
