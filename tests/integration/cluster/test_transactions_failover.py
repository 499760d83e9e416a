"""Exactly-once consume-transform-produce on a three-broker cluster while the transaction
coordinator's broker is killed with SIGKILL (issue #22; the loop and checker are eos_checker.py).

The input and output partitions' leaders are spread over the brokers, so markers go to other brokers
than the coordinator. The group is chosen so that the same broker also coordinates it. A third of the way
in, that broker is killed: the producer finds the new transaction and group coordinators (which loaded
the partitions' state), and the run carries on. Nothing may be lost, duplicated or reordered.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from broker.transactions.state_format import partition_for_transactional_id
from tests.fixtures.cluster import LocalCluster
from tests.integration.cluster.eos_checker import (
    TRANSACTIONAL_PRODUCER_SETTINGS,
    EosRun,
    check_output,
    fill_source,
    group_coordinated_by,
    process_all,
)
from tests.integration.cluster.fault_checker import create_topic, partition_states, wait_for_isr

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

STATE_PARTITIONS = 3  # transaction.state.log.num.partitions in the test defaults
# librdkafka's debug lines of the producer a failure shows: the requests of the last seconds.
CLIENT_LOG_LINES = 300
# How long the transaction after the coordinator's broker is gone may take. librdkafka looks for the group's new
# coordinator only when one of its connections changes state (rdkafka_coord.c), which the harness's 5 s idle
# timeout makes happen: 4-9 s on a quiet machine, 40 s once on the loaded CI machine (the commit then waited for
# the dead broker's handle to terminate). Without the harness's settings it blocked for 10 minutes.
SECOND_TRANSACTION_S = 90


class RecentLines(logging.Handler):
    """Keeps the last lines a client logged, for a failure to show what it was waiting for."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.lines: deque[str] = deque(maxlen=size)
        self._last_message = ""
        self._repeats = 0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        # A decommissioned broker's thread logs the same TERMINATE line every millisecond while something
        # still holds it: kept as one line and a count, it cannot push the requests out of the window.
        if message == self._last_message:
            self._repeats += 1
            return
        self._flush_repeats()
        self._last_message = message
        self.lines.append(f"{record.created:.3f} {message}")

    def _flush_repeats(self) -> None:
        if self._repeats:
            self.lines.append(f"      (the line above repeated {self._repeats} more times)")
            self._repeats = 0

    def text(self) -> str:
        self._flush_repeats()
        return "\n".join(self.lines)


def transaction_coordinator(cluster: LocalCluster, transactional_id: str) -> int:
    state_partition = partition_for_transactional_id(transactional_id, STATE_PARTITIONS)
    return partition_states(cluster, "__transaction_state")[state_partition][0]


def create_coordinator_topics(cluster: LocalCluster, transactional_id: str) -> None:
    """`__transaction_state` and `__consumer_offsets` exist (with full ISRs) once a transactional
    producer and a group have looked for their coordinators."""
    Producer(cluster.client_config(**{"transactional.id": transactional_id})).init_transactions(30)
    lookup = Consumer(cluster.client_config(**{"group.id": "coordinator-topics"}))
    try:
        lookup.list_topics(timeout=10)
        lookup.committed([TopicPartition("coordinator-topics", 0)], 30)
    finally:
        lookup.close()
    for topic in ("__transaction_state", "__consumer_offsets"):
        assert wait_for_isr(cluster, topic, timeout_s=30), partition_states(cluster, topic)


def test_exactly_once_while_the_transaction_coordinator_is_killed(cluster3: LocalCluster) -> None:
    create_coordinator_topics(cluster3, "eos-app-1")
    doomed = transaction_coordinator(cluster3, "eos-app-1")
    group = group_coordinated_by(cluster3, doomed, "eos-app")
    run = EosRun(cluster3, "eos-in", "eos-out", group, "eos-app-1", partitions=3, records=900)
    create_topic(cluster3, run.source, run.partitions)
    create_topic(cluster3, run.sink, run.partitions)
    fill_source(run)
    killed: list[int] = []

    def kill_the_coordinator(committed: int) -> None:
        if not killed and committed >= run.records // 3:
            killed.append(doomed)
            cluster3.node(doomed).kill9()

    process_all(run, limit_s=60, on_progress=kill_the_coordinator)
    assert killed
    # The coordinators moved: another broker loaded the transactional id's state partition.
    assert "coordinating the 1 transactional ids" in "".join(
        node.log_text() for node in cluster3.brokers if node.node_id != doomed
    )
    assert check_output(run) == (0, 0, 0), f"{run.aborts} aborted transactions: {run.errors}"


@pytest.mark.timeout(300)  # the set-up waits (up to 100 s under load) and SECOND_TRANSACTION_S
def test_send_offsets_finds_the_group_coordinator_after_its_broker_is_gone(cluster3: LocalCluster) -> None:
    """The stall seen under load (librdkafka 2.16, issues #5511/#5456): the producer knows the group's
    coordinator from an earlier transaction, that broker is killed, and by the next
    send_offsets_to_transaction a Metadata answer without it has retired the producer's connection to
    it. With the harness's producer settings the transaction completes well within its timeout (see
    SECOND_TRANSACTION_S); without them it blocked until some connection of the producer changed state (10 min)."""
    create_topic(cluster3, "moved-in", 3)
    create_coordinator_topics(cluster3, "moved-app-1")
    kept = transaction_coordinator(cluster3, "moved-app-1")
    doomed = next(node.node_id for node in cluster3.brokers if node.node_id != kept)
    group = group_coordinated_by(cluster3, doomed, "moved-app")
    # The producer's own account of its requests (which broker it asked for the group, what came back),
    # shown when the second transaction stalls: the brokers log nothing about requests they answer.
    client_log = RecentLines(CLIENT_LOG_LINES)
    logger = logging.getLogger(f"{__name__}.producer")
    logger.addHandler(client_log)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    producer = Producer(
        cluster3.client_config(
            **{
                "transactional.id": "moved-app-1",
                **TRANSACTIONAL_PRODUCER_SETTINGS,
                # Longer than the SECOND_TRANSACTION_S this test allows the second transaction: on a loaded
                # machine the harness's 10 s let the coordinator abort it (and fence the producer) mid-test.
                "transaction.timeout.ms": "120000",
                "debug": "eos,broker,protocol",
            }
        ),
        logger=logger,
    )
    producer.init_transactions(30)
    consumer = Consumer(
        cluster3.client_config(
            **{"group.id": group, "enable.auto.commit": "false", "session.timeout.ms": "6000"}
        )
    )
    consumer.subscribe(["moved-in"])
    try:
        deadline = time.monotonic() + 30
        while not consumer.assignment():
            assert time.monotonic() < deadline, "the consumer got no assignment"
            consumer.poll(0.2)

        # When each step of a transaction ended, for a slow one to say which step it was.
        steps: list[str] = []

        def commit_offsets(offset: int) -> None:
            begun = time.monotonic()
            producer.begin_transaction()
            offsets = [TopicPartition("moved-in", p, offset) for p in range(3)]
            producer.send_offsets_to_transaction(
                offsets, consumer.consumer_group_metadata(), SECOND_TRANSACTION_S
            )
            steps.append(f"offsets {offset}: sent after {time.monotonic() - begun:.1f} s")
            producer.commit_transaction(SECOND_TRANSACTION_S)
            steps.append(f"offsets {offset}: committed after {time.monotonic() - begun:.1f} s")

        commit_offsets(1)  # the producer now knows the group's coordinator: the broker to be killed
        cluster3.node(doomed).kill9()
        # The offsets partition moves once the controller fences the broker; the producer's next
        # Metadata answer no longer lists it, which retires its connection to that broker.
        deadline = time.monotonic() + 30
        while doomed in producer.list_topics(timeout=10).brokers:
            assert time.monotonic() < deadline, "the killed broker is still listed"
            time.sleep(0.2)
        outcome: list[BaseException | None] = []
        started = time.monotonic()

        def second_transaction() -> None:
            try:
                commit_offsets(2)
                outcome.append(None)
            except BaseException as exc:  # reported by the test thread below
                outcome.append(exc)

        worker = threading.Thread(target=second_transaction, daemon=True)
        worker.start()
        # The client's log lines reach the logger only when the producer is polled (while the worker
        # thread is inside send_offsets_to_transaction too: librdkafka's calls are thread safe).
        while worker.is_alive() and time.monotonic() - started < SECOND_TRANSACTION_S:
            producer.poll(0.2)
        assert not worker.is_alive(), (
            f"the second transaction blocked for {SECOND_TRANSACTION_S} s ({steps}); "
            f"the producer's last lines:\n{client_log.text()}"
        )
        assert outcome == [None], f"{outcome} ({steps}); the producer's last lines:\n{client_log.text()}"
        committed = consumer.committed([TopicPartition("moved-in", p) for p in range(3)], 20)
        assert [tp.offset for tp in committed] == [2, 2, 2]
    finally:
        consumer.close()
        logger.removeHandler(client_log)
