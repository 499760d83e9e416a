"""Consumer groups from kafka-python, aiokafka and kcat: the same coordinator, other clients."""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.structs import TopicPartition as AioTopicPartition
from kafka import KafkaConsumer
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KafkaPythonTopicPartition

from .test_groups_confluent import create_topic, produce, unique

pytestmark = pytest.mark.integration


def kafka_python_consumer(bootstrap: str, group: str, client_id: str = "kafka-python") -> KafkaConsumer:
    return KafkaConsumer(
        bootstrap_servers=bootstrap,
        client_id=client_id,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=200,
        consumer_timeout_ms=200,
    )


def test_a_kafka_python_group_splits_partitions_and_commits(broker) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 4)
    produce(broker.bootstrap, topic, 40, partitions=4)
    members = [
        kafka_python_consumer(broker.bootstrap, group, client_id=f"kafka-python-{i}") for i in range(2)
    ]
    seen: list[bytes] = []
    stop = threading.Event()

    def run(member: KafkaConsumer) -> None:
        # kafka-python blocks inside poll() while its JoinGroup waits for the rebalance,
        # so each member needs its own thread, as in a real deployment. The poll timeout
        # must outlast a rebalance: kafka-python 3.0.12 loses a join that completes between
        # two polls (it never re-enables its heartbeat), whatever the broker does.
        member.subscribe([topic])
        while not stop.is_set():
            for records in member.poll(timeout_ms=1000).values():
                seen.extend(record.value for record in records)

    threads = [threading.Thread(target=run, args=(member,)) for member in members]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            parts = [member.assignment() for member in members]
            if len(seen) >= 40 and all(len(p) == 2 for p in parts) and not parts[0] & parts[1]:
                break
            time.sleep(0.1)
        assert sorted(seen) == sorted(f"m{i}".encode() for i in range(40))
        assert [len(member.assignment()) for member in members] == [2, 2]
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    owned = members[0].assignment()
    members[0].commit({tp: OffsetAndMetadata(10, "", -1) for tp in owned})
    assert {members[0].committed(tp) for tp in owned} == {10}
    for member in members:
        member.close()


def test_an_aiokafka_group_consumes_commits_and_resumes(broker) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 2)
    produce(broker.bootstrap, topic, 10, partitions=2)

    async def consume(count: int) -> tuple[list[bytes], int | None]:
        member = AIOKafkaConsumer(
            topic,
            bootstrap_servers=broker.bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            session_timeout_ms=6000,
            heartbeat_interval_ms=200,
        )
        await member.start()
        try:
            values: list[bytes] = []
            while len(values) < count:
                batches = await asyncio.wait_for(member.getmany(timeout_ms=200), 20)
                for records in batches.values():
                    values.extend(record.value for record in records)
            await member.commit()
            return values, await member.committed(AioTopicPartition(topic, 0))
        finally:
            await member.stop()

    values, committed = asyncio.run(consume(10))
    assert sorted(values) == sorted(f"m{i}".encode() for i in range(10))
    assert committed == 5
    produce(broker.bootstrap, topic, 2, partitions=2)  # m0 and m1 again, after the commit
    values, committed = asyncio.run(consume(2))
    assert sorted(values) == [b"m0", b"m1"]
    assert committed == 6


def test_kcat_consumes_as_a_balanced_group_member(broker, kcat: str) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 3)
    produce(broker.bootstrap, topic, 9, partitions=3)
    completed = subprocess.run(
        [kcat, "-b", broker.bootstrap, "-G", group, "-o", "beginning", "-c", "9", "-f", "%s\\n",
         "-X", "session.timeout.ms=6000", topic],
        capture_output=True,
        timeout=60,
        check=True,
    )  # fmt: skip
    assert sorted(completed.stdout.split()) == sorted(f"m{i}".encode() for i in range(9))
    # kcat commits as it goes; the group's offsets are now at the end of every partition.
    reader = kafka_python_consumer(broker.bootstrap, group)
    try:
        deadline = time.monotonic() + 10
        committed = []
        while time.monotonic() < deadline:
            committed = [reader.committed(KafkaPythonTopicPartition(topic, p)) for p in range(3)]
            if committed == [3, 3, 3]:
                break
            time.sleep(0.2)
        assert committed == [3, 3, 3]
    finally:
        reader.close()
