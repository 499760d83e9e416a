"""A job whose SQL transform Spark refuses is refused at creation (400) with Spark's own message and position:
parsed and analysed by a real Spark (the control plane's analysis worker, shared by the test session) against the
columns the job's topics reader produces; and a job run over a missing topic is refused at submit. A real broker
answers the topic checks."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from controlplane.clusters.models import Cluster
from controlplane.jobs.models import JobRun, StreamingJob

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def live_cluster(world, broker) -> Cluster:
    return Cluster.objects.create(
        organization=world.organization, name="live", provider="external", status="running",
        bootstrap_servers=broker.bootstrap,
    )  # fmt: skip


@pytest.fixture
def source_topic(broker) -> str:
    name = f"payments.orders-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics([NewTopic(name, 1, 1)]).values():
        future.result(timeout=30)
    return name


def _stream(world, cluster: Cluster, parameters: dict):
    body = {
        "team": world.team_a.id, "cluster": cluster.id, "name": f"s-{uuid.uuid4().hex[:6]}",
        "job": "stream_topic_sql", "parameters": parameters, "compute_target": "local[1]",
    }  # fmt: skip
    return world.team_a_developer.client().post("/api/v1/streaming-jobs/", body, format="json")


def _run(world, cluster: Cluster, job: str, parameters: dict):
    body = {"team": world.team_a.id, "cluster": cluster.id, "job": job, "parameters": parameters}
    return world.team_a_developer.client().post("/api/v1/job-runs/", body, format="json")


# (sql, Spark's exception, its error class, what the message names)
REFUSED = [
    ("SELEC key, value FROM source", "ParseException", "PARSE_SYNTAX_ERROR", "(line 1, pos 0)"),
    ("SELECT key, amount AS value FROM source", "AnalysisException", "UNRESOLVED_COLUMN.WITH_SUGGESTION",
     "`amount` cannot be resolved"),
    ("SELECT key, upper(value, 2) AS value FROM source", "AnalysisException", "WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
     "line 1 pos 12"),
    ("SELECT key, no_such_function(value) AS value FROM source", "AnalysisException", "UNRESOLVED_ROUTINE",
     "`no_such_function`"),
    # Only a query is parsed: a command never reaches Spark's analyser, let alone runs on the control plane.
    ("WITH s AS (SELECT * FROM source) INSERT OVERWRITE DIRECTORY '/tmp/x' SELECT * FROM s", "ParseException",
     "PARSE_SYNTAX_ERROR", "'INSERT'"),
]  # fmt: skip


def test_a_stream_whose_sql_spark_refuses_is_refused_at_create_with_sparks_message(
    world, live_cluster, source_topic, sql_analysis
) -> None:
    timings = []
    for sql, exception, error_class, named in REFUSED:
        started = time.monotonic()
        answer = _stream(
            world,
            live_cluster,
            {"source": {"topic": source_topic}, "target_topic": "payments.out", "sql": sql},
        )
        timings.append(time.monotonic() - started)
        assert answer.status_code == 400, (sql, answer.json())
        error = answer.json()["error"]
        assert error["code"] == "invalid_sql", error
        assert error["details"]["exception"] == exception, error
        assert error["details"]["error_class"] == error_class, error
        assert named in error["message"], error
        assert exception in error["message"], error
    refused_column = _stream(
        world,
        live_cluster,
        {"source": {"topic": source_topic}, "target_topic": "payments.out", "sql": REFUSED[1][0]},
    ).json()["error"]
    assert refused_column["details"]["positions"] == [{"fragment": "amount", "start": 12, "stop": 17}]

    no_value = _stream(
        world,
        live_cluster,
        {"source": {"topic": source_topic}, "target_topic": "payments.out", "sql": "SELECT key FROM source"},
    )
    assert no_value.status_code == 400, no_value.json()
    assert "'value'" in no_value.json()["error"]["message"], no_value.json()
    # A watermark on a column the source does not have is Spark's refusal too (streaming only).
    watermark = _stream(world, live_cluster, {
        "source": {"topic": source_topic}, "target_topic": "payments.out",
        "sql": "SELECT CAST(window(timestamp, '10 seconds').start AS STRING) AS key, CAST(count(*) AS STRING) AS value "
               "FROM source GROUP BY window(timestamp, '10 seconds')",
        "watermark_delay": "5 seconds", "event_time_column": "event_time",
    })  # fmt: skip
    assert watermark.status_code == 400, watermark.json()
    assert "`event_time`" in watermark.json()["error"]["message"], watermark.json()
    assert not StreamingJob.objects.exists()

    accepted = _stream(world, live_cluster, {
        "source": {"topic": source_topic}, "target_topic": "payments.out",
        "sql": "SELECT key, upper(CAST(value AS STRING)) AS value FROM source WHERE partition = 0",
    })  # fmt: skip
    assert accepted.status_code == 201, accepted.json()
    print(f"\nSQL refusals answered in {', '.join(f'{t * 1000:.0f}' for t in timings)} ms")


def test_a_batch_copy_whose_sql_spark_refuses_and_a_run_over_a_missing_topic_are_refused(
    world, live_cluster, source_topic, sql_analysis
) -> None:
    refused = _run(world, live_cluster, "topic_copy", {
        "source": {"topic": source_topic}, "target_topic": "payments.out", "sql": "SELECT key, value FROM source GROUP BY key",
    })  # fmt: skip
    missing = _run(world, live_cluster, "key_skew", {"source": {"topic": f"{source_topic}-gone"}, "top": 3})

    assert refused.status_code == 400, refused.json()
    assert refused.json()["error"]["details"]["exception"] == "AnalysisException", refused.json()
    assert refused.json()["error"]["details"]["error_class"] == "MISSING_AGGREGATION", refused.json()
    assert '"value"' in refused.json()["error"]["message"], refused.json()
    assert missing.status_code == 400, missing.json()
    assert missing.json()["error"]["code"] == "topic_not_found"
    assert f"{source_topic}-gone" in missing.json()["error"]["message"]
    assert not JobRun.objects.exists()
    accepted = _run(world, live_cluster, "key_skew", {"source": {"topic": source_topic}, "top": 3})
    assert accepted.status_code == 201, accepted.json()
