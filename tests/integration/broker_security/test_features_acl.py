"""UpdateFeatures needs ALTER on the CLUSTER resource, as in Kafka; ApiVersions (and so the finalized levels)
is answered to anyone."""

from __future__ import annotations

import datetime

import pytest
from confluent_kafka.admin import AclOperation, ResourceType
from kio.schema.api_versions.v4.request import ApiVersionsRequest
from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest
from kio.schema.update_features.v2.request import FeatureUpdateKey, UpdateFeaturesRequest
from kio.static.primitive import i8, i16, i32Timedelta

from tests.fixtures.broker import SecureBrokerProcess
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker_security.clients import add_scram_user, grant, unique

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

CLUSTER_AUTHORIZATION_FAILED = 31
VALIDATE_GROUP_VERSION_0 = UpdateFeaturesRequest(
    timeout=i32Timedelta.parse(datetime.timedelta(seconds=10)),
    feature_updates=(
        FeatureUpdateKey(feature="group.version", max_version_level=i16(0), upgrade_type=i8(2)),
    ),
    validate_only=True,
)


def _client_as(broker: SecureBrokerProcess, user: str, password: str) -> WireClient:
    client = WireClient(broker.bootstrap)
    assert client.request(SaslHandshakeRequest(mechanism="PLAIN")).error_code == 0
    token = b"\0" + user.encode() + b"\0" + password.encode()
    assert client.request(SaslAuthenticateRequest(auth_bytes=token)).error_code == 0
    return client


def test_update_features_needs_alter_on_the_cluster(secure_broker: SecureBrokerProcess) -> None:
    user, password = unique("features"), "pw-features"
    add_scram_user(secure_broker, user, password, "SCRAM-SHA-512")
    with _client_as(secure_broker, user, password) as client:
        versions = client.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"))
        assert {k.name for k in versions.finalized_features} >= {"metadata.version", "group.version"}
        denied = client.request(VALIDATE_GROUP_VERSION_0)
        assert (denied.error_code, denied.error_message) == (
            CLUSTER_AUTHORIZATION_FAILED,
            "Cluster authorization failed.",
        )
    grant(secure_broker, user, ResourceType.BROKER, "kafka-cluster", AclOperation.ALTER)
    with _client_as(secure_broker, user, password) as client:
        assert client.request(VALIDATE_GROUP_VERSION_0).error_code == 0
