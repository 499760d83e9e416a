"""Browser journeys for topics: a topic is checked with a validate-only preview and then created, a message
produced from the console is browsed, an Avro message written with confluent-kafka's serializer shows
decoded, and a 2,000-topic list filters in the browser in under 100 ms."""

import json
import re
import statistics
import uuid
from dataclasses import dataclass

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from playwright.sync_api import Page, expect

from controlplane.accounts import services as accounts
from controlplane.clusters import services as clusters
from controlplane.clusters.models import Cluster
from controlplane.schemas import cache, decoding
from controlplane.schemas import services as schemas
from controlplane.schemas.api import auth as registry_auth
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from controlplane.tenancy.models import Team
from controlplane.topics import services as topics
from controlplane.topics.models import Topic
from tests.e2e.conftest import screenshot
from tests.e2e.measurements import SEARCH_AND_MEASURE

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long test password"
SEARCH_BUDGET_MS = 100
ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "com.acme.payments",
    "fields": [{"name": "id", "type": "string"}, {"name": "amount", "type": "double"}],
}


@dataclass
class Payments:
    olga: Actor
    team: Team
    cluster: Cluster
    prefix: str


@pytest.fixture
def payments(django_user_model, broker) -> Payments:
    """Team Payments of Acme owns a fresh topic prefix on the session's broker, registered as Acme's cluster;
    olga administers Acme."""
    user = django_user_model.objects.create_user("olga", "olga@example.com", PASSWORD)
    organization = tenancy.create_organization(actor=Actor.system(), name="Acme")
    tenancy.add_org_member(actor=Actor.system(), organization=organization, user=user, is_org_admin=True)
    team = tenancy.create_team(actor=Actor.system(), organization=organization, name="Payments")
    # The broker lives for the whole session: every test gets topic names of its own.
    prefix = f"payments-{uuid.uuid4().hex[:6]}."
    tenancy.add_prefix(actor=Actor.system(), team=team, resource_type=PrefixResourceType.TOPIC, prefix=prefix)
    olga = Actor(user=user)
    cluster = clusters.register_external_cluster(
        actor=olga, organization=organization, name="orders", bootstrap_servers=broker.bootstrap
    )
    return Payments(olga=olga, team=team, cluster=cluster, prefix=prefix)


def sign_in(page: Page, url: str) -> None:
    page.goto(url)
    page.get_by_label("Username").fill("olga")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def test_a_topic_is_previewed_then_created_and_a_produced_message_is_browsed(
    page: Page, live_server, payments: Payments, broker
) -> None:
    name = f"{payments.prefix}orders"
    sign_in(page, f"{live_server.url}/topics")
    expect(page.get_by_role("heading", name="Topics", level=1)).to_be_visible()
    expect(page.get_by_text("No topics yet")).to_be_visible()

    page.get_by_role("button", name="Create topic").click()
    dialog = page.get_by_role("dialog", name="Create topic")
    expect(dialog.get_by_label("Name")).to_have_accessible_description(
        f"Starts with the team's prefix: {payments.prefix}"
    )
    dialog.get_by_label("Name").fill(name)
    dialog.get_by_label("Partitions").fill("2")
    dialog.get_by_role("button", name="Add config").click()
    dialog.get_by_label("Config 1", exact=True).fill("retention.ms")
    dialog.get_by_label("Value 1", exact=True).fill("3600000")
    dialog.get_by_role("button", name="Validate").click()
    expect(dialog.get_by_role("status")).to_contain_text(f"The cluster accepts {name} with 2 partitions")
    screenshot(page, "topic-create-validated")
    # Validate-only created nothing, neither here nor on the cluster.
    assert not Topic.objects.filter(name=name).exists()
    assert name not in AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10).topics

    dialog.get_by_role("button", name="Create topic").click()
    expect(page.get_by_role("heading", name=name, level=1)).to_be_visible()
    partitions = page.get_by_role("table", name="Partitions")
    expect(partitions.get_by_role("row")).to_have_count(3)
    configs = page.get_by_role("table", name="Topic configs")
    # The config row reads the value in units, with Kafka's raw value under it and where it comes from.
    retention = configs.get_by_role("row", name=re.compile(r"^retention\.ms "))
    expect(retention).to_contain_text("1 hour")
    expect(retention).to_contain_text("3600000")
    expect(retention).to_contain_text("topic override")
    screenshot(page, "topic-detail")

    page.get_by_role("button", name="Produce message").click()
    produce = page.get_by_role("dialog", name=f"Produce a message to {name}")
    produce.get_by_label("Key", exact=True).fill("order-1")
    produce.get_by_label("Value", exact=True).fill('{"id": "order-1", "amount": 12.5}')
    produce.get_by_role("button", name="Add header").click()
    produce.get_by_label("Header 1", exact=True).fill("source")
    produce.get_by_label("Header value 1", exact=True).fill("console")
    produce.get_by_label("Partition").select_option("1")
    produce.get_by_role("button", name="Produce", exact=True).click()
    expect(produce.get_by_role("status")).to_contain_text("Produced to partition 1 at offset 0.")
    produce.get_by_role("link", name="Browse it").click()

    messages = page.get_by_role("table", name="Messages")
    details = messages.get_by_role("button", name="Details of partition 1 offset 0")
    expect(details).to_be_visible()
    details.click()
    expect(messages.get_by_label("Value as JSON")).to_contain_text('"amount": 12.5')
    expect(messages.get_by_role("definition")).to_have_text("console")
    expect(page).to_have_url(
        f"{live_server.url}/topics/{Topic.objects.get(name=name).pk}/messages?partition=1&start=offset&offset=0"
    )
    screenshot(page, "message-browser")

    # A value filter that matches nothing, then live tail of the newest records.
    page.get_by_label("Value contains").fill("no such text")
    page.get_by_role("button", name="Browse").click()
    expect(page.get_by_text("No messages")).to_be_visible()
    page.get_by_label("Value contains").fill("order-1")
    page.get_by_role("button", name="Browse").click()
    expect(messages.get_by_role("button", name="Details of partition 1 offset 0")).to_be_visible()
    page.get_by_role("button", name="Live tail").click()
    expect(page.get_by_text("Following the log end")).to_be_visible()
    page.get_by_role("button", name="Pause").click()
    assert page.problems.messages == []


def test_an_avro_message_is_shown_decoded(page: Page, live_server, payments: Payments, broker) -> None:
    for forget in (
        cache.clear,
        registry_auth.forget_everything,
        schemas.forget_parsed,
        decoding.forget_decoders,
    ):
        forget()
    name = f"{payments.prefix}avro-orders"
    topics.create_topic(
        actor=payments.olga, cluster=payments.cluster, team=payments.team, name=name, partitions=1
    )
    topic = Topic.objects.get(cluster=payments.cluster, name=name)
    _key, token = accounts.create_api_key(actor=payments.olga, name="registry", role=TeamRole.TEAM_ADMIN)
    registry = SchemaRegistryClient(
        {
            "url": f"{live_server.url}/clusters/{payments.cluster.pk}/schema-registry",
            "basic.auth.user.info": f"{token.key_id}:{token.secret}",
            "max.retries": 0,
        }
    )
    serializer = AvroSerializer(registry, json.dumps(ORDER))
    value = serializer({"id": "o-42", "amount": 99.5}, SerializationContext(name, MessageField.VALUE))
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    producer.produce(name, value=value, key=b"o-42")
    assert producer.flush(10) == 0
    schema_id = registry.get_latest_version(f"{name}-value").schema_id

    sign_in(page, f"{live_server.url}/topics/{topic.pk}/messages?start=earliest")
    messages = page.get_by_role("table", name="Messages")
    messages.get_by_role("button", name="Details of partition 0 offset 0").click()
    expect(messages).to_contain_text(f"Value: Decoded (Avro, id {schema_id}) · {name}-value v1")
    decoded = messages.get_by_label("Decoded value")
    expect(decoded).to_contain_text('"id": "o-42"')
    expect(decoded).to_contain_text('"amount": 99.5')
    # The raw bytes are still shown, as base64.
    expect(messages.get_by_title("Not valid UTF-8: shown as base64")).to_be_visible()
    screenshot(page, "message-browser-avro")
    assert page.problems.messages == []


def test_two_thousand_topics_are_listed_and_a_search_renders_within_100_ms(
    page: Page, live_server, payments: Payments
) -> None:
    Topic.objects.bulk_create(
        Topic(
            cluster=payments.cluster,
            team=payments.team,
            name=f"{payments.prefix}stream-{index:04d}",
            partitions=1 + index % 12,
            exists_on_cluster=True,
            size_bytes=index * 1024,
        )
        for index in range(2000)
    )
    sign_in(page, f"{live_server.url}/topics")
    expect(page.get_by_test_id("topic-count")).to_have_text("2000 topics", timeout=30_000)
    table = page.get_by_role("table", name="Topics")
    # Virtualised: only a window of the 2,000 rows is in the page.
    assert table.get_by_role("row").count() < 100
    screenshot(page, "topics-2000")

    timings = []
    for index in (1999, 42, 1234):
        page.get_by_label("Search topics").fill("")
        expect(page.get_by_test_id("topic-count")).to_have_text("2000 topics")
        timings.append(page.evaluate(SEARCH_AND_MEASURE, f"stream-{index:04d}"))
        expect(table.get_by_role("link", name=f"{payments.prefix}stream-{index:04d}")).to_be_visible()
    print(f"search to render over 2,000 topics: {', '.join(f'{ms:.1f} ms' for ms in timings)}")
    # The median keeps one run on a busy CI machine from deciding the result.
    assert statistics.median(timings) < SEARCH_BUDGET_MS, timings
    expect(page).to_have_url(f"{live_server.url}/topics?q=stream-1234")
    screenshot(page, "topics-2000-search")
    assert page.problems.messages == []


def test_a_message_produced_from_the_messages_tab_shows_after_browse_and_in_the_header_counts(
    page: Page, live_server, payments: Payments
) -> None:
    """A new user's first message: the Messages tab was open (and empty) before the produce."""
    name = f"{payments.prefix}first"
    topics.create_topic(
        actor=payments.olga, cluster=payments.cluster, team=payments.team, name=name, partitions=1
    )
    topic = Topic.objects.get(cluster=payments.cluster, name=name)
    sign_in(page, f"{live_server.url}/topics/{topic.pk}/messages")
    expect(page.get_by_text("No messages")).to_be_visible()
    header = page.locator("dl.details")
    expect(header).to_contain_text("Messages0")
    expect(header).to_contain_text("Size0 B")

    page.get_by_role("button", name="Produce message").click()
    produce = page.get_by_role("dialog", name=f"Produce a message to {name}")
    produce.get_by_label("Key", exact=True).fill("first")
    produce.get_by_label("Value", exact=True).fill("hello, world")
    produce.get_by_role("button", name="Produce", exact=True).click()
    expect(produce.get_by_role("status")).to_contain_text("Produced to partition 0 at offset 0")
    # Escape closes it wherever focus is (the disabled-while-sending button had dropped it to the body).
    page.keyboard.press("Escape")
    expect(produce).to_have_count(0)
    expect(page.get_by_role("button", name="Produce message")).to_be_focused()

    expect(header).to_contain_text("Messages1")
    expect(header).not_to_contain_text("Size0 B")
    table = page.get_by_role("table", name="Messages")
    expect(table).to_contain_text("hello, world")
    # Browse with nothing changed still asks the server.
    with page.expect_request(re.compile(rf"/api/v1/topics/{topic.pk}/messages/")):
        page.get_by_role("button", name="Browse").click()
    expect(table).to_contain_text("hello, world")
    screenshot(page, "topic-first-message")
    assert page.problems.messages == []
