"""The streaming jobs API without Spark: what is refused at create, who may act, and the state changes of
start/stop/restart when no supervisor runs (the Celery side is tests/integration/spark/test_streaming_supervision)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.jobs import streams
from controlplane.jobs.models import StreamingJob

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def cluster(world) -> Cluster:
    return Cluster.objects.create(
        organization=world.organization, name="plain", provider="external", status="running",
        bootstrap_servers="127.0.0.1:9",
    )  # fmt: skip


def body(world, cluster, **extra) -> dict:
    return {
        "team": world.team_a.id,
        "cluster": cluster.id,
        "name": "orders-filter",
        "job": "stream_topic_sql",
        "parameters": {"source": {"topic": "payments.orders"}, "target_topic": "payments.large"},
        "compute_target": "local[1]",
        **extra,
    }


def test_a_stream_is_refused_over_other_teams_topics_bad_parameters_or_spark_connect(world, cluster) -> None:
    client = world.team_a_developer.client()
    parameters = {"source": {"topic": "payments.orders"}, "target_topic": "search.stolen"}
    refused = client.post(
        "/api/v1/streaming-jobs/", body(world, cluster, parameters=parameters), format="json"
    )
    assert refused.status_code == 403, refused.json()
    assert refused.json()["error"]["code"] == "topic_not_allowed"

    bad = {"source": {"topic": "payments.orders", "max_offsets_per_trigger": 0}, "target_topic": "payments.x"}
    invalid = client.post("/api/v1/streaming-jobs/", body(world, cluster, parameters=bad), format="json")
    assert invalid.status_code == 400, invalid.json()
    assert "max_offsets_per_trigger" in invalid.json()["error"]["message"]
    unknown = client.post(
        "/api/v1/streaming-jobs/",
        body(world, cluster, parameters={"source": {"topic": "payments.a"}}),
        format="json",
    )
    assert unknown.status_code == 400  # target_topic is required

    connect = client.post(
        "/api/v1/streaming-jobs/", body(world, cluster, compute_target="sc://spark:15002"), format="json"
    )
    assert connect.status_code == 400
    assert connect.json()["error"]["code"] == "compute_target"
    viewer = world.team_a_viewer.client().post("/api/v1/streaming-jobs/", body(world, cluster), format="json")
    assert viewer.status_code == 403
    assert not StreamingJob.objects.exists()


def test_create_stop_start_and_restart_change_the_desired_state(world, cluster) -> None:
    client = world.team_a_developer.client()
    created = client.post("/api/v1/streaming-jobs/", body(world, cluster), format="json")
    assert created.status_code == 201, created.json()
    stream = created.json()
    assert (stream["desired_state"], stream["state"]) == ("running", "starting")
    assert stream["progress"]["batch_id"] is None
    assert stream["lag"] == {
        "sampled_at": None,
        "group": None,
        "batch_id": None,
        "total_lag": 0,
        "partitions": [],
    }
    again = client.post("/api/v1/streaming-jobs/", body(world, cluster), format="json")
    assert again.status_code == 409

    # No supervisor has claimed it (no worker here): stop takes effect at once.
    stopped = client.post(f"/api/v1/streaming-jobs/{stream['id']}/stop/")
    assert stopped.status_code == 202
    assert (stopped.json()["desired_state"], stopped.json()["state"]) == ("stopped", "stopped")
    assert client.post(f"/api/v1/streaming-jobs/{stream['id']}/stop/").status_code == 409

    restarted = client.post(f"/api/v1/streaming-jobs/{stream['id']}/restart/", {}, format="json")
    assert restarted.status_code == 202
    assert (restarted.json()["desired_state"], restarted.json()["state"]) == ("running", "starting")
    assert client.post(f"/api/v1/streaming-jobs/{stream['id']}/start/", {}, format="json").status_code == 409

    # A live supervisor is asked to stop, and to restart, through the row it watches.
    StreamingJob.objects.filter(pk=stream["id"]).update(
        supervisor_token="x", supervisor_heartbeat_at=timezone.now()
    )
    requested = client.post(f"/api/v1/streaming-jobs/{stream['id']}/restart/", {}, format="json")
    assert requested.status_code == 202
    assert StreamingJob.objects.get(pk=stream["id"]).restart_requested
    stopping = client.post(f"/api/v1/streaming-jobs/{stream['id']}/stop/")
    assert stopping.json()["state"] == "stopping"

    assert world.team_b_admin.client().get(f"/api/v1/streaming-jobs/{stream['id']}/").status_code == 404
    assert (
        world.team_a_viewer.client().post(f"/api/v1/streaming-jobs/{stream['id']}/stop/").status_code == 403
    )
    lag = world.team_a_viewer.client().get(f"/api/v1/streaming-jobs/{stream['id']}/lag/")
    assert lag.status_code == 200
    assert lag.json()["partitions"] == []


def test_a_stream_whose_supervisor_went_silent_is_rescued(world, cluster) -> None:
    client = world.team_a_developer.client()
    stream_id = client.post("/api/v1/streaming-jobs/", body(world, cluster), format="json").json()["id"]
    fresh = timezone.now()
    StreamingJob.objects.filter(pk=stream_id).update(supervisor_token="x", supervisor_heartbeat_at=fresh)
    assert streams.streams_to_rescue() == []
    stale = fresh - timedelta(seconds=streams.SUPERVISOR_STALE_SECONDS + 1)
    StreamingJob.objects.filter(pk=stream_id).update(supervisor_heartbeat_at=stale)
    assert streams.streams_to_rescue() == [stream_id]
    # A claim by a new supervisor succeeds once the old one is stale, and a second claim does not.
    first, second = streams.Supervisor(stream_id), streams.Supervisor(stream_id)
    assert first.claim() is not None
    assert second.claim() is None


def test_the_restart_backoff_doubles_up_to_its_limit(settings) -> None:
    settings.STREAMING_RESTART_BACKOFF_SECONDS = 2
    settings.STREAMING_RESTART_BACKOFF_MAX_SECONDS = 30
    assert [streams.backoff_seconds(n) for n in range(1, 7)] == [2, 4, 8, 16, 30, 30]


def test_the_streaming_catalog_lists_its_jobs(world) -> None:
    catalog = world.team_a_viewer.client().get("/api/v1/streaming-jobs/catalog/").json()
    assert [entry["job"] for entry in catalog] == ["stream_topic_sql", "stream_to_parquet"]
    assert "watermark_delay" in catalog[0]["parameters"]
    assert catalog[0]["required"] == ["source", "target_topic"]  # the form marks them, the rest have defaults
