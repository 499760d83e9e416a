"""The broker process: configuration errors, signals, metrics endpoint."""

import subprocess
import sys
import time
import urllib.request

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.fixtures.broker import REPO_ROOT
from tests.integration.broker.helpers import create_topic

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    "override",
    [
        "num.partitions=zero",
        "num.partitions=0",
        "listeners=nonsense",
        "log.cleanup.policy=sometimes",
        "metrics.port=70000",
    ],
)
def test_a_bad_config_value_exits_with_code_2_and_says_why(tmp_path, override):
    result = subprocess.run(
        [sys.executable, "-m", "broker", "--override", f"log.dirs={tmp_path}", "--override", override],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert override.split("=")[0] in result.stderr


def test_a_properties_file_is_read(tmp_path):
    (tmp_path / "broker.properties").write_text("# comment\nnum.partitions = -5\n")
    result = subprocess.run(
        [sys.executable, "-m", "broker", "--config", str(tmp_path / "broker.properties")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "num.partitions" in result.stderr


def test_sigterm_stops_gracefully_with_exit_code_0(fresh_broker):
    assert fresh_broker.stop() == 0
    log = fresh_broker.log_text()
    assert "started" in log
    assert "broker stopped" in log


def test_metrics_endpoint_reports_traffic(fresh_broker, topic_name):
    create_topic(fresh_broker.bootstrap, topic_name)
    producer = Producer({"bootstrap.servers": fresh_broker.bootstrap})
    for _ in range(10):
        producer.produce(topic_name, value=b"0123456789")
    producer.flush(10)
    text = (
        urllib.request.urlopen(f"http://127.0.0.1:{fresh_broker.metrics_port}/metrics", timeout=5)
        .read()
        .decode()
    )
    assert f'kafka_broker_topic_messages_in_total{{topic="{topic_name}"}} 10' in text
    consumer = Consumer({"bootstrap.servers": fresh_broker.bootstrap, "group.id": topic_name})
    consumer.assign([TopicPartition(topic_name, 0, 0)])
    received = 0
    deadline = time.monotonic() + 10
    while received < 10 and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        received += message is not None and message.error() is None
    consumer.close()
    text = (
        urllib.request.urlopen(f"http://127.0.0.1:{fresh_broker.metrics_port}/metrics", timeout=5)
        .read()
        .decode()
    )
    assert f'kafka_broker_topic_messages_out_total{{topic="{topic_name}"}} 10' in text
    assert 'kafka_broker_requests_total{api="produce"' in text
    assert 'kafka_broker_request_duration_seconds_bucket{api="metadata",le="+Inf"}' in text
    assert "kafka_broker_connections " in text
    assert f'kafka_log_size_bytes{{topic="{topic_name}",partition="0",log_dir=' in text


def test_idle_connections_are_closed_after_connections_max_idle_ms(broker_factory):
    import socket
    import time

    broker = broker_factory(connections_max_idle_ms=400)
    with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as sock:
        started = time.monotonic()
        sock.settimeout(5)
        assert sock.recv(1) == b""
        assert time.monotonic() - started < 3


def test_sigterm_during_a_long_poll_answers_it_and_exits_promptly(fresh_broker, topic_name):
    import datetime
    import threading
    import time

    from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic
    from kio.static.primitive import i32Timedelta

    from tests.integration.broker.kafka_wire import WireClient

    create_topic(fresh_broker.bootstrap, topic_name)
    request = FetchRequest(
        max_wait=i32Timedelta.parse(datetime.timedelta(seconds=20)),
        min_bytes=1,
        topics=(
            FetchTopic(
                topic=topic_name,
                partitions=(FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1000),),
            ),
        ),
        forgotten_topics_data=(),
    )
    answers = []
    with WireClient(fresh_broker.bootstrap, timeout=15) as client:
        poller = threading.Thread(target=lambda: answers.append(client.request(request)))
        poller.start()
        time.sleep(0.5)
        started = time.monotonic()
        assert fresh_broker.stop() == 0
        poller.join(10)
    assert time.monotonic() - started < 5
    assert answers
    assert answers[0].responses[0].partitions[0].error_code.value == 0
