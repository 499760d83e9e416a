"""Snapshots are written and read a record at a time, in the same bytes `json.dumps` would write; a damaged
snapshot is refused with `ValueError` (never half-loaded into the live image)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable

import pytest

from broker.controller.decisions import TopicRequest
from broker.controller.image import MetadataImage, decode_entry_yielding
from broker.controller.records import PartitionRecord, decode_entry, encode_entry
from tests.unit.broker.controller.test_decisions import cluster, commit


def _image_with_a_topic() -> MetadataImage:
    image, decider = cluster()
    commit(image, decider.create_topic(image, TopicRequest("orders", 700, 3)))
    return image


def test_a_snapshot_written_in_slices_is_the_same_bytes_and_loads_back_to_the_same_image() -> None:
    image = _image_with_a_topic()

    data = asyncio.run(image.to_snapshot_yielding())

    assert data == image.to_snapshot()
    assert json.loads(data) == {
        "offset": image.offset,
        "records": [r.to_json() for r in image.snapshot_records()],
    }
    assert MetadataImage.from_snapshot(data).to_snapshot() == data


def test_a_snapshot_in_another_json_layout_is_read_whole() -> None:
    image = _image_with_a_topic()
    document = json.loads(image.to_snapshot())
    reordered = json.dumps({"records": document["records"], "offset": document["offset"]}, indent=1).encode()

    assert MetadataImage.from_snapshot(reordered).to_snapshot() == image.to_snapshot()


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-1],
        lambda data: data[: len(data) // 2],
        lambda data: b'{"offset": 3}',
        lambda data: data + b"{}",
        lambda data: data.replace(b'"records": [', b'"records": [7, ', 1),
        lambda data: data.replace(b"}, {", b"} {", 1),
    ],
    ids=[
        "no closing brace",
        "cut in half",
        "no records",
        "trailing garbage",
        "a record that is not an object",
        "no comma",
    ],
)
def test_a_damaged_snapshot_is_refused(damage: Callable[[bytes], bytes]) -> None:
    data = damage(_image_with_a_topic().to_snapshot())

    with pytest.raises(ValueError, match="malformed snapshot"):
        MetadataImage.from_snapshot(data)


def test_large_entries_decode_a_slice_at_a_time_to_the_same_records() -> None:
    topic_id = uuid.uuid4()
    records = [PartitionRecord(topic_id, p, (1, 2, 3), (1, 2, 3), 1) for p in range(5000)]
    data = encode_entry(records, {})

    assert asyncio.run(decode_entry_yielding(data)) == decode_entry(data) == records
    assert asyncio.run(decode_entry_yielding(b"")) == []
