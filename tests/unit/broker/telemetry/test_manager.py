from __future__ import annotations

import dataclasses
import datetime
import uuid

import cramjam
from kio.schema.errors import ErrorCode
from kio.schema.get_telemetry_subscriptions.v0.response import GetTelemetrySubscriptionsResponse
from opentelemetry.proto.metrics.v1.metrics_pb2 import MetricsData

from broker.telemetry.manager import ClientMetricsManager, TelemetryPush
from broker.telemetry.receiver import TelemetryReceiver
from broker.telemetry.subscriptions import ClientIdentity

ZERO = uuid.UUID(int=0)
NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CLIENT = ClientIdentity("", "orders", "librdkafka", "2.16.1", "127.0.0.1", "40000")


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000.0

    def __call__(self) -> float:
        return self.ms


def manager(
    subscriptions: dict[str, dict[str, str]], max_bytes: int = 1 << 20, max_instances: int = 100
) -> tuple[ClientMetricsManager, Clock]:
    clock = Clock()
    receiver = TelemetryReceiver(max_clients=10, clock=lambda: clock.ms / 1000)
    made = ClientMetricsManager(
        lambda: subscriptions, receiver, lambda: max_bytes, clock_ms=clock, max_instances=max_instances
    )
    return made, clock


def metrics(value: float = 1.0) -> bytes:
    data = MetricsData()
    metric = data.resource_metrics.add().scope_metrics.add().metrics.add()
    metric.name = "org.apache.kafka.producer.record.queue.time.avg"
    metric.gauge.data_points.add().as_double = value
    return data.SerializeToString()


def push(
    made: ClientMetricsManager, answer: GetTelemetrySubscriptionsResponse, payload: bytes, **changes: object
) -> ErrorCode:
    request = TelemetryPush(
        subscription_id=changes.pop("subscription_id", answer.subscription_id),  # type: ignore[arg-type]
        terminating=bool(changes.pop("terminating", False)),
        compression_type=int(changes.pop("compression", NONE)),  # type: ignore[call-overload]
        metrics=payload,
    )
    return made.push(answer.client_instance_id, CLIENT, request).error


def test_a_new_client_gets_an_instance_id_and_the_matching_subscriptions() -> None:
    made, _clock = manager(
        {
            "producers": {"metrics": "org.apache.kafka.producer.", "interval.ms": "5000"},
            "fast": {
                "metrics": "org.apache.kafka.consumer.",
                "interval.ms": "1000",
                "match": "client_id=orders",
            },
            "others": {"metrics": "*", "match": "client_id=billing"},
        }
    )
    answer = made.get_subscriptions(ZERO, CLIENT)
    assert answer.error_code == ErrorCode.none
    assert answer.client_instance_id != ZERO
    assert answer.requested_metrics == ("org.apache.kafka.consumer.", "org.apache.kafka.producer.")
    assert answer.push_interval == datetime.timedelta(seconds=1)  # the shortest of the matching subscriptions
    assert answer.accepted_compression_types == (ZSTD, LZ4, GZIP, SNAPPY)
    other = made.get_subscriptions(ZERO, CLIENT)
    assert other.client_instance_id != answer.client_instance_id
    assert other.subscription_id != answer.subscription_id  # the instance id is part of it


def test_no_matching_subscription_means_no_metrics_at_the_default_interval() -> None:
    made, _clock = manager({"billing": {"metrics": "*", "match": "client_id=billing"}})
    answer = made.get_subscriptions(ZERO, CLIENT)
    assert (answer.requested_metrics, answer.push_interval) == ((), datetime.timedelta(minutes=5))


def test_pushes_are_paced_by_the_push_interval() -> None:
    made, clock = manager({"all": {"metrics": "*", "interval.ms": "1000"}})
    answer = made.get_subscriptions(ZERO, CLIENT)
    instance = answer.client_instance_id
    assert made.get_subscriptions(instance, CLIENT).error_code == ErrorCode.throttling_quota_exceeded
    assert push(made, answer, metrics()) == ErrorCode.none  # at once after a Get (clients jitter it)
    clock.ms += 500
    assert push(made, answer, metrics()) == ErrorCode.throttling_quota_exceeded
    clock.ms += 500
    assert push(made, answer, metrics(2.0)) == ErrorCode.none
    clock.ms += 1000
    assert made.get_subscriptions(instance, CLIENT).error_code == ErrorCode.none


def test_a_changed_subscription_gets_a_new_id_and_the_client_may_ask_again_at_once() -> None:
    subscriptions = {"all": {"metrics": "org.a.", "interval.ms": "60000"}}
    made, clock = manager(subscriptions)
    answer = made.get_subscriptions(ZERO, CLIENT)
    instance = answer.client_instance_id
    assert push(made, answer, metrics()) == ErrorCode.none

    subscriptions["unrelated"] = {"metrics": "*", "match": "client_id=billing"}
    clock.ms += 60_000
    assert push(made, answer, metrics()) == ErrorCode.none, "a change that does not concern it keeps its id"

    subscriptions["all"] = {"metrics": "org.a.,org.b.", "interval.ms": "60000"}
    clock.ms += 1
    assert push(made, answer, metrics()) == ErrorCode.unknown_subscription_id
    clock.ms += 1
    again = made.get_subscriptions(instance, CLIENT)
    assert again.error_code == ErrorCode.none
    assert again.client_instance_id == instance
    assert again.subscription_id != answer.subscription_id
    assert again.requested_metrics == ("org.a.", "org.b.")
    assert push(made, again, metrics()) == ErrorCode.none


def test_a_terminating_push_is_accepted_early_and_is_the_last() -> None:
    made, _clock = manager({"all": {"metrics": "*", "interval.ms": "60000"}})
    answer = made.get_subscriptions(ZERO, CLIENT)
    assert answer.requested_metrics == ("*",)
    assert push(made, answer, metrics()) == ErrorCode.none
    assert push(made, answer, metrics(), terminating=True) == ErrorCode.none
    assert push(made, answer, metrics(), terminating=True) == ErrorCode.invalid_request


def test_bad_pushes_are_refused_with_kafkas_errors() -> None:
    made, _clock = manager({"all": {"metrics": "*"}}, max_bytes=2048)

    def fresh() -> GetTelemetrySubscriptionsResponse:
        return made.get_subscriptions(ZERO, CLIENT)

    zero = dataclasses.replace(fresh(), client_instance_id=ZERO, subscription_id=0)
    assert push(made, zero, metrics()) == ErrorCode.invalid_request
    assert push(made, fresh(), b"\x00" * 2049) == ErrorCode.telemetry_too_large
    assert push(made, fresh(), metrics(), compression=5) == ErrorCode.unsupported_compression_type
    assert push(made, fresh(), b"not protobuf at all") == ErrorCode.invalid_record
    assert push(made, fresh(), b"\x28\xb5\x2f\xfd garbage", compression=ZSTD) == ErrorCode.invalid_record
    # 1 KB of gzip that would inflate to 1 MB: decompressed, it may not exceed telemetry.max.bytes either.
    bomb = bytes(cramjam.gzip.compress(bytes(1024 * 1024)))
    assert len(bomb) <= 2048
    assert push(made, fresh(), bomb, compression=GZIP) == ErrorCode.telemetry_too_large
    for codec, compress in ((GZIP, cramjam.gzip), (LZ4, cramjam.lz4), (ZSTD, cramjam.zstd)):
        assert push(made, fresh(), bytes(compress.compress(metrics())), compression=codec) == ErrorCode.none
    raw_snappy = bytes(cramjam.snappy.compress_raw(metrics()))
    assert push(made, fresh(), raw_snappy, compression=SNAPPY) == ErrorCode.none
    assert made.receiver.series == 4


def test_an_unknown_instance_that_pushes_is_taken_as_it_comes() -> None:
    # Its Get went to another broker, or it was dropped from the cache: Kafka recreates it.
    made, _clock = manager({"all": {"metrics": "*"}})
    answer = made.get_subscriptions(ZERO, CLIENT)
    other, _clock = manager({"all": {"metrics": "*"}})
    assert push(other, answer, metrics()) == ErrorCode.none


def test_the_instance_cache_is_bounded() -> None:
    made, _clock = manager({"all": {"metrics": "*"}}, max_instances=50)
    for _ in range(1000):
        made.get_subscriptions(ZERO, CLIENT)
    assert len(made) == 50


def test_a_stored_subscription_that_no_longer_parses_is_skipped() -> None:
    made, _clock = manager({"broken": {"interval.ms": "soon"}, "fine": {"metrics": "org.a."}})
    assert made.get_subscriptions(ZERO, CLIENT).requested_metrics == ("org.a.",)
