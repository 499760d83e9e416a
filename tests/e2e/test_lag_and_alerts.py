"""Browser journey for issue 8's console (acceptance 4): a real confluent-kafka group falls behind a steady
producer on a real broker; the sampler's runs give its page a lag chart and a LAGGING status with the reason.
A team developer then creates a signed webhook channel and a lag rule in /alerts, the next sampling run fires
it, a real Celery worker delivers the signed notice to an HTTP receiver in this test, the alert is
acknowledged in the Active tab, and once the consumer catches up it resolves into the History tab."""

import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from playwright.sync_api import Page, expect

from controlplane.alerts.choices import AlertState
from controlplane.alerts.models import Alert
from controlplane.clusters import services as clusters
from controlplane.groups.models import ConsumerGroup
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from tests.e2e.conftest import screenshot
from tests.fixtures.servers import wait_until
from tests.integration.alerts.conftest import (  # noqa: F401 - the fixture
    RECEIVER_NETWORK,
    WebhookReceiver,
    webhook_receiver,
)
from tests.integration.clusters.conftest import _database_url_of_this_test
from tests.integration.lag.conftest import (
    INTERVAL,
    DrivenConsumer,
    LagWorld,
    SteadyProducer,
    lag_redis,  # noqa: F401 - the fixture
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long test password"
SYSTEM = Actor.system()
# The slow consumer falls behind by about 45 records a second, so the group is far above this when the rule
# is first evaluated and far below it once the consumer keeps up again.
THRESHOLD = 100


@pytest.fixture
def delivery_worker(transactional_db, monkeypatch, settings, request) -> None:
    """A real Celery worker on this test's database and secret key (it decrypts the channel's secret)."""
    monkeypatch.setenv("DATABASE_URL", _database_url_of_this_test())
    monkeypatch.setenv("SECRET_KEY", settings.SECRET_KEY)
    monkeypatch.setenv("ALERT_DELIVERY_BACKOFF_SECONDS", "0.2")
    monkeypatch.setenv("ALERT_DELIVERY_TIMEOUT_SECONDS", "5")
    monkeypatch.setenv("OUTBOUND_ALLOWED_NETWORKS", RECEIVER_NETWORK)
    request.getfixturevalue("celery_worker_process")


@pytest.fixture
def payments(django_user_model, broker, settings, lag_redis: str) -> Iterator[LagWorld]:  # noqa: F811 - the imported fixture
    """Team Payments of Acme, with dana as a developer, owns a topic and a consumer group on the session's
    broker (registered as Acme's cluster `orders`); a producer writes 50 records a second and the group's only
    member keeps up until the test slows it down."""
    settings.LAG_HEALTH_WINDOW_SECONDS = 1.5 * INTERVAL
    settings.LAG_LAGGING_MIN_MESSAGES = 10
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    team = tenancy.create_team(actor=SYSTEM, organization=organization, name="Payments")
    user = django_user_model.objects.create_user("dana", "dana@example.com", PASSWORD)
    tenancy.add_member(actor=SYSTEM, team=team, user=user, role=TeamRole.DEVELOPER)
    prefix = f"payments-{uuid.uuid4().hex[:6]}."
    for resource_type in (PrefixResourceType.TOPIC, PrefixResourceType.GROUP):
        tenancy.add_prefix(actor=SYSTEM, team=team, resource_type=resource_type, prefix=prefix)
    cluster = clusters.register_external_cluster(
        actor=SYSTEM, organization=organization, name="orders", bootstrap_servers=broker.bootstrap
    )
    topic, group = f"{prefix}orders", f"{prefix}billing"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(10)
    producer = SteadyProducer(broker.bootstrap, topic, 2)
    consumer = DrivenConsumer(broker.bootstrap, topic, group)
    producer.start()
    consumer.start()
    assert consumer.assigned.wait(20), "the consumer was never assigned its partitions"
    yield LagWorld(broker, cluster, topic, group, producer, consumer)
    consumer.leave()
    producer.stop()


def sign_in(page: Page, url: str) -> None:
    page.goto(url)
    page.get_by_label("Username").fill("dana")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def compact_number(text: str) -> float:
    """The chart table's compact notation back to a number: "1.2K" → 1200."""
    text = text.strip().replace(",", "")
    scale = {"K": 1e3, "M": 1e6, "B": 1e9}.get(text[-1:], 1)
    return float(text[:-1] if scale != 1 else text) * scale


def test_the_console_shows_a_lagging_groups_chart_and_its_alert_fires_is_acknowledged_and_resolves(
    page: Page,
    live_server,
    payments: LagWorld,
    delivery_worker,
    webhook_receiver: WebhookReceiver,  # noqa: F811 - the imported fixture
) -> None:
    # The member commits on every partition first (else the sampler rightly says NO_COMMIT), then slows down
    # to a few records a second: the group's history gets points and it turns LAGGING.
    rows = [payments.sample()]
    while rows[-1].status != "OK" and len(rows) < 8:
        rows.append(payments.sample())
    assert rows[-1].status == "OK", [(row.status, row.reason) for row in rows]
    payments.consumer.mode = "slow"
    rows.append(payments.sample())
    while rows[-1].status != "LAGGING" and len(rows) < 14:
        rows.append(payments.sample())
    latest = rows[-1]
    assert latest.status == "LAGGING", [(row.status, row.reason) for row in rows]
    assert latest.lag_messages > rows[0].lag_messages
    group = ConsumerGroup.objects.get(cluster=payments.cluster, name=payments.group)

    sign_in(page, f"{live_server.url}/groups/{group.pk}")
    expect(page.get_by_role("heading", name=payments.group, level=1)).to_be_visible()
    health = page.get_by_role("region", name="Health and lag history")
    expect(health.locator(".badge", has_text="lagging").first).to_be_visible()
    expect(health.get_by_text(latest.reason, exact=False).first).to_be_visible()
    expect(health.get_by_role("table", name="Partition health")).to_contain_text("lagging")
    chart = health.get_by_role("img", name="Lag in messages over the last 1h")
    expect(chart.locator("canvas")).to_be_visible()
    expect(chart).to_contain_text("total")  # the legend
    expect(chart).to_contain_text(f"{payments.topic}-0")
    health.get_by_text("Show the data as a table").click()
    data = health.get_by_role("table", name="Lag in messages over the last 1h data")
    expect(data.get_by_role("row")).to_have_count(len(rows) + 1)
    # Columns: time, total, then one per partition; the last row is the latest run.
    last_total = compact_number(
        data.get_by_role("row").nth(len(rows)).get_by_role("cell").nth(1).inner_text()
    )
    first_total = compact_number(data.get_by_role("row").nth(1).get_by_role("cell").nth(1).inner_text())
    assert last_total == pytest.approx(latest.lag_messages, rel=0.05)
    assert first_total < last_total
    screenshot(page, "lag-group-lagging")

    # A signed webhook channel: its secret is shown once.
    page.goto(f"{live_server.url}/alerts/channels")
    page.get_by_role("button", name="New channel").click()
    dialog = page.get_by_role("dialog", name="New channel")
    dialog.get_by_label("Name").fill("on-call hook")
    dialog.get_by_label("Kind").select_option("webhook")
    dialog.get_by_label("URL").fill(webhook_receiver.url)
    dialog.get_by_role("button", name="Create channel").click()
    secret_box = dialog.get_by_label("Signing secret of on-call hook")
    expect(secret_box).to_be_visible()
    secret = secret_box.input_value()
    assert secret.startswith("whsec_")
    screenshot(page, "lag-alert-channel-secret")
    dialog.get_by_role("button", name="I have saved it").click()
    channels = page.get_by_role("table", name="Channels")
    expect(channels).to_contain_text("on-call hook")
    expect(channels).to_contain_text("HMAC-SHA256")
    expect(channels).not_to_contain_text(secret)

    # A rule on the group's lag in messages that fires at once.
    page.get_by_role("link", name="Rules").click()
    page.get_by_role("button", name="New rule").click()
    form = page.get_by_role("dialog", name="New alert rule")
    form.get_by_label("Name").fill("billing falls behind")
    form.get_by_label("Cluster").select_option(label="orders")
    form.get_by_label("Consumer groups").fill(payments.group)
    form.get_by_label("Metric").select_option("lag_messages")
    form.get_by_label("Comparison").select_option("gt")
    form.get_by_label("Threshold", exact=True).fill(str(THRESHOLD))
    form.get_by_label("For (seconds)").fill("0")
    form.get_by_label("Severity").select_option("critical")
    form.get_by_label("on-call hook (webhook)").check()
    screenshot(page, "lag-alert-rule-form")
    form.get_by_role("button", name="Create rule").click()
    rules = page.get_by_role("table", name="Alert rules")
    expect(rules.get_by_role("row", name="billing falls behind")).to_contain_text(
        f"Lag (messages) > {THRESHOLD}"
    )

    # The next sampling run evaluates the rule: it fires, and the worker posts the signed notice.
    firing_row = payments.sample()
    assert firing_row.lag_messages > THRESHOLD
    alert = Alert.objects.get(rule__name="billing falls behind")
    assert alert.state == AlertState.FIRING
    wait_until(lambda: len(webhook_receiver.received) >= 1, 30, "the firing notice")
    [fired] = webhook_receiver.signed_by(secret)
    assert fired["kind"] == "firing"
    assert fired["alert"]["group"] == payments.group
    assert fired["alert"]["value"] > THRESHOLD

    page.get_by_role("link", name="Active").click()
    active = page.get_by_role("table", name="Active alerts")
    row = active.get_by_role("row", name=payments.group)
    expect(row).to_contain_text("firing")
    expect(row).to_contain_text("critical")
    expect(row).to_contain_text("billing falls behind")
    screenshot(page, "lag-alert-firing")
    row.get_by_role("button", name="Acknowledge").click()
    expect(row).to_contain_text("dana")
    expect(row.get_by_role("button", name="Acknowledge")).to_have_count(0)
    alert.refresh_from_db()
    assert alert.acknowledged_by.username == "dana"

    # The consumer keeps up again: a run or two later the alert resolves and the resolved notice goes out.
    payments.consumer.mode = "keep_up"
    for _run in range(10):
        payments.sample()
        alert.refresh_from_db()
        if alert.state == AlertState.RESOLVED:
            break
    assert alert.state == AlertState.RESOLVED, alert.value
    wait_until(lambda: len(webhook_receiver.received) >= 2, 30, "the resolved notice")
    assert [body["kind"] for body in webhook_receiver.signed_by(secret)] == ["firing", "resolved"]

    page.get_by_role("link", name="History").click()
    history = page.get_by_role("table", name="Alert history")
    resolved = history.get_by_role("row", name=payments.group)
    expect(resolved).to_contain_text("resolved")
    expect(resolved).to_contain_text("dana")
    screenshot(page, "lag-alert-history")
    # A fresh load: the tab's cached list would only catch up at its next poll (every 15 s).
    page.goto(f"{live_server.url}/alerts")
    expect(page.get_by_text("Nothing is firing")).to_be_visible()
    assert page.problems.messages == []
