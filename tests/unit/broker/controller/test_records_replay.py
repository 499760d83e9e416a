"""A metadata log written by the first release (d32902d, before records had versions) replays with today's
typed records into the image that release's own code built from it.

The fixture (data/metadata_log_d32902d) is written by scripts/metadata_log_fixture.py, run against the
release's checkout: its 3-node cluster created, configured, secured, reassigned and deleted topics over
the Kafka protocol, then stopped; `log` is node 1's Raft log as stored and `image.json` the
`MetadataImage.to_snapshot()` of that release's code after replaying it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from broker.controller.image import MetadataImage
from broker.controller.records import decode_entry
from broker.raft.storage import FileStorage

FIXTURE = Path(__file__).parent / "data" / "metadata_log_d32902d"


def replayed(tmp_path: Path) -> MetadataImage:
    shutil.copyfile(FIXTURE / "log", tmp_path / "log")
    image = MetadataImage()
    for entry in FileStorage(tmp_path).load().entries:
        image.apply_entry(entry.index, decode_entry(entry.data))
    return image


def test_the_first_releases_metadata_log_replays_into_the_image_it_built(tmp_path: Path) -> None:
    image = replayed(tmp_path)

    # The same bytes: every record, epoch and security entry as that release held them.
    assert image.to_snapshot() == (FIXTURE / "image.json").read_bytes()
    assert json.loads(image.to_snapshot())["offset"] == image.offset > 0


def test_what_the_old_cluster_was_told_is_in_the_replayed_image(tmp_path: Path) -> None:
    image = replayed(tmp_path)

    assert sorted(image.topic_ids) == ["events", "orders"]  # "doomed" was deleted
    orders = image.topic_by_name("orders")
    assert orders is not None
    assert orders.configs == {"retention.ms": "3600000", "cleanup.policy": "compact"}
    assert all(len(p.replicas) == 3 for p in orders.partitions.values())
    events = image.topic_by_name("events")
    assert events is not None
    moved = events.partitions[0]
    assert (moved.replicas, moved.adding_replicas, moved.removing_replicas) == ((3, 1), (), ())
    assert events.configs == {"max.message.bytes": "65536"}
    assert image.broker_configs["2"] == {"log.cleaner.threads": "2"}
    assert image.group_configs == {"payments": {"consumer.session.timeout.ms": "50000"}}
    assert {acl[3] for acl in image.acls} == {"User:alice", "User:bob"}
    assert {user: sorted(mechanisms) for user, mechanisms in image.scram.items()} == {
        "alice": ["SCRAM-SHA-256"],
        "bob": ["SCRAM-SHA-512"],
    }
    assert image.quotas == {
        (("user", "alice"),): {"producer_byte_rate": 1048576.0},
        (("client-id", None),): {"request_percentage": 50.0},
    }
    assert image.features["metadata.version"] == 29
    assert sorted(image.brokers) == [1, 2, 3]
