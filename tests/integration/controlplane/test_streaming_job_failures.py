"""A streaming job whose source topic is missing is refused at create (the cluster is asked, a real broker);
a driver that fails the same way on every start (Spark refusing the SQL, the job's own checks) stops with
Spark's reason instead of being restarted with backoff; a transient failure is still retried."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pyarrow as pa
import pytest
from confluent_kafka.admin import (
    AdminClient,
    NewTopic,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from controlplane.clusters.models import Cluster
from controlplane.jobs import launcher, streams
from controlplane.jobs.choices import DesiredState, StreamState
from controlplane.jobs.models import StreamingJob
from controlplane.spark import planning
from controlplane.spark.options import TopicSelection
from controlplane.spark.writing import ProduceFailed, produce_batches

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def live_cluster(world, broker) -> Cluster:
    return Cluster.objects.create(
        organization=world.organization,
        name="live",
        provider="external",
        status="running",
        bootstrap_servers=broker.bootstrap,
    )


def _create(world, cluster: Cluster, topic: str):
    body = {
        "team": world.team_a.id,
        "cluster": cluster.id,
        "name": f"filter-{uuid.uuid4().hex[:6]}",
        "job": "stream_topic_sql",
        "parameters": {"source": {"topic": topic}, "target_topic": "payments.out"},
        "compute_target": "local[1]",
    }
    return world.team_a_developer.client().post("/api/v1/streaming-jobs/", body, format="json")


def test_a_stream_over_a_missing_topic_is_refused_at_create(world, live_cluster, broker) -> None:
    existing = f"payments.orders-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics([NewTopic(existing, 1, 1)]).values():
        future.result(timeout=30)

    missing = _create(world, live_cluster, f"{existing}-missing")
    created = _create(world, live_cluster, existing)

    assert missing.status_code == 400, missing.json()
    assert missing.json()["error"]["code"] == "topic_not_found"
    assert f"{existing}-missing" in missing.json()["error"]["message"]
    assert created.status_code == 201, created.json()
    assert StreamingJob.objects.count() == 1


@pytest.fixture
def stream(world) -> StreamingJob:
    cluster = Cluster.objects.create(
        organization=world.organization, name="plain", provider="external", status="running",
        bootstrap_servers="127.0.0.1:9",
    )  # fmt: skip
    return StreamingJob.objects.create(
        team=world.team_a,
        cluster=cluster,
        name="orders-filter",
        job="stream_topic_sql",
        parameters={"source": {"topic": "payments.orders"}, "target_topic": "payments.out"},
        compute_target="local[1]",
        desired_state=DesiredState.RUNNING,
        state=StreamState.STARTING,
    )


# What a driver's log ends with when Spark refuses the transform (as pyspark prints it).
SPARK_REFUSALS = {
    "parse": "pyspark.errors.exceptions.captured.ParseException: \n[PARSE_SYNTAX_ERROR] Syntax error at or "
    "near 'SELEC'. SQLSTATE: 42601 (line 1, pos 0)\n",
    "analysis": "pyspark.errors.exceptions.captured.AnalysisException: [UNRESOLVED_COLUMN.WITH_SUGGESTION] "
    "A column, variable, or function parameter with name `nope` cannot be resolved. SQLSTATE: 42703\n",
}


@pytest.mark.parametrize("kind", sorted(SPARK_REFUSALS))
def test_a_driver_spark_refuses_stops_with_sparks_reason_and_is_not_restarted(
    stream, tmp_path, kind: str
) -> None:
    log = tmp_path / "driver.log"
    log.write_text("INFO SparkContext: Running Spark version 4.1\n" + SPARK_REFUSALS[kind])
    reason = launcher.failure_reason(log, 1)

    outcome = streams.Supervisor(stream.pk)._failed(stream, reason, ran_a_batch=False)

    stream.refresh_from_db()
    assert outcome == "stopped"
    assert stream.state == StreamState.FAILED
    assert stream.next_restart_at is None
    assert stream.restart_count == 0
    assert "not retried" in stream.reason
    assert ("SELEC" if kind == "parse" else "`nope` cannot be resolved") in stream.reason


def test_a_transient_failure_is_still_restarted_with_backoff(stream, tmp_path) -> None:
    log = tmp_path / "driver.log"
    log.write_text(
        "pyspark.errors.exceptions.captured.AnalysisException: [PYTHON_DATA_SOURCE_ERROR] failed\n"
        "controlplane.spark.planning.TopicReadError: cannot read the cluster's metadata\n"
    )

    outcome = streams.Supervisor(stream.pk)._failed(
        stream, launcher.failure_reason(log, 1), ran_a_batch=False
    )

    stream.refresh_from_db()
    assert outcome == "restart"
    assert stream.state == StreamState.RESTARTING
    assert stream.next_restart_at is not None


def _planning_failure(kafka_config: dict[str, str], topic: str) -> str:
    """The TopicReadError a driver's planning meets on this cluster, as the driver's log shows it."""
    consumer = planning.planning_consumer(kafka_config)
    try:
        planning.select_partitions(consumer, TopicSelection(topics=(topic,)))
    except planning.TopicReadError as error:
        return (
            "pyspark.errors.exceptions.captured.AnalysisException: [PYTHON_DATA_SOURCE_ERROR] Failed to plan\n"
            f"controlplane.spark.planning.TopicReadError: {error}\n"
        )
    finally:
        consumer.close()
    raise AssertionError("planning did not fail")


def _produce_failure(secure_broker) -> str:
    """What the topic sink's producer meets writing as a user without a WRITE grant, as the driver's log shows it."""
    user, topic = f"nogrant-{uuid.uuid4().hex[:6]}", f"payments.out-{uuid.uuid4().hex[:6]}"
    admin = AdminClient(secure_broker.client_config())
    credential = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096)
    for future in admin.alter_user_scram_credentials(
        [UserScramCredentialUpsertion(user, credential, b"user-secret")]
    ).values():
        future.result(timeout=30)
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(timeout=30)
    batch = pa.RecordBatch.from_pydict({"value": [b"v"]})
    config = {**secure_broker.client_config(user=user, password="user-secret"), "message.timeout.ms": 10000}
    try:
        produce_batches(iter([batch]), config, default_topic=topic)
    except ProduceFailed as error:
        return f"controlplane.spark.writing.ProduceFailed: {error}\n"
    raise AssertionError("producing without a grant did not fail")


@pytest.fixture(scope="module")
def cluster_answers(broker, secure_broker) -> Iterator[dict[str, str]]:
    """What real brokers answer a driver's planning: a missing topic, a wrong password, nobody listening."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(planning, "METADATA_TIMEOUT_S", 2.0)  # the unreachable case waits this long
        yield {
            "missing topic": _planning_failure({"bootstrap.servers": broker.bootstrap}, "payments.gone"),
            "authentication refused": _planning_failure(
                secure_broker.client_config(password="wrong"), "payments.orders"
            ),
            "authorization refused": _produce_failure(secure_broker),
            "broker unreachable": _planning_failure({"bootstrap.servers": "127.0.0.1:9"}, "payments.orders"),
        }


PERMANENT = ("missing topic", "authentication refused", "authorization refused")


@pytest.mark.parametrize("kind", [*PERMANENT, "broker unreachable"])
def test_a_driver_failing_on_the_clusters_answer_stops_only_when_a_restart_would_fail_again(
    stream, cluster_answers, tmp_path, kind: str
) -> None:
    log = tmp_path / "driver.log"
    log.write_text("WARN SparkContext: something\n" + cluster_answers[kind])
    reason = launcher.failure_reason(log, 1)

    # A stream that already ran batches too: a deleted topic or a revoked grant does not come back by itself.
    outcome = streams.Supervisor(stream.pk)._failed(stream, reason, ran_a_batch=True)

    stream.refresh_from_db()
    if kind in PERMANENT:
        assert outcome == "stopped", reason
        assert stream.state == StreamState.FAILED
        assert stream.restart_count == 0
        assert reason in stream.reason
    else:
        assert outcome == "restart", reason
        assert stream.state == StreamState.RESTARTING
        assert stream.next_restart_at is not None
