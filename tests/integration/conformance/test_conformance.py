"""Our broker answers as Apache Kafka does: the corpus (corpus.py) sent to both, answers compared field by field.

The bounded CI run: the whole corpus once (every key and version both serve) and a few hypothesis sequences; the
long run with more sequences and the table is bench/conformance.py.
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fixtures.apache_kafka import ApacheKafkaNode
from tests.integration.conformance.brokers import ConformanceBroker
from tests.integration.conformance.comparison import (
    DIFFERENT,
    Endpoint,
    Outcome,
    api_versions,
    common_versions,
    run_corpus,
)
from tests.integration.conformance.corpus import Names, corpus
from tests.integration.conformance.known_differences import KNOWN_DIFFERENCES
from tests.integration.conformance.normalization import differences
from tests.integration.conformance.state import Operation, run_sequence, sequences

pytestmark = pytest.mark.integration

ONLY_APACHE_KAFKA: set[int] = set()
# Served by ours only: client telemetry, which Kafka advertises only with a metrics receiver plugin configured.
ONLY_OURS = {71, 72}


@pytest.fixture(scope="module")
def endpoints(
    apache_kafka: ApacheKafkaNode, conformance_broker: ConformanceBroker
) -> tuple[Endpoint, Endpoint]:
    theirs, ours = Endpoint(apache_kafka.bootstrap), Endpoint(conformance_broker.bootstrap)
    yield theirs, ours
    theirs.close()
    ours.close()


@pytest.fixture(scope="module")
def tables(apache_kafka: ApacheKafkaNode, conformance_broker: ConformanceBroker) -> tuple[dict, dict]:
    return api_versions(conformance_broker.bootstrap), api_versions(apache_kafka.bootstrap)


@pytest.fixture(scope="module")
def outcomes(endpoints: tuple[Endpoint, Endpoint], tables: tuple[dict, dict]) -> list[Outcome]:
    theirs, ours = endpoints
    names = Names(uuid.uuid4().hex[:8])
    return run_corpus(corpus(names), theirs, ours, common_versions(*tables), names.token)


def test_it_lists_the_keys_only_one_broker_serves(tables: tuple[dict, dict]) -> None:
    ours, theirs = tables
    assert set(theirs) - set(ours) == ONLY_APACHE_KAFKA
    assert set(ours) - set(theirs) == ONLY_OURS


def test_it_sends_every_version_of_every_key_both_serve(
    outcomes: list[Outcome], tables: tuple[dict, dict]
) -> None:
    sent = {(outcome.step.api_key, outcome.version) for outcome in outcomes}
    wanted = {(key, version) for key, versions in common_versions(*tables).items() for version in versions}
    assert wanted - sent == set()


def test_it_finds_no_difference_but_the_known_ones(outcomes: list[Outcome]) -> None:
    unexpected = [
        f"{outcome.step.name} v{outcome.version}: {outcome.differences}"
        for outcome in outcomes
        if outcome.verdict == DIFFERENT and outcome.step.name not in KNOWN_DIFFERENCES
    ]
    assert unexpected == [], "\n".join(unexpected)


def test_every_known_difference_still_shows(outcomes: list[Outcome]) -> None:
    """A known difference that no longer shows was fixed: remove it from known_differences.py and the README."""
    different = {outcome.step.name for outcome in outcomes if outcome.verdict == DIFFERENT}
    assert set(KNOWN_DIFFERENCES) - different == set()


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], database=None
)
@given(sequence=sequences)
def test_a_sequence_of_requests_leaves_the_same_state(
    endpoints: tuple[Endpoint, Endpoint], sequence: list[Operation]
) -> None:
    theirs, ours = endpoints
    topic = f"conf-state-{uuid.uuid4().hex[:10]}"
    found = [
        f"{what}: {difference}"
        for what, mine, other in run_sequence(theirs, ours, topic, sequence)
        for difference in differences(mine, other)
    ]
    assert found == [], f"after {sequence}"
