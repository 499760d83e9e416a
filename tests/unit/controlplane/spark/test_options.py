"""Parsing the data source's options, named as in Spark's Kafka source."""

import json
import pickle
import sys

import pytest

from controlplane.spark.options import EARLIEST, LATEST, InvalidOptions, parse_read_options

BOOTSTRAP = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def test_it_reads_topics_offsets_and_flags_case_insensitively():
    options = parse_read_options(
        {
            **BOOTSTRAP,
            "Subscribe": "a, b",
            "startingOffsets": json.dumps({"a": {"0": 5, "1": -2}}),
            "ENDINGOFFSETS": "latest",
            "includeHeaders": "TRUE",
            "failOnDataLoss": "false",
            "kafka.security.protocol": "SASL_PLAINTEXT",
        }
    )
    assert options.selection.topics == ("a", "b")
    assert options.starting.per_partition == {("a", 0): 5, ("a", 1): EARLIEST}
    assert options.ending.default == LATEST
    assert options.include_headers is True
    assert options.fail_on_data_loss is False
    assert options.kafka_config == {
        "bootstrap.servers": "127.0.0.1:9092",
        "security.protocol": "SASL_PLAINTEXT",
    }


def test_it_turns_a_java_jaas_config_into_librdkafka_credentials():
    jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="svc" password="p\\"w";'
    options = parse_read_options({**BOOTSTRAP, "subscribe": "a", "kafka.sasl.jaas.config": jaas})
    assert options.kafka_config["sasl.username"] == "svc"
    assert options.kafka_config["sasl.password"] == 'p"w'
    assert "sasl.jaas.config" not in options.kafka_config


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"subscribe": "a", "assign": '{"a": [0]}'}, "exactly one of"),
        ({}, "exactly one of"),
        ({"subscribePattern": "("}, "not a regular expression"),
        ({"assign": '{"a": ["x"]}'}, "lists of partition numbers"),
        ({"subscribe": "a", "endingOffsets": "earliest"}, "cannot be 'earliest'"),
        ({"subscribe": "a", "endingOffsets": '{"a": {"0": -2}}'}, "cannot use offset -2"),
        ({"subscribe": "a", "startingOffsets": "latest"}, "cannot be 'latest' for a batch"),
        ({"subscribe": "a", "startingOffsets": "{not json"}, "not JSON"),
        ({"subscribe": "a", "failOnDataLoss": "maybe"}, "true or false"),
        ({"subscribe": "a", "maxOffsetsPerTrigger": "0"}, "must be positive"),
        ({"subscribe": "a", "startingTimestamp": "yesterday"}, "milliseconds"),
    ],
)
def test_it_refuses_options_that_describe_no_read(options, message):
    with pytest.raises(InvalidOptions, match=message):
        parse_read_options({**BOOTSTRAP, **options})


def test_it_needs_a_bootstrap_address():
    with pytest.raises(InvalidOptions, match=r"kafka\.bootstrap\.servers"):
        parse_read_options({"subscribe": "a"})


def test_a_streaming_read_refuses_ending_offsets_but_may_start_at_latest():
    with pytest.raises(InvalidOptions, match="not allowed in a streaming query"):
        parse_read_options({**BOOTSTRAP, "subscribe": "a", "endingOffsets": "latest"}, streaming=True)
    options = parse_read_options({**BOOTSTRAP, "subscribe": "a", "startingOffsets": "latest"}, streaming=True)
    assert options.starting.default == LATEST


@pytest.fixture
def session_files(tmp_path, monkeypatch):
    """This process as a Spark Python worker of a session whose files are in tmp_path (what PySpark's worker
    does with the directory the JVM names: the session's own on a Connect server)."""
    from pyspark import SparkFiles
    from pyspark.worker_util import setup_spark_files

    monkeypatch.setattr(SparkFiles, "_root_directory", None)
    monkeypatch.setattr(SparkFiles, "_is_running_on_worker", False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    setup_spark_files(str(tmp_path), [])
    return tmp_path


def test_a_connection_file_of_the_session_gives_the_connection(session_files):
    connection = {"bootstrap.servers": "b:9092", "sasl.username": "svc", "sasl.password": "s3cret"}
    (session_files / "conn.json").write_text(json.dumps(connection))
    options = parse_read_options({"subscribe": "a", "connectionFile": "conn.json"})
    assert options.kafka_config == connection
    # kafka.* options given beside it are added, and win.
    options = parse_read_options({"subscribe": "a", "ConnectionFile": "conn.json", "kafka.client.id": "x"})
    assert options.kafka_config == {**connection, "client.id": "x"}


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing.json", "not among this session's files"),
        ("../conn.json", "plain file name"),
        ("", "plain file name"),
        ("list.json", "one JSON object"),
    ],
)
def test_a_connection_file_that_cannot_give_the_connection_is_an_error(session_files, name, message):
    (session_files.parent / "conn.json").write_text(json.dumps({"bootstrap.servers": "b:9092"}))
    (session_files / "list.json").write_text("[]")
    with pytest.raises(InvalidOptions, match=message):
        parse_read_options({"subscribe": "a", "connectionFile": name})


def test_a_connection_from_a_file_travels_as_the_files_name_and_is_read_again(session_files):
    """What Spark pickles into its tasks (the planned reader, a writer) names the file: each executor reads it."""
    (session_files / "conn.json").write_text(
        json.dumps({"bootstrap.servers": "b:9092", "sasl.password": "s3cret"})
    )
    config = parse_read_options(
        {"subscribe": "a", "connectionFile": "conn.json", "kafka.acks": "1"}
    ).kafka_config
    shipped = pickle.dumps(config)
    assert b"s3cret" not in shipped
    (session_files / "conn.json").write_text(
        json.dumps({"bootstrap.servers": "b:9092", "sasl.password": "new"})
    )
    assert pickle.loads(shipped) == {"bootstrap.servers": "b:9092", "sasl.password": "new", "acks": "1"}
    (session_files / "conn.json").unlink()
    with pytest.raises(InvalidOptions, match="not among this session's files"):
        pickle.loads(shipped)
