"""`__share_group_state` records in Kafka 4.2's layout: a ShareSnapshot that Apache Kafka 4.2 wrote decodes,
and encodes back to the same bytes; ours round-trip with state batches."""

from __future__ import annotations

import uuid

from broker.share.state_records import (
    ShareSnapshot,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
    is_share_coordinator_key,
    share_coordinator_key,
)

# Read from an Apache Kafka 4.2.0 broker's __share_group_state (a share-partition just initialized).
KAFKA_KEY = bytes.fromhex(
    "0000002438363338626563632d663031382d313166312d396439372d3032666330303030303030310a399803e3114d55a8efd9871604dd9400000000"
)
KAFKA_VALUE = bytes.fromhex(
    "0000000000000000000100000000ffffffffffffffff000001a2428530e6000001a2428530e60100"
)


def test_a_snapshot_apache_kafka_wrote_decodes_and_encodes_back_to_its_bytes() -> None:
    group, topic_id, partition = decode_key(KAFKA_KEY)
    assert (group, topic_id, partition) == (
        "8638becc-f018-11f1-9d97-02fc00000001",
        uuid.UUID("0a399803-e311-4d55-a8ef-d9871604dd94"),
        0,
    )
    snapshot = decode_value(KAFKA_VALUE)
    assert (snapshot.snapshot_epoch, snapshot.state_epoch, snapshot.leader_epoch, snapshot.start_offset) == (
        0,
        1,
        0,
        -1,
    )
    assert snapshot.state_batches == ()
    assert encode_key(group, topic_id, partition) == KAFKA_KEY
    assert encode_value(snapshot) == KAFKA_VALUE


def test_a_snapshot_with_state_batches_round_trips() -> None:
    snapshot = ShareSnapshot(3, 0, 7, 100, 1, 2, ((100, 104, 0, 2), (105, 105, 4, 5), (106, 110, 2, 1)))
    assert decode_value(encode_value(snapshot)) == snapshot
    # ShareUpdate records (type 1), which Kafka also writes, are not snapshots.
    assert decode_key(b"\x00\x01" + KAFKA_KEY[2:]) is None


def test_the_coordinator_key_prints_the_topic_id_as_kafka_does() -> None:
    # Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding (22 characters).
    topic_id = uuid.UUID("0a399803-e311-4d55-a8ef-d9871604dd94")
    key = share_coordinator_key("group", topic_id, 3)
    assert key == "group:CjmYA-MRTVWo79mHFgTdlA:3"
    assert is_share_coordinator_key(key)
    assert not is_share_coordinator_key(f"group:{topic_id}:3")
    assert not is_share_coordinator_key("group:CjmYA-MRTVWo79mHFgTdlA")
