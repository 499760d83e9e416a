"""Client quotas with real clients: byte rates held, throttling reported, others unaffected."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AclOperation, ResourcePatternType, ResourceType

from tests.fixtures.broker import CertificateFiles, SecureBrokerProcess
from tests.integration.broker_security.clients import (
    add_scram_user,
    create_topic_as_admin,
    grant,
    unique,
)
from tests.integration.broker_security.wire import alter_quotas, describe_quotas

MB = 1_000_000
MESSAGE = b"x" * 10_000
MEASURE_S = 10.0
WARM_UP_S = 3.0


@pytest.fixture(scope="module")
def quota_broker(
    tmp_path_factory: pytest.TempPathFactory, test_certificates: CertificateFiles
) -> Iterator[SecureBrokerProcess]:
    """Kafka's rate lets a new client burst (quota.window.num - 1) windows' worth before it is
    throttled (about 1.1-1.2 MB in the first 10 s at 1 MB/s with the default 11 windows);
    5 windows keep that burst small next to a 10-second measurement."""
    process = SecureBrokerProcess(
        tmp_path_factory.mktemp("quota-broker"), {"quota.window.num": "5"}, test_certificates
    )
    process.start()
    yield process
    process.kill9()


class Throttles:
    def __init__(self) -> None:
        self.times_ms: list[int] = []

    def __call__(self, event: Any) -> None:
        self.times_ms.append(int(event.throttle_time * 1000))


def user_config(broker: SecureBrokerProcess, user: str) -> dict[str, Any]:
    password = "pw-" + user
    add_scram_user(broker, user, password, "SCRAM-SHA-512")
    return broker.client_config(user, password, "SCRAM-SHA-512")


def produce_for(
    config: dict[str, Any],
    topic: str,
    seconds: float,
    throttles: Throttles | None = None,
    acks: list[tuple[float, int]] | None = None,
) -> float:
    """Produce as fast as the client can for `seconds`; returns acknowledged bytes per second.

    `acks` (if given) collects (monotonic time, bytes) for every acknowledged message.
    """
    acknowledged = [0]

    def delivered(error: Any, message: Any) -> None:
        if error is None:
            acknowledged[0] += len(message.value())
            if acks is not None:
                acks.append((time.monotonic(), len(message.value())))

    extra = {"throttle_cb": throttles} if throttles is not None else {}
    producer = Producer({**config, "linger.ms": 5, "batch.size": 100_000, **extra})
    started = time.monotonic()
    deadline = started + seconds
    while time.monotonic() < deadline:
        try:
            producer.produce(topic, MESSAGE, on_delivery=delivered)
        except BufferError:
            producer.poll(0.01)
            continue
        producer.poll(0)
    producer.poll(0)
    rate = acknowledged[0] / (time.monotonic() - started)
    producer.purge()
    producer.flush(5)
    return rate


def consume_for(
    config: dict[str, Any], topic: str, seconds: float, throttles: Throttles | None = None
) -> float:
    extra = {"throttle_cb": throttles} if throttles is not None else {}
    consumer = Consumer(
        {
            **config,
            "group.id": unique("q"),
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **extra,
        }
    )
    consumer.subscribe([topic])
    received = 0
    started = None
    try:
        while True:
            message = consumer.poll(0.1)
            if message is not None and not message.error():
                if started is None:
                    started = time.monotonic()  # count from the first record: joining is not reading
                received += len(message.value())
            if started is not None and time.monotonic() - started >= seconds:
                return received / (time.monotonic() - started)
    finally:
        consumer.close()


def test_a_producer_limited_to_1_mb_per_second_gets_about_that_and_others_are_unaffected(
    quota_broker: SecureBrokerProcess,
) -> None:
    limited_user, free_user = unique("slowp"), unique("fastp")
    limited, free = user_config(quota_broker, limited_user), user_config(quota_broker, free_user)
    assert alter_quotas(quota_broker, {"user": limited_user}, {"producer_byte_rate": 1 * MB}) == (0, None)
    limited_topic, free_topic = unique("qp"), unique("qp")
    create_topic_as_admin(quota_broker, limited_topic)
    create_topic_as_admin(quota_broker, free_topic)
    for user, topic in ((limited_user, limited_topic), (free_user, free_topic)):
        grant(quota_broker, user, ResourceType.TOPIC, topic, AclOperation.WRITE)

    throttles = Throttles()
    rates: dict[str, float] = {}
    acks: list[tuple[float, int]] = []
    other = threading.Thread(target=lambda: rates.update(free=produce_for(free, free_topic, MEASURE_S)))
    other.start()
    started = time.monotonic()
    rates["total"] = produce_for(limited, limited_topic, MEASURE_S, throttles, acks)
    other.join()
    # The quota is a rate over Kafka's sampled windows: the first seconds may burst above it (as in
    # Kafka). Judge the steady state after the warm-up.
    steady = [size for at, size in acks if at >= started + WARM_UP_S]
    rates["limited"] = sum(steady) / (max(at for at, _ in acks) - started - WARM_UP_S)

    # Below the quota by more than the throttle's own error only when the machine starves the producer: a whole
    # run at load 20-28 measured 0.79 MB/s beside the free producer's 230 MB/s.
    assert 0.7 * MB <= rates["limited"] <= 1.2 * MB, rates
    assert rates["free"] > 3 * MB, rates
    assert throttles.times_ms
    assert max(throttles.times_ms) > 0


def test_a_consumer_limited_to_1_mb_per_second_gets_about_that_and_others_are_unaffected(
    quota_broker: SecureBrokerProcess,
) -> None:
    topic = unique("qc")
    create_topic_as_admin(quota_broker, topic)
    admin = quota_broker.client_config()
    produce_for({**admin, "compression.type": "none"}, topic, 4.0)  # tens of MB to read
    limited_user, free_user = unique("slowc"), unique("fastc")
    limited, free = user_config(quota_broker, limited_user), user_config(quota_broker, free_user)
    for user in (limited_user, free_user):
        grant(quota_broker, user, ResourceType.TOPIC, topic, AclOperation.READ)
        grant(
            quota_broker,
            user,
            ResourceType.GROUP,
            "q-",
            AclOperation.READ,
            pattern=ResourcePatternType.PREFIXED,
        )
    assert alter_quotas(quota_broker, {"user": limited_user}, {"consumer_byte_rate": 1 * MB}) == (0, None)

    throttles = Throttles()
    rates: dict[str, float] = {}
    other = threading.Thread(target=lambda: rates.update(free=consume_for(free, topic, 3.0)))
    other.start()
    rates["limited"] = consume_for(limited, topic, MEASURE_S, throttles)
    other.join()

    # Below the quota by more than the throttle's own error only when the machine starves the producer: a whole
    # run at load 20-28 measured 0.79 MB/s beside the free producer's 230 MB/s.
    assert 0.7 * MB <= rates["limited"] <= 1.2 * MB, rates
    assert rates["free"] > 3 * MB, rates
    assert throttles.times_ms
    assert max(throttles.times_ms) > 0


def test_raising_a_quota_takes_effect_within_one_window(quota_broker: SecureBrokerProcess) -> None:
    user = unique("raise")
    config = user_config(quota_broker, user)
    topic = unique("qr")
    create_topic_as_admin(quota_broker, topic)
    grant(quota_broker, user, ResourceType.TOPIC, topic, AclOperation.WRITE)
    alter_quotas(quota_broker, {"user": user}, {"producer_byte_rate": 0.3 * MB})
    acknowledged: list[tuple[float, int]] = []
    producing = threading.Thread(target=produce_for, args=(config, topic, 7.0), kwargs={"acks": acknowledged})
    started = time.monotonic()
    producing.start()
    time.sleep(4.0)
    alter_quotas(quota_broker, {"user": user}, {"producer_byte_rate": 50 * MB})
    raised_at = time.monotonic() - started
    producing.join()

    def rate(start: float, end: float) -> float:
        return sum(size for at, size in acknowledged if start <= at - started < end) / (end - start)

    assert rate(2.0, 4.0) < 0.6 * MB
    # One window (1 s) after the change the producer is no longer held to the old quota. (How far above it
    # depends on the client's CPU share, which a loaded CI machine squeezes: 1.4 to 10+ MB/s seen.)
    assert rate(raised_at + 1.0, 7.0) > 3 * 0.3 * MB, (rate(2.0, 4.0), rate(raised_at + 1.0, 7.0))


def test_quotas_are_described_with_kafka_filters_validated_and_persisted(secure_broker_factory) -> None:
    broker = secure_broker_factory()
    assert alter_quotas(
        broker, {"user": "alice"}, {"producer_byte_rate": 1024, "request_percentage": 50}
    ) == (0, None)
    assert alter_quotas(broker, {"user": None, "client-id": None}, {"consumer_byte_rate": 2048}) == (0, None)
    assert alter_quotas(broker, {"ip": "127.0.0.1"}, {"connection_creation_rate": 100}) == (0, None)
    assert alter_quotas(broker, {"user": "bob"}, {"producer_byte_rate": 1}, validate_only=True) == (0, None)

    assert alter_quotas(broker, {"user": "alice"}, {"no_such_key": 1})[0] == 42
    assert alter_quotas(broker, {"ip": "not-an-ip"}, {"connection_creation_rate": 1})[0] == 42
    assert alter_quotas(broker, {"user": "alice", "ip": "127.0.0.1"}, {"producer_byte_rate": 1})[0] == 42
    assert alter_quotas(broker, {"user": "alice"}, {"producer_byte_rate": -5})[0] == 42

    assert describe_quotas(broker, [("user", 0, "alice")]) == [
        ({"user": "alice"}, {"producer_byte_rate": 1024.0, "request_percentage": 50.0})
    ]
    assert describe_quotas(broker, [("user", 0, "bob")]) == []  # validate_only stored nothing
    assert describe_quotas(broker, [("user", 1, None)]) == [
        ({"client-id": None, "user": None}, {"consumer_byte_rate": 2048.0})
    ]
    assert describe_quotas(broker, [("user", 1, None)], strict=True) == []
    assert len(describe_quotas(broker, [])) == 3

    broker.restart()
    assert alter_quotas(broker, {"user": "alice"}, {"request_percentage": None}) == (0, None)
    assert describe_quotas(broker, [("user", 2, None)], strict=True) == [
        ({"user": "alice"}, {"producer_byte_rate": 1024.0})
    ]


def test_quota_apis_need_cluster_permissions(secure_broker: SecureBrokerProcess) -> None:
    from kio.schema.alter_client_quotas.v1.request import (
        AlterClientQuotasRequest,
        EntityData,
        EntryData,
        OpData,
    )
    from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
    from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest
    from kio.static.primitive import f64

    from tests.integration.broker.kafka_wire import WireClient

    user = unique("noquota")
    user_config(secure_broker, user)
    with WireClient(secure_broker.bootstrap) as client:
        client.request(SaslHandshakeRequest(mechanism="PLAIN"))
        token = b"\0" + user.encode() + b"\0" + ("pw-" + user).encode()
        assert client.request(SaslAuthenticateRequest(auth_bytes=token)).error_code == 0
        response = client.request(
            AlterClientQuotasRequest(
                entries=(
                    EntryData(
                        entity=(EntityData(entity_type="user", entity_name=user),),
                        ops=(OpData(key="producer_byte_rate", value=f64(1e9), remove=False),),
                    ),
                ),
                validate_only=False,
            )
        )
        assert response.entries[0].error_code == 31  # CLUSTER_AUTHORIZATION_FAILED


def test_connections_over_an_ip_connection_rate_are_refused(secure_broker_factory) -> None:
    from tests.integration.broker.kafka_wire import WireClient

    broker = secure_broker_factory(quota_window_num=2)
    assert alter_quotas(broker, {"ip": "127.0.0.1"}, {"connection_creation_rate": 3}) == (0, None)
    refused = 0
    for _ in range(8):
        with WireClient(broker.bootstrap) as client:
            if client.is_closed_by_peer(timeout=0.3):
                refused += 1
    assert refused >= 3


def test_topic_mutations_over_the_controller_mutation_rate_are_refused(secure_broker_factory) -> None:
    import datetime

    from kio.schema.create_topics.v7.request import CreatableTopic, CreateTopicsRequest
    from kio.static.primitive import i16, i32, i32Timedelta

    from tests.integration.broker_security.wire import admin_wire_client

    broker = secure_broker_factory()
    assert alter_quotas(broker, {"user": "admin"}, {"controller_mutation_rate": 1}) == (0, None)

    def create(name: str, partitions: int) -> tuple[int, int]:
        request = CreateTopicsRequest(
            topics=(
                CreatableTopic(
                    name=name,
                    num_partitions=i32(partitions),
                    replication_factor=i16(1),
                    assignments=(),
                    configs=(),
                ),
            ),
            timeout=i32Timedelta.parse(datetime.timedelta(seconds=5)),
            validate_only=False,
        )
        with admin_wire_client(broker) as client:
            response = client.request(request)
        return int(response.topics[0].error_code), int(response.throttle_time.total_seconds() * 1000)

    assert create(unique("m"), 20)[0] == 0  # accepted, but now far over 1 partition/s
    error, throttle_ms = create(unique("m"), 1)
    assert error == 89  # THROTTLING_QUOTA_EXCEEDED
    assert throttle_ms > 0
