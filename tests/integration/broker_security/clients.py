"""Helpers for security tests: clients that collect errors, users and ACLs set up as admin."""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from tests.fixtures.broker import SecureBrokerProcess


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


class ErrorLog:
    """An `error_cb` that remembers every error librdkafka reports."""

    def __init__(self) -> None:
        self.errors: list[KafkaError] = []

    def __call__(self, error: KafkaError) -> None:
        self.errors.append(error)

    def authentication_failed(self) -> bool:
        return any(e.code() == KafkaError._AUTHENTICATION for e in self.errors)


def admin(broker: SecureBrokerProcess, **config: Any) -> AdminClient:
    return AdminClient({**broker.client_config(), **config})


def add_scram_user(
    broker: SecureBrokerProcess, user: str, password: str, mechanism: str = "SCRAM-SHA-256"
) -> None:
    kind = ScramMechanism.SCRAM_SHA_256 if mechanism == "SCRAM-SHA-256" else ScramMechanism.SCRAM_SHA_512
    upsertion = UserScramCredentialUpsertion(
        user, ScramCredentialInfo(kind, 4096), password.encode(), os.urandom(16)
    )
    client = admin(broker)  # keep the handle alive until the futures resolve
    for future in client.alter_user_scram_credentials([upsertion]).values():
        future.result(timeout=10)


def delete_scram_user(broker: SecureBrokerProcess, user: str, mechanism: str = "SCRAM-SHA-256") -> None:
    kind = ScramMechanism.SCRAM_SHA_256 if mechanism == "SCRAM-SHA-256" else ScramMechanism.SCRAM_SHA_512
    client = admin(broker)
    for future in client.alter_user_scram_credentials([UserScramCredentialDeletion(user, kind)]).values():
        future.result(timeout=10)


def grant(
    broker: SecureBrokerProcess,
    user: str,
    resource_type: ResourceType,
    name: str,
    operation: AclOperation,
    *,
    pattern: ResourcePatternType = ResourcePatternType.LITERAL,
    permission: AclPermissionType = AclPermissionType.ALLOW,
) -> None:
    binding = AclBinding(resource_type, name, pattern, f"User:{user}", "*", operation, permission)
    client = admin(broker)
    for future in client.create_acls([binding]).values():
        future.result(timeout=10)


def create_topic_as_admin(broker: SecureBrokerProcess, name: str, partitions: int = 1) -> None:
    client = admin(broker)
    for future in client.create_topics([NewTopic(name, partitions, 1)]).values():
        future.result(timeout=10)


def produce_one(
    config: dict[str, Any], topic: str, value: bytes = b"v", timeout: float = 10.0
) -> KafkaError | None:
    """Produce one message; returns the delivery error (None on success)."""
    outcome: list[KafkaError | None] = []
    producer = Producer({**config, "message.timeout.ms": int(timeout * 1000), "linger.ms": 0})
    producer.produce(topic, value, on_delivery=lambda err, _msg: outcome.append(err))
    producer.flush(timeout + 2)
    assert outcome, "no delivery report"
    return outcome[0]


def consume_until(
    config: dict[str, Any], topic: str, group: str, count: int, timeout: float = 15.0
) -> tuple[list[bytes], list[KafkaError]]:
    """Consume from the start; returns (values, errors seen on the way)."""
    consumer = Consumer(
        {
            **config,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    values: list[bytes] = []
    errors: list[KafkaError] = []
    deadline = time.monotonic() + timeout
    try:
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error():
                errors.append(message.error())
                if errors[-1].code() in (
                    KafkaError.TOPIC_AUTHORIZATION_FAILED,
                    KafkaError.GROUP_AUTHORIZATION_FAILED,
                ):
                    break
                continue
            values.append(message.value())
    except KafkaException as exc:
        errors.append(exc.args[0])
    finally:
        consumer.close()
    return values, errors
