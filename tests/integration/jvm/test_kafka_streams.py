"""A Kafka Streams application (4.2.0, exactly_once_v2, a windowed count with its changelog) on 3 nodes of our
broker with SASL/SCRAM and ACLs, surviving kill -9 of the broker leading its output, with exact output.

The application (jvm/ecosystem/src/streamhub/ecosystem/WindowedCount.java) runs in its own JVM and writes one
update per input record; read_committed, a key-window with n input records must show the counts 1..n, each
exactly once: a lost record leaves a gap, a duplicate shows twice, a zombie's write past the abort shows too.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient

from tests.fixtures.jvm_ecosystem import STREAMS_MAIN, JvmDriver, SecureTarget, java_command
from tests.fixtures.servers import wait_until
from tests.integration.jvm.test_kafka_tools import create_topic

pytestmark = pytest.mark.integration

RECORDS_PER_HALF = 1000
KEYS = 16


def read_committed(
    target: SecureTarget, topic: str, expected: int, timeout_s: float
) -> list[tuple[str, int]]:
    """Every (key, count) update in `topic`, read_committed from the start, once `expected` arrived (or the time
    ran out), then half a second more to see anything past it."""
    assert target.cluster is not None
    consumer = Consumer(
        target.cluster.client_config(
            **{
                "group.id": f"checker-{uuid.uuid4().hex[:8]}",
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
    )
    consumer.subscribe([topic])
    updates: list[tuple[str, int]] = []
    deadline = time.monotonic() + timeout_s
    settle_until: float | None = None
    try:
        while time.monotonic() < (settle_until or deadline):
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                updates.append((message.key().decode(), int(message.value())))
            if settle_until is None and len(updates) >= expected:
                settle_until = time.monotonic() + 0.5
    finally:
        consumer.close()
    return updates


@pytest.fixture
def streams_app(
    jvm_driver: JvmDriver, secure_cluster_target: SecureTarget, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str, subprocess.Popen[bytes]]]:
    target = secure_cluster_target
    source, counts = f"streams-in-{uuid.uuid4().hex[:8]}", f"streams-out-{uuid.uuid4().hex[:8]}"
    create_topic(jvm_driver, target, source, 4)
    create_topic(jvm_driver, target, counts, 4)
    work = tmp_path_factory.mktemp("streams-app")
    log = open(work / "app.log", "wb")  # noqa: SIM115 - the child process owns it
    process = subprocess.Popen(
        java_command(
            STREAMS_MAIN,
            target.config_file(),
            f"windowed-count-{uuid.uuid4().hex[:8]}",
            source,
            counts,
            str(work / "state"),
            heap="384m",
        ),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    try:
        yield source, counts, process
    finally:
        process.kill()
        process.wait()
        print(f"\n=== Streams application log ===\n{(work / 'app.log').read_text(errors='replace')[-6000:]}")


def test_exactly_once_windowed_count_survives_kill_9_of_a_broker(
    jvm_driver: JvmDriver,
    secure_cluster_target: SecureTarget,
    streams_app: tuple[str, str, subprocess.Popen[bytes]],
) -> None:
    target, (source, counts, process) = secure_cluster_target, streams_app
    cluster = target.cluster
    assert cluster is not None
    produce = {
        "properties": target.client_properties(),
        "topic": source,
        "count": RECORDS_PER_HALF,
        "keys": KEYS,
    }
    jvm_driver.check("produce", **produce).ok()
    wait_until(
        lambda: len(read_committed(target, counts, 1, 2.0)) > 0 or process.poll() is not None,
        timeout=90,
        what="the Streams application to write its first counts",
        interval=0.5,
    )
    assert process.poll() is None, "the Streams application stopped"

    # kill -9 the leader of the output's first partition while the application works through the input.
    metadata = AdminClient(cluster.client_config()).list_topics(counts, timeout=10)
    victim = cluster.node(metadata.topics[counts].partitions[0].leader)
    victim.kill9()
    try:
        jvm_driver.check("produce", **produce).ok()
        updates = read_committed(target, counts, 2 * RECORDS_PER_HALF, 150)
    finally:
        victim.start()
        cluster.wait_ready()
    assert process.poll() is None, "the Streams application stopped"

    seen = Counter(updates)
    duplicates = [update for update, times in seen.items() if times > 1]
    assert not duplicates, f"updates seen twice: {duplicates[:10]}"
    by_window: dict[str, list[int]] = {}
    for key_window, count in updates:
        by_window.setdefault(key_window, []).append(count)
    for key_window, values in by_window.items():
        assert sorted(values) == list(range(1, len(values) + 1)), f"{key_window}: counts {sorted(values)}"
    assert sum(len(values) for values in by_window.values()) == 2 * RECORDS_PER_HALF
    assert {key_window.split("@")[0] for key_window in by_window} == {f"k{index}" for index in range(KEYS)}
