"""Writes the metadata log fixture of an older release: its 3-node cluster is started, administered
through the Kafka protocol (topics, configs, ACLs, SCRAM, quotas, features, a reassignment, a deletion),
stopped, and its metadata log kept with the image that release's own code replays from it.

Run it in an export of the older release (it imports that release's `broker` and `tests.fixtures.cluster`)
with this repository's interpreter:

    mkdir /tmp/release && git archive d32902d | tar -x -C /tmp/release
    cd /tmp/release && PYTHONPATH=. <this repository>/.venv/bin/python \
        <this repository>/scripts/metadata_log_fixture.py \
        <this repository>/tests/unit/broker/controller/data/metadata_log_d32902d

The directory gets `log` (node 1's Raft log, as stored), `image.json` (that release's
`MetadataImage.to_snapshot()` after replaying it) and `release.txt` (the commit that wrote them).
tests/unit/broker/controller/test_records_replay.py replays the log with today's code.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafka import TopicPartition
from kafka.admin import (
    ACL,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ConfigResource,
    ConfigResourceType,
    KafkaAdminClient,
    NewTopic,
    ResourcePattern,
    ResourceType,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from kio.schema.alter_client_quotas.v1.request import AlterClientQuotasRequest, EntityData, EntryData, OpData
from kio.static.primitive import f64

from broker.controller.image import MetadataImage
from broker.controller.records import decode_entry
from broker.raft.storage import FileStorage
from tests.fixtures.cluster import start_cluster
from tests.integration.broker.kafka_wire import WireClient


def wait_for(condition: object, what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.2)


def administer(bootstrap: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        admin.create_topics(
            [
                NewTopic(
                    "orders", 3, 3, topic_configs={"retention.ms": "3600000", "cleanup.policy": "compact"}
                ),
                NewTopic("events", 1, 2),
                NewTopic("doomed", 2, 1),
            ]
        )
        admin.alter_configs(
            [
                ConfigResource(ConfigResourceType.TOPIC, "events", {"max.message.bytes": "65536"}),
                ConfigResource(ConfigResourceType.BROKER, "2", {"log.cleaner.threads": "2"}),
                ConfigResource(
                    ConfigResourceType.GROUP, "payments", {"consumer.session.timeout.ms": "50000"}
                ),
            ],
            incremental=True,
        )
        admin.create_acls(
            [
                ACL(
                    "User:alice",
                    "*",
                    ACLOperation.READ,
                    ACLPermissionType.ALLOW,
                    ResourcePattern(ResourceType.TOPIC, "orders"),
                ),
                ACL(
                    "User:bob",
                    "10.0.0.1",
                    ACLOperation.WRITE,
                    ACLPermissionType.DENY,
                    ResourcePattern(ResourceType.TOPIC, "ev", ACLResourcePatternType.PREFIXED),
                ),
            ]
        )
        admin.alter_user_scram_credentials(
            [
                UserScramCredentialUpsertion("alice", ScramMechanism.SCRAM_SHA_256, "alice-secret"),
                UserScramCredentialUpsertion(
                    "bob", ScramMechanism.SCRAM_SHA_512, "bob-secret", iterations=8192
                ),
            ]
        )
        admin.update_features({"metadata.version": 29})
        partition = TopicPartition("events", 0)
        admin.alter_partition_reassignments({partition: [3, 1]})
        wait_for(lambda: not admin.list_partition_reassignments(), "the reassignment to complete")
        admin.delete_topics(["doomed"])
    finally:
        admin.close()
    quota = AlterClientQuotasRequest(
        entries=(
            EntryData(
                entity=(EntityData(entity_type="user", entity_name="alice"),),
                ops=(OpData(key="producer_byte_rate", value=f64(1048576.0), remove=False),),
            ),
            EntryData(
                entity=(EntityData(entity_type="client-id", entity_name=None),),
                ops=(OpData(key="request_percentage", value=f64(50.0), remove=False),),
            ),
        ),
        validate_only=False,
    )
    with WireClient(bootstrap.split(",")[0]) as client:
        answer = client.request(quota)
    assert all(entry.error_code == 0 for entry in answer.entries), answer


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="metadata-log-fixture-") as base:
        cluster = start_cluster(
            Path(base),
            3,
            properties={"authorizer.class.name": "standard", "super.users": "User:ANONYMOUS"},
        )
        try:
            administer(cluster.bootstrap)
        finally:
            cluster.stop()
        storage = Path(base) / "node-1" / "logs" / "__cluster_metadata"
        if not (storage / "log").exists():
            storage = next(p.parent for p in Path(base).rglob("__cluster_metadata/log") if "node-1" in str(p))
        image = MetadataImage()
        for entry in FileStorage(storage).load().entries:
            image.apply_entry(entry.index, decode_entry(entry.data))
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(storage / "log", out / "log")
        (out / "image.json").write_bytes(image.to_snapshot())
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        (out / "release.txt").write_text(commit.stdout)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
