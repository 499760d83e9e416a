"""The ACL matrix with real clients: each principal gets exactly what its ACLs grant."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicCollection
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from tests.fixtures.broker import SecureBrokerProcess
from tests.integration.broker_security.clients import (
    add_scram_user,
    admin,
    consume_until,
    create_topic_as_admin,
    grant,
    produce_one,
    unique,
)

TOPIC = ResourceType.TOPIC
GROUP = ResourceType.GROUP
PREFIXED = ResourcePatternType.PREFIXED


class Principal:
    """A SCRAM user of the secure broker and its client configuration."""

    def __init__(self, broker: SecureBrokerProcess) -> None:
        self.broker = broker
        self.name = unique("app")
        password = "pw-" + unique("s")
        add_scram_user(broker, self.name, password, "SCRAM-SHA-256")
        self.config = broker.client_config(self.name, password, "SCRAM-SHA-256")

    def grant(self, resource_type: ResourceType, name: str, operation: AclOperation, **kwargs) -> None:
        grant(self.broker, self.name, resource_type, name, operation, **kwargs)

    def admin(self) -> AdminClient:
        return AdminClient(self.config)


def error_code(future) -> int:
    with pytest.raises(KafkaException) as raised:
        future.result(timeout=10)
    return raised.value.args[0].code()


@pytest.fixture
def principal(secure_broker: SecureBrokerProcess) -> Principal:
    return Principal(secure_broker)


def test_read_on_a_prefix_consumes_but_cannot_produce_or_create_topics(
    secure_broker: SecureBrokerProcess, principal: Principal
) -> None:
    prefix = unique("ro") + "."
    topic, group = prefix + "orders", prefix + "group"
    create_topic_as_admin(secure_broker, topic)
    assert produce_one(secure_broker.client_config(), topic, b"m1") is None
    principal.grant(TOPIC, prefix, AclOperation.READ, pattern=PREFIXED)
    principal.grant(GROUP, prefix, AclOperation.READ, pattern=PREFIXED)

    values, errors = consume_until(principal.config, topic, group, 1)
    assert values == [b"m1"], errors

    delivery = produce_one(principal.config, topic, timeout=3)
    assert delivery is not None
    assert delivery.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    client = principal.admin()
    created = client.create_topics([NewTopic(prefix + "new", 1, 1)])
    assert error_code(created[prefix + "new"]) == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_write_without_read_produces_but_cannot_consume(
    secure_broker: SecureBrokerProcess, principal: Principal
) -> None:
    topic = unique("wo")
    create_topic_as_admin(secure_broker, topic)
    principal.grant(TOPIC, topic, AclOperation.WRITE)
    principal.grant(GROUP, "*", AclOperation.READ)

    assert produce_one(principal.config, topic, b"written") is None
    values, errors = consume_until(principal.config, topic, unique("g"), 1, timeout=8)
    assert values == []
    assert KafkaError.TOPIC_AUTHORIZATION_FAILED in [e.code() for e in errors]


def test_a_deny_overrides_a_matching_allow(secure_broker: SecureBrokerProcess, principal: Principal) -> None:
    prefix = unique("deny") + "-"
    allowed_topic, denied_topic = prefix + "open", prefix + "secret"
    for topic in (allowed_topic, denied_topic):
        create_topic_as_admin(secure_broker, topic)
    principal.grant(TOPIC, prefix, AclOperation.ALL, pattern=PREFIXED)
    principal.grant(TOPIC, denied_topic, AclOperation.WRITE, permission=AclPermissionType.DENY)

    assert produce_one(principal.config, allowed_topic) is None
    delivery = produce_one(principal.config, denied_topic, timeout=3)
    assert delivery is not None
    assert delivery.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_a_principal_sees_only_the_topics_it_may_describe(
    secure_broker: SecureBrokerProcess, principal: Principal
) -> None:
    visible, hidden = unique("seen"), unique("unseen")
    for topic in (visible, hidden):
        create_topic_as_admin(secure_broker, topic)
    principal.grant(TOPIC, visible, AclOperation.DESCRIBE)

    client = principal.admin()
    topics = client.list_topics(timeout=10).topics
    assert visible in topics
    assert hidden not in topics
    # Asking for the hidden topic by name says "not authorized", not "does not exist".
    described = client.describe_topics(TopicCollection([hidden]))
    assert error_code(described[hidden]) == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_consuming_in_a_group_needs_group_read(
    secure_broker: SecureBrokerProcess, principal: Principal
) -> None:
    topic = unique("grp")
    create_topic_as_admin(secure_broker, topic)
    produce_one(secure_broker.client_config(), topic)
    principal.grant(TOPIC, topic, AclOperation.READ)

    values, errors = consume_until(principal.config, topic, unique("nogroup"), 1, timeout=8)
    assert values == []
    assert KafkaError.GROUP_AUTHORIZATION_FAILED in [e.code() for e in errors]


def test_admin_operations_need_the_matching_cluster_and_topic_operations(
    secure_broker: SecureBrokerProcess, principal: Principal
) -> None:
    topic = unique("adm")
    create_topic_as_admin(secure_broker, topic)
    client = principal.admin()

    binding = AclBinding(
        TOPIC, topic, ResourcePatternType.LITERAL, "User:x", "*", AclOperation.READ, AclPermissionType.ALLOW
    )
    assert error_code(client.create_acls([binding])[binding]) == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    assert error_code(client.delete_topics([topic])[topic]) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    assert error_code(client.describe_configs([resource])[resource]) == KafkaError.TOPIC_AUTHORIZATION_FAILED

    principal.grant(TOPIC, topic, AclOperation.ALTER_CONFIGS)  # implies DESCRIBE_CONFIGS
    assert (
        client.describe_configs([resource])[resource].result(timeout=10)["cleanup.policy"].value == "delete"
    )
    principal.grant(TOPIC, topic, AclOperation.DELETE)
    client.delete_topics([topic])[topic].result(timeout=10)

    created = unique("cc")
    assert (
        error_code(client.create_topics([NewTopic(created, 1, 1)])[created])
        == KafkaError.TOPIC_AUTHORIZATION_FAILED
    )
    principal.grant(ResourceType.BROKER, "kafka-cluster", AclOperation.CREATE)
    client.create_topics([NewTopic(created, 1, 1)])[created].result(timeout=10)


def test_authorized_operations_are_reported_for_topics_groups_and_the_cluster(
    secure_broker: SecureBrokerProcess, principal: Principal
) -> None:
    topic, group = unique("ops"), unique("opsgroup")
    create_topic_as_admin(secure_broker, topic)
    principal.grant(TOPIC, topic, AclOperation.READ)
    principal.grant(GROUP, group, AclOperation.DESCRIBE)
    client = principal.admin()

    description = client.describe_topics(TopicCollection([topic]), include_authorized_operations=True)[
        topic
    ].result(timeout=10)
    assert set(description.authorized_operations) == {AclOperation.READ, AclOperation.DESCRIBE}
    groups = client.describe_consumer_groups([group], include_authorized_operations=True)
    assert set(groups[group].result(timeout=10).authorized_operations) == {AclOperation.DESCRIBE}
    # librdkafka asks through Metadata: no cluster ACLs, no cluster operations.
    cluster = client.describe_cluster(include_authorized_operations=True).result(timeout=10)
    assert not cluster.authorized_operations
    admin_client = admin(secure_broker)
    admin_cluster = admin_client.describe_cluster(include_authorized_operations=True).result(timeout=10)
    assert AclOperation.ALTER in admin_cluster.authorized_operations


def test_acls_are_listed_matched_and_deleted_with_kafka_filters(secure_broker: SecureBrokerProcess) -> None:
    principal = f"User:{unique('f')}"
    prefix = unique("flt")
    bindings = [
        AclBinding(TOPIC, prefix, PREFIXED, principal, "*", AclOperation.READ, AclPermissionType.ALLOW),
        AclBinding(
            TOPIC,
            prefix + "-a",
            ResourcePatternType.LITERAL,
            principal,
            "10.0.0.1",
            AclOperation.WRITE,
            AclPermissionType.DENY,
        ),
        AclBinding(
            GROUP,
            prefix,
            ResourcePatternType.LITERAL,
            principal,
            "*",
            AclOperation.READ,
            AclPermissionType.ALLOW,
        ),
    ]
    client = admin(secure_broker)
    for future in client.create_acls(bindings).values():
        future.result(timeout=10)

    everything = AclBindingFilter(
        ResourceType.ANY,
        None,
        ResourcePatternType.ANY,
        principal,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    assert sorted(map(str, client.describe_acls(everything).result(timeout=10))) == sorted(map(str, bindings))
    # MATCH finds every binding that applies to one resource name: the prefix and the literal.
    matching = AclBindingFilter(
        TOPIC,
        prefix + "-a",
        ResourcePatternType.MATCH,
        principal,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    assert len(client.describe_acls(matching).result(timeout=10)) == 2

    deleted = client.delete_acls(
        [
            AclBindingFilter(
                TOPIC, None, ResourcePatternType.ANY, principal, None, AclOperation.ANY, AclPermissionType.ANY
            )
        ]
    )
    assert len(next(iter(deleted.values())).result(timeout=10)) == 2
    assert [b.restype for b in client.describe_acls(everything).result(timeout=10)] == [GROUP]


def test_acls_take_effect_at_once_and_survive_a_restart(secure_broker_factory) -> None:
    broker = secure_broker_factory()
    principal = Principal(broker)
    topic = unique("persist")
    create_topic_as_admin(broker, topic)
    assert topic not in principal.admin().list_topics(timeout=10).topics
    principal.grant(TOPIC, topic, AclOperation.DESCRIBE)
    assert topic in principal.admin().list_topics(timeout=10).topics
    broker.restart()
    assert topic in principal.admin().list_topics(timeout=10).topics


def test_an_idempotent_producer_needs_write_on_some_topic(
    secure_broker: SecureBrokerProcess, principal: Principal
) -> None:
    topic = unique("idem")
    create_topic_as_admin(secure_broker, topic)
    config = {**principal.config, "enable.idempotence": True}
    delivery = produce_one(config, topic, timeout=3)
    assert delivery is not None  # no ACL at all: InitProducerId is refused
    principal.grant(TOPIC, topic, AclOperation.WRITE)
    assert produce_one(config, topic) is None
