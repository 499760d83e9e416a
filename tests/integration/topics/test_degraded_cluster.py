"""Failing well: against a broker that is paused (SIGSTOP: it keeps its sockets and answers nothing) or
killed, writes answer within seconds with a sentence and what to do, and change nothing."""

import os
import signal
import time

import pytest
from django.core.cache import cache

from controlplane.clusters.models import Operation
from tests.fixtures.engines import ManagedCluster
from tests.integration.topics.world import build_world, create_topic

pytestmark = pytest.mark.integration

# The gateway's timeout is 5 s per call (3 s for the read-back before a change); a write makes at most
# two calls before it answers. Well under the 30 s a person would wait on a spinner.
ANSWER_WITHIN_SECONDS = 12


@pytest.fixture
def own_world(db, settings, secure_broker_factory):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    return build_world(ManagedCluster.of_streamhub(secure_broker_factory()))


def _timed(call):
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def test_a_config_change_to_a_paused_broker_is_refused_in_seconds_in_words(own_world) -> None:
    world = own_world
    topic = create_topic(
        world, world.developer_a, world.topic_prefix_a + "paused", configs={"retention.ms": "3600000"}
    )
    os.kill(world.broker.node.process.pid, signal.SIGSTOP)
    try:
        response, elapsed = _timed(
            lambda: world.developer_a.patch(
                f"/api/v1/topics/{topic['id']}/configs/",
                {"configs": {"retention.ms": "86400000"}},
                format="json",
            )
        )
        page, page_elapsed = _timed(lambda: world.viewer_a.get(f"/api/v1/topics/{topic['id']}/"))
    finally:
        os.kill(world.broker.node.process.pid, signal.SIGCONT)

    assert elapsed < ANSWER_WITHIN_SECONDS, elapsed
    assert page_elapsed < ANSWER_WITHIN_SECONDS, page_elapsed
    error = response.json()["error"]
    assert response.status_code == 400
    assert error["code"] == "cluster_unreachable"
    assert error["message"].startswith("The cluster did not answer in time")
    assert "Nothing was sent, so nothing changed." in error["message"]
    assert "_TIMED_OUT" not in error["message"]
    assert "Check the cluster's health" in error["details"]["hint"]
    assert page.json()["error"]["code"] == "cluster_unreachable"
    operation = Operation.objects.get(resource_name=topic["name"], kind="topic_configs")
    assert operation.state == "failed"
    # Back up, the value is unchanged and the same change goes through.
    live = world.viewer_a.get(f"/api/v1/topics/{topic['id']}/").json()["live"]["configs"]
    assert live["retention.ms"]["value"] == "3600000"
    retried = world.developer_a.patch(
        f"/api/v1/topics/{topic['id']}/configs/", {"configs": {"retention.ms": "86400000"}}, format="json"
    )
    assert retried.status_code == 200, retried.json()


def test_a_killed_broker_refuses_a_purge_at_once_in_words(own_world) -> None:
    world = own_world
    topic = create_topic(world, world.developer_a, world.topic_prefix_a + "killed")
    world.broker.node.kill9()

    response, elapsed = _timed(
        lambda: world.developer_a.post(f"/api/v1/topics/{topic['id']}/purge/", {}, format="json")
    )

    assert elapsed < ANSWER_WITHIN_SECONDS, elapsed
    error = response.json()["error"]
    assert error["code"] == "cluster_unreachable"
    assert "may be down, paused or overloaded" in error["message"]
    assert error["details"]["hint"]


def test_the_clusters_own_reason_is_in_the_message(own_world) -> None:
    world = own_world
    topic = create_topic(world, world.developer_a, world.topic_prefix_a + "bad")
    response = world.developer_a.patch(
        f"/api/v1/topics/{topic['id']}/configs/", {"configs": {"cleanup.policy": "archive"}}, format="json"
    )
    error = response.json()["error"]
    assert (response.status_code, error["code"]) == (400, "invalid_config")
    assert error["message"].startswith("The cluster rejected a config value. The cluster said: ")
    assert "archive" in error["message"]
    assert error["details"]["hint"] == "Correct the value the cluster named and save again."
