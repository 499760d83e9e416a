"""Browser journey: an org admin finds a team's open transaction on the cluster's Transactions tab (a real
transactional producer holds it open on the session's broker), sees whose it is and what it spans, and looks
for hanging transactions. Captured at 1280 and 1440 px, light and dark."""

import uuid

import pytest
from confluent_kafka import Producer
from playwright.sync_api import Locator, Page, expect

from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType
from controlplane.topics import services as topics
from tests.e2e import test_topics_and_messages as topic_journeys
from tests.e2e.test_configs_and_brokers import capture_everywhere
from tests.e2e.test_topics_and_messages import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

payments = topic_journeys.payments


def fits_without_scrolling(table: Locator, row: Locator) -> None:
    """Every column is in view: the table does not scroll sideways inside its frame."""
    expect(row).to_be_visible()
    hidden = table.evaluate("t => t.parentElement.scrollWidth - t.parentElement.clientWidth")
    assert hidden <= 0, f"the table hides {hidden} px of columns"


def test_an_admin_finds_a_teams_open_transaction_and_looks_for_hanging_ones(
    page: Page, live_server, payments, broker
) -> None:
    topic = f"{payments.prefix}ledger"
    topics.create_topic(
        actor=payments.olga,
        cluster=payments.cluster,
        team=payments.team,
        name=topic,
        partitions=2,
        replication_factor=1,
        configs={},
    )
    transactional_prefix = f"payments-tx-{uuid.uuid4().hex[:6]}-"
    tenancy.add_prefix(
        actor=Actor.system(),
        team=payments.team,
        resource_type=PrefixResourceType.TRANSACTIONAL_ID,
        prefix=transactional_prefix,
    )
    transactional_id = f"{transactional_prefix}ledger-writer"
    # The team's application: a transaction begun and not yet committed.
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": transactional_id})
    producer.init_transactions(20)
    producer.begin_transaction()
    producer.produce(topic, b"pending", partition=1)
    producer.flush(10)

    sign_in(page, f"{live_server.url}/clusters/{payments.cluster.id}")
    page.get_by_role("navigation", name="Cluster sections").get_by_role("link", name="Transactions").click()
    transactions = page.get_by_role("table", name="Transactions")
    row = transactions.get_by_role("row").filter(has_text=transactional_id)
    expect(row).to_contain_text("Ongoing")
    expect(row).to_contain_text(f"{topic}-1")
    expect(row).to_contain_text("Payments")
    capture_everywhere(page, "page-cluster-transactions", lambda: fits_without_scrolling(transactions, row))

    page.get_by_role("button", name="Look for hanging transactions").click()
    expect(page.get_by_text("No hanging transactions")).to_be_visible()
    capture_everywhere(
        page,
        "page-cluster-transactions-hanging",
        lambda: expect(page.get_by_text("No hanging transactions")).to_be_visible(),
    )

    producer.commit_transaction(20)
    # The list refreshes on its own: the committed transaction is no longer open.
    expect(row).to_contain_text("CompleteCommit", timeout=15_000)
    assert page.problems.messages == []
