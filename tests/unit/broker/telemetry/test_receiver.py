from __future__ import annotations

import re
import time

import pytest
from opentelemetry.proto.metrics.v1.metrics_pb2 import MetricsData

from broker.telemetry import receiver as receiver_module
from broker.telemetry.receiver import TelemetryDecodeError, TelemetryReceiver, decode_samples
from broker.telemetry.subscriptions import ClientIdentity

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def families(receiver: TelemetryReceiver) -> list[tuple[str, str, list[tuple[dict[str, str], float]]]]:
    """The receiver's exposition read back as Prometheus reads it: (name, help, [(labels, value)])."""
    read: list[tuple[str, str, list[tuple[dict[str, str], float]]]] = []
    for line in receiver.exposition():
        if line.startswith("# HELP "):
            name, help_text = line[len("# HELP ") :].split(" ", 1)
            read.append((name, help_text, []))
        elif not line.startswith("#"):
            match = _SAMPLE.match(line)
            assert match is not None, line
            assert match.group(1) == read[-1][0], "a sample outside its family"
            read[-1][2].append((dict(_LABEL.findall(match.group(2))), float(match.group(3))))
    return read


def client(instance: str, client_id: str = "app") -> ClientIdentity:
    return ClientIdentity(instance, client_id, "librdkafka", "2.16.1", "127.0.0.1", "1")


def payload(points: int = 1, name: str = "org.apache.kafka.producer.node.request.latency.avg") -> bytes:
    data = MetricsData()
    metric = data.resource_metrics.add().scope_metrics.add().metrics.add()
    metric.name = name
    for number in range(points):
        point = metric.gauge.data_points.add()
        point.as_double = float(number)
        attribute = point.attributes.add()
        attribute.key = "node.id"
        attribute.value.int_value = number
    return data.SerializeToString()


def test_the_latest_values_are_exported_with_the_client_labels() -> None:
    receiver = TelemetryReceiver(max_clients=10)
    receiver.export(client("i-1", "orders"), 1000, payload(2))
    data = MetricsData()
    total = data.resource_metrics.add().scope_metrics.add().metrics.add()
    total.name = "org.apache.kafka.consumer.fetch.latency"
    point = total.histogram.data_points.add()
    point.count, point.sum = 4, 10.5
    receiver.export(client("i-1", "orders"), 1000, data.SerializeToString())
    exported = {name: samples for name, _help, samples in families(receiver)}
    assert exported["kafka_client_org_apache_kafka_producer_node_request_latency_avg"] == [
        ({"client_instance_id": "i-1", "client_id": "orders", "node_id": "0"}, 0.0),
        ({"client_instance_id": "i-1", "client_id": "orders", "node_id": "1"}, 1.0),
    ]
    assert exported["kafka_client_org_apache_kafka_consumer_fetch_latency_count"][0][1] == 4.0
    assert exported["kafka_client_org_apache_kafka_consumer_fetch_latency_sum"][0][1] == 10.5


@pytest.mark.parametrize(
    "garbage",
    [
        b"\xff" * 64,
        b"\x0a\x80\x80\x80\x80\x10",  # a length far beyond the payload
        b"\x0a" * 5000,  # nested lengths
    ],
)
def test_garbage_does_not_decode(garbage: bytes) -> None:
    with pytest.raises(TelemetryDecodeError):
        list(decode_samples(garbage))


def test_deeply_nested_attribute_values_are_refused_not_a_crash() -> None:
    # AnyValue can nest (array_value of AnyValue ...): 10,000 levels deep, beyond the parser's limit.
    value = b""  # an empty AnyValue
    for _ in range(10_000):
        value = b"\x0a" + _varint(len(value)) + value  # ArrayValue.values
        value = b"\x2a" + _varint(len(value)) + value  # AnyValue.array_value
    key_value = b"\x0a\x01k\x12" + _varint(len(value)) + value
    resource = b"\x0a" + _varint(len(key_value)) + key_value  # Resource.attributes
    resource_metrics = b"\x0a" + _varint(len(resource)) + resource  # ResourceMetrics.resource
    with pytest.raises(TelemetryDecodeError):
        list(decode_samples(b"\x0a" + _varint(len(resource_metrics)) + resource_metrics))


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def test_clients_series_and_labels_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(receiver_module, "MAX_SERIES_PER_CLIENT", 100)
    monkeypatch.setattr(receiver_module, "MAX_SERIES", 250)
    receiver = TelemetryReceiver(max_clients=3)
    for number in range(5):
        receiver.export(client(f"i-{number}"), 1000, payload(150))
    assert len(receiver) == 3  # the two that pushed first were dropped
    assert receiver.series == 250  # 100 + 100 + 50: the global cap
    assert receiver.dropped_series > 0
    names = {samples[0]["client_instance_id"] for _n, _h, family in families(receiver) for samples in family}
    assert names == {"i-2", "i-3", "i-4"}

    data = MetricsData()
    metric = data.resource_metrics.add().scope_metrics.add().metrics.add()
    metric.name = "x" * 10_000
    point = metric.gauge.data_points.add()
    for number in range(50):
        attribute = point.attributes.add()
        attribute.key = f"k{number}"
        attribute.value.string_value = "v" * 10_000
    small = TelemetryReceiver(max_clients=1)
    small.export(client("i", "c" * 10_000), 1000, data.SerializeToString())
    [(name, _help, [(labels, _value)])] = families(small)
    assert len(name) <= 250
    assert len(labels) == 2 + receiver_module.MAX_ATTRIBUTES
    assert all(len(value) <= receiver_module.MAX_LABEL_VALUE_CHARS for value in labels.values())


def test_clients_that_stop_pushing_expire() -> None:
    now = [1000.0]
    receiver = TelemetryReceiver(max_clients=10, clock=lambda: now[0])
    receiver.export(client("fast"), 1000, payload())  # expires after 60 s (the minimum)
    receiver.export(client("slow"), 600_000, payload())  # after 3 intervals: 30 minutes
    now[0] += 61
    assert {s[0]["client_instance_id"] for _n, _h, f in families(receiver) for s in f} == {"slow"}
    assert receiver.series == 1
    now[0] += 1800
    assert families(receiver) == []
    assert len(receiver) == 0


def test_one_push_reads_a_bounded_number_of_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(receiver_module, "MAX_SERIES_PER_CLIENT", 1_000_000)
    receiver = TelemetryReceiver(max_clients=10)
    huge = payload(200_000)  # ~2.6 MB of data points
    started = time.perf_counter()
    receiver.export(client("i"), 1000, huge)
    elapsed = time.perf_counter() - started
    assert receiver.series == receiver_module.MAX_POINTS_PER_PUSH
    assert elapsed < 2.0  # a bound for a loaded machine: it takes ~0.1 s unloaded


def test_attribute_names_become_valid_label_names() -> None:
    data = MetricsData()
    metric = data.resource_metrics.add().scope_metrics.add().metrics.add()
    metric.name = "1st.metric"
    point = metric.gauge.data_points.add()
    for key in ("__name__", "0day", "client_id", "node.id"):
        attribute = point.attributes.add()
        attribute.key = key
        attribute.value.string_value = "v"
    receiver = TelemetryReceiver(max_clients=1)
    receiver.export(client("i", "real"), 1000, data.SerializeToString())
    [(name, _help, [(labels, _value)])] = families(receiver)
    assert name == "kafka_client_1st_metric"
    assert labels == {
        "client_instance_id": "i",
        "client_id": "real",
        "name__": "v",
        "_0day": "v",
        "node_id": "v",
    }
