"""Accessibility of every console page (issue 34, acceptance 4): axe-core, the engine browsers' own audits
use, runs on each page at 1280 px in the light and the dark theme and finds no serious or critical
violation; a dialog is used with the keyboard alone. One browser page and one sign-in for the whole sweep."""

from __future__ import annotations

import re

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from django.utils import timezone
from playwright.sync_api import Page, expect

from controlplane.accounts import services as accounts
from controlplane.alerts import services as alerts
from controlplane.alerts.choices import AlertState
from controlplane.alerts.models import Alert
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

LONG_REASON = (
    "Lag grew from 12,000 to 60,000 records over the last 15 min on partitions 0, 1 and 2 while the committed "
    "offsets did not move: the members are alive but not consuming."
)
pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

AXE = REPO_ROOT / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")
# Every rule axe has, WCAG 2.x A and AA and its best practices; only serious and critical findings fail.
RUN_AXE = """async (rules) => {
  const options = { resultTypes: ["violations"] };
  if (rules) options.runOnly = { type: "rule", values: rules };
  const result = await axe.run(document, options);
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


def _violations(page: Page, rules: list[str] | None = None) -> list[str]:
    if page.evaluate("typeof window.axe") == "undefined":
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(RUN_AXE, rules)
    # A page that did not render gives axe nothing to check: that is no pass.
    assert rules or result["checked"] >= 10, f"axe checked only {result['checked']} rules on {page.url}"
    return [
        f"{v['impact']} {v['id']} ({v['help']}): {v['nodes']}"
        for v in result["violations"]
        if v["impact"] in BLOCKING
    ]


def _audit(page: Page, name: str, found: dict[str, list[str]]) -> None:
    """The page in both themes (the attribute the console's toggle sets): every rule in the light one; in
    the dark one only what colours change, which keeps the sweep within its CI budget."""
    expect(page.locator(".loading, [aria-busy=true]")).to_have_count(0, timeout=20_000)
    for theme, rules in (("light", None), ("dark", ["color-contrast", "link-in-text-block"])):
        page.evaluate(f"document.documentElement.dataset.theme = '{theme}'")
        problems = _violations(page, rules)
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
    now = timezone.now()
    rule = alerts.create_rule(
        actor=payments.olga,
        team=payments.team,
        name="billing falls behind",
        cluster=payments.cluster,
        metric="lag_messages",
        threshold=100,
        severity="critical",
    )
    Alert.objects.create(
        rule=rule,
        cluster=payments.cluster,
        group_name=group_name,
        fingerprint=f"{rule.pk}:{group_name}",
        state=AlertState.FIRING,
        severity="critical",
        value=60_000,
        reason=LONG_REASON,
        pending_since=now,
        fired_at=now,
        last_evaluated_at=now,
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
    changed_pages = {  # the pages issue 34 changed, kept as screenshots
        f"/topics/{topic.pk}": "topic",
        f"/groups/{group.pk}": "group",
        "/schemas": "schemas",
        f"/teams/{team.pk}": "team",
    }
    # Each page with its heading (and tab), which says the router has shown it and not still the last one.
    pages = [
        ("/", "Overview", None),
        ("/clusters", "Clusters", None),
        (f"/clusters/{cluster.pk}", cluster.name, "Overview"),
        (f"/clusters/{cluster.pk}/brokers", cluster.name, "Brokers"),
        (f"/clusters/{cluster.pk}/configs", cluster.name, "Broker configs"),
        (f"/clusters/{cluster.pk}/transactions", cluster.name, "Transactions"),
        (f"/clusters/{cluster.pk}/brokers/{broker.properties['node.id']}", re.compile("^Broker "), None),
        ("/topics", "Topics", None),
        (f"/topics/{topic.pk}", name, "Partitions and configs"),
        (f"/topics/{topic.pk}/messages?start=earliest", name, "Messages"),
        ("/groups", "Consumer groups", None),
        (f"/groups/{group.pk}", group_name, None),
        ("/acls", "ACLs", None),
        ("/quotas", "Quotas", None),
        ("/schemas", "Schemas", None),
        (f"/schemas/{cluster.pk}/{name}-value", f"{name}-value", None),
        ("/service-accounts", "Service accounts", None),
        (f"/service-accounts/{account.pk}", account.name, None),
        ("/teams", "Teams", None),
        (f"/teams/{team.pk}", team.name, None),
        ("/people", "People", None),
        ("/jobs", "Jobs", None),
        ("/alerts", "Alerts", "Active"),
        ("/alerts/history", "Alerts", "History"),
        ("/alerts/rules", "Alerts", "Rules"),
        ("/alerts/silences", "Alerts", "Silences"),
        ("/alerts/channels", "Alerts", "Channels"),
        ("/audit", "Audit log", None),
        ("/settings", "Settings", None),
        ("/profile", "Profile", None),
        ("/no-such-page", "Page not found", None),
    ]
    for path, heading, tab in pages:
        # The router follows a history change as a link click would, without reloading the app each time.
        page.evaluate(
            "(path) => { history.pushState({}, '', path); dispatchEvent(new PopStateEvent('popstate')); }",
            path,
        )
        expect(page.get_by_role("heading", name=heading, level=1, exact=True)).to_be_visible()
        if tab:
            current = page.locator("nav.tabs [aria-current=page]")
            expect(current).to_have_text(re.compile(f"^{re.escape(tab)}"))
        _audit(page, path, found)
        if path in changed_pages:
            screenshot(page, f"changed-{changed_pages[path]}")

    # At 1280 px the active alerts fit: Acknowledge in view, the reason wrapped rather than cut.
    page.goto(f"{live_server.url}/alerts")
    active = page.get_by_role("table", name="Active alerts")
    acknowledge = active.get_by_role("button", name="Acknowledge")
    expect(acknowledge).to_be_visible()
    screenshot(page, "alerts-active-1280")
    expect(acknowledge).to_be_in_viewport(ratio=1)
    assert active.evaluate("(table) => table.parentElement.scrollWidth <= table.parentElement.clientWidth")
    expect(active.get_by_text(LONG_REASON)).to_be_visible()

    # Dialogs, opened and used by keyboard alone: Tab reaches the opener, Enter opens, Tab stays inside.
    page.goto(f"{live_server.url}/topics/{topic.pk}/messages")
    page.get_by_role("button", name="More actions").click()
    expect(page.get_by_role("menu", name="More actions")).to_be_visible()
    _audit(page, "topic actions menu", found)
    screenshot(page, "changed-topic-actions-menu")
    page.keyboard.press("Escape")
    expect(page.get_by_role("menu")).to_have_count(0)
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
