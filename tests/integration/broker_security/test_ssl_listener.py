"""The SSL listener: TLS with the test CA; a client certificate names the principal for ACLs."""

from __future__ import annotations

from confluent_kafka.admin import AclOperation, AdminClient, ResourceType

from tests.fixtures.broker import SecureBrokerProcess
from tests.integration.broker_security.clients import create_topic_as_admin, grant, produce_one, unique


def tls_config(broker: SecureBrokerProcess, common_name: str | None) -> dict[str, str]:
    config = {
        "bootstrap.servers": f"127.0.0.1:{broker.tls_port}",
        "security.protocol": "SSL",
        "ssl.ca.location": str(broker.certificates.ca_path),
    }
    if common_name is not None:
        cert, key = broker.certificates.client_certificate(common_name)
        config["ssl.certificate.location"] = str(cert)
        config["ssl.key.location"] = str(key)
    return config


def test_a_client_certificate_is_the_principal_that_acls_name(secure_broker: SecureBrokerProcess) -> None:
    name = unique("svc")
    topic = unique("tls")
    create_topic_as_admin(secure_broker, topic)
    config = tls_config(secure_broker, name)
    assert produce_one(config, topic, timeout=3) is not None  # no ACL for the certificate yet

    grant(secure_broker, f"CN={name}", ResourceType.TOPIC, topic, AclOperation.WRITE)
    assert produce_one(config, topic) is None
    assert topic in AdminClient(config).list_topics(timeout=10).topics


def test_a_client_without_a_certificate_is_anonymous(secure_broker: SecureBrokerProcess) -> None:
    topic = unique("anon")
    create_topic_as_admin(secure_broker, topic)
    client = AdminClient(tls_config(secure_broker, None))
    assert topic not in client.list_topics(timeout=10).topics
    grant(secure_broker, "ANONYMOUS", ResourceType.TOPIC, topic, AclOperation.DESCRIBE)
    assert topic in client.list_topics(timeout=10).topics
