"""DescribeCluster from a SCRAM user without any ACL on the cluster, asked of Apache Kafka and of our broker at
the wire level: Kafka answers it (brokers, controller) and only leaves the authorized operations empty, so a
client such as MirrorMaker 2's admin needs no DESCRIBE-on-cluster grant to learn the cluster. The same user is
then granted IDEMPOTENT_WRITE on the cluster, which does not imply DESCRIBE: its cluster operations stay 0, in
DescribeCluster as in Metadata."""

from __future__ import annotations

import datetime
import os
import time
import uuid
from typing import Any

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from kio.schema.describe_cluster.v0.request import DescribeClusterRequest as DescribeClusterV0
from kio.schema.describe_cluster.v1.request import DescribeClusterRequest as DescribeClusterV1
from kio.schema.describe_cluster.v2.request import DescribeClusterRequest as DescribeClusterV2
from kio.schema.init_producer_id.v4.request import InitProducerIdRequest
from kio.schema.metadata.v10.request import MetadataRequest
from kio.static.primitive import i32Timedelta

from tests.fixtures.apache_kafka import ApacheKafkaNode
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker_security.test_delegation_tokens import scram_login
from tests.integration.conformance.brokers import ConformanceBroker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

OPERATIONS_OMITTED = -(2**31)
MECHANISM = "SCRAM-SHA-512"


def _add_user(plaintext_bootstrap: str, user: str, password: str) -> None:
    """As the PLAINTEXT listener's super user ANONYMOUS: a SCRAM user with no ACL at all."""
    admin = AdminClient({"bootstrap.servers": plaintext_bootstrap})
    upsertion = UserScramCredentialUpsertion(
        user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), password.encode(), os.urandom(16)
    )
    for future in admin.alter_user_scram_credentials([upsertion]).values():
        future.result(timeout=15)


def _login(sasl_bootstrap: str, user: str, password: str) -> WireClient:
    """The credentials reach the SASL listener through the metadata log: wait for them."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        client = scram_login(sasl_bootstrap, user, password, MECHANISM)
        if client is not None:
            return client
        time.sleep(0.2)
    raise AssertionError(f"{user} cannot log in on {sasl_bootstrap}")


def _grant_idempotent_write(plaintext_bootstrap: str, user: str) -> None:
    """IDEMPOTENT_WRITE on the cluster, which does not imply DESCRIBE."""
    admin = AdminClient({"bootstrap.servers": plaintext_bootstrap})
    binding = AclBinding(
        ResourceType.BROKER,
        "kafka-cluster",
        ResourcePatternType.LITERAL,
        f"User:{user}",
        "*",
        AclOperation.IDEMPOTENT_WRITE,
        AclPermissionType.ALLOW,
    )
    for future in admin.create_acls([binding]).values():
        future.result(timeout=15)


def _wait_for_idempotent_write(sasl_bootstrap: str, user: str, password: str) -> None:
    """The ACL reaches the SASL listener's authorizer through the metadata log: wait until an idempotent
    producer id (which IDEMPOTENT_WRITE on the cluster allows) is granted."""
    request = InitProducerIdRequest(
        transactional_id=None, transaction_timeout=i32Timedelta.parse(datetime.timedelta(seconds=60))
    )
    deadline = time.monotonic() + 30
    with _login(sasl_bootstrap, user, password) as client:
        while client.request(request).error_code != 0:
            assert time.monotonic() < deadline, "IDEMPOTENT_WRITE never came into force"
            time.sleep(0.2)


def _ask(sasl_bootstrap: str, user: str, password: str) -> dict[str, dict[str, Any]]:
    requests: dict[str, Any] = {}
    for include in (False, True):
        requests[f"v0 include={include}"] = DescribeClusterV0(include_cluster_authorized_operations=include)
        requests[f"v1 include={include}"] = DescribeClusterV1(include_cluster_authorized_operations=include)
        requests[f"v2 include={include}"] = DescribeClusterV2(
            include_cluster_authorized_operations=include, include_fenced_brokers=False
        )
    answers = {}
    with _login(sasl_bootstrap, user, password) as client:
        for name, request in requests.items():
            answer = client.request(request)
            answers[name] = {
                "error_code": int(answer.error_code),
                "error_message": answer.error_message,
                "broker_count": len(answer.brokers),
                "controller_known": answer.controller_id >= 0,
                "cluster_authorized_operations": int(answer.cluster_authorized_operations),
            }
        # Metadata v8-10 carries the cluster's operations too, under the same rule.
        metadata = client.request(
            MetadataRequest(
                topics=(),
                allow_auto_topic_creation=False,
                include_cluster_authorized_operations=True,
                include_topic_authorized_operations=False,
            )
        )
        answers["metadata v10"] = {
            "cluster_authorized_operations": int(metadata.cluster_authorized_operations)
        }
    return answers


def _answers(plaintext_bootstrap: str, sasl_bootstrap: str) -> dict[str, dict[str, dict[str, Any]]]:
    """The answers to a SCRAM user with no ACL at all, then with IDEMPOTENT_WRITE on the cluster."""
    user, password = f"no-cluster-acl-{uuid.uuid4().hex[:8]}", "pw-no-cluster-acl"
    _add_user(plaintext_bootstrap, user, password)
    without_acl = _ask(sasl_bootstrap, user, password)
    _grant_idempotent_write(plaintext_bootstrap, user)
    _wait_for_idempotent_write(sasl_bootstrap, user, password)
    with_idempotent_write = _ask(sasl_bootstrap, user, password)
    return {"no ACL": without_acl, "IDEMPOTENT_WRITE": with_idempotent_write}


def test_describe_cluster_without_describe_on_the_cluster_is_answered_as_by_kafka(
    apache_kafka: ApacheKafkaNode, conformance_broker: ConformanceBroker
) -> None:
    theirs = _answers(apache_kafka.bootstrap, apache_kafka.sasl_bootstrap)
    ours = _answers(conformance_broker.bootstrap, f"127.0.0.1:{conformance_broker.sasl_port}")
    assert ours == theirs
    # What Kafka said, spelled out: no error, the single broker, and "no operations" only when they were asked for.
    for answers in theirs.values():
        assert answers["v2 include=False"] == {
            "error_code": 0,
            "error_message": None,
            "broker_count": 1,
            "controller_known": True,
            "cluster_authorized_operations": OPERATIONS_OMITTED,
        }
        assert answers["v2 include=True"]["cluster_authorized_operations"] == 0
        assert answers["metadata v10"]["cluster_authorized_operations"] == 0
