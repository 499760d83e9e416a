"""Dynamic broker configs: the layers over the properties file, what is refused, and the file a single node
keeps them in."""

from __future__ import annotations

import logging
import re

import pytest

from broker.config import BrokerConfig
from broker.runtime.dynamic_config import (
    DEFAULT_CONFIG,
    DYNAMIC_BROKER_CONFIG,
    DYNAMIC_DEFAULT_BROKER_CONFIG,
    STATIC_BROKER_CONFIG,
    DynamicBrokerConfig,
    DynamicConfigError,
    check_group_configs,
)
from broker.runtime.log_levels import broker_log_levels, check_log_levels, set_log_levels


def _dynamic(**props: str) -> DynamicBrokerConfig:
    properties = {"node.id": "3", "listeners": "PLAINTEXT://127.0.0.1:0", **props}
    return DynamicBrokerConfig(BrokerConfig.from_properties(properties))


def test_this_brokers_value_beats_the_cluster_default_which_beats_the_file() -> None:
    dynamic = _dynamic(**{"message.max.bytes": "5000"})
    changes: list[frozenset[str]] = []
    dynamic.subscribe(changes.append)
    assert dynamic.config.message_max_bytes == 5000

    dynamic.set_layer("", {"message.max.bytes": "6000"})
    assert dynamic.config.message_max_bytes == 6000
    dynamic.set_layer("3", {"message.max.bytes": "7000"})
    assert dynamic.config.message_max_bytes == 7000
    assert dynamic.synonyms("message.max.bytes") == [
        ("message.max.bytes", "7000", DYNAMIC_BROKER_CONFIG),
        ("message.max.bytes", "6000", DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("message.max.bytes", "5000", STATIC_BROKER_CONFIG),
        ("message.max.bytes", "1048588", DEFAULT_CONFIG),
    ]
    dynamic.set_layer("3", {})
    dynamic.set_layer("", {})
    assert dynamic.config.message_max_bytes == 5000
    assert changes == [frozenset({"message.max.bytes"})] * 4

    # Another broker's configs are not this broker's business.
    assert dynamic.set_layer("4", {"message.max.bytes": "8000"}) == frozenset()
    assert dynamic.config.message_max_bytes == 5000


def test_derived_values_follow_a_dynamic_change() -> None:
    dynamic = _dynamic(**{"log.retention.hours": "1"})
    assert dynamic.config.log_retention_ms == 3_600_000
    dynamic.set_layer("", {"log.retention.ms": "1000"})
    assert dynamic.config.topic_defaults()["retention.ms"] == "1000"
    assert dynamic.config.broker_value("log.retention.ms") == "1000"


def test_read_only_unknown_and_bad_values_are_refused_as_kafka_refuses_them() -> None:
    dynamic = _dynamic()
    with pytest.raises(DynamicConfigError) as read_only:
        dynamic.check({"num.partitions": "3", "log.dirs": "/x", "message.max.bytes": "10"})
    assert read_only.value.invalid_request
    assert read_only.value.message == "Cannot update these configs dynamically: Set(log.dirs, num.partitions)"
    # As Kafka's DynamicLogConfig: only the first synonym of a topic config (log.retention.ms) is dynamic.
    with pytest.raises(DynamicConfigError) as hours:
        dynamic.check({"log.retention.hours": "1", "log.roll.hours": "1", "log.retention.ms": "1000"})
    assert (
        hours.value.message
        == "Cannot update these configs dynamically: Set(log.retention.hours, log.roll.hours)"
    )
    with pytest.raises(DynamicConfigError, match=re.escape("Unknown broker config: made.up")) as unknown:
        dynamic.check({"made.up": "1"})
    assert not unknown.value.invalid_request
    with pytest.raises(
        DynamicConfigError, match=re.escape("Invalid value many for configuration message.max.bytes")
    ):
        dynamic.check({"message.max.bytes": "many"})
    with pytest.raises(DynamicConfigError, match=re.escape("message.max.bytes: must be at least 1")):
        dynamic.check({"message.max.bytes": "0"})
    with pytest.raises(DynamicConfigError, match="Value must be at least 1"):
        dynamic.check({"leader.replication.throttled.rate": "0"})
    candidate = dynamic.check({"log.cleanup.policy": "delete,compact", "message.max.bytes": None})
    assert candidate.get_str("log.cleanup.policy") == "delete,compact"
    assert dynamic.config.get_str("log.cleanup.policy") == "delete", "checking changes nothing"


def test_values_are_checked_in_kafkas_order_and_words() -> None:
    dynamic = _dynamic()

    def refusal(changes: dict[str, str], resource_name: str = "3") -> str:
        with pytest.raises(DynamicConfigError) as refused:
            dynamic.check(changes, resource_name)
        assert refused.value.invalid_request, "Kafka 4.2 answers INVALID_REQUEST to every bad broker value"
        return refused.value.message

    assert refusal({"log.cleaner.threads": "x"}) == (
        "Invalid value x for configuration log.cleaner.threads: Not a number of type INT"
    )
    assert refusal({"producer.id.expiration.ms": "99999999999"}).endswith("Not a number of type INT")
    assert refusal({"log.cleaner.min.cleanable.ratio": "-1"}) == (
        "Invalid value -1.0 for configuration log.cleaner.min.cleanable.ratio: Value must be at least 0"
    )
    assert refusal({"compression.gzip.level": "0"}).endswith("Value must be between 1 and 9 or equal to -1")
    assert refusal({"compression.zstd.level": "23"}).endswith("Value must be no more than 22")
    assert refusal({"ssl.client.auth": "maybe"}).endswith("String must be one of: required, requested, none")
    assert refusal({"ssl.keystore.location": "/k"}) == (
        "These security configs can be dynamically updated only per-listener using the listener prefix: "
        "HashSet(ssl.keystore.location)"
    )
    assert refusal({"ssl.protocol": "TLSv1.2"}, "") == (
        "Cannot update these configs at default cluster level, broker id must be specified: Set(ssl.protocol)"
    )
    assert dynamic.check({"ssl.protocol": "TLSv1.2"}, "3") is not None
    # A live thread pool may at most halve or double (num.io.threads is 8 by default).
    assert "at least half the current value 8" in refusal({"num.io.threads": "3"})
    assert "not be greater than double the current value 8" in refusal({"num.io.threads": "17"})
    assert dynamic.check({"num.io.threads": "16"}) is not None
    # The cleaner's dedupe buffer (128 MiB) must give each cleaner thread more than 1 MiB.
    assert "1MB per cleaner thread" in refusal({"log.cleaner.threads": "128"})
    assert dynamic.check({"log.cleaner.threads": "127"}) is not None
    assert "1MB per cleaner thread" in refusal({"log.cleaner.dedupe.buffer.size": str(1 << 20)})
    assert "max.connections.per.ip.overrides property is set" in refusal({"max.connections.per.ip": "0"})
    assert "This broker applies these configs when it starts" in refusal({"listeners": "PLAINTEXT://:1"})


def test_configs_without_a_broker_setting_are_kept_in_extra() -> None:
    dynamic = _dynamic()
    dynamic.set_layer("3", {"background.threads": "9"})
    assert dynamic.config.extra["background.threads"] == "9"
    assert dynamic.synonyms("background.threads")[0] == ("background.threads", "9", DYNAMIC_BROKER_CONFIG)
    dynamic.set_layer("3", {})
    assert "background.threads" not in dynamic.config.extra
    assert dynamic.synonyms("background.threads") == [("background.threads", "10", DEFAULT_CONFIG)]


def test_group_configs_are_bounded_as_kafkas() -> None:
    check_group_configs({"consumer.session.timeout.ms": "50000", "consumer.heartbeat.interval.ms": "5000"})
    with pytest.raises(DynamicConfigError, match="between 45000 and 60000"):
        check_group_configs({"consumer.session.timeout.ms": "1000"})
    with pytest.raises(DynamicConfigError, match=re.escape("Unknown group config name: share.x")):
        check_group_configs({"share.x": "1"})


def test_logger_levels_in_kafkas_names() -> None:
    logger = logging.getLogger("broker.unit_test_logger")
    try:
        set_log_levels({"broker.unit_test_logger": "TRACE"})
        assert broker_log_levels()["broker.unit_test_logger"] == "TRACE"
        set_log_levels({"broker.unit_test_logger": None})
        assert logger.level == logging.NOTSET
        with pytest.raises(ValueError, match="Removing the log level of the root logger is not allowed"):
            check_log_levels({"root": None})
        with pytest.raises(ValueError, match="Logger elsewhere does not exist!"):
            check_log_levels({"elsewhere": "INFO"})
    finally:
        logger.setLevel(logging.NOTSET)


def test_derived_retention_shows_in_every_layer_as_its_milliseconds() -> None:
    # Kafka's default of log.retention.ms is null (derived from .hours): it lists no default synonym.
    dynamic = _dynamic(**{"log.retention.ms": "7200000"})
    assert dynamic.synonyms("log.retention.ms") == [("log.retention.ms", "7200000", STATIC_BROKER_CONFIG)]
