"""A managed streaming job end to end: created through the API, supervised by a real Celery worker, its driver
(spark-submit on local[1]) killed with SIGKILL while records are produced (first between producing a batch and
committing its transaction, then at any moment), restarted from its checkpoint by the supervisor; a
read_committed checker reads the output topic for lost, duplicated and reordered records, and a read_uncommitted
reader finds the killed transaction's records (aborted). Runs about 3 min (records produced for at least 75 s,
two kills); bench/streaming_soak.py runs it longer with more kills. The same run checks the job's log: the job's
own lines by default, Spark's at WARN in the driver's whole log."""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from controlplane.acls.models import AclBinding
from controlplane.jobs import launcher, streams
from controlplane.jobs.models import StreamingJob
from controlplane.lag.models import GroupLag
from controlplane.lag.sampler import sample_cluster_exclusively
from controlplane.spark.streaming import PAUSE_BEFORE_COMMIT_ENV
from tests.fixtures.engines import engine_params
from tests.fixtures.servers import wait_until

KEYS = 6
# bench/streaming_soak.py runs this longer and kills the driver more often.
PRODUCE_SECONDS = float(os.environ.get("STREAMING_SOAK_SECONDS", "75"))
KILLS = int(os.environ.get("STREAMING_SOAK_KILLS", "2"))
KILL_INTERVAL_SECONDS = float(os.environ.get("STREAMING_SOAK_KILL_INTERVAL", "0"))

# A driver's start (spark-submit, Spark's session, the first micro-batch) took 50 s to 2.5 min here at load
# 15-30, on either engine: a wait for a driver lasts while its log keeps growing (Spark logs its startup step by
# step), up to DRIVER_START_CAP_SECONDS, and fails early once the log stood still for DRIVER_STALL_SECONDS.
DRIVER_START_CAP_SECONDS = 420
DRIVER_STALL_SECONDS = 120
pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(300 + PRODUCE_SECONDS + (KILLS + 1) * (DRIVER_START_CAP_SECONDS + 60)),
]
RECORDS_PER_SECOND = 100
JOB_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ streamhub: ")
SPARK_INFO = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d INFO ")


@pytest.fixture
def spark_worker_queues() -> str:
    return "spark-streams"


@pytest.fixture
def spark_worker_environment() -> dict[str, str]:
    # The topic sink's test hook: each batch waits this long between producing and committing, announcing
    # it in the driver's log, so a kill can land inside an open transaction.
    return {PAUSE_BEFORE_COMMIT_ENV: "1"}


OPEN_TRANSACTION = re.compile(r"^streamhub: batch (\d+) produced \((\d+) records\), committing in")


def announced_transactions(log: Path) -> dict[int, int]:
    """{batch: records} of every batch the driver's log shows produced and about to be committed."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return {}
    return {int(m[1]): int(m[2]) for m in map(OPEN_TRANSACTION.match, lines) if m}


def wait_for_driver(predicate: Callable[[], bool], log: Path, what: str) -> None:
    """Waits for `predicate` while the driver's log grows (see DRIVER_START_CAP_SECONDS)."""
    started = last_change = time.monotonic()
    last_size = -1
    while not predicate():
        now = time.monotonic()
        size = log.stat().st_size if log.exists() else 0
        if size != last_size:
            last_size, last_change = size, now
        if now - last_change > DRIVER_STALL_SECONDS:
            raise TimeoutError(f"{what}: the driver's log stood still for {DRIVER_STALL_SECONDS} s")
        if now - started > DRIVER_START_CAP_SECONDS:
            raise TimeoutError(f"{what}: not within {DRIVER_START_CAP_SECONDS} s")
        time.sleep(1)


def wait_for_open_transaction(log: Path, timeout: float) -> tuple[int, int]:
    """(batch, records) of the next batch announced from now on: its transaction is open for a second."""
    seen = announced_transactions(log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fresh = {b: n for b, n in announced_transactions(log).items() if b not in seen and n > 0}
        if fresh:
            return max(fresh.items())
        time.sleep(0.05)
    raise AssertionError("no batch was seen between produce and commit")


class SourceProducer(threading.Thread):
    """Produces `<key>:<sequence>` values (every 7th marked `skip`, which the job filters out) until stopped."""

    def __init__(self, config: dict, topic: str) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({**config, "linger.ms": 5, "enable.idempotence": True})
        self.topic = topic
        self.stopping = threading.Event()
        self.sent: dict[str, list[int]] = defaultdict(list)
        self.failures: list = []

    def run(self) -> None:
        sequence = 0
        while not self.stopping.is_set():
            started = time.monotonic()
            for _ in range(RECORDS_PER_SECOND // 10):
                key = f"key{sequence % KEYS}"
                value = f"{key}:{sequence}" + (":skip" if sequence % 7 == 0 else "")
                self.producer.produce(
                    self.topic, key=key.encode(), value=value.encode(), on_delivery=self.delivered
                )
                if sequence % 7:
                    self.sent[key].append(sequence)
                sequence += 1
            self.producer.poll(0)
            time.sleep(max(0.0, 0.1 - (time.monotonic() - started)))
        assert self.producer.flush(30) == 0

    def delivered(self, error, _message) -> None:
        if error is not None:
            self.failures.append(error)


def read_all(
    config: dict, topic: str, partitions: int, isolation: str = "read_committed"
) -> list[tuple[int, str]]:
    """(partition, value) of every record of the topic, each partition in offset order."""
    consumer = Consumer(
        {
            **config,
            "group.id": f"spark-check-{time.monotonic_ns()}",
            "enable.partition.eof": True,
            "isolation.level": isolation,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    records, ended, deadline = [], set(), time.monotonic() + 60
    while len(ended) < partitions and time.monotonic() < deadline:
        for message in consumer.consume(5000, 0.5):
            if message.error():
                ended.add(message.partition())
            else:
                records.append((message.partition(), message.value().decode()))
    consumer.close()
    assert len(ended) == partitions, "the output topic was not read to its end"
    return records


def check_output(sent: dict[str, list[int]], records: list[tuple[int, str]]) -> dict[str, int]:
    """Lost, duplicated and reordered records of the output against what was produced (per key, in order)."""
    received: dict[str, list[int]] = defaultdict(list)
    for _partition, value in records:
        body, suffix = value.rsplit("|", 1)
        assert suffix == "out", value
        key, sequence = body.split(":")[:2]
        received[key].append(int(sequence))
    lost = duplicated = reordered = 0
    for key, expected in sent.items():
        got = received.get(key, [])
        counts = Counter(got)
        lost += sum(1 for sequence in expected if sequence not in counts)
        duplicated += sum(n - 1 for n in counts.values() if n > 1)
        reordered += sum(1 for a, b in itertools.pairwise(got) if b < a)
    expected_sets = {key: set(sequences) for key, sequences in sent.items()}
    unexpected = sum(1 for key, got in received.items() for s in got if s not in expected_sets.get(key, ()))
    return {"lost": lost, "duplicated": duplicated, "reordered": reordered, "unexpected": unexpected}


@pytest.mark.parametrize("engine", engine_params(slow_on_apache_kafka=True), indirect=True)
def test_a_killed_streaming_driver_is_restarted_from_its_checkpoint_without_loss_or_duplicates(setup):
    source = setup.topic("stream-in", 3, [])
    target = setup.topic("stream-out", 3, [])
    producer = SourceProducer(setup.admin_config, source)
    producer.start()
    producing_since = time.monotonic()
    try:
        response = setup.client.post(
            "/api/v1/streaming-jobs/",
            {
                "team": setup.team.pk,
                "cluster": setup.cluster.pk,
                "name": "orders-filter",
                "job": "stream_topic_sql",
                "parameters": {
                    "source": {"topic": source, "max_offsets_per_trigger": 1000},
                    "target_topic": target,
                    "sql": "SELECT key, concat(cast(value AS string), '|out') AS value FROM source "
                    "WHERE cast(value AS string) NOT LIKE '%:skip'",
                    "trigger_seconds": 1,
                    "resources": {"driver_memory": "512m"},
                },
                "service_account": setup.account.pk,
                "password": setup.password,
                "compute_target": "local[1]",
            },
            format="json",
        )
        assert response.status_code == 201, response.content
        stream_id = response.json()["id"]

        def stream() -> dict:
            return setup.client.get(f"/api/v1/streaming-jobs/{stream_id}/").json()

        driver_log = (
            streams.stream_directory(StreamingJob.objects.get(pk=stream_id)) / "driver" / launcher.LOG_FILE
        )

        def explained(predicate, timeout: float | None, what: str) -> None:
            """Waits `timeout` seconds, or while the driver works (wait_for_driver) when None."""
            try:
                if timeout is None:
                    wait_for_driver(predicate, driver_log, what)
                else:
                    wait_until(predicate, timeout, what, interval=1)
            except TimeoutError as error:
                log = setup.client.get(
                    f"/api/v1/streaming-jobs/{stream_id}/log/?source=spark&lines=60"
                ).json()["lines"]
                raise AssertionError(f"{error}: {stream()}\n" + "\n".join(log)) from None

        explained(lambda: (stream()["progress"]["batch_id"] or 0) >= 3, None, "three micro-batches")
        before = stream()
        assert before["state"] == "running"
        assert before["restart_count"] == 0
        assert before["progress"]["input_rows_per_second"] > 0
        assert before["progress"]["batch_duration_ms"] > 0

        assert before["progress"]["sink"]["mode"] == "transactional"
        # The supervisor granted the service account the stream's transactional id and marker group.
        granted = AclBinding.objects.filter(
            cluster=setup.cluster, resource_name=f"streamhub-stream-{stream_id}", managed=True
        )
        assert sorted((b.resource_type, b.operation) for b in granted) == [
            ("GROUP", "READ"),
            ("TRANSACTIONAL_ID", "DESCRIBE"),
            ("TRANSACTIONAL_ID", "WRITE"),
        ]

        driver = None
        killed_in_transaction: list[tuple[int, int]] = []
        for kill in range(1, KILLS + 1):
            # SIGKILL to the driver (spark-submit's JVM; the Python driver program is its child) mid-run: the
            # first time inside an open transaction (the sink's test hook holds each one open for a second),
            # then wherever it is.
            job = StreamingJob.objects.get(pk=stream_id)
            assert job.process_group != driver
            driver, last_batch = job.process_group, stream()["progress"]["batch_id"]
            if kill == 1:
                # The whole driver at once (the JVM and its Python program, which holds the transaction).
                killed_in_transaction.append(wait_for_open_transaction(driver_log, 60))
                os.killpg(driver, signal.SIGKILL)
            else:
                os.kill(driver, signal.SIGKILL)
            explained(lambda k=kill: stream()["restart_count"] >= k, 60, "the supervisor to see the failure")
            restarted = stream()
            assert restarted["restarts"][-1]["requested"] is False
            assert restarted["restarts"][-1]["delay_seconds"] >= 1
            explained(
                lambda last=last_batch: (
                    stream()["state"] == "running" and (stream()["progress"]["batch_id"] or 0) > last
                ),
                None,
                "the restarted driver's batches",
            )
            time.sleep(KILL_INTERVAL_SECONDS)
        time.sleep(max(0.0, PRODUCE_SECONDS - (time.monotonic() - producing_since)))
    finally:
        producer.stopping.set()
        producer.join(60)
    assert not producer.failures

    # The stream catches up: its lag, as the API shows it, reaches zero on every partition.
    def lag() -> dict:
        return setup.client.get(f"/api/v1/streaming-jobs/{stream_id}/lag/").json()

    wait_until(lambda: lag()["batch_id"] is not None and lag()["total_lag"] == 0, 120, "zero lag", interval=1)
    shown = lag()
    assert [p["partition"] for p in shown["partitions"]] == [0, 1, 2]
    assert all(p["committed_offset"] == p["log_end_offset"] > 0 for p in shown["partitions"])

    # The committed offsets are mirrored to the stream's consumer group: the cluster's lag sampling sees it.
    def sampled_group_lag() -> GroupLag | None:
        sample_cluster_exclusively(setup.cluster.pk)
        return GroupLag.objects.filter(cluster=setup.cluster, group__name=shown["group"]).first()

    wait_until(
        lambda: (row := sampled_group_lag()) is not None and row.lag_messages == 0, 60, "the group's lag"
    )
    # The transactional sink's marker group holds the positions (the supervisor mirrors nothing).
    assert shown["group"] == f"streamhub-stream-{stream_id}"
    assert not GroupLag.objects.filter(
        cluster=setup.cluster, group__name=f"spark-stream-{stream_id}"
    ).exists()

    committed = read_all(setup.admin_config, target, 3)
    result = check_output(producer.sent, committed)
    total = sum(len(v) for v in producer.sent.values())
    # The transaction the first kill left open was aborted: its records are in the log, only read_uncommitted
    # shows them (the batch was produced again, whole, in a new transaction).
    uncommitted = read_all(setup.admin_config, target, 3, isolation="read_uncommitted")
    _batch, aborted_at_least = killed_in_transaction[0]
    assert len(uncommitted) >= len(committed) + aborted_at_least
    log = setup.client.get(f"/api/v1/streaming-jobs/{stream_id}/log/?source=spark&lines=5000").json()["lines"]
    skipped = [line for line in log if line.endswith("skipped") and line.startswith("streamhub: batch")]
    report = {
        **result,
        "expected": total,
        "read_committed": len(committed),
        "read_uncommitted": len(uncommitted),
        "killed_in_transaction": killed_in_transaction,
        "kills": KILLS,
        "skipped_after_restart": skipped,
        "seconds": PRODUCE_SECONDS,
    }
    print(f"streaming checker: {json.dumps(report)}")
    assert result == {"lost": 0, "duplicated": 0, "reordered": 0, "unexpected": 0}

    last_driver = StreamingJob.objects.get(pk=stream_id).process_group
    response = setup.client.post(f"/api/v1/streaming-jobs/{stream_id}/stop/")
    assert response.status_code == 202
    wait_until(lambda: stream()["state"] == "stopped", 60, "the stream to stop", interval=0.5)
    assert not launcher.session_processes(last_driver)
    assert StreamingJob.objects.get(pk=stream_id).credential_encrypted == ""
    assert not any(setup.password in line for line in log)

    # The log the API shows by default is the job's own lines (started, rows per batch, what the sink wrote);
    # the driver's whole log, asked for with source=spark, has Spark's lines at WARN and no librdkafka telemetry.
    own = setup.client.get(f"/api/v1/streaming-jobs/{stream_id}/log/").json()["lines"]
    assert own, log[-50:]
    assert all(JOB_LINE.match(line) for line in own), own
    whole_own = setup.client.get(f"/api/v1/streaming-jobs/{stream_id}/log/?lines=5000").json()["lines"]
    assert any("stream_topic_sql started on Spark" in line for line in whole_own), whole_own[:20]
    assert any(re.search(r"batch \d+: [1-9]\d* rows read", line) for line in whole_own), whole_own[-50:]
    committed_line = rf"[1-9]\d* records into {re.escape(target)}, committed in one transaction"
    assert any(re.search(committed_line, line) for line in whole_own), whole_own[-50:]
    assert [line for line in log if SPARK_INFO.match(line)] == []
    assert [line for line in log if "TELEMETRY" in line or "Telemetry" in line] == []
    assert any(line.startswith("streamhub: ") for line in log)
    assert setup.client.get(f"/api/v1/streaming-jobs/{stream_id}/log/?source=all").status_code == 400
