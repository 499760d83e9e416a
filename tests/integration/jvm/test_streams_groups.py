"""A Kafka Streams 4.2 application with `group.protocol=streams` (KIP-1071): the broker assigns its tasks.

The exactly_once_v2 windowed count (jvm/ecosystem/src/streamhub/ecosystem/WindowedCount.java) runs on our broker
and, as the oracle, on the session's Apache Kafka: one instance processes a topic, a second joins (the tasks are
shared between them), the first leaves (the second takes everything). Read read_committed, every key-window shows
the counts 1..n exactly once, and StreamsGroupDescribe shows the group as the broker sees it.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kio.schema.streams_group_describe.v0.request import StreamsGroupDescribeRequest

from tests.fixtures.jvm_ecosystem import STREAMS_MAIN, java_command
from tests.fixtures.servers import wait_until
from tests.integration.broker.kafka_wire import WireClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

KEYS = 8
PER_STEP = 200
PARTITIONS = 4


class StreamsApp:
    """One instance of the application (its own JVM and state directory)."""

    def __init__(
        self, work: Path, bootstrap: str, application_id: str, source: str, sink: str, name: str
    ) -> None:
        properties = work / "client.properties"
        properties.write_text(f"bootstrap.servers={bootstrap}\ngroup.protocol=streams\n")
        self.log = work / f"{name}.log"
        with open(self.log, "wb") as output:
            self.process = subprocess.Popen(
                java_command(
                    STREAMS_MAIN, str(properties), application_id, source, sink, str(work / name), heap="256m"
                ),
                stdout=output,
                stderr=subprocess.STDOUT,
            )

    def running(self) -> bool:
        return "REBALANCING -> RUNNING" in self.log.read_text(errors="replace")

    def stop(self) -> None:
        """SIGTERM: the application closes and leaves the group."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


def _produce(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for index in range(count):
        producer.produce(topic, key=f"k{index % KEYS}", value="x")
    assert producer.flush(15) == 0


class OutputReader:
    """Every (key-window, count) update of the output, read_committed, kept across calls."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"checker-{uuid.uuid4().hex[:8]}",
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
        self.consumer.subscribe([topic])
        self.updates: list[tuple[str, int]] = []

    def read_until(self, count: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while len(self.updates) < count and time.monotonic() < deadline:
            message = self.consumer.poll(0.2)
            if message is not None and message.error() is None:
                self.updates.append((message.key().decode(), int(message.value())))

    def close(self) -> None:
        self.consumer.close()


def _describe(bootstrap: str, group_id: str) -> Any:
    with WireClient(bootstrap) as client:
        answer = client.request(
            StreamsGroupDescribeRequest(group_ids=(group_id,), include_authorized_operations=False)
        )
    return answer.groups[0]


def _active_tasks(group: Any) -> list[list[int]]:
    return sorted(
        sorted(p for entry in member.assignment.active_tasks for p in entry.partitions)
        for member in group.members
    )


# The oracle run is as long as ours (two JVMs, ~50 s): left out of CI's default run; -m apache_kafka runs it.
@pytest.fixture(
    params=[
        "ours",
        pytest.param("apache_kafka", marks=[pytest.mark.apache_kafka, pytest.mark.apache_kafka_slow]),
    ]
)
def target(request: pytest.FixtureRequest) -> str:
    """The bootstrap of our broker or of the session's Apache Kafka (the oracle)."""
    server = request.getfixturevalue("broker" if request.param == "ours" else "apache_kafka")
    return str(server.bootstrap)


def test_members_join_and_leave_and_every_record_counts_once(target: str, tmp_path: Path) -> None:
    suffix = uuid.uuid4().hex[:8]
    source, sink, application_id = f"sg-in-{suffix}", f"sg-out-{suffix}", f"sg-app-{suffix}"
    admin = AdminClient({"bootstrap.servers": target})
    for name in (source, sink):
        admin.create_topics([NewTopic(name, PARTITIONS, 1)])[name].result(15)
    reader = OutputReader(target, sink)
    first = StreamsApp(tmp_path, target, application_id, source, sink, "first")
    second: StreamsApp | None = None
    try:
        wait_until(
            lambda: first.running() or first.process.poll() is not None, 90, "the first instance to run", 0.3
        )
        assert first.process.poll() is None, first.tail()
        assert _active_tasks(_describe(target, application_id)) == [[0, 1, 2, 3]]
        # The second instance starts (its JVM takes a while) and joins while the first processes a step.
        second = StreamsApp(tmp_path, target, application_id, source, sink, "second")
        _produce(target, source, PER_STEP)
        reader.read_until(PER_STEP, 60)
        wait_until(
            lambda: (
                [len(tasks) for tasks in _active_tasks(_describe(target, application_id))] == [2, 2]
                or (second is not None and second.process.poll() is not None)
            ),
            90,
            "the tasks to be shared by the two instances",
            0.3,
        )
        _produce(target, source, PER_STEP)
        reader.read_until(2 * PER_STEP, 60)

        first.stop()
        wait_until(
            lambda: _active_tasks(_describe(target, application_id)) == [[0, 1, 2, 3]],
            60,
            "the second to take all",
            0.3,
        )
        _produce(target, source, PER_STEP)
        reader.read_until(3 * PER_STEP, 60)
        group = _describe(target, application_id)
        assert (group.error_code, group.group_state, len(group.members)) == (0, "Stable", 1)
    finally:
        first.stop()
        if second is not None:
            second.stop()
        reader.close()

    seen = Counter(reader.updates)
    assert [update for update, times in seen.items() if times > 1] == [], "an update seen twice"
    by_window: dict[str, list[int]] = {}
    for key_window, count in reader.updates:
        by_window.setdefault(key_window, []).append(count)
    for key_window, counts in by_window.items():
        assert sorted(counts) == list(range(1, len(counts) + 1)), f"{key_window}: {sorted(counts)}"
    assert len(reader.updates) == 3 * PER_STEP
