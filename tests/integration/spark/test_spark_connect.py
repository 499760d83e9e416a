"""A catalog job on a Spark Connect server started with pyspark's sbin/start-connect-server.sh, launched
through the API and the Celery worker. The server's Python has the third-party packages but not the
repository: the client adds the code artifact to its session (addArtifacts) and registers the source there."""

from __future__ import annotations

import collections

import pytest

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
