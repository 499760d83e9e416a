"""Acceptance 3: a quota set through the API is enforced on the cluster (measured with a real producer)
and shows in the API; a team cannot set defaults or another team's quotas."""

from __future__ import annotations

import threading
import time

import pytest
from django.core.cache import cache

from tests.fixtures.engines import STREAMHUB, ManagedCluster, engine_params
from tests.integration.topics.world import KafkaWorld, build_world, create_topic, reconcile

pytestmark = pytest.mark.integration

LIMIT = 200_000  # bytes per second
MESSAGE = b"x" * 5_000


@pytest.fixture(params=engine_params(slow_on_apache_kafka=True))
def quota_world(db, settings, request: pytest.FixtureRequest) -> KafkaWorld:
    """A cluster of its own of each engine (the Apache Kafka one is a JVM more: left out of CI's budget)."""
    # Kafka lets a new client burst (quota.window.num - 1) windows' worth; two 1 s windows keep that
    # burst small next to a few seconds of measurement.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    windows = {"quota.window.num": "2", "quota.window.size.seconds": "1"}
    if request.param == STREAMHUB:
        return build_world(
            ManagedCluster.of_streamhub(request.getfixturevalue("secure_broker_factory")(properties=windows))
        )
    return build_world(
        ManagedCluster.of_apache_kafka(request.getfixturevalue("apache_kafka_factory")(**windows))
    )


def _produce_rate(world: KafkaWorld, user: str, password: str, topic: str, seconds: float) -> float:
    acknowledged = [0]

    def delivered(error, message) -> None:
        if error is None:
            acknowledged[0] += len(message.value())

    producer = world.producer(user, password, **{"linger.ms": 5, "batch.size": 50_000})
    started = time.monotonic()
    while time.monotonic() - started < seconds:
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


def _credential(world: KafkaWorld, account) -> str:
    body = {"service_account": account.id, "cluster": world.cluster.id}
    client = world.developer_a if account == world.account_a else world.admin_b
    response = client.post("/api/v1/scram-credentials/", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["password"]


def test_a_quota_set_through_the_api_holds_a_real_producer_to_it(quota_world: KafkaWorld) -> None:
    world = quota_world
    topic = world.topic_prefix_a + "metered"
    free_topic = world.topic_prefix_b + "free"
    create_topic(world, world.developer_a, topic)
    created = world.admin_b.post(
        "/api/v1/topics/",
        {"cluster": world.cluster.id, "team": world.team_b.id, "name": free_topic, "partitions": 1},
        format="json",
    )
    assert created.status_code == 201, created.json()
    for client, account, prefix in (
        (world.developer_a, world.account_a, world.topic_prefix_a),
        (world.admin_b, world.account_b, world.topic_prefix_b),
    ):
        grant = {
            "cluster": world.cluster.id,
            "service_account": account.id,
            "template": "producer",
            "topic_prefix": prefix,
        }
        assert client.post("/api/v1/access-grants/", grant, format="json").status_code == 201
    password_a, password_b = _credential(world, world.account_a), _credential(world, world.account_b)

    response = world.developer_a.post(
        "/api/v1/quotas/",
        {
            "cluster": world.cluster.id,
            "entity": {"user": world.account_a.name},
            "values": {"producer_byte_rate": LIMIT},
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    quota = response.json()
    assert quota["entity"] == {"user": world.account_a.name}
    assert quota["team"] == world.team_a.id

    rates: dict[str, float] = {}
    other = threading.Thread(
        target=lambda: rates.update(
            free=_produce_rate(world, world.account_b.name, password_b, free_topic, 4.0)
        )
    )
    other.start()
    rates["limited"] = _produce_rate(world, world.account_a.name, password_a, topic, 4.0)
    other.join()
    assert 0.5 * LIMIT <= rates["limited"] <= 1.5 * LIMIT, rates
    assert rates["free"] > 5 * LIMIT, rates

    reconcile(world)
    shown = world.developer_a.get(f"/api/v1/quotas/{quota['id']}/").json()
    assert shown["observed_values"] == {"producer_byte_rate": float(LIMIT)}
    assert shown["exists_on_cluster"] is True

    raised = world.developer_a.patch(
        f"/api/v1/quotas/{quota['id']}/",
        {"values": {"producer_byte_rate": None, "consumer_byte_rate": 1e6}},
        format="json",
    )
    assert raised.json()["values"] == {"consumer_byte_rate": 1e6}
    assert world.developer_a.delete(f"/api/v1/quotas/{quota['id']}/").status_code == 204


def test_teams_cannot_set_defaults_or_other_teams_quotas(kafka_world: KafkaWorld) -> None:
    world = kafka_world

    def set_quota(client, entity: dict) -> int:
        body = {"cluster": world.cluster.id, "entity": entity, "values": {"producer_byte_rate": 1e6}}
        return client.post("/api/v1/quotas/", body, format="json").status_code

    assert set_quota(world.developer_a, {"user": None}) == 403
    assert set_quota(world.developer_a, {"client_id": "anything"}) == 403
    assert set_quota(world.developer_a, {"user": world.account_b.name}) == 403
    assert set_quota(world.viewer_a, {"user": world.account_a.name}) == 403
    assert set_quota(world.org_admin, {"user": None, "client_id": None}) == 201
    bad = world.org_admin.post(
        "/api/v1/quotas/",
        {
            "cluster": world.cluster.id,
            "entity": {"user": world.account_a.name},
            "values": {"bytes_per_year": 1},
        },
        format="json",
    )
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "unknown_quota_key"
    default = world.org_admin.get("/api/v1/quotas/", {"cluster": world.cluster.id}).json()["results"]
    (row,) = [q for q in default if q["entity_key"] == "user=<default>,client-id=<default>"]
    assert world.org_admin.delete(f"/api/v1/quotas/{row['id']}/").status_code == 204
