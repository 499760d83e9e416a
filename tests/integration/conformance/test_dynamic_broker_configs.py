"""Dynamic broker configs, name by name against the session's Apache Kafka: the same names are dynamic, with
the same types, sensitivity and default synonyms, and the same values are accepted or refused (same error
code, and Kafka's own words) on a broker id and on the cluster default "". Every difference is named below
with its reason; the lists are what an integrator reviews, not a place to hide a gap."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kio.schema.describe_configs.v4.request import DescribeConfigsRequest, DescribeConfigsResource
from kio.schema.incremental_alter_configs.v1.request import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from kio.static.primitive import i8

from broker.runtime.dynamic_config import RESTART_ONLY_CONFIGS
from broker.runtime.kafka_config_defs import DYNAMIC_QUOTA_CONFIG_DEFS
from tests.integration.broker.kafka_wire import WireClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

BROKER = 4
# Our defaults differ where README argues it (config.py): PEM keystores, SCRAM between brokers, loopback
# listeners, the mechanisms we have (Kafka's default is GSSAPI, which we do not).
DIFFERENT_DEFAULTS = frozenset(
    {
        "listeners",
        "listener.security.protocol.map",
        "sasl.enabled.mechanisms",
        "sasl.mechanism.inter.broker.protocol",
        "ssl.keystore.type",
        "ssl.truststore.type",
    }
)
# Same error code, our own words: Kafka's are a Java parser's exception text ("begin 0, end -1, length 5"),
# a JVM plugin's class name, or "/ by zero".
OWN_WORDS = frozenset(
    {"listeners", "listener.security.protocol.map", "max.connections.per.ip.overrides", "metric.reporters"}
)
OWN_WORDS_VALUES = frozenset({("log.cleaner.threads", "0")})
# (name, value) Kafka 4.2 accepts and we refuse, or the other way round, and why.
DIFFERENT_OUTCOMES = {
    ("log.cleanup.policy", ""): "an empty cleanup policy: our log keeps delete or compact",
    ("log.flush.interval.ms", "-1"): "Kafka's ConfigDef has no bound; our topic flush.ms refuses -1",
    ("message.max.bytes", "0"): "a zero limit refuses every batch; we refuse it up front",
    (
        "min.insync.replicas",
        "1",
    ): "Kafka refuses it while eligible leader replicas (ELR) are on; we have no ELR",
}

# Values each type is probed with (one bad of each kind, the edges, one good).
PROBES = {
    1: ("maybe", "true"),
    2: ("bogus", ""),
    3: ("abc", "0", "-1", "1"),
    4: ("abc", "-1", "0"),
    5: ("abc", "-1", "0", "1"),
    6: ("abc", "-1", "0", "0.5"),
    7: ("bogus", ""),
    8: ("no.such.Class",),
    9: ("secret",),
}


class _Broker:
    """One connection to a broker for the many small requests of the comparison."""

    def __init__(self, bootstrap: str) -> None:
        self.client = WireClient(bootstrap, timeout=15)

    def describe(self) -> dict[str, tuple[int, bool, list[tuple[str, str | None, int]]]]:
        """The dynamic configs of broker 1: name -> (type, sensitive, synonyms of the default layer)."""
        request = DescribeConfigsRequest(
            resources=(
                DescribeConfigsResource(resource_type=i8(BROKER), resource_name="1", configuration_keys=None),
            ),
            include_synonyms=True,
            include_documentation=False,
        )
        result = self.client.request(request).results[0]
        return {
            entry.name: (
                int(entry.config_type),
                entry.is_sensitive,
                [(s.name, s.value, int(s.source)) for s in entry.synonyms if int(s.source) == 5],
            )
            for entry in result.configs
            if not entry.read_only
        }

    def check(self, resource_name: str, name: str, value: str) -> tuple[int, str | None]:
        request = IncrementalAlterConfigsRequest(
            resources=(
                AlterConfigsResource(
                    resource_type=i8(BROKER),
                    resource_name=resource_name,
                    configs=(AlterableConfig(name=name, config_operation=i8(0), value=value),),
                ),
            ),
            validate_only=True,
        )
        answer = self.client.request(request).responses[0]
        return int(answer.error_code.value), answer.error_message


@pytest.fixture(scope="module")
def both(apache_kafka, broker) -> Iterator[tuple[_Broker, _Broker]]:
    kafka, ours = _Broker(apache_kafka.bootstrap), _Broker(broker.bootstrap)
    yield kafka, ours
    kafka.client.close()
    ours.client.close()


def test_the_same_configs_are_dynamic_with_the_same_types_and_defaults(both: tuple[_Broker, _Broker]) -> None:
    kafka, ours = (side.describe() for side in both)
    # Argued: the replication throttles are broker quotas Kafka lists only once set; ours lists them always so
    # that the console can offer them (controlplane/clusters/brokers.py changes only listed configs).
    assert sorted(set(ours) - set(kafka)) == sorted(DYNAMIC_QUOTA_CONFIG_DEFS)
    ours = {name: entry for name, entry in ours.items() if name not in DYNAMIC_QUOTA_CONFIG_DEFS}
    assert sorted(ours) == sorted(kafka), "names Kafka lists as dynamic and we do not, or the other way round"
    for name, (kind, sensitive, defaults) in kafka.items():
        assert ours[name][:2] == (kind, sensitive), name
        if name not in DIFFERENT_DEFAULTS:
            assert ours[name][2] == defaults, name


def test_every_dynamic_config_is_accepted_and_refused_as_kafka_does(both: tuple[_Broker, _Broker]) -> None:
    kafka, ours = both
    differences = []
    for name, (kind, _sensitive, _defaults) in sorted(kafka.describe().items()):
        for value in PROBES[kind]:
            for resource_name in ("1", ""):
                expected, got = (
                    kafka.check(resource_name, name, value),
                    ours.check(resource_name, name, value),
                )
                if (name, value) in DIFFERENT_OUTCOMES:
                    continue
                if name in RESTART_ONLY_CONFIGS and expected[0] == 0:
                    # Kafka re-binds listeners and authenticators live; we refuse and say to restart.
                    assert got[0] == 42
                    assert "applies these configs when it starts" in str(got[1])
                    continue
                if name in OWN_WORDS or (name, value) in OWN_WORDS_VALUES:
                    expected, got = (expected[0], None), (got[0], None)
                if got != expected:
                    differences.append((name, value, resource_name, expected, got))
    assert differences == []
