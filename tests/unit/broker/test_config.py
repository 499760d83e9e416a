import pytest

from broker.config import BrokerConfig, ConfigError, parse_properties


def test_it_fills_in_kafkas_defaults():
    config = BrokerConfig.from_properties({})
    assert config.num_partitions == 1
    assert config.message_max_bytes == 1048588
    assert config.log_retention_ms == 168 * 3_600_000
    assert config.group_initial_rebalance_delay_ms == 3000
    assert config.auto_create_topics_enable is True
    assert str(config.listeners[0]) == "PLAINTEXT://127.0.0.1:9092"
    # Kafka 4.2's AddPartitionsToTxnConfig and request.timeout.ms.
    assert config.get_int("add.partitions.to.txn.retry.backoff.ms") == 20
    assert config.get_int("add.partitions.to.txn.retry.backoff.max.ms") == 100
    assert config.get_int("request.timeout.ms") == 30000


def test_retention_ms_beats_minutes_beats_hours():
    assert BrokerConfig.from_properties({"log.retention.hours": "1"}).log_retention_ms == 3_600_000
    assert (
        BrokerConfig.from_properties(
            {"log.retention.hours": "1", "log.retention.minutes": "2"}
        ).log_retention_ms
        == 120_000
    )
    config = BrokerConfig.from_properties({"log.retention.minutes": "2", "log.retention.ms": "5"})
    assert config.log_retention_ms == 5
    assert config.topic_defaults()["retention.ms"] == "5"


def test_it_parses_properties_files_with_comments_separators_and_continuations():
    text = "# comment\n! also\nnode.id=3\nlisteners : PLAINTEXT://127.0.0.1:1234\nlog.dirs=/a,\\\n  /b\n"
    props = parse_properties(text)
    assert props == {"node.id": "3", "listeners": "PLAINTEXT://127.0.0.1:1234", "log.dirs": "/a,/b"}
    config = BrokerConfig.from_properties(props)
    assert [str(d) for d in config.log_dirs] == ["/a", "/b"]
    assert config.listeners[0].port == 1234


def test_overrides_win_over_the_file(tmp_path):
    path = tmp_path / "broker.properties"
    path.write_text("num.partitions=3\n")
    assert BrokerConfig.load(path, ["num.partitions=5"]).num_partitions == 5


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"num.partitions": "many"}, "num.partitions"),
        ({"num.partitions": "0"}, "num.partitions"),
        ({"auto.create.topics.enable": "yes"}, "auto.create.topics.enable"),
        ({"listeners": "127.0.0.1:9092"}, "listeners"),
        ({"listeners": "PLAINTEXT://127.0.0.1:99999"}, "listeners"),
        ({"advertised.listeners": "OTHER://h:1"}, "advertised.listeners"),
        ({"compression.type": "brotli"}, "compression.type"),
        ({"log.cleanup.policy": "forever"}, "log.cleanup.policy"),
        ({"metrics.port": "-1"}, "metrics.port"),
        ({"group.consumer.migration.policy": "sideways"}, "group.consumer.migration.policy"),
        # Kafka's ranges: a backoff of at least 1 ms, a retry window and request timeout of at least 0.
        ({"add.partitions.to.txn.retry.backoff.ms": "0"}, "add.partitions.to.txn.retry.backoff.ms"),
        ({"add.partitions.to.txn.retry.backoff.max.ms": "-1"}, "add.partitions.to.txn.retry.backoff.max.ms"),
        ({"request.timeout.ms": "-1"}, "request.timeout.ms"),
    ],
)
def test_it_rejects_bad_values_naming_the_property(props, message):
    with pytest.raises(ConfigError, match=message):
        BrokerConfig.from_properties(props)


def test_unknown_properties_are_kept_for_describe_configs():
    config = BrokerConfig.from_properties({"some.plugin.setting": "x"})
    assert config.broker_value("some.plugin.setting") == "x"


def test_an_override_without_equals_is_an_error():
    with pytest.raises(ConfigError):
        BrokerConfig.load(None, ["num.partitions"])


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"queued.max.request.bytes": "1000"}, "queued.max.request.bytes"),
        ({"max.connections.per.ip": "-1"}, "max.connections.per.ip"),
        ({"max.connections.per.ip.overrides": "127.0.0.1"}, "max.connections.per.ip.overrides"),
        ({"max.connections.per.ip.overrides": "127.0.0.1:many"}, "max.connections.per.ip.overrides"),
    ],
)
def test_it_rejects_bad_connection_limits(props, message):
    with pytest.raises(ConfigError, match=message):
        BrokerConfig.from_properties(props)


def test_connection_limits_count_per_ip_with_overrides_and_in_total():
    from broker.config import parse_ip_overrides
    from broker.runtime.connection_limits import ConnectionLimits

    overrides = parse_ip_overrides("10.0.0.1:0, ::1:3")
    assert overrides == {"10.0.0.1": 0, "::1": 3}
    limits = ConnectionLimits(max_connections=4, max_per_ip=2, overrides=overrides)
    assert limits.admit("10.0.0.1") is not None  # overridden to none at all
    assert [limits.admit("10.0.0.2") for _ in range(3)][
        2
    ] == "max.connections.per.ip (2) reached for 10.0.0.2"
    assert [limits.admit("::1"), limits.admit("::1")] == [None, None]
    assert limits.admit("::1") == "max.connections (4) reached"
    limits.release("10.0.0.2")
    assert limits.admit("::1") is None  # the third ::1 the override allows
    assert limits.total == 4
