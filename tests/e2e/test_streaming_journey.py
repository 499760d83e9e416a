"""Browser journey for a managed streaming job: an org admin creates a stream_topic_sql stream through the
console's form while a real producer writes to its source topic, watches it run on a real Celery worker (queue
`spark-streams`, the supervisor of controlplane/jobs/streams.py) with its progress, exactly-once sink and lag,
stops, starts and restarts it from the console while more records arrive, and a read_committed checker finds
the target topic holding every filtered record once, in order per partition. About 1.5 min."""

import re
import threading
import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer
from playwright.sync_api import Page, expect

from controlplane.jobs import launcher, streams
from controlplane.jobs.choices import DesiredState
from controlplane.jobs.models import StreamingJob
from controlplane.lag.sampler import sample_cluster
from tests.e2e.conftest import screenshot
from tests.e2e.test_groups_and_jobs import Acme, acme, create_topic, sign_in  # noqa: F401 - acme: a fixture
from tests.integration.spark.conftest import (  # noqa: F401 - fixtures: a worker on local Spark
    spark_worker,
    spark_worker_environment,
)
from tests.integration.spark.test_streaming_supervision import read_all

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PARTITIONS = 2
RECORDS_PER_SECOND = 40
# The output keeps each record's partition, so order per partition can be checked against the source's.
FILTER = "SELECT key, value, partition FROM source WHERE cast(value AS string) NOT LIKE '%:skip'"


@pytest.fixture
def spark_worker_queues() -> str:
    return "spark-streams"  # where streams' supervisors run


class SourceProducer(threading.Thread):
    """Produces `<partition>:<sequence>` values to each partition in turn (every 5th marked `:skip`, which the
    stream's SQL filters out) until stopped; remembers what the stream should write, per partition in order."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
        self.topic = topic
        self.stopping = threading.Event()
        self.sequence = 0
        self.expected: dict[int, list[str]] = {p: [] for p in range(PARTITIONS)}
        self.failures: list = []

    def produce_one(self) -> None:
        partition = self.sequence % PARTITIONS
        value = f"{partition}:{self.sequence}" + (":skip" if self.sequence % 5 == 0 else "")
        self.producer.produce(
            self.topic, value=value.encode(), partition=partition, on_delivery=self.delivered
        )
        if not value.endswith(":skip"):
            self.expected[partition].append(value)
        self.sequence += 1

    def run(self) -> None:
        while not self.stopping.is_set():
            for _ in range(RECORDS_PER_SECOND // 10):
                self.produce_one()
            self.producer.poll(0)
            time.sleep(0.1)
        assert self.producer.flush(30) == 0

    def delivered(self, error, _message) -> None:
        if error is not None:
            self.failures.append(error)


@pytest.fixture
def streams_stopped(acme: Acme, spark_worker) -> Iterator[None]:  # noqa: F811 - the imported fixtures
    """After the test, its streams are stopped as the console's Stop does and their drivers have ended, while
    the worker still runs: the worker's shutdown leaves a driver running (the next supervisor would stop it)."""
    yield
    for stream in StreamingJob.objects.filter(team=acme.team, desired_state=DesiredState.RUNNING):
        driver = stream.process_group
        streams.stop_stream(actor=acme.olga, stream=stream)
        wait_for(
            lambda d=driver: not d or not launcher.session_processes(d), 60, "the driver to end", stream.pk
        )


def wait_for(predicate, timeout: float, what: str, stream_id: int | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    state = StreamingJob.objects.filter(pk=stream_id).values("state", "reason", "progress").first()
    raise AssertionError(f"timed out waiting for {what}: {state}")


def test_a_streaming_job_created_in_the_console_runs_exactly_once_shows_its_lag_and_survives_stop_and_start(
    page: Page,
    live_server,
    acme: Acme,  # noqa: F811 - the imported fixture
    broker,
    spark_worker,  # noqa: F811 - the imported fixture
    streams_stopped: None,
) -> None:
    source, target = f"{acme.prefix}clicks", f"{acme.prefix}clicks-kept"
    create_topic(broker.bootstrap, source, PARTITIONS)
    create_topic(broker.bootstrap, target, PARTITIONS)
    producer = SourceProducer(broker.bootstrap, source)
    producer.start()
    started = time.monotonic()
    page.set_viewport_size({"width": 1280, "height": 900})  # a laptop's width
    try:
        sign_in(page, f"{live_server.url}/jobs")
        streams = page.get_by_role("region", name="Streaming jobs")
        streams.get_by_role("button", name="New streaming job…").click()
        form = page.get_by_role("form", name="Create a streaming job")
        expect(form.get_by_label("Job")).to_have_value("stream_topic_sql")
        form.get_by_label("Name", exact=True).fill("clicks-kept")
        form.get_by_label("Cluster").select_option(label="orders")
        form.get_by_label("Source topic (required)").fill(source)
        form.get_by_label("Max records per batch").fill("100")
        form.get_by_label("Target topic (required)").fill(target)
        form.get_by_label("SQL").fill(FILTER)
        form.get_by_label("Trigger seconds").fill("1")
        form.get_by_text("Compute", exact=True).click()
        form.get_by_label("Compute target").fill("local[1]")
        screenshot(page, "stream-create-form")
        form.get_by_role("button", name="Create and start").click()

        expect(page.get_by_role("heading", name="clicks-kept", level=1)).to_be_visible()
        stream_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
        header = page.locator(".page-header")
        expect(header).to_contain_text("stream_topic_sql")
        # The driver starts (seconds of JVM start on a busy machine) and completes micro-batches as records come.
        progress = page.get_by_label("Progress", exact=True)
        wait_for(
            lambda: shown(progress, "Batch").isdigit() and int(shown(progress, "Batch")) >= 3,
            120,
            "three batches",
            stream_id,
        )
        expect(header).to_contain_text("running")
        assert float(shown(progress, "Input rows/s")) > 0
        assert float(shown(progress, "Processed rows/s")) > 0
        assert re.fullmatch(r"[1-9]\d* ms", shown(progress, "Batch duration"))
        sink = shown(progress, "Topic sink")
        assert "exactly-once (one transaction per batch)" in sink, sink
        assert re.search(r"last committed batch \d+", sink), sink
        lag = page.get_by_role("table", name="Lag by partition")
        expect(lag.get_by_role("row")).to_have_count(1 + PARTITIONS)
        screenshot(page, "stream-running")
    finally:
        producer.stopping.set()
        producer.join(60)
    assert not producer.failures

    # Production stopped: the stream catches up and its lag, as the supervisor measures it, reaches zero.
    expect_caught_up(page, source, producer)
    expect(page.get_by_label("Driver log lines")).not_to_be_empty()
    screenshot(page, "stream-caught-up")

    page.get_by_role("button", name="Stop").click()
    expect(header).to_contain_text("stopped", timeout=60_000)
    expect(page.get_by_role("button", name="Start")).to_be_visible()
    screenshot(page, "stream-stopped")
    # Records arrive while it is stopped: started again, it reads them from its checkpoint.
    produce_more(producer, 60)
    page.get_by_role("button", name="Start").click()
    expect(header).to_contain_text("running", timeout=60_000)
    expect_caught_up(page, source, producer)
    screenshot(page, "stream-started-again")

    # Restarted while running: a new driver goes on from the checkpoint; the page counts the restart.
    page.get_by_role("button", name="Restart").click()
    wait_for(lambda: shown(progress, "Restarts").startswith("1"), 60, "the restart", stream_id)
    assert shown(progress, "Restarts").endswith(": Restart requested."), shown(progress, "Restarts")
    produce_more(producer, 40)
    expect_caught_up(page, source, producer)
    expect(header).to_contain_text("running")
    screenshot(page, "stream-restarted")

    # Its committed positions are a consumer group's: the cluster's lag sampling (the beat's task) shows it on
    # the consumer group pages, linked from the stream's page.
    sample_cluster(acme.cluster)
    group = f"streamhub-stream-{stream_id}"
    page.get_by_role("link", name=group).click()
    row = page.get_by_role("table", name="Consumer groups").get_by_role("row", name=group)
    expect(row).to_be_visible()
    screenshot(page, "stream-group")
    row.get_by_role("link", name=group).click()
    expect(page.get_by_role("heading", name=group, level=1)).to_be_visible()
    expect(page.get_by_text("0 messages behind")).to_be_visible()
    screenshot(page, "stream-group-detail")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Jobs").click()
    row = page.get_by_role("table", name="Streaming jobs").get_by_role("row", name="clicks-kept")
    expect(row).to_contain_text("running")
    screenshot(page, "jobs-with-stream")

    written = read_all({"bootstrap.servers": broker.bootstrap}, target, PARTITIONS)
    by_partition = {p: [value for partition, value in written if partition == p] for p in range(PARTITIONS)}
    assert by_partition == producer.expected  # every kept record once, in its source partition's order
    assert page.problems.messages == []
    print(f"streaming journey: {producer.sequence} records produced, {time.monotonic() - started:.0f} s")


def produce_more(producer: SourceProducer, count: int) -> None:
    for _ in range(count):
        producer.produce_one()
    assert producer.producer.flush(15) == 0


def shown(progress, term: str) -> str:
    """The text of the Progress list's entry `term`."""
    return progress.locator(f"dt:text-is('{term}') + dd").inner_text().strip()


def expect_caught_up(page: Page, source: str, producer: SourceProducer) -> None:
    """The lag table shows every partition read to the end of what was produced, with no lag."""
    per_partition = [len(range(p, producer.sequence, PARTITIONS)) for p in range(PARTITIONS)]
    lag = page.get_by_role("table", name="Lag by partition")
    for partition, end in enumerate(per_partition):
        cells = lag.get_by_role("row").nth(partition + 1).get_by_role("cell")
        expect(cells.nth(0)).to_have_text(source)
        expect(cells.nth(2)).to_have_text(f"{end:,}", timeout=90_000)
        expect(cells.nth(3)).to_have_text(f"{end:,}")
        expect(cells.nth(4)).to_have_text("0")
    expect(page.get_by_role("heading", name="Consumer lag · 0 records")).to_be_visible()
