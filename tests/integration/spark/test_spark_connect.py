"""A catalog job on a Spark Connect server started with pyspark's sbin/start-connect-server.sh, launched
through the API and the Celery worker. The server's Python has the third-party packages but not the
repository: the client adds the code artifact to its session (addArtifacts) and registers the source there.

The server logs and records (event log) the plans it gets, so the source's credentials travel as a session file
(topic_source.add_connection_file) that the plan names instead; these tests read back what the server got."""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import pytest
from pyspark.errors import AnalysisException, PySparkException

from controlplane.spark.artifact import build_code_artifact
from controlplane.spark.topic_source import add_connection_file, register_topic_source
from tests.fixtures.servers import wait_until
from tests.integration.spark.conftest import Setup
from tests.integration.spark.spark_servers import ConnectServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def test_a_catalog_job_runs_on_a_spark_connect_server(setup: Setup, connect_server: ConnectServer) -> None:
    records = [(i % 2, b"k%d" % (i % 6), b"v" * (i % 5)) for i in range(500)]
    topic = setup.topic("connect", 2, records)
    run = setup.launch("key_skew", {"source": {"topic": topic}, "top": 2}, compute_target=connect_server.url)
    finished = setup.wait_finished(run["id"], timeout=400)
    assert finished["state"] == "succeeded", finished["reason"]
    keys = collections.Counter(key for _, key, _ in records)
    top = sorted(keys.items(), key=lambda item: (-item[1], item[0]))[:2]
    tables = {table["name"]: table["rows"] for table in finished["result"]["tables"]}
    assert tables["top_keys"] == [[k.decode(), n] for k, n in top]
    assert finished["result"]["metrics"]["records_read"] == 500
    # Progress came back from the server through the client's progress handler.
    assert finished["progress"]["tasks_total"] > 0
    assert finished["progress_fraction"] == 1.0
    # The server got the code as a session artifact, and the password never reached its log.
    log = connect_server.log()
    assert "/pyfiles/streamhub-spark-" in log
    assert setup.password not in log
    # Every request the job's client sent, whole, as the server received it: its reads of the topic name the
    # session file; the password went only in the upload of that file, never in a plan.
    assert_no_password_in_plans(connect_server, setup.password, topic)
    # Nor in what the server records of each operation (its event log).
    assert setup.password not in connect_server.event_log()


def assert_no_password_in_plans(server: ConnectServer, password: str, topic: str) -> None:
    """Of every request the server received, only the upload of the connection file holds the password; the
    reads of `topic` name that file."""
    requests = server.requests()
    holding = {
        (method, "files/streamhub-connection-" in body) for method, body in requests if password in body
    }
    assert holding == {("AddArtifacts", True)}, holding
    reads = [body for _, body in requests if f'value: "{topic}"' in body and 'format: "topics"' in body]
    assert reads
    assert all('key: "connectionFile"' in body for body in reads)


@pytest.fixture
def connect_client_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """Undoes what a Connect session leaves in this process, for the classic session of the other tests: PySpark
    marks the process as a Connect client for good (this variable; pyspark.sql.utils.is_remote), and
    addArtifacts(pyfile=True) puts the code zip on sys.path."""
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
    monkeypatch.setattr(sys, "path", list(sys.path))


@pytest.mark.usefixtures("connect_client_mode")
def test_failing_rpcs_log_no_credentials_and_a_missing_file_is_an_error(
    setup: Setup, connect_server: ConnectServer, tmp_path: Path
) -> None:
    """A client session of this process on the server, reading with the job's SASL credentials, whose calls
    fail as a user's would: an analysis error (the AnalyzePlan RPC fails, which the server logs as an error with
    its exception), a read of a topic the account may not read, a file the session lacks."""
    from pyspark.sql import SparkSession

    topic = setup.topic("direct", 1, [(0, b"k%d" % i, b"v") for i in range(30)])
    kafka_config = {
        "bootstrap.servers": setup.cluster.bootstrap_servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": setup.account.name,
        "sasl.password": setup.password,
    }
    spark = SparkSession.builder.remote(connect_server.url).create()
    try:
        spark.addArtifacts(str(build_code_artifact(tmp_path)), pyfile=True)
        register_topic_source(spark)
        name = add_connection_file(spark, kafka_config)
        assert name.startswith("streamhub-connection-")
        assert setup.password not in name

        def read(connection_file: str, subscribe: str) -> object:
            options = {"connectionFile": connection_file, "subscribe": subscribe}
            return spark.read.format("topics").options(**options).load()

        assert read(name, topic).count() == 30  # the server's driver and executors found the credentials
        with pytest.raises(AnalysisException, match="no_such_column"):
            _ = read(name, topic).select("no_such_column").columns  # an AnalyzePlan RPC
        # The account may not describe it, so to it the topic does not exist.
        with pytest.raises(PySparkException, match=r"unknown topic.*outside-the-accounts-prefix"):
            read(name, "outside-the-accounts-prefix").count()
        # No silent read without credentials: the source names the missing file.
        with pytest.raises(PySparkException, match="not among this session's files"):
            read("streamhub-connection-missing.json", topic).count()
        # The server keeps the file in the session's artifact directory and, fetched from there, in the session's
        # own SparkFiles directory (driver and executors).
        held = connect_server.files_holding(setup.password)
        assert sorted(path.name for path in held) == [name, name], held
    finally:
        spark.stop()
    # Released with the session: the artifact directory goes at once. The SparkFiles copy stays until Spark's
    # executors evict the session (30 idle minutes) or the server stops (README).
    wait_until(
        lambda: (
            not [path for path in connect_server.files_holding(setup.password) if "artifacts-" in str(path)]
        ),
        60,
        "the server to delete the released session's artifacts",
        interval=1,
    )
    log = connect_server.log()
    assert "Spark Connect RPC error during: analyze" in log
    assert setup.password not in log
    assert_no_password_in_plans(connect_server, setup.password, topic)
    events = connect_server.event_log()
    assert name in events
    assert "outside-the-accounts-prefix" in events
    assert setup.password not in events
