"""Accessibility of every console page (issue 34, acceptance 4): axe-core, the engine browsers' own audits
use, runs on each page at 1280 px in the light and the dark theme and finds no serious or critical
violation; a dialog is used with the keyboard alone. One browser page and one sign-in for the whole sweep."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from playwright.sync_api import Page, expect

from controlplane.accounts import services as accounts
from controlplane.groups.models import ConsumerGroup
from controlplane.people import services as people
from controlplane.schemas import services as schemas
from controlplane.topics import services as topics
from controlplane.topics.models import Topic
from tests.e2e.conftest import screenshot
from tests.e2e.test_topics_and_messages import (
    Payments,
    payments,  # noqa: F401 - the fixture
    sign_in,
)
from tests.fixtures.servers import REPO_ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

AXE = REPO_ROOT / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")
# Every rule axe has, WCAG 2.x A and AA and its best practices; only serious and critical findings fail.
RUN_AXE = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return {
    checked: result.passes.length,
    violations: result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.slice(0, 4).map((n) => n.target.join(" ") + " :: " + n.failureSummary.split("\\n").slice(1, 2).join("")),
    })),
  };
}"""


def _violations(page: Page) -> list[str]:
    if page.evaluate("typeof window.axe") == "undefined":
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(RUN_AXE)
    # A page that did not render gives axe nothing to check: that is no pass.
    assert result["checked"] >= 10, f"axe checked only {result['checked']} rules on {page.url}"
    return [
        f"{v['impact']} {v['id']} ({v['help']}): {v['nodes']}"
        for v in result["violations"]
        if v["impact"] in BLOCKING
    ]


def _audit(page: Page, name: str, found: dict[str, list[str]]) -> None:
    """The page in both themes; the theme attribute is what the console's toggle sets."""
    expect(page.locator(".loading, [aria-busy=true]")).to_have_count(0, timeout=20_000)
    for theme in ("light", "dark"):
        page.evaluate(f"document.documentElement.dataset.theme = '{theme}'")
        problems = _violations(page)
        if problems:
            found[f"{name} ({theme})"] = problems
            screenshot(page, f"a11y-{name.strip('/').replace('/', '-') or 'overview'}-{theme}")
    page.evaluate("delete document.documentElement.dataset.theme")


def _commit_offset(bootstrap: str, group: str, topic: str, partition: int, offset: int) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(topic, partition, offset)], asynchronous=False)
    consumer.close()


def test_every_page_has_no_serious_accessibility_violation_in_either_theme_and_dialogs_work_by_keyboard(
    page: Page,
    live_server,
    payments: Payments,  # noqa: F811 - the imported fixture
    broker,
) -> None:
    assert AXE.exists(), "axe-core is missing: npm ci in frontend/ installs it"
    name = f"{payments.prefix}orders"
    topics.create_topic(
        actor=payments.olga, cluster=payments.cluster, team=payments.team, name=name, partitions=2
    )
    topic = Topic.objects.get(cluster=payments.cluster, name=name)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce(name, key=b"order-1", value=b'{"id": "order-1", "amount": 12.5}')
    assert producer.flush(10) == 0
    group_name = f"{payments.prefix}billing"
    _commit_offset(broker.bootstrap, group_name, name, 0, 1)
    group = ConsumerGroup.objects.create(cluster=payments.cluster, team=payments.team, name=group_name)
    _user, invitation = people.create_person(
        actor=payments.olga,
        organization=payments.team.organization,
        username="nina",
        email="nina@example.com",
        base_url=live_server.url,
    )
    account = accounts.create_service_account(actor=payments.olga, team=payments.team, name="billing-app")
    schemas.register_schema(
        cluster_id=payments.cluster.pk,
        subject=f"{name}-value",
        schema_input=schemas.SchemaInput(
            schema_type="AVRO",
            text='{"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"}]}',
        ),
    )
    cluster, team = payments.cluster, payments.team

    page.set_viewport_size({"width": 1280, "height": 900})
    found: dict[str, list[str]] = {}
    page.goto(f"{live_server.url}/login")
    expect(page.get_by_label("Username")).to_be_visible()
    _audit(page, "/login", found)
    page.goto(invitation.url)
    expect(page.get_by_label("New password")).to_be_visible()
    _audit(page, "/set-password", found)
    sign_in(page, f"{live_server.url}/")
    expect(page.get_by_role("heading", name="Overview", level=1)).to_be_visible()
    paths = [
        "/",
        "/clusters",
        f"/clusters/{cluster.pk}",
        f"/clusters/{cluster.pk}/brokers",
        f"/clusters/{cluster.pk}/configs",
        f"/clusters/{cluster.pk}/transactions",
        f"/clusters/{cluster.pk}/brokers/{broker.properties['node.id']}",
        "/topics",
        f"/topics/{topic.pk}",
        f"/topics/{topic.pk}/messages?start=earliest",
        "/groups",
        f"/groups/{group.pk}",
        "/acls",
        "/quotas",
        "/schemas",
        f"/schemas/{cluster.pk}/{name}-value",
        "/service-accounts",
        f"/service-accounts/{account.pk}",
        "/teams",
        f"/teams/{team.pk}",
        "/people",
        "/jobs",
        "/alerts",
        "/alerts/history",
        "/alerts/silences",
        "/alerts/rules",
        "/alerts/channels",
        "/audit",
        "/settings",
        "/profile",
        "/no-such-page",
    ]
    for path in paths:
        page.goto(f"{live_server.url}{path}")
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        assert "/login" not in page.url, path
        _audit(page, path, found)

    # Dialogs, opened and used by keyboard alone: Tab reaches the opener, Enter opens, Tab stays inside.
    page.goto(f"{live_server.url}/topics/{topic.pk}/messages")
    opener = page.get_by_role("button", name="Produce message")
    opener.focus()
    page.keyboard.press("Enter")
    produce = page.get_by_role("dialog", name=f"Produce a message to {name}")
    expect(produce.get_by_label("Key", exact=True)).to_be_focused()
    _audit(page, "produce dialog", found)
    page.keyboard.type("k-1")
    page.keyboard.press("Tab")
    expect(produce.get_by_label("Value", exact=True)).to_be_focused()
    page.keyboard.type("typed, not clicked")
    for _press in range(30):  # round the dialog once: focus never leaves it
        page.keyboard.press("Tab")
        assert produce.evaluate("(dialog) => dialog.contains(document.activeElement)")
    produce.get_by_role("button", name="Produce", exact=True).focus()
    page.keyboard.press("Enter")
    expect(produce.get_by_role("status")).to_contain_text("Produced to partition")
    page.keyboard.press("Escape")
    expect(produce).to_have_count(0)
    expect(opener).to_be_focused()
    screenshot(page, "a11y-after-keyboard-produce")

    page.goto(f"{live_server.url}/topics")
    page.get_by_role("button", name="Create topic").click()
    expect(page.get_by_role("dialog", name="Create topic")).to_be_visible()
    _audit(page, "create topic dialog", found)
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    assert found == {}, "\n".join(
        f"{where}:\n  " + "\n  ".join(problems) for where, problems in found.items()
    )
