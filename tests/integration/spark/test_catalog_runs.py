"""Every catalog job launched through the API and run by the real Celery worker on the `spark` queue
(spark-submit on local[2]), reading a SASL + ACL broker as the team's service account. Results are checked
against values computed here from the records the test produced.

One test launches all seven runs at once, so the produced topics, the worker and the team are shared; the
worker runs them one after the other.
"""

from __future__ import annotations

import collections
import functools
import io
import json
from typing import Any

import pyarrow.parquet as pq
import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.integration.spark.conftest import Setup

# Seven spark-submits one after the other: about 2 minutes on an idle two-core box, over 20 on a crowded one.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(7 * 300 + 120)]

BASE_MS = 1_700_000_000_000  # 2023-11-14
TIME_LIMIT_S = 240  # a stuck run fails instead of holding the worker
RUN_TIMEOUT_S = TIME_LIMIT_S + 60  # each run waits behind the ones launched before it


def _orders() -> list[tuple[int, bytes | None, bytes, int]]:
    """120 JSON orders over 3 partitions, keys skewed towards 'hot', one record in 12 with no key."""
    records = []
    for i in range(120):
        key = None if i % 12 == 0 else (b"hot" if i % 3 == 0 else b"c%d" % (i % 7))
        value = json.dumps({"id": i, "amount": i % 10, "customer": {"name": f"n{i % 4}"}}).encode()
        records.append((i % 3, key, value, BASE_MS + i * 1000))
    return records


def _quality_records() -> list[tuple[int, bytes | None, bytes | None, int]]:
    good = [(0, b"k%d" % i, json.dumps({"i": i}).encode(), BASE_MS + i) for i in range(40)]
    bad = [
        (0, None, b"{broken", BASE_MS + 100),  # parse failure and null key
        (0, b"k1", json.dumps({"i": 1}).encode(), BASE_MS + 101),  # duplicate of good[1]
        (0, b"k2", None, BASE_MS + 102),  # null value
        (0, b"k3", json.dumps({"i": 3, "late": True}).encode(), BASE_MS - 3_600_000),  # an hour behind
        (0, b"k4", json.dumps({"pad": "x" * 5000}).encode(), BASE_MS + 103),  # size outlier
    ]
    return good + bad


def _flatten(document: dict[str, Any], prefix: str = "") -> dict[str, str]:
    kinds = {dict: "object", str: "string", int: "integer"}
    fields = {}
    for name, value in document.items():
        fields[prefix + name] = kinds[type(value)]
        if isinstance(value, dict):
            fields.update(_flatten(value, f"{prefix}{name}."))
    return fields


def _read_topic(config: dict[str, str], topic: str) -> list[tuple[bytes | None, bytes]]:
    consumer = Consumer({**config, "group.id": f"{topic}-check", "enable.partition.eof": True})
    consumer.assign([TopicPartition(topic, 0, 0)])
    records = []
    while True:
        message = consumer.poll(10)
        if message is None or message.error() is not None:
            break
        records.append((message.key(), message.value()))
    consumer.close()
    return records


def _tables(run: dict[str, Any]) -> dict[str, list[list[Any]]]:
    return {table["name"]: table["rows"] for table in run["result"]["tables"]}


def test_every_catalog_job_runs_through_the_celery_worker_as_the_service_account(setup: Setup) -> None:
    orders = _orders()
    orders_topic = setup.topic("orders", 3, orders)
    # In order except 30 s (after 80 s) and 85 s (after 140 s): both older than the newest minus 30 s.
    seconds = (0, 10, 20, 70, 80, 30, 130, 140, 85)
    events = [
        (0, None, json.dumps({"amount": i + 1}).encode(), BASE_MS + s * 1000) for i, s in enumerate(seconds)
    ]
    events_topic = setup.topic("events", 1, events)
    quality = _quality_records()
    quality_topic = setup.topic("quality", 1, quality)
    copy_topic = setup.topic("copy", 1, [])
    group = f"{setup.topic_prefix}-group"
    committer = Consumer({**setup.admin_config, "group.id": group, "enable.auto.commit": False})
    committer.commit(
        offsets=[TopicPartition(orders_topic, 0, 30), TopicPartition(orders_topic, 1, 40)], asynchronous=False
    )
    committer.close()
    copy_sql = (
        "SELECT CAST(get_json_object(CAST(value AS STRING), '$.customer.name') AS BINARY) AS key, value "
        "FROM source WHERE get_json_object(CAST(value AS STRING), '$.amount') >= 5"
    )
    launch = functools.partial(setup.launch, time_limit_seconds=TIME_LIMIT_S)
    launched = {
        "key_skew": launch("key_skew", {"source": {"topic": orders_topic}, "top": 3}),
        "export_parquet": launch(
            "export_parquet",
            {"source": {"topic": orders_topic, "starting_offsets": json.dumps({orders_topic: {"0": 5}})}},
        ),
        "windowed_aggregation": launch(
            "windowed_aggregation",
            {
                "source": {"topic": events_topic},
                "window_seconds": 60,
                "watermark_seconds": 30,
                "sum_field": "amount",
            },
        ),
        "json_schema_inference": launch("json_schema_inference", {"source": {"topic": orders_topic}}),
        "topic_copy": launch(
            "topic_copy", {"source": {"topic": orders_topic}, "target_topic": copy_topic, "sql": copy_sql}
        ),
        "data_quality": launch("data_quality", {"source": {"topic": quality_topic}}),
        "backlog_profile": launch(
            "backlog_profile", {"topic": orders_topic, "group_id": group, "bucket_seconds": [60]}
        ),
    }
    runs = {}
    for job, run in launched.items():
        try:
            runs[job] = setup.wait_finished(run["id"], timeout=RUN_TIMEOUT_S)
        except TimeoutError:
            states = {
                j: (setup.get(r["id"])["state"], setup.get(r["id"])["reason"]) for j, r in launched.items()
            }
            log = setup.client.get(f"/api/v1/job-runs/{run['id']}/log/").json()["lines"][-30:]
            pytest.fail(f"{job} did not finish: {states}\n" + "\n".join(log))
    assert {job: (run["state"], run["reason"]) for job, run in runs.items()} == dict.fromkeys(
        launched, ("succeeded", "")
    )
    per_partition = collections.Counter(partition for partition, *_ in orders)

    # key_skew: the top keys, and per partition records, distinct keys, null keys and bytes.
    keys = collections.Counter(key for _, key, _, _ in orders if key is not None)
    top = sorted(keys.items(), key=lambda item: (-item[1], item[0]))[:3]
    skew = _tables(runs["key_skew"])
    assert skew["top_keys"] == [[key.decode(), count] for key, count in top]
    expected_partitions = []
    for partition in range(3):
        mine = [r for r in orders if r[0] == partition]
        null_keys = sum(1 for r in mine if r[1] is None)
        expected_partitions.append(
            [
                partition,
                len(mine),
                len({r[1] for r in mine if r[1] is not None}),
                null_keys,
                round(null_keys / len(mine), 4),
                sum(len(r[1] or b"") + len(r[2]) for r in mine),
            ]
        )
    assert skew["partitions"] == expected_partitions
    chart = runs["key_skew"]["result"]["charts"][0]
    assert chart["x"] == [0, 1, 2]
    assert chart["series"] == [{"name": "records", "values": [per_partition[p] for p in range(3)]}]

    # export_parquet: the range (partition 0 from offset 5) lands in files that can be downloaded and read.
    exported = runs["export_parquet"]
    assert _tables(exported)["partitions"] == [
        [0, per_partition[0] - 5, 5, per_partition[0] - 1],
        [1, per_partition[1], 0, per_partition[1] - 1],
        [2, per_partition[2], 0, per_partition[2] - 1],
    ]
    downloaded = 0
    for path in exported["result"]["files"]:
        assert path.startswith("parquet/date=2023-11-14/partition=")
        response = setup.client.get(f"/api/v1/job-runs/{exported['id']}/download/", {"path": path})
        assert response.status_code == 200
        downloaded += pq.read_table(io.BytesIO(b"".join(response.streaming_content))).num_rows
    assert downloaded == len(orders) - 5

    # windowed_aggregation: records and the field's sum per minute, and the two late records.
    windows: dict[int, list[int]] = collections.defaultdict(lambda: [0, 0])
    for i, (_, _, _, stamp) in enumerate(events):
        windows[stamp // 60_000][0] += 1
        windows[stamp // 60_000][1] += i + 1
    rows = _tables(runs["windowed_aggregation"])["windows"]
    assert [[row[2], int(row[4])] for row in rows] == [windows[w] for w in sorted(windows)]
    assert runs["windowed_aggregation"]["result"]["metrics"]["late_records"] == 2

    # json_schema_inference: every field of every order, with its type.
    fields = _flatten(json.loads(orders[0][2]))
    assert _tables(runs["json_schema_inference"])["fields"] == [
        [path, len(orders), 1.0, kind, False] for path, kind in sorted(fields.items())
    ]
    documents = {d["name"]: d["content"] for d in runs["json_schema_inference"]["result"]["documents"]}
    assert sorted(documents["json_schema"]["required"]) == ["amount", "customer", "id"]

    # topic_copy: exactly the filtered orders, re-keyed by customer name, are in the target topic.
    expected_copy = sorted(
        (json.loads(value)["customer"]["name"].encode(), value)
        for _, _, value, _ in orders
        if json.loads(value)["amount"] >= 5
    )
    assert sorted(_read_topic(setup.admin_config, copy_topic)) == expected_copy
    assert runs["topic_copy"]["result"]["metrics"]["records_written"] == len(expected_copy)

    # data_quality: one record fails each check.
    checks = {row[0]: row[1] for row in _tables(runs["data_quality"])["checks"]}
    assert checks == dict.fromkeys(
        ("parse_failure", "null_key", "null_value", "duplicates", "timestamp_skew", "size_outlier"), 1
    )
    assert runs["data_quality"]["result"]["metrics"]["records_read"] == len(quality)

    # backlog_profile: what the group has not consumed, all of it older than a minute (produced in 2023).
    backlog = _tables(runs["backlog_profile"])
    unconsumed = (per_partition[0] - 30) + (per_partition[1] - 40) + per_partition[2]
    assert backlog["age_histogram"] == [["< 60s", 0], [">= 60s", unconsumed]]
    assert [row[:3] for row in backlog["partitions"]] == [
        [0, 30, per_partition[0] - 30],
        [1, 40, per_partition[1] - 40],
        [2, -2, per_partition[2]],
    ]
