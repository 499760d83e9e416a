"""An admin sets up a replication flow from the console and sees its lag: Olga (org admin of Acme) opens
Replication, creates a flow copying Payments' orders topic from Acme's SASL + ACL broker to a second broker of
Acme's (a Connect cluster is attached to it), opens the flow, watches its connectors run and its lag per
partition fall to 0 while a producer writes, sets its lag alert threshold, and pauses it — the alert fires and the
sampled lag history shows the records behind — and resumes it — the alert resolves. Screenshots land in
test-artifacts/screenshots/replication-*.png.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from playwright.sync_api import Locator, Page, expect

from controlplane.alerts import services as alerts
from controlplane.clusters import services as clusters
from controlplane.clusters.models import Cluster
from controlplane.connect import services as connect
from controlplane.connect.models import ConnectCluster
from controlplane.lag.sampler import sample_cluster
from controlplane.replication import services as replication
from controlplane.replication.models import ReplicationFlow
from tests.e2e.conftest import screenshot
from tests.e2e.test_access import SecurePayments, secure_payments, sign_in  # noqa: F401 - a fixture
from tests.fixtures.broker import ADMIN_PASSWORD, ADMIN_USER, SecureBrokerProcess
from tests.fixtures.servers import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RECORDS = 300


def lag_total(lag: Locator) -> int:
    """The records behind, summed over the lag table's partitions as the page shows them now."""
    rows = lag.get_by_role("row").all()[1:]
    return sum(int(row.get_by_role("cell").nth(5).inner_text()) for row in rows)


@pytest.fixture
def disaster_site(
    secure_payments: SecurePayments,  # noqa: F811
    secure_broker_factory: Any,
    settings: Any,
    tmp_path: Path,
) -> Iterator[tuple[Cluster, ConnectCluster, SecureBrokerProcess]]:
    """A second broker registered as Acme's, with a one-worker Connect cluster attached to it."""
    settings.DATA_DIR = tmp_path
    broker = secure_broker_factory()
    target = clusters.register_external_cluster(
        actor=secure_payments.olga,
        organization=secure_payments.team.organization,
        name=f"dr-{secure_payments.uid}",
        bootstrap_servers=broker.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-512",
        username=ADMIN_USER,
        password=ADMIN_PASSWORD,
    )
    attached = connect.attach_connect_cluster(
        actor=secure_payments.olga, cluster=target, name="mirror", worker_count=1
    )
    try:
        assert attached.status == "running", attached.status_reason
        yield target, attached, broker
    finally:
        for flow in ReplicationFlow.objects.exclude(state="deleted"):
            replication.delete_flow(actor=secure_payments.olga, flow=flow)
        connect.delete_connect_cluster(actor=secure_payments.olga, connect_cluster=attached)


@pytest.mark.timeout(420)
def test_an_admin_sets_up_a_replication_flow_and_sees_its_lag(
    page: Page,
    live_server,
    secure_payments: SecurePayments,  # noqa: F811
    secure_broker: SecureBrokerProcess,
    disaster_site: tuple[Cluster, ConnectCluster, SecureBrokerProcess],
    settings: Any,
    redis_url: str,
) -> None:
    world = secure_payments
    target, _connect_cluster, _broker = disaster_site
    topic = f"{world.topic_prefix}orders-{uuid.uuid4().hex[:4]}"
    admin = AdminClient(secure_broker.client_config())
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    producer = Producer({**secure_broker.client_config(), "linger.ms": 5})
    for index in range(RECORDS):
        producer.produce(topic, key=str(index % 4).encode(), value=f"order {index}".encode())
    assert producer.flush(30) == 0

    sign_in(page, f"{live_server.url}/replication")
    expect(page.get_by_role("heading", name="Replication", level=1)).to_be_visible()
    page.get_by_role("button", name="New flow").click()
    dialog = page.get_by_role("dialog", name="New replication flow")
    dialog.get_by_label("Name", exact=True).fill("dr")
    dialog.get_by_label("Source cluster").select_option(label=world.cluster.name)
    dialog.get_by_label("Target cluster").select_option(label=target.name)
    # A pattern reaching beyond the team's prefixes is refused next to the field.
    dialog.get_by_label("Topics pattern").fill(".*")
    dialog.get_by_role("button", name="Create flow").click()
    expect(dialog.get_by_text("may match names outside the team")).to_be_visible(timeout=30_000)
    screenshot(page, "replication-1-refused-pattern")
    dialog.get_by_label("Topics pattern").fill(world.topic_prefix.replace(".", "\\.") + "orders-.*")
    dialog.get_by_label("Groups pattern").fill(f"pay-{world.uid}-.*")
    dialog.get_by_label("Checkpoint interval (s)").fill("5")
    dialog.get_by_role("button", name="Create flow").click()
    expect(dialog).to_be_hidden(timeout=120_000)

    row = page.get_by_role("row").filter(has_text="dr")
    expect(row).to_contain_text("running")
    row.get_by_role("button", name="dr", exact=True).click()
    expect(page.get_by_test_id("connector-source")).to_have_text("RUNNING", timeout=90_000)
    lag = page.get_by_role("table", name="Lag per partition")
    expect(lag.get_by_role("row")).to_have_count(3, timeout=30_000)  # the header and two partitions
    expect(lag).to_contain_text(f"dr.{topic}")
    # Caught up: both partitions' replicas hold every record, 0 records behind.
    for partition in (0, 1):
        cells = lag.get_by_role("row").nth(partition + 1).get_by_role("cell")
        expect(cells.nth(5)).to_have_text("0", timeout=90_000)
    total = sum(
        int(lag.get_by_role("row").nth(partition + 1).get_by_role("cell").nth(4).inner_text())
        for partition in (0, 1)
    )
    assert total == RECORDS
    screenshot(page, "replication-2-caught-up")

    # The flow's lag alert: its threshold set on the page, Payments' rule on replication lag by flow name; the
    # lag sampler's runs of the target (Celery beat's, in production) sample the flow and judge the alert.
    settings.REDIS_URL = redis_url
    alerting_started = time.monotonic()
    detail = page.get_by_role("region", name="Replication flow")
    detail.get_by_label("Lag alert threshold (records)").fill("10")
    with page.expect_response(lambda answer: answer.request.method == "PATCH") as saved:
        detail.get_by_role("button", name="Save threshold").click()
    assert saved.value.status == 200
    assert saved.value.json()["lag_alert_records"] == 10
    alerts.create_rule(
        actor=world.olga,
        team=world.team,
        name="replica behind",
        metric="replication_lag_records",
        comparison="gt",
        for_seconds=0,
        group_pattern="dr",
    )
    alert_state = page.get_by_test_id("flow-alert-state")
    sample_cluster(target)
    alerting_seconds = time.monotonic() - alerting_started

    row.get_by_role("button", name="Pause dr").click()
    expect(page.get_by_test_id("connector-source")).to_have_text("PAUSED", timeout=30_000)
    # The page shows the connector's state; its task pauses a moment later, and what it copies meanwhile would
    # not count as lag (seen on the loaded machine): wait for the task too, as Connect reports it.
    flow = ReplicationFlow.objects.get(name="dr")
    wait_until(
        lambda: (
            [task["state"] for task in replication.flow_status(flow=flow)["source"]["tasks"]] == ["PAUSED"]
        ),
        timeout=30,
        what="the source task to pause",
        interval=0.5,
    )
    for index in range(50):
        producer.produce(topic, key=b"0", value=f"late {index}".encode())
    assert producer.flush(30) == 0
    # Paused, the lag shows the records the replica lacks.
    wait_until(lambda: lag_total(lag) == 50, timeout=30, what="the lag to count the 50 records", interval=0.5)
    alerting_started = time.monotonic()
    sample_cluster(target)
    expect(alert_state).to_have_text("firing", timeout=30_000)
    expect(page.get_by_role("list", name="Lag alerts")).to_contain_text("50 records not replicated yet")
    alerting_seconds += time.monotonic() - alerting_started
    screenshot(page, "replication-3-paused-lagging")
    row.get_by_role("button", name="Resume dr").click()
    expect(page.get_by_test_id("connector-source")).to_have_text("RUNNING", timeout=30_000)
    for partition in (0, 1):
        expect(lag.get_by_role("row").nth(partition + 1).get_by_role("cell").nth(5)).to_have_text(
            "0", timeout=90_000
        )
    alerting_started = time.monotonic()
    sample_cluster(target)
    expect(alert_state).to_have_text("ok", timeout=30_000)
    # The sampled history: caught up, 50 behind while paused, caught up again.
    detail.get_by_text("Show the data as a table").click()
    history = detail.get_by_role("table", name="Replication lag in records data")
    expect(history.get_by_role("row")).to_have_count(4)
    expect(history.get_by_role("row").nth(2)).to_contain_text("50")
    alerting_seconds += time.monotonic() - alerting_started
    print(f"\nthe lag alert's steps took {alerting_seconds:.1f} s (the page refreshes the flow every 3 s)")
    screenshot(page, "replication-4-resumed")
