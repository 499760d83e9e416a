"""Acceptance 1: a team gives its application access through the REST API, and a real client with the
service account's SCRAM credential is let in inside the team's prefixes and kept out elsewhere."""

import time

import pytest
from confluent_kafka import KafkaError, KafkaException, ShareConsumer
from confluent_kafka.admin import NewTopic

from controlplane.clusters.connections import connection_for
from controlplane.kafka import share_groups as kafka_share
from tests.integration.topics.clients import code_of, first_record_or_error, produce_one
from tests.integration.topics.world import KafkaWorld, create_topic

pytestmark = pytest.mark.integration


def _issue_credential(world: KafkaWorld, *, team_b: bool = False) -> str:
    client, account = (world.admin_b, world.account_b) if team_b else (world.developer_a, world.account_a)
    response = client.post(
        "/api/v1/scram-credentials/",
        {"service_account": account.id, "cluster": world.cluster.id, "mechanism": "SCRAM-SHA-512"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["username"] == account.name
    return body["password"]


def _grant(world: KafkaWorld, template: str, **prefixes: str) -> dict:
    body = {
        "cluster": world.cluster.id,
        "service_account": world.account_a.id,
        "template": template,
        **prefixes,
    }
    response = world.developer_a.post("/api/v1/access-grants/", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def test_a_service_account_reaches_its_prefix_only_and_loses_access_when_the_template_goes(
    kafka_world: KafkaWorld,
) -> None:
    world = kafka_world
    inside = world.topic_prefix_a + "orders"
    outside = world.topic_prefix_b + "secrets"
    create_topic(world, world.developer_a, inside, partitions=2)
    admin = world.admin_client()  # the handle must outlive its futures
    for future in admin.create_topics([NewTopic(outside, 1, 1)]).values():
        future.result(10)
    password = _issue_credential(world)
    producer_grant = _grant(world, "producer", topic_prefix=world.topic_prefix_a)
    consumer_grant = _grant(
        world, "consumer", topic_prefix=world.topic_prefix_a, group_prefix=world.group_prefix_a
    )
    assert {(b["resource_type"], b["operation"], b["pattern_type"]) for b in producer_grant["bindings"]} == {
        ("TOPIC", "WRITE", "PREFIXED"),
        ("TOPIC", "DESCRIBE", "PREFIXED"),
    }
    assert ("GROUP", "READ") in {(b["resource_type"], b["operation"]) for b in consumer_grant["bindings"]}

    user = world.account_a.name
    producer = world.producer(user, password, **{"message.timeout.ms": 5000})
    assert produce_one(producer, inside, b"inside") is None
    refused = produce_one(producer, outside, b"outside")
    assert code_of(refused) == KafkaError.TOPIC_AUTHORIZATION_FAILED

    value, error = first_record_or_error(
        world.consumer(world.group_prefix_a + "reader", user, password), [inside]
    )
    assert (value, error) == (b"inside", None)
    _value, error = first_record_or_error(
        world.consumer(world.group_prefix_a + "snoop", user, password), [outside]
    )
    assert code_of(error) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    _value, error = first_record_or_error(world.consumer("elsewhere-group", user, password), [inside])
    assert code_of(error) == KafkaError.GROUP_AUTHORIZATION_FAILED

    assert world.developer_a.delete(f"/api/v1/access-grants/{producer_grant['id']}/").status_code == 204
    fresh = world.producer(user, password, **{"message.timeout.ms": 5000})
    revoked = produce_one(fresh, inside, b"after revoke")
    assert code_of(revoked) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    remaining = world.developer_a.get("/api/v1/acls/", {"cluster": world.cluster.id}).json()["results"]
    assert {b["grant"] for b in remaining} == {consumer_grant["id"]}


def test_a_transactional_producer_grant_lets_the_application_commit_under_its_transactional_id_prefix(
    kafka_world: KafkaWorld,
) -> None:
    world = kafka_world
    topic = world.topic_prefix_a + "ledger"
    create_topic(world, world.developer_a, topic)
    password = _issue_credential(world)
    missing = world.developer_a.post(
        "/api/v1/access-grants/",
        {
            "cluster": world.cluster.id,
            "service_account": world.account_a.id,
            "template": "transactional_producer",
            "topic_prefix": world.topic_prefix_a,
        },
        format="json",
    )
    assert missing.status_code == 400
    assert missing.json()["error"]["code"] == "invalid_prefix"
    granted = _grant(
        world,
        "transactional_producer",
        topic_prefix=world.topic_prefix_a,
        transactional_id_prefix=world.transactional_id_prefix_a,
    )
    assert {(b["resource_type"], b["resource_name"], b["operation"]) for b in granted["bindings"]} == {
        ("TOPIC", world.topic_prefix_a, "WRITE"),
        ("TOPIC", world.topic_prefix_a, "DESCRIBE"),
        ("TRANSACTIONAL_ID", world.transactional_id_prefix_a, "WRITE"),
        ("TRANSACTIONAL_ID", world.transactional_id_prefix_a, "DESCRIBE"),
    }
    assert granted["transactional_id_prefix"] == world.transactional_id_prefix_a

    user = world.account_a.name
    producer = world.producer(
        user, password, **{"transactional.id": world.transactional_id_prefix_a + "ledger-1"}
    )
    producer.init_transactions(20)
    producer.begin_transaction()
    producer.produce(topic, b"committed")
    producer.commit_transaction(20)
    reader = world.consumer(world.group_prefix_a + "audit", **{"isolation.level": "read_committed"})
    assert first_record_or_error(reader, [topic]) == (b"committed", None)

    foreign = world.producer(
        user, password, **{"transactional.id": world.transactional_id_prefix_b + "ledger-1"}
    )
    with pytest.raises(KafkaException) as refused:
        foreign.init_transactions(20)
    assert refused.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_a_team_cannot_grant_outside_its_prefixes_or_to_another_teams_account(
    kafka_world: KafkaWorld,
) -> None:
    world = kafka_world
    outside = world.developer_a.post(
        "/api/v1/access-grants/",
        {
            "cluster": world.cluster.id,
            "service_account": world.account_a.id,
            "template": "producer",
            "topic_prefix": world.topic_prefix_b,
        },
        format="json",
    )
    assert outside.status_code == 403
    assert outside.json()["error"]["code"] == "outside_team_scope"

    foreign_principal = world.developer_a.post(
        "/api/v1/acls/",
        {
            "cluster": world.cluster.id,
            "team": world.team_a.id,
            "resource_type": "TOPIC",
            "resource_name": world.topic_prefix_a,
            "pattern_type": "PREFIXED",
            "principal": f"User:{world.account_b.name}",
            "operation": "READ",
        },
        format="json",
    )
    assert foreign_principal.status_code == 403
    cluster_wide = world.developer_a.post(
        "/api/v1/acls/",
        {
            "cluster": world.cluster.id,
            "team": world.team_a.id,
            "resource_type": "BROKER",
            "resource_name": "kafka-cluster",
            "pattern_type": "LITERAL",
            "principal": f"User:{world.account_a.name}",
            "operation": "ALTER",
        },
        format="json",
    )
    assert cluster_wide.status_code == 403

    admin_grant = world.org_admin.post(
        "/api/v1/acls/",
        {
            "cluster": world.cluster.id,
            "team": None,
            "resource_type": "TOPIC",
            "resource_name": "*",
            "pattern_type": "LITERAL",
            "principal": f"User:{world.account_b.name}",
            "operation": "DESCRIBE",
        },
        format="json",
    )
    assert admin_grant.status_code == 201, admin_grant.json()
    assert world.org_admin.delete(f"/api/v1/acls/{admin_grant.json()['id']}/").status_code == 204


def _first_shared_record_or_error(
    world: KafkaWorld, user: str, password: str, group: str, topic: str
) -> tuple[bytes | None, KafkaError | None]:
    """A ShareConsumer of the group: the first record it is delivered, or the first error it reports."""
    consumer = ShareConsumer({**world.client_config(user, password), "group.id": group})
    consumer.subscribe([topic])
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            try:
                messages = consumer.poll(0.5)
            except KafkaException as refused:
                return None, refused.args[0]
            for message in messages:
                if message.error() is not None:
                    return None, message.error()
                return message.value(), None
        raise AssertionError("the share consumer got neither a record nor an error within 30 s")
    finally:
        consumer.close()


def test_a_share_consumer_grant_lets_a_share_consumer_read_its_queue_and_nobody_else(
    kafka_world: KafkaWorld,
) -> None:
    world = kafka_world
    topic, group = world.topic_prefix_a + "jobs", world.group_prefix_a + "workers"
    create_topic(world, world.developer_a, topic)
    granted = _grant(
        world, "share_consumer", topic_prefix=world.topic_prefix_a, group_prefix=world.group_prefix_a
    )
    assert {(b["resource_type"], b["resource_name"], b["operation"]) for b in granted["bindings"]} == {
        ("TOPIC", world.topic_prefix_a, "READ"),
        ("TOPIC", world.topic_prefix_a, "DESCRIBE"),
        ("GROUP", world.group_prefix_a, "READ"),
    }
    # A share group starts at the log end unless told otherwise; the record is produced before anyone joins.
    kafka_share.alter_group_configs(
        connection_for(world.cluster), group_id=group, set_configs={"share.auto.offset.reset": "earliest"}
    )
    assert produce_one(world.producer(), topic, b"job-1") is None

    user, password = world.account_a.name, _issue_credential(world)
    assert _first_shared_record_or_error(world, user, password, group, topic) == (b"job-1", None)

    stranger = _issue_credential(world, team_b=True)
    _value, error = _first_shared_record_or_error(world, world.account_b.name, stranger, group, topic)
    assert code_of(error) == KafkaError.GROUP_AUTHORIZATION_FAILED
