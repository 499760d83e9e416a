"""MirrorMaker 2 (4.2.0, dedicated mode) between our broker (SASL/SCRAM, ACLs) and Apache Kafka (the `apache_kafka`
fixture), both ways: a topic of ours reaches Apache Kafka as `ours.<topic>` with its records and its consumer
group's offsets translated, and a topic of Apache Kafka's reaches us as `apache.<topic>`.
"""

from __future__ import annotations

import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from controlplane.apache_kafka import runtime
from tests.fixtures.apache_kafka import ApacheKafkaNode
from tests.fixtures.jvm_ecosystem import JvmDriver, SecureTarget, java_command
from tests.fixtures.servers import wait_until
from tests.integration.jvm.test_kafka_tools import create_topic

pytestmark = pytest.mark.integration

RECORDS = 300


@pytest.fixture
def mirror_maker(
    secure_single_target: SecureTarget,
    apache_kafka: ApacheKafkaNode,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, str, str, Path]]:
    suffix = uuid.uuid4().hex[:8]
    ours_topic, apache_topic, group = f"mm2-ours-{suffix}", f"mm2-apache-{suffix}", f"mm2-group-{suffix}"
    work = tmp_path_factory.mktemp("mirror-maker")
    ours = {f"ours.{key}": value for key, value in secure_single_target.client_properties().items()}
    settings = {
        "clusters": "ours, apache",
        **ours,
        "apache.bootstrap.servers": apache_kafka.bootstrap,
        "ours->apache.enabled": "true",
        "ours->apache.topics": ours_topic,
        "ours->apache.groups": group,
        "apache->ours.enabled": "true",
        "apache->ours.topics": apache_topic,
        "apache->ours.groups": "none",
        # One node each: every internal topic with one replica.
        "replication.factor": "1",
        **{
            f"{name}.replication.factor": "1"
            for name in ("offset-syncs.topic", "checkpoints.topic", "heartbeats.topic")
        },
        **{f"{name}.storage.replication.factor": "1" for name in ("config", "offset", "status")},
        "sync.group.offsets.enabled": "true",
        "sync.group.offsets.interval.seconds": "1",
        "emit.checkpoints.interval.seconds": "1",
        "refresh.topics.interval.seconds": "1",
        "refresh.groups.interval.seconds": "1",
        # An offset sync per record: the group's offsets then translate exactly.
        "offset.lag.max": "0",
        "plugin.discovery": "service_load",
    }
    properties = work / "mm2.properties"
    properties.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
    log = open(work / "mm2.log", "wb")  # noqa: SIM115 - the child process owns it
    process = subprocess.Popen(
        java_command(runtime.TOOL_MAIN_CLASSES["connect-mirror-maker"], str(properties), heap="384m"),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    try:
        yield ours_topic, apache_topic, group, work
    finally:
        process.kill()
        process.wait()
        print(f"\n=== MirrorMaker 2 log ===\n{(work / 'mm2.log').read_text(errors='replace')[-5000:]}")


def test_mirror_maker_2_replicates_a_topic_and_its_group_offsets_both_ways(
    jvm_driver: JvmDriver,
    secure_single_target: SecureTarget,
    apache_kafka: ApacheKafkaNode,
    mirror_maker: tuple[str, str, str, Path],
) -> None:
    ours_topic, apache_topic, group, work = mirror_maker
    target = secure_single_target
    apache = SecureTarget("apache", apache_kafka.sasl_bootstrap, "admin-secret", 1, work)
    create_topic(jvm_driver, target, ours_topic, 2)
    create_topic(jvm_driver, apache, apache_topic, 2)
    jvm_driver.check(
        "produce", properties=target.client_properties(), topic=ours_topic, count=RECORDS, keys=8
    ).ok()
    jvm_driver.check(
        "produce", properties=apache.client_properties(), topic=apache_topic, count=RECORDS, keys=8
    ).ok()
    consumed = jvm_driver.check(
        "consume", properties=target.client_properties(), topic=ours_topic, group=group, count=RECORDS
    ).ok()
    ends = {int(partition): len(rows) for partition, rows in consumed.result.items()}

    def end_offsets(side: SecureTarget, topic: str) -> dict[int, int]:
        out = jvm_driver.tool(
            "kafka-get-offsets",
            "--bootstrap-server",
            side.bootstrap,
            "--command-config",
            side.config_file(),
            "--topic",
            topic,
        ).out
        return {
            int(partition): int(offset)
            for partition, offset in re.findall(rf"^{re.escape(topic)}:(\d+):(\d+)$", out, re.M)
        }

    wait_until(
        lambda: sum(end_offsets(apache, f"ours.{ours_topic}").values()) == RECORDS,
        timeout=120,
        what="our topic on Apache Kafka",
        interval=1,
    )
    wait_until(
        lambda: sum(end_offsets(target, f"apache.{apache_topic}").values()) == RECORDS,
        timeout=60,
        what="Apache Kafka's topic on our broker",
        interval=1,
    )
    mirrored = jvm_driver.check(
        "consume",
        properties=target.client_properties(),
        topic=f"apache.{apache_topic}",
        group=f"mm2-check-{uuid.uuid4().hex[:8]}",
        count=RECORDS,
    ).ok()
    assert sorted(row[1] for rows in mirrored.result.values() for row in rows) == sorted(
        f"k{index % 8}:{index}" for index in range(RECORDS)
    )

    def translated() -> dict[int, int]:
        out = jvm_driver.tool(
            "kafka-consumer-groups",
            "--bootstrap-server",
            apache.bootstrap,
            "--command-config",
            apache.config_file(),
            "--describe",
            "--group",
            group,
            "--offsets",
        ).out
        rows = re.findall(rf"^{group}\s+ours\.{re.escape(ours_topic)}\s+(\d+)\s+(\d+)\s", out, re.M)
        return {int(partition): int(current) for partition, current in rows}

    wait_until(
        lambda: translated() == {p: n for p, n in ends.items() if n},
        timeout=90,
        what="the group's offsets on Apache Kafka",
        interval=1,
    )
