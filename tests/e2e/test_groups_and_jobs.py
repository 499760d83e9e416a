"""Browser journeys for consumer groups and Spark jobs: a real confluent-kafka group shows its lag, health and
lag chart, and its offsets are reset with a preview, applied and undone on the broker; a key_skew job launched
from the console runs on a real Celery worker (queue `spark`) while its progress bar moves, and its results show
as tables and charts."""

import collections
import time
import uuid
from dataclasses import dataclass

import pytest
import redis
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from playwright.sync_api import Page, expect

from controlplane.clusters import services as clusters
from controlplane.clusters.models import Cluster
from controlplane.jobs.models import JobRun
from controlplane.lag.sampler import sample_cluster
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType
from controlplane.tenancy.models import Team
from tests.e2e.conftest import screenshot
from tests.integration.spark.conftest import (  # noqa: F401 - fixtures: a worker on `spark`, on local Spark
    spark_worker,
    spark_worker_environment,
    spark_worker_queues,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long test password"
PRODUCED_PER_PARTITION = 10
CONSUMED_PER_PARTITION = 3


@dataclass
class Acme:
    olga: Actor
    team: Team
    cluster: Cluster
    prefix: str


@pytest.fixture
def acme(django_user_model, broker, settings, redis_url: str) -> Acme:
    """Team Payments of Acme owns fresh topic and group prefixes on the session's broker, registered as Acme's
    cluster; olga administers Acme. Lag history goes to the session's Redis."""
    settings.REDIS_URL = redis_url
    # Database ids repeat between tests: earlier tests' lag history must not show up in this one's charts.
    client = redis.Redis.from_url(redis_url)
    stale = list(client.scan_iter("lag:*", count=1000))
    if stale:
        client.delete(*stale)
    user = django_user_model.objects.create_user("olga", "olga@example.com", PASSWORD)
    organization = tenancy.create_organization(actor=Actor.system(), name="Acme")
    tenancy.add_org_member(actor=Actor.system(), organization=organization, user=user, is_org_admin=True)
    team = tenancy.create_team(actor=Actor.system(), organization=organization, name="Payments")
    prefix = f"payments-{uuid.uuid4().hex[:6]}."
    for resource_type in (PrefixResourceType.TOPIC, PrefixResourceType.GROUP):
        tenancy.add_prefix(actor=Actor.system(), team=team, resource_type=resource_type, prefix=prefix)
    olga = Actor(user=user)
    cluster = clusters.register_external_cluster(
        actor=olga, organization=organization, name="orders", bootstrap_servers=broker.bootstrap
    )
    return Acme(olga=olga, team=team, cluster=cluster, prefix=prefix)


def sign_in(page: Page, url: str, username: str = "olga") -> None:
    page.goto(url)
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)


def produce(bootstrap: str, topic: str, records: list[tuple[int, bytes | None, bytes]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for partition, key, value in records:
        producer.produce(topic, key=key, value=value, partition=partition)
    assert producer.flush(15) == 0


def commit_as_group(config: dict, topic: str, group: str, offsets: dict[int, int]) -> None:
    """A real group member reads until it has seen `offsets[p]` records of each partition p, commits those
    offsets and leaves the group."""
    consumer = Consumer(
        {
            **config,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
        }
    )
    consumer.subscribe([topic])
    seen: collections.Counter[int] = collections.Counter()
    deadline = time.monotonic() + 60
    while any(seen[p] < n for p, n in offsets.items()) and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            seen[message.partition()] += 1
    assert all(seen[p] >= n for p, n in offsets.items()), seen
    consumer.commit(offsets=[TopicPartition(topic, p, n) for p, n in offsets.items()], asynchronous=False)
    consumer.close()


def committed_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
        return [entry.offset for entry in found]
    finally:
        consumer.close()


def test_a_consumer_group_shows_its_lag_and_chart_and_its_offsets_are_reset_with_a_preview_then_undone(
    page: Page, live_server, acme: Acme, broker
) -> None:
    topic, group = f"{acme.prefix}orders", f"{acme.prefix}billing"
    create_topic(broker.bootstrap, topic, 2)
    produce(
        broker.bootstrap, topic, [(p, None, b"order") for p in (0, 1) for _ in range(PRODUCED_PER_PARTITION)]
    )
    config = {"bootstrap.servers": broker.bootstrap}
    commit_as_group(config, topic, group, {0: CONSUMED_PER_PARTITION, 1: CONSUMED_PER_PARTITION})
    before = committed_offsets(broker.bootstrap, group, topic, 2)
    assert before == [CONSUMED_PER_PARTITION, CONSUMED_PER_PARTITION]
    # Two sampling runs, as the beat would make them: the chart needs points over time.
    sample_cluster(acme.cluster)
    time.sleep(1.1)
    sample_cluster(acme.cluster)
    lag = 2 * (PRODUCED_PER_PARTITION - CONSUMED_PER_PARTITION)

    sign_in(page, f"{live_server.url}/groups")
    expect(page.get_by_role("heading", name="Consumer groups", level=1)).to_be_visible()
    row = page.get_by_role("table", name="Consumer groups").get_by_role("row", name=group)
    expect(row).to_contain_text("Payments")
    expect(row.get_by_role("cell").nth(7)).to_have_text(
        "stopped"
    )  # health (after the type column), from the lag sampler
    expect(row).to_contain_text(str(lag))
    screenshot(page, "groups-list")
    row.get_by_role("link", name=group).click()

    expect(page.get_by_role("heading", name=group, level=1)).to_be_visible()
    expect(page.get_by_text(f"{lag} messages behind")).to_be_visible()
    partitions = page.get_by_role("table", name="Partition lag")
    expect(partitions.get_by_role("row")).to_have_count(3)
    health = page.get_by_role("region", name="Health and lag history")
    # Nobody consumes and records wait: the sampler calls the group stopped, and says why.
    expect(health.get_by_role("table", name="Partition health")).to_contain_text("stopped")
    chart = health.get_by_role("img", name="Lag in messages over the last 1h")
    expect(chart.locator("canvas")).to_be_visible()
    expect(chart).to_contain_text("total")  # the legend
    health.get_by_text("Show the data as a table").click()
    data = health.get_by_role("table", name="Lag in messages over the last 1h data")
    expect(data.get_by_role("row")).to_have_count(3)
    expect(data.get_by_role("row").nth(2)).to_contain_text(str(lag))
    health.get_by_role("button", name="Lag in seconds").click()
    expect(health.get_by_role("img", name="Lag in seconds over the last 1h")).to_be_visible()
    screenshot(page, "group-detail-lag-chart")
    # Longer ranges read the minute rollups, which only exist once a whole minute of samples has passed.
    health.get_by_role("button", name="24h").click()
    expect(health.get_by_text("No rollups in this range yet")).to_be_visible()
    assert "range=24h" in page.url

    reset = page.get_by_role("form", name="Describe the offset reset")
    reset.get_by_label("Strategy").select_option("earliest")
    reset.get_by_role("button", name="Preview reset").click()
    preview = page.get_by_role("table", name="Reset preview")
    expect(preview.get_by_role("row")).to_have_count(3)
    for partition in (0, 1):
        cells = preview.get_by_role("row").nth(partition + 1).get_by_role("cell")
        expect(cells.nth(2)).to_have_text(str(before[partition]))
        expect(cells.nth(3)).to_have_text("0")
    screenshot(page, "group-reset-preview")
    # Nothing changes before it is applied.
    assert committed_offsets(broker.bootstrap, group, topic, 2) == before

    page.get_by_role("button", name="Apply reset").click()
    confirm = page.get_by_role("alertdialog", name=f"Reset offsets of {group}")
    confirm.get_by_role("textbox").fill(group)
    confirm.get_by_role("button", name="Apply reset").click()
    expect(page.get_by_text("Reset applied to 2 partitions")).to_be_visible()
    assert committed_offsets(broker.bootstrap, group, topic, 2) == [0, 0]
    expect(page.get_by_text(f"{2 * PRODUCED_PER_PARTITION} messages behind")).to_be_visible()
    history = page.get_by_role("table", name="Reset history")
    expect(history.get_by_role("row").nth(1)).to_contain_text("Earliest offset")

    page.get_by_role("button", name="Undo last reset").click()
    undo = page.get_by_role("alertdialog", name="Undo the last reset")
    undo.get_by_role("textbox").fill(group)
    undo.get_by_role("button", name="Undo reset").click()
    expect(page.get_by_text("The last reset was undone")).to_be_visible()
    assert committed_offsets(broker.bootstrap, group, topic, 2) == before
    expect(page.get_by_text(f"{lag} messages behind")).to_be_visible()
    expect(page.get_by_role("button", name="Undo last reset")).to_have_count(0)
    screenshot(page, "group-reset-undone")
    assert page.problems.messages == []


def test_a_spark_job_launched_from_the_console_shows_its_progress_and_results(
    page: Page,
    live_server,
    acme: Acme,
    broker,
    spark_worker,  # noqa: F811 - the imported fixture
) -> None:
    topic = f"{acme.prefix}clicks"
    create_topic(broker.bootstrap, topic, 2)
    records = [
        (i % 2, None if i % 9 == 0 else b"user-%d" % (i % 3 if i % 2 else 0), b"v" * 8) for i in range(200)
    ]
    produce(broker.bootstrap, topic, records)
    keys = collections.Counter(key.decode() for _, key, _ in records if key is not None)
    top = sorted(keys.items(), key=lambda item: (-item[1], item[0]))[:2]

    sign_in(page, f"{live_server.url}/jobs")
    expect(page.get_by_role("heading", name="Jobs", level=1)).to_be_visible()
    expect(page.get_by_text("No runs yet")).to_be_visible()
    page.get_by_role("button", name="Launch key_skew").click()
    form = page.get_by_role("form", name="Launch a job")
    form.get_by_label("Cluster").select_option(label="orders")
    form.get_by_label("Topic (required)").fill(topic)
    form.get_by_label("Top", exact=True).fill("2")
    form.get_by_text("Compute and limits").click()
    form.get_by_label("Compute target").fill("local[2]")
    screenshot(page, "job-launch-form")
    form.get_by_role("button", name="Launch").click()

    expect(page.get_by_role("heading", name="key_skew #", level=1)).to_be_visible()
    bar = page.get_by_role("progressbar")
    expect(bar).to_be_visible()
    # Follow the bar as the page polls it: it must show the run unfinished before it ends done.
    states = set()
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        text = bar.get_attribute("aria-valuetext") or ""
        states.add(text.split(" ")[0].rstrip(":"))
        if text.startswith(("Done", "Failed")):
            break
        time.sleep(0.3)
    final = bar.get_attribute("aria-valuetext") or ""
    assert final.startswith("Done"), (states, [run.reason for run in JobRun.objects.all()])
    assert states & {"Queued", "Starting", *{f"{n}%" for n in range(100)}}, states
    expect(bar).to_have_attribute("aria-valuenow", "100")
    expect(page.locator(".page-header")).to_contain_text("succeeded")

    top_keys = page.get_by_role("table", name="Top keys")
    for index, (key, count) in enumerate(top):
        expect(top_keys.get_by_role("row").nth(index + 1)).to_contain_text(key)
        expect(top_keys.get_by_role("row").nth(index + 1)).to_contain_text(str(count))
    per_partition = page.get_by_role("list", name="Records per partition: records by partition")
    expect(per_partition.get_by_role("listitem")).to_have_count(2)
    expect(page.get_by_label("Metrics")).to_contain_text("200")
    expect(page.get_by_label("Driver log lines")).not_to_be_empty()
    screenshot(page, "job-run-results")

    page.get_by_role("link", name="all runs").click()
    runs = page.get_by_role("table", name="Job runs")
    expect(runs.get_by_role("row").nth(1)).to_contain_text("succeeded")
    screenshot(page, "jobs-list")
    assert page.problems.messages == []
