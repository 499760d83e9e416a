import pytest

from broker.log.config import LONG_MAX, TOPIC_CONFIG_DEFAULTS, LogConfig
from broker.log.errors import InvalidConfigError


def test_the_defaults_are_kafkas() -> None:
    config = LogConfig.from_properties({})
    assert config == LogConfig()
    assert config.segment_bytes == 1073741824
    assert config.retention_ms == 604800000
    assert config.max_message_bytes == 1048588
    assert config.flush_messages == LONG_MAX
    assert config.cleanup_policy == frozenset({"delete"})
    assert config.to_properties() == TOPIC_CONFIG_DEFAULTS


def test_properties_overlay_a_base_config() -> None:
    base = LogConfig.from_properties({"retention.ms": "1000"})
    config = LogConfig.from_properties(
        {"cleanup.policy": "compact, delete", "compression.type": "ZSTD"}, base=base
    )
    assert config.retention_ms == 1000
    assert config.cleanup_policy == frozenset({"compact", "delete"})
    assert config.compacted
    assert config.deletes
    assert config.compression_type == "zstd"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("segment.bytes", "10"),
        ("segment.bytes", "abc"),
        ("retention.ms", "-2"),
        ("cleanup.policy", "shred"),
        ("min.cleanable.dirty.ratio", "1.5"),
        ("compression.type", "brotli"),
        ("message.timestamp.type", "WallClock"),
        ("preallocate", "yes"),
        ("min.insync.replicas", "0"),
        ("flush.messages", "0"),
        ("retention.bytes", "99999999999999999999"),
        ("no.such.config", "1"),
    ],
)
def test_bad_values_raise_invalid_config_naming_the_config(name: str, value: str) -> None:
    with pytest.raises(InvalidConfigError) as caught:
        LogConfig.from_properties({name: value})
    assert caught.value.name == name
    assert caught.value.error_code == 40


def test_min_compaction_lag_may_not_exceed_max_compaction_lag() -> None:
    with pytest.raises(InvalidConfigError):
        LogConfig.from_properties({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"})
