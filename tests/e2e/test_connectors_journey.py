"""A team's Debezium connector from the console: Olga (org admin of Acme, so a team admin of Payments) opens
Connectors, creates a PostgreSQL CDC connector on the Connect cluster attached to Acme's SASL + ACL broker,
reads Connect's validation messages inline for a config missing its host, fixes it, watches the connector run,
its topic fill and its source lag (which grows while it is paused), and pauses and resumes it. Screenshots
land in test-artifacts/screenshots/connectors-*.png.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from confluent_kafka import Consumer
from playwright.sync_api import Page, expect

from controlplane.connect import services as connect
from controlplane.connect.models import ConnectCluster
from controlplane.lag.sampler import sample_cluster
from tests.e2e.conftest import screenshot
from tests.e2e.test_access import SecurePayments, secure_payments, sign_in  # noqa: F401 - a fixture
from tests.fixtures.broker import SecureBrokerProcess
from tests.fixtures.servers import wait_until
from tests.integration.connect.test_connect_clusters import DEBEZIUM, logical_postgres  # noqa: F401 - a fixture

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def connect_cluster(secure_payments: SecurePayments, settings, tmp_path: Path) -> Iterator[ConnectCluster]:  # noqa: F811
    settings.DATA_DIR = tmp_path
    attached = connect.attach_connect_cluster(
        actor=secure_payments.olga, cluster=secure_payments.cluster, name="etl", worker_count=1
    )
    try:
        assert attached.status == "running", attached.status_reason
        yield attached
    finally:
        for connector in attached.connectors.all():
            connect.delete_connector(actor=secure_payments.olga, connector=connector)
        connect.delete_connect_cluster(actor=secure_payments.olga, connect_cluster=attached)


@pytest.mark.timeout(420)
def test_a_team_creates_a_debezium_connector_with_inline_errors_watches_it_run_and_pauses_it(
    page: Page,
    live_server,
    secure_payments: SecurePayments,  # noqa: F811
    secure_broker: SecureBrokerProcess,
    connect_cluster: ConnectCluster,
    logical_postgres: str,  # noqa: F811
    settings,
    redis_url: str,
) -> None:
    world = secure_payments
    with psycopg.connect(logical_postgres, autocommit=True) as database:
        database.execute("CREATE TABLE accounts (id integer PRIMARY KEY, balance integer NOT NULL)")
        database.execute("INSERT INTO accounts SELECT n, 0 FROM generate_series(1, 50) AS n")
    host, port = logical_postgres.split("@", 1)[1].split("/", 1)[0].split(":")
    name = f"pay-{world.uid}-accounts"
    prefix = f"{world.topic_prefix}pg"

    sign_in(page, f"{live_server.url}/connectors")
    expect(page.get_by_role("heading", name="Connectors", level=1)).to_be_visible()
    expect(page.get_by_role("list", name="Connect clusters")).to_contain_text("etl: running")
    page.get_by_role("button", name="New connector").click()
    dialog = page.get_by_role("dialog", name="New connector")
    dialog.get_by_label("Name").fill(name)
    dialog.get_by_label("Connector class").select_option(DEBEZIUM)
    common = (
        f"plugin.name=pgoutput\ndatabase.port={port}\ndatabase.user=postgres\ndatabase.dbname=streamhub\n"
        f"topic.prefix={prefix}\ntable.include.list=public.accounts\nslot.name=e2e_{uuid.uuid4().hex[:8]}\n"
        "publication.autocreate.mode=filtered\ntopic.creation.default.replication.factor=1\n"
        "topic.creation.default.partitions=1\n"
    )
    dialog.get_by_label("Config", exact=True).fill(common)
    dialog.get_by_label("Secrets").fill("database.password=not-shown-again")
    dialog.get_by_role("button", name="Create connector").click()
    # Connect's own validation, per field, inline.
    errors = dialog.get_by_role("list", name="Config errors")
    expect(errors.locator("li[data-field='database.hostname']")).to_be_visible(timeout=30_000)
    screenshot(page, "connectors-1-inline-errors")
    dialog.get_by_label("Config", exact=True).fill(f"database.hostname={host}\n{common}")
    dialog.get_by_role("button", name="Create connector").click()
    expect(dialog).to_be_hidden(timeout=60_000)

    row = page.get_by_role("row").filter(has_text=name)
    expect(row).to_contain_text("running")
    row.get_by_role("button", name=name, exact=True).click()
    expect(page.get_by_test_id("connector-state")).to_have_text("RUNNING", timeout=60_000)
    expect(page.get_by_role("region", name="Connector status")).to_contain_text(
        "Task 0: RUNNING", timeout=60_000
    )

    # Its topic fills: the snapshot's 50 rows.
    consumer = Consumer(
        {
            **secure_broker.client_config(),
            "group.id": f"e2e-{uuid.uuid4().hex}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([f"{prefix}.public.accounts"])
    seen, deadline = 0, time.monotonic() + 90
    while seen < 50 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        seen += message is not None and message.error() is None
    consumer.close()
    assert seen == 50
    # Its lag, as the lag sampler's runs see it (the console refreshes the connector every 3 s): the topic
    # holds the 50 snapshot rows.
    settings.REDIS_URL = redis_url
    lag = page.get_by_test_id("connector-lag")
    wait_until(
        lambda: sample_cluster(world.cluster) and "Source lag:" in lag.inner_text(),
        timeout=60,
        what="the connector's source lag in the console",
    )
    expect(page.get_by_test_id("connector-topic-records")).to_have_text("50", timeout=30_000)
    screenshot(page, "connectors-2-running")

    row.get_by_role("button", name=f"Pause {name}").click()
    expect(row).to_contain_text("paused")
    expect(page.get_by_test_id("connector-state")).to_have_text("PAUSED", timeout=30_000)
    # Paused, the database moves on without it: 1,000 rows (tens of KiB of WAL) and its lag grows, while its
    # topic holds what it held.
    with psycopg.connect(logical_postgres, autocommit=True) as database:
        database.execute("INSERT INTO accounts SELECT n, 0 FROM generate_series(51, 1050) AS n")
    sample_cluster(world.cluster)
    expect(lag).to_contain_text("KiB of WAL", timeout=30_000)
    expect(page.get_by_test_id("connector-topic-records")).to_have_text("50")
    screenshot(page, "connectors-3-paused")
    row.get_by_role("button", name=f"Resume {name}").click()
    expect(page.get_by_test_id("connector-state")).to_have_text("RUNNING", timeout=30_000)
    # Resumed, it catches up: the topic holds the 1,000 changes too.
    records = page.get_by_test_id("connector-topic-records")
    wait_until(
        lambda: sample_cluster(world.cluster) and records.inner_text() == "1050",
        timeout=120,
        interval=2,
        what="the resumed connector's topic to hold every change",
    )
    screenshot(page, "connectors-4-resumed")
    assert "not-shown-again" not in page.content()
