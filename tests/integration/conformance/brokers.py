"""Our broker set up as the `apache_kafka` fixture sets up Apache Kafka, so that their answers can be compared."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.broker import ADMIN_PASSWORD, ADMIN_USER, BrokerProcess, free_port


class ConformanceBroker(BrokerProcess):
    """PLAINTEXT (clients are the super user ANONYMOUS) and SASL_PLAINTEXT with SCRAM (admin is a super user),
    ACLs on: the listeners, principals and authorizer of tests/fixtures/apache_kafka.py."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir, {})
        self.sasl_port = free_port()
        self.properties.update(
            {
                "listeners": f"PLAINTEXT://127.0.0.1:{self.port},SASL_PLAINTEXT://127.0.0.1:{self.sasl_port}",
                "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
                "authorizer.class.name": "acl",
                "super.users": f"User:{ADMIN_USER};User:ANONYMOUS",
                "sasl.bootstrap.users": (
                    f"{ADMIN_USER}:SCRAM-SHA-512:{ADMIN_PASSWORD};{ADMIN_USER}:SCRAM-SHA-256:{ADMIN_PASSWORD}"
                ),
            }
        )
