"""The default a topic override returns to, where Kafka names none: an unset log.retention.ms is no synonym in
DescribeConfigs, so the control plane derives the broker's effective default as Kafka does (log.retention.ms,
else log.retention.minutes, else log.retention.hours; log.roll.ms, else log.roll.hours)."""

from controlplane.kafka.config_entries import config_entries, derived_broker_defaults
from controlplane.kafka.configs import ConfigSynonym, DocumentedConfig


def override(name: str, value: str, *synonyms: ConfigSynonym) -> DocumentedConfig:
    own = ConfigSynonym(name, value, "DYNAMIC_TOPIC_CONFIG")
    return DocumentedConfig(value, "DYNAMIC_TOPIC_CONFIG", False, False, "long", None, (own, *synonyms))


def broker(**values: str | None) -> dict[str, DocumentedConfig]:
    """A broker's configs as DescribeConfigs reports them: unset ones have no value."""
    return {
        name.replace("_", "."): DocumentedConfig(value, "DEFAULT_CONFIG" if value else "UNKNOWN", True, False)
        for name, value in values.items()
    }


KAFKA_DEFAULTS = broker(
    log_retention_ms=None,
    log_retention_minutes=None,
    log_retention_hours="168",
    log_roll_ms=None,
    log_roll_hours="168",
)


def test_it_derives_retention_and_roll_defaults_from_the_hours_settings() -> None:
    topic = {
        "retention.ms": override("retention.ms", "3600000"),
        "segment.ms": override("segment.ms", "600000"),
    }

    derived = derived_broker_defaults(topic, KAFKA_DEFAULTS)

    assert derived == {
        "retention.ms": {"name": "log.retention.hours", "value": "604800000", "source": "DEFAULT_CONFIG"},
        "segment.ms": {"name": "log.roll.hours", "value": "604800000", "source": "DEFAULT_CONFIG"},
    }
    shown = config_entries(topic, broker_defaults=derived)
    assert shown["retention.ms"]["default"]["value"] == "604800000"


def test_the_most_specific_broker_setting_wins() -> None:
    topic = {"retention.ms": override("retention.ms", "3600000")}

    by_minutes = derived_broker_defaults(topic, {**KAFKA_DEFAULTS, **broker(log_retention_minutes="90")})
    by_ms = derived_broker_defaults(
        topic, {**KAFKA_DEFAULTS, **broker(log_retention_minutes="90", log_retention_ms="-1")}
    )

    assert by_minutes["retention.ms"] == {
        "name": "log.retention.minutes",
        "value": "5400000",
        "source": "DEFAULT_CONFIG",
    }
    assert by_ms["retention.ms"]["value"] == "-1"  # unlimited, as set


def test_a_synonym_kafka_names_is_kept_and_nothing_is_derived_without_an_override() -> None:
    named = ConfigSynonym("log.retention.ms", "86400000", "STATIC_BROKER_CONFIG")
    topic = {
        "retention.ms": override("retention.ms", "3600000", named),
        "segment.ms": DocumentedConfig("604800000", "DEFAULT_CONFIG", False, False),
    }

    assert derived_broker_defaults(topic, KAFKA_DEFAULTS) == {}
    assert config_entries(topic)["retention.ms"]["default"] == {
        "name": "log.retention.ms",
        "value": "86400000",
        "source": "STATIC_BROKER_CONFIG",
    }
