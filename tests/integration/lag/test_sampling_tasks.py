"""The beat's entry reaches a real Celery worker that samples the cluster, and runs of one cluster never
overlap: while the Redis lock is held a run is skipped."""

from __future__ import annotations

import uuid

import pytest
import redis

from console.schedules import BEAT_SCHEDULE
from controlplane.clusters import services as clusters
from controlplane.clusters.connections import connection_for
from controlplane.kafka.groups import alter_group_offsets
from controlplane.kafka.topics import create_topic
from controlplane.lag.models import GroupLag
from controlplane.lag.tasks import sample_cluster_task
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from tests.fixtures.broker import BrokerProcess
from tests.fixtures.servers import wait_until
from tests.integration.clusters.conftest import _database_url_of_this_test

pytestmark = pytest.mark.integration


def _cluster_with_a_group(broker: BrokerProcess) -> tuple[int, str]:
    uid = uuid.uuid4().hex[:8]
    organization = tenancy.create_organization(actor=Actor.system(), name=f"Beat {uid}")
    cluster = clusters.register_external_cluster(
        actor=Actor.system(),
        organization=organization,
        name=f"beat-{uid}",
        bootstrap_servers=broker.bootstrap,
    )
    topic, group = f"events-{uid}", f"reader-{uid}"
    create_topic(connection_for(cluster), name=topic, partitions=1, replication_factor=1, configs={})
    alter_group_offsets(connection_for(cluster), group_id=group, offsets={(topic, 0): 0})
    return cluster.pk, group


def test_a_run_is_skipped_while_the_clusters_lock_is_held(db, settings, lag_redis: str, fresh_broker) -> None:
    cluster_id, group = _cluster_with_a_group(fresh_broker)
    lock = redis.Redis.from_url(lag_redis).lock(f"lag:sampling:{cluster_id}", timeout=30)
    assert lock.acquire(blocking=False)

    assert sample_cluster_task.apply(args=[cluster_id]).get() is False
    assert not GroupLag.objects.filter(cluster_id=cluster_id).exists()

    lock.release()
    assert sample_cluster_task.apply(args=[cluster_id]).get() is True
    assert GroupLag.objects.get(cluster_id=cluster_id, group__name=group).lag_messages == 0


def test_the_beat_entry_samples_every_cluster_in_a_real_worker(
    transactional_db, settings, lag_redis: str, fresh_broker, monkeypatch, celery_worker_process_for_db
) -> None:
    entry = BEAT_SCHEDULE["lag.sample_all"]
    assert entry["schedule"].total_seconds() == settings.LAG_SAMPLING_INTERVAL_SECONDS
    cluster_id, group = _cluster_with_a_group(fresh_broker)
    from console.celery import app

    # As beat does: the task by its scheduled name, onto the queue (results are ignored: it returns nothing).
    app.tasks[entry["task"]].apply_async(**entry["options"])

    wait_until(
        lambda: GroupLag.objects.filter(cluster_id=cluster_id, group__name=group).exists(),
        120,  # a cold worker on a busy machine
        "the worker to sample the cluster",
        interval=0.2,
    )


@pytest.fixture
def celery_worker_process_for_db(transactional_db, monkeypatch, settings, request):
    """A real worker on this test's database (PostgreSQL only: SQLite's test database is in memory)."""
    monkeypatch.setenv("DATABASE_URL", _database_url_of_this_test())
    monkeypatch.setenv("SECRET_KEY", settings.SECRET_KEY)
    return request.getfixturevalue("celery_worker_process")


def test_every_run_is_handed_to_alert_evaluation(
    db, lag_redis: str, fresh_broker, monkeypatch, caplog
) -> None:
    from controlplane.alerts import evaluation

    cluster_id, group = _cluster_with_a_group(fresh_broker)
    handed: list = []
    real = evaluation.evaluate_alerts

    def recording(run) -> None:  # passes through to the real evaluation, keeping what it was given
        handed.append(run)
        real(run)

    monkeypatch.setattr(evaluation, "evaluate_alerts", recording)
    assert sample_cluster_task.apply(args=[cluster_id]).get() is True

    (run,) = handed
    assert run.cluster_id == cluster_id
    (observed,) = [g for g in run.groups if g.group == group]
    assert observed.partitions[0].committed_offset == 0
    assert "alert evaluation failed" not in caplog.text


def test_a_cluster_that_does_not_answer_fails_the_run_quietly(
    db, lag_redis: str, broker_factory, caplog
) -> None:
    broker = broker_factory()
    cluster_id, _group = _cluster_with_a_group(broker)
    broker.kill9()

    assert sample_cluster_task.apply(args=[cluster_id]).get() is False
    assert f"lag sampling of cluster {cluster_id} failed" in caplog.text
    # The lock was released: the next run is not skipped for it.
    assert redis.Redis.from_url(lag_redis).get(f"lag:sampling:{cluster_id}") is None
