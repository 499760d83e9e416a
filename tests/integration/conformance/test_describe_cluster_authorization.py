"""DescribeCluster from a SCRAM user without any ACL on the cluster, asked of Apache Kafka and of our broker at
the wire level: Kafka answers it (brokers, controller) and only leaves the authorized operations empty, so a
client such as MirrorMaker 2's admin needs no DESCRIBE-on-cluster grant to learn the cluster."""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

import pytest
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from kio.schema.describe_cluster.v0.request import DescribeClusterRequest as DescribeClusterV0
from kio.schema.describe_cluster.v1.request import DescribeClusterRequest as DescribeClusterV1
from kio.schema.describe_cluster.v2.request import DescribeClusterRequest as DescribeClusterV2

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


def _answers(plaintext_bootstrap: str, sasl_bootstrap: str) -> dict[str, dict[str, Any]]:
    user, password = f"no-cluster-acl-{uuid.uuid4().hex[:8]}", "pw-no-cluster-acl"
    _add_user(plaintext_bootstrap, user, password)
    requests: dict[str, Any] = {}
    for include in (False, True):
        requests[f"v0 include={include}"] = DescribeClusterV0(include_cluster_authorized_operations=include)
        requests[f"v1 include={include}"] = DescribeClusterV1(include_cluster_authorized_operations=include)
        requests[f"v2 include={include}"] = DescribeClusterV2(
            include_cluster_authorized_operations=include, include_fenced_brokers=False
        )
    with _login(sasl_bootstrap, user, password) as client:
        answers = {}
        for name, request in requests.items():
            answer = client.request(request)
            answers[name] = {
                "error_code": int(answer.error_code),
                "error_message": answer.error_message,
                "broker_count": len(answer.brokers),
                "controller_known": answer.controller_id >= 0,
                "cluster_authorized_operations": int(answer.cluster_authorized_operations),
            }
    return answers


def test_describe_cluster_without_describe_on_the_cluster_is_answered_as_by_kafka(
    apache_kafka: ApacheKafkaNode, conformance_broker: ConformanceBroker
) -> None:
    theirs = _answers(apache_kafka.bootstrap, apache_kafka.sasl_bootstrap)
    ours = _answers(conformance_broker.bootstrap, f"127.0.0.1:{conformance_broker.sasl_port}")
    assert ours == theirs
    # What Kafka said, spelled out: no error, the single broker, and "no operations" only when they were asked for.
    assert theirs["v2 include=False"] == {
        "error_code": 0,
        "error_message": None,
        "broker_count": 1,
        "controller_known": True,
        "cluster_authorized_operations": OPERATIONS_OMITTED,
    }
    assert theirs["v2 include=True"]["cluster_authorized_operations"] == 0
