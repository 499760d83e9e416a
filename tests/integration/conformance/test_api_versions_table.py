"""The ApiVersions table and the features, key by key and range by range, against the session's Apache Kafka.

Everything is compared; the differences below are named with their reason. Two kinds: argued ones (README,
"Conformance with Apache Kafka"), and work owned elsewhere that the integrator removes from the lists once
merged (the test then tightens by itself: a listed key that matches fails `test_every_exception_still_shows`).
"""

from __future__ import annotations

from typing import Any

import pytest
from kio.schema.api_versions.v4.request import ApiVersionsRequest

from tests.integration.broker.kafka_wire import WireClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

# Not yet served (issue #32 is open on it): the share coordinator's state RPCs (KIP-932's Initialize, Read,
# Write, Delete ShareGroupState and ReadShareGroupStateSummary). Our share-partition leaders write
# `__share_group_state` themselves; Kafka's go through a share coordinator, which a cluster needs for the state to
# follow a leader change.
SHARE_STATE_KEYS: frozenset[int] = frozenset()
# Argued: this broker has a client-telemetry receiver built in (README, "Client telemetry"); Kafka advertises
# GetTelemetrySubscriptions and PushTelemetry only with a ClientTelemetryReceiver plugin, which the session's
# Apache Kafka has not.
TELEMETRY_KEYS = frozenset({71, 72})
# Argued: `legacy.api.versions.enable` (default true, README) still serves what Kafka 4.0 dropped (KIP-896):
# Fetch v0-3, ListOffsets v0, OffsetCommit v0-1, OffsetFetch v0. Only the minimum differs.
LEGACY_MINIMUMS = {1: 0, 2: 0, 8: 0, 9: 0}
# Argued: eligible leader replicas (KIP-966) are not implemented here; kraft.version is 1 on the session's Apache
# Kafka because it is formatted as a dynamic quorum (--standalone), and 0 on a single node of ours (static).
OTHER_FEATURES = frozenset({"eligible.leader.replicas.version"})
FINALIZED_BY_SETUP = frozenset({"kraft.version"})


def _api_versions(bootstrap: str) -> Any:
    with WireClient(bootstrap) as client:
        return client.request(
            ApiVersionsRequest(client_software_name="conformance", client_software_version="1")
        )


@pytest.fixture(scope="module")
def answers(apache_kafka, broker) -> tuple[Any, Any]:
    return _api_versions(apache_kafka.bootstrap), _api_versions(broker.bootstrap)


def _table(answer: Any) -> dict[int, tuple[int, int]]:
    return {int(key.api_key): (int(key.min_version), int(key.max_version)) for key in answer.api_keys}


def _excepted_keys() -> frozenset[int]:
    return SHARE_STATE_KEYS | TELEMETRY_KEYS


def test_every_key_and_version_range_is_kafkas(answers: tuple[Any, Any]) -> None:
    kafka, ours = (_table(answer) for answer in answers)
    differences = {}
    for key in sorted(set(kafka) | set(ours)):
        if key in _excepted_keys():
            continue
        expected = kafka.get(key)
        if expected is not None and key in LEGACY_MINIMUMS:
            expected = (LEGACY_MINIMUMS[key], expected[1])
        if ours.get(key) != expected:
            differences[key] = {"kafka": kafka.get(key), "ours": ours.get(key)}
    assert differences == {}


def test_the_supported_and_finalized_features_are_kafkas(answers: tuple[Any, Any]) -> None:
    kafka, ours = answers
    excepted = OTHER_FEATURES

    def supported(answer: Any) -> dict[str, tuple[int, int]]:
        return {
            f.name: (int(f.min_version), int(f.max_version))
            for f in answer.supported_features
            if f.name not in excepted
        }

    def finalized(answer: Any) -> dict[str, int]:
        return {
            f.name: int(f.max_version_level)
            for f in answer.finalized_features
            if f.name not in excepted | FINALIZED_BY_SETUP
        }

    assert supported(ours) == supported(kafka)
    assert finalized(ours) == finalized(kafka)


def test_every_exception_still_shows(answers: tuple[Any, Any]) -> None:
    """A listed key or feature that now matches Kafka was done: take it off its list."""
    kafka, ours = answers
    kafka_table, our_table = _table(kafka), _table(ours)
    matching = {key for key in _excepted_keys() if kafka_table.get(key) == our_table.get(key)}
    matching |= {key for key, low in LEGACY_MINIMUMS.items() if our_table[key][0] != low}
    features = OTHER_FEATURES

    def supported(answer: Any) -> dict[str, tuple[int, int]]:
        return {f.name: (int(f.min_version), int(f.max_version)) for f in answer.supported_features}

    matching |= {name for name in features if supported(kafka).get(name) == supported(ours).get(name)}
    assert matching == set()
