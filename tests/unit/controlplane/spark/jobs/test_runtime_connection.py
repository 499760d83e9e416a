"""How a job tells the `topics` source its connection: a session file's name over Spark Connect, else the
properties as kafka.* options."""

from pathlib import Path

from controlplane.spark.jobs.runtime import JobContext, TopicRange

CONFIG = {"bootstrap.servers": "b:9092", "sasl.username": "svc", "sasl.password": "s3cret"}


def test_with_a_connection_file_the_options_name_the_file_and_carry_no_connection_property():
    context = JobContext(CONFIG, Path("out"), connection_file="streamhub-connection-ab12.json")
    source = context.source_options(TopicRange("orders"))
    sink = context.sink_options("copies")
    for options in (source, sink):
        assert options["connectionFile"] == "streamhub-connection-ab12.json"
        assert not [key for key in options if key.startswith("kafka.")]
        assert "s3cret" not in repr(options)
        assert "svc" not in repr(options)
    assert source["subscribe"] == "orders"
    assert sink["topic"] == "copies"


def test_without_one_the_options_carry_the_connection_as_before():
    options = JobContext(CONFIG, Path("out")).source_options(TopicRange("orders"))
    assert options["kafka.sasl.password"] == "s3cret"
    assert "connectionFile" not in options
