"""The editor's knowledge of Kafka configs that DescribeConfigs does not carry: choices, units, unlimited."""

from controlplane.kafka.config_catalog import LONG_MAX, config_kind
from controlplane.kafka.config_entries import config_entry
from controlplane.kafka.configs import ConfigSynonym, ConfigValue, DocumentedConfig
from controlplane.tenancy.policy import topic_config_rules


def test_enums_have_their_choices_and_list_configs_take_several() -> None:
    assert config_kind("cleanup.policy", "list").as_dict()["choices"] == ["delete", "compact"]
    assert config_kind("cleanup.policy", "list").multiple
    compression = config_kind("compression.type", "string")
    assert (compression.multiple, "zstd" in compression.choices) == (False, True)
    assert config_kind("message.timestamp.type", None).choices == ("CreateTime", "LogAppendTime")


def test_units_follow_kafka_naming_and_unlimited_is_the_sentinel() -> None:
    assert (config_kind("retention.ms", "long").unit, config_kind("retention.ms", "long").unlimited) == (
        "ms",
        "-1",
    )
    assert config_kind("log.retention.hours", "int").unit == "hours"
    assert config_kind("max.message.bytes", "int").unit == "bytes"
    assert config_kind("flush.ms", "long").unlimited == str(LONG_MAX)
    assert config_kind("leader.replication.throttled.rate", "long").unit == "bytes_per_second"
    # A string named like a duration is not one: the type the cluster reports wins.
    assert config_kind("some.listener.ms", "string").unit is None
    assert config_kind("num.partitions", "int").unit is None


def test_a_reset_shows_the_broker_default_in_the_topic_configs_unit() -> None:
    entry = DocumentedConfig(
        value="3600000",
        source="DYNAMIC_TOPIC_CONFIG",
        read_only=False,
        sensitive=False,
        config_type="long",
        synonyms=(
            ConfigSynonym("retention.ms", "3600000", "DYNAMIC_TOPIC_CONFIG"),
            ConfigSynonym("log.retention.hours", "168", "DEFAULT_CONFIG"),
        ),
    )
    shown = config_entry("retention.ms", entry)
    assert shown["default"] == {
        "name": "log.retention.hours",
        "value": "604800000",
        "source": "DEFAULT_CONFIG",
    }
    # A value that is not an override is its own default.
    plain = ConfigValue(value="delete", source="DEFAULT_CONFIG", read_only=False, sensitive=False)
    assert config_entry("cleanup.policy", plain)["default"]["value"] == "delete"
    assert config_entry("cleanup.policy", plain)["type"] is None


def test_rules_follow_the_guardrails_and_the_allowed_list() -> None:
    class Policy:
        allowed_topic_configs = ["retention.ms"]

    rules = topic_config_rules(
        Policy(), {"max_retention_ms": 3_600_000}, ["retention.ms", "cleanup.policy", "segment.bytes"]
    )
    assert (rules["retention.ms"].allowed, rules["retention.ms"].minimum, rules["retention.ms"].maximum) == (
        True,
        0,
        3_600_000,
    )
    assert not rules["cleanup.policy"].allowed
    assert not rules["segment.bytes"].allowed
    unrestricted = topic_config_rules(None, None, ["segment.bytes", "cleanup.policy"])
    assert unrestricted["segment.bytes"].minimum == 1024 * 1024
    assert unrestricted["cleanup.policy"].as_dict() == {
        "allowed": True,
        "minimum": None,
        "maximum": None,
        "reason": "",
    }
