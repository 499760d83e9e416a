"""Browser journey for issue 32's console (acceptance 4): a real ShareConsumer (confluent-kafka, pinned 2.16)
accepts some records of a topic and holds the others; a new org admin finds the share group by its type, sees
its backlog and in-flight records per share-partition, changes a delivery setting, creates an alert rule on the
backlog that the next real sampling run fires, and once the consumer is gone resets the group's offsets with
a preview. Only the console is used in the journey (no REST calls); axe checks the share group's page."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import redis
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, NewTopic
from playwright.sync_api import Page, expect

from controlplane.alerts.choices import AlertState
from controlplane.alerts.models import Alert
from controlplane.clusters import services as clusters
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.groups.models import ConsumerGroup
from controlplane.kafka import share_groups as kafka_share
from controlplane.lag.sampler import sample_cluster
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType
from tests.e2e.conftest import screenshot
from tests.e2e.test_accessibility import _audit
from tests.integration.groups.streams_member import join_streams_group

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long test password"
RECORDS = 10
ACCEPTED = 4


@dataclass
class Acme:
    cluster: Cluster
    prefix: str  # team Payments' topic and group prefix


@dataclass
class Queue:
    cluster: Cluster
    topic: str
    group: str
    consumer: ShareConsumer
    held: int  # records the consumer acquired and holds unacknowledged


@pytest.fixture
def acme(django_user_model, broker, settings, redis_url: str) -> Acme:
    """Acme's new admin olga; team Payments owns a topic and group prefix on the session's broker
    (registered as Acme's cluster `orders`), whose groups the lag sampler stores."""
    settings.REDIS_URL = redis_url
    client = redis.Redis.from_url(redis_url)
    stale = list(client.scan_iter("lag:*", count=1000))
    if stale:  # database ids repeat between tests
        client.delete(*stale)
    user = django_user_model.objects.create_user("olga", "olga@example.com", PASSWORD)
    organization = tenancy.create_organization(actor=Actor.system(), name="Acme")
    tenancy.add_org_member(actor=Actor.system(), organization=organization, user=user, is_org_admin=True)
    team = tenancy.create_team(actor=Actor.system(), organization=organization, name="Payments")
    prefix = f"payments-{uuid.uuid4().hex[:6]}."
    for resource_type in (PrefixResourceType.TOPIC, PrefixResourceType.GROUP):
        tenancy.add_prefix(actor=Actor.system(), team=team, resource_type=resource_type, prefix=prefix)
    cluster = clusters.register_external_cluster(
        actor=Actor(user=user), organization=organization, name="orders", bootstrap_servers=broker.bootstrap
    )
    return Acme(cluster, prefix)


@pytest.fixture
def queue(acme: Acme, broker) -> Iterator[Queue]:
    """A share group of team Payments that reads from the earliest offset; its consumer has accepted ACCEPTED
    records and holds the rest of the first batch it got."""
    cluster, prefix = acme.cluster, acme.prefix
    topic, group = f"{prefix}jobs", f"{prefix}workers"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(10)
    kafka_share.alter_group_configs(
        connection_for(cluster), group_id=group, set_configs={"share.auto.offset.reset": "earliest"}
    )
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    for index in range(RECORDS):
        producer.produce(topic, value=f"job-{index}".encode(), partition=index % 2)
    assert producer.flush(10) == 0
    consumer = ShareConsumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": group, "share.acknowledgement.mode": "explicit"}
    )
    consumer.subscribe([topic])
    batch: list = []
    deadline = time.monotonic() + 60
    while len(batch) <= ACCEPTED and time.monotonic() < deadline:
        batch = [m for m in consumer.poll(0.5) if m.error() is None]
    assert len(batch) > ACCEPTED, f"the first batch had {len(batch)} records"
    for message in batch[:ACCEPTED]:
        consumer.acknowledge(message, AcknowledgeType.ACCEPT)
    consumer.commit_sync()
    yield Queue(cluster, topic, group, consumer, held=len(batch) - ACCEPTED)
    consumer.close()


def sign_in(page: Page, url: str) -> None:
    page.goto(url)
    page.get_by_label("Username").fill("olga")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def test_an_admin_sees_a_share_groups_backlog_and_in_flight_records_its_alert_fires_and_offsets_are_reset(
    page: Page, live_server, queue: Queue
) -> None:
    backlog = RECORDS - ACCEPTED
    sample_cluster(queue.cluster)  # the lag sampler's run, as its beat would start it
    group = ConsumerGroup.objects.get(cluster=queue.cluster, name=queue.group)
    assert (group.group_type, group.total_lag) == ("share", backlog)

    sign_in(page, f"{live_server.url}/groups")
    filters = page.get_by_role("form", name="Filter consumer groups")
    filters.get_by_label("Type").select_option("share")
    filters.get_by_role("button", name="Apply filters").click()
    row = page.get_by_role("table", name="Consumer groups").get_by_role("row", name=queue.group)
    expect(row).to_contain_text("Share (queue)")
    expect(row).to_contain_text(str(backlog))
    screenshot(page, "share-groups-list")
    row.get_by_role("link", name=queue.group).click()

    expect(page.get_by_role("heading", name=queue.group, level=1)).to_be_visible()
    expect(page.get_by_text(f"{backlog} messages not yet acknowledged")).to_be_visible()
    partitions = page.get_by_role("table", name="Share-partitions")
    expect(partitions.get_by_role("row")).to_have_count(3)
    # Columns: topic, partition, start offset, log end, in flight, acknowledged, backlog.
    shown = []
    for index in (1, 2):
        cells = partitions.get_by_role("row").nth(index).get_by_role("cell")
        expect(cells.nth(3)).to_have_text(str(RECORDS // 2))
        start, in_flight, acknowledged, lag = (int(cells.nth(i).inner_text()) for i in (2, 4, 5, 6))
        assert in_flight == RECORDS // 2 - start
        assert acknowledged + lag == in_flight
        shown.append(lag)
    assert sum(shown) == backlog
    members = page.get_by_role("table", name="Members")
    expect(members.get_by_role("row")).to_have_count(2)
    expect(members).to_contain_text(f"{queue.topic}-0, {queue.topic}-1")
    screenshot(page, "share-group-backlog")
    found: dict[str, list[str]] = {}
    _audit(page, "share-group", found)
    assert found == {}

    # A delivery setting, changed by the admin on the group's page.
    settings_form = page.get_by_role("form", name="Delivery settings")
    settings_form.get_by_label("share.record.lock.duration.ms").fill("20000")
    settings_form.get_by_role("button", name="Save delivery settings").click()
    expect(settings_form.get_by_role("status")).to_have_text("Saved.")
    configs = kafka_share.describe_group_configs(connection_for(queue.cluster), queue.group)
    assert configs["share.record.lock.duration.ms"] == ("20000", "GROUP_CONFIG")

    # A rule on the group's backlog; the next sampling run fires it.
    page.goto(f"{live_server.url}/alerts/rules")
    page.get_by_role("button", name="New rule").click()
    form = page.get_by_role("dialog", name="New alert rule")
    form.get_by_label("Name").fill("jobs pile up")
    form.get_by_label("Team", exact=True).select_option(label="Payments")
    form.get_by_label("Cluster").select_option(label="orders")
    form.get_by_label("Consumer groups").fill(queue.group)
    form.get_by_label("Metric").select_option("lag_messages")
    form.get_by_label("Comparison").select_option("gt")
    form.get_by_label("Threshold", exact=True).fill(str(backlog - 1))
    form.get_by_label("For (seconds)").fill("0")
    form.get_by_label("Severity").select_option("critical")
    form.get_by_role("button", name="Create rule").click()
    expect(
        page.get_by_role("table", name="Alert rules").get_by_role("row", name="jobs pile up")
    ).to_be_visible()
    sample_cluster(queue.cluster)
    assert Alert.objects.get(rule__name="jobs pile up").state == AlertState.FIRING
    page.get_by_role("link", name="Active").click()
    firing = page.get_by_role("table", name="Active alerts").get_by_role("row", name=queue.group)
    expect(firing).to_contain_text("firing")
    expect(firing).to_contain_text("jobs pile up")
    screenshot(page, "share-group-alert-firing")

    # The consumer leaves (its held records become available again); the reset is previewed and applied.
    queue.consumer.close()
    connection = connection_for(queue.cluster)
    deadline = time.monotonic() + 30
    while kafka_share.describe_share_group(connection, queue.group).members and time.monotonic() < deadline:
        time.sleep(0.2)
    before = {
        p: o.start_offset for (_t, p), o in kafka_share.share_group_offsets(connection, queue.group).items()
    }
    page.goto(f"{live_server.url}/groups/{group.pk}")
    reset = page.get_by_role("form", name="Describe the offset reset")
    reset.get_by_label("Strategy").select_option("earliest")
    reset.get_by_role("button", name="Preview reset").click()
    preview = page.get_by_role("table", name="Reset preview")
    expect(preview.get_by_role("row")).to_have_count(3)
    for partition in (0, 1):
        cells = preview.get_by_role("row").nth(partition + 1).get_by_role("cell")
        expect(cells.nth(2)).to_have_text(str(before[partition]))
        expect(cells.nth(3)).to_have_text("0")
    screenshot(page, "share-group-reset-preview")
    page.get_by_role("button", name="Apply reset").click()
    confirm = page.get_by_role("alertdialog", name=f"Reset offsets of {queue.group}")
    confirm.get_by_role("textbox").fill(queue.group)
    confirm.get_by_role("button", name="Apply reset").click()
    expect(page.get_by_text("Reset applied to 2 partitions")).to_be_visible()
    after = kafka_share.share_group_offsets(connection, queue.group)
    assert {p: o.start_offset for (_t, p), o in after.items()} == {0: 0, 1: 0}
    expect(page.get_by_text(f"{RECORDS} messages not yet acknowledged")).to_be_visible()
    screenshot(page, "share-group-reset-applied")
    assert page.problems.messages == []


def test_an_admin_sees_a_streams_groups_member_and_its_tasks(
    page: Page, live_server, acme: Acme, broker
) -> None:
    topic, group = f"{acme.prefix}clicks", f"{acme.prefix}counter"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(10)
    member = join_streams_group(acme.cluster, group, topic)
    assert member.active_partitions == [0, 1]
    sample_cluster(acme.cluster)
    row = ConsumerGroup.objects.get(cluster=acme.cluster, name=group)
    assert row.group_type == "streams"

    sign_in(page, f"{live_server.url}/groups")
    filters = page.get_by_role("form", name="Filter consumer groups")
    filters.get_by_label("Type").select_option("streams")
    filters.get_by_role("button", name="Apply filters").click()
    page.get_by_role("table", name="Consumer groups").get_by_role("link", name=group).click()

    expect(page.get_by_role("heading", name=group, level=1)).to_be_visible()
    members = page.get_by_role("table", name="Streams members")
    expect(members.get_by_role("row")).to_have_count(2)
    # Columns: client id, process, host, epoch, active, standby and warm-up tasks.
    cells = members.get_by_role("row").nth(1).get_by_role("cell")
    expect(cells.nth(1)).to_have_text(member.member_id)
    expect(cells.nth(3)).to_have_text(str(member.epoch))
    expect(cells.nth(4)).to_have_text("0: 0, 1")
    expect(cells.nth(5)).to_have_text("—")
    expect(cells.nth(6)).to_have_text("—")
    topology = page.get_by_role("table", name="Subtopologies")
    expect(topology.get_by_role("row")).to_have_count(2)
    expect(topology.get_by_role("row").nth(1)).to_contain_text(topic)
    # The page is whole once the sampled lag history is drawn.
    expect(page.get_by_role("img", name="Lag in messages over the last 1h").locator("canvas")).to_be_visible()
    screenshot(page, "streams-group")
    page.evaluate("document.documentElement.dataset.theme = 'dark'")
    screenshot(page, "streams-group-dark")
    found: dict[str, list[str]] = {}
    _audit(page, "streams-group", found)
    assert found == {}
    assert page.problems.messages == []
