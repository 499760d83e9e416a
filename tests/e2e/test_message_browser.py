"""Browser journeys for the message browser on a real broker: Newest on six partitions shows exactly the
latest records, a 30-second live tail shows every record produced meanwhile exactly once (checked through
the page's JSON download), a CEL filter over 100,000 records finds its matches with scan progress, and
Protobuf payloads decode. Screenshots at 1280 and 1440 px, light and dark."""

from __future__ import annotations

import json
import threading
import time

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from playwright.sync_api import Page, expect

from controlplane.accounts import services as accounts
from controlplane.schemas import cache, decoding
from controlplane.schemas import services as schemas
from controlplane.schemas.api import auth as registry_auth
from controlplane.tenancy.choices import TeamRole
from controlplane.topics import services as topics
from controlplane.topics.models import Topic
from tests.e2e.conftest import ARTIFACTS, screenshot
from tests.e2e.test_topics_and_messages import (
    Payments,
    payments,  # noqa: F401 - the fixture `acme` asks for
    sign_in,
)
from tests.integration.schemas.protobuf_orders import order_classes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# An hour ago: records stamped further back (this test once used 2025) can be deleted under the test by the
# shared broker's retention pass (every 5 min).
BASE_MS = (int(time.time()) - 3600) * 1000
TAIL_SECONDS = 30


@pytest.fixture
def acme(request: pytest.FixtureRequest) -> Payments:
    """Acme's team Payments with its topic prefix on the session's broker (the topic journeys' fixture)."""
    return request.getfixturevalue("payments")


def _topic(team_world: Payments, suffix: str, partitions: int) -> Topic:
    name = f"{team_world.prefix}{suffix}"
    topics.create_topic(
        actor=team_world.olga,
        cluster=team_world.cluster,
        team=team_world.team,
        name=name,
        partitions=partitions,
    )
    return Topic.objects.get(cluster=team_world.cluster, name=name)


def _shots(page: Page, name: str) -> None:
    """The page at 1280 and 1440 px, light and dark."""
    for width in (1280, 1440):
        for theme in ("light", "dark"):
            page.set_viewport_size({"width": width, "height": 900})
            page.evaluate(f"document.documentElement.dataset.theme = '{theme}'")
            screenshot(page, f"{name}-{width}-{theme}")
    page.evaluate("delete document.documentElement.dataset.theme")


def _row_ids(page: Page) -> list[tuple[int, int]]:
    labels = page.get_by_role("table", name="Messages").get_by_role("button", name="Details of").all()
    ids = []
    for label in labels:
        words = (label.get_attribute("aria-label") or "").split()
        ids.append((int(words[3]), int(words[5])))
    return ids


def _download_json(page: Page) -> list[dict]:
    with page.expect_download() as download:
        page.get_by_role("button", name="Download JSON").click()
    path = ARTIFACTS.parent / "message-browser-download.json"
    download.value.save_as(path)
    return json.loads(path.read_text())


def test_newest_on_six_partitions_shows_exactly_the_latest_records(
    page: Page, live_server, acme: Payments, broker
) -> None:
    topic = _topic(acme, "interleaved", 6)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
    produced = []
    for step in range(240):
        # Even history on all partitions, then a burst on partitions 0 and 3 only.
        partition = step % 6 if step < 180 else (0 if step % 2 else 3)
        value = json.dumps({"step": step, "note": "x" * (step % 40)})
        producer.produce(
            topic.name,
            value=value.encode(),
            key=f"k-{step}".encode(),
            partition=partition,
            timestamp=BASE_MS + step * 1000,
        )
        produced.append((BASE_MS + step * 1000, partition, step))
    assert producer.flush(15) == 0
    offsets: dict[int, int] = {}
    expected_ids = []
    for _ts, partition, _step in produced:
        expected_ids.append((partition, offsets.get(partition, 0)))
        offsets[partition] = offsets.get(partition, 0) + 1
    order = sorted(range(len(produced)), key=lambda i: (produced[i][0], produced[i][1]))
    latest = {expected_ids[i] for i in order[-50:]}

    sign_in(page, f"{live_server.url}/topics/{topic.pk}/messages")
    table = page.get_by_role("table", name="Messages")
    expect(table.get_by_role("button", name="Details of")).to_have_count(50)
    assert set(_row_ids(page)) == latest
    # Newest first: the top row is step 239 (partition 0, its last offset).
    assert _row_ids(page)[0] == expected_ids[239]
    table.get_by_role(
        "button", name=f"Details of partition {expected_ids[239][0]} offset {expected_ids[239][1]}"
    ).click()
    expect(table.get_by_label("Value as JSON")).to_contain_text('"step": 239')
    _shots(page, "message-browser-newest")
    assert page.problems.messages == []


def test_live_tail_shows_every_record_produced_during_30_seconds_exactly_once(
    page: Page, live_server, acme: Payments, broker
) -> None:
    topic = _topic(acme, "tail", 6)
    sign_in(page, f"{live_server.url}/topics/{topic.pk}/messages?live=1")
    expect(page.get_by_text("Following the log end")).to_be_visible(timeout=20_000)

    produced: list[str] = []

    def produce() -> None:
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
        deadline = time.monotonic() + TAIL_SECONDS
        index = 0
        while time.monotonic() < deadline:
            value = f"tail-{index:05d}"
            producer.produce(topic.name, value=value.encode(), key=str(index).encode())
            produced.append(value)
            index += 1
            producer.poll(0)
            time.sleep(0.04)
        assert producer.flush(15) == 0

    thread = threading.Thread(target=produce)
    thread.start()
    time.sleep(TAIL_SECONDS / 2)
    _shots(page, "message-browser-live")
    thread.join()
    expect(page.get_by_text(f"{len(produced)} shown")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Following the log end")).to_be_visible()
    seen = [record["value"] for record in _download_json(page)]
    assert len(produced) > 300
    assert sorted(seen) == sorted(produced)
    assert len(set(seen)) == len(seen)
    page.get_by_role("button", name="Pause").click()
    assert page.problems.messages == []


def test_a_cel_filter_over_100_000_records_finds_the_matches_with_scan_progress(
    page: Page, live_server, acme: Payments, broker
) -> None:
    topic = _topic(acme, "orders-100k", 4)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20, "batch.num.messages": 5000})
    total = 100_000
    for n in range(total):
        body = {"n": n, "amount": n % 5000, "customer": f"c-{n % 97}"}
        producer.produce(topic.name, value=json.dumps(body).encode(), key=f"order-{n}".encode())
        if n % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0
    expected = sorted(n for n in range(total) if n % 5000 == 4321)

    sign_in(page, f"{live_server.url}/topics/{topic.pk}/messages?start=earliest")
    expect(page.get_by_role("table", name="Messages")).to_be_visible(timeout=20_000)
    page.get_by_label("Filter (CEL)").fill('value.amount == 4321 && key.startsWith("order-")')
    page.get_by_role("button", name="Browse").click()
    # While it scans: the progress bar and a running count.
    expect(page.get_by_role("progressbar", name="Scan progress")).to_be_visible(timeout=20_000)
    screenshot(page, "message-browser-filter-scanning")
    expect(page.get_by_text(f"Scanned 100,000 of 100,000 · {len(expected)} matches")).to_be_visible(
        timeout=120_000
    )
    expect(page.get_by_text("reached the end of the range")).to_be_visible()
    found = sorted(json.loads(record["value"])["n"] for record in _download_json(page))
    assert found == expected
    _shots(page, "message-browser-filter")

    # A filter that does not parse says where.
    page.get_by_label("Filter (CEL)").fill("value.amount >")
    page.get_by_role("button", name="Browse").click()
    expect(page.get_by_role("alert")).to_contain_text("(line 1, column 15)")
    screenshot(page, "message-browser-filter-error")


def test_protobuf_payloads_are_decoded(page: Page, live_server, acme: Payments, broker) -> None:
    for forget in (
        cache.clear,
        registry_auth.forget_everything,
        schemas.forget_parsed,
        decoding.forget_decoders,
    ):
        forget()
    topic = _topic(acme, "proto-orders", 1)
    _key, token = accounts.create_api_key(actor=acme.olga, name="registry", role=TeamRole.TEAM_ADMIN)
    registry = SchemaRegistryClient(
        {
            "url": f"{live_server.url}/clusters/{acme.cluster.pk}/schema-registry",
            "basic.auth.user.info": f"{token.key_id}:{token.secret}",
            "max.retries": 0,
        }
    )
    order_class, line_class = order_classes(f"{acme.prefix}common.proto")
    order = order_class(id="o-77", lines=[line_class(sku="tea", qty=3)])
    order.total.cents = 990
    order.total.currency = "EUR"
    serializer = ProtobufSerializer(order_class, registry, {"use.deprecated.format": False})
    value = serializer(order, SerializationContext(topic.name, MessageField.VALUE))
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    producer.produce(topic.name, value=value, key=b"o-77")
    producer.produce(topic.name, value=b"\x00\x00\x00\x03\xe7\x02", key=b"unknown-id")
    assert producer.flush(10) == 0

    sign_in(page, f"{live_server.url}/topics/{topic.pk}/messages?start=earliest")
    table = page.get_by_role("table", name="Messages")
    expect(table.get_by_text("schema id not found")).to_be_visible()
    table.get_by_role("button", name="Details of partition 0 offset 0").click()
    expect(table).to_contain_text("Value: Decoded (Protobuf, id")
    expect(table).to_contain_text("acme.orders.Order")
    decoded = table.get_by_label("Decoded value")
    expect(decoded).to_contain_text('"sku": "tea"')
    expect(decoded).to_contain_text('"cents": "990"')
    _shots(page, "message-browser-protobuf")
    assert page.problems.messages == []
