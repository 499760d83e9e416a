"""The image applies each record type through its own registered method; the security records are
applied by the same code in the image and in a broker's SecurityStore; an entry holding a record of a
newer release is refused whole, once, and nothing after it is applied."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import uuid
from pathlib import Path

import pytest

from broker.controller import records as rec
from broker.controller.broker_lifecycle import BrokerLifecycle
from broker.controller.client import ControllerClient
from broker.controller.image import _APPLIERS, MetadataImage, MetadataRefusal
from broker.controller.rpc.brokers import FetchMetadataResponse
from broker.metadata.metadata_records import RECORD_TYPES
from broker.metadata.security_records import (
    AlterQuotaRecord,
    CreateAclRecord,
    DeleteAclRecord,
    DeleteScramRecord,
    DeleteTokenRecord,
    SecurityRecord,
    UpsertScramRecord,
    UpsertTokenRecord,
    security_state_records,
)
from broker.metadata.security_registry import SecurityStore

TOPIC_ID = uuid.UUID("00000000-0000-4000-8000-000000000001")
ACL = (2, "orders", 3, "User:alice", "*", 3, 3)


def test_every_record_type_has_its_applier() -> None:
    assert set(_APPLIERS) == set(RECORD_TYPES.values())


SECURITY_CHANGES: list[SecurityRecord] = [
    CreateAclRecord(ACL),
    CreateAclRecord((2, "events", 3, "User:bob", "*", 2, 3)),
    DeleteAclRecord(ACL),
    UpsertScramRecord("alice", "SCRAM-SHA-256", {"salt": "00", "iterations": 4096}),
    UpsertScramRecord("alice", "SCRAM-SHA-512", {"salt": "01", "iterations": 4096}),
    DeleteScramRecord("alice", "SCRAM-SHA-256"),
    UpsertScramRecord("bob", "SCRAM-SHA-256", {"salt": "02", "iterations": 8192}),
    DeleteScramRecord("bob", "SCRAM-SHA-256"),
    AlterQuotaRecord((("user", "alice"),), {"producer_byte_rate": 1024.0, "request_percentage": 10.0}),
    AlterQuotaRecord((("user", "alice"),), {}, ("request_percentage",)),
    AlterQuotaRecord((("client-id", None),), {"consumer_byte_rate": 5.0}),
    AlterQuotaRecord((("client-id", None),), {}, ("consumer_byte_rate",)),
    UpsertTokenRecord({"token_id": "t1", "owner": "User:alice"}),
    UpsertTokenRecord({"token_id": "t2", "owner": "User:bob"}),
    DeleteTokenRecord("t1"),
]


def test_the_image_and_a_security_store_fold_security_records_into_the_same_state(tmp_path: Path) -> None:
    image = MetadataImage()
    delta = image.apply_entry(1, SECURITY_CHANGES)
    store = SecurityStore(tmp_path)
    store.apply_records(SECURITY_CHANGES)

    assert delta.security == SECURITY_CHANGES
    expected = {
        "acls": {(2, "events", 3, "User:bob", "*", 2, 3)},
        "scram": {"alice": {"SCRAM-SHA-512": {"salt": "01", "iterations": 4096}}},
        "quotas": {(("user", "alice"),): {"producer_byte_rate": 1024.0}},
        "tokens": {"t2": {"token_id": "t2", "owner": "User:bob"}},
    }
    for state in (image, store):
        assert {name: getattr(state, name) for name in expected} == expected
    # A broker adopting the image's state (and a snapshot) gets the same state back.
    adopted = SecurityStore(tmp_path / "adopted")
    adopted.replace_all(security_state_records(image))
    reloaded = SecurityStore(tmp_path / "adopted")
    reloaded.load()
    assert {name: getattr(reloaded, name) for name in expected} == expected
    assert {
        name: getattr(MetadataImage.from_snapshot(image.to_snapshot()), name) for name in expected
    } == expected


def _entry(*records: dict[str, object]) -> bytes:
    return json.dumps(list(records)).encode()


TOPIC = rec.TopicRecord("orders", TOPIC_ID).to_json()
NEWER = {"type": "tiered_storage_segment", "segment": 7}


def test_an_entry_with_a_record_of_a_newer_release_is_refused_whole_and_applying_stops_there(
    caplog: pytest.LogCaptureFixture,
) -> None:
    refusal = MetadataRefusal("broker 1")
    assert refusal.samples() == []
    image = MetadataImage()

    async def scenario() -> list[object]:
        return [
            await refusal.entry(1, _entry(TOPIC)),
            await refusal.entry(2, _entry(rec.ConfigRecord("topic", "orders", "a", "b").to_json(), NEWER)),
            await refusal.entry(3, _entry(rec.ConfigRecord("topic", "orders", "c", "d").to_json())),
        ]

    with caplog.at_level(logging.ERROR, "broker.controller.image"):
        first, refused, after = asyncio.run(scenario())
    assert first == [rec.TopicRecord("orders", TOPIC_ID)]
    assert refused is None
    assert after is None
    image.apply_entry(1, first)  # type: ignore[arg-type]
    assert image.topic_by_name("orders").configs == {}  # type: ignore[union-attr]
    assert refusal.stopped_at == 2
    assert (refusal.error.type_name, refusal.error.version) == ("tiered_storage_segment", 0)  # type: ignore[union-attr]
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 1
    assert "offset 2" in logged[0]
    assert "'tiered_storage_segment' version 0" in logged[0]


def test_a_snapshot_with_a_record_version_of_a_newer_release_is_refused() -> None:
    image = MetadataImage()
    image.apply_entry(4, [rec.TopicRecord("orders", TOPIC_ID)])
    snapshot = json.loads(image.to_snapshot())
    snapshot["records"][0]["v"] = 1
    refusal = MetadataRefusal("controller 1")

    assert asyncio.run(refusal.snapshot(json.dumps(snapshot).encode())) is None
    assert refusal.stopped_at == 4
    assert asyncio.run(refusal.snapshot(image.to_snapshot())) is None  # stopped for good


def test_a_broker_keeps_its_last_good_image_when_the_log_holds_a_record_it_cannot_read(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> BrokerLifecycle:
        lifecycle = BrokerLifecycle(ControllerClient({1: ("127.0.0.1", 1)}), 1, [], None, 0.5)
        fetched = [
            [1, _entry(TOPIC)],
            [2, _entry(rec.PartitionRecord(TOPIC_ID, 0, (1,), (1,), 1).to_json(), NEWER)],
            [3, _entry(rec.ConfigRecord("topic", "orders", "c", "d").to_json())],
        ]
        entries = [[index, base64.b64encode(data).decode()] for index, data in fetched]
        for _ in range(3):  # fetched again and again: the controller keeps answering the same entries
            await lifecycle._apply_fetched(FetchMetadataResponse(applied_offset=2, entries=tuple(entries)))
        lifecycle.client.close()
        return lifecycle

    with caplog.at_level(logging.ERROR, "broker.controller.image"):
        lifecycle = asyncio.run(scenario())
    topic = lifecycle.image.topic_by_name("orders")
    assert topic is not None
    assert (lifecycle.image.offset, topic.partitions, topic.configs) == (1, {}, {})
    assert lifecycle.refusal.stopped_at == 2
    assert len(caplog.records) == 1
    # What the broker's metrics endpoint shows (kafka_broker_metadata_refused_offset).
    assert lifecycle.refusal.samples() == [({"type": "tiered_storage_segment", "version": "0"}, 2.0)]
