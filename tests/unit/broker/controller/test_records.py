"""Metadata records: every type round-trips through its JSON form, version 0 is the dict shape the first
release wrote, a record this node does not know refuses its whole entry, and a newer record version is
written only once the finalized metadata.version allows it."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from broker.controller import records as rec
from broker.controller.api import Endpoint
from broker.metadata.features import LATEST_METADATA_VERSION, METADATA_VERSION
from broker.metadata.metadata_records import (
    RECORD_TYPES,
    MetadataRecord,
    RecordJson,
    UnsupportedRecordError,
    decode_record,
    record_type,
)
from broker.metadata.security_records import (
    AlterQuotaRecord,
    CreateAclRecord,
    DeleteAclRecord,
    DeleteScramRecord,
    DeleteTokenRecord,
    UpsertScramRecord,
    UpsertTokenRecord,
)

TOPIC_ID = uuid.UUID("00000000-0000-4000-8000-000000000001")
INCARNATION = uuid.UUID("00000000-0000-4000-8000-000000000002")
ENDPOINTS = (Endpoint("PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT"),)

# One record of every type, with the JSON the first release (d32902d) wrote for it.
SAMPLES: list[tuple[MetadataRecord, RecordJson]] = [
    (
        rec.RegisterBrokerRecord(1, INCARNATION, ENDPOINTS, "a"),
        {
            "type": "register_broker",
            "broker_id": 1,
            "incarnation_id": str(INCARNATION),
            "endpoints": [["PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT"]],
            "rack": "a",
        },
    ),
    (rec.FenceBrokerRecord(1, 4), {"type": "fence_broker", "broker_id": 1, "epoch": 4}),
    (rec.UnfenceBrokerRecord(1, 4), {"type": "unfence_broker", "broker_id": 1, "epoch": 4}),
    (
        rec.BeginControlledShutdownRecord(1, 4),
        {"type": "begin_controlled_shutdown", "broker_id": 1, "epoch": 4},
    ),
    (rec.UnregisterBrokerRecord(1), {"type": "unregister_broker", "broker_id": 1}),
    (
        rec.BrokerStateRecord(1, INCARNATION, 4, ENDPOINTS, None, False, True),
        {
            "type": "broker_state",
            "broker_id": 1,
            "incarnation_id": str(INCARNATION),
            "epoch": 4,
            "endpoints": [["PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT"]],
            "rack": None,
            "fenced": False,
            "in_controlled_shutdown": True,
        },
    ),
    (
        rec.TopicRecord("orders", TOPIC_ID, True),
        {"type": "topic", "name": "orders", "topic_id": str(TOPIC_ID), "internal": True},
    ),
    (rec.RemoveTopicRecord(TOPIC_ID), {"type": "remove_topic", "topic_id": str(TOPIC_ID)}),
    (
        rec.PartitionRecord(TOPIC_ID, 2, (1, 2, 3), (1, 2), 1, 3, 5),
        {
            "type": "partition",
            "topic_id": str(TOPIC_ID),
            "partition": 2,
            "replicas": [1, 2, 3],
            "isr": [1, 2],
            "leader": 1,
            "leader_epoch": 3,
            "partition_epoch": 5,
        },
    ),
    (
        rec.PartitionRecord(TOPIC_ID, 0, (1, 2, 3), (1, 2), 1, 0, 1, (3,), (2,)),
        {
            "type": "partition",
            "topic_id": str(TOPIC_ID),
            "partition": 0,
            "replicas": [1, 2, 3],
            "isr": [1, 2],
            "leader": 1,
            "leader_epoch": 0,
            "partition_epoch": 1,
            "adding_replicas": [3],
            "removing_replicas": [2],
        },
    ),
    (
        rec.PartitionChangeRecord(TOPIC_ID, 0, isr=(1,)),
        {"type": "partition_change", "topic_id": str(TOPIC_ID), "partition": 0, "isr": [1]},
    ),
    (
        rec.PartitionChangeRecord(
            TOPIC_ID, 0, leader=2, replicas=(2, 3), adding_replicas=(), removing_replicas=()
        ),
        {
            "type": "partition_change",
            "topic_id": str(TOPIC_ID),
            "partition": 0,
            "leader": 2,
            "replicas": [2, 3],
            "adding_replicas": [],
            "removing_replicas": [],
        },
    ),
    (
        rec.ConfigRecord("topic", "orders", "retention.ms", None),
        {
            "type": "config",
            "resource_type": "topic",
            "resource_name": "orders",
            "name": "retention.ms",
            "value": None,
        },
    ),
    (
        rec.ProducerIdsRecord(2, 5000),
        {"type": "producer_ids", "broker_id": 2, "next_producer_id": 5000},
    ),
    (
        rec.FeatureLevelRecord("metadata.version", 25),
        {"type": "feature_level", "name": "metadata.version", "level": 25},
    ),
    (
        CreateAclRecord((2, "orders", 3, "User:alice", "*", 3, 3)),
        {"type": "create_acl", "acl": [2, "orders", 3, "User:alice", "*", 3, 3]},
    ),
    (
        DeleteAclRecord((2, "orders", 3, "User:alice", "*", 3, 3)),
        {"type": "delete_acl", "acl": [2, "orders", 3, "User:alice", "*", 3, 3]},
    ),
    (
        UpsertScramRecord("alice", "SCRAM-SHA-256", {"salt": "00", "iterations": 4096}),
        {
            "type": "upsert_scram",
            "user": "alice",
            "mechanism": "SCRAM-SHA-256",
            "credential": {"salt": "00", "iterations": 4096},
        },
    ),
    (
        DeleteScramRecord("alice", "SCRAM-SHA-256"),
        {"type": "delete_scram", "user": "alice", "mechanism": "SCRAM-SHA-256"},
    ),
    (
        AlterQuotaRecord(
            (("client-id", None), ("user", "alice")), {"producer_byte_rate": 1024.0}, ("request_percentage",)
        ),
        {
            "type": "alter_quota",
            "entity": [["client-id", None], ["user", "alice"]],
            "set": {"producer_byte_rate": 1024.0},
            "remove": ["request_percentage"],
        },
    ),
    (
        UpsertTokenRecord({"token_id": "t1", "owner": "User:alice"}),
        {"type": "upsert_token", "token": {"token_id": "t1", "owner": "User:alice"}},
    ),
    (DeleteTokenRecord("t1"), {"type": "delete_token", "token_id": "t1"}),
]


def test_every_record_type_has_a_sample() -> None:
    assert {type(record) for record, _ in SAMPLES} == set(RECORD_TYPES.values())
    assert len({t.TYPE_ID for t in RECORD_TYPES.values()}) == len(RECORD_TYPES)


@pytest.mark.parametrize(("record", "written"), SAMPLES, ids=[type(r).__name__ for r, _ in SAMPLES])
def test_version_0_is_the_first_releases_dict_and_round_trips(
    record: MetadataRecord, written: RecordJson
) -> None:
    assert record.to_json() == written
    assert "v" not in written
    assert decode_record(json.loads(json.dumps(written))) == record


def test_an_entry_is_decoded_whole_or_refused_whole() -> None:
    entry = rec.encode_entry([rec.TopicRecord("orders", TOPIC_ID), rec.FenceBrokerRecord(1, 4)], {})
    assert rec.decode_entry(entry) == [rec.TopicRecord("orders", TOPIC_ID), rec.FenceBrokerRecord(1, 4)]
    newer = json.dumps(
        [
            {"type": "topic", "name": "x", "topic_id": str(TOPIC_ID), "internal": False},
            {"type": "tiered_segment", "id": 1},
        ]
    ).encode()
    with pytest.raises(UnsupportedRecordError) as refused:
        rec.decode_entry(newer)
    assert (refused.value.type_name, refused.value.version) == ("tiered_segment", 0)


@pytest.mark.parametrize("version", [1, 7])
def test_a_version_newer_than_this_node_knows_is_refused(version: int) -> None:
    data = {**rec.TopicRecord("orders", TOPIC_ID).to_json(), "v": version}
    with pytest.raises(UnsupportedRecordError, match=f"'topic' version {version} is not known"):
        decode_record(data)


@pytest.mark.parametrize("data", [[1], {"type": "topic", "v": -1}, {"type": "topic", "v": True}, {"v": 0}])
def test_what_is_not_a_record_is_refused(data: Any) -> None:
    with pytest.raises(ValueError, match=r"a metadata record is a JSON object|is not known to this node"):
        decode_record(data)


def test_a_malformed_record_of_a_known_type_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="malformed topic record") as raised:
        decode_record({"type": "topic", "name": "orders"})
    assert not isinstance(raised.value, UnsupportedRecordError)


@dataclass(frozen=True, slots=True)
class _TaggedTopic(MetadataRecord):
    """A record type with a version 1 (a field added at metadata.version 29), as the next one will be."""

    TYPE_ID = 9999
    TYPE = "tagged_topic_for_test"
    VERSION = 1
    SINCE = {0: 7, 1: LATEST_METADATA_VERSION}
    name: str
    tag: str = ""

    def fields_json(self, version: int) -> RecordJson:
        return {"name": self.name, **({"tag": self.tag} if version >= 1 else {})}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> _TaggedTopic:
        return cls(data["name"], data["tag"] if version >= 1 else "")


@pytest.fixture
def tagged_topic_type() -> Iterator[type[_TaggedTopic]]:
    record_type(_TaggedTopic)
    try:
        yield _TaggedTopic
    finally:
        del RECORD_TYPES[_TaggedTopic.TYPE]


def test_a_newer_record_version_is_written_only_once_metadata_version_allows_it(
    tagged_topic_type: type[_TaggedTopic],
) -> None:
    record = tagged_topic_type("orders", "blue")
    before = {METADATA_VERSION: LATEST_METADATA_VERSION - 1}
    after = {METADATA_VERSION: LATEST_METADATA_VERSION}

    assert rec.writable_version(tagged_topic_type, before) == 0
    assert rec.writable_version(tagged_topic_type, {}) == 0  # nothing finalized yet: the lowest level
    assert json.loads(rec.encode_entry([record], before)) == [
        {"type": "tagged_topic_for_test", "name": "orders"}
    ]
    assert json.loads(rec.encode_entry([record], after)) == [
        {"type": "tagged_topic_for_test", "v": 1, "name": "orders", "tag": "blue"}
    ]
    assert rec.decode_entry(rec.encode_entry([record], after)) == [record]


def test_every_record_type_of_this_release_is_written_at_version_0_at_every_level() -> None:
    for cls in RECORD_TYPES.values():
        assert cls.VERSION == 0
        assert rec.writable_version(cls, {METADATA_VERSION: LATEST_METADATA_VERSION}) == 0


def test_a_record_type_is_registered_once() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        record_type(rec.TopicRecord)
