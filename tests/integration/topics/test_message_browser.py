"""The message browser through the REST API on a real broker: Newest across partitions is exactly the
latest N by time, a live tail sees every record produced while it runs exactly once, a CEL filter scans
with progress over many records, and bad or hostile filters are refused in words."""

from __future__ import annotations

import json
import threading
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.integration.topics.world import KafkaWorld, create_topic

pytestmark = pytest.mark.integration

# An hour ago, on a whole second: records stamped further back (this test once used 2023) can be deleted under the
# test by the shared broker's retention pass (every 5 min, on ours as on Kafka; the team's policy caps retention.ms).
BASE_MS = (int(time.time()) - 3600) * 1000


def _topic(world: KafkaWorld, suffix: str, partitions: int) -> tuple[str, str]:
    name = f"{world.topic_prefix_a}{suffix}-{uuid.uuid4().hex[:6]}"
    topic = create_topic(world, world.developer_a, name, partitions=partitions)
    return name, f"/api/v1/topics/{topic['id']}/messages/"


def _get(world: KafkaWorld, url: str, **query: Any) -> dict[str, Any]:
    response = world.viewer_a.get(url, query)
    assert response.status_code == 200, response.content
    return response.json()


def test_newest_across_six_partitions_is_exactly_the_latest_records_by_time(kafka_world: KafkaWorld) -> None:
    """A known interleaving: partition 0 holds most of the recent records, partition 5 only old ones, and
    partitions have different lengths, so per-partition slices of the same size would be wrong."""
    world = kafka_world
    name, url = _topic(world, "newest", 6)
    producer = world.producer()
    produced: list[tuple[int, int, int]] = []  # (timestamp, partition, sequence)
    sequence = 0
    for step in range(300):
        # Old records everywhere first, then a burst concentrated on partitions 0 and 2.
        partition = step % 6 if step < 200 else (0 if step % 3 else 2)
        timestamp = BASE_MS + step * 10
        producer.produce(
            name, value=json.dumps({"n": sequence}).encode(), partition=partition, timestamp=timestamp
        )
        produced.append((timestamp, partition, sequence))
        sequence += 1
    # Two records with the same timestamp on different partitions: the partition decides.
    for partition in (4, 1):
        producer.produce(
            name, value=json.dumps({"n": sequence}).encode(), partition=partition, timestamp=BASE_MS + 5000
        )
        produced.append((BASE_MS + 5000, partition, sequence))
        sequence += 1
    assert producer.flush(15) == 0

    for limit in (50, 7):
        answer = _get(world, url, start="newest", limit=limit)
        got = [json.loads(m["value"]["data"])["n"] for m in answer["messages"]]
        expected = [n for _ts, _p, n in sorted(produced, key=lambda item: (item[0], item[1]))[-limit:]]
        assert got == expected, (limit, got, expected)
        assert answer["cursor"] is None
        assert answer["messages"][-1]["partition"] == 4  # equal times: partition 1 before partition 4
    newest = _get(world, url, start="newest", limit=50)
    assert {m["partition"] for m in newest["messages"]} == {0, 1, 2, 4}
    assert newest["end_offsets"] == {str(p): sum(1 for _t, q, _n in produced if q == p) for p in range(6)}
    one_partition = _get(world, url, start="newest", limit=5, partition=5)
    on_five = sum(1 for _t, p, _n in produced if p == 5)
    assert [m["offset"] for m in one_partition["messages"]] == list(range(on_five - 5, on_five))

    oldest = _get(world, url, start="earliest", limit=6)
    assert sorted(json.loads(m["value"]["data"])["n"] for m in oldest["messages"]) == list(range(6))
    step_150 = datetime.fromtimestamp((BASE_MS + 1500) / 1000, UTC)
    by_time = _get(
        world, url, start="timestamp", timestamp=step_150.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z", limit=3
    )
    assert [json.loads(m["value"]["data"])["n"] for m in by_time["messages"]] == [150, 151, 152]
    by_offset = _get(world, url, start="offset", partition=0, offset=40, limit=2)
    assert [(m["partition"], m["offset"]) for m in by_offset["messages"]] == [(0, 40), (0, 41)]


def test_a_live_tail_sees_every_record_produced_while_it_runs_exactly_once(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    name, url = _topic(world, "tail", 6)
    producer = world.producer()
    for index in range(20):  # history the tail starts after
        producer.produce(name, value=b"old-%d" % index, partition=index % 6)
    assert producer.flush(15) == 0

    first = _get(world, url, live="true", limit=10)
    assert len(first["messages"]) == 10
    cursor = first["cursor"]
    assert cursor
    assert first["lag"] == 0

    produced: list[str] = []
    stop = threading.Event()

    def produce() -> None:
        tail_producer = world.producer()
        index = 0
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            value = f"new-{index}"
            tail_producer.produce(name, value=value.encode(), key=str(index).encode())
            produced.append(value)
            index += 1
            if index % 25 == 0:
                tail_producer.flush(5)
                time.sleep(0.05)
        assert tail_producer.flush(15) == 0
        stop.set()

    thread = threading.Thread(target=produce)
    thread.start()
    seen: list[str] = []
    lags = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        answer = _get(world, url, live="true", cursor=cursor, wait=1, limit=200)
        seen += [m["value"]["data"] for m in answer["messages"]]
        cursor = answer["cursor"]
        lags.append(answer["lag"])
        if stop.is_set() and answer["lag"] == 0 and not answer["messages"]:
            break
    thread.join()
    assert len(produced) > 100
    assert sorted(seen) == sorted(produced)
    assert len(seen) == len(set(seen))
    assert all(lag >= 0 for lag in lags)


def test_a_cel_filter_scans_with_progress_and_finds_every_match(kafka_world: KafkaWorld, settings) -> None:
    world = kafka_world
    settings.MESSAGE_SCAN_POLL_SECONDS = 0.3  # several steps, so the cursor and progress are exercised
    name, url = _topic(world, "filter", 3)
    producer = world.producer()
    total = 6000
    for n in range(total):
        body = {"n": n, "amount": n % 1000, "customer": f"c-{n % 7}"}
        producer.produce(
            name,
            value=json.dumps(body).encode(),
            key=f"order-{n}".encode(),
            headers=[("source", b"web" if n % 2 else b"app")],
        )
        if n % 1000 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0

    expression = 'value.amount == 7 && headers["source"] == "web" && key.startsWith("order-")'
    query = {"start": "earliest", "filter": expression, "limit": 500}
    found: list[int] = []
    progress = []
    cursor = ""
    for _step in range(200):
        answer = _get(world, url, **query, **({"cursor": cursor} if cursor else {}))
        found += [json.loads(m["value"]["data"])["n"] for m in answer["messages"]]
        progress.append(answer["progress"])
        cursor = answer["cursor"]
        if cursor is None:
            break
    expected = [n for n in range(total) if n % 1000 == 7 and n % 2]
    assert sorted(found) == expected
    assert progress[-1]["done"]
    assert progress[-1]["stopped_because"] == "end"
    assert progress[-1]["scanned"] == total
    assert progress[-1]["matched"] == len(expected)
    scanned = [step["scanned"] for step in progress]
    assert scanned == sorted(scanned)
    assert all(step["scanned"] + step["remaining"] == total for step in progress)

    # Newest with a filter scans backwards: the latest matches, and a limit stops the scan early.
    newest = _get(world, url, start="newest", filter="value.amount == 999", limit=2)
    steps = [newest]
    while steps[-1]["cursor"]:
        steps.append(
            _get(
                world, url, start="newest", filter="value.amount == 999", limit=2, cursor=steps[-1]["cursor"]
            )
        )
    matched = sorted(json.loads(m["value"]["data"])["n"] for step in steps for m in step["messages"])
    assert matched[-2:] == [4999, 5999]  # the page keeps the newest `limit` of all answers
    assert steps[-1]["progress"]["stopped_because"] == "limit"

    # A field that is not there fails on every record: counted and explained, nothing matches.
    missing = _get(world, url, start="earliest", filter="value.nope > 1", limit=10)
    assert missing["messages"] == []
    assert missing["progress"]["filter_errors"] > 0
    assert "nope" in missing["progress"]["first_filter_error"]


@pytest.mark.parametrize(
    ("expression", "code", "column"),
    [
        ("value.amount >", "invalid_filter", 15),
        ("value.amount ==== 1", "invalid_filter", 16),
        ("(" * 40 + "true" + ")" * 40, "invalid_filter", 33),
    ],
)
def test_a_bad_filter_is_a_400_with_the_position(kafka_world: KafkaWorld, expression, code, column) -> None:
    world = kafka_world
    _name, url = _topic(world, "bad", 1)
    response = world.viewer_a.get(url, {"start": "earliest", "filter": expression})
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == code
    assert error["details"]["line"] == 1
    assert error["details"]["column"] == column


def test_hostile_filters_are_stopped_by_time_and_memory_limits(kafka_world: KafkaWorld, settings) -> None:
    world = kafka_world
    name, url = _topic(world, "hostile", 1)
    items = ",".join('"xxxxxxxxxx"' for _ in range(60_000))
    producer = world.producer()
    producer.produce(name, value=f'{{"items": [{items}]}}'.encode())
    assert producer.flush(15) == 0

    started = time.monotonic()
    slow = world.viewer_a.get(
        url, {"start": "earliest", "filter": "value.items.all(a, value.items.all(b, a == b))"}
    )
    assert slow.status_code == 400, slow.content
    assert slow.json()["error"]["code"] == "filter_too_slow"
    assert time.monotonic() - started < 15
    # Time enough that memory, not time, is what stops the next one (gigabytes of copied strings).
    settings.MESSAGE_FILTER_BATCH_SECONDS = 60
    settings.MESSAGE_FILTER_MEMORY_MB = 256
    huge = world.viewer_a.get(
        url, {"start": "earliest", "filter": "value.items.map(x, valueText + valueText).size() > 0"}
    )
    assert huge.status_code == 400, huge.content
    assert huge.json()["error"]["code"] == "filter_too_expensive"
    too_long = world.viewer_a.get(url, {"start": "earliest", "filter": "true && " * 400 + "true"})
    assert too_long.status_code == 400
    forged = world.viewer_a.get(url, {"start": "earliest", "cursor": "eyJrIjoidGFpbCJ9"})
    assert forged.status_code == 400
    assert forged.json()["error"]["code"] == "invalid_cursor"
