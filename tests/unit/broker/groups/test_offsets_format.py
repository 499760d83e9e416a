"""`__consumer_offsets` records, checked against byte layouts derived by hand from Kafka's
OffsetCommitKey/Value.json and GroupMetadataKey/Value.json."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.groups.offsets_format import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    OffsetsFormatError,
    decode_group_metadata_value,
    decode_key,
    decode_offset_commit_value,
    encode_group_metadata_key,
    encode_group_metadata_value,
    encode_offset_commit_key,
    encode_offset_commit_value,
    partition_for_group,
)
from broker.metadata.coordinator_records import java_string_hash


def test_it_encodes_an_offset_commit_key_as_key_version_1() -> None:
    key = encode_offset_commit_key(OffsetCommitKey(group="g1", topic="t", partition=3))
    assert key == bytes.fromhex("0001" + "0002" + "6731" + "0001" + "74" + "00000003")


def test_it_encodes_a_group_metadata_key_as_key_version_2() -> None:
    assert encode_group_metadata_key(GroupMetadataKey(group="g1")) == bytes.fromhex("0002" + "0002" + "6731")


def test_it_decodes_key_versions_0_1_and_2_and_ignores_newer_record_types() -> None:
    v0 = bytes.fromhex("0000" + "0001" + "67" + "0001" + "74" + "00000007")
    assert decode_key(v0) == OffsetCommitKey(group="g", topic="t", partition=7)
    assert decode_key(bytes.fromhex("0002" + "0001" + "67")) == GroupMetadataKey(group="g")
    # Key version 3 is a KIP-848 consumer-group record: not ours to interpret.
    assert decode_key(bytes.fromhex("0003" + "0001" + "67")) is None


def test_it_writes_offset_commit_value_version_3_with_the_leader_epoch() -> None:
    value = OffsetCommitValue(offset=5, leader_epoch=2, metadata="m", commit_timestamp=1000)
    assert encode_offset_commit_value(value) == bytes.fromhex(
        "0003" + "0000000000000005" + "00000002" + "0001" + "6d" + "00000000000003e8"
    )


def test_it_writes_version_1_when_the_commit_has_an_expire_timestamp() -> None:
    value = OffsetCommitValue(
        offset=5, metadata="", commit_timestamp=1000, expire_timestamp=2000, leader_epoch=9
    )
    assert encode_offset_commit_value(value) == bytes.fromhex(
        "0001" + "0000000000000005" + "0000" + "00000000000003e8" + "00000000000007d0"
    )


def test_it_reads_every_offset_commit_value_version() -> None:
    v0 = bytes.fromhex("0000" + "000000000000000a" + "0000" + "0000000000000001")
    assert decode_offset_commit_value(v0) == OffsetCommitValue(offset=10, metadata="", commit_timestamp=1)
    v2 = bytes.fromhex("0002" + "000000000000000a" + "0001" + "78" + "0000000000000001")
    assert decode_offset_commit_value(v2).metadata == "x"
    # v4 is flexible: compact string (length + 1 as a varint) and an empty tagged-field section.
    v4 = bytes.fromhex("0004" + "000000000000000a" + "00000003" + "02" + "78" + "0000000000000001" + "00")
    assert decode_offset_commit_value(v4) == OffsetCommitValue(
        offset=10, leader_epoch=3, metadata="x", commit_timestamp=1
    )
    # Unknown tagged fields are skipped: one field, tag 5, two bytes of data.
    v4_tagged = v4[:-1] + bytes.fromhex("01" + "05" + "02" + "abcd")
    assert decode_offset_commit_value(v4_tagged).offset == 10


def test_it_writes_group_metadata_value_version_3() -> None:
    value = GroupMetadataValue(
        protocol_type="consumer",
        generation=4,
        protocol="range",
        leader="m1",
        current_state_timestamp=1000,
        members=(
            MemberMetadata(
                member_id="m1",
                group_instance_id=None,
                client_id="c",
                client_host="/h",
                rebalance_timeout=300,
                session_timeout=100,
                subscription=b"\x01",
                assignment=b"\x02\x03",
            ),
        ),
    )
    expected = (
        "0003"
        + "0008" + b"consumer".hex()
        + "00000004"
        + "0005" + b"range".hex()
        + "0002" + b"m1".hex()
        + "00000000000003e8"
        + "00000001"
        + "0002" + b"m1".hex()
        + "ffff"  # group_instance_id: null
        + "0001" + b"c".hex()
        + "0002" + b"/h".hex()
        + "0000012c"
        + "00000064"
        + "00000001" + "01"
        + "00000002" + "0203"
    )  # fmt: skip
    assert encode_group_metadata_value(value) == bytes.fromhex(expected)
    assert decode_group_metadata_value(bytes.fromhex(expected)) == value


def test_it_reads_group_metadata_value_version_0_using_the_session_timeout_as_rebalance_timeout() -> None:
    v0 = (
        "0000" + "0008" + b"consumer".hex() + "00000001" + "ffff" + "ffff"
        + "00000001" + "0001" + "61" + "0001" + "63" + "0001" + "68" + "00000064"
        + "00000000" + "00000000"
    )  # fmt: skip
    value = decode_group_metadata_value(bytes.fromhex(v0))
    assert value.protocol is None
    assert value.leader is None
    assert value.members[0].rebalance_timeout == 100
    assert value.members[0].group_instance_id is None


def test_it_reads_a_flexible_group_metadata_value_version_4() -> None:
    v4 = (
        "0004" + "09" + b"consumer".hex() + "00000002" + "06" + b"range".hex() + "03" + b"m1".hex()
        + "ffffffffffffffff"
        + "02"  # one member
        + "03" + b"m1".hex() + "03" + b"i1".hex() + "02" + "63" + "02" + "68"
        + "0000012c" + "00000064" + "02" + "01" + "01"
        + "00"  # member tagged fields
        + "00"  # value tagged fields
    )  # fmt: skip
    value = decode_group_metadata_value(bytes.fromhex(v4))
    assert value.members[0].group_instance_id == "i1"
    assert value.members[0].subscription == b"\x01"
    assert value.members[0].assignment == b""
    assert value.leader == "m1"


def test_it_rejects_truncated_and_trailing_bytes() -> None:
    good = encode_offset_commit_value(OffsetCommitValue(offset=1, metadata="", commit_timestamp=0))
    with pytest.raises(OffsetsFormatError):
        decode_offset_commit_value(good[:-1])
    with pytest.raises(OffsetsFormatError):
        decode_offset_commit_value(good + b"\x00")
    with pytest.raises(OffsetsFormatError):
        decode_offset_commit_value(b"\x00\x09" + good[2:])


@given(
    offset=st.integers(-1, 2**63 - 1),
    epoch=st.integers(-1, 2**31 - 1),
    metadata=st.text(max_size=50),
    timestamp=st.integers(0, 2**50),
    version=st.sampled_from([0, 1, 2, 3, 4]),
)
def test_offset_commit_values_round_trip_in_every_version(
    offset: int, epoch: int, metadata: str, timestamp: int, version: int
) -> None:
    value = OffsetCommitValue(
        offset=offset,
        metadata=metadata,
        commit_timestamp=timestamp,
        leader_epoch=epoch if version >= 3 else -1,
        expire_timestamp=timestamp + 1 if version == 1 else -1,
    )
    assert decode_offset_commit_value(encode_offset_commit_value(value, version)) == value


@given(
    members=st.lists(
        st.builds(
            MemberMetadata,
            member_id=st.text(max_size=20),
            group_instance_id=st.none() | st.text(max_size=10),
            client_id=st.text(max_size=10),
            client_host=st.text(max_size=10),
            rebalance_timeout=st.integers(0, 2**31 - 1),
            session_timeout=st.integers(0, 2**31 - 1),
            subscription=st.binary(max_size=40),
            assignment=st.binary(max_size=40),
        ),
        max_size=4,
    ),
    protocol=st.none() | st.text(max_size=10),
    version=st.sampled_from([3, 4]),
)
def test_group_metadata_values_round_trip(
    members: list[MemberMetadata], protocol: str | None, version: int
) -> None:
    value = GroupMetadataValue(
        protocol_type="consumer",
        generation=7,
        protocol=protocol,
        leader=members[0].member_id if members else None,
        current_state_timestamp=123,
        members=tuple(members),
    )
    assert decode_group_metadata_value(encode_group_metadata_value(value, version)) == value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 97),
        ("hello", 99162322),
        ("Aa", 2112),
        ("BB", 2112),
        ("polygenelubricants", -(2**31)),  # the classic Integer.MIN_VALUE hash
        ("\U0001f600", 31 * 0xD83D + 0xDE00),  # hashed as two UTF-16 surrogates
    ],
)
def test_it_reproduces_java_string_hash_code(text: str, expected: int) -> None:
    assert java_string_hash(text) == expected


def test_it_places_groups_with_kafka_utils_abs_of_the_hash() -> None:
    assert partition_for_group("hello", 50) == 99162322 % 50
    # Utils.abs(Integer.MIN_VALUE) is 0, where Math.abs would stay negative.
    assert partition_for_group("polygenelubricants", 50) == 0
    # "my-group": 31-based hash computed by hand with int32 wrap-around is -1906497762.
    assert java_string_hash("my-group") == -1906497762
    assert partition_for_group("my-group", 50) == 1906497762 % 50
